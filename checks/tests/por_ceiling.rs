//! How far a partial-order reduction could shrink the largest checks
//! (issue 20, item 2), measured with perfect dependency information, and
//! tested because docs/performance.md quotes the numbers ("A sound
//! reduction: the measured ceiling").
//!
//! A persistent set (Godefroid, LNCS 1032, 1996; the ample sets of
//! Clarke, Grumberg and Peled, *Model Checking*, ch. 10) made of one
//! actor's enabled steps T is taken in state s when, in every state u
//! that the other actors reach from s without T's actor moving:
//! - the actor's enabled steps are still exactly T (nothing outside T
//!   that depends on T runs first: C1);
//! - every step x of T commutes with every step y another actor has
//!   enabled in u, neither disabling the other (conditional
//!   independence, evaluated in u itself rather than declared);
//! - x leaves the properties' bits unchanged (`hits`: invisibility, C2);
//! and no step of T leads to a state on the DFS stack (C3). A static
//! analysis (declared footprints) over the same states can only approve
//! fewer such sets, so with the same choice of actor the search below is
//! what the best single-actor reduction explores. "The same states"
//! includes the ghost `ev`, which every step writes: a reduction that
//! makes it a transition label does better (por_ceiling_ev.rs). The visiting order's choice (the
//! first actor, in lane order, whose set qualifies) is greedy; the test
//! also runs the last qualifying actor.
//!
//! The second table ("The ghost `ev`") measures the same searches with
//! the FUSE model's ghost `ev` ("What the last step did (witnesses
//! only)", state.rs) treated as a label of the transition: every step
//! starts with `s.ev = Event::None`, so with `ev` in the state two steps
//! of different actors never commute when one of them records an event.
//! There a successor's property bits are taken on the raw successor
//! (witnesses read `ev` there), then `ev` is cleared before the state is
//! stored, compared or expanded (no step reads an `ev` an earlier step
//! set: read.rs and model.rs read it only within the step that set it).
//!
//! The "local" mode asks the same of s alone (the steps enabled now): it
//! is the check that an implementation without footprints of the other
//! actors' future steps could make, and it is unsound here: it loses
//! witnesses, which this test asserts too.

mod common;
use common::*;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use wbspec::catalogue::{self, Entry};
use wbspec::fingerprint::WordHasher;
use wbspec_models::fuse::state::Event;
use wbspec_models::fuse::FuseModel;
use wbspec_models::registry::{self, ModelVisitor};
use wbspec_models::spec::{Hits, Spec};

/// Maps and sets keyed by whole states with the search's own hash (the
/// states are stored, so a collision costs time, never a state): SipHash
/// was a third of this test's time.
type Map<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;
type Set<K> = HashSet<K, BuildHasherDefault<WordHasher>>;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Every state's successors.
    Full,
    /// Persistent sets checked on every state the others reach;
    /// `visible` is the mask of property bits a step must not change;
    /// `last`: the last qualifying actor instead of the first.
    Oracle { visible: Hits, last: bool },
    /// The same conditions checked in s only (all bits visible).
    Local,
}

/// The model and the map from a successor to the state stored (the
/// identity, or the FUSE state with `ev` cleared).
struct Ctx<'a, M: Spec> {
    m: &'a M,
    norm: fn(M::State) -> M::State,
}

/// A step: its action, the stored successor and the property bits of
/// the raw successor.
type Step<M> = (
    <M as stateright::Model>::Action,
    <M as stateright::Model>::State,
    Hits,
);

