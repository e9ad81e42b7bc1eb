//! The FUSE client model: writeback, truncate and direct I/O on one inode
//! of a writeback_cache mount (kernel-fuse-protocol.md §2–§10).

pub mod config;
pub mod model;
pub mod program;
pub mod properties;
pub mod state;
pub mod svg;

pub use config::{Config, Kernel, TaskSpec, Variant};
pub use model::{Action, Actor, FuseModel};
pub use program::Step;
pub use state::State;

/// Version of the model's step semantics, recorded in every saved trace
/// (traces/*.json) and checked by `wbspec replay`. Bump it whenever a
/// change to `enabled`/`step`, the programs, the `Action`/`Step`/`State`
/// definitions, the order of actions or a property's condition could make
/// a saved trace mean something else, and then regenerate the traces
/// (`cargo run --release -- check --all --write-traces`).
pub const MODEL_VERSION: &str = "fuse-2";

impl stateright::Model for FuseModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![self.initial()]
    }

    fn actions(&self, s: &State, out: &mut Vec<Action>) {
        self.enabled(s, out);
    }

    fn next_state(&self, s: &State, a: Action) -> Option<State> {
        self.step(s, a)
    }

    fn format_action(&self, a: &Action) -> String {
        format!("{}: {}", self.actor_label(a.actor), a.step.kernel_fn())
    }

    fn as_svg(&self, path: stateright::Path<State, Action>) -> Option<String> {
        let actions = path.clone().into_actions();
        Some(svg::sequence_svg(self, &path.into_states(), &actions))
    }

    fn properties(&self) -> Vec<stateright::Property<Self>> {
        if self.tally_mode {
            properties::tally_properties()
        } else {
            properties::properties()
        }
    }
}

#[cfg(test)]
mod tests;
