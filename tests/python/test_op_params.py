# SPDX-License-Identifier: Apache-2.0
"""Operator parameters read as reference/src/ops reads them, and the dropout generator contract
(reference/src/ops/dropout.cpp: cutile_uniform, keep iff u > p) that both front ends compile in."""
from __future__ import annotations

import json

import pytest

from conftest import manifests
from portbench_export import opparams
from portbench_export.suite import Config, SuiteError


def cfg(op, **params):
    return Config(0, op, params)


@pytest.mark.parametrize("p", [0.0, 0.1, 0.25, 0.3, 0.5, 0.75, 0.9, 0.999999, 1 / 3])
def test_dropout_threshold_matches_the_reference_double_comparison(p):
    t = opparams.dropout_keep_threshold(p)
    c = opparams.DROPOUT_DIVISOR
    assert t / c > p and (t == 0 or not (t - 1) / c > p)


def test_dropout_hash_matches_the_reference_formula():
    # reference: r = uint32(i) * 1103515245 + seed; r ^= r >> 16; r ^= r << 8; r ^= r >> 4; r & 0x7fffffff
    def ref(i, seed):
        r = ((i & 0xFFFFFFFF) * 1103515245 + seed) % 2**32
        r ^= r >> 16
        r = (r ^ (r << 8)) % 2**32
        r ^= r >> 4
        return r & 0x7FFFFFFF
    for i in (0, 1, 2, 12345, 2**31 - 1):
        for seed in (0, 7, 2**32 - 1):
            assert opparams.cutile_uniform_bits(i, seed) == ref(i, seed)
    # about half of the elements survive p = 0.5
    t = opparams.dropout_keep_threshold(0.5)
    kept = sum(opparams.cutile_uniform_bits(i, 0) >= t for i in range(20000))
    assert abs(kept / 20000 - 0.5) < 0.02


def test_reference_defaults():
    assert opparams.dropout(cfg("dropout", m=4)) == (0.5, False, True, 0)
    assert opparams.dropout(cfg("dropout", m=4, inplace=1, training="False", rng_seed=-1)) == (0.5, True, False, 2**32 - 1)
    assert opparams.layer_norm(cfg("layer_norm_legacy", m=1, n=1)) == (False, 1e-5, 0.0)
    assert opparams.layer_norm(cfg("layer_norm_legacy", variant="persistent_layer_norm")) == (True, 1e-6, 0.0)
    with pytest.raises(SuiteError):
        opparams.layer_norm(cfg("layer_norm_legacy", variant="fast"))
    assert opparams.rope_dim(cfg("rope", head_dim=256, partial_rotary_factor=0.25)) == 64
    with pytest.raises(SuiteError):
        opparams.rope_dim(cfg("rope", head_dim=6, partial_rotary_factor=0.5))


@pytest.mark.parametrize("fe", ["cutile_python", "triton"])
def test_literals_follow_the_configuration(fe, smoke_runs, edge_runs):
    for runs in (smoke_runs, edge_runs):
        ms = manifests(runs[fe].out)
        for c in ms["dropout"]["configs"]:
            p, _, training, seed = opparams.dropout(cfg("dropout", **c["params"]))
            lits = [q for q in c["launches"][0]["params"] if q["kind"] == "literal"]
            assert lits[0] == {"kind": "literal", "type": "u32", "value": seed}
            assert lits[1]["value"] == opparams.dropout_keep_threshold(p)
            assert lits[2]["value"] == pytest.approx(1 / (1 - p))
        for c in ms["layer_norm_legacy"]["configs"]:
            _, eps, shift = opparams.layer_norm(cfg("layer_norm_legacy", **c["params"]))
            lits = [q["value"] for q in c["launches"][0]["params"] if q["kind"] == "literal"]
            assert lits == [eps, shift]


@pytest.mark.parametrize("fe", ["cutile_python", "triton"])
def test_uncovered_configurations_are_skipped_with_a_reason(fe, tmp_path, run_export):
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"configs": [
        {"op": "rms_norm", "params": {"m": 4, "n": 64, "dtype": "float16", "offset": 1.0}},
        {"op": "layer_norm_legacy", "params": {"m": 4, "n": 20000, "dtype": "float16"}},
        {"op": "rms_norm", "params": {"m": 4, "n": 64, "dtype": "float16", "mode": "multi_wave_reload"}},
    ]}))
    r = run_export(fe, suite, tmp_path / "out")
    assert r.rc == 0, r.stderr
    assert "offset != 0" in r.stdout
    if fe == "triton":
        assert "n=20000 is wider" in r.stdout
        ms = manifests(r.out)
        assert sorted(ms) == ["layer_norm_legacy", "rms_norm"]
        # An operator none of whose configurations is supported keeps a bundle of reasons only.
        ln = ms["layer_norm_legacy"]
        assert ln["configs"] == [] and ln["cubins"] == []
        assert any("n=20000 is wider" in u["reason"] for u in ln["unsupported"])
    else:   # cuTile Python walks wide layer_norm rows in column chunks
        assert sorted(manifests(r.out)) == ["layer_norm_legacy", "rms_norm"]


