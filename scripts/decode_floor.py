#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What any kernel reaches on this GPU when it moves a decode configuration's minimum bytes, with
a cold, clean L2 as portbench times (a buffer of twice the L2 read before every repetition). Per byte
count B, the median device time (torch.profiler, CUPTI underneath) of
  copy     one copy moving B bytes (B/2 read, B/2 written): the yardstick's own operation
  read     one kernel reading B bytes (a sum; it writes a few bytes)
  read+1   that read and a second, one-element kernel: the floor of a two-kernel plan (a pass
           and its reduce), whose device time portbench sums
  searched (--search) the fastest read+1 over read_search.py's launch shapes (Triton kernels of
           several block sizes, warps and grids, each checked to read every element): torch's
           sum picks one grid for every size, so a tuned plan can beat it
and each as a share of the large copy's bandwidth (the issue's 80% figure).

With --json PATH the times also go to PATH, {NAME: {"bytes", "copy_us", "read_us",
"read_plus_one_us"}, and with --search "searched_read_plus_one_us" and "searched_shape"}, for
bandwidth_table.py --floor (each configuration against a copy of its own bytes). NAME may hold
'=' (a configuration id): the bytes follow the last one.

Usage: decode_floor.py [--json PATH] [--search] COPY_GBPS NAME=BYTES ...   (on the GPU host)"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

REPS = 20
# The floor matters for small transfers; above this a copy is the large copy itself, and torch splits
# a sum of more than 2**31 elements into several kernels, which the kernel count below rejects.
MAX_BYTES = 1 << 30


