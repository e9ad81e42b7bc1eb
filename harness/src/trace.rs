//! Trace format: JSON lines, one [`Event`] per line.
//!
//! The first line is a header (`ev = "header"`) carrying [`SCHEMA_VERSION`],
//! the kernel release, the server configuration and the scenario name.
//! Every later line has a strictly increasing `seq` (assigned under one lock in
//! the recording server, so `seq` order is the order in which the server saw
//! things happen) and `t_us` (microseconds since the server started).
//!
//! Event kinds (`ev`):
//! - `header`: schema, kernel, config, scenario.
//! - `init`: kernel INIT capabilities and what the server requested
//!   (`result` holds `kernel_caps`, `requested`, `max_write`, ...).
//! - `req`: a request the server READ from /dev/fuse (not when the kernel queued it).
//! - `hold`: that request's reply was parked.
//! - `release`: a parked reply is being released (`why` = ctl | watchdog | exit, `held_ms`).
//! - `reply`: the reply is about to be written to /dev/fuse (logged BEFORE the
//!   write, so any request caused by the reply has a larger `seq`).
//! - `mark`: a line sent by the workload over the control socket; syscall marks
//!   are parsed into `kind` (call/ret/note), `actor`, `syscall`, `args`, `ret`, `errno`, `dur_us`.
//! - `stall` / `stall_end`: the dispatch thread was deliberately blocked inside a handler.
//! - `server_truncate`: the control socket truncated a file on the server
//!   (another client's truncation: `name`, `size`).
//! - `exit`: the server session ended.
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bump when a field changes meaning or is removed.
pub const SCHEMA_VERSION: u32 = 1;

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One trace line. Fields that do not apply to an event are omitted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// header | init | req | reply | hold | release | mark | stall | stall_end | exit
    pub ev: String,
    // ---- header only ----
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    // ---- common ----
    /// Total order of events in the server (0 only on the header).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seq: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub t_us: u64,
    /// Server thread that logged the event (fuser-0 = the dispatch thread).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thread: String,
    /// Kernel request id (`fuse_in_header.unique`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique: Option<u64>,
    /// Opcode name, upper case without the FUSE_ prefix (WRITE, SETATTR, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    // ---- req ----
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodeid: Option<u64>,
    /// Caller pid; 0 for kernel-originated requests (writeback, RELEASE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// offset + size for READ/WRITE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<u64>,
    /// Raw FUSE write_flags (bit0 CACHE, bit1 LOCKOWNER, bit2 KILL_SUIDGID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_flags: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_flag_names: Option<Vec<String>>,
    /// Open flags (OPEN/CREATE: the open(2) flags the kernel passed; READ/WRITE: file flags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag_names: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fh: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_owner: Option<u64>,
    /// WRITE: first byte of every 4 KiB page of the payload ('.' for 0, '?' for non-printable);
    /// the `ret` mark of a read: the same for the data it returned (`data=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_tags: Option<String>,
    /// The same data's 1 KiB units ([`unit_tags`]), only where the page
    /// tags do not give them (the `ret` mark of a read: `units=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_tags: Option<String>,
    /// `wbspec record`'s temporary trace only: the payload in hex (a
    /// WRITE's; a READ reply has it as `result.raw`), which record's last
    /// pass replaces with `segs` ([`segs`]). No published trace has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// The payload's segment digests ([`segs`]): a WRITE's here, a READ
    /// reply's as `result.segs`, a syscall's as its mark's `segs=` word
    /// (on the `ret` mark of a read, parsed into this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segs: Option<String>,
    /// SETATTR: valid mask RECONSTRUCTED from fuser's decoded Options (see server/ops.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_names: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datasync: Option<bool>,
    /// INTERRUPT: the unique of the request it interrupts
    /// (`fuse_interrupt_in.unique`; its own unique is that | 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupts: Option<u64>,
    /// Server-side in-flight uniques (read but not yet replied) when the request was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inflight_before: Option<Vec<u64>>,
    // ---- reply ----
    /// Op-specific result object, e.g. {"written":4096,"file_size_after":4096} or {"errno":2}.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inflight_after: Option<Vec<u64>>,
    // ---- release ----
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_ms: Option<u64>,
    // ---- mark ----
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// call | ret | note
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syscall: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ret: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errno: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dur_us: Option<u64>,
    // ---- stall ----
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
}

impl Event {
    pub fn new(ev: &str) -> Self {
        Event {
            ev: ev.to_string(),
            ..Default::default()
        }
    }

