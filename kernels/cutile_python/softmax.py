# SPDX-License-Identifier: Apache-2.0
"""softmax for cuTile Python: y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)), fp32 math.

Each tile block handles TILE_M consecutive rows (grid = cdiv(m, TILE_M)); one rounding to the
output dtype at the store. Padded lanes load as -inf (exp gives 0; the max ignores them).

- SINGLE=True:  TILE_N >= n: each row is read once and kept in registers (x read once, y
  written once).
- SINGLE=False: an online pass keeps a per-lane running max and rescaled sum over the TILE_N
  column tiles, then a second pass writes exp(x - max) / sum (x read twice).

Exported entry arguments: x (ptr, 2 shapes, 2 strides), y (ptr, 2 shapes, 2 strides).
"""
import cuda.tile as ct

NEG_INF = ct.PaddingMode.NEG_INF


@ct.kernel
def softmax(x, y, TILE_M: ct.Constant[int], TILE_N: ct.Constant[int], SINGLE: ct.Constant[bool]):
    bid = ct.bid(0)
    if SINGLE:
        xt = ct.load(x, index=(bid, 0), shape=(TILE_M, TILE_N), padding_mode=NEG_INF).astype(ct.float32)
        mx = ct.max(xt, axis=1, keepdims=True)
        e = ct.exp(xt - mx)
        s = ct.sum(e, axis=1, keepdims=True)
        ct.store(y, index=(bid, 0), tile=(e / s).astype(y.dtype))
    else:
        num_col_tiles = ct.num_tiles(x, axis=1, shape=(TILE_M, TILE_N))
        m_run = ct.full((TILE_M, TILE_N), -float("inf"), dtype=ct.float32)
        s_run = ct.zeros((TILE_M, TILE_N), dtype=ct.float32)
        for j in range(num_col_tiles):
            xt = ct.load(x, index=(bid, j), shape=(TILE_M, TILE_N), padding_mode=NEG_INF).astype(ct.float32)
            m_new = ct.maximum(m_run, xt)
            s_run = s_run * ct.exp(m_run - m_new) + ct.exp(xt - m_new)
            m_run = m_new
        mx = ct.max(m_run, axis=1, keepdims=True)
        s = ct.sum(s_run * ct.exp(m_run - mx), axis=1, keepdims=True)
        for j in range(num_col_tiles):
            xt = ct.load(x, index=(bid, j), shape=(TILE_M, TILE_N), padding_mode=NEG_INF).astype(ct.float32)
            ct.store(y, index=(bid, j), tile=(ct.exp(xt - mx) / s).astype(y.dtype))
