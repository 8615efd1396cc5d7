// SPDX-License-Identifier: Apache-2.0
//! The plan of moe_align_block: one tile block, chunk and expert tiles from the configuration.
//!
//! The tensors are the reference's (reference/src/ops/moe_align_block.cpp), all i32 and
//! contiguous: topk_ids `[M, top_k]` (viewed as `[M * top_k]`), sorted_token_ids
//! `[M*top_k + E*(block_size-1)]` (`max_padded`), expert_ids `[ceil(max_padded / block_size)]`,
//! num_tokens_post_padded `[1]`.

use anyhow::{ensure, Result};
use serde_json::{json, Map, Value};

use crate::abi::{KernelArg, LitValue, ScalarType};
use crate::plan::{param_i64, param_int_or, pow2_ceil, specialization_json, tensor_arg, view_arg_at, Candidates, Overrides, Plan, TensorLayout};
use crate::target::Target;

/// Operators of this module (registered in `crate::plan::OPERATORS`).
pub const OPERATORS: &[&str] = &["moe_align_block"];

/// Entries a chunk of the passes (`[BT, E2]` i32 tiles: 64 KB at 64 experts).
pub const CHUNK: i64 = 256;

/// The most experts the `[BT, E2]` one-hot tiles hold.
pub const MAX_EXPERTS: i64 = 256;

fn plan_align(params: &Value) -> Result<Plan> {
    let m = param_i64(params, "num_tokens")?;
    let topk = param_i64(params, "top_k")?;
    let e = param_i64(params, "n_experts")?;
    let block = param_int_or(params, "block_size", 128)?;
    ensure!(topk <= e, "top_k = {topk} exceeds n_experts = {e}");
    ensure!(block > 0 && block <= 1 << 20, "block_size = {block} must be in 1..=2^20");
    ensure!(e <= MAX_EXPERTS, "n_experts = {e} exceeds {MAX_EXPERTS} (one [chunk, experts] one-hot tile per pass)");
    let numel = m * topk;
    let max_padded = numel + e * (block - 1);
    let max_blocks = (max_padded + block - 1) / block;
    ensure!(max_padded <= i32::MAX as i64, "sorted_token_ids has {max_padded} elements, more than 2^31-1 (i32 indices)");
    let e2 = pow2_ceil(e);
    let tensors = vec![
        TensorLayout::contiguous("topk_ids", &[numel], 4),
        TensorLayout::contiguous("expert_ids", &[max_blocks], 4),
        TensorLayout::contiguous("num_tokens_post_padded", &[1], 4),
    ];
    let args = vec![
        view_arg_at(&tensors[0], 0, None),
        KernelArg::RawPtr { name: "sorted_token_ids".into(), tensor: "sorted_token_ids".into() },
        tensor_arg(&tensors[1], None),
        tensor_arg(&tensors[2], None),
        KernelArg::Scalar { name: "max_padded".into(), ty: ScalarType::I32, value: LitValue::Int(max_padded) },
    ];
    let mut tuning = Map::new();
    tuning.insert("kernel".into(), json!("moe_align_block"));
    tuning.insert("experts_tile".into(), json!(e2));
    tuning.insert("chunk".into(), json!(CHUNK));
    tuning.insert("block_size".into(), json!(block));
    tuning.insert("max_padded".into(), json!(max_padded));
    tuning.insert("max_blocks".into(), json!(max_blocks));
    tuning.insert(
        "algorithm".into(),
        json!("one tile block, four passes over 256-entry chunks: counts, stable positions scattered through a pointer tile, padding slots, block experts; every output element written once"),
    );
    tuning.insert("specialization".into(), specialization_json(&tensors));
    Ok(Plan {
        kernel: "moe_align_block",
        elem: "i32",
        generics: vec![e2.to_string(), CHUNK.to_string(), block.to_string()],
        tensors,
        args,
        grid: [1, 1, 1],
        stem: format!("moe_align_block_e{e2}_b{block}"),
        variant: "single_block".into(),
        occupancy: None,
        worker_warps: None,
        extra_launches: Vec::new(),
        tuning,
    })
}

/// The one plan; `Ok(None)` for operators not in [`OPERATORS`].
pub fn candidates(op: &str, params: &Value, o: Overrides, _t: &Target) -> Result<Option<Candidates>> {
    if !OPERATORS.contains(&op) {
        return Ok(None);
    }
    ensure!(o == Overrides::default(), "{op} takes no suite tuning overrides");
    Ok(Some(Candidates { plans: vec![plan_align(params)?] }))
}

/// The default plan.
pub fn plan(op: &str, params: &Value, o: Overrides, t: &Target) -> Result<Option<Plan>> {
    Ok(candidates(op, params, o, t)?.map(|c| c.plans.into_iter().next().expect("one plan")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{entry_params, Param};

    #[test]
    fn binds_the_reference_tensors() {
        let c = json!({"num_tokens": 512, "top_k": 6, "n_experts": 64, "block_size": 128});
        let p = plan("moe_align_block", &c, Overrides::default(), &Target::h200()).unwrap().unwrap();
        assert_eq!(p.generics, ["64", "256", "128"]);
        assert_eq!(p.grid, [1, 1, 1]);
        let ps = entry_params(&p.args);
        assert_eq!(ps[0].param, Param::Ptr { tensor: "topk_ids".into() });
        // The flattened view of topk_ids [512, 6]: extent and stride literals.
        assert_eq!(ps[1].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(3072) });
        assert_eq!(ps[3].param, Param::Ptr { tensor: "sorted_token_ids".into() });
        assert_eq!(ps[4].param, Param::Ptr { tensor: "expert_ids".into() });
        assert_eq!(ps[7].param, Param::Ptr { tensor: "num_tokens_post_padded".into() });
        // max_padded = 3072 + 64 * 127; max_blocks = ceil(11200 / 128) = 88.
        assert_eq!(ps[10].param, Param::Literal { ty: ScalarType::I32, value: LitValue::Int(11200) });
        assert_eq!(p.tensors[1].shape, [88]);
        assert_eq!(ps.len(), 11);
    }

    #[test]
    fn refusals_and_the_tilegym_suite() {
        let err = |c: Value| candidates("moe_align_block", &c, Overrides::default(), &Target::h200()).unwrap_err().to_string();
        assert!(err(json!({"num_tokens": 4, "top_k": 2, "n_experts": 512, "block_size": 64})).contains("n_experts = 512 exceeds 256"));
        assert!(err(json!({"num_tokens": 4, "top_k": 9, "n_experts": 8})).contains("top_k = 9 exceeds n_experts = 8"));
        let suite: Value =
            serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/tilegym.json")).unwrap()).unwrap();
        let n = suite["configs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["op"] == "moe_align_block")
            .map(|c| plan("moe_align_block", &c["params"], Overrides::default(), &Target::h200()).unwrap().unwrap())
            .count();
        assert_eq!(n, 8);
    }
}
