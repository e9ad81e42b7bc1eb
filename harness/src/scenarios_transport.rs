//! The transport on the real kernel (issue 22 item 6; the model's
//! `abort` and `signal` tasks, models/src/fuse/transport.rs): the
//! connection aborted through fusectl while a writeback WRITE is held
//! (`t_abort_*`), a signal to a task blocked in a held direct WRITE
//! (`t_signal_*`), and SIGKILL to a child whose WRITE is still pending
//! (`t_kill_pending`). Expectations are those of 6.18.y, read at
//! torvalds/linux fs/fuse/dev.c and file.c:
//!
//! - `fuse_abort_conn` ends every request the daemon read with
//!   -ECONNABORTED; a writeback WRITE so ended runs `fuse_writepage_end`
//!   with that error (`mapping_set_error`: errseq), so the next fsync
//!   reports it (`file_write_and_wait_range` / `file_check_and_advance_wb_err`)
//!   as ECONNABORTED; later requests fail in `fuse_get_req` with -ENOTCONN
//!   and are never queued; the daemon reads nothing more (its read fails
//!   with ENODEV, the recorder's session ends: it lingers, `--linger`, so
//!   the marks after the abort are still logged).
//! - `request_wait_answer`: a signal to a task waiting for a request the
//!   daemon has read sets FR_INTERRUPTED and queues FUSE_INTERRUPT for its
//!   unique (`queue_interrupt`); the task then waits killably, so a
//!   non-fatal signal does not end the wait: the syscall returns what the
//!   reply says (the written bytes if the server ignores the interrupt,
//!   -EINTR if it answers the request -EINTR), then the handler runs.
//!   fuser answers the INTERRUPT -ENOSYS (fc->no_interrupt from then on;
//!   server/intr.rs records it).
//!   A fatal signal while the request is still pending (FR_PENDING, not
//!   yet read) takes it off the list: -EINTR, never read; once read, the
//!   task waits for the reply, uninterruptibly.
use crate::ctx::Ctx;
use crate::fail::Res;
use crate::scenario_kit::{briefs, dirty_and_hold, first, sc, wrap, Scenario, ODIRECT_RW, PG};
use crate::server::ServerConfig;
use crate::sys::{self, Ret};
use crate::trace_query::Tr;

use crate::scenario_kit::SETTLE_MS;

fn linger(c: &mut ServerConfig) {
    c.linger = true;
}
fn dflt(_: &mut ServerConfig) {}

pub fn all() -> Vec<Scenario> {
    vec![
        sc!("t_abort_wb", "the connection aborted (fusectl) while a writeback WRITE is held: fsync on the still-open fd returns ECONNABORTED (the WRITE's error, errseq), a second fsync ENOTCONN; no request reaches the server after the abort", linger, |c| wrap(c, t_abort_wb)),
        sc!("t_abort_trunc", "ftruncate waiting in fuse_set_nowrite behind a held writeback WRITE, then the abort: the WRITE ends with -ECONNABORTED, ftruncate wakes and fails (its SETATTR is refused, ENOTCONN); fsync returns ECONNABORTED; nothing reaches the server after the abort", linger, |c| wrap(c, t_abort_trunc)),
        sc!("t_signal_ignored", "SIGUSR1 (no SA_RESTART) to a FOPEN_DIRECT_IO pwrite whose WRITE is held: FUSE_INTERRUPT for the WRITE's unique (fuser: ENOSYS); the pwrite stays blocked until the reply, then returns every byte", dflt, |c| wrap(c, |x| t_signal(x, false))),
        sc!("t_signal_eintr", "the same, and the server answers the interrupted WRITE -EINTR: the pwrite returns EINTR, the server's file is unchanged", dflt, |c| wrap(c, |x| t_signal(x, true))),
        sc!("t_kill_pending", "SIGKILL to a child whose FOPEN_DIRECT_IO pwrite's WRITE is still pending (the server's dispatch thread stalled): the request is taken back (FR_PENDING), never read, no INTERRUPT; the child's exit sends FLUSH (forced) and waits for it; the server's file stays empty", dflt, |c| wrap(c, t_kill_pending)),
    ]
}

/// No request was read after the abort's `call` mark (fuse_dev_do_read:
/// !fiq->connected), and nothing is held or in flight but what was
/// before it.
fn nothing_after_abort(ctx: &mut Ctx) -> Res {
    let t = ctx.trace()?;
    let at = t.mark_seq("call", "T0", "abort")?;
    let after: Vec<_> = t.0.iter().filter(|e| e.ev == "req" && e.seq > at).collect();
    ctx.expect(
        "no request reaches the server after the abort",
        after.is_empty(),
        || briefs(&after),
    )
}

