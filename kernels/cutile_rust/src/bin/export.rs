// SPDX-License-Identifier: Apache-2.0
//! `portbench-cutile-rust-export --suite configs/smoke.json --out bundles/cutile_rust
//! [--target FILE] [--tuning FILE] [--tileiras PATH]`: writes `<out>/<operator>/manifest.json`
//! plus cubins and Tile IR text for every configuration whose operator the cuTile Rust front
//! end has.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use portbench_cutile_rust::export;
use portbench_cutile_rust::target::{self, Target};
use portbench_cutile_rust::tuning::TuningRecord;

const USAGE: &str = "usage: portbench-cutile-rust-export --suite SUITE.json --out DIR [--target FILE] [--tuning FILE] [--chosen-only] [--tileiras PATH]\n\
  --target   target GPU description (default $PORTBENCH_TARGET, else configs/targets/h200.json)\n\
  --tuning   tuning record: per configuration, the variant to choose (default: the heuristic's plan)\n\
  --chosen-only  write each configuration's chosen plan only, no tuning variants\n\
  --tileiras defaults to $CUTILE_TILEIRAS_PATH, else the project venv's nvidia/cu13/bin/tileiras";

struct Args {
    suite: PathBuf,
    out: PathBuf,
    target: Option<PathBuf>,
    tuning: Option<PathBuf>,
    tileiras: Option<PathBuf>,
    chosen_only: bool,
}

fn parse_args() -> Result<Option<Args>> {
    let (mut suite, mut out, mut target, mut tuning, mut tileiras) = (None, None, None, None, None);
    let mut chosen_only = false;
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
            "--target" => target = Some(value()?),
            "--tuning" => tuning = Some(value()?),
            "--tileiras" => tileiras = Some(value()?),
            "--chosen-only" => chosen_only = true,
            "-h" | "--help" => return Ok(None),
            other => bail!("unknown argument {other:?}"),
        }
    }
    Ok(Some(Args {
        suite: suite.context("--suite is required")?,
        out: out.context("--out is required")?,
        target,
        tuning,
        tileiras,
        chosen_only,
    }))
}

/// The target description and the tuning record: bad input (exit 2) when unreadable or wrong.
fn options(args: &Args) -> Result<export::Options> {
    let target = Target::resolve(args.target.as_deref()).with_context(|| {
        format!("target description (--target, ${}, default {})", target::TARGET_ENV, target::default_path().display())
    })?;
    let tuning = match &args.tuning {
        Some(p) => Some(TuningRecord::load(p, &target)?),
        None => None,
    };
    Ok(export::Options { target, tuning, chosen_only: args.chosen_only })
}

fn run(args: Args, opts: export::Options) -> Result<()> {
    let target = &opts.target;
    let tileiras = match args.tileiras {
        Some(p) => p,
        None => export::find_tileiras()?,
    };
    let tc = export::Toolchain::new(&tileiras)?;
    eprintln!(
        "cutile {} | tileiras {} ({}) | Tile IR bytecode {}.{} | target {} ({}, {} SMs, {})",
        export::CUTILE_VERSION,
        tc.tileiras_version,
        tc.tileiras.display(),
        tc.bytecode.major,
        tc.bytecode.minor,
        target.name,
        target.arch,
        target.sm_count,
        target.source
    );
    let report = export::run_with_stack(move || export::export(&args.suite, &args.out, &tc, &opts))?;
    for (op, path) in &report.manifests {
        println!("{op}: {}", path.display());
    }
    // One line per configuration the port cannot express, with the exact reason, and one
    // summary per operator: the lines the other exporters print (docs/exporters.md).
    for (op, params, why) in &report.skipped {
        println!("skip: {}: {}: {}", export::FRONTEND, export::config_id(op, params), why.replace('\n', " "));
    }
    for (op, &total) in &report.suite_configs {
        let skipped: Vec<&str> = report.skipped.iter().filter(|s| s.0 == *op).map(|s| s.2.as_str()).collect();
        let mut why: Vec<(&str, usize)> = Vec::new();
        for w in &skipped {
            match why.iter_mut().find(|(x, _)| x == w) {
                Some(e) => e.1 += 1,
                None => why.push((w, 1)),
            }
        }
        let detail: Vec<String> = why.iter().map(|(w, n)| format!("{w} x {n}")).collect();
        let tail = if detail.is_empty() { String::new() } else { format!(" (skipped: {})", detail.join("; ")) };
        println!("summary: {}/{op}: exported {} of {total}{tail}", export::FRONTEND, total - skipped.len());
    }
    eprintln!(
        "{} configuration(s) exported, {} with tuning variants, {} chosen by the tuning record",
        report.exported, report.with_variants, report.from_record
    );
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
        Ok(Some(args)) => match options(&args) {
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::from(2)
            }
            Ok(opts) => match run(args, opts) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e:#}");
                    ExitCode::FAILURE
                }
            },
        },
    }
}
