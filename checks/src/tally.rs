//! Stateright's own checker as the property tally: a model wrapper whose
//! one property evaluates every condition of the wrapped model on each
//! visited state and counts violations and witnesses. It always holds, so
//! the DFS explores everything (see `spec::EXPLORE_ALL`), and Stateright
//! keeps one discovery slot instead of one per property.

use stateright::{Model, Property};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use wbspec_models::spec::{Spec, MAX_PROPERTIES};

#[derive(Clone)]
pub struct Tallied<M: Spec> {
    pub inner: M,
    /// Per property of `M`, the visited states that hit it (violate an
    /// always-property, reach a witness).
    pub tally: Arc<Vec<AtomicU64>>,
}

impl<M: Spec> Tallied<M> {
    pub fn new(inner: M) -> Self {
        let n = M::property_defs().len();
        assert!(n <= MAX_PROPERTIES);
        Tallied {
            inner,
            tally: Arc::new((0..n).map(|_| AtomicU64::new(0)).collect()),
        }
    }

    pub fn count(&self, i: usize) -> u64 {
        self.tally[i].load(Ordering::Relaxed)
    }
}

fn tally_all<M: Spec>(m: &Tallied<M>, s: &M::State) -> bool {
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
