#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cuTile Rust gated-delta-rule bundles of issue 17, made here without a GPU:
#   build/gdr.json             the gated-delta-rule configurations of configs/tilegym.json
#                              (recurrent_gated_delta_rule, chunk_gated_delta_rule)
#   bundles-gdr/cutile_rust    the port, every configuration with its tuning variants
#                              (PORTBENCH_GDR_CHOSEN_ONLY=1: chosen plans only)
# The reference is tilegym's own export, bundles-tilegym/tilegym/<op> (scripts/export_tilegym.sh);
# docs/cutile-rust.md ("Gated delta rule") gives the GPU commands that pair the two.
# Env: PORTBENCH_TUNING_RUST: a tuning record (portbench tune's output) for the exporter's --tuning.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SUITE=build/gdr.json
OUT=bundles-gdr
mkdir -p build "$OUT"
python3 - "$SUITE" <<'PY'
import json, sys
ops = ("recurrent_gated_delta_rule", "chunk_gated_delta_rule")
suite = json.load(open("configs/tilegym.json"))
configs = [c for c in suite["configs"] if c["op"] in ops]
json.dump({"suite": "tilegym-gdr", "about": "the gated-delta-rule configurations of configs/tilegym.json (scripts/gdr_bundles.sh)",
           "configs": configs}, open(sys.argv[1], "w"), indent=1)
print(f"[gdr] {sys.argv[1]}: {len(configs)} configurations")
PY
args=()
[[ "${PORTBENCH_GDR_CHOSEN_ONLY:-0}" == 1 ]] && args+=(--chosen-only)
[[ -n "${PORTBENCH_TUNING_RUST:-}" ]] && args+=(--tuning "$PORTBENCH_TUNING_RUST")
start=$(date +%s)
kernels/cutile_rust/export.sh "$SUITE" "$OUT/cutile_rust" "${args[@]}" | tee build/gdr_export_rust.log | grep -E '^(summary|skip):'
echo "[gdr] cutile_rust exported in $(( $(date +%s) - start )) s ($(du -sm "$OUT/cutile_rust" | cut -f1) MiB)"
