# SPDX-License-Identifier: Apache-2.0
"""scripts/rust_variants.py: cuTile Rust tuning variants split into one bundle per variant, and
the tuning record made from `portbench report --format json` of each (synthetic manifests and
reports here; the GPU run is scripts/time_rust_variants.sh)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from portbench_export.suite import Config

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "rust_variants.py"

P1 = {"m": 1048576, "p": 0.5, "inplace": False, "dtype": "float16", "training": True}
P2 = {"m": 4194304, "p": 0.5, "inplace": False, "dtype": "float16", "training": True}


def _launch(cubin: str, grid: int) -> list[dict]:
    return [{"cubin": cubin, "entry": "dropout_entry", "grid": [grid, 1, 1], "block": [1, 1, 1],
             "shared_bytes": 0, "cluster": [1, 1, 1], "params": [{"kind": "ptr", "tensor": "x"}]}]


def _variant(name: str, cubin: str, grid: int) -> dict:
    return {"name": name, "tuning": {"tile": 1}, "scratch": [], "launches": _launch(cubin, grid)}


def _bundle(root: Path, frontend: str = "cutile_rust") -> Path:
    b = root / "bundles" / "dropout"
    b.mkdir(parents=True)
    for f in ["a.cubin", "a.tileir.txt", "b.cubin", "b.tileir.txt", "c.cubin", "c.tileir.txt"]:
        (b / f).write_bytes(f.encode())
    configs = []
    for params, grid in [(P1, 1024), (P2, 4096)]:
        vs = [_variant("t1024_nohint", "a.cubin", grid), _variant("t4096_occ4", "b.cubin", grid // 4)]
        if params is P2:
            vs.append(_variant("t2048_nohint", "c.cubin", grid // 2))
        configs.append({"params": params, "tuning": {"tile": 1, "variant": "t1024_nohint", "tuning_source": "default: x"},
                        "scratch": [], "launches": vs[0]["launches"], "variants": vs})
    m = {"schema": "portbench.bundle/1", "frontend": frontend, "operator": "dropout", "arch": "sm_90",
         "target": {"name": "h200", "arch": "sm_90", "sm_count": 132}, "toolchain": {"cutile": "0.5.0"},
         "cubins": [{"file": f"{x}.cubin", "sha256": "0" * 64, "ir": [f"{x}.tileir.txt"]} for x in "abc"],
         "configs": configs}
    (b / "manifest.json").write_text(json.dumps(m))
    return b


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def _report(path: Path, rows: list[tuple[dict, float, float, str]]) -> None:
    cfgs = [{"id": Config(0, "dropout", p).id(), "operator": "dropout", "paired": True,
             "reference": {"best_ns": ref, "numerics": "PASS", "proof": "EXECUTED", "runs": 2},
             "port": {"best_ns": port, "numerics": verdict, "proof": "EXECUTED", "runs": 2}}
            for p, ref, port, verdict in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": "portbench.report/1", "configs": cfgs}))


def test_split_and_record(tmp_path):
    _bundle(tmp_path)
    split = tmp_path / "split"
    r = _run("split", str(tmp_path / "bundles"), str(split))
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in (split / "dropout").iterdir())
    assert names == ["t1024_nohint", "t2048_nohint", "t4096_occ4"]
    m = json.loads((split / "dropout" / "t4096_occ4" / "manifest.json").read_text())
    # Each variant bundle: its configurations, the variant's launches as the plan, only its cubins.
    assert [c["params"] for c in m["configs"]] == [P1, P2]
    assert [c["launches"][0]["grid"] for c in m["configs"]] == [[256, 1, 1], [1024, 1, 1]]
    assert all("variants" not in c for c in m["configs"])
    assert m["configs"][0]["tuning"]["variant"] == "t4096_occ4"
    assert m["configs"][0]["tuning"]["default_variant"] == "t1024_nohint"
    assert [c["file"] for c in m["cubins"]] == ["b.cubin"]
    assert sorted(p.name for p in (split / "dropout" / "t4096_occ4").iterdir()) == ["b.cubin", "b.tileir.txt", "manifest.json"]
    m2 = json.loads((split / "dropout" / "t2048_nohint" / "manifest.json").read_text())
    assert [c["params"] for c in m2["configs"]] == [P2]

    res = tmp_path / "res"
    # P1: the default is fastest; P2: t2048 is fastest, t4096 faster still but its numerics FAIL.
    _report(res / "dropout" / "t1024_nohint.json", [(P1, 100.0, 90.0, "PASS"), (P2, 400.0, 400.0, "PASS")])
    _report(res / "dropout" / "t4096_occ4.json", [(P1, 100.0, 95.0, "PASS"), (P2, 400.0, 300.0, "FAIL")])
    _report(res / "dropout" / "t2048_nohint.json", [(P2, 400.0, 320.0, "PASS")])
    # A variant whose run failed before writing a report is left out, with a message.
    (split / "dropout" / "t8192_nohint").mkdir()
    (split / "dropout" / "t8192_nohint" / "manifest.json").write_text((split / "dropout" / "t2048_nohint" / "manifest.json").read_text())
    (res / "dropout" / "t8192_nohint.json").write_text("")
    out = tmp_path / "rec.json"
    r = _run("record", str(split), str(res), str(out), "--target", "h200")
    assert r.returncode == 0, r.stderr
    rec = json.loads(out.read_text())
    assert (rec["schema"], rec["frontend"], rec["target"]) == ("portbench.tuning-record/1", "cutile_rust", "h200")
    ch = {json.dumps(c["params"], sort_keys=True): c for c in rec["choices"]}
    c1, c2 = ch[json.dumps(P1, sort_keys=True)], ch[json.dumps(P2, sort_keys=True)]
    assert (c1["variant"], c1["speedup_over_default"], c1["candidates"]) == ("t1024_nohint", 1.0, 2)
    assert (c2["variant"], c2["speedup_over_default"], c2["candidates"]) == ("t2048_nohint", 1.25, 2)
    assert "not a valid candidate" in r.stderr
    assert "t8192_nohint: unreadable report" in r.stderr
    # default geomean sqrt(100/90 * 1) and best sqrt(100/90 * 400/320)
    assert "default 1.0541, best variant per configuration 1.1785" in r.stdout


def test_split_refuses_other_front_ends(tmp_path):
    _bundle(tmp_path, frontend="tilegym")
    r = _run("split", str(tmp_path / "bundles"), str(tmp_path / "split"))
    assert r.returncode == 2
    assert "not cutile_rust" in r.stderr and "manifest.json" in r.stderr
    r = _run("split", str(tmp_path / "nothing"), str(tmp_path / "split"))
    assert r.returncode == 2 and "no manifest.json" in r.stderr
