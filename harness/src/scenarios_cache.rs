//! Scenarios of buffered readers, munmap/msync, sync_file_range, sendfile,
//! O_DIRECT reads at EOF, the background queue and copy_file_range, each
//! forcing its race with held replies. Expectations are those of kernel
//! state T'' (6.18.y with the 6.19 fixes); see scenarios.rs for the
//! conventions (one letter per 4 KiB page, actors T0..T2, SETTLE_MS).
use crate::ctx::Ctx;
use crate::fail::Res;
use crate::scenario_kit::{
    briefs, fail, first, mmap, sc, store, tags_by_offset, unmap, wrap, Scenario, ODIRECT_RW, PG,
    SETTLE_MS,
};
use crate::server::ServerConfig;
use crate::sys::{self, Ret};
use crate::trace_query::Tr;

fn dflt(_: &mut ServerConfig) {}
fn nodio(c: &mut ServerConfig) {
    c.dio_on_odirect = false;
}
/// max_background 1 and congestion_threshold 1 (set both: a server that
/// sets only max_background keeps the kernel's default threshold; fuser
/// sends at most max_background, so 1 is the only threshold this server
/// can give it): one background request in flight makes the connection
/// congested, so WB_SYNC_NONE writeback and async readahead are skipped,
/// while forced background WRITEs (WB_SYNC_ALL) wait on fc->bg_queue.
fn bg1_queue(c: &mut ServerConfig) {
    c.max_background = 1;
    c.congestion_threshold = 1;
}

/// bg1_queue with the max_read mount option at `b` bytes: readahead
/// READs of at most b / 4096 pages, so a window takes several READs,
/// and the connection is congested from the first.
fn bg1_max_read(c: &mut ServerConfig, b: u32) {
    bg1_queue(c);
    c.max_read = b;
}

