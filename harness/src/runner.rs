//! Scenario runner: one scenario at a time, each against a fresh mount served
//! by a `fuse-recorder` child process whose PID we keep.
//!
//! Safety: every wait is bounded. The scenario body runs in its own thread
//! with a deadline; a syscall blocked on a held reply is unblocked by the
//! server's watchdog, and past the deadline the connection is aborted through
//! fusectl. Unmount: `fusermount3 -u`, then `umount -l`, then fusectl abort,
//! then SIGKILL of our own child by PID. A Drop guard does all of this on panic.
//!
//! What a scenario body gets is ctx.rs; how its checks fail, fail.rs;
//! queries over its trace, trace_query.rs.
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::control::CtlClient;
use crate::ctx::Ctx;
use crate::fail::{Fail, Res, SKIP};
use crate::mount;
use crate::scenario_kit::Scenario;
use crate::scenarios;
use crate::server::{kernel_release, ServerConfig};
use crate::sys;
use crate::trace::Event;
use crate::trace_query::read_trace;

/// The label of the model state `release` stands for (the `[[release]]`
/// table of checks/facts/kernels.toml, [`crate::kernels`]); `None`: no
/// state, kernel checks are recorded, not asserted.
pub fn kernel_state(release: &str) -> Option<&'static str> {
    crate::kernels::state_of(release).map(|r| r.label.as_str())
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
                    s += &match &self.kernel_state {
                        Some(st) => format!(
                            " (state {st}: kernel checks written for another state, not asserted)"
                        ),
                        None => " (unknown kernel, outcome not asserted)".to_string(),
                    };
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
    /// Its entry in the interrupt registry (interrupt.rs).
    reg: usize,
}

impl Guard {
    /// Tell the interrupt registry which child and connection are live.
    fn registered(&self) {
        crate::interrupt::set(self.reg, self.child.as_ref().map(|c| c.id()), self.minor);
    }

    fn server_exited(&mut self, ms: u64) -> bool {
        let deadline = Instant::now() + Duration::from_millis(ms);
        loop {
            match self.child.as_mut().map(|c| c.try_wait()) {
                None => return true,
                Some(Ok(Some(_))) | Some(Err(_)) => {
                    self.child = None;
                    self.registered();
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
                // a server lingering after an abort (`--linger`) exits
                let _ = c.cmd("quit");
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
        crate::interrupt::unregister(self.reg);
    }
}

/// Create and register (interrupt.rs) a fresh scenario directory; refused
/// once a signal arrived.
fn tmp_dir(name: &str) -> Result<(PathBuf, usize), String> {
    for i in 0..100 {
        let d = std::env::temp_dir().join(format!("wbspec-{}-{name}-{i}", std::process::id()));
        match crate::interrupt::make_dir(&d, d.join("mnt")) {
            Ok(id) => return Ok((d, id)),
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

/// The `fuse-recorder` binary: `$WBSPEC_FUSE_RECORDER`, or next to this
/// executable; None if it does not exist.
pub fn find_recorder() -> Option<PathBuf> {
    std::env::var_os("WBSPEC_FUSE_RECORDER")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::current_exe()
                .ok()
                .map(|e| e.with_file_name("fuse-recorder"))
        })
        .filter(|r| r.exists())
}

/// A recording server on a fresh mount: what [`serve`] starts. The
/// guard unmounts, stops the server and removes the directory (with the
/// trace) when dropped; [`Served::cleanup`] does the first two early, so
/// the trace can be read complete (the server's `exit` line) first.
pub struct Served {
    guard: Guard,
    /// Its control connection (it answered `ping`).
    pub client: CtlClient,
    pub mnt: PathBuf,
    /// The trace the server writes (inside the guarded directory).
    pub trace: PathBuf,
}

impl Served {
    /// Unmount and stop the server (bounded; idempotent); returns the
    /// steps beyond the normal path.
    pub fn cleanup(&mut self) -> Vec<String> {
        self.guard.cleanup();
        std::mem::take(&mut self.guard.log)
    }

    /// The mount's FUSE connection (/sys/fs/fuse/connections/<conn>),
    /// if its mountinfo line was found.
    pub fn conn(&self) -> Option<u32> {
        self.guard.minor
    }

    /// The server's PID while it runs.
    pub fn server_pid(&self) -> Option<u32> {
        self.guard.child.as_ref().map(|c| c.id())
    }
}

/// Start the recording server `recorder` with `cfg` on a fresh mount in
/// a registered temporary directory (interrupt.rs), as every scenario
/// is: `name` is the trace header's scenario. Ready when its control
/// socket answers and the mount is in mountinfo; on any error nothing is
/// left mounted and the directory is removed.
pub fn serve(name: &str, cfg: &ServerConfig, recorder: &Path) -> Result<Served, Fail> {
    // a configuration the server cannot negotiate as written (its header
    // would misstate the kernel's) is the scenario's error, not a trace
    cfg.check()?;
    let (dir, reg) = tmp_dir(name)?;
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
        reg,
    };
    fs::create_dir(&mnt).map_err(|e| format!("mkdir mnt: {e}"))?;
    let tp = dir.join("trace.jsonl");
    let stderr = fs::File::create(dir.join("server.log")).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(recorder);
    cmd.arg("--mount")
        .arg(&mnt)
        .arg("--ctl")
        .arg(&ctl)
        .arg("--trace")
        .arg(&tp)
        .arg("--scenario")
        .arg(name)
        .args(cfg.to_args())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    // If the runner dies, the server dies too (closing /dev/fuse aborts the
    // connection, so nothing stays blocked on it). In its own process
    // group: a terminal's ^C goes to the runner (interrupt.rs, or `record`
    // and the program it records), which takes the server down in order.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            libc::setpgid(0, 0);
            // `record` blocks signals it takes synchronously; not the server's
            crate::record::tracer::unblock_all();
            Ok(())
        });
    }
    guard.child = Some(
        crate::interrupt::spawn(reg, &mut cmd)
            .map_err(|e| format!("spawn {}: {e}", recorder.display()))?,
    );
    guard.registered();
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
    guard.registered();
    if guard.minor.is_none() {
        return Err("mount not found in mountinfo".to_string().into());
    }
    Ok(Served {
        guard,
        client,
        mnt,
        trace: tp,
    })
}

