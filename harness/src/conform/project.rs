//! Several files: a trace that touches several files is split into one
//! trace per file (its projection), each checked against the one-inode
//! model as a trace of one file is; the verdicts are combined. The split
//! is refused (not modelled) when the files' shared connection could make
//! the kernel decide differently from the one-inode model
//! (docs/conformance.md, "Several files", has the argument).
//!
//! - Requests go to a file by `nodeid`; a LOOKUP, CREATE, UNLINK... in
//!   the root by its `name`. A name is tied to a nodeid by the LOOKUP or
//!   CREATE reply's `ino` (harness/src/server/ops.rs), or, for a request
//!   without a name, by the one open() pending when it is read.
//! - Syscall marks go to a file by a `path=REL` key when they have one;
//!   otherwise `open` and `truncate` by their path word, fd-based ones by
//!   the fd their open returned, `store`, `munmap` and `msync` by the one
//!   file with a live shared mapping; `syncfs` acts on every file.
//! - Everything else (the header, INIT, notes, holds, requests on the
//!   root such as STATFS) goes to every projection and keeps its filter
//!   rule. A request of another file, or a LOOKUP of a name no syscall
//!   names, becomes a placeholder request `(not this file)` with its
//!   `unique` (so a gap in the uniques is still found), filtered.
use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::json;

use super::scan::{arg, num};
use super::{Class, Conformance};
use crate::trace::Event;
use crate::trace_query::Tr;

/// The op of a placeholder request in a projection (`FILTERED_OPS`).
pub const NOT_THIS_FILE: &str = "(not this file)";

/// Where an event goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    /// Every projection, unchanged.
    All,
    /// The projection of this file (index into the file list); a
    /// placeholder in the others if it is a request or reply.
    File(usize),
    /// A placeholder in every projection (a LOOKUP of a name no syscall
    /// names: kept, its pid would teach a projection's pending call a pid).
    Nowhere,
}

/// One file's trace.
pub struct Projection {
    pub file: String,
    pub events: Vec<Event>,
}

/// How a trace splits.
pub enum Split {
    /// One file (or none): checked as it is.
    One,
    /// Several files, one projection each, in order of first appearance.
    Several(Vec<Projection>),
    /// Several files, but the projection is not sound or not possible.
    NotModelled(String),
}

