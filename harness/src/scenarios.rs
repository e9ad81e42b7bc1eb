//! Scenario catalogue. Expectations are those of kernel state T'' (6.18.y with
//! the 6.19 DIO fixes backported; see shared/reference/real-kernel-fuse.md
//! and kernel-fuse-protocol.md §10); on other kernels they are recorded as
//! notes, not asserted (see [`Ctx::expect`]).
//!
//! Conventions: file `f` in the mount; every 4 KiB page is filled with one
//! letter, so `page_tags` identify payloads; actor T0 is the scenario thread,
//! T1/T2 are helper threads. A blocked syscall is given [`SETTLE_MS`] to reach
//! its kernel wait point before we assert that it is still blocked.
use crate::ctx::Ctx;
use crate::fail::{Fail, Res};
use crate::server::ServerConfig;
use crate::sys::{self, AlignedBuf, Ret};
use crate::trace::Event;
use crate::trace_query::Tr;

/// Time given to a syscall to reach its wait point.
pub const SETTLE_MS: u64 = 300;
pub(crate) const PG: u64 = 4096;

/// The server configuration of a scenario.
pub type ConfigFn = std::sync::Arc<dyn Fn(&mut ServerConfig) + Send + Sync>;
/// A scenario body (a closure, so generated workloads can carry their seed).
pub type RunFn = std::sync::Arc<dyn Fn(&mut Ctx) -> Res + Send + Sync>;

pub struct Scenario {
    pub name: &'static str,
    pub about: &'static str,
    pub config: ConfigFn,
    pub run: RunFn,
    /// Why this machine cannot run the scenario (beyond root and
    /// /dev/fuse), if it cannot: it is then reported skipped.
    pub needs: fn() -> Option<String>,
}

pub(crate) fn no_needs() -> Option<String> {
    None
}

macro_rules! sc {
    ($name:expr, $about:expr, $cfg:expr, $run:expr) => {
        sc!($name, $about, $cfg, $run, $crate::scenarios::no_needs)
    };
    ($name:expr, $about:expr, $cfg:expr, $run:expr, $needs:expr) => {
        Scenario {
            name: $name,
            about: $about,
            config: std::sync::Arc::new($cfg),
            run: std::sync::Arc::new($run),
            needs: $needs,
        }
    };
}
pub(crate) use sc;

fn dflt(_: &mut ServerConfig) {}
fn nowbc(c: &mut ServerConfig) {
    c.writeback_cache = false;
}
fn maxwrite64k(c: &mut ServerConfig) {
    c.max_write = 65536;
}
fn atomic(c: &mut ServerConfig) {
    c.atomic_o_trunc = true;
}
fn keep(c: &mut ServerConfig) {
    c.keep_cache = true;
}
fn nodio(c: &mut ServerConfig) {
    c.dio_on_odirect = false;
}
fn bg4(c: &mut ServerConfig) {
    c.max_background = 4;
    c.congestion_threshold = 3;
}
fn bg1(c: &mut ServerConfig) {
    c.max_background = 1;
    c.congestion_threshold = 1;
}
fn allow_mmap(c: &mut ServerConfig) {
    c.direct_io_allow_mmap = true;
}

