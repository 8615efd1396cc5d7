#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test command: exports every front end's bundles (CPU only), builds everything with the
# ci-cpu preset, runs all CTest suites (gpu-labelled ones skip, with their reason, where there is
# no GPU), the exporters' pytest suite and the Rust exporter's cargo tests.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PRESET="${PORTBENCH_PRESET:-ci-cpu}"

echo "== export bundles (no GPU) =="
bash scripts/export_bundles.sh configs/smoke.json

echo "== build and CTest (preset $PRESET) =="
cmake --preset "$PRESET" >/dev/null
cmake --build --preset "$PRESET"
LOG="build/$PRESET"
ctest --preset "$PRESET" 2>&1 | tee "$LOG/ctest.log"
# ctest only says "Skipped": each skipped test with the reason it gave.
bash scripts/ctest_skips.sh "$LOG"

echo "== exporter tests (pytest) =="
.venv/bin/python -m pytest -q -rs tests/python 2>&1 | tee "$LOG/pytest.log"

if [[ -f kernels/cutile_rust/Cargo.toml ]]; then
  echo "== cuTile Rust exporter tests (cargo test) =="
  bash kernels/cutile_rust/test.sh 2>&1 | tee "$LOG/cargo.log"
fi

# One closing line over the three runners (ctest, pytest, cargo test).
ctest_total=$(grep -oE 'tests failed out of [0-9]+' "$LOG/ctest.log" | grep -oE '[0-9]+$' || echo 0)
ctest_failed=$(grep -oE '[0-9]+ tests failed out of' "$LOG/ctest.log" | grep -oE '^[0-9]+' || echo 0)
ctest_skipped=$(grep -c '(Skipped)' "$LOG/ctest.log" || true)
py_passed=$(grep -oE '[0-9]+ passed' "$LOG/pytest.log" | tail -1 | grep -oE '[0-9]+' || echo 0)
py_failed=$(grep -oE '[0-9]+ failed' "$LOG/pytest.log" | tail -1 | grep -oE '[0-9]+' || echo 0)
py_skipped=$(grep -oE '[0-9]+ skipped' "$LOG/pytest.log" | tail -1 | grep -oE '[0-9]+' || echo 0)
cargo_passed=0; cargo_failed=0
if [[ -f "$LOG/cargo.log" ]]; then
  cargo_passed=$(grep -oE 'test result: [a-zA-Z]+\. [0-9]+ passed' "$LOG/cargo.log" | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}')
  cargo_failed=$(grep -oE '[0-9]+ failed;' "$LOG/cargo.log" | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}')
fi
passed=$((ctest_total - ctest_failed - ctest_skipped + py_passed + ${cargo_passed:-0}))
failed=$((ctest_failed + py_failed + ${cargo_failed:-0}))
echo "summary: $passed passed, $failed failed, $((ctest_skipped + py_skipped)) skipped"
