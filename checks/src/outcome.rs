//! One catalogue check's outcome: the exploration's tallies turned into
//! verdicts against the entry's expectations, witness and state pins, and
//! a shortest counterexample for every violated property. Names no model
//! type.

use crate::catalogue::{Entry, Verdict};
use crate::runner::{Counterexample, Engine, RunOptions};
use crate::search::{Limits, Stop};
use stateright::Expectation;
use std::time::Duration;

/// How a command runs its checks: the engine, bounds, and whether to
/// override the catalogue's symmetry choice.
#[derive(Clone, Copy, Debug, Default)]
pub struct Settings {
    pub engine: Engine,
    pub limits: Limits,
    /// `Some(on)`: every check explores with (or without) the model's
    /// symmetry reduction, whatever its catalogue entry says; the pinned
    /// counts of entries explored the other way are then not compared.
    pub symmetry: Option<bool>,
    /// Threads of the fast engine's search (0 or 1: one; see
    /// `search::Options::threads`).
    pub threads: usize,
    /// `--bitstate N`: a bitstate search of 2^N bits (never a proof).
    pub bitstate: Option<u8>,
}

#[derive(Clone, Debug)]
pub struct PropResult {
    pub name: &'static str,
    pub description: &'static str,
    pub expected: Verdict,
    /// The expected violation is the kernel's intended behaviour: the
    /// property is stricter than the kernel's contract (the catalogue's
    /// `"intended"`).
    pub intended: bool,
    /// The contract property this one is stricter than, if it is.
    pub stricter_than: Option<&'static str>,
    /// `Unknown` when the run stopped at a bound before any violating
    /// state: no proof either way.
    pub observed: Verdict,
    /// Visited states that violate the property.
    pub count: u64,
    /// Shortest counterexample, if violated.
    pub trace: Option<Counterexample>,
    /// The counterexample search of a violation stopped at this bound
    /// (no trace).
    pub search_stopped: Option<Stop>,
    /// The catalogue's pinned number of violating states (0: none).
    pub pinned: u64,
    /// The pin applies to this run (complete, and explored with the
    /// catalogue's symmetry choice).
    pub compare: bool,
}

impl PropResult {
    /// The violating-state count against its pin.
    pub fn count_status(&self) -> Result<(), String> {
        if self.compare && self.count != self.pinned {
            Err(format!("MISMATCH pinned {} violating states", self.pinned))
        } else {
            Ok(())
        }
    }
    /// A violation without its counterexample (its search was cut).
    pub fn trace_missing(&self) -> bool {
        self.observed == Verdict::Violated && self.trace.is_none()
    }
}

#[derive(Clone, Debug)]
pub struct WitnessResult {
    pub name: &'static str,
    /// The catalogue's pinned count (`None`: listed without a count, or not
    /// listed).
    pub pinned: Option<u64>,
    /// Listed in the catalogue entry (must be reached).
    pub listed: bool,
    /// The pinned count applies to this run (not when the run's symmetry
    /// differs from the catalogue's).
    pub compare: bool,
    /// Visited states that satisfy the witness.
    pub count: u64,
}

impl WitnessResult {
    /// A listed witness must be reached with its pinned count; an unlisted
    /// one must not be reached when the entry pins its witnesses.
    pub fn status(&self, pinned_entry: bool) -> Result<(), String> {
        match (self.listed, self.pinned) {
            (true, _) if self.count == 0 => Err("MISMATCH required".into()),
            (true, Some(p)) if self.compare && p != self.count => {
                Err(format!("MISMATCH pinned {p}"))
            }
            (false, _) if pinned_entry && self.count > 0 => Err("MISMATCH not pinned".into()),
            _ => Ok(()),
        }
    }
}

#[derive(Clone, Debug)]
pub struct CheckResult {
    pub name: String,
    pub model: &'static str,
    pub model_version: &'static str,
    pub complete: bool,
    /// Why an incomplete exploration stopped.
    pub stopped: Option<Stop>,
    /// Explored with the model's symmetry reduction.
    pub symmetry: bool,
    /// The catalogue's pins apply to this run's counts (its symmetry is
    /// the catalogue's).
    pub pins_apply: bool,
    pub engine: Engine,
    pub unique_states: u64,
    pub total_states: u64,
    pub max_depth: u64,
    /// No `max_depth`: the run was on several threads (its order varies).
    pub depth_unknown: bool,
    pub expected_states: Option<u64>,
    pub props: Vec<PropResult>,
    pub witnesses: Vec<WitnessResult>,
    /// The entry pins its witness counts (a table, not a list).
    pub witnesses_pinned: bool,
    pub elapsed: Duration,
    /// Bytes of the visited-state table (0: not measured).
    pub table_bytes: u64,
    /// Op labels the run dropped beyond its catalogue entry's own `drop`
    /// (`check --drop`): a what-if run whose pins are not compared and
    /// whose verdicts are only compared with the catalogue's, never taken
    /// for them. (A catalogue entry's own drops are its configuration:
    /// pinned and compared as any other.)
    pub dropped: Vec<String>,
}

