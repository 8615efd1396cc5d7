#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 16's device call in one command (docs/device-log.md, "Thirty-fifth session", command B):
# the gpu tests, the attention_sink_decode tune (its choices applied), the 57 decode
# configurations paired tilegym -> cutile_rust best of 4 with the searched floor, and
# mla_decoding_split_kv cold and with a warm L2 (device_run.sh selects it from the suite by --op).
# Logs come back in $OUT/logs.tgz.
#
# Here (no GPU), on a fresh checkout after `bash scripts/setup.sh` (about 15 min):
#   bash scripts/tune_bundles.sh flash_decode attention_sink_decode gemma_attention_decode \
#     mla_decoding mla_decoding_split_kv
#   PORTBENCH_TUNING=configs/tuning/tilegym-h200.json PORTBENCH_EXPORT_CHOSEN_ONLY=1 \
#     bash scripts/export_tilegym.sh build/tune/suite.json bundles-ref/tilegym
#   bash scripts/export_bundles.sh configs/smoke.json && tar -cJf bundles-smoke.tar.xz bundles
# Then through the device tool, carrying bundles-ref, bundles-tilegym, build/tune and
# bundles-smoke.tar.xz:  bash scripts/device_decode.sh
# PORTBENCH_DEADLINE_S (default 500) bounds the whole call; the stages after the gpu tests take what
# is left, so a late stage is cut short rather than the logs lost.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
for need in bundles-ref/tilegym bundles-tilegym/cutile_rust build/tune/suite.json; do
  [[ -e "$need" ]] || { echo "device_decode: $need is missing (see the comment at the top of $0)" >&2; exit 2; }
done
export PORTBENCH_SKIP_SWEEP=1
export PORTBENCH_DEADLINE_S="${PORTBENCH_DEADLINE_S:-500}"
# PORTBENCH_RUST_TUNE_OPS: the operators tuned (default attention_sink_decode); "none" skips the tune.
tune_ops="${PORTBENCH_RUST_TUNE_OPS:-attention_sink_decode}"
[[ "$tune_ops" != none ]] && export PORTBENCH_RUST_TUNE=1 PORTBENCH_RUST_TUNE_OPS="$tune_ops"
export PORTBENCH_CUTILE_RUST_TUNE_TIMEOUT="${PORTBENCH_CUTILE_RUST_TUNE_TIMEOUT:-150}"
export PORTBENCH_TUNE_SUITE=build/tune/suite.json PORTBENCH_TUNE_APPLY=1 PORTBENCH_TUNE_RUNS=2 PORTBENCH_TUNE_TIME_CAP=0.1
export PORTBENCH_PAIRS_SUITE=build/tune/suite.json PORTBENCH_PAIRS_RUNS=4 PORTBENCH_PAIRS_FLOOR=search
export PORTBENCH_PAIRS_REF=bundles-ref/tilegym PORTBENCH_PAIRS_PORT=bundles-tilegym/cutile_rust
export PORTBENCH_WARM_L2_OPS=mla_decoding_split_kv PORTBENCH_WARM_L2_SUITE=build/tune/suite.json PORTBENCH_WARM_L2_RUNS=4
exec bash scripts/device_run.sh
