//! Unit tests of translation and search on recorded and hand-made traces:
//! b_ftrunc and truncation, payloads, direct reads, O_TRUNC, the bound,
//! not-modelled reasons, RELEASE, malformed input. Write-through traces
//! are in tests_through.rs; the trace notation in test_trace.rs.

use super::test_trace::{mapping, not_modelled, tr, OPEN};
use super::*;
use serde_json::json;
use wbspec_models::fuse::{Kernel, TaskSpec};

/// b_ftrunc as recorded on 6.18.44 (filtered events left out).
fn b_ftrunc(tail: &[&str]) -> Vec<Event> {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pwrite fd=6 off=0 ABCD",
        "req 8 GETXATTR",
        "reply 8 GETXATTR",
        "ret T0 pwrite 16384",
        "call T0 sync_file_range fd=6 0 0 WRITE",
        "ret T0 sync_file_range 0",
        "req 10 WRITE 0 16384 ABCD cache",
        "call T1 ftruncate fd=6 4096",
    ]);
    l.extend(tail);
    tr(json!({}), &l)
}

const FTRUNC_OK: &[&str] = &[
    "reply 10 WRITE",
    "req 12 SETATTR size=4096",
    "reply 12 SETATTR",
    "ret T1 ftruncate 0",
    "req 16 SETATTR",
    "reply 16 SETATTR",
    "req 18 FLUSH",
    "reply 18 FLUSH",
    "req 20 RELEASE",
    "reply 20 RELEASE",
];

#[test]
fn mapping_of_b_ftrunc() {
    let m = mapping(&b_ftrunc(FTRUNC_OK));
    assert_eq!(m.regions, vec![(0, 1), (1, 4)]);
    assert_eq!(m.cfg.pages, 2);
    assert_eq!(m.cfg.daemon_threads, 1);
    assert_eq!(m.cfg.max_pages, 2);
    assert_eq!(
        m.cfg.tasks,
        vec![
            TaskSpec::Write { first: 0, n: 2 },
            TaskSpec::Writeback { all: false },
            TaskSpec::Truncate { size: 1 },
            TaskSpec::Close,
        ]
    );
    assert_eq!(m.letters[&(0, "A".to_string())], vec![2]);
    assert_eq!(m.letters[&(1, "BCD".to_string())], vec![2]);
    assert_eq!(m.task_labels[3], "(runner cleanup) close");
    // recorded return values, and what the model's tasks return: the
    // 2-page write covers 4 real pages
    assert_eq!(m.rets, vec![Some(16384), Some(0), Some(0), None]);
    use super::returns::{returns, Returns};
    assert_eq!(returns(&m, 0), Returns::Exactly(16384));
    assert_eq!(returns(&m, 2), Returns::Exactly(0));
    // GETXATTR, SETATTR(times), RELEASE and the open are filtered
    assert_eq!(m.filtered["GETXATTR"], 1);
    assert_eq!(m.filtered["SETATTR(times)"], 1);
    assert_eq!(m.filtered["RELEASE"], 1);
    assert_eq!(m.filtered["syscall open (setup)"], 1);
    let reads: Vec<&Obs> = m
        .obs
        .iter()
        .map(|o| &o.obs)
        .filter(|o| matches!(o, Obs::Read(_)))
        .collect();
    assert_eq!(
        reads,
        vec![
            &Obs::Read(Pat::CacheWrite {
                first: 0,
                n: 2,
                payload: vec![vec![2], vec![2]]
            }),
            &Obs::Read(Pat::Setattr { size: 1 }),
            &Obs::Read(Pat::Flush),
        ]
    );
    // the implicit close starts after the last mark
    let last = m.obs.last().unwrap();
    assert_eq!(last.obs, Obs::Reply(Pat::Flush, vec![], None));
    assert!(m.obs.iter().any(|o| o.obs == Obs::Call(3) && o.seq == 0));
}

