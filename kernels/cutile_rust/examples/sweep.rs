// SPDX-License-Identifier: Apache-2.0
//! Developer tool: export every configuration of a suite under several tunings into one
//! bundle per operator (duplicate `params`, told apart by `tuning`), for timing on a GPU
//! with tools/gpu_check.py --time. Not a portbench bundle for pairing.
//!
//!     cargo run --release --example sweep -- SUITE OUT

use std::path::PathBuf;

use portbench_cutile_rust::export::{self, SuiteConfig};
use portbench_cutile_rust::plan::Overrides;
use portbench_cutile_rust::target::Target;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (suite, out) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
    let tc = export::Toolchain::new(&export::find_tileiras()?)?;
    let opts = export::Options { target: Target::resolve(None)?, tuning: None, chosen_only: false };
    let mut configs = Vec::new();
    for c in export::read_suite(&suite)? {
        let variants: Vec<Overrides> = match c.op.as_str() {
            "vector_add" => [1024, 2048, 4096, 8192]
                .iter()
                .flat_map(|&t| {
                    [None, Some(2), Some(4)].map(|occ| Overrides {
                        tile: Some(t),
                        occupancy: occ,
                        ..Default::default()
                    })
                })
                .collect(),
            "rms_norm" => [1, 2, 4, 8, 16]
                .iter()
                .flat_map(|&r| {
                    [None, Some(2), Some(4)].map(|occ| Overrides {
                        block_rows: Some(r),
                        occupancy: occ,
                        ..Default::default()
                    })
                })
                .collect(),
            _ => vec![],
        };
        for o in variants {
            configs.push(SuiteConfig { overrides: o, ..c.clone() });
        }
    }
    let report = export::run_with_stack(move || export::export_configs(&configs, &out, &tc, &opts))?;
    for (op, path) in &report.manifests {
        println!("{op}: {}", path.display());
    }
    for (op, params, why) in &report.skipped {
        eprintln!("skipped {op} {params}: {why}");
    }
    Ok(())
}
