// SPDX-License-Identifier: Apache-2.0
//! The plans of moe_align_block (one tile block, chunk and expert tiles from the
//! configuration) and of moe (a launch plan of five kernels over scratch buffers, below).
//!
//! The tensors are the reference's (reference/src/ops/moe_align_block.cpp), all i32 and
//! contiguous: topk_ids `[M, top_k]` (viewed as `[M * top_k]`), sorted_token_ids
//! `[M*top_k + E*(block_size-1)]` (`max_padded`), expert_ids `[ceil(max_padded / block_size)]`,
//! num_tokens_post_padded `[1]`.

use anyhow::{ensure, Result};
use serde_json::{json, Map, Value};

use crate::abi::{KernelArg, LitValue, ScalarType};
use crate::decode::plan::{Scratch, StagedPlan};
use crate::plan::{
    ceil_div, element_type, grid_of, param_i64, param_int_or, param_str, param_str_or, pow2_ceil, silu_and_mul_tiles, specialization_json,
    tensor_arg, view_arg_at, Candidates, Overrides, Plan, TensorLayout,
};
use crate::target::Target;

/// Operators of this module (registered in `crate::plan::OPERATORS`) with single-kernel plans.
pub const OPERATORS: &[&str] = &[];

/// Operators of this module with multi-kernel plans ([`staged_candidates`]): moe, and
/// moe_align_block (two launches over a counts scratch, or the one-block kernel as a variant).
pub const STAGED: &[&str] = &["moe", "moe_align_block"];

/// The most elements of one `[entries, experts]` or `[chunks, experts]` tile of the parallel
/// alignment (32 KB of i32: no spills at 128 threads, as tilegym's `[SUB_CHUNK, E]` tiles).
pub const PARALLEL_TILE: i64 = 8192;

/// Entries a chunk of the passes (`[BT, E2]` i32 tiles: 64 KB at 64 experts).
pub const CHUNK: i64 = 256;

/// The most experts the `[BT, E2]` one-hot tiles hold.
pub const MAX_EXPERTS: i64 = 256;

/// moe_align_block's sizes from its parameters: `numel` assignments over `e` experts, blocks of
/// `block`, `max_padded` slots of sorted_token_ids, `max_blocks` entries of expert_ids.
struct AlignShape {
    numel: i64,
    e: i64,
    block: i64,
    max_padded: i64,
    max_blocks: i64,
}

fn align_shape(params: &Value) -> Result<AlignShape> {
    let m = param_i64(params, "num_tokens")?;
    let topk = param_i64(params, "top_k")?;
    let e = param_i64(params, "n_experts")?;
    let block = param_int_or(params, "block_size", 128)?;
    ensure!(topk <= e, "top_k = {topk} exceeds n_experts = {e}");
    ensure!(block > 0 && block <= 1 << 20, "block_size = {block} must be in 1..=2^20");
    ensure!(e <= MAX_EXPERTS, "n_experts = {e} exceeds {MAX_EXPERTS} (one [chunk, experts] one-hot tile per pass)");
    let numel = m * topk;
    let max_padded = numel + e * (block - 1);
    let max_blocks = ceil_div(max_padded, block);
    ensure!(max_padded <= i32::MAX as i64, "sorted_token_ids has {max_padded} elements, more than 2^31-1 (i32 indices)");
    Ok(AlignShape { numel, e, block, max_padded, max_blocks })
}

fn plan_align(params: &Value) -> Result<Plan> {
    let AlignShape { numel, e, block, max_padded, max_blocks } = align_shape(params)?;
    let e2 = pow2_ceil(e);
    let tensors = vec![
        TensorLayout::contiguous("topk_ids", &[numel], 4),
        TensorLayout::contiguous("expert_ids", &[max_blocks], 4),
        TensorLayout::contiguous("num_tokens_post_padded", &[1], 4),
    ];
    let args = vec![
        view_arg_at(&tensors[0], 0, None),
        KernelArg::RawPtr { name: "sorted_token_ids".into(), tensor: "sorted_token_ids".into() },
        tensor_arg(&tensors[1], None),
        tensor_arg(&tensors[2], None),
        KernelArg::Scalar { name: "max_padded".into(), ty: ScalarType::I32, value: LitValue::Int(max_padded) },
    ];
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("moe_align_block"));
    tuning.insert("experts_tile".into(), json!(e2));
    tuning.insert("chunk".into(), json!(CHUNK));
    tuning.insert("block_size".into(), json!(block));
    tuning.insert("max_padded".into(), json!(max_padded));
    tuning.insert("max_blocks".into(), json!(max_blocks));
    tuning.insert(
        "algorithm".into(),
        json!("one tile block, four passes over 256-entry chunks: counts, stable positions scattered through a pointer tile, padding slots, block experts; every output element written once"),
    );
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "moe_align_block",
        elem: "i32",
        generics: vec![e2.to_string(), CHUNK.to_string(), block.to_string()],
        tensors,
        args,
        grid: [1, 1, 1],
        stem: format!("moe_align_block_e{e2}_b{block}"),
        variant: "single_block".into(),
        occupancy: None,
        worker_warps: None,
        extra_launches: Vec::new(),
        tuning,
    })
}

/// Single-kernel plans: none now (moe_align_block is staged); `Ok(None)` for every operator.
pub fn candidates(op: &str, _params: &Value, _o: Overrides, _t: &Target) -> Result<Option<Candidates>> {
    debug_assert!(!OPERATORS.contains(&op));
    Ok(None)
}

/// The default single-kernel plan: none (see [`candidates`]).
pub fn plan(op: &str, params: &Value, o: Overrides, t: &Target) -> Result<Option<Plan>> {
    Ok(candidates(op, params, o, t)?.map(|c| c.plans.into_iter().next().expect("one plan")))
}

/// The shape of the parallel alignment: `bt` entries a chunk, `p` chunks (tile blocks, a power
/// of two, chunks past `numel` count nothing), `ft` slots a fill tile and `fill_per` fill tiles
/// a block, `bb` blocks an expert_ids tile and `blocks_per` of them a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlignGrid {
    pub bt: i64,
    pub p: i64,
    pub ft: i64,
    pub fill_per: i64,
    pub bb: i64,
    pub blocks_per: i64,
}

