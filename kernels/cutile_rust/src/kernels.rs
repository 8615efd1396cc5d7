// SPDX-License-Identifier: Apache-2.0
//! portbench's cuTile Rust kernels.
//!
//! `#[cutile::module]` keeps the source of this module for the cuTile compiler; the
//! exporter specialises each `#[cutile::entry]` per configuration (element type and tile
//! shape as generics, static unit strides, divisibility facts) with
//! `cutile::compile_api::KernelCompiler` and runs `tileiras` on the bytecode. Nothing here
//! runs on the host.
//!
//! Conventions the exporter relies on (see docs/cutile-rust.md):
//! - Inputs are shared `&Tensor` views with dynamic (`-1`) shapes; the output is the one
//!   `&mut Tensor` whose static shape is the per-block tile, so the launch grid is
//!   `ceil(extent / tile)` per axis of the output.
//! - Reads go through zero-padded partition views, so a tile that runs past the end of a
//!   tensor reads zeros; stores through the output partition drop the lanes outside the
//!   tensor. Sizes therefore need not be multiples of the tile.

#[cutile::module]
pub mod portbench_kernels {
    use cutile::core::*;

    /// `out = x + y` over 1-D tensors. One tile block per `TILE` elements of `out`.
    #[cutile::entry()]
    fn vector_add<T: ElementType, const TILE: i32>(
        x: &Tensor<T, { [-1] }>,
        y: &Tensor<T, { [-1] }>,
        out: &mut Tensor<T, { [TILE] }>,
    ) {
        let tx: Tile<T, { [TILE] }> = x.load_like(out);
        let ty: Tile<T, { [TILE] }> = y.load_like(out);
        out.store(tx + ty);
    }

    /// Row-wise RMS normalisation of `x[m, n]` with weight `w[n]`:
    /// `y = x * rsqrt(mean(x^2 over the row) + eps) * (offset + w)`, accumulated in f32
    /// and stored in the input element type.
    ///
    /// One tile block handles `BM` whole rows: `BN >= n` (a power of two), so the
    /// grid is `(ceil(m / BM), 1, 1)`. The padded columns read as zero, which leaves the
    /// sum of squares exact; the mean divides by the true `n`, read from `x`'s extent.
    #[cutile::entry()]
    fn rms_norm<T: ElementType, const BM: i32, const BN: i32>(
        x: &Tensor<T, { [-1, -1] }>,
        w: &Tensor<T, { [-1] }>,
        y: &mut Tensor<T, { [BM, BN] }>,
        eps: f32,
        offset: f32,
    ) {
        let xt: Tile<T, { [BM, BN] }> = x.load_like(y);
        let xf: Tile<f32, { [BM, BN] }> = convert_tile(xt);
        let sum_sq: Tile<f32, { [BM] }> = reduce_sum(xf * xf, 1i32);

        let n: i32 = get_shape_dim(x.shape(), 1i32);
        let n_f: f32 = convert_scalar::<f32>(n);
        let n_t: Tile<f32, { [BM] }> = n_f.broadcast(shape![BM]);
        let eps_t: Tile<f32, { [BM] }> = eps.broadcast(shape![BM]);
        let inv_rms: Tile<f32, { [BM] }> = rsqrt(sum_sq / n_t + eps_t, ftz::Disabled);
        let inv_rms: Tile<f32, { [BM, BN] }> = inv_rms.reshape(shape![BM, 1]).broadcast(y.shape());

        let wt: Tile<T, { [BN] }> = w.load_tile(shape![BN], [0i32]);
        let wf: Tile<f32, { [BN] }> = convert_tile(wt);
        let off_t: Tile<f32, { [BN] }> = offset.broadcast(shape![BN]);
        let wf: Tile<f32, { [BM, BN] }> = (wf + off_t).reshape(shape![1, BN]).broadcast(y.shape());

        let yf: Tile<f32, { [BM, BN] }> = xf * inv_rms * wf;
        let yt: Tile<T, { [BM, BN] }> = convert_tile(yf);
        y.store(yt);
    }

    /// rms_norm for rows wider than one tile: `BM` rows per block, the row walked in
    /// `BN`-column chunks twice (sum of squares, then scale and store; the second read of
    /// a block's rows mostly hits L2). `y` is written through a full-tensor partition
    /// (the block's rows `pid.0`, chunk `j`); partial chunks are masked by the view.
    #[cutile::entry()]
    unsafe fn rms_norm_loop<T: ElementType, const BM: i32, const BN: i32>(
        x: &Tensor<T, { [-1, -1] }>,
        w: &Tensor<T, { [-1] }>,
        y: &Tensor<T, { [-1, -1] }>,
        eps: f32,
        offset: f32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let xp: Partition<T, { [BM, BN] }> = x.partition(shape![BM, BN]);
        let wp: Partition<T, { [BN] }> = w.partition(shape![BN]);
        let nt: i32 = num_tiles(&xp, 1i32);
        let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
        for j in 0i32..nt {
            let xt: Tile<T, { [BM, BN] }> = xp.load([pid.0, j]);
            let xf: Tile<f32, { [BM, BN] }> = convert_tile(xt);
            acc = acc + xf * xf;
        }
        let sum_sq: Tile<f32, { [BM] }> = reduce_sum(acc, 1i32);
        let n: i32 = get_shape_dim(x.shape(), 1i32);
        let n_f: f32 = convert_scalar::<f32>(n);
        let n_t: Tile<f32, { [BM] }> = n_f.broadcast(shape![BM]);
        let eps_t: Tile<f32, { [BM] }> = eps.broadcast(shape![BM]);
        let inv_rms: Tile<f32, { [BM] }> = rsqrt(sum_sq / n_t + eps_t, ftz::Disabled);
        let inv_rms: Tile<f32, { [BM, BN] }> = inv_rms.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        let off_t: Tile<f32, { [BN] }> = offset.broadcast(shape![BN]);
        let mut yp: PartitionMut<T, { [BM, BN] }> = unsafe { y.partition_full_mut(shape![BM, BN]) };
        for j in 0i32..nt {
            let xt: Tile<T, { [BM, BN] }> = xp.load([pid.0, j]);
            let xf: Tile<f32, { [BM, BN] }> = convert_tile(xt);
            let wt: Tile<T, { [BN] }> = wp.load([j]);
            let wf: Tile<f32, { [BN] }> = convert_tile(wt);
            let wf: Tile<f32, { [BM, BN] }> = (wf + off_t).reshape(shape![1, BN]).broadcast(shape![BM, BN]);
            let yt: Tile<T, { [BM, BN] }> = convert_tile(xf * inv_rms * wf);
            unsafe { yp.store_unchecked(yt, [pid.0, j]) };
        }
    }

