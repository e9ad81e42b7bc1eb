//! The kernel states of fs/fuse and the variant switches on top of them
//! (kernel mechanisms and fixes, review proposals, mutants): which code a
//! configuration runs. A kernel state sets a base `Variant`; a check adds
//! flags by name.

use serde::{Deserialize, Serialize};

/// Kernel states of fs/fuse (kernel-sources.md §0, §0.1).
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
    /// The mechanics a catalogue label runs: its code tree's
    /// (`Tree::parse`; T17 runs T's, T19 runs T2's). Labels only: which
    /// releases a label stands for is data (checks/facts/kernels.toml);
    /// "6.18" would be T17 before 6.18.3 and T2 after.
    pub fn parse(s: &str) -> Option<Kernel> {
        crate::fuse::step::Tree::parse(s).map(|t| t.kernel())
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
    /// fuse_direct_io without step (C) for a FOPEN_DIRECT_IO write: no
    /// invalidate_inode_pages2_range (so no fuse_launder_folio) of the
    /// range before the WRITE, as before 80e4f25262f9 (6.6-rc1; 6.1.y
    /// never took it). Reads had no such step before or after.
    #[serde(default)]
    pub dio_write_no_invalidate: bool,
    /// fuse_flush takes inode_lock and calls fuse_sync_writes (≤ 6.15; the
    /// v8 review removed it).
    pub flush_sync_writes: bool,

    // ---- review proposals (seed 000; kernel-sources.md §11)
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
    /// State L: fuse_readahead and fuse_do_readfolio do not wait on the
    /// rb-tree before their READ (kills b3 in L).
    #[serde(default)]
    pub mut_l_read_no_wait: bool,
    /// generic_file_direct_write without kiocb_invalidate_post_direct_write
    /// (kills b3: a page cached by a racing readahead keeps the old data).
    #[serde(default)]
    pub mut_odirect_no_post_invalidate: bool,

    // ---- issue 11: reclaim flag, large folios, writeback slots
    /// 0c4f8ed498ce (6.16, seed 000 patches 1-2): FUSE sets
    /// AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM on writeback_cache mounts and
    /// shrink_folio_list never waits on such a folio's writeback. Off:
    /// 0c58a97f919c without patches 1-2. (reclaim.rs)
    pub reclaim_flag: bool,
    /// c3880a7b10e4 (2026): fuse_folios_need_send sends the batch once
    /// its descriptors fill fc->max_pages slots. (wbslots.rs)
    pub slot_check: bool,
    /// iomap writeback (6.17+, ef7e7cbb323f): iomap_writeback_folio →
    /// iomap_writeback_handle_eof skips a dirty folio wholly beyond
    /// i_size (dirty cleared by writeback_iter, no PG_writeback, no
    /// WRITE, folio unlocked), and cuts a folio across i_size at i_size,
    /// zeroing the rest in the page cache. Off (6.16): the folio gets
    /// PG_writeback and a WRITE that fuse_send_writepage drops or crops
    /// when it is sent. On for T2 and C, and for the T17 label.
    #[serde(default)]
    pub iomap_wb_eof: bool,
    /// page_cache_async_ra rounds the next window's end down to a
    /// multiple of 1 << min(ra->order, ffs(max_pages) - 1) pages after
    /// `ra->order += 2` (6.17's readahead series, "mm/readahead:
    /// terminate async readahead on natural boundary", posted 9 Jun
    /// 2025 after 6.16-rc1; read in the 6.17 and 6.18 trees). Off (6.16
    /// and before), the window keeps its ramped size (read.rs
    /// `async_ra`). On for T2 and C, and for the T17 label.
    #[serde(default)]
    pub ra_round_end: bool,
    /// 6.1 - 6.10's ondemand_readahead (mm/readahead.c before Jan
    /// Kara's readahead series, posted 25 Jun 2024, in 6.11; read in the
    /// 6.1.166 tree): a miss (page_cache_sync_ra) at the expected index
    /// (ra->start + ra->size - ra->async_size) or at ra->start +
    /// ra->size pushes the window forward as a PG_readahead hit does,
    /// before the oversized and prev-miss checks, and a marked folio at
    /// ra->start + ra->size counts as expected too; a window that starts
    /// at the index with size == async_size merges the next one
    /// ("Will this read hit the readahead marker made by itself?");
    /// page_cache_next_miss returns the last index it looked at when it
    /// finds no hole. Off: 6.11's page_cache_sync_ra and
    /// page_cache_async_ra (read.rs). On for the 6.1 release
    /// (checks/facts/kernels.toml).
    #[serde(default)]
    pub ra_ondemand: bool,
    /// filemap_read sets ra->prev_pos after each folio it copies
    /// (`ra->prev_pos = iocb->ki_pos` in the copy loop, 6.1 - 6.5; read
    /// in the 6.1.166 tree), so a miss later in the same read is a
    /// sequential miss (`index - prev_index <= 1UL`: the initial
    /// window). Off: once, when the read ends (`ra->prev_pos =
    /// last_pos`, "mm/filemap.c: fix update prev_pos after one read
    /// request done", 6.6). On for the 6.1 release.
    #[serde(default)]
    pub ra_prev_pos_each_copy: bool,
    /// read_pages lowers the file's ra->size and ra->async_size by each
    /// folio a ->readahead left ("The sizes in ->ra may be used to size
    /// the next readahead"): a congested fuse_readahead's skip shrinks
    /// the window the next readahead grows from. Removed by 7a1eb89f7918
    /// ("readahead: don't shorten readahead window in read_pages()",
    /// Jan Kara, posted 4 Dec 2024, merged for 6.14 or 6.15: the release
    /// was not read); present in the 6.1.166, 6.12.19 and 6.13.7 trees,
    /// absent from L's 6.15 files and from 6.17 and 6.18 (read
    /// 2026-12-05). On for the 6.1 and 6.12 releases.
    #[serde(default)]
    pub ra_skip_shrinks: bool,
    /// fuse_readahead takes each READ's pages with __readahead_batch,
    /// whose _batch_count readahead_count(rac) still counts until the
    /// next batch: the congestion check of a batch's second READ counts
    /// the whole previous READ (6.1.166 and 6.12.19 trees). Off: 6.13's
    /// folio conversion takes them with __readahead_folio, which drops a
    /// folio at the next call, so the check counts the previous READ's
    /// last folio (6.13.7, L's 6.15 files, 6.17, 6.18; read
    /// 2026-12-05). On for the 6.1 and 6.12 releases.
    #[serde(default)]
    pub ra_count_batch: bool,
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
    /// fuse_file_cached_io_open does not wait on direct_io_waitq for the
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

    // ---- issue 18: sizes below a page (subpage.rs)
    /// truncate_inode_partial_folio does not zero the folio's tail beyond
    /// the new EOF (kills b3 / a3 at unit granularity).
    #[serde(default)]
    pub mut_no_tail_zero: bool,
    /// fuse_write_begin / fuse_write_end do not zero the parts of a new
    /// folio at or beyond EOF that the write does not cover.
    #[serde(default)]
    pub mut_no_eof_zero: bool,
    /// fuse_send_writepage crops a WRITE at the page holding i_size, not
    /// at i_size's byte (kills lf-crop).
    #[serde(default)]
    pub mut_crop_by_page: bool,
    /// fuse_write_begin never reads a partly written folio below EOF: it
    /// zeroes the rest as if the folio started beyond EOF (kills a3).
    #[serde(default)]
    pub mut_wb_no_read: bool,
    /// fuse_fill_write_pages unlocks a write-through folio it wrote in
    /// part and that is not uptodate before the WRITE, as if it were
    /// uptodate (units below a page; kills b3: a reader reads the server's
    /// old bytes into the folio before the WRITE lands).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mut_wt_unlock_partial: bool,
    /// iomap_writeback_handle_eof cuts a folio across i_size at i_size but
    /// does not zero the rest in the page cache (kills a6 on T2: a store
    /// beyond EOF survives writeback and an extending write exposes it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mut_no_wb_eof_zero: bool,

    // ---- issue 19: fixes wbspec proposes for its findings (findings.md)
    /// F-otrunc fix (a): fuse_do_setattr with ATTR_OPEN and
    /// fc->atomic_o_trunc returns at once, without i_size_write(0) and
    /// truncate_pagecache(0): fuse_open already did both under inode_lock
    /// and FUSE_NOWRITE, and the inode lock was dropped in between, so a
    /// write that landed since is kept.
    #[serde(default)]
    pub fix_otrunc_keep_size: bool,
    /// F-otrunc fix (b): fuse_do_setattr with ATTR_OPEN sends
    /// SETATTR(size=0) under FUSE_NOWRITE even with fc->atomic_o_trunc,
    /// as without it: one more round trip per O_TRUNC open.
    #[serde(default)]
    pub fix_otrunc_setattr: bool,
    /// F-pdio-lock fix: fuse_direct_io step (B) for a write waits with
    /// filemap_fdatawait_range_keep_errors on its own range (its result
    /// ignored: AS_EIO stays for fsync and close) instead of calling
    /// fuse_sync_writes, so writers under the shared i_rwsem never nest
    /// FUSE_NOWRITE. Sound only where PG_writeback lasts until the WRITE
    /// is answered (0c58a97f919c, 6.16+): refused with temp pages.
    #[serde(default)]
    pub fix_pdio_wait_range: bool,
    /// F-reclaim-nowbc fix: fuse_init_file_inode sets
    /// AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM on every mount, not only with
    /// fc->writeback_cache (Joanne Koong's Oct 2025 proposal).
    #[serde(default)]
    pub fix_reclaim_flag_always: bool,
    // ---- issue 22: the transport (transport.rs)
    /// fuse_abort_conn does not push fc->bg_queue to the pending list
    /// (no `max_background = UINT_MAX; flush_bg_queue`): background
    /// requests held back there are never ended (kills e).
    /// (Written to traces only when on, so older traces stay as they were.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mut_abort_keeps_bg_queue: bool,
    /// fuse_request_queue_background does not check fc->connected: a
    /// writeback WRITE is queued after the abort (kills x-abort-write).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mut_abort_queues: bool,
    /// request_wait_answer takes back a request on a fatal signal even
    /// after the daemon read it (no FR_PENDING test) (kills x-intr).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mut_intr_bailout_sent: bool,
    /// fuse_direct_IO without io->blocking for an extending write: it
    /// returns -EIOCBQUEUED too and nothing updates i_size (kills a3;
    /// aio.rs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mut_aio_extend_async: bool,
    /// Cheng Ding's "fuse: invalidate page cache after sync and async
    /// direct writes" (v3, linux-fsdevel, 9 Mar 2026; xfstests
    /// generic/451): fuse_aio_complete of a successful non-blocking
    /// write queues fuse_aio_invalidate_worker (invalidate the range,
    /// then ki_complete), and step (E) moves from fuse_direct_io to
    /// fuse_direct_write_iter, after fuse_direct_IO returns (aio.rs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub p_aio_inval_worker: bool,
    // ---- issue 22: server notifications (notify.rs)
    /// fuse_reverse_inval_inode skips the folios it cannot drop at once
    /// (locked, dirty or under writeback), as invalidate_mapping_pages
    /// (mapping_try_invalidate) does, instead of
    /// invalidate_inode_pages2_range's wait and launder.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mut_inval_skip_busy: bool,
    /// fuse_notify_store without fuse_write_update_attr: a store past
    /// EOF does not extend i_size.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mut_store_no_size: bool,
    // ---- issue 22: FUSE over io_uring (uring.rs)
    /// Joanne Koong's "fuse: fix io-uring background queue dispatch on
    /// request completion" (v2 8 Apr 2026, applied by Miklos Szeredi 11
    /// Jun 2026, stable Jul 2026): fuse_uring_req_end calls
    /// fuse_request_bg_finish (fc->num_background--,
    /// fc->active_background--) before fuse_uring_flush_bg, instead of
    /// fuse_request_end doing it after the flush. Only read with
    /// `uring_queues`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uring_bg_finish_first: bool,
    /// fuse_uring_flush_bg without `|| !queue->active_background`: a
    /// queue gets no request of its own past max_background, and no
    /// other queue's completion flushes it (kills e).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mut_uring_no_queue_slot: bool,
    /// fuse_uring_flush_bg tests its condition once and then moves the
    /// queue's whole background list (kills u1).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mut_uring_flush_whole: bool,
    // ---- issue 22: FUSE_AUTO_INVAL_DATA (autoinval.rs)
    /// fuse_change_attributes_i ignores fuse_get_cache_mask: with
    /// writeback_cache it takes the server's size and mtime and
    /// truncates / invalidates the page cache as on a write-through
    /// mount.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mut_cache_mask_ignored: bool,
}