/// tilegym's split (moe_align_block.py): `max(E, ceil(numel / 128))` programs of
/// `ceil(numel / programs)` entries; here the chunk is that rounded up to a power of two (at
/// least 16) and the chunk count rounded up to one (the second launch's `[P, E2]` tile); chunks
/// grow while a `[chunk, E2]` or `[P, E2]` tile would exceed [`PARALLEL_TILE`].
pub fn align_grid(numel: i64, e: i64, block: i64) -> Result<AlignGrid> {
    let e2 = pow2_ceil(e);
    let programs = e.max(ceil_div(numel, 128));
    let mut bt = pow2_ceil(ceil_div(numel, programs)).max(16);
    let mut p = pow2_ceil(ceil_div(numel, bt));
    while p * e2 > PARALLEL_TILE && bt * e2 < PARALLEL_TILE {
        bt *= 2;
        p = pow2_ceil(ceil_div(numel, bt));
    }
    ensure!(
        p * e2 <= PARALLEL_TILE && bt * e2 <= PARALLEL_TILE,
        "{numel} assignments over {e} experts need [{p}, {e2}] and [{bt}, {e2}] tiles, more than {PARALLEL_TILE} elements"
    );
    let max_padded = numel + e * (block - 1);
    let max_blocks = ceil_div(max_padded, block);
    let ft = pow2_ceil(ceil_div(max_padded, p)).clamp(16, 1024);
    let fill_per = ceil_div(ceil_div(max_padded, ft), p);
    let bb = pow2_ceil(ceil_div(max_blocks, p)).clamp(8, 64);
    let blocks_per = ceil_div(ceil_div(max_blocks, bb), p);
    Ok(AlignGrid { bt, p, ft, fill_per, bb, blocks_per })
}

/// Where the parallel alignment writes: sorted_token_ids (a view for the count launch, a raw
/// pointer for the scatter), expert_ids and the padded total. moe_align_block binds its own
/// output tensors, moe its scratch buffers.
struct AlignOutputs {
    sorted_view: KernelArg,
    sorted_raw: KernelArg,
    experts: KernelArg,
    total: KernelArg,
}

/// The two launches of the parallel alignment (`align_grid` `g`, grid `[P]` each) over a
/// `[P, E2]` counts scratch: `moe_align_count` then `moe_align_scatter`.
fn align_stages(numel: i64, e: i64, max_padded: i64, max_blocks: i64, block: i64, g: &AlignGrid, out: AlignOutputs, variant: &str) -> (Plan, Plan) {
    let e2 = pow2_ceil(e);
    let topk_ids = TensorLayout::contiguous("topk_ids", &[numel], 4);
    let sorted = TensorLayout::contiguous("sorted_token_ids", &[max_padded], 4);
    let experts = TensorLayout::contiguous("expert_ids", &[max_blocks], 4);
    let total = TensorLayout::contiguous("num_tokens_post_padded", &[1], 4);
    let counts = TensorLayout::contiguous("counts", &[g.p, e2], 4);
    let grid = [u32::try_from(g.p).expect("align_grid bounds the chunk count"), 1, 1];
    let count_args = vec![view_arg_at(&topk_ids, 0, None), scratch_view("counts", &[g.p, e2], None), out.sorted_view, lit_i32("fill_per", g.fill_per)];
    let mut ct = Map::new();
    ct.insert("chunk".into(), json!(g.bt));
    ct.insert("chunks".into(), json!(g.p));
    ct.insert("fill_tile".into(), json!(g.ft));
    ct.insert("fill_tiles_per_block".into(), json!(g.fill_per));
    let count = stage(
        "moe_align_count",
        "i32",
        vec![e2.to_string(), g.bt.to_string(), g.ft.to_string()],
        vec![topk_ids.clone(), counts.clone(), sorted],
        count_args,
        grid,
        format!("moe_align_count_e{e2}_t{}_f{}", g.bt, g.ft),
        variant,
        ct,
    );
    let scatter_args = vec![
        view_arg_at(&topk_ids, 0, None),
        scratch_view("counts", &[g.p, e2], None),
        out.sorted_raw,
        out.experts,
        out.total,
        lit_i32("blocks_per", g.blocks_per),
    ];
    let mut st = Map::new();
    st.insert("chunk".into(), json!(g.bt));
    st.insert("chunks".into(), json!(g.p));
    st.insert("block_tile".into(), json!(g.bb));
    st.insert("block_tiles_per_block".into(), json!(g.blocks_per));
    st.insert("block_size".into(), json!(block));
    let scatter = stage(
        "moe_align_scatter",
        "i32",
        vec![e2.to_string(), g.bt.to_string(), g.p.to_string(), g.bb.to_string(), block.to_string()],
        vec![topk_ids, counts, experts, total],
        scatter_args,
        grid,
        format!("moe_align_scatter_e{e2}_t{}_p{}_bb{}_b{block}", g.bt, g.p, g.bb),
        variant,
        st,
    );
    (count, scatter)
}

