//! Uneven positions (issue 21; layout.rs in the model): a trace whose
//! offsets are not whole 1 KiB units is mapped at the offsets it names,
//! when its payloads carry digests (`segs`); its data is compared by
//! them, a stale position is a VIOLATION, and a trace that needs more
//! positions than the model has, or whose digests run across a
//! position's end, is refused.

use super::scan::{bound_tags, tag_text};
use super::test_trace::{conforms, mapping, not_modelled, tr, OPEN};
use super::*;
use serde_json::json;

const W1: &str = "0+100:aaaa1111";
const W2: &str = "100+12:bbbb2222";

/// A program writes 100 bytes at 0 and 12 at 100, fsyncs and reads the
/// 112 bytes back; the WRITE carries `write`, the read `read`.
fn small_writes(write: &str, read: &str) -> Vec<Event> {
    let c1 = format!("call T0 pwrite fd=6 off=0 A len=100 segs={W1}");
    let c2 = format!("call T0 pwrite fd=6 off=100 B len=12 segs={W2}");
    let req = format!("req 8 WRITE 0 112 A cache segs={write}");
    let ret = format!("ret T0 pread 112 data=A segs={read}");
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        c1.as_str(),
        "ret T0 pwrite 100",
        c2.as_str(),
        "ret T0 pwrite 12",
        "call T0 fsync fd=6",
        req.as_str(),
        "reply 8 WRITE",
        "req 10 FSYNC",
        "reply 10 FSYNC",
        "ret T0 fsync 0",
        "call T0 pread fd=6 off=0 len=112",
        ret.as_str(),
    ]);
    tr(json!({"segs": true}), &l)
}

#[test]
fn offsets_inside_a_page_become_uneven_positions() {
    let both = format!("{W1},{W2}");
    let ev = small_writes(&both, &both);
    let m = mapping(&ev);
    assert!(m.cfg.uneven(), "{}", m.summary());
    assert_eq!(
        m.cfg.position_bytes(),
        vec![(0, 100), (100, 12), (112, 3984)],
        "the offsets the trace names, then the rest of the page"
    );
    assert!(conforms(&ev));
    // the WRITE's 12 bytes at 100 are not what the program wrote: a
    // VIOLATION, by the digest of that position alone
    assert!(!conforms(&small_writes(
        &format!("{W1},100+12:bbbb2223"),
        &both
    )));
    // the read returns other bytes at 0..100
    assert!(!conforms(&small_writes(
        &both,
        &format!("0+100:aaaa1112,{W2}")
    )));
    // a write of zeros reads as '.'
    let z = bound_tags(&[0, 100, 112, 4096], "0+100:.,100+12:.", 0, 112).unwrap();
    assert_eq!(z, "..");
    // a position's tag is its digests', printed as `#~bucket`
    let t = bound_tags(&[0, 100, 112, 4096], &both, 0, 112).unwrap();
    assert_eq!(t.chars().count(), 2);
    assert!(tag_text(&t).starts_with("#~"), "{}", tag_text(&t));
}

#[test]
fn what_uneven_positions_cannot_map_is_refused() {
    // (more positions than the model has: `what_the_attack_on_uneven_
    // positions_found`, 21 of them)
    let both = format!("{W1},{W2}");
    // without digests (no `segs` in the header) offsets inside a 1 KiB
    // unit are not mapped: their data is not known
    let mut plain = small_writes(&both, &both);
    plain[0].config.as_mut().unwrap()["segs"] = json!(false);
    let w = not_modelled(&plain);
    assert!(w.contains("is not a whole number of 4 KiB pages"), "{w}");
    // a piece across a position's end, or data from inside a position,
    // is bad input
    let e = bound_tags(&[0, 100, 112, 4096], "0+112:aaaa1111", 0, 112).unwrap_err();
    assert!(e.contains("runs across byte 100"), "{e}");
    let e = bound_tags(&[0, 100, 112, 4096], "50+50:aaaa1111", 50, 50).unwrap_err();
    assert!(e.contains("inside a position"), "{e}");
    let e = bound_tags(&[0, 100], "0+100:.,100+8:.", 0, 108).unwrap_err();
    assert!(e.contains("past the mapping's last position"), "{e}");
}

/// A trace naming many offsets is refused with the first and last few,
/// not all of them; a READ reply that returned bytes without saying
/// which is bad input in a trace with digests; sendfile out of the
/// file has no model task.
#[test]
fn what_the_attack_on_uneven_positions_found() {
    let calls: Vec<String> = (0..20u64)
        .flat_map(|i| {
            [
                format!(
                    "call T0 pwrite fd=6 off={} A len=10 segs={}+10:aaaa{:04}",
                    i * 10,
                    i * 10,
                    i
                ),
                "ret T0 pwrite 10".to_string(),
            ]
        })
        .collect();
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend(calls.iter().map(String::as_str));
    let w = not_modelled(&tr(json!({"segs": true}), &l));
    assert!(
        w.contains("needs 21 positions of uneven size (bytes [0, 10, 20, 30, 40, 50, 60, 70, ... 10 more ..., 180, 190, 200, 4096]"),
        "{w}"
    );
    // the READ reply of the read back, its data removed
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 pread fd=6 off=0 len=4096",
        "req 8 READ 0 4096",
        "reply 8 READ tags=A bytes=200",
        "ret T0 pread 200 data=A segs=0+200:12345678",
    ]);
    let mut rd = tr(json!({"segs": true}), &l);
    let reply = rd.iter_mut().find(|e| e.is("reply", "READ")).unwrap();
    if let Some(r) = reply.result.as_mut() {
        r.as_object_mut().unwrap().remove("page_tags");
    }
    let e = translate(&rd, None).unwrap_err();
    assert!(
        e.contains("a READ reply of 200 bytes without its data"),
        "{e}"
    );
    // sendfile out of the file: marked without an offset
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend(["call T0 sendfile fd=6 path=f", "ret T0 sendfile 300"]);
    let w = not_modelled(&tr(json!({"segs": true}), &l));
    assert!(w.contains("sendfile out of a file of the mount"), "{w}");
}

