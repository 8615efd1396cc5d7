# SPDX-License-Identifier: Apache-2.0
"""The 24 operators: portbench's tensors for a configuration (a mirror of reference/src/ops/
<op>.cpp `tensors()`: names, dtypes, shapes, strides, roles), the tilegym wrapper each one runs
and how its results map to the reference's output names.

`call(cfg, t, mod, autotune)` runs the wrapper on the fake tensors `t` (name -> FakeTensor);
`autotune` is only consulted by wrappers that take it as an argument (gemma_attention).
`outputs(cfg, result)` names the tensors the wrapper allocated and returned. `check(cfg)` raises
Unsupported where tilegym computes a different function for this configuration."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from ..cli import Unsupported
from ..opparams import dropout as dropout_params, flag, integer_or, layer_norm, real_or, rope_dim, text_or
from ..suite import Config, SuiteError
from .fake_torch import contiguous_strides, dtype_named

# reference dtype names (reference/src/dtype.cpp) -> torch names
DTYPE_NAMES = {"fp64": "float64", "f64": "float64", "double": "float64", "fp32": "float32", "f32": "float32",
               "float": "float32", "tf32": "float32", "fp16": "float16", "f16": "float16", "half": "float16",
               "bf16": "bfloat16", "fp8e4m3": "float8_e4m3fn", "float8_e4m3": "float8_e4m3fn",
               "fp8_e4m3fn": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn", "e4m3": "float8_e4m3fn",
               "fp8e4m3fn": "float8_e4m3fn", "f8e4m3": "float8_e4m3fn", "fp8e5m2": "float8_e5m2",
               "fp8_e5m2": "float8_e5m2", "e5m2": "float8_e5m2", "f8e5m2": "float8_e5m2", "i64": "int64",
               "long": "int64", "i32": "int32", "int": "int32", "i16": "int16", "short": "int16", "i8": "int8",
               "u8": "uint8", "uint8_t": "uint8", "boolean": "bool"}
FLOATS = {"float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"}


@dataclass(frozen=True)
class TensorDecl:
    """One tensor as reference::tensor_spec declares it."""
    name: str
    dtype: str                       # torch name
    shape: tuple[int, ...]
    role: str                        # "in", "out", "inout"
    strides: tuple[int, ...] | None = None     # None: dense row-major
    offset: int = 0                  # elements from the allocation start to the view
    storage_elements: int | None = None

    @property
    def view_strides(self) -> tuple[int, ...]:
        return self.strides if self.strides is not None else contiguous_strides(self.shape)

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


def dense(name: str, dtype: str, shape, role: str = "in") -> TensorDecl:
    return TensorDecl(name, dtype, tuple(shape), role)


def dtype_of(cfg: Config, key: str = "dtype", floating: bool = True, default: str | None = None) -> str:
    v = cfg.params.get(key)
    if v is None and default is not None:
        return default
    if not isinstance(v, str):
        raise SuiteError(f"{cfg.id()}: parameter '{key}' must be a dtype name, got {v!r}")
    name = v[6:] if v.startswith("torch.") else v
    name = DTYPE_NAMES.get(name, name)
    try:
        dtype_named(name)
    except Unsupported:
        raise SuiteError(f"{cfg.id()}: parameter '{key}': unknown dtype {v!r}") from None
    if floating and name not in FLOATS:
        raise SuiteError(f"{cfg.id()}: '{key}' must be a floating type")
    return name


def dim(cfg: Config, key: str) -> int:
    return cfg.integer(key)


def dim_or(cfg: Config, key: str, fallback: int) -> int:
    v = integer_or(cfg, key, fallback)
    if v <= 0:
        raise SuiteError(f"{cfg.id()}: parameter '{key}' must be positive")
    return v


def same_out_dtype(cfg: Config, what: str) -> str:
    t = dtype_of(cfg)
    out = dtype_of(cfg, "out_dtype", default=t)
    if out != t:
        raise Unsupported(f"out_dtype {out} != dtype {t}: tilegym's {what} writes its output in the input dtype")
    return t


@dataclass
class OpDef:
    name: str
    modules: tuple[str, ...]                 # imported first; modules[0] holds the wrapper
    wrapper: str                             # the registered cutile forward function
    tensors: Callable[[Config], list[TensorDecl]]
    call: Callable[[Config, dict, Any, bool], Any]
    outputs: Callable[[Config, Any], dict] = lambda c, r: {}
    check: Callable[[Config], None] = lambda c: None
    notes: Callable[[Config], list[str]] = lambda c: []
    # argument-driven autotuning (gemma_attention's use_autotune): run the wrapper with it on
    takes_autotune_arg: bool = False
    extra: dict = field(default_factory=dict)


CUTILE = "tilegym.ops.cutile."


# ---- rows -------------------------------------------------------------------------------------

def _rms_norm(c):
    t, m, n = dtype_of(c), dim(c, "m"), dim(c, "n")
    return [dense("x", t, (m, n)), dense("w", t, (n,)), dense("y", t, (m, n), "out")]


def _layer_norm(c):
    persistent, _, _ = layer_norm(c)
    t, m, n = dtype_of(c), dim(c, "m"), dim(c, "n")
    ts = [dense("x", t, (m, n)), dense("w", t, (n,)), dense("b", t, (n,)), dense("y", t, (m, n), "out")]
    if persistent:
        ts += [dense("mean", "float32", (m,), "out"), dense("rstd", "float32", (m,), "out")]
    return ts


def _layer_norm_check(c):
    persistent, _, shift = layer_norm(c)
    if persistent and shift != 0.0:
        raise Unsupported("weight_shift != 0: tilegym's persistent_layer_norm has no weight shift")
    if persistent and dtype_of(c) != "bfloat16":
        raise Unsupported(f"tilegym's persistent_layer_norm rounds y to bfloat16 before storing it "
                          f"(dtype {dtype_of(c)})")


def _layer_norm_call(c, t, mod, autotune):
    persistent, eps, shift = layer_norm(c)
    if persistent:
        return mod.persistent_layer_norm(t["x"], None, t["w"], t["b"], eps)
    return mod.layer_norm_legacy(t["x"], None, t["w"], t["b"], eps, weight_shift=shift)


def _layer_norm_outputs(c, r):
    if layer_norm(c)[0]:
        return {"y": r[0], "mean": r[1], "rstd": r[2]}
    return {"y": r}


SOFTMAX_VARIANTS = {"baseline": {}, "use_tma": {"use_tma": True}, "use_chunked": {"use_chunked": True},
                    "use_multi_wave": {"use_multi_wave": True}}


def _softmax_variant(c):
    v = text_or(c, "variant", "baseline")
    if v not in SOFTMAX_VARIANTS:
        raise SuiteError(f"{c.id()}: variant must be one of {sorted(SOFTMAX_VARIANTS)}, not '{v}'")
    return v


def _softmax(c):
    _softmax_variant(c)
    t, m, n = dtype_of(c), dim(c, "m"), dim(c, "n")
    return [dense("x", t, (m, n)), dense("y", t, (m, n), "out")]


# ---- elementwise ------------------------------------------------------------------------------

def _bshd_view(name, t, b, h, s, d):
    return TensorDecl(name, t, (b, h, s, d), "inout", strides=(s * h * d, d, h * d, 1))


def _rope(c):
    t = dtype_of(c)
    b, s, hq, hkv, d = dim(c, "bsz"), dim(c, "seq_len"), dim(c, "num_q_heads"), dim(c, "num_kv_heads"), dim(c, "head_dim")
    rd = rope_dim(c)
    return [_bshd_view("q", t, b, hq, s, d), _bshd_view("k", t, b, hkv, s, d),
            dense("cos", t, (b, s, rd)), dense("sin", t, (b, s, rd))]


def _rope_check(c):
    half = rope_dim(c) // 2
    if half & (half - 1):
        raise Unsupported("rope_dim/2 is not a power of two: tilegym's kernel takes the second half at tile "
                          "index 1 of a next_power_of_2 tile, not at rope_dim/2")


def _silu_and_mul(c):
    b, s, h, t = dim(c, "batch"), dim(c, "seq_len"), dim(c, "hidden_size"), dtype_of(c)
    if integer_or(c, "input_last_dim", 2 * h) != 2 * h:
        raise SuiteError(f"{c.id()}: input_last_dim must be 2 * hidden_size")
    return [dense("x", t, (b, s, 2 * h)), dense("y", t, (b, s, h), "out")]


def _swiglu(c):
    b, s, h, t = dim(c, "batch"), dim(c, "seq_len"), dim(c, "hidden_size"), dtype_of(c)
    return [dense("a", t, (b, s, h)), dense("b", t, (b, s, h)), dense("c", t, (b, s, h), "out")]


def _dropout(c):
    p, inplace, training, seed = dropout_params(c)
    t, m = dtype_of(c), dim(c, "m")
    if inplace:
        return [dense("x", t, (m,), "inout")]
    return [dense("x", t, (m,)), dense("y", t, (m,), "out")]


def _dropout_check(c):
    if not dropout_params(c)[2]:
        raise Unsupported("training=false: tilegym's dropout returns its input tensor itself and launches no "
                          "kernel")


def _dropout_call(c, t, mod, autotune):
    p, inplace, training, seed = dropout_params(c)
    return mod.dropout(t["x"], seed, p=p, training=training, inplace=inplace)


# ---- GEMM -------------------------------------------------------------------------------------

def _operand(name, t, rows, cols, offset):
    return TensorDecl(name, t, (rows, cols), "in", offset=offset, storage_elements=offset + rows * cols)


def _matmul(c):
    m, n, k = dim(c, "m"), dim(c, "n"), dim(c, "k")
    oa, ob = integer_or(c, "offset_a", 0), integer_or(c, "offset_b", 0)
    if oa < 0 or ob < 0:
        raise SuiteError(f"{c.id()}: offsets must be >= 0")
    ta, tb = flag(c, "transpose_a", False), flag(c, "transpose_b", False)
    t = dtype_of(c)
    out = dtype_of(c, "out_dtype", default=t)
    return [_operand("a", t, k if ta else m, m if ta else k, oa), _operand("b", t, n if tb else k, k if tb else n, ob),
            dense("c", out, (m, n), "out")]


def _matmul_call(c, t, mod, autotune):
    return mod.matmul(t["a"], t["b"], trans_a=flag(c, "transpose_a", False), trans_b=flag(c, "transpose_b", False),
                      static_persistent=flag(c, "static_persistent", False), use_tma=flag(c, "use_tma", False))


def _bmm(c):
    q, m, n, k = dim(c, "batch"), dim(c, "m"), dim(c, "n"), dim(c, "k")
    ta, tb = flag(c, "transpose_a", False), flag(c, "transpose_b", False)
    t = dtype_of(c)
    out = dtype_of(c, "out_dtype", default=t)
    return [dense("a", t, (q, k if ta else m, m if ta else k)), dense("b", t, (q, n if tb else k, k if tb else n)),
            dense("c", out, (q, m, n), "out")]


def _bmm_call(c, t, mod, autotune):
    return mod.bmm(t["a"], t["b"], transpose_a=flag(c, "transpose_a", False),
                   transpose_b=flag(c, "transpose_b", False), static_persistent=flag(c, "static_persistent", True))


def _group_gemm(c):
    g, m, n, k = dim(c, "num_groups"), dim(c, "m"), dim(c, "n"), dim(c, "k")
    tb = flag(c, "transpose_b", False)
    t = dtype_of(c)
    out = dtype_of(c, "out_dtype", default=t)
    return ([dense(f"a{i}", t, (m, k)) for i in range(g)]
            + [dense(f"b{i}", t, (n, k) if tb else (k, n)) for i in range(g)]
            + [dense(f"c{i}", out, (m, n), "out") for i in range(g)])


def _group_gemm_call(c, t, mod, autotune):
    g = dim(c, "num_groups")
    return mod.group_gemm([t[f"a{i}"] for i in range(g)], [t[f"b{i}"] for i in range(g)],
                          static_persistent=True, transpose_b=flag(c, "transpose_b", False))


# ---- attention --------------------------------------------------------------------------------

def _splitk_reduce(c):
    b, h, s, d = dim(c, "batch"), dim(c, "num_heads"), dim(c, "num_kv_splits"), dim(c, "head_dim")
    dim_or(c, "S_kv", s)
    t = dtype_of(c)
    lse = dtype_of(c, "lse_dtype", default="float32")
    return [dense("partial_o", t, (b, h, s, d)), dense("lse", lse, (b, h, s)), dense("o", t, (b, h, d), "out")]


def _sm_scale(c, key, d):
    return real_or(c, key, 1.0 / math.sqrt(d))


def _fmha(c):
    b, h, s, d = dim(c, "batch"), dim(c, "heads"), dim(c, "seq_len"), dim(c, "head_dim")
    hkv = dim_or(c, "kv_heads", h)
    if h % hkv:
        raise SuiteError(f"{c.id()}: heads must be a multiple of kv_heads")
    t = dtype_of(c)
    out = dtype_of(c, "out_dtype", default=t)
    return [dense("q", t, (b, h, s, d)), dense("k", t, (b, hkv, s, d)), dense("v", t, (b, hkv, s, d)),
            dense("o", out, (b, h, s, d), "out")]


def _flash_decode(c):
    b, hq, hkv = dim(c, "batch"), dim(c, "num_q_heads"), dim(c, "num_kv_heads")
    s, d, t = dim(c, "seq_len"), dim(c, "head_dim"), dtype_of(c)
    if hq % hkv or integer_or(c, "group_size", hq // hkv) != hq // hkv:
        raise SuiteError(f"{c.id()}: num_q_heads must be group_size * num_kv_heads")
    return [dense("q", t, (b, hq, 1, d)), dense("k", t, (b, hkv, s, d)), dense("v", t, (b, hkv, s, d)),
            dense("o", t, (b, hq, 1, d), "out")]


def _sink_params(c, decode):
    b, skv, hkv, g, d = dim(c, "batch"), dim(c, "num_keys"), dim(c, "num_kv_heads"), dim(c, "num_kv_groups"), dim(c, "head_dim")
    sq = dim_or(c, "num_queries", 1) if decode else dim(c, "num_queries")
    if decode and sq != 1:
        raise SuiteError(f"{c.id()}: num_queries must be 1")
    start_q = integer_or(c, "start_q", skv - 1 if decode else 0)
    if start_q < 0:
        raise SuiteError(f"{c.id()}: start_q must be >= 0")
    window = integer_or(c, "sliding_window", 0)
    return b, sq, skv, hkv, g, d, start_q, window, _sm_scale(c, "sm_scale", d)


def _sink_tensors(decode):
    def tensors(c):
        b, sq, skv, hkv, g, d, *_ = _sink_params(c, decode)
        t = dtype_of(c)
        return [dense("q", t, (b, sq, hkv, g, d)), dense("k", t, (b, skv, hkv, d)), dense("v", t, (b, skv, hkv, d)),
                dense("sinks", t, (hkv * g,)), dense("o", t, (b, sq, hkv * g * d), "out")]
    return tensors


def _attention_sink_call(c, t, mod, autotune):
    *_, start_q, window, scale = _sink_params(c, False)
    return mod.attention_sink(t["q"], t["k"], t["v"], t["sinks"], sm_scale=scale,
                              sliding_window=window if window > 0 else None, start_q=start_q)


def _attention_sink_decode_call(c, t, mod, autotune):
    from . import fake_torch
    *_, start_q, window, scale = _sink_params(c, True)
    # The caller's query position tensor, torch.tensor([start_q], dtype=torch.int32): a scratch
    # buffer the plan initialises with the value.
    pos = fake_torch.tensor([start_q], dtype=fake_torch.DTYPES["int32"])
    return mod.attention_sink_decode(t["q"], t["k"], t["v"], t["sinks"], sm_scale=scale,
                                     sliding_window=window if window > 0 else None, start_q=pos)


def _gemma_params(c, decode):
    b, h, d = dim(c, "batch"), dim(c, "heads"), dim(c, "head_dim")
    hkv = dim_or(c, "kv_heads", h)
    s = dim(c, "seq_len_kv" if decode else "seq_len")
    if h % hkv:
        raise SuiteError(f"{c.id()}: heads must be a multiple of kv_heads")
    window = integer_or(c, "window", 0)
    cap = real_or(c, "soft_cap", 0.0)
    return b, h, hkv, s, d, window, _sm_scale(c, "scaling", d), cap


def _gemma(c):
    b, h, hkv, s, d, *_ = _gemma_params(c, False)
    t = dtype_of(c)
    return [dense("q", t, (b, h, s, d)), dense("k", t, (b, hkv, s, d)), dense("v", t, (b, hkv, s, d)),
            dense("o", t, (b, h, s, d), "out")]


def _gemma_call(c, t, mod, autotune):
    *_, window, scale, cap = _gemma_params(c, False)
    return mod.gemma_attention_cutile(t["q"], t["k"], t["v"], scaling=scale, window_size=window,
                                      soft_cap=cap if cap != 0.0 else None, is_causal=flag(c, "is_causal", True),
                                      use_autotune=autotune)


def _gemma_decode(c):
    b, h, hkv, s, d, *_ = _gemma_params(c, True)
    t = dtype_of(c)
    return [dense("q", t, (b, h, 1, d)), dense("k", t, (b, hkv, s, d)), dense("v", t, (b, hkv, s, d)),
            dense("o", t, (b, h, 1, d), "out")]


def _gemma_decode_call(c, t, mod, autotune):
    *_, window, scale, cap = _gemma_params(c, True)
    return mod.gemma_fmha_decode(t["q"], t["k"], t["v"], sm_scale=scale, window_size=window,
                                 soft_cap=cap if cap != 0.0 else None)


def _mla_params(c):
    b, h, s = dim(c, "batch"), dim(c, "heads"), dim(c, "seq_len")
    hkv, hpe = dim_or(c, "kv_heads", h), dim_or(c, "kpe_heads", 1)
    d, dpe = dim_or(c, "d_model", 128), dim_or(c, "d_pe", 64)
    if h % hkv or h % hpe:
        raise SuiteError(f"{c.id()}: heads must be a multiple of kv_heads and kpe_heads")
    return b, h, hkv, hpe, s, d, dpe, real_or(c, "sm_scale", 1.0 / math.sqrt(d + dpe))


def _mla(c):
    b, h, hkv, hpe, s, d, dpe, _ = _mla_params(c)
    t = dtype_of(c)
    return [dense("q", t, (b, h, s, d)), dense("k", t, (b, hkv, s, d)), dense("v", t, (b, hkv, s, d)),
            dense("qpe", t, (b, h, s, dpe)), dense("kpe", t, (b, hpe, s, dpe)), dense("o", t, (b, h, s, d), "out")]


def _mla_check(c):
    if _mla_params(c)[3] != 1:
        raise Unsupported("kpe_heads > 1: tilegym's MLA kernel reads kpe head 0 for every query head")


def _mla_call(c, t, mod, autotune):
    return mod.tile_mla(t["q"], t["k"], t["v"], t["qpe"], t["kpe"], is_causal=flag(c, "is_causal", True),
                        scaling=_mla_params(c)[7])


def _mla_dec_params(c, split):
    b, h = dim(c, "batch"), dim(c, "num_heads")
    s = dim(c, "seq_len" if split else "S_kv")
    d = dim_or(c, "head_dim" if split else "BLOCK_D", 512)
    dpe = dim_or(c, "kpe_dim" if split else "BLOCK_KPE", 64)
    return b, h, s, d, dpe, real_or(c, "sm_scale", 1.0 / math.sqrt(d + dpe))


def _mla_dec_tensors(split):
    def tensors(c):
        b, h, s, d, dpe, _ = _mla_dec_params(c, split)
        t = dtype_of(c)
        ts = [dense("q", t, (b, h, d)), dense("qpe", t, (b, h, dpe)), dense("kv", t, (b, s, d)),
              dense("kpe", t, (b, s, dpe)), dense("o", t, (b, h, d), "out")]
        if not split:
            ts.append(dense("lse", "float32", (b, h), "out"))
        return ts
    return tensors


def _mla_decoding_call(c, t, mod, autotune):
    return mod.mla_decoding(t["q"], t["qpe"], t["kv"], t["kpe"], _mla_dec_params(c, False)[5],
                            transpose=flag(c, "transpose", True))


def _mla_split_call(c, t, mod, autotune):
    return mod.mla_decoding_split_kv(t["q"], t["qpe"], t["kv"], t["kpe"], _mla_dec_params(c, True)[5])


# ---- MoE --------------------------------------------------------------------------------------

def _moe_params(c):
    m, h, i, e, k = (dim(c, "num_tokens"), dim(c, "hidden_size"), dim(c, "moe_intermediate_size"),
                     dim(c, "n_experts"), dim(c, "top_k"))
    if k > e:
        raise SuiteError(f"{c.id()}: top_k must be <= n_experts")
    return m, h, i, e, k


def _moe(c):
    m, h, i, e, k = _moe_params(c)
    t = dtype_of(c)
    return [dense("hidden_states", t, (m, h)), dense("w1", t, (e, 2 * i, h)), dense("w2", t, (e, h, i)),
            dense("topk_weights", "float32", (m, k)), dense("topk_ids", "int32", (m, k)),
            dense("out", t, (m, h), "out")]


def _moe_call(c, t, mod, autotune):
    # fused_experts_impl ends with torch.add of the two top-k rows (top_k 2) or torch.sum over
    # dim 1 (top_k > 2) into out: the plan's sum step after tilegym's kernels.
    return mod.fused_moe(t["hidden_states"], t["w1"], t["w2"], t["topk_weights"], t["topk_ids"])


def _moe_align_params(c):
    m, k, e = dim(c, "num_tokens"), dim(c, "top_k"), dim(c, "n_experts")
    block = dim_or(c, "block_size", 128)
    if k > e:
        raise SuiteError(f"{c.id()}: top_k must be <= n_experts")
    padded = m * k + e * (block - 1)
    return m, k, e, block, padded, -(-padded // block)


def _moe_align(c):
    m, k, e, block, padded, blocks = _moe_align_params(c)
    return [dense("topk_ids", "int32", (m, k)), dense("sorted_token_ids", "int32", (padded,), "out"),
            dense("expert_ids", "int32", (blocks,), "out"), dense("num_tokens_post_padded", "int32", (1,), "out")]


def _moe_align_call(c, t, mod, autotune):
    _, _, e, block, _, _ = _moe_align_params(c)
    return mod.moe_align_block_size(t["topk_ids"], block, e)


def _moe_align_outputs(c, r):
    return {"sorted_token_ids": r[0], "expert_ids": r[1], "num_tokens_post_padded": r[2]}


# ---- gated delta rule -------------------------------------------------------------------------

def _gdr_params(c, chunked):
    b, t_, h, k, v = dim(c, "B"), dim(c, "T"), dim(c, "H"), dim(c, "K"), dim(c, "V")
    chunk = dim_or(c, "chunk_size", 64) if chunked else 0
    return (b, t_, h, k, v, chunk, flag(c, "use_l2", False), flag(c, "use_init", False),
            flag(c, "out_final", True))


def _gdr_tensors(chunked):
    def tensors(c):
        b, t_, h, k, v, _, _, init, final = _gdr_params(c, chunked)
        t = dtype_of(c)
        g = dtype_of(c, "g_dtype", default=t)
        ts = [dense("q", t, (b, t_, h, k)), dense("k", t, (b, t_, h, k)), dense("v", t, (b, t_, h, v)),
              dense("g", g, (b, t_, h)), dense("beta", t, (b, t_, h))]
        if init:
            ts.append(dense("initial_state", "float32", (b, h, k, v)))
        ts.append(dense("o", t, (b, t_, h, v), "out"))
        if final:
            ts.append(dense("final_state", "float32", (b, h, k, v), "out"))
        return ts
    return tensors


def _rgdr_call(c, t, mod, autotune):
    *_, l2, init, final = _gdr_params(c, False)
    return mod.recurrent_gated_delta_rule(t["q"], t["k"], t["v"], t["g"], t["beta"],
                                          initial_state=t.get("initial_state") if init else None,
                                          output_final_state=final, use_qk_l2norm_in_kernel=l2)


def _cgdr_call(c, t, mod, autotune):
    _, _, _, _, _, chunk, l2, init, final = _gdr_params(c, True)
    return mod.chunk_gated_delta_rule(t["q"], t["k"], t["v"], t["g"], t["beta"], chunk_size=chunk,
                                      initial_state=t.get("initial_state") if init else None,
                                      output_final_state=final, use_qk_l2norm_in_kernel=l2)


def _gdr_outputs(c, r):
    out = {"o": r[0]}
    if _gdr_params(c, False)[8]:
        out["final_state"] = r[1]
    return out


# ---- the table --------------------------------------------------------------------------------

def _one(name):
    return lambda c, r: {name: r}


OPERATORS: dict[str, OpDef] = {op.name: op for op in [
    OpDef("rms_norm", (CUTILE + "rms_norm",), "rms_norm", _rms_norm,
          lambda c, t, m, a: m.rms_norm(t["x"], None, t["w"], real_or(c, "eps", 1e-5),
                                        mode=text_or(c, "mode", "") or None, offset=real_or(c, "offset", 0.0)),
          _one("y"), notes=lambda c: ["tilegym also writes Rstd[m] (fp32): bound to scratch"]),
    OpDef("layer_norm_legacy", (CUTILE + "layer_norm_legacy",), "layer_norm_legacy | persistent_layer_norm",
          _layer_norm, _layer_norm_call, _layer_norm_outputs, _layer_norm_check,
          notes=lambda c: ([] if layer_norm(c)[0] else ["tilegym also writes Mean[m] and Rstd[m] (fp32): bound to scratch"])),
    OpDef("softmax", (CUTILE + "softmax",), "softmax", _softmax,
          lambda c, t, m, a: m.softmax(t["x"], **SOFTMAX_VARIANTS[_softmax_variant(c)]), _one("y")),
    OpDef("rope", (CUTILE + "rope",), "apply_rope_base", _rope,
          lambda c, t, m, a: m.apply_rope_base(t["q"], t["k"], t["cos"], t["sin"],
                                               partial_rotary_factor=real_or(c, "partial_rotary_factor", 1.0)),
          check=_rope_check,
          notes=lambda c: ["in place on the [B,H,S,D] views of [B,S,H,D] storage; reads the first rope_dim/2 "
                           "columns of cos/sin (the reference's cat(freqs, freqs) layout)"]),
    OpDef("silu_and_mul", (CUTILE + "silu_and_mul",), "silu_and_mul", _silu_and_mul,
          lambda c, t, m, a: m.silu_and_mul(t["x"]), _one("y"),
          notes=lambda c: ["runs on x.view(-1, 2H) with the row count as the grid"]),
    OpDef("swiglu", (CUTILE + "swiglu",), "get_swiglu", _swiglu,
          lambda c, t, m, a: m.get_swiglu()(t["a"], t["b"]), _one("c")),
    OpDef("dropout", (CUTILE + "dropout",), "dropout", _dropout, _dropout_call,
          lambda c, r: {} if dropout_params(c)[1] else {"y": r}, _dropout_check,
          notes=lambda c: ["tilegym's hash (seed premixed, signed int32 shifts) differs from the reference's "
                           "generator: keep decisions match only statistically"]),
    OpDef("matmul", (CUTILE + "matmul",), "matmul", _matmul, _matmul_call, _one("c"),
          lambda c: same_out_dtype(c, "matmul") and None,
          notes=lambda c: ["tilegym's matmul ignores use_tma"]),
    OpDef("bmm", (CUTILE + "bmm",), "bmm", _bmm, _bmm_call, _one("c"), lambda c: same_out_dtype(c, "bmm") and None),
    OpDef("group_gemm", (CUTILE + "group_gemm",), "group_gemm", _group_gemm, _group_gemm_call,
          lambda c, r: {f"c{i}": x for i, x in enumerate(r)}, lambda c: same_out_dtype(c, "group_gemm") and None),
    OpDef("splitk_reduce", (CUTILE + "splitk_reduce",), "splitk_reduce", _splitk_reduce,
          lambda c, t, m, a: m.splitk_reduce(t["partial_o"], t["lse"], t["o"], dim_or(c, "S_kv", dim(c, "num_kv_splits")))),
    OpDef("fmha", (CUTILE + "attention",), "fmha", _fmha,
          lambda c, t, m, a: m.tile_fmha(t["q"], t["k"], t["v"], scaling=_sm_scale(c, "sm_scale", dim(c, "head_dim")),
                                         is_causal=flag(c, "is_causal", False)),
          _one("o"), lambda c: same_out_dtype(c, "fmha") and None),
    OpDef("flash_decode", (CUTILE + "flash_decode",), "fmha_decode", _flash_decode,
          lambda c, t, m, a: m.fmha_decode(t["q"], t["k"], t["v"], _sm_scale(c, "sm_scale", dim(c, "head_dim"))),
          _one("o"), notes=lambda c: ["split-KV partials and base-2 LSE in scratch, then splitk_reduce"]),
    OpDef("attention_sink", (CUTILE + "attention_sink",), "attention_sink", _sink_tensors(False),
          _attention_sink_call, _one("o")),
    OpDef("attention_sink_decode", (CUTILE + "attention_sink_decode",), "attention_sink_decode",
          _sink_tensors(True), _attention_sink_decode_call, _one("o")),
    OpDef("gemma_attention", (CUTILE + "gemma_attention",), "gemma_attention", _gemma, _gemma_call, _one("o"),
          takes_autotune_arg=True),
    OpDef("gemma_attention_decode", (CUTILE + "gemma_attention_decode",), "gemma_attention_decode",
          _gemma_decode, _gemma_decode_call, _one("o")),
    OpDef("mla", (CUTILE + "mla",), "mla", _mla, _mla_call, _one("o"), _mla_check),
    OpDef("mla_decoding", (CUTILE + "mla_decoding",), "mla_decoding", _mla_dec_tensors(False), _mla_decoding_call,
          lambda c, r: {"o": r[0], "lse": r[1]}),
    OpDef("mla_decoding_split_kv", (CUTILE + "mla_decoding_split_kv",), "mla_decoding_split_kv",
          _mla_dec_tensors(True), _mla_split_call, _one("o")),
    OpDef("moe", ("tilegym.ops.moe_interface", CUTILE + "moe", CUTILE + "moe_align_block", CUTILE + "silu_and_mul"),
          "fused_moe (moe_interface) -> invoke_fused_moe_kernel", _moe, _moe_call, _one("out")),
    OpDef("moe_align_block", (CUTILE + "moe_align_block",), "moe_align_block_size", _moe_align, _moe_align_call,
          _moe_align_outputs),
    OpDef("recurrent_gated_delta_rule", (CUTILE + "recurrent_gated_delta_rule",), "recurrent_gated_delta_rule",
          _gdr_tensors(False), _rgdr_call, _gdr_outputs),
    OpDef("chunk_gated_delta_rule", (CUTILE + "chunk_gated_delta_rule",), "chunk_gated_delta_rule",
          _gdr_tensors(True), _cgdr_call, _gdr_outputs),
]}
