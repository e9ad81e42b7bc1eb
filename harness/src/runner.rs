//! Scenario runner: one scenario at a time, each against a fresh mount served
//! by a `fuse-recorder` child process whose PID we keep.
//!
//! Safety: every wait is bounded. The scenario body runs in its own thread
//! with a deadline; a syscall blocked on a held reply is unblocked by the
//! server's watchdog, and past the deadline the connection is aborted through
//! fusectl. Unmount: `fusermount3 -u`, then `umount -l`, then fusectl abort,
//! then SIGKILL of our own child by PID. A Drop guard does all of this on panic.
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::control::CtlClient;
use crate::mount;
use crate::scenarios::{self, Scenario};
use crate::server::{kernel_release, ServerConfig};
use crate::sys::{self, Ret};
use crate::trace::{parse_trace, Event};

/// A failed check: which one, and why.
#[derive(Debug, Clone)]
pub struct Fail {
    pub check: String,
    pub detail: String,
}

impl From<String> for Fail {
    fn from(detail: String) -> Fail {
        Fail {
            check: "harness".into(),
            detail,
        }
    }
}

pub type Res = Result<(), Fail>;

/// The `check` of a [`Fail`] that is not a failure: the scenario cannot
/// run on this machine (a missing kernel feature), said in `detail`.
pub const SKIP: &str = "skip";

/// Stop a scenario as skipped, saying why.
pub fn skip(why: impl Into<String>) -> Fail {
    Fail {
        check: SKIP.into(),
        detail: why.into(),
    }
}

/// Kernel state of `kernel-fuse-protocol.md` whose expectations the scenarios
/// encode, or None if this kernel is unknown (outcomes then not asserted).
pub fn kernel_state(release: &str) -> Option<&'static str> {
    let num: Vec<u32> = release
        .split(|c: char| !c.is_ascii_digit())
        .take(3)
        .map(|s| s.parse().unwrap_or(0))
        .collect();
    match num.as_slice() {
        // 6.18.y with the 6.19 DIO fixes and the SB_I_NO_DATA_INTEGRITY backport.
        [6, 18, p] if *p >= 3 => Some("T''"),
        _ => None,
    }
}

// ---------------------------------------------------------------- scenario context

/// A syscall running on its own thread.
pub struct Pending {
    what: String,
    rx: mpsc::Receiver<(Ret, u64)>,
    got: Option<(Ret, u64)>,
}

impl Pending {
    /// Wait up to `ms` for the call to return: Some((ret, duration_us)).
    pub fn wait(&mut self, ms: u64) -> Option<(Ret, u64)> {
        if self.got.is_none() {
            self.got = self.rx.recv_timeout(Duration::from_millis(ms)).ok();
        }
        self.got
    }

    pub fn done(&mut self) -> bool {
        if self.got.is_none() {
            self.got = self.rx.try_recv().ok();
        }
        self.got.is_some()
    }

    /// Wait, failing the named check if the call has not returned in `ms`.
    pub fn join(&mut self, ms: u64) -> Result<(Ret, u64), Fail> {
        self.wait(ms).ok_or_else(|| Fail {
            check: format!("{} returns", self.what),
            detail: format!("did not return within {ms} ms"),
        })
    }
}

/// What a scenario body gets: the mount, the control socket, syscall helpers with marks.
pub struct Ctx {
    pub mnt: PathBuf,
    ctl: CtlClient,
    trace_path: PathBuf,
    asserting: bool,
    /// Expectations that did not hold on a kernel whose outcome is not asserted.
    pub notes: Vec<String>,
    /// fds to close at the end (closed after all holds are cleared).
    pub open_fds: Vec<i32>,
    /// mappings (addr, len) to unmap at the end (a mapping keeps the mount busy).
    pub maps: Vec<(usize, usize)>,
}

impl Ctx {
    pub fn path(&self, name: &str) -> PathBuf {
        self.mnt.join(name)
    }

    /// Send a control command; fail unless the reply is `ok ...`.
    pub fn ctl(&mut self, cmd: &str) -> Result<String, Fail> {
        Ok(self.ctl.ok(cmd)?)
    }

