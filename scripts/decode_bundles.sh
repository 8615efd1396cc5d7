#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The bundles of issue 16's GPU call (decode attention), made here without a GPU:
#   build/decode.json            the decode configurations of configs/tilegym.json (flash_decode,
#                                gemma_attention_decode, attention_sink_decode, mla_decoding, mla_decoding_split_kv)
#   bundles-decode/cutile_rust   the cuTile Rust port with its tuning variants (kernels/cutile_rust,
#                                docs/cutile-rust.md "Decode attention")
#   bundles-decode/tilegym       the reference: those operators' bundles of an existing tilegym
#                                export (PORTBENCH_DECODE_TILEGYM_FROM, default bundles-tilegym/tilegym)
#   bundles-decode.tar.xz        both, packed: what the device call carries (at most 64 MiB)
# Env: PORTBENCH_TUNING_RUST: a tuning record (portbench tune's output) for the exporter's --tuning;
# PORTBENCH_DECODE_CHOSEN_ONLY=1: the chosen plans only (no variants).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OPS=(flash_decode gemma_attention_decode attention_sink_decode mla_decoding mla_decoding_split_kv)
SUITE=build/decode.json
OUT=bundles-decode
mkdir -p build "$OUT"
python3 - "$SUITE" "${OPS[@]}" <<'PY'
import json, sys
out, ops = sys.argv[1], set(sys.argv[2:])
suite = json.load(open("configs/tilegym.json"))
suite["suite"] = "tilegym-decode"
suite["configs"] = [c for c in suite["configs"] if c["op"] in ops]
json.dump(suite, open(out, "w"), indent=1)
print(f"[decode] {out}: {len(suite['configs'])} configurations")
PY

rust_args=()
[[ -n "${PORTBENCH_TUNING_RUST:-}" ]] && rust_args+=(--tuning "$PORTBENCH_TUNING_RUST")
[[ -n "${PORTBENCH_DECODE_CHOSEN_ONLY:-}" ]] && rust_args+=(--chosen-only)
start=$(date +%s)
kernels/cutile_rust/export.sh "$SUITE" "$OUT/cutile_rust" "${rust_args[@]}" | tee build/decode_export_rust.log \
  | grep -E '^(summary|skip):'
echo "[decode] cutile_rust exported in $(( $(date +%s) - start )) s ($(du -sm "$OUT/cutile_rust" | cut -f1) MiB)"

FROM="${PORTBENCH_DECODE_TILEGYM_FROM:-bundles-tilegym/tilegym}"
rm -rf "$OUT/tilegym" && mkdir -p "$OUT/tilegym"
for op in "${OPS[@]}"; do
  [[ -d "$FROM/$op" ]] && cp -r "$FROM/$op" "$OUT/tilegym/"
done
echo "[decode] tilegym bundles copied from $FROM: $(ls "$OUT/tilegym" | tr '\n' ' ')"

tar -cJf "$OUT.tar.xz" "$OUT/cutile_rust" "$OUT/tilegym" "$SUITE"
bytes=$(stat -c %s "$OUT.tar.xz")
echo "[decode] $OUT.tar.xz: $(( bytes >> 20 )) MiB"
(( bytes <= 64 << 20 )) || { echo "[decode] $OUT.tar.xz is over the 64 MiB a device call carries" >&2; exit 1; }
