// SPDX-License-Identifier: Apache-2.0
//! Per-configuration choices: which kernel, which specialisation (generics, static
//! strides, divisibility facts), tile sizes, grid, and the kernel's arguments.

use anyhow::{bail, ensure, Context, Result};
use cutile::cutile_compiler::specialization::{compute_spec, SpecializationBits};
use serde_json::{json, Map, Value};

use crate::abi::{KernelArg, LitValue, ScalarType};
use crate::target::Target;

/// Operators this front end exports.
pub const OPERATORS: &[&str] = &[
    "vector_add",
    "rms_norm",
    "layer_norm_legacy",
    "softmax",
    "rope",
    "silu_and_mul",
    "swiglu",
    "dropout",
    // The matrix products and splitk_reduce: crate::gemm.
    "matmul",
    "bmm",
    "group_gemm",
    "splitk_reduce",
    // Attention prefill: crate::attn.
    "fmha",
    "attention_sink",
    "gemma_attention",
    "mla",
    // The gated delta rule: crate::gdr.
    "recurrent_gated_delta_rule",
    "chunk_gated_delta_rule",
    // Mixture of experts: crate::moe (moe a multi-kernel plan).
    "moe",
    "moe_align_block",
    // Decode attention, multi-kernel plans: crate::decode.
    "flash_decode",
    "gemma_attention_decode",
    "attention_sink_decode",
    "mla_decoding",
    "mla_decoding_split_kv",
];

/// Default eps of the rms_norm operator spec (`eps` parameter).
pub const RMS_NORM_EPS: f64 = 1e-5;

/// Column chunk of the looping rms_norm and layer_norm (rows wider than [`NORM_MAX_BN`]).
pub const NORM_LOOP_BN: i64 = 2048;

/// Rows per block of the looping layer_norm (rows wider than [`NORM_MAX_BN`]) when `m` is a
/// multiple of it: twice the bytes in flight per chunk load. H200, persistent layer_norm
/// 30000 x 10000 bf16 (scripts/tune_variants.sh): one row 536 us, two rows 403 us, four rows
/// 721 us (their per-lane accumulators spill); rms_norm keeps one row.
pub const LAYER_NORM_LOOP_BM: i64 = 2;

/// The largest row a single-tile row kernel (layer_norm, softmax) keeps in one tile.
pub const ROW_MAX_BN: i64 = 16384;

/// Tile elements per block the row and elementwise heuristics aim at.
pub const TILE_ELEMS: i64 = 8192;

/// The widest row rms_norm and layer_norm keep in one tile (`BN`); wider rows are walked in
/// [`NORM_LOOP_BN`]-column chunks. Measured on the H200 (scripts/tune_variants.sh, rms_norm
/// m=65536 n=16384 fp16): one 16384-column tile 1237 us, 2048-column chunks 1162 us,
/// 4096-column chunks 1198 us; a 16384-column f32 layer_norm row tile spills registers.
pub const NORM_MAX_BN: i64 = 8192;

/// The base address the specialisation assumes for every tensor: any 16-byte aligned
/// address gives the same facts (cutile caps pointer divisibility at 16 bytes), and
/// `cuMemAlloc` returns 256-byte aligned memory.
pub const ASSUMED_BASE_ADDR: u64 = 256;

/// A tensor of the operator spec as this configuration lays it out.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorLayout {
    pub name: String,
    pub shape: Vec<i64>,
    /// Strides in elements (contiguous row-major unless built with [`TensorLayout::strided`]).
    pub strides: Vec<i64>,
    pub dtype_bytes: i32,
}

impl TensorLayout {
    pub fn contiguous(name: &str, shape: &[i64], dtype_bytes: i32) -> Self {
        let mut strides = vec![1i64; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * shape[d + 1];
        }
        TensorLayout { name: name.into(), shape: shape.to_vec(), strides, dtype_bytes }
    }

    pub fn strided(name: &str, shape: &[i64], strides: &[i64], dtype_bytes: i32) -> Self {
        TensorLayout { name: name.into(), shape: shape.to_vec(), strides: strides.to_vec(), dtype_bytes }
    }

    /// cutile's runtime marks unit strides static (`1`) and leaves others dynamic (`-1`).
    pub fn static_strides(&self) -> Vec<i32> {
        self.strides.iter().map(|&s| if s == 1 { 1 } else { -1 }).collect()
    }

    /// The specialisation cutile's runtime would compute for this tensor
    /// (`cutile::tensor::Tensor::spec`): divisibility of extents and strides, stride-one
    /// flags, 16-byte base alignment.
    pub fn spec(&self) -> SpecializationBits {
        let shape: Vec<i32> = self.shape.iter().map(|&v| v as i32).collect();
        let strides: Vec<i32> = self.strides.iter().map(|&v| v as i32).collect();
        compute_spec(ASSUMED_BASE_ADDR, &shape, &strides, self.dtype_bytes)
    }
}

/// Everything the exporter needs for one configuration.
#[derive(Clone, Debug)]
pub struct Plan {
    /// `#[cutile::entry]` function in `portbench_kernels`.
    pub kernel: &'static str,
    /// cutile element type name (`f32`, `f16`, `bf16`).
    pub elem: &'static str,
    /// Generic arguments in declaration order.
    pub generics: Vec<String>,
    /// Tensors in kernel parameter order.
    pub tensors: Vec<TensorLayout>,
    /// Kernel arguments in order (tensors and scalars).
    pub args: Vec<KernelArg>,
    pub grid: [u32; 3],
    /// Recorded in the manifest's `tuning`.
    pub tuning: Map<String, Value>,
    /// Stem of the cubin and IR file names, without the content hash.
    pub stem: String,
    /// The plan's name among the configuration's tuning variants: its knobs, e.g.
    /// `s1_io_occ9` (the same name means the same knobs in every configuration of an operator).
    pub variant: String,
    /// cuTile `occupancy` hint (CTAs per SM) for tileiras, when the plan sets one.
    pub occupancy: Option<i32>,
    /// tileiras `num_worker_warps_per_cta`, when the plan sets it.
    pub worker_warps: Option<i32>,
    /// Further launches of the same entry after the first (`grid`, `args`), in order: a plan
    /// that covers its tensors in parts (rope over batch groups when one launch's offsets would
    /// overflow cutile-rs's i32 indices).
    pub extra_launches: Vec<LaunchArgs>,
}

/// One more launch of a plan's entry.
#[derive(Clone, Debug)]
pub struct LaunchArgs {
    pub grid: [u32; 3],
    pub args: Vec<KernelArg>,
}

/// Tuning choices that replace the heuristics: a suite entry's `tuning` object, and the
/// knobs of the tuning variants ([`candidates`]). `None` keeps the heuristic's choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// 1-D tile (vector_add, swiglu, dropout), silu_and_mul's column tile `BH`, or the column
    /// chunk of the looping row kernels (rms_norm, layer_norm: setting it selects the loop).
    pub tile: Option<i64>,
    /// Rows per block (`BM`, `BR`, rope's `BS`) of the row and elementwise kernels.
    pub block_rows: Option<i64>,
    /// cuTile occupancy hint; `Some(0)`: no hint (tileiras chooses, as cuTile Python does for
    /// a kernel without one).
    pub occupancy: Option<i32>,
    /// tileiras worker warps per CTA (`num_worker_warps_per_cta`: 4 or 8).
    pub worker_warps: Option<i32>,
    /// rope's compute type.
    pub compute: Option<Compute>,
}

/// The type a kernel computes in: `f32`, or the tensors' own element type (one rounding per
/// operation in fp16/bf16, as tilegym's rope does; half the registers of f32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compute {
    F32,
    Io,
}

impl Compute {
    pub fn name(self) -> &'static str {
        match self {
            Compute::F32 => "f32",
            Compute::Io => "io",
        }
    }
    pub fn parse(s: &str) -> Result<Compute> {
        Ok(match s {
            "f32" => Compute::F32,
            "io" => Compute::Io,
            other => bail!("compute must be \"f32\" or \"io\" (the element type), got {other:?}"),
        })
    }
}

/// portbench dtype name -> (cutile element type, bytes).
pub fn element_type(dtype: &str) -> Result<(&'static str, i32)> {
    Ok(match dtype {
        "float32" => ("f32", 4),
        "float16" => ("f16", 2),
        "bfloat16" => ("bf16", 2),
        other => bail!("unsupported dtype {other:?}"),
    })
}

pub(crate) fn param_i64(params: &Value, key: &str) -> Result<i64> {
    let v = params.get(key).with_context(|| format!("missing parameter {key:?}"))?;
    let v = v.as_i64().with_context(|| format!("parameter {key:?} is not an integer: {v}"))?;
    ensure!(v > 0, "parameter {key:?} must be positive, got {v}");
    // cutile passes extents, strides and partition sizes as i32.
    ensure!(v <= i32::MAX as i64, "parameter {key:?} = {v} does not fit the i32 index type");
    Ok(v)
}

/// A real parameter with the spec's default (`config::real_or`); integers are accepted.
pub(crate) fn param_f64_or(params: &Value, key: &str, default: f64) -> Result<f64> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v.as_f64().with_context(|| format!("parameter {key:?} is not a number: {v}")),
    }
}

/// An integer parameter with the spec's default (`config::integer_or`).
pub(crate) fn param_int_or(params: &Value, key: &str, default: i64) -> Result<i64> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v.as_i64().with_context(|| format!("parameter {key:?} is not an integer: {v}")),
    }
}

/// A boolean parameter with the spec's default (`config::flag`).
pub(crate) fn param_bool_or(params: &Value, key: &str, default: bool) -> Result<bool> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v.as_bool().with_context(|| format!("parameter {key:?} is not a boolean: {v}")),
    }
}

/// A string parameter with a default (`config::text_or`).
pub(crate) fn param_str_or<'a>(params: &'a Value, key: &str, default: &'a str) -> Result<&'a str> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v.as_str().with_context(|| format!("parameter {key:?} is not a string: {v}")),
    }
}

pub(crate) fn pow2_ceil(v: i64) -> i64 {
    (v.max(1) as u64).next_power_of_two() as i64
}

pub(crate) fn param_str<'a>(params: &'a Value, key: &str) -> Result<&'a str> {
    params.get(key).and_then(Value::as_str).with_context(|| format!("missing or non-string parameter {key:?}"))
}

pub(crate) fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

pub(crate) fn grid_of(extents: &[i64], tile: &[i64]) -> Result<[u32; 3]> {
    let mut g = [1u32; 3];
    for (i, (&e, &t)) in extents.iter().zip(tile).enumerate() {
        let n = ceil_div(e, t);
        // cuTile grids: each dimension below 2^24 (docs/toolchains.md 1.6).
        ensure!(n < (1 << 24), "grid dimension {i} = {n} exceeds the Tile IR limit 2^24-1");
        g[i] = n as u32;
    }
    Ok(g)
}

/// vector_add tile: the largest of 4096/2048/1024 elements that still gives at least
/// four tile blocks per SM (`sms` SMs), else 1024.
pub fn vector_add_tile(n: i64, sms: i64) -> i64 {
    for t in [4096, 2048] {
        if ceil_div(n, t) >= 4 * sms {
            return t;
        }
    }
    1024
}