pub fn all() -> Vec<Scenario> {
    let mut v = vec![
        sc!("a_fsync", "3 buffered 4K writes stay dirty; fsync sends one 12K WRITE[CACHE] (pid 0), SETATTR(times), FSYNC after the WRITE reply", dflt, |c| wrap(c, a_fsync)),
        sc!("a_big", "2M+4K pwrite then fsync: page-cache WRITEs are <= 1 MiB (max_pages 256), cover the range, never overlap in flight", dflt, |c| wrap(c, a_big)),
        sc!("a_maxwrite", "max_write=64K: a 256K dirty range is written back as 4 WRITEs of 64K", maxwrite64k, |c| wrap(c, a_maxwrite)),
        sc!("a_nowbc", "no writeback_cache: write-through, one synchronous WRITE per pwrite inside the syscall, 1 MiB chunks, fsync = FSYNC only", nowbc, |c| wrap(c, a_nowbc)),
        sc!("b_ftrunc", "ftruncate(4K) while the 16K WRITE is held: blocks in NOWRITE, SETATTR(size) only after the WRITE reply; next read refetches", dflt, |c| wrap(c, |x| trunc_held(x, TruncOp::Ftrunc(PG)))),
        sc!("b_path", "truncate(path, 4K) while the WRITE is held: same as b_ftrunc, SETATTR without FH", dflt, |c| wrap(c, |x| trunc_held(x, TruncOp::Path(PG)))),
        sc!("b_extend", "ftruncate(32K) (extend) while the WRITE is held: also waits for the WRITE reply", dflt, |c| wrap(c, |x| trunc_held(x, TruncOp::Ftrunc(8 * PG)))),
        sc!("b_otrunc", "open(O_TRUNC) without atomic_o_trunc while the WRITE is held: OPEN (no O_TRUNC) is answered during the hold, SETATTR(size=0) after the WRITE reply", dflt, |c| wrap(c, |x| trunc_held(x, TruncOp::OpenOTrunc))),
        sc!("b_otrunc_atomic", "open(O_TRUNC) with atomic_o_trunc while the WRITE is held: OPEN(O_TRUNC) itself waits for the WRITE reply; no SETATTR(size)", atomic, |c| wrap(c, |x| trunc_held(x, TruncOp::OpenOTrunc))),
        sc!("b_rewrite", "write(2) to a page under writeback does not block; fsync waits; the second WRITE (new bytes) is sent only after the first reply", dflt, |c| wrap(c, b_rewrite)),
        sc!("h_crop", "writeback started while SETATTR(4K) is held: WRITE queued in the kernel, sent after the SETATTR reply cropped to 4K; pages beyond dropped", dflt, |c| wrap(c, |x| h_nowrite(x, PG))),
        sc!("h_extend", "writeback started while SETATTR(24K, extend) is held: the full 16K WRITE is sent after the SETATTR reply", dflt, |c| wrap(c, |x| h_nowrite(x, 6 * PG))),
        sc!("c_mmap", "mmap stores to 2 pages + msync(MS_SYNC): the first fault reads both pages ahead, one WRITE[CACHE] then FSYNC(datasync); MS_ASYNC sends nothing; fsync writes the redirtied page", dflt, |c| wrap(c, c_mmap)),
        sc!("c_mmap_held", "store to an mmap page whose WRITE is held blocks (page_mkwrite waits for writeback) until the reply", dflt, |c| wrap(c, c_mmap_held)),
        sc!("g_payload", "payload is read at server-read time: with the server stalled, a pwrite after sync_file_range lands in the queued WRITE", dflt, |c| wrap(c, g_payload)),
        sc!("d_dirty_open", "dirty via cached fd, then open(O_DIRECT) -> FOPEN_DIRECT_IO: open launders the dirty pages (one WRITE per folio); direct WRITE follows", dflt, |c| wrap(c, |x| dirty_then_dio_open(x, true))),
        sc!("d_keep", "FOPEN_KEEP_CACHE: open(O_DIRECT) sends no WRITE; the direct pwrite flushes only its range first", keep, |c| wrap(c, d_keep)),
        sc!("d2_both_open", "both opens first (cached + FOPEN_DIRECT_IO): direct pwrite flushes the overlapping dirty page first, then invalidates it", dflt, |c| wrap(c, |x| both_open_dio_write(x, true))),
        sc!("d2_held", "direct pwrite waits for a held cached WRITE of its range; direct WRITE only after the reply", dflt, |c| wrap(c, |x| dio_write_held(x, true))),
        sc!("d3_dio_read", "direct read (FOPEN_DIRECT_IO) over dirty cached data flushes first and returns the fresh data (b1)", dflt, |c| wrap(c, |x| dio_read(x, true))),
        sc!("d_open_held", "open() without KEEP_CACHE waits for held writeback (OPEN answered, then invalidate waits)", dflt, |c| wrap(c, |x| open_while_held(x, false))),
        sc!("d_open_keep_held", "open() with FOPEN_KEEP_CACHE returns while writeback is held", keep, |c| wrap(c, |x| open_while_held(x, true))),
        sc!("e_dirty_open", "O_DIRECT without FOPEN_DIRECT_IO: open launders dirty pages; direct WRITE carries O_DIRECT", nodio, |c| wrap(c, |x| dirty_then_dio_open(x, false))),
        sc!("e2_both_open", "O_DIRECT without FOPEN_DIRECT_IO, both open: generic direct write flushes its range first", nodio, |c| wrap(c, |x| both_open_dio_write(x, false))),
        sc!("e2_held", "O_DIRECT without FOPEN_DIRECT_IO: direct pwrite waits for held writeback", nodio, |c| wrap(c, |x| dio_write_held(x, false))),
        sc!("e3_dio_read", "O_DIRECT read without FOPEN_DIRECT_IO flushes dirty data first", nodio, |c| wrap(c, |x| dio_read(x, false))),
        sc!("k_close_held", "close() with dirty pages: WRITE (held), close blocks; SETATTR(times), FLUSH after the WRITE reply; RELEASE after FLUSH", dflt, |c| wrap(c, k_close_held)),
        sc!("k_fsync_held", "fsync with the WRITE held: FSYNC only after the WRITE reply, SETATTR(times) in between", dflt, |c| wrap(c, k_fsync_held)),
        sc!("f_cong16", "max_background 16 / congestion 12: 2 sync_file_range writebacks -> 2 WRITEs in flight at once", dflt, |c| wrap(c, |x| f_cong(x, 2, 2))),
        sc!("f_cong4", "max_background 4 / congestion 3: 4 sync_file_range writebacks: WB_SYNC_NONE skips after 3 WRITEs in flight; fsync writes the rest", bg4, |c| wrap(c, |x| f_cong(x, 4, 3))),
        sc!("f_cong1", "max_background 1 / congestion 1: 3 sync_file_range writebacks: one WRITE in flight, the rest skipped until fsync", bg1, |c| wrap(c, |x| f_cong(x, 3, 1))),
        sc!("m_dio_mmap", "FOPEN_DIRECT_IO without direct_io_allow_mmap: MAP_SHARED mmap fails with ENODEV", dflt, |c| wrap(c, |x| dio_mmap(x, false))),
        sc!("m_dio_mmap_allow", "FOPEN_DIRECT_IO with direct_io_allow_mmap: MAP_SHARED works; store + msync sends WRITE[CACHE]", allow_mmap, |c| wrap(c, |x| dio_mmap(x, true))),
        sc!("r_reclaim_nowbc", "no writeback_cache: a child in a small memcg v1 dirties a MAP_SHARED page, its WRITE held; its reclaim sleeps in folio_wait_writeback (no AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM)", nowbc, |c| wrap(c, |x| crate::memcg::reclaim(x, false)), crate::memcg::needs_memcg_v1),
        sc!("r_reclaim_wbc", "writeback_cache: the same child's reclaim never waits on the FUSE folio (mapping flagged); it is OOM-killed in its memcg", dflt, |c| wrap(c, |x| crate::memcg::reclaim(x, true)), crate::memcg::needs_memcg_v1),
        sc!("s_syncfs", "syncfs() does not wait for a held WRITE on this kernel (SB_I_NO_DATA_INTEGRITY); never used as a barrier", dflt, |c| wrap(c, s_syncfs)),
    ];
    v.extend(crate::dio_folios::scenarios());
    v.extend(crate::scenarios_fidelity::all());
    v.extend(crate::scenarios_cache::all());
    v.extend(crate::scenarios_split::all());
    v.extend(crate::scenarios_release::all());
    v
}

