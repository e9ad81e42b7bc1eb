//! Adversarial traces for task slots (slots.rs): a trace checked in
//! fewer slots than it has syscalls must get the verdict it gets with one
//! slot per syscall. Each trace here is built so that a slot or a data
//! version is reused while something of its old syscall could still be
//! named by a later event.

use super::test_trace::{mapping, tr, OPEN};
use super::*;
use serde_json::json;

/// The verdicts with one slot per syscall and with `cap` slots (these
/// traces stay within the limits, so they must be the same).
fn same_in_slots(l: &[&str], cap: usize) -> (String, String) {
    let m = mapping(&tr(json!({}), l));
    assert!(m.cfg.tasks.len() > cap, "the trace must reuse slots");
    let full = check(&m, DEFAULT_BOUND);
    let v = check_in_slots(&m, DEFAULT_BOUND, cap);
    (
        format!("{}: {}", full.kind(), full.short()),
        format!("{}: {}", v.kind(), v.short()),
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
            slots.starts_with(want),
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
    assert_eq!(full.kind(), "violation", "{}", full.short());
    assert_eq!(v.kind(), "conforms", "{}", v.short());
}

/// A truncation's zeros outlive its slot (renamed `V_ZERO`): a read of
/// the cut page after the file grew again returns zeros, never the data
/// the truncation cut; each slot count gives one slot per syscall's
/// verdict.
#[test]
fn zeros_of_a_retired_truncation_are_zeros_and_cut_data_stays_cut() {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pwrite fd=6 off=0 AB",
        "ret T0 pwrite 8192",
        "call T0 fsync fd=6",
        "req 8 WRITE 0 8192 AB cache",
        "reply 8 WRITE",
        "req 10 FSYNC",
        "reply 10 FSYNC",
        "ret T0 fsync 0",
        "call T0 ftruncate fd=6 4096",
        "req 12 SETATTR size=4096",
        "reply 12 SETATTR",
        "ret T0 ftruncate 0",
        "call T0 ftruncate fd=6 8192",
        "req 14 SETATTR size=8192",
        "reply 14 SETATTR",
        "ret T0 ftruncate 0",
        "call T0 pwrite fd=6 off=0 C",
        "ret T0 pwrite 4096",
        "call T0 fsync fd=6",
        "req 16 WRITE 0 4096 C cache",
        "reply 16 WRITE",
        "req 18 FSYNC",
        "reply 18 FSYNC",
        "ret T0 fsync 0",
        "call T0 pread fd=6 off=4096 len=4096",
        "req 20 READ 4096 4096",
    ]);
    for (tags, ok) in [(".", true), ("B", false)] {
        let reply = format!("reply 20 READ tags={tags}");
        let ret = format!("ret T0 pread 4096 data={tags}");
        let mut x = l.clone();
        x.extend([reply.as_str(), ret.as_str()]);
        for cap in [2, 3] {
            let (full, slots) = same_in_slots(&x, cap);
            let want = if ok { "conforms" } else { "violation" };
            assert!(full.starts_with(want), "{tags}: {full}");
            assert!(
                slots.starts_with(want),
                "{tags}: one slot per syscall {full}; {cap} slots {slots}"
            );
        }
    }
}

/// A syscall that writes no data takes no data version: thirteen pages
/// of distinct data (the 13 versions a state can name, all held) and then
/// a read and an fsync still conform. Before, each slot took a version
/// whatever its syscall, and the read was "inconclusive: no free data
/// version". The same trace with the WRITE naming page 0's old data is a
/// violation, so the check is not vacuous.
#[test]
fn a_syscall_that_writes_nothing_takes_no_data_version() {
    let letters: Vec<String> = (0..13u8)
        .map(|i| ((b'A' + i) as char).to_string())
        .collect();
    let calls: Vec<String> = letters
        .iter()
        .enumerate()
        .map(|(i, c)| format!("call T0 pwrite fd=6 off={} {c}", 4096 * i))
        .collect();
    let mut l: Vec<&str> = OPEN.to_vec();
    for c in &calls {
        l.extend([c.as_str(), "ret T0 pwrite 4096"]);
    }
    l.extend([
        "call T0 pread fd=6 off=0 len=4096",
        "ret T0 pread 4096 data=A",
        "call T0 fsync fd=6",
    ]);
    for (tags, ok) in [("ABCDEFGHIJKLM", true), ("NBCDEFGHIJKLM", false)] {
        let w = format!("req 8 WRITE 0 53248 {tags} cache");
        let mut x = l.clone();
        x.extend([
            w.as_str(),
            "reply 8 WRITE",
            "req 10 FSYNC",
            "reply 10 FSYNC",
            "ret T0 fsync 0",
        ]);
        let m = mapping(&tr(json!({}), &x));
        assert_eq!(m.cfg.pages, 13, "one position per page");
        let v = check_in_slots(&m, DEFAULT_BOUND, MODEL_TASKS);
        let want = if ok { "conforms" } else { "violation" };
        assert!(
            format!("{}: {}", v.kind(), v.short()).starts_with(want),
            "{tags}: {}",
            v.short()
        );
    }
}
