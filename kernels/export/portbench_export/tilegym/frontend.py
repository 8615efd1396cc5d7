# SPDX-License-Identifier: Apache-2.0
"""The tilegym front end: per configuration, run tilegym's own host wrapper on fake tensors
(once with autotuning off, once per autotune candidate), turn each capture into a launch plan,
compile the distinct kernels for the target, and write the chosen plan plus every candidate as
a variant."""
from __future__ import annotations

import multiprocessing
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from .. import ExportError
from ..cli import ExportOptions, Unsupported, one_line
from ..cutile_common import add_entry, export_entry
from ..manifest import Bundle
from ..suite import Config
from . import capture, fake_torch, package
from .capture import Pass, Selection, candidate_name, describe
from .jit import signature
from .operators import OpDef, TensorDecl
from .plan import KernelBuild, Plan, build_plan
from .tuning import TuningRecord, load_record, unknown_variant

FRONTEND = "tilegym"
WRAPPER_ERRORS = (AssertionError, RuntimeError, ValueError, NotImplementedError, ZeroDivisionError)
JIT_RULES = ("cuTile ct.launch specialisation of contiguous torch tensors: int32 indices, 16-byte base "
             "alignment where the view has it, stride 1 constant, strides divisible by 16 bytes and extents "
             "by 16 where they are, size-1 axes constant (calling convention v2), no aliasing assumed")


@dataclass
class Candidate:
    name: str
    config: dict
    plan: Plan | None
    error: str | None = None


