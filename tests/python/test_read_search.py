# SPDX-License-Identifier: Apache-2.0
"""scripts/read_search.py, the read kernels decode_floor.py --search times: every launch shape
covers every element, and the kernels compile for sm_90 into 16-byte loads once the length is
known to be a multiple of 16 (why decode_floor.py trims the tail), scalar 2-byte loads otherwise.
The timing itself needs the GPU (scripts/device_run.sh, PORTBENCH_PAIRS_FLOOR=search)."""
from __future__ import annotations

import json
import re
import sys

import pytest

from conftest import REPO

triton = pytest.importorskip("triton")
sys.path.insert(0, str(REPO / "scripts"))
import read_search  # noqa: E402

# The SM count of the target description (as the device's own count is on the GPU host).
H200_SMS = json.loads((REPO / "configs/targets/h200.json").read_text())["sm_count"]


@pytest.mark.parametrize("n", [1, 15, 16, 4096, 1_000_003, (1 << 25) + 48])
def test_every_shape_covers_every_element_once(n):
    shapes = read_search.shapes()
    assert len({str(s) for s in shapes}) == len(shapes) > 40
    for s in shapes:
        grid = s.grid(n, H200_SMS)
        if s.family == "chunk":
            per = s.block * s.per_program
            # The last program starts inside the tensor and together they reach its end.
            assert (grid - 1) * per < n <= grid * per, s
        else:
            # Program p reads blocks p, p + grid, ...: every block has a reader, no program idles.
            blocks = -(-n // s.block)
            assert 1 <= grid <= min(blocks, s.per_program * H200_SMS), s


def loads(fn, constexprs, n_divisible, n_type, tmp_path, monkeypatch):
    """The global-load instructions of fn compiled for sm_90 (no GPU needed); Triton passes a
    length below 2**31 as i32, a larger one as i64."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    sig = {"x_ptr": "*fp16", "partial_ptr": "*fp32", "n": n_type}
    sig.update({k: "constexpr" for k in constexprs})
    aligned = [0, 1, 2] if n_divisible else [0, 1]
    src = ASTSource(fn=fn, signature=sig,
                    constexprs={(fn.arg_names.index(k),): v for k, v in constexprs.items()},
                    attrs={(i,): [["tt.divisibility", 16]] for i in aligned})
    ptx = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ptx"]
    return re.findall(r"ld\.global\S*", ptx)


@pytest.mark.parametrize("fn, constexprs", [
    (read_search._read_chunk, {"BLOCK": 2048, "ITERS": 4}),
    (read_search._read_persistent, {"BLOCK": 4096}),
])
def test_kernels_load_16_bytes_at_a_time_when_the_length_divides_by_16(fn, constexprs, tmp_path, monkeypatch):
    for n_type in ("i32", "i64"):
        wide = loads(fn, constexprs, True, n_type, tmp_path, monkeypatch)
        assert wide and all(op.endswith(".v4.b32") for op in wide), (n_type, wide)
    narrow = loads(fn, constexprs, False, "i64", tmp_path, monkeypatch)
    assert narrow and all(op.endswith(".b16") for op in narrow), narrow
