# SPDX-License-Identifier: Apache-2.0
"""The tilegym exporter's pieces without compiling: the metadata-only torch (views as torch
computes them, compute refused), the JIT specialisation rules, axis binding and the tuning
record reader."""
from __future__ import annotations

import json

import pytest

from portbench_export.cli import Unsupported
from portbench_export.suite import Config, SuiteError
from portbench_export.tilegym import fake_torch as ft
from portbench_export.tilegym import jit
from portbench_export.tilegym.operators import OPERATORS, TensorDecl
from portbench_export.tilegym.plan import Binder, match_axes
from portbench_export.tilegym.tuning import load_record

F16, F32 = ft.DTYPES["float16"], ft.DTYPES["float32"]


def tensor(shape, strides=None, dtype=F16, offset=0, name="x"):
    st = ft.Storage(dtype, 10**9, name=name)
    return ft.FakeTensor(st, offset, shape, strides or ft.contiguous_strides(shape))


def test_views_follow_torch_stride_rules():
    x = tensor((4, 6))
    assert x.view(2, 2, 6).stride() == (12, 6, 1)
    assert x.view(-1).shape == (24,)
    t = x.transpose(0, 1)                       # (6, 4) with strides (1, 6)
    assert t.stride() == (1, 6) and not t.is_contiguous()
    assert t.view(6, 2, 2).stride() == (1, 12, 6)   # splitting the strided axis is a view
    with pytest.raises(RuntimeError):
        t.view(24)                                # merging it is not
    with pytest.raises(Unsupported, match="reshape of a non-viewable tensor copies it"):
        t.reshape(24)
    assert x.unsqueeze(1).shape == (4, 1, 6) and x.unsqueeze(1).is_contiguous()
    assert x.permute(1, 0).stride() == (1, 6)
    s = x[1:3, 2:]
    assert (s.storage_offset(), s.shape, s.stride()) == (8, (2, 4), (6, 1))
    assert x[:, 0].stride() == (6,) and x[:, 0].storage_offset() == 0
    assert tensor((2, 1, 8), (8, 3, 1)).is_contiguous()      # size-1 axes do not count


def test_compute_through_torch_is_refused_with_the_op_named():
    t = tensor((4, 6)).transpose(0, 1)
    with pytest.raises(Unsupported, match="torch.tensor uploads 2 distinct host values"):
        ft.tensor([0, 1])
    with pytest.raises(Unsupported, match=r"Tensor.add\(\) runs a torch kernel"):
        t.add(1)
    with pytest.raises(Unsupported, match="tensor arithmetic"):
        t + t
    with pytest.raises(Unsupported, match=r"torch.matmul\(\) runs a torch kernel"):
        ft.make_torch(ft.TorchState())["torch"].matmul(t, t)
    # torch.sum over one dimension is a plan's sum step (test_tilegym_moe.py); over all is not
    with pytest.raises(Unsupported, match="torch.sum over every dimension"):
        ft.make_torch(ft.TorchState())["torch"].sum(t)
    with pytest.raises(Unsupported, match="no float8_e4m3fn element type"):
        t.to(ft.DTYPES["float8_e4m3fn"])
    with pytest.raises(Unsupported, match="Tensor.fill_ with a tensor value"):
        t.fill_(t)
    with pytest.raises(Unsupported, match="broadcasts"):
        ft.empty(4, 6, dtype=F16).copy_(tensor((6,)))
    with pytest.raises(Unsupported, match=r"Tensor.item\(\) reads a device value"):
        t.item()


