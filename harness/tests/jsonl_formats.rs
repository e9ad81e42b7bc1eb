//! Property-based tests of the recorded-trace JSONL format (trace.rs) and
//! its structural validation (conform/validate.rs): generated valid traces
//! round-trip through the parser and are never bad input; generated
//! corruptions of generated and of recorded traces — truncated lines, wrong
//! types, unknown event kinds, duplicated replies, removed returns — are
//! rejected with one-line errors, never a panic, in bounded time.
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::json;
use wbspec_harness::conform::conform_trace;
use wbspec_harness::conform::validate::{validate, validate_connection, EVENT_KINDS};
use wbspec_harness::trace::{parse_trace, Event};

/// Bounds: one trace's parse + validation + model search.
const VALID_LIMIT: Duration = Duration::from_secs(10);
const CORRUPT_LIMIT: Duration = Duration::from_secs(2);

// ---------------------------------------------------------------- valid traces

/// One piece of a generated workload.
#[derive(Clone, Debug)]
enum Block {
    /// pwrite of `tags` (one letter per page) at `page`, with the
    /// GETXATTR of file_remove_privs when `xattr`.
    Pwrite {
        t1: bool,
        page: u8,
        tags: String,
        xattr: bool,
    },
    /// sync_file_range(0, 0): the page-cache WRITE (pid 0) is read after it
    /// returns, and answered, maybe after being held.
    Sfr {
        t1: bool,
        page: u8,
        n: u8,
        held: bool,
    },
    /// fsync: its FSYNC inside the call.
    Fsync { t1: bool },
    /// ftruncate to `pages`: SETATTR(size) inside the call.
    Ftruncate { t1: bool, pages: u8 },
    /// A note mark with arbitrary text (JSON escaping).
    Note(String),
    /// A stall of the dispatch thread.
    Stall(u64),
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        (any::<bool>(), 0u8..3, "[A-Z]{1,2}", any::<bool>()).prop_map(|(t1, page, tags, xattr)| {
            Block::Pwrite {
                t1,
                page,
                tags,
                xattr,
            }
        }),
        (any::<bool>(), 0u8..3, 1u8..3, any::<bool>()).prop_map(|(t1, page, n, held)| Block::Sfr {
            t1,
            page,
            n,
            held
        }),
        any::<bool>().prop_map(|t1| Block::Fsync { t1 }),
        (any::<bool>(), 0u8..4).prop_map(|(t1, pages)| Block::Ftruncate { t1, pages }),
        "\\PC{0,24}".prop_map(Block::Note),
        (1u64..500).prop_map(Block::Stall),
    ]
}

/// A header configuration and a kernel release.
fn header() -> impl Strategy<Value = (String, serde_json::Value)> {
    (
        // mostly a modelled kernel, so the search runs too
        prop_oneof![
            3 => Just("6.18.44"),
            1 => prop::sample::select(vec!["6.18.3-rc1", "6.17.0", "6.19.2", "7.0.0-x"]),
        ],
        any::<bool>(),
        any::<bool>(),
        prop::sample::select(vec![4096u64, 65536, 1 << 20]),
    )
        .prop_map(|(k, keep, atomic, max_write)| {
            (
                k.to_string(),
                json!({"writeback_cache": true, "keep_cache": keep,
                    "atomic_o_trunc": atomic, "max_write": max_write,
                    "max_background": 16, "congestion_threshold": 12,
                    "direct_io_allow_mmap": false}),
            )
        })
}

/// Renders blocks into the events the recorder would write.
struct Render {
    ev: Vec<Event>,
    unique: u64,
    calls: u32,
}