pub fn all() -> Vec<Scenario> {
    vec![
        sc!("f_overtake", "max_background 1 (threshold 1): a held writeback WRITE makes the connection congested, so a second sync_file_range (WB_SYNC_NONE) writes nothing; a FOPEN_DIRECT_IO READ goes straight out; the second WRITE comes with fsync after the first reply", bg1_queue, |c| wrap(c, f_overtake)),
        sc!("f_overtake_sync", "max_background 1: a held writeback WRITE; fdatasync's WRITE (WB_SYNC_ALL, not skipped when congested) waits on fc->bg_queue, unseen by the server, and a FOPEN_DIRECT_IO READ overtakes it; the second WRITE is read only after the first reply", bg1_queue, |c| wrap(c, f_overtake_sync)),
        sc!("r_held_dio", "a buffered reader's readahead READ is held: a FOPEN_DIRECT_IO pwrite of the page waits on the locked folio (invalidate_inode_pages2) until the READ reply; a re-read returns the direct data", dflt, |c| wrap(c, r_held_dio)),
        sc!("r_reread_dio", "a buffered re-read after a FOPEN_DIRECT_IO write of a cached page READs it again (invalidated before and after the direct WRITE); the other page need not be READ (clean pages may be evicted at any time, so none is required to stay cached)", dflt, |c| wrap(c, r_reread_dio)),
        sc!("r_ra_skip", "a read of page 0 reads ahead pages 0-3, PG_readahead on page 1; a read of page 4 skips the mark and misses at ra->start + ra->size: 6.11 and later (page_cache_sync_ra) take the cached pages before it, 4 from the file's start, doubled: 9 pages; 6.1 - 6.10 (ondemand_readahead) push the window forward and merge the next: 24 pages (the model's ra_ondemand); a read of page 13, just past the 9, names the difference", dflt, |c| wrap(c, r_ra_skip)),
        sc!("r_ra_midread", "standalone reads of pages 2 and 8, then a read of pages 2-5: page 2 is cached, page 3 misses; 6.6 and later set ra->prev_pos when a read ends, so the miss is no sequential one and 2 cached pages are too few: READ of pages 3-5 as asked; 6.1 - 6.5 set it after each page copied, so the miss is sequential: the initial window of 8, pages 3-10 but the cached 8 (the model's ra_prev_pos_each_copy)", dflt, |c| wrap(c, r_ra_midread)),
        sc!("r_ra_cong_batch", "max_read 8192 (2-page readahead READs), max_background 1, congestion 1: a read of page 0 takes the window 0-3, async_size 3; the READ of pages 0-1 congests; fuse_readahead's next check counts what readahead_count still holds: 6.13 and later (__readahead_folio) 2 pages left and the previous READ's last folio, 3 <= 3, skip; 6.1 and 6.12 (__readahead_batch) the whole previous READ, 4 > 3, wait in fuse_get_req and READ pages 2-3 (the model's ra_count_batch)", |c| bg1_max_read(c, 8192), |c| wrap(c, r_ra_cong_batch)),
        sc!("r_ra_cong_shrink", "max_read 4096 (1-page readahead READs), max_background 1, congestion 1: a read of page 0 READs pages 0 and 1 and skips 2-3 (window 0-3, async_size 3: 2 left + 1 held <= 3) on every kernel; 6.1 - 6.13 also shrink the file's window to 2 pages, async_size 1 (read_pages before 7a1eb89f7918), so a read of the marked page 1 pushes the window forward by 2: pages 2-5, READ of page 2; later kernels by 4: pages 4-11, READ of page 4 (the model's ra_skip_shrinks)", |c| bg1_max_read(c, 4096), |c| wrap(c, r_ra_cong_shrink)),
        sc!("r_ra_mmap", "readahead of 4 pages with its READ held: an mmap store to page 2 waits on the locked folio until the reply; munmap writes the store back", dflt, |c| wrap(c, r_ra_mmap)),
        sc!("c_munmap_held", "munmap of a shared mapping (fuse_vma_close: write_inode_now) waits for a held writeback WRITE", dflt, |c| wrap(c, c_munmap_held)),
        sc!("c_msync_held", "msync(MS_SYNC) waits for a held writeback WRITE, then sends FSYNC(datasync)", dflt, |c| wrap(c, c_msync_held)),
        sc!("s_sync_range", "sync_file_range(WRITE) of page 1 writes page 1 only (held); fdatasync writes pages 0 and 2 after the release", dflt, |c| wrap(c, s_sync_range)),
        sc!("s_sendfile", "sendfile into the file is a buffered write: pages dirty, one WRITE[CACHE] at fsync", dflt, |c| wrap(c, s_sendfile)),
        sc!("e_odirect_eof", "O_DIRECT read without FOPEN_DIRECT_IO at EOF returns 0 with no READ (fuse_direct_IO); across EOF one READ, short", nodio, |c| wrap(c, e_odirect_eof)),
        sc!("n_copy_range", "copy_file_range within the file: COPY_FILE_RANGE_64 (answered ENOSYS inside fuser, so the trace lacks it) and COPY_FILE_RANGE (recorded, ENOSYS), then the kernel's splice fallback", dflt, |c| wrap(c, n_copy_range))
            .outside_model("not recorded", "fuser answers COPY_FILE_RANGE_64 (an opcode it does not know) without the server, so the trace lacks a request"),
    ]
}

fn expect_blocked(ctx: &mut Ctx, what: &str, p: &mut crate::ctx::Pending) -> Res {
    ctx.sleep_ms(SETTLE_MS);
    let blocked = !p.done();
    ctx.expect(what, blocked, || "returned".into())
}

// ---------------------------------------------------------------- background queue

/// How the second page's WRITE(Y) is asked for while WRITE(X) is held.
#[derive(Clone, Copy, PartialEq)]
enum Second {
    /// sync_file_range(WRITE) of page 1: WB_SYNC_NONE, skipped as
    /// congested (num_background 1 >= congestion_threshold 1), so page 1
    /// stays dirty until fsync after the release.
    SyncRange,
    /// fdatasync on T1: WB_SYNC_ALL, which congestion does not skip, so
    /// WRITE(Y) is queued on fc->bg_queue behind X (max_background 1) and
    /// the fdatasync waits.
    Fdatasync,
}

fn f_overtake(ctx: &mut Ctx) -> Res {
    overtake(ctx, Second::SyncRange)
}

