//! Unit tests of step semantics: crop/drop arithmetic, the NOWRITE bias,
//! wake-ups, ghosts and parsing.

use super::config::*;
use super::model::*;
use super::state::*;
use super::step::Step;

pub(super) fn cfg(pages: u8, tasks: &[&str]) -> Config {
    Config {
        kernel: Kernel::T,
        tree: None,
        variant: Variant::base(Kernel::T),
        pages,
        init_size: pages,
        cached: crate::fuse::config::low_mask(pages),
        dirty: crate::fuse::config::low_mask(pages),
        daemon_threads: 1,
        direct_io_allow_mmap: false,
        parallel_dio: false,
        atomic_o_trunc: false,
        folio_blocks: 1,
        writeback_cache: true,
        auto_inval_data: false,
        attr_valid: false,
        max_pages: pages,
        read_max_pages: 0,
        max_kpages: 0,
        read_max_kpages: 0,
        tasks: tasks.iter().map(|t| TaskSpec::parse(t).unwrap()).collect(),
        thread: Vec::new(),
        whole: None,
        versions: Vec::new(),
        max_background: None,
        congestion_threshold: None,
        async_dio: false,
        uring_queues: 0,
        real_pages: [1; MAX_PAGES],
        memcg_v1: false,
        reclaim_env: Default::default(),
        folio_pages: 1,
        blocks_per_page: 1,
        max_read: None,
        max_write: None,
        errors: 0,
        short: 0,
        sub: Default::default(),
        drop: Vec::new(),
    }
}

/// State T2 (its base variant) on a write-through mount.
pub(super) fn write_through_t2(c: &mut Config) {
    c.kernel = Kernel::T2;
    c.variant = Variant::base(Kernel::T2);
    c.writeback_cache = false;
}

pub(super) fn model(c: Config) -> FuseModel {
    FuseModel::new(c).unwrap()
}

/// Runs the enabled action of `actor` named `step`; panics if it is not
/// enabled (so tests also assert enabledness).
pub(super) fn run(m: &FuseModel, s: &State, actor: Actor, step: Step) -> State {
    let mut acts = Vec::new();
    m.enabled(s, &mut acts);
    let a = Action { actor, step };
    assert!(
        acts.contains(&a),
        "{a:?} not enabled; enabled: {acts:?}\n{s:?}"
    );
    m.step(s, a).expect("enabled action has a successor")
}

pub(super) fn enabled(m: &FuseModel, s: &State, actor: Actor) -> Vec<Step> {
    let mut acts = Vec::new();
    m.enabled(s, &mut acts);
    acts.into_iter()
        .filter(|a| a.actor == actor)
        .map(|a| a.step)
        .collect()
}

/// A miss's readahead through to its first READ: the window
/// (`RaWindow`), then page_cache_ra_unbounded's turns, one folio each
/// (`RaAdd`, or `RaPresent` at a folio already there), up to the step
/// that sends: a kick at a present folio (`RaSubmit`) or read_pages
/// after the last turn (`RaSend`). Returns the state and the steps
/// after the window.
pub(super) fn read_around(m: &FuseModel, s: &State, actor: Actor) -> (State, Vec<Step>) {
    let mut s = run(m, s, actor, Step::RaWindow);
    let mut turns = Vec::new();
    loop {
        let steps = enabled(m, &s, actor);
        let step = [Step::RaSubmit, Step::RaSend, Step::RaAdd, Step::RaPresent]
            .into_iter()
            .find(|x| steps.contains(x))
            .unwrap_or_else(|| panic!("no readahead step enabled: {steps:?}"));
        s = run(m, &s, actor, step);
        turns.push(step);
        if matches!(step, Step::RaSubmit | Step::RaSend) {
            return (s, turns);
        }
    }
}

pub(super) const T0: Actor = Actor::Task(0);
pub(super) const T1: Actor = Actor::Task(1);
pub(super) const D0: Actor = Actor::Daemon(0);

/// Flusher builds one 2-page batch and sends it: writectr counts it,
/// both folios are under writeback and clean.
fn flusher_sends(m: &FuseModel) -> State {
    let s = m.initial();
    let s = run(m, &s, T0, Step::WbBegin);
    let s = run(m, &s, T0, Step::WbFolio);
    let s = run(m, &s, T0, Step::WbFolio);
    run(m, &s, T0, Step::WbSend)
}

#[test]
fn writeback_batches_contiguous_folios_into_one_write() {
    let m = model(cfg(2, &["wb none"]));
    let s = flusher_sends(&m);
    assert_eq!(s.writectr, 1);
    assert_eq!(
        s.fuse_q,
        vec![Req::CacheWrite {
            first: 0,
            n: 2,
            sent: 2
        }]
    );
    assert!(s.pages[0].wb() && !s.pages[0].dirty());
    assert!(s.pages[1].wb() && !s.pages[1].dirty());
    assert!(m.task_done(&s, 0));
}

