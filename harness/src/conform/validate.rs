//! Structural validation of a recorded trace, before it is mapped onto the
//! model: is this a trace the recording server could have written?
//!
//! A trace that fails here is bad input (one line naming the event, exit 2),
//! never "conforms": the search would otherwise check a sequence that no
//! kernel and no server produced. Three passes, so a trace is refused for
//! its first problem in this order (docs/conformance.md §0, "What a trace
//! must be"):
//!
//! 1. the header: the first line, with a known `schema`
//!    ([`SCHEMA_VERSION`]), a `kernel` and an object `config` holding
//!    every mount fact the mapping reads (`MOUNT_FACTS`), never guessed;
//! 2. events and calls: every `ev` is a known kind ([`EVENT_KINDS`]), there
//!    is one header, `seq` strictly increases, every mark `kind` is `call`,
//!    `ret` or `note`; per actor one pending call at a time, each `ret`
//!    names the pending syscall and carries its return value, and no call
//!    is pending at the end of the trace;
//! 3. requests and replies: every request has a fresh `unique`, an `op`, a
//!    `nodeid` and a `pid`; every request except FORGET gets exactly one
//!    reply, for the same `op`, after it was read;
//!    - a WRITE reply's `written` is the request's size (more: the kernel
//!      refuses the reply, bad; less: a short write, which the model's
//!      server never does, not modelled); a READ reply's `bytes` is at most
//!      the request's size, with one page tag per 4 KiB returned;
//!    - nodeids: every request names the root or a nodeid a LOOKUP or
//!      CREATE reply returned; a request on the file itself not the root;
//!      requests on more than one file are not modelled (one inode) by
//!      [`validate`]; [`validate_connection`] leaves them to the split
//!      by file (project.rs);
//!    - pids: a page-cache WRITE (FUSE_WRITE_CACHE), RELEASE and FORGET
//!      carry pid 0 (sent without credentials); every request the model ties to a
//!      syscall (non-CACHE WRITE, READ, SETATTR with a size, FSYNC, FLUSH,
//!      OPEN, CREATE) carries the calling thread's pid (fs/fuse/dev.c:
//!      `fuse_simple_request` → `fuse_force_creds` unless `args->nocreds`:
//!      `pid_nr_ns(task_pid(current))`): the pid of a pending call, learned
//!      from the first request read while it is the only pending call (each
//!      call may run on its own thread), or, after every call returned (the
//!      runner's cleanup close), the pid of an earlier call. From pid 0 (a
//!      kernel thread) it is not modelled.
use std::collections::{BTreeSet, HashMap};

use crate::trace::{Event, SCHEMA_VERSION};

/// The event kinds of trace schema 1 (trace.rs).
pub const EVENT_KINDS: &[&str] = &[
    "header",
    "init",
    "req",
    "reply",
    "hold",
    "release",
    "mark",
    "stall",
    "stall_end",
    "exit",
    "server_truncate",
];

/// Mark kinds (trace.rs, `Event::mark`).
pub const MARK_KINDS: &[&str] = &["call", "ret", "note"];

/// Requests the kernel sends without waiting for a reply.
const NO_REPLY: &[&str] = &["FORGET", "BATCH_FORGET"];

/// Requests the kernel sends without the caller's credentials, so with pid
/// 0: RELEASE and RELEASEDIR (`fuse_prepare_release` sets
/// `args.nocreds`; every RELEASE recorded on 6.18.44 has pid 0) and the
/// forgets (`fuse_read_single_forget` / `fuse_read_batch_forget` build a
/// header with no pid), and FUSE_INTERRUPT (`fuse_read_interrupt`: a
/// header with only its unique and opcode).
const NO_CREDS: &[&str] = &[
    "RELEASE",
    "RELEASEDIR",
    "FORGET",
    "BATCH_FORGET",
    "INTERRUPT",
];

/// Requests about the file itself (not a name in a directory).
const FILE_OPS: &[&str] = &[
    "OPEN",
    "READ",
    "WRITE",
    "SETATTR",
    "FSYNC",
    "FLUSH",
    "RELEASE",
    "GETXATTR",
    "FALLOCATE",
];

