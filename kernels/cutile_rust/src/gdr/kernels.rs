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
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn gated_delta_rule<
        E: ElementType,
        G: ElementType,
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

        let q_p: Partition<E, { [1, 1, 1, BK] }> = q.partition(shape![1, 1, 1, BK]);
        let k_p: Partition<E, { [1, 1, 1, BK] }> = k.partition(shape![1, 1, 1, BK]);
        let v_p: Partition<E, { [1, 1, 1, BV] }> = v.partition(shape![1, 1, 1, BV]);
        let g_p: Partition<G, { [1, 1, 1] }> = g.partition(shape![1, 1, 1]);
        let b_p: Partition<E, { [1, 1, 1] }> = beta.partition(shape![1, 1, 1]);
        let mut o_p: PartitionMut<E, { [1, 1, 1, BV] }> = unsafe { o.partition_full_mut(shape![1, 1, 1, BV]) };
        let scale: Tile<f32, { [BK, 1] }> = broadcast_scalar(q_scale, shape![BK, 1]);
        let eps: Tile<f32, { [1, 1] }> = constant(1e-6f32, shape![1, 1]);

        for t in 0i32..steps {
            let qt: Tile<E, { [1, 1, 1, BK] }> = q_p.load([bi, t, hi, 0i32]);
            let mut qf: Tile<f32, { [BK, 1] }> = convert_tile(qt.reshape(shape![BK, 1]));
            let kt: Tile<E, { [1, 1, 1, BK] }> = k_p.load([bi, t, hi, 0i32]);
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
            let vt: Tile<E, { [1, 1, 1, BV] }> = v_p.load([bi, t, hi, vi]);
            let vf: Tile<f32, { [1, BV] }> = convert_tile(vt.reshape(shape![1, BV]));
            let gt: Tile<G, { [1, 1, 1] }> = g_p.load([bi, t, hi]);
            let gf: Tile<f32, { [1, 1] }> = convert_tile(gt.reshape(shape![1, 1]));
            let bt: Tile<E, { [1, 1, 1] }> = b_p.load([bi, t, hi]);
            let bf: Tile<f32, { [1, 1] }> = convert_tile(bt.reshape(shape![1, 1]));

            let decay: Tile<f32, { [1, 1] }> = exp(gf);
            s = s * decay.broadcast(shape![BK, BV]);
            let kb: Tile<f32, { [BK, BV] }> = kf.broadcast(shape![BK, BV]);
            let kv: Tile<f32, { [BV] }> = reduce_sum(s * kb, 0i32);
            let delta: Tile<f32, { [1, BV] }> = (vf - kv.reshape(shape![1, BV])) * bf.broadcast(shape![1, BV]);
            s = s + kb * delta.broadcast(shape![BK, BV]);
            let ot: Tile<f32, { [BV] }> = reduce_sum(s * qf.broadcast(shape![BK, BV]), 0i32);
            let ot: Tile<E, { [BV] }> = convert_tile(ot);
            let ot: Tile<E, { [1, 1, 1, BV] }> = ot.reshape(shape![1, 1, 1, BV]);
            unsafe { store_view_tko_mut(&mut o_p, ot, [bi, t, hi, vi], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
        }

        if FINAL == 1i32 {
            let mut final_p: PartitionMut<f32, { [1, 1, BK, BV] }> = unsafe { final_state.partition_full_mut(shape![1, 1, BK, BV]) };
            let st: Tile<f32, { [1, 1, BK, BV] }> = s.reshape(shape![1, 1, BK, BV]);
            unsafe { store_view_tko_mut(&mut final_p, st, [bi, hi, 0i32, vi], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
        }
    }
}
