//! `State::forget_property_ghosts` keeps behaviours: on every reachable
//! state of several workloads, the successors of a state and of its
//! forgetting are the same once forgotten (trace conformance relies on
//! it, harness/src/conform/search.rs).

use super::config::*;
use super::model::*;
use super::state::*;
use super::tests::{cfg, model, reachable, write_through_t2};
use super::Action;
use std::collections::HashSet;

fn forgotten(mut s: State) -> State {
    s.forget_property_ghosts();
    s
}

/// The successors of `s`, each normalized by `norm`.
fn succ_by(m: &FuseModel, s: &State, norm: impl Fn(State) -> State) -> HashSet<(Action, State)> {
    let mut acts = vec![];
    m.enabled(s, &mut acts);
    acts.into_iter()
        .filter_map(|a| m.step(s, a).map(|n| (a, norm(n))))
        .collect()
}

fn successors(m: &FuseModel, s: &State) -> HashSet<(Action, State)> {
    succ_by(m, s, forgotten)
}

/// Explores `c` to the end and checks every state; returns how many.
fn commutes(c: Config) -> usize {
    let m = model(c);
    let all = reachable(&m);
    let mut changed = 0;
    for &s in &all {
        let f = forgotten(s);
        changed += usize::from(f != s);
        assert_eq!(
            successors(&m, &s),
            successors(&m, &f),
            "forgetting the ghosts of\n{s:?}\nchanged its behaviours"
        );
    }
    // (the check is not vacuous: the ghosts were set somewhere)
    assert!(changed > 0, "no state had a ghost to forget");
    all.len()
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

/// (attack) more workloads: aio, uring queues, notifications, abort and
/// signals, large folios, subpage units.
#[test]
fn forgetting_keeps_behaviours_more_workloads() {
    let mut n = 0;
    let mut c = cfg(2, &["aio dio-write 0+2", "aio dio-read 1+1", "write 1+1"]);
    c.async_dio = true;
    c.cached = 0;
    c.dirty = 0;
    n += commutes(c);
    let mut c = cfg(2, &["write 0+1", "write 1+1", "dio-write 0+1", "fsync"]);
    c.kernel = Kernel::T2;
    c.variant = Variant::base(Kernel::T2);
    c.max_pages = 1;
    c.daemon_threads = 2;
    c.uring_queues = 2;
    n += commutes(c);
    let mut c = cfg(2, &["write 0+1", "notify-inval 0+2", "read 0+2"]);
    c.daemon_threads = 2;
    n += commutes(c);
    let mut c = cfg(2, &["truncate 0", "notify-store 1+1", "read 1+1"]);
    c.init_size = 1;
    c.cached = 1;
    c.dirty = 0;
    c.daemon_threads = 2;
    n += commutes(c);
    n += commutes(cfg(1, &["wb none", "abort", "fsync", "dio-read 0+1"]));
    n += commutes(cfg(1, &["dio-write 0+1", "kill 0", "read 0+1"]));
    n += commutes(cfg(1, &["dio-write 0+1", "signal 0", "mmap 0"]));
    let mut c = cfg(2, &["fault 0", "write 0+2", "dio-write 0+2", "wb none"]);
    c.folio_pages = 2;
    n += commutes(c);
    let t: toml::Table = "kernel = \"T\"\nunits_per_page = 4\npages = 1\ninit_size = \"3u\"\ndaemon_threads = 1\ntasks = [\"write 1u+2u\", \"truncate 1\", \"read 0+1\", \"mmap 0\"]\n".parse().unwrap();
    n += commutes(Config::from_table(&t).unwrap());
    assert!(n > 1000, "{n}");
}

/// (attack) `compact_history`, which the search now runs whenever an
/// environment's task restarts (tasks of others in flight): does it keep
/// behaviours, up to forgetting and compaction?
fn compacted(m: &FuseModel, s: State) -> State {
    let mut s = forgotten(s);
    s.compact_history(|v| m.is_zeros(v));
    s
}

fn csucc(m: &FuseModel, s: &State) -> HashSet<(Action, State)> {
    succ_by(m, s, |n| compacted(m, n))
}

fn compact_commutes(c: Config) -> (usize, usize) {
    let m = model(c);
    let all = reachable(&m);
    let mut bad = 0;
    for &s in &all {
        let f = compacted(&m, s);
        if csucc(&m, &s) != csucc(&m, &f) {
            if bad == 0 {
                let a = csucc(&m, &s);
                let b = csucc(&m, &f);
                let d: Vec<_> = a.symmetric_difference(&b).map(|x| x.0).collect();
                eprintln!("compaction changed behaviours of\n{s:?}\n{d:?}");
            }
            bad += 1;
        }
    }
    (all.len(), bad)
}

#[test]
fn atk_compaction_keeps_behaviours() {
    // (the search compacts on an environment's restart: one syscall of a
    // recorded program in flight, the environment's tasks, writeback)
    let mut tot = 0;
    for (name, c) in [
        ("mmap+through", {
            let mut c = cfg(2, &["write 0+1", "mmap 0", "fault 0", "write 0+1"]);
            write_through_t2(&mut c);
            c.cached = 0;
            c.dirty = 0;
            c.daemon_threads = 2;
            c
        }),
        (
            "mmap+truncate",
            cfg(2, &["mmap 0", "truncate 0", "write 0+1", "fsync"]),
        ),
        (
            "mmap+wb",
            cfg(1, &["mmap 0", "wb none", "mmap 0", "read 0+1"]),
        ),
        ("1through+env+wb", {
            let mut c = cfg(2, &["write 0+2", "mmap 0", "fault 1", "wb none"]);
            write_through_t2(&mut c);
            c.cached = 0;
            c.dirty = 0;
            c.daemon_threads = 2;
            c
        }),
        (
            "trunc+env+wb",
            cfg(2, &["truncate 1", "mmap 1", "fault 0", "wb none"]),
        ),
        (
            "write+env+wb",
            cfg(2, &["write 0+2", "mmap 1", "fault 0", "wb none"]),
        ),
        (
            "dio+env+wb",
            cfg(2, &["dio-write 0+2", "mmap 1", "fault 0", "wb none"]),
        ),
    ] {
        let (n, bad) = compact_commutes(c);
        eprintln!("{name}: {n} states, {bad} changed");
        tot += bad;
    }
    assert_eq!(tot, 0);
    // not in general: a server-side change (notification) or a truncation
    // concurrent with a write-through WRITE not yet copied: compaction
    // drops the writer's version from the history that the payload copy
    // compares (daemon.rs, hist_older) or renames zeros to V_ZERO
    for (name, c) in [
        ("2through+fault", {
            let mut c = cfg(
                1,
                &["write 0+1", "write 0+1", "fault 0", "notify-inval 0+1"],
            );
            write_through_t2(&mut c);
            c.cached = 0;
            c.dirty = 0;
            c.daemon_threads = 2;
            c
        }),
        ("through+trunc+mmap", {
            let mut c = cfg(1, &["write 0+1", "truncate 0", "mmap 0", "read 0+1"]);
            write_through_t2(&mut c);
            c.cached = 0;
            c.dirty = 0;
            c.daemon_threads = 2;
            c
        }),
    ] {
        let (n, bad) = compact_commutes(c);
        eprintln!("{name}: {n} states, {bad} changed");
        assert!(bad > 0, "{name}");
    }
}

/// `dedup_history` (the search's normalization on an environment's
/// restart) keeps behaviours: on every reachable state of these
/// workloads, with each page's history given repeats as repeated stores
/// leave them (the current version twice more; an older one again, then
/// the current), the successors of the state and of its dedup are the same
/// once forgotten and deduped. Includes the two shapes where
/// `compact_history` does not keep them.
#[test]
fn dedup_history_keeps_behaviours() {
    fn norm(m: &FuseModel, s: State) -> State {
        let mut s = forgotten(s);
        s.dedup_history(|v| m.is_zeros(v));
        s
    }
    fn succ(m: &FuseModel, s: &State) -> HashSet<(Action, State)> {
        succ_by(m, s, |n| norm(m, n))
    }
    let through = |pages: u8, tasks: &[&str]| {
        let mut c = cfg(pages, tasks);
        write_through_t2(&mut c);
        c.cached = 0;
        c.dirty = 0;
        c.daemon_threads = 2;
        c
    };
    let mut variants = 0;
    for c in [
        through(
            1,
            &["write 0+1", "write 0+1", "fault 0", "notify-inval 0+1"],
        ),
        through(1, &["write 0+1", "truncate 0", "mmap 0", "read 0+1"]),
        through(2, &["write 0+2", "mmap 0", "fault 1", "wb none"]),
        cfg(2, &["mmap 0", "truncate 0", "write 0+1", "fsync"]),
        cfg(2, &["truncate 1", "mmap 1", "fault 0", "wb none"]),
        cfg(1, &["mmap 0", "wb none", "mmap 0", "read 0+1"]),
        // two truncations' zeros on one page
        cfg(
            2,
            &["truncate 1", "write 1+1", "truncate 0", "mmap 1", "wb none"],
        ),
    ] {
        let m = model(c);
        for s in reachable(&m) {
            for p in 0..m.cfg.pages as usize {
                let list = hist_list(s.hist[p]);
                let cur = *list.last().unwrap();
                if list.len() < 2 || list.len() + 2 > 15 || m.is_zeros(cur) {
                    continue;
                }
                // stored twice more; an older version again, then this
                let mut vs = vec![hist_push(hist_push(s.hist[p], cur), cur)];
                for &v in &list[1..list.len() - 1] {
                    if !m.is_zeros(v) {
                        vs.push(hist_push(hist_push(s.hist[p], v), cur));
                    }
                }
                let repeats = vs.len();
                // zeros again, then the current: a repeat dedup keeps
                // (which zeros came last is read: last_zeros; these
                // workloads do not tell a dedup that drops it apart)
                for &v in &list[1..list.len() - 1] {
                    if m.is_zeros(v) {
                        vs.push(hist_push(hist_push(s.hist[p], v), cur));
                    }
                }
                for (k, h) in vs.into_iter().enumerate() {
                    let mut r = s;
                    r.hist[p] = h;
                    let d = norm(&m, r);
                    if k < repeats {
                        assert_ne!(d.hist[p], h, "the variant has a repeat to drop");
                    }
                    assert_eq!(
                        succ(&m, &r),
                        succ(&m, &d),
                        "dedup changed the behaviours of\n{r:?}"
                    );
                    variants += 1;
                }
            }
        }
    }
    assert!(variants > 1000, "{variants} variants");
}
