//! The recording, reply-holding FUSE server (fuser 0.18, single dispatch thread).
//!
//! Every handler first records a `req` event, then builds a closure that
//! applies the effect to the in-memory FS, logs the `reply` event and sends
//! the reply. The closure is either run at once or, if a hold rule matches,
//! parked; a parked closure is run later by `release` (control socket), by the
//! watchdog (after `hold_timeout_ms`) or at server exit. A parked reply is
//! never dropped: fuser answers EIO for a dropped `Reply*`.
//!
//! What stock fuser 0.18 cannot show (documented limits of this trace):
//! - The raw SETATTR `valid` mask is not exposed. We RECONSTRUCT it from the
//!   decoded Options (MODE, UID, GID, SIZE, ATIME(_NOW), MTIME(_NOW), FH,
//!   CTIME). FATTR_LOCKOWNER (1<<9) and FATTR_KILL_SUIDGID (1<<11) are
//!   invisible, so they never appear in `valid` here.
//! - FUSE_INTERRUPT is answered ENOSYS inside fuser and never reaches us.
//! - Requests queued in the kernel but not yet read are invisible (only
//!   /sys/fs/fuse/connections/N/waiting counts them).
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use fuser::{
    AccessFlags, Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation,
    INodeNo, InitFlags, KernelConfig, LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyCreate,
    ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite,
    ReplyXattr, Request, Session, SessionACL, TimeOrNow, WriteFlags,
};
use serde_json::{json, Value};

use crate::control::{Command, ReleaseWhich};
use crate::trace::{page_tags, Event};

/// Server configuration (also recorded in the trace header).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ServerConfig {
    /// Negotiate FUSE_WRITEBACK_CACHE.
    pub writeback_cache: bool,
    pub max_write: u32,
    pub max_background: u16,
    /// Always set together with max_background (fuser's default 3/4 rounds
    /// max_background=1 down to 0, which the kernel ignores).
    pub congestion_threshold: u16,
    /// Negotiate FUSE_DIRECT_IO_ALLOW_MMAP.
    pub direct_io_allow_mmap: bool,
    /// Negotiate FUSE_ATOMIC_O_TRUNC.
    pub atomic_o_trunc: bool,
    /// Reply FOPEN_DIRECT_IO to OPEN/CREATE whose flags contain O_DIRECT.
    pub dio_on_odirect: bool,
    /// Reply FOPEN_KEEP_CACHE to every OPEN/CREATE.
    pub keep_cache: bool,
    /// Reply FOPEN_PARALLEL_DIRECT_WRITES with every FOPEN_DIRECT_IO.
    pub parallel_dio: bool,
    /// Answer GETXATTR with ENODATA (the kernel keeps asking) instead of
    /// ENOSYS (the kernel stops asking: fc->no_getxattr).
    pub xattr_enodata: bool,
    /// Watchdog bound for a held reply.
    pub hold_timeout_ms: u64,
    /// Entry and attribute TTL (long and constant: no surprise GETATTRs).
    pub ttl_ms: u64,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            writeback_cache: true,
            max_write: 1 << 20,
            max_background: 16,
            congestion_threshold: 12,
            direct_io_allow_mmap: false,
            atomic_o_trunc: false,
            dio_on_odirect: true,
            keep_cache: false,
            parallel_dio: false,
            xattr_enodata: false,
            hold_timeout_ms: 10_000,
            ttl_ms: 60_000,
        }
    }
}

impl ServerConfig {
    /// Command-line form understood by [`ServerConfig::parse_args`].
    pub fn to_args(&self) -> Vec<String> {
        let mut a = vec![];
        if !self.writeback_cache {
            a.push("--no-wbc".to_string());
        }
        if self.direct_io_allow_mmap {
            a.push("--dio-allow-mmap".into());
        }
        if self.atomic_o_trunc {
            a.push("--atomic-o-trunc".into());
        }
        if !self.dio_on_odirect {
            a.push("--no-dio-on-odirect".into());
        }
        if self.keep_cache {
            a.push("--keep-cache".into());
        }
        if self.parallel_dio {
            a.push("--parallel-dio".into());
        }
        if self.xattr_enodata {
            a.push("--xattr-enodata".into());
        }
        for (k, v) in [
            ("--max-write", self.max_write as u64),
            ("--max-bg", self.max_background as u64),
            ("--cong", self.congestion_threshold as u64),
            ("--hold-timeout-ms", self.hold_timeout_ms),
            ("--ttl-ms", self.ttl_ms),
        ] {
            a.push(k.into());
            a.push(v.to_string());
        }
        a
    }