fn f_overtake_sync(ctx: &mut Ctx) -> Res {
    overtake(ctx, Second::Fdatasync)
}

/// WRITE(X) of page 0 held (sync_file_range); WRITE(Y) of page 1 asked
/// for as `second` says; a FOPEN_DIRECT_IO READ of page 2 (not
/// background, nothing to flush or wait for) is read by the server before
/// Y; Y only after X's reply.
fn overtake(ctx: &mut Ctx, second: Second) -> Res {
    let sync = second == Second::Fdatasync;
    let conn = ctx.conn;
    let conn = || conn.ok_or_else(|| fail("fusectl", "the mount's connection is not known".into()));
    if sync {
        // the kernel holds the limits the trace header states (fuser
        // sends min(congestion_threshold, max_background); ServerConfig::check)
        let mut lim = [0u64; 2];
        for (v, f) in lim
            .iter_mut()
            .zip(["max_background", "congestion_threshold"])
        {
            *v = crate::mount::fusectl_read(conn()?, f).map_err(|e| fail("fusectl", e))?;
        }
        ctx.expect(
            "the kernel's max_background and congestion_threshold are the header's (1, 1)",
            lim == [1, 1],
            || format!("fusectl: {lim:?}"),
        )?;
    }
    let fd1 = ctx.create("T0", "f")?;
    let fd2 = ctx.open("T0", "f", ODIRECT_RW)?;
    ctx.pwrite("T0", fd1, 0, "XY")?;
    ctx.ctl("hold WRITE n=inf cache=1")?;
    for i in 0..if sync { 1 } else { 2 } {
        ctx.sys_ok(
            "T0",
            "sync_file_range",
            &format!("fd={fd1} {} {} WRITE", i * PG, PG),
            || sys::sync_file_range_write(fd1, i * PG, PG),
        )?;
    }
    ctx.wait_held(1, 2000)?;
    let mut ds = None;
    if sync {
        let mut p = ctx.spawn("T1", "fdatasync", &format!("fd={fd1}"), move || {
            sys::fdatasync(fd1)
        })?;
        // WRITE(Y) is a request of the connection (fc->num_waiting
        // counts X and Y) that the server has not seen: on fc->bg_queue
        let waited = crate::mount::fusectl_wait_waiting(conn()?, 2, 3000);
        ctx.expect(
            "fdatasync's WRITE(Y) is queued in the kernel (fusectl waiting 2)",
            matches!(waited, Ok((2, true))),
            || format!("fusectl waiting: {waited:?}"),
        )?;
        expect_blocked(ctx, "fdatasync waits while WRITE(X) is held", &mut p)?;
        ds = Some(p);
    }
    let data = ctx.pread("T0", fd2, 2 * PG, PG as usize)?;
    ctx.expect(
        "direct read past EOF returns 0 bytes",
        data.is_empty(),
        || format!("{} bytes", data.len()),
    )?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    let rd = t.reqs("READ");
    ctx.expect(
        "only WRITE(X) reached the server; the READ overtook WRITE(Y)",
        ws.len() == 1
            && ws[0].page_tags.as_deref() == Some("X")
            && rd.len() == 1
            && rd[0].seq > ws[0].seq,
        || briefs(&[ws.clone(), rd.clone()].concat()),
    )?;
    ctx.ctl("unhold WRITE")?;
    ctx.ctl("release all")?;
    let (what, end) = match ds {
        Some(mut p) => {
            let (r, _) = p.join(5000)?;
            ctx.expect("fdatasync returns 0", r.ret == 0, || format!("{r:?}"))?;
            let end = ctx.trace()?.mark_seq("ret", "T1", "fdatasync")?;
            ("(flush_bg_queue), before fdatasync returns", end)
        }
        None => {
            // fsync writes page 1: the trace then has both
            ctx.fsync("T0", fd1)?;
            ("(fsync writes it)", u64::MAX)
        }
    };
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    let w0r = ws.first().and_then(|w| t.reply_seq(w)).unwrap_or(u64::MAX);
    ctx.expect(
        &format!("WRITE(Y) is read only after WRITE(X)'s reply {what}"),
        ws.len() == 2
            && ws[1].page_tags.as_deref() == Some("Y")
            && ws[1].seq > w0r
            && ws[1].seq < end,
        || briefs(&ws),
    )?;
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)?;
    ctx.expect_file("f", 2 * PG, "XY")
}

