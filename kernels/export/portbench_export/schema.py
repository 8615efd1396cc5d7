# SPDX-License-Identifier: Apache-2.0
"""Validator of manifest.json against docs/bundle-manifest.md (schema "portbench.bundle/1").

`validate_manifest(doc)` checks the document alone; with `bundle_dir` it also checks that every
named file exists inside the bundle and that every cubin's sha256 matches. Unknown fields are
errors: the contract is exact. Returns a list of messages, empty when valid.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from . import SCHEMA, ExportError
from .manifest import INDEX_TYPES, TYPE_BYTES, check_relpath, inside, sha256_file

ARCHES = ("sm_90", "sm_90a")
TOP = {"schema", "frontend", "operator", "arch", "toolchain", "cubins", "configs"}
TOP_OPTIONAL = {"target", "sources", "unsupported"}
TARGET = {"name", "arch", "sm_count"}
SOURCE = {"path", "sha256", "package"}
CUBIN = {"file", "sha256", "ir"}
CONFIG = {"params", "tuning", "scratch", "launches"}
CONFIG_OPTIONAL = {"variants"}
VARIANT = {"name", "tuning", "scratch", "launches"}
SCRATCH_INIT = ("zero", "none")
LAUNCH = {"cubin", "entry", "grid", "block", "shared_bytes", "cluster", "params"}
PARAM_FIELDS = {
    "ptr": {"kind", "tensor"},
    "extent": {"kind", "tensor", "dim", "type"},
    "stride": {"kind", "tensor", "dim", "type"},
    "literal": {"kind", "type", "value"},
    "scratch": {"kind", "name"},
    "null": {"kind"},
    "ptr_table": {"kind", "tensors"},
    "array_table": {"kind", "tensors", "rank", "index_type"},
}
MAX_TABLE_RANK = 16     # harness/include/portbench/bundle/manifest.hpp k_max_table_rank
INT_RANGES = {"i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1),
              "i64": (-2**63, 2**63 - 1), "u64": (0, 2**64 - 1)}
# Fill, copy and sum steps (launches[] entries with "step"): their views' element types and bytes.
ELEMENT_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1,
                 "u64": 8, "u32": 4, "u16": 2, "u8": 1}
ELEMENT_RANGES = {**INT_RANGES, "i16": (-2**15, 2**15 - 1), "i8": (-128, 127), "u16": (0, 2**16 - 1), "u8": (0, 255)}
MAX_VIEW_RANK = 6
STEP_FIELDS = {"fill": {"step", "target", "value"}, "copy": {"step", "src", "dst"},
               "sum": {"step", "src", "dst", "axis"}}
FLOAT_ELEMENTS = {"f64", "f32", "f16", "bf16"}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _ident(v: Any) -> bool:
    return isinstance(v, str) and v != "" and v.strip() == v


class _V:
    def __init__(self):
        self.errors: list[str] = []

    def err(self, where: str, msg: str):
        self.errors.append(f"{where}: {msg}")

    def fields(self, where: str, obj: Any, required: set[str], optional: set[str] = frozenset()) -> bool:
        if not isinstance(obj, dict):
            self.err(where, "must be an object")
            return False
        for k in sorted(required - obj.keys()):
            self.err(where, f"missing field '{k}'")
        for k in sorted(obj.keys() - required - optional):
            self.err(where, f"unknown field '{k}'")
        return required <= obj.keys()

    def dim3(self, where: str, v: Any, minimum: int = 1):
        if not (isinstance(v, list) and len(v) == 3 and all(_is_int(x) and x >= minimum for x in v)):
            self.err(where, f"must be [x, y, z] of integers >= {minimum}")


def _check_param(v: _V, where: str, p: Any, scratch_names: set[str]):
    if not isinstance(p, dict) or p.get("kind") not in PARAM_FIELDS:
        v.err(where, f"'kind' must be one of {sorted(PARAM_FIELDS)}")
        return
    kind = p["kind"]
    if not v.fields(where, p, PARAM_FIELDS[kind], {"offset"} if kind == "ptr" else set()):
        return
    if kind == "ptr" and "offset" in p and not (_is_int(p["offset"]) and p["offset"] >= 0):
        v.err(where, "'offset' must be an integer >= 0 (elements)")
    if kind in ("ptr", "extent", "stride") and not _ident(p["tensor"]):
        v.err(where, "'tensor' must be a tensor name")
    if kind in ("extent", "stride"):
        if not (_is_int(p["dim"]) and p["dim"] >= 0):
            v.err(where, "'dim' must be an integer >= 0")
        if p["type"] not in INDEX_TYPES:
            v.err(where, f"'type' must be one of {list(INDEX_TYPES)}")
    if kind == "literal":
        t, val = p["type"], p["value"]
        if t not in TYPE_BYTES:
            v.err(where, f"'type' must be one of {sorted(TYPE_BYTES)}")
        elif t in INT_RANGES:
            lo, hi = INT_RANGES[t]
            if not (_is_int(val) and lo <= val <= hi):
                v.err(where, f"'value' must be an integer in the range of {t}")
        elif not (isinstance(val, (int, float)) and not isinstance(val, bool) and math.isfinite(val)):
            v.err(where, f"'value' must be a finite number for {t}")
    if kind in ("ptr_table", "array_table"):
        if not (isinstance(p["tensors"], list) and p["tensors"] and all(_ident(t) for t in p["tensors"])):
            v.err(where, "'tensors' must be a non-empty list of tensor names")
    if kind == "array_table":
        if not (_is_int(p["rank"]) and 0 <= p["rank"] <= MAX_TABLE_RANK):
            v.err(where, f"'rank' must be an integer 0..{MAX_TABLE_RANK}")
        if p["index_type"] not in ("i32", "i64"):
            v.err(where, "'index_type' must be i32 or i64")
    if kind == "scratch" and p["name"] not in scratch_names:
        v.err(where, f"scratch '{p['name']}' is not declared in the configuration's 'scratch'")


def _check_value(v: _V, where: str, t: str, val: Any) -> None:
    if t in ELEMENT_RANGES:
        lo, hi = ELEMENT_RANGES[t]
        if not (_is_int(val) and lo <= val <= hi):
            v.err(where, f"must be an integer in the range of {t}")
    elif not (isinstance(val, (int, float)) and not isinstance(val, bool) and math.isfinite(val)):
        v.err(where, f"must be a finite number for {t}")


def _check_view(v: _V, where: str, view: Any, scratch: dict[str, int]) -> list[int] | None:
    """A step's view; returns its shape when valid."""
    if not isinstance(view, dict):
        v.err(where, "must be an object")
        return None
    which = [k for k in ("tensor", "scratch") if k in view]
    if len(which) != 1:
        v.err(where, "needs exactly one of 'tensor' and 'scratch'")
        return None
    if not v.fields(where, view, {which[0], "type", "shape", "strides"}, {"offset"}):
        return None
    ok = True
    if not _ident(view[which[0]]):
        v.err(where, f"'{which[0]}' must be a name")
        ok = False
    elif which[0] == "scratch" and view["scratch"] not in scratch:
        v.err(where, f"scratch '{view['scratch']}' is not declared in the configuration's 'scratch'")
        ok = False
    if view["type"] not in ELEMENT_BYTES:
        v.err(where, f"'type' must be one of {sorted(ELEMENT_BYTES)}")
        return None
    if "offset" in view and not (_is_int(view["offset"]) and view["offset"] >= 0):
        v.err(where, "'offset' must be an integer >= 0 (elements)")
        ok = False
    shape, strides = view["shape"], view["strides"]
    if not (isinstance(shape, list) and 1 <= len(shape) <= MAX_VIEW_RANK and all(_is_int(x) and x >= 1 for x in shape)):
        v.err(where, f"'shape' must be 1 to {MAX_VIEW_RANK} integers >= 1")
        return None
    if not (isinstance(strides, list) and len(strides) == len(shape) and all(_is_int(x) and x >= 0 for x in strides)):
        v.err(where, "'strides' must be one integer >= 0 per extent")
        return None
    if ok and which[0] == "scratch":
        last = view.get("offset", 0) + sum((e - 1) * st for e, st in zip(shape, strides))
        if (last + 1) * ELEMENT_BYTES[view["type"]] > scratch[view["scratch"]]:
            v.err(where, f"element {last} lies outside scratch '{view['scratch']}' "
                         f"({scratch[view['scratch']]} bytes)")
    return shape if ok else None


