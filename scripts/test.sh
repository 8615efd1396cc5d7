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
ctest --preset "$PRESET" 2>&1 | tee build/$PRESET/ctest.log
if grep -q "Skipped" build/$PRESET/ctest.log; then
  reason="$(build/$PRESET/tests/gpu/launch/portbench.test.gpu.launch 2>&1 | grep -m1 -o 'no CUDA device: .*' || true)"
  echo "GPU tests were skipped here: ${reason:-see ctest -V}"
fi

echo "== exporter tests (pytest) =="
.venv/bin/python -m pytest -q tests/python

if [[ -f kernels/cutile_rust/Cargo.toml ]]; then
  echo "== cuTile Rust exporter tests (cargo test) =="
  bash kernels/cutile_rust/test.sh
fi
