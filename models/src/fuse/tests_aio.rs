//! Unit tests of asynchronous direct I/O (aio.rs): the task syntax, the
//! refusals, when io_submit returns, when the completion comes, and the
//! blocking path of an extending write.

use super::aio::AIO_BLOCKING;
use super::config::*;
use super::state::*;
use super::step::Step;
use super::tests::{cfg, enabled, model, run, D0, T0, T1};

/// `pages` pages, nothing cached, FUSE_ASYNC_DIO, the tasks on one
/// thread each unless `thread` says otherwise.
fn aio_cfg(pages: u8, init: u8, tasks: &[&str]) -> Config {
    let mut c = cfg(pages, tasks);
    c.async_dio = true;
    c.init_size = init;
    c.cached = 0;
    c.dirty = 0;
    c
}

#[test]
fn the_aio_prefix_parses_and_prints_back() {
    for s in [
        "aio dio-write 0+2",
        "aio dio-read 1+1",
        "aio odirect-write 0+1",
        "aio odirect-read 0+1",
    ] {
        let t = TaskSpec::parse(s).unwrap();
        assert!(t.is_aio(), "{s}");
        assert_eq!(t.to_string(), s);
    }
    assert!(!TaskSpec::parse("dio-write 0+1").unwrap().is_aio());
    let e = TaskSpec::parse("aio write 0+1").unwrap_err();
    assert!(e.contains("'aio' applies only to"), "{e}");
    assert!(TaskSpec::parse("aio").is_err());
}

#[test]
fn aio_without_async_dio_and_a_signal_to_an_aio_task_are_refused() {
    let mut c = aio_cfg(1, 1, &["aio dio-write 0+1"]);
    c.async_dio = false;
    let e = c.validate().unwrap_err();
    assert!(e.contains("without async_dio"), "{e}");
    let c = aio_cfg(1, 1, &["aio dio-write 0+1", "signal 0"]);
    let e = c.validate().unwrap_err();
    assert!(e.contains("an aio task does not wait"), "{e}");
}

#[test]
fn a_non_extending_aio_write_returns_before_its_reply_and_completes_after() {
    // T0 submits a write inside EOF, then (same thread) ftruncates
    let mut c = aio_cfg(2, 2, &["aio dio-write 1+1", "truncate 1"]);
    c.thread = vec![0, 0];
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::InodeLock);
    assert_eq!(s.tasks[0].aio & AIO_BLOCKING, 0, "inside EOF: not blocking");
    let s = run(&m, &s, T0, Step::RangeHasWriteback);
    assert!(
        enabled(&m, &s, T1).is_empty(),
        "T1 waits for T0's io_submit"
    );
    let s = run(&m, &s, T0, Step::SendWrite);
    assert_eq!(s.fuse_q.len(), 1);
    let s = run(&m, &s, T0, Step::AioQueued);
    assert_eq!(s.ev, Event::AioInFlight);
    assert!(s.rwsem.is_free(), "fuse_dio_unlock after -EIOCBQUEUED");
    // the completion waits for the reply; the thread goes on meanwhile
    assert!(enabled(&m, &s, T0).is_empty());
    assert_eq!(enabled(&m, &s, T1), vec![Step::InodeLock]);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    assert_eq!(s.srv_size, 2);
    let s = run(&m, &s, T0, Step::AioComplete);
    assert!(m.task_done(&s, 0));
    assert_eq!(s.i_size, 2, "no i_size update at completion");
}

#[test]
fn an_extending_aio_write_blocks_and_updates_i_size() {
    let mut c = aio_cfg(2, 1, &["aio dio-write 0+2", "stat"]);
    c.thread = vec![0, 0];
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::InodeLock);
    assert_ne!(s.tasks[0].aio & AIO_BLOCKING, 0, "past EOF: io->blocking");
    let s = run(&m, &s, T0, Step::RangeHasWriteback);
    let s = run(&m, &s, T0, Step::SendWrite);
    // no -EIOCBQUEUED: the task waits with inode_lock held, T1 cannot start
    assert!(enabled(&m, &s, T0).is_empty());
    assert!(enabled(&m, &s, T1).is_empty());
    let s = run(&m, &s, D0, Step::DaemonRead);
    // the server may not answer a blocking aio write short or with an
    // error (fuse_do_truncate is not modelled)
    assert_eq!(enabled(&m, &s, D0), vec![Step::DaemonReply]);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, T0, Step::AioWaited);
    assert_eq!(s.ev, Event::AioBlocking);
    assert_eq!(s.i_size, 2, "fuse_write_update_attr");
    let s = run(&m, &s, T0, Step::UnlockReturn);
    assert!(m.task_done(&s, 0));
}

#[test]
fn a_short_chunk_fails_the_whole_aio_write() {
    // two max_write chunks inside EOF; the first answered short
    let mut c = aio_cfg(2, 2, &["aio dio-write 0+2"]);
    c.max_write = Some(1);
    c.short = 1;
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::RangeHasWriteback);
    let s = run(&m, &s, T0, Step::SendWrite);
    let s = run(&m, &s, T0, Step::SendWrite);
    assert_eq!(s.fuse_q.len(), 2, "every chunk sent before any reply");
    let s = run(&m, &s, T0, Step::AioQueued);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReplyShort);
    assert!(s.tasks[0].failed, "fuse_get_res_by_io: -EIO");
    assert_eq!(s.tasks[0].saved, 0, "io->bytes: the lowest end");
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, T0, Step::AioComplete);
    assert!(m.task_done(&s, 0));
}

#[test]
fn with_the_worker_the_completion_invalidates_before_ki_complete() {
    // T2 + p_aio_inval_worker: an aio O_DIRECT write over a clean cached
    // page that a read re-caches while the WRITE is in flight
    let mut c = aio_cfg(1, 1, &["aio odirect-write 0+1"]);
    c.kernel = Kernel::T2;
    c.variant = Variant::base(Kernel::T2);
    c.variant.p_aio_inval_worker = true;
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbDone);
    let s = run(&m, &s, T0, Step::RangeHasWriteback);
    let s = run(&m, &s, T0, Step::SendWrite);
    let s = run(&m, &s, T0, Step::AioQueued);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    // a page in the cache again (as a racing read would leave it)
    let mut s = s;
    s.pages[0].set(PG_PRESENT | PG_UPTODATE);
    let s = run(&m, &s, T0, Step::AioCompleteWork);
    assert!(!m.task_done(&s, 0), "the worker runs before ki_complete");
    let s = run(&m, &s, T0, Step::InvLock);
    let s = run(&m, &s, T0, Step::InvRemove);
    assert!(!s.pages[0].present(), "the range was invalidated");
    let s = run(&m, &s, T0, Step::AioWorkerDone);
    assert!(m.task_done(&s, 0));
    assert!(s.rwsem.is_free());
}

#[test]
fn the_worker_needs_step_e() {
    let mut c = aio_cfg(1, 1, &["aio odirect-write 0+1"]);
    c.variant.p_aio_inval_worker = true;
    let e = c.validate().unwrap_err();
    assert!(e.contains("b359af8275a9"), "{e}");
}
