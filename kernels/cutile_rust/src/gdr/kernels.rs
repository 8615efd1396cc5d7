// SPDX-License-Identifier: Apache-2.0
//! portbench's cuTile Rust gated-delta-rule kernel (issue 17).
//!
//! The recurrence of reference/src/ops/gated_delta_rule.cpp, per (batch, head), state
//! `S [K, V]` in f32, for t = 0..T:
//!   q, k <- l2-normalised (`use_l2`), q <- q / sqrt(K);
//!   S <- S exp(g_t);  delta = (v_t - S^T k_t) beta_t;  S <- S + k_t delta^T;  o_t = S^T q_t.
//! Column c of S depends only on column c of v (and on k, g, beta, shared by all columns),
//! so a tile block owns `BV` columns of one head's state: grid `[B * H, ceil(V / BV), 1]`,
//! the whole recurrence in registers, every step in f32. q, k load as `[BK, 1]` columns and v
//! as a `[1, BV]` row through zero-padded partitions: head columns past `K` are zero, so the
//! padded rows of S stay zero and never reach o; columns past `V` are dropped by the stores.
//! `g` and `beta` are one-element partition loads per step.

#[cutile::module]
pub mod portbench_gdr {
    use cutile::core::*;

    /// The gated delta rule, `BV` state columns of one (batch, head) per tile block. `E` the
    /// element type of q, k, v, beta and o; `G` that of g; `BK` = K rounded up to a power of
    /// two. `INIT` = 1: the state starts from `initial_state [B, H, K, V]` (f32), else 0;
    /// `FINAL` = 1: the last state is stored to `final_state [B, H, K, V]`; `L2` = 1: q and k are
    /// l2-normalised with `rsqrt(|x|^2 + 1e-6)`. Absent optional tensors are bound to null
    /// pointers and never touched (their `if` is resolved at specialisation).
    /// `FUSE` > 0: both of a step's reductions read the decayed state `S'`, by
    /// `o_t = S'^T q_t + delta (k_t . q_t)` (the same value as `S^T q_t` after the update), so they
    /// no longer wait on each other: 1 reduces them separately, 2 as one `[2, BK, BV]` tile (one
    /// cross-thread round per step where the plain form takes two in sequence), 3 as 1 with the
    /// decay applied to the reduced rows and folded into the update (`S exp(g) + k delta^T` as
    /// one fma per element, where the other forms scale the whole state first), 4 as 3 with
    /// `k_t . q_t` (times `q_scale` and the l2 factors) read from `qk_dot [B, T, H]` (f32, written by
    /// [`gdr_qk_dot`] before this kernel) instead of reduced at the step: the step's one
    /// reduction that does not read the state, and three of its nine cross-warp barrier rounds.
    /// `qk_dot` is a null pointer for the other forms and never touched. 5 as 3 with the decay
    /// deferred: the block holds `S~` with `S = c S~`, `c` the product of the decays since the
    /// last renormalisation, so the update is `S~ <- S~ + k (delta / c)^T`, one fma per element
    /// and no product with the decay; the reduced rows are scaled by `c`. When `c` falls below
    /// 2^-20 (after 44 steps of the suite's fastest decay, 0.73) the state takes it after the
    /// update (`S~ <- c S~`, `c <- 1`) in a loop of zero or one trips; a decay below 2^-60 counts
    /// as 2^-60 (the older state then keeps a weight of 2^-60 where it should have less: an absolute
    /// difference below 1e-18 of its size).
    /// `PF` > 0: the inputs of step `t + PF` (q, k, v, g, beta: none depends on the state) are
    /// loaded while step `t` computes and carried from step to step, so a step no longer starts
    /// with a memory round trip; 0 loads them at the step. `PT` = 1: those loads go through TMA
    /// (as the step's own loads), 0: plain loads into registers (`ld1`/`ld3`).
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn gated_delta_rule<
        E: ElementType,
        G: ElementType,
        const BK: i32,
        const BV: i32,
        const INIT: i32,
        const FINAL: i32,
        const L2: i32,
        const FUSE: i32,
        const PF: i32,
        const PT: i32,
    >(
        q: &Tensor<E, { [-1, -1, -1, -1] }>,
        k: &Tensor<E, { [-1, -1, -1, -1] }>,
        v: &Tensor<E, { [-1, -1, -1, -1] }>,
        g: &Tensor<G, { [-1, -1, -1] }>,
        beta: &Tensor<E, { [-1, -1, -1] }>,
        o: &Tensor<E, { [-1, -1, -1, -1] }>,
        initial_state: &Tensor<f32, { [-1, -1, -1, -1] }>,
        final_state: &Tensor<f32, { [-1, -1, -1, -1] }>,
        qk_dot: &Tensor<f32, { [-1, -1, -1] }>,
        q_scale: f32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let steps: i32 = get_shape_dim(q.shape(), 1i32);
        let heads: i32 = get_shape_dim(q.shape(), 2i32);
        let bi: i32 = pid.0 / heads;
        let hi: i32 = pid.0 % heads;
        let vi: i32 = pid.1;

        let mut s: Tile<f32, { [BK, BV] }> = constant(0.0f32, shape![BK, BV]);
        if INIT == 1i32 {
            let init_p: Partition<f32, { [1, 1, BK, BV] }> = initial_state.partition(shape![1, 1, BK, BV]);
            let st: Tile<f32, { [1, 1, BK, BV] }> = init_p.load([bi, hi, 0i32, vi]);
            s = st.reshape(shape![BK, BV]);
        }
        // FUSE 5: the deferred decay `c` (S = c S~) and the level that renormalises it.
        let mut cs: Tile<f32, { [1, 1] }> = constant(1.0f32, shape![1, 1]);
        let floor: Tile<f32, { [1, 1] }> = constant(9.536743e-7f32, shape![1, 1]);
        let tiny: Tile<f32, { [1, 1] }> = constant(8.6736174e-19f32, shape![1, 1]);
        let one_i: Tile<i32, { [1, 1] }> = constant(1i32, shape![1, 1]);
        let zero_i: Tile<i32, { [1, 1] }> = constant(0i32, shape![1, 1]);
        let one_f: Tile<f32, { [1, 1] }> = constant(1.0f32, shape![1, 1]);

        let q_p: Partition<E, { [1, 1, 1, BK] }> = q.partition(shape![1, 1, 1, BK]);
        let k_p: Partition<E, { [1, 1, 1, BK] }> = k.partition(shape![1, 1, 1, BK]);
        let v_p: Partition<E, { [1, 1, 1, BV] }> = v.partition(shape![1, 1, 1, BV]);
        let g_p: Partition<G, { [1, 1, 1] }> = g.partition(shape![1, 1, 1]);
        let b_p: Partition<E, { [1, 1, 1] }> = beta.partition(shape![1, 1, 1]);
        let mut o_p: PartitionMut<E, { [1, 1, 1, BV] }> = unsafe { o.partition_full_mut(shape![1, 1, 1, BV]) };
        let scale: Tile<f32, { [BK, 1] }> = broadcast_scalar(q_scale, shape![BK, 1]);
        let eps: Tile<f32, { [1, 1] }> = constant(1e-6f32, shape![1, 1]);

        // The prefetched inputs: `n*` for step t + 1 (PF 1) or t + 1 and `m*` for t + 2 (PF 2);
        // loads past the last step repeat it (their values are never used).
        let last: i32 = steps - 1i32;
        let mut nq: Tile<E, { [1, 1, 1, BK] }> = ld3::<E, BK, PT>(&q_p, bi, 0i32, hi, 0i32);
        let mut nk: Tile<E, { [1, 1, 1, BK] }> = ld3::<E, BK, PT>(&k_p, bi, 0i32, hi, 0i32);
        let mut nv: Tile<E, { [1, 1, 1, BV] }> = ld3::<E, BV, PT>(&v_p, bi, 0i32, hi, vi);
        let mut ng: Tile<G, { [1, 1, 1] }> = ld1::<G, PT>(&g_p, bi, 0i32, hi);
        let mut nb: Tile<E, { [1, 1, 1] }> = ld1::<E, PT>(&b_p, bi, 0i32, hi);
        let t1: i32 = min(1i32, last);
        let mut mq: Tile<E, { [1, 1, 1, BK] }> = ld3::<E, BK, PT>(&q_p, bi, t1, hi, 0i32);
        let mut mk: Tile<E, { [1, 1, 1, BK] }> = ld3::<E, BK, PT>(&k_p, bi, t1, hi, 0i32);
        let mut mv: Tile<E, { [1, 1, 1, BV] }> = ld3::<E, BV, PT>(&v_p, bi, t1, hi, vi);
        let mut mg: Tile<G, { [1, 1, 1] }> = ld1::<G, PT>(&g_p, bi, t1, hi);
        let mut mb: Tile<E, { [1, 1, 1] }> = ld1::<E, PT>(&b_p, bi, t1, hi);
        let mut nd: Tile<f32, { [1, 1, 1] }> = ld_dot::<FUSE, PT>(qk_dot, bi, 0i32, hi);
        let mut md: Tile<f32, { [1, 1, 1] }> = ld_dot::<FUSE, PT>(qk_dot, bi, t1, hi);

        for t in 0i32..steps {
            let qt: Tile<E, { [1, 1, 1, BK] }> = if PF > 0i32 { nq } else { q_p.load([bi, t, hi, 0i32]) };
            let kt: Tile<E, { [1, 1, 1, BK] }> = if PF > 0i32 { nk } else { k_p.load([bi, t, hi, 0i32]) };
            let vt: Tile<E, { [1, 1, 1, BV] }> = if PF > 0i32 { nv } else { v_p.load([bi, t, hi, vi]) };
            let gt: Tile<G, { [1, 1, 1] }> = if PF > 0i32 { ng } else { g_p.load([bi, t, hi]) };
            let bt: Tile<E, { [1, 1, 1] }> = if PF > 0i32 { nb } else { b_p.load([bi, t, hi]) };
            let dt: Tile<f32, { [1, 1, 1] }> = if PF > 0i32 { nd } else { ld_dot::<FUSE, 1>(qk_dot, bi, t, hi) };
            if PF == 1i32 {
                let tn: i32 = min(t + 1i32, last);
                nq = ld3::<E, BK, PT>(&q_p, bi, tn, hi, 0i32);
                nk = ld3::<E, BK, PT>(&k_p, bi, tn, hi, 0i32);
                nv = ld3::<E, BV, PT>(&v_p, bi, tn, hi, vi);
                ng = ld1::<G, PT>(&g_p, bi, tn, hi);
                nb = ld1::<E, PT>(&b_p, bi, tn, hi);
                nd = ld_dot::<FUSE, PT>(qk_dot, bi, tn, hi);
            }
            if PF == 2i32 {
                let tn: i32 = min(t + 2i32, last);
                nq = mq;
                nk = mk;
                nv = mv;
                ng = mg;
                nb = mb;
                nd = md;
                mq = ld3::<E, BK, PT>(&q_p, bi, tn, hi, 0i32);
                mk = ld3::<E, BK, PT>(&k_p, bi, tn, hi, 0i32);
                mv = ld3::<E, BV, PT>(&v_p, bi, tn, hi, vi);
                mg = ld1::<G, PT>(&g_p, bi, tn, hi);
                mb = ld1::<E, PT>(&b_p, bi, tn, hi);
                md = ld_dot::<FUSE, PT>(qk_dot, bi, tn, hi);
            }
            let mut qf: Tile<f32, { [BK, 1] }> = convert_tile(qt.reshape(shape![BK, 1]));
            let mut kf: Tile<f32, { [BK, 1] }> = convert_tile(kt.reshape(shape![BK, 1]));
            if L2 == 1i32 {
                let qq: Tile<f32, { [1] }> = reduce_sum(qf * qf, 0i32);
                let qn: Tile<f32, { [1, 1] }> = rsqrt(qq.reshape(shape![1, 1]) + eps, ftz::Disabled);
                qf = qf * qn.broadcast(shape![BK, 1]);
                let kk: Tile<f32, { [1] }> = reduce_sum(kf * kf, 0i32);
                let kn: Tile<f32, { [1, 1] }> = rsqrt(kk.reshape(shape![1, 1]) + eps, ftz::Disabled);
                kf = kf * kn.broadcast(shape![BK, 1]);
            }
            qf = qf * scale;
            let vf: Tile<f32, { [1, BV] }> = convert_tile(vt.reshape(shape![1, BV]));
            let gf: Tile<f32, { [1, 1] }> = convert_tile(gt.reshape(shape![1, 1]));
            let bf: Tile<f32, { [1, 1] }> = convert_tile(bt.reshape(shape![1, 1]));

            let decay: Tile<f32, { [1, 1] }> = exp(gf);
            if FUSE < 3i32 {
                s = s * decay.broadcast(shape![BK, BV]);
            }
            let kb: Tile<f32, { [BK, BV] }> = kf.broadcast(shape![BK, BV]);
            let bb: Tile<f32, { [1, BV] }> = bf.broadcast(shape![1, BV]);
            let of: Tile<f32, { [1, BV] }> = if FUSE == 0i32 {
                let kv: Tile<f32, { [BV] }> = reduce_sum(s * kb, 0i32);
                let delta: Tile<f32, { [1, BV] }> = (vf - kv.reshape(shape![1, BV])) * bb;
                s = s + kb * delta.broadcast(shape![BK, BV]);
                let ov: Tile<f32, { [BV] }> = reduce_sum(s * qf.broadcast(shape![BK, BV]), 0i32);
                ov.reshape(shape![1, BV])
            } else if FUSE == 5i32 {
                let qb: Tile<f32, { [BK, BV] }> = qf.broadcast(shape![BK, BV]);
                let kq1: Tile<f32, { [1] }> = reduce_sum(kf * qf, 0i32);
                let kq: Tile<f32, { [1, BV] }> = kq1.reshape(shape![1, 1]).broadcast(shape![1, BV]);
                // c >= 2^-20 here, so with the decay held >= 2^-60 c stays a normal f32 and
                // 1 / c <= 2^80 (an older state's weight below 2^-60 is taken as 2^-60).
                cs = cs * max_tile(decay, tiny);
                let c: Tile<f32, { [1, BV] }> = cs.broadcast(shape![1, BV]);
                let kv: Tile<f32, { [BV] }> = reduce_sum(s * kb, 0i32);
                let sq: Tile<f32, { [BV] }> = reduce_sum(s * qb, 0i32);
                let kv: Tile<f32, { [1, BV] }> = kv.reshape(shape![1, BV]) * c;
                let sq: Tile<f32, { [1, BV] }> = sq.reshape(shape![1, BV]) * c;
                let delta: Tile<f32, { [1, BV] }> = (vf - kv) * bb;
                // One reciprocal a step, not a division per column.
                let rc: Tile<f32, { [1, 1] }> = one_f / cs;
                let du: Tile<f32, { [1, BV] }> = delta * rc.broadcast(shape![1, BV]);
                s = fma(kb, du.broadcast(shape![BK, BV]), s, rounding::NearestEven, ftz::Disabled);
                // After the update, off the next step's path to its reductions: S~ takes c when
                // c fell below 2^-20.
                let low: Tile<i32, { [1, 1] }> = select(lt_tile(cs, floor), one_i, zero_i);
                let renorm: i32 = tile_to_scalar(low.reshape(shape![]));
                for _r in 0i32..renorm {
                    s = s * cs.broadcast(shape![BK, BV]);
                    cs = one_f;
                }
                sq + delta * kq
            } else if FUSE == 4i32 {
                // FUSE 3's step with k . q read (`dt`), the two state reductions used as they come.
                let qb: Tile<f32, { [BK, BV] }> = qf.broadcast(shape![BK, BV]);
                let kq: Tile<f32, { [1, BV] }> = dt.reshape(shape![1, 1]).broadcast(shape![1, BV]);
                let d: Tile<f32, { [1, BV] }> = decay.broadcast(shape![1, BV]);
                let kv: Tile<f32, { [BV] }> = reduce_sum(s * kb, 0i32);
                let sq: Tile<f32, { [BV] }> = reduce_sum(s * qb, 0i32);
                let kv: Tile<f32, { [1, BV] }> = kv.reshape(shape![1, BV]) * d;
                let sq: Tile<f32, { [1, BV] }> = sq.reshape(shape![1, BV]) * d;
                let delta: Tile<f32, { [1, BV] }> = (vf - kv) * bb;
                let step: Tile<f32, { [BK, BV] }> = kb * delta.broadcast(shape![BK, BV]);
                s = fma(s, decay.broadcast(shape![BK, BV]), step, rounding::NearestEven, ftz::Disabled);
                sq + delta * kq
            } else {
                let qb: Tile<f32, { [BK, BV] }> = qf.broadcast(shape![BK, BV]);
                // k . q does not depend on the state.
                let kq: Tile<f32, { [1] }> = reduce_sum(kf * qf, 0i32);
                let kq: Tile<f32, { [1, BV] }> = kq.reshape(shape![1, 1]).broadcast(shape![1, BV]);
                let i0: Tile<i32, { [] }> = scalar_to_tile(0i32);
                let i1: Tile<i32, { [] }> = scalar_to_tile(1i32);
                let red: Tile<f32, { [2, BV] }> = if FUSE == 2i32 {
                    let a: Tile<f32, { [1, BK, BV] }> = (s * kb).reshape(shape![1, BK, BV]);
                    let b: Tile<f32, { [1, BK, BV] }> = (s * qb).reshape(shape![1, BK, BV]);
                    let both: Tile<f32, { [2, BK, BV] }> = cat(a, b, 0i32);
                    let r: Tile<f32, { [2, BV] }> = reduce_sum(both, 1i32);
                    r
                } else {
                    let a: Tile<f32, { [BV] }> = reduce_sum(s * kb, 0i32);
                    let b: Tile<f32, { [BV] }> = reduce_sum(s * qb, 0i32);
                    let r: Tile<f32, { [2, BV] }> = cat(a.reshape(shape![1, BV]), b.reshape(shape![1, BV]), 0i32);
                    r
                };
                let kv: Tile<f32, { [1, BV] }> = extract(red, [i0, i0]);
                let sq: Tile<f32, { [1, BV] }> = extract(red, [i1, i0]);
                if FUSE == 3i32 {
                    // The decay applied to the two reduced rows instead of the whole state, and
                    // folded into the update: S' = S exp(g) + k delta^T as one fma per element.
                    let d: Tile<f32, { [1, BV] }> = decay.broadcast(shape![1, BV]);
                    let kv: Tile<f32, { [1, BV] }> = kv * d;
                    let sq: Tile<f32, { [1, BV] }> = sq * d;
                    let delta: Tile<f32, { [1, BV] }> = (vf - kv) * bb;
                    let step: Tile<f32, { [BK, BV] }> = kb * delta.broadcast(shape![BK, BV]);
                    s = fma(s, decay.broadcast(shape![BK, BV]), step, rounding::NearestEven, ftz::Disabled);
                    sq + delta * kq
                } else {
                    let delta: Tile<f32, { [1, BV] }> = (vf - kv) * bb;
                    s = s + kb * delta.broadcast(shape![BK, BV]);
                    sq + delta * kq
                }
            };
            let ot: Tile<E, { [1, BV] }> = convert_tile(of);
            let ot: Tile<E, { [1, 1, 1, BV] }> = ot.reshape(shape![1, 1, 1, BV]);
            unsafe { store_view_tko_mut(&mut o_p, ot, [bi, t, hi, vi], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
        }

        if FINAL == 1i32 {
            let mut final_p: PartitionMut<f32, { [1, 1, BK, BV] }> = unsafe { final_state.partition_full_mut(shape![1, 1, BK, BV]) };
            // FUSE 5 holds S~ (S = c S~); the others' c stays 1.
            let sf: Tile<f32, { [BK, BV] }> = if FUSE == 5i32 { s * cs.broadcast(shape![BK, BV]) } else { s };
            let st: Tile<f32, { [1, 1, BK, BV] }> = sf.reshape(shape![1, 1, BK, BV]);
            unsafe { store_view_tko_mut(&mut final_p, st, [bi, hi, 0i32, vi], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
        }
    }

    /// [`gated_delta_rule`] two tokens a step (same parameters, grid and flags). With `a_i =
    /// exp(g_i)`, the four reductions `r = S^T [k1 k2 q1 q2]` all read the pair's starting state
    /// `S`, so none waits on another:
    ///   `d1 = beta1 (v1 - a1 S^T k1)`, `o1 = a1 S^T q1 + d1 (k1.q1)`,
    ///   `d2 = beta2 (v2 - a2 (a1 S^T k2 + d1 (k1.k2)))`,
    ///   `o2 = a1 a2 S^T q2 + a2 d1 (k1.q2) + d2 (k2.q2)`,
    ///   `S <- a1 a2 S + k1 (a2 d1)^T + k2 d2^T` (one product and two fmas per element).
    /// q and k enter the state products unscaled: the l2 factors and `q_scale` multiply the
    /// reduced `[1, BV]` rows and the dot products instead of every thread's copy of the
    /// `[BK, 1]` columns; the dot products take q and k loaded again as `[1, BK]` rows. Loads
    /// are zero-padded, so the second token of an odd T's last pair is the identity step
    /// (`exp(0) = 1`, `beta = 0`: `d2 = 0`) and its output row falls outside `o` (dropped).
    /// `PF` = 1: the next pair's inputs are loaded while this pair computes. Slower than
    /// [`gated_delta_rule`] on the H200 with fewer instructions per token (docs/cutile-rust.md).
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn gated_delta_rule_pair<
        E: ElementType,
        G: ElementType,
        const BK: i32,
        const BV: i32,
        const INIT: i32,
        const FINAL: i32,
        const L2: i32,
        const PF: i32,
    >(
        q: &Tensor<E, { [-1, -1, -1, -1] }>,
        k: &Tensor<E, { [-1, -1, -1, -1] }>,
        v: &Tensor<E, { [-1, -1, -1, -1] }>,
        g: &Tensor<G, { [-1, -1, -1] }>,
        beta: &Tensor<E, { [-1, -1, -1] }>,
        o: &Tensor<E, { [-1, -1, -1, -1] }>,
        initial_state: &Tensor<f32, { [-1, -1, -1, -1] }>,
        final_state: &Tensor<f32, { [-1, -1, -1, -1] }>,
        #[allow(unused_variables)] qk_dot: &Tensor<f32, { [-1, -1, -1] }>,
        q_scale: f32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let steps: i32 = get_shape_dim(q.shape(), 1i32);
        let heads: i32 = get_shape_dim(q.shape(), 2i32);
        let bi: i32 = pid.0 / heads;
        let hi: i32 = pid.0 % heads;
        let vi: i32 = pid.1;

        let mut s: Tile<f32, { [BK, BV] }> = constant(0.0f32, shape![BK, BV]);
        if INIT == 1i32 {
            let init_p: Partition<f32, { [1, 1, BK, BV] }> = initial_state.partition(shape![1, 1, BK, BV]);
            let st: Tile<f32, { [1, 1, BK, BV] }> = init_p.load([bi, hi, 0i32, vi]);
            s = st.reshape(shape![BK, BV]);
        }

        let q_p: Partition<E, { [1, 1, 1, BK] }> =
            unsafe { make_partition_view(q, shape![1, 1, 1, BK], padding::Zero, dim_map::Identity, get_tensor_token(q)) };
        let k_p: Partition<E, { [1, 1, 1, BK] }> =
            unsafe { make_partition_view(k, shape![1, 1, 1, BK], padding::Zero, dim_map::Identity, get_tensor_token(k)) };
        let v_p: Partition<E, { [1, 1, 1, BV] }> =
            unsafe { make_partition_view(v, shape![1, 1, 1, BV], padding::Zero, dim_map::Identity, get_tensor_token(v)) };
        let g_p: Partition<G, { [1, 1, 1] }> =
            unsafe { make_partition_view(g, shape![1, 1, 1], padding::Zero, dim_map::Identity, get_tensor_token(g)) };
        let b_p: Partition<E, { [1, 1, 1] }> =
            unsafe { make_partition_view(beta, shape![1, 1, 1], padding::Zero, dim_map::Identity, get_tensor_token(beta)) };
        let mut o_p: PartitionMut<E, { [1, 1, 1, BV] }> = unsafe { o.partition_full_mut(shape![1, 1, 1, BV]) };
        let qs: Tile<f32, { [1, 1] }> = broadcast_scalar(q_scale, shape![1, 1]);

        // The prefetched pair (PF 1): indices past T are clamped to T, one past the last token,
        // which loads as zero (the odd T's identity step) or is never used.
        let t1: i32 = min(1i32, steps);
        let mut nq1: Tile<E, { [1, 1, 1, BK] }> = q_p.load([bi, 0i32, hi, 0i32]);
        let mut nk1: Tile<E, { [1, 1, 1, BK] }> = k_p.load([bi, 0i32, hi, 0i32]);
        let mut nv1: Tile<E, { [1, 1, 1, BV] }> = v_p.load([bi, 0i32, hi, vi]);
        let mut ng1: Tile<G, { [1, 1, 1] }> = g_p.load([bi, 0i32, hi]);
        let mut nb1: Tile<E, { [1, 1, 1] }> = b_p.load([bi, 0i32, hi]);
        let mut nq2: Tile<E, { [1, 1, 1, BK] }> = q_p.load([bi, t1, hi, 0i32]);
        let mut nk2: Tile<E, { [1, 1, 1, BK] }> = k_p.load([bi, t1, hi, 0i32]);
        let mut nv2: Tile<E, { [1, 1, 1, BV] }> = v_p.load([bi, t1, hi, vi]);
        let mut ng2: Tile<G, { [1, 1, 1] }> = g_p.load([bi, t1, hi]);
        let mut nb2: Tile<E, { [1, 1, 1] }> = b_p.load([bi, t1, hi]);

        let pairs: i32 = (steps + 1i32) / 2i32;
        for pi in 0i32..pairs {
            let t: i32 = 2i32 * pi;
            let u: i32 = t + 1i32;
            let q1: Tile<E, { [1, 1, 1, BK] }> = if PF > 0i32 { nq1 } else { q_p.load([bi, t, hi, 0i32]) };
            let k1: Tile<E, { [1, 1, 1, BK] }> = if PF > 0i32 { nk1 } else { k_p.load([bi, t, hi, 0i32]) };
            let v1: Tile<E, { [1, 1, 1, BV] }> = if PF > 0i32 { nv1 } else { v_p.load([bi, t, hi, vi]) };
            let g1: Tile<G, { [1, 1, 1] }> = if PF > 0i32 { ng1 } else { g_p.load([bi, t, hi]) };
            let b1: Tile<E, { [1, 1, 1] }> = if PF > 0i32 { nb1 } else { b_p.load([bi, t, hi]) };
            let q2: Tile<E, { [1, 1, 1, BK] }> = if PF > 0i32 { nq2 } else { q_p.load([bi, u, hi, 0i32]) };
            let k2: Tile<E, { [1, 1, 1, BK] }> = if PF > 0i32 { nk2 } else { k_p.load([bi, u, hi, 0i32]) };
            let v2: Tile<E, { [1, 1, 1, BV] }> = if PF > 0i32 { nv2 } else { v_p.load([bi, u, hi, vi]) };
            let g2: Tile<G, { [1, 1, 1] }> = if PF > 0i32 { ng2 } else { g_p.load([bi, u, hi]) };
            let b2: Tile<E, { [1, 1, 1] }> = if PF > 0i32 { nb2 } else { b_p.load([bi, u, hi]) };
            if PF == 1i32 {
                let tn: i32 = min(t + 2i32, steps);
                let un: i32 = min(t + 3i32, steps);
                nq1 = q_p.load([bi, tn, hi, 0i32]);
                nk1 = k_p.load([bi, tn, hi, 0i32]);
                nv1 = v_p.load([bi, tn, hi, vi]);
                ng1 = g_p.load([bi, tn, hi]);
                nb1 = b_p.load([bi, tn, hi]);
                nq2 = q_p.load([bi, un, hi, 0i32]);
                nk2 = k_p.load([bi, un, hi, 0i32]);
                nv2 = v_p.load([bi, un, hi, vi]);
                ng2 = g_p.load([bi, un, hi]);
                nb2 = b_p.load([bi, un, hi]);
            }
            let q1f: Tile<f32, { [BK, 1] }> = convert_tile(q1.reshape(shape![BK, 1]));
            let k1f: Tile<f32, { [BK, 1] }> = convert_tile(k1.reshape(shape![BK, 1]));
            let q2f: Tile<f32, { [BK, 1] }> = convert_tile(q2.reshape(shape![BK, 1]));
            let k2f: Tile<f32, { [BK, 1] }> = convert_tile(k2.reshape(shape![BK, 1]));
            let v1f: Tile<f32, { [1, BV] }> = convert_tile(v1.reshape(shape![1, BV]));
            let v2f: Tile<f32, { [1, BV] }> = convert_tile(v2.reshape(shape![1, BV]));
            let g1f: Tile<f32, { [1, 1] }> = convert_tile(g1.reshape(shape![1, 1]));
            let g2f: Tile<f32, { [1, 1] }> = convert_tile(g2.reshape(shape![1, 1]));
            let b1f: Tile<f32, { [1, 1] }> = convert_tile(b1.reshape(shape![1, 1]));
            let b2f: Tile<f32, { [1, 1] }> = convert_tile(b2.reshape(shape![1, 1]));
            let a1: Tile<f32, { [1, 1] }> = exp(g1f);
            let a2: Tile<f32, { [1, 1] }> = exp(g2f);
            let a12: Tile<f32, { [1, 1] }> = a1 * a2;

            // The scalars: dot products of the raw rows, times the l2 factors and q_scale. The
            // rows load again for them: as `[1, BK]` rows their products spread over the
            // threads, where the `[BK, 1]` columns are every thread's copy.
            let q1r: Tile<f32, { [1, BK] }> = row::<E, BK>(&q_p, bi, t, hi);
            let k1r: Tile<f32, { [1, BK] }> = row::<E, BK>(&k_p, bi, t, hi);
            let q2r: Tile<f32, { [1, BK] }> = row::<E, BK>(&q_p, bi, u, hi);
            let k2r: Tile<f32, { [1, BK] }> = row::<E, BK>(&k_p, bi, u, hi);
            let lk1: Tile<f32, { [1, 1] }> = l2_factor::<BK, L2>(k1r);
            let lk2: Tile<f32, { [1, 1] }> = l2_factor::<BK, L2>(k2r);
            let lq1: Tile<f32, { [1, 1] }> = l2_factor::<BK, L2>(q1r) * qs;
            let lq2: Tile<f32, { [1, 1] }> = l2_factor::<BK, L2>(q2r) * qs;
            let kq11: Tile<f32, { [1, 1] }> = dot11::<BK>(k1r, q1r) * lk1 * lq1;
            let kk12: Tile<f32, { [1, 1] }> = dot11::<BK>(k1r, k2r) * lk1 * lk2;
            let kq12: Tile<f32, { [1, 1] }> = dot11::<BK>(k1r, q2r) * lk1 * lq2;
            let kq22: Tile<f32, { [1, 1] }> = dot11::<BK>(k2r, q2r) * lk2 * lq2;

            // The four reductions from the pair's starting state.
            let kc1: Tile<f32, { [BK, BV] }> = k1f.broadcast(shape![BK, BV]);
            let kc2: Tile<f32, { [BK, BV] }> = k2f.broadcast(shape![BK, BV]);
            let rk1: Tile<f32, { [BV] }> = reduce_sum(s * kc1, 0i32);
            let rk2: Tile<f32, { [BV] }> = reduce_sum(s * kc2, 0i32);
            let rq1: Tile<f32, { [BV] }> = reduce_sum(s * q1f.broadcast(shape![BK, BV]), 0i32);
            let rq2: Tile<f32, { [BV] }> = reduce_sum(s * q2f.broadcast(shape![BK, BV]), 0i32);

            let d1: Tile<f32, { [1, BV] }> = (v1f - rk1.reshape(shape![1, BV]) * (a1 * lk1).broadcast(shape![1, BV])) * b1f.broadcast(shape![1, BV]);
            let o1: Tile<f32, { [1, BV] }> = rq1.reshape(shape![1, BV]) * (a1 * lq1).broadcast(shape![1, BV]) + d1 * kq11.broadcast(shape![1, BV]);
            let e2: Tile<f32, { [1, BV] }> =
                rk2.reshape(shape![1, BV]) * (a12 * lk2).broadcast(shape![1, BV]) + d1 * (a2 * kk12).broadcast(shape![1, BV]);
            let d2: Tile<f32, { [1, BV] }> = (v2f - e2) * b2f.broadcast(shape![1, BV]);
            let o2: Tile<f32, { [1, BV] }> = rq2.reshape(shape![1, BV]) * (a12 * lq2).broadcast(shape![1, BV])
                + d1 * (a2 * kq12).broadcast(shape![1, BV])
                + d2 * kq22.broadcast(shape![1, BV]);

            // S <- a1 a2 S + k1 (lk1 a2 d1)^T + k2 (lk2 d2)^T.
            let u1: Tile<f32, { [1, BV] }> = d1 * (a2 * lk1).broadcast(shape![1, BV]);
            let u2: Tile<f32, { [1, BV] }> = d2 * lk2.broadcast(shape![1, BV]);
            let s0: Tile<f32, { [BK, BV] }> = s * a12.broadcast(shape![BK, BV]);
            let s1: Tile<f32, { [BK, BV] }> = fma(kc1, u1.broadcast(shape![BK, BV]), s0, rounding::NearestEven, ftz::Disabled);
            s = fma(kc2, u2.broadcast(shape![BK, BV]), s1, rounding::NearestEven, ftz::Disabled);

            let o1t: Tile<E, { [1, BV] }> = convert_tile(o1);
            let o1t: Tile<E, { [1, 1, 1, BV] }> = o1t.reshape(shape![1, 1, 1, BV]);
            let o2t: Tile<E, { [1, BV] }> = convert_tile(o2);
            let o2t: Tile<E, { [1, 1, 1, BV] }> = o2t.reshape(shape![1, 1, 1, BV]);
            unsafe { store_view_tko_mut(&mut o_p, o1t, [bi, t, hi, vi], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
            unsafe { store_view_tko_mut(&mut o_p, o2t, [bi, u, hi, vi], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
        }

        if FINAL == 1i32 {
            let mut final_p: PartitionMut<f32, { [1, 1, BK, BV] }> = unsafe { final_state.partition_full_mut(shape![1, 1, BK, BV]) };
            let st: Tile<f32, { [1, 1, BK, BV] }> = s.reshape(shape![1, 1, BK, BV]);
            unsafe { store_view_tko_mut(&mut final_p, st, [bi, hi, 0i32, vi], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
        }
    }

    /// Token `t`'s `[1, 1, 1, BK]` row of a `[B, T, H, K]` tensor as an f32 `[1, BK]` row.
    fn row<E: ElementType, const BK: i32>(p: &Partition<E, { [1, 1, 1, BK] }>, b: i32, t: i32, h: i32) -> Tile<f32, { [1, BK] }> {
        let x: Tile<E, { [1, 1, 1, BK] }> = p.load([b, t, h, 0i32]);
        let r: Tile<f32, { [1, BK] }> = convert_tile(x.reshape(shape![1, BK]));
        r
    }

    /// `rsqrt(|x|^2 + 1e-6)` of a row when `L2` = 1 (the l2 normalisation's factor), else 1.
    fn l2_factor<const BK: i32, const L2: i32>(x: Tile<f32, { [1, BK] }>) -> Tile<f32, { [1, 1] }> {
        if L2 == 1i32 {
            let eps: Tile<f32, { [1, 1] }> = constant(1e-6f32, shape![1, 1]);
            let xx: Tile<f32, { [1] }> = reduce_sum(x * x, 1i32);
            let r: Tile<f32, { [1, 1] }> = rsqrt(xx.reshape(shape![1, 1]) + eps, ftz::Disabled);
            r
        } else {
            let r: Tile<f32, { [1, 1] }> = constant(1.0f32, shape![1, 1]);
            r
        }
    }

    /// `a . b` of two rows.
    fn dot11<const BK: i32>(a: Tile<f32, { [1, BK] }>, b: Tile<f32, { [1, BK] }>) -> Tile<f32, { [1, 1] }> {
        let d: Tile<f32, { [1] }> = reduce_sum(a * b, 1i32);
        let r: Tile<f32, { [1, 1] }> = d.reshape(shape![1, 1]);
        r
    }

    /// A `[1, 1, 1, W]` row of a `[B, T, H, W]` tensor, through TMA (`TMA` = 1) or as a plain
    /// load into registers (0).
    fn ld3<E: ElementType, const W: i32, const TMA: i32>(p: &Partition<E, { [1, 1, 1, W] }>, b: i32, t: i32, h: i32, c: i32) -> Tile<E, { [1, 1, 1, W] }> {
        if TMA == 1i32 {
            let r: Tile<E, { [1, 1, 1, W] }> = load_view_tko(p, [b, t, h, c], ordering::Weak, scope::TileBlock, None, tma::Enabled);
            r
        } else {
            let r: Tile<E, { [1, 1, 1, W] }> = load_view_tko(p, [b, t, h, c], ordering::Weak, scope::TileBlock, None, tma::Disabled);
            r
        }
    }

    /// One element of a `[B, T, H]` tensor (see [`ld3`]).
    fn ld1<E: ElementType, const TMA: i32>(p: &Partition<E, { [1, 1, 1] }>, b: i32, t: i32, h: i32) -> Tile<E, { [1, 1, 1] }> {
        if TMA == 1i32 {
            let r: Tile<E, { [1, 1, 1] }> = load_view_tko(p, [b, t, h], ordering::Weak, scope::TileBlock, None, tma::Enabled);
            r
        } else {
            let r: Tile<E, { [1, 1, 1] }> = load_view_tko(p, [b, t, h], ordering::Weak, scope::TileBlock, None, tma::Disabled);
            r
        }
    }

    /// Token `t`'s `k . q` from the `qk_dot [B, T, H]` tensor when `FUSE` = 4 (see [`ld1`]), else a
    /// zero that is never used (`qk_dot` is then a null pointer: no partition of it is made).
    fn ld_dot<const FUSE: i32, const TMA: i32>(qk: &Tensor<f32, { [-1, -1, -1] }>, b: i32, t: i32, h: i32) -> Tile<f32, { [1, 1, 1] }> {
        if FUSE == 4i32 {
            let p: Partition<f32, { [1, 1, 1] }> = qk.partition(shape![1, 1, 1]);
            let r: Tile<f32, { [1, 1, 1] }> = ld1::<f32, TMA>(&p, b, t, h);
            r
        } else {
            let r: Tile<f32, { [1, 1, 1] }> = constant(0.0f32, shape![1, 1, 1]);
            r
        }
    }

    /// `k . q` of each `[B T H]` row for [`gated_delta_rule`]'s `FUSE` 4: `q`, `k` seen as `[N, K]`
    /// (N = B T H), `qk_dot` as `[N]` f32, `R` rows a block, `BK` = K rounded up to a power of two
    /// (the zero-padded columns add nothing). The product carries the step's factors: `q_scale`,
    /// and with `L2` = 1 `rsqrt(|q|^2 + 1e-6) rsqrt(|k|^2 + 1e-6)`.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn gdr_qk_dot<E: ElementType, const R: i32, const BK: i32, const L2: i32>(
        q: &Tensor<E, { [-1, -1] }>,
        k: &Tensor<E, { [-1, -1] }>,
        qk_dot: &Tensor<f32, { [-1] }>,
        q_scale: f32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let q_p: Partition<E, { [R, BK] }> =
            unsafe { make_partition_view(q, shape![R, BK], padding::Zero, dim_map::Identity, get_tensor_token(q)) };
        let k_p: Partition<E, { [R, BK] }> =
            unsafe { make_partition_view(k, shape![R, BK], padding::Zero, dim_map::Identity, get_tensor_token(k)) };
        let qt: Tile<E, { [R, BK] }> = q_p.load([pid.0, 0i32]);
        let kt: Tile<E, { [R, BK] }> = k_p.load([pid.0, 0i32]);
        let qf: Tile<f32, { [R, BK] }> = convert_tile(qt);
        let kf: Tile<f32, { [R, BK] }> = convert_tile(kt);
        let d: Tile<f32, { [R] }> = reduce_sum(qf * kf, 1i32);
        let mut r: Tile<f32, { [R] }> = d * broadcast_scalar(q_scale, shape![R]);
        if L2 == 1i32 {
            let eps: Tile<f32, { [R] }> = constant(1e-6f32, shape![R]);
            let qq: Tile<f32, { [R] }> = reduce_sum(qf * qf, 1i32);
            let kk: Tile<f32, { [R] }> = reduce_sum(kf * kf, 1i32);
            r = r * rsqrt(qq + eps, ftz::Disabled) * rsqrt(kk + eps, ftz::Disabled);
        }
        let mut o_p: PartitionMut<f32, { [R] }> = unsafe { qk_dot.partition_full_mut(shape![R]) };
        unsafe { store_view_tko_mut(&mut o_p, r, [pid.0], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
    }

    /// `acc + a b` for f32 tiles on the tensor cores at about 16 mantissa bits: each operand is
    /// split into bf16 `hi + lo` (`lo = bf16(x - hi)`), and `lo lo` is dropped (2^-16 of the
    /// product). f32 accumulation.
    fn mm3<const M: i32, const K: i32, const N: i32>(
        a: Tile<f32, { [M, K] }>,
        b: Tile<f32, { [K, N] }>,
        acc: Tile<f32, { [M, N] }>,
    ) -> Tile<f32, { [M, N] }> {
        let ah: Tile<bf16, { [M, K] }> = convert_tile(a);
        let ahf: Tile<f32, { [M, K] }> = convert_tile(ah);
        let al: Tile<bf16, { [M, K] }> = convert_tile(a - ahf);
        let bh: Tile<bf16, { [K, N] }> = convert_tile(b);
        let bhf: Tile<f32, { [K, N] }> = convert_tile(bh);
        let bl: Tile<bf16, { [K, N] }> = convert_tile(b - bhf);
        let mut r: Tile<f32, { [M, N] }> = mmaf(al, bh, acc);
        r = mmaf(ah, bl, r);
        r = mmaf(ah, bh, r);
        r
    }

    /// The chunked form of [`gated_delta_rule`] (same parameters, grid and flags), `C` tokens a
    /// chunk, state `S` at the chunk's start, `Gamma_i` the sum of g over the chunk up to token
    /// i, `D_ij = exp(Gamma_i - Gamma_j)` for `j <= i` (else 0):
    ///   `A = strict_lower(beta_i D_ij k_i.k_j)`; `(I + A) U = beta V`, `(I + A) W = beta exp(Gamma) K`
    ///   (forward substitution, row by row in f32); `Delta = U - W S` (the tokens' deltas);
    ///   `O = (exp(Gamma) Q) S + (D o Q K^T) Delta`; `S <- exp(Gamma_last) S + (exp(Gamma_last - Gamma) K)^T Delta`.
    /// Products of f32 tiles through [`mm3`]. Tokens past T load as zero (q, k, v, beta and g):
    /// their rows of A, U and W are zero, Gamma stops growing, and their stores are dropped.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn gated_delta_rule_chunked<
        E: ElementType,
        G: ElementType,
        const C: i32,
        const BK: i32,
        const BV: i32,
        const INIT: i32,
        const FINAL: i32,
        const L2: i32,
    >(
        q: &Tensor<E, { [-1, -1, -1, -1] }>,
        k: &Tensor<E, { [-1, -1, -1, -1] }>,
        v: &Tensor<E, { [-1, -1, -1, -1] }>,
        g: &Tensor<G, { [-1, -1, -1] }>,
        beta: &Tensor<E, { [-1, -1, -1] }>,
        o: &Tensor<E, { [-1, -1, -1, -1] }>,
        initial_state: &Tensor<f32, { [-1, -1, -1, -1] }>,
        final_state: &Tensor<f32, { [-1, -1, -1, -1] }>,
        #[allow(unused_variables)] qk_dot: &Tensor<f32, { [-1, -1, -1] }>,
        q_scale: f32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let steps: i32 = get_shape_dim(q.shape(), 1i32);
        let heads: i32 = get_shape_dim(q.shape(), 2i32);
        let bi: i32 = pid.0 / heads;
        let hi: i32 = pid.0 % heads;
        let vi: i32 = pid.1;

        let mut s: Tile<f32, { [BK, BV] }> = constant(0.0f32, shape![BK, BV]);
        if INIT == 1i32 {
            let init_p: Partition<f32, { [1, 1, BK, BV] }> = initial_state.partition(shape![1, 1, BK, BV]);
            let st: Tile<f32, { [1, 1, BK, BV] }> = init_p.load([bi, hi, 0i32, vi]);
            s = st.reshape(shape![BK, BV]);
        }

        let q_p: Partition<E, { [1, C, 1, BK] }> = q.partition(shape![1, C, 1, BK]);
        let k_p: Partition<E, { [1, C, 1, BK] }> = k.partition(shape![1, C, 1, BK]);
        let v_p: Partition<E, { [1, C, 1, BV] }> = v.partition(shape![1, C, 1, BV]);
        let g_p: Partition<G, { [1, C, 1] }> = g.partition(shape![1, C, 1]);
        let b_p: Partition<E, { [1, C, 1] }> = beta.partition(shape![1, C, 1]);
        let mut o_p: PartitionMut<E, { [1, C, 1, BV] }> = unsafe { o.partition_full_mut(shape![1, C, 1, BV]) };

        let idx: Tile<i32, { [C] }> = iota(shape![C]);
        let ri: Tile<i32, { [C, C] }> = idx.reshape(shape![C, 1]).broadcast(shape![C, C]);
        let cj: Tile<i32, { [C, C] }> = idx.reshape(shape![1, C]).broadcast(shape![C, C]);
        let lower: Tile<bool, { [C, C] }> = ge_tile(ri, cj);
        let strict: Tile<bool, { [C, C] }> = gt_tile(ri, cj);
        let zcc: Tile<f32, { [C, C] }> = constant(0.0f32, shape![C, C]);
        let rv: Tile<i32, { [C, BV] }> = idx.reshape(shape![C, 1]).broadcast(shape![C, BV]);
        let rk: Tile<i32, { [C, BK] }> = idx.reshape(shape![C, 1]).broadcast(shape![C, BK]);
        let scale: Tile<f32, { [C, BK] }> = broadcast_scalar(q_scale, shape![C, BK]);
        let eps: Tile<f32, { [C, 1] }> = constant(1e-6f32, shape![C, 1]);

        let chunks: i32 = (steps + C - 1i32) / C;
        for ci in 0i32..chunks {
            let qt: Tile<E, { [1, C, 1, BK] }> = q_p.load([bi, ci, hi, 0i32]);
            let mut qf: Tile<f32, { [C, BK] }> = convert_tile(qt.reshape(shape![C, BK]));
            let kt: Tile<E, { [1, C, 1, BK] }> = k_p.load([bi, ci, hi, 0i32]);
            let mut kf: Tile<f32, { [C, BK] }> = convert_tile(kt.reshape(shape![C, BK]));
            if L2 == 1i32 {
                let qq: Tile<f32, { [C] }> = reduce_sum(qf * qf, 1i32);
                let qn: Tile<f32, { [C, 1] }> = rsqrt(qq.reshape(shape![C, 1]) + eps, ftz::Disabled);
                qf = qf * qn.broadcast(shape![C, BK]);
                let kk: Tile<f32, { [C] }> = reduce_sum(kf * kf, 1i32);
                let kn: Tile<f32, { [C, 1] }> = rsqrt(kk.reshape(shape![C, 1]) + eps, ftz::Disabled);
                kf = kf * kn.broadcast(shape![C, BK]);
            }
            qf = qf * scale;
            let vt: Tile<E, { [1, C, 1, BV] }> = v_p.load([bi, ci, hi, vi]);
            let vf: Tile<f32, { [C, BV] }> = convert_tile(vt.reshape(shape![C, BV]));
            let gt: Tile<G, { [1, C, 1] }> = g_p.load([bi, ci, hi]);
            let gf: Tile<f32, { [C] }> = convert_tile(gt.reshape(shape![C]));
            let bt: Tile<E, { [1, C, 1] }> = b_p.load([bi, ci, hi]);
            let bf: Tile<f32, { [C] }> = convert_tile(bt.reshape(shape![C]));
            let bcol: Tile<f32, { [C, 1] }> = bf.reshape(shape![C, 1]);

            // Gamma_i = sum_{j <= i} g_j; D_ij = exp(Gamma_i - Gamma_j) on and below the diagonal.
            let gm: Tile<f32, { [C, C] }> = select(lower, gf.reshape(shape![1, C]).broadcast(shape![C, C]), zcc);
            let gam: Tile<f32, { [C] }> = reduce_sum(gm, 1i32);
            let gcol: Tile<f32, { [C, 1] }> = gam.reshape(shape![C, 1]);
            let diff: Tile<f32, { [C, C] }> = gcol.broadcast(shape![C, C]) - gam.reshape(shape![1, C]).broadcast(shape![C, C]);
            let decay: Tile<f32, { [C, C] }> = select(lower, exp(diff), zcc);
            let glast: Tile<f32, { [1] }> = reduce_sum(gf.reshape(shape![1, C]), 1i32);
            let glast: Tile<f32, { [1, 1] }> = glast.reshape(shape![1, 1]);
            let eg: Tile<f32, { [C, 1] }> = exp(gcol);

            let ktt: Tile<f32, { [BK, C] }> = kf.transpose();
            let kk: Tile<f32, { [C, C] }> = mm3(kf, ktt, zcc);
            let a: Tile<f32, { [C, C] }> = select(strict, kk * decay * bcol.broadcast(shape![C, C]), zcc);

            // Forward substitution: row i of U and W minus A[i, :] times the finished rows.
            let mut u: Tile<f32, { [C, BV] }> = vf * bcol.broadcast(shape![C, BV]);
            let mut w: Tile<f32, { [C, BK] }> = kf * (bcol * eg).broadcast(shape![C, BK]);
            for i in 1i32..C {
                let row: Tile<bool, { [C, C] }> = eq_tile(ri, broadcast_scalar(i, shape![C, C]));
                let ai: Tile<f32, { [C] }> = reduce_sum(select(row, a, zcc), 0i32);
                let aic: Tile<f32, { [C, 1] }> = ai.reshape(shape![C, 1]);
                let du: Tile<f32, { [BV] }> = reduce_sum(aic.broadcast(shape![C, BV]) * u, 0i32);
                let dw: Tile<f32, { [BK] }> = reduce_sum(aic.broadcast(shape![C, BK]) * w, 0i32);
                let on_v: Tile<bool, { [C, BV] }> = eq_tile(rv, broadcast_scalar(i, shape![C, BV]));
                let on_k: Tile<bool, { [C, BK] }> = eq_tile(rk, broadcast_scalar(i, shape![C, BK]));
                u = select(on_v, u - du.reshape(shape![1, BV]).broadcast(shape![C, BV]), u);
                w = select(on_k, w - dw.reshape(shape![1, BK]).broadcast(shape![C, BK]), w);
            }

            let zcv: Tile<f32, { [C, BV] }> = constant(0.0f32, shape![C, BV]);
            let ws: Tile<f32, { [C, BV] }> = mm3(w, s, zcv);
            let delta: Tile<f32, { [C, BV] }> = u - ws;
            let qk: Tile<f32, { [C, C] }> = mm3(qf, ktt, zcc);
            let p: Tile<f32, { [C, C] }> = qk * decay;
            let qs: Tile<f32, { [C, BV] }> = mm3(qf * eg.broadcast(shape![C, BK]), s, zcv);
            let out: Tile<f32, { [C, BV] }> = mm3(p, delta, qs);
            let out: Tile<E, { [C, BV] }> = convert_tile(out);
            let out: Tile<E, { [1, C, 1, BV] }> = out.reshape(shape![1, C, 1, BV]);
            unsafe { store_view_tko_mut(&mut o_p, out, [bi, ci, hi, vi], ordering::Weak, scope::TileBlock, None, tma::Enabled) };

            let kd: Tile<f32, { [C, BK] }> = kf * exp(glast.broadcast(shape![C, 1]) - gcol).broadcast(shape![C, BK]);
            let kdt: Tile<f32, { [BK, C] }> = kd.transpose();
            let sd: Tile<f32, { [BK, BV] }> = s * exp(glast).broadcast(shape![BK, BV]);
            s = mm3(kdt, delta, sd);
        }

        if FINAL == 1i32 {
            let mut final_p: PartitionMut<f32, { [1, 1, BK, BV] }> = unsafe { final_state.partition_full_mut(shape![1, 1, BK, BV]) };
            let st: Tile<f32, { [1, 1, BK, BV] }> = s.reshape(shape![1, 1, BK, BV]);
            unsafe { store_view_tko_mut(&mut final_p, st, [bi, hi, 0i32, vi], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
        }
    }
}
