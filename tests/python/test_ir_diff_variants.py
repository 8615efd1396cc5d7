# SPDX-License-Identifier: Apache-2.0
"""portbench ir-diff on real exported variants: configs/tuning/ir_diff_rms_norm.json exported by
scripts/tune_variants.sh with the cuTile Python exporter's tuning overrides (occupancy, block
rows, a looping tile), each diffed against the exporter's own choice. Every variant changes one
thing; the diff must give FAIL_STRUCTURAL and name exactly that.

Binary: $PORTBENCH_BIN, else the newest build/*/harness/cli/portbench."""
from __future__ import annotations

import glob
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "configs" / "tuning" / "ir_diff_rms_norm.json"


def portbench() -> str:
    if os.environ.get("PORTBENCH_BIN"):
        return os.environ["PORTBENCH_BIN"]
    found = sorted(glob.glob(str(ROOT / "build" / "*" / "harness" / "cli" / "portbench")), key=os.path.getmtime)
    if not found:
        pytest.skip("no portbench built (set PORTBENCH_BIN or build under build/)")
    return found[-1]


@pytest.fixture(scope="module")
def variants(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ir_diff_variants")
    env = dict(os.environ, CUDA_TILE_CACHE_DIR=str(out / "cache"))
    r = subprocess.run(["bash", str(ROOT / "scripts" / "tune_variants.sh"), "export", str(SPEC), str(out), "python"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def ir_diff(base: Path, variant: Path) -> tuple[int, dict]:
    r = subprocess.run([portbench(), "ir-diff", str(base), str(variant), "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    assert list(doc)[0] == "verdict"          # stage outputs lead with their verdict
    return r.returncode, doc


def differences(doc: dict) -> list[dict]:
    (bundle,) = doc["bundles"]
    (config,) = bundle["configs"]
    return config["differences"]


def test_base_against_itself_is_pass(variants):
    rc, doc = ir_diff(variants / "base" / "rms_norm", variants / "base" / "rms_norm")
    assert (rc, doc["verdict"], differences(doc)) == (0, "PASS", [])


def test_occupancy_override_is_a_hint_difference(variants):
    rc, doc = ir_diff(variants / "base" / "rms_norm", variants / "occ2" / "rms_norm")
    assert (rc, doc["verdict"]) == (1, "FAIL_STRUCTURAL")
    assert [(d["kind"], d["reference"], d["port"]) for d in differences(doc)] == \
        [("hint", "occupancy = 4", "occupancy = 2")]


def test_block_rows_override_is_a_tile_shape_difference(variants):
    rc, doc = ir_diff(variants / "base" / "rms_norm", variants / "rows4" / "rms_norm")
    assert (rc, doc["verdict"]) == (1, "FAIL_STRUCTURAL")
    diffs = differences(doc)
    assert {d["kind"] for d in diffs} == {"tile_shape"}
    assert ("load view weak 8x1024xf16 padding=zero", "load view weak 4x1024xf16 padding=zero") in \
        [(d["reference"], d["port"]) for d in diffs]
    assert all(d["severity"] == "structural" for d in diffs)


def test_looping_tile_is_a_loop_nest_difference(variants):
    rc, doc = ir_diff(variants / "base" / "rms_norm", variants / "loop512" / "rms_norm")
    assert (rc, doc["verdict"]) == (1, "FAIL_STRUCTURAL")
    flow = [d for d in differences(doc) if d["kind"] == "control_flow"]
    assert len(flow) == 1
    assert flow[0]["reference"] == "entry{}"
    assert flow[0]["port"].startswith("entry{for(")
