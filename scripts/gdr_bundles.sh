#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cuTile Rust bundles of issue 17 (the gated delta rule and moe_align_block), made here without a GPU:
#   build/gdr.json             those configurations of configs/tilegym.json
#                              (recurrent_gated_delta_rule, chunk_gated_delta_rule, moe_align_block)
#   bundles-gdr/cutile_rust    the port, every configuration with its tuning variants
#                              (PORTBENCH_GDR_CHOSEN_ONLY=1: chosen plans only)
#   bundles-gdr/cutile_rust_chunked  the same configurations with the chunked kernel as the chosen
#                              plan (variant chunked_c64_bv64_o1 through build/gdr_chunked_tuning.json),
#                              so that `portbench check` checks that kernel directly
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
ops = ("recurrent_gated_delta_rule", "chunk_gated_delta_rule", "moe_align_block")
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
python3 - build/gdr.json build/gdr_chunked_tuning.json <<'PY'
import json, sys
configs = json.load(open(sys.argv[1]))["configs"]
record = {"schema": "portbench.tuning-record/1", "frontend": "cutile_rust", "target": "h200",
          "about": "scripts/gdr_bundles.sh: the chunked kernel for every gated-delta-rule configuration",
          "choices": [{"op": c["op"], "params": c["params"], "variant": "chunked_c64_bv64_o1"} for c in configs
                      if c["op"] != "moe_align_block"]}
json.dump(record, open(sys.argv[2], "w"), indent=1)
PY
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['configs']=[c for c in d['configs'] if c['op']!='moe_align_block']; json.dump(d,open(sys.argv[2],'w'),indent=1)" "$SUITE" build/gdr_only.json
kernels/cutile_rust/export.sh build/gdr_only.json "$OUT/cutile_rust_chunked" --chosen-only --tuning build/gdr_chunked_tuning.json \
  | tee build/gdr_export_rust_chunked.log | grep -E '^(summary|skip):'
echo "[gdr] cutile_rust_chunked exported in $(( $(date +%s) - start )) s in all"