    pub fn header(kernel: &str, config: Value, scenario: &str) -> Self {
        Event {
            ev: "header".into(),
            schema: Some(SCHEMA_VERSION),
            kernel: Some(kernel.into()),
            config: Some(config),
            scenario: Some(scenario.into()),
            ..Default::default()
        }
    }

    /// Build a mark event from its text. Syscall marks have the forms
    /// `call <actor> <syscall> [args...]` and
    /// `ret <actor> <syscall> <retval> [errno=E] [dur_us=D] [data=TAGS]`.
    /// Anything else is a `note`.
    pub fn mark(text: &str) -> Self {
        let mut e = Event::new("mark");
        e.text = Some(text.to_string());
        let parts: Vec<&str> = text.split_whitespace().collect();
        match parts.first().copied() {
            Some("call") if parts.len() >= 3 => {
                e.kind = Some("call".into());
                e.actor = Some(parts[1].into());
                e.syscall = Some(parts[2].into());
                e.args = Some(parts[3..].join(" "));
            }
            Some("ret") if parts.len() >= 4 => {
                e.kind = Some("ret".into());
                e.actor = Some(parts[1].into());
                e.syscall = Some(parts[2].into());
                e.ret = parts[3].parse().ok();
                for p in &parts[4..] {
                    if let Some(v) = p.strip_prefix("errno=") {
                        e.errno = v.parse().ok();
                    } else if let Some(v) = p.strip_prefix("dur_us=") {
                        e.dur_us = v.parse().ok();
                    } else if let Some(v) = p.strip_prefix("data=") {
                        // a read's returned data, as page tags
                        e.page_tags = Some(v.to_string());
                    } else if let Some(v) = p.strip_prefix("units=") {
                        // the same data's 1 KiB unit tags (`unit_tags`)
                        e.unit_tags = Some(v.to_string());
                    } else if let Some(v) = p.strip_prefix("segs=") {
                        // its segment digests (`segs`)
                        e.segs = Some(v.to_string());
                    }
                }
            }
            _ => e.kind = Some("note".into()),
        }
        e
    }

    pub fn is(&self, ev: &str, op: &str) -> bool {
        self.ev == ev && self.op.as_deref() == Some(op)
    }

    pub fn is_req(&self, op: &str) -> bool {
        self.is("req", op)
    }

    /// WRITE carrying FUSE_WRITE_CACHE (a page-cache writeback WRITE).
    pub fn is_cache_write(&self) -> bool {
        self.is_req("WRITE") && self.write_flags.unwrap_or(0) & 1 != 0
    }

    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("event serializes")
    }
}

/// Largest trace file `conform --trace` reads (16 MiB; a recorded scenario
/// trace is under 20 KiB).
pub const MAX_TRACE_BYTES: u64 = 16 << 20;

