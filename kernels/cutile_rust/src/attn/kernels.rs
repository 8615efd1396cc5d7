// SPDX-License-Identifier: Apache-2.0
//! portbench's cuTile Rust attention-prefill kernels (issue 15): fmha, attention_sink,
//! gemma_attention, mla.
//!
//! A `#[cutile::module]` of its own (`portbench_attn`), picked by kernel name
//! (`super::module_of`). What the kernels rely on (docs/cutile-rust.md, "Attention prefill"):
//! - Tensors are the fp64 references' (reference/src/ops/{fmha,attention_sink,gemma_attention,
//!   mla}.cpp), all contiguous, bound as they are or (attention_sink's q and o) as views of
//!   the same memory; every one a shared `&Tensor`, `o` written through a full-tensor
//!   partition, so no kernel uses the launch-grid partition of a `&mut Tensor`.
//! - Loads go through zero-padded partition views: the query rows past `S` and the head
//!   columns past `D` (the tile `BD` is `D` rounded up to a power of two) read as zero, the
//!   stores through the partition drop them. Key columns past `S`, after the query (causal)
//!   or outside a window are masked to `-inf` in the kernel (never padded by the harness).
//! - Online softmax in base 2: `s = (q k^T) * qk_scale` with `qk_scale = scale * log2(e)`
//!   (the exporter's), so `softmax(q k^T scale) = 2^(s - max s) / sum 2^(s - max s)`.
//!   fmha, mla and attention_sink take the row maximum before the scale (`max(x) * c =
//!   max(x * c)` needs `c > 0`: the exporter refuses other scales). A running maximum that is
//!   `-inf` would make `2^(-inf - -inf)` NaN: in fmha and mla every row's first key tile holds
//!   key 0, which no mask removes (causal is top-left aligned, key j <= query i);
//!   attention_sink starts the maximum at the sink logit; gemma_attention, whose window can
//!   mask all of a row's first tiles, takes such a row's exponentials against 0.
//! - Products on the tensor cores in the element type `E` (f16, bf16, f8e5m2, f8e4m3fn) with
//!   f32 accumulation; P is converted to `E` for the second product (as tilegym does).
//! - Every `if` on a const generic is resolved when the kernel is specialised.

#[cutile::module]
pub mod portbench_attn {
    use cutile::core::*;

    /// fmha, one `BM`-row tile of queries of one (batch, head) per tile block: grid
    /// `[ceil(S / BM), B * H, 1]`. `O = softmax(Q K^T scale [+ causal mask]) V`, GQA through
    /// `kv head = head / (H / HKV)`. `CAUSAL` = 1: key tiles past the tile's last query are
    /// never loaded (causal-block skipping), and only the tiles that cross the diagonal or the
    /// end of the keys are masked. `E` the inputs' element type, `O` the output's.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn fmha<E: ElementType, O: ElementType, const BM: i32, const BN: i32, const BD: i32, const CAUSAL: i32>(
        q: &Tensor<E, { [-1, -1, -1, -1] }>,
        k: &Tensor<E, { [-1, -1, -1, -1] }>,
        v: &Tensor<E, { [-1, -1, -1, -1] }>,
        o: &Tensor<O, { [-1, -1, -1, -1] }>,
        qk_scale: f32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let heads: i32 = get_shape_dim(q.shape(), 1i32);
        let kv_heads: i32 = get_shape_dim(k.shape(), 1i32);
        let s_kv: i32 = get_shape_dim(k.shape(), 2i32);
        let bi: i32 = pid.1 / heads;
        let hi: i32 = pid.1 % heads;
        let kvh: i32 = hi / (heads / kv_heads);
        let row0: i32 = pid.0 * BM;

        // Key tiles [0, mask_start) need no mask: all their keys exist and (causal) precede
        // every query of this tile. Tiles [mask_start, tiles) are masked; causal stops at the
        // tile holding the last query's own key.
        let full_tiles: i32 = s_kv / BN;
        let mut mask_start: i32 = full_tiles;
        let mut tiles: i32 = (s_kv + BN - 1i32) / BN;
        if CAUSAL == 1i32 {
            mask_start = min(row0 / BN, full_tiles);
            let last: i32 = min(row0 + BM, s_kv);
            tiles = (last + BN - 1i32) / BN;
        }

        let q_p: Partition<E, { [1, 1, BM, BD] }> = q.partition(shape![1, 1, BM, BD]);
        let qt: Tile<E, { [1, 1, BM, BD] }> = q_p.load([bi, hi, pid.0, 0i32]);
        let qt: Tile<E, { [BM, BD] }> = qt.reshape(shape![BM, BD]);
        let k_p: Partition<E, { [1, 1, BN, BD] }> = k.partition(shape![1, 1, BN, BD]);
        let v_p: Partition<E, { [1, 1, BN, BD] }> = v.partition(shape![1, 1, BN, BD]);

