# SPDX-License-Identifier: Apache-2.0
"""silu_and_mul for Triton: y[r, j] = silu(x[r, j]) * x[r, H + j] over the R = B*S rows of
x[B, S, 2H] (contiguous) and y[B, S, H], silu(g) = g / (1 + exp(-g)), fp32 math, one rounding.

Program (pj, pr) handles ROWS rows x BLOCK_H columns; every x element read once, every y
element written once. Arguments after AOT compilation: x_ptr, y_ptr, batch (x extent 0),
seq_len (x extent 1), h (y extent 2), then the two hidden scratch pointers.
"""
import triton
import triton.language as tl


@triton.jit
def silu_and_mul_kernel(x_ptr, y_ptr, batch, seq_len, h, ROWS: tl.constexpr, BLOCK_H: tl.constexpr):
    nrows = batch.to(tl.int64) * seq_len
    cols = tl.program_id(0) * BLOCK_H + tl.arange(0, BLOCK_H)
    rows = tl.program_id(1).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    mask = (rows < nrows)[:, None] & (cols < h)[None, :]
    xg = x_ptr + rows[:, None] * (2 * h) + cols[None, :]
    g = tl.load(xg, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(xg + h, mask=mask, other=0.0).to(tl.float32)
    y = g / (1.0 + tl.exp(-g)) * u
    tl.store(y_ptr + rows[:, None] * h + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