/// rms_norm tiles `(BM, BN)`: `BN` is the row length rounded up to a power of two (at
/// least 16), so one tile block owns whole rows; `BM` rows per block, a power of two
/// with `BM * BN <= 8192` elements, lowered until there is at least one tile block per
/// SM (`sms` SMs) or `BM` is 1.
///
/// Measured on an H200 (tools/gpu_check.py --time over BM in 1..16 and occupancy
/// none/2/4, docs/cutile-rust.md): 8192-element tiles with an occupancy hint of 4 were
/// the fastest or within a few percent for the smoke shapes; without the hint tileiras
/// schedules too few CTAs per SM and the kernel runs up to 2.5x slower.
pub fn rms_norm_tiles(m: i64, n: i64, sms: i64) -> (i64, i64) {
    let bn = (n as u64).next_power_of_two().max(16) as i64;
    let mut bm = (8192 / bn).max(1);
    while bm > 1 && ceil_div(m, bm) < sms {
        bm /= 2;
    }
    (bm, bn)
}

/// rms_norm occupancy hint (CTAs per SM): 4 for tiles up to 8192 elements, 2 above.
pub fn rms_norm_occupancy(bm: i64, bn: i64) -> i32 {
    if bm * bn <= 8192 {
        4
    } else {
        2
    }
}

/// The plan for one configuration, `Ok(None)` when the operator is not one of
/// [`OPERATORS`], an error when the operator is but the configuration is out of range.
pub fn plan(op: &str, params: &Value, t: &Target) -> Result<Option<Plan>> {
    plan_with(op, params, Overrides::default(), t)
}

/// [`plan`] with tuning overrides.
pub fn plan_with(op: &str, params: &Value, o: Overrides, t: &Target) -> Result<Option<Plan>> {
    if crate::gemm::plan::OPERATORS.contains(&op) {
        return crate::gemm::plan::plan(op, params, o, t);
    }
    if crate::attn::plan::OPERATORS.contains(&op) {
        return crate::attn::plan::plan(op, params, o, t);
    }
    if crate::gdr::plan::OPERATORS.contains(&op) {
        return crate::gdr::plan::plan(op, params, o, t);
    }
    if crate::moe::plan::OPERATORS.contains(&op) {
        return crate::moe::plan::plan(op, params, o, t);
    }
    let mut p = match op {
        "vector_add" => plan_vector_add(params, o, t)?,
        "rms_norm" => plan_rms_norm(params, o, t)?,
        "layer_norm_legacy" => plan_layer_norm(params, o, t)?,
        "softmax" => plan_softmax(params, o, t)?,
        "rope" => plan_rope(params, o)?,
        "silu_and_mul" => plan_silu_and_mul(params, o, t)?,
        "swiglu" => plan_swiglu(params, o, t)?,
        "dropout" => plan_dropout(params, o)?,
        _ => return Ok(None),
    };
    if let Some(occ) = o.occupancy {
        p.occupancy = (occ != 0).then_some(occ);
    }
    match p.occupancy {
        Some(occ) => {
            ensure!((1..=32).contains(&occ), "occupancy must be 1..=32 (0: no hint), got {occ}");
            p.tuning.insert("occupancy".into(), json!(occ));
            p.stem = format!("{}_occ{occ}", p.stem);
            p.variant = format!("{}_occ{occ}", p.variant);
        }
        None => {
            p.tuning.insert("occupancy".into(), json!("none"));
            p.variant = format!("{}_nohint", p.variant);
        }
    }
    if let Some(w) = o.worker_warps {
        p.worker_warps = Some(w);
    }
    if let Some(w) = p.worker_warps {
        // tileiras 13.4 accepts 4 and 8 (docs/cutile-rust.md).
        ensure!(w == 4 || w == 8, "worker_warps must be 4 or 8, got {w}");
        p.tuning.insert("worker_warps".into(), json!(w));
        p.stem = format!("{}_w{w}", p.stem);
        p.variant = format!("{}_w{w}", p.variant);
    }
    Ok(Some(p))
}

/// The candidate plans of one configuration: what an autotuner would try, timed on the GPU by
/// one call (docs/cutile-rust.md, "Tuning variants"); the manifest lists them as the
/// configuration's `variants`.
#[derive(Clone, Debug)]
pub struct Candidates {
    /// The heuristic's plan first (the default), then the alternatives, no two of one name.
    pub plans: Vec<Plan>,
}

impl Candidates {
    pub fn find(&self, variant: &str) -> Option<&Plan> {
        self.plans.iter().find(|p| p.variant == variant)
    }
    pub fn names(&self) -> Vec<&str> {
        self.plans.iter().map(|p| p.variant.as_str()).collect()
    }
}

/// [`plan_with`] and, without overrides (they pin the plan), the operator's alternatives
/// ([`alternatives`]) that apply to this configuration. `Ok(None)` as [`plan`].
pub fn candidates(op: &str, params: &Value, o: Overrides, t: &Target) -> Result<Option<Candidates>> {
    if crate::gemm::plan::OPERATORS.contains(&op) {
        return crate::gemm::plan::candidates(op, params, o, t);
    }
    if crate::attn::plan::OPERATORS.contains(&op) {
        return crate::attn::plan::candidates(op, params, o, t);
    }
    if crate::gdr::plan::OPERATORS.contains(&op) {
        return crate::gdr::plan::candidates(op, params, o, t);
    }
    if crate::moe::plan::OPERATORS.contains(&op) {
        return crate::moe::plan::candidates(op, params, o, t);
    }
    let Some(first) = plan_with(op, params, o, t)? else { return Ok(None) };
    let mut plans = vec![first];
    if o == Overrides::default() {
        for alt in alternatives(op, params, t) {
            // An alternative outside the kernel's range for this shape is no candidate.
            if let Ok(Some(p)) = plan_with(op, params, alt, t) {
                if plans.iter().all(|q| q.variant != p.variant) {
                    plans.push(p);
                }
            }
        }
    }
    Ok(Some(Candidates { plans }))
}

fn knobs(block_rows: Option<i64>, tile: Option<i64>, occupancy: i32) -> Overrides {
    Overrides { block_rows, tile, occupancy: Some(occupancy), ..Default::default() }
}

/// Per operator, the plans worth timing beside the heuristic's where the best one cannot be
/// known without the GPU (docs/cutile-rust.md, "Tuning variants"); empty where the heuristic
/// has been measured to be at the front (rms_norm, layer_norm, swiglu, vector_add). Each
/// alternative names all its knobs, so a variant name means the same plan in every
/// configuration.
pub fn alternatives(op: &str, params: &Value, t: &Target) -> Vec<Overrides> {
    let int = |k: &str| params.get(k).and_then(Value::as_i64).filter(|&v| v > 0);
    match op {
        // tilegym autotunes its rope over occupancy 1, 7, 9, 12; f32 arithmetic needs about
        // 90 registers (at occupancy 8 it spills), so it gets occupancy 4. Two positions per
        // block stage the tiles through shared memory: no candidate.
        "rope" => {
            let io = |occ| Overrides { compute: Some(Compute::Io), ..knobs(Some(1), None, occ) };
            let f32 = |occ| Overrides { compute: Some(Compute::F32), ..knobs(Some(1), None, occ) };
            vec![io(7), io(12), io(4), f32(4)]
        }
        // tilegym's own shape (one row per block, the whole row, no hint: 216 registers for
        // 8192 fp16 columns here, 85 in tilegym), the same with occupancy 4 (tileiras then fits
        // 128 registers without spilling), the default tiles at other occupancies and with 8
        // worker warps (tilegym sets 8 for rows over 2 KB when it autotunes), and the earlier
        // plan (4096 elements a half-tile whatever the element size).
        "silu_and_mul" => {
            let (Some(h), Some(rows)) = (int("hidden_size"), int("batch").zip(int("seq_len")).map(|(b, s)| b * s)) else {
                return vec![];
            };
            let row = silu_and_mul_row_tile(params);
            let mut v = vec![knobs(Some(1), row, 0), knobs(Some(1), row, 4)];
            let bytes = params.get("dtype").and_then(Value::as_str).and_then(|d| element_type(d).ok()).map_or(4, |e| e.1);
            if let Ok((br, bh)) = silu_and_mul_tiles(rows, h, bytes, t.sm_count, Overrides::default()) {
                v.extend([2, 6, 8].map(|occ| knobs(Some(br), Some(bh), occ)));
                if bytes == 4 {
                    // 8 worker warps spill 32-40 bytes in fp16 (64 registers a thread).
                    v.push(Overrides { worker_warps: Some(8), ..knobs(Some(br), Some(bh), 4) });
                }
            }
            let bh = pow2_ceil(h).clamp(16, 1024);
            v.push(knobs(Some((4096 / bh).max(1)), Some(bh), 4));
            if silu_row_kernel(h, bytes, Overrides::default()) {
                // The row kernel (the 16-bit default) at occupancy 4, and the tiled view
                // kernel's earlier default (byte-sized tiles, occupancy 4).
                v.push(Overrides { occupancy: Some(4), ..Default::default() });
                if let Ok((br, bh)) = silu_and_mul_tiles(rows, h, bytes, t.sm_count, Overrides::default()) {
                    v.push(knobs(Some(br), Some(bh), 4));
                }
            }
            v
        }
        "dropout" => vec![
            knobs(None, Some(1024), 16),
            knobs(None, Some(1024), 8),
            knobs(None, Some(2048), 0),
            knobs(None, Some(4096), 0),
            knobs(None, Some(4096), 4),
        ],
        // tilegym's softmax schedules take occupancy 2..8 (TMA) and worker warps (gather).
        // Here a higher occupancy than the default's spills (8192-element tiles at
        // occupancy 8: 272 bytes of stack; 16384 at 4: 440), so the candidates are lower
        // occupancies (more registers), 4 worker warps, and half or twice the rows.
        "softmax" => {
            let (Some(m), Some(n)) = (int("m"), int("n")) else { return vec![] };
            let (bm, bn) = row_tiles(m, n, t.sm_count);
            let default_occ = rms_norm_occupancy(bm, bn);
            let mut v: Vec<Overrides> = [1, 2]
                .into_iter()
                .filter(|&o| o < default_occ)
                .map(|o| Overrides { occupancy: Some(o), ..Default::default() })
                .collect();
            v.push(Overrides { worker_warps: Some(4), ..Default::default() });
            if bm > 1 {
                v.push(Overrides { block_rows: Some(bm / 2), occupancy: Some(rms_norm_occupancy(bm / 2, bn)), ..Default::default() });
            }
            if 2 * bm * bn <= ROW_MAX_BN {
                v.push(Overrides { block_rows: Some(2 * bm), occupancy: Some(rms_norm_occupancy(2 * bm, bn)), ..Default::default() });
            }
            let bytes = params.get("dtype").and_then(Value::as_str).and_then(|d| element_type(d).ok()).map_or(4, |e| e.1);
            if softmax_row_kernel(params, bytes, Overrides::default()) {
                // The row kernel is the default here: the tiled kernel's earlier default stays
                // a variant (the occupancy and worker-warp knobs above apply to the row kernel).
                v.push(Overrides { block_rows: Some(bm), occupancy: Some(default_occ), ..Default::default() });
            }
            v
        }
        _ => vec![],
    }
}

