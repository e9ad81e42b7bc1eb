//! The search on several threads (`--threads`, checks/src/parallel.rs)
//! against the one-thread search: the same unique and total state
//! counts, the same hits of every property, so the same verdicts and
//! witness counts. Not timed (docs/performance.md has the measurements).

mod common;
use common::*;
use wbspec::catalogue::{self, Entry};
use wbspec::outcome::{self, Settings};
use wbspec::runner::RunOptions;
use wbspec::search::Exploration;

fn explore(e: &Entry, threads: usize, expected: Option<u64>) -> Exploration {
    let x = e.check.explore(
        &e.name,
        &RunOptions {
            expected,
            threads,
            ..Default::default()
        },
        false,
    );
    assert!(x.complete, "{} on {threads} threads: incomplete", e.name);
    x
}

/// A spread of the catalogue (every 7th check, and two large written
/// checks below a million states), each on 1, 2 and 3 threads, with the table sized by
/// the pin and grown from the smallest table (the growth path of the
/// shared table runs many times).
#[test]
fn threads_find_the_one_thread_counts() {
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let big = ["t-large-dio-trunc-3p", "l-large-4p"];
    let chosen: Vec<&Entry> = cat
        .entries
        .iter()
        .enumerate()
        .filter(|(i, e)| i % 7 == 0 || big.contains(&e.name.as_str()))
        .map(|(_, e)| e)
        .collect();
    assert!(chosen.len() > 50);
    let mut grew = 0;
    for e in chosen {
        let one = explore(e, 1, e.states);
        assert!(!one.depth_unknown);
        for threads in [2, 3] {
            for expected in [e.states, None] {
                let x = explore(e, threads, expected);
                assert_eq!(
                    (x.unique_states, x.total_states, &x.hits),
                    (one.unique_states, one.total_states, &one.hits),
                    "{} on {threads} threads (table for {expected:?})",
                    e.name
                );
                assert!(x.depth_unknown, "{}: no DFS depth on threads", e.name);
                if expected.is_none() && x.unique_states > 1 << 16 {
                    grew += 1;
                }
            }
        }
    }
    assert!(grew >= 4, "the table grew in only {grew} runs");
}

/// Whole check outcomes (verdicts, violation and witness counts, the
/// shortest counterexamples) on 1 and 2 threads, for checks with
/// expected violations and checks where everything holds.
#[test]
fn threads_give_the_same_verdicts_and_witness_counts() {
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let mut violated = 0;
    for e in cat.entries.iter().step_by(11) {
        let one = outcome::run(e, &Settings::default(), false).unwrap();
        let two = outcome::run(
            e,
            &Settings {
                threads: 2,
                ..Default::default()
            },
            false,
        )
        .unwrap();
        let props = |r: &outcome::CheckResult| {
            r.props
                .iter()
                .map(|p| (p.name, p.observed, p.count, p.trace.clone()))
                .collect::<Vec<_>>()
        };
        let wits = |r: &outcome::CheckResult| {
            r.witnesses
                .iter()
                .map(|w| (w.name, w.count))
                .collect::<Vec<_>>()
        };
        assert_eq!(props(&one), props(&two), "{}: verdicts", e.name);
        assert_eq!(wits(&one), wits(&two), "{}: witnesses", e.name);
        assert_eq!(one.ok(), two.ok(), "{}: as expected", e.name);
        violated += one.props.iter().filter(|p| p.trace.is_some()).count();
    }
    assert!(violated >= 5, "only {violated} violations compared");
}

/// `--threads` out of range: one line, exit 2; the stateright engine
/// refuses threads.
#[test]
fn bad_thread_counts_are_usage_errors() {
    for args in [
        &["check", "t-close-after-write", "--threads", "0"][..],
        &["check", "t-close-after-write", "--threads", "5000"],
        &["check", "t-close-after-write", "--threads", "two"],
        &[
            "check",
            "t-close-after-write",
            "--threads",
            "2",
            "--engine",
            "stateright",
        ],
    ] {
        one_line_error(&wbspec(args), "threads");
    }
    let o = wbspec(&["check", "t-close-after-write", "--threads", "2"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains(" depth=n/a "), "{out}");
}

/// `check --jobs N` (checks/src/pool.rs) explores several checks at once
/// and prints what a one-job run prints, in catalogue order: the same
/// stdout but for the seconds, for checks that hold and checks with
/// violations (their counterexamples with --explain).
#[test]
fn jobs_print_what_one_job_prints() {
    let run = |jobs: &str| {
        let o = wbspec(&["check", "aio", "notify", "--explain", "--jobs", jobs]);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.status.code(), Some(0), "--jobs {jobs}: {out}");
        // the exploration times differ from run to run
        let secs = regex_lite_seconds(&out);
        (secs, out.lines().count())
    };
    let (one, n) = run("1");
    assert!(n > 500, "only {n} lines");
    assert!(
        one.contains(" Sometimes "),
        "no violation among the checks: {one}"
    );
    for jobs in ["2", "3"] {
        let (other, _) = run(jobs);
        let diff = one.lines().zip(other.lines()).find(|(a, b)| a != b);
        assert!(
            diff.is_none() && other == one,
            "--jobs {jobs}: first difference {diff:?}"
        );
    }
}

/// A family run (`check --with`) takes --jobs too and prints what a
/// one-job run prints: the verdict lines, the not-applicable ones and
/// the summary, in catalogue order.
#[test]
fn a_family_run_with_jobs_prints_what_one_job_prints() {
    let run = |jobs: &str| {
        let o = wbspec(&[
            "check",
            "t2-otrunc-atomic-race",
            "t2-otrunc-atomic-race-bg1",
            "t2-otrunc-race",
            "t2-otrunc-atomic-mmap",
            "c-otrunc-atomic-race",
            "m-nw-io2-bdp-no-freerun",
            "t-close-after-write",
            "--with",
            "fix_otrunc_keep_size",
            "--jobs",
            jobs,
        ]);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.status.code(), Some(0), "--jobs {jobs}: {out}");
        out
    };
    let one = run("1");
    assert_eq!(one.lines().count(), 8, "{one}");
    assert!(one.contains(" fixed "), "no check fixed: {one}");
    assert!(one.contains(" not-applicable: "), "{one}");
    assert_eq!(run("2"), one);
}

/// Every word that is a number of seconds (`0.01s`) replaced by `S`.
fn regex_lite_seconds(out: &str) -> String {
    let secs = |w: &str| {
        w.strip_suffix('s')
            .is_some_and(|n| n.contains('.') && n.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    out.lines()
        .map(|l| {
            l.split(' ')
                .map(|w| if secs(w) { "S" } else { w })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `--jobs` out of range: one line, exit 2.
#[test]
fn bad_job_counts_are_usage_errors() {
    for args in [
        &["check", "t-close-after-write", "--jobs", "0"][..],
        &["check", "t-close-after-write", "--jobs", "5000"],
        &["check", "t-close-after-write", "--jobs", "two"],
    ] {
        one_line_error(&wbspec(args), "jobs");
    }
}