impl<M: Spec> Ctx<'_, M> {
    fn succ(&self, s: &M::State) -> Vec<Step<M>> {
        let mut v = Vec::new();
        self.m.successors(s, &mut v);
        v.into_iter()
            .filter(|(_, n)| self.m.within_boundary(n))
            .map(|(a, n)| {
                let h = self.m.hits(&n);
                (a, (self.norm)(n), h)
            })
            .collect()
    }

    fn lane(&self, x: &Step<M>) -> usize {
        self.m.lane_of(&x.0)
    }

    /// The enabled steps of lane `l` (compared as sets: `same_steps`).
    fn lane_steps(&self, all: &[Step<M>], l: usize) -> Vec<M::Action> {
        all.iter()
            .filter(|x| self.lane(x) == l)
            .map(|(a, _, _)| *a)
            .collect()
    }

    /// In `u` (successors `au`): every step of lane `l` is invisible
    /// under `visible` and commutes with every other actor's step, each
    /// staying enabled after the other.
    fn local_ok(&self, u: &M::State, au: &[Step<M>], l: usize, visible: Hits) -> bool {
        let hu = self.m.hits(u) & visible;
        // the successors of each step's successor, computed once when
        // first needed (not once per pair of steps)
        let mut next: Vec<Option<Vec<Step<M>>>> = vec![None; au.len()];
        for (i, x) in au.iter().enumerate() {
            if self.lane(x) != l {
                continue;
            }
            if x.2 & visible != hu {
                return false;
            }
            for (j, y) in au.iter().enumerate() {
                if self.lane(y) == l {
                    continue;
                }
                for k in [i, j] {
                    if next[k].is_none() {
                        next[k] = Some(self.succ(&au[k].1));
                    }
                }
                let (sx, sy) = (next[i].as_deref().unwrap(), next[j].as_deref().unwrap());
                let xy = sx.iter().find(|(a, _, _)| *a == y.0);
                let yx = sy.iter().find(|(a, _, _)| *a == x.0);
                if !matches!((xy, yx), (Some(a), Some(b)) if a.1 == b.1) {
                    return false;
                }
            }
        }
        true
    }

    /// Is lane `l`'s enabled set in `s` (with successors `all`)
    /// persistent and invisible, checked in every state the others'
    /// moves reach (`everywhere`) or in `s` only?
    fn qualifies(
        &self,
        s: &M::State,
        all: &[Step<M>],
        l: usize,
        visible: Hits,
        everywhere: bool,
        memo: &mut Memo<M>,
    ) -> bool {
        if !everywhere {
            return self.local_ok(s, all, l, visible);
        }
        let t0 = self.lane_steps(all, l);
        // each state reached, with the state it was reached from
        let mut parent: Map<M::State, Option<M::State>> = Map::default();
        parent.insert(s.clone(), None);
        let mut todo = vec![(s.clone(), all.to_vec())];
        while let Some((u, au)) = todo.pop() {
            let key = (u.clone(), l);
            if memo.good.contains(&key) {
                continue;
            }
            let fails = !same_steps(&self.lane_steps(&au, l), &t0)
                || memo.bad.contains(&key)
                || !*memo
                    .local
                    .entry(key)
                    .or_insert_with(|| self.local_ok(&u, &au, l, visible));
            if fails {
                // every state on the path from s to u has the lane's set
                // t0 and u in its sub-graph: it fails too
                let mut p = parent[&u].clone();
                while let Some(q) = p {
                    p = parent[&q].clone();
                    memo.bad.insert((q, l));
                }
                return false;
            }
            for x in au {
                if self.lane(&x) != l && !parent.contains_key(&x.1) {
                    parent.insert(x.1.clone(), Some(u.clone()));
                    let an = self.succ(&x.1);
                    todo.push((x.1, an));
                }
            }
        }
        for u in parent.into_keys() {
            memo.good.insert((u, l));
        }
        true
    }

    /// States stored and the union of the property bits reached.
    fn explore(&self, mode: Mode) -> Run {
        let m = self.m;
        let mut seen: Set<M::State> = Set::default();
        let mut on_stack: Set<M::State> = Set::default();
        // (state, (successor, its bits) to visit, next index)
        let mut stack: Vec<(M::State, Vec<(M::State, Hits)>, usize)> = Vec::new();
        let mut reached: Hits = 0;
        let mut memo = Memo::<M> {
            local: Map::default(),
            good: Set::default(),
            bad: Set::default(),
        };
        let (visible, last, everywhere) = match mode {
            Mode::Full => (0, false, false),
            Mode::Oracle { visible, last } => (visible, last, true),
            Mode::Local => (!0, false, false),
        };
        let mut expand = |s: &M::State, on_stack: &Set<M::State>| -> Vec<(M::State, Hits)> {
            let all = self.succ(s);
            let mut lanes: Vec<usize> = all.iter().map(|x| self.lane(x)).collect();
            lanes.sort();
            lanes.dedup();
            if mode != Mode::Full && lanes.len() > 1 {
                if last {
                    lanes.reverse();
                }
                for &l in &lanes {
                    let mine = |x: &&Step<M>| self.lane(x) == l;
                    if all.iter().filter(mine).any(|x| on_stack.contains(&x.1)) {
                        continue;
                    }
                    if self.qualifies(s, &all, l, visible, everywhere, &mut memo) {
                        return all
                            .iter()
                            .filter(mine)
                            .map(|x| (x.1.clone(), x.2))
                            .collect();
                    }
                }
            }
            all.into_iter().map(|(_, n, h)| (n, h)).collect()
        };
        for s0 in m.init_states() {
            if !m.within_boundary(&s0) {
                continue;
            }
            reached |= m.hits(&s0);
            let s = (self.norm)(s0);
            if !seen.insert(s.clone()) {
                continue;
            }
            on_stack.insert(s.clone());
            let kids = expand(&s, &on_stack);
            stack.push((s, kids, 0));
            while let Some(top) = stack.last_mut() {
                if top.2 == top.1.len() {
                    let (s, _, _) = stack.pop().unwrap();
                    on_stack.remove(&s);
                    continue;
                }
                let (k, h) = top.1[top.2].clone();
                top.2 += 1;
                reached |= h;
                if seen.insert(k.clone()) {
                    on_stack.insert(k.clone());
                    let kids = expand(&k, &on_stack);
                    stack.push((k, kids, 0));
                }
            }
        }
        Run {
            states: seen.len() as u64,
            reached,
        }
    }
}

