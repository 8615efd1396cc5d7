# SPDX-License-Identifier: Apache-2.0
"""Finding the pinned command-line tools (tileiras, tileirdisasm, cuobjdump, nvdisasm) and their
versions. They come from the nvidia-* wheels in the export venv (nvidia/cu13/bin)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

from . import ExportError

REPO_ROOT = Path(__file__).resolve().parents[3]


def kernels_dir() -> Path:
    """kernels/ of the repository; PORTBENCH_KERNELS_DIR points the exporters at another tree
    with the same layout (<dir>/<frontend>/<operator>.py|.cu), e.g. fault kernels in tests."""
    return Path(os.environ.get("PORTBENCH_KERNELS_DIR", REPO_ROOT / "kernels"))


@lru_cache(maxsize=None)
def cu13_bin() -> Path | None:
    """nvidia/cu13/bin of the running interpreter's environment, if the wheels are installed."""
    for key in ("purelib", "platlib"):
        p = Path(sysconfig.get_paths()[key]) / "nvidia" / "cu13" / "bin"
        if p.is_dir():
            return p
    return None


@lru_cache(maxsize=None)
def find_tool(name: str) -> Path:
    b = cu13_bin()
    if b is not None and (b / name).is_file():
        return b / name
    found = shutil.which(name)
    if found:
        return Path(found)
    raise ExportError(f"tool '{name}' not found (install scripts/requirements-export.txt into .venv)")


def tool_env() -> dict[str, str]:
    """Environment for cuobjdump: nvdisasm (needed by -sass) on PATH."""
    env = dict(os.environ)
    b = cu13_bin()
    if b is not None:
        env["PATH"] = f"{b}{os.pathsep}{env.get('PATH', '')}"
    return env


def run_tool(args: list[str | Path], what: str) -> str:
    try:
        r = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=tool_env(),
                           timeout=600)
    except OSError as e:
        raise ExportError(f"{what}: cannot run {args[0]}: {e}") from None
    if r.returncode != 0:
        msg = (r.stderr or r.stdout).strip().splitlines()
        raise ExportError(f"{what}: {Path(str(args[0])).name} exited {r.returncode}: "
                          f"{msg[-1] if msg else 'no output'}")
    return r.stdout


@lru_cache(maxsize=None)
def cuda_tool_version(name: str) -> str:
    """"13.4.92" from the "Cuda compilation tools, release 13.4, V13.4.92" line of --version."""
    out = run_tool([find_tool(name), "--version"], f"{name} --version")
    m = re.search(r"\bV(\d+\.\d+\.\d+)", out)
    if not m:
        raise ExportError(f"{name} --version: no version in output")
    return m.group(1)


def python_version() -> str:
    return ".".join(map(str, sys.version_info[:3]))
