// SPDX-License-Identifier: Apache-2.0
//! Per-configuration plans of the gated delta rule operators: kernel, specialisation, state
//! tile, occupancy and grid; and the tuning candidates (`variants`).
//!
//! The tensors are the reference's (reference/src/ops/gated_delta_rule.cpp), all contiguous:
//! q, k `[B, T, H, K]`, v `[B, T, H, V]`, g, beta `[B, T, H]` (g in `g_dtype`, default the
//! inputs' dtype), `initial_state [B, H, K, V]` f32 when `use_init`, o `[B, T, H, V]`,
//! `final_state [B, H, K, V]` f32 when `out_final` (default true). The default plan is
//! tilegym 1.5.1's untuned one for the recurrent operator (`BLOCK_V = 64`, occupancy 2, grid
//! `(B * H, ceil(V / 64), 1)`); the variants are the smaller state tiles its autotuner tries
//! for few heads (`BLOCK_V` 8 and 16 at occupancy 2 to 6) and 32.
//!
//! chunk_gated_delta_rule computes the same function (the reference runs one recurrence for
//! both); this port runs it with the same sequential kernel, not upstream's chunked
//! algorithm (recorded as `tuning.algorithm`). The `pair_*` variants run that recurrence two
//! tokens a step (`gated_delta_rule_pair`).

use anyhow::{bail, ensure, Result};
use serde_json::{json, Map, Value};

use crate::abi::{KernelArg, LitValue, ScalarType};
use crate::decode::plan::{Scratch, StagedPlan};
use crate::plan::{
    grid_of, param_bool_or, param_i64, param_int_or, param_str, param_str_or, pow2_ceil, specialization_json, tensor_arg,
    view_arg_at, Candidates, Overrides, Plan, TensorLayout,
};
use crate::target::Target;

/// Operators of this module (registered in `crate::plan::OPERATORS`).
pub const OPERATORS: &[&str] = &["recurrent_gated_delta_rule", "chunk_gated_delta_rule"];

/// The largest head tile `BK`: the `[BK, BV]` f32 state of a block lives in registers.
pub const MAX_HEAD_TILE: i64 = 256;

/// The largest state tile in elements (`BK * BV`, f32): 64 KB of registers per block.
pub const MAX_STATE_ELEMS: i64 = 16384;

/// One launch shape: state columns per block and the occupancy hint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GdrTiles {
    pub bv: i64,
    pub occupancy: i32,
    /// Tokens per chunk of the chunked kernel (`gated_delta_rule_chunked`); 0: the sequential
    /// kernel.
    pub chunk: i64,
    /// The sequential kernel's `FUSE`: 0 tilegym's step (the output reduced from the updated
    /// state), 1 both reductions from the decayed state, 2 those as one reduction,
    /// 3 as 1 with the decay folded into the update, 4 as 3 with `k . q` from a first kernel,
    /// 5 as 3 with the decay deferred (`S = c S~`: the update one fma per element).
    pub fuse: i32,
    /// The sequential kernel's `PF`: how many steps ahead its inputs are loaded (0: at the step).
    pub prefetch: i32,
    /// The sequential kernel's `PT`: the prefetched loads go through TMA (else plain loads).
    pub prefetch_tma: bool,
    /// Two tokens a step (`gated_delta_rule_pair`; `prefetch` 0 or 1, always through TMA).
    pub pair: bool,
}

impl GdrTiles {
    /// The variant name: its knobs, the same plan in every configuration.
    pub fn name(&self) -> String {
        let pf = match (self.prefetch, self.prefetch_tma) {
            (0, _) => String::new(),
            (p, false) => format!("_p{p}"),
            (p, true) => format!("_p{p}t"),
        };
        if self.pair {
            return format!("pair_bv{}_o{}{pf}", self.bv, self.occupancy);
        }
        match (self.chunk, self.fuse) {
            (0, 0) => format!("bv{}_o{}{pf}", self.bv, self.occupancy),
            (0, f) => format!("bv{}_o{}_f{f}{pf}", self.bv, self.occupancy),
            (c, _) => format!("chunked_c{c}_bv{}_o{}", self.bv, self.occupancy),
        }
    }
}

const fn tiles(bv: i64, occupancy: i32) -> GdrTiles {
    GdrTiles { bv, occupancy, chunk: 0, fuse: 0, prefetch: 0, prefetch_tma: false, pair: false }
}

