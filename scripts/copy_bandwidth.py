#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Device-to-device copy bandwidth (read + write bytes over time) with torch on the GPU host:
the yardstick for memory-bound kernels. Prints GB/s."""
import torch

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
print(f"{2 * n / times[len(times) // 2] / 1e9:.1f}")
