#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Diagnoses the slowest configurations of a results file (e.g. one the H200 wrote) and prints
# their top findings, one block per configuration. The full reports are kept next to the file:
# RESULTS.diagnose.md and RESULTS.diagnose.json. CPU only: run it here or on the GPU host.
#
#   scripts/diagnose_slow.sh RESULTS.h5 [N] [-- more `portbench diagnose` options]
#
# N (default 10): how many of the slowest configurations below the gate to show. Run it from
# the repository root the run was made in (the results file's --ref/--port folders are resolved
# against it), or pass `-- --bundles DIR` where the bundles lie now. $PORTBENCH picks the binary
# (default: build/gpu, else build/ci-cpu, else build/dev).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
results="${1:?usage: diagnose_slow.sh RESULTS.h5 [N] [-- diagnose options]}"
shift
n=10
if [[ $# -gt 0 && "$1" != "--" ]]; then n="$1"; shift; fi
[[ "${1:-}" == "--" ]] && shift
[[ -f "$results" ]] || { echo "diagnose_slow: $results: no such file" >&2; exit 2; }

pb="${PORTBENCH:-}"
for b in "$ROOT/build/gpu" "$ROOT/build/ci-cpu" "$ROOT/build/dev"; do
  [[ -z "$pb" && -x "$b/harness/cli/portbench" ]] && pb="$b/harness/cli/portbench"
done
[[ -n "$pb" ]] || { echo "diagnose_slow: no portbench built (set PORTBENCH)" >&2; exit 2; }

stem="${results%.h5}"
"$pb" diagnose "$results" --sass-limit "$n" "$@" --format json --out "$stem.diagnose.json"
"$pb" diagnose "$results" --sass-limit "$n" "$@" --out "$stem.diagnose.md"
python3 - "$stem.diagnose.json" "$n" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
dev = doc["device"]
print(f"diagnose: {doc['verdict']} | {doc['file']} | {dev['name']}, {dev['sm_count']} SMs, "
      f"copy {dev['copy_bandwidth_gbps']:.0f} GB/s ({dev['copy_source']})")
print(f"{len(doc['configs'])} of {doc['configs_in_file']} configurations selected ({doc['selection']}); "
      f"showing the {min(n, len(doc['configs']))} slowest")
for note in doc["notes"]:
    print(f"  note: {note}")
for i, c in enumerate(doc["configs"][:n], 1):
    ir = c["ir_diff"]["verdict"] or "n/a"
    print(f"\n{i:2d}. {c['ratio']:.3f}  {c['config']}  [ir-diff {ir}]")
    for side in ("reference", "port"):
        s = c[side]
        if s["problem"]:
            print(f"      {side}: not diagnosed: {s['problem']}")
    if not c["findings"]:
        print("      no finding")
    for f in c["findings"][:3]:
        print(f"      {f['tag']:<22s} {f['evidence']}")
print(f"\nfull reports: {sys.argv[1][:-5]}.md, {sys.argv[1]}")
PY
