# SPDX-License-Identifier: Apache-2.0
"""The HTML report in a real headless browser (Debian's chromium, 1280 x 900): the page does not
scroll sideways, the operator table and its verdict column end inside 1280 pixels, every verdict
fits its cell, long configuration ids are cut with their whole text in the tooltip, and the
roofline view has a point per side of every configuration with flops. Layout is measured by a
script the test adds to a copy of the page; chromium --dump-dom prints the DOM after it ran.
A screenshot is written next to the report for a person to look at.

Skips, with the reason, where chromium or the exported bundles are absent (scripts/setup.sh
installs chromium; scripts/export_bundles.sh writes bundles/)."""
from __future__ import annotations

import glob
import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WIDTH = 1280

MEASURE = """<script>
const r = {viewport: window.innerWidth, scroll_width: document.documentElement.scrollWidth};
r.tables = [...document.querySelectorAll('table.fit')].map(t => t.getBoundingClientRect().right);
r.verdict_header = document.querySelector('table.operators th.verdict').getBoundingClientRect().right;
r.verdicts = [...document.querySelectorAll('table.operators td.verdict')].map(
    td => ({text: td.textContent, right: td.getBoundingClientRect().right, fits: td.scrollWidth <= td.clientWidth}));
r.ids = [...document.querySelectorAll('td.id')].map(
    td => ({title: td.title, text: td.textContent, cut: td.scrollWidth > td.clientWidth, right: td.getBoundingClientRect().right}));
r.points = document.querySelectorAll('svg.roofline .point.reference').length;
r.port_points = document.querySelectorAll('svg.roofline .point.port').length;
r.svgs = [...document.querySelectorAll('svg.roofline')].map(s => s.getBoundingClientRect().right);
const pre = document.createElement('pre');
pre.id = 'measure';
pre.textContent = JSON.stringify(r);
document.body.appendChild(pre);
</script>"""


def binary(env: str, pattern: str) -> str:
    if os.environ.get(env):
        return os.environ[env]
    found = sorted(glob.glob(str(ROOT / "build" / "*" / pattern)), key=os.path.getmtime)
    if not found:
        pytest.skip(f"no {pattern} built (set {env} or build under build/)")
    return found[-1]


def chromium(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; scripts/setup.sh does)")
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                               "--disable-component-update", "--disable-sync", "--no-first-run",
                               f"--user-data-dir={profile}", f"--window-size={WIDTH},900", *args],
                              capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    bundles = ROOT / "bundles"
    if not (bundles / "cutile_python").is_dir() or not (bundles / "cutile_rust").is_dir():
        pytest.skip("no exported bundles: run scripts/export_bundles.sh")
    out = tmp_path_factory.mktemp("report_browser")
    h5 = out / "real.h5"
    subprocess.run([binary("PORTBENCH_SYNTH_BIN", "tests/cli/results/portbench_synth_results"), str(h5), "--bundles",
                    str(bundles), "--runs", "2", "--min-samples", "10", "--max-samples", "12", "--slow", "rope/",
                    "--overwrite"], check=True, capture_output=True, text=True)
    page = out / "report.html"
    r = subprocess.run([binary("PORTBENCH_BIN", "harness/cli/portbench"), "report", str(h5), "--format", "html",
                        "--out", str(page)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return page


@pytest.fixture(scope="module")
def layout(report: Path) -> dict:
    probe = report.with_name("measured.html")
    probe.write_text(report.read_text().replace("</body>", MEASURE + "</body>"))
    r = chromium("--dump-dom", probe.as_uri())
    m = re.search(r'<pre id="measure">(.*?)</pre>', r.stdout, re.S)
    assert m, f"the measuring script left nothing in the DOM: {r.stderr[-500:]}"
    return json.loads(html.unescape(m.group(1)))


def test_page_fits_1280_pixels(layout):
    assert layout["viewport"] <= WIDTH
    assert layout["scroll_width"] <= layout["viewport"], "the page scrolls sideways"
    assert layout["tables"] and max(layout["tables"]) <= layout["viewport"]
    assert layout["svgs"] and max(layout["svgs"]) <= layout["viewport"]


def test_verdict_column_is_on_screen_and_every_verdict_fits(layout):
    assert layout["verdict_header"] <= layout["viewport"]
    assert len(layout["verdicts"]) >= 8          # one per operator of the smoke suite
    for v in layout["verdicts"]:
        assert v["right"] <= layout["viewport"], v
        assert v["fits"], f"verdict {v['text']} overflows its cell"


def test_long_ids_are_cut_with_the_whole_id_in_the_tooltip(layout):
    ids = layout["ids"]
    assert ids
    assert all(i["title"] == i["text"] for i in ids)
    assert any(i["cut"] for i in ids), "no id was long enough to be cut: the test proves nothing"
    assert all(i["right"] <= layout["viewport"] for i in ids)


def test_roofline_has_both_sides_of_every_configuration(layout, report):
    # The smoke configurations of the cuTile pair with flops: every one a reference and a port point.
    assert layout["points"] >= 15
    assert layout["points"] == layout["port_points"]


def test_screenshot(report):
    shot = report.with_name("report.png")
    chromium(f"--screenshot={shot}", report.as_uri())
    assert shot.exists() and shot.stat().st_size > 10000
    print(f"screenshot: {shot}")
