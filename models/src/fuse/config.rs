//! Configuration of the FUSE model: kernel state, variant flags, geometry
//! and workload. Everything here is data; the model never branches on a
//! check's name.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Most pages a configuration may have (the issue asks for 1..=4).
pub const MAX_PAGES: usize = 4;
/// Most daemon worker threads.
pub const MAX_WORKERS: usize = 3;
/// Most kernel tasks in one workload. Versions are 4-bit (see `hist`), and
/// versions 0 and 1 are reserved, so at most 14 writing tasks fit; we keep
/// it smaller to bound the state.
pub const MAX_TASKS: usize = 8;

/// Kernel states of fs/fuse (kernel-fuse-protocol.md §0, §0.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kernel {
    /// ≤ v6.15: writeback copies each folio into a temp page and ends
    /// PG_writeback at once; in-flight WRITEs are tracked in the
    /// fi->writepages rb-tree; a page redirtied while its WRITE is in
    /// flight becomes a secondary request (wpa->next); fuse_flush calls
    /// fuse_sync_writes.
    L,
    /// v6.16–v6.18: temp pages removed (0c58a97f919c); PG_writeback lasts
    /// until the daemon replies; fuse_flush no longer calls fuse_sync_writes.
    T,
    /// Current (C, 6.17+ iomap writeback, 2026 trees): T2 plus iomap's
    /// sub-folio dirty tracking: a folio of `Config::folio_blocks` blocks
    /// may be written back as several WRITEs with disjoint ranges; its
    /// PG_writeback ends when all complete. (Released kernels use order-0
    /// folios; the split shows with blocks smaller than a folio.)
    C,
    /// v6.19 (T″): T plus 1ce120dcefc0 (FOPEN_DIRECT_IO always flushes
    /// before direct I/O) and b359af8275a9 (invalidate after a
    /// FOPEN_DIRECT_IO write). Backported to 6.18.3.
    T2,
}

impl Kernel {
    pub fn parse(s: &str) -> Option<Kernel> {
        match s {
            "L" | "6.15" => Some(Kernel::L),
            "T" | "6.16" | "6.17" | "6.18" => Some(Kernel::T),
            "T2" | "T''" | "T″" | "6.19" => Some(Kernel::T2),
            "C" => Some(Kernel::C),
            _ => None,
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Kernel::L => "L (<=6.15)",
            Kernel::T => "T (6.16-6.18)",
            Kernel::T2 => "T'' (6.19)",
            Kernel::C => "C (iomap)",
        }
    }
}

