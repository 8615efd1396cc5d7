#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Exports the fault bundle and its reference for the harness's own GPU tests (docs/faults.md):
#   OUT/faults/vector_add/            one bundle: a broken or correct kernel per configuration
#   OUT/faults_reference/vector_add/  the ordinary cuda_cpp exporter on the same suite
#
#   kernels/faults/export.sh [SUITE] [OUT]    (defaults: configs/faults.json, bundles)
#
# CPU only (CUDA_VISIBLE_DEVICES=""; libcuda is never loaded). Idempotent: each bundle is built in
# a temp folder, validated and swapped in whole. Needs .venv and .deps/cuda-13.0 (NVRTC 13.0,
# nvJitLink 13.0, libcudadevrt) from scripts/setup.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
SUITE="${1:-configs/faults.json}"
OUT="${2:-bundles}"
PY="$ROOT/.venv/bin/python"
CU13="${PORTBENCH_CUDA13_ROOT:-$ROOT/.deps/cuda-13.0/nvidia/cu13}"
[[ -x "$PY" ]] || { echo "faults/export: $PY missing; run scripts/setup.sh" >&2; exit 2; }
[[ -f "$SUITE" ]] || { echo "faults/export: suite $SUITE not found" >&2; exit 2; }
[[ -f "$CU13/lib/libnvJitLink.so.13" ]] \
  || { echo "faults/export: $CU13/lib/libnvJitLink.so.13 missing; run scripts/setup.sh" >&2; exit 2; }

export CUDA_VISIBLE_DEVICES=""
export PYTHONPATH="$ROOT/kernels/export${PYTHONPATH:+:$PYTHONPATH}"

echo "[export] faults <- $SUITE"
"$PY" kernels/faults/export.py --suite "$SUITE" --out "$OUT/faults"
echo "[export] faults reference (cuda_cpp) <- $SUITE"
"$PY" -m portbench_export.cuda_cpp --suite "$SUITE" --out "$OUT/faults_reference"