// ---------------------------------------------------------------- buffered readers

/// pwrite `tags` through a new cached fd, fsync; then an O_DIRECT open
/// (FOPEN_DIRECT_IO, no KEEP_CACHE) that drops the clean pages.
pub(crate) fn on_server_not_cached(
    ctx: &mut Ctx,
    tags: &str,
) -> Result<(i32, i32), crate::fail::Fail> {
    let fd1 = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd1, 0, tags)?;
    ctx.fsync("T0", fd1)?;
    let fd2 = ctx.open("T0", "f", ODIRECT_RW)?;
    Ok((fd1, fd2))
}

fn r_held_dio(ctx: &mut Ctx) -> Res {
    let (fd1, fd2) = on_server_not_cached(ctx, "A")?;
    ctx.ctl("hold READ n=1")?;
    let mut rd = ctx.spawn_pread("T1", fd1, 0, PG as usize)?;
    ctx.wait_held(1, 2000)?;
    let buf = sys::AlignedBuf::pages("X");
    let mut wr = ctx.spawn("T2", "pwrite", &format!("fd={fd2} off=0 X"), move || {
        sys::pwrite(fd2, buf.bytes(), 0)
    })?;
    expect_blocked(
        ctx,
        "direct pwrite waits for the folio the readahead holds locked",
        &mut wr,
    )?;
    let t = ctx.trace()?;
    ctx.expect(
        "no direct WRITE while the READ is held",
        t.plain_writes().is_empty(),
        || briefs(&t.plain_writes()),
    )?;
    ctx.ctl("release all")?;
    let (r, _) = rd.join(3000)?;
    ctx.expect("the held read returns one page", r.ret == PG as i64, || {
        format!("{r:?}")
    })?;
    wr.join(3000)?;
    let t = ctx.trace()?;
    let rq = first(&t.reqs("READ"), "READ")?;
    let pw = t.plain_writes();
    ctx.expect(
        "the direct WRITE is read after the READ reply",
        pw.len() == 1 && pw[0].seq > t.reply_seq(rq).unwrap_or(u64::MAX),
        || briefs(&pw),
    )?;
    let data = ctx.pread("T0", fd1, 0, PG as usize)?;
    let got = crate::trace::page_tags(&data);
    ctx.expect("a re-read returns the direct data", got == "X", || got)?;
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)?;
    ctx.expect_file("f", PG, "X")
}

fn r_reread_dio(ctx: &mut Ctx) -> Res {
    let fd1 = ctx.create("T0", "f")?;
    let fd2 = ctx.open("T0", "f", ODIRECT_RW)?;
    ctx.pwrite("T0", fd1, 0, "AB")?;
    ctx.fsync("T0", fd1)?;
    // (written and fsynced, the pages are clean: the machine's reclaim
    // may evict them at any time, and a read then READs them again, so
    // no check counts READs of the clean pages)
    let data = ctx.pread("T0", fd1, 0, 2 * PG as usize)?;
    let got = crate::trace::page_tags(&data);
    ctx.expect("a read of written pages returns them", got == "AB", || {
        got.clone()
    })?;
    ctx.pwrite("T1", fd2, 0, "X")?;
    let data = ctx.pread("T0", fd1, 0, 2 * PG as usize)?;
    let got = crate::trace::page_tags(&data);
    ctx.expect("the re-read returns the direct data", got == "XB", || {
        got.clone()
    })?;
    let t = ctx.trace()?;
    let pw = t.plain_writes();
    let after = pw.first().map_or(u64::MAX, |w| w.seq);
    let rd: Vec<_> = t
        .reqs("READ")
        .into_iter()
        .filter(|r| r.seq > after)
        .collect();
    ctx.expect(
        "page 0 is READ again after the direct WRITE (invalidated)",
        pw.len() == 1 && rd.iter().any(|r| r.offset == Some(0)),
        || briefs(&rd),
    )?;
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)?;
    ctx.expect_file("f", 2 * PG, "XB")
}

