//! The environment's accesses in flight at once (envmap.rs
//! `env_threads`, search.rs `EnvCtx::may_begin`): in a trace whose
//! recorder marked every thread (`record::THREADS_NOTE`), at most one
//! per thread of the memories that made a mapping of the file, since a
//! thread handles one page fault at a time.

use super::envmap::env_threads;
use super::tests_env_atk2::{recorded, verdict};
use super::*;
use crate::record::THREADS_NOTE;
use serde_json::json;

/// A recording with the note, `extra` (thread marks), and a mapping of
/// 2 pages by T0 that is unmapped with nothing written.
fn mapped(extra: &[&'static str]) -> Vec<Event> {
    let mut v: Vec<&str> = vec![THREADS_NOTE];
    v.extend(extra);
    v.extend(super::tests_env::lines(
        "call T0 mmap fd=6 off=0 len=8192 shared prot=rw",
        &["call T0 munmap off=0 len=8192", "ret T0 munmap 0"],
        &[],
    ));
    recorded(json!({}), &v)
}

/// Two faults of an uncached 2-page shared mapping split the read-around
/// (READ(p0) and READ(p1) apart, M-ra-batch): two accesses at once.
/// `extra` goes after the opening (thread marks), `note` first.
pub(super) fn split(note: bool, extra: &[&str]) -> Vec<Event> {
    let mut l: Vec<&str> = vec![];
    if note {
        l.push(THREADS_NOTE);
    }
    l.extend(extra);
    l.extend(super::tests_env::lines(
        "call T0 mmap fd=6 off=0 len=8192 shared prot=rw",
        &[
            "req 8 READ 0 4096",
            "req 10 READ 4096 4096",
            "reply 8 READ tags=.",
            "reply 10 READ tags=.",
            "call T0 munmap off=0 len=8192",
            "ret T0 munmap 0",
        ],
        &[],
    ));
    recorded(json!({}), &l)
}

#[test]
fn one_thread_faults_one_page_at_a_time() {
    // no note (a trace recorded before it): any number at once
    let ev = split(false, &[]);
    assert_eq!(env_threads(&ev), None);
    assert!(verdict(&ev).starts_with("Conforms"), "{}", verdict(&ev));
    // the note and one thread: the second fault finds the first one's
    // folio, so the split is no behaviour of the kernel's
    let ev = split(true, &[]);
    assert_eq!(env_threads(&ev), Some(1));
    let v = verdict(&ev);
    assert!(
        v.starts_with("DoesNotConform") && v.contains("cannot produce a daemon read of READ(p0)"),
        "{v}"
    );
    // a second thread of the mapping's process: two at once again
    let ev = split(true, &["call T0 thread", "ret T0 thread 9"]);
    assert_eq!(env_threads(&ev), Some(2));
    assert!(verdict(&ev).starts_with("Conforms"), "{}", verdict(&ev));
    // a child sharing the memory (vfork, posix_spawn) counts too
    let ev = split(true, &["call T0 thread vm", "ret T0 thread 9"]);
    assert_eq!(env_threads(&ev), Some(2));
    // a thread of a process that maps nothing does not
    let ev = split(true, &["call T5 thread", "ret T5 thread 10"]);
    assert_eq!(env_threads(&ev), Some(1));
    assert!(
        verdict(&ev).starts_with("DoesNotConform"),
        "{}",
        verdict(&ev)
    );
}

/// The memories' threads, whatever the order of the marks: a thread's
/// own mark may come before its creator's `ret` (ptrace stops them
/// apart), a thread's thread is the process's, and a child with a copy
/// of a memory that made a mapping (fork without `vm`) holds the
/// mapping too (attack on 3 Dec 2026: a fork child faulting page 1 while
/// its parent faulted page 0 split the read-around on 6.18.44, its copy
/// ended unseen by an anonymous MAP_FIXED). A fork by a process that
/// maps nothing (fio's main process) is a memory of its own.
#[test]
fn threads_are_counted_per_memory() {
    let cases: [(&[&str], u8); 5] = [
        (
            &[
                "call T0 thread",
                "call T9 thread",
                "ret T9 thread 12",
                "ret T0 thread 9",
            ],
            3,
        ),
        (&["call T0 fork fd=6 path=f vm", "ret T0 fork 13"], 2),
        // a copy of the mapping's memory keeps the mapping: its child
        // counts (and the child's own forks and threads)
        (&["call T0 fork fd=6 path=f", "ret T0 fork 14"], 2),
        (
            &[
                "call T0 fork",
                "ret T0 fork 14",
                "call T14 thread",
                "ret T14 thread 15",
                "call T15 fork",
                "ret T15 fork 16",
            ],
            4,
        ),
        (&["call T0 thread", "ret T0 thread -1 errno=11"], 1),
    ];
    for (extra, want) in cases {
        assert_eq!(env_threads(&mapped(extra)), Some(want), "{extra:?}");
    }
    // T5 maps nothing; its child T6 is the one that maps
    let ev = recorded(
        json!({}),
        &[
            &[
                THREADS_NOTE,
                "call T5 thread",
                "ret T5 thread 7",
                "call T5 fork",
                "ret T5 fork 6",
            ][..],
            &super::tests_env::lines(
                "call T6 mmap fd=6 off=0 len=8192 shared prot=rw",
                &["call T6 munmap off=0 len=8192", "ret T6 munmap 0"],
                &[],
            ),
        ]
        .concat(),
    );
    assert_eq!(env_threads(&ev), Some(1));
}

/// Threads ptrace cannot see: io_uring's workers (CLONE_UNTRACED) copy
/// to and from the memory of the process that set the ring up, and
/// process_vm_writev writes another process's memory: no bound then.
#[test]
fn untraced_threads_leave_no_bound() {
    let cases: [(&[&str], Option<u8>); 8] = [
        // the mapping's process sets up a ring
        (
            &["call T0 thread untraced=io_uring_setup", "ret T0 thread 3"],
            None,
        ),
        // so does a thread of it
        (
            &[
                "call T0 thread",
                "ret T0 thread 9",
                "call T9 thread untraced=io_uring_setup",
                "ret T9 thread 4",
            ],
            None,
        ),
        // a process that maps nothing: its ring touches its own memory
        (
            &["call T5 thread untraced=io_uring_setup", "ret T5 thread 3"],
            Some(1),
        ),
        // an untraced child of the mapping's memory (CLONE_UNTRACED)
        (&["call T0 thread untraced=clone", "ret T0 thread 5"], None),
        // any process_vm_writev: which memory it writes is not marked
        (
            &[
                "call T5 thread untraced=process_vm_writev",
                "ret T5 thread 8",
            ],
            None,
        ),
        // (attack, 3 Dec 2026: each split a read-around on 6.18.44 with
        // the bound at 1) a read of /proc/PID/mem, a process_madvise
        // WILLNEED from another process, and a PID namespace, whose
        // fork rets are local pids
        (
            &["call T5 thread untraced=proc_mem", "ret T5 thread 3"],
            None,
        ),
        (
            &["call T5 thread untraced=process_madvise", "ret T5 thread 0"],
            None,
        ),
        (
            &["call T5 thread untraced=unshare_newpid", "ret T5 thread 0"],
            None,
        ),
    ];
    for (extra, want) in cases {
        assert_eq!(env_threads(&mapped(extra)), want, "{extra:?}");
    }
    // with the ring, the split read-around conforms again
    let ev = split(
        true,
        &["call T0 thread untraced=io_uring_setup", "ret T0 thread 3"],
    );
    assert!(verdict(&ev).starts_with("Conforms"), "{}", verdict(&ev));
}
