#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per operator: the largest configuration (most bytes), the best-of-N device time of each side
and the achieved bandwidth of the faster one against a measured copy bandwidth.
Usage: bandwidth_table.py RESULTS.h5 COST.jsonl COPY_GBPS"""
import json
import sys

import h5py
import numpy as np


def best_medians(group):
    meds = []
    for run in group.values():
        if isinstance(run, h5py.Group) and "time_ns" in run and run["time_ns"].shape[0] > 0:
            timing = run.attrs.get("timing", "")
            if (timing.decode() if isinstance(timing, bytes) else timing) == "VALID":
                meds.append(float(np.median(run["time_ns"][()])))
    return min(meds) if meds else None


def main(results, cost_file, copy_gbps):
    cost = {}
    for line in open(cost_file):
        d = json.loads(line)
        if "bytes" in d:
            cost[d["id"]] = d
    per_op = {}
    with h5py.File(results, "r") as f:
        for op_group in f["configs"].values():
            for sg in op_group.values():
                full = sg.attrs["id"]
                full = full.decode() if isinstance(full, bytes) else full
                if full not in cost or "reference" not in sg or "port" not in sg:
                    continue
                ref, port = best_medians(sg["reference"]), best_medians(sg["port"])
                if ref is None or port is None:
                    continue
                op = cost[full]["op"]
                if op not in per_op or cost[full]["bytes"] > per_op[op][1]:
                    per_op[op] = (full, cost[full]["bytes"], ref, port)
    print(f"copy bandwidth {copy_gbps:.0f} GB/s")
    print(f"{'operator':20s} {'largest configuration':58s} {'MB':>8s} {'ref us':>9s} {'port us':>9s} {'best GB/s':>10s} {'% copy':>7s}")
    for op, (cid, b, r, p) in sorted(per_op.items()):
        best = min(r, p)
        gbps = b / best
        print(f"{op:20s} {cid:58s} {b / 1e6:8.1f} {r / 1e3:9.2f} {p / 1e3:9.2f} {gbps:10.0f} {100 * gbps / copy_gbps:6.1f}%")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