/// Run a body, then check the global invariants on its trace.
pub(crate) fn wrap(ctx: &mut Ctx, body: impl FnOnce(&mut Ctx) -> Res) -> Res {
    body(ctx)?;
    let t = ctx.trace()?;
    if let Some(v) = invariant_c1(&t) {
        ctx.expect("c1: one page-cache WRITE per byte in flight", false, || v)?;
    }
    if let Some(v) = invariant_a1(&t) {
        ctx.expect(
            "a1: no WRITE[CACHE] in flight with SETATTR(size)",
            false,
            || v,
        )?;
    }
    Ok(())
}

fn overlap(a: &Event, b: &Event) -> bool {
    let (ao, ae) = (a.offset.unwrap_or(0), a.end.unwrap_or(0));
    let (bo, be) = (b.offset.unwrap_or(0), b.end.unwrap_or(0));
    ao < be && bo < ae
}

/// (c1) Two overlapping page-cache WRITEs are never outstanding at once.
pub fn invariant_c1(t: &Tr) -> Option<String> {
    let ws = t.cache_writes();
    for (i, a) in ws.iter().enumerate() {
        let ar = t.reply_seq(a).unwrap_or(u64::MAX);
        for b in &ws[i + 1..] {
            if overlap(a, b) && b.seq < ar {
                return Some(format!(
                    "{} sent before reply of {}",
                    Tr::brief(b),
                    Tr::brief(a)
                ));
            }
        }
    }
    None
}

