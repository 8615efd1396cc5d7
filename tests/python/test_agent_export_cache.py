# SPDX-License-Identifier: Apache-2.0
"""scripts/agent_export_cache.py: exports made here for the agent's retune on a GPU host, then
served as one bundle per mixed-tuning suite, with the real cuTile Python exporter."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "agent_export_cache.py"


def run(args, env):
    return subprocess.run([sys.executable, str(SCRIPT), *args], env=env, capture_output=True, text=True)


def test_prepare_then_serve_a_mixed_suite(tmp_path, export_env):
    job = {"schema": "portbench.agent-job/1", "operator": "rms_norm", "root": str(REPO), "workdir": "w",
           "reference": {"bundle": str(tmp_path)}, "port": {"frontend": "cutile_python"},
           "configs": [{"params": {"m": 256, "n": 1024, "dtype": "float16"}},
                       {"params": {"m": 512, "n": 1024, "dtype": "float16"}}],
           "stages": {"translate": {"builtin": "retune", "overrides": {"t256": {"tile": 256}, "t512": {"tile": 512}}}}}
    (tmp_path / "job.json").write_text(json.dumps(job))
    exporter = [sys.executable, "-m", "portbench_export.cutile_python", "--suite", "{suite}", "--out", "{out}"]
    cache = tmp_path / "cache"
    r = run(["prepare", str(tmp_path / "job.json"), str(cache), "--exporter", json.dumps(exporter)], export_env)
    assert r.returncode == 0, r.stderr
    index = json.loads((cache / "index.json").read_text())
    assert index["candidates"] == {"default": {}, "t256": {"tile": 256}, "t512": {"tile": 512}}

    mixed = {"suite": "m", "configs": [
        {"op": "rms_norm", "params": {"m": 256, "n": 1024, "dtype": "float16"}, "tuning": {"tile": 512}},
        {"op": "rms_norm", "params": {"m": 512, "n": 1024, "dtype": "float16"}}]}
    (tmp_path / "mixed.json").write_text(json.dumps(mixed))
    r = run(["serve", str(cache), "--suite", str(tmp_path / "mixed.json"), "--out", str(tmp_path / "out")], export_env)
    assert r.returncode == 0, r.stderr
    bundle = tmp_path / "out" / "rms_norm"
    manifest = json.loads((bundle / "manifest.json").read_text())
    tiles = {c["params"]["m"]: c["tuning"]["tile_n"] for c in manifest["configs"]}
    assert tiles == {256: 512, 512: 1024}
    # Every cubin the plans name is there, with the hash the manifest gives.
    for cubin in manifest["cubins"]:
        assert hashlib.sha256((bundle / cubin["file"]).read_bytes()).hexdigest() == cubin["sha256"]
    named = {launch["cubin"] for c in manifest["configs"] for launch in c["launches"]}
    assert named == {c["file"] for c in manifest["cubins"]}

    # A tuning the cache was not prepared with is an error naming it.
    mixed["configs"][0]["tuning"] = {"tile": 128}
    (tmp_path / "mixed.json").write_text(json.dumps(mixed))
    r = run(["serve", str(cache), "--suite", str(tmp_path / "mixed.json"), "--out", str(tmp_path / "out2")], export_env)
    assert r.returncode == 1
    assert '{"tile": 128} is not in the cache' in r.stderr


def test_serve_with_a_tuning_record_makes_the_named_variant_the_chosen_plan(tmp_path, export_env):
    # tilegym's rope declares its autotuner's occupancies as variants; retune selects one through a
    # tuning record passed as {tuning}, which serve must honour as the exporter's --tuning does.
    params = {"bsz": 8, "seq_len": 1, "num_q_heads": 32, "num_kv_heads": 8, "head_dim": 128,
              "partial_rotary_factor": 1.0, "dtype": "float16"}
    job = {"schema": "portbench.agent-job/1", "operator": "rope", "root": str(REPO), "workdir": "w",
           "reference": {"bundle": str(tmp_path)}, "port": {"frontend": "tilegym"},
           "configs": [{"params": params}], "stages": {"translate": {"builtin": "retune"}}}
    (tmp_path / "job.json").write_text(json.dumps(job))
    exporter = [sys.executable, "-m", "portbench_export.tilegym", "--suite", "{suite}", "--out", "{out}"]
    cache = tmp_path / "cache"
    r = run(["prepare", str(tmp_path / "job.json"), str(cache), "--exporter", json.dumps(exporter)], export_env)
    assert r.returncode == 0, r.stderr
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"suite": "s", "configs": [{"op": "rope", "params": params}]}))
    cached = json.loads((cache / "default" / "rope" / "manifest.json").read_text())["configs"][0]
    default = cached["tuning"]["variant"]
    other = next(v for v in cached["variants"] if v["name"] != default)

    def serve(record, out):
        (tmp_path / "record.json").write_text(json.dumps(record))
        return run(["serve", str(cache), "--suite", str(suite), "--out", str(tmp_path / out),
                    "--tuning", str(tmp_path / "record.json")], export_env)

    record = {"schema": "portbench.tuning-record/1", "choices": [{"op": "rope", "params": params, "variant": other["name"]}]}
    r = serve(record, "out")
    assert r.returncode == 0, r.stderr
    bundle = tmp_path / "out" / "rope"
    manifest = json.loads((bundle / "manifest.json").read_text())
    config = manifest["configs"][0]
    assert config["tuning"]["variant"] == other["name"]
    assert config["launches"] == other["launches"]
    assert config["launches"] != cached["launches"]
    # The variants stay listed (retune reads them), and every cubin any of them names is there.
    assert [v["name"] for v in config["variants"]] == [v["name"] for v in cached["variants"]]
    named = {l["cubin"] for l in config["launches"] + [l for v in config["variants"] for l in v["launches"]] if "cubin" in l}
    assert named <= {c["file"] for c in manifest["cubins"]}
    for cubin in manifest["cubins"]:
        assert hashlib.sha256((bundle / cubin["file"]).read_bytes()).hexdigest() == cubin["sha256"]

    # An empty record keeps the exporter's choice; a variant the configuration lacks is an error naming it.
    r = serve(dict(record, choices=[]), "out2")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "out2" / "rope" / "manifest.json").read_text())["configs"][0]["tuning"]["variant"] == default
    r = serve(dict(record, choices=[dict(record["choices"][0], variant="occupancy=99")]), "out3")
    assert r.returncode == 1
    assert "no variant 'occupancy=99'" in r.stderr


def test_prepare_from_an_existing_export_serves_its_variants(tmp_path, export_env):
    source = REPO / "bundles" / "tilegym" / "rope"
    if not (source / "manifest.json").exists():
        import pytest
        pytest.skip("bundles/tilegym/rope not exported (scripts/export_bundles.sh)")
    manifest = json.loads((source / "manifest.json").read_text())
    config = manifest["configs"][0]
    job = {"schema": "portbench.agent-job/1", "operator": "rope", "root": str(REPO), "workdir": "w",
           "reference": {"bundle": str(tmp_path)}, "port": {"frontend": "tilegym"},
           "configs": [{"params": config["params"]}], "stages": {"translate": {"builtin": "retune"}}}
    (tmp_path / "job.json").write_text(json.dumps(job))
    cache = tmp_path / "cache"
    r = run(["prepare", str(tmp_path / "job.json"), str(cache), "--from", str(source.parent)], export_env)
    assert r.returncode == 0, r.stderr
    assert json.loads((cache / "index.json").read_text())["candidates"] == {"default": {}}
    other = next(v for v in config["variants"] if v["name"] != config["tuning"]["variant"])
    (tmp_path / "suite.json").write_text(json.dumps({"suite": "s", "configs": [{"op": "rope", "params": config["params"]}]}))
    (tmp_path / "record.json").write_text(json.dumps({"schema": "portbench.tuning-record/1", "choices": [
        {"op": "rope", "params": config["params"], "variant": other["name"]}]}))
    r = run(["serve", str(cache), "--suite", str(tmp_path / "suite.json"), "--out", str(tmp_path / "out"),
             "--tuning", str(tmp_path / "record.json")], export_env)
    assert r.returncode == 0, r.stderr
    served = json.loads((tmp_path / "out" / "rope" / "manifest.json").read_text())["configs"][0]
    assert served["tuning"]["variant"] == other["name"]
    # A job with overrides cannot take its default from an export.
    job["stages"]["translate"]["overrides"] = {"o2": {"occupancy": 2}}
    (tmp_path / "job.json").write_text(json.dumps(job))
    r = run(["prepare", str(tmp_path / "job.json"), str(tmp_path / "cache2"), "--from", str(source.parent)], export_env)
    assert r.returncode == 2 and "the job lists overrides (o2)" in r.stderr
