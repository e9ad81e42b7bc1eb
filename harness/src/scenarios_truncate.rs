//! Truncate scenario bodies: ftruncate / truncate / open(O_TRUNC) against
//! a held writeback WRITE (b), and writeback started inside a held
//! SETATTR(size), i.e. inside NOWRITE (h). The table is in
//! [`crate::scenarios`]; conventions as there.
use crate::ctx::Ctx;
use crate::fail::Res;
use crate::scenario_kit::{briefs, dirty_and_hold, first, PG, SETTLE_MS};
use crate::sys;
use crate::trace::Event;
use crate::trace_query::Tr;

// ---------------------------------------------------------------- (b) truncate vs held WRITE

#[derive(Clone, Copy)]
pub(crate) enum TruncOp {
    Ftrunc(u64),
    Path(u64),
    OpenOTrunc,
}

pub(crate) fn trunc_held(ctx: &mut Ctx, kind: TruncOp) -> Res {
    let fd = dirty_and_hold(ctx, "ABCD")?;
    let sa0 = ctx.count("SETATTR")?;
    let op0 = ctx.count("OPEN")?;
    let p = ctx.path("f");
    let atomic = {
        // header config tells whether atomic_o_trunc was negotiated
        let t = ctx.trace()?;
        t.0.first()
            .and_then(|h| h.config.as_ref())
            .and_then(|c| c["atomic_o_trunc"].as_bool())
            .unwrap_or(false)
    };
    let (name, mut pend) = match kind {
        TruncOp::Ftrunc(n) => (
            "ftruncate",
            ctx.spawn("T1", "ftruncate", &format!("fd={fd} {n}"), move || {
                sys::ftruncate(fd, n)
            })?,
        ),
        TruncOp::Path(n) => (
            "truncate",
            ctx.spawn("T1", "truncate", &format!("f {n}"), move || {
                sys::truncate(&p, n)
            })?,
        ),
        TruncOp::OpenOTrunc => (
            "open",
            ctx.spawn("T1", "open", "f O_RDWR|O_TRUNC", move || {
                sys::open(&p, libc::O_RDWR | libc::O_TRUNC, 0)
            })?,
        ),
    };
    ctx.sleep_ms(SETTLE_MS);
    let blocked = !pend.done();
    ctx.expect("truncate blocks while the WRITE is held", blocked, || {
        "returned early".into()
    })?;
    let sa = ctx.count("SETATTR")? - sa0;
    ctx.expect("no SETATTR while the WRITE is held", sa == 0, || {
        format!("{sa} SETATTRs")
    })?;
    if let TruncOp::OpenOTrunc = kind {
        let op = ctx.count("OPEN")? - op0;
        if atomic {
            ctx.expect(
                "atomic: OPEN(O_TRUNC) delayed while the WRITE is held",
                op == 0,
                || format!("{op} OPENs"),
            )?;
        } else {
            ctx.expect("OPEN answered while the WRITE is held", op == 1, || {
                format!("{op} OPENs")
            })?;
        }
    }
    ctx.ctl("release all")?;
    let (r, _) = pend.join(3000)?;
    ctx.expect("truncate succeeds", r.ret >= 0, || {
        format!("errno {}", r.errno)
    })?;
    if let TruncOp::OpenOTrunc = kind {
        ctx.open_fds.push(r.ret as i32);
    }
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    let w = first(&ws, "WRITE")?;
    ctx.expect(
        "held WRITE is the 16K ABCD",
        w.size == Some(4 * PG) && w.page_tags.as_deref() == Some("ABCD"),
        || Tr::brief(w),
    )?;
    let wr = t.reply_seq(w).unwrap_or(u64::MAX);
    let call = t.mark_seq("call", "T1", name)?;
    let ret = t.mark_seq("ret", "T1", name)?;
    let sizes: Vec<&Event> = t
        .reqs("SETATTR")
        .into_iter()
        .filter(|e| e.size.is_some() && e.seq > call)
        .collect();
    let (size, tags) = match kind {
        TruncOp::Ftrunc(n) | TruncOp::Path(n) => {
            let s = first(&sizes, "SETATTR(size)")?;
            ctx.expect(
                "SETATTR(size) only after the WRITE reply",
                s.size == Some(n) && s.seq > wr,
                || Tr::brief(s),
            )?;
            let has_fh = s.valid.unwrap_or(0) & (1 << 6) != 0;
            let want_fh = matches!(kind, TruncOp::Ftrunc(_));
            ctx.expect(
                "SETATTR FH bit (ftruncate: FH, truncate(path): none)",
                has_fh == want_fh,
                || format!("{:?}", s.valid_names),
            )?;
            let sr = t.reply_seq(s).unwrap_or(u64::MAX);
            ctx.expect("truncate returns after the SETATTR reply", ret > sr, || {
                format!("ret #{ret} reply #{sr}")
            })?;
            let tags = if n <= 4 * PG {
                "ABCD"[..(n / PG) as usize].to_string()
            } else {
                "ABCD".to_string() + &".".repeat((n / PG - 4) as usize)
            };
            (n, tags)
        }
        TruncOp::OpenOTrunc => {
            let opens: Vec<&Event> = t
                .reqs("OPEN")
                .into_iter()
                .filter(|e| e.seq > call)
                .collect();
            let o = first(&opens, "OPEN")?;
            let has_trunc = o.flags.unwrap_or(0) & libc::O_TRUNC != 0;
            if atomic {
                ctx.expect(
                    "atomic: OPEN carries O_TRUNC and is sent after the WRITE reply",
                    has_trunc && o.seq > wr,
                    || Tr::brief(o),
                )?;
                ctx.expect("atomic: no SETATTR(size)", sizes.is_empty(), || {
                    briefs(&sizes)
                })?;
            } else {
                ctx.expect(
                    "OPEN without O_TRUNC, sent while the WRITE is held",
                    !has_trunc && o.seq < wr,
                    || Tr::brief(o),
                )?;
                let s = first(&sizes, "SETATTR(size)")?;
                ctx.expect(
                    "SETATTR(size=0) only after the WRITE reply",
                    s.size == Some(0) && s.seq > wr,
                    || Tr::brief(s),
                )?;
            }
            (0, String::new())
        }
    };
    ctx.expect_file("f", size, &tags)?;
    if let TruncOp::Ftrunc(_) = kind {
        // Truncation invalidated the page cache: the next read goes to the server.
        ctx.pread("T0", fd, 0, PG as usize)?;
        let t = ctx.trace()?;
        let c = t.mark_seq("call", "T0", "pread")?;
        let r = t.mark_seq("ret", "T0", "pread")?;
        let rd = t.reqs_between("READ", c, r);
        ctx.expect(
            "read after truncate refetches from the server",
            !rd.is_empty(),
            || "no READ".into(),
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------- (h) writeback inside NOWRITE

pub(crate) fn h_nowrite(ctx: &mut Ctx, n: u64) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "ABCD")?;
    ctx.ctl("hold SETATTR n=1 size=1")?;
    let mut p = ctx.spawn("T1", "ftruncate", &format!("fd={fd} {n}"), move || {
        sys::ftruncate(fd, n)
    })?;
    ctx.wait_held(1, 2000)?;
    let w0 = ctx.count("WRITE")?;
    let (_, d) = ctx.sys_ok(
        "T2",
        "sync_file_range",
        &format!("fd={fd} 0 0 WRITE"),
        || sys::sync_file_range_write(fd, 0, 0),
    )?;
    ctx.expect("sync_file_range returns at once", d < 100_000, || {
        format!("{d} us")
    })?;
    ctx.sleep_ms(200);
    let w1 = ctx.count("WRITE")?;
    ctx.expect(
        "WRITE queued in the kernel while SETATTR(size) is outstanding",
        w1 == w0,
        || format!("{} WRITEs sent", w1 - w0),
    )?;
    ctx.ctl("release all")?;
    p.join(3000)?;
    // the queued WRITE is sent at fuse_release_nowrite; an extending
    // ftruncate does not wait for it, so the server may read it after the
    // return: wait for it (bounded) before reading the trace
    let sent = ctx.wait_count("WRITE", w0 + 1, 5000)?;
    ctx.expect("the queued WRITE is sent", sent, || {
        "no WRITE within 5 s of the SETATTR reply".into()
    })?;
    let t = ctx.trace()?;
    let s = first(
        &t.reqs("SETATTR")
            .into_iter()
            .filter(|e| e.size == Some(n))
            .collect::<Vec<_>>(),
        "SETATTR(size)",
    )?;
    let sr = t.reply_seq(s).unwrap_or(u64::MAX);
    let ret = t.mark_seq("ret", "T1", "ftruncate")?;
    let ws = t.cache_writes();
    if n < 4 * PG {
        ctx.expect(
            "queued WRITE sent after the SETATTR reply, cropped to the new size, before ftruncate returns",
            ws.len() == 1 && ws[0].seq > sr && ws[0].seq < ret && ws[0].offset == Some(0)
                && ws[0].size == Some(n) && ws[0].page_tags.as_deref() == Some("A"),
            || briefs(&ws),
        )?;
        ctx.expect_file("f", n, "A")
    } else {
        ctx.expect(
            "full WRITE sent after the SETATTR reply",
            ws.len() == 1
                && ws[0].seq > sr
                && ws[0].size == Some(4 * PG)
                && ws[0].page_tags.as_deref() == Some("ABCD"),
            || briefs(&ws),
        )?;
        ctx.expect_file(
            "f",
            n,
            &("ABCD".to_string() + &".".repeat((n / PG - 4) as usize)),
        )
    }
}