def _check_step(v: _V, where: str, l: dict, scratch: dict[str, int]) -> None:
    kind = l.get("step")
    if kind not in STEP_FIELDS:
        v.err(where, f"'step' must be one of {sorted(STEP_FIELDS)} (a kernel launch has no 'step')")
        return
    if not v.fields(where, l, STEP_FIELDS[kind]):
        return
    if kind == "fill":
        if _check_view(v, f"{where}.target", l["target"], scratch) is not None:
            _check_value(v, f"{where}.value", l["target"]["type"], l["value"])
        return
    a = _check_view(v, f"{where}.src", l["src"], scratch)
    b = _check_view(v, f"{where}.dst", l["dst"], scratch)
    if kind == "copy":
        if a is not None and b is not None and a != b:
            v.err(f"{where}.dst", f"shape {b} differs from src shape {a}")
        return
    axis = l["axis"]
    if a is None or b is None:
        return
    if not (_is_int(axis) and 0 <= axis < len(a)):
        v.err(f"{where}.axis", f"must be an axis of src (an integer in [0, {len(a)}))")
        return
    want = [x for k, x in enumerate(a) if k != axis] or [1]
    if b != want:
        v.err(f"{where}.dst", f"shape {b} is not src shape {a} without axis {axis} ({want})")
    if (l["src"]["type"] in FLOAT_ELEMENTS) != (l["dst"]["type"] in FLOAT_ELEMENTS):
        v.err(f"{where}.dst", f"a sum of {l['src']['type']} into {l['dst']['type']}: src and dst are both "
                              f"floating or both integer")


