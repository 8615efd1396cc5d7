# SPDX-License-Identifier: Apache-2.0
"""swiglu for Triton: c = silu(a) * b elementwise over contiguous a, b, c [B, S, H],
silu(v) = v / (1 + exp(-v)), fp32 math, one rounding. One program per BLOCK elements of the
flattened tensors (n = B*S*H, int64 offsets). Arguments after AOT compilation: a_ptr, b_ptr,
c_ptr, batch, seq_len, h (a's extents), then the two hidden scratch pointers.
"""
import triton
import triton.language as tl


@triton.jit
def swiglu_kernel(a_ptr, b_ptr, c_ptr, batch, seq_len, h, BLOCK: tl.constexpr):
    n = batch.to(tl.int64) * seq_len * h
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(c_ptr + offs, (a / (1.0 + tl.exp(-a)) * b).to(c_ptr.dtype.element_ty), mask=mask)
