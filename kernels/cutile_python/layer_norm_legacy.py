# SPDX-License-Identifier: Apache-2.0
"""layer_norm_legacy for cuTile Python (reference/src/ops/layer_norm.cpp):
y = (x - mean) * rsqrt(var + eps) * (w + weight_shift) + b over each row of x[m, n], biased
variance, fp32 math, one rounding to the output dtype. The persistent_layer_norm variant
(`layer_norm_stats`) also writes mean[m] and rstd[m] (fp32).

Each tile block normalises TILE_M consecutive rows (grid = cdiv(m, TILE_M)). Rows up to 8192
columns: TILE_N >= n, a row is read once and kept in registers (x read once, y written once);
padded lanes load as 0 and are masked out of the centred values. Wider rows (`*_loop`): the row
is walked in TILE_N-column chunks twice (statistics, merged chunk by chunk; then normalise and
store, the second read mostly from L2), so no thread holds a whole wide row in registers.

Exported entry arguments: x (ptr, 2 shapes, 2 strides), w (ptr, shape, stride), b (ptr, shape,
stride), y (ptr, 2 shapes, 2 strides), [mean (ptr, shape, stride), rstd (ptr, shape, stride)],
eps (f32), weight_shift (f32).
"""
import cuda.tile as ct

ZERO = ct.PaddingMode.ZERO


@ct.function
def _normalise(x, w, b, bid, eps, shift, TILE_M: ct.Constant[int], TILE_N: ct.Constant[int],
               LAT: ct.Constant[int], TMA: ct.Constant[int]):
    n = x.shape[1]
    xt = _load_chunk(x, bid, 0, TILE_M, TILE_N, LAT, TMA)
    mean = ct.sum(xt, axis=1, keepdims=True) / n
    valid = ct.reshape(ct.arange(TILE_N, dtype=ct.int32) < n, (1, TILE_N))
    xc = ct.where(valid, xt - mean, 0.0)
    rstd = ct.rsqrt(ct.sum(xc * xc, axis=1, keepdims=True) / n + eps)
    wt = ct.load(w, index=(0,), shape=(TILE_N,), padding_mode=ZERO).astype(ct.float32) + shift
    bt = ct.load(b, index=(0,), shape=(TILE_N,), padding_mode=ZERO).astype(ct.float32)
    yt = xc * rstd * ct.reshape(wt, (1, TILE_N)) + ct.reshape(bt, (1, TILE_N))
    return yt, mean, rstd


@ct.kernel
def layer_norm(x, w, b, y, eps, shift, TILE_M: ct.Constant[int], TILE_N: ct.Constant[int],
               LAT: ct.Constant[int], TMA: ct.Constant[int]):
    bid = ct.bid(0)
    yt, mean, rstd = _normalise(x, w, b, bid, eps, shift, TILE_M, TILE_N, LAT, TMA)
    ct.store(y, index=(bid, 0), tile=yt.astype(y.dtype))


@ct.kernel
def layer_norm_stats(x, w, b, y, mean_out, rstd_out, eps, shift, TILE_M: ct.Constant[int],
                     TILE_N: ct.Constant[int], LAT: ct.Constant[int], TMA: ct.Constant[int]):
    bid = ct.bid(0)
    yt, mean, rstd = _normalise(x, w, b, bid, eps, shift, TILE_M, TILE_N, LAT, TMA)
    ct.store(y, index=(bid, 0), tile=yt.astype(y.dtype))
    ct.store(mean_out, index=(bid,), tile=ct.reshape(mean, (TILE_M,)))
    ct.store(rstd_out, index=(bid,), tile=ct.reshape(rstd, (TILE_M,)))


@ct.function
def _load_chunk(x, bid, j, TILE_M: ct.Constant[int], TILE_N: ct.Constant[int], LAT: ct.Constant[int],
                TMA: ct.Constant[int]):
    # Load hints of tile experiments: LAT 0 lets tileiras infer the latency (else 1 low .. 10
    # high DRAM traffic); TMA 0 forbids the TMA unit (loads go straight to registers).
    if LAT == 0:
        if TMA == 1:
            t = ct.load(x, index=(bid, j), shape=(TILE_M, TILE_N), padding_mode=ZERO)
        else:
            t = ct.load(x, index=(bid, j), shape=(TILE_M, TILE_N), padding_mode=ZERO, allow_tma=False)
    else:
        if TMA == 1:
            t = ct.load(x, index=(bid, j), shape=(TILE_M, TILE_N), padding_mode=ZERO, latency=LAT)
        else:
            t = ct.load(x, index=(bid, j), shape=(TILE_M, TILE_N), padding_mode=ZERO, latency=LAT,
                        allow_tma=False)
    return t.astype(ct.float32)


