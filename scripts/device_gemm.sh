#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 14's GPU call: the matrix products (matmul, bmm, group_gemm, splitk_reduce) of the cuTile
# Rust port against tilegym, with cuBLAS beside them. In one device call, within a time budget
# (default 470 s, under the 8 minutes the issue allows):
#   unpack  bundles-gemm.tar.xz when bundles-gemm/ is not there (the bundles travel packed);
#   build   the harness's portbench target (preset gpu);
#   run     tilegym -> cutile_rust, best of $RUNS, over the GEMM suite (--budget: no run starts
#           after its share; what did not start is NOT_RUN, and --resume on the file continues) (scripts/gemm_suite.py:
#           configs/tilegym.json's matrix products + configs/gemm_llm.json): numerics against fp64
#           and proof on both sides of every paired configuration, the figures of record;
#   check   portbench check of the port's group_gemm (numerics against fp64 and proof of its 48
#           configurations: tilegym's list-of-arrays group_gemm has no bundle, so it pairs with
#           nothing and the run does not check it), then an A/A run of it on the square fp16
#           configurations of the TFLOP/s table (its time);
#   tune    portbench tune of both front ends' variants on configs/gemm_tune.json (the port's
#           from bundles-gemm/cutile_rust_tune; records cutile_rust-<target>.json and
#           tilegym-<target>.json (the card's description, scripts/gpu_target.py) for the exporters' --tuning);
#   cublas  scripts/cublas_bench.py over the GEMM suite (torch.matmul / torch.bmm, CUPTI, cold L2);
# then the report, the TFLOP/s table (scripts/gemm_tflops.py) and logs.tgz in $OUT.
#
# Here (no GPU), once (scripts/gemm_bundles.sh does all of it):
#   python3 scripts/gemm_suite.py build/gemm.json
#   kernels/cutile_rust/export.sh build/gemm.json bundles-gemm/cutile_rust --chosen-only
#   kernels/cutile_rust/export.sh configs/gemm_tune.json bundles-gemm/cutile_rust_tune
#   bash scripts/export_tilegym.sh build/gemm.json bundles-gemm/tilegym
#   tar -cJf bundles-gemm.tar.xz bundles-gemm
# Then through the device tool, carrying bundles-gemm.tar.xz:  bash scripts/device_gemm.sh
#
# Env: PORTBENCH_GEMM_DIR (bundle folders, default bundles-gemm), PORTBENCH_GEMM_SUITE (the suite of
# the run and cuBLAS; default scripts/gemm_suite.py's), PORTBENCH_GEMM_STEPS (default
# "build run check tune cublas"), PORTBENCH_GEMM_BUDGET (seconds for the whole call, default 470),
# PORTBENCH_GEMM_RUNS (default 4), PORTBENCH_GEMM_RUN_SHARE (the run's percent of a shared device, default 50), PORTBENCH_GEMM_RUN_DEVICES (e.g. 0,1; default 0),
# PORTBENCH_GEMM_TUNE_DEVICES and PORTBENCH_GEMM_AUX_DEVICE (check and cuBLAS; defaults: the run's
# first device), PORTBENCH_GEMM_FILTER (a --filter regex for the run, default all). Steps on
# disjoint devices run at the same time, steps sharing a device one after another with shares of
# the budget. portbench run --dry-run estimates the run at ~1000 s on one device (95 paired
# configurations x 4 runs; the 16384 and 32768 matmuls are three quarters of it), check ~83 s,
# the A/A ~37 s: on an 8-GPU host run 0,1,2,3, tune 4, aux 5; on a 4-GPU host leave out the
# 32768^3 matmuls (PORTBENCH_GEMM_FILTER='^(?!matmul/.*m=32768)', ~400 s of run) on run 0,1.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
START=$(date +%s)
OUT="${OUT:-$ROOT/build/device-out}"
FINAL="$OUT"
OUT="$FINAL/logs"
mkdir -p "$OUT"
# The device tool returns a few files: logs come back as one archive, results beside it.
trap 'tar -C "$FINAL" -czf "$FINAL/logs.tgz" logs && rm -rf "$FINAL/logs"' EXIT
BIN=build/gpu/harness/cli/portbench
G="${PORTBENCH_GEMM_DIR:-bundles-gemm}"
STEPS=" ${PORTBENCH_GEMM_STEPS:-build run check tune cublas} "
BUDGET="${PORTBENCH_GEMM_BUDGET:-470}"
RUNS="${PORTBENCH_GEMM_RUNS:-4}"
RUN_DEV="${PORTBENCH_GEMM_RUN_DEVICES:-0}"
TUNE_DEV="${PORTBENCH_GEMM_TUNE_DEVICES:-${RUN_DEV%%,*}}"
AUX_DEV="${PORTBENCH_GEMM_AUX_DEVICE:-${RUN_DEV%%,*}}"
OPS="matmul bmm group_gemm splitk_reduce"
has() { [[ "$STEPS" == *" $1 "* ]]; }
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
GPU_NAME="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
# The tuning records are for the card this call got (an H100 lent for an H200 tunes for h100).
IFS=$'\t' read -r TARGET CARD <<< "$(python3 scripts/gpu_target.py "$GPU_NAME" || echo "none")"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1