    /// layer_norm_legacy: `y = (x - mean) * rsqrt(var + eps) * (w + shift) + b` per row of
    /// `x[m, n]`, biased variance, f32 accumulation. Tiles as rms_norm (`BN >= n`); the
    /// padded columns are zero in `x` and masked out of the centred values.
    #[cutile::entry()]
    fn layer_norm<T: ElementType, const BM: i32, const BN: i32>(
        x: &Tensor<T, { [-1, -1] }>,
        w: &Tensor<T, { [-1] }>,
        b: &Tensor<T, { [-1] }>,
        y: &mut Tensor<T, { [BM, BN] }>,
        eps: f32,
        shift: f32,
    ) {
        let xt: Tile<T, { [BM, BN] }> = x.load_like(y);
        let xf: Tile<f32, { [BM, BN] }> = convert_tile(xt);
        let n: i32 = get_shape_dim(x.shape(), 1i32);
        let n_f: f32 = convert_scalar::<f32>(n);
        let n_t: Tile<f32, { [BM] }> = n_f.broadcast(shape![BM]);
        let sum_x: Tile<f32, { [BM] }> = reduce_sum(xf, 1i32);
        let mu: Tile<f32, { [BM] }> = sum_x / n_t;
        let mu_b: Tile<f32, { [BM, BN] }> = mu.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        let cols: Tile<i32, { [BN] }> = iota(shape![BN]);
        let n_i: Tile<i32, { [BN] }> = n.broadcast(shape![BN]);
        let valid: Tile<bool, { [BN] }> = lt_tile(cols, n_i);
        let valid: Tile<bool, { [BM, BN] }> = valid.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let zero: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
        let d: Tile<f32, { [BM, BN] }> = select(valid, xf - mu_b, zero);
        let sum_d2: Tile<f32, { [BM] }> = reduce_sum(d * d, 1i32);
        let var: Tile<f32, { [BM] }> = sum_d2 / n_t;
        let eps_t: Tile<f32, { [BM] }> = eps.broadcast(shape![BM]);
        let rs: Tile<f32, { [BM] }> = rsqrt(var + eps_t, ftz::Disabled);
        let rs_b: Tile<f32, { [BM, BN] }> = rs.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        let wt: Tile<T, { [BN] }> = w.load_tile(shape![BN], [0i32]);
        let bt: Tile<T, { [BN] }> = b.load_tile(shape![BN], [0i32]);
        let shift_t: Tile<f32, { [BN] }> = shift.broadcast(shape![BN]);
        let wf: Tile<f32, { [BN] }> = convert_tile(wt);
        let wf: Tile<f32, { [BM, BN] }> = (wf + shift_t).reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let bf: Tile<f32, { [BN] }> = convert_tile(bt);
        let bf: Tile<f32, { [BM, BN] }> = bf.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let yt: Tile<T, { [BM, BN] }> = convert_tile(d * rs_b * wf + bf);
        y.store(yt);
    }

    /// persistent_layer_norm (layer_norm_legacy with `variant = persistent_layer_norm`):
    /// [`layer_norm`] that also stores the row mean and rstd (f32, `[m]`).
    #[cutile::entry()]
    fn layer_norm_stats<T: ElementType, const BM: i32, const BN: i32>(
        x: &Tensor<T, { [-1, -1] }>,
        w: &Tensor<T, { [-1] }>,
        b: &Tensor<T, { [-1] }>,
        y: &mut Tensor<T, { [BM, BN] }>,
        mean: &mut Tensor<f32, { [BM] }>,
        rstd: &mut Tensor<f32, { [BM] }>,
        eps: f32,
        shift: f32,
    ) {
        let xt: Tile<T, { [BM, BN] }> = x.load_like(y);
        let xf: Tile<f32, { [BM, BN] }> = convert_tile(xt);
        let n: i32 = get_shape_dim(x.shape(), 1i32);
        let n_f: f32 = convert_scalar::<f32>(n);
        let n_t: Tile<f32, { [BM] }> = n_f.broadcast(shape![BM]);
        let sum_x: Tile<f32, { [BM] }> = reduce_sum(xf, 1i32);
        let mu: Tile<f32, { [BM] }> = sum_x / n_t;
        let mu_b: Tile<f32, { [BM, BN] }> = mu.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        let cols: Tile<i32, { [BN] }> = iota(shape![BN]);
        let n_i: Tile<i32, { [BN] }> = n.broadcast(shape![BN]);
        let valid: Tile<bool, { [BN] }> = lt_tile(cols, n_i);
        let valid: Tile<bool, { [BM, BN] }> = valid.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let zero: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
        let d: Tile<f32, { [BM, BN] }> = select(valid, xf - mu_b, zero);
        let sum_d2: Tile<f32, { [BM] }> = reduce_sum(d * d, 1i32);
        let var: Tile<f32, { [BM] }> = sum_d2 / n_t;
        let eps_t: Tile<f32, { [BM] }> = eps.broadcast(shape![BM]);
        let rs: Tile<f32, { [BM] }> = rsqrt(var + eps_t, ftz::Disabled);
        let rs_b: Tile<f32, { [BM, BN] }> = rs.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        let wt: Tile<T, { [BN] }> = w.load_tile(shape![BN], [0i32]);
        let bt: Tile<T, { [BN] }> = b.load_tile(shape![BN], [0i32]);
        let shift_t: Tile<f32, { [BN] }> = shift.broadcast(shape![BN]);
        let wf: Tile<f32, { [BN] }> = convert_tile(wt);
        let wf: Tile<f32, { [BM, BN] }> = (wf + shift_t).reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let bf: Tile<f32, { [BN] }> = convert_tile(bt);
        let bf: Tile<f32, { [BM, BN] }> = bf.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let yt: Tile<T, { [BM, BN] }> = convert_tile(d * rs_b * wf + bf);
        y.store(yt);
        mean.store(mu);
        rstd.store(rs);
    }

