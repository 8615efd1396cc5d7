# SPDX-License-Identifier: Apache-2.0
"""A stand-in `torch` for running tilegym's host wrappers without torch or a GPU.

Tensors are metadata only (`FakeTensor`): which storage they view, the element offset into it,
shape, strides and dtype, carried through the view operations the wrappers use (view, reshape,
transpose, permute, unsqueeze, squeeze, slicing, contiguous on contiguous tensors, ...).
Allocations (empty, empty_like, zeros, ...) create new storages; zeros marks its storage as
zero-initialised, torch.tensor of one host value records that value as the storage's init.
Copies and fills that torch runs as kernels of its own (contiguous() of a non-contiguous view,
.to(dtype), clone, copy_, item assignment, fill_ with a value, torch.full/ones) are recorded as
the capture's steps (`CopyStep`, `FillStep`), in order with the kernel launches, and become the
launch plan's copy and fill steps (docs/bundle-manifest.md). A sum over one dimension
(torch.sum(x, dim=d), Tensor.sum) and the add of two same-shaped views of one buffer
(torch.add(a, b): a sum over a stacked axis of extent 2) are recorded as `SumStep`s, the plan's
sum steps. Anything else that would compute on the GPU (other arithmetic and reductions,
gathers, host reads) raises cli.Unsupported naming the torch operation, because a portbench
launch plan holds only tilegym's kernels and those steps.

The dtypes are objects of their own (with itemsize, as torch's) and are registered with cuTile
as foreign dtypes, so a kernel body that says `torch.float32` compiles as `ct.float32`.
`torch.cuda` answers from the target description (SM count, compute capability)."""
from __future__ import annotations

import itertools
import math
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable

from ..cli import Unsupported


def needs_compute(what: str) -> Unsupported:
    return Unsupported(f"tilegym's wrapper needs real GPU compute through torch: {what}")


# ---- dtypes -----------------------------------------------------------------------------------

class FakeDType:
    """torch.dtype stand-in: name, itemsize, and the cuda.tile dtype it maps to."""

    def __init__(self, name: str, itemsize: int, floating: bool):
        self.name = name
        self.itemsize = itemsize
        self.is_floating_point = floating

    @property
    def ct(self):
        import cuda.tile as ct
        return getattr(ct, "bool_" if self.name == "bool" else self.name)

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def to_real(self):   # torch.dtype has this as a no-op in places; keep repr stable
        return self


DTYPES = {n: FakeDType(n, s, f) for n, s, f in [
    ("float16", 2, True), ("bfloat16", 2, True), ("float32", 4, True), ("float64", 8, True),
    ("float8_e4m3fn", 1, True), ("float8_e5m2", 1, True), ("int8", 1, False), ("int16", 2, False),
    ("int32", 4, False), ("int64", 8, False), ("uint8", 1, False), ("bool", 1, False)]}
ALIASES = {"half": "float16", "float": "float32", "double": "float64", "int": "int32", "long": "int64",
           "short": "int16"}


def dtype_named(name: str) -> FakeDType:
    """The stand-in dtype for a torch dtype name ("float16", "float8_e4m3fn", ...)."""
    try:
        return DTYPES[ALIASES.get(name, name)]
    except KeyError:
        raise Unsupported(f"dtype '{name}' has no cuTile equivalent") from None


# ---- storages and tensors ---------------------------------------------------------------------

# dtype name -> the element type of a manifest fill or copy step
STEP_TYPES = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16", "int64": "i64",
              "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8"}


def step_type(dt: FakeDType, what: str) -> str:
    """The step element type of `dt`, or Unsupported naming the torch op that needs it."""
    t = STEP_TYPES.get(dt.name)
    if t is None:
        raise needs_compute(f"{what} on {dt}: a plan's steps have no {dt.name} element type")
    return t


