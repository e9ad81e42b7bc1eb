//! Unit tests of write-through traces (no writeback_cache): one
//! synchronous WRITE per pwrite inside the syscall, and pwrites split into
//! max_write chunks. The trace notation is in test_trace.rs.

use super::test_trace::{mapping, not_modelled, tr, OPEN};
use super::*;
use serde_json::json;
use wbspec_models::fuse::TaskSpec;

const NOWBC: fn() -> serde_json::Value = || json!({"writeback_cache": false});

/// a_nowbc's start: write-through pwrites "A" and "B", each with one
/// synchronous WRITE (no FUSE_WRITE_CACHE) inside the syscall.
pub(super) fn nowbc(body: &[&str]) -> Vec<Event> {
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