def test_copies_and_fills_through_torch_are_recorded_as_steps_in_order():
    ft.ALLOCATOR[0] = ft.Allocator()
    steps = ft.ALLOCATOR[0].steps
    x = tensor((4, 6))
    t = x.transpose(0, 1)
    c = t.contiguous()                               # torch's copy kernel into a new buffer
    assert c.is_contiguous() and c.shape == (6, 4) and c.storage is not x.storage
    assert len(steps) == 1 and steps[0].src is t and steps[0].dst is c
    assert x.contiguous() is x and len(steps) == 1   # already contiguous: no copy
    h = c.to(F32)                                    # a conversion copy
    assert h.dtype is F32 and steps[-1].src is c and steps[-1].dst is h
    assert t.to(F32).stride() == (1, 6)              # torch.preserve_format keeps a dense view's strides
    f = ft.empty(3, dtype=ft.DTYPES["int32"]).fill_(7)
    assert isinstance(steps[-1], ft.FillStep) and steps[-1].value == 7 and steps[-1].target is f
    o = ft.ones(2, dtype=F32)
    assert isinstance(steps[-1], ft.FillStep) and steps[-1].value == 1 and steps[-1].target is o
    dst = ft.empty(4, 6, dtype=F16)
    dst[1:3] = x[0:2]                                # item assignment of a tensor: a copy into the view
    assert isinstance(steps[-1], ft.CopyStep) and steps[-1].dst.storage_offset() == 6
    dst[0] = 2.0                                     # of a number: a fill of the view
    assert isinstance(steps[-1], ft.FillStep) and steps[-1].target.shape == (6,)
    n = len(steps)
    assert ft.empty(5, dtype=F32).zero_().storage.zeroed and len(steps) == n   # fresh: zero init, no step


def test_host_values_become_initialised_buffers():
    ft.ALLOCATOR[0] = ft.Allocator()
    q = ft.tensor([2047], dtype=ft.DTYPES["int32"])
    assert q.shape == (1,) and q.dtype.name == "int32" and q.storage.init_value == 2047
    assert ft.tensor([0], dtype=ft.DTYPES["int32"]).storage.zeroed
    assert ft.tensor(5).dtype.name == "int64" and ft.tensor(5).shape == ()
    w = q.to(ft.DTYPES["int64"])                     # the converted value, no copy step
    assert w.storage.init_value == 2047 and w.dtype.name == "int64" and not ft.ALLOCATOR[0].steps
    assert len(q) == 1


def test_allocations_are_numbered_and_zero_fill_is_recorded():
    ft.ALLOCATOR[0] = ft.Allocator()
    a = ft.empty(3, 5, dtype=F32)
    z = ft.zeros((7,), dtype=F16)
    b = ft.empty(2, dtype=F32)
    assert [s.index for s in ft.ALLOCATOR[0].storages] == [0, 1, 2]
    assert (a.storage.zeroed, z.storage.zeroed) == (False, True)
    b.zero_()
    assert b.storage.zeroed
    c = ft.empty(2, dtype=F32).fill_(3)              # a value: a fill step, not an init
    assert not c.storage.zeroed and ft.ALLOCATOR[0].steps[-1].value == 3
    p = ft.empty_like(tensor((2, 3, 4)).permute(2, 0, 1))     # dense, permuted: strides kept
    assert p.stride() == (1, 12, 4)


def test_jit_specialisation_of_arrays():
    a = jit.array_spec(tensor((4096, 1000)), 32, 0)
    assert a.base_aligned_16 and a.stride_one == (False, True)
    assert a.stride_div16 == (True, False)      # 1000 fp16 = 2000 bytes: divisible by 16
    assert a.shape_div16 == (True, False) and a.shape_one == (False, False) and a.disjoint
    odd = jit.array_spec(tensor((8, 7)), 32, 3)
    assert not odd.base_aligned_16 and odd.stride_div16 == (False, False)
    one = jit.array_spec(tensor((1, 8, 4), (32, 4, 1)), 32, 0)
    assert one.shape_one == (True, False, False)
    bshd = jit.array_spec(tensor((2, 4, 3, 8), (96, 8, 32, 1)), 32, 0)   # [B,H,S,D] view of [B,S,H,D]
    assert bshd.disjoint and bshd.stride_one == (False, False, False, True)
    bcast = jit.array_spec(tensor((4, 8), (0, 1)), 32, 0)
    assert not bcast.disjoint
    c = jit.array_constraint(a)
    assert c.base_addr_divisible_by == 16 and c.stride_constant == (None, 1)
    assert c.shape_divisible_by == (16, 1) and c.stride_divisible_by == (8, 1)
    assert jit.array_constraint(bcast).may_alias_internally
    six = jit.array_spec(tensor((2, 2, 2, 2, 2, 16)), 32, 0)             # rank > 5: no per-axis facts
    assert not any(six.stride_one) and not any(six.shape_div16)
    with pytest.raises(Unsupported, match="exceeds the int32 index range"):
        jit.array_spec(tensor((2**31, 2)), 32, 0)
    assert jit.array_spec(tensor((2**31, 2)), 64, 0).index_bits == 64