    /// layer_norm for rows wider than one tile: `BM` rows per block, the row walked in
    /// `BN`-column chunks twice (statistics, then normalise and store; the second read of a
    /// block's rows mostly hits L2), so no thread holds a whole wide row. `chunk` equals `BN`
    /// (passed as a value to mask the padded columns of the last chunk).
    #[cutile::entry()]
    unsafe fn layer_norm_loop<T: ElementType, const BM: i32, const BN: i32>(
        x: &Tensor<T, { [-1, -1] }>,
        w: &Tensor<T, { [-1] }>,
        b: &Tensor<T, { [-1] }>,
        y: &Tensor<T, { [-1, -1] }>,
        eps: f32,
        shift: f32,
        chunk: i32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let xp: Partition<T, { [BM, BN] }> = x.partition(shape![BM, BN]);
        let wp: Partition<T, { [BN] }> = w.partition(shape![BN]);
        let bp: Partition<T, { [BN] }> = b.partition(shape![BN]);
        let nt: i32 = num_tiles(&xp, 1i32);
        let n: i32 = get_shape_dim(x.shape(), 1i32);
        let n_f: f32 = convert_scalar::<f32>(n);
        let n_t: Tile<f32, { [BM] }> = n_f.broadcast(shape![BM]);
        // Pass 1: per-lane sums of d = x - K and d^2, reduced once at the end (a block
        // reduction per chunk, as a chunk-by-chunk merge needs, made this kernel 20% slower on
        // the H200), with K the mean of the first chunk: near the row mean, so
        // E[d^2] - E[d]^2 does not cancel the variance away.
        let cols: Tile<i32, { [BN] }> = iota(shape![BN]);
        let zero: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
        let one: Tile<f32, { [BM, BN] }> = constant(1.0f32, shape![BM, BN]);
        let n_i: Tile<i32, { [BN] }> = n.broadcast(shape![BN]);
        let valid0: Tile<bool, { [BN] }> = lt_tile(cols, n_i);
        let valid0: Tile<bool, { [BM, BN] }> = valid0.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let cnt0: Tile<f32, { [BM] }> = reduce_sum(select(valid0, one, zero), 1i32);
        let x0t: Tile<T, { [BM, BN] }> = xp.load([pid.0, 0i32]);
        let x0: Tile<f32, { [BM, BN] }> = convert_tile(x0t);
        let sum0: Tile<f32, { [BM] }> = reduce_sum(x0, 1i32);
        let k: Tile<f32, { [BM] }> = sum0 / cnt0;
        let k_b: Tile<f32, { [BM, BN] }> = k.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        let mut s1: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
        let mut s2: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
        for j in 0i32..nt {
            let xt: Tile<T, { [BM, BN] }> = xp.load([pid.0, j]);
            let xf: Tile<f32, { [BM, BN] }> = convert_tile(xt);
            let left: i32 = n - j * chunk;
            let left_t: Tile<i32, { [BN] }> = left.broadcast(shape![BN]);
            let valid: Tile<bool, { [BN] }> = lt_tile(cols, left_t);
            let valid: Tile<bool, { [BM, BN] }> = valid.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
            let d: Tile<f32, { [BM, BN] }> = select(valid, xf - k_b, zero);
            s1 = s1 + d;
            s2 = s2 + d * d;
        }
        let sum_d: Tile<f32, { [BM] }> = reduce_sum(s1, 1i32);
        let sum_d2: Tile<f32, { [BM] }> = reduce_sum(s2, 1i32);
        let e1: Tile<f32, { [BM] }> = sum_d / n_t;
        let e2: Tile<f32, { [BM] }> = sum_d2 / n_t;
        let zero_m: Tile<f32, { [BM] }> = constant(0.0f32, shape![BM]);
        let var: Tile<f32, { [BM] }> = max_tile(e2 - e1 * e1, zero_m);
        let mu: Tile<f32, { [BM] }> = k + e1;
        let mu_b: Tile<f32, { [BM, BN] }> = mu.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        let eps_t: Tile<f32, { [BM] }> = eps.broadcast(shape![BM]);
        let rs: Tile<f32, { [BM] }> = rsqrt(var + eps_t, ftz::Disabled);
        let rs_b: Tile<f32, { [BM, BN] }> = rs.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        let shift_t: Tile<f32, { [BN] }> = shift.broadcast(shape![BN]);
        let mut yp: PartitionMut<T, { [BM, BN] }> = unsafe { y.partition_full_mut(shape![BM, BN]) };
        for j in 0i32..nt {
            let xt: Tile<T, { [BM, BN] }> = xp.load([pid.0, j]);
            let xf: Tile<f32, { [BM, BN] }> = convert_tile(xt);
            let wt: Tile<T, { [BN] }> = wp.load([j]);
            let bt: Tile<T, { [BN] }> = bp.load([j]);
            let wf: Tile<f32, { [BN] }> = convert_tile(wt);
            let wf: Tile<f32, { [BM, BN] }> = (wf + shift_t).reshape(shape![1, BN]).broadcast(shape![BM, BN]);
            let bf: Tile<f32, { [BN] }> = convert_tile(bt);
            let bf: Tile<f32, { [BM, BN] }> = bf.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
            let yt: Tile<T, { [BM, BN] }> = convert_tile((xf - mu_b) * rs_b * wf + bf);
            unsafe { yp.store_unchecked(yt, [pid.0, j]) };
        }
    }

