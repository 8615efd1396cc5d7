# SPDX-License-Identifier: Apache-2.0
"""CUDA C++ exporter: `python -m portbench_export.cuda_cpp --suite S --out bundles/cuda_cpp`.

Compiles kernels/cuda_cpp/<operator>.cu with NVRTC 13.0 (ctypes, no GPU): the CUBIN from
`--gpu-architecture=sm_90 -default-device -I<CUDA 13.0 include>`, the PTX from a second compile
to compute_90. One cubin per operator holds every entry (extern "C", so symbols are unmangled).
The ABI is the kernel's own parameter list; block and grid are chosen here per configuration;
shared_bytes 0 (the kernels use static shared memory only). The bundle keeps the PTX and the
source as IR text.
"""
from __future__ import annotations

import os
from functools import lru_cache

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

from . import opparams  # noqa: E402
from .cli import Frontend, Unsupported, main  # noqa: E402
from .manifest import Bundle, Launch, extent, literal, ptr, stride  # noqa: E402
from .nvrtc import include_dir, load, package_version  # noqa: E402
from .suite import Config  # noqa: E402
from .tools import kernels_dir, python_version  # noqa: E402

FRONTEND = "cuda_cpp"
ARCH = "sm_90"
EPS = 1e-5
DTYPES = {"float16": ("f16", 2), "bfloat16": ("bf16", 2), "float32": ("f32", 4)}


HEADER = "portbench_device.cuh"   # device helpers the kernels include


def _options(arch: str) -> list[str]:
    return [f"--gpu-architecture={arch}", "-default-device", "--std=c++17", f"-I{include_dir()}",
            f"-I{kernels_dir() / FRONTEND}"]


def _compile_operator(bundle: Bundle, operator: str) -> str:
    file = f"{operator}.cubin"
    if file in bundle.cubins:
        return file
    src_path = kernels_dir() / FRONTEND / f"{operator}.cu"
    source = src_path.read_text(encoding="utf-8")
    nv = load()
    cubin, _ = nv.compile(source, f"{operator}.cu", _options(ARCH), "cubin")
    ptx, _ = nv.compile(source, f"{operator}.cu", _options(ARCH.replace("sm_", "compute_")), "ptx")
    ir = {f"{operator}.ptx.txt": ptx.decode(), f"{operator}.cu.txt": source}
    if f'#include "{HEADER}"' in source:
        ir[f"{HEADER}.txt"] = (kernels_dir() / FRONTEND / HEADER).read_text(encoding="utf-8")
    bundle.add_cubin(file, cubin, ir)
    return file


def _dtype(cfg: Config, allowed: tuple[str, ...]):
    name = cfg.text("dtype")
    if name not in allowed:
        raise Unsupported(f"dtype '{name}' not covered by the {FRONTEND} kernel (has {list(allowed)})")
    return DTYPES[name]


