#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tuning variants of cuTile Rust bundles (configs[].variants, docs/cutile-rust.md) timed with
today's `portbench run`, which times a configuration's chosen plan only.

  split BUNDLES OUT [--ops a,b]   one bundle per (operator, variant name): OUT/<op>/<variant>/
                                  with every configuration that has that variant, its launches as
                                  the configuration's plan, and the cubins they name (copied)
  record SPLIT RESULTS OUT --target NAME
                                  reads RESULTS/<op>/<variant>.json (`portbench report --format
                                  json` of each variant against one reference) and writes the
                                  tuning record OUT (portbench.tuning-record/1): per configuration
                                  the variant with the shortest port time, its speedup over the
                                  default variant; prints per operator the geomean speed over the
                                  reference of the default and of the per-configuration best

No GPU needed for either; scripts/time_rust_variants.sh runs both around the timing.
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "kernels" / "export"))
from portbench_export.suite import Config  # noqa: E402  (the id the harness gives a configuration)


def fail(msg: str) -> None:
    print(f"rust_variants.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def bundles_of(path: Path) -> list[Path]:
    """A bundle folder, or a folder of operator bundle folders."""
    if (path / "manifest.json").is_file():
        return [path]
    found = sorted(p.parent for p in path.glob("*/manifest.json"))
    if not found:
        fail(f"{path}: no manifest.json in it or its subfolders")
    return found


def load_manifest(bundle: Path) -> dict:
    try:
        return json.loads((bundle / "manifest.json").read_text())
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{bundle}/manifest.json: {e}")
    raise AssertionError


def split(args: argparse.Namespace) -> None:
    ops = set(args.ops.split(",")) if args.ops else None
    out = Path(args.out)
    for bundle in bundles_of(Path(args.bundles)):
        m = load_manifest(bundle)
        op = m["operator"]
        if ops is not None and op not in ops:
            continue
        if m.get("frontend") != "cutile_rust":
            fail(f"{bundle}/manifest.json: frontend is {m.get('frontend')!r}, not cutile_rust")
        by_name: dict[str, list[dict]] = {}
        for i, c in enumerate(m["configs"]):
            if "variant" not in c["tuning"]:
                fail(f"{bundle}/manifest.json: configs[{i}].tuning has no 'variant' (exported before variants?)")
            for v in c.get("variants") or [{"name": c["tuning"]["variant"], "tuning": c["tuning"],
                                            "scratch": c["scratch"], "launches": c["launches"]}]:
                tuning = dict(v["tuning"], variant=v["name"],
                              tuning_source=f"variant {v['name']} of {bundle}/manifest.json",
                              default_variant=c["tuning"]["variant"])
                by_name.setdefault(v["name"], []).append(
                    {"params": c["params"], "tuning": tuning, "scratch": v["scratch"], "launches": v["launches"]})
        cubins = {c["file"]: c for c in m["cubins"]}
        for name, configs in sorted(by_name.items()):
            dest = out / op / name
            if dest.exists():
                shutil.rmtree(dest)
            dest.mkdir(parents=True)
            used = sorted({l["cubin"] for c in configs for l in c["launches"]})
            for f in used:
                for g in [f] + cubins[f]["ir"]:
                    shutil.copy2(bundle / g, dest / g)
            doc = dict(m, cubins=[cubins[f] for f in used], configs=configs)
            (dest / "manifest.json").write_text(json.dumps(doc, indent=2) + "\n")
        print(f"{op}: {len(by_name)} variant bundles under {out / op}")


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def record(args: argparse.Namespace) -> None:
    split_dir, results = Path(args.split), Path(args.results)
    choices, lines = [], []
    for op_dir in sorted(p for p in split_dir.iterdir() if p.is_dir()):
        op = op_dir.name
        # id -> {"params", "default", "times": {variant: (port_ns, ref_ns)}}
        table: dict[str, dict] = {}
        for vdir in sorted(p for p in op_dir.iterdir() if (p / "manifest.json").is_file()):
            name = vdir.name
            rep_path = results / op / f"{name}.json"
            if not rep_path.is_file():
                print(f"{op} {name}: no report {rep_path} (not timed)", file=sys.stderr)
                continue
            try:
                rep = json.loads(rep_path.read_text())
            except json.JSONDecodeError as e:
                print(f"{op} {name}: unreadable report {rep_path}: {e} (see {rep_path.with_suffix('.txt')})",
                      file=sys.stderr)
                continue
            rows = {c["id"]: c for c in rep["configs"]}
            for c in load_manifest(vdir)["configs"]:
                cid = Config(0, op, c["params"]).id()
                row = rows.get(cid)
                ent = table.setdefault(cid, {"params": c["params"], "default": c["tuning"]["default_variant"],
                                             "times": {}})
                if row is None or not row.get("paired"):
                    continue
                port, ref = row["port"], row["reference"]
                ok = (port.get("numerics") == "PASS" and port.get("proof") == "EXECUTED"
                      and port.get("best_ns") and ref.get("best_ns"))
                if not ok:
                    print(f"{cid} {name}: not a valid candidate (numerics {port.get('numerics')}, "
                          f"proof {port.get('proof')})", file=sys.stderr)
                    continue
                ent["times"][name] = (port["best_ns"], ref["best_ns"])
        default_speed, best_speed = [], []
        for cid, ent in sorted(table.items()):
            t = ent["times"]
            if not t:
                continue
            best = min(t, key=lambda n: t[n][0])
            if ent["default"] in t:
                d_port, d_ref = t[ent["default"]]
                default_speed.append(d_ref / d_port)
                speedup = d_port / t[best][0]
            else:
                speedup = None
            best_speed.append(t[best][1] / t[best][0])
            choice = {"op": op, "params": ent["params"], "variant": best, "candidates": len(t)}
            if speedup is not None:
                choice["speedup_over_default"] = round(speedup, 4)
            choices.append(choice)
        lines.append(f"{op}: {len(best_speed)} configurations; port/reference speed geomean, default "
                     f"{geomean(default_speed):.4f}, best variant per configuration {geomean(best_speed):.4f}")
    doc = {"schema": "portbench.tuning-record/1", "frontend": "cutile_rust", "target": args.target,
           "made_by": "scripts/time_rust_variants.sh (portbench run per variant, best of N, against "
                      f"{args.reference or 'the reference bundles'})",
           "gpu": args.gpu or "", "date": args.date or "", "choices": choices}
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    print("\n".join(lines))
    print(f"tuning record: {args.out} ({len(choices)} choices)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("split")
    s.add_argument("bundles")
    s.add_argument("out")
    s.add_argument("--ops", default="")
    r = sub.add_parser("record")
    r.add_argument("split")
    r.add_argument("results")
    r.add_argument("out")
    r.add_argument("--target", required=True)
    r.add_argument("--reference", default="")
    r.add_argument("--gpu", default="")
    r.add_argument("--date", default="")
    a = ap.parse_args()
    split(a) if a.cmd == "split" else record(a)


if __name__ == "__main__":
    main()
