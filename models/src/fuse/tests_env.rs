//! The environment's task of loads and stores (`env`,
//! TaskSpec::EnvAccess; harness/src/conform/envmap.rs). Trace
//! conformance may end such a task when it stands at its store's start
//! with phase and cursor 0 (a load finished, the store not begun), and
//! keeps it as a task that has not begun (search.rs): sound only if
//! the store's first step always moves the task off that point, so
//! that standing there it holds no folio lock and no readahead folio,
//! and the load left nothing in the task's fields. A background READ
//! of the load's read-around may still name it (see
//! `an_env_task_at_rest_is_named_only_by_a_background_read`).

use super::config::*;
use super::program::Op;
use super::state::*;
use super::step::Step;
use super::tests::{cfg, model, reachable, write_through_t2};
use super::{Action, Actor};

/// Explores `c` and checks every state where an `env` task stands at
/// its store's start: each step of that task leaves the point, and the
/// task is as it would be had it not begun (the load left nothing: no
/// readahead folio, no reply). In the model alone the point is
/// reached only by a load. Returns (states at the point, stores begun
/// from it).
fn check(c: Config) -> (usize, usize) {
    let m = model(c);
    let envs: Vec<usize> = (0..m.cfg.tasks.len())
        .filter(|&t| m.store_start(t).is_some())
        .collect();
    assert!(!envs.is_empty());
    let (mut at, mut stores) = (0, 0);
    for s in reachable(&m) {
        for &t in &envs {
            let st = m.store_start(t).unwrap();
            let task = s.tasks[t];
            if task.pc != st || task.ph != 0 || task.cur != 0 {
                continue;
            }
            at += 1;
            // the load left nothing of its own (no readahead folio, no
            // reply): the task is the one a search starts at the store
            assert!(
                task == Task {
                    pc: st,
                    ..Task::new()
                },
                "{s:?}"
            );
            let mut acts = vec![];
            m.enabled(&s, &mut acts);
            for a in acts.into_iter().filter(|a| a.actor == Actor::Task(t as u8)) {
                let Some(n) = m.step(&s, a) else { continue };
                let nt = n.tasks[t];
                assert!(
                    nt.pc != st || nt.ph != 0 || nt.cur != 0,
                    "{a:?} left task {t} at its store start:\n{s:?}"
                );
                stores += usize::from(a.step == Step::MkwriteLock);
            }
        }
    }
    (at, stores)
}

#[test]
fn an_env_task_at_its_store_start_holds_nothing() {
    // pages not cached: the load reads (readahead, read_folio), the
    // store may find the folio or fault it in again after a truncation
    let mut c = cfg(2, &["env 0", "truncate 1", "wb none", "env 1"]);
    c.cached = 0;
    c.dirty = 0;
    let a = check(c);
    // write-through, state T2, with a buffered write beside it
    let mut c = cfg(2, &["env 1", "write 0+2", "truncate 0"]);
    write_through_t2(&mut c);
    c.cached = 0;
    c.dirty = 0;
    let b = check(c);
    // the point is reached, and stores begin from it
    for (at, stores) in [a, b] {
        assert!(at > 0 && stores > 0, "{a:?} {b:?}");
    }
}

/// Trace conformance takes an `env` task's fuse_page_mkwrite wait at
/// once when it is enabled (search.rs `rest`): sound if the wait only
/// moves the task's pc and, once enabled, stays enabled whatever other
/// actors do (no step starts writeback on the folio the task holds
/// locked). Checks both on every reachable state; returns how many
/// states had the wait enabled.
fn wait_is_local(c: Config) -> usize {
    let m = model(c);
    let mut n = 0;
    for s in reachable(&m) {
        for t in 0..m.cfg.tasks.len() {
            if m.store_start(t).is_none()
                || !matches!(m.current_op(&s, t), Some(Op::MkwriteWait { .. }))
            {
                continue;
            }
            let wait = Action {
                actor: Actor::Task(t as u8),
                step: Step::MkwriteWait,
            };
            let Some(mut after) = m.step(&s, wait) else {
                continue;
            };
            n += 1;
            assert_eq!(after.tasks[t].pc, s.tasks[t].pc + 1);
            after.tasks[t] = s.tasks[t];
            let (mut a, mut b) = (after, s);
            a.forget_property_ghosts();
            b.forget_property_ghosts();
            assert!(a == b, "the wait did more than move the pc:\n{s:?}");
            let mut acts = vec![];
            m.enabled(&s, &mut acts);
            for x in acts.into_iter().filter(|x| x.actor != wait.actor) {
                if let Some(o) = m.step(&s, x) {
                    assert!(
                        m.step(&o, wait).is_some(),
                        "{x:?} disabled task {t}'s wait:\n{s:?}"
                    );
                }
            }
        }
    }
    n
}

#[test]
fn an_env_tasks_enabled_wait_is_local() {
    // writeback and truncation beside two env tasks (T, T2, and L with
    // its rb-tree of temp pages)
    let mut total = 0;
    for k in [Kernel::T, Kernel::T2, Kernel::L] {
        let mut c = cfg(2, &["env 0", "wb none", "env 1", "truncate 1"]);
        c.kernel = k;
        c.variant = Variant::base(k);
        total += wait_is_local(c);
    }
    let mut c = cfg(2, &["env 0", "write 0+2", "env 1"]);
    write_through_t2(&mut c);
    total += wait_is_local(c);
    assert!(total > 0);
}

/// At its store's start an `env` task may still be named by a READ of
/// its load's read-around: a cached page splits the window into two
/// background READs, and the fault waits for its own page's only. That
/// READ's reply (fuse_readpages_end) writes only the task's attr_version
/// sample and a4 ghost (`answered`, `short_read`), which the model keeps
/// per task for all its READs anyway; no synchronous READ (whose reply
/// goes to `Task::reply`) names the task there.
#[test]
fn an_env_task_at_rest_is_named_only_by_a_background_read() {
    let mut named = 0;
    for wt in [false, true] {
        let mut c = cfg(3, &["env 2", "env 0"]);
        if wt {
            write_through_t2(&mut c);
        }
        c.cached = 0b010;
        c.dirty = 0;
        c.daemon_threads = 2;
        let m = model(c);
        for s in reachable(&m) {
            for t in 0..2 {
                let task = s.tasks[t];
                if Some(task.pc) != m.store_start(t) || task.ph != 0 || task.cur != 0 {
                    continue;
                }
                for r in s.requests().filter(|r| r.task() == Some(t as u8)) {
                    assert!(matches!(r, Req::ReadPages { .. }), "{r:?}\n{s:?}");
                    named += 1;
                }
            }
        }
    }
    assert!(named > 0);
}
