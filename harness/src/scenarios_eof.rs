//! EOF-page scenarios at sizes below a page (issue 18): a partial-page
//! truncation racing the EOF page's writeback (u_trunc_eof_wb: the WRITE
//! in flight first; u_crop_eof: the truncation first), and a
//! write extending within the EOF page, whose fuse_write_begin READs the
//! page, racing a buffered read at EOF (u_extend_eof_read). Their traces
//! have offsets and sizes of 1 KiB units, which trace conformance maps
//! onto the model's units (docs/conformance.md, "Units below a page").
//! u2_write_beyond_eof writes in 2 KiB units: a page that starts at EOF
//! is zeroed by fuse_write_begin, not read. u_wt_partial_lock is the
//! write-through counterpart (no writeback_cache): fuse_perform_write
//! sends no READ, and keeps a partly written folio that is not uptodate
//! locked across its WRITE, so a reader of the page waits for the reply.
//! The table entries are [`all`]; conventions as in [`crate::scenarios`].
use crate::ctx::{Ctx, Pending};
use crate::fail::{Fail, Res};
use crate::scenario_kit::{briefs, first, sc, wrap, Scenario, PG, SETTLE_MS};
use crate::server::ServerConfig;
use crate::sys;
use crate::trace::{units_from, Event, UNIT};
use crate::trace_query::Tr;

pub fn all() -> Vec<Scenario> {
    let dflt = |_: &mut ServerConfig| {};
    vec![
        sc!("u_trunc_eof_wb", "ftruncate(1K) into the EOF page while its 3K writeback WRITE is held: waits for the WRITE (fuse_set_nowrite), SETATTR(1K) after its reply, the server ends with 1K", dflt, |c| wrap(c, trunc_eof_wb)),
        sc!("u_crop_eof", "3K written; ftruncate(1K) with its SETATTR held: writeback started meanwhile queues the EOF page's WRITE in the kernel; after the reply it is sent cropped to 1K and ftruncate waits for it (the partial folio's writeback)", dflt, |c| wrap(c, crop_eof)),
        sc!("u_extend_eof_read", "pwrite(1K at 2K) into the uncached EOF page of a 1K file READs the page first (fuse_write_begin); a read at 0 during that held READ waits for the folio and returns the 3K written", dflt, |c| wrap(c, extend_eof_read)),
        sc!("u_wt_partial_lock", "no writeback_cache: pwrite(1K of B at 1K) into the uncached page of a 4K file of A sends no READ; the folio, not uptodate, stays locked across the held WRITE: a pread of the page sends no READ and waits; after the reply it READs the page (A, B, A, A)", nowbc, |c| wrap(c, wt_partial_lock)),
        sc!("u2_write_beyond_eof", "2 KiB units: pwrite(2K at 6K) into a new page beyond the 2K EOF sends no READ (the folio starts at EOF: fuse_write_begin zeroes it); a read returns A, 4K of zeros, B, and the server holds the same after fsync", dflt, |c| wrap(c, write_beyond_eof_2k)),
    ]
}

/// The 1 KiB unit tags of a request's or a read's data.
fn units(e: &Event, len: u64) -> String {
    units_from(
        e.page_tags.as_deref().unwrap_or(""),
        e.unit_tags.as_deref(),
        len,
    )
}

const K: u64 = UNIT as u64;

fn nowbc(c: &mut ServerConfig) {
    c.writeback_cache = false;
}

/// T1 pwrite()s 1K of B at `off` on its own thread once `hold` is set,
/// and the held request has arrived.
fn held_b_write(ctx: &mut Ctx, fd: i32, hold: &str, off: u64) -> Result<Pending, Fail> {
    ctx.ctl(hold)?;
    let mut buf = sys::AlignedBuf::new(UNIT);
    buf.bytes_mut().fill(b'B');
    let wr = ctx.spawn(
        "T1",
        "pwrite",
        &format!("fd={fd} off={off} B len={K}"),
        move || sys::pwrite(fd, buf.bytes(), off),
    )?;
    ctx.wait_held(1, 2000)?;
    Ok(wr)
}

