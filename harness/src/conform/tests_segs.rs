//! Data compared by segment digests (`segs`, written by `wbspec record`:
//! trace::segs, record/segs.rs): a payload whose first bytes agree but
//! whose bytes do not is caught, where first-byte tags let it through;
//! digests that do not tile their payload are bad input.

use super::scan::{seg_tags, tag_text};
use super::test_trace::{conforms, set_mark, tr, OPEN};
use super::*;
use serde_json::json;

/// A program writes 8 KiB of A (digests `call_segs`), fsyncs and reads
/// it back; the WRITE carries `write_segs`, or first-byte tags only.
fn write_fsync(call_segs: &str, write_segs: Option<&str>) -> Vec<Event> {
    let call = format!("call T0 pwrite fd=6 off=0 AA len=8192 segs={call_segs}");
    let req = match write_segs {
        Some(s) => format!("req 8 WRITE 0 8192 AA cache segs={s}"),
        None => "req 8 WRITE 0 8192 AA cache".to_string(),
    };
    let ret = format!("ret T0 pread 8192 data=AA segs={call_segs}");
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        call.as_str(),
        "ret T0 pwrite 8192",
        "call T0 fsync fd=6",
        req.as_str(),
        "reply 8 WRITE",
        "req 10 FSYNC",
        "reply 10 FSYNC",
        "ret T0 fsync 0",
        "call T0 pread fd=6 off=0 len=8192",
        ret.as_str(),
    ]);
    tr(json!({"segs": true}), &l)
}

#[test]
fn a_page_whose_first_byte_agrees_but_whose_bytes_do_not_is_a_violation() {
    let wrote = "0+4096:1111aaaa,4096+4096:2222bbbb";
    assert!(conforms(&write_fsync(wrote, Some(wrote))));
    // the WRITE's second page holds other bytes (its first byte is still
    // A): caught by its digest
    assert!(!conforms(&write_fsync(
        wrote,
        Some("0+4096:1111aaaa,4096+4096:3333cccc")
    )));
    // the right digests under a wrong first byte: still a VIOLATION
    // (a digest tag keeps the first byte, so it never passes what first
    // bytes catch; an attack found a stale page whose digests shared a
    // bucket with the right ones)
    let mut ev = write_fsync(wrote, Some(wrote));
    let w = ev.iter_mut().find(|e| e.is("req", "WRITE")).unwrap();
    w.page_tags = Some("BA".into());
    assert!(!conforms(&ev));
    // the same trace without digests anywhere (and no `segs` in its
    // header) conforms: first bytes cannot tell
    let mut plain = write_fsync(wrote, None);
    plain[0].config.as_mut().unwrap()["segs"] = json!(false);
    for e in plain.iter_mut().filter(|e| e.ev == "mark") {
        let t = e.text.clone().unwrap();
        let kept: Vec<&str> = t.split(' ').filter(|w| !w.starts_with("segs=")).collect();
        *e = Event {
            seq: e.seq,
            ..Event::mark(&kept.join(" "))
        };
    }
    assert!(conforms(&plain));
    // a payload without digests in a trace whose header says segs is bad
    // input, not compared by its first bytes
    let e = translate(&write_fsync(wrote, None), None).unwrap_err();
    assert!(
        e.contains("8192 bytes at 0 without segs= in a trace whose header says segs"),
        "{e}"
    );
}

/// A write whose buffer the program changed while it ran (the
/// recorder's copies at entry and exit differ) is not compared: its
/// bytes at the kernel's copy are not known.
#[test]
fn a_write_whose_buffer_changed_is_not_modelled() {
    let wrote = "0+4096:1111aaaa,4096+4096:2222bbbb";
    let mut ev = write_fsync(wrote, Some(wrote));
    set_mark(
        &mut ev,
        "ret T0 pwrite 8192",
        "ret T0 pwrite 8192 buffer=changed",
    );
    let w = super::test_trace::not_modelled(&ev);
    assert!(
        w.contains("T0's pwrite: the program changed its buffer while the write ran"),
        "{w}"
    );
    // and a payload still in hex is bad input
    let mut ev = write_fsync(wrote, Some(wrote));
    let req = ev.iter_mut().find(|e| e.is("req", "WRITE")).unwrap();
    req.raw = Some("41".into());
    let e = translate(&ev, None).unwrap_err();
    assert!(e.contains("carries a raw payload"), "{e}");
}