/// (a1) While SETATTR(size) is outstanding, no page-cache WRITE of the inode is.
pub fn invariant_a1(t: &Tr) -> Option<String> {
    let ws = t.cache_writes();
    for s in t.reqs("SETATTR").into_iter().filter(|s| s.size.is_some()) {
        let sr = t.reply_seq(s).unwrap_or(u64::MAX);
        for w in ws.iter().filter(|w| w.nodeid == s.nodeid) {
            let wr = t.reply_seq(w).unwrap_or(u64::MAX);
            if w.seq < sr && wr > s.seq {
                return Some(format!("{} overlaps {}", Tr::brief(w), Tr::brief(s)));
            }
        }
    }
    None
}

pub(crate) fn fail(check: &str, detail: String) -> Fail {
    Fail {
        check: check.into(),
        detail,
    }
}

pub(crate) fn tags_by_offset(ws: &[&Event]) -> String {
    let mut v: Vec<&&Event> = ws.iter().collect();
    v.sort_by_key(|e| e.offset);
    v.iter()
        .map(|e| e.page_tags.clone().unwrap_or_default())
        .collect()
}

pub(crate) fn briefs(ws: &[&Event]) -> String {
    ws.iter()
        .map(|e| Tr::brief(e))
        .collect::<Vec<_>>()
        .join("; ")
}

/// create f, dirty `tags`, hold the next WRITE[CACHE], start writeback, wait until held.
fn dirty_and_hold(ctx: &mut Ctx, tags: &str) -> Result<i32, Fail> {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, tags)?;
    ctx.ctl("hold WRITE n=1 cache=1")?;
    ctx.sfr("T0", fd)?;
    ctx.wait_held(1, 2000)?;
    Ok(fd)
}

pub(crate) fn first<'a>(v: &[&'a Event], what: &str) -> Result<&'a Event, Fail> {
    v.first()
        .copied()
        .ok_or_else(|| fail(what, "no such request in the trace".into()))
}

// ---------------------------------------------------------------- (a) buffered writes

