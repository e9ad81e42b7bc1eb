//! Unit tests of translation and search on recorded and hand-made traces.

use super::*;
use serde_json::json;
use wbspec_models::fuse::{Kernel, TaskSpec};

/// A hand-written trace in a compact notation, one event per line:
/// `call T0 pwrite fd=6 off=0 AB` / `ret T0 pwrite 8192` (marks),
/// `req U OP [off size tags] [cache] [size=N] [pid=P]`, `reply U OP [k=v...]`.
/// Requests carry what the recorder writes: the file's nodeid (2; the root,
/// 1, for LOOKUP and CREATE) and the pid of the call pending when they are
/// read (7 + its number; 0 for a page-cache WRITE or RELEASE) unless
/// `pid=` says otherwise. CREATE replies name ino 2, WRITE replies write the
/// request's size, READ replies return as many bytes as they have tags.
pub(super) fn tr(cfg: serde_json::Value, lines: &[&str]) -> Vec<Event> {
    let mut base = json!({"writeback_cache": true, "max_write": 1048576,
        "max_background": 16, "congestion_threshold": 12, "keep_cache": false,
        "dio_on_odirect": true, "direct_io_allow_mmap": false, "atomic_o_trunc": false});
    for (k, v) in cfg.as_object().unwrap() {
        base[k] = v.clone();
    }
    let mut v = vec![Event::header("6.18.44-test", base, "hand")];
    // the last call still pending, and each request's size
    let mut calls: Vec<u32> = vec![];
    let mut sizes = std::collections::HashMap::new();
    for (i, l) in lines.iter().enumerate() {
        let w: Vec<&str> = l.split_whitespace().collect();
        let mut e = match w[0] {
            "call" | "ret" => {
                let e = Event::mark(l);
                let n: u32 = w[1].trim_start_matches('T').parse().unwrap();
                if w[0] == "call" {
                    calls.push(n);
                } else {
                    calls.retain(|c| *c != n);
                }
                e
            }
            "req" => {
                let mut e = Event::new("req");
                e.unique = w[1].parse().ok();
                e.op = Some(w[2].into());
                if w[2] == "WRITE" || w[2] == "READ" {
                    e.offset = w[3].parse().ok();
                    e.size = w[4].parse().ok();
                }
                if w[2] == "WRITE" {
                    e.page_tags = Some(w[5].into());
                    e.write_flags = Some(if w.get(6) == Some(&"cache") { 1 } else { 2 });
                }
                e.nodeid = Some(if matches!(w[2], "LOOKUP" | "CREATE") {
                    1
                } else {
                    2
                });
                e.pid = Some(if e.is_cache_write() || w[2] == "RELEASE" {
                    0
                } else {
                    calls.last().map_or(7, |c| 7 + c)
                });
                for x in &w[3..] {
                    if let Some(s) = x.strip_prefix("size=") {
                        e.size = s.parse().ok();
                    } else if let Some(p) = x.strip_prefix("pid=") {
                        e.pid = p.parse().ok();
                    } else if let Some(h) = x.strip_prefix("fh=") {
                        e.fh = h.parse().ok();
                    } else if *x == "O_TRUNC" {
                        e.flag_names = Some(vec!["O_RDWR".into(), "O_TRUNC".into()]);
                    }
                }
                sizes.insert(e.unique, e.size.unwrap_or(0));
                e
            }
            "reply" => {
                let mut e = Event::new("reply");
                e.unique = w[1].parse().ok();
                e.op = Some(w[2].into());
                let mut r = json!({});
                for x in &w[3..] {
                    if let Some(t) = x.strip_prefix("tags=") {
                        r["page_tags"] = json!(t);
                        r["bytes"] = json!(t.len() * 4096);
                    } else if *x == "FOPEN_DIRECT_IO" || *x == "FOPEN_KEEP_CACHE" {
                        if r.get("open_flags").is_none() {
                            r["open_flags"] = json!([]);
                        }
                        r["open_flags"].as_array_mut().unwrap().push(json!(x));
                    }
                }
                if (w[2] == "OPEN" || w[2] == "CREATE") && r.get("open_flags").is_none() {
                    r["open_flags"] = json!([]);
                }
                match w[2] {
                    "CREATE" => r["ino"] = json!(2),
                    "WRITE" => r["written"] = json!(sizes[&e.unique]),
                    "READ" if r.get("bytes").is_none() => r["bytes"] = json!(sizes[&e.unique]),
                    _ => {}
                }
                e.result = Some(r);
                e
            }
            other => panic!("bad line {other}"),
        };
        e.seq = i as u64 + 2;
        v.push(e);
    }
    // These traces leave out requests the mapping filters; a recorded
    // trace has every unique (a gap is "not recorded"), so fill the gaps
    // with filtered LOOKUPs at the start.
    let mut us: Vec<u64> = v
        .iter()
        .filter(|e| e.ev == "req")
        .filter_map(|e| e.unique)
        .collect();
    us.sort();
    let mut fill = vec![];
    for w in us.windows(2) {
        for u in (w[0] + 2..w[1]).step_by(2) {
            for kind in ["req", "reply"] {
                let mut e = Event::new(kind);
                e.unique = Some(u);
                e.op = Some("LOOKUP".into());
                if kind == "req" {
                    e.nodeid = Some(1);
                    e.pid = Some(7);
                } else {
                    e.result = Some(json!({"ino": 2}));
                }
                fill.push(e);
            }
        }
    }
    v.splice(1..1, fill);
    for (i, e) in v.iter_mut().enumerate() {
        e.seq = i as u64 + 1;
    }
    v
}

