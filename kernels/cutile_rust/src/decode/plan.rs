// SPDX-License-Identifier: Apache-2.0
//! Plans of the decode attention operators: multi-kernel launch plans (a split-KV pass that
//! writes partial outputs and base-2 LSEs into scratch buffers, then `splitk_reduce` over the
//! splits), their split counts and tiles per configuration and target, and the tuning
//! candidates beside the default.
//!
//! flash_decode's tensors are the reference's (reference/src/ops/flash_decode.cpp): q and o
//! `[B, Hq, 1, D]`, k and v `[B, Hkv, S, D]`, contiguous; the partials `[B, Hq, splits, D]` (the
//! element type) and LSEs `[B, Hq, splits]` (f32) are the plan's scratch, as in tilegym's
//! wrapper (`tilegym/ops/cutile/flash_decode.py`: `Att_Mid_Out`, `LSE_Out`).

use anyhow::{bail, ensure, Result};
use serde_json::{json, Map, Value};

use crate::abi::{KernelArg, LitValue, ScalarType};
use crate::plan::{ceil_div, grid_of, param_f64_or, param_i64, param_int_or, param_str, pow2_ceil, specialization_json, tensor_arg, Overrides, Plan, TensorLayout};
use crate::target::Target;
use crate::gemm::plan::{splitk_dot_generic, weighted_sum_name};

/// Operators of this module (registered in `crate::plan::OPERATORS`).
pub const OPERATORS: &[&str] = &["flash_decode", "gemma_attention_decode", "attention_sink_decode", "mla_decoding", "mla_decoding_split_kv"];

/// A scratch buffer a plan declares (manifest `configs[].scratch[]`, `init` `none`: every
/// byte the reduce reads is written by the pass before it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scratch {
    pub name: String,
    pub bytes: i64,
}

/// A launch plan of several kernels on one stream, in order (`stages`), sharing `scratch`.
#[derive(Clone, Debug)]
pub struct StagedPlan {
    /// The plan's name among the configuration's variants: its knobs.
    pub variant: String,
    /// Recorded in the manifest's `tuning` (with each stage's own under `stages`).
    pub tuning: Map<String, Value>,
    pub scratch: Vec<Scratch>,
    pub stages: Vec<Plan>,
}

/// The knobs of a flash_decode plan: keys per tile of the pass (`BN`), the multiple of the SM
/// count the split count aims at (`waves`; tilegym: 1), and the pass's occupancy hint (tilegym
/// sets none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeKnobs {
    pub bn: i64,
    pub waves: i64,
    pub occupancy: Option<i32>,
    /// The pass's key tiles per split as a compile-time constant (tilegym's `KV_LEN_PER_SPLIT`
    /// is one: its one-tile splits compile to straight-line code), not a count at run time.
    pub fixed: bool,
    /// The pass stores its partial output and LSE with plain stores (latency hint 1), as
    /// tilegym's pass does when the group is narrower than its query tile, rather than through
    /// TMA, whose bulk store a block waits on before it exits.
    pub plain_stores: bool,
    /// Splits of whole key tiles (`window_splits_for`) rather than tilegym's power-of-two
    /// lengths: with three blocks an SM aimed, 31079 keys in 128-key tiles make 49 splits of 5
    /// tiles (392 of 396 slots) where the power of two makes 31 splits of 1024 keys.
    pub whole_tiles: bool,
    pub reduce: ReduceKnobs,
}

impl DecodeKnobs {
    pub fn name(&self) -> String {
        let occ = self.occupancy.map_or("nohint".to_string(), |o| format!("occ{o}"));
        let ps = if self.plain_stores { "_ps" } else { "" };
        let wt = if self.whole_tiles { "_wt" } else { "" };
        format!("n{}_x{}_{occ}{wt}{}{ps}{}", self.bn, self.waves, if self.fixed { "_fixed" } else { "" }, self.reduce.suffix())
    }
}

/// tilegym's plan: 128 keys per tile, splits for one wave of blocks, no hint.
pub const DEFAULT: DecodeKnobs = DecodeKnobs { bn: 128, waves: 1, occupancy: None, fixed: false, plain_stores: false, whole_tiles: false, reduce: REDUCE_DEFAULT };

/// The alternatives worth timing beside [`DEFAULT`] (more splits per SM for the long KV
/// lengths where one block per SM walks 8192 keys, an occupancy hint, a smaller key tile). The
/// `plain_stores` ones: the variants a plain-stores plan beat on an H100 (twenty-first session,
/// docs/device-log.md); a plan with them alone or with `fixed` alone won nowhere.
pub const ALTERNATIVES: &[DecodeKnobs] = &[
    DecodeKnobs { waves: 2, ..DEFAULT },
    DecodeKnobs { waves: 4, occupancy: Some(2), ..DEFAULT },
    DecodeKnobs { bn: 64, ..DEFAULT },
    DecodeKnobs { fixed: true, ..DEFAULT },
    DecodeKnobs { waves: 4, occupancy: Some(2), fixed: true, ..DEFAULT },
    DecodeKnobs { fixed: true, reduce: REDUCE_NARROW, ..DEFAULT },
    DecodeKnobs { waves: 4, occupancy: Some(2), fixed: true, reduce: REDUCE_NARROW, ..DEFAULT },
    DecodeKnobs { reduce: REDUCE_DOT, ..DEFAULT },
    DecodeKnobs { fixed: true, reduce: REDUCE_DOT, ..DEFAULT },
    DecodeKnobs { fixed: true, reduce: REDUCE_NARROW_DOT, ..DEFAULT },
    DecodeKnobs { waves: 4, occupancy: Some(2), fixed: true, reduce: REDUCE_NARROW_DOT, ..DEFAULT },
    DecodeKnobs { waves: 4, occupancy: Some(2), plain_stores: true, ..DEFAULT },
    DecodeKnobs { fixed: true, plain_stores: true, reduce: REDUCE_NARROW, ..DEFAULT },
    DecodeKnobs { fixed: true, plain_stores: true, reduce: REDUCE_DOT, ..DEFAULT },
    DecodeKnobs { fixed: true, plain_stores: true, reduce: REDUCE_NARROW_DOT, ..DEFAULT },
    DecodeKnobs { waves: 4, occupancy: Some(2), fixed: true, plain_stores: true, reduce: REDUCE_NARROW, ..DEFAULT },
    DecodeKnobs { waves: 4, occupancy: Some(2), fixed: true, plain_stores: true, reduce: REDUCE_NARROW_DOT, ..DEFAULT },
    DecodeKnobs { plain_stores: true, reduce: REDUCE_DOT, ..DEFAULT },
    // The reduce without TMA, beside the form the H200 record chose most (flash_decode: the
    // narrow reduce after a one-wave fixed pass on 6 of 21 configurations). Its tensor-core form
    // was 0.948-1.005 of the same plan with TMA (H100, twenty-sixth session) and is not kept.
    DecodeKnobs { fixed: true, reduce: REDUCE_NARROW_PL, ..DEFAULT },
];

/// attention_sink_decode's own alternatives: its 64-wide heads make a 128-key tile 16 KB, so a
/// 256-key tile (32 KB a load, half the steps) keeps as many bytes in flight per SM as
/// flash_decode's 128-key tiles of 128-wide heads.
pub const SINK_ALTERNATIVES: &[DecodeKnobs] = &[
    DecodeKnobs { bn: 256, ..DEFAULT },
    DecodeKnobs { bn: 256, reduce: REDUCE_DOT, ..DEFAULT },
    DecodeKnobs { bn: 256, waves: 2, occupancy: Some(2), ..DEFAULT },
    DecodeKnobs { bn: 256, waves: 2, occupancy: Some(2), reduce: REDUCE_DOT, ..DEFAULT },
    DecodeKnobs { bn: 256, waves: 2, occupancy: Some(2), plain_stores: true, ..DEFAULT },
    DecodeKnobs { bn: 256, waves: 2, occupancy: Some(2), plain_stores: true, reduce: REDUCE_DOT, ..DEFAULT },
    DecodeKnobs { bn: 256, waves: 2, occupancy: Some(2), reduce: REDUCE_PL, ..DEFAULT },
    // The fastest of these on the H200 at 31079 keys (19.5-19.8 us, twenty-sixth session) with
    // the split's tiles as a constant, and three blocks an SM over whole-tile splits: 80% of the
    // copy bandwidth there is about 19.1 us.
    DecodeKnobs { bn: 256, waves: 2, occupancy: Some(2), fixed: true, ..DEFAULT },
    DecodeKnobs { bn: 256, waves: 2, occupancy: Some(2), fixed: true, plain_stores: true, ..DEFAULT },
    DecodeKnobs { bn: 256, waves: 2, occupancy: Some(2), fixed: true, reduce: REDUCE_DOT, ..DEFAULT },
    DecodeKnobs { bn: 128, waves: 3, occupancy: Some(3), whole_tiles: true, ..DEFAULT },
    DecodeKnobs { bn: 128, waves: 3, occupancy: Some(3), whole_tiles: true, fixed: true, ..DEFAULT },
    DecodeKnobs { bn: 128, waves: 3, occupancy: Some(3), whole_tiles: true, fixed: true, plain_stores: true, ..DEFAULT },
    DecodeKnobs { bn: 256, waves: 3, occupancy: Some(3), whole_tiles: true, fixed: true, ..DEFAULT },
];

/// The pass's `TILES` generic (the key tiles of a split when fixed, else 0: counted at run
/// time), recorded as the pass's `tiles_per_split`; returns it and the cubin stem's suffix.
fn fixed_tiles(fixed: bool, len: i64, bn: i64, tuning: &mut Map<String, Value>) -> (i64, String) {
    if !fixed {
        tuning.insert("tiles_per_split".into(), json!("run time"));
        return (0, String::new());
    }
    debug_assert_eq!(len % bn, 0, "a split is whole key tiles");
    tuning.insert("tiles_per_split".into(), json!(len / bn));
    (len / bn, format!("_t{}", len / bn))
}

/// Occupancy hint of the reduce: tilegym's `ByTarget(sm_80=2, default=4)`, 4 on sm_90 (its
/// exported Tile IR says `default = {occupancy = 4}`).
pub const REDUCE_OCCUPANCY: i32 = 4;

/// The reduce stage's knobs: the widest head-dimension tile a block takes (tilegym: 128), its
/// occupancy hint, and the weighted sum as a tensor-core product (`dot`, tilegym's `USE_DOT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceKnobs {
    pub max_td: i64,
    pub occupancy: i32,
    pub dot: bool,
    /// The partials loaded and `o` stored by TMA (tilegym's), else by per-thread loads and
    /// stores: a block that reads one small tile once waits on a bulk copy and its barrier.
    pub tma: bool,
}