    pub fn count(&mut self, op: &str) -> Result<u64, Fail> {
        Ok(self.ctl.counted(&format!("count {op}"))?.1)
    }

    /// wait_held: fail (harness) if fewer than n replies are parked after ms.
    pub fn wait_held(&mut self, n: usize, ms: u64) -> Res {
        let (ok, got) = self.ctl.counted(&format!("wait_held {n} {ms}"))?;
        if !ok {
            return Err(Fail {
                check: "hold".into(),
                detail: format!("expected {n} held replies within {ms} ms, have {got}"),
            });
        }
        Ok(())
    }

    pub fn wait_count(&mut self, op: &str, n: u64, ms: u64) -> Result<bool, Fail> {
        Ok(self.ctl.counted(&format!("wait_count {op} {n} {ms}"))?.0)
    }

    pub fn mark(&mut self, text: &str) -> Res {
        self.ctl(&format!("mark {text}"))?;
        Ok(())
    }

    /// A check on the kernel's behaviour. On an unknown kernel it is recorded, not failed.
    pub fn expect(&mut self, check: &str, cond: bool, detail: impl FnOnce() -> String) -> Res {
        if cond {
            return Ok(());
        }
        let d = detail();
        if self.asserting {
            Err(Fail {
                check: check.into(),
                detail: d,
            })
        } else {
            self.notes.push(format!("{check}: {d}"));
            Ok(())
        }
    }

    /// Run a syscall on this thread, bracketed by `call`/`ret` marks.
    pub fn sys(
        &mut self,
        actor: &str,
        name: &str,
        args: &str,
        f: impl FnOnce() -> Ret,
    ) -> Result<(Ret, u64), Fail> {
        self.mark(&format!("call {actor} {name} {args}"))?;
        let t = Instant::now();
        let r = f();
        let d = t.elapsed().as_micros() as u64;
        self.mark(&format!(
            "ret {actor} {name} {} errno={} dur_us={d}",
            r.ret, r.errno
        ))?;
        Ok((r, d))
    }

    /// Like [`sys`](Self::sys) but the call must succeed.
    pub fn sys_ok(
        &mut self,
        actor: &str,
        name: &str,
        args: &str,
        f: impl FnOnce() -> Ret,
    ) -> Result<(i64, u64), Fail> {
        let (r, d) = self.sys(actor, name, args, f)?;
        if r.ret < 0 {
            return Err(Fail {
                check: format!("{name} succeeds"),
                detail: format!("{actor} {name}({args}) failed errno={}", r.errno),
            });
        }
        Ok((r.ret, d))
    }

    /// Run a syscall on a new thread (with its own control connection for the marks).
    pub fn spawn(
        &mut self,
        actor: &str,
        name: &str,
        args: &str,
        f: impl FnOnce() -> Ret + Send + 'static,
    ) -> Result<Pending, Fail> {
        let mut c = self
            .ctl
            .reconnect()
            .map_err(|e| format!("ctl reconnect: {e}"))?;
        let (tx, rx) = mpsc::channel();
        let (a, n, g) = (actor.to_string(), name.to_string(), args.to_string());
        // The call mark is logged before the thread starts, so it precedes any request.
        c.ok(&format!("mark call {a} {n} {g}"))?;
        thread::Builder::new()
            .name(format!("wl-{actor}"))
            .spawn(move || {
                let t = Instant::now();
                let r = f();
                let d = t.elapsed().as_micros() as u64;
                let _ = c.ok(&format!(
                    "mark ret {a} {n} {} errno={} dur_us={d}",
                    r.ret, r.errno
                ));
                let _ = tx.send((r, d));
            })
            .map_err(|e| format!("spawn: {e}"))?;
        Ok(Pending {
            what: format!("{actor} {name}"),
            rx,
            got: None,
        })
    }

    // ---- common syscalls ----

    pub fn open(&mut self, actor: &str, name: &str, flags: i32) -> Result<i32, Fail> {
        let p = self.path(name);
        let (fd, _) = self.sys_ok(actor, "open", &format!("{name} {flags:#x}"), || {
            sys::open(&p, flags, 0o644)
        })?;
        self.open_fds.push(fd as i32);
        Ok(fd as i32)
    }