/// Behaviour switches. A kernel state sets a base; a check may add
/// proposals or mutants on top. Every flag names the kernel code it stands
/// for, so a reader can see what differs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Variant {
    /// State L's writeback: temp pages, the rb-tree, secondary requests,
    /// and rb-tree waits (fuse_wait_on_page_writeback) in write_begin,
    /// page_mkwrite, launder and fuse_direct_io (B).
    pub temp_pages: bool,
    /// fuse_direct_io step (A) runs for every FOPEN_DIRECT_IO request, not
    /// only with fc->direct_io_allow_mmap (6.19, 1ce120dcefc0).
    pub dio_flush_always: bool,
    /// fuse_direct_io step (E): invalidate_inode_pages2_range after a
    /// FOPEN_DIRECT_IO write (6.19, b359af8275a9).
    pub dio_invalidate_after_write: bool,
    /// fuse_flush takes inode_lock and calls fuse_sync_writes (≤ 6.15; the
    /// v8 review removed it).
    pub flush_sync_writes: bool,

    // ---- review proposals (seed 000; kernel-fuse-protocol.md §11)
    /// P-nowritectr (Jingbo): no fi->writectr / fi->queued_writes /
    /// fuse_sync_writes. Writeback WRITEs are sent at once (cropped at the
    /// i_size of that moment); fuse_do_setattr does not wait for them;
    /// fsync and fuse_direct_io lose their fuse_sync_writes.
    pub p_no_writectr: bool,
    /// P-syncwrites (Joanne): every fuse_sync_writes outside truncate is
    /// replaced by filemap_write_and_wait_range: fuse_fsync relies on
    /// file_write_and_wait_range alone; fuse_direct_io flushes the range
    /// when `fopen_direct_io && (direct_io_allow_mmap || !cuse)` (always,
    /// as the model has no CUSE) and drops step (B).
    pub p_syncwrites: bool,
    /// P-writeiter (Jingbo's preference): as P-syncwrites, but the flush is
    /// done in fuse_direct_write_iter, so FOPEN_DIRECT_IO reads get none.
    pub p_writeiter: bool,

    // ---- mutants: each deliberately breaks one protection (vacuity guards)
    /// fuse_page_mkwrite without folio_wait_writeback (kills c1).
    pub mut_mkwrite_no_wait: bool,
    /// __fuse_release_nowrite crops queued WRITEs with the *old* i_size:
    /// the flush runs before i_size_write (kills a2).
    pub mut_crop_old_size: bool,
    /// fuse_flush_writepages ignores the FUSE_NOWRITE bias (kills a1).
    pub mut_flush_ignores_nowrite: bool,
    /// fuse_do_setattr calls truncate_pagecache / invalidate_inode_pages2
    /// before __fuse_release_nowrite (kills e: the launder deadlock).
    pub mut_invalidate_under_nowrite: bool,
    /// fuse_fsync without file_write_and_wait_range's wait and without
    /// fuse_sync_writes (kills d).
    pub mut_fsync_no_wait: bool,
    /// fuse_direct_io write without steps (A), (B) and (C) (kills b2).
    pub mut_dio_write_no_flush: bool,
    /// folio_prepare_writeback neither skips nor waits for a folio under
    /// writeback (kills c1).
    pub mut_wb_ignores_writeback: bool,
    /// State L: fuse_writepage_add ignores the rb-tree, so a redirtied
    /// page becomes a new primary instead of a secondary (kills c1 in L).
    pub mut_l_no_secondary: bool,
    /// State C: a folio's PG_writeback ends when its first range
    /// completes, not its last (kills c1 in C).
    pub mut_c_end_early: bool,

    // ---- issue 11: reclaim flag, large folios, writeback slots
    /// 0c4f8ed498ce (6.16, seed 000 patches 1-2): FUSE sets
    /// AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM on writeback_cache mounts and
    /// shrink_folio_list never waits on such a folio's writeback. Off:
    /// 0c58a97f919c without patches 1-2. (reclaim.rs)
    pub reclaim_flag: bool,
    /// c3880a7b10e4 (2026): fuse_folios_need_send sends the batch once
    /// its descriptors fill fc->max_pages slots. (wbslots.rs)
    pub slot_check: bool,
    /// Large folios: the folio order cap honours max_read (the Aug 2025
    /// "fuse: enable large folios" posting); off, v2 patch 12's cap
    /// ilog2(min(max_write / PAGE, max_pages)). (lfolio.rs)
    pub lf_cap_max_read: bool,
    /// Large folios: fuse_readahead stops when no folio fits the request
    /// (`if (!pages) break`, v5 09/11). v2 has no guard; v6 and the merged
    /// 906354c87f49 replaced it with WARN_ON(!pages) and send anyway.
    pub lf_readahead_guard: bool,
    /// shrink_folio_list ignores the mapping flag (kills r-flag).
    pub mut_vmscan_ignores_flag: bool,
    /// fuse_send_writepage sizes a WRITE as num_folios * PAGE_SIZE, as
    /// before v2 patch 08 (kills lf-crop).
    pub mut_lf_datasize_pages: bool,
    /// No folio order cap: folios as large as `folio_pages` whatever
    /// max_write / max_pages (kills lf-limits on writeback).
    pub mut_lf_no_order_cap: bool,
    /// fuse_pages_realloc returns true without growing the arrays (kills
    /// lf-slots with c3880a7b10e4 in place).
    pub mut_realloc_no_grow: bool,
    /// fuse_file_cached_io_start does not wait on direct_io_waitq for the
    /// parallel direct writes in progress (kills i1).
    #[serde(default)]
    pub mut_iomode_no_wait: bool,
    /// fuse_writepage_end ignores the error of a failed WRITE: no
    /// mapping_set_error (kills f1).
    #[serde(default)]
    pub mut_wb_error_ignored: bool,
    /// fuse_do_setattr writes the requested size even when SETATTR failed
    /// (kills a5).
    #[serde(default)]
    pub mut_setattr_error_size: bool,
    /// fuse_change_attributes and fuse_read_update_size ignore
    /// attr_version and FUSE_I_SIZE_UNSTABLE (kills a4).
    #[serde(default)]
    pub mut_attr_no_version: bool,
}

pub const VARIANT_FLAGS: &[&str] = &[
    "temp_pages",
    "dio_flush_always",
    "dio_invalidate_after_write",
    "flush_sync_writes",
    "p_no_writectr",
    "p_syncwrites",
    "p_writeiter",
    "mut_mkwrite_no_wait",
    "mut_crop_old_size",
    "mut_flush_ignores_nowrite",
    "mut_invalidate_under_nowrite",
    "mut_fsync_no_wait",
    "mut_dio_write_no_flush",
    "mut_wb_ignores_writeback",
    "mut_l_no_secondary",
    "mut_c_end_early",
    "reclaim_flag",
    "slot_check",
    "lf_cap_max_read",
    "lf_readahead_guard",
    "mut_vmscan_ignores_flag",
    "mut_lf_datasize_pages",
    "mut_lf_no_order_cap",
    "mut_realloc_no_grow",
    "mut_iomode_no_wait",
    "mut_wb_error_ignored",
    "mut_setattr_error_size",
    "mut_attr_no_version",
];

impl Variant {
    pub fn base(k: Kernel) -> Variant {
        match k {
            Kernel::L => Variant {
                temp_pages: true,
                flush_sync_writes: true,
                ..Variant::default()
            },
            Kernel::T => Variant {
                reclaim_flag: true,
                ..Variant::default()
            },
            Kernel::T2 => Variant {
                dio_flush_always: true,
                dio_invalidate_after_write: true,
                reclaim_flag: true,
                ..Variant::default()
            },
            Kernel::C => Variant {
                dio_flush_always: true,
                dio_invalidate_after_write: true,
                reclaim_flag: true,
                slot_check: true,
                ..Variant::default()
            },
        }
    }

