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

/// The `cutile` crate version this exporter is pinned to (Cargo.toml `=0.5.0`; a unit
/// test keeps the two in step).
pub const CUTILE_VERSION: &str = "0.5.0";
pub const FRONTEND: &str = "cutile_rust";
pub const SCHEMA: &str = "portbench.bundle/1";
/// The `--gpu-name` given to cutile and tileiras, and the manifest's `arch`.
pub const ARCH: &str = "sm_90";
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

    /// `tileiras --gpu-name sm_90 --opt-level 3 -o <cubin> <bc>`.
    pub fn assemble(&self, bc: &Path, cubin: &Path) -> Result<()> {
        let out = Command::new(&self.tileiras)
            .args(["--gpu-name", ARCH, "--opt-level", &OPT_LEVEL.to_string(), "-o"])
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
    /// `occupancy`), for tile experiments; the manifest records what was used.
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
        let v = v.as_i64().filter(|&v| v > 0).with_context(|| format!("{k} must be a positive integer, got {v}"))?;
        match k.as_str() {
            "block_rows" => o.block_rows = Some(v),
            "tile" => o.tile = Some(v),
            "occupancy" => o.occupancy = Some(i32::try_from(v)?),
            other => bail!("unknown key {other:?} (block_rows, tile, occupancy)"),
        }
    }
    Ok(o)
}

/// The output of the compile-only API for one plan.
pub struct Compiled {
    pub entry: String,
    pub ir_text: String,
    pub bytecode: Vec<u8>,
    pub launch_checks: Vec<String>,
}

