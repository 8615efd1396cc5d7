#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Proves launch-plan fill, copy and sum steps and initialised scratch on the GPU (docs/bundle-manifest.md,
# "Fill, copy and sum steps"): builds the harness (preset gpu), runs the step tests, then
# `portbench check` over the tilegym bundles whose plans hold steps.
#
# Here (no GPU):
#   bash scripts/export_bundles.sh configs/smoke.json          # bundles/ (the tests' real cubins)
#   bash scripts/export_tilegym.sh configs/tilegym-steps.json bundles-steps/tilegym
# Then, through the device tool, carrying bundles/ and bundles-steps/:
#   bash scripts/device_steps.sh [BUNDLES_ROOT]                 # default bundles-steps/tilegym
# Expected: every test below passes (none skipped), and `portbench check` prints numerics PASS
# for every configuration of attention_sink, attention_sink_decode, chunk_gated_delta_rule,
# moe_align_block and moe (its plans end with a sum step), exit 0.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUNDLES="${1:-bundles-steps/tilegym}"
OUT="${OUT:-$ROOT/build/device-out}"
mkdir -p "$OUT"
BIN=build/gpu/harness/cli/portbench

echo "== build (preset gpu) =="
if ! { cmake --preset gpu -DPORTBENCH_WERROR=OFF &&
       cmake --build --preset gpu -j "$(nproc)" --target portbench portbench.test.gpu.launch portbench.test.gpu.sweep \
         portbench.test.unit.bundle portbench.test.unit.measure; } > "$OUT/steps-build.log" 2>&1; then
  tail -40 "$OUT/steps-build.log"
  echo "BUILD FAILED (see $OUT/steps-build.log)"
  exit 1
fi

rc=0
echo "== step tests =="
# Steps.*: every copy type pair, strided views, 32/64-bit index paths, fills and scratch inits,
# sums against a host sum, on the device. StepsSweep.*: plans with steps through `portbench run` (EXECUTED and correct, a
# foreign kernel beside declared steps, the tilegym smoke plans with steps A/A).
# StepsManifest/StepKernels/PlanRecords: the CPU tests, also here (NVRTC of the host toolkit).
for t in "tests/gpu/launch/portbench.test.gpu.launch --gtest_filter=Steps.*" \
         "tests/gpu/sweep/portbench.test.gpu.sweep --gtest_filter=StepsSweep.*" \
         "tests/unit/bundle/portbench.test.unit.bundle --gtest_filter=Step*" \
         "tests/unit/measure/portbench.test.unit.measure --gtest_filter=PlanRecords.*"; do
  set -- $t
  echo "-- $*"
  "build/gpu/$1" "$2" > "$OUT/steps-test.log" 2>&1 || rc=1
  cat "$OUT/steps-test.log" >> "$OUT/steps-tests.log"
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]' "$OUT/steps-test.log" || true
done

echo "== portbench check $BUNDLES =="
if [[ -d "$BUNDLES" ]]; then
  "$BIN" check "$BUNDLES"/* > "$OUT/steps-check.txt" 2>&1 || rc=1
  cat "$OUT/steps-check.txt"
else
  echo "no $BUNDLES: export it first (see the header)"
  rc=1
fi
exit $rc