fn a_fsync(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    for (i, l) in ["A", "B", "C"].iter().enumerate() {
        ctx.pwrite("T0", fd, i as u64 * PG, l)?;
    }
    ctx.sleep_ms(100);
    let n = ctx.count("WRITE")?;
    ctx.expect("dirty pages stay cached until fsync", n == 0, || {
        format!("{n} WRITEs before fsync")
    })?;
    ctx.fsync("T0", fd)?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    ctx.expect(
        "one 12K WRITE[CACHE] pid 0",
        ws.len() == 1
            && ws[0].offset == Some(0)
            && ws[0].size == Some(3 * PG)
            && ws[0].page_tags.as_deref() == Some("ABC")
            && ws[0].pid == Some(0),
        || briefs(&ws),
    )?;
    let w = first(&ws, "WRITE")?;
    let wr = t.reply_seq(w).unwrap_or(u64::MAX);
    let call = t.mark_seq("call", "T0", "fsync")?;
    let ret = t.mark_seq("ret", "T0", "fsync")?;
    let fs = t.reqs_between("FSYNC", call, ret);
    ctx.expect(
        "FSYNC after the WRITE reply",
        fs.len() == 1 && fs[0].seq > wr,
        || briefs(&fs),
    )?;
    let sa = t.reqs_between("SETATTR", wr, fs.first().map(|e| e.seq).unwrap_or(0));
    ctx.expect(
        "SETATTR(times, no size) between WRITE reply and FSYNC",
        sa.len() == 1 && sa[0].size.is_none() && sa[0].valid.unwrap_or(0) & (1 << 5) != 0,
        || briefs(&sa),
    )?;
    ctx.expect_file("f", 3 * PG, "ABC")?;
    ctx.close("T0", fd)
}

fn a_big(ctx: &mut Ctx) -> Res {
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

fn a_maxwrite(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, &"G".repeat(64))?;
    ctx.fsync("T0", fd)?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    ctx.expect(
        "4 WRITEs of 64K",
        ws.len() == 4 && ws.iter().all(|w| w.size == Some(65536)),
        || briefs(&ws),
    )?;
    ctx.expect_file("f", 64 * PG, &"G".repeat(64))?;
    ctx.close("T0", fd)
}

