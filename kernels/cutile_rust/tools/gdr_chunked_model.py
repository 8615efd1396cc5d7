#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Developer tool: a numpy model of src/gdr/kernels.rs's chunked kernel (gated_delta_rule_chunked)
against the sequential recurrence of reference/src/ops/gated_delta_rule.cpp, on the reference's
input distributions (bf16-rounded inputs, q, k, v ~ U(-a, 1.2a..1.4a) with a = sqrt(3) 0.1,
beta ~ U(0.2, 0.9), g = log sigmoid(U(1, 5))). Two checks:
  1. the algorithm in fp64 (forward substitution, zero-padded last chunk, l2 norm): the same
     function as the recurrence (differences at fp64 rounding);
  2. the kernel's precision scheme: f32 elementwise work, products as three bf16 tensor-core terms
     (`mm3`) accumulated in f32, o rounded to bf16.
It models the kernel's arithmetic, not the cuTile compiler: the GPU check is `portbench check`.
Usage: .venv/bin/python kernels/cutile_rust/tools/gdr_chunked_model.py [T]   (default 1024)
"""
import sys

import numpy as np


def bf16(x):
    """Round to the nearest bf16 (ties to even), as f32."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return b.astype(np.uint32).view(np.float32)


def mm3(a, b):
    """The kernel's `mm3`: hi hi + hi lo + lo hi of the bf16 splits, f32 accumulation."""
    a, b = a.astype(np.float32), b.astype(np.float32)
    ah, bh = bf16(a), bf16(b)
    al, bl = bf16(a - ah), bf16(b - bh)
    f = lambda x, y: (x.astype(np.float64) @ y.astype(np.float64)).astype(np.float32)
    return (f(al, bh) + f(ah, bl) + f(ah, bh)).astype(np.float32)


def inputs(rng, t, k, v):
    a = np.sqrt(3) * 0.1
    q = bf16(rng.uniform(-a, 1.2 * a, (t, k)))
    kk = bf16(rng.uniform(-a, 1.2 * a, (t, k)))
    vv = bf16(rng.uniform(-a, 1.4 * a, (t, v)))
    beta = bf16(rng.uniform(0.2, 0.9, t))
    g = bf16(-np.log1p(np.exp(-(1 + 4 * rng.uniform(size=t)))))
    s0 = rng.uniform(-0.1, 0.2, (k, v))
    return q, kk, vv, g, beta, s0


def normalise(q, k, l2):
    q, k = q.astype(np.float64), k.astype(np.float64)
    if l2:
        q = q / np.sqrt((q * q).sum(1, keepdims=True) + 1e-6)
        k = k / np.sqrt((k * k).sum(1, keepdims=True) + 1e-6)
    return q / np.sqrt(q.shape[1]), k


def recurrent(q, k, v, g, beta, s0):
    v, g, beta = v.astype(np.float64), g.astype(np.float64), beta.astype(np.float64)
    s, o = s0.astype(np.float64).copy(), np.zeros((len(q), v.shape[1]))
    for t in range(len(q)):
        s *= np.exp(g[t])
        d = (v[t] - s.T @ k[t]) * beta[t]
        s += np.outer(k[t], d)
        o[t] = s.T @ q[t]
    return o, s


def chunked(q, k, v, g, beta, s0, c, dt, mm):
    """The kernel's algorithm; `dt` the working type, `mm` the product."""
    t = len(q)
    n = (t + c - 1) // c * c
    pad = lambda z: np.concatenate([z, np.zeros((n - t,) + z.shape[1:])]).astype(dt)
    q, k, v, g, beta = pad(q), pad(k), pad(v), pad(g), pad(beta)
    s, o, i = s0.astype(dt), np.zeros((n, v.shape[1]), dt), np.arange(c)
    lower, strict = i[:, None] >= i[None, :], i[:, None] > i[None, :]
    for ci in range(n // c):
        sl = slice(ci * c, (ci + 1) * c)
        qf, kf, vf, gf, bf = q[sl], k[sl], v[sl], g[sl], beta[sl]
        gam = np.where(lower, gf[None, :], 0).astype(dt).sum(1, dtype=dt)
        dec = np.where(lower, np.exp(gam[:, None] - gam[None, :]), 0).astype(dt)
        a = np.where(strict, mm(kf, kf.T) * dec * bf[:, None], 0).astype(dt)
        u = (vf * bf[:, None]).astype(dt)
        w = (kf * (bf * np.exp(gam))[:, None]).astype(dt)
        for r in range(1, c):
            u[r] -= (a[r] @ u).astype(dt)
            w[r] -= (a[r] @ w).astype(dt)
        delta = (u - mm(w, s)).astype(dt)
        o[sl] = mm(qf * np.exp(gam)[:, None], s) + mm(mm(qf, kf.T) * dec, delta)
        gl = gf.sum(dtype=dt)
        s = (s * np.exp(gl) + mm((kf * np.exp(gl - gam)[:, None]).T, delta)).astype(dt)
    return o[:t], s


def main():
    t = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    rng = np.random.default_rng(1)
    q, k, v, g, beta, s0 = inputs(rng, 100, 48, 24)
    for l2 in (False, True):
        qn, kn = normalise(q, k, l2)
        o, s = recurrent(qn, kn, v, g, beta, s0)
        o2, s2 = chunked(qn, kn, v, g, beta, s0, 64, np.float64, lambda x, y: x @ y)
        print(f"fp64 algorithm, T=100 K=48 V=24, initial state, l2={l2}: max|do| {abs(o - o2).max():.2e}, max|dS| {abs(s - s2).max():.2e}")
    q, k, v, g, beta, _ = inputs(rng, t, 128, 128)
    qn, kn = normalise(q, k, False)
    zero = np.zeros((128, 128))
    o, s = recurrent(qn, kn, v, g, beta, zero)
    o2, s2 = chunked(qn.astype(np.float32), kn, v, g, beta, zero, 64, np.float32, mm3)
    ob = bf16(o2)
    rel = (abs(ob - o) / np.maximum(abs(o), 1e-3)).max()
    print(f"f32 + bf16x3 products, T={t} K=V=128: max|o| {abs(o).max():.3e}, max|do| before the bf16 store "
          f"{abs(o2 - o).max():.2e}, after {abs(ob - o).max():.2e} (relative {rel:.2e}); max|S| {abs(s).max():.3e}, max|dS| {abs(s2 - s).max():.2e}")


if __name__ == "__main__":
    main()
