#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The nightly regression job: export (cached by kernel sources and toolchain), run the paired
# suite, compare with a baseline results file kept under results/, and write a Markdown summary
# for the CI job page plus the HTML report.
#
#   scripts/nightly.sh [--suite FILE] [--baseline FILE] [--out DIR] [--runs N]
#                      [--bundles DIR] [--ref NAME] [--port NAME] [--bin PORTBENCH]
#                      [--update-baseline] [--export-only] [-- EXTRA portbench run OPTIONS]
#
# Exit: 0 nothing regressed and every check passed; 1 something REGRESSED (or a numerics or
# proof failure: a port that stops computing the right function is a regression too);
# 2 the job itself could not run (bad input, missing baseline, export or run failure, no GPU).
# Docs: docs/nightly.md (with an example CI job).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SUITE=configs/nightly.json
BASELINE=results/baseline-nightly-h200.h5
OUT=results/nightly
RUNS=4
BUNDLES=""
REF=tilegym
PORT=cutile_rust
BIN=""
UPDATE_BASELINE=0
EXPORT_ONLY=0
EXTRA=()
die() { echo "nightly: error: $*" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --suite) SUITE="$2"; shift 2 ;;
    --baseline) BASELINE="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --bundles) BUNDLES="$2"; shift 2 ;;
    --ref) REF="$2"; shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --update-baseline) UPDATE_BASELINE=1; shift ;;
    --export-only) EXPORT_ONLY=1; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    *) die "unknown option '$1' (see the header of scripts/nightly.sh)" ;;
  esac
done
[[ -f "$SUITE" ]] || die "$SUITE: suite not found"
mkdir -p "$OUT" || die "$OUT: cannot create the output folder"

# ---- export, cached by everything that shapes a cubin -------------------------------------
# The key covers the kernel sources and exporters of every front end, the suite, the target
# description, the pinned toolchain lists and what is installed of them (the Rust exporter's
# sources are under kernels/): the same key means byte-identical bundles.
cache_key() {
  {
    git ls-files -s kernels configs/targets scripts/requirements-export.txt scripts/requirements-cuda13.0.txt \
      scripts/export_bundles.sh 2>/dev/null
    git diff HEAD -- kernels configs/targets 2>/dev/null   # uncommitted edits count too
    sha256sum "$SUITE"
    [[ -x .venv/bin/python ]] && .venv/bin/python -m pip freeze 2>/dev/null | grep -iE '^(cuda-|nvidia-|triton|tilegym)'
    printf 'frontends %s\n' "${PORTBENCH_EXPORT_FRONTENDS:-all}"
  } | sha256sum | cut -c1-16
}

if [[ -z "$BUNDLES" ]]; then
  KEY="$(cache_key)"
  CACHE="${PORTBENCH_EXPORT_CACHE:-$ROOT/.cache/bundles}"
  BUNDLES="$CACHE/$KEY"
  if [[ -f "$BUNDLES/.complete" ]]; then
    echo "[nightly] export: cached ($KEY) -> $BUNDLES"
  else
    echo "[nightly] export: $SUITE -> $BUNDLES (cache key $KEY)"
    rm -rf "$BUNDLES.tmp"
    mkdir -p "$BUNDLES.tmp" || die "$BUNDLES.tmp: cannot create"
    if ! bash scripts/export_bundles.sh "$SUITE" "$BUNDLES.tmp" > "$OUT/export.log" 2>&1; then
      tail -5 "$OUT/export.log" >&2
      die "export failed (log: $OUT/export.log)"
    fi
    touch "$BUNDLES.tmp/.complete"
    rm -rf "$BUNDLES" && mv "$BUNDLES.tmp" "$BUNDLES"
  fi
  echo "$KEY" > "$OUT/export-key.txt"
fi
[[ -d "$BUNDLES/$REF" ]] || die "$BUNDLES/$REF: no reference bundles (front end '$REF')"
[[ -d "$BUNDLES/$PORT" ]] || die "$BUNDLES/$PORT: no port bundles (front end '$PORT')"
((EXPORT_ONLY)) && { echo "[nightly] export only: $BUNDLES"; exit 0; }

# ---- run ---------------------------------------------------------------------------------
if [[ -z "$BIN" ]]; then
  for b in build/gpu/harness/cli/portbench build/ci-cpu/harness/cli/portbench build/dev/harness/cli/portbench; do
    [[ -x "$b" ]] && { BIN="$b"; break; }
  done
fi
[[ -n "$BIN" && -x "$BIN" ]] || die "no portbench binary (build it, or pass --bin)"
CURRENT="$OUT/nightly.h5"
echo "[nightly] run: $REF -> $PORT, $SUITE, best of $RUNS -> $CURRENT"
"$BIN" run --ref "$BUNDLES/$REF" --port "$BUNDLES/$PORT" --suite "$SUITE" --runs "$RUNS" \
  --out "$CURRENT" --overwrite "${EXTRA[@]}" > "$OUT/run.txt" 2>&1
run_rc=$?
tail -6 "$OUT/run.txt"
# run: 0 all pass, 1 some configuration failed numerics/proof, 2 the sweep could not run.
[[ $run_rc -ge 2 || ! -f "$CURRENT" ]] && die "portbench run failed (exit $run_rc; log: $OUT/run.txt)"

# ---- report and compare ------------------------------------------------------------------
"$BIN" report "$CURRENT" --format md --out "$OUT/report.md" || die "portbench report failed"
"$BIN" report "$CURRENT" --format html --out "$OUT/report.html" || echo "[nightly] warning: no HTML report" >&2
if ((UPDATE_BASELINE)); then
  mkdir -p "$(dirname "$BASELINE")" && cp "$CURRENT" "$BASELINE" || die "$BASELINE: cannot write"
  echo "[nightly] baseline updated: $BASELINE"
fi
[[ -f "$BASELINE" ]] || die "$BASELINE: no baseline results file (run once with --update-baseline)"
"$BIN" compare "$BASELINE" "$CURRENT" --format md --out "$OUT/compare.md"
cmp_rc=$?
[[ $cmp_rc -ge 2 ]] && die "portbench compare failed (exit $cmp_rc)"
"$BIN" compare "$BASELINE" "$CURRENT" --format json --out "$OUT/compare.json" >/dev/null 2>&1

# ---- the job page ------------------------------------------------------------------------
verdict=PASS
((cmp_rc == 1)) && verdict=REGRESSED
((run_rc == 1)) && [[ $verdict == PASS ]] && verdict=CHECKS_FAILED
{
  echo "# portbench nightly: $verdict"
  echo
  echo "- suite \`$SUITE\`, reference \`$REF\`, port \`$PORT\`, best of $RUNS"
  echo "- baseline \`$BASELINE\`, current \`$CURRENT\`, bundles \`$BUNDLES\`"
  echo
  echo "## Against the baseline"
  echo
  cat "$OUT/compare.md"
  echo
  echo "## This run"
  echo
  cat "$OUT/report.md"
} > "$OUT/summary.md"
[[ -n "${GITHUB_STEP_SUMMARY:-}" ]] && cat "$OUT/summary.md" >> "$GITHUB_STEP_SUMMARY"
echo "[nightly] $verdict: summary $OUT/summary.md, report $OUT/report.html"
echo "nightly_verdict=$verdict"
[[ $verdict == PASS ]] && exit 0
exit 1
