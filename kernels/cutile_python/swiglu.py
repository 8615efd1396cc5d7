# SPDX-License-Identifier: Apache-2.0
"""swiglu for cuTile Python: c = silu(a) * b elementwise over a, b, c [B, S, H],
silu(v) = v / (1 + exp(-v)), fp32 math, one rounding.

Tile block (j, sb, bi) handles a (1, TILE_S, TILE_H) tile; partial tiles pad loads with 0 and
drop out-of-bounds stores. Each input element is read once, each output written once.

Exported entry arguments: a, b, c (each ptr, 3 shapes, 3 strides).
"""
import cuda.tile as ct

ZERO = ct.PaddingMode.ZERO


@ct.kernel
def swiglu(a, b, c, TILE_S: ct.Constant[int], TILE_H: ct.Constant[int]):
    j = ct.bid(0)
    sb = ct.bid(1)
    bi = ct.bid(2)
    at = ct.load(a, index=(bi, sb, j), shape=(1, TILE_S, TILE_H), padding_mode=ZERO).astype(ct.float32)
    bt = ct.load(b, index=(bi, sb, j), shape=(1, TILE_S, TILE_H), padding_mode=ZERO).astype(ct.float32)
    ct.store(c, index=(bi, sb, j), tile=(at / (1.0 + ct.exp(-at)) * bt).astype(c.dtype))
