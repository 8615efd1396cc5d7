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
    /// `y = x * rsqrt(mean(x^2 over the row) + eps) * w`, accumulated in f32 and
    /// stored in the input element type.
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
        let wf: Tile<f32, { [BM, BN] }> = wf.reshape(shape![1, BN]).broadcast(y.shape());

        let yf: Tile<f32, { [BM, BN] }> = xf * inv_rms * wf;
        let yt: Tile<T, { [BM, BN] }> = convert_tile(yf);
        y.store(yt);
    }
}
