// SPDX-License-Identifier: Apache-2.0
//! Suite -> bundles: compile each configuration with cuTile Rust's compile-only API,
//! assemble it with `tileiras`, check the cubin against the ABI model, write manifests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, ensure, Context, Result};
use cutile::compile_api::KernelCompiler;
use cutile::cutile_compiler::hints::CompileOptions;
use cutile_ir::bytecode::BytecodeVersion;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::abi::{self, EntryParam, Param};
use crate::elf::Cubin;
use crate::plan::{self, Plan};
use crate::portbench_kernels;
use crate::target::Target;
use crate::tuning::TuningRecord;

/// The `cutile` crate version this exporter is pinned to (Cargo.toml `=0.5.0`; a unit
/// test keeps the two in step).
pub const CUTILE_VERSION: &str = "0.5.0";
pub const FRONTEND: &str = "cutile_rust";
pub const SCHEMA: &str = "portbench.bundle/1";
/// The module that holds the kernels (`#[cutile::module] mod portbench_kernels`).
pub const MODULE: &str = "portbench_kernels";
/// `tileiras --opt-level`.
pub const OPT_LEVEL: u32 = 3;

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// `tileiras` and what it reports about itself.
#[derive(Clone, Debug)]
pub struct Toolchain {
    pub tileiras: PathBuf,
    /// e.g. `13.4.92`, from the `V13.4.92` of `tileiras --version`.
    pub tileiras_version: String,
    /// The release and build lines of `tileiras --version`.
    pub tileiras_version_text: String,
    /// Tile IR bytecode version written, negotiated with `tileiras --list-versions`.
    pub bytecode: BytecodeVersion,
}

/// `release 13.4, V13.4.92` -> `13.4.92`.
pub fn parse_tileiras_version(text: &str) -> Option<String> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('V').filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit())))
        .map(|v| v.trim_end_matches(',').to_string())
}

impl Toolchain {
    pub fn new(tileiras: &Path) -> Result<Toolchain> {
        let out = Command::new(tileiras)
            .arg("--version")
            .output()
            .with_context(|| format!("cannot run {} --version", tileiras.display()))?;
        ensure!(out.status.success(), "{} --version failed: {}", tileiras.display(), out.status);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let tileiras_version =
            parse_tileiras_version(&text).with_context(|| format!("no version in tileiras --version: {text}"))?;
        let tileiras_version_text = text
            .lines()
            .filter(|l| l.starts_with("Cuda compilation tools") || l.starts_with("Build "))
            .collect::<Vec<_>>()
            .join("; ");
        // The newest bytecode version both cutile-ir and this tileiras accept.
        let bytecode = cutile_ir::toolchain::negotiate_bytecode_version(tileiras, None)
            .with_context(|| format!("negotiating the Tile IR bytecode version with {}", tileiras.display()))?;
        Ok(Toolchain { tileiras: tileiras.to_path_buf(), tileiras_version, tileiras_version_text, bytecode })
    }

    pub fn manifest_json(&self) -> Value {
        json!({
            "cutile": CUTILE_VERSION,
            "tileiras": self.tileiras_version,
            "tileiras_version": self.tileiras_version_text,
            "tileir_bytecode": format!("{}.{}", self.bytecode.major, self.bytecode.minor),
        })
    }

    /// `tileiras --gpu-name <arch> --opt-level 3 -o <cubin> <bc>` (`arch`: the target's, `sm_90`).
    pub fn assemble(&self, bc: &Path, cubin: &Path, arch: &str) -> Result<()> {
        let out = Command::new(&self.tileiras)
            .args(["--gpu-name", arch, "--opt-level", &OPT_LEVEL.to_string(), "-o"])
            .arg(cubin)
            .arg(bc)
            .output()
            .with_context(|| format!("cannot run {}", self.tileiras.display()))?;
        if !out.status.success() {
            bail!(
                "tileiras failed ({}) on {}:\n{}{}",
                out.status,
                bc.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }
}

/// `tileiras` to use: `$CUTILE_TILEIRAS_PATH`, else the project venv's pip wheel
/// (`<repo>/.venv/lib/python3*/site-packages/nvidia/cu13/bin/tileiras`).
pub fn find_tileiras() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("CUTILE_TILEIRAS_PATH").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let lib = repo.join(".venv/lib");
    if let Ok(entries) = std::fs::read_dir(&lib) {
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path().join("site-packages/nvidia/cu13/bin/tileiras"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        if let Some(p) = found.pop() {
            return Ok(p);
        }
    }
    bail!("tileiras not found: set CUTILE_TILEIRAS_PATH or run scripts/setup.sh (pip venv at {})", lib.display())
}

/// One configuration of a suite.
#[derive(Clone, Debug)]
pub struct SuiteConfig {
    pub op: String,
    pub params: Value,
    /// Tuning overrides: the suite entry's optional `"tuning"` object (`block_rows`, `tile`,
    /// `occupancy`, `worker_warps`, `compute`), for tile experiments; they pin the plan (no
    /// variants) and the manifest records what was used.
    pub overrides: plan::Overrides,
}

pub fn read_suite(path: &Path) -> Result<Vec<SuiteConfig>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading suite {}", path.display()))?;
    let v: Value = serde_json::from_str(&text).with_context(|| format!("parsing suite {}", path.display()))?;
    let configs = v.get("configs").and_then(Value::as_array).context("suite has no \"configs\" array")?;
    configs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let op = c.get("op").and_then(Value::as_str).with_context(|| format!("config {i} has no \"op\""))?;
            let params = c
                .get("params")
                .filter(|p| p.is_object())
                .with_context(|| format!("config {i} has no \"params\" object"))?;
            let overrides = read_overrides(c.get("tuning")).with_context(|| format!("config {i}: \"tuning\""))?;
            Ok(SuiteConfig { op: op.to_string(), params: params.clone(), overrides })
        })
        .collect()
}