/// moe_align_block in two launches over a `[P, E2]` counts scratch (tilegym's four stages,
/// its stage-2/3 prefix folded into the scatter, whose blocks each read the whole counts):
/// `moe_align_count` (counts per chunk, and `sorted_token_ids` set to the padding value) and
/// `moe_align_scatter` (the positions, the total, expert_ids).
fn plan_align_parallel(params: &Value) -> Result<StagedPlan> {
    let AlignShape { numel, e, block, max_padded, max_blocks } = align_shape(params)?;
    let e2 = pow2_ceil(e);
    let g = align_grid(numel, e, block)?;
    let sorted = TensorLayout::contiguous("sorted_token_ids", &[max_padded], 4);
    let experts = TensorLayout::contiguous("expert_ids", &[max_blocks], 4);
    let total = TensorLayout::contiguous("num_tokens_post_padded", &[1], 4);
    // The operator's own outputs receive the alignment.
    let out = AlignOutputs {
        sorted_view: tensor_arg(&sorted, None),
        sorted_raw: KernelArg::RawPtr { name: "sorted_token_ids".into(), tensor: "sorted_token_ids".into() },
        experts: tensor_arg(&experts, None),
        total: tensor_arg(&total, None),
    };
    let variant = "parallel";
    let (count, scatter) = align_stages(numel, e, max_padded, max_blocks, block, &g, out, variant);

    let mut tuning = Map::new();
    tuning.insert("kernels".into(), json!(["moe_align_count", "moe_align_scatter"]));
    tuning.insert("experts_tile".into(), json!(e2));
    tuning.insert("block_size".into(), json!(block));
    tuning.insert("max_padded".into(), json!(max_padded));
    tuning.insert("max_blocks".into(), json!(max_blocks));
    tuning.insert(
        "algorithm".into(),
        json!("tilegym's split: one tile block per chunk of topk_ids counts it (and sets its share of sorted_token_ids to the padding value); then one per chunk reads all counts, scatters its chunk's assignments to their stable positions and writes its share of expert_ids (block 0 the total)"),
    );
    Ok(StagedPlan { variant: variant.into(), tuning, scratch: vec![Scratch { name: "counts".into(), bytes: g.p * e2 * 4 }], stages: vec![count, scatter] })
}

/// The one-block kernel as a one-stage plan (variant `single_block`, the plan before the
/// parallel one: reachable through a tuning record).
fn plan_align_single(params: &Value) -> Result<StagedPlan> {
    let p = plan_align(params)?;
    let mut tuning = Map::new();
    tuning.insert("kernels".into(), json!(["moe_align_block"]));
    Ok(StagedPlan { variant: p.variant.clone(), tuning, scratch: Vec::new(), stages: vec![p] })
}

/// moe_align_block's plans: the parallel one first where its tiles fit, then the single block.
fn align_candidates(params: &Value) -> Result<Vec<StagedPlan>> {
    let single = plan_align_single(params);
    match (plan_align_parallel(params), single) {
        (Ok(p), Ok(s)) => Ok(vec![p, s]),
        (Ok(p), Err(_)) => Ok(vec![p]),
        (Err(_), Ok(s)) => Ok(vec![s]),
        (Err(e), Err(_)) => Err(e),
    }
}

/// moe's configuration as the reference reads it (reference/src/ops/moe.cpp): hidden_states
/// `[M, H]`, w1 `[E, 2I, H]`, w2 `[E, H, I]`, topk_weights `[M, top_k]` f32, topk_ids
/// `[M, top_k]` i32, out `[M, H]`, all contiguous.
#[derive(Clone, Copy, Debug)]
struct MoeShape {
    m: i64,
    h: i64,
    i: i64,
    e: i64,
    topk: i64,
    elem: &'static str,
    bytes: i32,
}

fn moe_shape(params: &Value) -> Result<MoeShape> {
    let (m, h, i, e, topk) = (
        param_i64(params, "num_tokens")?,
        param_i64(params, "hidden_size")?,
        param_i64(params, "moe_intermediate_size")?,
        param_i64(params, "n_experts")?,
        param_i64(params, "top_k")?,
    );
    ensure!(topk <= e, "top_k = {topk} exceeds n_experts = {e}");
    let call = param_str_or(params, "call_type", "e2e_fused")?;
    ensure!(call == "e2e_fused", "call_type {call:?}: the port has the e2e_fused pipeline only");
    let dtype = param_str(params, "dtype")?;
    ensure!(dtype == "float16" || dtype == "bfloat16", "dtype {dtype:?}: the port's GEMMs take float16 or bfloat16");
    let (elem, bytes) = element_type(dtype)?;
    ensure!(e <= MAX_EXPERTS, "n_experts = {e} exceeds {MAX_EXPERTS} (the alignment's [chunk, experts] one-hot tile)");
    let numel = m * topk;
    for (what, n) in [("w1", e * 2 * i * h), ("the gate/up intermediate", numel * 2 * i), ("the down intermediate", numel * h)] {
        ensure!(n <= i32::MAX as i64, "{what} has {n} elements, more than 2^31-1 (i32 offsets)");
    }
    Ok(MoeShape { m, h, i, e, topk, elem, bytes })
}

/// How the grouped GEMMs reach the rows of A.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AForm {
    /// tilegym's: each K step gathers its block's rows through a pointer tile (`moe_gemm`).
    Gather,
    /// A gather launch first copies the rows into sorted order (`moe_gather`); the GEMMs then
    /// read A as TMA tiles of contiguous rows (`moe_gemm_sorted`), GEMM 1 writing its rows in
    /// sorted order and silu_and_mul working on them there (`moe_silu_and_mul`), GEMM 2
    /// scattering to the assignments' rows. `once` picks the GEMMs' loop form (`LOOP` 1: a
    /// loop of one trip or none around the constant K loop; 0: `live * K / BK` steps).
    Sorted { once: bool },
}

/// The knobs of a moe plan: rows per GEMM block (`bm`, also the alignment's block size), the
/// GEMMs' output columns (`bn`) and K step (`bk`), and how they read A.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoeKnobs {
    pub bm: i64,
    pub bn: i64,
    pub bk: i64,
    pub a: AForm,
}

impl MoeKnobs {
    pub fn name(&self) -> String {
        let tiles = format!("m{}_n{}_k{}", self.bm, self.bn, self.bk);
        match self.a {
            AForm::Gather => tiles,
            AForm::Sorted { once: false } => format!("sorted_{tiles}"),
            AForm::Sorted { once: true } => format!("sorted_once_{tiles}"),
        }
    }
}

/// tilegym's tiles (moe_interface.py, cutile config): TILE_SIZE_M 128, N 128, K 64, GROUP_SIZE_M 32.
pub const TILEGYM: MoeKnobs = MoeKnobs { bm: 128, bn: 128, bk: 64, a: AForm::Gather };