        // Query and key positions of the tile's elements, for the masks.
        let rows: Tile<i32, { [BM] }> = iota(shape![BM]);
        let rows: Tile<i32, { [BM, 1] }> = rows.reshape(shape![BM, 1]);
        let rows: Tile<i32, { [BM, BN] }> = (broadcast_scalar(row0, shape![BM, 1]) + rows).broadcast(shape![BM, BN]);
        let cols: Tile<i32, { [BN] }> = iota(shape![BN]);
        let cols: Tile<i32, { [BM, BN] }> = cols.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let keys_end: Tile<i32, { [BM, BN] }> = s_kv.broadcast(shape![BM, BN]);
        let neg_inf: Tile<f32, { [BM, BN] }> = constant(f32::NEG_INFINITY, shape![BM, BN]);
        let scale_m: Tile<f32, { [BM, 1] }> = broadcast_scalar(qk_scale, shape![BM, 1]);
        let scale_mn: Tile<f32, { [BM, BN] }> = broadcast_scalar(qk_scale, shape![BM, BN]);

        let mut m_i: Tile<f32, { [BM, 1] }> = constant(f32::NEG_INFINITY, shape![BM, 1]);
        let mut l_i: Tile<f32, { [BM, 1] }> = constant(0.0f32, shape![BM, 1]);
        let mut acc: Tile<f32, { [BM, BD] }> = constant(0.0f32, shape![BM, BD]);
        for j in 0i32..tiles {
            let kt: Tile<E, { [1, 1, BN, BD] }> =
                load_view_tko(&k_p, [bi, kvh, j, 0i32], ordering::Weak, scope::TileBlock, Some(2i32), tma::Enabled);
            let kt: Tile<E, { [BN, BD] }> = kt.reshape(shape![BN, BD]);
            let ktt: Tile<E, { [BD, BN] }> = kt.transpose();
            let mut s: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
            s = mmaf(qt, ktt, s);
            if j >= mask_start {
                let key: Tile<i32, { [BM, BN] }> = broadcast_scalar(j * BN, shape![BM, BN]) + cols;
                let mut keep: Tile<bool, { [BM, BN] }> = lt_tile(key, keys_end);
                if CAUSAL == 1i32 {
                    let before: Tile<bool, { [BM, BN] }> = ge_tile(rows, key);
                    keep = keep & before;
                }
                s = select(keep, s, neg_inf);
            }
            let s_max: Tile<f32, { [BM] }> = reduce_max(s, 1i32);
            let s_max: Tile<f32, { [BM, 1] }> = s_max.reshape(shape![BM, 1]);
            let m_ij: Tile<f32, { [BM, 1] }> = max_tile(m_i, s_max * scale_m);
            let p: Tile<f32, { [BM, BN] }> = exp2(s * scale_mn - m_ij.broadcast(shape![BM, BN]), ftz::Enabled);
            let l_ij: Tile<f32, { [BM] }> = reduce_sum(p, 1i32);
            let alpha: Tile<f32, { [BM, 1] }> = exp2(m_i - m_ij, ftz::Enabled);
            l_i = l_i * alpha + l_ij.reshape(shape![BM, 1]);
            acc = acc * alpha.broadcast(shape![BM, BD]);
            let vt: Tile<E, { [1, 1, BN, BD] }> =
                load_view_tko(&v_p, [bi, kvh, j, 0i32], ordering::Weak, scope::TileBlock, Some(4i32), tma::Enabled);
            let vt: Tile<E, { [BN, BD] }> = vt.reshape(shape![BN, BD]);
            let pe: Tile<E, { [BM, BN] }> = convert_tile(p);
            acc = mmaf(pe, vt, acc);
            m_i = m_ij;
        }
        // One exact reciprocal per row, then a multiply per element.
        let one: Tile<f32, { [BM, 1] }> = constant(1.0f32, shape![BM, 1]);
        let inv: Tile<f32, { [BM, 1] }> = one / l_i;
        let out: Tile<f32, { [BM, BD] }> = acc * inv.broadcast(shape![BM, BD]);
        let out: Tile<O, { [BM, BD] }> = convert_tile(out);
        let out: Tile<O, { [1, 1, BM, BD] }> = out.reshape(shape![1, 1, BM, BD]);
        let mut o_p: PartitionMut<O, { [1, 1, BM, BD] }> = unsafe { o.partition_full_mut(shape![1, 1, BM, BD]) };
        unsafe { store_view_tko_mut(&mut o_p, out, [bi, hi, pid.0, 0i32], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
    }
    /// mla (DeepSeek MLA prefill), fmha with a split head: scores `q.k + qpe.kpe` (two products
    /// into one f32 accumulator; `BD` and `BP` the tiles of `D` and `D_pe`), `kpe` shared by
    /// `H / HPE` heads (`kpe_heads`, 1 in the suite), output in the inputs' type. Grid, masks and
    /// causal-block skipping as [`fmha`].
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn mla<E: ElementType, const BM: i32, const BN: i32, const BD: i32, const BP: i32, const CAUSAL: i32>(
        q: &Tensor<E, { [-1, -1, -1, -1] }>,
        k: &Tensor<E, { [-1, -1, -1, -1] }>,
        v: &Tensor<E, { [-1, -1, -1, -1] }>,
        qpe: &Tensor<E, { [-1, -1, -1, -1] }>,
        kpe: &Tensor<E, { [-1, -1, -1, -1] }>,
        o: &Tensor<E, { [-1, -1, -1, -1] }>,
        qk_scale: f32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let heads: i32 = get_shape_dim(q.shape(), 1i32);
        let kv_heads: i32 = get_shape_dim(k.shape(), 1i32);
        let s_kv: i32 = get_shape_dim(k.shape(), 2i32);
        let bi: i32 = pid.1 / heads;
        let hi: i32 = pid.1 % heads;
        let kvh: i32 = hi / (heads / kv_heads);
        let pe_heads: i32 = get_shape_dim(kpe.shape(), 1i32);
        let peh: i32 = hi / (heads / pe_heads);
        let row0: i32 = pid.0 * BM;

        // Key tiles [0, mask_start) need no mask: all their keys exist and (causal) precede
        // every query of this tile. Tiles [mask_start, tiles) are masked; causal stops at the
        // tile holding the last query's own key.
        let full_tiles: i32 = s_kv / BN;
        let mut mask_start: i32 = full_tiles;
        let mut tiles: i32 = (s_kv + BN - 1i32) / BN;
        if CAUSAL == 1i32 {
            mask_start = min(row0 / BN, full_tiles);
            let last: i32 = min(row0 + BM, s_kv);
            tiles = (last + BN - 1i32) / BN;
        }

        let q_p: Partition<E, { [1, 1, BM, BD] }> = q.partition(shape![1, 1, BM, BD]);
        let qt: Tile<E, { [1, 1, BM, BD] }> = q_p.load([bi, hi, pid.0, 0i32]);
        let qt: Tile<E, { [BM, BD] }> = qt.reshape(shape![BM, BD]);
        let k_p: Partition<E, { [1, 1, BN, BD] }> = k.partition(shape![1, 1, BN, BD]);
        let v_p: Partition<E, { [1, 1, BN, BD] }> = v.partition(shape![1, 1, BN, BD]);
        let qpe_p: Partition<E, { [1, 1, BM, BP] }> = qpe.partition(shape![1, 1, BM, BP]);
        let qpt: Tile<E, { [1, 1, BM, BP] }> = qpe_p.load([bi, hi, pid.0, 0i32]);
        let qpt: Tile<E, { [BM, BP] }> = qpt.reshape(shape![BM, BP]);
        let kpe_p: Partition<E, { [1, 1, BN, BP] }> = kpe.partition(shape![1, 1, BN, BP]);

        // Query and key positions of the tile's elements, for the masks.
        let rows: Tile<i32, { [BM] }> = iota(shape![BM]);
        let rows: Tile<i32, { [BM, 1] }> = rows.reshape(shape![BM, 1]);
        let rows: Tile<i32, { [BM, BN] }> = (broadcast_scalar(row0, shape![BM, 1]) + rows).broadcast(shape![BM, BN]);
        let cols: Tile<i32, { [BN] }> = iota(shape![BN]);
        let cols: Tile<i32, { [BM, BN] }> = cols.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let keys_end: Tile<i32, { [BM, BN] }> = s_kv.broadcast(shape![BM, BN]);
        let neg_inf: Tile<f32, { [BM, BN] }> = constant(f32::NEG_INFINITY, shape![BM, BN]);
        let scale_m: Tile<f32, { [BM, 1] }> = broadcast_scalar(qk_scale, shape![BM, 1]);
        let scale_mn: Tile<f32, { [BM, BN] }> = broadcast_scalar(qk_scale, shape![BM, BN]);

        let mut m_i: Tile<f32, { [BM, 1] }> = constant(f32::NEG_INFINITY, shape![BM, 1]);
        let mut l_i: Tile<f32, { [BM, 1] }> = constant(0.0f32, shape![BM, 1]);
        let mut acc: Tile<f32, { [BM, BD] }> = constant(0.0f32, shape![BM, BD]);
        // Full tiles first, with no mask and no branch in the loop (the reference's loop nest:
        // cuTile Python splits its `if j >= mask_start` loop in two), then the masked tiles.
        for j in 0i32..mask_start {
            let kt: Tile<E, { [1, 1, BN, BD] }> =
                load_view_tko(&k_p, [bi, kvh, j, 0i32], ordering::Weak, scope::TileBlock, Some(2i32), tma::Enabled);
            let kt: Tile<E, { [BN, BD] }> = kt.reshape(shape![BN, BD]);
            let ktt: Tile<E, { [BD, BN] }> = kt.transpose();
            let mut s: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
            s = mmaf(qt, ktt, s);
            let kpt: Tile<E, { [1, 1, BN, BP] }> =
                load_view_tko(&kpe_p, [bi, peh, j, 0i32], ordering::Weak, scope::TileBlock, Some(2i32), tma::Enabled);
            let kpt: Tile<E, { [BN, BP] }> = kpt.reshape(shape![BN, BP]);
            let kptt: Tile<E, { [BP, BN] }> = kpt.transpose();
            s = mmaf(qpt, kptt, s);
            let s_max: Tile<f32, { [BM] }> = reduce_max(s, 1i32);
            let s_max: Tile<f32, { [BM, 1] }> = s_max.reshape(shape![BM, 1]);
            let m_ij: Tile<f32, { [BM, 1] }> = max_tile(m_i, s_max * scale_m);
            let p: Tile<f32, { [BM, BN] }> = exp2(s * scale_mn - m_ij.broadcast(shape![BM, BN]), ftz::Enabled);
            let l_ij: Tile<f32, { [BM] }> = reduce_sum(p, 1i32);
            let alpha: Tile<f32, { [BM, 1] }> = exp2(m_i - m_ij, ftz::Enabled);
            l_i = l_i * alpha + l_ij.reshape(shape![BM, 1]);
            acc = acc * alpha.broadcast(shape![BM, BD]);
            let vt: Tile<E, { [1, 1, BN, BD] }> =
                load_view_tko(&v_p, [bi, kvh, j, 0i32], ordering::Weak, scope::TileBlock, Some(4i32), tma::Enabled);
            let vt: Tile<E, { [BN, BD] }> = vt.reshape(shape![BN, BD]);
            let pe: Tile<E, { [BM, BN] }> = convert_tile(p);
            acc = mmaf(pe, vt, acc);
            m_i = m_ij;
        }
        for j in mask_start..tiles {
            let kt: Tile<E, { [1, 1, BN, BD] }> =
                load_view_tko(&k_p, [bi, kvh, j, 0i32], ordering::Weak, scope::TileBlock, Some(2i32), tma::Enabled);
            let kt: Tile<E, { [BN, BD] }> = kt.reshape(shape![BN, BD]);
            let ktt: Tile<E, { [BD, BN] }> = kt.transpose();
            let mut s: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
            s = mmaf(qt, ktt, s);
            let kpt: Tile<E, { [1, 1, BN, BP] }> =
                load_view_tko(&kpe_p, [bi, peh, j, 0i32], ordering::Weak, scope::TileBlock, Some(2i32), tma::Enabled);
            let kpt: Tile<E, { [BN, BP] }> = kpt.reshape(shape![BN, BP]);
            let kptt: Tile<E, { [BP, BN] }> = kpt.transpose();
            s = mmaf(qpt, kptt, s);
            let key: Tile<i32, { [BM, BN] }> = broadcast_scalar(j * BN, shape![BM, BN]) + cols;
            let mut keep: Tile<bool, { [BM, BN] }> = lt_tile(key, keys_end);
            if CAUSAL == 1i32 {
                let before: Tile<bool, { [BM, BN] }> = ge_tile(rows, key);
                keep = keep & before;
            }
            s = select(keep, s, neg_inf);
            let s_max: Tile<f32, { [BM] }> = reduce_max(s, 1i32);
            let s_max: Tile<f32, { [BM, 1] }> = s_max.reshape(shape![BM, 1]);
            let m_ij: Tile<f32, { [BM, 1] }> = max_tile(m_i, s_max * scale_m);
            let p: Tile<f32, { [BM, BN] }> = exp2(s * scale_mn - m_ij.broadcast(shape![BM, BN]), ftz::Enabled);
            let l_ij: Tile<f32, { [BM] }> = reduce_sum(p, 1i32);
            let alpha: Tile<f32, { [BM, 1] }> = exp2(m_i - m_ij, ftz::Enabled);
            l_i = l_i * alpha + l_ij.reshape(shape![BM, 1]);
            acc = acc * alpha.broadcast(shape![BM, BD]);
            let vt: Tile<E, { [1, 1, BN, BD] }> =
                load_view_tko(&v_p, [bi, kvh, j, 0i32], ordering::Weak, scope::TileBlock, Some(4i32), tma::Enabled);
            let vt: Tile<E, { [BN, BD] }> = vt.reshape(shape![BN, BD]);
            let pe: Tile<E, { [BM, BN] }> = convert_tile(p);
            acc = mmaf(pe, vt, acc);
            m_i = m_ij;
        }
        // One exact reciprocal per row, then a multiply per element.
        let one: Tile<f32, { [BM, 1] }> = constant(1.0f32, shape![BM, 1]);
        let inv: Tile<f32, { [BM, 1] }> = one / l_i;
        let out: Tile<f32, { [BM, BD] }> = acc * inv.broadcast(shape![BM, BD]);
        let out: Tile<E, { [BM, BD] }> = convert_tile(out);
        let out: Tile<E, { [1, 1, BM, BD] }> = out.reshape(shape![1, 1, BM, BD]);
        let mut o_p: PartitionMut<E, { [1, 1, BM, BD] }> = unsafe { o.partition_full_mut(shape![1, 1, BM, BD]) };
        unsafe { store_view_tko_mut(&mut o_p, out, [bi, hi, pid.0, 0i32], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
    }
    /// attention_sink (GPT-OSS prefill), one `BM`-row tile of queries of one (batch, head) per
    /// tile block: grid `[ceil(Sq / BM), B * H, 1]`. q and o are `[B, Sq, H, D]` views of the
    /// reference's `[B, Sq, Hkv, G, D]` and `[B, Sq, H*D]` (head `h = kvh * G + g`), k and v
    /// `[B, Skv, Hkv, D]`, sinks `[H]`. Query row `i` sits at position `start_q + i` and sees
    /// keys `j` with `pos - window < j <= pos` and `j < Skv` (`window` >= every position when
    /// there is no sliding window: the exporter's). Key tiles outside the tile's union of those
    /// ranges are never loaded; only tiles that cross one of the bounds are masked. The sink
    /// logit (natural units) starts the running maximum and joins the denominator at the end:
    /// `o = sum_j 2^(s_j - m) v_j / (sum_j 2^(s_j - m) + 2^(sink log2 e - m))`, `m` the maximum
    /// of all `s_j` and the sink, so the maximum is finite from the start.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn attention_sink<E: ElementType, const BM: i32, const BN: i32, const BD: i32>(
        q: &Tensor<E, { [-1, -1, -1, -1] }>,
        k: &Tensor<E, { [-1, -1, -1, -1] }>,
        v: &Tensor<E, { [-1, -1, -1, -1] }>,
        sinks: &Tensor<E, { [-1] }>,
        o: &Tensor<E, { [-1, -1, -1, -1] }>,
        qk_scale: f32,
        start_q: i32,
        window: i32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let sq: i32 = get_shape_dim(q.shape(), 1i32);
        let heads: i32 = get_shape_dim(q.shape(), 2i32);
        let s_kv: i32 = get_shape_dim(k.shape(), 1i32);
        let kv_heads: i32 = get_shape_dim(k.shape(), 2i32);
        let bi: i32 = pid.1 / heads;
        let hi: i32 = pid.1 % heads;
        let kvh: i32 = hi / (heads / kv_heads);
        let row0: i32 = pid.0 * BM;
        // Positions of the tile's first and last existing query.
        let first: i32 = start_q + row0;
        let last: i32 = start_q + min(row0 + BM, sq) - 1i32;
        let lo: i32 = max(first - window + 1i32, 0i32);
        let hi_key: i32 = min(last + 1i32, s_kv);
        let j_lo: i32 = lo / BN;
        let j_hi: i32 = (hi_key + BN - 1i32) / BN;

        let q_p: Partition<E, { [1, BM, 1, BD] }> = q.partition(shape![1, BM, 1, BD]);
        let qt: Tile<E, { [1, BM, 1, BD] }> = q_p.load([bi, pid.0, hi, 0i32]);
        let qt: Tile<E, { [BM, BD] }> = qt.reshape(shape![BM, BD]);
        let k_p: Partition<E, { [1, BN, 1, BD] }> = k.partition(shape![1, BN, 1, BD]);
        let v_p: Partition<E, { [1, BN, 1, BD] }> = v.partition(shape![1, BN, 1, BD]);
        let s_p: Partition<E, { [1] }> = sinks.partition(shape![1]);
        let sink: Tile<E, { [1] }> = s_p.load([hi]);
        let sink: Tile<f32, { [1] }> = convert_tile(sink);
        let log2e: Tile<f32, { [BM, 1] }> = constant(1.4426950408889634f32, shape![BM, 1]);
        let sink2: Tile<f32, { [BM, 1] }> = sink.reshape(shape![1, 1]).broadcast(shape![BM, 1]) * log2e;

        let pos: Tile<i32, { [BM] }> = iota(shape![BM]);
        let pos: Tile<i32, { [BM, 1] }> = broadcast_scalar(first, shape![BM, 1]) + pos.reshape(shape![BM, 1]);
        let pos: Tile<i32, { [BM, BN] }> = pos.broadcast(shape![BM, BN]);
        let oldest: Tile<i32, { [BM, BN] }> = pos - broadcast_scalar(window - 1i32, shape![BM, BN]);
        let cols: Tile<i32, { [BN] }> = iota(shape![BN]);
        let cols: Tile<i32, { [BM, BN] }> = cols.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let keys_end: Tile<i32, { [BM, BN] }> = s_kv.broadcast(shape![BM, BN]);
        let neg_inf: Tile<f32, { [BM, BN] }> = constant(f32::NEG_INFINITY, shape![BM, BN]);
        let scale_m: Tile<f32, { [BM, 1] }> = broadcast_scalar(qk_scale, shape![BM, 1]);
        let scale_mn: Tile<f32, { [BM, BN] }> = broadcast_scalar(qk_scale, shape![BM, BN]);

        let mut m_i: Tile<f32, { [BM, 1] }> = sink2;
        let mut l_i: Tile<f32, { [BM, 1] }> = constant(0.0f32, shape![BM, 1]);
        let mut acc: Tile<f32, { [BM, BD] }> = constant(0.0f32, shape![BM, BD]);
        for j in j_lo..j_hi {
            let kt: Tile<E, { [1, BN, 1, BD] }> =
                load_view_tko(&k_p, [bi, j, kvh, 0i32], ordering::Weak, scope::TileBlock, Some(6i32), tma::Enabled);
            let kt: Tile<E, { [BN, BD] }> = kt.reshape(shape![BN, BD]);
            let ktt: Tile<E, { [BD, BN] }> = kt.transpose();
            let mut s: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
            s = mmaf(qt, ktt, s);
            // No mask where every key of the tile exists, precedes the tile's first query and
            // lies inside the last query's window.
            let k0: i32 = j * BN;
            let crosses: bool = k0 + BN > s_kv || k0 + BN - 1i32 > first || k0 < last - window + 1i32;
            if crosses {
                let key: Tile<i32, { [BM, BN] }> = broadcast_scalar(k0, shape![BM, BN]) + cols;
                let exists: Tile<bool, { [BM, BN] }> = lt_tile(key, keys_end);
                let causal: Tile<bool, { [BM, BN] }> = le_tile(key, pos);
                let recent: Tile<bool, { [BM, BN] }> = ge_tile(key, oldest);
                let keep: Tile<bool, { [BM, BN] }> = exists & causal & recent;
                s = select(keep, s, neg_inf);
            }
            let s_max: Tile<f32, { [BM] }> = reduce_max(s, 1i32);
            let s_max: Tile<f32, { [BM, 1] }> = s_max.reshape(shape![BM, 1]);
            let m_ij: Tile<f32, { [BM, 1] }> = max_tile(m_i, s_max * scale_m);
            let p: Tile<f32, { [BM, BN] }> = exp2(s * scale_mn - m_ij.broadcast(shape![BM, BN]), ftz::Enabled);
            let l_ij: Tile<f32, { [BM] }> = reduce_sum(p, 1i32);
            let alpha: Tile<f32, { [BM, 1] }> = exp2(m_i - m_ij, ftz::Enabled);
            l_i = l_i * alpha + l_ij.reshape(shape![BM, 1]);
            acc = acc * alpha.broadcast(shape![BM, BD]);
            let vt: Tile<E, { [1, BN, 1, BD] }> =
                load_view_tko(&v_p, [bi, j, kvh, 0i32], ordering::Weak, scope::TileBlock, Some(6i32), tma::Enabled);
            let vt: Tile<E, { [BN, BD] }> = vt.reshape(shape![BN, BD]);
            let pe: Tile<E, { [BM, BN] }> = convert_tile(p);
            acc = mmaf(pe, vt, acc);
            m_i = m_ij;
        }
        let z: Tile<f32, { [BM, 1] }> = l_i + exp2(sink2 - m_i, ftz::Enabled);
        let one: Tile<f32, { [BM, 1] }> = constant(1.0f32, shape![BM, 1]);
        let inv: Tile<f32, { [BM, 1] }> = one / z;
        let out: Tile<f32, { [BM, BD] }> = acc * inv.broadcast(shape![BM, BD]);
        let out: Tile<E, { [BM, BD] }> = convert_tile(out);
        let out: Tile<E, { [1, BM, 1, BD] }> = out.reshape(shape![1, BM, 1, BD]);
        let mut o_p: PartitionMut<E, { [1, BM, 1, BD] }> = unsafe { o.partition_full_mut(shape![1, BM, 1, BD]) };
        unsafe { store_view_tko_mut(&mut o_p, out, [bi, pid.0, hi, 0i32], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
    }
    /// gemma_attention, one `BM`-row tile of queries of one (batch, head) per tile block: grid
    /// `[ceil(S / BM), B * H, 1]`, tensors as fmha's (`[B, H, S, D]`, k and v `[B, HKV, S, D]`).
    /// Scores are soft-capped before the masks (approximate tanh): `s = cap tanh(q.k scale / cap)`, in base 2
    /// `cap2 tanh(q.k qk_scale)` with `cap2 = cap log2 e`, `qk_scale = scale / cap` (`CAP` = 1;
    /// `CAP` = 0: no cap, `s = q.k qk_scale` with `qk_scale = scale log2 e`). Query `i` sees keys
    /// `i - window <= j <= i + window` (`window` >= S when there is none: the exporter's), and
    /// `j <= i` with `CAUSAL`. Key tiles outside the tile's union of those ranges are never
    /// loaded; tiles crossing a bound are masked. A row whose keys so far are all masked keeps a
    /// running maximum of -inf: its exponentials are taken against 0 instead (they are all 0).
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn gemma_attention<E: ElementType, const BM: i32, const BN: i32, const BD: i32, const CAUSAL: i32, const CAP: i32>(
        q: &Tensor<E, { [-1, -1, -1, -1] }>,
        k: &Tensor<E, { [-1, -1, -1, -1] }>,
        v: &Tensor<E, { [-1, -1, -1, -1] }>,
        o: &Tensor<E, { [-1, -1, -1, -1] }>,
        qk_scale: f32,
        cap2: f32,
        window: i32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let heads: i32 = get_shape_dim(q.shape(), 1i32);
        let kv_heads: i32 = get_shape_dim(k.shape(), 1i32);
        let s_kv: i32 = get_shape_dim(k.shape(), 2i32);
        let bi: i32 = pid.1 / heads;
        let hi: i32 = pid.1 % heads;
        let kvh: i32 = hi / (heads / kv_heads);
        let row0: i32 = pid.0 * BM;
        let last: i32 = min(row0 + BM, s_kv) - 1i32;
        let lo: i32 = max(row0 - window, 0i32);
        let mut hi_key: i32 = min(last + window + 1i32, s_kv);
        if CAUSAL == 1i32 {
            hi_key = min(hi_key, last + 1i32);
        }
        let j_lo: i32 = lo / BN;
        let j_hi: i32 = (hi_key + BN - 1i32) / BN;

        let q_p: Partition<E, { [1, 1, BM, BD] }> = q.partition(shape![1, 1, BM, BD]);
        let qt: Tile<E, { [1, 1, BM, BD] }> = q_p.load([bi, hi, pid.0, 0i32]);
        let qt: Tile<E, { [BM, BD] }> = qt.reshape(shape![BM, BD]);
        let k_p: Partition<E, { [1, 1, BN, BD] }> = k.partition(shape![1, 1, BN, BD]);
        let v_p: Partition<E, { [1, 1, BN, BD] }> = v.partition(shape![1, 1, BN, BD]);

        // Query positions as a column and key offsets as a row: the masks broadcast them where
        // they are used, so no [BM, BN] index tile stays live across the loops.
        let rows: Tile<i32, { [BM] }> = iota(shape![BM]);
        let rows: Tile<i32, { [BM, 1] }> = broadcast_scalar(row0, shape![BM, 1]) + rows.reshape(shape![BM, 1]);
        let cols: Tile<i32, { [BN] }> = iota(shape![BN]);
        let cols: Tile<i32, { [1, BN] }> = cols.reshape(shape![1, BN]);
        let neg_inf: Tile<f32, { [BM, BN] }> = constant(f32::NEG_INFINITY, shape![BM, BN]);
        let neg_inf_m: Tile<f32, { [BM, 1] }> = constant(f32::NEG_INFINITY, shape![BM, 1]);
        let zero_m: Tile<f32, { [BM, 1] }> = constant(0.0f32, shape![BM, 1]);
        let scale_mn: Tile<f32, { [BM, BN] }> = broadcast_scalar(qk_scale, shape![BM, BN]);
        let cap_mn: Tile<f32, { [BM, BN] }> = broadcast_scalar(cap2, shape![BM, BN]);

        // Key tiles [a, b) need no mask: every key exists, lies inside every row's window and
        // (causal) precedes every query of the tile. They run first, in a loop with no branch;
        // the masked tiles, [j_lo, a) (the window's lower edge) and [b, j_hi) (the diagonal,
        // the window's upper edge, the end of the keys), run in a second loop, as the
        // reference's off-diagonal and diagonal loops (the order of an online softmax's tiles
        // does not change its result beyond rounding).
        let first_full: i32 = (max(last - window, 0i32) + BN - 1i32) / BN;
        let a: i32 = min(max(j_lo, first_full), j_hi);
        let mut newest_key: i32 = min(s_kv - 1i32, row0 + window);
        if CAUSAL == 1i32 {
            newest_key = min(newest_key, row0);
        }
        let b: i32 = min(max((newest_key + 1i32) / BN, a), j_hi);
        let n_head: i32 = a - j_lo;
        let n_masked: i32 = n_head + (j_hi - b);
        let gap: i32 = b - a;

        let mut m_i: Tile<f32, { [BM, 1] }> = constant(f32::NEG_INFINITY, shape![BM, 1]);
        let mut l_i: Tile<f32, { [BM, 1] }> = constant(0.0f32, shape![BM, 1]);
        let mut acc: Tile<f32, { [BM, BD] }> = constant(0.0f32, shape![BM, BD]);
        // Every score of these tiles is finite, so the running maximum is finite from the
        // first tile on and needs no guard.
        for j in a..b {
            let kt: Tile<E, { [1, 1, BN, BD] }> =
                load_view_tko(&k_p, [bi, kvh, j, 0i32], ordering::Weak, scope::TileBlock, Some(3i32), tma::Enabled);
            let kt: Tile<E, { [BN, BD] }> = kt.reshape(shape![BN, BD]);
            let ktt: Tile<E, { [BD, BN] }> = kt.transpose();
            let mut s: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
            s = mmaf(qt, ktt, s);
            s = s * scale_mn;
            if CAP == 1i32 {
                // tanh.approx (one MUFU op, ~2^-11 relative), as tilegym's kernel: the full
                // tanh is a long instruction sequence on every score.
                s = cap_mn * unsafe { tanh_with_rounding(s, rounding::Approx) };
            }
            let s_max: Tile<f32, { [BM] }> = reduce_max(s, 1i32);
            let m_ij: Tile<f32, { [BM, 1] }> = max_tile(m_i, s_max.reshape(shape![BM, 1]));
            let p: Tile<f32, { [BM, BN] }> = exp2(s - m_ij.broadcast(shape![BM, BN]), ftz::Enabled);
            let alpha: Tile<f32, { [BM, 1] }> = exp2(m_i - m_ij, ftz::Enabled);
            let l_ij: Tile<f32, { [BM] }> = reduce_sum(p, 1i32);
            l_i = l_i * alpha + l_ij.reshape(shape![BM, 1]);
            acc = acc * alpha.broadcast(shape![BM, BD]);
            let vt: Tile<E, { [1, 1, BN, BD] }> =
                load_view_tko(&v_p, [bi, kvh, j, 0i32], ordering::Weak, scope::TileBlock, Some(3i32), tma::Enabled);
            let vt: Tile<E, { [BN, BD] }> = vt.reshape(shape![BN, BD]);
            let pe: Tile<E, { [BM, BN] }> = convert_tile(p);
            acc = mmaf(pe, vt, acc);
            m_i = m_ij;
        }
        for t in 0i32..n_masked {
            // t < n_head: tile j_lo + t; then b, b + 1, ... (no branch: `after` is 0 or 1).
            let after: i32 = min(max(t - n_head + 1i32, 0i32), 1i32);
            let j: i32 = j_lo + t + gap * after;
            let kt: Tile<E, { [1, 1, BN, BD] }> =
                load_view_tko(&k_p, [bi, kvh, j, 0i32], ordering::Weak, scope::TileBlock, Some(3i32), tma::Enabled);
            let kt: Tile<E, { [BN, BD] }> = kt.reshape(shape![BN, BD]);
            let ktt: Tile<E, { [BD, BN] }> = kt.transpose();
            let mut s: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
            s = mmaf(qt, ktt, s);
            s = s * scale_mn;
            if CAP == 1i32 {
                // tanh.approx (one MUFU op, ~2^-11 relative), as tilegym's kernel: the full
                // tanh is a long instruction sequence on every score.
                s = cap_mn * unsafe { tanh_with_rounding(s, rounding::Approx) };
            }
            // row - key <= window, key - row <= window and (causal) key <= row: the tests
            // key >= row - window, key <= row + window, key <= row of the [BM, BN] form.
            let key: Tile<i32, { [1, BN] }> = broadcast_scalar(j * BN, shape![1, BN]) + cols;
            let key: Tile<i32, { [BM, BN] }> = key.broadcast(shape![BM, BN]);
            let row: Tile<i32, { [BM, BN] }> = rows.broadcast(shape![BM, BN]);
            let end_t: Tile<i32, { [BM, BN] }> = s_kv.broadcast(shape![BM, BN]);
            let w_t: Tile<i32, { [BM, BN] }> = window.broadcast(shape![BM, BN]);
            let exists: Tile<bool, { [BM, BN] }> = lt_tile(key, end_t);
            let recent: Tile<bool, { [BM, BN] }> = le_tile(row - key, w_t);
            let near: Tile<bool, { [BM, BN] }> = le_tile(key - row, w_t);
            let mut keep: Tile<bool, { [BM, BN] }> = exists & recent & near;
            if CAUSAL == 1i32 {
                let causal: Tile<bool, { [BM, BN] }> = le_tile(key, row);
                keep = keep & causal;
            }
            s = select(keep, s, neg_inf);
            let s_max: Tile<f32, { [BM] }> = reduce_max(s, 1i32);
            let m_ij: Tile<f32, { [BM, 1] }> = max_tile(m_i, s_max.reshape(shape![BM, 1]));
            let none: Tile<bool, { [BM, 1] }> = eq_tile(m_ij, neg_inf_m);
            let m_ref: Tile<f32, { [BM, 1] }> = select(none, zero_m, m_ij);
            let p: Tile<f32, { [BM, BN] }> = exp2(s - m_ref.broadcast(shape![BM, BN]), ftz::Enabled);
            let alpha: Tile<f32, { [BM, 1] }> = exp2(m_i - m_ref, ftz::Enabled);
            let l_ij: Tile<f32, { [BM] }> = reduce_sum(p, 1i32);
            l_i = l_i * alpha + l_ij.reshape(shape![BM, 1]);
            acc = acc * alpha.broadcast(shape![BM, BD]);
            let vt: Tile<E, { [1, 1, BN, BD] }> =
                load_view_tko(&v_p, [bi, kvh, j, 0i32], ordering::Weak, scope::TileBlock, Some(3i32), tma::Enabled);
            let vt: Tile<E, { [BN, BD] }> = vt.reshape(shape![BN, BD]);
            let pe: Tile<E, { [BM, BN] }> = convert_tile(p);
            acc = mmaf(pe, vt, acc);
            m_i = m_ij;
        }
        let one: Tile<f32, { [BM, 1] }> = constant(1.0f32, shape![BM, 1]);
        let inv: Tile<f32, { [BM, 1] }> = one / l_i;
        let out: Tile<f32, { [BM, BD] }> = acc * inv.broadcast(shape![BM, BD]);
        let out: Tile<E, { [BM, BD] }> = convert_tile(out);
        let out: Tile<E, { [1, 1, BM, BD] }> = out.reshape(shape![1, 1, BM, BD]);
        let mut o_p: PartitionMut<E, { [1, 1, BM, BD] }> = unsafe { o.partition_full_mut(shape![1, 1, BM, BD]) };
        unsafe { store_view_tko_mut(&mut o_p, out, [bi, hi, pid.0, 0i32], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
    }
}
