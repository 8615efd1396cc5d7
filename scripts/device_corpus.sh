#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue-6 figures on the GPU host, after scripts/device_run.sh built the harness: every front
# end's smoke bundles checked, the cuTile Python -> cuTile Rust sweep over the tilegym
# configurations of the exported operators (bundles-tilegym/, from scripts/export_bundles.sh
# configs/tilegym.json bundles-tilegym), the per-operator report, and the achieved bandwidth of
# the largest configurations against the measured copy bandwidth.
# Usage: scripts/device_corpus.sh OUTDIR [RUNS]
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${1:?usage: device_corpus.sh OUTDIR [RUNS]}"
RUNS="${2:-1}"
BIN=build/gpu/harness/cli/portbench
mkdir -p "$OUT"
"$BIN" check bundles/cutile_python bundles/cutile_rust bundles/triton > "$OUT/check_corpus.txt" 2>&1
echo "check exit $?: $(grep -c ' PASS ' "$OUT/check_corpus.txt") PASS, $(grep -cE ' (FAIL|ERROR|NOT_CHECKED|NOT_RUN) ' "$OUT/check_corpus.txt") not"
grep -E ' (FAIL|ERROR|NOT_CHECKED|NOT_RUN) ' "$OUT/check_corpus.txt" | cut -c1-200 | head -20
timeout "${PORTBENCH_CORPUS_TIMEOUT:-300}" "$BIN" run --ref bundles-tilegym/cutile_python --port bundles-tilegym/cutile_rust --suite configs/tilegym.json \
  --runs "$RUNS" --time-cap 0.3 --min-samples 8 --timeout 60 --out "$OUT/corpus.h5" --overwrite > "$OUT/corpus.txt" 2>&1
tail -3 "$OUT/corpus.txt"
"$BIN" report "$OUT/corpus.h5" --format md > "$OUT/corpus_report.md" 2>&1
grep -A12 "^## Operators" "$OUT/corpus_report.md"
"$BIN" cost --suite configs/tilegym.json > "$OUT/cost.jsonl"
COPY=$(python3 scripts/copy_bandwidth.py 2>/dev/null || echo 0)
python3 scripts/bandwidth_table.py "$OUT/corpus.h5" "$OUT/cost.jsonl" "${COPY:-0}"