#[test]
fn max_pages_splits_the_batch() {
    let mut c = cfg(2, &["wb none"]);
    c.max_pages = 1;
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbFolio); // sends p0 before adding p1
    assert_eq!(s.fuse_q.len(), 1);
    let s = run(&m, &s, T0, Step::WbSend);
    assert_eq!(s.fuse_q.len(), 2);
    assert_eq!(s.writectr, 2);
}

/// fuse_set_nowrite waits for the sent WRITE; writeback started meanwhile
/// is queued; SETATTR's reply crops the queued WRITE at the new size.
#[test]
fn nowrite_bias_queues_then_release_crops() {
    let m = model(cfg(2, &["wb none", "truncate 1"]));
    let s = m.initial();
    let s = run(&m, &s, T1, Step::InodeLock);
    let s = run(&m, &s, T1, Step::SetNowrite);
    assert_eq!(s.writectr, FUSE_NOWRITE);
    // flusher starts writeback inside the NOWRITE window
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbSend);
    assert!(s.fuse_q.is_empty(), "NOWRITE must hold the WRITE back");
    assert_eq!(s.queued, vec![Wpa { first: 0, n: 2 }]);
    assert!(s.pages[0].wb() && s.pages[1].wb());
    let s = run(&m, &s, T1, Step::WaitNowrite);
    let s = run(&m, &s, T1, Step::SendSetattr);
    assert!(s.size_unstable);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    assert_eq!(s.srv_size, 1);
    let s = run(&m, &s, T1, Step::SetattrReply);
    assert_eq!(s.i_size, 1);
    assert_eq!(s.writectr, 1);
    assert_eq!(
        s.fuse_q,
        vec![Req::CacheWrite {
            first: 0,
            n: 2,
            sent: 1
        }],
        "cropped to the new size"
    );
    assert_eq!(s.ev, Event::Crop);
}

#[test]
fn wait_nowrite_blocks_until_in_flight_write_completes() {
    let m = model(cfg(2, &["wb none", "truncate 1"]));
    let s = flusher_sends(&m);
    let s = run(&m, &s, T1, Step::InodeLock);
    let s = run(&m, &s, T1, Step::SetNowrite);
    assert_eq!(s.writectr, FUSE_NOWRITE + 1);
    assert!(enabled(&m, &s, T1).is_empty(), "truncate must wait");
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    assert!(
        enabled(&m, &s, T1).is_empty(),
        "reply alone does not wake it"
    );
    let s = run(&m, &s, D0, Step::WritepageEnd);
    assert_eq!(s.writectr, FUSE_NOWRITE);
    assert!(!s.pages[0].wb() && !s.pages[1].wb());
    assert_eq!(enabled(&m, &s, T1), vec![Step::WaitNowrite]);
}

#[test]
fn queued_write_wholly_beyond_new_size_is_dropped() {
    let mut c = cfg(2, &["wb none", "truncate 1"]);
    c.max_pages = 1;
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T1, Step::InodeLock);
    let s = run(&m, &s, T1, Step::SetNowrite);
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbSend);
    assert_eq!(s.queued.len(), 2);
    let s = run(&m, &s, T1, Step::WaitNowrite);
    let s = run(&m, &s, T1, Step::SendSetattr);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, T1, Step::SetattrReply);
    // p0 sent whole, p1 dropped: writeback ended without a request
    assert_eq!(
        s.fuse_q,
        vec![Req::CacheWrite {
            first: 0,
            n: 1,
            sent: 1
        }]
    );
    assert_eq!(s.writectr, 1);
    assert!(s.pages[0].wb());
    assert!(!s.pages[1].wb(), "dropped wpa ends writeback (out_free)");
    assert_eq!(s.ev, Event::Drop);
}

#[test]
fn mkwrite_waits_for_writeback_and_is_woken_by_writepage_end() {
    let m = model(cfg(1, &["wb none", "mmap 0"]));
    let s = m.initial();
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbSend);
    let s = run(&m, &s, T1, Step::MkwriteLock);
    assert!(s.pages[0].locked());
    assert!(
        enabled(&m, &s, T1).is_empty(),
        "folio_wait_writeback blocks"
    );
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, D0, Step::WritepageEnd);
    let s = run(&m, &s, T1, Step::MkwriteWait);
    let s = run(&m, &s, T1, Step::MkwriteStore);
    assert!(s.pages[0].dirty() && !s.pages[0].locked());
    assert_eq!(s.pages[0].ver, version_of(1));
}

#[test]
fn write_payload_is_read_when_the_daemon_reads_the_request() {
    // c2: a write(2) after writeback started changes what the daemon gets
    let mut c = cfg(1, &["wb none", "write 0+1"]);
    c.dirty = 1;
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbSend);
    let s = run(&m, &s, T1, Step::InodeLock);
    let s = run(&m, &s, T1, Step::CopyPage); // no wait on writeback in T
    assert!(s.pages[0].dirty() && s.pages[0].wb());
    let s = run(&m, &s, D0, Step::DaemonRead);
    match s.workers[0] {
        Worker::Busy { payload, .. } => assert_eq!(payload[0], version_of(1)),
        w => panic!("worker not busy: {w:?}"),
    }
}

