# SPDX-License-Identifier: Apache-2.0
"""How a family of variants fared in a tuning record (portbench.tuning-record/1): for each variant
whose name ends in SUFFIX, its sibling's time (the same name without SUFFIX) over its own, per
configuration measured (above 1: the suffixed form is faster); then each configuration whose chosen
variant has SUFFIX, with its margin over the fastest variant without it.

  python3 scripts/variant_suffix_ratio.py RECORD.json _pl
"""
import argparse
import json
import math
import sys
from collections import defaultdict


def times(choice):
    """{variant: best ns} of one configuration: its measured variants that passed, and the
    baseline."""
    t = {m["variant"]: m["best_ns"] for m in choice.get("measured", [])
         if m.get("best_ns") and m.get("numerics") == "PASS"}
    if choice.get("baseline_ns"):
        t.setdefault(choice["baseline"], choice["baseline_ns"])
    return t


def label(choice):
    return choice["op"] + "/" + ",".join(f"{k}={v}" for k, v in sorted(choice["params"].items()))


def suffix_ratios(record, suffix):
    """({variant: [sibling ns / variant ns, ...]}, [(configuration, chosen variant, margin)])."""
    ratios = defaultdict(list)
    chosen = []
    for c in record.get("choices", []):
        t = times(c)
        for v, ns in t.items():
            if v.endswith(suffix) and v[:-len(suffix)] in t:
                ratios[v].append(t[v[:-len(suffix)]] / ns)
        v = c.get("variant", "")
        others = [ns for name, ns in t.items() if not name.endswith(suffix)]
        if v.endswith(suffix) and v in t and others:
            chosen.append((label(c), v, min(others) / t[v]))
    return dict(ratios), chosen


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("record")
    ap.add_argument("suffix")
    a = ap.parse_args(argv)
    try:
        record = json.load(open(a.record))
    except (OSError, ValueError) as e:
        print(f"variant_suffix_ratio: {a.record}: {e}", file=sys.stderr)
        return 2
    if record.get("schema") != "portbench.tuning-record/1":
        print(f"variant_suffix_ratio: {a.record}: schema is {record.get('schema')!r}, "
              "not portbench.tuning-record/1", file=sys.stderr)
        return 2
    ratios, chosen = suffix_ratios(record, a.suffix)
    if not ratios:
        print(f"variant_suffix_ratio: {a.record}: no variant ending in {a.suffix!r} beside its sibling",
              file=sys.stderr)
        return 1
    print(f"{'variant':40s} configs  sibling/variant min    max  geomean")
    for v, r in sorted(ratios.items()):
        geo = math.exp(sum(map(math.log, r)) / len(r))
        print(f"{v:40s} {len(r):7d}  {min(r):20.4f} {max(r):6.4f} {geo:8.4f}")
    print(f"chosen with {a.suffix}: {len(chosen)} of {len(record.get('choices', []))} configurations")
    for cfg, v, margin in chosen:
        print(f"  {v} {margin:.4f} over the fastest without {a.suffix}: {cfg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
