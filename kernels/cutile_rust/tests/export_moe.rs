// SPDX-License-Identifier: Apache-2.0
//! moe_align_block end to end, without a GPU: the exporter binary on
//! tests/data/moe_align_block.json (the suite's smallest shape, an expert count that is no power
//! of two with 16-entry blocks, more assignments than one chunk, and a configuration the port
//! cannot express), then every cubin through `cuobjdump` (sm_90 Tile IR ELF, the
//! `moe_align_block_entry` symbol, its parameter table equal to the manifest's parameters packed
//! at natural alignment) and the bundle through `portbench inspect`; the skip line and
//! `unsupported[]` must give the exact reason.

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
    check_cubins(&dir, &m, "moe_align_block_entry", 3);
    // 37 x 3 assignments over 12 experts in blocks of 16: max_padded 111 + 12 * 15 = 291,
    // 19 blocks; the experts tile 16; one block, flattened topk_ids, the raw sorted_token_ids.
    let c = &m["configs"][1];
    assert_eq!((c["tuning"]["max_padded"].clone(), c["tuning"]["max_blocks"].clone(), c["tuning"]["experts_tile"].clone()), (json!(291), json!(19), json!(16)));
    let l = &c["launches"][0];
    assert_eq!((l["grid"].clone(), l["block"].clone(), l["shared_bytes"].clone()), (json!([1, 1, 1]), json!([1, 1, 1]), json!(0)));
    let p = l["params"].as_array().unwrap();
    assert_eq!(p[0], json!({"kind": "ptr", "tensor": "topk_ids"}));
    assert_eq!(p[1], json!({"kind": "literal", "type": "i32", "value": 111}));
    assert_eq!(p[3], json!({"kind": "ptr", "tensor": "sorted_token_ids"}));
    assert_eq!(p[4], json!({"kind": "ptr", "tensor": "expert_ids"}));
    assert_eq!(p[5], json!({"kind": "extent", "tensor": "expert_ids", "dim": 0, "type": "i32"}));
    assert_eq!(p[7], json!({"kind": "ptr", "tensor": "num_tokens_post_padded"}));
    assert_eq!(p[10], json!({"kind": "literal", "type": "i32", "value": 291}));
    let _ = std::fs::remove_dir_all(&out);
}
