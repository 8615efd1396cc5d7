#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per operator: the largest configuration (most bytes moved), the best-of-N device time of every
front end found in the results files, and the achieved bandwidth of the fastest one against a
measured copy bandwidth. Runs whose numerics or proof did not pass are left out: a kernel that
skips work must not look fast.
With --top N, the N configurations per operator that move the most bytes (the port issues'
figure: the three largest KV lengths), one row each.
With --list, only those configurations as ID=BYTES lines, the arguments of decode_floor.py.
With --floor FLOOR.json (decode_floor.py --json), each row also against what torch reaches moving
that row's own bytes, cold and clean: a copy of them, and a read of them followed by a second,
one-element kernel (the floor of a pass-and-reduce plan; decode_floor.py --search's fastest read
where it is faster than torch's), and the share of the copy bandwidth that floor reaches. Below
about 60 MB a transfer's time is not the large copy's bandwidth (launch and tail costs; a copy's
writes can stay in the L2), so the two shares say how far a small plan is from what the GPU
reaches moving the same bytes.
Each row ends with its verdict against the figure (--figure SHARE of the copy bandwidth, default
0.80, the port issues'): MET; TWO_KERNEL_FLOOR_BELOW where the row is short and its two-kernel
floor itself stays under the share (no pass-and-reduce plan that reads as fast as that floor
meets it); SHORT_EVEN_WARM_L2 where the row is short and, with --warm WARM.h5 (the same
configurations timed with `portbench run --warm-l2`) and --l2-bytes N (the GPU's L2 size), the
row's bytes fit half the L2 and every side timed warm still takes longer than the figure allows: with
no DRAM to wait for the plans miss it, so what holds them is their own work (a chain of loads,
products and stores a block), not the bandwidth the figure measures; SHORT otherwise, a row
without a floor included.
Usage: bandwidth_table.py [--top N] [--figure SHARE] [--list | --floor FLOOR.json] [--warm WARM.h5 --l2-bytes N]
                          COST.jsonl COPY_GBPS RESULTS.h5 ..."""
import json
import sys

import h5py
import numpy as np

# The row verdicts, defined once. A row is called unreachable only against a measured floor.
MET = "MET"
SHORT = "SHORT"
FLOOR_BELOW = "TWO_KERNEL_FLOOR_BELOW"
SHORT_WARM = "SHORT_EVEN_WARM_L2"


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def clean_run(attrs):
    """A run whose time may be counted: validly timed, numerics passed, the plan seen executed."""
    return (text(attrs.get("timing", "")) == "VALID" and text(attrs.get("numerics", "")) == "PASS"
            and text(attrs.get("proof", "")) == "EXECUTED")


def best_median(group):
    """Best (minimum) of the run medians of a role group; None without a clean, timed run."""
    meds = []
    for run in group.values():
        if not isinstance(run, h5py.Group) or "time_ns" not in run or run["time_ns"].shape[0] == 0:
            continue
        if clean_run(run.attrs):
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


def load_floor(path):
    """decode_floor.py --json's file; exits with one line naming the file and the cause."""
    try:
        with open(path) as f:
            floor = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"bandwidth_table.py: {path}: {e}")
    if not isinstance(floor, dict):
        sys.exit(f"bandwidth_table.py: {path}: not an object of cases by configuration id")
    for name, case in floor.items():
        if not isinstance(case, dict) or any(not isinstance(case.get(k), (int, float)) or case[k] <= 0
                                             for k in ("bytes", "copy_us", "read_plus_one_us")):
            sys.exit(f"bandwidth_table.py: {path}: '{name}' lacks a positive bytes, copy_us or read_plus_one_us")
        searched = case.get("searched_read_plus_one_us")
        if searched is not None and (not isinstance(searched, (int, float)) or searched <= 0):
            sys.exit(f"bandwidth_table.py: {path}: '{name}' has a searched_read_plus_one_us that is not a positive time")
    return floor


def warm_file(path):
    """A results file timed with --warm-l2 (its timing options say l2_flush "none"); exits with one
    line naming the file otherwise."""
    try:
        with h5py.File(path, "r") as f:
            timing = json.loads(text(f.attrs.get("timing", "{}")))
    except (OSError, ValueError) as e:
        sys.exit(f"bandwidth_table.py: {path}: cannot read its timing options ({e})")
    if timing.get("l2_flush") != "none":
        sys.exit(f"bandwidth_table.py: {path}: timing.l2_flush is '{timing.get('l2_flush')}', not 'none': "
                 "not a --warm-l2 run")
    return path


def main(cost_file, copy_gbps, files, top=1, listing=False, floor=None, figure=0.80, warm=None):
    """warm: (WARM.h5, L2 bytes) or None."""
    cost = {}
    for line in open(cost_file):
        d = json.loads(line)
        if "bytes" in d:
            cost[d["id"]] = d
    times = collect(files, cost)
    warm_times, l2_bytes = (collect([warm[0]], cost), warm[1]) if warm is not None else ({}, 0)
    # Per operator the configuration moving the most bytes; among equally large ones (upstream
    # schedules of one shape, e.g. rms_norm's modes) the one whose fastest front end is fastest.
    by_op = {}
    for cid, per_fe in times.items():
        by_op.setdefault(cost[cid]["op"], []).append(cid)
    rows = []
    for op, cids in by_op.items():
        cids.sort(key=lambda c: (-cost[c]["bytes"], min(times[c].values())))
        rows += [(op, c) for c in cids[:top]]
    rows.sort(key=lambda r: (r[0], -cost[r[1]]["bytes"]))
    if listing:
        for _, cid in rows:
            print(f"{cid}={int(cost[cid]['bytes'])}")
        return
    frontends = sorted({fe for per_fe in times.values() for fe in per_fe})
    print(f"copy bandwidth {copy_gbps:.0f} GB/s")
    head = " ".join(f"{fe + ' us':>17s}" for fe in frontends)
    extra = (f" {'own copy us':>11s} {'%':>6s} {'own 2-kern us':>13s} {'%':>6s} {'2-kern copy':>11s}"
             if floor is not None else "") + (f" {'warm us':>8s} {'budget us':>9s}" if warm is not None else "")
    print(f"{'operator':18s} {'MB':>8s} {head} {'fastest':>14s} {'GB/s':>6s} {'% copy':>7s}{extra}"
          f"  {'figure ' + format(100 * figure, '.0f') + '%':22s}  configuration (most bytes first)")
    for op, cid in rows:
        b = cost[cid]["bytes"]
        per_fe = times[cid]
        cols = " ".join(f"{per_fe[fe] / 1e3:17.2f}" if fe in per_fe else f"{'-':>17s}" for fe in frontends)
        fastest = min(per_fe, key=per_fe.get)
        gbps = b / per_fe[fastest]
        case = floor.get(cid) if floor is not None else None
        reach = floor_share(case, b, copy_gbps)
        extra = floor_columns(case, reach, per_fe[fastest] / 1e3) if floor is not None else ""
        # The time the figure allows this row, and the fastest side's time with a warm L2 where
        # its bytes surely stay there: half the L2, since Hopper's L2 is two partitions and a line
        # read by SMs on both sides may be held in each, so a larger set may still read DRAM warm.
        budget_ns = b / (figure * copy_gbps)
        warm_ns = min(warm_times[cid].values()) if cid in warm_times and 2 * b <= l2_bytes else None
        if warm is not None:
            extra += (f" {warm_ns / 1e3:8.2f}" if warm_ns is not None else f" {'-':>8s}") + f" {budget_ns / 1e3:9.2f}"
        verdict = row_verdict(gbps / copy_gbps, reach, figure, warm_ns is not None and warm_ns > budget_ns)
        print(f"{op:18s} {b / 1e6:8.1f} {cols} {fastest:>14s} {gbps:6.0f} {100 * gbps / copy_gbps:6.1f}%{extra}"
              f"  {verdict:22s}  {cid}")


def two_kernel_us(case):
    """The two-kernel floor: torch's read and one element, or the searched read where faster."""
    return min(case["read_plus_one_us"], case.get("searched_read_plus_one_us", case["read_plus_one_us"]))


def floor_share(case, moved, copy_gbps):
    """The share of the copy bandwidth the row's two-kernel floor reaches; None where the floor
    has no such row or timed other bytes."""
    if case is None or case.get("bytes") != moved:
        return None
    return moved / (two_kernel_us(case) * 1e3) / copy_gbps


def row_verdict(share, floor_reach, figure, over_budget_warm=False):
    """MET at or above the figure; below it, TWO_KERNEL_FLOOR_BELOW only where a measured floor
    itself stays under the figure, SHORT_EVEN_WARM_L2 where every side timed with its bytes in the
    L2 still took longer than the figure allows, else SHORT."""
    if share >= figure:
        return MET
    if floor_reach is not None and floor_reach < figure:
        return FLOOR_BELOW
    if over_budget_warm:
        return SHORT_WARM
    return SHORT


def floor_columns(case, reach, fastest_us):
    """A copy of the row's own bytes and the two-kernel floor (the faster of torch's read and the
    searched one), each as its time and as a share of the fastest side's time (100% = as fast as
    that floor), then the share of the copy bandwidth the floor itself reaches: below 80% no
    two-kernel plan that reads the bytes as fast as that floor meets the issue's figure. `reach`
    is that share (floor_share); dashes where it is None."""
    if reach is None:
        return f" {'-':>11s} {'-':>6s} {'-':>13s} {'-':>6s} {'-':>11s}"
    copy_us, two_us = case["copy_us"], two_kernel_us(case)
    return (f" {copy_us:11.2f} {100 * copy_us / fastest_us:5.1f}% {two_us:13.2f} "
            f"{100 * two_us / fastest_us:5.1f}% {100 * reach:10.1f}%")


if __name__ == "__main__":
    args = sys.argv[1:]
    top, listing, floor, figure, warm_path, l2_bytes = 1, False, None, 0.80, None, None
    while args[:1] and args[0].startswith("--"):
        if args[0] == "--top":
            if len(args) < 2 or not args[1].isdigit() or int(args[1]) < 1:
                sys.exit("bandwidth_table.py: --top needs a positive count")
            top, args = int(args[1]), args[2:]
        elif args[0] == "--figure":
            try:
                figure = float(args[1]) if len(args) > 1 else 0.0
            except ValueError:
                figure = 0.0
            if not 0.0 < figure <= 1.0:
                sys.exit("bandwidth_table.py: --figure needs a share of the copy bandwidth in (0, 1]")
            args = args[2:]
        elif args[0] == "--list":
            listing, args = True, args[1:]
        elif args[0] == "--floor":
            if len(args) < 2:
                sys.exit("bandwidth_table.py: --floor needs decode_floor.py's JSON file")
            floor = load_floor(args[1])
            args = args[2:]
        elif args[0] == "--warm":
            if len(args) < 2:
                sys.exit("bandwidth_table.py: --warm needs a results file timed with --warm-l2")
            warm_path, args = warm_file(args[1]), args[2:]
        elif args[0] == "--l2-bytes":
            if len(args) < 2 or not args[1].isdigit() or int(args[1]) < 1:
                sys.exit("bandwidth_table.py: --l2-bytes needs the GPU's L2 size in bytes")
            l2_bytes, args = int(args[1]), args[2:]
        else:
            sys.exit(f"bandwidth_table.py: unknown option {args[0]}")
    if len(args) < 3 or (listing and (floor is not None or warm_path is not None)):
        sys.exit(__doc__)
    if (warm_path is None) != (l2_bytes is None):
        sys.exit("bandwidth_table.py: --warm and --l2-bytes go together (a warm run says something only where the bytes fit the L2)")
    try:
        copy_gbps = float(args[1])
    except ValueError:
        copy_gbps = 0.0
    if copy_gbps <= 0 and not listing:
        sys.exit(f"bandwidth_table.py: copy bandwidth '{args[1]}' is not a positive GB/s (was it measured?)")
    main(args[0], copy_gbps, args[2:], top, listing, floor, figure,
         (warm_path, l2_bytes) if warm_path is not None else None)