/// Reads a trace file: a regular file of at most [`MAX_TRACE_BYTES`]. A
/// FIFO, a device or a directory is refused without a blocking open.
/// Errors are one line, without the file name.
pub fn read_trace_file(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO for reading does not wait for a writer
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    let meta = f.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_TRACE_BYTES {
        return Err(format!(
            "{} bytes, more than the {MAX_TRACE_BYTES} a trace may have",
            meta.len()
        ));
    }
    let mut text = String::new();
    f.take(MAX_TRACE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_TRACE_BYTES {
        return Err(format!("grew past {MAX_TRACE_BYTES} bytes while read"));
    }
    Ok(text)
}

/// Parse a whole JSONL trace. Blank lines are skipped.
pub fn parse_trace(text: &str) -> Result<Vec<Event>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// First byte of every 4 KiB page: letters as-is, 0 as '.', other bytes as '?'.
pub fn page_tags(data: &[u8]) -> String {
    data.chunks(4096).map(|c| page_tag(c[0])).collect()
}

/// The smallest unit of data tags: trace conformance maps data whose
/// offsets and sizes are not whole pages onto units of 1 or 2 KiB.
pub const UNIT: usize = 1024;

/// First byte of every 1 KiB unit of `data`, as [`page_tags`] tags them,
/// when the page tags do not give them (some unit starts with another
/// byte than its 4 KiB page); `None` when every unit's tag is its page's.
/// A recorder writes both, so a reader rebuilds every unit's tag
/// ([`units_from`]); headers of such recorders say `unit_tags: true`.
pub fn unit_tags(data: &[u8]) -> Option<String> {
    let units: String = data.chunks(UNIT).map(|c| page_tag(c[0])).collect();
    units_if_needed(&page_tags(data), &units, data.len() as u64)
}

/// `units` (the 1 KiB unit tags of `len` bytes) when the page tags `page`
/// do not give them, as [`unit_tags`] records them.
pub fn units_if_needed(page: &str, units: &str, len: u64) -> Option<String> {
    (units != units_from(page, None, len)).then(|| units.to_string())
}

/// The 1 KiB unit tags of `len` bytes of data given by its page tags and,
/// where recorded, its unit tags ([`unit_tags`]).
pub fn units_from(page_tags: &str, unit_tags: Option<&str>, len: u64) -> String {
    match unit_tags {
        Some(u) => u.to_string(),
        None => page_tags
            .chars()
            .flat_map(|c| std::iter::repeat_n(c, 4096 / UNIT))
            .take(len.div_ceil(UNIT as u64) as usize)
            .collect(),
    }
}

/// The segment digests of `data`, which lies at file offset `start`:
/// the data cut at every offset of `cuts` and every multiple of [`UNIT`]
/// strictly inside it, each piece written `OFF+LEN:D` (file offset,
/// length), pieces joined by `,`. D is `.` for a piece of zeros, else
/// [`digest`] in 8 hex digits. `wbspec record` cuts every payload of a
/// trace at every offset any of the trace's syscalls, requests and sizes
/// names (record/segs.rs); with the 1 KiB grid, every range whose ends
/// are such offsets or multiples of 1 KiB (every model page conform
/// makes) is whole pieces in every payload that covers it, so its bytes
/// can be compared piece by piece, not by a first byte.
pub fn segs(start: u64, data: &[u8], cuts: &std::collections::BTreeSet<u64>) -> String {
    if data.is_empty() {
        return String::new();
    }
    let end = start + data.len() as u64;
    let grid = (start / UNIT as u64 + 1) * UNIT as u64;
    let mut at: std::collections::BTreeSet<u64> = (grid..end).step_by(UNIT).collect();
    at.extend(cuts.range(start..=end).copied());
    at.insert(start);
    at.insert(end);
    let at: Vec<u64> = at.into_iter().collect();
    at.windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| {
            let piece = &data[(w[0] - start) as usize..(w[1] - start) as usize];
            let d = if piece.iter().all(|b| *b == 0) {
                ".".to_string()
            } else {
                format!("{:08x}", digest(piece))
            };
            format!("{}+{}:{d}", w[0], w[1] - w[0])
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// FNV-1a, 32 bits, of `data` (two different pieces of data share a
/// digest with probability about 2^-32).
pub fn digest(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5u32, |h, b| {
        (h ^ *b as u32).wrapping_mul(0x0100_0193)
    })
}

/// `data` in lower-case hex (`raw`).
pub fn hex(data: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(data.len() * 2);
    for b in data {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The bytes of a [`hex`] string; `None` if it is not one.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The tag of a page whose first byte is `b` ([`page_tags`]). `=` is
/// `?` too: a mark's tag word must never read as a `key=value` word
/// (data whose pages begin `p`,`a`,`t`,`h`,`=` spelled `path=...`, and
/// conform read that as the file's name; found by an attack).
pub fn page_tag(b: u8) -> char {
    match b {
        0 => '.',
        b'=' => '?',
        b if b.is_ascii_graphic() => b as char,
        _ => '?',
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_line_shape() {
        let h = Event::header(
            "6.18.44",
            serde_json::json!({"writeback_cache":true}),
            "b_ftrunc",
        );
        let line = h.to_line();
        assert_eq!(
            line,
            r#"{"ev":"header","schema":1,"kernel":"6.18.44","config":{"writeback_cache":true},"scenario":"b_ftrunc"}"#
        );
        let back: Event = serde_json::from_str(&line).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn roundtrip_req_reply_mark() {
        let mut r = Event::new("req");
        r.seq = 14;
        r.t_us = 123897;
        r.thread = "fuser-0".into();
        r.unique = Some(12);
        r.op = Some("WRITE".into());
        r.nodeid = Some(2);
        r.pid = Some(0);
        r.offset = Some(0);
        r.size = Some(16384);
        r.end = Some(16384);
        r.write_flags = Some(1);
        r.write_flag_names = Some(vec!["CACHE".into()]);
        r.page_tags = Some("ABCD".into());
        r.inflight_before = Some(vec![]);
        let mut p = Event::new("reply");
        p.seq = 22;
        p.unique = Some(12);
        p.op = Some("WRITE".into());
        p.result = Some(serde_json::json!({"written":16384}));
        p.inflight_after = Some(vec![3, 4]);
        let mut m = Event::mark("ret T1 ftruncate 0 dur_us=497512");
        m.seq = 25;
        let text = [r.to_line(), p.to_line(), m.to_line()].join("\n");
        let back = parse_trace(&text).unwrap();
        assert_eq!(back, vec![r.clone(), p, m]);
        assert!(back[0].is_cache_write());
        assert_eq!(back[2].kind.as_deref(), Some("ret"));
        assert_eq!(back[2].ret, Some(0));
        assert_eq!(back[2].dur_us, Some(497512));
        // Unknown fields from a newer writer are tolerated.
        let e: Event = serde_json::from_str(r#"{"ev":"mark","seq":3,"future":1}"#).unwrap();
        assert_eq!(e.seq, 3);
    }

    #[test]
    fn mark_parsing() {
        let c = Event::mark("call T1 ftruncate 4096");
        assert_eq!(c.kind.as_deref(), Some("call"));
        assert_eq!(c.actor.as_deref(), Some("T1"));
        assert_eq!(c.syscall.as_deref(), Some("ftruncate"));
        assert_eq!(c.args.as_deref(), Some("4096"));
        let r = Event::mark("ret T2 pwrite -1 errno=5 dur_us=10");
        assert_eq!(r.ret, Some(-1));
        assert_eq!(r.errno, Some(5));
        let n = Event::mark("snapshot: WRITE held");
        assert_eq!(n.kind.as_deref(), Some("note"));
    }

    #[test]
    fn segs_cut_at_inner_offsets_only() {
        let cuts: std::collections::BTreeSet<u64> = [0, 12, 100, 512, 4096].into();
        let mut d = vec![7u8; 512];
        d[12..100].fill(0);
        let s = segs(0, &d, &cuts);
        let p: Vec<&str> = s.split(',').collect();
        assert_eq!(p.len(), 3, "{s}");
        assert_eq!(p[0], format!("0+12:{:08x}", digest(&[7; 12])));
        assert_eq!(p[1], "12+88:.");
        assert_eq!(p[2], format!("100+412:{:08x}", digest(&[7; 412])));
        // at an offset: only the cuts inside the data
        assert_eq!(
            segs(90, &[1; 20], &cuts),
            format!("90+10:{0:08x},100+10:{0:08x}", digest(&[1; 10]))
        );
        // and every 1 KiB boundary inside it, named or not
        assert_eq!(
            segs(4000, &[1; 2100], &cuts),
            format!(
                "4000+96:{:08x},4096+1024:{:08x},5120+980:{:08x}",
                digest(&[1; 96]),
                digest(&[1; 1024]),
                digest(&[1; 980])
            )
        );
        assert_eq!(segs(5, &[], &cuts), "");
        // one byte changed, one digest changed
        let mut e = d.clone();
        e[300] = 8;
        assert_ne!(segs(0, &e, &cuts), s);
        assert_eq!(
            segs(0, &e, &cuts).split(',').take(2).collect::<Vec<_>>(),
            p[..2]
        );
    }

    #[test]
    fn hex_round_trips() {
        let d: Vec<u8> = (0..=255).collect();
        assert_eq!(unhex(&hex(&d)).unwrap(), d);
        assert_eq!(unhex("0"), None);
        assert_eq!(unhex("zz"), None);
        assert_eq!(hex(&[0, 0xab]), "00ab");
    }

    #[test]
    fn tags() {
        let mut d = vec![b'A'; 4096];
        d.extend(vec![0u8; 4096]);
        d.extend(vec![b'C'; 10]);
        assert_eq!(page_tags(&d), "A.C");
        assert_eq!(page_tags(&[]), "");
        // a tag word never holds `=`
        assert_eq!(page_tags(&[b'='; 4096]), "?");
    }

    #[test]
    fn unit_tags_only_where_pages_do_not_give_them() {
        let mut d = vec![b'A'; 3072];
        assert_eq!(unit_tags(&d), None);
        assert_eq!(units_from(&page_tags(&d), None, 3072), "AAA");
        d.extend(vec![0u8; 1024]);
        d.extend(vec![b'B'; 2048]);
        assert_eq!(unit_tags(&d).as_deref(), Some("AAA.BB"));
        assert_eq!(units_from("AB", unit_tags(&d).as_deref(), 6144), "AAA.BB");
        let m = Event::mark("ret T0 pread 4096 errno=0 data=A units=A.A.");
        assert_eq!(m.unit_tags.as_deref(), Some("A.A."));
    }
}