/// Block rows of the swizzled GEMM grid (tilegym: 32).
pub const GROUP_M: i64 = 32;

/// The default knobs: 64-row blocks where an expert gets at most 64 assignments on average
/// (less padding: every expert's bucket is padded to a multiple of `bm`), else tilegym's 128;
/// A gathered into sorted order first, the GEMMs' loop of one trip (measured on the H200,
/// fifteenth session: 1.20-1.63 over the gathered form on tilegym's 4 configurations).
pub fn default_knobs(m: i64, topk: i64, e: i64) -> MoeKnobs {
    let bm = if m * topk <= 64 * e { 64 } else { TILEGYM.bm };
    MoeKnobs { bm, a: AForm::Sorted { once: true }, ..TILEGYM }
}

fn lit_i32(name: &str, v: i64) -> KernelArg {
    KernelArg::Scalar { name: name.into(), ty: ScalarType::I32, value: LitValue::Int(v) }
}

fn scratch_view(name: &str, shape: &[i64], partition: Option<Vec<i64>>) -> KernelArg {
    let t = TensorLayout::contiguous(name, shape, 4);
    KernelArg::Scratch { name: name.into(), shape: t.shape, strides: t.strides, partition }
}

/// A kernel parameter named like `view` that sees the plan's scratch buffer `scratch` through
/// `view`'s extents and strides.
fn scratch_as(scratch: &str, view: &TensorLayout, partition: Option<Vec<i64>>) -> KernelArg {
    KernelArg::ScratchAs { name: view.name.clone(), scratch: scratch.into(), shape: view.shape.clone(), strides: view.strides.clone(), partition }
}

fn stage(kernel: &'static str, elem: &'static str, generics: Vec<String>, tensors: Vec<TensorLayout>, args: Vec<KernelArg>, grid: [u32; 3], stem: String, variant: &str, tuning: Map<String, Value>) -> Plan {
    let mut tuning = tuning;
    tuning.insert("kernel".into(), json!(kernel));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Plan { kernel, elem, generics, tensors, args, grid, tuning, stem, variant: variant.into(), occupancy: None, worker_warps: None, extra_launches: Vec::new() }
}

/// Where a grouped GEMM launch reads A and writes C.
enum GemmIo<'a> {
    /// `moe_gemm`: A's rows `id / topk` gathered from `a` inside the K loop, C's rows `id`.
    Gathered { a: KernelArg, topk: i64 },
    /// `moe_gemm_sorted`: A the scratch `a` `[max_padded, K]` in sorted order; C in sorted order
    /// (`scatter` false) or to the assignments' rows (`scatter` true).
    Sorted { a: &'a str, scatter: bool },
}

/// One grouped GEMM launch: `c[id] = a[id / topk] w[e]^T (x routing weight)`.
#[allow(clippy::too_many_arguments)]
fn gemm_stage(x: &MoeShape, k: MoeKnobs, w: &str, n: i64, kk: i64, io: GemmIo, c: &str, mul: bool, max_padded: i64, max_blocks: i64) -> Result<Plan> {
    let e = x.e;
    let wt = TensorLayout::contiguous("w", &[e, n, kk], x.bytes);
    let mut tensors = vec![
        wt.clone(),
        TensorLayout::contiguous("sorted_token_ids", &[max_padded], 4),
        TensorLayout::contiguous("expert_ids", &[max_blocks], 4),
        TensorLayout::contiguous("num_tokens_post_padded", &[1], 4),
    ];
    let a = match &io {
        GemmIo::Gathered { a, .. } => a.clone(),
        GemmIo::Sorted { a, .. } => {
            let at = TensorLayout::contiguous("a", &[max_padded, kk], x.bytes);
            let arg = scratch_as(a, &at, None);
            tensors.insert(0, at);
            arg
        }
    };
    let args = vec![
        a,
        KernelArg::ViewOf { name: "w".into(), tensor: w.into(), shape: wt.shape.clone(), strides: wt.strides.clone(), partition: None },
        KernelArg::RawScratch { name: "c".into(), scratch: c.into() },
        KernelArg::RawPtr { name: "topk_weights".into(), tensor: "topk_weights".into() },
        scratch_view("sorted_token_ids", &[max_padded], None),
        scratch_view("expert_ids", &[max_blocks], None),
        scratch_view("num_tokens_post_padded", &[1], None),
        lit_i32("numel", x.m * x.topk),
    ];
    let blocks = ceil_div(max_padded, k.bm) * ceil_div(n, k.bn);
    let mut tuning = Map::new();
    tuning.insert("weights".into(), json!(w));
    tuning.insert("tiles".into(), json!({"m": k.bm, "n": k.bn, "k": k.bk, "group_m": GROUP_M}));
    tuning.insert("mul_routed_weight".into(), json!(mul));
    let m = i32::from(mul);
    let (kernel, generics, stem) = match io {
        GemmIo::Gathered { topk, .. } => {
            tuning.insert("a_row_divisor".into(), json!(topk));
            (
                "moe_gemm",
                vec![x.elem.into(), k.bm.to_string(), k.bn.to_string(), k.bk.to_string(), topk.to_string(), m.to_string(), GROUP_M.to_string(), kk.to_string(), n.to_string()],
                format!("moe_gemm_{}_m{}_n{}_k{}_t{topk}_w{m}_K{kk}_N{n}", x.elem, k.bm, k.bn, k.bk),
            )
        }
        GemmIo::Sorted { scatter, .. } => {
            let once = i32::from(matches!(k.a, AForm::Sorted { once: true }));
            let sc = i32::from(scatter);
            tuning.insert("a".into(), json!("sorted rows, TMA tiles"));
            tuning.insert("c".into(), json!(if scatter { "the assignments' rows" } else { "sorted rows" }));
            tuning.insert("loop".into(), json!(if once == 1 { "one trip or none around the constant K loop" } else { "live * K / BK steps" }));
            (
                "moe_gemm_sorted",
                vec![x.elem.into(), k.bm.to_string(), k.bn.to_string(), k.bk.to_string(), m.to_string(), sc.to_string(), once.to_string(), GROUP_M.to_string(), kk.to_string(), n.to_string()],
                format!("moe_gemm_sorted_{}_m{}_n{}_k{}_w{m}_s{sc}_l{once}_K{kk}_N{n}", x.elem, k.bm, k.bn, k.bk),
            )
        }
    };
    Ok(stage(kernel, x.elem, generics, tensors, args, grid_of(&[blocks], &[1])?, stem, &k.name(), tuning))
}

