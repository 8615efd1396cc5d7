# SPDX-License-Identifier: Apache-2.0
"""rope for Triton (reference/src/ops/rope.cpp): rotate-half RoPE in place on q [B, Hq, S, D]
and k [B, Hkv, S, D] (strided views of [B, S, H, D] storage; the strides are arguments, inner
stride 1). For j < HALF = rope_dim / 2:
    x'[j]        = x[j] * cos[j]        - x[j + HALF] * sin[j]
    x'[j + HALF] = x[j + HALF] * cos[j + HALF] + x[j] * sin[j + HALF]
dims >= rope_dim are never touched. cos, sin are [B, S, rope_dim] (contiguous rows).

Program (ps, b) rotates TILE_S positions of batch b, all heads of q and k at once ([BHQ, BH]
and [BHK, BH] tiles, masked to Hq/Hkv heads and HALF columns). fp32 math, one rounding.

Arguments after AOT compilation: q_ptr, k_ptr, cos_ptr, sin_ptr, q strides (b, h, s),
k strides (b, h, s), cos strides (b, s), seq_len, hq, hkv, half, then the two hidden
scratch pointers.
"""
import triton
import triton.language as tl


@triton.jit
def _rotate(t_ptr, sb, sh, ss, b, pos, heads, half, c1, c2, s1, s2, BH_HEADS: tl.constexpr, BH: tl.constexpr):
    hs = tl.arange(0, BH_HEADS)
    js = tl.arange(0, BH)
    mask = (hs < heads)[:, None] & (js < half)[None, :]
    p1 = t_ptr + b * sb + pos * ss + hs[:, None].to(tl.int64) * sh + js[None, :]
    x1 = tl.load(p1, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(p1 + half, mask=mask, other=0.0).to(tl.float32)
    tl.store(p1, (x1 * c1[None, :] - x2 * s1[None, :]).to(t_ptr.dtype.element_ty), mask=mask)
    tl.store(p1 + half, (x2 * c2[None, :] + x1 * s2[None, :]).to(t_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rope_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, q_sb, q_sh, q_ss, k_sb, k_sh, k_ss, c_sb, c_ss,
                seq_len, hq, hkv, half, TILE_S: tl.constexpr, BHQ: tl.constexpr, BHK: tl.constexpr,
                BH: tl.constexpr):
    b = tl.program_id(1).to(tl.int64)
    s0 = tl.program_id(0).to(tl.int64) * TILE_S
    js = tl.arange(0, BH)
    jmask = js < half
    for i in tl.static_range(TILE_S):
        pos = s0 + i
        if pos < seq_len:
            cs = b * c_sb + pos * c_ss + js
            c1 = tl.load(cos_ptr + cs, mask=jmask, other=0.0).to(tl.float32)
            c2 = tl.load(cos_ptr + cs + half, mask=jmask, other=0.0).to(tl.float32)
            s1 = tl.load(sin_ptr + cs, mask=jmask, other=0.0).to(tl.float32)
            s2 = tl.load(sin_ptr + cs + half, mask=jmask, other=0.0).to(tl.float32)
            _rotate(q_ptr, q_sb, q_sh, q_ss, b, pos, hq, half, c1, c2, s1, s2, BHQ, BH)
            _rotate(k_ptr, k_sb, k_sh, k_ss, b, pos, hkv, half, c1, c2, s1, s2, BHK, BH)
