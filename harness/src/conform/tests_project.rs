//! Traces of several files (project.rs): split by file, each projection
//! checked as one file's trace, the verdicts combined; refused when the
//! files' shared connection could couple them.
use super::project::{project, Split};
use super::test_trace::tr;
use super::*;
use serde_json::json;

/// Two files written and fsynced by two threads at once: f ("A" at page
/// 0) on nodeid 2, g ("BC" at pages 0-1) on nodeid 3. `g_tags` is what
/// g's writeback WRITE carries.
fn two_files(g_tags: &str) -> Vec<String> {
    [
        "call T0 open f 0x42",
        "req 4 CREATE name=f",
        "reply 4 CREATE ino=2",
        "ret T0 open 6",
        "call T1 open g 0x42",
        "req 6 CREATE name=g",
        "reply 6 CREATE ino=3",
        "ret T1 open 7",
        "call T0 pwrite fd=6 off=0 A",
        "call T1 pwrite fd=7 off=0 BC",
        "ret T0 pwrite 4096",
        "ret T1 pwrite 8192",
        "call T0 fsync fd=6",
        "call T1 fsync fd=7",
        &format!("req 8 WRITE 0 8192 {g_tags} cache node=3"),
        "req 10 WRITE 0 4096 A cache",
        "reply 10 WRITE",
        "reply 8 WRITE",
        "req 12 FSYNC node=3",
        "req 14 FSYNC pid=7",
        "reply 12 FSYNC",
        "reply 14 FSYNC",
        "ret T1 fsync 0",
        "ret T0 fsync 0",
    ]
    .map(String::from)
    .to_vec()
}

fn trace(cfg: serde_json::Value, lines: &[String]) -> Vec<Event> {
    let l: Vec<&str> = lines.iter().map(String::as_str).collect();
    tr(cfg, &l)
}

/// Each file's projection conforms: the trace conforms, and the verdict
/// lists both files.
#[test]
fn two_conforming_files_conform() {
    let ev = trace(json!({}), &two_files("BC"));
    let Split::Several(ps) = project(&ev) else {
        panic!("not split")
    };
    assert_eq!(
        ps.iter().map(|p| p.file.as_str()).collect::<Vec<_>>(),
        ["f", "g"]
    );
    // g's projection: its own marks and requests, f's requests as
    // placeholders (every unique stays), none of f's marks
    let g = &ps[1].events;
    assert!(g.iter().all(|e| e.actor.as_deref() != Some("T0")));
    let ops: Vec<&str> = g.iter().filter_map(|e| e.op.as_deref()).collect();
    assert_eq!(
        ops.iter().filter(|o| **o == project::NOT_THIS_FILE).count(),
        6,
        "{ops:?}"
    );
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.class, Class::Conforms, "{}", c.word);
    assert_eq!(c.word, "conforms [2 files: f: conforms; g: conforms]");
    let d = c.detail.unwrap();
    assert!(
        d.contains("file f: conforms") && d.contains("file g: conforms"),
        "{d}"
    );
    // each projection is one file's trace: translate alone refuses the
    // whole (one inode)
    match translate(&ev, None).unwrap() {
        Translation::NotModelled(w) => assert!(w.contains("requests for 2 files"), "{w}"),
        Translation::Modelled(_) => panic!("the one-inode mapping took two files"),
    }
}

/// g's writeback WRITE carries data nobody wrote: the trace does not
/// conform, and the violation is g's.
#[test]
fn one_violating_file_is_named() {
    let ev = trace(json!({}), &two_files("BD"));
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.class, Class::DoesNotConform, "{}", c.word);
    assert!(c.word.starts_with("VIOLATION at event"), "{}", c.word);
    assert!(
        c.word
            .contains("(#16 req WRITE u=8 off=0 size=8192 tags=BD)")
            && c.word
                .ends_with("[file g; 2 files: f: conforms; g: VIOLATION]"),
        "{}",
        c.word
    );
}

