//! Writeback scenario bodies: buffered writes and their WRITEs (a), a
//! rewrite of a page under writeback (b_rewrite), the payload read at
//! server-read time (g), close/fsync ordering against a held WRITE (k),
//! background congestion (f) and syncfs (s). The table is in
//! [`crate::scenarios`]; conventions as there.
use crate::ctx::Ctx;
use crate::fail::Res;
use crate::scenario_kit::{briefs, dirty_and_hold, fail, first, tags_by_offset, PG, SETTLE_MS};
use crate::sys::{self, Ret};
use crate::trace_query::Tr;

// ---------------------------------------------------------------- (a) buffered writes

/// Three dirty pages, then fsync. What the kernel promises is the order:
/// fsync (fuse_fsync: file_write_and_wait_range, then
/// sync_inode_metadata, then FUSE_FSYNC) sends FSYNC only after every
/// WRITE of the dirtied range is answered, and the times reach the server
/// (SETATTR, fuse_write_inode) before it. It does not promise that the
/// pages stay dirty until fsync: balance_dirty_pages on FUSE's strictlimit
/// bdi may start writeback whenever other processes dirty memory (issue
/// 23: "1 WRITEs before fsync" in 3 of 9 runs under load). So a WRITE
/// before fsync is a note, and so is a split of the one 12K WRITE that
/// fuse_writepages builds from three contiguous dirty pages (a flusher
/// started by balance_dirty_pages can take a page before fsync's
/// writepages does, also after fsync's call): the pages' payload, each
/// page once, is asserted instead.
pub(crate) fn a_fsync(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    for (i, l) in ["A", "B", "C"].iter().enumerate() {
        ctx.pwrite("T0", fd, i as u64 * PG, l)?;
    }
    ctx.fsync("T0", fd)?;
    let t = ctx.trace()?;
    let call = t.mark_seq("call", "T0", "fsync")?;
    let ret = t.mark_seq("ret", "T0", "fsync")?;
    let first_pwrite = t.mark_seq("call", "T0", "pwrite")?;
    let ws = t.cache_writes();
    let early = ws.iter().filter(|w| w.seq < call).count();
    if early > 0 {
        ctx.notes.push(format!(
            "writeback started before fsync ({early} WRITE(s) before its call); allowed"
        ));
    }
    ctx.expect(
        "WRITE[CACHE]s (pid 0) carry A, B, C, each page once",
        !ws.is_empty() && tags_by_offset(&ws) == "ABC" && ws.iter().all(|w| w.pid == Some(0)),
        || briefs(&ws),
    )?;
    if ws.len() > 1 {
        ctx.notes.push(format!(
            "writeback split into {} WRITEs (another writeback ran beside fsync's); allowed",
            ws.len()
        ));
    }
    let last_reply = ws
        .iter()
        .map(|w| t.reply_seq(w).unwrap_or(u64::MAX))
        .max()
        .unwrap_or(u64::MAX);
    let fs = t.reqs_between("FSYNC", call, ret);
    let fsync_at = fs.first().map(|e| e.seq).unwrap_or(0);
    ctx.expect(
        "one FSYNC inside fsync, after every WRITE's reply",
        fs.len() == 1 && fsync_at > last_reply,
        || format!("{}; WRITEs {}", briefs(&fs), briefs(&ws)),
    )?;
    // the first pwrite dirtied the times; some write_inode sends them
    // before FSYNC (fsync's sync_inode_metadata, or the flusher's)
    let sa = t.reqs_between("SETATTR", first_pwrite, fsync_at);
    ctx.expect(
        "SETATTR(times, no size) before FSYNC",
        !sa.is_empty()
            && sa
                .iter()
                .all(|e| e.size.is_none() && e.valid.unwrap_or(0) & (1 << 5) != 0),
        || briefs(&sa),
    )?;
    ctx.expect_file("f", 3 * PG, "ABC")?;
    ctx.close("T0", fd)
}

pub(crate) fn a_big(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    let tags = "D".repeat(512) + "E";
    ctx.pwrite("T0", fd, 1 << 20, &tags)?;
    ctx.fsync("T0", fd)?;
    let t = ctx.trace()?;
    let mut ws = t.cache_writes();
    ws.sort_by_key(|e| e.offset);
    ctx.expect(
        "WRITEs <= 1 MiB",
        ws.iter().all(|w| w.size.unwrap_or(0) <= 1 << 20),
        || briefs(&ws),
    )?;
    let mut pos = 1u64 << 20;
    for w in &ws {
        if w.offset == Some(pos) {
            pos = w.end.unwrap_or(pos);
        }
    }
    ctx.expect(
        "WRITEs cover [1M, 3M+4K)",
        pos == (3 << 20) + PG && ws.len() >= 3,
        || briefs(&ws),
    )?;
    ctx.expect_file("f", (3 << 20) + PG, &(".".repeat(256) + &tags))?;
    ctx.close("T0", fd)
}

