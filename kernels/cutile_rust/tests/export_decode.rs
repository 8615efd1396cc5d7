// SPDX-License-Identifier: Apache-2.0
//! Decode attention end to end, without a GPU: the exporter binary on tests/data/decode.json
//! (small flash_decode configurations, KV lengths that are no multiple of the key tile, and
//! configurations the port cannot express), then checks of every cubin with `cuobjdump`, of the
//! two-kernel launch plans (the split-KV pass then splitk_reduce, the scratch buffers they
//! share and the views the launches bind on them), of the skip reasons and `unsupported[]`, and
//! `portbench inspect` on the bundle (the harness's own checks before a run).

use std::path::{Path, PathBuf};
use std::process::Command;

use portbench_cutile_rust::elf::Cubin;
use portbench_cutile_rust::export::{config_id, find_tileiras, sha256_hex};
use serde_json::{json, Value};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `$PORTBENCH_BIN`, else the newest `build/<preset>/harness/cli/portbench` of this checkout.
fn portbench() -> PathBuf {
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

fn cuobjdump() -> PathBuf {
    if let Some(p) = std::env::var_os("CUOBJDUMP") {
        return PathBuf::from(p);
    }
    let p = find_tileiras().expect("tileiras (scripts/setup.sh installs it)").parent().unwrap().join("cuobjdump");
    assert!(p.is_file(), "cuobjdump not next to tileiras at {} (set CUOBJDUMP)", p.display());
    p
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd:?} failed: {}\n{text}", out.status);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `(offset, size)` of every KPARAM_INFO record of `.nv.info.<entry>` in `cuobjdump -elf`
/// output, by ordinal.
fn cuobjdump_kparams(elf_text: &str, entry: &str) -> Vec<(u32, u32)> {
    let header = format!(".nv.info.{entry}");
    let start = elf_text.lines().position(|l| l.trim() == header).unwrap_or_else(|| panic!("no {header} section"));
    let hex = |s: &str| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).unwrap();
    let mut params = Vec::new();
    for line in elf_text.lines().skip(start + 1).take_while(|l| !l.starts_with('.')) {
        if line.contains("Ordinal :") {
            let field = |name: &str| {
                let rest = &line[line.find(name).unwrap() + name.len()..];
                hex(rest.trim_start().trim_start_matches(':').split_whitespace().next().unwrap())
            };
            params.push((field("Ordinal"), field("Offset"), field("Size")));
        }
    }
    params.sort();
    params.into_iter().map(|(_, o, s)| (o, s)).collect()
}

/// Offsets and sizes of manifest parameters packed at natural alignment (docs/bundle-manifest.md).
fn packed(params: &[Value]) -> Vec<(u32, u32)> {
    let mut at = 0u32;
    params
        .iter()
        .map(|p| {
            let size = match p["kind"].as_str().unwrap() {
                "ptr" | "scratch" | "null" | "ptr_table" => 8,
                _ if p["type"].as_str().unwrap().ends_with("64") => 8,
                _ => 4,
            };
            at = at.next_multiple_of(size);
            let r = (at, size);
            at += size;
            r
        })
        .collect()
}

/// For every `scratch` parameter of a launch: the buffer's name and the bytes its view reaches
/// (`1 + sum (extent - 1) * stride` elements of `elem` bytes), from the `rank` extents and
/// `rank` strides that follow it as literals.
fn scratch_views(params: &[Value], ranks: &[(&str, usize, u64)]) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for (i, p) in params.iter().enumerate() {
        if p["kind"] != "scratch" {
            continue;
        }
        let name = p["name"].as_str().unwrap();
        let &(_, rank, elem) = ranks.iter().find(|r| r.0 == name).unwrap_or_else(|| panic!("scratch {name}"));
        let lit = |j: usize| {
            let q = &params[i + 1 + j];
            assert_eq!(q["kind"], "literal", "{name}: view extents and strides are literals");
            q["value"].as_u64().unwrap()
        };
        let last: u64 = (0..rank).map(|d| (lit(d) - 1) * lit(rank + d)).sum();
        out.push((name.to_string(), (last + 1) * elem));
    }
    out
}

