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
- a list of arrays (group_gemm's As, Bs, Cs) -> an `array_table` of the operator tensors it
  lists, each whole as the reference declares it, then the list's length as an i32 literal (the
  two kernel parameters cuTile lowers a list to);
- scalars -> literals of the kernel's scalar type;
- the wrapper's copies and fills through torch (fake_torch.CopyStep / FillStep) -> copy and fill
  steps in launches[], in the order the wrapper made them, each view given as tensor or scratch,
  offset, shape, strides and element type; a contiguous() copy whose only use is a following
  .to(dtype) is one copy with the conversion; the wrapper's sums over one dimension
  (fake_torch.SumStep: torch.sum(x, dim), torch.add of two views of one buffer) -> sum steps
  with their axis; a buffer created from one host value
  (torch.tensor) is scratch with "init": {"fill": v, "type": t}, and an output the wrapper
  allocated initialised (torch.zeros, torch.tensor) gets a fill step first."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..cli import Unsupported
from ..manifest import array_table
from . import jit
from .capture import LaunchRecord, Pass
from .fake_torch import CopyStep, FakeTensor, FillStep, Storage, SumStep, contiguous_strides, step_type
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
    launches: list[PlanLaunch]                           # the kernel launches (what is compiled)
    scratch: list[dict]
    kernels: list[dict] = field(default_factory=list)   # per launch: kernel, hints, constants
    order: list[Any] = field(default_factory=list)      # PlanLaunch and step dicts, in plan order

    def launches_json(self) -> list[dict]:
        """The manifest's launches[]: kernel launches, fill and copy steps, in plan order."""
        items = self.order or self.launches
        return [i.to_json() if isinstance(i, PlanLaunch) else i for i in items]

    def key(self) -> str:
        import json
        return json.dumps({"l": self.launches_json(), "s": self.scratch}, sort_keys=True)


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
            elif st.init_value is not None:
                entry["init"] = {"fill": st.init_value, "type": step_type(st.dtype, "torch.tensor")}
            self.scratch[id(st)] = entry
        return entry

    def view(self, t: FakeTensor, name_hint: str) -> dict:
        """A step's view of t: the operator tensor it is part of, or its scratch buffer."""
        bound = self.by_storage.get(id(t.storage))
        if bound is not None:
            name, base = bound
            off = t.storage_offset() - base
            if off < 0:
                raise Unsupported(f"a plan step views '{name}' before its start")
            head = {"tensor": name}
        else:
            head = {"scratch": self._scratch_for(t.storage, name_hint)["name"]}
            off = t.storage_offset()
        return {**head, "offset": off, "shape": list(t.shape), "strides": list(t.stride()),
                "type": step_type(t.dtype, "a plan step")}

    def name_of(self, t: FakeTensor) -> str:
        bound = self.by_storage.get(id(t.storage))
        if bound is not None:
            return bound[0]
        entry = self.scratch.get(id(t.storage))
        return entry["name"] if entry else f"alloc{t.storage.index}"

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

    def list_params(self, p: jit.Param) -> list[dict]:
        """A list of arrays: an `array_table` of the operator tensors it lists (the harness lays
        down each one's address, extents and strides), then the list's length as an i32."""
        names = []
        for i, t in enumerate(p.value):
            bound = self.by_storage.get(id(t.storage))
            if bound is None:
                raise Unsupported(f"list '{p.name}' item {i} is a wrapper allocation, not an operator tensor "
                                  f"(an array_table lists operator tensors only)")
            name, base = bound
            d = self.decls[name]
            if t.storage_offset() != base or tuple(t.shape) != tuple(d.shape) or tuple(t.stride()) != tuple(d.view_strides):
                raise Unsupported(f"list '{p.name}' item {i} is a {list(t.shape)} view with strides "
                                  f"{list(t.stride())} of '{name}', not the whole tensor (an array_table "
                                  f"describes each tensor as the reference declares it)")
            names.append(name)
        it = "i64" if p.array.index_bits == 64 else "i32"
        return [array_table(names, p.array.ndim, it), lit("i32", len(names))]

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


def _same_view(a: FakeTensor, b: FakeTensor) -> bool:
    return (a.storage is b.storage and a.storage_offset() == b.storage_offset() and tuple(a.shape) == tuple(b.shape)
            and tuple(a.stride()) == tuple(b.stride()))


def _uses(step: Any, st: Storage) -> bool:
    if isinstance(step, (CopyStep, SumStep)):
        return step.src.storage is st or step.dst.storage is st
    if isinstance(step, FillStep):
        return step.target.storage is st
    return any(isinstance(a, FakeTensor) and a.storage is st for a in step.args)