/// Background requests of both files may count in fc->num_background at
/// once: with max_background 2 the one-inode model's queue decisions
/// could differ, so the trace is not modelled, with the reason.
#[test]
fn coupled_files_are_not_modelled() {
    let ev = trace(
        json!({"max_background": 2, "congestion_threshold": 2}),
        &two_files("BC"),
    );
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.class, Class::NotModelled, "{}", c.word);
    assert!(
        c.word.contains(
            "2 background requests of files f, g may count in fc->num_background at once"
        ) && c
            .word
            .contains("reaching min(max_background 2, congestion_threshold 2) = 2"),
        "{}",
        c.word
    );
    // the limit is the smaller of the two
    let ev = trace(
        json!({"max_background": 16, "congestion_threshold": 2}),
        &two_files("BC"),
    );
    let w = conform_trace(&ev, None).unwrap().word;
    assert!(w.contains("congestion_threshold 2) = 2"), "{w}");
    // with room for both, the same trace conforms
    let ev = trace(
        json!({"max_background": 3, "congestion_threshold": 3}),
        &two_files("BC"),
    );
    assert_eq!(conform_trace(&ev, None).unwrap().class, Class::Conforms);
}

/// One file after the other: a request stops counting at its server
/// thread's next line, and the second file's WRITE cannot have been
/// queued before its file was opened, so with max_background 2 they
/// never count together. Without server threads (no `fuser-` line) a
/// request counts to the end of the trace: refused.
#[test]
fn the_bound_follows_the_requests() {
    let l: Vec<String> = [
        "call T0 open f 0x42",
        "req 4 CREATE name=f",
        "reply 4 CREATE ino=2",
        "ret T0 open 6",
        "call T0 pwrite fd=6 off=0 A",
        "ret T0 pwrite 4096",
        "call T0 fsync fd=6",
        "req 6 WRITE 0 4096 A cache",
        "reply 6 WRITE",
        "req 8 FSYNC",
        "reply 8 FSYNC",
        "ret T0 fsync 0",
        "call T0 open g 0x42",
        "req 10 CREATE name=g",
        "reply 10 CREATE ino=3",
        "ret T0 open 7",
        "call T0 pwrite fd=7 off=0 B",
        "ret T0 pwrite 4096",
        "call T0 fsync fd=7",
        "req 12 WRITE 0 4096 B cache node=3",
        "reply 12 WRITE",
        "req 14 FSYNC node=3",
        "reply 14 FSYNC",
        "ret T0 fsync 0",
    ]
    .map(String::from)
    .to_vec();
    let cfg = json!({"max_background": 2, "congestion_threshold": 2});
    let mut ev = trace(cfg.clone(), &l);
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.class, Class::NotModelled, "{}", c.word);
    for e in ev.iter_mut().filter(|e| e.ev == "req" || e.ev == "reply") {
        e.thread = "fuser-0".into();
    }
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.class, Class::Conforms, "{}", c.word);
    // max_background 1: a WRITE alone reaches it
    let mut ev = trace(json!({"max_background": 1, "congestion_threshold": 1}), &l);
    for e in ev.iter_mut().filter(|e| e.ev == "req" || e.ev == "reply") {
        e.thread = "fuser-0".into();
    }
    let w = conform_trace(&ev, None).unwrap().word;
    assert!(
        w.contains("1 background requests of files f may count"),
        "{w}"
    );
    // both files opened first: g's WRITE was queued after g's pwrite
    // began, after f's WRITE ended
    let l2: Vec<String> = [
        "call T0 open f 0x42",
        "req 4 CREATE name=f",
        "reply 4 CREATE ino=2",
        "ret T0 open 6",
        "call T0 open g 0x42",
        "req 6 CREATE name=g",
        "reply 6 CREATE ino=3",
        "ret T0 open 7",
        "call T0 pwrite fd=6 off=0 A",
        "ret T0 pwrite 4096",
        "call T0 fsync fd=6",
        "req 8 WRITE 0 4096 A cache",
        "reply 8 WRITE",
        "req 10 FSYNC",
        "reply 10 FSYNC",
        "ret T0 fsync 0",
        "call T0 pwrite fd=7 off=0 B",
        "ret T0 pwrite 4096",
        "call T0 fsync fd=7",
        "req 12 WRITE 0 4096 B cache node=3",
        "reply 12 WRITE",
        "req 14 FSYNC node=3",
        "reply 14 FSYNC",
        "ret T0 fsync 0",
    ]
    .map(String::from)
    .to_vec();
    let mut ev = trace(cfg, &l2);
    for e in ev.iter_mut().filter(|e| e.ev == "req" || e.ev == "reply") {
        e.thread = "fuser-0".into();
    }
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.class, Class::Conforms, "{}", c.word);
}