    /// Turns on (or, with a leading '!', off) one flag by name.
    pub fn set(&mut self, flag: &str) -> Result<(), String> {
        let (name, on) = match flag.strip_prefix('!') {
            Some(n) => (n, false),
            None => (flag, true),
        };
        let f = match name {
            "temp_pages" => &mut self.temp_pages,
            "dio_flush_always" => &mut self.dio_flush_always,
            "dio_invalidate_after_write" => &mut self.dio_invalidate_after_write,
            "flush_sync_writes" => &mut self.flush_sync_writes,
            "p_no_writectr" => &mut self.p_no_writectr,
            "p_syncwrites" => &mut self.p_syncwrites,
            "p_writeiter" => &mut self.p_writeiter,
            "mut_mkwrite_no_wait" => &mut self.mut_mkwrite_no_wait,
            "mut_crop_old_size" => &mut self.mut_crop_old_size,
            "mut_flush_ignores_nowrite" => &mut self.mut_flush_ignores_nowrite,
            "mut_invalidate_under_nowrite" => &mut self.mut_invalidate_under_nowrite,
            "mut_fsync_no_wait" => &mut self.mut_fsync_no_wait,
            "mut_dio_write_no_flush" => &mut self.mut_dio_write_no_flush,
            "mut_wb_ignores_writeback" => &mut self.mut_wb_ignores_writeback,
            "mut_l_no_secondary" => &mut self.mut_l_no_secondary,
            "mut_c_end_early" => &mut self.mut_c_end_early,
            "reclaim_flag" => &mut self.reclaim_flag,
            "slot_check" => &mut self.slot_check,
            "lf_cap_max_read" => &mut self.lf_cap_max_read,
            "lf_readahead_guard" => &mut self.lf_readahead_guard,
            "mut_vmscan_ignores_flag" => &mut self.mut_vmscan_ignores_flag,
            "mut_lf_datasize_pages" => &mut self.mut_lf_datasize_pages,
            "mut_lf_no_order_cap" => &mut self.mut_lf_no_order_cap,
            "mut_realloc_no_grow" => &mut self.mut_realloc_no_grow,
            "mut_iomode_no_wait" => &mut self.mut_iomode_no_wait,
            "mut_wb_error_ignored" => &mut self.mut_wb_error_ignored,
            "mut_setattr_error_size" => &mut self.mut_setattr_error_size,
            "mut_attr_no_version" => &mut self.mut_attr_no_version,
            _ => {
                return Err(format!(
                    "unknown variant flag '{name}' (known: {})",
                    VARIANT_FLAGS.join(", ")
                ))
            }
        };
        *f = on;
        Ok(())
    }

    pub fn flags_on(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let all = [
            ("temp_pages", self.temp_pages),
            ("dio_flush_always", self.dio_flush_always),
            (
                "dio_invalidate_after_write",
                self.dio_invalidate_after_write,
            ),
            ("flush_sync_writes", self.flush_sync_writes),
            ("p_no_writectr", self.p_no_writectr),
            ("p_syncwrites", self.p_syncwrites),
            ("p_writeiter", self.p_writeiter),
            ("mut_mkwrite_no_wait", self.mut_mkwrite_no_wait),
            ("mut_crop_old_size", self.mut_crop_old_size),
            ("mut_flush_ignores_nowrite", self.mut_flush_ignores_nowrite),
            (
                "mut_invalidate_under_nowrite",
                self.mut_invalidate_under_nowrite,
            ),
            ("mut_fsync_no_wait", self.mut_fsync_no_wait),
            ("mut_dio_write_no_flush", self.mut_dio_write_no_flush),
            ("mut_wb_ignores_writeback", self.mut_wb_ignores_writeback),
            ("mut_l_no_secondary", self.mut_l_no_secondary),
            ("mut_c_end_early", self.mut_c_end_early),
            ("reclaim_flag", self.reclaim_flag),
            ("slot_check", self.slot_check),
            ("lf_cap_max_read", self.lf_cap_max_read),
            ("lf_readahead_guard", self.lf_readahead_guard),
            ("mut_vmscan_ignores_flag", self.mut_vmscan_ignores_flag),
            ("mut_lf_datasize_pages", self.mut_lf_datasize_pages),
            ("mut_lf_no_order_cap", self.mut_lf_no_order_cap),
            ("mut_realloc_no_grow", self.mut_realloc_no_grow),
            ("mut_iomode_no_wait", self.mut_iomode_no_wait),
            ("mut_wb_error_ignored", self.mut_wb_error_ignored),
            ("mut_setattr_error_size", self.mut_setattr_error_size),
            ("mut_attr_no_version", self.mut_attr_no_version),
        ];
        for (n, on) in all {
            if on {
                v.push(n);
            }
        }
        v
    }
}

