#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tile experiments: one configuration exported with several tuning overrides (a suite entry's
# "tuning" object: block_rows, tile, occupancy), each variant timed against the exporter's own
# choice with `portbench run`. Exporting needs no GPU; timing does.
#
#   Here:      scripts/tune_variants.sh export SPEC.json OUTDIR [rust|python|cuda_cpp|triton]
#              (the cuTile Rust exporter by default; python is cuTile Python)
#   GPU host:  scripts/tune_variants.sh time OUTDIR [PORTBENCH]
#
# SPEC: {"op": ..., "params": {...}, "variants": {"name": {"occupancy": 2, ...}, ...}}. OUTDIR gets
# suite.json, base/ (no override) and one bundle folder per variant; `time` prints one line per
# variant: its best-of-1 speed over base's (> 1: the variant is faster).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cmd="${1:?usage: tune_variants.sh export SPEC OUTDIR | time OUTDIR [PORTBENCH]}"

if [[ "$cmd" == export ]]; then
  spec="${2:?SPEC}"; out="${3:?OUTDIR}"; frontend="${4:-rust}"
  case "$frontend" in
    rust) exporter=(bash "$ROOT/kernels/cutile_rust/export.sh") ;;
    python|cuda_cpp|triton)
      export CUDA_VISIBLE_DEVICES="" PYTHONPATH="$ROOT/kernels/export${PYTHONPATH:+:$PYTHONPATH}"
      exporter=("$ROOT/.venv/bin/python" -m "portbench_export.${frontend/python/cutile_python}") ;;
    *) echo "tune_variants.sh: front end must be rust, python, cuda_cpp or triton, not $frontend" >&2; exit 2 ;;
  esac
  mkdir -p "$out"
  names=$(python3 - "$spec" "$out" <<'PY'
import json, sys
spec, out = json.load(open(sys.argv[1])), sys.argv[2]
base = {"op": spec["op"], "params": spec["params"]}
json.dump({"suite": "tune", "configs": [base]}, open(f"{out}/suite.json", "w"))
json.dump({"suite": "tune", "configs": [base]}, open(f"{out}/suite-base.json", "w"))
for name, tuning in spec["variants"].items():
    json.dump({"suite": "tune", "configs": [dict(base, tuning=tuning)]}, open(f"{out}/suite-{name}.json", "w"))
    print(name)
PY
)
  for v in base $names; do
    rm -rf "${out:?}/$v"
    if [[ "$frontend" == rust ]]; then args=("$out/suite-$v.json" "$out/$v"); else args=(--suite "$out/suite-$v.json" --out "$out/$v"); fi
    "${exporter[@]}" "${args[@]}" >"$out/$v.export.log" 2>&1 \
      || { echo "export $v failed: $(tail -1 "$out/$v.export.log")"; exit 1; }
    if compgen -G "$out/$v/*/*.cubin" >/dev/null; then
      echo "exported $v: $(ls "$out/$v"/*/*.cubin | xargs -n1 basename)"
    else   # the exporter skipped the configuration (e.g. a block over its limit): say why
      echo "skipped $v: $(grep -m1 "^skip" "$out/$v.export.log")"
      rm -rf "${out:?}/$v"
    fi
  done
elif [[ "$cmd" == time ]]; then
  out="${2:?OUTDIR}"; bin="${3:-$ROOT/build/gpu/harness/cli/portbench}"
  for dir in "$out"/*/; do
    v=$(basename "$dir")
    [[ "$v" == base ]] && continue
    "$bin" run --ref "$out/base" --port "$dir" --suite "$out/suite.json" --runs 1 --min-samples 16 \
      --time-cap 0.5 --out "$out/$v.h5" --overwrite > "$out/$v.txt" 2>&1
    line=$(grep -E "^[a-z_]+/" "$out/$v.txt" | head -1)
    echo "$v: $(echo "$line" | awk '{print "base us " $2 ", variant us " $3 ", variant speed " $4 ", " $6 " " $7}')"
  done
else
  echo "tune_variants.sh: unknown command $cmd" >&2
  exit 2
fi