const fn paired(bv: i64, occupancy: i32, prefetch: i32) -> GdrTiles {
    GdrTiles { bv, occupancy, chunk: 0, fuse: 0, prefetch, prefetch_tma: prefetch > 0, pair: true }
}

const fn fused(bv: i64, occupancy: i32, fuse: i32) -> GdrTiles {
    GdrTiles { bv, occupancy, chunk: 0, fuse, prefetch: 0, prefetch_tma: false, pair: false }
}

const fn prefetched(bv: i64, occupancy: i32, fuse: i32, prefetch: i32, prefetch_tma: bool) -> GdrTiles {
    GdrTiles { bv, occupancy, chunk: 0, fuse, prefetch, prefetch_tma, pair: false }
}

/// Tokens per chunk of the chunked variant (tilegym's chunk_size in the suite).
pub const CHUNK: i64 = 64;

/// tilegym's untuned plan first, then the state tiles its autotuner tries, then the chunked
/// kernel (64-token chunks, 64 state columns a block, occupancy 1), then the fused steps of the
/// tiles that were fastest on the H200 (64 for chunk's 128 heads, 16 for recurrent's 8), then
/// those and 32 columns at occupancy 4 (one wave of 512 blocks for 128 heads) with their inputs
/// prefetched one or two steps ahead, then the fma step (`FUSE` 3), also with a head's whole V in
/// one block (128 columns, occupancy 1: half the blocks, each with twice the work between its
/// cross-warp rounds), then two tokens a step, then the fma step with `k . q` from a first kernel
/// (`FUSE` 4: [`staged_candidates`]), then the deferred decay (`FUSE` 5, the record's choice for
/// chunk_gated_delta_rule on the H200).
pub fn candidates_list() -> Vec<GdrTiles> {
    vec![
        tiles(64, 2),
        tiles(32, 2),
        tiles(16, 2),
        tiles(16, 4),
        tiles(8, 4),
        tiles(8, 6),
        GdrTiles { bv: 64, occupancy: 1, chunk: CHUNK, fuse: 0, prefetch: 0, prefetch_tma: false, pair: false },
        fused(64, 2, 1),
        fused(64, 2, 2),
        fused(32, 2, 2),
        fused(16, 2, 1),
        fused(16, 2, 2),
        prefetched(64, 2, 1, 1, false),
        prefetched(64, 2, 1, 2, false),
        prefetched(64, 2, 1, 1, true),
        prefetched(32, 4, 1, 1, false),
        prefetched(32, 4, 1, 1, true),
        prefetched(16, 2, 0, 1, false),
        prefetched(16, 2, 0, 2, false),
        prefetched(16, 2, 0, 1, true),
        prefetched(8, 4, 0, 2, false),
        fused(64, 2, 3),
        prefetched(64, 2, 3, 1, true),
        prefetched(32, 4, 3, 1, true),
        prefetched(16, 2, 3, 1, true),
        fused(128, 1, 3),
        prefetched(128, 1, 3, 1, true),
        paired(64, 2, 0),
        paired(64, 2, 1),
        paired(32, 4, 0),
        paired(32, 4, 1),
        paired(16, 2, 0),
        paired(16, 2, 1),
        fused(64, 2, 4),
        prefetched(64, 2, 4, 1, true),
        prefetched(32, 4, 4, 1, true),
        prefetched(16, 2, 4, 1, true),
        fused(128, 1, 4),
        prefetched(128, 1, 4, 1, true),
        fused(64, 2, 5),
        prefetched(64, 2, 5, 1, true),
        fused(16, 2, 5),
        prefetched(16, 2, 5, 1, true),
    ]
}

fn element_type(what: &str, dtype: &str) -> Result<(&'static str, i32)> {
    Ok(match dtype {
        "float32" => ("f32", 4),
        "float16" => ("f16", 2),
        "bfloat16" => ("bf16", 2),
        other => bail!("unsupported {what} {other:?} (float32, float16, bfloat16)"),
    })
}

/// The configuration as the reference reads it.
struct GdrShape {
    b: i64,
    t: i64,
    h: i64,
    k: i64,
    v: i64,
    l2: bool,
    init: bool,
    final_state: bool,
    elem: &'static str,
    bytes: i32,
    g_elem: &'static str,
    g_bytes: i32,
}