/// The name a path stands for in the mount's root (the recording server
/// has no directories: mkdir is answered ENOSYS).
fn name_of(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// Syscalls that only look a name up (or fail to change it): on a name
/// no request ties to a nodeid and no other syscall names, they name no
/// file, and go to every projection, where their filter rules apply.
const LOOKS_ONLY: &[&str] = &[
    "stat",
    "newfstatat",
    "statx",
    "lstat",
    "access",
    "faccessat",
    "faccessat2",
    "mkdir",
    "mkdirat",
    "unlink",
    "unlinkat",
];

/// The path a call mark names, if it names one (`path=`, or the path
/// word of open and truncate).
fn mark_path(e: &Event) -> Option<String> {
    let args = e.args.as_deref().unwrap_or("");
    if let Some(p) = arg(args, "path") {
        // (`.`: the mount's root directory, e.g. a shell's stat of its
        // working directory under `wbspec record`: never a file; `project`
        // gives its marks to every projection, and its fds too)
        return Some(name_of(p));
    }
    match e.syscall.as_deref() {
        Some("open" | "truncate" | "stat") => args.split_whitespace().next().map(name_of),
        _ => None,
    }
}

/// The name a request carries (LOOKUP, CREATE, UNLINK, a server
/// truncate), written as a mark writes a path: percent-escaped
/// (`record::proc::word`), so a file whose name holds a space, such as
/// `x (deleted)`, is the same file in its requests and its marks.
fn req_name(e: &Event) -> Option<String> {
    e.name.as_deref().map(crate::record::proc::word)
}

fn is_call(e: &Event) -> bool {
    e.ev == "mark" && e.kind.as_deref() == Some("call")
}

fn is_ret(e: &Event) -> bool {
    e.ev == "mark" && e.kind.as_deref() == Some("ret")
}

/// The file a name stands for after `unlinks` successful unlinks of it:
/// each inode lifetime under the name is a file of its own (`f`, then
/// `f#2`, ...).
fn gen_label(name: &str, unlinks: usize) -> String {
    match unlinks {
        0 => name.to_string(),
        k => format!("{name}#{}", k + 1),
    }
}

/// The name of an UNLINK that succeeded, at its reply (`names`: the
/// UNLINK requests' names by unique).
fn unlinked_name(e: &Event, names: &HashMap<u64, String>) -> Option<String> {
    let ok = e.result.as_ref().is_some_and(|r| r["errno"].is_null());
    if e.ev != "reply" || e.op.as_deref() != Some("UNLINK") || !ok {
        return None;
    }
    names.get(&e.unique?).cloned()
}

/// The trace's files: nodeid -> (name, file label), from the LOOKUP and
/// CREATE replies and the opens pending at CREATE and OPEN. A name tied to
/// a new nodeid after a successful UNLINK of it is a new file.
fn nodes(events: &[Event]) -> Result<HashMap<u64, (String, String)>, String> {
    let mut node_name: HashMap<u64, (String, String)> = HashMap::new();
    let mut name_node: HashMap<String, (u64, usize)> = HashMap::new();
    let mut unlinks: HashMap<String, usize> = HashMap::new();
    let mut unlink_req: HashMap<u64, String> = HashMap::new();
    let mut asked: HashMap<u64, (String, Option<String>)> = HashMap::new();
    let mut opens: HashMap<String, String> = HashMap::new();
    let only_open = |opens: &HashMap<String, String>| match opens.values().collect::<Vec<_>>()[..] {
        [p] => Some(p.clone()),
        _ => None,
    };
    let mut tie = |node: u64,
                   name: String,
                   e: &Event,
                   weak: bool,
                   unlinks: &HashMap<String, usize>|
     -> Result<(), String> {
        let gen = unlinks.get(&name).copied().unwrap_or(0);
        if let Some((n, _)) = node_name.get(&node).filter(|n| n.0 != name) {
            // (an OPEN names its file only through the pending open)
            if weak {
                return Ok(());
            }
            return Err(format!(
                "{}: nodeid {node} is named {n} and {name} (a rename or a link): the projection keys files by name and inode lifetime",
                Tr::brief(e)
            ));
        }
        if node_name.contains_key(&node) {
            return Ok(());
        }
        if let Some((o, g)) = name_node.get(&name).copied().filter(|o| o.0 != node) {
            if weak {
                return Ok(());
            }
            if g == gen {
                return Err(format!(
                    "{}: {name} is nodeid {node}, earlier nodeid {o} with no successful unlink of it between: the projection keys files by name and inode lifetime",
                    Tr::brief(e)
                ));
            }
        }
        node_name.insert(node, (name.clone(), gen_label(&name, gen)));
        name_node.insert(name, (node, gen));
        Ok(())
    };
    for e in events {
        if e.ev == "req" && e.op.as_deref() == Some("UNLINK") {
            if let (Some(u), Some(n)) = (e.unique, req_name(e)) {
                unlink_req.insert(u, n);
            }
        }
        if let Some(n) = unlinked_name(e, &unlink_req) {
            *unlinks.entry(n).or_default() += 1;
        }
        if is_call(e) && e.syscall.as_deref() == Some("open") {
            if let (Some(a), Some(p)) = (&e.actor, mark_path(e)) {
                opens.insert(a.clone(), p);
            }
        } else if is_ret(e) {
            if let Some(a) = &e.actor {
                opens.remove(a);
            }
        } else if e.ev == "req" {
            let (Some(u), Some(op)) = (e.unique, e.op.as_deref()) else {
                continue;
            };
            match op {
                "LOOKUP" | "CREATE" => {
                    let name = req_name(e)
                        .or_else(|| (op == "CREATE").then(|| only_open(&opens)).flatten());
                    asked.insert(u, (op.to_string(), name));
                }
                "OPEN" => {
                    if let (Some(n), Some(p)) = (e.nodeid, only_open(&opens)) {
                        tie(n, p, e, true, &unlinks)?;
                    }
                }
                _ => {}
            }
        } else if e.ev == "reply" {
            let Some((_, Some(name))) = e.unique.and_then(|u| asked.get(&u)) else {
                continue;
            };
            if let Some(ino) = e.result.as_ref().and_then(|r| r["ino"].as_u64()) {
                tie(ino, name.clone(), e, false, &unlinks)?;
            }
        }
    }
    Ok(node_name)
}

/// What the split learns on the way, for the coupling check.
#[derive(Default)]
struct Facts {
    /// per file: position of its first call mark
    first_call: BTreeMap<usize, usize>,
    /// per file: position of its first call that may dirty its pages
    first_dirty: BTreeMap<usize, usize>,
    /// per file: (call, ret) positions of its fsync and fdatasync
    syncs: BTreeMap<usize, Vec<(usize, usize)>>,
    /// fh -> position of the OPEN or CREATE reply that returned it
    fh_opened: HashMap<u64, usize>,
    /// request position -> the earliest call mark, among the calls
    /// pending when it was read, of a syscall that sends such a request
    /// and waits for it ([`senders`])
    sender_at: HashMap<usize, usize>,
}

/// Split `events` (a validated trace) by file.
pub fn project(events: &[Event]) -> Split {
    let node_name = match nodes(events) {
        Ok(n) => n,
        Err(why) => return Split::NotModelled(why),
    };
    // the names that are files: a syscall names them, or a request on
    // their nodeid
    let mut file_names: BTreeSet<String> = node_name.values().map(|n| n.0.clone()).collect();
    file_names.extend(
        events
            .iter()
            .filter(|e| is_call(e) && !LOOKS_ONLY.contains(&e.syscall.as_deref().unwrap_or("")))
            .filter_map(mark_path)
            .filter(|n| n != "."),
    );
    // successful unlinks of each name so far: which of its inode
    // lifetimes a name stands for now (gen_label)
    let mut unlinks: HashMap<String, usize> = HashMap::new();
    let mut unlink_req: HashMap<u64, String> = HashMap::new();
    let label = |unlinks: &HashMap<String, usize>, name: &str| {
        gen_label(name, unlinks.get(name).copied().unwrap_or(0))
    };
    // the files that have a nodeid
    let labels: BTreeSet<String> = node_name.values().map(|n| n.1.clone()).collect();
    let mut files: Vec<String> = vec![];
    let mut idx = |n: &str| match files.iter().position(|f| f == n) {
        Some(i) => i,
        None => {
            files.push(n.to_string());
            files.len() - 1
        }
    };
    let mut owner = vec![Owner::All; events.len()];
    let mut req_owner: HashMap<u64, Owner> = HashMap::new();
    // fd -> its file, one table for every process, by number; `held`:
    // per fd, the copies of it other processes hold since a fork mark
    // (as scan.rs counts them), so that one copy's close keeps it
    // (an fd's file: its index, and the name its open named)
    let mut fds: HashMap<i64, (usize, String)> = HashMap::new();
    let mut held: HashMap<i64, u32> = HashMap::new();
    // fds a fork copied while open: one of the copies is still open as
    // long as the table holds the fd
    let mut forked: std::collections::HashSet<i64> = Default::default();
    // actor -> (owner, call position, fd, syscall) of its pending call
    let mut pend: HashMap<String, (Owner, usize, Option<i64>, String)> = HashMap::new();
    let mut mapped: BTreeMap<usize, u32> = BTreeMap::new();
    let mut facts = Facts::default();
    // the first syscall the split cannot place: with one file it is
    // that file's (checked as before), with several not modelled
    let mut unplaced: Option<String> = None;
    for (i, e) in events.iter().enumerate().skip(1) {
        let sc = e.syscall.as_deref().unwrap_or("");
        if is_call(e) {
            let args = e.args.as_deref().unwrap_or("");
            let fd = num(arg(args, "fd")).map(|f| f as i64);
            let o = match (mark_path(e), sc, fd) {
                // the mount's root: no file's (FILTERED_SYSCALLS)
                (Some(p), _, _) if p == "." => Owner::All,
                // an fd open on a lifetime of its name: that file's, also
                // after the name was unlinked (a forked copy of the fd
                // that outlives the unlink: the recorder names an
                // unlinked file's fd by the name it had)
                (Some(p), _, Some(fd)) if fds.get(&fd).is_some_and(|f| f.1 == p) => {
                    Owner::File(fds[&fd].0)
                }
                // a look-up of a name in a lifetime no nodeid has (the
                // journal's name after its last unlink): no file's
                (Some(p), _, _)
                    if LOOKS_ONLY.contains(&sc) && !labels.contains(&label(&unlinks, &p)) =>
                {
                    Owner::All
                }
                (Some(p), _, _) if !LOOKS_ONLY.contains(&sc) || file_names.contains(&p) => {
                    Owner::File(idx(&label(&unlinks, &p)))
                }
                (_, "syncfs", _) => Owner::All,
                (_, s, _) if LOOKS_ONLY.contains(&s) => Owner::All,
                (_, _, Some(fd)) => match fds.get(&fd) {
                    Some(f) => Owner::File(f.0),
                    None => {
                        unplaced.get_or_insert(format!(
                            "{}: {sc} on fd {fd}, which no open mark returned: its file is unknown",
                            Tr::brief(e)
                        ));
                        Owner::All
                    }
                },
                (_, "store" | "munmap" | "msync" | "msync_async", _) => {
                    let live: Vec<usize> = mapped.keys().copied().collect();
                    match live[..] {
                        [f] => Owner::File(f),
                        _ => {
                            unplaced.get_or_insert(format!(
                                "{}: {sc} with shared mappings of {} files live and no path=: which file it acts on is not in the trace",
                                Tr::brief(e),
                                live.len()
                            ));
                            Owner::All
                        }
                    }
                }
                // a syscall the mapping names as not modelled, in every
                // projection
                _ => Owner::All,
            };
            if let Owner::File(f) = o {
                facts.first_call.entry(f).or_insert(i);
                if DIRTYING.contains(&sc) {
                    facts.first_dirty.entry(f).or_insert(i);
                }
            }
            // a close, or an exit's or exec's of the fds it names, ends
            // one copy of each; a fork copies them
            let named = || {
                args.split_whitespace()
                    .filter_map(|w| num(w.strip_prefix("fd=")).map(|f| f as i64))
            };
            match sc {
                "close" | "close_range" | "exit" | "execve" => {
                    for fd in named() {
                        match held.get_mut(&fd).filter(|h| **h > 0) {
                            Some(h) => *h -= 1,
                            None => {
                                fds.remove(&fd);
                                forked.remove(&fd);
                            }
                        }
                    }
                }
                "fork" => {
                    for fd in named().filter(|fd| fds.contains_key(fd)) {
                        *held.entry(fd).or_default() += 1;
                        forked.insert(fd);
                    }
                }
                _ => {}
            }
            pend.insert(
                e.actor.clone().unwrap_or_default(),
                (o, i, fd, sc.to_string()),
            );
            owner[i] = o;
        } else if is_ret(e) {
            let (o, call, _, _) = pend.remove(e.actor.as_deref().unwrap_or("")).unwrap_or((
                Owner::All,
                i,
                None,
                String::new(),
            ));
            owner[i] = o;
            if let Owner::File(f) = o {
                let ok = e.ret.is_some_and(|r| r >= 0);
                match sc {
                    "open" | "openat" | "creat" if ok => {
                        // (one process's open never returns an fd it
                        // holds: a number a fork copied and some copy
                        // still holds is another process's; processes
                        // that each opened their own files, fio's jobs,
                        // share numbers freely here)
                        let fd = e.ret.unwrap_or(-1);
                        if fds.contains_key(&fd) && forked.contains(&fd) {
                            unplaced.get_or_insert(format!(
                                "{}: an open returned fd {fd}, which a fork copied and a copy of it still holds: fd tables of processes are one table here, by number",
                                Tr::brief(e)
                            ));
                        }
                        held.remove(&fd);
                        forked.remove(&fd);
                        fds.insert(fd, (f, mark_path(&events[call]).unwrap_or_default()));
                    }
                    // a dup's new fd is its source's file (`from=`, or
                    // `fd=`), whatever it replaced
                    "dup" | "dup2" | "dup3" | "fcntl" if ok => {
                        let args = events[call].args.as_deref().unwrap_or("");
                        let src = num(arg(args, "from")).or(num(arg(args, "fd")));
                        let new = e.ret.unwrap_or(-1);
                        let dup = sc != "fcntl"
                            || arg(args, "cmd").is_some_and(|c| c.starts_with("F_DUPFD"));
                        if let Some(x) = src
                            .and_then(|f| fds.get(&(f as i64)).cloned())
                            .filter(|_| dup)
                        {
                            if src != Some(new as u64)
                                && fds.contains_key(&new)
                                && forked.contains(&new)
                            {
                                unplaced.get_or_insert(format!(
                                    "{}: a dup onto fd {new}, which a fork copied and a copy of it still holds: fd tables of processes are one table here, by number",
                                    Tr::brief(e)
                                ));
                            }
                            held.remove(&new);
                            forked.remove(&new);
                            fds.insert(new, x);
                        }
                    }
                    "mmap" if ok => *mapped.entry(f).or_default() += 1,
                    "munmap" => {
                        if let Some(n) = mapped.get_mut(&f) {
                            *n -= 1;
                            if *n == 0 {
                                mapped.remove(&f);
                            }
                        }
                    }
                    "fsync" | "fdatasync" => facts.syncs.entry(f).or_default().push((call, i)),
                    _ => {}
                }
            }
        } else if e.ev == "req" {
            if e.op.as_deref() == Some("UNLINK") {
                if let (Some(u), Some(n)) = (e.unique, req_name(e)) {
                    unlink_req.insert(u, n);
                }
            }
            let o = match (e.nodeid, req_name(e).as_deref()) {
                // FUSE_INTERRUPT (nodeid 0): the file of the request it
                // interrupts
                _ if e.op.as_deref() == Some("INTERRUPT") => e
                    .interrupts
                    .and_then(|t| req_owner.get(&t).copied())
                    .unwrap_or(Owner::All),
                (Some(n), _) if n != 1 => match node_name.get(&n) {
                    Some((_, l)) => Owner::File(idx(l)),
                    None => Owner::File(idx(&format!("nodeid {n}"))),
                },
                (_, Some(name))
                    if file_names.contains(name) && labels.contains(&label(&unlinks, name)) =>
                {
                    Owner::File(idx(&label(&unlinks, name)))
                }
                _ if e.op.as_deref() == Some("LOOKUP") => Owner::Nowhere,
                _ => Owner::All,
            };
            let can = senders(e);
            if let Some(first) = pend
                .values()
                .filter(|p| can.contains(&p.3.as_str()))
                .map(|p| p.1)
                .min()
            {
                facts.sender_at.insert(i, first);
            }
            req_owner.insert(e.unique.unwrap_or(0), o);
            owner[i] = o;
        } else if e.ev == "reply" {
            owner[i] = req_owner
                .get(&e.unique.unwrap_or(0))
                .copied()
                .unwrap_or(Owner::All);
            if let Some(fh) = e.result.as_ref().and_then(|r| r["fh"].as_u64()) {
                facts.fh_opened.entry(fh).or_insert(i);
            }
            // the name stands for its next inode lifetime from here
            if let Some(n) = unlinked_name(e, &unlink_req) {
                *unlinks.entry(n).or_default() += 1;
            }
        } else if e.ev == "server_truncate" {
            if let Some(n) = req_name(e).filter(|n| file_names.contains(n)) {
                owner[i] = Owner::File(idx(&label(&unlinks, &n)));
            }
        }
    }
    if files.len() < 2 {
        return Split::One;
    }
    if let Some(why) = unplaced {
        return Split::NotModelled(why);
    }
    if let Some(why) = coupling(events, &owner, &files, &facts) {
        return Split::NotModelled(why);
    }
    let mut out = vec![];
    for (k, name) in files.iter().enumerate() {
        let mut ev = vec![events[0].clone()];
        for (i, e) in events.iter().enumerate().skip(1) {
            match owner[i] {
                Owner::All => ev.push(e.clone()),
                Owner::File(f) if f == k => ev.push(e.clone()),
                _ if e.ev == "req" || e.ev == "reply" => ev.push(placeholder(e)),
                _ => {}
            }
        }
        out.push(Projection {
            file: name.clone(),
            events: ev,
        });
    }
    Split::Several(out)
}

/// A request (or its reply) of another file in a projection: its unique
/// and where it is, nothing the mapping reads. A FORGET stays a FORGET
/// (it has no reply), of the root.
fn placeholder(e: &Event) -> Event {
    let mut p = Event::new(&e.ev);
    p.seq = e.seq;
    p.t_us = e.t_us;
    p.thread = e.thread.clone();
    p.unique = e.unique;
    let forget = matches!(e.op.as_deref(), Some("FORGET" | "BATCH_FORGET"));
    p.op = Some(if forget { "FORGET" } else { NOT_THIS_FILE }.into());
    if e.ev == "req" {
        p.nodeid = Some(1);
        p.pid = Some(0);
    } else {
        p.result = Some(json!({}));
    }
    p
}

/// The syscalls that dirty page-cache pages of their file: a page-cache
/// WRITE is queued after one of them began. `mmap`: a store through a
/// shared mapping may be no syscall in the trace (`wbspec record`).
const DIRTYING: &[&str] = &[
    "mmap",
    "pwrite",
    "write",
    "pwritev",
    "writev",
    "sendfile",
    "splice",
    "copy_file_range",
    "store",
];

/// Requests that may be background (FR_BACKGROUND) and so count in
/// fc->num_background: writeback WRITEs, readahead READs, RELEASE and
/// RELEASEDIR (fuse_file_put → fuse_simple_background), and, with
/// FUSE_ASYNC_DIO, direct READs and WRITEs. Every READ and WRITE is
/// counted: which READ is readahead's is the model's choice.
fn may_be_background(op: &str) -> bool {
    matches!(op, "WRITE" | "READ" | "RELEASE" | "RELEASEDIR")
}

/// The syscalls that send this request and wait for its reply
/// (fuse_simple_request in the caller's context; a direct or
/// write-through WRITE): such a request entered the pending queue after
/// the call mark of one of them pending when it was read. None for a
/// request no syscall waits for, or from pid 0 (a kernel thread).
fn senders(e: &Event) -> &'static [&'static str] {
    const OPEN: &[&str] = &["open", "openat", "creat"];
    const SYNC: &[&str] = &["fsync", "fdatasync", "msync"];
    const TRUNC: &[&str] = &["ftruncate", "truncate", "open", "openat", "creat"];
    const WRITE: &[&str] = &["pwrite", "write", "pwritev", "writev", "sendfile"];
    if e.pid.is_none_or(|p| p == 0) {
        return &[];
    }
    match e.op.as_deref() {
        Some("OPEN" | "CREATE") => OPEN,
        Some("FSYNC") => SYNC,
        Some("FLUSH") => &["close"],
        Some("SETATTR") if e.size.is_some() => TRUNC,
        Some("WRITE") if !e.is_cache_write() => WRITE,
        _ => &[],
    }
}

