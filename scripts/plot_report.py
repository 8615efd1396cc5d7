#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots for `portbench report --format html`, drawn from portbench results files (HDF5).

    plot_report.py [--json REPORT.json] [--gate 0.95] --out-dir DIR FILE.h5...

Writes DIR/geomean.png (per-operator geomean of port/reference speed with its 95% interval),
DIR/configs.png (every configuration's ratio, by operator) and DIR/plots.json, the list of
images with titles that the HTML report embeds. Per-configuration ratios are computed here from
the files (best of N = minimum over valid runs of each run's median). The per-operator
intervals come from the report's JSON when given, so the plot shows exactly the table's numbers;
without it a plain bootstrap over configurations is drawn instead.

Needs h5py, pandas and matplotlib (the project's .venv has them).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import h5py
import numpy as np
import pandas as pd


def load_runs(paths: list[str]) -> pd.DataFrame:
    """One row per complete run: config, operator, role, frontend, run, median_ns, verdicts."""
    rows = []
    for path in paths:
        with h5py.File(path, "r") as f:
            for op_group in f["configs"].values():
                for cfg in op_group.values():
                    for role in cfg.values():
                        for run in role.values():
                            a = run.attrs
                            if a.get("state") != "COMPLETE":
                                continue
                            rows.append({
                                "file": path,
                                "ordinal": int(cfg.attrs.get("ordinal", 0)),
                                "config": cfg.attrs["id"],
                                "operator": cfg.attrs["operator"],
                                "role": role.attrs["role"],
                                "frontend": role.attrs["frontend"],
                                "run": int(a["run"]),
                                "median_ns": float(a["median_ns"]),
                                "count": int(a["count"]),
                                "numerics": a["numerics"],
                                "proof": a["proof"],
                                "timing": a["timing"],
                            })
    runs = pd.DataFrame(rows)
    if not runs.empty:  # the order configurations were written in, not HDF5's name order
        runs = runs.sort_values(["file", "ordinal", "role", "run"], kind="stable", ignore_index=True)
    return runs


def config_ratios(runs: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: best-of-N time per role and ratio = reference / port (port speed)."""
    valid = runs[(runs.timing == "VALID") & (runs["count"] > 0)]
    best = valid.groupby(["operator", "config", "role"]).median_ns.min().unstack("role")
    for role in ("reference", "port"):
        if role not in best:
            best[role] = np.nan
    best = best.dropna(subset=["reference", "port"])
    best["ratio"] = best["reference"] / best["port"]
    return best.reset_index()


def operator_intervals(ratios: pd.DataFrame, report_json: str | None, seed: int = 1) -> pd.DataFrame:
    if report_json:
        with open(report_json, encoding="utf-8") as f:
            report = json.load(f)
        rows = [{"operator": o["operator"], "estimate": o["geomean"]["estimate"],
                 "low": o["geomean"]["low"], "high": o["geomean"]["high"], "verdict": o["verdict"]}
                for o in report["operators"]]
        return pd.DataFrame(rows).dropna(subset=["estimate"])
    rng = np.random.default_rng(seed)
    rows = []
    for op, g in ratios.groupby("operator", sort=False):
        logs = np.log(g["ratio"].to_numpy())
        boots = rng.choice(logs, size=(2000, len(logs)), replace=True).mean(axis=1)
        rows.append({"operator": op, "estimate": float(np.exp(logs.mean())),
                     "low": float(np.exp(np.quantile(boots, 0.025))),
                     "high": float(np.exp(np.quantile(boots, 0.975))), "verdict": ""})
    return pd.DataFrame(rows)


def plot_geomeans(intervals: pd.DataFrame, gate: float, out: Path) -> None:
    import matplotlib.pyplot as plt

    n = len(intervals)
    fig, ax = plt.subplots(figsize=(7, 0.35 * n + 1.5))
    y = np.arange(n)
    est = intervals["estimate"].to_numpy()
    # Rounded interval ends (or a bootstrap interval of two configurations) can fall just short
    # of the estimate; matplotlib refuses negative error bars, so such an end is drawn at it.
    err = np.clip(np.vstack([est - intervals["low"].to_numpy(), intervals["high"].to_numpy() - est]), 0, None)
    colors = ["#0a7a0a" if lo >= gate else ("#b00020" if hi < gate else "#a66a00")
              for lo, hi in zip(intervals["low"], intervals["high"])]
    for i in range(n):
        ax.errorbar(est[i], y[i], xerr=err[:, i:i + 1], fmt="none", ecolor=colors[i], capsize=3)
    ax.scatter(est, y, c=colors, zorder=3)
    ax.axvline(gate, color="grey", linestyle="--", label=f"gate {gate:.2f}")
    ax.axvline(1.0, color="black", linewidth=0.5)
    ax.set_yticks(y, intervals["operator"])
    ax.invert_yaxis()
    ax.set_xlabel("geomean port / reference speed (95% interval)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def plot_configs(ratios: pd.DataFrame, ops: list[str], gate: float, out: Path) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(ops) + 2), 4))
    rng = np.random.default_rng(0)
    for i, op in enumerate(ops):
        r = ratios.loc[ratios.operator == op, "ratio"].to_numpy()
        ax.scatter(i + rng.uniform(-0.2, 0.2, len(r)), r, s=12, alpha=0.7,
                   c=np.where(r >= gate, "#1f77b4", "#b00020"))
    ax.axhline(gate, color="grey", linestyle="--", label=f"gate {gate:.2f}")
    ax.axhline(1.0, color="black", linewidth=0.5)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(ScalarFormatter())
    ax.set_xticks(range(len(ops)), ops, rotation=60, ha="right")
    ax.set_ylabel("port / reference speed (best of N)")
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="portbench results files (.h5)")
    ap.add_argument("--json", help="the report's JSON (portbench report --format json)")
    ap.add_argument("--gate", type=float, default=None, help="parity gate (default: the JSON's, else 0.95)")
    ap.add_argument("--out-dir", required=True)
    args = ap.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")

    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    gate = args.gate
    if gate is None and args.json:
        with open(args.json, encoding="utf-8") as f:
            gate = json.load(f)["method"]["gate"]
    gate = 0.95 if gate is None else gate

    runs = load_runs(args.files)
    manifest = []
    if runs.empty:
        print("plot_report.py: no complete runs in the files", file=sys.stderr)
    else:
        ratios = config_ratios(runs)
        intervals = operator_intervals(ratios, args.json)
        if not intervals.empty:
            plot_geomeans(intervals, gate, out / "geomean.png")
            manifest.append({"file": "geomean.png",
                             "title": "Per-operator geomean of port/reference speed, 95% bootstrap interval"})
        if not ratios.empty:
            ops = [op for op in dict.fromkeys(runs["operator"]) if op in set(ratios["operator"])]
            plot_configs(ratios, ops, gate, out / "configs.png")
            manifest.append({"file": "configs.png",
                             "title": "Per-configuration port/reference speed (best of N), by operator"})
    (out / "plots.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
