# SPDX-License-Identifier: Apache-2.0
"""What a cubin says about itself, read with the pinned cuobjdump: ELF arch, entry symbols,
each entry's parameter table (.nv.info EIATTR_KPARAM_INFO, EIATTR_CBANK_PARAM_SIZE) and the
functions and arch of its SASS. Exporters check their manifests against this before writing."""
from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import ExportError
from .manifest import pack
from .tools import find_tool, run_tool


@dataclass
class EntryInfo:
    name: str
    params: list[tuple[int, int, int]] = field(default_factory=list)  # (ordinal, offset, size)
    cbank_param_size: int | None = None
    kparam_attrs: set[str] = field(default_factory=set)   # EIATTR_KPARAM_INFO and/or _V2
    cta_per_cluster: tuple[int, int, int] | None = None   # EIATTR_CTA_PER_CLUSTER (Tile IR num_ctas > 1)
    blocks_are_clusters: bool = False                     # EIATTR_BLOCKS_ARE_CLUSTERS: grid counts clusters


@dataclass
class CubinInfo:
    arch: str                                       # "sm_90" / "sm_90a" from the ELF header
    entries: dict[str, EntryInfo]                   # STO_ENTRY functions with their param tables


# ptxas 13.4 writes EIATTR_KPARAM_INFO_V2 for some entries (seen on cuTile rms_norm), the classic
# EIATTR_KPARAM_INFO for others; both carry Ordinal / Offset / Size.
KPARAM_ATTRS = ("EIATTR_KPARAM_INFO", "EIATTR_KPARAM_INFO_V2")
_HEADER = re.compile(r"^64-?bit\s+elf:.*?\bsm=(\d+a?)\b", re.I | re.M)
_KPARAM = re.compile(r"Ordinal\s*:\s*(0x[0-9a-f]+)\s+Offset\s*:\s*(0x[0-9a-f]+)\s+Size\s*:\s*(0x[0-9a-f]+)",
                     re.I)


def _as_path(cubin: bytes | Path, tmp: Path) -> Path:
    if isinstance(cubin, (bytes, bytearray)):
        p = tmp / "k.cubin"
        p.write_bytes(cubin)
        return p
    return Path(cubin)


def parse_elf_dump(text: str) -> tuple[str, dict[str, EntryInfo]]:
    """Parses `cuobjdump -elf` output: the arch and each .nv.info.<kernel> parameter table."""
    m = _HEADER.search(text)
    if not m:
        raise ExportError("cuobjdump -elf: no ELF header line with sm=")
    arch = f"sm_{m.group(1)}"
    entries: dict[str, EntryInfo] = {}
    current: EntryInfo | None = None
    attr = None
    for line in text.splitlines():
        s = line.strip()
        if line.startswith(".nv.info."):
            name = line[len(".nv.info."):].strip()
            current = entries.setdefault(name, EntryInfo(name))
            continue
        if line and not line[0].isspace():      # any other section header ends the table
            current = None
            continue
        if current is None:
            continue
        if s.startswith("Attribute:"):
            attr = s.split(":", 1)[1].strip()
            if attr == "EIATTR_BLOCKS_ARE_CLUSTERS":
                current.blocks_are_clusters = True
        elif s.startswith("Value:") and attr in KPARAM_ATTRS:
            current.kparam_attrs.add(attr)
            k = _KPARAM.search(s)
            if not k:
                raise ExportError(f"cuobjdump -elf: unreadable KPARAM_INFO for {current.name}: {s}")
            current.params.append(tuple(int(x, 16) for x in k.groups()))
        elif s.startswith("Value:") and attr == "EIATTR_CTA_PER_CLUSTER":
            dims = [int(x, 16) for x in s.split(":", 1)[1].split()]
            if len(dims) != 3:
                raise ExportError(f"cuobjdump -elf: unreadable CTA_PER_CLUSTER for {current.name}: {s}")
            current.cta_per_cluster = (dims[0], dims[1], dims[2])
        elif s.startswith("Value:") and attr == "EIATTR_CBANK_PARAM_SIZE":
            current.cbank_param_size = int(s.split(":", 1)[1].split()[0], 16)
    for e in entries.values():
        e.params.sort()
    return arch, entries


def entry_symbols(text: str) -> list[str]:
    """Names of STO_ENTRY functions from `cuobjdump -symbols` output."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "STT_FUNC" and "STO_ENTRY" in parts:
            out.append(parts[-1])
    return out


def inspect_cubin(cubin: bytes | Path) -> CubinInfo:
    with tempfile.TemporaryDirectory() as tmp:
        path = _as_path(cubin, Path(tmp))
        tool = find_tool("cuobjdump")
        arch, tables = parse_elf_dump(run_tool([tool, "-elf", path], "cuobjdump -elf"))
        names = entry_symbols(run_tool([tool, "-symbols", path], "cuobjdump -symbols"))
    entries = {n: tables.get(n, EntryInfo(n)) for n in names}
    return CubinInfo(arch, entries)


def sass_summary(cubin: bytes | Path) -> tuple[set[str], list[str]]:
    """(archs of "code for sm_XX" blocks, function names) from `cuobjdump -sass`."""
    with tempfile.TemporaryDirectory() as tmp:
        path = _as_path(cubin, Path(tmp))
        text = run_tool([find_tool("cuobjdump"), "-sass", path], "cuobjdump -sass")
    archs = set(re.findall(r"code for (sm_\d+a?)", text))
    funcs = re.findall(r"^\s*Function\s*:\s*(\S+)", text, re.M)
    return archs, funcs


def layout_mismatch(info: CubinInfo, entry: str, params: list[dict], cluster: list[int] | None = None) -> str | None:
    """Compares a manifest parameter list (and, when given, its launch cluster) with the cubin's
    own tables; None when they agree. A cubin compiled with CTAs per cluster (Tile IR num_ctas > 1)
    must be launched with exactly that cluster, any other with [1, 1, 1]."""
    e = info.entries.get(entry)
    if e is None:
        return f"entry '{entry}' is not an entry symbol of the cubin (has {sorted(info.entries)})"
    layout, end = pack(params)
    want = [(i, off, size) for i, (off, size) in enumerate(layout)]
    if e.params != want:
        return (f"entry '{entry}': manifest params (ordinal, offset, size) {want} != cubin "
                f"KPARAM_INFO {e.params}")
    # CBANK_PARAM_SIZE equals the end of the last parameter for SIMT kernels, but Tile IR entries
    # that use TMA reserve more of the parameter bank (cuTile rms_norm: 240 or 496 bytes for 68
    # bytes of parameters), so only "not smaller" is a real check.
    if e.cbank_param_size is not None and e.cbank_param_size < end:
        return f"entry '{entry}': manifest params end at {end} bytes, beyond cubin CBANK_PARAM_SIZE {e.cbank_param_size}"
    if cluster is not None:
        want_cluster = list(e.cta_per_cluster) if e.cta_per_cluster else [1, 1, 1]
        if list(cluster) != want_cluster:
            return (f"entry '{entry}': manifest cluster {list(cluster)} != cubin EIATTR_CTA_PER_CLUSTER "
                    f"{want_cluster}")
    return None
