//! Trace conformance (trace validation, Cirstea, Kuppe, Loillier and Merz
//! 2024): is a trace recorded from the real kernel a behaviour of the wbspec
//! FUSE model?
//!
//! Two parts:
//! 1. [`translate`] maps a recorded trace onto the model: a model [`Config`]
//!    (kernel state, pages, daemon threads, `max_pages`, one `TaskSpec` per
//!    modelled syscall) and the sequence of model-observable events ([`Obs`]):
//!    syscall issued / returned (marks), request read by the server, reply
//!    written. Requests and syscalls the model does not have are dropped by
//!    explicit, listed rules ([`FILTERED_OPS`], [`FILTERED_SYSCALLS`]); traces
//!    the model cannot express are reported as not modelled, with the reason.
//! 2. [`check`] searches the model for a behaviour producing exactly that
//!    observation sequence: the set of model states consistent with the prefix
//!    is kept; steps that are not observable (kernel task steps of started
//!    tasks, `fuse_writepage_end`) are free; the daemon's reads and replies
//!    must match the next observed event. The result is `conforms`, the first
//!    event the model cannot produce (with the states still possible), or
//!    `inconclusive` if the state bound is hit.
//!
//! docs/conformance.md explains the mapping and its abstractions.
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;

use wbspec_models::fuse::model::version_of;
use wbspec_models::fuse::state::{Req, Worker, NONE, V_ZERO};
use wbspec_models::fuse::{
    Action, Actor, Config, FuseModel, Kernel, State, Step, TaskSpec, Variant,
};

use crate::trace::Event;

const PG: u64 = 4096;
/// Model limits (models/src/fuse/config.rs).
const MODEL_PAGES: usize = wbspec_models::fuse::config::MAX_PAGES;
const MODEL_WORKERS: usize = wbspec_models::fuse::config::MAX_WORKERS;
const MODEL_TASKS: usize = wbspec_models::fuse::config::MAX_TASKS;
/// Default bound on model states explored per trace.
pub const DEFAULT_BOUND: usize = 2_000_000;

/// Requests the model does not have, dropped with their replies.
pub const FILTERED_OPS: &[(&str, &str)] = &[
    (
        "LOOKUP",
        "name lookup: the model has one inode and no directory",
    ),
    (
        "CREATE",
        "file creation by the first open() (setup; init_size 0); a CREATE elsewhere is not modelled",
    ),
    (
        "RELEASE",
        "sent after close() returned; fuse_release is not modelled",
    ),
    (
        "GETXATTR",
        "security.capability lookup of file_remove_privs on the first write",
    ),
    ("GETATTR", "attributes other than size are not modelled"),
    ("FORGET", "inode lifetime is not modelled"),
    ("ACCESS", "permissions are not modelled"),
    ("STATFS", "not modelled"),
    ("READDIR", "not modelled"),
    ("OPENDIR", "not modelled"),
    ("RELEASEDIR", "not modelled"),
    ("UNLINK", "not modelled"),
    ("FALLOCATE", "not modelled"),
    (
        "SETATTR(times)",
        "a SETATTR without a size (cmtime flush of fsync/close/writeback)",
    ),
    (
        "READ in a cached pread",
        "page-cache fill of a buffered read; the model has no buffered-read task",
    ),
];

/// Syscalls that have no model task and no effect the model tracks.
pub const FILTERED_SYSCALLS: &[(&str, &str)] = &[
    ("open (setup)", "the scenario's first open, which creates the file (LOOKUP, CREATE): every trace starts from a new empty file; later opens are open tasks"),
    ("mmap", "sets up the mapping only; the store is the modelled event"),
    ("munmap", "no request (the pages stay in the page cache)"),
    ("msync_async", "msync(MS_ASYNC) is a no-op"),
    ("stat", "a LOOKUP of another name (used to stall the server)"),
    ("pread (cached fd)", "buffered read: fills clean pages only; its READs are dropped"),
];

// ---------------------------------------------------------------- observations

/// A model request as observed at the server (model pages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pat {
    /// WRITE with FUSE_WRITE_CACHE; `payload[i]` = allowed versions of page first+i.
    CacheWrite {
        first: u8,
        n: u8,
        payload: Vec<Vec<u8>>,
    },
    /// WRITE without FUSE_WRITE_CACHE (direct).
    DirectWrite {
        first: u8,
        n: u8,
        payload: Vec<Vec<u8>>,
    },
    /// WRITE without FUSE_WRITE_CACHE of a write(2) on a mount without
    /// writeback_cache (fuse_perform_write).
    ThroughWrite {
        first: u8,
        n: u8,
        payload: Vec<Vec<u8>>,
    },
    Read {
        first: u8,
        n: u8,
    },
    Setattr {
        size: u8,
    },
    Fsync,
    Flush,
    /// OPEN of open task `task`; `trunc`: O_TRUNC in its flags (sent only
    /// with atomic_o_trunc).
    Open {
        task: u8,
        trunc: bool,
    },
}

impl fmt::Display for Pat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pr = |a: u8, n: u8| {
            if n == 1 {
                format!("p{a}")
            } else {
                format!("p{}-{}", a, a + n - 1)
            }
        };
        let pl = |p: &Vec<Vec<u8>>| {
            p.iter()
                .map(|v| {
                    v.iter()
                        .map(|x| format!("v{x}"))
                        .collect::<Vec<_>>()
                        .join("|")
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        match self {
            Pat::CacheWrite { first, n, payload } => {
                write!(
                    f,
                    "WRITE[CACHE]({}) payload [{}]",
                    pr(*first, *n),
                    pl(payload)
                )
            }
            Pat::DirectWrite { first, n, payload } => {
                write!(
                    f,
                    "WRITE[direct]({}) payload [{}]",
                    pr(*first, *n),
                    pl(payload)
                )
            }
            Pat::ThroughWrite { first, n, payload } => {
                write!(
                    f,
                    "WRITE[through]({}) payload [{}]",
                    pr(*first, *n),
                    pl(payload)
                )
            }
            Pat::Read { first, n } => write!(f, "READ({})", pr(*first, *n)),
            Pat::Setattr { size } => write!(f, "SETATTR(size={size}p)"),
            Pat::Fsync => write!(f, "FSYNC"),
            Pat::Flush => write!(f, "FLUSH"),
            Pat::Open { task, trunc } => {
                write!(f, "OPEN({}T{task})", if *trunc { "O_TRUNC " } else { "" })
            }
        }
    }
}

/// One model-observable event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Obs {
    /// Model task `t` may start (its syscall was issued).
    Call(usize),
    /// Model task `t` has returned.
    Ret(usize),
    /// The daemon read this request from /dev/fuse.
    Read(Pat),
    /// The daemon replied to this request; for a READ, the allowed data
    /// versions of the pages returned (server content at reply time).
    Reply(Pat, Vec<(u8, Vec<u8>)>),
}

/// An observation with where it came from.
#[derive(Clone, Debug)]
pub struct ObsAt {
    pub obs: Obs,
    /// Trace `seq` of the event (0 for implicit events).
    pub seq: u64,
    /// Short description of the trace event.
    pub what: String,
}

/// The result of mapping a trace onto the model.
#[derive(Clone, Debug)]
pub struct Mapping {
    pub scenario: String,
    pub cfg: Config,
    pub obs: Vec<ObsAt>,
    /// Model page i = real 4 KiB pages regions[i].0 .. regions[i].1.
    pub regions: Vec<(u64, u64)>,
    /// Model task index -> "T1 ftruncate fd=6 4096".
    pub task_labels: Vec<String>,
    /// (page, tag string) -> versions; printed in reports and docs.
    pub letters: BTreeMap<(u8, String), Vec<u8>>,
    /// How many trace events each filter rule dropped.
    pub filtered: BTreeMap<String, usize>,
    /// Where the checked prefix ends, and why the rest is not modelled
    /// (a write-through write(2) the kernel split into several WRITEs).
    pub cut: Option<String>,
}

#[derive(Debug)]
pub enum Translation {
    Modelled(Box<Mapping>),
    NotModelled(String),
}

// ---------------------------------------------------------------- translation

#[derive(Clone, Debug)]
enum RawReq {
    CacheWrite { first: u64, n: u64, tags: String },
    DirectWrite { first: u64, n: u64, tags: String },
    ThroughWrite { first: u64, n: u64, tags: String },
    Read { first: u64, n: u64 },
    Setattr { size: u64 },
    Fsync,
    Flush,
    Open { task: usize, trunc: bool },
}

#[derive(Clone, Debug)]
enum RawObs {
    Call(usize),
    Ret(usize),
    Read(RawReq),
    Reply(RawReq, Option<String>),
}

#[derive(Clone, Debug)]
enum RawTask {
    Write { first: u64, n: u64, tags: String },
    DioWrite { first: u64, n: u64, tags: String },
    OdirectWrite { first: u64, n: u64, tags: String },
    DioRead { first: u64, n: u64 },
    OdirectRead { first: u64, n: u64 },
    Mmap { page: u64, tag: String },
    Writeback,
    Truncate { size: u64 },
    Fsync,
    Close,
    Open { trunc: bool },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum FdKind {
    Cached,
    /// FOPEN_DIRECT_IO
    Dio,
    /// O_DIRECT without FOPEN_DIRECT_IO
    Odirect,
}

struct Pending {
    syscall: String,
    task: Option<usize>,
    store_page: Option<u64>,
    cached_read: bool,
    open_flags: i32,
    /// The scenario's first open, which creates the file (setup).
    setup_open: bool,
    /// A pwrite on a FOPEN_DIRECT_IO or O_DIRECT fd (its WRITEs are direct).
    direct_write: bool,
    /// A pwrite on a cached fd of a mount without writeback_cache
    /// (write-through: its WRITE is a `Req::ThroughWrite`).
    through_write: bool,
}

fn nm<T>(why: impl Into<String>) -> Result<T, String> {
    Err(why.into())
}

fn arg<'a>(args: &'a str, key: &str) -> Option<&'a str> {
    args.split_whitespace()
        .find_map(|w| w.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
}