    /// persistent_layer_norm for rows wider than one tile: [`layer_norm_loop`] that also
    /// stores the row mean and rstd (f32, `[m]`).
    #[cutile::entry()]
    unsafe fn layer_norm_stats_loop<T: ElementType, const BM: i32, const BN: i32>(
        x: &Tensor<T, { [-1, -1] }>,
        w: &Tensor<T, { [-1] }>,
        b: &Tensor<T, { [-1] }>,
        y: &Tensor<T, { [-1, -1] }>,
        mean: &mut Tensor<f32, { [BM] }>,
        rstd: &mut Tensor<f32, { [BM] }>,
        eps: f32,
        shift: f32,
        chunk: i32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let xp: Partition<T, { [BM, BN] }> = x.partition(shape![BM, BN]);
        let wp: Partition<T, { [BN] }> = w.partition(shape![BN]);
        let bp: Partition<T, { [BN] }> = b.partition(shape![BN]);
        let nt: i32 = num_tiles(&xp, 1i32);
        let n: i32 = get_shape_dim(x.shape(), 1i32);
        let n_f: f32 = convert_scalar::<f32>(n);
        let n_t: Tile<f32, { [BM] }> = n_f.broadcast(shape![BM]);
        // Pass 1: per-lane sums of d = x - K and d^2, reduced once at the end (a block
        // reduction per chunk, as a chunk-by-chunk merge needs, made this kernel 20% slower on
        // the H200), with K the mean of the first chunk: near the row mean, so
        // E[d^2] - E[d]^2 does not cancel the variance away.
        let cols: Tile<i32, { [BN] }> = iota(shape![BN]);
        let zero: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
        let one: Tile<f32, { [BM, BN] }> = constant(1.0f32, shape![BM, BN]);
        let n_i: Tile<i32, { [BN] }> = n.broadcast(shape![BN]);
        let valid0: Tile<bool, { [BN] }> = lt_tile(cols, n_i);
        let valid0: Tile<bool, { [BM, BN] }> = valid0.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let cnt0: Tile<f32, { [BM] }> = reduce_sum(select(valid0, one, zero), 1i32);
        let x0t: Tile<T, { [BM, BN] }> = xp.load([pid.0, 0i32]);
        let x0: Tile<f32, { [BM, BN] }> = convert_tile(x0t);
        let sum0: Tile<f32, { [BM] }> = reduce_sum(x0, 1i32);
        let k: Tile<f32, { [BM] }> = sum0 / cnt0;
        let k_b: Tile<f32, { [BM, BN] }> = k.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        let mut s1: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
        let mut s2: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
        for j in 0i32..nt {
            let xt: Tile<T, { [BM, BN] }> = xp.load([pid.0, j]);
            let xf: Tile<f32, { [BM, BN] }> = convert_tile(xt);
            let left: i32 = n - j * chunk;
            let left_t: Tile<i32, { [BN] }> = left.broadcast(shape![BN]);
            let valid: Tile<bool, { [BN] }> = lt_tile(cols, left_t);
            let valid: Tile<bool, { [BM, BN] }> = valid.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
            let d: Tile<f32, { [BM, BN] }> = select(valid, xf - k_b, zero);
            s1 = s1 + d;
            s2 = s2 + d * d;
        }
        let sum_d: Tile<f32, { [BM] }> = reduce_sum(s1, 1i32);
        let sum_d2: Tile<f32, { [BM] }> = reduce_sum(s2, 1i32);
        let e1: Tile<f32, { [BM] }> = sum_d / n_t;
        let e2: Tile<f32, { [BM] }> = sum_d2 / n_t;
        let zero_m: Tile<f32, { [BM] }> = constant(0.0f32, shape![BM]);
        let var: Tile<f32, { [BM] }> = max_tile(e2 - e1 * e1, zero_m);
        let mu: Tile<f32, { [BM] }> = k + e1;
        let mu_b: Tile<f32, { [BM, BN] }> = mu.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        let eps_t: Tile<f32, { [BM] }> = eps.broadcast(shape![BM]);
        let rs: Tile<f32, { [BM] }> = rsqrt(var + eps_t, ftz::Disabled);
        let rs_b: Tile<f32, { [BM, BN] }> = rs.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        let shift_t: Tile<f32, { [BN] }> = shift.broadcast(shape![BN]);
        let mut yp: PartitionMut<T, { [BM, BN] }> = unsafe { y.partition_full_mut(shape![BM, BN]) };
        for j in 0i32..nt {
            let xt: Tile<T, { [BM, BN] }> = xp.load([pid.0, j]);
            let xf: Tile<f32, { [BM, BN] }> = convert_tile(xt);
            let wt: Tile<T, { [BN] }> = wp.load([j]);
            let bt: Tile<T, { [BN] }> = bp.load([j]);
            let wf: Tile<f32, { [BN] }> = convert_tile(wt);
            let wf: Tile<f32, { [BM, BN] }> = (wf + shift_t).reshape(shape![1, BN]).broadcast(shape![BM, BN]);
            let bf: Tile<f32, { [BN] }> = convert_tile(bt);
            let bf: Tile<f32, { [BM, BN] }> = bf.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
            let yt: Tile<T, { [BM, BN] }> = convert_tile((xf - mu_b) * rs_b * wf + bf);
            unsafe { yp.store_unchecked(yt, [pid.0, j]) };
        }
        mean.store(mu);
        rstd.store(rs);
    }

