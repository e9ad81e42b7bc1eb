//! The ptrace loop: runs CMD under PTRACE_TRACEME, follows every thread
//! and child (PTRACE_O_TRACECLONE|FORK|VFORK|EXEC, TRACESYSGOOD,
//! EXITKILL), and brackets each syscall on a file of the mount
//! ([`super::decode`]) with a `call` mark sent at its syscall-entry
//! stop and a `ret` mark at its exit stop. Each mark is acknowledged by
//! the server (`ok <seq>`) before the thread is resumed, so the call
//! mark's seq is below that of every request the syscall sends, and the
//! ret mark's above every reply it waited for (docs/record.md).
//!
//! Signals: SIGINT, SIGTERM and SIGCHLD are blocked in this thread
//! (before any other thread exists) and taken with sigtimedwait, so a
//! signal is never lost between a wait and a check: on SIGINT/SIGTERM
//! every traced process is killed (SIGKILL, by its PID: they are this
//! run's own) and the loop goes on until all have been reaped, bounded.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::decode::{self, AtExit, Call, Env};
use crate::control::CtlClient;

/// How CMD ended, and what was recorded.
#[derive(Debug, Default)]
pub struct Ended {
    /// CMD's exit code, or 128 + its fatal signal.
    pub code: i32,
    /// The signal (SIGINT/SIGTERM) that interrupted the recording.
    pub interrupted: Option<i32>,
    /// Syscalls marked.
    pub marked: u64,
    /// Threads and processes traced.
    pub threads: u64,
    /// Calls whose thread died in them (their ret mark says `died`).
    pub died_in_call: u64,
}

/// A marked call waiting for its exit stop.
struct Open {
    /// The actor its call mark named (`T<tid>`; a thread that exec'd
    /// from a non-leader keeps it for its execve's ret, though its tid
    /// became the leader's).
    actor: String,
    call: Call,
    since: Instant,
}

#[derive(Default)]
struct Thread {
    /// Not yet stopped once (its first stop, SIGSTOP or the exec's
    /// SIGTRAP, is ours and not delivered).
    fresh: bool,
    open: Option<Open>,
}

/// How long the loop keeps reaping after it killed the tracees.
const REAP_BOUND: Duration = Duration::from_secs(10);

/// Block SIGINT, SIGTERM and SIGCHLD in the calling thread (and every
/// thread it starts later); the loop takes them with sigtimedwait.
/// Children are given an empty mask before their exec ([`unblock_all`]).
pub fn block_signals() {
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGCHLD] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// An empty signal mask for the calling thread (in a child before its
/// exec: std::process::Command keeps the parent's mask).
pub fn unblock_all() {
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
}

/// A pending SIGINT/SIGTERM taken without waiting (for the setup before
/// the loop).
pub fn pending_stop() -> Option<i32> {
    wait_signal(Duration::ZERO).filter(|s| *s != libc::SIGCHLD)
}

/// Wait up to `d` for SIGINT, SIGTERM or SIGCHLD; returns it.
fn wait_signal(d: Duration) -> Option<i32> {
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGCHLD] {
            libc::sigaddset(&mut set, s);
        }
        let ts = libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        };
        let s = libc::sigtimedwait(&set, std::ptr::null_mut(), &ts);
        (s > 0).then_some(s)
    }
}

fn ptrace(req: libc::c_uint, pid: i32, addr: usize, data: usize) -> i64 {
    unsafe {
        libc::ptrace(
            req,
            pid,
            addr as *mut libc::c_void,
            data as *mut libc::c_void,
        )
    }
}

/// Resume `pid` to its next syscall stop, delivering `sig`.
fn resume(pid: i32, sig: i32) {
    ptrace(libc::PTRACE_SYSCALL, pid, 0, sig as usize);
}

