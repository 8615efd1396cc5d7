# SPDX-License-Identifier: Apache-2.0
"""Unit tests of the shared pieces: parameter packing, bundle paths, the manifest validator,
the suite reader, the PTX prototype parser."""
from __future__ import annotations

import copy
import json

import pytest

from portbench_export import ExportError
from portbench_export.manifest import (Bundle, Launch, array_table, check_relpath, extent, literal, null, pack, ptr,
                                       stride)
from portbench_export.schema import validate_bundle, validate_manifest
from portbench_export.suite import SuiteError, load_suite
from portbench_export.triton import ptx_entry_params


def test_pack_natural_alignment():
    params = [ptr("x"), extent("x", 0, "i32"), ptr("y"), literal("f32", 1.0), stride("x", 0, "i64"),
              literal("i32", 3), null()]
    layout, end = pack(params)
    assert layout == [(0, 8), (8, 4), (16, 8), (24, 4), (32, 8), (40, 4), (48, 8)]
    assert end == 56


@pytest.mark.parametrize("bad", ["", "/abs.cubin", "../x.cubin", "a/../../x", "./x", "a//b", "a\\b"])
def test_relpath_rejects_escapes(bad):
    with pytest.raises(ExportError):
        check_relpath(bad)


def test_relpath_accepts_plain_names():
    assert check_relpath("k.cubin") == "k.cubin"
    assert check_relpath("sub/k.ptx.txt") == "sub/k.ptx.txt"


def _bundle(tmp_path):
    b = Bundle("fe", "vector_add", "sm_90", {"tool": "1.0"})
    b.add_cubin("k.cubin", b"\x7fELF-not-really", {"k.ptx.txt": "// ptx"})
    b.add_config({"n": 4, "dtype": "float32"},
                 [Launch("k.cubin", "k", (1, 1, 1), (32, 1, 1), [ptr("x"), extent("x", 0), literal("f32", 1e-5), null()])],
                 tuning={"t": 1})
    return b, b.write(tmp_path)


def test_tables_are_pointers_and_validate():
    t = array_table(["a0", "a1"], 2, "i32")
    assert t == {"kind": "array_table", "tensors": ["a0", "a1"], "rank": 2, "index_type": "i32"}
    layout, end = pack([t, literal("i32", 2), {"kind": "ptr_table", "tensors": ["a0"]}, literal("i32", 1)])
    assert layout == [(0, 8), (8, 4), (16, 8), (24, 4)] and end == 28


def test_validator_accepts_tables(tmp_path):
    b, _ = _bundle(tmp_path)
    doc = copy.deepcopy(b.manifest())
    doc["configs"][0]["launches"][0]["params"] += [array_table(["x"], 1, "i64"), {"kind": "ptr_table", "tensors": ["x"]}]
    assert validate_manifest(doc) == []


def test_written_bundle_validates(tmp_path):
    _, path = _bundle(tmp_path)
    assert validate_bundle(path) == []
    assert sorted(p.name for p in path.iterdir()) == ["k.cubin", "k.ptx.txt", "manifest.json"]