/// The kernel release picks the model's kernel state: only 6.18.y with
/// y >= 3 (the 6.19 DIO fixes backported) is T2; any other release is not
/// modelled, naming the release.
#[test]
fn kernel_release_picks_the_model_state() {
    for (release, modelled) in [
        ("6.18.44", true),
        ("6.18.3-fc1", true),
        ("6.18.2", false),
        ("6.17.9", false),
        ("6.19.0", false),
        ("5.18.44", false),
    ] {
        let mut ev = b_ftrunc(FTRUNC_OK);
        ev[0].kernel = Some(release.into());
        match translate(&ev, None).unwrap() {
            Translation::Modelled(m) => {
                assert!(modelled, "{release} was modelled");
                assert_eq!(m.cfg.kernel, Kernel::T2, "{release}");
            }
            Translation::NotModelled(why) => {
                assert!(!modelled, "{release}: {why}");
                assert!(
                    why.contains(&format!("kernel {release} has no model state")),
                    "{why}"
                );
            }
        }
    }
}

#[test]
fn b_ftrunc_conforms() {
    let m = mapping(&b_ftrunc(FTRUNC_OK));
    let v = check(&m, DEFAULT_BOUND);
    assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.report(&m));
}

/// A recorded pwrite's `len=` (wbspec record) agrees with its tags, or
/// the trace is refused; a length that is not whole pages (a partial
/// page written) is not modelled, and `path=` changes nothing.
#[test]
fn recorded_pwrite_length() {
    let with = |call: &str| {
        let mut l: Vec<&str> = OPEN.to_vec();
        l.extend([call, "ret T0 pwrite 16384"]);
        tr(json!({}), &l)
    };
    let ok = mapping(&with("call T0 pwrite fd=6 off=0 ABCD len=16384 path=f"));
    assert_eq!(ok.cfg.tasks, vec![TaskSpec::Write { first: 0, n: 1 }]);
    let w = not_modelled(&with("call T0 pwrite fd=6 off=0 AB len=6000 path=f"));
    assert!(
        w.contains("pwrite length 6000 is not a whole number"),
        "{w}"
    );
    let e = translate(&with("call T0 pwrite fd=6 off=0 AB len=16384 path=f"), None);
    assert!(e.is_err_and(|e| e.contains("16384 bytes with 2 page tags")));
}

/// a1: SETATTR(size) read while the page-cache WRITE is outstanding.
#[test]
fn setattr_during_cache_write_does_not_conform() {
    let ev = b_ftrunc(&[
        "req 12 SETATTR size=4096",
        "reply 12 SETATTR",
        "reply 10 WRITE",
        "ret T1 ftruncate 0",
        "req 18 FLUSH",
        "reply 18 FLUSH",
    ]);
    let m = mapping(&ev);
    match check(&m, DEFAULT_BOUND) {
        Verdict::Violation {
            index,
            expected,
            instead,
            possible,
            states,
            ..
        } => {
            assert_eq!(m.obs[index].obs, Obs::Read(Pat::Setattr { size: 1 }));
            assert!(expected.contains("SETATTR(size=1p)"), "{expected}");
            assert_eq!(instead, vec!["reply to WRITE(p0-1)".to_string()]);
            assert!(possible > 0 && !states.is_empty());
        }
        v => panic!("expected a violation, got {}", v.short()),
    }
}

/// a2/crop: after truncating to 1 page, a queued WRITE must be cropped.
#[test]
fn write_beyond_new_size_does_not_conform() {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pwrite fd=6 off=0 ABCD",
        "ret T0 pwrite 16384",
        "call T1 ftruncate fd=6 4096",
        "req 10 SETATTR size=4096",
        "call T2 sync_file_range fd=6 0 0 WRITE",
        "ret T2 sync_file_range 0",
        "reply 10 SETATTR",
    ]);
    let ok = [
        "req 12 WRITE 0 4096 A cache",
        "reply 12 WRITE",
        "ret T1 ftruncate 0",
        "req 18 FLUSH",
        "reply 18 FLUSH",
    ];
    let bad = [
        "req 12 WRITE 0 16384 ABCD cache",
        "reply 12 WRITE",
        "ret T1 ftruncate 0",
        "req 18 FLUSH",
        "reply 18 FLUSH",
    ];
    let good: Vec<&str> = l.iter().copied().chain(ok).collect();
    let m = mapping(&tr(json!({}), &good));
    let v = check(&m, DEFAULT_BOUND);
    assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.report(&m));
    let badl: Vec<&str> = l.iter().copied().chain(bad).collect();
    let m = mapping(&tr(json!({}), &badl));
    let v = check(&m, DEFAULT_BOUND);
    let Verdict::Violation { index, instead, .. } = &v else {
        panic!("expected a violation, got {}", v.short());
    };
    assert!(matches!(
        m.obs[*index].obs,
        Obs::Read(Pat::CacheWrite { n: 2, .. })
    ));
    assert!(instead[0].contains("cropped"), "{instead:?}");
}

