//! Unit tests of the server notifications (notify.rs): the two ways a
//! NOTIFY_STORE past EOF and a racing truncation end with i_size and the
//! server's size apart (F-store-trunc), and what the page walk of
//! NOTIFY_INVAL_INODE waits for (F-notify-blocks).

use super::config::*;
use super::model::*;
use super::state::*;
use super::step::Step;
use super::tests::{cfg, model, reachable, run, write_through_t2, D0, T0, T1};

/// Write-through, one cached page of two; T0 truncates to 0, T1 is the
/// server changing page 1 and storing it.
fn store_trunc() -> FuseModel {
    let mut c = cfg(2, &["truncate 0", "notify-store 1+1"]);
    write_through_t2(&mut c);
    c.init_size = 1;
    c.cached = 1;
    c.dirty = 0;
    c.daemon_threads = 2;
    model(c)
}

/// (ii) The server applies SETATTR(size=0) first, then changes page 1
/// and stores it: its file is 2 pages. fuse_notify_store extends i_size
/// to 2 before fuse_do_setattr's reply runs; the reply's i_size_write(0)
/// (no attr_version check in fuse_do_setattr) undoes the later
/// extension. (i) The server changes page 1 first and then applies the
/// SETATTR: it truncated its own change, and its store of it extends
/// i_size past its size. Both end quiescent with i_size and the server's
/// size apart.
#[test]
fn a_store_and_a_truncation_end_apart_both_ways() {
    let m = store_trunc();
    let v = m.ver(1);
    let done = |s: &State| m.all_finished(s) && m.quiescent(s);
    let all = reachable(&m);
    assert!(
        all.iter()
            .any(|s| done(s) && s.i_size == 0 && s.srv_size == 2 && s.srv[1] == v),
        "(ii): the SETATTR reply undoes the store's extension"
    );
    assert!(
        all.iter()
            .any(|s| done(s) && s.i_size == 2 && s.srv_size == 0),
        "(i): the server stores data it truncated"
    );
}

/// The order of (ii), step by step: the extension is there before the
/// SETATTR reply and gone after it.
#[test]
fn the_setattr_reply_overwrites_the_stores_i_size() {
    let m = store_trunc();
    let s = m.initial();
    let s = run(&m, &s, T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::SetNowrite);
    let s = run(&m, &s, T0, Step::WaitNowrite);
    let s = run(&m, &s, T0, Step::SendSetattr);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    assert_eq!(s.srv_size, 0);
    let s = run(&m, &s, T1, Step::NotifyServerWrite);
    let s = run(&m, &s, T1, Step::NotifyStoreSize);
    assert_eq!((s.i_size, s.srv_size), (2, 2));
    let s = run(&m, &s, T0, Step::SetattrReply);
    assert_eq!(s.i_size, 0, "fuse_do_setattr writes the reply's size");
}

/// libfuse: "If there are no dirty pages, this function will never
/// block." The walk waits on a folio a readahead holds locked, with no
/// dirty page anywhere.
#[test]
fn the_inval_walk_waits_on_a_locked_folio_with_nothing_dirty() {
    let mut c = cfg(1, &["read 0+1", "notify-inval 0+1"]);
    write_through_t2(&mut c);
    c.cached = 0;
    c.dirty = 0;
    let m = model(c);
    let blocked = reachable(&m).into_iter().any(|s| {
        !s.pages.iter().any(|p| p.dirty())
            && s.pages[0].locked()
            && matches!(
                m.current_op(&s, 1),
                Some(super::program::Op::Invalidate { .. })
            )
            && m.exec_task(&s, 1).is_none()
    });
    assert!(blocked);
}

/// The notification tasks parse and print back.
#[test]
fn notification_tasks_parse_and_print() {
    for t in [
        "notify-inval 0+2",
        "notify-inval 1+1 whole",
        "notify-inval 0+1 attr",
        "notify-store 1+1",
    ] {
        assert_eq!(TaskSpec::parse(t).unwrap().to_string(), t);
    }
    assert!(TaskSpec::parse("notify-inval 0+1 all").is_err());
    assert!(TaskSpec::parse("notify-store 0+1 x").is_err());
}