/// Start `argv` with its working directory `cwd`, traced from its first
/// instruction (PTRACE_TRACEME; the exec stops it with SIGTRAP).
pub fn spawn(argv: &[String], cwd: &Path) -> Result<i32, String> {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(&argv[0]);
    cmd.args(&argv[1..]).current_dir(cwd);
    unsafe {
        cmd.pre_exec(|| {
            // the recorder's blocked signals are not CMD's
            unblock_all();
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", argv[0]))?;
    Ok(child.id() as i32)
}

/// The recorder's side of the loop.
pub struct Tracer<'a> {
    ctl: &'a mut CtlClient,
    mnt: PathBuf,
    server: Option<i32>,
    root: i32,
    threads: HashMap<i32, Thread>,
    mapped: bool,
    ended: Ended,
    /// When the tracees were killed (an interrupt or a failure).
    killed: Option<Instant>,
    /// Why the recording failed, if it did.
    failed: Option<String>,
}

impl<'a> Tracer<'a> {
    /// Trace `root` (just spawned by [`spawn`]) until every traced
    /// thread has ended. `server`: the recording server's PID (its exit
    /// is a failure).
    pub fn new(ctl: &'a mut CtlClient, mnt: &Path, root: i32, server: Option<u32>) -> Self {
        let mut threads = HashMap::new();
        threads.insert(
            root,
            Thread {
                fresh: true,
                open: None,
            },
        );
        Tracer {
            ctl,
            mnt: mnt.to_path_buf(),
            server: server.map(|p| p as i32),
            root,
            threads,
            mapped: false,
            ended: Ended {
                threads: 1,
                ..Ended::default()
            },
            killed: None,
            failed: None,
        }
    }

    /// Run the loop; Err: the recording failed (its trace is not valid).
    pub fn run(mut self) -> Result<Ended, String> {
        while !self.threads.is_empty() {
            let mut st = 0;
            let pid = unsafe { libc::waitpid(-1, &mut st, libc::__WALL | libc::WNOHANG) };
            if pid > 0 {
                self.event(pid, st);
                // a busy tracee always has a next stop: look for a
                // SIGINT/SIGTERM between stops too
                if let Some(s) = pending_stop() {
                    self.interrupt(s);
                }
                continue;
            }
            if pid < 0 {
                // ECHILD: nothing left to wait for
                break;
            }
            if self.killed.is_some_and(|t| t.elapsed() > REAP_BOUND) {
                return Err(format!(
                    "{} traced threads did not end within {REAP_BOUND:?} of SIGKILL",
                    self.threads.len()
                ));
            }
            match wait_signal(Duration::from_millis(200)) {
                Some(s) if s == libc::SIGINT || s == libc::SIGTERM => self.interrupt(s),
                Some(_) => {}
                None => self.prune(),
            }
        }
        match self.failed {
            Some(e) => Err(e),
            None => Ok(self.ended),
        }
    }

    /// SIGINT or SIGTERM: the recording ends, every traced process is
    /// killed.
    fn interrupt(&mut self, sig: i32) {
        self.ended.interrupted.get_or_insert(sig);
        self.kill_all();
    }

    /// SIGKILL every traced thread's process (this run's own, by PID).
    fn kill_all(&mut self) {
        if self.killed.is_none() {
            self.killed = Some(Instant::now());
        }
        for pid in self.threads.keys() {
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
    }

    fn fail(&mut self, why: String) {
        if self.failed.is_none() {
            self.failed = Some(why);
        }
        self.kill_all();
    }

    fn mark(&mut self, text: &str) {
        if self.failed.is_some() {
            return;
        }
        if let Err(e) = self.ctl.ok(&format!("mark {text}")) {
            self.fail(format!("the server did not acknowledge a mark: {e}"));
        }
    }

    fn event(&mut self, pid: i32, st: i32) {
        if Some(pid) == self.server {
            self.server = None;
            self.fail("the recording server exited while the command ran".into());
            return;
        }
        if libc::WIFEXITED(st) || libc::WIFSIGNALED(st) {
            self.gone(pid, st);
            return;
        }
        if !libc::WIFSTOPPED(st) {
            return;
        }
        let sig = libc::WSTOPSIG(st);
        let event = st >> 16;
        // a new thread's first stop may come before its creator's
        // clone event
        let ended = &mut self.ended;
        let t = self.threads.entry(pid).or_insert_with(|| {
            ended.threads += 1;
            Thread {
                fresh: true,
                open: None,
            }
        });
        if t.fresh && event == 0 && (sig == libc::SIGSTOP || sig == libc::SIGTRAP) {
            // the first stop of a new thread (SIGSTOP) or of CMD after
            // its exec (SIGTRAP): ours, not delivered
            t.fresh = false;
            if self.killed.is_some() {
                // born after the kill (its clone event may come later)
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            if pid == self.root {
                let opts = libc::PTRACE_O_TRACESYSGOOD
                    | libc::PTRACE_O_TRACECLONE
                    | libc::PTRACE_O_TRACEFORK
                    | libc::PTRACE_O_TRACEVFORK
                    | libc::PTRACE_O_TRACEEXEC
                    | libc::PTRACE_O_TRACEEXIT
                    | libc::PTRACE_O_EXITKILL;
                if ptrace(libc::PTRACE_SETOPTIONS, pid, 0, opts as usize) != 0 {
                    let e = std::io::Error::last_os_error();
                    self.fail(format!("PTRACE_SETOPTIONS: {e}"));
                }
            }
            resume(pid, 0);
            return;
        }
        t.fresh = false;
        if sig == (libc::SIGTRAP | 0x80) {
            self.syscall_stop(pid);
            resume(pid, 0);
            return;
        }
        if sig == libc::SIGTRAP && event != 0 {
            match event {
                libc::PTRACE_EVENT_CLONE | libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK => {
                    let mut new: libc::c_ulong = 0;
                    ptrace(
                        libc::PTRACE_GETEVENTMSG,
                        pid,
                        0,
                        &mut new as *mut _ as usize,
                    );
                    let new = new as i32;
                    if new > 0 && !self.threads.contains_key(&new) {
                        self.threads.insert(
                            new,
                            Thread {
                                fresh: true,
                                open: None,
                            },
                        );
                        self.ended.threads += 1;
                        if self.killed.is_some() {
                            unsafe { libc::kill(new, libc::SIGKILL) };
                        }
                    }
                }
                libc::PTRACE_EVENT_EXIT => self.exiting(pid),
                libc::PTRACE_EVENT_EXEC => {
                    // a thread other than the leader exec'd: it now has
                    // the leader's tid (`pid`)
                    let mut former: libc::c_ulong = 0;
                    ptrace(
                        libc::PTRACE_GETEVENTMSG,
                        pid,
                        0,
                        &mut former as *mut _ as usize,
                    );
                    let former = former as i32;
                    if former != pid {
                        // the old leader ended in the exec (de_thread):
                        // a call it was in gets its ret; the exec'ing
                        // thread (with its execve call) takes its tid
                        let f = self.threads.remove(&former);
                        self.ended_in(pid, "died=exec", None);
                        if let Some(f) = f {
                            self.threads.insert(pid, f);
                        }
                    }
                }
                _ => {}
            }
            resume(pid, 0);
            return;
        }
        // a signal for the tracee, or a group-stop (no siginfo): a
        // group-stop is resumed (job control is not kept under record)
        let mut si: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let deliver = ptrace(libc::PTRACE_GETSIGINFO, pid, 0, &mut si as *mut _ as usize) == 0;
        resume(pid, if deliver { sig } else { 0 });
    }

    /// Thread `pid` ended (`how`: `died=SIG`, `died=exit`, ...): it is
    /// no longer traced, and a call it was in gets its `ret` mark. The
    /// syscall never returned to user space: -1 EINTR, marked `died=`, so
    /// conform names it a failed call (errors are not modelled) and the
    /// trace stays well formed (every call has its ret).
    /// An `exit` call (see [`Self::exiting`]) returns the process's
    /// status (`code`: exit code or 128 + signal) instead.
    fn ended_in(&mut self, pid: i32, how: &str, code: Option<i32>) {
        let Some(t) = self.threads.remove(&pid) else {
            return;
        };
        if let Some(o) = t.open {
            let d = o.since.elapsed().as_micros();
            match code.filter(|_| o.call.name == "exit") {
                Some(c) => self.mark(&format!("ret {} exit {c} errno=0 dur_us={d}", o.actor)),
                None => {
                    self.ended.died_in_call += 1;
                    self.mark(&format!(
                        "ret {} {} -1 errno={} dur_us={d} {how}",
                        o.actor,
                        o.call.name,
                        libc::EINTR
                    ))
                }
            }
        }
    }

    /// Threads that no longer exist though no wait reported their end
    /// (threads an exec ended, if their end was not reported): ended.
    fn prune(&mut self) {
        let gone: Vec<i32> = self
            .threads
            .keys()
            .copied()
            .filter(|t| !Path::new(&format!("/proc/{t}")).exists())
            .collect();
        for t in gone {
            self.ended_in(t, "died=gone", None);
        }
    }

    /// Thread `pid` stopped at PTRACE_EVENT_EXIT: before do_exit closes
    /// its files and drops its memory (exit_mm, exit_files come after
    /// the stop). If it is its process's last thread and the process
    /// holds mount files, an `exit` call is marked: the FLUSH, RELEASE and
    /// writeback of the exit then lie inside a call of this thread, whose
    /// ret (the process's status) is marked when the thread is reaped. A
    /// thread killed by SIGKILL stops there too (seen on 6.18.44).
    fn exiting(&mut self, pid: i32) {
        let threads = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Threads:").map(|v| v.trim().parse::<u32>()))
            });
        if threads != Some(Ok(1)) || self.threads.get(&pid).is_none_or(|t| t.open.is_some()) {
            return;
        }
        let env = Env {
            mnt: &self.mnt,
            mapped: self.mapped,
        };
        let Some(h) = decode::holdings(&env, pid, false) else {
            return;
        };
        self.mark(&format!("call T{pid} exit {h}"));
        self.ended.marked += 1;
        if let Some(t) = self.threads.get_mut(&pid) {
            t.open = Some(Open {
                actor: format!("T{pid}"),
                call: Call {
                    name: "exit".into(),
                    args: h,
                    at_exit: AtExit::Nothing,
                },
                since: Instant::now(),
            });
        }
    }

    /// A wait reported thread `pid`'s end with status `st`.
    fn gone(&mut self, pid: i32, st: i32) {
        let how = if libc::WIFSIGNALED(st) {
            format!("died={}", libc::WTERMSIG(st))
        } else {
            "died=exit".into()
        };
        let code = if libc::WIFEXITED(st) {
            libc::WEXITSTATUS(st)
        } else {
            128 + libc::WTERMSIG(st)
        };
        self.ended_in(pid, &how, Some(code));
        if pid == self.root {
            self.ended.code = code;
        }
    }

    fn syscall_stop(&mut self, pid: i32) {
        let mut info: libc::ptrace_syscall_info = unsafe { std::mem::zeroed() };
        let n = ptrace(
            libc::PTRACE_GET_SYSCALL_INFO,
            pid,
            std::mem::size_of::<libc::ptrace_syscall_info>(),
            &mut info as *mut _ as usize,
        );
        if n <= 0 {
            return;
        }
        match info.op {
            libc::PTRACE_SYSCALL_INFO_ENTRY => {
                if info.arch != AUDIT_ARCH_X86_64 {
                    // a 32-bit process: other syscall numbers, not decoded
                    return;
                }
                let e = unsafe { info.u.entry };
                let env = Env {
                    mnt: &self.mnt,
                    mapped: self.mapped,
                };
                let Some(call) = decode::entry(&env, pid, e.nr as i64, e.args) else {
                    return;
                };
                self.mark(&format!("call T{pid} {} {}", call.name, call.args));
                self.ended.marked += 1;
                if let Some(t) = self.threads.get_mut(&pid) {
                    t.open = Some(Open {
                        actor: format!("T{pid}"),
                        call,
                        since: Instant::now(),
                    });
                }
            }
            libc::PTRACE_SYSCALL_INFO_EXIT => {
                let Some(o) = self.threads.get_mut(&pid).and_then(|t| t.open.take()) else {
                    return;
                };
                let x = unsafe { info.u.exit };
                let (ret, errno) = if x.is_error != 0 {
                    (-1, -x.sval)
                } else {
                    (x.sval, 0)
                };
                if o.call.at_exit == AtExit::Mapped && ret >= 0 {
                    self.mapped = true;
                }
                let d = o.since.elapsed().as_micros();
                let tail = decode::exit_tail(pid, &o.call, ret);
                self.mark(&format!(
                    "ret {} {} {ret} errno={errno} dur_us={d}{tail}",
                    o.actor, o.call.name
                ));
            }
            _ => {}
        }
    }
}

/// AUDIT_ARCH_X86_64 (linux/audit.h: EM_X86_64 | __AUDIT_ARCH_64BIT |
/// __AUDIT_ARCH_LE).
const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
