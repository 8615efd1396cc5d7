# SPDX-License-Identifier: Apache-2.0
"""What the cuTile Python front ends share (cutile_python's own kernels, tilegym's kernels):
exporting one KernelSignature as a cubin plus its Tile IR text, and the toolchain versions."""
from __future__ import annotations

import io
import re
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from . import ExportError
from .manifest import Bundle
from .tools import find_tool, python_version


def tileir_bytecode_version(bc: bytes) -> str:
    if bc[:8] != b"\x7fTileIR\x00" or len(bc) < 10:
        raise ExportError("exported Tile IR bytecode has no TileIR header")
    return f"{bc[8]}.{bc[9]}"


def export_entry(kernel, sig, gpu_code: str) -> tuple[bytes, str, str]:
    """(cubin, Tile IR text, bytecode version) of one signature of `kernel` for `gpu_code`."""
    from cuda.tile.compilation import export_kernel
    cubin, bc = io.BytesIO(), io.BytesIO()
    export_kernel(kernel, [sig], cubin, gpu_code=gpu_code, output_format="cubin")
    export_kernel(kernel, [sig], bc, gpu_code=gpu_code, output_format="tileir_bytecode")
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / f"{sig.symbol}.tileirbc"
        p.write_bytes(bc.getvalue())
        r = subprocess.run([str(find_tool("tileirdisasm")), str(p)], capture_output=True, text=True)
    if r.returncode != 0:
        raise ExportError(f"tileirdisasm {sig.symbol}: {r.stderr.strip() or r.returncode}")
    if f"entry @{sig.symbol}(" not in r.stdout:
        raise ExportError(f"tileirdisasm {sig.symbol}: entry not found in the Tile IR text")
    return cubin.getvalue(), r.stdout, tileir_bytecode_version(bc.getvalue())


def compile_entry(bundle: Bundle, kernel, sig, gpu_code: str) -> str:
    """Exports one signature as <symbol>.cubin plus <symbol>.tileir.txt; returns the cubin file."""
    file = f"{sig.symbol}.cubin"
    if file in bundle.cubins:
        return file
    cubin, text, version = export_entry(kernel, sig, gpu_code)
    add_entry(bundle, sig.symbol, cubin, text, version)
    return file


def add_entry(bundle: Bundle, symbol: str, cubin: bytes, text: str, version: str) -> str:
    file = f"{symbol}.cubin"
    bundle.add_cubin(file, cubin, {f"{symbol}.tileir.txt": text})
    bundle.toolchain["tileir-bytecode"] = version
    return file


@lru_cache(maxsize=None)
def toolchain() -> dict[str, str]:
    import cuda.tile as ct
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