impl Render {
    fn push(&mut self, mut e: Event) {
        e.seq = self.ev.len() as u64;
        e.t_us = 10 * e.seq;
        self.ev.push(e);
    }
    fn mark(&mut self, text: &str) {
        let mut e = Event::mark(text);
        e.thread = "ctl-conn".into();
        self.push(e);
    }
    /// A request (and, unless `hold`, its reply); returns its unique.
    fn req(
        &mut self,
        op: &str,
        pid: u32,
        f: impl FnOnce(&mut Event),
        result: serde_json::Value,
        hold: bool,
    ) -> u64 {
        self.unique += 2;
        let u = self.unique;
        let mut q = Event::new("req");
        q.unique = Some(u);
        q.op = Some(op.into());
        q.nodeid = Some(if matches!(op, "LOOKUP" | "CREATE") {
            1
        } else {
            2
        });
        q.pid = Some(pid);
        q.thread = "fuser-0".into();
        f(&mut q);
        self.push(q);
        if hold {
            let mut h = Event::new("hold");
            h.unique = Some(u);
            self.push(h);
            let mut r = Event::new("release");
            r.unique = Some(u);
            r.why = Some("ctl".into());
            self.push(r);
        }
        let mut r = Event::new("reply");
        r.unique = Some(u);
        r.op = Some(op.into());
        r.result = Some(result);
        r.thread = "fuser-0".into();
        self.push(r);
        u
    }
    /// pid of a new call by T0 (the main thread) or T1 (a thread per call).
    fn pid(&mut self, t1: bool) -> u32 {
        self.calls += 1;
        if t1 {
            2000 + self.calls
        } else {
            1000
        }
    }
}

fn cache_write(q: &mut Event, page: u8, n: u8) {
    q.offset = Some(page as u64 * 4096);
    q.size = Some(n as u64 * 4096);
    q.write_flags = Some(1);
    q.page_tags = Some("W".repeat(n as usize));
}

fn render(kernel: &str, config: serde_json::Value, blocks: &[Block]) -> Vec<Event> {
    let mut r = Render {
        ev: vec![Event::header(kernel, config, "generated")],
        unique: 2,
        calls: 0,
    };
    let mut init = Event::new("init");
    init.unique = Some(2);
    init.op = Some("INIT".into());
    init.result = Some(json!({"max_write": "Ok(1048576)"}));
    r.push(init);
    r.mark("call T0 open f 0x42");
    r.req(
        "LOOKUP",
        1000,
        |q| q.name = Some("f".into()),
        json!({"errno": 2, "error": "ENOENT"}),
        false,
    );
    r.req(
        "CREATE",
        1000,
        |q| q.flags = Some(0x42),
        json!({"fh": 1, "ino": 2, "open_flags": []}),
        false,
    );
    r.mark("ret T0 open 6 errno=0 dur_us=5");
    for b in blocks {
        match b {
            Block::Pwrite {
                t1,
                page,
                tags,
                xattr,
            } => {
                let (a, pid) = (if *t1 { "T1" } else { "T0" }, r.pid(*t1));
                r.mark(&format!(
                    "call {a} pwrite fd=6 off={} {tags}",
                    *page as u64 * 4096
                ));
                if *xattr {
                    r.req(
                        "GETXATTR",
                        pid,
                        |q| q.name = Some("security.capability".into()),
                        json!({"errno": 38}),
                        false,
                    );
                }
                r.mark(&format!(
                    "ret {a} pwrite {} errno=0 dur_us=7",
                    tags.len() * 4096
                ));
            }
            Block::Sfr { t1, page, n, held } => {
                let a = if *t1 { "T1" } else { "T0" };
                r.pid(*t1);
                r.mark(&format!("call {a} sync_file_range fd=6 0 0 WRITE"));
                r.mark(&format!("ret {a} sync_file_range 0 errno=0 dur_us=3"));
                let size = *n as u64 * 4096;
                r.req(
                    "WRITE",
                    0,
                    |q| cache_write(q, *page, *n),
                    json!({"written": size}),
                    *held,
                );
            }
            Block::Fsync { t1 } => {
                let (a, pid) = (if *t1 { "T1" } else { "T0" }, r.pid(*t1));
                r.mark(&format!("call {a} fsync fd=6"));
                r.req("FSYNC", pid, |q| q.fh = Some(1), json!({}), false);
                r.mark(&format!("ret {a} fsync 0 errno=0 dur_us=9"));
            }
            Block::Ftruncate { t1, pages } => {
                let (a, pid) = (if *t1 { "T1" } else { "T0" }, r.pid(*t1));
                let size = *pages as u64 * 4096;
                r.mark(&format!("call {a} ftruncate fd=6 {size}"));
                r.req(
                    "SETATTR",
                    pid,
                    |q| q.size = Some(size),
                    json!({"size": size}),
                    false,
                );
                r.mark(&format!("ret {a} ftruncate 0 errno=0 dur_us=4"));
            }
            Block::Note(t) => {
                // a note never parses as a call or ret mark
                r.mark(&format!("note {t}"));
            }
            Block::Stall(ms) => {
                let mut s = Event::new("stall");
                s.ms = Some(*ms);
                r.push(s);
                r.push(Event::new("stall_end"));
            }
        }
    }
    let mut x = Event::new("exit");
    x.text = Some("Ok(())".into());
    r.push(x);
    r.ev
}

