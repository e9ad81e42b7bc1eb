//! The narrative of a counterexample: numbered kernel steps (report.rs's
//! `narrate`), then the property that fails and the values that break it,
//! every line ≤ 72 columns.

use crate::report::{narrate, wrap};
use crate::runner;
use wbspec_models::fuse::{Action, FuseModel, State};
use wbspec_models::spec::Spec;

/// The full narrative: steps, the failing property, the values.
pub fn explain(m: &FuseModel, states: &[State], actions: &[Action], prop: &str) -> Vec<String> {
    let mut out = narrate(m, states, actions);
    out.extend(wrap(
        "=> ",
        &format!(
            "{prop} fails at step {}: {}",
            actions.len(),
            runner::property_description(prop)
        ),
        72,
    ));
    for w in m.why(states, actions, prop) {
        out.extend(wrap("   ", &w, 72));
    }
    out
}