fn check_pow2(what: &str, v: i64) -> Result<i64> {
    ensure!(v > 0 && (v & (v - 1)) == 0, "{what} must be a power of two, got {v}");
    Ok(v)
}

pub(crate) fn tensor_arg(t: &TensorLayout, partition: Option<Vec<i64>>) -> KernelArg {
    KernelArg::Tensor { name: t.name.clone(), strides: t.strides.clone(), partition }
}

fn view_arg(t: &TensorLayout, partition: Option<Vec<i64>>) -> KernelArg {
    view_arg_at(t, 0, partition)
}

/// [`view_arg`] of a view that starts `offset` elements into the tensor.
pub(crate) fn view_arg_at(t: &TensorLayout, offset: i64, partition: Option<Vec<i64>>) -> KernelArg {
    KernelArg::View { name: t.name.clone(), offset, shape: t.shape.clone(), strides: t.strides.clone(), partition }
}

fn spec_json(t: &TensorLayout) -> Value {
    let s = t.spec();
    json!({
        "shape_div": s.shape_div.iter().map(|h| h.divisor).collect::<Vec<_>>(),
        "stride_div": s.stride_div.iter().map(|h| h.divisor).collect::<Vec<_>>(),
        "static_strides": t.static_strides(),
        "base_addr_div": s.base_ptr_div.divisor,
    })
}

pub(crate) fn specialization_json(tensors: &[TensorLayout]) -> Value {
    Value::Object(tensors.iter().map(|t| (t.name.clone(), spec_json(t))).collect())
}

fn plan_vector_add(params: &Value, o: Overrides, t: &Target) -> Result<Plan> {
    let n = param_i64(params, "n")?;
    let dtype = param_str(params, "dtype")?;
    ensure!(dtype == "float32", "vector_add supports float32 only, got {dtype:?}");
    let (elem, bytes) = element_type(dtype)?;
    let tile = match o.tile {
        Some(v) => check_pow2("tile", v)?,
        None => vector_add_tile(n, t.sm_count),
    };
    let tensors: Vec<TensorLayout> =
        ["x", "y", "out"].iter().map(|name| TensorLayout::contiguous(name, &[n], bytes)).collect();
    let args =
        vec![tensor_arg(&tensors[0], None), tensor_arg(&tensors[1], None), tensor_arg(&tensors[2], Some(vec![tile]))];
    let mut tuning = Map::new();
    tuning.insert("tile".into(), json!(tile));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "vector_add",
        elem,
        generics: vec![elem.to_string(), tile.to_string()],
        grid: grid_of(&[n], &[tile])?,
        stem: format!("vector_add_{elem}_t{tile}"),
        variant: format!("t{tile}"),
        occupancy: None,
        worker_warps: None,
        extra_launches: Vec::new(),
        tensors,
        args,
        tuning,
    })
}

fn plan_rms_norm(params: &Value, o: Overrides, t: &Target) -> Result<Plan> {
    let m = param_i64(params, "m")?;
    let n = param_i64(params, "n")?;
    ensure!(m.checked_mul(n).is_some_and(|e| e <= i32::MAX as i64), "m*n = {m}*{n} exceeds i32 indexing");
    let dtype = param_str(params, "dtype")?;
    let (elem, bytes) = element_type(dtype)?;
    let eps = param_f64_or(params, "eps", RMS_NORM_EPS)?;
    let offset = param_f64_or(params, "offset", 0.0)?;
    // TileGym's `mode` (static_persistent, multi_wave_reload) picks an upstream schedule;
    // the math is the same and this port has one schedule: recorded, not interpreted.
    let mode = params.get("mode").and_then(Value::as_str).map(str::to_string);
    let tensors = vec![
        TensorLayout::contiguous("x", &[m, n], bytes),
        TensorLayout::contiguous("w", &[n], bytes),
        TensorLayout::contiguous("y", &[m, n], bytes),
    ];
    let (looping, bm, bn) = norm_tiles(m, n, o, t)?;
    let scalars = [
        KernelArg::Scalar { name: "eps".into(), ty: ScalarType::F32, value: LitValue::Float(eps) },
        KernelArg::Scalar { name: "offset".into(), ty: ScalarType::F32, value: LitValue::Float(offset) },
    ];
    let y_partition = if looping { None } else { Some(vec![bm, bn]) };
    let mut args = vec![tensor_arg(&tensors[0], None), tensor_arg(&tensors[1], None), tensor_arg(&tensors[2], y_partition)];
    args.extend(scalars);
    let kernel = if looping { "rms_norm_loop" } else { "rms_norm" };
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!(kernel));
    tuning.insert("block_rows".into(), json!(bm));
    tuning.insert("block_cols".into(), json!(bn));
    if looping {
        tuning.insert("col_chunks".into(), json!(ceil_div(n, bn)));
    }
    tuning.insert("eps".into(), json!(eps));
    tuning.insert("offset".into(), json!(offset));
    if let Some(mode) = mode {
        tuning.insert("mode".into(), json!(mode));
    }
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel,
        elem,
        generics: vec![elem.to_string(), bm.to_string(), bn.to_string()],
        grid: grid_of(&[m], &[bm])?,
        stem: format!("{kernel}_{elem}_bm{bm}_bn{bn}"),
        variant: format!("r{bm}_t{bn}"),
        occupancy: Some(if looping { 4 } else { rms_norm_occupancy(bm, bn) }),
        worker_warps: None,
        extra_launches: Vec::new(),
        tensors,
        args,
        tuning,
    })
}

/// `(looping, BM, BN)` of rms_norm and layer_norm: rows up to [`NORM_MAX_BN`] in one tile as
/// [`rms_norm_tiles`], wider ones walked in [`NORM_LOOP_BN`]-column chunks by one row per block;
/// a `tile` override asks for the looping kernel with that chunk, `block_rows` sets `BM`.
fn norm_tiles(m: i64, n: i64, o: Overrides, t: &Target) -> Result<(bool, i64, i64)> {
    let looping = pow2_ceil(n).max(16) > NORM_MAX_BN || o.tile.is_some();
    let (mut bm, bn) = match (looping, o.tile) {
        (true, Some(t)) => (1, check_pow2("tile", t)?),
        (true, None) => (1, NORM_LOOP_BN),
        (false, _) => rms_norm_tiles(m, n, t.sm_count),
    };
    if let Some(r) = o.block_rows {
        bm = check_pow2("block_rows", r)?;
    }
    Ok((looping, bm, bn))
}

/// Tiles `(BM, BN)` of the one-tile-per-row kernels (layer_norm, softmax): as
/// [`rms_norm_tiles`], `BN` the row rounded up to a power of two, `BM * BN <= 8192`.
pub fn row_tiles(m: i64, n: i64, sms: i64) -> (i64, i64) {
    rms_norm_tiles(m, n, sms)
}

fn plan_layer_norm(params: &Value, o: Overrides, t: &Target) -> Result<Plan> {
    let m = param_i64(params, "m")?;
    let n = param_i64(params, "n")?;
    ensure!(m.checked_mul(n).is_some_and(|e| e <= i32::MAX as i64), "m*n = {m}*{n} exceeds i32 indexing");
    let (elem, bytes) = element_type(param_str(params, "dtype")?)?;
    let variant = param_str_or(params, "variant", "layer_norm_legacy")?;
    ensure!(
        variant == "layer_norm_legacy" || variant == "persistent_layer_norm",
        "variant must be layer_norm_legacy or persistent_layer_norm, not {variant:?}"
    );
    let persistent = variant == "persistent_layer_norm";
    let eps = param_f64_or(params, "eps", if persistent { 1e-6 } else { 1e-5 })?;
    let shift = param_f64_or(params, "weight_shift", 0.0)?;
    let (looping, mut bm, bn) = norm_tiles(m, n, o, t)?;
    // Only where the rows divide evenly: the looping kernels store without bounds checks.
    if looping && o.block_rows.is_none() && m % LAYER_NORM_LOOP_BM == 0 {
        bm = LAYER_NORM_LOOP_BM;
    }
    let mut tensors = vec![
        TensorLayout::contiguous("x", &[m, n], bytes),
        TensorLayout::contiguous("w", &[n], bytes),
        TensorLayout::contiguous("b", &[n], bytes),
        TensorLayout::contiguous("y", &[m, n], bytes),
    ];
    let mut args: Vec<KernelArg> = tensors.iter().take(3).map(|t| tensor_arg(t, None)).collect();
    args.push(tensor_arg(&tensors[3], if looping { None } else { Some(vec![bm, bn]) }));
    if persistent {
        for name in ["mean", "rstd"] {
            let t = TensorLayout::contiguous(name, &[m], 4);
            args.push(tensor_arg(&t, Some(vec![bm])));
            tensors.push(t);
        }
    }
    args.push(KernelArg::Scalar { name: "eps".into(), ty: ScalarType::F32, value: LitValue::Float(eps) });
    args.push(KernelArg::Scalar { name: "shift".into(), ty: ScalarType::F32, value: LitValue::Float(shift) });
    if looping {
        args.push(KernelArg::Scalar { name: "chunk".into(), ty: ScalarType::I32, value: LitValue::Int(bn) });
    }
    let kernel = match (persistent, looping) {
        (false, false) => "layer_norm",
        (true, false) => "layer_norm_stats",
        (false, true) => "layer_norm_loop",
        (true, true) => "layer_norm_stats_loop",
    };
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!(kernel));
    tuning.insert("variant".into(), json!(variant));
    tuning.insert("block_rows".into(), json!(bm));
    tuning.insert("block_cols".into(), json!(bn));
    tuning.insert("eps".into(), json!(eps));
    tuning.insert("weight_shift".into(), json!(shift));
    if looping {
        tuning.insert("col_chunks".into(), json!(ceil_div(n, bn)));
        tuning.insert("reads_of_x".into(), json!(2));
    }
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel,
        elem,
        generics: vec![elem.to_string(), bm.to_string(), bn.to_string()],
        grid: grid_of(&[m], &[bm])?,
        stem: format!("{kernel}_{elem}_bm{bm}_bn{bn}"),
        variant: format!("r{bm}_t{bn}"),
        occupancy: Some(if looping { 4 } else { rms_norm_occupancy(bm, bn) }),
        worker_warps: None,
        extra_launches: Vec::new(),
        tensors,
        args,
        tuning,
    })
}

/// Whether softmax takes the row kernel (`softmax_row`, tilegym's multi-wave shape: one row
/// per block, a 1-D masked pointer load, no occupancy hint): the default of the 16-bit
/// `use_multi_wave` configurations, unless `block_rows` asks for the tiled kernel. There the
/// tiled kernel ran at 0.62-0.74 of tilegym; fp32 and the other schedules keep it.
fn softmax_row_kernel(params: &Value, bytes: i32, o: Overrides) -> bool {
    bytes == 2 && o.block_rows.is_none() && params.get("variant").and_then(Value::as_str) == Some("use_multi_wave")
}

