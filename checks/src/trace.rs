//! Saved counterexamples: `traces/<check>--<property>.json`, and their
//! replay. A trace stores the configuration, the action list and the
//! Explorer path (action indices), never Stateright fingerprints: those
//! change between builds (stateright-notes.md G9).

use crate::catalogue::Entry;
use crate::runner::{self, CheckResult, Counterexample};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stateright::{Expectation, Model};
use std::path::{Path, PathBuf};
use wbspec_models::fuse::properties::PROPERTIES;
use wbspec_models::fuse::{Action, Config, FuseModel, State, MODEL_VERSION};

/// Version of the trace file format. Bump it when a field changes meaning
/// or a required field is added.
pub const TRACE_SCHEMA: u64 = 1;

/// One step of a trace, for readers (replay recomputes and compares it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceStep {
    /// 1-based step number.
    pub n: usize,
    /// `T1 ftruncate`, `D0 daemon`.
    pub actor: String,
    /// The kernel function(s) the step stands for.
    pub kernel_fn: String,
    /// Index of the action among the enabled ones (the Explorer path).
    pub index: usize,
    /// Lines of the compact state rendering that the step removed (`-`)
    /// and added (`+`).
    pub changed: Vec<String>,
}

/// A saved counterexample.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    pub variant: Vec<String>,
    pub config: Config,
    pub property: String,
    pub property_description: String,
    /// `Path::encode` form: init index, then action indices.
    pub encoded: String,
    pub explorer_fragment: String,
    pub actions: Vec<Action>,
    pub steps: Vec<TraceStep>,
}

/// `traces/<check>--<property>.json`
pub fn file_name(check: &str, property: &str) -> String {
    format!("{check}--{property}.json")
}

/// Lines of `a`'s compact Debug rendering not in `b`'s (`+`), and the
/// reverse (`-`), removed lines first.
pub fn state_diff(b: &State, a: &State) -> Vec<String> {
    let (sb, sa) = (format!("{b:?}"), format!("{a:?}"));
    let lb: Vec<&str> = sb.lines().collect();
    let la: Vec<&str> = sa.lines().collect();
    let mut out: Vec<String> = lb
        .iter()
        .filter(|l| !la.contains(l))
        .map(|l| format!("- {l}"))
        .collect();
    out.extend(
        la.iter()
            .filter(|l| !lb.contains(l))
            .map(|l| format!("+ {l}")),
    );
    out
}

fn enabled(m: &FuseModel, s: &State) -> Vec<Action> {
    let mut acts = Vec::new();
    m.actions(s, &mut acts);
    acts
}

/// Builds the trace of a counterexample of `property` in check `e`.
pub fn build(e: &Entry, property: &str, cx: &Counterexample) -> Result<TraceFile, String> {
    let m = runner::build_model(e)?;
    let states = runner::replay(&m, &cx.actions)?;
    let mut steps = Vec::new();
    for (i, a) in cx.actions.iter().enumerate() {
        let index = enabled(&m, &states[i])
            .iter()
            .position(|x| x == a)
            .ok_or_else(|| format!("step {}: action not enabled", i + 1))?;
        steps.push(TraceStep {
            n: i + 1,
            actor: m.actor_label(a.actor),
            kernel_fn: a.step.kernel_fn().to_string(),
            index,
            changed: state_diff(&states[i], &states[i + 1]),
        });
    }
    Ok(TraceFile {
        schema: TRACE_SCHEMA,
        tool: format!("wbspec {}", env!("CARGO_PKG_VERSION")),
        stateright: "0.31.0".into(),
        model: e.model.clone(),
        model_version: MODEL_VERSION.into(),
        check: e.name.clone(),
        question: e.question.clone(),
        kernel: format!("{:?}", e.config.kernel),
        variant: e
            .config
            .variant
            .flags_on()
            .into_iter()
            .map(String::from)
            .collect(),
        config: e.config.clone(),
        property: property.to_string(),
        property_description: runner::property_description(property).to_string(),
        encoded: cx.encoded.clone(),
        explorer_fragment: format!("#/steps/{}", cx.encoded),
        actions: cx.actions.clone(),
        steps,
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
            std::fs::write(&path, text + "\n")
                .map_err(|err| format!("{}: {err}", path.display()))?;
            out.push(path);
        }
    }
    Ok(out)
}

