// SPDX-License-Identifier: Apache-2.0
//! Per-configuration plans of the attention-prefill operators (fmha, attention_sink, gemma_attention, mla): kernel, specialisation,
//! tiles, occupancy and grid from the configuration; and the tuning candidates (`variants`).
//!
//! The tensors are the reference's (reference/src/ops/fmha.cpp): q and o `[B, H, S, D]`, k and
//! v `[B, HKV, S, D]`, contiguous; `o` in `out_dtype` (default the inputs' dtype). The
//! default tiles are tilegym 1.5.1's untuned choice on sm_90 (its first candidate,
//! `TILE_M=256, TILE_N=128, occupancy=1`, the tilegym bundle's plan); its other sm_90
//! candidates and this port's smaller tiles are the variants.

use anyhow::{bail, ensure, Result};
use serde_json::{json, Map, Value};

use crate::abi::{KernelArg, LitValue, ScalarType};
use crate::plan::{
    ceil_div, grid_of, param_bool_or, param_f64_or, param_i64, param_int_or, param_str, param_str_or, pow2_ceil,
    specialization_json, tensor_arg, view_arg_at, Candidates, Overrides, Plan, TensorLayout,
};
use crate::target::Target;

/// Operators of this module (registered in `crate::plan::OPERATORS`).
pub const OPERATORS: &[&str] = &["fmha", "attention_sink", "gemma_attention", "mla"];

/// The largest head-dimension tile: `[BM, BD]` f32 accumulators beyond it do not fit a block.
pub const MAX_HEAD_TILE: i64 = 256;

/// One fmha launch shape: query rows and key columns per tile, and the occupancy hint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttnTiles {
    pub bm: i64,
    pub bn: i64,
    pub occupancy: i32,
}

const fn tiles(bm: i64, bn: i64, occupancy: i32) -> AttnTiles {
    AttnTiles { bm, bn, occupancy }
}

impl AttnTiles {
    /// The variant name: its knobs, the same plan in every configuration.
    pub fn name(&self) -> String {
        format!("m{}n{}_o{}", self.bm, self.bn, self.occupancy)
    }
}

/// tilegym 1.5.1's fmha candidates on sm_90 (`_fmha_autotune_configs` takes its sm_100 list
/// for capability 9; the default is its first, whose cubin spills about 5.4 KB per thread in
/// tilegym's bundle and in this port alike), without its cluster of 2; then this port's
/// smaller tiles, 128x128 at occupancy 1 first (504 B of stack instead of 5456 at D = 128
/// fp16, `cuobjdump -res-usage`: the first to time), 128x64 (120 B) and 64x64 (none).
pub fn fmha_candidates() -> Vec<AttnTiles> {
    vec![tiles(256, 128, 1), tiles(128, 128, 1), tiles(128, 128, 2), tiles(256, 128, 2), tiles(128, 64, 2), tiles(64, 64, 2)]
}

/// portbench dtype -> (cutile element type, bytes) of fmha's inputs: the tensor-core operand
/// types (fp32 would need a tf32 conversion of q, k, v and P: not in this kernel).
fn input_type(dtype: &str) -> Result<(&'static str, i32)> {
    Ok(match dtype {
        "float16" => ("f16", 2),
        "bfloat16" => ("bf16", 2),
        "float8_e5m2" => ("f8e5m2", 1),
        "float8_e4m3fn" => ("f8e4m3fn", 1),
        other => bail!("unsupported dtype {other:?} (float16, bfloat16, float8_e5m2, float8_e4m3fn: the tensor-core operand types)"),
    })
}

/// portbench dtype -> (cutile element type, bytes) of fmha's output.
fn output_type(dtype: &str) -> Result<(&'static str, i32)> {
    Ok(match dtype {
        "float32" => ("f32", 4),
        "float16" => ("f16", 2),
        "bfloat16" => ("bf16", 2),
        "float8_e5m2" => ("f8e5m2", 1),
        "float8_e4m3fn" => ("f8e4m3fn", 1),
        other => bail!("unsupported out_dtype {other:?} (float32, float16, bfloat16, float8_e5m2, float8_e4m3fn)"),
    })
}

/// fmha's configuration as the reference reads it (reference/src/ops/fmha.cpp).
struct FmhaShape {
    b: i64,
    h: i64,
    hkv: i64,
    s: i64,
    d: i64,
    causal: bool,
    scale: f64,
    elem: &'static str,
    bytes: i32,
    out_elem: &'static str,
    out_bytes: i32,
}

fn fmha_shape(params: &Value) -> Result<FmhaShape> {
    let (b, h, s, d) = (param_i64(params, "batch")?, param_i64(params, "heads")?, param_i64(params, "seq_len")?, param_i64(params, "head_dim")?);
    let hkv = param_int_or(params, "kv_heads", h)?;
    ensure!(hkv > 0 && h % hkv == 0, "heads = {h} is not a multiple of kv_heads = {hkv}");
    let dtype = param_str(params, "dtype")?;
    let (elem, bytes) = input_type(dtype)?;
    let (out_elem, out_bytes) = output_type(param_str_or(params, "out_dtype", dtype)?)?;
    let scale = param_f64_or(params, "sm_scale", 1.0 / (d as f64).sqrt())?;
    // The kernel takes the row maximum before the scale (max(x) c = max(x c) needs c > 0).
    ensure!(scale > 0.0 && scale.is_finite(), "sm_scale = {scale}: the kernel needs a positive finite scale");
    ensure!(
        d <= MAX_HEAD_TILE,
        "head_dim = {d} exceeds {MAX_HEAD_TILE} (the [rows, head_dim] f32 accumulator of a query tile would not fit a block)"
    );
    let q_elems = b * h * s * d;
    ensure!(
        q_elems <= i32::MAX as i64,
        "q [{b}, {h}, {s}, {d}] has {q_elems} elements, more than 2^31-1 (cutile-rs 0.5.0 shapes, strides and offsets are i32)"
    );
    Ok(FmhaShape { b, h, hkv, s, d, causal: param_bool_or(params, "is_causal", false)?, scale, elem, bytes, out_elem, out_bytes })
}

