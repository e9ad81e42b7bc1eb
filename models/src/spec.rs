//! The contract between a model and the checker.
//!
//! `checks/` (catalogue, runner, verdict lines, JSON, trace files, replay,
//! explain, explore, cite, the results table) is generic over this trait
//! and names no model. A model is a `stateright::Model` that also says how
//! a catalogue entry configures it, which properties it has, and how its
//! steps read in kernel terms. A new model is a folder under models/src
//! implementing `Spec`, one line in `registry::with_model`, catalogue
//! entries with `model = "<NAME>"`, and a docs/model-<name>.md page.

use crate::common::encode::Enc;
use serde::{de::DeserializeOwned, Serialize};
use stateright::{Expectation, Model, Property};
use std::fmt::Debug;
use std::hash::Hash;

/// One property of a model: an `Always` safety property (a verdict), or a
/// `Sometimes` witness that proves a racy window is reached.
#[derive(Clone, Debug)]
pub struct PropertyDef {
    pub name: &'static str,
    pub expectation: Expectation,
    /// `Some`: the property asks more than the kernel promises. Its
    /// violation is the kernel's intended behaviour, which a catalogue
    /// entry may expect as `"intended"`; `None`: the property is the
    /// kernel's contract (or a witness).
    pub stricter: Option<Stricter>,
    pub description: &'static str,
}

/// What a property stricter than the kernel's contract goes beyond.
#[derive(Clone, Copy, Debug)]
pub struct Stricter {
    /// The model's property that checks the contract itself.
    pub contract: &'static str,
    /// What the kernel promises instead, and where it says so (one line).
    pub promise: &'static str,
}

/// One kernel state of a model: the short name a check's
/// `kernel = "..."` uses. What it stands for in kernel versions and
/// commits is data, in checks/facts/kernels.toml (a test holds that every
/// state of every model has an entry there).
#[derive(Clone, Copy, Debug)]
pub struct KernelState {
    pub name: &'static str,
}

/// One op of a task program and its drop label (issue 19,
/// `Spec::ops`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// Task index in the workload.
    pub task: usize,
    /// The task's kind, its catalogue syntax's first word (`dio-write`).
    pub kind: String,
    /// `caller:callee`, as `drop = [...]` names it.
    pub label: String,
    /// Why it cannot be dropped (`None`: it can).
    pub refused: Option<String>,
}

/// A behaviour switch of a model: a kernel fix, a review proposal or a
/// mutant, by the name a catalogue entry uses to turn it on or off.
#[derive(Clone, Copy, Debug)]
pub struct SwitchDef {
    pub name: &'static str,
    pub kind: SwitchKind,
    pub description: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchKind {
    /// Part of some kernel state (a fix or a kernel mechanism).
    Kernel,
    /// A change proposed in a review.
    Proposal,
    /// A deliberately broken protection (a vacuity guard).
    Mutant,
    /// A fix wbspec proposes for one of its findings (docs/findings.md):
    /// precise enough to write the kernel patch from.
    Fix,
}

impl SwitchKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SwitchKind::Kernel => "kernel",
            SwitchKind::Proposal => "proposal",
            SwitchKind::Mutant => "mutant",
            SwitchKind::Fix => "fix",
        }
    }
}

/// A set of properties, bit `i` for property `i` (`Spec::hits`).
pub type Hits = u128;

/// Most properties a model may have (`hits` is a `Hits` bitmask).
pub const MAX_PROPERTIES: usize = Hits::BITS as usize;

