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

/// Operators of this module (registered in `crate::plan::OPERATORS`).
pub const OPERATORS: &[&str] = &["flash_decode"];

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
}

impl DecodeKnobs {
    pub fn name(&self) -> String {
        let occ = self.occupancy.map_or("nohint".to_string(), |o| format!("occ{o}"));
        format!("n{}_x{}_{occ}", self.bn, self.waves)
    }
}

/// tilegym's plan: 128 keys per tile, splits for one wave of blocks, no hint.
pub const DEFAULT: DecodeKnobs = DecodeKnobs { bn: 128, waves: 1, occupancy: None };

/// The alternatives worth timing beside [`DEFAULT`] (more splits per SM for the long KV
/// lengths where one block per SM walks 8192 keys, an occupancy hint, a smaller key tile).
pub const ALTERNATIVES: &[DecodeKnobs] = &[
    DecodeKnobs { bn: 128, waves: 2, occupancy: None },
    DecodeKnobs { bn: 128, waves: 4, occupancy: Some(2) },
    DecodeKnobs { bn: 64, waves: 1, occupancy: None },
];

/// Occupancy hint of the reduce: tilegym's `ByTarget(sm_80=2, default=4)`, 4 on sm_90 (its
/// exported Tile IR says `default = {occupancy = 4}`).
pub const REDUCE_OCCUPANCY: i32 = 4;

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

/// flash_decode's configuration as the reference reads it.
struct DecodeShape {
    b: i64,
    hq: i64,
    hkv: i64,
    s: i64,
    d: i64,
    scale: f64,
    elem: &'static str,
    bytes: i32,
}

fn decode_shape(params: &Value) -> Result<DecodeShape> {
    let (b, hq, hkv) = (param_i64(params, "batch")?, param_i64(params, "num_q_heads")?, param_i64(params, "num_kv_heads")?);
    let (s, d) = (param_i64(params, "seq_len")?, param_i64(params, "head_dim")?);
    ensure!(
        hq % hkv == 0 && param_int_or(params, "group_size", hq / hkv)? == hq / hkv,
        "num_q_heads must be group_size * num_kv_heads"
    );
    let scale = param_f64_or(params, "sm_scale", 1.0 / (d as f64).sqrt())?;
    let dtype = param_str(params, "dtype")?;
    let (elem, bytes) = match dtype {
        "float16" => ("f16", 2),
        "bfloat16" => ("bf16", 2),
        other => bail!("unsupported dtype {other:?}: the decode pass's tensor-core products take float16 or bfloat16 operands"),
    };
    ensure!(
        pow2_ceil(d) <= MAX_HEAD_TILE,
        "head_dim {d}: the head-dimension tile {} exceeds {MAX_HEAD_TILE} (the [keys, head_dim] tiles and the accumulator must stay in registers)",
        pow2_ceil(d)
    );
    for (name, n) in [("k", b * hkv * s * d), ("q", b * hq * d)] {
        ensure!(
            n <= i32::MAX as i64,
            "tensor {name} has {n} elements, more than 2^31-1 (cutile-rs 0.5.0 shapes, strides and offsets are i32)"
        );
    }
    Ok(DecodeShape { b, hq, hkv, s, d, scale, elem, bytes })
}

fn lit_i32(name: &str, v: i64) -> KernelArg {
    KernelArg::Scalar { name: name.into(), ty: ScalarType::I32, value: LitValue::Int(v) }
}

fn scratch_arg(t: &TensorLayout) -> KernelArg {
    KernelArg::Scratch { name: t.name.clone(), shape: t.shape.clone(), strides: t.strides.clone(), partition: None }
}

