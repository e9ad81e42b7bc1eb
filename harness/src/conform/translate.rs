//! Translation: a recorded kernel trace onto the model — a `Config` and the
//! sequence of model-observable events (`Obs`).

use super::*;
use std::collections::{BTreeMap, HashMap, HashSet};

use wbspec_models::fuse::model::version_of;
use wbspec_models::fuse::state::V_ZERO;
use wbspec_models::fuse::{Config, Kernel, TaskSpec, Variant};

use crate::trace::Event;

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
    /// A buffered read returned `bytes` bytes starting at real page
    /// `first`, with these page tags (None: the ret mark has no data=).
    ReadRet(usize, u64, u64, Option<String>),
    Read(RawReq),
    Reply(RawReq, Option<String>),
    /// An -EIO reply (the server failed the request).
    ReplyErr(RawReq),
}

#[derive(Clone, Debug)]
enum RawTask {
    Write {
        first: u64,
        n: u64,
        tags: String,
    },
    DioWrite {
        first: u64,
        n: u64,
        tags: String,
    },
    OdirectWrite {
        first: u64,
        n: u64,
        tags: String,
    },
    DioRead {
        first: u64,
        n: u64,
    },
    OdirectRead {
        first: u64,
        n: u64,
    },
    Mmap {
        page: u64,
        tag: String,
    },
    Writeback,
    Read {
        first: u64,
        n: u64,
    },
    SyncRange {
        first: u64,
        n: u64,
    },
    Munmap,
    Msync {
        first: u64,
        n: u64,
    },
    Truncate {
        size: u64,
    },
    Fsync,
    Close,
    /// close() of the last caching fd: fuse_release drops the io-mode.
    CloseRelease,
    /// `direct`: the OPEN reply had FOPEN_DIRECT_IO (set at the return).
    Open {
        trunc: bool,
        direct: bool,
    },
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
    /// A buffered pread: its first real page (the ret mark's data starts
    /// there).
    read_first: Option<u64>,
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
    match super::validate::validate(events) {
        Err(super::validate::Invalid::Bad(e)) => return Err(e),
        Err(super::validate::Invalid::NotModelled(why)) => {
            return Ok(Translation::NotModelled(why))
        }
        Ok(()) => {}
    }
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
    // fc->max_background and fc->congestion_threshold as negotiated (the
    // recorder always sets both): the model's bg queue and congestion
    let (bg, cong) = (numc("max_background", 16), numc("congestion_threshold", 12));
    let (bg, cong) = (bg.clamp(1, 255) as u8, cong.clamp(1, 255) as u8);
    let keep_cache = flag("keep_cache", false);
    let real_max_pages = (numc("max_write", 1 << 20) / PG).clamp(1, 256);

    // Every request the kernel sent got the next `unique` (fuse_get_unique:
    // steps of FUSE_REQ_ID_STEP = 2; odd ones are interrupts). One the
    // trace does not have was answered by fuser without the server (an
    // opcode fuser does not know, FUSE_INTERRUPT): the trace cannot be
    // checked.
    let mut uniques: Vec<u64> = events
        .iter()
        .filter(|e| e.ev == "req" || e.ev == "init")
        .filter_map(|e| e.unique)
        .filter(|u| u % 2 == 0)
        .collect();
    uniques.sort();
    uniques.dedup();
    if let Some(w) = uniques.windows(2).find(|w| w[1] - w[0] > 2) {
        return nm(format!(
            "request {} not recorded (the trace jumps from unique {} to {}: fuser answered it without the server, e.g. an opcode it does not know)",
            w[0] + 2,
            w[0],
            w[1]
        ));
    }
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
    // requests the server failed (`fail OP`): the model's `errors`
    let mut errors: u16 = 0;
    // shared mappings alive (each holds a reference to its file)
    let mut maps: u32 = 0;
    // The pid of each workload actor, learned from the requests its calls send.
    let mut actor_pid: HashMap<String, u32> = HashMap::new();
    // A checked prefix (conforms-to-cut); no rule cuts a trace today.
    let cut: Option<String> = None;
    // Write-through WRITEs: (the writer's task if one writer is pending,
    // first, n real pages, seq)
    let mut through_reqs: Vec<(Option<usize>, u64, u64, u64)> = vec![];
    // fhs RELEASEd so far (seq of the RELEASE): no WRITE may carry one
    // after (fuse_file_put sends RELEASE at the last reference, and each
    // WRITE holds one); the model has no fh, so such a trace is not checked
    let mut released: HashMap<u64, u64> = HashMap::new();
    let mut rets: HashMap<usize, i64> = HashMap::new();
    let mut filt = |rule: &str| *filtered.entry(rule.to_string()).or_default() += 1;

