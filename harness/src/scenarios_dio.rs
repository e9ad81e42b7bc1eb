//! Direct-I/O scenario bodies (d)/(e): O_DIRECT opens, writes and reads
//! with and without FOPEN_DIRECT_IO against dirty or held cached pages,
//! and open() against held writeback (KEEP_CACHE or not). The table is in
//! [`crate::scenarios`]; conventions as there.
use crate::ctx::Ctx;
use crate::fail::{Fail, Res};
use crate::scenario_kit::{
    briefs, dirty_and_hold, fail, first, tags_by_offset, ODIRECT_RW, PG, SETTLE_MS,
};
use crate::sys::{self, AlignedBuf};
use crate::trace::Event;
use crate::trace_query::Tr;

// ---------------------------------------------------------------- (d)/(e) direct I/O

/// Whether the kernel wrote cached pages back before trace position
/// `seq` (a WRITE[CACHE] read before it). balance_dirty_pages on FUSE's
/// strictlimit bdi may start writeback of freshly dirtied pages whenever
/// other processes dirty memory; the kernel does not promise that pages
/// stay dirty until a given call. Then the exact requests inside that call
/// are a note; what the kernel promises (the order) is asserted always.
fn wrote_back_before(ctx: &mut Ctx, t: &Tr, seq: u64, call: &str) -> bool {
    let early: Vec<&Event> = t
        .cache_writes()
        .into_iter()
        .filter(|w| w.seq < seq)
        .collect();
    if !early.is_empty() {
        ctx.notes.push(format!(
            "writeback before {call}: {} (its requests there not asserted)",
            briefs(&early)
        ));
    }
    !early.is_empty()
}

fn dio_pwrite(ctx: &mut Ctx, actor: &str, fd: i32, off: u64, tags: &str) -> Res {
    ctx.pwrite(actor, fd, off, tags)?;
    Ok(())
}

fn open_reply_flags(t: &Tr, after: u64) -> Result<(&Event, Vec<String>), Fail> {
    let o = first(
        &t.reqs("OPEN")
            .into_iter()
            .filter(|e| e.seq > after)
            .collect::<Vec<_>>(),
        "OPEN",
    )?;
    let r = t
        .reply(o)
        .ok_or_else(|| fail("OPEN reply", "missing".into()))?;
    let fl = r
        .result
        .as_ref()
        .and_then(|v| v["open_flags"].as_array().cloned())
        .unwrap_or_default();
    Ok((
        o,
        fl.iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
    ))
}

pub(crate) fn dirty_then_dio_open(ctx: &mut Ctx, fopen_dio: bool) -> Res {
    let fd1 = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd1, 0, "AB")?;
    let fd2 = ctx.open("T0", "f", ODIRECT_RW)?;
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T0", "open")?;
    // The create of fd1 is also an "open" mark: take the second one.
    let c = t
        .mark_after("call", "T0", "open", c)
        .map(|e| e.seq)
        .unwrap_or(c);
    let r = t
        .mark_after("ret", "T0", "open", c)
        .map(|e| e.seq)
        .unwrap_or(u64::MAX);
    let (o, fl) = open_reply_flags(&t, c)?;
    ctx.expect(
        "OPEN carries O_DIRECT",
        o.flags.unwrap_or(0) & libc::O_DIRECT != 0,
        || Tr::brief(o),
    )?;
    ctx.expect(
        "FOPEN_DIRECT_IO as configured",
        fl.iter().any(|f| f == "FOPEN_DIRECT_IO") == fopen_dio,
        || format!("{fl:?}"),
    )?;
    let orp = t.reply_seq(o).unwrap_or(u64::MAX);
    let ws: Vec<&Event> = t.reqs_between("WRITE", orp, r);
    // promised: when open returns, A and B are written back and answered
    // (invalidate_inode_pages2 waits for writeback and launders)
    let all: Vec<&Event> = t.cache_writes().into_iter().filter(|w| w.seq < r).collect();
    ctx.expect(
        "A and B written back and answered before open returns",
        tags_by_offset(&all) == "AB" && all.iter().all(|w| t.reply_seq(w).is_some_and(|rs| rs < r)),
        || briefs(&all),
    )?;
    if !wrote_back_before(ctx, &t, c, "the O_DIRECT open") {
        ctx.expect(
            "open launders dirty pages after the OPEN reply: one WRITE[CACHE] per folio",
            ws.len() == 2
                && ws.iter().all(|w| w.is_cache_write() && w.size == Some(PG))
                && tags_by_offset(&ws) == "AB",
            || briefs(&ws),
        )?;
    }
    dio_pwrite(ctx, "T0", fd2, 0, "X")?;
    let t = ctx.trace()?;
    let pw = t.plain_writes();
    ctx.expect(
        "direct WRITE (no CACHE flag) with O_DIRECT",
        pw.len() == 1
            && pw[0].page_tags.as_deref() == Some("X")
            && pw[0].flags.unwrap_or(0) & libc::O_DIRECT != 0,
        || briefs(&pw),
    )?;
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)?;
    ctx.expect_file("f", 2 * PG, "XB")
}