fn plan_softmax_row(m: i64, n: i64, elem: &'static str, bytes: i32) -> Result<Plan> {
    let bn = pow2_ceil(n).max(16);
    let tensors = vec![TensorLayout::contiguous("x", &[m, n], bytes), TensorLayout::contiguous("y", &[m, n], bytes)];
    let args = vec![
        KernelArg::RawPtr { name: "x".into(), tensor: "x".into() },
        KernelArg::RawPtr { name: "y".into(), tensor: "y".into() },
    ];
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("softmax_row"));
    tuning.insert("variant".into(), json!("use_multi_wave"));
    tuning.insert("block_rows".into(), json!(1));
    tuning.insert("block_cols".into(), json!(bn));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "softmax_row",
        elem,
        generics: vec![elem.to_string(), bn.to_string(), n.to_string()],
        grid: grid_of(&[m], &[1])?,
        stem: format!("softmax_row_{elem}_bn{bn}_n{n}"),
        variant: "row".into(),
        // No hint, as tilegym's multi-wave kernel.
        occupancy: None,
        worker_warps: None,
        extra_launches: Vec::new(),
        tensors,
        args,
        tuning,
    })
}

fn plan_softmax(params: &Value, o: Overrides, t: &Target) -> Result<Plan> {
    let m = param_i64(params, "m")?;
    let n = param_i64(params, "n")?;
    ensure!(m.checked_mul(n).is_some_and(|e| e <= i32::MAX as i64), "m*n = {m}*{n} exceeds i32 indexing");
    let (elem, bytes) = element_type(param_str(params, "dtype")?)?;
    let (mut bm, bn) = row_tiles(m, n, t.sm_count);
    ensure!(bn <= ROW_MAX_BN, "softmax keeps a row in one tile; n = {n} exceeds {ROW_MAX_BN}");
    if softmax_row_kernel(params, bytes, o) {
        return plan_softmax_row(m, n, elem, bytes);
    }
    if let Some(r) = o.block_rows {
        bm = check_pow2("block_rows", r)?;
    }
    let tensors = vec![TensorLayout::contiguous("x", &[m, n], bytes), TensorLayout::contiguous("y", &[m, n], bytes)];
    let args = vec![tensor_arg(&tensors[0], None), tensor_arg(&tensors[1], Some(vec![bm, bn]))];
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("softmax"));
    if let Some(v) = params.get("variant").and_then(Value::as_str) {
        // baseline / use_tma / use_chunked / use_multi_wave: upstream schedules, same math.
        tuning.insert("variant".into(), json!(v));
    }
    tuning.insert("block_rows".into(), json!(bm));
    tuning.insert("block_cols".into(), json!(bn));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "softmax",
        elem,
        generics: vec![elem.to_string(), bm.to_string(), bn.to_string()],
        grid: grid_of(&[m], &[bm])?,
        stem: format!("softmax_{elem}_bm{bm}_bn{bn}"),
        variant: format!("r{bm}"),
        occupancy: Some(rms_norm_occupancy(bm, bn)),
        worker_warps: None,
        extra_launches: Vec::new(),
        tensors,
        args,
        tuning,
    })
}

/// rope's default: one position per block (`BS = 1`, grid `(S, B)`), all heads of q and k,
/// arithmetic in the element type, occupancy hint 9: tilegym's choice (`_rope_kernel`, one
/// block per (batch, position), `occupancy=9` without autotuning). Measured on the H200 with
/// the earlier plan (`BS` positions so a half-tile held 4096 elements, f32 arithmetic,
/// occupancy 4): 128 registers and 50 KB of shared memory per block, 16.1 ms against tilegym's
/// 4.4 ms on the largest configuration (docs/cutile-rust.md, "Against tilegym").
pub const ROPE_BLOCK_SEQ: i64 = 1;
pub const ROPE_OCCUPANCY: i32 = 9;

fn plan_rope(params: &Value, o: Overrides) -> Result<Plan> {
    let b = param_i64(params, "bsz")?;
    let s = param_i64(params, "seq_len")?;
    let hq = param_i64(params, "num_q_heads")?;
    let hkv = param_i64(params, "num_kv_heads")?;
    let d = param_i64(params, "head_dim")?;
    let (elem, bytes) = element_type(param_str(params, "dtype")?)?;
    let prf = param_f64_or(params, "partial_rotary_factor", 1.0)?;
    let rd = (d as f64 * prf) as i64; // C++ static_cast<int64_t>: truncation
    ensure!(rd > 0 && rd <= d && rd % 2 == 0, "rope_dim = {rd} must be even and in (0, head_dim]");
    let half = rd / 2;
    ensure!(half & (half - 1) == 0, "rope rotates halves as whole tiles; rope_dim/2 = {half} is not a power of two");
    // cutile-rs 0.5.0 passes shapes and strides as i32: a view's largest element offset must
    // fit, so one launch covers at most 2^31 elements of q and of k (tilegym's seq_len 65536 with
    // 32 heads of 128; the H200 check of those compares every element with fp64). Larger
    // tensors are covered by several launches over groups of `nb` batches, each seeing its
    // group as a view that starts inside the tensors (manifest `ptr` offsets).
    let fits = |nb: i64| {
        [hq, hkv].iter().all(|&h| {
            nb.checked_mul(s).and_then(|v| v.checked_mul(h)).and_then(|v| v.checked_mul(d)).is_some_and(|e| e - 1 <= i32::MAX as i64)
        })
    };
    let nb = (1..=b).rev().find(|&nb| b % nb == 0 && fits(nb));
    let nb = nb.context("one batch of q or k exceeds i32 offsets (cutile-rs shapes and strides are i32)")?;
    let bs = match o.block_rows {
        Some(r) => check_pow2("block_rows", r)?,
        None => ROPE_BLOCK_SEQ,
    };
    let compute = o.compute.unwrap_or(Compute::Io);
    let celem = match compute {
        Compute::F32 => "f32",
        Compute::Io => elem,
    };
    let (hq_t, hk_t) = (pow2_ceil(hq), pow2_ceil(hkv));
    // q, k: [B, H, S, D] views of [B, S, H, D] storage (reference/src/ops/rope.cpp); with batch
    // groups, the [nb, ...] part of each tensor that one launch sees.
    let tensors = vec![
        TensorLayout::strided("q", &[nb, hq, s, d], &[s * hq * d, d, hq * d, 1], bytes),
        TensorLayout::strided("k", &[nb, hkv, s, d], &[s * hkv * d, d, hkv * d, 1], bytes),
        TensorLayout::contiguous("cos", &[nb, s, rd], bytes),
        TensorLayout::contiguous("sin", &[nb, s, rd], bytes),
    ];
    let group_args = |g: i64| -> Vec<KernelArg> {
        // Group g starts g*nb batches in: batch stride times that, per tensor.
        tensors.iter().map(|t| view_arg_at(t, g * nb * t.strides[0], None)).collect()
    };
    let (args, extra_launches): (Vec<KernelArg>, Vec<LaunchArgs>) = if nb == b {
        (tensors.iter().map(|t| tensor_arg(t, None)).collect(), Vec::new())
    } else {
        let grid = grid_of(&[s, nb], &[bs, 1])?;
        (group_args(0), (1..b / nb).map(|g| LaunchArgs { grid, args: group_args(g) }).collect())
    };
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("rope"));
    tuning.insert("block_seq".into(), json!(bs));
    tuning.insert("q_heads_tile".into(), json!(hq_t));
    tuning.insert("kv_heads_tile".into(), json!(hk_t));
    tuning.insert("rope_dim".into(), json!(rd));
    tuning.insert("compute".into(), json!(celem));
    tuning.insert("in_place".into(), json!("q and k are read and written only on their first rope_dim columns"));
    tuning.insert("cos_sin_read".into(), json!("the first half of rope_dim, for both halves (HF tables repeat it; as tilegym)"));
    if nb != b {
        tuning.insert("batch_groups".into(), json!({"launches": b / nb, "batches_per_launch": nb,
            "why": "one launch's largest element offset must fit i32 (cutile-rs shapes and strides are i32)"}));
    }
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "rope",
        elem,
        generics: vec![elem.to_string(), celem.to_string(), hq_t.to_string(), hk_t.to_string(), bs.to_string(), half.to_string()],
        grid: grid_of(&[s, nb], &[bs, 1])?,
        stem: format!("rope_{elem}_c{celem}_hq{hq_t}_hk{hk_t}_bs{bs}_h{half}"),
        variant: format!("s{bs}_{}", compute.name()),
        occupancy: Some(ROPE_OCCUPANCY),
        worker_warps: None,
        extra_launches,
        tensors,
        args,
        tuning,
    })
}

/// The widest column tile of silu_and_mul's row-per-block variants: a whole row of each half
/// up to 8192 elements (tilegym's 8192-wide fp32 rows take 70 registers).
pub const SILU_MAX_BH: i64 = 8192;

/// Bytes of one silu_and_mul half-tile (gate or up) in the default plan.
pub const SILU_HALF_TILE_BYTES: i64 = 16384;

/// The row-per-block column tile (tilegym's shape): `H` rounded up to a power of two (at
/// least 16), at most [`SILU_MAX_BH`]; `None` when the suite lacks `hidden_size`.
fn silu_and_mul_row_tile(params: &Value) -> Option<i64> {
    params.get("hidden_size").and_then(Value::as_i64).filter(|&h| h > 0).map(|h| pow2_ceil(h).clamp(16, SILU_MAX_BH))
}

/// silu_and_mul tiles `(BR, BH)`: half-tiles of [`SILU_HALF_TILE_BYTES`] whatever the element
/// size, `BH` = H rounded up to a power of two, at most 4 KB of columns (1024 fp32, 2048
/// fp16/bf16), `BR` the rows that fill the half-tile, lowered while there are fewer than four
/// blocks per SM. In fp32 this is the earlier plan (1024 columns, 4 rows), at 0.99 of
/// tilegym's speed on the H200; that plan's fp16 kept 4096 *elements* (8 KB) a half-tile with
/// the same 128 registers and occupancy 4, so half the bytes in flight per SM, and ran at 0.51:
/// the tile is now sized in bytes. `tile` and `block_rows` override `BH` and `BR`.
pub fn silu_and_mul_tiles(rows: i64, h: i64, bytes: i32, sms: i64, o: Overrides) -> Result<(i64, i64)> {
    let bh = match o.tile {
        Some(t) => check_pow2("tile", t)?,
        None => pow2_ceil(h).clamp(16, 4096 / bytes as i64),
    };
    let br = match o.block_rows {
        Some(r) => check_pow2("block_rows", r)?,
        None => {
            let mut br = (SILU_HALF_TILE_BYTES / bytes as i64 / bh).max(1);
            while br > 1 && ceil_div(rows, br) * ceil_div(h, bh) < 4 * sms {
                br /= 2;
            }
            br
        }
    };
    Ok((br, bh))
}