@dataclass
class Session:
    """One export run: stand-ins, hooks and the tuning record, set up by start()."""
    options: ExportOptions | None = None
    recorder: capture.Recorder | None = None
    loaded: package.Loaded | None = None
    record: TuningRecord | None = None
    failed_builds: dict[str, str] = field(default_factory=dict)   # entry symbol -> tileiras error

    def start(self, options: ExportOptions) -> None:
        self.options = options
        t = options.target
        if self.recorder is None:
            fake_torch.install(fake_torch.TorchState(t.gpu, t.sm_count, t.capability))
            self.recorder = capture.install()
            self.loaded = package.install(self.recorder.autotune_disabled)
        self.record = load_record(options.tuning, FRONTEND, t.name, t.gpu) if options.tuning else None

    # ---- capture ----
    def _named(self, decls: list[TensorDecl]) -> dict[str, fake_torch.FakeTensor]:
        out = {}
        for d in decls:
            dt = fake_torch.dtype_named(d.dtype)
            st = fake_torch.Storage(dt, d.storage_elements or d.elements, name=d.name, base_offset=d.offset)
            out[d.name] = fake_torch.FakeTensor(st, 0, d.shape, d.view_strides)
        return out

    def _run(self, op: OpDef, cfg: Config, decls, mods, disabled: bool, selection: Selection | None):
        tilegym_modules = [m for n, m in sorted(sys.modules.items())
                           if n.startswith("tilegym.") and getattr(m, "__file__", None)]
        capture.clear_tune_caches(tilegym_modules)
        named = self._named(decls)
        p = Pass(disabled, selection)
        try:
            result = self.recorder.run(p, lambda: op.call(cfg, named, mods[0], not disabled))
        except WRAPPER_ERRORS as e:
            raise Unsupported(f"tilegym's wrapper refuses it: {one_line(e)}") from None
        plan = build_plan(p, decls, named, op.outputs(cfg, result), self.options.target.arch)
        return p, plan

    # ---- one configuration ----
    def export(self, op: OpDef, cfg: Config, bundle: Bundle) -> None:
        decls = op.tensors(cfg)
        op.check(cfg)
        mods = [self.loaded.module(m) for m in op.modules]
        default_pass, default_plan = self._run(op, cfg, decls, mods, True, None)
        if default_pass.searches:
            why = "first candidate, as tilegym has no autotune-off path here (it always times its candidates)"
        elif op.takes_autotune_arg:
            why = "tilegym's default call (use_autotune=False)"
        else:
            why = "tilegym's untuned path (TILEGYM_DISABLE_AUTOTUNE=1)"
        candidates = self._candidates(op, cfg, decls, mods)
        variants = self._variants(candidates)
        default_name = next((n for n, (p, _) in variants.items() if p.key() == default_plan.key()), None)
        if variants and default_name is None:
            default_name = "default"
            variants = {"default": (default_plan, []), **variants}
        elif not variants:
            default_name = "default"
            variants = {"default": (default_plan, [])}
            why = why if default_pass.searches else why + "; tilegym does not autotune this configuration"

        chosen, source = default_name, f"default: no tuning record; {why}"
        if self.record is not None:
            choice = self.record.lookup(cfg.op, cfg.params)
            if choice is None:
                source = f"default: not in tuning record {self.record.path}; {why}"
            elif choice.variant not in variants:
                raise unknown_variant(self.record, choice, cfg.id(), list(variants))
            else:
                chosen, source = choice.variant, f"record {self.record.path}"
        chosen_only = self.options.chosen_only
        to_build = [variants[chosen][0]] if chosen_only else [p for p, _ in variants.values()]
        failed = self._compile(bundle, to_build)
        broken = {n: failed[s] for n, (p, _) in variants.items()
                  for s in (l.build.symbol for l in p.launches) if s in failed}
        if chosen in broken:
            raise Unsupported(f"tileiras fails for {self.options.target.arch}: {broken[chosen]}")
        plan, merged = variants[chosen]
        tuning = {"variant": chosen, "tuning_source": source,
                  "wrapper": f"{op.modules[0]}.{op.wrapper}", "kernels": plan.kernels, "jit": JIT_RULES}
        if merged:
            tuning["candidate"] = merged[0].config
        notes = op.notes(cfg)
        if notes:
            tuning["notes"] = notes
        bad = [{"name": c.name, "error": c.error} for c in candidates if c.error] + \
              [{"name": n, "error": f"tileiras: {e}"} for n, e in broken.items()]
        if bad:
            tuning["failed_candidates"] = bad
        out_variants = None
        if chosen_only:
            tuning["variants"] = f"not exported (--chosen-only; {len(variants)} distinct candidate plans)"
        elif len(variants) > 1 or candidates:
            out_variants = [self._variant_json(n, p, m) for n, (p, m) in variants.items() if n not in broken]
        bundle.add_config(cfg.params, plan.launches_json(), tuning=tuning, scratch=plan.scratch,
                          variants=out_variants)
        bundle.add_sources(self.loaded.sources(*mods))

    def _candidates(self, op: OpDef, cfg: Config, decls, mods) -> list[Candidate]:
        try:
            enum_pass, _ = self._run(op, cfg, decls, mods, False, None)
        except Unsupported as e:
            return [Candidate("autotuned", {}, None, str(e))]
        out = []
        for j, search in enumerate(enum_pass.searches):
            for i, conf in enumerate(search.configs):
                name = candidate_name(conf) or f"candidate{j}.{i}"
                try:
                    _, plan = self._run(op, cfg, decls, mods, False, Selection(j, i))
                    out.append(Candidate(name, describe(conf), plan))
                except Unsupported as e:
                    out.append(Candidate(name, describe(conf), None, str(e)))
        return out

    @staticmethod
    def _variants(candidates: list[Candidate]) -> dict[str, tuple[Plan, list[Candidate]]]:
        """Distinct plans in candidate order; candidates whose plans are identical share one
        variant (named after the first)."""
        by_key: dict[str, str] = {}
        out: dict[str, tuple[Plan, list[Candidate]]] = {}
        for c in candidates:
            if c.plan is None:
                continue
            k = c.plan.key()
            if k in by_key:
                out[by_key[k]][1].append(c)
                continue
            name = c.name
            n = 2
            while name in out:
                name, n = f"{c.name}#{n}", n + 1
            by_key[k] = name
            out[name] = (c.plan, [c])
        return out

    @staticmethod
    def _variant_json(name: str, plan: Plan, merged: list[Candidate]) -> dict:
        tuning: dict[str, Any] = {"kernels": plan.kernels}
        if merged:
            tuning["candidate"] = merged[0].config
        if len(merged) > 1:
            tuning["same_plan_as"] = [c.name for c in merged[1:]]
        return {"name": name, "tuning": tuning, "scratch": plan.scratch,
                "launches": plan.launches_json()}

    # ---- compiling ----
    def _compile(self, bundle: Bundle, plans: list[Plan]) -> dict[str, str]:
        """Compiles every kernel of the plans not yet in the bundle; returns symbol -> error."""
        todo: dict[str, KernelBuild] = {}
        for p in plans:
            for l in p.launches:
                b = l.build
                if b.file not in bundle.cubins and b.symbol not in self.failed_builds and b.symbol not in todo:
                    todo[b.symbol] = b
        gpu = self.options.target.arch
        for symbol, res, err in compile_all(list(todo.values()), gpu):
            if err is None:
                add_entry(bundle, symbol, *res)
            else:
                self.failed_builds[symbol] = err
        return dict(self.failed_builds)


# ---- parallel compilation (fork: the kernel objects are inherited, not pickled) ----------------

_JOBS: list[tuple[KernelBuild, str]] = []


def _compile_one(i: int):
    build, gpu = _JOBS[i]
    try:
        return build.symbol, export_entry(build.kernel, signature(build.params, build.symbol), gpu), None
    except ExportError:
        raise
    except Exception as e:   # tileiras refusing the kernel: the variant (or configuration) is skipped
        return build.symbol, None, one_line(e)


def compile_jobs() -> int:
    v = os.environ.get("PORTBENCH_EXPORT_JOBS")
    return max(1, int(v)) if v and v.isdigit() else max(1, os.cpu_count() or 1)


def compile_all(builds: list[KernelBuild], gpu: str):
    global _JOBS
    _JOBS = [(b, gpu) for b in builds]
    try:
        workers = min(compile_jobs(), len(builds))
        if workers <= 1:
            return [_compile_one(i) for i in range(len(builds))]
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            return list(pool.imap(_compile_one, range(len(builds))))
    finally:
        _JOBS = []
