#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per operator: the largest configuration (most bytes moved), the best-of-N device time of every
front end found in the results files, and the achieved bandwidth of the fastest one against a
measured copy bandwidth. Runs whose numerics or proof did not pass are left out: a kernel that
skips work must not look fast.
With --top N, the N configurations per operator that move the most bytes (the port issues'
figure: the three largest KV lengths), one row each.
Usage: bandwidth_table.py [--top N] COST.jsonl COPY_GBPS RESULTS.h5 [RESULTS.h5 ...]"""
import json
import sys

import h5py
import numpy as np


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def best_median(group):
    """Best (minimum) of the run medians of a role group; None without a clean, timed run."""
    meds = []
    for run in group.values():
        if not isinstance(run, h5py.Group) or "time_ns" not in run or run["time_ns"].shape[0] == 0:
            continue
        a = run.attrs
        if (text(a.get("timing", "")) == "VALID" and text(a.get("numerics", "")) == "PASS"
                and text(a.get("proof", "")) == "EXECUTED"):
            meds.append(float(np.median(run["time_ns"][()])))
    return min(meds) if meds else None


def collect(files, cost):
    """{config id: {frontend: best ns}} over every file and role."""
    times = {}
    for path in files:
        with h5py.File(path, "r") as f:
            for op_group in f["configs"].values():
                for cg in op_group.values():
                    cid = text(cg.attrs["id"])
                    if cid not in cost:
                        continue
                    for role in ("reference", "port"):
                        if role not in cg:
                            continue
                        fe = text(cg[role].attrs.get("frontend", role))
                        t = best_median(cg[role])
                        if t is not None:
                            prev = times.setdefault(cid, {}).get(fe)
                            times[cid][fe] = t if prev is None else min(prev, t)
    return times


def main(cost_file, copy_gbps, files, top=1):
    cost = {}
    for line in open(cost_file):
        d = json.loads(line)
        if "bytes" in d:
            cost[d["id"]] = d
    times = collect(files, cost)
    # Per operator the configuration moving the most bytes; among equally large ones (upstream
    # schedules of one shape, e.g. rms_norm's modes) the one whose fastest front end is fastest.
    by_op = {}
    for cid, per_fe in times.items():
        by_op.setdefault(cost[cid]["op"], []).append(cid)
    rows = []
    for op, cids in by_op.items():
        cids.sort(key=lambda c: (-cost[c]["bytes"], min(times[c].values())))
        rows += [(op, c) for c in cids[:top]]
    frontends = sorted({fe for per_fe in times.values() for fe in per_fe})
    print(f"copy bandwidth {copy_gbps:.0f} GB/s")
    head = " ".join(f"{fe + ' us':>17s}" for fe in frontends)
    print(f"{'operator':18s} {'MB':>8s} {head} {'fastest':>14s} {'GB/s':>6s} {'% copy':>7s}  configuration (most bytes first)")
    for op, cid in sorted(rows, key=lambda r: (r[0], -cost[r[1]]["bytes"])):
        b = cost[cid]["bytes"]
        per_fe = times[cid]
        cols = " ".join(f"{per_fe[fe] / 1e3:17.2f}" if fe in per_fe else f"{'-':>17s}" for fe in frontends)
        fastest = min(per_fe, key=per_fe.get)
        gbps = b / per_fe[fastest]
        print(f"{op:18s} {b / 1e6:8.1f} {cols} {fastest:>14s} {gbps:6.0f} {100 * gbps / copy_gbps:6.1f}%  {cid}")


if __name__ == "__main__":
    args = sys.argv[1:]
    top = 1
    if args[:1] == ["--top"]:
        if len(args) < 2 or not args[1].isdigit() or int(args[1]) < 1:
            sys.exit("bandwidth_table.py: --top needs a positive count")
        top, args = int(args[1]), args[2:]
    if len(args) < 3:
        sys.exit(__doc__)
    main(args[0], float(args[1]), args[2:], top)
