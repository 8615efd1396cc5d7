# SPDX-License-Identifier: Apache-2.0
"""vector_add for Triton: out = x + y over 1-D arrays.

One program per BLOCK elements (grid = cdiv(n, BLOCK)); the last block is masked. Offsets are
computed in int64 so n near 2^31 cannot overflow. Kernel arguments after AOT compilation:
x_ptr, y_ptr, out_ptr, n, then Triton's two hidden scratch pointers (BLOCK is a constexpr).
"""
import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)
