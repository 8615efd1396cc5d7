// SPDX-License-Identifier: Apache-2.0
//! Decode attention (flash_decode): the split-KV pass (module `portbench_decode`) and the
//! multi-kernel plans that follow it with `crate::gemm`'s `splitk_reduce` over scratch buffers.
//! `crate::export` exports these operators' plans stage by stage.
pub mod kernels;
pub mod plan;

pub use kernels::portbench_decode;

/// The `#[cutile::module]` AST function and name of the module holding `kernel`, when it is
/// one of this module's kernels.
pub fn module_of(kernel: &str) -> Option<(fn() -> cutile::cutile_compiler::ast::Module, &'static str)> {
    const KERNELS: &[&str] = &["decode_split", "decode_split_sink", "mla_split"];
    KERNELS.contains(&kernel).then_some((portbench_decode::__module_ast_self as fn() -> _, "portbench_decode"))
}
