# SPDX-License-Identifier: Apache-2.0
"""scripts/gpu_target.py: the target description of the card a device call got, so a tuning record
is made for the card it was measured on."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_target.py"


def gpu_target(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_each_repository_description_is_found_by_its_own_card():
    for f in sorted(SCRIPT.parents[1].joinpath("configs", "targets").glob("*.json")):
        doc = json.loads(f.read_text())
        r = gpu_target(doc["gpu"])
        assert r.returncode == 0 and r.stdout == f"{doc['name']}\t{doc['gpu']}\n", (f, r.stderr)


def test_a_card_is_its_name_or_it_and_further_words(tmp_path):
    (tmp_path / "x200.json").write_text(json.dumps({"name": "x200", "gpu": "NVIDIA X200"}))
    (tmp_path / "x20.json").write_text(json.dumps({"name": "x20", "gpu": "NVIDIA X20"}))
    assert gpu_target("NVIDIA X200 NVL", "--dir", str(tmp_path)).stdout == "x200\tNVIDIA X200\n"
    assert gpu_target("NVIDIA X20", "--dir", str(tmp_path)).stdout == "x20\tNVIDIA X20\n"
    r = gpu_target("NVIDIA X2000", "--dir", str(tmp_path))
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"gpu_target: {tmp_path}: no target description for the GPU 'NVIDIA X2000'\n"
    # --target names the description whatever the device (portbench tune --gpu then refuses another card).
    assert gpu_target("NVIDIA X20", "--target", "x200", "--dir", str(tmp_path)).stdout == "x200\tNVIDIA X200\n"
    assert gpu_target("NVIDIA X20", "--target", "b9", "--dir", str(tmp_path)).returncode == 1


def test_a_description_without_a_card_is_one_line_naming_it(tmp_path):
    (tmp_path / "bad.json").write_text(json.dumps({"name": "bad"}))
    r = gpu_target("NVIDIA H200", "--dir", str(tmp_path))
    assert r.returncode == 1 and r.stderr.startswith(f"gpu_target: {tmp_path / 'bad.json'}: no \"name\" and \"gpu\"")
    assert len(r.stderr.splitlines()) == 1
