// SPDX-License-Identifier: Apache-2.0
//! Per-configuration plans of the matrix products and splitk_reduce: kernel, specialisation,
//! tiles, cluster, occupancy, load-latency hint and grid, from the configuration and the
//! target description; and the tuning candidates (`variants`) beside the chosen plan.
//!
//! Defaults and candidate lists are for Hopper (sm_90, the H200). Facts they rest on
//! (docs/cutile-rust.md, "Matrix products"): tilegym 1.5.1's own candidates for sm_90
//! (matmul and group_gemm take its Blackwell lists there, bmm has its own) are all candidates
//! here; the measured H200 winners (upstream-tilegym.md: persistent matmul 128x128x64 at 4096,
//! 184 us; bmm 256x128x64 in clusters of 2 at occupancy 2, 1513 us) are the f16 defaults; for
//! tf32 and fp8, whose tensor-core operands must be K-major (B stored [K, N] and A stored
//! [K, M] are transposed on the way), the defaults are the tiles that tileiras 13.4 compiles
//! without a stack frame (registers and spills from `cuobjdump -res-usage`, tables in the
//! docs).

use anyhow::{bail, ensure, Result};
use serde_json::{json, Map, Value};

use crate::abi::{KernelArg, LitValue, ScalarType};
use crate::plan::{
    ceil_div, grid_of, param_bool_or, param_i64, param_int_or, param_str, param_str_or, pow2_ceil, specialization_json,
    tensor_arg, Candidates, Overrides, Plan, TensorLayout,
};
use crate::target::Target;

/// Operators of this module (registered in `crate::plan::OPERATORS`).
pub const OPERATORS: &[&str] = &["matmul", "bmm", "group_gemm", "splitk_reduce"];

/// Tile rows per swizzle group of the output tiles (tilegym's GROUP_SIZE_M).
pub const GROUP_M: i64 = 8;

/// The element types of a matrix product: cutile's element type of the tensors, its bytes, and
/// the tensor-core operand type (`tf32` for f32 tensors, as tilegym casts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmTypes {
    pub elem: &'static str,
    pub bytes: i32,
    pub mma: &'static str,
}

/// portbench dtype name -> [`GemmTypes`].
pub fn gemm_types(dtype: &str) -> Result<GemmTypes> {
    let (elem, bytes, mma) = match dtype {
        "float16" => ("f16", 2, "f16"),
        "bfloat16" => ("bf16", 2, "bf16"),
        "float32" => ("f32", 4, "tf32"),
        "float8_e4m3fn" => ("f8e4m3fn", 1, "f8e4m3fn"),
        "float8_e5m2" => ("f8e5m2", 1, "f8e5m2"),
        other => bail!("unsupported dtype {other:?} (float16, bfloat16, float32 as tf32, float8_e4m3fn, float8_e5m2)"),
    };
    Ok(GemmTypes { elem, bytes, mma })
}

/// One launch shape of a tiled product: the output tile, the K step, the CTAs per cluster
/// (`num_ctas`: a tile block is a cluster of that many CTAs), the occupancy hint and the
/// load-latency hint (0: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiles {
    pub bm: i64,
    pub bn: i64,
    pub bk: i64,
    pub ctas: i32,
    pub occupancy: i32,
    pub latency: i32,
}

/// Shorthand for the tables below.
const fn tiles(bm: i64, bn: i64, bk: i64, ctas: i32, occupancy: i32, latency: i32) -> Tiles {
    Tiles { bm, bn, bk, ctas, occupancy, latency }
}

impl Tiles {
    /// The variant name: its knobs, the same plan in every configuration of an operator.
    pub fn name(&self) -> String {
        let lat = if self.latency > 0 { format!("_l{}", self.latency) } else { String::new() };
        format!("m{}n{}k{}_c{}_o{}{lat}", self.bm, self.bn, self.bk, self.ctas, self.occupancy)
    }

    fn check(&self) -> Result<()> {
        for (what, v) in [("BM", self.bm), ("BN", self.bn), ("BK", self.bk)] {
            ensure!(v >= 16 && v <= 512 && v & (v - 1) == 0, "tile {what} = {v} must be a power of two in 16..=512");
        }
        ensure!([1, 2, 4].contains(&self.ctas), "num_ctas must be 1, 2 or 4, got {}", self.ctas);
        ensure!((1..=32).contains(&self.occupancy), "occupancy must be 1..=32, got {}", self.occupancy);
        ensure!((0..=10).contains(&self.latency), "load latency hint must be 0 (none) or 1..=10, got {}", self.latency);
        Ok(())
    }
}

/// What kind of product a plan computes (its schedule and operand layouts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Schedule {
    /// One tile per block, 1-D grid in swizzle order.
    PerTile,
    /// A grid of (SMs / num_ctas) x occupancy blocks striding over the tiles.
    Persistent,
}

/// The default tiles of a 2-D product on this target, before they are shrunk for small
/// problems ([`fit_tiles`]). f16/bf16: tilegym's measured H200 winner; tf32 and fp8: the tiles
/// without a stack frame for the layout (table in docs/cutile-rust.md).
fn default_tiles(types: GemmTypes, schedule: Schedule, ta: bool) -> Tiles {
    match (types.bytes, schedule, ta) {
        (4, Schedule::PerTile, false) => tiles(128, 128, 32, 1, 1, 0),
        (4, _, false) => tiles(128, 64, 32, 1, 1, 0),
        (4, _, true) => tiles(64, 64, 32, 1, 1, 0),
        (1, Schedule::PerTile, false) => tiles(128, 64, 128, 1, 1, 0),
        (1, _, false) => tiles(128, 64, 128, 1, 1, 0),
        (1, _, true) => tiles(64, 64, 128, 1, 1, 0),
        _ => tiles(128, 128, 64, 1, 1, 0),
    }
}

