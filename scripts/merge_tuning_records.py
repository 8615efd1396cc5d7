#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Merge tuning records (portbench.tuning-record/1) of one front end and target, later ones first
in authority: a configuration (op and exact params) chosen by a later record replaces an earlier
choice, and leaves the not_measured lists. `portbench tune` writes one record per call; a device
call tunes a few operators, so the kept record (configs/tuning/<frontend>-<target>.json) grows by
merging. Every record must be of the first one's front end, target and card (`gpu`).

    scripts/merge_tuning_records.py BASE.json NEW.json [NEWER.json ...] -o OUT.json
"""
import argparse
import json
import sys


def key(entry):
    return entry["op"], json.dumps(entry["params"], sort_keys=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("records", nargs="+")
    p.add_argument("-o", "--out", required=True)
    args = p.parse_args()
    merged, notes = None, []
    for path in args.records:
        try:
            rec = json.load(open(path))
        except (OSError, ValueError) as e:
            print(f"merge_tuning_records: {path}: {e}", file=sys.stderr)
            return 2
        if rec.get("schema") != "portbench.tuning-record/1":
            print(f"merge_tuning_records: {path}: schema is {rec.get('schema')!r}, not portbench.tuning-record/1", file=sys.stderr)
            return 2
        if merged is None:
            merged = dict(rec, choices=list(rec.get("choices", [])), not_measured=list(rec.get("not_measured", [])))
        else:
            # A record's choices hold for the card it was measured on (gpu): an H100's timings
            # must not replace the H200's choices.
            for field in ("frontend", "target", "gpu"):
                if rec.get(field) != merged.get(field):
                    print(f"merge_tuning_records: {path}: {field} {rec.get(field)!r} differs from "
                          f"{merged.get(field)!r} of {args.records[0]}", file=sys.stderr)
                    return 2
            new = {key(c) for c in rec.get("choices", [])}
            merged["choices"] = [c for c in merged["choices"] if key(c) not in new] + list(rec.get("choices", []))
            chosen = {key(c) for c in merged["choices"]}
            merged["not_measured"] = [c for c in merged["not_measured"] if key(c) not in chosen] + \
                [c for c in rec.get("not_measured", []) if key(c) not in chosen]
            merged["date"] = rec.get("date", merged.get("date"))
        notes.append(f"{path}: {rec.get('made_by', '?')} ({rec.get('date', '?')})")
    seen = set()
    merged["not_measured"] = [c for c in merged["not_measured"] if not (key(c) in seen or seen.add(key(c)))]
    merged["made_by"] = "scripts/merge_tuning_records.py of: " + "; ".join(notes)
    merged.pop("note", None)
    merged["choices"].sort(key=key)
    json.dump(merged, open(args.out, "w"), indent=1, sort_keys=True)
    print(f"{args.out}: {len(merged['choices'])} choices, {len(merged['not_measured'])} not measured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
