# SPDX-License-Identifier: Apache-2.0
"""Triton exporter: `python -m portbench_export.triton --suite S --out bundles/triton`.

Compiles @triton.jit kernels ahead of time with
`triton.compile(ASTSource(fn, signature, constexprs, attrs), target=GPUTarget("cuda", 90, 32),
options={"num_warps", "num_stages", "num_ctas"})`, with no GPU visible.

ABI mapped onto the manifest: the non-constexpr arguments in order, then the two hidden trailing
pointers (global_scratch, profile_scratch): `null` when the metadata gives size 0, else a declared
`scratch` of grid * num_ctas * size bytes. block = [32 * metadata.num_warps, 1, 1], shared_bytes =
metadata.shared. The parameter list is asserted against the `.entry` prototype of the PTX (count
and sizes) and against the cubin's KPARAM_INFO.

Specialisation (toolchains.md 4.5): the exporter writes the signature itself, so no argument is
ever turned into a constexpr because it equals 1 (inner strides are not arguments at all; the
kernels assume contiguous rows). As Triton's JIT would, pointers are declared 16-byte divisible
(tt.divisibility=16: the harness's tensors start at allocation starts) and integer arguments are
declared divisible by 16 only when this configuration's value is; each configuration records
which in its tuning.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

from . import ExportError  # noqa: E402
from .cli import Frontend, Unsupported, load_kernel_module, main  # noqa: E402
from .manifest import Bundle, Launch, extent, literal, null, param_bytes, ptr, scratch, stride  # noqa: E402
from . import opparams  # noqa: E402
from .suite import Config  # noqa: E402
from .tools import python_version  # noqa: E402

FRONTEND = "triton"
CAPABILITY = 90
EPS = 1e-5
I32_MAX = 2**31 - 1
RMS_MAX_BLOCK = 8192
DTYPES = {"float16": ("fp16", "f16", 2), "bfloat16": ("bf16", "bf16", 2), "float32": ("fp32", "f32", 4)}

_PROTO = re.compile(r"\.entry\s+([\w$]+)\s*\((.*?)\)", re.S)
_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.([busf])(8|16|32|64)\b(?:[^\[,]*\[(\d+)\])?")


def ptx_entry_params(ptx: str, entry: str) -> list[int]:
    """Sizes in bytes of the `.entry <entry>(...)` parameters in a PTX text."""
    for m in _PROTO.finditer(ptx):
        if m.group(1) == entry:
            body = m.group(2).strip()
            if not body:
                return []
            sizes = []
            for decl in body.split(","):
                p = _PARAM.search(decl)
                if not p:
                    raise ExportError(f"PTX .entry {entry}: unreadable parameter '{decl.strip()}'")
                bits, count = int(p.group(2)), int(p.group(3) or 1)
                sizes.append(bits // 8 * count)
            return sizes
    raise ExportError(f"PTX has no .entry {entry}")


def _int_type(v: int) -> str:
    return "i32" if -2**31 <= v <= I32_MAX else "i64"


def _compile(bundle: Bundle, file_stem: str, fn, signature: dict, constexprs: dict,
             div16: list[str], num_warps: int):
    """Compiles once per distinct specialisation; returns (cubin file, metadata)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    file = f"{file_stem}.cubin"
    if file in bundle.memo:
        return file, bundle.memo[file]
    names = list(signature)
    attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in div16}
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", CAPABILITY, 32),
                       options={"num_warps": num_warps, "num_stages": 3, "num_ctas": 1})
    md = k.metadata
    if md.num_ctas != 1 or md.launch_cooperative_grid or md.launch_pdl or md.tensordesc_meta:
        raise ExportError(f"{file_stem}: needs launch attributes the manifest cannot express "
                          f"(num_ctas={md.num_ctas}, cooperative={md.launch_cooperative_grid}, "
                          f"pdl={md.launch_pdl}, tensordesc={bool(md.tensordesc_meta)})")
    bundle.add_cubin(file, k.asm["cubin"], {f"{file_stem}.ttgir.txt": k.asm["ttgir"],
                                            f"{file_stem}.ptx.txt": k.asm["ptx"]})
    bundle.memo[file] = (md, k.asm["ptx"])
    return file, bundle.memo[file]


