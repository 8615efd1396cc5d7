// SPDX-License-Identifier: Apache-2.0
//! The matrix products end to end, without a GPU: the exporter binary on tests/data/gemm.json
//! (one small configuration per operator and layout, sizes that are no multiples of the tiles,
//! and configurations the port cannot express), then `portbench inspect` on every bundle (the
//! harness's own checks of manifest, cubins, parameter tables and clusters). The skip lines
//! must give each unexpressible configuration its exact reason.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `$PORTBENCH_BIN`, else the newest `build/<preset>/harness/cli/portbench` of this checkout (the
/// test command builds the harness before the cargo tests run).
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

struct Output {
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let o = Output { stdout: String::from_utf8_lossy(&out.stdout).into(), stderr: String::from_utf8_lossy(&out.stderr).into() };
    assert!(out.status.success(), "{cmd:?} failed: {}\n{}{}", out.status, o.stdout, o.stderr);
    o
}

fn export(suite: &Path, out: &Path, chosen_only: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_portbench-cutile-rust-export"));
    cmd.arg("--suite").arg(suite).arg("--out").arg(out);
    if chosen_only {
        cmd.arg("--chosen-only");
    }
    run(&mut cmd)
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

/// `portbench inspect` accepts the bundle: every check a run makes before its first launch.
fn inspect(dir: &Path) -> String {
    let o = run(Command::new(portbench()).arg("inspect").arg(dir));
    assert!(o.stdout.contains("check     OK"), "{}: {}", dir.display(), o.stdout);
    o.stdout
}

#[test]
fn exports_matrix_products_with_reasons_for_the_rest() {
    let suite_path = repo().join("kernels/cutile_rust/tests/data/gemm.json");
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(&suite_path).unwrap()).unwrap();
    let out = std::env::temp_dir().join(format!("portbench-gemm-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = export(&suite_path, &out, true);

    // The exact reason of every configuration the port cannot express, one skip line each.
    let skips: Vec<&str> = o.stdout.lines().filter(|l| l.starts_with("skip: ")).collect();
    let want = [
        "skip: cutile_rust: matmul/dtype=float16,k=64,m=64,n=64,offset_a=3,offset_b=0,static_persistent=false,transpose_a=false,transpose_b=false,use_tma=true: offset_a = 3 elements is not a multiple of 16 bytes (the kernel's views assume 16-byte aligned bases)",
        "skip: cutile_rust: matmul/dtype=float64,k=64,m=64,n=64,static_persistent=false,transpose_a=false,transpose_b=false: unsupported dtype \"float64\" (float16, bfloat16, float32 as tf32, float8_e4m3fn, float8_e5m2)",
        "skip: cutile_rust: bmm/batch=2,dtype=float16,k=64,m=64,n=64,static_persistent=false,transpose_a=false,transpose_b=false: static_persistent = false: this port has only the persistent bmm (tilegym's non-persistent bmm takes no transposes)",
        "skip: cutile_rust: group_gemm/dtype=float16,k=100,m=64,n=64,num_groups=2,transpose_b=false: k = 100: rows of 200 bytes are not 16-byte aligned (the in-kernel views load through TMA)",
        "skip: cutile_rust: splitk_reduce/S_kv=64,batch=1,dtype=float16,head_dim=64,lse_dtype=float16,num_heads=2,num_kv_splits=2: lse_dtype \"float16\": the kernel reads float32 LSEs",
    ];
    assert_eq!(skips, want, "{}", o.stdout);
    for line in ["summary: cutile_rust/matmul: exported 4 of 6", "summary: cutile_rust/bmm: exported 1 of 2", "summary: cutile_rust/group_gemm: exported 1 of 2", "summary: cutile_rust/splitk_reduce: exported 1 of 2"] {
        assert!(o.stdout.lines().any(|l| l.starts_with(line)), "no '{line}' in {}", o.stdout);
    }

    for op in ["matmul", "bmm", "group_gemm", "splitk_reduce"] {
        let dir = out.join(op);
        let m = manifest(&dir);
        assert_eq!((m["frontend"].as_str(), m["arch"].as_str()), (Some("cutile_rust"), Some("sm_90")));
        // The configurations the port expresses, in suite order, with the suite's params.
        let exported: Vec<&Value> = m["configs"].as_array().unwrap().iter().map(|c| &c["params"]).collect();
        let expected: Vec<&Value> = suite["configs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["op"] == op)
            .map(|c| &c["params"])
            .filter(|p| !o.stdout.contains(&format!("skip: cutile_rust: {}:", portbench_cutile_rust::export::config_id(op, p))))
            .collect();
        assert_eq!(exported, expected, "{op}");
        // The same reasons in the manifest (`unsupported[]`), which `portbench run` prints for
        // the unpaired configurations.
        let in_manifest: Vec<String> = m["unsupported"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| format!("skip: cutile_rust: {}: {}", portbench_cutile_rust::export::config_id(op, &u["params"]), u["reason"].as_str().unwrap()))
            .collect();
        let printed: Vec<String> = skips.iter().filter(|l| l.starts_with(&format!("skip: cutile_rust: {op}/"))).map(|l| l.to_string()).collect();
        assert_eq!(in_manifest, printed, "{op}");
        for c in m["configs"].as_array().unwrap() {
            assert!(c.get("variants").is_none(), "--chosen-only wrote variants");
            let l = &c["launches"][0];
            let ctas = c["tuning"]["num_ctas"].as_i64().unwrap_or(1);
            assert_eq!(l["cluster"], json!([ctas, 1, 1]));
            assert_eq!((l["block"].clone(), l["shared_bytes"].clone()), (json!([1, 1, 1]), json!(0)));
        }
        let text = inspect(&dir);
        assert!(text.contains("registers"), "{text}");
    }

    // group_gemm: one launch over all groups, the tensors reached through address tables.
    let g = manifest(&out.join("group_gemm"));
    let l = &g["configs"][0]["launches"];
    assert_eq!(l.as_array().unwrap().len(), 1);
    assert_eq!(l[0]["params"][0], json!({"kind": "ptr_table", "tensors": ["a0", "a1", "a2"]}));
    assert_eq!(l[0]["params"][2], json!({"kind": "ptr_table", "tensors": ["c0", "c1", "c2"]}));
    // matmul: transposed operands are the stored views (A [K, M], B [N, K]).
    let mm = manifest(&out.join("matmul"));
    let tuning = |i: usize| mm["configs"][i]["tuning"].clone();
    assert_eq!((tuning(1)["transpose_a"].clone(), tuning(1)["mma_operands"].clone()), (json!(true), json!("tf32")));
    assert_eq!(tuning(3)["transpose_b"], json!(true));
    assert_eq!(mm["configs"][0]["tuning"]["kernel"], "matmul");
    assert_eq!(mm["configs"][1]["tuning"]["kernel"], "matmul_persistent");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn variants_carry_their_clusters() {
    // group_gemm and splitk_reduce with every candidate: clusters of 2 in some.
    let dir = std::env::temp_dir().join(format!("portbench-gemm-variants-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let suite = dir.join("suite.json");
    let configs = json!({"configs": [
        {"op": "group_gemm", "params": {"num_groups": 2, "m": 256, "n": 256, "k": 128, "transpose_b": false, "dtype": "float16"}},
        {"op": "splitk_reduce", "params": {"batch": 1, "num_heads": 4, "head_dim": 128, "num_kv_splits": 8, "S_kv": 1024, "dtype": "float16", "lse_dtype": "float32"}}
    ]});
    std::fs::write(&suite, configs.to_string()).unwrap();
    let out = dir.join("bundles");
    export(&suite, &out, false);
    let g = manifest(&out.join("group_gemm"));
    let c = &g["configs"][0];
    let names: Vec<&str> = c["variants"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
    // The default's tiles shrink to 64x64 (32 tiles, fewer than the 132 SMs); then tilegym's.
    assert_eq!(names, ["m64n64k64_c1_o1", "m128n128k128_c1_o1", "m256n256k64_c2_o1", "m128n128k64_c1_o1", "m256n128k64_c2_o2_l3"]);
    assert_eq!((c["tuning"]["variant"].as_str(), c["tuning"]["tuning_source"].as_str()), (Some("m64n64k64_c1_o1"), Some("default: no tuning record; the exporter's heuristic")));
    // 2 groups x 4 tiles of 128x128; 256x256 in clusters of 2: 2 tiles, the grid in clusters;
    // 256x128 at occupancy 2: 4 tiles, min(132 / 2, 4) x 2 = 8 clusters.
    let v = |i: usize| &c["variants"][i]["launches"][0];
    assert_eq!((v(0)["grid"].clone(), v(0)["cluster"].clone()), (json!([32, 1, 1]), json!([1, 1, 1])));
    assert_eq!((v(3)["grid"].clone(), v(3)["cluster"].clone()), (json!([8, 1, 1]), json!([1, 1, 1])));
    assert_eq!((v(2)["grid"].clone(), v(2)["cluster"].clone()), (json!([2, 1, 1]), json!([2, 1, 1])));
    assert_eq!((v(4)["grid"].clone(), v(4)["cluster"].clone()), (json!([8, 1, 1]), json!([2, 1, 1])));
    let s = manifest(&out.join("splitk_reduce"));
    assert_eq!(s["configs"][0]["variants"].as_array().unwrap().len(), 5);
    for op in ["group_gemm", "splitk_reduce"] {
        inspect(&out.join(op));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