@ct.function
def _loop_stats(x, bid, TILE_M: ct.Constant[int], TILE_N: ct.Constant[int], LAT: ct.Constant[int],
                TMA: ct.Constant[int]):
    # Per-lane sums of d = x - K and d^2, reduced once at the end (a block reduction per chunk
    # made the chunked kernel 20% slower on the H200), with K the mean of the first chunk: near
    # the row mean, so E[d^2] - E[d]^2 does not cancel the variance away.
    n = x.shape[1]
    x0 = ct.load(x, index=(bid, 0), shape=(TILE_M, TILE_N), padding_mode=ZERO).astype(ct.float32)
    valid0 = ct.reshape(ct.arange(TILE_N, dtype=ct.int32) < n, (1, TILE_N))
    k = ct.sum(x0, axis=1, keepdims=True) / ct.sum(ct.where(valid0, 1.0, 0.0), axis=1, keepdims=True)
    s1 = ct.zeros((TILE_M, TILE_N), dtype=ct.float32)
    s2 = ct.zeros((TILE_M, TILE_N), dtype=ct.float32)
    for j in range(ct.num_tiles(x, axis=1, shape=(TILE_M, TILE_N))):
        xt = _load_chunk(x, bid, j, TILE_M, TILE_N, LAT, TMA)
        valid = ct.reshape(ct.arange(TILE_N, dtype=ct.int32) + j * TILE_N < n, (1, TILE_N))
        d = ct.where(valid, xt - k, 0.0)
        s1 = s1 + d
        s2 = s2 + d * d
    e1 = ct.sum(s1, axis=1, keepdims=True) / n
    var = ct.maximum(ct.sum(s2, axis=1, keepdims=True) / n - e1 * e1, 0.0)
    return k + e1, var


@ct.function
def _loop_store(x, w, b, y, bid, mean, rstd, shift, TILE_M: ct.Constant[int], TILE_N: ct.Constant[int],
                LAT: ct.Constant[int], TMA: ct.Constant[int]):
    for j in range(ct.num_tiles(x, axis=1, shape=(TILE_M, TILE_N))):
        xt = _load_chunk(x, bid, j, TILE_M, TILE_N, LAT, TMA)
        wt = ct.load(w, index=(j,), shape=(TILE_N,), padding_mode=ZERO).astype(ct.float32) + shift
        bt = ct.load(b, index=(j,), shape=(TILE_N,), padding_mode=ZERO).astype(ct.float32)
        yt = (xt - mean) * rstd * ct.reshape(wt, (1, TILE_N)) + ct.reshape(bt, (1, TILE_N))
        ct.store(y, index=(bid, j), tile=yt.astype(y.dtype))


@ct.kernel
def layer_norm_loop(x, w, b, y, eps, shift, TILE_M: ct.Constant[int], TILE_N: ct.Constant[int],
                    LAT: ct.Constant[int], TMA: ct.Constant[int]):
    bid = ct.bid(0)
    mean, var = _loop_stats(x, bid, TILE_M, TILE_N, LAT, TMA)
    _loop_store(x, w, b, y, bid, mean, ct.rsqrt(var + eps), shift, TILE_M, TILE_N, LAT, TMA)


@ct.kernel
def layer_norm_stats_loop(x, w, b, y, mean_out, rstd_out, eps, shift, TILE_M: ct.Constant[int],
                          TILE_N: ct.Constant[int], LAT: ct.Constant[int], TMA: ct.Constant[int]):
    bid = ct.bid(0)
    mean, var = _loop_stats(x, bid, TILE_M, TILE_N, LAT, TMA)
    rstd = ct.rsqrt(var + eps)
    _loop_store(x, w, b, y, bid, mean, rstd, shift, TILE_M, TILE_N, LAT, TMA)
    ct.store(mean_out, index=(bid,), tile=ct.reshape(mean, (TILE_M,)))
    ct.store(rstd_out, index=(bid,), tile=ct.reshape(rstd, (TILE_M,)))
