#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""TFLOP/s of the reference front end (tilegym), the port (cutile_rust) and cuBLAS on the GEMM
configurations that issue 14's figures name: M = N = K in {4096, 8192} in float16 (matmul, bmm,
group_gemm) and upstream's LLM shapes (configs/gemm_llm.json, operators.md 3.1 test_perf_llm).

Inputs: `portbench report --format json` files (best-of-N device time per side and
configuration; several files are read in order, a later one's configuration replacing an
earlier one's) and the JSON lines of scripts/cublas_bench.py, joined by configuration id.
TFLOP/s = 2 M N K (x batch, x groups) / best time.

Usage: gemm_tflops.py [REPORT.json ...] [--cublas CUBLAS.jsonl] [--all] [--json OUT.jsonl]
Prints one row per configuration: times (us) and TFLOP/s of each side, the port's share of
cuBLAS's speed (cuBLAS time / port time) and of tilegym's; then the geomean of port / cuBLAS over
the rows that have both. Configurations missing on a side print "-"."""
from __future__ import annotations

import argparse
import json
import math
import sys

# upstream test_perf_llm (M, N, K)
LLM = {(4096, 8192, 2728): "gpt3-40b", (4096, 4096, 5440): "gpt3-7b", (12288, 2048, 2560): "t5-3b",
       (12288, 4096, 2560): "t5-11b", (4096, 5120, 2720): "t5-23b", (3072, 6144, 2720): "t5-41b"}
OPS = ("matmul", "bmm", "group_gemm")


def parse_id(cid: str) -> tuple[str, dict]:
    """'matmul/dtype=float16,k=4096,...' -> ('matmul', {'dtype': 'float16', 'k': 4096, ...})."""
    op, _, rest = cid.partition("/")
    params = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if value in ("true", "false"):
            params[key] = value == "true"
        elif value == "None":
            params[key] = None
        else:
            try:
                params[key] = int(value)
            except ValueError:
                try:
                    params[key] = float(value)
                except ValueError:
                    params[key] = value
    return op, params


def flops(op: str, p: dict) -> float:
    base = 2.0 * p["m"] * p["n"] * p["k"]
    return base * (p.get("batch", 1) if op == "bmm" else p.get("num_groups", 1) if op == "group_gemm" else 1)


def selected(op: str, p: dict) -> str | None:
    """Why a configuration is in the table ('square' or the LLM layer's name), else None."""
    if op not in OPS or p.get("dtype") != "float16":
        return None
    if p["m"] == p["n"] == p["k"] and p["m"] in (4096, 8192):
        return "square"
    if op == "matmul":
        return LLM.get((p["m"], p["n"], p["k"]))
    return None


def tflops(f: float, ns: float | None) -> float | None:
    return None if not ns else f / (ns * 1e-9) / 1e12


def read_reports(paths: list[str]) -> tuple[dict, str, str]:
    """id -> (reference best ns, port best ns), and the two front ends' names. An A/A report (the
    same front end on both sides: the port of an operator no reference front end has) gives the
    port's time only."""
    sides, ref_fe, port_fe = {}, "reference", "port"
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            rep = json.load(fh)
        if rep.get("schema") != "portbench.report/1":
            raise SystemExit(f"gemm_tflops: {path}: not a portbench report (schema {rep.get('schema')!r})")
        prov = rep.get("provenance", {})
        aa = prov.get("reference_frontend") == prov.get("port_frontend")
        if not aa:
            ref_fe, port_fe = prov.get("reference_frontend") or ref_fe, prov.get("port_frontend") or port_fe
        for c in rep.get("configs", []):
            def best(role):
                v = c.get(role, {}).get("best_ns")
                return v if isinstance(v, (int, float)) and v > 0 else None
            sides[c["id"]] = (None if aa else best("reference"), best("port"))
    return sides, ref_fe, port_fe


def read_cublas(path: str | None) -> dict:
    out = {}
    if path:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    r = json.loads(line)
                    out[r["id"]] = r.get("median_ns")
    return out


def fmt(v, spec):
    return format(v, spec) if v is not None else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reports", nargs="*", help="portbench report --format json outputs")
    ap.add_argument("--cublas", help="scripts/cublas_bench.py --out file")
    ap.add_argument("--all", action="store_true", help="every matmul/bmm/group_gemm configuration, not only the selection")
    ap.add_argument("--json", help="write the rows as JSON lines here")
    args = ap.parse_args()
    sides, ref_fe, port_fe = read_reports(args.reports)
    cublas = read_cublas(args.cublas)
    ids = list(dict.fromkeys(list(sides) + list(cublas)))
    rows = []
    for cid in ids:
        op, p = parse_id(cid)
        why = selected(op, p) if op in OPS else None
        if op not in OPS or not (why or args.all):
            continue
        ref_ns, port_ns = sides.get(cid, (None, None))
        cu_ns = cublas.get(cid)
        f = flops(op, p)
        rows.append({"id": cid, "why": why or "", "flops": f, "ref_ns": ref_ns, "port_ns": port_ns, "cublas_ns": cu_ns,
                     "ref_tflops": tflops(f, ref_ns), "port_tflops": tflops(f, port_ns), "cublas_tflops": tflops(f, cu_ns),
                     "port_vs_cublas": cu_ns / port_ns if cu_ns and port_ns else None,
                     "port_vs_ref": ref_ns / port_ns if ref_ns and port_ns else None})
    print(f"{'configuration':<96} {'':<8} {ref_fe + ' us':>12} {'TF/s':>6} {port_fe + ' us':>15} {'TF/s':>6} "
          f"{'cuBLAS us':>10} {'TF/s':>6} {'port/cuBLAS':>11} {'port/ref':>8}")
    for r in rows:
        print(f"{r['id']:<96} {r['why']:<8} {fmt(r['ref_ns'] and r['ref_ns'] / 1e3, '12.1f')} {fmt(r['ref_tflops'], '6.1f')} "
              f"{fmt(r['port_ns'] and r['port_ns'] / 1e3, '15.1f')} {fmt(r['port_tflops'], '6.1f')} "
              f"{fmt(r['cublas_ns'] and r['cublas_ns'] / 1e3, '10.1f')} {fmt(r['cublas_tflops'], '6.1f')} "
              f"{fmt(r['port_vs_cublas'], '11.3f')} {fmt(r['port_vs_ref'], '8.3f')}")
    both = [r["port_vs_cublas"] for r in rows if r["port_vs_cublas"]]
    if both:
        g = math.exp(sum(math.log(x) for x in both) / len(both))
        print(f"port / cuBLAS speed: geomean {g:.3f} over {len(both)} configurations, "
              f"{sum(x >= 0.9 for x in both)} of them at 90% or more")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