MUTATIONS = {
    "schema": lambda d: d.update(schema="portbench.bundle/2"),
    "unknown_top": lambda d: d.update(extra=1),
    "arch": lambda d: d.update(arch="sm_80"),
    "toolchain_empty": lambda d: d.update(toolchain={}),
    "cubin_escape": lambda d: d["cubins"][0].update(file="../k.cubin"),
    "sha_format": lambda d: d["cubins"][0].update(sha256="ABC"),
    "ir_escape": lambda d: d["cubins"][0].update(ir=["/etc/passwd"]),
    "launch_cubin_unknown": lambda d: d["configs"][0]["launches"][0].update(cubin="other.cubin"),
    "grid_zero": lambda d: d["configs"][0]["launches"][0].update(grid=[0, 1, 1]),
    "block_short": lambda d: d["configs"][0]["launches"][0].update(block=[32, 1]),
    "shared_negative": lambda d: d["configs"][0]["launches"][0].update(shared_bytes=-1),
    "param_kind": lambda d: d["configs"][0]["launches"][0]["params"].append({"kind": "weird"}),
    "param_extra_field": lambda d: d["configs"][0]["launches"][0]["params"][0].update(dim=0),
    "extent_type": lambda d: d["configs"][0]["launches"][0]["params"][1].update(type="f32"),
    "literal_range": lambda d: d["configs"][0]["launches"][0]["params"].append(
        {"kind": "literal", "type": "i32", "value": 2**31}),
    "literal_bool": lambda d: d["configs"][0]["launches"][0]["params"].append(
        {"kind": "literal", "type": "i32", "value": True}),
    "scratch_undeclared": lambda d: d["configs"][0]["launches"][0]["params"].append(
        {"kind": "scratch", "name": "ws"}),
    "array_table_no_tensors": lambda d: d["configs"][0]["launches"][0]["params"].append(
        {"kind": "array_table", "tensors": [], "rank": 1, "index_type": "i32"}),
    "array_table_rank": lambda d: d["configs"][0]["launches"][0]["params"].append(
        {"kind": "array_table", "tensors": ["x"], "rank": -1, "index_type": "i32"}),
    "array_table_index_type": lambda d: d["configs"][0]["launches"][0]["params"].append(
        {"kind": "array_table", "tensors": ["x"], "rank": 1, "index_type": "u32"}),
    "array_table_no_rank": lambda d: d["configs"][0]["launches"][0]["params"].append(
        {"kind": "array_table", "tensors": ["x"], "index_type": "i32"}),
    "ptr_table_name": lambda d: d["configs"][0]["launches"][0]["params"].append({"kind": "ptr_table", "tensors": [""]}),
    "no_configs": lambda d: d.update(configs=[]),
    "no_launches": lambda d: d["configs"][0].update(launches=[]),
    "config_extra": lambda d: d["configs"][0].update(note="x"),
}


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_validator_rejects(case, tmp_path):
    b, _ = _bundle(tmp_path)
    doc = copy.deepcopy(b.manifest())
    assert validate_manifest(doc) == []
    MUTATIONS[case](doc)
    assert validate_manifest(doc), case


def test_validator_checks_files_and_hashes(tmp_path):
    _, path = _bundle(tmp_path)
    (path / "k.cubin").write_bytes(b"tampered")
    assert any("sha256" in e for e in validate_bundle(path))
    (path / "k.ptx.txt").unlink()
    assert any("does not exist" in e for e in validate_bundle(path))


def test_validator_refuses_symlink_out_of_bundle(tmp_path):
    _, path = _bundle(tmp_path / "b")
    outside = tmp_path / "secret.txt"
    outside.write_text("x")
    (path / "k.ptx.txt").unlink()
    (path / "k.ptx.txt").symlink_to(outside)
    assert any("leaves the bundle" in e for e in validate_bundle(path))


def test_suite_reader(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"suite": "s", "configs": [{"op": "rms_norm", "params": {"m": 2, "n": 3, "dtype": "float16"}}]}))
    s = load_suite(p)
    assert s.name == "s" and s.configs[0].id() == "rms_norm/dtype=float16,m=2,n=3"
    assert s.configs[0].integer("m") == 2
    with pytest.raises(SuiteError, match="'dtype' must be an integer"):
        s.configs[0].integer("dtype")
    p.write_text('{"configs": 5}')
    with pytest.raises(SuiteError, match="'configs' must be an array"):
        load_suite(p)


def test_ptx_prototype_parser():
    ptx = """
.visible .entry k(
	.param .u64 .ptr .global .align 1 k_param_0,
	.param .u32 k_param_1,
	.param .f32 k_param_2,
	.param .align 8 .b8 k_param_3[24],
	.param .u64 k_param_4
)
.reqntid 128
"""
    assert ptx_entry_params(ptx, "k") == [8, 4, 4, 24, 8]
    with pytest.raises(ExportError):
        ptx_entry_params(ptx, "other")