/// While the write `wr` waits on its held `held` request, T2 starts a
/// pread of page 0: after a settle both must still wait, and the READs
/// sent so far must number `reads` (`no_read`: what that says).
fn reader_waits_with(
    ctx: &mut Ctx,
    wr: &mut Pending,
    fd: i32,
    held: &str,
    reads: u64,
    no_read: &str,
) -> Result<Pending, Fail> {
    let mut rd = ctx.spawn_pread("T2", fd, 0, PG as usize)?;
    ctx.sleep_ms(SETTLE_MS);
    let (wb, rb) = (!wr.done(), !rd.done());
    ctx.expect(
        &format!("the write and the read wait while the {held} is held"),
        wb && rb,
        || format!("write waits {wb}, read waits {rb}"),
    )?;
    let n = ctx.count("READ")?;
    ctx.expect(no_read, n == reads, || {
        format!("{n} READs, {reads} expected")
    })?;
    Ok(rd)
}

/// After a truncation to 1K: a read of the page returns the 1K of A, and
/// after the close the server holds that 1K.
fn truncated_to_1k_of_a(ctx: &mut Ctx, fd: i32) -> Res {
    let data = ctx.pread("T0", fd, 0, PG as usize)?;
    ctx.expect(
        "a read after the truncation returns the 1K of A",
        data.len() == UNIT && data.iter().all(|b| *b == b'A'),
        || format!("{} bytes", data.len()),
    )?;
    ctx.close("T0", fd)?;
    ctx.expect_file_units("f", K, "A")
}

/// 3K written at 0 of a new file, its writeback WRITE held; ftruncate to
/// 1K. fuse_do_setattr takes fuse_set_nowrite, which waits for the
/// WRITE in flight, so no SETATTR goes out while it is held; the WRITE,
/// sent before the truncation, carries the 3K; after its reply SETATTR(1K)
/// truncates the server, truncate_pagecache zeroes the page's tail and
/// the mapping is invalidated: a read returns the 1K.
fn trunc_eof_wb(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.ctl("hold WRITE n=1 cache=1")?;
    ctx.pwrite_units("T0", fd, 0, "AAA", UNIT)?;
    ctx.sfr("T0", fd)?;
    ctx.wait_held(1, 2000)?;
    let sa0 = ctx.count("SETATTR")?;
    let mut tr = ctx.spawn("T1", "ftruncate", &format!("fd={fd} {K}"), move || {
        sys::ftruncate(fd, K)
    })?;
    ctx.sleep_ms(SETTLE_MS);
    let blocked = !tr.done();
    ctx.expect(
        "ftruncate into the EOF page waits while the page's WRITE is held",
        blocked,
        || "returned early".into(),
    )?;
    let sa = ctx.count("SETATTR")? - sa0;
    ctx.expect("no SETATTR while the WRITE is held", sa == 0, || {
        format!("{sa} SETATTRs")
    })?;
    ctx.ctl("release all")?;
    let (r, _) = tr.join(3000)?;
    ctx.expect("ftruncate succeeds", r.ret == 0, || {
        format!("errno {}", r.errno)
    })?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    ctx.expect(
        "one WRITE, the 3K sent before the truncation (not cropped)",
        ws.len() == 1
            && ws[0].offset == Some(0)
            && ws[0].size == Some(3 * K)
            && units(ws[0], 3 * K) == "AAA",
        || briefs(&ws),
    )?;
    let wr = t.reply_seq(ws[0]).unwrap_or(u64::MAX);
    let sizes: Vec<&Event> = t
        .reqs("SETATTR")
        .into_iter()
        .filter(|e| e.size.is_some())
        .collect();
    let s = first(&sizes, "SETATTR(size)")?;
    let sr = t.reply_seq(s).unwrap_or(u64::MAX);
    let ret = t.mark_seq("ret", "T1", "ftruncate")?;
    ctx.expect(
        "SETATTR(1K) after the WRITE reply; ftruncate returns after its reply",
        sizes.len() == 1 && s.size == Some(K) && s.seq > wr && ret > sr,
        || Tr::brief(s),
    )?;
    truncated_to_1k_of_a(ctx, fd)
}

