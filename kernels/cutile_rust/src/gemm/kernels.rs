// SPDX-License-Identifier: Apache-2.0
//! portbench's cuTile Rust matrix products (matmul, bmm, group_gemm) and splitk_reduce.
//!
//! A `#[cutile::module]` of its own (`portbench_gemm`), so that these kernels and the
//! memory-bound ones (`crate::kernels`) grow independently; the exporter picks the module by
//! kernel name (`super::module_of`). Facts the kernels rely on (docs/cutile-rust.md, "Matrix
//! products"):
//! - Operands are shared `&Tensor` views; `C` is written through a full-tensor partition at the
//!   tile the schedule picks (swizzled or persistent), so no kernel uses the launch-grid
//!   partition of a `&mut Tensor`.
//! - Loads go through zero-padded partition views (TMA), so sizes need not be multiples of the
//!   tile; stores through the partition drop the lanes outside `C`.
//! - `M` is the operand type of the tensor-core product: the element type itself (f16, bf16,
//!   f8e4m3fn) or `tf32` for f32 tensors (as tilegym casts). Accumulation is always f32.
//! - `TA`/`TB` = 1: the operand is stored transposed (A as [K, M], B as [N, K]); the kernel
//!   loads the stored tile and transposes it in registers, as tilegym does.
//! - `LAT` is the load-latency hint of the operand loads (1..10), 0 for none (tileiras
//!   infers it). `GROUP_M` rows of tiles per swizzle group (tilegym: 8).
//! - Every `if` on a const generic is resolved when the kernel is specialised.

#[cutile::module]
pub mod portbench_gemm {
    use cutile::core::*;

    /// A tile of a 2-D partition at `(i, j)`, with the load-latency hint `LAT` (0: none).
    fn load_2d<E: ElementType, const R: i32, const C: i32, const LAT: i32>(
        p: &Partition<E, { [R, C] }>,
        i: i32,
        j: i32,
    ) -> Tile<E, { [R, C] }> {
        if LAT > 0i32 {
            let t: Tile<E, { [R, C] }> =
                load_view_tko(p, [i, j], ordering::Weak, scope::TileBlock, Some(LAT), tma::Enabled);
            t
        } else {
            let t: Tile<E, { [R, C] }> = load_view_tko(p, [i, j], ordering::Weak, scope::TileBlock, None, tma::Enabled);
            t
        }
    }

    /// A tile of a 3-D partition at `(q, i, j)`, with the load-latency hint `LAT` (0: none).
    fn load_3d<E: ElementType, const R: i32, const C: i32, const LAT: i32>(
        p: &Partition<E, { [1, R, C] }>,
        q: i32,
        i: i32,
        j: i32,
    ) -> Tile<E, { [R, C] }> {
        if LAT > 0i32 {
            let t: Tile<E, { [1, R, C] }> =
                load_view_tko(p, [q, i, j], ordering::Weak, scope::TileBlock, Some(LAT), tma::Enabled);
            let u: Tile<E, { [R, C] }> = t.reshape(shape![R, C]);
            u
        } else {
            let t: Tile<E, { [1, R, C] }> =
                load_view_tko(p, [q, i, j], ordering::Weak, scope::TileBlock, None, tma::Enabled);
            let u: Tile<E, { [R, C] }> = t.reshape(shape![R, C]);
            u
        }
    }

    /// The `(row, column)` tile of C that linear tile `t` of a `tiles_m x tiles_n` grid is, in
    /// groups of `GROUP_M` tile rows (consecutive tiles share B's columns in L2).
    fn swizzle<const GROUP_M: i32>(t: i32, tiles_m: i32, tiles_n: i32) -> (i32, i32) {
        let in_group: i32 = GROUP_M * tiles_n;
        let first_m: i32 = (t / in_group) * GROUP_M;
        let rows: i32 = min(tiles_m - first_m, GROUP_M);
        let tm: i32 = first_m + t % rows;
        let tn: i32 = (t % in_group) / rows;
        (tm, tn)
    }