fn plan_fmha(params: &Value, t: AttnTiles) -> Result<Plan> {
    for (what, v) in [("BM", t.bm), ("BN", t.bn)] {
        ensure!((16..=256).contains(&v) && v & (v - 1) == 0, "tile {what} = {v} must be a power of two in 16..=256");
    }
    ensure!((1..=32).contains(&t.occupancy), "occupancy must be 1..=32, got {}", t.occupancy);
    let s = fmha_shape(params)?;
    let bd = pow2_ceil(s.d).max(16);
    let tensors = vec![
        TensorLayout::contiguous("q", &[s.b, s.h, s.s, s.d], s.bytes),
        TensorLayout::contiguous("k", &[s.b, s.hkv, s.s, s.d], s.bytes),
        TensorLayout::contiguous("v", &[s.b, s.hkv, s.s, s.d], s.bytes),
        TensorLayout::contiguous("o", &[s.b, s.h, s.s, s.d], s.out_bytes),
    ];
    // exp2 domain: softmax(x scale) = 2^(x scale log2 e - max) / sum.
    let qk_scale = s.scale * std::f64::consts::LOG2_E;
    let mut args: Vec<KernelArg> = tensors.iter().map(|x| tensor_arg(x, None)).collect();
    args.push(KernelArg::Scalar { name: "qk_scale".into(), ty: ScalarType::F32, value: LitValue::Float(qk_scale as f32 as f64) });
    let causal = i32::from(s.causal);
    let q_tiles = ceil_div(s.s, t.bm);
    // Key tiles the grid loads: all per query tile, or (causal) up to the tile's last query.
    let k_tiles = ceil_div(s.s, t.bn);
    let loaded: i64 = if s.causal { (0..q_tiles).map(|i| ceil_div(((i + 1) * t.bm).min(s.s), t.bn)).sum() } else { q_tiles * k_tiles };
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("fmha"));
    tuning.insert("tile_m".into(), json!(t.bm));
    tuning.insert("tile_n".into(), json!(t.bn));
    tuning.insert("tile_d".into(), json!(bd));
    tuning.insert("occupancy".into(), json!(t.occupancy));
    tuning.insert("num_ctas".into(), json!(1));
    tuning.insert("causal".into(), json!(s.causal));
    tuning.insert("query_group_size".into(), json!(s.h / s.hkv));
    tuning.insert("qk_scale".into(), json!(qk_scale as f32 as f64));
    tuning.insert("softmax".into(), json!("online, base 2 (exp2 with flush to zero), f32 running max and sum, one exact reciprocal per row"));
    tuning.insert("mma_operands".into(), json!(s.elem));
    tuning.insert("accumulator".into(), json!("f32"));
    tuning.insert("load_latency".into(), json!({"k": 2, "v": 4}));
    tuning.insert(
        "masking".into(),
        json!(if s.causal {
            "causal: key tiles past each query tile's last row skipped; tiles crossing the diagonal or the end of the keys masked in the kernel"
        } else {
            "key columns past seq_len masked in the kernel (last key tile only)"
        }),
    );
    tuning.insert("key_tiles_loaded".into(), json!(loaded * s.b * s.h));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "fmha",
        elem: s.elem,
        generics: vec![s.elem.to_string(), s.out_elem.to_string(), t.bm.to_string(), t.bn.to_string(), bd.to_string(), causal.to_string()],
        tensors,
        args,
        grid: grid_of(&[s.s, s.b * s.h], &[t.bm, 1])?,
        stem: format!("fmha_{}_{}_m{}n{}d{bd}_c{causal}_o{}", s.elem, s.out_elem, t.bm, t.bn, t.occupancy),
        variant: t.name(),
        occupancy: Some(t.occupancy),
        worker_warps: None,
        extra_launches: Vec::new(),
        tuning,
    })
}

/// tilegym 1.5.1's attention_sink: untuned 128x128 at its kernel's occupancy 2 (the default
/// here); a subset of its 18 sm_90 candidates ({256, 128, 64} x {128, 64} x occupancy 1, 2, 4)
/// as the variants. Fewer than 64 queries take 64-row tiles first.
pub fn attention_sink_candidates(queries: i64) -> Vec<AttnTiles> {
    let mut v = vec![tiles(128, 128, 2), tiles(128, 128, 1), tiles(128, 64, 2), tiles(64, 128, 2), tiles(64, 64, 2), tiles(256, 128, 1)];
    if queries <= 64 {
        v.insert(0, tiles(64, 128, 2));
    }
    v
}

