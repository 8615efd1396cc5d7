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


def write_cost(path, sizes):
    """portbench cost's JSON lines for operator `dec`: {config id: bytes}."""
    path.write_text("".join(json.dumps({"id": c, "op": "dec", "bytes": b}) + "\n" for c, b in sizes.items()))
    return path


def table(*args):
    return subprocess.run([sys.executable, str(REPO / "scripts/bandwidth_table.py"), *map(str, args)],
                          capture_output=True, text=True)


def rows(out):
    return [line.split() for line in out.splitlines()[2:]]


def test_the_largest_configurations_and_their_fastest_clean_side(tmp_path):
    cost = write_cost(tmp_path / "cost.jsonl", {"dec/s=1": 1_000_000, "dec/s=2": 4_000_000, "dec/s=3": 2_000_000})
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
    top2 = rows(table("--top", "2", cost, "2000", results).stdout)
    # s=2 (4 MB, the reference's 2000 ns: 2000 GB/s, 100% of copy), then s=3 (2 MB, the port's 800 ns).
    assert [(r[0], r[-1], r[4], r[5], r[6], r[7]) for r in top2] == [
        ("dec", "dec/s=2", "ref", "2000", "100.0%", "MET"), ("dec", "dec/s=3", "port", "2500", "125.0%", "MET")]
    assert [r[-1] for r in rows(table(cost, "2000", results).stdout)] == ["dec/s=2"]
    bad = table("--top", "0", cost, "1", results)
    assert bad.returncode != 0 and "positive count" in bad.stderr
    # No copy bandwidth measured (device_run.sh passes 0): one line, not a division by zero.
    unmeasured = table(cost, "0", results)
    assert unmeasured.returncode != 0 and "copy bandwidth '0'" in unmeasured.stderr
    assert unmeasured.stderr.count("\n") == 1


def test_each_row_against_a_copy_of_its_own_bytes(tmp_path):
    """--list names the rows as decode_floor.py's arguments; --floor puts its times beside them."""
    # portbench cost writes bytes as a JSON number that may carry a fraction ("4000000.0").
    cost = write_cost(tmp_path / "cost.jsonl", {"dec/s=1,h=8": 1_000_000, "dec/s=2,h=8": 4_000_000.0})
    results = tmp_path / "r.h5"
    write_results(results, [
        ("dec", "dec/s=1,h=8", "port", "port", "run_0", [1600, 1650, 1700], "PASS"),
        ("dec", "dec/s=2,h=8", "port", "port", "run_0", [2500, 2500, 2500], "PASS"),
    ])
    listed = table("--top", "2", "--list", cost, "2000", results)
    assert listed.returncode == 0 and listed.stdout.split() == ["dec/s=2,h=8=4000000", "dec/s=1,h=8=1000000"]
    floor = tmp_path / "floor.json"
    # s=2: a copy of its 4 MB takes 2.0 us, the two-kernel floor 2.25 us, the port 2.5 us (80%, 90%).
    # s=1's floor timed other bytes than the row moves: no share is printed for it.
    floor.write_text(json.dumps({
        "dec/s=2,h=8": {"bytes": 4_000_000, "copy_us": 2.0, "read_us": 1.8, "read_plus_one_us": 2.25},
        "dec/s=1,h=8": {"bytes": 999, "copy_us": 1.0, "read_us": 1.0, "read_plus_one_us": 1.5}}))
    out = table("--top", "2", "--floor", floor, cost, "2000", results)
    assert out.returncode == 0, out.stderr
    got = {r[-1]: r[4:11] for r in rows(out.stdout)}
    # The floor itself moves 4 MB in 2.25 us: 1778 GB/s, 88.9% of the copy bandwidth.
    assert got["dec/s=2,h=8"] == ["1600", "80.0%", "2.00", "80.0%", "2.25", "90.0%", "88.9%"]
    assert got["dec/s=1,h=8"] == ["606", "30.3%", "-", "-", "-", "-", "-"]
    # A searched read faster than torch's (2.0 us) becomes the floor; a slower one (3.0 us) does not.
    for searched, want in ((2.0, ["2.00", "80.0%", "100.0%"]), (3.0, ["2.25", "90.0%", "88.9%"])):
        floor.write_text(json.dumps({"dec/s=2,h=8": {"bytes": 4_000_000, "copy_us": 2.0, "read_us": 1.8, "read_plus_one_us": 2.25,
                                                     "searched_read_plus_one_us": searched, "searched_shape": "chunk"}}))
        out = table("--top", "2", "--floor", floor, cost, "2000", results)
        assert out.returncode == 0, out.stderr
        assert {r[-1]: r[8:11] for r in rows(out.stdout)}["dec/s=2,h=8"] == want
    floor.write_text(json.dumps({"dec/s=2,h=8": {"bytes": 4_000_000, "copy_us": 2.0, "read_plus_one_us": 2.25,
                                                 "searched_read_plus_one_us": -1}}))
    bad = table("--floor", floor, cost, "2000", results)
    assert bad.returncode != 0 and "searched_read_plus_one_us" in bad.stderr
    floor.write_text(json.dumps({"dec/s=2,h=8": {"bytes": 4_000_000, "copy_us": 0}}))
    bad = table("--floor", floor, cost, "2000", results)
    assert bad.returncode != 0 and str(floor) in bad.stderr and "dec/s=2,h=8" in bad.stderr
    assert bad.stderr.count("\n") == 1
    missing = table("--floor", str(tmp_path / "none.json"), cost, "2000", results)
    assert missing.returncode != 0 and "none.json" in missing.stderr


