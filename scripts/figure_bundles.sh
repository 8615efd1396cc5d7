#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The suites and bundles of the fifteenth session's device calls (docs/device-log.md), made here
# without a GPU:
#   build/s15-pairs.json       moe and both gated delta rules of configs/tilegym.json (20)
#   build/s15-gdr-tune.json    the gated delta rules up to T 4096 (12; the tune of call 2)
#   build/s15-chunk-long.json  chunk_gated_delta_rule at T 8192 and 16384 (call 3's tune)
#   build/s15-gemm.json        issue 14's TFLOP/s table: matmul fp16 M = N = K 4096 and 8192, bmm
#                              8 x 4096^3 fp16, group_gemm 4 x 8192^3 fp16, upstream's LLM shapes (24)
#   build/s15-m32k.json        the nine matmul 32768^3
#   bundles-s15pairs.tar.xz    bundles-chosen/tilegym (tilegym's chosen plans of s15-pairs) and
#                              bundles-tilegym/cutile_rust (the port with every variant, the kept
#                              record's choices), with the suites
#   bundles-gemm.tar.xz        bundles-gemm/{tilegym,cutile_rust}: chosen plans of s15-gemm and
#                              s15-m32k (tilegym's 32768^3 choices transferred from 16384^3 by
#                              scripts/transfer_tuning.py), with the suites
# Then, through the device tool, carrying both archives (and the smoke export for the gpu tests):
#   PORTBENCH_RUST_TUNE=1 PORTBENCH_RUST_TUNE_OPS="moe recurrent_gated_delta_rule chunk_gated_delta_rule" \
#     PORTBENCH_TUNE_SUITE=build/s15-pairs.json PORTBENCH_TUNE_APPLY=1 PORTBENCH_PAIRS_SUITE=build/s15-pairs.json \
#     PORTBENCH_PAIRS_REF=bundles-chosen/tilegym PORTBENCH_PAIRS_PORT=bundles-tilegym/cutile_rust \
#     PORTBENCH_PAIRS_RUNS=4 bash scripts/device_run.sh
#   PORTBENCH_GEMM_SUITE=build/s15-gemm.json PORTBENCH_GEMM_STEPS="run cublas" bash scripts/device_gemm.sh
#   PORTBENCH_GEMM_SUITE=build/s15-m32k.json PORTBENCH_GEMM_STEPS="run cublas" bash scripts/device_gemm.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
mkdir -p build
python3 - <<'PY'
import json

configs = json.load(open("configs/tilegym.json"))["configs"]
llm = json.load(open("configs/gemm_llm.json"))["configs"]


def write(name, about, chosen):
    json.dump({"suite": name, "about": about, "configs": chosen}, open(f"build/{name}.json", "w"), indent=1)
    print(f"[figures] build/{name}.json: {len(chosen)} configurations")


gdr = ("recurrent_gated_delta_rule", "chunk_gated_delta_rule")
write("s15-pairs", "moe and the gated delta rules of configs/tilegym.json", [c for c in configs if c["op"] in ("moe",) + gdr])
write("s15-gdr-tune", "the gated delta rules up to T 4096", [c for c in configs if c["op"] in gdr and c["params"]["T"] <= 4096])
write("s15-chunk-long", "chunk_gated_delta_rule at T 8192 and 16384",
      [c for c in configs if c["op"] == "chunk_gated_delta_rule" and c["params"]["T"] >= 8192])


def square(c, sizes):
    p = c["params"]
    return p["dtype"] == "float16" and p["m"] == p["n"] == p["k"] and p["m"] in sizes


table = [c for c in configs if c["op"] == "matmul" and square(c, (4096, 8192))]
table += [c for c in configs if c["op"] == "bmm" and square(c, (4096,)) and c["params"]["batch"] == 8]
table += [c for c in configs if c["op"] == "group_gemm" and square(c, (8192,)) and c["params"]["num_groups"] == 4]
write("s15-gemm", "issue 14's TFLOP/s table: matmul and bmm fp16 M=N=K 4096/8192, group_gemm 4 x 8192^3, upstream's LLM shapes",
      table + llm)
write("s15-m32k", "the nine matmul 32768^3 configurations of configs/tilegym.json",
      [c for c in configs if c["op"] == "matmul" and c["params"]["m"] == 32768])
big = json.load(open("build/s15-m32k.json"))["configs"]
write("s15-gemm-all", "build/s15-gemm.json and build/s15-m32k.json", table + llm + big)
PY

rm -rf bundles-chosen/tilegym bundles-tilegym/cutile_rust bundles-gemm
PORTBENCH_TUNING=configs/tuning/tilegym-h200.json PORTBENCH_EXPORT_CHOSEN_ONLY=1 \
  bash scripts/export_tilegym.sh build/s15-pairs.json bundles-chosen/tilegym | grep -E '^(summary|\[export\])'
kernels/cutile_rust/export.sh build/s15-pairs.json bundles-tilegym/cutile_rust \
  --tuning configs/tuning/cutile_rust-h200.json | grep -E '^(summary|skip):'
tar -cJf bundles-s15pairs.tar.xz bundles-chosen bundles-tilegym build/s15-pairs.json build/s15-gdr-tune.json build/s15-chunk-long.json

# tilegym's 32768^3 choices are in the kept record, transferred from 16384^3; a record without
# them gets them here again (already-chosen configurations are left as they are).
python3 scripts/transfer_tuning.py configs/tuning/tilegym-h200.json build/s15-m32k.json build/s15-tilegym-tuning.json | tail -1
PORTBENCH_TUNING=build/s15-tilegym-tuning.json PORTBENCH_EXPORT_CHOSEN_ONLY=1 \
  bash scripts/export_tilegym.sh build/s15-gemm-all.json bundles-gemm/tilegym | grep -E '^(summary|\[export\])'
kernels/cutile_rust/export.sh build/s15-gemm-all.json bundles-gemm/cutile_rust --chosen-only \
  --tuning configs/tuning/cutile_rust-h200.json | grep -E '^(summary|skip):'
tar -cJf bundles-gemm.tar.xz bundles-gemm/tilegym bundles-gemm/cutile_rust build/s15-gemm.json build/s15-gemm-all.json build/s15-m32k.json
ls -la bundles-s15pairs.tar.xz bundles-gemm.tar.xz
