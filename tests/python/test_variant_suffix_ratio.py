# SPDX-License-Identifier: Apache-2.0
"""scripts/variant_suffix_ratio.py: a suffixed variant is compared with its own sibling only, a
failed one is left out, a suffixed choice's margin is over the fastest variant without the suffix,
and a file that is not a tuning record is refused."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "variant_suffix_ratio.py"


def choice(op, s, variant, baseline, baseline_ns, measured):
    return {"op": op, "params": {"seq_len": s}, "variant": variant, "baseline": baseline, "baseline_ns": baseline_ns,
            "measured": [{"variant": v, "best_ns": ns, "numerics": num} for v, ns, num in measured]}


def run(tmp_path, rec, suffix="_pl"):
    p = tmp_path / "record.json"
    p.write_text(json.dumps(rec))
    return subprocess.run([sys.executable, str(SCRIPT), str(p), suffix], capture_output=True, text=True)


def test_siblings_and_the_chosen_margin(tmp_path):
    rec = {"schema": "portbench.tuning-record/1", "choices": [
        # a_pl is 1.25x its sibling a; b_pl FAILED, so it has no ratio; c_pl has no sibling.
        choice("decode", 512, "a_pl", "a", 1000.0,
               [("a_pl", 800.0, "PASS"), ("b", 900.0, "PASS"), ("b_pl", 100.0, "FAIL"), ("c_pl", 850.0, "PASS")]),
        # a_pl 0.5x its sibling; the chosen is the default, so no margin line.
        choice("decode", 4096, "a", "a", 1000.0, [("a_pl", 2000.0, "PASS")]),
    ]}
    r = run(tmp_path, rec)
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line.split()[1:] for line in r.stdout.splitlines()[1:] if line.startswith(("a_pl", "b_pl", "c_pl"))}
    assert set(rows) == {"a_pl"}
    count, lo, hi, geo = rows["a_pl"]
    assert (count, lo, hi, geo) == ("2", "0.5000", "1.2500", f"{(0.5 * 1.25) ** 0.5:.4f}")
    assert "chosen with _pl: 1 of 2 configurations" in r.stdout
    # The fastest without _pl is b (900 ns): 900 / 800.
    assert "a_pl 1.1250 over the fastest without _pl: decode/seq_len=512" in r.stdout


def test_not_a_tuning_record_is_refused(tmp_path):
    r = run(tmp_path, {"schema": "portbench.tuning-record/0", "choices": []})
    assert r.returncode == 2
    assert "schema is 'portbench.tuning-record/0'" in r.stderr and "record.json" in r.stderr
    p = tmp_path / "bad.json"
    p.write_text("{")
    r = subprocess.run([sys.executable, str(SCRIPT), str(p), "_pl"], capture_output=True, text=True)
    assert r.returncode == 2 and "bad.json" in r.stderr


def test_no_suffixed_variant_is_not_a_result(tmp_path):
    rec = {"schema": "portbench.tuning-record/1", "choices": [choice("decode", 512, "a", "a", 1000.0, [("b", 900.0, "PASS")])]}
    r = run(tmp_path, rec)
    assert r.returncode == 1 and "no variant ending in '_pl'" in r.stderr