fn read_overrides(tuning: Option<&Value>) -> Result<plan::Overrides> {
    let mut o = plan::Overrides::default();
    let Some(t) = tuning else { return Ok(o) };
    let t = t.as_object().context("must be an object")?;
    for (k, v) in t {
        if k == "compute" {
            let c = v.as_str().with_context(|| format!("compute must be a string, got {v}"))?;
            o.compute = Some(plan::Compute::parse(c)?);
            continue;
        }
        // occupancy 0: no hint (tileiras chooses).
        let least = if k == "occupancy" { 0 } else { 1 };
        let v = v
            .as_i64()
            .filter(|&v| v >= least && v <= i32::MAX as i64)
            .with_context(|| format!("{k} must be an integer >= {least}, got {v}"))?;
        match k.as_str() {
            "block_rows" => o.block_rows = Some(v),
            "tile" => o.tile = Some(v),
            "occupancy" => o.occupancy = Some(v as i32),
            "worker_warps" => o.worker_warps = Some(v as i32),
            other => bail!("unknown key {other:?} (block_rows, tile, occupancy, worker_warps, compute)"),
        }
    }
    Ok(o)
}

/// The output of the compile-only API for one plan.
#[derive(Clone)]
pub struct Compiled {
    pub entry: String,
    pub ir_text: String,
    pub bytecode: Vec<u8>,
    pub launch_checks: Vec<String>,
}

/// Compiles a plan's kernel with `cutile::compile_api::KernelCompiler` for `arch`. Needs a
/// thread with a large stack (the compiler recurses deeply); [`run_with_stack`] gives one.
pub fn compile(p: &Plan, tc: &Toolchain, arch: &str) -> Result<Compiled> {
    let strides: Vec<(String, Vec<i32>)> = p.tensors.iter().map(|t| (t.name.clone(), t.static_strides())).collect();
    let stride_refs: Vec<(&str, &[i32])> = strides.iter().map(|(n, s)| (n.as_str(), s.as_slice())).collect();
    let specs: Vec<(String, _)> = p.tensors.iter().map(|t| (t.name.clone(), t.spec())).collect();
    let spec_refs: Vec<(&str, _)> = specs.iter().map(|(n, s)| (n.as_str(), s.clone())).collect();
    let mut options = CompileOptions::default();
    if let Some(occ) = p.occupancy {
        options = options.occupancy(occ);
    }
    if let Some(w) = p.worker_warps {
        options = options.num_worker_warps_per_cta(w);
    }
    if let Some(n) = crate::gemm::plan::num_ctas(p) {
        options = options.num_cta_in_cga(n);
    }
    // The matrix products, the attention and the decode kernels live in modules of their own.
    let (module_ast, module): (fn() -> cutile::cutile_compiler::ast::Module, &str) = crate::gemm::module_of(p.kernel)
        .or_else(|| crate::attn::module_of(p.kernel))
        .or_else(|| crate::gdr::module_of(p.kernel))
        .or_else(|| crate::moe::module_of(p.kernel))
        .or_else(|| crate::decode::module_of(p.kernel))
        .unwrap_or((portbench_kernels::__module_ast_self, MODULE));
    let artifacts = KernelCompiler::new(module_ast, module, p.kernel)
        .options(options)
        .generics(p.generics.clone())
        .strides(&stride_refs)
        .spec_args(&spec_refs)
        .target(arch)
        .bytecode_version(tc.bytecode)
        .compile()
        .map_err(|e| anyhow::anyhow!("cuTile compile of {} {:?} failed: {e}", p.kernel, p.generics))?;
    let bytecode =
        artifacts.bytecode().map_err(|e| anyhow::anyhow!("bytecode serialisation of {} failed: {e}", p.kernel))?;
    Ok(Compiled {
        // cutile-compiler's KernelNaming::entry_name: `<kernel>_entry`.
        entry: format!("{}_entry", p.kernel),
        ir_text: artifacts.ir_text(),
        bytecode,
        launch_checks: artifacts.launch_checks().iter().map(|c| format!("{c:?}")).collect(),
    })
}

/// Everything [`compile`] reads from a plan: plans with equal keys compile to the same Tile IR
/// (the same kernel, generics, static strides, specialisation and hints), so one compile serves
/// all of them (a tuning variant recurs in every configuration of an operator).
pub fn compile_key(p: &Plan) -> String {
    let tensors: Vec<String> = p
        .tensors
        .iter()
        .map(|t| {
            let s = t.spec();
            format!(
                "{}:{:?}:{:?}:{:?}:{}",
                t.name,
                t.static_strides(),
                s.shape_div.iter().map(|h| h.divisor).collect::<Vec<_>>(),
                s.stride_div.iter().map(|h| h.divisor).collect::<Vec<_>>(),
                s.base_ptr_div.divisor
            )
        })
        .collect();
    format!(
        "{}|{:?}|{}|occ {:?}|warps {:?}|ctas {:?}",
        p.kernel,
        p.generics,
        tensors.join(";"),
        p.occupancy,
        p.worker_warps,
        crate::gemm::plan::num_ctas(p)
    )
}

