# SPDX-License-Identifier: Apache-2.0
"""The tilegym exporter on the pinned tilegym==1.5.1: configs/tilegym-smoke.json (one small
configuration per operator) and data/tilegym-extra.json (variations of the two operators without
upstream configurations) exported through the real command line with no GPU; every
configuration either exported or skipped with its reason; manifests with target, sources
(checked against the wheel's RECORD) and variants; the wrappers' copies and fills through torch
as the plans' copy and fill steps; bundles that `portbench inspect` accepts; a changed tilegym
source refused; a tuning record honoured."""
from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import REPO, manifests, suite_configs
from portbench_export.cubin import inspect_cubin
from portbench_export.schema import validate_bundle

SMOKE = REPO / "configs" / "tilegym-smoke.json"
EXTRA = Path(__file__).parent / "data" / "tilegym-extra.json"
TARGET = json.loads((REPO / "configs" / "targets" / "h200.json").read_text())
# The CI build's binary, else the dev preset's (what an engineer builds), or $PORTBENCH_BIN.
PORTBENCH = next((p for p in [Path(os.environ.get("PORTBENCH_BIN", "/nonexistent")),
                              *(REPO / "build" / preset / "harness" / "cli" / "portbench" for preset in ("ci-cpu", "dev"))]
                  if p.is_file()), REPO / "build" / "ci-cpu" / "harness" / "cli" / "portbench")
ALL_OPS = {"rms_norm", "layer_norm_legacy", "softmax", "rope", "silu_and_mul", "swiglu", "dropout", "matmul", "bmm",
           "group_gemm", "splitk_reduce", "fmha", "flash_decode", "attention_sink", "attention_sink_decode",
           "gemma_attention", "gemma_attention_decode", "mla", "mla_decoding", "mla_decoding_split_kv", "moe",
           "moe_align_block", "recurrent_gated_delta_rule", "chunk_gated_delta_rule"}
# What the pinned package's wrappers need that a launch plan cannot hold (docs/exporters.md):
# None since group_gemm's lists of arrays are array tables and moe's sum of its top-k partial
# outputs is a plan's sum step (tests/python/test_tilegym_moe.py); a configuration the package
# cannot express would be listed here with its reason.
EXPECTED_SKIPS = {
}
SUMMARY = re.compile(r"^summary: tilegym/(\w+): exported (\d+) of (\d+)(?: \(skipped: (.*)\))?$", re.M)


def _export(env, suite: Path, out: Path, *extra: str, **extra_env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "portbench_export.tilegym", "--suite", str(suite), "--out", str(out),
                           *extra], capture_output=True, text=True, env=dict(env, **extra_env), cwd=REPO, timeout=1500)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, export_env):
    out = tmp_path_factory.mktemp("tilegym") / "tilegym"
    r = _export(export_env, SMOKE, out)
    assert r.returncode == 0, r.stderr
    return r, out


@pytest.fixture(scope="module")
def extra(tmp_path_factory, export_env):
    out = tmp_path_factory.mktemp("tilegym-extra") / "tilegym"
    r = _export(export_env, EXTRA, out)
    assert r.returncode == 0, r.stderr
    return r, out


def _suite_ops(path: Path) -> Counter:
    return Counter(c["op"] for c in json.loads(path.read_text())["configs"])


@pytest.mark.parametrize("which", ["smoke", "extra"])
def test_every_configuration_is_exported_or_skipped_with_its_reason(which, smoke, extra):
    (r, out), suite = (smoke, SMOKE) if which == "smoke" else (extra, EXTRA)
    want = _suite_ops(suite)
    sums = {m.group(1): m for m in SUMMARY.finditer(r.stdout)}
    assert set(sums) == set(want), r.stdout
    ms = manifests(out)
    for op, total in want.items():
        m = sums[op]
        exported, of = int(m.group(2)), int(m.group(3))
        assert of == total
        skips = [l for l in r.stdout.splitlines() if l.startswith(f"skip: tilegym: {op}/")]
        assert exported + len(skips) == total, f"{op}: a configuration disappeared"
        assert exported == (len(ms[op]["configs"]) if op in ms else 0)
        if exported:
            assert [c["params"] for c in ms[op]["configs"]] == [
                p for p in suite_configs(suite, op) if not any(_cid(op, p) in s for s in skips)]
        if op in EXPECTED_SKIPS:
            assert skips and all(EXPECTED_SKIPS[op] in s for s in skips), skips
            assert EXPECTED_SKIPS[op] in (m.group(4) or "")
        else:
            assert not skips, skips
    covered = set(_suite_ops(SMOKE)) | set(_suite_ops(EXTRA))
    assert covered == ALL_OPS