def device_times(steps, flush, kernels_per_rep):
    """Per step, the median over REPS of the summed device time (us) of the kernels it launches,
    each repetition after `flush` (one kernel, dropped by its place in the order). All steps run
    in one profiler session, one after another."""
    for step in steps:
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for step in steps:
            for _ in range(REPS):
                flush()
                step()
        torch.cuda.synchronize()
    # Memsets are torch's own (a large sum's semaphore), not work of the step.
    events = sorted((e for e in prof.events() if e.device_type.name == "CUDA" and e.device_time > 0
                     and not e.name.startswith("Memset")), key=lambda e: e.time_range.start)
    per = 1 + kernels_per_rep
    if len(events) != len(steps) * REPS * per:
        raise SystemExit(f"decode_floor: the profiler saw {len(events)} kernels, expected {len(steps) * REPS * per}: "
                         + ", ".join(sorted({e.name[:60] for e in events})))
    medians = []
    for first in range(0, len(events), REPS * per):
        sums = sorted(sum(e.device_time for e in events[i + 1:i + per]) for i in range(first, first + REPS * per, per))
        medians.append(sums[len(sums) // 2])
    return medians


def searched_read_plus_one(whole, tiny, flush):
    """The fastest read-and-one-element plan over read_search's shapes: (us, shape). Each shape
    first runs once into NaN-filled partials, whose total must match torch's sum of `whole`."""
    import read_search
    # Triton vectorizes the masked loads (16-byte) only for a length it sees divisible by 16;
    # dropping the last few elements (under 32 bytes) only makes the floor faster.
    whole = whole[:max(16, whole.numel() - whole.numel() % 16)]
    sm_count = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = read_search.shapes()
    partials = torch.empty(max(s.grid(whole.numel(), sm_count) for s in shapes), dtype=torch.float32, device="cuda")
    want = torch.sum(whole, dtype=torch.float64).item()
    scale = torch.sum(whole.abs(), dtype=torch.float64).item()
    for shape in shapes:
        partials.fill_(float("nan"))
        grid = read_search.launch(shape, whole, partials, sm_count)
        got = torch.sum(partials[:grid], dtype=torch.float64).item()
        if not abs(got - want) <= 1e-4 * scale:
            raise SystemExit(f"decode_floor: read shape '{shape}' summed {got}, torch {want}: it did not read every element")
    steps = [lambda s=s: (read_search.launch(s, whole, partials, sm_count), torch.neg(tiny, out=tiny)) for s in shapes]
    times = device_times(steps, flush, 2)
    best = min(range(len(shapes)), key=times.__getitem__)
    return times[best], shapes[best]


def parse_cases(args):
    """NAME=BYTES arguments as (name, bytes); exits with the usage on a malformed one."""
    cases = []
    for arg in args:
        name, _, moved = arg.rpartition("=")
        if not name or not moved.isdigit() or int(moved) < 1:
            sys.exit(f"decode_floor.py: '{arg}' is not NAME=BYTES with a positive byte count")
        cases.append((name, int(moved)))
    return cases


def main(argv):
    json_path, search = None, False
    while argv[:1] in (["--json"], ["--search"]):
        if argv[0] == "--search":
            search, argv = True, argv[1:]
        elif len(argv) < 2:
            sys.exit("decode_floor.py: --json needs a path")
        else:
            json_path, argv = argv[1], argv[2:]
    if len(argv) < 2:
        sys.exit(__doc__)
    copy_gbps = float(argv[0])
    cases = parse_cases(argv[1:])
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    # As portbench's sampler flushes (harness/measure/l2_flush.hpp): a read of twice the L2, which
    # leaves it cold and clean.
    flush_buf = torch.ones(2 * l2 // 4, dtype=torch.float32, device="cuda")
    flush_out = torch.empty((), dtype=torch.float32, device="cuda")
    flush = lambda: torch.sum(flush_buf, dim=0, out=flush_out)  # noqa: E731
    tiny = torch.ones(1, device="cuda")
    print(f"L2 {l2 >> 20} MiB, copy bandwidth {copy_gbps:.0f} GB/s; 80% of it in us per case")
    print(f"{'case':28s} {'MB':>7s} {'80% us':>7s} {'copy us':>8s} {'%':>6s} {'read us':>8s} {'%':>6s} {'read+1 us':>9s} {'%':>6s}"
          + (f" {'searched us':>11s} {'%':>6s}  fastest shape" if search else ""))
    floor = {}
    for name, moved in cases:
        if moved > MAX_BYTES:
            print(f"{name:28s} {moved / 1e6:7.1f} skipped: above {MAX_BYTES >> 20} MiB, as large as the copy bandwidth's own")
            continue
        # Random halves: no all-zero data, and the sum reads every byte.
        half = torch.randn(max(1, moved // 2 // 2), dtype=torch.float16, device="cuda")
        dst = torch.empty_like(half)
        whole = torch.randn(max(1, moved // 2), dtype=torch.float16, device="cuda")
        out = torch.empty((), dtype=torch.float32, device="cuda")
        read = lambda: torch.sum(whole, dim=0, dtype=torch.float32, out=out)  # noqa: E731
        copy_us, = device_times([lambda: dst.copy_(half)], flush, 1)
        read_us, = device_times([read], flush, 1)
        both_us, = device_times([lambda: (read(), torch.neg(tiny, out=tiny))], flush, 2)
        bound_us = moved / (0.8 * copy_gbps * 1e3)
        pct = lambda us: 100.0 * moved / (us * 1e3) / copy_gbps  # noqa: E731
        floor[name] = {"bytes": moved, "copy_us": copy_us, "read_us": read_us, "read_plus_one_us": both_us}
        searched = ""
        if search:
            best_us, shape = searched_read_plus_one(whole, tiny, flush)
            floor[name].update(searched_read_plus_one_us=best_us, searched_shape=str(shape))
            searched = f" {best_us:11.2f} {pct(best_us):6.1f}  {shape}"
        print(f"{name:28s} {moved / 1e6:7.1f} {bound_us:7.2f} {copy_us:8.2f} {pct(copy_us):6.1f} {read_us:8.2f} "
              f"{pct(read_us):6.1f} {both_us:9.2f} {pct(both_us):6.1f}{searched}", flush=True)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(floor, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
