//! The io_uring / xfs / iomap model: IOCB_NOWAIT buffered writes (seed 004)
//! on one xfs inode, from the RFC as posted to 7.0
//! (docs/kernel-sources.md, model nowait; docs/model-nowait.md).

pub mod config;
pub mod model;
pub mod narrate;
pub mod properties;
pub mod state;
pub mod step;
pub mod svg;
mod write;

pub use config::{Config, Kernel, TaskSpec, Variant};
pub use model::{Action, Actor, EnvActor, NowaitModel};
pub use state::State;
pub use step::Step;

use crate::spec::{self, KernelState, PropertyDef, Spec, SwitchDef, SwitchKind};

/// Version of the model's step semantics, recorded in every saved trace.
/// Bump it whenever a saved trace could mean something else.
pub const MODEL_VERSION: &str = "nowait-1";

impl stateright::Model for NowaitModel {
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
        spec::stateright_properties::<Self>()
    }
}

const KERNEL_STATES: &[KernelState] = &[
    KernelState { name: "V1" },
    KernelState { name: "V7" },
    KernelState { name: "M60" },
    KernelState { name: "M615" },
    KernelState { name: "N70" },
];

const SWITCHES: &[SwitchDef] = &[
    SwitchDef { name: "pending_time", kind: SwitchKind::Kernel, description: "S_PENDING_TIME: set with -EAGAIN, skip when set, cleared by a blocking update (RFC, v2-v7)" },
    SwitchDef { name: "delalloc_nowait_eagain", kind: SwitchKind::Kernel, description: "RFC v1 patch 6: NOWAIT xfs_buffered_write_iomap_begin returns -EAGAIN for a delalloc reservation" },
    SwitchDef { name: "bdp_async_eagain", kind: SwitchKind::Kernel, description: "fe6c9c6e3e3e: balance_dirty_pages(BDP_ASYNC) returns -EAGAIN (off: RFC records a pause and goes on)" },
    SwitchDef { name: "iter_revert", kind: SwitchKind::Kernel, description: "18e419f6e80a: iomap_write_iter reverts the iov_iter and returns -EAGAIN (state M60)" },
    SwitchDef { name: "nowait_lazytime", kind: SwitchKind::Kernel, description: "85c871a02b03/08489c4f4133: NOWAIT lazytime timestamp updates in memory (state N70)" },
    SwitchDef { name: "p_nowait_iversion_first", kind: SwitchKind::Proposal, description: "2025 v1 xfs_vn_update_time: bump i_version, then -EAGAIN (Dave Chinner's review)" },
    SwitchDef { name: "mut_cqe_ignores_bytes_done", kind: SwitchKind::Mutant, description: "io_uring CQE without io->bytes_done" },
    SwitchDef { name: "mut_iolock_shared", kind: SwitchKind::Mutant, description: "buffered writes take the IOLOCK shared" },
    SwitchDef { name: "mut_nowait_time_then_eagain", kind: SwitchKind::Mutant, description: "NOWAIT kiocb_modified updates the times, then -EAGAIN" },
    SwitchDef { name: "mut_iversion_unlogged", kind: SwitchKind::Mutant, description: "a blocking timestamp update bumps i_version without logging it" },
    SwitchDef { name: "mut_nowait_skip_time", kind: SwitchKind::Mutant, description: "NOWAIT kiocb_modified skips a needed time update" },
    SwitchDef { name: "mut_pending_never_cleared", kind: SwitchKind::Mutant, description: "S_PENDING_TIME is never cleared" },
    SwitchDef { name: "mut_cached_privs_check", kind: SwitchKind::Mutant, description: "the remove-privs check is made at submission and reused" },
    SwitchDef { name: "mut_bdp_skip_nowait", kind: SwitchKind::Mutant, description: "NOWAIT iomap_write_iter skips balance_dirty_pages" },
    SwitchDef { name: "mut_bdp_no_freerun", kind: SwitchKind::Mutant, description: "NOWAIT balance_dirty_pages refuses even under the limit" },
    SwitchDef { name: "mut_iolock_leak_on_eagain", kind: SwitchKind::Mutant, description: "xfs_file_buffered_write returns -EAGAIN without xfs_iunlock" },
    SwitchDef { name: "fix_append_punt", kind: SwitchKind::Fix, description: "io2 fix: io_write punts a buffered O_APPEND write to io-wq before any inline NOWAIT attempt" },
];

impl Spec for NowaitModel {
    type Config = Config;
    const NAME: &'static str = "nowait";
    const VERSION: &'static str = MODEL_VERSION;

    fn parse_config(table: &toml::Table) -> Result<Config, String> {
        Config::from_table(table)
    }