/// Halves the output tile (N first, then M, down to 64) while the problem has fewer tiles than
/// the target has SMs: small products are latency-bound, more blocks finish sooner.
fn fit_tiles(mut d: Tiles, tiles_of: impl Fn(i64, i64) -> i64, sms: i64) -> Tiles {
    while tiles_of(d.bm, d.bn) < sms && (d.bn > 64 || d.bm > 64) {
        if d.bn >= d.bm && d.bn > 64 {
            d.bn /= 2;
        } else {
            d.bm /= 2;
        }
    }
    d
}

/// tilegym 1.5.1's matmul candidates on sm_90 (its sm_100 lists; `_matmul_autotune_configs`,
/// `_static_persistent_matmul_autotune_configs`), then this port's for the element size: for
/// f16/bf16 the default, a wider N and the bmm winner's shape; for tf32 and fp8 the tiles that
/// compile without a stack frame in one of the layouts (the defaults' table).
fn matmul_candidates(schedule: Schedule, types: GemmTypes) -> Vec<Tiles> {
    let mut v = match schedule {
        Schedule::PerTile => vec![tiles(128, 128, 32, 1, 1, 0), tiles(256, 256, 64, 2, 1, 0), tiles(256, 256, 64, 4, 1, 0), tiles(512, 256, 64, 2, 1, 0)],
        Schedule::Persistent => vec![
            tiles(128, 512, 64, 4, 1, 0),
            tiles(256, 256, 64, 2, 1, 0),
            tiles(256, 512, 64, 2, 1, 0),
            tiles(256, 256, 64, 2, 1, 4),
            tiles(256, 256, 64, 1, 1, 0),
            tiles(256, 256, 128, 2, 1, 0),
            tiles(256, 128, 32, 2, 1, 0),
            tiles(128, 128, 64, 1, 1, 0),
        ],
    };
    v.extend(match types.bytes {
        4 => vec![tiles(128, 128, 32, 1, 1, 0), tiles(128, 64, 32, 1, 1, 0), tiles(64, 128, 32, 1, 1, 0), tiles(64, 64, 32, 1, 1, 0)],
        1 => vec![tiles(128, 64, 128, 1, 1, 0), tiles(64, 128, 128, 1, 1, 0), tiles(64, 64, 128, 1, 1, 0), tiles(128, 128, 128, 1, 1, 0)],
        _ => vec![tiles(128, 128, 64, 1, 1, 0), tiles(128, 256, 64, 1, 1, 0), tiles(256, 128, 64, 2, 2, 3)],
    });
    v
}

/// tilegym's bmm candidates for sm_90 (`_bmm_autotune_configs`, capability (9, 0)): tiles
/// {64, 128, 256}^2 x 64, clusters of 2, occupancy 1 and 2, load latency 3; and 128x128x64
/// without a cluster.
fn bmm_candidates() -> Vec<Tiles> {
    let mut v = Vec::new();
    for bm in [64, 128, 256] {
        for bn in [64, 128, 256] {
            for occ in [1, 2] {
                v.push(tiles(bm, bn, 64, 2, occ, 3));
            }
        }
    }
    v.push(tiles(128, 128, 64, 1, 1, 0));
    v
}

/// tilegym's group_gemm candidates on sm_90 (`_group_gemm_autotune_configs`), then the matmul
/// and bmm winners' shapes.
fn group_gemm_candidates() -> Vec<Tiles> {
    vec![tiles(128, 128, 128, 1, 1, 0), tiles(256, 256, 64, 2, 1, 0), tiles(128, 128, 64, 1, 1, 0), tiles(256, 128, 64, 2, 2, 3)]
}

/// The largest power of two up to 16 that divides `v` (a tensor-view extent's divisibility).
fn div16(v: i64) -> i64 {
    let mut d = 16;
    while v % d != 0 {
        d /= 2;
    }
    d
}

/// cutile-rs 0.5.0 passes shapes and strides as i32 and indexes in i32: every tensor's element
/// count must fit.
fn check_i32_elements(name: &str, shape: &[i64]) -> Result<()> {
    let n = shape.iter().try_fold(1i64, |a, &d| a.checked_mul(d));
    ensure!(
        n.is_some_and(|n| n <= i32::MAX as i64),
        "tensor {name} {shape:?} has more than 2^31-1 elements (cutile-rs 0.5.0 shapes, strides and offsets are i32)"
    );
    Ok(())
}

/// The cluster size a plan was compiled for (`tuning.num_ctas`, a matrix product's knob):
/// `num_cta_in_cga` for tileiras and the launch's `cluster` (the grid then counts clusters).
pub fn num_ctas(p: &Plan) -> Option<i32> {
    p.tuning.get("num_ctas").and_then(Value::as_i64).map(|n| n as i32).filter(|&n| n > 1)
}

fn ensure_no_overrides(op: &str, o: Overrides) -> Result<()> {
    ensure!(
        o == Overrides::default(),
        "{op} takes no suite tuning overrides (block_rows, tile, ...): its tile choices are the manifest's variants"
    );
    Ok(())
}

/// matmul's operands as the reference lays them out (reference/src/ops/matmul.cpp): a [M, K]
/// or [K, M] with `transpose_a`, b [K, N] or [N, K] with `transpose_b`, c [M, N].
struct MatmulShape {
    m: i64,
    n: i64,
    k: i64,
    ta: bool,
    tb: bool,
    persistent: bool,
    types: GemmTypes,
}

fn matmul_shape(params: &Value) -> Result<MatmulShape> {
    let (m, n, k) = (param_i64(params, "m")?, param_i64(params, "n")?, param_i64(params, "k")?);
    let dtype = param_str(params, "dtype")?;
    let types = gemm_types(dtype)?;
    let out = param_str_or(params, "out_dtype", dtype)?;
    ensure!(out == dtype, "out_dtype {out:?} differs from dtype {dtype:?}: the kernel stores C in the operands' type");
    for key in ["offset_a", "offset_b"] {
        let off = param_int_or(params, key, 0)?;
        // Tile IR views (and TMA) assume 16-byte aligned bases; the harness's allocations are
        // 256-byte aligned, so the view is aligned when its offset is.
        ensure!(
            off >= 0 && off * types.bytes as i64 % 16 == 0,
            "{key} = {off} elements is not a multiple of 16 bytes (the kernel's views assume 16-byte aligned bases)"
        );
    }
    Ok(MatmulShape {
        m,
        n,
        k,
        ta: param_bool_or(params, "transpose_a", false)?,
        tb: param_bool_or(params, "transpose_b", false)?,
        persistent: param_bool_or(params, "static_persistent", false)?,
        types,
    })
}

