# SPDX-License-Identifier: Apache-2.0
"""dropout for cuTile Python, with the reference's generator (reference/src/ops/dropout.cpp):

    r = uint32(i) * 1103515245 + seed (mod 2^32); r ^= r >> 16; r ^= r << 8; r ^= r >> 4
    keep element i  iff  (r & 0x7FFFFFFF) / (2^31 - 1) > p

The comparison is done on integers: keep iff (r & 0x7FFFFFFF) >= threshold, where the exporter
computes threshold as the smallest integer passing the reference's double comparison (bit-exact
masks). Kept elements are x * scale (scale = 1 / (1 - p) in f32), dropped ones 0; with
TRAINING=False y = x. One tile block per TILE elements; x read once, y written once.

Entry arguments: `dropout`: x (ptr, shape, stride), y (ptr, shape, stride), seed (u32),
threshold (u32), scale (f32); `dropout_inplace`: x (ptr, shape, stride), seed, threshold, scale.
"""
import cuda.tile as ct

ZERO = ct.PaddingMode.ZERO


@ct.function
def _apply(xt, bid, seed, threshold, scale, TILE: ct.Constant[int], TRAINING: ct.Constant[bool]):
    if TRAINING:
        i = (ct.arange(TILE, dtype=ct.int32) + bid * TILE).astype(ct.uint32)
        r = i * ct.uint32(1103515245) + seed
        r = r ^ (r >> 16)
        r = r ^ (r << 8)
        r = r ^ (r >> 4)
        keep = (r & ct.uint32(0x7FFFFFFF)) >= threshold
        return ct.where(keep, xt.astype(ct.float32) * scale, 0.0).astype(xt.dtype)
    else:
        return xt


@ct.kernel
def dropout(x, y, seed, threshold, scale, TILE: ct.Constant[int], TRAINING: ct.Constant[bool]):
    bid = ct.bid(0)
    xt = ct.load(x, index=(bid,), shape=(TILE,), padding_mode=ZERO)
    ct.store(y, index=(bid,), tile=_apply(xt, bid, seed, threshold, scale, TILE, TRAINING))


@ct.kernel
def dropout_inplace(x, seed, threshold, scale, TILE: ct.Constant[int], TRAINING: ct.Constant[bool]):
    bid = ct.bid(0)
    xt = ct.load(x, index=(bid,), shape=(TILE,), padding_mode=ZERO)
    ct.store(x, index=(bid,), tile=_apply(xt, bid, seed, threshold, scale, TILE, TRAINING))