    /// Parse one option (and its value from `it`). Returns Ok(false) if `arg` is not a config option.
    pub fn parse_arg(
        &mut self,
        arg: &str,
        it: &mut dyn Iterator<Item = String>,
    ) -> Result<bool, String> {
        let mut val = |name: &str| -> Result<u64, String> {
            it.next()
                .ok_or(format!("{name} needs a value"))?
                .parse::<u64>()
                .map_err(|e| format!("{name}: {e}"))
        };
        match arg {
            "--no-wbc" => self.writeback_cache = false,
            "--wbc" => self.writeback_cache = true,
            "--dio-allow-mmap" => self.direct_io_allow_mmap = true,
            "--atomic-o-trunc" => self.atomic_o_trunc = true,
            "--no-dio-on-odirect" => self.dio_on_odirect = false,
            "--keep-cache" => self.keep_cache = true,
            "--parallel-dio" => self.parallel_dio = true,
            "--xattr-enodata" => self.xattr_enodata = true,
            "--max-write" => self.max_write = val(arg)? as u32,
            "--max-bg" => self.max_background = val(arg)? as u16,
            "--cong" => self.congestion_threshold = val(arg)? as u16,
            "--hold-timeout-ms" => self.hold_timeout_ms = val(arg)?,
            "--ttl-ms" => self.ttl_ms = val(arg)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

// ---------------------------------------------------------------- naming helpers

const FATTR_NAMES: [(u32, &str); 12] = [
    (1 << 0, "MODE"),
    (1 << 1, "UID"),
    (1 << 2, "GID"),
    (1 << 3, "SIZE"),
    (1 << 4, "ATIME"),
    (1 << 5, "MTIME"),
    (1 << 6, "FH"),
    (1 << 7, "ATIME_NOW"),
    (1 << 8, "MTIME_NOW"),
    (1 << 9, "LOCKOWNER"),
    (1 << 10, "CTIME"),
    (1 << 11, "KILL_SUIDGID"),
];

fn bit_names(v: u32, table: &[(u32, &str)]) -> Vec<String> {
    table
        .iter()
        .filter(|(b, _)| v & b != 0)
        .map(|(_, n)| n.to_string())
        .collect()
}

fn write_flag_names(v: u32) -> Vec<String> {
    bit_names(v, &[(1, "CACHE"), (2, "LOCKOWNER"), (4, "KILL_SUIDGID")])
}

/// Names of open(2) flags (the access mode first).
pub fn open_flag_names(f: i32) -> Vec<String> {
    let mut v = vec![match f & libc::O_ACCMODE {
        libc::O_RDONLY => "O_RDONLY".to_string(),
        libc::O_WRONLY => "O_WRONLY".into(),
        _ => "O_RDWR".into(),
    }];
    for (b, n) in [
        (libc::O_CREAT, "O_CREAT"),
        (libc::O_EXCL, "O_EXCL"),
        (libc::O_TRUNC, "O_TRUNC"),
        (libc::O_APPEND, "O_APPEND"),
        (libc::O_NONBLOCK, "O_NONBLOCK"),
        (libc::O_DIRECT, "O_DIRECT"),
        (libc::O_SYNC, "O_SYNC"),
        (libc::O_NOATIME, "O_NOATIME"),
        (libc::O_CLOEXEC, "O_CLOEXEC"),
        // libc::O_LARGEFILE is 0 on x86-64 userspace; the kernel sets 0o100000.
        (0o100000, "O_LARGEFILE"),
    ] {
        if f & b == b && b != 0 {
            v.push(n.to_string());
        }
    }
    v
}

fn fopen_names(f: FopenFlags) -> Vec<String> {
    let mut v = vec![];
    if f.contains(FopenFlags::FOPEN_DIRECT_IO) {
        v.push("FOPEN_DIRECT_IO".to_string());
    }
    if f.contains(FopenFlags::FOPEN_KEEP_CACHE) {
        v.push("FOPEN_KEEP_CACHE".to_string());
    }
    if f.contains(FopenFlags::FOPEN_PARALLEL_DIRECT_WRITES) {
        v.push("FOPEN_PARALLEL_DIRECT_WRITES".to_string());
    }
    v
}

fn errno_result(e: i32, name: &str) -> Value {
    json!({"errno": e, "error": name})
}

// ---------------------------------------------------------------- core state

struct FileNode {
    name: String,
    data: Vec<u8>,
    perm: u16,
    mtime: SystemTime,
    ctime: SystemTime,
}

struct FsState {
    files: BTreeMap<u64, FileNode>,
    next_ino: u64,
    next_fh: u64,
}

struct LogState {
    out: BufWriter<File>,
    seq: u64,
    /// unique -> op of requests read but not yet replied.
    inflight: BTreeMap<u64, String>,
}

type Done = Box<dyn FnOnce() + Send>;

struct Rule {
    op: String,
    remaining: Option<u64>,
    cache: Option<bool>,
}

struct Parked {
    unique: u64,
    op: String,
    since: Instant,
    done: Done,
}

#[derive(Default)]
struct CtlState {
    rules: Vec<Rule>,
    parked: Vec<Parked>,
    counts: HashMap<String, u64>,
    stall: Option<(String, u64)>,
    exiting: bool,
    /// op -> replies still to fail with EIO (`fail OP n=N`).
    fails: HashMap<String, u64>,
}

/// Shared between the dispatch thread, the control threads and the watchdog.
pub struct Core {
    cfg: ServerConfig,
    start: Instant,
    log: Mutex<LogState>,
    fs: Mutex<FsState>,
    ctl: Mutex<CtlState>,
    cv: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere must not wedge the server: keep going with the data.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Core {
    fn new(cfg: ServerConfig, trace: File) -> Core {
        // ino 1 is the root directory; it is not in `files`.
        let files = BTreeMap::new();
        Core {
            cfg,
            start: Instant::now(),
            log: Mutex::new(LogState {
                out: BufWriter::new(trace),
                seq: 0,
                inflight: BTreeMap::new(),
            }),
            fs: Mutex::new(FsState {
                files,
                next_ino: 2,
                next_fh: 1,
            }),
            ctl: Mutex::new(CtlState::default()),
            cv: Condvar::new(),
        }
    }

    fn stamp(&self, st: &mut LogState, e: &mut Event) {
        st.seq += 1;
        e.seq = st.seq;
        e.t_us = self.start.elapsed().as_micros() as u64;
        e.thread = thread::current().name().unwrap_or("?").to_string();
    }

    fn write(st: &mut LogState, e: &Event) {
        let _ = writeln!(st.out, "{}", e.to_line());
        let _ = st.out.flush();
    }

    /// Log any event; returns its seq.
    pub fn log(&self, mut e: Event) -> u64 {
        let mut st = lock(&self.log);
        if e.ev != "header" {
            self.stamp(&mut st, &mut e);
        }
        Self::write(&mut st, &e);
        e.seq
    }

    /// Log a request read from /dev/fuse and count it. `tracked`: a reply will follow.
    fn recv(&self, mut e: Event, tracked: bool) -> u64 {
        let unique = e.unique.unwrap_or(0);
        let op = e.op.clone().unwrap_or_default();
        {
            let mut st = lock(&self.log);
            self.stamp(&mut st, &mut e);
            e.inflight_before = Some(st.inflight.keys().copied().collect());
            if tracked {
                st.inflight.insert(unique, op.clone());
            }
            Self::write(&mut st, &e);
        }
        let mut c = lock(&self.ctl);
        *c.counts.entry(op).or_default() += 1;
        self.cv.notify_all();
        unique
    }

    /// Log the reply (BEFORE it is written to /dev/fuse).
    fn log_reply(&self, unique: u64, op: &str, result: Value, t0: Instant) {
        let mut st = lock(&self.log);
        let mut e = Event::new("reply");
        self.stamp(&mut st, &mut e);
        st.inflight.remove(&unique);
        e.unique = Some(unique);
        e.op = Some(op.to_string());
        e.result = Some(result);
        e.latency_us = Some(t0.elapsed().as_micros() as u64);
        e.inflight_after = Some(st.inflight.keys().copied().collect());
        Self::write(&mut st, &e);
    }

    /// Should this reply to `op` be an injected -EIO (`fail OP`)? Decided
    /// when the reply is produced (after any hold).
    fn take_fail(&self, op: &str) -> bool {
        let mut c = lock(&self.ctl);
        match c.fails.get_mut(op) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }

    /// Reply -EIO to `op` if a failure is armed; logs the reply.
    fn failed(&self, unique: u64, op: &str, t0: Instant) -> bool {
        if !self.take_fail(op) {
            return false;
        }
        self.log_reply(unique, op, errno_result(libc::EIO, "EIO"), t0);
        true
    }

    /// Block the dispatch thread if a stall for `op` is armed (one-shot).
    fn maybe_stall(&self, op: &str) {
        let ms = {
            let mut c = lock(&self.ctl);
            match &c.stall {
                Some((o, ms)) if o == op => {
                    let ms = *ms;
                    c.stall = None;
                    ms
                }
                _ => return,
            }
        };
        let mut e = Event::new("stall");
        e.op = Some(op.into());
        e.ms = Some(ms);
        self.log(e);
        thread::sleep(Duration::from_millis(ms));
        let mut e = Event::new("stall_end");
        e.op = Some(op.into());
        self.log(e);
    }

    /// Run `done` now, or park it if a hold rule matches.
    fn dispatch(&self, unique: u64, op: &str, cache: Option<bool>, done: Done) {
        let parked = {
            let mut c = lock(&self.ctl);
            let hit = !c.exiting
                && c.rules.iter_mut().any(|r| {
                    let m = r.op == op
                        && r.remaining != Some(0)
                        && match (r.cache, cache) {
                            (Some(want), Some(is)) => want == is,
                            _ => true,
                        };
                    if m {
                        if let Some(n) = r.remaining.as_mut() {
                            *n -= 1;
                        }
                    }
                    m
                });
            if hit {
                c.rules.retain(|r| r.remaining != Some(0));
                let mut e = Event::new("hold");
                e.unique = Some(unique);
                e.op = Some(op.into());
                self.log(e);
                c.parked.push(Parked {
                    unique,
                    op: op.to_string(),
                    since: Instant::now(),
                    done,
                });
                self.cv.notify_all();
                None
            } else {
                Some(done)
            }
        };
        if let Some(done) = parked {
            done();
        }
    }

    fn release(&self, which: ReleaseWhich, why: &str) -> usize {
        let taken: Vec<Parked> = {
            let mut c = lock(&self.ctl);
            match which {
                ReleaseWhich::All => std::mem::take(&mut c.parked),
                ReleaseWhich::First => {
                    if c.parked.is_empty() {
                        vec![]
                    } else {
                        vec![c.parked.remove(0)]
                    }
                }
                ReleaseWhich::Unique(u) => {
                    let (t, keep) = std::mem::take(&mut c.parked)
                        .into_iter()
                        .partition(|p| p.unique == u);
                    c.parked = keep;
                    t
                }
            }
        };
        let n = taken.len();
        for p in taken {
            self.run_parked(p, why);
        }
        n
    }

    fn run_parked(&self, p: Parked, why: &str) {
        let mut e = Event::new("release");
        e.unique = Some(p.unique);
        e.op = Some(p.op.clone());
        e.why = Some(why.into());
        e.held_ms = Some(p.since.elapsed().as_millis() as u64);
        self.log(e);
        (p.done)();
    }

    fn watchdog(self: Arc<Self>) {
        let bound = Duration::from_millis(self.cfg.hold_timeout_ms);
        loop {
            thread::sleep(Duration::from_millis(20));
            let expired: Vec<Parked> = {
                let mut c = lock(&self.ctl);
                if c.exiting {
                    return;
                }
                let (exp, keep) = std::mem::take(&mut c.parked)
                    .into_iter()
                    .partition(|p| p.since.elapsed() >= bound);
                c.parked = keep;
                exp
            };
            for p in expired {
                self.run_parked(p, "watchdog");
            }
        }
    }

    fn wait_until(&self, ms: u64, pred: impl Fn(&CtlState) -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_millis(ms);
        let mut c = lock(&self.ctl);
        loop {
            if pred(&c) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            c = self
                .cv
                .wait_timeout(c, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Execute one control command and produce the reply line.
    pub fn control(&self, cmd: Command) -> String {
        match cmd {
            Command::Ping => "ok".into(),
            Command::Hold { op, n, cache } => {
                lock(&self.ctl).rules.push(Rule {
                    op,
                    remaining: n,
                    cache,
                });
                "ok".into()
            }
            Command::Unhold(op) => {
                let mut c = lock(&self.ctl);
                match op {
                    None => c.rules.clear(),
                    Some(o) => c.rules.retain(|r| r.op != o),
                }
                "ok".into()
            }
            Command::Release(w) => format!("ok {}", self.release(w, "ctl")),
            Command::WaitHeld { n, ms } => {
                let ok = self.wait_until(ms, |c| c.parked.len() >= n);
                let held = lock(&self.ctl).parked.len();
                format!("{} {held}", if ok { "ok" } else { "timeout" })
            }
            Command::WaitCount { op, n, ms } => {
                let ok = self.wait_until(ms, |c| c.counts.get(&op).copied().unwrap_or(0) >= n);
                let cnt = lock(&self.ctl).counts.get(&op).copied().unwrap_or(0);
                format!("{} {cnt}", if ok { "ok" } else { "timeout" })
            }
            Command::Count(op) => {
                format!(
                    "ok {}",
                    lock(&self.ctl).counts.get(&op).copied().unwrap_or(0)
                )
            }
            Command::Stall { op, ms } => {
                lock(&self.ctl).stall = Some((op, ms));
                "ok".into()
            }
            Command::Mark(text) => format!("ok {}", self.log(Event::mark(&text))),
            Command::Dump => {
                let fs = lock(&self.fs);
                let v: Vec<Value> = fs
                    .files
                    .iter()
                    .map(|(ino, f)| {
                        json!({"ino": ino, "name": f.name, "size": f.data.len(),
                               "page_tags": page_tags(&f.data)})
                    })
                    .collect();
                format!("ok {}", Value::Array(v))
            }
            Command::Inflight => {
                let st = lock(&self.log);
                let v: Vec<Value> = st
                    .inflight
                    .iter()
                    .map(|(u, op)| json!({"unique": u, "op": op}))
                    .collect();
                format!("ok {}", Value::Array(v))
            }
            Command::Fail { op, n } => {
                lock(&self.ctl).fails.insert(op, n);
                "ok".into()
            }
            Command::Truncate { name, size } => {
                let mut fs = lock(&self.fs);
                match fs.files.values_mut().find(|f| f.name == name) {
                    Some(f) => {
                        f.data.resize(size as usize, 0);
                        f.mtime = SystemTime::now();
                        drop(fs);
                        let mut e = Event::new("server_truncate");
                        e.name = Some(name);
                        e.size = Some(size);
                        self.log(e);
                        "ok".into()
                    }
                    None => format!("err no file {name}"),
                }
            }
            Command::Held => {
                let c = lock(&self.ctl);
                let v: Vec<Value> = c
                    .parked
                    .iter()
                    .map(|p| {
                        json!({"unique": p.unique, "op": p.op,
                                    "held_ms": p.since.elapsed().as_millis() as u64})
                    })
                    .collect();
                format!("ok {}", Value::Array(v))
            }
        }
    }

    fn serve_conn(self: Arc<Self>, s: UnixStream) {
        let Ok(w) = s.try_clone() else { return };
        let mut w = w;
        for line in BufReader::new(s).lines() {
            let Ok(line) = line else { return };
            if line.trim().is_empty() {
                continue;
            }
            let reply = match Command::parse(&line) {
                Ok(c) => self.control(c),
                Err(e) => format!("err {e}"),
            };
            if writeln!(w, "{reply}").is_err() {
                return;
            }
        }
    }

    fn ttl(&self) -> Duration {
        Duration::from_millis(self.cfg.ttl_ms)
    }
}

fn root_attr() -> FileAttr {
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    FileAttr {
        ino: INodeNo(1),
        size: 0,
        blocks: 0,
        atime: t,
        mtime: t,
        ctime: t,
        crtime: t,
        kind: FileType::Directory,
        perm: 0o755,
        nlink: 2,
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

fn file_attr(ino: u64, f: &FileNode) -> FileAttr {
    let size = f.data.len() as u64;
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: f.mtime,
        mtime: f.mtime,
        ctime: f.ctime,
        crtime: f.ctime,
        kind: FileType::RegularFile,
        perm: f.perm,
        nlink: 1,
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

fn attr_of(fs: &FsState, ino: u64) -> Option<FileAttr> {
    if ino == 1 {
        return Some(root_attr());
    }
    fs.files.get(&ino).map(|f| file_attr(ino, f))
}

// ---------------------------------------------------------------- the Filesystem

/// The fuser filesystem: a flat in-memory directory.
pub struct RecFs {
    core: Arc<Core>,
}

impl RecFs {
    fn ev(&self, req: &Request, op: &str, ino: INodeNo) -> Event {
        let mut e = Event::new("req");
        e.unique = Some(req.unique().0);
        e.op = Some(op.into());
        e.nodeid = Some(ino.0);
        e.pid = Some(req.pid());
        e.uid = Some(req.uid());
        e
    }

    /// Record, maybe stall, then dispatch the completion.
    fn go(
        &self,
        e: Event,
        cache: Option<bool>,
        done: impl FnOnce(&Core, u64, Instant) + Send + 'static,
    ) {
        let op = e.op.clone().unwrap_or_default();
        let unique = self.core.recv(e, true);
        self.core.maybe_stall(&op);
        let core = self.core.clone();
        let t0 = Instant::now();
        self.core.dispatch(
            unique,
            &op,
            cache,
            Box::new(move || done(&core, unique, t0)),
        );
    }

    fn open_flags_reply(&self, flags: i32) -> FopenFlags {
        let mut f = FopenFlags::empty();
        if self.core.cfg.dio_on_odirect && flags & libc::O_DIRECT != 0 {
            f |= FopenFlags::FOPEN_DIRECT_IO;
            if self.core.cfg.parallel_dio {
                f |= FopenFlags::FOPEN_PARALLEL_DIRECT_WRITES;
            }
        }
        if self.core.cfg.keep_cache {
            f |= FopenFlags::FOPEN_KEEP_CACHE;
        }
        f
    }
}

impl Filesystem for RecFs {
    fn init(&mut self, req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        let cfg = self.core.cfg.clone();
        let caps = config.capabilities();
        let mut want = InitFlags::empty();
        if cfg.writeback_cache {
            want |= InitFlags::FUSE_WRITEBACK_CACHE;
        }
        if cfg.atomic_o_trunc {
            want |= InitFlags::FUSE_ATOMIC_O_TRUNC;
        }
        if cfg.direct_io_allow_mmap {
            want |= InitFlags::FUSE_DIRECT_IO_ALLOW_MMAP;
        }
        let added = config.add_capabilities(want);
        let mw = config.set_max_write(cfg.max_write);
        // Always set BOTH (see ServerConfig::congestion_threshold).
        let mb = config.set_max_background(cfg.max_background.max(1));
        let ct = config.set_congestion_threshold(cfg.congestion_threshold.max(1));
        let mut e = Event::new("init");
        e.unique = Some(req.unique().0);
        e.op = Some("INIT".into());
        e.result = Some(json!({
            "kernel_abi": format!("{}", config.kernel_abi()),
            "kernel_caps": format!("{caps:?}"),
            "requested_extra": format!("{want:?}"),
            "add_capabilities": format!("{added:?}"),
            "max_write": format!("{mw:?}"),
            "max_background": format!("{mb:?}"),
            "congestion_threshold": format!("{ct:?}"),
        }));
        self.core.log(e);
        if added.is_err() {
            return Err(std::io::Error::from_raw_os_error(libc::ENOSYS));
        }
        Ok(())
    }

    fn lookup(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let mut e = self.ev(req, "LOOKUP", parent);
        let name = name.to_string_lossy().to_string();
        e.name = Some(name.clone());
        self.go(e, None, move |core, unique, t0| {
            let fs = lock(&core.fs);
            let found = fs.files.iter().find(|(_, f)| f.name == name);
            match found {
                Some((ino, f)) => {
                    let a = file_attr(*ino, f);
                    drop(fs);
                    core.log_reply(
                        unique,
                        "LOOKUP",
                        json!({"ino": a.ino.0, "size": a.size}),
                        t0,
                    );
                    reply.entry(&core.ttl(), &a, Generation(0));
                }
                None => {
                    drop(fs);
                    core.log_reply(unique, "LOOKUP", errno_result(libc::ENOENT, "ENOENT"), t0);
                    reply.error(Errno::ENOENT);
                }
            }
        });
    }

    fn forget(&self, req: &Request, ino: INodeNo, nlookup: u64) {
        let mut e = self.ev(req, "FORGET", ino);
        e.size = Some(nlookup);
        self.core.recv(e, false);
    }

    fn getattr(&self, req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let mut e = self.ev(req, "GETATTR", ino);
        e.fh = fh.map(|f| f.0);
        self.go(e, None, move |core, unique, t0| {
            let a = attr_of(&lock(&core.fs), ino.0);
            match a {
                Some(a) => {
                    core.log_reply(unique, "GETATTR", json!({"size": a.size}), t0);
                    reply.attr(&core.ttl(), &a);
                }
                None => {
                    core.log_reply(unique, "GETATTR", errno_result(libc::ENOENT, "ENOENT"), t0);
                    reply.error(Errno::ENOENT);
                }
            }
        });
    }

    fn setattr(
        &self,
        req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        // Reconstructed valid mask: stock fuser decodes the mask into Options and
        // does not expose FATTR_LOCKOWNER / FATTR_KILL_SUIDGID (see module docs).
        let mut valid = 0u32;
        if mode.is_some() {
            valid |= 1;
        }
        if uid.is_some() {
            valid |= 1 << 1;
        }
        if gid.is_some() {
            valid |= 1 << 2;
        }
        if size.is_some() {
            valid |= 1 << 3;
        }
        match atime {
            Some(TimeOrNow::Now) => valid |= (1 << 4) | (1 << 7),
            Some(_) => valid |= 1 << 4,
            None => {}
        }
        match mtime {
            Some(TimeOrNow::Now) => valid |= (1 << 5) | (1 << 8),
            Some(_) => valid |= 1 << 5,
            None => {}
        }
        if fh.is_some() {
            valid |= 1 << 6;
        }
        if ctime.is_some() {
            valid |= 1 << 10;
        }
        let mut e = self.ev(req, "SETATTR", ino);
        e.size = size;
        e.fh = fh.map(|f| f.0);
        e.mode = mode;
        e.valid = Some(valid);
        e.valid_names = Some(bit_names(valid, &FATTR_NAMES));
        self.go(e, None, move |core, unique, t0| {
            // only a size change can be failed (`fail SETATTR`): the
            // SETATTR(times) of fsync/close are answered as usual
            if size.is_some() && core.failed(unique, "SETATTR", t0) {
                return reply.error(Errno::EIO);
            }
            let mut fs = lock(&core.fs);
            let now = SystemTime::now();
            let (before, a) = match fs.files.get_mut(&ino.0) {
                Some(f) => {
                    let before = f.data.len() as u64;
                    if let Some(s) = size {
                        f.data.resize(s as usize, 0);
                    }
                    if let Some(m) = mode {
                        f.perm = (m & 0o7777) as u16;
                    }
                    if let Some(t) = mtime {
                        f.mtime = match t {
                            TimeOrNow::Now => now,
                            TimeOrNow::SpecificTime(t) => t,
                        };
                    }
                    f.ctime = ctime.unwrap_or(now);
                    (before, Some(file_attr(ino.0, f)))
                }
                None => (0, attr_of(&fs, ino.0)),
            };
            drop(fs);
            match a {
                Some(a) => {
                    core.log_reply(
                        unique,
                        "SETATTR",
                        json!({"old_size": before, "size": a.size}),
                        t0,
                    );
                    reply.attr(&core.ttl(), &a);
                }
                None => {
                    core.log_reply(unique, "SETATTR", errno_result(libc::ENOENT, "ENOENT"), t0);
                    reply.error(Errno::ENOENT);
                }
            }
        });
    }

    fn unlink(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut e = self.ev(req, "UNLINK", parent);
        let name = name.to_string_lossy().to_string();
        e.name = Some(name.clone());
        self.go(e, None, move |core, unique, t0| {
            let mut fs = lock(&core.fs);
            let ino = fs
                .files
                .iter()
                .find(|(_, f)| f.name == name)
                .map(|(i, _)| *i);
            if let Some(i) = ino {
                fs.files.remove(&i);
            }
            drop(fs);
            if ino.is_some() {
                core.log_reply(unique, "UNLINK", json!({}), t0);
                reply.ok();
            } else {
                core.log_reply(unique, "UNLINK", errno_result(libc::ENOENT, "ENOENT"), t0);
                reply.error(Errno::ENOENT);
            }
        });
    }

    fn open(&self, req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let mut e = self.ev(req, "OPEN", ino);
        e.flags = Some(flags.0);
        e.flag_names = Some(open_flag_names(flags.0));
        let fo = self.open_flags_reply(flags.0);
        self.go(e, None, move |core, unique, t0| {
            let mut fs = lock(&core.fs);
            let fh = fs.next_fh;
            fs.next_fh += 1;
            // O_TRUNC only reaches the server with FUSE_ATOMIC_O_TRUNC.
            let mut truncated = None;
            if flags.0 & libc::O_TRUNC != 0 {
                if let Some(f) = fs.files.get_mut(&ino.0) {
                    truncated = Some(f.data.len());
                    f.data.clear();
                    f.mtime = SystemTime::now();
                    f.ctime = f.mtime;
                }
            }
            drop(fs);
            core.log_reply(
                unique,
                "OPEN",
                json!({"fh": fh, "open_flags": fopen_names(fo), "truncated_from": truncated}),
                t0,
            );
            reply.opened(FileHandle(fh), fo);
        });
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let mut e = self.ev(req, "CREATE", parent);
        let name = name.to_string_lossy().to_string();
        e.name = Some(name.clone());
        e.mode = Some(mode);
        e.flags = Some(flags);
        e.flag_names = Some(open_flag_names(flags));
        let fo = self.open_flags_reply(flags);
        self.go(e, None, move |core, unique, t0| {
            let mut fs = lock(&core.fs);
            let now = SystemTime::now();
            let existing = fs
                .files
                .iter()
                .find(|(_, f)| f.name == name)
                .map(|(i, _)| *i);
            let ino = match existing {
                Some(i) => i,
                None => {
                    let i = fs.next_ino;
                    fs.next_ino += 1;
                    fs.files.insert(
                        i,
                        FileNode {
                            name: name.clone(),
                            data: vec![],
                            perm: (mode & 0o7777) as u16,
                            mtime: now,
                            ctime: now,
                        },
                    );
                    i
                }
            };
            let fh = fs.next_fh;
            fs.next_fh += 1;
            let a = file_attr(ino, &fs.files[&ino]);
            drop(fs);
            core.log_reply(
                unique,
                "CREATE",
                json!({"ino": ino, "fh": fh, "open_flags": fopen_names(fo)}),
                t0,
            );
            reply.created(&core.ttl(), &a, Generation(0), FileHandle(fh), fo);
        });
    }

    fn read(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let mut e = self.ev(req, "READ", ino);
        e.fh = Some(fh.0);
        e.offset = Some(offset);
        e.size = Some(size as u64);
        e.end = Some(offset + size as u64);
        e.flags = Some(flags.0);
        e.flag_names = Some(open_flag_names(flags.0));
        self.go(e, None, move |core, unique, t0| {
            if core.failed(unique, "READ", t0) {
                return reply.error(Errno::EIO);
            }
            let fs = lock(&core.fs);
            let data: Vec<u8> = match fs.files.get(&ino.0) {
                Some(f) => {
                    let s = (offset as usize).min(f.data.len());
                    let en = (offset as usize + size as usize).min(f.data.len());
                    f.data[s..en].to_vec()
                }
                None => vec![],
            };
            drop(fs);
            core.log_reply(
                unique,
                "READ",
                json!({"bytes": data.len(), "page_tags": page_tags(&data)}),
                t0,
            );
            reply.data(&data);
        });
    }

    fn write(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        write_flags: WriteFlags,
        flags: OpenFlags,
        lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let wf = write_flags.bits();
        let mut e = self.ev(req, "WRITE", ino);
        e.fh = Some(fh.0);
        e.offset = Some(offset);
        e.size = Some(data.len() as u64);
        e.end = Some(offset + data.len() as u64);
        e.write_flags = Some(wf);
        e.write_flag_names = Some(write_flag_names(wf));
        e.flags = Some(flags.0);
        e.flag_names = Some(open_flag_names(flags.0));
        e.lock_owner = lock_owner.map(|l| l.0);
        e.page_tags = Some(page_tags(data));
        // The payload borrows fuser's read buffer: copy it before deferring.
        let data = data.to_vec();
        self.go(e, Some(wf & 1 != 0), move |core, unique, t0| {
            if core.failed(unique, "WRITE", t0) {
                return reply.error(Errno::EIO);
            }
            let mut fs = lock(&core.fs);
            let (before, after) = match fs.files.get_mut(&ino.0) {
                Some(f) => {
                    let before = f.data.len();
                    let end = offset as usize + data.len();
                    if f.data.len() < end {
                        f.data.resize(end, 0);
                    }
                    f.data[offset as usize..end].copy_from_slice(&data);
                    f.mtime = SystemTime::now();
                    (before, f.data.len())
                }
                None => (0, 0),
            };
            drop(fs);
            core.log_reply(
                unique,
                "WRITE",
                json!({"written": data.len(), "file_size_before": before, "file_size_after": after}),
                t0,
            );
            reply.written(data.len() as u32);
        });
    }

    fn flush(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        let mut e = self.ev(req, "FLUSH", ino);
        e.fh = Some(fh.0);
        e.lock_owner = Some(lock_owner.0);
        self.go(e, None, move |core, unique, t0| {
            if core.failed(unique, "FLUSH", t0) {
                return reply.error(Errno::EIO);
            }
            core.log_reply(unique, "FLUSH", json!({}), t0);
            reply.ok();
        });
    }

    fn release(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let mut e = self.ev(req, "RELEASE", ino);
        e.fh = Some(fh.0);
        e.flags = Some(flags.0);
        e.flag_names = Some(open_flag_names(flags.0));
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(unique, "RELEASE", json!({}), t0);
            reply.ok();
        });
    }

    fn fsync(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        let mut e = self.ev(req, "FSYNC", ino);
        e.fh = Some(fh.0);
        e.datasync = Some(datasync);
        self.go(e, None, move |core, unique, t0| {
            if core.failed(unique, "FSYNC", t0) {
                return reply.error(Errno::EIO);
            }
            core.log_reply(unique, "FSYNC", json!({}), t0);
            reply.ok();
        });
    }

    fn opendir(&self, req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let e = self.ev(req, "OPENDIR", ino);
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(unique, "OPENDIR", json!({"fh": 0}), t0);
            reply.opened(FileHandle(0), FopenFlags::empty());
        });
    }

    fn releasedir(
        &self,
        req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        let e = self.ev(req, "RELEASEDIR", ino);
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(unique, "RELEASEDIR", json!({}), t0);
            reply.ok();
        });
    }

    fn readdir(
        &self,
        req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let mut e = self.ev(req, "READDIR", ino);
        e.offset = Some(offset);
        self.go(e, None, move |core, unique, t0| {
            let fs = lock(&core.fs);
            let mut entries: Vec<(u64, FileType, String)> = vec![
                (1, FileType::Directory, ".".into()),
                (1, FileType::Directory, "..".into()),
            ];
            for (i, f) in &fs.files {
                entries.push((*i, FileType::RegularFile, f.name.clone()));
            }
            drop(fs);
            let mut n = 0;
            for (idx, (i, k, name)) in entries.iter().enumerate().skip(offset as usize) {
                if reply.add(INodeNo(*i), (idx + 1) as u64, *k, name) {
                    break;
                }
                n += 1;
            }
            core.log_reply(unique, "READDIR", json!({"entries": n}), t0);
            reply.ok();
        });
    }

    fn statfs(&self, req: &Request, ino: INodeNo, reply: ReplyStatfs) {
        let e = self.ev(req, "STATFS", ino);
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(unique, "STATFS", json!({}), t0);
            reply.statfs(0, 0, 0, 0, 0, 4096, 255, 4096);
        });
    }

    fn getxattr(&self, req: &Request, ino: INodeNo, name: &OsStr, _size: u32, reply: ReplyXattr) {
        let mut e = self.ev(req, "GETXATTR", ino);
        e.name = Some(name.to_string_lossy().to_string());
        self.go(e, None, move |core, unique, t0| {
            if core.cfg.xattr_enodata {
                core.log_reply(
                    unique,
                    "GETXATTR",
                    errno_result(libc::ENODATA, "ENODATA"),
                    t0,
                );
                reply.error(Errno::ENODATA);
            } else {
                core.log_reply(unique, "GETXATTR", errno_result(libc::ENOSYS, "ENOSYS"), t0);
                reply.error(Errno::ENOSYS);
            }
        });
    }

    fn access(&self, req: &Request, ino: INodeNo, mask: AccessFlags, reply: ReplyEmpty) {
        let mut e = self.ev(req, "ACCESS", ino);
        e.mode = Some(mask.bits() as u32);
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(unique, "ACCESS", json!({}), t0);
            reply.ok();
        });
    }

