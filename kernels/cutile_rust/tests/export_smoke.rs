// SPDX-License-Identifier: Apache-2.0
//! End to end, without a GPU: runs the exporter binary on configs/smoke.json into a
//! temporary folder and checks the bundles against docs/bundle-manifest.md and against
//! `cuobjdump` (from the same pip wheels as tileiras): every cubin is an sm_90 CUDA ELF,
//! its entry symbol exists, and the manifest's parameters have exactly the offsets and
//! sizes of the entry's `EIATTR_KPARAM_INFO` table.

use std::path::{Path, PathBuf};
use std::process::Command;

use portbench_cutile_rust::abi::{self, LitValue, Param, ScalarType};
use portbench_cutile_rust::elf::Cubin;
use portbench_cutile_rust::export::{find_tileiras, sha256_hex};
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn cuobjdump() -> PathBuf {
    if let Some(p) = std::env::var_os("CUOBJDUMP") {
        return PathBuf::from(p);
    }
    let tileiras = find_tileiras().expect("tileiras (scripts/setup.sh installs it)");
    let p = tileiras.parent().unwrap().join("cuobjdump");
    assert!(p.is_file(), "cuobjdump not next to tileiras at {} (set CUOBJDUMP)", p.display());
    p
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn hex(s: &str) -> u32 {
    u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).unwrap()
}

/// `(ordinal, offset, size)` of every KPARAM_INFO(_V2) record of `.nv.info.<entry>` in
/// `cuobjdump -elf` output, sorted by ordinal, and the CBANK_PARAM_SIZE.
fn cuobjdump_kparams(elf_text: &str, entry: &str) -> (Vec<(u32, u32, u32)>, Option<u32>) {
    let header = format!(".nv.info.{entry}");
    let start = elf_text.lines().position(|l| l.trim() == header).unwrap_or_else(|| panic!("no {header} section"));
    let mut params = Vec::new();
    let mut bank = None;
    let mut lines = elf_text.lines().skip(start + 1).peekable();
    while let Some(line) = lines.next() {
        if line.starts_with('.') {
            break; // next section
        }
        if line.contains("Ordinal :") {
            // "Value:	Index : 0x0	Ordinal : 0xa	Offset  : 0x34	Size    : 0x4"
            let field = |name: &str| {
                let rest = &line[line.find(name).unwrap() + name.len()..];
                let rest = rest.trim_start().trim_start_matches(':').trim_start();
                hex(rest.split_whitespace().next().unwrap())
            };
            params.push((field("Ordinal"), field("Offset"), field("Size")));
        }
        if line.contains("EIATTR_CBANK_PARAM_SIZE") {
            let value = lines.by_ref().find(|l| l.contains("Value:")).unwrap();
            bank = Some(hex(value.split("Value:").nth(1).unwrap()));
        }
    }
    params.sort();
    (params, bank)
}

fn param_from_json(p: &Value) -> Param {
    let ty = |v: &Value| match v["type"].as_str().unwrap() {
        "i32" => ScalarType::I32,
        "i64" => ScalarType::I64,
        "u32" => ScalarType::U32,
        "u64" => ScalarType::U64,
        "f32" => ScalarType::F32,
        "f64" => ScalarType::F64,
        other => panic!("unknown type {other}"),
    };
    let tensor = || p["tensor"].as_str().unwrap().to_string();
    match p["kind"].as_str().unwrap() {
        "ptr" => match p.get("offset") {
            Some(o) => Param::PtrAt { tensor: tensor(), offset: o.as_i64().unwrap() },
            None => Param::Ptr { tensor: tensor() },
        },
        "extent" => Param::Extent { tensor: tensor(), dim: p["dim"].as_u64().unwrap() as usize, ty: ty(p) },
        "stride" => Param::Stride { tensor: tensor(), dim: p["dim"].as_u64().unwrap() as usize, ty: ty(p) },
        "literal" => Param::Literal {
            ty: ty(p),
            value: if p["value"].is_i64() {
                LitValue::Int(p["value"].as_i64().unwrap())
            } else {
                LitValue::Float(p["value"].as_f64().unwrap())
            },
        },
        "null" => Param::Null,
        "scratch" => Param::Scratch { name: p["name"].as_str().unwrap().into() },
        other => panic!("unknown kind {other}"),
    }
}

