# SPDX-License-Identifier: Apache-2.0
"""The tile ranges of the cuTile Rust attention kernels' two key loops (mla, gemma_attention),
checked by kernels/cutile_rust/tools/attn_loop_split_model.py against element masks; and that the
check catches a range one tile off."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("attn_model", ROOT / "kernels/cutile_rust/tools/attn_loop_split_model.py")
model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model)

SMALL = ([1, 65, 128, 257], [16, 64], [16, 64])


def test_kernel_ranges_cover_every_visible_tile_and_leave_no_mask_out():
    cases, errors = model.run(SMALL)
    assert cases > 1000
    assert errors == []


def test_an_unmasked_range_one_tile_too_long_is_caught():
    def fmha_off_by_one(s, bm, bn, causal, pid):
        u, m = model.fmha_loops(s, bm, bn, causal, pid)
        return (u + m[:1], m[1:]) if m else (u, m)

    def gemma_off_by_one(s, bm, bn, window, causal, pid):
        u, m = model.gemma_loops(s, bm, bn, window, causal, pid)
        return (u + m[-1:], m[:-1]) if m else (u, m)

    _, errors = model.run(SMALL, fmha=fmha_off_by_one)
    assert any("runs unmasked but holds masked pairs" in e and e.startswith("fmha") for e in errors)
    _, errors = model.run(SMALL, gemma=gemma_off_by_one)
    assert any("runs unmasked but holds masked pairs" in e and e.startswith("gemma") for e in errors)
