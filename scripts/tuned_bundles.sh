#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole corpus with tuned plans on both sides, without exporting twice: the bundles exported
# with every candidate as a variant take the tuning records' choices (scripts/apply_tuning.py),
# the port's other operators are exported chosen-only with its record.
#
#   scripts/tuned_bundles.sh [--export] [OUT]     (here, no GPU; default OUT bundles-tuned)
# --export first makes the three exports it assembles (about an hour on two cores):
#   scripts/export_tilegym.sh                      -> bundles-tilegym/tilegym (every candidate a variant)
#   the port's tuned operators (TUNED_OPS below)   -> bundles-tilegym/cutile_rust (variants)
#   the port's other operators, chosen-only with configs/tuning/cutile_rust-h200.json
#                                                  -> bundles-port-rest/cutile_rust
# The result: OUT/tilegym and OUT/cutile_rust, hard links of those exports with their manifests
# rewritten by configs/tuning/{tilegym,cutile_rust}-h200.json, packed as OUT.tar.xz for the device.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
EXPORT=0
[[ "${1:-}" == --export ]] && { EXPORT=1; shift; }
OUT="${1:-bundles-tuned}"
# The port's operators whose candidates `portbench tune` times (exported with their variants).
TUNED_OPS="fmha gemma_attention mla attention_sink flash_decode gemma_attention_decode mla_decoding
  mla_decoding_split_kv chunk_gated_delta_rule recurrent_gated_delta_rule splitk_reduce"
if ((EXPORT)); then
  mkdir -p build
  python3 - build/tune-port.json build/port-rest.json $TUNED_OPS <<'PY'
import json, sys
tuned, rest, ops = sys.argv[1], sys.argv[2], set(sys.argv[3:])
s = json.load(open("configs/tilegym.json"))
for path, keep, about in ((tuned, True, "the port's tuned operators"), (rest, False, "the port's other operators")):
    configs = [c for c in s["configs"] if (c["op"] in ops) == keep]
    json.dump({"suite": s["suite"], "about": f"configs/tilegym.json, {about}", "configs": configs}, open(path, "w"), indent=1)
PY
  bash scripts/export_tilegym.sh
  rm -rf bundles-tilegym/cutile_rust bundles-port-rest/cutile_rust
  kernels/cutile_rust/export.sh build/tune-port.json bundles-tilegym/cutile_rust | grep -E '^(summary|skip):'
  kernels/cutile_rust/export.sh build/port-rest.json bundles-port-rest/cutile_rust --chosen-only \
    --tuning configs/tuning/cutile_rust-h200.json | grep -E '^(summary|skip):'
fi
for need in bundles-tilegym/tilegym bundles-tilegym/cutile_rust bundles-port-rest/cutile_rust; do
  [[ -d "$need" ]] || { echo "tuned_bundles: $need missing (see this script's header)" >&2; exit 2; }
done
rm -rf "$OUT"
mkdir -p "$OUT/tilegym" "$OUT/cutile_rust"
for d in bundles-tilegym/tilegym/*/; do cp -al "$d" "$OUT/tilegym/"; done
for d in bundles-tilegym/cutile_rust/*/ bundles-port-rest/cutile_rust/*/; do
  op=$(basename "$d")
  [[ -e "$OUT/cutile_rust/$op" ]] && { echo "tuned_bundles: $op exported twice ($d)" >&2; exit 2; }
  cp -al "$d" "$OUT/cutile_rust/"
done
python3 scripts/apply_tuning.py configs/tuning/tilegym-h200.json "$OUT/tilegym" | grep -v ' 0 of ' || true
python3 scripts/apply_tuning.py configs/tuning/cutile_rust-h200.json "$OUT/cutile_rust" | grep -v ' 0 of ' || true
tar -cf - "$OUT" | xz -T2 -3 > "$OUT.tar.xz"
echo "[tuned] $OUT.tar.xz ($(du -m "$OUT.tar.xz" | cut -f1) MiB): $(ls "$OUT/tilegym" | wc -l) reference and $(ls "$OUT/cutile_rust" | wc -l) port operators"
