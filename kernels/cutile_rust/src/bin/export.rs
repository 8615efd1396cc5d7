// SPDX-License-Identifier: Apache-2.0
//! `portbench-cutile-rust-export --suite configs/smoke.json --out bundles/cutile_rust
//! [--tileiras PATH]`: writes `<out>/<operator>/manifest.json` plus cubins and Tile IR text
//! for every configuration whose operator the cuTile Rust front end has.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use portbench_cutile_rust::export;

const USAGE: &str = "usage: portbench-cutile-rust-export --suite SUITE.json --out DIR [--tileiras PATH]\n\
  tileiras defaults to $CUTILE_TILEIRAS_PATH, else the project venv's nvidia/cu13/bin/tileiras";

struct Args {
    suite: PathBuf,
    out: PathBuf,
    tileiras: Option<PathBuf>,
}

fn parse_args() -> Result<Option<Args>> {
    let mut suite = None;
    let mut out = None;
    let mut tileiras = None;
    let mut it = std::env::args_os().skip(1);
    while let Some(a) = it.next() {
        let a = a.to_string_lossy().into_owned();
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(PathBuf::from(v))),
            _ => (a.clone(), None),
        };
        let mut value = || -> Result<PathBuf> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it.next().map(PathBuf::from).with_context(|| format!("{flag} needs a value")),
            }
        };
        match flag.as_str() {
            "--suite" => suite = Some(value()?),
            "--out" => out = Some(value()?),
            "--tileiras" => tileiras = Some(value()?),
            "-h" | "--help" => return Ok(None),
            other => bail!("unknown argument {other:?}"),
        }
    }
    Ok(Some(Args { suite: suite.context("--suite is required")?, out: out.context("--out is required")?, tileiras }))
}

fn run(args: Args) -> Result<()> {
    let tileiras = match args.tileiras {
        Some(p) => p,
        None => export::find_tileiras()?,
    };
    let tc = export::Toolchain::new(&tileiras)?;
    eprintln!(
        "cutile {} | tileiras {} ({}) | Tile IR bytecode {}.{} | target {}",
        export::CUTILE_VERSION,
        tc.tileiras_version,
        tc.tileiras.display(),
        tc.bytecode.major,
        tc.bytecode.minor,
        export::ARCH
    );
    let report = export::run_with_stack(move || export::export(&args.suite, &args.out, &tc))?;
    for (op, path) in &report.manifests {
        println!("{op}: {}", path.display());
    }
    for (op, params, why) in &report.skipped {
        eprintln!("skipped {op} {params}: {why}");
    }
    if report.unsupported > 0 {
        eprintln!("{} configuration(s) of other operators left to other front ends", report.unsupported);
    }
    Ok(())
}

fn main() -> ExitCode {
    match parse_args() {
        Ok(None) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}\n{USAGE}");
            ExitCode::from(2)
        }
        Ok(Some(args)) => match run(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::FAILURE
            }
        },
    }
}