/// One kernel task of the workload. Page ranges are `first..first+n` in
/// page units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskSpec {
    /// write(2) on a cached open with writeback_cache (whole pages).
    Write { first: u8, n: u8 },
    /// A store through a MAP_SHARED mapping to one page.
    Mmap { page: u8 },
    /// open(2) of the file (fuse_open): with `trunc`, O_TRUNC; without
    /// `keep_cache` (FOPEN_KEEP_CACHE not replied) the page cache is
    /// invalidated after OPEN (launder + wait, real-kernel-fuse.md §0).
    /// With `direct`, the server replies FOPEN_DIRECT_IO: the open takes
    /// no io-mode reference (fuse_file_io_open returns at once).
    Open {
        trunc: bool,
        keep_cache: bool,
        direct: bool,
    },
    /// close(2) of the workload's caching open when it is the last
    /// reference: fuse_flush, then fuse_release (write_inode_now again;
    /// fuse_file_put → fuse_file_io_release: iocachectr--). The RELEASE
    /// request is not modelled.
    CloseRelease,
    /// fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE) over pages
    /// `first..first+n` (the server zeroes them).
    Punch { first: u8, n: u8 },
    /// A read fault through a MAP_PRIVATE mapping (of a FOPEN_DIRECT_IO
    /// open: no io-mode change, ref §6): filemap_fault reads the folio
    /// with the folio locked.
    Fault { page: u8 },
    /// Direct I/O (on another file) that reads into a MAP_SHARED mapping of
    /// this page: pin_user_pages faults it writable (fuse_page_mkwrite),
    /// the data lands, and unpin dirties the folio again with
    /// set_page_dirty_lock, without page_mkwrite — "a direct read to an
    /// mmaped fuse file will set the page dirty twice" (ref §3.5).
    Gup { page: u8 },
    /// The flusher / sync_file_range(WRITE): fuse_writepages over the
    /// whole file, WB_SYNC_NONE (`all == false`) or WB_SYNC_ALL.
    Writeback { all: bool },
    /// ftruncate(fd, size) (shrink or extend), size in pages.
    Truncate { size: u8 },
    /// fsync(fd) over the whole file.
    Fsync,
    /// close(fd): fuse_flush.
    Close,
    /// write(2) on a FOPEN_DIRECT_IO open.
    DioWrite { first: u8, n: u8 },
    /// read(2) on a FOPEN_DIRECT_IO open.
    DioRead { first: u8, n: u8 },
    /// write(2) with O_DIRECT on a cached open (no FOPEN_DIRECT_IO).
    OdirectWrite { first: u8, n: u8 },
    /// read(2) with O_DIRECT on a cached open (no FOPEN_DIRECT_IO).
    OdirectRead { first: u8, n: u8 },
    /// Readahead of pages `first..first+n` (page_cache_ra_order ->
    /// read_pages -> fuse_readahead), as a buffered read or a fault starts
    /// it; the READs are sent in the background (FUSE_ASYNC_READ).
    Readahead { first: u8, n: u8 },
    /// mmap(MAP_SHARED) of a FOPEN_DIRECT_IO open (needs
    /// direct_io_allow_mmap), then a store to one page: fuse_file_mmap
    /// invalidates the page cache and enters caching io-mode
    /// (fuse_file_cached_io_start, waiting for parallel direct writes).
    DioMmap { page: u8 },
    /// stat(2) with stale attributes: fuse_update_attributes →
    /// fuse_do_getattr (GETATTR) → fuse_change_attributes.
    Stat,
    /// Another client truncates the file on the server (a server-side size
    /// change the kernel learns only from GETATTR or a short READ).
    RemoteTruncate { size: u8 },
}