/// A read short of a fault in its buffer (the recorder's `buffer=fault`)
/// is not the file's end: not modelled, where it was a false VIOLATION
/// (the model's read returns every page below i_size). A read or write
/// that returns more than it asked for is no kernel's: bad input.
#[test]
fn a_read_short_of_a_fault_is_not_modelled_and_more_than_asked_is_bad_input() {
    let wrote = "0+4096:1111aaaa,4096+4096:2222bbbb";
    let with_ret = |old: &str, new: &str| {
        let mut ev = write_fsync(wrote, Some(wrote));
        set_mark(&mut ev, old, new);
        ev
    };
    // two writes of a page each, so a page is a position; the read of
    // both returns the first only, at a position's end: without the
    // recorder's word it is a short read the model does not have
    let two = |ret: &str| {
        let mut l: Vec<&str> = OPEN.to_vec();
        l.extend([
            "call T0 pwrite fd=6 off=0 A len=4096 segs=0+4096:1111aaaa",
            "ret T0 pwrite 4096",
            "call T0 pwrite fd=6 off=4096 A len=4096 segs=4096+4096:2222bbbb",
            "ret T0 pwrite 4096",
            "call T0 pread fd=6 off=0 len=8192",
            ret,
        ]);
        tr(json!({"segs": true}), &l)
    };
    let short = "ret T0 pread 4096 data=A segs=0+4096:1111aaaa";
    assert!(conforms(&two(
        "ret T0 pread 8192 data=AA segs=0+4096:1111aaaa,4096+4096:2222bbbb"
    )));
    assert!(!conforms(&two(short)));
    let w = super::test_trace::not_modelled(&two(&format!("{short} buffer=fault")));
    assert!(
        w.contains("T0's pread returned 4096 bytes, short of a fault in its buffer"),
        "{w}"
    );
    let e = translate(
        &with_ret(
            "ret T0 pread",
            "ret T0 pread 12288 data=AAA segs=0+4096:1111aaaa,4096+8192:2222bbbb",
        ),
        None,
    )
    .unwrap_err();
    assert!(
        e.contains("T0's pread returns 12288 bytes, more than the 8192 it asked for"),
        "{e}"
    );
    let e = translate(&with_ret("ret T0 pwrite", "ret T0 pwrite 8193"), None).unwrap_err();
    assert!(
        e.contains("T0's pwrite returns 8193 bytes, more than the 8192 it asked for"),
        "{e}"
    );
}

/// sendfile's `len=` is what its source held at the entry stop: a
/// sendfile returning more (its source grew while it ran) copied bytes
/// nobody saw, not modelled; it is no bad input.
#[test]
fn a_sendfile_returning_more_than_its_source_held_is_not_modelled() {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 sendfile fd=6 off=0 A len=4096 segs=0+4096:1111aaaa",
        "ret T0 sendfile 8192",
    ]);
    let w = super::test_trace::not_modelled(&tr(json!({"segs": true}), &l));
    assert!(
        w.contains("T0's sendfile returns 8192 bytes, more than the 4096 its source held"),
        "{w}"
    );
}

/// A sendfile whose source changed while it ran (the recorder's reads
/// of it at entry and exit differ) is not compared, and the reason names
/// the source, not a buffer.
#[test]
fn a_sendfile_whose_source_changed_is_not_modelled() {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 sendfile fd=6 off=0 A len=4096 segs=0+4096:1111aaaa",
        "ret T0 sendfile 4096 buffer=changed",
    ]);
    let w = super::test_trace::not_modelled(&tr(json!({"segs": true}), &l));
    assert!(
        w.contains("T0's sendfile: its source file or offset changed while it ran"),
        "{w}"
    );
}

/// A sendfile into the file whose bytes the recorder does not know is
/// marked `copy=WHY`, and each reason is said: from sysfs (size 4096,
/// 24 bytes held) it was "out of a file of the mount", which it is not.
#[test]
fn a_sendfile_whose_bytes_are_unknown_says_why() {
    for (why, want) in [
        (
            "unsized",
            "sendfile from a source whose size does not say what it holds (sysfs, procfs",
        ),
        ("append", "sendfile onto an O_APPEND fd"),
        (
            "none",
            "sendfile with nothing to copy at its source's offset",
        ),
        (
            "unread",
            "sendfile from a source the recorder could not read",
        ),
    ] {
        let call = format!("call T0 sendfile fd=6 path=f copy={why}");
        let mut l: Vec<&str> = OPEN.to_vec();
        l.extend([call.as_str(), "ret T0 sendfile 24"]);
        let w = super::test_trace::not_modelled(&tr(json!({"segs": true}), &l));
        assert!(w.contains(want), "{why}: {w}");
        assert!(!w.contains("out of a file of the mount"), "{why}: {w}");
    }
}

#[test]
fn tags_from_digests() {
    // one tag per unit; zeros are '.', a piece spanning units tags each
    let t = seg_tags(4096, "0+4096:.,4096+8192:1234abcd", 0, 12288, ".AA").unwrap();
    let c: Vec<char> = t.chars().collect();
    assert_eq!(c.len(), 3);
    assert_eq!(c[0], '.');
    assert!(c[1] != '.' && c[2] != '.', "{t}");
    // a tag keeps its unit's first byte: printed as `A~bucket`
    assert!(tag_text(&t).starts_with(".A~"), "{}", tag_text(&t));
    // the same digests under another first byte: another tag
    let b = seg_tags(4096, "0+4096:.,4096+8192:1234abcd", 0, 12288, ".BA").unwrap();
    assert_ne!(t, b);
    // other bytes, another tag (for these digests)
    let u = seg_tags(4096, "0+4096:.,4096+8192:1234abce", 0, 12288, ".AA").unwrap();
    assert_ne!(t, u);
    // a unit over a zero piece and a non-zero one is not zeros
    let v = seg_tags(1024, "0+100:.,100+924:77777777", 0, 1024, ".").unwrap();
    assert_ne!(v, ".");
    // pieces must tile the payload from its offset
    for bad in [
        "0+4096:.",
        "4096+4096:.,0+4096:.",
        "0+0:.",
        "0+4096",
        "x+1:.",
        "0+8192:zz",
        "0+8192:1234abc",
        "0+18446744073709551615:.,18446744073709551615+8193:.",
    ] {
        let e = seg_tags(4096, bad, 0, 8192, "AA").unwrap_err();
        assert!(
            e.starts_with("bad trace: segs ") && e.contains(" are not pieces "),
            "{bad}: {e}"
        );
    }
    assert_eq!(seg_tags(4096, "", 8192, 0, "").unwrap(), "");
}