/// The cross-file coupling the one-inode model lacks: several files'
/// background requests may count in fc->num_background at once up to
/// min(max_background, congestion_threshold). `Some(why)` refuses the
/// projection. docs/conformance.md, "Several files", proves the bound:
/// each request counts from a position no later than the kernel queued
/// it (`lb`) to a position after fuse_request_end dropped it (`end`).
fn coupling(events: &[Event], owner: &[Owner], files: &[String], f: &Facts) -> Option<String> {
    let conf = events[0].config.as_ref()?;
    let (mb, ct) = (
        conf["max_background"].as_u64()?,
        conf["congestion_threshold"].as_u64()?,
    );
    let limit = mb.min(ct) as usize;
    let n = events.len();
    // the next line of the same server thread after each position: a
    // fuser thread logs a reply, then writes it (fuse_request_end runs in
    // that write), then logs its next line. Other threads' names (the
    // control connections) may be shared: to the end of the trace.
    let mut next_same = vec![n; n];
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for i in (0..n).rev() {
        let t = events[i].thread.as_str();
        if t.starts_with("fuser") {
            next_same[i] = seen.get(t).copied().unwrap_or(n);
        }
        seen.insert(t, i);
    }
    // LBU: a request entered the pending queue (and got its unique,
    // fuse_dev_queue_req) after every request with a smaller unique did;
    // an anchor entered it after a call mark
    let mut anch: Vec<(u64, usize)> = events
        .iter()
        .enumerate()
        .filter(|(i, e)| e.ev == "req" && f.sender_at.contains_key(i))
        .filter_map(|(i, e)| Some((e.unique?, f.sender_at[&i])))
        .collect();
    anch.sort();
    let mut best = 0;
    for a in anch.iter_mut() {
        best = best.max(a.1);
        a.1 = best;
    }
    let after_smaller = |u: u64| match anch.partition_point(|a| a.0 < u) {
        0 => 0,
        k => anch[k - 1].1,
    };
    let mut reply_at: HashMap<u64, usize> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if e.ev == "reply" {
            reply_at.entry(e.unique.unwrap_or(0)).or_insert(i);
        }
    }
    // (lb, end, position of the request)
    let mut live: Vec<(usize, usize, usize)> = vec![];
    for (i, e) in events.iter().enumerate() {
        let (true, Some(op), Some(u)) = (e.ev == "req", e.op.as_deref(), e.unique) else {
            continue;
        };
        if !may_be_background(op) {
            continue;
        }
        let Some(&r) = reply_at.get(&u) else { continue };
        let file = match owner[i] {
            Owner::File(x) => Some(x),
            _ => None,
        };
        let first = file
            .and_then(|x| f.first_call.get(&x).copied())
            .unwrap_or(0);
        let kind = match op {
            // its pages were dirtied by a syscall on the file; and a
            // WRITE queued before an fsync of the file began ends before
            // that fsync returns (file_write_and_wait_range waits on
            // PG_writeback, which fuse_writepage_end clears after the
            // reply)
            "WRITE" if e.is_cache_write() => file
                .and_then(|x| f.syncs.get(&x))
                .into_iter()
                .flatten()
                .filter(|(_, ret)| *ret < r)
                .map(|(call, _)| *call)
                .fold(
                    file.and_then(|x| f.first_dirty.get(&x).copied())
                        .unwrap_or(first),
                    usize::max,
                ),
            // its syscall waits for it, so it was pending when it was read
            "WRITE" => f.sender_at.get(&i).copied().unwrap_or(first),
            "RELEASE" => {
                e.fh.and_then(|h| f.fh_opened.get(&h).copied())
                    .unwrap_or(0)
                    .max(first)
            }
            "RELEASEDIR" => 0,
            _ => first,
        };
        let lb = kind.max(after_smaller(u)).min(i);
        live.push((lb, next_same[r], i));
    }
    live.sort();
    let mut counted: Vec<(usize, usize, usize)> = vec![];
    let mut k = 0;
    for p in 0..n {
        while k < live.len() && live[k].0 == p {
            counted.push(live[k]);
            k += 1;
        }
        counted.retain(|c| c.1 >= p);
        if counted.len() >= limit {
            let mut of: Vec<&str> = counted
                .iter()
                .filter_map(|c| match owner[c.2] {
                    Owner::File(x) => Some(files[x].as_str()),
                    _ => None,
                })
                .collect();
            of.sort();
            of.dedup();
            let reqs: Vec<String> = counted
                .iter()
                .take(4)
                .map(|c| {
                    let e = &events[c.2];
                    format!(
                        "#{} {} u={}",
                        e.seq,
                        e.op.as_deref().unwrap_or(""),
                        e.unique.unwrap_or(0)
                    )
                })
                .collect();
            let at = match p {
                0 => "from the trace's start".to_string(),
                _ => format!("from {}", Tr::brief(&events[p])),
            };
            return Some(format!(
                "{} background requests of files {} may count in fc->num_background at once {at} ({}{}), reaching min(max_background {mb}, congestion_threshold {ct}) = {limit}: the files share one connection, and the one-inode model's fc->bg_queue and congestion decisions could then differ from the kernel's (docs/conformance.md, Several files)",
                counted.len(),
                of.join(", "),
                reqs.join(", "),
                if counted.len() > 4 { ", ..." } else { "" },
            ));
        }
    }
    None
}