pub(crate) fn a_maxwrite(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, &"G".repeat(64))?;
    ctx.fsync("T0", fd)?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    // max_write bounds every WRITE; that the range goes as exactly 4 full
    // WRITEs holds only if no other writeback (balance_dirty_pages under
    // memory pressure) took part of it first, which the kernel does not
    // promise: a note then
    ctx.expect(
        "WRITEs of at most 64K carry the 256K range, each page once",
        ws.iter().all(|w| w.size.is_some_and(|z| z <= 65536))
            && tags_by_offset(&ws) == "G".repeat(64),
        || briefs(&ws),
    )?;
    if !(ws.len() == 4 && ws.iter().all(|w| w.size == Some(65536))) {
        ctx.notes.push(format!(
            "not 4 WRITEs of 64K (other writeback ran): {}",
            briefs(&ws)
        ));
    }
    ctx.expect_file("f", 64 * PG, &"G".repeat(64))?;
    ctx.close("T0", fd)
}

/// Two single pages then a 2 MiB pwrite at page 2: four model pages
/// (0, 1, the two 1 MiB chunks), so the trace is checked to its end.
pub(crate) fn a_nowbc(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    for (i, l) in ["A", "B"].iter().enumerate() {
        ctx.pwrite("T0", fd, i as u64 * PG, l)?;
    }
    ctx.pwrite("T0", fd, 2 * PG, &"F".repeat(512))?;
    let t = ctx.trace()?;
    ctx.expect(
        "no WRITE[CACHE] without writeback_cache",
        t.cache_writes().is_empty(),
        || briefs(&t.cache_writes()),
    )?;
    let mut after = 0;
    for (i, l) in ["A", "B"].iter().enumerate() {
        let c = t
            .mark_after("call", "T0", "pwrite", after)
            .ok_or_else(|| fail("trace", "mark".into()))?
            .seq;
        let r = t
            .mark_after("ret", "T0", "pwrite", c)
            .ok_or_else(|| fail("trace", "mark".into()))?
            .seq;
        let w = t.reqs_between("WRITE", c, r);
        ctx.expect(
            "one synchronous WRITE inside each pwrite (write-through)",
            w.len() == 1
                && w[0].offset == Some(i as u64 * PG)
                && w[0].size == Some(PG)
                && w[0].page_tags.as_deref() == Some(*l)
                && w[0].pid != Some(0)
                && w[0].flags.unwrap_or(0) & libc::O_ACCMODE == libc::O_RDWR,
            || briefs(&w),
        )?;
        after = r;
    }
    let c = t
        .mark_after("call", "T0", "pwrite", after)
        .ok_or_else(|| fail("trace", "mark".into()))?
        .seq;
    let r = t
        .mark_after("ret", "T0", "pwrite", c)
        .ok_or_else(|| fail("trace", "mark".into()))?
        .seq;
    let w = t.reqs_between("WRITE", c, r);
    ctx.expect(
        "2 MiB write-through in two 1 MiB WRITEs",
        w.len() == 2
            && w.iter().all(|e| e.size == Some(1 << 20))
            && w[0].offset == Some(2 * PG)
            && w[1].offset == Some(2 * PG + (1 << 20)),
        || briefs(&w),
    )?;
    ctx.fsync("T0", fd)?;
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T0", "fsync")?;
    let r = t.mark_seq("ret", "T0", "fsync")?;
    let (f, s, w) = (
        t.reqs_between("FSYNC", c, r),
        t.reqs_between("SETATTR", c, r),
        t.reqs_between("WRITE", c, r),
    );
    ctx.expect(
        "fsync sends FSYNC only",
        f.len() == 1 && s.is_empty() && w.is_empty(),
        || briefs(&[f, s, w].concat()),
    )?;
    ctx.expect_file(
        "f",
        2 * PG + (2 << 20),
        &("AB".to_string() + &"F".repeat(512)),
    )?;
    ctx.close("T0", fd)
}

// ---------------------------------------------------------------- (b) rewrite under writeback

