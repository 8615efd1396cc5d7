# SPDX-License-Identifier: Apache-2.0
"""rope for cuTile Python (reference/src/ops/rope.cpp): rotate-half RoPE in place on
q [B, Hq, S, D] and k [B, Hkv, S, D] (views of [B, S, H, D] storage; strides are arguments).
For j < HALF = rope_dim / 2:
    x'[j]        = x[j] * cos[j]        - x[j + HALF] * sin[j]
    x'[j + HALF] = x[j + HALF] * cos[j + HALF] + x[j] * sin[j + HALF]
dims >= rope_dim are untouched (never read or written). cos, sin are [B, S, rope_dim].

Tile block (sb, b) rotates positions sb*TILE_S.. of batch b for every q and k head (head tiles
TQ, TK >= Hq, Hkv, padded). HALF is a power of two, so the two halves are column tiles 0 and 1
of width HALF. fp32 math, one rounding; every rotated element read and written once.

Entry arguments: q (ptr, 4 shapes, 4 strides), k (same), cos (ptr, 3 shapes, 3 strides),
sin (same).
"""
import cuda.tile as ct

ZERO = ct.PaddingMode.ZERO


@ct.function
def _rotate(t, b, sb, c1, c2, s1, s2, TH: ct.Constant[int], TILE_S: ct.Constant[int],
            HALF: ct.Constant[int]):
    x1 = ct.load(t, index=(b, 0, sb, 0), shape=(1, TH, TILE_S, HALF), padding_mode=ZERO).astype(ct.float32)
    x2 = ct.load(t, index=(b, 0, sb, 1), shape=(1, TH, TILE_S, HALF), padding_mode=ZERO).astype(ct.float32)
    ct.store(t, index=(b, 0, sb, 0), tile=(x1 * c1 - x2 * s1).astype(t.dtype))
    ct.store(t, index=(b, 0, sb, 1), tile=(x2 * c2 + x1 * s2).astype(t.dtype))


@ct.kernel
def rope(q, k, cos, sin, TQ: ct.Constant[int], TK: ct.Constant[int], TILE_S: ct.Constant[int],
         HALF: ct.Constant[int]):
    sb = ct.bid(0)
    b = ct.bid(1)
    shape = (1, TILE_S, HALF)
    c1 = ct.reshape(ct.load(cos, index=(b, sb, 0), shape=shape, padding_mode=ZERO).astype(ct.float32),
                    (1, 1, TILE_S, HALF))
    c2 = ct.reshape(ct.load(cos, index=(b, sb, 1), shape=shape, padding_mode=ZERO).astype(ct.float32),
                    (1, 1, TILE_S, HALF))
    s1 = ct.reshape(ct.load(sin, index=(b, sb, 0), shape=shape, padding_mode=ZERO).astype(ct.float32),
                    (1, 1, TILE_S, HALF))
    s2 = ct.reshape(ct.load(sin, index=(b, sb, 1), shape=shape, padding_mode=ZERO).astype(ct.float32),
                    (1, 1, TILE_S, HALF))
    _rotate(q, b, sb, c1, c2, s1, s2, TQ, TILE_S, HALF)
    _rotate(k, b, sb, c1, c2, s1, s2, TK, TILE_S, HALF)