/// 32 pages on the server, none cached; pread pages 0, 4 and 13 on the
/// same fd. Page 13 lies just past 6.11+'s window of the second read and
/// inside 6.1's: its offset is a position boundary, so the trace names
/// which window the kernel took (conform also splits a position where
/// the model's window ended inside it, docs/conformance.md §7).
fn r_ra_skip(ctx: &mut Ctx) -> Res {
    let tags: String = (b'A'..=b'Z').chain(b'a'..=b'f').map(char::from).collect();
    reads_of_uncached(ctx, &tags, &[(0, 1, "A"), (4, 1, "E"), (13, 1, "N")])
}

/// 16 pages on the server, none cached; on one fd pread page 2, page 8,
/// then pages 2-5.
fn r_ra_midread(ctx: &mut Ctx) -> Res {
    let tags: String = (b'A'..=b'P').map(char::from).collect();
    reads_of_uncached(ctx, &tags, &[(2, 1, "C"), (8, 1, "I"), (2, 4, "CDEF")])
}

/// 8 pages on the server, none cached; on one fd pread page 0.
fn r_ra_cong_batch(ctx: &mut Ctx) -> Res {
    reads_of_uncached(ctx, "ABCDEFGH", &[(0, 1, "A")])
}

/// 16 pages on the server, none cached; on one fd pread page 0, then
/// page 1.
fn r_ra_cong_shrink(ctx: &mut Ctx) -> Res {
    let tags: String = (b'A'..=b'P').map(char::from).collect();
    reads_of_uncached(ctx, &tags, &[(0, 1, "A"), (1, 1, "B")])
}

/// `tags` (a page each) on the server, none cached; then on one fd a
/// pread of each (page, pages, what it returns) in turn. The kernel's
/// readahead decides the READs; the trace's conformance to the
/// kernel's model state is the check (clean pages may be evicted at any
/// time, which changes the windows: the model has that too, so no check
/// here counts READs).
fn reads_of_uncached(ctx: &mut Ctx, tags: &str, reads: &[(u64, u64, &str)]) -> Res {
    let (fd1, fd2) = on_server_not_cached(ctx, tags)?;
    ctx.close("T0", fd2)?;
    for &(p, n, want) in reads {
        let data = ctx.pread("T0", fd1, p * PG, (n * PG) as usize)?;
        let got = crate::trace::page_tags(&data);
        ctx.expect(
            &format!("a read of pages {p}+{n} returns them"),
            got == want,
            || got.clone(),
        )?;
    }
    ctx.close("T0", fd1)?;
    ctx.expect_file("f", tags.len() as u64 * PG, tags)
}

fn r_ra_mmap(ctx: &mut Ctx) -> Res {
    let (fd1, fd2) = on_server_not_cached(ctx, "ABCD")?;
    ctx.ctl("hold READ n=1")?;
    let mut rd = ctx.spawn_pread("T1", fd1, 0, PG as usize)?;
    ctx.wait_held(1, 2000)?;
    let t = ctx.trace()?;
    let rq = first(&t.reqs("READ"), "READ")?;
    ctx.expect(
        "the read of page 0 reads ahead to EOF",
        rq.offset == Some(0) && rq.size == Some(4 * PG),
        || Tr::brief(rq),
    )?;
    let (addr, r) = mmap(ctx, fd1, 4 * PG as usize)?;
    if r.ret < 0 {
        return Err(fail("mmap succeeds", format!("errno {}", r.errno)));
    }
    let mut st = ctx.spawn("T2", "store", "off=8192 S", move || {
        unsafe { sys::store_byte(addr, 2 * PG as usize, b'S') };
        Ret { ret: 0, errno: 0 }
    })?;
    expect_blocked(
        ctx,
        "the store to page 2 waits for the readahead's folio lock",
        &mut st,
    )?;
    ctx.ctl("release all")?;
    let (r, _) = rd.join(3000)?;
    ctx.expect("the read returns", r.ret == PG as i64, || format!("{r:?}"))?;
    st.join(3000)?;
    unmap(ctx, addr, 4 * PG as usize)?;
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T0", "munmap")?;
    let r = t.mark_seq("ret", "T0", "munmap")?;
    let ws = t.reqs_between("WRITE", c, r);
    ctx.expect(
        "munmap writes the stored page back before it returns",
        ws.len() == 1 && ws[0].offset == Some(2 * PG) && ws[0].page_tags.as_deref() == Some("S"),
        || briefs(&ws),
    )?;
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)?;
    ctx.expect_file("f", 4 * PG, "ABSD")
}

