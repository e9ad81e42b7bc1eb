//! Traces whose offsets and sizes are not whole 4 KiB pages: the unit
//! they are mapped in (2 or 1 KiB), the model's sub-page configuration,
//! data checked per unit, and the refusals (docs/conformance.md, "Units
//! below a page").

use super::test_trace::{mapping, not_modelled, tr, OPEN};
use super::*;
use serde_json::json;
use wbspec_models::fuse::TaskSpec;

/// A new file, `len` bytes of A written at `off` and fsynced: the
/// WRITE's unit tags are `units` (None: its page tags give them).
fn write_fsync(off: u64, len: u64, units: Option<&str>, cfg: serde_json::Value) -> Vec<Event> {
    let a = "A".repeat(len.div_ceil(4096) as usize);
    let call = format!("call T0 pwrite fd=6 off={off} {a} len={len}");
    let ret = format!("ret T0 pwrite {len}");
    let req = format!(
        "req 8 WRITE {off} {len} {a} cache{}",
        units.map(|u| format!(" units={u}")).unwrap_or_default()
    );
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        call.as_str(),
        ret.as_str(),
        "call T0 fsync fd=6",
        req.as_str(),
        "reply 8 WRITE",
        "req 10 FSYNC",
        "reply 10 FSYNC",
        "ret T0 fsync 0",
    ]);
    tr(cfg, &l)
}

/// The unit is the largest of 4, 2 and 1 KiB that every offset, length
/// and size is a whole number of; a page is then 2 or 4 model units,
/// each model position one unit (real_pages all ones).
#[test]
fn the_unit_is_the_largest_that_divides_every_size() {
    let m = mapping(&write_fsync(0, 2048, None, json!({})));
    assert_eq!(m.cfg.sub.units_per_page, 2);
    assert_eq!(m.cfg.unit_bytes(), 2048);
    assert_eq!(m.cfg.pages, 2);
    assert_eq!(m.regions, vec![(0, 1), (1, 2)]);
    assert_eq!(m.cfg.tasks[0], TaskSpec::Write { first: 0, n: 1 });
    assert!(m.cfg.real_pages.iter().all(|r| *r == 1));
    let m = mapping(&write_fsync(1024, 2048, None, json!({})));
    assert_eq!(m.cfg.sub.units_per_page, 4);
    assert_eq!(m.cfg.pages, 4);
    assert_eq!(m.cfg.tasks[0], TaskSpec::Write { first: 1, n: 2 });
    assert_eq!(m.cfg.max_pages, 1);
    // the write returns its bytes: units of 1 KiB
    use super::returns::{returns, Returns};
    assert_eq!(returns(&m, 0), Returns::Exactly(2048));
    // 2 KiB units over two pages: fc->max_pages (256 pages of 1 MiB)
    // covers both
    let m = mapping(&write_fsync(2048, 6144, None, json!({})));
    assert_eq!(m.cfg.sub.units_per_page, 2);
    assert_eq!(m.cfg.pages, 4);
    assert_eq!(m.cfg.max_pages, 2);
    let m = mapping(&write_fsync(2048, 6144, None, json!({"max_write": 4096})));
    assert_eq!(m.cfg.max_pages, 1);
    // an aligned trace keeps whole pages
    let m = mapping(&write_fsync(0, 8192, None, json!({})));
    assert_eq!(m.cfg.sub.units_per_page, 1);
    assert_eq!(m.regions, vec![(0, 2)]);
}

/// Sub-page traces conform when the data matches unit by unit, and do
/// not when a unit of a WRITE carries data nobody wrote there.
#[test]
fn data_is_checked_per_unit() {
    let ok = mapping(&write_fsync(0, 3072, None, json!({})));
    let v = check(&ok, DEFAULT_BOUND);
    assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.report(&ok));
    // the same WRITE whose third unit is zeros
    let bad = mapping(&write_fsync(0, 3072, Some("AA."), json!({})));
    let v = check(&bad, DEFAULT_BOUND);
    assert!(matches!(v, Verdict::Violation { .. }), "{}", v.report(&bad));
}

/// What cannot be mapped in units is not modelled, with the reason.
#[test]
fn unit_refusals_name_their_reason() {
    let w = not_modelled(&write_fsync(0, 1000, None, json!({})));
    assert!(
        w.contains("pwrite length 1000 is not a whole number of 4 KiB pages nor of 1 KiB units"),
        "{w}"
    );
    let w = not_modelled(&write_fsync(16384, 1024, None, json!({})));
    assert!(w.contains("needs 20 units of 1024 bytes"), "{w}");
    assert!(w.contains("the model has 16 units in all"), "{w}");
    let w = not_modelled(&write_fsync(0, 1024, None, json!({"unit_tags": false})));
    assert!(w.contains("data tags per 4 KiB page only"), "{w}");
}

/// Write-through writes below a page are modelled (issue 18): a 2 KiB
/// pwrite on a write-through mount, its synchronous WRITE inside the
/// syscall, maps to units and conforms; the same WRITE whose second
/// unit carries zeros nobody wrote does not.
#[test]
fn write_through_below_a_page_conforms() {
    let trace = |units: &str| {
        let req = format!("req 10 WRITE 0 2048 A pid=7{units}");
        let mut l: Vec<&str> = OPEN.to_vec();
        l.extend([
            "call T0 pwrite fd=6 off=0 A len=2048",
            "req 8 GETXATTR pid=7",
            "reply 8 GETXATTR",
            req.as_str(),
            "reply 10 WRITE",
            "ret T0 pwrite 2048",
        ]);
        tr(json!({"writeback_cache": false}), &l)
    };
    let ok = mapping(&trace(""));
    assert!(ok.cfg.sub.units_per_page > 1, "mapped in units");
    assert!(!ok.cfg.writeback_cache);
    let v = check(&ok, DEFAULT_BOUND);
    assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.report(&ok));
    let bad = mapping(&trace(" units=A."));
    let v = check(&bad, DEFAULT_BOUND);
    assert!(matches!(v, Verdict::Violation { .. }), "{}", v.report(&bad));
}

/// A READ reply whose byte count ends inside a unit is not modelled.
#[test]
fn a_reply_of_part_of_a_unit_is_not_modelled() {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pwrite fd=6 off=0 A len=1024",
        "ret T0 pwrite 1024",
        "call T1 pread fd=6 off=0 len=4096",
        "req 8 READ 0 4096",
        "reply 8 READ tags=A bytes=1000",
        "ret T1 pread 1000 data=A",
    ]);
    let w = not_modelled(&tr(json!({}), &l));
    assert!(
        w.contains("a READ reply of 1000 bytes, not whole units of 1024 bytes"),
        "{w}"
    );
}

/// A 2 KiB-aligned trace whose WRITE has its second 1 KiB stale (zeros
/// where A was written) is checked in 1 KiB units, where the stale half
/// is a violation; in 2 KiB units only each unit's first 1 KiB tag was
/// compared and the trace conformed. (Whole-page traces compare page
/// tags only: fio's random bytes give every 1 KiB its own tag.)
#[test]
fn a_difference_inside_a_unit_is_not_hidden_by_a_larger_unit() {
    let ok = mapping(&write_fsync(0, 2048, None, json!({})));
    assert_eq!(ok.cfg.sub.units_per_page, 2);
    let half = write_fsync(0, 2048, Some("A."), json!({}));
    let bad = mapping(&half);
    assert_eq!(bad.cfg.sub.units_per_page, 4);
    let v = check(&bad, DEFAULT_BOUND);
    assert!(matches!(v, Verdict::Violation { .. }), "{}", v.report(&bad));
}
