# SPDX-License-Identifier: Apache-2.0
"""The command line every front end shares:

    python -m portbench_export.<frontend> --suite configs/smoke.json --out bundles/<frontend>
                                          [--target configs/targets/h200.json] [--tuning RECORD]

Exports every configuration of the suite whose operator the front end has kernels for into
<out>/<operator>/ (manifest.json, cubins, IR text), for the target GPU described by --target
(default $PORTBENCH_TARGET, else configs/targets/h200.json). Operators without kernels, and
configurations a kernel does not cover (e.g. an unsupported dtype), are skipped with a message
(`skip: ...`), and each operator ends with one countable line
`summary: <frontend>/<op>: exported E of T (skipped: <reason> x <count>, ...)`. --tuning (front
ends that read tuning records) picks each configuration's variant from a record of
`portbench tune`. A malformed suite or a compile failure is one line on stderr naming the
operator/configuration, and exit status 2 (suite/usage) or 1 (export).
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import sys
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable

from . import ExportError
from .cubin import inspect_cubin, layout_mismatch
from .manifest import Bundle
from .suite import Config, SuiteError, load_suite
from .target import Target, load_target
from .tools import REPO_ROOT, kernels_dir

EXIT_EXPORT, EXIT_SUITE = 1, 2


class Unsupported(Exception):
    """This configuration is outside what the front end's kernel covers: skipped, not an error."""


@dataclass
class Frontend:
    name: str
    # operator -> function(config, bundle) that compiles what it needs and adds the config
    operators: dict[str, Callable[[Config, Bundle], None]]
    toolchain: Callable[[], dict[str, str]]
    # reads a tuning record (--tuning FILE): start(options) prepares it before the first config
    takes_tuning: bool = False
    start: Callable[["ExportOptions"], None] | None = None


@dataclass(frozen=True)
class ExportOptions:
    target: Target
    tuning: Path | None = None
    # write only each configuration's chosen plan, no variants (a run needs no more; a tune does)
    chosen_only: bool = False


def load_kernel_module(frontend: str, name: str) -> ModuleType:
    """Imports kernels/<frontend>/<name>.py as a real module (front ends read its source)."""
    path = kernels_dir() / frontend / f"{name}.py"
    tag = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]
    mod_name = f"portbench_kernels.{frontend}.{name}_{tag}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ExportError(f"kernel module {path} not found")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[mod_name]
        raise
    return mod


def one_line(e: BaseException) -> str:
    text = str(e).strip()
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    msg = lines[0] if lines else ""
    if not isinstance(e, (ExportError, SuiteError)):
        msg = f"{type(e).__name__}: {msg}" if msg else type(e).__name__
    if len(lines) > 1:
        words = [l for l in lines[1:] if any(ch.isalnum() for ch in l)]
        if msg.endswith(":") and words:   # "at 2:22:" first, the reason last (Triton)
            msg += f" ... {words[-1]}"
        msg += f" (+{len(lines) - 1} lines: PORTBENCH_EXPORT_VERBOSE=1)"
    return msg if len(msg) <= 400 else msg[:397] + "..."


def _check_bundle(fe: Frontend, bundle: Bundle) -> None:
    """Generic self-check: every launch's entry (of the chosen plan and of every variant) exists
    in its cubin and its parameter list packs to exactly the cubin's own KPARAM_INFO table, its
    cluster is the cubin's CTAs per cluster; every cubin has the bundle's arch."""
    infos = {f: inspect_cubin(data) for f, data in bundle.cubins.items()}
    archs = {i.arch for i in infos.values()}
    if len(archs) != 1:
        raise ExportError(f"{fe.name}/{bundle.operator}: cubins of several archs {sorted(archs)}")
    bundle.arch = archs.pop()
    for cfg in bundle.configs:
        plans = [("", cfg)] + [(f" variant {v['name']}", v) for v in cfg.get("variants", [])]
        for label, plan in plans:
            for l in plan["launches"]:
                if "step" in l:          # a fill or copy step: the harness's own kernel, no cubin
                    continue
                bad = layout_mismatch(infos[l["cubin"]], l["entry"], l["params"], l.get("cluster"))
                if bad:
                    raise ExportError(f"{fe.name}/{bundle.operator} {cfg['params']}{label}: {bad}")


