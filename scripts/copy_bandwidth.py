#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Device-to-device copy bandwidth (read + write bytes over time) with torch on the GPU host:
the yardstick for memory-bound kernels.

  copy_bandwidth.py                 GB/s of a 1 GiB copy (CUDA events over the copy), one number
  copy_bandwidth.py --bytes B ...   per size B (bytes moved, read + write): the copy kernel's own
                                    device time (torch.profiler, CUPTI underneath, as portbench
                                    times kernels) and GB/s; what a copy reaches at that size"""
import sys

import torch


def large_copy_gbps() -> float:
    n = 1 << 30                      # 1 GiB each way
    src = torch.empty(n, dtype=torch.uint8, device="cuda").random_(0, 255)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(20):
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    times.sort()
    return 2 * n / times[len(times) // 2] / 1e9


def sized_copy_us(moved: int, reps: int = 50) -> float:
    """Median device time (us) of the copy kernel moving `moved` bytes (half read, half written)."""
    from torch.profiler import ProfilerActivity, profile
    n = max(1, moved // 2 // 4)
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            dst.copy_(src)
        torch.cuda.synchronize()
    times = sorted(e.device_time for e in prof.events() if e.device_type.name == "CUDA" and e.device_time > 0)
    if len(times) < reps // 2:
        raise SystemExit(f"copy_bandwidth: the profiler saw {len(times)} copy kernels of {reps}")
    return times[len(times) // 2]


if __name__ == "__main__":
    if len(sys.argv) == 1:
        print(f"{large_copy_gbps():.1f}")
    elif sys.argv[1] == "--bytes" and len(sys.argv) > 2:
        for arg in sys.argv[2:]:
            us = sized_copy_us(int(arg))
            print(f"copy of {int(arg)} bytes: {us:.2f} us, {int(arg) / us / 1e3:.1f} GB/s")
    else:
        sys.exit(__doc__)
