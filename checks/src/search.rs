//! The exhaustive search, generic over `Spec`: a depth-first exploration
//! that tallies every property on every reachable state.
//!
//! It visits states in exactly the order of Stateright 0.31's DFS checker
//! with one thread (checker/dfs.rs: pop the newest pending state, evaluate
//! the properties, push its successors that are new, in action order), so
//! unique and total state counts, hits and `max_depth` are the same as
//! the reference's (runner::explore_stateright, compared on the whole
//! catalogue by checks/tests/engines.rs). It differs in what a state
//! costs: each step is executed once (`Spec::successors`), the properties
//! are evaluated once per state with the successors at hand
//! (`Spec::hits_given`), fingerprints hash the state's bytes in one pass
//! (fingerprint.rs) into a flat pre-sized table, and no path is kept per
//! pending state.
//!
//! Its result, [`Exploration`], lives here; the reference engine
//! (runner::explore_stateright) fills the same struct, so runner.rs uses
//! this module and not the other way round.

use crate::fingerprint::{Fingerprinter, FpSet};
use std::time::{Duration, Instant};
use wbspec_models::spec::Spec;

/// Bounds of one exploration; a search that reaches one stops and is
/// incomplete (not a proof).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    /// Stop after this many unique states.
    pub max_states: Option<u64>,
    /// Stop after this much time.
    pub max_time: Option<Duration>,
}

/// Largest `--max-seconds` (about 31 years: anything longer is a typo).
pub const MAX_SECONDS: f64 = 1e9;

impl Limits {
    /// The bounds given by `--max-states` and `--max-seconds`, range
    /// checked: a positive count, a finite positive number of seconds
    /// (not NaN, not infinite) of at most `MAX_SECONDS`.
    pub fn from_flags(max_states: Option<u64>, max_seconds: Option<f64>) -> Result<Limits, String> {
        let max_time = match max_seconds {
            None => None,
            Some(s) if s.is_finite() && s > 0.0 && s <= MAX_SECONDS => {
                Some(Duration::from_secs_f64(s))
            }
            Some(s) => {
                return Err(format!(
                "--max-seconds {s}: give a number of seconds above 0 and at most {MAX_SECONDS:e}"
            ))
            }
        };
        if max_states == Some(0) {
            return Err("--max-states 0: give a positive count".into());
        }
        Ok(Limits {
            max_states,
            max_time,
        })
    }
}

/// How to search.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    pub limits: Limits,
    /// Explore one state per class of the model's symmetry
    /// (`Spec::representative`).
    pub symmetry: bool,
    /// Expected unique states (a pinned count): sizes the table.
    pub expected: Option<u64>,
    /// Threads (0 or 1: this module's DFS; more: parallel.rs).
    pub threads: usize,
    /// `--bitstate N`: store visited states as bits in an array of 2^N
    /// (bitstate.rs); the run is then never a proof.
    pub bitstate: Option<u8>,
}

/// The visited set of the DFS: fingerprints (exhaustive) or bits.
pub trait Visited {
    /// Adds `f` (nonzero); false when it was (taken as) there already.
    fn insert(&mut self, f: u64) -> bool;
    fn prefetch(&self, f: u64);
    /// States stored.
    fn stored(&self) -> usize;
    fn bytes(&self) -> usize;
}

impl Visited for FpSet {
    #[inline(always)]
    fn insert(&mut self, f: u64) -> bool {
        FpSet::insert(self, f)
    }
    #[inline(always)]
    fn prefetch(&self, f: u64) {
        FpSet::prefetch(self, f)
    }
    fn stored(&self) -> usize {
        FpSet::len(self)
    }
    fn bytes(&self) -> usize {
        FpSet::bytes(self)
    }
}

/// Why a search stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    MaxStates(u64),
    MaxTime(Duration),
    /// A bitstate search (`--bitstate log2`) that stored `stored` states:
    /// it ran to its end, but states may have been omitted.
    Bitstate {
        log2: u8,
        stored: u64,
    },
}

impl Stop {
    /// `--max-states 1000` reached, for the verdict lines.
    pub fn describe(&self) -> String {
        match self {
            Stop::MaxStates(n) => format!("stopped at --max-states {n}"),
            Stop::MaxTime(d) => format!("stopped at --max-seconds {}", d.as_secs_f64()),
            Stop::Bitstate { log2, stored } => crate::bitstate::describe(*log2, *stored),
        }
    }
    /// The command-line flag of the bound.
    pub fn flag(&self) -> &'static str {
        match self {
            Stop::MaxStates(_) => "--max-states",
            Stop::MaxTime(_) => "--max-seconds",
            Stop::Bitstate { .. } => "--bitstate",
        }
    }
    /// The bound's value as given on the command line.
    pub fn limit(&self) -> serde_json::Value {
        match self {
            Stop::MaxStates(n) => (*n).into(),
            Stop::MaxTime(d) => d.as_secs_f64().into(),
            Stop::Bitstate { log2, .. } => (*log2).into(),
        }
    }
    /// `{"bound": "--max-seconds", "limit": 0.5}` for the JSON report.
    pub fn json(&self) -> serde_json::Value {
        match self {
            Stop::Bitstate { log2, stored } => serde_json::json!({
                "bound": self.flag(), "limit": self.limit(), "stored": stored,
                "hashes": crate::bitstate::HASHES,
                "expected_omissions":
                    crate::bitstate::expected_omissions(*log2, crate::bitstate::HASHES, *stored),
            }),
            _ => serde_json::json!({"bound": self.flag(), "limit": self.limit()}),
        }
    }
    /// The inverse of `json` (`None` for anything else).
    pub fn from_json(v: &serde_json::Value) -> Option<Stop> {
        let limit = v.get("limit")?;
        match v.get("bound")?.as_str()? {
            "--max-states" => limit.as_u64().map(Stop::MaxStates),
            "--max-seconds" => limit
                .as_f64()
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .map(Stop::MaxTime),
            "--bitstate" => Some(Stop::Bitstate {
                log2: u8::try_from(limit.as_u64()?).ok()?,
                stored: v.get("stored")?.as_u64()?,
            }),
            _ => None,
        }
    }
}