/// A 1K file, not cached (written, fsynced, closed; the reopen drops the
/// clean page: fuse_open without FOPEN_KEEP_CACHE). pwrite of 1K at 2K:
/// the folio is not uptodate, the write does not cover it, and it starts
/// below EOF, so fuse_write_begin READs it (fuse_do_readfolio) with the
/// folio locked: that READ is held. A buffered read at 0 meanwhile finds
/// the locked folio and waits; after the reply the write copies its 1K,
/// fuse_write_end sets i_size to 3K and unlocks: the reader returns 3K,
/// A, zeros, B (the READ's short reply zero-filled the page's tail).
fn extend_eof_read(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite_units("T0", fd, 0, "A", UNIT)?;
    ctx.fsync("T0", fd)?;
    ctx.close("T0", fd)?;
    let fd = ctx.open("T0", "f", libc::O_RDWR)?;
    let r0 = ctx.count("READ")?;
    let mut wr = held_b_write(ctx, fd, "hold READ n=1", 2 * K)?;
    let t = ctx.trace()?;
    let rq = t.reqs("READ");
    ctx.expect(
        "the write READs the whole EOF page first",
        rq.len() as u64 == r0 + 1
            && rq
                .last()
                .is_some_and(|r| r.offset == Some(0) && r.size == Some(PG)),
        || briefs(&rq),
    )?;
    let mut rd = reader_waits_with(
        ctx,
        &mut wr,
        fd,
        "READ",
        r0 + 1,
        "the reader sends no READ of its own",
    )?;
    ctx.ctl("release all")?;
    let (w, _) = wr.join(3000)?;
    ctx.expect("the write writes 1K", w.ret == K as i64, || {
        format!("{w:?}")
    })?;
    let (r, _) = rd.join(3000)?;
    let t = ctx.trace()?;
    let m = t
        .mark("ret", "T2", "pread")
        .ok_or_else(|| crate::scenario_kit::fail("pread mark", "no ret mark".into()))?;
    let got = units(m, r.ret.max(0) as u64);
    ctx.expect(
        "the read returns 3K: A, the page's zeros, B",
        r.ret == 3 * K as i64 && got == "A.B",
        || format!("{} bytes, units {got:?}", r.ret),
    )?;
    let rq = first(&t.reqs("READ")[r0 as usize..], "the held READ")?;
    let reply = t.reply(rq);
    let bytes = reply
        .and_then(|e| e.result.as_ref())
        .and_then(|r| r["bytes"].as_u64());
    ctx.expect(
        "the READ reply carries the 1K on the server",
        bytes == Some(K),
        || format!("{bytes:?}"),
    )?;
    ctx.close("T0", fd)?;
    ctx.expect_file_units("f", 3 * K, "A.B")
}

