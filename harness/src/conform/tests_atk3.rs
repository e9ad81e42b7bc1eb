//! Edge inputs to the thread bound (envmap.rs `env_threads`): malformed
//! `thread` marks and notes.

use super::envmap::env_threads;
use super::tests_env_atk2::verdict;
use super::*;
use crate::record::THREADS_NOTE;
use serde_json::json;

/// The split read-around of tests_env_threads.rs with `extra` after the
/// note.
fn split(extra: &[&str]) -> Vec<Event> {
    let mut l: Vec<&str> = vec![THREADS_NOTE];
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
    super::tests_env_atk2::recorded(json!({}), &l)
}

/// Malformed or odd `thread` marks: a failed or zero ret adds no
/// thread, a ret with no call (or by another actor) and a call never
/// returned are bad traces, an `untraced=` name the decoder does not
/// know leaves no bound, a fork of the mapping's memory counts whatever
/// its path says, a second note changes nothing.
#[test]
fn odd_thread_marks() {
    let cases: Vec<(Vec<&str>, Option<u8>, &str)> = vec![
        (vec!["call T0 thread"], Some(1), "ERR bad trace"),
        (
            vec!["call T0 thread", "ret T0 thread -5"],
            Some(1),
            "DoesNotConform",
        ),
        (
            vec!["call T0 thread", "ret T0 thread 0"],
            Some(1),
            "DoesNotConform",
        ),
        (
            vec!["call T0 thread", "ret T7 thread 9"],
            Some(1),
            "ERR bad trace",
        ),
        (vec!["ret T0 thread 9"], Some(1), "ERR bad trace"),
        (
            vec!["call T0 thread untraced=foo", "ret T0 thread 1"],
            None,
            "Conforms",
        ),
        // a fork of the mapping's memory counts as a copy (since
        // fe692b5), whatever its path says; the mark names another
        // file (`vm`, not modelled), and f's projection still counts
        // the child: the bound is counted over the whole trace
        (
            vec!["call T0 fork fd=6 path=vm", "ret T0 fork 9"],
            Some(2),
            "NotModelled not-modelled (#3 a fork holding fd 6",
        ),
        (vec![THREADS_NOTE], Some(1), "DoesNotConform"),
    ];
    for (extra, n, want) in cases {
        let ev = split(&extra);
        assert_eq!(env_threads(&ev), n, "{extra:?}");
        let v = verdict(&ev);
        assert!(v.starts_with(want), "{extra:?}: {v}");
        if extra.iter().any(|x| x.contains("path=vm")) {
            assert!(v.contains("f: conforms"), "{v}");
        }
    }
}