/// Two lists hold the same actions, each as often.
fn same_steps<A: PartialEq>(a: &[A], b: &[A]) -> bool {
    let n = |v: &[A], x: &A| v.iter().filter(|y| *y == x).count();
    a.len() == b.len() && a.iter().all(|x| n(a, x) == n(b, x))
}

/// What `qualifies` learnt, per (state, lane): the local conditions'
/// value, the states whose whole sub-graph qualified (every state in it
/// qualifies too, with the same enabled set of the lane), and those that
/// do not qualify (the states on the path to one that fails share the
/// lane's enabled set, so they fail too).
struct Memo<M: Spec> {
    local: Map<(M::State, usize), bool>,
    good: Set<(M::State, usize)>,
    bad: Set<(M::State, usize)>,
}

/// States stored and the union of the property bits reached.
struct Run {
    states: u64,
    reached: Hits,
}

/// One row of a table: the full search, the persistent sets (first and
/// last qualifying actor), nothing visible; the local-only search and
/// the bits it lost (first table only, else 0).
#[derive(Debug, PartialEq)]
struct Row {
    name: String,
    full: u64,
    oracle: u64,
    oracle_last: u64,
    invisible: u64,
    local: u64,
    lost: u32,
}

fn measure<M: Spec>(name: &str, m: &M, norm: fn(M::State) -> M::State, local: bool) -> Row {
    let c = Ctx { m, norm };
    let full = c.explore(Mode::Full);
    let o = |visible, last| {
        let r = c.explore(Mode::Oracle { visible, last });
        // every persistent-set search reaches the full search's bits (a
        // union over the stored states: each bit needs one state)
        assert_eq!(
            r.reached, full.reached,
            "{name}: the persistent-set search lost or gained a property bit"
        );
        assert!(r.states <= full.states, "{name}");
        r.states
    };
    let (oracle, oracle_last, invisible) = (o(!0, false), o(!0, true), o(0, false));
    let (local, lost) = if local {
        let l = c.explore(Mode::Local);
        assert_eq!(l.reached & !full.reached, 0, "{name}");
        (l.states, (full.reached & !l.reached).count_ones())
    } else {
        (0, 0)
    };
    Row {
        name: name.to_string(),
        full: full.states,
        oracle,
        oracle_last,
        invisible,
        local,
        lost,
    }
}