fn valid_trace() -> impl Strategy<Value = Vec<Event>> {
    (header(), prop::collection::vec(block(), 0..8))
        .prop_map(|((k, c), blocks)| render(&k, c, &blocks))
}

fn text(ev: &[Event]) -> String {
    ev.iter().map(Event::to_line).collect::<Vec<_>>().join("\n")
}

// ---------------------------------------------------------------- recorded traces

fn recorded() -> &'static Vec<(PathBuf, String)> {
    static R: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    R.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces/6.18.44");
        let mut v: Vec<(PathBuf, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .map(|p| {
                let t = std::fs::read_to_string(&p).unwrap();
                (p, t)
            })
            .collect();
        v.sort();
        v
    })
}

/// A base trace: generated, or one of the 34 recorded ones.
fn base() -> impl Strategy<Value = Vec<Event>> {
    prop_oneof![
        valid_trace(),
        (0..recorded().len()).prop_map(|i| parse_trace(&recorded()[i].1).unwrap()),
    ]
}

// ---------------------------------------------------------------- corruptions

#[derive(Clone, Debug)]
enum Corruption {
    /// Cut line `line` (a fraction of the lines) at a fraction of its length.
    Truncate { line: f64, at: f64 },
    /// Give a field of a line a value of the wrong type.
    WrongType {
        line: f64,
        field: usize,
        value: usize,
    },
    /// Rename an event kind.
    UnknownKind { line: f64, kind: String },
    /// Write a reply twice.
    DuplicateReply { which: f64 },
    /// Remove a syscall's return mark.
    RemoveReturn { which: f64 },
}

/// Fields whose type the format fixes, and wrong values for them.
const FIELDS: &[&str] = &[
    "ev", "seq", "unique", "pid", "nodeid", "ret", "size", "kind", "schema", "kernel",
];
const WRONG: &[&str] = &["\"x\"", "-1", "1.5", "[1]", "{}", "true"];

fn corruption() -> impl Strategy<Value = Corruption> {
    let f = 0.0..1.0f64;
    prop_oneof![
        (f.clone(), 0.0..1.0f64).prop_map(|(line, at)| Corruption::Truncate { line, at }),
        (f.clone(), 0..FIELDS.len(), 0..WRONG.len())
            .prop_map(|(line, field, value)| Corruption::WrongType { line, field, value }),
        (f.clone(), "[a-z_]{1,10}").prop_map(|(line, kind)| Corruption::UnknownKind { line, kind }),
        f.clone()
            .prop_map(|which| Corruption::DuplicateReply { which }),
        f.prop_map(|which| Corruption::RemoveReturn { which }),
    ]
}

fn pick(n: usize, x: f64) -> usize {
    ((n as f64 * x) as usize).min(n - 1)
}

fn renumber(ev: &mut [Event]) {
    for (i, e) in ev.iter_mut().enumerate().skip(1) {
        e.seq = i as u64;
    }
}

