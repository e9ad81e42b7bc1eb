//! Stateright's own checker as the property tally: a model wrapper whose
//! one property evaluates every condition of the wrapped model on each
//! visited state and counts violations and witnesses. It always holds, so
//! the DFS explores everything (see `spec::EXPLORE_ALL`), and Stateright
//! keeps one discovery slot instead of one per property.
//!
//! It also carries the run's time bound: Stateright's DFS checks its own
//! `timeout` only when a thread runs out of work, which one DFS thread
//! never does. Past the deadline the tally property fails instead; a
//! discovery of the only property ends Stateright's search at once, and
//! `expired` tells the runner the search was cut (not a proof).

use stateright::{Model, Property};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use wbspec_models::spec::{Spec, MAX_PROPERTIES};

#[derive(Clone)]
pub struct Tallied<M: Spec> {
    pub inner: M,
    /// Per property of `M`, the visited states that hit it (violate an
    /// always-property, reach a witness).
    pub tally: Arc<Vec<AtomicU64>>,
    /// Stop the search at this instant (`--max-seconds`).
    pub deadline: Option<Instant>,
    /// The deadline passed: the search stopped early.
    pub expired: Arc<AtomicBool>,
    /// States tallied, to look at the clock every `CLOCK_EVERY`.
    calls: Arc<AtomicU64>,
}

/// How often (in tallied states) the wrapper looks at the clock.
const CLOCK_EVERY: u64 = 1024;

impl<M: Spec> Tallied<M> {
    pub fn new(inner: M, deadline: Option<Instant>) -> Self {
        let n = M::property_defs().len();
        assert!(n <= MAX_PROPERTIES);
        Tallied {
            inner,
            tally: Arc::new((0..n).map(|_| AtomicU64::new(0)).collect()),
            deadline,
            expired: Arc::new(AtomicBool::new(false)),
            calls: Arc::new(AtomicU64::new(0)),
        }
    }

    pub fn count(&self, i: usize) -> u64 {
        self.tally[i].load(Ordering::Relaxed)
    }

    pub fn expired(&self) -> bool {
        self.expired.load(Ordering::Relaxed)
    }
}

fn tally_all<M: Spec>(m: &Tallied<M>, s: &M::State) -> bool {
    if let Some(d) = m.deadline {
        let n = m.calls.fetch_add(1, Ordering::Relaxed);
        if m.expired() || (n.is_multiple_of(CLOCK_EVERY) && Instant::now() >= d) {
            m.expired.store(true, Ordering::Relaxed);
            return false;
        }
    }
    let mut h = m.inner.hits(s);
    while h != 0 {
        let i = h.trailing_zeros() as usize;
        m.tally[i].fetch_add(1, Ordering::Relaxed);
        h &= h - 1;
    }
    true
}

impl<M: Spec> Model for Tallied<M> {
    type State = M::State;
    type Action = M::Action;

    fn init_states(&self) -> Vec<M::State> {
        self.inner.init_states()
    }

    fn actions(&self, s: &M::State, out: &mut Vec<M::Action>) {
        self.inner.actions(s, out)
    }

    fn next_state(&self, s: &M::State, a: M::Action) -> Option<M::State> {
        self.inner.next_state(s, a)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::<Self>::always("_tally", tally_all::<M>)]
    }
}