fn num(s: Option<&str>) -> Option<u64> {
    s.and_then(|v| v.parse().ok())
}

fn pages_of(bytes: u64, what: &str) -> Result<u64, String> {
    if !bytes.is_multiple_of(PG) {
        return nm(format!(
            "{what} {bytes} is not a whole number of 4 KiB pages"
        ));
    }
    Ok(bytes / PG)
}

fn parse_open_flags(s: &str) -> i32 {
    if let Some(h) = s.strip_prefix("0x") {
        return i32::from_str_radix(h, 16).unwrap_or(0);
    }
    let mut f = 0;
    for n in s.split('|') {
        f |= match n {
            "O_WRONLY" => libc::O_WRONLY,
            "O_RDWR" => libc::O_RDWR,
            "O_CREAT" => libc::O_CREAT,
            "O_TRUNC" => libc::O_TRUNC,
            "O_DIRECT" => libc::O_DIRECT,
            "O_APPEND" => libc::O_APPEND,
            _ => 0,
        };
    }
    f
}

fn kernel_of(release: &str) -> Option<Kernel> {
    match crate::runner::kernel_state(release) {
        Some("T''") => Some(Kernel::T2),
        _ => None,
    }
}

/// Map a recorded trace onto the model. `Err` is a malformed trace (an input
/// error); `Ok(NotModelled)` a trace the model cannot express.
pub fn translate(events: &[Event], scenario: Option<&str>) -> Result<Translation, String> {
    match translate_inner(events, scenario) {
        Ok(m) => Ok(Translation::Modelled(Box::new(m))),
        Err(e) if e.starts_with("bad trace:") => Err(e),
        Err(e) => Ok(Translation::NotModelled(e)),
    }
}

