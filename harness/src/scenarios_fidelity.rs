//! Scenarios for the rest of the FUSE surface (issue 10): the whole
//! open(O_TRUNC) path, io-modes and parallel direct writes, error replies,
//! short READs after a server-side size change. Each drives the kernel
//! into a window the model reaches, with held or failed replies; the ones
//! named after a finding (docs/findings.md) assert what the model
//! predicts. Conventions as in [`crate::scenarios`].
use crate::ctx::Ctx;
use crate::fail::Res;
use crate::scenario_kit::{briefs, first, wrap, Scenario, SETTLE_MS};
use crate::server::ServerConfig;
use crate::sys::{self, AlignedBuf, Ret};
use crate::trace_query::Tr;

const PG: u64 = 4096;

fn atomic_enodata(c: &mut ServerConfig) {
    c.atomic_o_trunc = true;
    c.xattr_enodata = true;
}
fn enodata(c: &mut ServerConfig) {
    c.xattr_enodata = true;
}
fn dflt(_: &mut ServerConfig) {}
fn no_needs() -> Option<String> {
    None
}
fn nowbc(c: &mut ServerConfig) {
    c.writeback_cache = false;
}
fn pdio(c: &mut ServerConfig) {
    c.parallel_dio = true;
}

macro_rules! sc {
    ($name:expr, $about:expr, $cfg:expr, $run:expr) => {
        Scenario {
            name: $name,
            about: $about,
            config: std::sync::Arc::new($cfg),
            run: std::sync::Arc::new($run),
            needs: no_needs,
            outside: None,
            if_evicted: None,
            expect_on: crate::scenario_kit::WRITTEN_FOR,
        }
    };
}

pub fn all() -> Vec<Scenario> {
    vec![
        sc!("o_otrunc_atomic_race", "F-otrunc: atomic open(O_TRUNC); GETXATTR of do_truncate held after fuse_open returned; a write on another fd and its fsync land; then i_size is 0 while the server keeps the write", atomic_enodata, |c| wrap(c, |x| otrunc_race(x, true))),
        sc!("o_otrunc_race", "open(O_TRUNC) without atomic_o_trunc, the same race: SETATTR(size=0) after the held GETXATTR truncates the server too", enodata, |c| wrap(c, |x| otrunc_race(x, false))),
        sc!("w_err_fsync_close", "F-close-eio: the held writeback WRITE fails (EIO); fsync on fd1 reports it, close on fd2 returns 0", dflt, |c| wrap(c, |x| wb_error_two_fds(x, false))),
        sc!("w_err_two_fsyncs", "the held writeback WRITE fails (EIO); fsync on each of two fds reports it (errseq)", dflt, |c| wrap(c, |x| wb_error_two_fds(x, true))),
        sc!("w_setattr_error", "SETATTR(size) held and failed (EIO) with a writeback WRITE queued under NOWRITE: ftruncate fails, the WRITE goes out uncropped, size unchanged", dflt, |c| wrap(c, setattr_error)),
        sc!("r_short_read", "F-short-read: write-through; another client truncates the file to 0; a read at page 1 comes back short and sets i_size to 4096", nowbc, |c| wrap(c, short_read))
            .outside_model("syscall fstat has no model task", "fstat on a write-through mount (its GETATTR can change i_size) and the server-side truncation have no mapping; F-short-read is the catalogue's a4 checks"),
        sc!("i_pdio_parallel", "FOPEN_PARALLEL_DIRECT_WRITES, no caching open: a second direct WRITE is sent while the first is held (i_rwsem shared)", pdio, |c| wrap(c, |x| pdio_two_writers(x, false))),
        sc!("i_pdio_cached_excl", "FOPEN_PARALLEL_DIRECT_WRITES with a caching open: FUSE_I_CACHE_IO_MODE forces the exclusive lock; the second direct write waits", pdio, |c| wrap(c, |x| pdio_two_writers(x, true))),
        sc!("i_open_waits_pdio", "a caching open during a held parallel direct WRITE: OPEN answered, open() waits on direct_io_waitq until the WRITE reply", pdio, |c| wrap(c, open_waits_pdio)),
    ]
}