pub(crate) fn b_rewrite(ctx: &mut Ctx) -> Res {
    if ctx.state() == Some("L") {
        return b_rewrite_l(ctx);
    }
    let fd = dirty_and_hold(ctx, "A")?;
    let d = ctx.pwrite("T0", fd, 0, "Z")?;
    ctx.expect(
        "write(2) to a page under writeback does not block",
        d < 100_000,
        || format!("{d} us"),
    )?;
    let w0 = ctx.count("WRITE")?;
    let mut p = ctx.spawn("T1", "fsync", &format!("fd={fd}"), move || sys::fsync(fd))?;
    ctx.sleep_ms(SETTLE_MS);
    let blocked = !p.done();
    ctx.expect("fsync waits for the held WRITE", blocked, || {
        "returned".into()
    })?;
    let w1 = ctx.count("WRITE")?;
    ctx.expect(
        "no second WRITE for the page while the first is in flight",
        w1 == w0,
        || format!("{} more", w1 - w0),
    )?;
    ctx.ctl("release all")?;
    p.join(3000)?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    ctx.expect(
        "second WRITE (Z) after the first reply",
        ws.len() == 2
            && ws[0].page_tags.as_deref() == Some("A")
            && ws[1].page_tags.as_deref() == Some("Z")
            && ws[1].offset == Some(0)
            && ws[1].seq > t.reply_seq(ws[0]).unwrap_or(u64::MAX),
        || briefs(&ws),
    )?;
    ctx.expect_file("f", PG, "Z")
}

/// b_rewrite on state L (temp pages, <= 6.15): PG_writeback ended when the
/// page was copied to its temp page, but fuse_write_begin →
/// fuse_wait_on_page_writeback waits while fi->writepages has a WRITE for
/// the page in flight: write(2) blocks until the held WRITE's reply, then
/// dirties the page again, and fsync sends its WRITE after that reply.
fn b_rewrite_l(ctx: &mut Ctx) -> Res {
    let fd = dirty_and_hold(ctx, "A")?;
    let buf = sys::AlignedBuf::pages("Z");
    let mut w = ctx.spawn("T1", "pwrite", &format!("fd={fd} off=0 Z"), move || {
        sys::pwrite(fd, buf.bytes(), 0)
    })?;
    ctx.sleep_ms(SETTLE_MS);
    let blocked = !w.done();
    ctx.expect(
        "L: write(2) waits for the page's WRITE in flight (fuse_wait_on_page_writeback)",
        blocked,
        || "returned while the WRITE was held".into(),
    )?;
    ctx.ctl("release all")?;
    w.join(3000)?;
    ctx.sys_ok("T0", "fsync", &format!("fd={fd}"), || sys::fsync(fd))?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    ctx.expect(
        "L: the second WRITE (Z) after the first reply",
        ws.len() == 2
            && ws[0].page_tags.as_deref() == Some("A")
            && ws[1].page_tags.as_deref() == Some("Z")
            && ws[1].seq > t.reply_seq(ws[0]).unwrap_or(u64::MAX),
        || briefs(&ws),
    )?;
    ctx.expect_file("f", PG, "Z")
}

/// Where PG_writeback ends: sync_file_range(WAIT_BEFORE | WRITE |
/// WAIT_AFTER) over a page whose WRITE is held. T2 (6.16+): PG_writeback
/// lasts until the WRITE's reply (fuse_writepage_end), so the wait
/// blocks until the release. L (<= 6.15): the page was copied to a temp
/// page and end_page_writeback ran when the WRITE was queued, so nothing
/// on the page is left to wait for and the call returns with the WRITE
/// still held (fuse_writepages_send).
pub(crate) fn b_wait_after(ctx: &mut Ctx) -> Res {
    let fd = dirty_and_hold(ctx, "A")?;
    let mut w = ctx.spawn(
        "T1",
        "sync_file_range",
        &format!("fd={fd} 0 4096 WAIT_BEFORE|WRITE|WAIT_AFTER"),
        move || sys::sync_file_range_wait(fd, 0, PG),
    )?;
    if ctx.state() == Some("L") {
        let r = w.wait(2000);
        ctx.expect(
            "L: the wait returns with the WRITE still held (temp page: PG_writeback already ended)",
            r.is_some_and(|(r, _)| r.ret == 0),
            || format!("{r:?} within 2000 ms"),
        )?;
        ctx.ctl("release all")?;
    } else {
        ctx.sleep_ms(SETTLE_MS);
        let blocked = !w.done();
        ctx.expect(
            "the wait blocks while the WRITE is held (PG_writeback until the reply)",
            blocked,
            || "returned".into(),
        )?;
        ctx.ctl("release all")?;
        w.join(3000)?;
    }
    ctx.expect_file("f", PG, "A")
}