/// The split-KV pass then the reduce, for one set of knobs.
fn plan_flash_decode(params: &Value, k: DecodeKnobs, t: &Target) -> Result<StagedPlan> {
    ensure!(k.bn >= 16 && k.bn & (k.bn - 1) == 0, "key tile {} must be a power of two >= 16", k.bn);
    let x = decode_shape(params)?;
    let (b, hq, hkv, s, d) = (x.b, x.hq, x.hkv, x.s, x.d);
    let group = hq / hkv;
    // The query heads of a group are the N side of the products; 8 is the narrowest tile.
    let g = pow2_ceil(group).max(8);
    let dt = pow2_ceil(d).max(16);
    let sp = splits_for(b, hkv, s, k.bn, k.waves, t.sm_count);
    let n = sp.splits;
    // Every split holds a key: the last starts below S.
    debug_assert!((n - 1) * sp.len < s);

    // The pass: q seen per KV head, the scratch buffers seen per KV head and group member.
    let q = TensorLayout::strided("q", &[b, hkv, group, d], &[hq * d, group * d, d, 1], x.bytes);
    let kt = TensorLayout::contiguous("k", &[b, hkv, s, d], x.bytes);
    let vt = TensorLayout::contiguous("v", &[b, hkv, s, d], x.bytes);
    let po = TensorLayout::strided("partial_o", &[b, hkv, group, n, d], &[hq * n * d, group * n * d, n * d, d, 1], x.bytes);
    let ls = TensorLayout::strided("lse", &[b, hkv, group, n], &[hq * n, group * n, n, 1], 4);
    let qk_scale = x.scale * std::f64::consts::LOG2_E;
    let pass_args = vec![
        KernelArg::View { name: "q".into(), offset: 0, shape: q.shape.clone(), strides: q.strides.clone(), partition: None },
        tensor_arg(&kt, None),
        tensor_arg(&vt, None),
        scratch_arg(&po),
        scratch_arg(&ls),
        KernelArg::Scalar { name: "qk_scale".into(), ty: ScalarType::F32, value: LitValue::Float(qk_scale) },
        lit_i32("len", sp.len),
    ];
    let pass_tensors = vec![q, kt, vt, po, ls];
    let mut pass_tuning = Map::new();
    pass_tuning.insert("kernel".into(), json!("decode_split"));
    pass_tuning.insert("query_group_tile".into(), json!(g));
    pass_tuning.insert("head_dim_tile".into(), json!(dt));
    pass_tuning.insert("key_tile".into(), json!(k.bn));
    pass_tuning.insert("occupancy".into(), k.occupancy.map_or(json!("none"), |o| json!(o)));
    pass_tuning.insert("specialization".into(), specialization_json(&pass_tensors));
    let occ = k.occupancy.map_or(String::new(), |o| format!("_occ{o}"));
    let pass = Plan {
        kernel: "decode_split",
        elem: x.elem,
        generics: vec![x.elem.to_string(), g.to_string(), dt.to_string(), k.bn.to_string()],
        args: pass_args,
        tensors: pass_tensors,
        grid: grid_of(&[b, hkv, n], &[1, 1, 1])?,
        tuning: pass_tuning,
        stem: format!("decode_split_{}_g{g}_d{dt}_n{}{occ}", x.elem, k.bn),
        variant: k.name(),
        occupancy: k.occupancy,
        worker_warps: None,
        extra_launches: Vec::new(),
    };

    // The reduce: crate::gemm's splitk_reduce over the same buffers, o seen as [B, Hq, D].
    let (s2, td) = (pow2_ceil(n), pow2_ceil(d).clamp(16, 128));
    ensure!(s2 * td <= 65536, "{s2} splits x {td} columns per block is too large a reduce tile");
    let po = TensorLayout::contiguous("partial_o", &[b, hq, n, d], x.bytes);
    let ls = TensorLayout::contiguous("lse", &[b, hq, n], 4);
    let o = TensorLayout::strided("o", &[b, hq, d], &[hq * d, d, 1], x.bytes);
    let reduce_args = vec![
        scratch_arg(&po),
        scratch_arg(&ls),
        KernelArg::View { name: "o".into(), offset: 0, shape: o.shape.clone(), strides: o.strides.clone(), partition: None },
        // Every split holds keys.
        lit_i32("valid", n),
    ];
    let reduce_tensors = vec![po.clone(), ls.clone(), o];
    let mut reduce_tuning = Map::new();
    reduce_tuning.insert("kernel".into(), json!("splitk_reduce"));
    reduce_tuning.insert("tile_d".into(), json!(td));
    reduce_tuning.insert("splits_tile".into(), json!(s2));
    reduce_tuning.insert("valid_splits".into(), json!(n));
    reduce_tuning.insert("occupancy".into(), json!(REDUCE_OCCUPANCY));
    reduce_tuning.insert("specialization".into(), specialization_json(&reduce_tensors));
    let reduce = Plan {
        kernel: "splitk_reduce",
        elem: x.elem,
        generics: vec![x.elem.to_string(), s2.to_string(), td.to_string()],
        args: reduce_args,
        tensors: reduce_tensors,
        grid: grid_of(&[b, hq, d], &[1, 1, td])?,
        tuning: reduce_tuning,
        stem: format!("splitk_reduce_{}_s{s2}_d{td}_o{REDUCE_OCCUPANCY}", x.elem),
        variant: k.name(),
        occupancy: Some(REDUCE_OCCUPANCY),
        worker_warps: None,
        extra_launches: Vec::new(),
    };

    let mut tuning = Map::new();
    tuning.insert("kernels".into(), json!(["decode_split", "splitk_reduce"]));
    tuning.insert("num_kv_splits".into(), json!(n));
    tuning.insert("kv_len_per_split".into(), json!(sp.len));
    tuning.insert(
        "split_rule".into(),
        json!(format!(
            "splits = ceil(S / len), len = max({}, pow2(ceil(S / max(1, {} x {} SMs / (B x Hkv)))))",
            k.bn, k.waves, t.sm_count
        )),
    );
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

/// The default plan and its alternatives (names are the knobs; an alternative the
/// configuration cannot take or that equals an earlier plan's splits and tiles is dropped);
/// `Ok(None)` for operators not in [`OPERATORS`]. An error is the reason the configuration
/// cannot be expressed.
pub fn candidates(op: &str, params: &Value, o: Overrides, t: &Target) -> Result<Option<Vec<StagedPlan>>> {
    if !OPERATORS.contains(&op) {
        return Ok(None);
    }
    ensure!(o == Overrides::default(), "{op} takes no suite tuning overrides: its choices are the manifest's variants");
    let mut plans = vec![plan_flash_decode(params, DEFAULT, t)?];
    for &alt in ALTERNATIVES {
        if let Ok(p) = plan_flash_decode(params, alt, t) {
            if plans.iter().all(|q| q.variant != p.variant) {
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

    fn fd(b: i64, hq: i64, hkv: i64, s: i64, d: i64, dtype: &str) -> Value {
        json!({"batch": b, "num_q_heads": hq, "num_kv_heads": hkv, "seq_len": s, "head_dim": d, "group_size": hq / hkv, "dtype": dtype})
    }

    fn default_plan(c: &Value) -> StagedPlan {
        candidates("flash_decode", c, Overrides::default(), &Target::h200()).unwrap().unwrap().remove(0)
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
        assert_eq!(pass.generics, ["f16", "8", "128", "128"]);
        assert_eq!(reduce.generics, ["f16", "8", "128"]);
        assert_eq!((pass.occupancy, reduce.occupancy), (None, Some(4)));
        let e = entry_params(&pass.args);
        // q, k, v: ptr + 4 + 4; the scratch views: ptr + 5 + 5, ptr + 4 + 4; qk_scale, len.
        assert_eq!(e.len(), 9 * 3 + 11 + 9 + 2);
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
        assert_eq!(e[48].param, lit(128));
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
        assert_eq!(p.stages[0].generics, ["bf16", "8", "128", "128"]);
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
        assert_eq!(names, ["n128_x1_nohint", "n128_x2_nohint", "n128_x4_occ2", "n64_x1_nohint"]);
        let err = |c: Value| candidates("flash_decode", &c, Overrides::default(), &Target::h200()).unwrap_err().to_string();
        assert_eq!(err(fd(1, 8, 8, 64, 64, "float32")), "unsupported dtype \"float32\": the decode pass's tensor-core products take float16 or bfloat16 operands");
        assert!(err(fd(1, 8, 8, 64, 512, "float16")).starts_with("head_dim 512: the head-dimension tile 512 exceeds 256"));
        assert!(err(fd(64, 8, 8, 65536, 128, "float16")).contains("more than 2^31-1"));
        let mut c = fd(1, 8, 2, 64, 64, "float16");
        c["group_size"] = json!(3);
        assert_eq!(err(c), "num_q_heads must be group_size * num_kv_heads");
        assert!(candidates("fmha", &json!({}), Overrides::default(), &Target::h200()).unwrap().is_none());
    }
}