/// The gathered form's middle (tilegym's): GEMM 1 gathers `hidden_states` rows into `cache1`
/// `[M top_k, 2I]` by assignment, silu_and_mul of crate::kernels on it, GEMM 2 gathers
/// `cache2` rows and scatters `cache3` rows by assignment.
fn gathered_middle(x: &MoeShape, k: MoeKnobs, t: &Target, max_padded: i64, max_blocks: i64) -> Result<(Vec<Plan>, Vec<Scratch>)> {
    let numel = x.m * x.topk;
    let variant = k.name();
    let hidden = GemmIo::Gathered { a: KernelArg::RawPtr { name: "a".into(), tensor: "hidden_states".into() }, topk: x.topk };
    let gemm1 = gemm_stage(x, k, "w1", 2 * x.i, x.h, hidden, "cache1", false, max_padded, max_blocks)?;
    // silu_and_mul of crate::kernels, cache1 [numel, 2I] seen as [numel, 2, I].
    let (br, bh) = silu_and_mul_tiles(numel, x.i, x.bytes, t.sm_count, Overrides::default())?;
    let xs = TensorLayout::contiguous("x", &[numel, 2, x.i], x.bytes);
    let ys = TensorLayout::contiguous("y", &[numel, x.i], x.bytes);
    let silu_args = vec![
        scratch_as("cache1", &xs, None),
        scratch_as("cache2", &ys, Some(vec![br, bh])),
    ];
    let mut st = Map::new();
    st.insert("block_rows".into(), json!(br));
    st.insert("block_cols".into(), json!(bh));
    let mut silu = stage("silu_and_mul", x.elem, vec![x.elem.into(), br.to_string(), bh.to_string()], vec![xs, ys], silu_args, grid_of(&[numel, x.i], &[br, bh])?, format!("silu_and_mul_{}_br{br}_bh{bh}", x.elem), &variant, st);
    silu.occupancy = Some(4);
    silu.stem.push_str("_occ4");
    // Down projection times the routing weight (rows of cache2 are the assignments: top_k 1).
    let cache2 = GemmIo::Gathered { a: KernelArg::RawScratch { name: "a".into(), scratch: "cache2".into() }, topk: 1 };
    let gemm2 = gemm_stage(x, k, "w2", x.h, x.i, cache2, "cache3", true, max_padded, max_blocks)?;
    let b = x.bytes as i64;
    let scratch = vec![
        Scratch { name: "cache1".into(), bytes: numel * 2 * x.i * b },
        Scratch { name: "cache2".into(), bytes: numel * x.i * b },
    ];
    Ok((vec![gemm1, silu, gemm2], scratch))
}

/// The sorted form's middle: `moe_gather` copies the live blocks' rows of `hidden_states` into
/// `a_sorted` `[max_padded, H]`; GEMM 1 reads them as TMA tiles and writes `cache1`
/// `[max_padded, 2I]` in sorted order; `moe_silu_and_mul` on the live rows into `cache2`
/// `[max_padded, I]`; GEMM 2 reads `cache2` the same way and scatters `cache3` rows by
/// assignment (times the routing weight).
fn sorted_middle(x: &MoeShape, k: MoeKnobs, t: &Target, max_padded: i64, max_blocks: i64) -> Result<(Vec<Plan>, Vec<Scratch>)> {
    let numel = x.m * x.topk;
    let variant = k.name();
    // The gather: BM rows (the GEMMs' blocks, so live as a whole) by up to 256 columns.
    let bh = pow2_ceil(x.h).min(256);
    let a_sorted = TensorLayout::contiguous("a_sorted", &[max_padded, x.h], x.bytes);
    let gather_args = vec![
        KernelArg::RawPtr { name: "a".into(), tensor: "hidden_states".into() },
        scratch_as("a_sorted", &a_sorted, None),
        scratch_view("sorted_token_ids", &[max_padded], None),
        scratch_view("num_tokens_post_padded", &[1], None),
        lit_i32("numel", numel),
    ];
    let mut gt = Map::new();
    gt.insert("block_rows".into(), json!(k.bm));
    gt.insert("block_cols".into(), json!(bh));
    let gather = stage(
        "moe_gather",
        x.elem,
        vec![x.elem.into(), k.bm.to_string(), bh.to_string(), x.topk.to_string(), x.h.to_string()],
        vec![
            a_sorted,
            TensorLayout::contiguous("sorted_token_ids", &[max_padded], 4),
            TensorLayout::contiguous("num_tokens_post_padded", &[1], 4),
        ],
        gather_args,
        grid_of(&[max_padded, x.h], &[k.bm, bh])?,
        format!("moe_gather_{}_m{}_h{bh}_t{}_K{}", x.elem, k.bm, x.topk, x.h),
        &variant,
        gt,
    );
    let gemm1 = gemm_stage(x, k, "w1", 2 * x.i, x.h, GemmIo::Sorted { a: "a_sorted", scatter: false }, "cache1", false, max_padded, max_blocks)?;
    // silu_and_mul on the live sorted rows: the row tile of crate::kernels' plan for numel rows,
    // at most the GEMM block (so a row tile is live as a whole).
    let (br, bhs) = silu_and_mul_tiles(numel, x.i, x.bytes, t.sm_count, Overrides::default())?;
    let br = br.min(k.bm);
    let xs = TensorLayout::contiguous("x", &[max_padded, 2, x.i], x.bytes);
    let ys = TensorLayout::contiguous("y", &[max_padded, x.i], x.bytes);
    let silu_args = vec![
        scratch_as("cache1", &xs, None),
        scratch_as("cache2", &ys, None),
        scratch_view("num_tokens_post_padded", &[1], None),
    ];
    let mut st = Map::new();
    st.insert("block_rows".into(), json!(br));
    st.insert("block_cols".into(), json!(bhs));
    let mut silu = stage(
        "moe_silu_and_mul",
        x.elem,
        vec![x.elem.into(), br.to_string(), bhs.to_string()],
        vec![xs, ys, TensorLayout::contiguous("num_tokens_post_padded", &[1], 4)],
        silu_args,
        grid_of(&[max_padded, x.i], &[br, bhs])?,
        format!("moe_silu_and_mul_{}_br{br}_bh{bhs}", x.elem),
        &variant,
        st,
    );
    silu.occupancy = Some(4);
    silu.stem.push_str("_occ4");
    let gemm2 = gemm_stage(x, k, "w2", x.h, x.i, GemmIo::Sorted { a: "cache2", scatter: true }, "cache3", true, max_padded, max_blocks)?;
    let b = x.bytes as i64;
    let scratch = vec![
        Scratch { name: "a_sorted".into(), bytes: max_padded * x.h * b },
        Scratch { name: "cache1".into(), bytes: max_padded * 2 * x.i * b },
        Scratch { name: "cache2".into(), bytes: max_padded * x.i * b },
    ];
    Ok((vec![gather, gemm1, silu, gemm2], scratch))
}