def test_each_row_is_met_short_or_below_a_measured_two_kernel_floor(tmp_path):
    """A row is called unreachable only where a measured floor for its own bytes stays under the
    figure; a row without one is SHORT, never passed."""
    cost = write_cost(tmp_path / "cost.jsonl", {"dec/s=1": 1_000_000, "dec/s=2": 4_000_000})
    results = tmp_path / "r.h5"
    # s=2: 4 MB in 2.5 us, 1600 GB/s, 80% of 2000 GB/s; s=1: 1 MB in 1.25 us, 800 GB/s, 40%.
    write_results(results, [
        ("dec", "dec/s=2", "port", "port", "run_0", [2500, 2500, 2500], "PASS"),
        ("dec", "dec/s=1", "port", "port", "run_0", [1250, 1250, 1250], "PASS"),
    ])
    floor = tmp_path / "floor.json"

    def verdicts(floor_cases, *opts):
        floor.write_text(json.dumps(floor_cases))
        out = table("--top", "2", *opts, "--floor", floor, cost, "2000", results)
        assert out.returncode == 0, out.stderr
        return {r[-1]: r[-2] for r in rows(out.stdout)}

    # s=2's floor: 4 MB in 2.25 us (88.9% of the copy bandwidth); s=1's: 1 MB in 0.8 us (62.5%).
    cases = {"dec/s=2": {"bytes": 4_000_000, "copy_us": 2.0, "read_plus_one_us": 2.25},
             "dec/s=1": {"bytes": 1_000_000, "copy_us": 0.6, "read_plus_one_us": 0.8}}
    assert verdicts(cases) == {"dec/s=2": "MET", "dec/s=1": "TWO_KERNEL_FLOOR_BELOW"}
    # At 90%: s=2 is short and its floor (88.9%) too.
    assert verdicts(cases, "--figure", "0.9") == {"dec/s=2": "TWO_KERNEL_FLOOR_BELOW", "dec/s=1": "TWO_KERNEL_FLOOR_BELOW"}
    # A searched read of s=2's bytes in 2.0 us (100%) leaves room: SHORT.
    cases["dec/s=2"]["searched_read_plus_one_us"] = 2.0
    assert verdicts(cases, "--figure", "0.9")["dec/s=2"] == "SHORT"
    # s=1's floor at 0.4 us (125%) leaves room; without a floor for its bytes it is SHORT too.
    assert verdicts({**cases, "dec/s=1": {"bytes": 1_000_000, "copy_us": 0.3, "read_plus_one_us": 0.4}})["dec/s=1"] == "SHORT"
    assert verdicts({**cases, "dec/s=1": {"bytes": 999, "copy_us": 0.6, "read_plus_one_us": 0.8}})["dec/s=1"] == "SHORT"
    for bad_share in ("0", "1.5", "x"):
        bad = table("--figure", bad_share, cost, "2000", results)
        assert bad.returncode != 0 and "--figure" in bad.stderr



