//! The environment's loads and stores through a program's mappings
//! (envmap.rs): a `wbspec record` trace gets them while a mapping is
//! live, and only then; a scenario's trace (stores marked) never does.

use super::test_trace::{not_modelled, tr, OPEN};
use super::*;
use serde_json::json;
use wbspec_models::fuse::TaskSpec;

/// A 2-page file, mapped by the `map` call (its actor's mmap returns),
/// then `after_map` (e.g. a fault's READ, nobody's syscall) and `tail`.
pub(super) fn lines<'a>(map: &'a str, after_map: &[&'a str], tail: &[&'a str]) -> Vec<&'a str> {
    let ret = if map.starts_with("call T1 ") {
        "ret T1 mmap 4096"
    } else {
        "ret T0 mmap 4096"
    };
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 ftruncate fd=6 8192",
        "req 6 SETATTR size=8192",
        "reply 6 SETATTR",
        "ret T0 ftruncate 0",
        map,
        ret,
    ]);
    l.extend(after_map);
    l.extend(tail);
    l
}

const FAULT: &[&str] = &["req 8 READ 0 8192", "reply 8 READ tags=.."];

/// The munmap, writing back nothing / page 0 with data no syscall wrote.
const MUNMAP: &[&str] = &["call T0 munmap off=0 len=8192", "ret T0 munmap 0"];
const MUNMAP_W: &[&str] = &[
    "call T0 munmap off=0 len=8192",
    "req 10 WRITE 0 4096 Q cache",
    "reply 10 WRITE",
    "ret T0 munmap 0",
];

/// The close, writing back nothing / that page.
const CLOSE: &[&str] = &[
    "call T0 close fd=6",
    "req 12 FLUSH",
    "reply 12 FLUSH",
    "ret T0 close 0",
];
const CLOSE_W: &[&str] = &[
    "call T0 close fd=6",
    "req 10 WRITE 0 4096 Q cache",
    "reply 10 WRITE",
    "req 12 FLUSH",
    "reply 12 FLUSH",
    "ret T0 close 0",
];

fn cat<'a>(parts: &[&[&'a str]]) -> Vec<&'a str> {
    parts.concat()
}

const SHARED: &str = "call T0 mmap fd=6 off=0 len=8192 shared";

/// The environment's tasks of SHARED's two pages: an `env` task per
/// page.
const SHARED_2_PAGES: [TaskSpec; 2] = [
    TaskSpec::EnvAccess {
        page: 0,
        fd: Some(0),
    },
    TaskSpec::EnvAccess {
        page: 1,
        fd: Some(0),
    },
];

/// `lines` as `wbspec record` writes them (header scenario `record`).
fn recorded(l: &[&str]) -> Vec<Event> {
    let mut ev = tr(json!({}), l);
    ev[0].scenario = Some("record".into());
    ev
}

fn verdict(ev: &[Event]) -> (Class, String) {
    let c = conform_trace(ev, None).unwrap();
    (
        c.class,
        format!("{} {}", c.word, c.detail.unwrap_or_default()),
    )
}

/// The model tasks of `ev`'s environment (envmap.rs), in order.
fn env_tasks(ev: &[Event]) -> Vec<TaskSpec> {
    let m = match translate(ev, None).unwrap() {
        Translation::Modelled(m) => m,
        Translation::NotModelled(w) => panic!("{w}"),
    };
    m.env.iter().map(|&t| m.cfg.tasks[t]).collect()
}

fn conforms(ev: &[Event]) {
    let (c, w) = verdict(ev);
    assert_eq!(c, Class::Conforms, "{w}");
}

/// A violation whose report says `needle`.
fn violates(ev: &[Event], needle: &str) {
    let (c, w) = verdict(ev);
    assert_eq!(c, Class::DoesNotConform, "{w}");
    assert!(w.contains(needle), "{w}");
}

#[test]
fn a_programs_loads_and_stores_are_the_environments() {
    let ev = recorded(&lines(SHARED, FAULT, &cat(&[MUNMAP_W, CLOSE])));
    // one task of loads and stores per mapped page, none with a call
    assert_eq!(env_tasks(&ev), SHARED_2_PAGES);
    conforms(&ev);
    // a scenario marks its stores: there the fault's READ and the
    // stored page's WRITE are nobody's
    let mut scen = ev.clone();
    scen[0].scenario = Some("hand".into());
    violates(&scen, "cannot produce a daemon read of READ(p0-1)");
}

