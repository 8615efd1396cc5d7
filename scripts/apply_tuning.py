#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Apply a tuning record to exported bundles that list their declared variants, without
re-exporting: per configuration the record names, that variant becomes the chosen plan (the
cubins are the exporter's own; only manifest.json is rewritten, through a new file, so a
hard-linked copy of the bundle keeps its manifest). Equivalent to exporting with --tuning RECORD
when the bundle was exported with every variant (no --chosen-only).

    scripts/apply_tuning.py RECORD.json BUNDLES_DIR... [--strict]

Prints per bundle how many configurations changed; a choice for a configuration that does not
declare the variant is an error (exit 1), a choice for a configuration the bundles lack is
counted (with --strict an error).
"""
import argparse
import json
import os
import sys

import tuning_record


def manifests(dirs):
    for d in dirs:
        for root, _, files in os.walk(d):
            if "manifest.json" in files:
                yield os.path.join(root, "manifest.json")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("record")
    p.add_argument("bundles", nargs="+")
    p.add_argument("--strict", action="store_true", help="a choice no bundle has is an error")
    args = p.parse_args()
    try:
        choices = tuning_record.load_choices(args.record)
    except tuning_record.RecordError as e:
        print(f"apply_tuning: {e}", file=sys.stderr)
        return 2
    used = set()
    for path in sorted(manifests(args.bundles)):
        m = json.load(open(path))
        op, changed = m.get("operator"), 0
        for c in m.get("configs", []):
            k = (op, tuning_record.params_key(c["params"]))
            if k not in choices:
                continue
            used.add(k)
            try:
                changed += tuning_record.choose(c, choices[k], f"tuning record {os.path.basename(args.record)}")
            except tuning_record.RecordError as e:
                print(f"apply_tuning: {path}: {op} {e}", file=sys.stderr)
                return 1
        if changed:
            tmp = path + ".tmp"
            json.dump(m, open(tmp, "w"), indent=1)
            os.replace(tmp, path)
        print(f"{path}: {changed} of {len(m.get('configs', []))} configurations take the record's variant")
    missing = set(choices) - used
    if missing:
        print(f"apply_tuning: {len(missing)} choices of {args.record} name configurations these bundles lack",
              file=sys.stderr)
        if args.strict:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