/// Checks the cluster shape a plan declares (`[ctas, 1, 1]`, `ctas` 1 for none) against what the
/// cubin's entry is compiled for (EIATTR_CTA_PER_CLUSTER, EIATTR_BLOCKS_ARE_CLUSTERS): the
/// harness makes the same check, and counts the grid in clusters when the cubin says so.
pub fn check_cluster(cubin: &Cubin, entry: &str, ctas: u32) -> Result<()> {
    let k = cubin.kernel(entry).with_context(|| format!("entry {entry} not in cubin"))?;
    let want = (ctas > 1).then_some([ctas, 1, 1]);
    ensure!(k.cluster == want, "{entry}: the cubin's cluster shape is {:?}, the plan's {:?}", k.cluster, want);
    ensure!(
        k.blocks_are_clusters == (ctas > 1),
        "{entry}: BLOCKS_ARE_CLUSTERS is {} in the cubin for a plan of {ctas} CTA(s) per cluster",
        k.blocks_are_clusters
    );
    Ok(())
}

/// Checks a manifest parameter list against the cubin's own table for `entry`.
pub fn check_against_cubin(cubin: &Cubin, entry: &str, params: &[Param]) -> Result<()> {
    let k = cubin.kernel(entry).with_context(|| {
        format!("entry {entry} not in cubin (kernels: {:?})", cubin.kernels.iter().map(|k| &k.name).collect::<Vec<_>>())
    })?;
    let (offsets, total) = abi::layout(params);
    ensure!(
        k.params.len() == params.len(),
        "{entry}: cubin KPARAM_INFO lists {} parameters, the manifest {}",
        k.params.len(),
        params.len()
    );
    for (i, (kp, p)) in k.params.iter().zip(params).enumerate() {
        ensure!(kp.ordinal as usize == i, "{entry}: KPARAM ordinals are not 0..n");
        ensure!(
            kp.offset as u32 == offsets[i] && kp.size == p.size(),
            "{entry}: parameter {i} is {} bytes at {} in the cubin, {} bytes at {} in the manifest",
            kp.size,
            kp.offset,
            p.size(),
            offsets[i]
        );
    }
    // tileiras may reserve a larger parameter bank than the parameters fill (rms_norm
    // cubins from tileiras 13.4 declare 0x1f0 bytes for 84 bytes of parameters, with
    // EIATTR_KPARAM_INFO_V2), so the bank must hold the parameters, not equal them.
    if let Some(bytes) = k.param_bytes {
        ensure!(bytes >= total, "{entry}: CBANK_PARAM_SIZE {bytes} < manifest parameter bytes {total}");
    }
    Ok(())
}

