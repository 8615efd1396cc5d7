# SPDX-License-Identifier: Apache-2.0
"""Command-line behaviour of the exporters: skipping what a front end has no kernel for,
one-line errors with a nonzero exit for malformed suites and compile failures, idempotence."""
from __future__ import annotations

import json
import shutil

import pytest

from conftest import FRONTENDS, REPO, manifests

VA = {"op": "vector_add", "params": {"n": 4099, "dtype": "float32"}}


def write_suite(path, configs, **top):
    path.write_text(json.dumps({"suite": "t", **top, "configs": configs}))
    return path


def error_lines(stderr: str) -> list[str]:
    return [l for l in stderr.splitlines() if l.startswith("error:")]


@pytest.mark.parametrize("fe", FRONTENDS)
def test_unsupported_operator_and_dtype_are_skipped(fe, tmp_path, run_export):
    suite = write_suite(tmp_path / "s.json", [
        {"op": "matmul", "params": {"m": 4, "n": 8, "dtype": "float16"}},
        VA,
        {"op": "vector_add", "params": {"n": 64, "dtype": "float64"}},
    ])
    r = run_export(fe, suite, tmp_path / "out")
    assert r.rc == 0, r.stderr
    assert f"skip: {fe}: operator 'matmul' (1 configs)" in r.stdout
    assert f"skip: {fe}: vector_add/dtype=float64,n=64: dtype 'float64' not covered" in r.stdout
    ms = manifests(r.out)
    assert list(ms) == ["vector_add"]
    assert [c["params"] for c in ms["vector_add"]["configs"]] == [VA["params"]]
    assert not (r.out / "matmul").exists()


def test_suite_with_only_unsupported_operators_writes_nothing(tmp_path, run_export):
    suite = write_suite(tmp_path / "s.json", [{"op": "matmul", "params": {"m": 4, "n": 8}}])
    r = run_export("cuda_cpp", suite, tmp_path / "out")
    assert r.rc == 0 and "skip: cuda_cpp: operator 'matmul'" in r.stdout
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


MALFORMED = {
    "not_json": "{configs: [",
    "not_object": "[1, 2]",
    "configs_missing": json.dumps({"suite": "x"}),
    "config_not_object": json.dumps({"configs": [3]}),
    "op_missing": json.dumps({"configs": [{"params": {"n": 4}}]}),
    "params_not_object": json.dumps({"configs": [{"op": "vector_add", "params": [4]}]}),
    "param_nested": json.dumps({"configs": [{"op": "vector_add", "params": {"n": [4]}}]}),
    "n_missing": json.dumps({"configs": [{"op": "vector_add", "params": {"dtype": "float32"}}]}),
    "n_not_int": json.dumps({"configs": [{"op": "rms_norm", "params": {"m": 2, "n": "8", "dtype": "float16"}}]}),
    "n_zero": json.dumps({"configs": [{"op": "vector_add", "params": {"n": 0, "dtype": "float32"}}]}),
}


@pytest.mark.parametrize("fe", FRONTENDS)
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_suite_is_one_line_and_exit_2(fe, case, tmp_path, run_export):
    suite = tmp_path / "bad.json"
    suite.write_text(MALFORMED[case])
    r = run_export(fe, suite, tmp_path / "out")
    assert r.rc == 2, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"error: {fe}: ")
    assert "Traceback" not in r.stderr and "exported" not in r.stdout


def test_missing_suite_file(tmp_path, run_export):
    r = run_export("triton", tmp_path / "nope.json", tmp_path / "out")
    assert r.rc == 2 and error_lines(r.stderr) == r.stderr.strip().splitlines()
    assert "cannot read suite" in r.stderr


BROKEN = {
    "cutile_python": ("vector_add.py",
                      "import cuda.tile as ct\n\n@ct.kernel\ndef vector_add(x, y, out, TILE: ct.Constant[int]):\n"
                      "    ct.store(out, index=(ct.bid(0),), tile=ct.no_such_op(x))\n"),
    "triton": ("vector_add.py",
               "import triton\nimport triton.language as tl\n\n@triton.jit\n"
               "def vector_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
               "    tl.store(out_ptr, tl.no_such_op(x_ptr))\n"),
    "cuda_cpp": ("vector_add.cu",
                 'extern "C" __global__ void vector_add_f32(const float* x, const float* y, float* out,'
                 " long long n) { out[0] = x[0] + ; }\n"),
}


@pytest.mark.parametrize("fe", FRONTENDS)
def test_compile_failure_names_the_config_in_one_line(fe, tmp_path, run_export):
    kdir = tmp_path / "kernels"
    (kdir / fe).mkdir(parents=True)
    name, text = BROKEN[fe]
    (kdir / fe / name).write_text(text)
    suite = write_suite(tmp_path / "s.json", [VA])
    r = run_export(fe, suite, tmp_path / "out", PORTBENCH_KERNELS_DIR=str(kdir))
    assert r.rc == 1, (r.stdout, r.stderr)
    errs = error_lines(r.stderr)
    assert len(errs) == 1 and r.stderr.strip().splitlines()[-1] == errs[0], r.stderr
    assert errs[0].startswith(f"error: {fe}: vector_add/dtype=float32,n=4099: ")
    assert "Traceback" not in r.stderr
    if fe == "cuda_cpp":   # NVRTC's program log comes first, then the one error line
        assert "NVRTC_ERROR_COMPILATION" in errs[0]
        assert "log: " in r.stderr and "expected an expression" in r.stderr
    assert not (tmp_path / "out" / "vector_add").exists()


def test_reexport_is_idempotent(tmp_path, run_export, smoke_runs):
    """A second export into a populated folder gives byte-identical manifests and cubins, and
    replaces stale files of an older bundle."""
    out = tmp_path / "out"
    shutil.copytree(smoke_runs["cuda_cpp"].out, out)
    (out / "vector_add" / "stale.cubin").write_bytes(b"old")
    for fe in FRONTENDS:
        first = smoke_runs[fe].out
        target = out if fe == "cuda_cpp" else tmp_path / fe
        r = run_export(fe, REPO / "configs" / "smoke.json", target)
        assert r.rc == 0, r.stderr
        for op in ("vector_add", "rms_norm"):
            a, b = first / op, target / op
            assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
            for p in a.iterdir():
                assert p.read_bytes() == (b / p.name).read_bytes(), f"{fe}/{op}/{p.name} differs"