class _Ann:
    """A kernel parameter annotation as cuTile's _annotated_function gives one (leaf, no hints)."""
    KIND, constant, array, list, scalar = "leaf", False, None, None, None


def _kernel(*names):
    import inspect
    from types import SimpleNamespace
    sig = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    af = SimpleNamespace(pysig=sig, parameter_annotations=[_Ann()] * len(names),
                         pyfunc=SimpleNamespace(__name__="k"))
    return SimpleNamespace(_annotated_function=af)


def test_a_list_of_arrays_is_one_list_constraint_of_what_every_item_shares():
    a0, a1 = tensor((256, 64), name="a0"), tensor((256, 72), name="a1")    # 72 fp16 = 144 bytes: /16
    odd = tensor((256, 60), name="a2")                                       # 120 bytes: not /16
    [p] = jit.kernel_params(_kernel("As"), ([a0, a1],), lambda t: 0)
    assert p.kind == "list" and p.array.ndim == 2 and p.array.index_bits == 32
    assert p.array.shape_div16 == (True, False) and p.array.stride_div16 == (True, False)
    [q] = jit.kernel_params(_kernel("As"), ([a0, odd],), lambda t: 0)
    assert q.array.stride_div16 == (False, False) and q.array.shape_div16 == (True, False)
    [r] = jit.kernel_params(_kernel("As"), ([a0, a1],), lambda t: 3 if t is a1 else 0)
    assert r.array.base_aligned_16 is False                                 # one unaligned item
    from cuda.tile.compilation import ListConstraint
    sig = jit.signature([p], "k_test")
    [c] = sig.parameters
    assert isinstance(c, ListConstraint) and c.elements_may_alias and c.alias_groups == ()
    assert c.element == jit.array_constraint(p.array)
    with pytest.raises(Unsupported, match="vary in rank"):
        jit.kernel_params(_kernel("As"), ([a0, tensor((4,))],), lambda t: 0)
    with pytest.raises(Unsupported, match="vary in data type"):
        jit.kernel_params(_kernel("As"), ([a0, tensor((4, 4), dtype=F32)],), lambda t: 0)
    with pytest.raises(Unsupported, match="list parameter 'As' is empty"):
        jit.kernel_params(_kernel("As"), ([],), lambda t: 0)


def test_a_list_binds_as_an_array_table_of_whole_operator_tensors_and_its_length():
    decls = [TensorDecl("a0", "float16", (8, 16), "in"), TensorDecl("a1", "float16", (8, 16), "in")]
    named = {"a0": tensor((8, 16), name="a0"), "a1": tensor((8, 16), name="a1")}
    b = Binder(decls, named, {})
    [p] = jit.kernel_params(_kernel("As"), ([named["a1"], named["a0"]],), b.base_offset)
    assert b.list_params(p) == [{"kind": "array_table", "tensors": ["a1", "a0"], "rank": 2, "index_type": "i32"},
                                {"kind": "literal", "type": "i32", "value": 2}]
    [v] = jit.kernel_params(_kernel("As"), ([named["a0"], named["a1"][2:]],), b.base_offset)
    with pytest.raises(Unsupported, match=r"list 'As' item 1 is a \[6, 16\] view with strides \[16, 1\] of 'a1', "
                                          r"not the whole tensor"):
        b.list_params(v)
    [w] = jit.kernel_params(_kernel("As"), ([named["a0"], tensor((8, 16), name=None)],), b.base_offset)
    with pytest.raises(Unsupported, match="list 'As' item 1 is a wrapper allocation, not an operator tensor"):
        b.list_params(w)


