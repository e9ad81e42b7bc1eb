//! Unit tests of the nowait model: step semantics along hand-picked
//! paths, and every check of the nowait catalogue (expected verdicts,
//! witnesses, pinned state counts) with an exhaustive search of our own
//! until the generic checker runs them.

use super::config::*;
use super::model::*;
use super::properties::PROPERTIES;
use super::state::*;
use super::step::Step;
use crate::spec::Spec;
use stateright::Expectation;
use std::collections::{HashMap, VecDeque};

pub(super) fn cfg(text: &str) -> Config {
    let t: toml::Table = toml::from_str(text).expect("test config parses as TOML");
    Config::from_table(&t).unwrap_or_else(|e| panic!("bad test config: {e}\n{text}"))
}

/// Result of an exhaustive breadth-first search.
pub(super) struct Explored {
    /// Always-properties violated, with a shortest path (actions).
    pub violated: Vec<(&'static str, Vec<Action>, Vec<State>)>,
}

pub(super) fn explore(m: &NowaitModel) -> Explored {
    let init = m.initial();
    let mut seen: HashMap<State, Option<(State, Action)>> = HashMap::new();
    seen.insert(init, None);
    let mut q = VecDeque::from([init]);
    let mut first_bad: Vec<Option<State>> = vec![None; PROPERTIES.len()];
    let mut acts = Vec::new();
    while let Some(s) = q.pop_front() {
        for (i, p) in PROPERTIES.iter().enumerate() {
            let c = m.condition(i, &s);
            let hit = if p.expectation == Expectation::Sometimes {
                c
            } else {
                !c
            };
            if hit && first_bad[i].is_none() {
                first_bad[i] = Some(s);
            }
        }
        acts.clear();
        m.enabled(&s, &mut acts);
        for &a in &acts {
            let ns = m.step(&s, a).expect("an enabled action has a successor");
            if let std::collections::hash_map::Entry::Vacant(e) = seen.entry(ns) {
                e.insert(Some((s, a)));
                q.push_back(ns);
            }
        }
    }
    let path = |mut s: State| {
        let mut acts = Vec::new();
        let mut sts = vec![s];
        while let Some(Some((p, a))) = seen.get(&s) {
            acts.push(*a);
            sts.push(*p);
            s = *p;
        }
        acts.reverse();
        sts.reverse();
        (acts, sts)
    };
    let mut violated = Vec::new();
    for (i, p) in PROPERTIES.iter().enumerate() {
        if let Some(s) = first_bad[i] {
            if p.expectation != Expectation::Sometimes {
                let (a, st) = path(s);
                violated.push((p.name, a, st));
            }
        }
    }
    Explored { violated }
}

fn run(m: &NowaitModel, s: &State, actor: Actor, step: Step) -> State {
    let mut acts = Vec::new();
    m.enabled(s, &mut acts);
    let a = Action { actor, step };
    assert!(acts.contains(&a), "{a:?} not enabled; enabled: {acts:?}");
    m.step(s, a).expect("enabled action has a successor")
}

const T0: Actor = Actor::Task(0);
const Q0: Actor = Actor::Iowq(0);

#[test]
fn an_uncontended_io_uring_append_completes_inline() {
    let m = NowaitModel::new(cfg(r#"kernel = "M615"
           init_size = 1
           tasks = ["uring-append 2"]"#))
    .unwrap();
    let s = m.initial();
    let s = run(&m, &s, T0, Step::IlockIocb);
    assert!(s.tasks[0].nowait, "the inline issue runs with IOCB_NOWAIT");
    let s = run(&m, &s, T0, Step::WriteChecks);
    assert_eq!(s.tasks[0].kpos, 1, "O_APPEND: ki_pos = i_size");
    let s = run(&m, &s, T0, Step::IomapBegin);
    assert_eq!((s.tasks[0].cur, s.tasks[0].mend), (1, 3), "one mapping");
    let s = run(&m, &s, T0, Step::WriteFolio);
    assert_eq!((s.i_size, s.data[1]), (2, chunk(0, 0)));
    let s = run(&m, &s, T0, Step::WriteFolioDone);
    assert_eq!((s.i_size, s.data[2]), (3, chunk(0, 1)));
    assert_eq!((s.tasks[0].ph, s.tasks[0].cqe), (Phase::Done, 2));
    assert!(s.iolock.is_free() && !s.tasks[0].wq);
    assert!(m.quiescent(&s));
}

#[test]
fn a_bdp_eagain_after_one_folio_reverts_on_6_0_and_is_short_on_6_15() {
    for (k, dup) in [("M60", true), ("M615", false)] {
        let m = NowaitModel::new(cfg(&format!(
            r#"kernel = "{k}"
               init_size = 1
               limit = 1
               dirtier = 1
               tasks = ["uring-append 2", "flusher"]"#
        )))
        .unwrap();
        let s = m.initial();
        let s = run(&m, &s, T0, Step::IlockIocb);
        let s = run(&m, &s, T0, Step::WriteChecks);
        let s = run(&m, &s, T0, Step::IomapBegin);
        let s = run(&m, &s, T0, Step::WriteFolio);
        let s = run(&m, &s, Actor::Env(EnvActor::Dirtier), Step::EnvDirty);
        let s = run(&m, &s, T0, Step::BdpEagain);
        assert_eq!(s.i_size, 2, "{k}: folio 1 stays in the page cache");
        if dup {
            assert_eq!(s.ev, Event::EagainAfterCopy);
            assert_eq!(s.tasks[0].it, 0, "{k}: iter reverted");
            assert_ne!(s.viol & VIOL_IO3, 0, "{k}: -EAGAIN after a visible change");
        } else {
            assert_eq!(s.ev, Event::ShortPunt);
            assert_eq!((s.tasks[0].done, s.tasks[0].it), (1, 1));
            assert_eq!(s.viol & VIOL_IO3, 0);
        }
        // io-wq retry: blocking; waits for the flusher under the limit
        assert!(m.exec_task(&s, 0).is_some());
        let s = run(&m, &s, Q0, Step::IlockIocb);
        let s = run(&m, &s, Q0, Step::WriteChecks);
        assert_eq!(s.tasks[0].kpos, 2, "{k}: the retry appends at the new EOF");
    }
}

#[test]
fn nowait_failures_punt_and_blocking_waits() {
    // IOLOCK held by chmod: the inline attempt gets -EAGAIN from
    // xfs_ilock_iocb; the io-wq retry waits for the lock.
    let m = NowaitModel::new(cfg(r#"kernel = "M615"
           init_size = 1
           tasks = ["uring-write 0+1", "chmod-suid"]"#))
    .unwrap();
    let s = m.initial();
    let s = run(&m, &s, Actor::Task(1), Step::InodeLock);
    let s = run(&m, &s, T0, Step::IlockIocbEagain);
    assert_eq!((s.tasks[0].ph, s.ev), (Phase::Queued, Event::EagainPunt));
    assert!(m.exec_task(&s, 0).is_none(), "io-wq waits for the IOLOCK");
    let s = run(&m, &s, Actor::Task(1), Step::SetattrMode);
    assert!(s.suid && s.iv == 1 && s.iv_disk == 1);
    // the blocking retry removes S_ISUID before its data is copied
    let s = run(&m, &s, Q0, Step::IlockIocb);
    assert!(!s.tasks[0].nowait);
    let s = run(&m, &s, Q0, Step::WriteChecks);
    assert_eq!((s.suid, s.ev), (false, Event::SuidRemoved));
    let s = run(&m, &s, Q0, Step::IomapBegin);
    let s = run(&m, &s, Q0, Step::WriteFolioDone);
    assert_eq!(s.viol, 0);
}

#[test]
fn pending_time_is_set_skipped_and_cleared_by_a_blocking_update() {
    let m = NowaitModel::new(cfg(r#"kernel = "V7"
           init_size = 2
           stale = true
           tasks = ["uring-write 0+1", "uring-write 1+1"]"#))
    .unwrap();
    let s = m.initial();
    let s = run(&m, &s, T0, Step::IlockIocb);
    let s = run(&m, &s, T0, Step::WriteChecksEagain);
    assert!(s.pending);
    assert_ne!(
        s.viol & VIOL_IO3,
        0,
        "the flag is set by an -EAGAIN attempt"
    );
    let t1 = Actor::Task(1);
    let s = run(&m, &s, t1, Step::IlockIocb);
    let s = run(&m, &s, t1, Step::WriteChecks);
    assert_eq!(s.ev, Event::TimeSkipped);
    let s = run(&m, &s, t1, Step::IomapBegin);
    let s = run(&m, &s, t1, Step::WriteFolioDone);
    assert_ne!(
        s.viol & VIOL_IO4,
        0,
        "completed with mtime older than its start"
    );
    let s = run(&m, &s, Q0, Step::IlockIocb);
    let s = run(&m, &s, Q0, Step::WriteChecks);
    assert!(!s.pending && s.mtime == s.now);
}

#[test]
fn lazytime_nowait_sets_ctime_before_its_eagain() {
    // 85c871a02b03: inode_update_cmtime sets ctime, then returns -EAGAIN
    // when i_version needs a bump.
    let m = NowaitModel::new(cfg(r#"kernel = "N70"
           lazytime = true
           init_size = 1
           stale = true
           tasks = ["stat", "uring-write 0+1"]"#))
    .unwrap();
    let t1 = Actor::Task(1);
    let s = run(&m, &m.initial(), Actor::Task(0), Step::Getattr);
    assert!(s.ivq);
    let s = run(&m, &s, t1, Step::IlockIocb);
    let s = run(&m, &s, t1, Step::WriteChecksEagain);
    assert_eq!((s.ctime, s.mtime, s.iv), (1, 0, 0));
    assert_ne!(s.viol & VIOL_IO3, 0);
}

#[test]
fn the_svg_has_a_lane_per_context_and_marks_the_violation() {
    let m = NowaitModel::new(cfg(r#"kernel = "M60"
           init_size = 1
           limit = 1
           dirtier = 1
           tasks = ["uring-append 2", "flusher"]"#))
    .unwrap();
    assert_eq!(
        m.lanes(),
        vec!["T0 uring-append", "T0 io-wq", "T1 flusher", "environment"]
    );
    let e = explore(&m);
    let (_, acts, sts) = e
        .violated
        .iter()
        .find(|v| v.0 == "io1-exactly-once")
        .expect("io1 violated on M60");
    let svg = super::svg::sequence_svg(&m, sts, acts);
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    assert!(svg.contains("T0 io-wq") && svg.contains("io1-exactly-once"));
    assert!(acts.iter().any(|a| matches!(a.actor, Actor::Iowq(0))));
}

#[test]
fn every_switch_name_parses_and_flips() {
    for f in VARIANT_FLAGS {
        let c = cfg(r#"kernel = "M615"
                       tasks = ["uring-append 1"]"#);
        let flipped = NowaitModel::flip(&c, f).expect("a switch");
        assert_ne!(flipped.variant, c.variant, "{f}");
        assert_eq!(NowaitModel::flip(&flipped, f).unwrap(), c, "{f}");
    }
    assert!(NowaitModel::flip(
        &cfg(r#"kernel = "M615"
                                      tasks = ["stat"]"#),
        "nope"
    )
    .is_none());
}

#[test]
fn bad_configs_are_one_line_errors() {
    for (text, want) in [
        (
            r#"kernel = "X"
            tasks = ["stat"]"#,
            "unknown kernel state",
        ),
        (
            r#"kernel = "M615"
            tasks = ["uring-append 9"]"#,
            "1..=4 folios",
        ),
        (
            r#"kernel = "M615"
            tasks = ["frob"]"#,
            "unknown task",
        ),
        (
            r#"kernel = "M615"
            variant = ["nope"]
            tasks = ["stat"]"#,
            "unknown variant flag",
        ),
        (
            r#"kernel = "M615"
            tasks = ["uring-append 4", "uring-append 4"]"#,
            "at most 8",
        ),
        (
            r#"kernel = "M615"
            bogus = 1
            tasks = ["stat"]"#,
            "unknown field",
        ),
    ] {
        let t: toml::Table = toml::from_str(text).unwrap();
        let e = Config::from_table(&t).unwrap_err();
        assert!(e.contains(want), "{e:?} should mention {want:?}");
        assert!(!e.contains('\n'), "one line: {e:?}");
    }
}

/// Every form of the task syntax that unknown-task errors print parses,
/// one form per kind, and the error lists them all.
#[test]
fn the_task_syntax_is_what_the_parser_accepts() {
    let mut kinds = std::collections::BTreeSet::new();
    for form in SYNTAX {
        assert!(
            kinds.insert(form.split_whitespace().next().unwrap()),
            "{form}"
        );
        for t in crate::spec::task_syntax_instances(form) {
            assert!(TaskSpec::parse(&t).is_ok(), "{form}: {t:?} does not parse");
        }
    }
    let e = TaskSpec::parse("frob").unwrap_err();
    for form in SYNTAX {
        assert!(e.contains(form), "{e}");
    }
}
