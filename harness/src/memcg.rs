//! Reclaim scenarios (seed 000 patches 1–2, 0c4f8ed498ce): does legacy
//! (cgroup v1) memcg reclaim sleep on a FUSE folio's writeback?
//!
//! A child process in a fresh memory cgroup v1 with a small limit faults
//! a page of the mount in through MAP_SHARED (the folio is charged to its
//! memcg), stores to it, starts its writeback with
//! sync_file_range(SYNC_FILE_RANGE_WRITE) while the server holds the WRITE,
//! then touches private anonymous memory past the limit. Reclaim in that
//! memcg meets the folio under writeback: shrink_folio_list marks it
//! PG_reclaim (case 2) and, meeting it again, waits in folio_wait_writeback
//! (case 3) unless the mapping has AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM,
//! which FUSE sets on writeback_cache mounts only. We read the child's
//! kernel stack (/proc/PID/stack) while the WRITE is held. The child stands
//! in for a FUSE server that allocates in the writer's memcg; the real
//! deadlock (the server itself waiting) is what the held reply emulates.
//!
//! Safety: only the child is in the memcg, never the server or this
//! process; the WRITE is held under the server's watchdog; every wait is
//! bounded; the child is ours and is killed by PID if it outlives the
//! scenario; the memcg is removed at the end. Without swap the anonymous
//! memory cannot be reclaimed, so the child ends OOM-killed inside its own
//! memcg (it may then sleep once more in fuse_vma_close's writeback wait,
//! which is not reclaim, until the WRITE is released): asserted, by the
//! memcg's oom_kill count. The absence of a reclaim wait counts only if
//! the child's stack was read at all.
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::ctx::Ctx;
use crate::fail::{Fail, Res};

/// The child's memcg limit and how much anonymous memory it touches.
const LIMIT: u64 = 16 << 20;
const ALLOC: usize = 64 << 20;
/// How long the child's stack is watched while the WRITE is held.
const OBSERVE_MS: u64 = 2000;
const PG: usize = 4096;

/// The cgroup-v1 memory path in a /proc/PID/cgroup text (a v2-only
/// system has only the `0::/path` line, no `memory` controller).
fn memcg_path(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let mut it = l.splitn(3, ':');
        let (_, ctrl, path) = (it.next()?, it.next()?, it.next()?);
        ctrl.split(',')
            .any(|c| c == "memory")
            .then(|| path.to_string())
    })
}

/// This process's directory in the cgroup-v1 memory hierarchy.
pub fn own_memcg() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = memcg_path(&text)?;
    let dir = Path::new("/sys/fs/cgroup/memory").join(rel.trim_start_matches('/'));
    dir.join("memory.limit_in_bytes").exists().then_some(dir)
}

/// Why the reclaim scenarios cannot run here, if they cannot.
pub fn needs_memcg_v1() -> Option<String> {
    if own_memcg().is_none() {
        Some("no cgroup-v1 memory controller (reclaim scenario)".into())
    } else {
        None
    }
}

fn fail(check: &str, detail: String) -> Fail {
    Fail {
        check: check.into(),
        detail,
    }
}

/// The child, after fork: async-signal-safe calls only (no allocation).
unsafe fn child_main(path: &CString, r_go: i32, w_done: i32) -> ! {
    let mut b = [0u8; 1];
    if libc::read(r_go, b.as_mut_ptr().cast(), 1) != 1 {
        libc::_exit(10);
    }
    // one CPU: its per-CPU LRU batch is drained by its own reclaim
    let mut set: libc::cpu_set_t = std::mem::zeroed();
    libc::CPU_SET(0, &mut set);
    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    let fd = libc::open(path.as_ptr(), libc::O_RDWR);
    if fd < 0 {
        libc::_exit(11);
    }
    let p = libc::mmap(
        std::ptr::null_mut(),
        PG,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_SHARED,
        fd,
        0,
    );
    if p == libc::MAP_FAILED {
        libc::_exit(12);
    }
    // read fault: READ, the folio is charged to this memcg; then the store
    // (fuse_page_mkwrite) dirties it
    std::ptr::read_volatile(p as *const u8);
    std::ptr::write_volatile(p as *mut u8, b'R');
    if libc::sync_file_range(fd, 0, PG as i64, libc::SYNC_FILE_RANGE_WRITE) != 0 {
        libc::_exit(13);
    }
    libc::write(w_done, b"d".as_ptr().cast(), 1);
    if libc::read(r_go, b.as_mut_ptr().cast(), 1) != 1 {
        libc::_exit(14);
    }
    let a = libc::mmap(
        std::ptr::null_mut(),
        ALLOC,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
        -1,
        0,
    );
    if a == libc::MAP_FAILED {
        libc::_exit(15);
    }
    let mut off = 0;
    while off < ALLOC {
        std::ptr::write_volatile((a as *mut u8).add(off), 1);
        off += PG;
    }
    libc::_exit(0)
}

