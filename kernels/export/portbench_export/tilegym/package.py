# SPDX-License-Identifier: Apache-2.0
"""Loading the pinned tilegym package's cuTile modules under stand-ins, each source verified.

tilegym's package __init__ files import torch, transformers and every backend; none of that is
needed to run a host wrapper. So `tilegym`, `tilegym.ops` and `tilegym.ops.cutile` are empty
package stand-ins whose __path__ is the installed package, `tilegym.backend` (register_impl,
dispatch) and `tilegym.autotune` (whether autotuning is on, which the capture decides) are
stand-ins, and every other tilegym module (the operator modules, utils, logger, experimental,
moe_interface, ops) loads unmodified from the installed files. Before a file is executed its
sha256 is compared with the wheel's RECORD (urlsafe base64); a file that differs, i.e. someone
changed the installed package, is refused with one line naming it."""
from __future__ import annotations

import base64
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import ExportError

PACKAGE = "tilegym"
PINNED_VERSION = "1.5.1"
PIN = f"{PACKAGE}=={PINNED_VERSION}"
STANDIN_PACKAGES = ("tilegym", "tilegym.ops", "tilegym.ops.cutile")
SITE_ENV = "PORTBENCH_TILEGYM_SITE"   # a folder holding tilegym/ and its dist-info (tests)


@dataclass
class Installed:
    site: Path                        # the folder holding tilegym/ and tilegym-<v>.dist-info/
    record: dict[str, str]            # "tilegym/ops/cutile/rms_norm.py" -> sha256 hex
    verified: dict[str, str] = field(default_factory=dict)   # loaded files -> sha256 hex

    @property
    def root(self) -> Path:
        return self.site / PACKAGE


def _b64_to_hex(value: str) -> str:
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()


