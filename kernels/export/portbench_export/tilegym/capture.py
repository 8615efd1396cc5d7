# SPDX-License-Identifier: Apache-2.0
"""Running a tilegym host wrapper once and recording what it launches.

`cuda.tile.launch` is replaced by a recorder (grid, kernel object, arguments per launch, in
order: the launch plan). `cuda.tile.tune.exhaustive_search`, through which every tilegym
autotuner times its candidates on the GPU, is replaced by a chooser: it records the candidate
list and answers with the candidate the current pass selects, so the wrapper then launches
exactly what it would launch after tuning picked that candidate. Both hooks are installed once,
before any tilegym module is imported (modules bind exhaustive_search at import)."""
from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import ExportError
from . import fake_torch


@dataclass(frozen=True)
class Selection:
    """Which candidate the pass picks: candidate `index` of the `call`-th search (others: their
    first candidate, reported as infinitely slow so a wrapper comparing searches ignores them)."""
    call: int
    index: int


@dataclass
class Search:
    configs: list[Any]


@dataclass
class LaunchRecord:
    grid: tuple[int, ...]
    kernel: Any
    args: tuple


@dataclass
class Pass:
    autotune_disabled: bool
    selection: Selection | None
    launches: list[LaunchRecord] = field(default_factory=list)
    searches: list[Search] = field(default_factory=list)
    allocator: fake_torch.Allocator = field(default_factory=fake_torch.Allocator)


@dataclass(frozen=True)
class _Measurement:
    config: Any
    mean_us: float
    num_samples: int = 1
    error_margin_us: float = 0.0


@dataclass(frozen=True)
class _Result:
    best: _Measurement
    successes: tuple
    failures: tuple = ()


def describe(config: Any) -> dict[str, Any]:
    """A candidate configuration as plain JSON values (SimpleNamespace, dict or scalar)."""
    if isinstance(config, types.SimpleNamespace):
        items = vars(config).items()
    elif isinstance(config, dict):
        items = config.items()
    else:
        return {"value": repr(config)}
    return {str(k): (v if isinstance(v, (bool, int, float, str)) or v is None else repr(v)) for k, v in items}


def candidate_name(config: Any) -> str:
    """The variant name of a candidate: its fields, k=v joined by commas (stable, readable)."""
    return ",".join(f"{k}={v}" for k, v in describe(config).items())


class Recorder:
    """The hooks and the current pass. One per process."""

    def __init__(self):
        self.current: Pass | None = None

    def autotune_disabled(self) -> bool:
        return self.current.autotune_disabled if self.current else True

    def launch(self, stream, grid, kernel, kernel_args, /):
        if self.current is None:
            raise ExportError("ct.launch outside a capture")
        grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        rec = LaunchRecord(grid, kernel, tuple(kernel_args))
        self.current.launches.append(rec)
        self.current.allocator.steps.append(rec)      # in order with the wrapper's copies and fills

    def exhaustive_search(self, search_space, stream, grid_fn, kernel, args_fn, hints_fn=None, **kwargs):
        if self.current is None:
            raise ExportError("exhaustive_search outside a capture")
        configs = list(search_space)
        if not configs:
            raise ValueError("Search space is empty.")
        call = len(self.current.searches)
        self.current.searches.append(Search(configs))
        sel = self.current.selection
        chosen = sel is not None and sel.call == call
        pick = configs[sel.index] if chosen and sel.index < len(configs) else configs[0]
        # The selected search wins any comparison between searches (recurrent_gated_delta_rule
        # compares result.best.mean_us across kernels); without a selection the first one does.
        fast = chosen or (sel is None and call == 0)
        best = _Measurement(pick, 0.0 if fast else float("inf"))
        return _Result(best, (best,))

    def run(self, p: Pass, fn: Callable[[], Any]) -> Any:
        self.current = p
        fake_torch.ALLOCATOR[0] = p.allocator
        try:
            return fn()
        finally:
            self.current = None


def install() -> Recorder:
    import cuda.tile as ct
    import cuda.tile.tune as tune
    rec = Recorder()
    ct.launch = rec.launch
    tune.exhaustive_search = rec.exhaustive_search
    return rec


def clear_tune_caches(modules: list[types.ModuleType]) -> None:
    """Empties every autotune cache of the given modules (module-level dicts named *cache*, and
    such dicts on classes defined there), so each pass runs the wrapper's tuning path afresh."""
    for m in modules:
        for name, v in list(vars(m).items()):
            if isinstance(v, dict) and "cache" in name.lower():
                v.clear()
            elif isinstance(v, type) and v.__module__ == m.__name__:
                for cname, cv in list(vars(v).items()):
                    if isinstance(cv, dict) and "cache" in cname.lower():
                        cv.clear()