fn shape_of(params: &Value) -> Result<GdrShape> {
    let (b, t, h, k, v) =
        (param_i64(params, "B")?, param_i64(params, "T")?, param_i64(params, "H")?, param_i64(params, "K")?, param_i64(params, "V")?);
    let dtype = param_str(params, "dtype")?;
    let (elem, bytes) = element_type("dtype", dtype)?;
    let (g_elem, g_bytes) = element_type("g_dtype", param_str_or(params, "g_dtype", dtype)?)?;
    ensure!(
        k <= MAX_HEAD_TILE,
        "K = {k} exceeds {MAX_HEAD_TILE} (the [K, BLOCK_V] f32 state of a block is held in registers)"
    );
    for (what, n) in [("q", b * t * h * k), ("v", b * t * h * v), ("state", b * h * k * v)] {
        ensure!(
            n <= i32::MAX as i64,
            "{what} has {n} elements, more than 2^31-1 (cutile-rs 0.5.0 shapes, strides and offsets are i32)"
        );
    }
    Ok(GdrShape {
        b,
        t,
        h,
        k,
        v,
        l2: param_bool_or(params, "use_l2", false)?,
        init: param_bool_or(params, "use_init", false)?,
        final_state: param_bool_or(params, "out_final", true)?,
        elem,
        bytes,
        g_elem,
        g_bytes,
    })
}

