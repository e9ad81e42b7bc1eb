//! What the metadata filter rules of the event scan (scan.rs;
//! FILTERED_SYSCALLS in mod.rs) need to know about the whole trace: what
//! each call returned (a rule that holds only for a failed call), and
//! whether the recording server negotiated POSIX locks.
use std::collections::HashMap;

use crate::trace::Event;

/// What each syscall returned (value, errno), by the position of its
/// call mark.
pub(super) fn returns_by_call(events: &[Event]) -> HashMap<usize, (i64, i64)> {
    let mut open: HashMap<&str, usize> = HashMap::new();
    let mut out = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        let (Some(kind), Some(a)) = (e.kind.as_deref(), e.actor.as_deref()) else {
            continue;
        };
        match kind {
            "call" if e.ev == "mark" => {
                open.insert(a, i);
            }
            "ret" if e.ev == "mark" => {
                if let (Some(c), Some(r)) = (open.remove(a), e.ret) {
                    out.insert(c, (r, e.errno.unwrap_or(0) as i64));
                }
            }
            _ => {}
        }
    }
    out
}

/// The recording server did not ask for FUSE_POSIX_LOCKS: its INIT
/// reply's flags are fuser's defaults (FUSE_ASYNC_READ, FUSE_BIG_WRITES,
/// FUSE_MAX_PAGES) and the `requested_extra` the init event logs
/// (harness/src/server/ops.rs), so process_init_reply sets fc->no_lock.
/// False when the trace has no such init event.
pub(super) fn posix_locks_off(events: &[Event]) -> bool {
    events.iter().any(|e| {
        e.ev == "init"
            && e.result
                .as_ref()
                .and_then(|r| r["requested_extra"].as_str())
                .is_some_and(|f| !f.contains("FUSE_POSIX_LOCKS"))
    })
}

/// The seq from which `fc->no_fallocate` is surely set: the first reply
/// that answered a FALLOCATE with ENOSYS makes the fuse_file_fallocate
/// that sent it set the flag before it returns, so once every fallocate
/// called before that reply has returned (its ret mark), a later one
/// returns -EOPNOTSUPP before it takes the inode lock (fs/fuse/file.c).
/// None: no such reply, or a fallocate of then never returns.
pub(super) fn no_fallocate_from(events: &[Event]) -> Option<u64> {
    let reply = events
        .iter()
        .find(|e| {
            e.ev == "reply"
                && e.op.as_deref() == Some("FALLOCATE")
                && e.result
                    .as_ref()
                    .and_then(|r| r["errno"].as_i64())
                    .is_some_and(|n| n == libc::ENOSYS as i64)
        })?
        .seq;
    let mut open: HashMap<&str, u64> = HashMap::new();
    let mut from = reply;
    // one of them returned EOPNOTSUPP: the reply reached it (after an
    // abort the kernel drops replies, and the flag stays clear)
    let mut reached = false;
    for e in events
        .iter()
        .filter(|e| e.ev == "mark" && e.syscall.as_deref() == Some("fallocate"))
    {
        let (Some(kind), Some(a)) = (e.kind.as_deref(), e.actor.as_deref()) else {
            continue;
        };
        match kind {
            "call" if e.seq < reply => {
                open.insert(a, e.seq);
            }
            "ret" if open.remove(a).is_some() => {
                from = from.max(e.seq);
                reached |= e.errno == Some(libc::EOPNOTSUPP);
            }
            _ => {}
        }
    }
    (open.is_empty() && reached).then_some(from)
}
