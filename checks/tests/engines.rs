//! The fast exploration engine against Stateright's own checker (the
//! reference), symmetry reduction against the full exploration, and the
//! models' fast paths (successors, hits_given, encode, representative)
//! against their definitions. docs/performance.md cites these tests.

mod common;
use common::*;
use std::collections::{HashMap, HashSet};
use wbspec::catalogue::{self, Entry};
use wbspec::fingerprint::{Fingerprinter, FpSet};
use wbspec::runner::{Engine, RunOptions};
use wbspec::search::Exploration;
use wbspec_models::common::encode::{Enc, ENCODE_MAX};
use wbspec_models::registry::{self, ModelVisitor};
use wbspec_models::spec::{successors_from_actions, Spec};

fn explore(e: &Entry, engine: Engine, symmetry: bool) -> Exploration {
    let x = e.check.explore(
        &e.name,
        &RunOptions {
            engine,
            symmetry,
            expected: e.states,
            ..Default::default()
        },
        false,
    );
    assert!(x.complete, "{}: incomplete", e.name);
    x
}

/// Same states, transitions, depth and per-property hits as Stateright's
/// DFS, on every check of the catalogue: the fast engine visits states in
/// the reference's order.
#[test]
fn the_reference_checker_agrees_on_the_whole_catalogue() {
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    for e in &cat.entries {
        let fast = explore(e, Engine::Fast, false);
        let reference = explore(e, Engine::Stateright, false);
        assert_eq!(
            (
                fast.unique_states,
                fast.total_states,
                fast.max_depth,
                &fast.hits
            ),
            (
                reference.unique_states,
                reference.total_states,
                reference.max_depth,
                &reference.hits
            ),
            "{}: fast engine vs Stateright's checker",
            e.name
        );
    }
}

/// Symmetry reduction keeps every verdict and the set of reached
/// witnesses of every check, and never adds states.
#[test]
fn symmetry_keeps_every_verdict_on_the_whole_catalogue() {
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let mut reduced = 0;
    for e in cat.entries.iter().filter(|e| e.check.has_symmetry()) {
        let full = explore(e, Engine::Fast, false);
        let sym = explore(e, Engine::Fast, true);
        let reached = |x: &Exploration| x.hits.iter().map(|h| *h > 0).collect::<Vec<_>>();
        assert_eq!(
            reached(&full),
            reached(&sym),
            "{}: verdicts or reached witnesses differ under symmetry",
            e.name
        );
        assert!(sym.unique_states <= full.unique_states, "{}", e.name);
        if sym.unique_states < full.unique_states {
            reduced += 1;
        }
    }
    assert!(reduced >= 10, "symmetry reduced only {reduced} checks");
}

/// What one model's fast paths did on one check.
#[derive(Default, Debug)]
struct Checked {
    states: usize,
    symmetric: bool,
}

/// Over every reachable state of `m` (every catalogue check up to 1 M
/// states: all but the largest): `successors` equals
/// `actions` + `next_state`, `hits_given` equals `hits`, equal encodings
/// are equal states, and `representative` is idempotent, keeps every
/// property and commutes with the successor relation (the successors of
/// a state and of its representative have the same representatives), so
/// exploring representatives is a bisimulation of the full search.
///
/// States are told apart by fingerprint (as the checker does); with
/// `images`, equal byte images are also checked to be equal states.
fn fast_paths_agree<M: Spec>(m: &M, name: &str, images_too: bool) -> Checked {
    let mut fpr = Fingerprinter::new();
    let mut seen = FpSet::with_expected(1 << 16);
    let mut images: HashMap<Vec<u8>, M::State> = HashMap::new();
    let mut queue: Vec<M::State> = Vec::new();
    for s in m.init_states() {
        if seen.insert(fpr.of(m, &s)) {
            queue.push(s);
        }
    }
    let mut buf = Box::new([0u8; ENCODE_MAX]);
    let reps = |v: &[(M::Action, M::State)]| -> HashSet<M::State> {
        v.iter().map(|(_, x)| m.representative(x)).collect()
    };
    while let Some(s) = queue.pop() {
        let mut succ = Vec::new();
        m.successors(&s, &mut succ);
        let mut def = Vec::new();
        successors_from_actions(m, &s, &mut def);
        assert!(
            succ == def,
            "{name}: successors differ from actions + next_state at {s:?}"
        );
        assert_eq!(
            m.hits_given(&s, &succ),
            m.hits(&s),
            "{name}: hits_given at {s:?}"
        );
        let mut e = Enc::new(&mut buf);
        if m.encode(&s, &mut e) && images_too {
            let n = e.len();
            let img = buf[..n].to_vec();
            if let Some(o) = images.get(&img) {
                assert!(*o == s, "{name}: two states encode alike: {o:?} and {s:?}");
            } else {
                images.insert(img, s.clone());
            }
        }
        if M::has_symmetry() {
            let r = m.representative(&s);
            assert!(
                m.representative(&r) == r,
                "{name}: representative not idempotent"
            );
            assert_eq!(
                m.hits(&r),
                m.hits(&s),
                "{name}: symmetry changes a property at {s:?}"
            );
            let mut rs = Vec::new();
            m.successors(&r, &mut rs);
            assert!(
                reps(&rs) == reps(&succ),
                "{name}: successors do not commute with the symmetry at {s:?}"
            );
        }
        for (_, ns) in succ {
            if seen.insert(fpr.of(m, &ns)) {
                queue.push(ns);
            }
        }
    }
    Checked {
        states: seen.len(),
        symmetric: M::has_symmetry(),
    }
}

