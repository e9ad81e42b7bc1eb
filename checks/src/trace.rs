//! Saved counterexamples: `traces/<check>--<property>.json`, and their
//! verification. A trace stores the configuration, the action list and
//! the Explorer path (action indices), never Stateright fingerprints:
//! those change between builds (stateright-notes.md G9).
//!
//! A trace is evidence about one catalogue check. Replaying it re-executes
//! the actions in the model built from the trace's own configuration,
//! then rebuilds the whole file from the catalogue entry it names and
//! rejects any difference (labels, configuration, steps, kernel functions,
//! Explorer fragment), naming the first field that differs.

use crate::catalogue::Entry;
use crate::check::{self, Check, TraceStep};
use crate::outcome::CheckResult;
use crate::paths;
use crate::runner::Counterexample;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Version of the trace file format. Bump it when a field changes meaning
/// or a required field is added.
pub const TRACE_SCHEMA: u64 = 2;

/// A saved counterexample.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceFile {
    pub schema: u64,
    pub tool: String,
    pub stateright: String,
    pub model: String,
    pub model_version: String,
    pub check: String,
    pub question: String,
    pub kernel: String,
    /// Switches that differ from the kernel state (`!x` = turned off).
    pub switches: Vec<String>,
    pub config: Value,
    pub property: String,
    pub property_description: String,
    /// `Path::encode` form: init index, then action indices.
    pub encoded: String,
    pub explorer_fragment: String,
    pub actions: Vec<Value>,
    pub steps: Vec<TraceStep>,
}

impl TraceFile {
    pub fn counterexample(&self) -> Counterexample {
        Counterexample {
            actions: self.actions.clone(),
            labels: self
                .steps
                .iter()
                .map(|s| format!("{}: {}", s.actor, s.kernel_fn))
                .collect(),
            encoded: self.encoded.clone(),
        }
    }
}

/// `<check>--<property>.json`
pub fn file_name(check: &str, property: &str) -> String {
    format!("{check}--{property}.json")
}

/// Builds the trace of a counterexample of `property` in check `e`.
pub fn build(e: &Entry, property: &str, cx: &Counterexample) -> Result<TraceFile, String> {
    let c = &e.check;
    let desc = c
        .property_defs()
        .iter()
        .find(|p| p.name == property)
        .map(|p| p.description)
        .ok_or_else(|| format!("model {} has no property '{property}'", c.model()))?;
    Ok(TraceFile {
        schema: TRACE_SCHEMA,
        tool: format!("wbspec {}", env!("CARGO_PKG_VERSION")),
        stateright: "0.31.0".into(),
        model: c.model().into(),
        model_version: c.model_version().into(),
        check: e.name.clone(),
        question: e.question.clone(),
        kernel: c.kernel(),
        switches: c.switches_changed(),
        config: c.config_json(),
        property: property.to_string(),
        property_description: desc.to_string(),
        encoded: cx.encoded.clone(),
        explorer_fragment: format!("#/steps/{}", cx.encoded),
        actions: cx.actions.clone(),
        steps: c.trace_steps(cx)?,
    })
}

/// Writes one file per violated property of `r` into `dir`; returns the
/// paths written.
pub fn write_all(dir: &Path, e: &Entry, r: &CheckResult) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in &r.props {
        if let Some(cx) = &p.trace {
            std::fs::create_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
            let t = build(e, p.name, cx)?;
            let path = dir.join(file_name(&e.name, p.name));
            let text = serde_json::to_string_pretty(&t).map_err(|err| err.to_string())?;
            paths::write_atomic(&path, (text + "\n").as_bytes())?;
            out.push(path);
        }
    }
    Ok(out)
}

/// Reads and validates a trace file: JSON, schema version, model and
/// model version, then the fields. Errors are one line naming the file.
pub fn load(path: &Path) -> Result<TraceFile, String> {
    let d = path.display();
    let text = paths::read_input(path)?;
    parse(&text).map_err(|e| format!("{d}: {e}"))
}