// ---------------------------------------------------------------- munmap / msync

/// One page "A" on the server and cached, mapped; a store "M"; the
/// writeback WRITE of M held.
fn stored_and_held(ctx: &mut Ctx) -> Result<(i32, usize), crate::fail::Fail> {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "A")?;
    ctx.fsync("T0", fd)?;
    let (addr, r) = mmap(ctx, fd, PG as usize)?;
    if r.ret < 0 {
        return Err(fail("mmap succeeds", format!("errno {}", r.errno)));
    }
    store(ctx, addr, 0, b'M')?;
    ctx.ctl("hold WRITE n=1 cache=1")?;
    ctx.sfr("T0", fd)?;
    ctx.wait_held(1, 2000)?;
    Ok((fd, addr))
}

fn c_munmap_held(ctx: &mut Ctx) -> Res {
    let (fd, addr) = stored_and_held(ctx)?;
    ctx.maps.retain(|m| m.0 != addr);
    let mut p = ctx.spawn("T1", "munmap", &format!("len={PG}"), move || {
        sys::munmap(addr, PG as usize)
    })?;
    expect_blocked(
        ctx,
        "munmap waits for the held WRITE (write_inode_now)",
        &mut p,
    )?;
    ctx.ctl("release all")?;
    p.join(3000)?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    let w = *ws.last().ok_or_else(|| fail("WRITE", "none".into()))?;
    let ret = t.mark_seq("ret", "T1", "munmap")?;
    ctx.expect(
        "munmap returns after the WRITE reply",
        w.page_tags.as_deref() == Some("M") && ret > t.reply_seq(w).unwrap_or(u64::MAX),
        || Tr::brief(w),
    )?;
    ctx.close("T0", fd)?;
    ctx.expect_file("f", PG, "M")
}

fn c_msync_held(ctx: &mut Ctx) -> Res {
    let (fd, addr) = stored_and_held(ctx)?;
    let f0 = ctx.count("FSYNC")?;
    let mut p = ctx.spawn(
        "T1",
        "msync",
        &format!("MS_SYNC off=0 len={PG}"),
        move || sys::msync(addr, PG as usize, true),
    )?;
    expect_blocked(ctx, "msync(MS_SYNC) waits for the held WRITE", &mut p)?;
    let n = ctx.count("FSYNC")? - f0;
    ctx.expect("no FSYNC while the WRITE is held", n == 0, || {
        format!("{n} FSYNC")
    })?;
    ctx.ctl("release all")?;
    p.join(3000)?;
    let t = ctx.trace()?;
    let w = *t
        .cache_writes()
        .last()
        .ok_or_else(|| fail("WRITE", "none".into()))?;
    let fs = *t
        .reqs("FSYNC")
        .last()
        .ok_or_else(|| fail("FSYNC", "none".into()))?;
    ctx.expect(
        "FSYNC(datasync) after the WRITE reply",
        fs.seq > t.reply_seq(w).unwrap_or(u64::MAX) && fs.datasync == Some(true),
        || Tr::brief(fs),
    )?;
    unmap(ctx, addr, PG as usize)?;
    ctx.close("T0", fd)?;
    ctx.expect_file("f", PG, "M")
}

// ---------------------------------------------------------------- sync_file_range, sendfile

