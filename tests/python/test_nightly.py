# SPDX-License-Identifier: Apache-2.0
"""scripts/nightly.sh without a GPU: bad input is exit 2 with one line naming it, and the export
cache is keyed by the kernel sources (a changed kernel is a new key, an unchanged tree reuses
the bundles). The GPU half (run, compare, exit 1 on a planted regression) runs on the H200."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def nightly(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(cwd / "scripts" / "nightly.sh"), *args], cwd=cwd, capture_output=True,
                          text=True, env=env or dict(os.environ), timeout=900)


def test_missing_suite_is_one_line_and_exit_two(tmp_path):
    r = nightly(REPO, "--suite", str(tmp_path / "none.json"), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"nightly: error: {tmp_path / 'none.json'}: suite not found"]


def test_unknown_option_is_exit_two(tmp_path):
    r = nightly(REPO, "--frobnicate")
    assert r.returncode == 2
    assert "unknown option '--frobnicate'" in r.stderr


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A clone of this checkout with its installed toolchains linked in, so that a kernel source
    can be edited without touching the real tree."""
    if not (REPO / ".venv" / "bin" / "python").exists():
        pytest.skip("no .venv: run scripts/setup.sh")
    dst = tmp_path_factory.mktemp("clone") / "repo"
    subprocess.run(["git", "clone", "-q", str(REPO), str(dst)], check=True)
    # The working tree's uncommitted state is what the tests run against.
    diff = subprocess.run(["git", "diff", "HEAD"], cwd=REPO, capture_output=True, check=True).stdout
    if diff:
        subprocess.run(["git", "apply", "--allow-empty", "-"], cwd=dst, input=diff, check=True)
    for untracked in subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=REPO,
                                    capture_output=True, text=True, check=True).stdout.split():
        (dst / untracked).parent.mkdir(parents=True, exist_ok=True)
        (dst / untracked).write_bytes((REPO / untracked).read_bytes())
    for link in (".venv", ".deps"):
        (dst / link).symlink_to(REPO / link)
    return dst


def test_export_cache_is_keyed_by_kernel_sources(clone, tmp_path):
    suite = tmp_path / "tiny.json"
    suite.write_text(json.dumps({"suite": "tiny", "configs": [
        {"op": "vector_add", "params": {"n": 4096, "dtype": "float32"}}]}))
    env = dict(os.environ, PORTBENCH_EXPORT_CACHE=str(tmp_path / "cache"),
               PORTBENCH_EXPORT_FRONTENDS="cutile_python triton")
    args = ("--suite", str(suite), "--out", str(tmp_path / "out"), "--export-only", "--ref", "cutile_python",
            "--port", "triton")
    first = nightly(clone, *args, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    key1 = (tmp_path / "out" / "export-key.txt").read_text().strip()
    assert (tmp_path / "cache" / key1 / "cutile_python" / "vector_add" / "manifest.json").exists()
    assert "export: cached" not in first.stdout

    again = nightly(clone, *args, env=env)
    assert again.returncode == 0, again.stderr
    assert f"export: cached ({key1})" in again.stdout

    kernel = clone / "kernels" / "cutile_python" / "vector_add.py"
    kernel.write_text(kernel.read_text() + "\n# an edit that changes the source\n")
    edited = nightly(clone, *args, env=env)
    assert edited.returncode == 0, edited.stderr
    key2 = (tmp_path / "out" / "export-key.txt").read_text().strip()
    assert key2 != key1
    assert "export: cached" not in edited.stdout


def test_missing_baseline_is_exit_two_after_the_export(clone, tmp_path):
    """No GPU binary run happens here: the missing reference front end stops it first."""
    suite = tmp_path / "tiny.json"
    suite.write_text(json.dumps({"suite": "tiny", "configs": [
        {"op": "vector_add", "params": {"n": 4096, "dtype": "float32"}}]}))
    env = dict(os.environ, PORTBENCH_EXPORT_CACHE=str(tmp_path / "cache"), PORTBENCH_EXPORT_FRONTENDS="triton")
    r = nightly(clone, "--suite", str(suite), "--out", str(tmp_path / "out"), "--ref", "no_such_frontend", env=env)
    assert r.returncode == 2
    assert r.stderr.strip().endswith("no_such_frontend: no reference bundles (front end 'no_such_frontend')")