/// The port's reduce: tilegym's tiles and hint, the weighted sum elementwise.
pub const REDUCE_DEFAULT: ReduceKnobs = ReduceKnobs { max_td: 128, occupancy: REDUCE_OCCUPANCY, dot: false, tma: true };
/// Half the columns a block, twice the blocks (the standalone splitk_reduce's most frequent
/// tuned choice on the H200, `d64_o2`).
pub const REDUCE_NARROW: ReduceKnobs = ReduceKnobs { max_td: 64, occupancy: 2, dot: false, tma: true };
/// tilegym's reduce from 16 splits on sm_90: the weighted sum on the tensor cores.
pub const REDUCE_DOT: ReduceKnobs = ReduceKnobs { dot: true, ..REDUCE_DEFAULT };
pub const REDUCE_NARROW_DOT: ReduceKnobs = ReduceKnobs { dot: true, ..REDUCE_NARROW };
/// The reduces above with per-thread loads and stores (`_pl`).
pub const REDUCE_PL: ReduceKnobs = ReduceKnobs { tma: false, ..REDUCE_DEFAULT };
pub const REDUCE_NARROW_PL: ReduceKnobs = ReduceKnobs { tma: false, ..REDUCE_NARROW };

impl ReduceKnobs {
    /// The variant-name suffix ("" for the default; `_dot` for its tensor-core form, `_pl` for
    /// per-thread loads and stores).
    fn suffix(&self) -> String {
        let tiles = ReduceKnobs { dot: false, tma: true, ..*self };
        let base = if tiles == REDUCE_DEFAULT { String::new() } else { format!("_r{}o{}", self.max_td, self.occupancy) };
        format!("{base}{}{}", if self.dot { "_dot" } else { "" }, if self.tma { "" } else { "_pl" })
    }
}

/// The largest head-dimension tile: `[BN, D]` key and value tiles and the `[D, G]` f32
/// accumulator stay in registers.
pub const MAX_HEAD_TILE: i64 = 256;

/// The split-KV partition of one configuration: `splits` of `len` keys (a multiple of the
/// key tile, a power of two), every split holding at least one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Splits {
    pub splits: i64,
    pub len: i64,
}

/// tilegym's split rule, for `waves` times the target's SM count: aim at
/// `max(1, waves * SMs / (B * Hkv))` splits, round their length up to a power of two of at least
/// one key tile, and keep the splits that hold keys (`ceil(S / len)`).
pub fn splits_for(b: i64, hkv: i64, s: i64, bn: i64, waves: i64, sms: i64) -> Splits {
    let aim = (waves * sms / (b * hkv)).max(1);
    let len = pow2_ceil(ceil_div(s, aim)).max(bn);
    Splits { splits: ceil_div(s, len), len }
}

/// The split rule of a windowed range: aim at `max(1, waves * SMs / (B * Hkv))` splits, each a
/// whole number of key tiles (`len = bn * ceil(tiles / aim)`, no power-of-two rounding), every
/// split holding keys.
pub fn window_splits_for(b: i64, hkv: i64, s: i64, bn: i64, waves: i64, sms: i64) -> Splits {
    let aim = (waves * sms / (b * hkv)).max(1);
    let len = bn * ceil_div(ceil_div(s, bn), aim);
    Splits { splits: ceil_div(s, len), len }
}

/// The splits of `s` keys by [`window_splits_for`] (whole key tiles) or [`splits_for`] (tilegym's
/// power of two).
fn gqa_splits(whole_tiles: bool, b: i64, hkv: i64, s: i64, k: &DecodeKnobs, t: &Target) -> Splits {
    if whole_tiles {
        window_splits_for(b, hkv, s, k.bn, k.waves, t.sm_count)
    } else {
        splits_for(b, hkv, s, k.bn, k.waves, t.sm_count)
    }
}

/// The split rule a GQA plan recorded: [`window_splits_for`]'s whole tiles or [`splits_for`]'s
/// power of two, over `keys` (the attended keys from the key tile of the first one).
fn split_rule(whole_tiles: bool, k: &DecodeKnobs, t: &Target, keys: &str) -> String {
    let (bn, waves, sms) = (k.bn, k.waves, t.sm_count);
    let len = if whole_tiles {
        format!("{bn} x ceil(ceil(K / {bn}) / max(1, {waves} x {sms} SMs / (B x Hkv)))")
    } else {
        format!("max({bn}, pow2(ceil(K / max(1, {waves} x {sms} SMs / (B x Hkv)))))")
    };
    format!("splits = ceil(K / len), len = {len}, K = {keys} keys from the key tile of the first one attended")
}

/// flash_decode's configuration as the reference reads it.
struct DecodeShape {
    b: i64,
    hq: i64,
    hkv: i64,
    s: i64,
    d: i64,
    scale: f64,
    /// The first key attended (gemma's window), and the soft cap (0: none).
    lo: i64,
    cap: f64,
    /// The K/V loads' latency hint (0: none): tilegym's gemma decode says 3, its flash_decode
    /// none.
    lat: i32,
    elem: &'static str,
    bytes: i32,
}

/// The element type of a decode pass and its bytes.
fn decode_elem(dtype: &str) -> Result<(&'static str, i32)> {
    Ok(match dtype {
        "float16" => ("f16", 2),
        "bfloat16" => ("bf16", 2),
        other => bail!("unsupported dtype {other:?}: the decode pass's tensor-core products take float16 or bfloat16 operands"),
    })
}

/// The checks every GQA decode configuration passes.
fn check_decode(x: &DecodeShape) -> Result<()> {
    ensure!(
        pow2_ceil(x.d) <= MAX_HEAD_TILE,
        "head_dim {}: the head-dimension tile {} exceeds {MAX_HEAD_TILE} (the [keys, head_dim] tiles and the accumulator must stay in registers)",
        x.d,
        pow2_ceil(x.d)
    );
    for (name, n) in [("k", x.b * x.hkv * x.s * x.d), ("q", x.b * x.hq * x.d)] {
        ensure!(
            n <= i32::MAX as i64,
            "tensor {name} has {n} elements, more than 2^31-1 (cutile-rs 0.5.0 shapes, strides and offsets are i32)"
        );
    }
    Ok(())
}

/// gemma_attention_decode's configuration (reference/src/ops/gemma_attention_decode.cpp): the
/// tensors of flash_decode, logits soft-capped, keys from `max(0, S - 1 - window)` when
/// `window` > 0.
fn gemma_shape(params: &Value) -> Result<DecodeShape> {
    let (b, hq) = (param_i64(params, "batch")?, param_i64(params, "heads")?);
    let hkv = param_int_or(params, "kv_heads", hq)?;
    ensure!(hkv > 0 && hq % hkv == 0, "heads must be a multiple of kv_heads");
    let (s, d) = (param_i64(params, "seq_len_kv")?, param_i64(params, "head_dim")?);
    let window = param_int_or(params, "window", 0)?;
    let lo = if window > 0 { (s - 1 - window).max(0) } else { 0 };
    let scale = param_f64_or(params, "scaling", 1.0 / (d as f64).sqrt())?;
    let cap = param_f64_or(params, "soft_cap", 0.0)?;
    let (elem, bytes) = decode_elem(param_str(params, "dtype")?)?;
    let x = DecodeShape { b, hq, hkv, s, d, scale, lo, cap: cap.max(0.0), lat: 3, elem, bytes };
    check_decode(&x)?;
    Ok(x)
}

fn decode_shape(params: &Value) -> Result<DecodeShape> {
    let (b, hq, hkv) = (param_i64(params, "batch")?, param_i64(params, "num_q_heads")?, param_i64(params, "num_kv_heads")?);
    let (s, d) = (param_i64(params, "seq_len")?, param_i64(params, "head_dim")?);
    ensure!(
        hq % hkv == 0 && param_int_or(params, "group_size", hq / hkv)? == hq / hkv,
        "num_q_heads must be group_size * num_kv_heads"
    );
    let scale = param_f64_or(params, "sm_scale", 1.0 / (d as f64).sqrt())?;
    let (elem, bytes) = decode_elem(param_str(params, "dtype")?)?;
    let x = DecodeShape { b, hq, hkv, s, d, scale, lo: 0, cap: 0.0, lat: 0, elem, bytes };
    check_decode(&x)?;
    Ok(x)
}

fn lit_i32(name: &str, v: i64) -> KernelArg {
    KernelArg::Scalar { name: name.into(), ty: ScalarType::I32, value: LitValue::Int(v) }
}

/// A view of the operator's tensor `t.name` with `t`'s shape and strides (literals).
fn view_arg(t: &TensorLayout) -> KernelArg {
    KernelArg::View { name: t.name.clone(), offset: 0, shape: t.shape.clone(), strides: t.strides.clone(), partition: None }
}

fn scratch_arg(t: &TensorLayout) -> KernelArg {
    KernelArg::Scratch { name: t.name.clone(), shape: t.shape.clone(), strides: t.strides.clone(), partition: None }
}

/// The split-KV pass then the reduce, for one set of knobs (flash_decode, and
/// gemma_attention_decode with its window and soft cap).
fn plan_flash_decode(params: &Value, k: DecodeKnobs, t: &Target) -> Result<StagedPlan> {
    plan_gqa_decode(decode_shape(params)?, k, t)
}