/// Whether silu_and_mul takes the row kernel (`silu_and_mul_row`, tilegym's shape: one row
/// per block, the whole row of each half as a 1-D masked pointer load, no occupancy hint):
/// the 16-bit default for rows up to [`SILU_MAX_BH`] columns, unless `tile` or `block_rows`
/// asks for the tiled view kernel. fp32 keeps the tiled kernel (at parity with tilegym).
fn silu_row_kernel(h: i64, bytes: i32, o: Overrides) -> bool {
    bytes == 2 && o.tile.is_none() && o.block_rows.is_none() && pow2_ceil(h) <= SILU_MAX_BH
}

fn plan_silu_and_mul_row(rows: i64, h: i64, elem: &'static str, bytes: i32) -> Result<Plan> {
    let bh = pow2_ceil(h).max(16);
    ensure!(h <= i32::MAX as i64, "hidden_size exceeds i32");
    let xv = TensorLayout::contiguous("x", &[rows, 2, h], bytes);
    let yv = TensorLayout::contiguous("y", &[rows, h], bytes);
    let args = vec![
        KernelArg::RawPtr { name: "x".into(), tensor: "x".into() },
        KernelArg::RawPtr { name: "y".into(), tensor: "y".into() },
    ];
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("silu_and_mul_row"));
    tuning.insert("block_rows".into(), json!(1));
    tuning.insert("block_cols".into(), json!(bh));
    let tensors = vec![xv, yv];
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "silu_and_mul_row",
        elem,
        generics: vec![elem.to_string(), bh.to_string(), h.to_string()],
        grid: grid_of(&[rows], &[1])?,
        stem: format!("silu_and_mul_row_{elem}_bh{bh}_h{h}"),
        variant: format!("row_t{bh}"),
        // No hint, as tilegym: tileiras gives the rows 24-96 registers (tilegym 20-85).
        occupancy: None,
        worker_warps: None,
        extra_launches: Vec::new(),
        tensors,
        args,
        tuning,
    })
}

fn plan_silu_and_mul(params: &Value, o: Overrides, t: &Target) -> Result<Plan> {
    let b = param_i64(params, "batch")?;
    let s = param_i64(params, "seq_len")?;
    let h = param_i64(params, "hidden_size")?;
    ensure!(param_int_or(params, "input_last_dim", 2 * h)? == 2 * h, "input_last_dim must be 2 * hidden_size");
    let (elem, bytes) = element_type(param_str(params, "dtype")?)?;
    let rows = b * s;
    ensure!(rows.checked_mul(2 * h).is_some_and(|e| e <= i32::MAX as i64), "x exceeds i32 indexing");
    if silu_row_kernel(h, bytes, o) {
        return plan_silu_and_mul_row(rows, h, elem, bytes);
    }
    let (br, bh) = silu_and_mul_tiles(rows, h, bytes, t.sm_count, o)?;
    // x [B, S, 2H] seen as [B*S, 2, H] (gate, up); y [B, S, H] as [B*S, H].
    let xv = TensorLayout::contiguous("x", &[rows, 2, h], bytes);
    let yv = TensorLayout::contiguous("y", &[rows, h], bytes);
    let args = vec![view_arg(&xv, None), view_arg(&yv, Some(vec![br, bh]))];
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("silu_and_mul"));
    tuning.insert("block_rows".into(), json!(br));
    tuning.insert("block_cols".into(), json!(bh));
    tuning.insert("views".into(), json!({"x": [rows, 2, h], "y": [rows, h]}));
    let tensors = vec![xv, yv];
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "silu_and_mul",
        elem,
        generics: vec![elem.to_string(), br.to_string(), bh.to_string()],
        grid: grid_of(&[rows, h], &[br, bh])?,
        stem: format!("silu_and_mul_{elem}_br{br}_bh{bh}"),
        variant: format!("r{br}_t{bh}"),
        occupancy: Some(4),
        worker_warps: None,
        extra_launches: Vec::new(),
        tensors,
        args,
        tuning,
    })
}

/// Tile of the 1-D elementwise kernels (swiglu, dropout): as [`vector_add_tile`].
pub fn elementwise_tile(n: i64, sms: i64) -> i64 {
    vector_add_tile(n, sms)
}

/// swiglu's tile: [`elementwise_tile`], halved down to 256 elements while there would be
/// fewer tile blocks than SMs; small problems are latency-bound, so spreading them over the
/// SMs is what counts (tilegym's only swiglu has 32768 elements). The cuTile Python reference
/// makes the same choice (`swiglu_tiles`).
pub fn swiglu_tile(n: i64, sms: i64) -> i64 {
    let mut t = elementwise_tile(n, sms);
    while t > 256 && ceil_div(n, t) < sms {
        t /= 2;
    }
    t
}

fn plan_swiglu(params: &Value, o: Overrides, t: &Target) -> Result<Plan> {
    let b = param_i64(params, "batch")?;
    let s = param_i64(params, "seq_len")?;
    let h = param_i64(params, "hidden_size")?;
    let (elem, bytes) = element_type(param_str(params, "dtype")?)?;
    let n = b.checked_mul(s).and_then(|v| v.checked_mul(h)).filter(|&n| n <= i32::MAX as i64);
    let n = n.context("a, b, c exceed i32 indexing")?;
    let tile = match o.tile {
        Some(v) => check_pow2("tile", v)?,
        None => swiglu_tile(n, t.sm_count),
    };
    // a, b, c [B, S, H] seen as flat [B*S*H].
    let tensors: Vec<TensorLayout> = ["a", "b", "c"].iter().map(|t| TensorLayout::contiguous(t, &[n], bytes)).collect();
    let args = vec![view_arg(&tensors[0], None), view_arg(&tensors[1], None), view_arg(&tensors[2], Some(vec![tile]))];
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("swiglu"));
    tuning.insert("tile".into(), json!(tile));
    tuning.insert("views".into(), json!({"a": [n], "b": [n], "c": [n]}));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "swiglu",
        elem,
        generics: vec![elem.to_string(), tile.to_string()],
        grid: grid_of(&[n], &[tile])?,
        stem: format!("swiglu_{elem}_t{tile}"),
        variant: format!("t{tile}"),
        occupancy: Some(4),
        worker_warps: None,
        extra_launches: Vec::new(),
        tensors,
        args,
        tuning,
    })
}