/// moe's launch plan for one set of knobs: tilegym's pipeline (moe_interface.py
/// `fused_experts_impl`), kernel for kernel, over scratch buffers as its wrapper allocates them:
/// 1. moe_align_block in its two parallel launches, moe_align_count and moe_align_scatter
///    (`topk_ids` -> `sorted_token_ids`, `expert_ids`, `num_tokens_post_padded`, block size `bm`);
/// 2. GEMM 1 with `w1` (`hidden_states[id / top_k] w1[e]^T`), silu_and_mul, GEMM 2 with `w2`
///    times the routing weight into `cache3` `[M top_k, H]` by assignment: [`gathered_middle`]
///    (tilegym's form) or [`sorted_middle`] (a gather launch first, per `k.a`);
/// 3. moe_sum: `out[t] = sum_k cache3[t top_k + k]` (tilegym: torch.sum / torch.add).
fn plan_moe(params: &Value, k: MoeKnobs, t: &Target) -> Result<StagedPlan> {
    let x = moe_shape(params)?;
    ensure!(x.h % k.bk == 0 && x.i % k.bk == 0, "hidden_size {} and moe_intermediate_size {} must be multiples of the K step {} (the gathered rows are not masked along K)", x.h, x.i, k.bk);
    let numel = x.m * x.topk;
    let max_padded = numel + x.e * (k.bm - 1);
    let max_blocks = ceil_div(max_padded, k.bm);
    ensure!(max_padded <= i32::MAX as i64, "sorted_token_ids has {max_padded} elements, more than 2^31-1");
    let variant = k.name();

    // 1. The alignment, into scratch: the parallel two-launch form of moe_align_block (a
    // count per chunk, then the scatter), as tilegym's multi-block stages; the one-block kernel
    // is serial over every assignment and measured 0.43 of tilegym's moe overall.
    let g = align_grid(numel, x.e, k.bm)?;
    let out = AlignOutputs {
        sorted_view: scratch_view("sorted_token_ids", &[max_padded], None),
        sorted_raw: KernelArg::RawScratch { name: "sorted_token_ids".into(), scratch: "sorted_token_ids".into() },
        experts: scratch_view("expert_ids", &[max_blocks], None),
        total: scratch_view("num_tokens_post_padded", &[1], None),
    };
    let (count, scatter) = align_stages(numel, x.e, max_padded, max_blocks, k.bm, &g, out, &variant);
    let e2 = pow2_ceil(x.e);

    // 2. The GEMMs around silu_and_mul.
    let (middle, middle_scratch) = match k.a {
        AForm::Gather => gathered_middle(&x, k, t, max_padded, max_blocks)?,
        AForm::Sorted { .. } => sorted_middle(&x, k, t, max_padded, max_blocks)?,
    };

    // 3. The top-k sum into out.
    let bh5 = pow2_ceil(x.h).clamp(16, 512);
    let mut br5 = 8;
    while br5 > 1 && ceil_div(x.m, br5) * ceil_div(x.h, bh5) < 2 * t.sm_count {
        br5 /= 2;
    }
    let c3 = TensorLayout::contiguous("x", &[x.m, x.topk, x.h], x.bytes);
    let out = TensorLayout::contiguous("y", &[x.m, x.h], x.bytes);
    let sum_args = vec![
        scratch_as("cache3", &c3, None),
        KernelArg::ViewOf { name: "y".into(), tensor: "out".into(), shape: out.shape.clone(), strides: out.strides.clone(), partition: Some(vec![br5, bh5]) },
    ];
    let mut sm = Map::new();
    sm.insert("block_rows".into(), json!(br5));
    sm.insert("block_cols".into(), json!(bh5));
    let sum = stage("moe_sum", x.elem, vec![x.elem.into(), br5.to_string(), bh5.to_string(), x.topk.to_string()], vec![c3, out], sum_args, grid_of(&[x.m, x.h], &[br5, bh5])?, format!("moe_sum_{}_br{br5}_bh{bh5}_t{}", x.elem, x.topk), &variant, sm);

    let mut stages = vec![count, scatter];
    stages.extend(middle);
    stages.push(sum);
    let mut scratch = vec![
        Scratch { name: "counts".into(), bytes: g.p * e2 * 4 },
        Scratch { name: "sorted_token_ids".into(), bytes: max_padded * 4 },
        Scratch { name: "expert_ids".into(), bytes: max_blocks * 4 },
        Scratch { name: "num_tokens_post_padded".into(), bytes: 4 },
    ];
    scratch.extend(middle_scratch);
    scratch.push(Scratch { name: "cache3".into(), bytes: numel * x.h * x.bytes as i64 });
    let mut tuning = Map::new();
    tuning.insert("kernels".into(), json!(stages.iter().map(|p| p.kernel).collect::<Vec<_>>()));
    tuning.insert("block_size".into(), json!(k.bm));
    tuning.insert("tiles".into(), json!({"m": k.bm, "n": k.bn, "k": k.bk, "group_m": GROUP_M}));
    tuning.insert("max_padded".into(), json!(max_padded));
    tuning.insert("max_blocks".into(), json!(max_blocks));
    tuning.insert("block_rule".into(), json!("64-row blocks where M top_k <= 64 E (at most 64 assignments per expert on average), else tilegym's 128"));
    Ok(StagedPlan { variant, tuning, scratch, stages })
}

