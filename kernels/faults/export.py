#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fault bundle exporter: deliberately broken vector_add ports for the harness's own GPU tests.

    .venv/bin/python kernels/faults/export.py --suite configs/faults.json --out bundles/faults

writes ONE bundle, <out>/vector_add/ (frontend "faults", operator "vector_add", arch sm_90), whose
configurations each launch a different kernel: the eight faults of docs/faults.md and the correct
kernel, side by side, so that one harness run holds faulty and healthy configurations. Which
kernel a configuration uses is fixed by its n (PLAN below) and recorded in its `tuning` as
{"fault": "<name>"} ("none" for the correct kernel). Every entry has the ABI and launch shape of
kernels/cuda_cpp/vector_add.cu (`ptr(x) ptr(y) ptr(out) ext(x,0,i64)`, block 256,
grid cdiv(n, 1024)), so the ordinary cuda_cpp bundle of the same suite is the reference side
(kernels/faults/export.sh exports it to bundles/faults_reference).

Two cubins:
- faults.cubin: kernels/faults/faults.cu, NVRTC 13.0 whole-program (as the cuda_cpp exporter).
- extra_stream_work.cubin: kernels/faults/extra_stream_work.cu, which launches a child kernel from
  the device (dynamic parallelism): NVRTC 13.0 with -rdc=true gives a relocatable cubin, and
  nvJitLink 13.0 links it with libcudadevrt.a (both from .deps/cuda-13.0) into an executable one.
  The export checks that the linked entry really relocates against the device runtime's launch.

The suite reading, manifest writing, cubin checks and command line are portbench_export's (the
same `Frontend` / `main` as every exporter). No GPU and no libcuda are needed.
"""
from __future__ import annotations

import os
import re
import sys
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "kernels" / "export"))
sys.path.insert(0, str(HERE))
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

from portbench_export import ExportError  # noqa: E402
from portbench_export.cli import Frontend, Unsupported, main  # noqa: E402
from portbench_export.manifest import Bundle, Launch, extent, ptr  # noqa: E402
from portbench_export.nvrtc import cuda13_root, include_dir  # noqa: E402
from portbench_export.nvrtc import load as load_nvrtc  # noqa: E402
from portbench_export.nvrtc import package_version as nvrtc_package_version  # noqa: E402
from portbench_export.suite import Config  # noqa: E402
from portbench_export.tools import find_tool, kernels_dir, python_version, run_tool  # noqa: E402

import nvjitlink  # noqa: E402  (kernels/faults/nvjitlink.py)

FRONTEND = "faults"
ARCH = "sm_90"
BLOCK, PER_THREAD = 256, 4

# The faults, in the order docs/faults.md describes them; "none" is the correct kernel.
FAULTS = ("illegal_address", "trap", "endless_loop", "writes_nothing", "writes_part",
          "extra_stream_work", "stale_result", "writes_nan")
CORRECT = "none"

# configs/faults.json: n = BASE + k * STEP for the k-th kernel below, k = 1..11 (k starts at 1 so
# that no n equals the smoke suite's 1048576: config ids stay unique across suites). Correct
# kernels first, in the middle and last, so a harness run interleaves healthy and faulty ones.
BASE, STEP = 1 << 20, 256
ORDER = (CORRECT, "illegal_address", "writes_nothing", "trap", "writes_part", CORRECT,
         "endless_loop", "extra_stream_work", "stale_result", "writes_nan", CORRECT)
PLAN = {BASE + k * STEP: fault for k, fault in enumerate(ORDER, start=1)}

DP_FAULT = "extra_stream_work"
DP_CHILD = "extra_stream_work_child"
# The device runtime's launch entry points a device-side <<<>>> compiles to (CDP2, CUDA >= 12).
DEVICE_LAUNCH_SYMBOLS = ("__cudaCDP2LaunchDeviceV2", "cudaLaunchDeviceV2")


def entry_name(fault: str) -> str:
    return "vector_add_correct" if fault == CORRECT else f"vector_add_{fault}"


def cubin_file(fault: str) -> str:
    return f"{DP_FAULT}.cubin" if fault == DP_FAULT else "faults.cubin"


def _options(arch: str, rdc: bool = False) -> list[str]:
    opts = [f"--gpu-architecture={arch}", "-default-device", "--std=c++17", f"-I{include_dir()}"]
    return opts + ["-rdc=true"] if rdc else opts


def _source(stem: str) -> str:
    return (kernels_dir() / FRONTEND / f"{stem}.cu").read_text(encoding="utf-8")


def cudadevrt_path() -> Path:
    return cuda13_root() / "lib" / "libcudadevrt.a"


def rela_targets(elf_text: str, function: str) -> set[str]:
    """Symbols the relocation section of `function` (`.section .rela.text.<function>` in
    `cuobjdump -elf` output) refers to: what its code calls or takes the address of."""
    out: set[str] = set()
    inside = False
    for line in elf_text.splitlines():
        if line.startswith(".section"):
            inside = line.split()[1] == f".rela.text.{function}" if len(line.split()) > 1 else False
            continue
        if inside:
            parts = line.split()
            if len(parts) >= 3 and parts[0].startswith("0x") and parts[2].startswith("R_CUDA_"):
                out.add(parts[1])
            elif not line.strip():
                inside = False
    return out


def defined_symbols(symbols_text: str) -> set[str]:
    """Names the cubin defines, from `cuobjdump -symbols` output (undefined ones carry a U)."""
    out = set()
    for line in symbols_text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0].startswith("STT_") and "U" not in parts[3:-1]:
            out.add(parts[-1])
    return out


def check_device_launch(cubin: bytes | Path, entry: str) -> set[str]:
    """Raises unless the cubin is a linked executable in which `entry` relocates against the
    device runtime's launch function (defined in the cubin: libcudadevrt was linked) and the
    child kernel; returns the relocation targets of `entry`."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(cubin) if isinstance(cubin, Path) else Path(tmp) / "k.cubin"
        if not isinstance(cubin, Path):
            path.write_bytes(cubin)
        tool = find_tool("cuobjdump")
        elf = run_tool([tool, "-elf", path], "cuobjdump -elf")
        symbols = run_tool([tool, "-symbols", path], "cuobjdump -symbols")
    if not re.search(r"^64-?bit\s+elf:.*\btype=ET_EXEC\b", elf, re.I | re.M):
        raise ExportError(f"{entry}: the linked cubin is not an ET_EXEC image")
    targets = rela_targets(elf, entry)
    launch = targets & set(DEVICE_LAUNCH_SYMBOLS)
    if not launch or DP_CHILD not in targets:
        raise ExportError(f"{entry}: the linked cubin has no device-side launch of {DP_CHILD} "
                          f"(relocations of .text.{entry}: {sorted(targets)})")
    if not launch <= defined_symbols(symbols):
        raise ExportError(f"{entry}: {sorted(launch)} undefined in the linked cubin: libcudadevrt not linked")
    return targets


