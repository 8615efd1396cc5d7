#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The vendor yardstick beside the attention figures: times PyTorch's
scaled_dot_product_attention on a suite's fmha configurations with one backend at a time
(cuDNN, flash), as portbench times kernels (scripts/vendor_timing.py: CUPTI device time of every
kernel of a call, cold L2, median).

The tensors are laid out as reference/src/ops/fmha.cpp declares them: q [B, H, S, D], k and v
[B, H_kv, S, D] (GQA when kv_heads < heads, through enable_gqa), scale sm_scale or 1/sqrt(D),
values uniform in [-1, 1). SDPA has no fp8 path: float8_e5m2 configurations are error rows.
Flops: 4 B H S^2 D, halved when causal (upstream's count).

Usage (on the GPU host; python3 with torch):
  scripts/sdpa_bench.py --suite configs/tilegym.json [--backends cudnn,flash] [--filter REGEX]
      [--samples 20] [--time-cap 2] [--out sdpa.jsonl]
One row and JSON line per configuration and backend (vendor_timing.py's fields; "library" names
the backend); with several backends and --out F, one file per backend: F.cudnn, F.flash."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vendor_timing  # noqa: E402

OPS = ("fmha",)
BACKENDS = ("cudnn", "flash")


def flops(op: str, p: dict) -> float:
    """4 B H S^2 D multiply-adds-as-two for QK^T and PV; causal keeps half the pairs."""
    del op
    f = 4.0 * p["batch"] * p["heads"] * p["seq_len"] * p["seq_len"] * p["head_dim"]
    return f / 2 if p.get("is_causal", False) else f


def unsupported(p: dict) -> str | None:
    """Why SDPA cannot time this configuration, or None."""
    if p["dtype"] not in ("float16", "bfloat16"):
        return f"SDPA has no {p['dtype']} path"
    return None


def make_call_for(backend: str):
    def make_call(torch, op: str, p: dict):
        del op
        why = unsupported(p)
        if why:
            raise ValueError(why)
        from torch.nn.attention import SDPBackend, sdpa_kernel
        import torch.nn.functional as F

        dt = {"float16": torch.float16, "bfloat16": torch.bfloat16}[p["dtype"]]
        b, h, s, d = p["batch"], p["heads"], p["seq_len"], p["head_dim"]
        hkv = p.get("kv_heads", h)
        q = torch.rand((b, h, s, d), device="cuda", dtype=dt) * 2 - 1
        k = torch.rand((b, hkv, s, d), device="cuda", dtype=dt) * 2 - 1
        v = torch.rand((b, hkv, s, d), device="cuda", dtype=dt) * 2 - 1
        scale = p.get("sm_scale", d ** -0.5)
        causal = bool(p.get("is_causal", False))
        which = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[backend]

        def call():
            with sdpa_kernel([which]):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=hkv != h)
        return call, f"F.scaled_dot_product_attention ({backend} backend only)"
    return make_call


def main() -> int:
    ap = vendor_timing.arguments(__doc__.split("\n\n")[0], OPS)
    ap.add_argument("--backends", default=",".join(BACKENDS), help="SDPA backends, one at a time (default: %(default)s)")
    args = ap.parse_args()
    out = args.out
    rc = 0
    for backend in args.backends.split(","):
        if backend not in BACKENDS:
            print(f"sdpa_bench: unknown backend {backend!r} (known: {', '.join(BACKENDS)})", file=sys.stderr)
            return 2
        args.out = f"{out}.{backend}" if out and len(args.backends.split(",")) > 1 else out
        rc = max(rc, vendor_timing.run(args, "sdpa_bench", f"SDPA {backend}", make_call_for(backend), flops))
    return rc


if __name__ == "__main__":
    sys.exit(main())
