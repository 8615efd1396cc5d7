# SPDX-License-Identifier: Apache-2.0
"""The bundles each exporter writes for the smoke and edge suites: manifests valid against the
schema, cubins real ELF images for sm_90/sm_90a whose SASS holds every launched entry, and
manifest parameters that pack to exactly the cubin's own KPARAM_INFO table."""
from __future__ import annotations

import re

import pytest

from conftest import EDGE, FRONTENDS, REPO, SMOKE, manifests, suite_configs
from portbench_export import SCHEMA
from portbench_export.cubin import inspect_cubin, layout_mismatch, sass_summary
from portbench_export.manifest import pack, param_bytes
from portbench_export.schema import validate_bundle
from portbench_export.triton import ptx_entry_params

EXPECTED_ARCH = {"cutile_python": "sm_90a", "triton": "sm_90a", "cuda_cpp": "sm_90"}
SUITES = {"smoke": SMOKE, "edge": EDGE}
BASE_OPS = {"vector_add", "rms_norm"}
NEW_OPS = {"layer_norm_legacy", "softmax", "rope", "silu_and_mul", "swiglu", "dropout"}
FE_OPS = {"cutile_python": BASE_OPS | NEW_OPS, "triton": BASE_OPS | NEW_OPS, "cuda_cpp": BASE_OPS | {"layer_norm_legacy"}}


def _suite_ops(suite) -> set[str]:
    import json
    return {c["op"] for c in json.loads(suite.read_text())["configs"]}


@pytest.fixture(params=["smoke", "edge"])
def suite_run(request, smoke_runs, edge_runs):
    runs = smoke_runs if request.param == "smoke" else edge_runs
    return request.param, runs


@pytest.mark.parametrize("fe", FRONTENDS)
def test_export_succeeds_and_validates(fe, suite_run):
    name, runs = suite_run
    r = runs[fe]
    assert r.rc == 0, r.stderr
    assert r.stderr.strip() == "" or "error" not in r.stderr
    ms = manifests(r.out)
    assert set(ms) == FE_OPS[fe] & _suite_ops(SUITES[name])
    if name == "smoke":   # the smoke suite has every operator of every front end
        assert set(ms) == FE_OPS[fe]
    for op, m in ms.items():
        assert f"exported {fe}/{op}:" in r.stdout
        assert validate_bundle(r.out / op) == [], f"{fe}/{op}"
        assert m["schema"] == SCHEMA and m["frontend"] == fe and m["operator"] == op
        # every configuration of the suite, in order, with its parameters untouched
        assert [c["params"] for c in m["configs"]] == suite_configs(SUITES[name], op)
        assert not [p for p in r.out.iterdir() if p.name.startswith(".")], "temp folders left behind"


@pytest.mark.parametrize("fe", FRONTENDS)
def test_toolchain_versions_are_read_from_the_tools(fe, smoke_runs):
    m = manifests(smoke_runs[fe].out)["vector_add"]
    tc = m["toolchain"]
    if fe == "cutile_python":
        import cuda.tile as ct
        assert tc["cuda-tile"] == ct.__version__ == "1.7.0"
        assert re.fullmatch(r"13\.4\.\d+", tc["tileiras"])
        assert tc["tileir-bytecode"] == "13.4"
    elif fe == "triton":
        import triton
        assert tc["triton"] == triton.__version__ == "3.6.0"
        assert re.fullmatch(r"\d+\.\d+\.\d+", tc["ptxas"])
    else:
        assert tc["nvrtc"] == "13.0"
        assert tc["nvidia-cuda-nvrtc"].startswith("13.0.")