def _compile_faults(bundle: Bundle) -> str:
    file = "faults.cubin"
    if file not in bundle.cubins:
        source, nv = _source("faults"), load_nvrtc()
        cubin, _ = nv.compile(source, "faults.cu", _options(ARCH), "cubin")
        ptx, _ = nv.compile(source, "faults.cu", _options(ARCH.replace("sm_", "compute_")), "ptx")
        bundle.add_cubin(file, cubin, {"faults.ptx.txt": ptx.decode(), "faults.cu.txt": source})
    return file


def _compile_dynamic_parallelism(bundle: Bundle) -> str:
    """Relocatable cubin from NVRTC (-rdc=true), linked with libcudadevrt.a by nvJitLink."""
    file = f"{DP_FAULT}.cubin"
    if file not in bundle.cubins:
        source, nv = _source(DP_FAULT), load_nvrtc()
        name = f"{DP_FAULT}.cu"
        relocatable, _ = nv.compile(source, name, _options(ARCH, rdc=True), "cubin")
        ptx, _ = nv.compile(source, name, _options(ARCH.replace("sm_", "compute_"), rdc=True), "ptx")
        devrt = cudadevrt_path()
        if not devrt.is_file():
            raise ExportError(f"{devrt} not found (nvidia-cuda-runtime 13.0 wheel; run scripts/setup.sh)")
        linked, _ = nvjitlink.load().link(
            [(nvjitlink.INPUT_CUBIN, relocatable, f"{DP_FAULT}.rdc.cubin"),
             (nvjitlink.INPUT_LIBRARY, devrt, "libcudadevrt.a")],
            [f"-arch={ARCH}"])
        check_device_launch(linked, entry_name(DP_FAULT))
        bundle.add_cubin(file, linked, {f"{DP_FAULT}.ptx.txt": ptx.decode(), f"{DP_FAULT}.cu.txt": source})
    return file


def export_vector_add(cfg: Config, bundle: Bundle) -> None:
    n = cfg.integer("n")
    dtype = cfg.text("dtype")
    if dtype != "float32":
        raise Unsupported(f"dtype '{dtype}' not covered by the fault kernels (float32 only)")
    fault = PLAN.get(n)
    if fault is None:
        raise ExportError(f"n={n} is not in the fault plan: each n of configs/faults.json selects a "
                          f"kernel (kernels/faults/export.py PLAN: {sorted(PLAN)})")
    file = _compile_dynamic_parallelism(bundle) if fault == DP_FAULT else _compile_faults(bundle)
    assert file == cubin_file(fault)
    grid = -(-n // (BLOCK * PER_THREAD))
    params = [ptr("x"), ptr("y"), ptr("out"), extent("x", 0, "i64")]
    tuning = {"fault": fault, "block": BLOCK, "elements_per_thread": PER_THREAD, "base_align_bytes": 16}
    if fault == DP_FAULT:
        tuning["device_launch"] = f"{DP_CHILD}<<<1, 32, 0, cudaStreamFireAndForget>>>, 20 us"
    bundle.add_config(cfg.params, [Launch(file, entry_name(fault), (grid, 1, 1), (BLOCK, 1, 1), params)],
                      tuning=tuning)


def _wheel_version(dist: str) -> str | None:
    for meta in cuda13_root().parents[1].glob(f"{dist}-*.dist-info/METADATA"):
        for line in meta.read_text(errors="replace").splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
    return None


@lru_cache(maxsize=None)
def toolchain() -> dict[str, str]:
    major, minor = load_nvrtc().version()
    jmajor, jminor = nvjitlink.load().version()
    tc = {"nvrtc": f"{major}.{minor}", "nvjitlink": f"{jmajor}.{jminor}", "python": python_version()}
    for key, version in (("nvidia-cuda-nvrtc", nvrtc_package_version()),
                         ("nvidia-nvjitlink", nvjitlink.package_version()),
                         ("cudadevrt", _wheel_version("nvidia_cuda_runtime"))):
        if version:
            tc[key] = version
    return tc


FRONTEND_DEF = Frontend(FRONTEND, {"vector_add": export_vector_add}, lambda: dict(toolchain()))

if __name__ == "__main__":
    raise SystemExit(main(FRONTEND_DEF))
