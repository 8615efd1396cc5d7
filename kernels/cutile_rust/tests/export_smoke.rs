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
        "ptr" => Param::Ptr { tensor: tensor() },
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
    // The smoke suite covers every operator of this front end.
    assert_eq!(ops, portbench_cutile_rust::plan::OPERATORS, "operators of this front end missing from smoke.json");
    for &op in &ops {
        let dir = out.join(op);
        let m: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(m["schema"], "portbench.bundle/1");
        assert_eq!(m["frontend"], "cutile_rust");
        assert_eq!(m["operator"], op);
        assert_eq!(m["arch"], "sm_90");
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
            for l in cfg["launches"].as_array().unwrap() {
                let file = l["cubin"].as_str().unwrap();
                let entry = l["entry"].as_str().unwrap();
                let kernel = cfg["tuning"]["kernel"].as_str().unwrap_or(op);
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
                checked_launches += 1;
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