impl TaskSpec {
    /// Parses the catalogue's compact syntax, e.g. `write 0+2`, `mmap 1`,
    /// `wb none`, `wb all`, `truncate 1`, `fsync`, `close`,
    /// `dio-write 0+1`, `dio-read 0+1`, `odirect-write 0+1`,
    /// `odirect-read 0+1`.
    pub fn parse(s: &str) -> Result<TaskSpec, String> {
        let words: Vec<&str> = s.split_whitespace().collect();
        let range = |w: Option<&&str>| -> Result<(u8, u8), String> {
            let w = w.ok_or_else(|| format!("task '{s}': missing page range like 0+2"))?;
            let (a, b) = w.split_once('+').unwrap_or((w, "1"));
            let first = a
                .parse::<u8>()
                .map_err(|_| format!("task '{s}': bad first page '{a}'"))?;
            let n = b
                .parse::<u8>()
                .map_err(|_| format!("task '{s}': bad page count '{b}'"))?;
            if n == 0 {
                return Err(format!("task '{s}': empty page range"));
            }
            Ok((first, n))
        };
        let num = |w: Option<&&str>| -> Result<u8, String> {
            w.ok_or_else(|| format!("task '{s}': missing number"))?
                .parse::<u8>()
                .map_err(|_| format!("task '{s}': bad number"))
        };
        let t = match words.first().copied() {
            Some("write") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::Write { first, n }
            }
            Some("mmap") => TaskSpec::Mmap {
                page: num(words.get(1))?,
            },
            Some("open") => {
                let mut trunc = false;
                let mut keep_cache = false;
                let mut direct = false;
                for w in &words[1..] {
                    match *w {
                        "trunc" => trunc = true,
                        "keep" => keep_cache = true,
                        "direct" => direct = true,
                        _ => {
                            return Err(format!(
                                "task '{s}': open takes 'trunc', 'keep' and/or 'direct'"
                            ))
                        }
                    }
                }
                TaskSpec::Open {
                    trunc,
                    keep_cache,
                    direct,
                }
            }
            Some("punch") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::Punch { first, n }
            }
            Some("fault") => TaskSpec::Fault {
                page: num(words.get(1))?,
            },
            Some("gup") => TaskSpec::Gup {
                page: num(words.get(1))?,
            },
            Some("wb") => match words.get(1).copied() {
                Some("none") => TaskSpec::Writeback { all: false },
                Some("all") => TaskSpec::Writeback { all: true },
                _ => return Err(format!("task '{s}': wb takes 'none' or 'all'")),
            },
            Some("truncate") => TaskSpec::Truncate {
                size: num(words.get(1))?,
            },
            Some("fsync") => TaskSpec::Fsync,
            Some("close") => match words.get(1).copied() {
                None => TaskSpec::Close,
                Some("release") => TaskSpec::CloseRelease,
                Some(_) => return Err(format!("task '{s}': close takes only 'release'")),
            },
            Some("dio-write") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::DioWrite { first, n }
            }
            Some("dio-read") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::DioRead { first, n }
            }
            Some("odirect-write") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::OdirectWrite { first, n }
            }
            Some("odirect-read") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::OdirectRead { first, n }
            }
            Some("readahead") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::Readahead { first, n }
            }
            Some("dio-mmap") => TaskSpec::DioMmap {
                page: num(words.get(1))?,
            },
            Some("stat") => TaskSpec::Stat,
            Some("remote-truncate") => TaskSpec::RemoteTruncate {
                size: num(words.get(1))?,
            },
            _ => return Err(format!("unknown task '{s}'")),
        };
        let max_words = match t {
            TaskSpec::Fsync | TaskSpec::Close | TaskSpec::Stat => 1,
            TaskSpec::Open { .. } => 4,
            _ => 2,
        };
        if words.len() > max_words {
            return Err(format!("task '{s}': trailing words"));
        }
        Ok(t)
    }

    /// Short name used in narratives (≤ 10 columns).
    pub fn short(&self) -> &'static str {
        match self {
            TaskSpec::Write { .. } => "write",
            TaskSpec::Mmap { .. } => "mmap-store",
            TaskSpec::Gup { .. } => "gup-dirty",
            TaskSpec::Fault { .. } => "priv-fault",
            TaskSpec::Punch { .. } => "punch-hole",
            TaskSpec::Open { trunc: true, .. } => "open-trunc",
            TaskSpec::Open { .. } => "open",
            TaskSpec::Writeback { all: false } => "flusher",
            TaskSpec::Writeback { all: true } => "sync-wb",
            TaskSpec::Truncate { .. } => "ftruncate",
            TaskSpec::Fsync => "fsync",
            TaskSpec::Close => "close",
            TaskSpec::CloseRelease => "close-rel",
            TaskSpec::DioWrite { .. } => "dio-write",
            TaskSpec::DioRead { .. } => "dio-read",
            TaskSpec::OdirectWrite { .. } => "odir-write",
            TaskSpec::OdirectRead { .. } => "odir-read",
            TaskSpec::Readahead { .. } => "readahead",
            TaskSpec::DioMmap { .. } => "dio-mmap",
            TaskSpec::Stat => "stat",
            TaskSpec::RemoteTruncate { .. } => "remote-trn",
        }
    }

    /// Does this task produce data (and so owns a version number)?
    pub fn writes(&self) -> bool {
        matches!(
            self,
            TaskSpec::Write { .. }
                | TaskSpec::Mmap { .. }
                | TaskSpec::Gup { .. }
                | TaskSpec::DioMmap { .. }
                | TaskSpec::RemoteTruncate { .. }
                | TaskSpec::Punch { .. }
                | TaskSpec::Open { trunc: true, .. }
                | TaskSpec::Truncate { .. }
                | TaskSpec::DioWrite { .. }
                | TaskSpec::OdirectWrite { .. }
        )
    }

    /// Does the task use the workload's caching open (opened before the
    /// workload and held throughout: fuse_file_cached_io_start ran, so
    /// FUSE_I_CACHE_IO_MODE is set from the start)? write(2) in either
    /// mode, MAP_SHARED stores and O_DIRECT on a non-FOPEN_DIRECT_IO open
    /// do; FOPEN_DIRECT_IO I/O, MAP_PRIVATE faults, writeback, truncate,
    /// fsync, close and fallocate may use any open.
    pub fn uses_cached_open(&self) -> bool {
        matches!(
            self,
            TaskSpec::Write { .. }
                | TaskSpec::Mmap { .. }
                | TaskSpec::Gup { .. }
                | TaskSpec::OdirectWrite { .. }
                | TaskSpec::OdirectRead { .. }
                | TaskSpec::CloseRelease
        )
    }

    pub fn range(&self) -> Option<(u8, u8)> {
        match *self {
            TaskSpec::Write { first, n }
            | TaskSpec::DioWrite { first, n }
            | TaskSpec::DioRead { first, n }
            | TaskSpec::OdirectWrite { first, n }
            | TaskSpec::OdirectRead { first, n }
            | TaskSpec::Readahead { first, n }
            | TaskSpec::Punch { first, n } => Some((first, n)),
            TaskSpec::Mmap { page }
            | TaskSpec::Gup { page }
            | TaskSpec::Fault { page }
            | TaskSpec::DioMmap { page } => Some((page, 1)),
            _ => None,
        }
    }
}