fn plan_gdr(op: &str, params: &Value, t: GdrTiles) -> Result<Plan> {
    ensure!((8..=256).contains(&t.bv) && t.bv & (t.bv - 1) == 0, "BLOCK_V = {} must be a power of two in 8..=256", t.bv);
    ensure!((1..=32).contains(&t.occupancy), "occupancy must be 1..=32, got {}", t.occupancy);
    let s = shape_of(params)?;
    let chunked = op == "chunk_gated_delta_rule";
    let chunk = if chunked { param_int_or(params, "chunk_size", 64)? } else { 0 };
    let bk = pow2_ceil(s.k).max(16);
    if t.chunk > 0 {
        // The chunked kernel's products run on the tensor cores: every tile side >= 16.
        ensure!(t.bv >= 16 && (16..=64).contains(&t.chunk) && t.chunk & (t.chunk - 1) == 0, "chunked: BLOCK_V >= 16 and a chunk of 16..=64 tokens");
    }
    // A tile wider than V only pads; the state tile must fit the registers.
    let bv = t.bv.min(pow2_ceil(s.v).max(8));
    ensure!(bv == t.bv, "BLOCK_V = {} is wider than V = {} rounded up to a power of two", t.bv, s.v);
    ensure!(bk * bv <= MAX_STATE_ELEMS, "state tile [{bk}, {bv}] exceeds {MAX_STATE_ELEMS} f32 elements");
    let mut tensors = vec![
        TensorLayout::contiguous("q", &[s.b, s.t, s.h, s.k], s.bytes),
        TensorLayout::contiguous("k", &[s.b, s.t, s.h, s.k], s.bytes),
        TensorLayout::contiguous("v", &[s.b, s.t, s.h, s.v], s.bytes),
        TensorLayout::contiguous("g", &[s.b, s.t, s.h], s.g_bytes),
        TensorLayout::contiguous("beta", &[s.b, s.t, s.h], s.bytes),
        TensorLayout::contiguous("o", &[s.b, s.t, s.h, s.v], s.bytes),
    ];
    let state = [s.b, s.h, s.k, s.v];
    let mut args: Vec<KernelArg> = tensors.iter().map(|x| tensor_arg(x, None)).collect();
    // Optional tensors the configuration lacks are null pointers with unit extents; their
    // layouts (for the specialisation of the unused parameter) are rank-4 unit tensors.
    for (name, present) in [("initial_state", s.init), ("final_state", s.final_state)] {
        let layout = TensorLayout::contiguous(name, if present { &state } else { &[1, 1, 1, 1] }, 4);
        args.push(if present { tensor_arg(&layout, None) } else { KernelArg::Absent { name: name.into(), rank: 4 } });
        tensors.push(layout);
    }
    // FUSE 4 reads the first kernel's `k . q` from the scratch tensor `qk_dot [B, T, H]`.
    let dots = t.fuse == 4 && t.chunk == 0 && !t.pair;
    let dims = if dots { [s.b, s.t, s.h] } else { [1, 1, 1] };
    let qk = TensorLayout::contiguous(QK_DOT, &dims, 4);
    args.push(if dots { scratch_arg(&qk) } else { KernelArg::Absent { name: QK_DOT.into(), rank: 3 } });
    tensors.push(qk);
    let q_scale = q_scale_of(s.k);
    args.push(q_scale_arg(q_scale));
    let flags = [s.init, s.final_state, s.l2].map(|f| i32::from(f).to_string());
    let mut tuning = Map::new();
    let kernel = match (t.chunk > 0, t.pair) {
        (true, _) => "gated_delta_rule_chunked",
        (false, true) => "gated_delta_rule_pair",
        (false, false) => "gated_delta_rule",
    };
    tuning.insert("kernel".into(), json!(kernel));
    tuning.insert(
        "algorithm".into(),
        json!(if t.chunk > 0 {
            "chunked: per chunk a forward substitution in f32 (I + A) [U W] = [beta V, beta exp(Gamma) K], then the chunk's outputs and state from products on the tensor cores (f32 split into two bf16 terms)"
        } else if chunked {
            if t.pair {
                "sequential recurrence over T, two tokens a step (this plan is not upstream's chunked algorithm: same function)"
            } else {
                "sequential recurrence over T (this plan is not upstream's chunked algorithm: same function, one step per token)"
            }
        } else if t.pair {
            "sequential recurrence over T, two tokens a step"
        } else {
            "sequential recurrence over T"
        }),
    );
    if t.chunk > 0 {
        tuning.insert("kernel_chunk".into(), json!(t.chunk));
    } else {
        tuning.insert(
            "step".into(),
            json!(match t.fuse {
                _ if t.pair => "two tokens from one state: S^T [k1 k2 q1 q2] as four independent reductions, S' = a1 a2 S + k1 (a2 d1)^T + k2 d2^T",
                0 => "o = S^T q after the update (tilegym's)",
                1 => "o = S'^T q + delta (k.q): both reductions from the decayed state S'",
                3 => "o = S'^T q + delta (k.q), both reductions from S scaled by exp(g) afterwards, S' = S exp(g) + k delta^T as one fma",
                4 => "as the fma step (S' = S exp(g) + k delta^T), with k.q from the first kernel (gdr_qk_dot) instead of a reduction at the step",
                5 => "o = c S~^T q + delta (k.q) with S = c S~, c the decays' product: S~ <- S~ + k (delta / c)^T as one fma, S~ renormalised after the update when c < 2^-20",
                _ => "o = S'^T q + delta (k.q), S'^T k and S'^T q as one [2, BK, BV] reduction",
            }),
        );
        tuning.insert("prefetch_steps".into(), json!(t.prefetch));
        if t.prefetch > 0 {
            tuning.insert("prefetch_loads".into(), json!(if t.prefetch_tma { "tma" } else { "plain" }));
        }
    }
    if chunked {
        tuning.insert("chunk_size".into(), json!(chunk));
    }
    tuning.insert("block_k".into(), json!(bk));
    tuning.insert("block_v".into(), json!(bv));
    tuning.insert("occupancy".into(), json!(t.occupancy));
    tuning.insert("state".into(), json!("f32 [BK, BV] in registers, one block per (batch, head, BV columns)"));
    tuning.insert("use_init".into(), json!(s.init));
    tuning.insert("out_final".into(), json!(s.final_state));
    tuning.insert("use_l2".into(), json!(s.l2));
    tuning.insert("q_scale".into(), json!(q_scale));
    tuning.insert("g_dtype".into(), json!(s.g_elem));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel,
        elem: s.elem,
        generics: [s.elem.to_string(), s.g_elem.to_string()]
            .into_iter()
            .chain((t.chunk > 0).then(|| t.chunk.to_string()))
            .chain([bk.to_string(), bv.to_string()])
            .chain(flags.clone())
            .chain((t.chunk == 0 && !t.pair).then(|| t.fuse.to_string()))
            .chain((t.chunk == 0).then(|| t.prefetch.to_string()))
            .chain((t.chunk == 0 && !t.pair).then(|| i32::from(t.prefetch_tma).to_string()))
            .collect(),
        tensors,
        args,
        grid: grid_of(&[s.b * s.h, s.v], &[1, bv])?,
        stem: format!(
            "gdr{}_{}_g{}_k{bk}v{bv}_i{}f{}l{}_o{}{}{}",
            match (t.chunk, t.pair) {
                (0, true) => "x2".to_string(),
                (0, false) => String::new(),
                (c, _) => format!("c{c}"),
            },
            s.elem,
            s.g_elem,
            flags[0],
            flags[1],
            flags[2],
            t.occupancy,
            if t.fuse > 0 { format!("_f{}", t.fuse) } else { String::new() },
            if t.prefetch > 0 { format!("_p{}{}", t.prefetch, if t.prefetch_tma { "t" } else { "" }) } else { String::new() }
        ),
        variant: t.name(),
        occupancy: Some(t.occupancy),
        worker_warps: None,
        extra_launches: Vec::new(),
        tuning,
    })
}