/// The first table: the model's states as they are.
struct AsIs<'a>(&'a Entry);
impl ModelVisitor for AsIs<'_> {
    type Out = Row;
    fn visit<M: Spec>(self) -> Row {
        let cfg: M::Config = serde_json::from_value(self.0.check.config_json()).unwrap();
        measure(&self.0.name, &M::build(&cfg).unwrap(), |s| s, true)
    }
}

/// The second table: the FUSE model with `ev` a transition label.
fn ev_as_label(e: &Entry) -> Row {
    assert_eq!(e.model, "fuse", "{}", e.name);
    let cfg: <FuseModel as Spec>::Config = serde_json::from_value(e.check.config_json()).unwrap();
    let norm = |mut s: <FuseModel as stateright::Model>::State| {
        s.ev = Event::None;
        s
    };
    let mut r = measure(&e.name, &FuseModel::build(&cfg).unwrap(), norm, false);
    // the table has no local columns
    (r.local, r.lost) = (0, 0);
    r
}

/// The rows of docs/performance.md's table after `marker`; `cols`: the
/// numeric columns it has (4, or 6 with the local-only search).
fn doc_rows(marker: &str, cols: usize) -> Vec<Row> {
    let doc = std::fs::read_to_string(repo_root().join("docs/performance.md")).unwrap();
    let start = doc
        .find(marker)
        .unwrap_or_else(|| panic!("docs/performance.md has the marker {marker}"));
    let table = &doc[start..];
    let end = table.find("\n\n").unwrap_or(table.len());
    let num = |s: &str| -> u64 {
        let s = s.split_whitespace().next().unwrap_or(s);
        s.replace(',', "")
            .parse()
            .unwrap_or_else(|_| panic!("a number: {s:?}"))
    };
    table[..end]
        .lines()
        .skip(3)
        .map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            assert_eq!(c.len(), cols + 3, "{l}");
            let n: Vec<u64> = (0..cols).map(|i| num(c[2 + i])).collect();
            Row {
                name: c[1].trim_matches('`').to_string(),
                full: n[0],
                oracle: n[1],
                oracle_last: n[2],
                invisible: n[3],
                local: if cols > 4 { n[4] } else { 0 },
                lost: if cols > 4 { n[5] as u32 } else { 0 },
            }
        })
        .collect()
}

/// Rows of fewer states than this are measured in every test run; the
/// larger ones (about 7 of the 12 minutes of CPU the two tables take)
/// only with WBSPEC_POR_ALL set, which
/// docs/performance.md says, with the date they were last measured.
const ALWAYS_BELOW: u64 = 500_000;

/// The rows a run measures: all of them with WBSPEC_POR_ALL (or
/// WBSPEC_POR_PRINT) set, else those under `ALWAYS_BELOW` states; at
/// least four either way, and never all of a table's rows skipped.
fn rows_to_measure(rows: Vec<Row>) -> Vec<Row> {
    assert!(rows.len() >= 4, "{} rows", rows.len());
    if std::env::var_os("WBSPEC_POR_ALL").is_some()
        || std::env::var_os("WBSPEC_POR_PRINT").is_some()
    {
        return rows;
    }
    let small: Vec<Row> = rows.into_iter().filter(|r| r.full < ALWAYS_BELOW).collect();
    assert!(
        small.len() >= 4,
        "{} rows under {ALWAYS_BELOW} states",
        small.len()
    );
    small
}