fn mapping(ev: &[Event]) -> Mapping {
    match translate(ev, None).unwrap() {
        Translation::Modelled(m) => *m,
        Translation::NotModelled(w) => panic!("not modelled: {w}"),
    }
}

pub(super) fn not_modelled(ev: &[Event]) -> String {
    match translate(ev, None).unwrap() {
        Translation::Modelled(_) => panic!("unexpectedly modelled"),
        Translation::NotModelled(w) => w,
    }
}

pub(super) const OPEN: &[&str] = &[
    "call T0 open f 0x42",
    "req 4 CREATE",
    "reply 4 CREATE",
    "ret T0 open 6",
];

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
    assert_eq!(last.obs, Obs::Reply(Pat::Flush, vec![]));
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
        assert_eq!(
            matches!(v, Verdict::Conforms { .. }),
            ok,
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
            "ret T1 pread 8192",
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
        assert_eq!(m.cfg.tasks[2], TaskSpec::DioRead { first: 0, n: 1 });
        let v = check(&m, DEFAULT_BOUND);
        assert_eq!(
            matches!(v, Verdict::Conforms { .. }),
            ok,
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
    let mut o = l.clone();
    o.extend(["call T0 pwrite fd=6 off=8192 B", "ret T0 pwrite 4096"]);
    o.extend(["call T0 pwrite fd=6 off=20480 C", "ret T0 pwrite 4096"]);
    assert!(not_modelled(&tr(json!({}), &o)).contains("model pages"));
    let mut o = l.clone();
    o.extend(["call T0 fallocate fd=6", "ret T0 fallocate 0"]);
    assert!(not_modelled(&tr(json!({}), &o)).contains("no model task"));
}

const NOWBC: fn() -> serde_json::Value = || json!({"writeback_cache": false});

/// a_nowbc's start: write-through pwrites "A" and "B", each with one
/// synchronous WRITE (no FUSE_WRITE_CACHE) inside the syscall.
fn nowbc(body: &[&str]) -> Vec<Event> {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pwrite fd=6 off=0 A",
        "req 8 GETXATTR pid=7",
        "reply 8 GETXATTR",
        "req 10 WRITE 0 4096 A pid=7",
        "reply 10 WRITE",
        "ret T0 pwrite 4096",
    ]);
    l.extend(body);
    tr(NOWBC(), &l)
}

#[test]
fn write_through_is_checked() {
    let ok = nowbc(&[
        "call T0 pwrite fd=6 off=4096 B",
        "req 12 WRITE 4096 4096 B pid=7",
        "reply 12 WRITE",
        "ret T0 pwrite 4096",
    ]);
    let m = mapping(&ok);
    assert!(!m.cfg.writeback_cache);
    assert_eq!(m.cfg.tasks[1], TaskSpec::Write { first: 1, n: 1 });
    assert!(m.obs.iter().any(|o| o.obs
        == Obs::Read(Pat::ThroughWrite {
            first: 1,
            n: 1,
            payload: vec![vec![3]],
        })));
    let v = check(&m, DEFAULT_BOUND);
    assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.report(&m));
    // the WRITE read before the pwrite is issued
    let early = nowbc(&[
        "req 12 WRITE 4096 4096 B pid=7",
        "reply 12 WRITE",
        "call T0 pwrite fd=6 off=4096 B",
        "ret T0 pwrite 4096",
    ]);
    let m = mapping(&early);
    match check(&m, DEFAULT_BOUND) {
        Verdict::Violation { index, .. } => {
            assert!(matches!(
                m.obs[index].obs,
                Obs::Read(Pat::ThroughWrite { .. })
            ))
        }
        v => panic!("expected a violation, got {}", v.short()),
    }
    // the WRITE carries the first write's letter
    let stale = nowbc(&[
        "call T0 pwrite fd=6 off=4096 B",
        "req 12 WRITE 4096 4096 A pid=7",
        "reply 12 WRITE",
        "ret T0 pwrite 4096",
    ]);
    let m = mapping(&stale);
    match check(&m, DEFAULT_BOUND) {
        Verdict::Violation { index, instead, .. } => {
            assert!(matches!(
                m.obs[index].obs,
                Obs::Read(Pat::ThroughWrite { .. })
            ));
            assert_eq!(instead, vec!["read WRITE(p1 T1) payload [v3]".to_string()]);
        }
        v => panic!("expected a violation, got {}", v.short()),
    }
    // pwrite returns before its WRITE is answered
    let ret_early = nowbc(&[
        "call T0 pwrite fd=6 off=4096 B",
        "req 12 WRITE 4096 4096 B pid=7",
        "ret T0 pwrite 4096",
        "reply 12 WRITE",
    ]);
    let m = mapping(&ret_early);
    assert!(matches!(
        check(&m, DEFAULT_BOUND),
        Verdict::Violation { .. }
    ));
}

