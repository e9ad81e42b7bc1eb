//! Unit tests of FUSE over io_uring (uring.rs): what the option accepts,
//! fuse_uring_flush_bg's per-queue slot and the pre-fix order, and that
//! one queue with the fix is the /dev/fuse background queue.

use super::config::*;
use super::step::Step;
use super::tests::{cfg, model, reachable, run, T0, T1};

/// Two dirty pages, one WRITE each (max_pages 1), two workers.
fn two_writes(kernel: Kernel, queues: u8, max_bg: Option<u8>, tasks: &[&str]) -> Config {
    let mut c = cfg(2, tasks);
    c.kernel = kernel;
    c.variant = Variant::base(kernel);
    c.max_pages = 1;
    c.daemon_threads = 2;
    c.uring_queues = queues;
    c.max_background = max_bg;
    c
}

#[test]
fn the_option_needs_a_6_14_kernel_and_a_worker_per_queue() {
    let mut c = two_writes(Kernel::T2, 2, None, &["wb none"]);
    assert!(c.validate().is_ok());
    c.kernel = Kernel::L;
    c.variant = Variant::base(Kernel::L);
    assert!(c.validate().unwrap_err().contains("6.14"));
    let mut c = two_writes(Kernel::T2, 2, None, &["wb none"]);
    c.daemon_threads = 1;
    assert!(c.validate().unwrap_err().contains("daemon_threads"));
    c.uring_queues = 3;
    c.daemon_threads = 3;
    assert!(c.validate().is_err(), "at most MAX_URING_QUEUES");
}

/// A migration is offered only before a step that queues, and its
/// request lands on the other queue; the scratch field is 0 between
/// steps in every reachable state.
#[test]
fn a_migrated_task_queues_on_the_other_cpu() {
    let m = model(two_writes(Kernel::T, 2, None, &["wb none", "fsync"]));
    let mut s = m.initial();
    // T0 writes back until its next step queues a WRITE
    let step = loop {
        let mut acts = Vec::new();
        m.enabled(&s, &mut acts);
        let mine: Vec<Step> = acts.iter().filter(|a| a.actor == T0).map(|a| a.step).collect();
        assert!(!mine.is_empty(), "T0 reaches a queueing step");
        if mine.contains(&Step::UringMigrate) {
            break mine.into_iter().find(|&st| st != Step::UringMigrate).unwrap();
        }
        s = run(&m, &s, T0, mine[0]);
    };
    let home = run(&m, &s, T0, step);
    assert!(!home.fuse_q.is_empty());
    assert_eq!(home.utag, 0, "T0's own CPU is queue 0");
    let moved = run(&m, &s, T0, Step::UringMigrate);
    let moved = run(&m, &moved, T0, step);
    assert_ne!(moved.utag, 0, "after the migration: queue 1");
    assert_eq!(moved.away, 0, "one-shot");
    let _ = T1;
    assert!(reachable(&m).iter().all(|s| s.qsel == 0));
}

/// K-uring-slot: at max_background 1 two queues run two WRITEs; u1
/// bounds them by max_background + Q - 1, and the bound is reached.
#[test]
fn each_queue_runs_one_write_past_max_background() {
    let m = model(two_writes(Kernel::T2, 2, Some(1), &["wb none", "fsync"]));
    let states = reachable(&m);
    assert!(states.iter().all(|s| super::uring::u1(&m, s)));
    assert!(states.iter().any(|s| m.active_background(s) == 2));
}

/// One queue with the fix: the same states as /dev/fuse (the encoding
/// adds nothing while every tag is 0).
#[test]
fn one_queue_with_the_fix_is_the_dev_fuse_queue() {
    let dev = model(two_writes(Kernel::C, 0, Some(1), &["wb none", "fsync"]));
    let ring = model(two_writes(Kernel::C, 1, Some(1), &["wb none", "fsync"]));
    assert_eq!(reachable(&dev).len(), reachable(&ring).len());
}
