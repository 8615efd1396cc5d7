#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Everything one H200 session needs, in one call: build the harness with the host's toolkit
# headers (preset gpu), run the gpu-labelled tests, check every bundle, run the smoke sweep when
# the measurement engine exists, and print a short table last. Logs go to $OUT.
#
# Here (no GPU):  bash scripts/export_bundles.sh configs/smoke.json
# Then, through the device tool, carrying bundles/:  bash scripts/device_run.sh
# Optional stages, by environment: PORTBENCH_TILEGYM_TUNE / _RUST_TUNE (tune), PORTBENCH_CHECK_DIRS
# (check bundle folders), PORTBENCH_CORPUS (corpus sweep), PORTBENCH_INPUTS_BENCH (the same
# operators swept with host- then device-generated inputs; _OPS, _RUNS, _TIMEOUT),
# PORTBENCH_REF_BENCH (reference verification benchmark), PORTBENCH_GEMM_PROBE (cuBLAS and Triton
# fp16/bf16 product sums against fp64), PORTBENCH_PAIRS_SUITE (a few operators paired: _REF, _PORT,
# _RUNS, _BEFORE_BIN, _FLOOR), PORTBENCH_DECODE_FLOOR (a copy's and a read's time per byte count),
# PORTBENCH_TUNE_APPLY (the tuned bundles take the record's choices), PORTBENCH_VARIANTS_SUITE
# (every variant's numerics in _DIRS on that suite); PORTBENCH_SKIP_TESTS
# skips the gpu tests.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${OUT:-$ROOT/build/device-out}"
# The device tool returns at most 8 files: logs go to $OUT/logs and come back as one archive.
FINAL="$OUT"
OUT="$FINAL/logs"
mkdir -p "$OUT"
trap 'tar -C "$FINAL" -czf "$FINAL/logs.tgz" logs && rm -rf "$FINAL/logs"' EXIT
BIN=build/gpu/harness/cli/portbench
# One device call may run 600 s: every optional stage below gets at most what is left of
# PORTBENCH_DEADLINE_S (default 570) from here, so the logs always come back.
SCRIPT_START=$(date +%s)
left_s() { local cap="$1" left=$(( ${PORTBENCH_DEADLINE_S:-570} - ($(date +%s) - SCRIPT_START) - 10 )); (( left < cap )) && cap=$left; (( cap < 1 )) && cap=1; echo "$cap"; }

{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,utilization.gpu \
    --format=csv 2>&1
  nvcc --version 2>&1 | tail -2
} > "$OUT/gpu.txt"

# PORTBENCH_PREBUILT: a portbench binary an earlier call built on this kind of machine (returned
# in its $OUT as portbench.bin and carried back), used when the gpu tests are skipped and it runs:
# a fresh machine then spends no time building.
if [[ -n "${PORTBENCH_PREBUILT:-}" && -n "${PORTBENCH_SKIP_TESTS:-}" ]] && "$PORTBENCH_PREBUILT" --help > /dev/null 2>&1; then
  mkdir -p "$(dirname "$BIN")" && cp "$PORTBENCH_PREBUILT" "$BIN" && echo "== prebuilt $PORTBENCH_PREBUILT =="
else
  echo "== build (preset gpu) =="
  if ! { cmake --preset gpu -DPORTBENCH_WERROR=OFF && cmake --build --preset gpu -j "$(nproc)"; } > "$OUT/build.log" 2>&1; then
    tail -40 "$OUT/build.log"
    echo "BUILD FAILED (see $OUT/build.log)"
    exit 1
  fi
  cp "$BIN" "$FINAL/portbench.bin"
fi