fn translate_inner(events: &[Event], scenario: Option<&str>) -> Result<Mapping, String> {
    let hdr = events
        .first()
        .filter(|e| e.ev == "header")
        .ok_or("bad trace: first line is not a header")?;
    let name = scenario
        .map(str::to_string)
        .or_else(|| hdr.scenario.clone())
        .unwrap_or_else(|| "?".into());
    let conf = hdr.config.clone().unwrap_or_default();
    let flag = |k: &str, d: bool| conf[k].as_bool().unwrap_or(d);
    let numc = |k: &str, d: u64| conf[k].as_u64().unwrap_or(d);
    let kernel = hdr.kernel.clone().unwrap_or_default();
    let kstate = match kernel_of(&kernel) {
        Some(k) => k,
        None => {
            return nm(format!(
                "kernel {kernel} has no model state (only 6.18.y, y>=3 = T'')"
            ))
        }
    };
    // Without FUSE_WRITEBACK_CACHE write(2) is write-through
    // (fuse_perform_write): a synchronous WRITE without FUSE_WRITE_CACHE.
    let wbc = flag("writeback_cache", true);
    let (bg, cong) = (numc("max_background", 16), numc("congestion_threshold", 12));
    if bg.min(cong) as usize <= MODEL_PAGES {
        return nm(format!(
            "max_background {bg} / congestion_threshold {cong}: congestion and the background queue are not modelled"
        ));
    }
    let keep_cache = flag("keep_cache", false);
    let real_max_pages = (numc("max_write", 1 << 20) / PG).clamp(1, 256);

    let mut raw: Vec<(u64, u64, RawObs, String)> = vec![]; // (order key, seq, obs, what)
    let mut tasks: Vec<(RawTask, String)> = vec![];
    let mut filtered: BTreeMap<String, usize> = BTreeMap::new();
    let mut fds: HashMap<i64, FdKind> = HashMap::new();
    let mut pending: HashMap<String, Pending> = HashMap::new();
    let mut reqs: HashMap<u64, Option<RawReq>> = HashMap::new();
    let mut inflight: HashSet<u64> = HashSet::new();
    let mut max_inflight = 0usize;
    let mut last_open_reply: Option<Vec<String>> = None;
    // The file the setup open created (the path word of its mark).
    let mut file: Option<String> = None;
    let mut last_mark_key = 0u64;
    let mut implicit_flush: Vec<(u64, usize)> = vec![];
    // The pid of each workload actor, learned from the requests its calls send.
    let mut actor_pid: HashMap<String, u32> = HashMap::new();
    let mut cut: Option<String> = None;
    let mut filt = |rule: &str| *filtered.entry(rule.to_string()).or_default() += 1;

    'events: for (i, e) in events.iter().enumerate().skip(1) {
        let key = 2 * i as u64;
        let brief = crate::runner::Tr::brief(e);
        match e.ev.as_str() {
            "mark" => {
                last_mark_key = key;
                let (Some(kind), Some(actor), Some(sc)) =
                    (e.kind.as_deref(), e.actor.clone(), e.syscall.clone())
                else {
                    continue;
                };
                if kind == "call" {
                    let args = e.args.clone().unwrap_or_default();
                    let words: Vec<&str> = args.split_whitespace().collect();
                    let fd_kind = |fds: &HashMap<i64, FdKind>| -> Result<FdKind, String> {
                        let fd = num(arg(&args, "fd"))
                            .ok_or_else(|| format!("bad trace: #{} {sc} without fd=", e.seq))?
                            as i64;
                        fds.get(&fd)
                            .copied()
                            .ok_or_else(|| format!("bad trace: #{} {sc} on unknown fd {fd}", e.seq))
                    };
                    let mut p = Pending {
                        syscall: sc.clone(),
                        task: None,
                        store_page: None,
                        cached_read: false,
                        open_flags: 0,
                        setup_open: false,
                        direct_write: false,
                        through_write: false,
                    };
                    let task = match sc.as_str() {
                        "open" => {
                            let path = words.first().copied().unwrap_or("").to_string();
                            let fl = parse_open_flags(words.get(1).copied().unwrap_or(""));
                            p.open_flags = fl;
                            last_open_reply = None;
                            match &file {
                                // The first open creates the file (LOOKUP,
                                // CREATE): setup, as init_size 0.
                                None => {
                                    if fl & libc::O_CREAT == 0 {
                                        return nm("the first open() has no O_CREAT: the model starts from a new empty file");
                                    }
                                    file = Some(path);
                                    p.setup_open = true;
                                    filt("syscall open (setup)");
                                    None
                                }
                                Some(f) if *f != path => {
                                    return nm(format!(
                                        "open() of a second file {path}: the model has one inode"
                                    ))
                                }
                                // fuse_open: OPEN, then invalidate_inode_pages2
                                // unless FOPEN_KEEP_CACHE; O_TRUNC truncates.
                                Some(_) => Some(RawTask::Open {
                                    trunc: fl & libc::O_TRUNC != 0,
                                }),
                            }
                        }
                        "pwrite" => {
                            let off = num(arg(&args, "off")).ok_or_else(|| {
                                format!("bad trace: #{} pwrite without off=", e.seq)
                            })?;
                            let tags = words.get(2).copied().unwrap_or("").to_string();
                            let first = pages_of(off, "pwrite offset")?;
                            let n = tags.len() as u64;
                            let kind = fd_kind(&fds)?;
                            p.direct_write = kind != FdKind::Cached;
                            p.through_write = kind == FdKind::Cached && !wbc;
                            if p.through_write {
                                // fuse_perform_write sends one WRITE per
                                // max_write/max_pages chunk; the model's write
                                // task sends one. A split write(2) ends the
                                // checked prefix if nothing else is going on.
                                let (writes, others) = writes_until_ret(&events[i + 1..], &actor);
                                if writes > 1 {
                                    if !pending.is_empty() || !inflight.is_empty() || others {
                                        return nm(format!("#{} write-through pwrite of {n} pages sent as {writes} WRITEs while other syscalls or requests were in flight: the model sends one WRITE per write(2)", e.seq));
                                    }
                                    cut = Some(format!("#{} on (pwrite of {n} pages at page {first} sent as {writes} WRITEs of at most max_write; the model's write-through task sends one WRITE per write(2))", e.seq));
                                    break 'events;
                                }
                            }
                            Some(match kind {
                                FdKind::Cached => RawTask::Write { first, n, tags },
                                FdKind::Dio => RawTask::DioWrite { first, n, tags },
                                FdKind::Odirect => RawTask::OdirectWrite { first, n, tags },
                            })
                        }
                        "pread" => {
                            let off = num(arg(&args, "off")).unwrap_or(0);
                            let len = num(arg(&args, "len")).unwrap_or(0);
                            let first = pages_of(off, "pread offset")?;
                            let n = pages_of(len, "pread length")?;
                            match fd_kind(&fds)? {
                                FdKind::Cached => {
                                    p.cached_read = true;
                                    filt("syscall pread (cached fd)");
                                    None
                                }
                                FdKind::Dio => Some(RawTask::DioRead { first, n }),
                                FdKind::Odirect => Some(RawTask::OdirectRead { first, n }),
                            }
                        }
                        "sync_file_range" => {
                            if words.get(1) != Some(&"0") || words.get(2) != Some(&"0") {
                                return nm("range-limited sync_file_range: the model's writeback task covers the whole file");
                            }
                            Some(RawTask::Writeback)
                        }
                        // syncfs on this kernel (SB_I_NO_DATA_INTEGRITY) writes
                        // back without waiting: the WB_SYNC_NONE writeback task.
                        "syncfs" => Some(RawTask::Writeback),
                        "fsync" => Some(RawTask::Fsync),
                        "msync" if args.contains("MS_SYNC") => Some(RawTask::Fsync),
                        "close" => {
                            if let Some(fd) = num(arg(&args, "fd")) {
                                fds.remove(&(fd as i64));
                            }
                            Some(RawTask::Close)
                        }
                        "ftruncate" | "truncate" => {
                            let size = num(words.get(1).copied()).ok_or_else(|| {
                                format!("bad trace: #{} {sc} without a size", e.seq)
                            })?;
                            Some(RawTask::Truncate {
                                size: pages_of(size, "truncate size")?,
                            })
                        }
                        "store" => {
                            let off = num(arg(&args, "off")).unwrap_or(0);
                            let page = off / PG;
                            p.store_page = Some(page);
                            Some(RawTask::Mmap {
                                page,
                                tag: words.get(1).copied().unwrap_or("").to_string(),
                            })
                        }
                        "mmap" | "munmap" | "msync_async" | "stat" => {
                            filt(&format!("syscall {sc}"));
                            None
                        }
                        other => return nm(format!("syscall {other} has no model task")),
                    };
                    if let Some(t) = task {
                        let idx = tasks.len();
                        let mut label = format!("{actor} {sc} {args}").trim().to_string();
                        if label.len() > 48 {
                            label.truncate(45);
                            label += "...";
                        }
                        tasks.push((t, label));
                        p.task = Some(idx);
                        raw.push((key, e.seq, RawObs::Call(idx), brief));
                    }
                    if pending.insert(actor.clone(), p).is_some() {
                        return Err(format!(
                            "bad trace: #{} {actor} issues {sc} while another call is pending",
                            e.seq
                        ));
                    }
                } else if kind == "ret" {
                    let p = pending.remove(&actor).ok_or_else(|| {
                        format!("bad trace: #{} ret without call for {actor}", e.seq)
                    })?;
                    if p.syscall != sc {
                        return Err(format!(
                            "bad trace: #{} ret {sc} but {actor} called {}",
                            e.seq, p.syscall
                        ));
                    }
                    if sc == "open" {
                        if let Some(fd) = e.ret.filter(|r| *r >= 0) {
                            let dio = last_open_reply
                                .take()
                                .map(|f| f.iter().any(|x| x == "FOPEN_DIRECT_IO"))
                                .unwrap_or(false);
                            let k = if dio {
                                FdKind::Dio
                            } else if p.open_flags & libc::O_DIRECT != 0 {
                                FdKind::Odirect
                            } else {
                                FdKind::Cached
                            };
                            fds.insert(fd, k);
                        }
                    }
                    if e.ret.unwrap_or(0) < 0 && p.task.is_some() && sc != "store" {
                        return nm(format!(
                            "{sc} failed (errno {}): errors are not modelled",
                            e.errno.unwrap_or(0)
                        ));
                    }
                    if let Some(t) = p.task {
                        raw.push((key, e.seq, RawObs::Ret(t), brief));
                    }
                }
            }
            "req" => {
                let op = e.op.clone().unwrap_or_default();
                let u = e
                    .unique
                    .ok_or_else(|| format!("bad trace: #{} req without unique", e.seq))?;
                if let (Some(pid), [(actor, _)]) = (
                    e.pid.filter(|p| *p != 0),
                    &pending.iter().collect::<Vec<_>>()[..],
                ) {
                    actor_pid.entry((*actor).clone()).or_insert(pid);
                }
                let r = match op.as_str() {
                    "WRITE" => {
                        let first = pages_of(e.offset.unwrap_or(0), "WRITE offset")?;
                        let n = pages_of(e.size.unwrap_or(0), "WRITE size")?;
                        let tags = e.page_tags.clone().unwrap_or_default();
                        if e.is_cache_write() {
                            Some(RawReq::CacheWrite { first, n, tags })
                        } else if !wbc && !pending.values().any(|p| p.direct_write) {
                            // fuse_perform_write's WRITE, sent by the writer
                            if e.pid == Some(0) {
                                return nm(format!("#{} a WRITE without FUSE_WRITE_CACHE from pid 0: not a write(2)'s", e.seq));
                            }
                            let writers: Vec<&String> = pending
                                .iter()
                                .filter(|(_, p)| p.through_write)
                                .map(|(a, _)| a)
                                .collect();
                            if let ([a], Some(pid)) = (&writers[..], e.pid) {
                                if actor_pid.get(*a).is_some_and(|w| *w != pid) {
                                    return nm(format!("#{} a write-through WRITE from pid {pid}, not from the writer {a}", e.seq));
                                }
                            }
                            Some(RawReq::ThroughWrite { first, n, tags })
                        } else {
                            Some(RawReq::DirectWrite { first, n, tags })
                        }
                    }
                    "READ" => {
                        let first = pages_of(e.offset.unwrap_or(0), "READ offset")?;
                        let n = pages_of(e.size.unwrap_or(0), "READ size")?;
                        if pending.values().any(|p| p.cached_read) {
                            filt("READ in a cached pread");
                            None
                        } else {
                            if let Some(sp) = pending.values().find_map(|p| p.store_page) {
                                if first != sp || n != 1 {
                                    return nm(format!("a page fault read {n} pages at page {first} (readahead/fault-around): the model's fault reads the faulting page only"));
                                }
                            }
                            Some(RawReq::Read { first, n })
                        }
                    }
                    "SETATTR" => match e.size {
                        Some(s) => Some(RawReq::Setattr {
                            size: pages_of(s, "SETATTR size")?,
                        }),
                        None => {
                            filt("SETATTR(times)");
                            None
                        }
                    },
                    "FSYNC" => Some(RawReq::Fsync),
                    "CREATE" => {
                        if !pending.values().any(|p| p.setup_open) {
                            return nm("CREATE outside the first open(): the model has one file, created by the setup open");
                        }
                        filt("CREATE");
                        None
                    }
                    "OPEN" => {
                        if pending.values().any(|p| p.setup_open) {
                            return nm("the first open() sent OPEN, not CREATE: the file existed, the model starts from a new empty file");
                        }
                        let opens: Vec<usize> = pending
                            .values()
                            .filter(|p| p.syscall == "open")
                            .filter_map(|p| p.task)
                            .collect();
                        let [task] = opens[..] else {
                            return nm(format!(
                                "an OPEN read while {} open() calls are pending: it cannot be given to one open task",
                                opens.len()
                            ));
                        };
                        let trunc = e
                            .flag_names
                            .as_ref()
                            .is_some_and(|f| f.iter().any(|x| x == "O_TRUNC"));
                        Some(RawReq::Open { task, trunc })
                    }
                    "FLUSH" => {
                        if !pending.values().any(|p| p.syscall == "close") {
                            // close() by the runner's cleanup, after the body.
                            let idx = tasks.len();
                            tasks.push((RawTask::Close, "(runner cleanup) close".into()));
                            implicit_flush.push((key, idx));
                        }
                        Some(RawReq::Flush)
                    }
                    other => {
                        if FILTERED_OPS.iter().any(|(o, _)| *o == other) {
                            filt(other);
                            None
                        } else {
                            return nm(format!(
                                "request {other} is not modelled and not in the filter list"
                            ));
                        }
                    }
                };
                if let Some(r) = &r {
                    raw.push((key, e.seq, RawObs::Read(r.clone()), brief));
                    inflight.insert(u);
                    max_inflight = max_inflight.max(inflight.len());
                }
                reqs.insert(u, r);
            }
            "reply" => {
                let u = e.unique.unwrap_or(0);
                if matches!(e.op.as_deref(), Some("OPEN") | Some("CREATE")) {
                    last_open_reply = e.result.as_ref().and_then(|r| {
                        r["open_flags"].as_array().map(|a| {
                            a.iter()
                                .filter_map(|x| x.as_str().map(str::to_string))
                                .collect()
                        })
                    });
                }
                if let Some(Some(r)) = reqs.remove(&u) {
                    inflight.remove(&u);
                    if matches!(r, RawReq::Open { .. })
                        && last_open_reply
                            .as_ref()
                            .is_some_and(|f| f.iter().any(|x| x == "FOPEN_KEEP_CACHE"))
                            != keep_cache
                    {
                        return nm(format!("{brief}: FOPEN_KEEP_CACHE in the reply disagrees with keep_cache={keep_cache} in the trace header"));
                    }
                    if e.result
                        .as_ref()
                        .and_then(|r| r["errno"].as_i64())
                        .is_some()
                    {
                        return nm(format!("{brief}: error replies are not modelled"));
                    }
                    let data = e
                        .result
                        .as_ref()
                        .and_then(|r| r["page_tags"].as_str().map(str::to_string));
                    raw.push((key, e.seq, RawObs::Reply(r, data), brief));
                }
            }
            _ => {}
        }
    }
    // Implicit closes start right after the body's last mark.
    for (k, idx) in implicit_flush {
        if k < last_mark_key {
            return nm("a FLUSH outside any close() before the workload ended");
        }
        raw.push((
            last_mark_key + 1,
            0,
            RawObs::Call(idx),
            "(runner cleanup closes its fds after the last mark)".into(),
        ));
    }
    raw.sort_by_key(|r| r.0);
    if tasks.is_empty() {
        return nm("no modelled syscall in the trace");
    }
    if tasks.len() > MODEL_TASKS {
        return nm(format!(
            "{} modelled syscalls; the model has at most {MODEL_TASKS} tasks",
            tasks.len()
        ));
    }
    if max_inflight > MODEL_WORKERS {
        return nm(format!("{max_inflight} modelled requests in flight at the server at once; the model has {MODEL_WORKERS} daemon workers"));
    }

    // ---- regions: the coarsest split of the file such that every syscall
    // range, request range and size is whole model pages.
    let mut bounds: Vec<u64> = vec![0];
    let mut add = |a: u64, n: u64| {
        bounds.push(a);
        bounds.push(a + n);
    };
    for (t, _) in &tasks {
        match t {
            RawTask::Write { first, n, .. }
            | RawTask::DioWrite { first, n, .. }
            | RawTask::OdirectWrite { first, n, .. }
            | RawTask::DioRead { first, n }
            | RawTask::OdirectRead { first, n } => add(*first, *n),
            RawTask::Mmap { page, .. } => add(*page, 1),
            RawTask::Truncate { size } => add(*size, 0),
            _ => {}
        }
    }
    for (_, _, o, _) in &raw {
        if let RawObs::Read(r) | RawObs::Reply(r, _) = o {
            match r {
                RawReq::CacheWrite { first, n, .. }
                | RawReq::DirectWrite { first, n, .. }
                | RawReq::ThroughWrite { first, n, .. }
                | RawReq::Read { first, n } => add(*first, *n),
                RawReq::Setattr { size } => add(*size, 0),
                _ => {}
            }
        }
    }
    bounds.sort();
    bounds.dedup();
    let regions: Vec<(u64, u64)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    if regions.is_empty() {
        return nm("the trace touches no page");
    }
    if regions.len() > MODEL_PAGES {
        return nm(format!(
            "needs {} model pages (page boundaries {:?}); the model has {MODEL_PAGES}",
            regions.len(),
            bounds
        ));
    }
    let at = |p: u64| bounds.iter().position(|b| *b == p).expect("boundary") as u8;
    let range = |first: u64, n: u64| (at(first), at(first + n) - at(first));
    // model max_pages: most consecutive model pages whose real pages fit one WRITE
    let mut max_pages = regions.len() as u8;
    while max_pages > 1
        && regions
            .windows(max_pages as usize)
            .any(|w| w.iter().map(|r| r.1 - r.0).sum::<u64>() > real_max_pages)
    {
        max_pages -= 1;
    }

    // ---- tasks and data versions
    let mut specs = vec![];
    let mut letters: BTreeMap<(u8, String), Vec<u8>> = BTreeMap::new();
    let mut zero_versions = vec![V_ZERO];
    let sub = |tags: &str, first: u64, r: (u64, u64)| -> String {
        let a = (r.0 - first) as usize;
        let b = (r.1 - first) as usize;
        tags.get(a..b).unwrap_or("").to_string()
    };
    for (i, (t, _)) in tasks.iter().enumerate() {
        let v = version_of(i);
        let mut data = |first: u64, n: u64, tags: &str| {
            let (a, m) = range(first, n);
            for p in a..a + m {
                let s = sub(tags, first, regions[p as usize]);
                let e = letters.entry((p, s)).or_default();
                if !e.contains(&v) {
                    e.push(v);
                }
            }
            (a, m)
        };
        let spec = match t {
            RawTask::Write { first, n, tags } => {
                let (first, n) = data(*first, *n, tags);
                TaskSpec::Write { first, n }
            }
            RawTask::DioWrite { first, n, tags } => {
                let (first, n) = data(*first, *n, tags);
                TaskSpec::DioWrite { first, n }
            }
            RawTask::OdirectWrite { first, n, tags } => {
                let (first, n) = data(*first, *n, tags);
                TaskSpec::OdirectWrite { first, n }
            }
            RawTask::Mmap { page, tag } => {
                let (first, _) = data(*page, 1, tag);
                TaskSpec::Mmap { page: first }
            }
            RawTask::DioRead { first, n } => {
                let (first, n) = range(*first, *n);
                TaskSpec::DioRead { first, n }
            }
            RawTask::OdirectRead { first, n } => {
                let (first, n) = range(*first, *n);
                TaskSpec::OdirectRead { first, n }
            }
            RawTask::Writeback => TaskSpec::Writeback { all: false },
            RawTask::Truncate { size } => {
                zero_versions.push(v);
                TaskSpec::Truncate { size: at(*size) }
            }
            RawTask::Fsync => TaskSpec::Fsync,
            RawTask::Close => TaskSpec::Close,
            RawTask::Open { trunc } => {
                if *trunc {
                    // the truncation writes zeros "by" the open task
                    zero_versions.push(v);
                }
                TaskSpec::Open {
                    trunc: *trunc,
                    keep_cache,
                }
            }
        };
        specs.push(spec);
    }
    let allowed = |p: u8, s: &str| -> Vec<u8> {
        if !s.is_empty() && s.chars().all(|c| c == '.') {
            zero_versions.clone()
        } else {
            letters
                .get(&(p, s.to_string()))
                .cloned()
                .unwrap_or_default()
        }
    };
    let payload = |first: u64, n: u64, tags: &str| -> Vec<Vec<u8>> {
        let (a, m) = range(first, n);
        (a..a + m)
            .map(|p| allowed(p, &sub(tags, first, regions[p as usize])))
            .collect()
    };
    let pat = |r: &RawReq| -> Pat {
        match r {
            RawReq::CacheWrite { first, n, tags }
            | RawReq::DirectWrite { first, n, tags }
            | RawReq::ThroughWrite { first, n, tags } => {
                let (f, m) = range(*first, *n);
                let payload = payload(*first, *n, tags);
                match r {
                    RawReq::CacheWrite { .. } => Pat::CacheWrite {
                        first: f,
                        n: m,
                        payload,
                    },
                    RawReq::DirectWrite { .. } => Pat::DirectWrite {
                        first: f,
                        n: m,
                        payload,
                    },
                    _ => Pat::ThroughWrite {
                        first: f,
                        n: m,
                        payload,
                    },
                }
            }
            RawReq::Read { first, n } => {
                let (f, m) = range(*first, *n);
                Pat::Read { first: f, n: m }
            }
            RawReq::Setattr { size } => Pat::Setattr { size: at(*size) },
            RawReq::Fsync => Pat::Fsync,
            RawReq::Flush => Pat::Flush,
            RawReq::Open { task, trunc } => Pat::Open {
                task: *task as u8,
                trunc: *trunc,
            },
        }
    };
    let mut obs = vec![];
    for (_, seq, o, what) in &raw {
        let o = match o {
            RawObs::Call(t) => Obs::Call(*t),
            RawObs::Ret(t) => Obs::Ret(*t),
            RawObs::Read(r) => Obs::Read(pat(r)),
            RawObs::Reply(r, data) => {
                let mut chk = vec![];
                if let (RawReq::Read { first, n }, Some(tags)) = (r, data) {
                    let (a, m) = range(*first, *n);
                    for p in a..a + m {
                        let reg = regions[p as usize];
                        if (reg.1 - first) as usize <= tags.len() {
                            chk.push((p, allowed(p, &sub(tags, *first, reg))));
                        }
                    }
                }
                Obs::Reply(pat(r), chk)
            }
        };
        obs.push(ObsAt {
            obs: o,
            seq: *seq,
            what: what.clone(),
        });
    }
    let cfg = Config {
        kernel: kstate,
        variant: Variant::base(kstate),
        pages: regions.len() as u8,
        init_size: 0,
        cached: 0,
        dirty: 0,
        daemon_threads: max_inflight.max(1) as u8,
        direct_io_allow_mmap: flag("direct_io_allow_mmap", false),
        parallel_dio: false,
        atomic_o_trunc: flag("atomic_o_trunc", false),
        folio_blocks: 1,
        writeback_cache: wbc,
        max_pages,
        tasks: specs,
    };
    cfg.validate()
        .map_err(|e| format!("model configuration: {e}"))?;
    Ok(Mapping {
        scenario: name,
        cfg,
        obs,
        regions,
        task_labels: tasks.into_iter().map(|t| t.1).collect(),
        letters,
        filtered,
        cut,
    })
}