fn plan_gqa_decode(x: DecodeShape, k: DecodeKnobs, t: &Target) -> Result<StagedPlan> {
    ensure!(k.bn >= 16 && k.bn & (k.bn - 1) == 0, "key tile {} must be a power of two >= 16", k.bn);
    let (b, hq, hkv, s, d) = (x.b, x.hq, x.hkv, x.s, x.d);
    let group = hq / hkv;
    // The query heads of a group are the N side of the products; 8 is the narrowest tile.
    let g = pow2_ceil(group).max(8);
    let dt = pow2_ceil(d).max(16);
    // The splits cover [base, S), base the start of the key tile holding the first key attended.
    let base = x.lo / k.bn * k.bn;
    // With a window (lo > 0) the attended range is what tilegym's pow2 rule would leave at
    // half a wave (72 of 132 blocks at S 8192, window 4096): split it in whole key tiles
    // instead, so a wave's blocks walk the fewest tiles.
    let whole_tiles = x.lo > 0 || k.whole_tiles;
    let sp = gqa_splits(whole_tiles, b, hkv, s - base, &k, t);
    let n = sp.splits;
    // Every split holds a key: the last starts below S.
    debug_assert!(base + (n - 1) * sp.len < s);
    let capped = x.cap > 0.0;

    // The pass: q seen per KV head, the scratch buffers seen per KV head and group member.
    let q = TensorLayout::strided("q", &[b, hkv, group, d], &[hq * d, group * d, d, 1], x.bytes);
    let kt = TensorLayout::contiguous("k", &[b, hkv, s, d], x.bytes);
    let vt = TensorLayout::contiguous("v", &[b, hkv, s, d], x.bytes);
    let po = TensorLayout::strided("partial_o", &[b, hkv, group, n, d], &[hq * n * d, group * n * d, n * d, d, 1], x.bytes);
    let ls = TensorLayout::strided("lse", &[b, hkv, group, n], &[hq * n, group * n, n, 1], 4);
    // With a soft cap the kernel scales by sm_scale, caps, then converts to base 2.
    let qk_scale = if capped { x.scale } else { x.scale * std::f64::consts::LOG2_E };
    let pass_args = vec![
        view_arg(&q),
        tensor_arg(&kt, None),
        tensor_arg(&vt, None),
        scratch_arg(&po),
        scratch_arg(&ls),
        KernelArg::Scalar { name: "qk_scale".into(), ty: ScalarType::F32, value: LitValue::Float(qk_scale) },
        KernelArg::Scalar { name: "cap".into(), ty: ScalarType::F32, value: LitValue::Float(if capped { x.cap } else { 0.0 }) },
        lit_i32("lo", x.lo),
        lit_i32("len", sp.len),
    ];
    let pass_tensors = vec![q, kt, vt, po, ls];
    let mut pass_tuning = Map::new();
    pass_tuning.insert("kernel".into(), json!("decode_split"));
    pass_tuning.insert("query_group_tile".into(), json!(g));
    pass_tuning.insert("head_dim_tile".into(), json!(dt));
    pass_tuning.insert("key_tile".into(), json!(k.bn));
    pass_tuning.insert("load_latency".into(), if x.lat > 0 { json!(x.lat) } else { json!("none") });
    pass_tuning.insert("occupancy".into(), k.occupancy.map_or(json!("none"), |o| json!(o)));
    pass_tuning.insert("partial_stores".into(), json!(if k.plain_stores { "plain, latency 1" } else { "TMA" }));
    let (tiles, fixed) = fixed_tiles(k.fixed, sp.len, k.bn, &mut pass_tuning);
    pass_tuning.insert("specialization".into(), specialization_json(&pass_tensors));
    let occ = k.occupancy.map_or(String::new(), |o| format!("_occ{o}"));
    let pass = Plan {
        kernel: "decode_split",
        elem: x.elem,
        generics: vec![
            x.elem.to_string(),
            g.to_string(),
            dt.to_string(),
            k.bn.to_string(),
            i32::from(capped).to_string(),
            x.lat.to_string(),
            tiles.to_string(),
            i32::from(k.plain_stores).to_string(),
        ],
        args: pass_args,
        tensors: pass_tensors,
        grid: grid_of(&[b, hkv, n], &[1, 1, 1])?,
        tuning: pass_tuning,
        stem: format!(
            "decode_split_{}_g{g}_d{dt}_n{}_c{}_l{}{occ}{fixed}{}",
            x.elem,
            k.bn,
            i32::from(capped),
            x.lat,
            if k.plain_stores { "_ps" } else { "" }
        ),
        variant: k.name(),
        occupancy: k.occupancy,
        worker_warps: None,
        extra_launches: Vec::new(),
    };

    // The reduce: crate::gemm's splitk_reduce over the same buffers, o seen as [B, Hq, D].
    let o = TensorLayout::strided("o", &[b, hq, d], &[hq * d, d, 1], x.bytes);
    let reduce = reduce_stage(x.elem, x.bytes, b, hq, n, d, view_arg(&o), o, &k.name(), k.reduce)?;

    let mut tuning = Map::new();
    tuning.insert("kernels".into(), json!(["decode_split", "splitk_reduce"]));
    tuning.insert("num_kv_splits".into(), json!(n));
    tuning.insert("kv_len_per_split".into(), json!(sp.len));
    tuning.insert("split_rule".into(), json!(split_rule(whole_tiles, &k, t, &format!("S - {base}"))));
    tuning.insert("first_key".into(), json!(x.lo));
    tuning.insert("soft_cap".into(), if capped { json!(x.cap) } else { json!("none") });
    tuning.insert("key_tile".into(), json!(k.bn));
    tuning.insert("qk_scale".into(), json!(qk_scale));
    tuning.insert("partials".into(), json!(format!("{} [B, Hq, splits, D], LSE f32 base 2 [B, Hq, splits]", x.elem)));
    Ok(StagedPlan {
        variant: k.name(),
        tuning,
        scratch: vec![
            Scratch { name: "partial_o".into(), bytes: b * hq * n * d * x.bytes as i64 },
            Scratch { name: "lse".into(), bytes: b * hq * n * 4 },
        ],
        stages: vec![pass, reduce],
    })
}

/// mla_decoding's and mla_decoding_split_kv's configuration as the reference reads it
/// (reference/src/ops/mla_decoding.cpp): q [B, H, D], qpe [B, H, Dpe], kv [B, S, D], kpe
/// [B, S, Dpe], o [B, H, D] (and mla_decoding's lse [B, H] f32, base 2).
struct MlaShape {
    b: i64,
    h: i64,
    s: i64,
    d: i64,
    dpe: i64,
    scale: f64,
    elem: &'static str,
    bytes: i32,
}

fn mla_shape(params: &Value, split: bool) -> Result<MlaShape> {
    let b = param_i64(params, "batch")?;
    let h = param_i64(params, "num_heads")?;
    let s = param_i64(params, if split { "seq_len" } else { "S_kv" })?;
    let d = param_int_or(params, if split { "head_dim" } else { "BLOCK_D" }, 512)?;
    let dpe = param_int_or(params, if split { "kpe_dim" } else { "BLOCK_KPE" }, 64)?;
    ensure!(d > 0 && dpe > 0, "head dimensions must be positive, got {d} and {dpe}");
    let scale = param_f64_or(params, "sm_scale", 1.0 / ((d + dpe) as f64).sqrt())?;
    let dtype = param_str(params, "dtype")?;
    let (elem, bytes) = match dtype {
        "float16" => ("f16", 2),
        "bfloat16" => ("bf16", 2),
        other => bail!("unsupported dtype {other:?}: the MLA pass's tensor-core products take float16 or bfloat16 operands"),
    };
    for (what, v) in [("head_dim", d), ("kpe_dim", dpe)] {
        ensure!(v & (v - 1) == 0 && v >= 16, "{what} {v} is not a power of two >= 16 (tilegym's kernels require it too)");
    }
    ensure!(d <= 512 && dpe <= 128, "head dimensions {d} + {dpe} exceed the 512 + 128 the pass keeps in one tile");
    // mla_decoding launches batch groups that fit (`mla_batch_groups`); the split-KV pass's
    // scratch views span every batch, so there the whole tensors must fit.
    let batches = if split { b } else { 1 };
    for (name, n) in [("kv", batches * s * d), ("q", batches * h * d)] {
        ensure!(
            n <= i32::MAX as i64,
            "tensor {name} has {n} elements{}, more than 2^31-1 (cutile-rs 0.5.0 shapes, strides and offsets are i32)",
            if split { "" } else { " in one batch" }
        );
    }
    Ok(MlaShape { b, h, s, d, dpe, scale, elem, bytes })
}

/// mla_decoding's launches: `groups` launches of `B / groups` batches each, the fewest for
/// which one launch's views (kv, the largest, `nb x S x D` elements) fit cutile-rs's i32
/// indices; equal groups, so every launch has the specialisation the cubin was compiled for.
pub fn mla_batch_groups(b: i64, s: i64, d: i64, h: i64) -> i64 {
    let per_batch = (s * d).max(h * d);
    (1..=b).find(|&g| b % g == 0 && (b / g) * per_batch <= i32::MAX as i64).unwrap_or(b)
}

/// The knobs of an MLA plan: heads per block (`TH`, tilegym: 16), keys per tile (`BN`;
/// tilegym: 64 for mla_decoding on sm_90, 128 for the split-KV pass) and the pass's occupancy
/// hint (tilegym: none for mla_decoding, 2 for the split-KV pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MlaKnobs {
    pub th: i64,
    pub bn: i64,
    pub occupancy: Option<i32>,
    /// The values loaded again from kv per tile (tilegym's separate V load) rather than the key
    /// tile transposed.
    pub reload_v: bool,
    /// Key tiles per split as a compile-time constant (as [`DecodeKnobs::fixed`]).
    pub fixed: bool,
    /// The multiple of the SM count the split-KV pass's split count aims at (tilegym: 1; as
    /// [`DecodeKnobs::waves`]): more, shorter splits, so that more blocks share an SM and one's
    /// loads overlap another's products. mla_decoding has one split and takes 1.
    pub waves: i64,
    /// The split-KV plan's reduce (mla_decoding has none).
    pub reduce: ReduceKnobs,
}

impl MlaKnobs {
    pub fn name(&self) -> String {
        let occ = self.occupancy.map_or("nohint".to_string(), |o| format!("occ{o}"));
        let rv = if self.reload_v { "_rv" } else { "" };
        let waves = if self.waves == 1 { String::new() } else { format!("_x{}", self.waves) };
        format!("h{}_n{}_{occ}{rv}{waves}{}{}", self.th, self.bn, if self.fixed { "_fixed" } else { "" }, self.reduce.suffix())
    }
}

pub const MLA_DEFAULT: MlaKnobs = MlaKnobs { th: 16, bn: 64, occupancy: None, reload_v: true, fixed: false, waves: 1, reduce: REDUCE_DEFAULT };
/// The split-KV pass keeps the key tile as the values: with two [128, 512] tiles per step,
/// tileiras compiles the occupancy-2 pass to 128 threads (1 CTA/SM by shared memory).
pub const MLA_SPLIT_DEFAULT: MlaKnobs =
    MlaKnobs { th: 16, bn: 128, occupancy: Some(2), reload_v: false, fixed: false, waves: 1, reduce: REDUCE_DEFAULT };

