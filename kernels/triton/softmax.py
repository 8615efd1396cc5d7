# SPDX-License-Identifier: Apache-2.0
"""softmax for Triton: y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)), fp32 math.

Program p handles ROWS consecutive rows (grid = cdiv(m, ROWS); several rows per program where
rows are short). Rows are contiguous (inner stride 1 assumed), row strides are arguments;
masked lanes load -inf (exp gives 0). One rounding to the output dtype at the store.

- SINGLE=True:  BLOCK_N >= n: x read once, kept in registers, y written once.
- SINGLE=False: online pass (per-lane running max and rescaled sum), then a second pass that
  writes (x read twice).

Arguments after AOT compilation: x_ptr, y_ptr, x_row_stride, y_row_stride, m, n, then Triton's
two hidden scratch pointers.
"""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, m, n,
                   ROWS: tl.constexpr, BLOCK_N: tl.constexpr, SINGLE: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    rmask = (rows < m)[:, None]
    x_rows = x_ptr + rows[:, None] * x_row_stride
    y_rows = y_ptr + rows[:, None] * y_row_stride
    cols = tl.arange(0, BLOCK_N)[None, :]
    if SINGLE:
        mask = rmask & (cols < n)
        x = tl.load(x_rows + cols, mask=mask, other=-float("inf")).to(tl.float32)
        mx = tl.max(x, axis=1)[:, None]
        e = tl.exp(x - mx)
        s = tl.sum(e, axis=1)[:, None]
        tl.store(y_rows + cols, (e / s).to(y_ptr.dtype.element_ty), mask=mask)
    else:
        m_run = tl.full([ROWS, BLOCK_N], -float("inf"), tl.float32)
        s_run = tl.zeros([ROWS, BLOCK_N], tl.float32)
        for start in range(0, n, BLOCK_N):
            c = start + cols
            x = tl.load(x_rows + c, mask=rmask & (c < n), other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m_run, x)
            # lanes still at -inf (all loads masked so far) keep sum 0 instead of exp(nan)
            alpha = tl.where(m_new == -float("inf"), 0.0, tl.exp(m_run - m_new))
            s_run = s_run * alpha + tl.where(m_new == -float("inf"), 0.0, tl.exp(x - m_new))
            m_run = m_new
        mx = tl.max(m_run, axis=1)[:, None]
        s = tl.sum(tl.where(m_run == -float("inf"), 0.0, s_run * tl.exp(m_run - mx)), axis=1)[:, None]
        for start in range(0, n, BLOCK_N):
            c = start + cols
            mask = rmask & (c < n)
            x = tl.load(x_rows + c, mask=mask, other=-float("inf")).to(tl.float32)
            tl.store(y_rows + c, (tl.exp(x - mx) / s).to(y_ptr.dtype.element_ty), mask=mask)