/// The inode's cached i_size (statx with AT_STATX_DONT_SYNC: no GETATTR).
pub(crate) fn cached_size(ctx: &mut Ctx, actor: &str, fd: i32) -> Result<i64, crate::fail::Fail> {
    Ok(ctx
        .sys_ok(actor, "statx_cached", &format!("fd={fd}"), || {
            sys::cached_size(fd)
        })?
        .0)
}

pub(crate) fn fstat_size(ctx: &mut Ctx, actor: &str, fd: i32) -> Result<i64, crate::fail::Fail> {
    Ok(ctx
        .sys_ok(actor, "fstat", &format!("fd={fd}"), || sys::fstat_size(fd))?
        .0)
}

/// open(O_TRUNC) on a file with data, the VFS's handle_truncate held at its
/// GETXATTR(security.capability) (dentry_needs_remove_privs in do_truncate,
/// before inode_lock), a write + fsync on another fd in that window.
fn otrunc_race(ctx: &mut Ctx, atomic: bool) -> Res {
    let fd0 = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd0, 0, "A")?;
    ctx.fsync("T0", fd0)?;
    ctx.ctl("hold GETXATTR n=1")?;
    let p = ctx.path("f");
    let mut pend = ctx.spawn("T1", "open", "f O_RDWR|O_TRUNC", move || {
        sys::open(&p, libc::O_RDWR | libc::O_TRUNC, 0)
    })?;
    ctx.wait_held(1, 2000)?;
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T1", "open")?;
    let opens: Vec<_> = t.reqs("OPEN").into_iter().filter(|e| e.seq > c).collect();
    let o = first(&opens, "OPEN")?;
    ctx.expect(
        "OPEN answered before the held GETXATTR (fuse_open has returned)",
        t.reply_seq(o).is_some(),
        || Tr::brief(o),
    )?;
    // the window: fuse_open dropped inode_lock, do_truncate has not taken it
    ctx.pwrite("T0", fd0, 0, "B")?;
    ctx.fsync("T0", fd0)?;
    ctx.ctl("release all")?;
    let (r, _) = pend.join(3000)?;
    ctx.expect("open(O_TRUNC) succeeds", r.ret >= 0, || {
        format!("errno {}", r.errno)
    })?;
    if r.ret >= 0 {
        ctx.open_fds.push(r.ret as i32);
    }
    let size = fstat_size(ctx, "T0", fd0)?;
    let (ssize, stags) = ctx.server_file("f")?;
    let t = ctx.trace()?;
    let ret = t.mark_seq("ret", "T1", "open")?;
    let sizes: Vec<_> = t
        .reqs("SETATTR")
        .into_iter()
        .filter(|e| e.size.is_some() && e.seq > c && e.seq < ret)
        .collect();
    if atomic {
        ctx.expect(
            "F-otrunc: no SETATTR(size); i_size 0 while the server keeps the racing write",
            sizes.is_empty() && size == 0 && ssize == PG && stags == "B",
            || {
                format!(
                    "i_size {size}, server size {ssize} tags {stags:?}, SETATTR(size) {}",
                    briefs(&sizes)
                )
            },
        )
    } else {
        ctx.expect(
            "SETATTR(size=0) after the held GETXATTR: i_size and server agree (0)",
            sizes.len() == 1 && size == 0 && ssize == 0,
            || {
                format!(
                    "i_size {size}, server size {ssize}, SETATTR(size) {}",
                    briefs(&sizes)
                )
            },
        )
    }
}

/// Two fds; the writeback WRITE of fd1's data held, then failed (EIO);
/// fsync(fd1), then fsync or close of fd2.
fn wb_error_two_fds(ctx: &mut Ctx, second_fsync: bool) -> Res {
    let fd1 = ctx.create("T0", "f")?;
    let fd2 = ctx.open("T0", "f", libc::O_RDWR)?;
    ctx.pwrite("T0", fd1, 0, "A")?;
    ctx.ctl("hold WRITE n=1 cache=1")?;
    ctx.ctl("fail WRITE n=1")?;
    let mut pend = ctx.spawn("T1", "fsync", &format!("fd={fd1}"), move || sys::fsync(fd1))?;
    ctx.wait_held(1, 2000)?;
    ctx.ctl("release all")?;
    let (r1, _) = pend.join(3000)?;
    ctx.expect(
        "fsync(fd1) reports the failed WRITE",
        r1.errno == libc::EIO,
        || format!("ret {} errno {}", r1.ret, r1.errno),
    )?;
    let (r2, _) = if second_fsync {
        ctx.sys("T0", "fsync", &format!("fd={fd2}"), || sys::fsync(fd2))?
    } else {
        ctx.open_fds.retain(|f| *f != fd2);
        ctx.sys("T0", "close", &format!("fd={fd2}"), || sys::close(fd2))?
    };
    if second_fsync {
        ctx.expect(
            "fsync(fd2) also reports it (its own errseq cursor)",
            r2.errno == libc::EIO,
            || format!("ret {} errno {}", r2.ret, r2.errno),
        )?;
    } else {
        ctx.expect(
            "F-close-eio: close(fd2) returns 0: AS_EIO was cleared by fsync(fd1)",
            r2.ret == 0,
            || format!("ret {} errno {}", r2.ret, r2.errno),
        )?;
    }
    ctx.expect_file("f", 0, "")
}