/// Non-CACHE WRITEs read before `actor`'s next ret mark, and whether another
/// call is issued meanwhile.
fn writes_until_ret(rest: &[Event], actor: &str) -> (usize, bool) {
    let (mut writes, mut others) = (0, false);
    for f in rest {
        if f.ev == "mark" && f.kind.as_deref() == Some("ret") && f.actor.as_deref() == Some(actor) {
            break;
        }
        if f.ev == "mark" && f.kind.as_deref() == Some("call") {
            others = true;
        }
        if f.is_req("WRITE") && !f.is_cache_write() {
            writes += 1;
        }
    }
    (writes, others)
}

impl Mapping {
    /// Several lines: the model configuration and the mapping (for --verbose
    /// and reports).
    pub fn summary(&self) -> String {
        let mut s = format!(
            "  model: kernel {:?}, {} pages {:?} (4 KiB page ranges), max_pages {}, {} daemon worker(s)",
            self.cfg.kernel, self.cfg.pages, self.regions, self.cfg.max_pages, self.cfg.daemon_threads
        );
        s += &format!(
            "\n  tasks: {}",
            self.task_labels
                .iter()
                .enumerate()
                .map(|(i, l)| format!("T{i}={} [{l}]", self.cfg.tasks[i]))
                .collect::<Vec<_>>()
                .join(", ")
        );
        s += &format!(
            "\n  data: {}",
            self.letters
                .iter()
                .map(|((p, t), v)| {
                    let t = if t.len() > 6 {
                        format!("{}..({} pages)", &t[..3], t.len())
                    } else {
                        t.clone()
                    };
                    format!(
                        "p{p} '{t}'={}",
                        v.iter()
                            .map(|x| format!("v{x}"))
                            .collect::<Vec<_>>()
                            .join("|")
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        );
        s += &format!(
            "\n  filtered: {}",
            self.filtered
                .iter()
                .map(|(k, n)| format!("{k} x{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        s += &format!("\n  {} observable events", self.obs.len());
        if let Some(c) = &self.cut {
            s += &format!("\n  checked up to a cut; not modelled from {c}");
        }
        s
    }
}

// ---------------------------------------------------------------- search

/// A search node: a model state plus which tasks have been issued.
type Node = (State, u16);

#[derive(Debug, Clone)]
pub enum Verdict {
    Conforms {
        events: usize,
        explored: usize,
    },
    Violation {
        /// Index into `Mapping::obs` (== obs.len() for "cannot finish").
        index: usize,
        what: String,
        expected: String,
        /// Model states still possible just before the event.
        states: Vec<String>,
        possible: usize,
        /// Observable events the model could produce instead.
        instead: Vec<String>,
    },
    Inconclusive {
        index: usize,
        explored: usize,
    },
}

impl Verdict {
    pub fn short(&self) -> String {
        match self {
            Verdict::Conforms { .. } => "conforms".into(),
            Verdict::Violation {
                index,
                what,
                expected,
                ..
            } => {
                format!("VIOLATION at event {index} ({what}): the model cannot produce {expected}")
            }
            Verdict::Inconclusive { index, explored } => {
                format!("inconclusive (state bound hit at event {index} after {explored} states)")
            }
        }
    }

    /// Multi-line report with the possible model states.
    pub fn report(&self, m: &Mapping) -> String {
        let mut s = self.short();
        if let Verdict::Violation {
            states,
            possible,
            instead,
            ..
        } = self
        {
            s += "\n";
            s += &m.summary();
            s += &format!(
                "\n  the model could instead: {}",
                if instead.is_empty() {
                    "nothing observable".into()
                } else {
                    instead.join("; ")
                }
            );
            s += &format!(
                "\n  {possible} model states possible before it; {} of them:",
                states.len()
            );
            for st in states {
                for l in st.lines() {
                    s += &format!("\n    {l}");
                }
                s += "\n    --";
            }
        }
        s
    }
}

fn payload_ok(want: &[Vec<u8>], first: u8, got: &[u8]) -> bool {
    want.iter()
        .enumerate()
        .all(|(i, w)| w.contains(&got[first as usize + i]))
}

/// Does a request (with the payload the daemon copied) match a pattern?
fn matches(p: &Pat, req: &Req, payload: &[u8]) -> bool {
    match (p, *req) {
        (
            Pat::CacheWrite {
                first,
                n,
                payload: w,
            },
            Req::CacheWrite { first: f, sent, .. },
        ) => *first == f && *n == sent && payload_ok(w, f, payload),
        (
            Pat::DirectWrite {
                first,
                n,
                payload: w,
            },
            Req::DirectWrite { first: f, n: m, .. },
        ) => *first == f && *n == m && payload_ok(w, f, payload),
        (
            Pat::ThroughWrite {
                first,
                n,
                payload: w,
            },
            Req::ThroughWrite { first: f, n: m, .. },
        ) => *first == f && *n == m && payload_ok(w, f, payload),
        (Pat::Read { first, n }, Req::Read { first: f, n: m, .. }) => *first == f && *n == m,
        (Pat::Setattr { size }, Req::Setattr { size: s, .. }) => *size == s,
        (Pat::Fsync, Req::Fsync { .. }) => true,
        (Pat::Flush, Req::Flush { .. }) => true,
        (Pat::Open { task, trunc }, Req::Open { task: t, trunc: tr }) => *task == t && *trunc == tr,
        _ => false,
    }
}

fn free_steps(model: &FuseModel, n: &Node, out: &mut Vec<Node>) {
    let mut acts = vec![];
    model.enabled(&n.0, &mut acts);
    for a in acts {
        let free = match a.actor {
            Actor::Task(t) => n.1 & (1 << t) != 0,
            Actor::Daemon(_) => a.step == Step::WritepageEnd,
        };
        if free {
            if let Some(s) = model.step(&n.0, a) {
                out.push((s, n.1));
            }
        }
    }
}

/// Observable successors of `n` matching `o` (Read / Reply only).
fn observe(model: &FuseModel, n: &Node, o: &Obs, out: &mut Vec<Node>) {
    let nw = model.cfg.daemon_threads as usize;
    match o {
        Obs::Read(p) => {
            for w in 0..nw {
                let a = Action {
                    actor: Actor::Daemon(w as u8),
                    step: Step::DaemonRead,
                };
                if let Some(s) = model.step(&n.0, a) {
                    if let Worker::Busy { req, payload } = s.workers[w] {
                        if matches(p, &req, &payload) {
                            out.push((s, n.1));
                        }
                    }
                }
            }
        }
        Obs::Reply(p, data) => {
            for w in 0..nw {
                if let Worker::Busy { req, payload } = n.0.workers[w] {
                    if !matches(p, &req, &payload) {
                        continue;
                    }
                    let srv_ok = data.iter().all(|(pg, allowed)| {
                        *pg < n.0.srv_size && allowed.contains(&n.0.srv[*pg as usize])
                    });
                    if !srv_ok {
                        continue;
                    }
                    let a = Action {
                        actor: Actor::Daemon(w as u8),
                        step: Step::DaemonReply,
                    };
                    if let Some(s) = model.step(&n.0, a) {
                        out.push((s, n.1));
                    }
                }
            }
        }
        _ => {}
    }
}

/// What observable events a node offers (for reports).
fn offers(model: &FuseModel, n: &Node, out: &mut Vec<String>) {
    let nw = model.cfg.daemon_threads as usize;
    for w in 0..nw {
        let a = Action {
            actor: Actor::Daemon(w as u8),
            step: Step::DaemonRead,
        };
        if let Some(s) = model.step(&n.0, a) {
            if let Worker::Busy { req, payload } = s.workers[w] {
                out.push(format!("read {req}{}", show_payload(&req, &payload)));
            }
        }
        if let Worker::Busy { req, .. } = n.0.workers[w] {
            out.push(format!("reply to {req}"));
        }
    }
}

fn show_payload(req: &Req, payload: &[u8]) -> String {
    match *req {
        Req::CacheWrite { first, sent: n, .. }
        | Req::DirectWrite { first, n, .. }
        | Req::ThroughWrite { first, n, .. } => format!(
            " payload [{}]",
            (first..first + n)
                .map(|p| match payload[p as usize] {
                    NONE => "-".to_string(),
                    v => format!("v{v}"),
                })
                .collect::<Vec<_>>()
                .join(",")
        ),
        _ => String::new(),
    }
}

fn closure(
    model: &FuseModel,
    start: Vec<Node>,
    explored: &mut usize,
    bound: usize,
) -> Option<Vec<Node>> {
    let mut seen: HashSet<Node> = HashSet::new();
    let mut q: VecDeque<Node> = VecDeque::new();
    for n in start {
        if seen.insert(n) {
            q.push_back(n);
        }
    }
    let mut all = vec![];
    let mut buf = vec![];
    while let Some(n) = q.pop_front() {
        *explored += 1;
        if *explored > bound {
            return None;
        }
        buf.clear();
        free_steps(model, &n, &mut buf);
        for m in buf.drain(..) {
            if seen.insert(m) {
                q.push_back(m);
            }
        }
        all.push(n);
    }
    Some(all)
}

fn describe(m: &Mapping, o: &Obs) -> String {
    match o {
        Obs::Call(t) => format!("the start of T{t} {}", m.cfg.tasks[*t]),
        Obs::Ret(t) => format!("the return of T{t} {}", m.cfg.tasks[*t]),
        Obs::Read(p) => format!("a daemon read of {p}"),
        Obs::Reply(p, d) if d.is_empty() => format!("a reply to {p}"),
        Obs::Reply(p, d) => format!(
            "a reply to {p} returning [{}]",
            d.iter()
                .map(|(pg, v)| format!(
                    "p{pg}:{}",
                    v.iter()
                        .map(|x| format!("v{x}"))
                        .collect::<Vec<_>>()
                        .join("|")
                ))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

fn violation(
    model: &FuseModel,
    m: &Mapping,
    index: usize,
    what: String,
    expected: String,
    cl: &[Node],
) -> Verdict {
    let mut instead = vec![];
    for n in cl {
        offers(model, n, &mut instead);
    }
    instead.sort();
    instead.dedup();
    instead.truncate(8);
    let states = cl
        .iter()
        .rev()
        .take(3)
        .map(|n| {
            let started: Vec<String> = (0..m.cfg.tasks.len())
                .filter(|t| n.1 & (1 << t) != 0)
                .map(|t| {
                    format!(
                        "T{t}{}",
                        if model.task_done(&n.0, t) {
                            "(done)"
                        } else {
                            ""
                        }
                    )
                })
                .collect();
            format!("issued: {}\n{:?}", started.join(" "), n.0)
        })
        .collect();
    Verdict::Violation {
        index,
        what,
        expected,
        states,
        possible: cl.len(),
        instead,
    }
}

/// Search the model for a behaviour producing exactly `m.obs`.
pub fn check(m: &Mapping, bound: usize) -> Verdict {
    let model = FuseModel::new(m.cfg.clone()).expect("validated config");
    let mut frontier: Vec<Node> = vec![(model.initial(), 0)];
    let mut explored = 0usize;
    for (i, oa) in m.obs.iter().enumerate() {
        let Some(cl) = closure(&model, frontier, &mut explored, bound) else {
            return Verdict::Inconclusive { index: i, explored };
        };
        let mut next: Vec<Node> = vec![];
        match &oa.obs {
            Obs::Call(t) => next.extend(cl.iter().map(|n| (n.0, n.1 | (1 << t)))),
            Obs::Ret(t) => next.extend(cl.iter().filter(|n| model.task_done(&n.0, *t)).copied()),
            o => {
                for n in &cl {
                    observe(&model, n, o, &mut next);
                }
            }
        }
        if next.is_empty() {
            return violation(&model, m, i, oa.what.clone(), describe(m, &oa.obs), &cl);
        }
        let mut seen = HashSet::new();
        next.retain(|n| seen.insert(*n));
        frontier = next;
    }
    let Some(cl) = closure(&model, frontier, &mut explored, bound) else {
        return Verdict::Inconclusive {
            index: m.obs.len(),
            explored,
        };
    };
    if cl.iter().any(|n| model.all_finished(&n.0)) {
        Verdict::Conforms {
            events: m.obs.len(),
            explored,
        }
    } else {
        violation(
            &model,
            m,
            m.obs.len(),
            "end of trace".into(),
            "a finished state (all tasks returned, nothing queued or in flight) without further observable events".into(),
            &cl,
        )
    }
}

/// Translate and check one trace: the `model=...` word of a Conform line.
pub fn conform_trace(
    events: &[Event],
    scenario: Option<&str>,
) -> Result<(String, bool, Option<String>), String> {
    match translate(events, scenario)? {
        Translation::NotModelled(why) => Ok((format!("not-modelled ({why})"), true, None)),
        Translation::Modelled(m) => {
            let v = check(&m, DEFAULT_BOUND);
            let ok = matches!(v, Verdict::Conforms { .. });
            // A prefix that conforms is not a conforming trace: say where it
            // was cut.
            let word = match (&v, &m.cut) {
                (Verdict::Conforms { .. }, Some(c)) => {
                    format!("conforms-to-cut (not modelled from {c})")
                }
                _ => v.short(),
            };
            let detail = match &v {
                Verdict::Conforms { explored, .. } => format!(
                    "{}\n{}\n  {explored} model states explored",
                    v.short(),
                    m.summary()
                ),
                _ => v.report(&m),
            };
            Ok((word, ok, Some(detail)))
        }
    }
}

// ---------------------------------------------------------------- CLI

const USAGE: &str = "usage: conform [SCENARIO...] [--keep-traces DIR] [--verbose]\n       conform --trace FILE [--scenario NAME] [--verbose]";

/// `conform [SCENARIO…] [--keep-traces DIR]` and `conform --trace FILE
/// [--scenario NAME]` (args after the subcommand). Prints one line per
/// scenario; returns 0 all good, 1 a kernel outcome failed or a trace does not
/// conform (or is inconclusive), 2 usage or input error.
pub fn conform_main(args: &[String]) -> i32 {
    let mut names = vec![];
    let mut keep: Option<std::path::PathBuf> = None;
    let mut trace: Option<std::path::PathBuf> = None;
    let mut scen: Option<String> = None;
    let mut verbose = false;
    let mut it = args.iter();
    let err = |m: &str| {
        eprintln!("conform: {m} (try --help)");
        2
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--keep-traces" => match it.next() {
                Some(d) => keep = Some(d.into()),
                None => return err("--keep-traces needs DIR"),
            },
            "--trace" => match it.next() {
                Some(f) => trace = Some(f.into()),
                None => return err("--trace needs FILE"),
            },
            "--scenario" => match it.next() {
                Some(s) => scen = Some(s.clone()),
                None => return err("--scenario needs NAME"),
            },
            "--verbose" | "-v" => verbose = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return 0;
            }
            s if s.starts_with('-') => return err(&format!("unknown option {s}")),
            s => {
                if !crate::scenarios::all().iter().any(|x| x.name == s) {
                    return err(&format!("unknown scenario {s} (see `wbspec-harness list`)"));
                }
                names.push(s.to_string());
            }
        }
    }
    if let Some(f) = trace {
        if !names.is_empty() || keep.is_some() {
            return err("--trace takes no scenario names and no --keep-traces");
        }
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("conform: read {}: {e}", f.display());
                return 2;
            }
        };
        let events = match crate::trace::parse_trace(&text) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("conform: {}: {e}", f.display());
                return 2;
            }
        };
        let name = scen
            .clone()
            .or_else(|| events.first().and_then(|h| h.scenario.clone()))
            .unwrap_or_else(|| f.display().to_string());
        return match conform_trace(&events, scen.as_deref()) {
            Ok((word, ok, detail)) => {
                println!("Conform {name} kernel=n/a model={word}");
                if let Some(d) = detail.filter(|_| verbose || !ok) {
                    println!("{}", d.lines().skip(1).collect::<Vec<_>>().join("\n"));
                }
                if ok {
                    0
                } else {
                    1
                }
            }
            Err(e) => {
                eprintln!("conform: {}: {e}", f.display());
                2
            }
        };
    }
    if scen.is_some() {
        return err("--scenario only goes with --trace");
    }
    if let Some(why) = crate::runner::cannot_run() {
        println!("Conform skipped: {why}");
        return 0;
    }
    let recorder = std::env::var_os("WBSPEC_FUSE_RECORDER")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::current_exe()
                .ok()
                .map(|e| e.with_file_name("fuse-recorder"))
        });
    let recorder = match recorder.filter(|r| r.exists()) {
        Some(r) => r,
        None => {
            eprintln!("conform: fuse-recorder not found next to this binary (build it: cargo build --release -p wbspec-harness, or set WBSPEC_FUSE_RECORDER)");
            return 2;
        }
    };
    let mut opts = crate::runner::RunOptions::new(recorder);
    opts.keep_traces = keep;
    let mut bad = 0;
    let (mut conf, mut part, mut notm) = (0, 0, 0);
    crate::runner::run_suite(&names, &opts, |o| {
        if o.outcome == "skipped" {
            println!(
                "Conform {} skipped: {}",
                o.name,
                o.detail.as_deref().unwrap_or("")
            );
            return;
        }
        let kernel = if o.outcome == "pass" {
            "pass".to_string()
        } else {
            bad += 1;
            format!("FAIL({})", o.failed_check.as_deref().unwrap_or("?"))
        };
        let (word, ok, detail) = match conform_trace(&o.trace, Some(&o.name)) {
            Ok(x) => x,
            Err(e) => (format!("ERROR ({e})"), false, None),
        };
        if !ok {
            bad += 1;
        } else if word.starts_with("conforms-to-cut") {
            part += 1;
        } else if word.starts_with("conforms") {
            conf += 1;
        } else {
            notm += 1;
        }
        println!("Conform {} kernel={kernel} model={word}", o.name);
        if let Some(d) = detail.filter(|_| verbose || !ok) {
            println!("{}", d.lines().skip(1).collect::<Vec<_>>().join("\n"));
        }
    });
    println!("{conf} conform, {part} conform up to a cut, {notm} not modelled, {bad} failed");
    if bad > 0 {
        1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A hand-written trace in a compact notation, one event per line:
    /// `call T0 pwrite fd=6 off=0 AB` / `ret T0 pwrite 8192` (marks),
    /// `req U OP [off size tags] [cache] [size=N]`, `reply U OP [k=v...]`.
    fn tr(cfg: serde_json::Value, lines: &[&str]) -> Vec<Event> {
        let mut base = json!({"writeback_cache": true, "max_write": 1048576,
            "max_background": 16, "congestion_threshold": 12, "keep_cache": false,
            "dio_on_odirect": true, "direct_io_allow_mmap": false, "atomic_o_trunc": false});
        for (k, v) in cfg.as_object().unwrap() {
            base[k] = v.clone();
        }
        let mut v = vec![Event::header("6.18.44-test", base, "hand")];
        for (i, l) in lines.iter().enumerate() {
            let w: Vec<&str> = l.split_whitespace().collect();
            let mut e = match w[0] {
                "call" | "ret" => Event::mark(l),
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
                    for x in &w[3..] {
                        if let Some(s) = x.strip_prefix("size=") {
                            e.size = s.parse().ok();
                        } else if let Some(p) = x.strip_prefix("pid=") {
                            e.pid = p.parse().ok();
                        } else if *x == "O_TRUNC" {
                            e.flag_names = Some(vec!["O_RDWR".into(), "O_TRUNC".into()]);
                        }
                    }
                    e
                }
                "reply" => {
                    let mut e = Event::new("reply");
                    e.unique = w[1].parse().ok();
                    e.op = Some(w[2].into());
                    let mut r = json!({});
                    for x in &w[3..] {
                        if let Some(t) = x.strip_prefix("tags=") {
                            r["page_tags"] = json!(t);
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
                    e.result = Some(r);
                    e
                }
                other => panic!("bad line {other}"),
            };
            e.seq = i as u64 + 2;
            v.push(e);
        }
        v
    }

    fn mapping(ev: &[Event]) -> Mapping {
        match translate(ev, None).unwrap() {
            Translation::Modelled(m) => *m,
            Translation::NotModelled(w) => panic!("not modelled: {w}"),
        }
    }

    fn not_modelled(ev: &[Event]) -> String {
        match translate(ev, None).unwrap() {
            Translation::Modelled(_) => panic!("unexpectedly modelled"),
            Translation::NotModelled(w) => w,
        }
    }

    const OPEN: &[&str] = &[
        "call T0 open f 0x42",
        "req 4 CREATE",
        "reply 4 CREATE",
        "ret T0 open 6",
    ];

    /// b_ftrunc as recorded on 6.18.44 (filtered events left out).
    fn b_ftrunc(tail: &[&str]) -> Vec<Event> {
        let mut l: Vec<&str> = OPEN.to_vec();
        l.extend([
            "call T0 pwrite fd=6 off=0 ABCD",
            "req 8 GETXATTR",
            "reply 8 GETXATTR",
            "ret T0 pwrite 16384",
            "call T0 sync_file_range fd=6 0 0 WRITE",
            "ret T0 sync_file_range 0",
            "req 10 WRITE 0 16384 ABCD cache",
            "call T1 ftruncate fd=6 4096",
        ]);
        l.extend(tail);
        tr(json!({}), &l)
    }

    const FTRUNC_OK: &[&str] = &[
        "reply 10 WRITE",
        "req 12 SETATTR size=4096",
        "reply 12 SETATTR",
        "ret T1 ftruncate 0",
        "req 16 SETATTR",
        "reply 16 SETATTR",
        "req 18 FLUSH",
        "reply 18 FLUSH",
        "req 20 RELEASE",
        "reply 20 RELEASE",
    ];

    #[test]
    fn mapping_of_b_ftrunc() {
        let m = mapping(&b_ftrunc(FTRUNC_OK));
        assert_eq!(m.regions, vec![(0, 1), (1, 4)]);
        assert_eq!(m.cfg.kernel, Kernel::T2);
        assert_eq!(m.cfg.pages, 2);
        assert_eq!(m.cfg.daemon_threads, 1);
        assert_eq!(m.cfg.max_pages, 2);
        assert_eq!(
            m.cfg.tasks,
            vec![
                TaskSpec::Write { first: 0, n: 2 },
                TaskSpec::Writeback { all: false },
                TaskSpec::Truncate { size: 1 },
                TaskSpec::Close,
            ]
        );
        assert_eq!(m.letters[&(0, "A".to_string())], vec![2]);
        assert_eq!(m.letters[&(1, "BCD".to_string())], vec![2]);
        assert_eq!(m.task_labels[3], "(runner cleanup) close");
        // GETXATTR, SETATTR(times), RELEASE and the open are filtered
        assert_eq!(m.filtered["GETXATTR"], 1);
        assert_eq!(m.filtered["SETATTR(times)"], 1);
        assert_eq!(m.filtered["RELEASE"], 1);
        assert_eq!(m.filtered["syscall open (setup)"], 1);
        let reads: Vec<&Obs> = m
            .obs
            .iter()
            .map(|o| &o.obs)
            .filter(|o| matches!(o, Obs::Read(_)))
            .collect();
        assert_eq!(
            reads,
            vec![
                &Obs::Read(Pat::CacheWrite {
                    first: 0,
                    n: 2,
                    payload: vec![vec![2], vec![2]]
                }),
                &Obs::Read(Pat::Setattr { size: 1 }),
                &Obs::Read(Pat::Flush),
            ]
        );
        // the implicit close starts after the last mark
        let last = m.obs.last().unwrap();
        assert_eq!(last.obs, Obs::Reply(Pat::Flush, vec![]));
        assert!(m.obs.iter().any(|o| o.obs == Obs::Call(3) && o.seq == 0));
    }

    #[test]
    fn b_ftrunc_conforms() {
        let m = mapping(&b_ftrunc(FTRUNC_OK));
        let v = check(&m, DEFAULT_BOUND);
        assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.report(&m));
    }

    /// a1: SETATTR(size) read while the page-cache WRITE is outstanding.
    #[test]
    fn setattr_during_cache_write_does_not_conform() {
        let ev = b_ftrunc(&[
            "req 12 SETATTR size=4096",
            "reply 12 SETATTR",
            "reply 10 WRITE",
            "ret T1 ftruncate 0",
            "req 18 FLUSH",
            "reply 18 FLUSH",
        ]);
        let m = mapping(&ev);
        match check(&m, DEFAULT_BOUND) {
            Verdict::Violation {
                index,
                expected,
                instead,
                possible,
                states,
                ..
            } => {
                assert_eq!(m.obs[index].obs, Obs::Read(Pat::Setattr { size: 1 }));
                assert!(expected.contains("SETATTR(size=1p)"), "{expected}");
                assert_eq!(instead, vec!["reply to WRITE(p0-1)".to_string()]);
                assert!(possible > 0 && !states.is_empty());
            }
            v => panic!("expected a violation, got {}", v.short()),
        }
    }

    /// a2/crop: after truncating to 1 page, a queued WRITE must be cropped.
    #[test]
    fn write_beyond_new_size_does_not_conform() {
        let mut l: Vec<&str> = OPEN.to_vec();
        l.extend([
            "call T0 pwrite fd=6 off=0 ABCD",
            "ret T0 pwrite 16384",
            "call T1 ftruncate fd=6 4096",
            "req 10 SETATTR size=4096",
            "call T2 sync_file_range fd=6 0 0 WRITE",
            "ret T2 sync_file_range 0",
            "reply 10 SETATTR",
        ]);
        let ok = [
            "req 12 WRITE 0 4096 A cache",
            "reply 12 WRITE",
            "ret T1 ftruncate 0",
            "req 18 FLUSH",
            "reply 18 FLUSH",
        ];
        let bad = [
            "req 12 WRITE 0 16384 ABCD cache",
            "reply 12 WRITE",
            "ret T1 ftruncate 0",
            "req 18 FLUSH",
            "reply 18 FLUSH",
        ];
        let good: Vec<&str> = l.iter().copied().chain(ok).collect();
        let m = mapping(&tr(json!({}), &good));
        let v = check(&m, DEFAULT_BOUND);
        assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.report(&m));
        let badl: Vec<&str> = l.iter().copied().chain(bad).collect();
        let m = mapping(&tr(json!({}), &badl));
        let v = check(&m, DEFAULT_BOUND);
        let Verdict::Violation { index, instead, .. } = &v else {
            panic!("expected a violation, got {}", v.short());
        };
        assert!(matches!(
            m.obs[*index].obs,
            Obs::Read(Pat::CacheWrite { n: 2, .. })
        ));
        assert!(instead[0].contains("cropped"), "{instead:?}");
    }

