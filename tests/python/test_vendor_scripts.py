# SPDX-License-Identifier: Apache-2.0
"""scripts/sdpa_bench.py and scripts/vendor_timing.py without a GPU: the flop count is upstream's
(4 B H S^2 D, halved for causal), the fmha configurations of the tilegym suite are selected once
each, and exactly the ones SDPA cannot run (fp8) are refused with a reason before torch runs."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def load(name):
    sys.path.insert(0, str(REPO / "scripts"))
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


sdpa = load("sdpa_bench")   # torch is imported only when it runs
timing = load("vendor_timing")


def test_flops_count_every_pair_or_the_causal_half():
    p = {"batch": 4, "heads": 32, "seq_len": 4096, "head_dim": 128, "dtype": "float16", "is_causal": False}
    assert sdpa.flops("fmha", p) == 4 * 4 * 32 * 4096 * 4096 * 128
    assert sdpa.flops("fmha", dict(p, is_causal=True)) == 2 * 4 * 32 * 4096 * 4096 * 128


def test_the_tilegym_fmha_configurations_and_the_ones_sdpa_refuses():
    cfgs = list(timing.selected_configs([str(REPO / "configs/tilegym.json")], {"fmha"}, ""))
    assert len(cfgs) == 48 and len({c.id() for c in cfgs}) == 48
    refused = [c for c in cfgs if sdpa.unsupported(c.params)]
    assert len(refused) == 16 and {c.params["dtype"] for c in refused} == {"float8_e5m2"}
    assert "float8_e5m2" in sdpa.unsupported(refused[0].params)
    only = list(timing.selected_configs([str(REPO / "configs/tilegym.json")], {"fmha"}, r"seq_len=(4096|8192)$"))
    assert len(only) == 12 and all(c.params["seq_len"] in (4096, 8192) for c in only)
