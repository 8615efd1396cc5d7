# SPDX-License-Identifier: Apache-2.0
"""Building and writing bundles per docs/bundle-manifest.md (schema "portbench.bundle/1")."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from . import SCHEMA, ExportError

# Bytes of each scalar type in the kernel parameter buffer (natural alignment = size).
TYPE_BYTES = {"i32": 4, "u32": 4, "i64": 8, "u64": 8, "f32": 4, "f64": 8}
INDEX_TYPES = ("i32", "i64", "u32")
POINTER_KINDS = ("ptr", "scratch", "null", "ptr_table", "array_table")


# ---- parameter constructors -------------------------------------------------------------------

def ptr(tensor: str, offset: int = 0) -> dict:
    """Device address of `tensor`'s view, `offset` elements in (omitted when 0)."""
    return {"kind": "ptr", "tensor": tensor, **({"offset": offset} if offset else {})}


def extent(tensor: str, dim: int, type: str = "i32") -> dict:
    return {"kind": "extent", "tensor": tensor, "dim": dim, "type": type}


def stride(tensor: str, dim: int, type: str = "i32") -> dict:
    return {"kind": "stride", "tensor": tensor, "dim": dim, "type": type}


def literal(type: str, value: int | float) -> dict:
    return {"kind": "literal", "type": type, "value": value}


def scratch(name: str) -> dict:
    return {"kind": "scratch", "name": name}


def null() -> dict:
    return {"kind": "null"}


def array_table(tensors: list[str], rank: int, index_type: str) -> dict:
    """Device address of a table the harness builds: per tensor, its address, extents and strides
    as 64-bit words (docs/bundle-manifest.md)."""
    return {"kind": "array_table", "tensors": list(tensors), "rank": rank, "index_type": index_type}


def param_bytes(p: dict) -> int:
    if p["kind"] in POINTER_KINDS:
        return 8
    return TYPE_BYTES[p["type"]]


def pack(params: list[dict]) -> tuple[list[tuple[int, int]], int]:
    """(offset, size) of each parameter packed in order at natural alignment, and the end offset."""
    off, layout = 0, []
    for p in params:
        size = param_bytes(p)
        off = (off + size - 1) // size * size
        layout.append((off, size))
        off += size
    return layout, off


# ---- paths and hashes -------------------------------------------------------------------------

def check_relpath(rel: str, what: str = "path") -> str:
    """A bundle-relative file name: relative, POSIX, no '..' or '.' parts, no backslashes."""
    if not isinstance(rel, str) or not rel:
        raise ExportError(f"{what}: must be a non-empty string")
    if "\\" in rel or "\x00" in rel:
        raise ExportError(f"{what} '{rel}': backslashes and NUL are not allowed")
    p = PurePosixPath(rel)
    if p.is_absolute() or any(part in ("..", ".", "") for part in rel.split("/")):
        raise ExportError(f"{what} '{rel}': must stay inside the bundle (relative, no '.' or '..')")
    return rel


def inside(bundle_dir: Path, rel: str) -> Path:
    """Resolves `rel` under `bundle_dir`, refusing anything (symlinks included) that leaves it."""
    check_relpath(rel)
    root = bundle_dir.resolve()
    target = (root / rel).resolve()
    if target != root and root not in target.parents:
        raise ExportError(f"path '{rel}' leaves the bundle {bundle_dir}")
    return target


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---- bundle builder ---------------------------------------------------------------------------

@dataclass
class Launch:
    cubin: str
    entry: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    params: list[dict]
    shared_bytes: int = 0
    cluster: tuple[int, int, int] = (1, 1, 1)

    def to_json(self) -> dict:
        return {"cubin": self.cubin, "entry": self.entry, "grid": list(self.grid),
                "block": list(self.block), "shared_bytes": self.shared_bytes,
                "cluster": list(self.cluster), "params": self.params}


@dataclass
class Bundle:
    frontend: str
    operator: str
    arch: str
    toolchain: dict[str, str]
    cubins: dict[str, bytes] = field(default_factory=dict)      # file -> ELF bytes
    irs: dict[str, dict[str, str]] = field(default_factory=dict)  # cubin file -> {ir file: text}
    configs: list[dict] = field(default_factory=list)
    memo: dict[str, Any] = field(default_factory=dict)   # exporter's own per-bundle state, not written
    target: Any = None              # target.Target the bundle was built for (manifest "target")
    sources: list[dict] = field(default_factory=list)   # {"path", "sha256", "package"} of kernel sources
    unsupported: list[dict] = field(default_factory=list)   # {"params", "reason"}: configurations skipped

    def add_cubin(self, file: str, data: bytes, ir: dict[str, str] | None = None) -> str:
        check_relpath(file, "cubin")
        if file in self.cubins and self.cubins[file] != data:
            raise ExportError(f"cubin '{file}' added twice with different contents")
        self.cubins[file] = data
        self.irs[file] = dict(ir or {})
        for name in self.irs[file]:
            check_relpath(name, "ir")
        return file

    def add_config(self, params: dict[str, Any], launches: list[Launch | dict],
                   tuning: dict[str, Any] | None = None, scratch: list[dict] | None = None,
                   variants: list[dict] | None = None) -> None:
        """One configuration's chosen plan; `variants` are the alternative plans an autotuner would
        try ({"name", "tuning", "scratch", "launches"}), written only when given."""
        cfg = {"params": dict(params), "tuning": dict(tuning or {}), "scratch": list(scratch or []),
               "launches": [l if isinstance(l, dict) else l.to_json() for l in launches]}
        if variants is not None:
            cfg["variants"] = list(variants)
        self.configs.append(cfg)

    def add_sources(self, sources: list[dict]) -> None:
        for s in sources:
            if s not in self.sources:
                self.sources.append(dict(s))

    def manifest(self) -> dict:
        doc = {
            "schema": SCHEMA,
            "frontend": self.frontend,
            "operator": self.operator,
            "arch": self.arch,
            "toolchain": dict(self.toolchain),
        }
        if self.target is not None:
            doc["target"] = self.target.manifest_entry()
        if self.sources:
            doc["sources"] = sorted(self.sources, key=lambda s: s["path"])
        doc["cubins"] = [{"file": f, "sha256": sha256_bytes(d), "ir": sorted(self.irs[f])}
                         for f, d in sorted(self.cubins.items())]
        doc["configs"] = self.configs
        if self.unsupported:
            doc["unsupported"] = self.unsupported
        return doc

    def write(self, out_root: Path) -> Path:
        """Writes <out_root>/<operator>/ atomically: a fresh temp folder renamed over the old one."""
        from .schema import validate_manifest
        doc = self.manifest()
        errors = validate_manifest(doc)
        if errors:
            raise ExportError(f"{self.frontend}/{self.operator}: invalid manifest: {errors[0]}")
        out_root.mkdir(parents=True, exist_ok=True)
        final = out_root / check_relpath(self.operator, "operator")
        tmp = Path(tempfile.mkdtemp(prefix=f".{self.operator}.", dir=out_root))
        tmp.chmod(0o755)
        try:
            for f, data in self.cubins.items():
                inside(tmp, f).write_bytes(data)
                for name, text in self.irs[f].items():
                    inside(tmp, name).write_text(text, encoding="utf-8")
            (tmp / "manifest.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
            errors = validate_manifest(doc, tmp)
            if errors:
                raise ExportError(f"{self.frontend}/{self.operator}: invalid bundle: {errors[0]}")
            if final.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{self.operator}.old.", dir=out_root))
                os.replace(final, old / "b")
                shutil.rmtree(old)
            os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return final