/// The common tuning entries of a tiled product.
fn tiles_tuning(kernel: &str, d: &Tiles, types: GemmTypes, schedule: &str) -> Map<String, Value> {
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!(kernel));
    tuning.insert("schedule".into(), json!(schedule));
    tuning.insert("tile_m".into(), json!(d.bm));
    tuning.insert("tile_n".into(), json!(d.bn));
    tuning.insert("tile_k".into(), json!(d.bk));
    tuning.insert("group_m".into(), json!(GROUP_M));
    tuning.insert("num_ctas".into(), json!(d.ctas));
    tuning.insert("occupancy".into(), json!(d.occupancy));
    tuning.insert("load_latency".into(), if d.latency > 0 { json!(d.latency) } else { json!("none") });
    tuning.insert("mma_operands".into(), json!(types.mma));
    tuning.insert("accumulator".into(), json!("f32"));
    tuning
}

/// Persistent grid, as tilegym's wrappers size it: `min(SMs / num_ctas, tiles) * occupancy`
/// tile blocks (clusters when `num_ctas` > 1).
fn persistent_grid(tiles: i64, d: &Tiles, sms: i64) -> Result<[u32; 3]> {
    let blocks = (sms / d.ctas as i64).max(1).min(tiles) * d.occupancy as i64;
    grid_of(&[blocks], &[1])
}

fn plan_matmul(params: &Value, d: Tiles, t: &Target) -> Result<Plan> {
    d.check()?;
    let s = matmul_shape(params)?;
    let GemmTypes { elem, bytes, mma } = s.types;
    let a_shape = if s.ta { [s.k, s.m] } else { [s.m, s.k] };
    let b_shape = if s.tb { [s.n, s.k] } else { [s.k, s.n] };
    for (name, shape) in [("a", a_shape), ("b", b_shape), ("c", [s.m, s.n])] {
        check_i32_elements(name, &shape)?;
    }
    let tensors = vec![
        TensorLayout::contiguous("a", &a_shape, bytes),
        TensorLayout::contiguous("b", &b_shape, bytes),
        TensorLayout::contiguous("c", &[s.m, s.n], bytes),
    ];
    let tiles = ceil_div(s.m, d.bm) * ceil_div(s.n, d.bn);
    let (kernel, schedule, grid) = if s.persistent {
        ("matmul_persistent", "static persistent: grid min(SMs / num_ctas, tiles) x occupancy, tiles in swizzle order", persistent_grid(tiles, &d, t.sm_count)?)
    } else {
        ("matmul", "one output tile per tile block, 1-D grid in swizzle order", grid_of(&[tiles], &[1])?)
    };
    let mut tuning = tiles_tuning(kernel, &d, s.types, schedule);
    tuning.insert("transpose_a".into(), json!(s.ta));
    tuning.insert("transpose_b".into(), json!(s.tb));
    tuning.insert("output_tiles".into(), json!(tiles));
    if let Some(u) = params.get("use_tma") {
        // tilegym's matmul ignores it too: the views always load through TMA where they can.
        tuning.insert("use_tma".into(), json!(format!("{u} (recorded, not interpreted: the kernel always loads through TMA views)")));
    }
    tuning.insert("specialization".into(), specialization_json(&tensors));
    let (ta, tb) = (i32::from(s.ta), i32::from(s.tb));
    Ok(Plan {
        kernel,
        elem,
        generics: [elem.to_string(), mma.to_string()]
            .into_iter()
            .chain([d.bm, d.bn, d.bk, GROUP_M, ta as i64, tb as i64, d.latency as i64].map(|v| v.to_string()))
            .collect(),
        args: tensors.iter().map(|x| tensor_arg(x, None)).collect(),
        tensors,
        grid,
        stem: format!("{kernel}_{elem}_m{}n{}k{}_ta{ta}tb{tb}_c{}_o{}_l{}", d.bm, d.bn, d.bk, d.ctas, d.occupancy, d.latency),
        variant: d.name(),
        occupancy: Some(d.occupancy),
        worker_warps: None,
        extra_launches: Vec::new(),
        tuning,
    })
}

struct BmmShape {
    q: i64,
    m: i64,
    n: i64,
    k: i64,
    ta: bool,
    tb: bool,
    types: GemmTypes,
}

fn bmm_shape(params: &Value) -> Result<BmmShape> {
    let dtype = param_str(params, "dtype")?;
    let out = param_str_or(params, "out_dtype", dtype)?;
    ensure!(out == dtype, "out_dtype {out:?} differs from dtype {dtype:?}: the kernel stores C in the operands' type");
    ensure!(
        param_bool_or(params, "static_persistent", true)?,
        "static_persistent = false: this port has only the persistent bmm (tilegym's non-persistent bmm takes no transposes)"
    );
    Ok(BmmShape {
        q: param_i64(params, "batch")?,
        m: param_i64(params, "m")?,
        n: param_i64(params, "n")?,
        k: param_i64(params, "k")?,
        ta: param_bool_or(params, "transpose_a", false)?,
        tb: param_bool_or(params, "transpose_b", false)?,
        types: gemm_types(dtype)?,
    })
}

