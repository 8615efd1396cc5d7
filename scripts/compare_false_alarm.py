#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Measures the false-alarm rate of `portbench compare` on A/A pairs, and its power on a planted
regression, with synthetic files drawn from a realistic GPU timing-noise model.

    scripts/compare_false_alarm.py [--build build/ci-cpu] [--pairs 16] [--configs 120] ...

An A/A pair is two files with the same true device times and independent noise (different noise
seeds): every REGRESSED verdict on it is a false alarm. The noise model (portbench_synth_results)
has per-run offsets (log-sd --run-sd), occasional runs in a slower mode (--bimodal-prob,
--bimodal-shift), within-run lognormal noise (--sample-sd) and a positive outlier tail
(--outlier-prob, +5-50%). Power: pairs whose current file has every port time scaled by --planted.
Needs portbench and portbench_synth_results built in the build folder.
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def binom_cdf(k: int, n: int, p: float) -> float:
    if p <= 0:
        return 1.0
    if p >= 1:
        return 1.0 if k >= n else 0.0
    total, log_pmf = 0.0, n * math.log1p(-p)
    for i in range(k + 1):
        total += math.exp(log_pmf)
        log_pmf += math.log(n - i) - math.log(i + 1) + math.log(p) - math.log1p(-p)
    return min(total, 1.0)


def upper_bound(k: int, n: int, confidence: float = 0.95) -> float:
    """Clopper-Pearson one-sided upper bound of a binomial proportion."""
    if k >= n:
        return 1.0
    lo, hi = k / n, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if binom_cdf(k, n, mid) > 1 - confidence:
            lo = mid
        else:
            hi = mid
    return hi


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(ROOT / "build" / "ci-cpu"))
    ap.add_argument("--pairs", type=int, default=16, help="A/A pairs")
    ap.add_argument("--power-pairs", type=int, default=4, help="pairs with a planted regression")
    ap.add_argument("--planted", type=float, default=1.05, help="port time factor of the planted regression")
    ap.add_argument("--configs", type=int, default=120, help="configurations per file")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--min-samples", type=int, default=50)
    ap.add_argument("--max-samples", type=int, default=200)
    ap.add_argument("--run-sd", type=float, default=0.004)
    ap.add_argument("--bimodal-prob", type=float, default=0.03)
    ap.add_argument("--bimodal-shift", type=float, default=0.02)
    ap.add_argument("--sample-sd", type=float, default=0.01)
    ap.add_argument("--outlier-prob", type=float, default=0.02)
    ap.add_argument("--threshold", type=float, default=0.02)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)

    build = Path(args.build)
    portbench = build / "harness" / "cli" / "portbench"
    synth = build / "tests" / "cli" / "results" / "portbench_synth_results"
    for exe in (portbench, synth):
        if not exe.exists():
            print(f"compare_false_alarm.py: {exe} not built", file=sys.stderr)
            return 2

    noise = ["--configs", str(args.configs), "--runs", str(args.runs),
             "--min-samples", str(args.min_samples), "--max-samples", str(args.max_samples),
             "--run-sd", str(args.run_sd), "--bimodal-prob", str(args.bimodal_prob),
             "--bimodal-shift", str(args.bimodal_shift), "--sample-sd", str(args.sample_sd),
             "--outlier-prob", str(args.outlier_prob)]

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)

        def one_pair(i: int, planted: float) -> tuple[int, dict]:
            a, b = work / f"pair{i}_a.h5", work / f"pair{i}_b.h5"
            truth = ["--truth-seed", str(1000 + i)]
            subprocess.run([synth, a, "--noise-seed", str(2 * i + 1), *truth, *noise],
                           check=True, capture_output=True)
            subprocess.run([synth, b, "--noise-seed", str(2 * i + 2), "--scale-port", str(planted),
                            *truth, *noise], check=True, capture_output=True)
            r = subprocess.run([portbench, "compare", a, b, "--format", "json",
                                "--threshold", str(args.threshold), "--alpha", str(args.alpha)],
                               capture_output=True, text=True)
            if r.returncode not in (0, 1):
                raise RuntimeError(f"compare failed ({r.returncode}): {r.stderr.strip()}")
            a.unlink()
            b.unlink()
            return r.returncode, json.loads(r.stdout)

        jobs = [(i, 1.0) for i in range(args.pairs)]
        jobs += [(args.pairs + i, args.planted) for i in range(args.power_pairs)]
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(lambda j: one_pair(*j), jobs))

    aa = results[:args.pairs]
    power = results[args.pairs:]
    counts: dict[str, int] = {}
    for _, d in aa:
        for row in d["rows"]:
            counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    n = sum(counts.values())
    false_alarms = counts.get("REGRESSED", 0)
    exits = sum(1 for rc, _ in aa if rc == 1)
    test = aa[0][1]["test"]["description"] if aa else ""

    print(f"compare false-alarm study: {args.pairs} A/A pairs x {args.configs} configurations x 2 front ends"
          f" = {n} comparisons ({args.runs} runs, {args.min_samples}-{args.max_samples} samples per run)")
    print(f"noise model: run offset sd {args.run_sd:.2%}, slower-mode runs {args.bimodal_prob:.0%} "
          f"(+{args.bimodal_shift:.0%}), within-run sd {args.sample_sd:.1%}, outliers {args.outlier_prob:.0%} (+5-50%)")
    print(f"test: {test}")
    print(f"false-alarm rate (REGRESSED on A/A): {false_alarms} / {n} = {false_alarms / n:.3%} "
          f"(95% upper bound {upper_bound(false_alarms, n):.3%}); A/A pairs exiting 1: {exits} / {args.pairs}")
    print("A/A verdicts: " + ", ".join(f"{v} {counts.get(v, 0)} ({counts.get(v, 0) / n:.1%})"
                                       for v in ("REGRESSED", "IMPROVED", "UNCHANGED", "INCONCLUSIVE")))
    if power:
        port = [row for _, d in power for row in d["rows"] if row["role"] == "port"]
        ref = [row for _, d in power for row in d["rows"] if row["role"] == "reference"]
        hit = sum(1 for row in port if row["verdict"] == "REGRESSED")
        ref_alarm = sum(1 for row in ref if row["verdict"] == "REGRESSED")
        print(f"planted {args.planted - 1:+.0%} port regression ({args.power_pairs} pairs): detected "
              f"{hit} / {len(port)} = {hit / len(port):.1%} of port comparisons; reference (unchanged) "
              f"REGRESSED {ref_alarm} / {len(ref)}; pairs exiting 1: {sum(1 for rc, _ in power if rc == 1)} / {len(power)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
