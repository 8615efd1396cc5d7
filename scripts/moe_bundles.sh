#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# moe bundles of issue 17, made here without a GPU:
#   build/moe.json             the 4 moe configurations of configs/tilegym.json
#   bundles-moe/tilegym        tilegym's export: fill, its 7 kernels, then the wrapper's final
#                              top-k sum (torch.sum / torch.add) as a plan's sum step
#   bundles-moe/cutile_rust    the port: align, GEMM 1, silu_and_mul, GEMM 2 x routing weight,
#                              top-k sum; every configuration with its variants
#   bundles-moe.tar.xz         both, for the device machine
# GPU (the lead):
#   portbench check bundles-moe/cutile_rust
#   portbench check bundles-moe/tilegym          (numerics of the 4 plans, the sum step included)
#   portbench run --ref bundles-moe/tilegym --port bundles-moe/cutile_rust --suite build/moe.json --runs 4
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SUITE=build/moe.json
OUT=bundles-moe
mkdir -p build "$OUT"
python3 - "$SUITE" <<'PY'
import json, sys
suite = json.load(open("configs/tilegym.json"))
configs = [c for c in suite["configs"] if c["op"] == "moe"]
json.dump({"suite": "tilegym-moe", "about": "the moe configurations of configs/tilegym.json (scripts/moe_bundles.sh)",
           "configs": configs}, open(sys.argv[1], "w"), indent=1)
print(f"[moe] {sys.argv[1]}: {len(configs)} configurations")
PY
bash scripts/export_tilegym.sh "$SUITE" "$OUT/tilegym" | grep -E '^(summary|exported|\[export\])'
start=$(date +%s)
kernels/cutile_rust/export.sh "$SUITE" "$OUT/cutile_rust" | tee build/moe_export_rust.log | grep -E '^(summary|skip):'
echo "[moe] cutile_rust exported in $(( $(date +%s) - start )) s ($(du -sm "$OUT/cutile_rust" | cut -f1) MiB)"
tar -cJf bundles-moe.tar.xz "$OUT/tilegym" "$OUT/cutile_rust" "$SUITE"
echo "[moe] bundles-moe.tar.xz ($(du -k bundles-moe.tar.xz | cut -f1) KiB): tar -xJf bundles-moe.tar.xz"
