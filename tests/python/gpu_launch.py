# SPDX-License-Identifier: Apache-2.0
"""Launches bundles on a real GPU through the CUDA driver API (ctypes), the way the harness
will: manifest parameters packed generically, nothing known about the front end. Checks every
configuration against an fp64 numpy reference, with outputs pre-filled with NaN bytes so that an
unwritten element fails, and reports a rough CUDA-event time per launch plan.

Not part of the CPU test run (no libcuda there); test_gpu_bundles.py wraps it and skips without a
driver. Standalone: python3 tests/python/gpu_launch.py BUNDLE_ROOT [BUNDLE_ROOT ...]
"""
from __future__ import annotations

import ctypes
import json
import sys
from pathlib import Path

import numpy as np

EPS = 1e-5
DT = {"float16": np.float16, "float32": np.float32, "bfloat16": "bfloat16"}


# ---- bf16 without ml_dtypes: numpy uint16 carrying the top half of a float32 (round to nearest even)
def to_bf16_bits(a: np.ndarray) -> np.ndarray:
    u = a.astype(np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(b: np.ndarray) -> np.ndarray:
    return (b.astype(np.uint32) << 16).view(np.float32)


def encode(a: np.ndarray, dtype: str) -> np.ndarray:
    return to_bf16_bits(a) if dtype == "bfloat16" else a.astype(DT[dtype])


def decode(raw: np.ndarray, dtype: str) -> np.ndarray:
    return from_bf16_bits(raw).astype(np.float64) if dtype == "bfloat16" else raw.astype(np.float64)


# ---- operators: tensors (name -> (host array in device dtype, role)) and the fp64 reference
def make_tensors(op: str, p: dict, rng: np.random.Generator):
    dt = p["dtype"]
    if op == "vector_add":
        n = p["n"]
        x = encode(rng.normal(0.5, 1.0, n), dt)
        y = encode(rng.normal(-0.25, 2.0, n), dt)
        out = np.zeros(n, dtype=x.dtype)
        return {"x": (x, "in"), "y": (y, "in"), "out": (out, "out")}
    if op == "rms_norm":
        m, n = p["m"], p["n"]
        x = encode(rng.normal(0.3, 1.0, (m, n)), dt)
        w = encode(rng.uniform(0.5, 1.5, n), dt)
        y = np.zeros((m, n), dtype=x.dtype)
        return {"x": (x, "in"), "w": (w, "in"), "y": (y, "out")}
    raise KeyError(op)


def reference(op: str, p: dict, t: dict) -> dict[str, np.ndarray]:
    dt = p["dtype"]
    if op == "vector_add":
        return {"out": decode(t["x"][0], dt) + decode(t["y"][0], dt)}
    x, w = decode(t["x"][0], dt), decode(t["w"][0], dt)
    rstd = 1.0 / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + EPS)
    return {"y": x * rstd * w}


TOL = {"float32": (1e-5, 1e-5), "float16": (2e-3, 2e-3), "bfloat16": (1e-2, 1e-2)}  # (atol, rtol)


# ---- driver API
class Cuda:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.check(self.lib.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        self.check(self.lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        self.ctx = ctypes.c_void_p()
        self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), dev), "cuDevicePrimaryCtxRetain")
        self.check(self.lib.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        v = ctypes.c_int()
        self.lib.cuDriverGetVersion(ctypes.byref(v))
        self.driver_version = v.value
        self.lib.cuEventElapsedTime.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_void_p]

    def check(self, rc: int, what: str):
        if rc != 0:
            s = ctypes.c_char_p()
            self.lib.cuGetErrorString(rc, ctypes.byref(s))
            raise RuntimeError(f"{what}: CUresult {rc} ({s.value.decode() if s.value else '?'})")

    def alloc(self, nbytes: int) -> int:
        p = ctypes.c_uint64()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(max(nbytes, 1))), "cuMemAlloc")
        return p.value

    def free(self, p: int):
        self.lib.cuMemFree_v2(ctypes.c_uint64(p))

    def htod(self, dst: int, a: np.ndarray):
        a = np.ascontiguousarray(a)
        self.check(self.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(dst), a.ctypes.data_as(ctypes.c_void_p),
                                            ctypes.c_size_t(a.nbytes)), "cuMemcpyHtoD")

    def dtoh(self, a: np.ndarray, src: int):
        self.check(self.lib.cuMemcpyDtoH_v2(a.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint64(src),
                                            ctypes.c_size_t(a.nbytes)), "cuMemcpyDtoH")

    def memset_ff(self, p: int, nbytes: int):
        self.check(self.lib.cuMemsetD8_v2(ctypes.c_uint64(p), ctypes.c_ubyte(0xFF), ctypes.c_size_t(nbytes)),
                   "cuMemsetD8")

    def load(self, image: bytes):
        mod = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(image)), "cuModuleLoadData")
        return mod

    def function(self, mod, name: str):
        f = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(f), mod, name.encode()), f"cuModuleGetFunction {name}")
        return f

    def launch(self, f, grid, block, shared, args):
        self.check(self.lib.cuLaunchKernel(f, *[ctypes.c_uint(v) for v in grid], *[ctypes.c_uint(v) for v in block],
                                           ctypes.c_uint(shared), None, args, None), "cuLaunchKernel")

    def sync(self):
        self.check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize")

    def event(self):
        e = ctypes.c_void_p()
        self.check(self.lib.cuEventCreate(ctypes.byref(e), 0), "cuEventCreate")
        return e