/// What the split cannot tell or the model does not have is named: a
/// store while two files are mapped, a name created again after an
/// unlink, a syscall on a file it does not map.
#[test]
fn what_cannot_be_split_is_named() {
    let nm = |l: &[&str]| match conform_trace(&tr(json!({}), l), None) {
        Ok(c) if c.class == Class::NotModelled => c.word,
        other => panic!("{other:?}"),
    };
    let open2 = [
        "call T0 open f 0x42",
        "req 4 CREATE name=f",
        "reply 4 CREATE ino=2",
        "ret T0 open 6",
        "call T0 open g 0x42",
        "req 6 CREATE name=g",
        "reply 6 CREATE ino=3",
        "ret T0 open 7",
    ];
    let mut l = open2.to_vec();
    l.extend([
        "call T0 mmap fd=6 len=4096 MAP_SHARED",
        "ret T0 mmap 0",
        "call T0 mmap fd=7 len=4096 MAP_SHARED",
        "ret T0 mmap 0",
        "call T0 store off=0 M",
        "ret T0 store 0",
    ]);
    let w = nm(&l);
    assert!(
        w.contains("store with shared mappings of 2 files live and no path="),
        "{w}"
    );
    // with path= the store is g's
    let last = l.len() - 2;
    l[last] = "call T0 store off=0 M path=g";
    assert!(matches!(project(&tr(json!({}), &l)), Split::Several(_)));
    // an fd no open returned: its file is unknown
    let mut l = open2.to_vec();
    l.extend(["call T0 fsync fd=9", "ret T0 fsync 0"]);
    let w = nm(&l);
    assert!(
        w.contains("fsync on fd 9, which no open mark returned: its file is unknown"),
        "{w}"
    );
    // with one file the split leaves it to the mapping, as before
    assert!(matches!(project(&tr(json!({}), &l[4..])), Split::One));
    // g unlinked while open: not modelled
    let mut l = open2.to_vec();
    l.extend([
        "call T0 unlink g",
        "req 8 UNLINK name=g",
        "reply 8 UNLINK",
        "ret T0 unlink 0",
    ]);
    let w = nm(&l);
    assert!(w.contains("unlink of a file still open or mapped"), "{w}");
    // g closed, unlinked and created again: two inode lifetimes, two
    // files (the second is g#2)
    let mut l = open2.to_vec();
    l.extend([
        "call T0 close fd=7",
        "req 8 FLUSH",
        "reply 8 FLUSH",
        "ret T0 close 0",
        "call T0 unlink g",
        "req 10 UNLINK name=g",
        "reply 10 UNLINK",
        "ret T0 unlink 0",
        "call T0 open g 0x42",
        "req 12 CREATE name=g",
        "reply 12 CREATE ino=4",
        "ret T0 open 7",
    ]);
    let Split::Several(ps) = project(&tr(json!({}), &l)) else {
        panic!("not split")
    };
    let names: Vec<&str> = ps.iter().map(|p| p.file.as_str()).collect();
    assert_eq!(names, ["f", "g", "g#2"]);
    // created again with no successful unlink between: not modelled
    let mut bad = l.clone();
    bad[14] = "reply 10 UNLINK errno=2";
    let w = nm(&bad);
    assert!(w.contains("with no successful unlink of it between"), "{w}");
}

/// Every recorded trace of one scenario file splits as one file (it is
/// checked as before): the split does not mistake one file for several;
/// p_two_files (scenarios_files.rs) splits into its two files, and
/// threads/fork_close_unlink into the two lifetimes of its one name.
#[test]
fn recorded_traces_split_by_their_files() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces");
    let mut n = 0;
    for dir in std::fs::read_dir(root).unwrap() {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_none_or(|x| x != "jsonl") {
                continue;
            }
            let t = std::fs::read_to_string(&p).unwrap();
            let ev = crate::trace::parse_trace(&t).unwrap();
            // (a trace that is bad input is refused before the split)
            if let Err(validate::Invalid::Bad(_)) = validate::validate_connection(&ev) {
                continue;
            }
            n += 1;
            match project(&ev) {
                Split::One => {
                    assert!(!p.ends_with("6.18.44/p_two_files.jsonl"));
                }
                Split::Several(ps) => {
                    let files: Vec<&str> = ps.iter().map(|x| x.file.as_str()).collect();
                    // (one name, unlinked and created again: two files)
                    if p.ends_with("threads/fork_close_unlink.jsonl") {
                        assert_eq!(files, ["f", "f#2"]);
                        continue;
                    }
                    assert!(p.ends_with("6.18.44/p_two_files.jsonl"), "{}", p.display());
                    assert_eq!(files, ["f", "g"]);
                }
                // (an fd number two processes hold for two files:
                // tests/threads.rs)
                Split::NotModelled(_)
                    if p.ends_with("threads/fork_reopen_same_fd.jsonl")
                        || p.ends_with("threads/fork_dup_onto_copy.jsonl") => {}
                _ => panic!("{} is refused", p.display()),
            }
        }
    }
    assert!(n >= 60, "{n}");
}