/// `read_end` (scan.rs): a buffered read's end past every size the file
/// can have is its page's end, and at most ra_pages past the start of
/// the last page below the data; a read inside the data, or starting
/// that far out, keeps its end. (Bytes, 4 KiB pages, 32-page window.)
#[test]
fn a_buffered_reads_end_past_the_data_is_cut_where_nothing_differs() {
    let ra = 128 * 1024;
    let cut = |first, end, data_end| super::scan::read_end(first, end, data_end, PG, ra);
    // inside the data, or ending in the page that holds its end: as is
    assert_eq!(cut(0, 50, 100), 50);
    assert_eq!(cut(0, 200, 100), 200);
    // the end's page wholly past the data: that page's end
    assert_eq!(cut(0, 8292, 100), 12288);
    assert_eq!(cut(100, 4196, 100), 8192);
    // a miss lies in page 0, so any end from 132 KiB on asks more than
    // 32 pages: cut to 132 KiB
    assert_eq!(cut(0, ra, 100), ra);
    assert_eq!(cut(0, 1 << 20, 100), 4096 + ra);
    assert_eq!(cut(50, (1 << 20) + 50, 100), 4096 + ra);
    // data up to 4097: the last page below it is page 1
    assert_eq!(cut(0, 1 << 20, 4097), 8192 + ra);
    // a read that starts past the window's reach keeps its end
    assert_eq!(cut(1 << 20, (1 << 20) + 10, 100), (1 << 20) + 10);
}

/// A recorded program (`wbspec record`, 4 Dec 2026, Linux 6.18.44;
/// traces/record/bigbuf_reads.jsonl) writes 100 and 12 bytes and reads
/// with a 1 MiB buffer at seven offsets: each read's end named a
/// position a megabyte out, and the trace was not modelled (the file
/// taken to reach 1,052,672 bytes). Cut by `read_end`, it conforms in
/// seven positions, the last one the pages up to 132 KiB.
#[test]
fn reads_with_a_large_buffer_over_a_small_file_conform() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/traces/record/bigbuf_reads.jsonl");
    let ev = crate::trace::parse_trace(&std::fs::read_to_string(p).unwrap()).unwrap();
    let reads = ev
        .iter()
        .filter(|e| e.syscall.as_deref() == Some("pread") && e.kind.as_deref() == Some("call"))
        .count();
    assert_eq!(reads, 7);
    let m = mapping(&ev);
    let sizes: Vec<u32> = m.cfg.sub.unit_bytes[..m.cfg.pages as usize].to_vec();
    assert_eq!(sizes, [10, 10, 30, 50, 12, 3984, 131072]);
    assert!(matches!(check(&m, DEFAULT_BOUND), Verdict::Conforms { .. }));
}

/// An oversized read away from offset 0 takes the initial window
/// (page_cache_sync_ra: `req_count > max_pages`; finding
/// M-ra-oversized). traces/ra-oversized/oversized_read.jsonl (an attack's
/// program, recorded on 6.18.44 on 4 Dec 2026): 480 KiB written, 100
/// bytes at 700 KiB + 50, fsync, then a 512 KiB pread at 480 KiB, a
/// miss at page 120 after 120 cached pages. The kernel READs 32 pages
/// (the initial window, 128 KiB) and then the rest; the model, which
/// sent such a read down the prev-miss path, read the 128 requested
/// pages at once and said VIOLATION. (The first `read_end`, cutting one
/// page shorter, made it conform by chance, through the prev-miss
/// path's other branch; models/src/fuse/tests_layout.rs
/// `an_oversized_read_takes_the_initial_window` tests the window.)
#[test]
fn an_oversized_read_takes_the_initial_window() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/traces/ra-oversized/oversized_read.jsonl");
    let ev = crate::trace::parse_trace(&std::fs::read_to_string(p).unwrap()).unwrap();
    let reads: Vec<(Option<u64>, Option<u64>)> = ev
        .iter()
        .filter(|e| e.ev == "req" && e.op.as_deref() == Some("READ"))
        .map(|e| (e.offset, e.size))
        .collect();
    assert_eq!(reads[0], (Some(491520), Some(131072)), "{reads:?}");
    let m = mapping(&ev);
    let v = check(&m, DEFAULT_BOUND);
    assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.short());
}