/// FUSE_ROOT_ID.
const ROOT: u64 = 1;

/// Why a trace is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// Not a trace the recording server could have written: bad input.
    Bad(String),
    /// Well formed, but outside what the model expresses.
    NotModelled(String),
}

fn bad<T>(e: &Event, what: impl std::fmt::Display) -> Result<T, Invalid> {
    Err(Invalid::Bad(format!("bad trace: #{} {what}", e.seq)))
}

struct Req {
    op: String,
    seq: u64,
    size: Option<u64>,
    replied: Option<u64>,
}

struct Call {
    syscall: String,
    seq: u64,
    /// The calling thread's pid, once a request shows it. Each call may run
    /// on its own thread: the pid belongs to the call, not to the actor.
    pid: Option<u32>,
    /// A pread's `len=`.
    len: Option<u64>,
}

/// Whether the model matches this request against a syscall's task, so it
/// must carry the caller's pid.
fn from_syscall(e: &Event) -> bool {
    match e.op.as_deref() {
        Some("WRITE") => !e.is_cache_write(),
        Some("SETATTR") => e.size.is_some(),
        Some("READ" | "FSYNC" | "FLUSH" | "OPEN" | "CREATE") => true,
        _ => false,
    }
}

/// Requests that are always sent in the caller's context (their pid names
/// the calling thread): used to learn each actor's pid.
fn in_caller_context(e: &Event) -> bool {
    from_syscall(e) || matches!(e.op.as_deref(), Some("LOOKUP" | "GETXATTR"))
}

/// Validate a parsed trace (see the module doc): the header, then event
/// kinds and calls and returns, then requests and replies, so that a trace
/// is refused for its first problem in that order.
pub fn validate(events: &[Event]) -> Result<(), Invalid> {
    check_header(events)?;
    check_marks(events)?;
    check_requests(events, true)
}

/// [`validate`] without the one-inode rule: a trace of several files on
/// one connection, before it is split by file (project.rs).
pub fn validate_connection(events: &[Event]) -> Result<(), Invalid> {
    check_header(events)?;
    check_marks(events)?;
    check_requests(events, false)
}

fn check_header(events: &[Event]) -> Result<(), Invalid> {
    let b = |m: String| Err(Invalid::Bad(format!("bad trace: {m}")));
    let Some(hdr) = events.first() else {
        return b("empty".into());
    };
    if hdr.ev != "header" {
        return b(format!(
            "the first line is a {:?} event, not the header",
            hdr.ev
        ));
    }
    match hdr.schema {
        Some(SCHEMA_VERSION) => {}
        Some(s) => {
            return b(format!(
                "header schema {s} is unknown (this tool reads schema {SCHEMA_VERSION})"
            ))
        }
        None => return b("the header has no schema".into()),
    }
    if hdr.kernel.as_deref().unwrap_or("").is_empty() {
        return b("the header names no kernel".into());
    }
    // The mount facts the mapping reads: refused when missing, never
    // guessed.
    let Some(conf) = hdr.config.as_ref() else {
        return b("the header has no config (the mount's settings)".into());
    };
    let Some(conf) = conf.as_object() else {
        return b("the header's config is not an object".into());
    };
    let optional = OPTIONAL_FACTS.iter().filter(|(k, _)| conf.contains_key(*k));
    for (key, kind) in MOUNT_FACTS.iter().chain(optional) {
        let v = conf.get(*key);
        let ok = match kind {
            Fact::Flag => v.is_some_and(|v| v.is_boolean()),
            Fact::Count(lo, hi) => v
                .and_then(|v| v.as_u64())
                .is_some_and(|n| (*lo..=*hi).contains(&n)),
        };
        if ok {
            continue;
        }
        let what = match kind {
            Fact::Flag => "true or false".to_string(),
            Fact::Count(lo, hi) => format!("a number {lo}..={hi}"),
        };
        return b(match v {
            None => format!("the header's config has no {key} (a mount setting the mapping needs)"),
            Some(v) => format!("the header's config {key} is {v}, not {what}"),
        });
    }
    Ok(())
}

/// The kind of a mount fact in the header's `config`.
enum Fact {
    Flag,
    /// A whole number in this range (the recorder's option range).
    Count(u64, u64),
}

