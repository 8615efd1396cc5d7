#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Times `portbench diagnose` on a 100-configuration results file whose provenance names real
# bundles (the TileGym suite's cuTile Python -> cuTile Rust pairs), with every configuration
# planted below the gate: the worst case, all 100 diagnosed (about 200 cubins to disassemble).
# Runs: SASS for the default 16 slowest and for all 100, each with the cache cold then warm, and
# --no-sass. CPU only.
#
#   scripts/time_diagnose.sh [BUNDLES [BUILD_DIR]]
#
# BUNDLES holds cutile_python/ and cutile_rust/ bundles of configs/tilegym.json (default
# bundles-tilegym; exported here when missing, a few minutes). BUILD_DIR default build/ci-cpu.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUNDLES="${1:-bundles-tilegym}"
BUILD="${2:-build/ci-cpu}"
PB="$BUILD/harness/cli/portbench"
SYNTH="$BUILD/tests/cli/results/portbench_synth_results"
[[ -x "$PB" && -x "$SYNTH" ]] || { echo "time_diagnose: build $BUILD first (portbench, portbench_synth_results)" >&2; exit 2; }

if [[ ! -d "$BUNDLES/cutile_python" || ! -d "$BUNDLES/cutile_rust" ]]; then
  echo "[time_diagnose] exporting configs/tilegym.json (cuTile Python, cuTile Rust) into $BUNDLES"
  CUDA_VISIBLE_DEVICES="" PYTHONPATH="$ROOT/kernels/export" \
    .venv/bin/python -m portbench_export.cutile_python --suite configs/tilegym.json --out "$BUNDLES/cutile_python" >/dev/null
  bash kernels/cutile_rust/export.sh configs/tilegym.json "$BUNDLES/cutile_rust" >/dev/null
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$SYNTH" "$WORK/tilegym100.h5" --bundles "$BUNDLES" --configs 100 --runs 4 --slow . --slow-speed 0.5 >/dev/null
configs=$("$PB" diagnose "$WORK/tilegym100.h5" --no-sass --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["configs"]))')
echo "[time_diagnose] $configs configurations below the gate, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

run() {   # label, then diagnose arguments
  local label="$1"; shift
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$WORK/cpu" "$PB" diagnose "$WORK/tilegym100.h5" "$@" > "$WORK/out.md"
  end=$(date +%s.%N)
  read -r user sys < "$WORK/cpu"
  printf '[time_diagnose] %-22s wall %6.1f s  (cpu user %.1f s, sys %.1f s)  %s\n' "$label" \
    "$(echo "$end - $start" | bc)" "$user" "$sys" "$(grep -m1 '^- SASS' "$WORK/out.md" | cut -c3-120)"
}
run "cache cold, default" --sass-cache "$WORK/sass"          # SASS for the 16 slowest (--sass-limit)
run "cache warm, default" --sass-cache "$WORK/sass"
run "cache cold, all 100" --sass-cache "$WORK/sass-all" --sass-limit 0
run "cache warm, all 100" --sass-cache "$WORK/sass-all" --sass-limit 0
run "without SASS" --no-sass
