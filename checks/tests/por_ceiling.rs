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
//! The "local" mode asks the same of s alone (the steps enabled now): it
//! is the check that an implementation without footprints of the other
//! actors' future steps could make, and it is unsound here: it loses
//! witnesses, which this test asserts too.

mod common;
use common::*;
use std::collections::{HashMap, HashSet};
use wbspec::catalogue::{self, Entry};
use wbspec_models::registry::{self, ModelVisitor};
use wbspec_models::spec::{Hits, Spec};

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Every state's successors.
    Full,
    /// Persistent sets checked on every state the others reach;
    /// `visible` is the mask of property bits a step must not change;
    /// `last`: the last qualifying actor instead of the first.
    Oracle { visible: Hits, last: bool },
    /// The same conditions checked in s only.
    Local,
}

/// States stored and the union of the property bits they hit.
struct Run {
    states: u64,
    reached: Hits,
}

fn succ<M: Spec>(m: &M, s: &M::State) -> Vec<(M::Action, M::State)> {
    let mut v = Vec::new();
    m.successors(s, &mut v);
    v.retain(|(_, n)| m.within_boundary(n));
    v
}

/// Do `x` (enabled in `u`, successor `ux`) and `y` (`uy`) commute, each
/// staying enabled after the other? `sx` and `sy` are the successors of
/// `ux` and `uy` (computed once per step, not once per pair).
fn commute<M: Spec>(
    x: &(M::Action, M::State),
    sx: &[(M::Action, M::State)],
    y: &(M::Action, M::State),
    sy: &[(M::Action, M::State)],
) -> bool {
    let xy = sx.iter().find(|(a, _)| *a == y.0);
    let yx = sy.iter().find(|(a, _)| *a == x.0);
    matches!((xy, yx), (Some(a), Some(b)) if a.1 == b.1)
}

/// The enabled steps of lane `l`, as a sorted list (to compare sets).
fn lane_steps<M: Spec>(m: &M, all: &[(M::Action, M::State)], l: usize) -> Vec<String> {
    let mut t: Vec<String> = all
        .iter()
        .filter(|(a, _)| m.lane_of(a) == l)
        .map(|(a, _)| format!("{a:?}"))
        .collect();
    t.sort();
    t
}

/// What `qualifies` learnt, per (state, lane): the local conditions'
/// value, the states whose whole sub-graph qualified (every state in it
/// qualifies too, with the same enabled set of the lane), and those
/// that do not qualify.
struct Memo<M: Spec> {
    local: HashMap<(M::State, usize), bool>,
    good: HashSet<(M::State, usize)>,
    /// States whose sub-graph has a state that fails (the states on the
    /// path to it share the lane's enabled set, so they fail too).
    bad: HashSet<(M::State, usize)>,
}

/// In `u` (successors `au`): every step of lane `l` is invisible under
/// `visible` and commutes with every other actor's step.
fn local_ok<M: Spec>(
    m: &M,
    u: &M::State,
    au: &[(M::Action, M::State)],
    l: usize,
    visible: Hits,
) -> bool {
    let hu = m.hits(u) & visible;
    // the successors of each step's successor, computed once when first
    // needed (not once per pair of steps)
    let mut next: Vec<Option<Vec<(M::Action, M::State)>>> = vec![None; au.len()];
    for (i, x) in au.iter().enumerate() {
        if m.lane_of(&x.0) != l {
            continue;
        }
        if m.hits(&x.1) & visible != hu {
            return false;
        }
        for (j, y) in au.iter().enumerate() {
            if m.lane_of(&y.0) == l {
                continue;
            }
            for k in [i, j] {
                if next[k].is_none() {
                    next[k] = Some(succ(m, &au[k].1));
                }
            }
            let (sx, sy) = (next[i].as_deref().unwrap(), next[j].as_deref().unwrap());
            if !commute::<M>(x, sx, y, sy) {
                return false;
            }
        }
    }
    true
}