    /// c2: the payload is read when the daemon reads the request; a stale
    /// payload after a later write(2) has returned is not a model behaviour.
    #[test]
    fn stale_payload_does_not_conform() {
        let mut l: Vec<&str> = OPEN.to_vec();
        l.extend([
            "call T0 pwrite fd=6 off=0 A",
            "ret T0 pwrite 4096",
            "call T0 sync_file_range fd=6 0 0 WRITE",
            "ret T0 sync_file_range 0",
            "call T0 pwrite fd=6 off=0 Z",
            "ret T0 pwrite 4096",
        ]);
        for (tag, ok) in [("Z", true), ("A", false)] {
            let w = format!("req 10 WRITE 0 4096 {tag} cache");
            let mut x = l.clone();
            x.push(&w);
            x.extend([
                "reply 10 WRITE",
                "call T0 fsync fd=6",
                "req 12 WRITE 0 4096 Z cache",
                "reply 12 WRITE",
                "req 14 FSYNC",
                "reply 14 FSYNC",
                "ret T0 fsync 0",
                "call T0 close fd=6",
                "req 16 FLUSH",
                "reply 16 FLUSH",
                "ret T0 close 0",
            ]);
            let m = mapping(&tr(json!({}), &x));
            let v = check(&m, DEFAULT_BOUND);
            assert_eq!(
                matches!(v, Verdict::Conforms { .. }),
                ok,
                "{}",
                v.report(&m)
            );
        }
    }

