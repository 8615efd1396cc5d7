# SPDX-License-Identifier: Apache-2.0
"""silu_and_mul for cuTile Python: y[b, s, j] = silu(x[b, s, j]) * x[b, s, H + j], with
x[B, S, 2H], y[B, S, H], silu(g) = g / (1 + exp(-g)), fp32 math, one rounding.

Tile block (j, sb, b) handles rows sb*TILE_S.. of batch b, columns j*TILE_H..; TILE_H divides H
(the exporter guarantees it) so the up half is column tile j + H / TILE_H of x. Every element of
x is read once, every element of y written once.

Exported entry arguments: x (ptr, 3 shapes, 3 strides), y (ptr, 3 shapes, 3 strides).
"""
import cuda.tile as ct

ZERO = ct.PaddingMode.ZERO


@ct.kernel
def silu_and_mul(x, y, TILE_S: ct.Constant[int], TILE_H: ct.Constant[int]):
    j = ct.bid(0)
    sb = ct.bid(1)
    b = ct.bid(2)
    up = j + y.shape[2] // TILE_H
    g = ct.load(x, index=(b, sb, j), shape=(1, TILE_S, TILE_H), padding_mode=ZERO).astype(ct.float32)
    u = ct.load(x, index=(b, sb, up), shape=(1, TILE_S, TILE_H), padding_mode=ZERO).astype(ct.float32)
    yt = g / (1.0 + ct.exp(-g)) * u
    ct.store(y, index=(b, sb, j), tile=yt.astype(y.dtype))
