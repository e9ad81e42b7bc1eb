//! Traces of more than 4 (up to 16) positions, from an attack on the
//! widening of the model's positions (3 Dec 2026): a readahead READ
//! past position 8, thirteen and more WRITEs queued at once, and a
//! finished fsync in a slot that holds no version.

use super::test_trace::{mapping, tr, OPEN};
use super::*;
use serde_json::json;

fn letters(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| ((b'A' + i as u8) as char).to_string())
        .collect()
}

/// `n` one-page pwrites, an fsync whose WRITE carries them all, a second
/// open without FOPEN_KEEP_CACHE (the cache is dropped) and a pread of
/// the whole file whose READ reply and return say `back`.
fn write_then_read_back(n: usize, back: &str) -> Vec<String> {
    let mut l: Vec<String> = OPEN.iter().map(|s| s.to_string()).collect();
    let ls = letters(n);
    for (i, c) in ls.iter().enumerate() {
        l.push(format!("call T0 pwrite fd=6 off={} {c}", 4096 * i));
        l.push("ret T0 pwrite 4096".into());
    }
    let all: String = ls.concat();
    l.extend([
        "call T0 fsync fd=6".into(),
        format!("req 8 WRITE 0 {} {all} cache", 4096 * n),
        "reply 8 WRITE".into(),
        "req 10 FSYNC".into(),
        "reply 10 FSYNC".into(),
        "ret T0 fsync 0".into(),
        "call T0 open f 0x2".into(),
        "req 12 OPEN".into(),
        "reply 12 OPEN".into(),
        "ret T0 open 7".into(),
        format!("call T0 pread fd=7 off=0 len={}", 4096 * n),
        format!("req 14 READ 0 {}", 4096 * n),
        format!("reply 14 READ tags={back}"),
        format!("ret T0 pread {} data={back}", 4096 * n),
    ]);
    l
}

fn verdict(l: &[String], header: serde_json::Value, cap: usize) -> String {
    let lr: Vec<&str> = l.iter().map(String::as_str).collect();
    let m = mapping(&tr(header, &lr));
    let v = check_in_slots(&m, DEFAULT_BOUND, cap);
    format!("{}: {}", v.kind(), v.short())
}

/// fuse_readahead's READ of the whole window: ra_send took at most 8
/// positions, so a window past position 8 was a READ the model could
/// not send (a false VIOLATION at 9 and more). A stale page in the
/// reply is still one.
#[test]
fn a_readahead_read_of_up_to_16_positions_conforms() {
    for n in [4usize, 8, 9, 12, 13] {
        let all = letters(n).concat();
        let v = verdict(&write_then_read_back(n, &all), json!({}), MODEL_TASKS);
        assert!(v.starts_with("conforms"), "{n} pages: {v}");
        let stale = format!("{}Z", &all[..n - 1]);
        let v = verdict(&write_then_read_back(n, &stale), json!({}), MODEL_TASKS);
        assert!(v.starts_with("violation"), "{n} pages, stale: {v}");
    }
    // 16 pages of distinct data outrun the 13 data versions: a limit,
    // said as such
    let v = verdict(
        &write_then_read_back(16, &letters(16).concat()),
        json!({}),
        MODEL_TASKS,
    );
    assert!(
        v.contains("inconclusive") && v.contains("no free data version"),
        "{v}"
    );
}

/// An fsync of 13 dirty pages with a max_write of one page: as
/// many WRITEs at once on /dev/fuse, more than the queue held when the
/// model had 4 positions (12: the model aborted with "model bound
/// exceeded").
#[test]
fn one_write_per_page_of_13_fits_the_queues() {
    for n in [13usize] {
        let mut l: Vec<String> = OPEN.iter().map(|s| s.to_string()).collect();
        let ls = letters(n);
        for (i, c) in ls.iter().enumerate() {
            l.push(format!("call T0 pwrite fd=6 off={} {c}", 4096 * i));
            l.push("ret T0 pwrite 4096".into());
        }
        l.push("call T0 fsync fd=6".into());
        for (i, c) in ls.iter().enumerate() {
            l.push(format!(
                "req {} WRITE {} 4096 {c} cache",
                20 + 2 * i,
                4096 * i
            ));
            l.push(format!("reply {} WRITE", 20 + 2 * i));
        }
        l.extend([
            "req 90 FSYNC".into(),
            "reply 90 FSYNC".into(),
            "ret T0 fsync 0".into(),
        ]);
        let v = verdict(&l, json!({"max_write": 4096}), MODEL_TASKS);
        assert!(v.starts_with("conforms"), "{n} pages: {v}");
    }
}

/// A finished fsync in a slot with no version (it writes nothing) must
/// drop its snapshot like any finished slot: kept, it held the 12 pages'
/// old versions, and the next writes found no free version
/// ("inconclusive") in 2, 3 or 8 slots.
#[test]
fn a_finished_fsync_in_a_slot_of_no_version_holds_no_version() {
    let mut l: Vec<String> = OPEN.iter().map(|s| s.to_string()).collect();
    let ls = letters(12);
    for (i, c) in ls.iter().enumerate().take(11) {
        l.push(format!("call T0 pwrite fd=6 off={} {c}", 4096 * i));
        l.push("ret T0 pwrite 4096".into());
    }
    for x in [
        "call T0 pwrite fd=6 off=45056 L",
        "call T1 fsync fd=6",
        "ret T0 pwrite 4096",
        "req 8 WRITE 0 49152 ABCDEFGHIJKL cache",
        "reply 8 WRITE",
        "req 10 FSYNC pid=8",
        "reply 10 FSYNC",
        "ret T1 fsync 0",
        "call T0 pwrite fd=6 off=0 M",
        "ret T0 pwrite 4096",
        "call T0 fsync fd=6",
        "req 12 WRITE 0 4096 M cache",
        "reply 12 WRITE",
        "req 14 FSYNC",
        "reply 14 FSYNC",
        "ret T0 fsync 0",
        "call T0 pwrite fd=6 off=0 N",
        "ret T0 pwrite 4096",
        "call T0 fsync fd=6",
        "req 16 WRITE 0 4096 N cache",
        "reply 16 WRITE",
        "req 18 FSYNC",
        "reply 18 FSYNC",
        "ret T0 fsync 0",
    ] {
        l.push(x.into());
    }
    for cap in [2usize, 3, MODEL_TASKS] {
        let v = verdict(&l, json!({}), cap);
        assert!(v.starts_with("conforms"), "{cap} slots: {v}");
    }
}

/// A syscall's label is cut to 45 bytes for the report; cut inside a
/// character of a UTF-8 file name it panicked (an attack, 3 Dec 2026).
#[test]
fn a_long_non_ascii_file_name_is_labelled_without_a_panic() {
    for pre in ["", "a", "ab"] {
        let name = format!("{pre}{}", "é".repeat(30));
        let open = format!("call T0 open {name} 0x42");
        let w = format!("call T0 pwrite fd=6 off=0 A path={name}");
        let l: Vec<String> = [
            open.as_str(),
            "req 4 CREATE",
            "reply 4 CREATE",
            "ret T0 open 6",
            w.as_str(),
            "ret T0 pwrite 4096",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let v = verdict(&l, json!({}), MODEL_TASKS);
        assert!(v.starts_with("conforms"), "{pre}: {v}");
    }
}
