# SPDX-License-Identifier: Apache-2.0
"""scripts/plot_report.py draws the per-operator intervals the report gives, even where a
rounded or two-configuration bootstrap interval ends just short of the estimate (the nightly
suite's report made matplotlib refuse such a negative error bar)."""
from __future__ import annotations

import sys

import pandas as pd
import pytest

from conftest import REPO

pytest.importorskip("matplotlib")
sys.path.insert(0, str(REPO / "scripts"))
import plot_report  # noqa: E402


def test_an_interval_that_ends_short_of_the_estimate_is_drawn(tmp_path):
    intervals = pd.DataFrame([
        {"operator": "bmm", "estimate": 1.0030, "low": 1.00301, "high": 1.0119, "verdict": "PARITY"},
        {"operator": "swiglu", "estimate": 1.1180, "low": 1.1173, "high": 1.11799, "verdict": "PARITY"},
        {"operator": "moe", "estimate": 0.3469, "low": 0.2757, "high": 0.4375, "verdict": "BELOW_GATE"}])
    out = tmp_path / "geomean.png"
    plot_report.plot_geomeans(intervals, 0.95, out)
    assert out.stat().st_size > 1000 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