impl fmt::Display for TaskSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TaskSpec::Write { first, n } => write!(f, "write {first}+{n}"),
            TaskSpec::Mmap { page } => write!(f, "mmap {page}"),
            TaskSpec::Gup { page } => write!(f, "gup {page}"),
            TaskSpec::Fault { page } => write!(f, "fault {page}"),
            TaskSpec::Punch { first, n } => write!(f, "punch {first}+{n}"),
            TaskSpec::Open {
                trunc,
                keep_cache,
                direct,
            } => write!(
                f,
                "open{}{}{}",
                if trunc { " trunc" } else { "" },
                if keep_cache { " keep" } else { "" },
                if direct { " direct" } else { "" }
            ),
            TaskSpec::Writeback { all } => write!(f, "wb {}", if all { "all" } else { "none" }),
            TaskSpec::Truncate { size } => write!(f, "truncate {size}"),
            TaskSpec::Fsync => write!(f, "fsync"),
            TaskSpec::Close => write!(f, "close"),
            TaskSpec::CloseRelease => write!(f, "close release"),
            TaskSpec::DioWrite { first, n } => write!(f, "dio-write {first}+{n}"),
            TaskSpec::DioRead { first, n } => write!(f, "dio-read {first}+{n}"),
            TaskSpec::OdirectWrite { first, n } => write!(f, "odirect-write {first}+{n}"),
            TaskSpec::OdirectRead { first, n } => write!(f, "odirect-read {first}+{n}"),
            TaskSpec::Readahead { first, n } => write!(f, "readahead {first}+{n}"),
            TaskSpec::DioMmap { page } => write!(f, "dio-mmap {page}"),
            TaskSpec::Stat => write!(f, "stat"),
            TaskSpec::RemoteTruncate { size } => write!(f, "remote-truncate {size}"),
        }
    }
}

/// A complete configuration of the FUSE model.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Config {
    pub kernel: Kernel,
    pub variant: Variant,
    /// Pages modelled (1..=4).
    pub pages: u8,
    /// File size in pages at the start (server size == i_size).
    pub init_size: u8,
    /// Bitmask of pages that start in the page cache, uptodate and clean.
    pub cached: u8,
    /// Bitmask of pages that start dirty (data written before the
    /// workload began; implies cached).
    pub dirty: u8,
    /// FUSE daemon worker threads (1 = FIFO server, 2 or 3 = any order).
    pub daemon_threads: u8,
    /// fc->direct_io_allow_mmap (FUSE_DIRECT_IO_ALLOW_MMAP).
    pub direct_io_allow_mmap: bool,
    /// The server replies FOPEN_PARALLEL_DIRECT_WRITES to the
    /// FOPEN_DIRECT_IO opens. Whether fuse_dio_lock then takes i_rwsem
    /// shared follows from the io-mode (State::iocachectr,
    /// FUSE_I_CACHE_IO_MODE: no caching open) and EOF, step by step.
    #[serde(default)]
    pub parallel_dio: bool,
    /// FUSE_ATOMIC_O_TRUNC: OPEN carries O_TRUNC (no SETATTR), with
    /// FUSE_NOWRITE held around it.
    #[serde(default)]
    pub atomic_o_trunc: bool,
    /// FUSE_WRITEBACK_CACHE negotiated (default). Without it, write(2) is
    /// write-through (fuse_perform_write: a synchronous WRITE per call).
    #[serde(default = "yes")]
    pub writeback_cache: bool,
    /// Blocks per folio (state C only: 2, so a folio's dirty blocks can be
    /// split across WRITEs). Model "pages" are then blocks.
    #[serde(default = "one_block")]
    pub folio_blocks: u8,
    /// fc->max_pages: most folios in one writeback WRITE.
    pub max_pages: u8,
    pub tasks: Vec<TaskSpec>,
    /// Legacy (cgroup v1) memcg reclaim reaches the daemon: a worker
    /// handling a request may enter direct reclaim (reclaim.rs).
    #[serde(default)]
    pub memcg_v1: bool,
    /// T, T2: pages per folio once large folios are enabled (whole-folio
    /// dirty and uptodate, one PG_writeback per folio), before the order
    /// cap (lfolio.rs). 1 = order 0, as in every released kernel.
    #[serde(default = "one_block")]
    pub folio_pages: u8,
    /// C: blocks per page (sub-page blocks, fuseblk); model "pages" are
    /// then blocks and `folio_blocks` is a multiple of it (wbslots.rs).
    #[serde(default = "one_block")]
    pub blocks_per_page: u8,
    /// fc->max_read and fc->max_write in pages (None: larger than any
    /// request of the configuration).
    #[serde(default)]
    pub max_read: Option<u8>,
    #[serde(default)]
    pub max_write: Option<u8>,
    /// Requests the server may fail (bit per `ERROR_OPS` entry): the
    /// daemon may answer such a request with -EIO instead of applying it.
    #[serde(default)]
    pub errors: u16,
    /// Direct requests (WRITE, READ: bits as in `ERROR_OPS`) the server may
    /// answer short: one page less than asked (`short = [...]`).
    #[serde(default)]
    pub short: u16,
}

