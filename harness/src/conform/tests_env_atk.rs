//! (attack) edges of the environment's accesses through mappings.

use super::test_trace::{tr, OPEN};
use super::*;
use serde_json::json;
use std::time::Instant;

fn recorded(l: &[&str]) -> Vec<Event> {
    let mut ev = tr(json!({}), l);
    ev[0].scenario = Some("record".into());
    ev
}

fn verdict(ev: &[Event]) -> String {
    match conform_trace(ev, None) {
        Ok(c) => format!("{:?} {} {}", c.class, c.word, c.detail.unwrap_or_default()),
        Err(e) => format!("ERR {e}"),
    }
}

fn base<'a>(size: &'a str, map: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        size,
        "req 6 SETATTR size=8192",
        "reply 6 SETATTR",
        "ret T0 ftruncate 0",
        map,
        "ret T0 mmap 4096",
    ]);
    l.extend(rest);
    l
}

const FT: &str = "call T0 ftruncate fd=6 8192";

#[test]
fn atk_huge_mapping_len() {
    // (17 pages: one more than the model's positions)
    for len in ["69632", "1073741824", "68719476736", "4611686018427387904"] {
        let m = format!("call T0 mmap fd=6 off=0 len={len} shared");
        let u = format!("call T0 munmap off=0 len={len}");
        let l = base(FT, &m, &[&u, "ret T0 munmap 0"]);
        let t = Instant::now();
        let v = verdict(&recorded(&l));
        eprintln!("len={len}: {:?} {v}", t.elapsed());
        assert!(
            t.elapsed().as_secs() < 2 && v.starts_with("NotModelled"),
            "{v}"
        );
    }
}

#[test]
fn atk_malformed_marks() {
    for m in [
        "call T0 mmap fd=6 len=8192 shared",
        "call T0 mmap fd=6 off=0 shared",
        "call T0 mmap fd=6 off=0 len=0 shared",
        "call T0 mmap fd=6 off=x len=8192 shared",
        "call T0 mmap fd=6 off=9223372036854775807 len=8192 shared",
        "call T0 mmap fd=6 off=1000 len=8192 shared",
    ] {
        let l = base(FT, m, &["call T0 munmap off=0 len=8192", "ret T0 munmap 0"]);
        eprintln!("{m}: {}", verdict(&recorded(&l)));
    }
    for u in [
        "call T0 munmap len=8192",
        "call T0 munmap off=0",
        "call T0 munmap off=0 len=0",
        "call T0 munmap off=0 len=18446744073709551615",
    ] {
        let l = base(
            FT,
            "call T0 mmap fd=6 off=0 len=8192 shared",
            &[u, "ret T0 munmap 0"],
        );
        eprintln!("{u}: {}", verdict(&recorded(&l)));
    }
}

const CLOSE: &[&str] = &[
    "call T0 close fd=6",
    "req 12 FLUSH",
    "reply 12 FLUSH",
    "ret T0 close 0",
];

#[test]
fn atk_offset_mapping() {
    // mapping of page 1 only; garbage WRITE of page 0 at munmap
    for (w, want) in [
        ("req 10 WRITE 0 4096 Q cache", "DoesNotConform"),
        ("req 10 WRITE 4096 4096 Q cache", "Conforms"),
    ] {
        let mut rest = vec![
            "req 8 READ 0 8192",
            "reply 8 READ tags=..",
            "call T0 munmap off=4096 len=4096",
            w,
            "reply 10 WRITE",
            "ret T0 munmap 0",
        ];
        rest.extend(CLOSE);
        let l = base(FT, "call T0 mmap fd=6 off=4096 len=4096 shared", &rest);
        let v = verdict(&recorded(&l));
        eprintln!("{w}: {v}");
        assert!(v.starts_with(want), "{v}");
    }
}

