//! The hand-written trace notation of the conformance unit tests (`tr`),
//! the opening every such trace starts with (`OPEN`), and the two
//! translation outcomes the tests take apart (`mapping`, `not_modelled`).
//! Used by tests.rs, tests_through.rs and validate.rs's tests.

use super::*;
use serde_json::json;

/// A hand-written trace in a compact notation, one event per line:
/// `call T0 pwrite fd=6 off=0 AB` / `ret T0 pwrite 8192` (marks),
/// `req U OP [off size tags] [cache] [size=N] [pid=P] [node=N] [name=X]`,
/// `reply U OP [k=v...] [ino=N]`; a WRITE request's and a READ reply's
/// `units=` are its 1 KiB unit tags, `segs=` its segment digests, a READ
/// reply's `bytes=` (after `tags=`) its byte count.
/// Requests carry what the recorder writes: the file's nodeid (2, or
/// `node=`; the root, 1, for LOOKUP and CREATE) and the pid of the call
/// pending when they are read (7 + its number; 0 for a page-cache WRITE or
/// RELEASE) unless `pid=` says otherwise. CREATE replies name ino 2 (or
/// `ino=`), WRITE replies write the request's size, READ replies return as
/// many bytes as they have tags.
pub(super) fn tr(cfg: serde_json::Value, lines: &[&str]) -> Vec<Event> {
    let mut base = json!({"writeback_cache": true, "max_write": 1048576,
        "max_background": 16, "congestion_threshold": 12, "keep_cache": false,
        "dio_on_odirect": true, "direct_io_allow_mmap": false, "atomic_o_trunc": false,
        "unit_tags": true});
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
            // the recorder's `server changed ACTOR notify_inval` note,
            // and its note that every thread is marked
            "server" | "marks:" => Event::mark(l),
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
                    } else if let Some(n) = x.strip_prefix("node=") {
                        e.nodeid = n.parse().ok();
                    } else if let Some(n) = x.strip_prefix("name=") {
                        e.name = Some(n.into());
                    } else if let Some(u) = x.strip_prefix("units=") {
                        e.unit_tags = Some(u.into());
                    } else if let Some(g) = x.strip_prefix("segs=") {
                        e.segs = Some(g.into());
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
                    if let Some(i) = x.strip_prefix("ino=") {
                        r["ino"] = json!(i.parse::<u64>().unwrap());
                    } else if let Some(n) = x.strip_prefix("errno=") {
                        r["errno"] = json!(n.parse::<i64>().unwrap());
                    } else if let Some(t) = x.strip_prefix("tags=") {
                        r["page_tags"] = json!(t);
                        r["bytes"] = json!(t.len() * 4096);
                    } else if let Some(b) = x.strip_prefix("bytes=") {
                        r["bytes"] = json!(b.parse::<u64>().unwrap());
                    } else if let Some(u) = x.strip_prefix("units=") {
                        r["unit_tags"] = json!(u);
                    } else if let Some(g) = x.strip_prefix("segs=") {
                        r["segs"] = json!(g);
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
                    "CREATE" if r.get("ino").is_none() => r["ino"] = json!(2),
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

/// Replaces the first mark whose text starts with `prefix` by the mark
/// `new`, at the same place in the trace.
pub(super) fn set_mark(ev: &mut [Event], prefix: &str, new: &str) {
    let e = ev
        .iter_mut()
        .find(|e| e.text.as_deref().is_some_and(|t| t.starts_with(prefix)))
        .unwrap_or_else(|| panic!("no mark starting {prefix:?}"));
    *e = Event {
        seq: e.seq,
        ..Event::mark(new)
    };
}

pub(super) fn mapping(ev: &[Event]) -> Mapping {
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

/// Does `ev` conform (true) or violate (false)? Anything else panics
/// with the report.
pub(super) fn conforms(ev: &[Event]) -> bool {
    let m = mapping(ev);
    let v = check(&m, DEFAULT_BOUND);
    match v {
        Verdict::Conforms { .. } => true,
        Verdict::Violation { .. } => false,
        _ => panic!("{}", v.report(&m)),
    }
}
