#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Throughput of a sweep (issue 20): runs `portbench run` with the given options and prints its
# wall time, the share of the wall time the GPU spent in timed kernels, and where the workers'
# time went per operator (scripts/sweep_cost.py over the results file). GPU host only.
#
#   scripts/bench_sweep.sh OUT.h5 [RUN OPTIONS...]
#   e.g. scripts/bench_sweep.sh /tmp/b.h5 --ref bundles-tilegym/tilegym --port bundles-tilegym/cutile_rust \
#          --suite configs/tilegym.json --runs 4
# Env: PORTBENCH_BIN (default build/gpu/harness/cli/portbench), PORTBENCH_BENCH_TIMEOUT (s, 570).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:?usage: bench_sweep.sh OUT.h5 [RUN OPTIONS...]}"; shift
BIN="${PORTBENCH_BIN:-$ROOT/build/gpu/harness/cli/portbench}"
[[ -x "$BIN" ]] || { echo "bench_sweep: $BIN not built" >&2; exit 2; }
LOG="${OUT%.h5}.txt"
start=$(date +%s.%N)
timeout "${PORTBENCH_BENCH_TIMEOUT:-570}" "$BIN" run "$@" --out "$OUT" --overwrite > "$LOG" 2>&1
rc=$?
end=$(date +%s.%N)
echo "== bench_sweep: portbench run $* (exit $rc) =="
grep -E '^(geomean|wall|worker time|numerics:)' "$LOG"
paired=$(grep -cE '^[a-z_]+/' "$LOG" || true)
unpaired=$(grep -c 'not paired' "$LOG" || true)
# awk, not bc: the GPU host has no bc (the H200 printed "command wall 0.0 s").
printf 'command wall %.1f s; %s configuration rows, %s unpaired\n' "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$paired" "$unpaired"
if [[ -f "$OUT" ]]; then
  echo "== worker time per operator (scripts/sweep_cost.py) =="
  python3 "$ROOT/scripts/sweep_cost.py" "$OUT"
fi
exit $rc
