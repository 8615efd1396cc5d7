# SPDX-License-Identifier: Apache-2.0
"""tilegym's moe as a full launch plan (issue 17): fused_experts_impl ends with torch.add of the
two top-k rows (top_k 2) or torch.sum over dim 1 (top_k > 2) of its [tokens, top_k, hidden]
partial outputs into out; the stand-in torch records both as the plan's sum step
(docs/bundle-manifest.md, "Fill, copy and sum steps"). configs/tilegym.json's 4 moe
configurations exported through the real command line with no GPU, validated, accepted by
`portbench inspect`, and paired by `portbench run --dry-run` with cuTile Rust's moe; sums the
plan cannot hold keep an exact reason."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, manifests
from portbench_export.cli import Unsupported
from portbench_export.schema import validate_bundle
from portbench_export.tilegym import fake_torch

SUITE = REPO / "configs" / "tilegym.json"
MOE = [c for c in json.loads(SUITE.read_text())["configs"] if c["op"] == "moe"]
PORTBENCH = next((p for p in [Path(os.environ.get("PORTBENCH_BIN", "/nonexistent")),
                              *(REPO / "build" / preset / "harness" / "cli" / "portbench" for preset in ("ci-cpu", "dev"))]
                  if p.is_file()), REPO / "build" / "ci-cpu" / "harness" / "cli" / "portbench")
RUST_EXPORTER = REPO / "kernels" / "cutile_rust" / "target" / "release" / "portbench-cutile-rust-export"


@pytest.fixture(scope="module")
def moe_suite(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("moe-suite") / "moe.json"
    path.write_text(json.dumps({"suite": "tilegym-moe", "configs": MOE}))
    return path


@pytest.fixture(scope="module")
def tilegym_moe(tmp_path_factory, export_env, moe_suite):
    out = tmp_path_factory.mktemp("tilegym-moe") / "tilegym"
    r = subprocess.run([sys.executable, "-m", "portbench_export.tilegym", "--suite", str(moe_suite), "--out", str(out)],
                       capture_output=True, text=True, env=export_env, cwd=REPO, timeout=1500)
    assert r.returncode == 0, r.stderr
    return r, out / "moe"


def _kinds(launches: list[dict]) -> list[str]:
    return [l.get("step", "kernel") for l in launches]


def test_the_four_moe_configurations_export_with_their_top_k_sum_as_the_last_step(tilegym_moe):
    r, bundle = tilegym_moe
    assert "summary: tilegym/moe: exported 4 of 4" in r.stdout, r.stdout
    assert "skip: tilegym: moe/" not in r.stdout
    m = manifests(bundle.parent)["moe"]
    assert "unsupported" not in m or m["unsupported"] == []
    assert [c["params"] for c in m["configs"]] == [c["params"] for c in MOE]
    for cfg in m["configs"]:
        p = cfg["params"]
        tokens, hidden, k = p["num_tokens"], p["hidden_size"], p["top_k"]
        for plan in [cfg, *cfg.get("variants", [])]:
            launches = plan["launches"]
            kinds = _kinds(launches)
            # moe_align_block's fill of the sorted ids, tilegym's kernels, then the one sum.
            assert kinds[0] == "fill" and kinds[-1] == "sum" and set(kinds[1:-1]) == {"kernel"}, kinds
            s = launches[-1]
            assert s["dst"] == {"tensor": "out", "offset": 0, "shape": [tokens, hidden], "strides": [hidden, 1],
                                "type": "f16"}
            src = s["src"]
            if k == 2:   # torch.add(ic3[:, 0], ic3[:, 1]): the two rows as a stacked axis
                assert (s["axis"], src["shape"], src["strides"]) == (0, [2, tokens, hidden], [hidden, k * hidden, 1])
            else:        # torch.sum(ic3, dim=1)
                assert (s["axis"], src["shape"], src["strides"]) == (1, [tokens, k, hidden], [k * hidden, hidden, 1])
            assert src["type"] == "f16" and src["offset"] == 0
            # The summed buffer is the scratch the second GEMM (the last kernel) writes.
            scratch = {b["name"]: b for b in plan["scratch"]}
            assert scratch[src["scratch"]]["bytes"] == 2 * tokens * k * hidden
            last_kernel = launches[-2]
            assert {"kind": "scratch", "name": src["scratch"]} in last_kernel["params"]


def test_moe_bundles_validate_and_portbench_inspect_accepts_them(tilegym_moe):
    _, bundle = tilegym_moe
    assert validate_bundle(bundle) == []
    if not PORTBENCH.is_file():
        pytest.skip(f"{PORTBENCH} not built (cmake --preset ci-cpu && cmake --build --preset ci-cpu)")
    r = subprocess.run([str(PORTBENCH), "inspect", str(bundle)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "check     OK:" in r.stdout, r.stdout
    steps = sum(len(c["launches"]) - len([l for l in c["launches"] if "step" not in l])
                for c in manifests(bundle.parent)["moe"]["configs"])
    assert f"(and {steps} harness steps: fill, copy, sum)" in r.stdout, r.stdout


def test_the_moe_pair_runs_dry_with_cutile_rusts_moe(tilegym_moe, moe_suite, tmp_path):
    """`portbench run --dry-run --ref <tilegym moe> --port <cutile_rust moe> --suite
    configs/tilegym.json --op moe` pairs all 4 configurations (the port exported from the same 4)."""
    _, bundle = tilegym_moe
    if not PORTBENCH.is_file():
        pytest.skip(f"{PORTBENCH} not built")
    if not RUST_EXPORTER.is_file():
        pytest.skip(f"{RUST_EXPORTER} not built (kernels/cutile_rust/setup.sh)")
    out = tmp_path / "cutile_rust"
    r = subprocess.run(["bash", str(REPO / "kernels" / "cutile_rust" / "export.sh"), str(moe_suite), str(out),
                        "--chosen-only"], capture_output=True, text=True, cwd=REPO, timeout=1500)
    assert r.returncode == 0, r.stderr
    assert "summary: cutile_rust/moe: exported 4 of 4" in r.stdout, r.stdout
    run = subprocess.run([str(PORTBENCH), "run", "--dry-run", "--ref", str(bundle), "--port", str(out / "moe"),
                          "--suite", str(SUITE), "--op", "moe", "--format", "json"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "not paired" not in run.stderr, run.stderr
    planned = [row["configuration"] for row in json.loads(run.stdout)["configurations"]]
    assert len(planned) == len(MOE) == 4 and all(c.startswith("moe/") for c in planned), planned


# ---- the stand-in's sums, one operation at a time ------------------------------------------

@pytest.fixture()
def allocator():
    fake_torch.ALLOCATOR[0] = fake_torch.Allocator()
    yield fake_torch.ALLOCATOR[0]
    fake_torch.ALLOCATOR[0] = fake_torch.Allocator()


F16 = fake_torch.DTYPES["float16"]


def test_torch_sum_over_one_dim_and_add_of_two_rows_record_sum_steps(allocator):
    x = fake_torch.empty(8, 3, 16, dtype=F16)
    out = fake_torch.empty(8, 16, dtype=F16)
    assert fake_torch.sum_(x, dim=1, out=out) is out
    s = allocator.steps[-1]
    assert isinstance(s, fake_torch.SumStep) and s.axis == 1 and s.src is x and s.dst.storage is out.storage
    kept = x.sum(-1, keepdim=True)            # a new allocation [8, 3, 1]; the step writes it as [8, 3]
    s = allocator.steps[-1]
    assert (tuple(kept.shape), s.axis, tuple(s.dst.shape), tuple(s.dst.stride())) == ((8, 3, 1), 2, (8, 3), (3, 1))
    fake_torch.add(x[:, 2], x[:, 0], out=out)   # operands in either order: the lower offset first
    s = allocator.steps[-1]
    assert (s.axis, tuple(s.src.shape), tuple(s.src.stride()), s.src.storage_offset()) == (0, (2, 8, 16), (32, 48, 1), 0)
    ints = fake_torch.empty(4, 5, dtype=fake_torch.DTYPES["int32"])
    total = fake_torch.sum_(ints, 0)
    assert total.dtype.name == "int64" and tuple(total.shape) == (5,)    # torch promotes integer sums
    fake_torch.sum_(fake_torch.empty(4, 0, dtype=F16), 1, out=fake_torch.empty(4, dtype=F16))
    assert isinstance(allocator.steps[-1], fake_torch.FillStep) and allocator.steps[-1].value == 0.0


@pytest.mark.parametrize("call, reason", [
    (lambda x, o: fake_torch.sum_(x), "torch.sum over every dimension: a plan's sum step sums over one axis of a view"),
    (lambda x, o: fake_torch.sum_(x, (0, 1)), "torch.sum over dims [0, 1]: a plan's sum step sums over one axis"),
    (lambda x, o: fake_torch.sum_(x, 1, out=x[:, 0]), "torch.sum() writes into the tensor it reads"),
    (lambda x, o: fake_torch.sum_(x, 1, out=fake_torch.empty(8, 15, dtype=F16)), "torch.sum() resizes out from [8, 15] to [8, 16]"),
    (lambda x, o: fake_torch.sum_(x, 1, out=fake_torch.empty(8, 16, dtype=fake_torch.DTYPES["int32"])),
     "torch.sum() of torch.float16 into torch.int32: a plan's sum step keeps floats floats"),
    (lambda x, o: fake_torch.add(x[:, 0], o), "torch.add() of two tensors that are not views of one buffer with equal strides"),
    (lambda x, o: fake_torch.add(x[:, 0], x[:, 1], alpha=2), "torch.add(alpha=2) scales an operand"),
    (lambda x, o: fake_torch.add(x[:, 0], 1.0), "torch.add() with a host value runs a torch kernel"),
    (lambda x, o: fake_torch.add(x[:, 0], x[:1, 1]), "torch.add() broadcasts [8, 16] and [1, 16]"),
    (lambda x, o: (lambda z: fake_torch.add(z, z.T))(fake_torch.empty(16, 16, dtype=F16)),
     "not views of one buffer with equal strides"),
    (lambda x, o: fake_torch.sum_(fake_torch.empty(4, 4, dtype=fake_torch.DTYPES["float8_e4m3fn"]), 0),
     "a plan's steps have no float8_e4m3fn element type"),
])
def test_sums_a_plan_cannot_hold_keep_an_exact_reason(allocator, call, reason):
    x = fake_torch.empty(8, 3, 16, dtype=F16)
    other = fake_torch.empty(8, 16, dtype=F16)
    with pytest.raises(Unsupported) as e:
        call(x, other)
    assert reason in str(e.value)


def test_the_schema_checks_a_sum_steps_axis_shape_and_types():
    base = {"step": "sum", "src": {"scratch": "w", "shape": [4, 3, 8], "strides": [24, 8, 1], "type": "f16"},
            "dst": {"tensor": "out", "shape": [4, 8], "strides": [8, 1], "type": "f16"}, "axis": 1}
    from portbench_export.schema import _V, _check_step
    scratch = {"w": 2 * 96}

    def errors(step):
        v = _V()
        _check_step(v, "configs[0].launches[7]", step, scratch)
        return v.errors
    assert errors(base) == []
    assert errors({**base, "axis": 3}) == ["configs[0].launches[7].axis: must be an axis of src (an integer in [0, 3))"]
    assert errors({**base, "axis": 0}) == [
        "configs[0].launches[7].dst: shape [4, 8] is not src shape [4, 3, 8] without axis 0 ([3, 8])"]
    bad_type = {**base, "dst": {**base["dst"], "type": "i32"}}
    assert errors(bad_type) == ["configs[0].launches[7].dst: a sum of f16 into i32: src and dst are both floating or "
                                "both integer"]
    assert errors({k: v for k, v in base.items() if k != "axis"}) == ["configs[0].launches[7]: missing field 'axis'"]
    rank1 = {**base, "src": {"scratch": "w", "shape": [5], "strides": [1], "type": "f16"},
             "dst": {**base["dst"], "shape": [1], "strides": [1]}, "axis": 0}
    assert errors(rank1) == []