/// c2: the payload is read when the daemon reads the request; a stale
/// payload after a later write(2) has returned is not a model behaviour.
#[test]
fn stale_payload_does_not_conform() {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pwrite fd=6 off=0 A",
        "ret T0 pwrite 4096",
        "call T0 sync_file_range fd=6 0 0 WRITE",
        "ret T0 sync_file_range 0",
        "call T0 pwrite fd=6 off=0 Z",
        "ret T0 pwrite 4096",
    ]);
    for (tag, ok) in [("Z", true), ("A", false)] {
        let w = format!("req 10 WRITE 0 4096 {tag} cache");
        let mut x = l.clone();
        x.push(&w);
        x.extend([
            "reply 10 WRITE",
            "call T0 fsync fd=6",
            "req 12 WRITE 0 4096 Z cache",
            "reply 12 WRITE",
            "req 14 FSYNC",
            "reply 14 FSYNC",
            "ret T0 fsync 0",
            "call T0 close fd=6",
            "req 16 FLUSH",
            "reply 16 FLUSH",
            "ret T0 close 0",
        ]);
        let m = mapping(&tr(json!({}), &x));
        let v = check(&m, DEFAULT_BOUND);
        // the bad trace is a violation, not merely "does not conform" (an
        // inconclusive search would be no evidence)
        assert!(
            if ok {
                matches!(v, Verdict::Conforms { .. })
            } else {
                matches!(v, Verdict::Violation { .. })
            },
            "{}",
            v.report(&m)
        );
    }
}

/// b1/b2 with FOPEN_DIRECT_IO: the direct READ returns the flushed data;
/// a READ reply with the old (zero) data does not conform.
#[test]
fn direct_read_data_is_checked() {
    let base = [
        "call T0 open f 0x42",
        "req 4 CREATE",
        "reply 4 CREATE",
        "ret T0 open 6",
        "call T0 open f 0x4002",
        "req 6 OPEN",
        "reply 6 OPEN FOPEN_DIRECT_IO",
        "ret T0 open 7",
        "call T0 pwrite fd=6 off=0 AB",
        "ret T0 pwrite 8192",
        "call T1 pread fd=7 off=0 len=8192",
        "req 12 WRITE 0 8192 AB cache",
        "reply 12 WRITE",
        "req 14 READ 0 8192",
    ];
    for (reply, ok) in [
        ("reply 14 READ tags=AB", true),
        ("reply 14 READ tags=..", false),
    ] {
        let mut l = base.to_vec();
        l.extend([
            reply,
            "ret T1 pread 8192 data=AB",
            "call T0 close fd=7",
            "req 18 FLUSH",
            "reply 18 FLUSH",
            "ret T0 close 0",
        ]);
        let m = mapping(&tr(json!({}), &l));
        assert_eq!(
            m.cfg.tasks[0],
            TaskSpec::Open {
                trunc: false,
                keep_cache: false,
                direct: true
            }
        );
        assert_eq!(
            m.cfg.tasks[2],
            TaskSpec::DioRead {
                first: 0,
                n: 1,
                aio: false
            }
        );
        let v = check(&m, DEFAULT_BOUND);
        // the bad trace is a violation, not merely "does not conform" (an
        // inconclusive search would be no evidence)
        assert!(
            if ok {
                matches!(v, Verdict::Conforms { .. })
            } else {
                matches!(v, Verdict::Violation { .. })
            },
            "{}",
            v.report(&m)
        );
    }
}