/// What an exhaustive exploration saw.
#[derive(Clone, Debug)]
pub struct Exploration {
    pub complete: bool,
    /// Why an incomplete exploration stopped.
    pub stopped: Option<Stop>,
    pub unique_states: u64,
    /// States generated, duplicates included (transitions + initial
    /// states).
    pub total_states: u64,
    /// The deepest point of the DFS stack (Stateright's `max_depth`); 0
    /// with `depth_unknown`.
    pub max_depth: u64,
    /// The search ran on several threads (parallel.rs): its visiting
    /// order, and so a DFS depth, varies from run to run and is not
    /// reported.
    pub depth_unknown: bool,
    /// Per property of the model, the visited states that hit it.
    pub hits: Vec<u64>,
    pub elapsed: Duration,
    /// Bytes of the visited-state table (0 when the engine does not say).
    pub table_bytes: u64,
}

/// How often (in expanded states) the search looks at the clock.
const CLOCK_EVERY: u64 = 4096;

/// Exhaustive DFS of `m` under `opt`. Progress goes to stderr every 5 s
/// after the first 2 s when `progress` is set.
pub fn explore<M: Spec>(m: &M, opt: &Options, label: &str, progress: bool) -> Exploration {
    if let Some(log2) = opt.bitstate {
        let mut x = dfs(m, opt, label, progress, crate::bitstate::BitSet::new(log2));
        // ran to its end or not, a bitstate search is no proof
        x.stopped = x.stopped.or(Some(Stop::Bitstate {
            log2,
            stored: x.unique_states,
        }));
        x.complete = false;
        return x;
    }
    if opt.threads > 1 {
        return crate::parallel::explore(m, opt, label, progress);
    }
    let expected = opt
        .expected
        .unwrap_or(1 << 16)
        .min(opt.limits.max_states.unwrap_or(u64::MAX))
        .min(1 << 32) as usize;
    dfs(m, opt, label, progress, FpSet::with_expected(expected))
}

/// The DFS with visited set `seen`.
fn dfs<M: Spec, V: Visited>(
    m: &M,
    opt: &Options,
    label: &str,
    progress: bool,
    mut seen: V,
) -> Exploration {
    let start = Instant::now();
    let nprops = M::property_defs().len();
    let mut hits = vec![0u64; nprops];
    let mut fpr = Fingerprinter::new();
    let mut key = |s: &M::State| {
        if opt.symmetry {
            fpr.of(m, &m.representative(s))
        } else {
            fpr.of(m, s)
        }
    };
    // pending: (state, depth), newest last
    let mut pending: Vec<(M::State, u32)> = Vec::new();
    let mut total: u64 = 0;
    for s in m.init_states() {
        if !m.within_boundary(&s) {
            continue;
        }
        total += 1;
        if seen.insert(key(&s)) {
            pending.push((s, 1));
        }
    }
    let mut max_depth: u32 = 0;
    let mut succ: Vec<(M::Action, M::State)> = Vec::new();
    let mut fps: Vec<u64> = Vec::new();
    let mut expanded: u64 = 0;
    let mut stop = None;
    let mut last = start;
    // The newest pending state is expanded where it lies (no copy) and
    // dropped from the stack before its new successors are pushed.
    while let Some((s, depth)) = pending.last() {
        let depth = *depth;
        max_depth = max_depth.max(depth);
        expanded += 1;
        if expanded.is_multiple_of(CLOCK_EVERY) {
            if let Some(t) = opt.limits.max_time {
                if start.elapsed() >= t {
                    stop = Some(Stop::MaxTime(t));
                    break;
                }
            }
            if progress
                && start.elapsed() > Duration::from_secs(2)
                && last.elapsed() >= Duration::from_secs(5)
            {
                eprintln!(
                    "  {label}: {} unique states, {:.0}s",
                    seen.stored(),
                    start.elapsed().as_secs_f64()
                );
                last = Instant::now();
            }
        }
        succ.clear();
        m.successors(s, &mut succ);
        succ.retain(|(_, ns)| m.within_boundary(ns));
        total += succ.len() as u64;
        // fingerprint the successors and ask for their table slots first:
        // the property evaluation below hides the memory latency
        fps.clear();
        for (_, ns) in &succ {
            let f = key(ns);
            seen.prefetch(f);
            fps.push(f);
        }
        let mut h = m.hits_given(s, &succ);
        while h != 0 {
            let i = h.trailing_zeros() as usize;
            hits[i] += 1;
            h &= h - 1;
        }
        pending.pop();
        // only new successors are copied (most are duplicates)
        for (i, &f) in fps.iter().enumerate() {
            if seen.insert(f) {
                pending.push((succ[i].1.clone(), depth + 1));
            }
        }
        if let Some(n) = opt.limits.max_states {
            if seen.stored() as u64 >= n && !pending.is_empty() {
                stop = Some(Stop::MaxStates(n));
                break;
            }
        }
    }
    Exploration {
        complete: stop.is_none(),
        stopped: stop,
        unique_states: seen.stored() as u64,
        total_states: total,
        max_depth: max_depth as u64,
        depth_unknown: false,
        hits,
        elapsed: start.elapsed(),
        table_bytes: Visited::bytes(&seen) as u64,
    }
}
