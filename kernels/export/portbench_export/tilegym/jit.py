# SPDX-License-Identifier: Apache-2.0
"""The KernelSignature cuTile's JIT (ct.launch) derives from a launch's arguments, rebuilt from
metadata so it can be exported ahead of time without a GPU.

For each array argument (cuda-tile 1.7 dispatcher, cext/tile_kernel.cpp
compute_array_specialization_bits and parse_array_constraint): index type int32 (int64 only where
the kernel parameter is annotated ct.IndexedWithInt64; a shape or stride beyond int32 is refused
as ct.launch refuses it); base address divisible by 16 bytes where it is (fresh allocations are;
a view is where its byte offset is); per axis, for arrays of rank <= 5: stride constant 1 where
the stride is 1, stride divisible by 16 bytes where it is, shape divisible by 16 where it is,
shape constant 1 where the extent is 1 (calling convention v2); stride lower bound 0; no alias
groups (the JIT never assumes aliasing); may alias internally unless the elements are disjoint.
A list of arrays (extract_py_list) is one ListConstraint over the AND of its items' bits, with
elements_may_alias and no alias groups; it is passed as two parameters, the address of a device
array of 1 + 2 ndim 64-bit words per item (address, shape, strides) and its int32 length.
ct.Constant parameters become constants, a Python int an int32 scalar (int64 with
ct.ScalarInt64), a Python float a float32 scalar."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ..cli import Unsupported
from .fake_torch import FakeTensor

I32 = (-2**31, 2**31 - 1)
TMA_MAX_NDIM = 5
DIVISOR_16 = 16
MAX_GRID_DIM = 2**24 - 1     # cuTile's launcher limit per grid dimension


@dataclass(frozen=True)
class ArraySpec:
    """What the JIT specialises an array on (kept for the manifest's tuning record)."""
    dtype: str
    ndim: int
    index_bits: int
    base_aligned_16: bool
    stride_one: tuple[bool, ...]
    stride_div16: tuple[bool, ...]
    shape_div16: tuple[bool, ...]
    shape_one: tuple[bool, ...]
    disjoint: bool


def array_spec(t: FakeTensor, index_bits: int, base_offset_elems: int) -> ArraySpec:
    bits = t.dtype.itemsize * 8
    lim = I32 if index_bits == 32 else (-2**63, 2**63 - 1)
    for what, values in (("shape", t.shape), ("stride", t.stride())):
        for d, v in enumerate(values):
            if not lim[0] <= v <= lim[1]:
                raise Unsupported(f"ct.launch refuses it: an array {what} exceeds the int32 index range "
                                  f"(the kernel parameter is not ct.IndexedWithInt64)")
    n = t.ndim
    spec = n <= TMA_MAX_NDIM
    shape, stride = tuple(t.shape), tuple(t.stride())
    s_one = tuple(spec and s == 1 for s in stride)
    s_div = tuple(spec and (s * bits // 8) % DIVISOR_16 == 0 for s in stride)
    sh_div = tuple(spec and d % DIVISOR_16 == 0 for d in shape)
    sh_one = tuple(spec and d == 1 for d in shape)
    order = sorted(zip(stride, shape))
    disjoint = n == 0 or order[0][0] > 0
    for (ps, pd), (cs, _) in zip(order, order[1:]):
        disjoint = disjoint and cs > 0 and cs >= ps * pd
    aligned = (base_offset_elems * t.dtype.itemsize) % DIVISOR_16 == 0
    return ArraySpec(t.dtype.name, n, index_bits, aligned, s_one, s_div, sh_div, sh_one, disjoint)


def array_constraint(a: ArraySpec):
    import cuda.tile as ct
    from cuda.tile.compilation import ArrayConstraint
    bits = getattr(ct, "bool_" if a.dtype == "bool" else a.dtype).bitwidth
    div = (DIVISOR_16 * 8) // bits
    return ArrayConstraint(
        getattr(ct, "bool_" if a.dtype == "bool" else a.dtype), a.ndim,
        index_dtype=ct.int64 if a.index_bits == 64 else ct.int32,
        stride_lower_bound_incl=0, alias_groups=(), may_alias_internally=not a.disjoint,
        stride_constant=tuple(1 if o else None for o in a.stride_one),
        shape_constant=tuple(1 if o else None for o in a.shape_one),
        stride_divisible_by=tuple(div if d else 1 for d in a.stride_div16),
        shape_divisible_by=tuple(DIVISOR_16 if d else 1 for d in a.shape_div16),
        base_addr_divisible_by=DIVISOR_16 if a.base_aligned_16 else 1)


@dataclass(frozen=True)
class Param:
    """One kernel parameter as the JIT sees it: an array, a scalar or a constant."""
    name: str
    kind: str                      # "array", "list", "scalar", "constant"
    value: Any                     # FakeTensor, list of FakeTensor, int/float, or the constant's value
    array: ArraySpec | None = None   # list: the one spec of every element (what they all share)
    scalar_type: str | None = None   # "i32", "i64", "f32"


def kernel_params(kernel, args: tuple, base_offset) -> list[Param]:
    """Classifies each launch argument against the kernel's parameter annotations.
    `base_offset(t)` gives a tensor's element offset from its 16-byte-aligned allocation start."""
    af = kernel._annotated_function
    names = list(af.pysig.parameters)
    anns = af.parameter_annotations
    if len(args) != len(names):
        raise Unsupported(f"{af.pyfunc.__name__}: launched with {len(args)} arguments for {len(names)} parameters")
    out = []
    for name, ann, v in zip(names, anns, args):
        if getattr(ann, "KIND", "leaf") != "leaf":
            raise Unsupported(f"{af.pyfunc.__name__}: tuple parameter '{name}' is not modelled")
        if ann.constant:
            if isinstance(v, FakeTensor) or not isinstance(v, (bool, int, float)):
                raise Unsupported(f"{af.pyfunc.__name__}: constant '{name}' is a {type(v).__name__}")
            out.append(Param(name, "constant", v))
        elif isinstance(v, FakeTensor):
            if ann.array is not None and (ann.array.static_shape_dims or ann.array.static_stride_dims):
                raise Unsupported(f"{af.pyfunc.__name__}: static shape/stride annotations are not modelled")
            bits = 64 if ann.array is not None and ann.array.index_dtype.bitwidth == 64 else 32
            out.append(Param(name, "array", v, array_spec(v, bits, base_offset(v))))
        elif isinstance(v, list):
            out.append(_list_param(af.pyfunc.__name__, name, ann, v, base_offset))
        elif isinstance(v, bool):
            raise Unsupported(f"{af.pyfunc.__name__}: bool scalar parameter '{name}' has no manifest literal type")
        elif isinstance(v, int):
            bits = ann.scalar.dtype.bitwidth if ann.scalar is not None else 32
            if bits == 32 and not I32[0] <= v <= I32[1]:
                raise Unsupported(f"ct.launch refuses it: int scalar '{name}' does not fit int32")
            out.append(Param(name, "scalar", v, scalar_type="i64" if bits == 64 else "i32"))
        elif isinstance(v, float):
            out.append(Param(name, "scalar", v, scalar_type="f32"))
        else:
            raise Unsupported(f"{af.pyfunc.__name__}: argument '{name}' of type {type(v).__name__} is not modelled")
    return out


def _list_param(func: str, name: str, ann, items: list, base_offset) -> Param:
    """A list of arrays (cuda-tile 1.7 dispatcher, cext/tile_kernel.cpp extract_py_list): two
    kernel parameters, the address of a device array of per-array descriptors and its length
    (int32); one ListConstraint whose element is the AND of every item's specialisation bits
    (ArrayTypeConstantBuilder::update), elements_may_alias, no alias groups
    (parse_list_constraint). Items must agree in dtype and rank; an empty list is refused."""
    if not items:
        raise Unsupported(f"ct.launch refuses it: list parameter '{name}' is empty")
    if not all(isinstance(t, FakeTensor) for t in items):
        raise Unsupported(f"{func}: list parameter '{name}' holds something other than arrays")
    if ann.list is not None and (ann.list.element.static_shape_dims or ann.list.element.static_stride_dims):
        raise Unsupported(f"{func}: static shape/stride annotations are not modelled")
    bits = 64 if ann.list is not None and ann.list.element.index_dtype.bitwidth == 64 else 32
    specs = [array_spec(t, bits, base_offset(t)) for t in items]
    first = specs[0]
    if any(a.dtype != first.dtype for a in specs):
        raise Unsupported(f"ct.launch refuses it: arrays in list '{name}' vary in data type")
    if any(a.ndim != first.ndim for a in specs):
        raise Unsupported(f"ct.launch refuses it: arrays in list '{name}' vary in rank")

    def all_of(field: str) -> tuple[bool, ...]:
        return tuple(all(x) for x in zip(*(getattr(a, field) for a in specs)))
    spec = ArraySpec(first.dtype, first.ndim, bits, all(a.base_aligned_16 for a in specs), all_of("stride_one"),
                     all_of("stride_div16"), all_of("shape_div16"), all_of("shape_one"),
                     all(a.disjoint for a in specs))
    return Param(name, "list", list(items), spec)


def signature(params: list[Param], symbol: str):
    import cuda.tile as ct
    from cuda.tile.compilation import CallingConvention, KernelSignature, ListConstraint, ScalarConstraint
    cons = []
    for p in params:
        if p.kind == "constant":
            cons.append(p.value)
        elif p.kind == "array":
            cons.append(array_constraint(p.array))
        elif p.kind == "list":
            cons.append(ListConstraint(array_constraint(p.array), alias_groups=(), elements_may_alias=True))
        else:
            cons.append(ScalarConstraint({"i32": ct.int32, "i64": ct.int64, "f32": ct.float32}[p.scalar_type]))
    return KernelSignature(cons, CallingConvention.cutile_python_v2(), symbol=symbol)


def resolved_hints(kernel, arch: str) -> dict[str, Any]:
    """The kernel's compiler options as they apply to `arch` (ByTarget resolved)."""
    by_target = kernel._compiler_options.hints_by_target()
    hints = dict(by_target["default"])
    hints.update(by_target.get(arch, {}))
    return hints


def jit_name(kernel, params: list[Param]) -> str:
    """The mangled name cuTile gives this specialisation (a complete key of the signature)."""
    from cuda.tile.compilation import mangle_kernel_name
    return mangle_kernel_name(kernel._annotated_function.pyfunc.__name__, signature(params, None))


def entry_symbol(kernel, mangled: str, hints: dict[str, Any]) -> str:
    """A short, stable, unique entry name: <python function>_<10 hex of signature and hints>."""
    func = kernel._annotated_function.pyfunc
    key = f"{func.__module__}.{func.__qualname__}|{mangled}|{sorted(hints.items())}"
    return f"{func.__name__.lstrip('_')}_{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def check_grid(grid: tuple[int, ...]) -> tuple[int, int, int]:
    g = tuple(int(x) for x in grid) + (1,) * (3 - len(grid))
    if len(g) != 3 or any(x < 1 for x in g):
        raise Unsupported(f"launch grid {tuple(grid)} is empty")
    if any(x > MAX_GRID_DIM for x in g):
        raise Unsupported("ct.launch refuses it: the grid exceeds cuTile's 2^24-1 limit per dimension")
    return g
