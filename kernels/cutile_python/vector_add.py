# SPDX-License-Identifier: Apache-2.0
"""vector_add for cuTile Python: out = x + y over 1-D float arrays.

One tile block per TILE elements; grid = cdiv(n, TILE). The last tile is partial when n is not a
multiple of TILE: loads pad with zeros and the store drops the out-of-bounds lanes.
Exported ahead of time by portbench_export.cutile_python (TILE is a ct.Constant, so it is not a
kernel argument); each array is passed as (pointer, shape[0], stride[0]).
"""
import cuda.tile as ct


@ct.kernel
def vector_add(x, y, out, TILE: ct.Constant[int]):
    bid = ct.bid(0)
    a = ct.load(x, index=(bid,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
    b = ct.load(y, index=(bid,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(out, index=(bid,), tile=a + b)
