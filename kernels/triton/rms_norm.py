# SPDX-License-Identifier: Apache-2.0
"""rms_norm for Triton: y[r, :] = x[r, :] * rsqrt(mean(x[r, :]^2) + eps) * w.

One program per row (grid = m); rows are contiguous (inner stride 1 is assumed, not passed),
row strides are arguments. Float32 accumulation, one rounding to the output dtype at the store.

- SINGLE=True:  BLOCK_N >= n, the row is loaded once and kept in registers.
- SINGLE=False: the row is walked in BLOCK_N chunks twice (sum of squares, then scale).

Masked lanes load 0, which adds nothing to the sum of squares. Kernel arguments after AOT
compilation: x_ptr, w_ptr, y_ptr, x_row_stride, y_row_stride, n, eps (fp32), then Triton's two
hidden scratch pointers.
"""
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, x_row_stride, y_row_stride, n, eps,
                    BLOCK_N: tl.constexpr, SINGLE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    cols = tl.arange(0, BLOCK_N)
    if SINGLE:
        mask = cols < n
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for start in range(0, n, BLOCK_N):
            c = start + cols
            x = tl.load(x_row + c, mask=c < n, other=0.0).to(tl.float32)
            acc += x * x
        rstd = tl.rsqrt(tl.sum(acc, axis=0) / n + eps)
        for start in range(0, n, BLOCK_N):
            c = start + cols
            mask = c < n
            x = tl.load(x_row + c, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + c, mask=mask, other=0.0).to(tl.float32)
            tl.store(y_row + c, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)