/// tilegym's split rule of mla_decoding_split_kv: aim at `max(1, SMs / B)` splits of
/// `max(BN, pow2(S / aim))` keys (integer division), `ceil(S / len)` of them.
pub fn mla_splits_for(b: i64, s: i64, bn: i64, sms: i64) -> Splits {
    let aim = (sms / b).max(1);
    let len = pow2_ceil(s / aim).max(bn);
    Splits { splits: ceil_div(s, len), len }
}

/// The MLA pass over `n` splits of `len` keys, writing to its parameters `o` and `lse`
/// (layouts `[B, H, n, D]` and `[B, H, n]` named after the kernel's parameters, and what they
/// bind: a view of the operator's tensor or of a scratch buffer).
///
/// `groups` > 1 (mla_decoding only: `o` and `lse` then views of the operator's tensors, their
/// layouts of one group): one launch per group of `B / groups` batches, every tensor a view
/// that starts at the group's first batch (`ptr` with `offset`).
fn mla_pass(x: &MlaShape, k: MlaKnobs, sp: Splits, o: (TensorLayout, KernelArg), lse: (TensorLayout, KernelArg), groups: i64) -> Result<Plan> {
    ensure!(k.bn >= 16 && k.bn & (k.bn - 1) == 0, "key tile {} must be a power of two >= 16", k.bn);
    ensure!(k.th >= 16 && k.th & (k.th - 1) == 0, "head tile {} must be a power of two >= 16", k.th);
    let (h, s, d, dpe) = (x.h, x.s, x.d, x.dpe);
    let b = x.b / groups;
    let q = TensorLayout::contiguous("q", &[b, h, d], x.bytes);
    let qpe = TensorLayout::contiguous("qpe", &[b, h, dpe], x.bytes);
    let kv = TensorLayout::contiguous("kv", &[b, s, d], x.bytes);
    let kpe = TensorLayout::contiguous("kpe", &[b, s, dpe], x.bytes);
    let qk_scale = x.scale * std::f64::consts::LOG2_E;
    let args = vec![
        tensor_arg(&q, None),
        tensor_arg(&qpe, None),
        tensor_arg(&kv, None),
        tensor_arg(&kpe, None),
        o.1,
        lse.1,
        KernelArg::Scalar { name: "qk_scale".into(), ty: ScalarType::F32, value: LitValue::Float(qk_scale) },
        lit_i32("len", sp.len),
    ];
    // Group gi's views start gi * b batches into each tensor.
    let at = |t: &TensorLayout, gi: i64| KernelArg::View {
        name: t.name.clone(),
        offset: gi * b * t.strides[0],
        shape: t.shape.clone(),
        strides: t.strides.clone(),
        partition: None,
    };
    let grid = grid_of(&[h, b, sp.splits], &[k.th, 1, 1])?;
    let group_args = |gi: i64| -> Vec<KernelArg> {
        let mut a: Vec<KernelArg> = [&q, &qpe, &kv, &kpe, &o.0, &lse.0].iter().map(|t| at(t, gi)).collect();
        a.extend(args[6..].iter().cloned());
        a
    };
    let (args, extra_launches) = if groups > 1 {
        (group_args(0), (1..groups).map(|gi| crate::plan::LaunchArgs { grid, args: group_args(gi) }).collect())
    } else {
        (args, Vec::new())
    };
    let tensors = vec![q, qpe, kv, kpe, o.0, lse.0];
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("mla_split"));
    if groups > 1 {
        tuning.insert("batch_groups".into(), json!(format!("{groups} launches of {b} batches (one launch's kv must fit i32 indices)")));
    }
    tuning.insert("head_tile".into(), json!(k.th));
    tuning.insert("key_tile".into(), json!(k.bn));
    tuning.insert("load_latency".into(), json!(2));
    tuning.insert("values".into(), json!(if k.reload_v { "kv loaded again per tile" } else { "the key tile, transposed" }));
    tuning.insert("occupancy".into(), k.occupancy.map_or(json!("none"), |o| json!(o)));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    let occ = k.occupancy.map_or(String::new(), |o| format!("_occ{o}"));
    let (tiles, fixed) = fixed_tiles(k.fixed, sp.len, k.bn, &mut tuning);
    Ok(Plan {
        kernel: "mla_split",
        elem: x.elem,
        generics: vec![
            x.elem.to_string(),
            k.th.to_string(),
            d.to_string(),
            dpe.to_string(),
            k.bn.to_string(),
            i32::from(k.reload_v).to_string(),
            tiles.to_string(),
        ],
        args,
        tensors,
        grid,
        tuning,
        stem: format!("mla_split_{}_h{}_d{d}_p{dpe}_n{}{occ}{}{fixed}", x.elem, k.th, k.bn, if k.reload_v { "_rv" } else { "" }),
        variant: k.name(),
        occupancy: k.occupancy,
        worker_warps: None,
        extra_launches,
    })
}

/// The reduce stage: `crate::gemm`'s splitk_reduce over the scratch partials `[B, H, n, D]` and
/// LSEs `[B, H, n]`, storing `o` (the operator's tensor or a view of it, `[B, H, D]`).
#[allow(clippy::too_many_arguments)]
fn reduce_stage(
    elem: &'static str,
    bytes: i32,
    b: i64,
    h: i64,
    n: i64,
    d: i64,
    o: KernelArg,
    o_layout: TensorLayout,
    variant: &str,
    r: ReduceKnobs,
) -> Result<Plan> {
    let (s2, td) = (pow2_ceil(n), pow2_ceil(d).clamp(16, r.max_td.max(16)));
    let occ = r.occupancy;
    ensure!(s2 * td <= 65536, "{s2} splits x {td} columns per block is too large a reduce tile");
    let dot = splitk_dot_generic(r.dot, s2)?;
    let po = TensorLayout::contiguous("partial_o", &[b, h, n, d], bytes);
    let ls = TensorLayout::contiguous("lse", &[b, h, n], 4);
    // Every split holds keys.
    let args = vec![scratch_arg(&po), scratch_arg(&ls), o, lit_i32("valid", n)];
    let tensors = vec![po, ls, o_layout];
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("splitk_reduce"));
    tuning.insert("tile_d".into(), json!(td));
    tuning.insert("splits_tile".into(), json!(s2));
    tuning.insert("valid_splits".into(), json!(n));
    tuning.insert("occupancy".into(), json!(occ));
    tuning.insert("weighted_sum".into(), json!(weighted_sum_name(r.dot)));
    tuning.insert("partials".into(), json!(if r.tma { "TMA" } else { "per-thread loads and stores" }));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "splitk_reduce",
        elem,
        generics: vec![elem.to_string(), s2.to_string(), td.to_string(), dot.to_string(), i32::from(r.tma).to_string()],
        args,
        tensors,
        grid: grid_of(&[b, h, d], &[1, 1, td])?,
        tuning,
        stem: format!("splitk_reduce_{elem}_s{s2}_d{td}_o{occ}{}{}", if r.dot { "_dot" } else { "" }, if r.tma { "" } else { "_pl" }),
        variant: variant.to_string(),
        occupancy: Some(occ),
        worker_warps: None,
        extra_launches: Vec::new(),
    })
}

/// mla_decoding as tilegym plans it: one pass over all keys (one split), writing o and the
/// base-2 lse directly.
fn plan_mla_decoding(params: &Value, k: MlaKnobs) -> Result<StagedPlan> {
    let x = mla_shape(params, false)?;
    if let Some(t) = params.get("transpose") {
        ensure!(t.as_bool() != Some(false), "transpose = false: tilegym's MLA decode (and this port) take transpose = true only");
    }
    let (h, d) = (x.h, x.d);
    let groups = mla_batch_groups(x.b, x.s, d, h);
    let b = x.b / groups;
    ensure!(k.waves == 1, "mla_decoding is one split: waves {} asked", k.waves);
    let sp = Splits { splits: 1, len: ceil_div(x.s, k.bn) * k.bn };
    let o = TensorLayout::strided("o", &[b, h, 1, d], &[h * d, d, d, 1], x.bytes);
    let lse = TensorLayout::strided("lse", &[b, h, 1], &[h, 1, 1], 4);
    let (o_arg, lse_arg) = (view_arg(&o), view_arg(&lse));
    let pass = mla_pass(&x, k, sp, (o, o_arg), (lse, lse_arg), groups)?;
    let mut tuning = Map::new();
    tuning.insert("kernels".into(), json!(["mla_split"]));
    tuning.insert("batch_groups".into(), json!(groups));
    tuning.insert("num_kv_splits".into(), json!(1));
    tuning.insert("split_rule".into(), json!("one pass over all keys per (head block, batch), as tilegym's mla_decoding"));
    tuning.insert("qk_scale".into(), json!(x.scale * std::f64::consts::LOG2_E));
    Ok(StagedPlan { variant: k.name(), tuning, scratch: Vec::new(), stages: vec![pass] })
}

/// mla_decoding_split_kv: the pass over tilegym's splits into scratch, then the reduce.
fn plan_mla_split_kv(params: &Value, k: MlaKnobs, t: &Target) -> Result<StagedPlan> {
    let x = mla_shape(params, true)?;
    let (b, h, d) = (x.b, x.h, x.d);
    let sp = mla_splits_for(b, x.s, k.bn, k.waves * t.sm_count);
    let n = sp.splits;
    // The pass's parameter `o` sees the scratch buffer `partial_o`.
    let po = TensorLayout::contiguous("o", &[b, h, n, d], x.bytes);
    let po_arg = KernelArg::Scratch { name: "partial_o".into(), shape: po.shape.clone(), strides: po.strides.clone(), partition: None };
    let ls = TensorLayout::contiguous("lse", &[b, h, n], 4);
    let ls_arg = scratch_arg(&ls);
    let pass = mla_pass(&x, k, sp, (po, po_arg), (ls, ls_arg), 1)?;
    let o = TensorLayout::contiguous("o", &[b, h, d], x.bytes);
    let reduce = reduce_stage(x.elem, x.bytes, b, h, n, d, tensor_arg(&o, None), o, &k.name(), k.reduce)?;
    let mut tuning = Map::new();
    tuning.insert("kernels".into(), json!(["mla_split", "splitk_reduce"]));
    tuning.insert("num_kv_splits".into(), json!(n));
    tuning.insert("kv_len_per_split".into(), json!(sp.len));
    tuning.insert(
        "split_rule".into(),
        json!(format!("splits = ceil(S / len), len = max({}, pow2(S / max(1, {} x {} SMs / B)))", k.bn, k.waves, t.sm_count)),
    );
    tuning.insert("key_tile".into(), json!(k.bn));
    tuning.insert("qk_scale".into(), json!(x.scale * std::f64::consts::LOG2_E));
    tuning.insert("partials".into(), json!(format!("{} [B, H, splits, D], LSE f32 base 2 [B, H, splits]", x.elem)));
    Ok(StagedPlan {
        variant: k.name(),
        tuning,
        scratch: vec![
            Scratch { name: "partial_o".into(), bytes: b * h * n * d * x.bytes as i64 },
            Scratch { name: "lse".into(), bytes: b * h * n * 4 },
        ],
        stages: vec![pass, reduce],
    })
}

