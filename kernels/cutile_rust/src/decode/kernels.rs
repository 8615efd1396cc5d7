// SPDX-License-Identifier: Apache-2.0
//! portbench's cuTile Rust decode attention: the split-KV pass of flash_decode (module
//! `portbench_decode`). The reduce over the splits is `crate::gemm`'s `splitk_reduce`, bound to
//! the same scratch buffers (docs/cutile-rust.md, "Decode attention").
//!
//! Facts the kernel relies on:
//! - One tile block per (batch, KV head, split): all `group` query heads that read that KV head
//!   are one `[G, D]` tile (`G = max(8, pow2(group))`, the rows past `group` read as zero and
//!   are never stored), so each key and value is loaded once per block.
//! - `D` is the head dimension rounded up to a power of two: the padded columns of q, k and v
//!   read as zero (zero-padded partition views), which leaves every dot product exact and the
//!   padded output columns zero; stores drop the lanes outside the scratch views.
//! - Keys `[lo, S)` are attended (`lo` > 0: gemma's sliding window). Split `s` owns keys
//!   `[base + s*len, min(base + (s+1)*len, S))`, `base` the start of the key tile holding `lo`,
//!   `len` a multiple of `BN`; the plan makes every split non-empty, so each block's first tile
//!   holds an attended key and its running maximum is finite after it. Keys below `lo` or at or
//!   past `S` (only in the first and the last tile) score `-inf`.
//! - Scores are kept in base 2: `qk_scale = sm_scale * log2(e)`, probabilities `2^(s - m)`, and
//!   the block writes its normalised partial output and `lse = m + log2(l)` (base 2), which is
//!   what `splitk_reduce` weighs by `2^(lse - max lse)`.

#[cutile::module]
pub mod portbench_decode {
    use cutile::core::*;

    /// Key tile `t` of the block's KV head, with latency hint `LAT` (0: none; a compile-time
    /// choice, folded away).
    fn load_kv<T: ElementType, const D: i32, const BN: i32, const LAT: i32>(
        p: &Partition<T, { [1, 1, BN, D] }>,
        pid: (i32, i32, i32),
        t: i32,
    ) -> Tile<T, { [1, 1, BN, D] }> {
        if LAT > 0i32 {
            let x: Tile<T, { [1, 1, BN, D] }> =
                load_view_tko(p, [pid.0, pid.1, t, 0i32], ordering::Weak, scope::TileBlock, Some(LAT), tma::Enabled);
            x
        } else {
            let x: Tile<T, { [1, 1, BN, D] }> = p.load([pid.0, pid.1, t, 0i32]);
            x
        }
    }