def test_view_axes_bind_to_the_tensor_axes_they_are():
    d = TensorDecl("q", "float16", (2, 4, 1, 8), "in")            # dense [B,H,1,D]
    view = tensor((2, 4, 8), (32, 8, 1))                            # q.view(B, H, D)
    assert match_axes(view, d) == [0, 1, 3]
    grouped = tensor((2, 2, 2, 8), (32, 16, 8, 1))                  # q.view(B, Hkv, G, D)
    assert match_axes(grouped, d) == [0, None, None, 3]


def test_operator_tensors_mirror_the_reference():
    c = Config(0, "rope", {"bsz": 2, "seq_len": 3, "num_q_heads": 4, "num_kv_heads": 2, "head_dim": 8,
                           "partial_rotary_factor": 0.5, "dtype": "float16"})
    q, k, cos, sin = OPERATORS["rope"].tensors(c)
    assert (q.shape, q.strides, q.role) == ((2, 4, 3, 8), (96, 8, 32, 1), "inout")
    assert cos.shape == (2, 3, 4)
    c = Config(0, "matmul", {"m": 8, "n": 16, "k": 32, "dtype": "fp16", "transpose_a": True, "offset_a": 5})
    a, b, out = OPERATORS["matmul"].tensors(c)
    assert (a.shape, a.offset, a.storage_elements, a.dtype) == ((32, 8), 5, 5 + 256, "float16")
    c = Config(0, "layer_norm_legacy", {"m": 4, "n": 8, "dtype": "bfloat16", "variant": "persistent_layer_norm"})
    assert [t.name for t in OPERATORS["layer_norm_legacy"].tensors(c)] == ["x", "w", "b", "y", "mean", "rstd"]
    with pytest.raises(SuiteError, match="must be a floating type"):
        OPERATORS["rms_norm"].tensors(Config(0, "rms_norm", {"m": 4, "n": 4, "dtype": "int32"}))
    c = Config(0, "rope", {"bsz": 1, "seq_len": 1, "num_q_heads": 1, "num_kv_heads": 1, "head_dim": 12,
                           "dtype": "float16"})
    with pytest.raises(Unsupported, match="rope_dim/2 is not a power of two"):
        OPERATORS["rope"].check(c)
    assert len(OPERATORS) == 24


def test_tuning_record_reader(tmp_path):
    p = tmp_path / "r.json"
    base = {"schema": "portbench.tuning-record/1", "frontend": "tilegym", "target": "h200", "choices": []}
    p.write_text(json.dumps({**base, "choices": [{"op": "rope", "params": {"a": 1, "b": 2}, "variant": "occ=1"}]}))
    rec = load_record(p, "tilegym", "h200")
    assert rec.lookup("rope", {"b": 2, "a": 1}).variant == "occ=1"       # key order does not matter
    assert rec.lookup("rope", {"a": 1}) is None
    for bad, msg in [({**base, "schema": "x"}, "'schema' must be"), ({**base, "target": "b200"}, "'target' is 'b200'"),
                     ({**base, "choices": [{"op": "rope", "params": {}}]}, "'variant' must be a variant name"),
                     ({**base, "choices": [{"op": "r", "params": {}, "variant": "a"}] * 2}, "already chosen")]:
        p.write_text(json.dumps(bad))
        with pytest.raises(SuiteError, match=msg):
            load_record(p, "tilegym", "h200")