impl CheckResult {
    pub fn states_ok(&self) -> bool {
        match self.expected_states {
            Some(x) => !self.pins_apply || x == self.unique_states,
            None => false,
        }
    }
    pub fn verdicts_ok(&self) -> bool {
        self.props.iter().all(|p| p.expected == p.observed)
    }
    /// Every violating-state count is as pinned.
    pub fn violations_ok(&self) -> bool {
        self.props.iter().all(|p| p.count_status().is_ok())
    }
    pub fn witnesses_ok(&self) -> bool {
        self.witnesses_pinned
            && self
                .witnesses
                .iter()
                .all(|w| w.status(self.witnesses_pinned).is_ok())
    }
    /// Every verdict is proven: the exploration is complete and every
    /// violation has its counterexample.
    pub fn proven(&self) -> bool {
        self.complete && self.traces_ok()
    }
    /// Every violation has its counterexample.
    pub fn traces_ok(&self) -> bool {
        !self.props.iter().any(PropResult::trace_missing)
    }
    pub fn ok(&self) -> bool {
        if !self.dropped.is_empty() {
            // a dropped run has no pins of its own
            return self.complete && self.traces_ok() && self.verdicts_ok();
        }
        self.complete
            && self.traces_ok()
            && self.states_ok()
            && self.verdicts_ok()
            && self.violations_ok()
            && self.witnesses_ok()
    }
}

/// Can `e` run under `set`? (The symmetry it asks for exists and the
/// engine supports it.)
pub fn validate(e: &Entry, set: &Settings) -> Result<(), String> {
    let symmetry = set.symmetry.unwrap_or(e.symmetry);
    if symmetry && !e.check.has_symmetry() {
        return Err(format!(
            "check '{}': model {} defines no symmetry reduction",
            e.name,
            e.check.model()
        ));
    }
    if set.bitstate.is_some() && (set.threads > 1 || set.engine == Engine::Stateright) {
        return Err("--bitstate: the bitstate search is the fast engine's, on one thread".into());
    }
    if set.threads > 1 && set.engine == Engine::Stateright {
        return Err("--threads: the stateright engine runs on one thread (--engine fast)".into());
    }
    if symmetry && set.engine == Engine::Stateright {
        return Err(format!(
            "check '{}': symmetry reduction needs the fast engine (--no-symmetry with --engine stateright)",
            e.name
        ));
    }
    Ok(())
}

/// Runs one catalogue entry: exploration, verdicts against expectations,
/// shortest counterexamples of what is violated.
pub fn run(e: &Entry, set: &Settings, progress: bool) -> Result<CheckResult, String> {
    validate(e, set)?;
    let symmetry = set.symmetry.unwrap_or(e.symmetry);
    // drops beyond the catalogue entry's own `drop = [...]` (`check
    // --drop`): the entry's pins are not of these programs
    let own: Vec<&str> = e
        .settings
        .get("drop")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
        .unwrap_or_default();
    let dropped: Vec<String> = e
        .check
        .drops()
        .into_iter()
        .filter(|d| !own.contains(&d.as_str()))
        .collect();
    let pins_apply = symmetry == e.symmetry && dropped.is_empty();
    let opt = RunOptions {
        engine: set.engine,
        limits: set.limits,
        symmetry,
        expected: e.states.filter(|_| pins_apply),
        threads: set.threads,
        bitstate: set.bitstate,
    };
    let x = e.check.explore(&e.name, &opt, progress);
    let defs = e.check.property_defs();
    let mut props = Vec::new();
    let mut witnesses = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        let count = x.hits[i];
        match d.expectation {
            Expectation::Sometimes => {
                let (listed, pinned) = e.witness_pin(d.name);
                witnesses.push(WitnessResult {
                    name: d.name,
                    pinned,
                    listed,
                    compare: pins_apply,
                    count,
                });
            }
            _ => props.push(PropResult {
                name: d.name,
                description: d.description,
                expected: e.expected(d.name),
                intended: e.is_intended(d.name),
                stricter_than: d.stricter.map(|x| x.contract),
                observed: if count > 0 {
                    Verdict::Violated
                } else if x.complete {
                    Verdict::Holds
                } else {
                    Verdict::Unknown
                },
                count,
                trace: None,
                search_stopped: None,
                pinned: e.violation_pin(d.name),
                compare: pins_apply && x.complete,
            }),
        }
    }
    for p in props.iter_mut().filter(|p| p.observed == Verdict::Violated) {
        // The counterexample search has the run's bounds; when it gives
        // up, the violation stands without a trace and the check is not
        // as expected (search_stopped says which bound).
        match e.check.shortest_within(p.name, &set.limits)? {
            Ok(Some(cx)) => p.trace = Some(cx),
            Ok(None) => {
                return Err(format!(
                    "check '{}': the exploration saw {} violated, but the breadth-first search found no path (model not deterministic?)",
                    e.name, p.name
                ))
            }
            Err(stop) => p.search_stopped = Some(stop),
        }
    }
    Ok(CheckResult {
        name: e.name.clone(),
        model: e.check.model(),
        model_version: e.check.model_version(),
        complete: x.complete,
        stopped: x.stopped,
        symmetry,
        pins_apply,
        engine: set.engine,
        unique_states: x.unique_states,
        total_states: x.total_states,
        max_depth: x.max_depth,
        depth_unknown: x.depth_unknown,
        expected_states: e.states,
        props,
        witnesses,
        witnesses_pinned: e.witnesses_pinned(),
        elapsed: x.elapsed,
        table_bytes: x.table_bytes,
        dropped,
    })
}
