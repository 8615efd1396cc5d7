# SPDX-License-Identifier: Apache-2.0
"""From a captured pass to a launch plan: each launch's JIT signature and its manifest params.

Binding (cuTile calling convention v2: per array pointer, extents, strides; constants absent;
scalars by value):
- a view of an operator tensor (passed in, or allocated by the wrapper and returned as one of
  the reference's outputs) -> `ptr` of that tensor, with "offset" when the view starts inside
  it; each extent/stride `extent`/`stride` of the tensor where the view axis is one of the
  tensor's axes (same extent and stride), else a literal (fixed by the configuration);
- any other allocation of the wrapper (Rstd, split-KV partials, LSE, counters, ...) -> a
  declared scratch buffer named after the first kernel parameter that receives it, with its
  bytes, and "init": "zero" where the wrapper allocated it with torch.zeros;
- scalars -> literals of the kernel's scalar type."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..cli import Unsupported
from . import jit
from .capture import Pass
from .fake_torch import FakeTensor, Storage, contiguous_strides
from .operators import TensorDecl


@dataclass
class KernelBuild:
    """One cubin to compile: a kernel specialised for a signature, with its hints."""
    kernel: Any
    params: list[jit.Param]
    symbol: str
    mangled: str
    hints: dict[str, Any]

    @property
    def file(self) -> str:
        return f"{self.symbol}.cubin"


@dataclass
class PlanLaunch:
    build: KernelBuild
    grid: tuple[int, int, int]
    cluster: tuple[int, int, int]
    params: list[dict]

    def to_json(self) -> dict:
        return {"cubin": self.build.file, "entry": self.build.symbol, "grid": list(self.grid),
                "block": [1, 1, 1], "shared_bytes": 0, "cluster": list(self.cluster), "params": self.params}


@dataclass
class Plan:
    launches: list[PlanLaunch]
    scratch: list[dict]
    kernels: list[dict] = field(default_factory=list)   # per launch: kernel, hints, constants

    def key(self) -> str:
        import json
        return json.dumps({"l": [l.to_json() for l in self.launches], "s": self.scratch}, sort_keys=True)


class Binder:
    def __init__(self, decls: list[TensorDecl], named: dict[str, FakeTensor], outputs: dict[str, FakeTensor]):
        self.decls = {d.name: d for d in decls}
        self.by_storage: dict[int, tuple[str, int]] = {}      # id(storage) -> (tensor name, view offset)
        for name, t in named.items():
            self.by_storage[id(t.storage)] = (name, t.storage_offset())
        for name, t in outputs.items():
            self._bind_output(name, t)
        self.scratch: dict[int, dict] = {}                    # id(storage) -> scratch entry
        self.scratch_names: set[str] = set()

    def _bind_output(self, name: str, t: Any) -> None:
        d = self.decls.get(name)
        if d is None:
            raise Unsupported(f"tilegym returns '{name}', which the reference does not declare")
        if not isinstance(t, FakeTensor):
            raise Unsupported(f"tilegym returns {type(t).__name__} for output '{name}'")
        if id(t.storage) in self.by_storage:
            if self.by_storage[id(t.storage)][0] != name:
                raise Unsupported(f"tilegym returns output '{name}' as a view of "
                                  f"'{self.by_storage[id(t.storage)][0]}'")
            return
        if t.dtype.name != d.dtype:
            raise Unsupported(f"tilegym returns output '{name}' as {t.dtype.name}, the reference declares {d.dtype}")
        if (tuple(t.shape) != d.shape or tuple(t.stride()) != d.view_strides or t.storage_offset() != 0
                or t.storage.elements != d.elements or d.strides is not None):
            raise Unsupported(f"tilegym returns output '{name}' as a {list(t.shape)} view with strides "
                              f"{list(t.stride())}, not the reference's dense {list(d.shape)}")
        self.by_storage[id(t.storage)] = (name, 0)

    def base_offset(self, t: FakeTensor) -> int:
        """Elements from the 16-byte-aligned allocation start to the view's first element."""
        bound = self.by_storage.get(id(t.storage))
        if bound is not None:
            return self.decls[bound[0]].offset + t.storage_offset() - bound[1]
        return t.storage_offset()

    def _scratch_for(self, st: Storage, param_name: str) -> dict:
        entry = self.scratch.get(id(st))
        if entry is None:
            base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in param_name) or "scratch"
            name, n = base, 2
            while name in self.scratch_names or name in self.decls:
                name, n = f"{base}_{n}", n + 1
            self.scratch_names.add(name)
            entry = {"name": name, "bytes": st.nbytes}
            if st.zeroed:
                entry["init"] = "zero"
            self.scratch[id(st)] = entry
        return entry

    def array_params(self, p: jit.Param) -> list[dict]:
        t: FakeTensor = p.value
        it = "i64" if p.array.index_bits == 64 else "i32"
        bound = self.by_storage.get(id(t.storage))
        if bound is None:
            if t.storage.nbytes == 0:
                head = {"kind": "null"}
            else:
                if t.storage_offset() != 0:
                    raise Unsupported(f"'{p.name}' is a view starting inside a wrapper allocation "
                                      f"(a manifest scratch pointer has no offset)")
                head = {"kind": "scratch", "name": self._scratch_for(t.storage, p.name)["name"]}
            return [head] + [lit(it, x) for x in t.shape] + [lit(it, x) for x in t.stride()]
        name, base = bound
        d = self.decls[name]
        off = t.storage_offset() - base
        head = {"kind": "ptr", "tensor": name}
        if off:
            if off < 0:
                raise Unsupported(f"'{p.name}' starts before tensor '{name}'")
            head["offset"] = off
        axes = match_axes(t, d)
        ext = [({"kind": "extent", "tensor": name, "dim": a, "type": it} if a is not None else lit(it, x))
               for a, x in zip(axes, t.shape)]
        std = [({"kind": "stride", "tensor": name, "dim": a, "type": it} if a is not None else lit(it, x))
               for a, x in zip(axes, t.stride())]
        return [head] + ext + std

    def used_names(self) -> set[str]:
        return {n for n, _ in self.by_storage.values()}


