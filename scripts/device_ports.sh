#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One device call after a round of port changes, within a deadline (the device tool allows 600 s):
#   ports    portbench run of the re-exported port operators (PORTBENCH_PORTS_DIR, default
#            bundles-new/cutile_rust) against the reference (PORTBENCH_PORTS_REF, default
#            bundles-port/tilegym) on configs/tilegym.json, best of PORTBENCH_PORTS_RUNS (2), with
#            --budget, then the per-operator report;
#   aa       an A/A run of the port operators no reference bundle pairs (PORTBENCH_PORTS_AA, e.g.
#            "moe"): their device time, numerics and proof;
#   vendor   scripts/cublas_bench.py on the square fp16 matmuls and bmm of the TFLOP/s table and
#            scripts/sdpa_bench.py on fmha at S 4096 and 8192 (cuDNN and flash backends);
#   inputs   the same operators swept with --host-inputs, then with device-generated inputs
#            (PORTBENCH_PORTS_INPUTS_OPS, default "rms_norm silu_and_mul"), one run each.
# Here (no GPU): export the changed operators (kernels/cutile_rust/export.sh SUITE
# bundles-new/cutile_rust --chosen-only), `tar -cJf bundles-new.tar.xz bundles-new`, and
# scripts/port_bundles.sh for bundles-port.tar.xz. Then through the device tool, carrying both
# archives and build/prebuilt (a portbench an earlier call built, returned as portbench.bin):
#   bash scripts/device_ports.sh
# Env: PORTBENCH_PORTS_STEPS (default "ports aa vendor inputs"), PORTBENCH_DEADLINE_S (default 560).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
START=$(date +%s)
FINAL="${OUT:-$ROOT/build/device-out}"
OUT="$FINAL/logs"
mkdir -p "$OUT"
trap 'tar -C "$FINAL" -czf "$FINAL/logs.tgz" logs && rm -rf "$FINAL/logs"' EXIT
BIN=build/gpu/harness/cli/portbench
STEPS=" ${PORTBENCH_PORTS_STEPS:-ports aa vendor inputs} "
PORTS="${PORTBENCH_PORTS_DIR:-bundles-new/cutile_rust}"
REF="${PORTBENCH_PORTS_REF:-bundles-port/tilegym}"
has() { [[ "$STEPS" == *" $1 "* ]]; }
left() { local cap="$1" l=$(( ${PORTBENCH_DEADLINE_S:-560} - ($(date +%s) - START) - 10 )); (( l < cap )) && cap=$l; (( cap < 1 )) && cap=1; echo "$cap"; }

if [[ -n "${PORTBENCH_PREBUILT:-}" ]] && "$PORTBENCH_PREBUILT" --help > /dev/null 2>&1; then
  mkdir -p "$(dirname "$BIN")" && cp "$PORTBENCH_PREBUILT" "$BIN" && echo "== prebuilt $PORTBENCH_PREBUILT =="
else
  echo "== build portbench (preset gpu) =="
  { cmake --preset gpu -DPORTBENCH_WERROR=OFF -DPORTBENCH_ENABLE_TESTS=OFF -DPORTBENCH_ENABLE_BENCHMARKS=OFF &&
    cmake --build --preset gpu -j "$(nproc)" --target portbench; } > "$OUT/build.log" 2>&1 \
    || { tail -30 "$OUT/build.log"; echo "BUILD FAILED"; exit 1; }
  cp "$BIN" "$FINAL/portbench.bin"
fi
for packed in bundles-*.tar.xz; do
  [[ -f "$packed" && ! -d "${packed%.tar.xz}" ]] || continue
  tar -xJf "$packed" && echo "unpacked $packed"
done
for need in "$PORTS" "$REF"; do [[ -d "$need" ]] || { echo "device_ports: $need missing"; exit 2; }; done
GPU="$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1)"
echo "GPU: $GPU"

