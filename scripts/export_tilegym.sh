#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Exports NVIDIA's upstream TileGym kernels (the pinned tilegym==1.5.1 from scripts/setup.sh) as
# the reference front end `tilegym` (docs/exporters.md), CPU only.
#
#   scripts/export_tilegym.sh [SUITE] [OUT]
#       defaults: configs/tilegym.json, bundles-tilegym/tilegym (the GPU runs' reference bundles)
#   scripts/export_tilegym.sh configs/tilegym-smoke.json bundles/tilegym      (what scripts/test.sh runs)
#
# Environment: PORTBENCH_TARGET (target description, default configs/targets/h200.json),
# PORTBENCH_TUNING (a tuning record of portbench tune: the variant each listed configuration
# gets), PORTBENCH_EXPORT_CHOSEN_ONLY=1 (only each configuration's chosen plan, no variants: what
# a run needs, a fraction of the compiles), PORTBENCH_EXPORT_JOBS (parallel tileiras compiles,
# default: all cores).
# The output must travel to the GPU machine in at most 64 MiB: when OUT is larger, it is also
# packed as OUT.tar.xz (extract with: tar -xJf OUT.tar.xz -C "$(dirname OUT)").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SUITE="${1:-configs/tilegym.json}"
OUT="${2:-bundles-tilegym/tilegym}"
PY="$ROOT/.venv/bin/python"
[[ -x "$PY" ]] || { echo "export_tilegym: $PY missing; run scripts/setup.sh" >&2; exit 2; }
[[ -f "$SUITE" ]] || { echo "export_tilegym: suite $SUITE not found" >&2; exit 2; }

export CUDA_VISIBLE_DEVICES=""
export PYTHONPATH="$ROOT/kernels/export${PYTHONPATH:+:$PYTHONPATH}"
args=(--suite "$SUITE" --out "$OUT")
[[ -n "${PORTBENCH_TARGET:-}" ]] && args+=(--target "$PORTBENCH_TARGET")
[[ -n "${PORTBENCH_TUNING:-}" ]] && args+=(--tuning "$PORTBENCH_TUNING")
[[ "${PORTBENCH_EXPORT_CHOSEN_ONLY:-0}" == 1 ]] && args+=(--chosen-only)

echo "[export] tilegym <- $SUITE"
start=$(date +%s)
"$PY" -m portbench_export.tilegym "${args[@]}"
echo "[export] tilegym done in $(( $(date +%s) - start )) s: $OUT ($(du -sm "$OUT" | cut -f1) MiB)"

limit=$((64 * 1024 * 1024))
bytes=$(du -sb "$OUT" | cut -f1)
if (( bytes > limit )); then
  tar -C "$(dirname "$OUT")" -cJf "$OUT.tar.xz" "$(basename "$OUT")"
  echo "[export] $OUT is over 64 MiB: packed $OUT.tar.xz ($(du -sm "$OUT.tar.xz" | cut -f1) MiB)"
fi