fn plan_attention_sink(params: &Value, t: AttnTiles) -> Result<Plan> {
    for (what, v) in [("BM", t.bm), ("BN", t.bn)] {
        ensure!((16..=256).contains(&v) && v & (v - 1) == 0, "tile {what} = {v} must be a power of two in 16..=256");
    }
    ensure!((1..=32).contains(&t.occupancy), "occupancy must be 1..=32, got {}", t.occupancy);
    let b = param_i64(params, "batch")?;
    let sq = param_i64(params, "num_queries")?;
    let skv = param_i64(params, "num_keys")?;
    let hkv = param_i64(params, "num_kv_heads")?;
    let g = param_i64(params, "num_kv_groups")?;
    let d = param_i64(params, "head_dim")?;
    let start_q = param_int_or(params, "start_q", 0)?;
    ensure!(start_q >= 0, "start_q must be >= 0, got {start_q}");
    let window = param_int_or(params, "sliding_window", 0)?;
    ensure!(window >= 0, "sliding_window must be >= 0 (0 or null: none), got {window}");
    let dtype = param_str(params, "dtype")?;
    let (elem, bytes) = match dtype {
        "float16" => ("f16", 2),
        "bfloat16" => ("bf16", 2),
        other => bail!("unsupported dtype {other:?} (float16, bfloat16)"),
    };
    let scale = param_f64_or(params, "sm_scale", 1.0 / (d as f64).sqrt())?;
    ensure!(scale > 0.0 && scale.is_finite(), "sm_scale = {scale}: the kernel needs a positive finite scale");
    ensure!(d <= MAX_HEAD_TILE, "head_dim = {d} exceeds {MAX_HEAD_TILE} (the [rows, head_dim] f32 accumulator of a query tile would not fit a block)");
    let h = hkv * g;
    let q_elems = b * sq * h * d;
    ensure!(q_elems <= i32::MAX as i64, "q has {q_elems} elements, more than 2^31-1 (cutile-rs 0.5.0 shapes, strides and offsets are i32)");
    ensure!(b * skv * hkv * d <= i32::MAX as i64, "k has more than 2^31-1 elements (cutile-rs 0.5.0 shapes, strides and offsets are i32)");
    // No window: a window past every position (pos - w + 1 <= 0 for all), the same key ranges.
    let w = if window > 0 { window } else { start_q + sq };
    ensure!(start_q + sq + w < i32::MAX as i64, "start_q + num_queries + window overflow the kernel's i32 positions");
    let bd = pow2_ceil(d).max(16);
    // q [B, Sq, Hkv, G, D] and o [B, Sq, H*D] seen as [B, Sq, H, D] (head h = kvh * G + g).
    let view = |name: &str| TensorLayout::strided(name, &[b, sq, h, d], &[sq * h * d, h * d, d, 1], bytes);
    let tensors = vec![
        view("q"),
        TensorLayout::contiguous("k", &[b, skv, hkv, d], bytes),
        TensorLayout::contiguous("v", &[b, skv, hkv, d], bytes),
        TensorLayout::contiguous("sinks", &[h], bytes),
        view("o"),
    ];
    let qk_scale = scale * std::f64::consts::LOG2_E;
    let mut args: Vec<KernelArg> = vec![
        view_arg_at(&tensors[0], 0, None),
        tensor_arg(&tensors[1], None),
        tensor_arg(&tensors[2], None),
        tensor_arg(&tensors[3], None),
        view_arg_at(&tensors[4], 0, None),
    ];
    args.push(KernelArg::Scalar { name: "qk_scale".into(), ty: ScalarType::F32, value: LitValue::Float(qk_scale as f32 as f64) });
    args.push(KernelArg::Scalar { name: "start_q".into(), ty: ScalarType::I32, value: LitValue::Int(start_q) });
    args.push(KernelArg::Scalar { name: "window".into(), ty: ScalarType::I32, value: LitValue::Int(w) });
    // Key tiles the grid loads: per query tile, from the first query's window start to the
    // last query's own key.
    let loaded: i64 = (0..ceil_div(sq, t.bm))
        .map(|i| {
            let first = start_q + i * t.bm;
            let last = start_q + ((i + 1) * t.bm).min(sq) - 1;
            let lo = (first - w + 1).max(0) / t.bn;
            let hi = ceil_div((last + 1).min(skv), t.bn);
            (hi - lo).max(0)
        })
        .sum();
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("attention_sink"));
    tuning.insert("tile_m".into(), json!(t.bm));
    tuning.insert("tile_n".into(), json!(t.bn));
    tuning.insert("tile_d".into(), json!(bd));
    tuning.insert("occupancy".into(), json!(t.occupancy));
    tuning.insert("num_ctas".into(), json!(1));
    tuning.insert("query_group_size".into(), json!(g));
    tuning.insert("qk_scale".into(), json!(qk_scale as f32 as f64));
    tuning.insert("window".into(), if window > 0 { json!(window) } else { json!(format!("none (passed as {w}, past every position)")) });
    tuning.insert("start_q".into(), json!(start_q));
    tuning.insert("softmax".into(), json!("online, base 2 (exp2 with flush to zero), running max started at the sink logit, sink added to the denominator, one exact reciprocal per row"));
    tuning.insert("layout".into(), json!("q [B, Sq, Hkv, G, D] and o [B, Sq, H*D] read and written in place as [B, Sq, H, D] views (no transposes)"));
    tuning.insert("mma_operands".into(), json!(elem));
    tuning.insert("accumulator".into(), json!("f32"));
    tuning.insert("load_latency".into(), json!({"k": 6, "v": 6}));
    tuning.insert("masking".into(), json!("causal from start_q and the sliding window: key tiles outside each query tile's key range skipped; tiles crossing the diagonal, the window start or the end of the keys masked in the kernel"));
    tuning.insert("key_tiles_loaded".into(), json!(loaded * b * h));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "attention_sink",
        elem,
        generics: vec![elem.to_string(), t.bm.to_string(), t.bn.to_string(), bd.to_string()],
        tensors,
        args,
        grid: grid_of(&[sq, b * h], &[t.bm, 1])?,
        stem: format!("attention_sink_{elem}_m{}n{}d{bd}_o{}", t.bm, t.bn, t.occupancy),
        variant: t.name(),
        occupancy: Some(t.occupancy),
        worker_warps: None,
        extra_launches: Vec::new(),
        tuning,
    })
}