/// T1's direct pwrite of "X" at page 0 sent exactly a range-limited flush
/// of page 0 ("A", page-cache WRITE) and then, after its reply, the direct
/// WRITE (with O_DIRECT in its open flags when `odirect`).
fn expect_flush_then_direct(ctx: &mut Ctx, odirect: bool) -> Res {
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T1", "pwrite")?;
    let r = t.mark_seq("ret", "T1", "pwrite")?;
    let ws = t.reqs_between("WRITE", c, r);
    // promised: the direct WRITE is read after every page-cache WRITE of
    // page 0 has been answered, and some page-cache WRITE carried A
    let direct: Vec<&Event> = ws.iter().copied().filter(|w| !w.is_cache_write()).collect();
    let a: Vec<&Event> = t
        .cache_writes()
        .into_iter()
        .filter(|w| w.offset == Some(0) && w.seq < r)
        .collect();
    ctx.expect(
        "page 0 (A) written back and answered before the direct WRITE of X",
        direct.len() == 1
            && direct[0].page_tags.as_deref() == Some("X")
            && !a.is_empty()
            && a.iter().all(|w| {
                w.page_tags.as_deref().is_some_and(|g| g.starts_with('A'))
                    && t.reply_seq(w).is_some_and(|rs| rs < direct[0].seq)
            })
            && (!odirect || direct[0].flags.unwrap_or(0) & libc::O_DIRECT != 0),
        || briefs(&[a.clone(), ws.clone()].concat()),
    )?;
    if wrote_back_before(ctx, &t, c, "the direct pwrite") {
        return Ok(());
    }
    ctx.expect(
        "range-limited flush (page 0 only), then the direct WRITE after its reply",
        ws.len() == 2
            && ws[0].is_cache_write()
            && ws[0].offset == Some(0)
            && ws[0].size == Some(PG)
            && ws[0].page_tags.as_deref() == Some("A")
            && !ws[1].is_cache_write()
            && ws[1].page_tags.as_deref() == Some("X")
            && ws[1].seq > t.reply_seq(ws[0]).unwrap_or(u64::MAX)
            && (!odirect || ws[1].flags.unwrap_or(0) & libc::O_DIRECT != 0),
        || briefs(&ws),
    )
}

