//! Unit tests of FUSE_AUTO_INVAL_DATA (autoinval.rs): what
//! fuse_cache_read_iter's GETATTR and fuse_change_attributes_i do with
//! the option, step by step.

use super::model::*;
use super::state::*;
use super::step::Step;
use super::tests::{cfg, model, reachable, run, write_through_t2, D0, T0, T1};

/// The client's own write-through write moves the server's mtime, not
/// the inode's (S_NOCMTIME; fuse_write_update_attr takes no mtime): the
/// next read's GETATTR finds it moved at the same size and invalidates
/// the page the write just filled.
#[test]
fn the_clients_own_write_invalidates_at_the_next_read() {
    let mut c = cfg(1, &["write 0+1", "read 0+1"]);
    write_through_t2(&mut c);
    c.auto_inval_data = true;
    c.cached = 1;
    c.dirty = 0;
    c.thread = vec![0, 0];
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::FillPage);
    let s = run(&m, &s, T0, Step::SendThroughWrite);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    assert_eq!(s.mtime, super::autoinval::MT_STALE);
    let s = run(&m, &s, T0, Step::WriteReply);
    let s = run(&m, &s, T0, Step::UnlockReturn);
    assert!(s.pages[0].present(), "the write left its page cached");
    let s = run(&m, &s, T1, Step::Entry);
    let s = run(&m, &s, T1, Step::SendGetattr);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, T1, Step::GetattrAutoInval);
    assert_eq!(s.mtime, 0, "the inode took the server's mtime");
    let s = run(&m, &s, T1, Step::InvLock);
    let s = run(&m, &s, T1, Step::InvRemove);
    assert!(!s.pages[0].present(), "invalidate_inode_pages2 dropped it");
}

/// Without the option the same read sends no GETATTR and keeps the page.
#[test]
fn without_the_option_a_read_within_eof_sends_no_getattr() {
    let mut c = cfg(1, &["read 0+1"]);
    write_through_t2(&mut c);
    c.cached = 1;
    let m = model(c);
    assert!(reachable(&m)
        .iter()
        .all(|s| !s.fuse_q.iter().any(|r| matches!(r, Req::Getattr { .. }))));
}

/// With writeback_cache (fuse_get_cache_mask != 0) the read's GETATTR
/// never invalidates and never sets the server's size, whatever the
/// server did.
#[test]
fn the_cache_mask_keeps_size_and_mtime() {
    let mut c = cfg(2, &["write 1+1", "read 0+1", "wb none"]);
    c.auto_inval_data = true;
    c.init_size = 1;
    c.cached = 1;
    c.dirty = 0;
    c.daemon_threads = 2;
    let m = model(c);
    for s in reachable(&m) {
        assert_eq!(s.mtime, 0);
        assert!(s.tasks.iter().all(|t| t.mt == 0));
        assert!(s.i_size >= 1);
    }
}

/// A GETATTR answered before an extending write-through write's WRITE
/// reached the server, and applied after the write's
/// fuse_write_update_attr, is dropped (attr_version): the reply's old
/// size does not undo the extension, and nothing is invalidated.
#[test]
fn a_getattr_older_than_the_write_is_dropped() {
    let mut c = cfg(2, &["write 1+1", "read 0+1"]);
    write_through_t2(&mut c);
    c.auto_inval_data = true;
    c.init_size = 1;
    c.cached = 1;
    c.dirty = 0;
    c.daemon_threads = 2;
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T1, Step::Entry);
    let s = run(&m, &s, T1, Step::SendGetattr);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::FillPage);
    let s = run(&m, &s, T0, Step::SendThroughWrite);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, T0, Step::WriteReply);
    assert_eq!(s.i_size, 2);
    let s = run(&m, &s, T1, Step::GetattrStale);
    assert_eq!(s.i_size, 2, "the stale reply's size 1 is not taken");
    assert_eq!(s.mtime, super::autoinval::MT_STALE);
}

/// With valid attributes (`attr_valid`) a read sends GETATTR only after
/// something set STATX_SIZE in fi->inval_mask: not at first, and after
/// the client's own write-through write (fuse_write_update_attr) yes.
#[test]
fn valid_attributes_send_getattr_only_when_invalidated() {
    let mut c = cfg(1, &["read 0+1", "write 0+1", "read 0+1"]);
    write_through_t2(&mut c);
    c.auto_inval_data = true;
    c.attr_valid = true;
    c.cached = 1;
    c.dirty = 0;
    c.thread = vec![0, 0, 0];
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::Entry);
    // no GETATTR: the next step is filemap_read's copy from the cache
    let s = run(&m, &s, T0, Step::ReadCopy);
    let s = run(&m, &s, T1, Step::InodeLock);
    let s = run(&m, &s, T1, Step::FillPage);
    let s = run(&m, &s, T1, Step::SendThroughWrite);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, T1, Step::WriteReply);
    assert_ne!(s.mtime & super::autoinval::MT_INVAL_SIZE, 0);
    let s = run(&m, &s, T1, Step::UnlockReturn);
    let t2 = Actor::Task(2);
    let s = run(&m, &s, t2, Step::Entry);
    let s = run(&m, &s, t2, Step::SendGetattr);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, t2, Step::GetattrAutoInval);
    assert_eq!(s.mtime, 0, "the reply cleared the mask and took the mtime");
}

/// With valid attributes a stat(2) sends GETATTR only when
/// fi->inval_mask has a basic stat (fuse_update_get_attr with
/// STATX_BASIC_STATS); the model tracks STATX_SIZE alone, and a stat
/// that always sent GETATTR took another client's truncation the kernel
/// does not see (remote-truncate, stat, read held b3 and a3 where the
/// kernel's read returns the cached page): refused, in one line.
#[test]
fn valid_attributes_refuse_a_stat_task() {
    let mut c = cfg(2, &["remote-truncate 1", "stat", "read 1+1"]);
    write_through_t2(&mut c);
    c.auto_inval_data = true;
    c.attr_valid = true;
    let e = c.validate().expect_err("attr_valid with a stat task");
    assert!(e.contains("stat") && !e.contains('\n'), "{e}");
    c.attr_valid = false;
    c.validate()
        .expect("attributes that time out: stat sends GETATTR");
}
