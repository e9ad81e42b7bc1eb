//! `State::forget_property_ghosts` keeps behaviours: on every reachable
//! state of several workloads, the successors of a state and of its
//! forgetting are the same once forgotten (trace conformance relies on
//! it, harness/src/conform/search.rs).

use super::config::*;
use super::model::*;
use super::state::*;
use super::tests::{cfg, model, write_through_t2};
use super::Action;
use std::collections::{HashSet, VecDeque};

fn forgotten(mut s: State) -> State {
    s.forget_property_ghosts();
    s
}

fn successors(m: &FuseModel, s: &State) -> HashSet<(Action, State)> {
    let mut acts = vec![];
    m.enabled(s, &mut acts);
    acts.into_iter()
        .filter_map(|a| m.step(s, a).map(|n| (a, forgotten(n))))
        .collect()
}

/// Explores `c` to the end and checks every state; returns how many.
fn commutes(c: Config) -> usize {
    let m = model(c);
    let s0 = m.initial();
    let mut seen = HashSet::from([s0]);
    let mut q = VecDeque::from([s0]);
    let mut changed = 0;
    while let Some(s) = q.pop_front() {
        let f = forgotten(s);
        changed += usize::from(f != s);
        assert_eq!(
            successors(&m, &s),
            successors(&m, &f),
            "forgetting the ghosts of\n{s:?}\nchanged its behaviours"
        );
        let mut acts = vec![];
        m.enabled(&s, &mut acts);
        for a in acts {
            if let Some(n) = m.step(&s, a) {
                if seen.insert(n) {
                    q.push_back(n);
                }
            }
        }
    }
    // (the check is not vacuous: the ghosts were set somewhere)
    assert!(changed > 0, "no state had a ghost to forget");
    seen.len()
}

#[test]
fn forgetting_property_ghosts_keeps_behaviours() {
    let mut n = 0;
    // writeback, truncation, sync and buffered reads, state T2
    let mut c = cfg(2, &["write 0+2", "truncate 1", "fsync", "read 0+2"]);
    c.kernel = Kernel::T2;
    c.variant = Variant::base(Kernel::T2);
    n += commutes(c);
    // stores through a mapping, a direct read and write, a close (T)
    n += commutes(cfg(
        2,
        &["mmap 0", "dio-read 0+1", "dio-write 1+1", "close release"],
    ));
    // write-through (no writeback_cache), a direct write, a fault
    let mut c = cfg(2, &["write 0+1", "odirect-write 0+1", "fault 1"]);
    write_through_t2(&mut c);
    c.cached = 0;
    c.dirty = 0;
    n += commutes(c);
    // state L (temp pages), an open with O_TRUNC, background writeback
    let mut c = cfg(2, &["write 1+1", "open trunc", "wb none", "read 0+1"]);
    c.kernel = Kernel::L;
    c.variant = Variant::base(Kernel::L);
    c.atomic_o_trunc = true;
    n += commutes(c);
    // the server fails any request it may (errors reported to fsync)
    let mut c = cfg(2, &["write 0+2", "fsync", "close"]);
    c.errors = u16::MAX;
    n += commutes(c);
    assert!(n > 10_000, "{n} states");
}
