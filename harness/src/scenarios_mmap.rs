//! mmap scenario bodies: stores to a shared mapping, msync and
//! page_mkwrite waiting on writeback (c), and MAP_SHARED on a
//! FOPEN_DIRECT_IO file with and without direct_io_allow_mmap (m). The
//! table is in [`crate::scenarios`]; conventions as there.
use crate::ctx::Ctx;
use crate::fail::Res;
use crate::scenario_kit::{briefs, fail, mmap, store, unmap, ODIRECT_RW, PG, SETTLE_MS};
use crate::sys::{self, Ret};
use crate::trace::Event;

// ---------------------------------------------------------------- (c) mmap

pub(crate) fn c_mmap(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.ftruncate("T0", fd, 2 * PG)?;
    let (addr, r) = mmap(ctx, fd, 2 * PG as usize)?;
    if r.ret < 0 {
        return Err(fail("mmap succeeds", format!("errno {}", r.errno)));
    }
    for (i, b) in b"MN".iter().enumerate() {
        store(ctx, addr, i * PG as usize, *b)?;
    }
    ctx.sys_ok(
        "T0",
        "msync",
        &format!("MS_SYNC off=0 len={}", 2 * PG),
        || sys::msync(addr, 2 * PG as usize, true),
    )?;
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T0", "msync")?;
    let r = t.mark_seq("ret", "T0", "msync")?;
    let ws: Vec<&Event> = t.reqs_between("WRITE", c, r);
    ctx.expect(
        "msync(MS_SYNC) sends one 8K WRITE[CACHE] MN",
        ws.len() == 1 && ws[0].is_cache_write() && ws[0].page_tags.as_deref() == Some("MN"),
        || briefs(&ws),
    )?;
    // no WRITE (a kernel that sent none): the FSYNC check below fails,
    // with the trace, instead of an index panicking
    let wr = ws.first().and_then(|w| t.reply_seq(w)).unwrap_or(u64::MAX);
    let fs = t.reqs_between("FSYNC", c, r);
    ctx.expect(
        "then FSYNC(datasync=1)",
        fs.len() == 1 && fs[0].seq > wr && fs[0].datasync == Some(true),
        || briefs(&fs),
    )?;
    // A times-only SETATTR may precede FSYNC: the stores update mtime only if
    // the coarse clock ticked since ftruncate set it locally, and then
    // sync_inode_metadata flushes it. real-kernel-fuse.md saw none (one sample).
    let sa = t.reqs_between("SETATTR", c, r);
    ctx.expect(
        "msync sends at most a times-only SETATTR, after the WRITE reply",
        sa.len() <= 1 && sa.iter().all(|e| e.size.is_none() && e.seq > wr),
        || briefs(&sa),
    )?;
    // MS_ASYNC is a no-op.
    store(ctx, addr, PG as usize, b'Q')?;
    let w0 = ctx.count("WRITE")?;
    ctx.sys_ok("T0", "msync_async", "MS_ASYNC", || {
        sys::msync(addr, 2 * PG as usize, false)
    })?;
    ctx.sleep_ms(100);
    let w1 = ctx.count("WRITE")?;
    ctx.expect("msync(MS_ASYNC) sends nothing", w1 == w0, || {
        format!("{} WRITEs", w1 - w0)
    })?;
    ctx.fsync("T0", fd)?;
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T0", "fsync")?;
    let r = t.mark_seq("ret", "T0", "fsync")?;
    let ws = t.reqs_between("WRITE", c, r);
    ctx.expect(
        "fsync writes the redirtied page",
        ws.len() == 1
            && ws[0].offset == Some(PG)
            && ws[0].size == Some(PG)
            && ws[0].page_tags.as_deref() == Some("Q"),
        || briefs(&ws),
    )?;
    let fs = t.reqs_between("FSYNC", c, r);
    ctx.expect(
        "FSYNC(datasync=0)",
        fs.len() == 1 && fs[0].datasync == Some(false),
        || briefs(&fs),
    )?;
    unmap(ctx, addr, 2 * PG as usize)?;
    ctx.expect_file("f", 2 * PG, "MQ")?;
    ctx.close("T0", fd)
}

pub(crate) fn c_mmap_held(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "A")?;
    let (addr, r) = mmap(ctx, fd, PG as usize)?;
    if r.ret < 0 {
        return Err(fail("mmap succeeds", format!("errno {}", r.errno)));
    }
    ctx.ctl("hold WRITE n=1 cache=1")?;
    ctx.sfr("T0", fd)?;
    ctx.wait_held(1, 2000)?;
    let mut p = ctx.spawn("T1", "store", "off=0 Q", move || {
        unsafe { sys::store_byte(addr, 0, b'Q') };
        Ret { ret: 0, errno: 0 }
    })?;
    ctx.sleep_ms(SETTLE_MS);
    let blocked = !p.done();
    ctx.expect(
        "store blocks in page_mkwrite while the WRITE is held",
        blocked,
        || "store completed".into(),
    )?;
    ctx.ctl("release all")?;
    p.join(3000)?;
    ctx.sys_ok("T0", "msync", "MS_SYNC", || {
        sys::msync(addr, PG as usize, true)
    })?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    let ret = t.mark_seq("ret", "T1", "store")?;
    ctx.expect(
        "store returns after the WRITE reply; a new WRITE carries Q",
        ws.len() == 2
            && ret > t.reply_seq(ws[0]).unwrap_or(u64::MAX)
            && ws[1].page_tags.as_deref() == Some("Q"),
        || briefs(&ws),
    )?;
    unmap(ctx, addr, PG as usize)?;
    ctx.expect_file("f", PG, "Q")?;
    ctx.close("T0", fd)
}

// ---------------------------------------------------------------- (m) FOPEN_DIRECT_IO + mmap

pub(crate) fn dio_mmap(ctx: &mut Ctx, allow: bool) -> Res {
    let fd1 = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd1, 0, "A")?;
    ctx.fsync("T0", fd1)?;
    let fd2 = ctx.open("T0", "f", ODIRECT_RW)?;
    let (addr, r) = mmap(ctx, fd2, PG as usize)?;
    if !allow {
        ctx.expect(
            "MAP_SHARED on FOPEN_DIRECT_IO without allow_mmap fails ENODEV",
            r.ret < 0 && r.errno == libc::ENODEV,
            || format!("{r:?}"),
        )?;
        if r.ret >= 0 {
            unmap(ctx, addr, PG as usize)?;
        }
    } else {
        ctx.expect(
            "MAP_SHARED works with direct_io_allow_mmap",
            r.ret == 0,
            || format!("{r:?}"),
        )?;
        if r.ret == 0 {
            store(ctx, addr, 0, b'M')?;
            ctx.sys_ok("T0", "msync", "MS_SYNC", || {
                sys::msync(addr, PG as usize, true)
            })?;
            unmap(ctx, addr, PG as usize)?;
            let t = ctx.trace()?;
            let c = t.mark_seq("call", "T0", "msync")?;
            let r = t.mark_seq("ret", "T0", "msync")?;
            let ws = t.reqs_between("WRITE", c, r);
            ctx.expect(
                "msync writes the page as WRITE[CACHE]",
                ws.len() == 1 && ws[0].is_cache_write() && ws[0].page_tags.as_deref() == Some("M"),
                || briefs(&ws),
            )?;
            ctx.expect_file("f", PG, "M")?;
        }
    }
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)
}
