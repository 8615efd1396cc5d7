#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The smoke sweep on a GPU host (scripts/device_run.sh calls it): an A/A run (cuTile Python on
# both sides) and the cuTile Python -> cuTile Rust port, best of 4 each, then the reports and the
# CUPTI-versus-event cross-check. Usage: scripts/smoke_sweep.sh OUTDIR [BUILD_DIR]
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${1:?usage: smoke_sweep.sh OUTDIR [BUILD_DIR]}"
BIN="${2:-build/gpu}/harness/cli/portbench"
RUNS="${PORTBENCH_RUNS:-4}"
mkdir -p "$OUT"

echo "== A/A: cutile_python vs itself, smoke suite, best of $RUNS =="
/usr/bin/time -f "wall %e s" "$BIN" run --aa --ref bundles/cutile_python --suite configs/smoke.json \
  --runs "$RUNS" --out "$OUT/aa.h5" --overwrite 2>&1 | tee "$OUT/aa.txt" | tail -14

echo "== A/A: CTA-cluster kernels (grid counts clusters), clusters suite, best of $RUNS =="
"$BIN" run --aa --ref bundles/cutile_python_clusters --suite configs/clusters.json \
  --runs "$RUNS" --out "$OUT/aa_clusters.h5" --overwrite 2>&1 | tee "$OUT/aa_clusters.txt" | tail -6

echo "== port: cutile_python -> cutile_rust, smoke suite, best of $RUNS =="
/usr/bin/time -f "wall %e s" "$BIN" run --ref bundles/cutile_python --port bundles/cutile_rust \
  --suite configs/smoke.json --runs "$RUNS" --out "$OUT/port.h5" --overwrite 2>&1 | tee "$OUT/port.txt" | tail -14

if "$BIN" --help 2>/dev/null | grep -q " report "; then
  "$BIN" report "$OUT/aa.h5" --format md > "$OUT/aa_report.md" 2>&1 && tail -20 "$OUT/aa_report.md"
  "$BIN" report "$OUT/port.h5" --format md > "$OUT/port_report.md" 2>&1 && tail -20 "$OUT/port_report.md"
fi
python3 scripts/cupti_vs_event.py "$OUT/aa.h5" 2>&1 | tee "$OUT/cupti_vs_event.txt"
