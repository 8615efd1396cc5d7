#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A tuning record extended to configurations it has not measured: each configuration of SUITE
that RECORD has no choice for takes the choice of a measured configuration of the same operator
whose parameters differ only in the size keys (--sizes, default m,n,k), the largest such one (by
the product of its sizes). The copied choices carry `transferred_from` (the measured
configuration's parameters), so nobody mistakes them for measurements; configurations with no
such neighbour stay unchosen (their exporter default) and are listed.

Why: tuning the largest GEMMs costs minutes of device time per configuration (matmul 32768^3 in
tf32 runs about 0.2 s a launch), and the reference a port is paired with should not be left at a
default that is known to be poor on the target (tilegym's first candidates: ../shared/docs/
upstream-tilegym.md). A transferred choice is a stronger reference than the default, not a tuned
one; say which it is wherever its figures are reported.

Usage: transfer_tuning.py RECORD SUITE OUT [--sizes m,n,k]"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def rest(params: dict, sizes: tuple[str, ...]) -> str:
    return json.dumps({k: v for k, v in params.items() if k not in sizes}, sort_keys=True)


def volume(params: dict, sizes: tuple[str, ...]) -> int:
    v = 1
    for k in sizes:
        v *= int(params.get(k, 1))
    return v


def transfer(record: dict, suite: dict, sizes: tuple[str, ...]) -> tuple[dict, list[str], list[str]]:
    """The extended record, the ids it transferred and those it could not."""
    choices = record.get("choices")
    if not isinstance(choices, list):
        raise ValueError("the record has no 'choices' array")
    have = {(c["op"], json.dumps(c["params"], sort_keys=True)) for c in choices}
    best: dict[tuple[str, str], dict] = {}
    for c in choices:
        if "transferred_from" in c:
            continue
        k = (c["op"], rest(c["params"], sizes))
        if k not in best or volume(c["params"], sizes) > volume(best[k]["params"], sizes):
            best[k] = c
    out = dict(record)
    out["choices"] = list(choices)
    done, missing = [], []
    for cfg in suite.get("configs", []):
        op, params = cfg["op"], cfg["params"]
        if (op, json.dumps(params, sort_keys=True)) in have:
            continue
        cid = op + "/" + ",".join(f"{k}={params[k]}" for k in sorted(params))
        src = best.get((op, rest(params, sizes)))
        if src is None:
            missing.append(cid)
            continue
        out["choices"].append({"op": op, "params": params, "variant": src["variant"], "transferred_from": src["params"]})
        done.append(cid)
    return out, done, missing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("record")
    ap.add_argument("suite")
    ap.add_argument("out")
    ap.add_argument("--sizes", default="m,n,k")
    a = ap.parse_args()
    try:
        record = json.loads(Path(a.record).read_text())
        suite = json.loads(Path(a.suite).read_text())
        out, done, missing = transfer(record, suite, tuple(a.sizes.split(",")))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"transfer_tuning: {e}", file=sys.stderr)
        return 1
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    for cid in done:
        print(f"transferred: {cid}")
    for cid in missing:
        print(f"no measured neighbour: {cid}")
    print(f"{a.out}: {len(done)} choices transferred, {len(missing)} configurations without a neighbour")
    return 0


if __name__ == "__main__":
    sys.exit(main())