fn plan_bmm(params: &Value, d: Tiles, t: &Target) -> Result<Plan> {
    d.check()?;
    let s = bmm_shape(params)?;
    let GemmTypes { elem, bytes, mma } = s.types;
    let a_shape = if s.ta { [s.q, s.k, s.m] } else { [s.q, s.m, s.k] };
    let b_shape = if s.tb { [s.q, s.n, s.k] } else { [s.q, s.k, s.n] };
    for (name, shape) in [("a", a_shape), ("b", b_shape), ("c", [s.q, s.m, s.n])] {
        check_i32_elements(name, &shape)?;
    }
    let tensors = vec![
        TensorLayout::contiguous("a", &a_shape, bytes),
        TensorLayout::contiguous("b", &b_shape, bytes),
        TensorLayout::contiguous("c", &[s.q, s.m, s.n], bytes),
    ];
    let tiles = s.q * ceil_div(s.m, d.bm) * ceil_div(s.n, d.bn);
    let kernel = "bmm_persistent";
    let mut tuning = tiles_tuning(kernel, &d, s.types, "static persistent over batch x tiles: grid min(SMs / num_ctas, tiles) x occupancy");
    tuning.insert("transpose_a".into(), json!(s.ta));
    tuning.insert("transpose_b".into(), json!(s.tb));
    tuning.insert("output_tiles".into(), json!(tiles));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    let (ta, tb) = (i32::from(s.ta), i32::from(s.tb));
    Ok(Plan {
        kernel,
        elem,
        generics: [elem.to_string(), mma.to_string()]
            .into_iter()
            .chain([d.bm, d.bn, d.bk, GROUP_M, ta as i64, tb as i64, d.latency as i64].map(|v| v.to_string()))
            .collect(),
        args: tensors.iter().map(|x| tensor_arg(x, None)).collect(),
        tensors,
        grid: persistent_grid(tiles, &d, t.sm_count)?,
        stem: format!("{kernel}_{elem}_m{}n{}k{}_ta{ta}tb{tb}_c{}_o{}_l{}", d.bm, d.bn, d.bk, d.ctas, d.occupancy, d.latency),
        variant: d.name(),
        occupancy: Some(d.occupancy),
        worker_warps: None,
        extra_launches: Vec::new(),
        tuning,
    })
}

struct GroupShape {
    g: i64,
    m: i64,
    n: i64,
    k: i64,
    tb: bool,
    types: GemmTypes,
}

fn group_shape(params: &Value) -> Result<GroupShape> {
    let dtype = param_str(params, "dtype")?;
    let out = param_str_or(params, "out_dtype", dtype)?;
    ensure!(out == dtype, "out_dtype {out:?} differs from dtype {dtype:?}: the kernel stores C in the operands' type");
    Ok(GroupShape {
        g: param_i64(params, "num_groups")?,
        m: param_i64(params, "m")?,
        n: param_i64(params, "n")?,
        k: param_i64(params, "k")?,
        tb: param_bool_or(params, "transpose_b", false)?,
        types: gemm_types(dtype)?,
    })
}

fn plan_group_gemm(params: &Value, d: Tiles, t: &Target) -> Result<Plan> {
    d.check()?;
    let s = group_shape(params)?;
    let GemmTypes { elem, bytes, mma } = s.types;
    let b_shape = if s.tb { [s.n, s.k] } else { [s.k, s.n] };
    for (name, shape) in [("a_g", [s.m, s.k]), ("b_g", b_shape), ("c_g", [s.m, s.n])] {
        check_i32_elements(name, &shape)?;
    }
    // The tensors' views are built in the kernel from the tables' addresses (row-major, 16-byte
    // aligned bases); their row strides are K and N elements, declared divisible where they are.
    for (what, v) in [("k", s.k), ("n", s.n)] {
        ensure!(
            v * bytes as i64 % 16 == 0,
            "{what} = {v}: rows of {} bytes are not 16-byte aligned (the in-kernel views load through TMA)",
            v * bytes as i64
        );
    }
    let names = |p: &str| -> Vec<String> { (0..s.g).map(|i| format!("{p}{i}")).collect() };
    let per_group = ceil_div(s.m, d.bm) * ceil_div(s.n, d.bn);
    let tiles = s.g * per_group;
    let lit = |name: &str, v: i64| KernelArg::Scalar { name: name.into(), ty: ScalarType::I32, value: LitValue::Int(v) };
    let args = vec![
        KernelArg::PtrTable { name: "a_table".into(), tensors: names("a") },
        KernelArg::PtrTable { name: "b_table".into(), tensors: names("b") },
        KernelArg::PtrTable { name: "c_table".into(), tensors: names("c") },
        lit("groups", s.g),
        lit("m", s.m),
        lit("n", s.n),
        lit("k", s.k),
    ];
    let (kdiv, ndiv) = (div16(s.k), div16(s.n));
    ensure!(tiles <= i32::MAX as i64, "{tiles} output tiles exceed i32");
    let kernel = "group_gemm";
    let mut tuning = tiles_tuning(kernel, &d, s.types, "one launch over all groups, static persistent over groups x tiles: grid min(SMs / num_ctas, tiles) x occupancy");
    tuning.insert("transpose_b".into(), json!(s.tb));
    tuning.insert("output_tiles".into(), json!(tiles));
    tuning.insert(
        "tensors".into(),
        json!(format!(
            "a0..a{g1}, b0..b{g1}, c0..c{g1} through three ptr_table parameters (device arrays of their addresses); views built in the kernel with K and N rows divisible by {kdiv} and {ndiv} elements",
            g1 = s.g - 1
        )),
    );
    let tb = i32::from(s.tb);
    Ok(Plan {
        kernel,
        elem,
        generics: [elem.to_string(), mma.to_string()]
            .into_iter()
            .chain([d.bm, d.bn, d.bk, GROUP_M, tb as i64, d.latency as i64, kdiv, ndiv].map(|v| v.to_string()))
            .collect(),
        tensors: Vec::new(),
        args,
        grid: persistent_grid(tiles, &d, t.sm_count)?,
        stem: format!("{kernel}_{elem}_m{}n{}k{}_tb{tb}_c{}_o{}_l{}_kd{kdiv}nd{ndiv}", d.bm, d.bn, d.bk, d.ctas, d.occupancy, d.latency),
        variant: d.name(),
        occupancy: Some(d.occupancy),
        worker_warps: None,
        extra_launches: Vec::new(),
        tuning,
    })
}

/// splitk_reduce's shape: `TD` columns of the head per block (tilegym: min(128, pow2(D))), the
/// splits rounded up to a power of two, the occupancy hint, and whether the weighted sum is a
/// tensor-core product (`dot`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitkTiles {
    pub td: i64,
    pub occupancy: i32,
    pub dot: bool,
}