/// A mapped page's task names its mapping's open (`fd=F`: its faults
/// share that file's readahead state with the open's reads); a page
/// mapped again from a second open, while the first mapping lives,
/// keeps its one task, which then names none.
#[test]
fn a_page_mapped_from_two_opens_names_no_open() {
    let second: &[&str] = &[
        "call T0 open f 0x2",
        "req 14 OPEN",
        "reply 14 OPEN",
        "ret T0 open 7",
        "call T0 mmap fd=7 off=0 len=8192 shared",
        "ret T0 mmap 8192",
    ];
    let ev = recorded(&lines(SHARED, FAULT, second));
    let none = [
        TaskSpec::EnvAccess { page: 0, fd: None },
        TaskSpec::EnvAccess { page: 1, fd: None },
    ];
    assert_eq!(env_tasks(&ev), none);
    // the same mapping made again from the first open keeps it
    let again: &[&str] = &[
        "call T0 mmap fd=6 off=0 len=8192 shared",
        "ret T0 mmap 8192",
    ];
    let ev = recorded(&lines(SHARED, FAULT, again));
    assert_eq!(env_tasks(&ev), SHARED_2_PAGES);
}

/// The page a mapped page's read-around marks (ra->start + 24, ra->start
/// = page - 16, at least 0) starts a position when it lies inside the
/// file the trace names: a pread of pages 20-27 in a 64-page file mapped
/// at page 0 or 10 (mark 24) or 50 (mark 56) is cut there; a 20-page
/// file read in pages 0-7 gets no position at 24; a 24-page file's
/// window, cut at EOF, marks page 16.
#[test]
fn a_read_around_mark_starts_a_position() {
    let starts = |map_page: u64, size: u64, read: (u64, u64)| -> Vec<u64> {
        let trunc = format!("call T0 ftruncate fd=6 {}", size * 4096);
        let map = format!("call T0 mmap fd=6 off={} len=4096 shared", map_page * 4096);
        let pread = format!(
            "call T0 pread fd=6 off={} len={}",
            read.0 * 4096,
            read.1 * 4096
        );
        let ret = format!(
            "ret T0 pread {} data={}",
            read.1 * 4096,
            ".".repeat(read.1 as usize)
        );
        let mut l: Vec<&str> = OPEN.to_vec();
        l.extend([
            trunc.as_str(),
            "req 6 SETATTR",
            "reply 6 SETATTR",
            "ret T0 ftruncate 0",
            map.as_str(),
            "ret T0 mmap 4096",
            pread.as_str(),
            ret.as_str(),
        ]);
        let ev = recorded(&l);
        let m = match translate(&ev, None).unwrap() {
            Translation::Modelled(m) => m,
            Translation::NotModelled(w) => panic!("{w}"),
        };
        m.regions.iter().map(|r| r.0).collect()
    };
    // (page 50: the window 34-65 is cut at EOF, 30 pages: mark 56)
    for (page, mark) in [(0, 24), (10, 24), (50, 56)] {
        let s = starts(page, 64, (20, 8));
        assert!(s.contains(&mark), "mapped at {page}: {s:?}");
    }
    // without the mark, 20-27 is one position
    let s = starts(50, 64, (20, 8));
    assert!(!s.contains(&24), "{s:?}");
    let s = starts(0, 20, (0, 8));
    assert!(!s.contains(&24), "{s:?}");
    // the window cut at EOF: a 24-page file's read-around from page 0
    // reads 24 pages and marks page 16 (nr_to_read - async_size)
    let s = starts(0, 24, (12, 8));
    assert!(s.contains(&16), "{s:?}");
}

