# SPDX-License-Identifier: Apache-2.0
"""Timing a vendor library (cuBLAS, cuDNN/flash SDPA) through PyTorch as portbench times kernels
(docs/measurement.md), shared by scripts/cublas_bench.py and scripts/sdpa_bench.py:

- device time from CUPTI (torch.profiler's kernel records), summing every kernel one call launches
  (torch may split an operation into several kernels; upstream's CUPTI timer sums them too);
- cold L2: a buffer of twice the L2 size is overwritten before every sample (outside the timed
  call; portbench also resets persisting L2 lines, which torch does not expose);
- the median of the samples, after warm-up launches.

A bench supplies `make_call(torch, op, params) -> (call, how)` and `flops(op, params)`; `run`
walks the suites and prints one row per configuration (an error row when torch refuses one) and,
with --out, one JSON line per configuration: {"id", "op", "params", "median_ns", "tflops",
"samples", "kernels", "library", "method"} ("error" instead of the figures). The id is
portbench's configuration id, so the lines join with `portbench report --format json`."""
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


def arguments(description: str, default_ops: tuple[str, ...]) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--suite", action="append", required=True, help="suite file (repeatable)")
    ap.add_argument("--ops", default=",".join(default_ops), help="operators to time (default: %(default)s)")
    ap.add_argument("--filter", default="", help="only configurations whose id matches this regex")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--time-cap", type=float, default=2.0, help="profiled seconds per configuration at most")
    ap.add_argument("--out", help="write one JSON line per configuration here")
    return ap


def selected_configs(suites: list[str], ops: set[str], pattern: str):
    """The suites' configurations of `ops` matching `pattern`, each id once, in suite order."""
    regex = re.compile(pattern) if pattern else None
    seen = set()
    for suite in suites:
        for c in load_suite(suite).configs:
            cid = c.id()
            if c.op not in ops or cid in seen or (regex and not regex.search(cid)):
                continue
            seen.add(cid)
            yield c


def run(args, name: str, library_name: str, make_call, flops, setup=None) -> int:
    """Times every selected configuration; `setup(torch)` runs once first (e.g. TF32 on)."""
    import torch
    if not torch.cuda.is_available():
        print(f"{name}: no CUDA device", file=sys.stderr)
        return 2
    if setup:
        setup(torch)
    props = torch.cuda.get_device_properties(0)
    l2 = int(getattr(props, "L2_cache_size", 0) or 50 << 20)
    scratch = torch.empty(2 * l2 // 4, dtype=torch.int32, device="cuda")
    flush = lambda: scratch.fill_(0x5A5A5A5A)  # noqa: E731  (twice the L2, overwritten)
    library = f"{library_name} through torch {torch.__version__} (CUDA {torch.version.cuda}), {props.name}"
    out = open(args.out, "w", encoding="utf-8") if args.out else None
    print(f"# {library}; L2 {l2 >> 20} MiB, flushed with {2 * l2 >> 20} MiB before every sample")
    print(f"{'configuration':<100} {'median_us':>11} {'TFLOP/s':>8} {'n':>3}  kernels")
    for c in selected_configs(args.suite, set(args.ops.split(",")), args.filter):
        cid = c.id()
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