    /// One GQA decode block's normalised output `[1, 1, G, 1, D]` and base-2 LSE `[1, 1, G, 1]`
    /// over keys `[lo, S)` of its split (module docs); `sink2` is added to the softmax
    /// denominator as a base-2 logit per query head (`-inf`: none).
    /// `TILES` > 0: every split is `TILES` key tiles (`len = TILES * BN`), a loop of constant
    /// count (tilegym's `KV_LEN_PER_SPLIT` is a constant: a one-tile split is straight-line
    /// code); tiles past `S` are masked like the last one. 0: the count from `len` at run time.
    fn decode_tiles<T: ElementType, const G: i32, const D: i32, const BN: i32, const CAP: i32, const LAT: i32, const TILES: i32>(
        q_p: &Partition<T, { [1, 1, G, D] }>,
        k_p: &Partition<T, { [1, 1, BN, D] }>,
        v_p: &Partition<T, { [1, 1, BN, D] }>,
        pid: (i32, i32, i32),
        s_kv: i32,
        qk_scale: f32,
        cap: f32,
        lo: i32,
        len: i32,
        sink2: Tile<f32, { [1, G] }>,
    ) -> (Tile<T, { [1, 1, G, 1, D] }>, Tile<f32, { [1, 1, G, 1] }>) {
        // The splits cover [base, S) from the key tile that holds `lo`, the first key attended.
        let start: i32 = (lo / BN) * BN + pid.2 * len;
        let end: i32 = min(start + len, s_kv);
        let tiles: i32 = if TILES > 0i32 { TILES } else { (end - start + BN - 1i32) / BN };
        let first: i32 = start / BN;

        let qt: Tile<T, { [1, 1, G, D] }> = q_p.load([pid.0, pid.1, 0i32, 0i32]);
        let qt: Tile<T, { [G, D] }> = qt.reshape(shape![G, D]);
        let qt: Tile<T, { [D, G] }> = qt.transpose();

        let scale: Tile<f32, { [BN, G] }> = broadcast_scalar(qk_scale, shape![BN, G]);
        let offs: Tile<i32, { [BN] }> = iota(shape![BN]);
        let offs: Tile<i32, { [BN, G] }> = offs.reshape(shape![BN, 1]).broadcast(shape![BN, G]);
        let s_kv_t: Tile<i32, { [BN, G] }> = s_kv.broadcast(shape![BN, G]);
        let lo_t: Tile<i32, { [BN, G] }> = lo.broadcast(shape![BN, G]);
        let neg: Tile<f32, { [BN, G] }> = constant(f32::NEG_INFINITY, shape![BN, G]);
        let cap_t: Tile<f32, { [BN, G] }> = broadcast_scalar(cap, shape![BN, G]);
        let inv_cap_t: Tile<f32, { [BN, G] }> = constant(1.0f32, shape![BN, G]) / cap_t;
        let log2e: Tile<f32, { [BN, G] }> = constant(1.4426950408889634f32, shape![BN, G]);

        let mut m_i: Tile<f32, { [1, G] }> = constant(f32::NEG_INFINITY, shape![1, G]);
        // Per-key partial denominators, summed once after the loop (tilegym's `l_i [BN, G]`):
        // no cross-row reduction per tile.
        let mut l_i: Tile<f32, { [BN, G] }> = constant(0.0f32, shape![BN, G]);
        let mut acc: Tile<f32, { [D, G] }> = constant(0.0f32, shape![D, G]);
        for j in 0i32..tiles {
            let t: i32 = first + j;
            let kt: Tile<T, { [1, 1, BN, D] }> = load_kv::<T, D, BN, LAT>(k_p, pid, t);
            let kt: Tile<T, { [BN, D] }> = kt.reshape(shape![BN, D]);
            // Scores of the tile's keys for every query head of the group: [BN, G].
            let zero: Tile<f32, { [BN, G] }> = constant(0.0f32, shape![BN, G]);
            let mut s: Tile<f32, { [BN, G] }> = mmaf(kt, qt, zero);
            s = s * scale;
            if CAP == 1i32 {
                // cap * tanh(s / cap) on the natural-scale logits, then base 2.
                // Approximate tanh and a multiply by 1/cap, as tilegym's (approx truediv, tanh).
                s = cap_t * unsafe { tanh_with_rounding(s * inv_cap_t, rounding::Approx) } * log2e;
            }
            // Branchless, every tile (as tilegym): a branch in the loop body keeps tileiras from
            // pipelining the loads; the select is the identity on tiles inside [lo, S).
            let pos: Tile<i32, { [BN, G] }> = broadcast_scalar(t * BN, shape![BN, G]) + offs;
            let inside: Tile<bool, { [BN, G] }> = lt_tile(pos, s_kv_t) & ge_tile(pos, lo_t);
            s = select(inside, s, neg);
            let mx: Tile<f32, { [G] }> = reduce_max(s, 0i32);
            let mx: Tile<f32, { [1, G] }> = mx.reshape(shape![1, G]);
            let m_new: Tile<f32, { [1, G] }> = max_tile(m_i, mx);
            let p: Tile<f32, { [BN, G] }> = exp2(s - m_new.broadcast(shape![BN, G]), ftz::Disabled);
            let alpha: Tile<f32, { [1, G] }> = exp2(m_i - m_new, ftz::Disabled);
            l_i = l_i * alpha.broadcast(shape![BN, G]) + p;
            acc = acc * alpha.broadcast(shape![D, G]);
            let vt: Tile<T, { [1, 1, BN, D] }> = load_kv::<T, D, BN, LAT>(v_p, pid, t);
            let vt: Tile<T, { [BN, D] }> = vt.reshape(shape![BN, D]);
            let vt: Tile<T, { [D, BN] }> = vt.transpose();
            let pt: Tile<T, { [BN, G] }> = convert_tile(p);
            acc = mmaf(vt, pt, acc);
            m_i = m_new;
        }
        let l_sum: Tile<f32, { [G] }> = reduce_sum(l_i, 0i32);
        // The sink's share of the denominator (the running maximum is finite here).
        let l_i: Tile<f32, { [1, G] }> = l_sum.reshape(shape![1, G]) + exp2(sink2 - m_i, ftz::Disabled);

        // tilegym's normalisation: `divf` approximate, flush to zero (`true_div`). The
        // full-precision `/` was a slow-path check and call per element of acc.
        let out: Tile<f32, { [D, G] }> = true_div(acc, l_i.broadcast(shape![D, G]));
        let out: Tile<f32, { [G, D] }> = out.transpose();
        let out: Tile<T, { [G, D] }> = convert_tile(out);
        let out: Tile<T, { [1, 1, G, 1, D] }> = out.reshape(shape![1, 1, G, 1, D]);
        let l2: Tile<f32, { [1, G] }> = m_i + log2(l_i);
        let l2: Tile<f32, { [1, 1, G, 1] }> = l2.reshape(shape![1, 1, G, 1]);
        (out, l2)
    }