@pytest.mark.parametrize("fe", FRONTENDS)
def test_cubins_are_sm90_elf_with_every_entry_in_sass(fe, suite_run):
    _, runs = suite_run
    for op, m in manifests(runs[fe].out).items():
        assert m["arch"] == EXPECTED_ARCH[fe]
        for c in m["cubins"]:
            path = runs[fe].out / op / c["file"]
            data = path.read_bytes()
            assert data[:4] == b"\x7fELF" and data[4] == 2, f"{path} is not a 64-bit ELF"
            info = inspect_cubin(path)
            assert info.arch == m["arch"]
            archs, funcs = sass_summary(path)
            assert archs == {m["arch"]}, f"{path}: SASS for {archs}"
            entries = {l["entry"] for cfg in m["configs"] for l in cfg["launches"] if l["cubin"] == c["file"]}
            assert entries, f"{c['file']} is never launched"
            for e in entries:
                assert e in funcs, f"{e} has no SASS in {c['file']} (functions {funcs})"
                assert e in info.entries, f"{e} is not an STO_ENTRY symbol of {c['file']}"


@pytest.mark.parametrize("fe", FRONTENDS)
def test_params_match_kparam_info(fe, suite_run):
    _, runs = suite_run
    for op, m in manifests(runs[fe].out).items():
        infos = {c["file"]: inspect_cubin(runs[fe].out / op / c["file"]) for c in m["cubins"]}
        for cfg in m["configs"]:
            for l in cfg["launches"]:
                info = infos[l["cubin"]]
                assert layout_mismatch(info, l["entry"], l["params"]) is None
                e = info.entries[l["entry"]]
                layout, end = pack(l["params"])
                assert len(e.params) == len(l["params"])
                assert [size for _, _, size in e.params] == [param_bytes(p) for p in l["params"]]
                assert [off for _, off, _ in e.params] == [off for off, _ in layout]
                if fe == "cutile_python":
                    assert e.cbank_param_size >= end      # Tile IR entries may reserve more
                else:
                    assert e.cbank_param_size == end


def _array_abi(params, tensor, rank, itype):
    return params[: 1 + 2 * rank] == (
        [{"kind": "ptr", "tensor": tensor}]
        + [{"kind": "extent", "tensor": tensor, "dim": d, "type": itype} for d in range(rank)]
        + [{"kind": "stride", "tensor": tensor, "dim": d, "type": itype} for d in range(rank)])


def _cutile_expected(op: str, p: dict) -> list:
    """(tensor, rank) arrays then literal types of each cuTile entry, per docs/exporters.md."""
    if op == "vector_add":
        return [("x", 1), ("y", 1), ("out", 1)]
    if op == "rms_norm":
        return [("x", 2), ("w", 1), ("y", 2), "f32"]
    if op == "softmax":
        return [("x", 2), ("y", 2)]
    if op == "layer_norm_legacy":
        stats = [("mean", 1), ("rstd", 1)] if p.get("variant") == "persistent_layer_norm" else []
        return [("x", 2), ("w", 1), ("b", 1), ("y", 2)] + stats + ["f32", "f32"]
    if op == "rope":
        return [("q", 4), ("k", 4), ("cos", 3), ("sin", 3)]
    if op == "silu_and_mul":
        return [("x", 3), ("y", 3)]
    if op == "swiglu":
        return [("a", 3), ("b", 3), ("c", 3)]
    if op == "dropout":
        return ([("x", 1)] if p.get("inplace") else [("x", 1), ("y", 1)]) + ["u32", "u32", "f32"]
    raise KeyError(op)