/// A trace that stops while the model still owes observable work.
#[test]
fn unfinished_trace_does_not_conform() {
    let mut l: Vec<&str> = OPEN.to_vec();
    // every call returns, but the WRITE that sync_file_range queued is
    // never read
    l.extend([
        "call T0 pwrite fd=6 off=0 A",
        "ret T0 pwrite 4096",
        "call T0 sync_file_range fd=6 0 0 WRITE",
        "ret T0 sync_file_range 0",
    ]);
    let m = mapping(&tr(json!({}), &l));
    let v = check(&m, DEFAULT_BOUND);
    let Verdict::Violation { index, .. } = v else {
        panic!("expected a violation, got {}", v.short());
    };
    assert_eq!(index, m.obs.len());
}

/// open(O_TRUNC) with atomic_o_trunc (b_otrunc_atomic): the OPEN carries
/// O_TRUNC and is sent under FUSE_NOWRITE, so only after the page-cache
/// WRITE's reply; an OPEN(O_TRUNC) read while the WRITE is outstanding
/// does not conform. Without atomic_o_trunc the OPEN has no O_TRUNC and
/// may be answered during the hold; SETATTR(0) follows the WRITE reply.
#[test]
fn open_trunc_is_checked() {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pwrite fd=6 off=0 ABCD",
        "ret T0 pwrite 16384",
        "call T0 sync_file_range fd=6 0 0 WRITE",
        "ret T0 sync_file_range 0",
        "req 10 WRITE 0 16384 ABCD cache",
        "call T1 open f O_RDWR|O_TRUNC",
    ]);
    let tail = [
        "ret T1 open 9",
        "req 16 FLUSH",
        "reply 16 FLUSH",
        "req 20 FLUSH",
        "reply 20 FLUSH",
    ];
    let run = |cfg: serde_json::Value, mid: &[&str]| {
        let x: Vec<&str> = l.iter().chain(mid).chain(&tail).copied().collect();
        let m = mapping(&tr(cfg, &x));
        let v = check(&m, DEFAULT_BOUND);
        (m, v)
    };
    let atomic = json!({"atomic_o_trunc": true});
    let (m, v) = run(
        atomic.clone(),
        &["reply 10 WRITE", "req 12 OPEN O_TRUNC", "reply 12 OPEN"],
    );
    assert!(m.cfg.atomic_o_trunc);
    assert_eq!(
        m.cfg.tasks[2],
        TaskSpec::Open {
            trunc: true,
            keep_cache: false,
            direct: false
        }
    );
    assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.report(&m));
    let (m, v) = run(
        atomic.clone(),
        &["req 12 OPEN O_TRUNC", "reply 12 OPEN", "reply 10 WRITE"],
    );
    let Verdict::Violation { index, instead, .. } = &v else {
        panic!("expected a violation, got {}", v.short());
    };
    assert_eq!(
        m.obs[*index].obs,
        Obs::Read(Pat::Open {
            task: 2,
            trunc: true
        })
    );
    assert_eq!(instead, &vec!["reply to WRITE(p0)".to_string()]);
    // with atomic_o_trunc the OPEN must carry O_TRUNC
    let (_, v) = run(atomic, &["reply 10 WRITE", "req 12 OPEN", "reply 12 OPEN"]);
    assert!(matches!(v, Verdict::Violation { .. }), "{}", v.short());
    // without: OPEN during the hold, SETATTR(0) after the WRITE reply
    let (m, v) = run(
        json!({}),
        &[
            "req 12 OPEN",
            "reply 12 OPEN",
            "reply 10 WRITE",
            "req 14 SETATTR size=0",
            "reply 14 SETATTR",
        ],
    );
    assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.report(&m));
    let (_, v) = run(
        json!({}),
        &[
            "req 12 OPEN",
            "reply 12 OPEN",
            "req 14 SETATTR size=0",
            "reply 14 SETATTR",
            "reply 10 WRITE",
        ],
    );
    assert!(matches!(v, Verdict::Violation { .. }), "{}", v.short());
}

#[test]
fn bound_hit_is_inconclusive() {
    let m = mapping(&b_ftrunc(FTRUNC_OK));
    assert!(matches!(check(&m, 5), Verdict::Inconclusive { .. }));
}

