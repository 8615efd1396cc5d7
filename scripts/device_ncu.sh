#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Nsight Compute profiles of chosen kernels, for finding out why a port's kernel is slow (what
# `portbench diagnose` cannot see: DRAM and SM throughput, achieved occupancy, warp stalls).
# On the GPU machine, with a portbench binary and bundle folders carried:
#
#   scripts/device_ncu.sh KERNEL_REGEX CONFIG_FILTER BUNDLE_DIR...
#
# For each folder: `portbench check FOLDER --filter CONFIG_FILTER` under ncu (every worker
# process profiled), the kernels whose names match KERNEL_REGEX, at most PORTBENCH_NCU_COUNT
# launches (default 4). Full reports go to $OUT/ncu-<n>.txt, a summary per kernel to stdout.
# PORTBENCH_BIN: the binary (default build/gpu/harness/cli/portbench).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ $# -ge 3 ]] || { echo "usage: scripts/device_ncu.sh KERNEL_REGEX CONFIG_FILTER BUNDLE_DIR..." >&2; exit 2; }
regex="$1" filter="$2"; shift 2
BIN="${PORTBENCH_BIN:-build/gpu/harness/cli/portbench}"
OUT="${OUT:-$ROOT/build/ncu-out}"
mkdir -p "$OUT"
command -v ncu > /dev/null || { echo "device_ncu: ncu not found" >&2; exit 2; }
[[ -x "$BIN" ]] || { echo "device_ncu: $BIN missing or not executable" >&2; exit 2; }
n=0
for dir in "$@"; do
  [[ -d "$dir" ]] || { echo "device_ncu: $dir: no such folder" >&2; exit 2; }
  n=$((n + 1))
  report="$OUT/ncu-$n.txt"
  echo "== $dir ($report)"
  timeout "${PORTBENCH_NCU_TIMEOUT:-200}" ncu --target-processes all --kernel-name "regex:$regex" \
    --launch-count "${PORTBENCH_NCU_COUNT:-4}" --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
    "$BIN" check "$dir" --filter "$filter" --timeout 300 > "$report" 2>&1
  echo "ncu exit $?"
  # One line per profiled kernel and the figures that say where its time goes.
  grep -E "^  [A-Za-z_0-9]+.*\(([0-9]+, ){2}[0-9]+\)x\(|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per Thread|Block Size|Warp Cycles Per Issued Instruction|Issued Warp Per Scheduler|L2 Hit Rate|Threads  " "$report" | head -60
done
# PORTBENCH_NCU_SOURCE=1: also the SASS of the first profiled kernel of the last folder with its
# warp-stall samples per instruction ($OUT/ncu-source.csv; the 40 most sampled lines printed).
if [[ -n "${PORTBENCH_NCU_SOURCE:-}" ]]; then
  rep="$OUT/ncu-source"
  timeout "${PORTBENCH_NCU_TIMEOUT:-200}" ncu --target-processes all --kernel-name "regex:$regex" --launch-count 1 \
    --section SourceCounters --section WarpStateStats -f -o "$rep" "$BIN" check "${@: -1}" --filter "$filter" --timeout 300 > "$OUT/ncu-source.log" 2>&1
  echo "ncu source exit $?"
  ncu --import "$rep.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu-source.csv" 2>&1
  python3 - "$OUT/ncu-source.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next((i for i, r in enumerate(rows) if "Source" in r), None)
if head is None:
    sys.exit("no source table in " + sys.argv[1])
names = rows[head]
col = next((i for i, n in enumerate(names) if n.startswith("Warp Stall Sampling (All")), None)
src = names.index("Source")
body = [r for r in rows[head + 1:] if len(r) == len(names)]
def num(v):
    try: return float(v.replace(",", ""))
    except ValueError: return 0.0
total = sum(num(r[col]) for r in body) or 1
for r in sorted(body, key=lambda r: -num(r[col]))[:40]:
    print(f"{100 * num(r[col]) / total:5.1f}%  {r[src][:110]}")
PY
fi