def _cid(op, params) -> str:
    def fmt(v):
        return "None" if v is None else ("true" if v is True else "false" if v is False else str(v))
    return f"{op}/" + ",".join(f"{k}={fmt(params[k])}" for k in sorted(params))


def test_the_seven_corpus_operators_and_the_gemm_and_attention_kernels_export(smoke):
    r, out = smoke
    got = set(manifests(out))
    assert {"rms_norm", "layer_norm_legacy", "softmax", "rope", "silu_and_mul", "swiglu", "dropout", "matmul", "bmm",
            "splitk_reduce", "fmha", "flash_decode", "gemma_attention", "gemma_attention_decode", "mla",
            "mla_decoding", "mla_decoding_split_kv", "recurrent_gated_delta_rule",
            # the wrappers that copy or fill through torch: plans with copy and fill steps
            "attention_sink", "attention_sink_decode", "chunk_gated_delta_rule", "moe_align_block",
            # and its top-k sum a sum step
            "moe"} <= got
    assert got == ALL_OPS
    # The operators no plan can hold still have a manifest, with reasons and nothing else.
    assert {op for op, m in manifests(out).items() if not m["configs"]} == set(EXPECTED_SKIPS)


def _record_hashes() -> dict[str, str]:
    dist = importlib.metadata.distribution("tilegym")
    assert dist.version == "1.5.1"
    out = {}
    for f in dist.files:
        if f.hash is not None and f.hash.mode == "sha256":
            out[str(f)] = base64.urlsafe_b64decode(f.hash.value + "=" * (-len(f.hash.value) % 4)).hex()
    return out


def test_manifests_record_target_and_the_hashes_of_the_tilegym_sources(smoke, extra):
    record = _record_hashes()
    site = Path(importlib.metadata.distribution("tilegym").locate_file(""))
    for run in (smoke, extra):
        for op, m in manifests(run[1]).items():
            assert m["target"] == {"name": TARGET["name"], "arch": TARGET["arch"], "sm_count": TARGET["sm_count"]}
            assert m["toolchain"]["tilegym"] == "1.5.1"
            if not m["configs"]:   # reasons only: no cubins, so the target's arch
                assert m["frontend"] == "tilegym" and m["arch"] == TARGET["arch"] and m["unsupported"]
                continue
            assert m["frontend"] == "tilegym" and m["arch"] == "sm_90a"
            paths = [s["path"] for s in m["sources"]]
            assert paths == sorted(set(paths))
            wrapper = m["configs"][0]["tuning"]["wrapper"]
            assert wrapper.startswith("tilegym.ops.")
            module_file = wrapper.rsplit(".", 1)[0].replace(".", "/") + ".py"
            assert module_file in paths, (op, paths)
            for s in m["sources"]:
                assert s["package"] == "tilegym==1.5.1"
                assert s["sha256"] == record[s["path"]]
                assert hashlib.sha256((site / s["path"]).read_bytes()).hexdigest() == s["sha256"]