/// b_ftrunc with the writeback WRITE read before sync_file_range is
/// called: only background writeback can have sent it.
fn b_ftrunc_early_write() -> Vec<Event> {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pwrite fd=6 off=0 ABCD",
        "req 8 GETXATTR",
        "reply 8 GETXATTR",
        "ret T0 pwrite 16384",
        "req 10 WRITE 0 16384 ABCD cache",
        "call T0 sync_file_range fd=6 0 0 WRITE",
        "ret T0 sync_file_range 0",
        "call T1 ftruncate fd=6 4096",
    ]);
    l.extend(FTRUNC_OK);
    tr(json!({}), &l)
}

#[test]
fn background_writeback_is_tried_and_a_bound_hit_there_is_no_violation() {
    let m = mapping(&b_ftrunc_early_write());
    let v = check(&m, DEFAULT_BOUND);
    assert!(matches!(v, Verdict::Violation { .. }), "{}", v.short());
    // with a flusher pass it is a behaviour of the model
    let (b, vb) = retry_with_flusher(m.clone(), v.clone(), DEFAULT_BOUND);
    assert!(matches!(vb, Verdict::Conforms { .. }), "{}", vb.short());
    assert_eq!(b.background.len(), 1);
    // when the search with passes stops at its bound, the violation
    // without them proves nothing: inconclusive, with the passes said
    let (b, vb) = retry_with_flusher(m.clone(), v, 5);
    assert!(matches!(vb, Verdict::Inconclusive { .. }), "{}", vb.short());
    assert!(!b.background.is_empty());
    let c = conform_trace(&b_ftrunc_early_write(), None).unwrap();
    assert_eq!(
        (c.word.as_str(), c.class),
        ("conforms (+1 background writeback)", Class::Conforms)
    );
}

#[test]
fn not_modelled_reasons() {
    let l: Vec<&str> = OPEN
        .iter()
        .copied()
        .chain(["call T0 pwrite fd=6 off=0 A", "ret T0 pwrite 4096"])
        .collect();
    // max_background / congestion_threshold are the model's now
    let m = mapping(&tr(
        json!({"max_background": 4, "congestion_threshold": 3}),
        &l,
    ));
    assert_eq!(
        (m.cfg.max_background, m.cfg.congestion_threshold),
        (Some(4), Some(3))
    );
    // a header threshold above max_background (recorded before
    // ServerConfig::check) is the min fuser sent in FUSE_INIT
    let m = mapping(&tr(
        json!({"max_background": 1, "congestion_threshold": 8}),
        &l,
    ));
    assert_eq!(
        (m.cfg.max_background, m.cfg.congestion_threshold),
        (Some(1), Some(1))
    );
    // a request the server never saw: a gap in the uniques
    let mut g = l.clone();
    g.extend([
        "call T0 fsync fd=6",
        "req 8 FSYNC",
        "reply 8 FSYNC",
        "ret T0 fsync 0",
    ]);
    let mut ev = tr(json!({}), &g);
    ev.retain(|e| e.unique != Some(6));
    assert!(not_modelled(&ev).contains("request 6 not recorded"));
    // a request the server answered ENOSYS itself is in the trace, and
    // not modelled
    let mut c = l.clone();
    c.extend(["req 6 COPY_FILE_RANGE", "reply 6 COPY_FILE_RANGE"]);
    assert!(not_modelled(&tr(json!({}), &c)).contains("COPY_FILE_RANGE is not modelled"));
    // opens: a second file, a first open that does not create, an OPEN
    // reply whose FOPEN_KEEP_CACHE disagrees with the header, a CREATE
    // outside the setup open
    let mut o = l.clone();
    o.extend(["call T1 open g O_RDWR", "ret T1 open 9"]);
    assert!(not_modelled(&tr(json!({}), &o)).contains("second file"));
    assert!(
        not_modelled(&tr(json!({}), &["call T0 open f 0x2", "ret T0 open 6"])).contains("O_CREAT")
    );
    let mut o = l.clone();
    o.extend([
        "call T1 open f 0x2",
        "req 10 OPEN",
        "reply 10 OPEN",
        "ret T1 open 9",
    ]);
    assert!(not_modelled(&tr(json!({"keep_cache": true}), &o)).contains("disagrees"));
    let mut o = l.clone();
    o.extend([
        "call T1 open f 0x2",
        "req 10 CREATE",
        "reply 10 CREATE",
        "ret T1 open 9",
    ]);
    assert!(not_modelled(&tr(json!({}), &o)).contains("CREATE outside"));
    // writes at every second page up to page 34: 35 regions, more than
    // the model's 16 positions
    let writes: Vec<String> = (1..18)
        .map(|i| format!("call T0 pwrite fd=6 off={} B", i * 8192))
        .collect();
    let mut o = l.clone();
    for w in &writes {
        o.extend([w.as_str(), "ret T0 pwrite 4096"]);
    }
    let w = not_modelled(&tr(json!({}), &o));
    assert!(
        w.contains("needs 35 model pages") && w.contains("the model has 16"),
        "{w}"
    );
    let mut o = l.clone();
    o.extend(["call T0 fallocate fd=6", "ret T0 fallocate 0"]);
    assert!(not_modelled(&tr(json!({}), &o)).contains("no model task"));
}