/// tilegym 1.5.1's gemma_attention candidates on sm_90 for head_dim <= 128 (its first, 128x128
/// at occupancy 2, is its untuned default); wider heads put its small tiles first, as it does.
pub fn gemma_candidates(head_dim: i64) -> Vec<AttnTiles> {
    let large = [tiles(128, 128, 2), tiles(256, 128, 1)];
    let small = [tiles(64, 32, 2), tiles(64, 64, 2)];
    if head_dim > 128 {
        small.into_iter().chain(large).collect()
    } else {
        large.into_iter().chain(small).collect()
    }
}

fn plan_gemma_attention(params: &Value, t: AttnTiles) -> Result<Plan> {
    for (what, v) in [("BM", t.bm), ("BN", t.bn)] {
        ensure!((16..=256).contains(&v) && v & (v - 1) == 0, "tile {what} = {v} must be a power of two in 16..=256");
    }
    ensure!((1..=32).contains(&t.occupancy), "occupancy must be 1..=32, got {}", t.occupancy);
    let (b, h, s, d) = (param_i64(params, "batch")?, param_i64(params, "heads")?, param_i64(params, "seq_len")?, param_i64(params, "head_dim")?);
    let hkv = param_int_or(params, "kv_heads", h)?;
    ensure!(hkv > 0 && h % hkv == 0, "heads = {h} is not a multiple of kv_heads = {hkv}");
    let dtype = param_str(params, "dtype")?;
    let (elem, bytes) = match dtype {
        "float16" => ("f16", 2),
        "bfloat16" => ("bf16", 2),
        other => bail!("unsupported dtype {other:?} (float16, bfloat16)"),
    };
    let causal = param_bool_or(params, "is_causal", true)?;
    let window = param_int_or(params, "window", 0)?;
    ensure!(window >= 0, "window must be >= 0 (0: none), got {window}");
    let cap = param_f64_or(params, "soft_cap", 0.0)?;
    ensure!(cap >= 0.0 && cap.is_finite(), "soft_cap = {cap}: must be >= 0 (0: none) and finite");
    let scale = param_f64_or(params, "scaling", 1.0 / (d as f64).sqrt())?;
    ensure!(scale.is_finite(), "scaling = {scale} is not finite");
    ensure!(d <= MAX_HEAD_TILE, "head_dim = {d} exceeds {MAX_HEAD_TILE} (the [rows, head_dim] f32 accumulator of a query tile would not fit a block)");
    let q_elems = b * h * s * d;
    ensure!(q_elems <= i32::MAX as i64, "q [{b}, {h}, {s}, {d}] has {q_elems} elements, more than 2^31-1 (cutile-rs 0.5.0 shapes, strides and offsets are i32)");
    // No window: one of S reaches every key (i - S < 0, i + S >= S).
    let w = if window > 0 { window.min(s) } else { s };
    let bd = pow2_ceil(d).max(16);
    let tensors = vec![
        TensorLayout::contiguous("q", &[b, h, s, d], bytes),
        TensorLayout::contiguous("k", &[b, hkv, s, d], bytes),
        TensorLayout::contiguous("v", &[b, hkv, s, d], bytes),
        TensorLayout::contiguous("o", &[b, h, s, d], bytes),
    ];
    // Base 2: with a cap, s2 = (cap log2 e) tanh(q.k (scale / cap)); without, q.k (scale log2 e).
    let log2e = std::f64::consts::LOG2_E;
    let (qk_scale, cap2) = if cap > 0.0 { (scale / cap, cap * log2e) } else { (scale * log2e, 0.0) };
    let mut args: Vec<KernelArg> = tensors.iter().map(|x| tensor_arg(x, None)).collect();
    args.push(KernelArg::Scalar { name: "qk_scale".into(), ty: ScalarType::F32, value: LitValue::Float(qk_scale as f32 as f64) });
    args.push(KernelArg::Scalar { name: "cap2".into(), ty: ScalarType::F32, value: LitValue::Float(cap2 as f32 as f64) });
    args.push(KernelArg::Scalar { name: "window".into(), ty: ScalarType::I32, value: LitValue::Int(w) });
    let loaded: i64 = (0..ceil_div(s, t.bm))
        .map(|i| {
            let row0 = i * t.bm;
            let last = ((i + 1) * t.bm).min(s) - 1;
            let mut hi = (last + w + 1).min(s);
            if causal {
                hi = hi.min(last + 1);
            }
            ceil_div(hi, t.bn) - (row0 - w).max(0) / t.bn
        })
        .sum();
    let (c, capped) = (i32::from(causal), i32::from(cap > 0.0));
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("gemma_attention"));
    tuning.insert("tile_m".into(), json!(t.bm));
    tuning.insert("tile_n".into(), json!(t.bn));
    tuning.insert("tile_d".into(), json!(bd));
    tuning.insert("occupancy".into(), json!(t.occupancy));
    tuning.insert("num_ctas".into(), json!(1));
    tuning.insert("causal".into(), json!(causal));
    tuning.insert("query_group_size".into(), json!(h / hkv));
    tuning.insert("window".into(), if window > 0 { json!(w) } else { json!(format!("none (passed as {w}: every key)")) });
    tuning.insert("soft_cap".into(), json!(cap));
    tuning.insert("qk_scale".into(), json!(qk_scale as f32 as f64));
    tuning.insert("softmax".into(), json!("soft cap (approximate tanh, as tilegym's) before the masks, online softmax in base 2 (exp2 with flush to zero), f32 running max and sum, one exact reciprocal per row"));
    tuning.insert("mma_operands".into(), json!(elem));
    tuning.insert("accumulator".into(), json!("f32"));
    tuning.insert("load_latency".into(), json!({"k": 3, "v": 3}));
    tuning.insert("masking".into(), json!("sliding window |i - j| <= window and causal: key tiles outside each query tile's key range skipped; tiles crossing a bound or the end of the keys masked in the kernel"));
    tuning.insert("key_loops".into(), json!("two, as tilegym's: the tiles needing no mask, then the masked ones (window lower edge, diagonal, upper edge, end of the keys)"));
    tuning.insert("key_tiles_loaded".into(), json!(loaded * b * h));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "gemma_attention",
        elem,
        generics: vec![elem.to_string(), t.bm.to_string(), t.bn.to_string(), bd.to_string(), c.to_string(), capped.to_string()],
        tensors,
        args,
        grid: grid_of(&[s, b * h], &[t.bm, 1])?,
        stem: format!("gemma_attention_{elem}_m{}n{}d{bd}_c{c}_cap{capped}_o{}", t.bm, t.bn, t.occupancy),
        variant: t.name(),
        occupancy: Some(t.occupancy),
        worker_warps: None,
        extra_launches: Vec::new(),
        tuning,
    })
}

