# SPDX-License-Identifier: Apache-2.0
"""Fixtures for the exporter tests (run with .venv/bin/python -m pytest tests/python).

Every front end is exported once per session for the smoke suite and for data/edge.json, into a
temp folder, through the real command line (a subprocess with no GPU visible) and with private,
initially empty cuTile and Triton caches, so each cubin is really compiled in this run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "kernels" / "export"))

FRONTENDS = ("cutile_python", "triton", "cuda_cpp")
SMOKE = REPO / "configs" / "smoke.json"
EDGE = Path(__file__).parent / "data" / "edge.json"


@dataclass
class Run:
    rc: int
    stdout: str
    stderr: str
    out: Path


@pytest.fixture(scope="session")
def export_env(tmp_path_factory) -> dict[str, str]:
    cache = tmp_path_factory.mktemp("caches")
    env = dict(os.environ)
    env.update({
        "CUDA_VISIBLE_DEVICES": "",
        "PYTHONPATH": str(REPO / "kernels" / "export"),
        "CUDA_TILE_CACHE_DIR": str(cache / "cutile"),
        "TRITON_CACHE_DIR": str(cache / "triton"),
        "HOME": str(cache / "home"),             # nothing may land in the real home either
    })
    env.pop("PORTBENCH_KERNELS_DIR", None)
    env.pop("PORTBENCH_EXPORT_VERBOSE", None)
    return env


@pytest.fixture(scope="session")
def run_export(export_env):
    def run(frontend: str, suite: Path | str, out: Path, **extra_env: str) -> Run:
        env = dict(export_env, **extra_env)
        r = subprocess.run([sys.executable, "-m", f"portbench_export.{frontend}", "--suite", str(suite),
                            "--out", str(out)], capture_output=True, text=True, env=env, cwd=REPO,
                           timeout=900)
        return Run(r.returncode, r.stdout, r.stderr, out)
    return run


def _session_export(tmp_path_factory, run_export, suite: Path, name: str) -> dict[str, Run]:
    root = tmp_path_factory.mktemp(name)
    runs = {}
    for fe in FRONTENDS:
        runs[fe] = run_export(fe, suite, root / fe)
    return runs


@pytest.fixture(scope="session")
def smoke_runs(tmp_path_factory, run_export) -> dict[str, Run]:
    return _session_export(tmp_path_factory, run_export, SMOKE, "smoke")


@pytest.fixture(scope="session")
def edge_runs(tmp_path_factory, run_export) -> dict[str, Run]:
    return _session_export(tmp_path_factory, run_export, EDGE, "edge")


def manifests(out: Path) -> dict[str, dict]:
    """operator -> manifest of every bundle under an exporter's output folder."""
    return {p.parent.name: json.loads(p.read_text()) for p in sorted(out.glob("*/manifest.json"))}


def suite_configs(suite: Path, op: str) -> list[dict]:
    return [c["params"] for c in json.loads(suite.read_text())["configs"] if c["op"] == op]