impl SplitkTiles {
    pub fn name(&self) -> String {
        format!("d{}_o{}{}", self.td, self.occupancy, if self.dot { "_dot" } else { "" })
    }
}

/// The fewest splits (rounded up to a power of two) the tensor-core weighted sum takes:
/// tilegym's sm_90 threshold for `USE_DOT`.
pub const SPLITK_DOT_MIN_SPLITS: i64 = 16;

/// The kernel's `DOT` generic for `s2` splits: refused below [`SPLITK_DOT_MIN_SPLITS`], where the
/// product would be mostly padding.
pub fn splitk_dot_generic(dot: bool, s2: i64) -> Result<&'static str> {
    if !dot {
        return Ok("0");
    }
    ensure!(s2 >= SPLITK_DOT_MIN_SPLITS, "{s2} splits: the tensor-core weighted sum takes {SPLITK_DOT_MIN_SPLITS} or more");
    Ok("1")
}

fn plan_splitk_reduce(params: &Value, d: SplitkTiles) -> Result<Plan> {
    let b = param_i64(params, "batch")?;
    let h = param_i64(params, "num_heads")?;
    let splits = param_i64(params, "num_kv_splits")?;
    let hd = param_i64(params, "head_dim")?;
    let s_kv = param_int_or(params, "S_kv", splits)?;
    ensure!(s_kv > 0, "S_kv must be positive, got {s_kv}");
    let dtype = param_str(params, "dtype")?;
    let (elem, bytes) = match dtype {
        "float16" => ("f16", 2),
        "bfloat16" => ("bf16", 2),
        "float32" => ("f32", 4),
        other => bail!("unsupported dtype {other:?} for splitk_reduce (float16, bfloat16, float32)"),
    };
    let lse = param_str_or(params, "lse_dtype", "float32")?;
    ensure!(lse == "float32", "lse_dtype {lse:?}: the kernel reads float32 LSEs");
    ensure!(d.td >= 16 && d.td & (d.td - 1) == 0, "head-dim tile {} must be a power of two >= 16", d.td);
    ensure!((1..=32).contains(&d.occupancy), "occupancy must be 1..=32, got {}", d.occupancy);
    // Splits past ceil(S_kv / len) hold no keys (reference/src/ops/splitk_reduce.cpp).
    let len = ceil_div(s_kv, splits);
    let valid = splits.min(ceil_div(s_kv, len));
    let s2 = pow2_ceil(splits);
    ensure!(s2 * d.td <= 65536, "{s2} splits x {} columns per block is too large a tile", d.td);
    let dot = splitk_dot_generic(d.dot, s2)?;
    let tensors = vec![
        TensorLayout::contiguous("partial_o", &[b, h, splits, hd], bytes),
        TensorLayout::contiguous("lse", &[b, h, splits], 4),
        TensorLayout::contiguous("o", &[b, h, hd], bytes),
    ];
    for x in &tensors {
        check_i32_elements(&x.name, &x.shape)?;
    }
    let mut args: Vec<KernelArg> = tensors.iter().map(|x| tensor_arg(x, None)).collect();
    args.push(KernelArg::Scalar { name: "valid".into(), ty: ScalarType::I32, value: LitValue::Int(valid) });
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("splitk_reduce"));
    tuning.insert("tile_d".into(), json!(d.td));
    tuning.insert("splits_tile".into(), json!(s2));
    tuning.insert("valid_splits".into(), json!(valid));
    tuning.insert("occupancy".into(), json!(d.occupancy));
    tuning.insert("load_latency".into(), json!(2));
    tuning.insert("weighted_sum".into(), json!(weighted_sum_name(d.dot)));
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "splitk_reduce",
        elem,
        // TMA loads and stores, as tilegym's (the decode plans' `_pl` reduce takes the other form).
        generics: vec![elem.to_string(), s2.to_string(), d.td.to_string(), dot.to_string(), "1".to_string()],
        args,
        grid: grid_of(&[b, h, hd], &[1, 1, d.td])?,
        tensors,
        stem: format!("splitk_reduce_{elem}_s{s2}_d{}_o{}{}", d.td, d.occupancy, if d.dot { "_dot" } else { "" }),
        variant: d.name(),
        occupancy: Some(d.occupancy),
        worker_warps: None,
        extra_launches: Vec::new(),
        tuning,
    })
}

/// splitk_reduce's default: tilegym's shape (`TILE_D = min(128, pow2(D))`) and hint:
/// `ByTarget(sm_80=2, default=4)` gives 2 on sm_90 (its exported Tile IR says `occupancy = 2`).
pub fn splitk_default(head_dim: i64) -> SplitkTiles {
    SplitkTiles { td: pow2_ceil(head_dim).clamp(16, 128), occupancy: 2, dot: false }
}

/// How the reduce forms its weighted sum, as the manifest records it.
pub fn weighted_sum_name(dot: bool) -> &'static str {
    if dot {
        "[1, S2] x [S2, TD] f32 tensor-core product (tilegym's USE_DOT)"
    } else {
        "elementwise product reduced over the splits"
    }
}

/// The default tiles of each tiled operator for this configuration.
fn default_for(op: &str, params: &Value, t: &Target) -> Result<Tiles> {
    let sms = t.sm_count;
    Ok(match op {
        "matmul" => {
            let s = matmul_shape(params)?;
            let schedule = if s.persistent { Schedule::Persistent } else { Schedule::PerTile };
            let d = default_tiles(s.types, schedule, s.ta);
            fit_tiles(d, |bm, bn| ceil_div(s.m, bm) * ceil_div(s.n, bn), sms)
        }
        "bmm" => {
            let s = bmm_shape(params)?;
            // tilegym's H200 winner (8 x 4096^3 f16: 1.51 ms); f16/bf16 only measured, the
            // operand-transposing types take the matmul defaults.
            let d = if s.types.bytes == 2 { tiles(256, 128, 64, 2, 2, 3) } else { default_tiles(s.types, Schedule::Persistent, s.ta) };
            fit_tiles(d, |bm, bn| s.q * ceil_div(s.m, bm) * ceil_div(s.n, bn), sms)
        }
        "group_gemm" => {
            let s = group_shape(params)?;
            let d = default_tiles(s.types, Schedule::Persistent, false);
            fit_tiles(d, |bm, bn| s.g * ceil_div(s.m, bm) * ceil_div(s.n, bn), sms)
        }
        _ => unreachable!("{op} is not a tiled product"),
    })
}