def test_bundles_validate_and_portbench_inspect_accepts_them(smoke, extra):
    for run in (smoke, extra):
        for op in manifests(run[1]):
            assert validate_bundle(run[1] / op) == [], op
    if not PORTBENCH.is_file():
        pytest.skip(f"{PORTBENCH} not built (cmake --preset ci-cpu && cmake --build --preset ci-cpu)")
    for run in (smoke, extra):
        for op in manifests(run[1]):
            r = subprocess.run([str(PORTBENCH), "inspect", str(run[1] / op)], capture_output=True, text=True)
            assert r.returncode == 0, f"{op}: {r.stderr}"
            if manifests(run[1])[op]["configs"]:
                assert "check     OK:" in r.stdout
            else:   # a bundle of reasons only: nothing checked is not OK
                assert "check     nothing to check: no plans" in r.stdout, r.stdout
                assert "check     OK:" not in r.stdout


def test_group_gemm_passes_its_lists_as_array_tables_the_cubin_takes(smoke):
    """tilegym's group_gemm takes As, Bs, Cs as cuTile lists: per list an array_table of the
    operator's a0.., b0.., c0.. (address, extents, strides per tensor) and the list's length,
    which is what the compiled entry takes (a ptr<i64> and an i32 per list) and reads (a
    [len, 5] tensor view of i64 words with strides [5, 1]: rank-2 items, packed)."""
    _, out = smoke
    m = manifests(out)["group_gemm"]
    assert m["configs"] and not m.get("unsupported")
    for c in m["configs"]:
        g = c["params"]["num_groups"]
        for plan in [c, *c.get("variants", [])]:
            [launch] = plan["launches"]
            tables = [{"kind": "array_table", "tensors": [f"{p}{i}" for i in range(g)], "rank": 2, "index_type": "i32"}
                      for p in "abc"]
            length = {"kind": "literal", "type": "i32", "value": g}
            assert launch["params"] == [tables[0], length, tables[1], length, tables[2], length]
            entry = inspect_cubin(out / "group_gemm" / launch["cubin"]).entries[launch["entry"]]
            assert [(o, s) for _, o, s in entry.params] == [(0, 8), (8, 4), (16, 8), (24, 4), (32, 8), (40, 4)]
            [cubin] = [x for x in m["cubins"] if x["file"] == launch["cubin"]]
            ir = (out / "group_gemm" / cubin["ir"][0]).read_text()
            assert re.search(r"entry @\w+\((%arg\d+: tile<ptr<i64>>, %arg\d+: tile<i32>(, )?){3}\)", ir), ir[:400]
            assert ir.count("tensor_view<?x5xi64, strides=[5,1]>") >= 3


def _config(out: Path, op: str) -> dict:
    return manifests(out)[op]["configs"][0]


def test_variants_are_tilegyms_candidates_and_the_default_is_its_untuned_choice(smoke):
    _, out = smoke
    # matmul (sm_90 takes the Blackwell list: 4 candidates) has no autotune-off path: first candidate.
    mm = _config(out, "matmul")
    assert [v["name"] for v in mm["variants"]] == [
        "TILE_SIZE_M=128,TILE_SIZE_N=128,TILE_SIZE_K=32,num_ctas=1,occupancy=1",
        "TILE_SIZE_M=256,TILE_SIZE_N=256,TILE_SIZE_K=64,num_ctas=2,occupancy=1",
        "TILE_SIZE_M=256,TILE_SIZE_N=256,TILE_SIZE_K=64,num_ctas=4,occupancy=1",
        "TILE_SIZE_M=512,TILE_SIZE_N=256,TILE_SIZE_K=64,num_ctas=2,occupancy=1"]
    assert mm["tuning"]["variant"] == mm["variants"][0]["name"]
    assert mm["tuning"]["tuning_source"].startswith("default: no tuning record; first candidate")
    assert mm["launches"] == mm["variants"][0]["launches"]
    # rope with TILEGYM_DISABLE_AUTOTUNE=1 falls back to occupancy 9, one of its 4 candidates.
    rope = _config(out, "rope")
    assert [v["name"] for v in rope["variants"]] == ["occupancy=1", "occupancy=7", "occupancy=9", "occupancy=12"]
    assert rope["tuning"]["variant"] == "occupancy=9"
    assert rope["tuning"]["kernels"][0]["hints"]["occupancy"] == 9
    assert "TILEGYM_DISABLE_AUTOTUNE=1" in rope["tuning"]["tuning_source"]
    # bmm's sm_90 list: 3 x 3 tiles x 2 occupancies, all with 2-CTA clusters.
    bmm = _config(out, "bmm")
    assert len(bmm["variants"]) == 18 and all(v["launches"][0]["cluster"] == [2, 1, 1] for v in bmm["variants"])
    # rms_norm does not autotune: one plan, no variants.
    rms = _config(out, "rms_norm")
    assert "variants" not in rms and rms["tuning"]["variant"] == "default"
    for op, m in manifests(out).items():
        for c in m["configs"]:
            names = [v["name"] for v in c.get("variants", [])]
            assert len(names) == len(set(names))
            if names:
                chosen = next(v for v in c["variants"] if v["name"] == c["tuning"]["variant"])
                assert chosen["launches"] == c["launches"] and chosen["scratch"] == c["scratch"]