@dataclass(eq=False)
class Storage:
    """A device allocation: a named tensor of the operator (the reference declares it) or one the
    wrapper allocated (`index` in allocation order; `zeroed` when it came from torch.zeros,
    `init_value` when it came from torch.tensor of one host value)."""
    dtype: FakeDType
    elements: int
    name: str | None = None          # the operator tensor it is, if any
    index: int = -1                  # allocation order, for wrapper allocations
    zeroed: bool = False
    base_offset: int = 0             # elements from the allocation start to the named tensor's view
    init_value: int | float | None = None   # every element holds it before the plan runs

    @property
    def nbytes(self) -> int:
        return self.elements * self.dtype.itemsize


class Device:
    type = "cuda"
    index = 0

    def __init__(self, *args, **kwargs):
        pass

    def __str__(self) -> str:
        return "cuda:0"

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) or other in ("cuda", "cuda:0")

    def __hash__(self) -> int:
        return hash("cuda:0")


DEVICE = Device()


class Size(tuple):
    """torch.Size: a tuple that also knows numel()."""

    def numel(self) -> int:
        return math.prod(self)


def contiguous_strides(shape) -> tuple[int, ...]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(out))


def view_strides(shape, strides, new_shape) -> tuple[int, ...] | None:
    """Strides of `new_shape` as a view of (shape, strides), or None where torch's view would
    refuse (torch's computeStride)."""
    numel = math.prod(shape)
    if numel == 0 or not shape:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = strides[-1]
    tensor_numel, view_numel = 1, 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (shape[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = strides[tensor_d - 1]
                tensor_numel, view_numel = 1, 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def _shape_args(args) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    out = []
    for a in args:
        if isinstance(a, bool) or not isinstance(a, int):
            raise Unsupported(f"torch size argument {a!r} is not an integer")
        out.append(a)
    return tuple(out)


def _infer(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    if shape.count(-1) > 1:
        raise ValueError("only one dimension can be inferred")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        shape = tuple(numel // known if d == -1 else d for d in shape)
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape {list(shape)} is invalid for input of size {numel}")
    return shape


class FakeTensor:
    """Metadata of a torch tensor: storage, element offset, shape, strides (elements), dtype."""

    def __init__(self, storage: Storage, offset: int, shape, strides):
        self.storage = storage
        self.storage_offset_ = offset
        self._shape = Size(shape)
        self._strides = tuple(strides)
        self.requires_grad = False
        self.is_cuda = True
        self.device = DEVICE
        self.grad = None

    # -- metadata --
    @property
    def dtype(self) -> FakeDType:
        return self.storage.dtype

    @property
    def shape(self) -> Size:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    def size(self, dim: int | None = None):
        return self._shape if dim is None else self._shape[dim]

    def stride(self, dim: int | None = None):
        return self._strides if dim is None else self._strides[dim]

    def storage_offset(self) -> int:
        return self.storage_offset_

    def numel(self) -> int:
        return math.prod(self._shape)

    def nelement(self) -> int:
        return self.numel()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def is_contiguous(self, memory_format=None) -> bool:
        expected = 1
        for d, s in zip(reversed(self._shape), reversed(self._strides)):
            if d == 1:
                continue
            if s != expected:
                return False
            expected *= d
        return True

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def __len__(self) -> int:
        return self._shape[0]

    def __repr__(self) -> str:
        where = self.storage.name or f"alloc#{self.storage.index}"
        return f"FakeTensor({where}+{self.storage_offset_}, shape={list(self._shape)}, " \
               f"strides={list(self._strides)}, {self.dtype})"

    # -- views --
    def _view(self, offset: int, shape, strides) -> "FakeTensor":
        return FakeTensor(self.storage, offset, shape, strides)

    def view(self, *args):
        if len(args) == 1 and isinstance(args[0], FakeDType):
            if args[0].itemsize != self.dtype.itemsize:
                raise Unsupported("Tensor.view(dtype) to a dtype of another size")
            raise Unsupported("Tensor.view(dtype) reinterprets the storage")
        shape = _infer(_shape_args(args), self.numel())
        strides = view_strides(self._shape, self._strides, shape)
        if strides is None:
            raise RuntimeError("view size is not compatible with input tensor's size and stride")
        return self._view(self.storage_offset_, shape, strides)

    def reshape(self, *args):
        shape = _infer(_shape_args(args), self.numel())
        strides = view_strides(self._shape, self._strides, shape)
        if strides is None:
            raise needs_compute("Tensor.reshape of a non-viewable tensor copies it")
        return self._view(self.storage_offset_, shape, strides)

    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        n = self.ndim
        s, e = start_dim % max(n, 1), end_dim % max(n, 1)
        shape = self._shape[:s] + (math.prod(self._shape[s:e + 1]),) + self._shape[e + 1:]
        return self.reshape(*shape)

    def transpose(self, d0: int, d1: int):
        n = self.ndim
        d0, d1 = d0 % n, d1 % n
        shape, strides = list(self._shape), list(self._strides)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        strides[d0], strides[d1] = strides[d1], strides[d0]
        return self._view(self.storage_offset_, shape, strides)

    def permute(self, *dims):
        dims = _shape_args(dims)
        n = self.ndim
        dims = tuple(d % n for d in dims)
        return self._view(self.storage_offset_, [self._shape[d] for d in dims], [self._strides[d] for d in dims])

    @property
    def T(self):
        return self.permute(*reversed(range(self.ndim)))

    def unsqueeze(self, dim: int):
        n = self.ndim + 1
        dim = dim % n
        shape, strides = list(self._shape), list(self._strides)
        inner = strides[dim] * shape[dim] if dim < len(shape) else 1
        shape.insert(dim, 1)
        strides.insert(dim, inner)
        return self._view(self.storage_offset_, shape, strides)

    def squeeze(self, dim: int | None = None):
        keep = [i for i, d in enumerate(self._shape)
                if not (d == 1 and (dim is None or i == dim % max(self.ndim, 1)))]
        return self._view(self.storage_offset_, [self._shape[i] for i in keep], [self._strides[i] for i in keep])

    def expand(self, *sizes):
        raise Unsupported("Tensor.expand (broadcast views with zero strides) is not modelled")

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        if any(i is Ellipsis for i in idx):
            k = idx.index(Ellipsis)
            fill = self.ndim - (len(idx) - 1 - sum(i is None for i in idx))
            idx = idx[:k] + (slice(None),) * fill + idx[k + 1:]
        offset, shape, strides, d = self.storage_offset_, [], [], 0
        for i in idx:
            if i is None:
                shape.append(1)
                strides.append(1)
                continue
            size, stride = self._shape[d], self._strides[d]
            if isinstance(i, int) and not isinstance(i, bool):
                j = i + size if i < 0 else i
                if not 0 <= j < size:
                    raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")
                offset += j * stride
            elif isinstance(i, slice):
                start, stop, step = i.indices(size)
                if step <= 0:
                    raise Unsupported("negative-step slicing")
                n = max(0, -(-(stop - start) // step))
                offset += start * stride
                shape.append(n)
                strides.append(stride * step)
            else:
                raise needs_compute(f"Tensor indexing with {type(i).__name__} (a gather)")
            d += 1
        shape += list(self._shape[d:])
        strides += list(self._strides[d:])
        return self._view(offset, shape, strides)

    def contiguous(self, memory_format=None):
        if self.is_contiguous():
            return self
        return _copy_into_new(self, self.dtype, dense_strides=False, what="Tensor.contiguous()")

    def detach(self):
        return self

    def requires_grad_(self, flag: bool = True):
        return self

    def to(self, *args, **kwargs):
        target = kwargs.get("dtype")
        for a in args:
            if isinstance(a, FakeDType):
                target = a
        if target is None or target is self.dtype:
            return self
        what = f"Tensor.to({target})"
        step_type(target, what)
        if self._constant() is not None:          # a host value: the converted value, no copy
            value = self._constant()
            st = ALLOCATOR[0].new(self.shape, target, False).storage
            st.init_value = value if target.is_floating_point else int(value)
            return FakeTensor(st, 0, self.shape, contiguous_strides(self.shape))
        return _copy_into_new(self, target, dense_strides=True, what=what)

    def float(self):
        return self.to(DTYPES["float32"])

    def half(self):
        return self.to(DTYPES["float16"])

    def bfloat16(self):
        return self.to(DTYPES["bfloat16"])

    def int(self):
        return self.to(DTYPES["int32"])

    def long(self):
        return self.to(DTYPES["int64"])

    def cuda(self, *args, **kwargs):
        return self

    def zero_(self):
        return self._fill(0)

    def fill_(self, value):
        return self._fill(value)

    def _whole(self) -> bool:
        return self.storage_offset_ == 0 and self.is_contiguous() and self.numel() == self.storage.elements

    def _constant(self):
        """The value every element holds, where the storage is an untouched host-value tensor."""
        st = self.storage
        if st.name is None and untouched(st):
            if st.init_value is not None:
                return st.init_value
            if st.zeroed:
                return 0
        return None

    def _fill(self, value):
        if isinstance(value, FakeTensor):
            raise needs_compute("Tensor.fill_ with a tensor value reads a device value")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise Unsupported(f"Tensor.fill_ with {type(value).__name__} value {value!r}")
        if not self.dtype.is_floating_point and value != int(value):
            raise Unsupported(f"Tensor.fill_({value!r}) on {self.dtype}: not an integer")
        step_type(self.dtype, "Tensor.fill_")
        if value == 0 and self._whole() and self.storage.name is None and untouched(self.storage):
            self.storage.zeroed = True     # a fresh allocation, zero-filled before the plan runs
            return self
        ALLOCATOR[0].steps.append(FillStep(self, value if self.dtype.is_floating_point else int(value)))
        return self

    def clone(self, *args, **kwargs):
        return _copy_into_new(self, self.dtype, dense_strides=True, what="Tensor.clone()")

    def copy_(self, src, non_blocking=False):
        if not isinstance(src, FakeTensor):
            raise needs_compute(f"Tensor.copy_ from {type(src).__name__} uploads host data")
        if tuple(src.shape) != tuple(self.shape):
            raise needs_compute(f"Tensor.copy_ broadcasts {list(src.shape)} to {list(self.shape)}")
        step_type(src.dtype, "Tensor.copy_")
        step_type(self.dtype, "Tensor.copy_")
        ALLOCATOR[0].steps.append(CopyStep(src, self))
        return self

    def sum(self, dim=None, keepdim=False, dtype=None, out=None):
        return sum_(self, dim, keepdim, dtype=dtype, out=out)

    def item(self):
        raise needs_compute("Tensor.item() reads a device value back to the host")

    def tolist(self):
        raise needs_compute("Tensor.tolist() reads device values back to the host")

    def new_empty(self, *size, dtype=None, device=None, **kwargs):
        return empty(*size, dtype=dtype or self.dtype)

    def new_zeros(self, *size, dtype=None, device=None, **kwargs):
        return zeros(*size, dtype=dtype or self.dtype)

    def __getattr__(self, name: str):
        # Every other torch.Tensor method (arithmetic, reductions, ...) computes on the GPU.
        if name.startswith("__"):
            raise AttributeError(name)
        return _compute_op(f"Tensor.{name}")

    def _arith(self, *a, **k):
        raise needs_compute("tensor arithmetic runs a torch kernel")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __neg__ = _arith
    __iadd__ = __isub__ = __imul__ = __itruediv__ = __matmul__ = __pow__ = _arith

    def __setitem__(self, key, value):
        # torch: a copy into (or a fill of) the indexed view
        dst = self[key]
        if isinstance(value, FakeTensor):
            dst.copy_(value)
        else:
            dst.fill_(value)

    def __bool__(self):
        raise needs_compute("bool(tensor) reads a device value back to the host")


def _compute_op(name: str) -> Callable:
    def op(*args, **kwargs):
        raise needs_compute(f"{name}() runs a torch kernel")
    op.__name__ = name
    return op


# ---- allocation -------------------------------------------------------------------------------

@dataclass(eq=False)
class CopyStep:
    """dst[i] = src[i] (converted where the dtypes differ), as torch's copy kernel does it."""
    src: FakeTensor
    dst: FakeTensor


@dataclass(eq=False)
class SumStep:
    """dst[j] = the sum over axis `axis` of src at j (dst's shape is src's without that axis), as
    torch's reduction kernel does it: accumulated in fp32 for 16-bit floats, rounded once."""
    src: FakeTensor
    dst: FakeTensor
    axis: int


@dataclass(eq=False)
class FillStep:
    """Every element of `target` set to `value`, as torch's fill kernel does it."""
    target: FakeTensor
    value: int | float


class Allocator:
    """Numbers the wrapper's allocations in order and records the device work they get, in the
    order the wrapper makes it (copy and fill steps here, kernel launches by capture.Recorder);
    reset per capture."""

    def __init__(self):
        self.counter = itertools.count()
        self.storages: list[Storage] = []
        self.steps: list[Any] = []        # CopyStep, FillStep, SumStep and capture.LaunchRecord, in order

    def new(self, shape, dtype: FakeDType, zeroed: bool, strides=None) -> FakeTensor:
        shape = tuple(shape)
        st = Storage(dtype, math.prod(shape), index=next(self.counter), zeroed=zeroed)
        self.storages.append(st)
        return FakeTensor(st, 0, shape, strides or contiguous_strides(shape))


ALLOCATOR = [Allocator()]     # the current capture's allocator (replaced per capture)


def untouched(st: Storage) -> bool:
    """No step or launch of the current capture has written to (or passed along) storage st."""
    for step in ALLOCATOR[0].steps:
        if isinstance(step, (CopyStep, SumStep)) and step.dst.storage is st:
            return False
        if isinstance(step, FillStep) and step.target.storage is st:
            return False
        if hasattr(step, "args") and any(isinstance(a, FakeTensor) and a.storage is st for a in step.args):
            return False
    return True


def _copy_into_new(src: FakeTensor, dtype: FakeDType, dense_strides: bool, what: str) -> FakeTensor:
    """A new allocation with src's elements (torch: allocate, then its copy kernel): contiguous,
    or with src's strides where src is dense (torch.preserve_format, for .to and clone)."""
    step_type(src.dtype, what)
    step_type(dtype, what)
    strides = _dense_like_strides(src) if dense_strides else None
    dst = ALLOCATOR[0].new(src.shape, dtype, False, strides)
    ALLOCATOR[0].steps.append(CopyStep(src, dst))
    return dst


def _dtype_arg(dtype) -> FakeDType:
    if dtype is None:
        return DTYPES["float32"]
    if not isinstance(dtype, FakeDType):
        raise Unsupported(f"torch allocation with dtype {dtype!r}")
    return dtype


def empty(*size, dtype=None, device=None, **kwargs) -> FakeTensor:
    return ALLOCATOR[0].new(_shape_args(size), _dtype_arg(dtype), False)


def zeros(*size, dtype=None, device=None, **kwargs) -> FakeTensor:
    return ALLOCATOR[0].new(_shape_args(size), _dtype_arg(dtype), True)


def _dense_like_strides(t: FakeTensor):
    """torch.preserve_format: a dense, non-overlapping input keeps its strides."""
    if t.is_contiguous():
        return None
    order = sorted(range(t.ndim), key=lambda i: (t.stride(i), -i))
    acc = 1
    for i in order:
        if t.stride(i) != acc and t.size(i) != 1:
            return None
        acc *= t.size(i)
    return t.stride()


def empty_like(t: FakeTensor, dtype=None, device=None, **kwargs) -> FakeTensor:
    return ALLOCATOR[0].new(t.shape, dtype or t.dtype, False, _dense_like_strides(t))


def zeros_like(t: FakeTensor, dtype=None, device=None, **kwargs) -> FakeTensor:
    return ALLOCATOR[0].new(t.shape, dtype or t.dtype, True, _dense_like_strides(t))


def full(size, fill_value, dtype=None, device=None, **kwargs) -> FakeTensor:
    t = empty(*_shape_args((size,)), dtype=dtype)
    return t.fill_(fill_value)


def ones(*size, dtype=None, device=None, **kwargs):
    return empty(*size, dtype=dtype).fill_(1)


def _host_values(data) -> list:
    if isinstance(data, (list, tuple)):
        return [v for d in data for v in _host_values(d)]
    if isinstance(data, FakeTensor):
        raise needs_compute("torch.tensor of a device tensor copies it")
    if isinstance(data, bool) or not isinstance(data, (int, float)):
        raise Unsupported(f"torch.tensor of {type(data).__name__} {data!r}")
    return [data]


def _host_shape(data) -> tuple[int, ...]:
    if isinstance(data, (list, tuple)):
        return (len(data),) + (_host_shape(data[0]) if data else ())
    return ()


def tensor(data, dtype=None, device=None, **kwargs) -> FakeTensor:
    """torch.tensor of host data whose elements all hold one value (a position, a count): an
    allocation initialised with that value (the plan's scratch init); other data would need an
    upload the plan cannot hold."""
    values = _host_values(data)
    if len(set(values)) > 1:
        raise needs_compute(f"torch.tensor uploads {len(set(values))} distinct host values to the GPU")
    if dtype is None:
        dtype = DTYPES["float32"] if any(isinstance(v, float) for v in values) else DTYPES["int64"]
    dtype = _dtype_arg(dtype)
    step_type(dtype, "torch.tensor")
    t = ALLOCATOR[0].new(_host_shape(data), dtype, False)
    if values:
        v = values[0] if dtype.is_floating_point else int(values[0])
        if v == 0:
            t.storage.zeroed = True
        else:
            t.storage.init_value = v
    return t


# ---- sums ---------------------------------------------------------------------------------------

def _sum_into(src: FakeTensor, axis: int, shape, dtype: FakeDType, out, what: str) -> FakeTensor:
    """Records dst = sum of src over `axis` (a SumStep) into `out` or a new allocation of `shape`;
    the result has `shape` (the reduced dim kept as 1 where keepdim asks for it)."""
    step_type(src.dtype, what)
    if out is None:
        out = ALLOCATOR[0].new(shape, dtype, False)
    elif not isinstance(out, FakeTensor):
        raise Unsupported(f"{what} with out={type(out).__name__}")
    elif tuple(out.shape) != tuple(shape):
        raise needs_compute(f"{what} resizes out from {list(out.shape)} to {list(shape)}")
    step_type(out.dtype, what)
    if out.dtype.is_floating_point != src.dtype.is_floating_point:
        raise needs_compute(f"{what} of {src.dtype} into {out.dtype}: a plan's sum step keeps floats floats and "
                            f"integers integers")
    if out.storage is src.storage:
        raise needs_compute(f"{what} writes into the tensor it reads (a plan's sum step reads and writes "
                            f"separate memory)")
    # dst: the out view without the reduced axis (keepdim's extent-1 dim dropped), [1] for a scalar.
    keep = [i for i in range(out.ndim) if not (out.ndim == src.ndim and i == axis)]
    dst_shape = [out.shape[i] for i in keep] or [1]
    dst_strides = [out.stride(i) for i in keep] or [1]
    dst = FakeTensor(out.storage, out.storage_offset(), dst_shape, dst_strides)
    if src.shape[axis] == 0:
        ALLOCATOR[0].steps.append(FillStep(dst, 0.0 if dst.dtype.is_floating_point else 0))   # torch: zeros
    else:
        ALLOCATOR[0].steps.append(SumStep(src, dst, axis))
    return out


def sum_(x, dim=None, keepdim=False, *, dtype=None, out=None) -> FakeTensor:
    """torch.sum(x, dim) over one dimension (a plan's sum step); over all or several dimensions
    it raises Unsupported."""
    if not isinstance(x, FakeTensor):
        raise Unsupported(f"torch.sum of {type(x).__name__}")
    if isinstance(dim, (tuple, list)):
        if len(dim) != 1:
            raise needs_compute(f"torch.sum over dims {list(dim)}: a plan's sum step sums over one axis")
        dim = dim[0]
    if dim is None or isinstance(dim, bool) or not isinstance(dim, int):
        raise needs_compute("torch.sum over every dimension: a plan's sum step sums over one axis of a view")
    if x.ndim == 0:
        raise needs_compute("torch.sum of a 0-dim tensor")
    axis = dim % x.ndim
    shape = list(x.shape)
    if keepdim:
        shape[axis] = 1
    else:
        del shape[axis]
    if dtype is None:
        # torch.sum promotes integers (bool included) to int64
        dtype = x.dtype if x.dtype.is_floating_point else DTYPES["int64"]
    return _sum_into(x, axis, tuple(shape), _dtype_arg(dtype), out, "torch.sum()")


def add(a, b, *, alpha=1, out=None) -> FakeTensor:
    """torch.add(a, b) of two views of one buffer with equal shapes, strides and dtypes: one view
    with a stacked axis of extent 2 (stride the distance from a to b), summed over that axis, the
    same fp32 add and one rounding as torch's add kernel. Other operands raise Unsupported."""
    if not (isinstance(a, FakeTensor) and isinstance(b, FakeTensor)):
        raise needs_compute("torch.add() with a host value runs a torch kernel")
    if alpha != 1:
        raise needs_compute(f"torch.add(alpha={alpha!r}) scales an operand")
    if tuple(a.shape) != tuple(b.shape):
        raise needs_compute(f"torch.add() broadcasts {list(a.shape)} and {list(b.shape)}")
    if a.dtype is not b.dtype:
        raise needs_compute(f"torch.add() of {a.dtype} and {b.dtype} promotes types")
    if a.storage is not b.storage or tuple(a.stride()) != tuple(b.stride()):
        raise needs_compute("torch.add() of two tensors that are not views of one buffer with equal strides "
                            "(a plan's sum step sums over an axis of one view)")
    lo, hi = sorted((a, b), key=lambda t: t.storage_offset())   # a + b == b + a in IEEE arithmetic
    stacked = FakeTensor(a.storage, lo.storage_offset(), (2,) + tuple(a.shape),
                         (hi.storage_offset() - lo.storage_offset(),) + tuple(a.stride()))
    return _sum_into(stacked, 0, tuple(a.shape), a.dtype, out, "torch.add()")


# ---- torch.cuda, autograd, nn, misc -----------------------------------------------------------

class Stream:
    cuda_stream = 0

    def __cuda_stream__(self):
        return (0, 0)


STREAM = Stream()


@dataclass
class DeviceProperties:
    name: str
    multi_processor_count: int
    major: int
    minor: int
    total_memory: int = 141 * 2**30
    L2_cache_size: int = 0


class _Ctx:
    """autograd ctx: remembers nothing that matters here."""

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def mark_dirty(self, *tensors):
        pass

    def mark_non_differentiable(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        pass


class Function:
    """torch.autograd.Function: apply() runs forward with a fresh ctx."""

    @classmethod
    def apply(cls, *args, **kwargs):
        return cls.forward(_Ctx(), *args, **kwargs)


class Module:
    def __init__(self, *args, **kwargs):
        pass


class _NoGrad:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn


@dataclass
class TorchState:
    """What torch.cuda reports: the target's SM count and compute capability."""
    gpu_name: str = "NVIDIA H200"
    sm_count: int = 132
    capability: tuple[int, int] = (9, 0)
    modules: dict[str, types.ModuleType] = field(default_factory=dict)


def make_torch(state: TorchState) -> dict[str, types.ModuleType]:
    """The stand-in modules torch, torch.cuda, torch.nn, torch.nn.functional, torch.autograd."""
    torch = types.ModuleType("torch")
    torch.__doc__ = "portbench stand-in: metadata-only tensors (portbench_export.tilegym.fake_torch)"
    torch.__version__ = "0.0+portbench.standin"
    for name, dt in DTYPES.items():
        setattr(torch, name, dt)
    for alias, name in ALIASES.items():
        setattr(torch, alias, DTYPES[name])
    torch.dtype = FakeDType
    torch.Tensor = torch.LongTensor = torch.FloatTensor = FakeTensor
    torch.Size = Size
    torch.device = Device
    torch.Generator = type("Generator", (), {})
    torch.empty, torch.zeros, torch.empty_like, torch.zeros_like = empty, zeros, empty_like, zeros_like
    torch.full, torch.ones, torch.tensor = full, ones, tensor
    torch.sum, torch.add = sum_, add
    torch.no_grad = torch.inference_mode = torch.enable_grad = lambda *a, **k: _NoGrad()
    torch.is_grad_enabled = lambda: False
    torch.is_tensor = lambda x: isinstance(x, FakeTensor)
    torch.preserve_format = torch.contiguous_format = "format"

    def _getattr(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _compute_op(f"torch.{name}")
    torch.__getattr__ = _getattr   # every other torch function computes

    cuda = types.ModuleType("torch.cuda")
    cuda.current_stream = lambda device=None: STREAM
    cuda.default_stream = lambda device=None: STREAM
    cuda.Stream = Stream
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    cuda.synchronize = lambda device=None: None
    cuda.get_device_properties = lambda device=None: DeviceProperties(
        state.gpu_name, state.sm_count, state.capability[0], state.capability[1])
    cuda.get_device_capability = lambda device=None: tuple(state.capability)
    cuda.get_device_name = lambda device=None: state.gpu_name
    torch.cuda = cuda

    # torch.random: host-side seeds (tilegym.ops.ops takes initial_seed() as a default argument)
    rnd = types.ModuleType("torch.random")
    rnd.initial_seed = lambda: 0
    rnd.seed = lambda: 0
    rnd.manual_seed = lambda seed: None
    torch.random = rnd
    torch.initial_seed, torch.manual_seed, torch.seed = rnd.initial_seed, rnd.manual_seed, rnd.seed

    autograd = types.ModuleType("torch.autograd")
    autograd.Function = Function
    torch.autograd = autograd

    nn = types.ModuleType("torch.nn")
    nn.Module = Module
    nn.Parameter = lambda t=None, requires_grad=True: t
    nn.Linear = type("Linear", (Module,), {})
    functional = types.ModuleType("torch.nn.functional")
    functional.__getattr__ = lambda name: _compute_op(f"torch.nn.functional.{name}")
    nn.functional = functional
    torch.nn = nn
    mods = {"torch": torch, "torch.cuda": cuda, "torch.autograd": autograd, "torch.random": rnd, "torch.nn": nn,
            "torch.nn.functional": functional}
    state.modules = mods
    return mods


def register_dtypes_with_cutile() -> None:
    """Kernel bodies name torch dtypes (`ct.astype(x, torch.float32)`): cuTile resolves foreign
    dtype objects through its registry, so map each stand-in dtype to its cuda.tile dtype."""
    from cuda.tile import _cext
    for dt in DTYPES.values():
        _cext.foreign_dtype_object_register(dt, dt.ct)


def install(state: TorchState) -> None:
    """Puts the stand-in torch into sys.modules (refusing to shadow a real torch)."""
    existing = sys.modules.get("torch")
    if existing is not None and not getattr(existing, "__version__", "").endswith("portbench.standin"):
        raise Unsupported("a real torch is already imported in this process; the tilegym exporter needs "
                          "its metadata-only stand-in")
    sys.modules.update(make_torch(state))
    register_dtypes_with_cutile()