#[test]
fn sync_all_writeback_waits_for_folio_under_writeback() {
    let mut c = cfg(1, &["wb none", "write 0+1", "wb all"]);
    c.dirty = 1;
    let m = model(c);
    let t2 = Actor::Task(2);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbSend);
    let s = run(&m, &s, T1, Step::InodeLock);
    let s = run(&m, &s, T1, Step::CopyPage);
    let s = run(&m, &s, t2, Step::WbBegin);
    let s = run(&m, &s, t2, Step::WbFolio); // locks, sees writeback
    assert!(s.pages[0].locked());
    assert!(enabled(&m, &s, t2).is_empty());
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, D0, Step::WritepageEnd);
    let s = run(&m, &s, t2, Step::WbWaitFolio);
    assert!(s.pages[0].wb() && !s.pages[0].dirty());
    assert_eq!(s.writectr, 0, "not sent before WbSend");
    let s = run(&m, &s, t2, Step::WbSend);
    assert_eq!(s.writectr, 1);
}

/// fuse_set_nowrite's BUG_ON(fi->writectr < 0), reached through enabled
/// steps only (the t-pdio-nested-nowrite path): two
/// FOPEN_PARALLEL_DIRECT_WRITES writers share i_rwsem, a MAP_PRIVATE read
/// fault holds folio 0 locked during its READ, so both find
/// filemap_range_has_writeback true and both enter fuse_sync_writes.
#[test]
fn nested_set_nowrite_is_a_bug() {
    let mut c = cfg(2, &["fault 0", "dio-write 0+1", "dio-write 0+2"]);
    (c.cached, c.dirty, c.parallel_dio, c.daemon_threads) = (0, 0, true, 2);
    let m = model(c);
    let t2 = Actor::Task(2);
    // the fault's read-around: readahead locks the folios (issue 9)
    let s = run(&m, &m.initial(), T0, Step::Entry);
    let (s, turns) = read_around(&m, &s, T0);
    assert_eq!(
        turns,
        [Step::RaAdd, Step::RaAdd, Step::RaSend],
        "one turn per folio"
    );
    assert!(
        s.pages[0].locked(),
        "the fault's readahead holds the folio locked"
    );
    let s = run(&m, &s, T1, Step::DioLockShared);
    let s = run(&m, &s, T1, Step::RangeHasWriteback);
    let s = run(&m, &s, T1, Step::SetNowrite);
    assert_eq!(s.writectr, FUSE_NOWRITE);
    let s = run(&m, &s, t2, Step::DioLockShared);
    let s = run(&m, &s, t2, Step::RangeHasWriteback);
    assert_eq!(s.viol & VIOL_BUG, 0, "no BUG before the second set_nowrite");
    let s = run(&m, &s, t2, Step::SetNowrite);
    assert_ne!(s.viol & VIOL_BUG, 0);
    // without the fault's locked folio a writer finds no writeback and
    // skips fuse_sync_writes: the writers never nest
    let mut c = cfg(2, &["dio-write 0+1", "dio-write 0+2"]);
    (c.cached, c.dirty, c.parallel_dio, c.daemon_threads) = (0, 0, true, 2);
    let m = model(c);
    let s = run(&m, &m.initial(), T0, Step::DioLockShared);
    let s = run(&m, &s, T0, Step::RangeHasWriteback);
    assert!(!enabled(&m, &s, T0).contains(&Step::SetNowrite));
}

#[test]
fn history_helpers() {
    let h = hist_push(hist_push(V_INIT as u64, 3), 5);
    assert_eq!(hist_len(h), 3);
    assert_eq!(hist_list(h), vec![1, 3, 5]);
    assert_eq!(hist_cur(h), 5);
    assert_eq!(hist_pos(h, 3), Some(1));
    assert!(hist_older(h, 1, 5));
    assert!(!hist_older(h, 5, 3));
    assert_eq!(hist_len(0), 1, "slot 0 holds version 0");
}

