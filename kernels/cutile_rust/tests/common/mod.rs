// SPDX-License-Identifier: Apache-2.0
//! Helpers the export tests share: the repository, the portbench and cuobjdump binaries, the
//! exporter, a cubin's parameter table against the manifest's packing, and every cubin of a
//! bundle checked through cuobjdump and `portbench inspect`.
#![allow(dead_code)]   // each test crate uses its own subset

use std::path::{Path, PathBuf};
use std::process::Command;

use portbench_cutile_rust::export::{config_id, find_tileiras, sha256_hex};
use serde_json::Value;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `$PORTBENCH_BIN`, else the newest `build/<preset>/harness/cli/portbench` of this checkout.
pub fn portbench() -> PathBuf {
    if let Some(p) = std::env::var_os("PORTBENCH_BIN").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(repo().join("build"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("harness/cli/portbench"))
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p).expect("no portbench binary: build the harness (cmake --build --preset dev) or set PORTBENCH_BIN")
}

pub fn cuobjdump() -> PathBuf {
    if let Some(p) = std::env::var_os("CUOBJDUMP") {
        return PathBuf::from(p);
    }
    find_tileiras().expect("tileiras (scripts/setup.sh installs it)").parent().unwrap().join("cuobjdump")
}

pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd:?} failed: {}\n{text}", out.status);
    text
}

/// `(offset, size)` of every parameter of `entry` in `cuobjdump -elf` text, by ordinal.
pub fn kparams(elf: &str, entry: &str) -> Vec<(u32, u32)> {
    let header = format!(".nv.info.{entry}");
    let start = elf.lines().position(|l| l.trim() == header).unwrap_or_else(|| panic!("no {header} section"));
    let hex = |s: &str| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).unwrap();
    let field = |line: &str, name: &str| {
        let rest = &line[line.find(name).unwrap() + name.len()..];
        hex(rest.trim_start().trim_start_matches(':').split_whitespace().next().unwrap())
    };
    let mut v: Vec<(u32, u32, u32)> = elf
        .lines()
        .skip(start + 1)
        .take_while(|l| !l.starts_with('.'))
        .filter(|l| l.contains("Ordinal :"))
        .map(|l| (field(l, "Ordinal"), field(l, "Offset"), field(l, "Size")))
        .collect();
    v.sort();
    v.into_iter().map(|(_, o, s)| (o, s)).collect()
}

/// The manifest's parameters packed at natural alignment: `(offset, size)` each.
pub fn packed(params: &[Value]) -> Vec<(u32, u32)> {
    let mut off = 0u32;
    params
        .iter()
        .map(|p| {
            let size = match (p["kind"].as_str().unwrap(), p["type"].as_str()) {
                ("ptr" | "null" | "scratch" | "ptr_table", _) | (_, Some("i64" | "u64" | "f64")) => 8,
                _ => 4,
            };
            off = off.div_ceil(size) * size;
            let at = (off, size);
            off += size;
            at
        })
        .collect()
}

/// Every cubin of a bundle: its hash, an sm_90 Tile IR ELF (`cuobjdump -elf`), `entry` an entry
/// symbol (`cuobjdump -symbols`), and its parameter table equal to the parameters of every launch
/// that uses it, packed at natural alignment; then `portbench inspect` accepts the bundle.
pub fn check_cubins(dir: &Path, m: &Value, entry: &str, configs: usize) {
    for c in m["cubins"].as_array().unwrap() {
        let file = dir.join(c["file"].as_str().unwrap());
        assert_eq!(c["sha256"].as_str().unwrap(), sha256_hex(&std::fs::read(&file).unwrap()));
        let elf = run(Command::new(cuobjdump()).arg("-elf").arg(&file));
        let header = elf.lines().find(|l| l.contains("64-bit ELF")).unwrap();
        assert!(header.contains("sm=90"), "{}: {header}", file.display());
        assert!(elf.contains("CUDA Virtual SM: sm_90") && elf.contains("TILEIR"), "{}", file.display());
        let symbols = run(Command::new(cuobjdump()).arg("-symbols").arg(&file));
        assert!(symbols.lines().any(|l| l.contains("STO_ENTRY") && l.trim_end().ends_with(entry)), "{symbols}");
        let users: Vec<&Value> = m["configs"].as_array().unwrap().iter().map(|x| &x["launches"][0]).filter(|l| l["cubin"] == c["file"]).collect();
        assert!(!users.is_empty(), "{}: no launch uses it", file.display());
        for l in users {
            assert_eq!(kparams(&elf, entry), packed(l["params"].as_array().unwrap()), "{}", file.display());
        }
    }
    let text = run(Command::new(portbench()).arg("inspect").arg(dir));
    assert!(text.contains(&format!("check     OK: {configs} launches in {configs} configs")), "{text}");
}

/// The exporter on `suite` (chosen plans only): its stdout and stderr.
pub fn export(suite: &Path, out: &Path) -> String {
    run(Command::new(env!("CARGO_BIN_EXE_portbench-cutile-rust-export")).arg("--suite").arg(suite).arg("--out").arg(out).arg("--chosen-only"))
}

/// The manifest's `unsupported[]` as skip lines.
pub fn unsupported_lines(op: &str, m: &Value) -> Vec<String> {
    m["unsupported"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| format!("skip: cutile_rust: {}: {}", config_id(op, &u["params"]), u["reason"].as_str().unwrap()))
        .collect()
}