/// The i32 threshold of the dropout kernels: the largest `r` in `[0, 2^31-1]` with
/// `(r as f64) / 2147483647.0 <= p` (so `keep = r31 > threshold` is exactly
/// reference/src/ops/dropout.cpp's `cutile_uniform(i, seed) > p`); `-1` when every `r`
/// is kept.
pub fn dropout_threshold(p: f64) -> i64 {
    const D: f64 = 2147483647.0;
    let keep = |r: i64| (r as f64) / D > p;
    if keep(0) {
        return -1;
    }
    // fl(r / D) is monotone in r: binary search the last r that is not kept.
    let (mut lo, mut hi) = (0i64, 2147483647i64); // keep(lo) false
    if !keep(hi) {
        return hi;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if keep(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    lo
}

/// dropout's default: 1024-element tiles, no occupancy hint: tilegym's choice
/// (`_dropout_kernel`, `TILE_SIZE = 1024`, no hint). The earlier plan (4096-element tiles from
/// 2^22 elements, occupancy 4: 75-83 registers) ran at 0.91 of tilegym's speed on the H200.
pub const DROPOUT_TILE: i64 = 1024;

fn plan_dropout(params: &Value, o: Overrides) -> Result<Plan> {
    let m = param_i64(params, "m")?;
    let (elem, bytes) = element_type(param_str(params, "dtype")?)?;
    let p = param_f64_or(params, "p", 0.5)?;
    ensure!((0.0..1.0).contains(&p), "p must be in [0, 1), got {p}");
    let inplace = param_bool_or(params, "inplace", false)?;
    let training = param_bool_or(params, "training", true)?;
    let seed_raw = param_int_or(params, "rng_seed", 0)?;
    // static_cast<std::uint32_t>(integer): modulo 2^32; the kernel adds it as i32 bits.
    let seed = (seed_raw as u32) as i32;
    let (threshold, scale) = if training { (dropout_threshold(p), 1.0 / (1.0 - p)) } else { (-1, 1.0) };
    let tile = match o.tile {
        Some(v) => check_pow2("tile", v)?,
        None => DROPOUT_TILE,
    };
    let x = TensorLayout::contiguous("x", &[m], bytes);
    let mut tensors = vec![x.clone()];
    let mut args = if inplace {
        vec![tensor_arg(&x, Some(vec![tile]))]
    } else {
        let y = TensorLayout::contiguous("y", &[m], bytes);
        let a = vec![tensor_arg(&x, None), tensor_arg(&y, Some(vec![tile]))];
        tensors.push(y);
        a
    };
    args.push(KernelArg::Scalar { name: "seed".into(), ty: ScalarType::I32, value: LitValue::Int(seed as i64) });
    args.push(KernelArg::Scalar { name: "threshold".into(), ty: ScalarType::I32, value: LitValue::Int(threshold) });
    args.push(KernelArg::Scalar { name: "scale".into(), ty: ScalarType::F32, value: LitValue::Float(scale) });
    let kernel = if inplace { "dropout_inplace" } else { "dropout" };
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!(kernel));
    tuning.insert("tile".into(), json!(tile));
    tuning.insert(
        "rng".into(),
        json!({
            "generator": "cutile_uniform: r = u32(i)*1103515245 + seed; r ^= r>>16; r ^= r<<8; r ^= r>>4; keep = (r & 0x7fffffff) > threshold",
            "seed": seed_raw, "threshold": threshold, "scale": scale, "training": training,
        }),
    );
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel,
        elem,
        generics: vec![elem.to_string(), tile.to_string()],
        grid: grid_of(&[m], &[tile])?,
        stem: format!("{kernel}_{elem}_t{tile}"),
        variant: format!("t{tile}"),
        occupancy: None,
        worker_warps: None,
        extra_launches: Vec::new(),
        tensors,
        args,
        tuning,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::LazyLock;

    static H200: LazyLock<Target> = LazyLock::new(Target::h200);

    #[test]
    fn contiguous_strides() {
        let t = TensorLayout::contiguous("x", &[333, 768], 2);
        assert_eq!(t.strides, vec![768, 1]);
        assert_eq!(t.static_strides(), vec![-1, 1]);
        let s = t.spec();
        assert_eq!(s.shape_div.iter().map(|h| h.divisor).collect::<Vec<_>>(), vec![1, 16]);
        assert_eq!(s.stride_div.iter().map(|h| h.divisor).collect::<Vec<_>>(), vec![16, 1]);
        assert_eq!(s.base_ptr_div.divisor, 16);
        assert_eq!(s.stride_one, vec![false, true]);
    }

    #[test]
    fn vector_add_tiles_and_grid() {
        assert_eq!(vector_add_tile(1 << 20, 132), 1024);
        assert_eq!(vector_add_tile(1 << 26, 132), 4096);
        assert_eq!(vector_add_tile(1_000_003, 132), 1024);
        let p = plan("vector_add", &json!({"n": 1000003, "dtype": "float32"}), &H200).unwrap().unwrap();
        assert_eq!(p.grid, [977, 1, 1]);
        assert_eq!(p.generics, vec!["f32", "1024"]);
        assert_eq!(p.tuning["tile"], 1024);
        assert_eq!(p.tuning["specialization"]["x"]["shape_div"], json!([1]));
        let p = plan("vector_add", &json!({"n": 67108864, "dtype": "float32"}), &H200).unwrap().unwrap();
        assert_eq!(p.grid, [16384, 1, 1]);
        assert_eq!(p.tuning["specialization"]["out"]["shape_div"], json!([16]));
    }

    #[test]
    fn rms_norm_tiles_and_grid() {
        assert_eq!(rms_norm_tiles(4096, 1024, 132), (8, 1024));
        assert_eq!(rms_norm_tiles(4096, 4096, 132), (2, 4096));
        assert_eq!(rms_norm_tiles(2048, 2048, 132), (4, 2048));
        assert_eq!(rms_norm_tiles(333, 768, 132), (2, 1024));
        assert_eq!(rms_norm_tiles(7, 16384, 132), (1, 16384));
        assert_eq!(rms_norm_tiles(100, 3, 132), (1, 16));
        assert_eq!(rms_norm_occupancy(2, 4096), 4);
        assert_eq!(rms_norm_occupancy(1, 16384), 2);
        let p = plan("rms_norm", &json!({"m": 333, "n": 768, "dtype": "float16"}), &H200).unwrap().unwrap();
        assert_eq!(p.grid, [167, 1, 1]);
        assert_eq!(p.generics, vec!["f16", "2", "1024"]);
        assert_eq!(p.elem, "f16");
        assert_eq!(p.occupancy, Some(4));
        assert_eq!(p.tuning["occupancy"], 4);
        let p = plan("rms_norm", &json!({"m": 4096, "n": 1024, "dtype": "bfloat16"}), &H200).unwrap().unwrap();
        assert_eq!(p.grid, [512, 1, 1]);
        assert_eq!(p.stem, "rms_norm_bf16_bm8_bn1024_occ4");
    }

    #[test]
    fn overrides() {
        let params = json!({"m": 333, "n": 768, "dtype": "float16"});
        let o = Overrides { block_rows: Some(4), occupancy: Some(2), ..Default::default() };
        assert_eq!(plan("vector_add", &json!({"n": 64, "dtype": "float32"}), &H200).unwrap().unwrap().occupancy, None);
        let p = plan_with("rms_norm", &params, o, &H200).unwrap().unwrap();
        assert_eq!(p.grid, [84, 1, 1]);
        assert_eq!(p.occupancy, Some(2));
        assert_eq!(p.tuning["occupancy"], 2);
        assert_eq!(p.stem, "rms_norm_f16_bm4_bn1024_occ2");
        let bad = Overrides { block_rows: Some(3), ..Default::default() };
        assert!(plan_with("rms_norm", &params, bad, &H200).is_err());
        let t = Overrides { tile: Some(512), ..Default::default() };
        let p = plan_with("vector_add", &json!({"n": 4096, "dtype": "float32"}), t, &H200).unwrap().unwrap();
        assert_eq!((p.grid, p.tuning["tile"].clone()), ([8, 1, 1], json!(512)));
    }

    #[test]
    fn rejects_bad_configs() {
        assert!(plan("conv2d", &json!({"n": 4}), &H200).unwrap().is_none());
        assert!(plan("softmax", &json!({"n": 4}), &H200).is_err());
        assert!(plan("vector_add", &json!({"n": 16, "dtype": "float16"}), &H200).is_err());
        assert!(plan("vector_add", &json!({"n": 0, "dtype": "float32"}), &H200).is_err());
        assert!(plan("vector_add", &json!({"dtype": "float32"}), &H200).is_err());
        assert!(plan("rms_norm", &json!({"m": 4096, "n": 1 << 20, "dtype": "float32"}), &H200).is_err());
        assert!(plan("rms_norm", &json!({"m": 4, "n": 64, "dtype": "int8"}), &H200).is_err());
    }
    fn literal(p: &crate::abi::EntryParam) -> LitValue {
        match &p.param {
            crate::abi::Param::Literal { value, .. } => *value,
            other => panic!("not a literal: {other:?}"),
        }
    }

    #[test]
    fn rms_norm_params_mode_and_loop() {
        let p = plan("rms_norm", &json!({"m": 262144, "n": 1024, "dtype": "float16", "mode": "multi_wave_reload"}), &H200)
            .unwrap()
            .unwrap();
        assert_eq!(p.kernel, "rms_norm");
        assert_eq!(p.tuning["mode"], "multi_wave_reload");
        assert_eq!(p.tuning["eps"], 1e-5);
        assert_eq!(p.tuning["offset"], 0.0);
        assert_eq!(p.grid, [32768, 1, 1]);
        let e = crate::abi::entry_params(&p.args);
        assert_eq!(e.len(), 19);
        assert_eq!((e[17].ir_name.as_str(), e[18].ir_name.as_str()), ("eps", "offset"));
        let p = plan("rms_norm", &json!({"m": 8, "n": 64, "dtype": "float32", "eps": 1e-6, "offset": 1}), &H200).unwrap().unwrap();
        assert_eq!(literal(&crate::abi::entry_params(&p.args)[17]), LitValue::Float(1e-6));
        assert_eq!(literal(&crate::abi::entry_params(&p.args)[18]), LitValue::Float(1.0));
        assert!(p.tuning.get("mode").is_none());
        // Rows wider than 8192: the looping kernel, y without a partition.
        let p = plan("rms_norm", &json!({"m": 100, "n": 20000, "dtype": "bfloat16"}), &H200).unwrap().unwrap();
        assert_eq!(p.kernel, "rms_norm_loop");
        assert_eq!(p.generics, vec!["bf16", "1", "2048"]);
        assert_eq!(p.grid, [100, 1, 1]);
        assert_eq!(p.tuning["col_chunks"], 10);
        assert_eq!(crate::abi::entry_params(&p.args).len(), 5 + 3 + 5 + 2);
        assert_eq!(p.stem, "rms_norm_loop_bf16_bm1_bn2048_occ4");
    }

    #[test]
    fn layer_norm_variants() {
        let legacy = json!({"variant": "layer_norm_legacy", "m": 4096, "n": 32, "dtype": "float16", "eps": 1e-05, "weight_shift": 0.0});
        let p = plan("layer_norm_legacy", &legacy, &H200).unwrap().unwrap();
        assert_eq!(p.kernel, "layer_norm");
        assert_eq!(p.generics, vec!["f16", "16", "32"]);
        assert_eq!(p.grid, [256, 1, 1]);
        let e = crate::abi::entry_params(&p.args);
        let names: Vec<_> = e.iter().map(|e| e.ir_name.as_str()).collect();
        assert_eq!(names[names.len() - 2..], ["eps", "shift"]);
        assert_eq!(e.len(), 5 + 3 + 3 + 9 + 2);
        let pers = json!({"variant": "persistent_layer_norm", "m": 30000, "n": 10000, "dtype": "bfloat16", "eps": 1e-06});
        let p = plan("layer_norm_legacy", &pers, &H200).unwrap().unwrap();
        assert_eq!(p.kernel, "layer_norm_stats_loop");
        assert_eq!(p.generics, vec!["bf16", "2", "2048"]);
        assert_eq!(p.grid, [15000, 1, 1]);
        assert_eq!(p.tuning["col_chunks"], 5);
        assert_eq!(p.tuning["eps"], 1e-6);
        assert_eq!(p.tuning["weight_shift"], 0.0);
        let names: Vec<String> = crate::abi::entry_params(&p.args).into_iter().map(|e| e.ir_name).collect();
        assert!(names.contains(&"mean_partition_dim_0".to_string()));
        assert!(names.contains(&"rstd_ptr".to_string()));
        assert_eq!(p.tensors.iter().find(|t| t.name == "mean").unwrap().dtype_bytes, 4);
        // The spec's eps default depends on the variant.
        let p = plan("layer_norm_legacy", &json!({"variant": "persistent_layer_norm", "m": 8, "n": 8, "dtype": "float32"}), &H200)
            .unwrap()
            .unwrap();
        assert_eq!(p.tuning["eps"], 1e-6);
        let p = plan("layer_norm_legacy", &json!({"m": 8, "n": 8, "dtype": "float32"}), &H200).unwrap().unwrap();
        assert_eq!((p.kernel, p.tuning["eps"].clone()), ("layer_norm", json!(1e-5)));
        assert!(plan("layer_norm_legacy", &json!({"variant": "x", "m": 8, "n": 8, "dtype": "float32"}), &H200).is_err());
        // Rows wider than NORM_MAX_BN loop over column chunks; the chunk is also passed.
        let p = plan("layer_norm_legacy", &json!({"m": 8, "n": 20000, "dtype": "float32"}), &H200).unwrap().unwrap();
        assert_eq!((p.kernel, p.tuning["col_chunks"].clone()), ("layer_norm_loop", json!(10)));
        assert_eq!(p.generics[1], "2");
        let e = crate::abi::entry_params(&p.args);
        assert_eq!(e.last().map(|e| e.ir_name.as_str()), Some("chunk"));
        // Odd m keeps one row per block; a block_rows override wins.
        let p = plan("layer_norm_legacy", &json!({"m": 333, "n": 16384, "dtype": "float16"}), &H200).unwrap().unwrap();
        assert_eq!(p.generics[1], "1");
    }

    #[test]
    fn softmax_tiles() {
        let p = plan("softmax", &json!({"m": 4096, "n": 16384, "dtype": "float32", "variant": "use_tma"}), &H200).unwrap().unwrap();
        assert_eq!(p.generics, vec!["f32", "1", "16384"]);
        assert_eq!(p.grid, [4096, 1, 1]);
        assert_eq!(p.tuning["variant"], "use_tma");
        assert_eq!(p.occupancy, Some(2));
        let p = plan("softmax", &json!({"m": 333, "n": 1000, "dtype": "bfloat16"}), &H200).unwrap().unwrap();
        assert_eq!(p.generics, vec!["bf16", "2", "1024"]);
        assert_eq!(crate::abi::entry_params(&p.args).len(), 5 + 9);
        assert!(plan("softmax", &json!({"m": 4, "n": 32768, "dtype": "float32"}), &H200).is_err());
    }

    #[test]
    fn rope_views_and_tiles() {
        let c = json!({"bsz": 8, "seq_len": 128, "num_q_heads": 32, "num_kv_heads": 8, "head_dim": 256, "partial_rotary_factor": 0.25, "dtype": "float16"});
        let p = plan("rope", &c, &H200).unwrap().unwrap();
        // tilegym's shape: one position per block, all heads, fp16 arithmetic, occupancy 9.
        assert_eq!(p.generics, vec!["f16", "f16", "32", "8", "1", "32"]);
        assert_eq!(p.grid, [128, 8, 1]);
        assert_eq!((p.occupancy, p.variant.as_str()), (Some(9), "s1_io_occ9"));
        assert_eq!(p.tuning["rope_dim"], 64);
        assert_eq!(p.tuning["compute"], "f16");
        let q = &p.tensors[0];
        assert_eq!((q.shape.clone(), q.strides.clone()), (vec![8, 32, 128, 256], vec![128 * 32 * 256, 256, 32 * 256, 1]));
        assert_eq!(q.static_strides(), vec![-1, -1, -1, 1]);
        // In place: q and k are plain tensor arguments (no output partition), written through
        // a full-tensor partition; cos and sin are read.
        let e = crate::abi::entry_params(&p.args);
        assert_eq!(e.len(), 9 + 9 + 7 + 7);
        assert_eq!(e[3].param, crate::abi::Param::Extent { tensor: "q".into(), dim: 2, ty: ScalarType::I32 });
        assert!(e.iter().all(|x| !x.ir_name.contains("partition")));
        let c = json!({"bsz": 8, "seq_len": 1, "num_q_heads": 32, "num_kv_heads": 32, "head_dim": 128, "dtype": "float16"});
        let p = plan("rope", &c, &H200).unwrap().unwrap();
        assert_eq!((p.generics[4].as_str(), p.grid), ("1", [1, 8, 1]));
        // f32 arithmetic is a knob (and a tuning variant).
        let f32 = Overrides { compute: Some(Compute::F32), occupancy: Some(4), ..Default::default() };
        let p = plan_with("rope", &c, f32, &H200).unwrap().unwrap();
        assert_eq!((p.generics[1].as_str(), p.variant.as_str(), p.tuning["compute"].clone()), ("f32", "s1_f32_occ4", json!("f32")));
        // 2^31 elements: the largest offset, 2^31 - 1, still fits i32; 2^32 does not.
        let big = json!({"bsz": 8, "seq_len": 65536, "num_q_heads": 32, "num_kv_heads": 32, "head_dim": 128, "dtype": "float16"});
        let p = plan("rope", &big, &H200).unwrap().unwrap();
        assert_eq!(p.tensors[0].strides[0], 65536 * 32 * 128);
        assert_eq!(p.grid, [65536, 8, 1]);
        assert!(p.extra_launches.is_empty());
        // q of 2^32 elements: two launches of 4 batches each, views that start inside q, k,
        // cos and sin (ptr offsets), the same entry and grid.
        let wide = json!({"bsz": 8, "seq_len": 65536, "num_q_heads": 32, "num_kv_heads": 8, "head_dim": 256, "partial_rotary_factor": 0.25, "dtype": "float16"});
        let p = plan("rope", &wide, &H200).unwrap().unwrap();
        assert_eq!((p.grid, p.extra_launches.len()), ([65536, 4, 1], 1));
        assert_eq!(p.extra_launches[0].grid, p.grid);
        assert_eq!(p.tensors[0].shape, vec![4, 32, 65536, 256]);
        assert_eq!(p.tuning["batch_groups"]["launches"], 2);
        let first = crate::abi::entry_params(&p.args);
        let second = crate::abi::entry_params(&p.extra_launches[0].args);
        assert_eq!(first.len(), second.len());
        assert_eq!(first[0].param, crate::abi::Param::Ptr { tensor: "q".into() });
        let q_batch = 65536 * 32 * 256;
        assert_eq!(second[0].param, crate::abi::Param::PtrAt { tensor: "q".into(), offset: 4 * q_batch });
        assert_eq!(second[9].param, crate::abi::Param::PtrAt { tensor: "k".into(), offset: 4 * 65536 * 8 * 256 });
        assert_eq!(second[18].param, crate::abi::Param::PtrAt { tensor: "cos".into(), offset: 4 * 65536 * 64 });
        assert_eq!(second[25].param, crate::abi::Param::PtrAt { tensor: "sin".into(), offset: 4 * 65536 * 64 });
        // The batch extent of each view is the group's, a literal; the largest offset of a view fits i32.
        assert_eq!(literal(&second[1]), LitValue::Int(4));
        assert!(4 * q_batch - 1 <= i32::MAX as i64 && 8 * q_batch - 1 > i32::MAX as i64);
        // One batch too large for i32 offsets: refused.
        let huge = json!({"bsz": 2, "seq_len": 1048576, "num_q_heads": 32, "num_kv_heads": 8, "head_dim": 128, "dtype": "float16"});
        let err = plan("rope", &huge, &H200).unwrap_err().to_string();
        assert!(err.contains("exceeds i32 offsets"), "{err}");
        // rope_dim / 2 = 48 is not a power of two; odd rope_dim is refused.
        assert!(plan("rope", &json!({"bsz": 1, "seq_len": 4, "num_q_heads": 2, "num_kv_heads": 2, "head_dim": 96, "dtype": "float16"}), &H200).is_err());
        assert!(plan("rope", &json!({"bsz": 1, "seq_len": 4, "num_q_heads": 2, "num_kv_heads": 2, "head_dim": 64, "partial_rotary_factor": 0.0, "dtype": "float16"}), &H200).is_err());
    }

    #[test]
    fn silu_and_mul_and_swiglu_views() {
        let c = json!({"batch": 64, "seq_len": 1024, "hidden_size": 512, "dtype": "float32", "input_last_dim": 1024});
        let p = plan("silu_and_mul", &c, &H200).unwrap().unwrap();
        // fp32: the tiled view kernel, 16 KB half-tiles: 8 rows of 512.
        assert_eq!(p.generics, vec!["f32", "8", "512"]);
        assert_eq!((p.grid, p.occupancy), ([8192, 1, 1], Some(4)));
        let e = crate::abi::entry_params(&p.args);
        // x as [B*S, 2, H]: ptr binds to x, extents/strides are literals.
        assert_eq!(e[0].param, crate::abi::Param::Ptr { tensor: "x".into() });
        let lits: Vec<LitValue> = e[1..7].iter().map(literal).collect();
        assert_eq!(lits, [65536, 2, 512, 1024, 512, 1].map(LitValue::Int));
        assert_eq!(e[7].param, crate::abi::Param::Ptr { tensor: "y".into() });
        assert_eq!(e.len(), 7 + 9);
        // fp16: the row kernel (tilegym's shape): one block per row, the row as BH = H lanes,
        // H a generic, x and y raw pointers, no occupancy hint.
        let c = json!({"batch": 64, "seq_len": 1024, "hidden_size": 1000, "dtype": "float16", "input_last_dim": 2000});
        let p = plan("silu_and_mul", &c, &H200).unwrap().unwrap();
        assert_eq!((p.kernel, p.generics.clone()), ("silu_and_mul_row", vec!["f16".to_string(), "1024".into(), "1000".into()]));
        assert_eq!((p.grid, p.occupancy, p.variant.as_str()), ([65536, 1, 1], None, "row_t1024_nohint"));
        let e = crate::abi::entry_params(&p.args);
        assert_eq!(e.iter().map(|x| x.param.clone()).collect::<Vec<_>>(), vec![crate::abi::Param::Ptr { tensor: "x".into() }, crate::abi::Param::Ptr { tensor: "y".into() }]);
        // Rows over 8192 columns, or an explicit tile, take the tiled view kernel.
        let wide = json!({"batch": 1, "seq_len": 64, "hidden_size": 16384, "dtype": "bfloat16", "input_last_dim": 32768});
        assert_eq!(plan("silu_and_mul", &wide, &H200).unwrap().unwrap().kernel, "silu_and_mul");
        let tiled = plan_with("silu_and_mul", &c, Overrides { tile: Some(1024), ..Default::default() }, &H200).unwrap().unwrap();
        assert_eq!((tiled.kernel, tiled.occupancy), ("silu_and_mul", Some(4)));
        assert!(plan("silu_and_mul", &json!({"batch": 1, "seq_len": 1, "hidden_size": 8, "input_last_dim": 8, "dtype": "float16"}), &H200).is_err());
        let c = json!({"batch": 8, "seq_len": 1, "hidden_size": 4096, "intermediate_size": 14336, "dtype": "float32"});
        let p = plan("swiglu", &c, &H200).unwrap().unwrap();
        assert_eq!((p.generics.clone(), p.grid), (vec!["f32".to_string(), "256".into()], [128, 1, 1]));
        assert_eq!((swiglu_tile(131072, 132), swiglu_tile(1 << 20, 132), swiglu_tile(1 << 26, 132), swiglu_tile(100, 132)), (512, 1024, 4096, 256));
        let e = crate::abi::entry_params(&p.args);
        assert_eq!(e.len(), 3 + 3 + 5);
        assert_eq!(literal(&e[1]), LitValue::Int(32768));
        assert_eq!(e[6].param, crate::abi::Param::Ptr { tensor: "c".into() });
    }

    #[test]
    fn silu_and_mul_tiles_are_sized_in_bytes() {
        let t = |h, bytes| silu_and_mul_tiles(65536, h, bytes, 132, Overrides::default()).unwrap();
        // fp32 keeps the plan measured at 0.99 of tilegym (1024 columns, 4 rows); fp16 gets the
        // same bytes: 2048 columns, 4 rows (the earlier fp16 plan had 4096 elements, 8 KB).
        assert_eq!((t(8192, 4), t(8192, 2), t(4096, 2), t(1024, 2), t(512, 4), t(512, 2)), ((4, 1024), (4, 2048), (4, 2048), (8, 1024), (8, 512), (16, 512)));
        // Non-power-of-two H: the column tile is H rounded up (the view masks the rest).
        assert_eq!(t(1000, 2), (8, 1024));
        // Few rows: fewer rows per block while there would be under four blocks per SM.
        assert_eq!(silu_and_mul_tiles(100, 512, 2, 132, Overrides::default()).unwrap(), (1, 512));
        assert_eq!(silu_and_mul_tiles(4096, 512, 2, 132, Overrides::default()).unwrap(), (4, 512));
        let o = Overrides { tile: Some(8192), block_rows: Some(1), ..Default::default() };
        assert_eq!(silu_and_mul_tiles(65536, 8192, 2, 132, o).unwrap(), (1, 8192));
        let c = json!({"batch": 64, "seq_len": 1024, "hidden_size": 8192, "dtype": "float16", "input_last_dim": 16384});
        let p = plan("silu_and_mul", &c, &H200).unwrap().unwrap();
        assert_eq!((p.variant.as_str(), p.grid), ("row_t8192_nohint", [65536, 1, 1]));
        let p = plan_with("silu_and_mul", &c, Overrides { block_rows: Some(4), tile: Some(2048), ..Default::default() }, &H200).unwrap().unwrap();
        assert_eq!((p.variant.as_str(), p.grid), ("r4_t2048_occ4", [16384, 4, 1]));
    }

    #[test]
    fn smaller_gpus_change_the_sm_dependent_plans() {
        let small = H200.with_sm_count(16);
        // rms_norm: rows per block are halved while there are fewer blocks than SMs.
        assert_eq!((rms_norm_tiles(512, 1024, 132), rms_norm_tiles(512, 1024, 16)), ((2, 1024), (8, 1024)));
        let c = json!({"m": 512, "n": 1024, "dtype": "float16"});
        let (a, b) = (plan("rms_norm", &c, &H200).unwrap().unwrap(), plan("rms_norm", &c, &small).unwrap().unwrap());
        assert_eq!((a.grid, b.grid), ([256, 1, 1], [64, 1, 1]));
        // vector_add: 4096-element tiles need four blocks per SM.
        assert_eq!((vector_add_tile(1 << 20, 132), vector_add_tile(1 << 20, 16)), (1024, 4096));
        // swiglu: halved while fewer blocks than SMs.
        let c = json!({"batch": 8, "seq_len": 1, "hidden_size": 4096, "dtype": "float32"});
        let (a, b) = (plan("swiglu", &c, &H200).unwrap().unwrap(), plan("swiglu", &c, &small).unwrap().unwrap());
        assert_eq!((a.generics[1].as_str(), b.generics[1].as_str()), ("256", "1024"));
        // softmax and layer_norm (one tile per row) follow rms_norm.
        let c = json!({"m": 512, "n": 1024, "dtype": "float32"});
        assert_eq!(plan("softmax", &c, &small).unwrap().unwrap().generics[1], "8");
        assert_eq!(plan("softmax", &c, &H200).unwrap().unwrap().generics[1], "2");
        // silu_and_mul with few rows.
        let c = json!({"batch": 1, "seq_len": 1024, "hidden_size": 512, "dtype": "float32"});
        let (a, b) = (plan("silu_and_mul", &c, &H200).unwrap().unwrap(), plan("silu_and_mul", &c, &small).unwrap().unwrap());
        assert_eq!((a.generics[1].as_str(), b.generics[1].as_str()), ("1", "8"));
        // rope and dropout take tilegym's fixed shapes, whatever the SM count.
        let c = json!({"m": 1048576, "p": 0.5, "dtype": "float16"});
        assert_eq!(plan("dropout", &c, &small).unwrap().unwrap().grid, plan("dropout", &c, &H200).unwrap().unwrap().grid);
    }

    #[test]
    fn candidates_and_variant_names() {
        let names = |op: &str, c: &Value| candidates(op, c, Overrides::default(), &H200).unwrap().unwrap().names().join(" ");
        let rope = json!({"bsz": 8, "seq_len": 65536, "num_q_heads": 32, "num_kv_heads": 8, "head_dim": 128, "dtype": "float16"});
        assert_eq!(names("rope", &rope), "s1_io_occ9 s1_io_occ7 s1_io_occ12 s1_io_occ4 s1_f32_occ4");
        let silu = json!({"batch": 64, "seq_len": 1024, "hidden_size": 8192, "dtype": "float32", "input_last_dim": 16384});
        // fp32: the earlier plan is the default (listed once).
        assert_eq!(
            names("silu_and_mul", &silu),
            "r4_t1024_occ4 r1_t8192_nohint r1_t8192_occ4 r4_t1024_occ2 r4_t1024_occ6 r4_t1024_occ8 r4_t1024_occ4_w8"
        );
        let silu16 = json!({"batch": 64, "seq_len": 1024, "hidden_size": 8192, "dtype": "float16", "input_last_dim": 16384});
        // fp16: the row kernel first, the earlier tiled default last.
        assert_eq!(
            names("silu_and_mul", &silu16),
            "row_t8192_nohint r1_t8192_nohint r1_t8192_occ4 r4_t2048_occ2 r4_t2048_occ6 r4_t2048_occ8 r4_t1024_occ4 row_t8192_occ4 r4_t2048_occ4"
        );
        let drop = json!({"m": 67108864, "p": 0.5, "inplace": true, "dtype": "float16"});
        assert_eq!(names("dropout", &drop), "t1024_nohint t1024_occ16 t1024_occ8 t2048_nohint t4096_nohint t4096_occ4");
        let sm = json!({"m": 4096, "n": 1024, "dtype": "float32"});
        assert_eq!(names("softmax", &sm), "r8_occ4 r8_occ1 r8_occ2 r8_occ4_w4 r4_occ4 r16_occ2");
        // 16-bit multi-wave: the row kernel, the earlier tiled default last; fp32 multi-wave
        // keeps the tiled kernel.
        let mw16 = json!({"m": 4096, "n": 1024, "dtype": "bfloat16", "variant": "use_multi_wave"});
        assert_eq!(names("softmax", &mw16), "row_nohint row_occ1 row_occ2 row_nohint_w4 r4_occ4 r16_occ2 r8_occ4");
        let mw32 = json!({"m": 4096, "n": 1024, "dtype": "float32", "variant": "use_multi_wave"});
        assert_eq!(names("softmax", &mw32), "r8_occ4 r8_occ1 r8_occ2 r8_occ4_w4 r4_occ4 r16_occ2");
        let sm16k = json!({"m": 4096, "n": 16384, "dtype": "float32"});
        assert_eq!(names("softmax", &sm16k), "r1_occ2 r1_occ1 r1_occ2_w4");
        // Operators whose heuristic is at the front have one candidate.
        for (op, c) in [("rms_norm", json!({"m": 4096, "n": 1024, "dtype": "float16"})), ("swiglu", json!({"batch": 8, "seq_len": 1, "hidden_size": 4096, "dtype": "float32"}))] {
            assert_eq!(candidates(op, &c, Overrides::default(), &H200).unwrap().unwrap().plans.len(), 1, "{op}");
        }
        // Suite overrides pin the plan: no alternatives.
        let o = Overrides { occupancy: Some(7), ..Default::default() };
        let c = candidates("rope", &rope, o, &H200).unwrap().unwrap();
        assert_eq!(c.names(), ["s1_io_occ7"]);
        assert!(candidates("conv2d", &rope, Overrides::default(), &H200).unwrap().is_none());
        assert!(candidates("rope", &json!({"bsz": 1}), Overrides::default(), &H200).is_err());
        // Every candidate's knobs are in its plan.
        let c = candidates("dropout", &drop, Overrides::default(), &H200).unwrap().unwrap();
        let p = c.find("t4096_occ4").unwrap();
        assert_eq!((p.generics[1].as_str(), p.occupancy, p.grid), ("4096", Some(4), [16384, 1, 1]));
        let p = c.find("t1024_nohint").unwrap();
        assert_eq!((p.occupancy, p.tuning["occupancy"].clone(), p.stem.as_str()), (None, json!("none"), "dropout_inplace_f16_t1024"));
        assert!(c.find("t512_nohint").is_none());
    }

    #[test]
    fn knob_ranges() {
        let c = json!({"m": 4096, "n": 1024, "dtype": "float32"});
        let w = |w| plan_with("softmax", &c, Overrides { worker_warps: Some(w), ..Default::default() }, &H200);
        assert_eq!(w(8).unwrap().unwrap().stem, "softmax_f32_bm8_bn1024_occ4_w8");
        assert!(w(6).is_err());
        // The 16-bit multi-wave row kernel: one block per row, N a generic, raw pointers.
        let mw = json!({"m": 100, "n": 1000, "dtype": "float16", "variant": "use_multi_wave"});
        let p = plan("softmax", &mw, &H200).unwrap().unwrap();
        assert_eq!((p.kernel, p.generics.clone(), p.grid, p.occupancy), ("softmax_row", vec!["f16".to_string(), "1024".into(), "1000".into()], [100, 1, 1], None));
        assert_eq!(crate::abi::entry_params(&p.args).len(), 2);
        let bf = json!({"m": 100, "n": 1000, "dtype": "bfloat16", "variant": "use_tma"});
        assert_eq!(plan("softmax", &bf, &H200).unwrap().unwrap().kernel, "softmax");
        let forced = plan_with("softmax", &mw, Overrides { block_rows: Some(2), ..Default::default() }, &H200).unwrap().unwrap();
        assert_eq!(forced.kernel, "softmax");
        let occ = |o| plan_with("softmax", &c, Overrides { occupancy: Some(o), ..Default::default() }, &H200);
        assert_eq!(occ(0).unwrap().unwrap().occupancy, None);
        assert!(occ(33).is_err());
        assert_eq!(Compute::parse("io").unwrap(), Compute::Io);
        assert!(Compute::parse("f16").is_err());
    }

    /// reference/src/ops/dropout.cpp `cutile_uniform`, in u32 and f64.
    fn reference_keep(i: u32, seed: u32, p: f64) -> bool {
        let mut r = i.wrapping_mul(1103515245).wrapping_add(seed);
        r ^= r >> 16;
        r ^= r << 8;
        r ^= r >> 4;
        ((r & 0x7fff_ffff) as f64) / 2147483647.0 > p
    }

    /// The kernel's formulation: i32 wrapping arithmetic, arithmetic shifts masked to
    /// the low bits, integer threshold.
    fn kernel_keep(i: i32, seed: i32, threshold: i32) -> bool {
        let mut r = i.wrapping_mul(1103515245).wrapping_add(seed);
        r ^= (r >> 16) & 0xffff;
        r ^= r << 8;
        r ^= (r >> 4) & 0x0fff_ffff;
        (r & 0x7fff_ffff) > threshold
    }

    #[test]
    fn dropout_generator_matches_reference() {
        for p in [0.0, 0.1, 0.3, 0.5, 0.9, 0.999999] {
            let t = dropout_threshold(p) as i32;
            for seed in [0u32, 1, 42, 0xdead_beef, u32::MAX] {
                for i in (0u32..200_000).chain((1 << 26) - 1000..(1 << 26)) {
                    assert_eq!(reference_keep(i, seed, p), kernel_keep(i as i32, seed as i32, t), "p {p} seed {seed} i {i}");
                }
            }
        }
        // Boundary: the threshold is the last r with r / (2^31-1) <= p.
        for p in [0.5, 0.3, 1e-9] {
            let t = dropout_threshold(p);
            assert!((t as f64) / 2147483647.0 <= p && ((t + 1) as f64) / 2147483647.0 > p);
        }
        assert_eq!(dropout_threshold(0.0), 0);
    }

    #[test]
    fn dropout_plans() {
        let c = json!({"m": 1048576, "p": 0.5, "inplace": true, "dtype": "float32", "training": true});
        let p = plan("dropout", &c, &H200).unwrap().unwrap();
        assert_eq!(p.kernel, "dropout_inplace");
        assert_eq!(p.tensors.len(), 1);
        let e = crate::abi::entry_params(&p.args);
        assert_eq!(e.len(), 5 + 3);
        assert_eq!(e[3].ir_name, "x_partition_dim_0");
        assert_eq!(literal(&e[5]), LitValue::Int(0));
        assert_eq!(literal(&e[6]), LitValue::Int(dropout_threshold(0.5)));
        assert_eq!(literal(&e[7]), LitValue::Float(2.0));
        let c = json!({"m": 100003, "p": 0.25, "inplace": false, "dtype": "float16", "rng_seed": -1});
        let p = plan("dropout", &c, &H200).unwrap().unwrap();
        assert_eq!(p.kernel, "dropout");
        let e = crate::abi::entry_params(&p.args);
        assert_eq!(e.len(), 3 + 5 + 3);
        assert_eq!(literal(&e[8]), LitValue::Int(-1)); // u32 0xffffffff as i32 bits
        assert_eq!(p.grid, [98, 1, 1]);
        let c = json!({"m": 64, "p": 0.25, "training": false, "dtype": "float32"});
        let e = crate::abi::entry_params(&plan("dropout", &c, &H200).unwrap().unwrap().args);
        assert_eq!((literal(&e[9]), literal(&e[10])), (LitValue::Int(-1), LitValue::Float(1.0)));
        assert!(plan("dropout", &json!({"m": 64, "p": 1.0, "dtype": "float32"}), &H200).is_err());
    }
}