    pub fn create(&mut self, actor: &str, name: &str) -> Result<i32, Fail> {
        self.open(actor, name, libc::O_CREAT | libc::O_RDWR)
    }

    /// pwrite one page per letter of `tags` at `off`; must write everything.
    pub fn pwrite(&mut self, actor: &str, fd: i32, off: u64, tags: &str) -> Result<u64, Fail> {
        let buf = sys::AlignedBuf::pages(tags);
        let (n, d) = self.sys_ok(
            actor,
            "pwrite",
            &format!("fd={fd} off={off} {tags}"),
            || sys::pwrite(fd, buf.bytes(), off),
        )?;
        self.expect("pwrite complete", n as usize == tags.len() * 4096, || {
            format!("short write {n}")
        })?;
        Ok(d)
    }

    pub fn pread(&mut self, actor: &str, fd: i32, off: u64, len: usize) -> Result<Vec<u8>, Fail> {
        let mut buf = sys::AlignedBuf::new(len);
        let (n, _) = self.sys_ok(
            actor,
            "pread",
            &format!("fd={fd} off={off} len={len}"),
            || sys::pread(fd, buf.bytes_mut(), off),
        )?;
        Ok(buf.bytes()[..n as usize].to_vec())
    }

    pub fn sfr(&mut self, actor: &str, fd: i32) -> Result<u64, Fail> {
        Ok(self
            .sys_ok(
                actor,
                "sync_file_range",
                &format!("fd={fd} 0 0 WRITE"),
                || sys::sync_file_range_write(fd, 0, 0),
            )?
            .1)
    }

    pub fn fsync(&mut self, actor: &str, fd: i32) -> Result<u64, Fail> {
        Ok(self
            .sys_ok(actor, "fsync", &format!("fd={fd}"), || sys::fsync(fd))?
            .1)
    }

    pub fn ftruncate(&mut self, actor: &str, fd: i32, len: u64) -> Result<u64, Fail> {
        Ok(self
            .sys_ok(actor, "ftruncate", &format!("fd={fd} {len}"), || {
                sys::ftruncate(fd, len)
            })?
            .1)
    }

    pub fn close(&mut self, actor: &str, fd: i32) -> Res {
        self.open_fds.retain(|f| *f != fd);
        self.sys_ok(actor, "close", &format!("fd={fd}"), || sys::close(fd))?;
        Ok(())
    }

    pub fn sleep_ms(&self, ms: u64) {
        thread::sleep(Duration::from_millis(ms));
    }

    /// Server-side (size, page_tags) of file `name`, via `dump` (never touches the mount).
    pub fn server_file(&mut self, name: &str) -> Result<(u64, String), Fail> {
        let j = self.ctl("dump")?;
        let v: serde_json::Value =
            serde_json::from_str(&j).map_err(|e| format!("dump json: {e}"))?;
        for f in v.as_array().into_iter().flatten() {
            if f["name"] == name {
                return Ok((
                    f["size"].as_u64().unwrap_or(0),
                    f["page_tags"].as_str().unwrap_or("").to_string(),
                ));
            }
        }
        Err(format!("dump: no file {name}").into())
    }

    /// Check the server-side file content at the end of a scenario.
    pub fn expect_file(&mut self, name: &str, size: u64, tags: &str) -> Res {
        let (s, t) = self.server_file(name)?;
        self.expect("server file content", s == size && t == tags, || {
            format!("server {name}: size {s} tags {t:?}, expected size {size} tags {tags:?}")
        })
    }

    /// The trace so far (the server flushes every line).
    pub fn trace(&self) -> Result<Tr, Fail> {
        Ok(Tr(read_trace(&self.trace_path)?))
    }
}

fn read_trace(p: &Path) -> Result<Vec<Event>, String> {
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

// ---------------------------------------------------------------- running

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Path of the `fuse-recorder` binary.
    pub recorder: PathBuf,
    pub keep_traces: Option<PathBuf>,
    /// Server watchdog bound (short: scenarios hold for <= ~0.5 s).
    pub hold_timeout_ms: u64,
    /// Deadline for one scenario body.
    pub scenario_deadline: Duration,
}