/// Measures the rows on two threads, largest first; with
/// WBSPEC_POR_PRINT set prints them in the table's format and returns
/// nothing to compare.
fn measure_rows(rows: &[Row], f: impl Fn(&Entry) -> Row + Sync) -> Option<Vec<Row>> {
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let entries: Vec<&Entry> = rows
        .iter()
        .map(|want| {
            cat.entries
                .iter()
                .find(|e| e.name == want.name)
                .unwrap_or_else(|| panic!("{} is not a catalogue check", want.name))
        })
        .collect();
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(entries[i].states));
    let next = AtomicUsize::new(0);
    let mut got: Vec<(usize, Row)> = std::thread::scope(|sc| {
        let work = || {
            let mut out = Vec::new();
            loop {
                let Some(&i) = order.get(next.fetch_add(1, Relaxed)) else {
                    break out;
                };
                out.push((i, f(entries[i])));
            }
        };
        let a = sc.spawn(work);
        let mut v = work();
        v.extend(a.join().unwrap());
        v
    });
    got.sort_by_key(|(i, _)| *i);
    let got: Vec<Row> = got.into_iter().map(|(_, r)| r).collect();
    if std::env::var_os("WBSPEC_POR_PRINT").is_none() {
        return Some(got);
    }
    let n = |x: u64| {
        let s = x.to_string();
        let mut o = String::new();
        for (i, ch) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                o.push(',');
            }
            o.push(ch);
        }
        o
    };
    for r in &got {
        println!(
            "| `{}` | {} | {} | {} | {} | {} | {} |",
            r.name,
            n(r.full),
            n(r.oracle),
            n(r.oracle_last),
            n(r.invisible),
            n(r.local),
            r.lost
        );
    }
    None
}

/// Every row of the first table (those under `ALWAYS_BELOW` states
/// unless WBSPEC_POR_ALL is set) is measured again: the counts are the
/// document's (the full count also the catalogue's pin, which every
/// row's "states" column is, measured or not), the
/// persistent-set searches keep every reached bit, none reaches the
/// issue's 3x, and the local-only search loses witnesses.
#[test]
fn the_documented_reduction_ceiling_is_measured() {
    let all = doc_rows("<!-- por-ceiling-table -->", 6);
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    for r in &all {
        let e = cat.entries.iter().find(|e| e.name == r.name);
        assert_eq!(
            e.and_then(|e| e.states),
            Some(r.full),
            "{}: docs/performance.md's states vs the catalogue's pin",
            r.name
        );
    }
    let rows = rows_to_measure(all);
    let Some(got) = measure_rows(&rows, |e| {
        let r = registry::with_model(&e.model, AsIs(e)).unwrap();
        assert_eq!(e.states, Some(r.full), "{}: the catalogue's pin", e.name);
        r
    }) else {
        return;
    };
    let mut lossy = 0;
    for (want, got) in rows.iter().zip(&got) {
        assert_eq!(got, want, "{}: measured vs docs/performance.md", want.name);
        for n in [got.oracle, got.oracle_last, got.invisible] {
            assert!(3 * n > got.full, "{}: 3x reached ({n})", got.name);
        }
        if got.lost > 0 {
            lossy += 1;
        }
    }
    assert!(lossy > 0, "the local-only search lost no witness anywhere");
}

/// The second table, `ev` a transition label (the rows measured as in
/// the first): the counts are the
/// document's, every search keeps the full search's bits, and with the
/// properties visible none reaches 3x.
#[test]
fn the_ceiling_with_ev_as_a_label_is_measured() {
    let rows = rows_to_measure(doc_rows("<!-- por-ceiling-ev-table -->", 4));
    let Some(got) = measure_rows(&rows, ev_as_label) else {
        return;
    };
    for (want, got) in rows.iter().zip(&got) {
        assert_eq!(got, want, "{}: measured vs docs/performance.md", want.name);
        for n in [got.oracle, got.oracle_last] {
            assert!(3 * n > got.full, "{}: 3x reached ({n})", got.name);
        }
    }
}