/// 3K written (A, B, C, 1K each); ftruncate(1K) with its SETATTR held,
/// so the truncation is inside fuse_set_nowrite; sync_file_range starts
/// writeback meanwhile. The page's WRITE is queued in the kernel (the
/// inode is NOWRITE), unseen by the server; after the SETATTR reply
/// fuse_release_nowrite sends it cropped at the new i_size (1K of A), and
/// truncate_pagecache waits for the EOF folio's writeback before
/// ftruncate returns. Should background writeback have sent the page
/// before the hold, that WRITE carries the whole 3K and none is queued.
fn crop_eof(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite_units("T0", fd, 0, "ABC", UNIT)?;
    ctx.ctl("hold SETATTR n=1 size=1")?;
    let mut p = ctx.spawn("T1", "ftruncate", &format!("fd={fd} {K}"), move || {
        sys::ftruncate(fd, K)
    })?;
    ctx.wait_held(1, 2000)?;
    let w0 = ctx.count("WRITE")?;
    ctx.sfr("T2", fd)?;
    ctx.sleep_ms(SETTLE_MS);
    let w1 = ctx.count("WRITE")?;
    ctx.expect(
        "no WRITE read while SETATTR(size) is held",
        w1 == w0,
        || format!("{} WRITEs", w1 - w0),
    )?;
    ctx.ctl("release all")?;
    let (r, _) = p.join(3000)?;
    ctx.expect("ftruncate succeeds", r.ret == 0, || {
        format!("errno {}", r.errno)
    })?;
    let t = ctx.trace()?;
    let s = first(
        &t.reqs("SETATTR")
            .into_iter()
            .filter(|e| e.size == Some(K))
            .collect::<Vec<_>>(),
        "SETATTR(1K)",
    )?;
    let sr = t.reply_seq(s).unwrap_or(u64::MAX);
    let ret = t.mark_seq("ret", "T1", "ftruncate")?;
    let ws = t.cache_writes();
    if w0 == 0 {
        let wr = ws.first().and_then(|w| t.reply_seq(w)).unwrap_or(u64::MAX);
        ctx.expect(
            "the queued WRITE is sent after the SETATTR reply, cropped to 1K, and answered before ftruncate returns",
            ws.len() == 1
                && ws[0].seq > sr
                && ws[0].offset == Some(0)
                && ws[0].size == Some(K)
                && units(ws[0], K) == "A"
                && wr < ret,
            || briefs(&ws),
        )?;
    } else {
        ctx.expect(
            "background writeback sent the whole 3K before the truncation; nothing was queued",
            ws.len() == 1 && ws[0].size == Some(3 * K) && units(ws[0], 3 * K) == "ABC",
            || briefs(&ws),
        )?;
    }
    truncated_to_1k_of_a(ctx, fd)
}

/// 2 KiB of A at 0 of a new file, fsync; then 2 KiB of B at 6K. The
/// second page (4K..8K) starts at or beyond EOF (2K), so
/// fuse_write_begin zeroes the bytes the write does not cover instead of
/// READing the page: no READ of it. A read of 8K returns A, 4K of
/// zeros, B; after fsync the server holds the same. The trace's offsets
/// are whole 2 KiB units: conformance maps it onto 2 units per page.
fn write_beyond_eof_2k(ctx: &mut Ctx) -> Res {
    const U2: u64 = 2 * K;
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite_units("T0", fd, 0, "A", U2 as usize)?;
    ctx.fsync("T0", fd)?;
    ctx.pwrite_units("T0", fd, 3 * U2, "B", U2 as usize)?;
    let data = ctx.pread("T0", fd, 0, (4 * U2) as usize)?;
    let want: Vec<u8> = [
        vec![b'A'; U2 as usize],
        vec![0; 2 * U2 as usize],
        vec![b'B'; U2 as usize],
    ]
    .concat();
    ctx.expect(
        "the read returns 8K: 2K of A, 4K of zeros, 2K of B",
        data == want,
        || format!("{} bytes", data.len()),
    )?;
    ctx.fsync("T0", fd)?;
    let t = ctx.trace()?;
    // the second page is never READ; the first, clean after the first
    // fsync, may be evicted by the machine's reclaim and READ by the
    // read (M-reclaim-clean), so its READs are not counted
    let beyond: Vec<_> = t
        .reqs("READ")
        .into_iter()
        .filter(|r| r.offset.unwrap_or(0) + r.size.unwrap_or(0) > PG)
        .collect();
    ctx.expect(
        "no READ of the second page: it starts at EOF, and the write zeroes it",
        beyond.is_empty(),
        || briefs(&beyond),
    )?;
    ctx.close("T0", fd)?;
    ctx.expect_file_units("f", 4 * U2, "AA....BB")
}