/// One file's verdict: the conformance, and the trace `seq` of the event
/// a violation stopped at (u64::MAX: at the end).
pub type FileVerdict = Result<(Conformance, u64), String>;

/// The verdict of the whole trace from its files' verdicts: conforms if
/// every file conforms; otherwise the first violation (by `seq`), else
/// the first other failure, not modelled, or conforms-to-cut, named with
/// its file. Each file's verdict is listed in the word and the detail.
/// Most files a combined verdict line names (`combine`).
pub const LIST_MAX: usize = 10;

pub fn combine(verdicts: Vec<(String, FileVerdict)>) -> Conformance {
    let rank = |c: &Conformance| match c.class {
        Class::DoesNotConform if c.word.starts_with("VIOLATION") => 0,
        Class::DoesNotConform => 1,
        Class::NotModelled => 2,
        Class::ConformsToCut => 3,
        Class::Conforms => 4,
    };
    let each: Vec<(String, Conformance, u64)> = verdicts
        .into_iter()
        .map(|(f, v)| match v {
            Ok((c, seq)) => (f, c, seq),
            // the whole trace is well formed (validated before the
            // split); a projection that is not is the split's limit
            Err(e) => {
                let c = Conformance {
                    word: format!("not-modelled (its projection is refused: {e})"),
                    class: Class::NotModelled,
                    detail: None,
                };
                (f, c, u64::MAX)
            }
        })
        .collect();
    // the verdict line names at most LIST_MAX files, the worst first
    // chosen (a program's run may touch hundreds); the rest are counted
    // by verdict, and the detail lists every file
    let mut shown: Vec<usize> = (0..each.len()).collect();
    if each.len() > LIST_MAX {
        shown.sort_by_key(|&i| rank(&each[i].1));
        shown.truncate(LIST_MAX);
        shown.sort();
    }
    let rest = {
        let mut n: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, (_, c, _)) in each.iter().enumerate() {
            if !shown.contains(&i) {
                let k = match c.class {
                    Class::Conforms => "conform",
                    Class::ConformsToCut => "conform to a cut",
                    Class::NotModelled => "not modelled",
                    Class::DoesNotConform => "do not conform",
                };
                *n.entry(k).or_default() += 1;
            }
        }
        match each.len() - shown.len() {
            0 => String::new(),
            k => format!(
                "; {k} more: {}",
                n.iter()
                    .map(|(w, c)| format!("{c} {w}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    };
    let list = shown
        .iter()
        .map(|&i| &each[i])
        .map(|(f, c, _)| {
            let w = c.word.split_whitespace().next().unwrap_or("");
            let w = w.trim_end_matches(':');
            match c.word.find(" (+") {
                Some(i) if c.class == Class::Conforms => format!("{f}: {w}{}", &c.word[i..]),
                _ => format!("{f}: {w}"),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
        + &rest;
    let pick = each
        .iter()
        .min_by_key(|(_, c, seq)| (rank(c), if rank(c) == 0 { *seq } else { 0 }))
        .expect("several files");
    let (word, class) = match pick.1.class {
        Class::Conforms => (
            format!("conforms [{} files: {list}]", each.len()),
            Class::Conforms,
        ),
        cl => (
            format!(
                "{} [file {}; {} files: {list}]",
                pick.1.word,
                pick.0,
                each.len()
            ),
            cl,
        ),
    };
    let mut detail = word.clone();
    for (f, c, _) in &each {
        detail += &format!("\n  file {f}: {}", c.word);
        for l in c.detail.iter().flat_map(|d| d.lines().skip(1)) {
            detail += &format!("\n  {l}");
        }
    }
    Conformance {
        word,
        class,
        detail: Some(detail),
    }
}