/// fsync(fd) by T0 must fail with `errno` (the check named `what`).
fn fsync_fails(ctx: &mut Ctx, fd: i32, errno: i32, what: &str) -> Res {
    let (r, _) = ctx.sys("T0", "fsync", &format!("fd={fd}"), || sys::fsync(fd))?;
    ctx.expect(what, r.ret == -1 && r.errno == errno, || {
        format!("fsync returned {} errno={}", r.ret, r.errno)
    })
}

fn t_abort_wb(ctx: &mut Ctx) -> Res {
    let fd = dirty_and_hold(ctx, "A")?;
    ctx.abort_conn("T0")?;
    fsync_fails(
        ctx,
        fd,
        libc::ECONNABORTED,
        "fsync after the abort reports the WRITE's error: ECONNABORTED",
    )?;
    fsync_fails(
        ctx,
        fd,
        libc::ENOTCONN,
        "a second fsync: the error was reported once (errseq); FSYNC refused: ENOTCONN",
    )?;
    nothing_after_abort(ctx)
}

fn t_abort_trunc(ctx: &mut Ctx) -> Res {
    let fd = dirty_and_hold(ctx, "AB")?;
    let mut tr = ctx.spawn("T1", "ftruncate", &format!("fd={fd} {PG}"), move || {
        sys::ftruncate(fd, PG)
    })?;
    ctx.sleep_ms(SETTLE_MS);
    ctx.expect(
        "ftruncate has not returned 300 ms into the hold (it waits in fuse_set_nowrite, or has not reached it)",
        !tr.done(),
        || "returned early".into(),
    )?;
    ctx.abort_conn("T0")?;
    let (r, _) = tr.join(3000)?;
    ctx.expect(
        "the abort wakes ftruncate; its SETATTR is refused: ENOTCONN",
        r.ret == -1 && r.errno == libc::ENOTCONN,
        || format!("ftruncate returned {} errno={}", r.ret, r.errno),
    )?;
    fsync_fails(
        ctx,
        fd,
        libc::ECONNABORTED,
        "fsync after the abort reports the WRITE's error: ECONNABORTED",
    )?;
    let t = ctx.trace()?;
    let sa: Vec<_> = t
        .reqs("SETATTR")
        .into_iter()
        .filter(|e| e.size.is_some())
        .collect();
    ctx.expect("no SETATTR(size) reached the server", sa.is_empty(), || {
        briefs(&sa)
    })?;
    nothing_after_abort(ctx)
}

fn t_signal(ctx: &mut Ctx, eintr: bool) -> Res {
    let fd = ctx.open("T0", "f", libc::O_CREAT | ODIRECT_RW)?;
    ctx.ctl("hold WRITE n=1 cache=0")?;
    let buf = sys::AlignedBuf::pages("A");
    let mut w = ctx.spawn("T1", "pwrite", &format!("fd={fd} off=0 A"), move || {
        sys::pwrite(fd, buf.bytes(), 0)
    })?;
    ctx.wait_held(1, 2000)?;
    let i0 = ctx.count("INTERRUPT")?;
    ctx.signal("T0", "T1", &w)?;
    let got = ctx.wait_count("INTERRUPT", i0 + 1, 2000)?;
    ctx.expect("the server reads a FUSE_INTERRUPT", got, || {
        "none within 2 s".into()
    })?;
    let t = ctx.trace()?;
    let wr = first(&t.plain_writes(), "direct WRITE")?;
    let intr = first(&t.reqs("INTERRUPT"), "INTERRUPT")?;
    ctx.expect(
        "the INTERRUPT names the held WRITE (unique | 1, fuse_interrupt_in.unique)",
        intr.interrupts == wr.unique && intr.unique == wr.unique.map(|u| u | 1),
        || {
            format!(
                "{} interrupts {:?}; {}",
                Tr::brief(intr),
                intr.interrupts,
                Tr::brief(wr)
            )
        },
    )?;
    ctx.sleep_ms(SETTLE_MS);
    ctx.expect(
        "the pwrite keeps waiting (wait_event_killable: SIGUSR1 is not fatal)",
        !w.done(),
        || "returned before the reply".into(),
    )?;
    if eintr {
        ctx.ctl("fail WRITE n=1 errno=EINTR")?;
    }
    ctx.ctl("release all")?;
    let (r, _) = w.join(3000)?;
    if eintr {
        ctx.expect(
            "the -EINTR reply: pwrite returns EINTR (not restarted)",
            r.ret == -1 && r.errno == libc::EINTR,
            || format!("pwrite returned {} errno={}", r.ret, r.errno),
        )?;
        ctx.expect_file("f", 0, "")
    } else {
        ctx.expect(
            "the interrupt ignored: pwrite returns every byte",
            r.ret == PG as i64,
            || format!("pwrite returned {} errno={}", r.ret, r.errno),
        )?;
        ctx.expect_file("f", PG, "A")
    }
}