/// Checks every cubin of a bundle (hash, an sm_90 Tile IR ELF, the entry an entry symbol) and
/// returns per cubin file its entry and the parameter table cuobjdump reads.
fn check_cubins(dir: &Path, m: &Value) -> std::collections::BTreeMap<String, (String, Vec<(u32, u32)>)> {
    let cuobjdump = cuobjdump();
    let mut tables = std::collections::BTreeMap::new();
    for c in m["cubins"].as_array().unwrap() {
        let file = c["file"].as_str().unwrap();
        let bytes = std::fs::read(dir.join(file)).unwrap();
        assert_eq!(c["sha256"].as_str().unwrap(), sha256_hex(&bytes), "{file}");
        let cubin = Cubin::parse(&bytes).unwrap();
        assert_eq!((cubin.sm(), cubin.kernels.len()), (90, 1), "{file}");
        let elf = run(Command::new(&cuobjdump).arg("-elf").arg(dir.join(file)));
        assert!(elf.lines().any(|l| l.contains("64-bit ELF") && l.contains("sm=90")), "{file}");
        assert!(elf.contains("CUDA Virtual SM: sm_90") && elf.contains("TILEIR"), "{file}");
        let symbols = run(Command::new(&cuobjdump).arg("-symbols").arg(dir.join(file)));
        let entry = &cubin.kernels[0].name;
        assert!(symbols.lines().any(|l| l.contains("STO_ENTRY") && l.trim_end().ends_with(entry.as_str())), "{file}: {symbols}");
        tables.insert(file.to_string(), (entry.clone(), cuobjdump_kparams(&elf, entry)));
    }
    tables
}

