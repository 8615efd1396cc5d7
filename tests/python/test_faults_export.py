# SPDX-License-Identifier: Apache-2.0
"""The fault bundle (kernels/faults/, docs/faults.md): kernels/faults/export.sh writes
bundles/faults/vector_add (a broken or correct kernel per configuration) and the cuda_cpp
reference bundles/faults_reference/vector_add for configs/faults.json. CPU only."""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import REPO, suite_configs
from portbench_export import SCHEMA
from portbench_export.cubin import inspect_cubin, layout_mismatch, sass_summary
from portbench_export.manifest import pack
from portbench_export.schema import validate_bundle
from portbench_export.tools import find_tool, run_tool

SUITE = REPO / "configs" / "faults.json"
SCRIPT = REPO / "kernels" / "faults" / "export.sh"
FAULTS = ("illegal_address", "trap", "endless_loop", "writes_nothing", "writes_part",
          "extra_stream_work", "stale_result", "writes_nan")
DP_ENTRY, DP_CHILD = "vector_add_extra_stream_work", "extra_stream_work_child"


def _load_exporter():
    path = REPO / "kernels" / "faults" / "export.py"
    spec = importlib.util.spec_from_file_location("portbench_faults_export", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


fx = _load_exporter()


def run_script(env: dict, out: Path, suite: Path = SUITE, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), str(suite), str(out)], capture_output=True, text=True,
                          env=dict(env, **extra), cwd=REPO, timeout=900)


def run_faults(env: dict, out: Path, suite: Path = SUITE, **extra: str) -> subprocess.CompletedProcess:
    """The fault exporter alone, through its command line."""
    return subprocess.run([sys.executable, str(REPO / "kernels" / "faults" / "export.py"), "--suite",
                           str(suite), "--out", str(out)], capture_output=True, text=True,
                          env=dict(env, **extra), cwd=REPO, timeout=900)