/// tilegym 1.5.1's mla: untuned 64x64 at occupancy 1 (its first sm_90 candidate, the tilegym
/// bundle's plan), then five of its other nine sm_90 candidates ({64, 128, 256} x {64, 128} at
/// occupancy 1, {64, 128}^2 at 2).
pub fn mla_candidates() -> Vec<AttnTiles> {
    vec![tiles(64, 64, 1), tiles(128, 64, 1), tiles(128, 128, 1), tiles(64, 128, 1), tiles(128, 64, 2), tiles(64, 64, 2)]
}

fn plan_mla(params: &Value, t: AttnTiles) -> Result<Plan> {
    for (what, v) in [("BM", t.bm), ("BN", t.bn)] {
        ensure!((16..=256).contains(&v) && v & (v - 1) == 0, "tile {what} = {v} must be a power of two in 16..=256");
    }
    ensure!((1..=32).contains(&t.occupancy), "occupancy must be 1..=32, got {}", t.occupancy);
    let (b, h, s) = (param_i64(params, "batch")?, param_i64(params, "heads")?, param_i64(params, "seq_len")?);
    let d = param_int_or(params, "d_model", 128)?;
    let dpe = param_int_or(params, "d_pe", 64)?;
    ensure!(d > 0 && dpe > 0, "d_model = {d} and d_pe = {dpe} must be positive");
    let hkv = param_int_or(params, "kv_heads", h)?;
    let hpe = param_int_or(params, "kpe_heads", 1)?;
    ensure!(hkv > 0 && hpe > 0 && h % hkv == 0 && h % hpe == 0, "heads = {h} is not a multiple of kv_heads = {hkv} and kpe_heads = {hpe}");
    let (elem, bytes) = input_type(param_str(params, "dtype")?)?;
    let causal = param_bool_or(params, "is_causal", true)?;
    let scale = param_f64_or(params, "sm_scale", 1.0 / ((d + dpe) as f64).sqrt())?;
    ensure!(scale > 0.0 && scale.is_finite(), "sm_scale = {scale}: the kernel needs a positive finite scale");
    ensure!(d <= MAX_HEAD_TILE, "d_model = {d} exceeds {MAX_HEAD_TILE} (the [rows, d_model] f32 accumulator of a query tile would not fit a block)");
    ensure!(dpe <= MAX_HEAD_TILE, "d_pe = {dpe} exceeds {MAX_HEAD_TILE}");
    let q_elems = b * h * s * d;
    ensure!(q_elems <= i32::MAX as i64, "q [{b}, {h}, {s}, {d}] has {q_elems} elements, more than 2^31-1 (cutile-rs 0.5.0 shapes, strides and offsets are i32)");
    let (bd, bp) = (pow2_ceil(d).max(16), pow2_ceil(dpe).max(16));
    let tensors = vec![
        TensorLayout::contiguous("q", &[b, h, s, d], bytes),
        TensorLayout::contiguous("k", &[b, hkv, s, d], bytes),
        TensorLayout::contiguous("v", &[b, hkv, s, d], bytes),
        TensorLayout::contiguous("qpe", &[b, h, s, dpe], bytes),
        TensorLayout::contiguous("kpe", &[b, hpe, s, dpe], bytes),
        TensorLayout::contiguous("o", &[b, h, s, d], bytes),
    ];
    let qk_scale = scale * std::f64::consts::LOG2_E;
    let mut args: Vec<KernelArg> = tensors.iter().map(|x| tensor_arg(x, None)).collect();
    args.push(KernelArg::Scalar { name: "qk_scale".into(), ty: ScalarType::F32, value: LitValue::Float(qk_scale as f32 as f64) });
    let c = i32::from(causal);
    let q_tiles = ceil_div(s, t.bm);
    let loaded: i64 = if causal { (0..q_tiles).map(|i| ceil_div(((i + 1) * t.bm).min(s), t.bn)).sum() } else { q_tiles * ceil_div(s, t.bn) };
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("mla"));
    tuning.insert("tile_m".into(), json!(t.bm));
    tuning.insert("tile_n".into(), json!(t.bn));
    tuning.insert("tile_d".into(), json!(bd));
    tuning.insert("tile_pe".into(), json!(bp));
    tuning.insert("occupancy".into(), json!(t.occupancy));
    tuning.insert("num_ctas".into(), json!(1));
    tuning.insert("causal".into(), json!(causal));
    tuning.insert("query_group_size".into(), json!(h / hkv));
    tuning.insert("kpe_group_size".into(), json!(h / hpe));
    tuning.insert("qk_scale".into(), json!(qk_scale as f32 as f64));
    tuning.insert("softmax".into(), json!("scores q.k + qpe.kpe (two products into one f32 tile), online softmax in base 2 (exp2 with flush to zero), f32 running max and sum, one exact reciprocal per row"));
    tuning.insert("mma_operands".into(), json!(elem));
    tuning.insert("accumulator".into(), json!("f32"));
    tuning.insert("load_latency".into(), json!({"k": 2, "kpe": 2, "v": 4}));
    tuning.insert(
        "masking".into(),
        json!(if causal {
            "causal: key tiles past each query tile's last row skipped; tiles crossing the diagonal or the end of the keys masked in the kernel"
        } else {
            "key columns past seq_len masked in the kernel (last key tile only)"
        }),
    );
    tuning.insert("key_loops".into(), json!("two, as tilegym's Tile IR: the key tiles needing no mask, then the masked ones"));
    tuning.insert("key_tiles_loaded".into(), json!(loaded * b * h));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "mla",
        elem,
        generics: vec![elem.to_string(), t.bm.to_string(), t.bn.to_string(), bd.to_string(), bp.to_string(), c.to_string()],
        tensors,
        args,
        grid: grid_of(&[s, b * h], &[t.bm, 1])?,
        stem: format!("mla_{elem}_m{}n{}d{bd}p{bp}_c{c}_o{}", t.bm, t.bn, t.occupancy),
        variant: t.name(),
        occupancy: Some(t.occupancy),
        worker_warps: None,
        extra_launches: Vec::new(),
        tuning,
    })
}

