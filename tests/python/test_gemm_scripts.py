# SPDX-License-Identifier: Apache-2.0
"""scripts/gemm_tflops.py and scripts/cublas_bench.py without a GPU: configuration ids round-trip
through the id parser for every GEMM configuration of the suites, the selection is issue 14's
(M = N = K in {4096, 8192} fp16 and the LLM shapes), and a report plus cuBLAS lines give the
TFLOP/s and ratios the script prints."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from portbench_export.suite import load_suite

REPO = Path(__file__).resolve().parents[2]


def load(name):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


tflops = load("gemm_tflops")
cublas = load("cublas_bench")   # torch is imported only when it runs


def gemm_configs():
    for suite in ("tilegym.json", "gemm_llm.json"):
        for c in load_suite(REPO / "configs" / suite).configs:
            if c.op in ("matmul", "bmm", "group_gemm"):
                yield c


def test_ids_parse_back_to_the_suite_params():
    n = 0
    for c in gemm_configs():
        op, params = tflops.parse_id(c.id())
        assert (op, params) == (c.op, c.params)
        assert tflops.flops(op, params) == cublas.flops(c.op, c.params)
        n += 1
    assert n == 63 + 24 + 48 + 12


def test_selection_is_the_square_fp16_products_and_the_llm_shapes():
    picked = [(c.op, tflops.selected(c.op, c.params)) for c in gemm_configs() if tflops.selected(c.op, c.params)]
    square = [p for p in picked if p[1] == "square"]
    llm = [p for p in picked if p[1] != "square"]
    # matmul: 2 sizes x 3 (persistent, transpose_a) fp16; bmm: 2 batches x 2 sizes x 4 transposes;
    # group_gemm: 3 group counts x M=N=K=8192 x 2 transpose_b.
    assert sum(op == "matmul" for op, _ in square) == 6
    assert sum(op == "bmm" for op, _ in square) == 16
    assert sum(op == "group_gemm" for op, _ in square) == 6
    assert len(llm) == 12 and {why for _, why in llm} == set(tflops.LLM.values())


def test_report_and_cublas_lines_give_tflops(tmp_path):
    cfgs = [c for c in load_suite(REPO / "configs" / "gemm_llm.json").configs][:2]
    sq = next(c for c in gemm_configs() if c.op == "matmul" and c.params["m"] == 4096 and c.params["dtype"] == "float16")
    report = {"schema": "portbench.report/1", "provenance": {"reference_frontend": "tilegym", "port_frontend": "cutile_rust"},
              "configs": [{"id": sq.id(), "reference": {"best_ns": 184000.0}, "port": {"best_ns": 200000.0}},
                          {"id": cfgs[0].id(), "reference": {"best_ns": 0}, "port": {"best_ns": 150000.0}}]}
    rp = tmp_path / "report.json"
    rp.write_text(json.dumps(report))
    cp = tmp_path / "cublas.jsonl"
    cp.write_text("\n".join(json.dumps({"id": i, "median_ns": ns}) for i, ns in [(sq.id(), 175000.0), (cfgs[1].id(), 90000.0)]))
    out = tmp_path / "rows.jsonl"
    r = subprocess.run([sys.executable, str(REPO / "scripts/gemm_tflops.py"), str(rp), "--cublas", str(cp), "--json", str(out)],
                       capture_output=True, text=True, check=True)
    rows = {x["id"]: x for x in map(json.loads, out.read_text().splitlines())}
    s = rows[sq.id()]
    assert abs(s["ref_tflops"] - 2 * 4096**3 / 184e-6 / 1e12) < 1e-9
    assert abs(s["port_vs_cublas"] - 0.875) < 1e-12 and abs(s["port_vs_ref"] - 0.92) < 1e-12
    # A side without a valid time prints "-", and a configuration only cuBLAS timed still has a row.
    assert rows[cfgs[0].id()]["ref_ns"] is None and rows[cfgs[0].id()]["port_vs_cublas"] is None
    assert rows[cfgs[1].id()]["cublas_tflops"] > 0 and rows[cfgs[1].id()]["port_ns"] is None
    assert "port / cuBLAS speed: geomean 0.875 over 1 configurations, 0 of them at 90% or more" in r.stdout
    assert "tilegym us" in r.stdout.splitlines()[0]


def test_an_aa_report_gives_the_port_time_only(tmp_path):
    g = next(c for c in gemm_configs() if c.op == "group_gemm" and c.params["m"] == 8192 == c.params["n"] == c.params["k"])
    aa = {"schema": "portbench.report/1", "provenance": {"reference_frontend": "cutile_rust", "port_frontend": "cutile_rust"},
          "configs": [{"id": g.id(), "reference": {"best_ns": 1.0e6}, "port": {"best_ns": 1.1e6}}]}
    rp = tmp_path / "aa.json"
    rp.write_text(json.dumps(aa))
    out = tmp_path / "rows.jsonl"
    subprocess.run([sys.executable, str(REPO / "scripts/gemm_tflops.py"), str(rp), "--json", str(out)], check=True, capture_output=True)
    (row,) = map(json.loads, out.read_text().splitlines())
    assert row["ref_ns"] is None and row["port_ns"] == 1.1e6 and row["why"] == "square"
    assert abs(row["port_tflops"] - tflops.flops("group_gemm", g.params) / 1.1e-3 / 1e12) < 1e-9


def test_gemm_suite_is_the_matrix_products_then_the_llm_shapes(tmp_path):
    out = tmp_path / "gemm.json"
    r = subprocess.run([sys.executable, str(REPO / "scripts/gemm_suite.py"), str(out)], capture_output=True, text=True, check=True)
    assert "155 configurations (matmul 75, bmm 24, group_gemm 48, splitk_reduce 8)" in r.stdout
    got = [(c.op, c.params) for c in load_suite(out).configs]
    ops = ("matmul", "bmm", "group_gemm", "splitk_reduce")
    want = [(c.op, c.params) for c in load_suite(REPO / "configs/tilegym.json").configs if c.op in ops]
    want += [(c.op, c.params) for c in load_suite(REPO / "configs/gemm_llm.json").configs]
    assert got == want and len({json.dumps([op, p], sort_keys=True) for op, p in got}) == len(got)
    # Every configuration of the tuning subset is one of the suite's (tune looks them up by params).
    tune = [(c.op, c.params) for c in load_suite(REPO / "configs/gemm_tune.json").configs]
    assert tune and all(t in got for t in tune)