CTYPE = {"i32": ctypes.c_int32, "u32": ctypes.c_uint32, "i64": ctypes.c_int64, "u64": ctypes.c_uint64,
         "f32": ctypes.c_float, "f64": ctypes.c_double}


def pack_args(params, dev, shapes, strides, scratch):
    """One ctypes value per manifest parameter, and the void*[] kernelParams array over them."""
    vals = []
    for p in params:
        k = p["kind"]
        if k == "ptr":
            vals.append(ctypes.c_uint64(dev[p["tensor"]]))
        elif k == "extent":
            vals.append(CTYPE[p["type"]](shapes[p["tensor"]][p["dim"]]))
        elif k == "stride":
            vals.append(CTYPE[p["type"]](strides[p["tensor"]][p["dim"]]))
        elif k == "literal":
            vals.append(CTYPE[p["type"]](p["value"]))
        elif k == "scratch":
            vals.append(ctypes.c_uint64(scratch[p["name"]]))
        elif k == "null":
            vals.append(ctypes.c_uint64(0))
        else:
            raise ValueError(k)
    arr = (ctypes.c_void_p * max(len(vals), 1))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
    return arr, vals


def run_bundle(cuda: Cuda, bundle: Path, seed: int = 1234, timing_reps: int = 10) -> list[dict]:
    man = json.loads((bundle / "manifest.json").read_text())
    mods = {c["file"]: cuda.load((bundle / c["file"]).read_bytes()) for c in man["cubins"]}
    results = []
    for cfg in man["configs"]:
        p, op = cfg["params"], man["operator"]
        rng = np.random.default_rng(seed)
        t = make_tensors(op, p, rng)
        dev, shapes, strides = {}, {}, {}
        for name, (a, role) in t.items():
            dev[name] = cuda.alloc(a.nbytes)
            shapes[name] = a.shape
            strides[name] = tuple(s // a.itemsize for s in a.strides)
            if role == "in":
                cuda.htod(dev[name], a)
            else:
                cuda.memset_ff(dev[name], a.nbytes)   # NaN bytes: unwritten outputs fail
        scratch = {s["name"]: cuda.alloc(s["bytes"]) for s in cfg["scratch"]}
        plan = []
        for l in cfg["launches"]:
            args, keep = pack_args(l["params"], dev, shapes, strides, scratch)
            plan.append((cuda.function(mods[l["cubin"]], l["entry"]), l, args, keep))
        for f, l, args, _ in plan:
            cuda.launch(f, l["grid"], l["block"], l["shared_bytes"], args)
        cuda.sync()
        ref = reference(op, p, t)
        atol, rtol = TOL[p["dtype"]]
        verdict, worst = "pass", 0.0
        for name, r in ref.items():
            host = np.empty_like(t[name][0])
            cuda.dtoh(host, dev[name])
            got = decode(host, p["dtype"])
            err = np.abs(got - r)
            bad = ~(err <= atol + rtol * np.abs(r))       # NaN counts as bad
            worst = max(worst, float(np.nanmax(err / (atol + rtol * np.abs(r)))) if err.size else 0.0)
            if bad.any():
                i = int(np.flatnonzero(bad.ravel())[0])
                verdict = f"fail: {name} {int(bad.sum())}/{bad.size} bad, first flat index {i}: got {got.ravel()[i]} want {r.ravel()[i]}"
        e0, e1 = cuda.event(), cuda.event()
        cuda.check(cuda.lib.cuEventRecord(e0, None), "cuEventRecord")
        for _ in range(timing_reps):
            for f, l, args, _ in plan:
                cuda.launch(f, l["grid"], l["block"], l["shared_bytes"], args)
        cuda.check(cuda.lib.cuEventRecord(e1, None), "cuEventRecord")
        cuda.check(cuda.lib.cuEventSynchronize(e1), "cuEventSynchronize")
        ms = ctypes.c_float()
        cuda.check(cuda.lib.cuEventElapsedTime(ctypes.byref(ms), e0, e1), "cuEventElapsedTime")
        us = ms.value * 1000 / timing_reps
        nbytes = sum(a.nbytes for a, _ in t.values())
        results.append({"frontend": man["frontend"], "operator": op, "params": p, "verdict": verdict,
                        "worst_err_over_tol": worst, "us": us, "GBps": nbytes / us / 1e3 if us > 0 else 0})
        for d in list(dev.values()) + list(scratch.values()):
            cuda.free(d)
    for m in mods.values():
        cuda.lib.cuModuleUnload(m)
    return results


def main(argv: list[str]) -> int:
    cuda = Cuda()
    print(f"driver {cuda.driver_version}")
    failed = 0
    for root in argv:
        for mf in sorted(Path(root).glob("*/*/manifest.json")) + sorted(Path(root).glob("*/manifest.json")):
            try:
                rs = run_bundle(cuda, mf.parent)
            except Exception as e:   # a load/launch error costs the bundle, recorded
                print(f"ERROR {mf.parent}: {e}")
                failed += 1
                continue
            for r in rs:
                failed += r["verdict"] != "pass"
                print(f"{r['frontend']:14s} {r['operator']:10s} {json.dumps(r['params']):48s} {r['verdict']:6s} "
                      f"err/tol {r['worst_err_over_tol']:.3f}  {r['us']:9.2f} us  {r['GBps']:8.1f} GB/s")
    print(f"{'FAILED' if failed else 'OK'}: {failed} failures")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