#[test]
fn atk_two_mappings() {
    // two mappings, different ranges; the second stays live
    let mut rest = vec![
        "req 8 READ 0 8192",
        "reply 8 READ tags=..",
        "call T0 mmap fd=6 off=4096 len=4096 shared",
        "ret T0 mmap 8192",
        "call T0 munmap off=0 len=4096",
        "ret T0 munmap 0",
        "call T0 close fd=6",
        "req 10 WRITE 4096 4096 Q cache",
        "reply 10 WRITE",
        "req 12 FLUSH",
        "reply 12 FLUSH",
        "ret T0 close 0",
    ];
    let l = base(FT, "call T0 mmap fd=6 off=0 len=4096 shared", &rest);
    let v = verdict(&recorded(&l));
    eprintln!("page 1 live: {v}");
    assert!(v.starts_with("Conforms"), "{v}");
    rest[7] = "req 10 WRITE 0 4096 Q cache";
    let l = base(FT, "call T0 mmap fd=6 off=0 len=4096 shared", &rest);
    let v = verdict(&recorded(&l));
    eprintln!("page 0 unmapped: {v}");
    assert!(v.starts_with("DoesNotConform"), "{v}");
    // two identical mappings, one unmapped: stores go on
    let mut rest2 = rest.clone();
    rest2[2] = "call T0 mmap fd=6 off=0 len=4096 shared";
    rest2[7] = "req 10 WRITE 0 4096 Q cache";
    let l = base(FT, "call T0 mmap fd=6 off=0 len=4096 shared", &rest2);
    let v = verdict(&recorded(&l));
    eprintln!("identical, one unmapped: {v}");
    assert!(v.starts_with("Conforms"), "{v}");
}

#[test]
fn atk_readonly_fd_shared_mapping_stores() {
    // an O_RDONLY fd can only be mapped MAP_SHARED without PROT_WRITE:
    // no store can dirty a page, yet a WRITE of unknown data conforms?
    let l = vec![
        "call T0 open f 0x42",
        "req 4 CREATE",
        "reply 4 CREATE",
        "ret T0 open 6",
        "call T0 ftruncate fd=6 8192",
        "req 6 SETATTR size=8192",
        "reply 6 SETATTR",
        "ret T0 ftruncate 0",
        "call T0 close fd=6",
        "req 7 FLUSH",
        "reply 7 FLUSH",
        "ret T0 close 0",
        "call T0 open f 0x0",
        "req 8 OPEN",
        "reply 8 OPEN",
        "ret T0 open 6",
        "call T0 mmap fd=6 off=0 len=8192 shared",
        "ret T0 mmap 4096",
        "req 9 READ 0 8192",
        "reply 9 READ tags=..",
        "call T0 munmap off=0 len=8192",
        "req 10 WRITE 0 4096 Q cache",
        "reply 10 WRITE",
        "ret T0 munmap 0",
    ];
    let v = verdict(&recorded(&l));
    eprintln!("ro fd: {v}");
    assert!(v.starts_with("DoesNotConform"), "{v}");
}

/// A mapping inherited across fork (recorded: /tmp/atk-env/fork2.py,
/// fork4.py): the child's exit or munmap is refused, not judged.
#[test]
fn atk_fork_inherited_mapping_is_refused() {
    use super::test_trace::not_modelled;
    // the parent unmaps, the child stores through its copy and exits
    let child_exit = [
        "call T0 close fd=6",
        "req 12 FLUSH",
        "reply 12 FLUSH",
        "ret T0 close 0",
        "call T0 munmap off=0 len=8192",
        "ret T0 munmap 0",
        "call T1 exit map path=f",
        "req 14 READ 0 8192",
        "reply 14 READ tags=..",
        "req 16 WRITE 0 4096 Z cache",
        "reply 16 WRITE",
        "ret T1 exit 0",
    ];
    let w = not_modelled(&recorded(&base(
        FT,
        "call T0 mmap fd=6 off=0 len=8192 shared",
        &child_exit,
    )));
    assert!(w.contains("did not make"), "{w}");
    // the child unmaps its copy, the parent stores and exits
    let child_munmap = [
        "call T0 close fd=6",
        "req 12 FLUSH",
        "reply 12 FLUSH",
        "ret T0 close 0",
        "call T1 munmap off=0 len=8192",
        "ret T1 munmap 0",
        "call T0 exit map path=f",
        "req 14 READ 0 8192",
        "reply 14 READ tags=..",
        "req 16 WRITE 0 4096 Z cache",
        "reply 16 WRITE",
        "ret T0 exit 0",
    ];
    let w = not_modelled(&recorded(&base(
        FT,
        "call T0 mmap fd=6 off=0 len=8192 shared",
        &child_munmap,
    )));
    assert!(w.contains("not one whole mapping it made"), "{w}");
}