def lit(t: str, v) -> dict:
    return {"kind": "literal", "type": t, "value": v}


def match_axes(t: FakeTensor, d: TensorDecl) -> list[int | None]:
    """For each axis of view t, the axis of tensor d with the same extent and stride, if any
    (in order, each tensor axis used once)."""
    shape, strides = d.shape, d.view_strides
    used: set[int] = set()
    out: list[int | None] = []
    for x, s in zip(t.shape, t.stride()):
        hit = next((j for j in range(len(shape)) if j not in used and shape[j] == x and strides[j] == s), None)
        if hit is not None:
            used.add(hit)
        out.append(hit)
    return out


def build_plan(p: Pass, decls: list[TensorDecl], named: dict[str, FakeTensor], outputs: dict[str, Any],
               arch: str) -> Plan:
    if not p.launches:
        raise Unsupported("tilegym's wrapper launched no kernel")
    binder = Binder(decls, named, outputs)
    launches, kernels = [], []
    for rec in p.launches:
        params = jit.kernel_params(rec.kernel, rec.args, binder.base_offset)
        hints = jit.resolved_hints(rec.kernel, arch)
        mangled = jit.jit_name(rec.kernel, params)
        build = KernelBuild(rec.kernel, params, jit.entry_symbol(rec.kernel, mangled, hints), mangled, hints)
        mparams: list[dict] = []
        for q in params:
            if q.kind == "array":
                mparams += binder.array_params(q)
            elif q.kind == "scalar":
                mparams.append(lit(q.scalar_type, q.value))
        ctas = hints.get("num_ctas") or 1
        grid = jit.check_grid(rec.grid)
        launches.append(PlanLaunch(build, grid, (ctas, 1, 1), mparams))
        func = rec.kernel._annotated_function.pyfunc
        kernels.append({"kernel": f"{func.__module__}.{func.__name__}", "jit_name": mangled,
                        "hints": {k: v for k, v in hints.items() if v is not None},
                        "constants": {q.name: q.value for q in params if q.kind == "constant"}})
    outs = {d.name for d in decls if d.role in ("out", "inout")}
    missing = sorted(outs - binder.used_names())
    if missing:
        raise Unsupported(f"tilegym's plan does not produce output(s) {missing} of the reference")
    written = _launched_names(launches)
    unwritten = sorted(outs - written)
    if unwritten:
        raise Unsupported(f"no launch of tilegym's plan receives output(s) {unwritten}")
    return Plan(launches, list(binder.scratch.values()), kernels)


def _launched_names(launches: list[PlanLaunch]) -> set[str]:
    return {p["tensor"] for l in launches for p in l.params if p["kind"] == "ptr"}


def dense_like(d: TensorDecl) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return d.shape, d.strides or contiguous_strides(d.shape)