#[test]
fn exports_smoke_suite_to_sm90_bundles() {
    let repo = repo();
    let suite_path = repo.join("configs/smoke.json");
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(&suite_path).unwrap()).unwrap();
    let out = std::env::temp_dir().join(format!("portbench-cutile-rust-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    run(Command::new(env!("CARGO_BIN_EXE_portbench-cutile-rust-export"))
        .arg("--suite")
        .arg(&suite_path)
        .arg("--out")
        .arg(&out));

    let cuobjdump = cuobjdump();
    let mut checked_launches = 0;
    let ops: Vec<&str> = portbench_cutile_rust::plan::OPERATORS
        .iter()
        .copied()
        .filter(|op| suite["configs"].as_array().unwrap().iter().any(|c| c["op"] == *op))
        .collect();
    // The smoke suite covers every operator of this front end but the matrix products, the
    // attention, the decode kernels, the gated delta rule and moe_align_block, which
    // tests/export_gemm.rs, tests/export_fmha.rs, tests/export_decode.rs, tests/export_gdr.rs and
    // tests/export_moe.rs export from tests/data/ (the other front ends' smoke exports have no
    // such configurations).
    let want: Vec<&str> = portbench_cutile_rust::plan::OPERATORS
        .iter()
        .copied()
        .filter(|op| {
            !portbench_cutile_rust::gemm::plan::OPERATORS.contains(op)
                && !portbench_cutile_rust::attn::plan::OPERATORS.contains(op)
                && !portbench_cutile_rust::decode::plan::OPERATORS.contains(op)
                && !portbench_cutile_rust::gdr::plan::OPERATORS.contains(op)
                && !portbench_cutile_rust::moe::plan::OPERATORS.contains(op)
                && !portbench_cutile_rust::moe::plan::STAGED.contains(op)
        })
        .collect();
    assert_eq!(ops, want, "operators of this front end missing from smoke.json");
    for &op in &ops {
        let dir = out.join(op);
        let m: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(m["schema"], "portbench.bundle/1");
        assert_eq!(m["frontend"], "cutile_rust");
        assert_eq!(m["operator"], op);
        assert_eq!(m["arch"], "sm_90");
        // The default target description, configs/targets/h200.json.
        assert_eq!(m["target"], serde_json::json!({"name": "h200", "arch": "sm_90", "sm_count": 132}));
        assert_eq!(m["toolchain"]["cutile"], "0.5.0");
        assert!(m["toolchain"]["tileiras"].as_str().unwrap().starts_with("13."));

        // Every configuration of this operator, in suite order, with identical params.
        let want: Vec<&Value> =
            suite["configs"].as_array().unwrap().iter().filter(|c| c["op"] == op).map(|c| &c["params"]).collect();
        let got: Vec<&Value> = m["configs"].as_array().unwrap().iter().map(|c| &c["params"]).collect();
        assert_eq!(got, want, "{op}: configs");

        // Cubins: hash, IR text, ELF target, entry symbols, parameter tables.
        let mut files = Vec::new();
        for c in m["cubins"].as_array().unwrap() {
            let file = c["file"].as_str().unwrap();
            assert!(!file.contains('/') && file.ends_with(".cubin"), "{file}");
            let bytes = std::fs::read(dir.join(file)).unwrap();
            assert_eq!(c["sha256"].as_str().unwrap(), sha256_hex(&bytes), "{file} sha256");
            let cubin = Cubin::parse(&bytes).unwrap();
            assert_eq!(cubin.sm(), 90, "{file}: ELF SM");
            // The Tile IR text kept in the bundle declares the cubin's entries
            // (`<kernel>_entry`; the kernel may differ from the operator, e.g.
            // layer_norm_legacy -> layer_norm / layer_norm_stats).
            for ir in c["ir"].as_array().unwrap() {
                let text = std::fs::read_to_string(dir.join(ir.as_str().unwrap())).unwrap();
                for k in &cubin.kernels {
                    assert!(text.contains(&format!("entry @{}(", k.name)), "{ir}: no entry @{}", k.name);
                }
            }
            let elf_text = run(Command::new(&cuobjdump).arg("-elf").arg(dir.join(file)));
            let header = elf_text.lines().find(|l| l.contains("64-bit ELF")).unwrap();
            // tileiras --gpu-name sm_90 has ptxas build sm_90a code (cuobjdump: sm=90a);
            // .note.nv.cuinfo keeps the virtual SM sm_90.
            assert!(header.contains("sm=90"), "{file}: {header}");
            assert!(elf_text.contains("CUDA Virtual SM: sm_90"), "{file}: virtual SM");
            assert!(elf_text.contains("Language:\t TILEIR") || elf_text.contains("TILEIR"), "{file}: not Tile IR");
            let symbols = run(Command::new(&cuobjdump).arg("-symbols").arg(dir.join(file)));
            for k in &cubin.kernels {
                assert!(
                    symbols
                        .lines()
                        .any(|l| l.contains("STT_FUNC") && l.contains("STO_ENTRY") && l.trim_end().ends_with(&k.name)),
                    "{file}: {} not an entry symbol:\n{symbols}",
                    k.name
                );
                // The Rust ELF reader agrees with cuobjdump.
                let (kp, bank) = cuobjdump_kparams(&elf_text, &k.name);
                let mine: Vec<(u32, u32, u32)> =
                    k.params.iter().map(|p| (p.ordinal as u32, p.offset as u32, p.size)).collect();
                assert_eq!(mine, kp, "{file}: {} KPARAM_INFO, Rust reader vs cuobjdump", k.name);
                assert_eq!(k.param_bytes, bank, "{file}: CBANK_PARAM_SIZE");
            }
            files.push((file.to_string(), elf_text, cubin));
        }

        for cfg in m["configs"].as_array().unwrap() {
            assert!(cfg["tuning"].is_object());
            assert_eq!(cfg["scratch"], Value::Array(vec![]));
            let chosen = cfg["tuning"]["variant"].as_str().unwrap();
            assert_eq!(cfg["tuning"]["tuning_source"], "default: no tuning record; the exporter's heuristic");
            // The chosen plan and every tuning variant (the chosen one among them, listing the
            // same launches) are checked against the cubins alike.
            let mut plans = vec![cfg.clone()];
            if let Some(vs) = cfg.get("variants") {
                let vs = vs.as_array().unwrap();
                assert!(vs.len() > 1, "{op}: a variants list of one");
                let names: Vec<&str> = vs.iter().map(|v| v["name"].as_str().unwrap()).collect();
                let mut unique = names.clone();
                unique.sort();
                unique.dedup();
                assert_eq!(unique.len(), names.len(), "{op}: variant names repeat: {names:?}");
                let me = vs.iter().find(|v| v["name"] == chosen).unwrap_or_else(|| panic!("{op}: {chosen} not in {names:?}"));
                assert_eq!(me["launches"], cfg["launches"], "{op}: the chosen variant's launches");
                plans.extend(vs.iter().cloned());
            }
            for (pi, plan) in plans.iter().enumerate() {
            for l in plan["launches"].as_array().unwrap() {
                let file = l["cubin"].as_str().unwrap();
                let entry = l["entry"].as_str().unwrap();
                let kernel = plan["tuning"]["kernel"].as_str().unwrap_or(op);
                assert_eq!(entry, format!("{kernel}_entry"));
                assert_eq!(l["block"], serde_json::json!([1, 1, 1]));
                assert_eq!(l["shared_bytes"], 0);
                assert_eq!(l["cluster"], serde_json::json!([1, 1, 1]));
                assert!(l["grid"].as_array().unwrap().iter().all(|g| g.as_u64().unwrap() >= 1));
                let (_, elf_text, cubin) =
                    files.iter().find(|(f, _, _)| f == file).unwrap_or_else(|| panic!("{file} not in cubins[]"));
                assert!(cubin.kernel(entry).is_some(), "{file}: no entry {entry}");
                let params: Vec<Param> = l["params"].as_array().unwrap().iter().map(param_from_json).collect();
                let (offsets, total) = abi::layout(&params);
                let (kp, bank) = cuobjdump_kparams(elf_text, entry);
                let expected: Vec<(u32, u32, u32)> =
                    params.iter().enumerate().map(|(i, p)| (i as u32, offsets[i], p.size())).collect();
                assert_eq!(kp, expected, "{op} {}: manifest params vs cuobjdump KPARAM_INFO", cfg["params"]);
                assert!(bank.unwrap() >= total, "{op}: CBANK_PARAM_SIZE below the parameter bytes");
                checked_launches += usize::from(pi == 0);
            }
            }
        }
    }
    let expected = suite["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| ops.contains(&c["op"].as_str().unwrap()))
        .count();
    assert_eq!(checked_launches, expected, "one launch per smoke configuration of this front end's operators");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn rejects_bad_arguments() {
    let out = Command::new(env!("CARGO_BIN_EXE_portbench-cutile-rust-export")).arg("--suite").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(env!("CARGO_BIN_EXE_portbench-cutile-rust-export"))
        .args(["--suite", "/nonexistent.json", "--out", "/tmp/x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nonexistent"));
}

fn export(args: &[&std::ffi::OsStr], env: &[(&str, &std::ffi::OsStr)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_portbench-cutile-rust-export"));
    cmd.args(args).env_remove("PORTBENCH_TARGET");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn manifest(dir: &Path, op: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(op).join("manifest.json")).unwrap()).unwrap()
}

/// The target description and a tuning record change what is exported: the SM count reaches
/// the heuristics, the record's choice becomes the configuration's plan.
#[test]
fn target_description_and_tuning_record() {
    let tmp = std::env::temp_dir().join(format!("portbench-cutile-rust-target-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let rms = r#"{"m": 512, "n": 1024, "dtype": "float16"}"#;
    let drop = r#"{"m": 1048576, "p": 0.5, "inplace": false, "dtype": "float16", "training": true}"#;
    let suite = tmp.join("suite.json");
    std::fs::write(&suite, format!(r#"{{"configs": [{{"op": "rms_norm", "params": {rms}}}, {{"op": "dropout", "params": {drop}}}]}}"#)).unwrap();
    let small = tmp.join("small.json");
    std::fs::write(&small, r#"{"name": "small", "gpu": "test", "arch": "sm_90", "capability": [9, 0], "sm_count": 16}"#).unwrap();
    let record = tmp.join("rec.json");
    std::fs::write(
        &record,
        format!(r#"{{"schema": "portbench.tuning-record/1", "frontend": "cutile_rust", "target": "small", "choices": [
            {{"op": "dropout", "params": {drop}, "variant": "t4096_occ4", "speedup_over_default": 1.05}}]}}"#),
    )
    .unwrap();
    let (a, b, c) = (tmp.join("a"), tmp.join("b"), tmp.join("c"));
    let os = |p: &Path| p.as_os_str().to_owned();
    let ok = |o: std::process::Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };

    // Default target (configs/targets/h200.json): 132 SMs.
    ok(export(&[&os(Path::new("--suite")), &os(&suite), &os(Path::new("--out")), &os(&a)], &[]));
    let m = manifest(&a, "rms_norm");
    assert_eq!(m["target"]["sm_count"], 132);
    assert_eq!(m["configs"][0]["launches"][0]["grid"], serde_json::json!([256, 1, 1]));
    // The environment names another description: 16 SMs give 8 rows per block.
    ok(export(&[&os(Path::new("--suite")), &os(&suite), &os(Path::new("--out")), &os(&b)], &[("PORTBENCH_TARGET", &os(&small))]));
    let m = manifest(&b, "rms_norm");
    assert_eq!(m["target"], serde_json::json!({"name": "small", "arch": "sm_90", "sm_count": 16}));
    assert_eq!(m["configs"][0]["launches"][0]["grid"], serde_json::json!([64, 1, 1]));
    assert_eq!(m["configs"][0]["tuning"]["block_rows"], 8);
    // --target wins over the environment; the record picks dropout's plan.
    let bogus = tmp.join("missing.json");
    let log = ok(export(
        &[&os(Path::new("--suite")), &os(&suite), &os(Path::new("--out")), &os(&c), &os(Path::new("--target")), &os(&small), &os(Path::new("--tuning")), &os(&record)],
        &[("PORTBENCH_TARGET", &os(&bogus))],
    ));
    assert!(log.contains("1 chosen by the tuning record"), "{log}");
    let d = manifest(&c, "dropout");
    let cfg = &d["configs"][0];
    assert_eq!(cfg["tuning"]["variant"], "t4096_occ4");
    assert_eq!(cfg["tuning"]["tuning_source"], format!("record {}", record.display()));
    assert_eq!(cfg["launches"][0]["grid"], serde_json::json!([256, 1, 1]));
    let chosen = cfg["variants"].as_array().unwrap().iter().find(|v| v["name"] == "t4096_occ4").unwrap();
    assert_eq!(chosen["launches"], cfg["launches"]);
    let default = cfg["variants"].as_array().unwrap().iter().find(|v| v["name"] == "t1024_nohint").unwrap();
    assert_eq!(default["launches"][0]["grid"], serde_json::json!([1024, 1, 1]));
    let r = manifest(&c, "rms_norm");
    assert!(r["configs"][0]["tuning"]["tuning_source"].as_str().unwrap().starts_with("default: not in tuning record"));

    // Bad input: a missing or malformed description, a record for another target.
    let o = export(&[&os(Path::new("--suite")), &os(&suite), &os(Path::new("--out")), &os(&c)], &[("PORTBENCH_TARGET", &os(&bogus))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.json"));
    let broken = tmp.join("broken.json");
    std::fs::write(&broken, r#"{"name": "x", "arch": "sm_90"}"#).unwrap();
    let o = export(&[&os(Path::new("--suite")), &os(&suite), &os(Path::new("--out")), &os(&c), &os(Path::new("--target")), &os(&broken)], &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(e.contains("broken.json") && e.contains("sm_count"), "{e}");
    let o = export(&[&os(Path::new("--suite")), &os(&suite), &os(Path::new("--out")), &os(&c), &os(Path::new("--tuning")), &os(&record)], &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(e.contains("rec.json") && e.contains("\"target\""), "{e}");
    std::fs::remove_dir_all(&tmp).unwrap();
}