/// attention_sink_decode (reference/src/ops/attention_sink.cpp, one query token): q [B, 1,
/// Hkv, G, D], k and v [B, S, Hkv, D], sinks [Hkv G], o [B, 1, Hkv G D]. The query sits at
/// `start_q` (default S - 1) and attends keys `[j0, j1)`, `j1 = min(start_q + 1, S)`, `j0 =
/// max(0, start_q - window + 1)` with a sliding window, else 0; the sink logit joins the
/// softmax denominator. Split-KV pass (`decode_split_sink`: k and v seen as `[B, Hkv, j1, D]`,
/// the sink folded into split 0) then splitk_reduce, the plan tilegym's upstream wrapper makes.
fn plan_attention_sink_decode(params: &Value, k: DecodeKnobs, t: &Target) -> Result<StagedPlan> {
    ensure!(k.bn >= 16 && k.bn & (k.bn - 1) == 0, "key tile {} must be a power of two >= 16", k.bn);
    let b = param_i64(params, "batch")?;
    ensure!(param_int_or(params, "num_queries", 1)? == 1, "num_queries must be 1");
    let (s, hkv, group, d) = (param_i64(params, "num_keys")?, param_i64(params, "num_kv_heads")?, param_i64(params, "num_kv_groups")?, param_i64(params, "head_dim")?);
    let start_q = param_int_or(params, "start_q", s - 1)?;
    ensure!(start_q >= 0, "start_q must be >= 0");
    let window = param_int_or(params, "sliding_window", 0)?;
    let j1 = (start_q + 1).min(s);
    let j0 = if window > 0 { (start_q - window + 1).max(0) } else { 0 };
    let hq = hkv * group;
    let scale = param_f64_or(params, "sm_scale", 1.0 / (d as f64).sqrt())?;
    let (elem, bytes) = decode_elem(param_str(params, "dtype")?)?;
    let x = DecodeShape { b, hq, hkv, s, d, scale, lo: j0, cap: 0.0, lat: 0, elem, bytes };
    check_decode(&x)?;
    let g = pow2_ceil(group).max(8);
    let dt = pow2_ceil(d).max(16);
    let base = j0 / k.bn * k.bn;
    let sp = gqa_splits(k.whole_tiles, b, hkv, j1 - base, &k, t);
    let n = sp.splits;
    debug_assert!(base + (n - 1) * sp.len < j1);

    let q = TensorLayout::strided("q", &[b, hkv, group, d], &[hq * d, group * d, d, 1], bytes);
    // k[b, j, h, :] at b S Hkv D + j Hkv D + h D: seen as [B, Hkv, j1, D].
    let kt = TensorLayout::strided("k", &[b, hkv, j1, d], &[s * hkv * d, d, hkv * d, 1], bytes);
    let vt = TensorLayout::strided("v", &[b, hkv, j1, d], &[s * hkv * d, d, hkv * d, 1], bytes);
    let po = TensorLayout::strided("partial_o", &[b, hkv, group, n, d], &[hq * n * d, group * n * d, n * d, d, 1], bytes);
    let ls = TensorLayout::strided("lse", &[b, hkv, group, n], &[hq * n, group * n, n, 1], 4);
    let sinks = TensorLayout::strided("sinks", &[hkv, group], &[group, 1], bytes);
    let qk_scale = scale * std::f64::consts::LOG2_E;
    let args = vec![
        view_arg(&q),
        view_arg(&kt),
        view_arg(&vt),
        scratch_arg(&po),
        scratch_arg(&ls),
        view_arg(&sinks),
        KernelArg::Scalar { name: "qk_scale".into(), ty: ScalarType::F32, value: LitValue::Float(qk_scale) },
        lit_i32("lo", j0),
        lit_i32("len", sp.len),
    ];
    let tensors = vec![q, kt, vt, po, ls, sinks];
    let mut pass_tuning = Map::new();
    pass_tuning.insert("kernel".into(), json!("decode_split_sink"));
    pass_tuning.insert("query_group_tile".into(), json!(g));
    pass_tuning.insert("head_dim_tile".into(), json!(dt));
    pass_tuning.insert("key_tile".into(), json!(k.bn));
    pass_tuning.insert("occupancy".into(), k.occupancy.map_or(json!("none"), |o| json!(o)));
    pass_tuning.insert("partial_stores".into(), json!(if k.plain_stores { "plain, latency 1" } else { "TMA" }));
    let (tiles, fixed) = fixed_tiles(k.fixed, sp.len, k.bn, &mut pass_tuning);
    pass_tuning.insert("specialization".into(), specialization_json(&tensors));
    let occ = k.occupancy.map_or(String::new(), |o| format!("_occ{o}"));
    let pass = Plan {
        kernel: "decode_split_sink",
        elem,
        generics: vec![elem.to_string(), g.to_string(), dt.to_string(), k.bn.to_string(), tiles.to_string(), i32::from(k.plain_stores).to_string()],
        args,
        tensors,
        grid: grid_of(&[b, hkv, n], &[1, 1, 1])?,
        tuning: pass_tuning,
        stem: format!("decode_split_sink_{elem}_g{g}_d{dt}_n{}{occ}{fixed}{}", k.bn, if k.plain_stores { "_ps" } else { "" }),
        variant: k.name(),
        occupancy: k.occupancy,
        worker_warps: None,
        extra_launches: Vec::new(),
    };
    // o [B, 1, H D] seen as [B, H, D].
    let o = TensorLayout::strided("o", &[b, hq, d], &[hq * d, d, 1], bytes);
    let reduce = reduce_stage(elem, bytes, b, hq, n, d, view_arg(&o), o, &k.name(), k.reduce)?;
    let mut tuning = Map::new();
    tuning.insert("kernels".into(), json!(["decode_split_sink", "splitk_reduce"]));
    tuning.insert("num_kv_splits".into(), json!(n));
    tuning.insert("kv_len_per_split".into(), json!(sp.len));
    tuning.insert("split_rule".into(), json!(split_rule(k.whole_tiles, &k, t, &format!("{j1} - {base}"))));
    tuning.insert("key_tile".into(), json!(k.bn));
    tuning.insert("first_key".into(), json!(j0));
    tuning.insert("last_key".into(), json!(j1 - 1));
    tuning.insert("sink".into(), json!("folded into split 0: its partial is normalised by l + 2^(sink log2 e - m), its LSE includes it"));
    tuning.insert("qk_scale".into(), json!(qk_scale));
    tuning.insert("partials".into(), json!(format!("{elem} [B, H, splits, D], LSE f32 base 2 [B, H, splits]")));
    Ok(StagedPlan {
        variant: k.name(),
        tuning,
        scratch: vec![
            Scratch { name: "partial_o".into(), bytes: b * hq * n * d * bytes as i64 },
            Scratch { name: "lse".into(), bytes: b * hq * n * 4 },
        ],
        stages: vec![pass, reduce],
    })
}