#[test]
fn model_fast_paths_agree_with_their_definitions() {
    struct V<'a>(&'a Entry);
    impl ModelVisitor for V<'_> {
        type Out = Checked;
        fn visit<M: Spec>(self) -> Checked {
            let cfg: M::Config = serde_json::from_value(self.0.check.config_json()).unwrap();
            let images = self.0.states.is_some_and(|n| n <= 300_000);
            fast_paths_agree(&M::build(&cfg).unwrap(), &self.0.name, images)
        }
    }
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let mut checks = 0;
    let mut states = 0;
    for e in cat
        .entries
        .iter()
        .filter(|e| e.states.is_some_and(|n| n <= 1_000_000))
    {
        let c = registry::with_model(&e.model, V(e)).unwrap();
        assert_eq!(Some(c.states as u64), e.states, "{}: pinned count", e.name);
        assert!(c.symmetric || !e.check.has_symmetry());
        checks += 1;
        states += c.states;
    }
    assert!(
        checks >= 90 && states >= 1_000_000,
        "{checks} checks, {states} states"
    );
}

/// The FUSE model's symmetry argument for state L (docs/performance.md):
/// in every reachable state of every L check (but the mutant that ignores
/// the rb-tree), the in-flight writeback requests covering a page (queued,
/// on /dev/fuse, in a daemon worker) all start at the same page, so the
/// rb-tree lookup finds the same request in any worker order.
#[test]
fn state_l_keeps_one_writeback_request_per_page() {
    use wbspec_models::fuse::state::{Req, Worker};
    use wbspec_models::fuse::FuseModel;
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let mut checked = 0;
    for e in cat
        .entries
        .iter()
        .filter(|e| e.model == "fuse" && e.check.kernel() == "L")
    {
        let cfg: <FuseModel as Spec>::Config =
            serde_json::from_value(e.check.config_json()).unwrap();
        if !cfg.variant.temp_pages || cfg.variant.mut_l_no_secondary {
            continue;
        }
        let m = FuseModel::build(&cfg).unwrap();
        let mut seen = HashSet::new();
        let mut queue = vec![m.initial()];
        seen.insert(queue[0]);
        while let Some(s) = queue.pop() {
            for p in 0..cfg.pages as usize {
                let covers = |f: u8, n: u8| (f as usize..(f + n) as usize).contains(&p);
                let mut firsts: Vec<u8> = Vec::new();
                firsts.extend(
                    s.queued
                        .iter()
                        .filter(|w| covers(w.first, w.n))
                        .map(|w| w.first),
                );
                for r in s.fuse_q.iter() {
                    if let Req::CacheWrite { first, n, .. } = *r {
                        if covers(first, n) {
                            firsts.push(first);
                        }
                    }
                }
                for w in s.workers.iter() {
                    match *w {
                        Worker::Busy {
                            req: Req::CacheWrite { first, n, .. },
                            ..
                        }
                        | Worker::Ending { first, n }
                            if covers(first, n) =>
                        {
                            firsts.push(first)
                        }
                        _ => {}
                    }
                }
                firsts.sort_unstable();
                firsts.dedup();
                assert!(
                    firsts.len() <= 1,
                    "{}: page {p} in {firsts:?}: {s:?}",
                    e.name
                );
            }
            let mut succ = Vec::new();
            m.successors(&s, &mut succ);
            for (_, ns) in succ {
                if seen.insert(ns) {
                    queue.push(ns);
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} L checks");
}
