# SPDX-License-Identifier: Apache-2.0
"""Model of the key-tile ranges of the attention-prefill kernels' two loops (src/attn/kernels.rs).

fmha and mla run key tiles [0, mask_start) unmasked, then [mask_start, tiles) masked;
gemma_attention runs [a, b) unmasked, then [j_lo, a) and [b, j_hi) masked in one loop whose
index is `j_lo + t + (b - a) * min(max(t - n_head + 1, 0), 1)`. This script redoes that integer
arithmetic (i32 division of non-negative numbers, as the kernels') and checks, against the
masks written out element by element, for many shapes:
  - every key tile holding a visible (row, key) pair is visited, exactly once;
  - no tile of an unmasked loop holds a masked pair (with the padded query rows past S, whose
    outputs the store drops, left out);
  - the first tile visited (the one that sets the running maximum) gives every row at least one
    visible key for fmha and mla, so their maximum never stays -inf.
Run: python3 kernels/cutile_rust/tools/attn_loop_split_model.py (exit status 0 when all hold).
"""
import itertools
import sys


def visible_gemma(i, j, s, window, causal):
    return j < s and j >= i - window and j <= i + window and (not causal or j <= i)


def visible_fmha(i, j, s, causal):
    return j < s and (not causal or j <= i)


def fmha_loops(s, bm, bn, causal, pid):
    row0 = pid * bm
    full_tiles = s // bn
    mask_start, tiles = full_tiles, (s + bn - 1) // bn
    if causal:
        mask_start = min(row0 // bn, full_tiles)
        last = min(row0 + bm, s)
        tiles = (last + bn - 1) // bn
    return list(range(0, mask_start)), list(range(mask_start, tiles))


def gemma_loops(s, bm, bn, window, causal, pid):
    row0 = pid * bm
    last = min(row0 + bm, s) - 1
    lo = max(row0 - window, 0)
    hi_key = min(last + window + 1, s)
    if causal:
        hi_key = min(hi_key, last + 1)
    j_lo, j_hi = lo // bn, (hi_key + bn - 1) // bn
    first_full = (max(last - window, 0) + bn - 1) // bn
    a = min(max(j_lo, first_full), j_hi)
    newest = min(s - 1, row0 + window)
    if causal:
        newest = min(newest, row0)
    b = min(max((newest + 1) // bn, a), j_hi)
    n_head = a - j_lo
    n_masked = n_head + (j_hi - b)
    gap = b - a
    masked = [j_lo + t + gap * min(max(t - n_head + 1, 0), 1) for t in range(n_masked)]
    return list(range(a, b)), masked


def check(name, s, bm, bn, pid, unmasked, masked, visible):
    rows = range(pid * bm, min(pid * bm + bm, s))
    errors = []
    seen = unmasked + masked
    if len(seen) != len(set(seen)):
        errors.append(f"a tile visited twice: {seen}")
    for j in range((s + bn - 1) // bn):
        keys = range(j * bn, j * bn + bn)
        any_visible = any(visible(i, k) for i in rows for k in keys)
        if any_visible and j not in seen:
            errors.append(f"tile {j} holds visible keys but is not visited")
        if j in unmasked and not all(visible(i, k) for i in rows for k in keys):
            errors.append(f"tile {j} runs unmasked but holds masked pairs")
    return [f"{name} s={s} bm={bm} bn={bn} pid={pid}: {e}" for e in errors]


SIZES = ([1, 7, 64, 65, 128, 200, 257, 512], [16, 64, 128], [16, 64, 128])


def run(sizes=SIZES, fmha=fmha_loops, gemma=gemma_loops):
    """All checks over the shapes `sizes` (seq lens, BM, BN); returns (cases, errors)."""
    errors, cases = [], 0
    for s, bm, bn in itertools.product(*sizes):
        for pid in range((s + bm - 1) // bm):
            for causal in (False, True):
                u, m = fmha(s, bm, bn, causal, pid)
                errors += check("fmha", s, bm, bn, pid, u, m, lambda i, k: visible_fmha(i, k, s, causal))
                first = (u + m)[0]
                rows = range(pid * bm, min(pid * bm + bm, s))
                if not all(any(visible_fmha(i, k, s, causal) for k in range(first * bn, first * bn + bn)) for i in rows):
                    errors.append(f"fmha s={s} bm={bm} bn={bn} pid={pid}: a row sees no key of the first tile")
                cases += 1
                for window in (0, 1, 15, 16, 63, 64, 100, 128, 300, s, 4 * s):
                    u, m = gemma(s, bm, bn, window, causal, pid)
                    errors += check(
                        f"gemma w={window} c={causal}", s, bm, bn, pid, u, m,
                        lambda i, k: visible_gemma(i, k, s, window, causal))
                    cases += 1
    return cases, errors


def main():
    cases, errors = run()
    for e in errors[:20]:
        print(e)
    print(f"{cases} cases, {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