fn setattr_error(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "ABCD")?;
    ctx.ctl("hold SETATTR n=1 size=1")?;
    ctx.ctl("fail SETATTR n=1")?;
    let mut pend = ctx.spawn("T1", "ftruncate", &format!("fd={fd} {PG}"), move || {
        sys::ftruncate(fd, PG)
    })?;
    ctx.wait_held(1, 2000)?;
    let w0 = ctx.count("WRITE")?;
    ctx.sfr("T2", fd)?;
    ctx.sleep_ms(200);
    let w1 = ctx.count("WRITE")?;
    ctx.expect(
        "WRITE queued in the kernel while SETATTR(size) is held",
        w1 == w0,
        || format!("{} WRITEs sent", w1 - w0),
    )?;
    ctx.ctl("release all")?;
    let (r, _) = pend.join(3000)?;
    ctx.expect("ftruncate fails with EIO", r.errno == libc::EIO, || {
        format!("ret {} errno {}", r.ret, r.errno)
    })?;
    let size = fstat_size(ctx, "T0", fd)?;
    // The kernel sends the queued WRITE at fuse_release_nowrite but nothing
    // here waits for it: under load the server reads it after ftruncate
    // has returned (seen: no WRITE in the trace). Wait for it, bounded.
    let sent = ctx.wait_count("WRITE", w0 + 1, 5000)?;
    ctx.expect("the queued WRITE is sent", sent, || {
        "no WRITE within 5 s of the SETATTR reply".into()
    })?;
    let t = ctx.trace()?;
    let s = first(
        &t.reqs("SETATTR")
            .into_iter()
            .filter(|e| e.size.is_some())
            .collect::<Vec<_>>(),
        "SETATTR(size)",
    )?;
    let sr = t.reply_seq(s).unwrap_or(u64::MAX);
    let ws = t.cache_writes();
    ctx.expect(
        "the queued WRITE goes out after the failed SETATTR, not cropped (i_size unchanged)",
        ws.len() == 1 && ws[0].seq > sr && ws[0].size == Some(4 * PG),
        || briefs(&ws),
    )?;
    ctx.expect("i_size unchanged", size == (4 * PG) as i64, || {
        format!("{size}")
    })?;
    ctx.expect_file("f", 4 * PG, "ABCD")
}

fn short_read(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "AB")?;
    ctx.close("T0", fd)?;
    // a new open without FOPEN_KEEP_CACHE drops the cached pages; fstat
    // refreshes the attributes (the write invalidated the size), valid for
    // the attribute TTL from now on
    let fd = ctx.open("T0", "f", libc::O_RDWR)?;
    let before = fstat_size(ctx, "T0", fd)?;
    ctx.expect("i_size 8192 before", before == 2 * PG as i64, || {
        format!("{before}")
    })?;
    ctx.ctl("truncate f 0")?;
    let data = ctx.pread("T0", fd, PG, PG as usize)?;
    ctx.expect(
        "the read at page 1 returns nothing",
        data.is_empty(),
        || format!("{} bytes", data.len()),
    )?;
    let size = cached_size(ctx, "T0", fd)?;
    let (ssize, _) = ctx.server_file("f")?;
    ctx.expect(
        "F-short-read: i_size = pos + num_read = 4096, a size the server never had",
        size == PG as i64 && ssize == 0,
        || format!("i_size {size}, server size {ssize}"),
    )
}

