# SPDX-License-Identifier: Apache-2.0
"""scripts/apply_tuning.py on a real exported bundle with declared variants (the smoke export's
tilegym rope, whose autotuner occupancies are variants)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "apply_tuning.py"
SOURCE = REPO / "bundles" / "tilegym" / "rope"


def apply(record, *bundles):
    return subprocess.run([sys.executable, str(SCRIPT), str(record), *map(str, bundles)], capture_output=True, text=True)


@pytest.mark.skipif(not (SOURCE / "manifest.json").exists(), reason="bundles/tilegym/rope not exported (scripts/export_bundles.sh)")
def test_the_record_variant_becomes_the_chosen_plan_and_a_linked_copy_keeps_its_manifest(tmp_path):
    linked = tmp_path / "rope"
    shutil.copytree(SOURCE, linked, copy_function=os.link)
    before = json.loads((SOURCE / "manifest.json").read_text())
    config = before["configs"][0]
    other = next(v for v in config["variants"] if v["name"] != config["tuning"]["variant"])
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"schema": "portbench.tuning-record/1", "choices": [
        {"op": "rope", "params": config["params"], "variant": other["name"]},
        {"op": "rope", "params": dict(config["params"], bsz=999), "variant": other["name"]}]}))
    r = apply(record, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "1 of" in r.stdout and "1 choices" in r.stderr
    after = json.loads((linked / "manifest.json").read_text())["configs"][0]
    assert after["tuning"]["variant"] == other["name"] and after["launches"] == other["launches"]
    assert after["variants"] == config["variants"]
    assert json.loads((SOURCE / "manifest.json").read_text()) == before   # the hard link was not written through

    record.write_text(json.dumps({"schema": "portbench.tuning-record/1", "choices": [
        {"op": "rope", "params": config["params"], "variant": "occupancy=99"}]}))
    r = apply(record, tmp_path)
    assert r.returncode == 1 and "no variant 'occupancy=99'" in r.stderr