/// After a direct write of "X" over page 0: fsync(fd1) sends exactly one
/// WRITE, page 1 ("B"); both fds are closed; the file is "XB".
fn fsync_writes_page1_then_close(ctx: &mut Ctx, fd1: i32, fd2: i32, what: &str) -> Res {
    ctx.fsync("T0", fd1)?;
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T0", "fsync")?;
    let r = t.mark_seq("ret", "T0", "fsync")?;
    let ws = t.reqs_between("WRITE", c, r);
    // promised: page 1 (B) is written and answered when fsync returns
    let b: Vec<&Event> = t
        .cache_writes()
        .into_iter()
        .filter(|w| w.page_tags.as_deref().is_some_and(|g| g.ends_with('B')))
        .collect();
    ctx.expect(
        "page 1 (B) written back and answered before fsync returns",
        !b.is_empty() && b.iter().all(|w| t.reply_seq(w).is_some_and(|rs| rs < r)),
        || briefs(&b),
    )?;
    let b_early = b.iter().any(|w| w.seq < c);
    if b_early {
        ctx.notes.push(format!(
            "page 1 written back before fsync: {} ({what} not asserted)",
            briefs(&b)
        ));
    } else {
        ctx.expect(
            what,
            ws.len() == 1 && ws[0].offset == Some(PG) && ws[0].page_tags.as_deref() == Some("B"),
            || briefs(&ws),
        )?;
    }
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)?;
    ctx.expect_file("f", 2 * PG, "XB")
}

pub(crate) fn d_keep(ctx: &mut Ctx) -> Res {
    let fd1 = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd1, 0, "AB")?;
    let w0 = ctx.count("WRITE")?;
    let fd2 = ctx.open("T0", "f", ODIRECT_RW)?;
    let w1 = ctx.count("WRITE")?;
    if w0 == 0 {
        ctx.expect("KEEP_CACHE open sends no WRITE", w1 == w0, || {
            format!("{} WRITEs", w1 - w0)
        })?;
    } else {
        ctx.notes.push(format!(
            "{w0} WRITE(s) of background writeback before the open (not asserted)"
        ));
    }
    dio_pwrite(ctx, "T1", fd2, 0, "X")?;
    expect_flush_then_direct(ctx, false)?;
    fsync_writes_page1_then_close(ctx, fd1, fd2, "page 1 stays dirty until fsync")
}

pub(crate) fn both_open_dio_write(ctx: &mut Ctx, fopen_dio: bool) -> Res {
    let fd1 = ctx.create("T0", "f")?;
    let fd2 = ctx.open("T0", "f", ODIRECT_RW)?;
    ctx.pwrite("T0", fd1, 0, "AB")?;
    dio_pwrite(ctx, "T1", fd2, 0, "X")?;
    expect_flush_then_direct(ctx, true)?;
    let t = ctx.trace()?;
    let (_, fl) = open_reply_flags(&t, 0)?;
    let _ = fl; // the first OPEN is fd2's (fd1 came from CREATE)
    let data = ctx.pread("T0", fd1, 0, PG as usize)?;
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T0", "pread")?;
    let r = t.mark_seq("ret", "T0", "pread")?;
    let rd = t.reqs_between("READ", c, r);
    if fopen_dio {
        ctx.expect(
            "cached read after a FOPEN_DIRECT_IO write refetches (range invalidated)",
            !rd.is_empty(),
            || "no READ".into(),
        )?;
    }
    ctx.expect(
        "cached read sees the direct data",
        data.first() == Some(&b'X'),
        || format!("{:?}", data.first()),
    )?;
    fsync_writes_page1_then_close(ctx, fd1, fd2, "page 1 written by fsync")
}

pub(crate) fn dio_write_held(ctx: &mut Ctx, _fopen_dio: bool) -> Res {
    let fd1 = ctx.create("T0", "f")?;
    let fd2 = ctx.open("T0", "f", ODIRECT_RW)?;
    ctx.pwrite("T0", fd1, 0, "AB")?;
    ctx.ctl("hold WRITE n=1 cache=1")?;
    ctx.sfr("T0", fd1)?;
    ctx.wait_held(1, 2000)?;
    let buf = AlignedBuf::pages("X");
    let mut p = ctx.spawn("T1", "pwrite", &format!("fd={fd2} off=0 X"), move || {
        sys::pwrite(fd2, buf.bytes(), 0)
    })?;
    ctx.sleep_ms(SETTLE_MS);
    let blocked = !p.done();
    ctx.expect(
        "direct pwrite waits for the held writeback",
        blocked,
        || "returned".into(),
    )?;
    let t = ctx.trace()?;
    ctx.expect(
        "no direct WRITE while held",
        t.plain_writes().is_empty(),
        || briefs(&t.plain_writes()),
    )?;
    ctx.ctl("release all")?;
    let (r, _) = p.join(3000)?;
    ctx.expect("direct pwrite succeeds", r.ret == PG as i64, || {
        format!("{r:?}")
    })?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    let pw = t.plain_writes();
    let w = first(&ws, "WRITE[CACHE]")?;
    ctx.expect(
        "direct WRITE after the cached WRITE reply",
        w.page_tags.as_deref() == Some("AB")
            && pw.len() == 1
            && pw[0].seq > t.reply_seq(w).unwrap_or(u64::MAX),
        || briefs(&[ws.clone(), pw.clone()].concat()),
    )?;
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)?;
    ctx.expect_file("f", 2 * PG, "XB")
}