    /// `acc + op(A)[tm] op(B)[tn]` over all of K: `k_tiles` steps of `BK`.
    fn gemm_tile<
        E: ElementType,
        M: ElementType,
        const BM: i32,
        const BN: i32,
        const BK: i32,
        const TA: i32,
        const TB: i32,
        const LAT: i32,
    >(
        a_p: &Partition<E, { [BM, BK] }>,
        at_p: &Partition<E, { [BK, BM] }>,
        b_p: &Partition<E, { [BK, BN] }>,
        bt_p: &Partition<E, { [BN, BK] }>,
        tm: i32,
        tn: i32,
        k_tiles: i32,
    ) -> Tile<f32, { [BM, BN] }> {
        let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
        for kt in 0i32..k_tiles {
            let at: Tile<E, { [BM, BK] }> = if TA == 1i32 {
                let t: Tile<E, { [BK, BM] }> = load_2d::<E, BK, BM, LAT>(at_p, kt, tm);
                let u: Tile<E, { [BM, BK] }> = t.transpose();
                u
            } else {
                let t: Tile<E, { [BM, BK] }> = load_2d::<E, BM, BK, LAT>(a_p, tm, kt);
                t
            };
            let bt: Tile<E, { [BK, BN] }> = if TB == 1i32 {
                let t: Tile<E, { [BN, BK] }> = load_2d::<E, BN, BK, LAT>(bt_p, tn, kt);
                let u: Tile<E, { [BK, BN] }> = t.transpose();
                u
            } else {
                let t: Tile<E, { [BK, BN] }> = load_2d::<E, BK, BN, LAT>(b_p, kt, tn);
                t
            };
            let am: Tile<M, { [BM, BK] }> = convert_tile(at);
            let bm: Tile<M, { [BK, BN] }> = convert_tile(bt);
            acc = mmaf(am, bm, acc);
        }
        acc
    }