/// Run one scenario against a fresh mount.
pub fn run_one(sc: &Scenario, opts: &RunOptions) -> Outcome {
    let kernel = kernel_release();
    if let Some(why) = cannot_run().or_else(sc.needs) {
        return skipped(sc.name, &kernel, &why);
    }
    let t0 = Instant::now();
    let state = kernel_state(&kernel);
    // Kernel checks are asserted only on a kernel whose state the
    // scenario's checks were written for (Scenario::expect_on).
    let asserting =
        crate::kernels::state_of(&kernel).is_some_and(|r| sc.expect_on.contains(&r.state.as_str()));
    let mut out = Outcome {
        name: sc.name.into(),
        kernel: kernel.clone(),
        kernel_state: state.map(str::to_string),
        asserted: asserting,
        outcome: "fail".into(),
        failed_check: None,
        detail: None,
        wall_ms: 0,
        notes: vec![],
        cleanup: vec![],
        trace: vec![],
    };
    let result: Res = (|| {
        let mut cfg = ServerConfig {
            hold_timeout_ms: opts.hold_timeout_ms,
            ..ServerConfig::default()
        };
        (sc.config)(&mut cfg);
        let Served {
            mut guard,
            client,
            mnt,
            trace: tp,
        } = serve(sc.name, &cfg, &opts.recorder)?;
        let ctx = Ctx {
            conn: guard.minor,
            mnt: mnt.clone(),
            ctl: client,
            trace_path: tp.clone(),
            asserting,
            state: crate::kernels::state_of(&kernel).map(|r| r.state.as_str()),
            notes: vec![],
            open_fds: vec![],
            maps: vec![],
        };
        let (tx, rx) = mpsc::channel();
        let run = sc.run.clone();
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
        // its runner is gone, so nothing will answer or release its held
        // requests: abort the connection first, or a thread of its server
        // asleep in the kernel (a notification waiting on a held WRITE's
        // writeback) keeps the connection's fd open and the unmount lazy
        if let Some((_, minor, fstype)) = mount::find_mount(&mnt) {
            if fstype.starts_with("fuse") {
                let r = mount::fusectl_abort(minor);
                log.push(format!("fusectl abort of connection {minor}: {r:?}"));
            }
        }
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