def _launch(cfg: Config, file: str, compiled, grid: tuple[int, int, int], params: list[dict]):
    """Adds the hidden scratch pointers, checks against the PTX prototype, builds the launch."""
    md, ptx = compiled
    scratches = []
    total_programs = grid[0] * grid[1] * grid[2] * md.num_ctas
    for name, size in (("global_scratch", md.global_scratch_size),
                       ("profile_scratch", md.profile_scratch_size)):
        if size == 0:
            params.append(null())
        else:
            scratches.append({"name": name, "bytes": total_programs * size})
            params.append(scratch(name))
    want = [param_bytes(p) for p in params]
    got = ptx_entry_params(ptx, md.name)
    if want != got:
        raise ExportError(f"{md.name}: manifest param sizes {want} != PTX .entry prototype {got}")
    launch = Launch(file, md.name, grid, (32 * md.num_warps, 1, 1), params, shared_bytes=md.shared)
    return launch, scratches


def _dtype(cfg: Config, allowed: tuple[str, ...]):
    name = cfg.text("dtype")
    if name not in allowed:
        raise Unsupported(f"dtype '{name}' not covered by the {FRONTEND} kernel (has {list(allowed)})")
    return DTYPES[name]


def export_vector_add(cfg: Config, bundle: Bundle) -> None:
    n = cfg.integer("n")
    tt, short, _ = _dtype(cfg, ("float32",))
    block, warps = 1024, 4
    nt = _int_type(n)
    div16 = ["x_ptr", "y_ptr", "out_ptr"] + (["n"] if n % 16 == 0 else [])
    sig = {"x_ptr": f"*{tt}", "y_ptr": f"*{tt}", "out_ptr": f"*{tt}", "n": nt, "BLOCK": "constexpr"}
    stem = f"vector_add_{short}_b{block}_w{warps}" + ("_n16" if "n" in div16 else "") + \
        ("_i64" if nt == "i64" else "")
    fn = load_kernel_module(FRONTEND, "vector_add").vector_add_kernel
    file, compiled = _compile(bundle, stem, fn, sig, {"BLOCK": block}, div16, warps)
    grid = (-(-n // block), 1, 1)
    params = [ptr("x"), ptr("y"), ptr("out"), extent("x", 0, nt)]
    launch, scratches = _launch(cfg, file, compiled, grid, params)
    bundle.add_config(cfg.params, [launch], scratch=scratches,
                      tuning={"BLOCK": block, "num_warps": compiled[0].num_warps, "num_stages": 3,
                              "divisible_16": div16})


def export_rms_norm(cfg: Config, bundle: Bundle) -> None:
    m, n = cfg.integer("m"), cfg.integer("n")
    tt, short, _ = _dtype(cfg, ("float16", "bfloat16", "float32"))
    if m > 2**31 - 1:
        raise Unsupported(f"m={m} exceeds the grid limit (one program per row)")
    eps = opparams.real_or(cfg, "eps", EPS)
    if opparams.real_or(cfg, "offset", 0.0) != 0.0:
        raise Unsupported("offset != 0 (Gemma-style w + offset) is not in the kernel")
    mode = opparams.text_or(cfg, "mode", "")   # upstream kernel choice; one kernel here
    block = 1 << (n - 1).bit_length()
    single = block <= RMS_MAX_BLOCK
    block = min(block, RMS_MAX_BLOCK)
    warps = min(max(block // 256, 1), 8)
    nt = _int_type(n)
    st = _int_type(n)    # contiguous rows: row stride = n
    ints = {"x_row_stride": n, "y_row_stride": n, "n": n}
    div16 = ["x_ptr", "w_ptr", "y_ptr"] + [k for k, v in ints.items() if v % 16 == 0]
    sig = {"x_ptr": f"*{tt}", "w_ptr": f"*{tt}", "y_ptr": f"*{tt}", "x_row_stride": st,
           "y_row_stride": st, "n": nt, "eps": "fp32", "BLOCK_N": "constexpr", "SINGLE": "constexpr"}
    stem = (f"rms_norm_{short}_b{block}_w{warps}" + ("" if single else "_loop")
            + ("_n16" if n % 16 == 0 else "") + ("_i64" if nt == "i64" else ""))
    fn = load_kernel_module(FRONTEND, "rms_norm").rms_norm_kernel
    file, compiled = _compile(bundle, stem, fn, sig, {"BLOCK_N": block, "SINGLE": single}, div16, warps)
    params = [ptr("x"), ptr("w"), ptr("y"), stride("x", 0, st), stride("y", 0, st), extent("x", 1, nt),
              literal("f32", eps)]
    launch, scratches = _launch(cfg, file, compiled, (m, 1, 1), params)
    extra = {"mode": mode, "mode_note": "upstream variant; the same one-row-per-program kernel"} if mode else {}
    bundle.add_config(cfg.params, [launch], scratch=scratches,
                      tuning={"BLOCK_N": block, "single_block_row": single, **extra,
                              "num_warps": compiled[0].num_warps, "num_stages": 3,
                              "divisible_16": div16, "inner_stride": 1})


# ---- generic helper for the row-wise and elementwise operators ---------------------------------

def _export_simple(cfg: Config, bundle: Bundle, module: str, fn_name: str, stem: str,
                   args: list[tuple], constexprs: dict, grid: tuple[int, int, int], warps: int,
                   tuning: dict) -> None:
    """args: (name, triton type, manifest param, value or None) in the kernel's order. Pointers
    are declared 16-divisible; an integer argument only when this configuration's value is (the
    cubin stem then carries a `_d<mask>` of which integer arguments are)."""
    sig = {name: t for name, t, _, _ in args}
    sig.update({k: "constexpr" for k in constexprs})
    div16 = [name for name, t, _, _ in args if t.startswith("*")]
    ints = [(name, v) for name, t, _, v in args if t in ("i32", "i64") and v is not None]
    div16 += [name for name, v in ints if v % 16 == 0]
    if ints:
        stem += "_d" + "".join("1" if v % 16 == 0 else "0" for _, v in ints)
    if any(t == "i64" for _, t, _, _ in args):
        stem += "_i64"
    fn = getattr(load_kernel_module(FRONTEND, module), fn_name)
    file, compiled = _compile(bundle, stem, fn, sig, constexprs, div16, warps)
    launch, scratches = _launch(cfg, file, compiled, grid, [p for _, _, p, _ in args])
    bundle.add_config(cfg.params, [launch], scratch=scratches,
                      tuning={**tuning, "num_warps": compiled[0].num_warps, "num_stages": 3,
                              "divisible_16": div16, "inner_stride": 1})


ROW_MAX_SINGLE = 16384     # softmax / layer_norm: widest row kept in registers (all of tilegym)
ROW_LOOP_BLOCK = 4096      # softmax chunk when rows are wider
ROW_TILE_ELEMS = 4096      # target elements per program (ROWS x BLOCK_N) for short rows
MIN_PROGRAMS = 256


def _pow2_at_least(v: int) -> int:
    return 1 << max(0, (v - 1).bit_length())


def row_blocks(m: int, n: int) -> tuple[int, int, bool, int]:
    """(ROWS, BLOCK_N, single, num_warps) for row-wise kernels: BLOCK_N the power of two >= n
    (up to ROW_MAX_SINGLE, else ROW_LOOP_BLOCK and a loop); several rows per program where rows
    are short (about ROW_TILE_ELEMS elements, at least MIN_PROGRAMS programs when m allows);
    num_warps = elements / 256 clamped to [1, 16] (8-16 elements per thread)."""
    block = _pow2_at_least(n)
    single = block <= ROW_MAX_SINGLE
    if not single:
        block = ROW_LOOP_BLOCK
    rows = max(1, min(64, ROW_TILE_ELEMS // block))
    while rows > 1 and -(-m // rows) < MIN_PROGRAMS:
        rows //= 2
    warps = min(max(rows * block // 256, 1), 16)
    return rows, block, single, warps


def export_softmax(cfg: Config, bundle: Bundle) -> None:
    m, n = cfg.integer("m"), cfg.integer("n")
    tt, short, _ = _dtype(cfg, ("float16", "bfloat16", "float32"))
    variant = opparams.text_or(cfg, "variant", "")
    rows, block, single, warps = row_blocks(m, n)
    nt = _int_type(max(m, n))
    st = _int_type(n)
    args = [("x_ptr", f"*{tt}", ptr("x"), None), ("y_ptr", f"*{tt}", ptr("y"), None),
            ("x_row_stride", st, stride("x", 0, st), n), ("y_row_stride", st, stride("y", 0, st), n),
            ("m", nt, extent("x", 0, nt), m), ("n", nt, extent("x", 1, nt), n)]
    stem = f"softmax_{short}_r{rows}_b{block}_w{warps}" + ("" if single else "_loop")
    _export_simple(cfg, bundle, "softmax", "softmax_kernel", stem, args,
                   {"ROWS": rows, "BLOCK_N": block, "SINGLE": single}, (-(-m // rows), 1, 1), warps,
                   {"ROWS": rows, "BLOCK_N": block, "single_block_row": single, "variant": variant,
                    "reads_of_x": 1 if single else 2})


def export_layer_norm_legacy(cfg: Config, bundle: Bundle) -> None:
    m, n = cfg.integer("m"), cfg.integer("n")
    tt, short, _ = _dtype(cfg, ("float16", "bfloat16", "float32"))
    persistent, eps, shift = opparams.layer_norm(cfg)
    rows, block, single, warps = row_blocks(m, n)
    if not single:
        raise Unsupported(f"n={n} is wider than the single-block row kernel ({ROW_MAX_SINGLE})")
    nt = _int_type(max(m, n))
    st = _int_type(n)
    args = [("x_ptr", f"*{tt}", ptr("x"), None), ("w_ptr", f"*{tt}", ptr("w"), None),
            ("b_ptr", f"*{tt}", ptr("b"), None), ("y_ptr", f"*{tt}", ptr("y"), None)]
    if persistent:
        args += [("mean_ptr", "*fp32", ptr("mean"), None), ("rstd_ptr", "*fp32", ptr("rstd"), None)]
    args += [("x_row_stride", st, stride("x", 0, st), n), ("y_row_stride", st, stride("y", 0, st), n),
             ("m", nt, extent("x", 0, nt), m), ("n", nt, extent("x", 1, nt), n),
             ("eps", "fp32", literal("f32", eps), None), ("shift", "fp32", literal("f32", shift), None)]
    name = "persistent_layer_norm" if persistent else "layer_norm_legacy"
    stem = f"{name}_{short}_r{rows}_b{block}_w{warps}"
    _export_simple(cfg, bundle, "layer_norm_legacy", f"{name}_kernel", stem, args,
                   {"ROWS": rows, "BLOCK_N": block}, (-(-m // rows), 1, 1), warps,
                   {"ROWS": rows, "BLOCK_N": block, "variant": name,
                    "strategy": "multi-row programs, one pass over x"})


def export_silu_and_mul(cfg: Config, bundle: Bundle) -> None:
    b, s, h = cfg.integer("batch"), cfg.integer("seq_len"), cfg.integer("hidden_size")
    if opparams.integer_or(cfg, "input_last_dim", 2 * h) != 2 * h:
        from .suite import SuiteError
        raise SuiteError(f"{cfg.id()}: input_last_dim must be 2 * hidden_size")
    tt, short, _ = _dtype(cfg, ("float16", "bfloat16", "float32"))
    block = min(_pow2_at_least(h), 1024)
    nrows = b * s
    rows = max(1, min(_pow2_at_least(nrows), 4096 // block))
    warps = min(max(rows * block // 512, 1), 8)
    grid = (-(-h // block), -(-nrows // rows), 1)
    if grid[1] > 65535:
        raise Unsupported(f"{grid[1]} row programs exceed gridDim.y 65535")
    it = lambda v: _int_type(v)  # noqa: E731
    args = [("x_ptr", f"*{tt}", ptr("x"), None), ("y_ptr", f"*{tt}", ptr("y"), None),
            ("batch", it(b), extent("x", 0, it(b)), b), ("seq_len", it(s), extent("x", 1, it(s)), s),
            ("h", it(2 * h), extent("y", 2, it(2 * h)), h)]
    stem = f"silu_and_mul_{short}_r{rows}_b{block}_w{warps}"
    _export_simple(cfg, bundle, "silu_and_mul", "silu_and_mul_kernel", stem, args,
                   {"ROWS": rows, "BLOCK_H": block}, grid, warps, {"ROWS": rows, "BLOCK_H": block})


SWIGLU_SMALL = 1 << 17   # elements; below it swiglu uses 256-element programs


def export_swiglu(cfg: Config, bundle: Bundle) -> None:
    b, s, h = cfg.integer("batch"), cfg.integer("seq_len"), cfg.integer("hidden_size")
    tt, short, _ = _dtype(cfg, ("float16", "bfloat16", "float32"))
    n = b * s * h
    # Small tensors are launch- and latency-bound: 256-element programs (one 16-byte fp32 vector
    # per thread and tensor) spread them over more SMs (tilegym's only swiglu has 32768 elements).
    block = 256 if n < SWIGLU_SMALL else 1024 if n < (1 << 20) else 4096
    warps = {256: 2, 1024: 4, 4096: 8}[block]
    grid = (-(-n // block), 1, 1)
    if grid[0] > I32_MAX:
        raise Unsupported(f"{grid[0]} programs exceed the grid limit")
    it = lambda v: _int_type(v)  # noqa: E731
    args = [("a_ptr", f"*{tt}", ptr("a"), None), ("b_ptr", f"*{tt}", ptr("b"), None),
            ("c_ptr", f"*{tt}", ptr("c"), None), ("batch", it(b), extent("a", 0, it(b)), b),
            ("seq_len", it(s), extent("a", 1, it(s)), s), ("h", it(h), extent("a", 2, it(h)), h)]
    stem = f"swiglu_{short}_b{block}_w{warps}"
    _export_simple(cfg, bundle, "swiglu", "swiglu_kernel", stem, args, {"BLOCK": block}, grid, warps,
                   {"BLOCK": block})


def export_dropout(cfg: Config, bundle: Bundle) -> None:
    m = cfg.integer("m")
    tt, short, _ = _dtype(cfg, ("float16", "bfloat16", "float32"))
    p, inplace, training, seed = opparams.dropout(cfg)
    if m > I32_MAX:
        raise Unsupported(f"m={m}: element indices must fit int32 (the generator hashes uint32(i))")
    block, warps = 4096, 8
    threshold = opparams.dropout_keep_threshold(p)
    scale = 1.0 / (1.0 - p)
    args = [("x_ptr", f"*{tt}", ptr("x"), None)]
    if not inplace:
        args.append(("y_ptr", f"*{tt}", ptr("y"), None))
    args += [("n", "i32", extent("x", 0, "i32"), m), ("seed", "u32", literal("u32", seed), None),
             ("threshold", "u32", literal("u32", threshold), None), ("scale", "fp32", literal("f32", scale), None)]
    name = "dropout_inplace" if inplace else "dropout"
    stem = f"{name}_{short}_b{block}_w{warps}" + ("" if training else "_eval")
    _export_simple(cfg, bundle, "dropout", f"{name}_kernel", stem, args,
                   {"BLOCK": block, "TRAINING": training}, (-(-m // block), 1, 1), warps,
                   {"BLOCK": block, "rng": "reference cutile_uniform: uint32 LCG 1103515245 + seed, "
                    "xorshift >>16 <<8 >>4, 31 bits", "keep_if_bits_at_least": threshold, "scale_f32": scale})


ROPE_TILE_S_MAX = 8


def export_rope(cfg: Config, bundle: Bundle) -> None:
    bsz, s = cfg.integer("bsz"), cfg.integer("seq_len")
    hq, hkv, d = cfg.integer("num_q_heads"), cfg.integer("num_kv_heads"), cfg.integer("head_dim")
    rd = opparams.rope_dim(cfg)
    tt, short, _ = _dtype(cfg, ("float16", "bfloat16", "float32"))
    half = rd // 2
    bhq, bhk, bh = _pow2_at_least(hq), _pow2_at_least(hkv), _pow2_at_least(half)
    tile_s = ROPE_TILE_S_MAX
    while tile_s > 1 and -(-s // tile_s) * bsz < MIN_PROGRAMS:
        tile_s //= 2
    grid = (-(-s // tile_s), bsz, 1)
    if grid[1] > 65535:
        raise Unsupported(f"bsz={bsz} exceeds gridDim.y 65535")
    warps = min(max(bhq * bh // 256, 1), 8)
    strides = {"q_sb": ("q", 0, s * hq * d), "q_sh": ("q", 1, d), "q_ss": ("q", 2, hq * d),
               "k_sb": ("k", 0, s * hkv * d), "k_sh": ("k", 1, d), "k_ss": ("k", 2, hkv * d),
               "c_sb": ("cos", 0, s * rd), "c_ss": ("cos", 1, rd)}
    args = [("q_ptr", f"*{tt}", ptr("q"), None), ("k_ptr", f"*{tt}", ptr("k"), None),
            ("cos_ptr", f"*{tt}", ptr("cos"), None), ("sin_ptr", f"*{tt}", ptr("sin"), None)]
    args += [(name, _int_type(v), stride(t, dim, _int_type(v)), v) for name, (t, dim, v) in strides.items()]
    args += [("seq_len", _int_type(s), extent("q", 2, _int_type(s)), s),
             ("hq", "i32", extent("q", 1, "i32"), hq), ("hkv", "i32", extent("k", 1, "i32"), hkv),
             ("half", "i32", literal("i32", half), half)]
    stem = f"rope_{short}_s{tile_s}_q{bhq}_k{bhk}_h{bh}_w{warps}"
    _export_simple(cfg, bundle, "rope", "rope_kernel", stem, args,
                   {"TILE_S": tile_s, "BHQ": bhq, "BHK": bhk, "BH": bh}, grid, warps,
                   {"TILE_S": tile_s, "BHQ": bhq, "BHK": bhk, "BH": bh, "rope_dim": rd, "in_place": True})


@lru_cache(maxsize=None)
def toolchain() -> dict[str, str]:
    import subprocess
    import triton
    tc = {"triton": triton.__version__, "python": python_version()}
    try:
        from triton.backends.nvidia.compiler import get_ptxas
        ptxas = get_ptxas(CAPABILITY).path
    except Exception:
        ptxas = str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas")
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"\bV(\d+\.\d+\.\d+)", out)
    if not m:
        raise ExportError(f"{ptxas} --version: no version in output")
    tc["ptxas"] = m.group(1)
    return tc


FRONTEND_DEF = Frontend(FRONTEND, {"vector_add": export_vector_add, "rms_norm": export_rms_norm,
                                   "layer_norm_legacy": export_layer_norm_legacy,
                                   "softmax": export_softmax, "rope": export_rope,
                                   "silu_and_mul": export_silu_and_mul, "swiglu": export_swiglu,
                                   "dropout": export_dropout},
                        lambda: dict(toolchain()))

if __name__ == "__main__":
    raise SystemExit(main(FRONTEND_DEF))
