#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The bundles of one tune-and-pair device call, made here without a GPU:
#   build/tune/suite.json          the configurations of configs/tilegym.json of the named operators
#                                  (PORTBENCH_TUNE_FILTER: a python expression over `op` and `p`,
#                                  the params, that keeps a configuration; default all)
#   bundles-tilegym/cutile_rust/OP the port with every tuning variant (PORTBENCH_TUNE_VARIANTS: only
#                                  those matching), choices from the kept record
#   build/tune/edge.json, bundles-tilegym/edge/OP  the exportable configurations of
#                                  kernels/cutile_rust/tests/data/OPS.json (PORTBENCH_TUNE_EDGE names
#                                  that file: odd lengths, padded heads, optional tensors) with every variant
# Then on the host, carrying build/carry/portbench.bin, bundles-tilegym, build/tune and the
# reference folders bundles-corpus/tilegym/OP (scripts/corpus_bundles.sh):
#   PORTBENCH_PREBUILT=build/carry/portbench.bin PORTBENCH_SKIP_TESTS=1 PORTBENCH_SKIP_SWEEP=1 \
#   PORTBENCH_RUST_TUNE=1 PORTBENCH_RUST_TUNE_OPS="OP..." PORTBENCH_TUNE_SUITE=build/tune/suite.json \
#   PORTBENCH_TUNE_APPLY=1 PORTBENCH_PAIRS_SUITE=build/tune/suite.json PORTBENCH_PAIRS_REF="bundles-corpus/tilegym/OP..." \
#   PORTBENCH_PAIRS_PORT="bundles-tilegym/cutile_rust/OP..." PORTBENCH_PAIRS_RUNS=4 \
#   PORTBENCH_VARIANTS_SUITE=build/tune/edge.json PORTBENCH_VARIANTS_DIRS="bundles-tilegym/edge/OP..." bash scripts/device_run.sh
# Usage: scripts/tune_bundles.sh OP...
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ $# -ge 1 ]] || { echo "usage: $0 OP..." >&2; exit 2; }
mkdir -p build/tune
python3 - build/tune/suite.json "${PORTBENCH_TUNE_FILTER:-True}" "$@" <<'PY'
import json, sys
out, keep, ops = sys.argv[1], sys.argv[2], sys.argv[3:]
suite = json.load(open("configs/tilegym.json"))
configs = [c for c in suite["configs"] if c["op"] in ops and eval(keep, {}, {"op": c["op"], "p": c["params"]})]
missing = sorted(set(ops) - {c["op"] for c in configs})
if missing:
    sys.exit(f"configs/tilegym.json: no configuration kept for {', '.join(missing)}")
json.dump({"suite": "tune", "about": f"configs/tilegym.json: {', '.join(ops)} (scripts/tune_bundles.sh)", "configs": configs},
          open(out, "w"), indent=1)
print(f"[tune] {out}: {len(configs)} configurations")
PY
for op in "$@"; do rm -rf "bundles-tilegym/cutile_rust/$op"; done
kernels/cutile_rust/export.sh build/tune/suite.json bundles-tilegym/cutile_rust --tuning configs/tuning/cutile_rust-h200.json \
  | grep -E '^(summary|skip):'
# PORTBENCH_TUNE_VARIANTS: a regular expression of the variant names to keep (the chosen plan is
# always kept): a tune that must reach the longest configurations within its budget skips the
# variants known to lose. Unreferenced cubins go with them.
if [[ -n "${PORTBENCH_TUNE_VARIANTS:-}" ]]; then
  for op in "$@"; do
    python3 - "bundles-tilegym/cutile_rust/$op" "$PORTBENCH_TUNE_VARIANTS" <<'PY'
import json, os, re, sys
d, keep = sys.argv[1], re.compile(sys.argv[2])
path = os.path.join(d, "manifest.json")
m = json.load(open(path))
used, before, after = set(), 0, 0
for c in m["configs"]:
    vs = c.get("variants", [])
    before += len(vs)
    chosen = c["tuning"].get("variant")
    c["variants"] = [v for v in vs if keep.fullmatch(v["name"]) or v["name"] == chosen]
    after += len(c["variants"])
    for x in [c] + c["variants"]:
        used.update(l["cubin"] for l in x["launches"])
for cu in [cu for cu in m["cubins"] if cu["file"] not in used]:
    for f in [cu["file"]] + cu.get("ir", []):
        os.remove(os.path.join(d, f))
m["cubins"] = [cu for cu in m["cubins"] if cu["file"] in used]
json.dump(m, open(path, "w"), indent=1)
print(f"[tune] {d}: {after} of {before} variants kept, {len(m['cubins'])} cubins")
PY
  done
fi
if [[ -n "${PORTBENCH_TUNE_EDGE:-}" ]]; then
  python3 - "$PORTBENCH_TUNE_EDGE" build/tune/edge.json "$@" <<'PY'
import json, sys
src, out, ops = sys.argv[1], sys.argv[2], sys.argv[3:]
configs = [c for c in json.load(open(src))["configs"] if c["op"] in ops]
json.dump({"suite": "tune-edge", "about": f"{src}: {', '.join(ops)} (scripts/tune_bundles.sh)", "configs": configs}, open(out, "w"), indent=1)
print(f"[tune] {out}: {len(configs)} configurations")
PY
  rm -rf bundles-tilegym/edge
  # Configurations the port cannot express are skipped with their reason (the exporter's skip lines).
  kernels/cutile_rust/export.sh build/tune/edge.json bundles-tilegym/edge | grep -E '^(summary|skip):'
fi
du -sh bundles-tilegym