// ---------------------------------------------------------------- (g) payload at server-read time

pub(crate) fn g_payload(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "A")?;
    let l0 = ctx.count("LOOKUP")?;
    ctx.ctl("stall LOOKUP 800")?;
    let missing = ctx.path("missing");
    let mut p = ctx.spawn("T1", "stat", "missing", move || sys::stat(&missing))?;
    if !ctx.wait_count("LOOKUP", l0 + 1, 2000)? {
        return Err(fail("stall", "LOOKUP not received".into()));
    }
    ctx.sfr("T0", fd)?;
    let d = ctx.pwrite("T0", fd, 0, "Z")?;
    ctx.expect(
        "pwrite does not block while the WRITE is queued",
        d < 100_000,
        || format!("{d} us"),
    )?;
    let (r, _) = p.join(3000)?;
    ctx.expect(
        "stat(missing) = ENOENT",
        r.ret == -1 && r.errno == libc::ENOENT,
        || format!("{r:?}"),
    )?;
    ctx.fsync("T0", fd)?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    let w = first(&ws, "WRITE")?;
    let stall_end =
        t.0.iter()
            .find(|e| e.ev == "stall_end")
            .map(|e| e.seq)
            .unwrap_or(u64::MAX);
    let pw = t
        .mark_after("ret", "T0", "pwrite", t.mark_seq("call", "T1", "stat")?)
        .map(|e| e.seq)
        .unwrap_or(u64::MAX);
    ctx.expect(
        "queued WRITE read after the stall carries the newer bytes (Z)",
        w.seq > stall_end && pw < w.seq && w.page_tags.as_deref() == Some("Z"),
        || format!("{}; stall_end #{stall_end}; pwrite ret #{pw}", briefs(&ws)),
    )?;
    ctx.expect_file("f", PG, "Z")?;
    ctx.close("T0", fd)
}

// ---------------------------------------------------------------- (k) close / fsync ordering

pub(crate) fn k_close_held(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "A")?;
    ctx.ctl("hold WRITE n=1 cache=1")?;
    let f0 = ctx.count("FLUSH")?;
    ctx.open_fds.retain(|x| *x != fd);
    let mut p = ctx.spawn("T1", "close", &format!("fd={fd}"), move || sys::close(fd))?;
    ctx.wait_held(1, 2000)?;
    ctx.sleep_ms(SETTLE_MS);
    let blocked = !p.done();
    ctx.expect("close() waits for the held WRITE", blocked, || {
        "returned".into()
    })?;
    let f1 = ctx.count("FLUSH")?;
    ctx.expect("no FLUSH while the WRITE is held", f1 == f0, || {
        format!("{} FLUSH", f1 - f0)
    })?;
    ctx.ctl("release all")?;
    let (r, _) = p.join(3000)?;
    ctx.expect("close succeeds", r.ret == 0, || format!("{r:?}"))?;
    ctx.wait_count("RELEASE", 1, 2000)?;
    let t = ctx.trace()?;
    let w = first(&t.cache_writes(), "WRITE")?;
    let wr = t.reply_seq(w).unwrap_or(u64::MAX);
    let fl = first(&t.reqs("FLUSH"), "FLUSH")?;
    let ret = t.mark_seq("ret", "T1", "close")?;
    let sa = t.reqs_between("SETATTR", wr, fl.seq);
    ctx.expect(
        "FLUSH after the WRITE reply, SETATTR(times) in between",
        fl.seq > wr && sa.len() == 1 && sa[0].size.is_none(),
        || format!("{} / {}", Tr::brief(fl), briefs(&sa)),
    )?;
    ctx.expect(
        "close returns after the FLUSH reply",
        ret > t.reply_seq(fl).unwrap_or(u64::MAX),
        || format!("ret #{ret}"),
    )?;
    let rel = first(&t.reqs("RELEASE"), "RELEASE")?;
    ctx.expect("RELEASE after FLUSH", rel.seq > fl.seq, || Tr::brief(rel))?;
    ctx.expect_file("f", PG, "A")
}

