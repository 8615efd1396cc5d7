#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Instruction counts of a cubin's main loop, for comparing kernel variants' steps.

    kernels/cutile_rust/tools/sass_loop_stats.py CUBIN [CUBIN ...]

Disassembles each cubin with nvdisasm (NVDISASM, else the pinned Triton wheel's in .venv) and
prints, for its three longest loops, the address range, the instruction count and the counts of
the instructions that shape a step (barriers, shuffles, shared-memory traffic, f32 arithmetic,
TMA and mbarrier waits, local memory). A loop is a backward branch to a label; the retry
branches of the TMA wait loops (`NANOSLEEP` just before them) jump back into the loop from past
its end and are not loops of their own, so they are skipped: counting them takes the wait code in.
"""
import collections
import os
import re
import subprocess
import sys

KINDS = ["BAR.SYNC", "SHFL", "LDS", "STS", "FFMA", "FMUL", "FADD", "MUFU", "UTMALDG", "UTMASTG", "TRYWAIT", "LDL", "STL"]


def nvdisasm():
    if os.environ.get("NVDISASM"):
        return os.environ["NVDISASM"]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    return os.path.join(root, ".venv/lib/python3.11/site-packages/triton/backends/nvidia/bin/nvdisasm")


def instructions(text):
    """(address, instruction) pairs, and the address of each label's first instruction."""
    code, labels, pending = [], {}, []
    for line in text.splitlines():
        m = re.match(r"\s*\.L_x_(\d+):", line)
        if m:
            pending.append(m.group(1))
            continue
        m = re.match(r"\s+/\*([0-9a-f]+)\*/\s+(.*?);", line)
        if m:
            addr = int(m.group(1), 16)
            code.append((addr, m.group(2)))
            for name in pending:
                labels[name] = addr
            pending = []
    return code, labels


def loops(code, labels):
    """(start, end) of each backward branch that is not a wait loop's retry, longest first."""
    out = []
    for i, (addr, ins) in enumerate(code):
        m = re.search(r"BRA.*?\.L_x_(\d+)", ins)
        if not m or labels.get(m.group(1), addr) >= addr:
            continue
        if any("NANOSLEEP" in x for _, x in code[max(0, i - 3):i]):
            continue
        out.append((labels[m.group(1)], addr))
    return sorted(out, key=lambda r: r[0] - r[1])


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        try:
            run = subprocess.run([nvdisasm(), "-c", path], capture_output=True, text=True)
        except OSError as e:
            sys.exit(f"{path}: cannot run nvdisasm ({e})")
        if run.returncode != 0:
            sys.exit(f"{path}: nvdisasm failed: {run.stderr.strip()}")
        code, labels = instructions(run.stdout)
        print(path)
        for start, end in loops(code, labels)[:3]:
            body = [ins for addr, ins in code if start <= addr <= end]
            c = collections.Counter(k for ins in body for k in KINDS if k in ins)
            print(f"  loop {start:#x}-{end:#x}: {len(body)} instructions, " + ", ".join(f"{k} {c[k]}" for k in KINDS if c[k]))


if __name__ == "__main__":
    main()