def validate_manifest(doc: Any, bundle_dir: str | Path | None = None) -> list[str]:
    v = _V()
    if not v.fields("manifest", doc, TOP, TOP_OPTIONAL):
        return v.errors
    if "target" in doc and v.fields("target", doc["target"], TARGET):
        t = doc["target"]
        if not (_ident(t["name"]) and isinstance(t["arch"], str) and _is_int(t["sm_count"]) and t["sm_count"] > 0):
            v.err("target", "'name' must be a name, 'arch' a string, 'sm_count' an integer > 0")
    if "sources" in doc:
        if not isinstance(doc["sources"], list):
            v.err("sources", "must be an array")
        else:
            for i, src in enumerate(doc["sources"]):
                if v.fields(f"sources[{i}]", src, SOURCE):
                    if not (isinstance(src["path"], str) and src["path"] and isinstance(src["package"], str)):
                        v.err(f"sources[{i}]", "'path' and 'package' must be strings")
                    if not _hex64(src["sha256"]):
                        v.err(f"sources[{i}]", "'sha256' must be 64 lowercase hex digits")
    if doc["schema"] != SCHEMA:
        v.err("schema", f"must be {SCHEMA!r}, got {doc['schema']!r}")
    for k in ("frontend", "operator"):
        if not _ident(doc[k]):
            v.err(k, "must be a non-empty name")
    if doc["arch"] not in ARCHES:
        v.err("arch", f"must be one of {list(ARCHES)}, got {doc['arch']!r}")
    tc = doc["toolchain"]
    if not (isinstance(tc, dict) and tc and all(_ident(k) and isinstance(x, str) and x for k, x in tc.items())):
        v.err("toolchain", "must be a non-empty object of tool name -> version string")

    # A bundle without plans (every configuration unsupported) still carries its reasons.
    reasons_only = doc.get("configs") == [] and doc.get("cubins") == [] and bool(doc.get("unsupported"))
    if "unsupported" in doc:
        us = doc["unsupported"]
        if not isinstance(us, list):
            v.err("unsupported", "must be an array")
        else:
            for i, u in enumerate(us):
                w = f"unsupported[{i}]"
                if v.fields(w, u, {"params", "reason"}):
                    if not isinstance(u["params"], dict) or not u["params"]:
                        v.err(f"{w}.params", "must be a non-empty object")
                    if not isinstance(u["reason"], str) or not u["reason"]:
                        v.err(f"{w}.reason", "must be a non-empty string")
    if reasons_only:
        return v.errors
    cubin_files: set[str] = set()
    if not isinstance(doc["cubins"], list) or not doc["cubins"]:
        v.err("cubins", "must be a non-empty array")
    else:
        for i, c in enumerate(doc["cubins"]):
            w = f"cubins[{i}]"
            if not v.fields(w, c, CUBIN):
                continue
            try:
                check_relpath(c["file"], "file")
            except ExportError as e:
                v.err(w, str(e))
                continue
            if c["file"] in cubin_files:
                v.err(w, f"file '{c['file']}' listed twice")
            cubin_files.add(c["file"])
            if not _hex64(c["sha256"]):
                v.err(w, "'sha256' must be 64 lowercase hex digits")
            if not isinstance(c["ir"], list):
                v.err(w, "'ir' must be an array of file names")
            else:
                for j, name in enumerate(c["ir"]):
                    try:
                        check_relpath(name, "ir")
                    except ExportError as e:
                        v.err(f"{w}.ir[{j}]", str(e))
            if bundle_dir is not None:
                _check_files(v, w, Path(bundle_dir), c)

    if not isinstance(doc["configs"], list) or not doc["configs"]:
        v.err("configs", "must be a non-empty array")
        return v.errors
    for i, cfg in enumerate(doc["configs"]):
        w = f"configs[{i}]"
        if not v.fields(w, cfg, CONFIG, CONFIG_OPTIONAL):
            continue
        if not isinstance(cfg["params"], dict) or not cfg["params"]:
            v.err(f"{w}.params", "must be a non-empty object")
        _check_plan(v, w, cfg, cubin_files)
        if "variants" in cfg:
            _check_variants(v, w, cfg, cubin_files)
    return v.errors


