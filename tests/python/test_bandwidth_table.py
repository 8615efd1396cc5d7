# SPDX-License-Identifier: Apache-2.0
"""scripts/bandwidth_table.py: per operator the configurations moving the most bytes (--top N),
the fastest clean front end's bandwidth against the copy bandwidth, and runs that failed
numerics left out (a kernel that skips work must not look fast). The input is an HDF5 file in
the results layout (docs/results-layout.md: configs/<op>/<config>/<role>/<run>)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO

h5py = pytest.importorskip("h5py")


def write_results(path, runs):
    """runs: (op, config id, role, frontend, run name, samples ns, numerics)."""
    with h5py.File(path, "w") as f:
        for i, (op, cid, role, fe, run, ns, numerics) in enumerate(runs):
            cg = f.require_group(f"configs/{op}/c{abs(hash(cid)) % 10**8}")
            cg.attrs["id"] = cid
            rg = cg.require_group(role)
            rg.attrs["frontend"] = fe
            g = rg.create_group(run)
            g.create_dataset("time_ns", data=np.array(ns, dtype=np.int64))
            g.attrs.update({"timing": "VALID", "numerics": numerics, "proof": "EXECUTED"})


def rows(out):
    return [line.split() for line in out.splitlines()[2:]]


def test_the_largest_configurations_and_their_fastest_clean_side(tmp_path):
    cost = tmp_path / "cost.jsonl"
    sizes = {"dec/s=1": 1_000_000, "dec/s=2": 4_000_000, "dec/s=3": 2_000_000}
    cost.write_text("".join(json.dumps({"id": c, "op": "dec", "bytes": b}) + "\n" for c, b in sizes.items()))
    results = tmp_path / "r.h5"
    write_results(results, [
        ("dec", "dec/s=1", "reference", "ref", "run_0", [500, 510, 520], "PASS"),
        ("dec", "dec/s=1", "port", "port", "run_0", [400, 410, 420], "PASS"),
        # s=2: the port's fast run failed numerics; its passing run is slower than the reference.
        ("dec", "dec/s=2", "reference", "ref", "run_0", [2000, 2000, 2000], "PASS"),
        ("dec", "dec/s=2", "port", "port", "run_0", [100, 100, 100], "FAIL"),
        ("dec", "dec/s=2", "port", "port", "run_1", [2500, 2600, 2700], "PASS"),
        ("dec", "dec/s=3", "reference", "ref", "run_0", [1000, 1000, 1000], "PASS"),
        ("dec", "dec/s=3", "port", "port", "run_0", [800, 800, 800], "PASS"),
    ])
    run = lambda *a: subprocess.run([sys.executable, str(REPO / "scripts/bandwidth_table.py"), *a],
                                    capture_output=True, text=True, check=True).stdout
    top2 = rows(run("--top", "2", str(cost), "2000", str(results)))
    # s=2 (4 MB, the reference's 2000 ns: 2000 GB/s, 100% of copy), then s=3 (2 MB, the port's 800 ns).
    assert [(r[0], r[-1], r[4], r[5], r[6]) for r in top2] == [
        ("dec", "dec/s=2", "ref", "2000", "100.0%"), ("dec", "dec/s=3", "port", "2500", "125.0%")]
    assert [r[-1] for r in rows(run(str(cost), "2000", str(results)))] == ["dec/s=2"]
    bad = subprocess.run([sys.executable, str(REPO / "scripts/bandwidth_table.py"), "--top", "0", str(cost), "1", str(results)],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "positive count" in bad.stderr


def test_each_row_against_a_copy_of_its_own_bytes(tmp_path):
    """--list names the rows as decode_floor.py's arguments; --floor puts its times beside them."""
    cost = tmp_path / "cost.jsonl"
    # portbench cost writes bytes as a JSON number that may carry a fraction ("4000000.0").
    sizes = {"dec/s=1,h=8": 1_000_000, "dec/s=2,h=8": 4_000_000.0}
    cost.write_text("".join(json.dumps({"id": c, "op": "dec", "bytes": b}) + "\n" for c, b in sizes.items()))
    results = tmp_path / "r.h5"
    write_results(results, [
        ("dec", "dec/s=1,h=8", "port", "port", "run_0", [1600, 1650, 1700], "PASS"),
        ("dec", "dec/s=2,h=8", "port", "port", "run_0", [2500, 2500, 2500], "PASS"),
    ])
    script = str(REPO / "scripts/bandwidth_table.py")
    run = lambda *a: subprocess.run([sys.executable, script, *a], capture_output=True, text=True)
    listed = run("--top", "2", "--list", str(cost), "2000", str(results))
    assert listed.returncode == 0 and listed.stdout.split() == ["dec/s=2,h=8=4000000", "dec/s=1,h=8=1000000"]
    floor = tmp_path / "floor.json"
    # s=2: a copy of its 4 MB takes 2.0 us, the two-kernel floor 2.25 us, the port 2.5 us (80%, 90%).
    # s=1's floor timed other bytes than the row moves: no share is printed for it.
    floor.write_text(json.dumps({
        "dec/s=2,h=8": {"bytes": 4_000_000, "copy_us": 2.0, "read_us": 1.8, "read_plus_one_us": 2.25},
        "dec/s=1,h=8": {"bytes": 999, "copy_us": 1.0, "read_us": 1.0, "read_plus_one_us": 1.5}}))
    table = run("--top", "2", "--floor", str(floor), str(cost), "2000", str(results))
    assert table.returncode == 0, table.stderr
    got = {r[-1]: r[4:11] for r in rows(table.stdout)}
    # The floor itself moves 4 MB in 2.25 us: 1778 GB/s, 88.9% of the copy bandwidth.
    assert got["dec/s=2,h=8"] == ["1600", "80.0%", "2.00", "80.0%", "2.25", "90.0%", "88.9%"]
    assert got["dec/s=1,h=8"] == ["606", "30.3%", "-", "-", "-", "-", "-"]
    # A searched read faster than torch's (2.0 us) becomes the floor; a slower one (3.0 us) does not.
    for searched, want in ((2.0, ["2.00", "80.0%", "100.0%"]), (3.0, ["2.25", "90.0%", "88.9%"])):
        floor.write_text(json.dumps({"dec/s=2,h=8": {"bytes": 4_000_000, "copy_us": 2.0, "read_us": 1.8, "read_plus_one_us": 2.25,
                                                     "searched_read_plus_one_us": searched, "searched_shape": "chunk"}}))
        table = run("--top", "2", "--floor", str(floor), str(cost), "2000", str(results))
        assert table.returncode == 0, table.stderr
        assert {r[-1]: r[8:11] for r in rows(table.stdout)}["dec/s=2,h=8"] == want
    floor.write_text(json.dumps({"dec/s=2,h=8": {"bytes": 4_000_000, "copy_us": 2.0, "read_plus_one_us": 2.25,
                                                 "searched_read_plus_one_us": -1}}))
    bad = run("--floor", str(floor), str(cost), "2000", str(results))
    assert bad.returncode != 0 and "searched_read_plus_one_us" in bad.stderr
    floor.write_text(json.dumps({"dec/s=2,h=8": {"bytes": 4_000_000, "copy_us": 0}}))
    bad = run("--floor", str(floor), str(cost), "2000", str(results))
    assert bad.returncode != 0 and str(floor) in bad.stderr and "dec/s=2,h=8" in bad.stderr
    assert bad.stderr.count("\n") == 1
    missing = run("--floor", str(tmp_path / "none.json"), str(cost), "2000", str(results))
    assert missing.returncode != 0 and "none.json" in missing.stderr
