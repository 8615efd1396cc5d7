#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The nightly job's own proof, in one device call: a baseline, an A/A nightly against it (must
# exit 0, nothing REGRESSED) and a planted slower port (must exit 1). Logs come back as
# $OUT/nightly.tgz.
#
# Here (no GPU), then carry bundles-nightly.tar.xz:
#   kernels/cutile_rust/export.sh configs/nightly.json bundles-nightly/cutile_rust --chosen-only \
#     --tuning configs/tuning/cutile_rust-h200.json
#   (bundles-nightly/tilegym: PORTBENCH_TUNING=configs/tuning/tilegym-h200.json PORTBENCH_EXPORT_CHOSEN_ONLY=1
#    bash scripts/export_tilegym.sh configs/nightly.json bundles-nightly/tilegym)
#   bash scripts/plant_slower_port.sh bundles-nightly configs/nightly.json bundles-planted
#   tar -cf - bundles-nightly bundles-planted | xz -T2 -3 > bundles-nightly.tar.xz
# On the device: bash scripts/device_nightly.sh   (PORTBENCH_NIGHTLY_RUNS, default 4)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
FINAL="${OUT:-$ROOT/build/device-out}"
LOGS="$FINAL/nightly"
mkdir -p "$LOGS"
trap 'tar -C "$FINAL" -czf "$FINAL/nightly.tgz" nightly && rm -rf "$LOGS"' EXIT
RUNS="${PORTBENCH_NIGHTLY_RUNS:-4}"
BIN=build/gpu/harness/cli/portbench
t0=$(date +%s)
[[ -f bundles-nightly.tar.xz && ! -d bundles-nightly ]] && tar -xJf bundles-nightly.tar.xz
for d in bundles-nightly/tilegym bundles-nightly/cutile_rust bundles-planted/cutile_rust; do
  [[ -d "$d" ]] || { echo "device_nightly: $d missing (see this script's header)"; exit 2; }
done
if ! { cmake --preset gpu -DPORTBENCH_WERROR=OFF -DPORTBENCH_ENABLE_TESTS=OFF -DPORTBENCH_ENABLE_BENCHMARKS=OFF &&
       cmake --build --preset gpu -j "$(nproc)" --target portbench; } > "$LOGS/build.log" 2>&1; then
  tail -20 "$LOGS/build.log"; echo "BUILD FAILED"; exit 1
fi
echo "build: $(( $(date +%s) - t0 )) s"
stage() {   # name, then nightly.sh arguments
  local name="$1" s rc
  shift
  s=$(date +%s)
  bash scripts/nightly.sh --suite configs/nightly.json --runs "$RUNS" --bin "$BIN" --ref tilegym --port cutile_rust \
    --baseline results/nightly-device/baseline.h5 --out "results/nightly-device/$name" "$@" > "$LOGS/$name.log" 2>&1
  rc=$?
  cp -r "results/nightly-device/$name" "$LOGS/$name-out" 2>/dev/null
  echo "$name: exit $rc, $(( $(date +%s) - s )) s; $(grep -E 'nightly_verdict=' "$LOGS/$name.log")"
  tail -8 "$LOGS/$name.log" | sed 's/^/    /'
}
stage baseline --bundles bundles-nightly --update-baseline
stage aa --bundles bundles-nightly
stage planted --bundles bundles-planted
cp results/nightly-device/baseline.h5 "$LOGS/" 2>/dev/null
for n in aa planted; do
  echo "== $n: compare (first lines) =="
  head -30 "results/nightly-device/$n/compare.md" 2>/dev/null
done
echo "total: $(( $(date +%s) - t0 )) s"