def test_clusters_match_the_cubins_and_grids_count_clusters(smoke):
    _, out = smoke
    mm = _config(out, "matmul")
    seen = set()
    for v in mm["variants"]:
        l = v["launches"][0]
        info = inspect_cubin((out / "matmul" / l["cubin"]).read_bytes()).entries[l["entry"]]
        ctas = v["tuning"]["kernels"][0]["hints"]["num_ctas"]
        assert l["cluster"] == [ctas, 1, 1]
        assert (list(info.cta_per_cluster) if info.cta_per_cluster else [1, 1, 1]) == l["cluster"]
        assert info.blocks_are_clusters == (ctas > 1)
        seen.add(ctas)
        # 64 x 64 output: one tile of any candidate, so one cluster (ct.launch's grid counts clusters)
        assert l["grid"] == [1, 1, 1]
    assert seen == {1, 2, 4}


def _kinds(params):
    return [p["kind"] for p in params]


def test_launch_plans_bind_named_tensors_scratch_and_literals(smoke):
    _, out = smoke
    # rms_norm: x, y, w bound to the operator's tensors; tilegym's Rstd is a declared scratch buffer.
    rms = _config(out, "rms_norm")
    m = suite_configs(SMOKE, "rms_norm")[0]["m"]
    assert rms["scratch"] == [{"name": "Rstd", "bytes": 4 * m}]
    ps = rms["launches"][0]["params"]
    assert [p.get("tensor") or p.get("name") for p in ps if p["kind"] in ("ptr", "scratch")] == ["x", "y", "w", "Rstd"]
    assert rms["launches"][0]["grid"] == [TARGET["sm_count"], 1, 1]          # static persistent: min(SMs, tiles)
    # flash_decode: the split-KV kernel, then splitk_reduce, through two scratch buffers.
    fd = _config(out, "flash_decode")
    assert [l["entry"].rsplit("_", 1)[0] for l in fd["launches"]] == ["attention_decode_kernel_grouped",
                                                                       "splitk_reduce_kernel"]
    names = [s["name"] for s in fd["scratch"]]
    for l in fd["launches"]:
        assert {p["name"] for p in l["params"] if p["kind"] == "scratch"} == set(names)
    assert fd["launches"][1]["params"][-7]["tensor"] == "o"
    # rope runs in place on the [B,H,S,D] views: every extent and stride binds to q/k/cos/sin.
    rope = _config(out, "rope")
    ps = rope["launches"][0]["params"]
    assert "literal" not in _kinds(ps)
    assert [p["tensor"] for p in ps if p["kind"] == "ptr"] == ["q", "k", "cos", "sin"]
    # silu_and_mul runs on x.view(-1, 2H): the merged row extent is a literal, the rest bind.
    silu = _config(out, "silu_and_mul")
    c = suite_configs(SMOKE, "silu_and_mul")[0]
    ps = silu["launches"][0]["params"]
    assert ps[1] == {"kind": "literal", "type": "i32", "value": c["batch"] * c["seq_len"]}
    assert ps[2] == {"kind": "extent", "tensor": "x", "dim": 2, "type": "i32"}
    # mla_decoding returns (o, lse): both are the reference's outputs, no scratch.
    mla = _config(out, "mla_decoding")
    assert mla["scratch"] == [] and {"o", "lse"} <= {p.get("tensor") for p in mla["launches"][0]["params"]}