/// Parses the text of a trace file.
pub fn parse(text: &str) -> Result<TraceFile, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("malformed JSON: {e}"))?;
    if !v.is_object() {
        return Err("not a trace file (expected a JSON object)".into());
    }
    match v.get("schema").and_then(Value::as_u64) {
        Some(TRACE_SCHEMA) => {}
        Some(other) => {
            return Err(format!(
                "field schema: trace schema version {other}, this wbspec reads {TRACE_SCHEMA}"
            ))
        }
        None => return Err("field schema: missing or not a number".into()),
    }
    let model = v
        .get("model")
        .and_then(Value::as_str)
        .ok_or("field model: missing or not a string")?;
    let version = check::model_version(model).ok_or_else(|| {
        format!(
            "field model: unknown model '{model}' (known: {})",
            wbspec_models::registry::model_names().join(", ")
        )
    })?;
    match v.get("model_version").map(|m| (m, m.as_str())) {
        Some((_, Some(mv))) if mv == version => {}
        Some((_, Some(mv))) => {
            return Err(format!(
                "field model_version: trace was made by model {mv}, this is {version}; regenerate it with `wbspec check --write-traces`"
            ))
        }
        Some((m, None)) => return Err(format!("field model_version: {m} is not a string")),
        None => return Err("field model_version: missing".into()),
    }
    serde_json::from_value(v).map_err(|e| e.to_string())
}

/// What a successful replay established.
pub struct Replayed {
    pub trace: TraceFile,
    pub check: Arc<dyn Check>,
}

/// Re-executes a trace in the model of its own configuration: every
/// action must be enabled, every Explorer index must name the same
/// action, and the property must fail at the last step and at no earlier
/// one. Then the file must be exactly what the catalogue entry it names
/// produces for these actions (`entries`: the catalogue in use).
pub fn replay(t: TraceFile, entries: &[Entry]) -> Result<Replayed, String> {
    let c = check::from_json(&t.model, &t.config)?;
    if t.steps.len() != t.actions.len() {
        return Err(format!(
            "field steps: {} steps for {} actions",
            t.steps.len(),
            t.actions.len()
        ));
    }
    match c
        .property_defs()
        .iter()
        .find(|p| p.name == t.property)
        .map(|p| &p.expectation)
    {
        Some(stateright::Expectation::Always) => {}
        Some(_) => {
            return Err(format!(
                "field property: '{}' is a witness, not a safety property",
                t.property
            ))
        }
        None => return Err(format!("field property: unknown property '{}'", t.property)),
    }
    let cx = t.counterexample();
    c.replay(&t.property, &cx)?;
    let e = entries
        .iter()
        .find(|e| e.name == t.check)
        .ok_or_else(|| format!("field check: no check '{}' in the catalogue", t.check))?;
    if e.check.model() != t.model {
        return Err(format!(
            "field model: check '{}' is a {} check",
            e.name,
            e.check.model()
        ));
    }
    // a what-if run's trace (`check NAME --drop LABEL`): the check with
    // the trace's drops
    let derived;
    let e = match c.drops() {
        d if !d.is_empty() && d != e.check.drops() => {
            derived = crate::dropops::with_drops(e, &d)?;
            &derived
        }
        _ => e,
    };
    if e.check.config_json() != t.config {
        return Err(format!(
            "field config: not the configuration of check '{}'",
            e.name
        ));
    }
    let now = build(e, &t.property, &cx)?;
    if let Some(field) = first_difference(&now, &t) {
        return Err(format!(
            "field {field}: differs from what check '{}' records for these actions",
            e.name
        ));
    }
    Ok(Replayed { trace: t, check: c })
}

/// The first field in which two trace files differ.
fn first_difference(a: &TraceFile, b: &TraceFile) -> Option<String> {
    let va = serde_json::to_value(a).ok()?;
    let vb = serde_json::to_value(b).ok()?;
    let (oa, ob) = (va.as_object()?, vb.as_object()?);
    for (k, x) in oa {
        let y = ob.get(k)?;
        if x != y {
            if k == "steps" {
                let (sa, sb) = (x.as_array()?, y.as_array()?);
                for (i, (p, q)) in sa.iter().zip(sb).enumerate() {
                    if p != q {
                        let sub = p
                            .as_object()
                            .and_then(|po| po.iter().find(|(kk, vv)| q.get(*kk) != Some(*vv)))
                            .map(|(kk, _)| kk.clone())
                            .unwrap_or_default();
                        return Some(format!("steps[{}].{sub}", i + 1));
                    }
                }
            }
            return Some(k.clone());
        }
    }
    None
}

/// Loads and replays a file against the catalogue.
pub fn replay_file(path: &Path, entries: &[Entry]) -> Result<Replayed, String> {
    let t = load(path)?;
    replay(t, entries).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn summary(r: &Replayed) -> String {
    let n = r.trace.actions.len();
    format!(
        "replayed {n} steps; {} fails at step {n} as recorded",
        r.trace.property
    )
}
