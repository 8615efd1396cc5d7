// SPDX-License-Identifier: Apache-2.0
//! The gated delta rule end to end, without a GPU: the exporter binary on tests/data/gdr.json
//! (tilegym's shape at a short T; odd T with heads that are no powers of two, an initial state
//! and no final state, l2 norm and an fp32 g; fp32 throughout; the chunked operator; and
//! configurations the port cannot express), then every cubin through `cuobjdump` (sm_90 Tile IR
//! ELF, the `gated_delta_rule_entry` symbol, its parameter table equal to the manifest's
//! parameters packed at natural alignment) and every bundle through `portbench inspect`. The
//! skip lines and the manifest's `unsupported[]` must give each unexpressible configuration
//! its exact reason; absent optional tensors must be null pointers.

use std::process::Command;

use portbench_cutile_rust::export::config_id;
use serde_json::{json, Value};

mod common;
use common::*;

#[test]
fn exports_the_gated_delta_rule_with_reasons_for_the_rest() {
    let suite_path = repo().join("kernels/cutile_rust/tests/data/gdr.json");
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(&suite_path).unwrap()).unwrap();
    let out = std::env::temp_dir().join(format!("portbench-gdr-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = export(&suite_path, &out);

    let skips: Vec<&str> = o.lines().filter(|l| l.starts_with("skip: ")).collect();
    let want = [
        "skip: cutile_rust: recurrent_gated_delta_rule/B=1,H=2,K=512,T=16,V=64,dtype=bfloat16: K = 512 exceeds 256 (the [K, BLOCK_V] f32 state of a block is held in registers)",
        "skip: cutile_rust: recurrent_gated_delta_rule/B=1,H=2,K=64,T=16,V=64,dtype=float8_e4m3fn: unsupported dtype \"float8_e4m3fn\" (float32, float16, bfloat16)",
    ];
    assert_eq!(skips, want, "{o}");

    let expected = |op: &str| -> Vec<Value> {
        suite["configs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["op"] == op)
            .map(|c| c["params"].clone())
            .filter(|p| !o.contains(&format!("skip: cutile_rust: {}:", config_id(op, p))))
            .collect()
    };
    let rec = out.join("recurrent_gated_delta_rule");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(rec.join("manifest.json")).unwrap()).unwrap();
    let exported: Vec<Value> = m["configs"].as_array().unwrap().iter().map(|c| c["params"].clone()).collect();
    assert_eq!(exported, expected("recurrent_gated_delta_rule"));
    let printed: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    assert_eq!(unsupported_lines("recurrent_gated_delta_rule", &m), printed);
    check_cubins(&rec, &m, "gated_delta_rule_entry", 3);

    let launch = |m: &Value, i: usize| m["configs"][i]["launches"][0].clone();
    // tilegym's shape: 64 state columns a block, one block per (batch, head, column tile).
    let l0 = launch(&m, 0);
    assert_eq!((l0["grid"].clone(), l0["block"].clone(), l0["shared_bytes"].clone()), (json!([8, 2, 1]), json!([1, 1, 1]), json!(0)));
    assert_eq!(m["configs"][0]["tuning"]["variant"], "bv64_o2");
    let p0 = l0["params"].as_array().unwrap();
    assert_eq!(p0.len(), 76);
    assert_eq!(p0[50], json!({"kind": "null"}), "no use_init: initial_state is a null pointer");
    assert_eq!(p0[59], json!({"kind": "ptr", "tensor": "final_state"}));
    assert_eq!(p0[68], json!({"kind": "null"}), "the step reduces k . q itself: qk_dot is a null pointer");
    // Odd T, K 48 (tile 64), V 24 (tile 32): initial state read, no final state.
    let l1 = launch(&m, 1);
    assert_eq!(l1["grid"], json!([3, 1, 1]));
    let p1 = l1["params"].as_array().unwrap();
    assert_eq!(p1[50], json!({"kind": "ptr", "tensor": "initial_state"}));
    assert_eq!(p1[59], json!({"kind": "null"}));
    assert!(p1[60..68].iter().all(|p| *p == json!({"kind": "literal", "type": "i32", "value": 1})), "{p1:?}");
    let t1 = &m["configs"][1]["tuning"];
    assert_eq!((t1["block_k"].clone(), t1["block_v"].clone(), t1["g_dtype"].clone(), t1["use_l2"].clone()), (json!(64), json!(32), json!("f32"), json!(true)));
    assert_eq!(p1[75]["type"], "f32");
    assert_eq!(p1[75]["value"].as_f64().unwrap(), (1.0f64 / 48f64.sqrt()) as f32 as f64);

    let ch = out.join("chunk_gated_delta_rule");
    let mc: Value = serde_json::from_str(&std::fs::read_to_string(ch.join("manifest.json")).unwrap()).unwrap();
    let exported: Vec<Value> = mc["configs"].as_array().unwrap().iter().map(|c| c["params"].clone()).collect();
    assert_eq!(exported, expected("chunk_gated_delta_rule"));
    assert!(mc.get("unsupported").is_none());
    assert_eq!(mc["configs"][0]["tuning"]["chunk_size"], 64);
    assert!(mc["configs"][0]["tuning"]["algorithm"].as_str().unwrap().starts_with("sequential recurrence"));
    check_cubins(&ch, &mc, "gated_delta_rule_entry", 2);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_variants_are_tilegyms_state_tiles_the_chunked_and_the_pair_kernels() {
    let dir = std::env::temp_dir().join(format!("portbench-gdr-variants-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let suite = dir.join("suite.json");
    let params = json!({"B": 2, "T": 32, "H": 4, "K": 128, "V": 128, "dtype": "bfloat16"});
    std::fs::write(&suite, json!({"configs": [{"op": "recurrent_gated_delta_rule", "params": params}]}).to_string()).unwrap();
    let out = dir.join("bundles");
    run(Command::new(env!("CARGO_BIN_EXE_portbench-cutile-rust-export")).arg("--suite").arg(&suite).arg("--out").arg(&out));
    let b = out.join("recurrent_gated_delta_rule");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(b.join("manifest.json")).unwrap()).unwrap();
    let c = &m["configs"][0];
    let names: Vec<&str> = c["variants"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "bv64_o2", "bv32_o2", "bv16_o2", "bv16_o4", "bv8_o4", "bv8_o6", "chunked_c64_bv64_o1", "bv64_o2_f1", "bv64_o2_f2", "bv32_o2_f2",
            "bv16_o2_f1", "bv16_o2_f2", "bv64_o2_f1_p1", "bv64_o2_f1_p2", "bv64_o2_f1_p1t", "bv32_o4_f1_p1", "bv32_o4_f1_p1t", "bv16_o2_p1",
            "bv16_o2_p2", "bv16_o2_p1t", "bv8_o4_p2", "bv64_o2_f3", "bv64_o2_f3_p1t", "bv32_o4_f3_p1t", "bv16_o2_f3_p1t", "bv128_o1_f3", "bv128_o1_f3_p1t",
            "pair_bv64_o2",
            "pair_bv64_o2_p1t", "pair_bv32_o4", "pair_bv32_o4_p1t", "pair_bv16_o2", "pair_bv16_o2_p1t", "bv64_o2_f4", "bv64_o2_f4_p1t", "bv32_o4_f4_p1t", "bv16_o2_f4_p1t", "bv128_o1_f4",
            "bv128_o1_f4_p1t", "bv64_o2_f5", "bv64_o2_f5_p1t", "bv16_o2_f5", "bv16_o2_f5_p1t"
        ]
    );
    // The recurrence is every plan's last launch (FUSE 4's first computes k . q).
    let grids: Vec<Value> = c["variants"].as_array().unwrap().iter().map(|v| v["launches"].as_array().unwrap().last().unwrap()["grid"].clone()).collect();
    // B*H = 8 blocks of heads; V 128 split into 128 / BV column blocks.
    let by_bv = |bv: i64| json!([8, 128 / bv, 1]);
    assert_eq!(
        grids,
        [64, 32, 16, 16, 8, 8, 64, 64, 64, 32, 16, 16, 64, 64, 64, 32, 32, 16, 16, 16, 8, 64, 64, 32, 16, 128, 128, 64, 64, 32, 32, 16, 16, 64, 64, 32, 16, 128, 128, 64, 64, 16, 16]
            .map(by_bv)
    );
    // One cubin a variant, and the k . q kernel the six FUSE 4 plans share.
    assert_eq!(m["cubins"].as_array().unwrap().len(), 44);
    // The fused steps name their update; the unfused ones keep tilegym's.
    let step = |i: usize| c["variants"][i]["tuning"]["step"].as_str().unwrap().to_string();
    assert!(step(0).contains("tilegym"), "{}", step(0));
    assert!(step(7).starts_with("o = S'^T q + delta") && !step(7).contains("one [2"), "{}", step(7));
    assert!(step(8).contains("one [2, BK, BV] reduction"), "{}", step(8));
    assert!(step(21).contains("as one fma"), "{}", step(21));
    assert!(step(39).contains("S = c S~") && step(39).contains("renormalised"), "{}", step(39));
    // The prefetching ones say how far ahead and through which loads.
    let pf = |i: usize| (c["variants"][i]["tuning"]["prefetch_steps"].clone(), c["variants"][i]["tuning"]["prefetch_loads"].clone());
    assert_eq!((pf(0).0, pf(13), pf(14)), (json!(0), (json!(2), json!("plain")), (json!(1), json!("tma"))));
    // Two tokens a step: their own kernel, the pair's prefetch always through TMA.
    assert_eq!(c["variants"][27]["launches"][0]["entry"], "gated_delta_rule_pair_entry");
    assert!(step(27).starts_with("two tokens from one state"), "{}", step(27));
    assert_eq!((pf(27).0, pf(28)), (json!(0), (json!(1), json!("tma"))));
    // The whole head's V in one block, at occupancy 1.
    assert_eq!(c["variants"][25]["tuning"]["occupancy"], json!(1));
    // Every fused, prefetching or pair variant binds the same parameters as the default.
    for i in (7..33).chain(39..43) {
        assert_eq!(c["variants"][i]["launches"][0]["params"], c["launches"][0]["params"], "variant {i}");
        assert!(c["variants"][i]["scratch"].as_array().unwrap().is_empty(), "variant {i}");
    }
    // FUSE 4: k . q into the scratch tensor, then the step that reads it, where the others
    // bind a null pointer.
    for i in 33..39 {
        let v = &c["variants"][i];
        let l = v["launches"].as_array().unwrap();
        assert_eq!((l.len(), l[0]["entry"].clone(), l[0]["grid"].clone()), (2, json!("gdr_qk_dot_entry"), json!([4, 1, 1])), "variant {i}");
        // B 2 * T 32 * H 4 f32 values.
        assert_eq!(v["scratch"], json!([{"name": "qk_dot", "bytes": 1024, "init": "none"}]), "variant {i}");
        assert!(l[0]["params"].as_array().unwrap().contains(&json!({"kind": "scratch", "name": "qk_dot"})), "variant {i}");
        let mut want = c["launches"][0]["params"].clone();
        want[68] = json!({"kind": "scratch", "name": "qk_dot"});
        // The scratch tensor's extents [2, 32, 4] and strides [128, 4, 1] are literals.
        for (j, x) in [2, 32, 4, 128, 4, 1].into_iter().enumerate() {
            want[69 + j] = json!({"kind": "literal", "type": "i32", "value": x});
        }
        assert_eq!(l[1]["params"], want, "variant {i}");
        assert_eq!(v["tuning"]["kernels"], json!(["gdr_qk_dot", "gated_delta_rule"]));
    }
    let chunked = &c["variants"][6];
    assert_eq!(chunked["tuning"]["kernel"], "gated_delta_rule_chunked");
    assert_eq!(chunked["launches"][0]["entry"], "gated_delta_rule_chunked_entry");
    // The same parameter list as the default: one binding for both kernels.
    assert_eq!(chunked["launches"][0]["params"], c["launches"][0]["params"]);
    let text = run(Command::new(portbench()).arg("inspect").arg(&b));
    assert!(text.contains("check     OK"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