def find_installed() -> Installed:
    """The installed tilegym (or $PORTBENCH_TILEGYM_SITE): must be exactly the pinned version."""
    site = os.environ.get(SITE_ENV)
    if site:
        site_path = Path(site)
    else:
        spec = importlib.util.find_spec(PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise ExportError(f"{PIN} is not installed in {sys.prefix} (scripts/setup.sh installs it "
                              f"with pip install --no-deps)")
        site_path = Path(list(spec.submodule_search_locations)[0]).parent
    record = site_path / f"{PACKAGE}-{PINNED_VERSION}.dist-info" / "RECORD"
    if not record.is_file():
        others = sorted(p.name for p in site_path.glob(f"{PACKAGE}-*.dist-info"))
        raise ExportError(f"{record}: not found; the exporter needs {PIN}"
                          + (f" (installed: {', '.join(others)})" if others else ""))
    hashes = {}
    for line in record.read_text(encoding="utf-8").splitlines():
        parts = line.rsplit(",", 2)
        if len(parts) == 3 and parts[1].startswith("sha256="):
            hashes[parts[0]] = _b64_to_hex(parts[1][len("sha256="):])
    if not hashes:
        raise ExportError(f"{record}: no sha256 entries")
    return Installed(site_path, hashes)


def _verified_source(inst: Installed, path: Path) -> bytes:
    rel = path.relative_to(inst.site).as_posix()
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    want = inst.record.get(rel)
    if want is None:
        raise ExportError(f"{path}: not listed in {PIN}'s RECORD; refusing to load it")
    if digest != want:
        raise ExportError(f"{path}: sha256 {digest[:16]}... differs from {PIN}'s RECORD {want[:16]}... "
                          f"(the installed package was changed); refusing to load it")
    inst.verified[rel] = digest
    return data


class _VerifiedLoader(importlib.abc.Loader):
    def __init__(self, inst: Installed, path: Path):
        self.inst, self.path = inst, path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        source = _verified_source(self.inst, self.path)   # compiled from the verified bytes, no .pyc
        module.__file__ = str(self.path)
        exec(compile(source, str(self.path), "exec"), module.__dict__)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds tilegym.* modules (plain .py files) in the installed package."""

    def __init__(self, inst: Installed):
        self.inst = inst

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(PACKAGE + ".") or fullname in STANDIN_PACKAGES:
            return None
        parts = fullname.split(".")
        file = self.inst.site.joinpath(*parts).with_suffix(".py")
        if file.is_file():
            return importlib.machinery.ModuleSpec(fullname, _VerifiedLoader(self.inst, file), origin=str(file))
        pkg = self.inst.site.joinpath(*parts)
        if (pkg / "__init__.py").is_file():   # a sub-package: an empty stand-in, its __init__ never runs
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = [str(pkg)]
            return spec
        return None


def _package(name: str, path: Path) -> types.ModuleType:
    m = types.ModuleType(name)
    m.__path__ = [str(path)]
    m.__package__ = name
    m.__doc__ = f"portbench stand-in package (its __init__.py is not run); modules load from {path}"
    return m


@dataclass
class BackendRegistry:
    impls: dict[str, Callable] = field(default_factory=dict)


def _backend_module(registry: BackendRegistry) -> types.ModuleType:
    """tilegym.backend: register_impl records and returns the function unchanged; dispatch
    calls the recorded cuTile implementation."""
    m = types.ModuleType("tilegym.backend")

    def register_impl(name: str, backend: str):
        def decorator(func):
            if backend == "cutile":
                registry.impls[name] = func
            return func
        return decorator

    def dispatch(name: str, fallback_backend: str = "pytorch"):
        def decorator(default_impl):
            def wrapper(*args, **kwargs):
                kwargs.pop("backend", None)
                impl = registry.impls.get(name)
                if impl is None:
                    raise ExportError(f"tilegym dispatch of '{name}': no cutile implementation loaded")
                return impl(*args, **kwargs)
            wrapper.__name__ = getattr(default_impl, "__name__", name)
            return wrapper
        return decorator

    m.register_impl = register_impl
    m.dispatch = dispatch
    m.get_current_backend = lambda: "cutile"
    m.is_backend_available = lambda backend: backend == "cutile"
    m.get_available_backends = lambda: ["cutile"]
    m.set_backend = lambda backend: None
    return m


def _autotune_module(is_disabled: Callable[[], bool]) -> types.ModuleType:
    m = types.ModuleType("tilegym.autotune")
    m.DISABLE_AUTOTUNE_ENV = "TILEGYM_DISABLE_AUTOTUNE"
    m.is_autotune_disabled = is_disabled
    m.is_autotune_enabled = lambda: not is_disabled()

    def get_cached_ct_kernel(*args, **kwargs):
        raise ExportError("tilegym.autotune.get_cached_ct_kernel is not modelled by the stand-in")
    m.get_cached_ct_kernel = get_cached_ct_kernel
    return m


@dataclass
class Loaded:
    inst: Installed
    registry: BackendRegistry

    def module(self, name: str) -> types.ModuleType:
        import importlib
        return importlib.import_module(name)

    def sources(self, *modules: types.ModuleType) -> list[dict]:
        """The verified tilegym files the given modules are built from: each module's file and,
        transitively, those of the tilegym modules whose functions or objects it uses."""
        seen: set[str] = set()
        stack = [m.__name__ for m in modules]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            mod = sys.modules.get(name)
            if mod is None:
                continue
            for v in list(vars(mod).values()):
                dep = v.__name__ if isinstance(v, types.ModuleType) else getattr(v, "__module__", None)
                if isinstance(dep, str) and dep.startswith(PACKAGE + ".") and dep not in seen:
                    stack.append(dep)
        out = []
        for name in sorted(seen):
            f = getattr(sys.modules.get(name), "__file__", None)
            if not f:
                continue
            rel = Path(f).relative_to(self.inst.site).as_posix()
            if rel in self.inst.verified:
                out.append({"path": rel, "sha256": self.inst.verified[rel], "package": PIN})
        return out


def install(is_autotune_disabled: Callable[[], bool]) -> Loaded:
    """Installs the stand-in packages and the verifying finder (once per process)."""
    existing = sys.modules.get(PACKAGE)
    if existing is not None and not getattr(existing, "__portbench_standin__", False):
        raise ExportError("the real tilegym package is already imported in this process")
    inst = find_installed()
    registry = BackendRegistry()
    for name in STANDIN_PACKAGES:
        m = _package(name, inst.site.joinpath(*name.split(".")))
        m.__portbench_standin__ = True
        sys.modules[name] = m
    sys.modules["tilegym.backend"] = _backend_module(registry)
    sys.modules["tilegym.autotune"] = _autotune_module(is_autotune_disabled)
    sys.meta_path.insert(0, _Finder(inst))
    return Loaded(inst, registry)