/// RELEASE is sent by the last fuse_file_put and every WRITE holds a
/// reference: a WRITE carrying an fh already RELEASEd is not checked (the
/// model has no fh), never reported as conforming.
#[test]
fn a_write_after_its_release_is_not_modelled() {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pwrite fd=6 off=0 A",
        "ret T0 pwrite 4096",
        "req 30 RELEASE fh=1",
        "reply 30 RELEASE",
        "call T0 fsync fd=6",
        "req 32 WRITE 0 4096 A cache fh=1",
        "reply 32 WRITE",
        "req 34 FSYNC",
        "reply 34 FSYNC",
        "ret T0 fsync 0",
    ]);
    let why = not_modelled(&tr(json!({}), &l));
    assert!(why.contains("RELEASEd"), "{why}");
    // the same WRITE with another fh is checked
    let i = l.iter().position(|x| x.starts_with("req 32")).unwrap();
    l[i] = "req 32 WRITE 0 4096 A cache fh=2";
    let _ = mapping(&tr(json!({}), &l));
}

#[test]
fn malformed_traces_are_input_errors() {
    assert!(translate(&[Event::mark("call T0 fsync fd=6")], None).is_err());
    let ev = tr(
        json!({}),
        &["call T0 pwrite fd=9 off=0 A", "ret T0 pwrite 4096"],
    );
    assert!(translate(&ev, None).unwrap_err().contains("unknown fd"));
}

/// `n` opens of one file, each read twice at a cached page, then closed;
/// every open gets fd 7 (a number reused after each close).
fn reads_on_opens(n: u32) -> Vec<Event> {
    let mut l: Vec<String> = OPEN.iter().map(|s| s.to_string()).collect();
    l.extend([
        "call T0 pwrite fd=6 off=0 A".into(),
        "ret T0 pwrite 4096".into(),
    ]);
    let mut u = 20;
    for _ in 0..n {
        l.extend([
            "call T0 open f 0x2".into(),
            format!("req {u} OPEN"),
            format!("reply {u} OPEN"),
            "ret T0 open 7".into(),
        ]);
        for _ in 0..2 {
            l.extend([
                "call T0 pread fd=7 off=0 len=4096".into(),
                "ret T0 pread 4096 data=A".into(),
            ]);
        }
        l.extend([
            "call T0 close fd=7".into(),
            format!("req {} FLUSH", u + 2),
            format!("reply {} FLUSH", u + 2),
            "ret T0 close 0".into(),
        ]);
        u += 4;
    }
    let l: Vec<&str> = l.iter().map(|s| s.as_str()).collect();
    tr(json!({}), &l)
}