/// The mount facts every trace header carries (harness/src/server/config.rs
/// writes them all): the mapping reads each, so a header without one is
/// refused rather than guessed. `parallel_dio` and `async_dio` are
/// optional: recorders before them never set FOPEN_PARALLEL_DIRECT_WRITES
/// or negotiated FUSE_ASYNC_DIO.
const MOUNT_FACTS: &[(&str, Fact)] = &[
    ("writeback_cache", Fact::Flag),
    ("keep_cache", Fact::Flag),
    ("atomic_o_trunc", Fact::Flag),
    ("direct_io_allow_mmap", Fact::Flag),
    ("max_write", Fact::Count(4096, 1 << 24)),
    ("max_background", Fact::Count(1, u16::MAX as u64)),
    ("congestion_threshold", Fact::Count(1, u16::MAX as u64)),
];

/// Mount facts a header may omit (read as false then), but which, when
/// present, must have their type: a `"true"` or `1` is not read as false.
/// `unit_tags`: the recorder writes 1 KiB unit tags where page tags do
/// not give them (trace::unit_tags); without it an unaligned trace's
/// units are not known. `segs`: `wbspec record` writes every payload's
/// segment digests (trace::segs, record/segs.rs).
const OPTIONAL_FACTS: &[(&str, Fact)] = &[
    ("parallel_dio", Fact::Flag),
    ("unit_tags", Fact::Flag),
    ("segs", Fact::Flag),
    ("async_dio", Fact::Flag),
];

/// Event kinds, `seq` order, and matched calls and returns.
fn check_marks(events: &[Event]) -> Result<(), Invalid> {
    let mut last_seq = 0u64;
    let mut pending: HashMap<&str, Call> = HashMap::new();
    let mut inits = 0;
    let mut exited = false;
    for e in &events[1..] {
        if !EVENT_KINDS.contains(&e.ev.as_str()) {
            return bad(e, format_args!("unknown event kind {:?}", e.ev));
        }
        if e.ev == "header" {
            return bad(e, "a second header");
        }
        // one INIT per connection; the server's exit is its last event
        if exited {
            return bad(e, "an event after the server's exit");
        }
        exited = e.ev == "exit";
        if e.ev == "init" {
            inits += 1;
            if inits > 1 {
                return bad(e, "a second INIT");
            }
        }
        if e.seq <= last_seq {
            return bad(
                e,
                format_args!("seq {} does not follow seq {last_seq}", e.seq),
            );
        }
        last_seq = e.seq;
        if e.ev != "mark" {
            continue;
        }
        let kind = e.kind.as_deref().unwrap_or("");
        if !MARK_KINDS.contains(&kind) {
            return bad(e, format_args!("unknown mark kind {kind:?}"));
        }
        if kind == "note" {
            continue;
        }
        let (Some(actor), Some(sc)) = (e.actor.as_deref(), e.syscall.as_deref()) else {
            return bad(e, format_args!("{kind} mark without actor or syscall"));
        };
        if actor.is_empty() || sc.is_empty() {
            return bad(
                e,
                format_args!("{kind} mark with an empty actor or syscall"),
            );
        }
        if kind == "call" {
            if let Some(p) = pending.get(actor) {
                return bad(
                    e,
                    format_args!(
                        "{actor} calls {sc} while its {} (#{}) has not returned",
                        p.syscall, p.seq
                    ),
                );
            }
            pending.insert(
                actor,
                Call {
                    syscall: sc.to_string(),
                    seq: e.seq,
                    pid: None,
                    len: (sc == "pread")
                        .then(|| {
                            super::scan::num(super::scan::arg(
                                e.args.as_deref().unwrap_or(""),
                                "len",
                            ))
                        })
                        .flatten(),
                },
            );
        } else {
            let Some(p) = pending.remove(actor) else {
                return bad(e, format_args!("{actor} returns from {sc} it never called"));
            };
            if p.syscall != sc {
                return bad(
                    e,
                    format_args!(
                        "{actor} returns from {sc} but called {} (#{})",
                        p.syscall, p.seq
                    ),
                );
            }
            let Some(ret) = e.ret else {
                return bad(e, format_args!("{actor}'s {sc} returns no value"));
            };
            // a 0-byte pread returns 0 (or fails)
            if p.len == Some(0) && ret > 0 {
                return bad(
                    e,
                    format_args!("{actor}'s 0-byte pread (#{}) returns {ret}", p.seq),
                );
            }
            // what a read returned, one page tag per 4 KiB (ctx.rs
            // `read_ret`; a mapped read without them is refused in scan.rs)
            if let Some(t) = e.page_tags.as_deref().filter(|_| sc == "pread") {
                let tags = t.chars().count() as u64;
                if tags != (ret.max(0) as u64).div_ceil(4096) {
                    return bad(
                        e,
                        format_args!(
                            "{actor}'s pread returns {ret} bytes but {tags} page tags (data=)"
                        ),
                    );
                }
            }
        }
    }
    let mut open: Vec<(&&str, &Call)> = pending.iter().collect();
    open.sort_by_key(|(_, c)| c.seq);
    if let Some((a, c)) = open.first() {
        return Err(Invalid::Bad(format!(
            "bad trace: {a}'s {} (call #{}) never returns",
            c.syscall, c.seq
        )));
    }
    Ok(())
}