pub(crate) fn dio_read(ctx: &mut Ctx, _fopen_dio: bool) -> Res {
    let fd1 = ctx.create("T0", "f")?;
    let fd2 = ctx.open("T0", "f", ODIRECT_RW)?;
    ctx.pwrite("T0", fd1, 0, "AB")?;
    let data = ctx.pread("T1", fd2, 0, 2 * PG as usize)?;
    let got = crate::trace::page_tags(&data);
    ctx.expect(
        "direct read returns the fresh (dirty) data",
        got == "AB",
        || format!("read {got:?}"),
    )?;
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T1", "pread")?;
    let r = t.mark_seq("ret", "T1", "pread")?;
    let rd = t.reqs_between("READ", c, r);
    // promised: the direct READ is read after A and B were written back
    // and answered (in the call, or earlier by background writeback)
    let ws: Vec<&Event> = t.cache_writes().into_iter().filter(|w| w.seq < r).collect();
    let last_wr = ws
        .iter()
        .map(|w| t.reply_seq(w).unwrap_or(u64::MAX))
        .max()
        .unwrap_or(u64::MAX);
    ctx.expect(
        "dirty range flushed (WRITE[CACHE] AB) before the READ",
        tags_by_offset(&ws) == "AB" && rd.len() == 1 && rd[0].seq > last_wr,
        || briefs(&[ws.clone(), rd.clone()].concat()),
    )?;
    wrote_back_before(ctx, &t, c, "the direct read");
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)
}

pub(crate) fn open_while_held(ctx: &mut Ctx, keep_cache: bool) -> Res {
    let _fd = dirty_and_hold(ctx, "A")?;
    let p = ctx.path("f");
    let mut pend = ctx.spawn("T1", "open", "f O_RDWR", move || {
        sys::open(&p, libc::O_RDWR, 0)
    })?;
    if keep_cache {
        let r = pend.wait(SETTLE_MS);
        ctx.expect(
            "KEEP_CACHE open returns while writeback is held",
            r.is_some(),
            || "blocked".into(),
        )?;
    } else {
        ctx.sleep_ms(SETTLE_MS);
        let blocked = !pend.done();
        ctx.expect("open() waits for held writeback", blocked, || {
            "returned".into()
        })?;
    }
    ctx.ctl("release all")?;
    let (r, _) = pend.join(3000)?;
    if r.ret >= 0 {
        ctx.open_fds.push(r.ret as i32);
    }
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T1", "open")?;
    let ret = t.mark_seq("ret", "T1", "open")?;
    let (o, _) = open_reply_flags(&t, c)?;
    let orp = t.reply_seq(o).unwrap_or(u64::MAX);
    let w = first(&t.cache_writes(), "WRITE")?;
    let wr = t.reply_seq(w).unwrap_or(u64::MAX);
    if keep_cache {
        ctx.expect(
            "open returned before the WRITE reply",
            ret < wr && orp < wr,
            || format!("ret #{ret} write reply #{wr}"),
        )
    } else {
        ctx.expect(
            "OPEN answered during the hold; open() returns after the WRITE reply",
            orp < wr && ret > wr,
            || format!("OPEN reply #{orp}, WRITE reply #{wr}, ret #{ret}"),
        )
    }
}
