//! Edge inputs to the thread bound (envmap.rs `env_threads`): malformed
//! `thread` marks and notes.

use super::envmap::env_threads;
use super::tests_env_atk2::verdict;
use crate::record::THREADS_NOTE;

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
        let ev = super::tests_env_threads::split(true, &extra);
        assert_eq!(env_threads(&ev), n, "{extra:?}");
        let v = verdict(&ev);
        assert!(v.starts_with(want), "{extra:?}: {v}");
        if extra.iter().any(|x| x.contains("path=vm")) {
            assert!(v.contains("f: conforms"), "{v}");
        }
    }
}
