# SPDX-License-Identifier: Apache-2.0
"""Operator parameters read as reference/src/ops/<op>.cpp reads them (shared by the exporters).

`real_or`, `flag`, `integer_or`, `text_or` mirror reference::config (a missing or null key gives
the fallback). The per-operator helpers return exactly the values the reference uses, so a
kernel's literals (eps, p, seed, ...) are the reference's.
"""
from __future__ import annotations

from .suite import Config, SuiteError


def real_or(cfg: Config, key: str, fallback: float) -> float:
    v = cfg.params.get(key)
    if v is None:
        return fallback
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SuiteError(f"{cfg.id()}: parameter '{key}' must be a number, got {v!r}")
    return float(v)


def integer_or(cfg: Config, key: str, fallback: int) -> int:
    v = cfg.params.get(key)
    if v is None:
        return fallback
    if isinstance(v, bool) or not isinstance(v, int):
        raise SuiteError(f"{cfg.id()}: parameter '{key}' must be an integer, got {v!r}")
    return v


def text_or(cfg: Config, key: str, fallback: str) -> str:
    v = cfg.params.get(key)
    if v is None:
        return fallback
    if not isinstance(v, str):
        raise SuiteError(f"{cfg.id()}: parameter '{key}' must be a string, got {v!r}")
    return v


def flag(cfg: Config, key: str, fallback: bool) -> bool:
    v = cfg.params.get(key)
    if v is None:
        return fallback
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v != 0
    if v in ("true", "True", "1"):
        return True
    if v in ("false", "False", "0"):
        return False
    raise SuiteError(f"{cfg.id()}: parameter '{key}' must be a bool, got {v!r}")


def layer_norm(cfg: Config) -> tuple[bool, float, float]:
    """(persistent, eps, weight_shift) as reference/src/ops/layer_norm.cpp (op layer_norm_legacy)."""
    variant = text_or(cfg, "variant", "layer_norm_legacy")
    if variant not in ("layer_norm_legacy", "persistent_layer_norm"):
        raise SuiteError(f"{cfg.id()}: variant must be layer_norm_legacy or persistent_layer_norm, "
                         f"not '{variant}'")
    persistent = variant == "persistent_layer_norm"
    return persistent, real_or(cfg, "eps", 1e-6 if persistent else 1e-5), real_or(cfg, "weight_shift", 0.0)


def rope_dim(cfg: Config) -> int:
    """int(head_dim * partial_rotary_factor), even and in (0, head_dim]."""
    d = cfg.integer("head_dim")
    rd = int(float(d) * real_or(cfg, "partial_rotary_factor", 1.0))
    if rd <= 0 or rd > d or rd % 2:
        raise SuiteError(f"{cfg.id()}: rope_dim must be even and in (0, head_dim]")
    return rd


def dropout(cfg: Config) -> tuple[float, bool, bool, int]:
    """(p, inplace, training, rng_seed as uint32) as reference/src/ops/dropout.cpp."""
    p = real_or(cfg, "p", 0.5)
    if not (0 <= p < 1):
        raise SuiteError(f"{cfg.id()}: p must be in [0, 1)")
    return p, flag(cfg, "inplace", False), flag(cfg, "training", True), integer_or(cfg, "rng_seed", 0) % 2**32


DROPOUT_DIVISOR = 2147483647.0


def dropout_keep_threshold(p: float) -> int:
    """Smallest r in [0, 2^31) with r / (2^31 - 1) > p in IEEE double (the reference's test), so a
    kernel keeps element i iff (hash(i) & 0x7FFFFFFF) >= threshold: bit-exact with the reference's
    floating-point comparison, with integers only. 2^31 means 'never keep' (not reachable: p < 1)."""
    lo, hi = 0, 2**31     # the answer is in [lo, hi]; r / c is monotone in r
    while lo < hi:
        mid = (lo + hi) // 2
        if mid / DROPOUT_DIVISOR > p:
            hi = mid
        else:
            lo = mid + 1
    return lo


def cutile_uniform_bits(i: int, seed: int) -> int:
    """The reference's hash (LCG, xorshift >>16 <<8 >>4, 31 bits) in Python, for tests."""
    r = (i * 1103515245 + seed) & 0xFFFFFFFF
    r ^= r >> 16
    r ^= (r << 8) & 0xFFFFFFFF
    r ^= r >> 4
    return r & 0x7FFFFFFF