/// request_wait_answer with a fatal signal while the request is still on
/// the pending list (the daemon has not read it: its dispatch thread
/// sleeps in a stalled LOOKUP): FR_PENDING, so the request is taken off
/// the list and the syscall returns -EINTR inside the kernel (the process
/// dies on its way out, so no user space sees it; the runner logs it as
/// the pwrite's return). The child's exit closes its copy of the fd:
/// fuse_flush's FLUSH is forced (FR_FORCE: no killable wait), read after
/// the stall. The child is ours (forked here) and killed by its pid.
fn t_kill_pending(ctx: &mut Ctx) -> Res {
    let fd = ctx.open("T0", "f", libc::O_CREAT | ODIRECT_RW)?;
    let l0 = ctx.count("LOOKUP")?;
    ctx.ctl("stall LOOKUP 1500")?;
    let missing = ctx.path("missing");
    let mut st = ctx.spawn("T2", "stat", "missing", move || sys::stat(&missing))?;
    if !ctx.wait_count("LOOKUP", l0 + 1, 2000)? {
        return Err(crate::scenario_kit::fail(
            "stall",
            "LOOKUP not received".into(),
        ));
    }
    let buf = sys::AlignedBuf::pages("A");
    ctx.mark(&format!("call T1 pwrite fd={fd} off=0 A"))?;
    let pid = sys::fork_pwrite(fd, buf.bytes(), 0);
    if pid < 0 {
        return Err(crate::scenario_kit::fail("fork", "fork failed".into()));
    }
    // the child's WRITE queues on the pending list (nothing reads it: the
    // only dispatch thread is stalled in the LOOKUP): wait, bounded, until
    // the connection counts both requests (fc->num_waiting) instead of
    // guessing how long the child takes to get there
    let conn = match ctx.conn {
        Some(c) => c,
        None => {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            sys::reap_within(pid, 5000);
            return Err(crate::scenario_kit::fail(
                "fusectl",
                "the mount's connection number is not known".into(),
            ));
        }
    };
    let waited = crate::mount::fusectl_wait_waiting(conn, 2, 3000);
    if !matches!(waited, Ok((_, true))) {
        unsafe { libc::kill(pid, libc::SIGKILL) };
        sys::reap_within(pid, 5000);
        return Err(crate::scenario_kit::fail(
            "queued",
            format!("the child's WRITE did not queue behind the stalled LOOKUP within 3 s (fusectl waiting: {waited:?})"),
        ));
    }
    let t_kill = std::time::Instant::now();
    ctx.sys_ok("T0", "signal", "target=T1 SIGKILL", || Ret {
        ret: unsafe { libc::kill(pid, libc::SIGKILL) } as i64,
        errno: 0,
    })?;
    // the kernel's return of the taken-back request, in the dying child
    ctx.mark("ret T1 pwrite -1 errno=4 dur_us=0")?;
    ctx.mark(&format!("call T1 close fd={fd} exit"))?;
    let status = sys::reap_within(pid, 5000);
    if status.is_none() {
        // still ours: end it by its pid (a later abort would free it)
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let d = t_kill.elapsed().as_micros();
    ctx.mark(&format!("ret T1 close 0 errno=0 dur_us={d}"))?;
    let (r, _) = st.join(3000)?;
    ctx.expect(
        "stat(missing) = ENOENT",
        r.ret == -1 && r.errno == libc::ENOENT,
        || format!("{r:?}"),
    )?;
    let st = status.ok_or_else(|| {
        crate::scenario_kit::fail(
            "child exits",
            "the killed child was not reaped within 5 s".into(),
        )
    })?;
    ctx.expect(
        "the child dies of SIGKILL",
        libc::WIFSIGNALED(st) && libc::WTERMSIG(st) == libc::SIGKILL,
        || format!("wait status {st:#x}"),
    )?;
    let t = ctx.trace()?;
    let (ws, is) = (t.reqs("WRITE"), t.reqs("INTERRUPT"));
    ctx.expect(
        "the pending WRITE is taken back: never read, no INTERRUPT",
        ws.is_empty() && is.is_empty(),
        || briefs(&[ws.clone(), is.clone()].concat()),
    )?;
    let stall_end = t.0.iter().find(|e| e.ev == "stall_end").map(|e| e.seq);
    let fl = t.reqs("FLUSH");
    // the WRITE was queued before the kill: it took the unique between the
    // stalled LOOKUP's and the FLUSH's (fuse_get_unique, steps of 2)
    let lk = t.reqs("LOOKUP").last().and_then(|e| e.unique);
    ctx.expect(
        "the taken-back WRITE had a unique: the exit's FLUSH is the stalled LOOKUP's + 4",
        lk.is_some() && fl.first().and_then(|f| f.unique) == lk.map(|u| u + 4),
        || format!("LOOKUP u={lk:?}; {}", briefs(&fl)),
    )?;
    ctx.expect(
        "the child's exit sends FLUSH, read after the stall",
        fl.first().is_some_and(|f| Some(f.seq) > stall_end),
        || briefs(&fl),
    )?;
    ctx.expect_file("f", 0, "")
}
