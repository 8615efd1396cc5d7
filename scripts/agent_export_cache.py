#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Exports made ahead of time for the agent's retune stage, for a GPU host that cannot run the
exporter (the cuTile Rust exporter needs tileiras and the cutile-rs crates, which stay here).

  prepare (here):   agent_export_cache.py prepare JOB.json CACHE
      exports every configuration of the job once per tuning candidate of its retune stage
      ("overrides") and once with the exporter's own choices ("default"), with the job's
      port.exporter, into CACHE/<candidate>/, and writes CACHE/index.json. --from DIR takes
      the default from an export made already (a job without overrides: its candidates are
      the bundle's declared variants).
  serve (there):    agent_export_cache.py serve CACHE --suite S --out OUT
      what retune calls as its exporter: assembles OUT/<op>/manifest.json (+ the cubins and IR
      files it names) from the cached bundles, per suite entry the one exported with that
      entry's "tuning" (none: "default"). An entry the cache lacks fails with its id. With
      --tuning REC (retune's {tuning}), a configuration the record names gets that declared
      variant as its chosen plan, as the exporter's own --tuning does; for that the default
      export must list the variants (an exporter run without --chosen-only).

The job's exporter for the GPU host is then
  ["python3", "{root}/scripts/agent_export_cache.py", "serve", "CACHE", "--suite", "{suite}", "--out", "{out}"]
and the prepare step reads the real exporter from the "export" job (same job, see docs/agent.md)."""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import tuning_record


def canon(tuning):
    return json.dumps(tuning or {}, sort_keys=True)


def job_configs(job, job_dir):
    root = os.path.normpath(os.path.join(job_dir, job.get("root", ".")))
    if "suite" in job:
        suite = json.load(open(os.path.join(root, job["suite"])))
        return root, [c for c in suite["configs"] if c["op"] == job["operator"]]
    return root, [dict(c, op=job["operator"]) for c in job["configs"]]


def prepare(args):
    job = json.load(open(args.job))
    root, configs = job_configs(job, os.path.dirname(os.path.abspath(args.job)))
    exporter = args.exporter and json.loads(args.exporter) or job["port"].get("exporter")
    if not exporter and not args.from_bundle:
        print(f"agent_export_cache: {args.job}: port.exporter is missing (or pass --exporter)", file=sys.stderr)
        return 2
    overrides = job["stages"]["translate"].get("overrides", {})
    os.makedirs(args.cache, exist_ok=True)
    index = {}
    if args.from_bundle:
        # An export made already (with its variants) is the default candidate: no second export.
        if overrides:
            print(f"agent_export_cache: {args.job}: --from serves the default only, but the job lists overrides "
                  f"({', '.join(sorted(overrides))})", file=sys.stderr)
            return 2
        bundle = find_bundle(args.from_bundle, job["operator"])
        if bundle is None:
            print(f"agent_export_cache: {args.from_bundle}: no {job['operator']} bundle (manifest.json)", file=sys.stderr)
            return 2
        out = os.path.join(args.cache, "default", job["operator"])
        shutil.rmtree(os.path.join(args.cache, "default"), ignore_errors=True)
        shutil.copytree(bundle, out, copy_function=os.link)
        print(f"cached default: {out} (from {bundle})")
        overrides, index = {}, {"default": {}}
    for name, tuning in ([] if args.from_bundle else [("default", None)]) + sorted(overrides.items()):
        out = os.path.join(args.cache, name)
        shutil.rmtree(out, ignore_errors=True)
        suite_file = os.path.join(args.cache, f"{name}.suite.json")
        entries = [dict({k: v for k, v in c.items() if k != "tuning"}, **({"tuning": tuning} if tuning else {}))
                   for c in configs]
        json.dump({"suite": f"cache-{name}", "configs": entries}, open(suite_file, "w"), indent=1)
        argv = [a.replace("{suite}", suite_file).replace("{out}", out).replace("{root}", root) for a in exporter]
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"agent_export_cache: {name}: the exporter failed: {r.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return 1
        index[name] = tuning or {}
        print(f"cached {name}: {out}")
    json.dump({"schema": "portbench.agent-export-cache/1", "operator": job["operator"], "candidates": index},
              open(os.path.join(args.cache, "index.json"), "w"), indent=1)
    return 0


def find_bundle(folder, op):
    if os.path.exists(os.path.join(folder, "manifest.json")):
        return folder
    candidate = os.path.join(folder, op)
    return candidate if os.path.exists(os.path.join(candidate, "manifest.json")) else None


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def serve(args):
    index = json.load(open(os.path.join(args.cache, "index.json")))
    op = index["operator"]
    by_tuning = {canon(t): name for name, t in index["candidates"].items()}
    suite = json.load(open(args.suite))
    try:
        chosen = tuning_record.load_choices(args.tuning) if args.tuning else {}
    except tuning_record.RecordError as e:
        print(f"agent_export_cache: {e}", file=sys.stderr)
        return 1
    manifests = {}
    out_dir = os.path.join(args.out, op)
    tmp = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(args.out)) or ".")
    top, configs, cubins, files = None, [], {}, {}
    for entry in suite["configs"]:
        name = by_tuning.get(canon(entry.get("tuning")))
        if name is None:
            print(f"agent_export_cache: {args.suite}: tuning {canon(entry.get('tuning'))} is not in the cache "
                  f"{args.cache} (prepare it with the job's overrides)", file=sys.stderr)
            return 1
        if name not in manifests:
            bundle = find_bundle(os.path.join(args.cache, name), op)
            manifests[name] = (bundle, json.load(open(os.path.join(bundle, "manifest.json"))) if bundle else None)
        bundle, manifest = manifests[name]
        plan = next((c for c in (manifest or {}).get("configs", []) if c["params"] == entry["params"]), None)
        if plan is None:
            # The exporter skipped it for this candidate (as it may for a tile over a limit).
            print(f"skip {op} {json.dumps(entry['params'], sort_keys=True)}: not exported with {name}", file=sys.stderr)
            continue
        top = top or manifest
        plan = json.loads(json.dumps(plan))
        variant = chosen.get((op, tuning_record.params_key(entry["params"])))
        if variant is not None:
            # The record picks one of the exporter's declared variants: it becomes the chosen plan.
            try:
                tuning_record.choose(plan, variant, f"tuning record {args.tuning}")
            except tuning_record.RecordError as e:
                print(f"agent_export_cache: {args.tuning}: {op} {e}", file=sys.stderr)
                return 1
        for launch in plan.get("launches", []) + [l for v in plan.get("variants", []) for l in v["launches"]]:
            if "cubin" not in launch:   # a fill or copy step
                continue
            ref = next(c for c in manifest["cubins"] if c["file"] == launch["cubin"])
            key = launch["cubin"]
            if key in cubins and cubins[key]["sha256"] != ref["sha256"]:
                key = f"{name}-{launch['cubin']}"   # same name, other code: keep both
            if key not in cubins:
                cubins[key] = dict(ref, file=key, ir=[f"{name}-{i}" if key != ref["file"] else i for i in ref.get("ir", [])])
                files[key] = os.path.join(bundle, ref["file"])
                for i, ir in enumerate(ref.get("ir", [])):
                    files[cubins[key]["ir"][i]] = os.path.join(bundle, ir)
            launch["cubin"] = key
        configs.append(plan)
    if top is None:
        print(f"agent_export_cache: {args.suite}: no configuration in the cache", file=sys.stderr)
        return 1
    os.makedirs(os.path.join(tmp, op))
    for dest, src in files.items():
        shutil.copyfile(src, os.path.join(tmp, op, dest))
        if dest in cubins and sha256(os.path.join(tmp, op, dest)) != cubins[dest]["sha256"]:
            print(f"agent_export_cache: {src}: sha256 differs from its manifest", file=sys.stderr)
            return 1
    manifest = dict(top, configs=configs, cubins=list(cubins.values()))
    json.dump(manifest, open(os.path.join(tmp, op, "manifest.json"), "w"), indent=1)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(args.out, exist_ok=True)
    os.rename(os.path.join(tmp, op), out_dir)
    os.rmdir(tmp)
    print(f"exported {op}: {len(configs)} configs from the cache -> {out_dir}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("prepare")
    a.add_argument("job")
    a.add_argument("cache")
    a.add_argument("--exporter", help="JSON argv of the real exporter (default: the job's port.exporter)")
    a.add_argument("--from", dest="from_bundle", metavar="DIR",
                   help="take the default candidate from this export (the operator's bundle, or a folder holding "
                        "it) instead of exporting it: for a job without overrides whose candidates are the "
                        "bundle's declared variants")
    b = sub.add_parser("serve")
    b.add_argument("cache")
    b.add_argument("--suite", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--tuning", help="a tuning record (portbench.tuning-record/1): per configuration the declared "
                   "variant that becomes its chosen plan (retune's {tuning}); the cache's default export must "
                   "list the variants (exported without --chosen-only)")
    args = p.parse_args()
    return prepare(args) if args.cmd == "prepare" else serve(args)


if __name__ == "__main__":
    sys.exit(main())