def _steps(launches: list[dict]) -> list[str]:
    return [l.get("step", "kernel") for l in launches]


def _dense(shape: list[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


def test_the_wrappers_copies_and_fills_are_plan_steps(smoke):
    _, out = smoke
    # attention_sink: q, k, v transposed to [B, H, S, D] by copies into the buffers the kernel
    # reads, the kernel, and its output transposed back into o.
    sink = _config(out, "attention_sink")
    c = suite_configs(SMOKE, "attention_sink")[0]
    b, sq, skv, hkv, g, d = (c[k] for k in ("batch", "num_queries", "num_keys", "num_kv_heads", "num_kv_groups",
                                             "head_dim"))
    for plan in [sink] + sink["variants"]:
        ls = plan["launches"]
        assert _steps(ls) == ["copy", "copy", "copy", "kernel", "copy"]
        assert [l["src"]["tensor"] for l in ls[:3]] == ["q", "k", "v"]
        kernel_scratch = [p["name"] for p in ls[3]["params"] if p["kind"] == "scratch"]
        assert [l["dst"]["scratch"] for l in ls[:3]] == kernel_scratch[:3]
        assert ls[0]["src"] == {"tensor": "q", "offset": 0, "shape": [b, hkv * g, sq, d],
                                "strides": [sq * hkv * g * d, d, hkv * g * d, 1], "type": "bf16"}
        assert ls[0]["dst"]["strides"] == _dense([b, hkv * g, sq, d])
        assert ls[1]["src"]["shape"] == [b, hkv, skv, d] and ls[1]["src"]["strides"] == [skv * hkv * d, d, hkv * d, 1]
        assert ls[4]["dst"] == {"tensor": "o", "offset": 0, "shape": [b, sq, hkv * g, d],
                                "strides": _dense([b, sq, hkv * g, d]), "type": "bf16"}
        assert ls[4]["src"]["scratch"] == kernel_scratch[3]
        assert {"name": "Start_q", "bytes": 4, "init": "zero"} in plan["scratch"]     # start_q 0
    # chunk_gated_delta_rule: the fp32 output's transpose back to [B, T, H, V] and its bf16
    # conversion are one copy into o.
    cg = _config(out, "chunk_gated_delta_rule")
    c = suite_configs(SMOKE, "chunk_gated_delta_rule")[0]
    assert _steps(cg["launches"]) == ["kernel", "kernel", "copy"]
    copy = cg["launches"][2]
    shape = [c["B"], c["T"], c["H"], c["V"]]
    assert copy["src"]["type"] == "f32" and "scratch" in copy["src"] and copy["src"]["shape"] == shape
    assert copy["dst"] == {"tensor": "o", "offset": 0, "shape": shape, "strides": _dense(shape), "type": "bf16"}
    # moe_align_block: sorted_token_ids filled with num_tokens * top_k before the four kernels.
    ma = _config(out, "moe_align_block")
    c = suite_configs(SMOKE, "moe_align_block")[0]
    padded = c["num_tokens"] * c["top_k"] + c["n_experts"] * (c["block_size"] - 1)
    assert _steps(ma["launches"]) == ["fill", "kernel", "kernel", "kernel", "kernel"]
    assert ma["launches"][0] == {"step": "fill", "value": c["num_tokens"] * c["top_k"],
                                 "target": {"tensor": "sorted_token_ids", "offset": 0, "shape": [padded], "strides": [1],
                                            "type": "i32"}}
    # attention_sink_decode: the caller's start_q tensor (num_keys - 1) is scratch initialised with
    # the value; k and v are copied to [B, Hkv, S, D] before the split-KV kernel and its reduction.
    asd = _config(out, "attention_sink_decode")
    c = suite_configs(SMOKE, "attention_sink_decode")[0]
    assert {"name": "Start_q", "bytes": 4, "init": {"fill": c["num_keys"] - 1, "type": "i32"}} in asd["scratch"]
    assert _steps(asd["launches"]) == ["copy", "copy", "kernel", "kernel"]
    assert [l["src"]["tensor"] for l in asd["launches"][:2]] == ["k", "v"]


def test_extra_operators_export_with_and_without_steps(extra):
    r, out = extra
    # One query: q.transpose(1, 2) of [B, 1, H, D] and the output's transpose back are views.
    sink = _config(out, "attention_sink")
    assert _steps(sink["launches"]) == ["copy", "copy", "kernel"]
    assert [l["src"]["tensor"] for l in sink["launches"][:2]] == ["k", "v"]
    assert any(p.get("tensor") == "o" for p in sink["launches"][2]["params"])
    one, default = manifests(out)["attention_sink_decode"]["configs"]
    # One kv head: k.transpose(1, 2) of [B, S, 1, D] is already contiguous, so no copy.
    assert {"name": "Start_q", "bytes": 4, "init": "zero"} in one["scratch"]
    assert _steps(one["launches"]) == ["kernel", "kernel"]
    assert _steps(default["launches"]) == ["copy", "copy", "kernel", "kernel"]
    assert {"fill": 2047, "type": "i32"} in [s.get("init") for s in default["scratch"]]
    ma = _config(out, "moe_align_block")
    assert ma["launches"][0]["step"] == "fill" and ma["launches"][0]["value"] == 128
    assert "skip:" not in r.stdout


def _copy_site(dst: Path) -> Path:
    dist = importlib.metadata.distribution("tilegym")
    site = Path(dist.locate_file(""))
    shutil.copytree(site / "tilegym", dst / "tilegym", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(site / "tilegym-1.5.1.dist-info", dst / "tilegym-1.5.1.dist-info")
    return dst


def _one_config_suite(tmp_path: Path, op: str, suite: Path = SMOKE) -> Path:
    cfg = next(c for c in json.loads(suite.read_text())["configs"] if c["op"] == op)
    p = tmp_path / f"{op}.json"
    p.write_text(json.dumps({"suite": op, "configs": [cfg]}))
    return p


def test_a_changed_tilegym_source_is_refused(tmp_path, export_env):
    site = _copy_site(tmp_path / "site")
    suite = _one_config_suite(tmp_path, "rms_norm")
    ok = _export(export_env, suite, tmp_path / "ok", PORTBENCH_TILEGYM_SITE=str(site))
    assert ok.returncode == 0, ok.stderr          # the unchanged copy loads
    changed = site / "tilegym" / "ops" / "cutile" / "rms_norm.py"
    changed.write_text(changed.read_text().replace("TILE_SIZE_M = 16", "TILE_SIZE_M = 32"))
    r = _export(export_env, suite, tmp_path / "bad", PORTBENCH_TILEGYM_SITE=str(site))
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert str(changed) in lines[0] and "differs from tilegym==1.5.1's RECORD" in lines[0]
    assert not (tmp_path / "bad" / "rms_norm").exists()


def test_a_missing_tilegym_is_one_line(tmp_path, export_env):
    r = _export(export_env, _one_config_suite(tmp_path, "rms_norm"), tmp_path / "o",
                PORTBENCH_TILEGYM_SITE=str(tmp_path / "nowhere"))
    assert r.returncode == 1 and "tilegym-1.5.1.dist-info/RECORD: not found" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def _record(tmp_path: Path, choices: list[dict], **over) -> Path:
    doc = {"schema": "portbench.tuning-record/1", "frontend": "tilegym", "target": "h200",
           "made_by": "test_tilegym_export.py (hand-made)", "gpu": "NVIDIA H200", "date": "2026-11-30",
           "choices": choices, **over}
    p = tmp_path / "tilegym-h200.json"
    p.write_text(json.dumps(doc))
    return p


def test_the_tuning_record_picks_the_variant(tmp_path, export_env):
    by_op = {c["op"]: c for c in json.loads(SMOKE.read_text())["configs"]}
    cfgs = [by_op["matmul"], by_op["rope"]]
    extra_rope = {"op": "rope", "params": dict(cfgs[1]["params"], seq_len=2)}     # not in the record
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"suite": "s", "configs": cfgs + [extra_rope]}))
    mm_choice = "TILE_SIZE_M=256,TILE_SIZE_N=256,TILE_SIZE_K=64,num_ctas=4,occupancy=1"
    rec = _record(tmp_path, [
        {"op": "matmul", "params": cfgs[0]["params"], "variant": mm_choice, "speedup_over_default": 1.2, "candidates": 4},
        {"op": "rope", "params": cfgs[1]["params"], "variant": "occupancy=1", "speedup_over_default": 1.1,
         "candidates": 4}])
    r = _export(export_env, suite, tmp_path / "out", "--tuning", str(rec))
    assert r.returncode == 0, r.stderr
    ms = manifests(tmp_path / "out")
    for op, name in (("matmul", mm_choice), ("rope", "occupancy=1")):
        c = ms[op]["configs"][0]
        assert c["tuning"]["variant"] == name and c["tuning"]["tuning_source"] == f"record {rec}"
        chosen = next(v for v in c["variants"] if v["name"] == name)
        assert c["launches"] == chosen["launches"]
    mm = ms["matmul"]["configs"][0]
    assert mm["launches"][0]["cluster"] == [4, 1, 1]
    other = ms["rope"]["configs"][1]
    assert other["tuning"]["variant"] == "occupancy=9"
    assert other["tuning"]["tuning_source"].startswith(f"default: not in tuning record {rec}")


