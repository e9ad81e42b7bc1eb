//! A fork child's faults count (docs/conformance.md, "How many accesses
//! at once"). traces/threads/forkrace.c (an attack's program, 3 Dec
//! 2026): the parent maps 2 pages MAP_SHARED, closes its fd, forks; the
//! parent and the child load pages 0 and 1 at once; the child covers
//! its copy with an anonymous MAP_FIXED mapping (no mark) and exits
//! holding nothing of the mount. fork_split.jsonl: `wbspec record --
//! forkrace 6000` on 6.18.44 (1 of 15 runs at that delay), where the
//! two faults split the read-around: READ(p1) from the child's pid,
//! READ(p0) from the parent's. Recorded with the `fork` mark of a
//! process holding no mount fd, so the child counts as a second thread
//! of the mapping's memory.
use std::path::Path;

use wbspec_harness::conform::{conform_trace, Class};
use wbspec_harness::trace::{parse_trace, Event};

fn verdict(ev: &[Event]) -> (Class, String) {
    let c = conform_trace(ev, None).unwrap();
    (
        c.class,
        format!("{} {}", c.word, c.detail.unwrap_or_default()),
    )
}

#[test]
fn a_fork_childs_fault_is_counted() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces/threads/fork_split.jsonl");
    let ev = parse_trace(&std::fs::read_to_string(p).unwrap()).unwrap();
    // two READs of one page each, from two processes
    let reads: Vec<(Option<u64>, Option<u32>)> = ev
        .iter()
        .filter(|e| e.ev == "req" && e.op.as_deref() == Some("READ"))
        .map(|e| (e.size, e.pid))
        .collect();
    assert_eq!(reads.len(), 2, "{reads:?}");
    assert!(
        reads.iter().all(|r| r.0 == Some(4096)) && reads[0].1 != reads[1].1,
        "{reads:?}"
    );
    assert!(ev
        .iter()
        .any(|e| e.text.as_deref() == Some(wbspec_harness::record::THREADS_NOTE)));
    let (class, v) = verdict(&ev);
    assert_eq!(class, Class::Conforms, "{v}");
    // the fork mark is what counts the child: without it the mapping's
    // memory has one thread, and the split is no behaviour of one
    let unforked: Vec<Event> = ev
        .into_iter()
        .filter(|e| e.syscall.as_deref() != Some("fork"))
        .collect();
    let (class, v) = verdict(&unforked);
    assert_eq!(class, Class::DoesNotConform, "{v}");
    assert!(
        v.contains("cannot produce a daemon read of READ(p1)"),
        "{v}"
    );
}

/// A fork child's copy of an fd keeps its file open after the parent
/// closes its own and unlinks the name (found by an attack, 3 Dec
/// 2026). fork_unlink_open.jsonl (`wbspec record` on 6.18.44, 4 Dec
/// 2026; a python3 program): open f, pwrite, fork; the parent closes
/// and unlinks f; the child, later, pwrites through its copy and closes
/// it. The recorder names the child's fd by the name it had, `f`: the
/// split used to take those marks for the next file of that name (f#2)
/// while the FLUSH of the child's close went to the old inode, and
/// refused a projection as a bad trace. Now the fd's file is the one
/// its open named, and the unlink of an open file is what it is, not
/// modelled. fork_close_unlink.jsonl: the child closes first, then the
/// parent closes, unlinks, and creates f again: two files, each
/// conforms.
#[test]
fn a_forked_fd_keeps_its_file_past_an_unlink() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces/threads");
    let read = |f: &str| parse_trace(&std::fs::read_to_string(dir.join(f)).unwrap()).unwrap();
    let ev = read("fork_unlink_open.jsonl");
    let (class, v) = verdict(&ev);
    assert_eq!(class, Class::NotModelled, "{v}");
    assert!(v.contains("unlink of a file still open or mapped"), "{v}");
    // without the fork mark the parent's close was the last: the split
    // takes the child's later marks for a new file again, and refuses
    let unforked: Vec<Event> = ev
        .into_iter()
        .filter(|e| e.syscall.as_deref() != Some("fork"))
        .collect();
    let (_, v) = verdict(&unforked);
    assert!(!v.contains("unlink of a file still open"), "{v}");
    let (class, v) = verdict(&read("fork_close_unlink.jsonl"));
    assert_eq!(class, Class::Conforms, "{v}");
    assert!(v.contains("f: conforms; f#2: conforms"), "{v}");
}

/// Two programs an attack recorded on 6.18.44 (4 Dec 2026) where a fork
/// child keeps fd 3 of f while the parent closes its copy, unlinks f,
/// creates it again and gets fd 3 for the new file: by an open
/// (fork_reopen_same_fd.jsonl), or by a dup2 onto fd 3 over /dev/null
/// (fork_dup_onto_copy.jsonl). One table of fds by number cannot say
/// which process's fd 3 a later mark is: the child's exit went to the
/// new file, and conform said VIOLATION of a correct program (the dup2
/// case: a bad-trace refusal). Both are now not modelled, saying why.
#[test]
fn an_fd_number_two_processes_hold_for_two_files_is_not_modelled() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces/threads");
    for (f, why) in [
        (
            "fork_reopen_same_fd.jsonl",
            "an open returned fd 3, which a fork copied and a copy of it still holds",
        ),
        (
            "fork_dup_onto_copy.jsonl",
            "a dup onto fd 3, which a fork copied and a copy of it still holds",
        ),
    ] {
        let ev = parse_trace(&std::fs::read_to_string(dir.join(f)).unwrap()).unwrap();
        let (class, v) = verdict(&ev);
        assert_eq!(class, Class::NotModelled, "{f}: {v}");
        assert!(v.contains(why), "{f}: {v}");
    }
}