/// The scratch tensor of the `k . q` products (`FUSE` 4), f32 `[B, T, H]`.
pub const QK_DOT: &str = "qk_dot";

/// `1 / sqrt(K)` as the kernels' f32 literal.
fn q_scale_of(k: i64) -> f64 {
    (1.0 / (k as f64).sqrt()) as f32 as f64
}

fn q_scale_arg(q_scale: f64) -> KernelArg {
    KernelArg::Scalar { name: "q_scale".into(), ty: ScalarType::F32, value: LitValue::Float(q_scale) }
}

/// The plan's scratch buffer seen as `t` (its name, shape and strides).
fn scratch_arg(t: &TensorLayout) -> KernelArg {
    KernelArg::Scratch { name: t.name.clone(), shape: t.shape.clone(), strides: t.strides.clone(), partition: None }
}

/// The first kernel of a `FUSE` 4 plan: `k . q` of every (batch, token, head) row into `qk_dot`,
/// `q` and `k` seen as `[B T H, K]`, 8192 elements a tile (64 rows at K 128).
fn qk_dot_stage(params: &Value, variant: &str) -> Result<Plan> {
    let s = shape_of(params)?;
    let bk = pow2_ceil(s.k).max(16);
    let rows = (8192 / bk).min(128);
    let n = s.b * s.t * s.h;
    let q = TensorLayout::contiguous("q", &[n, s.k], s.bytes);
    let k = TensorLayout::contiguous("k", &[n, s.k], s.bytes);
    let qk = TensorLayout::contiguous(QK_DOT, &[n], 4);
    let args = vec![view_arg_at(&q, 0, None), view_arg_at(&k, 0, None), scratch_arg(&qk), q_scale_arg(q_scale_of(s.k))];
    let tensors = vec![q, k, qk];
    let l2 = i32::from(s.l2);
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("gdr_qk_dot"));
    tuning.insert("rows".into(), json!(rows));
    tuning.insert("block_k".into(), json!(bk));
    tuning.insert("use_l2".into(), json!(s.l2));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "gdr_qk_dot",
        elem: s.elem,
        generics: vec![s.elem.to_string(), rows.to_string(), bk.to_string(), l2.to_string()],
        tensors,
        args,
        grid: grid_of(&[n], &[rows])?,
        stem: format!("gdr_qkdot_{}_r{rows}_k{bk}_l{l2}", s.elem),
        variant: variant.to_string(),
        occupancy: None,
        worker_warps: None,
        extra_launches: Vec::new(),
        tuning,
    })
}

/// [`candidates`] as launch plans: one kernel, or for `FUSE` 4 the `k . q` kernel then the
/// recurrence, sharing `qk_dot`. The plan's `tuning` is the recurrence's (with `kernels` naming
/// both when there are two).
pub fn staged_candidates(op: &str, params: &Value, o: Overrides, t: &Target) -> Result<Option<Vec<StagedPlan>>> {
    let Some(cands) = candidates(op, params, o, t)? else { return Ok(None) };
    let mut plans = Vec::new();
    for p in cands.plans {
        let mut tuning = p.tuning.clone();
        let reads_dots = p.args.iter().any(|a| matches!(a, KernelArg::Scratch { name, .. } if name == QK_DOT));
        let (scratch, stages) = if reads_dots {
            let s = shape_of(params)?;
            tuning.insert("kernels".into(), json!(["gdr_qk_dot", p.kernel]));
            (vec![Scratch { name: QK_DOT.into(), bytes: s.b * s.t * s.h * 4 }], vec![qk_dot_stage(params, &p.variant)?, p])
        } else {
            (Vec::new(), vec![p])
        };
        plans.push(StagedPlan { variant: stages.last().expect("a stage").variant.clone(), tuning, scratch, stages });
    }
    Ok(Some(plans))
}

