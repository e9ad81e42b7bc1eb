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
        let mine: Vec<Step> = acts
            .iter()
            .filter(|a| a.actor == T0)
            .map(|a| a.step)
            .collect();
        assert!(!mine.is_empty(), "T0 reaches a queueing step");
        if mine.contains(&Step::UringMigrate) {
            break mine
                .into_iter()
                .find(|&st| st != Step::UringMigrate)
                .unwrap();
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

/// A queue with two entries and max_background >= 2 is refused: there
/// fuse_uring_flush_bg can move two requests at once, only one entry gets
/// one, and fuse_uring_queue_fuse_req hands a new foreground request to
/// the idle entry ahead of the other (uring.rs serves a queue FIFO).
/// One entry per queue, or max_background 1 (at most one request moved
/// per flush), or no bound (the background lists stay empty) is accepted.
#[test]
fn a_queue_with_two_entries_is_refused_under_a_bound_of_two() {
    let mut c = two_writes(Kernel::T2, 2, Some(2), &["wb none", "fsync"]);
    c.daemon_threads = 3;
    let e = c.validate().unwrap_err();
    assert!(e.contains("two entries") && !e.contains('\n'), "{e}");
    c.max_background = Some(1);
    assert!(c.validate().is_ok());
    c.max_background = None;
    assert!(c.validate().is_ok());
    c.daemon_threads = 2;
    c.max_background = Some(2);
    assert!(c.validate().is_ok());
}

/// The CPU choice is per step, not per request: a step that queues two
/// requests puts both on one queue. Readahead sends every READ of a
/// batch in one step (RaSubmit, RaSend; here the fault's readahead sends
/// two: max_read 3 pages, 2-page folios),
/// where the kernel's fuse_readahead can be preempted and migrated
/// between its fuse_send_readpages calls. docs/model.md ("Which CPU")
/// states this as an assumption; if the step is ever split per request,
/// this test fails and that text must change.
#[test]
fn one_step_queues_its_requests_on_one_queue() {
    // t-lf-readahead-cap (47-large-folios.toml) on a ring
    let table: toml::Table = toml::from_str(
        r#"
kernel = "T"
variant = ["lf_cap_max_read"]
folio_pages = 2
max_read = 3
pages = 4
init_size = 4
daemon_threads = 2
uring_queues = 2
tasks = ["readahead 0+4", "fault 2"]
"#,
    )
    .unwrap();
    let c = Config::from_table(&table).unwrap();
    let m = model(c);
    let reads = |s: &super::state::State| -> Vec<u8> {
        let mut q: Vec<u8> = (0..s.fuse_q.len())
            .filter(|&i| matches!(s.fuse_q[i], super::state::Req::ReadPages { .. }))
            .map(|i| ((s.utag >> i) & 1) as u8)
            .collect();
        q.extend(
            (0..s.bg_q.len())
                .filter(|&i| matches!(s.bg_q[i], super::state::Req::ReadPages { .. }))
                .map(|i| (s.bgtag >> i) & 1),
        );
        q
    };
    let mut two = 0;
    for s in reachable(&m) {
        let mut acts = Vec::new();
        m.enabled(&s, &mut acts);
        for a in acts.into_iter().filter(|a| a.step != Step::UringMigrate) {
            let n = m.step(&s, a).unwrap();
            if reads(&n).len() >= reads(&s).len() + 2 {
                assert!(matches!(a.step, Step::RaSend | Step::RaSubmit), "{a:?}");
                two += 1;
                let q = reads(&n);
                assert!(q.iter().all(|&x| x == q[0]), "one step, one queue: {q:?}");
            }
        }
    }
    assert!(two > 0, "some readahead step queues two READs");
}

/// uring_bg_finish_first cannot act at max_background 1: the old order's
/// fuse_uring_flush_bg sees fc->active_background >= 1 (the ending
/// request still counted), so it moves only by the per-queue slot, when
/// the queue has none active; with the fix, active_background < 1 means
/// none active anywhere. The same states either way (so the -bg1 twins
/// say nothing about the switch; 28-uring.toml's [[unobservable]]).
#[test]
fn the_fix_is_a_no_op_at_max_background_one() {
    for q in [1, 2] {
        let old = two_writes(Kernel::T2, q, Some(1), &["wb none", "fsync"]);
        let mut fix = old.clone();
        fix.variant.uring_bg_finish_first = true;
        let a: std::collections::HashSet<_> = reachable(&model(old)).into_iter().collect();
        let b: std::collections::HashSet<_> = reachable(&model(fix)).into_iter().collect();
        assert_eq!(a, b, "{q} queues");
    }
}
