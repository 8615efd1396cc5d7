# SPDX-License-Identifier: Apache-2.0
"""The results layout as documented in docs/results-layout.md, checked with h5py and pandas on
files written by portbench's own writer (through the test tool portbench_synth_results).

Binaries: $PORTBENCH_SYNTH_BIN and $PORTBENCH_BIN (ctest sets them), else the newest
portbench_synth_results under build/*/ and the portbench of that same build. Run: .venv/bin/python -m pytest tests/python/test_results_layout.py
"""
from __future__ import annotations

import glob
import json
import math
import os
import re
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "results-layout.md"


def find_binary(env: str, pattern: str) -> str:
    if os.environ.get(env):
        return os.environ[env]
    found = sorted(glob.glob(str(ROOT / "build" / "*" / pattern)), key=os.path.getmtime)
    if not found:
        pytest.skip(f"no {pattern} built (set {env} or build under build/)")
    return found[-1]


@pytest.fixture(scope="module")
def synth() -> str:
    return find_binary("PORTBENCH_SYNTH_BIN", "tests/cli/results/portbench_synth_results")


@pytest.fixture(scope="module")
def portbench(synth) -> str:
    if os.environ.get("PORTBENCH_BIN"):
        return os.environ["PORTBENCH_BIN"]
    # The portbench of the same build as the synthesizer, not another developer's build.
    candidate = Path(synth).parents[3] / "harness" / "cli" / "portbench"
    if not candidate.exists():
        pytest.skip(f"no portbench next to {synth}")
    return str(candidate)


def write(synth: str, path: Path, *args: str) -> None:
    subprocess.run([synth, str(path), "--overwrite", *args], check=True, capture_output=True)


def doc_example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "docs/results-layout.md should hold exactly one python block"
    return blocks[0]


def run_example(path: Path) -> dict:
    code = doc_example().replace('path = "results/run.h5"', f"path = {str(path)!r}")
    scope: dict = {}
    exec(compile(code, str(DOC), "exec"), scope)
    return scope


def test_documented_example_reproduces_the_report(tmp_path, synth, portbench):
    path = tmp_path / "run.h5"
    write(synth, path, "--configs", "24", "--operators", "4", "--runs", "3",
          "--min-samples", "30", "--max-samples", "60")
    scope = run_example(path)
    runs, best, geomean = scope["runs"], scope["best"], scope["geomean"]
    assert len(runs) == 24 * 2 * 3
    assert set(runs.role) == {"reference", "port"}
    assert (runs.timing == "VALID").all() and (runs.numerics == "PASS").all()
    assert len(scope["samples"]) == runs.iloc[0]["count"]

    report = json.loads(subprocess.run([portbench, "report", str(path), "--format", "json"],
                                       check=True, capture_output=True, text=True).stdout)
    for op in report["operators"]:
        assert math.isclose(geomean[op["operator"]], op["geomean"]["estimate"], rel_tol=1e-9)
    by_id = {c["id"]: c for c in report["configs"]}
    for (operator, config), row in best.iterrows():
        assert math.isclose(row["ratio"], by_id[config]["ratio"], rel_tol=1e-9)


def test_types_units_and_provenance(tmp_path, synth):
    path = tmp_path / "types.h5"
    write(synth, path, "--configs", "3", "--operators", "3", "--runs", "2",
          "--min-samples", "10", "--max-samples", "20", "--fail-config", "1")
    with h5py.File(path, "r") as f:
        a = f.attrs
        assert a["schema"] == "portbench.results/1"
        assert isinstance(a["gpu_name"], str) and a["gpu_name"] == "NVIDIA H200"
        assert a["sm_clock_mhz"] == 1980 and a["seeds"].dtype == np.int64
        assert isinstance(json.loads(a["bundles"]), list)
        configs = sorted((cfg for op in f["configs"].values() for cfg in op.values()),
                         key=lambda cfg: cfg.attrs["ordinal"])
        assert len(configs) == 3
        for cfg in configs:
            assert json.loads(cfg.attrs["params"])["idx"] >= 0
            run = cfg["port"]["run_1"]
            assert run["time_ns"].dtype == np.int64 and run["time_ns"].attrs["units"] == "ns"
            assert run["sm_clock_mhz"].dtype == np.int32 and run["sm_clock_mhz"].attrs["units"] == "MHz"
            assert run["event_time_ns"].attrs["units"] == "ns"
            t = run["time_ns"][:]
            assert len(t) == run.attrs["count"] > 0 and (t > 0).all()
            assert run.attrs["median_ns"] == np.median(t)
        failed = configs[1]["port"]["run_0"]
        assert failed.attrs["error"].startswith("CUDA_ERROR_ILLEGAL_ADDRESS")
        assert failed.attrs["timing"] == "INVALID_NO_SAMPLES"
        assert failed["time_ns"].shape == (0,) and math.isnan(failed.attrs["median_ns"])


def test_killed_writer_leaves_a_file_h5py_reads(tmp_path, synth):
    path = tmp_path / "killed.h5"
    write(synth, path, "--configs", "6", "--operators", "2", "--runs", "2",
          "--min-samples", "10", "--max-samples", "20", "--exit-after", "9")
    scope = run_example(path)
    assert len(scope["runs"]) == 9