def test_suite_tuning_overrides_are_used_and_recorded(tmp_path, run_export):
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"configs": [
        {"op": "silu_and_mul", "params": {"batch": 2, "seq_len": 128, "hidden_size": 1024, "dtype": "float16"},
         "tuning": {"occupancy": 2, "block_rows": 8}},
        {"op": "rms_norm", "params": {"m": 64, "n": 1024, "dtype": "float16"}, "tuning": {"tile": 256}},
    ]}))
    r = run_export("cutile_python", suite, tmp_path / "out")
    assert r.rc == 0, r.stderr
    ms = manifests(r.out)
    silu = ms["silu_and_mul"]["configs"][0]
    assert (silu["tuning"]["occupancy"], silu["tuning"]["tile_s"]) == (2, 8)
    entry = silu["launches"][0]["entry"]
    assert entry.endswith("_s8_t1024_occ2")
    assert "occupancy = 2" in (r.out / "silu_and_mul" / f"{entry}.tileir.txt").read_text()
    rms = ms["rms_norm"]["configs"][0]["tuning"]   # a chunk width selects the looping kernel
    assert (rms["tile_n"], rms["single_tile_row"], rms["occupancy"]) == (256, False, 4)


def test_layer_norm_tuning_knobs_reach_the_kernels(tmp_path, run_export):
    ln = {"variant": "persistent_layer_norm", "m": 64, "n": 10000, "dtype": "bfloat16", "eps": 1e-06}
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"configs": [
        {"op": "layer_norm_legacy", "params": ln, "tuning": {"warps": 8, "latency": 6}},
        {"op": "layer_norm_legacy", "params": dict(ln, m=32), "tuning": {"single": 1, "no_tma": 1}},
    ]}))
    r = run_export("cutile_python", suite, tmp_path / "out")
    assert r.rc == 0, r.stderr
    looped, single = ms = manifests(r.out)["layer_norm_legacy"]["configs"]
    assert (looped["tuning"]["warps"], looped["tuning"]["latency"], looped["tuning"]["single_tile_row"]) == (8, 6, False)
    assert looped["launches"][0]["entry"].endswith("_occ4_w8_lat6")
    assert (single["tuning"]["tile_n"], single["tuning"]["single_tile_row"], single["tuning"]["allow_tma"]) == (16384, True, False)
    ir = [(r.out / "layer_norm_legacy" / f"{c['launches'][0]['entry']}.tileir.txt").read_text() for c in ms]
    assert "num_worker_warps_per_cta = 8" in ir[0] and "latency = 6" in ir[0]
    assert "allow_tma = false" in ir[1] and "latency" not in ir[1]


def test_swiglu_tiles_spread_small_problems_over_the_sms():
    from portbench_export.cutile_python import swiglu_tiles
    assert swiglu_tiles(8, 1, 4096, sms=132) == (1, 256)        # tilegym's: 128 tile blocks, as the Rust port
    assert swiglu_tiles(2, 16, 4096, sms=132) == (1, 512)       # smoke: 256 blocks
    assert swiglu_tiles(1, 1, 64, sms=132) == (1, 64)           # smaller than a 256 tile: one block
    assert swiglu_tiles(64, 1024, 14336, sms=132) == (2, 4096)  # large: untouched


def test_cuda_cpp_layer_norm_covers_the_row_with_the_fewest_packs_per_thread(tmp_path, run_export):
    from portbench_export.cli import Unsupported
    from portbench_export.cuda_cpp import layer_norm_block
    assert layer_norm_block(10000, 2) == ("v", 4, 320)      # 1250 16-byte vectors
    assert layer_norm_block(16384, 2) == ("v", 4, 512)
    assert layer_norm_block(32, 2) == ("v", 1, 32)
    assert layer_norm_block(10000, 2, 8) == ("v", 8, 160)
    assert layer_norm_block(1001, 2) == ("s", 2, 512)       # not a multiple of 8: elements
    with pytest.raises(Unsupported):
        layer_norm_block(10000, 2, 3)
    with pytest.raises(Unsupported):
        layer_norm_block(10000, 2, 1)                        # 1250 threads
    with pytest.raises(Unsupported):
        layer_norm_block(5001, 2)                            # 5001 elements > 8 x 512
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"configs": [
        {"op": "layer_norm_legacy", "params": {"m": 8, "n": 1000, "dtype": "float16"}},
        {"op": "layer_norm_legacy", "params": {"m": 8, "n": 1001, "dtype": "float16"}},
        {"op": "layer_norm_legacy", "params": {"m": 8, "n": 5001, "dtype": "float16"}}]}))
    r = run_export("cuda_cpp", suite, tmp_path / "out")
    assert r.rc == 0 and "n=5001: the row needs more than 8 elements per thread" in r.stdout, (r.stdout, r.stderr)
    vec, ele = manifests(r.out)["layer_norm_legacy"]["configs"]
    assert (vec["launches"][0]["entry"], vec["launches"][0]["block"][0]) == ("layer_norm_f16_v1", 128)
    assert (ele["launches"][0]["entry"], ele["launches"][0]["block"][0]) == ("layer_norm_f16_s2", 512)
    assert ele["tuning"]["base_align_bytes"] == 2


@pytest.mark.parametrize("tuning", [{"occupancy": "many"}, {"tiles": 4}, {"block_rows": 0}, [4]])
def test_malformed_tuning_is_a_suite_error(tuning, tmp_path, run_export):
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"configs": [
        {"op": "rms_norm", "params": {"m": 64, "n": 1024, "dtype": "float16"}, "tuning": tuning}]}))
    r = run_export("cutile_python", suite, tmp_path / "out")
    assert r.rc == 2 and "configs[0]: 'tuning'" in r.stderr, (r.rc, r.stderr)
