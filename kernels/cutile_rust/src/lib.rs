// SPDX-License-Identifier: Apache-2.0
//! portbench's cuTile Rust front end: the kernels (`portbench_kernels`) and the exporter
//! that turns a suite into bundles for a target GPU (configs/targets/, docs/bundle-manifest.md,
//! docs/cutile-rust.md) without a GPU.

pub mod abi;
pub mod attn;
pub mod decode;
pub mod elf;
pub mod export;
pub mod gdr;
pub mod gemm;
mod kernels;
pub mod moe;
pub mod plan;
pub mod target;
pub mod tuning;

pub use kernels::portbench_kernels;
