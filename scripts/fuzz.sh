#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs one libFuzzer target for SECONDS; prints libFuzzer's final stats, the executions per
# second and the crash count.
#
#   scripts/fuzz.sh TARGET SECONDS     TARGET: manifest | cubin | suite | results | all
#   scripts/fuzz.sh all 0              CI: build every target, replay its seeds once, no fuzzing
#
# Builds the `fuzz` preset (clang 14, libFuzzer + ASan + UBSan; build/fuzz), makes the seed
# corpus from the repository's real files (bundles/*/*/manifest.json and *.cubin, which
# scripts/export_bundles.sh writes; configs/**/*.json; results files written by portbench's own
# writer from the exported bundles) plus every earlier crash in tests/fuzz/regressions/TARGET/,
# then fuzzes into build/fuzz/corpus/TARGET (kept between calls, so runs add up). A crash, a
# leak or an input slower than $PORTBENCH_FUZZ_TIMEOUT s (default 60) exits 1 with its
# reproducer in build/fuzz/artifacts/TARGET/. The log is build/fuzz/fuzz-TARGET.log, or
# $PORTBENCH_FUZZ_LOG.
set -euo pipefail
# The body is functions, read whole before anything runs: editing this file during a long run
# cannot change what that run does.

BUILD=build/fuzz
TARGETS=(manifest cubin suite results)

seed_corpus() {   # TARGET SEEDS_DIR
  local target="$1" seeds="$2" f
  rm -rf "$seeds"
  mkdir -p "$seeds"
  copy_seeds() {   # files named by content, so one seed is not taken twice
    for f in "$@"; do [[ -f "$f" ]] && cp "$f" "$seeds/$(sha256sum "$f" | cut -c1-16)"; done
    return 0
  }
  shopt -s nullglob globstar
  case "$target" in
    manifest) copy_seeds bundles/*/*/manifest.json ;;
    cubin) copy_seeds bundles/*/*/*.cubin ;;
    suite) copy_seeds configs/**/*.json tests/python/data/*.json ;;
    results)
      "$BUILD/tests/fuzz/portbench_synth_results" "$seeds/small.h5" --overwrite --configs 3 --runs 2 \
        --min-samples 4 --max-samples 8 >/dev/null
      "$BUILD/tests/fuzz/portbench_synth_results" "$seeds/failed.h5" --overwrite --configs 2 --runs 1 \
        --min-samples 4 --max-samples 6 --fail-config 1 >/dev/null ;;
  esac
  # Every input a fuzzer once crashed on stays a seed (and a regression test: tests/unit/store).
  copy_seeds tests/fuzz/regressions/"$target"/*
  shopt -u nullglob globstar
}

fuzz_one() {   # TARGET SECONDS
  local target="$1" seconds="$2"
  local seeds="$BUILD/seeds/$target" corpus="$BUILD/corpus/$target" artifacts="$BUILD/artifacts/$target"
  seed_corpus "$target" "$seeds"
  mkdir -p "$corpus" "$artifacts"
  local n_seeds
  n_seeds=$(find "$seeds" -type f | wc -l)
  if [[ $n_seeds -eq 0 ]]; then
    echo "fuzz $target: no seeds (run scripts/export_bundles.sh for bundles/)" >&2
    return 2
  fi
  export HDF5_USE_FILE_LOCKING=FALSE
  # Leak checks stay on. HDF5 keeps free lists and caches for the process (no per-input check
  # for results) and leaks on some corrupt files (suppressed at exit, tests/sanitizers/lsan-hdf5.supp).
  local leaks=1
  if [[ "$target" == results ]]; then
    leaks=0
    export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan-hdf5.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
  fi
  local log="${PORTBENCH_FUZZ_LOG:-$BUILD/fuzz-$target.log}"
  mkdir -p "$(dirname "$log")"
  local before rc
  before=$(find "$artifacts" -type f | wc -l)
  local -a mode
  if [[ "$seconds" == 0 ]]; then
    mode=(-runs=0 "$seeds")   # replay the seeds once: every one must be handled
  else
    mode=("$corpus" "$seeds" -max_total_time="$seconds")
  fi
  set +e
  # -timeout: an input that takes this long is a hang, reported as a crash (timeout-*). Every
  # seed runs in well under a second; the margin is for a shared machine, where a nice-19
  # fuzzer waits for the CPU.
  "$BUILD/tests/fuzz/fuzz_$target" "${mode[@]}" -print_final_stats=1 -timeout="${PORTBENCH_FUZZ_TIMEOUT:-60}" \
    -detect_leaks=$leaks -artifact_prefix="$artifacts/" > "$log" 2>&1
  rc=$?
  set -e
  local crashes runs eps cov
  crashes=$(( $(find "$artifacts" -type f | wc -l) - before ))
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || true)
  eps=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || true)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
  grep -E '^(stat::|Done [0-9]+ runs)' "$log" | sed "s/^/fuzz $target: /" || true
  if [[ $rc -ne 0 ]]; then
    grep -m1 -A12 -E '^==[0-9]+== ?ERROR|runtime error|deadly signal|ALARM' "$log" >&2 || tail -40 "$log" >&2
    echo "fuzz $target: ${runs:-?} executions, ${eps:-?} exec/s, crashes: $((crashes > 0 ? crashes : 1)) (exit $rc);" \
         "reproducer: $artifacts/$(ls -t "$artifacts" | head -1) (log $log)" >&2
    return 1
  fi
  if [[ "$seconds" == 0 ]]; then
    echo "fuzz $target: $n_seeds seeds replayed, crashes: 0 (log $log)"
  else
    echo "fuzz $target: ${runs:-0} executions in $seconds s, ${eps:-?} exec/s, crashes: 0," \
         "coverage ${cov:-?} edges, corpus $(find "$corpus" -type f | wc -l) files ($n_seeds seeds) (log $log)"
  fi
}

main() {
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  local target="${1:-}" seconds="${2:-60}"
  local -a targets
  case "$target" in
    manifest|cubin|suite|results) targets=("$target") ;;
    all) targets=("${TARGETS[@]}") ;;
    *) echo "usage: $0 manifest|cubin|suite|results|all SECONDS" >&2; exit 2 ;;
  esac
  [[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS must be a whole number, not '$seconds'" >&2; exit 2; }
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz | grep -vE '^\[[0-9]+/[0-9]+\] (Building|Linking)' || true
  [[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "fuzz: the fuzz preset did not build" >&2; exit 1; }
  local failed=0 t
  for t in "${targets[@]}"; do fuzz_one "$t" "$seconds" || failed=1; done
  exit $failed
}

main "$@"
