#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Times `portbench report` on a synthetic results file the size of the TileGym suite:
# 347 configurations x 2 front ends x 4 runs, 50-200 samples per run, realistic noise.
#
#   scripts/bench_results.sh [BUILD_DIR]      (default: build/ci-cpu)
#
# Needs portbench and portbench_synth_results built in BUILD_DIR
# (cmake --build BUILD_DIR --target portbench portbench_synth_results).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build/ci-cpu}"
PORTBENCH="$BUILD/harness/cli/portbench"
SYNTH="$BUILD/tests/cli/results/portbench_synth_results"
REPEATS="${REPEATS:-3}"
for exe in "$PORTBENCH" "$SYNTH"; do
  [[ -x "$exe" ]] || { echo "bench_results.sh: $exe not built" >&2; exit 2; }
done
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
FILE="$WORK/tilegym_size.h5"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

t0=$(now)
"$SYNTH" "$FILE" --configs 347 --operators 24 --runs 4 --min-samples 50 --max-samples 200 >/dev/null
t1=$(now)
size_mb=$(awk -v b="$(stat -c %s "$FILE")" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "bench_results: 347 configurations x 2 front ends x 4 runs (50-200 samples each), file ${size_mb} MiB"
echo "  write (one flush per run, 2776 runs): $(elapsed "$t0" "$t1") s"

time_report() {  # format, extra args...
  local fmt="$1"; shift
  local best="" all=""
  for ((i = 0; i < REPEATS; i++)); do
    local a b s
    a=$(now)
    "$PORTBENCH" report "$FILE" --format "$fmt" --out "$WORK/report.$fmt" "$@" 2>/dev/null
    b=$(now)
    s=$(elapsed "$a" "$b")
    all+="${all:+, }$s"
    if [[ -z "$best" ]] || awk -v x="$s" -v y="$best" 'BEGIN { exit !(x < y) }'; then best="$s"; fi
  done
  echo "  portbench report --format $fmt: best ${best} s of $REPEATS ($all)"
}
time_report md
time_report json
time_report html
echo "  verdict: $(grep -o 'portbench_verdict=[A-Z_]*' "$WORK/report.md"), $(grep -o 'portbench_overall_geomean=[0-9.]*' "$WORK/report.md")"
grep -q 'portbench_verdict=PARITY' "$WORK/report.md" || { echo "bench_results.sh: unexpected verdict" >&2; exit 1; }
