//! `wbspec record`'s last pass: the payload bytes the server and the
//! tracer wrote in hex (`raw`) become segment digests (`segs`,
//! trace::segs) before the trace is published.
//!
//! The cuts are every byte offset the trace names (`cuts` below): the
//! offsets and ends of syscall ranges and request ranges, the sizes of
//! truncations, SETATTRs and attribute replies, and where a short read or
//! READ reply ended, collected over the whole trace, every file together;
//! and every multiple of 1 KiB (trace::segs). conform's model pages end
//! at offsets the trace names or at multiples of 1 KiB (its smallest
//! unit; a mapping's pages, rounded up to 4 KiB), so each is a run of
//! whole pieces of every payload that covers it: its bytes are compared
//! by their digests, not by the first byte of a page or 1 KiB unit.
//!
//! Assumed: a buffer is not changed while the syscall that copies it
//! runs. The tracer reads a write's buffer (sendfile's source file) at
//! the entry stop and again at the exit stop, and a `ret` mark says
//! ` buffer=changed` when the two differ (conform then does not compare
//! that write); a change and its undoing between the two, or a read's
//! buffer changed between the kernel's copy and the exit stop, are not
//! seen.
use std::collections::{BTreeSet, HashMap};

use crate::trace::{segs, unhex, Event};

/// The positional numbers of a call mark's arguments that are byte
/// offsets or lengths, by syscall (docs in decode.rs): `(offset word,
/// length word)`, counted from the first argument word.
fn positional(sc: &str) -> Option<(usize, Option<usize>)> {
    match sc {
        // `ftruncate fd=N SIZE`, `truncate REL SIZE`
        "ftruncate" | "truncate" => Some((1, None)),
        // `sync_file_range fd=N OFF LEN FLAGS`, `fadvise64 fd=N OFF LEN ADVICE`
        "sync_file_range" | "fadvise64" => Some((1, Some(2))),
        _ => None,
    }
}

/// Where each event's data starts in the file: a call's `off=`, and
/// the same for its ret (one call at a time per thread); a request's
/// offset, and the same for its reply.
#[derive(Default)]
struct Starts {
    call: HashMap<String, u64>,
    req: HashMap<u64, u64>,
}

impl Starts {
    fn of(&mut self, e: &Event) -> Option<u64> {
        match (e.ev.as_str(), e.kind.as_deref()) {
            ("mark", Some("call")) => {
                let off = e.args.as_deref().and_then(|a| {
                    a.split_whitespace()
                        .find_map(|w| w.strip_prefix("off="))
                        .and_then(|v| v.parse::<u64>().ok())
                });
                if let (Some(a), Some(o)) = (e.actor.as_ref(), off) {
                    self.call.insert(a.clone(), o);
                }
                off
            }
            ("mark", Some("ret")) => e.actor.as_ref().and_then(|a| self.call.remove(a)),
            ("req", _) => {
                if let (Some(o), Some(u)) = (e.offset, e.unique) {
                    self.req.insert(u, o);
                }
                e.offset
            }
            ("reply", _) => e.unique.and_then(|u| self.req.remove(&u)),
            _ => None,
        }
    }
}

/// Every offset a trace names (the module's comment), gathered one
/// event at a time.
#[derive(Default)]
pub struct Cuts {
    pub at: BTreeSet<u64>,
    starts: Starts,
}