    /// Row softmax of `x[m, n]` in f32: `BM` whole rows per block (`BN >= n`); the padded
    /// columns load as -inf, so they add nothing to the max or the sum.
    #[cutile::entry()]
    unsafe fn softmax<T: ElementType, const BM: i32, const BN: i32>(
        x: &Tensor<T, { [-1, -1] }>,
        y: &mut Tensor<T, { [BM, BN] }>,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let tok: Token = get_tensor_token(x);
        let xp: Partition<T, { [BM, BN] }> =
            unsafe { make_partition_view(x, shape![BM, BN], padding::NegInf, dim_map::Identity, tok) };
        let xt: Tile<T, { [BM, BN] }> = xp.load([pid.0, 0i32]);
        let xf: Tile<f32, { [BM, BN] }> = convert_tile(xt);
        let mx: Tile<f32, { [BM] }> = reduce_max(xf, 1i32);
        let mx_b: Tile<f32, { [BM, BN] }> = mx.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        // Approximate exp (ex2.approx of x log2 e), as tilegym's softmax kernels.
        let e: Tile<f32, { [BM, BN] }> = unsafe { exp_with_rounding(xf - mx_b, rounding::Approx) };
        let s: Tile<f32, { [BM] }> = reduce_sum(e, 1i32);
        let one: Tile<f32, { [BM] }> = constant(1.0f32, shape![BM]);
        let inv: Tile<f32, { [BM] }> = one / s;
        let inv_b: Tile<f32, { [BM, BN] }> = inv.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        let yt: Tile<T, { [BM, BN] }> = convert_tile(e * inv_b);
        y.store(yt);
    }

    /// softmax in tilegym's multi-wave shape: one block per row of `x [m, N]` (`y` the same),
    /// the row as a 1-D `BN`-lane tile (`BN` >= `N`, a power of two) loaded through pointer
    /// tiles with the lane mask `col < N` (masked lanes read as -inf), all loads issued before
    /// the first use, where `softmax`'s zero-padded partition view goes through TMA and shared
    /// memory. The same arithmetic as `softmax` (approximate exp, exact `1/sum`). `x` and `y`
    /// are 16-byte aligned device allocations; `m * N` fits in i32 (the exporter checks).
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn softmax_row<T: ElementType, const BN: i32, const N: i32>(x: *mut T, y: *mut T) {
        let row: i32 = get_tile_block_id().0;
        let n: i32 = N;
        let col: Tile<i32, { [BN] }> = iota(shape![BN]);
        let n_t: Tile<i32, { [BN] }> = broadcast_scalar(n, shape![BN]);
        let valid: Tile<bool, { [BN] }> = lt_tile(col, n_t);
        let off: Tile<i32, { [BN] }> = broadcast_scalar(row * n, shape![BN]) + col;
        let xp: PointerTile<*mut T, { [] }> = unsafe { assume_div_by::<_, 16>(pointer_to_tile(x)) };
        let xp: PointerTile<*mut T, { [1] }> = reshape_ptr(xp, shape![1]);
        let xp: PointerTile<*mut T, { [BN] }> = broadcast_ptr(xp, shape![BN]);
        let (xt, _tx): (Tile<T, { [BN] }>, Token) = unsafe {
            load_ptr_tko(addptr_tile(xp, off), ordering::Weak, None::<scope::TileBlock>, Some(valid), None, None, Latency::<0>)
        };
        let neg_inf: Tile<f32, { [BN] }> = constant(f32::NEG_INFINITY, shape![BN]);
        let xc: Tile<f32, { [BN] }> = convert_tile(xt);
        let xf: Tile<f32, { [BN] }> = select(valid, xc, neg_inf);
        let mx: Tile<f32, { [] }> = reduce_max(xf, 0i32);
        let mx_b: Tile<f32, { [BN] }> = mx.reshape(shape![1]).broadcast(shape![BN]);
        let e: Tile<f32, { [BN] }> = unsafe { exp_with_rounding(xf - mx_b, rounding::Approx) };
        let s: Tile<f32, { [] }> = reduce_sum(e, 0i32);
        let one: Tile<f32, { [] }> = constant(1.0f32, shape![]);
        let inv: Tile<f32, { [] }> = one / s;
        let inv_b: Tile<f32, { [BN] }> = inv.reshape(shape![1]).broadcast(shape![BN]);
        let yt: Tile<T, { [BN] }> = convert_tile(e * inv_b);
        let yp: PointerTile<*mut T, { [] }> = unsafe { assume_div_by::<_, 16>(pointer_to_tile(y)) };
        let yp: PointerTile<*mut T, { [1] }> = reshape_ptr(yp, shape![1]);
        let yp: PointerTile<*mut T, { [BN] }> = broadcast_ptr(yp, shape![BN]);
        unsafe { store_ptr_tko(addptr_tile(yp, off), yt, ordering::Weak, None::<scope::TileBlock>, Some(valid), None, Latency::<0>) };
    }