/// Is lane `l`'s enabled set in `s` (with successors `all`) persistent
/// and invisible, checked in every state the others' moves reach
/// (`everywhere`) or in `s` only?
fn qualifies<M: Spec>(
    m: &M,
    s: &M::State,
    all: &[(M::Action, M::State)],
    l: usize,
    visible: Hits,
    everywhere: bool,
    memo: &mut Memo<M>,
) -> bool {
    if !everywhere {
        return local_ok(m, s, all, l, visible);
    }
    let t0 = lane_steps(m, all, l);
    // each state reached, with the state it was reached from
    let mut parent: HashMap<M::State, Option<M::State>> = HashMap::from([(s.clone(), None)]);
    let mut todo = vec![(s.clone(), all.to_vec())];
    while let Some((u, au)) = todo.pop() {
        let key = (u.clone(), l);
        if memo.good.contains(&key) {
            continue;
        }
        let fails = lane_steps(m, &au, l) != t0
            || memo.bad.contains(&key)
            || !*memo
                .local
                .entry(key)
                .or_insert_with(|| local_ok(m, &u, &au, l, visible));
        if fails {
            // every state on the path from s to u has the lane's set t0
            // and u in its sub-graph: it fails too
            let mut p = parent[&u].clone();
            while let Some(q) = p {
                p = parent[&q].clone();
                memo.bad.insert((q, l));
            }
            return false;
        }
        for (a, n) in au {
            if m.lane_of(&a) != l && !parent.contains_key(&n) {
                parent.insert(n.clone(), Some(u.clone()));
                let an = succ(m, &n);
                todo.push((n, an));
            }
        }
    }
    for u in parent.into_keys() {
        memo.good.insert((u, l));
    }
    true
}

