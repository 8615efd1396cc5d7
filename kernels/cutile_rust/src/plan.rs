// SPDX-License-Identifier: Apache-2.0
//! Per-configuration choices: which kernel, which specialisation (generics, static
//! strides, divisibility facts), tile sizes, grid, and the kernel's arguments.

use anyhow::{bail, ensure, Context, Result};
use cutile::cutile_compiler::specialization::{compute_spec, SpecializationBits};
use serde_json::{json, Map, Value};

use crate::abi::{KernelArg, LitValue, ScalarType};

/// Operators this front end exports.
pub const OPERATORS: &[&str] = &["vector_add", "rms_norm"];

/// eps of the rms_norm operator spec.
pub const RMS_NORM_EPS: f64 = 1e-5;

/// The largest row length rms_norm keeps in one tile (`BN`).
pub const RMS_NORM_MAX_BN: i64 = 16384;

/// The base address the specialisation assumes for every tensor: any 16-byte aligned
/// address gives the same facts (cutile caps pointer divisibility at 16 bytes), and
/// `cuMemAlloc` returns 256-byte aligned memory.
pub const ASSUMED_BASE_ADDR: u64 = 256;

/// Number of SMs on the target (H100/H200, sm_90); the tile heuristics aim for a few
/// tile blocks per SM.
pub const TARGET_SMS: i64 = 132;

/// A tensor of the operator spec as this configuration lays it out.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorLayout {
    pub name: String,
    pub shape: Vec<i64>,
    /// Contiguous row-major strides, in elements.
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
    /// cuTile `occupancy` hint (CTAs per SM) for tileiras, when the plan sets one.
    pub occupancy: Option<i32>,
}

/// Tuning choices that replace the heuristics (for sweeps; the exporter uses none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// vector_add `TILE`.
    pub tile: Option<i64>,
    /// rms_norm `BM`.
    pub block_rows: Option<i64>,
    /// cuTile occupancy hint.
    pub occupancy: Option<i32>,
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

fn param_i64(params: &Value, key: &str) -> Result<i64> {
    let v = params.get(key).with_context(|| format!("missing parameter {key:?}"))?;
    let v = v.as_i64().with_context(|| format!("parameter {key:?} is not an integer: {v}"))?;
    ensure!(v > 0, "parameter {key:?} must be positive, got {v}");
    // cutile passes extents, strides and partition sizes as i32.
    ensure!(v <= i32::MAX as i64, "parameter {key:?} = {v} does not fit the i32 index type");
    Ok(v)
}

fn param_str<'a>(params: &'a Value, key: &str) -> Result<&'a str> {
    params.get(key).and_then(Value::as_str).with_context(|| format!("missing or non-string parameter {key:?}"))
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

