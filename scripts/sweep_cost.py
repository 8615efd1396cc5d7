#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where a sweep's worker time went, per operator, from a results file's per-run cost attributes
(docs/results-layout.md): input generation and upload, the numerics passes and within them the
CPU verification against fp64, and the timed sampling. Answers "does verifying cost less than
timing?" for the configurations the file holds.
Usage: sweep_cost.py RESULTS.h5 [RESULTS.h5 ...]"""
import math
import sys
from collections import defaultdict

import h5py


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def main(files):
    keys = ("inputs_s", "check_s", "verify_s", "sampling_s", "item_wall_s")
    per_op = defaultdict(lambda: defaultdict(float))
    runs = defaultdict(int)
    for path in files:
        with h5py.File(path, "r") as f:
            for op_group in f["configs"].values():
                for cg in op_group.values():
                    op = text(cg.attrs["operator"])
                    for role in ("reference", "port"):
                        if role not in cg:
                            continue
                        for run in cg[role].values():
                            a = run.attrs
                            if not isinstance(run, h5py.Group) or "verify_s" not in a:
                                continue
                            vals = {k: float(a.get(k, math.nan)) for k in keys}
                            if any(math.isnan(v) for v in vals.values()):
                                continue
                            per_op[op]["check_s"] += vals["check_s"]
                            per_op[op]["verify_s"] += vals["verify_s"]
                            if role == "reference":   # configuration-wide figures: count once
                                runs[op] += 1
                                for k in ("inputs_s", "sampling_s", "item_wall_s"):
                                    per_op[op][k] += vals[k]
    if not per_op:
        sys.exit("sweep_cost.py: no run carries cost attributes (file written before they existed?)")
    print(f"{'operator':26s} {'runs':>5s} {'inputs s':>9s} {'numerics s':>10s} {'verify s':>9s} "
          f"{'sampling s':>10s} {'wall s':>8s} {'verify/sampling':>15s}")
    total = defaultdict(float)
    for op in sorted(per_op):
        d = per_op[op]
        for k, v in d.items():
            total[k] += v
        total["runs"] += runs[op]
        ratio = d["verify_s"] / d["sampling_s"] if d["sampling_s"] > 0 else math.inf
        print(f"{op:26s} {runs[op]:5d} {d['inputs_s']:9.1f} {d['check_s']:10.1f} {d['verify_s']:9.1f} "
              f"{d['sampling_s']:10.1f} {d['item_wall_s']:8.1f} {ratio:15.2f}")
    ratio = total["verify_s"] / total["sampling_s"] if total["sampling_s"] > 0 else math.inf
    print(f"{'total':26s} {int(total['runs']):5d} {total['inputs_s']:9.1f} {total['check_s']:10.1f} "
          f"{total['verify_s']:9.1f} {total['sampling_s']:10.1f} {total['item_wall_s']:8.1f} {ratio:15.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
