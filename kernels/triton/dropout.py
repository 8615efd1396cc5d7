# SPDX-License-Identifier: Apache-2.0
"""dropout for Triton with the reference's generator (reference/src/ops/dropout.cpp), not
Triton's Philox:

    r = uint32(i) * 1103515245 + seed (mod 2^32); r ^= r >> 16; r ^= r << 8; r ^= r >> 4
    keep element i  iff  (r & 0x7FFFFFFF) / (2^31 - 1) > p

done on integers (keep iff (r & 0x7FFFFFFF) >= threshold, threshold computed by the exporter
from the reference's double comparison), so masks are bit-exact. Kept: x * scale (f32
1 / (1 - p)); dropped: 0; TRAINING=False: y = x. One program per BLOCK elements.

Arguments after AOT compilation: `dropout_kernel`: x_ptr, y_ptr, n, seed (u32), threshold (u32),
scale (fp32); `dropout_inplace_kernel`: x_ptr, n, seed, threshold, scale; then the two hidden
scratch pointers.
"""
import triton
import triton.language as tl


@triton.jit
def _dropout(x_ptr, y_ptr, n, seed, threshold, scale, BLOCK: tl.constexpr, TRAINING: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if TRAINING:
        r = offs.to(tl.uint32) * 1103515245 + seed
        r = r ^ (r >> 16)
        r = r ^ (r << 8)
        r = r ^ (r >> 4)
        keep = (r & 0x7FFFFFFF) >= threshold
        x = tl.where(keep, x.to(tl.float32) * scale, 0.0).to(x_ptr.dtype.element_ty)
    tl.store(y_ptr + offs, x, mask=mask)


@triton.jit
def dropout_kernel(x_ptr, y_ptr, n, seed, threshold, scale, BLOCK: tl.constexpr, TRAINING: tl.constexpr):
    _dropout(x_ptr, y_ptr, n, seed, threshold, scale, BLOCK, TRAINING)


@triton.jit
def dropout_inplace_kernel(x_ptr, n, seed, threshold, scale, BLOCK: tl.constexpr, TRAINING: tl.constexpr):
    _dropout(x_ptr, x_ptr, n, seed, threshold, scale, BLOCK, TRAINING)
