#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The unit and cli tests under AddressSanitizer and UndefinedBehaviorSanitizer: the `sanitize`
# workflow preset (build/sanitize, -O1 -g, benchmarks off; CMakePresets.json). A sanitizer
# report fails the test that triggered it (abort_on_error, halt_on_error), in the test binary or
# in a portbench process it starts. Needs the bundles scripts/test.sh exports. Closes with one
# line: sanitize: N passed, N failed, N skipped.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
echo "== ASan + UBSan: unit and cli tests (preset sanitize) =="
mkdir -p build
start=$(date +%s)
LOG=build/sanitize-workflow.log
set +e
cmake --workflow --preset sanitize 2>&1 | tee "$LOG" | grep -vE '^\[[0-9]+/[0-9]+\] (Building|Linking)'
rc=${PIPESTATUS[0]}
set -e
[[ -d build/sanitize/Testing ]] && bash scripts/ctest_skips.sh build/sanitize
total=$(grep -oE 'tests failed out of [0-9]+' "$LOG" | grep -oE '[0-9]+$' | tail -1 || true)
failed=$(grep -oE '[0-9]+ tests failed out of' "$LOG" | grep -oE '^[0-9]+' | tail -1 || true)
skipped=$(grep -c '(Skipped)' "$LOG" || true)
echo "sanitize: workflow exit $rc after $(( $(date +%s) - start )) s"
if [[ -z "$total" ]]; then
  echo "sanitize: no tests ran (the build failed: see $LOG)" >&2
  exit 1
fi
echo "sanitize: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
exit "$rc"
