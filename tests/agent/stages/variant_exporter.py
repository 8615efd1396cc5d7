#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An exporter that declares tuning variants in its manifest (configs[].variants, the bundle
manifest contract) and picks one per configuration from a tuning record (--tuning FILE,
portbench.tuning-record/1), as the tilegym exporter does; for the retune test.

    variant_exporter.py --suite S --out OUT [--tuning RECORD]   -> OUT/<op>/manifest.json"""
import argparse
import json
import os

p = argparse.ArgumentParser()
p.add_argument("--suite", required=True)
p.add_argument("--out", required=True)
p.add_argument("--tuning")
a = p.parse_args()
record = json.load(open(a.tuning))["choices"] if a.tuning else []
variants = [{"name": f"t{t}", "tuning": {"tile_n": t}} for t in (1024, 256, 512)]
by_op = {}
for c in json.load(open(a.suite))["configs"]:
    pick = next((r for r in record if r["op"] == c["op"] and r["params"] == c["params"]), None)
    name = pick["variant"] if pick else "t1024"
    chosen = next(v for v in variants if v["name"] == name)
    source = "record " + a.tuning if pick else "default: no tuning record; first candidate"
    by_op.setdefault(c["op"], []).append({"params": c["params"],
                                          "tuning": dict(chosen["tuning"], variant=name, tuning_source=source),
                                          "scratch": [], "launches": [], "variants": variants})
for op, configs in by_op.items():
    os.makedirs(os.path.join(a.out, op), exist_ok=True)
    json.dump({"schema": "portbench.bundle/1", "frontend": "variant_test", "operator": op, "arch": "sm_90",
               "toolchain": {}, "cubins": [], "configs": configs},
              open(os.path.join(a.out, op, "manifest.json"), "w"), indent=1)
