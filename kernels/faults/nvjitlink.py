# SPDX-License-Identifier: Apache-2.0
"""nvJitLink 13.0 through ctypes (no GPU, no libcuda): links relocatable cubins with libraries
such as libcudadevrt.a into one executable cubin.

The library is libnvJitLink.so.13 from the nvidia-nvjitlink 13.0.x wheel that scripts/setup.sh
installs into .deps/cuda-13.0/nvidia/cu13/lib (root overridable with PORTBENCH_CUDA13_ROOT, as
for NVRTC). nvJitLink.h maps each API name to a versioned symbol (nvJitLinkCreate ->
__nvJitLinkCreate_13_0); those versioned symbols are what is called here, as a C program built
against the 13.0 header would. Every return code is checked; a failure raises with nvJitLink's
error and info logs.
"""
from __future__ import annotations

import ctypes
import sys
from functools import lru_cache
from pathlib import Path

from portbench_export import ExportError
from portbench_export.nvrtc import cuda13_root

# nvJitLinkInputType
INPUT_CUBIN = 1
INPUT_PTX = 2
INPUT_LTOIR = 3
INPUT_FATBIN = 4
INPUT_OBJECT = 5
INPUT_LIBRARY = 6

# nvJitLinkResult, in the order of nvJitLink.h 13.0 (there is no nvJitLinkGetErrorString).
RESULTS = ["NVJITLINK_SUCCESS", "NVJITLINK_ERROR_UNRECOGNIZED_OPTION", "NVJITLINK_ERROR_MISSING_ARCH",
           "NVJITLINK_ERROR_INVALID_INPUT", "NVJITLINK_ERROR_PTX_COMPILE", "NVJITLINK_ERROR_NVVM_COMPILE",
           "NVJITLINK_ERROR_INTERNAL", "NVJITLINK_ERROR_THREADPOOL", "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
           "NVJITLINK_ERROR_FINALIZE", "NVJITLINK_ERROR_NULL_INPUT", "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
           "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE", "NVJITLINK_ERROR_ARCH_MISMATCH",
           "NVJITLINK_ERROR_OUTDATED_LIBRARY", "NVJITLINK_ERROR_MISSING_FATBIN",
           "NVJITLINK_ERROR_UNRECOGNIZED_ARCH", "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
           "NVJITLINK_ERROR_LTO_NOT_ENABLED"]
API = "13_0"   # suffix of the versioned entry points in libnvJitLink.so.13 (nvJitLink.h 13.0)


class NvJitLinkError(ExportError):
    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log   # nvJitLink's error + info log; the command line prints it before the error


def result_name(rc: int) -> str:
    return RESULTS[rc] if 0 <= rc < len(RESULTS) else f"nvJitLinkResult {rc}"