    fn build(cfg: &Config) -> Result<Self, String> {
        NowaitModel::new(cfg.clone())
    }

    fn config(&self) -> &Config {
        &self.cfg
    }

    fn property_defs() -> &'static [PropertyDef] {
        properties::PROPERTIES
    }

    fn condition(&self, i: usize, s: &State) -> bool {
        properties::CONDITIONS[i](self, s)
    }

    fn kernel_states() -> &'static [KernelState] {
        KERNEL_STATES
    }

    fn kernel_of(cfg: &Config) -> String {
        format!("{:?}", cfg.kernel)
    }

    fn switches() -> &'static [SwitchDef] {
        SWITCHES
    }

    fn switches_changed(cfg: &Config) -> Vec<String> {
        let base = Variant::base(cfg.kernel).flags_on();
        let on = cfg.variant.flags_on();
        let mut v: Vec<String> = on
            .iter()
            .filter(|f| !base.contains(f))
            .map(|f| f.to_string())
            .collect();
        v.extend(
            base.iter()
                .filter(|f| !on.contains(f))
                .map(|f| format!("!{f}")),
        );
        v
    }

    fn flip(cfg: &Config, name: &str) -> Option<Config> {
        let mut c = cfg.clone();
        let on = c.variant.flags_on().contains(&name);
        c.variant
            .set(&if on {
                format!("!{name}")
            } else {
                name.to_string()
            })
            .ok()?;
        Some(c)
    }

    fn task_syntax() -> &'static [&'static str] {
        config::SYNTAX
    }

    fn scope(cfg: &Config) -> Vec<(&'static str, String)> {
        let tasks: Vec<String> = cfg
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| format!("T{i} \"{t}\""))
            .collect();
        vec![
            (
                "folios",
                format!(
                    "{} in the file at the start (cached, uptodate, clean)",
                    cfg.init_size
                ),
            ),
            ("tasks", tasks.join(", ")),
            ("settings", Self::config_notes(cfg)),
            (
                "not modelled",
                "partial folios, folio allocation failure, the rate of dirty \
                 throttling (a threshold only), multigrain ctime, \
                 RWF_NOWAIT and IOPOLL (docs/model-nowait.md, Abstractions)"
                    .to_string(),
            ),
        ]
    }

    fn config_notes(cfg: &Config) -> String {
        let mut v = Vec::new();
        if cfg.lazytime {
            v.push("lazytime".to_string());
        }
        if cfg.limit > 0 {
            v.push(format!("limit {} rl {}", cfg.limit, cfg.ratelimit));
        }
        if cfg.mapping > 0 {
            v.push(format!("{}-folio extents", cfg.mapping));
        }
        if cfg.suid {
            v.push("S_ISUID".into());
        }
        if cfg.stale {
            v.push("stale times".into());
        }
        let mut env = Vec::new();
        if cfg.clock_ticks > 0 {
            env.push(format!("{} tick(s)", cfg.clock_ticks));
        }
        if cfg.folio_lock != 0 {
            env.push("folio lock".to_string());
        }
        if cfg.ilock > 0 {
            env.push("ILOCK".to_string());
        }
        if cfg.dirtier > 0 {
            env.push(format!("dirtier {}", cfg.dirtier));
        }
        if !env.is_empty() {
            v.push(format!("env: {}", env.join(", ")));
        }
        v.join(", ")
    }

    fn actor_label(&self, a: &Action) -> String {
        NowaitModel::actor_label(self, a.actor)
    }

    fn step_fn(&self, a: &Action) -> &'static str {
        a.step.kernel_fn()
    }

    fn lanes(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for (t, spec) in self.cfg.tasks.iter().enumerate() {
            v.push(format!("T{t} {}", spec.short()));
            if matches!(spec, TaskSpec::Uring { .. }) {
                v.push(format!("T{t} io-wq"));
            }
        }
        v.push("environment".into());
        v
    }

    fn lane_of(&self, a: &Action) -> usize {
        let lane = |t: u8| -> usize {
            self.cfg.tasks[..t as usize]
                .iter()
                .map(|s| 1 + matches!(s, TaskSpec::Uring { .. }) as usize)
                .sum()
        };
        match a.actor {
            Actor::Task(t) => lane(t),
            Actor::Iowq(t) => lane(t) + 1,
            Actor::Env(_) => self.lanes().len() - 1,
        }
    }

    fn describe(&self, before: &State, after: &State, a: &Action) -> String {
        narrate::describe(self, before, after, a)
    }

    fn why(&self, states: &[State], actions: &[Action], prop: &str) -> Vec<String> {
        narrate::why(self, states, actions, prop)
    }

    fn render(&self, s: &State) -> String {
        narrate::render(self, s)
    }
}

#[cfg(test)]
mod tests;