/// Compiles a plan's kernel with `cutile::compile_api::KernelCompiler`. Needs a thread
/// with a large stack (the compiler recurses deeply); [`run_with_stack`] gives one.
pub fn compile(p: &Plan, tc: &Toolchain) -> Result<Compiled> {
    let strides: Vec<(String, Vec<i32>)> = p.tensors.iter().map(|t| (t.name.clone(), t.static_strides())).collect();
    let stride_refs: Vec<(&str, &[i32])> = strides.iter().map(|(n, s)| (n.as_str(), s.as_slice())).collect();
    let specs: Vec<(String, _)> = p.tensors.iter().map(|t| (t.name.clone(), t.spec())).collect();
    let spec_refs: Vec<(&str, _)> = specs.iter().map(|(n, s)| (n.as_str(), s.clone())).collect();
    let mut options = CompileOptions::default();
    if let Some(occ) = p.occupancy {
        options = options.occupancy(occ);
    }
    let artifacts = KernelCompiler::new(portbench_kernels::__module_ast_self, MODULE, p.kernel)
        .options(options)
        .generics(p.generics.clone())
        .strides(&stride_refs)
        .spec_args(&spec_refs)
        .target(ARCH)
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

/// The manifest's `configs[]` entry for one planned configuration.
pub fn config_json(params: &Value, p: &Plan, cubin_file: &str, entry: &str, entry_params: &[EntryParam]) -> Value {
    json!({
        "params": params,
        "tuning": Value::Object(p.tuning.clone()),
        "scratch": [],
        "launches": [{
            "cubin": cubin_file,
            "entry": entry,
            "grid": p.grid,
            "block": [1, 1, 1],
            "shared_bytes": 0,
            "cluster": [1, 1, 1],
            "params": entry_params.iter().map(|e| e.param.to_json()).collect::<Vec<_>>(),
        }],
    })
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
}

/// Exports every configuration of `suite` whose operator is in [`plan::OPERATORS`] to
/// `out/<operator>/`. The operator folders are recreated; nothing else is touched.
pub fn export(suite: &Path, out: &Path, tc: &Toolchain) -> Result<Report> {
    export_configs(&read_suite(suite)?, out, tc)
}

/// [`export`] for configurations already in memory.
pub fn export_configs(configs: &[SuiteConfig], out: &Path, tc: &Toolchain) -> Result<Report> {
    let mut report = Report::default();
    let scratch = std::env::temp_dir().join(format!("portbench-cutile-rust-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let result = export_into(configs, out, tc, &scratch, &mut report);
    let _ = std::fs::remove_dir_all(&scratch);
    result.map(|_| report)
}

fn export_into(configs: &[SuiteConfig], out: &Path, tc: &Toolchain, scratch: &Path, report: &mut Report) -> Result<()> {
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

        let mut cubins: Vec<Value> = Vec::new();
        // cubin file -> parsed cubin, for configurations that share a specialisation.
        let mut built: BTreeMap<String, Cubin> = BTreeMap::new();
        let mut manifest_configs = Vec::new();
        for cfg in mine {
            let p = match plan::plan_with(op, &cfg.params, cfg.overrides) {
                Ok(Some(p)) => p,
                Ok(None) => unreachable!("{op} is in OPERATORS"),
                Err(e) => {
                    report.skipped.push((op.to_string(), cfg.params.clone(), format!("{e:#}")));
                    continue;
                }
            };
            let compiled = compile(&p, tc)?;
            let entry_params = abi::entry_params(&p.args);
            let ir_params = abi::ir_entry_params(&compiled.ir_text, &compiled.entry)
                .with_context(|| format!("no entry @{} in the Tile IR", compiled.entry))?;
            abi::check_against_ir(&entry_params, &ir_params)
                .with_context(|| format!("{op} {}: Tile IR entry vs ABI model", cfg.params))?;

            let stem = format!("{}_{}", p.stem, &sha256_hex(&compiled.bytecode)[..8]);
            let cubin_file = format!("{stem}.cubin");
            if !built.contains_key(&cubin_file) {
                let bc = scratch.join(format!("{stem}.bc"));
                std::fs::write(&bc, &compiled.bytecode)?;
                let cubin_path = dir.join(&cubin_file);
                tc.assemble(&bc, &cubin_path)?;
                let bytes = std::fs::read(&cubin_path)?;
                let cubin = Cubin::parse(&bytes).with_context(|| format!("reading {}", cubin_path.display()))?;
                ensure!(cubin.sm() == 90, "{cubin_file}: ELF targets sm_{}, expected sm_90", cubin.sm());
                let ir_file = format!("{stem}.tileir.txt");
                std::fs::write(dir.join(&ir_file), &compiled.ir_text)?;
                cubins.push(json!({"file": cubin_file, "sha256": sha256_hex(&bytes), "ir": [ir_file]}));
                built.insert(cubin_file.clone(), cubin);
            }
            let params: Vec<Param> = entry_params.iter().map(|e| e.param.clone()).collect();
            check_against_cubin(&built[&cubin_file], &compiled.entry, &params)
                .with_context(|| format!("{op} {}: manifest parameters vs cubin", cfg.params))?;

            let mut cj = config_json(&cfg.params, &p, &cubin_file, &compiled.entry, &entry_params);
            if !compiled.launch_checks.is_empty() {
                cj["tuning"]["launch_checks"] = json!(compiled.launch_checks);
            }
            manifest_configs.push(cj);
        }
        let manifest = json!({
            "schema": SCHEMA,
            "frontend": FRONTEND,
            "operator": op,
            "arch": ARCH,
            "toolchain": tc.manifest_json(),
            "cubins": cubins,
            "configs": manifest_configs,
        });
        let path = dir.join("manifest.json");
        std::fs::write(&path, serde_json::to_string_pretty(&manifest)? + "\n")?;
        report.manifests.insert(op.to_string(), path);
    }
    report.unsupported = configs.iter().filter(|c| !plan::OPERATORS.contains(&c.op.as_str())).count();
    Ok(())
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
        let p = plan::plan("vector_add", &params).unwrap().unwrap();
        let e = abi::entry_params(&p.args);
        let c = config_json(&params, &p, "v.cubin", "vector_add_entry", &e);
        assert_eq!(c["params"], params);
        assert_eq!(c["scratch"], json!([]));
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
    }

    #[test]
    fn suite_tuning_overrides() {
        let o = read_overrides(Some(&json!({"block_rows": 8, "tile": 2048, "occupancy": 2}))).unwrap();
        assert_eq!((o.block_rows, o.tile, o.occupancy), (Some(8), Some(2048), Some(2)));
        assert_eq!(read_overrides(None).unwrap(), plan::Overrides::default());
        for bad in [json!({"tiles": 4}), json!({"occupancy": "many"}), json!({"block_rows": 0}), json!([4])] {
            assert!(read_overrides(Some(&bad)).is_err(), "{bad}");
        }
    }
}