    /// Stores a block's partial output and LSE at split `pid.2` of the scratch views: through TMA
    /// (`PS` = 0) or with plain stores carrying latency hint 1 (`PS` = 1, tilegym's scatter
    /// stores when its group is narrower than the query tile; the block does not wait on a bulk
    /// store before it exits).
    unsafe fn store_split<T: ElementType, const G: i32, const D: i32, const PS: i32>(
        partial_o: &Tensor<T, { [-1, -1, -1, -1, -1] }>,
        lse: &Tensor<f32, { [-1, -1, -1, -1] }>,
        pid: (i32, i32, i32),
        out: Tile<T, { [1, 1, G, 1, D] }>,
        l2: Tile<f32, { [1, 1, G, 1] }>,
    ) {
        let mut o_p: PartitionMut<T, { [1, 1, G, 1, D] }> = unsafe { partial_o.partition_full_mut(shape![1, 1, G, 1, D]) };
        let mut l_p: PartitionMut<f32, { [1, 1, G, 1] }> = unsafe { lse.partition_full_mut(shape![1, 1, G, 1]) };
        if PS == 1i32 {
            unsafe {
                store_view_tko_mut(&mut o_p, out, [pid.0, pid.1, 0i32, pid.2, 0i32], ordering::Weak, scope::TileBlock, Some(1i32), tma::Disabled)
            };
            unsafe { store_view_tko_mut(&mut l_p, l2, [pid.0, pid.1, 0i32, pid.2], ordering::Weak, scope::TileBlock, Some(1i32), tma::Disabled) };
        } else {
            unsafe {
                store_view_tko_mut(&mut o_p, out, [pid.0, pid.1, 0i32, pid.2, 0i32], ordering::Weak, scope::TileBlock, None, tma::Enabled)
            };
            unsafe { store_view_tko_mut(&mut l_p, l2, [pid.0, pid.1, 0i32, pid.2], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
        }
    }

    /// flash_decode's split-KV pass. `q` is the `[B, Hkv, group, D]` view of q `[B, Hq, 1, D]`
    /// (query head `h` reads KV head `h / group`), `k` and `v` are `[B, Hkv, S, D]`;
    /// `partial_o` is the `[B, Hkv, group, splits, D]` view of the scratch buffer `[B, Hq,
    /// splits, D]` and `lse` the `[B, Hkv, group, splits]` view of `[B, Hq, splits]` (f32).
    /// Grid `(B, Hkv, splits)`. `CAP` = 1: gemma's soft cap, the logits are `cap * tanh(s *
    /// qk_scale / cap)` in base 2 (`qk_scale` then the natural-scale `sm_scale`).
    /// `LAT` > 0: the K/V loads carry that latency hint (tilegym's gemma decode: 3). `TILES`:
    /// key tiles per split as a constant (0: from `len`), see `decode_tiles`. `PS`: plain stores
    /// of the partials (see `store_split`).
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn decode_split<
        T: ElementType,
        const G: i32,
        const D: i32,
        const BN: i32,
        const CAP: i32,
        const LAT: i32,
        const TILES: i32,
        const PS: i32,
    >(
        q: &Tensor<T, { [-1, -1, -1, -1] }>,
        k: &Tensor<T, { [-1, -1, -1, -1] }>,
        v: &Tensor<T, { [-1, -1, -1, -1] }>,
        partial_o: &Tensor<T, { [-1, -1, -1, -1, -1] }>,
        lse: &Tensor<f32, { [-1, -1, -1, -1] }>,
        qk_scale: f32,
        cap: f32,
        lo: i32,
        len: i32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let s_kv: i32 = get_shape_dim(k.shape(), 2i32);
        let q_p: Partition<T, { [1, 1, G, D] }> = q.partition(shape![1, 1, G, D]);
        let k_p: Partition<T, { [1, 1, BN, D] }> = k.partition(shape![1, 1, BN, D]);
        let v_p: Partition<T, { [1, 1, BN, D] }> = v.partition(shape![1, 1, BN, D]);
        let no_sink: Tile<f32, { [1, G] }> = constant(f32::NEG_INFINITY, shape![1, G]);
        let (out, l2): (Tile<T, { [1, 1, G, 1, D] }>, Tile<f32, { [1, 1, G, 1] }>) =
            decode_tiles::<T, G, D, BN, CAP, LAT, TILES>(&q_p, &k_p, &v_p, pid, s_kv, qk_scale, cap, lo, len, no_sink);
        unsafe { store_split::<T, G, D, PS>(partial_o, lse, pid, out, l2) };
    }

    /// attention_sink_decode's split-KV pass: [`decode_split`] with GPT-OSS's sink logits,
    /// `sinks` the `[Hkv, group]` view of `sinks [H]` (natural units, like the scaled scores),
    /// folded into split 0's denominator: its partial output is normalised by `l + 2^(sink2 -
    /// m)` and its LSE weighs the sink in, so the reduce divides every split by the full
    /// denominator. `k` and `v` are `[B, Hkv, S', D]` views of `[B, S, Hkv, D]` that end at the
    /// last key attended (`S'`).
    /// `TILES`: key tiles per split as a constant (0: from `len`), see `decode_tiles`. `PS`: plain
    /// stores of the partials (see `store_split`).
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn decode_split_sink<T: ElementType, const G: i32, const D: i32, const BN: i32, const TILES: i32, const PS: i32>(
        q: &Tensor<T, { [-1, -1, -1, -1] }>,
        k: &Tensor<T, { [-1, -1, -1, -1] }>,
        v: &Tensor<T, { [-1, -1, -1, -1] }>,
        partial_o: &Tensor<T, { [-1, -1, -1, -1, -1] }>,
        lse: &Tensor<f32, { [-1, -1, -1, -1] }>,
        sinks: &Tensor<T, { [-1, -1] }>,
        qk_scale: f32,
        lo: i32,
        len: i32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let s_kv: i32 = get_shape_dim(k.shape(), 2i32);
        let q_p: Partition<T, { [1, 1, G, D] }> = q.partition(shape![1, 1, G, D]);
        let k_p: Partition<T, { [1, 1, BN, D] }> = k.partition(shape![1, 1, BN, D]);
        let v_p: Partition<T, { [1, 1, BN, D] }> = v.partition(shape![1, 1, BN, D]);
        let mut sink2: Tile<f32, { [1, G] }> = constant(f32::NEG_INFINITY, shape![1, G]);
        if pid.2 == 0i32 {
            let s_p: Partition<T, { [1, G] }> = sinks.partition(shape![1, G]);
            let st: Tile<T, { [1, G] }> = s_p.load([pid.1, 0i32]);
            let sf: Tile<f32, { [1, G] }> = convert_tile(st);
            let log2e: Tile<f32, { [1, G] }> = constant(1.4426950408889634f32, shape![1, G]);
            sink2 = sf * log2e;
        }
        let (out, l2): (Tile<T, { [1, 1, G, 1, D] }>, Tile<f32, { [1, 1, G, 1] }>) =
            decode_tiles::<T, G, D, BN, 0, 0, TILES>(&q_p, &k_p, &v_p, pid, s_kv, qk_scale, 0.0f32, lo, len, sink2);
        unsafe { store_split::<T, G, D, PS>(partial_o, lse, pid, out, l2) };
    }

    /// MLA decode (weight-absorbed), one split of the keys: `kv [B, S, D]` is both keys and
    /// values, `kpe [B, S, DPE]` the keys' position part; scores are `q.kv + qpe.kpe`. `q [B, H,
    /// D]`, `qpe [B, H, DPE]`; block `(head block, b, split)` takes `TH` heads (rows past H read
    /// as zero and are never stored) and keys `[split*len, min((split+1)*len, S))`. It writes its
    /// normalised output to `o [B, H, splits, D]` and `lse = m + log2(l)` to `lse [B, H,
    /// splits]`: with one split these are the operator's `o` (seen as `[B, H, 1, D]`) and `lse`
    /// (`[B, H, 1]`), with several the scratch buffers `splitk_reduce` reads. kv is loaded
    /// per tile as the keys and, `RV` = 1, again (an L2 hit) as the values, as tilegym does
    /// (`RV` = 0: the key tile serves as the values). Loads carry latency hint 2 (tilegym's).
    /// `TILES` > 0: `len = TILES * BN` keys a split as a constant loop count, as
    /// `decode_tiles`; 0: the count from `len` at run time.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn mla_split<T: ElementType, const TH: i32, const D: i32, const DPE: i32, const BN: i32, const RV: i32, const TILES: i32>(
        q: &Tensor<T, { [-1, -1, -1] }>,
        qpe: &Tensor<T, { [-1, -1, -1] }>,
        kv: &Tensor<T, { [-1, -1, -1] }>,
        kpe: &Tensor<T, { [-1, -1, -1] }>,
        o: &Tensor<T, { [-1, -1, -1, -1] }>,
        lse: &Tensor<f32, { [-1, -1, -1] }>,
        qk_scale: f32,
        len: i32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let s_kv: i32 = get_shape_dim(kv.shape(), 1i32);
        let start: i32 = pid.2 * len;
        let end: i32 = min(start + len, s_kv);
        let tiles: i32 = if TILES > 0i32 { TILES } else { (end - start + BN - 1i32) / BN };
        let first: i32 = start / BN;

        let q_p: Partition<T, { [1, TH, D] }> = q.partition(shape![1, TH, D]);
        let qt: Tile<T, { [1, TH, D] }> = q_p.load([pid.1, pid.0, 0i32]);
        let qt: Tile<T, { [TH, D] }> = qt.reshape(shape![TH, D]);
        let qt: Tile<T, { [D, TH] }> = qt.transpose();
        let qpe_p: Partition<T, { [1, TH, DPE] }> = qpe.partition(shape![1, TH, DPE]);
        let qpet: Tile<T, { [1, TH, DPE] }> = qpe_p.load([pid.1, pid.0, 0i32]);
        let qpet: Tile<T, { [TH, DPE] }> = qpet.reshape(shape![TH, DPE]);
        let qpet: Tile<T, { [DPE, TH] }> = qpet.transpose();
        let kv_p: Partition<T, { [1, BN, D] }> = kv.partition(shape![1, BN, D]);
        let kpe_p: Partition<T, { [1, BN, DPE] }> = kpe.partition(shape![1, BN, DPE]);
        let v_p: Partition<T, { [1, BN, D] }> = kv.partition(shape![1, BN, D]);

        let scale: Tile<f32, { [BN, TH] }> = broadcast_scalar(qk_scale, shape![BN, TH]);
        let offs: Tile<i32, { [BN] }> = iota(shape![BN]);
        let offs: Tile<i32, { [BN, TH] }> = offs.reshape(shape![BN, 1]).broadcast(shape![BN, TH]);
        let s_kv_t: Tile<i32, { [BN, TH] }> = s_kv.broadcast(shape![BN, TH]);
        let neg: Tile<f32, { [BN, TH] }> = constant(f32::NEG_INFINITY, shape![BN, TH]);

        let mut m_i: Tile<f32, { [1, TH] }> = constant(f32::NEG_INFINITY, shape![1, TH]);
        // Per-key partial denominators, summed once after the loop (tilegym's `l_prev [BN, TH]`).
        let mut l_i: Tile<f32, { [BN, TH] }> = constant(0.0f32, shape![BN, TH]);
        let mut acc: Tile<f32, { [D, TH] }> = constant(0.0f32, shape![D, TH]);
        for j in 0i32..tiles {
            let t: i32 = first + j;
            let kvt: Tile<T, { [1, BN, D] }> =
                load_view_tko(&kv_p, [pid.1, t, 0i32], ordering::Weak, scope::TileBlock, Some(2i32), tma::Enabled);
            let kvt: Tile<T, { [BN, D] }> = kvt.reshape(shape![BN, D]);
            let kpet: Tile<T, { [1, BN, DPE] }> =
                load_view_tko(&kpe_p, [pid.1, t, 0i32], ordering::Weak, scope::TileBlock, Some(2i32), tma::Enabled);
            let kpet: Tile<T, { [BN, DPE] }> = kpet.reshape(shape![BN, DPE]);
            let zero: Tile<f32, { [BN, TH] }> = constant(0.0f32, shape![BN, TH]);
            let s0: Tile<f32, { [BN, TH] }> = mmaf(kvt, qt, zero);
            let mut s: Tile<f32, { [BN, TH] }> = mmaf(kpet, qpet, s0);
            s = s * scale;
            // Branchless on every tile: no branch in the loop body (tileiras pipelines the loads of
            // a straight-line body); the select is the identity below the last tile.
            let pos: Tile<i32, { [BN, TH] }> = broadcast_scalar(t * BN, shape![BN, TH]) + offs;
            let inside: Tile<bool, { [BN, TH] }> = lt_tile(pos, s_kv_t);
            s = select(inside, s, neg);
            let mx: Tile<f32, { [TH] }> = reduce_max(s, 0i32);
            let mx: Tile<f32, { [1, TH] }> = mx.reshape(shape![1, TH]);
            let m_new: Tile<f32, { [1, TH] }> = max_tile(m_i, mx);
            let p: Tile<f32, { [BN, TH] }> = exp2(s - m_new.broadcast(shape![BN, TH]), ftz::Disabled);
            let alpha: Tile<f32, { [1, TH] }> = exp2(m_i - m_new, ftz::Disabled);
            l_i = l_i * alpha.broadcast(shape![BN, TH]) + p;
            acc = acc * alpha.broadcast(shape![D, TH]);
            // RV = 1: the values are kv loaded again (an L2 hit, as tilegym's separate V load),
            // so the key tile's layout need not also serve the transposed product; else the key
            // tile itself.
            let mut vs: Tile<T, { [BN, D] }> = kvt;
            if RV == 1i32 {
                let vl: Tile<T, { [1, BN, D] }> =
                    load_view_tko(&v_p, [pid.1, t, 0i32], ordering::Weak, scope::TileBlock, Some(2i32), tma::Enabled);
                vs = vl.reshape(shape![BN, D]);
            }
            let vt: Tile<T, { [D, BN] }> = vs.transpose();
            let pt: Tile<T, { [BN, TH] }> = convert_tile(p);
            acc = mmaf(vt, pt, acc);
            m_i = m_new;
        }

        let l_sum: Tile<f32, { [TH] }> = reduce_sum(l_i, 0i32);
        let l_i: Tile<f32, { [1, TH] }> = l_sum.reshape(shape![1, TH]);
        // Approximate, as decode_tiles and tilegym: the full-precision `/` was 64 slow-path
        // checks and calls a thread at D 512, most of the epilogue's instructions.
        let out: Tile<f32, { [D, TH] }> = true_div(acc, l_i.broadcast(shape![D, TH]));
        let out: Tile<f32, { [TH, D] }> = out.transpose();
        let out: Tile<T, { [TH, D] }> = convert_tile(out);
        let out: Tile<T, { [1, TH, 1, D] }> = out.reshape(shape![1, TH, 1, D]);
        let mut o_p: PartitionMut<T, { [1, TH, 1, D] }> = unsafe { o.partition_full_mut(shape![1, TH, 1, D]) };
        unsafe {
            store_view_tko_mut(&mut o_p, out, [pid.1, pid.0, pid.2, 0i32], ordering::Weak, scope::TileBlock, None, tma::Enabled)
        };
        let l2: Tile<f32, { [1, TH] }> = m_i + log2(l_i);
        let l2: Tile<f32, { [1, TH, 1] }> = l2.reshape(shape![1, TH, 1]);
        let mut l_p: PartitionMut<f32, { [1, TH, 1] }> = unsafe { lse.partition_full_mut(shape![1, TH, 1]) };
        unsafe {
            store_view_tko_mut(&mut l_p, l2, [pid.1, pid.0, pid.2], ordering::Weak, scope::TileBlock, None, tma::Enabled)
        };
    }
}