def _hex64(x: Any) -> bool:
    return isinstance(x, str) and len(x) == 64 and all(ch in "0123456789abcdef" for ch in x)


def _check_plan(v: _V, w: str, plan: dict, cubin_files: set[str]) -> None:
    """tuning, scratch and launches of a configuration or one of its variants."""
    if not isinstance(plan["tuning"], dict):
        v.err(f"{w}.tuning", "must be an object")
    names: dict[str, int] = {}
    if not isinstance(plan["scratch"], list):
        v.err(f"{w}.scratch", "must be an array")
    else:
        for j, s in enumerate(plan["scratch"]):
            ws = f"{w}.scratch[{j}]"
            if v.fields(ws, s, {"name", "bytes"}, {"init"}):
                if not _ident(s["name"]) or s["name"] in names:
                    v.err(ws, "'name' must be a unique name")
                if not (_is_int(s["bytes"]) and s["bytes"] > 0):
                    v.err(ws, "'bytes' must be an integer > 0")
                if "init" in s:
                    _check_init(v, f"{ws}.init", s["init"], s["bytes"])
                names[s["name"]] = s["bytes"] if _is_int(s["bytes"]) else 0
    if not isinstance(plan["launches"], list) or not plan["launches"]:
        v.err(f"{w}.launches", "must be a non-empty array")
        return
    if all(isinstance(l, dict) and "step" in l for l in plan["launches"]):
        v.err(f"{w}.launches", "launches no kernel (harness steps alone run nothing of the bundle)")
    for j, l in enumerate(plan["launches"]):
        wl = f"{w}.launches[{j}]"
        if isinstance(l, dict) and "step" in l:
            _check_step(v, wl, l, names)
            continue
        if not v.fields(wl, l, LAUNCH):
            continue
        if l["cubin"] not in cubin_files:
            v.err(wl, f"cubin '{l['cubin']}' is not listed in 'cubins'")
        if not _ident(l["entry"]):
            v.err(wl, "'entry' must be a symbol name")
        v.dim3(f"{wl}.grid", l["grid"])
        v.dim3(f"{wl}.block", l["block"])
        v.dim3(f"{wl}.cluster", l["cluster"])
        if not (_is_int(l["shared_bytes"]) and l["shared_bytes"] >= 0):
            v.err(f"{wl}.shared_bytes", "must be an integer >= 0")
        if not isinstance(l["params"], list):
            v.err(f"{wl}.params", "must be an array")
            continue
        for k, p in enumerate(l["params"]):
            _check_param(v, f"{wl}.params[{k}]", p, names)


