//! Exploring one model, generic over `Spec`: an exhaustive search that
//! tallies every property on every state, a breadth-first search of our
//! own for a shortest counterexample, and replay of an action list.
//! (outcome.rs turns these into a catalogue check's verdicts.)

use crate::search::{self, Exploration, Limits, Stop};
use crate::tally::Tallied;
use serde_json::Value;
use stateright::{Checker, Model};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};
use wbspec_models::spec::Spec;

/// A counterexample in model-free form: the actions as the model
/// serialises them, each step's label, and the Explorer path.
#[derive(Clone, Debug, PartialEq)]
pub struct Counterexample {
    pub actions: Vec<Value>,
    /// `T1 ftruncate: fuse_do_setattr: send SETATTR` per step.
    pub labels: Vec<String>,
    /// `Path::encode` form: init index, then action indices.
    pub encoded: String,
}

impl Counterexample {
    pub fn len(&self) -> usize {
        self.actions.len()
    }
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }
}

/// Which exploration loop runs a check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// search.rs: the same DFS order as Stateright's, cheaper per state.
    #[default]
    Fast,
    /// Stateright's own DFS checker through the tally wrapper: the
    /// reference the fast engine is compared with.
    Stateright,
}

impl Engine {
    pub fn parse(s: &str) -> Result<Engine, String> {
        match s {
            "fast" => Ok(Engine::Fast),
            "stateright" => Ok(Engine::Stateright),
            _ => Err(format!("unknown engine '{s}' (fast, stateright)")),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Fast => "fast",
            Engine::Stateright => "stateright",
        }
    }
}

/// How to explore one check.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    pub engine: Engine,
    pub limits: Limits,
    /// Explore one state per symmetry class (`Spec::representative`).
    pub symmetry: bool,
    /// Expected unique states (the pin): sizes the fast engine's table.
    pub expected: Option<u64>,
    /// The fast engine's threads (0 or 1: the DFS in Stateright's order).
    pub threads: usize,
    /// `--bitstate N` (search::Options::bitstate).
    pub bitstate: Option<u8>,
}

/// Exhaustive exploration of `m` with the engine `opt` names.
pub fn explore<M: Spec>(m: &M, opt: &RunOptions, label: &str, progress: bool) -> Exploration {
    match opt.engine {
        Engine::Fast => search::explore(
            m,
            &search::Options {
                limits: opt.limits,
                symmetry: opt.symmetry,
                expected: opt.expected,
                threads: opt.threads,
                bitstate: opt.bitstate,
            },
            label,
            progress,
        ),
        Engine::Stateright => explore_stateright(m, &opt.limits, label, progress),
    }
}

/// Exhaustive DFS with Stateright's checker, one thread, no target
/// (stateright-notes G4) unless `limits` sets one, so a finished run
/// without limits is a full exploration. Progress goes to stderr for
/// runs longer than 2 s.
pub fn explore_stateright<M: Spec>(
    m: &M,
    limits: &Limits,
    label: &str,
    progress: bool,
) -> Exploration {
    let start = Instant::now();
    let model = Tallied::new(m.clone(), limits.max_time.map(|t| start + t));
    let mut builder = model.clone().checker();
    if let Some(n) = limits.max_states {
        builder = builder.target_state_count(n as usize);
    }
    let checker = builder.spawn_dfs();
    let mut last = Instant::now();
    while !checker.is_done() {
        std::thread::sleep(Duration::from_millis(20));
        if progress
            && start.elapsed() > Duration::from_secs(2)
            && last.elapsed() >= Duration::from_secs(5)
        {
            eprintln!(
                "  {label}: {} unique states, {:.0}s",
                checker.unique_state_count(),
                start.elapsed().as_secs_f64()
            );
            last = Instant::now();
        }
    }
    let checker = checker.join();
    let unique = checker.unique_state_count() as u64;
    // Stateright's DFS stops at a target state count (checked against
    // generated states, duplicates included) without saying so; the time
    // bound is the tally wrapper's (tally.rs). Either means the search is
    // not exhaustive.
    let stopped = match (limits.max_states, limits.max_time) {
        (_, Some(t)) if model.expired() => Some(Stop::MaxTime(t)),
        (Some(n), _) if checker.state_count() as u64 >= n => Some(Stop::MaxStates(n)),
        _ => None,
    };
    Exploration {
        complete: stopped.is_none() && checker.is_done(),
        stopped,
        unique_states: unique,
        total_states: checker.state_count() as u64,
        max_depth: checker.max_depth() as u64,
        depth_unknown: false,
        hits: (0..M::property_defs().len())
            .map(|i| model.count(i))
            .collect(),
        elapsed: start.elapsed(),
        table_bytes: 0,
    }
}

/// The enabled actions of a state, in the model's order.
pub fn enabled<M: Spec>(m: &M, s: &M::State) -> Vec<M::Action> {
    let mut acts = Vec::new();
    m.actions(s, &mut acts);
    acts
}

/// Breadth-first search from the initial states to the nearest state that
/// violates always-property `prop`: the counterexample is shortest and
/// ends at its first violating state (stateright-notes.md G2: Stateright's
/// own BFS may report a longer path). Returns the actions and the
/// Explorer path (init index, then action indices).
pub fn shortest<M: Spec>(m: &M, prop: usize) -> Option<(Vec<M::Action>, String)> {
    shortest_within(m, prop, &Limits::default()).unwrap_or(None)
}

