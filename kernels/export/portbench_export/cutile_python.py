# SPDX-License-Identifier: Apache-2.0
"""cuTile Python exporter: `python -m portbench_export.cutile_python --suite S --out bundles/cutile_python`.

ABI (cuda-tile calling convention cutile_python_v2, documented in compilation.rst "Calling
Conventions" and checked here against each cubin's KPARAM_INFO): parameters in Python order;
ct.Constant parameters are omitted; an array of rank r is (pointer, r shapes, r strides in
elements) with shapes and strides int32 (int64 when exported with index_dtype int64); a float32
scalar is one f32. Launch: grid = tile blocks, block [1,1,1], dynamic shared 0 (the CTA shape is
baked into the cubin). Every entry gets an explicit readable symbol.

Assumptions compiled into every entry (hold for the harness's contiguous, freshly allocated
tensors; recorded in each configuration's tuning): base addresses 16-byte aligned, innermost
stride 1, no aliasing between arrays, non-negative strides.
"""
from __future__ import annotations

import os

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")   # compiling needs no GPU; prove it

from . import ExportError  # noqa: E402
from .cli import Frontend, Unsupported, load_kernel_module, main  # noqa: E402
from .cutile_common import compile_entry, toolchain  # noqa: E402
from .manifest import Bundle, Launch, extent, literal, ptr, stride  # noqa: E402
from . import opparams  # noqa: E402
from .suite import Config  # noqa: E402

FRONTEND = "cutile_python"
GPU_CODE = "sm_90"            # tileiras rejects arch-suffixed names; its ptxas emits sm_90a
MAX_GRID = 2**24 - 1          # cuTile grid limit per dimension
I32_MAX = 2**31 - 1
EPS = 1e-5
MIN_BLOCKS = 256              # rope: keep at least this many tile blocks when the shape allows
EW_OCCUPANCY = 4              # occupancy hint of the elementwise kernels (as the cuTile Rust port)
ALIGN_BYTES = 16

DTYPES = {"float16": ("float16", "f16", 2), "bfloat16": ("bfloat16", "bf16", 2),
          "float32": ("float32", "f32", 4)}


def _ct():
    import cuda.tile as ct
    return ct


def _dtype(cfg: Config, allowed: tuple[str, ...]):
    name = cfg.text("dtype")
    if name not in allowed:
        raise Unsupported(f"dtype '{name}' not covered by the {FRONTEND} kernel (has {list(allowed)})")
    ct_name, short, size = DTYPES[name]
    return getattr(_ct(), ct_name), short, size


def _array(dt, ndim: int, index_i64: bool, outer_stride_div: int = 1):
    from cuda.tile.compilation import ArrayConstraint
    ct = _ct()
    return ArrayConstraint(
        dt, ndim, index_dtype=ct.int64 if index_i64 else ct.int32,
        stride_lower_bound_incl=0, alias_groups=(), may_alias_internally=False,
        stride_constant=(None,) * (ndim - 1) + (1,),
        stride_divisible_by=(outer_stride_div,) * (ndim - 1) + (1,),
        base_addr_divisible_by=ALIGN_BYTES)