#[test]
fn task_specs_parse_and_print_back() {
    for t in [
        "write 0+2",
        "mmap 1",
        "wb none",
        "wb all",
        "truncate 1",
        "fsync",
        "close",
        "dio-write 0+1",
        "dio-read 1+2",
        "odirect-write 0+1",
        "odirect-read 0+1",
        "read 0+2",
        "read 1+1 fd=3",
        "munmap",
        "msync 1+1",
        "sync_file_range 0+2",
    ] {
        assert_eq!(TaskSpec::parse(t).unwrap().to_string(), t);
    }
    // the same kernel path as an existing task
    assert_eq!(TaskSpec::parse("fdatasync").unwrap(), TaskSpec::Fsync);
    assert_eq!(
        TaskSpec::parse("sendfile 1+1").unwrap(),
        TaskSpec::Write { first: 1, n: 1 }
    );
    for bad in [
        "",
        "write",
        "write x+1",
        "write 0+0",
        "fsync now",
        "wb some",
        "splice 0",
        "read",
        "read 0+1 fd",
        "read 0+1 fd 0",
        "read 0+1 fd=4",
        "read 0+1 fd=x",
        "read 0+1 file=0",
        "read 0+1 fd=0 more",
        "munmap 0",
        "msync_async",
    ] {
        assert!(TaskSpec::parse(bad).is_err(), "{bad:?} must not parse");
    }
}

#[test]
fn config_validation_names_the_problem() {
    let mut c = cfg(2, &["write 1+2"]);
    assert!(c.validate().unwrap_err().contains("beyond page"));
    c = cfg(2, &["fsync"]);
    c.daemon_threads = 3;
    assert!(c.validate().is_ok(), "three daemon threads are modelled");
    c.daemon_threads = 4;
    assert!(c.validate().unwrap_err().contains("daemon_threads"));
    c = cfg(2, &["fsync"]);
    c.cached = 0;
    assert!(c
        .validate()
        .unwrap_err()
        .contains("dirty page must also be cached"));
    c = cfg(2, &["read 1+2"]);
    assert!(c.validate().unwrap_err().contains("beyond page"));
    c = cfg(2, &["fsync"]);
    c.max_background = Some(0);
    assert!(c.validate().unwrap_err().contains("max_background"));
    c = cfg(2, &["fsync"]);
    c.congestion_threshold = Some(0);
    assert!(c.validate().unwrap_err().contains("congestion_threshold"));
    let mut v = Variant::default();
    assert!(v.set("mut_crop_old_size").is_ok() && v.mut_crop_old_size);
    assert!(v.set("!mut_crop_old_size").is_ok() && !v.mut_crop_old_size);
    assert!(v
        .set("no_such_flag")
        .unwrap_err()
        .contains("unknown variant flag"));
}

/// Only enabled actions are returned, and each has a successor (no `None`
/// transitions: stateright-notes.md G6).
#[test]
fn every_listed_action_is_enabled() {
    use stateright::Model;
    let m = model(cfg(
        2,
        &["write 0+2", "wb none", "truncate 1", "dio-read 0+2"],
    ));
    let mut frontier = vec![m.initial()];
    let mut seen = std::collections::HashSet::new();
    let mut acts = Vec::new();
    while let Some(s) = frontier.pop() {
        if !seen.insert(s.clone()) {
            continue;
        }
        acts.clear();
        m.actions(&s, &mut acts);
        for a in &acts {
            let ns = m
                .next_state(&s, *a)
                .unwrap_or_else(|| panic!("{a:?} listed but not enabled"));
            frontier.push(ns);
        }
    }
    assert!(seen.len() > 100, "explored {} states", seen.len());
}

/// A clean file of `pages` pages, none cached.
fn cold(pages: u8, tasks: &[&str]) -> Config {
    let mut c = cfg(pages, tasks);
    c.cached = 0;
    c.dirty = 0;
    c.daemon_threads = 2;
    c
}

const T2: Actor = Actor::Task(2);

/// docs/findings.md M-ra-batch: page_cache_ra_unbounded adds the
/// window's folios one turn at a time, so two faults whose read-around
/// windows overlap can each add a folio and each send a READ of their
/// own (the kernel did this on 6.18.44: READ(p0) and READ(p1) for two
/// faults on a 2-page file). The fault on page 1 finds page 0 present
/// (the other fault's) and skips it; the fault on page 0 finds page 1
/// present and kicks off its batch of page 0 alone.
#[test]
fn two_faults_split_a_read_around_between_them() {
    let m = model(cold(2, &["fault 0", "fault 1"]));
    let s = run(&m, &m.initial(), T0, Step::Entry);
    let s = run(&m, &s, T0, Step::RaWindow);
    let s = run(&m, &s, T0, Step::RaAdd);
    let s = run(&m, &s, T1, Step::Entry);
    let s = run(&m, &s, T1, Step::RaWindow);
    let s = run(&m, &s, T1, Step::RaPresent);
    let s = run(&m, &s, T1, Step::RaAdd);
    // either READ may go first: read_pages is a step of its own
    let first = run(&m, &s, T0, Step::RaSubmit);
    let first = run(&m, &first, T1, Step::RaSend);
    let s = run(&m, &s, T1, Step::RaSend);
    let s = run(&m, &s, T0, Step::RaSubmit);
    let (p0, p1) = (
        Req::ReadPages {
            task: 0,
            first: 0,
            n: 1,
        },
        Req::ReadPages {
            task: 1,
            first: 1,
            n: 1,
        },
    );
    assert_eq!(first.fuse_q, vec![p0, p1]);
    assert_eq!(s.fuse_q, vec![p1, p0]);
    // neither holds the other's folio: both faults end once answered
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, T0, Step::FaultMapped);
    let s = run(&m, &s, T1, Step::FaultMapped);
    assert!(m.task_done(&s, 0) && m.task_done(&s, 1));
}