if [[ ! -d "$G" && -f "$G.tar.xz" ]]; then
  tar -xJf "$G.tar.xz" || { echo "cannot unpack $G.tar.xz"; exit 1; }
  echo "unpacked $G.tar.xz ($(du -sm "$G" | cut -f1) MiB) in $(( $(date +%s) - START )) s"
fi
[[ -d "$G/cutile_rust" && -d "$G/tilegym" ]] || { echo "no $G/cutile_rust and $G/tilegym (carry $G.tar.xz)"; exit 1; }

if has build; then
  echo "== build (preset gpu, target portbench) =="
  if ! { cmake --preset gpu -DPORTBENCH_WERROR=OFF && cmake --build --preset gpu --target portbench -j "$(nproc)"; } > "$OUT/build.log" 2>&1; then
    tail -30 "$OUT/build.log"; echo "BUILD FAILED"; exit 1
  fi
  echo "built in $(( $(date +%s) - START )) s"
fi
[[ -x "$BIN" ]] || { echo "no $BIN: run with the build step"; exit 1; }
# PORTBENCH_GEMM_SUITE: a suite of one's own (e.g. only the configurations of the TFLOP/s
# table) for the run and cuBLAS, instead of the whole GEMM suite.
if [[ -n "${PORTBENCH_GEMM_SUITE:-}" ]]; then
  cp "$PORTBENCH_GEMM_SUITE" "$OUT/gemm.json" || exit 1
else
  python3 scripts/gemm_suite.py "$OUT/gemm.json" || exit 1
fi

