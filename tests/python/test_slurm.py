# SPDX-License-Identifier: Apache-2.0
"""scripts/slurm_sweep.sh on a real single-node Slurm (Debian's slurm-wlm, started on localhost
by scripts/slurm_local.sh for this test): an array of `portbench run --dry-run --shard K/N`
tasks and the dependent merge job, which must cover the plan exactly once."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "build" / os.environ.get("PORTBENCH_PRESET", "ci-cpu") / "harness" / "cli" / "portbench"
BUNDLES = REPO / "bundles"
SHARDS = 3


def plan_args() -> list[str]:
    return ["--ref", str(BUNDLES / "cutile_python"), "--port", str(BUNDLES / "cutile_rust"),
            "--suite", str(REPO / "configs" / "smoke.json"), "--runs", "4"]


@pytest.fixture()
def slurm(tmp_path):
    if shutil.which("slurmctld") is None or shutil.which("slurmd") is None:
        pytest.skip("slurm-wlm is not installed (scripts/setup.sh installs it)")
    if os.geteuid() != 0:
        pytest.skip("a private slurmd must run as root to start jobs")
    if not BIN.exists():
        pytest.skip(f"{BIN} not built (scripts/test.sh builds it first)")
    state = tmp_path / "slurm"
    r = subprocess.run(["bash", str(REPO / "scripts" / "slurm_local.sh"), "start", str(state)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    env = dict(os.environ, SLURM_CONF=str(state / "slurm.conf"))
    try:
        yield env
    finally:
        subprocess.run(["bash", str(REPO / "scripts" / "slurm_local.sh"), "stop", str(state)],
                       capture_output=True, text=True, timeout=60)


def wait_for(path: Path, text: str, timeout_s: float, env: dict) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return path.read_text()
        time.sleep(0.5)
    queue = subprocess.run(["squeue"], capture_output=True, text=True, env=env).stdout
    pytest.fail(f"{path} has no '{text}' after {timeout_s} s; squeue:\n{queue}")


def test_array_of_dry_run_shards_merges_into_the_plan_exactly_once(slurm, tmp_path):
    whole = subprocess.run([str(BIN), "run", *plan_args(), "--dry-run", "--format", "json"],
                           capture_output=True, text=True, timeout=120)
    assert whole.returncode == 0, whole.stderr
    planned = {row["configuration"] for row in json.loads(whole.stdout)["configurations"]}
    assert len(planned) >= SHARDS

    out = tmp_path / "sweep"
    env = dict(slurm, PORTBENCH_SLURM_GPUS="0", PORTBENCH_SLURM_TIME="00:05:00")
    r = subprocess.run(["bash", str(REPO / "scripts" / "slurm_sweep.sh"), str(SHARDS), str(out), "--bin", str(BIN),
                        "--", *plan_args(), "--dry-run"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    jobs = dict(line.split() for line in r.stdout.splitlines())
    assert set(jobs) == {"array", "merge"}

    log = wait_for(out / "logs" / "merge.out", f"merged {SHARDS} shards", 180, env)
    assert f"shards 0..{SHARDS - 1} of {SHARDS} cover the plan's {len(planned)} configurations exactly once" in log, log
    seen: dict[str, int] = {}
    for k in range(SHARDS):
        shard_log = (out / "logs" / f"shard-{k}.out").read_text()
        assert f"shard {k}/{SHARDS}" in shard_log
        listing = subprocess.run([str(BIN), "run", *plan_args(), "--list", "--format", "json", "--shard",
                                  f"{k}/{SHARDS}"], capture_output=True, text=True, timeout=120)
        assert listing.returncode == 0, listing.stderr
        for row in json.loads(listing.stdout):
            assert row["configuration"] not in seen, f"{row['configuration']} in shards {seen.get(row['configuration'])} and {k}"
            seen[row["configuration"]] = k
    assert set(seen) == planned
    assert (out / "merged.h5").exists() and (out / "report.md").exists()