/// A read miss at page 0 reads ahead to EOF: one background READ of both
/// folios, locked and not uptodate until fuse_readpages_end; the copy
/// then returns the server's data.
#[test]
fn read_miss_reads_ahead_to_eof_and_the_reply_unlocks() {
    let m = model(cold(2, &["read 0+1"]));
    let s = m.initial();
    let s = run(&m, &s, T0, Step::Entry);
    let s = run(&m, &s, T0, Step::RaWindow);
    let s = run(&m, &s, T0, Step::RaAdd);
    assert!(s.pages[0].locked() && !s.pages[1].present() && s.fuse_q.is_empty());
    let s = run(&m, &s, T0, Step::RaAdd);
    assert!(s.pages[1].locked() && s.fuse_q.is_empty());
    let s = run(&m, &s, T0, Step::RaSend);
    assert_eq!(
        s.fuse_q,
        vec![Req::ReadPages {
            task: 0,
            first: 0,
            n: 2
        }]
    );
    assert!(s.pages[0].locked() && !s.pages[0].has(PG_UPTODATE));
    assert!(s.pages[1].locked());
    assert!(
        enabled(&m, &s, T0).is_empty(),
        "the reader waits on the lock"
    );
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    assert!(!s.pages[1].locked() && s.pages[1].has(PG_UPTODATE));
    assert_eq!(s.pages[0].ver, V_INIT);
    let s = run(&m, &s, T0, Step::ReadCopy);
    assert!(m.task_done(&s, 0));
}

/// ra->prev_pos (docs/findings.md M-ra-prev-pos): on one open file, a
/// read of page 0 (a hit) leaves prev_pos at the end of page 0, so the
/// next read's miss at page 1 is sequential (`index - prev_index <= 1`)
/// and takes the initial window, pages 1-2 up to the cached page 3. On
/// opens of their own the second read is a standalone random read: page
/// 1 alone.
#[test]
fn a_read_after_a_hit_on_the_same_open_reads_ahead() {
    for (shared, n) in [(true, 2), (false, 1)] {
        let tasks: &[&str] = if shared {
            &["read 0+1 fd=0", "read 1+1 fd=0"]
        } else {
            &["read 0+1", "read 1+1"]
        };
        let mut c = cold(4, tasks);
        c.cached = 0b1001;
        let m = model(c);
        let s = m.initial();
        let s = run(&m, &s, T0, Step::Entry);
        let s = run(&m, &s, T0, Step::ReadCopy);
        assert!(m.task_done(&s, 0));
        assert_eq!(s.ra_prev[0], if shared { 2 } else { 0 }, "prev_pos + 1");
        let s = run(&m, &s, T1, Step::Entry);
        let (s, turns) = read_around(&m, &s, T1);
        // the window's last folio, page 3, is cached: its turn submits
        let want: &[Step] = if shared {
            &[Step::RaAdd, Step::RaAdd, Step::RaSubmit]
        } else {
            &[Step::RaAdd, Step::RaSend]
        };
        assert_eq!(turns, want, "shared open: {shared}");
        assert_eq!(
            s.fuse_q,
            vec![Req::ReadPages {
                task: 1,
                first: 1,
                n
            }],
            "shared open: {shared}"
        );
    }
}

/// A read that returns nothing (at EOF) leaves the open's prev_pos as it
/// was (filemap_read's last_pos starts at ra->prev_pos).
#[test]
fn a_read_at_eof_keeps_prev_pos() {
    let mut c = cold(2, &["read 1+1 fd=1"]);
    c.init_size = 1;
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::Entry);
    let s = run(&m, &s, T0, Step::ReadEof);
    assert_eq!(s.ra_prev, [0; MAX_FDS]);
}

/// A read that copied page 0 and then fails (-EIO: read_folio's READ of
/// page 1 failed) returns what it copied, and filemap_read still ends
/// with `ra->prev_pos = last_pos`, the end of page 0. (Page 1 is put in
/// the cache not uptodate by hand, as readahead leaves a folio it
/// skipped while congested: the model's readahead READs cannot fail.)
#[test]
fn a_read_that_fails_after_a_copy_sets_prev_pos() {
    let mut c = cold(2, &["read 0+2 fd=0"]);
    c.cached = 0b01;
    c.errors = parse_errors(&["READ".to_string()]).unwrap();
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::Entry);
    let mut s = run(&m, &s, T0, Step::ReadCopy);
    s.pages[1].set(PG_PRESENT);
    let s = run(&m, &s, T0, Step::ReadFolio);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReplyError);
    let s = run(&m, &s, T0, Step::ReadError);
    assert!(m.task_done(&s, 0));
    assert_eq!(s.ra_prev[0], 2, "prev_pos + 1: the end of page 0");
}

