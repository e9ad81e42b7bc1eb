//! Unit tests of fuse_perform_write's max_write loop (issue 10): a
//! write-through write(2) larger than max_write goes as one WRITE per
//! chunk under the one inode_lock; a short or failed reply ends the loop.

use super::config::*;
use super::model::*;
use super::state::*;
use super::step::Step;
use super::tests::{cfg, enabled, model, run, write_through_t2, D0, T0, T1};

/// Write-through, 2 pages, i_size 1, `write 0+2` in max_write = 1
/// chunks, and a stat.
fn split_cfg() -> Config {
    let mut c = cfg(2, &["write 0+2", "stat"]);
    write_through_t2(&mut c);
    c.init_size = 1;
    c.cached = 1;
    c.dirty = 0;
    c.max_write = Some(1);
    c
}

/// The first chunk: lock, fill page 0, send, the daemon applies it, the
/// reply is handled. The task is then between the two chunks.
fn first_chunk(m: &FuseModel) -> State {
    let s = m.initial();
    let s = run(m, &s, T0, Step::InodeLock);
    let s = run(m, &s, T0, Step::FillPage);
    assert!(
        s.size_unstable,
        "an extending write sets SIZE_UNSTABLE once, before the loop"
    );
    let s = run(m, &s, T0, Step::SendThroughWrite);
    let s = run(m, &s, D0, Step::DaemonRead);
    let s = run(m, &s, D0, Step::DaemonReply);
    run(m, &s, T0, Step::Reply)
}

#[test]
fn chunks_then_one_update_attr() {
    let m = model(split_cfg());
    let s = first_chunk(&m);
    assert_eq!(s.srv_size, 1);
    assert_eq!(s.i_size, 1, "i_size waits for fuse_write_update_attr");
    assert!(m.in_through_gap(&s, 0));
    // the second chunk: fill page 1, send, reply, then the update
    let s = run(&m, &s, T0, Step::FillPage);
    let s = run(&m, &s, T0, Step::SendThroughWrite);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, T0, Step::Reply);
    assert!(!m.in_through_gap(&s, 0));
    assert_eq!(s.srv_size, 2);
    let s = run(&m, &s, T0, Step::WriteReply);
    assert_eq!(s.i_size, 2);
    assert!(!s.size_unstable);
}

#[test]
fn a_stat_between_chunks_is_a_gap_step_and_stale() {
    let m = model(split_cfg());
    let s = first_chunk(&m);
    let s = run(&m, &s, T1, Step::SendGetattr);
    assert_eq!(s.ev, Event::ThroughGap);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    // the server already has 2 pages? no: 1 (chunk 2 not sent); the reply
    // is ignored all the same (SIZE_UNSTABLE)
    let s = run(&m, &s, T1, Step::GetattrStale);
    assert_eq!(s.i_size, 1);
}

#[test]
fn a_short_chunk_ends_the_loop() {
    let mut c = split_cfg();
    c.short = 1; // WRITE
    let m = model(c);
    let s = m.initial();
    let s = run(&m, &s, T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::FillPage);
    let s = run(&m, &s, T0, Step::SendThroughWrite);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReplyShort);
    let s = run(&m, &s, T0, Step::Reply);
    assert_eq!(s.ev, Event::ShortIo);
    assert!(
        !s.pages[0].has(PG_UPTODATE),
        "the unwritten folio is not left uptodate"
    );
    // no second chunk: straight to fuse_write_update_attr, i_size kept
    assert_eq!(enabled(&m, &s, T0), vec![Step::WriteReply]);
    let s = run(&m, &s, T0, Step::WriteReply);
    assert_eq!(s.i_size, 1);
    assert!(!s.size_unstable);
}

#[test]
fn unsplit_program_is_unchanged() {
    let mut c = split_cfg();
    c.max_write = Some(2);
    let m = model(c);
    assert!(!m.split_through(0));
    let s = m.initial();
    let s = run(&m, &s, T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::FillPage);
    let s = run(&m, &s, T0, Step::FillPage);
    run(&m, &s, T0, Step::SendThroughWrite);
}

/// fuse_perform_write returns the bytes written, an error only if nothing
/// was: a failed second chunk leaves write(2) successful (`failed` false)
/// with i_size at the end of the first chunk.
#[test]
fn a_failed_second_chunk_returns_the_first() {
    let mut c = split_cfg();
    c.errors = 1; // WRITE
    let m = model(c);
    let s = first_chunk(&m);
    let s = run(&m, &s, T0, Step::FillPage);
    let s = run(&m, &s, T0, Step::SendThroughWrite);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReplyError);
    let s = run(&m, &s, T0, Step::Reply);
    assert_eq!(s.tasks[0].saved, 1);
    let s = run(&m, &s, T0, Step::WriteReply);
    assert!(!s.tasks[0].failed);
    assert_eq!(s.i_size, 1);
    assert!(!s.pages[1].has(PG_UPTODATE));
}
