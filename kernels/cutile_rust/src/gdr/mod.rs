// SPDX-License-Identifier: Apache-2.0
//! The gated delta rule operators (issue 17: recurrent_gated_delta_rule, chunk_gated_delta_rule):
//! their kernel (module `portbench_gdr`) and plans. `crate::plan` dispatches these operators
//! here; `crate::export` compiles their kernel from this module.
pub mod kernels;
pub mod plan;

pub use kernels::portbench_gdr;

/// The `#[cutile::module]` AST function and name of the module holding `kernel`, when it is
/// one of this module's kernels.
pub fn module_of(kernel: &str) -> Option<(fn() -> cutile::cutile_compiler::ast::Module, &'static str)> {
    const KERNELS: &[&str] = &["gated_delta_rule", "gated_delta_rule_chunked", "gated_delta_rule_pair", "gdr_qk_dot"];
    KERNELS.contains(&kernel).then_some((portbench_gdr::__module_ast_self as fn() -> _, "portbench_gdr"))
}
