#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue-6 figures on the GPU host, after scripts/device_run.sh built the harness and checked
# every front end's smoke bundles: the cuTile Python -> cuTile Rust sweep over the tilegym
# configurations of the exported operators (bundles-tilegym/, from
# `scripts/export_bundles.sh configs/tilegym.json bundles-tilegym`), cuTile Python -> Triton on
# the largest configuration of each operator (configs/largest.json), the per-operator report,
# where the workers' time went, and the achieved bandwidth of the fastest front end on the
# three largest configurations of each operator (the port issues' figure) against the measured copy
# bandwidth.
# Usage: scripts/device_corpus.sh OUTDIR [RUNS]
# Env: PORTBENCH_DEVICES (e.g. 0,1: one worker per GPU), PORTBENCH_CORPUS_TIMEOUT (s, default 420),
# PORTBENCH_CORPUS_BUDGET (s: `run --budget`, no run starts after it; 0 = none),
# PORTBENCH_CORPUS_SUITE (default configs/tilegym.json), PORTBENCH_CORPUS_REF / _PORT (bundle
# folders, default bundles-tilegym/cutile_python and cutile_rust; one operator's bundle folder
# re-times that operator alone), PORTBENCH_CORPUS_TRITON=0 (skip the Triton step),
# PORTBENCH_CORPUS_TRITON_RUNS (default RUNS; also the CUDA C++ step's), PORTBENCH_CORPUS_CUDA=0
# (skip cuTile Python -> CUDA C++ on the largest configurations), PORTBENCH_CORPUS_MAIN=0 (skip the
# cuTile Python -> cuTile Rust sweep), PORTBENCH_DIAGNOSE_N (default 10: the slowest configurations
# of the sweep that scripts/diagnose_slow.sh shows, with their top findings),
# PORTBENCH_CORPUS_FILE (the results file, default OUTDIR/corpus.h5), PORTBENCH_CORPUS_RESUME=1
# (continue that file with --resume when it exists: a sweep longer than one device call),
# PORTBENCH_CORPUS_EXTRA (more `portbench run` options, e.g. --host-inputs),
# PORTBENCH_CORPUS_VERIFIED (the verified-output store, default OUTDIR/verified, kept between
# calls as OUTDIR/verified.tgz: carry it back with the results file and name it in
# PORTBENCH_CORPUS_VERIFIED_FROM, or a resumed sweep verifies every configuration again; the
# tenth session's two-call sweep spent 223 s of 731 on that), PORTBENCH_CORPUS_FILTER (`run
# --filter` regular expression).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${1:?usage: device_corpus.sh OUTDIR [RUNS]}"
RUNS="${2:-1}"
BIN=build/gpu/harness/cli/portbench
DEV=(--devices "${PORTBENCH_DEVICES:-0}")
mkdir -p "$OUT"
RESULTS="${PORTBENCH_CORPUS_FILE:-$OUT/corpus.h5}"
if [[ "${PORTBENCH_CORPUS_MAIN:-1}" != 0 ]]; then
start=$(date +%s)
mode=(--overwrite)
if [[ "${PORTBENCH_CORPUS_RESUME:-0}" == 1 && -f "$RESULTS" ]]; then
  mode=(--resume); echo "resuming $RESULTS"
fi
# shellcheck disable=SC2206
extra=(${PORTBENCH_CORPUS_EXTRA:-})
VERIFIED="${PORTBENCH_CORPUS_VERIFIED:-$OUT/verified}"
for packed in "$VERIFIED.tgz" "${PORTBENCH_CORPUS_VERIFIED_FROM:-}"; do
  [[ -f "$packed" && ! -d "$VERIFIED" ]] && mkdir -p "$VERIFIED" && tar -xzf "$packed" -C "$VERIFIED" && echo "verified outputs from $packed"
