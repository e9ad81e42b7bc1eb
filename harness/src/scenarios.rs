//! Scenario catalogue. Expectations are those of kernel state T'' (6.18.y with
//! the 6.19 DIO fixes backported; see shared/reference/real-kernel-fuse.md
//! and kernel-fuse-protocol.md §10); on other kernels they are recorded as
//! notes, not asserted (see [`Ctx::expect`]).
//!
//! Conventions: file `f` in the mount; every 4 KiB page is filled with one
//! letter, so `page_tags` identify payloads (the u_ scenarios,
//! [`crate::scenarios_eof`], fill 1 KiB units: `unit_tags`); actor T0 is the scenario thread,
//! T1/T2 are helper threads. A blocked syscall is given [`SETTLE_MS`](crate::scenario_kit::SETTLE_MS) to reach
//! its kernel wait point before we assert that it is still blocked.
//!
//! This file is the table only (with the server configurations it names);
//! the bodies are in files by kernel area: [`crate::scenarios_writeback`],
//! [`crate::scenarios_truncate`], [`crate::scenarios_mmap`],
//! [`crate::scenarios_dio`], [`crate::scenarios_eof`]; what they share is in [`crate::scenario_kit`].
use crate::ctx::Ctx;
use crate::fail::Res;
use crate::scenario_kit::{sc, wrap, Scenario, PG};
use crate::scenarios_dio::{
    both_open_dio_write, d_keep, dio_read, dio_write_held, dirty_then_dio_open, open_while_held,
};
use crate::scenarios_mmap::{c_mmap, c_mmap_held, dio_mmap};
use crate::scenarios_truncate::{h_nowrite, trunc_held, TruncOp};
use crate::scenarios_writeback::{
    a_big, a_fsync, a_maxwrite, a_nowbc, b_rewrite, b_wait_after, f_cong, g_payload, k_close_held,
    k_fsync_held, s_syncfs,
};
use crate::server::ServerConfig;

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

/// Why r_reclaim_nowbc and r_reclaim_wbc are outside the trace model.
const RECLAIM_OUTSIDE: &str = "the memcg-v1 child's reclaim is no task of the trace mapping; the catalogue's reclaim checks model it (docs/findings.md)";