/// What a configuration's plan must be, from its parameters alone: the entries in order, the
/// grid of each, the scratch buffers (name, bytes), and the rank of each scratch view per launch.
struct Expected {
    entries: Vec<&'static str>,
    grids: Vec<Value>,
    scratch: Vec<(String, i64)>,
    views: Vec<Vec<(&'static str, usize)>>,
}

fn expected(op: &str, p: &Value, t: &Value) -> Expected {
    let int = |k: &str| p[k].as_i64().unwrap();
    let e = if p["dtype"] == "float32" { 4 } else { 2 };
    let splits = t["num_kv_splits"].as_i64().unwrap();
    let len = t["kv_len_per_split"].as_i64();
    let stages = t["stages"].as_array().unwrap();
    match op {
        "flash_decode" | "gemma_attention_decode" | "attention_sink_decode" => {
            let (b, hq, hkv, s, d) = match op {
                "flash_decode" => (int("batch"), int("num_q_heads"), int("num_kv_heads"), int("seq_len"), int("head_dim")),
                "gemma_attention_decode" => (int("batch"), int("heads"), int("kv_heads"), int("seq_len_kv"), int("head_dim")),
                _ => (int("batch"), int("num_kv_heads") * int("num_kv_groups"), int("num_kv_heads"), int("num_keys"), int("head_dim")),
            };
            let (len, tile) = (len.unwrap(), t["key_tile"].as_i64().unwrap());
            // The first key attended: gemma's window keeps keys from S - 1 - window, the sink's
            // sliding window the last `window` keys up to the query at S - 1.
            let window = p.get("window").or(p.get("sliding_window")).and_then(Value::as_i64).unwrap_or(0);
            let lo = match (window > 0, op) {
                (false, _) => 0,
                (true, "gemma_attention_decode") => (s - 1 - window).max(0),
                (true, _) => (s - window).max(0),
            };
            assert_eq!(t["first_key"], json!(lo), "{p}");
            // Every split holds keys, together they cover [lo, S) from lo's key tile, in whole tiles.
            let base = lo / tile * tile;
            assert!(base + (splits - 1) * len < s && base + splits * len >= s && len % tile == 0, "{p}");
            let td = stages[1]["tile_d"].as_i64().unwrap();
            Expected {
                entries: vec![if op == "attention_sink_decode" { "decode_split_sink_entry" } else { "decode_split_entry" }, "splitk_reduce_entry"],
                grids: vec![json!([b, hkv, splits]), json!([b, hq, (d + td - 1) / td])],
                scratch: vec![("partial_o".into(), b * hq * splits * d * e), ("lse".into(), b * hq * splits * 4)],
                // The pass sees the buffers per KV head and group member.
                views: vec![vec![("partial_o", 5), ("lse", 4)], vec![("partial_o", 4), ("lse", 3)]],
            }
        }
        "mla_decoding" => {
            let (b, h, s, d) = (int("batch"), int("num_heads"), int("S_kv"), int("BLOCK_D"));
            assert_eq!(splits, 1);
            // Equal batch groups, as few as keep one launch's kv within i32 indices.
            let groups = t["batch_groups"].as_i64().unwrap();
            assert!(b % groups == 0 && (b / groups) * s * d < 1 << 31 && (groups == 1 || (b / groups * 2) * s * d >= 1 << 31), "{p}");
            let g = groups as usize;
            Expected { entries: vec!["mla_split_entry"; g], grids: vec![json!([(h + 15) / 16, b / groups, 1]); g], scratch: vec![], views: vec![vec![]; g] }
        }
        _ => {
            let (b, h, s, d) = (int("batch"), int("num_heads"), int("seq_len"), int("head_dim"));
            let len = len.unwrap();
            assert!((splits - 1) * len < s && splits * len >= s, "{p}");
            let td = stages[1]["tile_d"].as_i64().unwrap();
            Expected {
                entries: vec!["mla_split_entry", "splitk_reduce_entry"],
                grids: vec![json!([(h + 15) / 16, b, splits]), json!([b, h, (d + td - 1) / td])],
                scratch: vec![("partial_o".into(), b * h * splits * d * e), ("lse".into(), b * h * splits * 4)],
                views: vec![vec![("partial_o", 4), ("lse", 3)], vec![("partial_o", 4), ("lse", 3)]],
            }
        }
    }
}

#[test]
fn exports_decode_attention_as_multi_kernel_plans_with_reasons_for_the_rest() {
    let suite_path = repo().join("kernels/cutile_rust/tests/data/decode.json");
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(&suite_path).unwrap()).unwrap();
    let out = std::env::temp_dir().join(format!("portbench-decode-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let stdout = run(Command::new(env!("CARGO_BIN_EXE_portbench-cutile-rust-export"))
        .arg("--suite")
        .arg(&suite_path)
        .arg("--out")
        .arg(&out)
        .arg("--chosen-only"));

    let skips: Vec<&str> = stdout.lines().filter(|l| l.starts_with("skip: ")).collect();
    let want = [
        "skip: cutile_rust: flash_decode/batch=1,dtype=float32,group_size=1,head_dim=64,num_kv_heads=8,num_q_heads=8,seq_len=256: unsupported dtype \"float32\": the decode pass's tensor-core products take float16 or bfloat16 operands",
        "skip: cutile_rust: flash_decode/batch=1,dtype=float16,group_size=1,head_dim=512,num_kv_heads=8,num_q_heads=8,seq_len=256: head_dim 512: the head-dimension tile 512 exceeds 256 (the [keys, head_dim] tiles and the accumulator must stay in registers)",
        "skip: cutile_rust: mla_decoding_split_kv/batch=1,dtype=float16,head_dim=500,kpe_dim=64,num_heads=16,seq_len=1000: head_dim 500 is not a power of two >= 16 (tilegym's kernels require it too)",
    ];
    assert_eq!(skips, want, "{stdout}");
    for line in ["flash_decode: exported 3 of 5", "gemma_attention_decode: exported 2 of 2", "attention_sink_decode: exported 2 of 2", "mla_decoding: exported 3 of 3", "mla_decoding_split_kv: exported 1 of 2"] {
        assert!(stdout.lines().any(|l| l.starts_with(&format!("summary: cutile_rust/{line}"))), "no {line}: {stdout}");
    }

    for (op, launches) in [("flash_decode", 6), ("gemma_attention_decode", 4), ("attention_sink_decode", 4), ("mla_decoding", 6), ("mla_decoding_split_kv", 2)] {
        let dir = out.join(op);
        let m: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
        assert_eq!((m["frontend"].as_str(), m["operator"].as_str(), m["arch"].as_str()), (Some("cutile_rust"), Some(op), Some("sm_90")));
        // The reasons again in unsupported[], which `portbench run` prints for unpaired
        // configurations; the rest exported in suite order with the suite's params.
        let in_manifest: Vec<String> = m["unsupported"]
            .as_array()
            .map_or(&[][..], |v| v.as_slice())
            .iter()
            .map(|u| format!("skip: cutile_rust: {}: {}", config_id(op, &u["params"]), u["reason"].as_str().unwrap()))
            .collect();
        let printed: Vec<String> = skips.iter().filter(|l| l.starts_with(&format!("skip: cutile_rust: {op}/"))).map(|l| l.to_string()).collect();
        assert_eq!(in_manifest, printed, "{op}");
        let exported: Vec<&Value> = m["configs"].as_array().unwrap().iter().map(|c| &c["params"]).collect();
        let expected_params: Vec<&Value> = suite["configs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["op"] == op)
            .map(|c| &c["params"])
            .filter(|p| !printed.iter().any(|l| l.contains(&format!("{}:", config_id(op, p)))))
            .collect();
        assert_eq!(exported, expected_params, "{op}");

        let tables = check_cubins(&dir, &m);
        for c in m["configs"].as_array().unwrap() {
            let p = &c["params"];
            let x = expected(op, p, &c["tuning"]);
            let scratch: Vec<Value> = x.scratch.iter().map(|(n, b)| json!({"name": n, "bytes": b, "init": "none"})).collect();
            assert_eq!(c["scratch"], Value::Array(scratch), "{op} {p}");
            let l = c["launches"].as_array().unwrap();
            assert_eq!(l.iter().map(|x| x["entry"].as_str().unwrap()).collect::<Vec<_>>(), x.entries, "{op} {p}");
            assert_eq!(l.iter().map(|x| x["grid"].clone()).collect::<Vec<_>>(), x.grids, "{op} {p}");
            let elem = if p["dtype"] == "float32" { 4 } else { 2 };
            for (i, launch) in l.iter().enumerate() {
                assert_eq!((launch["block"].clone(), launch["shared_bytes"].clone(), launch["cluster"].clone()), (json!([1, 1, 1]), json!(0), json!([1, 1, 1])));
                let (entry, table) = &tables[launch["cubin"].as_str().unwrap()];
                assert_eq!(launch["entry"].as_str().unwrap(), entry);
                let params = launch["params"].as_array().unwrap();
                assert_eq!(&packed(params), table, "{op} {p}: {entry} parameters vs cuobjdump");
                // Each launch's scratch views reach all of each buffer, no more.
                let ranks: Vec<(&str, usize, u64)> = x.views[i].iter().map(|&(n, r)| (n, r, if n == "lse" { 4 } else { elem })).collect();
                let reach = scratch_views(params, &ranks);
                let full: Vec<(String, u64)> = if ranks.is_empty() { vec![] } else { x.scratch.iter().map(|(n, b)| (n.clone(), *b as u64)).collect() };
                assert_eq!(reach, full, "{op} {p}: launch {i} scratch views");
            }
            if x.entries.len() == 2 {
                // The reduce weighs every split and stores o, a [B, H, D] view or the tensor.
                let rp = l[1]["params"].as_array().unwrap();
                let splits = c["tuning"]["num_kv_splits"].as_i64().unwrap();
                assert_eq!(rp.last().unwrap(), &json!({"kind": "literal", "type": "i32", "value": splits}));
                assert_eq!(rp[16], json!({"kind": "ptr", "tensor": "o"}));
            }
            if op == "mla_decoding" {
                // The pass writes the operator's o and lse itself; batch group i's views start
                // i * B / groups batches into every tensor.
                let (h, s, d, dpe) = (p["num_heads"].as_i64().unwrap(), p["S_kv"].as_i64().unwrap(), p["BLOCK_D"].as_i64().unwrap(), p["BLOCK_KPE"].as_i64().unwrap());
                let nb = p["batch"].as_i64().unwrap() / l.len() as i64;
                for (i, launch) in l.iter().enumerate() {
                    let pp = launch["params"].as_array().unwrap();
                    let first = i as i64 * nb;
                    let ptr = |t: &str, per_batch: i64| {
                        // A view at offset 0 binds the tensor's own start.
                        if first == 0 { json!({"kind": "ptr", "tensor": t}) } else { json!({"kind": "ptr", "tensor": t, "offset": first * per_batch}) }
                    };
                    let got: Vec<Value> = [0, 7, 14, 21, 28, 37].iter().map(|&j| pp[j].clone()).collect();
                    assert_eq!(got, [ptr("q", h * d), ptr("qpe", h * dpe), ptr("kv", s * d), ptr("kpe", s * dpe), ptr("o", h * d), ptr("lse", h)], "{p}: launch {i}");
                }
            }
        }
        let text = run(Command::new(portbench()).arg("inspect").arg(&dir));
        let configs = m["configs"].as_array().unwrap().len();
        assert!(text.contains(&format!("check     OK: {launches} launches in {configs} configs")), "{op}: {text}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// Two exports of the same configuration, every tuning variant, name the same cubins and write
/// the same bytes and manifest. cutile 0.5.0 prints a load's hints (`latency`, `allow_tma`) in
/// no fixed order, so the bytecode (and the Tile IR text) of one compile differ between
/// processes: the `_ps` sink variants and the reduce's `_pl` carry two hints each, and a name
/// taken from the bytecode would change between these two runs.
#[test]
fn re_export_names_and_writes_the_same_cubins() {
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(repo().join("kernels/cutile_rust/tests/data/decode.json")).unwrap()).unwrap();
    let one = suite["configs"].as_array().unwrap().iter().find(|c| c["op"] == "attention_sink_decode").unwrap().clone();
    let base = std::env::temp_dir().join(format!("portbench-reexport-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let suite_path = base.join("suite.json");
    std::fs::write(&suite_path, json!({"suite": "re-export", "configs": [one]}).to_string()).unwrap();
    let export = |name: &str| {
        let out = base.join(name);
        run(Command::new(env!("CARGO_BIN_EXE_portbench-cutile-rust-export")).arg("--suite").arg(&suite_path).arg("--out").arg(&out));
        let dir = out.join("attention_sink_decode");
        let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
        let m: Value = serde_json::from_str(&manifest).unwrap();
        let cubins: std::collections::BTreeMap<String, Vec<u8>> = m["cubins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["file"].as_str().unwrap().to_string())
            .map(|f| (f.clone(), std::fs::read(dir.join(&f)).unwrap()))
            .collect();
        (manifest, cubins)
    };
    let (first_manifest, first) = export("first");
    let (second_manifest, second) = export("second");
    assert!(first.len() > 8, "expected the sink variants' and reduce's cubins, got {:?}", first.keys());
    assert!(first.keys().any(|f| f.contains("_ps_")), "no two-hint variant exported: {:?}", first.keys());
    assert_eq!(first.keys().collect::<Vec<_>>(), second.keys().collect::<Vec<_>>(), "cubin names differ between exports");
    for (f, bytes) in &first {
        assert!(&second[f] == bytes, "{f}: cubin bytes differ between exports");
        assert!(f.contains(&sha256_hex(bytes)[..8]), "{f} is not named by its cubin's sha256");
    }
    assert_eq!(first_manifest, second_manifest);
    let _ = std::fs::remove_dir_all(&base);
}
