// SPDX-License-Identifier: Apache-2.0
//! Per-configuration plans of the attention-prefill operators (fmha): kernel, specialisation,
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
    specialization_json, tensor_arg, Candidates, Overrides, Plan, TensorLayout,
};
use crate::target::Target;

/// Operators of this module (registered in `crate::plan::OPERATORS`).
pub const OPERATORS: &[&str] = &["fmha"];

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
    let all = fmha_candidates();
    let mut plans = vec![plan_fmha(params, all[0])?];
    for alt in &all[1..] {
        if let Ok(p) = plan_fmha(params, *alt) {
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