/// Reads and validates a trace file: JSON, schema version, model and
/// model version, then the fields. Errors are one line naming the file.
pub fn load(path: &Path) -> Result<TraceFile, String> {
    let d = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{d}: {e}"))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{d}: malformed JSON: {e}"))?;
    if !v.is_object() {
        return Err(format!("{d}: not a trace file (expected a JSON object)"));
    }
    match v.get("schema").and_then(Value::as_u64) {
        Some(TRACE_SCHEMA) => {}
        Some(other) => {
            return Err(format!(
                "{d}: field schema: trace schema version {other}, this wbspec reads {TRACE_SCHEMA}"
            ))
        }
        None => return Err(format!("{d}: field schema: missing or not a number")),
    }
    match v.get("model").and_then(Value::as_str) {
        Some("fuse") => {}
        other => {
            return Err(format!(
                "{d}: field model: {other:?}, this wbspec knows \"fuse\""
            ))
        }
    }
    match v.get("model_version").and_then(Value::as_str) {
        Some(mv) if mv == MODEL_VERSION => {}
        Some(mv) => {
            return Err(format!(
                "{d}: field model_version: trace was made by model {mv}, this is {MODEL_VERSION}; regenerate it with `wbspec check --write-traces`"
            ))
        }
        None => return Err(format!("{d}: field model_version: missing")),
    }
    serde_json::from_value(v).map_err(|e| format!("{d}: {e}"))
}

/// What a successful replay established.
pub struct Replayed {
    pub trace: TraceFile,
    pub model: FuseModel,
    pub states: Vec<State>,
}

/// Re-executes a trace from the initial state of its configuration:
/// every action must be enabled, every Explorer index must name the same
/// action, each step must change the state as recorded, and the property
/// must fail at the last step and at no earlier one.
pub fn replay(t: TraceFile) -> Result<Replayed, String> {
    let m = FuseModel::new(t.config.clone()).map_err(|e| format!("field config: {e}"))?;
    let prop = t.property.as_str();
    match PROPERTIES
        .iter()
        .find(|p| p.name == prop)
        .map(|p| p.expectation.clone())
    {
        Some(Expectation::Always) => {}
        Some(_) => {
            return Err(format!(
                "field property: '{prop}' is a witness, not a safety property"
            ))
        }
        None => return Err(format!("field property: unknown property '{prop}'")),
    }
    let cond = runner::condition(&m, prop).expect("known property");
    let idx: Vec<usize> = t
        .encoded
        .split('/')
        .map(|x| x.parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("field encoded: '{}' is not a path of indices", t.encoded))?;
    if idx.len() != t.actions.len() + 1 || idx[0] != 0 {
        return Err(format!(
            "field encoded: '{}' does not match {} actions",
            t.encoded,
            t.actions.len()
        ));
    }
    if t.steps.len() != t.actions.len() {
        return Err(format!(
            "field steps: {} steps for {} actions",
            t.steps.len(),
            t.actions.len()
        ));
    }
    let mut s = m.initial();
    let mut states = vec![s.clone()];
    let n = t.actions.len();
    if n > 0 && !cond(&m, &s) {
        return Err(format!("{prop} fails already in the initial state"));
    }
    for (k, a) in t.actions.iter().enumerate() {
        let step = k + 1;
        let acts = enabled(&m, &s);
        if !acts.contains(a) {
            return Err(format!(
                "step {step}: action {} is not enabled (model changed?)",
                m.format_action(a)
            ));
        }
        match acts.get(idx[step]) {
            Some(x) if x == a => {}
            Some(x) => {
                return Err(format!(
                    "step {step}: Explorer index {} names {}, not {}",
                    idx[step],
                    m.format_action(x),
                    m.format_action(a)
                ))
            }
            None => {
                return Err(format!(
                    "step {step}: Explorer index {} out of range ({} actions enabled)",
                    idx[step],
                    acts.len()
                ))
            }
        }
        let ns = m
            .next_state(&s, *a)
            .expect("enabled action has a successor");
        if state_diff(&s, &ns) != t.steps[k].changed {
            return Err(format!(
                "step {step}: {} changes the state differently than recorded",
                m.format_action(a)
            ));
        }
        let fails = !cond(&m, &ns);
        if fails && step < n {
            return Err(format!(
                "{prop} fails already at step {step}, not at step {n} as recorded"
            ));
        }
        if !fails && step == n {
            return Err(format!("{prop} no longer fails at step {n}"));
        }
        states.push(ns.clone());
        s = ns;
    }
    if n == 0 && cond(&m, &s) {
        return Err(format!("{prop} no longer fails in the initial state"));
    }
    Ok(Replayed {
        trace: t,
        model: m,
        states,
    })
}

/// Loads and replays a file; the one-line summary on success.
pub fn replay_file(path: &Path) -> Result<Replayed, String> {
    let t = load(path)?;
    replay(t).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn summary(r: &Replayed) -> String {
    let n = r.trace.actions.len();
    format!(
        "replayed {n} steps; {} fails at step {n} as recorded",
        r.trace.property
    )
}
