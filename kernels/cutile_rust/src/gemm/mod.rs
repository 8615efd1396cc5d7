// SPDX-License-Identifier: Apache-2.0
//! The matrix products (matmul with its static persistent variant, bmm, group_gemm) and
//! splitk_reduce: their kernels (module `portbench_gemm`) and plans. `crate::plan` dispatches
//! these operators here; `crate::export` compiles their kernels from this module.
pub mod kernels;
pub mod plan;

pub use kernels::portbench_gemm;

/// The `#[cutile::module]` AST function and name of the module holding `kernel`, when it is
/// one of this module's kernels.
pub fn module_of(kernel: &str) -> Option<(fn() -> cutile::cutile_compiler::ast::Module, &'static str)> {
    const KERNELS: &[&str] = &["matmul", "matmul_persistent", "bmm_persistent", "group_gemm", "splitk_reduce"];
    KERNELS.contains(&kernel).then_some((portbench_gemm::__module_ast_self as fn() -> _, "portbench_gemm"))
}