def _check_init(v: _V, where: str, init: Any, nbytes: Any) -> None:
    """A scratch buffer's init: "zero", "none" or {"fill": value, "type": element type}."""
    if isinstance(init, str):
        if init not in SCRATCH_INIT:
            v.err(where, f"must be one of {list(SCRATCH_INIT)} or {{\"fill\": V, \"type\": T}}")
        return
    if not v.fields(where, init, {"fill", "type"}):
        return
    t = init["type"]
    if t not in ELEMENT_BYTES:
        v.err(where, f"'type' must be one of {sorted(ELEMENT_BYTES)}")
        return
    _check_value(v, f"{where}.fill", t, init["fill"])
    if _is_int(nbytes) and nbytes % ELEMENT_BYTES[t]:
        v.err(where, f"{nbytes} bytes are not a whole number of {t} elements")


def _check_variants(v: _V, w: str, cfg: dict, cubin_files: set[str]) -> None:
    variants = cfg["variants"]
    if not isinstance(variants, list) or not variants:
        v.err(f"{w}.variants", "must be a non-empty array")
        return
    seen: set[str] = set()
    for j, var in enumerate(variants):
        wv = f"{w}.variants[{j}]"
        if not v.fields(wv, var, VARIANT):
            continue
        if not _ident(var["name"]) or var["name"] in seen:
            v.err(wv, "'name' must be a unique name")
        seen.add(var["name"])
        _check_plan(v, wv, var, cubin_files)
    chosen = cfg["tuning"].get("variant") if isinstance(cfg["tuning"], dict) else None
    if chosen not in seen:
        v.err(f"{w}.tuning", f"'variant' must name one of the variants, got {chosen!r}")


def _check_files(v: _V, where: str, bundle_dir: Path, c: dict):
    for name in [c["file"]] + (c["ir"] if isinstance(c["ir"], list) else []):
        try:
            path = inside(bundle_dir, name)
        except ExportError as e:
            v.err(where, str(e))
            continue
        if not path.is_file():
            v.err(where, f"file '{name}' does not exist in the bundle")
        elif name == c["file"] and sha256_file(path) != c["sha256"]:
            v.err(where, f"sha256 of '{name}' does not match the file")


def validate_bundle(bundle_dir: str | Path) -> list[str]:
    """Reads <bundle_dir>/manifest.json and validates it together with the files it names."""
    bundle_dir = Path(bundle_dir)
    try:
        doc = json.loads((bundle_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        return [f"{bundle_dir}/manifest.json: {e}"]
    return validate_manifest(doc, bundle_dir)