pub trait Spec:
    Model<
        State: Clone + Debug + Hash + Eq + Send + Sync + 'static,
        Action: Copy + Debug + Eq + Hash + Send + Sync + Serialize + DeserializeOwned + 'static,
    > + Clone
    + Send
    + Sync
    + Sized
    + 'static
{
    /// Everything a catalogue entry configures: kernel state, switches,
    /// geometry, workload. Saved whole in trace files.
    type Config: Clone + Debug + PartialEq + Serialize + DeserializeOwned + Send + Sync + 'static;

    /// The catalogue's `model = "..."` value.
    const NAME: &'static str;
    /// Version of the step semantics, recorded in every trace file. Bump
    /// it whenever a saved trace could mean something else.
    const VERSION: &'static str;

    /// Parses the model's own keys of a catalogue entry (the entry minus
    /// the generic keys the checker reads). Unknown keys, bad values and
    /// configurations the kernel cannot reach are one-line errors.
    fn parse_config(table: &toml::Table) -> Result<Self::Config, String>;
    /// Builds the model of a configuration (validating it again: trace
    /// files carry configurations too).
    fn build(cfg: &Self::Config) -> Result<Self, String>;
    fn config(&self) -> &Self::Config;

    /// The model's properties, always-properties first or not: the
    /// checker reads `expectation`.
    fn property_defs() -> &'static [PropertyDef];
    /// Property `i` of `property_defs()`: for an `Always` property, does
    /// it hold in `s`; for a `Sometimes` witness, is it reached in `s`.
    fn condition(&self, i: usize, s: &Self::State) -> bool;
    /// Bit `i` set when state `s` violates always-property `i` or reaches
    /// witness `i`. Models may override it with a faster evaluation.
    fn hits(&self, s: &Self::State) -> Hits {
        let mut h = 0;
        for (i, p) in Self::property_defs().iter().enumerate() {
            let c = self.condition(i, s);
            if c == (p.expectation == Expectation::Sometimes) {
                h |= 1 << i;
            }
        }
        h
    }

    /// `hits(s)`, given the successors of `s` as `successors` returns
    /// them (the exhaustive search has computed them anyway). Models may
    /// override it to read enabledness (deadlock, blocked tasks) from
    /// `succ` instead of executing steps again; it must equal `hits(s)`.
    fn hits_given(&self, s: &Self::State, succ: &[(Self::Action, Self::State)]) -> Hits {
        let _ = succ;
        self.hits(s)
    }

    /// The enabled actions of `s` with their successor states, in
    /// `actions` order (the Explorer's indices). The default executes
    /// `actions` and then `next_state` per action; models override it to
    /// execute each step once.
    fn successors(&self, s: &Self::State, out: &mut Vec<(Self::Action, Self::State)>) {
        successors_from_actions(self, s, out)
    }

    /// Writes a byte image of `s` that determines it (equal images
    /// exactly for equal states) and returns true; the checker
    /// fingerprints states by hashing it in one pass. The default (false)
    /// makes the checker hash the derived `Hash` instead, one call per
    /// field. See common/encode.rs.
    fn encode(&self, s: &Self::State, out: &mut Enc) -> bool {
        let _ = (s, out);
        false
    }

    /// Does the model define a symmetry reduction (`representative`)?
    fn has_symmetry() -> bool {
        false
    }
    /// The canonical member of the class of states that the model's
    /// symmetry (interchangeable actors) makes equivalent: equal for two
    /// states exactly when one is a permutation of the other that maps
    /// transitions to transitions and keeps every property's value.
    /// Default: the identity (no reduction). docs/performance.md says
    /// what a model must prove before overriding it.
    fn representative(&self, s: &Self::State) -> Self::State {
        s.clone()
    }

    /// The model's kernel states, for the results legend.
    fn kernel_states() -> &'static [KernelState];
    /// The kernel state of a configuration, short (`T2`).
    fn kernel_of(cfg: &Self::Config) -> String;
    /// The switches a catalogue entry may set.
    fn switches() -> &'static [SwitchDef];
    /// Switches that differ from the configuration's kernel state: `name`
    /// when turned on, `!name` when turned off.
    fn switches_changed(cfg: &Self::Config) -> Vec<String>;
    /// The configuration with one switch turned the other way, or `None`
    /// when `name` is not a switch of this model.
    fn flip(cfg: &Self::Config, name: &str) -> Option<Self::Config>;
    /// The catalogue's task syntax, one form per task kind (its first
    /// word), e.g. `write F+N`; empty for a model whose workload is not a
    /// task list. Unknown-task errors list it; `wbspec list --task KIND`
    /// checks a kind against it.
    fn task_syntax() -> &'static [&'static str] {
        &[]
    }
    /// Boolean catalogue keys that a family run (`check --with KEY`) may
    /// turn on like a switch, as (name, description): a connection option
    /// the configuration sets as a key, not as a variant flag. Default:
    /// none.
    fn key_switches() -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// Why turning key switch `name` on changes nothing in `cfg` (the
    /// family run lists the check as not applicable), or `None`.
    fn key_switch_inert(_cfg: &Self::Config, _name: &str) -> Option<String> {
        None
    }
    /// Other settings worth a column in the results table (`2 threads`).
    fn config_notes(cfg: &Self::Config) -> String;
    /// What a citation says about the scope of a configuration, as
    /// (label, value) pairs: sizes, the tasks as the catalogue writes
    /// them, daemon threads, queue bound, and what the model leaves out
    /// for this configuration. Default: the results table's settings.
    fn scope(cfg: &Self::Config) -> Vec<(&'static str, String)> {
        vec![("settings", Self::config_notes(cfg))]
    }
    /// The same configuration under a small bound on the model's request
    /// queue, and its label (`max_background 1`), when the model has such
    /// a bound and the configuration leaves it unbounded. The checker runs
    /// it next to every check (`<check>-bg1`), so each verdict says
    /// whether it depends on an uncongested queue.
    fn congested(_cfg: &Self::Config) -> Option<(Self::Config, &'static str)> {
        None
    }
    /// Every op of the configuration's task programs with its drop label
    /// (before any drop), or `None` when the model's programs are not
    /// droppable (`drop = [...]` is then refused).
    fn ops(_cfg: &Self::Config) -> Option<Vec<OpInfo>> {
        None
    }
    /// The op labels the configuration drops (`drop = [...]`).
    fn drops(_cfg: &Self::Config) -> Vec<String> {
        Vec::new()
    }

    /// `T1 ftruncate`, `D0 daemon`.
    fn actor_label(&self, a: &Self::Action) -> String;
    /// The kernel function(s) the action's step stands for.
    fn step_fn(&self, a: &Self::Action) -> &'static str;
    /// The Explorer's sequence diagram lanes, and the lane of an action.
    fn lanes(&self) -> Vec<String>;
    fn lane_of(&self, a: &Self::Action) -> usize;
    /// What one step did, in kernel words (one sentence, unwrapped).
    fn describe(&self, before: &Self::State, after: &Self::State, a: &Self::Action) -> String;
    /// Sentences naming the values that break property `prop` at the end
    /// of a path.
    fn why(&self, states: &[Self::State], actions: &[Self::Action], prop: &str) -> Vec<String>;
    /// The compact multi-line state rendering that trace files diff.
    fn render(&self, s: &Self::State) -> String {
        format!("{s:?}")
    }
}