impl RunOptions {
    pub fn new(recorder: PathBuf) -> RunOptions {
        RunOptions {
            recorder,
            keep_traces: None,
            hold_timeout_ms: 3000,
            scenario_deadline: Duration::from_secs(20),
        }
    }
}

/// Structured result of one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub name: String,
    pub kernel: String,
    pub kernel_state: Option<String>,
    /// Whether the kernel-specific expected outcome was asserted.
    pub asserted: bool,
    /// pass | fail | skipped
    pub outcome: String,
    pub failed_check: Option<String>,
    pub detail: Option<String>,
    pub wall_ms: u64,
    pub notes: Vec<String>,
    /// Unmount / cleanup steps that were needed beyond the normal path.
    pub cleanup: Vec<String>,
    pub trace: Vec<Event>,
}

impl Outcome {
    pub fn line(&self) -> String {
        match self.outcome.as_str() {
            "skipped" => format!(
                "Scenario {} skipped: {}",
                self.name,
                self.detail.as_deref().unwrap_or("")
            ),
            o => {
                let mut s = format!(
                    "Scenario {} kernel={} outcome={o} {}ms",
                    self.name, self.kernel, self.wall_ms
                );
                if let Some(c) = &self.failed_check {
                    s += &format!(" check={c}: {}", self.detail.as_deref().unwrap_or(""));
                }
                if !self.asserted && o != "fail" {
                    s += " (unknown kernel, outcome not asserted)";
                }
                s
            }
        }
    }
}

/// Why the suite cannot run here, if it cannot.
pub fn cannot_run() -> Option<String> {
    if !sys::is_root() || !Path::new("/dev/fuse").exists() {
        Some("needs root and /dev/fuse".into())
    } else {
        None
    }
}

/// Owns the server child and the mount; cleans both up on drop.
struct Guard {
    child: Option<Child>,
    dir: PathBuf,
    mnt: PathBuf,
    ctl: PathBuf,
    minor: Option<u32>,
    log: Vec<String>,
}