impl Cuts {
    pub fn add(&mut self, e: &Event) {
        let start = self.starts.of(e);
        let c = &mut self.at;
        let num = |w: &str| w.parse::<u64>().ok();
        match (e.ev.as_str(), e.kind.as_deref()) {
            ("mark", Some("call")) => {
                let args = e.args.as_deref().unwrap_or("");
                let words: Vec<&str> = args.split_whitespace().collect();
                let key = |k: &str| {
                    words
                        .iter()
                        .find_map(|w| w.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
                        .and_then(num)
                };
                if let Some(o) = start {
                    c.insert(o);
                    if let Some(l) = key("len") {
                        c.insert(o.saturating_add(l));
                    }
                }
                let sc = e.syscall.as_deref().unwrap_or("");
                if let Some((o, l)) = positional(sc) {
                    if let Some(o) = words.get(o).copied().and_then(num) {
                        c.insert(o);
                        if let Some(l) = l.and_then(|l| words.get(l).copied()).and_then(num) {
                            c.insert(o.saturating_add(l));
                        }
                    }
                }
            }
            ("mark", Some("ret")) => {
                if let (Some(o), Some(r)) = (start, e.ret.filter(|r| *r > 0)) {
                    c.insert(o.saturating_add(r as u64));
                }
            }
            ("req", _) => match (start, e.size) {
                (Some(o), s) => {
                    c.insert(o);
                    if let Some(s) = s {
                        c.insert(o.saturating_add(s));
                    }
                }
                // (a FORGET's `size` is its nlookup)
                (None, Some(s)) if e.op.as_deref() == Some("SETATTR") => {
                    c.insert(s);
                }
                _ => {}
            },
            ("reply", _) => {
                let Some(r) = e.result.as_ref() else { return };
                for k in ["size", "old_size", "file_size_before", "file_size_after"] {
                    if let Some(v) = r[k].as_u64() {
                        c.insert(v);
                    }
                }
                if let (Some(o), Some(b)) = (start, r["bytes"].as_u64()) {
                    c.insert(o.saturating_add(b));
                }
            }
            _ => {}
        }
    }
}

/// Every offset the events name ([`Cuts`]), and 0.
pub fn cuts(events: &[Event]) -> BTreeSet<u64> {
    let mut c = Cuts::default();
    c.at.insert(0);
    for e in events {
        c.add(e);
    }
    c.at
}

/// The mark whose `raw=` word (the last word, as the tracer appends it:
/// a pwrite's or sendfile's `call`, a read's `ret`) holds its payload;
/// a file name that starts with `raw=` is never read as one.
fn raw_of(e: &Event) -> Option<&str> {
    let text = e.text.as_deref()?;
    let carries = match e.kind.as_deref() {
        Some("call") => matches!(e.syscall.as_deref(), Some("pwrite" | "sendfile")),
        Some("ret") => e.syscall.as_deref() == Some("pread"),
        _ => false,
    };
    if !carries {
        return None;
    }
    text.rsplit(' ').next()?.strip_prefix("raw=")
}

/// The published trace of the temporary one at `path`, read twice, a
/// line at a time (its hex payloads are about four times the bytes CMD
/// moved, a syscall's and a request's; one line, decoded, and the result
/// without them are held): every `raw` payload
/// replaced by its `segs`, the header's `raw` by `segs: true`. Lines
/// without payloads are kept byte for byte.
pub fn finish_file(path: &std::path::Path) -> Result<String, String> {
    use std::io::BufRead;
    let lines = || -> Result<Box<dyn Iterator<Item = std::io::Result<String>>>, String> {
        let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
        Ok(Box::new(std::io::BufReader::new(f).lines()))
    };
    let c = cuts_of(lines()?)?;
    rewrite(lines()?, &c)
}

/// [`finish_file`] of a trace held as text.
pub fn finish(text: &str) -> Result<String, String> {
    let lines = || text.lines().map(|l| Ok(l.to_string()));
    let c = cuts_of(lines())?;
    rewrite(lines(), &c)
}

fn parse(i: usize, l: &str) -> Result<Event, String> {
    serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1))
}

fn cuts_of(lines: impl Iterator<Item = std::io::Result<String>>) -> Result<BTreeSet<u64>, String> {
    let mut c = Cuts::default();
    c.at.insert(0);
    for (i, l) in lines.enumerate() {
        let l = l.map_err(|e| e.to_string())?;
        if !l.trim().is_empty() {
            c.add(&parse(i, &l)?);
        }
    }
    Ok(c.at)
}