# Device lanes: steps on disjoint devices run at the same time; steps sharing a device run one
# after another with shares of the budget. The run is one lane when its devices are its own;
# tune and aux (check, group_gemm A/A, cuBLAS) share a lane when they share a device.
overlap() { local a b; for a in ${1//,/ }; do for b in ${2//,/ }; do [[ "$a" == "$b" ]] && return 0; done; done; return 1; }
REMAIN=$(( $(left) - 25 ))   # room for the report, the table and the archive
run_alone=1 side_alone=1
{ overlap "$RUN_DEV" "$TUNE_DEV" || overlap "$RUN_DEV" "$AUX_DEV"; } && run_alone=0
overlap "$TUNE_DEV" "$AUX_DEV" && side_alone=0
# PORTBENCH_GEMM_RUN_SHARE: the run's percent of the time when it shares its device (default 50).
SHARE="${PORTBENCH_GEMM_RUN_SHARE:-50}"
if (( run_alone )); then T_RUN=$REMAIN SIDE=$REMAIN; else T_RUN=$(( REMAIN * SHARE / 100 )) SIDE=$(( REMAIN * (100 - SHARE) / 100 )); fi
# Tune and aux on one device split its share, unless one of them has no step in this call.
if (( side_alone )) || ! has tune || ! { has check || has cublas; }; then T_TUNE=$SIDE T_AUX=$SIDE; else T_TUNE=$(( SIDE * 55 / 100 )) T_AUX=$(( SIDE * 45 / 100 )); fi
echo "budget: ${REMAIN} s left: run ${T_RUN} s on $RUN_DEV$( (( run_alone )) || echo ' (then the rest)'), tune ${T_TUNE} s on $TUNE_DEV, check+cuBLAS ${T_AUX} s on $AUX_DEV$( (( side_alone )) && echo ' (side by side)' || echo ' (one after the other)')"

lane_run() {
  has run || return 0
  local t0; t0=$(date +%s)
  local filter=()
  [[ -n "${PORTBENCH_GEMM_FILTER:-}" ]] && filter=(--filter "$PORTBENCH_GEMM_FILTER")
  timeout "$T_RUN" "$BIN" run --ref "$G/tilegym" --port "$G/cutile_rust" --suite "$OUT/gemm.json" "${filter[@]}" \
    --devices "$RUN_DEV" --runs "$RUNS" --time-cap 0.2 --min-samples 8 --timeout 120 --budget $(( T_RUN - 40 )) \
    --out "$OUT/gemm_run.h5" --overwrite > "$OUT/run.txt" 2>&1
  echo "run: exit $?, $(( $(date +%s) - t0 )) s" > "$OUT/run.status"
}
lane_tune() {
  has tune || return 0
  local t0 side dirs op share
  t0=$(date +%s)
  share=$(( T_TUNE * 60 / 100 ))
  for side in cutile_rust tilegym; do
    dirs=()
    # The port's variants are in a folder of their own (configs/gemm_tune.json's configurations).
    local from="$G/$side"
    [[ $side == cutile_rust ]] && from="$G/cutile_rust_tune"
    for op in $OPS; do [[ -d "$from/$op" ]] && dirs+=("$from/$op"); done
    (( ${#dirs[@]} )) || continue
    timeout "$share" "$BIN" tune "${dirs[@]}" --suite configs/gemm_tune.json --runs 2 --time-cap 0.2 --timeout 120 --budget $(( share - 30 )) \
      --devices "$TUNE_DEV" --target "$TARGET" --gpu "${CARD:-none}" --out "$OUT/$side-$TARGET.json" > "$OUT/tune_$side.txt" 2>&1
    echo "tune $side: exit $?, $(( $(date +%s) - t0 )) s" >> "$OUT/tune.status"
    share=$(( T_TUNE - ($(date +%s) - t0) - 5 ))
    (( share > 30 )) || break
  done
}
lane_aux() {
  local t0; t0=$(date +%s)
  if has check; then
    # The port's group_gemm pairs with nothing: its numerics against fp64 and proof here (the
    # run checks both sides of every paired configuration; --dry-run: ~83 s).
    timeout $(( T_AUX * 45 / 100 )) "$BIN" check "$G/cutile_rust/group_gemm" --device "${AUX_DEV%%,*}" --timeout 120 \
      > "$OUT/check.txt" 2>&1
    echo "check: exit $?, $(( $(date +%s) - t0 )) s" > "$OUT/aux.status"
    # The port's group_gemm time on the TFLOP/s table's configurations (M = N = K = 8192).
    timeout $(( T_AUX * 25 / 100 )) "$BIN" run --aa --ref "$G/cutile_rust/group_gemm" --suite "$OUT/gemm.json" \
      --filter 'k=8192,m=8192,n=8192' --devices "$AUX_DEV" --runs 1 --time-cap 0.1 --min-samples 5 --timeout 120 \
      --out "$OUT/group_gemm.h5" --overwrite > "$OUT/group_gemm.txt" 2>&1
    echo "group_gemm A/A: exit $?, $(( $(date +%s) - t0 )) s" >> "$OUT/aux.status"
  fi
  if has cublas; then
    CUDA_VISIBLE_DEVICES="$AUX_DEV" timeout $(( T_AUX - ($(date +%s) - t0) - 5 )) python3 scripts/cublas_bench.py \
      --suite "$OUT/gemm.json" --ops matmul,bmm,group_gemm --time-cap 1.0 --out "$OUT/cublas.jsonl" > "$OUT/cublas.txt" 2>&1
    echo "cublas: exit $?, $(( $(date +%s) - t0 )) s" >> "$OUT/aux.status"
  fi
}
side_lanes() {
  if (( side_alone )); then lane_tune & lane_aux & wait; else lane_tune; lane_aux; fi
}
if (( run_alone )); then
  lane_run & side_lanes & wait
else
  lane_run; side_lanes
fi

echo "== results =="
cat "$OUT"/*.status 2>/dev/null
if [[ -f "$OUT/check.txt" ]]; then
  echo "-- check of the port's group_gemm (operator, numerics, status: count):"
  awk 'NF > 4 && $1 == "cutile_rust" {n[$2 " " $4 " " $5]++} END {for (k in n) print "  " k, n[k]}' "$OUT/check.txt" | sort
  grep -E ' (FAIL|ERROR|CRASH|HANG|NOT_CHECKED) ' "$OUT/check.txt" | cut -c1-220 | head -10
fi
if [[ -f "$OUT/gemm_run.h5" ]]; then
  grep -E "^(geomean|numerics|worker time|wall)" "$OUT/run.txt" | tail -6
  grep -c "not paired" "$OUT/run.txt" | sed 's/^/not paired: /'
  "$BIN" report "$OUT/gemm_run.h5" --format md > "$OUT/report.md" 2>&1
  "$BIN" report "$OUT/gemm_run.h5" --format json > "$OUT/report.json" 2>&1
  grep -A8 "^## Operators" "$OUT/report.md"
  awk '$0 ~ / (FAIL|ERROR|NOT_CHECKED|FOREIGN_KERNEL|OUTPUT_NOT_WRITTEN|NONDETERMINISTIC) / {print substr($0, 1, 200)}' "$OUT/run.txt" | head -10
fi
if [[ -f "$OUT/group_gemm.h5" ]]; then
  grep -E "^group_gemm/|^numerics" "$OUT/group_gemm.txt" | awk '{print substr($0, 1, 200)}' | tail -52 > "$OUT/group_gemm_rows.txt"
  grep -oE " (PASS|FAIL|NOT_CHECKED|ERROR) " "$OUT/group_gemm_rows.txt" | sort | uniq -c | sed 's/^/group_gemm numerics (both sides of the A\/A):/'
  "$BIN" report "$OUT/group_gemm.h5" --format json > "$OUT/group_gemm_report.json" 2>&1
fi
for side in cutile_rust tilegym; do
  [[ -f "$OUT/tune_$side.txt" ]] && { echo "-- tune $side"; tail -25 "$OUT/tune_$side.txt"; }
done
echo "== TFLOP/s (M=N=K 4096/8192 fp16, LLM shapes) =="
reports=()
for f in "$OUT/report.json" "$OUT/group_gemm_report.json"; do [[ -s "$f" ]] && reports+=("$f"); done
python3 scripts/gemm_tflops.py "${reports[@]}" $( [[ -s "$OUT/cublas.jsonl" ]] && echo --cublas "$OUT/cublas.jsonl" ) \
  --json "$OUT/tflops.jsonl" 2>&1 | tee "$OUT/tflops.txt" | cut -c1-230
cp "$OUT"/gemm_run.h5 "$OUT"/group_gemm.h5 "$OUT"/report.json "$OUT"/cublas.jsonl "$OUT"/cutile_rust-"$TARGET".json \
  "$OUT"/tilegym-"$TARGET".json "$OUT"/tflops.txt "$FINAL"/ 2>/dev/null
echo "total $(( $(date +%s) - START )) s"
