//! Runs one catalogue entry: an exhaustive Stateright DFS for the verdicts
//! and state counts, then, for every violated property, a breadth-first
//! search of our own for a shortest counterexample.

use crate::catalogue::{always_properties, witness_properties, Entry, Verdict};
use crate::tally::Tallied;
use stateright::{Checker, Model};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};
use wbspec_models::fuse::properties::PROPERTIES;
use wbspec_models::fuse::{Action, FuseModel, State};
use wbspec_models::spec::property_index;

#[derive(Clone, Debug)]
pub struct PropResult {
    pub name: &'static str,
    pub expected: Verdict,
    pub observed: Verdict,
    /// Visited states that violate the property.
    pub count: u64,
    /// Shortest counterexample (actions and the Explorer path), if violated.
    pub trace: Option<Counterexample>,
}

#[derive(Clone, Debug)]
pub struct WitnessResult {
    pub name: &'static str,
    pub required: bool,
    /// Visited states that satisfy the witness.
    pub count: u64,
}

#[derive(Clone, Debug)]
pub struct Counterexample {
    pub actions: Vec<Action>,
    /// `Path::encode` form: init index, then action indices.
    pub encoded: String,
}

#[derive(Clone, Debug)]
pub struct CheckResult {
    pub name: String,
    pub complete: bool,
    pub unique_states: u64,
    pub total_states: u64,
    pub max_depth: u64,
    pub expected_states: Option<u64>,
    pub props: Vec<PropResult>,
    pub witnesses: Vec<WitnessResult>,
    pub elapsed: Duration,
}

impl CheckResult {
    pub fn states_ok(&self) -> bool {
        self.expected_states
            .map_or(true, |e| e == self.unique_states)
    }
    pub fn verdicts_ok(&self) -> bool {
        self.props.iter().all(|p| p.expected == p.observed)
    }
    pub fn witnesses_ok(&self) -> bool {
        self.witnesses.iter().all(|w| !w.required || w.count > 0)
    }
    pub fn ok(&self) -> bool {
        self.complete && self.states_ok() && self.verdicts_ok() && self.witnesses_ok()
    }
}

pub fn build_model(e: &Entry) -> Result<FuseModel, String> {
    FuseModel::new(e.config.clone()).map_err(|m| format!("check '{}': {m}", e.name))
}

/// Runs one check. `progress` prints to stderr for runs longer than 2 s.
pub fn run(e: &Entry, progress: bool) -> Result<CheckResult, String> {
    let model = Tallied::new(build_model(e)?);
    let start = Instant::now();
    // Exhaustive DFS, one thread: no timeout, no target (stateright-notes
    // G4), so a finished run is a full exploration.
    let checker = model.clone().checker().spawn_dfs();
    let mut last = Instant::now();
    while !checker.is_done() {
        std::thread::sleep(Duration::from_millis(50));
        if progress
            && start.elapsed() > Duration::from_secs(2)
            && last.elapsed() >= Duration::from_secs(5)
        {
            eprintln!(
                "  {}: {} unique states, {:.0}s",
                e.name,
                checker.unique_state_count(),
                start.elapsed().as_secs_f64()
            );
            last = Instant::now();
        }
    }
    let checker = checker.join();
    let elapsed = start.elapsed();
    let complete = checker.is_done();
    let unique = checker.unique_state_count() as u64;
    let total = checker.state_count() as u64;
    let depth = checker.max_depth() as u64;

    let mut props = Vec::new();
    for name in always_properties() {
        let idx = property_index::<FuseModel>(name).expect("property index");
        let count = model.count(idx);
        let observed = if count > 0 {
            Verdict::Violated
        } else {
            Verdict::Holds
        };
        props.push(PropResult {
            name,
            expected: e.expected(name),
            observed,
            count,
            trace: None,
        });
    }
    let mut witnesses = Vec::new();
    for name in witness_properties() {
        let idx = property_index::<FuseModel>(name).expect("witness index");
        witnesses.push(WitnessResult {
            name,
            required: e.witnesses.contains(&name),
            count: model.count(idx),
        });
    }
    // Shortest counterexamples (plain model: no tallying side effects).
    let plain = build_model(e)?;
    for p in props.iter_mut().filter(|p| p.observed == Verdict::Violated) {
        let cx = shortest_counterexample(&plain, p.name).ok_or_else(|| {
            format!(
                "check '{}': DFS saw {} violate, but BFS found no path (model not deterministic?)",
                e.name, p.name
            )
        })?;
        p.trace = Some(cx);
    }
    Ok(CheckResult {
        name: e.name.clone(),
        complete,
        unique_states: unique,
        total_states: total,
        max_depth: depth,
        expected_states: e.states,
        props,
        witnesses,
        elapsed,
    })
}

type Cond = fn(&FuseModel, &State) -> bool;

/// The condition of a property (it also tallies into the model's
/// counters, so callers use a model of their own).
pub fn condition(m: &FuseModel, prop: &str) -> Option<Cond> {
    m.properties()
        .into_iter()
        .find(|p| p.name == prop)
        .map(|p| p.condition)
}

/// Breadth-first search from the initial state to the nearest state that
/// violates `prop`: the counterexample is shortest and ends at its first
/// violating state (stateright-notes.md G2: Stateright's own BFS may
/// report a longer path).
pub fn shortest_counterexample(m: &FuseModel, prop: &str) -> Option<Counterexample> {
    let cond = condition(m, prop)?;
    let holds = |s: &State| cond(m, s);
    let init = m.init_states().into_iter().next()?;
    if !holds(&init) {
        return Some(Counterexample {
            actions: vec![],
            encoded: "0".into(),
        });
    }
    let mut seen: HashMap<State, usize> = HashMap::new();
    // node: (state, parent node, action index, action)
    let mut nodes: Vec<(State, usize, usize, Option<Action>)> = Vec::new();
    seen.insert(init.clone(), 0);
    nodes.push((init, usize::MAX, 0, None));
    let mut queue = VecDeque::from([0usize]);
    let mut acts = Vec::new();
    while let Some(i) = queue.pop_front() {
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
            let j = nodes.len();
            seen.insert(ns.clone(), j);
            let bad = !holds(&ns);
            nodes.push((ns, i, ai, Some(*a)));
            if bad {
                let mut path = Vec::new();
                let mut k = j;
                while nodes[k].1 != usize::MAX {
                    path.push((nodes[k].2, nodes[k].3.expect("action")));
                    k = nodes[k].1;
                }
                path.reverse();
                let mut enc = vec!["0".to_string()];
                enc.extend(path.iter().map(|(ai, _)| ai.to_string()));
                return Some(Counterexample {
                    actions: path.into_iter().map(|(_, a)| a).collect(),
                    encoded: enc.join("/"),
                });
            }
            queue.push_back(j);
        }
    }
    None
}

/// Replays an action list from the initial state; returns the states.
pub fn replay(m: &FuseModel, actions: &[Action]) -> Result<Vec<State>, String> {
    let mut s = m
        .init_states()
        .into_iter()
        .next()
        .ok_or("model has no initial state")?;
    let mut out = vec![s.clone()];
    for (i, a) in actions.iter().enumerate() {
        s = m.next_state(&s, *a).ok_or_else(|| {
            format!(
                "step {}: action {} is not enabled",
                i + 1,
                m.format_action(a)
            )
        })?;
        out.push(s.clone());
    }
    Ok(out)
}

pub fn property_description(name: &str) -> &'static str {
    PROPERTIES
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.description)
        .unwrap_or("")
}