/// Requests and replies: one reply each, byte counts, nodeids and pids.
fn check_requests(events: &[Event], one_inode: bool) -> Result<(), Invalid> {
    let mut reqs: HashMap<u64, Req> = HashMap::new();
    let mut pending: HashMap<&str, Call> = HashMap::new();
    // nodeids the kernel learned from LOOKUP / CREATE replies, and the file
    // nodeids requests were sent for
    let mut known_nodes: BTreeSet<u64> = BTreeSet::from([ROOT]);
    let mut held: BTreeSet<u64> = BTreeSet::new();
    let mut file_nodes: BTreeSet<u64> = BTreeSet::new();
    // pids of calls seen so far (the runner's cleanup closes from one of them)
    let mut call_pids: BTreeSet<u32> = BTreeSet::new();
    // the first reason the trace is outside the model (reported only if it
    // is otherwise well formed)
    let mut not_modelled: Option<String> = None;
    // a program `wbspec record` traced has mapped a file of the mount:
    // from then on a READ may be a fault's, sent by a load or store of a
    // thread with no call pending (conform/envmap.rs), so READs neither
    // name a pending call's pid nor must come from one
    let record = events[0].scenario.as_deref() == Some("record");
    let mut mapped = false;
    for e in &events[1..] {
        let fault = mapped && e.op.as_deref() == Some("READ");
        match e.ev.as_str() {
            "mark" => match (e.kind.as_deref(), e.actor.as_deref()) {
                (Some("call"), Some(a)) => {
                    mapped |= record && e.syscall.as_deref() == Some("mmap");
                    pending.insert(
                        a,
                        Call {
                            syscall: e.syscall.clone().unwrap_or_default(),
                            seq: e.seq,
                            pid: None,
                            len: None,
                        },
                    );
                }
                (Some("ret"), Some(a)) => {
                    pending.remove(a);
                }
                _ => {}
            },
            "req" => {
                let (Some(u), Some(op)) = (e.unique, e.op.as_deref()) else {
                    return bad(e, "request without unique or op");
                };
                let (Some(node), Some(pid)) = (e.nodeid, e.pid) else {
                    return bad(e, format_args!("{op} u={u} without nodeid or pid"));
                };
                if let Some(r) = reqs.get(&u) {
                    return bad(
                        e,
                        format_args!("{op} reuses unique {u} of {} #{}", r.op, r.seq),
                    );
                }
                // a READ or WRITE carries a range the kernel can send: some
                // bytes (never 0), ending below MAX_LFS_FILESIZE
                if matches!(op, "READ" | "WRITE") {
                    let (Some(off), Some(size)) = (e.offset, e.size) else {
                        return bad(e, format_args!("{op} u={u} without offset or size"));
                    };
                    if size == 0 {
                        return bad(e, format_args!("{op} u={u} of 0 bytes"));
                    }
                    if off
                        .checked_add(size)
                        .is_none_or(|end| end > i64::MAX as u64)
                    {
                        return bad(
                            e,
                            format_args!("{op} u={u} ends past the largest file offset"),
                        );
                    }
                }
                // FUSE_INTERRUPT (fuse_read_interrupt): its unique is the
                // interrupted request's | FUSE_INT_REQ_BIT, the header has
                // no nodeid and no pid, and the request it names was read
                // and is not answered yet (queue_interrupt runs only for a
                // request the daemon has read: FR_SENT)
                if op == "INTERRUPT" {
                    let Some(target) = e.interrupts else {
                        return bad(
                            e,
                            format_args!("INTERRUPT u={u} without the unique it interrupts"),
                        );
                    };
                    if u != target | 1 || node != 0 {
                        return bad(
                            e,
                            format_args!("INTERRUPT u={u} nodeid {node} for unique {target}: the kernel sends unique {} with nodeid 0", target | 1),
                        );
                    }
                    match reqs.get(&target) {
                        Some(r) if r.replied.is_none() => {}
                        _ => {
                            return bad(
                                e,
                                format_args!("INTERRUPT u={u} for unique {target}, which is not a request read and unanswered"),
                            )
                        }
                    }
                } else if !known_nodes.contains(&node) && !FILE_OPS.contains(&op) {
                    // nodeids: the root, or one a reply returned
                    return bad(
                        e,
                        format_args!(
                            "{op} u={u} for nodeid {node}, which no LOOKUP or CREATE reply returned"
                        ),
                    );
                }
                if matches!(op, "LOOKUP" | "CREATE") {
                    if !known_nodes.contains(&node) {
                        return bad(
                            e,
                            format_args!(
                                "{op} in directory nodeid {node}, which no reply returned"
                            ),
                        );
                    }
                } else if FILE_OPS.contains(&op) {
                    // GETXATTR also asks the root directory (`ls -l`'s
                    // ACL and security label look-ups, under `wbspec
                    // record`): a request about a directory, not a file
                    if op == "GETXATTR" && node == ROOT {
                        // (filtered like every GETXATTR, conform/mod.rs)
                    } else if !known_nodes.contains(&node) || node == ROOT {
                        return bad(
                            e,
                            format_args!(
                                "{op} u={u} for nodeid {node}, which no LOOKUP or CREATE reply returned"
                            ),
                        );
                    } else {
                        file_nodes.insert(node);
                    }
                }
                // pids
                if e.is_cache_write() && pid != 0 {
                    return bad(
                        e,
                        format_args!("page-cache WRITE u={u} from pid {pid}: writeback sends it without credentials (pid 0)"),
                    );
                }
                if NO_CREDS.contains(&op) && pid != 0 {
                    return bad(
                        e,
                        format_args!("{op} u={u} from pid {pid}: the kernel sends it without credentials (pid 0)"),
                    );
                }
                // learn a pending call's pid: from any request sent in the
                // caller's context while it is the only pending call, or from
                // a request only a syscall sends whose pid no other pending
                // call has, while it is the only one whose pid is unknown
                if pid != 0 && in_caller_context(e) && !fault {
                    let known = pending.values().any(|c| c.pid == Some(pid));
                    let unknown: Vec<&str> = pending
                        .iter()
                        .filter(|(_, c)| c.pid.is_none())
                        .map(|(a, _)| *a)
                        .collect();
                    if !known
                        && unknown.len() == 1
                        && (pending.len() == 1 || (from_syscall(e) && !call_pids.contains(&pid)))
                    {
                        if let Some(c) = pending.get_mut(unknown[0]) {
                            c.pid = Some(pid);
                            call_pids.insert(pid);
                        }
                    }
                }
                if from_syscall(e) && !fault {
                    if pid == 0 {
                        // a kernel thread: no syscall of the model sends it
                        if not_modelled.is_none() {
                            not_modelled = Some(format!("#{} {op} u={u} from pid 0 (a kernel thread): the model sends it from a syscall only", e.seq));
                        }
                    }
                    let ok = pid == 0
                        || if pending.is_empty() {
                            call_pids.is_empty() || call_pids.contains(&pid)
                        } else {
                            pending.values().any(|c| c.pid.is_none_or(|p| p == pid))
                        };
                    if !ok {
                        let mut who: Vec<String> = if pending.is_empty() {
                            call_pids.iter().map(|p| p.to_string()).collect()
                        } else {
                            pending
                                .iter()
                                .filter_map(|(a, c)| {
                                    c.pid.map(|p| format!("{a} {} {p}", c.syscall))
                                })
                                .collect()
                        };
                        who.sort();
                        return bad(
                            e,
                            format_args!(
                                "{op} u={u} from pid {pid}, which is not the pid of a pending call ({})",
                                who.join(", ")
                            ),
                        );
                    }
                }
                if NO_REPLY.contains(&op) {
                    reqs.insert(
                        u,
                        Req {
                            op: op.into(),
                            seq: e.seq,
                            size: None,
                            replied: Some(e.seq),
                        },
                    );
                } else {
                    reqs.insert(
                        u,
                        Req {
                            op: op.into(),
                            seq: e.seq,
                            size: e.size,
                            replied: None,
                        },
                    );
                }
            }
            "reply" => {
                let Some(u) = e.unique else {
                    return bad(e, "reply without unique");
                };
                let Some(r) = reqs.get_mut(&u) else {
                    return bad(e, format_args!("reply to unique {u}, which was never read"));
                };
                if let Some(first) = r.replied {
                    return bad(
                        e,
                        format_args!("a second reply to {} u={u} (the first is #{first})", r.op),
                    );
                }
                if let Some(op) = e.op.as_deref().filter(|o| *o != r.op) {
                    return bad(
                        e,
                        format_args!("{op} reply to unique {u}, which is a {} request", r.op),
                    );
                }
                r.replied = Some(e.seq);
                let res = e.result.as_ref();
                if res.is_some_and(|v| !v.is_object()) {
                    return bad(
                        e,
                        format_args!("{} reply u={u} whose result is not an object", r.op),
                    );
                }
                if res.is_some_and(|v| v.get("errno").is_some()) {
                    continue;
                }
                let get = |k: &str| res.and_then(|v| v.get(k));
                match r.op.as_str() {
                    "WRITE" => {
                        let size = r.size.unwrap_or(0);
                        let Some(w) = get("written").and_then(|w| w.as_u64()) else {
                            return bad(
                                e,
                                format_args!("WRITE reply u={u} without a byte count (written)"),
                            );
                        };
                        if w > size {
                            return bad(
                                e,
                                format_args!(
                                    "WRITE reply u={u} writes {w} bytes of a {size}-byte request"
                                ),
                            );
                        }
                        if w < size && not_modelled.is_none() {
                            not_modelled = Some(format!("#{} WRITE reply u={u} writes {w} of {size} bytes: a short write, which the model's server never does", e.seq));
                        }
                    }
                    "READ" => {
                        let size = r.size.unwrap_or(0);
                        let Some(b) = get("bytes").and_then(|b| b.as_u64()) else {
                            return bad(
                                e,
                                format_args!("READ reply u={u} without a byte count (bytes)"),
                            );
                        };
                        if b > size {
                            return bad(
                                e,
                                format_args!(
                                    "READ reply u={u} returns {b} bytes of a {size}-byte request"
                                ),
                            );
                        }
                        if let Some(t) = get("page_tags") {
                            let Some(t) = t.as_str() else {
                                return bad(
                                    e,
                                    format_args!(
                                        "READ reply u={u} whose page_tags is not a string"
                                    ),
                                );
                            };
                            if t.chars().count() as u64 != b.div_ceil(4096) {
                                return bad(
                                    e,
                                    format_args!(
                                        "READ reply u={u} returns {b} bytes but {} page tags",
                                        t.chars().count()
                                    ),
                                );
                            }
                        }
                    }
                    "LOOKUP" | "CREATE" => match get("ino").map(|i| i.as_u64()) {
                        Some(Some(ino)) if ino != ROOT && ino != 0 => {
                            known_nodes.insert(ino);
                        }
                        _ => {
                            return bad(e, format_args!("{} reply u={u} without a valid ino", r.op))
                        }
                    },
                    _ => {}
                }
            }
            "hold" | "release" => {
                if let Some(u) = e.unique {
                    if !reqs.contains_key(&u) {
                        return bad(
                            e,
                            format_args!("{} of unique {u}, which was never read", e.ev),
                        );
                    }
                    // the server releases only what it held, once
                    if e.ev == "hold" && !held.insert(u) {
                        return bad(e, format_args!("a second hold of unique {u}"));
                    }
                    if e.ev == "release" && !held.remove(&u) {
                        return bad(e, format_args!("release of unique {u}, which is not held"));
                    }
                }
            }
            _ => {}
        }
    }
    let mut unreplied: Vec<(&u64, &Req)> =
        reqs.iter().filter(|(_, r)| r.replied.is_none()).collect();
    unreplied.sort_by_key(|(_, r)| r.seq);
    if let Some((u, r)) = unreplied.first() {
        return Err(Invalid::Bad(format!(
            "bad trace: #{} {} u={u} never gets a reply",
            r.seq, r.op
        )));
    }
    if one_inode && file_nodes.len() > 1 {
        return Err(Invalid::NotModelled(format!(
            "requests for {} files (nodeids {file_nodes:?}): the model has one inode",
            file_nodes.len()
        )));
    }
    if let Some(s) = not_modelled {
        return Err(Invalid::NotModelled(s));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_trace::{not_modelled, tr, OPEN};
    use super::super::translate;
    use serde_json::json;

    /// A pending call's pid is learned also while another call is pending
    /// (a request only a syscall sends, from a pid no call had): a third
    /// pid is then no pending call's, across both calls.
    #[test]
    fn pids_are_learned_among_several_pending_calls() {
        let run = |third: &str| {
            let mut l: Vec<String> = OPEN.iter().map(|x| x.to_string()).collect();
            l.extend(
                [
                    "call T0 fsync fd=6",
                    "req 8 FSYNC",
                    "call T1 ftruncate fd=6 0",
                    "req 10 SETATTR size=0 pid=9",
                    &format!("req 12 FSYNC pid={third}"),
                    "reply 8 FSYNC",
                    "reply 10 SETATTR",
                    "reply 12 FSYNC",
                    "ret T0 fsync 0",
                    "ret T1 ftruncate 0",
                ]
                .map(String::from),
            );
            let l: Vec<&str> = l.iter().map(String::as_str).collect();
            super::validate(&tr(json!({}), &l))
        };
        assert_eq!(run("9"), Ok(()));
        assert_eq!(run("7"), Ok(()));
        match run("11") {
            Err(super::Invalid::Bad(e)) => assert!(
                e.contains("FSYNC u=12 from pid 11, which is not the pid of a pending call"),
                "{e}"
            ),
            other => panic!("{other:?}"),
        }
    }

    /// Structural rules (validate.rs) that the altered fixtures do not cover.
    #[test]
    fn structurally_invalid_traces_are_input_errors() {
        let ok: Vec<&str> = OPEN
            .iter()
            .copied()
            .chain(["call T0 pwrite fd=6 off=0 A", "ret T0 pwrite 4096"])
            .collect();
        assert!(translate(&tr(json!({}), &ok), None).is_ok());
        let bad = |extra: &[&str], needle: &str| {
            let l: Vec<&str> = ok.iter().chain(extra).copied().collect();
            let e = translate(&tr(json!({}), &l), None).unwrap_err();
            assert!(
                e.starts_with("bad trace: ") && e.contains(needle),
                "{e} (expected {needle})"
            );
        };
        bad(
            &["reply 40 FSYNC"],
            "reply to unique 40, which was never read",
        );
        bad(
            &[
                "call T0 fsync fd=6",
                "req 4 FSYNC",
                "reply 4 FSYNC",
                "ret T0 fsync 0",
            ],
            "FSYNC reuses unique 4 of CREATE",
        );
        bad(
            &[
                "call T0 fsync fd=6",
                "req 10 FSYNC",
                "reply 10 FLUSH",
                "ret T0 fsync 0",
            ],
            "FLUSH reply to unique 10, which is a FSYNC request",
        );
        bad(&["ret T0 fsync 0"], "T0 returns from fsync it never called");
        bad(
            &["call T0 fsync fd=6", "call T0 close fd=6"],
            "T0 calls close while its fsync",
        );
        bad(
            &["call T0 fsync fd=6", "ret T0 close 0"],
            "T0 returns from close but called fsync",
        );
        bad(
            &[
                "call T0 sync_file_range fd=6 0 0 WRITE",
                "ret T0 sync_file_range 0",
                "req 10 WRITE 0 4096 A cache pid=7",
                "reply 10 WRITE",
            ],
            "page-cache WRITE u=10 from pid 7",
        );
        bad(
            &["call T0 fsync fd=6", "req 10 FSYNC", "ret T0 fsync 0"],
            "FSYNC u=10 never gets a reply",
        );
        // READ replies: no more bytes than asked, one tag per 4 KiB
        let mut l = ok.clone();
        l.extend([
            "call T0 open f 0x4002",
            "req 10 OPEN",
            "reply 10 OPEN FOPEN_DIRECT_IO",
            "ret T0 open 7",
            "call T1 pread fd=7 off=0 len=4096",
            "req 12 READ 0 4096",
            "reply 12 READ tags=AB",
            "ret T1 pread 4096",
        ]);
        let e = translate(&tr(json!({}), &l), None).unwrap_err();
        assert!(
            e.contains("returns 8192 bytes of a 4096-byte request"),
            "{e}"
        );
        // a ret mark without its value; an event without a known kind; seq
        let mut ev = tr(json!({}), &ok);
        ev.last_mut().unwrap().ret = None;
        let e = translate(&ev, None).unwrap_err();
        assert!(e.contains("T0's pwrite returns no value"), "{e}");
        let mut ev = tr(json!({}), &ok);
        ev[3].seq = ev[2].seq;
        assert!(translate(&ev, None)
            .unwrap_err()
            .contains("does not follow"));
        let mut ev = tr(json!({}), &ok);
        ev[1].kind = Some("called".into());
        assert!(translate(&ev, None)
            .unwrap_err()
            .contains("unknown mark kind \"called\""));
        let mut ev = tr(json!({}), &ok);
        ev[0].kernel = None;
        assert!(translate(&ev, None).unwrap_err().contains("no kernel"));
        // requests on a second file are not modelled, on a nodeid no reply
        // returned are bad
        let mut l = ok.clone();
        l.extend([
            "call T1 fsync fd=6",
            "req 8 FSYNC",
            "reply 8 FSYNC",
            "req 10 LOOKUP",
            "reply 10 LOOKUP",
            "req 12 FSYNC",
            "reply 12 FSYNC",
            "ret T1 fsync 0",
        ]);
        let mut ev = tr(json!({}), &l);
        for e in ev.iter_mut() {
            if e.ev == "reply" && e.unique == Some(10) {
                e.result = Some(json!({"ino": 3}));
            }
            if e.ev == "req" && e.unique == Some(12) {
                e.nodeid = Some(3);
            }
        }
        assert!(not_modelled(&ev).contains("requests for 2 files"));
        // a GETXATTR of the root directory is neither bad nor a second
        // file; a FSYNC of it is bad
        let mut root = tr(json!({}), &l);
        root.retain(|e| e.unique != Some(10));
        for e in root.iter_mut() {
            if e.ev == "req" && e.unique == Some(12) {
                e.op = Some("GETXATTR".into());
                e.nodeid = Some(1);
            }
            if e.ev == "reply" && e.unique == Some(12) {
                e.op = Some("GETXATTR".into());
            }
        }
        let t = translate(&root, None);
        assert!(t.is_ok(), "{:?}", t.err());
        for e in root.iter_mut().filter(|e| e.unique == Some(12)) {
            e.op = Some("FSYNC".into());
        }
        let e = translate(&root, None).unwrap_err();
        assert!(e.contains("FSYNC u=12 for nodeid 1"), "{e}");
        ev.retain(|e| e.unique != Some(10));
        let e = translate(&ev, None).unwrap_err();
        assert!(
            e.contains("FSYNC u=12 for nodeid 3, which no LOOKUP"),
            "{e}"
        );
    }
}
