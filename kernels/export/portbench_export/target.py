# SPDX-License-Identifier: Apache-2.0
"""The target GPU description every exporter reads (configs/targets/<name>.json) instead of
hard-coding SM counts: `--target FILE` on the command line, else $PORTBENCH_TARGET, else
configs/targets/h200.json. Each manifest records its name, arch and SM count."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .suite import SuiteError
from .tools import REPO_ROOT

DEFAULT_TARGET = REPO_ROOT / "configs" / "targets" / "h200.json"
FIELDS = {"name": str, "gpu": str, "arch": str, "capability": list, "sm_count": int, "l2_bytes": int,
          "smem_per_block_optin": int, "max_grid_dim": list}


@dataclass(frozen=True)
class Target:
    name: str
    gpu: str
    arch: str                          # "sm_90": what tileiras / ptxas are asked for
    capability: tuple[int, int]        # (major, minor), as torch.cuda.get_device_capability()
    sm_count: int
    l2_bytes: int
    smem_per_block_optin: int
    max_grid_dim: tuple[int, int, int]
    path: Path

    def manifest_entry(self) -> dict:
        return {"name": self.name, "arch": self.arch, "sm_count": self.sm_count}


def target_path(explicit: str | Path | None = None) -> Path:
    if explicit:
        return Path(explicit)
    env = os.environ.get("PORTBENCH_TARGET")
    return Path(env) if env else DEFAULT_TARGET


def load_target(path: str | Path | None = None) -> Target:
    """Reads and checks a target description; a bad file is one line naming it and the field."""
    p = target_path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise SuiteError(f"{p}: cannot read target description: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise SuiteError(f"{p}: not valid JSON: {e.msg} at line {e.lineno}") from None
    if not isinstance(doc, dict):
        raise SuiteError(f"{p}: target description must be a JSON object")
    for key, kind in FIELDS.items():
        v = doc.get(key)
        if not isinstance(v, kind) or isinstance(v, bool):
            raise SuiteError(f"{p}: field '{key}' must be a {kind.__name__}")
    cap, grid = doc["capability"], doc["max_grid_dim"]
    if len(cap) != 2 or not all(isinstance(x, int) and x >= 0 for x in cap):
        raise SuiteError(f"{p}: field 'capability' must be [major, minor]")
    if len(grid) != 3 or not all(isinstance(x, int) and x > 0 for x in grid):
        raise SuiteError(f"{p}: field 'max_grid_dim' must be [x, y, z] of positive integers")
    if doc["sm_count"] <= 0:
        raise SuiteError(f"{p}: field 'sm_count' must be positive")
    if not doc["arch"].startswith("sm_"):
        raise SuiteError(f"{p}: field 'arch' must be an sm_XX name, got {doc['arch']!r}")
    return Target(doc["name"], doc["gpu"], doc["arch"], (cap[0], cap[1]), doc["sm_count"], doc["l2_bytes"],
                  doc["smem_per_block_optin"], (grid[0], grid[1], grid[2]), p)
