#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CUPTI device time against CUDA-event time of the same samples, per configuration and front
end, from a portbench results file. Events bracket the launch on the stream, so they include
launch gaps; for a kernel that fills the GPU for hundreds of microseconds the two should agree
within a few percent. Usage: cupti_vs_event.py RESULTS.h5"""
import sys

import h5py
import numpy as np


def main(path):
    rows = []
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Group) and "time_ns" in obj and "event_time_ns" in obj:
                dev = np.asarray(obj["time_ns"], dtype=np.float64)
                evt = np.asarray(obj["event_time_ns"], dtype=np.float64)
                if dev.size and evt.size == dev.size:
                    rows.append((name, np.median(dev), np.median(evt)))
        f.visititems(visit)
    if not rows:
        print(f"{path}: no runs with both device and event times")
        return 1
    print(f"{'run group':70s} {'CUPTI us':>10s} {'event us':>10s} {'event/CUPTI':>12s}")
    for name, d, e in sorted(rows):
        print(f"{name:70s} {d / 1e3:10.2f} {e / 1e3:10.2f} {e / d:12.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