fn rewrite(
    lines: impl Iterator<Item = std::io::Result<String>>,
    c: &BTreeSet<u64>,
) -> Result<String, String> {
    let bad = |seq: u64, what: &str| format!("event #{seq}: {what} is not hex");
    let mut out = String::new();
    let mut starts = Starts::default();
    for (i, line) in lines.enumerate() {
        let line = line.map_err(|e| e.to_string())?;
        if line.trim().is_empty() {
            continue;
        }
        let mut e = parse(i, &line)?;
        let start = starts.of(&e);
        let mut changed = false;
        match e.ev.as_str() {
            "header" => {
                if let Some(m) = e.config.as_mut().and_then(|c| c.as_object_mut()) {
                    if m.remove("raw").is_some() {
                        m.insert("segs".into(), true.into());
                        changed = true;
                    }
                }
            }
            "req" => {
                if let Some(r) = e.raw.take() {
                    let d = unhex(&r).ok_or_else(|| bad(e.seq, "a WRITE's raw"))?;
                    e.segs = Some(segs(start.unwrap_or(0), &d, c));
                    changed = true;
                }
            }
            "reply" => {
                if let Some(r) = e.result.as_mut().and_then(|r| r.as_object_mut()) {
                    if let Some(raw) = r.remove("raw") {
                        let d = raw
                            .as_str()
                            .and_then(unhex)
                            .ok_or_else(|| bad(e.seq, "a READ reply's raw"))?;
                        r.insert("segs".into(), segs(start.unwrap_or(0), &d, c).into());
                        changed = true;
                    }
                }
            }
            "mark" => {
                if let Some(raw) = raw_of(&e) {
                    let d = unhex(raw).ok_or_else(|| bad(e.seq, "a mark's raw"))?;
                    let s = segs(start.unwrap_or(0), &d, c);
                    let text = e.text.as_deref().unwrap_or_default();
                    let kept = &text[..text.len() - raw.len() - " raw=".len()];
                    let new = if s.is_empty() {
                        kept.to_string()
                    } else {
                        format!("{kept} segs={s}")
                    };
                    let (seq, t_us, thread) = (e.seq, e.t_us, std::mem::take(&mut e.thread));
                    e = Event::mark(&new);
                    (e.seq, e.t_us, e.thread) = (seq, t_us, thread);
                    changed = true;
                }
            }
            _ => {}
        }
        if changed {
            out.push_str(&e.to_line());
        } else {
            out.push_str(&line);
        }
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{digest, hex};

    fn line(v: serde_json::Value) -> String {
        v.to_string()
    }

    /// A trace like sqlite's: a 512-byte write at 0, a 4-byte write at
    /// 512, a 100-byte read, then the writeback WRITE of all 516 bytes and
    /// a READ reply; every payload is cut at the offsets the trace names
    /// inside it (100, 512), and only there.
    #[test]
    fn payloads_become_digests_cut_at_the_traces_offsets() {
        let mut file = vec![b'S'; 512];
        file[100..512].fill(0);
        file.extend([1, 2, 3, 4]);
        let call = |seq: u64, text: String| {
            let mut e = Event::mark(&text);
            e.seq = seq;
            e.thread = "ctl-conn".into();
            e.to_line()
        };
        let t = [
            line(serde_json::json!({"ev":"header","schema":1,"kernel":"6.18.44","config":{"raw":true,"writeback_cache":true},"scenario":"record"})),
            call(1, format!("call T1 pwrite fd=3 off=0 S len=512 path=f raw={}", hex(&file[..512]))),
            call(2, "ret T1 pwrite 512 errno=0 dur_us=3".into()),
            call(3, format!("call T1 pwrite fd=3 off=512 ? len=4 path=f raw={}", hex(&file[512..]))),
            call(4, "ret T1 pwrite 4 errno=0 dur_us=3".into()),
            call(5, "call T1 pread fd=3 off=0 len=100 path=f".into()),
            call(6, format!("ret T1 pread 100 errno=0 dur_us=3 data=S raw={}", hex(&file[..100]))),
            line(serde_json::json!({"ev":"req","seq":7,"unique":8,"op":"WRITE","offset":0,"size":516,"raw":hex(&file)})),
            line(serde_json::json!({"ev":"reply","seq":8,"unique":8,"op":"WRITE","result":{"written":516,"file_size_after":516}})),
            line(serde_json::json!({"ev":"req","seq":9,"unique":10,"op":"READ","offset":0,"size":4096})),
            line(serde_json::json!({"ev":"reply","seq":10,"unique":10,"op":"READ","result":{"bytes":516,"page_tags":"S","raw":hex(&file)}})),
            call(11, "note without data".into()),
        ]
        .join("\n");
        let out = finish(&t).unwrap();
        assert!(!out.contains("raw"), "{out}");
        let ev: Vec<Event> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(ev[0].config.as_ref().unwrap()["segs"], true);
        let d = |b: &[u8]| format!("{:08x}", digest(b));
        let whole = format!(
            "0+100:{},100+412:.,512+4:{}",
            d(&file[..100]),
            d(&file[512..])
        );
        assert_eq!(ev[7].segs.as_deref(), Some(whole.as_str()));
        assert_eq!(ev[10].result.as_ref().unwrap()["segs"], whole.as_str());
        // the marks: the word replaced, the mark parsed again
        assert_eq!(
            ev[1].text.as_deref(),
            Some(
                format!(
                    "call T1 pwrite fd=3 off=0 S len=512 path=f segs=0+100:{},100+412:.",
                    d(&file[..100])
                )
                .as_str()
            )
        );
        assert_eq!(
            ev[1].args.as_deref().unwrap().split_whitespace().last(),
            Some(format!("segs=0+100:{},100+412:.", d(&file[..100])).as_str())
        );
        assert_eq!(
            ev[3].text.as_deref().unwrap().split(' ').last(),
            Some(format!("segs=512+4:{}", d(&file[512..])).as_str())
        );
        assert_eq!(
            ev[6].segs.as_deref(),
            Some(format!("0+100:{}", d(&file[..100])).as_str())
        );
        assert_eq!(ev[6].page_tags.as_deref(), Some("S"));
        assert_eq!((ev[6].seq, ev[6].thread.as_str()), (6, "ctl-conn"));
        // lines without payloads are kept as they were
        assert_eq!(out.lines().nth(8), t.lines().nth(8));
        assert_eq!(out.lines().nth(11), t.lines().nth(11));
        // the cuts: the offsets and ends named, the sizes, nothing else
        let all: Vec<Event> = t
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            cuts(&all).into_iter().collect::<Vec<_>>(),
            vec![0, 100, 512, 516, 4096]
        );
    }

    /// Only the last word of a pwrite's or sendfile's call, or of a
    /// read's ret, is a payload: a file named `raw=zz` is a name (an
    /// attack had record fail on it, and rewrite `raw=41`'s open).
    #[test]
    fn a_file_named_raw_is_a_name() {
        let m = |seq: u64, t: &str| {
            let mut e = Event::mark(t);
            e.seq = seq;
            e.to_line()
        };
        let t = [
            m(1, "call T1 open raw=zz 0x42 path=raw=zz"),
            m(2, "ret T1 open 3 errno=0 dur_us=1"),
            m(3, "call T1 truncate raw=41 0 path=raw=41"),
            m(4, "ret T1 truncate 0 errno=0 dur_us=1"),
            m(5, "call T1 pwrite fd=3 off=0 A len=1 path=raw=41 raw=41"),
        ]
        .join("\n");
        let out = finish(&t).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[..4], t.lines().collect::<Vec<_>>()[..4]);
        let e: Event = serde_json::from_str(lines[4]).unwrap();
        assert_eq!(
            e.text.as_deref(),
            Some(
                format!(
                    "call T1 pwrite fd=3 off=0 A len=1 path=raw=41 segs=0+1:{:08x}",
                    digest(b"A")
                )
                .as_str()
            )
        );
    }

    #[test]
    fn bad_raw_is_an_error_naming_the_event() {
        let t = "{\"ev\":\"req\",\"seq\":3,\"unique\":4,\"op\":\"WRITE\",\"offset\":0,\"size\":1,\"raw\":\"zz\"}";
        assert_eq!(finish(t).unwrap_err(), "event #3: a WRITE's raw is not hex");
        assert!(finish("not json").unwrap_err().starts_with("line 1: "));
    }

    #[test]
    fn positional_sizes_are_cuts() {
        let m = |t: &str| Event::mark(t);
        let ev = [
            m("call T1 ftruncate fd=3 1000 path=f"),
            m("call T1 truncate f 77 path=f"),
            m("call T1 sync_file_range fd=3 10 20 7 path=f"),
        ];
        assert_eq!(
            cuts(&ev).into_iter().collect::<Vec<_>>(),
            vec![0, 10, 30, 77, 1000]
        );
    }
}
