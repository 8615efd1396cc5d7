#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs the reference verification benchmark (tests/bench/reference) and prints the
# time to verify one output of the largest upstream configuration of each operator.
#
#   scripts/bench_reference.sh [--threads 2[,16]] [--filter REGEX] [--with-cache] [--build-dir DIR]
#   scripts/bench_reference.sh --suite FILE [--threads N] [--filter REGEX] [--build-dir DIR]
#
# --suite: one cold verify of every configuration of FILE in suite order (--filter: a regex on
# the config id), a line each, per-operator and suite totals; JSON lines in DIR/reference_suite.jsonl.
# Needs about 18 GB of free memory for the largest configurations (rope, matmul at 32768^3);
# use --filter to run a subset. If the top-level project does not configure (harness/ being
# edited), it builds the reference library alone from a generated top-level CMakeLists.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
threads=${THREADS:-2}
filter=""
build="$root/build/bench-reference"
suite=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --filter) filter=$2; shift 2 ;;
    --with-cache) extra+=(--with-cache); shift ;;
    --suite) suite=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    -h|--help) sed -n '3,14p' "$0"; exit 0 ;;
    *) echo "bench_reference.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -n "$suite" ] && [ ${#extra[@]} -gt 0 ]; then
  echo "bench_reference.sh: --suite times cold checks only (no --with-cache)" >&2; exit 2
fi

configure_reference_only() {
  local src="$build/reference-only-src"
  mkdir -p "$src"
  cat >"$src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(portbench_reference_bench LANGUAGES CXX)
list(APPEND CMAKE_MODULE_PATH "$root/cmake")
include(PortbenchBuildFlags)
find_package(Threads REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(benchmark REQUIRED)
set(PORTBENCH_ENABLE_BENCHMARKS ON)
add_subdirectory("$root/reference" reference)
add_subdirectory("$root/tests/bench/reference" bench)
CMAKE
  cmake -S "$src" -B "$build/reference-only" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  echo "$build/reference-only"
}

mkdir -p "$build"
dir="$build"
if [ ! -f "$build/build.ninja" ] &&
   ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPORTBENCH_ENABLE_BENCHMARKS=ON \
       >"$build/configure.log" 2>&1; then
  echo "bench_reference.sh: top-level configure failed (see $build/configure.log); building reference/ alone" >&2
  dir=$(configure_reference_only)
fi
cmake --build "$dir" --target portbench_reference_bench -j"$(nproc)" >/dev/null
bin=$(find "$dir" -name portbench_reference_bench -type f -perm -u+x | head -n 1)

if [ -n "$suite" ]; then
  args=(--suite="$suite" --threads="$threads" --suite-out="$build/reference_suite.jsonl")
  [ -n "$filter" ] && args+=(--suite-filter="$filter")
  echo "running $bin ${args[*]}" >&2
  exec "$bin" "${args[@]}"
fi

out="$build/reference_bench.json"
args=(--threads="$threads" --benchmark_out="$out" --benchmark_out_format=json "${extra[@]}")
[ -n "$filter" ] && args+=(--benchmark_filter="$filter")
echo "running $bin ${args[*]}" >&2
"$bin" "${args[@]}" >/dev/null

python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ctx = doc.get("context", {})
print(f"host: {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} cpus, load {ctx.get('load_avg', '?')}")
rows = [("operator", "mode", "threads", "verify ms", "checked", "coverage", "GB inputs", "check")]
for b in doc["benchmarks"]:
    parts = b["name"].split("/")
    threads = next((p.split(":")[1] for p in parts if p.startswith("threads:")), "?")
    ms = b["real_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ms")]
    rows.append((parts[0], parts[1], threads, f"{ms:,.1f}", f"{b.get('checked', 0):,.0f}",
                 f"{b.get('coverage', 0):.3g}", f"{b.get('GB_alloc', 0):.2f}", b.get("label", "")))
w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
for k, r in enumerate(rows):
    print("  ".join(c.rjust(w[i]) if 2 <= i <= 6 else c.ljust(w[i]) for i, c in enumerate(r)))
    if k == 0:
        print("  ".join("-" * x for x in w))
PY