    /// matmul, one `BM x BN` tile of `C = op(A) op(B)` per tile block: a 1-D grid of
    /// `ceil(M/BM) * ceil(N/BN)` blocks in [`swizzle`] order (tilegym's `_matmul_kernel`
    /// schedule). `A` is [M, K] ([K, M] with `TA`), `B` [K, N] ([N, K] with `TB`), `C` [M, N].
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn matmul<
        E: ElementType,
        M: ElementType,
        const BM: i32,
        const BN: i32,
        const BK: i32,
        const GROUP_M: i32,
        const TA: i32,
        const TB: i32,
        const LAT: i32,
    >(
        a: &Tensor<E, { [-1, -1] }>,
        b: &Tensor<E, { [-1, -1] }>,
        c: &Tensor<E, { [-1, -1] }>,
    ) {
        let m: i32 = get_shape_dim(c.shape(), 0i32);
        let n: i32 = get_shape_dim(c.shape(), 1i32);
        let k: i32 = if TB == 1i32 { get_shape_dim(b.shape(), 1i32) } else { get_shape_dim(b.shape(), 0i32) };
        let (tm, tn): (i32, i32) = swizzle::<GROUP_M>(get_tile_block_id().0, (m + BM - 1i32) / BM, (n + BN - 1i32) / BN);
        let a_p: Partition<E, { [BM, BK] }> = a.partition(shape![BM, BK]);
        let at_p: Partition<E, { [BK, BM] }> = a.partition(shape![BK, BM]);
        let b_p: Partition<E, { [BK, BN] }> = b.partition(shape![BK, BN]);
        let bt_p: Partition<E, { [BN, BK] }> = b.partition(shape![BN, BK]);
        let acc: Tile<f32, { [BM, BN] }> =
            gemm_tile::<E, M, BM, BN, BK, TA, TB, LAT>(&a_p, &at_p, &b_p, &bt_p, tm, tn, (k + BK - 1i32) / BK);
        let ct: Tile<E, { [BM, BN] }> = convert_tile(acc);
        let mut c_p: PartitionMut<E, { [BM, BN] }> = unsafe { c.partition_full_mut(shape![BM, BN]) };
        unsafe { store_view_tko_mut(&mut c_p, ct, [tm, tn], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
    }

    /// matmul, static persistent: the grid (a multiple of the SM count, or the tile count if
    /// smaller) walks the output tiles `bid, bid + grid, ...` in [`swizzle`] order (tilegym's
    /// `_static_persistent_matmul_kernel` schedule).
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn matmul_persistent<
        E: ElementType,
        M: ElementType,
        const BM: i32,
        const BN: i32,
        const BK: i32,
        const GROUP_M: i32,
        const TA: i32,
        const TB: i32,
        const LAT: i32,
    >(
        a: &Tensor<E, { [-1, -1] }>,
        b: &Tensor<E, { [-1, -1] }>,
        c: &Tensor<E, { [-1, -1] }>,
    ) {
        let m: i32 = get_shape_dim(c.shape(), 0i32);
        let n: i32 = get_shape_dim(c.shape(), 1i32);
        let k: i32 = if TB == 1i32 { get_shape_dim(b.shape(), 1i32) } else { get_shape_dim(b.shape(), 0i32) };
        let tiles_m: i32 = (m + BM - 1i32) / BM;
        let tiles_n: i32 = (n + BN - 1i32) / BN;
        let k_tiles: i32 = (k + BK - 1i32) / BK;
        let a_p: Partition<E, { [BM, BK] }> = a.partition(shape![BM, BK]);
        let at_p: Partition<E, { [BK, BM] }> = a.partition(shape![BK, BM]);
        let b_p: Partition<E, { [BK, BN] }> = b.partition(shape![BK, BN]);
        let bt_p: Partition<E, { [BN, BK] }> = b.partition(shape![BN, BK]);
        let mut c_p: PartitionMut<E, { [BM, BN] }> = unsafe { c.partition_full_mut(shape![BM, BN]) };
        let step: i32 = get_num_tile_blocks().0;
        for t in (get_tile_block_id().0..tiles_m * tiles_n).step_by(step as usize) {
            let (tm, tn): (i32, i32) = swizzle::<GROUP_M>(t, tiles_m, tiles_n);
            let acc: Tile<f32, { [BM, BN] }> =
                gemm_tile::<E, M, BM, BN, BK, TA, TB, LAT>(&a_p, &at_p, &b_p, &bt_p, tm, tn, k_tiles);
            let ct: Tile<E, { [BM, BN] }> = convert_tile(acc);
            unsafe { store_view_tko_mut(&mut c_p, ct, [tm, tn], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
        }
    }

    /// bmm, static persistent over `Q x tiles`: `C[q] = op(A[q]) op(B[q])` with A [Q, M, K]
    /// ([Q, K, M] with `TA`), B [Q, K, N] ([Q, N, K] with `TB`), C [Q, M, N]; tile `t` is batch
    /// `t / tiles` and [`swizzle`] inside it (tilegym's `_static_persistent_bmm_kernel`).
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn bmm_persistent<
        E: ElementType,
        M: ElementType,
        const BM: i32,
        const BN: i32,
        const BK: i32,
        const GROUP_M: i32,
        const TA: i32,
        const TB: i32,
        const LAT: i32,
    >(
        a: &Tensor<E, { [-1, -1, -1] }>,
        b: &Tensor<E, { [-1, -1, -1] }>,
        c: &Tensor<E, { [-1, -1, -1] }>,
    ) {
        let q: i32 = get_shape_dim(c.shape(), 0i32);
        let m: i32 = get_shape_dim(c.shape(), 1i32);
        let n: i32 = get_shape_dim(c.shape(), 2i32);
        let k: i32 = if TB == 1i32 { get_shape_dim(b.shape(), 2i32) } else { get_shape_dim(b.shape(), 1i32) };
        let tiles_m: i32 = (m + BM - 1i32) / BM;
        let tiles_n: i32 = (n + BN - 1i32) / BN;
        let per_batch: i32 = tiles_m * tiles_n;
        let k_tiles: i32 = (k + BK - 1i32) / BK;
        let a_p: Partition<E, { [1, BM, BK] }> = a.partition(shape![1, BM, BK]);
        let at_p: Partition<E, { [1, BK, BM] }> = a.partition(shape![1, BK, BM]);
        let b_p: Partition<E, { [1, BK, BN] }> = b.partition(shape![1, BK, BN]);
        let bt_p: Partition<E, { [1, BN, BK] }> = b.partition(shape![1, BN, BK]);
        let mut c_p: PartitionMut<E, { [1, BM, BN] }> = unsafe { c.partition_full_mut(shape![1, BM, BN]) };
        let step: i32 = get_num_tile_blocks().0;
        for t in (get_tile_block_id().0..q * per_batch).step_by(step as usize) {
            let qi: i32 = t / per_batch;
            let (tm, tn): (i32, i32) = swizzle::<GROUP_M>(t % per_batch, tiles_m, tiles_n);
            let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, shape![BM, BN]);
            for kt in 0i32..k_tiles {
                let at: Tile<E, { [BM, BK] }> = if TA == 1i32 {
                    let s: Tile<E, { [BK, BM] }> = load_3d::<E, BK, BM, LAT>(&at_p, qi, kt, tm);
                    let u: Tile<E, { [BM, BK] }> = s.transpose();
                    u
                } else {
                    let s: Tile<E, { [BM, BK] }> = load_3d::<E, BM, BK, LAT>(&a_p, qi, tm, kt);
                    s
                };
                let bt: Tile<E, { [BK, BN] }> = if TB == 1i32 {
                    let s: Tile<E, { [BN, BK] }> = load_3d::<E, BN, BK, LAT>(&bt_p, qi, tn, kt);
                    let u: Tile<E, { [BK, BN] }> = s.transpose();
                    u
                } else {
                    let s: Tile<E, { [BK, BN] }> = load_3d::<E, BK, BN, LAT>(&b_p, qi, kt, tn);
                    s
                };
                let am: Tile<M, { [BM, BK] }> = convert_tile(at);
                let bm: Tile<M, { [BK, BN] }> = convert_tile(bt);
                acc = mmaf(am, bm, acc);
            }
            let ct: Tile<E, { [BM, BN] }> = convert_tile(acc);
            let c3: Tile<E, { [1, BM, BN] }> = ct.reshape(shape![1, BM, BN]);
            // The store carries the latency hint too, as tilegym's bmm store does.
            if LAT > 0i32 {
                unsafe { store_view_tko_mut(&mut c_p, c3, [qi, tm, tn], ordering::Weak, scope::TileBlock, Some(LAT), tma::Enabled) };
            } else {
                unsafe { store_view_tko_mut(&mut c_p, c3, [qi, tm, tn], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
            }
        }
    }

    /// A 2-D row-major `[rows, cols]` tensor view at the address held in `table[g]` (a device
    /// array of 64-bit tensor addresses the harness builds, manifest kind `ptr_table`). The
    /// address is 16-byte aligned (`cuMemAlloc`), and `cols` a multiple of `CDIV` elements
    /// where the exporter says so.
    unsafe fn table_view<E: ElementType, const CDIV: i32>(table: *mut i64, g: i32, rows: i32, cols: i32) -> Tensor<E, { [-1, -1] }> {
        let base: PointerTile<*mut i64, { [] }> = pointer_to_tile(table);
        let at: PointerTile<*mut i64, { [] }> = addptr(base, g);
        let (addr, _tok): (Tile<i64, { [] }>, Token) = unsafe {
            load_ptr_tko(at, ordering::Weak, None::<scope::TileBlock>, None, None, None, Latency::<0>)
        };
        let p: PointerTile<*mut E, { [] }> = int_to_ptr(addr);
        let p: PointerTile<*mut E, { [] }> = unsafe { assume_div_by::<_, 16>(p) };
        let cols: i32 = unsafe { assume_div_by::<_, CDIV>(cols) };
        let shape: Shape<{ [-1, -1] }> = Shape::<{ [-1, -1] }> { dims: &[rows, cols] };
        let strides: Array<{ [-1, 1] }> = Array::<{ [-1, 1] }> { dims: &[cols] };
        let t: Tensor<E, { [-1, -1] }> = unsafe { make_tensor_view(p, shape, strides, new_token_unordered()) };
        t
    }

    /// group_gemm, one persistent launch over all groups: `C_g = A_g op(B_g)` for `g <
    /// groups`, every group of the same shape (A_g [M, K], B_g [K, N] or [N, K] with `TB`,
    /// C_g [M, N]), the tensors separate allocations reached through device tables of their
    /// addresses. Tile `t` is group `t / tiles` and [`swizzle`] inside it.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn group_gemm<
        E: ElementType,
        M: ElementType,
        const BM: i32,
        const BN: i32,
        const BK: i32,
        const GROUP_M: i32,
        const TB: i32,
        const LAT: i32,
        const KDIV: i32,
        const NDIV: i32,
    >(
        a_table: *mut i64,
        b_table: *mut i64,
        c_table: *mut i64,
        groups: i32,
        m: i32,
        n: i32,
        k: i32,
    ) {
        let tiles_m: i32 = (m + BM - 1i32) / BM;
        let tiles_n: i32 = (n + BN - 1i32) / BN;
        let per_group: i32 = tiles_m * tiles_n;
        let k_tiles: i32 = (k + BK - 1i32) / BK;
        let step: i32 = get_num_tile_blocks().0;
        for t in (get_tile_block_id().0..groups * per_group).step_by(step as usize) {
            let g: i32 = t / per_group;
            let (tm, tn): (i32, i32) = swizzle::<GROUP_M>(t % per_group, tiles_m, tiles_n);
            let a: Tensor<E, { [-1, -1] }> = unsafe { table_view::<E, KDIV>(a_table, g, m, k) };
            let b: Tensor<E, { [-1, -1] }> = if TB == 1i32 {
                let v: Tensor<E, { [-1, -1] }> = unsafe { table_view::<E, KDIV>(b_table, g, n, k) };
                v
            } else {
                let v: Tensor<E, { [-1, -1] }> = unsafe { table_view::<E, NDIV>(b_table, g, k, n) };
                v
            };
            let c: Tensor<E, { [-1, -1] }> = unsafe { table_view::<E, NDIV>(c_table, g, m, n) };
            let a_p: Partition<E, { [BM, BK] }> = a.partition(shape![BM, BK]);
            let at_p: Partition<E, { [BK, BM] }> = a.partition(shape![BK, BM]);
            let b_p: Partition<E, { [BK, BN] }> = b.partition(shape![BK, BN]);
            let bt_p: Partition<E, { [BN, BK] }> = b.partition(shape![BN, BK]);
            let acc: Tile<f32, { [BM, BN] }> =
                gemm_tile::<E, M, BM, BN, BK, 0, TB, LAT>(&a_p, &at_p, &b_p, &bt_p, tm, tn, k_tiles);
            let ct: Tile<E, { [BM, BN] }> = convert_tile(acc);
            let mut c_p: PartitionMut<E, { [BM, BN] }> = unsafe { c.partition_full_mut(shape![BM, BN]) };
            unsafe { store_view_tko_mut(&mut c_p, ct, [tm, tn], ordering::Weak, scope::TileBlock, None, tma::Enabled) };
        }
    }

    /// splitk_reduce: `o[b, h, :] = sum_s w_s partial_o[b, h, s, :] / sum_s w_s` with
    /// `w_s = 2^(lse[b, h, s] - max_s lse[b, h, s])` over the `valid` splits that hold keys.
    /// Block `(b, h, d)` reduces columns `d*TD ..` of one head; `S2` is the split count rounded
    /// up to a power of two (the padding reads lse as -inf and partials as 0). `DOT` = 1: the
    /// weighted sum over the splits as one `[1, S2] x [S2, TD]` f32 product on the tensor cores
    /// (tilegym's `USE_DOT`, which it takes from 16 splits on sm_90); 0: an elementwise product
    /// reduced over axis 0. `TMA` = 1: the partials loaded and `o` stored by the tensor memory
    /// accelerator (tilegym's); 0: by per-thread loads and stores.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn splitk_reduce<T: ElementType, const S2: i32, const TD: i32, const DOT: i32, const TMA: i32>(
        partial_o: &Tensor<T, { [-1, -1, -1, -1] }>,
        lse: &Tensor<f32, { [-1, -1, -1] }>,
        o: &Tensor<T, { [-1, -1, -1] }>,
        valid: i32,
    ) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let op: Partition<T, { [1, 1, S2, TD] }> = partial_o.partition(shape![1, 1, S2, TD]);
        let ot: Tile<T, { [1, 1, S2, TD] }> = if TMA == 1i32 {
            let x: Tile<T, { [1, 1, S2, TD] }> =
                load_view_tko(&op, [pid.0, pid.1, 0i32, pid.2], ordering::Weak, scope::TileBlock, Some(2i32), tma::Enabled);
            x
        } else {
            let x: Tile<T, { [1, 1, S2, TD] }> =
                load_view_tko(&op, [pid.0, pid.1, 0i32, pid.2], ordering::Weak, scope::TileBlock, Some(2i32), tma::Disabled);
            x
        };
        let of: Tile<f32, { [1, 1, S2, TD] }> = convert_tile(ot);
        let of: Tile<f32, { [S2, TD] }> = of.reshape(shape![S2, TD]);
        let lp: Partition<f32, { [1, 1, S2] }> = unsafe {
            make_partition_view(lse, shape![1, 1, S2], padding::NegInf, dim_map::Identity, get_tensor_token(lse))
        };
        let lt: Tile<f32, { [1, 1, S2] }> = lp.load([pid.0, pid.1, 0i32]);
        let l: Tile<f32, { [S2] }> = lt.reshape(shape![S2]);
        // Splits past `valid` hold no keys (reference/src/ops/splitk_reduce.cpp): weight 0.
        let idx: Tile<i32, { [S2] }> = iota(shape![S2]);
        let inside: Tile<bool, { [S2] }> = lt_tile(idx, valid.broadcast(shape![S2]));
        let neg: Tile<f32, { [S2] }> = constant(f32::NEG_INFINITY, shape![S2]);
        let l: Tile<f32, { [S2] }> = select(inside, l, neg);
        let mx: Tile<f32, { [] }> = reduce_max(l, 0i32);
        let mx: Tile<f32, { [S2] }> = mx.reshape(shape![1]).broadcast(shape![S2]);
        let w: Tile<f32, { [S2] }> = exp2(l - mx, ftz::Disabled);
        let den: Tile<f32, { [] }> = reduce_sum(w, 0i32);
        let num: Tile<f32, { [TD] }> = if DOT == 1i32 {
            let w1: Tile<f32, { [1, S2] }> = w.reshape(shape![1, S2]);
            let zero: Tile<f32, { [1, TD] }> = constant(0.0f32, shape![1, TD]);
            let r: Tile<f32, { [1, TD] }> = mmaf(w1, of, zero);
            let r: Tile<f32, { [TD] }> = r.reshape(shape![TD]);
            r
        } else {
            let wb: Tile<f32, { [S2, TD] }> = w.reshape(shape![S2, 1]).broadcast(shape![S2, TD]);
            let r: Tile<f32, { [TD] }> = reduce_sum(of * wb, 0i32);
            r
        };
        let den: Tile<f32, { [TD] }> = den.reshape(shape![1]).broadcast(shape![TD]);
        let out: Tile<T, { [TD] }> = convert_tile(num / den);
        let out: Tile<T, { [1, 1, TD] }> = out.reshape(shape![1, 1, TD]);
        let mut o_p: PartitionMut<T, { [1, 1, TD] }> = unsafe { o.partition_full_mut(shape![1, 1, TD]) };
        if TMA == 1i32 {
            unsafe {
                store_view_tko_mut(&mut o_p, out, [pid.0, pid.1, pid.2], ordering::Weak, scope::TileBlock, Some(2i32), tma::Enabled)
            };
        } else {
            unsafe {
                store_view_tko_mut(&mut o_p, out, [pid.0, pid.1, pid.2], ordering::Weak, scope::TileBlock, Some(2i32), tma::Disabled)
            };
        }
    }
}
