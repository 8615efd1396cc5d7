// SPDX-License-Identifier: Apache-2.0
//! Tuning records (`configs/tuning/<frontend>-<target>.json`, written by `portbench tune` or
//! scripts/time_rust_variants.sh): per configuration, the variant the GPU found fastest.
//!
//! ```json
//! {"schema": "portbench.tuning-record/1", "frontend": "cutile_rust", "target": "h200",
//!  "choices": [{"op": "rope", "params": {...the suite's params...}, "variant": "s1_io_occ9", ...}]}
//! ```
//! A choice matches a configuration by operator and identical params (numbers compared by
//! value, keys in any order); other fields of a choice (`speedup_over_default`,
//! `candidates`) are the tuner's notes. A measured record names the card it ran on (`gpu`,
//! the driver's device name); it must be the target's card: timings of an H100 do not choose
//! plans for an H200. Records written by hand for a purpose (no `gpu`) are taken as they are.

use std::path::Path;

use anyhow::{bail, ensure, Context, Result};
use serde_json::Value;

use crate::export::FRONTEND;
use crate::target::Target;

pub const SCHEMA: &str = "portbench.tuning-record/1";

#[derive(Clone, Debug)]
pub struct Choice {
    pub op: String,
    pub params: Value,
    pub variant: String,
}

#[derive(Clone, Debug)]
pub struct TuningRecord {
    /// The file as given (recorded in `tuning_source`).
    pub path: String,
    pub choices: Vec<Choice>,
}

impl TuningRecord {
    /// Parses a record for this front end and `target`; `path` names it in errors.
    pub fn parse(text: &str, path: &str, target: &Target) -> Result<TuningRecord> {
        let v: Value = serde_json::from_str(text).with_context(|| format!("{path}: not JSON"))?;
        let field =
            |k: &str| v.get(k).and_then(Value::as_str).with_context(|| format!("{path}: missing string \"{k}\""));
        ensure!(field("schema")? == SCHEMA, "{path}: \"schema\" must be {SCHEMA:?}, got {:?}", field("schema")?);
        let frontend = field("frontend")?;
        ensure!(frontend == FRONTEND, "{path}: \"frontend\" is {frontend:?}; this exporter reads {FRONTEND:?} records");
        let rec_target = field("target")?;
        ensure!(rec_target == target.name, "{path}: \"target\" is {rec_target:?}, the export targets {:?}", target.name);
        if let (Some(measured), Some(card)) = (v.get("gpu"), &target.gpu) {
            let measured = measured.as_str().with_context(|| format!("{path}: \"gpu\" must be a string"))?;
            ensure!(
                is_gpu(measured, card),
                "{path}: \"gpu\" is {measured:?}: the record was measured on another card than the target's {card:?} ({})",
                target.source
            );
        }
        let list =
            v.get("choices").and_then(Value::as_array).with_context(|| format!("{path}: missing array \"choices\""))?;
        let mut choices: Vec<Choice> = Vec::with_capacity(list.len());
        for (i, c) in list.iter().enumerate() {
            let at = |k: &str| format!("{path}: choices[{i}].{k}");
            let op = c.get("op").and_then(Value::as_str).with_context(|| at("op") + " must be a string")?;
            let params =
                c.get("params").filter(|p| p.is_object()).with_context(|| at("params") + " must be an object")?;
            let variant = c
                .get("variant")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .with_context(|| at("variant") + " must be a non-empty string")?;
            if choices.iter().any(|o| o.op == op && o.params == *params) {
                bail!("{}: a second choice for {op} {params}", at("params"));
            }
            choices.push(Choice { op: op.into(), params: params.clone(), variant: variant.into() });
        }
        Ok(TuningRecord { path: path.into(), choices })
    }

    pub fn load(path: &Path, target: &Target) -> Result<TuningRecord> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading tuning record {}", path.display()))?;
        TuningRecord::parse(&text, &path.display().to_string(), target)
    }

    /// The variant the record chose for `op` with exactly these `params`.
    pub fn lookup(&self, op: &str, params: &Value) -> Option<&str> {
        self.choices.iter().find(|c| c.op == op && c.params == *params).map(|c| c.variant.as_str())
    }
}

/// Whether the device `name` is the card `card` names: that name, or it and further words
/// ("NVIDIA H200 NVL"); as `portbench tune --gpu` decides (harness/tune/tune.cpp, `is_gpu`).
pub fn is_gpu(name: &str, card: &str) -> bool {
    !card.is_empty() && name.strip_prefix(card).is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
}