/// filemap_read stops at EOF without a READ; fuse_direct_IO returns 0
/// for an O_DIRECT read at EOF, after its flush, without a READ.
#[test]
fn reads_at_eof_send_nothing() {
    let mut c = cold(2, &["read 1+1", "odirect-read 1+1"]);
    c.init_size = 1;
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::Entry);
    let s = run(&m, &s, T0, Step::ReadEof);
    assert!(m.task_done(&s, 0));
    let s = run(&m, &s, T1, Step::Entry);
    let s = run(&m, &s, T1, Step::WbBegin);
    let s = run(&m, &s, T1, Step::WbDone);
    let s = run(&m, &s, T1, Step::Return);
    assert!(m.task_done(&s, 1) && s.fuse_q.is_empty());
}

/// max_background 1: the second writeback WRITE waits on fc->bg_queue;
/// a foreground FSYNC overtakes it; fuse_request_end of the first
/// flushes it to /dev/fuse.
#[test]
fn bg_queue_holds_writes_beyond_max_background() {
    let mut c = cfg(2, &["wb none", "fsync"]);
    c.max_pages = 1;
    c.max_background = Some(1);
    c.daemon_threads = 2;
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbSend);
    assert_eq!(s.fuse_q.len(), 1);
    assert_eq!(
        s.bg_q,
        vec![Req::CacheWrite {
            first: 1,
            n: 1,
            sent: 1
        }]
    );
    assert_eq!(m.num_background(&s), 2);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    // fuse_request_end's background half (num_background--,
    // flush_bg_queue) runs with the reply, before the end callback
    // fuse_writepage_end: the queued WRITE is on /dev/fuse already
    assert!(s.bg_q.is_empty(), "flushed by fuse_request_end");
    assert_eq!(
        s.fuse_q,
        vec![Req::CacheWrite {
            first: 1,
            n: 1,
            sent: 1
        }]
    );
    assert_eq!(
        m.num_background(&s),
        1,
        "the replied WRITE no longer counts"
    );
    let s = run(&m, &s, D0, Step::WritepageEnd);
    assert!(s.bg_q.is_empty());
    assert_eq!(s.fuse_q.len(), 1);
}

/// A readahead READ is not forced: with fc->blocked (num_background at
/// max_background) fuse_get_req waits, holding the locked folios; WB_SYNC_NONE
/// writeback returns at once while congested.
#[test]
fn readahead_waits_in_fuse_get_req_and_wb_skips_when_congested() {
    let mut c = cfg(2, &["wb none", "read 1+1", "wb none"]);
    c.cached = 1;
    c.dirty = 1;
    c.max_background = Some(1);
    c.congestion_threshold = Some(1);
    c.daemon_threads = 2;
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbSend);
    assert!(m.bg_blocked(&s));
    let s = run(&m, &s, T1, Step::Entry);
    // read 1+1 of a fresh open at page 1 with page 0 cached: a standalone
    // small random read (async_size 0), so no congestion skip
    let s = run(&m, &s, T1, Step::RaWindow);
    let s = run(&m, &s, T1, Step::RaAdd);
    assert!(s.pages[1].locked() && s.tasks[1].ra != 0);
    // read_pages is next: fuse_readahead checks congestion (async_size
    // 0 < 1 page: not skipped), then fuse_get_req waits
    assert!(s.tasks[1].ph == super::read::PH_RA);
    assert!(super::properties::w_ra_blocked(&m, &s));
    let s = run(&m, &s, T1, Step::RaGetWait);
    assert!(s.tasks[1].ph == super::read::PH_RA_GET);
    assert!(super::properties::w_ra_blocked(&m, &s));
    assert!(enabled(&m, &s, T1).is_empty(), "fuse_get_req waits");
    let s = run(&m, &s, T2, Step::WbCongested);
    assert!(m.task_done(&s, 2));
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, D0, Step::WritepageEnd);
    let s = run(&m, &s, T1, Step::RaSend);
    assert_eq!(
        s.fuse_q,
        vec![Req::ReadPages {
            task: 1,
            first: 1,
            n: 1
        }]
    );
}
/// A caching open makes a FOPEN_PARALLEL_DIRECT_WRITES writer take i_rwsem
/// exclusively; without one it takes it shared and counts in iocachectr.
#[test]
fn dio_lock_mode_follows_the_io_mode() {
    let mut c = cfg(2, &["dio-write 0+1"]);
    c.parallel_dio = true;
    c.dirty = 0;
    let m = model(c);
    let s = m.initial();
    assert_eq!((s.iocachectr, s.cache_io_mode), (0, false));
    let s = run(&m, &s, T0, Step::DioLockShared);
    assert_eq!((s.iocachectr, s.rwsem.readers), (-1, 1));
    let mut c = cfg(2, &["write 1+1", "dio-write 0+1"]);
    c.parallel_dio = true;
    c.dirty = 0;
    let m = model(c);
    let s = m.initial();
    assert_eq!((s.iocachectr, s.cache_io_mode), (1, true));
    let s = run(&m, &s, T1, Step::InodeLock);
    assert_eq!(s.rwsem.owner, 1, "FUSE_I_CACHE_IO_MODE: exclusive");
}