/// The recorded p_two_files, altered: g's held WRITE is answered only
/// after g's fsync returned. f's projection still conforms; g's does not,
/// and the verdict names g.
#[test]
fn recorded_two_files_altered_is_gs_violation() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/traces/6.18.44/p_two_files.jsonl");
    let mut ev = crate::trace::parse_trace(&std::fs::read_to_string(p).unwrap()).unwrap();
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.word, "conforms [2 files: f: conforms; g: conforms]");
    // the held WRITE of g: its release and reply move after g's fsync
    let held = ev.iter().find(|e| e.ev == "hold").unwrap().unique;
    let moved: Vec<Event> = ev
        .iter()
        .filter(|e| (e.ev == "release" || e.ev == "reply") && e.unique == held)
        .cloned()
        .collect();
    assert_eq!(moved.len(), 2);
    ev.retain(|e| !((e.ev == "release" || e.ev == "reply") && e.unique == held));
    let at = ev
        .iter()
        .rposition(|e| e.kind.as_deref() == Some("ret") && e.syscall.as_deref() == Some("fsync"))
        .unwrap();
    ev.splice(at + 1..at + 1, moved);
    for (i, e) in ev.iter_mut().enumerate().skip(1) {
        e.seq = i as u64;
    }
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.class, Class::DoesNotConform, "{}", c.word);
    assert!(
        c.word.starts_with("VIOLATION")
            && c.word
                .ends_with("[file g; 2 files: f: conforms; g: VIOLATION]"),
        "{}",
        c.word
    );
}

/// The mount's root directory (`path=.` under `wbspec record`: a shell's
/// stat of its working directory) is no file: a trace of one file and a
/// syscall on the root is one file, not split into "." and the file.
#[test]
fn the_root_directory_is_not_a_file() {
    let l: Vec<String> = [
        "call T0 newfstatat path=.",
        "ret T0 newfstatat 0",
        "call T0 open f 0x42 path=f",
        "req 4 CREATE name=f",
        "reply 4 CREATE ino=2",
        "ret T0 open 6",
        "call T0 pwrite fd=6 off=0 A path=f",
        "ret T0 pwrite 4096",
    ]
    .map(String::from)
    .to_vec();
    let ev = trace(json!({}), &l);
    assert!(matches!(project(&ev), Split::One));
}

/// A verdict line over many files names at most `LIST_MAX`, the worst
/// among them, and counts the rest by verdict; the detail lists all.
#[test]
fn a_verdict_over_many_files_names_the_worst_and_counts_the_rest() {
    let v = |word: &str, class| {
        Ok((
            Conformance {
                word: word.into(),
                class,
                detail: None,
            },
            u64::MAX,
        ))
    };
    let mut files = vec![];
    for i in 0..14 {
        files.push((format!("f{i:02}"), v("conforms", Class::Conforms)));
    }
    files.push(("g".to_string(), v("not-modelled (why)", Class::NotModelled)));
    files.push((
        "h".to_string(),
        v("VIOLATION at event 3 (x)", Class::DoesNotConform),
    ));
    let c = super::project::combine(files);
    assert_eq!(c.class, Class::DoesNotConform);
    assert!(
        c.word
            .starts_with("VIOLATION at event 3 (x) [file h; 16 files: "),
        "{}",
        c.word
    );
    assert!(
        c.word.contains("g: not-modelled; h: VIOLATION"),
        "{}",
        c.word
    );
    assert!(c.word.ends_with("; 6 more: 6 conform]"), "{}", c.word);
    assert_eq!(c.word.matches(": conforms").count(), 8, "{}", c.word);
    let d = c.detail.unwrap();
    assert_eq!(d.matches("\n  file ").count(), 16, "{d}");
    // ten files or fewer: every one named
    let few: Vec<_> = (0..10)
        .map(|i| (format!("f{i}"), v("conforms", Class::Conforms)))
        .collect();
    let c = super::project::combine(few);
    assert!(
        c.word.starts_with("conforms [10 files: f0: conforms;"),
        "{}",
        c.word
    );
    assert!(!c.word.contains("more:"), "{}", c.word);
}