def export_vector_add(cfg: Config, bundle: Bundle) -> None:
    n = cfg.integer("n")
    short, _ = _dtype(cfg, ("float32",))
    block, per_thread = 256, 4
    grid = -(-n // (block * per_thread))
    if grid > 2**31 - 1:
        raise Unsupported(f"n={n} needs more than 2^31-1 blocks")
    file = _compile_operator(bundle, "vector_add")
    params = [ptr("x"), ptr("y"), ptr("out"), extent("x", 0, "i64")]
    bundle.add_config(cfg.params, [Launch(file, f"vector_add_{short}", (grid, 1, 1), (block, 1, 1), params)],
                      tuning={"block": block, "elements_per_thread": per_thread, "base_align_bytes": 16})


def export_rms_norm(cfg: Config, bundle: Bundle) -> None:
    m, n = cfg.integer("m"), cfg.integer("n")
    short, size = _dtype(cfg, ("float16", "bfloat16", "float32"))
    if n > 2**31 - 1 or m > 2**31 - 1:
        raise Unsupported(f"m={m}, n={n}: the kernel takes n as int and one block per row")
    vec = 16 // size
    block = min(512, max(64, 1 << (-(-n // vec) - 1).bit_length()))
    file = _compile_operator(bundle, "rms_norm")
    params = [ptr("x"), ptr("w"), ptr("y"), extent("x", 1, "i32"), stride("x", 0, "i64"),
              stride("y", 0, "i64"), literal("f32", EPS)]
    bundle.add_config(cfg.params, [Launch(file, f"rms_norm_{short}", (m, 1, 1), (block, 1, 1), params)],
                      tuning={"block": block, "vector_bytes": 16, "inner_stride": 1})


LAYER_NORM_VPT = (1, 2, 4, 8)     # vectors per thread the kernel is instantiated for
LAYER_NORM_MAX_THREADS = 512      # the kernels' __launch_bounds__


def layer_norm_block(n: int, size: int, vpt: int | None = None) -> tuple[str, int, int]:
    """(pack, packs per thread, threads) of the register-resident layer_norm. The pack is a
    16-byte vector ("v") where n is a multiple of its width, else one element ("s"). Packs per
    thread: the fewest that cover the row with at most LAYER_NORM_MAX_THREADS threads (more rows
    in flight per SM than with fewer, fatter threads); threads rounded up to whole warps. `vpt`
    overrides the packs per thread."""
    lanes = 16 // size
    pack, packs = ("v", n // lanes) if n % lanes == 0 else ("s", n)
    if vpt is None:
        vpt = next((v for v in LAYER_NORM_VPT if -(-packs // v) <= LAYER_NORM_MAX_THREADS), None)
        if vpt is None:
            raise Unsupported(f"n={n}: the row needs more than {LAYER_NORM_VPT[-1]} "
                              f"{'vectors' if pack == 'v' else 'elements'} per thread")
    elif vpt not in LAYER_NORM_VPT:
        raise Unsupported(f"vectors_per_thread={vpt} is not one of {LAYER_NORM_VPT}")
    per_block = -(-packs // vpt)                    # threads needed, then whole warps
    threads = max(32, -(-per_block // 32) * 32)
    if threads > LAYER_NORM_MAX_THREADS:
        raise Unsupported(f"n={n} with {vpt} per thread needs {threads} threads "
                          f"(max {LAYER_NORM_MAX_THREADS})")
    return pack, vpt, threads


def export_layer_norm_legacy(cfg: Config, bundle: Bundle) -> None:
    m, n = cfg.integer("m"), cfg.integer("n")
    short, size = _dtype(cfg, ("float16", "bfloat16", "float32"))
    persistent, eps, shift = opparams.layer_norm(cfg)
    if m > 2**31 - 1:
        raise Unsupported(f"m={m}: one block per row")
    pack, vpt, threads = layer_norm_block(n, size, cfg.tuning.get("vectors_per_thread"))
    file = _compile_operator(bundle, "layer_norm_legacy")
    params = [ptr("x"), ptr("w"), ptr("b"), ptr("y")]
    if persistent:
        params += [ptr("mean"), ptr("rstd")]
    params += [extent("x", 1, "i32"), stride("x", 0, "i64"), stride("y", 0, "i64"),
               literal("f32", eps), literal("f32", shift)]
    name = "persistent_layer_norm" if persistent else "layer_norm"
    vector = pack == "v"
    bundle.add_config(cfg.params, [Launch(file, f"{name}_{short}_{pack}{vpt}", (m, 1, 1), (threads, 1, 1), params)],
                      tuning={"block": threads, "vectors_per_thread": vpt, "vector_bytes": 16 if vector else size,
                              "base_align_bytes": 16 if vector else size, "inner_stride": 1,
                              "variant": "persistent_layer_norm" if persistent else "layer_norm_legacy",
                              "strategy": "one block per row, row held in registers, one pass over x"})


@lru_cache(maxsize=None)
def toolchain() -> dict[str, str]:
    major, minor = load().version()
    tc = {"nvrtc": f"{major}.{minor}", "python": python_version()}
    pkg = package_version()
    if pkg:
        tc["nvidia-cuda-nvrtc"] = pkg
    return tc


FRONTEND_DEF = Frontend(FRONTEND, {"vector_add": export_vector_add, "rms_norm": export_rms_norm,
                                   "layer_norm_legacy": export_layer_norm_legacy},
                        lambda: dict(toolchain()))

if __name__ == "__main__":
    raise SystemExit(main(FRONTEND_DEF))
