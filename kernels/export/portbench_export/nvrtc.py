# SPDX-License-Identifier: Apache-2.0
"""NVRTC 13.0 through ctypes (no GPU, no libcuda): source -> CUBIN / PTX.

The library and headers are the CUDA 13.0 wheels that scripts/setup.sh installs into
.deps/cuda-13.0/nvidia/cu13/{lib,include} (override the root with PORTBENCH_CUDA13_ROOT).
Every return code is checked; a failed compile raises with the program log.
"""
from __future__ import annotations

import ctypes
import os
from functools import lru_cache
from pathlib import Path

from . import ExportError
from .tools import REPO_ROOT


def cuda13_root() -> Path:
    return Path(os.environ.get("PORTBENCH_CUDA13_ROOT", REPO_ROOT / ".deps" / "cuda-13.0" / "nvidia" / "cu13"))


def include_dir() -> Path:
    return cuda13_root() / "include"


class NvrtcError(ExportError):
    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log   # the NVRTC program log; the command line prints it before its error line


class Nvrtc:
    def __init__(self, lib_path: Path):
        if not lib_path.is_file():
            raise NvrtcError(f"NVRTC not found at {lib_path} (run scripts/setup.sh)")
        try:
            # libnvrtc dlopen()s libnvrtc-builtins.so.<major>.<minor> by name and has no RUNPATH;
            # loading it first (by path, globally) lets that lookup find it without LD_LIBRARY_PATH.
            for builtins in sorted(lib_path.parent.glob("libnvrtc-builtins.so.*")):
                if ".alt." not in builtins.name:
                    ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
            self.lib = ctypes.CDLL(str(lib_path))
        except OSError as e:
            raise NvrtcError(f"cannot load {lib_path}: {e}") from None
        L = self.lib
        c_int_p, c_size_p, prog_p = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_size_t), \
            ctypes.POINTER(ctypes.c_void_p)
        L.nvrtcGetErrorString.restype = ctypes.c_char_p
        L.nvrtcGetErrorString.argtypes = [ctypes.c_int]
        for name, args in {
            "nvrtcVersion": [c_int_p, c_int_p],
            "nvrtcCreateProgram": [prog_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                   ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p)],
            "nvrtcDestroyProgram": [prog_p],
            "nvrtcCompileProgram": [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
            "nvrtcGetProgramLogSize": [ctypes.c_void_p, c_size_p],
            "nvrtcGetProgramLog": [ctypes.c_void_p, ctypes.c_char_p],
            "nvrtcGetCUBINSize": [ctypes.c_void_p, c_size_p],
            "nvrtcGetCUBIN": [ctypes.c_void_p, ctypes.c_char_p],
            "nvrtcGetPTXSize": [ctypes.c_void_p, c_size_p],
            "nvrtcGetPTX": [ctypes.c_void_p, ctypes.c_char_p],
        }.items():
            f = getattr(L, name)
            f.restype, f.argtypes = ctypes.c_int, args

    def _check(self, rc: int, what: str, log: str = "") -> None:
        if rc != 0:
            msg = self.lib.nvrtcGetErrorString(rc).decode(errors="replace")
            raise NvrtcError(f"{what}: {msg} ({rc})", log)

    def version(self) -> tuple[int, int]:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._check(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        return major.value, minor.value

    def compile(self, source: str, name: str, options: list[str], output: str) -> tuple[bytes, str]:
        """Compiles `source`; returns (the CUBIN or PTX bytes, the program log).

        output: "cubin" (needs --gpu-architecture=sm_XX) or "ptx" (compute_XX)."""
        prog = ctypes.c_void_p()
        self._check(self.lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(),
                                                0, None, None), f"nvrtcCreateProgram {name}")
        try:
            opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
            rc = self.lib.nvrtcCompileProgram(prog, len(options), opts)
            size = ctypes.c_size_t()
            self._check(self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size)), "nvrtcGetProgramLogSize")
            buf = ctypes.create_string_buffer(size.value)
            self._check(self.lib.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
            log = buf.value.decode(errors="replace").strip()
            self._check(rc, f"nvrtcCompileProgram {name} {' '.join(options)}", log)
            get_size, get = ((self.lib.nvrtcGetCUBINSize, self.lib.nvrtcGetCUBIN) if output == "cubin"
                             else (self.lib.nvrtcGetPTXSize, self.lib.nvrtcGetPTX))
            self._check(get_size(prog, ctypes.byref(size)), f"nvrtcGet{output.upper()}Size {name}")
            if size.value == 0:
                raise NvrtcError(f"{name}: NVRTC produced an empty {output}")
            out = ctypes.create_string_buffer(size.value)
            self._check(get(prog, out), f"nvrtcGet{output.upper()} {name}")
            data = out.raw[: size.value]
            if output == "ptx":
                data = data.rstrip(b"\x00")
            return data, log
        finally:
            self._check(self.lib.nvrtcDestroyProgram(ctypes.byref(prog)), "nvrtcDestroyProgram")


@lru_cache(maxsize=None)
def load() -> Nvrtc:
    return Nvrtc(cuda13_root() / "lib" / "libnvrtc.so.13")


def package_version() -> str | None:
    """Version of the nvidia-cuda-nvrtc wheel that provided the library (e.g. 13.0.88)."""
    for meta in cuda13_root().parents[1].glob("nvidia_cuda_nvrtc-*.dist-info/METADATA"):
        for line in meta.read_text(errors="replace").splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
    return None
