#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole corpus for one device run, made here without a GPU (issue 17's figure):
#   bundles-port/cutile_rust   every configuration of configs/tilegym.json the cuTile Rust port
#                              exports, chosen plans only, with configs/tuning/cutile_rust-h200.json
#   bundles-port/tilegym       the upstream reference: bundles-tilegym/tilegym (scripts/export_tilegym.sh
#                              on configs/tilegym.json) and bundles-steps/tilegym (the operators whose
#                              plans have fill/copy steps), hard-linked, one folder per operator
#   bundles-port.tar.xz        both (about 12 MB), carried to the device machine, where
#                              scripts/device_run.sh unpacks it
# Then, on the H200 (a sweep longer than one call continues with --resume on the same file):
#   PORTBENCH_SKIP_SWEEP=1 PORTBENCH_CORPUS=1 PORTBENCH_CORPUS_REF=bundles-port/tilegym \
#   PORTBENCH_CORPUS_PORT=bundles-port/cutile_rust PORTBENCH_CORPUS_RUNS=4 PORTBENCH_CORPUS_TRITON=0 \
#   PORTBENCH_CORPUS_CUDA=0 PORTBENCH_CORPUS_RESUME=1 PORTBENCH_CORPUS_FILE=results/corpus-port.h5 \
#   bash scripts/device_run.sh            (carry bundles-port.tar.xz, and results/corpus-port.h5 to resume)
# Env: PORTBENCH_PORT_OPS: export only these operators' configurations (a space-separated list).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT=bundles-port
for need in bundles-tilegym/tilegym bundles-steps/tilegym; do
  [[ -d "$need" ]] || { echo "port_bundles: $need missing (scripts/export_tilegym.sh writes it)" >&2; exit 2; }
done
suite=configs/tilegym.json
if [[ -n "${PORTBENCH_PORT_OPS:-}" ]]; then
  suite=build/port-ops.json
  mkdir -p build
  python3 - "$suite" $PORTBENCH_PORT_OPS <<'PY'
import json, sys
ops = set(sys.argv[2:])
s = json.load(open("configs/tilegym.json"))
configs = [c for c in s["configs"] if c["op"] in ops]
json.dump({"suite": s["suite"], "about": "configs/tilegym.json, operators " + " ".join(sorted(ops)),
           "configs": configs}, open(sys.argv[1], "w"), indent=1)
print(f"[port] {sys.argv[1]}: {len(configs)} configurations")
PY
fi
rm -rf "$OUT/cutile_rust"
start=$(date +%s)
kernels/cutile_rust/export.sh "$suite" "$OUT/cutile_rust" --chosen-only --tuning configs/tuning/cutile_rust-h200.json \
  | tee build/port_export.log | grep -E '^(summary|skip):'
echo "[port] cutile_rust exported in $(( $(date +%s) - start )) s"
rm -rf "$OUT/tilegym"
mkdir -p "$OUT/tilegym"
for d in bundles-tilegym/tilegym/*/ bundles-steps/tilegym/*/; do cp -al "$d" "$OUT/tilegym/"; done
# Operators tilegym's exporter cannot express at all (group_gemm's list-of-arrays descriptors,
# moe's torch top-k sum) still get a bundle of reasons, so `portbench run` names them per
# configuration instead of "no reference bundle" (quick: nothing compiles).
python3 - build/port-reasons.json <<'PY'
import json, sys
s = json.load(open("configs/tilegym.json"))
configs = [c for c in s["configs"] if c["op"] in ("group_gemm", "moe")]
json.dump({"suite": s["suite"], "about": "tilegym's operators without a plan", "configs": configs}, open(sys.argv[1], "w"))
PY
rm -rf build/port-reasons
bash scripts/export_tilegym.sh build/port-reasons.json build/port-reasons/tilegym | grep -E '^summary'
for d in build/port-reasons/tilegym/*/; do [[ -e "$OUT/tilegym/$(basename "$d")" ]] || cp -a "$d" "$OUT/tilegym/"; done
tar -cf - "$OUT" | xz -T2 -6 > "$OUT.tar.xz"
echo "[port] $OUT.tar.xz ($(du -m "$OUT.tar.xz" | cut -f1) MiB): $(ls "$OUT/tilegym" | wc -l) reference and $(ls "$OUT/cutile_rust" | wc -l) port operators"