/// One launch plan as the manifest writes it (a configuration's chosen plan, or one of its
/// `variants`): `{"tuning", "scratch", "launches"}`, one launch per `(grid, parameters)` (the
/// plan's first launch and its `extra_launches`), all of `entry` in `cubin_file`.
pub fn plan_json(p: &Plan, cubin_file: &str, entry: &str, launches: &[([u32; 3], Vec<EntryParam>)]) -> Value {
    // A Tile IR cubin compiled for clusters counts its grid in clusters (CONTRACT item 6).
    let cluster = [crate::gemm::plan::num_ctas(p).unwrap_or(1), 1, 1];
    let launches: Vec<Value> = launches
        .iter()
        .map(|(grid, entry_params)| {
            json!({
                "cubin": cubin_file,
                "entry": entry,
                "grid": grid,
                "block": [1, 1, 1],
                "shared_bytes": 0,
                "cluster": cluster,
                "params": entry_params.iter().map(|e| e.param.to_json()).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({"tuning": Value::Object(p.tuning.clone()), "scratch": [], "launches": launches})
}

/// Where a configuration's chosen plan came from (`tuning.tuning_source`).
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// The suite entry's `tuning` overrides pinned the plan.
    Overrides,
    /// A tuning record named the variant.
    Record(String),
    /// The heuristic's plan; the string says why no record chose.
    Default(String),
}

impl Source {
    pub fn text(&self) -> String {
        match self {
            Source::Overrides => "suite tuning overrides".into(),
            Source::Record(path) => format!("record {path}"),
            Source::Default(why) => format!("default: {why}"),
        }
    }
}

/// The manifest's `configs[]` entry: the chosen plan's `tuning` (with `variant` and
/// `tuning_source`), `scratch` and `launches`, and, when there are several candidates, every
/// candidate (the chosen one included) as `variants[]` with its `name`.
pub fn config_json(params: &Value, chosen: &Value, variant: &str, source: &Source, variants: &[(String, Value)]) -> Value {
    let mut tuning = chosen["tuning"].clone();
    tuning["variant"] = json!(variant);
    tuning["tuning_source"] = json!(source.text());
    let mut c = json!({
        "params": params,
        "tuning": tuning,
        "scratch": chosen["scratch"].clone(),
        "launches": chosen["launches"].clone(),
    });
    if variants.len() > 1 {
        c["variants"] = Value::Array(
            variants
                .iter()
                .map(|(name, v)| {
                    json!({"name": name, "tuning": v["tuning"], "scratch": v["scratch"], "launches": v["launches"]})
                })
                .collect(),
        );
    }
    c
}

/// What [`export`] wrote.
#[derive(Debug, Default)]
pub struct Report {
    /// operator -> manifest path.
    pub manifests: BTreeMap<String, PathBuf>,
    /// `(op, params, reason)` for configurations of supported operators that were skipped.
    pub skipped: Vec<(String, Value, String)>,
    /// Configurations whose operator this front end does not have.
    pub unsupported: usize,
    /// Configurations exported, and how many of them list tuning variants.
    pub exported: usize,
    pub with_variants: usize,
    /// Configurations whose plan a tuning record chose.
    pub from_record: usize,
    /// Per supported operator of the suite: its configurations in the suite.
    pub suite_configs: BTreeMap<String, usize>,
}

/// `op/k1=v1,k2=v2` with the keys sorted, as `reference::config::id()` spells a configuration
/// (null `None`, booleans `true`/`false`, integers in decimal, reals in their shortest
/// round-trip form with C++'s exponent style: `1e-05`), so skip lines join with portbench's
/// own lists.
pub fn config_id(op: &str, params: &Value) -> String {
    fn real(x: f64) -> String {
        if x.is_finite() && x == x.trunc() && x.abs() < 1e16 {
            return format!("{}", x as i64);
        }
        let fixed = format!("{x}");
        // Rust's `{:e}` is `1e-5`; std::to_chars writes `1e-05` (sign, at least two digits).
        let sci = format!("{x:e}");
        let sci = match sci.split_once('e') {
            Some((m, e)) => {
                let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
                format!("{m}e{sign}{digits:0>2}")
            }
            None => sci,
        };
        if sci.len() < fixed.len() { sci } else { fixed }
    }
    let mut keys: Vec<(&String, &Value)> = params.as_object().map(|o| o.iter().collect()).unwrap_or_default();
    keys.sort_by(|a, b| a.0.cmp(b.0));
    let kv: Vec<String> = keys
        .into_iter()
        .map(|(k, v)| {
            let text = match v {
                Value::Null => "None".to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
                Value::Number(n) => real(n.as_f64().unwrap_or(f64::NAN)),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!("{k}={text}")
        })
        .collect();
    format!("{op}/{}", kv.join(","))
}

/// How [`export`] chooses and targets: the target GPU, an optional tuning record, and whether
/// to write the chosen plans only (no `variants`: quicker exports for checks that need no
/// tuning candidates).
#[derive(Clone, Debug)]
pub struct Options {
    pub target: Target,
    pub tuning: Option<TuningRecord>,
    pub chosen_only: bool,
}

/// Exports every configuration of `suite` whose operator is in [`plan::OPERATORS`] to
/// `out/<operator>/`. The operator folders are recreated; nothing else is touched.
pub fn export(suite: &Path, out: &Path, tc: &Toolchain, opts: &Options) -> Result<Report> {
    export_configs(&read_suite(suite)?, out, tc, opts)
}

/// [`export`] for configurations already in memory.
pub fn export_configs(configs: &[SuiteConfig], out: &Path, tc: &Toolchain, opts: &Options) -> Result<Report> {
    let mut report = Report::default();
    let scratch = std::env::temp_dir().join(format!("portbench-cutile-rust-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let result = export_into(configs, out, tc, opts, &scratch, &mut report);
    let _ = std::fs::remove_dir_all(&scratch);
    result.map(|_| report)
}

/// One operator's bundle being written: its folder and the cubins built so far.
struct OpBundle<'a> {
    dir: PathBuf,
    op: &'a str,
    tc: &'a Toolchain,
    target: &'a Target,
    scratch: &'a Path,
    cubins: Vec<Value>,
    /// cubin file -> parsed cubin, for plans that share a specialisation.
    built: BTreeMap<String, Cubin>,
    /// [`compile_key`] -> what cuTile compiled for it and the cubin file tileiras made of it.
    compiled: BTreeMap<String, (Compiled, String)>,
}

impl OpBundle<'_> {
    /// Compiles `p` (cuTile and tileiras once per [`compile_key`]), checks it against the ABI model
    /// and the cubin, and returns its [`plan_json`].
    fn add_plan(&mut self, p: &Plan, params: &Value) -> Result<Value> {
        let op = self.op;
        let key = compile_key(p);
        if !self.compiled.contains_key(&key) {
            let c = compile(p, self.tc, &self.target.arch)?;
            let cubin_file = self.assemble(p, &c)?;
            self.compiled.insert(key.clone(), (c, cubin_file));
        }
        let (compiled, cubin_file) = &self.compiled[&key];
        let entry_params = abi::entry_params(&p.args);
        let ir_params = abi::ir_entry_params(&compiled.ir_text, &compiled.entry)
            .with_context(|| format!("no entry @{} in the Tile IR", compiled.entry))?;
        abi::check_against_ir(&entry_params, &ir_params)
            .with_context(|| format!("{op} {params} ({}): Tile IR entry vs ABI model", p.variant))?;
        let mut launches = vec![(p.grid, entry_params)];
        launches.extend(p.extra_launches.iter().map(|l| (l.grid, abi::entry_params(&l.args))));
        for (i, (_, ep)) in launches.iter().enumerate() {
            abi::check_against_ir(ep, &ir_params)
                .with_context(|| format!("{op} {params} ({}): launch {i}: Tile IR entry vs ABI model", p.variant))?;
            let params_list: Vec<Param> = ep.iter().map(|e| e.param.clone()).collect();
            check_against_cubin(&self.built[cubin_file], &compiled.entry, &params_list)
                .with_context(|| format!("{op} {params} ({}): launch {i}: manifest parameters vs cubin", p.variant))?;
        }
        let ctas = crate::gemm::plan::num_ctas(p).unwrap_or(1) as u32;
        check_cluster(&self.built[cubin_file], &compiled.entry, ctas)
            .with_context(|| format!("{op} {params} ({}): cluster vs cubin", p.variant))?;
        let mut pj = plan_json(p, cubin_file, &compiled.entry, &launches);
        if !compiled.launch_checks.is_empty() {
            pj["tuning"]["launch_checks"] = json!(compiled.launch_checks);
        }
        Ok(pj)
    }

    /// Assembles `c` with tileiras and returns the cubin's file name, `<stem>_<sha256 of the
    /// cubin>`. Named by the cubin, not the bytecode: cutile 0.5.0 writes a kernel's optimization
    /// hints in no fixed order, so one compile's bytecode differs from run to run while tileiras's
    /// cubin does not, and names must not change between exports of the same code.
    fn assemble(&mut self, p: &Plan, c: &Compiled) -> Result<String> {
        let scratch_stem = format!("{}_{}", p.stem, &sha256_hex(&c.bytecode)[..16]);
        let bc = self.scratch.join(format!("{scratch_stem}.bc"));
        std::fs::write(&bc, &c.bytecode)?;
        let assembled = self.scratch.join(format!("{scratch_stem}.cubin"));
        self.tc.assemble(&bc, &assembled, &self.target.arch)?;
        let bytes = std::fs::read(&assembled)?;
        let stem = format!("{}_{}", p.stem, &sha256_hex(&bytes)[..8]);
        let cubin_file = format!("{stem}.cubin");
        if !self.built.contains_key(&cubin_file) {
            let cubin = Cubin::parse(&bytes).with_context(|| format!("reading {} (from {})", cubin_file, bc.display()))?;
            let sm = self.target.sm();
            ensure!(cubin.sm() == sm, "{cubin_file}: ELF targets sm_{}, expected sm_{sm}", cubin.sm());
            std::fs::write(self.dir.join(&cubin_file), &bytes)?;
            let ir_file = format!("{stem}.tileir.txt");
            std::fs::write(self.dir.join(&ir_file), &c.ir_text)?;
            self.cubins.push(json!({"file": cubin_file, "sha256": sha256_hex(&bytes), "ir": [ir_file]}));
            self.built.insert(cubin_file.clone(), cubin);
        }
        Ok(cubin_file)
    }

    /// A multi-kernel plan: every stage compiled and checked as [`OpBundle::add_plan`] does,
    /// their launches in order, the plan's scratch buffers, and each stage's tuning under
    /// `tuning.stages`.
    fn add_staged(&mut self, s: &crate::decode::plan::StagedPlan, params: &Value) -> Result<Value> {
        let mut launches = Vec::new();
        let mut stages = Vec::new();
        for (i, stage) in s.stages.iter().enumerate() {
            let pj = self.add_plan(stage, params).with_context(|| format!("{} ({}): stage {i} ({})", self.op, s.variant, stage.kernel))?;
            launches.extend(pj["launches"].as_array().cloned().unwrap_or_default());
            stages.push(pj["tuning"].clone());
        }
        let mut tuning = Value::Object(s.tuning.clone());
        tuning["stages"] = Value::Array(stages);
        let scratch: Vec<Value> = s.scratch.iter().map(|b| json!({"name": b.name, "bytes": b.bytes, "init": "none"})).collect();
        Ok(json!({"tuning": tuning, "scratch": scratch, "launches": launches}))
    }
}

fn export_into(
    configs: &[SuiteConfig],
    out: &Path,
    tc: &Toolchain,
    opts: &Options,
    scratch: &Path,
    report: &mut Report,
) -> Result<()> {
    let target = &opts.target;
    for &op in plan::OPERATORS {
        let mine: Vec<&SuiteConfig> = configs.iter().filter(|c| c.op == op).collect();
        if mine.is_empty() {
            continue;
        }
        let dir = out.join(op);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("clearing {}", dir.display()))?;
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut bundle =
            OpBundle { dir: dir.clone(), op, tc, target, scratch, cubins: Vec::new(), built: BTreeMap::new(), compiled: BTreeMap::new() };
        let mut manifest_configs = Vec::new();
        // The configurations this operator's kernels cannot express, with the reason: the
        // manifest's `unsupported[]`, which `portbench run` prints in its unpaired list.
        let mut unsupported = Vec::new();
        report.suite_configs.insert(op.to_string(), mine.len());
        for cfg in mine {
            if crate::decode::plan::OPERATORS.contains(&op) || crate::moe::plan::STAGED.contains(&op) || crate::gdr::plan::OPERATORS.contains(&op) {
                // Multi-kernel plans (decode attention, moe, the gated delta rule): stage by stage.
                let cands = match staged_candidates(op, &cfg.params, cfg.overrides, target) {
                    Ok(Some(c)) => c,
                    Ok(None) => unreachable!("{op} has multi-kernel plans"),
                    Err(e) => {
                        let why = format!("{e:#}").replace('\n', " ");
                        unsupported.push(json!({"params": cfg.params, "reason": why}));
                        report.skipped.push((op.to_string(), cfg.params.clone(), why));
                        continue;
                    }
                };
                let names: Vec<&str> = cands.iter().map(|p| p.variant.as_str()).collect();
                let (chosen, source) = choose_named(&names, op, &cfg.params, cfg.overrides, opts.tuning.as_ref())?;
                let mut variants = Vec::new();
                for p in cands.iter().filter(|p| !opts.chosen_only || p.variant == chosen) {
                    variants.push((p.variant.clone(), bundle.add_staged(p, &cfg.params)?));
                }
                let chosen_json = &variants.iter().find(|(n, _)| *n == chosen).expect("chosen is a candidate").1;
                manifest_configs.push(config_json(&cfg.params, chosen_json, &chosen, &source, &variants));
                report.exported += 1;
                report.with_variants += usize::from(variants.len() > 1);
                report.from_record += usize::from(matches!(source, Source::Record(_)));
                continue;
            }
            let cands = match plan::candidates(op, &cfg.params, cfg.overrides, target) {
                Ok(Some(c)) => c,
                Ok(None) => unreachable!("{op} is in OPERATORS"),
                Err(e) => {
                    let why = format!("{e:#}").replace('\n', " ");
                    unsupported.push(json!({"params": cfg.params, "reason": why}));
                    report.skipped.push((op.to_string(), cfg.params.clone(), why));
                    continue;
                }
            };
            let (chosen, source) = choose(&cands, op, &cfg.params, cfg.overrides, opts.tuning.as_ref())?;
            let mut variants = Vec::new();
            for p in cands.plans.iter().filter(|p| !opts.chosen_only || p.variant == chosen) {
                variants.push((p.variant.clone(), bundle.add_plan(p, &cfg.params)?));
            }
            let chosen_json = &variants.iter().find(|(n, _)| *n == chosen).expect("chosen is a candidate").1;
            manifest_configs.push(config_json(&cfg.params, chosen_json, &chosen, &source, &variants));
            report.exported += 1;
            report.with_variants += usize::from(variants.len() > 1);
            report.from_record += usize::from(matches!(source, Source::Record(_)));
        }
        if manifest_configs.is_empty() {
            // Every configuration was skipped: no bundle (a manifest without cubins is invalid).
            std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
            continue;
        }
        let mut manifest = json!({
            "schema": SCHEMA,
            "frontend": FRONTEND,
            "operator": op,
            "arch": target.arch,
            "target": target.manifest_json(),
            "toolchain": tc.manifest_json(),
            "cubins": bundle.cubins,
            "configs": manifest_configs,
        });
        if !unsupported.is_empty() {
            manifest["unsupported"] = Value::Array(unsupported);
        }
        let path = dir.join("manifest.json");
        std::fs::write(&path, serde_json::to_string_pretty(&manifest)? + "\n")?;
        report.manifests.insert(op.to_string(), path);
    }
    report.unsupported = configs.iter().filter(|c| !plan::OPERATORS.contains(&c.op.as_str())).count();
    Ok(())
}

/// The multi-kernel plans of an operator of `crate::decode`, `crate::gdr` or `crate::moe`.
fn staged_candidates(
    op: &str,
    params: &Value,
    o: plan::Overrides,
    t: &crate::target::Target,
) -> Result<Option<Vec<crate::decode::plan::StagedPlan>>> {
    if let Some(c) = crate::decode::plan::candidates(op, params, o, t)? {
        return Ok(Some(c));
    }
    if let Some(c) = crate::gdr::plan::staged_candidates(op, params, o, t)? {
        return Ok(Some(c));
    }
    crate::moe::plan::staged_candidates(op, params, o, t)
}

/// The variant a configuration gets and why: the suite's overrides pin it; else the tuning
/// record's choice (an error if the record names a variant this configuration does not
/// have); else the heuristic's plan.
pub fn choose(
    cands: &plan::Candidates,
    op: &str,
    params: &Value,
    overrides: plan::Overrides,
    record: Option<&TuningRecord>,
) -> Result<(String, Source)> {
    choose_named(&cands.names(), op, params, overrides, record)
}

/// [`choose`] among candidates given by name, the default first.
pub fn choose_named(
    names: &[&str],
    op: &str,
    params: &Value,
    overrides: plan::Overrides,
    record: Option<&TuningRecord>,
) -> Result<(String, Source)> {
    let default = names[0].to_string();
    if overrides != plan::Overrides::default() {
        return Ok((default, Source::Overrides));
    }
    let Some(record) = record else {
        return Ok((default, Source::Default("no tuning record; the exporter's heuristic".into())));
    };
    match record.lookup(op, params) {
        Some(name) => {
            ensure!(
                names.contains(&name),
                "{}: choice for {op} {params} names variant {name:?}, which this configuration does not have \
                 (variants: {})",
                record.path,
                names.join(", ")
            );
            Ok((name.to_string(), Source::Record(record.path.clone())))
        }
        None => Ok((default, Source::Default(format!("not in tuning record {}; the exporter's heuristic", record.path)))),
    }
}

/// Runs `f` on a thread with a 256 MiB stack (cutile's compiler recurses deeply).
pub fn run_with_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .name("cutile-export".into())
        .stack_size(256 << 20)
        .spawn(f)
        .expect("spawning the export thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{KernelArg, LitValue, ScalarType};
    use crate::elf::{KParam, KernelInfo};
    use crate::target::Target;

    #[test]
    fn tileiras_version_parsing() {
        let text = "tileiras: NVIDIA (R) Cuda Tile IR optimizing assembler\nCopyright (c) 2005-2026 NVIDIA Corporation\nBuilt on Tue_Sep__1_09:35:26_PDT_2026\nCuda compilation tools, release 13.4, V13.4.92\nBuild local.local.38855100_\n";
        assert_eq!(parse_tileiras_version(text).as_deref(), Some("13.4.92"));
        assert_eq!(parse_tileiras_version("nothing here"), None);
    }

    #[test]
    fn cutile_pin_matches_lockfile_and_manifest() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let toml = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(
            toml.contains(&format!("cutile = \"={CUTILE_VERSION}\"")),
            "Cargo.toml must pin cutile ={CUTILE_VERSION}"
        );
        let lock = std::fs::read_to_string(dir.join("Cargo.lock")).unwrap();
        assert!(lock.contains(&format!("name = \"cutile\"\nversion = \"{CUTILE_VERSION}\"")));
    }

    #[test]
    fn config_ids_spell_params_as_the_reference_does() {
        let c = json!({"m": 64, "dtype": "float16", "transpose_a": true, "offset": null, "eps": 1e-5, "p": 0.5, "s": 1.0});
        assert_eq!(config_id("x", &c), "x/dtype=float16,eps=1e-05,m=64,offset=None,p=0.5,s=1,transpose_a=true");
        assert_eq!(config_id("y", &json!({"a": 1e-6, "b": 123.25, "c": 1e20})), "y/a=1e-06,b=123.25,c=1e+20");
    }

    #[test]
    fn equal_compile_keys_for_one_variant_across_sizes() {
        let t = Target::h200();
        let mm = |m: i64| json!({"m": m, "n": m, "k": m, "dtype": "float16", "static_persistent": true});
        let key = |m: i64| compile_key(&plan::plan("matmul", &mm(m), &t).unwrap().unwrap());
        // 4096 and 8192 share the specialisation (extents divisible by 16) and the default tiles.
        assert_eq!(key(4096), key(8192));
        // 4104 is divisible by 8 only: another specialisation.
        assert_ne!(key(4096), key(4104));
        let a = plan::plan("rms_norm", &json!({"m": 4096, "n": 1024, "dtype": "float16"}), &t).unwrap().unwrap();
        let b = plan::plan("rms_norm", &json!({"m": 4096, "n": 1024, "dtype": "bfloat16"}), &t).unwrap().unwrap();
        assert_ne!(compile_key(&a), compile_key(&b));
    }

    #[test]
    fn suite_parsing() {
        let dir = std::env::temp_dir().join(format!("pb-suite-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("s.json");
        std::fs::write(&f, r#"{"suite": "t", "configs": [{"op": "rms_norm", "params": {"m": 2, "n": 8, "dtype": "float16"}}, {"op": "gemm", "params": {}}]}"#).unwrap();
        let c = read_suite(&f).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].op, "rms_norm");
        assert_eq!(c[0].params["n"], 8);
        std::fs::write(&f, r#"{"configs": [{"params": {}}]}"#).unwrap();
        assert!(read_suite(&f).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn fake_cubin(entry: &str, params: &[(u16, u16, u32)], total: u32) -> Cubin {
        Cubin {
            e_flags: 0x5a00,
            abi_version: 8,
            kernels: vec![KernelInfo {
                name: entry.into(),
                params: params.iter().map(|&(ordinal, offset, size)| KParam { ordinal, offset, size }).collect(),
                param_bytes: Some(total),
                cluster: None,
                blocks_are_clusters: false,
            }],
        }
    }

    #[test]
    fn cubin_check() {
        let args = vec![
            KernelArg::Tensor { name: "w".into(), strides: vec![1], partition: None },
            KernelArg::Scalar { name: "eps".into(), ty: ScalarType::F32, value: LitValue::Float(1e-5) },
        ];
        let params: Vec<Param> = abi::entry_params(&args).into_iter().map(|e| e.param).collect();
        let good = fake_cubin("k_entry", &[(0, 0, 8), (1, 8, 4), (2, 12, 4), (3, 16, 4)], 20);
        check_against_cubin(&good, "k_entry", &params).unwrap();
        assert!(check_against_cubin(&good, "other_entry", &params).is_err());
        let bad_offset = fake_cubin("k_entry", &[(0, 0, 8), (1, 8, 4), (2, 12, 4), (3, 20, 4)], 24);
        assert!(check_against_cubin(&bad_offset, "k_entry", &params).is_err());
        let bad_count = fake_cubin("k_entry", &[(0, 0, 8), (1, 8, 4), (2, 12, 4)], 16);
        assert!(check_against_cubin(&bad_count, "k_entry", &params).is_err());
        let small_bank = fake_cubin("k_entry", &[(0, 0, 8), (1, 8, 4), (2, 12, 4), (3, 16, 4)], 16);
        assert!(check_against_cubin(&small_bank, "k_entry", &params).is_err());
        let large_bank = fake_cubin("k_entry", &[(0, 0, 8), (1, 8, 4), (2, 12, 4), (3, 16, 4)], 0x1f0);
        check_against_cubin(&large_bank, "k_entry", &params).unwrap();
    }

    #[test]
    fn config_json_shape() {
        let params = json!({"n": 1000003, "dtype": "float32"});
        let p = plan::plan("vector_add", &params, &Target::h200()).unwrap().unwrap();
        let e = abi::entry_params(&p.args);
        let pj = plan_json(&p, "v.cubin", "vector_add_entry", &[(p.grid, e)]);
        let c = config_json(&params, &pj, &p.variant, &Source::Default("why".into()), &[(p.variant.clone(), pj.clone())]);
        assert_eq!(c["params"], params);
        assert_eq!(c["scratch"], json!([]));
        assert_eq!(c["tuning"]["variant"], "t1024_nohint");
        assert_eq!(c["tuning"]["tuning_source"], "default: why");
        // One candidate: no variants listed.
        assert!(c.get("variants").is_none());
        let l = &c["launches"][0];
        assert_eq!(l["cubin"], "v.cubin");
        assert_eq!(l["entry"], "vector_add_entry");
        assert_eq!(l["grid"], json!([977, 1, 1]));
        assert_eq!(l["block"], json!([1, 1, 1]));
        assert_eq!(l["shared_bytes"], 0);
        assert_eq!(l["cluster"], json!([1, 1, 1]));
        assert_eq!(l["params"].as_array().unwrap().len(), 11);
        assert_eq!(l["params"][0], json!({"kind": "ptr", "tensor": "x"}));
        assert_eq!(l["params"][9], json!({"kind": "literal", "type": "i32", "value": 1024}));
        // Params keep the suite's key order.
        let keys: Vec<_> = c["params"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["n", "dtype"]);
        // Several candidates: all listed with their names; the chosen one's plan is the config's.
        let mut other = pj.clone();
        other["launches"][0]["grid"] = json!([5, 1, 1]);
        let vs = vec![("a".to_string(), pj.clone()), ("b".to_string(), other.clone())];
        let c = config_json(&params, &other, "b", &Source::Record("rec.json".into()), &vs);
        assert_eq!(c["launches"][0]["grid"], json!([5, 1, 1]));
        assert_eq!(c["tuning"]["tuning_source"], "record rec.json");
        let v = c["variants"].as_array().unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0]["name"], "a");
        assert_eq!(v[0]["launches"][0]["grid"], json!([977, 1, 1]));
        assert_eq!(v[1].as_object().unwrap().keys().collect::<Vec<_>>(), ["name", "tuning", "scratch", "launches"]);
        assert!(v[1]["tuning"].get("variant").is_none());
    }

    #[test]
    fn choosing_a_variant() {
        let t = Target::h200();
        let params = json!({"m": 16777216, "p": 0.5, "inplace": false, "dtype": "float16", "training": true});
        let cands = plan::candidates("dropout", &params, plan::Overrides::default(), &t).unwrap().unwrap();
        let none = plan::Overrides::default();
        let (v, s) = choose(&cands, "dropout", &params, none, None).unwrap();
        assert_eq!((v.as_str(), s.text()), ("t1024_nohint", "default: no tuning record; the exporter's heuristic".to_string()));
        let rec = |variant: &str| {
            let text = format!(
                r#"{{"schema": "portbench.tuning-record/1", "frontend": "cutile_rust", "target": "h200", "choices": [
                {{"op": "dropout", "params": {params}, "variant": "{variant}"}}]}}"#
            );
            TuningRecord::parse(&text, "configs/tuning/cutile_rust-h200.json", &t).unwrap()
        };
        let (v, s) = choose(&cands, "dropout", &params, none, Some(&rec("t4096_occ4"))).unwrap();
        assert_eq!((v.as_str(), s), ("t4096_occ4", Source::Record("configs/tuning/cutile_rust-h200.json".into())));
        // A configuration the record does not have: the default, and why.
        let other = json!({"m": 1048576, "p": 0.5, "inplace": false, "dtype": "float16", "training": true});
        let oc = plan::candidates("dropout", &other, none, &t).unwrap().unwrap();
        let (v, s) = choose(&oc, "dropout", &other, none, Some(&rec("t4096_occ4"))).unwrap();
        assert_eq!(v, "t1024_nohint");
        assert!(s.text().starts_with("default: not in tuning record configs/tuning/cutile_rust-h200.json"), "{}", s.text());
        // A variant the configuration does not have is an error naming the record.
        let e = choose(&cands, "dropout", &params, none, Some(&rec("t8192_occ2"))).unwrap_err().to_string();
        assert!(e.contains("cutile_rust-h200.json") && e.contains("t8192_occ2") && e.contains("t1024_nohint"), "{e}");
        // Suite overrides win over the record.
        let o = plan::Overrides { tile: Some(2048), ..Default::default() };
        let oc = plan::candidates("dropout", &params, o, &t).unwrap().unwrap();
        let (v, s) = choose(&oc, "dropout", &params, o, Some(&rec("t4096_occ4"))).unwrap();
        assert_eq!((v.as_str(), s), ("t2048_nohint", Source::Overrides));
    }

    #[test]
    fn suite_tuning_overrides() {
        let o = read_overrides(Some(&json!({"block_rows": 8, "tile": 2048, "occupancy": 2}))).unwrap();
        assert_eq!((o.block_rows, o.tile, o.occupancy), (Some(8), Some(2048), Some(2)));
        assert_eq!(read_overrides(None).unwrap(), plan::Overrides::default());
        let o = read_overrides(Some(&json!({"occupancy": 0, "worker_warps": 8, "compute": "f32"}))).unwrap();
        assert_eq!((o.occupancy, o.worker_warps, o.compute), (Some(0), Some(8), Some(plan::Compute::F32)));
        for bad in [json!({"tiles": 4}), json!({"occupancy": "many"}), json!({"block_rows": 0}), json!([4]), json!({"occupancy": -1}), json!({"compute": "f64"}), json!({"compute": 1})] {
            assert!(read_overrides(Some(&bad)).is_err(), "{bad}");
        }
    }
}