def summary_line(fe: str, op: str, exported: int, total: int, skipped: Counter) -> str:
    reasons = ", ".join(f"{r} x {n}" for r, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"summary: {fe}/{op}: exported {exported} of {total}" + (f" (skipped: {reasons})" if reasons else "")


def export_suite(fe: Frontend, suite_path: str | Path, out: str | Path,
                 options: ExportOptions | None = None) -> int:
    suite = load_suite(suite_path)
    options = options or ExportOptions(load_target())
    out = Path(out)
    by_op: dict[str, list[Config]] = {}
    for c in suite.configs:
        by_op.setdefault(c.op, []).append(c)
    toolchain = None
    if fe.start is not None:
        fe.start(options)
    for op, configs in by_op.items():
        handler = fe.operators.get(op)
        if handler is None:
            print(f"skip: {fe.name}: operator '{op}' ({len(configs)} configs): no {fe.name} kernels")
            print(summary_line(fe.name, op, 0, len(configs), Counter({f"no {fe.name} kernels": len(configs)})))
            continue
        if toolchain is None:
            toolchain = fe.toolchain()
        bundle = Bundle(fe.name, op, arch="", toolchain=toolchain, target=options.target)
        skipped: Counter = Counter()
        for c in configs:
            try:
                handler(c, bundle)
            except Unsupported as e:
                print(f"skip: {fe.name}: {c.id()}: {e}")
                skipped[str(e)] += 1
                # The manifest's unsupported[]: `portbench run` prints the reason in its unpaired list.
                bundle.unsupported.append({"params": dict(c.params), "reason": str(e)})
            except SuiteError:
                raise
            except Exception as e:
                for line in (getattr(e, "log", "") or "").splitlines():   # e.g. NVRTC's program log
                    if line.strip():
                        print(f"  log: {line}", file=sys.stderr)
                raise ExportError(f"{fe.name}: {c.id()}: {one_line(e)}") from e
        if not bundle.configs:
            print(f"skip: {fe.name}: operator '{op}': no supported configurations")
            print(summary_line(fe.name, op, 0, len(configs), skipped))
            if bundle.unsupported:
                # No plan, but the reasons: a manifest without cubins or configurations.
                bundle.cubins.clear()
                bundle.irs.clear()
                bundle.arch = options.target.arch
                path = bundle.write(out)
                print(f"exported {fe.name}/{op}: no configs, {len(bundle.unsupported)} unsupported with reasons -> {path}")
            continue
        _check_bundle(fe, bundle)
        path = bundle.write(out)
        print(f"exported {fe.name}/{op}: {len(bundle.configs)} configs, {len(bundle.cubins)} cubins "
              f"-> {path}")
        print(summary_line(fe.name, op, len(bundle.configs), len(configs), skipped))
    return 0


def main(fe: Frontend, argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=f"python -m portbench_export.{fe.name}",
                                 description=f"Export {fe.name} bundles for a portbench suite (no GPU).")
    ap.add_argument("--suite", default=str(REPO_ROOT / "configs" / "smoke.json"),
                    help="suite JSON (default configs/smoke.json)")
    ap.add_argument("--out", default=str(REPO_ROOT / "bundles" / fe.name),
                    help=f"output folder; bundles go to OUT/<operator>/ (default bundles/{fe.name})")
    ap.add_argument("--target", default=None,
                    help="target GPU description (default $PORTBENCH_TARGET, else configs/targets/h200.json)")
    if fe.takes_tuning:
        ap.add_argument("--tuning", default=None,
                        help="tuning record of portbench tune (configs/tuning/<frontend>-<target>.json): "
                             "the variant each configuration it lists gets")
        ap.add_argument("--chosen-only", action="store_true",
                        help="compile and write only each configuration's chosen plan (no tuning variants)")
    args = ap.parse_args(argv)
    verbose = os.environ.get("PORTBENCH_EXPORT_VERBOSE") == "1"
    try:
        options = ExportOptions(load_target(args.target),
                                Path(args.tuning) if getattr(args, "tuning", None) else None,
                                bool(getattr(args, "chosen_only", False)))
        return export_suite(fe, args.suite, args.out, options)
    except SuiteError as e:
        if verbose:
            traceback.print_exc()
        print(f"error: {fe.name}: {one_line(e)}", file=sys.stderr)
        return EXIT_SUITE
    except Exception as e:
        if verbose:
            traceback.print_exc()
        msg = one_line(e)
        if not msg.startswith(f"{fe.name}"):
            msg = f"{fe.name}: {msg}"
        print(f"error: {msg}", file=sys.stderr)
        return EXIT_EXPORT
