# SPDX-License-Identifier: Apache-2.0
"""Read kernels of many launch shapes, for decode_floor.py --search: the fastest of them is a
tighter floor than torch's own sum, whose single grid choice is not tuned to each byte count.

Every kernel reads all n fp16 elements once and writes one fp32 partial sum per program (a few
bytes); the caller checks the partials' total against torch's sum, so a shape that skipped
elements fails rather than looking fast. Two families:
  chunk       program p reads elements [p*ITERS*BLOCK, (p+1)*ITERS*BLOCK): grid = n / (ITERS*BLOCK)
  persistent  a grid of WAVES programs per SM strides over the whole tensor"""
import itertools
from dataclasses import dataclass

import triton
import triton.language as tl


@triton.jit
def _read_chunk(x_ptr, partial_ptr, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * (BLOCK * ITERS)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(ITERS):
        idx = start + i * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + idx, mask=idx < n, other=0.0).to(tl.float32)
    tl.store(partial_ptr + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def _read_persistent(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    step = tl.num_programs(0).to(tl.int64) * BLOCK
    for start in range(tl.program_id(0).to(tl.int64) * BLOCK, n, step):
        idx = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + idx, mask=idx < n, other=0.0).to(tl.float32)
    tl.store(partial_ptr + tl.program_id(0), tl.sum(acc, axis=0))


@dataclass(frozen=True)
class ReadShape:
    family: str       # "chunk" or "persistent"
    block: int        # elements per program per step
    warps: int
    per_program: int  # chunk: ITERS; persistent: waves (programs per SM)

    def grid(self, n: int, sm_count: int) -> int:
        if self.family == "chunk":
            return max(1, triton.cdiv(n, self.block * self.per_program))
        return max(1, min(self.per_program * sm_count, triton.cdiv(n, self.block)))

    def __str__(self):
        return f"{self.family} block={self.block} warps={self.warps} {'iters' if self.family == 'chunk' else 'waves'}={self.per_program}"


def shapes():
    """Every shape the search times: 8 to 64 bytes per thread per step, 4 or 8 warps, programs
    from one step to a sixteen-step chunk, and persistent grids of 1 to 8 programs per SM."""
    chunk = [ReadShape("chunk", b, w, i) for b, w, i in itertools.product((1024, 2048, 4096), (4, 8), (1, 2, 4, 8, 16))]
    persistent = [ReadShape("persistent", b, w, v) for b, w, v in itertools.product((2048, 4096), (4, 8), (1, 2, 4, 8))]
    return chunk + persistent


def launch(shape: ReadShape, x, partials, sm_count: int):
    """One launch of `shape` over x (fp16, contiguous) into partials (fp32, at least its grid)."""
    n = x.numel()
    grid = (shape.grid(n, sm_count),)
    if shape.family == "chunk":
        _read_chunk[grid](x, partials, n, BLOCK=shape.block, ITERS=shape.per_program, num_warps=shape.warps)
    else:
        _read_persistent[grid](x, partials, n, BLOCK=shape.block, num_warps=shape.warps)
    return grid[0]
