#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How far cuBLAS's and Triton's long fp16/bf16 product sums land from fp64 on the GPU, in the units
the reference's rounding rule uses (docs/reference.md): the error over sum_k |a_ik b_kj| and over
one output unit at the row's scale (eps * s). Inputs are drawn as the GEMM references draw them
(uniform on [-1, 1.2]: a positive mean, so results grow with k and some cancel to near zero).

Runs cuBLAS through torch.matmul (reduced-precision reductions off) and a Triton tl.dot kernel with
an fp32 accumulator, on the GPU; prints one line per (backend, dtype, k).

    python3 scripts/probe_gemm_accumulation.py [--k 2048 4096 8192] [--mn 256]
"""
import argparse
import sys

import torch


def triton_matmul():
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pm, pn = tl.program_id(0), tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
            y = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :])
            acc = tl.dot(x, y, acc)
        tl.store(c + rm[:, None] * N + rn[None, :], acc)

    def run(a, b):
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty((m, n), device=a.device, dtype=torch.float32)
        kernel[(m // 64, n // 64)](a, b, c, m, n, k, BM=64, BN=64, BK=64)
        return c

    return run


def stats(got, a64, b64):
    want = a64 @ b64
    terms = a64.abs() @ b64.abs()
    err = (got.double() - want).abs()
    s = want.pow(2).mean().sqrt().item()
    near = want.abs() < 2
    return {
        "max_err": err.max().item(),
        "max_err_over_terms": (err / terms).max().item(),
        "max_err_near_zero": err[near].max().item() if near.any() else float("nan"),
        "near_zero": int(near.sum().item()),
        "s": s,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, nargs="+", default=[2048, 4096, 8192])
    ap.add_argument("--mn", type=int, default=256)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("probe_gemm_accumulation: no CUDA device", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    tri = triton_matmul()
    gen = torch.Generator().manual_seed(1)
    for dt, eps in ((torch.float16, 2.0**-10), (torch.bfloat16, 2.0**-7)):
        for k in args.k:
            a = (torch.rand((args.mn, k), generator=gen, dtype=torch.float64) * 2.2 - 1).to(dt)
            b = (torch.rand((k, args.mn), generator=gen, dtype=torch.float64) * 2.2 - 1).to(dt)
            a64, b64 = a.double(), b.double()
            ag, bg = a.cuda(), b.cuda()
            backends = {
                "cublas": lambda: torch.matmul(ag, bg).float(),
            }
            if tri is not None:
                backends["triton_fp32acc"] = lambda: tri(ag, bg)
            for name, fn in backends.items():
                got = fn()
                torch.cuda.synchronize()
                r = stats(got.cpu(), a64, b64)
                print(f"{name:15s} {str(dt).split('.')[-1]:9s} k={k:5d} s={r['s']:.1f} "
                      f"max_err={r['max_err']:.4g} max_err/eps*s={r['max_err'] / (eps * r['s']):.3f} "
                      f"max_err/sum|ab|=2^{torch.tensor(r['max_err_over_terms']).log2().item():.2f} "
                      f"near_zero(|c|<2)={r['near_zero']} max_err_there={r['max_err_near_zero']:.4g}",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