/// `tasks` (task 0 `wb none`, task 1 `fsync`) with the server failing
/// writeback WRITEs: task 0's WRITE of page 0 fails (mapping_set_error:
/// errseq and AS_EIO), then task 1's fsync runs to its error check.
fn failed_writeback_then_fsync(tasks: &[&str]) -> (FuseModel, State) {
    let mut c = cfg(1, tasks);
    c.errors = parse_errors(&["WRITE".to_string()]).unwrap();
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbSend);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReplyError);
    assert!(s.as_eio && s.wb_err == 1 && s.lost == 1);
    let s = run(&m, &s, D0, Step::WritepageEnd);
    let s = run(&m, &s, T1, Step::Entry);
    let s = run(&m, &s, T1, Step::InodeLock);
    let s = run(&m, &s, T1, Step::WbBegin);
    let s = run(&m, &s, T1, Step::WbDone);
    let s = run(&m, &s, T1, Step::SetNowrite);
    let s = run(&m, &s, T1, Step::SyncWritesDone);
    (m, s)
}

/// A failed writeback WRITE sets the mapping error; fsync reports it
/// through the fd's errseq cursor and sends no FSYNC.
#[test]
fn failed_writeback_write_is_reported_by_fsync() {
    let (_, s) = failed_writeback_then_fsync(&["wb none", "fsync"]);
    // the check ran inline: error reported, FSYNC skipped
    assert!(s.fuse_q.is_empty() && !s.as_eio && s.tasks[1].wb_seen == 1);
    assert_eq!(s.ev, Event::ErrReported);
    assert_eq!(s.viol & VIOL_F1, 0);
}

/// F-close-eio: after one fd's fsync reported a failed writeback WRITE,
/// close() of another fd finds AS_EIO cleared and returns 0. The kernel's
/// contract (f1: fsync on every fd, errseq) holds; the stricter f1-close
/// is violated.
#[test]
fn close_after_another_fds_fsync_violates_only_the_stricter_property() {
    let (m, s) = failed_writeback_then_fsync(&["wb none", "fsync", "close"]);
    assert!(!s.as_eio && s.viol & VIOL_F1 == 0 && s.viol2 & VIOL2_F1_CLOSE == 0);
    let s = run(&m, &s, T2, Step::Entry);
    let s = run(&m, &s, T2, Step::WbBegin);
    let s = run(&m, &s, T2, Step::WbDone);
    assert_eq!(s.viol & VIOL_F1, 0, "f1 (fsync, errseq) holds");
    assert_ne!(s.viol2 & VIOL2_F1_CLOSE, 0, "f1-close is violated");
}

/// Bad `errors` entries and impossible io-mode combinations are refused.
#[test]
fn errors_and_io_modes_are_validated() {
    assert!(parse_errors(&["OPEN".to_string()])
        .unwrap_err()
        .contains("unknown request 'OPEN'"));
    let mut c = cfg(1, &["dio-mmap 0"]);
    c.dirty = 0;
    assert!(c.validate().unwrap_err().contains("ENODEV"));
    c.direct_io_allow_mmap = true;
    assert!(c.validate().is_ok());
    let mut c = cfg(1, &["remote-truncate 0"]);
    c.dirty = 0;
    assert!(c.validate().unwrap_err().contains("write-through"));
    c.writeback_cache = false;
    assert!(c.validate().is_ok());
    assert_eq!(
        TaskSpec::parse("open trunc direct").unwrap(),
        TaskSpec::Open {
            trunc: true,
            keep_cache: false,
            direct: true
        }
    );
    assert_eq!(
        TaskSpec::parse("close release").unwrap(),
        TaskSpec::CloseRelease
    );
}

/// Every state reachable from the initial one (depth-first).
pub(super) fn reachable(m: &FuseModel) -> Vec<State> {
    reachable_from(m, m.initial(), |_, _, _| {})
}

/// Every state reachable from `s0` (depth-first), each transition shown
/// to `edge` (state, action, successor).
pub(super) fn reachable_from(
    m: &FuseModel,
    s0: State,
    mut edge: impl FnMut(&State, Action, &State),
) -> Vec<State> {
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![s0];
    let mut out = Vec::new();
    while let Some(s) = todo.pop() {
        if !seen.insert(s) {
            continue;
        }
        let mut acts = Vec::new();
        m.enabled(&s, &mut acts);
        for a in acts {
            if let Some(n) = m.step(&s, a) {
                edge(&s, a, &n);
                todo.push(n);
            }
        }
        out.push(s);
    }
    out
}