impl Guard {
    fn server_exited(&mut self, ms: u64) -> bool {
        let deadline = Instant::now() + Duration::from_millis(ms);
        loop {
            match self.child.as_mut().map(|c| c.try_wait()) {
                None => return true,
                Some(Ok(Some(_))) | Some(Err(_)) => {
                    self.child = None;
                    return true;
                }
                Some(Ok(None)) => {}
            }
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn abort(&mut self) {
        if let Some(m) = self.minor {
            let r = mount::fusectl_abort(m);
            self.log.push(format!("fusectl abort {m}: {r:?}"));
        }
    }

    /// Bounded teardown; idempotent.
    fn cleanup(&mut self) {
        if self.child.is_some() {
            // Best effort: nothing held any more, no new holds.
            if let Ok(mut c) = CtlClient::connect(&self.ctl) {
                let _ = c.cmd("unhold all");
                let _ = c.cmd("release all");
            }
        }
        mount::unmount(&self.mnt, &mut self.log);
        if !self.server_exited(2000) {
            self.log.push("server still running after unmount".into());
            self.abort();
            if !self.server_exited(2000) {
                if let Some(c) = self.child.as_mut() {
                    // Our own child, by PID.
                    let _ = c.kill();
                    self.log.push(format!("killed server pid {}", c.id()));
                }
                self.server_exited(3000);
            }
        }
        if mount::is_mounted(&self.mnt) {
            self.abort();
            mount::unmount(&self.mnt, &mut self.log);
        }
        if !mount::is_mounted(&self.mnt) {
            let _ = fs::remove_dir(&self.mnt);
        } else {
            self.log.push("MOUNT LEFT BEHIND".into());
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.cleanup();
        let _ = fs::remove_file(&self.ctl);
        if !mount::is_mounted(&self.mnt) {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

fn tmp_dir(name: &str) -> Result<PathBuf, String> {
    for i in 0..100 {
        let d = std::env::temp_dir().join(format!("wbspec-{}-{name}-{i}", std::process::id()));
        match fs::create_dir(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("mkdir {}: {e}", d.display())),
        }
    }
    Err("no temp dir".into())
}

fn skipped(name: &str, kernel: &str, why: &str) -> Outcome {
    Outcome {
        name: name.into(),
        kernel: kernel.into(),
        kernel_state: kernel_state(kernel).map(str::to_string),
        asserted: false,
        outcome: "skipped".into(),
        failed_check: None,
        detail: Some(why.into()),
        wall_ms: 0,
        notes: vec![],
        cleanup: vec![],
        trace: vec![],
    }
}

/// Run one scenario against a fresh mount.
pub fn run_one(sc: &Scenario, opts: &RunOptions) -> Outcome {
    let kernel = kernel_release();
    if let Some(why) = cannot_run().or_else(sc.needs) {
        return skipped(sc.name, &kernel, &why);
    }
    let t0 = Instant::now();
    let state = kernel_state(&kernel);
    let mut out = Outcome {
        name: sc.name.into(),
        kernel: kernel.clone(),
        kernel_state: state.map(str::to_string),
        asserted: state.is_some(),
        outcome: "fail".into(),
        failed_check: None,
        detail: None,
        wall_ms: 0,
        notes: vec![],
        cleanup: vec![],
        trace: vec![],
    };
    let result: Res = (|| {
        let dir = tmp_dir(sc.name)?;
        let mnt = dir.join("mnt");
        let ctl = dir.join("ctl.sock");
        // From here on the guard removes the directory, whatever fails.
        let mut guard = Guard {
            child: None,
            dir: dir.clone(),
            mnt: mnt.clone(),
            ctl: ctl.clone(),
            minor: None,
            log: vec![],
        };
        fs::create_dir(&mnt).map_err(|e| format!("mkdir mnt: {e}"))?;
        let tp = dir.join("trace.jsonl");
        let mut cfg = ServerConfig {
            hold_timeout_ms: opts.hold_timeout_ms,
            ..ServerConfig::default()
        };
        (sc.config)(&mut cfg);
        let stderr = fs::File::create(dir.join("server.log")).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&opts.recorder);
        cmd.arg("--mount")
            .arg(&mnt)
            .arg("--ctl")
            .arg(&ctl)
            .arg("--trace")
            .arg(&tp)
            .arg("--scenario")
            .arg(sc.name)
            .args(cfg.to_args())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        // If the runner dies, the server dies too (closing /dev/fuse aborts the
        // connection, so nothing stays blocked on it).
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        guard.child = Some(
            cmd.spawn()
                .map_err(|e| format!("spawn {}: {e}", opts.recorder.display()))?,
        );
        // Ready = control socket answers (it is created after mount + INIT).
        let deadline = Instant::now() + Duration::from_secs(5);
        let client = loop {
            if let Ok(mut c) = CtlClient::connect(&ctl) {
                if c.ok("ping").is_ok() {
                    break c;
                }
            }
            if Instant::now() > deadline || guard.server_exited(0) {
                let log = fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                return Err(format!("server did not become ready: {}", log.trim()).into());
            }
            thread::sleep(Duration::from_millis(5));
        };
        guard.minor = mount::find_mount(&mnt).map(|m| m.1);
        if guard.minor.is_none() {
            return Err("mount not found in mountinfo".to_string().into());
        }
        let ctx = Ctx {
            mnt: mnt.clone(),
            ctl: client,
            trace_path: tp.clone(),
            asserting: state.is_some(),
            notes: vec![],
            open_fds: vec![],
            maps: vec![],
        };
        let (tx, rx) = mpsc::channel();
        let run = sc.run;
        thread::Builder::new()
            .name(format!("sc-{}", sc.name))
            .spawn(move || {
                let mut ctx = ctx;
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&mut ctx)))
                    .unwrap_or_else(|_| Err("scenario panicked".to_string().into()));
                // Quiesce: no holds, nothing parked, then close what is still open.
                let _ = ctx.ctl.cmd("unhold all");
                let _ = ctx.ctl.cmd("release all");
                for (a, l) in std::mem::take(&mut ctx.maps) {
                    sys::munmap(a, l);
                }
                for fd in std::mem::take(&mut ctx.open_fds) {
                    sys::close(fd);
                }
                let _ = tx.send((r, ctx.notes));
            })
            .map_err(|e| format!("spawn: {e}"))?;
        let r = match rx.recv_timeout(opts.scenario_deadline) {
            Ok((r, notes)) => {
                out.notes = notes;
                r
            }
            Err(_) => {
                // Unblock everything: abort the connection, then give the body a moment.
                guard.log.push("scenario deadline exceeded".into());
                guard.abort();
                let _ = rx.recv_timeout(Duration::from_secs(5));
                Err(Fail {
                    check: "deadline".into(),
                    detail: format!("scenario exceeded {:?}", opts.scenario_deadline),
                })
            }
        };
        guard.cleanup();
        out.cleanup = std::mem::take(&mut guard.log);
        out.trace = read_trace(&tp).unwrap_or_default();
        if let Some(k) = &opts.keep_traces {
            let _ = fs::create_dir_all(k);
            let _ = fs::copy(&tp, k.join(format!("{}.jsonl", sc.name)));
        }
        drop(guard);
        r
    })();
    out.wall_ms = t0.elapsed().as_millis() as u64;
    match result {
        Ok(()) => {
            out.outcome = "pass".into();
        }
        Err(f) if f.check == SKIP => {
            out.outcome = "skipped".into();
            out.detail = Some(f.detail);
        }
        Err(f) => {
            out.outcome = "fail".into();
            out.failed_check = Some(f.check);
            out.detail = Some(f.detail);
        }
    }
    out
}

/// Unmount leftovers of an earlier runner that was killed: mounts at
/// `$TMPDIR/wbspec-<pid>-*/mnt` whose runner pid no longer exists.
/// (The server dies with its runner through PR_SET_PDEATHSIG, so such a mount
/// is a dead "transport endpoint not connected" entry.) Returns what was done.
pub fn reap_stale_mounts() -> Vec<String> {
    let mut log = vec![];
    let tmp = std::env::temp_dir();
    let prefix = tmp.join("wbspec-").to_string_lossy().to_string();
    let info = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for line in info.lines() {
        let Some(mp) = line.split(' ').nth(4) else {
            continue;
        };
        let Some(rest) = mp.strip_prefix(&prefix) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let mnt = PathBuf::from(mp);
        mount::unmount(&mnt, &mut log);
        log.push(format!("reaped stale mount {mp}"));
        if !mount::is_mounted(&mnt) {
            if let Some(d) = mnt.parent() {
                let _ = fs::remove_dir_all(d);
            }
        }
    }
    log
}

/// Run the named scenarios (all if empty), one at a time.
pub fn run_suite(
    names: &[String],
    opts: &RunOptions,
    mut each: impl FnMut(&Outcome),
) -> Vec<Outcome> {
    if cannot_run().is_none() {
        for l in reap_stale_mounts() {
            eprintln!("wbspec-harness: {l}");
        }
    }
    let mut all = scenarios::all();
    all.extend(scenarios::selftests());
    let picked: Vec<&Scenario> = if names.is_empty() {
        all.iter().filter(|s| !s.name.starts_with("x_")).collect()
    } else {
        names
            .iter()
            .filter_map(|n| all.iter().find(|s| s.name == n))
            .collect()
    };
    let mut v = vec![];
    for sc in picked {
        let o = run_one(sc, opts);
        each(&o);
        v.push(o);
    }
    v
}

/// `N passed, M failed[, K skipped]`
pub fn summary(v: &[Outcome]) -> String {
    let p = v.iter().filter(|o| o.outcome == "pass").count();
    let f = v.iter().filter(|o| o.outcome == "fail").count();
    let k = v.iter().filter(|o| o.outcome == "skipped").count();
    let mut s = format!("{p} passed, {f} failed");
    if k > 0 {
        s += &format!(", {k} skipped");
    }
    s
}