fn dio_pwrite_thread(fd: i32, off: u64, tags: &'static str) -> impl FnOnce() -> Ret + Send {
    move || {
        let buf = AlignedBuf::pages(tags);
        sys::pwrite(fd, buf.bytes(), off)
    }
}

/// Two direct writers on a FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES
/// open, the first WRITE held; with `cached`, a caching open stays open.
fn pdio_two_writers(ctx: &mut Ctx, cached: bool) -> Res {
    let fd0 = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd0, 0, "AB")?;
    ctx.fsync("T0", fd0)?;
    if !cached {
        // the last caching open goes: iocachectr back to 0
        ctx.close("T0", fd0)?;
    }
    let fd = ctx.open("T0", "f", libc::O_RDWR | libc::O_DIRECT)?;
    ctx.ctl("hold WRITE n=1 cache=0")?;
    let mut p1 = ctx.spawn(
        "T1",
        "pwrite",
        &format!("fd={fd} off=0 C"),
        dio_pwrite_thread(fd, 0, "C"),
    )?;
    ctx.wait_held(1, 2000)?;
    let w0 = ctx.count("WRITE")?;
    let mut p2 = ctx.spawn(
        "T2",
        "pwrite",
        &format!("fd={fd} off={PG} D"),
        dio_pwrite_thread(fd, PG, "D"),
    )?;
    let second = ctx.wait_count("WRITE", w0 + 1, SETTLE_MS)?;
    if cached {
        ctx.expect(
            "caching open present: the second direct write waits for i_rwsem",
            !second && !p2.done(),
            || "second WRITE sent while the first was held".into(),
        )?;
    } else {
        ctx.expect(
            "no caching open: the second direct WRITE is sent while the first is held",
            second,
            || "second WRITE not sent".into(),
        )?;
    }
    ctx.ctl("release all")?;
    let (r1, _) = p1.join(3000)?;
    let (r2, _) = p2.join(3000)?;
    ctx.expect(
        "both direct writes complete",
        r1.ret == PG as i64 && r2.ret == PG as i64,
        || format!("{} {}", r1.ret, r2.ret),
    )?;
    // The order over the whole run, not only the settle window: under the
    // exclusive i_rwsem the second direct WRITE is read only after the
    // first one's reply; under the shared lock it was read while the
    // first was held, so before its reply.
    let t = ctx.trace()?;
    let pw = t.plain_writes();
    let tagged = |tag: &str| pw.iter().find(|w| w.page_tags.as_deref() == Some(tag));
    let (c, d) = (tagged("C"), tagged("D"));
    let c_reply = c.and_then(|c| t.reply_seq(c));
    let ordered = match (c_reply, d) {
        (Some(cr), Some(d)) if cached => d.seq > cr,
        (Some(cr), Some(d)) => d.seq < cr,
        _ => false,
    };
    ctx.expect(
        if cached {
            "the second direct WRITE (D) is read after the first's (C) reply"
        } else {
            "the second direct WRITE (D) is read before the first's (C) reply"
        },
        ordered,
        || briefs(&pw),
    )?;
    ctx.expect_file("f", 2 * PG, "CD")
}

fn open_waits_pdio(ctx: &mut Ctx) -> Res {
    let fd0 = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd0, 0, "AB")?;
    ctx.fsync("T0", fd0)?;
    ctx.close("T0", fd0)?;
    let fd = ctx.open("T0", "f", libc::O_RDWR | libc::O_DIRECT)?;
    ctx.ctl("hold WRITE n=1 cache=0")?;
    let mut p1 = ctx.spawn(
        "T1",
        "pwrite",
        &format!("fd={fd} off=0 C"),
        dio_pwrite_thread(fd, 0, "C"),
    )?;
    ctx.wait_held(1, 2000)?;
    let p = ctx.path("f");
    let mut p2 = ctx.spawn("T2", "open", "f O_RDWR", move || {
        sys::open(&p, libc::O_RDWR, 0)
    })?;
    ctx.sleep_ms(SETTLE_MS);
    let blocked = !p2.done();
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T2", "open")?;
    let answered = t
        .reqs("OPEN")
        .into_iter()
        .any(|e| e.seq > c && t.reply_seq(e).is_some());
    ctx.expect(
        "OPEN answered; open() waits on direct_io_waitq while the parallel write is in flight",
        blocked && answered,
        || format!("blocked {blocked}, OPEN answered {answered}"),
    )?;
    ctx.ctl("release all")?;
    p1.join(3000)?;
    let (r, _) = p2.join(3000)?;
    if r.ret >= 0 {
        ctx.open_fds.push(r.ret as i32);
    }
    let t = ctx.trace()?;
    let w = first(&t.plain_writes(), "direct WRITE")?;
    let wr = t.reply_seq(w).unwrap_or(u64::MAX);
    let ret = t.mark_seq("ret", "T2", "open")?;
    ctx.expect("open() returns after the WRITE reply", ret > wr, || {
        format!("ret #{ret}, WRITE reply #{wr}")
    })
}

