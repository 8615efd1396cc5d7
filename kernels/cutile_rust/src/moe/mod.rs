// SPDX-License-Identifier: Apache-2.0
//! The mixture-of-experts operators (issue 17): moe_align_block's kernel (module
//! `portbench_moe`) and plans. `crate::plan` dispatches the operator here; `crate::export`
//! compiles its kernel from this module.
pub mod kernels;
pub mod plan;

pub use kernels::portbench_moe;

/// The `#[cutile::module]` AST function and name of the module holding `kernel`, when it is
/// one of this module's kernels.
pub fn module_of(kernel: &str) -> Option<(fn() -> cutile::cutile_compiler::ast::Module, &'static str)> {
    const KERNELS: &[&str] =
        &["moe_align_block", "moe_align_count", "moe_align_scatter", "moe_gemm", "moe_gather", "moe_gemm_sorted", "moe_silu_and_mul", "moe_sum"];
    KERNELS.contains(&kernel).then_some((portbench_moe::__module_ast_self as fn() -> _, "portbench_moe"))
}
