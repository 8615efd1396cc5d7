// SPDX-License-Identifier: Apache-2.0
//! The attention-prefill operators (issue 15: fmha, attention_sink, gemma_attention, mla): their kernels (module `portbench_attn`)
//! and plans. `crate::plan` dispatches these operators here; `crate::export` compiles their
//! kernels from this module.
pub mod kernels;
pub mod plan;

pub use kernels::portbench_attn;

/// The `#[cutile::module]` AST function and name of the module holding `kernel`, when it is
/// one of this module's kernels.
pub fn module_of(kernel: &str) -> Option<(fn() -> cutile::cutile_compiler::ast::Module, &'static str)> {
    const KERNELS: &[&str] = &["fmha", "attention_sink", "gemma_attention", "mla"];
    KERNELS.contains(&kernel).then_some((portbench_attn::__module_ast_self as fn() -> _, "portbench_attn"))
}