def test_cutile_abi(smoke_runs, edge_runs):
    for runs in (smoke_runs, edge_runs):
        out = runs["cutile_python"].out
        for op, m in manifests(out).items():
            for cfg in m["configs"]:
                (l,) = cfg["launches"]
                assert l["block"] == [1, 1, 1] and l["shared_bytes"] == 0 and l["cluster"] == [1, 1, 1]
                p = l["params"]
                itype = cfg["tuning"]["index_type"]
                at = 0
                for item in _cutile_expected(op, cfg["params"]):
                    if isinstance(item, tuple):
                        assert _array_abi(p[at:], item[0], item[1], itype), (op, cfg["params"], at)
                        at += 1 + 2 * item[1]
                    else:
                        assert p[at]["kind"] == "literal" and p[at]["type"] == item, (op, at)
                        at += 1
                assert at == len(p)
                tu = cfg["tuning"]
                if op == "vector_add":
                    assert l["grid"] == [-(-cfg["params"]["n"] // tu["tile"]), 1, 1]
                elif op in ("rms_norm", "softmax", "layer_norm_legacy"):
                    assert l["grid"] == [-(-cfg["params"]["m"] // tu["tile_m"]), 1, 1]
                    tile_n = tu["tile_n"]
                    assert tile_n & (tile_n - 1) == 0
                    assert (tile_n >= cfg["params"]["n"]) == tu["single_tile_row"]
                if op == "rms_norm":
                    assert p[13] == {"kind": "literal", "type": "f32", "value": cfg["params"].get("eps", 1e-5)}
                    if "mode" in cfg["params"]:
                        assert tu["mode"] == cfg["params"]["mode"]
                # the Tile IR text is kept and its entry takes exactly these arguments
                (ir,) = [c["ir"] for c in m["cubins"] if c["file"] == l["cubin"]][0]
                text = (out / op / ir).read_text()
                head = re.search(rf"entry @{re.escape(l['entry'])}\((.*?)\)\s*optimization_hints", text)
                assert head, f"no entry @{l['entry']} in {ir}"
                assert len(re.findall(r"%arg\d+:", head.group(1))) == len(p)


TRITON_ENTRIES = {"layer_norm_legacy": ("layer_norm_legacy_kernel", "persistent_layer_norm_kernel"),
                  "dropout": ("dropout_kernel", "dropout_inplace_kernel")}


def test_triton_abi(smoke_runs, edge_runs):
    for runs in (smoke_runs, edge_runs):
        out = runs["triton"].out
        for op, m in manifests(out).items():
            for cfg in m["configs"]:
                (l,) = cfg["launches"]
                assert l["block"] == [32 * cfg["tuning"]["num_warps"], 1, 1]
                assert l["params"][-2:] == [{"kind": "null"}, {"kind": "null"}] and cfg["scratch"] == []
                assert l["entry"] in TRITON_ENTRIES.get(op, (f"{op}_kernel",))
                irs = [c["ir"] for c in m["cubins"] if c["file"] == l["cubin"]][0]
                ptx = (out / op / [i for i in irs if i.endswith(".ptx.txt")][0]).read_text()
                assert ptx_entry_params(ptx, l["entry"]) == [param_bytes(p) for p in l["params"]]
                assert re.search(rf"\.reqntid {l['block'][0]}\b", ptx)
                ttgir = (out / op / [i for i in irs if i.endswith(".ttgir.txt")][0]).read_text()
                assert f"tt.func public @{l['entry']}" in ttgir
                # no argument was silently specialised away: inner strides are never arguments,
                # and every integer argument that is one is still in the prototype
                inner = {"q": 3, "k": 3, "cos": 2, "sin": 2} if op == "rope" else {}
                assert not any(p["kind"] == "stride" and p["dim"] == inner.get(p["tensor"], 1)
                               for p in l["params"])
                if op == "vector_add" and cfg["params"]["n"] == 1:
                    assert {"kind": "extent", "tensor": "x", "dim": 0, "type": "i32"} in l["params"]


def test_cuda_cpp_abi(smoke_runs):
    out = smoke_runs["cuda_cpp"].out
    for op, m in manifests(out).items():
        (c,) = m["cubins"]
        source = (REPO / "kernels" / "cuda_cpp" / f"{op}.cu").read_text()
        header = "portbench_device.cuh"
        shared = [f"{header}.txt"] if f'#include "{header}"' in source else []
        assert sorted(c["ir"]) == sorted([f"{op}.cu.txt", f"{op}.ptx.txt"] + shared)
        assert (out / op / f"{op}.cu.txt").read_text() == source
        for name in shared:
            assert (out / op / name).read_text() == (REPO / "kernels" / "cuda_cpp" / header).read_text()
        ptx = (out / op / f"{op}.ptx.txt").read_text()
        assert re.search(r"^\.target sm_90\b", ptx, re.M)
        for cfg in m["configs"]:
            (l,) = cfg["launches"]
            assert re.search(rf"\.visible \.entry {l['entry']}\(", ptx)
            assert ptx_entry_params(ptx, l["entry"]) == [param_bytes(p) for p in l["params"]]
            assert l["block"][0] % 32 == 0 and l["block"][0] <= 1024 and l["shared_bytes"] == 0
