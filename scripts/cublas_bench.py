#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The vendor library beside every GEMM figure: times cuBLAS through PyTorch on a suite's matmul,
bmm and group_gemm configurations, as portbench times kernels (docs/measurement.md):

- device time from CUPTI (torch.profiler's kernel records), summing every kernel one call launches
  (torch may split a product into several kernels; upstream's CUPTI timer sums them too);
- cold L2: a buffer of twice the L2 size is overwritten before every sample (outside the timed
  call; portbench also resets persisting L2 lines, which torch does not expose);
- the median of the samples, after warm-up launches.

The operands are laid out as reference/src/ops/{matmul,bmm,group_gemm}.cpp declares them:
transpose_a means A is stored [K, M] and the product takes its transpose (a view, no copy:
cuBLAS reads it transposed), likewise transpose_b. float32 runs with TF32 tensor cores (as
upstream's kernels do); float8_e4m3fn runs through torch._scaled_mm (cuBLASLt, scales 1) with the
layout cuBLASLt's fp8 GEMM requires (A row-major [M, K], B column-major) and an fp8 output, the
vendor's best case whatever the configuration's transposes. group_gemm is G torch.matmul calls (no
grouped GEMM in torch's public API), timed as one sample.

Usage (on the GPU host; python3 with torch):
  scripts/cublas_bench.py --suite configs/tilegym.json --suite configs/gemm_llm.json \\
      [--ops matmul,bmm,group_gemm] [--filter REGEX] [--samples 20] [--time-cap 2] [--out cublas.jsonl]
Prints a table (median us, TFLOP/s, samples, kernels) and, with --out, one JSON line per
configuration: {"id", "op", "params", "median_ns", "tflops", "samples", "kernels", "library",
"method"} ("error" instead when torch refuses it). The id is portbench's configuration id, so the
lines join with `portbench report --format json` (scripts/gemm_tflops.py does)."""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "kernels/export"))
from portbench_export.suite import load_suite  # noqa: E402  (pure standard library)

OPS = ("matmul", "bmm", "group_gemm")


def flops(op: str, p: dict) -> float:
    """Multiply-adds counted as two operations, as upstream's TFLOP/s figures count them."""
    base = 2.0 * p["m"] * p["n"] * p["k"]
    return base * (p.get("batch", 1) if op == "bmm" else p.get("num_groups", 1) if op == "group_gemm" else 1)


def torch_dtype(torch, name: str):
    try:
        return {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
                "float8_e4m3fn": torch.float8_e4m3fn}[name]
    except KeyError:
        raise ValueError(f"dtype {name!r} is not timed here") from None


def operand(torch, rows: int, cols: int, transposed: bool, dtype, batch: int | None = None):
    """The logical [rows, cols] operand, stored as the reference stores it ([cols, rows] and viewed
    transposed when `transposed`). Values are uniform in [-1, 1) (fp8: scaled to keep |C| small)."""
    shape = (cols, rows) if transposed else (rows, cols)
    if batch is not None:
        shape = (batch,) + shape
    work = torch.float16 if dtype == torch.float8_e4m3fn else dtype
    t = (torch.rand(shape, device="cuda", dtype=work) * 2 - 1).to(dtype)
    return t.transpose(-1, -2) if transposed else t


def make_call(torch, op: str, p: dict):
    """A closure performing the product once, and a note on how it maps onto torch."""
    dt = torch_dtype(torch, p["dtype"])
    ta, tb = bool(p.get("transpose_a", False)), bool(p.get("transpose_b", False))
    m, n, k = p["m"], p["n"], p["k"]
    if dt == torch.float8_e4m3fn:
        if op != "matmul":
            raise ValueError("fp8 is timed for matmul only")
        a = operand(torch, m, k, False, dt)
        b = operand(torch, k, n, True, dt)   # column-major [K, N]: stored [N, K]
        one = torch.ones((), device="cuda", dtype=torch.float32)
        return (lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=dt)), \
            "torch._scaled_mm (cuBLASLt fp8, A row-major, B column-major, scales 1, fp8 out)"
    if op == "matmul":
        a, b = operand(torch, m, k, ta, dt), operand(torch, k, n, tb, dt)
        return (lambda: torch.matmul(a, b)), "torch.matmul"
    if op == "bmm":
        q = p["batch"]
        a, b = operand(torch, m, k, ta, dt, q), operand(torch, k, n, tb, dt, q)
        return (lambda: torch.bmm(a, b)), "torch.bmm"
    g = p["num_groups"]
    pairs = [(operand(torch, m, k, False, dt), operand(torch, k, n, tb, dt)) for _ in range(g)]

    def grouped():
        for a, b in pairs:
            torch.matmul(a, b)
    return grouped, f"torch.matmul x {g}"


def time_call(torch, call, samples: int, warmup: int, time_cap: float, flush) -> tuple[list[float], list[str]]:
    """Device ns per sample (every kernel of one call, from the profiler's CUPTI records)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    # Estimate one call to keep the profiled loop within the time cap.
    t0 = time.perf_counter()
    call()
    torch.cuda.synchronize()
    one = max(time.perf_counter() - t0, 1e-6)
    n = max(5, min(samples, int(time_cap / one)))
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(n):
            flush()
            with record_function(f"pb_sample_{i}"):
                call()
        torch.cuda.synchronize()
    times, kernels = [], []
    for e in prof.events():
        if not e.name.startswith("pb_sample_") or e.device_type != torch.autograd.DeviceType.CPU:
            continue
        # Kernels launched inside the range (its own and its children's), CUPTI durations in us.
        us = e.device_time_total
        if us > 0:
            times.append(us * 1e3)
        if not kernels:
            stack = [e]
            while stack:
                x = stack.pop()
                kernels.extend(k.name for k in getattr(x, "kernels", []))
                stack.extend(x.cpu_children)
    return times, sorted(set(kernels))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", action="append", required=True, help="suite file (repeatable)")
    ap.add_argument("--ops", default=",".join(OPS), help="operators to time (default: %(default)s)")
    ap.add_argument("--filter", default="", help="only configurations whose id matches this regex")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--time-cap", type=float, default=2.0, help="profiled seconds per configuration at most")
    ap.add_argument("--out", help="write one JSON line per configuration here")
    args = ap.parse_args()

    import torch
    if not torch.cuda.is_available():
        print("cublas_bench: no CUDA device", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = True   # fp32 as TF32, as upstream's kernels compute
    props = torch.cuda.get_device_properties(0)
    l2 = int(getattr(props, "L2_cache_size", 0) or 50 << 20)
    scratch = torch.empty(2 * l2 // 4, dtype=torch.int32, device="cuda")
    flush = lambda: scratch.fill_(0x5A5A5A5A)  # noqa: E731  (twice the L2, overwritten)
    library = f"cuBLAS through torch {torch.__version__} (CUDA {torch.version.cuda}), {props.name}"
    ops = set(args.ops.split(","))
    pattern = re.compile(args.filter) if args.filter else None
    out = open(args.out, "w", encoding="utf-8") if args.out else None
    seen = set()
    print(f"# {library}; L2 {l2 >> 20} MiB, flushed with {2 * l2 >> 20} MiB before every sample")
    print(f"{'configuration':<100} {'median_us':>11} {'TFLOP/s':>8} {'n':>3}  kernels")
    for suite in args.suite:
        for c in load_suite(suite).configs:
            cid = c.id()
            if c.op not in ops or cid in seen or (pattern and not pattern.search(cid)):
                continue
            seen.add(cid)
            rec = {"id": cid, "op": c.op, "params": c.params, "library": library}
            try:
                call, how = make_call(torch, c.op, c.params)
                times, kernels = time_call(torch, call, args.samples, args.warmup, args.time_cap, flush)
                if not times:
                    raise RuntimeError("the profiler recorded no kernel for the call")
                med = statistics.median(times)
                rec.update(median_ns=med, samples=len(times), kernels=kernels,
                           tflops=flops(c.op, c.params) / (med * 1e-9) / 1e12,
                           method=f"{how}; CUPTI kernel time summed per call; cold L2; median")
                print(f"{cid:<100} {med / 1e3:>11.1f} {rec['tflops']:>8.1f} {len(times):>3}  {' | '.join(k[:60] for k in kernels)}")
            except Exception as e:  # one configuration torch cannot run is a row, not the end
                rec["error"] = f"{type(e).__name__}: {e}".splitlines()[0]
                print(f"{cid:<100} {'-':>11} {'-':>8} {'-':>3}  error: {rec['error']}")
            finally:
                torch.cuda.empty_cache()
            if out:
                out.write(json.dumps(rec) + "\n")
                out.flush()
    if out:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