#[test]
fn no_access_outside_a_mapping() {
    // the fault's READ before the mmap returned
    let mut l = OPEN.to_vec();
    l.extend([
        "call T0 ftruncate fd=6 8192",
        "req 6 SETATTR size=8192",
        "reply 6 SETATTR",
        "ret T0 ftruncate 0",
        "req 8 READ 0 8192",
        "reply 8 READ tags=..",
        SHARED,
        "ret T0 mmap 4096",
    ]);
    l.extend(MUNMAP_W);
    l.extend(CLOSE);
    violates(&recorded(&l), "cannot produce a daemon read of READ(p0-1)");
    // a page dirtied after the munmap: no store can have done it, and
    // the close finds nothing dirty
    let late = cat(&[MUNMAP, CLOSE_W]);
    violates(
        &recorded(&lines(SHARED, FAULT, &late)),
        "cannot produce a daemon read of WRITE[CACHE](p0)",
    );
    // the same WRITE inside the munmap conforms (above); inside the
    // close with the mapping live it does too: the store came first
    let live = cat(&[CLOSE_W, MUNMAP]);
    conforms(&recorded(&lines(SHARED, FAULT, &live)));
}

#[test]
fn a_private_mapping_loads_but_stores_nothing_to_the_file() {
    let private = "call T0 mmap fd=6 off=0 len=8192 private";
    let ev = recorded(&lines(private, FAULT, &cat(&[MUNMAP_W, CLOSE])));
    violates(&ev, "cannot produce a daemon read of WRITE[CACHE](p0)");
    // its loads alone conform
    let quiet = cat(&[MUNMAP, CLOSE]);
    conforms(&recorded(&lines(private, FAULT, &quiet)));
}

#[test]
fn a_page_mapped_both_ways_has_a_load_task_and_an_access_task() {
    // shared, then private, of the same pages; one munmap of the range
    // (the mark does not say which): the shared mapping's stores stay
    // possible, so page 0, written back by an fsync after that munmap,
    // may be stored to and written again
    let private: &[&str] = &[
        "call T0 mmap fd=6 off=0 len=8192 private",
        "ret T0 mmap 8192",
    ];
    let fsync_w: &[&str] = &[
        "call T0 fsync fd=6",
        "req 20 WRITE 0 4096 Q cache",
        "reply 20 WRITE",
        "req 22 FSYNC",
        "reply 22 FSYNC",
        "ret T0 fsync 0",
    ];
    let tail = cat(&[private, MUNMAP, fsync_w, CLOSE_W, MUNMAP]);
    let ev = recorded(&lines(SHARED, FAULT, &tail));
    let both = [
        &SHARED_2_PAGES[..],
        &[
            TaskSpec::Fault {
                page: 0,
                fd: Some(0),
            },
            TaskSpec::Fault {
                page: 1,
                fd: Some(0),
            },
        ],
    ]
    .concat();
    assert_eq!(env_tasks(&ev), both);
    conforms(&ev);
    // private, then shared: the same
    let shared: &[&str] = &[SHARED, "ret T0 mmap 8192"];
    let private_first = "call T0 mmap fd=6 off=0 len=8192 private";
    let tail = cat(&[shared, MUNMAP, fsync_w, CLOSE_W, MUNMAP]);
    conforms(&recorded(&lines(private_first, FAULT, &tail)));
    // with no mapping left, the second write has no store
    let tail = cat(&[shared, MUNMAP, fsync_w, MUNMAP, CLOSE_W]);
    violates(
        &recorded(&lines(private_first, FAULT, &tail)),
        "cannot produce a daemon read of WRITE[CACHE](p0)",
    );
}

