// SPDX-License-Identifier: Apache-2.0
//! portbench's cuTile Rust mixture-of-experts kernels (issue 17): moe_align_block, and the
//! grouped GEMM and top-k sum of moe's launch plan (`crate::moe::plan`).
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

    /// moe_align_block's first launch (the `parallel` plan), grid `[P]`: tile block `p` counts the
    /// assignments per expert of its `BT`-entry chunk of `topk_ids` (entries `[p BT, (p+1) BT)`,
    /// those past `numel` masked) into row `p` of `counts` `[P, E2]` (scratch, every element
    /// written here), and sets its share of `sorted_token_ids` (`[max_padded]`, `fill_per`
    /// `FT`-element tiles from tile `p fill_per`, clipped to the tensor) to `numel`, the padding
    /// value: the second launch then scatters the assignments over it (tilegym: `fill_`, then
    /// its stage-4 scatter). Tiles past the tensor are skipped by the loop count.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn moe_align_count<const E2: i32, const BT: i32, const FT: i32>(
        topk_ids: &Tensor<i32, { [-1] }>,
        counts: &Tensor<i32, { [-1, -1] }>,
        sorted_token_ids: &Tensor<i32, { [-1] }>,
        fill_per: i32,
    ) {
        let p: i32 = get_tile_block_id().0;
        let numel: i32 = get_shape_dim(topk_ids.shape(), 0i32);
        let max_padded: i32 = get_shape_dim(sorted_token_ids.shape(), 0i32);
        let ids_p: Partition<i32, { [BT] }> = topk_ids.partition(shape![BT]);
        let lane: Tile<i32, { [BT] }> = iota(shape![BT]);
        let ex: Tile<i32, { [E2] }> = iota(shape![E2]);
        let ex_b: Tile<i32, { [BT, E2] }> = ex.reshape(shape![1, E2]).broadcast(shape![BT, E2]);
        let one: Tile<i32, { [BT, E2] }> = constant(1i32, shape![BT, E2]);
        let zero: Tile<i32, { [BT, E2] }> = constant(0i32, shape![BT, E2]);
        let numel_t: Tile<i32, { [BT] }> = numel.broadcast(shape![BT]);
        let idt: Tile<i32, { [BT] }> = ids_p.load([p]);
        let at: Tile<i32, { [BT] }> = broadcast_scalar(p * BT, shape![BT]) + lane;
        let valid: Tile<bool, { [BT, E2] }> = lt_tile(at, numel_t).reshape(shape![BT, 1]).broadcast(shape![BT, E2]);
        let hit: Tile<bool, { [BT, E2] }> = eq_tile(idt.reshape(shape![BT, 1]).broadcast(shape![BT, E2]), ex_b) & valid;
        let n: Tile<i32, { [E2] }> = reduce_sum(select(hit, one, zero), 0i32);
        let row_n: Tile<i32, { [1, E2] }> = n.reshape(shape![1, E2]);
        let mut counts_p: PartitionMut<i32, { [1, E2] }> = unsafe { counts.partition_full_mut(shape![1, E2]) };
        unsafe { store_view_tko_mut(&mut counts_p, row_n, [p, 0i32], ordering::Weak, scope::TileBlock, None, tma::Disabled) };

        let mut sorted_p: PartitionMut<i32, { [FT] }> = unsafe { sorted_token_ids.partition_full_mut(shape![FT]) };
        let pad: Tile<i32, { [FT] }> = numel.broadcast(shape![FT]);
        let tiles: i32 = (max_padded + FT - 1i32) / FT;
        let first: i32 = p * fill_per;
        let mine: i32 = min(max(tiles - first, 0i32), fill_per);
        for j in 0i32..mine {
            unsafe { store_view_tko_mut(&mut sorted_p, pad, [first + j], ordering::Weak, scope::TileBlock, None, tma::Disabled) };
        }
    }

    /// moe_align_block's second launch, grid `[P]` (`P` a power of two): every tile block loads
    /// all of `counts` `[P, E2]` and derives the buckets (padded to `BLOCK`, their starts and
    /// ends in expert order, the padded total); block `p` scatters the assignments of its chunk
    /// to `start[e]` + the assignments of `e` in chunks before `p` + the earlier ones of `e` in
    /// its own chunk (stable order, as the single-block kernel); block 0 writes
    /// `num_tokens_post_padded`; each block writes its share of `expert_ids` (`blocks_per`
    /// `BB`-block tiles from tile `p blocks_per`): the expert whose bucket holds the block's
    /// first slot (the number of buckets ending at or before it), 0 past the total.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn moe_align_scatter<const E2: i32, const BT: i32, const P: i32, const BB: i32, const BLOCK: i32>(
        topk_ids: &Tensor<i32, { [-1] }>,
        counts: &Tensor<i32, { [-1, -1] }>,
        sorted_token_ids: *mut i32,
        expert_ids: &Tensor<i32, { [-1] }>,
        num_tokens_post_padded: &Tensor<i32, { [-1] }>,
        blocks_per: i32,
    ) {
        let p: i32 = get_tile_block_id().0;
        let numel: i32 = get_shape_dim(topk_ids.shape(), 0i32);
        let max_blocks: i32 = get_shape_dim(expert_ids.shape(), 0i32);
        let counts_p: Partition<i32, { [P, E2] }> = counts.partition(shape![P, E2]);
        let c: Tile<i32, { [P, E2] }> = counts_p.load([0i32, 0i32]);
        let tot: Tile<i32, { [E2] }> = reduce_sum(c, 0i32);
        let block: i32 = BLOCK;
        let bm1: Tile<i32, { [E2] }> = broadcast_scalar(block - 1i32, shape![E2]);
        let blk: Tile<i32, { [E2] }> = broadcast_scalar(block, shape![E2]);
        let padded: Tile<i32, { [E2] }> = ((tot + bm1) / blk) * blk;
        let ends: Tile<i32, { [E2] }> = scan_sum(padded, 0i32, reverse::Forward, 0i32);
        let starts: Tile<i32, { [E2] }> = ends - padded;
        let sum: Tile<i32, { [1] }> = reduce_sum(padded.reshape(shape![1, E2]), 1i32);
        let total: i32 = tile_to_scalar(sum.reshape(shape![]));
        let row: Tile<i32, { [P] }> = iota(shape![P]);
        let p_t: Tile<i32, { [P] }> = p.broadcast(shape![P]);
        let before: Tile<bool, { [P, E2] }> = lt_tile(row, p_t).reshape(shape![P, 1]).broadcast(shape![P, E2]);
        let zero_pe: Tile<i32, { [P, E2] }> = constant(0i32, shape![P, E2]);
        let prior: Tile<i32, { [E2] }> = reduce_sum(select(before, c, zero_pe), 0i32);
        let next: Tile<i32, { [E2] }> = starts + prior;

        // The assignments of chunk p.
        let ids_p: Partition<i32, { [BT] }> = topk_ids.partition(shape![BT]);
        let lane: Tile<i32, { [BT] }> = iota(shape![BT]);
        let ex: Tile<i32, { [E2] }> = iota(shape![E2]);
        let ex_b: Tile<i32, { [BT, E2] }> = ex.reshape(shape![1, E2]).broadcast(shape![BT, E2]);
        let one: Tile<i32, { [BT, E2] }> = constant(1i32, shape![BT, E2]);
        let zero: Tile<i32, { [BT, E2] }> = constant(0i32, shape![BT, E2]);
        let numel_t: Tile<i32, { [BT] }> = numel.broadcast(shape![BT]);
        let idt: Tile<i32, { [BT] }> = ids_p.load([p]);
        let at: Tile<i32, { [BT] }> = broadcast_scalar(p * BT, shape![BT]) + lane;
        let ok: Tile<bool, { [BT] }> = lt_tile(at, numel_t);
        let valid: Tile<bool, { [BT, E2] }> = ok.reshape(shape![BT, 1]).broadcast(shape![BT, E2]);
        let hit: Tile<bool, { [BT, E2] }> = eq_tile(idt.reshape(shape![BT, 1]).broadcast(shape![BT, E2]), ex_b) & valid;
        let h: Tile<i32, { [BT, E2] }> = select(hit, one, zero);
        let rank: Tile<i32, { [BT, E2] }> = scan_sum(h, 0i32, reverse::Forward, 0i32);
        let slot: Tile<i32, { [BT, E2] }> = rank - one + next.reshape(shape![1, E2]).broadcast(shape![BT, E2]);
        let pos: Tile<i32, { [BT] }> = reduce_sum(select(hit, slot, zero), 1i32);
        let base: PointerTile<*mut i32, { [] }> = pointer_to_tile(sorted_token_ids);
        let base: PointerTile<*mut i32, { [1] }> = reshape_ptr(base, shape![1]);
        let base: PointerTile<*mut i32, { [BT] }> = broadcast_ptr(base, shape![BT]);
        let dst: PointerTile<*mut i32, { [BT] }> = addptr_tile(base, pos);
        unsafe { store_ptr_tko(dst, at, ordering::Weak, None::<scope::TileBlock>, Some(ok), None, Latency::<0>) };

        // The padded total, once (block 0: a loop of one or no trips, no branch).
        let mut total_p: PartitionMut<i32, { [1] }> = unsafe { num_tokens_post_padded.partition_full_mut(shape![1]) };
        let once: i32 = 1i32 - min(p, 1i32);
        for _once in 0i32..once {
            unsafe { store_view_tko_mut(&mut total_p, sum, [0i32], ordering::Weak, scope::TileBlock, None, tma::Disabled) };
        }

        // This block's share of expert_ids.
        let mut experts_p: PartitionMut<i32, { [BB] }> = unsafe { expert_ids.partition_full_mut(shape![BB]) };
        let lane_b: Tile<i32, { [BB] }> = iota(shape![BB]);
        let blk_b: Tile<i32, { [BB] }> = broadcast_scalar(block, shape![BB]);
        let total_b: Tile<i32, { [BB] }> = total.broadcast(shape![BB]);
        let zero_b: Tile<i32, { [BB] }> = constant(0i32, shape![BB]);
        let ends_b: Tile<i32, { [BB, E2] }> = ends.reshape(shape![1, E2]).broadcast(shape![BB, E2]);
        let one_be: Tile<i32, { [BB, E2] }> = constant(1i32, shape![BB, E2]);
        let zero_be: Tile<i32, { [BB, E2] }> = constant(0i32, shape![BB, E2]);
        let tiles: i32 = (max_blocks + BB - 1i32) / BB;
        let first: i32 = p * blocks_per;
        let mine: i32 = min(max(tiles - first, 0i32), blocks_per);
        for j in 0i32..mine {
            let b: Tile<i32, { [BB] }> = broadcast_scalar((first + j) * BB, shape![BB]) + lane_b;
            let slot0: Tile<i32, { [BB] }> = b * blk_b;
            let slot_b: Tile<i32, { [BB, E2] }> = slot0.reshape(shape![BB, 1]).broadcast(shape![BB, E2]);
            let done: Tile<bool, { [BB, E2] }> = ge_tile(slot_b, ends_b);
            let owner: Tile<i32, { [BB] }> = reduce_sum(select(done, one_be, zero_be), 1i32);
            let used: Tile<bool, { [BB] }> = lt_tile(slot0, total_b);
            let e: Tile<i32, { [BB] }> = select(used, owner, zero_b);
            unsafe { store_view_tko_mut(&mut experts_p, e, [first + j], ordering::Weak, scope::TileBlock, None, tma::Disabled) };
        }
    }

    /// The `(sorted block, column tile)` of this tile block in the grouped GEMMs' 1-D grid:
    /// `ceil(max_padded / BM) * ceil(n / BN)` blocks in groups of `GROUP_M` block rows
    /// (tilegym's `_fused_moe_kernel` order).
    fn grouped_tile<const BM: i32, const BN: i32, const GROUP_M: i32>(sorted_token_ids: &Tensor<i32, { [-1] }>, n: i32) -> (i32, i32) {
        let em: i32 = get_shape_dim(sorted_token_ids.shape(), 0i32);
        let tiles_m: i32 = (em + BM - 1i32) / BM;
        let tiles_n: i32 = (n + BN - 1i32) / BN;
        let bid: i32 = get_tile_block_id().0;
        let in_group: i32 = GROUP_M * tiles_n;
        let first_m: i32 = (bid / in_group) * GROUP_M;
        let rows_in: i32 = min(tiles_m - first_m, GROUP_M);
        let tm: i32 = first_m + (bid % in_group) % rows_in;
        let tn: i32 = (bid % in_group) / rows_in;
        (tm, tn)
    }

    /// One `BM x BN` tile of `C[id] = A[id / TOPK] W[e]^T (x topk_weights[id] with MUL = 1)`
    /// for the ids of sorted block `tm` (all of expert `e = expert_ids[tm]`): tilegym's
    /// `_fused_moe_kernel`, 1-D grid of `ceil(max_padded / BM) * ceil(N / BN)` blocks in groups
    /// of `GROUP_M` block rows. `a` is A `[rows, K]` row-major, gathered by row through a
    /// pointer tile; `w` the experts' weights `[E, N, K]` loaded through TMA tiles; `c` is C
    /// `[numel, N]` row-major, scattered by row. Slots of padding (`id = numel`) and blocks at
    /// or past `num_tokens_post_padded` load and store nothing (their K loop is empty).
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn moe_gemm<
        E: ElementType,
        const BM: i32,
        const BN: i32,
        const BK: i32,
        const TOPK: i32,
        const MUL: i32,
        const GROUP_M: i32,
        const KA: i32,
        const NC: i32,
    >(
        a: *mut E,
        w: &Tensor<E, { [-1, -1, -1] }>,
        c: *mut E,
        topk_weights: *mut f32,
        sorted_token_ids: &Tensor<i32, { [-1] }>,
        expert_ids: &Tensor<i32, { [-1] }>,
        num_tokens_post_padded: &Tensor<i32, { [-1] }>,
        numel: i32,
    ) {
        // K and N as constants (tilegym's A_STRIDE_1, N, K): row offsets `row * K` are then
        // known multiples of 8 elements, so the gathered rows load and the scattered rows store
        // 16 bytes at a time (LDGSTS.128 / STG.128) instead of one element per instruction.
        let n: i32 = NC;
        let k: i32 = KA;
        let (tm, tn): (i32, i32) = grouped_tile::<BM, BN, GROUP_M>(sorted_token_ids, n);

        let total_p: Partition<i32, { [1] }> = num_tokens_post_padded.partition(shape![1]);
        let total_t: Tile<i32, { [1] }> = total_p.load([0i32]);
        let total: i32 = tile_to_scalar(total_t.reshape(shape![]));
        let ex_p: Partition<i32, { [1] }> = expert_ids.partition(shape![1]);
        let ex_t: Tile<i32, { [1] }> = ex_p.load([tm]);
        let ex: i32 = tile_to_scalar(ex_t.reshape(shape![]));
        // 1 while the block holds assignments, else 0 (no branch: an empty K loop; a branch
        // around a constant-count loop measured slower on the H200, 0.43 against 0.51).
        let live: i32 = min(max(total - tm * BM, 0i32), 1i32);
        let k_tiles: i32 = live * ((k + BK - 1i32) / BK);

        let ids_p: Partition<i32, { [BM] }> = sorted_token_ids.partition(shape![BM]);
        let ids: Tile<i32, { [BM] }> = ids_p.load([tm]);
        let lane: Tile<i32, { [BM] }> = iota(shape![BM]);
        let slot: Tile<i32, { [BM] }> = broadcast_scalar(tm * BM, shape![BM]) + lane;
        let numel_t: Tile<i32, { [BM] }> = numel.broadcast(shape![BM]);
        let total_b: Tile<i32, { [BM] }> = total.broadcast(shape![BM]);
        let valid: Tile<bool, { [BM] }> = lt_tile(ids, numel_t) & lt_tile(slot, total_b);
        let topk: i32 = TOPK;
        let topk_t: Tile<i32, { [BM] }> = broadcast_scalar(topk, shape![BM]);
        let rows: Tile<i32, { [BM] }> = ids / topk_t;
        let k_b: Tile<i32, { [BM] }> = k.broadcast(shape![BM]);
        let a_rows: Tile<i32, { [BM, BK] }> = (rows * k_b).reshape(shape![BM, 1]).broadcast(shape![BM, BK]);
        let valid_a: Tile<bool, { [BM, BK] }> = valid.reshape(shape![BM, 1]).broadcast(shape![BM, BK]);
        let col_k: Tile<i32, { [BK] }> = iota(shape![BK]);
        let a_base: PointerTile<*mut E, { [] }> = unsafe { assume_div_by::<_, 16>(pointer_to_tile(a)) };
        let a_base: PointerTile<*mut E, { [1, 1] }> = reshape_ptr(a_base, shape![1, 1]);
        let a_base: PointerTile<*mut E, { [BM, BK] }> = broadcast_ptr(a_base, shape![BM, BK]);
        let w_p: Partition<E, { [1, BN, BK] }> = w.partition(shape![1, BN, BK]);

        let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
        for kt in 0i32..k_tiles {
            let cols: Tile<i32, { [BK] }> = broadcast_scalar(kt * BK, shape![BK]) + col_k;
            let off: Tile<i32, { [BM, BK] }> = a_rows + cols.reshape(shape![1, BK]).broadcast(shape![BM, BK]);
            let ptrs: PointerTile<*mut E, { [BM, BK] }> = addptr_tile(a_base, off);
            let (at, _tok): (Tile<E, { [BM, BK] }>, Token) =
                unsafe { load_ptr_tko(ptrs, ordering::Weak, None::<scope::TileBlock>, Some(valid_a), None, None, Latency::<0>) };
            let wt: Tile<E, { [1, BN, BK] }> = w_p.load([ex, tn, kt]);
            let wt: Tile<E, { [BN, BK] }> = wt.reshape(shape![BN, BK]);
            let bt: Tile<E, { [BK, BN] }> = wt.transpose();
            acc = mmaf(at, bt, acc);
        }
        if MUL == 1i32 {
            let r_base: PointerTile<*mut f32, { [] }> = pointer_to_tile(topk_weights);
            let r_base: PointerTile<*mut f32, { [1] }> = reshape_ptr(r_base, shape![1]);
            let r_base: PointerTile<*mut f32, { [BM] }> = broadcast_ptr(r_base, shape![BM]);
            let r_ptrs: PointerTile<*mut f32, { [BM] }> = addptr_tile(r_base, ids);
            let (r, _tok): (Tile<f32, { [BM] }>, Token) =
                unsafe { load_ptr_tko(r_ptrs, ordering::Weak, None::<scope::TileBlock>, Some(valid), None, None, Latency::<0>) };
            acc = acc * r.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
        }
        let ct: Tile<E, { [BM, BN] }> = convert_tile(acc);
        let col_n: Tile<i32, { [BN] }> = broadcast_scalar(tn * BN, shape![BN]) + iota(shape![BN]);
        let n_t: Tile<i32, { [BN] }> = n.broadcast(shape![BN]);
        let n_b: Tile<i32, { [BM] }> = n.broadcast(shape![BM]);
        let c_off: Tile<i32, { [BM, BN] }> =
            (ids * n_b).reshape(shape![BM, 1]).broadcast(shape![BM, BN]) + col_n.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let keep: Tile<bool, { [BM, BN] }> = valid.reshape(shape![BM, 1]).broadcast(shape![BM, BN])
            & lt_tile(col_n, n_t).reshape(shape![1, BN]).broadcast(shape![BM, BN]);
        let c_base: PointerTile<*mut E, { [] }> = unsafe { assume_div_by::<_, 16>(pointer_to_tile(c)) };
        let c_base: PointerTile<*mut E, { [1, 1] }> = reshape_ptr(c_base, shape![1, 1]);
        let c_base: PointerTile<*mut E, { [BM, BN] }> = broadcast_ptr(c_base, shape![BM, BN]);
        let c_ptrs: PointerTile<*mut E, { [BM, BN] }> = addptr_tile(c_base, c_off);
        unsafe { store_ptr_tko(c_ptrs, ct, ordering::Weak, None::<scope::TileBlock>, Some(keep), None, Latency::<0>) };
    }

    /// 1 while sorted block `tm` (rows `[tm BM, (tm+1) BM)`) holds assignments, else 0: the
    /// padded total is a multiple of `BM`, so a live block is live in all its rows.
    fn block_live<const BM: i32>(num_tokens_post_padded: &Tensor<i32, { [-1] }>, tm: i32) -> i32 {
        let total_p: Partition<i32, { [1] }> = num_tokens_post_padded.partition(shape![1]);
        let total_t: Tile<i32, { [1] }> = total_p.load([0i32]);
        let total: i32 = tile_to_scalar(total_t.reshape(shape![]));
        min(max(total - tm * BM, 0i32), 1i32)
    }

    /// The sorted plan's first step: `a_sorted[s] = a[sorted_token_ids[s] / TOPK]` for the slots
    /// `s` of the live sorted blocks (`BM` rows, `BH` columns a tile block; grid
    /// `[ceil(max_padded / BM), H / BH]`), so that the grouped GEMMs read A as plain TMA tiles of
    /// contiguous rows instead of gathering it inside their K loops (there tileiras waited for
    /// each step's gathered rows before the next step's loads: docs/cutile-rust.md, moe). Padding
    /// slots (`id = numel`) load nothing; their rows only ever reach padding rows of the GEMMs,
    /// which no store keeps. Blocks past the padded total write nothing (no GEMM reads them).
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn moe_gather<E: ElementType, const BM: i32, const BH: i32, const TOPK: i32, const KA: i32>(
        a: *mut E,
        a_sorted: &Tensor<E, { [-1, -1] }>,
        sorted_token_ids: &Tensor<i32, { [-1] }>,
        num_tokens_post_padded: &Tensor<i32, { [-1] }>,
        numel: i32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let live: i32 = block_live::<BM>(num_tokens_post_padded, pid.0);
        let k: i32 = KA;
        let mut out_p: PartitionMut<E, { [BM, BH] }> = unsafe { a_sorted.partition_full_mut(shape![BM, BH]) };
        for _once in 0i32..live {
            let ids_p: Partition<i32, { [BM] }> = sorted_token_ids.partition(shape![BM]);
            let ids: Tile<i32, { [BM] }> = ids_p.load([pid.0]);
            let valid: Tile<bool, { [BM] }> = lt_tile(ids, numel.broadcast(shape![BM]));
            let rows: Tile<i32, { [BM] }> = ids / broadcast_scalar(TOPK, shape![BM]);
            let cols: Tile<i32, { [BH] }> = broadcast_scalar(pid.1 * BH, shape![BH]) + iota(shape![BH]);
            let off: Tile<i32, { [BM, BH] }> = (rows * k.broadcast(shape![BM])).reshape(shape![BM, 1]).broadcast(shape![BM, BH])
                + cols.reshape(shape![1, BH]).broadcast(shape![BM, BH]);
            let base: PointerTile<*mut E, { [] }> = unsafe { assume_div_by::<_, 16>(pointer_to_tile(a)) };
            let base: PointerTile<*mut E, { [1, 1] }> = reshape_ptr(base, shape![1, 1]);
            let base: PointerTile<*mut E, { [BM, BH] }> = broadcast_ptr(base, shape![BM, BH]);
            let mask: Tile<bool, { [BM, BH] }> = valid.reshape(shape![BM, 1]).broadcast(shape![BM, BH]);
            let (t, _tok): (Tile<E, { [BM, BH] }>, Token) =
                unsafe { load_ptr_tko(addptr_tile(base, off), ordering::Weak, None::<scope::TileBlock>, Some(mask), None, None, Latency::<0>) };
            unsafe { store_view_tko_mut(&mut out_p, t, [pid.0, pid.1], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
        }
    }

    /// The sorted plan's grouped GEMM: one `BM x BN` tile of `a[rows of sorted block tm] w[e]^T`
    /// (`e = expert_ids[tm]`, x `topk_weights[id]` with `MUL` = 1), A `[max_padded, KA]` in sorted
    /// order read as TMA tiles, `w` the experts' weights `[E, NC, KA]`. `SCATTER` = 0 stores the
    /// tile's rows in sorted order (`c` `[max_padded, NC]`), 1 to the assignments' own rows
    /// (`c[id]`, `[numel, NC]`, padding slots dropped). Same 1-D grid and grouping as
    /// [`moe_gemm`]. `LOOP` = 0: one K loop of `live * KA / BK` steps; 1: a loop of `live` trips
    /// (one or none) around a constant K loop (tilegym's form).
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn moe_gemm_sorted<
        E: ElementType,
        const BM: i32,
        const BN: i32,
        const BK: i32,
        const MUL: i32,
        const SCATTER: i32,
        const LOOP: i32,
        const GROUP_M: i32,
        const KA: i32,
        const NC: i32,
    >(
        a: &Tensor<E, { [-1, -1] }>,
        w: &Tensor<E, { [-1, -1, -1] }>,
        c: *mut E,
        topk_weights: *mut f32,
        sorted_token_ids: &Tensor<i32, { [-1] }>,
        expert_ids: &Tensor<i32, { [-1] }>,
        num_tokens_post_padded: &Tensor<i32, { [-1] }>,
        numel: i32,
    ) {
        let n: i32 = NC;
        let (tm, tn): (i32, i32) = grouped_tile::<BM, BN, GROUP_M>(sorted_token_ids, n);
        let live: i32 = block_live::<BM>(num_tokens_post_padded, tm);
        let ex_p: Partition<i32, { [1] }> = expert_ids.partition(shape![1]);
        let ex_t: Tile<i32, { [1] }> = ex_p.load([tm]);
        let ex: i32 = tile_to_scalar(ex_t.reshape(shape![]));
        let a_p: Partition<E, { [BM, BK] }> = a.partition(shape![BM, BK]);
        let w_p: Partition<E, { [1, BN, BK] }> = w.partition(shape![1, BN, BK]);
        let k_steps: i32 = KA / BK;
        let outer: i32 = if LOOP == 1i32 { live } else { 1i32 };
        let inner: i32 = if LOOP == 1i32 { k_steps } else { live * k_steps };
        for _once in 0i32..outer {
            let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
            for kt in 0i32..inner {
                let at: Tile<E, { [BM, BK] }> = a_p.load([tm, kt]);
                let wt: Tile<E, { [1, BN, BK] }> = w_p.load([ex, tn, kt]);
                let wt: Tile<E, { [BN, BK] }> = wt.reshape(shape![BN, BK]);
                let bt: Tile<E, { [BK, BN] }> = wt.transpose();
                acc = mmaf(at, bt, acc);
            }
            let ids_p: Partition<i32, { [BM] }> = sorted_token_ids.partition(shape![BM]);
            let ids: Tile<i32, { [BM] }> = ids_p.load([tm]);
            let slot: Tile<i32, { [BM] }> = broadcast_scalar(tm * BM, shape![BM]) + iota(shape![BM]);
            let live_b: Tile<i32, { [BM] }> = broadcast_scalar(live, shape![BM]);
            let zero_b: Tile<i32, { [BM] }> = constant(0i32, shape![BM]);
            // Dead blocks (LOOP 0 runs this once with an empty K loop) store nothing.
            let alive: Tile<bool, { [BM] }> = gt_tile(live_b, zero_b);
            let valid: Tile<bool, { [BM] }> = lt_tile(ids, numel.broadcast(shape![BM])) & alive;
            if MUL == 1i32 {
                let r_base: PointerTile<*mut f32, { [] }> = pointer_to_tile(topk_weights);
                let r_base: PointerTile<*mut f32, { [1] }> = reshape_ptr(r_base, shape![1]);
                let r_base: PointerTile<*mut f32, { [BM] }> = broadcast_ptr(r_base, shape![BM]);
                let (r, _tok): (Tile<f32, { [BM] }>, Token) = unsafe {
                    load_ptr_tko(addptr_tile(r_base, ids), ordering::Weak, None::<scope::TileBlock>, Some(valid), None, None, Latency::<0>)
                };
                acc = acc * r.reshape(shape![BM, 1]).broadcast(shape![BM, BN]);
            }
            let ct: Tile<E, { [BM, BN] }> = convert_tile(acc);
            let rows: Tile<i32, { [BM] }> = if SCATTER == 1i32 { ids } else { slot };
            let keep_rows: Tile<bool, { [BM] }> = if SCATTER == 1i32 { valid } else { alive };
            let col_n: Tile<i32, { [BN] }> = broadcast_scalar(tn * BN, shape![BN]) + iota(shape![BN]);
            let c_off: Tile<i32, { [BM, BN] }> = (rows * n.broadcast(shape![BM])).reshape(shape![BM, 1]).broadcast(shape![BM, BN])
                + col_n.reshape(shape![1, BN]).broadcast(shape![BM, BN]);
            let keep: Tile<bool, { [BM, BN] }> = keep_rows.reshape(shape![BM, 1]).broadcast(shape![BM, BN])
                & lt_tile(col_n, n.broadcast(shape![BN])).reshape(shape![1, BN]).broadcast(shape![BM, BN]);
            let c_base: PointerTile<*mut E, { [] }> = unsafe { assume_div_by::<_, 16>(pointer_to_tile(c)) };
            let c_base: PointerTile<*mut E, { [1, 1] }> = reshape_ptr(c_base, shape![1, 1]);
            let c_base: PointerTile<*mut E, { [BM, BN] }> = broadcast_ptr(c_base, shape![BM, BN]);
            unsafe { store_ptr_tko(addptr_tile(c_base, c_off), ct, ordering::Weak, None::<scope::TileBlock>, Some(keep), None, Latency::<0>) };
        }
    }

    /// silu_and_mul of the sorted plan: `y[s] = silu(x[s, 0]) * x[s, 1]` over the rows of the live
    /// sorted blocks only (`x` `[max_padded, 2, I]`, `y` `[max_padded, I]`; grid
    /// `[ceil(max_padded / BR), ceil(I / BH)]`, `BR` divides the GEMMs' `BM`, so a row tile is
    /// live as a whole): the same arithmetic as `crate::kernels`' silu_and_mul.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn moe_silu_and_mul<T: ElementType, const BR: i32, const BH: i32>(
        x: &Tensor<T, { [-1, -1, -1] }>,
        y: &Tensor<T, { [-1, -1] }>,
        num_tokens_post_padded: &Tensor<i32, { [-1] }>,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let live: i32 = block_live::<BR>(num_tokens_post_padded, pid.0);
        let xp: Partition<T, { [BR, 1, BH] }> = x.partition(shape![BR, 1, BH]);
        let mut yp: PartitionMut<T, { [BR, BH] }> = unsafe { y.partition_full_mut(shape![BR, BH]) };
        for _once in 0i32..live {
            let gt: Tile<T, { [BR, 1, BH] }> = xp.load([pid.0, 0i32, pid.1]);
            let ut: Tile<T, { [BR, 1, BH] }> = xp.load([pid.0, 1i32, pid.1]);
            let g: Tile<f32, { [BR, 1, BH] }> = convert_tile(gt);
            let u: Tile<f32, { [BR, 1, BH] }> = convert_tile(ut);
            let g: Tile<f32, { [BR, BH] }> = g.reshape(shape![BR, BH]);
            let u: Tile<f32, { [BR, BH] }> = u.reshape(shape![BR, BH]);
            let one: Tile<f32, { [BR, BH] }> = constant(1.0f32, shape![BR, BH]);
            let neg_log2e: Tile<f32, { [BR, BH] }> = constant(-1.4426950408889634f32, shape![BR, BH]);
            let e: Tile<f32, { [BR, BH] }> = exp2(mulf(g, neg_log2e, rounding::NearestEven, ftz::Enabled), ftz::Enabled);
            let sg: Tile<f32, { [BR, BH] }> = true_div(g, one + e);
            let yt: Tile<T, { [BR, BH] }> = convert_tile(sg * u);
            unsafe { store_view_tko_mut(&mut yp, yt, [pid.0, pid.1], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
        }
    }

    /// `y[t] = sum_k x[t, k]` over the top-k axis of `x` `[M, TOPK, H]` in f32, rounded once
    /// (torch.sum over dim 1 and torch.add of tilegym's wrapper); grid `[ceil(M / BR),
    /// ceil(H / BH)]`.
    #[cutile::entry()]
    fn moe_sum<T: ElementType, const BR: i32, const BH: i32, const TOPK: i32>(
        x: &Tensor<T, { [-1, -1, -1] }>,
        y: &mut Tensor<T, { [BR, BH] }>,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let xp: Partition<T, { [BR, 1, BH] }> = x.partition(shape![BR, 1, BH]);
        let mut acc: Tile<f32, { [BR, BH] }> = constant(0.0f32, shape![BR, BH]);
        for k in 0i32..TOPK {
            let t: Tile<T, { [BR, 1, BH] }> = xp.load([pid.0, k, pid.1]);
            let f: Tile<f32, { [BR, 1, BH] }> = convert_tile(t);
            acc = acc + f.reshape(shape![BR, BH]);
        }
        let yt: Tile<T, { [BR, BH] }> = convert_tile(acc);
        y.store(yt);
    }
}