/// Write-through (no writeback_cache). A 4K file of A, not cached (the
/// reopen drops the clean page: fuse_open without FOPEN_KEEP_CACHE,
/// "invalidate_inode_pages2(inode->i_mapping)"). pwrite(1K of B at 1K)
/// goes through fuse_perform_write, not fuse_write_begin: no READ.
/// fuse_fill_write_pages (fs/fuse/file.c at 1ce120dcefc0) creates the
/// folio with __filemap_get_folio(FGP_WRITEBEGIN), copies the 1K, and
/// "if (tmp == folio_size(folio)) folio_mark_uptodate(folio);" does not
/// apply, so "ia->write.folio_locked = true; break;": the folio stays
/// locked, and fuse_send_write_pages unlocks it only after
/// fuse_simple_request has the WRITE's reply ("if
/// (ia->write.folio_locked && (i == ap->num_folios - 1))
/// folio_unlock(folio);"). The WRITE is held; a buffered read of the
/// page meanwhile finds the locked folio that is not uptodate and waits
/// for its lock (filemap_update_page), sending no READ. After the reply
/// the folio is unlocked still not uptodate, so the reader locks it and
/// READs the page (fuse_read_folio), which the server now has as
/// A, B, A, A.
fn wt_partial_lock(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "A")?;
    ctx.close("T0", fd)?;
    let fd = ctx.open("T0", "f", libc::O_RDWR)?;
    let r0 = ctx.count("READ")?;
    let mut wr = held_b_write(ctx, fd, "hold WRITE n=1 cache=0", K)?;
    let t = ctx.trace()?;
    let ws = t.plain_writes();
    let n = t.reqs("READ").len() as u64;
    ctx.expect(
        "the write sends its 1K WRITE at 1K and no READ first",
        n == r0
            && ws
                .last()
                .is_some_and(|w| w.offset == Some(K) && w.size == Some(K) && units(w, K) == "B"),
        || format!("{} READs; WRITEs {}", n - r0, briefs(&ws)),
    )?;
    let mut rd = reader_waits_with(
        ctx,
        &mut wr,
        fd,
        "WRITE",
        r0,
        "no READ while the WRITE is held (the folio is locked)",
    )?;
    ctx.ctl("release all")?;
    let (w, _) = wr.join(3000)?;
    ctx.expect("the write writes 1K", w.ret == K as i64, || {
        format!("{w:?}")
    })?;
    let (r, _) = rd.join(3000)?;
    let t = ctx.trace()?;
    let ws = t.plain_writes();
    let held = first(&ws[ws.len() - 1..], "the held WRITE")?;
    let wreply = t.reply_seq(held).unwrap_or(u64::MAX);
    let rq = t.reqs("READ");
    let rq = first(&rq[r0 as usize..], "the reader's READ")?;
    ctx.expect(
        "the reader's READ of the page is sent after the WRITE's reply",
        rq.seq > wreply && rq.offset == Some(0) && rq.size == Some(PG),
        || format!("{} (WRITE reply at #{wreply})", Tr::brief(rq)),
    )?;
    let bytes = t
        .reply(rq)
        .and_then(|e| e.result.as_ref())
        .and_then(|r| r["bytes"].as_u64());
    let m = t
        .mark("ret", "T2", "pread")
        .ok_or_else(|| crate::scenario_kit::fail("pread mark", "no ret mark".into()))?;
    let got = units(m, r.ret.max(0) as u64);
    ctx.expect(
        "the READ returns the page and the read returns A, B, A, A",
        bytes == Some(PG) && r.ret == PG as i64 && got == "ABAA",
        || {
            format!(
                "READ reply {bytes:?} bytes; read {} bytes, units {got:?}",
                r.ret
            )
        },
    )?;
    ctx.close("T0", fd)?;
    ctx.expect_file_units("f", PG, "ABAA")
}
