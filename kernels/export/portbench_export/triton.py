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
              literal("f32", EPS)]
    launch, scratches = _launch(cfg, file, compiled, (m, 1, 1), params)
    bundle.add_config(cfg.params, [launch], scratch=scratches,
                      tuning={"BLOCK_N": block, "single_block_row": single,
                              "num_warps": compiled[0].num_warps, "num_stages": 3,
                              "divisible_16": div16, "inner_stride": 1})


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


FRONTEND_DEF = Frontend(FRONTEND, {"vector_add": export_vector_add, "rms_norm": export_rms_norm},
                        lambda: dict(toolchain()))

if __name__ == "__main__":
    raise SystemExit(main(FRONTEND_DEF))