fn s_sync_range(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "ABC")?;
    ctx.ctl("hold WRITE n=1 cache=1")?;
    ctx.sys_ok(
        "T0",
        "sync_file_range",
        &format!("fd={fd} {PG} {PG} WRITE"),
        || sys::sync_file_range_write(fd, PG, PG),
    )?;
    ctx.wait_held(1, 2000)?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    ctx.expect(
        "sync_file_range of page 1 writes page 1 only",
        ws.len() == 1 && ws[0].offset == Some(PG) && ws[0].size == Some(PG),
        || briefs(&ws),
    )?;
    ctx.ctl("release all")?;
    ctx.sys_ok("T0", "fdatasync", &format!("fd={fd}"), || {
        sys::fdatasync(fd)
    })?;
    let t = ctx.trace()?;
    let c = t.mark_seq("call", "T0", "fdatasync")?;
    let r = t.mark_seq("ret", "T0", "fdatasync")?;
    let ws = t.reqs_between("WRITE", c, r);
    ctx.expect(
        "fdatasync writes pages 0 and 2",
        tags_by_offset(&ws) == "AC",
        || briefs(&ws),
    )?;
    ctx.close("T0", fd)?;
    ctx.expect_file("f", 3 * PG, "ABC")
}

fn s_sendfile(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    let src = sys::AlignedBuf::pages("AB");
    let mfd = sys::memfd_with(src.bytes());
    if mfd.ret < 0 {
        return Err(fail("memfd_create", format!("errno {}", mfd.errno)));
    }
    let mfd = mfd.ret as i32;
    let (n, _) = ctx.sys_ok("T0", "sendfile", &format!("fd={fd} off=0 AB"), || {
        sys::sendfile(fd, mfd, 2 * PG as usize)
    })?;
    sys::close(mfd);
    let w = ctx.count("WRITE")?;
    ctx.expect(
        "sendfile copies all bytes into the page cache, no WRITE yet",
        n == 2 * PG as i64 && w == 0,
        || format!("{n} bytes, {w} WRITEs"),
    )?;
    ctx.fsync("T0", fd)?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    ctx.expect(
        "fsync writes them as one WRITE[CACHE]",
        ws.len() == 1 && ws[0].page_tags.as_deref() == Some("AB"),
        || briefs(&ws),
    )?;
    ctx.close("T0", fd)?;
    ctx.expect_file("f", 2 * PG, "AB")
}

// ---------------------------------------------------------------- O_DIRECT at EOF

fn e_odirect_eof(ctx: &mut Ctx) -> Res {
    let fd1 = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd1, 0, "A")?;
    ctx.fsync("T0", fd1)?;
    let fd2 = ctx.open("T0", "f", ODIRECT_RW)?;
    let data = ctx.pread("T0", fd2, PG, PG as usize)?;
    let t = ctx.trace()?;
    ctx.expect(
        "a read at EOF returns 0 without a READ",
        data.is_empty() && t.reqs("READ").is_empty(),
        || briefs(&t.reqs("READ")),
    )?;
    let data = ctx.pread("T0", fd2, 0, 2 * PG as usize)?;
    let t = ctx.trace()?;
    let rd = t.reqs("READ");
    ctx.expect(
        "a read across EOF sends one READ of the whole range; it is short",
        crate::trace::page_tags(&data) == "A" && rd.len() == 1 && rd[0].size == Some(2 * PG),
        || briefs(&rd),
    )?;
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)
}

// ---------------------------------------------------------------- copy_file_range

fn n_copy_range(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "A")?;
    ctx.fsync("T0", fd)?;
    let (n, _) = ctx.sys_ok(
        "T0",
        "copy_file_range",
        &format!("fd={fd} 0 {PG} {PG}"),
        || sys::copy_file_range(fd, fd, PG, PG as usize),
    )?;
    ctx.expect("copy_file_range copies a page", n == PG as i64, || {
        format!("{n}")
    })?;
    let t = ctx.trace()?;
    let c = t.reqs("COPY_FILE_RANGE");
    ctx.expect(
        "the server saw COPY_FILE_RANGE (answered ENOSYS) and recorded it",
        c.len() == 1 && t.reply(c[0]).is_some(),
        || briefs(&c),
    )?;
    ctx.fsync("T0", fd)?;
    ctx.close("T0", fd)?;
    ctx.expect_file("f", 2 * PG, "AA")
}