# Bundle folders over the device tool's 64 MiB carry travel packed (scripts/export_tilegym.sh):
# bundles-tilegym/*.tar.xz hold folders of bundles-tilegym/, bundles-*.tar.xz at the root whole
# bundles-* folders.
for packed in bundles-tilegym/*.tar.xz; do
  [[ -f "$packed" ]] || continue
  tar -xJf "$packed" -C bundles-tilegym && echo "unpacked $packed"
done
for packed in bundles-*.tar.xz; do
  [[ -f "$packed" && ! -d "${packed%.tar.xz}" ]] || continue
  tar -xJf "$packed" && echo "unpacked $packed"
done

ctest_rc=skipped check_rc=skipped
if [[ -z "${PORTBENCH_SKIP_TESTS:-}" ]]; then
  echo "== gpu tests =="
  rm -f "$OUT/summary.tsv"
  PORTBENCH_GPU_SUMMARY="$OUT/summary.tsv" ctest --preset gpu --output-on-failure > "$OUT/ctest-gpu.log" 2>&1
  ctest_rc=$?
  tail -15 "$OUT/ctest-gpu.log"
  # Inputs are generated on the device by default; if that path fails its own tests, the
  # measurements of this call fall back to host-generated inputs rather than being lost.
  if grep -qE '(InputGenerator|DeviceGeneratedInputs)[^ ]* .*(\*\*\*Failed|Exception)' "$OUT/ctest-gpu.log"; then
    echo "device input generation failed its gpu tests: this call's sweeps use --host-inputs"
    export PORTBENCH_CORPUS_EXTRA="${PORTBENCH_CORPUS_EXTRA:-} --host-inputs"
  fi

  echo "== portbench check bundles =="
  # bundles/tilegym: the smoke export's reference front end, plans with fill and copy steps included
  "$BIN" check bundles/cutile_python bundles/cutile_python_clusters bundles/cutile_rust bundles/triton bundles/cuda_cpp \
    $( [[ -d bundles/tilegym ]] && echo bundles/tilegym ) > "$OUT/check.txt" 2>&1
  check_rc=$?
fi

if [[ -z "${PORTBENCH_SKIP_SWEEP:-}" ]] && "$BIN" --help 2>/dev/null | grep -q " run "; then
  echo "== smoke sweep =="
  bash scripts/smoke_sweep.sh "$OUT" > "$OUT/sweep.log" 2>&1
  cp "$OUT"/*.h5 "$FINAL"/ 2>/dev/null
  grep -E "^(==|geomean|wall|rms_norm|vector_add)" "$OUT/sweep.log" | tail -40
fi

# Optional parts: numerics of whole bundle folders, tile experiments, the operator corpus
# (issue 6) and the reference verification benchmark.
if [[ -n "${PORTBENCH_TUNE:-}" && -d bundles-tune ]]; then
  echo "== tile experiments (bundles-tune, scripts/tune_variants.sh) =="
  for d in bundles-tune/*/; do
    echo "-- $(basename "$d")"
    bash scripts/tune_variants.sh time "$d" "$ROOT/$BIN" 2>&1 | tee -a "$OUT/tune.txt"
  done