/// moe's plans: the default knobs first, then the other block size (tuning variants); an
/// error is the reason the configuration cannot be expressed. `Ok(None)` for operators not in
/// [`STAGED`].
pub fn staged_candidates(op: &str, params: &Value, o: Overrides, t: &Target) -> Result<Option<Vec<StagedPlan>>> {
    if !STAGED.contains(&op) {
        return Ok(None);
    }
    ensure!(o == Overrides::default(), "{op} takes no suite tuning overrides: its choices are the manifest's variants");
    if op == "moe_align_block" {
        return align_candidates(params).map(Some);
    }
    let x = moe_shape(params)?;
    let first = default_knobs(x.m, x.topk, x.e);
    let mut plans = vec![plan_moe(params, first, t)?];
    let m64 = MoeKnobs { bm: 64, ..TILEGYM };
    let sorted = |k: MoeKnobs, once: bool| MoeKnobs { a: AForm::Sorted { once }, ..k };
    let variants = [TILEGYM, m64, sorted(m64, false), sorted(m64, true), sorted(TILEGYM, false), sorted(TILEGYM, true)];
    for k in variants {
        if k != first {
            if let Ok(p) = plan_moe(params, k, t) {
                plans.push(p);
            }
        }
    }
    Ok(Some(plans))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{entry_params, Param};

    fn align(c: &Value) -> Vec<StagedPlan> {
        staged_candidates("moe_align_block", c, Overrides::default(), &Target::h200()).unwrap().unwrap()
    }

    #[test]
    fn binds_the_reference_tensors() {
        let c = json!({"num_tokens": 512, "top_k": 6, "n_experts": 64, "block_size": 128});
        let plans = align(&c);
        assert_eq!(plans.iter().map(|p| p.variant.as_str()).collect::<Vec<_>>(), ["parallel", "single_block"]);
        let p = &plans[1].stages[0];
        assert_eq!(p.generics, ["64", "256", "128"]);
        assert_eq!(p.grid, [1, 1, 1]);
        let ps = entry_params(&p.args);
        assert_eq!(ps[0].param, Param::Ptr { tensor: "topk_ids".into() });
        // The flattened view of topk_ids [512, 6]: extent and stride literals.
        assert_eq!(ps[1].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(3072) });
        assert_eq!(ps[3].param, Param::Ptr { tensor: "sorted_token_ids".into() });
        assert_eq!(ps[4].param, Param::Ptr { tensor: "expert_ids".into() });
        assert_eq!(ps[7].param, Param::Ptr { tensor: "num_tokens_post_padded".into() });
        // max_padded = 3072 + 64 * 127; max_blocks = ceil(11200 / 128) = 88.
        assert_eq!(ps[10].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(11200) });
        assert_eq!(p.tensors[1].shape, [88]);
        assert_eq!(ps.len(), 11);
    }

    #[test]
    fn the_parallel_plan_follows_tilegyms_split() {
        // tilegym: max(64, ceil(3072 / 128)) = 64 programs of 48 entries; here chunks of 64,
        // 48 of them, rounded up to 64 blocks.
        let c = json!({"num_tokens": 512, "top_k": 6, "n_experts": 64, "block_size": 128});
        let p = &align(&c)[0];
        let g = align_grid(3072, 64, 128).unwrap();
        assert_eq!(g, AlignGrid { bt: 64, p: 64, ft: 256, fill_per: 1, bb: 8, blocks_per: 1 });
        assert_eq!(p.scratch, [Scratch { name: "counts".into(), bytes: 64 * 64 * 4 }]);
        let (count, scatter) = (&p.stages[0], &p.stages[1]);
        assert_eq!((count.kernel, scatter.kernel), ("moe_align_count", "moe_align_scatter"));
        assert_eq!((count.grid, scatter.grid), ([64, 1, 1], [64, 1, 1]));
        assert_eq!(count.generics, ["64", "64", "256"]);
        assert_eq!(scatter.generics, ["64", "64", "64", "8", "128"]);
        let cp = entry_params(&count.args);
        assert_eq!(cp[3].param, Param::Scratch { name: "counts".into() });
        // counts [64, 64], sorted_token_ids (its extent bound to the tensor), then fill_per.
        assert_eq!(cp[4].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(64) });
        assert_eq!(cp[8].param, Param::Ptr { tensor: "sorted_token_ids".into() });
        assert_eq!(cp.last().unwrap().param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(1) });
        // Every slot and block is covered: p * fill_per * ft >= max_padded, p * blocks_per * bb >= max_blocks.
        for (n, topk, e, b) in [(64, 2, 8, 128), (64, 2, 8, 64), (128, 4, 16, 64), (256, 6, 32, 128), (512, 6, 64, 64), (37, 3, 12, 16), (128, 8, 256, 16)] {
            let numel = n * topk;
            let g = align_grid(numel, e, b).unwrap();
            let (mp, mb) = (numel + e * (b - 1), ceil_div(numel + e * (b - 1), b));
            assert!(g.p * g.bt >= numel && g.p * g.fill_per * g.ft >= mp && g.p * g.blocks_per * g.bb >= mb, "{n} {topk} {e} {b}: {g:?}");
            assert!(g.p.count_ones() == 1 && g.p * pow2_ceil(e) <= PARALLEL_TILE && g.bt * pow2_ceil(e) <= PARALLEL_TILE);
        }
        assert_eq!(align_grid(128, 8, 128).unwrap(), AlignGrid { bt: 16, p: 8, ft: 256, fill_per: 1, bb: 8, blocks_per: 1 });
    }

    #[test]
    fn the_sorted_plans_gather_first_and_read_a_in_sorted_order() {
        // tilegym's 256 tokens x top 6 over 32 experts, H 2048, I 1408: 1536 assignments <= 64 x 32,
        // so 64-row blocks; max_padded 1536 + 32 x 63 = 3552 slots, 56 blocks.
        let c = json!({"num_tokens": 256, "hidden_size": 2048, "moe_intermediate_size": 1408, "n_experts": 32, "top_k": 6, "dtype": "float16", "call_type": "e2e_fused"});
        let plans = staged_candidates("moe", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        let names: Vec<&str> = plans.iter().map(|p| p.variant.as_str()).collect();
        assert_eq!(names, ["sorted_once_m64_n128_k64", "m128_n128_k64", "m64_n128_k64", "sorted_m64_n128_k64", "sorted_m128_n128_k64", "sorted_once_m128_n128_k64"]);
        let p = plans.iter().find(|p| p.variant == "sorted_once_m64_n128_k64").unwrap();
        let kernels: Vec<&str> = p.stages.iter().map(|s| s.kernel).collect();
        assert_eq!(kernels, ["moe_align_count", "moe_align_scatter", "moe_gather", "moe_gemm_sorted", "moe_silu_and_mul", "moe_gemm_sorted", "moe_sum"]);
        assert_eq!(p.tuning["kernels"], json!(kernels));
        let (gather, gemm1, silu, gemm2) = (&p.stages[2], &p.stages[3], &p.stages[4], &p.stages[5]);
        // The gather: 56 row blocks of 64 by 2048 / 256 column tiles.
        assert_eq!(gather.grid, [56, 8, 1]);
        assert_eq!(gather.generics, ["f16", "64", "256", "6", "2048"]);
        // GEMM 1: 56 x ceil(2816 / 128) tiles, sorted rows out, the loop of one trip; GEMM 2:
        // 56 x 2048 / 128, x routing weight, scattered to the assignments' rows.
        assert_eq!((gemm1.grid, gemm2.grid), ([56 * 22, 1, 1], [56 * 16, 1, 1]));
        assert_eq!(gemm1.generics, ["f16", "64", "128", "64", "0", "0", "1", "32", "2048", "2816"]);
        assert_eq!(gemm2.generics, ["f16", "64", "128", "64", "1", "1", "1", "32", "1408", "2048"]);
        // silu_and_mul: crate::kernels' tile for 1536 rows of 1408 (2 x 2048), over all 3552 slots.
        assert_eq!((silu.generics.clone(), silu.grid), (vec!["f16".to_string(), "2".into(), "2048".into()], [1776, 1, 1]));
        let scratch: Vec<(&str, i64)> = p.scratch.iter().map(|s| (s.name.as_str(), s.bytes)).collect();
        assert_eq!(
            scratch,
            [
                ("counts", 32 * 32 * 4),
                ("sorted_token_ids", 3552 * 4),
                ("expert_ids", 56 * 4),
                ("num_tokens_post_padded", 4),
                ("a_sorted", 3552 * 2048 * 2),
                ("cache1", 3552 * 2816 * 2),
                ("cache2", 3552 * 1408 * 2),
                ("cache3", 1536 * 2048 * 2),
            ]
        );
        // Who binds what: hidden_states only by the gather; A of the GEMMs and C of GEMM 1 are
        // the sorted scratch buffers; GEMM 2 writes cache3, which the sum reads.
        let ptrs = |s: &Plan| -> Vec<Param> {
            entry_params(&s.args).into_iter().map(|e| e.param).filter(|p| matches!(p, Param::Ptr { .. } | Param::Scratch { .. })).collect()
        };
        let scr = |n: &str| Param::Scratch { name: n.into() };
        let ten = |n: &str| Param::Ptr { tensor: n.into() };
        assert_eq!(ptrs(gather), [ten("hidden_states"), scr("a_sorted"), scr("sorted_token_ids"), scr("num_tokens_post_padded")]);
        assert_eq!(ptrs(gemm1)[..3], [scr("a_sorted"), ten("w1"), scr("cache1")]);
        assert_eq!(ptrs(silu), [scr("cache1"), scr("cache2"), scr("num_tokens_post_padded")]);
        assert_eq!(ptrs(gemm2)[..3], [scr("cache2"), ten("w2"), scr("cache3")]);
        assert_eq!(ptrs(&p.stages[6]), [scr("cache3"), ten("out")]);
        // The gathered form keeps tilegym's middle and buffers.
        let g = &plans[2];
        assert_eq!(g.stages.iter().map(|s| s.kernel).collect::<Vec<_>>(), ["moe_align_count", "moe_align_scatter", "moe_gemm", "silu_and_mul", "moe_gemm", "moe_sum"]);
        assert_eq!(g.scratch.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["counts", "sorted_token_ids", "expert_ids", "num_tokens_post_padded", "cache1", "cache2", "cache3"]);
    }

    #[test]
    fn refusals_and_the_tilegym_suite() {
        let err = |c: Value| staged_candidates("moe_align_block", &c, Overrides::default(), &Target::h200()).unwrap_err().to_string();
        assert!(err(json!({"num_tokens": 4, "top_k": 2, "n_experts": 512, "block_size": 64})).contains("n_experts = 512 exceeds 256"));
        assert!(err(json!({"num_tokens": 4, "top_k": 9, "n_experts": 8})).contains("top_k = 9 exceeds n_experts = 8"));
        let suite: Value =
            serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/tilegym.json")).unwrap()).unwrap();
        let n = suite["configs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["op"] == "moe_align_block")
            .map(|c| assert_eq!(align(&c["params"])[0].variant, "parallel"))
            .count();
        assert_eq!(n, 8);
    }
}
