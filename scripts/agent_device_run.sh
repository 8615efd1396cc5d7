#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent figure on the GPU host: `portbench agent run` with the built-in stages and retune
# on the cuTile Rust rope and silu_and_mul ports against the upstream TileGym reference
# (configs/agent/*-cutile-rust.json), then scripts/agent_summary.py of each work directory.
#
# Here (no GPU), once per change of the port or the jobs' candidates:
#   scripts/export_tilegym.sh                                  (the tilegym reference, bundles-tilegym/tilegym)
#   rope, silu_and_mul (retune over the jobs' overrides: one export per candidate):
#     python3 scripts/agent_export_cache.py prepare configs/agent/$op-cutile-rust.json bundles-agent/$op \
#       --exporter '["bash", "{root}/kernels/cutile_rust/export.sh", "{suite}", "{out}"]'
#   mla_decoding_split_kv, gemma_attention_decode (retune over the declared variants, selected
#   through {tuning}): the default from an export with variants (scripts/tuned_bundles.sh --export
#   makes bundles-tilegym/cutile_rust):
#     python3 scripts/agent_export_cache.py prepare configs/agent/$op-cutile-rust.json bundles-agent/$op \
#       --from bundles-tilegym/cutile_rust
# Then on the GPU host, carrying bundles-tilegym/{tilegym,cutile_rust}/<op> and bundles-agent/:
#   bash scripts/agent_device_run.sh [rope|silu_and_mul|mla_decoding_split_kv|gemma_attention_decode ...]
#                                                                (default: rope, silu_and_mul)
# Work directories: results/agent/<op>/; the summaries, logs and work directories (as archives) in
# $OUT/agent.tgz.
# A device call is limited to 10 minutes: each pipeline gets PORTBENCH_AGENT_BUDGET_S (default
# 480 s), then SIGTERM leaves it resumable (exit 130). To continue in a later call, unpack
# agent-<op>-workdir.tgz from the returned agent.tgz into results/agent/, carry it, and set
# PORTBENCH_AGENT_RESUME=1.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
FINAL="${OUT:-$ROOT/build/device-out}"
# The device tool returns at most 8 files: everything goes to $OUT/agent and comes back as one
# archive, agent.tgz.
OUT="$FINAL/agent"
mkdir -p "$OUT"
trap 'tar -C "$FINAL" -czf "$FINAL/agent.tgz" agent && rm -rf "$OUT"' EXIT
BIN=build/gpu/harness/cli/portbench
ops=("$@")
[[ ${#ops[@]} -eq 0 ]] && ops=(rope silu_and_mul)

if [[ ! -x "$BIN" || -n "${PORTBENCH_AGENT_REBUILD:-}" ]]; then
  echo "== build (preset gpu) =="
  { cmake --preset gpu -DPORTBENCH_WERROR=OFF -DPORTBENCH_ENABLE_TESTS=OFF -DPORTBENCH_ENABLE_BENCHMARKS=OFF &&
    cmake --build --preset gpu -j "$(nproc)" --target portbench; } > "$OUT/agent-build.log" 2>&1 \
    || { tail -30 "$OUT/agent-build.log"; echo "BUILD FAILED"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/agent-gpu.txt" 2>&1

rc=0
for op in "${ops[@]}"; do
  job="configs/agent/$op-cutile-rust.json"
  for need in "bundles-tilegym/tilegym/$op/manifest.json" "bundles-agent/$op/index.json"; do
    [[ -f "$need" ]] || { echo "agent_device_run: $need missing (see this script's header)"; exit 2; }
  done
  start=$(date +%s)
  if [[ -n "${PORTBENCH_AGENT_RESUME:-}" && -f "results/agent/$op/state.json" ]]; then
    echo "== portbench agent resume results/agent/$op =="
    timeout -s TERM "${PORTBENCH_AGENT_BUDGET_S:-480}" "$BIN" agent resume "results/agent/$op" 2>&1 | tee -a "$OUT/agent-$op.log"
  else
    echo "== portbench agent run $job =="
    timeout -s TERM "${PORTBENCH_AGENT_BUDGET_S:-480}" "$BIN" agent run "$job" --overwrite 2>&1 | tee "$OUT/agent-$op.log"
  fi
  code=${PIPESTATUS[0]}
  echo "exit $code, wall $(( $(date +%s) - start )) s"
  [[ $code -ne 0 ]] && rc=1
  python3 scripts/agent_summary.py "results/agent/$op" | tee "$OUT/agent-$op-summary.md"
  tar -C results/agent -czf "$OUT/agent-$op-workdir.tgz" --exclude='*.h5' "$op"
done
exit $rc