fn explore<M: Spec>(m: &M, mode: Mode) -> Run {
    let mut seen: HashSet<M::State> = HashSet::new();
    let mut on_stack: HashMap<M::State, ()> = HashMap::new();
    // (state, successors to visit, next index)
    let mut stack: Vec<(M::State, Vec<M::State>, usize)> = Vec::new();
    let mut reached: Hits = 0;
    let mut memo = Memo::<M> {
        local: HashMap::new(),
        good: HashSet::new(),
        bad: HashSet::new(),
    };
    let mut expand = |s: &M::State, on_stack: &HashMap<M::State, ()>| -> Vec<M::State> {
        let all = succ(m, s);
        let mut lanes: Vec<usize> = all.iter().map(|(a, _)| m.lane_of(a)).collect();
        lanes.sort();
        lanes.dedup();
        let (visible, last, everywhere) = match mode {
            Mode::Full => (0, false, false),
            Mode::Oracle { visible, last } => (visible, last, true),
            Mode::Local => (!0, false, false),
        };
        if mode != Mode::Full && lanes.len() > 1 {
            if last {
                lanes.reverse();
            }
            for &l in &lanes {
                let mine = |(a, _): &&(M::Action, M::State)| m.lane_of(a) == l;
                if all
                    .iter()
                    .filter(mine)
                    .any(|(_, n)| on_stack.contains_key(n))
                {
                    continue;
                }
                if qualifies(m, s, &all, l, visible, everywhere, &mut memo) {
                    return all.iter().filter(mine).map(|(_, n)| n.clone()).collect();
                }
            }
        }
        all.into_iter().map(|(_, n)| n).collect()
    };
    for s in m.init_states() {
        if !m.within_boundary(&s) || !seen.insert(s.clone()) {
            continue;
        }
        reached |= m.hits(&s);
        on_stack.insert(s.clone(), ());
        let kids = expand(&s, &on_stack);
        stack.push((s, kids, 0));
        while let Some(top) = stack.last_mut() {
            if top.2 == top.1.len() {
                let (s, _, _) = stack.pop().unwrap();
                on_stack.remove(&s);
                continue;
            }
            let k = top.1[top.2].clone();
            top.2 += 1;
            if seen.insert(k.clone()) {
                reached |= m.hits(&k);
                on_stack.insert(k.clone(), ());
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

/// One row of the document's table.
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

struct Measure<'a>(&'a Entry);
impl ModelVisitor for Measure<'_> {
    type Out = Row;
    fn visit<M: Spec>(self) -> Row {
        let cfg: M::Config = serde_json::from_value(self.0.check.config_json()).unwrap();
        let m = M::build(&cfg).unwrap();
        let full = explore(&m, Mode::Full);
        let o = |visible, last| {
            let r = explore(&m, Mode::Oracle { visible, last });
            // the persistent sets keep every verdict and reached witness
            // (a union of bits; for `visible` 0, which C2 does not
            // constrain, measured rather than promised)
            assert_eq!(
                r.reached, full.reached,
                "{}: the persistent-set search lost or gained a property bit",
                self.0.name
            );
            assert!(r.states <= full.states);
            r.states
        };
        let local = explore(&m, Mode::Local);
        assert_eq!(local.reached & !full.reached, 0, "{}", self.0.name);
        Row {
            name: self.0.name.clone(),
            full: full.states,
            oracle: o(!0, false),
            oracle_last: o(!0, true),
            invisible: o(0, false),
            local: local.states,
            lost: (full.reached & !local.reached).count_ones(),
        }
    }
}

/// The rows of docs/performance.md's table after its marker.
fn doc_rows() -> Vec<Row> {
    let doc = std::fs::read_to_string(repo_root().join("docs/performance.md")).unwrap();
    let start = doc
        .find("<!-- por-ceiling-table -->")
        .expect("docs/performance.md has the por-ceiling table marker");
    let table = &doc[start..];
    let end = table.find("\n\n").unwrap_or(table.len());
    let num = |s: &str| -> u64 {
        let s = s.trim();
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
            Row {
                name: c[1].trim_matches('`').to_string(),
                full: num(c[2]),
                oracle: num(c[3]),
                oracle_last: num(c[4]),
                invisible: num(c[5]),
                local: num(c[6]),
                lost: num(c[7]) as u32,
            }
        })
        .collect()
}

/// Every row of the table is measured again: the counts are the
/// document's, the persistent-set searches keep every reached bit, none
/// reaches the 3x, and the local-only search loses witnesses.
/// With WBSPEC_POR_PRINT set, the measured rows are printed in the
/// table's format instead of compared (to write the table).
#[test]
fn the_documented_reduction_ceiling_is_measured() {
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let rows = doc_rows();
    assert!(rows.len() >= 4, "{} rows", rows.len());
    let print = std::env::var_os("WBSPEC_POR_PRINT").is_some();
    let entries: Vec<&Entry> = rows
        .iter()
        .map(|want| {
            let e = cat
                .entries
                .iter()
                .find(|e| e.name == want.name)
                .unwrap_or_else(|| panic!("{} is not a catalogue check", want.name));
            assert!(
                print || e.states == Some(want.full),
                "{}: the catalogue's pin",
                e.name
            );
            e
        })
        .collect();
    // the rows on two threads, largest first
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(entries[i].states));
    let got: Vec<(usize, Row)> = std::thread::scope(|sc| {
        let work = || {
            let mut out = Vec::new();
            loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break out };
                let e = entries[i];
                out.push((i, registry::with_model(&e.model, Measure(e)).unwrap()));
            }
        };
        let a = sc.spawn(work);
        let mut v = work();
        v.extend(a.join().unwrap());
        v
    });
    let mut got: Vec<Row> = {
        let mut g = got;
        g.sort_by_key(|(i, _)| *i);
        g.into_iter().map(|(_, r)| r).collect()
    };
    if print {
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
        return;
    }
    let mut lossy = 0;
    for (want, got) in rows.iter().zip(got.drain(..)) {
        assert_eq!(&got, want, "{}: measured vs docs/performance.md", want.name);
        for n in [got.oracle, got.oracle_last, got.invisible] {
            assert!(3 * n > got.full, "{}: 3x reached ({n})", got.name);
        }
        if got.lost > 0 {
            lossy += 1;
        }
    }
    assert!(lossy > 0, "the local-only search lost no witness anywhere");
}