    /// rotate-half RoPE, in place on `q [B, HQ, S, D]` and `k [B, HK, S, D]` (views of
    /// `[B, S, H, D]` storage). Block `(s_tile, b)` rotates positions
    /// `s_tile*BS .. +BS` of batch `b`, all heads; `HALF = rope_dim / 2` columns per half.
    /// Columns past `rope_dim` are neither read nor written (in place, they pass through).
    /// `C` is the compute type: `f32`, or the element type itself (as tilegym computes, one
    /// rounding per product), which halves the registers a tile needs. Only the first half of
    /// cos and sin is read, for both halves of the rotation, as tilegym's `_rope_kernel` does:
    /// HF's tables are `cat(freqs, freqs)`, so the halves are equal (reference/src/ops/rope.cpp
    /// fills them so). Every access is inside its view (the grid is the positions and batches,
    /// the head tiles start at 0), so none is checked at run time.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn rope<T: ElementType, C: ElementType, const HQ: i32, const HK: i32, const BS: i32, const HALF: i32>(
        q: &Tensor<T, { [-1, -1, -1, -1] }>,
        k: &Tensor<T, { [-1, -1, -1, -1] }>,
        cos: &Tensor<T, { [-1, -1, -1] }>,
        sin: &Tensor<T, { [-1, -1, -1] }>,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let st: i32 = pid.0;
        let bi: i32 = pid.1;
        let cp: Partition<T, { [1, BS, HALF] }> = cos.partition(shape![1, BS, HALF]);
        let sp: Partition<T, { [1, BS, HALF] }> = sin.partition(shape![1, BS, HALF]);
        let ct: Tile<T, { [1, BS, HALF] }> = cp.load([bi, st, 0i32]);
        let stt: Tile<T, { [1, BS, HALF] }> = sp.load([bi, st, 0i32]);
        let c: Tile<C, { [1, BS, HALF] }> = convert_tile(ct);
        let sn: Tile<C, { [1, BS, HALF] }> = convert_tile(stt);
        let c: Tile<C, { [1, 1, BS, HALF] }> = c.reshape(shape![1, 1, BS, HALF]);
        let sn: Tile<C, { [1, 1, BS, HALF] }> = sn.reshape(shape![1, 1, BS, HALF]);

        let qp: Partition<T, { [1, HQ, BS, HALF] }> = q.partition(shape![1, HQ, BS, HALF]);
        let q1t: Tile<T, { [1, HQ, BS, HALF] }> = qp.load([bi, 0i32, st, 0i32]);
        let q2t: Tile<T, { [1, HQ, BS, HALF] }> = load_view_tko(&qp, [bi, 0i32, st, 1i32], ordering::Weak, scope::TileBlock, None, tma::Enabled);
        let q1: Tile<C, { [1, HQ, BS, HALF] }> = convert_tile(q1t);
        let q2: Tile<C, { [1, HQ, BS, HALF] }> = convert_tile(q2t);
        let qc: Tile<C, { [1, HQ, BS, HALF] }> = c.broadcast(shape![1, HQ, BS, HALF]);
        let qs: Tile<C, { [1, HQ, BS, HALF] }> = sn.broadcast(shape![1, HQ, BS, HALF]);
        let qy1: Tile<T, { [1, HQ, BS, HALF] }> = convert_tile(q1 * qc - q2 * qs);
        let qy2: Tile<T, { [1, HQ, BS, HALF] }> = convert_tile(q2 * qc + q1 * qs);
        let mut qw: PartitionMut<T, { [1, HQ, BS, HALF] }> = unsafe { q.partition_full_mut(shape![1, HQ, BS, HALF]) };
        unsafe { qw.store_unchecked(qy1, [bi, 0i32, st, 0i32]) };
        unsafe { qw.store_unchecked(qy2, [bi, 0i32, st, 1i32]) };

