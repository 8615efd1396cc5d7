#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One device call of the whole-corpus pairing (issue 17), resumable over several calls: first,
# optionally, a tune of some operators' port variants (their tuned bundles then replace the
# corpus's chosen-only ones), then bundles-corpus/tilegym -> bundles-corpus/cutile_rust (from
# scripts/corpus_bundles.sh) until the call's deadline, continuing build/corpus/corpus.h5 when
# it exists (a still-warm machine) or .carry/corpus/corpus.h5 (carried back from the last call).
# Usage: scripts/device_corpus_call.sh [TUNE_SUITE OP...]
# Env: PORTBENCH_DEADLINE_S (s from the start by which everything is written, default 585),
# PORTBENCH_PREBUILT (a portbench built on this kind of machine; else device_run.sh builds one),
# PORTBENCH_CORPUS_FILTER (`run --filter`), PORTBENCH_CORPUS_RUNS (default 4),
# PORTBENCH_TUNE_CAP (s for the tune, default 200).
# Returns in $OUT: corpus.h5 and verified.tgz (carry them back as .carry/corpus/ to resume on a
# fresh machine), corpus.tgz (the sweep's text, report and bandwidth table), t/ (the tune's
# record and logs). A sweep resumed on a fresh machine after a tune needs the tuned bundles in the
# archive (here: scripts/apply_tuning.py with t/'s record on the exported variants, copied into
# bundles-corpus/cutile_rust/, packed again): `run --resume` refuses bundles whose manifests differ
# from the ones the file was measured with.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
START=$(date +%s)
DEADLINE="${PORTBENCH_DEADLINE_S:-585}"
OUT="${OUT:-$ROOT/build/device-out}"
BIN=build/gpu/harness/cli/portbench
WORK=build/corpus
mkdir -p "$OUT" "$WORK/out"
left() { echo $(( DEADLINE - ($(date +%s) - START) )); }

# A warm machine keeps the last call's folder (with a tune's bundles in it): unpacked again only
# when the carried archive changed.
[[ -f bundles-corpus.tar.xz ]] || { echo "no bundles-corpus.tar.xz (scripts/corpus_bundles.sh)"; exit 1; }
sum=$(sha256sum bundles-corpus.tar.xz | cut -c1-16)
if [[ "$(cat bundles-corpus/.archive 2>/dev/null)" != "$sum" ]]; then
  rm -rf bundles-corpus && tar -xJf bundles-corpus.tar.xz && echo "$sum" > bundles-corpus/.archive || exit 1
fi
for f in corpus.h5 verified.tgz; do
  [[ -f "$WORK/$f" || ! -f ".carry/corpus/$f" ]] || { cp ".carry/corpus/$f" "$WORK/$f" && echo "resuming from .carry/corpus/$f"; }
done

if [[ $# -ge 2 ]]; then
  suite="$1"; shift
  cap="${PORTBENCH_TUNE_CAP:-200}"
  OUT="$OUT/t" PORTBENCH_SKIP_TESTS=1 PORTBENCH_SKIP_SWEEP=1 PORTBENCH_RUST_TUNE=1 PORTBENCH_RUST_TUNE_OPS="$*" \
    PORTBENCH_TUNE_SUITE="$suite" PORTBENCH_TUNE_APPLY=1 PORTBENCH_CUTILE_RUST_TUNE_TIMEOUT="$cap" \
    PORTBENCH_DEADLINE_S=$(( cap + 60 )) bash scripts/device_run.sh
  for op in "$@"; do
    [[ -d "bundles-tilegym/cutile_rust/$op" ]] || continue
    rm -rf "bundles-corpus/cutile_rust/$op" && cp -r "bundles-tilegym/cutile_rust/$op" bundles-corpus/cutile_rust/
    echo "corpus port: $op from the tuned bundles-tilegym/cutile_rust/$op"
  done
elif [[ ! -x "$BIN" ]]; then
  if [[ -n "${PORTBENCH_PREBUILT:-}" ]]; then
    mkdir -p "$(dirname "$BIN")" && cp "$PORTBENCH_PREBUILT" "$BIN"
  else
    cmake --preset gpu -DPORTBENCH_WERROR=OFF > "$OUT/build.log" 2>&1 && cmake --build --preset gpu --target portbench >> "$OUT/build.log" 2>&1 \
      || { tail -30 "$OUT/build.log"; exit 1; }
  fi
fi

# The sweep stops starting runs 60 s before its own end, which leaves 50 s for the rest.
timeout_s=$(( $(left) - 50 ))
(( timeout_s > 60 )) || { echo "no time left for the sweep ($timeout_s s)"; exit 1; }
mode=()
[[ -f "$WORK/corpus.h5" ]] && mode=(PORTBENCH_CORPUS_RESUME=1)
env "${mode[@]}" PORTBENCH_CORPUS_REF=bundles-corpus/tilegym PORTBENCH_CORPUS_PORT=bundles-corpus/cutile_rust \
  PORTBENCH_CORPUS_FILE="$WORK/corpus.h5" PORTBENCH_CORPUS_VERIFIED="$WORK/verified" \
  PORTBENCH_CORPUS_TIMEOUT="$timeout_s" PORTBENCH_CORPUS_BUDGET=$(( timeout_s - 60 )) \
  PORTBENCH_CORPUS_TRITON=0 PORTBENCH_CORPUS_CUDA=0 PORTBENCH_DIAGNOSE_N="${PORTBENCH_DIAGNOSE_N:-0}" \
  bash scripts/device_corpus.sh "$WORK/out" "${PORTBENCH_CORPUS_RUNS:-4}" 2>&1 | tee "$WORK/out/summary.txt" | tail -60
cp "$WORK/corpus.h5" "$WORK/verified.tgz" "$OUT"/ 2>/dev/null
tar -C "$WORK" -czf "$OUT/corpus.tgz" out
echo "call: $(( $(date +%s) - START )) s"