#[test]
fn a_shared_mapping_without_prot_write_stores_nothing() {
    // PROT_READ: loads only (a store would fault; an mprotect of the
    // mapping is refused)
    let ro = "call T0 mmap fd=6 off=0 len=8192 shared prot=r";
    let ev = recorded(&lines(ro, FAULT, &cat(&[MUNMAP_W, CLOSE])));
    violates(&ev, "cannot produce a daemon read of WRITE[CACHE](p0)");
    conforms(&recorded(&lines(ro, FAULT, &cat(&[MUNMAP, CLOSE]))));
    // PROT_READ|PROT_WRITE, and a mark from before prot= was recorded
    for rw in ["call T0 mmap fd=6 off=0 len=8192 shared prot=rw", SHARED] {
        conforms(&recorded(&lines(rw, FAULT, &cat(&[MUNMAP_W, CLOSE]))));
    }
    // PROT_EXEC: a VM_EXEC fault's readahead (6.17 on) is not the model's
    // read-around
    let rwx = "call T0 mmap fd=6 off=0 len=8192 shared prot=rwx";
    let l = lines(rwx, FAULT, &cat(&[MUNMAP_W, CLOSE]));
    assert!(not_modelled(&recorded(&l)).contains("an executable mapping (PROT_EXEC)"));
    let mut l = lines(ro, FAULT, &[]);
    l.extend(["call T0 mprotect off=0 len=8192", "ret T0 mprotect 0"]);
    l.extend(cat(&[MUNMAP_W, CLOSE]));
    assert!(not_modelled(&recorded(&l)).contains("mprotect"));
    // pkey_mprotect(.., -1) is mprotect: marked since it could add
    // PROT_WRITE unseen (a real recording was a false VIOLATION at the
    // munmap's WRITE)
    let mut l = lines(ro, FAULT, &[]);
    l.extend([
        "call T0 pkey_mprotect off=0 len=8192",
        "ret T0 pkey_mprotect 0",
    ]);
    l.extend(cat(&[MUNMAP_W, CLOSE]));
    assert!(not_modelled(&recorded(&l)).contains("pkey_mprotect"));
}

#[test]
fn an_exit_holding_only_mappings_is_their_munmap() {
    let exit = cat(&[
        CLOSE,
        &[
            "call T0 exit map path=f",
            "req 10 WRITE 0 4096 Q cache",
            "reply 10 WRITE",
            "ret T0 exit 0",
        ],
    ]);
    let ev = recorded(&lines(SHARED, FAULT, &exit));
    conforms(&ev);
    // `exit` with its mark changed from `from` to `to`: not modelled,
    // saying `why`
    let refused = |from: &str, to: &str, why: &str| {
        let changed: Vec<String> = exit.iter().map(|l| l.replace(from, to)).collect();
        let mut l = lines(SHARED, FAULT, &[]);
        l.extend(changed.iter().map(String::as_str));
        let w = not_modelled(&recorded(&l));
        assert!(w.contains(why), "{w}");
    };
    // another actor's exit: which process held the mapping is unknown
    refused(
        "T0 exit",
        "T1 exit",
        "exits holding a mapping while T0 made one",
    );
    // with an fd as well: several closes in one syscall
    refused(
        "exit map path=f",
        "exit fd=6 path=f map path=f",
        "syscall exit has no model task",
    );
}

#[test]
fn what_the_environment_cannot_be_is_refused() {
    // part of a mapping unmapped
    let part = ["call T0 munmap off=0 len=4096", "ret T0 munmap 0"];
    let w = not_modelled(&recorded(&lines(SHARED, FAULT, &part)));
    assert!(w.contains("not one whole mapping"), "{w}");
    // fadvise(DONTNEED) of clean pages while mapped
    let dontneed = [
        "call T0 fadvise64 fd=6 0 8192 DONTNEED",
        "ret T0 fadvise64 0",
    ];
    let w = not_modelled(&recorded(&lines(SHARED, FAULT, &dontneed)));
    assert!(w.contains("while the file is mapped"), "{w}");
}

#[test]
fn a_faults_read_needs_no_pending_call() {
    // T1 maps the file; its load's READ (pid 30) comes while T0's
    // direct pwrite is pending; T0's own WRITE (pid 7) follows
    let l = lines(
        "call T1 mmap fd=6 off=0 len=8192 shared",
        &[
            "call T0 pwrite fd=6 off=0 A",
            "req 8 READ 0 8192 pid=30",
            "reply 8 READ tags=..",
            "req 10 WRITE 0 4096 A pid=7",
            "reply 10 WRITE",
            "ret T0 pwrite 4096",
        ],
        &[],
    );
    assert_eq!(validate::validate(&recorded(&l)), Ok(()));
    // in a scenario's trace every READ is a call's: the READ names
    // T0's pid (30), and T0's WRITE from pid 7 is refused
    match validate::validate(&tr(json!({}), &l)) {
        Err(validate::Invalid::Bad(e)) => assert!(
            e.contains(
                "WRITE u=10 from pid 7, which is not the pid of a pending call (T0 pwrite 30)"
            ),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
}
