// SPDX-License-Identifier: Apache-2.0
//! portbench's cuTile Rust moe_align_block kernel (issue 17).
//!
//! reference/src/ops/moe_align_block.cpp: the `numel = M * top_k` assignments of `topk_ids`
//! bucketed by expert in expert order, each bucket padded to a multiple of `BLOCK` with the
//! value `numel`; `expert_ids[b]` the expert of block b, `num_tokens_post_padded` the padded
//! total. One tile block does it all (numel and the expert count are small), in four passes
//! over `BT`-entry chunks, every output element written exactly once (so no pass waits for
//! another's stores): counts; the assignments' positions (`start[e]` + earlier assignments of
//! e, stable) scattered through a pointer tile; the padding slots; the block experts.

#[cutile::module]
pub mod portbench_moe {
    use cutile::core::*;

    /// moe_align_block, grid `[1, 1, 1]`. `E2` = the expert count rounded up to a power of two
    /// (experts past `E` get no assignment, so their buckets are empty), `BT` entries a chunk,
    /// `BLOCK` the block size. `topk_ids` is viewed flattened (`[numel]`), `sorted_token_ids` is a raw
    /// address (`max_padded` elements, written by scatter), expert_ids `[max_blocks]`,
    /// num_tokens_post_padded `[1]`.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn moe_align_block<const E2: i32, const BT: i32, const BLOCK: i32>(
        topk_ids: &Tensor<i32, { [-1] }>,
        sorted_token_ids: *mut i32,
        expert_ids: &Tensor<i32, { [-1] }>,
        num_tokens_post_padded: &Tensor<i32, { [-1] }>,
        max_padded: i32,
    ) {
        let numel: i32 = get_shape_dim(topk_ids.shape(), 0i32);
        let max_blocks: i32 = get_shape_dim(expert_ids.shape(), 0i32);
        let ids_p: Partition<i32, { [BT] }> = topk_ids.partition(shape![BT]);
        let chunks: i32 = (numel + BT - 1i32) / BT;
        let lane: Tile<i32, { [BT] }> = iota(shape![BT]);
        let ex: Tile<i32, { [E2] }> = iota(shape![E2]);
        let ex_b: Tile<i32, { [BT, E2] }> = ex.reshape(shape![1, E2]).broadcast(shape![BT, E2]);
        let one: Tile<i32, { [BT, E2] }> = constant(1i32, shape![BT, E2]);
        let zero: Tile<i32, { [BT, E2] }> = constant(0i32, shape![BT, E2]);
        let numel_t: Tile<i32, { [BT] }> = numel.broadcast(shape![BT]);

        // Pass 1: assignments per expert.
        let mut counts: Tile<i32, { [E2] }> = constant(0i32, shape![E2]);
        for c in 0i32..chunks {
            let idt: Tile<i32, { [BT] }> = ids_p.load([c]);
            let at: Tile<i32, { [BT] }> = broadcast_scalar(c * BT, shape![BT]) + lane;
            let valid: Tile<bool, { [BT, E2] }> = lt_tile(at, numel_t).reshape(shape![BT, 1]).broadcast(shape![BT, E2]);
            let hit: Tile<bool, { [BT, E2] }> = eq_tile(idt.reshape(shape![BT, 1]).broadcast(shape![BT, E2]), ex_b) & valid;
            let n: Tile<i32, { [E2] }> = reduce_sum(select(hit, one, zero), 0i32);
            counts = counts + n;
        }
        let block: i32 = BLOCK;
        let bm1: Tile<i32, { [E2] }> = broadcast_scalar(block - 1i32, shape![E2]);
        let blk: Tile<i32, { [E2] }> = broadcast_scalar(block, shape![E2]);
        let padded: Tile<i32, { [E2] }> = ((counts + bm1) / blk) * blk;
        let ends: Tile<i32, { [E2] }> = scan_sum(padded, 0i32, reverse::Forward, 0i32);
        let starts: Tile<i32, { [E2] }> = ends - padded;
        let sum: Tile<i32, { [1] }> = reduce_sum(padded.reshape(shape![1, E2]), 1i32);
        let mut total_p: PartitionMut<i32, { [1] }> = unsafe { num_tokens_post_padded.partition_full_mut(shape![1]) };
        unsafe { store_view_tko_mut(&mut total_p, sum, [0i32], ordering::Weak, scope::TileBlock, None, tma::Disabled) };

        // Pass 2: each assignment to start[e] + the earlier assignments of e (stable order).
        let base: PointerTile<*mut i32, { [] }> = pointer_to_tile(sorted_token_ids);
        let base: PointerTile<*mut i32, { [1] }> = reshape_ptr(base, shape![1]);
        let base: PointerTile<*mut i32, { [BT] }> = broadcast_ptr(base, shape![BT]);
        let mut next: Tile<i32, { [E2] }> = starts;
        for c in 0i32..chunks {
            let idt: Tile<i32, { [BT] }> = ids_p.load([c]);
            let at: Tile<i32, { [BT] }> = broadcast_scalar(c * BT, shape![BT]) + lane;
            let ok: Tile<bool, { [BT] }> = lt_tile(at, numel_t);
            let valid: Tile<bool, { [BT, E2] }> = ok.reshape(shape![BT, 1]).broadcast(shape![BT, E2]);
            let hit: Tile<bool, { [BT, E2] }> = eq_tile(idt.reshape(shape![BT, 1]).broadcast(shape![BT, E2]), ex_b) & valid;
            let h: Tile<i32, { [BT, E2] }> = select(hit, one, zero);
            let rank: Tile<i32, { [BT, E2] }> = scan_sum(h, 0i32, reverse::Forward, 0i32);
            let slot: Tile<i32, { [BT, E2] }> = rank - one + next.reshape(shape![1, E2]).broadcast(shape![BT, E2]);
            let pos: Tile<i32, { [BT] }> = reduce_sum(select(hit, slot, zero), 1i32);
            let dst: PointerTile<*mut i32, { [BT] }> = addptr_tile(base, pos);
            unsafe { store_ptr_tko(dst, at, ordering::Weak, None::<scope::TileBlock>, Some(ok), None, Latency::<0>) };
            next = next + reduce_sum(h, 0i32);
        }

        // Pass 3: the padding slots, after each bucket's assignments and past the num_tokens_post_padded.
        let filled: Tile<i32, { [E2] }> = starts + counts;
        let starts_b: Tile<i32, { [BT, E2] }> = starts.reshape(shape![1, E2]).broadcast(shape![BT, E2]);
        let ends_b: Tile<i32, { [BT, E2] }> = ends.reshape(shape![1, E2]).broadcast(shape![BT, E2]);
        let filled_b: Tile<i32, { [BT, E2] }> = filled.reshape(shape![1, E2]).broadcast(shape![BT, E2]);
        let total_t: Tile<i32, { [BT] }> = sum.broadcast(shape![BT]);
        let max_t: Tile<i32, { [BT] }> = max_padded.broadcast(shape![BT]);
        let slots: i32 = (max_padded + BT - 1i32) / BT;
        for c in 0i32..slots {
            let p: Tile<i32, { [BT] }> = broadcast_scalar(c * BT, shape![BT]) + lane;
            let pb: Tile<i32, { [BT, E2] }> = p.reshape(shape![BT, 1]).broadcast(shape![BT, E2]);
            let pad_in: Tile<bool, { [BT, E2] }> = ge_tile(pb, filled_b) & lt_tile(pb, ends_b);
            let n_in: Tile<i32, { [BT] }> = reduce_sum(select(pad_in, one, zero), 1i32);
            let zero_t: Tile<i32, { [BT] }> = constant(0i32, shape![BT]);
            let pad: Tile<bool, { [BT] }> = gt_tile(n_in, zero_t) | (ge_tile(p, total_t) & lt_tile(p, max_t));
            let dst: PointerTile<*mut i32, { [BT] }> = addptr_tile(base, p);
            unsafe { store_ptr_tko(dst, numel_t, ordering::Weak, None::<scope::TileBlock>, Some(pad), None, Latency::<0>) };
        }

        // Pass 4: the expert of every block (blocks past the total get 0; not checked).
        let mut experts_p: PartitionMut<i32, { [BT] }> = unsafe { expert_ids.partition_full_mut(shape![BT]) };
        let blk_t: Tile<i32, { [BT] }> = broadcast_scalar(block, shape![BT]);
        let block_chunks: i32 = (max_blocks + BT - 1i32) / BT;
        for c in 0i32..block_chunks {
            let b: Tile<i32, { [BT] }> = broadcast_scalar(c * BT, shape![BT]) + lane;
            let pb: Tile<i32, { [BT, E2] }> = (b * blk_t).reshape(shape![BT, 1]).broadcast(shape![BT, E2]);
            let inb: Tile<bool, { [BT, E2] }> = ge_tile(pb, starts_b) & lt_tile(pb, ends_b);
            let e: Tile<i32, { [BT] }> = reduce_sum(select(inb, ex_b, zero), 1i32);
            unsafe { store_view_tko_mut(&mut experts_p, e, [c], ordering::Weak, scope::TileBlock, None, tma::Disabled) };
        }
    }
}