/// Requests a check may let the server fail (`errors = [...]`), in bit
/// order. OPEN and FALLOCATE errors are not modelled.
pub const ERROR_OPS: &[&str] = &["WRITE", "READ", "SETATTR", "FSYNC", "FLUSH"];

/// Parses a check's `short` list (WRITE, READ) into `ERROR_OPS` bits.
pub fn parse_short(names: &[String]) -> Result<u16, String> {
    for n in names {
        if n != "WRITE" && n != "READ" {
            return Err(format!(
                "short: '{n}' cannot be answered short (known: WRITE, READ)"
            ));
        }
    }
    parse_errors(names)
}

/// Parses a check's `errors` list into the bitmask of `ERROR_OPS`.
pub fn parse_errors(names: &[String]) -> Result<u16, String> {
    let mut m = 0u16;
    for n in names {
        match ERROR_OPS.iter().position(|o| o == n) {
            Some(i) => m |= 1 << i,
            None => {
                return Err(format!(
                    "errors: unknown request '{n}' (known: {})",
                    ERROR_OPS.join(", ")
                ))
            }
        }
    }
    Ok(m)
}

fn one_block() -> u8 {
    1
}

fn yes() -> bool {
    true
}

impl Config {
    /// Does anything read fi->attr_version (a GETATTR, or a page-cache
    /// READ that may be short on a write-through mount)? Without a reader
    /// the model does not track attr_version, the size history (a4) or a
    /// write-through write's FUSE_I_SIZE_UNSTABLE: nothing could tell.
    pub fn attr_readers(&self) -> bool {
        self.tasks.iter().any(|t| match t {
            TaskSpec::Stat | TaskSpec::RemoteTruncate { .. } => true,
            TaskSpec::Mmap { .. }
            | TaskSpec::Gup { .. }
            | TaskSpec::Fault { .. }
            | TaskSpec::DioMmap { .. } => !self.writeback_cache,
            _ => false,
        })
    }

    /// Caching opens held for the whole workload (fi->iocachectr at the
    /// start): one if any task uses it.
    pub fn cached_opens(&self) -> u8 {
        self.tasks.iter().any(|t| t.uses_cached_open()) as u8
    }

