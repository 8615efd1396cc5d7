#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A port made slower on purpose, to prove that the nightly job catches a real regression: one
# operator of the cuTile Rust bundles re-exported (CPU only) with a worse, still correct, tuning
# variant for every configuration of SUITE, the rest hard links of BUNDLES.
#
#   scripts/plant_slower_port.sh BUNDLES SUITE OUT [OP VARIANT]
#       BUNDLES: a folder with tilegym/ and cutile_rust/ (e.g. bundles-chosen)
#       default OP VARIANT: recurrent_gated_delta_rule bv16_o4, which configs/tuning/cutile_rust-h200.json
#       measured 4.9-5.0% slower than the chosen bv16_o2 on the nightly suite's two configurations
# Then on the GPU: scripts/nightly.sh --bundles OUT ... must exit 1 (REGRESSED) against a
# baseline made from BUNDLES.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ $# -ge 3 ]] || { echo "usage: $0 BUNDLES SUITE OUT [OP VARIANT]" >&2; exit 2; }
BUNDLES="$1" SUITE="$2" OUT="$3" OP="${4:-recurrent_gated_delta_rule}" VARIANT="${5:-bv16_o4}"
for d in "$BUNDLES/tilegym" "$BUNDLES/cutile_rust/$OP"; do
  [[ -d "$d" ]] || { echo "plant_slower_port: $d missing" >&2; exit 2; }
done
[[ -f "$SUITE" ]] || { echo "plant_slower_port: suite $SUITE not found" >&2; exit 2; }
work="$OUT.work"
rm -rf "$OUT" "$work"
mkdir -p "$work" "$OUT/tilegym" "$OUT/cutile_rust"
python3 - "$SUITE" "$OP" "$VARIANT" "$work" <<'PY'
import json, sys
suite, op, variant, work = sys.argv[1:]
s = json.load(open(suite))
configs = [c for c in s["configs"] if c["op"] == op]
if not configs:
    sys.exit(f"plant_slower_port: {suite} has no {op} configuration")
json.dump({"suite": s["suite"], "about": f"{suite}, {op} only (planted slower port)", "configs": configs},
          open(f"{work}/suite.json", "w"), indent=1)
json.dump({"schema": "portbench.tuning-record/1", "frontend": "cutile_rust", "target": "h200",
           "made_by": f"scripts/plant_slower_port.sh: {variant}, a slower variant, on purpose",
           "choices": [{"op": op, "params": c["params"], "variant": variant} for c in configs]},
          open(f"{work}/record.json", "w"), indent=1)
print(f"[plant] {op}: {len(configs)} configurations of {suite} get {variant}")
PY
kernels/cutile_rust/export.sh "$work/suite.json" "$work/cutile_rust" --chosen-only --tuning "$work/record.json" \
  | grep -E '^(summary|skip):'
grep -q "\"variant\": \"$VARIANT\"" "$work/cutile_rust/$OP/manifest.json" \
  || { echo "plant_slower_port: the export did not take $VARIANT" >&2; exit 1; }
for d in "$BUNDLES"/tilegym/*/; do cp -al "$d" "$OUT/tilegym/"; done
for d in "$BUNDLES"/cutile_rust/*/; do
  [[ "$(basename "$d")" == "$OP" ]] || cp -al "$d" "$OUT/cutile_rust/"
done
mv "$work/cutile_rust/$OP" "$OUT/cutile_rust/$OP"
rm -rf "$work"
echo "[plant] $OUT: $OP planted with $VARIANT, every other bundle as in $BUNDLES"