def test_chosen_only_compiles_and_writes_only_the_chosen_plan(tmp_path, export_env):
    by_op = {c["op"]: c for c in json.loads(SMOKE.read_text())["configs"]}
    mm = by_op["matmul"]
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"suite": "s", "configs": [mm]}))
    choice = "TILE_SIZE_M=256,TILE_SIZE_N=256,TILE_SIZE_K=64,num_ctas=4,occupancy=1"
    rec = _record(tmp_path, [{"op": "matmul", "params": mm["params"], "variant": choice}])
    full = _export(export_env, suite, tmp_path / "full", "--tuning", str(rec))
    only = _export(export_env, suite, tmp_path / "only", "--tuning", str(rec), "--chosen-only")
    assert full.returncode == 0 and only.returncode == 0, full.stderr + only.stderr
    f, o = manifests(tmp_path / "full")["matmul"], manifests(tmp_path / "only")["matmul"]
    fc, oc = f["configs"][0], o["configs"][0]
    assert "variants" not in oc and len(fc["variants"]) > 1
    assert oc["tuning"]["variant"] == choice and oc["launches"] == fc["launches"]
    assert oc["tuning"]["variants"] == f"not exported (--chosen-only; {len(fc['variants'])} distinct candidate plans)"
    # Only the chosen plan's kernel is compiled: one cubin, the one the full export's chosen plan names.
    assert sorted(c["file"] for c in o["cubins"]) == sorted({l["cubin"] for l in fc["launches"]})
    assert len(f["cubins"]) > len(o["cubins"])
    assert validate_bundle(tmp_path / "only" / "matmul") == []


