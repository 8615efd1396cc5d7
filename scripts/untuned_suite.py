# SPDX-License-Identifier: Apache-2.0
"""Writes the configurations of a suite that a tuning record does not choose for: the input of
an export with every candidate and of `portbench tune --suite` for what is left to tune.

    python3 scripts/untuned_suite.py --suite configs/tilegym.json \
        --record configs/tuning/tilegym-h200.json --ops matmul,group_gemm --out build/untuned.json
"""
import argparse
import json
import sys

from tuning_record import RecordError, load_choices, params_key


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--ops", required=True, help="comma-separated operators")
    ap.add_argument("--exclude", default="", help="substring of a params key to leave out")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    try:
        chosen = load_choices(a.record)
        suite = json.load(open(a.suite))
    except (RecordError, OSError, ValueError) as e:
        sys.exit(f"untuned_suite: {e}")
    ops = set(a.ops.split(","))
    unknown = ops - {c["op"] for c in suite.get("configs", [])}
    if unknown:
        sys.exit(f"untuned_suite: {a.suite}: no configurations of {sorted(unknown)}")
    left = [c for c in suite["configs"]
            if c["op"] in ops and (c["op"], params_key(c["params"])) not in chosen
            and not (a.exclude and a.exclude in params_key(c["params"]))]
    out = {"suite": f"{suite.get('suite', 'suite')}-untuned",
           "about": f"configurations of {a.suite} ({', '.join(sorted(ops))}) that {a.record} "
                    "does not choose for (scripts/untuned_suite.py)",
           "configs": left}
    json.dump(out, open(a.out, "w"), indent=1)
    per = {op: sum(c["op"] == op for c in left) for op in sorted(ops)}
    print(f"untuned_suite: {len(left)} configurations -> {a.out} {per}")


if __name__ == "__main__":
    main()
