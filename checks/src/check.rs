//! The bridge between a catalogue entry and its model: `Check` is what
//! the rest of the checker calls (no model type in it), `Typed<M>`
//! implements it once for every `Spec`, and `load` finds the model of a
//! catalogue entry or trace file through the registry.

use crate::explain;
use crate::runner::{self, Counterexample, RunOptions, Searched};
use crate::search::Exploration;
use crate::search::Limits;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use wbspec_models::registry::{self, ModelVisitor};
use wbspec_models::spec::{property_index, KernelState, PropertyDef, Spec, SwitchDef};

/// One configured model, whichever it is.
pub trait Check: Send + Sync {
    fn model(&self) -> &'static str;
    fn model_version(&self) -> &'static str;
    fn property_defs(&self) -> &'static [PropertyDef];
    fn switch_defs(&self) -> &'static [SwitchDef];
    fn kernel_states(&self) -> &'static [KernelState];
    /// Short kernel state (`T2`).
    fn kernel(&self) -> String;
    /// Switches that differ from the kernel state (`!x` = turned off).
    fn switches_changed(&self) -> Vec<String>;
    fn config_notes(&self) -> String;
    /// The task syntax of the model (`Spec::task_syntax`).
    fn task_syntax(&self) -> &'static [&'static str];
    /// `Spec::key_switches`: catalogue keys a family run may turn on.
    fn key_switches(&self) -> &'static [(&'static str, &'static str)];
    /// `Spec::key_switch_inert` of the configuration.
    fn key_switch_inert(&self, name: &str) -> Option<String>;
    /// `Spec::scope` of the configuration.
    fn scope(&self) -> Vec<(&'static str, String)>;
    /// The configuration as saved in trace files.
    fn config_json(&self) -> Value;
    /// The configuration with one switch flipped, or `None` when the model
    /// has no such switch.
    fn flipped_json(&self, switch: &str) -> Option<Value>;
    /// The model under a small queue bound (`Spec::congested`), and its
    /// label.
    fn congested(&self) -> Option<(Arc<dyn Check>, &'static str)>;
    /// Does the model define a symmetry reduction?
    fn has_symmetry(&self) -> bool;
    /// Every op of the task programs with its drop label (`Spec::ops`);
    /// `None`: the model's programs cannot be dropped from.
    fn ops(&self) -> Option<Vec<wbspec_models::spec::OpInfo>>;
    /// The op labels the configuration drops.
    fn drops(&self) -> Vec<String>;
    fn explore(&self, label: &str, opt: &RunOptions, progress: bool) -> Exploration;
    /// Shortest counterexample of an always-property (an error for a name
    /// the model does not have).
    fn shortest(&self, prop: &str) -> Result<Option<Counterexample>, String> {
        // an unbounded search is never stopped
        Ok(self
            .shortest_within(prop, &Limits::default())?
            .unwrap_or(None))
    }
    /// `shortest`, or the bound of `limits` that stopped the search.
    fn shortest_within(&self, prop: &str, limits: &Limits) -> Result<Searched, String>;
    /// The numbered narrative of a counterexample and why `prop` fails.
    fn explain(&self, prop: &str, cx: &Counterexample) -> Result<Vec<String>, String>;
    /// Per-step records of a trace file (labels, Explorer indices, state
    /// changes), rebuilt from the model.
    fn trace_steps(&self, cx: &Counterexample) -> Result<Vec<TraceStep>, String>;
    /// Re-executes a counterexample and checks that `prop` fails at its
    /// last step and at no earlier one.
    fn replay(&self, prop: &str, cx: &Counterexample) -> Result<(), String>;
    /// The Explorer's SVG of a counterexample (tests and docs).
    fn svg(&self, cx: &Counterexample) -> Result<String, String>;
    /// Serves Stateright's Explorer on 127.0.0.1:`port` until interrupted.
    fn serve(&self, port: u16) -> Result<(), String>;
}

/// `Check` for a model `M` and its configuration.
pub struct Typed<M: Spec> {
    pub model: M,
}

impl<M: Spec> Typed<M> {
    fn prop(&self, prop: &str) -> Result<usize, String> {
        property_index::<M>(prop)
            .ok_or_else(|| format!("model {} has no property '{prop}'", M::NAME))
    }

    fn path(&self, cx: &Counterexample) -> Result<(Vec<M::Action>, Vec<M::State>), String> {
        let actions = runner::typed_actions::<M>(&cx.actions)?;
        let states = runner::replay(&self.model, runner::init_index(&cx.encoded), &actions)?;
        Ok((actions, states))
    }
}

impl<M: Spec> Check for Typed<M> {
    fn model(&self) -> &'static str {
        M::NAME
    }
    fn model_version(&self) -> &'static str {
        M::VERSION
    }
    fn property_defs(&self) -> &'static [PropertyDef] {
        M::property_defs()
    }
    fn switch_defs(&self) -> &'static [SwitchDef] {
        M::switches()
    }
    fn kernel_states(&self) -> &'static [KernelState] {
        M::kernel_states()
    }
    fn kernel(&self) -> String {
        M::kernel_of(self.model.config())
    }
    fn switches_changed(&self) -> Vec<String> {
        M::switches_changed(self.model.config())
    }
    fn config_notes(&self) -> String {
        M::config_notes(self.model.config())
    }
    fn task_syntax(&self) -> &'static [&'static str] {
        M::task_syntax()
    }
    fn key_switches(&self) -> &'static [(&'static str, &'static str)] {
        M::key_switches()
    }
    fn key_switch_inert(&self, name: &str) -> Option<String> {
        M::key_switch_inert(self.model.config(), name)
    }

    fn scope(&self) -> Vec<(&'static str, String)> {
        M::scope(self.model.config())
    }
    fn ops(&self) -> Option<Vec<wbspec_models::spec::OpInfo>> {
        M::ops(self.model.config())
    }
    fn drops(&self) -> Vec<String> {
        M::drops(self.model.config())
    }
    fn config_json(&self) -> Value {
        serde_json::to_value(self.model.config()).expect("configurations serialise")
    }
    fn flipped_json(&self, switch: &str) -> Option<Value> {
        M::flip(self.model.config(), switch)
            .map(|c| serde_json::to_value(c).expect("configurations serialise"))
    }
    fn congested(&self) -> Option<(Arc<dyn Check>, &'static str)> {
        let (cfg, label) = M::congested(self.model.config())?;
        let model = M::build(&cfg).ok()?;
        Some((Arc::new(Typed { model }) as Arc<dyn Check>, label))
    }
    fn has_symmetry(&self) -> bool {
        M::has_symmetry()
    }
    fn explore(&self, label: &str, opt: &RunOptions, progress: bool) -> Exploration {
        runner::explore(&self.model, opt, label, progress)
    }
    fn shortest_within(&self, prop: &str, limits: &Limits) -> Result<Searched, String> {
        let i = self.prop(prop)?;
        Ok(runner::counterexample(&self.model, i, limits))
    }
    fn explain(&self, prop: &str, cx: &Counterexample) -> Result<Vec<String>, String> {
        let (actions, states) = self.path(cx)?;
        Ok(explain::explain(
            &self.model,
            &states,
            &actions,
            prop,
            self.property_defs()
                .iter()
                .find(|p| p.name == prop)
                .map_or("", |p| p.description),
        ))
    }
    fn trace_steps(&self, cx: &Counterexample) -> Result<Vec<TraceStep>, String> {
        let (actions, states) = self.path(cx)?;
        let m = &self.model;
        let mut steps = Vec::new();
        for (i, a) in actions.iter().enumerate() {
            let index = runner::enabled(m, &states[i])
                .iter()
                .position(|x| x == a)
                .ok_or_else(|| format!("step {}: action not enabled", i + 1))?;
            steps.push(TraceStep {
                n: i + 1,
                actor: m.actor_label(a),
                kernel_fn: m.step_fn(a).to_string(),
                index,
                changed: state_diff(&m.render(&states[i]), &m.render(&states[i + 1])),
            });
        }
        Ok(steps)
    }
    fn replay(&self, prop: &str, cx: &Counterexample) -> Result<(), String> {
        let i = self.prop(prop)?;
        let m = &self.model;
        let idx: Vec<usize> = cx
            .encoded
            .split('/')
            .map(|x| x.parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("field encoded: '{}' is not a path of indices", cx.encoded))?;
        if idx.len() != cx.actions.len() + 1 {
            return Err(format!(
                "field encoded: '{}' does not match {} actions",
                cx.encoded,
                cx.actions.len()
            ));
        }
        let actions = runner::typed_actions::<M>(&cx.actions)?;
        let mut s = m
            .init_states()
            .into_iter()
            .nth(idx[0])
            .ok_or_else(|| format!("field encoded: no initial state {}", idx[0]))?;
        let n = actions.len();
        let fails = |s: &M::State| !m.condition(i, s);
        if n > 0 && fails(&s) {
            return Err(format!("{prop} fails already in the initial state"));
        }
        for (k, a) in actions.iter().enumerate() {
            let step = k + 1;
            let acts = runner::enabled(m, &s);
            if !acts.contains(a) {
                return Err(format!(
                    "step {step}: action {} is not enabled (model changed?)",
                    serde_json::to_string(a).unwrap_or_default()
                ));
            }
            match acts.get(idx[step]) {
                Some(x) if x == a => {}
                Some(x) => {
                    return Err(format!(
                        "step {step}: Explorer index {} names {}, not {}",
                        idx[step],
                        runner::label(m, x),
                        runner::label(m, a)
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
            s = m
                .next_state(&s, *a)
                .ok_or_else(|| format!("step {step}: enabled action has no successor"))?;
            let f = fails(&s);
            if f && step < n {
                return Err(format!(
                    "{prop} fails already at step {step}, not at step {n} as recorded"
                ));
            }
            if !f && step == n {
                return Err(format!("{prop} no longer fails at step {n}"));
            }
        }
        if n == 0 && !fails(&s) {
            return Err(format!("{prop} no longer fails in the initial state"));
        }
        Ok(())
    }
    fn svg(&self, cx: &Counterexample) -> Result<String, String> {
        let (actions, states) = self.path(cx)?;
        let init = states[0].clone();
        let path = stateright::Path::from_actions(&self.model, init, &actions)
            .ok_or("the path does not replay")?;
        stateright::Model::as_svg(&self.model, path)
            .ok_or_else(|| "the model draws no diagram".into())
    }
    fn serve(&self, port: u16) -> Result<(), String> {
        crate::explore::serve_model(self.model.clone(), port)
    }
}

/// The model named `model`, configured by the model's keys of a catalogue
/// entry.
pub fn from_table(model: &str, table: &toml::Table) -> Result<Arc<dyn Check>, String> {
    struct V<'a>(&'a toml::Table);
    impl ModelVisitor for V<'_> {
        type Out = Result<Arc<dyn Check>, String>;
        fn visit<M: Spec>(self) -> Self::Out {
            let cfg = M::parse_config(self.0)?;
            Ok(Arc::new(Typed {
                model: M::build(&cfg)?,
            }))
        }
    }
    registry::with_model(model, V(table)).ok_or_else(|| unknown_model(model))?
}

/// The model named `model`, configured by a trace file's `config`.
pub fn from_json(model: &str, config: &Value) -> Result<Arc<dyn Check>, String> {
    struct V<'a>(&'a Value);
    impl ModelVisitor for V<'_> {
        type Out = Result<Arc<dyn Check>, String>;
        fn visit<M: Spec>(self) -> Self::Out {
            let cfg: M::Config =
                serde_json::from_value(self.0.clone()).map_err(|e| format!("field config: {e}"))?;
            Ok(Arc::new(Typed {
                model: M::build(&cfg).map_err(|e| format!("field config: {e}"))?,
            }))
        }
    }
    registry::with_model(model, V(config)).ok_or_else(|| unknown_model(model))?
}

/// The model version of a model name.
pub fn model_version(model: &str) -> Option<&'static str> {
    struct V;
    impl ModelVisitor for V {
        type Out = &'static str;
        fn visit<M: Spec>(self) -> &'static str {
            M::VERSION
        }
    }
    registry::with_model(model, V)
}

fn unknown_model(model: &str) -> String {
    format!(
        "unknown model '{model}' (known: {})",
        registry::model_names().join(", ")
    )
}

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

/// Lines of `a` not in `b` (`+`), and the reverse (`-`), removed lines
/// first.
pub fn state_diff(b: &str, a: &str) -> Vec<String> {
    let lb: Vec<&str> = b.lines().collect();
    let la: Vec<&str> = a.lines().collect();
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