def test_a_bad_tuning_record_is_one_line_naming_it(tmp_path, export_env):
    suite = _one_config_suite(tmp_path, "rope")
    params = json.loads(suite.read_text())["configs"][0]["params"]
    unknown = _record(tmp_path, [{"op": "rope", "params": params, "variant": "occupancy=3"}])
    r = _export(export_env, suite, tmp_path / "a", "--tuning", str(unknown))
    assert r.returncode == 1 and str(unknown) in r.stderr and "'occupancy=3'" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    other = _record(tmp_path, [], frontend="cutile_python")
    r = _export(export_env, suite, tmp_path / "b", "--tuning", str(other))
    assert r.returncode == 2 and "'frontend' is 'cutile_python'" in r.stderr


def test_a_record_measured_on_another_card_is_refused(tmp_path, export_env):
    """The record names the card `portbench tune` ran on; the target description (h200) names the
    card its choices are for. An H100's timings must not choose the H200's plans."""
    suite = _one_config_suite(tmp_path, "rope")
    params = json.loads(suite.read_text())["configs"][0]["params"]
    h100 = _record(tmp_path, [{"op": "rope", "params": params, "variant": "occupancy=1"}], gpu="NVIDIA H100 80GB HBM3")
    r = _export(export_env, suite, tmp_path / "a", "--tuning", str(h100))
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert str(h100) in r.stderr and "'gpu' is 'NVIDIA H100 80GB HBM3'" in r.stderr and "'NVIDIA H200'" in r.stderr
    assert not (tmp_path / "a" / "rope" / "manifest.json").exists()
    # A record written by hand for a purpose names no card and is taken as it is.
    hand = tmp_path / "hand.json"
    doc = json.loads(h100.read_text())
    del doc["gpu"]
    hand.write_text(json.dumps(doc))
    r = _export(export_env, suite, tmp_path / "b", "--tuning", str(hand))
    assert r.returncode == 0, r.stderr
    assert manifests(tmp_path / "b")["rope"]["configs"][0]["tuning"]["variant"] == "occupancy=1"


