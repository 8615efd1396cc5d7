#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Each kernel's device time of multi-kernel plans, per side, from one or more results files
(docs/results-layout.md: `kernel_entries`, `kernel_median_ns` of each run), the best run's (the
run with the lowest plan median, as best of N picks it) among the complete runs timed validly
whose numerics passed and whose proof saw the plan executed: a run that skipped work must not
look fast.

Given a cold-L2 file and a --warm-l2 file of the same configurations (scripts/device_run.sh,
PORTBENCH_WARM_L2_OPS), the last columns say how much of each kernel's time its DRAM traffic
explains: a kernel that takes nearly as long with its bytes already in the L2 is held by its
own instructions and latencies, not by the bandwidth a copy reaches.

Usage: kernel_medians.py [--filter REGEX] LABEL=FILE.h5 ...   (LABEL e.g. cold, warm)"""
import json
import re
import sys

import h5py

from bandwidth_table import clean_run, text

SCHEMA = "portbench.results/1"


def best_runs(path, pattern):
    """{(config id, role): (plan median ns, [(entry, median ns)])}, the best clean run of each
    side (complete, VALID timing, numerics PASS, proof EXECUTED); a side with none is left out."""
    out = {}
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise SystemExit(f"kernel_medians: {path}: cannot open as HDF5 ({e})")
    with f:
        if text(f.attrs.get("schema", "")) != SCHEMA:
            raise SystemExit(f"kernel_medians: {path}: schema is not {SCHEMA}")
        for op in f["configs"].values():
            for config in op.values():
                cid = text(config.attrs["id"])
                if not pattern.search(cid):
                    continue
                for role in ("reference", "port"):
                    if role not in config:
                        continue
                    best = None
                    for run in config[role].values():
                        a = run.attrs
                        if text(a.get("state", "")) != "COMPLETE" or not clean_run(a):
                            continue
                        median = float(a["median_ns"])
                        if best is not None and median >= best[0]:
                            continue
                        if "kernel_entries" in a:
                            entries = json.loads(text(a["kernel_entries"]))
                            kernels = list(zip(entries, (int(x) for x in a["kernel_median_ns"])))
                        else:
                            kernels = [("(one kernel)", int(median))]
                        best = (median, kernels)
                    if best is not None:
                        out[(cid, role)] = best
    return out


def short(entry):
    """An entry's name without its template arguments or mangling, enough to tell pass from reduce."""
    m = re.search(r"(splitk_reduce|[a-z_]*split[a-z_]*|[a-z_]{4,})", entry)
    return m.group(1) if m else entry[:24]


def main(argv):
    pattern = re.compile("")
    if argv[:1] == ["--filter"]:
        if len(argv) < 2:
            raise SystemExit("kernel_medians: --filter needs a regular expression")
        pattern, argv = re.compile(argv[1]), argv[2:]
    if not argv:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    files = []
    for arg in argv:
        label, sep, path = arg.partition("=")
        if not sep or not label or not path:
            raise SystemExit(f"kernel_medians: '{arg}': expected LABEL=FILE.h5")
        files.append((label, best_runs(path, pattern)))
    keys = sorted(set().union(*(set(runs) for _, runs in files)))
    if not keys:
        raise SystemExit("kernel_medians: no cleanly timed side matches (complete, VALID, PASS, EXECUTED)")
    first_label, first = files[0]
    for cid, role in keys:
        print(f"{cid} {role}")
        for label, runs in files:
            if (cid, role) not in runs:
                print(f"  {label:>6s}  (not timed)")
                continue
            plan, kernels = runs[(cid, role)]
            line = f"  {label:>6s}  plan {plan / 1e3:8.2f} us  " + "  ".join(f"{short(e)} {ns / 1e3:.2f}" for e, ns in kernels)
            if label != first_label and (cid, role) in first:
                base_plan, base_kernels = first[(cid, role)]
                shares = [f"{ns / b:.2f}" for (_, ns), (_, b) in zip(kernels, base_kernels) if b > 0]
                line += f"   / {first_label}: plan {plan / base_plan:.2f}, kernels " + " ".join(shares)
            print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
