#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The figure of an agent pipeline, from its work directory (state.json, events.jsonl and the
stage outputs): every stage run with its verdict and duration, the wall time, where it stopped,
what retune changed, and the port/reference ratios of the first and the last benchmark.

    scripts/agent_summary.py WORKDIR [WORKDIR ...]      (Markdown on stdout)"""
import datetime
import json
import os
import sys


def utc(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


def summary(workdir):
    state = json.load(open(os.path.join(workdir, "state.json")))
    job = json.load(open(os.path.join(workdir, "job.json")))
    events = [json.loads(line) for line in open(os.path.join(workdir, "events.jsonl")) if line.strip()]
    out = [f"## {job['name']} ({job['operator']}: {job['port']['frontend']} against {job['reference']['bundle']})", ""]
    end = state["status"] + (f" at {state['stop']['stage']}: {state['stop']['reason']}" if state["stop"] else
                             f": {state.get('reason', '')}")
    starts = [utc(e["utc"]) for e in events if e["event"] in ("pipeline_start", "resume")]
    ends = [utc(e["utc"]) for e in events if e["event"] == "pipeline_end"]
    wall = (ends[-1] - starts[0]).total_seconds() if starts and ends else None
    stage_s = sum(h["seconds"] for h in state["history"])
    out.append(f"- end: {end}")
    out.append(f"- wall time: {wall:.0f} s" if wall is not None else "- wall time: not finished")
    out.append(f"- stage runs: {len(state['history'])}, {stage_s:.0f} s in stages")
    out += ["", "| seq | stage | attempt | verdict | seconds | reason |", "|---|---|---|---|---|---|"]
    benchmarks, changes = [], []
    for h in state["history"]:
        reason = ""
        path = os.path.join(workdir, h["output"])
        doc = json.load(open(path)) if os.path.exists(path) else {}
        try:
            reason = doc.get("reason", "")
        except AttributeError:
            pass
        verdict = h["verdict"] + (f" ({h['fail_class']})" if h["fail_class"] else "") if h["verdict"] else "-"
        out.append(f"| {h['seq']} | {h['stage']}{' (repair)' if h['repair'] else ''} | {h['attempt']} | {verdict} | "
                   f"{h['seconds']:.1f} | {reason[:140]} |")
        if h["stage"] == "benchmark" and doc.get("configs"):
            benchmarks.append(doc)
        if h["stage"] == "translate":
            changes += doc.get("changed", [])
    if changes:
        out += ["", "retune changes:", "", "| configuration | variant | ratio before | ratio after |", "|---|---|---|---|"]
        for c in changes:
            out.append(f"| {c['id']} | {c.get('variant', '')} | {c.get('ratio_before')} | {c.get('ratio_after')} |")
    if benchmarks:
        first, last = benchmarks[0], benchmarks[-1]
        out += ["", f"benchmark geomean (port speed / reference speed): first {first.get('geomean')}, "
                    f"last {last.get('geomean')} (gate {first.get('gate')}, {len(benchmarks)} benchmark runs)", "",
                "| configuration | ratio first | ratio last |", "|---|---|---|"]
        last_by_id = {c["id"]: c for c in last["configs"]}
        for c in first["configs"]:
            after = last_by_id.get(c["id"], {}).get("ratio")
            out.append(f"| {c['id']} | {c.get('ratio')} | {after} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    print("\n".join(summary(w) for w in sys.argv[1:]))