fi
# Ahead-of-time tuning (docs/cli.md, `portbench tune`): every tuning variant (configs[].variants)
# of the listed operators against its configuration's default plan, and the tuning record the
# exporter reads with --tuning. tune_front_end NAME OPS... writes $OUT/NAME-TARGET.json;
# PORTBENCH_TUNE_SUITE limits it to a suite's configurations (default configs/tilegym.json).
tune_front_end() {
  local name="$1"; shift
  local dirs=() op target card line
  for op in "$@"; do [[ -d "bundles-tilegym/$name/$op" ]] && dirs+=("bundles-tilegym/$name/$op"); done
  echo "== portbench tune: $name variants ($*) =="
  [[ ${#dirs[@]} -gt 0 ]] || { echo "no bundles-tilegym/$name bundles for $*"; return; }
  # The record is for the card this call got (PORTBENCH_TUNE_TARGET: another description, which
  # tune then refuses unless it is this card): an H100 lent for an H200 writes NAME-h100.json.
  line=$(python3 scripts/gpu_target.py ${PORTBENCH_TUNE_TARGET:+--target "$PORTBENCH_TUNE_TARGET"} \
    "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)") || { echo "tune $name skipped"; return; }
  IFS=$'\t' read -r target card <<< "$line"
  # PORTBENCH_TILEGYM_TUNE_TIMEOUT / PORTBENCH_CUTILE_RUST_TUNE_TIMEOUT: this front end's own cap.
  local own="PORTBENCH_${name^^}_TUNE_TIMEOUT" start cap; start=$(date +%s)
  cap=$(left_s "${!own:-${PORTBENCH_TUNE_TIMEOUT:-300}}")
  # --budget stops starting candidates in time for the record to be written within the cap.
  timeout "$cap" "$BIN" tune "${dirs[@]}" --suite "${PORTBENCH_TUNE_SUITE:-configs/tilegym.json}" --budget $(( cap > 40 ? cap - 30 : 10 )) \
    --runs "${PORTBENCH_TUNE_RUNS:-2}" --time-cap "${PORTBENCH_TUNE_TIME_CAP:-0.2}" --timeout 120 --target "$target" \
    --gpu "$card" --out "$OUT/$name-$target.json" > "$OUT/${name}_tune.txt" 2>&1
  echo "tune $name exit $?, $(( $(date +%s) - start )) s"
  tail -"${PORTBENCH_TUNE_TAIL:-60}" "$OUT/${name}_tune.txt"
  cp "$OUT/$name-$target.json" "$FINAL"/ 2>/dev/null
  # PORTBENCH_TUNE_APPLY=1: the tuned bundles choose the record's variants, so a later stage of
  # this call (PORTBENCH_PAIRS_SUITE with _REF on them) times the tuned plans.
  if [[ -n "${PORTBENCH_TUNE_APPLY:-}" && -f "$OUT/$name-$target.json" ]]; then
    python3 scripts/apply_tuning.py "$OUT/$name-$target.json" "${dirs[@]}"
  fi
}
if [[ -n "${PORTBENCH_TILEGYM_TUNE:-}" ]]; then
  # shellcheck disable=SC2086
  tune_front_end tilegym ${PORTBENCH_TILEGYM_TUNE_OPS:-rms_norm layer_norm_legacy softmax rope silu_and_mul swiglu dropout}
fi
if [[ -n "${PORTBENCH_RUST_TUNE:-}" ]]; then
  # shellcheck disable=SC2086
  tune_front_end cutile_rust ${PORTBENCH_RUST_TUNE_OPS:-rope silu_and_mul dropout}
fi
if [[ -n "${PORTBENCH_CHECK_DIRS:-}" ]]; then
  # One `check` per folder, so a slow or cut-short folder costs only its own rows.
  echo "== portbench check $PORTBENCH_CHECK_DIRS =="
  : > "$OUT/check_dirs.txt"
  for d in $PORTBENCH_CHECK_DIRS; do
    [[ -d "$d" ]] || { echo "check: $d missing"; continue; }
    t0=$(date +%s)
    timeout "$(left_s "${PORTBENCH_CHECK_TIMEOUT:-300}")" "$BIN" check "$d" >> "$OUT/check_dirs.txt" 2>&1
    echo "check $d: exit $?, $(( $(date +%s) - t0 )) s"
  done
  echo "verdicts per front end, operator and numerics:"
  awk 'NF > 4 && $1 != "frontend" && $1 != "device" {n[$1 " " $2 " " $4]++} END {for (k in n) print k, n[k]}' \
    "$OUT/check_dirs.txt" | sort
  grep -E ' (FAIL|ERROR|NOT_CHECKED|NOT_RUN|CRASH|HANG) ' "$OUT/check_dirs.txt" | cut -c1-220 | head -20
fi
if [[ -n "${PORTBENCH_VARIANTS_SUITE:-}" ]]; then
  # Every tuning variant of some bundle folders on a small suite (edge shapes: odd lengths, padded
  # heads, optional tensors), through `tune`, which checks each variant's numerics before timing it.
  read -ra vdirs <<< "${PORTBENCH_VARIANTS_DIRS:-}"
  echo "== variants' numerics: ${vdirs[*]} on $PORTBENCH_VARIANTS_SUITE =="
  cap=$(left_s "${PORTBENCH_VARIANTS_TIMEOUT:-90}")
  timeout "$cap" "$BIN" tune "${vdirs[@]}" --suite "$PORTBENCH_VARIANTS_SUITE" --runs 1 --time-cap 0.05 --timeout 60 \
    --budget $(( cap > 20 ? cap - 10 : 10 )) --out "$OUT/variants.json" > "$OUT/variants.txt" 2>&1
  echo "variants exit $?"
  python3 - "$OUT/variants.json" <<'PY' 2>&1 | tail -40
import json, sys
from collections import Counter
try:
    choices = json.load(open(sys.argv[1]))["choices"]
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"{sys.argv[1]}: no tuning record ({e})")
n = Counter()
for c in choices:
    for m in c.get("measured", []):
        n[m.get("numerics", "NONE")] += 1
        if m.get("numerics") != "PASS":
            print(f"{c['op']} {c['params']} {m['variant']}: {m.get('numerics')} {m.get('status')}")
print("variants' numerics:", dict(n))
PY
fi
if [[ -n "${PORTBENCH_GEMM_PROBE:-}" ]]; then
  # How far cuBLAS's and a Triton kernel's long fp16/bf16 sums land from fp64, beside the
  # rounding rule's accumulation term (docs/reference.md).
  echo "== gemm accumulation probe (scripts/probe_gemm_accumulation.py) =="
  timeout "$(left_s 90)" python3 scripts/probe_gemm_accumulation.py 2>&1 | tee "$OUT/gemm_probe.txt"
fi
# A few operators paired (a port change checked before a whole sweep): run, report, diagnose,
# and the bandwidth of each operator's three largest configurations. pairs NAME BIN.
pairs() {
  local name="$1" bin="$2"
  echo "== $name: ${ref[*]} -> ${port[*]} on $PORTBENCH_PAIRS_SUITE ($bin) =="
  local t0
  t0=$(date +%s)
  timeout "$(left_s "${PORTBENCH_PAIRS_TIMEOUT:-200}")" "$bin" run --ref "${ref[@]}" --port "${port[@]}" --suite "$PORTBENCH_PAIRS_SUITE" \
    --runs "${PORTBENCH_PAIRS_RUNS:-2}" --time-cap 0.2 --min-samples 8 --timeout 120 --out "$OUT/$name.h5" --overwrite \
    > "$OUT/$name.txt" 2>&1
  echo "$name run exit $?, $(( $(date +%s) - t0 )) s"
  grep -v "not paired" "$OUT/$name.txt" | tail -5
  "$bin" report "$OUT/$name.h5" --format md > "$OUT/${name}_report.md" 2>&1
  grep -E "^\| " "$OUT/${name}_report.md" | head -30
  "$bin" diagnose "$OUT/$name.h5" --bundles "${ref[@]}" "${port[@]}" --no-sass --format md > "$OUT/${name}_diagnose.md" 2>&1
  [[ -s "$OUT/pairs_cost.jsonl" ]] &&
    python3 scripts/bandwidth_table.py --top 3 "$OUT/pairs_cost.jsonl" "${COPY_GBPS:-0}" "$OUT/$name.h5" 2>&1 | tee "$OUT/${name}_bandwidth.txt"
  # PORTBENCH_PAIRS_FLOOR=1: those rows again, each against torch moving its own bytes (a copy;
  # a read and a one-element kernel), timed here on the same GPU (scripts/decode_floor.py);
  # =search: also the fastest of read_search.py's read kernels and a one-element kernel.
  if [[ "${PORTBENCH_PAIRS_FLOOR:-0}" =~ ^(1|search)$ && -s "$OUT/pairs_cost.jsonl" && "$name" == pairs ]]; then
    local cases search=()
    [[ "$PORTBENCH_PAIRS_FLOOR" == search ]] && search=(--search)
    mapfile -t cases < <(python3 scripts/bandwidth_table.py --top 3 --list "$OUT/pairs_cost.jsonl" "${COPY_GBPS:-0}" "$OUT/$name.h5")
    timeout "$(left_s 240)" python3 scripts/decode_floor.py --json "$OUT/floor.json" "${search[@]}" "${COPY_GBPS:-0}" "${cases[@]}" > "$OUT/floor.txt" 2>&1 &&
      python3 scripts/bandwidth_table.py --top 3 --floor "$OUT/floor.json" "$OUT/pairs_cost.jsonl" "${COPY_GBPS:-0}" "$OUT/$name.h5" 2>&1 |
        tee "$OUT/${name}_bandwidth_floor.txt" || { echo "decode floor failed:"; tail -3 "$OUT/floor.txt"; }
  fi
  cp "$OUT/$name.h5" "$FINAL"/ 2>/dev/null
}
if [[ -n "${PORTBENCH_PAIRS_SUITE:-}" ]]; then
  # _REF and _PORT may each list several folders (space-separated), e.g. the tuned bundles of
  # this call's tune stage beside the chosen ones.
  read -ra ref <<< "${PORTBENCH_PAIRS_REF:-bundles-chosen/tilegym}"
  read -ra port <<< "${PORTBENCH_PAIRS_PORT:-bundles-chosen/cutile_rust}"
  COPY_GBPS=$(timeout 60 python3 scripts/copy_bandwidth.py 2>/dev/null || echo 0)
  echo "copy bandwidth $COPY_GBPS GB/s"
  # The suite's least bytes per configuration, once for every pairs stage below.
  "$BIN" cost --suite "$PORTBENCH_PAIRS_SUITE" > "$OUT/pairs_cost.jsonl" 2>/dev/null || rm -f "$OUT/pairs_cost.jsonl"
  pairs pairs "$BIN"
  # PORTBENCH_PAIRS_BEFORE_BIN: the same pairs with another portbench binary (an earlier
  # revision's, carried): a harness change's before and after on one GPU and the same bundles.
  if [[ -n "${PORTBENCH_PAIRS_BEFORE_BIN:-}" ]]; then
    pairs pairs_before "$PORTBENCH_PAIRS_BEFORE_BIN"
  fi
fi
# PORTBENCH_WARM_L2_OPS="OP ...": those operators paired twice, first with the clean cold L2
# portbench times with, then with --warm-l2 (the bytes the sample before left in the L2), and each
# kernel's time in both (scripts/kernel_medians.py): a kernel about as slow with its bytes in the
# L2 is held by its own work, not DRAM bandwidth. _FILTER selects configurations, _REF and _PORT
# (default PORTBENCH_PAIRS_REF/_PORT) the bundles, _SUITE the suite (default configs/tilegym.json).
if [[ -n "${PORTBENCH_WARM_L2_OPS:-}" ]]; then
  echo "== cold and warm L2: $PORTBENCH_WARM_L2_OPS =="
  read -ra wref <<< "${PORTBENCH_WARM_L2_REF:-${PORTBENCH_PAIRS_REF:-bundles-chosen/tilegym}}"
  read -ra wport <<< "${PORTBENCH_WARM_L2_PORT:-${PORTBENCH_PAIRS_PORT:-bundles-chosen/cutile_rust}}"
  wsel=()
  for op in $PORTBENCH_WARM_L2_OPS; do wsel+=(--op "$op"); done
  [[ -n "${PORTBENCH_WARM_L2_FILTER:-}" ]] && wsel+=(--filter "$PORTBENCH_WARM_L2_FILTER")
  for mode in cold warm; do
    extra=(); [[ $mode == warm ]] && extra=(--warm-l2)
    t0=$(date +%s)
    timeout "$(left_s 150)" "$BIN" run --ref "${wref[@]}" --port "${wport[@]}" --suite "${PORTBENCH_WARM_L2_SUITE:-configs/tilegym.json}" \
      "${wsel[@]}" --runs "${PORTBENCH_WARM_L2_RUNS:-2}" --time-cap 0.2 --min-samples 8 --timeout 120 "${extra[@]}" \
      --out "$OUT/l2_$mode.h5" --overwrite > "$OUT/l2_$mode.txt" 2>&1
    echo "$mode L2 run exit $?, $(( $(date +%s) - t0 )) s"
    grep -v "not paired" "$OUT/l2_$mode.txt" | tail -4
    cp "$OUT/l2_$mode.h5" "$FINAL"/ 2>/dev/null
  done
  python3 scripts/kernel_medians.py cold="$OUT/l2_cold.h5" warm="$OUT/l2_warm.h5" 2>&1 | tee "$OUT/l2_kernels.txt" ||
    echo "(read $FINAL/l2_cold.h5 and l2_warm.h5 with scripts/kernel_medians.py where h5py is)"
  # The three largest rows' verdicts with the warm times beside them (SHORT_EVEN_WARM_L2: every
  # side misses the figure's time even with its bytes, within half the L2, there), against this
  # call's floor if any.
  wcost="$OUT/l2_cost.jsonl"
  "$BIN" cost --suite "${PORTBENCH_WARM_L2_SUITE:-configs/tilegym.json}" > "$wcost" 2>/dev/null || rm -f "$wcost"
  COPY_GBPS=${COPY_GBPS:-$(timeout 60 python3 scripts/copy_bandwidth.py 2>/dev/null || echo 0)}
  l2=$(python3 -c 'import torch; print(torch.cuda.get_device_properties(0).L2_cache_size)' 2>/dev/null || echo 0)
  echo "copy bandwidth $COPY_GBPS GB/s, L2 $l2 bytes"
  wfloor=(); [[ -s "$OUT/floor.json" ]] && wfloor=(--floor "$OUT/floor.json")
  [[ -s "$wcost" ]] && python3 scripts/bandwidth_table.py --top 3 "${wfloor[@]}" --warm "$OUT/l2_warm.h5" --l2-bytes "$l2" \
    "$wcost" "$COPY_GBPS" "$OUT/l2_cold.h5" 2>&1 | tee "$OUT/l2_bandwidth.txt"
fi
# PORTBENCH_DECODE_FLOOR="NAME=BYTES ...": what any kernel (a copy, a read, a read and a second
# kernel) reaches moving those bytes with a cold, clean L2 (scripts/decode_floor.py).
if [[ -n "${PORTBENCH_DECODE_FLOOR:-}" ]]; then
  echo "== decode floor (scripts/decode_floor.py) =="
  gbps=${COPY_GBPS:-$(timeout 60 python3 scripts/copy_bandwidth.py)}
  # shellcheck disable=SC2086
  timeout "$(left_s 120)" python3 scripts/decode_floor.py "$gbps" $PORTBENCH_DECODE_FLOOR 2>&1 | tee "$OUT/floor.txt"
fi
if [[ -n "${PORTBENCH_CORPUS:-}" && -d "${PORTBENCH_CORPUS_REF:-bundles-tilegym/cutile_python}" ]]; then
  echo "== operator corpus: ${PORTBENCH_CORPUS_REF:-bundles-tilegym/cutile_python} -> ${PORTBENCH_CORPUS_PORT:-bundles-tilegym/cutile_rust} =="
  cap=$(left_s "${PORTBENCH_CORPUS_TIMEOUT:-420}")
  PORTBENCH_CORPUS_TIMEOUT="$cap" PORTBENCH_CORPUS_BUDGET="${PORTBENCH_CORPUS_BUDGET:-$(( cap > 120 ? cap - 90 : 30 ))}" \
    bash scripts/device_corpus.sh "$OUT" "${PORTBENCH_CORPUS_RUNS:-1}" 2>&1 | tee "$OUT/corpus_summary.txt" | tail -40
  cp "${PORTBENCH_CORPUS_FILE:-$OUT/corpus.h5}" "$OUT"/largest_*.h5 "$FINAL"/ 2>/dev/null
fi
if [[ -n "${PORTBENCH_INPUTS_BENCH:-}" && -d bundles-tilegym ]]; then
  # Issue 20's before/after: the same operators swept with inputs generated on the host and
  # uploaded (--host-inputs, the old path), then on the device (the default).
  echo "== inputs: host-generated, then device-generated (scripts/bench_sweep.sh) =="
  ops=()
  for op in ${PORTBENCH_INPUTS_BENCH_OPS:-rms_norm softmax silu_and_mul layer_norm_legacy}; do ops+=(--op "$op"); done
  for mode in host device; do
    extra=(); [[ $mode == host ]] && extra=(--host-inputs)
    cap=$(left_s "${PORTBENCH_INPUTS_BENCH_TIMEOUT:-200}")
    PORTBENCH_BIN=build/gpu/harness/cli/portbench PORTBENCH_BENCH_TIMEOUT="$cap" bash scripts/bench_sweep.sh \
      "$OUT/inputs_$mode.h5" --ref bundles-tilegym/tilegym --port bundles-tilegym/cutile_rust \
      --suite configs/tilegym.json --runs "${PORTBENCH_INPUTS_BENCH_RUNS:-2}" "${ops[@]}" "${extra[@]}" 2>&1 \
      | tee "$OUT/inputs_$mode.txt" | tail -30
  done
fi
if [[ -n "${PORTBENCH_REF_BENCH:-}" ]]; then
  echo "== reference verification benchmark, $(nproc) threads =="
  timeout "${PORTBENCH_REF_BENCH_TIMEOUT:-240}" bash scripts/bench_reference.sh --threads "$(nproc)" \
    --build-dir build/gpu ${PORTBENCH_REF_BENCH_FILTER:+--filter "$PORTBENCH_REF_BENCH_FILTER"} \
    ${PORTBENCH_REF_BENCH_SUITE:+--suite "$PORTBENCH_REF_BENCH_SUITE"} 2>&1 | tee "$OUT/ref_bench.txt" | tail -40
fi

echo
cat "$OUT/gpu.txt" | head -2
if [[ -z "${PORTBENCH_SKIP_TESTS:-}" ]]; then
  grep -E "Test +#|tests passed|faults caught|^fault " "$OUT/ctest-gpu.log" | tail -20
  echo "== portbench check (every front end, every smoke configuration) =="
  cat "$OUT/check.txt"
fi
echo "ctest gpu exit $ctest_rc, check exit $check_rc"
