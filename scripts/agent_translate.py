#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A translate stage around any coding agent's command line (docs/agent.md, "A coding agent
as translate"). The agent edits the port's source; this wrapper, not the agent, exports the
port and writes the stage output, so the verdict comes from the exporter's exit status.

    agent_translate.py AGENT ARGV...

In AGENT's argv, {prompt} becomes the task text and {prompt_file} a file holding it; the
router's placeholders ({root}, {port_source}, ...) are expanded before this runs. The task
names the port's source, the failing configurations (WORKDIR/failing.json: numerics verdict and
errors, proof, ratio, diagnose findings) and the previous stage outputs. Then the job's
exporter runs on the job's suite into WORKDIR/translate/<seq>/port (the bundle the later stages
verify and time must cover every configuration of the job), and the output is COMPILED with that bundle, FAIL_COMPILE with
the exporter's last error line, or FAIL_FIXABLE when the agent itself exited nonzero.
Environment: the stage's own (PORTBENCH_AGENT_CONTEXT and the job's whitelist).
"""
import json
import os
import subprocess
import sys


def main() -> int:
    args = sys.argv[1:]
    if not args:
        print("usage: agent_translate.py AGENT ARGV...", file=sys.stderr)
        return 2
    ctx = json.load(open(os.environ["PORTBENCH_AGENT_CONTEXT"]))
    scratch = os.path.join(ctx["scratch"], str(ctx["seq"]))
    os.makedirs(scratch, exist_ok=True)
    failing = json.load(open(ctx["failing"]))

    lines = [f"You are the translate stage of a portbench agent pipeline for operator {ctx['operator']}.",
             f"Change the port's source ({ctx['port_source'] or 'see the job'}, front end {ctx['port_frontend']}) so that",
             f"every configuration passes numerics and proof and reaches {ctx['gate']} x the reference's speed",
             f"(reference bundle {ctx['reference_bundle']}). Do not export or run benchmarks: the pipeline does.",
             f"Attempt {ctx['attempt']}."]
    if failing["configs"]:
        lines.append("Failing configurations (from WORKDIR/failing.json):")
        for c in failing["configs"]:
            err = c.get("numerics_error") or {}
            lines.append(f"- {c['id']}: numerics {c.get('numerics')} (max abs {err.get('max_abs_err')}, "
                         f"max rel {err.get('max_rel_err')}, {err.get('error') or ''}), proof {c.get('proof')}, "
                         f"ratio {c.get('ratio')}")
            for f in c.get("findings", []):
                lines.append(f"    finding {f['tag']}: {f.get('evidence', '')}")
    else:
        lines.append("No configuration has failed yet: make the first version of the port.")
    for stage, path in sorted(ctx["last_outputs"].items()):
        lines.append(f"Last {stage} output: {path}")
    prompt = "\n".join(lines) + "\n"
    prompt_file = os.path.join(scratch, "prompt.md")
    open(prompt_file, "w").write(prompt)

    argv = [a.replace("{prompt_file}", prompt_file).replace("{prompt}", prompt) for a in args]
    agent = subprocess.run(argv, stdin=subprocess.DEVNULL)
    out = {"stage": "translate", "files": [os.path.relpath(prompt_file, ctx["workdir"])]}

    def write(verdict, reason, **fields):
        json.dump({"verdict": verdict, **out, "reason": reason, **fields}, open(ctx["output"], "w"), indent=1)

    if agent.returncode != 0:
        write("FAIL_FIXABLE", f"the coding agent exited with status {agent.returncode}")
        return 0
    suite = ctx["suite"]
    port = os.path.join(scratch, "port")
    record = os.path.join(scratch, "tuning.json")
    json.dump({"schema": "portbench.tuning-record/1", "frontend": ctx["port_frontend"], "made_by": "agent_translate.py",
               "choices": []}, open(record, "w"))
    exporter = [a.replace("{suite}", suite).replace("{out}", port).replace("{tuning}", record).replace("{root}", ctx["root"])
                for a in ctx["exporter"]]
    if not exporter:
        write("BLOCKED", "the job names no port.exporter")
        return 0
    export = subprocess.run(exporter, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(export.stderr)
    if export.returncode != 0:
        last = [line for line in export.stderr.splitlines() if line.strip()]
        write("FAIL_COMPILE", f"the exporter exited with status {export.returncode}: {last[-1] if last else ''}")
        return 0
    bundle = port if os.path.exists(os.path.join(port, "manifest.json")) else os.path.join(port, ctx["operator"])
    if not os.path.exists(os.path.join(bundle, "manifest.json")):
        write("FAIL_COMPILE", f"the exporter wrote no bundle of {ctx['operator']} below {port}")
        return 0
    write("COMPILED", "the coding agent changed the port; exported every configuration",
          bundle=os.path.relpath(bundle, ctx["workdir"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
