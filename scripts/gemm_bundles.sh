#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The bundles of issue 14's GPU call (scripts/device_gemm.sh), made here without a GPU:
#   build/gemm.json             the GEMM suite (scripts/gemm_suite.py)
#   bundles-gemm/cutile_rust    the cuTile Rust port, each configuration's chosen plan (kernels/cutile_rust)
#   bundles-gemm/cutile_rust_tune  the port's tuning variants of configs/gemm_tune.json, for portbench
#                               tune (variants of all 155 configurations are about 1000 tileiras
#                               compiles: hours on 2 cores, and more than one device call can time)
#   bundles-gemm/tilegym        the reference, NVIDIA's tilegym kernels (scripts/export_tilegym.sh)
#   bundles-gemm.tar.xz         both, packed: what the device call carries (at most 64 MiB)
# Env: PORTBENCH_TUNING_RUST / PORTBENCH_TUNING_TILEGYM: tuning records (portbench tune's output)
# for the exporters' --tuning; PORTBENCH_GEMM_SKIP_TILEGYM=1 keeps an existing bundles-gemm/tilegym;
# PORTBENCH_GEMM_TILEGYM_FROM=DIR copies the matrix products of an existing tilegym export instead.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SUITE=build/gemm.json
OUT=bundles-gemm
python3 scripts/gemm_suite.py "$SUITE"
mkdir -p "$OUT"

rust_args=()
[[ -n "${PORTBENCH_TUNING_RUST:-}" ]] && rust_args+=(--tuning "$PORTBENCH_TUNING_RUST")
start=$(date +%s)
kernels/cutile_rust/export.sh "$SUITE" "$OUT/cutile_rust" --chosen-only "${rust_args[@]}" | tee build/gemm_export_rust.log \
  | grep -E '^(summary|skip):'
echo "[gemm] cutile_rust exported in $(( $(date +%s) - start )) s ($(du -sm "$OUT/cutile_rust" | cut -f1) MiB)"
start=$(date +%s)
kernels/cutile_rust/export.sh configs/gemm_tune.json "$OUT/cutile_rust_tune" "${rust_args[@]}" | tee build/gemm_export_rust_tune.log \
  | grep -E '^(summary|skip):'
echo "[gemm] cutile_rust_tune exported in $(( $(date +%s) - start )) s ($(du -sm "$OUT/cutile_rust_tune" | cut -f1) MiB)"

if [[ -n "${PORTBENCH_GEMM_TILEGYM_FROM:-}" ]]; then
  # An existing tilegym export (e.g. bundles-tilegym/tilegym of configs/tilegym.json): its
  # matrix-product bundles as they are; configurations it lacks (the LLM shapes) stay unpaired.
  rm -rf "$OUT/tilegym" && mkdir -p "$OUT/tilegym"
  for op in matmul bmm group_gemm splitk_reduce; do
    [[ -d "$PORTBENCH_GEMM_TILEGYM_FROM/$op" ]] && cp -r "$PORTBENCH_GEMM_TILEGYM_FROM/$op" "$OUT/tilegym/"
  done
  echo "[gemm] tilegym bundles copied from $PORTBENCH_GEMM_TILEGYM_FROM: $(ls "$OUT/tilegym" | tr '\n' ' ')"
elif [[ -z "${PORTBENCH_GEMM_SKIP_TILEGYM:-}" || ! -d "$OUT/tilegym" ]]; then
  PORTBENCH_TUNING="${PORTBENCH_TUNING_TILEGYM:-}" bash scripts/export_tilegym.sh "$SUITE" "$OUT/tilegym" \
    | tee build/gemm_export_tilegym.log | grep -E '^(summary|\[export\])'
  rm -f "$OUT/tilegym.tar.xz"   # export_tilegym.sh packs large outputs on its own; one archive is enough
fi

tar -cJf "$OUT.tar.xz" "$OUT/cutile_rust" "$OUT/cutile_rust_tune" "$OUT/tilegym"
bytes=$(stat -c %s "$OUT.tar.xz")
echo "[gemm] $OUT.tar.xz: $(( bytes >> 20 )) MiB"
(( bytes <= 64 << 20 )) || { echo "[gemm] $OUT.tar.xz is over the 64 MiB a device call carries" >&2; exit 1; }