# A configuration tilegym's own wrapper refuses (its non-persistent matmul asserts on a transposed
# A): since group_gemm and moe have plans, none of the smoke suite's is skipped.
REFUSED = {"op": "matmul", "params": {"m": 256, "n": 256, "k": 256, "offset_a": 0, "offset_b": 0, "dtype": "float16",
                                      "transpose_a": True, "transpose_b": False, "static_persistent": False,
                                      "use_tma": True}}


def test_skipped_configurations_carry_their_reasons_to_portbench_run(tmp_path, export_env):
    """Every skip line is in its manifest's unsupported[] with the same reason; an operator with
    no plan at all still gets a manifest (no cubins, no configs), and `portbench run` names the
    reason in its unpaired list."""
    suite = tmp_path / "refused.json"
    suite.write_text(json.dumps({"suite": "refused", "configs": [REFUSED]}))
    out = tmp_path / "tilegym"
    r = _export(export_env, suite, out)
    assert r.returncode == 0, r.stderr
    ms = manifests(out)
    skips = [l for l in r.stdout.splitlines() if l.startswith("skip: tilegym: ") and "/" in l.split(": ")[2]]
    assert len(skips) == 1, r.stdout
    for line in skips:
        cid, reason = line[len("skip: tilegym: "):].split(": ", 1)
        op = cid.split("/")[0]
        listed = [_cid(op, u["params"]) + ": " + u["reason"] for u in ms[op].get("unsupported", [])]
        assert f"{cid}: {reason}" in listed, (line, listed)
    mm = ms["matmul"]
    assert (mm["cubins"], mm["configs"]) == ([], [])
    assert all("trans_a is not supported" in u["reason"] for u in mm["unsupported"])
    assert validate_bundle(out / "matmul") == []
    if not PORTBENCH.is_file():
        pytest.skip(f"{PORTBENCH} not built (cmake --preset ci-cpu && cmake --build --preset ci-cpu)")
    run = subprocess.run([str(PORTBENCH), "run", "--ref", str(out / "matmul"), "--port", str(out / "matmul"),
                          "--suite", str(suite)], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    unpaired = [l for l in run.stderr.splitlines() if l.startswith("portbench: not paired: matmul/")]
    assert len(unpaired) == 1, run.stderr
    assert all("the reference bundle has no plan for it (tilegym: " in l and "trans_a is not supported" in l
               for l in unpaired), unpaired
