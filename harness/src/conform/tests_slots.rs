//! Adversarial traces for task slots (slots.rs): a trace checked in
//! fewer slots than it has syscalls must get the verdict it gets with one
//! slot per syscall. Each trace here is built so that a slot or a data
//! version is reused while something of its old syscall could still be
//! named by a later event.

use super::test_trace::{mapping, tr, OPEN};
use super::*;
use serde_json::json;

fn kind(v: &Verdict) -> &'static str {
    match v {
        Verdict::Conforms { .. } => "conforms",
        Verdict::Violation { .. } => "violation",
        Verdict::Inconclusive { why: None, .. } => "bound",
        Verdict::Inconclusive { why: Some(_), .. } => "limit",
    }
}

/// One slot per syscall and `cap` slots: the same verdict, or a named
/// limit in slots.
fn same_in_slots(l: &[&str], cap: usize) -> (String, String) {
    let m = mapping(&tr(json!({}), l));
    assert!(m.cfg.tasks.len() > cap, "the trace must reuse slots");
    let full = check(&m, DEFAULT_BOUND);
    let v = check_in_slots(&m, DEFAULT_BOUND, cap);
    (
        format!("{}: {}", kind(&full), full.short()),
        format!("{}: {}", kind(&v), v.short()),
    )
}

/// Two slots over at one issue: the first is reused, the second keeps its
/// trace task (and so its data id) while its version is released. The
/// next free version must not be the one that id still maps to, or a
/// stale tag of that task's data matches the new syscall's data.
///
/// B (page 0) is overwritten by C and gone from every state by the
/// time E takes B's old version; an fsync WRITE that says page 0 holds
/// B is then not a behaviour of the model (one slot per syscall rejects
/// it).
#[test]
fn a_released_version_still_named_by_a_slot_is_not_reassigned() {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pwrite fd=6 off=4096 A",
        "ret T0 pwrite 4096",
        "call T0 pwrite fd=6 off=0 B",
        "ret T0 pwrite 4096",
        "call T0 pwrite fd=6 off=0 C",
        "ret T0 pwrite 4096",
        "call T0 pread fd=6 off=4096 len=4096",
        "ret T0 pread 4096 data=A",
        "call T0 pwrite fd=6 off=0 E",
        "ret T0 pwrite 4096",
        "call T0 fsync fd=6",
    ]);
    for (tags, ok) in [("EA", true), ("BA", false)] {
        let w = format!("req 8 WRITE 0 8192 {tags} cache");
        let mut x = l.clone();
        x.extend([
            w.as_str(),
            "reply 8 WRITE",
            "req 10 FSYNC",
            "reply 10 FSYNC",
            "ret T0 fsync 0",
        ]);
        let (full, slots) = same_in_slots(&x, 2);
        let want = if ok { "conforms" } else { "violation" };
        assert!(full.starts_with(want), "{tags}: {full}");
        assert!(
            slots.starts_with(want) || slots.starts_with("limit"),
            "{tags}: one slot per syscall {full}; two slots {slots}"
        );
    }
}

/// Where slots and one slot per syscall part: a finished background
/// writeback pass starts again when a slot is reused (slots.rs), so in
/// slots one pass stands for any number of them. Three flusher WRITEs
/// of one page, each after a write(2) returned, need three passes with
/// one slot per syscall; in two slots (one the pass's) one pass does.
#[test]
fn a_reused_slot_restarts_finished_background_passes() {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pwrite fd=6 off=0 A",
        "ret T0 pwrite 4096",
        "req 8 WRITE 0 4096 A cache",
        "reply 8 WRITE",
        "call T0 pwrite fd=6 off=0 B",
        "ret T0 pwrite 4096",
        "req 10 WRITE 0 4096 B cache",
        "reply 10 WRITE",
        "call T0 pwrite fd=6 off=0 C",
        "ret T0 pwrite 4096",
        "req 12 WRITE 0 4096 C cache",
        "reply 12 WRITE",
    ]);
    let m = mapping(&tr(json!({}), &l));
    let one = with_flusher(&m, 1).unwrap();
    let full = check(&one, DEFAULT_BOUND);
    let v = check_in_slots(&one, DEFAULT_BOUND, 2);
    assert_eq!(kind(&full), "violation", "{}", full.short());
    assert_eq!(kind(&v), "conforms", "{}", v.short());
}