/// The reads of one open share a model fd (its ra->prev_pos), and an fd
/// number reused by a new open is a new model fd (a fresh prev_pos);
/// more opens read twice than the model has fds is not modelled (a
/// fresh-open read there could be a false VIOLATION).
#[test]
fn reads_of_one_open_share_a_model_fd() {
    let m = mapping(&reads_on_opens(wbspec_models::fuse::MAX_FDS as u32));
    let fds: Vec<Option<u8>> = m
        .cfg
        .tasks
        .iter()
        .filter_map(|t| match t {
            TaskSpec::Read { fd, .. } => Some(*fd),
            _ => None,
        })
        .collect();
    let want: Vec<Option<u8>> = (0..wbspec_models::fuse::MAX_FDS as u8)
        .flat_map(|f| [Some(f), Some(f)])
        .collect();
    assert_eq!(fds, want);
    let w = not_modelled(&reads_on_opens(wbspec_models::fuse::MAX_FDS as u32 + 1));
    assert!(w.contains("opens read more than once"), "{w}");
}

/// A direct write above 1 MiB with max_write 2 MiB: fuse_direct_io cuts
/// it at fc->max_pages (256 pages: fuser's max(max_write, 128 KiB) / 4096
/// clamped by fc->max_pages_limit), not at max_write, so the kernel sends
/// two WRITEs; the model's one request is not this trace's.
#[test]
fn a_direct_write_above_fc_max_pages_is_not_modelled() {
    let tags = "A".repeat(512);
    let w = format!("call T0 pwrite fd=7 off=0 {tags}");
    let mut l = vec![
        "call T0 open f 0x42",
        "req 4 CREATE",
        "reply 4 CREATE",
        "ret T0 open 6",
        "call T0 open f 0x4002",
        "req 6 OPEN",
        "reply 6 OPEN FOPEN_DIRECT_IO",
        "ret T0 open 7",
    ];
    l.extend([w.as_str(), "ret T0 pwrite 2097152"]);
    let why = not_modelled(&tr(json!({"max_write": 2097152}), &l));
    assert!(
        why.contains("a direct I/O of 2097152 bytes above fc->max_pages (1048576 bytes)"),
        "{why}"
    );
}

/// The search's bound on the states possible at one event never exceeds
/// what MemAvailable holds (six copies of a state): a 2 GiB guest gets
/// an inconclusive verdict, not the OOM killer.
#[test]
fn the_state_bound_fits_the_machines_memory() {
    use super::search::states_in;
    let guest = "MemTotal:        2014000 kB\nMemFree:   1800000 kB\nMemAvailable:    1700000 kB\n";
    // 1,700,000 KiB over 6 * 1,432 + 64 bytes
    assert_eq!(states_in(guest, 1432), Some(201_109));
    assert!(states_in(guest, 1432).unwrap() < DEFAULT_BOUND);
    // a 23 GB host keeps the default bound
    let host = "MemAvailable:   23000000 kB\n";
    assert!(states_in(host, 1432).unwrap() > DEFAULT_BOUND);
    assert_eq!(states_in("MemTotal: 1 kB\n", 1500), None);
    assert_eq!(states_in("MemAvailable: x kB\n", 1500), None);
    assert_eq!(states_in("MemAvailable: 1 kB\n", 1500), Some(1000));
}

/// A finer split that could not be checked leaves a conforming verdict
/// standing, weaker, but does not show a VIOLATION: the rounding to
/// whole positions may be what the kernel's behaviour lacks, so the
/// verdict is inconclusive and names the coarser split's VIOLATION.
#[test]
fn an_unchecked_refinement_of_a_violation_is_inconclusive() {
    let c = |word: &str, class| Conformance {
        word: word.into(),
        class,
        detail: None,
    };
    let why = "the finer split's search is inconclusive";
    let u = super::unchecked(
        c("VIOLATION at event 3 (x)", Class::DoesNotConform),
        "[4]",
        why,
    );
    assert_eq!(
        u.word,
        "inconclusive (split as the trace names it: VIOLATION at event 3 (x); readahead edges inside positions at pages [4] not checked: the finer split's search is inconclusive)"
    );
    assert_eq!(u.class, Class::DoesNotConform);
    let u = super::unchecked(c("conforms", Class::Conforms), "[4]", why);
    assert_eq!(
        u.word,
        "conforms (readahead edges inside positions at pages [4] not checked: the finer split's search is inconclusive)"
    );
    assert_eq!(u.class, Class::Conforms);
}