def test_a_short_row_whose_warm_l2_time_is_over_the_figures_time(tmp_path):
    """--warm: a short row whose bytes fit half the L2 and whose every side, timed with --warm-l2,
    still takes longer than the figure allows is SHORT_EVEN_WARM_L2; one that fits the budget warm,
    or whose bytes exceed half the L2 (its warm run may have read DRAM too), stays SHORT."""
    cost = write_cost(tmp_path / "cost.jsonl", {"dec/s=1": 1_000_000, "dec/s=2": 4_000_000, "dec/s=3": 8_000_000})
    cold, warm = tmp_path / "cold.h5", tmp_path / "warm.h5"
    # At 2000 GB/s and 80%: budgets 0.625 us (1 MB, printed 0.62), 2.5 us (4 MB), 5 us (8 MB). Cold, all short.
    write_results(cold, [
        ("dec", "dec/s=1", "port", "port", "run_0", [1250, 1250, 1250], "PASS"),
        ("dec", "dec/s=1", "reference", "ref", "run_0", [1300, 1300, 1300], "PASS"),
        ("dec", "dec/s=2", "port", "port", "run_0", [5000, 5000, 5000], "PASS"),
        ("dec", "dec/s=3", "port", "port", "run_0", [9000, 9000, 9000], "PASS"),
    ])
    # Warm: s=1's port 0.9 us, its reference 0.6 us (under the budget: one side could make it);
    # s=2 3.0 us (over 2.5); s=3 6.0 us (over 5, but 8 MB exceed half the 10 MB L2).
    write_results(warm, [
        ("dec", "dec/s=1", "port", "port", "run_0", [900, 900, 900], "PASS"),
        ("dec", "dec/s=1", "reference", "ref", "run_0", [600, 600, 600], "PASS"),
        ("dec", "dec/s=2", "port", "port", "run_0", [3000, 3000, 3000], "PASS"),
        # A faster warm run that failed numerics does not count.
        ("dec", "dec/s=2", "port", "port", "run_1", [100, 100, 100], "FAIL"),
        ("dec", "dec/s=3", "port", "port", "run_0", [6000, 6000, 6000], "PASS"),
    ])
    with h5py.File(warm, "a") as f:
        f.attrs["timing"] = json.dumps({"cold_l2": False, "l2_flush": "none"})
    out = table("--top", "3", "--warm", warm, "--l2-bytes", "10000000", cost, "2000", cold)
    assert out.returncode == 0, out.stderr
    got = {r[-1]: (r[-4], r[-3], r[-2]) for r in rows(out.stdout)}
    assert got == {"dec/s=3": ("-", "5.00", "SHORT"), "dec/s=2": ("3.00", "2.50", "SHORT_EVEN_WARM_L2"),
                   "dec/s=1": ("0.60", "0.62", "SHORT")}
    # A measured floor below the figure still says more than the warm run.
    floor = tmp_path / "floor.json"
    floor.write_text(json.dumps({"dec/s=2": {"bytes": 4_000_000, "copy_us": 2.0, "read_plus_one_us": 4.0}}))
    out = table("--top", "3", "--floor", floor, "--warm", warm, "--l2-bytes", "10000000", cost, "2000", cold)
    assert out.returncode == 0, out.stderr
    assert {r[-1]: r[-2] for r in rows(out.stdout)}["dec/s=2"] == "TWO_KERNEL_FLOOR_BELOW"
    # A cold file given as the warm one, or --warm without the L2 size: one line each.
    not_warm = table("--warm", cold, "--l2-bytes", "10000000", cost, "2000", cold)
    assert not_warm.returncode != 0 and str(cold) in not_warm.stderr and "l2_flush" in not_warm.stderr
    assert not_warm.stderr.count("\n") == 1
    alone = table("--warm", warm, cost, "2000", cold)
    assert alone.returncode != 0 and "--l2-bytes" in alone.stderr and alone.stderr.count("\n") == 1
