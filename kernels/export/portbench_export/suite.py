# SPDX-License-Identifier: Apache-2.0
"""Reading a suite (configs/<suite>.json): {"suite": name, "configs": [{"op", "params"}, ...]}.

A configuration may also carry "tuning" (tile experiments), which replaces the exporter's own
choice for that configuration; the harness ignores it, and the manifest records what was used.
Its keys, each a positive integer, and the exporters that read them:
  block_rows, tile, occupancy   cuTile Python and cuTile Rust row kernels
  warps, latency, single, no_tma   cuTile Python layer_norm (worker warps, load latency hint,
                                   one tile per row at any width, loads without TMA)
  vectors_per_thread            CUDA C++ layer_norm
  num_ctas                      cuTile Python vector_add (a CTA cluster per tile block)"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


TUNING_KEYS = frozenset({"block_rows", "tile", "occupancy", "warps", "latency", "single", "no_tma",
                         "vectors_per_thread", "num_ctas"})


class SuiteError(Exception):
    """The suite file is missing or malformed; the message is one line."""


@dataclass(frozen=True)
class Config:
    index: int                  # position in the suite's configs list
    op: str
    params: dict[str, Any]      # exactly as in the suite file
    tuning: dict[str, int] = field(default_factory=dict)   # overrides of the exporter's choices

    def tune(self, key: str, default: int) -> int:
        """The suite's override of a tuning choice, else the exporter's `default`."""
        return self.tuning.get(key, default)

    def id(self) -> str:
        """Stable "op/k1=v1,k2=v2" (keys sorted), as reference::config::id() spells it."""
        kv = ",".join(f"{k}={_fmt(self.params[k])}" for k in sorted(self.params))
        return f"{self.op}/{kv}"

    def integer(self, key: str, minimum: int = 1) -> int:
        v = self.params.get(key)
        if isinstance(v, bool) or not isinstance(v, int):
            raise SuiteError(f"{self.id()}: parameter '{key}' must be an integer, got {v!r}")
        if v < minimum:
            raise SuiteError(f"{self.id()}: parameter '{key}' must be >= {minimum}, got {v}")
        return v

    def text(self, key: str) -> str:
        v = self.params.get(key)
        if not isinstance(v, str):
            raise SuiteError(f"{self.id()}: parameter '{key}' must be a string, got {v!r}")
        return v


@dataclass(frozen=True)
class Suite:
    name: str
    path: Path
    configs: list[Config]


def _fmt(v: Any) -> str:
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def load_suite(path: str | Path) -> Suite:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SuiteError(f"{path}: cannot read suite: {e.strerror or e}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise SuiteError(f"{path}: not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    if not isinstance(doc, dict):
        raise SuiteError(f"{path}: top level must be a JSON object")
    configs = doc.get("configs")
    if not isinstance(configs, list):
        raise SuiteError(f"{path}: 'configs' must be an array")
    name = doc.get("suite", path.stem)
    if not isinstance(name, str):
        raise SuiteError(f"{path}: 'suite' must be a string")
    out: list[Config] = []
    for i, c in enumerate(configs):
        where = f"{path}: configs[{i}]"
        if not isinstance(c, dict):
            raise SuiteError(f"{where}: must be an object")
        op = c.get("op")
        if not isinstance(op, str) or not op:
            raise SuiteError(f"{where}: 'op' must be a non-empty string")
        params = c.get("params")
        if not isinstance(params, dict):
            raise SuiteError(f"{where}: 'params' must be an object")
        for k, v in params.items():
            if not (v is None or isinstance(v, (bool, int, float, str))):
                raise SuiteError(f"{where}: parameter '{k}' must be null, bool, number or string")
        tuning = c.get("tuning", {})
        if not isinstance(tuning, dict) or not all(
                k in TUNING_KEYS and isinstance(v, int) and not isinstance(v, bool) and v > 0
                for k, v in tuning.items()):
            raise SuiteError(f"{where}: 'tuning' must map {sorted(TUNING_KEYS)} to positive integers")
        out.append(Config(i, op, dict(params), dict(tuning)))
    return Suite(name, path, out)