    /// b1/b2 with FOPEN_DIRECT_IO: the direct READ returns the flushed data;
    /// a READ reply with the old (zero) data does not conform.
    #[test]
    fn direct_read_data_is_checked() {
        let base = [
            "call T0 open f 0x42",
            "req 4 CREATE",
            "reply 4 CREATE",
            "ret T0 open 6",
            "call T0 open f 0x4002",
            "req 6 OPEN",
            "reply 6 OPEN FOPEN_DIRECT_IO",
            "ret T0 open 7",
            "call T0 pwrite fd=6 off=0 AB",
            "ret T0 pwrite 8192",
            "call T1 pread fd=7 off=0 len=8192",
            "req 12 WRITE 0 8192 AB cache",
            "reply 12 WRITE",
            "req 14 READ 0 8192",
        ];
        for (reply, ok) in [
            ("reply 14 READ tags=AB", true),
            ("reply 14 READ tags=..", false),
        ] {
            let mut l = base.to_vec();
            l.extend([
                reply,
                "ret T1 pread 8192",
                "call T0 close fd=7",
                "req 18 FLUSH",
                "reply 18 FLUSH",
                "ret T0 close 0",
            ]);
            let m = mapping(&tr(json!({}), &l));
            assert_eq!(
                m.cfg.tasks[0],
                TaskSpec::Open {
                    trunc: false,
                    keep_cache: false
                }
            );
            assert_eq!(m.cfg.tasks[2], TaskSpec::DioRead { first: 0, n: 1 });
            let v = check(&m, DEFAULT_BOUND);
            assert_eq!(
                matches!(v, Verdict::Conforms { .. }),
                ok,
                "{}",
                v.report(&m)
            );
        }
    }

