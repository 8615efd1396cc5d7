#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cuTile Rust attention-prefill bundles of issue 15, made here without a GPU:
#   build/attn.json            the attention-prefill configurations of configs/tilegym.json
#                              (fmha, attention_sink, gemma_attention, mla)
#   bundles-attn/cutile_rust   the port, every configuration with its tuning variants
#                              (PORTBENCH_ATTN_CHOSEN_ONLY=1: chosen plans only)
# The reference is tilegym's own export, bundles-tilegym/tilegym/<op> (scripts/export_tilegym.sh);
# docs/cutile-rust.md ("Attention prefill") gives the GPU commands that pair the two.
# Env: PORTBENCH_TUNING_RUST: a tuning record (portbench tune's output) for the exporter's --tuning.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SUITE=build/attn.json
OUT=bundles-attn
mkdir -p build "$OUT"
python3 - "$SUITE" <<'PY'
import json, sys
ops = ("fmha", "attention_sink", "gemma_attention", "mla")
suite = json.load(open("configs/tilegym.json"))
configs = [c for c in suite["configs"] if c["op"] in ops]
json.dump({"suite": "tilegym-attention", "about": "the attention-prefill configurations of configs/tilegym.json (scripts/attn_bundles.sh)",
           "configs": configs}, open(sys.argv[1], "w"), indent=1)
print(f"[attn] {sys.argv[1]}: {len(configs)} configurations")
PY
args=()
[[ "${PORTBENCH_ATTN_CHOSEN_ONLY:-0}" == 1 ]] && args+=(--chosen-only)
[[ -n "${PORTBENCH_TUNING_RUST:-}" ]] && args+=(--tuning "$PORTBENCH_TUNING_RUST")
start=$(date +%s)
kernels/cutile_rust/export.sh "$SUITE" "$OUT/cutile_rust" "${args[@]}" | tee build/attn_export_rust.log | grep -E '^(summary|skip):'
echo "[attn] cutile_rust exported in $(( $(date +%s) - start )) s ($(du -sm "$OUT/cutile_rust" | cut -f1) MiB)"