    'events: for (i, e) in events.iter().enumerate().skip(1) {
        let key = 2 * i as u64;
        let brief = crate::trace_query::Tr::brief(e);
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
                        read_first: None,
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
                                    direct: false,
                                }),
                            }
                        }
                        // sendfile(2) into the file takes the write(2) path
                        // (iter_file_splice_write → vfs_iter_write)
                        "pwrite" | "sendfile" => {
                            let off = num(arg(&args, "off")).ok_or_else(|| {
                                format!("bad trace: #{} {sc} without off=", e.seq)
                            })?;
                            let tags = words.get(2).copied().unwrap_or("").to_string();
                            let first = pages_of(off, "pwrite offset")?;
                            let n = tags.len() as u64;
                            let kind = fd_kind(&fds)?;
                            p.direct_write = kind != FdKind::Cached;
                            p.through_write = kind == FdKind::Cached && !wbc;
                            // (fuse_perform_write sends one WRITE per
                            // max_write / max_pages chunk: the model's
                            // max_write is set from the recorded WRITEs
                            // below, `through_chunks`)
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
                                    p.read_first = Some(first);
                                    Some(RawTask::Read { first, n })
                                }
                                FdKind::Dio => Some(RawTask::DioRead { first, n }),
                                FdKind::Odirect => Some(RawTask::OdirectRead { first, n }),
                            }
                        }
                        "sync_file_range" => {
                            let a = num(words.get(1).copied()).unwrap_or(0);
                            let l = num(words.get(2).copied()).unwrap_or(0);
                            if l == 0 {
                                // to the end of the file: the flusher's walk
                                Some(RawTask::Writeback)
                            } else {
                                Some(RawTask::SyncRange {
                                    first: pages_of(a, "sync_file_range offset")?,
                                    n: pages_of(l, "sync_file_range length")?,
                                })
                            }
                        }
                        // syncfs on this kernel (SB_I_NO_DATA_INTEGRITY) writes
                        // back without waiting: the WB_SYNC_NONE writeback task.
                        "syncfs" => Some(RawTask::Writeback),
                        // fdatasync is fuse_fsync with datasync = 1
                        "fsync" | "fdatasync" => Some(RawTask::Fsync),
                        // msync(MS_SYNC): vfs_fsync_range over the mapped
                        // range (the whole file when the mark has no range)
                        "msync" if args.contains("MS_SYNC") => {
                            match (num(arg(&args, "off")), num(arg(&args, "len"))) {
                                (Some(o), Some(l)) => Some(RawTask::Msync {
                                    first: pages_of(o, "msync offset")?,
                                    n: pages_of(l, "msync length")?,
                                }),
                                _ => Some(RawTask::Fsync),
                            }
                        }
                        // munmap of a shared mapping: fuse_vma_close →
                        // write_inode_now(inode, 1)
                        "munmap" => {
                            maps = maps.saturating_sub(1);
                            Some(RawTask::Munmap)
                        }
                        "close" => {
                            let kind = num(arg(&args, "fd")).and_then(|fd| fds.remove(&(fd as i64)));
                            // the last caching fd (and no shared mapping
                            // holding a reference): fuse_release drops the
                            // inode's caching io-mode
                            let caching = |k: &FdKind| *k != FdKind::Dio;
                            if kind.as_ref().is_some_and(caching)
                                && !fds.values().any(caching)
                                && maps == 0
                            {
                                Some(RawTask::CloseRelease)
                            } else {
                                Some(RawTask::Close)
                            }
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
                        "mmap" | "msync_async" | "stat" => {
                            match sc.as_str() {
                                "mmap" => maps += 1,
                                _ => {}
                            }
                            filt(&format!("syscall {sc}"));
                            None
                        }
                        "statx_cached" => {
                            filt("syscall statx_cached");
                            None
                        }
                        "fstat" if wbc => {
                            filt("syscall fstat (writeback_cache)");
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
                            if let Some(t) = p.task {
                                if let RawTask::Open { direct, .. } = &mut tasks[t].0 {
                                    *direct = dio;
                                }
                            }
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
                    if e.ret.unwrap_or(0) < 0 && p.task.is_some() && sc != "store" && errors == 0 {
                        return nm(format!(
                            "{sc} failed (errno {}): errors are not modelled",
                            e.errno.unwrap_or(0)
                        ));
                    }
                    if let Some(t) = p.task {
                        rets.extend(e.ret.map(|r| (t, r)));
                        match p.read_first {
                            Some(first) => raw.push((
                                key,
                                e.seq,
                                RawObs::ReadRet(
                                    t,
                                    first,
                                    e.ret.unwrap_or(0).max(0) as u64,
                                    e.page_tags.clone(),
                                ),
                                brief,
                            )),
                            None => raw.push((key, e.seq, RawObs::Ret(t), brief)),
                        }
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
                if let Some(fh) = e.fh {
                    if op == "RELEASE" {
                        released.insert(fh, e.seq);
                    } else if let Some(r) = released.get(&fh) {
                        return nm(format!("#{} {op} carries fh {fh}, RELEASEd at #{r}: the kernel keeps a file until its requests end (fuse_file_put); the model has no file handles", e.seq));
                    }
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
                            let writer = match writers[..] {
                                [a] => pending[a].task,
                                _ => None,
                            };
                            through_reqs.push((writer, first, n, e.seq));
                            Some(RawReq::ThroughWrite { first, n, tags })
                        } else {
                            Some(RawReq::DirectWrite { first, n, tags })
                        }
                    }
                    "READ" => {
                        let first = pages_of(e.offset.unwrap_or(0), "READ offset")?;
                        let n = pages_of(e.size.unwrap_or(0), "READ size")?;
                        // a direct READ, or a page-cache fill: readahead
                        // (background) or read_folio (synchronous) of a
                        // buffered read or a fault
                        Some(RawReq::Read { first, n })
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
                    if let Some(errno) = e.result.as_ref().and_then(|r| r["errno"].as_i64()) {
                        // an injected -EIO (`fail OP`) of a request the
                        // model may fail: the daemon's error reply
                        let op = match r {
                            RawReq::CacheWrite { .. }
                            | RawReq::DirectWrite { .. }
                            | RawReq::ThroughWrite { .. } => Some("WRITE"),
                            RawReq::Read { .. } => Some("READ"),
                            RawReq::Setattr { .. } => Some("SETATTR"),
                            RawReq::Fsync => Some("FSYNC"),
                            RawReq::Flush => Some("FLUSH"),
                            RawReq::Open { .. } => None,
                        };
                        match op {
                            Some(op) if errno == libc::EIO as i64 => {
                                errors |= wbspec_models::fuse::config::parse_errors(&[op.to_string()])?;
                                raw.push((key, e.seq, RawObs::ReplyErr(r), brief));
                                continue 'events;
                            }
                            _ => return nm(format!("{brief}: this error reply is not modelled")),
                        }
                    }
                    let data = e
                        .result
                        .as_ref()
                        .and_then(|r| r["page_tags"].as_str().map(str::to_string));
                    raw.push((key, e.seq, RawObs::Reply(r, data), brief));
                }
            }
            "server_truncate" => {
                return nm(format!(
                    "{brief}: a server-side truncation by another client (the model's remote-truncate task is not mapped)"
                ))
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
            | RawTask::OdirectRead { first, n }
            | RawTask::Read { first, n }
            | RawTask::SyncRange { first, n }
            | RawTask::Msync { first, n } => add(*first, *n),
            RawTask::Mmap { page, .. } => add(*page, 1),
            RawTask::Truncate { size } => add(*size, 0),
            _ => {}
        }
    }
    for (_, _, o, _) in &raw {
        if let RawObs::Read(r) | RawObs::Reply(r, _) | RawObs::ReplyErr(r) = o {
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

    let max_write = through_max_write(&tasks, &through_reqs, range, max_pages, errors != 0)?;

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
            RawTask::Read { first, n } => {
                let (first, n) = range(*first, *n);
                TaskSpec::Read { first, n }
            }
            RawTask::SyncRange { first, n } => {
                let (first, n) = range(*first, *n);
                TaskSpec::SyncRange { first, n }
            }
            RawTask::Msync { first, n } => {
                let (first, n) = range(*first, *n);
                TaskSpec::Msync { first, n }
            }
            RawTask::Munmap => TaskSpec::Munmap,
            RawTask::Writeback => TaskSpec::Writeback { all: false },
            RawTask::Truncate { size } => {
                zero_versions.push(v);
                TaskSpec::Truncate { size: at(*size) }
            }
            RawTask::Fsync => TaskSpec::Fsync,
            RawTask::Close => TaskSpec::Close,
            RawTask::CloseRelease => TaskSpec::CloseRelease,
            RawTask::Open { trunc, direct } => {
                if *trunc {
                    // the truncation writes zeros "by" the open task
                    zero_versions.push(v);
                }
                TaskSpec::Open {
                    trunc: *trunc,
                    keep_cache,
                    direct: *direct,
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
            RawObs::ReadRet(t, first, bytes, data) => {
                // the read's pages: those within the bytes returned must
                // hold data whose tags match, the rest nothing (short read)
                let TaskSpec::Read { first: mf, n: mn } = specs[*t] else {
                    unreachable!("a ReadRet is a read task's")
                };
                let end = first + bytes.div_ceil(PG);
                let mut chk = vec![];
                for p in mf..mf + mn {
                    let reg = regions[p as usize];
                    if reg.1 <= end {
                        match data {
                            Some(tags) => chk.push((p, Some(allowed(p, &sub(tags, *first, reg))))),
                            None => {}
                        }
                    } else if reg.0 >= end {
                        chk.push((p, None));
                    } else {
                        return nm(format!("#{seq} a short read ends inside model page {p}"));
                    }
                }
                Obs::ReadRet(*t, chk)
            }
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
            RawObs::ReplyErr(r) => Obs::ReplyErr(pat(r)),
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
        parallel_dio: flag("parallel_dio", false),
        atomic_o_trunc: flag("atomic_o_trunc", false),
        folio_blocks: 1,
        writeback_cache: wbc,
        max_pages,
        tasks: specs,
        max_background: Some(bg),
        congestion_threshold: Some(cong),
        async_dio: false,
        real_pages: {
            let mut rp = [1u8; MODEL_PAGES];
            for (i, r) in regions.iter().enumerate() {
                // (the readahead arithmetic saturates far below 255)
                rp[i] = (r.1 - r.0).min(255) as u8;
            }
            rp
        },
        memcg_v1: false,
        folio_pages: 1,
        blocks_per_page: 1,
        max_read: None,
        max_write,
        errors,
        short: 0,
    };
    cfg.validate()
        .map_err(|e| format!("model configuration: {e}"))?;
    Ok(Mapping {
        scenario: name,
        cfg,
        obs,
        rets: (0..tasks.len()).map(|t| rets.get(&t).copied()).collect(),
        regions,
        task_labels: tasks.into_iter().map(|t| t.1).collect(),
        letters,
        filtered,
        cut,
    })
}

/// The model's max_write (model pages) under which its write-through
/// tasks send exactly the recorded WRITEs (fuse_perform_write's loop:
/// chunks of min(max_write, max_pages) pages, ended by a failed chunk).
/// `None` when no write(2) was split. Not modelled when the chunks are
/// not a uniform model max_write, or when that max_write would split a
/// direct write the model then could not match.
fn through_max_write(
    tasks: &[(RawTask, String)],
    reqs: &[(Option<usize>, u64, u64, u64)],
    range: impl Fn(u64, u64) -> (u8, u8),
    max_pages: u8,
    errors: bool,
) -> Result<Option<u8>, String> {
    let mut per_task: BTreeMap<usize, Vec<(u8, u8, u64)>> = BTreeMap::new();
    for &(t, first, n, seq) in reqs {
        // (a WRITE no single pending writer owns is not a chunk of any
        // task here: the search refuses it, or a task's chunks below are
        // then incomplete)
        if let Some(t) = t {
            let (a, m) = range(first, n);
            per_task.entry(t).or_default().push((a, m, seq));
        }
    }
    // the uniform chunk size of the split writes
    let mut mw: Option<u8> = None;
    for chunks in per_task.values().filter(|c| c.len() > 1) {
        let k = chunks[0].1;
        if mw.is_some_and(|x| x != k) {
            return nm(format!(
                "#{} write-through WRITEs of {k} model pages and of {} elsewhere: no single model max_write",
                chunks[0].2,
                mw.unwrap_or(0)
            ));
        }
        mw = Some(k);
    }
    let lim = mw.unwrap_or(u8::MAX).min(max_pages);
    for (t, (task, label)) in tasks.iter().enumerate() {
        match task {
            RawTask::Write { first, n, .. } => {
                let Some(got) = per_task.get(&t) else {
                    continue;
                };
                let (a, m) = range(*first, *n);
                let mut want = vec![];
                let mut p = a;
                while p < a + m {
                    let c = lim.min(a + m - p);
                    want.push((p, c));
                    p += c;
                }
                let got: Vec<(u8, u8)> = got.iter().map(|c| (c.0, c.1)).collect();
                // a failed chunk ends the loop early
                let ok = got == want
                    || (errors
                        && !got.is_empty()
                        && got.len() < want.len()
                        && got[..] == want[..got.len()]);
                if !ok {
                    return nm(format!(
                        "[{label}]: the kernel's write-through WRITEs are {got:?} (model pages), the model with max_write {mw:?} and max_pages {max_pages} sends {want:?}"
                    ));
                }
            }
            RawTask::DioWrite { first, n, .. } | RawTask::OdirectWrite { first, n, .. } => {
                let (_, m) = range(*first, *n);
                if mw.is_some_and(|k| m > k) {
                    return nm(format!(
                        "[{label}]: a direct write of {m} model pages with a model max_write of {mw:?} pages, set from the write-through WRITEs: its chunks are not mapped"
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(mw)
}

impl Mapping {
    /// Several lines: the model configuration and the mapping (for --verbose
    /// and reports).
    pub fn summary(&self) -> String {
        let mut s = format!(
            "  model: kernel {:?}, {} pages {:?} (4 KiB page ranges), max_pages {}, {} daemon worker(s)",
            self.cfg.kernel, self.cfg.pages, self.regions, self.cfg.max_pages, self.cfg.daemon_threads
        );
        if let Some(w) = self.cfg.max_write {
            s += &format!(", max_write {w} (the recorded write-through chunks)");
        }
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