/// A path's actions and its Explorer encoding (init index, then action
/// indices).
pub type ActionPath<A> = (Vec<A>, String);

/// `shortest`, giving up (`Err` with the bound) once the search has
/// stored `limits.max_states` states or run `limits.max_time`.
pub fn shortest_within<M: Spec>(
    m: &M,
    prop: usize,
    limits: &Limits,
) -> Result<Option<ActionPath<M::Action>>, Stop> {
    let start = Instant::now();
    let over = |n: usize| match (limits.max_states, limits.max_time) {
        (Some(x), _) if n as u64 >= x => Some(Stop::MaxStates(x)),
        (_, Some(t)) if n.is_multiple_of(4096) && start.elapsed() >= t => Some(Stop::MaxTime(t)),
        _ => None,
    };
    let holds = |s: &M::State| m.condition(prop, s);
    let inits = m.init_states();
    let mut seen: HashMap<M::State, ()> = HashMap::new();
    // node: (state, parent node, action index, action)
    let mut nodes: Vec<(M::State, usize, usize, Option<M::Action>)> = Vec::new();
    let mut queue = VecDeque::new();
    for (ii, s) in inits.into_iter().enumerate() {
        if !holds(&s) {
            return Ok(Some((vec![], ii.to_string())));
        }
        if seen.insert(s.clone(), ()).is_none() {
            nodes.push((s, usize::MAX, ii, None));
            queue.push_back(nodes.len() - 1);
        }
    }
    let mut acts = Vec::new();
    while let Some(i) = queue.pop_front() {
        if let Some(stop) = over(nodes.len()) {
            return Err(stop);
        }
        let s = nodes[i].0.clone();
        acts.clear();
        m.actions(&s, &mut acts);
        for (ai, a) in acts.iter().enumerate() {
            let ns = match m.next_state(&s, *a) {
                Some(ns) => ns,
                None => continue,
            };
            if seen.contains_key(&ns) {
                continue;
            }
            seen.insert(ns.clone(), ());
            let bad = !holds(&ns);
            nodes.push((ns, i, ai, Some(*a)));
            let j = nodes.len() - 1;
            if bad {
                let mut path = Vec::new();
                let mut k = j;
                while nodes[k].1 != usize::MAX {
                    path.push((nodes[k].2, nodes[k].3.expect("action")));
                    k = nodes[k].1;
                }
                path.reverse();
                let mut enc = vec![nodes[k].2.to_string()];
                enc.extend(path.iter().map(|(ai, _)| ai.to_string()));
                return Ok(Some((
                    path.into_iter().map(|(_, a)| a).collect(),
                    enc.join("/"),
                )));
            }
            queue.push_back(j);
        }
    }
    Ok(None)
}

/// Replays an action list from initial state `init`; every action must be
/// enabled where it is taken. Returns the states.
pub fn replay<M: Spec>(m: &M, init: usize, actions: &[M::Action]) -> Result<Vec<M::State>, String> {
    let mut s = m
        .init_states()
        .into_iter()
        .nth(init)
        .ok_or_else(|| format!("the model has no initial state {init}"))?;
    let mut out = vec![s.clone()];
    for (i, a) in actions.iter().enumerate() {
        if !enabled(m, &s).contains(a) {
            // name the action by its serialised form: its label may index
            // actors that do not exist
            return Err(format!(
                "step {}: action {} is not enabled",
                i + 1,
                serde_json::to_string(a).unwrap_or_default()
            ));
        }
        s = m
            .next_state(&s, *a)
            .ok_or_else(|| format!("step {}: enabled action has no successor", i + 1))?;
        out.push(s.clone());
    }
    Ok(out)
}

/// `T1 ftruncate: fuse_do_setattr: send SETATTR`.
pub fn label<M: Spec>(m: &M, a: &M::Action) -> String {
    format!("{}: {}", m.actor_label(a), m.step_fn(a))
}

/// What a bounded counterexample search found: a counterexample, none
/// (the property holds), or `Err` with the bound that cut the search.
pub type Searched = Result<Option<Counterexample>, Stop>;

/// A counterexample of `prop` in model-free form.
pub fn counterexample<M: Spec>(m: &M, prop: usize, limits: &Limits) -> Searched {
    let Some((actions, encoded)) = shortest_within(m, prop, limits)? else {
        return Ok(None);
    };
    Ok(Some(Counterexample {
        labels: actions.iter().map(|a| label(m, a)).collect(),
        actions: actions
            .iter()
            .map(|a| serde_json::to_value(a).expect("actions serialise"))
            .collect(),
        encoded,
    }))
}

/// The typed actions of a model-free counterexample.
pub fn typed_actions<M: Spec>(actions: &[Value]) -> Result<Vec<M::Action>, String> {
    actions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            serde_json::from_value(v.clone())
                .map_err(|e| format!("step {}: not an action of this model: {e}", i + 1))
        })
        .collect()
}

/// The init index of an encoded path.
pub fn init_index(encoded: &str) -> usize {
    encoded
        .split('/')
        .next()
        .and_then(|x| x.parse().ok())
        .unwrap_or(0)
}
