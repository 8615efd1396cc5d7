# SPDX-License-Identifier: Apache-2.0
"""rms_norm for cuTile Python: y[r, :] = x[r, :] * rsqrt(mean(x[r, :]^2) + eps) * w.

Each tile block normalises TILE_M consecutive rows (grid = cdiv(m, TILE_M)). Accumulation in
float32; the result is rounded once to the input dtype. eps is a float32 kernel argument.
TILE_N is the column tile (a power of two):

- SINGLE=True:  TILE_N >= n, each row is one tile, loaded once and kept in registers.
- SINGLE=False: rows are walked in TILE_N-wide tiles twice (sum of squares, then scale).

Partial tiles (n not a multiple of TILE_N, m not a multiple of TILE_M) load as zeros, which add
nothing to the sums; their out-of-bounds lanes are dropped by the store. Arguments of the
exported entry, in order: x (ptr, 2 shapes, 2 strides), w (ptr, shape, stride), y (ptr,
2 shapes, 2 strides), eps.
"""
import cuda.tile as ct

ZERO = ct.PaddingMode.ZERO


@ct.kernel
def rms_norm(x, w, y, eps, TILE_M: ct.Constant[int], TILE_N: ct.Constant[int],
             SINGLE: ct.Constant[bool]):
    bid = ct.bid(0)
    n = x.shape[1]
    if SINGLE:
        xt = ct.load(x, index=(bid, 0), shape=(TILE_M, TILE_N), padding_mode=ZERO).astype(ct.float32)
        rstd = ct.rsqrt(ct.sum(xt * xt, axis=1, keepdims=True) / n + eps)
        wt = ct.load(w, index=(0,), shape=(TILE_N,), padding_mode=ZERO).astype(ct.float32)
        yt = xt * rstd * ct.reshape(wt, (1, TILE_N))
        ct.store(y, index=(bid, 0), tile=yt.astype(y.dtype))
    else:
        num_col_tiles = ct.num_tiles(x, axis=1, shape=(TILE_M, TILE_N))
        acc = ct.zeros((TILE_M, TILE_N), dtype=ct.float32)
        for j in range(num_col_tiles):
            xt = ct.load(x, index=(bid, j), shape=(TILE_M, TILE_N), padding_mode=ZERO).astype(ct.float32)
            acc = acc + xt * xt
        rstd = ct.rsqrt(ct.sum(acc, axis=1, keepdims=True) / n + eps)
        for j in range(num_col_tiles):
            xt = ct.load(x, index=(bid, j), shape=(TILE_M, TILE_N), padding_mode=ZERO).astype(ct.float32)
            wt = ct.load(w, index=(j,), shape=(TILE_N,), padding_mode=ZERO).astype(ct.float32)
            yt = xt * rstd * ct.reshape(wt, (1, TILE_N))
            ct.store(y, index=(bid, j), tile=yt.astype(y.dtype))