pub(crate) fn k_fsync_held(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "A")?;
    ctx.ctl("hold WRITE n=1 cache=1")?;
    let mut p = ctx.spawn("T1", "fsync", &format!("fd={fd}"), move || sys::fsync(fd))?;
    ctx.wait_held(1, 2000)?;
    ctx.sleep_ms(SETTLE_MS);
    let blocked = !p.done();
    ctx.expect("fsync waits for the held WRITE", blocked, || {
        "returned".into()
    })?;
    let n = ctx.count("FSYNC")?;
    ctx.expect("no FSYNC while the WRITE is held", n == 0, || {
        format!("{n} FSYNC")
    })?;
    ctx.ctl("release all")?;
    p.join(3000)?;
    let t = ctx.trace()?;
    let w = first(&t.cache_writes(), "WRITE")?;
    let wr = t.reply_seq(w).unwrap_or(u64::MAX);
    let fs = first(&t.reqs("FSYNC"), "FSYNC")?;
    let sa = t.reqs_between("SETATTR", wr, fs.seq);
    ctx.expect(
        "FSYNC after the WRITE reply, SETATTR(times) in between",
        fs.seq > wr && sa.len() == 1 && sa[0].size.is_none(),
        || format!("{} / {}", Tr::brief(fs), briefs(&sa)),
    )?;
    let ret = t.mark_seq("ret", "T1", "fsync")?;
    ctx.expect(
        "fsync returns after the FSYNC reply",
        ret > t.reply_seq(fs).unwrap_or(u64::MAX),
        || format!("ret #{ret}"),
    )?;
    ctx.close("T0", fd)
}

// ---------------------------------------------------------------- (f) congestion

/// `chunks` pages written by one pwrite, then one sync_file_range(WRITE)
/// per page with every WRITE held: `expect_inflight` WRITEs reach the
/// server, the other sync_file_range calls return without a WRITE
/// (WB_SYNC_NONE congestion skip, num_background >= congestion_threshold);
/// fsync writes the rest after the release.
pub(crate) fn f_cong(ctx: &mut Ctx, chunks: u64, expect_inflight: u64) -> Res {
    let fd = ctx.create("T0", "f")?;
    let all_tags: String = (0..chunks).map(|i| (b'A' + i as u8) as char).collect();
    ctx.pwrite("T0", fd, 0, &all_tags)?;
    ctx.ctl("hold WRITE n=inf cache=1")?;
    for i in 0..chunks {
        ctx.sys_ok(
            "T0",
            "sync_file_range",
            &format!("fd={fd} {} {} WRITE", i * PG, PG),
            || sys::sync_file_range_write(fd, i * PG, PG),
        )?;
    }
    ctx.sleep_ms(SETTLE_MS);
    let n = ctx.count("WRITE")?;
    ctx.expect(
        "WRITEs in flight while all are held",
        n == expect_inflight,
        || format!("{n} WRITEs, expected {expect_inflight}"),
    )?;
    ctx.ctl("unhold WRITE")?;
    ctx.ctl("release all")?;
    ctx.fsync("T0", fd)?;
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T0", "fsync")?;
    let r = t.mark_seq("ret", "T0", "fsync")?;
    let ws = t.reqs_between("WRITE", c, r);
    let rest: String = all_tags[expect_inflight as usize..].to_string();
    ctx.expect(
        "fsync writes the pages the skipped sync_file_range calls left dirty",
        tags_by_offset(&ws) == rest,
        || briefs(&ws),
    )?;
    ctx.expect_file("f", chunks * PG, &all_tags)?;
    ctx.close("T0", fd)
}

// ---------------------------------------------------------------- (s) syncfs

pub(crate) fn s_syncfs(ctx: &mut Ctx) -> Res {
    let fd = dirty_and_hold(ctx, "A")?;
    ctx.pwrite("T0", fd, 2 * PG, "B")?;
    // syncfs is bounded by the server watchdog even on a kernel where it waits.
    let mut p = ctx.spawn("T1", "syncfs", &format!("fd={fd}"), move || Ret {
        ret: unsafe { libc::syncfs(fd) } as i64,
        errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
    })?;
    let r = p.wait(SETTLE_MS);
    ctx.expect(
        "syncfs does not wait for the held WRITE",
        r.is_some(),
        || "syncfs blocked".into(),
    )?;
    ctx.ctl("release all")?;
    p.join(5000)?;
    ctx.fsync("T0", fd)?;
    ctx.expect_file("f", 3 * PG, "A.B")?;
    ctx.close("T0", fd)
}