    fn fallocate(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let mut e = self.ev(req, "FALLOCATE", ino);
        e.fh = Some(fh.0);
        e.offset = Some(offset);
        e.size = Some(length);
        e.mode = Some(mode as u32);
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(
                unique,
                "FALLOCATE",
                errno_result(libc::ENOSYS, "ENOSYS"),
                t0,
            );
            reply.error(Errno::ENOSYS);
        });
    }
}

/// Release the uname.
pub fn kernel_release() -> String {
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".into();
    }
    let c = unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) };
    c.to_string_lossy().into_owned()
}

/// Mount at `mountpoint`, serve until unmounted, then release everything still held.
/// The control socket is created only after mount + INIT, so a successful
/// `ping` means the file system is ready.
pub fn run_server(
    mountpoint: &Path,
    ctl_path: &Path,
    trace_path: &Path,
    scenario: &str,
    cfg: ServerConfig,
) -> std::io::Result<()> {
    let trace = File::create(trace_path)?;
    let core = Arc::new(Core::new(cfg.clone(), trace));
    let cfg_json = serde_json::to_value(&cfg).unwrap_or(Value::Null);
    core.log(Event::header(&kernel_release(), cfg_json, scenario));

    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("wbspec".into()),
        MountOption::Subtype("wbspec".into()),
    ];
    config.acl = SessionACL::All;
    config.n_threads = Some(1);
    let session = Session::new(RecFs { core: core.clone() }, mountpoint, &config)?;

    {
        let c = core.clone();
        thread::Builder::new()
            .name("watchdog".into())
            .spawn(move || c.watchdog())?;
    }
    let _ = std::fs::remove_file(ctl_path);
    let listener = UnixListener::bind(ctl_path)?;
    {
        let c = core.clone();
        thread::Builder::new()
            .name("ctl-accept".into())
            .spawn(move || {
                for s in listener.incoming() {
                    let Ok(s) = s else { continue };
                    let c2 = c.clone();
                    let _ = thread::Builder::new()
                        .name("ctl-conn".into())
                        .spawn(move || c2.serve_conn(s));
                }
            })?;
    }
    let mut ready = Event::new("mark");
    ready.text = Some("server ready".into());
    ready.kind = Some("note".into());
    core.log(ready);

    let res = session.run();

    // Never leave a reply parked: release everything (replies to a dead
    // connection are harmless).
    lock(&core.ctl).exiting = true;
    core.release(ReleaseWhich::All, "exit");
    let mut e = Event::new("exit");
    e.text = Some(format!("{res:?}"));
    core.log(e);
    let _ = std::fs::remove_file(ctl_path);
    res
}