done
mkdir -p "$VERIFIED"
extra+=(--verified-cache "$VERIFIED")
# PORTBENCH_CORPUS_FILTER: a regular expression on configuration ids (`run --filter`), e.g.
# '^(?!matmul/.*m=32768,)' leaves out the nine matmul 32768^3 configurations.
[[ -n "${PORTBENCH_CORPUS_FILTER:-}" ]] && extra+=(--filter "$PORTBENCH_CORPUS_FILTER")
timeout "${PORTBENCH_CORPUS_TIMEOUT:-420}" "$BIN" run --ref "${PORTBENCH_CORPUS_REF:-bundles-tilegym/cutile_python}" \
  --port "${PORTBENCH_CORPUS_PORT:-bundles-tilegym/cutile_rust}" \
  --suite "${PORTBENCH_CORPUS_SUITE:-configs/tilegym.json}" "${DEV[@]}" --runs "$RUNS" --time-cap 0.2 --min-samples 8 --timeout 120 \
  --budget "${PORTBENCH_CORPUS_BUDGET:-0}" \
  "${extra[@]}" --out "$RESULTS" "${mode[@]}" > "$OUT/corpus.txt" 2>&1
rc=$?
# One archive, not a file per verified output (the device tool returns at most 8 files).
tar -C "$VERIFIED" -czf "$VERIFIED.tgz" . && rm -rf "$VERIFIED"
echo "${PORTBENCH_CORPUS_REF:-bundles-tilegym/cutile_python} -> ${PORTBENCH_CORPUS_PORT:-bundles-tilegym/cutile_rust} sweep: exit $rc, $(( $(date +%s) - start )) s"
grep -v "not paired" "$OUT/corpus.txt" | tail -3
"$BIN" report "$RESULTS" --format md > "$OUT/corpus_report.md" 2>&1
grep -A30 "^## Operators" "$OUT/corpus_report.md"
python3 scripts/sweep_cost.py "$RESULTS"
fi

# cuTile Python against a second front end on the largest configuration of each operator (those
# the front end has), for the bandwidth table.
time_largest() {   # FOLDER NAME
  "$BIN" run --ref bundles-tilegym/cutile_python --port "bundles-tilegym/$1" --suite configs/largest.json "${DEV[@]}" \
    --runs "${PORTBENCH_CORPUS_TRITON_RUNS:-$RUNS}" --time-cap 0.2 --min-samples 8 --timeout 180 --out "$OUT/largest_$1.h5" --overwrite \
    > "$OUT/largest_$1.txt" 2>&1
  echo "cuTile Python -> $2, largest configurations: exit $?"
  grep -E "^[a-z_]+/|geomean|^worker time|^numerics" "$OUT/largest_$1.txt" | cut -c1-160
}
[[ "${PORTBENCH_CORPUS_TRITON:-1}" != 0 ]] && time_largest triton Triton
# CUDA C++ has rms_norm and layer_norm: the hand-written ceiling for those.
[[ "${PORTBENCH_CORPUS_CUDA:-1}" != 0 && -d bundles-tilegym/cuda_cpp ]] && time_largest cuda_cpp "CUDA C++"

"$BIN" cost --suite configs/tilegym.json > "$OUT/cost.jsonl"
COPY=$(python3 scripts/copy_bandwidth.py 2>/dev/null || echo 0)
# shellcheck disable=SC2046
python3 scripts/bandwidth_table.py --top 3 "$OUT/cost.jsonl" "${COPY:-0}" $(ls "$RESULTS" "$OUT"/largest_*.h5 2>/dev/null)
# Configurations too small to approach the copy asymptote (swiglu's only one moves 393 KB): the
# bandwidth a copy of the same bytes reaches, timed on the device as portbench times kernels.
SMALL=$("$BIN" cost --suite configs/largest.json | python3 -c '
import json, sys
print(" ".join(str(int(d["bytes"])) for d in map(json.loads, sys.stdin) if "bytes" in d and d["bytes"] < 64e6))')
[[ -n "$SMALL" ]] && python3 scripts/copy_bandwidth.py --bytes $SMALL

# Why the slowest configurations are slow (docs/diagnose.md), against this run's copy bandwidth.
if [[ -f "$RESULTS" ]]; then
  copy_args=()
  awk -v c="${COPY:-0}" 'BEGIN { exit !(c > 0) }' && copy_args=(--copy-gbps "$COPY")
  PORTBENCH="$BIN" bash scripts/diagnose_slow.sh "$RESULTS" "${PORTBENCH_DIAGNOSE_N:-10}" -- "${copy_args[@]}" \
    2>&1 | tee "$OUT/diagnose.txt"
fi
