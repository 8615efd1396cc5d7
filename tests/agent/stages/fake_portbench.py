#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Stands in for the GPU part of portbench in the retune test (this machine has no GPU):
`run ... --port DIR --suite S --out O` records what it was asked, and `report O --format json`
prints a portbench.report/1 document (the shape `portbench report` prints) whose ratio per
configuration depends on the tile the port bundle's manifest records, through the table in
FAKE_RATIOS ({"<tile>": ratio, "default": ratio}). Every call is appended to FAKE_PORTBENCH_LOG.
Any other subcommand exits 2, as portbench does for bad usage."""
import json
import os
import sys

args = sys.argv[1:]
with open(os.environ["FAKE_PORTBENCH_LOG"], "a") as log:
    log.write(json.dumps(args) + "\n")


def opt(name):
    return args[args.index(name) + 1] if name in args else None


def config_id(op, params):
    def text(v):
        return ("true" if v else "false") if isinstance(v, bool) else str(v)
    return op + "/" + ",".join(f"{k}={text(params[k])}" for k in sorted(params))


if args[0] == "run":
    json.dump({"port": opt("--port"), "suite": opt("--suite")}, open(opt("--out"), "w"))
    sys.exit(0)
if args[0] == "report" and opt("--format") == "json":
    run = json.load(open(args[1]))
    manifest = json.load(open(os.path.join(run["port"], "manifest.json")))
    ratios = json.loads(os.environ["FAKE_RATIOS"])
    rows = []
    for c in json.load(open(run["suite"]))["configs"]:
        plan = next((m for m in manifest["configs"] if m["params"] == c["params"]), None)
        if plan is None:
            continue
        tile = plan["tuning"].get("tile_n", plan["tuning"].get("tile"))
        ratio = ratios.get(str(tile), ratios["default"])
        side = {"frontend": "x", "runs": 1, "timed_runs": 1, "numerics": "PASS", "proof": "EXECUTED", "errors": []}
        rows.append({"id": config_id(c["op"], c["params"]), "operator": c["op"], "paired": True, "ratio": ratio,
                     "reference": dict(side, best_ns=1000.0), "port": dict(side, best_ns=1000.0 / ratio)})
    print(json.dumps({"schema": "portbench.report/1", "verdict": "BELOW_GATE", "reason": "fake",
                      "overall": {"configs": len(rows), "paired": len(rows),
                                  "geomean": {"estimate": 1.0, "low": 0.9, "high": 1.1}},
                      "configs": rows}))
    sys.exit(0)
print(f"portbench: error: {args[0]}: not available in the fake (no GPU here)", file=sys.stderr)
sys.exit(2)
