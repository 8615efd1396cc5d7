#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU host: time every tuning variant of cuTile Rust bundles (configs[].variants) against one
# reference front end's bundles, and write the tuning record that picks the fastest variant per
# configuration (docs/cutile-rust.md, "Tuning variants"). `portbench run` times a
# configuration's chosen plan, so each variant becomes a bundle of its own first
# (scripts/rust_variants.py split).
#
#   scripts/time_rust_variants.sh OUTDIR [RUNS]
# Env: PORTBENCH_RV_REF (default bundles-tilegym/tilegym), PORTBENCH_RV_PORT (default
# bundles-tilegym/cutile_rust), PORTBENCH_RV_OPS (default rope,silu_and_mul,dropout),
# PORTBENCH_RV_SUITE (default configs/tilegym.json), PORTBENCH_RV_TIMEOUT (s per portbench run,
# default 300), PORTBENCH_TARGET (the target's name goes into the record; default h200).
# Writes OUTDIR/<op>/<variant>.{txt,json} (the run's table and its report; the .h5 files and the
# split bundles are removed at the end unless PORTBENCH_RV_KEEP=1, so device logs stay small) and
# OUTDIR/cutile_rust-<target>.json (the record; copy it to configs/tuning/ to keep it, then
# re-export with `kernels/cutile_rust/export.sh SUITE DIR --tuning configs/tuning/...`).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${1:?usage: time_rust_variants.sh OUTDIR [RUNS]}"
RUNS="${2:-2}"
BIN=build/gpu/harness/cli/portbench
REF="${PORTBENCH_RV_REF:-bundles-tilegym/tilegym}"
PORT="${PORTBENCH_RV_PORT:-bundles-tilegym/cutile_rust}"
OPS="${PORTBENCH_RV_OPS:-rope,silu_and_mul,dropout}"
SUITE="${PORTBENCH_RV_SUITE:-configs/tilegym.json}"
TARGET_FILE="${PORTBENCH_TARGET:-configs/targets/h200.json}"
TARGET=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$TARGET_FILE") || exit 2
mkdir -p "$OUT"
python3 scripts/rust_variants.py split "$PORT" "$OUT/split" --ops "$OPS" || exit 2
cache="$OUT/verified-cache"   # the reference's outputs are the same in every variant's run
for opdir in "$OUT"/split/*/; do
  op=$(basename "$opdir")
  mkdir -p "$OUT/$op"
  for vdir in "$opdir"*/; do
    v=$(basename "$vdir")
    start=$(date +%s)
    timeout "${PORTBENCH_RV_TIMEOUT:-300}" "$BIN" run --ref "$REF/$op" --port "$vdir" --suite "$SUITE" --runs "$RUNS" \
      --time-cap 0.2 --min-samples 8 --timeout 120 --verified-cache "$cache" \
      --out "$OUT/$op/$v.h5" --overwrite > "$OUT/$op/$v.txt" 2>&1
    rc=$?
    "$BIN" report "$OUT/$op/$v.h5" --format json > "$OUT/$op/$v.json" 2> "$OUT/$op/$v.report.err"
    geo=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["overall"]["geomean"]["estimate"], d["overall"]["paired"])' \
      "$OUT/$op/$v.json" 2>/dev/null)
    echo "$op $v: exit $rc, $(( $(date +%s) - start )) s, geomean port/ref and paired configurations: ${geo:-none}"
    [[ "${PORTBENCH_RV_KEEP:-0}" == 1 ]] || rm -f "$OUT/$op/$v.h5"
  done
done
python3 scripts/rust_variants.py record "$OUT/split" "$OUT" "$OUT/cutile_rust-$TARGET.json" --target "$TARGET" \
  --reference "$REF" --gpu "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" --date "$(date -u +%F)"
rc=$?
[[ "${PORTBENCH_RV_KEEP:-0}" == 1 ]] || rm -rf "$OUT/split" "$cache"
exit $rc