/// What the child did while the WRITE was held.
#[derive(Debug, Default)]
struct Seen {
    /// Its stack showed folio_wait_writeback under shrink_folio_list.
    reclaim_wait: Option<String>,
    /// It exited (OOM-killed) while the WRITE was still held.
    ended_early: Option<i32>,
    /// folio_wait_writeback outside reclaim (the exit path).
    other_wait: bool,
    /// How often /proc/PID/stack was read, and the last error reading it:
    /// a stack never read is no evidence of "no reclaim wait".
    stack_reads: usize,
    stack_error: Option<String>,
}

/// How the child ended (`Child::finish`).
struct Ended {
    status: Option<i32>,
    /// The memcg's `oom_kill` count (memory.oom_control) before removal.
    oom_kills: Option<u64>,
    /// This process killed it by PID (it outlived the released WRITE).
    killed_by_us: bool,
}

/// The `oom_kill N` line of a cgroup-v1 memory.oom_control text.
fn oom_kills(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|n| n.trim().parse().ok())
}

/// Whether the machine has swap (SwapTotal in /proc/meminfo is not 0).
fn have_swap() -> bool {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("SwapTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .is_some_and(|kb| kb > 0)
}

/// The child and its memcg; reaped and removed by `finish`.
struct Child {
    pid: libc::pid_t,
    memcg: PathBuf,
    /// Its wait status once reaped (its PID must not be signalled after).
    reaped: Option<i32>,
}

impl Child {
    fn status(&mut self, ms: u64) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_millis(ms);
        while self.reaped.is_none() {
            let mut st = 0;
            let r = unsafe { libc::waitpid(self.pid, &mut st, libc::WNOHANG) };
            if r == self.pid {
                self.reaped = Some(st);
            } else if r < 0 || Instant::now() >= deadline {
                break;
            } else {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        self.reaped
    }

    /// Reap the child (killing it by PID if it is still alive after the
    /// WRITE was released) and remove the memcg.
    fn finish(mut self, log: &mut Vec<String>) -> Ended {
        let mut st = self.status(5000);
        let killed_by_us = st.is_none();
        if killed_by_us {
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
            log.push(format!("child {} killed by PID", self.pid));
            st = self.status(5000);
        }
        if st.is_none() {
            log.push(format!("child {} not reaped", self.pid));
        }
        let oom = std::fs::read_to_string(self.memcg.join("memory.oom_control"))
            .ok()
            .and_then(|t| oom_kills(&t));
        let ended = Ended {
            status: st,
            oom_kills: oom,
            killed_by_us,
        };
        for _ in 0..50 {
            if std::fs::remove_dir(&self.memcg).is_ok() || !self.memcg.exists() {
                return ended;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        log.push(format!("memcg {} not removed", self.memcg.display()));
        ended
    }
}

fn describe_status(st: Option<i32>) -> String {
    match st {
        None => "not reaped".into(),
        Some(s) if libc::WIFSIGNALED(s) => format!("killed by signal {}", libc::WTERMSIG(s)),
        Some(s) => format!("exit {}", libc::WEXITSTATUS(s)),
    }
}

/// Fork the child into a fresh memcg, let it dirty the page and start
/// writeback (the WRITE is held), then let it allocate and watch its stack.
fn run_child(ctx: &mut Ctx, path: &Path) -> Result<(Child, Seen), Fail> {
    let base = own_memcg().ok_or_else(|| fail("memcg", "no cgroup-v1 memory controller".into()))?;
    let memcg = base.join(format!("wbspec-reclaim-{}", std::process::id()));
    std::fs::create_dir(&memcg).map_err(|e| fail("memcg", format!("mkdir: {e}")))?;
    let setup = (|| -> Result<(Child, [i32; 2], [i32; 2]), Fail> {
        std::fs::write(memcg.join("memory.limit_in_bytes"), LIMIT.to_string())
            .map_err(|e| fail("memcg", format!("limit: {e}")))?;
        let cpath = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|e| fail("path", e.to_string()))?;
        let (mut go, mut done) = ([0i32; 2], [0i32; 2]);
        if unsafe { libc::pipe(go.as_mut_ptr()) } != 0
            || unsafe { libc::pipe(done.as_mut_ptr()) } != 0
        {
            return Err(fail("pipe", "pipe failed".into()));
        }
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe { child_main(&cpath, go[0], done[1]) }
        }
        if pid < 0 {
            return Err(fail("fork", "fork failed".into()));
        }
        Ok((
            Child {
                pid,
                memcg: memcg.clone(),
                reaped: None,
            },
            go,
            done,
        ))
    })();
    let (mut child, go, done) = match setup {
        Ok(x) => x,
        Err(e) => {
            let _ = std::fs::remove_dir(&memcg);
            return Err(e);
        }
    };
    unsafe {
        libc::close(go[0]);
        libc::close(done[1]);
    }
    let (gw, dr) = (go[1], done[0]);
    let close = || unsafe {
        libc::close(gw);
        libc::close(dr);
    };
    let r = (|| -> Result<Seen, Fail> {
        // only the child joins the memcg
        std::fs::write(child.memcg.join("cgroup.procs"), child.pid.to_string())
            .map_err(|e| fail("memcg", format!("cgroup.procs: {e}")))?;
        ctx.mark("call T1 memcg-child fault+store+sync_file_range")?;
        unsafe { libc::write(gw, b"1".as_ptr().cast(), 1) };
        let mut pfd = libc::pollfd {
            fd: dr,
            events: libc::POLLIN,
            revents: 0,
        };
        if unsafe { libc::poll(&mut pfd, 1, 3000) } != 1 {
            return Err(fail("child", "did not dirty the page within 3 s".into()));
        }
        ctx.wait_held(1, 2000)?;
        // a phase of the same call (its ret follows): a note, not a call
        ctx.mark("note T1 memcg-child allocate past the limit")?;
        unsafe { libc::write(gw, b"2".as_ptr().cast(), 1) };
        let mut seen = Seen::default();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_millis(OBSERVE_MS) {
            if let Some(st) = child.status(0) {
                seen.ended_early = Some(st);
                break;
            }
            let stack = std::fs::read_to_string(format!("/proc/{}/stack", child.pid));
            if let Err(e) = &stack {
                seen.stack_error = Some(e.to_string());
            }
            if let Ok(stack) = stack {
                seen.stack_reads += 1;
                if stack.contains("folio_wait_writeback") {
                    if stack.contains("shrink_folio_list") {
                        seen.reclaim_wait = Some(stack);
                        break;
                    }
                    seen.other_wait = true;
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(seen)
    })();
    close();
    match r {
        Ok(seen) => Ok((child, seen)),
        Err(e) => {
            let _ = ctx.ctl("unhold all");
            let _ = ctx.ctl("release all");
            let mut log = vec![];
            child.finish(&mut log);
            Err(e)
        }
    }
}

/// The scenario body; `wbc`: the mount negotiated FUSE_WRITEBACK_CACHE.
pub fn reclaim(ctx: &mut Ctx, wbc: bool) -> Res {
    // the file exists with one page, none of it in the page cache
    let fd = ctx.create("T0", "f")?;
    ctx.ftruncate("T0", fd, PG as u64)?;
    ctx.close("T0", fd)?;
    ctx.ctl("hold WRITE n=1 cache=1")?;
    let (child, seen) = run_child(ctx, &ctx.path("f"))?;
    ctx.mark(&format!(
        "ret T1 memcg-child 0 reclaim_wait={} ended_early={} other_wait={}",
        seen.reclaim_wait.is_some(),
        seen.ended_early.is_some(),
        seen.other_wait
    ))?;
    let _ = ctx.ctl("unhold all");
    let released = ctx.ctl("release all");
    let mut log = vec![];
    let ended = child.finish(&mut log);
    for l in log {
        ctx.notes.push(l);
    }
    released?;
    let st = ended.status;
    let outcome = describe_status(st);
    // A stack never read proves nothing: the check below needs at least
    // one read of the child's kernel stack while it allocated.
    ctx.expect(
        "the child's kernel stack (/proc/PID/stack) was read while the WRITE was held",
        seen.stack_reads > 0,
        || {
            format!(
                "no read succeeded ({}); child {outcome}",
                seen.stack_error
                    .as_deref()
                    .unwrap_or("the child ended first")
            )
        },
    )?;
    // What the kernel promises for the end: the child touches 64 MiB of
    // anonymous memory in a 16 MiB memcg; without swap none of it can be
    // reclaimed, so once the FUSE folio is clean (the WRITE released) the
    // memcg OOM killer (mem_cgroup_out_of_memory, the child is the only
    // task in the memcg) kills it with SIGKILL. With swap it may instead
    // finish (exit 0). Never a setup exit (10..15), never a hang that
    // this process had to end by PID.
    let oom_killed = st.is_some_and(|s| libc::WIFSIGNALED(s) && libc::WTERMSIG(s) == libc::SIGKILL)
        && ended.oom_kills.is_some_and(|n| n >= 1)
        && !ended.killed_by_us;
    let swap = have_swap();
    ctx.expect(
        if swap {
            "the child is OOM-killed in its memcg or finishes (swap present)"
        } else {
            "the child is OOM-killed in its memcg (no swap: its anonymous memory cannot be reclaimed)"
        },
        oom_killed || (swap && st.is_some_and(|s| libc::WIFEXITED(s) && libc::WEXITSTATUS(s) == 0)),
        || {
            format!(
                "child {outcome}; memcg oom_kill {:?}; killed by this process: {}",
                ended.oom_kills, ended.killed_by_us
            )
        },
    )?;
    if wbc {
        ctx.expect(
            "writeback_cache (flagged mapping): reclaim never waits on the FUSE folio's writeback",
            seen.reclaim_wait.is_none(),
            || {
                format!(
                    "stack while the WRITE was held:\n{}",
                    seen.reclaim_wait.clone().unwrap_or_default()
                )
            },
        )?;
    } else {
        ctx.expect(
            "no writeback_cache (no flag): memcg v1 reclaim sleeps in folio_wait_writeback on the FUSE folio",
            seen.reclaim_wait.is_some(),
            || format!("no reclaim wait seen in {OBSERVE_MS} ms; child {outcome}"),
        )?;
    }
    ctx.notes.push(format!(
        "child {outcome}; {} stack reads; reclaim wait {}; folio_wait_writeback outside reclaim {}",
        seen.stack_reads,
        if seen.reclaim_wait.is_some() {
            "seen"
        } else {
            "not seen"
        },
        if seen.other_wait {
            "seen (exit path)"
        } else {
            "not seen"
        }
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::memcg_path;

    #[test]
    fn finds_the_v1_memory_controller_only() {
        let v1 = "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/\n0::/\n";
        assert_eq!(memcg_path(v1).as_deref(), Some("/process_api/abc"));
        assert_eq!(memcg_path("0::/user.slice/session-1.scope\n"), None);
        assert_eq!(memcg_path("5:cpu,memory:/a\n").as_deref(), Some("/a"));
    }

    #[test]
    fn reads_the_oom_kill_count() {
        let t = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
        assert_eq!(super::oom_kills(t), Some(2));
        assert_eq!(super::oom_kills("oom_kill_disable 0\nunder_oom 0\n"), None);
    }
}