@pytest.fixture(scope="module")
def exported(tmp_path_factory, export_env) -> Path:
    out = tmp_path_factory.mktemp("faults_export")
    r = run_script(export_env, out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "exported faults/vector_add: 11 configs, 2 cubins" in r.stdout
    assert "exported cuda_cpp/vector_add: 11 configs, 1 cubins" in r.stdout
    return out


@pytest.fixture(scope="module")
def manifest(exported) -> dict:
    return json.loads((exported / "faults" / "vector_add" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def reference(exported) -> dict:
    return json.loads((exported / "faults_reference" / "vector_add" / "manifest.json").read_text())


def fault_of(cfg: dict) -> str:
    return cfg["tuning"]["fault"]


def launch_of(manifest: dict, fault: str) -> dict:
    (cfg,) = [c for c in manifest["configs"] if fault_of(c) == fault]
    (launch,) = cfg["launches"]
    return launch


def elf_dump(path: Path, *flags: str) -> str:
    return run_tool([find_tool("cuobjdump"), *flags, path], f"cuobjdump {' '.join(flags)}")


def sass_of(path: Path, function: str) -> str:
    """The SASS of one function from `cuobjdump -sass`."""
    text = elf_dump(path, "-sass")
    m = re.search(rf"Function\s*:\s*{re.escape(function)}\s*\n(.*?)(?=\n\s*Function\s*:|\Z)", text, re.S)
    assert m, f"no SASS for {function} in {path.name}"
    return m.group(1)


# ---- the bundles -----------------------------------------------------------------------------

def test_both_bundles_validate_against_the_schema(exported, manifest, reference):
    for sub in ("faults", "faults_reference"):
        assert validate_bundle(exported / sub / "vector_add") == [], sub
        assert not [p for p in (exported / sub).iterdir() if p.name.startswith(".")], "temp folders left"
    assert manifest["schema"] == SCHEMA
    assert (manifest["frontend"], manifest["operator"], manifest["arch"]) == ("faults", "vector_add", "sm_90")
    assert (reference["frontend"], reference["operator"]) == ("cuda_cpp", "vector_add")
    assert sorted(p.name for p in exported.iterdir()) == ["faults", "faults_reference"]


def test_toolchain_is_nvrtc_and_nvjitlink_13_0(manifest):
    tc = manifest["toolchain"]
    assert tc["nvrtc"] == "13.0" and tc["nvjitlink"] == "13.0"
    assert tc["nvidia-cuda-nvrtc"].startswith("13.0.") and tc["nvidia-nvjitlink"].startswith("13.0.")
    assert tc["cudadevrt"].startswith("13.0.")


def test_eleven_configs_with_the_suites_params_in_both_bundles(manifest, reference):
    want = suite_configs(SUITE, "vector_add")
    assert len(want) == 11
    assert [c["params"] for c in manifest["configs"]] == want
    assert [c["params"] for c in reference["configs"]] == want
    ns = [p["n"] for p in want]
    assert len(set(ns)) == 11, "n must identify the configuration"
    smoke_ns = {p["n"] for p in suite_configs(REPO / "configs" / "smoke.json", "vector_add")}
    assert not set(ns) & smoke_ns, "fault configs must not share an id with the smoke suite"


def test_each_fault_exactly_once_and_correct_ones_interleaved(manifest):
    faults = [fault_of(c) for c in manifest["configs"]]
    counts = Counter(faults)
    assert counts == Counter({**{f: 1 for f in FAULTS}, "none": 3}), counts
    assert faults[0] == faults[-1] == faults[len(faults) // 2] == "none"
    assert faults == [fx.PLAN[c["params"]["n"]] for c in manifest["configs"]]


def test_each_config_launches_its_own_kernel_with_the_reference_shape(manifest, reference):
    for cfg, ref in zip(manifest["configs"], reference["configs"]):
        (l,) = cfg["launches"]
        (r,) = ref["launches"]
        fault = fault_of(cfg)
        assert l["entry"] == ("vector_add_correct" if fault == "none" else f"vector_add_{fault}")
        assert l["cubin"] == ("extra_stream_work.cubin" if fault == "extra_stream_work" else "faults.cubin")
        # the same ABI and launch shape as the correct cuda_cpp kernel: the manifests are analogous
        for key in ("grid", "block", "shared_bytes", "cluster", "params"):
            assert l[key] == r[key], (fault, key)
        assert l["params"] == [{"kind": "ptr", "tensor": "x"}, {"kind": "ptr", "tensor": "y"},
                               {"kind": "ptr", "tensor": "out"},
                               {"kind": "extent", "tensor": "x", "dim": 0, "type": "i64"}]
        n = cfg["params"]["n"]
        assert l["grid"] == [-(-n // 1024), 1, 1] and l["block"] == [256, 1, 1]
        assert cfg["scratch"] == [] and cfg["tuning"]["block"] == 256


def test_every_launch_matches_the_cubins_parameter_table(exported, manifest):
    bundle = exported / "faults" / "vector_add"
    infos = {c["file"]: inspect_cubin(bundle / c["file"]) for c in manifest["cubins"]}
    assert sorted(infos) == ["extra_stream_work.cubin", "faults.cubin"]
    for cfg in manifest["configs"]:
        for l in cfg["launches"]:
            info = infos[l["cubin"]]
            assert layout_mismatch(info, l["entry"], l["params"]) is None
            e = info.entries[l["entry"]]
            layout, end = pack(l["params"])
            assert e.params == [(i, off, size) for i, (off, size) in enumerate(layout)] == \
                [(0, 0, 8), (1, 8, 8), (2, 16, 8), (3, 24, 8)]
            assert e.cbank_param_size == end == 32


def test_cubins_are_sm90_elf_with_sass_for_every_launched_entry(exported, manifest):
    bundle = exported / "faults" / "vector_add"
    for c in manifest["cubins"]:
        path = bundle / c["file"]
        data = path.read_bytes()
        assert data[:4] == b"\x7fELF" and data[4] == 2
        info = inspect_cubin(path)
        assert info.arch == "sm_90"
        archs, funcs = sass_summary(path)
        assert archs == {"sm_90"}
        for cfg in manifest["configs"]:
            for l in cfg["launches"]:
                if l["cubin"] == c["file"]:
                    assert l["entry"] in funcs and l["entry"] in info.entries
        assert sorted(c["ir"]) == sorted([c["file"].replace(".cubin", ".ptx.txt"),
                                          c["file"].replace(".cubin", ".cu.txt")])
    faults_entries = set(inspect_cubin(bundle / "faults.cubin").entries)
    assert faults_entries == {"vector_add_correct"} | {f"vector_add_{f}" for f in FAULTS if f != "extra_stream_work"}


# ---- the dynamic-parallelism cubin -----------------------------------------------------------

def test_extra_stream_work_cubin_really_launches_from_the_device(exported):
    path = exported / "faults" / "vector_add" / "extra_stream_work.cubin"
    elf = elf_dump(path, "-elf")
    assert re.search(r"^64-?bit\s+elf:.*type=ET_EXEC.*\bsm=90\b", elf, re.M | re.I), "not a linked sm_90 image"
    # the parent's code is relocated against the device runtime's launch and the child kernel
    targets = fx.rela_targets(elf, DP_ENTRY)
    assert {"__cudaCDP2GetParameterBufferV2", "__cudaCDP2LaunchDeviceV2", DP_CHILD} <= targets, targets
    # libcudadevrt was linked in: its launch wrappers are defined here; only the driver's
    # syscalls stay external (resolved at module load)
    symbols = elf_dump(path, "-symbols")
    defined = fx.defined_symbols(symbols)
    assert {"__cudaCDP2LaunchDeviceV2", "__cudaCDP2GetParameterBufferV2", DP_ENTRY, DP_CHILD} <= defined
    assert re.search(r"\bU\s+__cuda_syscall_cnpv2LaunchDeviceV2\b", symbols)
    assert "__cuda_syscall_cnpv2LaunchDeviceV2" in elf     # EIATTR_EXTERNS of the parent
    entries = inspect_cubin(path).entries
    assert DP_CHILD in entries and DP_ENTRY in entries
    # the SASS calls out (GetParameterBuffer, LaunchDevice) and the child really exists
    assert len(re.findall(r"\bCALL\.ABS\.NOINC\b", sass_of(path, DP_ENTRY))) >= 2
    assert re.search(r"\bATOMG?\.E\.ADD\b|\bRED\.E\.ADD\b", sass_of(path, DP_CHILD))
    fx.check_device_launch(path, DP_ENTRY)   # the exporter's own check agrees


def test_faults_cubin_has_no_device_side_launch(exported):
    path = exported / "faults" / "vector_add" / "faults.cubin"
    text = elf_dump(path, "-symbols") + elf_dump(path, "-elf")
    assert "cnpv2" not in text and "CDP2" not in text
    assert "ET_EXEC" in text


# ---- SASS signatures of the other faults (the compiler kept each fault) ------------------------

def test_fault_kernels_keep_their_faults_in_sass(exported):
    path = exported / "faults" / "vector_add" / "faults.cubin"
    sass = {e: sass_of(path, e) for e in inspect_cubin(path).entries}
    stores = re.compile(r"\bST(G|\.E)")
    assert not stores.search(sass["vector_add_writes_nothing"])
    ops = re.findall(r"^\s*/\*[0-9a-f]+\*/\s+(\S+)", sass["vector_add_writes_nothing"], re.M)
    assert "EXIT" in ops[:2] and not {"LDG.E", "LDG.E.128", "LDG.E.CONSTANT"} & set(ops), ops[:4]   # LDC R1 (stack), EXIT
    assert "BPT.TRAP" in sass["vector_add_trap"] and stores.search(sass["vector_add_trap"])
    loop = sass["vector_add_endless_loop"]
    assert "NANOSLEEP" in loop and "LDG.E.STRONG.SYS" in loop   # volatile re-read in the loop
    assert re.search(r"IADD3\.X\s+R\d+,\s*R\d+,\s*0x400\b", sass["vector_add_illegal_address"]), \
        "illegal_address must add 2^40 floats (0x400 in the high word) to the store address"
    stale = sass["vector_add_stale_result"]
    assert re.search(r"\bATOMG?\.E\.ADD\.64|\bRED\.E\.ADD\.64", stale) and "STRONG" in stale
    assert stores.search(sass["vector_add_writes_part"]) and stores.search(sass["vector_add_writes_nan"])
    assert "STG.E.128" in sass["vector_add_correct"]
    for e, text in sass.items():
        assert "BPT.TRAP" not in text or e == "vector_add_trap", e


def test_plan_and_docs_agree(manifest):
    doc = (REPO / "docs" / "faults.md").read_text()
    verdicts = {"illegal_address": "ERROR", "trap": "ERROR", "endless_loop": "HANG",
                "writes_nothing": "OUTPUT_NOT_WRITTEN", "writes_part": "OUTPUT_NOT_WRITTEN",
                "extra_stream_work": "FOREIGN_KERNEL", "stale_result": "OUTPUT_NOT_WRITTEN",
                "writes_nan": "FAIL"}
    for fault, verdict in verdicts.items():
        row = [l for l in doc.splitlines() if l.startswith(f"| `{fault}` |")]
        assert len(row) == 1 and verdict in row[0], fault
    for cfg in manifest["configs"]:
        n, fault = cfg["params"]["n"], fault_of(cfg)
        assert re.search(rf"\| {n} \| `{fault}` \|", doc), (n, fault)


def test_export_bundles_script_calls_the_fault_export():
    text = (REPO / "scripts" / "export_bundles.sh").read_text()
    assert "kernels/faults/export.sh" in text.strip().splitlines()[-1]


# ---- re-export, failures ---------------------------------------------------------------------

def test_reexport_is_byte_identical(tmp_path, export_env, exported):
    out = tmp_path / "out"
    shutil.copytree(exported, out)
    stale = out / "faults" / "vector_add" / "stale.txt"
    stale.write_text("left over")
    r = run_script(export_env, out)
    assert r.returncode == 0, r.stderr
    assert not stale.exists()
    for sub in ("faults", "faults_reference"):
        a, b = exported / sub / "vector_add", out / sub / "vector_add"
        assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
        for p in a.iterdir():
            assert p.read_bytes() == (b / p.name).read_bytes(), f"{sub}/{p.name} differs"


def _broken_tree(tmp_path: Path, name: str, text: str) -> Path:
    tree = tmp_path / "kernels"
    shutil.copytree(REPO / "kernels" / "faults", tree / "faults",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "faults" / name).write_text(text)
    return tree


def _error_lines(stderr: str) -> list[str]:
    return [l for l in stderr.splitlines() if l.startswith("error:")]


def test_nvrtc_failure_is_one_line_with_the_log(tmp_path, export_env):
    src = (REPO / "kernels" / "faults" / "extra_stream_work.cu").read_text()
    tree = _broken_tree(tmp_path, "extra_stream_work.cu", src.replace("kMaxWaitNs) {", "kMaxWaitNs) { undeclared_x++;"))
    r = run_faults(export_env, tmp_path / "out", PORTBENCH_KERNELS_DIR=str(tree))
    assert r.returncode == 1
    (line,) = _error_lines(r.stderr)
    assert line.startswith("error: faults: vector_add/dtype=float32,n=1050624: nvrtcCompileProgram")
    assert "-rdc=true" in line
    assert any(l.startswith("  log: ") and "undeclared_x" in l for l in r.stderr.splitlines())
    assert not (tmp_path / "out" / "vector_add").exists()


def test_nvjitlink_failure_is_one_line_with_its_log(tmp_path, export_env):
    src = (REPO / "kernels" / "faults" / "extra_stream_work.cu").read_text()
    # an extern device function nobody defines: NVRTC (-rdc) accepts it, the link must fail
    broken = src.replace("extern \"C\" __global__ void extra_stream_work_child",
                         "extern \"C\" __device__ void portbench_missing_fn();\n"
                         "extern \"C\" __global__ void extra_stream_work_child", 1)
    broken = broken.replace("  if (threadIdx.x == 0) {\n    atomicAdd", "  portbench_missing_fn();\n"
                            "  if (threadIdx.x == 0) {\n    atomicAdd", 1)
    assert broken.count("portbench_missing_fn") == 2
    tree = _broken_tree(tmp_path, "extra_stream_work.cu", broken)
    r = run_faults(export_env, tmp_path / "out", PORTBENCH_KERNELS_DIR=str(tree))
    assert r.returncode == 1
    (line,) = _error_lines(r.stderr)
    assert line.startswith("error: faults: vector_add/dtype=float32,n=1050624: nvJitLinkComplete -arch=sm_90: "
                           "NVJITLINK_ERROR_"), line
    logs = [l for l in r.stderr.splitlines() if l.startswith("  log: ")]
    # the log names the symbol and the input it came from (the name nvJitLinkAddData was given)
    assert any("portbench_missing_fn" in l and "extra_stream_work.rdc.cubin" in l for l in logs), r.stderr


def test_unknown_n_is_an_error_and_other_dtypes_are_skipped(tmp_path, export_env):
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"suite": "x", "configs": [
        {"op": "vector_add", "params": {"n": 1048832, "dtype": "float16"}},
        {"op": "rms_norm", "params": {"m": 4, "n": 8, "dtype": "float32"}}]}))
    r = run_faults(export_env, tmp_path / "a", suite)
    assert r.returncode == 0, r.stderr
    assert "skip: faults: vector_add/dtype=float16,n=1048832: dtype 'float16'" in r.stdout
    assert "skip: faults: operator 'rms_norm'" in r.stdout
    suite.write_text(json.dumps({"suite": "x", "configs": [
        {"op": "vector_add", "params": {"n": 1000, "dtype": "float32"}}]}))
    r = run_faults(export_env, tmp_path / "b", suite)
    assert r.returncode == 1
    (line,) = _error_lines(r.stderr)
    assert "vector_add/dtype=float32,n=1000: n=1000 is not in the fault plan" in line
