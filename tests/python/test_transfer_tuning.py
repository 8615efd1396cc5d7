# SPDX-License-Identifier: Apache-2.0
"""scripts/transfer_tuning.py: configurations a tuning record lacks take the choice of the largest
measured configuration that differs from them only in its sizes, marked `transferred_from`; the
extended record still loads in the tilegym exporter; a record of the wrong shape fails in one
line naming the cause."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import REPO

from portbench_export.tilegym.tuning import key, load_record

SCRIPT = REPO / "scripts" / "transfer_tuning.py"


def mm(m, dtype="float16", persistent=True):
    return {"m": m, "n": m, "k": m, "dtype": dtype, "static_persistent": persistent, "transpose_a": False}


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_the_largest_measured_neighbour_is_copied_and_marked(tmp_path):
    record = {"schema": "portbench.tuning-record/1", "frontend": "tilegym", "target": "h200", "choices": [
        {"op": "matmul", "params": mm(4096), "variant": "small"},
        {"op": "matmul", "params": mm(16384), "variant": "large"},
        {"op": "matmul", "params": mm(16384, "float32"), "variant": "tf32"},
        {"op": "bmm", "params": mm(16384), "variant": "other-op"}]}
    suite = {"configs": [
        {"op": "matmul", "params": mm(32768)},
        {"op": "matmul", "params": mm(32768, "float32")},
        {"op": "matmul", "params": mm(32768, persistent=False)},  # no measured neighbour
        {"op": "matmul", "params": mm(4096)}]}                     # already chosen: untouched
    (tmp_path / "r.json").write_text(json.dumps(record))
    (tmp_path / "s.json").write_text(json.dumps(suite))
    r = run(tmp_path / "r.json", tmp_path / "s.json", tmp_path / "out.json")
    assert r.returncode == 0, r.stderr
    assert "2 choices transferred, 1 configurations without a neighbour" in r.stdout
    assert "no measured neighbour: matmul/dtype=float16,k=32768,m=32768,n=32768,static_persistent=False" in r.stdout
    out = json.loads((tmp_path / "out.json").read_text())
    added = out["choices"][len(record["choices"]):]
    assert [(c["params"]["dtype"], c["variant"], c["transferred_from"]["m"]) for c in added] == [("float16", "large", 16384), ("float32", "tf32", 16384)]
    assert out["choices"][:4] == record["choices"]
    loaded = load_record(tmp_path / "out.json", "tilegym", "h200")
    assert loaded.lookup("matmul", mm(32768)).variant == "large"
    assert key("matmul", mm(32768, persistent=False)) not in loaded.choices


def test_a_record_without_choices_fails_in_one_line(tmp_path):
    (tmp_path / "r.json").write_text(json.dumps({"schema": "portbench.tuning-record/1"}))
    (tmp_path / "s.json").write_text(json.dumps({"configs": []}))
    r = run(tmp_path / "r.json", tmp_path / "s.json", tmp_path / "out.json")
    assert r.returncode == 1 and r.stderr.strip() == "transfer_tuning: the record has no 'choices' array"
    assert not (tmp_path / "out.json").exists()
    r = run(tmp_path / "missing.json", tmp_path / "s.json", tmp_path / "out.json")
    assert r.returncode == 1 and "missing.json" in r.stderr and len(r.stderr.strip().splitlines()) == 1
