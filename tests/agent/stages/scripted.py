#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stage for the agent tests: writes the verdict a plan gives for this stage and attempt.

    scripted.py PLAN.json       (the stage, attempt, output, context from PORTBENCH_AGENT_*)

PLAN maps a stage name to a list with one entry per attempt: a verdict string, or an object
{"verdict": ..., "fail_class": ..., "behaviour": ..., "repair": <entry for the repair run>,
 "exit": N, "ratios": [...]}. Behaviours: "prose" (text instead of JSON), "missing" (no
output), "not_first" (verdict not the first field), "outside" (a path that leaves the work
directory), "symlink_out" (a path through a symlink that leaves it), "hang" (sleeps, with a
grandchild, until killed), "wait_for_kill" (writes WORKDIR/started-<stage>.pid, then sleeps).
Every call appends one line to WORKDIR/calls.jsonl: stage, attempt, repair, argv, the names of
the environment variables it got, and the failing configurations it received.
"""
import json
import os
import subprocess
import sys
import time

plan = json.load(open(sys.argv[1]))
env = os.environ
stage = env["PORTBENCH_AGENT_STAGE"]
attempt = int(env["PORTBENCH_AGENT_ATTEMPT"])
repair = env.get("PORTBENCH_AGENT_REPAIR", "")
out_path = env["PORTBENCH_AGENT_OUTPUT"]
workdir = env["PORTBENCH_AGENT_WORKDIR"]
context = json.load(open(env["PORTBENCH_AGENT_CONTEXT"]))
ids = [c["id"] for c in json.load(open(context["configs"]))]
failing = json.load(open(env["PORTBENCH_AGENT_FAILING"]))

with open(os.path.join(workdir, "calls.jsonl"), "a") as log:
    log.write(json.dumps({"stage": stage, "attempt": attempt, "repair": repair, "argv": sys.argv,
                          "cwd": os.getcwd(), "env": sorted(env.keys()),
                          "failing": [{"id": c["id"], "ratio": c.get("ratio"), "numerics": c.get("numerics"),
                                       "findings": [f["tag"] for f in c.get("findings", [])]}
                                      for c in failing["configs"]]}) + "\n")

entries = plan.get(stage, [])
entry = entries[min(attempt, len(entries)) - 1] if entries else "BLOCKED"
if isinstance(entry, str):
    entry = {"verdict": entry}
if repair and "repair" in entry:
    entry = entry["repair"] if isinstance(entry["repair"], dict) else {"verdict": entry["repair"]}
verdict = entry["verdict"]
behaviour = entry.get("behaviour", "")

if behaviour == "hang":
    # A grandchild in the same process group: the timeout must end it too.
    child = subprocess.Popen(["sleep", "300"])
    open(os.path.join(workdir, "hang-child.pid"), "w").write(str(child.pid))
    time.sleep(300)
if behaviour == "wait_for_kill":
    marker = os.path.join(workdir, f"started-{stage}.pid")
    open(marker + ".tmp", "w").write(str(os.getpid()))
    os.rename(marker + ".tmp", marker)
    time.sleep(120)
if behaviour == "missing":
    sys.exit(entry.get("exit", 0))
if behaviour == "prose":
    open(out_path, "w").write(f"The {stage} stage went well, I think the verdict is {verdict}.\n")
    sys.exit(entry.get("exit", 0))

doc = {"verdict": verdict, "stage": stage, "reason": f"scripted {verdict} (attempt {attempt})"}
if "fail_class" in entry:
    doc["fail_class"] = entry["fail_class"]
if stage == "translate" and verdict == "COMPILED":
    bundle = os.path.join("port", f"attempt-{attempt}")
    os.makedirs(os.path.join(workdir, bundle), exist_ok=True)
    open(os.path.join(workdir, bundle, "manifest.json"), "w").write('{"schema": "portbench.bundle/1"}\n')
    doc["bundle"] = bundle
if stage == "analyze":
    doc["configs"] = [{"id": i, "reference_ns": 1000.0, "numerics": "PASS", "proof": "EXECUTED"} for i in ids]
if stage == "ir_diff":
    doc["configs"] = [{"id": i, "verdict": verdict} for i in ids]
if stage == "verify":
    rows = [{"id": i, "numerics": "PASS", "proof": "EXECUTED", "max_abs_err": 0.0, "max_rel_err": 0.0} for i in ids]
    if entry.get("fail_class") == "kernel":
        rows[0].update({"numerics": "FAIL", "max_abs_err": 0.5, "max_rel_err": 0.25, "error": "12 of 1024 elements off"})
    doc["configs"] = rows
if stage == "benchmark":
    ratios = entry.get("ratios", [1.0] * len(ids) if verdict == "DONE" else [0.5] + [1.0] * (len(ids) - 1))
    doc["gate"] = 0.95
    doc["geomean"] = 0.8 if verdict != "DONE" else 1.0
    doc["configs"] = [{"id": i, "ratio": r, "reference_ns": 1000.0, "port_ns": 1000.0 / r if r else None,
                       "numerics": "PASS", "proof": "EXECUTED"} for i, r in zip(ids, ratios)]
if stage == "diagnose":
    doc["findings"] = ([{"config": failing["configs"][0]["id"] if failing["configs"] else ids[0],
                         "tag": "TILE_SHAPE_DIFFERS", "evidence": "ref 1x1024, port 4x256"}]
                       if verdict == "FIXABLE" else [])
if behaviour == "outside":
    doc["files"] = ["../outside.txt"]
    open(os.path.join(workdir, "..", "outside.txt"), "w").write("x")
if behaviour == "symlink_out":
    link = os.path.join(workdir, "escape")
    if not os.path.islink(link):
        os.symlink("/etc", link)
    doc["files"] = ["escape/passwd"]
if behaviour == "not_first":
    doc = {"stage": doc.pop("stage"), **doc}
json.dump(doc, open(out_path, "w"), indent=1)
sys.exit(entry.get("exit", 0))
