# SPDX-License-Identifier: Apache-2.0
"""scripts/merge_tuning_records.py: a later record's choice replaces an earlier one for the same
configuration and leaves not_measured; records of another front end, schema or card are refused."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "merge_tuning_records.py"


def record(choices, not_measured=(), frontend="tilegym", gpu="NVIDIA H200"):
    return {"schema": "portbench.tuning-record/1", "frontend": frontend, "target": "h200", "gpu": gpu, "made_by": "test",
            "date": "2026-12-02", "choices": choices, "not_measured": list(not_measured)}


def merge(tmp_path, *records):
    paths = []
    for i, r in enumerate(records):
        paths.append(tmp_path / f"r{i}.json")
        paths[-1].write_text(json.dumps(r))
    out = tmp_path / "out.json"
    r = subprocess.run([sys.executable, str(SCRIPT), *map(str, paths), "-o", str(out)], capture_output=True, text=True)
    return r, (json.loads(out.read_text()) if r.returncode == 0 else None)


def test_later_choices_win_and_leave_not_measured(tmp_path):
    a = {"op": "matmul", "params": {"m": 4096, "dtype": "float16"}}
    b = {"op": "matmul", "params": {"m": 8192, "dtype": "float16"}}
    c = {"op": "rope", "params": {"bsz": 8}}
    r, out = merge(tmp_path, record([dict(c, variant="occupancy=1")], [a, b]), record([dict(a, variant="T128")], [b]),
                   record([dict(a, variant="T256"), dict(b, variant="T64")]))
    assert r.returncode == 0, r.stderr
    chosen = {(e["op"], e["params"].get("m")): e["variant"] for e in out["choices"]}
    assert chosen == {("matmul", 4096): "T256", ("matmul", 8192): "T64", ("rope", None): "occupancy=1"}
    assert out["not_measured"] == []


def test_another_front_end_or_schema_is_refused(tmp_path):
    r, _ = merge(tmp_path, record([]), record([], frontend="cutile_rust"))
    assert r.returncode == 2 and "frontend 'cutile_rust' differs" in r.stderr
    r, _ = merge(tmp_path, record([]), dict(record([]), schema="other/1"))
    assert r.returncode == 2 and "schema is 'other/1'" in r.stderr


def test_a_record_measured_on_another_card_is_refused(tmp_path):
    kept = record([{"op": "rope", "params": {"bsz": 8}, "variant": "occupancy=1"}])
    h100 = record([{"op": "rope", "params": {"bsz": 8}, "variant": "occupancy=2"}], gpu="NVIDIA H100 80GB HBM3")
    r, out = merge(tmp_path, kept, h100)
    assert r.returncode == 2 and out is None
    assert r.stderr.strip() == (f"merge_tuning_records: {tmp_path / 'r1.json'}: gpu 'NVIDIA H100 80GB HBM3' differs "
                                f"from 'NVIDIA H200' of {tmp_path / 'r0.json'}")