    /// A trace that stops while the model still owes observable work.
    #[test]
    fn unfinished_trace_does_not_conform() {
        let mut l: Vec<&str> = OPEN.to_vec();
        l.extend([
            "call T0 pwrite fd=6 off=0 A",
            "ret T0 pwrite 4096",
            "call T0 fsync fd=6",
        ]);
        let m = mapping(&tr(json!({}), &l));
        let v = check(&m, DEFAULT_BOUND);
        let Verdict::Violation { index, .. } = v else {
            panic!("expected a violation, got {}", v.short());
        };
        assert_eq!(index, m.obs.len());
    }

    /// open(O_TRUNC) with atomic_o_trunc (b_otrunc_atomic): the OPEN carries
    /// O_TRUNC and is sent under FUSE_NOWRITE, so only after the page-cache
    /// WRITE's reply; an OPEN(O_TRUNC) read while the WRITE is outstanding
    /// does not conform. Without atomic_o_trunc the OPEN has no O_TRUNC and
    /// may be answered during the hold; SETATTR(0) follows the WRITE reply.
    #[test]
    fn open_trunc_is_checked() {
        let mut l: Vec<&str> = OPEN.to_vec();
        l.extend([
            "call T0 pwrite fd=6 off=0 ABCD",
            "ret T0 pwrite 16384",
            "call T0 sync_file_range fd=6 0 0 WRITE",
            "ret T0 sync_file_range 0",
            "req 10 WRITE 0 16384 ABCD cache",
            "call T1 open f O_RDWR|O_TRUNC",
        ]);
        let tail = [
            "ret T1 open 9",
            "req 16 FLUSH",
            "reply 16 FLUSH",
            "req 20 FLUSH",
            "reply 20 FLUSH",
        ];
        let run = |cfg: serde_json::Value, mid: &[&str]| {
            let x: Vec<&str> = l.iter().chain(mid).chain(&tail).copied().collect();
            let m = mapping(&tr(cfg, &x));
            let v = check(&m, DEFAULT_BOUND);
            (m, v)
        };
        let atomic = json!({"atomic_o_trunc": true});
        let (m, v) = run(
            atomic.clone(),
            &["reply 10 WRITE", "req 12 OPEN O_TRUNC", "reply 12 OPEN"],
        );
        assert!(m.cfg.atomic_o_trunc);
        assert_eq!(
            m.cfg.tasks[2],
            TaskSpec::Open {
                trunc: true,
                keep_cache: false
            }
        );
        assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.report(&m));
        let (m, v) = run(
            atomic.clone(),
            &["req 12 OPEN O_TRUNC", "reply 12 OPEN", "reply 10 WRITE"],
        );
        let Verdict::Violation { index, instead, .. } = &v else {
            panic!("expected a violation, got {}", v.short());
        };
        assert_eq!(
            m.obs[*index].obs,
            Obs::Read(Pat::Open {
                task: 2,
                trunc: true
            })
        );
        assert_eq!(instead, &vec!["reply to WRITE(p0)".to_string()]);
        // with atomic_o_trunc the OPEN must carry O_TRUNC
        let (_, v) = run(atomic, &["reply 10 WRITE", "req 12 OPEN", "reply 12 OPEN"]);
        assert!(matches!(v, Verdict::Violation { .. }), "{}", v.short());
        // without: OPEN during the hold, SETATTR(0) after the WRITE reply
        let (m, v) = run(
            json!({}),
            &[
                "req 12 OPEN",
                "reply 12 OPEN",
                "reply 10 WRITE",
                "req 14 SETATTR size=0",
                "reply 14 SETATTR",
            ],
        );
        assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.report(&m));
        let (_, v) = run(
            json!({}),
            &[
                "req 12 OPEN",
                "reply 12 OPEN",
                "req 14 SETATTR size=0",
                "reply 14 SETATTR",
                "reply 10 WRITE",
            ],
        );
        assert!(matches!(v, Verdict::Violation { .. }), "{}", v.short());
    }

    #[test]
    fn bound_hit_is_inconclusive() {
        let m = mapping(&b_ftrunc(FTRUNC_OK));
        assert!(matches!(check(&m, 5), Verdict::Inconclusive { .. }));
    }

    #[test]
    fn not_modelled_reasons() {
        let l: Vec<&str> = OPEN
            .iter()
            .copied()
            .chain(["call T0 pwrite fd=6 off=0 A", "ret T0 pwrite 4096"])
            .collect();
        assert!(not_modelled(&tr(
            json!({"max_background": 4, "congestion_threshold": 3}),
            &l
        ))
        .contains("congestion"));
        // opens: a second file, a first open that does not create, an OPEN
        // reply whose FOPEN_KEEP_CACHE disagrees with the header, a CREATE
        // outside the setup open
        let mut o = l.clone();
        o.push("call T1 open g O_RDWR");
        assert!(not_modelled(&tr(json!({}), &o)).contains("second file"));
        assert!(not_modelled(&tr(json!({}), &["call T0 open f 0x2"])).contains("O_CREAT"));
        let mut o = l.clone();
        o.extend(["call T1 open f 0x2", "req 10 OPEN", "reply 10 OPEN"]);
        assert!(not_modelled(&tr(json!({"keep_cache": true}), &o)).contains("disagrees"));
        let mut o = l.clone();
        o.extend(["call T1 open f 0x2", "req 10 CREATE"]);
        assert!(not_modelled(&tr(json!({}), &o)).contains("CREATE outside"));
        let mut o = l.clone();
        o.extend(["call T0 pwrite fd=6 off=8192 B", "ret T0 pwrite 4096"]);
        o.extend(["call T0 pwrite fd=6 off=20480 C", "ret T0 pwrite 4096"]);
        assert!(not_modelled(&tr(json!({}), &o)).contains("model pages"));
        let mut o = l.clone();
        o.push("call T0 fallocate fd=6");
        assert!(not_modelled(&tr(json!({}), &o)).contains("no model task"));
    }

    const NOWBC: fn() -> serde_json::Value = || json!({"writeback_cache": false});

    /// a_nowbc's start: write-through pwrites "A" and "B", each with one
    /// synchronous WRITE (no FUSE_WRITE_CACHE) inside the syscall.
    fn nowbc(body: &[&str]) -> Vec<Event> {
        let mut l: Vec<&str> = OPEN.to_vec();
        l.extend([
            "call T0 pwrite fd=6 off=0 A",
            "req 8 GETXATTR pid=7",
            "reply 8 GETXATTR",
            "req 10 WRITE 0 4096 A pid=7",
            "reply 10 WRITE",
            "ret T0 pwrite 4096",
        ]);
        l.extend(body);
        tr(NOWBC(), &l)
    }

    #[test]
    fn write_through_is_checked() {
        let ok = nowbc(&[
            "call T0 pwrite fd=6 off=4096 B",
            "req 12 WRITE 4096 4096 B pid=7",
            "reply 12 WRITE",
            "ret T0 pwrite 4096",
        ]);
        let m = mapping(&ok);
        assert!(!m.cfg.writeback_cache);
        assert_eq!(m.cfg.tasks[1], TaskSpec::Write { first: 1, n: 1 });
        assert!(m.obs.iter().any(|o| o.obs
            == Obs::Read(Pat::ThroughWrite {
                first: 1,
                n: 1,
                payload: vec![vec![3]],
            })));
        let v = check(&m, DEFAULT_BOUND);
        assert!(matches!(v, Verdict::Conforms { .. }), "{}", v.report(&m));
        // the WRITE read before the pwrite is issued
        let early = nowbc(&[
            "req 12 WRITE 4096 4096 B pid=7",
            "reply 12 WRITE",
            "call T0 pwrite fd=6 off=4096 B",
            "ret T0 pwrite 4096",
        ]);
        let m = mapping(&early);
        match check(&m, DEFAULT_BOUND) {
            Verdict::Violation { index, .. } => {
                assert!(matches!(
                    m.obs[index].obs,
                    Obs::Read(Pat::ThroughWrite { .. })
                ))
            }
            v => panic!("expected a violation, got {}", v.short()),
        }
        // the WRITE carries the first write's letter
        let stale = nowbc(&[
            "call T0 pwrite fd=6 off=4096 B",
            "req 12 WRITE 4096 4096 A pid=7",
            "reply 12 WRITE",
            "ret T0 pwrite 4096",
        ]);
        let m = mapping(&stale);
        match check(&m, DEFAULT_BOUND) {
            Verdict::Violation { index, instead, .. } => {
                assert!(matches!(
                    m.obs[index].obs,
                    Obs::Read(Pat::ThroughWrite { .. })
                ));
                assert_eq!(instead, vec!["read WRITE(p1 T1) payload [v3]".to_string()]);
            }
            v => panic!("expected a violation, got {}", v.short()),
        }
        // pwrite returns before its WRITE is answered
        let ret_early = nowbc(&[
            "call T0 pwrite fd=6 off=4096 B",
            "req 12 WRITE 4096 4096 B pid=7",
            "ret T0 pwrite 4096",
            "reply 12 WRITE",
        ]);
        let m = mapping(&ret_early);
        assert!(matches!(
            check(&m, DEFAULT_BOUND),
            Verdict::Violation { .. }
        ));
    }

    #[test]
    fn split_write_through_is_cut() {
        // max_write 4 KiB: a 2-page pwrite goes as two WRITEs
        let mut l: Vec<&str> = OPEN.to_vec();
        l.extend([
            "call T0 pwrite fd=6 off=0 A",
            "req 10 WRITE 0 4096 A pid=7",
            "reply 10 WRITE",
            "ret T0 pwrite 4096",
            "call T0 pwrite fd=6 off=4096 BC",
            "req 12 WRITE 4096 4096 B pid=7",
            "reply 12 WRITE",
            "req 14 WRITE 8192 4096 C pid=7",
            "reply 14 WRITE",
            "ret T0 pwrite 8192",
            "call T0 fsync fd=6",
        ]);
        let cfg = json!({"writeback_cache": false, "max_write": 4096});
        let ev = tr(cfg.clone(), &l);
        let m = mapping(&ev);
        assert_eq!(m.cfg.tasks.len(), 1);
        assert!(m.cut.as_deref().unwrap().contains("2 WRITEs"));
        let (word, ok, _) = conform_trace(&ev, None).unwrap();
        assert!(ok && word.starts_with("conforms-to-cut"), "{word}");
        // not while another call is pending
        let mut o = l.clone();
        o.insert(9, "call T1 fsync fd=6");
        assert!(not_modelled(&tr(cfg.clone(), &o)).contains("in flight"));
        // a non-CACHE WRITE from pid 0, or from another pid than the writer's
        let mut o = l[..8].to_vec();
        o.extend([
            "call T0 pwrite fd=6 off=4096 B",
            "req 12 WRITE 4096 4096 B pid=0",
        ]);
        assert!(not_modelled(&tr(cfg.clone(), &o)).contains("pid 0"));
        o[9] = "req 12 WRITE 4096 4096 B pid=9";
        assert!(not_modelled(&tr(cfg, &o)).contains("not from the writer"));
    }

    #[test]
    fn malformed_traces_are_input_errors() {
        assert!(translate(&[Event::mark("call T0 fsync fd=6")], None).is_err());
        let ev = tr(json!({}), &["call T0 pwrite fd=9 off=0 A"]);
        assert!(translate(&ev, None).unwrap_err().contains("unknown fd"));
    }
}