def _array_strided(dt, strides: tuple[int, ...], size: int, index_i64: bool):
    """An array whose outer strides are this configuration's `strides` (elements): each declared
    divisible by 16 bytes when it is (lets loads vectorise), innermost stride 1."""
    from cuda.tile.compilation import ArrayConstraint
    ct = _ct()
    ndim = len(strides) + 1
    divs = tuple(ALIGN_BYTES // size if (s * size) % ALIGN_BYTES == 0 else 1 for s in strides)
    return ArrayConstraint(
        dt, ndim, index_dtype=ct.int64 if index_i64 else ct.int32,
        stride_lower_bound_incl=0, alias_groups=(), may_alias_internally=False,
        stride_constant=(None,) * (ndim - 1) + (1,), stride_divisible_by=divs + (1,),
        base_addr_divisible_by=ALIGN_BYTES)


def _dense_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Outer strides (elements) of a contiguous row-major tensor of `shape`."""
    out, acc = [], 1
    for d in reversed(shape[1:]):
        acc *= d
        out.append(acc)
    return tuple(reversed(out))


def _pow2_at_least(v: int) -> int:
    return 1 << max(0, (v - 1).bit_length())


def _array_params(tensor: str, ndim: int, itype: str) -> list[dict]:
    return ([ptr(tensor)] + [extent(tensor, d, itype) for d in range(ndim)]
            + [stride(tensor, d, itype) for d in range(ndim)])


def _compile_entry(bundle: Bundle, kernel, sig) -> str:
    """Exports one signature as <symbol>.cubin plus <symbol>.tileir.txt; returns the cubin file."""
    return compile_entry(bundle, kernel, sig, GPU_CODE)


def _kernel(module: str, name: str, occupancy: int, warps: int | None = None):
    """Kernel `name` of kernels/cutile_python/<module>.py with a cuTile occupancy hint and, where
    given, a number of worker warps per tile block (else tileiras chooses)."""
    kernel = getattr(load_kernel_module(FRONTEND, module), name)
    return kernel.replace_hints(occupancy=occupancy, num_worker_warps=warps)


def _assumptions(index_i64: bool) -> dict:
    return {"index_type": "i64" if index_i64 else "i32", "base_align_bytes": ALIGN_BYTES,
            "inner_stride": 1, "no_alias": True}


# ---- operators --------------------------------------------------------------------------------

def export_vector_add(cfg: Config, bundle: Bundle) -> None:
    from cuda.tile.compilation import CallingConvention, KernelSignature
    n = cfg.integer("n")
    dt, short, _ = _dtype(cfg, ("float32",))
    index_i64 = n > I32_MAX
    tile = 1024
    while -(-n // tile) > MAX_GRID:
        tile *= 2
    grid = -(-n // tile)
    # A suite may ask for CTA clusters: the grid then counts clusters (as ct.launch passes it).
    num_ctas = cfg.tune("num_ctas", 1)
    symbol = (f"vector_add_{short}_t{tile}" + ("_i64" if index_i64 else "")
              + (f"_cta{num_ctas}" if num_ctas > 1 else ""))
    sig = KernelSignature([_array(dt, 1, index_i64)] * 3 + [tile],
                          CallingConvention.cutile_python_v2(), symbol=symbol)
    kernel = load_kernel_module(FRONTEND, "vector_add").vector_add
    if num_ctas > 1:
        kernel = kernel.replace_hints(num_ctas=num_ctas)
    file = _compile_entry(bundle, kernel, sig)
    it = "i64" if index_i64 else "i32"
    params = _array_params("x", 1, it) + _array_params("y", 1, it) + _array_params("out", 1, it)
    bundle.add_config(cfg.params, [Launch(file, symbol, (grid, 1, 1), (1, 1, 1), params,
                                          cluster=(num_ctas, 1, 1))],
                      tuning={"tile": tile, "num_ctas": num_ctas, **_assumptions(index_i64)})


def export_rms_norm(cfg: Config, bundle: Bundle) -> None:
    from cuda.tile.compilation import CallingConvention, KernelSignature, ScalarConstraint
    ct = _ct()
    m, n = cfg.integer("m"), cfg.integer("n")
    dt, short, size = _dtype(cfg, ("float16", "bfloat16", "float32"))
    eps = opparams.real_or(cfg, "eps", EPS)
    if opparams.real_or(cfg, "offset", 0.0) != 0.0:
        raise Unsupported("offset != 0 (Gemma-style w + offset) is not in the kernel")
    mode = opparams.text_or(cfg, "mode", "")   # upstream kernel choice; one kernel here
    tile_m, tile_n, single, occupancy = norm_tiles(cfg, m, n, bundle.target.sm_count)
    grid = -(-m // tile_m)
    if grid > MAX_GRID:
        raise Unsupported(f"m={m} needs {grid} tile blocks, over the cuTile grid limit {MAX_GRID}")
    index_i64 = m * n > I32_MAX
    # Row stride (= n, contiguous rows) divisible by 16 bytes lets loads vectorise; declare it
    # only when this configuration guarantees it.
    row_div = ALIGN_BYTES // size if (n * size) % ALIGN_BYTES == 0 else 1
    symbol = (f"rms_norm_{short}_r{tile_m}_t{tile_n}" + ("" if single else "_loop")
              + ("" if row_div > 1 else "_rowany") + ("_i64" if index_i64 else "") + f"_occ{occupancy}")
    sig = KernelSignature(
        [_array(dt, 2, index_i64, row_div), _array(dt, 1, index_i64), _array(dt, 2, index_i64, row_div),
         ScalarConstraint(ct.float32), tile_m, tile_n, single],
        CallingConvention.cutile_python_v2(), symbol=symbol)
    file = _compile_entry(bundle, _kernel("rms_norm", "rms_norm", occupancy), sig)
    it = "i64" if index_i64 else "i32"
    params = (_array_params("x", 2, it) + _array_params("w", 1, it) + _array_params("y", 2, it)
              + [literal("f32", eps)])
    extra = {"mode": mode, "mode_note": "upstream variant; the same multi-row kernel for every mode"} if mode else {}
    bundle.add_config(cfg.params, [Launch(file, symbol, (grid, 1, 1), (1, 1, 1), params)],
                      tuning={"tile_m": tile_m, "tile_n": tile_n, "single_tile_row": single, **extra,
                              "occupancy": occupancy, "row_stride_divisible_by": row_div,
                              **_assumptions(index_i64)})


ROW_MAX_SINGLE = 16384        # rms_norm / softmax / layer_norm: widest row kept in one tile
ROW_LOOP_TILE = 4096          # column tile when rows are wider
# rms_norm and layer_norm: widest row kept in one tile, and the column chunk of wider rows
# (H200, m=65536 n=16384 fp16 rms_norm: one 16384 tile 1237 us, 2048 chunks 1162 us).
NORM_MAX_SINGLE = 8192
NORM_LOOP_TILE = 2048
# Rows per tile block of the looping layer_norm when m is a multiple of it, as the cuTile Rust
# port's LAYER_NORM_LOOP_BM (H200, persistent 30000 x 10000 bf16: 1 row 536 us, 2 rows 403 us).
LAYER_NORM_LOOP_ROWS = 2
ROW_TILE_ELEMS = 8192         # target elements per row tile (TILE_M x TILE_N)
EW_TILE_ELEMS = 8192          # elementwise ops: target elements per tile


def row_tiles(m: int, n: int, sms: int, max_single: int = ROW_MAX_SINGLE,
              loop_tile: int = ROW_LOOP_TILE) -> tuple[int, int, bool]:
    """(TILE_M, TILE_N, whole row in one tile) for row-wise operators, the choice the cuTile
    Rust port makes (kernels/cutile_rust/src/plan.rs `rms_norm_tiles`), so that reference and
    port differ in front end only: TILE_N the power of two >= n (at least 16; up to max_single,
    else ROW_LOOP_TILE and a loop over column tiles); TILE_M rows so that a tile holds at most
    ROW_TILE_ELEMS elements, halved while there would be fewer tile blocks than the target's `sms`."""
    tile_n = max(16, _pow2_at_least(n))
    single = tile_n <= max_single
    if not single:
        return 1, loop_tile, False
    tile_m = max(1, ROW_TILE_ELEMS // tile_n)
    while tile_m > 1 and -(-m // tile_m) < sms:
        tile_m //= 2
    return tile_m, tile_n, single


def norm_tiles(cfg: Config, m: int, n: int, sms: int) -> tuple[int, int, bool, int]:
    """(TILE_M, TILE_N, whole row in one tile, occupancy) of rms_norm and layer_norm, as the
    cuTile Rust port's `norm_tiles`: rows wider than NORM_MAX_SINGLE loop over NORM_LOOP_TILE
    chunks (a 16384-column f32 row tile spills registers); a suite's `tile` override asks for
    the looping kernel with that chunk, `block_rows` and `occupancy` replace those choices."""
    tile_m, tile_n, single = row_tiles(m, n, sms, NORM_MAX_SINGLE, NORM_LOOP_TILE)
    if "tile" in cfg.tuning:
        tile_m, tile_n, single = 1, cfg.tuning["tile"], False
    if cfg.tuning.get("single"):
        tile_m, tile_n, single = 1, max(16, _pow2_at_least(n)), True
    tile_m = cfg.tune("block_rows", tile_m)
    return tile_m, tile_n, single, cfg.tune("occupancy", row_occupancy(tile_m, tile_n, single))


def row_occupancy(tile_m: int, tile_n: int, single: bool = True) -> int:
    """cuTile occupancy hint (tile blocks per SM) of the row kernels: without a hint tileiras
    schedules too few blocks per SM for these memory-bound kernels (up to 2.5x slower on the
    H200, docs/cutile-rust.md). 4 up to ROW_TILE_ELEMS elements per tile (and for the looping
    kernels, whose tile is one column chunk), 2 above."""
    return 4 if not single or tile_m * tile_n <= ROW_TILE_ELEMS else 2


def _it(index_i64: bool) -> str:
    return "i64" if index_i64 else "i32"


def _sig(args: list, symbol: str):
    from cuda.tile.compilation import CallingConvention, KernelSignature
    return KernelSignature(args, CallingConvention.cutile_python_v2(), symbol=symbol)


def _f32_scalar():
    from cuda.tile.compilation import ScalarConstraint
    return ScalarConstraint(_ct().float32)


def export_softmax(cfg: Config, bundle: Bundle) -> None:
    m, n = cfg.integer("m"), cfg.integer("n")
    dt, short, size = _dtype(cfg, ("float16", "bfloat16", "float32"))
    variant = opparams.text_or(cfg, "variant", "")   # upstream kernel choice; same math
    tile_m, tile_n, single = row_tiles(m, n, bundle.target.sm_count)
    tile_m = cfg.tune("block_rows", tile_m)
    occupancy = cfg.tune("occupancy", row_occupancy(tile_m, tile_n, single))
    grid = -(-m // tile_m)
    if grid > MAX_GRID:
        raise Unsupported(f"m={m} needs {grid} tile blocks, over the cuTile grid limit {MAX_GRID}")
    index_i64 = m * n > I32_MAX
    symbol = (f"softmax_{short}_r{tile_m}_t{tile_n}" + ("" if single else "_loop")
              + ("" if (n * size) % ALIGN_BYTES == 0 else "_rowany") + ("_i64" if index_i64 else "")
              + f"_occ{occupancy}")
    arr = _array_strided(dt, (n,), size, index_i64)
    sig = _sig([arr, arr, tile_m, tile_n, single], symbol)
    file = _compile_entry(bundle, _kernel("softmax", "softmax", occupancy), sig)
    it = _it(index_i64)
    params = _array_params("x", 2, it) + _array_params("y", 2, it)
    bundle.add_config(cfg.params, [Launch(file, symbol, (grid, 1, 1), (1, 1, 1), params)],
                      tuning={"tile_m": tile_m, "tile_n": tile_n, "single_tile_row": single,
                              "variant": variant, "reads_of_x": 1 if single else 2, "occupancy": occupancy,
                              **_assumptions(index_i64)})


def export_layer_norm_legacy(cfg: Config, bundle: Bundle) -> None:
    m, n = cfg.integer("m"), cfg.integer("n")
    dt, short, size = _dtype(cfg, ("float16", "bfloat16", "float32"))
    persistent, eps, shift = opparams.layer_norm(cfg)
    tile_m, tile_n, single, occupancy = norm_tiles(cfg, m, n, bundle.target.sm_count)
    if not single and "block_rows" not in cfg.tuning and m % LAYER_NORM_LOOP_ROWS == 0:
        tile_m = LAYER_NORM_LOOP_ROWS
    grid = -(-m // tile_m)
    if grid > MAX_GRID:
        raise Unsupported(f"m={m} needs {grid} tile blocks, over the cuTile grid limit {MAX_GRID}")
    index_i64 = m * n > I32_MAX
    name = ("layer_norm_stats" if persistent else "layer_norm") + ("" if single else "_loop")
    warps = cfg.tuning.get("warps")
    latency = cfg.tune("latency", 0)   # 0: tileiras infers the load latency
    tma = 0 if cfg.tuning.get("no_tma") else 1
    symbol = (f"{name}_{short}_r{tile_m}_t{tile_n}"
              + ("" if (n * size) % ALIGN_BYTES == 0 else "_rowany") + ("_i64" if index_i64 else "")
              + f"_occ{occupancy}" + (f"_w{warps}" if warps else "") + (f"_lat{latency}" if latency else "")
              + ("" if tma else "_notma"))
    row = _array_strided(dt, (n,), size, index_i64)
    vec = _array(dt, 1, index_i64)
    args = [row, vec, vec, row]
    it = _it(index_i64)
    params = (_array_params("x", 2, it) + _array_params("w", 1, it) + _array_params("b", 1, it)
              + _array_params("y", 2, it))
    if persistent:
        args += [_array(_ct().float32, 1, index_i64)] * 2
        params += _array_params("mean", 1, it) + _array_params("rstd", 1, it)
    sig = _sig(args + [_f32_scalar(), _f32_scalar(), tile_m, tile_n, latency, tma], symbol)
    file = _compile_entry(bundle, _kernel("layer_norm_legacy", name, occupancy, warps), sig)
    params += [literal("f32", eps), literal("f32", shift)]
    bundle.add_config(cfg.params, [Launch(file, symbol, (grid, 1, 1), (1, 1, 1), params)],
                      tuning={"tile_m": tile_m, "tile_n": tile_n, "single_tile_row": single, "occupancy": occupancy,
                              **({"warps": warps} if warps else {}), **({"latency": latency} if latency else {}), **({} if tma else {"allow_tma": False}),
                              "reads_of_x": 1 if single else 2,
                              "variant": "persistent_layer_norm" if persistent else "layer_norm_legacy",
                              "strategy": ("multi-row tile blocks, one pass over x" if single
                                           else "column chunks: merged statistics, then normalise"),
                              **_assumptions(index_i64)})


def _ew_tiles(s: int, h: int, h_tile_max: int = 1024) -> tuple[int, int]:
    """(TILE_S, TILE_H) for [B, S, H] elementwise tiles of about EW_TILE_ELEMS elements."""
    tile_h = min(_pow2_at_least(h), h_tile_max)
    tile_s = max(1, min(_pow2_at_least(s), EW_TILE_ELEMS // tile_h))
    return tile_s, tile_h


def export_silu_and_mul(cfg: Config, bundle: Bundle) -> None:
    b, s, h = cfg.integer("batch"), cfg.integer("seq_len"), cfg.integer("hidden_size")
    if opparams.integer_or(cfg, "input_last_dim", 2 * h) != 2 * h:
        from .suite import SuiteError
        raise SuiteError(f"{cfg.id()}: input_last_dim must be 2 * hidden_size")
    dt, short, size = _dtype(cfg, ("float16", "bfloat16", "float32"))
    # the up half starts at column H: the column tile must divide H
    tile_h = min(h & -h, 1024)
    if tile_h < 16:
        raise Unsupported(f"hidden_size={h} has no power-of-two column tile >= 16 dividing it")
    # Half-tiles of 4096 elements, fewer rows while there would be under 4 blocks per SM (the
    # cuTile Rust port's choice, plan.rs `silu_and_mul_tiles`).
    tile_s = max(1, min(_pow2_at_least(s), 4096 // tile_h))
    while tile_s > 1 and (h // tile_h) * -(-s // tile_s) * b < 4 * bundle.target.sm_count:
        tile_s //= 2
    tile_s = cfg.tune("block_rows", tile_s)
    occupancy = cfg.tune("occupancy", EW_OCCUPANCY)
    grid = (h // tile_h, -(-s // tile_s), b)
    if max(grid) > MAX_GRID:
        raise Unsupported(f"grid {grid} over the cuTile grid limit {MAX_GRID}")
    index_i64 = b * s * 2 * h > I32_MAX
    symbol = f"silu_and_mul_{short}_s{tile_s}_t{tile_h}" + ("_i64" if index_i64 else "") + f"_occ{occupancy}"
    x = _array_strided(dt, _dense_strides((b, s, 2 * h)), size, index_i64)
    y = _array_strided(dt, _dense_strides((b, s, h)), size, index_i64)
    sig = _sig([x, y, tile_s, tile_h], symbol)
    file = _compile_entry(bundle, _kernel("silu_and_mul", "silu_and_mul", occupancy), sig)
    it = _it(index_i64)
    params = _array_params("x", 3, it) + _array_params("y", 3, it)
    bundle.add_config(cfg.params, [Launch(file, symbol, grid, (1, 1, 1), params)],
                      tuning={"tile_s": tile_s, "tile_h": tile_h, "occupancy": occupancy,
                              **_assumptions(index_i64)})


def swiglu_tiles(b: int, s: int, h: int, sms: int) -> tuple[int, int]:
    """(TILE_S, TILE_H) of swiglu: `_ew_tiles` with H tiles up to 4096, then halved (rows first,
    H down to 256) while there would be fewer tile blocks than the target's `sms`: small problems are
    latency-bound, so spreading them over the SMs is what counts. The cuTile Rust port's
    `swiglu_tile` makes the same choice on the flat tensor."""
    tile_s, tile_h = _ew_tiles(s, h, 4096)
    while b * -(-s // tile_s) * -(-h // tile_h) < sms:
        if tile_s > 1:
            tile_s //= 2
        elif tile_h > 256:
            tile_h //= 2
        else:
            break
    return tile_s, tile_h


def export_swiglu(cfg: Config, bundle: Bundle) -> None:
    b, s, h = cfg.integer("batch"), cfg.integer("seq_len"), cfg.integer("hidden_size")
    dt, short, size = _dtype(cfg, ("float16", "bfloat16", "float32"))
    tile_s, tile_h = swiglu_tiles(b, s, h, bundle.target.sm_count)
    tile_s = cfg.tune("block_rows", tile_s)
    occupancy = cfg.tune("occupancy", EW_OCCUPANCY)
    grid = (-(-h // tile_h), -(-s // tile_s), b)
    if max(grid) > MAX_GRID:
        raise Unsupported(f"grid {grid} over the cuTile grid limit {MAX_GRID}")
    index_i64 = b * s * h > I32_MAX
    rowany = (h * size) % ALIGN_BYTES != 0
    symbol = (f"swiglu_{short}_s{tile_s}_t{tile_h}" + ("_rowany" if rowany else "") + ("_i64" if index_i64 else "")
              + f"_occ{occupancy}")
    arr = _array_strided(dt, _dense_strides((b, s, h)), size, index_i64)
    sig = _sig([arr, arr, arr, tile_s, tile_h], symbol)
    file = _compile_entry(bundle, _kernel("swiglu", "swiglu", occupancy), sig)
    it = _it(index_i64)
    params = _array_params("a", 3, it) + _array_params("b", 3, it) + _array_params("c", 3, it)
    bundle.add_config(cfg.params, [Launch(file, symbol, grid, (1, 1, 1), params)],
                      tuning={"tile_s": tile_s, "tile_h": tile_h, "occupancy": occupancy,
                              **_assumptions(index_i64)})


DROPOUT_TILE = 4096


def export_dropout(cfg: Config, bundle: Bundle) -> None:
    from cuda.tile.compilation import ScalarConstraint
    ct = _ct()
    m = cfg.integer("m")
    dt, short, _ = _dtype(cfg, ("float16", "bfloat16", "float32"))
    p, inplace, training, seed = opparams.dropout(cfg)
    if m > I32_MAX:
        raise Unsupported(f"m={m}: element indices must fit int32 (the generator hashes uint32(i))")
    tile = cfg.tune("tile", DROPOUT_TILE)
    while -(-m // tile) > MAX_GRID:
        tile *= 2
    occupancy = cfg.tune("occupancy", EW_OCCUPANCY)
    grid = -(-m // tile)
    threshold = opparams.dropout_keep_threshold(p)
    scale = 1.0 / (1.0 - p)
    name = "dropout_inplace" if inplace else "dropout"
    symbol = f"{name}_{short}_t{tile}" + ("" if training else "_eval") + f"_occ{occupancy}"
    arr = _array(dt, 1, False)
    u32 = ScalarConstraint(ct.uint32)
    args = ([arr] if inplace else [arr, arr]) + [u32, u32, _f32_scalar(), tile, training]
    file = _compile_entry(bundle, _kernel("dropout", name, occupancy), _sig(args, symbol))
    params = _array_params("x", 1, "i32") + ([] if inplace else _array_params("y", 1, "i32"))
    params += [literal("u32", seed), literal("u32", threshold), literal("f32", scale)]
    bundle.add_config(cfg.params, [Launch(file, symbol, (grid, 1, 1), (1, 1, 1), params)],
                      tuning={"tile": tile, "occupancy": occupancy, "rng": "reference cutile_uniform: uint32 LCG 1103515245 + seed, "
                              "xorshift >>16 <<8 >>4, 31 bits", "keep_if_bits_at_least": threshold,
                              "scale_f32": scale, **_assumptions(False)})


ROPE_TILE_ELEMS = 16384       # rotated elements (q and k heads x positions x rope_dim) per block


def export_rope(cfg: Config, bundle: Bundle) -> None:
    bsz, s = cfg.integer("bsz"), cfg.integer("seq_len")
    hq, hkv, d = cfg.integer("num_q_heads"), cfg.integer("num_kv_heads"), cfg.integer("head_dim")
    rd = opparams.rope_dim(cfg)
    dt, short, size = _dtype(cfg, ("float16", "bfloat16", "float32"))
    half = rd // 2
    if half & (half - 1):
        raise Unsupported(f"rope_dim/2={half} is not a power of two (the halves are column tiles)")
    tq, tk = _pow2_at_least(hq), _pow2_at_least(hkv)
    budget = max(1, ROPE_TILE_ELEMS // ((tq + tk) * rd))
    tile_s = min(_pow2_at_least(s), 1 << (budget.bit_length() - 1))   # tile dims: powers of two
    while tile_s > 1 and -(-s // tile_s) * bsz < MIN_BLOCKS:
        tile_s //= 2
    tile_s = cfg.tune("block_rows", tile_s)
    occupancy = cfg.tune("occupancy", EW_OCCUPANCY)
    grid = (-(-s // tile_s), bsz, 1)
    if max(grid) > MAX_GRID:
        raise Unsupported(f"grid {grid} over the cuTile grid limit {MAX_GRID}")
    index_i64 = bsz * s * max(hq, hkv) * d > I32_MAX
    symbol = f"rope_{short}_q{tq}_k{tk}_s{tile_s}_h{half}" + ("_i64" if index_i64 else "") + f"_occ{occupancy}"
    # strides of the [B, H, S, D] views of [B, S, H, D] storage (reference bshd_view)
    q = _array_strided(dt, (s * hq * d, d, hq * d), size, index_i64)
    k = _array_strided(dt, (s * hkv * d, d, hkv * d), size, index_i64)
    cs = _array_strided(dt, (s * rd, rd), size, index_i64)
    sig = _sig([q, k, cs, cs, tq, tk, tile_s, half], symbol)
    file = _compile_entry(bundle, _kernel("rope", "rope", occupancy), sig)
    it = _it(index_i64)
    params = (_array_params("q", 4, it) + _array_params("k", 4, it) + _array_params("cos", 3, it)
              + _array_params("sin", 3, it))
    bundle.add_config(cfg.params, [Launch(file, symbol, grid, (1, 1, 1), params)],
                      tuning={"tile_s": tile_s, "head_tile_q": tq, "head_tile_k": tk, "half": half,
                              "rope_dim": rd, "in_place": True, "occupancy": occupancy,
                              **_assumptions(index_i64)})


FRONTEND_DEF = Frontend(FRONTEND, {"vector_add": export_vector_add, "rms_norm": export_rms_norm,
                                   "layer_norm_legacy": export_layer_norm_legacy,
                                   "softmax": export_softmax, "rope": export_rope,
                                   "silu_and_mul": export_silu_and_mul, "swiglu": export_swiglu,
                                   "dropout": export_dropout},
                        lambda: dict(toolchain()))

if __name__ == "__main__":
    raise SystemExit(main(FRONTEND_DEF))
