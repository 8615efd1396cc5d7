# SPDX-License-Identifier: Apache-2.0
"""layer_norm_legacy for Triton (reference/src/ops/layer_norm.cpp):
y = (x - mean) * rsqrt(var + eps) * (w + weight_shift) + b over each row of x[m, n], biased
variance, fp32 math, one rounding. `persistent_layer_norm_kernel` (variant
persistent_layer_norm) also writes mean[m] and rstd[m] in fp32.

Program p handles ROWS consecutive rows with BLOCK_N >= n (the row is read once and kept in
registers; x read once, y written once). Rows are contiguous, row strides are arguments.

Arguments after AOT compilation: x_ptr, w_ptr, b_ptr, y_ptr, [mean_ptr, rstd_ptr,]
x_row_stride, y_row_stride, m, n, eps (fp32), weight_shift (fp32), then the two hidden scratch
pointers.
"""
import triton
import triton.language as tl


@triton.jit
def _normalise(x_ptr, w_ptr, b_ptr, y_ptr, x_row_stride, y_row_stride, m, n, eps, shift,
               ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < n
    mask = (rows < m)[:, None] & cmask[None, :]
    x = tl.load(x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=1) / n
    xc = tl.where(mask, x - mean[:, None], 0.0)
    rstd = tl.rsqrt(tl.sum(xc * xc, axis=1) / n + eps)
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0).to(tl.float32) + shift
    b = tl.load(b_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    y = xc * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(y_ptr + rows[:, None] * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
    return rows, mean, rstd


@triton.jit
def layer_norm_legacy_kernel(x_ptr, w_ptr, b_ptr, y_ptr, x_row_stride, y_row_stride, m, n, eps, shift,
                             ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    _normalise(x_ptr, w_ptr, b_ptr, y_ptr, x_row_stride, y_row_stride, m, n, eps, shift, ROWS, BLOCK_N)


@triton.jit
def persistent_layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, x_row_stride, y_row_stride,
                                 m, n, eps, shift, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows, mean, rstd = _normalise(x_ptr, w_ptr, b_ptr, y_ptr, x_row_stride, y_row_stride, m, n, eps, shift,
                                  ROWS, BLOCK_N)
    tl.store(mean_ptr + rows, mean, mask=rows < m)
    tl.store(rstd_ptr + rows, rstd, mask=rows < m)
