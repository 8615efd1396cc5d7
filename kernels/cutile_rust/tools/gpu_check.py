#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Launch a cuTile Rust bundle on a GPU the way the harness will, and check the results.

    python3 kernels/cutile_rust/tools/gpu_check.py bundles/cutile_rust [--time]

A stand-alone smoke test for the exporter (ctypes + numpy, CUDA driver API only), not
part of the harness: for every configuration of every manifest under the folder it loads
the cubin (cuModuleLoadData), packs the manifest's parameters generically (ptr, extent,
stride, literal), launches with the manifest's grid/block/shared memory, and compares with
a float64 numpy reference. Output buffers carry a guard region past the end, filled with a
sentinel that must survive (stores past the tensor are masked). Prints one line per
configuration and exits non-zero on any failure.
"""
import ctypes
import json
import math
import os
import sys

import numpy as np

cuda = ctypes.CDLL("libcuda.so.1")
P, U64, SZ, I, UI = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_int, ctypes.c_uint
# Without argtypes ctypes passes Python ints as 32-bit C ints, which truncates host pointers.
for _name, _args in {
    "cuMemAlloc_v2": [P, SZ], "cuMemFree_v2": [U64], "cuMemcpyHtoD_v2": [U64, P, SZ],
    "cuMemcpyDtoH_v2": [P, U64, SZ], "cuModuleLoadData": [P, P], "cuModuleGetFunction": [P, P, ctypes.c_char_p],
    "cuLaunchKernel": [P, UI, UI, UI, UI, UI, UI, UI, P, P, P], "cuCtxSynchronize": [],
    "cuEventCreate": [P, UI], "cuEventRecord": [P, P], "cuEventSynchronize": [P],
    "cuEventElapsedTime": [P, P, P], "cuGetErrorName": [I, P],
}.items():
    getattr(cuda, _name).argtypes = _args


def check(res, what):
    if res != 0:
        name = ctypes.c_char_p()
        cuda.cuGetErrorName(res, ctypes.byref(name))
        raise RuntimeError(f"{what} failed: {res} {name.value.decode() if name.value else ''}")


def init():
    check(cuda.cuInit(0), "cuInit")
    ver = ctypes.c_int()
    check(cuda.cuDriverGetVersion(ctypes.byref(ver)), "cuDriverGetVersion")
    dev = ctypes.c_int()
    check(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    name = ctypes.create_string_buffer(256)
    cuda.cuDeviceGetName(name, 256, dev)
    ctx = ctypes.c_void_p()
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    print(f"device {name.value.decode()}, driver API {ver.value}")


GUARD = 4096  # elements past the end of every output


class Buf:
    def __init__(self, host, guard=0):
        self.host = np.ascontiguousarray(host)
        self.guard = guard
        self.nbytes = self.host.nbytes + guard * self.host.itemsize
        self.ptr = ctypes.c_uint64()
        check(cuda.cuMemAlloc_v2(ctypes.byref(self.ptr), ctypes.c_size_t(self.nbytes)), "cuMemAlloc")
        full = np.concatenate([self.host.reshape(-1), np.full(guard, sentinel(self.host.dtype), self.host.dtype)])
        check(cuda.cuMemcpyHtoD_v2(self.ptr.value, full.ctypes.data, self.nbytes), "cuMemcpyHtoD")

    def read(self):
        full = np.empty(self.host.size + self.guard, self.host.dtype)
        check(cuda.cuMemcpyDtoH_v2(full.ctypes.data, self.ptr.value, self.nbytes), "cuMemcpyDtoH")
        return full[: self.host.size].reshape(self.host.shape), full[self.host.size:]

    def free(self):
        cuda.cuMemFree_v2(self.ptr.value)


def sentinel(dt):
    return {np.dtype(np.float32): np.float32(-12345.5), np.dtype(np.float16): np.float16(-1234.5),
            np.dtype(np.uint16): np.uint16(0xDEAD)}[np.dtype(dt)]


def to_bf16_bits(a):
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16  # round to nearest even
    return u.astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def storage(dtype, values):
    if dtype == "float32":
        return values.astype(np.float32)
    if dtype == "float16":
        return values.astype(np.float16)
    if dtype == "bfloat16":
        return to_bf16_bits(values)
    raise ValueError(dtype)


def as_f64(dtype, stored):
    return (from_bf16_bits(stored) if dtype == "bfloat16" else stored).astype(np.float64)


def tensors_for(op, p, rng):
    """Inputs, outputs (name -> (array, shape)), and the float64 reference of `out`."""
    if op == "vector_add":
        n = p["n"]
        x = rng.standard_normal(n).astype(np.float32) + 0.5
        y = rng.standard_normal(n).astype(np.float32) - 0.25
        ins = {"x": x, "y": y}
        outs = {"out": np.zeros(n, np.float32)}
        ref = {"out": x.astype(np.float64) + y.astype(np.float64)}
        return ins, outs, ref
    if op == "rms_norm":
        m, n, dt = p["m"], p["n"], p["dtype"]
        x = storage(dt, rng.standard_normal((m, n)) * 2.0 + 0.3)
        w = storage(dt, rng.uniform(0.5, 1.5, n))
        xf, wf = as_f64(dt, x), as_f64(dt, w)
        ref = xf / np.sqrt((xf * xf).mean(axis=1, keepdims=True) + 1e-5) * wf
        outs = {"y": np.zeros((m, n), x.dtype)}
        return {"x": x, "w": w}, outs, {"y": ref}
    raise ValueError(op)


def tolerance(dtype):
    return {"float32": (1e-5, 1e-5), "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2)}[dtype]


def pack(params, bufs, shapes):
    vals = []
    for prm in params:
        k = prm["kind"]
        if k == "ptr":
            vals.append(ctypes.c_uint64(bufs[prm["tensor"]].ptr.value))
        elif k in ("extent", "stride"):
            shape = shapes[prm["tensor"]]
            strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]
            v = shape[prm["dim"]] if k == "extent" else strides[prm["dim"]]
            vals.append({"i32": ctypes.c_int32, "i64": ctypes.c_int64, "u32": ctypes.c_uint32}[prm["type"]](v))
        elif k == "literal":
            t = prm["type"]
            ct = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "u32": ctypes.c_uint32, "u64": ctypes.c_uint64,
                  "f32": ctypes.c_float, "f64": ctypes.c_double}[t]
            vals.append(ct(prm["value"]))
        elif k == "null":
            vals.append(ctypes.c_uint64(0))
        else:
            raise ValueError(f"kind {k} not handled here")
    arr = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
    return arr, vals


def main():
    root = sys.argv[1]
    timing = "--time" in sys.argv
    init()
    failures = 0
    rng = np.random.default_rng(1234)
    for op in sorted(os.listdir(root)):
        mpath = os.path.join(root, op, "manifest.json")
        if not os.path.isfile(mpath):
            continue
        man = json.load(open(mpath))
        modules = {}
        for c in man["cubins"]:
            data = open(os.path.join(root, op, c["file"]), "rb").read()
            mod = ctypes.c_void_p()
            res = cuda.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(data))
            print(f"{op}/{c['file']}: cuModuleLoadData -> {res}")
            if res != 0:
                failures += 1
                continue
            modules[c["file"]] = mod
        for cfg in man["configs"]:
            p = cfg["params"]
            ins, outs, ref = tensors_for(op, p, rng)
            bufs = {k: Buf(v) for k, v in ins.items()}
            bufs.update({k: Buf(v, GUARD) for k, v in outs.items()})
            shapes = {k: list(v.shape) for k, v in {**ins, **outs}.items()}
            ok = True
            msg = ""
            try:
                for launch in cfg["launches"]:
                    if launch["cubin"] not in modules:
                        raise RuntimeError("module not loaded")
                    fn = ctypes.c_void_p()
                    check(cuda.cuModuleGetFunction(ctypes.byref(fn), modules[launch["cubin"]],
                                                   launch["entry"].encode()), "cuModuleGetFunction")
                    args, keep = pack(launch["params"], bufs, shapes)
                    g, b = launch["grid"], launch["block"]
                    check(cuda.cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], launch["shared_bytes"],
                                              None, ctypes.cast(args, P), None), "cuLaunchKernel")
                check(cuda.cuCtxSynchronize(), "cuCtxSynchronize")
                for name, r in ref.items():
                    got, guard = bufs[name].read()
                    dt = p["dtype"]
                    g64 = as_f64(dt, got)
                    rtol, atol = tolerance(dt)
                    err = np.abs(g64 - r)
                    bad = ~(err <= atol + rtol * np.abs(r))
                    if bad.any():
                        i = np.unravel_index(np.argmax(err), err.shape)
                        ok = False
                        msg += f" {name}: {int(bad.sum())} mismatches, worst at {i}: got {g64[i]} want {r[i]};"
                    if not np.all(guard == sentinel(got.dtype)):
                        ok = False
                        msg += f" {name}: guard region overwritten;"
                    msg += f" max_abs_err={float(err.max()):.3g}"
                if ok and timing:
                    start, stop = ctypes.c_void_p(), ctypes.c_void_p()
                    cuda.cuEventCreate(ctypes.byref(start), 0)
                    cuda.cuEventCreate(ctypes.byref(stop), 0)
                    reps = 50
                    cuda.cuEventRecord(start, None)
                    for _ in range(reps):
                        cuda.cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], 0, None, ctypes.cast(args, P), None)
                    cuda.cuEventRecord(stop, None)
                    check(cuda.cuEventSynchronize(stop), "cuEventSynchronize")
                    ms = ctypes.c_float()
                    cuda.cuEventElapsedTime(ctypes.byref(ms), start, stop)
                    us = ms.value * 1000 / reps
                    moved = sum(a.nbytes for a in ins.values()) + sum(a.nbytes for a in outs.values())
                    msg += f" time={us:.1f}us ({moved / us / 1e3:.0f} GB/s)"
            except RuntimeError as e:
                ok = False
                msg += f" {e}"
            for bb in bufs.values():
                bb.free()
            failures += 0 if ok else 1
            print(f"{'PASS' if ok else 'FAIL'} {op} {json.dumps(p)} tuning={json.dumps({k: v for k, v in cfg['tuning'].items() if k != 'specialization'})}{msg}")
    print(f"{'all passed' if failures == 0 else f'{failures} failure(s)'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
