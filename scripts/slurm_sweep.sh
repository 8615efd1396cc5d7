#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A sweep sharded over a Slurm cluster: an array job with one task per shard (one GPU each),
# each running `portbench run ... --shard K/N` (shards balanced by estimated cost, every
# configuration in exactly one), then a job that depends on the whole array (afterok) merging
# the shards' files and writing the report.
#
#   scripts/slurm_sweep.sh SHARDS OUTDIR [--bin PORTBENCH] -- RUN OPTIONS (--ref ... --port ... --suite ... --runs N)
#
# Environment: PORTBENCH_SLURM_GPUS GPUs per task (default 1; 0 requests none, e.g. for a
# --dry-run plan on CPU nodes), PORTBENCH_SLURM_PARTITION, PORTBENCH_SLURM_TIME (default 01:00:00),
# PORTBENCH_SLURM_EXTRA (more sbatch options). Prints "array JOBID" and "merge JOBID".
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "slurm_sweep: error: $*" >&2; exit 2; }
[[ $# -ge 2 ]] || die "usage: slurm_sweep.sh SHARDS OUTDIR [--bin PORTBENCH] -- RUN OPTIONS"
N="$1"; OUT="$2"; shift 2
[[ "$N" =~ ^[1-9][0-9]*$ ]] || die "SHARDS must be a positive integer, got '$N'"
BIN=""
while (($#)); do
  case "$1" in
    --bin) BIN="$2"; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option '$1'" ;;
  esac
done
if [[ -z "$BIN" ]]; then
  for b in "$ROOT"/build/gpu/harness/cli/portbench "$ROOT"/build/ci-cpu/harness/cli/portbench; do
    [[ -x "$b" ]] && { BIN="$b"; break; }
  done
fi
[[ -n "$BIN" && -x "$BIN" ]] || die "no portbench binary (build it, or pass --bin)"
command -v sbatch >/dev/null || die "sbatch not found (is this a Slurm submit host?)"
mkdir -p "$OUT/logs"
OUT="$(cd "$OUT" && pwd)"
common=(--parsable --chdir "$ROOT" --time "${PORTBENCH_SLURM_TIME:-01:00:00}")
[[ -n "${PORTBENCH_SLURM_PARTITION:-}" ]] && common+=(--partition "$PORTBENCH_SLURM_PARTITION")
# shellcheck disable=SC2206
[[ -n "${PORTBENCH_SLURM_EXTRA:-}" ]] && common+=($PORTBENCH_SLURM_EXTRA)
gpus=()
[[ "${PORTBENCH_SLURM_GPUS:-1}" != 0 ]] && gpus=(--gpus-per-task "${PORTBENCH_SLURM_GPUS:-1}")
array=$(sbatch "${common[@]}" "${gpus[@]}" --array "0-$((N - 1))" --output "$OUT/logs/shard-%a.out" \
  "$ROOT/scripts/slurm/shard.sbatch" "$OUT" "$BIN" "$@") || die "sbatch of the array failed"
merge=$(sbatch "${common[@]}" --dependency "afterok:$array" --kill-on-invalid-dep=yes --output "$OUT/logs/merge.out" \
  "$ROOT/scripts/slurm/merge.sbatch" "$OUT" "$BIN" "$N") || die "sbatch of the merge job failed"
echo "array $array"
echo "merge $merge"