/// The default plan and its alternatives (names are the knobs; an alternative the
/// configuration cannot take or that equals an earlier plan's splits and tiles is dropped);
/// `Ok(None)` for operators not in [`OPERATORS`]. An error is the reason the configuration
/// cannot be expressed.
pub fn candidates(op: &str, params: &Value, o: Overrides, t: &Target) -> Result<Option<Vec<StagedPlan>>> {
    if !OPERATORS.contains(&op) {
        return Ok(None);
    }
    ensure!(o == Overrides::default(), "{op} takes no suite tuning overrides: its choices are the manifest's variants");
    let (first, alternatives): (StagedPlan, Vec<Result<StagedPlan>>) = match op {
        "flash_decode" => (plan_flash_decode(params, DEFAULT, t)?, ALTERNATIVES.iter().map(|&k| plan_flash_decode(params, k, t)).collect()),
        "attention_sink_decode" => (
            plan_attention_sink_decode(params, DEFAULT, t)?,
            // flash_decode's run-time-count plans (its fixed ones are 128-key tiles of 128-wide
            // heads), then the sink's own.
            ALTERNATIVES.iter().filter(|k| !k.fixed).chain(SINK_ALTERNATIVES).map(|&k| plan_attention_sink_decode(params, k, t)).collect(),
        ),
        "gemma_attention_decode" => {
            let x = gemma_shape(params)?;
            let alts = ALTERNATIVES.iter().map(|&k| plan_gqa_decode(gemma_shape(params)?, k, t)).collect();
            (plan_gqa_decode(x, DEFAULT, t)?, alts)
        }
        "mla_decoding" => {
            let alts = [
                MlaKnobs { bn: 128, ..MLA_DEFAULT },
                MlaKnobs { occupancy: Some(2), ..MLA_DEFAULT },
                MlaKnobs { bn: 32, ..MLA_DEFAULT },
                MlaKnobs { reload_v: false, ..MLA_DEFAULT },
                // One [BN, D + DPE] tile a step leaves room for a second block per SM: one's
                // loads overlap the other's products (the one-block plans wait on each tile).
                MlaKnobs { occupancy: Some(2), reload_v: false, ..MLA_DEFAULT },
                MlaKnobs { bn: 32, occupancy: Some(2), ..MLA_DEFAULT },
                MlaKnobs { bn: 32, occupancy: Some(3), reload_v: false, ..MLA_DEFAULT },
                // 32 heads a block: each key tile read once for both head halves.
                MlaKnobs { th: 32, ..MLA_DEFAULT },
                MlaKnobs { th: 32, bn: 32, ..MLA_DEFAULT },
            ];
            // A head tile wider than the heads would only load padding: no such alternative.
            let h = param_i64(params, "num_heads")?;
            (plan_mla_decoding(params, MLA_DEFAULT)?, alts.iter().filter(|k| k.th <= h).map(|&k| plan_mla_decoding(params, k)).collect())
        }
        _ => {
            let alts = [
                MlaKnobs { occupancy: None, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { bn: 64, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { reload_v: true, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { fixed: true, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { bn: 64, fixed: true, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { reload_v: true, fixed: true, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { fixed: true, reduce: REDUCE_NARROW, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { bn: 64, fixed: true, reduce: REDUCE_NARROW, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { reduce: REDUCE_DOT, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { fixed: true, reduce: REDUCE_DOT, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { fixed: true, reduce: REDUCE_NARROW_DOT, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { bn: 64, fixed: true, reduce: REDUCE_NARROW_DOT, ..MLA_SPLIT_DEFAULT },
                // More, shorter splits in smaller tiles: several blocks an SM (batch 1 has one
                // block per split), one's loads overlapping another's products.
                MlaKnobs { waves: 2, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { waves: 2, bn: 64, fixed: true, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { waves: 2, bn: 64, fixed: true, reduce: REDUCE_NARROW, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { waves: 4, bn: 64, fixed: true, reduce: REDUCE_NARROW, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { waves: 4, bn: 32, occupancy: Some(4), fixed: true, reduce: REDUCE_NARROW, ..MLA_SPLIT_DEFAULT },
                // One wave of 64-key tiles, no occupancy hint: a [128, 576] tile (the default's)
                // leaves no room for a second one in flight, and the CTA waits on each (Nsight
                // Compute, nineteenth session: 32% of DRAM throughput, half the warp stalls in
                // the TMA barrier's wait loop). Measured beside 32-key tiles, with and without
                // the hint or the values loaded again: only this one was faster.
                MlaKnobs { bn: 64, occupancy: None, fixed: true, reduce: REDUCE_DOT, ..MLA_SPLIT_DEFAULT },
                // The chosen plans' reduces without TMA: the reduce is 3.9 us of S 31079's 21 us
                // on the H200 (twentieth session), about 3 us more than a kernel that does nothing.
                // The tensor-core reduce without TMA was 0.80-0.98 of the same plan with it (H100,
                // twenty-sixth session) and is not kept.
                MlaKnobs { bn: 64, occupancy: None, fixed: true, reduce: REDUCE_NARROW_PL, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { fixed: true, reduce: REDUCE_NARROW_PL, ..MLA_SPLIT_DEFAULT },
                MlaKnobs { bn: 64, fixed: true, reduce: REDUCE_NARROW_PL, ..MLA_SPLIT_DEFAULT },
            ];
            (plan_mla_split_kv(params, MLA_SPLIT_DEFAULT, t)?, alts.iter().map(|&k| plan_mla_split_kv(params, k, t)).collect())
        }
    };
    let mut plans = vec![first];
    // An alternative the configuration cannot take is no candidate.
    for p in alternatives.into_iter().flatten() {
        if plans.iter().all(|q| q.variant != p.variant) {
            plans.push(p);
        }
    }
    Ok(Some(plans))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{entry_params, Param};

    fn fd(b: i64, hq: i64, hkv: i64, s: i64, d: i64, dtype: &str) -> Value {
        json!({"batch": b, "num_q_heads": hq, "num_kv_heads": hkv, "seq_len": s, "head_dim": d, "group_size": hq / hkv, "dtype": dtype})
    }

    fn default_plan(c: &Value) -> StagedPlan {
        candidates("flash_decode", c, Overrides::default(), &Target::h200()).unwrap().unwrap().remove(0)
    }

    /// The candidate plan of `op` on `c` named `variant` (panics when there is none).
    fn variant_plan(op: &str, c: &Value, variant: &str) -> StagedPlan {
        let plans = candidates(op, c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        plans.into_iter().find(|p| p.variant == variant).unwrap_or_else(|| panic!("{op}: no variant {variant}"))
    }

    #[test]
    fn split_rule_is_tilegyms() {
        // The splits tilegym's wrapper launches for configs/tilegym.json on 132 SMs (its
        // bundle: grids (1, Hkv, splits)).
        for (hkv, s, splits) in [(32, 512, 4), (8, 1024, 8), (8, 2048, 16), (4, 4096, 32), (4, 31079, 31), (32, 31079, 4), (8, 31079, 16)] {
            assert_eq!(splits_for(1, hkv, s, 128, 1, 132).splits, splits, "hkv {hkv} s {s}");
        }
        assert_eq!(splits_for(1, 4, 31079, 128, 1, 132), Splits { splits: 31, len: 1024 });
        assert_eq!(splits_for(1, 32, 31079, 128, 1, 132).len, 8192);
        // Short sequences: one key tile per split at least.
        assert_eq!(splits_for(4, 8, 100, 128, 1, 132), Splits { splits: 1, len: 128 });
        // Another target: fewer SMs, fewer splits.
        assert_eq!(splits_for(1, 8, 8192, 128, 1, 16).splits, 2);
    }

    #[test]
    fn flash_decode_is_a_pass_then_the_reduce() {
        let c = fd(1, 32, 8, 1000, 128, "float16");
        let p = default_plan(&c);
        assert_eq!(p.variant, "n128_x1_nohint");
        assert_eq!(p.stages.iter().map(|s| s.kernel).collect::<Vec<_>>(), ["decode_split", "splitk_reduce"]);
        // 132 / 8 = 16 splits aimed, len pow2(63) -> 128, so ceil(1000 / 128) = 8 splits.
        assert_eq!((p.tuning["num_kv_splits"].clone(), p.tuning["kv_len_per_split"].clone()), (json!(8), json!(128)));
        assert_eq!(p.scratch, [Scratch { name: "partial_o".into(), bytes: 32 * 8 * 128 * 2 }, Scratch { name: "lse".into(), bytes: 32 * 8 * 4 }]);
        let (pass, reduce) = (&p.stages[0], &p.stages[1]);
        assert_eq!((pass.grid, reduce.grid), ([1, 8, 8], [1, 32, 1]));
        assert_eq!(pass.generics, ["f16", "8", "128", "128", "0", "0", "0", "0"]);
        assert_eq!(reduce.generics, ["f16", "8", "128", "0", "1"]);
        assert_eq!((pass.occupancy, reduce.occupancy), (None, Some(4)));
        let e = entry_params(&pass.args);
        // q, k, v: ptr + 4 + 4; the scratch views: ptr + 5 + 5, ptr + 4 + 4; qk_scale, cap, lo, len.
        assert_eq!(e.len(), 9 * 3 + 11 + 9 + 4);
        assert_eq!(e[0].param, Param::Ptr { tensor: "q".into() });
        let lit = |v| Param::Literal { ty: ScalarType::I32, value: LitValue::Int(v) };
        // q [1, 32, 1, 128] seen as [1, 8, 4, 128].
        assert_eq!(e[1..9].iter().map(|x| x.param.clone()).collect::<Vec<_>>(), [1, 8, 4, 128, 4096, 512, 128, 1].map(lit));
        assert_eq!(e[9].param, Param::Ptr { tensor: "k".into() });
        assert_eq!(e[27].param, Param::Scratch { name: "partial_o".into() });
        assert_eq!(e[28..33].iter().map(|x| x.param.clone()).collect::<Vec<_>>(), [1, 8, 4, 8, 128].map(lit));
        assert_eq!(e[38].param, Param::Scratch { name: "lse".into() });
        let scale = match e[47].param {
            Param::Literal { ty: ScalarType::F32, value: LitValue::Float(v) } => v,
            ref other => panic!("{other:?}"),
        };
        assert!((scale - std::f64::consts::LOG2_E / 128f64.sqrt()).abs() < 1e-15);
        assert_eq!(e[48].param, Param::Literal { ty: ScalarType::F32, value: LitValue::Float(0.0) });
        assert_eq!((e[49].param.clone(), e[50].param.clone()), (lit(0), lit(128)));
        let r = entry_params(&reduce.args);
        assert_eq!(r[0].param, Param::Scratch { name: "partial_o".into() });
        assert_eq!(r[9].param, Param::Scratch { name: "lse".into() });
        assert_eq!(r[16].param, Param::Ptr { tensor: "o".into() });
        assert_eq!(r[17..23].iter().map(|x| x.param.clone()).collect::<Vec<_>>(), [1, 32, 128, 4096, 128, 1].map(lit));
        assert_eq!(r[23].param, lit(8));
    }

    #[test]
    fn odd_head_dims_and_groups_pad_their_tiles() {
        // group 6 -> 8 query rows; head_dim 80 -> a 128-column tile, reduce TD 128.
        let p = default_plan(&fd(2, 12, 2, 300, 80, "bfloat16"));
        assert_eq!(p.stages[0].generics, ["bf16", "8", "128", "128", "0", "0", "0", "0"]);
        let p = default_plan(&fd(1, 64, 4, 4096, 64, "float16"));
        assert_eq!(p.stages[0].generics[1], "16");
        assert_eq!(p.stages[1].generics[2], "64");
    }

    #[test]
    fn variants_and_refusals() {
        let names: Vec<String> = candidates("flash_decode", &fd(1, 32, 32, 31079, 128, "float16"), Overrides::default(), &Target::h200())
            .unwrap()
            .unwrap()
            .iter()
            .map(|p| p.variant.clone())
            .collect();
        assert_eq!(
            names,
            [
                "n128_x1_nohint",
                "n128_x2_nohint",
                "n128_x4_occ2",
                "n64_x1_nohint",
                "n128_x1_nohint_fixed",
                "n128_x4_occ2_fixed",
                "n128_x1_nohint_fixed_r64o2",
                "n128_x4_occ2_fixed_r64o2",
                // 4 splits take no tensor-core reduce; 4 waves make 16 splits, which do.
                "n128_x4_occ2_fixed_r64o2_dot",
                "n128_x4_occ2_ps",
                "n128_x1_nohint_fixed_ps_r64o2",
                "n128_x4_occ2_fixed_ps_r64o2",
                "n128_x4_occ2_fixed_ps_r64o2_dot",
                // The narrow reduce without TMA; its tensor-core form needs 16 splits.
                "n128_x1_nohint_fixed_r64o2_pl"
            ]
        );
        // Fixed: the split's key tiles are the pass's TILES generic (31079 keys, 132 / 32 = 4
        // splits aimed: len pow2(7770) = 8192, 64 tiles), the same splits as the run-time count.
        let c = fd(1, 32, 32, 31079, 128, "float16");
        let all = candidates("flash_decode", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        let fixed = all.iter().find(|p| p.variant == "n128_x1_nohint_fixed").unwrap();
        assert_eq!(fixed.stages[0].generics[6], "64");
        assert_eq!(fixed.stages[0].grid, all[0].stages[0].grid);
        // The narrow reduce: 64 columns a block, twice the blocks, occupancy 2.
        let narrow = all.iter().find(|p| p.variant == "n128_x1_nohint_fixed_r64o2").unwrap();
        assert_eq!((narrow.stages[1].grid, narrow.stages[1].occupancy), ([1, 32, 2], Some(2)));
        assert_eq!(narrow.stages[1].generics[2], "64");
        // The tensor-core reduce differs from the narrow one in its DOT generic and cubin only.
        let dot = all.iter().find(|p| p.variant == "n128_x4_occ2_fixed_r64o2_dot").unwrap();
        let plain = all.iter().find(|p| p.variant == "n128_x4_occ2_fixed_r64o2").unwrap();
        assert_eq!((dot.stages[1].generics.clone(), plain.stages[1].generics[3].as_str()), (vec!["f16".to_string(), "16".into(), "64".into(), "1".into(), "1".into()], "0"));
        assert_eq!((dot.stages[1].grid, dot.stages[1].args.len()), (plain.stages[1].grid, plain.stages[1].args.len()));
        assert_eq!(dot.stages[0].stem, plain.stages[0].stem);
        assert_ne!(dot.stages[1].stem, plain.stages[1].stem);
        assert!(dot.stages[1].tuning["weighted_sum"].as_str().unwrap().contains("tensor-core"));
        // Plain stores: the pass's last generic and its cubin, nothing else of the plan.
        let ps = all.iter().find(|p| p.variant == "n128_x1_nohint_fixed_ps_r64o2").unwrap();
        assert_eq!((ps.stages[0].generics[7].as_str(), narrow.stages[0].generics[7].as_str()), ("1", "0"));
        assert_eq!(ps.stages[0].generics[..7], narrow.stages[0].generics[..7]);
        assert_eq!((ps.stages[0].grid, ps.stages[0].args.len(), ps.stages[1].stem.as_str()), (narrow.stages[0].grid, narrow.stages[0].args.len(), narrow.stages[1].stem.as_str()));
        assert_eq!(ps.stages[0].stem, format!("{}_ps", narrow.stages[0].stem));
        assert_eq!(ps.stages[0].tuning["partial_stores"], json!("plain, latency 1"));
        assert_eq!(narrow.stages[0].tuning["partial_stores"], json!("TMA"));
        assert_eq!(all[0].stages[0].generics[6], "0");
        let err = |c: Value| candidates("flash_decode", &c, Overrides::default(), &Target::h200()).unwrap_err().to_string();
        assert_eq!(err(fd(1, 8, 8, 64, 64, "float32")), "unsupported dtype \"float32\": the decode pass's tensor-core products take float16 or bfloat16 operands");
        assert!(err(fd(1, 8, 8, 64, 512, "float16")).starts_with("head_dim 512: the head-dimension tile 512 exceeds 256"));
        assert!(err(fd(64, 8, 8, 65536, 128, "float16")).contains("more than 2^31-1"));
        let mut c = fd(1, 8, 2, 64, 64, "float16");
        c["group_size"] = json!(3);
        assert_eq!(err(c), "num_q_heads must be group_size * num_kv_heads");
        assert!(candidates("fmha", &json!({}), Overrides::default(), &Target::h200()).unwrap().is_none());
    }

    fn mla(b: i64, h: i64, s: i64) -> Value {
        json!({"num_heads": h, "transpose": true, "dtype": "float16", "BLOCK_D": 512, "BLOCK_KPE": 64, "batch": b, "S_kv": s})
    }

    fn mla_split(s: i64) -> Value {
        json!({"batch": 1, "num_heads": 16, "head_dim": 512, "kpe_dim": 64, "seq_len": s, "dtype": "float16"})
    }

    #[test]
    fn mla_decoding_is_one_pass_writing_o_and_lse() {
        let p = candidates("mla_decoding", &mla(128, 32, 1000), Overrides::default(), &Target::h200()).unwrap().unwrap().remove(0);
        assert_eq!((p.variant.as_str(), p.stages.len(), p.scratch.len()), ("h16_n64_nohint_rv", 1, 0));
        let pass = &p.stages[0];
        // tilegym's grid: (ceil(H / 16), B, 1).
        assert_eq!((pass.kernel, pass.grid), ("mla_split", [2, 128, 1]));
        assert_eq!(pass.generics, ["f16", "16", "512", "64", "64", "1", "0"]);
        let e = entry_params(&pass.args);
        let lit = |v| Param::Literal { ty: ScalarType::I32, value: LitValue::Int(v) };
        // q, qpe, kv, kpe (ptr + 3 + 3 each), o as [B, H, 1, D], lse as [B, H, 1], qk_scale, len.
        assert_eq!(e.len(), 7 * 4 + 9 + 7 + 2);
        assert_eq!(e[28].param, Param::Ptr { tensor: "o".into() });
        assert_eq!(e[29..37].iter().map(|x| x.param.clone()).collect::<Vec<_>>(), [128, 32, 1, 512, 16384, 512, 512, 1].map(lit));
        assert_eq!(e[37].param, Param::Ptr { tensor: "lse".into() });
        assert_eq!(e[38..44].iter().map(|x| x.param.clone()).collect::<Vec<_>>(), [128, 32, 1, 32, 1, 1].map(lit));
        // One split holds every key: len = S rounded up to the key tile.
        assert_eq!(e[45].param, lit(1024));
        let scale = match e[44].param {
            Param::Literal { ty: ScalarType::F32, value: LitValue::Float(v) } => v,
            ref other => panic!("{other:?}"),
        };
        assert!((scale - std::f64::consts::LOG2_E / 576f64.sqrt()).abs() < 1e-15);
        assert_eq!(p.tuning["batch_groups"], json!(1));
        assert!(pass.extra_launches.is_empty());
        // kv of 1024 x 8192 x 512 = 2^32 elements exceeds cutile-rs's i32 indices: 4 launches of
        // 256 batches (2^30 elements each), every tensor a view from the group's first batch.
        let p = candidates("mla_decoding", &mla(1024, 16, 8192), Overrides::default(), &Target::h200()).unwrap().unwrap().remove(0);
        assert_eq!(p.tuning["batch_groups"], json!(4));
        let pass = &p.stages[0];
        assert_eq!((pass.grid, pass.extra_launches.len()), ([1, 256, 1], 3));
        let last = entry_params(&pass.extra_launches[2].args);
        assert_eq!(last[14].param, Param::PtrAt { tensor: "kv".into(), offset: 768 * 8192 * 512 });
        assert_eq!(last[15].param, lit(256));
        assert_eq!(last[28].param, Param::PtrAt { tensor: "o".into(), offset: 768 * 16 * 512 });
        assert_eq!(last[37].param, Param::PtrAt { tensor: "lse".into(), offset: 768 * 16 });
        // 32 heads in one block: grid (1, B, 1); 16 heads take no 32-head variant.
        let names = |c: &Value| -> Vec<String> {
            candidates("mla_decoding", c, Overrides::default(), &Target::h200()).unwrap().unwrap().into_iter().map(|p| p.variant).collect()
        };
        let wide = variant_plan("mla_decoding", &mla(128, 32, 1000), "h32_n64_nohint_rv");
        assert_eq!((wide.stages[0].grid, wide.stages[0].generics[1].as_str()), ([1, 128, 1], "32"));
        assert!(names(&mla(128, 16, 1000)).iter().all(|n| !n.starts_with("h32")));
        assert!(names(&mla(128, 16, 1000)).contains(&"h16_n32_occ3".to_string()));
        assert_eq!(mla_batch_groups(1000, 8192, 512, 16), 2);
        assert_eq!(mla_batch_groups(7, 1 << 20, 512, 16), 7);
        // One batch too large for i32 indices cannot be expressed.
        let err = candidates("mla_decoding", &mla(1, 16, 1 << 22), Overrides::default(), &Target::h200()).unwrap_err().to_string();
        assert_eq!(err, "tensor kv has 2147483648 elements in one batch, more than 2^31-1 (cutile-rs 0.5.0 shapes, strides and offsets are i32)");
        let mut c = mla(1, 16, 64);
        c["transpose"] = json!(false);
        assert!(candidates("mla_decoding", &c, Overrides::default(), &Target::h200()).unwrap_err().to_string().starts_with("transpose = false"));
    }

    #[test]
    fn mla_split_kv_follows_tilegyms_splits() {
        // tilegym's bundle: grids (1, 1, splits) for these KV lengths on 132 SMs.
        for (s, n) in [(512, 4), (1024, 8), (2048, 16), (4096, 32), (8192, 64), (11049, 87), (31079, 122)] {
            assert_eq!(mla_splits_for(1, s, 128, 132).splits, n, "S {s}");
        }
        let p = candidates("mla_decoding_split_kv", &mla_split(11049), Overrides::default(), &Target::h200()).unwrap().unwrap().remove(0);
        assert_eq!(p.variant, "h16_n128_occ2");
        assert_eq!(p.stages.iter().map(|s| (s.kernel, s.grid)).collect::<Vec<_>>(), [("mla_split", [1, 1, 87]), ("splitk_reduce", [1, 16, 4])]);
        assert_eq!(p.scratch, [Scratch { name: "partial_o".into(), bytes: 16 * 87 * 512 * 2 }, Scratch { name: "lse".into(), bytes: 16 * 87 * 4 }]);
        assert_eq!(p.stages[1].generics, ["f16", "128", "128", "0", "1"]);
        let fixed = variant_plan("mla_decoding_split_kv", &mla_split(11049), "h16_n64_occ2_fixed");
        // 128 keys a split in 64-key tiles: two, as a constant.
        assert_eq!((fixed.stages[0].grid, fixed.stages[0].generics.last().unwrap().as_str()), ([1, 1, 87], "2"));
        // Four waves at S 31079: 528 splits aimed, len max(64, pow2(58)) = 64, 486 splits of one
        // tile each, reduced from a 512-split tile 64 columns wide.
        let x4 = variant_plan("mla_decoding_split_kv", &mla_split(31079), "h16_n64_occ2_x4_fixed_r64o2");
        assert_eq!((x4.tuning["num_kv_splits"].clone(), x4.tuning["kv_len_per_split"].clone()), (json!(486), json!(64)));
        assert_eq!(x4.stages.iter().map(|s| (s.kernel, s.grid)).collect::<Vec<_>>(), [("mla_split", [1, 1, 486]), ("splitk_reduce", [1, 16, 8])]);
        assert_eq!((x4.stages[0].generics.last().unwrap().as_str(), x4.stages[1].generics[1].as_str()), ("1", "512"));
        // One wave of 64-key tiles without a hint: 122 splits of 256 keys, four tiles each, the
        // reduce as a product over a 128-split tile.
        let wide = variant_plan("mla_decoding_split_kv", &mla_split(31079), "h16_n64_nohint_fixed_dot");
        assert_eq!((wide.stages[0].grid, wide.stages[0].occupancy, wide.stages[0].generics.last().unwrap().as_str()), ([1, 1, 122], None, "4"));
        assert_eq!(wide.stages[1].generics, ["f16", "128", "128", "1", "1"]);
        // The same pass, its reduce 64 columns a block and without TMA: the reduce's TMA generic
        // 0, its own cubin, and its tuning says so; the pass is `wide`'s.
        let pl = variant_plan("mla_decoding_split_kv", &mla_split(31079), "h16_n64_nohint_fixed_r64o2_pl");
        assert_eq!((pl.stages[0].generics.clone(), pl.stages[0].stem.clone()), (wide.stages[0].generics.clone(), wide.stages[0].stem.clone()));
        assert_eq!((pl.stages[1].generics.clone(), pl.stages[1].grid), (vec!["f16".to_string(), "128".into(), "64".into(), "0".into(), "0".into()], [1, 16, 8]));
        assert_eq!((pl.stages[1].stem.as_str(), pl.stages[1].tuning["partials"].as_str()), ("splitk_reduce_f16_s128_d64_o2_pl", Some("per-thread loads and stores")));
        assert_eq!(wide.stages[1].tuning["partials"], json!("TMA"));
        let r = entry_params(&p.stages[1].args);
        assert_eq!(r[16].param, Param::Ptr { tensor: "o".into() });
        assert_eq!(r[17].param, Param::Extent { tensor: "o".into(), dim: 0, ty: ScalarType::I32 });
    }

    fn gemma(hq: i64, s: i64, window: i64) -> Value {
        json!({"batch": 1, "heads": hq, "kv_heads": 8, "seq_len_kv": s, "head_dim": 128, "window": window, "soft_cap": 50.0, "dtype": "bfloat16"})
    }

    #[test]
    fn gemma_decode_caps_and_splits_only_the_window() {
        let plan = |c: &Value| candidates("gemma_attention_decode", c, Overrides::default(), &Target::h200()).unwrap().unwrap().remove(0);
        // No window: tilegym's 16 splits of 256 keys at S = 4096.
        let p = plan(&gemma(16, 4096, 0));
        assert_eq!((p.tuning["num_kv_splits"].clone(), p.tuning["kv_len_per_split"].clone(), p.tuning["first_key"].clone()), (json!(16), json!(256), json!(0)));
        let pass = &p.stages[0];
        assert_eq!((pass.grid, pass.generics[4].as_str(), pass.generics[5].as_str()), ([1, 8, 16], "1", "3"));
        let e = entry_params(&pass.args);
        let f32_of = |i: usize| match e[i].param {
            Param::Literal { ty: ScalarType::F32, value: LitValue::Float(v) } => v,
            ref other => panic!("{other:?}"),
        };
        // The soft cap takes the natural-scale logits: qk_scale is sm_scale itself.
        assert_eq!((f32_of(47), f32_of(48)), (1.0 / 128f64.sqrt(), 50.0));
        // Window 4096 of 8192: keys from 4095, splits from the tile at 3968 over 4224 keys (33
        // tiles): 16 aimed, 3 tiles each, 11 splits (tilegym's pow2 rule: 9 of 512).
        let p = plan(&gemma(16, 8192, 4096));
        assert_eq!((p.tuning["first_key"].clone(), p.tuning["num_kv_splits"].clone(), p.tuning["kv_len_per_split"].clone()), (json!(4095), json!(11), json!(384)));
        let e = entry_params(&p.stages[0].args);
        assert_eq!(e[49].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(4095) });
        assert_eq!(p.stages[0].grid, [1, 8, 11]);
        assert_eq!(window_splits_for(1, 8, 4224, 128, 1, 132), Splits { splits: 11, len: 384 });
        // Every split holds keys: 33 tiles over 132 / 1 aimed, one tile each.
        assert_eq!(window_splits_for(1, 1, 4224, 128, 1, 132), Splits { splits: 33, len: 128 });
        assert_eq!(p.stages[1].grid, [1, 16, 1]);
        // A window wider than the sequence attends every key.
        assert_eq!(plan(&gemma(32, 1000, 5000)).tuning["first_key"], json!(0));
        let mut c = gemma(16, 64, 0);
        c["kv_heads"] = json!(3);
        assert!(candidates("gemma_attention_decode", &c, Overrides::default(), &Target::h200()).unwrap_err().to_string().contains("multiple of kv_heads"));
    }

    #[test]
    fn attention_sink_decode_views_and_window() {
        let c = json!({"batch": 1, "num_queries": 1, "num_keys": 10919, "num_kv_heads": 8, "num_kv_groups": 8, "head_dim": 64, "sliding_window": null, "dtype": "bfloat16"});
        let plan = |c: &Value| candidates("attention_sink_decode", c, Overrides::default(), &Target::h200()).unwrap().unwrap().remove(0);
        let p = plan(&c);
        // 132 / 8 = 16 splits aimed: len pow2(683) = 1024, 11 splits over all 10919 keys.
        assert_eq!((p.tuning["num_kv_splits"].clone(), p.tuning["kv_len_per_split"].clone(), p.tuning["first_key"].clone()), (json!(11), json!(1024), json!(0)));
        let pass = &p.stages[0];
        assert_eq!((pass.kernel, pass.grid, pass.generics.clone()), ("decode_split_sink", [1, 8, 11], vec!["bf16".to_string(), "8".into(), "64".into(), "128".into(), "0".into(), "0".into()]));
        let e = entry_params(&pass.args);
        let lit = |v| Param::Literal { ty: ScalarType::I32, value: LitValue::Int(v) };
        // k [1, 10919, 8, 64] seen as [1, 8, 10919, 64].
        assert_eq!(e[9].param, Param::Ptr { tensor: "k".into() });
        assert_eq!(e[10..18].iter().map(|x| x.param.clone()).collect::<Vec<_>>(), [1, 8, 10919, 64, 10919 * 512, 64, 512, 1].map(lit));
        // sinks [64] as [8, 8].
        assert_eq!(e[47].param, Param::Ptr { tensor: "sinks".into() });
        assert_eq!(e[48..52].iter().map(|x| x.param.clone()).collect::<Vec<_>>(), [8, 8, 8, 1].map(lit));
        // The reduce stores o [1, 1, 512] as [1, 64, 64].
        let r = entry_params(&p.stages[1].args);
        assert_eq!(r[17..23].iter().map(|x| x.param.clone()).collect::<Vec<_>>(), [1, 64, 64, 4096, 64, 1].map(lit));
        // A window of 128 keys: [10791, 10919), one split from the tile at 10752.
        let mut w = c.clone();
        w["sliding_window"] = json!(128);
        let p = plan(&w);
        assert_eq!((p.tuning["first_key"].clone(), p.tuning["num_kv_splits"].clone(), p.tuning["kv_len_per_split"].clone()), (json!(10791), json!(2), json!(128)));
        assert_eq!(entry_params(&p.stages[0].args)[53].param, lit(10791));
        // The 256-key tiles: the same 16 splits aimed at, 1024 keys each (pow2(683) < 1024 is
        // rounded to the tile), 11 of them; twice the waves, 2 CTAs an SM hinted: 22 of 512.
        let all = candidates("attention_sink_decode", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        let wide = all.iter().find(|p| p.variant == "n256_x1_nohint").expect("the 256-key variant");
        assert_eq!((wide.stages[0].grid, wide.stages[0].generics[3].as_str(), wide.tuning["kv_len_per_split"].clone()), ([1, 8, 11], "256", json!(1024)));
        assert!(all.iter().any(|p| p.variant == "n256_x1_nohint_dot"));
        let two = all.iter().find(|p| p.variant == "n256_x2_occ2").expect("the two-wave 256-key variant");
        assert_eq!((two.stages[0].grid, two.tuning["kv_len_per_split"].clone(), two.stages[0].occupancy), ([1, 8, 22], json!(512), Some(2)));
        assert!(all.iter().any(|p| p.variant == "n256_x2_occ2_dot"));
        // 31079 keys. The fixed two-wave plan: 33 splits aimed, len pow2(942) = 1024 (four
        // 256-key tiles, the TILES generic), 31 splits. Three waves over whole 128-key tiles:
        // 396 / 8 = 49 aimed, 243 tiles, 5 a split (640 keys), 49 splits; of 256-key tiles:
        // 122 tiles, 3 a split (768 keys), 41 splits.
        let mut long = c.clone();
        long["num_keys"] = json!(31079);
        let all = candidates("attention_sink_decode", &long, Overrides::default(), &Target::h200()).unwrap().unwrap();
        let pick = |v: &str| all.iter().find(|p| p.variant == v).unwrap_or_else(|| panic!("variant {v}"));
        let fixed = pick("n256_x2_occ2_fixed");
        assert_eq!((fixed.stages[0].grid, fixed.stages[0].generics[4].as_str(), fixed.stages[0].tuning["tiles_per_split"].clone()), ([1, 8, 31], "4", json!(4)));
        assert!(fixed.stages[0].stem.ends_with("_occ2_t4"), "{}", fixed.stages[0].stem);
        assert_eq!(pick("n256_x2_occ2").stages[0].generics[4], "0");
        let wt = pick("n128_x3_occ3_wt");
        assert_eq!((wt.stages[0].grid, wt.tuning["kv_len_per_split"].clone(), wt.stages[0].occupancy), ([1, 8, 49], json!(640), Some(3)));
        assert!(wt.tuning["split_rule"].as_str().unwrap().starts_with("splits = ceil(K / len), len = 128 x ceil(ceil(K / 128) / max(1, 3 x 132 SMs"));
        // The reduce of 49 splits pads them to 64.
        assert_eq!(pick("n128_x3_occ3_wt_fixed_ps").stages[1].generics[1], "64");
        assert_eq!(pick("n128_x3_occ3_wt_fixed_ps").stages[0].generics[4..], ["5".to_string(), "1".into()]);
        assert_eq!(pick("n256_x3_occ3_wt_fixed").stages[0].grid, [1, 8, 41]);
        let mut bad = c.clone();
        bad["num_queries"] = json!(2);
        assert!(candidates("attention_sink_decode", &bad, Overrides::default(), &Target::h200()).unwrap_err().to_string().contains("num_queries must be 1"));
    }
}