        let kp: Partition<T, { [1, HK, BS, HALF] }> = k.partition(shape![1, HK, BS, HALF]);
        let k1t: Tile<T, { [1, HK, BS, HALF] }> = kp.load([bi, 0i32, st, 0i32]);
        let k2t: Tile<T, { [1, HK, BS, HALF] }> = load_view_tko(&kp, [bi, 0i32, st, 1i32], ordering::Weak, scope::TileBlock, None, tma::Enabled);
        let k1: Tile<C, { [1, HK, BS, HALF] }> = convert_tile(k1t);
        let k2: Tile<C, { [1, HK, BS, HALF] }> = convert_tile(k2t);
        let kc: Tile<C, { [1, HK, BS, HALF] }> = c.broadcast(shape![1, HK, BS, HALF]);
        let ks: Tile<C, { [1, HK, BS, HALF] }> = sn.broadcast(shape![1, HK, BS, HALF]);
        let ky1: Tile<T, { [1, HK, BS, HALF] }> = convert_tile(k1 * kc - k2 * ks);
        let ky2: Tile<T, { [1, HK, BS, HALF] }> = convert_tile(k2 * kc + k1 * ks);
        let mut kw: PartitionMut<T, { [1, HK, BS, HALF] }> = unsafe { k.partition_full_mut(shape![1, HK, BS, HALF]) };
        unsafe { kw.store_unchecked(ky1, [bi, 0i32, st, 0i32]) };
        unsafe { kw.store_unchecked(ky2, [bi, 0i32, st, 1i32]) };
    }

    /// `y = silu(x[:, 0, :]) * x[:, 1, :]` with `x` viewed as `[rows, 2, H]` and `y` as
    /// `[rows, H]` (the exporter passes these views' extents and strides as literals).
    #[cutile::entry()]
    fn silu_and_mul<T: ElementType, const BR: i32, const BH: i32>(
        x: &Tensor<T, { [-1, -1, -1] }>,
        y: &mut Tensor<T, { [BR, BH] }>,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let xp: Partition<T, { [BR, 1, BH] }> = x.partition(shape![BR, 1, BH]);
        let gt: Tile<T, { [BR, 1, BH] }> = xp.load([pid.0, 0i32, pid.1]);
        // Index 1 of the middle axis (extent 2) is always inside: no runtime check.
        let ut: Tile<T, { [BR, 1, BH] }> =
            load_view_tko(&xp, [pid.0, 1i32, pid.1], ordering::Weak, scope::TileBlock, None, tma::Enabled);
        let g: Tile<f32, { [BR, 1, BH] }> = convert_tile(gt);
        let u: Tile<f32, { [BR, 1, BH] }> = convert_tile(ut);
        let g: Tile<f32, { [BR, BH] }> = g.reshape(shape![BR, BH]);
        let u: Tile<f32, { [BR, BH] }> = u.reshape(shape![BR, BH]);
        let one: Tile<f32, { [BR, BH] }> = constant(1.0f32, shape![BR, BH]);
        // e^-g as 2^(-g log2 e), flushing denormals (tilegym's formulation): the full-precision
        // exp's range reduction took 160 more instructions per 32 elements than the kernel's
        // memory traffic can hide in fp16.
        let neg_log2e: Tile<f32, { [BR, BH] }> = constant(-1.4426950408889634f32, shape![BR, BH]);
        let e: Tile<f32, { [BR, BH] }> = exp2(mulf(g, neg_log2e, rounding::NearestEven, ftz::Enabled), ftz::Enabled);
        let sg: Tile<f32, { [BR, BH] }> = true_div(g, one + e);
        let yt: Tile<T, { [BR, BH] }> = convert_tile(sg * u);
        y.store(yt);
    }

    /// silu_and_mul in tilegym's shape: one block per row of `x [rows, 2H]` (`y [rows, H]`),
    /// the row's two halves as 1-D `BH`-lane tiles (`BH` >= `H`, a power of two) loaded through
    /// pointer tiles with a lane mask `col < H`. Both loads are masked lanes rather than the
    /// branch per 16-byte chunk that a zero-padded partition view lowers to; in fp16/bf16 the
    /// conversion to f32 sat inside that branch, so each chunk's load waited for the previous
    /// one (half of tilegym's bandwidth). `x` and `y` are 16-byte aligned device allocations;
    /// `rows * 2H` fits in i32 (the exporter checks).
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn silu_and_mul_row<T: ElementType, const BH: i32, const H: i32>(x: *mut T, y: *mut T) {
        let row: i32 = get_tile_block_id().0;
        let h: i32 = H;
        let col: Tile<i32, { [BH] }> = iota(shape![BH]);
        let h_t: Tile<i32, { [BH] }> = broadcast_scalar(h, shape![BH]);
        let valid: Tile<bool, { [BH] }> = lt_tile(col, h_t);
        let a_off: Tile<i32, { [BH] }> = broadcast_scalar(row * (2i32 * h), shape![BH]) + col;
        let b_off: Tile<i32, { [BH] }> = a_off + h_t;
        let y_off: Tile<i32, { [BH] }> = broadcast_scalar(row * h, shape![BH]) + col;
        let xp: PointerTile<*mut T, { [] }> = unsafe { assume_div_by::<_, 16>(pointer_to_tile(x)) };
        let xp: PointerTile<*mut T, { [1] }> = reshape_ptr(xp, shape![1]);
        let xp: PointerTile<*mut T, { [BH] }> = broadcast_ptr(xp, shape![BH]);
        let (gt, _tg): (Tile<T, { [BH] }>, Token) = unsafe {
            load_ptr_tko(addptr_tile(xp, a_off), ordering::Weak, None::<scope::TileBlock>, Some(valid), None, None, Latency::<0>)
        };
        let (ut, _tu): (Tile<T, { [BH] }>, Token) = unsafe {
            load_ptr_tko(addptr_tile(xp, b_off), ordering::Weak, None::<scope::TileBlock>, Some(valid), None, None, Latency::<0>)
        };
        let g: Tile<f32, { [BH] }> = convert_tile(gt);
        let u: Tile<f32, { [BH] }> = convert_tile(ut);
        let one: Tile<f32, { [BH] }> = constant(1.0f32, shape![BH]);
        // The same arithmetic as `silu_and_mul` (e^-g as 2^(-g log2 e), flushing denormals).
        let neg_log2e: Tile<f32, { [BH] }> = constant(-1.4426950408889634f32, shape![BH]);
        let e: Tile<f32, { [BH] }> = exp2(mulf(g, neg_log2e, rounding::NearestEven, ftz::Enabled), ftz::Enabled);
        let sg: Tile<f32, { [BH] }> = true_div(g, one + e);
        let yt: Tile<T, { [BH] }> = convert_tile(sg * u);
        let yp: PointerTile<*mut T, { [] }> = unsafe { assume_div_by::<_, 16>(pointer_to_tile(y)) };
        let yp: PointerTile<*mut T, { [1] }> = reshape_ptr(yp, shape![1]);
        let yp: PointerTile<*mut T, { [BH] }> = broadcast_ptr(yp, shape![BH]);
        unsafe { store_ptr_tko(addptr_tile(yp, y_off), yt, ordering::Weak, None::<scope::TileBlock>, Some(valid), None, Latency::<0>) };
    }

    /// `c = silu(a) * b` over flat 1-D views of same-shape tensors; one block per `TILE`.
    #[cutile::entry()]
    fn swiglu<T: ElementType, const TILE: i32>(
        a: &Tensor<T, { [-1] }>,
        b: &Tensor<T, { [-1] }>,
        c: &mut Tensor<T, { [TILE] }>,
    ) {
        let at: Tile<T, { [TILE] }> = a.load_like(c);
        let bt: Tile<T, { [TILE] }> = b.load_like(c);
        let af: Tile<f32, { [TILE] }> = convert_tile(at);
        let bf: Tile<f32, { [TILE] }> = convert_tile(bt);
        let one: Tile<f32, { [TILE] }> = constant(1.0f32, shape![TILE]);
        let zero: Tile<f32, { [TILE] }> = constant(0.0f32, shape![TILE]);
        let sa: Tile<f32, { [TILE] }> = true_div(af, one + exp(zero - af));
        let ct: Tile<T, { [TILE] }> = convert_tile(sa * bf);
        c.store(ct);
    }

    /// dropout, out of place: `y_i = keep_i ? x_i * scale : 0` with cuTile's stateless
    /// generator (reference/src/ops/dropout.cpp `cutile_uniform`):
    /// `r = u32(i) * 1103515245 + seed; r ^= r >> 16; r ^= r << 8; r ^= r >> 4`, and
    /// `keep = (r & 0x7fffffff) > threshold`, where the exporter computes `threshold` as
    /// the largest 31-bit value whose `value / (2^31 - 1)` (in f64) is `<= p` (`-1` in eval
    /// mode). Logical right shifts are arithmetic shifts masked to the low bits, so the
    /// result does not depend on the signedness of the i32 shift.
    #[cutile::entry()]
    fn dropout<T: ElementType, const TILE: i32>(
        x: &Tensor<T, { [-1] }>,
        y: &mut Tensor<T, { [TILE] }>,
        seed: i32,
        threshold: i32,
        scale: f32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let xt: Tile<T, { [TILE] }> = x.load_like(y);
        let xf: Tile<f32, { [TILE] }> = convert_tile(xt);
        let base: i32 = pid.0 * TILE;
        let lane: Tile<i32, { [TILE] }> = iota(shape![TILE]);
        let idx: Tile<i32, { [TILE] }> = lane + base.broadcast(shape![TILE]);
        let mult: Tile<i32, { [TILE] }> = constant(1103515245i32, shape![TILE]);
        let sh16: Tile<i32, { [TILE] }> = constant(16i32, shape![TILE]);
        let sh8: Tile<i32, { [TILE] }> = constant(8i32, shape![TILE]);
        let sh4: Tile<i32, { [TILE] }> = constant(4i32, shape![TILE]);
        let lo16: Tile<i32, { [TILE] }> = constant(65535i32, shape![TILE]);
        let lo28: Tile<i32, { [TILE] }> = constant(268435455i32, shape![TILE]);
        let lo31: Tile<i32, { [TILE] }> = constant(2147483647i32, shape![TILE]);
        let seed_t: Tile<i32, { [TILE] }> = seed.broadcast(shape![TILE]);
        let thr_t: Tile<i32, { [TILE] }> = threshold.broadcast(shape![TILE]);
        let r: Tile<i32, { [TILE] }> = idx * mult + seed_t;
        let r: Tile<i32, { [TILE] }> = r ^ ((r >> sh16) & lo16);
        let r: Tile<i32, { [TILE] }> = r ^ (r << sh8);
        let r: Tile<i32, { [TILE] }> = r ^ ((r >> sh4) & lo28);
        let r31: Tile<i32, { [TILE] }> = r & lo31;
        let keep: Tile<bool, { [TILE] }> = gt_tile(r31, thr_t);
        let scale_t: Tile<f32, { [TILE] }> = scale.broadcast(shape![TILE]);
        let zero: Tile<f32, { [TILE] }> = constant(0.0f32, shape![TILE]);
        let yf: Tile<f32, { [TILE] }> = select(keep, xf * scale_t, zero);
        let yt: Tile<T, { [TILE] }> = convert_tile(yf);
        y.store(yt);
    }

    /// [`dropout`] in place on `x`.
    #[cutile::entry()]
    fn dropout_inplace<T: ElementType, const TILE: i32>(
        x: &mut Tensor<T, { [TILE] }>,
        seed: i32,
        threshold: i32,
        scale: f32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let xt: Tile<T, { [TILE] }> = load_tile_mut(x);
        let xf: Tile<f32, { [TILE] }> = convert_tile(xt);
        let base: i32 = pid.0 * TILE;
        let lane: Tile<i32, { [TILE] }> = iota(shape![TILE]);
        let idx: Tile<i32, { [TILE] }> = lane + base.broadcast(shape![TILE]);
        let mult: Tile<i32, { [TILE] }> = constant(1103515245i32, shape![TILE]);
        let sh16: Tile<i32, { [TILE] }> = constant(16i32, shape![TILE]);
        let sh8: Tile<i32, { [TILE] }> = constant(8i32, shape![TILE]);
        let sh4: Tile<i32, { [TILE] }> = constant(4i32, shape![TILE]);
        let lo16: Tile<i32, { [TILE] }> = constant(65535i32, shape![TILE]);
        let lo28: Tile<i32, { [TILE] }> = constant(268435455i32, shape![TILE]);
        let lo31: Tile<i32, { [TILE] }> = constant(2147483647i32, shape![TILE]);
        let seed_t: Tile<i32, { [TILE] }> = seed.broadcast(shape![TILE]);
        let thr_t: Tile<i32, { [TILE] }> = threshold.broadcast(shape![TILE]);
        let r: Tile<i32, { [TILE] }> = idx * mult + seed_t;
        let r: Tile<i32, { [TILE] }> = r ^ ((r >> sh16) & lo16);
        let r: Tile<i32, { [TILE] }> = r ^ (r << sh8);
        let r: Tile<i32, { [TILE] }> = r ^ ((r >> sh4) & lo28);
        let r31: Tile<i32, { [TILE] }> = r & lo31;
        let keep: Tile<bool, { [TILE] }> = gt_tile(r31, thr_t);
        let scale_t: Tile<f32, { [TILE] }> = scale.broadcast(shape![TILE]);
        let zero: Tile<f32, { [TILE] }> = constant(0.0f32, shape![TILE]);
        let yf: Tile<f32, { [TILE] }> = select(keep, xf * scale_t, zero);
        let yt: Tile<T, { [TILE] }> = convert_tile(yf);
        x.store(yt);
    }
}