class NvJitLink:
    def __init__(self, lib_path: Path):
        if not lib_path.is_file():
            raise NvJitLinkError(f"nvJitLink not found at {lib_path} (run scripts/setup.sh: "
                                 f"nvidia-nvjitlink in scripts/requirements-cuda13.0.txt)")
        try:
            self.lib = ctypes.CDLL(str(lib_path))
        except OSError as e:
            raise NvJitLinkError(f"cannot load {lib_path}: {e}") from None
        self.path = lib_path
        handle_p, size_p = ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)
        self._fn: dict[str, ctypes._CFuncPtr] = {}
        for name, args in {
            "nvJitLinkCreate": [handle_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_char_p)],
            "nvJitLinkDestroy": [handle_p],
            "nvJitLinkAddData": [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                                 ctypes.c_char_p],
            "nvJitLinkAddFile": [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p],
            "nvJitLinkComplete": [ctypes.c_void_p],
            "nvJitLinkGetLinkedCubinSize": [ctypes.c_void_p, size_p],
            "nvJitLinkGetLinkedCubin": [ctypes.c_void_p, ctypes.c_void_p],
            "nvJitLinkGetErrorLogSize": [ctypes.c_void_p, size_p],
            "nvJitLinkGetErrorLog": [ctypes.c_void_p, ctypes.c_char_p],
            "nvJitLinkGetInfoLogSize": [ctypes.c_void_p, size_p],
            "nvJitLinkGetInfoLog": [ctypes.c_void_p, ctypes.c_char_p],
        }.items():
            symbol = f"__{name}_{API}"
            try:
                f = getattr(self.lib, symbol)
            except AttributeError:
                raise NvJitLinkError(f"{lib_path} has no {symbol} (not an nvJitLink 13.x library)") from None
            f.restype, f.argtypes = ctypes.c_int, args
            self._fn[name] = f
        v = self.lib.nvJitLinkVersion
        v.restype, v.argtypes = ctypes.c_int, [ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]

    def _check(self, rc: int, what: str, log: str = "") -> None:
        if rc != 0:
            raise NvJitLinkError(f"{what}: {result_name(rc)} ({rc})", log)

    def version(self) -> tuple[int, int]:
        major, minor = ctypes.c_uint(), ctypes.c_uint()
        self._check(self.lib.nvJitLinkVersion(ctypes.byref(major), ctypes.byref(minor)), "nvJitLinkVersion")
        return major.value, minor.value

    def _log(self, handle: ctypes.c_void_p, kind: str) -> str:
        size = ctypes.c_size_t()
        self._check(self._fn[f"nvJitLinkGet{kind}LogSize"](handle, ctypes.byref(size)),
                    f"nvJitLinkGet{kind}LogSize")
        if size.value <= 1:
            return ""
        buf = ctypes.create_string_buffer(size.value)
        self._check(self._fn[f"nvJitLinkGet{kind}Log"](handle, buf), f"nvJitLinkGet{kind}Log")
        return buf.value.decode(errors="replace").strip()

    def _logs(self, handle: ctypes.c_void_p) -> str:
        parts = []
        for kind in ("Error", "Info"):
            try:
                text = self._log(handle, kind)
            except NvJitLinkError as e:   # keep the original failure; say why a log is missing
                text = f"({e})"
            if text:
                parts.append(f"nvJitLink {kind.lower()} log:\n{text}")
        return "\n".join(parts)

    def link(self, inputs: list[tuple[int, bytes | Path, str]], options: list[str]) -> tuple[bytes, str]:
        """Links `inputs` ((input type, bytes or a file path, name), in order) with `options`
        (e.g. ["-arch=sm_90"]); returns (the linked cubin, nvJitLink's info log)."""
        handle = ctypes.c_void_p()
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        self._check(self._fn["nvJitLinkCreate"](ctypes.byref(handle), len(options), opts),
                    f"nvJitLinkCreate {' '.join(options)}")
        # nvJitLink may keep pointers to the inputs and their names until the link completes:
        # every buffer handed to it stays referenced here until the handle is destroyed.
        keep: list[ctypes.Array] = []
        try:
            for kind, data, name in inputs:
                if isinstance(data, (bytes, bytearray)):
                    buf = ctypes.create_string_buffer(bytes(data), len(data))
                    cname = ctypes.create_string_buffer(name.encode())
                    keep += [buf, cname]
                    rc = self._fn["nvJitLinkAddData"](handle, kind, buf, len(data), cname)
                    self._check(rc, f"nvJitLinkAddData {name}", self._logs(handle))
                else:
                    path = Path(data)
                    if not path.is_file():
                        raise NvJitLinkError(f"nvJitLinkAddFile: {path} does not exist (run scripts/setup.sh)")
                    cpath = ctypes.create_string_buffer(str(path).encode())
                    keep.append(cpath)
                    rc = self._fn["nvJitLinkAddFile"](handle, kind, cpath)
                    self._check(rc, f"nvJitLinkAddFile {path}", self._logs(handle))
            rc = self._fn["nvJitLinkComplete"](handle)
            self._check(rc, f"nvJitLinkComplete {' '.join(options)}", self._logs(handle))
            size = ctypes.c_size_t()
            self._check(self._fn["nvJitLinkGetLinkedCubinSize"](handle, ctypes.byref(size)),
                        "nvJitLinkGetLinkedCubinSize")
            if size.value == 0:
                raise NvJitLinkError("nvJitLink produced an empty cubin", self._logs(handle))
            out = ctypes.create_string_buffer(size.value)
            self._check(self._fn["nvJitLinkGetLinkedCubin"](handle, out), "nvJitLinkGetLinkedCubin")
            return out.raw[: size.value], self._log(handle, "Info")
        finally:
            rc = self._fn["nvJitLinkDestroy"](ctypes.byref(handle))
            if sys.exc_info()[0] is None:   # never hide the failure that got us here
                self._check(rc, "nvJitLinkDestroy")


def lib_dir() -> Path:
    return cuda13_root() / "lib"


@lru_cache(maxsize=None)
def load() -> NvJitLink:
    return NvJitLink(lib_dir() / "libnvJitLink.so.13")


def package_version() -> str | None:
    """Version of the nvidia-nvjitlink wheel that provided the library (e.g. 13.0.88)."""
    for meta in cuda13_root().parents[1].glob("nvidia_nvjitlink-*.dist-info/METADATA"):
        for line in meta.read_text(errors="replace").splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
    return None
