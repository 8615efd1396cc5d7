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

from .cli import Frontend, Unsupported, main  # noqa: E402
from .manifest import Bundle, Launch, extent, literal, ptr, stride  # noqa: E402
from .nvrtc import include_dir, load, package_version  # noqa: E402
from .suite import Config  # noqa: E402
from .tools import kernels_dir, python_version  # noqa: E402

FRONTEND = "cuda_cpp"
ARCH = "sm_90"
EPS = 1e-5
DTYPES = {"float16": ("f16", 2), "bfloat16": ("bf16", 2), "float32": ("f32", 4)}


def _options(arch: str) -> list[str]:
    return [f"--gpu-architecture={arch}", "-default-device", "--std=c++17", f"-I{include_dir()}"]


def _compile_operator(bundle: Bundle, operator: str) -> str:
    file = f"{operator}.cubin"
    if file in bundle.cubins:
        return file
    src_path = kernels_dir() / FRONTEND / f"{operator}.cu"
    source = src_path.read_text(encoding="utf-8")
    nv = load()
    cubin, _ = nv.compile(source, f"{operator}.cu", _options(ARCH), "cubin")
    ptx, _ = nv.compile(source, f"{operator}.cu", _options(ARCH.replace("sm_", "compute_")), "ptx")
    bundle.add_cubin(file, cubin, {f"{operator}.ptx.txt": ptx.decode(),
                                   f"{operator}.cu.txt": source})
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


@lru_cache(maxsize=None)
def toolchain() -> dict[str, str]:
    major, minor = load().version()
    tc = {"nvrtc": f"{major}.{minor}", "python": python_version()}
    pkg = package_version()
    if pkg:
        tc["nvidia-cuda-nvrtc"] = pkg
    return tc


FRONTEND_DEF = Frontend(FRONTEND, {"vector_add": export_vector_add, "rms_norm": export_rms_norm},
                        lambda: dict(toolchain()))

if __name__ == "__main__":
    raise SystemExit(main(FRONTEND_DEF))
