#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The vendor library beside every GEMM figure: times cuBLAS through PyTorch on a suite's matmul,
bmm and group_gemm configurations, as portbench times kernels (scripts/vendor_timing.py: CUPTI
device time of every kernel of a call, cold L2, median).

The operands are laid out as reference/src/ops/{matmul,bmm,group_gemm}.cpp declares them:
transpose_a means A is stored [K, M] and the product takes its transpose (a view, no copy:
cuBLAS reads it transposed), likewise transpose_b. float32 runs with TF32 tensor cores (as
upstream's kernels do); float8_e4m3fn runs through torch._scaled_mm (cuBLASLt, scales 1) with the
layout cuBLASLt's fp8 GEMM requires (A row-major [M, K], B column-major) and an fp8 output, the
vendor's best case whatever the configuration's transposes. group_gemm is G torch.matmul calls (no
grouped GEMM in torch's public API), timed as one sample.

Usage (on the GPU host; python3 with torch):
  scripts/cublas_bench.py --suite configs/tilegym.json --suite configs/gemm_llm.json \\
      [--ops matmul,bmm,group_gemm] [--filter REGEX] [--samples 20] [--time-cap 2] [--out cublas.jsonl]
Prints a table (median us, TFLOP/s, samples, kernels) and, with --out, one JSON line per
configuration (vendor_timing.py); scripts/gemm_tflops.py joins them with a report."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vendor_timing  # noqa: E402

OPS = ("matmul", "bmm", "group_gemm")


def flops(op: str, p: dict) -> float:
    """Multiply-adds counted as two operations, as upstream's TFLOP/s figures count them."""
    base = 2.0 * p["m"] * p["n"] * p["k"]
    return base * (p.get("batch", 1) if op == "bmm" else p.get("num_groups", 1) if op == "group_gemm" else 1)


def torch_dtype(torch, name: str):
    try:
        return {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
                "float8_e4m3fn": torch.float8_e4m3fn}[name]
    except KeyError:
        raise ValueError(f"dtype {name!r} is not timed here") from None


def operand(torch, rows: int, cols: int, transposed: bool, dtype, batch: int | None = None):
    """The logical [rows, cols] operand, stored as the reference stores it ([cols, rows] and viewed
    transposed when `transposed`). Values are uniform in [-1, 1) (fp8: scaled to keep |C| small)."""
    shape = (cols, rows) if transposed else (rows, cols)
    if batch is not None:
        shape = (batch,) + shape
    work = torch.float16 if dtype == torch.float8_e4m3fn else dtype
    t = (torch.rand(shape, device="cuda", dtype=work) * 2 - 1).to(dtype)
    return t.transpose(-1, -2) if transposed else t


def make_call(torch, op: str, p: dict):
    """A closure performing the product once, and a note on how it maps onto torch."""
    dt = torch_dtype(torch, p["dtype"])
    ta, tb = bool(p.get("transpose_a", False)), bool(p.get("transpose_b", False))
    m, n, k = p["m"], p["n"], p["k"]
    if dt == torch.float8_e4m3fn:
        if op != "matmul":
            raise ValueError("fp8 is timed for matmul only")
        a = operand(torch, m, k, False, dt)
        b = operand(torch, k, n, True, dt)   # column-major [K, N]: stored [N, K]
        one = torch.ones((), device="cuda", dtype=torch.float32)
        return (lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=dt)), \
            "torch._scaled_mm (cuBLASLt fp8, A row-major, B column-major, scales 1, fp8 out)"
    if op == "matmul":
        a, b = operand(torch, m, k, ta, dt), operand(torch, k, n, tb, dt)
        return (lambda: torch.matmul(a, b)), "torch.matmul"
    if op == "bmm":
        q = p["batch"]
        a, b = operand(torch, m, k, ta, dt, q), operand(torch, k, n, tb, dt, q)
        return (lambda: torch.bmm(a, b)), "torch.bmm"
    g = p["num_groups"]
    pairs = [(operand(torch, m, k, False, dt), operand(torch, k, n, tb, dt)) for _ in range(g)]

    def grouped():
        for a, b in pairs:
            torch.matmul(a, b)
    return grouped, f"torch.matmul x {g}"


def main() -> int:
    args = vendor_timing.arguments(__doc__.split("\n\n")[0], OPS).parse_args()

    def tf32(torch):
        torch.backends.cuda.matmul.allow_tf32 = True   # fp32 as TF32, as upstream's kernels compute

    return vendor_timing.run(args, "cublas_bench", "cuBLAS", make_call, flops, setup=tf32)


if __name__ == "__main__":
    sys.exit(main())
