// SPDX-License-Identifier: Apache-2.0
//! fmha end to end, without a GPU: the exporter binary on tests/data/fmha.json (causal and not,
//! GQA, odd lengths, fp8 e5m2, a head_dim that is no power of two, an fp32 output, and
//! configurations the port cannot express), then every cubin through `cuobjdump` (sm_90 Tile IR
//! ELF, the `fmha_entry` symbol, its parameter table equal to the manifest's parameters packed
//! at natural alignment) and every bundle through `portbench inspect`. The skip lines and the
//! manifest's `unsupported[]` must give each unexpressible configuration its exact reason.

use serde_json::{json, Value};

mod common;
use common::*;

#[test]
fn exports_fmha_with_reasons_for_the_rest() {
    let suite_path = repo().join("kernels/cutile_rust/tests/data/fmha.json");
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(&suite_path).unwrap()).unwrap();
    let out = std::env::temp_dir().join(format!("portbench-fmha-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = export(&suite_path, &out);

    let skips: Vec<&str> = o.lines().filter(|l| l.starts_with("skip: ")).collect();
    let want = [
        "skip: cutile_rust: fmha/batch=1,dtype=float32,head_dim=64,heads=2,is_causal=false,seq_len=64: unsupported dtype \"float32\" (float16, bfloat16, float8_e5m2, float8_e4m3fn: the tensor-core operand types)",
        "skip: cutile_rust: fmha/batch=1,dtype=float16,head_dim=512,heads=2,is_causal=true,seq_len=64: head_dim = 512 exceeds 256 (the [rows, head_dim] f32 accumulator of a query tile would not fit a block)",
        "skip: cutile_rust: fmha/batch=1,dtype=float16,head_dim=64,heads=2,is_causal=false,seq_len=64,sm_scale=-0.125: sm_scale = -0.125: the kernel needs a positive finite scale",
    ];
    assert_eq!(skips, want, "{o}");
    assert!(o.lines().any(|l| l.starts_with("summary: cutile_rust/fmha: exported 5 of 8")), "{o}");

    let dir = out.join("fmha");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!((m["frontend"].as_str(), m["operator"].as_str(), m["arch"].as_str()), (Some("cutile_rust"), Some("fmha"), Some("sm_90")));
    // The configurations the port expresses, in suite order, with the suite's params.
    let all: Vec<&Value> = suite["configs"].as_array().unwrap().iter().map(|c| &c["params"]).collect();
    let got: Vec<&Value> = m["configs"].as_array().unwrap().iter().map(|c| &c["params"]).collect();
    assert_eq!(got, all[..5].to_vec());
    assert_eq!(unsupported_lines("fmha", &m), want);
    assert_eq!(m["cubins"].as_array().unwrap().len(), 5, "one specialisation per configuration here");

    // Plans: grid [ceil(S / BM), B * H], the reference's tensors, GQA's k/v of kv_heads heads.
    let cfg = |i: usize| &m["configs"][i];
    let launch = |i: usize| &cfg(i)["launches"][0];
    assert_eq!(launch(0)["grid"], json!([1, 2, 1]));
    assert_eq!(launch(1)["grid"], json!([1, 8, 1]));
    assert_eq!(launch(2)["grid"], json!([5, 4, 1]));
    for i in 0..5 {
        let l = launch(i);
        assert_eq!((l["entry"].as_str(), l["block"].clone(), l["shared_bytes"].clone(), l["cluster"].clone()), (Some("fmha_entry"), json!([1, 1, 1]), json!(0), json!([1, 1, 1])));
        let p = l["params"].as_array().unwrap();
        assert_eq!(p.len(), 37);
        let tensors: Vec<&str> = [0, 9, 18, 27].iter().map(|&k| p[k]["tensor"].as_str().unwrap()).collect();
        assert_eq!(tensors, ["q", "k", "v", "o"]);
        assert_eq!(p[36]["kind"], "literal");
        assert_eq!(p[36]["type"], "f32");
    }
    assert_eq!(cfg(1)["tuning"]["query_group_size"], json!(2));
    assert_eq!(cfg(2)["tuning"]["query_group_size"], json!(4));
    assert_eq!((cfg(0)["tuning"]["causal"].clone(), cfg(1)["tuning"]["causal"].clone()), (json!(true), json!(false)));
    // Causal-block skipping at S = 1025, tiles 256 x 128: query tile i loads
    // ceil(min((i+1) * 256, 1025) / 128) key tiles, 2+4+6+8+9 = 29 per head, 4 heads.
    assert_eq!(cfg(2)["tuning"]["key_tiles_loaded"], json!(29 * 4));
    // sm_scale 0.1 in base 2, as an f32 literal; head_dim 80 in a 128-column tile.
    let scale = launch(4)["params"][36]["value"].as_f64().unwrap();
    assert_eq!(scale as f32, (0.1f64 * std::f64::consts::LOG2_E) as f32);
    assert_eq!(cfg(4)["tuning"]["tile_d"], json!(128));
    assert_eq!(cfg(3)["tuning"]["mma_operands"], json!("f8e5m2"));

    check_cubins(&dir, &m, "fmha_entry", 5);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn exports_attention_sink_with_reasons_for_the_rest() {
    let suite_path = repo().join("kernels/cutile_rust/tests/data/attention_sink.json");
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(&suite_path).unwrap()).unwrap();
    let out = std::env::temp_dir().join(format!("portbench-sink-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = export(&suite_path, &out);
    let skips: Vec<&str> = o.lines().filter(|l| l.starts_with("skip: ")).collect();
    let want = [
        "skip: cutile_rust: attention_sink/batch=1,dtype=float32,head_dim=64,num_keys=64,num_kv_groups=2,num_kv_heads=2,num_queries=64,sliding_window=None,start_q=0: unsupported dtype \"float32\" (float16, bfloat16)",
        "skip: cutile_rust: attention_sink/batch=1,dtype=bfloat16,head_dim=64,num_keys=64,num_kv_groups=2,num_kv_heads=2,num_queries=64,sliding_window=-4,start_q=0: sliding_window must be >= 0 (0 or null: none), got -4",
    ];
    assert_eq!(skips, want, "{o}");
    let dir = out.join("attention_sink");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(unsupported_lines("attention_sink", &m), want);
    let all: Vec<&Value> = suite["configs"].as_array().unwrap().iter().map(|c| &c["params"]).collect();
    let got: Vec<&Value> = m["configs"].as_array().unwrap().iter().map(|c| &c["params"]).collect();
    assert_eq!(got, all[..3].to_vec());
    let cfg = |i: usize| &m["configs"][i];
    let launch = |i: usize| &cfg(i)["launches"][0];
    // Grid [ceil(Sq / BM), B * H]; one query takes a 64-row tile.
    assert_eq!((launch(0)["grid"].clone(), launch(1)["grid"].clone(), launch(2)["grid"].clone()), (json!([2, 4, 1]), json!([2, 16, 1]), json!([1, 4, 1])));
    assert_eq!(cfg(2)["tuning"]["tile_m"], json!(64));
    for i in 0..3 {
        let p = launch(i)["params"].as_array().unwrap();
        assert_eq!(p.len(), 42);
        let tensors: Vec<&str> = [0, 9, 18, 27, 30].iter().map(|&k| p[k]["tensor"].as_str().unwrap()).collect();
        assert_eq!(tensors, ["q", "k", "v", "sinks", "o"]);
        // q and o are [B, Sq, H, D] views: extents and strides are literals.
        assert_eq!((p[1]["kind"].as_str(), p[31]["kind"].as_str(), p[10]["kind"].as_str()), (Some("literal"), Some("literal"), Some("extent")));
    }
    let lit = |i: usize, k: usize| launch(i)["params"][k]["value"].as_i64().unwrap();
    // start_q and the window: none is passed as start_q + num_queries.
    assert_eq!((lit(0, 40), lit(0, 41)), (100, 300));
    assert_eq!((lit(1, 40), lit(1, 41)), (0, 32));
    assert_eq!((lit(2, 40), lit(2, 41)), (1000, 1001));
    // H = 8 heads of 128 in config 1: o's view row stride H*D, head stride D.
    assert_eq!((lit(1, 36), lit(1, 37)), (8 * 128, 128));
    // Window 32, tiles 128: query tile 0 loads key tile 0, tile 1 (rows 128..) key tile 0 and 1.
    assert_eq!(cfg(1)["tuning"]["key_tiles_loaded"], json!(3 * 16));
    check_cubins(&dir, &m, "attention_sink_entry", 3);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn exports_gemma_attention_with_reasons_for_the_rest() {
    let suite_path = repo().join("kernels/cutile_rust/tests/data/gemma_attention.json");
    let out = std::env::temp_dir().join(format!("portbench-gemma-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = export(&suite_path, &out);
    let skips: Vec<&str> = o.lines().filter(|l| l.starts_with("skip: ")).collect();
    let want = [
        "skip: cutile_rust: gemma_attention/batch=1,dtype=float8_e5m2,head_dim=64,heads=2,is_causal=true,seq_len=64,soft_cap=30,window=16: unsupported dtype \"float8_e5m2\" (float16, bfloat16)",
        "skip: cutile_rust: gemma_attention/batch=1,dtype=bfloat16,head_dim=64,heads=2,is_causal=true,seq_len=64,soft_cap=-1,window=16: soft_cap = -1: must be >= 0 (0: none) and finite",
    ];
    assert_eq!(skips, want, "{o}");
    let dir = out.join("gemma_attention");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(unsupported_lines("gemma_attention", &m), want);
    assert_eq!(m["configs"].as_array().unwrap().len(), 2);
    let cfg = |i: usize| &m["configs"][i];
    let launch = |i: usize| &cfg(i)["launches"][0];
    assert_eq!((launch(0)["grid"].clone(), launch(1)["grid"].clone()), (json!([3, 4, 1]), json!([1, 2, 1])));
    let p = |i: usize, k: usize| launch(i)["params"][k]["value"].as_f64().unwrap();
    // Soft cap 50: scores (50 log2 e) tanh(q.k / (sqrt(128) 50)); none: q.k log2 e / sqrt(64).
    assert_eq!(((p(0, 36) as f32), (p(0, 37) as f32), p(0, 38)), (((1.0 / 128f64.sqrt()) / 50.0) as f32, (50.0 * std::f64::consts::LOG2_E) as f32, 64.0));
    assert_eq!(((p(1, 36) as f32), p(1, 37), p(1, 38)), ((0.125 * std::f64::consts::LOG2_E) as f32, 0.0, 77.0));
    // Window 64, causal, tiles 128: query tile i loads key tiles max(128 i - 64, 0) / 128 ..= i.
    assert_eq!(cfg(0)["tuning"]["key_tiles_loaded"], json!((1 + 2 + 2) * 4));
    check_cubins(&dir, &m, "gemma_attention_entry", 2);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn exports_mla_with_reasons_for_the_rest() {
    let suite_path = repo().join("kernels/cutile_rust/tests/data/mla.json");
    let out = std::env::temp_dir().join(format!("portbench-mla-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = export(&suite_path, &out);
    let skips: Vec<&str> = o.lines().filter(|l| l.starts_with("skip: ")).collect();
    let want = [
        "skip: cutile_rust: mla/batch=1,d_model=128,d_pe=64,dtype=float32,heads=4,is_causal=true,kpe_heads=1,seq_len=64: unsupported dtype \"float32\" (float16, bfloat16, float8_e5m2, float8_e4m3fn: the tensor-core operand types)",
        "skip: cutile_rust: mla/batch=1,d_model=512,d_pe=64,dtype=bfloat16,heads=4,is_causal=true,kpe_heads=1,seq_len=64: d_model = 512 exceeds 256 (the [rows, d_model] f32 accumulator of a query tile would not fit a block)",
    ];
    assert_eq!(skips, want, "{o}");
    let dir = out.join("mla");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(unsupported_lines("mla", &m), want);
    assert_eq!(m["configs"].as_array().unwrap().len(), 2);
    let launch = |i: usize| &m["configs"][i]["launches"][0];
    // 64-row tiles: ceil(200 / 64) and ceil(65 / 64) query tiles per head.
    assert_eq!((launch(0)["grid"].clone(), launch(1)["grid"].clone()), (json!([4, 4, 1]), json!([2, 4, 1])));
    for i in 0..2 {
        let p = launch(i)["params"].as_array().unwrap();
        assert_eq!(p.len(), 55);
        let tensors: Vec<&str> = [0, 9, 18, 27, 36, 45].iter().map(|&k| p[k]["tensor"].as_str().unwrap()).collect();
        assert_eq!(tensors, ["q", "k", "v", "qpe", "kpe", "o"]);
    }
    let t = |i: usize| &m["configs"][i]["tuning"];
    assert_eq!((t(0)["kpe_group_size"].clone(), t(1)["kpe_group_size"].clone(), t(1)["query_group_size"].clone()), (json!(4), json!(2), json!(2)));
    // Causal, 64 x 64 tiles at S = 200: query tile i loads min(i + 1, 4) key tiles, 4 heads.
    assert_eq!(t(0)["key_tiles_loaded"], json!((1 + 2 + 3 + 4) * 4));
    check_cubins(&dir, &m, "mla_entry", 2);
    let _ = std::fs::remove_dir_all(&out);
}