    pub fn validate(&self) -> Result<(), String> {
        self.validate_geometry()?;
        if !self.writeback_cache && self.variant.temp_pages {
            return Err("write-through (writeback_cache = false) is modelled for T, T2, C".into());
        }
        let fb = self.folio_blocks;
        if fb == 0 || fb as usize > MAX_PAGES || (fb > 1 && self.kernel != Kernel::C) {
            return Err("folio_blocks is 1, or 2..=4 with kernel C".into());
        }
        if fb > 1 {
            if !self.pages.is_multiple_of(fb) || !self.init_size.is_multiple_of(fb) {
                return Err(format!(
                    "with folio_blocks = {fb}, pages and init_size are whole folios"
                ));
            }
            for p in 0..self.pages {
                let h = p - p % fb;
                if (self.cached >> p) & 1 != (self.cached >> h) & 1 {
                    return Err(format!(
                        "with folio_blocks = {fb}, cached covers whole folios"
                    ));
                }
            }
            for t in &self.tasks {
                let bad = match *t {
                    TaskSpec::Truncate { size } => size % fb != 0,
                    TaskSpec::Punch { first, n } => first % fb != 0 || n % fb != 0,
                    _ => false,
                };
                if bad {
                    return Err(format!(
                        "task '{t}': with folio_blocks = {fb}, sizes are whole folios"
                    ));
                }
            }
        }
        let p = self.pages;
        if p == 0 || p as usize > MAX_PAGES {
            return Err(format!("pages must be 1..={MAX_PAGES}, got {p}"));
        }
        if self.init_size > p {
            return Err(format!("init_size {} exceeds pages {p}", self.init_size));
        }
        let all = ((1u16 << p) - 1) as u8;
        if self.cached & !all != 0 || self.dirty & !all != 0 {
            return Err("cached/dirty name a page beyond `pages`".into());
        }
        if self.dirty & !self.cached != 0 {
            return Err("a dirty page must also be cached".into());
        }
        // cached pages must lie inside the file
        let inside = if self.init_size == 0 {
            0
        } else {
            ((1u16 << self.init_size) - 1) as u8
        };
        if self.cached & !inside != 0 {
            return Err("a cached page lies beyond init_size".into());
        }
        if self.daemon_threads == 0 || self.daemon_threads as usize > MAX_WORKERS {
            return Err(format!("daemon_threads must be 1..={MAX_WORKERS}"));
        }
        if self.max_pages == 0 {
            return Err("max_pages must be at least 1".into());
        }
        if self.errors != 0 && self.variant.temp_pages {
            return Err("error replies are modelled for T, T2, C".into());
        }
        if self.tasks.is_empty() || self.tasks.len() > MAX_TASKS {
            return Err(format!("a workload has 1..={MAX_TASKS} tasks"));
        }
        for t in &self.tasks {
            if let Some((first, n)) = t.range() {
                if first as usize + n as usize > p as usize {
                    return Err(format!("task '{t}' goes beyond page {}", p - 1));
                }
            }
            if let TaskSpec::Truncate { size } = t {
                if *size > p {
                    return Err(format!("task '{t}' exceeds pages {p}"));
                }
            }
            if let TaskSpec::RemoteTruncate { size } = *t {
                if self.writeback_cache {
                    return Err(format!(
                        "task '{t}': server-side size changes are modelled on write-through mounts (writeback_cache trusts the local i_size)"
                    ));
                }
                if size > p {
                    return Err(format!("task '{t}' exceeds pages {p}"));
                }
            }
            if let TaskSpec::DioMmap { .. } = t {
                // fuse_file_mmap: MAP_SHARED of a FOPEN_DIRECT_IO open
                if !self.direct_io_allow_mmap {
                    return Err(format!(
                        "task '{t}': MAP_SHARED of a FOPEN_DIRECT_IO open fails with ENODEV without direct_io_allow_mmap"
                    ));
                }
                if self.variant.temp_pages {
                    return Err(format!(
                        "task '{t}': the io-mode of a direct mmap is modelled for T, T2, C"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The FUSE model's keys of a catalogue entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigRaw {
    kernel: String,
    #[serde(default)]
    variant: Vec<String>,
    pages: u8,
    init_size: u8,
    #[serde(default)]
    cached: Vec<u8>,
    #[serde(default)]
    dirty: Vec<u8>,
    #[serde(default = "one")]
    daemon_threads: u8,
    #[serde(default)]
    direct_io_allow_mmap: bool,
    #[serde(default)]
    parallel_dio: bool,
    #[serde(default)]
    atomic_o_trunc: bool,
    #[serde(default = "one_block")]
    folio_blocks: u8,
    #[serde(default = "yes")]
    writeback_cache: bool,
    max_pages: Option<u8>,
    tasks: Vec<String>,
    #[serde(default)]
    memcg_v1: bool,
    #[serde(default = "one_block")]
    folio_pages: u8,
    #[serde(default = "one_block")]
    blocks_per_page: u8,
    max_read: Option<u8>,
    max_write: Option<u8>,
    #[serde(default)]
    errors: Vec<String>,
    #[serde(default)]
    short: Vec<String>,
}

fn one() -> u8 {
    1
}

fn mask(pages: &[u8], what: &str) -> Result<u8, String> {
    let mut m = 0u8;
    for &p in pages {
        if p >= 8 {
            return Err(format!("{what}: page {p} out of range"));
        }
        m |= 1 << p;
    }
    Ok(m)
}

impl Config {
    /// Builds a configuration from the FUSE keys of a catalogue entry.
    pub fn from_table(table: &toml::Table) -> Result<Config, String> {
        let raw: ConfigRaw = toml::Value::Table(table.clone())
            .try_into()
            .map_err(|e: toml::de::Error| e.message().to_string())?;
        let kernel = Kernel::parse(&raw.kernel)
            .ok_or_else(|| format!("unknown kernel state '{}' (known: L, T, T2, C)", raw.kernel))?;
        let mut variant = Variant::base(kernel);
        for f in &raw.variant {
            variant.set(f)?;
        }
        let mut tasks = Vec::new();
        for t in &raw.tasks {
            tasks.push(TaskSpec::parse(t)?);
        }
        let config = Config {
            kernel,
            variant,
            pages: raw.pages,
            init_size: raw.init_size,
            cached: mask(&raw.cached, "cached")?,
            dirty: mask(&raw.dirty, "dirty")?,
            daemon_threads: raw.daemon_threads,
            direct_io_allow_mmap: raw.direct_io_allow_mmap,
            parallel_dio: raw.parallel_dio,
            atomic_o_trunc: raw.atomic_o_trunc,
            folio_blocks: raw.folio_blocks,
            writeback_cache: raw.writeback_cache,
            max_pages: raw.max_pages.unwrap_or(raw.pages),
            tasks,
            memcg_v1: raw.memcg_v1,
            folio_pages: raw.folio_pages,
            blocks_per_page: raw.blocks_per_page,
            max_read: raw.max_read,
            max_write: raw.max_write,
            errors: parse_errors(&raw.errors)?,
            short: parse_short(&raw.short)?,
        };
        config.validate()?;
        Ok(config)
    }
}