pub fn all() -> Vec<Scenario> {
    let mut v = vec![
        sc!("a_fsync", "3 buffered 4K writes, fsync: WRITE[CACHE]s (pid 0; one 12K WRITE unless other writeback ran) carry each page once, SETATTR(times), then FSYNC after every WRITE reply", dflt, |c| wrap(c, a_fsync)),
        sc!("a_big", "2M+4K pwrite then fsync: page-cache WRITEs are <= 1 MiB (max_pages 256), cover the range, never overlap in flight", dflt, |c| wrap(c, a_big)),
        sc!("a_maxwrite", "max_write=64K: a 256K dirty range is written back as 4 WRITEs of 64K", maxwrite64k, |c| wrap(c, a_maxwrite)),
        sc!("a_nowbc", "no writeback_cache: write-through, one synchronous WRITE per pwrite inside the syscall, 1 MiB chunks, fsync = FSYNC only", nowbc, |c| wrap(c, a_nowbc)),
        sc!("b_ftrunc", "ftruncate(4K) while the 16K WRITE is held: blocks in NOWRITE, SETATTR(size) only after the WRITE reply; next read refetches", dflt, |c| wrap(c, |x| trunc_held(x, TruncOp::Ftrunc(PG)))),
        sc!("b_path", "truncate(path, 4K) while the WRITE is held: same as b_ftrunc, SETATTR without FH", dflt, |c| wrap(c, |x| trunc_held(x, TruncOp::Path(PG)))),
        sc!("b_extend", "ftruncate(32K) (extend) while the WRITE is held: also waits for the WRITE reply", dflt, |c| wrap(c, |x| trunc_held(x, TruncOp::Ftrunc(8 * PG)))),
        sc!("b_otrunc", "open(O_TRUNC) without atomic_o_trunc while the WRITE is held: OPEN (no O_TRUNC) is answered during the hold, SETATTR(size=0) after the WRITE reply", dflt, |c| wrap(c, |x| trunc_held(x, TruncOp::OpenOTrunc))),
        sc!("b_otrunc_atomic", "open(O_TRUNC) with atomic_o_trunc while the WRITE is held: OPEN(O_TRUNC) itself waits for the WRITE reply; no SETATTR(size)", atomic, |c| wrap(c, |x| trunc_held(x, TruncOp::OpenOTrunc))),
        sc!("b_wait_after", "sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER) on a page whose WRITE is held: blocks until the reply (T2: PG_writeback until the reply); L: returns at once (temp page)", dflt, |c| wrap(c, b_wait_after))
            .expect_on(&["T2", "L"])
            .outside_model("only SYNC_FILE_RANGE_WRITE has a model task", "the model's sync_file_range task is SYNC_FILE_RANGE_WRITE (WB_SYNC_NONE, no wait); the wait variant has none"),
        sc!("b_rewrite", "write(2) to a page under writeback does not block (L: waits for the WRITE's reply); fsync waits; the second WRITE (new bytes) is sent only after the first reply", dflt, |c| wrap(c, b_rewrite)).expect_on(&["T2", "L"]),
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
        sc!("m_dio_mmap_allow", "FOPEN_DIRECT_IO with direct_io_allow_mmap: MAP_SHARED works; store + msync sends WRITE[CACHE]", allow_mmap, |c| wrap(c, |x| dio_mmap(x, true)), needs_direct_io_allow_mmap),
        sc!("r_reclaim_nowbc", "no writeback_cache: a child in a small memcg v1 dirties a MAP_SHARED page, its WRITE held; its reclaim sleeps in folio_wait_writeback (no AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM)", nowbc, |c| wrap(c, |x| crate::memcg::reclaim(x, false)), crate::memcg::needs_memcg_v1)
            .outside_model("syscall memcg-child has no model task", RECLAIM_OUTSIDE),
        sc!("r_reclaim_wbc", "writeback_cache: the same child's reclaim never waits on the FUSE folio (mapping flagged); it is OOM-killed in its memcg", dflt, |c| wrap(c, |x| crate::memcg::reclaim(x, true)), crate::memcg::needs_memcg_v1)
            .outside_model("syscall memcg-child has no model task", RECLAIM_OUTSIDE),
        sc!("s_syncfs", "syncfs() does not wait for a held WRITE on this kernel (SB_I_NO_DATA_INTEGRITY); never used as a barrier", dflt, |c| wrap(c, s_syncfs)),
    ];
    v.extend(crate::dio_folios::scenarios());
    v.extend(crate::scenarios_fidelity::all());
    v.extend(crate::scenarios_cache::all());
    v.extend(crate::scenarios_eof::all());
    v.extend(crate::scenarios_split::all());
    v.extend(crate::scenarios_release::all());
    v.extend(crate::scenarios_files::all());
    v.extend(crate::scenarios_transport::all());
    v.extend(crate::scenarios_aio::all());
    v.extend(crate::scenarios_notify::all());
    v
}

/// Harness self-tests (not part of the suite): exercise the safety paths.
/// Scenarios run only by name (`run x_...`): the runner's self-test, and
/// the one that may oops the kernel, which runs only in a `wbspec vm`
/// guest (docs/vm.md).
pub fn selftests() -> Vec<Scenario> {
    vec![
        sc!(
            "x_stuck_body",
            "self-test: the scenario body blocks in fsync on a held WRITE; the runner must hit its deadline, abort the connection via fusectl and clean up",
            dflt,
            x_stuck_body
        ),
        crate::scenarios_fidelity::pdio_bugon_scenario(),
    ]
}

fn x_stuck_body(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "A")?;
    ctx.ctl("hold WRITE n=inf cache=1")?;
    // Synchronous on the body thread: only the watchdog or an abort ends it.
    ctx.fsync("T0", fd)?;
    Ok(())
}

/// FUSE_DIRECT_IO_ALLOW_MMAP came in 6.6 (as FUSE_DIRECT_IO_RELAX,
/// e78662e818f9): an older kernel refuses the INIT flag (fuser's mount
/// fails with ENOSYS), so the scenario cannot run there.
fn needs_direct_io_allow_mmap() -> Option<String> {
    let rel = crate::server::kernel_release();
    match crate::kernels::version_of(&rel) {
        Some(v) if v < (6, 6, 0) => Some(format!(
            "kernel {rel} predates FUSE_DIRECT_IO_ALLOW_MMAP (6.6)"
        )),
        _ => None,
    }
}
