// SPDX-License-Identifier: Apache-2.0
//! The target GPU: one description file per target (`configs/targets/<name>.json`, the same
//! files every exporter reads) instead of SM counts spread through the heuristics.
//!
//! ```json
//! {"name": "h200", "gpu": "NVIDIA H200", "arch": "sm_90", "capability": [9, 0], "sm_count": 132, ...}
//! ```
//! The exporter uses `arch` (cuTile's and tileiras' target, the manifest's `arch`, the cubin's
//! SM) and `sm_count` (grid and tile heuristics); the manifest records
//! `"target": {"name", "arch", "sm_count"}`.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use serde_json::{json, Value};

/// Environment variable naming the target description when `--target` is not given.
pub const TARGET_ENV: &str = "PORTBENCH_TARGET";

/// What the exporter needs of the target GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    /// `sm_90`: given to cuTile and tileiras, and the manifest's `arch`.
    pub arch: String,
    pub sm_count: i64,
    /// The card's name as the driver reports it (`"NVIDIA H200"`), when the description gives
    /// one: a tuning record measured on another card is refused.
    pub gpu: Option<String>,
    /// The file it was read from (for messages).
    pub source: String,
}

impl Target {
    /// Parses a target description; `source` names the file in errors.
    pub fn parse(text: &str, source: &str) -> Result<Target> {
        let v: Value = serde_json::from_str(text).with_context(|| format!("{source}: not JSON"))?;
        let obj = v.as_object().with_context(|| format!("{source}: must be an object"))?;
        let name = obj
            .get("name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .with_context(|| format!("{source}: \"name\" must be a non-empty string"))?;
        let arch = obj
            .get("arch")
            .and_then(Value::as_str)
            .with_context(|| format!("{source}: \"arch\" must be a string like \"sm_90\""))?;
        let sm = arch_sm(arch).with_context(|| format!("{source}: \"arch\" must be sm_<number>, got {arch:?}"))?;
        let sm_count = obj
            .get("sm_count")
            .and_then(Value::as_i64)
            .filter(|&n| (1..=4096).contains(&n))
            .with_context(|| format!("{source}: \"sm_count\" must be an integer in 1..=4096"))?;
        if let Some(cap) = obj.get("capability") {
            let c: Option<Vec<i64>> = cap.as_array().and_then(|a| a.iter().map(Value::as_i64).collect());
            match c.as_deref() {
                Some([major, minor]) => ensure!(
                    major * 10 + minor == sm as i64,
                    "{source}: \"capability\" {cap} does not match \"arch\" {arch:?}"
                ),
                _ => bail!("{source}: \"capability\" must be [major, minor]"),
            }
        }
        let gpu = match obj.get("gpu") {
            None => None,
            Some(g) => Some(
                g.as_str()
                    .filter(|s| !s.is_empty())
                    .with_context(|| format!("{source}: \"gpu\" must be a non-empty string (the driver's device name)"))?
                    .to_string(),
            ),
        };
        Ok(Target { name: name.to_string(), arch: arch.to_string(), sm_count, gpu, source: source.to_string() })
    }

    pub fn load(path: &Path) -> Result<Target> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading target description {}", path.display()))?;
        Target::parse(&text, &path.display().to_string())
    }

    /// `--target FILE` if given, else `$PORTBENCH_TARGET`, else [`default_path`].
    pub fn resolve(cli: Option<&Path>) -> Result<Target> {
        let path = match cli {
            Some(p) => p.to_path_buf(),
            None => match std::env::var_os(TARGET_ENV).filter(|v| !v.is_empty()) {
                Some(p) => PathBuf::from(p),
                None => default_path(),
            },
        };
        Target::load(&path)
    }

    /// The SM number of `arch` (`sm_90` -> 90), what the cubin's ELF header must say.
    pub fn sm(&self) -> u32 {
        arch_sm(&self.arch).expect("checked when parsed")
    }

    /// The manifest's top-level `target`.
    pub fn manifest_json(&self) -> Value {
        json!({"name": self.name, "arch": self.arch, "sm_count": self.sm_count})
    }

    /// The H200 as `configs/targets/h200.json` describes it, for unit tests.
    pub fn h200() -> Target {
        Target {
            name: "h200".into(),
            arch: "sm_90".into(),
            sm_count: 132,
            gpu: Some("NVIDIA H200".into()),
            source: "built-in test target".into(),
        }
    }

    /// A copy with another SM count (unit tests of SM-dependent heuristics).
    pub fn with_sm_count(&self, sm_count: i64) -> Target {
        Target { sm_count, ..self.clone() }
    }
}

/// `<repo>/configs/targets/h200.json`.
pub fn default_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/targets/h200.json")
}

fn arch_sm(arch: &str) -> Option<u32> {
    let digits = arch.strip_prefix("sm_")?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_repository_h200_description() {
        let t = Target::load(&default_path()).unwrap();
        assert_eq!((t.name.as_str(), t.arch.as_str(), t.sm_count, t.sm()), ("h200", "sm_90", 132, 90));
        assert_eq!(t.manifest_json(), json!({"name": "h200", "arch": "sm_90", "sm_count": 132}));
        assert_eq!(Target { source: t.source.clone(), ..Target::h200() }, t);
    }

    #[test]
    fn rejects_bad_descriptions() {
        let ok = r#"{"name": "b200", "arch": "sm_100", "capability": [10, 0], "sm_count": 148}"#;
        assert_eq!(Target::parse(ok, "b200.json").unwrap().sm_count, 148);
        for (bad, field) in [
            (r#"{"arch": "sm_90", "sm_count": 132}"#, "\"name\""),
            (r#"{"name": "x", "arch": "hopper", "sm_count": 132}"#, "\"arch\""),
            (r#"{"name": "x", "arch": "sm_90", "sm_count": 0}"#, "\"sm_count\""),
            (r#"{"name": "x", "arch": "sm_90", "sm_count": "132"}"#, "\"sm_count\""),
            (r#"{"name": "x", "arch": "sm_90", "capability": [8, 0], "sm_count": 132}"#, "\"capability\""),
            (r#"{"name": "x", "arch": "sm_90", "sm_count": 132, "gpu": ""}"#, "\"gpu\""),
            (r#"{"name": "x", "arch": "sm_90", "sm_count": 132, "gpu": 200}"#, "\"gpu\""),
            (r#"[1, 2]"#, "object"),
            ("{", "not JSON"),
        ] {
            let e = Target::parse(bad, "t.json").unwrap_err().to_string();
            assert!(e.starts_with("t.json: ") && e.contains(field), "{bad}: {e}");
        }
        let e = Target::load(Path::new("/nonexistent/t.json")).unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/t.json"));
    }
}