/// Two single pages then a 2 MiB pwrite at page 2: four model pages
/// (0, 1, the two 1 MiB chunks), so the trace is checked to its end.
fn a_nowbc(ctx: &mut Ctx) -> Res {
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

// ---------------------------------------------------------------- (b) truncate vs held WRITE

#[derive(Clone, Copy)]
enum TruncOp {
    Ftrunc(u64),
    Path(u64),
    OpenOTrunc,
}

fn trunc_held(ctx: &mut Ctx, kind: TruncOp) -> Res {
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

fn b_rewrite(ctx: &mut Ctx) -> Res {
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

// ---------------------------------------------------------------- (h) writeback inside NOWRITE

fn h_nowrite(ctx: &mut Ctx, n: u64) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "ABCD")?;
    ctx.ctl("hold SETATTR n=1")?;
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

// ---------------------------------------------------------------- (c) mmap

pub(crate) fn mmap(ctx: &mut Ctx, fd: i32, len: usize) -> Result<(usize, Ret), Fail> {
    let mut addr = 0;
    let (r, _) = ctx.sys(
        "T0",
        "mmap",
        &format!("fd={fd} len={len} MAP_SHARED"),
        || {
            let (a, r) = sys::mmap_shared(fd, len);
            addr = a;
            r
        },
    )?;
    if addr != 0 {
        ctx.maps.push((addr, len));
    }
    Ok((addr, r))
}

/// munmap with marks; forgets the mapping so it is not unmapped twice.
pub(crate) fn unmap(ctx: &mut Ctx, addr: usize, len: usize) -> Res {
    ctx.maps.retain(|m| m.0 != addr);
    ctx.sys_ok("T0", "munmap", &format!("len={len}"), || {
        sys::munmap(addr, len)
    })?;
    Ok(())
}

pub(crate) fn store(ctx: &mut Ctx, addr: usize, off: usize, b: u8) -> Res {
    ctx.sys_ok("T0", "store", &format!("off={off} {}", b as char), || {
        unsafe { sys::store_byte(addr, off, b) };
        Ret { ret: 0, errno: 0 }
    })?;
    Ok(())
}

fn c_mmap(ctx: &mut Ctx) -> Res {
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
    let wr = t.reply_seq(ws[0]).unwrap_or(u64::MAX);
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

fn c_mmap_held(ctx: &mut Ctx) -> Res {
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

// ---------------------------------------------------------------- (g) payload at server-read time

fn g_payload(ctx: &mut Ctx) -> Res {
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

// ---------------------------------------------------------------- (d)/(e) direct I/O

pub(crate) const ODIRECT_RW: i32 = libc::O_RDWR | libc::O_DIRECT;

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

fn dirty_then_dio_open(ctx: &mut Ctx, fopen_dio: bool) -> Res {
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
    ctx.expect(
        "open launders dirty pages after the OPEN reply: one WRITE[CACHE] per folio",
        ws.len() == 2
            && ws.iter().all(|w| w.is_cache_write() && w.size == Some(PG))
            && tags_by_offset(&ws) == "AB",
        || briefs(&ws),
    )?;
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
    ctx.expect(
        what,
        ws.len() == 1 && ws[0].offset == Some(PG) && ws[0].page_tags.as_deref() == Some("B"),
        || briefs(&ws),
    )?;
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)?;
    ctx.expect_file("f", 2 * PG, "XB")
}

fn d_keep(ctx: &mut Ctx) -> Res {
    let fd1 = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd1, 0, "AB")?;
    let w0 = ctx.count("WRITE")?;
    let fd2 = ctx.open("T0", "f", ODIRECT_RW)?;
    let w1 = ctx.count("WRITE")?;
    ctx.expect("KEEP_CACHE open sends no WRITE", w1 == w0, || {
        format!("{} WRITEs", w1 - w0)
    })?;
    dio_pwrite(ctx, "T1", fd2, 0, "X")?;
    expect_flush_then_direct(ctx, false)?;
    fsync_writes_page1_then_close(ctx, fd1, fd2, "page 1 stays dirty until fsync")
}

fn both_open_dio_write(ctx: &mut Ctx, fopen_dio: bool) -> Res {
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

fn dio_write_held(ctx: &mut Ctx, _fopen_dio: bool) -> Res {
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

fn dio_read(ctx: &mut Ctx, _fopen_dio: bool) -> Res {
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
    let ws = t.reqs_between("WRITE", c, r);
    let rd = t.reqs_between("READ", c, r);
    let last_wr = ws
        .iter()
        .filter_map(|w| t.reply_seq(w))
        .max()
        .unwrap_or(u64::MAX);
    ctx.expect(
        "dirty range flushed (WRITE[CACHE] AB) before the READ",
        !ws.is_empty()
            && ws.iter().all(|w| w.is_cache_write())
            && tags_by_offset(&ws) == "AB"
            && rd.len() == 1
            && rd[0].seq > last_wr,
        || briefs(&[ws.clone(), rd.clone()].concat()),
    )?;
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)
}

fn open_while_held(ctx: &mut Ctx, keep_cache: bool) -> Res {
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

// ---------------------------------------------------------------- (k) close / fsync ordering

fn k_close_held(ctx: &mut Ctx) -> Res {
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

fn k_fsync_held(ctx: &mut Ctx) -> Res {
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
fn f_cong(ctx: &mut Ctx, chunks: u64, expect_inflight: u64) -> Res {
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

// ---------------------------------------------------------------- (m) FOPEN_DIRECT_IO + mmap

fn dio_mmap(ctx: &mut Ctx, allow: bool) -> Res {
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

// ---------------------------------------------------------------- (s) syncfs

fn s_syncfs(ctx: &mut Ctx) -> Res {
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

/// Harness self-tests (not part of the suite): exercise the safety paths.
pub fn selftests() -> Vec<Scenario> {
    vec![sc!(
        "x_stuck_body",
        "self-test: the scenario body blocks in fsync on a held WRITE; the runner must hit its deadline, abort the connection via fusectl and clean up",
        dflt,
        x_stuck_body
    )]
}

fn x_stuck_body(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "A")?;
    ctx.ctl("hold WRITE n=inf cache=1")?;
    // Synchronous on the body thread: only the watchdog or an abort ends it.
    ctx.fsync("T0", fd)?;
    Ok(())
}