fn grid_of(extents: &[i64], tile: &[i64]) -> Result<[u32; 3]> {
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
/// four tile blocks per SM, else 1024.
pub fn vector_add_tile(n: i64) -> i64 {
    for t in [4096, 2048] {
        if ceil_div(n, t) >= 4 * TARGET_SMS {
            return t;
        }
    }
    1024
}

/// rms_norm tiles `(BM, BN)`: `BN` is the row length rounded up to a power of two (at
/// least 16), so one tile block owns whole rows; `BM` rows per block, a power of two
/// with `BM * BN <= 8192` elements, lowered until there is at least one tile block per
/// SM (or `BM` is 1).
///
/// Measured on an H200 (tools/gpu_check.py --time over BM in 1..16 and occupancy
/// none/2/4, docs/cutile-rust.md): 8192-element tiles with an occupancy hint of 4 were
/// the fastest or within a few percent for the smoke shapes; without the hint tileiras
/// schedules too few CTAs per SM and the kernel runs up to 2.5x slower.
pub fn rms_norm_tiles(m: i64, n: i64) -> (i64, i64) {
    let bn = (n as u64).next_power_of_two().max(16) as i64;
    let mut bm = (8192 / bn).max(1);
    while bm > 1 && ceil_div(m, bm) < TARGET_SMS {
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
pub fn plan(op: &str, params: &Value) -> Result<Option<Plan>> {
    plan_with(op, params, Overrides::default())
}

/// [`plan`] with tuning overrides.
pub fn plan_with(op: &str, params: &Value, o: Overrides) -> Result<Option<Plan>> {
    let mut p = match op {
        "vector_add" => plan_vector_add(params, o)?,
        "rms_norm" => plan_rms_norm(params, o)?,
        _ => return Ok(None),
    };
    if o.occupancy.is_some() {
        p.occupancy = o.occupancy;
    }
    if let Some(occ) = p.occupancy {
        ensure!((1..=32).contains(&occ), "occupancy must be 1..=32, got {occ}");
        p.tuning.insert("occupancy".into(), json!(occ));
        p.stem = format!("{}_occ{occ}", p.stem);
    }
    Ok(Some(p))
}

fn check_pow2(what: &str, v: i64) -> Result<i64> {
    ensure!(v > 0 && (v & (v - 1)) == 0, "{what} must be a power of two, got {v}");
    Ok(v)
}

fn tensor_arg(t: &TensorLayout, partition: Option<Vec<i64>>) -> KernelArg {
    KernelArg::Tensor { name: t.name.clone(), strides: t.strides.clone(), partition }
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

fn specialization_json(tensors: &[TensorLayout]) -> Value {
    Value::Object(tensors.iter().map(|t| (t.name.clone(), spec_json(t))).collect())
}

fn plan_vector_add(params: &Value, o: Overrides) -> Result<Plan> {
    let n = param_i64(params, "n")?;
    let dtype = param_str(params, "dtype")?;
    ensure!(dtype == "float32", "vector_add supports float32 only, got {dtype:?}");
    let (elem, bytes) = element_type(dtype)?;
    let tile = match o.tile {
        Some(t) => check_pow2("tile", t)?,
        None => vector_add_tile(n),
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
        occupancy: None,
        tensors,
        args,
        tuning,
    })
}

fn plan_rms_norm(params: &Value, o: Overrides) -> Result<Plan> {
    let m = param_i64(params, "m")?;
    let n = param_i64(params, "n")?;
    ensure!(m.checked_mul(n).is_some_and(|e| e <= i32::MAX as i64), "m*n = {m}*{n} exceeds i32 indexing");
    let dtype = param_str(params, "dtype")?;
    let (elem, bytes) = element_type(dtype)?;
    let (mut bm, bn) = rms_norm_tiles(m, n);
    if let Some(r) = o.block_rows {
        bm = check_pow2("block_rows", r)?;
    }
    ensure!(bn <= RMS_NORM_MAX_BN, "rms_norm keeps a row in one tile; n = {n} exceeds {RMS_NORM_MAX_BN}");
    let tensors = vec![
        TensorLayout::contiguous("x", &[m, n], bytes),
        TensorLayout::contiguous("w", &[n], bytes),
        TensorLayout::contiguous("y", &[m, n], bytes),
    ];
    let args = vec![
        tensor_arg(&tensors[0], None),
        tensor_arg(&tensors[1], None),
        tensor_arg(&tensors[2], Some(vec![bm, bn])),
        KernelArg::Scalar { name: "eps".into(), ty: ScalarType::F32, value: LitValue::Float(RMS_NORM_EPS) },
    ];
    let mut tuning = Map::new();
    tuning.insert("block_rows".into(), json!(bm));
    tuning.insert("block_cols".into(), json!(bn));
    tuning.insert("eps".into(), json!(RMS_NORM_EPS));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "rms_norm",
        elem,
        generics: vec![elem.to_string(), bm.to_string(), bn.to_string()],
        grid: grid_of(&[m, n], &[bm, bn])?,
        stem: format!("rms_norm_{elem}_bm{bm}_bn{bn}"),
        occupancy: Some(rms_norm_occupancy(bm, bn)),
        tensors,
        args,
        tuning,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(vector_add_tile(1 << 20), 1024);
        assert_eq!(vector_add_tile(1 << 26), 4096);
        assert_eq!(vector_add_tile(1_000_003), 1024);
        let p = plan("vector_add", &json!({"n": 1000003, "dtype": "float32"})).unwrap().unwrap();
        assert_eq!(p.grid, [977, 1, 1]);
        assert_eq!(p.generics, vec!["f32", "1024"]);
        assert_eq!(p.tuning["tile"], 1024);
        assert_eq!(p.tuning["specialization"]["x"]["shape_div"], json!([1]));
        let p = plan("vector_add", &json!({"n": 67108864, "dtype": "float32"})).unwrap().unwrap();
        assert_eq!(p.grid, [16384, 1, 1]);
        assert_eq!(p.tuning["specialization"]["out"]["shape_div"], json!([16]));
    }

    #[test]
    fn rms_norm_tiles_and_grid() {
        assert_eq!(rms_norm_tiles(4096, 1024), (8, 1024));
        assert_eq!(rms_norm_tiles(4096, 4096), (2, 4096));
        assert_eq!(rms_norm_tiles(2048, 2048), (4, 2048));
        assert_eq!(rms_norm_tiles(333, 768), (2, 1024));
        assert_eq!(rms_norm_tiles(7, 16384), (1, 16384));
        assert_eq!(rms_norm_tiles(100, 3), (1, 16));
        assert_eq!(rms_norm_occupancy(2, 4096), 4);
        assert_eq!(rms_norm_occupancy(1, 16384), 2);
        let p = plan("rms_norm", &json!({"m": 333, "n": 768, "dtype": "float16"})).unwrap().unwrap();
        assert_eq!(p.grid, [167, 1, 1]);
        assert_eq!(p.generics, vec!["f16", "2", "1024"]);
        assert_eq!(p.elem, "f16");
        assert_eq!(p.occupancy, Some(4));
        assert_eq!(p.tuning["occupancy"], 4);
        let p = plan("rms_norm", &json!({"m": 4096, "n": 1024, "dtype": "bfloat16"})).unwrap().unwrap();
        assert_eq!(p.grid, [512, 1, 1]);
        assert_eq!(p.stem, "rms_norm_bf16_bm8_bn1024_occ4");
    }

    #[test]
    fn overrides() {
        let params = json!({"m": 333, "n": 768, "dtype": "float16"});
        let o = Overrides { block_rows: Some(4), occupancy: Some(2), ..Default::default() };
        assert_eq!(plan("vector_add", &json!({"n": 64, "dtype": "float32"})).unwrap().unwrap().occupancy, None);
        let p = plan_with("rms_norm", &params, o).unwrap().unwrap();
        assert_eq!(p.grid, [84, 1, 1]);
        assert_eq!(p.occupancy, Some(2));
        assert_eq!(p.tuning["occupancy"], 2);
        assert_eq!(p.stem, "rms_norm_f16_bm4_bn1024_occ2");
        let bad = Overrides { block_rows: Some(3), ..Default::default() };
        assert!(plan_with("rms_norm", &params, bad).is_err());
        let t = Overrides { tile: Some(512), ..Default::default() };
        let p = plan_with("vector_add", &json!({"n": 4096, "dtype": "float32"}), t).unwrap().unwrap();
        assert_eq!((p.grid, p.tuning["tile"].clone()), ([8, 1, 1], json!(512)));
    }

    #[test]
    fn rejects_bad_configs() {
        assert!(plan("softmax", &json!({"n": 4})).unwrap().is_none());
        assert!(plan("vector_add", &json!({"n": 16, "dtype": "float16"})).is_err());
        assert!(plan("vector_add", &json!({"n": 0, "dtype": "float32"})).is_err());
        assert!(plan("vector_add", &json!({"dtype": "float32"})).is_err());
        assert!(plan("rms_norm", &json!({"m": 4, "n": 1 << 20, "dtype": "float32"})).is_err());
        assert!(plan("rms_norm", &json!({"m": 4, "n": 64, "dtype": "int8"})).is_err());
    }
}
