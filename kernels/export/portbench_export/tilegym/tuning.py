# SPDX-License-Identifier: Apache-2.0
"""Reading a tuning record (configs/tuning/<frontend>-<target>.json, written by `portbench tune`):

    {"schema": "portbench.tuning-record/1", "frontend": "tilegym", "target": "h200",
     "made_by": "...", "gpu": "...", "date": "...",
     "choices": [{"op": "matmul", "params": {...the suite's params...}, "variant": "<name>",
                  "speedup_over_default": 1.71, "candidates": 4}]}

A configuration gets the variant the record names for exactly its operator and parameters; one
the record does not list gets the exporter's default. A malformed record, one for another front
end or target, or a choice naming a variant the configuration does not have is an error naming
the record and the field."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import ExportError
from ..suite import SuiteError

SCHEMA = "portbench.tuning-record/1"


@dataclass(frozen=True)
class Choice:
    variant: str
    index: int          # position in the record's choices (for messages)


@dataclass(frozen=True)
class TuningRecord:
    path: Path
    choices: dict[str, Choice]     # key(op, params) -> choice

    def lookup(self, op: str, params: dict[str, Any]) -> Choice | None:
        return self.choices.get(key(op, params))


def key(op: str, params: dict[str, Any]) -> str:
    return json.dumps([op, params], sort_keys=True)


def is_gpu(name: str, card: str) -> bool:
    """Whether the device `name` is the card `card` names: that name, or it and further words
    ("NVIDIA H200 NVL"), as `portbench tune --gpu` decides."""
    return bool(card) and (name == card or name.startswith(card + " "))


def load_record(path: Path, frontend: str, target: str, gpu: str | None = None) -> TuningRecord:
    """A measured record names the card it ran on ('gpu'); it must be the target's card `gpu`.
    Records written by hand for a purpose (no 'gpu') are taken as they are."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SuiteError(f"{path}: cannot read tuning record: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise SuiteError(f"{path}: not valid JSON: {e.msg} at line {e.lineno}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise SuiteError(f"{path}: 'schema' must be {SCHEMA!r}")
    if doc.get("frontend") != frontend:
        raise SuiteError(f"{path}: 'frontend' is {doc.get('frontend')!r}, this exporter is {frontend!r}")
    if doc.get("target") != target:
        raise SuiteError(f"{path}: 'target' is {doc.get('target')!r}, the export's target is {target!r}")
    if gpu and "gpu" in doc and not (isinstance(doc["gpu"], str) and is_gpu(doc["gpu"], gpu)):
        raise SuiteError(f"{path}: 'gpu' is {doc['gpu']!r}: the record was measured on another card than "
                         f"the target's {gpu!r}")
    choices = doc.get("choices")
    if not isinstance(choices, list):
        raise SuiteError(f"{path}: 'choices' must be an array")
    out: dict[str, Choice] = {}
    for i, c in enumerate(choices):
        where = f"{path}: choices[{i}]"
        if not isinstance(c, dict) or not isinstance(c.get("op"), str) or not isinstance(c.get("params"), dict):
            raise SuiteError(f"{where}: needs 'op' (string) and 'params' (object)")
        if not isinstance(c.get("variant"), str) or not c["variant"]:
            raise SuiteError(f"{where}: 'variant' must be a variant name")
        k = key(c["op"], c["params"])
        if k in out:
            raise SuiteError(f"{where}: the configuration is already chosen by choices[{out[k].index}]")
        out[k] = Choice(c["variant"], i)
    return TuningRecord(path, out)


def unknown_variant(record: TuningRecord, choice: Choice, config_id: str, names: list[str]) -> ExportError:
    return ExportError(f"{record.path}: choices[{choice.index}] names variant {choice.variant!r} for {config_id}, "
                       f"which has {names}")