def merge_conversions(steps: list[Any], outputs: dict[str, Any]) -> list[Any]:
    """`x.contiguous().to(dtype)`: torch copies, then converts the copy; where the copy's buffer
    is used by nothing but the conversion (and is no output), one copy does both, placed where
    the first copy was (the conversion's buffer did not exist before)."""
    returned = {id(t.storage) for t in outputs.values() if isinstance(t, FakeTensor)}
    steps = list(steps)
    i = 0
    while i < len(steps):
        a = steps[i]
        if isinstance(a, CopyStep) and id(a.dst.storage) not in returned:
            users = [j for j, s in enumerate(steps) if j != i and _uses(s, a.dst.storage)]
            if len(users) == 1 and isinstance(steps[users[0]], CopyStep) and users[0] > i:
                b = steps[users[0]]
                if _same_view(b.src, a.dst) and b.dst.storage is not a.dst.storage:
                    steps[i] = CopyStep(a.src, b.dst)
                    del steps[users[0]]
                    continue
        i += 1
    return steps


def build_plan(p: Pass, decls: list[TensorDecl], named: dict[str, FakeTensor], outputs: dict[str, Any],
               arch: str) -> Plan:
    if not p.launches:
        raise Unsupported("tilegym's wrapper launched no kernel")
    binder = Binder(decls, named, outputs)
    launches, kernels = [], []
    by_record: dict[int, PlanLaunch] = {}
    for rec in p.launches:
        params = jit.kernel_params(rec.kernel, rec.args, binder.base_offset)
        hints = jit.resolved_hints(rec.kernel, arch)
        mangled = jit.jit_name(rec.kernel, params)
        build = KernelBuild(rec.kernel, params, jit.entry_symbol(rec.kernel, mangled, hints), mangled, hints)
        mparams: list[dict] = []
        for q in params:
            if q.kind == "array":
                mparams += binder.array_params(q)
            elif q.kind == "list":
                mparams += binder.list_params(q)
            elif q.kind == "scalar":
                mparams.append(lit(q.scalar_type, q.value))
        ctas = hints.get("num_ctas") or 1
        grid = jit.check_grid(rec.grid)
        launch = PlanLaunch(build, grid, (ctas, 1, 1), mparams)
        launches.append(launch)
        by_record[id(rec)] = launch
        func = rec.kernel._annotated_function.pyfunc
        kernels.append({"kernel": f"{func.__module__}.{func.__name__}", "jit_name": mangled,
                        "hints": {k: v for k, v in hints.items() if v is not None},
                        "constants": {q.name: q.value for q in params if q.kind == "constant"}})
    # Scratch buffers are named by the kernels first (the parameter that receives them); steps
    # name the buffers no kernel takes.
    order: list[Any] = _initialised_outputs(binder, outputs)
    for step in merge_conversions(p.allocator.steps, outputs):
        if not isinstance(step, LaunchRecord) and (step.target if isinstance(step, FillStep) else step.dst).numel() == 0:
            continue     # torch launches nothing for an empty tensor
        if isinstance(step, LaunchRecord):
            order.append(by_record[id(step)])
        elif isinstance(step, CopyStep):
            src = binder.view(step.src, "copy_src")
            dst = binder.view(step.dst, f"{binder.name_of(step.src)}_copy")
            order.append({"step": "copy", "src": src, "dst": dst})
        elif isinstance(step, FillStep):
            target = binder.view(step.target, "filled")
            order.append({"step": "fill", "target": target, "value": step.value})
        elif isinstance(step, SumStep):
            src = binder.view(step.src, "sum_src")
            dst = binder.view(step.dst, f"{binder.name_of(step.src)}_sum")
            order.append({"step": "sum", "src": src, "dst": dst, "axis": step.axis})
    outs = {d.name for d in decls if d.role in ("out", "inout")}
    missing = sorted(outs - binder.used_names())
    if missing:
        raise Unsupported(f"tilegym's plan does not produce output(s) {missing} of the reference")
    written = _launched_names(launches) | _step_written_names(order)
    unwritten = sorted(outs - written)
    if unwritten:
        raise Unsupported(f"no launch of tilegym's plan receives output(s) {unwritten}")
    return Plan(launches, list(binder.scratch.values()), kernels, order)


def _initialised_outputs(binder: Binder, outputs: dict[str, Any]) -> list[dict]:
    """Outputs the wrapper allocated with torch.zeros or torch.tensor of a value: the harness
    poisons outputs before every execution, so the initial value is a fill step at the start."""
    steps = []
    for name, t in outputs.items():
        if not isinstance(t, FakeTensor) or binder.by_storage.get(id(t.storage), (None,))[0] != name:
            continue
        st = t.storage
        value = 0 if st.zeroed else st.init_value
        if value is None or st.name is not None:
            continue
        whole = FakeTensor(st, 0, (st.elements,), (1,))
        steps.append({"step": "fill", "target": binder.view(whole, name), "value": value})
    return steps


def _step_written_names(order: list[Any]) -> set[str]:
    out = set()
    for s in order:
        if isinstance(s, dict):
            view = s.get("dst") or s.get("target")
            if "tensor" in view:
                out.add(view["tensor"])
    return out


def _launched_names(launches: list[PlanLaunch]) -> set[str]:
    return ({p["tensor"] for l in launches for p in l.params if p["kind"] == "ptr"}
            | {n for l in launches for p in l.params if p["kind"] == "array_table" for n in p["tensors"]})


def dense_like(d: TensorDecl) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return d.shape, d.strides or contiguous_strides(d.shape)