/// F-short-read: another client shrinks the file; a read's short READ at
/// page 1 sets i_size to its offset, a size the server never had. That is
/// the upper bound fuse_read_update_size documents ("Short read means EOF.
/// If file size is larger, truncate it"): a4, the contract, holds in
/// every reachable state; the stricter a4-exact is violated in some.
#[test]
fn a_short_reads_upper_bound_violates_only_the_stricter_property() {
    let mut c = cold(2, &["remote-truncate 0", "read 1+1"]);
    write_through_t2(&mut c);
    let states = reachable(&model(c));
    assert!(states.iter().all(|s| s.viol2 & VIOL2_A4 == 0), "a4 holds");
    assert!(
        states
            .iter()
            .any(|s| s.viol2 & VIOL2_A4_EXACT != 0 && s.i_size == 1),
        "a4-exact is violated: i_size 1 page, a size the server never had"
    );
}

/// Every form of the task syntax that unknown-task errors print parses,
/// one form per kind, and the error lists them all.
#[test]
fn the_task_syntax_is_what_the_parser_accepts() {
    let mut kinds = std::collections::BTreeSet::new();
    for form in TASK_SYNTAX {
        assert!(
            kinds.insert(form.split_whitespace().next().unwrap()),
            "{form}"
        );
        for t in crate::spec::task_syntax_instances(form) {
            assert!(TaskSpec::parse(&t).is_ok(), "{form}: {t:?} does not parse");
        }
    }
    let e = TaskSpec::parse("dio-wrote 0+1").unwrap_err();
    for form in TASK_SYNTAX {
        assert!(e.contains(form), "{e}");
    }
}

/// Issue 17: `validate` shifted `cached >> p` over `0..pages` (with
/// folio_blocks > 1) before it range-checked `pages`: a shift overflow in
/// a debug build. Out-of-range pages are now an error first, whatever
/// else the configuration says.
#[test]
fn pages_are_range_checked_before_any_shift() {
    for pages in [0u8, 17, 64, 200, 255] {
        let mut c = cfg(1, &["fsync"]);
        c.kernel = Kernel::C;
        c.variant = Variant::base(Kernel::C);
        c.folio_blocks = 2;
        c.pages = pages;
        c.init_size = 0;
        c.cached = 0xff;
        let e = c.validate().unwrap_err();
        assert!(e.contains("pages must be 1..="), "{pages}: {e}");
    }
}

/// `threads = [[...]]`: a thread's second syscall is not enabled until
/// its first has returned; a task of another thread is.
#[test]
fn thread_runs_its_syscalls_in_order() {
    let mut c = cfg(1, &["write 0+1", "fsync", "truncate 0"]);
    c.thread = vec![0, 0, 1];
    c.dirty = 0;
    let m = model(c);
    let s = m.initial();
    assert!(enabled(&m, &s, T1).is_empty(), "fsync waits for the write");
    assert!(!enabled(&m, &s, Actor::Task(2)).is_empty());
    // run the write to its return: then the fsync may start
    let mut s = s;
    while !m.task_done(&s, 0) {
        let step = enabled(&m, &s, T0)[0];
        s = run(&m, &s, T0, step);
    }
    assert!(!enabled(&m, &s, T1).is_empty());
}

#[test]
fn thread_indices_are_validated() {
    let mut c = cfg(1, &["write 0+1", "fsync"]);
    c.thread = vec![0];
    assert!(c.validate().unwrap_err().contains("2 tasks"));
    c.thread = vec![0, 2];
    assert_eq!(c.validate().unwrap_err(), "thread 1 has no task");
    c.thread = vec![1, 0];
    assert!(c.validate().is_ok());
}

#[test]
fn threads_key_flattens_thread_by_thread() {
    let t = |s: &str| Config::from_table(&s.parse::<toml::Table>().unwrap());
    let base = "kernel = \"T2\"\npages = 1\ninit_size = 1\n";
    let c = t(&format!(
        "{base}threads = [[\"write 0+1\", \"fsync\"], [\"truncate 0\"]]"
    ))
    .unwrap();
    assert_eq!(c.thread, vec![0, 0, 1]);
    assert_eq!(c.pred(1), Some(0));
    assert_eq!(c.pred(2), None);
    let both = t(&format!(
        "{base}tasks = [\"fsync\"]\nthreads = [[\"fsync\"]]"
    ));
    assert_eq!(both.unwrap_err(), "give tasks or threads, not both");
    let empty = t(&format!("{base}threads = [[\"fsync\"], []]"));
    assert_eq!(empty.unwrap_err(), "thread 1 has no task");
    assert!(t(base).unwrap_err().contains("tasks or threads"));
}
