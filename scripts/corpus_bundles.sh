#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole-corpus pairing (issue 17's figure), made here without a GPU: each front end's chosen
# plan for every configuration of a suite (the kept tuning records' choices, no variants), packed
# as one archive the device tool can carry (bundles-corpus.tar.xz, under its 64 MiB).
# Usage: scripts/corpus_bundles.sh [SUITE]   (default configs/tilegym.json)
# Then, through the device tool, carrying bundles-corpus.tar.xz (two calls: the sweep takes about
# twelve minutes; the second resumes the first's file, build/corpus/ on a still-warm machine):
#   PORTBENCH_SKIP_TESTS=1 PORTBENCH_SKIP_SWEEP=1 PORTBENCH_CORPUS=1 \
#     PORTBENCH_CORPUS_REF=bundles-corpus/tilegym PORTBENCH_CORPUS_PORT=bundles-corpus/cutile_rust \
#     PORTBENCH_CORPUS_FILE=build/corpus/corpus.h5 PORTBENCH_CORPUS_VERIFIED=build/corpus/verified \
#     PORTBENCH_CORPUS_RESUME=1 PORTBENCH_CORPUS_RUNS=4 PORTBENCH_CORPUS_TRITON=0 PORTBENCH_CORPUS_CUDA=0 \
#     PORTBENCH_CORPUS_FILTER='^(?!matmul/.*m=32768,)' bash scripts/device_run.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SUITE="${1:-configs/tilegym.json}"
rm -rf bundles-corpus bundles-corpus.tar.xz
PORTBENCH_TUNING=configs/tuning/tilegym-h200.json PORTBENCH_EXPORT_CHOSEN_ONLY=1 \
  bash scripts/export_tilegym.sh "$SUITE" bundles-corpus/tilegym | grep -E '^(summary|\[export\])'
kernels/cutile_rust/export.sh "$SUITE" bundles-corpus/cutile_rust --chosen-only \
  --tuning configs/tuning/cutile_rust-h200.json | grep -E '^(summary|skip):'
tar -cJf bundles-corpus.tar.xz bundles-corpus
ls -la bundles-corpus.tar.xz