/// The default plan first, then the variants that apply (names are the knobs, duplicates
/// dropped); `Ok(None)` for operators not in [`OPERATORS`].
pub fn candidates(op: &str, params: &Value, o: Overrides, _t: &Target) -> Result<Option<Candidates>> {
    if !OPERATORS.contains(&op) {
        return Ok(None);
    }
    ensure!(o == Overrides::default(), "{op} takes no suite tuning overrides: its tile choices are the manifest's variants");
    let all = candidates_list();
    let mut plans = Vec::new();
    let mut first_err = None;
    for alt in &all {
        match plan_gdr(op, params, *alt) {
            Ok(p) if plans.iter().all(|q: &Plan| q.variant != p.variant) => plans.push(p),
            Ok(_) => {}
            Err(e) if first_err.is_none() => first_err = Some(e),
            Err(_) => {}
        }
    }
    match (plans.is_empty(), first_err) {
        (true, Some(e)) => Err(e),
        _ => Ok(Some(Candidates { plans })),
    }
}

/// The default plan ([`candidates`]' first).
pub fn plan(op: &str, params: &Value, o: Overrides, t: &Target) -> Result<Option<Plan>> {
    Ok(candidates(op, params, o, t)?.map(|c| c.plans.into_iter().next().expect("at least the default")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{entry_params, Param};

    fn cfg(t: i64, extra: Value) -> Value {
        let mut c = json!({"B": 2, "T": t, "H": 4, "K": 128, "V": 128, "dtype": "bfloat16"});
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    }

    fn default_plan(op: &str, c: &Value) -> Plan {
        plan(op, c, Overrides::default(), &Target::h200()).unwrap().unwrap()
    }

    #[test]
    fn binds_the_reference_tensors_in_order() {
        let p = default_plan("recurrent_gated_delta_rule", &cfg(128, json!({})));
        assert_eq!(p.grid, [8, 2, 1]);
        assert_eq!(p.generics, ["bf16", "bf16", "128", "64", "0", "1", "0", "0", "0", "0"]);
        assert_eq!(p.variant, "bv64_o2");
        let ps = entry_params(&p.args);
        // q, k, v, o: 1 + 4 + 4; g, beta: 1 + 3 + 3; two states 1 + 4 + 4; qk_dot 1 + 3 + 3; q_scale.
        assert_eq!(ps.len(), 4 * 9 + 2 * 7 + 2 * 9 + 7 + 1);
        assert_eq!(ps[0].param, Param::Ptr { tensor: "q".into() });
        assert_eq!(ps[27].param, Param::Ptr { tensor: "g".into() });
        assert_eq!(ps[34].param, Param::Ptr { tensor: "beta".into() });
        assert_eq!(ps[41].param, Param::Ptr { tensor: "o".into() });
        // No initial state: a null pointer and literal 1s.
        assert_eq!(ps[50].param, Param::Null);
        assert!(ps[51..59].iter().all(|e| e.param == Param::Literal { ty: ScalarType::I32, value: LitValue::Int(1) }));
        assert_eq!(ps[59].param, Param::Ptr { tensor: "final_state".into() });
        assert_eq!(ps[60].param, Param::Extent { tensor: "final_state".into(), dim: 0, ty: ScalarType::I32 });
        // Only FUSE 4 reads k . q from the first kernel: a null pointer here.
        assert_eq!(ps[68].param, Param::Null);
        let Param::Literal { value: LitValue::Float(s), .. } = ps[75].param else { panic!("q_scale") };
        assert_eq!(s, (1.0f64 / 128f64.sqrt()) as f32 as f64);
    }

    #[test]
    fn optional_tensors_follow_the_flags() {
        let p = default_plan("recurrent_gated_delta_rule", &cfg(64, json!({"use_init": true, "out_final": false, "use_l2": true, "g_dtype": "float32"})));
        assert_eq!(p.generics, ["bf16", "f32", "128", "64", "1", "0", "1", "0", "0", "0"]);
        let ps = entry_params(&p.args);
        assert_eq!(ps[50].param, Param::Ptr { tensor: "initial_state".into() });
        assert_eq!(ps[59].param, Param::Null);
        assert_eq!(p.tensors.iter().find(|t| t.name == "g").unwrap().dtype_bytes, 4);
    }

    #[test]
    fn small_heads_and_the_variants() {
        let c = cfg(100, json!({"K": 48, "V": 24}));
        let cands = candidates("recurrent_gated_delta_rule", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        // V 24 -> at most 32 columns a block: 64 is refused, 32 is the default.
        assert_eq!(
            cands.names(),
            [
                "bv32_o2", "bv16_o2", "bv16_o4", "bv8_o4", "bv8_o6", "bv32_o2_f2", "bv16_o2_f1", "bv16_o2_f2", "bv32_o4_f1_p1", "bv32_o4_f1_p1t",
                "bv16_o2_p1", "bv16_o2_p2", "bv16_o2_p1t", "bv8_o4_p2", "bv32_o4_f3_p1t", "bv16_o2_f3_p1t", "pair_bv32_o4", "pair_bv32_o4_p1t",
                "pair_bv16_o2", "pair_bv16_o2_p1t", "bv32_o4_f4_p1t", "bv16_o2_f4_p1t", "bv16_o2_f5", "bv16_o2_f5_p1t"
            ],
            "V 24: no chunked, fused or prefetching plan of 64 columns"
        );
        assert_eq!(cands.plans[0].generics[2], "64");
        assert_eq!(cands.plans[0].grid, [8, 1, 1]);
    }

    #[test]
    fn the_chunked_variant() {
        let c = cfg(100, json!({}));
        let cands = candidates("chunk_gated_delta_rule", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        let p = cands.find("chunked_c64_bv64_o1").expect("chunked variant");
        assert_eq!(p.kernel, "gated_delta_rule_chunked");
        assert_eq!(p.generics, ["bf16", "bf16", "64", "128", "64", "0", "1", "0"]);
        assert_eq!(p.grid, [8, 2, 1]);
        assert_eq!(p.occupancy, Some(1));
        // Same parameters as the sequential kernel.
        assert_eq!(entry_params(&p.args), entry_params(&cands.plans[0].args));
        assert_eq!(cands.plans[0].kernel, "gated_delta_rule", "the sequential kernel stays the default");
    }

    #[test]
    fn the_prefetching_variants() {
        let c = cfg(100, json!({}));
        let cands = candidates("chunk_gated_delta_rule", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        // PF and PT are the last two generics; the stem and the recorded choice name them.
        let p = cands.find("bv64_o2_f1_p1t").expect("prefetch variant");
        assert_eq!(p.generics, ["bf16", "bf16", "128", "64", "0", "1", "0", "1", "1", "1"]);
        assert!(p.stem.ends_with("_o2_f1_p1t"), "{}", p.stem);
        assert_eq!((p.tuning["prefetch_steps"].clone(), p.tuning["prefetch_loads"].clone()), (json!(1), json!("tma")));
        // Two steps ahead through TMA does not compile (tileiras 13.4.92: "failed to compile Tile IR program").
        assert!(cands.find("bv64_o2_f1_p2t").is_none());
        let q = cands.find("bv32_o4_f1_p1").expect("prefetch variant");
        assert_eq!((q.grid, q.occupancy), ([8, 4, 1], Some(4)));
        assert_eq!(q.generics[8..], ["1", "0"]);
        assert_eq!(q.tuning["prefetch_loads"], json!("plain"));
        // The default loads at the step.
        assert_eq!(cands.plans[0].tuning["prefetch_steps"], json!(0));
        assert!(cands.plans[0].tuning.get("prefetch_loads").is_none());
    }

    #[test]
    fn the_pair_variants() {
        let c = cfg(101, json!({}));
        let cands = candidates("chunk_gated_delta_rule", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        let p = cands.find("pair_bv64_o2").expect("pair variant");
        assert_eq!(p.kernel, "gated_delta_rule_pair");
        // No FUSE and no PT: E, G, BK, BV, INIT, FINAL, L2, PF.
        assert_eq!(p.generics, ["bf16", "bf16", "128", "64", "0", "1", "0", "0"]);
        assert_eq!((p.grid, p.occupancy), ([8, 2, 1], Some(2)));
        assert!(p.stem.starts_with("gdrx2_bf16_gbf16_k128v64_i0f1l0_o2"), "{}", p.stem);
        assert!(p.tuning["algorithm"].as_str().unwrap().contains("two tokens a step"));
        assert_eq!(entry_params(&p.args), entry_params(&cands.plans[0].args), "the sequential kernel's parameters");
        let q = cands.find("pair_bv64_o2_p1t").expect("prefetching pair variant");
        assert_eq!(q.generics[7], "1");
        assert_ne!(q.stem, p.stem);
    }

    #[test]
    fn the_dot_product_plans_are_two_kernels_sharing_a_scratch_tensor() {
        let c = cfg(100, json!({"K": 96, "use_l2": true}));
        let plans = staged_candidates("chunk_gated_delta_rule", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        let names: Vec<&str> = plans.iter().map(|p| p.variant.as_str()).collect();
        assert_eq!(names, candidates("chunk_gated_delta_rule", &c, Overrides::default(), &Target::h200()).unwrap().unwrap().names());
        // One kernel and no scratch, except FUSE 4.
        for p in &plans {
            assert_eq!(p.stages.len(), if p.variant.contains("_f4") { 2 } else { 1 }, "{}", p.variant);
            assert_eq!(p.scratch.is_empty(), p.stages.len() == 1, "{}", p.variant);
        }
        let p = plans.iter().find(|p| p.variant == "bv64_o2_f4_p1t").expect("f4 variant");
        // B 2, T 100, H 4: one f32 per (batch, token, head).
        assert_eq!(p.scratch, [Scratch { name: QK_DOT.into(), bytes: 2 * 100 * 4 * 4 }]);
        assert_eq!(p.tuning["kernels"], json!(["gdr_qk_dot", "gated_delta_rule"]));
        let (dots, step) = (&p.stages[0], &p.stages[1]);
        // K 96 -> BK 128, 64 rows a block over 800 rows.
        assert_eq!((dots.kernel, dots.generics.clone(), dots.grid), ("gdr_qk_dot", vec!["bf16".to_string(), "64".into(), "128".into(), "1".into()], [13, 1, 1]));
        let dp = entry_params(&dots.args);
        assert_eq!(dp[0].param, Param::Ptr { tensor: "q".into() });
        // q seen as [B T H, K]: 800 rows of 96.
        assert_eq!(dp[1].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(800) });
        assert_eq!(dp[2].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(96) });
        let at = |ps: &[crate::abi::EntryParam], name: &str| ps.iter().position(|e| e.param == Param::Scratch { name: name.into() });
        let sp = entry_params(&step.args);
        assert_eq!(at(&sp, QK_DOT), Some(68), "the step reads the scratch tensor where the others bind a null pointer");
        assert!(at(&dp, QK_DOT).is_some());
        assert_eq!(step.generics[7], "4");
        assert!(step.tuning["step"].as_str().unwrap().contains("gdr_qk_dot"));
    }

    #[test]
    fn refusals_name_the_reason() {
        let err = |c: Value| candidates("recurrent_gated_delta_rule", &c, Overrides::default(), &Target::h200()).unwrap_err().to_string();
        assert!(err(cfg(8, json!({"K": 512}))).contains("K = 512 exceeds 256"));
        assert!(err(cfg(8, json!({"dtype": "float8_e4m3fn"}))).contains("unsupported dtype"));
        assert!(err(cfg(1 << 20, json!({"B": 8}))).contains("more than 2^31-1"));
    }

    #[test]
    fn every_tilegym_configuration_has_a_plan() {
        let suite: Value =
            serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/tilegym.json")).unwrap()).unwrap();
        let mut n = 0;
        for c in suite["configs"].as_array().unwrap() {
            let op = c["op"].as_str().unwrap();
            if !OPERATORS.contains(&op) {
                continue;
            }
            let cands = candidates(op, &c["params"], Overrides::default(), &Target::h200()).unwrap().unwrap();
            assert_eq!(cands.plans[0].variant, "bv64_o2", "{op} {}", c["params"]);
            assert_eq!(cands.plans.len(), candidates_list().len());
            n += 1;
        }
        assert_eq!(n, 16);
    }
}