#[test]
fn split_write_through_is_checked() {
    // max_write 4 KiB: a 2-page pwrite goes as two WRITEs; the model's
    // write task sends the same two chunks (max_write 1 model page)
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pwrite fd=6 off=0 A",
        "req 10 WRITE 0 4096 A pid=7",
        "reply 10 WRITE",
        "ret T0 pwrite 4096",
        "call T0 pwrite fd=6 off=4096 BC",
        "req 12 WRITE 4096 4096 B pid=7",
        "reply 12 WRITE",
        "req 14 WRITE 8192 4096 C pid=7",
        "reply 14 WRITE",
        "ret T0 pwrite 8192",
        "call T0 fsync fd=6",
        "req 16 FSYNC",
        "reply 16 FSYNC",
        "ret T0 fsync 0",
    ]);
    let cfg = json!({"writeback_cache": false, "max_write": 4096});
    let ev = tr(cfg.clone(), &l);
    let m = mapping(&ev);
    assert_eq!(m.cfg.tasks.len(), 3);
    assert_eq!(m.cfg.max_write, Some(1));
    assert!(m.cut.is_none());
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.class, Class::Conforms, "{}", c.word);
    // the second chunk's WRITE read before the first is answered: the
    // loop is synchronous
    let mut o = l.clone();
    let i = o.iter().position(|x| *x == "reply 12 WRITE").unwrap();
    o.swap(i, i + 1);
    let m = mapping(&tr(cfg.clone(), &o));
    assert!(matches!(
        check(&m, DEFAULT_BOUND),
        Verdict::Violation { .. }
    ));
    // pwrite returns less than the chunks written
    let mut o = l.clone();
    let i = o.iter().position(|x| *x == "ret T0 pwrite 8192").unwrap();
    o[i] = "ret T0 pwrite 4096";
    let m = mapping(&tr(cfg.clone(), &o));
    assert!(matches!(
        check(&m, DEFAULT_BOUND),
        Verdict::Violation { .. }
    ));
    // chunks that no uniform model max_write produces: a 4-page pwrite
    // sent as 1 + 2 + 1 pages, with a read cutting the middle chunk
    let mut o: Vec<&str> = OPEN.to_vec();
    o.extend([
        "call T0 pwrite fd=6 off=0 ABCD",
        "req 10 WRITE 0 4096 A pid=7",
        "reply 10 WRITE",
        "req 12 WRITE 4096 8192 BC pid=7",
        "reply 12 WRITE",
        "req 14 WRITE 12288 4096 D pid=7",
        "reply 14 WRITE",
        "ret T0 pwrite 16384",
        "call T0 pread fd=6 off=4096 len=4096",
        "ret T0 pread 4096 data=B",
    ]);
    let why = not_modelled(&tr(
        json!({"writeback_cache": false, "max_write": 8192}),
        &o,
    ));
    assert!(
        why.contains("the kernel's write-through WRITEs are"),
        "{why}"
    );
    // a non-CACHE WRITE from pid 0, or from another pid than the writer's
    let mut o = l[..8].to_vec();
    o.extend([
        "call T0 pwrite fd=6 off=4096 B",
        "req 12 WRITE 4096 4096 B pid=0",
        "reply 12 WRITE",
        "ret T0 pwrite 4096",
    ]);
    assert!(not_modelled(&tr(cfg.clone(), &o)).contains("pid 0"));
    o[9] = "req 12 WRITE 4096 4096 B pid=9";
    assert!(not_modelled(&tr(cfg, &o)).contains("not from the writer"));
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