if has ports; then
  ops=(); for d in "$PORTS"/*/; do [[ -d "$REF/$(basename "$d")" ]] && ops+=(--op "$(basename "$d")"); done
  cap=$(left "${PORTBENCH_PORTS_TIMEOUT:-300}")
  echo "== ports: $REF -> $PORTS (${ops[*]}), best of ${PORTBENCH_PORTS_RUNS:-2}, at most $cap s =="
  t0=$(date +%s)
  timeout "$cap" "$BIN" run --ref "$REF" --port "$PORTS" --suite configs/tilegym.json "${ops[@]}" \
    --runs "${PORTBENCH_PORTS_RUNS:-2}" --time-cap 0.2 --min-samples 8 --timeout 120 --budget $(( cap > 60 ? cap - 40 : 20 )) \
    --out "$OUT/ports.h5" --overwrite > "$OUT/ports.txt" 2>&1
  echo "ports run: exit $?, $(( $(date +%s) - t0 )) s"
  grep -v "not paired" "$OUT/ports.txt" | tail -4
  "$BIN" report "$OUT/ports.h5" --format md > "$OUT/ports_report.md" 2>&1
  sed -n '/^## Operators/,/^Not at parity/p' "$OUT/ports_report.md" | cut -d'|' -f2-6,8-10
  cp "$OUT/ports.h5" "$FINAL/" 2>/dev/null
fi

if has aa && [[ -n "${PORTBENCH_PORTS_AA:-}" ]]; then
  ops=(); for op in $PORTBENCH_PORTS_AA; do [[ -d "$PORTS/$op" ]] && ops+=(--op "$op"); done
  if (( ${#ops[@]} )); then
    echo "== A/A of the unpaired port operators (${ops[*]}) =="
    timeout "$(left 60)" "$BIN" run --ref "$PORTS" --aa --suite configs/tilegym.json "${ops[@]}" --runs 2 --time-cap 0.2 \
      --min-samples 8 --timeout 60 --out "$OUT/aa.h5" --overwrite > "$OUT/aa.txt" 2>&1
    echo "A/A: exit $?"
    grep -E "^[a-z_]+/|^geomean|^wall|^worker|^numerics" "$OUT/aa.txt" | cut -c1-200
  fi
fi

if has vendor; then
  echo "== vendor libraries: cuBLAS (torch.matmul/bmm), SDPA =="
  timeout "$(left 90)" python3 scripts/cublas_bench.py --suite configs/tilegym.json --ops matmul,bmm \
    --filter '(dtype=float16,k=(4096|8192),m=(4096|8192),n=(4096|8192),offset_a=0,offset_b=0,static_persistent=false,transpose_a=false,transpose_b=false|bmm/batch=8,dtype=float16,k=4096,m=4096,n=4096,transpose_a=false,transpose_b=false)' \
    --samples 20 --time-cap 1 --out "$OUT/cublas.jsonl" 2>&1 | tee "$OUT/cublas.txt" | tail -8
  timeout "$(left 120)" python3 scripts/sdpa_bench.py --suite configs/tilegym.json --backends cudnn,flash \
    --filter 'dtype=(float16|bfloat16),.*seq_len=(4096|8192)$' --samples 20 --time-cap 1 --out "$OUT/sdpa.jsonl" 2>&1 \
    | tee "$OUT/sdpa.txt" | tail -12
fi

if has inputs; then
  for mode in host device; do
    extra=(); [[ $mode == host ]] && extra=(--host-inputs)
    ops=(); for op in ${PORTBENCH_PORTS_INPUTS_OPS:-rms_norm silu_and_mul}; do ops+=(--op "$op"); done
    cap=$(left 90)
    (( cap > 20 )) || { echo "inputs $mode: no time left"; continue; }
    PORTBENCH_BIN="$BIN" PORTBENCH_BENCH_TIMEOUT="$cap" bash scripts/bench_sweep.sh "$OUT/inputs_$mode.h5" \
      --ref bundles-port/tilegym --port bundles-port/cutile_rust --suite configs/tilegym.json --runs 1 "${ops[@]}" "${extra[@]}" \
      2>&1 | tee "$OUT/inputs_${mode}_summary.txt" | tail -6
  done
fi
echo "device_ports: $(( $(date +%s) - START )) s"