fn plan_tiled(op: &str, params: &Value, d: Tiles, t: &Target) -> Result<Plan> {
    match op {
        "matmul" => plan_matmul(params, d, t),
        "bmm" => plan_bmm(params, d, t),
        "group_gemm" => plan_group_gemm(params, d, t),
        _ => unreachable!("{op} is not a tiled product"),
    }
}

/// The default plan of a configuration of one of [`OPERATORS`]; `Ok(None)` for other operators.
pub fn plan(op: &str, params: &Value, o: Overrides, t: &Target) -> Result<Option<Plan>> {
    Ok(candidates(op, params, o, t)?.map(|c| c.plans.into_iter().next().expect("at least the default")))
}

/// The default plan and its alternatives (tilegym's candidates for the target and this port's;
/// names are the knobs, duplicates dropped); `Ok(None)` for operators not in [`OPERATORS`].
pub fn candidates(op: &str, params: &Value, o: Overrides, t: &Target) -> Result<Option<Candidates>> {
    if !OPERATORS.contains(&op) {
        return Ok(None);
    }
    ensure_no_overrides(op, o)?;
    let mut plans: Vec<Plan> = Vec::new();
    let mut push = |p: Plan| {
        if plans.iter().all(|q| q.variant != p.variant) {
            plans.push(p);
        }
    };
    if op == "splitk_reduce" {
        let hd = param_i64(params, "head_dim")?;
        let d = splitk_default(hd);
        push(plan_splitk_reduce(params, d)?);
        let alts = [
            SplitkTiles { occupancy: 4, ..d },
            SplitkTiles { occupancy: 8, ..d },
            SplitkTiles { td: (d.td / 2).max(16), ..d },
            SplitkTiles { td: d.td * 2, ..d },
            SplitkTiles { dot: true, ..d },
            SplitkTiles { dot: true, occupancy: 4, ..d },
            SplitkTiles { dot: true, td: (d.td / 2).max(16), ..d },
        ];
        for alt in alts {
            // An alternative outside the kernel's range for this shape is no candidate.
            if let Ok(p) = plan_splitk_reduce(params, alt) {
                push(p);
            }
        }
        return Ok(Some(Candidates { plans }));
    }
    let d = default_for(op, params, t)?;
    push(plan_tiled(op, params, d, t)?);
    let alts = match op {
        "matmul" => {
            let s = matmul_shape(params)?;
            matmul_candidates(if s.persistent { Schedule::Persistent } else { Schedule::PerTile }, s.types)
        }
        "bmm" => bmm_candidates(),
        _ => group_gemm_candidates(),
    };
    for alt in alts {
        if let Ok(p) = plan_tiled(op, params, alt, t) {
            push(p);
        }
    }
    Ok(Some(Candidates { plans }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{entry_params, Param};
    use std::sync::LazyLock;

    static H200: LazyLock<Target> = LazyLock::new(Target::h200);

    fn mm(m: i64, dtype: &str, sp: bool, ta: bool) -> Value {
        json!({"m": m, "n": m, "k": m, "offset_a": 0, "offset_b": 0, "dtype": dtype, "transpose_a": ta,
               "transpose_b": false, "static_persistent": sp, "use_tma": true})
    }

    fn default_plan(op: &str, c: &Value, t: &Target) -> Plan {
        plan(op, c, Overrides::default(), t).unwrap().unwrap()
    }

    #[test]
    fn matmul_defaults_follow_dtype_schedule_and_size() {
        let p = default_plan("matmul", &mm(4096, "float16", true, false), &H200);
        assert_eq!((p.kernel, p.variant.as_str()), ("matmul_persistent", "m128n128k64_c1_o1"));
        assert_eq!(p.generics, ["f16", "f16", "128", "128", "64", "8", "0", "0", "0"]);
        // 1024 tiles, 132 SMs: one block per SM.
        assert_eq!(p.grid, [132, 1, 1]);
        assert_eq!(num_ctas(&p), None);
        let p = default_plan("matmul", &mm(4096, "float16", false, false), &H200);
        assert_eq!((p.kernel, p.grid), ("matmul", [1024, 1, 1]));
        // f32 runs as tf32; the tiles that compile without a stack frame.
        let p = default_plan("matmul", &mm(4096, "float32", true, true), &H200);
        assert_eq!((p.generics[1].as_str(), p.variant.as_str(), p.generics[6].as_str()), ("tf32", "m64n64k32_c1_o1", "1"));
        let p = default_plan("matmul", &mm(8192, "float8_e4m3fn", false, false), &H200);
        assert_eq!((p.elem, p.variant.as_str()), ("f8e4m3fn", "m128n64k128_c1_o1"));
        // Transposed A is stored [K, M].
        let p = default_plan("matmul", &mm(2048, "float16", true, true), &H200);
        assert_eq!(p.tensors[0].shape, vec![2048, 2048]);
        let c = json!({"m": 64, "n": 128, "k": 32, "dtype": "float16", "transpose_a": true, "static_persistent": true});
        let p = default_plan("matmul", &c, &H200);
        assert_eq!((p.tensors[0].shape.clone(), p.tensors[1].shape.clone()), (vec![32, 64], vec![32, 128]));
        // Small problems: tiles halve (N first) down to 64 while there are fewer tiles than SMs.
        let p = default_plan("matmul", &mm(256, "float16", false, false), &H200);
        assert_eq!((p.variant.as_str(), p.grid), ("m64n64k64_c1_o1", [16, 1, 1]));
        let p = default_plan("matmul", &mm(64, "float16", true, false), &H200);
        assert_eq!((p.variant.as_str(), p.grid), ("m64n64k64_c1_o1", [1, 1, 1]));
        // The entry ABI: three tensors of rank 2, ptr + 2 extents + 2 strides each.
        let e = entry_params(&p.args);
        assert_eq!(e.len(), 15);
        assert_eq!(e[10].param, Param::Ptr { tensor: "c".into() });
        assert_eq!(p.tuning["use_tma"], json!("true (recorded, not interpreted: the kernel always loads through TMA views)"));
    }

    #[test]
    fn matmul_grids_count_clusters_and_follow_the_sm_count() {
        let c = mm(4096, "float16", true, false);
        let cands = candidates("matmul", &c, Overrides::default(), &H200).unwrap().unwrap();
        // tilegym's first persistent candidate: 128x512 tiles in clusters of 4 -> 132/4 = 33 clusters.
        let p = cands.find("m128n512k64_c4_o1").unwrap();
        assert_eq!((p.grid, num_ctas(p)), ([33, 1, 1], Some(4)));
        let p = cands.find("m256n128k64_c2_o2_l3").unwrap();
        assert_eq!((p.grid, p.occupancy, p.generics[8].as_str()), ([132, 1, 1], Some(2), "3"));
        // Another target: 16 SMs.
        let small = H200.with_sm_count(16);
        assert_eq!(default_plan("matmul", &c, &small).grid, [16, 1, 1]);
        // Small problems get smaller tiles until there are as many as SMs (16 here, 132 on the H200).
        let p = default_plan("matmul", &mm(512, "float16", true, false), &small);
        assert_eq!((p.variant.as_str(), p.grid), ("m128n128k64_c1_o1", [16, 1, 1]));
        assert_eq!(default_plan("matmul", &mm(512, "float16", true, false), &H200).variant, "m64n64k64_c1_o1");
        // The tile count caps a persistent grid: 2 x 1 tiles of 128x512 at 256.
        let cands = candidates("matmul", &mm(256, "float16", true, false), Overrides::default(), &H200).unwrap().unwrap();
        assert_eq!(cands.find("m128n512k64_c4_o1").unwrap().grid, [2, 1, 1]);
        // Non-persistent with clusters: one tile per cluster.
        let c = mm(4096, "float16", false, false);
        let p = candidates("matmul", &c, Overrides::default(), &H200).unwrap().unwrap();
        let p = p.find("m256n256k64_c2_o1").unwrap();
        assert_eq!((p.grid, num_ctas(p)), ([256, 1, 1], Some(2)));
    }

    #[test]
    fn matmul_candidates_include_tilegyms() {
        let names = |c: &Value| candidates("matmul", c, Overrides::default(), &H200).unwrap().unwrap().names().join(" ");
        let n = names(&mm(4096, "float16", false, false));
        assert_eq!(n, "m128n128k64_c1_o1 m128n128k32_c1_o1 m256n256k64_c2_o1 m256n256k64_c4_o1 m512n256k64_c2_o1 m128n256k64_c1_o1 m256n128k64_c2_o2_l3");
        // tf32 and fp8: tilegym's, then the tiles without a stack frame.
        let n = names(&mm(4096, "float32", true, true));
        assert!(n.starts_with("m64n64k32_c1_o1 m128n512k64_c4_o1 ") && n.ends_with(" m128n128k32_c1_o1 m128n64k32_c1_o1 m64n128k32_c1_o1"), "{n}");
        assert_eq!(n.split(' ').count(), 12);
        let n = names(&mm(4096, "float8_e4m3fn", false, false));
        assert!(n.ends_with(" m64n128k128_c1_o1 m64n64k128_c1_o1 m128n128k128_c1_o1"), "{n}");
        let n = names(&mm(4096, "float16", true, false));
        for v in ["m128n512k64_c4_o1", "m256n256k64_c2_o1", "m256n512k64_c2_o1", "m256n256k64_c2_o1_l4", "m256n256k64_c1_o1", "m256n256k128_c2_o1", "m256n128k32_c2_o1"] {
            assert!(n.split(' ').any(|x| x == v), "{v} missing from {n}");
        }
        // Names are unique.
        let all: Vec<&str> = n.split(' ').collect();
        let mut dedup = all.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(all.len(), dedup.len());
    }

    #[test]
    fn unsupported_matmul_configurations_say_why() {
        let err = |c: Value| plan("matmul", &c, Overrides::default(), &H200).unwrap_err().to_string();
        let mut c = mm(4096, "float16", false, false);
        c["offset_a"] = json!(3);
        assert!(err(c).contains("offset_a = 3 elements is not a multiple of 16 bytes"));
        let mut c = mm(4096, "float16", false, false);
        c["out_dtype"] = json!("float32");
        assert!(err(c).contains("out_dtype"));
        assert!(err(mm(4096, "int8", false, false)).contains("unsupported dtype \"int8\""));
        assert!(err(mm(65536, "float16", false, false)).contains("more than 2^31-1 elements"));
        let o = Overrides { tile: Some(64), ..Default::default() };
        assert!(plan("matmul", &mm(64, "float16", false, false), o, &H200).unwrap_err().to_string().contains("no suite tuning overrides"));
        // A transposed B ([N, K]) is a layout, not a refusal; an aligned offset is fine.
        let mut c = mm(4096, "bfloat16", false, false);
        c["transpose_b"] = json!(true);
        c["offset_b"] = json!(8);
        let p = default_plan("matmul", &c, &H200);
        assert_eq!((p.generics[7].as_str(), p.elem), ("1", "bf16"));
        assert!(plan("rope", &c, Overrides::default(), &H200).unwrap().is_none());
    }

    #[test]
    fn bmm_plans() {
        let c = json!({"batch": 8, "m": 4096, "n": 4096, "k": 4096, "transpose_a": true, "transpose_b": true, "dtype": "float16"});
        let p = default_plan("bmm", &c, &H200);
        // tilegym's H200 winner: 256x128x64, clusters of 2, occupancy 2, latency 3.
        assert_eq!((p.kernel, p.variant.as_str(), p.grid, num_ctas(&p)), ("bmm_persistent", "m256n128k64_c2_o2_l3", [132, 1, 1], Some(2)));
        assert_eq!((p.tensors[0].shape.clone(), p.tensors[1].shape.clone()), (vec![8, 4096, 4096], vec![8, 4096, 4096]));
        assert_eq!(&p.generics[6..], ["1", "1", "3"]);
        assert_eq!(entry_params(&p.args).len(), 21);
        let cands = candidates("bmm", &c, Overrides::default(), &H200).unwrap().unwrap();
        // 18 tilegym candidates (the default among them) and one without a cluster.
        assert_eq!(cands.plans.len(), 19);
        assert!(cands.find("m64n64k64_c2_o1_l3").is_some() && cands.find("m128n128k64_c1_o1").is_some());
        let c = json!({"batch": 2, "m": 100, "n": 64, "k": 32, "transpose_a": false, "transpose_b": true, "dtype": "float16"});
        let p = default_plan("bmm", &c, &H200);
        assert_eq!(p.tensors[1].shape, vec![2, 64, 32]);
        assert_eq!(p.variant, "m64n64k64_c2_o2_l3");
        assert!(plan("bmm", &json!({"batch": 2, "m": 64, "n": 64, "k": 64, "dtype": "float16", "static_persistent": false}), Overrides::default(), &H200).is_err());
    }

    #[test]
    fn group_gemm_binds_pointer_tables() {
        let c = json!({"num_groups": 4, "m": 2048, "n": 8192, "k": 2048, "transpose_b": true, "dtype": "float16"});
        let p = default_plan("group_gemm", &c, &H200);
        assert_eq!((p.kernel, p.variant.as_str(), p.grid), ("group_gemm", "m128n128k64_c1_o1", [132, 1, 1]));
        assert!(p.tensors.is_empty());
        let e = entry_params(&p.args);
        assert_eq!(e.len(), 7);
        assert_eq!(e[1].param, Param::PtrTable { tensors: vec!["b0".into(), "b1".into(), "b2".into(), "b3".into()] });
        let lits: Vec<_> = e[3..].iter().map(|x| x.param.clone()).collect();
        assert_eq!(lits, [4, 2048, 8192, 2048].map(|v| Param::Literal { ty: ScalarType::I32, value: LitValue::Int(v) }));
        assert_eq!(&p.generics[6..], ["1", "0", "16", "16"]);
        let names = candidates("group_gemm", &c, Overrides::default(), &H200).unwrap().unwrap().names().join(" ");
        assert_eq!(names, "m128n128k64_c1_o1 m128n128k128_c1_o1 m256n256k64_c2_o1 m256n128k64_c2_o2_l3");
        // K rows that are not 16-byte aligned cannot be TMA views.
        let bad = json!({"num_groups": 2, "m": 64, "n": 64, "k": 100, "dtype": "float16"});
        assert!(plan("group_gemm", &bad, Overrides::default(), &H200).unwrap_err().to_string().contains("not 16-byte aligned"));
        let ok = json!({"num_groups": 2, "m": 64, "n": 64, "k": 104, "dtype": "float16"});
        assert_eq!(&default_plan("group_gemm", &ok, &H200).generics[8..], ["8", "16"]);
    }

    #[test]
    fn splitk_reduce_plans() {
        let c = json!({"batch": 1, "num_heads": 32, "head_dim": 512, "num_kv_splits": 64, "S_kv": 8192, "dtype": "float16", "lse_dtype": "float32"});
        let p = default_plan("splitk_reduce", &c, &H200);
        assert_eq!((p.generics.clone(), p.grid, p.occupancy), (vec!["f16".to_string(), "64".into(), "128".into(), "0".into(), "1".into()], [1, 32, 4], Some(2)));
        let e = entry_params(&p.args);
        assert_eq!(e.len(), 9 + 7 + 7 + 1);
        assert_eq!(e.last().unwrap().param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(64) });
        let names = candidates("splitk_reduce", &c, Overrides::default(), &H200).unwrap().unwrap().names().join(" ");
        assert_eq!(names, "d128_o2 d128_o4 d128_o8 d64_o2 d256_o2 d128_o2_dot d128_o4_dot d64_o2_dot");
        let dot = plan_splitk_reduce(&c, SplitkTiles { dot: true, ..splitk_default(512) }).unwrap();
        assert_eq!((dot.generics[3].as_str(), dot.stem.as_str()), ("1", "splitk_reduce_f16_s64_d128_o2_dot"));
        // Below 16 splits tilegym forms the sum elementwise: no tensor-core variant.
        let c8 = json!({"batch": 1, "num_heads": 16, "head_dim": 512, "num_kv_splits": 8, "S_kv": 1024, "dtype": "float16"});
        let names = candidates("splitk_reduce", &c8, Overrides::default(), &H200).unwrap().unwrap().names().join(" ");
        assert_eq!(names, "d128_o2 d128_o4 d128_o8 d64_o2 d256_o2");
        let e = plan_splitk_reduce(&c8, SplitkTiles { dot: true, ..splitk_default(512) }).unwrap_err().to_string();
        assert_eq!(e, "8 splits: the tensor-core weighted sum takes 16 or more");
        // Splits past ceil(S_kv / ceil(S_kv / splits)) hold no keys: 3 splits of S_kv = 4 -> 2 valid.
        let c = json!({"batch": 2, "num_heads": 2, "head_dim": 100, "num_kv_splits": 3, "S_kv": 4, "dtype": "bfloat16"});
        let p = default_plan("splitk_reduce", &c, &H200);
        assert_eq!((p.tuning["valid_splits"].clone(), p.generics[1].as_str(), p.grid), (json!(2), "4", [2, 2, 1]));
        let c = json!({"batch": 1, "num_heads": 2, "head_dim": 64, "num_kv_splits": 2, "dtype": "float16", "lse_dtype": "float16"});
        assert!(plan("splitk_reduce", &c, Overrides::default(), &H200).unwrap_err().to_string().contains("lse_dtype"));
    }
}