pub const VARIANT_FLAGS: &[&str] = &[
    "temp_pages",
    "dio_flush_always",
    "dio_invalidate_after_write",
    "dio_write_no_invalidate",
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
    "mut_l_read_no_wait",
    "mut_odirect_no_post_invalidate",
    "reclaim_flag",
    "slot_check",
    "iomap_wb_eof",
    "ra_round_end",
    "ra_ondemand",
    "ra_prev_pos_each_copy",
    "ra_skip_shrinks",
    "ra_count_batch",
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
    "mut_no_tail_zero",
    "mut_no_eof_zero",
    "mut_crop_by_page",
    "mut_wb_no_read",
    "mut_wt_unlock_partial",
    "mut_no_wb_eof_zero",
    "fix_otrunc_keep_size",
    "fix_otrunc_setattr",
    "fix_pdio_wait_range",
    "fix_reclaim_flag_always",
    "mut_abort_keeps_bg_queue",
    "mut_abort_queues",
    "mut_intr_bailout_sent",
    "mut_aio_extend_async",
    "p_aio_inval_worker",
    "mut_inval_skip_busy",
    "mut_store_no_size",
    "uring_bg_finish_first",
    "mut_uring_no_queue_slot",
    "mut_uring_flush_whole",
    "mut_cache_mask_ignored",
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
                iomap_wb_eof: true,
                ra_round_end: true,
                ..Variant::default()
            },
            Kernel::C => Variant {
                dio_flush_always: true,
                dio_invalidate_after_write: true,
                reclaim_flag: true,
                slot_check: true,
                iomap_wb_eof: true,
                ra_round_end: true,
                uring_bg_finish_first: true,
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
            "dio_write_no_invalidate" => &mut self.dio_write_no_invalidate,
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
            "mut_l_read_no_wait" => &mut self.mut_l_read_no_wait,
            "mut_odirect_no_post_invalidate" => &mut self.mut_odirect_no_post_invalidate,
            "reclaim_flag" => &mut self.reclaim_flag,
            "slot_check" => &mut self.slot_check,
            "iomap_wb_eof" => &mut self.iomap_wb_eof,
            "ra_round_end" => &mut self.ra_round_end,
            "ra_ondemand" => &mut self.ra_ondemand,
            "ra_prev_pos_each_copy" => &mut self.ra_prev_pos_each_copy,
            "ra_skip_shrinks" => &mut self.ra_skip_shrinks,
            "ra_count_batch" => &mut self.ra_count_batch,
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
            "mut_no_tail_zero" => &mut self.mut_no_tail_zero,
            "mut_no_eof_zero" => &mut self.mut_no_eof_zero,
            "mut_crop_by_page" => &mut self.mut_crop_by_page,
            "mut_wb_no_read" => &mut self.mut_wb_no_read,
            "mut_wt_unlock_partial" => &mut self.mut_wt_unlock_partial,
            "mut_no_wb_eof_zero" => &mut self.mut_no_wb_eof_zero,
            "fix_otrunc_keep_size" => &mut self.fix_otrunc_keep_size,
            "fix_otrunc_setattr" => &mut self.fix_otrunc_setattr,
            "fix_pdio_wait_range" => &mut self.fix_pdio_wait_range,
            "fix_reclaim_flag_always" => &mut self.fix_reclaim_flag_always,
            "mut_abort_keeps_bg_queue" => &mut self.mut_abort_keeps_bg_queue,
            "mut_abort_queues" => &mut self.mut_abort_queues,
            "mut_intr_bailout_sent" => &mut self.mut_intr_bailout_sent,
            "mut_aio_extend_async" => &mut self.mut_aio_extend_async,
            "p_aio_inval_worker" => &mut self.p_aio_inval_worker,
            "mut_inval_skip_busy" => &mut self.mut_inval_skip_busy,
            "mut_store_no_size" => &mut self.mut_store_no_size,
            "uring_bg_finish_first" => &mut self.uring_bg_finish_first,
            "mut_uring_no_queue_slot" => &mut self.mut_uring_no_queue_slot,
            "mut_uring_flush_whole" => &mut self.mut_uring_flush_whole,
            "mut_cache_mask_ignored" => &mut self.mut_cache_mask_ignored,
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
            ("dio_write_no_invalidate", self.dio_write_no_invalidate),
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
            ("mut_l_read_no_wait", self.mut_l_read_no_wait),
            (
                "mut_odirect_no_post_invalidate",
                self.mut_odirect_no_post_invalidate,
            ),
            ("reclaim_flag", self.reclaim_flag),
            ("slot_check", self.slot_check),
            ("iomap_wb_eof", self.iomap_wb_eof),
            ("ra_round_end", self.ra_round_end),
            ("ra_ondemand", self.ra_ondemand),
            ("ra_prev_pos_each_copy", self.ra_prev_pos_each_copy),
            ("ra_skip_shrinks", self.ra_skip_shrinks),
            ("ra_count_batch", self.ra_count_batch),
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
            ("mut_no_tail_zero", self.mut_no_tail_zero),
            ("mut_no_eof_zero", self.mut_no_eof_zero),
            ("mut_crop_by_page", self.mut_crop_by_page),
            ("mut_wb_no_read", self.mut_wb_no_read),
            ("mut_wt_unlock_partial", self.mut_wt_unlock_partial),
            ("mut_no_wb_eof_zero", self.mut_no_wb_eof_zero),
            ("fix_otrunc_keep_size", self.fix_otrunc_keep_size),
            ("fix_otrunc_setattr", self.fix_otrunc_setattr),
            ("fix_pdio_wait_range", self.fix_pdio_wait_range),
            ("fix_reclaim_flag_always", self.fix_reclaim_flag_always),
            ("mut_abort_keeps_bg_queue", self.mut_abort_keeps_bg_queue),
            ("mut_abort_queues", self.mut_abort_queues),
            ("mut_intr_bailout_sent", self.mut_intr_bailout_sent),
            ("mut_aio_extend_async", self.mut_aio_extend_async),
            ("p_aio_inval_worker", self.p_aio_inval_worker),
            ("mut_inval_skip_busy", self.mut_inval_skip_busy),
            ("mut_store_no_size", self.mut_store_no_size),
            ("uring_bg_finish_first", self.uring_bg_finish_first),
            ("mut_uring_no_queue_slot", self.mut_uring_no_queue_slot),
            ("mut_uring_flush_whole", self.mut_uring_flush_whole),
            ("mut_cache_mask_ignored", self.mut_cache_mask_ignored),
        ];
        for (n, on) in all {
            if on {
                v.push(n);
            }
        }
        v
    }
}
