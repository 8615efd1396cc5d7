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

import io
import os
import re
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")   # compiling needs no GPU; prove it

from . import ExportError  # noqa: E402
from .cli import Frontend, Unsupported, load_kernel_module, main  # noqa: E402
from .manifest import Bundle, Launch, extent, literal, ptr, stride  # noqa: E402
from .suite import Config  # noqa: E402
from .tools import find_tool, python_version  # noqa: E402

FRONTEND = "cutile_python"
GPU_CODE = "sm_90"            # tileiras rejects arch-suffixed names; its ptxas emits sm_90a
MAX_GRID = 2**24 - 1          # cuTile grid limit per dimension
I32_MAX = 2**31 - 1
EPS = 1e-5
RMS_MAX_TILE = 4096           # widest row tile kept in one piece; wider rows loop over tiles
RMS_TILE_ELEMS = 16384        # target elements per rms_norm tile (TILE_M x TILE_N)
RMS_MIN_BLOCKS = 256          # keep at least this many tile blocks when m allows (GPU-agnostic)
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


def _array_params(tensor: str, ndim: int, itype: str) -> list[dict]:
    return ([ptr(tensor)] + [extent(tensor, d, itype) for d in range(ndim)]
            + [stride(tensor, d, itype) for d in range(ndim)])


def _tileir_bytecode_version(bc: bytes) -> str:
    if bc[:8] != b"\x7fTileIR\x00" or len(bc) < 10:
        raise ExportError("exported Tile IR bytecode has no TileIR header")
    return f"{bc[8]}.{bc[9]}"


def _compile_entry(bundle: Bundle, kernel, sig) -> str:
    """Exports one signature as <symbol>.cubin plus <symbol>.tileir.txt; returns the cubin file."""
    from cuda.tile.compilation import export_kernel
    file = f"{sig.symbol}.cubin"
    if file in bundle.cubins:
        return file
    cubin, bc = io.BytesIO(), io.BytesIO()
    export_kernel(kernel, [sig], cubin, gpu_code=GPU_CODE, output_format="cubin")
    export_kernel(kernel, [sig], bc, gpu_code=GPU_CODE, output_format="tileir_bytecode")
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / f"{sig.symbol}.tileirbc"
        p.write_bytes(bc.getvalue())
        r = subprocess.run([str(find_tool("tileirdisasm")), str(p)], capture_output=True, text=True)
    if r.returncode != 0:
        raise ExportError(f"tileirdisasm {sig.symbol}: {r.stderr.strip() or r.returncode}")
    if f"entry @{sig.symbol}(" not in r.stdout:
        raise ExportError(f"tileirdisasm {sig.symbol}: entry not found in the Tile IR text")
    bundle.add_cubin(file, cubin.getvalue(), {f"{sig.symbol}.tileir.txt": r.stdout})
    bundle.toolchain["tileir-bytecode"] = _tileir_bytecode_version(bc.getvalue())
    return file


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
    symbol = f"vector_add_{short}_t{tile}" + ("_i64" if index_i64 else "")
    sig = KernelSignature([_array(dt, 1, index_i64)] * 3 + [tile],
                          CallingConvention.cutile_python_v2(), symbol=symbol)
    kernel = load_kernel_module(FRONTEND, "vector_add").vector_add
    file = _compile_entry(bundle, kernel, sig)
    it = "i64" if index_i64 else "i32"
    params = _array_params("x", 1, it) + _array_params("y", 1, it) + _array_params("out", 1, it)
    bundle.add_config(cfg.params, [Launch(file, symbol, (grid, 1, 1), (1, 1, 1), params)],
                      tuning={"tile": tile, **_assumptions(index_i64)})


def rms_tiles(m: int, n: int) -> tuple[int, int, bool]:
    """(TILE_M rows, TILE_N columns, whole row in one tile) for an m x n rms_norm.

    TILE_N: the power of two >= n, up to RMS_MAX_TILE (wider rows loop over column tiles).
    TILE_M: rows per tile block so that a tile holds about RMS_TILE_ELEMS elements (measured on
    the H200: 16 rows of 1024 fp16 took 13 us against 36 us for one row per block at m=4096),
    at most 16, and fewer while that would leave under RMS_MIN_BLOCKS tile blocks."""
    tile_n = 1 << (n - 1).bit_length()
    single = tile_n <= RMS_MAX_TILE
    tile_n = min(tile_n, RMS_MAX_TILE)
    tile_m = max(1, min(16, RMS_TILE_ELEMS // tile_n))
    while tile_m > 1 and -(-m // tile_m) < RMS_MIN_BLOCKS:
        tile_m //= 2
    return tile_m, tile_n, single


def export_rms_norm(cfg: Config, bundle: Bundle) -> None:
    from cuda.tile.compilation import CallingConvention, KernelSignature, ScalarConstraint
    ct = _ct()
    m, n = cfg.integer("m"), cfg.integer("n")
    dt, short, size = _dtype(cfg, ("float16", "bfloat16", "float32"))
    tile_m, tile_n, single = rms_tiles(m, n)
    grid = -(-m // tile_m)
    if grid > MAX_GRID:
        raise Unsupported(f"m={m} needs {grid} tile blocks, over the cuTile grid limit {MAX_GRID}")
    index_i64 = m * n > I32_MAX
    # Row stride (= n, contiguous rows) divisible by 16 bytes lets loads vectorise; declare it
    # only when this configuration guarantees it.
    row_div = ALIGN_BYTES // size if (n * size) % ALIGN_BYTES == 0 else 1
    symbol = (f"rms_norm_{short}_r{tile_m}_t{tile_n}" + ("" if single else "_loop")
              + ("" if row_div > 1 else "_rowany") + ("_i64" if index_i64 else ""))
    sig = KernelSignature(
        [_array(dt, 2, index_i64, row_div), _array(dt, 1, index_i64), _array(dt, 2, index_i64, row_div),
         ScalarConstraint(ct.float32), tile_m, tile_n, single],
        CallingConvention.cutile_python_v2(), symbol=symbol)
    kernel = load_kernel_module(FRONTEND, "rms_norm").rms_norm
    file = _compile_entry(bundle, kernel, sig)
    it = "i64" if index_i64 else "i32"
    params = (_array_params("x", 2, it) + _array_params("w", 1, it) + _array_params("y", 2, it)
              + [literal("f32", EPS)])
    bundle.add_config(cfg.params, [Launch(file, symbol, (grid, 1, 1), (1, 1, 1), params)],
                      tuning={"tile_m": tile_m, "tile_n": tile_n, "single_tile_row": single,
                              "row_stride_divisible_by": row_div, **_assumptions(index_i64)})


@lru_cache(maxsize=None)
def toolchain() -> dict[str, str]:
    ct = _ct()
    tc = {"cuda-tile": ct.__version__, "python": python_version()}
    try:  # the tileiras cuTile itself runs (private helper; fall back to the venv's)
        from cuda.tile._compile import _find_compiler_bin
        tileiras = Path(_find_compiler_bin().path)
    except Exception:
        tileiras = find_tool("tileiras")
    out = subprocess.run([str(tileiras), "--version"], capture_output=True, text=True).stdout
    m = re.search(r"\bV(\d+\.\d+\.\d+)", out)
    if not m:
        raise ExportError(f"{tileiras} --version: no version in output")
    tc["tileiras"] = m.group(1)
    return tc


FRONTEND_DEF = Frontend(FRONTEND, {"vector_add": export_vector_add, "rms_norm": export_rms_norm},
                        lambda: dict(toolchain()))

if __name__ == "__main__":
    raise SystemExit(main(FRONTEND_DEF))