/// The successors of `s` from `actions` and `next_state`: the default of
/// `Spec::successors`, and what an override must equal.
pub fn successors_from_actions<M: Spec>(m: &M, s: &M::State, out: &mut Vec<(M::Action, M::State)>) {
    let mut acts = Vec::new();
    m.actions(s, &mut acts);
    for a in acts {
        if let Some(ns) = m.next_state(s, a) {
            out.push((a, ns));
        }
    }
}

/// Condition `I` of model `M` as the plain function pointer Stateright's
/// `Property` wants.
fn cond_at<M: Spec, const I: usize>(m: &M, s: &M::State) -> bool {
    m.condition(I, s)
}

macro_rules! cond_table {
    ($($i:literal)*) => {
        fn cond_fn<M: Spec>(i: usize) -> fn(&M, &M::State) -> bool {
            match i {
                $($i => cond_at::<M, $i>,)*
                _ => panic!("a model has at most {MAX_PROPERTIES} properties"),
            }
        }
    };
}
cond_table!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27
    28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54
    55 56 57 58 59 60 61 62 63
    64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127);

/// The properties as Stateright sees them (Explorer, Stateright's own
/// checkers), plus `EXPLORE_ALL`.
pub fn stateright_properties<M: Spec>() -> Vec<Property<M>> {
    let mut v: Vec<Property<M>> = M::property_defs()
        .iter()
        .enumerate()
        .map(|(i, p)| match p.expectation {
            Expectation::Sometimes => Property::sometimes(p.name, cond_fn::<M>(i)),
            _ => Property::always(p.name, cond_fn::<M>(i)),
        })
        .collect();
    v.push(Property::<M>::always(EXPLORE_ALL, |_, _| true));
    v
}

/// An always-true property. Stateright's DFS stops once every property has
/// a discovery and does not expand a state in which every property already
/// has its discovery (checker/dfs.rs, 0.31.0). With one property that
/// never fails, neither can happen, so every run is exhaustive.
pub const EXPLORE_ALL: &str = "_explore-all";

/// Index of a property by name.
pub fn property_index<M: Spec>(name: &str) -> Option<usize> {
    M::property_defs().iter().position(|p| p.name == name)
}

/// Tests: concrete tasks for one form of a `task_syntax()` list, with
/// every option left out and all given, every alternative of `a|b`
/// (F+N becomes 0+1, P and N become 1, S becomes 1).
#[cfg(test)]
pub(crate) fn task_syntax_instances(form: &str) -> Vec<String> {
    let fill = |w: &str| match w {
        "F+N" => "0+1".to_string(),
        "P" | "N" | "S" => "1".to_string(),
        w => match w.strip_suffix("=N") {
            Some(key) => format!("{key}=1"),
            None => w.to_string(),
        },
    };
    let words: Vec<&str> = form.split_whitespace().collect();
    let mut out = Vec::new();
    for with_options in [false, true] {
        let mut alts: Vec<Vec<String>> = vec![vec![]];
        for w in &words {
            let (opt, w) = match w.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
                Some(inner) => (true, inner),
                None => (false, *w),
            };
            if opt && !with_options {
                continue;
            }
            let choices: Vec<String> = w.split('|').map(fill).collect();
            alts = alts
                .iter()
                .flat_map(|a| {
                    choices.iter().map(move |c| {
                        let mut a = a.clone();
                        a.push(c.clone());
                        a
                    })
                })
                .collect();
        }
        out.extend(alts.into_iter().map(|a| a.join(" ")));
    }
    out.dedup();
    out
}