#[cfg(test)]
mod tests {
    use super::*;

    const REC: &str = r#"{"schema": "portbench.tuning-record/1", "frontend": "cutile_rust", "target": "h200",
        "made_by": "test", "choices": [
          {"op": "dropout", "params": {"m": 1048576, "p": 0.5, "dtype": "float16"}, "variant": "t2048_nohint", "speedup_over_default": 1.1},
          {"op": "rope", "params": {"bsz": 8, "seq_len": 128, "dtype": "float16"}, "variant": "s1_io_occ12"}]}"#;

    #[test]
    fn matches_by_operator_and_params() {
        let r = TuningRecord::parse(REC, "rec.json", &Target::h200()).unwrap();
        // Key order and number spelling do not matter; a different value does.
        let same: Value = serde_json::from_str(r#"{"dtype": "float16", "p": 5e-1, "m": 1048576}"#).unwrap();
        assert_eq!(r.lookup("dropout", &same), Some("t2048_nohint"));
        assert_eq!(r.lookup("rope", &same), None);
        let other: Value = serde_json::from_str(r#"{"m": 1048576, "p": 0.25, "dtype": "float16"}"#).unwrap();
        assert_eq!(r.lookup("dropout", &other), None);
        let extra: Value =
            serde_json::from_str(r#"{"m": 1048576, "p": 0.5, "dtype": "float16", "inplace": true}"#).unwrap();
        assert_eq!(r.lookup("dropout", &extra), None);
    }

    fn b200() -> Target {
        Target::parse(r#"{"name": "b200", "gpu": "NVIDIA B200", "arch": "sm_100", "sm_count": 148}"#, "b200.json").unwrap()
    }

    #[test]
    fn a_measured_record_must_be_the_targets_card() {
        let on = |gpu: &str| REC.replace("\"made_by\"", &format!("\"gpu\": {gpu:?}, \"made_by\""));
        assert!(TuningRecord::parse(&on("NVIDIA H200"), "rec.json", &Target::h200()).is_ok());
        assert!(TuningRecord::parse(&on("NVIDIA H200 NVL"), "rec.json", &Target::h200()).is_ok());
        let e = TuningRecord::parse(&on("NVIDIA H100 80GB HBM3"), "rec.json", &Target::h200()).unwrap_err().to_string();
        assert!(e.starts_with("rec.json: \"gpu\" is \"NVIDIA H100 80GB HBM3\"") && e.contains("\"NVIDIA H200\""), "{e}");
        assert!(TuningRecord::parse(&on("NVIDIA H20"), "rec.json", &Target::h200()).is_err());
        // No `gpu` in the target description: nothing to hold the record to.
        let anon = Target { gpu: None, ..Target::h200() };
        assert!(TuningRecord::parse(&on("NVIDIA H100 80GB HBM3"), "rec.json", &anon).is_ok());
        assert!(is_gpu("NVIDIA H200", "NVIDIA H200") && !is_gpu("NVIDIA H200", "") && !is_gpu("NVIDIA H2000", "NVIDIA H200"));
    }

    #[test]
    fn rejects_records_for_something_else() {
        let e = TuningRecord::parse(REC, "rec.json", &b200()).unwrap_err().to_string();
        assert!(e.contains("rec.json") && e.contains("\"target\""), "{e}");
        let tg = REC.replace("\"cutile_rust\"", "\"tilegym\"");
        assert!(TuningRecord::parse(&tg, "rec.json", &Target::h200()).unwrap_err().to_string().contains("\"frontend\""));
        let schema = REC.replace("tuning-record/1", "tuning-record/2");
        assert!(TuningRecord::parse(&schema, "rec.json", &Target::h200()).unwrap_err().to_string().contains("\"schema\""));
        let dup = REC.replace(
            "\"rope\", \"params\": {\"bsz\": 8, \"seq_len\": 128, \"dtype\": \"float16\"}",
            "\"dropout\", \"params\": {\"m\": 1048576, \"p\": 0.5, \"dtype\": \"float16\"}",
        );
        assert!(TuningRecord::parse(&dup, "rec.json", &Target::h200()).unwrap_err().to_string().contains("second choice"));
        let novar = REC.replace("\"variant\": \"s1_io_occ12\"", "\"variant\": \"\"");
        let e = TuningRecord::parse(&novar, "rec.json", &Target::h200()).unwrap_err().to_string();
        assert!(e.contains("choices[1].variant"), "{e}");
        assert!(TuningRecord::parse("[]", "rec.json", &Target::h200()).is_err());
    }
}