/// Applies `c` to `ev`; returns the text and what the error must mention,
/// or None when the trace has nothing to corrupt that way.
fn corrupt(ev: &[Event], c: &Corruption) -> Option<(String, String)> {
    let mut lines: Vec<String> = ev.iter().map(Event::to_line).collect();
    match c {
        Corruption::Truncate { line, at } => {
            let i = pick(lines.len(), *line);
            let l = &lines[i];
            // a proper, non-empty prefix of a JSON object is never one
            let cut = 1 + pick(l.len() - 1, *at);
            let cut = (1..=cut).rev().find(|k| l.is_char_boundary(*k)).unwrap();
            lines[i].truncate(cut);
            Some((lines.join("\n"), format!("line {}: ", i + 1)))
        }
        Corruption::WrongType { line, field, value } => {
            let i = pick(lines.len(), *line);
            let mut v: serde_json::Value = serde_json::from_str(&lines[i]).unwrap();
            let key = FIELDS[*field];
            // only fields the line has (ev always)
            let key = if v.get(key).is_some() { key } else { "ev" };
            let wrong: serde_json::Value = serde_json::from_str(WRONG[*value]).unwrap();
            // a wrong value must really be of another type for this field
            let ok_type = match key {
                "ev" | "kind" | "kernel" => wrong.is_string(),
                _ => wrong.is_u64() || (key == "ret" && wrong.is_i64()),
            };
            if ok_type {
                return None;
            }
            v[key] = wrong;
            lines[i] = v.to_string();
            Some((lines.join("\n"), format!("line {}: ", i + 1)))
        }
        Corruption::UnknownKind { line, kind } => {
            if EVENT_KINDS.contains(&kind.as_str()) || ev.len() < 2 {
                return None;
            }
            let i = 1 + pick(ev.len() - 1, *line);
            let mut e = ev.to_vec();
            e[i].ev = kind.clone();
            Some((text(&e), "unknown event kind".into()))
        }
        Corruption::DuplicateReply { which } => {
            let replies: Vec<usize> = (0..ev.len()).filter(|i| ev[*i].ev == "reply").collect();
            if replies.is_empty() {
                return None;
            }
            let i = replies[pick(replies.len(), *which)];
            let mut e = ev.to_vec();
            e.insert(i + 1, ev[i].clone());
            renumber(&mut e);
            Some((text(&e), "a second reply".into()))
        }
        Corruption::RemoveReturn { which } => {
            let rets: Vec<usize> = (0..ev.len())
                .filter(|i| ev[*i].ev == "mark" && ev[*i].kind.as_deref() == Some("ret"))
                .collect();
            if rets.is_empty() {
                return None;
            }
            let i = rets[pick(rets.len(), *which)];
            let mut e = ev.to_vec();
            e.remove(i);
            renumber(&mut e);
            // the actor's next call comes first, or the end of the trace
            Some((text(&e), "has not returned|never returns".into()))
        }
    }
}

/// Parse, validate, map and check `text`: the error, if any.
fn run(text: &str) -> Result<(), String> {
    let ev = parse_trace(text)?;
    conform_trace(&ev, None).map(|_| ())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Generated valid traces round-trip through the parser, pass the
    /// structural checks, and are never bad input for the whole pipeline.
    #[test]
    fn valid_traces_round_trip(ev in valid_trace()) {
        let t = text(&ev);
        let back = parse_trace(&t).unwrap();
        prop_assert_eq!(&back, &ev);
        prop_assert_eq!(text(&back), t);
        prop_assert!(validate(&back).is_ok(), "{:?}", validate(&back));
        let t0 = Instant::now();
        let r = conform_trace(&back, None);
        prop_assert!(r.is_ok(), "{:?}", r.err());
        prop_assert!(t0.elapsed() < VALID_LIMIT, "{:?}", t0.elapsed());
    }

    /// Every corruption is rejected with one line naming it, without a
    /// panic, in bounded time.
    #[test]
    fn corrupted_traces_are_rejected(ev in base(), c in corruption()) {
        let Some((t, needle)) = corrupt(&ev, &c) else {
            return Ok(());
        };
        let t0 = Instant::now();
        let r = run(&t);
        prop_assert!(t0.elapsed() < CORRUPT_LIMIT, "{:?}", t0.elapsed());
        let e = match r {
            Err(e) => e,
            Ok(()) => return Err(TestCaseError::fail(format!("{c:?} accepted"))),
        };
        prop_assert!(!e.contains('\n'), "not one line: {}", e);
        prop_assert!(needle.split('|').any(|n| e.contains(n)), "{:?}: {} (expected {})", c, e, needle);
    }
}

/// The recorded traces themselves are valid and round-trip (a fixed point
/// for the corruptions above); valid on one connection: p_two_files has
/// two files, which `validate` alone (one inode) refuses.
#[test]
fn recorded_traces_round_trip() {
    for (p, t) in recorded() {
        let ev = parse_trace(t).unwrap();
        assert!(validate_connection(&ev).is_ok(), "{}", p.display());
        assert_eq!(parse_trace(&text(&ev)).unwrap(), ev, "{}", p.display());
    }
}