/// The default plan of a configuration of one of [`OPERATORS`]; `Ok(None)` for other operators.
pub fn plan(op: &str, params: &Value, o: Overrides, t: &Target) -> Result<Option<Plan>> {
    Ok(candidates(op, params, o, t)?.map(|c| c.plans.into_iter().next().expect("at least the default")))
}

/// The default plan and its alternatives (names are the knobs, duplicates dropped); `Ok(None)`
/// for operators not in [`OPERATORS`].
pub fn candidates(op: &str, params: &Value, o: Overrides, _t: &Target) -> Result<Option<Candidates>> {
    if !OPERATORS.contains(&op) {
        return Ok(None);
    }
    ensure!(
        o == Overrides::default(),
        "{op} takes no suite tuning overrides (block_rows, tile, ...): its tile choices are the manifest's variants"
    );
    let (all, plan_of): (Vec<AttnTiles>, fn(&Value, AttnTiles) -> Result<Plan>) = match op {
        "fmha" => (fmha_candidates(), plan_fmha),
        "mla" => (mla_candidates(), plan_mla),
        "gemma_attention" => (gemma_candidates(param_i64(params, "head_dim")?), plan_gemma_attention),
        _ => (attention_sink_candidates(param_i64(params, "num_queries")?), plan_attention_sink),
    };
    let mut plans = vec![plan_of(params, all[0])?];
    for alt in &all[1..] {
        if let Ok(p) = plan_of(params, *alt) {
            if plans.iter().all(|q| q.variant != p.variant) {
                plans.push(p);
            }
        }
    }
    Ok(Some(Candidates { plans }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{entry_params, Param};

    fn cfg(s: i64, dtype: &str, causal: bool) -> Value {
        json!({"batch": 4, "heads": 32, "seq_len": s, "head_dim": 128, "dtype": dtype, "is_causal": causal})
    }

    fn default_plan(c: &Value) -> Plan {
        plan("fmha", c, Overrides::default(), &Target::h200()).unwrap().unwrap()
    }

    #[test]
    fn fmha_binds_the_reference_tensors() {
        let p = default_plan(&cfg(1025, "float16", true));
        assert_eq!(p.generics, ["f16", "f16", "256", "128", "128", "1"]);
        // ceil(1025 / 256) query tiles x B*H.
        assert_eq!(p.grid, [5, 128, 1]);
        assert_eq!(p.variant, "m256n128_o1");
        let names: Vec<&str> = p.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["q", "k", "v", "o"]);
        assert_eq!(p.tensors[1].strides, vec![32 * 1025 * 128, 1025 * 128, 128, 1]);
        let e = entry_params(&p.args);
        assert_eq!(e.len(), 4 * 9 + 1);
        assert_eq!(e[27].param, Param::Ptr { tensor: "o".into() });
        // scale 1/sqrt(128) in base 2, rounded to f32.
        let want = ((1.0f64 / 128f64.sqrt()) * std::f64::consts::LOG2_E) as f32 as f64;
        assert_eq!(e[36].param, Param::Literal { ty: ScalarType::F32, value: LitValue::Float(want) });
        // Causal: key tiles of query tile i are ceil(min((i+1)*256, 1025) / 128): 2+4+6+8+9.
        assert_eq!(p.tuning["key_tiles_loaded"], json!(29 * 128));
        let p = default_plan(&cfg(1025, "float16", false));
        assert_eq!(p.tuning["key_tiles_loaded"], json!(5 * 9 * 128));
    }

    #[test]
    fn fmha_gqa_fp8_out_dtype_and_head_tiles() {
        let c = json!({"batch": 1, "heads": 8, "kv_heads": 2, "seq_len": 100, "head_dim": 72, "dtype": "float8_e5m2", "out_dtype": "float32"});
        let p = default_plan(&c);
        assert_eq!(p.generics, ["f8e5m2", "f32", "256", "128", "128", "0"]);
        assert_eq!((p.tensors[1].shape.clone(), p.tensors[3].dtype_bytes), (vec![1, 2, 100, 72], 4));
        assert_eq!(p.tuning["query_group_size"], json!(4));
        let names = candidates("fmha", &c, Overrides::default(), &Target::h200()).unwrap().unwrap().names().join(" ");
        assert_eq!(names, "m256n128_o1 m128n128_o1 m128n128_o2 m256n128_o2 m128n64_o2 m64n64_o2");
        let c = json!({"batch": 1, "heads": 2, "seq_len": 64, "head_dim": 16, "dtype": "bfloat16", "sm_scale": 0.5});
        let p = default_plan(&c);
        assert_eq!((p.generics[4].as_str(), p.tuning["qk_scale"].clone()), ("16", json!((0.5 * std::f64::consts::LOG2_E) as f32 as f64)));
    }

    #[test]
    fn attention_sink_views_windows_and_skipping() {
        let c = json!({"batch": 1, "num_queries": 10820, "num_keys": 10820, "num_kv_heads": 8, "num_kv_groups": 8, "head_dim": 64,
                       "sliding_window": 128, "dtype": "bfloat16", "start_q": 0});
        let p = plan("attention_sink", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        assert_eq!((p.generics.clone(), p.grid, p.variant.as_str()), (vec!["bf16".to_string(), "128".into(), "128".into(), "64".into()], [85, 64, 1], "m128n128_o2"));
        // q [1, 10820, 8, 8, 64] seen as [1, 10820, 64, 64]: a view, extents and strides literal.
        let e = entry_params(&p.args);
        assert_eq!(e.len(), 9 + 9 + 9 + 3 + 9 + 3);
        assert_eq!(e[1].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(1) });
        assert_eq!(e[6].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(64 * 64) });
        assert_eq!(e[27].param, Param::Ptr { tensor: "sinks".into() });
        assert_eq!(e[30].param, Param::Ptr { tensor: "o".into() });
        assert_eq!(e[41].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(128) });
        // Window 128: query tile i (rows 128 i ..) loads key tiles (128 i - 127) / 128 ..= i,
        // two each but the first: 1 + 2 * 84 per head.
        assert_eq!(p.tuning["key_tiles_loaded"], json!((1 + 2 * 84) * 64));
        // No window: passed as start_q + num_queries; causal from start_q.
        let mut c = c;
        c["sliding_window"] = Value::Null;
        c["num_queries"] = json!(128);
        c["num_keys"] = json!(2048);
        c["start_q"] = json!(1000);
        let p = plan("attention_sink", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        assert_eq!(entry_params(&p.args)[41].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(1128) });
        // Positions 1000..1127 see keys 0..=pos: key tiles 0 ..= 8.
        assert_eq!(p.tuning["key_tiles_loaded"], json!(9 * 64));
        // One query: 64-row tiles.
        c["num_queries"] = json!(1);
        let p = plan("attention_sink", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        assert_eq!((p.variant.as_str(), p.grid), ("m64n128_o2", [1, 64, 1]));
        c["dtype"] = json!("float8_e5m2");
        assert_eq!(plan("attention_sink", &c, Overrides::default(), &Target::h200()).unwrap_err().to_string(), "unsupported dtype \"float8_e5m2\" (float16, bfloat16)");
    }

    #[test]
    fn gemma_attention_caps_windows_and_skips() {
        let c = json!({"batch": 1, "heads": 16, "kv_heads": 8, "seq_len": 8192, "head_dim": 128, "window": 4096, "soft_cap": 50.0, "is_causal": true, "dtype": "bfloat16"});
        let p = plan("gemma_attention", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        assert_eq!((p.generics.clone(), p.grid, p.variant.as_str()), (["bf16", "128", "128", "128", "1", "1"].map(String::from).to_vec(), [64, 16, 1], "m128n128_o2"));
        let e = entry_params(&p.args);
        assert_eq!(e.len(), 4 * 9 + 3);
        let lit = |v: f64| Param::Literal { ty: ScalarType::F32, value: LitValue::Float(v as f32 as f64) };
        assert_eq!(e[36].param, lit(1.0 / 128f64.sqrt() / 50.0));
        assert_eq!(e[37].param, lit(50.0 * std::f64::consts::LOG2_E));
        assert_eq!(e[38].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(4096) });
        // Query tile i loads key tiles max(128 i - 4096, 0) / 128 ..= i: i + 1 for i < 32, 33 after.
        let per_head: i64 = (0..64).map(|i: i64| if i < 32 { i + 1 } else { 33 }).sum();
        assert_eq!(p.tuning["key_tiles_loaded"], json!(per_head * 16));
        let names = candidates("gemma_attention", &c, Overrides::default(), &Target::h200()).unwrap().unwrap().names().join(" ");
        assert_eq!(names, "m128n128_o2 m256n128_o1 m64n32_o2 m64n64_o2");
        // No cap, no window, not causal: scale in base 2, a window of S.
        let c = json!({"batch": 1, "heads": 2, "seq_len": 100, "head_dim": 64, "is_causal": false, "dtype": "float16"});
        let p = plan("gemma_attention", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        let e = entry_params(&p.args);
        assert_eq!((e[36].param.clone(), e[37].param.clone()), (lit(0.125 * std::f64::consts::LOG2_E), lit(0.0)));
        assert_eq!(e[38].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(100) });
        assert_eq!(&p.generics[4..], ["0", "0"]);
    }

    #[test]
    fn mla_binds_the_split_head() {
        let c = json!({"batch": 4, "heads": 32, "seq_len": 512, "d_model": 128, "d_pe": 64, "dtype": "float8_e5m2", "is_causal": true, "kpe_heads": 1});
        let p = plan("mla", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        assert_eq!((p.generics.clone(), p.grid, p.variant.as_str()), (["f8e5m2", "64", "64", "128", "64", "1"].map(String::from).to_vec(), [8, 128, 1], "m64n64_o1"));
        let names: Vec<&str> = p.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["q", "k", "v", "qpe", "kpe", "o"]);
        assert_eq!(p.tensors[4].shape, vec![4, 1, 512, 64]);
        let e = entry_params(&p.args);
        assert_eq!(e.len(), 6 * 9 + 1);
        // scale 1/sqrt(128 + 64) in base 2.
        let want = ((1.0f64 / 192f64.sqrt()) * std::f64::consts::LOG2_E) as f32 as f64;
        assert_eq!(e[54].param, Param::Literal { ty: ScalarType::F32, value: LitValue::Float(want) });
        assert_eq!((p.tuning["kpe_group_size"].clone(), p.tuning["key_tiles_loaded"].clone()), (json!(32), json!((1..=8).sum::<i64>() * 128)));
        let c = json!({"batch": 1, "heads": 4, "seq_len": 64, "dtype": "bfloat16", "kpe_heads": 3});
        assert!(plan("mla", &c, Overrides::default(), &Target::h200()).unwrap_err().to_string().contains("kpe_heads = 3"));
    }

    #[test]
    fn every_attention_configuration_of_the_tilegym_suite_has_a_plan() {
        // configs/tilegym.json: fmha 48, attention_sink 8, gemma_attention 1, mla 10; none refused.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/tilegym.json");
        let suite: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut counts = std::collections::BTreeMap::new();
        for c in suite["configs"].as_array().unwrap() {
            let op = c["op"].as_str().unwrap();
            if !OPERATORS.contains(&op) {
                continue;
            }
            let cands = candidates(op, &c["params"], Overrides::default(), &Target::h200())
                .unwrap_or_else(|e| panic!("{op} {}: {e}", c["params"]))
                .unwrap();
            let want = match op {
                "fmha" => "m256n128_o1",
                "mla" => "m64n64_o1",
                "attention_sink" if c["params"]["num_queries"].as_i64().unwrap() <= 64 => "m64n128_o2",
                _ => "m128n128_o2",
            };
            assert_eq!(cands.plans[0].variant, want, "{op} {}", c["params"]);
            assert!(cands.plans.len() >= 4, "{op}: {:?}", cands.names());
            *counts.entry(op).or_insert(0) += 1;
        }
        assert_eq!(counts.into_iter().collect::<Vec<_>>(), [("attention_sink", 8), ("fmha", 48), ("gemma_attention", 1), ("mla", 10)]);
    }

    #[test]
    fn unsupported_fmha_configurations_say_why() {
        let err = |c: Value| plan("fmha", &c, Overrides::default(), &Target::h200()).unwrap_err().to_string();
        assert_eq!(err(cfg(512, "float32", false)), "unsupported dtype \"float32\" (float16, bfloat16, float8_e5m2, float8_e4m3fn: the tensor-core operand types)");
        let mut c = cfg(512, "float16", false);
        c["head_dim"] = json!(512);
        assert!(err(c).starts_with("head_dim = 512 exceeds 256"));
        let mut c = cfg(512, "float16", false);
        c["sm_scale"] = json!(-1.0);
        assert!(err(c).contains("positive finite scale"));
        assert!(err(cfg(131072, "float16", false)).contains("more than 2^31-1"));
        let mut c = cfg(512, "float16", false);
        c["kv_heads"] = json!(5);
        assert!(err(c).contains("not a multiple of kv_heads"));
        assert!(plan("rope", &cfg(512, "float16", false), Overrides::default(), &Target::h200()).unwrap().is_none());
    }
}
