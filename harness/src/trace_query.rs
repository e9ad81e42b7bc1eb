//! Queries over a recorded trace ([`Tr`]): requests by opcode, the reply
//! to a request, marks of a syscall, excerpts for failure messages; and
//! reading the trace file of a running server. The format itself is
//! trace.rs.
use std::fs;
use std::path::Path;

use crate::fail::Fail;
use crate::trace::{parse_trace, Event};

pub(crate) fn read_trace(p: &Path) -> Result<Vec<Event>, String> {
    let text = fs::read_to_string(p).map_err(|e| format!("read trace {}: {e}", p.display()))?;
    // A last line still being written is ignored.
    let text = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    parse_trace(text)
}

/// Queries over a recorded trace.
pub struct Tr(pub Vec<Event>);

impl Tr {
    pub fn reqs(&self, op: &str) -> Vec<&Event> {
        self.0.iter().filter(|e| e.is_req(op)).collect()
    }

    pub fn cache_writes(&self) -> Vec<&Event> {
        self.0.iter().filter(|e| e.is_cache_write()).collect()
    }

    /// WRITEs without FUSE_WRITE_CACHE (write-through or direct).
    pub fn plain_writes(&self) -> Vec<&Event> {
        self.0
            .iter()
            .filter(|e| e.is_req("WRITE") && !e.is_cache_write())
            .collect()
    }

    /// Seq of the reply to `req` (uniques can be reused, so the first one after it).
    pub fn reply_seq(&self, req: &Event) -> Option<u64> {
        self.0
            .iter()
            .find(|e| e.ev == "reply" && e.unique == req.unique && e.seq > req.seq)
            .map(|e| e.seq)
    }

    pub fn reply(&self, req: &Event) -> Option<&Event> {
        self.0
            .iter()
            .find(|e| e.ev == "reply" && e.unique == req.unique && e.seq > req.seq)
    }

    /// First mark of this kind/actor/syscall.
    pub fn mark(&self, kind: &str, actor: &str, syscall: &str) -> Option<&Event> {
        self.mark_after(kind, actor, syscall, 0)
    }

    pub fn mark_after(&self, kind: &str, actor: &str, syscall: &str, after: u64) -> Option<&Event> {
        self.0.iter().find(|e| {
            e.ev == "mark"
                && e.seq > after
                && e.kind.as_deref() == Some(kind)
                && e.actor.as_deref() == Some(actor)
                && e.syscall.as_deref() == Some(syscall)
        })
    }

    /// Seq of a call/ret mark, or an error naming it.
    pub fn mark_seq(&self, kind: &str, actor: &str, syscall: &str) -> Result<u64, Fail> {
        self.mark(kind, actor, syscall)
            .map(|e| e.seq)
            .ok_or_else(|| format!("trace: no mark {kind} {actor} {syscall}").into())
    }

    /// Requests of `op` strictly between two seqs.
    pub fn reqs_between(&self, op: &str, a: u64, b: u64) -> Vec<&Event> {
        self.0
            .iter()
            .filter(|e| e.is_req(op) && e.seq > a && e.seq < b)
            .collect()
    }

    /// Excerpt for failure messages.
    pub fn brief(e: &Event) -> String {
        let mut s = format!("#{} {} {}", e.seq, e.ev, e.op.as_deref().unwrap_or(""));
        if let Some(u) = e.unique {
            s += &format!(" u={u}");
        }
        if let (Some(o), Some(z)) = (e.offset, e.size) {
            s += &format!(" off={o} size={z}");
        } else if let Some(z) = e.size {
            s += &format!(" size={z}");
        }
        if let Some(t) = &e.page_tags {
            s += &format!(" tags={t}");
        }
        if let Some(w) = &e.write_flag_names {
            s += &format!(" {w:?}");
        }
        if let Some(t) = &e.text {
            s += &format!(" {t}");
        }
        s
    }
}
