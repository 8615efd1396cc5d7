// SPDX-License-Identifier: Apache-2.0
//! moe_align_block end to end, without a GPU: the exporter binary on
//! tests/data/moe_align_block.json (the suite's smallest shape, an expert count that is no power
//! of two with 16-entry blocks, more assignments than one chunk, and a configuration the port
//! cannot express), then every cubin through `cuobjdump` (sm_90 Tile IR ELF, the
//! `moe_align_block_entry` symbol, its parameter table equal to the manifest's parameters packed
//! at natural alignment) and the bundle through `portbench inspect`; the skip line and
//! `unsupported[]` must give the exact reason.

use std::process::Command;

use serde_json::{json, Value};

mod common;
use common::*;

#[test]
fn exports_moe_align_block_with_reasons_for_the_rest() {
    let suite_path = repo().join("kernels/cutile_rust/tests/data/moe_align_block.json");
    let out = std::env::temp_dir().join(format!("portbench-moe-align-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = export(&suite_path, &out);
    let skips: Vec<&str> = o.lines().filter(|l| l.starts_with("skip: ")).collect();
    let want = ["skip: cutile_rust: moe_align_block/block_size=64,n_experts=512,num_tokens=4,top_k=2: n_experts = 512 exceeds 256 (one [chunk, experts] one-hot tile per pass)"];
    assert_eq!(skips, want, "{o}");
    let dir = out.join("moe_align_block");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(unsupported_lines("moe_align_block", &m), want);
    assert_eq!(m["configs"].as_array().unwrap().len(), 3);
    // Every cubin: sm_90, its entry a STO_ENTRY symbol, one of the three kernels.
    let entries = ["moe_align_count_entry", "moe_align_scatter_entry"];
    for f in m["cubins"].as_array().unwrap() {
        let file = dir.join(f["file"].as_str().unwrap());
        let elf = run(std::process::Command::new(cuobjdump()).arg("-elf").arg(&file));
        assert!(elf.lines().any(|l| l.contains("64-bit ELF") && l.contains("sm=90")), "{}", file.display());
        let symbols = run(std::process::Command::new(cuobjdump()).arg("-symbols").arg(&file));
        assert!(entries.iter().any(|e| symbols.lines().any(|l| l.contains("STO_ENTRY") && l.trim_end().ends_with(e))), "{symbols}");
    }
    // 37 x 3 assignments over 12 experts in blocks of 16: max_padded 111 + 12 * 15 = 291,
    // 19 blocks; the experts tile 16. The default plan: tilegym's max(12, 1) programs of
    // ceil(111 / 12) -> 16 entries, 7 chunks rounded up to 8 blocks, a counts scratch [8, 16].
    let c = &m["configs"][1];
    assert_eq!(c["tuning"]["variant"], json!("parallel"));
    assert_eq!((c["tuning"]["max_padded"].clone(), c["tuning"]["max_blocks"].clone(), c["tuning"]["experts_tile"].clone()), (json!(291), json!(19), json!(16)));
    assert_eq!(c["scratch"], json!([{"name": "counts", "bytes": 8 * 16 * 4, "init": "none"}]));
    let l = c["launches"].as_array().unwrap();
    assert_eq!(l.len(), 2);
    assert!(l[0]["entry"].as_str().unwrap().starts_with("moe_align_count") && l[1]["entry"].as_str().unwrap().starts_with("moe_align_scatter"), "{l:?}");
    assert_eq!((l[0]["grid"].clone(), l[1]["grid"].clone()), (json!([8, 1, 1]), json!([8, 1, 1])));
    let p = l[0]["params"].as_array().unwrap();
    assert_eq!(p[0], json!({"kind": "ptr", "tensor": "topk_ids"}));
    assert_eq!(p[1], json!({"kind": "literal", "type": "i32", "value": 111}));
    assert_eq!(p[3], json!({"kind": "scratch", "name": "counts"}));
    assert_eq!((p[4].clone(), p[5].clone()), (json!({"kind": "literal", "type": "i32", "value": 8}), json!({"kind": "literal", "type": "i32", "value": 16})));
    assert_eq!(p[8], json!({"kind": "ptr", "tensor": "sorted_token_ids"}));
    assert_eq!(p.last().unwrap(), &json!({"kind": "literal", "type": "i32", "value": 1}));
    let q = l[1]["params"].as_array().unwrap();
    assert_eq!(q[3], json!({"kind": "scratch", "name": "counts"}));
    assert_eq!(q[8], json!({"kind": "ptr", "tensor": "sorted_token_ids"}));
    assert_eq!(q[9], json!({"kind": "ptr", "tensor": "expert_ids"}));
    assert!(q.contains(&json!({"kind": "ptr", "tensor": "num_tokens_post_padded"})));
    // Chosen plans only: the single_block variant (its parameters: src/moe/plan.rs's unit test) is not exported.
    assert!(c.get("variants").is_none());
    // portbench inspect's own check of every launch against its cubin's parameter table.
    let text = run(std::process::Command::new(portbench()).arg("inspect").arg(&dir));
    assert!(text.contains("check     OK: 6 launches in 3 configs"), "{text}");
    let _ = std::fs::remove_dir_all(&out);
}

/// moe end to end without a GPU: tests/data/moe.json through the exporter (chosen plans), the
/// seven launches of every plan in order over the declared scratch buffers (the default: A
/// gathered into sorted order first), every launch's parameters against its cubin's own table
/// (`cuobjdump -elf`), `portbench inspect`, and the exact reasons of the two configurations the
/// port cannot express.
#[test]
fn exports_moe_as_a_seven_kernel_plan_with_reasons_for_the_rest() {
    let suite_path = repo().join("kernels/cutile_rust/tests/data/moe.json");
    let out = std::env::temp_dir().join(format!("portbench-moe-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = export(&suite_path, &out);
    let skips: Vec<&str> = o.lines().filter(|l| l.starts_with("skip: ")).collect();
    let want = [
        "skip: cutile_rust: moe/call_type=e2e_fused,dtype=float16,hidden_size=96,moe_intermediate_size=64,n_experts=8,num_tokens=16,top_k=2: hidden_size 96 and moe_intermediate_size 64 must be multiples of the K step 64 (the gathered rows are not masked along K)",
        "skip: cutile_rust: moe/call_type=e2e_fused,dtype=float16,hidden_size=128,moe_intermediate_size=64,n_experts=300,num_tokens=16,top_k=2: n_experts = 300 exceeds 256 (the alignment's [chunk, experts] one-hot tile)",
    ];
    assert_eq!(skips, want, "{o}");
    let dir = out.join("moe");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(unsupported_lines("moe", &m), want);
    let configs = m["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 2);
    let cubin_of = |f: &str| dir.join(f);
    for c in configs {
        let l = c["launches"].as_array().unwrap();
        let entries: Vec<&str> = l.iter().map(|x| x["entry"].as_str().unwrap()).collect();
        assert_eq!(
            entries,
            ["moe_align_count_entry", "moe_align_scatter_entry", "moe_gather_entry", "moe_gemm_sorted_entry", "moe_silu_and_mul_entry", "moe_gemm_sorted_entry", "moe_sum_entry"]
        );
        for x in l {
            let elf = run(Command::new(cuobjdump()).arg("-elf").arg(cubin_of(x["cubin"].as_str().unwrap())));
            assert_eq!(kparams(&elf, x["entry"].as_str().unwrap()), packed(x["params"].as_array().unwrap()), "{}", x["cubin"]);
        }
        let names: Vec<&str> = c["scratch"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["counts", "sorted_token_ids", "expert_ids", "num_tokens_post_padded", "a_sorted", "cache1", "cache2", "cache3"]);
        // Every operator tensor is bound, the outputs only by the last launch.
        let bound = |i: usize| -> Vec<String> {
            l[i]["params"].as_array().unwrap().iter().filter(|p| p["kind"] == "ptr").map(|p| p["tensor"].as_str().unwrap().to_string()).collect()
        };
        assert_eq!(bound(0), ["topk_ids"]);
        assert_eq!(bound(1), ["topk_ids"]);
        assert_eq!(bound(2), ["hidden_states"]);
        assert_eq!(bound(3), ["w1", "topk_weights"]);
        assert!(bound(4).is_empty());
        assert_eq!(bound(5), ["w2", "topk_weights"]);
        assert_eq!(bound(6), ["out"]);
    }
    // 37 x 3 = 111 assignments over 12 experts, 64-row blocks (111 <= 64 x 12): max_padded
    // 111 + 12 x 63 = 867, 14 blocks. The gather: 14 row blocks by one 128-column tile; GEMM 1
    // over N = 2 x 192 = 384 (3 column tiles), GEMM 2 over H = 128 (1); silu_and_mul one row a
    // block over all 867 slots (crate::kernels' tile for 111 rows of 192). The sorted
    // intermediates have 867 rows, cache3 the 111 assignments. The alignment: chunks of 16
    // assignments (ceil(111 / 12) = 10, a power of two, at least 16), 8 of them, a [8, 16] counts
    // scratch.
    let c = &configs[1];
    assert_eq!((c["tuning"]["variant"].clone(), c["tuning"]["max_padded"].clone(), c["tuning"]["max_blocks"].clone()), (json!("sorted_once_m64_n128_k64"), json!(867), json!(14)));
    let l = c["launches"].as_array().unwrap();
    let grids: Vec<Value> = l.iter().map(|x| x["grid"].clone()).collect();
    assert_eq!(grids, [json!([8, 1, 1]), json!([8, 1, 1]), json!([14, 1, 1]), json!([42, 1, 1]), json!([867, 1, 1]), json!([14, 1, 1]), grids[6].clone()]);
    let bytes: Vec<i64> = c["scratch"].as_array().unwrap().iter().map(|s| s["bytes"].as_i64().unwrap()).collect();
    assert_eq!(bytes, [8 * 16 * 4, 867 * 4, 14 * 4, 4, 867 * 128 * 2, 867 * 384 * 2, 867 * 192 * 2, 111 * 128 * 2]);
    // Which scratch buffers each launch sees, in parameter order: the gather writes a_sorted,
    // GEMM 1 reads it and writes cache1, silu_and_mul cache1 -> cache2, GEMM 2 cache2 -> cache3,
    // the sum reads cache3.
    let scratch = |i: usize| -> Vec<String> {
        l[i]["params"].as_array().unwrap().iter().filter(|p| p["kind"] == "scratch").map(|p| p["name"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(scratch(2), ["a_sorted", "sorted_token_ids", "num_tokens_post_padded"]);
    assert_eq!(scratch(3), ["a_sorted", "cache1", "sorted_token_ids", "expert_ids", "num_tokens_post_padded"]);
    assert_eq!(scratch(4), ["cache1", "cache2", "num_tokens_post_padded"]);
    assert_eq!(scratch(5), ["cache2", "cache3", "sorted_token_ids", "expert_ids", "num_tokens_post_padded"]);
    assert_eq!(scratch(6), ["cache3"]);
    let text = run(Command::new(portbench()).arg("inspect").arg(&dir));
    assert!(text.contains("check     OK: 14 launches in 2 configs"), "{text}");
    let _ = std::fs::remove_dir_all(&out);
}
