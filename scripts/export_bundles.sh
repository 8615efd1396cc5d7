#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Exports the bundles of every front end for one suite into bundles/<frontend>/<operator>/,
# including the upstream TileGym kernels (OUT/tilegym, scripts/export_tilegym.sh; for the default
# smoke suite its counterpart configs/tilegym-smoke.json).
# CPU only: no GPU is made visible (CUDA_VISIBLE_DEVICES=""), libcuda is never loaded.
# Idempotent: each operator's bundle is rebuilt in a temp folder and swapped in whole.
#
#   scripts/export_bundles.sh [SUITE] [OUT]      (defaults: configs/smoke.json, bundles)
#
# Needs .venv from scripts/setup.sh. Stops at the first front end that fails (nonzero exit).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SUITE="${1:-configs/smoke.json}"
OUT="${2:-bundles}"
PY="$ROOT/.venv/bin/python"
[[ -x "$PY" ]] || { echo "export_bundles: $PY missing; run scripts/setup.sh" >&2; exit 2; }
[[ -f "$SUITE" ]] || { echo "export_bundles: suite $SUITE not found" >&2; exit 2; }

export CUDA_VISIBLE_DEVICES=""
export PYTHONPATH="$ROOT/kernels/export${PYTHONPATH:+:$PYTHONPATH}"

# PORTBENCH_EXPORT_FRONTENDS="cutile_python triton ..." limits the export to those front ends
# (default: every one, plus the fault bundles).
FRONTENDS="${PORTBENCH_EXPORT_FRONTENDS:-cutile_python triton cuda_cpp cutile_rust tilegym faults}"
wants() { [[ " $FRONTENDS " == *" $1 "* ]]; }

for fe in cutile_python triton cuda_cpp; do
  wants "$fe" || continue
  echo "[export] $fe <- $SUITE"
  "$PY" -m "portbench_export.$fe" --suite "$SUITE" --out "$OUT/$fe"
done

# CTA-cluster kernels (configs/clusters.json): the grid counts clusters, CUPTI reports CTAs.
if [[ "$SUITE" == configs/smoke.json ]] && wants cutile_python; then
  echo "[export] cutile_python (clusters) <- configs/clusters.json"
  "$PY" -m portbench_export.cutile_python --suite configs/clusters.json --out "$OUT/cutile_python_clusters"
fi

# ---- cuTile Rust (kernels/cutile_rust/, written separately) -----------------------------------
# It exports itself when its script exists; same contract: SUITE in, bundles/cutile_rust out.
if wants cutile_rust && [[ -x kernels/cutile_rust/export.sh ]]; then
  kernels/cutile_rust/export.sh "$SUITE" "$OUT/cutile_rust"
fi
# -----------------------------------------------------------------------------------------------

# ---- tilegym (NVIDIA's upstream TileGym kernels, the reference front end) ---------------------
if wants tilegym; then
  TG_SUITE="$SUITE"
  [[ "$SUITE" == configs/smoke.json ]] && TG_SUITE=configs/tilegym-smoke.json
  bash scripts/export_tilegym.sh "$TG_SUITE" "$OUT/tilegym"
fi

echo "[export] done: $OUT"
if wants faults && [[ -x kernels/faults/export.sh ]]; then kernels/faults/export.sh configs/faults.json "$OUT"; fi   # fault bundles (docs/faults.md)
