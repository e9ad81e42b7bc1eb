//! Unit tests of the transport (transport.rs): what fuse_abort_conn ends
//! and how, the requests refused after it, and the timeout's guard.

use super::config::*;
use super::model::*;
use super::state::*;
use super::step::Step;
use super::tests::{cfg, enabled, model, run, D0, T0, T1};

/// One dirty page written back by T0 (`wb none`), T1 aborts, T2 fsyncs.
fn wb_abort() -> (FuseModel, State) {
    let m = model(cfg(1, &["wb none", "abort", "fsync"]));
    let s = m.initial();
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbSend);
    (m, s)
}

#[test]
fn abort_ends_a_writeback_write_with_its_error() {
    let (m, s) = wb_abort();
    assert!(s.pages[0].wb() && s.writectr == 1 && s.fuse_q.len() == 1);
    // the daemon has read it: on a processing list
    let s = run(&m, &s, D0, Step::DaemonRead);
    let err0 = s.wb_err;
    let s = run(&m, &s, T1, Step::AbortConn);
    assert_eq!(s.ev, Event::AbortWb);
    assert!(!s.pages[0].wb(), "fuse_writepage_finish ended PG_writeback");
    assert!(!s.pages[0].dirty(), "the folio is left clean");
    assert_eq!(s.writectr, 0);
    assert_ne!(s.wb_err, err0, "mapping_set_error");
    assert!(s.as_eio);
    assert_eq!((s.losses, s.lost), (1, 1));
    assert!(matches!(s.workers[0], Worker::Idle));
    // the daemon reads nothing more; the fsync reports the error
    assert!(enabled(&m, &s, D0).is_empty());
}

#[test]
fn after_the_abort_requests_fail_at_once() {
    let m = model(cfg(1, &["abort", "fsync"]));
    let s = m.initial();
    let s = run(&m, &s, T0, Step::AbortConn);
    assert!(FuseModel::aborted(&s));
    // fsync: its writeback frees the dirty page's WRITE unsent
    let s = run(&m, &s, T1, Step::Entry);
    let s = run(&m, &s, T1, Step::InodeLock);
    let s = run(&m, &s, T1, Step::WbBegin);
    let s = run(&m, &s, T1, Step::WbFolio);
    let s = run(&m, &s, T1, Step::WbSend);
    assert_eq!(s.ev, Event::AbortUnsent);
    assert!(s.fuse_q.is_empty() && s.writectr == 0 && !s.pages[0].wb());
    assert_eq!((s.losses, s.lost), (0, 1), "freed unsent: no errseq error");
    // fuse_sync_writes; file_check_and_advance_wb_err finds nothing
    let s = run(&m, &s, T1, Step::SetNowrite);
    let s = run(&m, &s, T1, Step::SyncWritesDone);
    assert_eq!(s.viol & VIOL_F1, 0, "f1 counts only WRITEs that were sent");
    // then FSYNC is refused (-ENOTCONN): nothing queued, the reply is there
    let s = run(&m, &s, T1, Step::SendFsync);
    assert_eq!(s.ev, Event::Refused);
    assert!(s.fuse_q.is_empty());
    let s = run(&m, &s, T1, Step::Reply);
    assert!(s.tasks[1].failed);
}

#[test]
fn the_timeout_fires_only_with_a_request_outstanding() {
    let mut c = cfg(1, &["wb none", "timeout"]);
    c.daemon_threads = 2;
    let m = model(c);
    let s = m.initial();
    assert!(enabled(&m, &s, T1).is_empty(), "nothing outstanding yet");
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbSend);
    let a = run(&m, &s, T1, Step::TimeoutAbort);
    assert_eq!(a.ev, Event::TimeoutAbort);
    assert!(!a.pages[0].wb());
    // or the WRITE completes, and the timer never fires
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, D0, Step::WritepageEnd);
    let s = run(&m, &s, T1, Step::TimeoutIdle);
    assert!(!FuseModel::aborted(&s) && m.all_finished(&s));
}

#[test]
fn the_timeout_is_refused_on_l_and_with_open() {
    let mut c = cfg(1, &["wb none", "timeout"]);
    c.kernel = Kernel::L;
    c.variant = Variant::base(Kernel::L);
    let e = c.validate().unwrap_err();
    assert!(e.contains("6.14"), "{e}");
    let c = cfg(1, &["open", "abort"]);
    let e = c.validate().unwrap_err();
    assert!(e.contains("no error path"), "{e}");
}

/// Runs actor `a`'s first enabled step until `done` holds.
fn run_until(m: &FuseModel, s: &State, a: Actor, done: impl Fn(&State) -> bool) -> State {
    let mut s = *s;
    for _ in 0..32 {
        if done(&s) {
            return s;
        }
        let st = enabled(m, &s, a)[0];
        s = run(m, &s, a, st);
    }
    panic!("not reached");
}

fn dio_signal(task: &str) -> (FuseModel, State) {
    let mut c = cfg(2, &["dio-write 0+2", task]);
    c.init_size = 1;
    c.cached = 1;
    c.dirty = 0;
    c.daemon_threads = 2;
    let m = model(c);
    let s = m.initial();
    assert!(enabled(&m, &s, T1).is_empty(), "no request to signal yet");
    let s = run_until(&m, &s, T0, |s| !s.fuse_q.is_empty());
    (m, s)
}

#[test]
fn sigkill_takes_back_a_pending_request_only() {
    let (m, s) = dio_signal("kill 0");
    let k = run(&m, &s, T1, Step::Signal);
    assert_eq!(k.ev, Event::IntrBailout);
    assert!(k.fuse_q.is_empty() && k.tasks[0].reply == REPLY_ERR);
    // once the daemon read it, the task waits for the reply
    let s = run(&m, &s, D0, Step::DaemonRead);
    let k = run(&m, &s, T1, Step::Signal);
    assert_eq!(k.ev, Event::Interrupt);
    assert!(matches!(k.workers[0], Worker::Busy { .. }));
    assert_eq!(k.tasks[0].reply, NONE);
    // the server may answer the interrupted WRITE with -EINTR, or do it
    let steps = enabled(&m, &k, D0);
    assert!(steps.contains(&Step::DaemonReplyError) && steps.contains(&Step::DaemonReply));
    let e = run(&m, &k, D0, Step::DaemonReplyError);
    assert_eq!(e.ev, Event::IntrEintr);
    assert_eq!((e.intr, e.tasks[0].reply), (0, REPLY_ERR));
}

#[test]
fn a_signal_is_no_bailout_and_flush_is_forced() {
    let (m, s) = dio_signal("signal 0");
    let k = run(&m, &s, T1, Step::Signal);
    assert_eq!(k.ev, Event::Interrupt, "not fatal: the request stays");
    assert_eq!(k.fuse_q.len(), 1);
    let mut c = cfg(1, &["close", "kill 0"]);
    c.dirty = 0;
    let m = model(c);
    let s = run_until(&m, &m.initial(), T0, |s| !s.fuse_q.is_empty());
    let k = run(&m, &s, T1, Step::Signal);
    assert_eq!(k.ev, Event::Interrupt, "FR_FORCE: FLUSH is not taken back");
    assert_eq!(k.fuse_q.len(), 1);
}