/// Set in a `wbspec vm` guest by its init (harness/src/bin/wbspec-vm-init.rs).
pub const VM_GUEST_ENV: &str = "WBSPEC_VM_GUEST";

/// F-pdio-lock's BUG_ON(fi->writectr < 0) (docs/findings.md), tried: it
/// may oops the kernel, so it runs only in a `wbspec vm` guest and only
/// by name (`wbspec vm --kernel IMAGE -- run x_pdio_bugon`). On kernels
/// whose fuse_direct_io checks the fi->writepages tree rather than
/// filemap_range_has_writeback (<= 6.15, state L) the window does not
/// exist and the scenario must pass; on 6.16+ an oops reported by `vm`
/// is the reproduction. Outside the model: a stress loop of hundreds of
/// syscalls.
pub fn pdio_bugon_scenario() -> Scenario {
    Scenario {
        name: "x_pdio_bugon",
        about: "VM only (may oops: BUG_ON(fi->writectr < 0), F-pdio-lock): FOPEN_PARALLEL_DIRECT_WRITES, clean cached folios refilled by a caching open, three direct writers at once, 200 rounds",
        config: std::sync::Arc::new(pdio),
        run: std::sync::Arc::new(|c| wrap(c, pdio_bugon)),
        needs: || {
            std::env::var_os(VM_GUEST_ENV).is_none().then(|| {
                "may oops the kernel (BUG_ON(fi->writectr < 0), F-pdio-lock): runs only in a wbspec vm guest".to_string()
            })
        },
        if_evicted: None,
        outside: Some(crate::scenario_kit::Outside {
            because: "run only by `run`",
            reason: "a stress loop of 600 syscalls on three direct writers, run only by `run` in a VM and never conformed: its verdict is the kernel's (no oops), the model's is the catalogue's g-bugon checks (F-pdio-lock)",
        }),
        expect_on: crate::scenario_kit::WRITTEN_FOR,
    }
}

/// Rounds of x_pdio_bugon.
const BUGON_ROUNDS: usize = 200;

fn pdio_bugon(ctx: &mut Ctx) -> Res {
    let fd0 = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd0, 0, "AB")?;
    ctx.fsync("T0", fd0)?;
    ctx.close("T0", fd0)?;
    // FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES, no caching open
    let fd = ctx.open("T0", "f", libc::O_RDWR | libc::O_DIRECT)?;
    let path = ctx.path("f");
    let mut short = 0usize;
    for _ in 0..BUGON_ROUNDS {
        // clean cached folios over the range: a caching open reads them,
        // and its close ends the cached io-mode again
        let c = sys::open(&path, libc::O_RDONLY, 0);
        if c.ret >= 0 {
            let mut b = vec![0u8; 2 * 4096];
            sys::pread(c.ret as i32, &mut b, 0);
            sys::close(c.ret as i32);
        }
        // three non-extending direct writers at once (i_rwsem shared):
        // one's invalidation locks a clean folio while the others see
        // filemap_range_has_writeback (6.16+) and nest fuse_set_nowrite
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(3));
        let rets: Vec<Ret> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..3)
                .map(|i| {
                    let b = barrier.clone();
                    s.spawn(move || {
                        let buf = AlignedBuf::pages(["X", "Y", "Z"][i]);
                        b.wait();
                        sys::pwrite(fd, buf.bytes(), 0)
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or(Ret { ret: -1, errno: 0 }))
                .collect()
        });
        short += rets.iter().filter(|r| r.ret != 4096).count();
    }
    ctx.expect("every direct write wrote its page", short == 0, || {
        format!(
            "{short} of {} direct writes did not return 4096",
            3 * BUGON_ROUNDS
        )
    })
}
