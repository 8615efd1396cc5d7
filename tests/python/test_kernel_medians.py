# SPDX-License-Identifier: Apache-2.0
"""scripts/kernel_medians.py: each kernel's median of a multi-kernel plan from results files
(docs/results-layout.md), the best complete and validly timed run per side, and a second file's
times against the first's (a cold-L2 run beside a --warm-l2 run)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO

h5py = pytest.importorskip("h5py")

PASS_ENTRY = "_Z9mla_splitILi16EE"
REDUCE_ENTRY = "splitk_reduce_entry"


def write_results(path, runs):
    """runs: (config id, role, run name, [[pass ns, reduce ns] per sample], state, timing[, numerics])."""
    with h5py.File(path, "w") as f:
        f.attrs["schema"] = "portbench.results/1"
        for cid, role, run, samples, state, timing, *numerics in runs:
            cg = f.require_group(f"configs/dec/{cid.split('/')[1]}")
            cg.attrs["id"] = cid
            g = cg.require_group(role).create_group(run)
            per_kernel = np.array(samples, dtype=np.int64)
            totals = per_kernel.sum(axis=1)
            g.create_dataset("time_ns", data=totals)
            g.create_dataset("kernel_time_ns", data=per_kernel)
            g.attrs.update({"state": state, "timing": timing, "median_ns": float(np.median(totals)),
                            "numerics": numerics[0] if numerics else "PASS", "proof": "EXECUTED",
                            "kernel_entries": json.dumps([PASS_ENTRY, REDUCE_ENTRY]),
                            "kernel_median_ns": np.median(per_kernel, axis=0).astype(np.int64)})


def medians(*args):
    return subprocess.run([sys.executable, str(REPO / "scripts/kernel_medians.py"), *map(str, args)],
                          capture_output=True, text=True)


def test_the_best_run_of_each_side_and_a_warm_file_against_a_cold_one(tmp_path):
    cold, warm = tmp_path / "cold.h5", tmp_path / "warm.h5"
    write_results(cold, [
        # run_1 is the best clean run (11 us); run_2 is faster but was cut short, run_3 invalid.
        ("dec/s=8", "port", "run_0", [[9000, 3000], [9200, 3000], [9100, 3100]], "COMPLETE", "VALID"),
        ("dec/s=8", "port", "run_1", [[8000, 3000], [8000, 3000], [8000, 3000]], "COMPLETE", "VALID"),
        ("dec/s=8", "port", "run_2", [[1000, 1000], [1000, 1000], [1000, 1000]], "", "VALID"),
        ("dec/s=8", "port", "run_3", [[500, 500], [500, 500], [500, 500]], "COMPLETE", "INVALID_CLOCK_THROTTLED"),
        # run_4 is faster and validly timed but its output failed the fp64 check.
        ("dec/s=8", "port", "run_4", [[700, 700], [700, 700], [700, 700]], "COMPLETE", "VALID", "FAIL"),
        ("dec/s=8", "reference", "run_0", [[10000, 2000], [10000, 2000], [10000, 2000]], "COMPLETE", "VALID"),
        ("dec/s=2", "port", "run_0", [[4000, 1000], [4000, 1000], [4000, 1000]], "COMPLETE", "VALID"),
    ])
    write_results(warm, [
        ("dec/s=8", "port", "run_0", [[6000, 3000], [6000, 3000], [6000, 3000]], "COMPLETE", "VALID"),
        ("dec/s=8", "reference", "run_0", [[9000, 2000], [9000, 2000], [9000, 2000]], "COMPLETE", "VALID"),
    ])
    out = medians("--filter", "s=8", f"cold={cold}", f"warm={warm}")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "dec/s=8 port"
    assert lines[1].split() == ["cold", "plan", "11.00", "us", "mla_split", "8.00", "splitk_reduce", "3.00"]
    # Warm: the pass 6 of cold's 8 us, the reduce unchanged, the plan 9 of 11 us.
    warm_port = lines[2].split()
    assert warm_port[:3] == ["warm", "plan", "9.00"]
    assert warm_port[-4:] == ["0.82,", "kernels", "0.75", "1.00"]
    assert lines[3] == "dec/s=8 reference"
    assert lines[5].split()[-4:] == ["0.92,", "kernels", "0.90", "1.00"]
    # s=2 was filtered out.
    assert "s=2" not in out.stdout
    # A side a file did not time is said to be so, not left blank.
    only_cold = medians("--filter", "s=2", f"cold={cold}", f"warm={warm}")
    assert only_cold.returncode == 0, only_cold.stderr
    assert only_cold.stdout.splitlines()[2].split() == ["warm", "(not", "timed)"]


def test_bad_input_is_one_line_naming_the_file(tmp_path):
    not_results = tmp_path / "other.h5"
    with h5py.File(not_results, "w") as f:
        f.attrs["schema"] = "something.else/1"
    for args, words in (([f"cold={not_results}"], [str(not_results), "schema"]),
                        ([f"cold={tmp_path / 'none.h5'}"], ["none.h5", "cannot open"]),
                        ([str(not_results)], ["LABEL=FILE.h5"])):
        out = medians(*args)
        assert out.returncode != 0 and all(w in out.stderr for w in words), out.stderr
        assert out.stderr.count("\n") == 1
    cold = tmp_path / "cold.h5"
    write_results(cold, [("dec/s=8", "port", "run_0", [[9000, 3000]], "COMPLETE", "INVALID_NO_SAMPLES")])
    nothing = medians(f"cold={cold}")
    assert nothing.returncode != 0 and "no cleanly timed side" in nothing.stderr
