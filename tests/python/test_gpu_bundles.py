# SPDX-License-Identifier: Apache-2.0
"""On a machine with a CUDA driver: every exported bundle (smoke and edge suites) is loaded and
launched through the driver API exactly as its manifest says, and checked against an fp64
reference (gpu_launch.py). Skipped, with the reason, where libcuda cannot be loaded."""
from __future__ import annotations

import ctypes

import pytest

from conftest import FRONTENDS


def _driver_error() -> str | None:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return str(e)
    return None


_NO_DRIVER = _driver_error()
GPU_LAUNCH_OPS = ("vector_add", "rms_norm")   # operators gpu_launch.py has a reference for
# Decided before any fixture runs, so a CPU machine does not export for nothing.
pytestmark = pytest.mark.skipif(_NO_DRIVER is not None,
                                reason=f"no CUDA driver here ({_NO_DRIVER}); run on the GPU host")


@pytest.mark.parametrize("suite", ["smoke", "edge"])
@pytest.mark.parametrize("fe", FRONTENDS)
def test_bundles_compute_the_operator_on_gpu(fe, suite, smoke_runs, edge_runs):
    import gpu_launch
    cuda = gpu_launch.Cuda()
    runs = smoke_runs if suite == "smoke" else edge_runs
    assert runs[fe].rc == 0, runs[fe].stderr
    for bundle in sorted(p.parent for p in runs[fe].out.glob("*/manifest.json")):
        if bundle.name not in GPU_LAUNCH_OPS:   # the others are checked by `portbench check`
            continue
        for r in gpu_launch.run_bundle(cuda, bundle, timing_reps=1):
            assert r["verdict"] == "pass", (bundle.name, r)
