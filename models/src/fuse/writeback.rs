//! Writeback: fuse_writepages (write_cache_pages / writeback_iter →
//! fuse_writepages_fill → fuse_writepages_send), fi->queued_writes and
//! fuse_flush_writepages / fuse_send_writepage, fuse_writepage_finish, and
//! filemap_fdatawait_range (kernel-sources.md §3).

use super::model::{pages_mask, FuseModel};
use super::state::*;
use super::step::Step;

impl FuseModel {
    // ------------------------------------------------------------------
    // Shared kernel routines (run inside the caller's atomic step)

    /// fuse_writepage_finish: folio_end_writeback on every folio of the
    /// wpa; wakes page_waitq (waiters are re-evaluated every state).
    pub(super) fn writepage_finish(&self, s: &mut State, first: u8, n: u8) {
        if self.cfg.variant.temp_pages {
            return; // L: only stats; PG_writeback ended at send time
        }
        // iomap_finish_folio_write per folio of the request: PG_writeback
        // ends when the folio's last pending range completes
        // (T: fuse_writepage_finish ends writeback on each folio at once)
        if self.cfg.folio_blocks <= 1 {
            for p in pages_mask(first, n) {
                s.pages[p].clear(PG_WRITEBACK | PG_RECLAIM | PG_READAHEAD);
            }
            return;
        }
        let mut last_head = usize::MAX;
        for p in pages_mask(first, n) {
            let h = self.folio(p).start;
            if h == last_head {
                continue;
            }
            last_head = h;
            s.pages[h].pend = s.pages[h].pend.saturating_sub(1);
            if s.pages[h].pend == 0 || self.cfg.variant.mut_c_end_early {
                self.folio_clear(s, h, PG_WRITEBACK | PG_RECLAIM | PG_READAHEAD);
            }
        }
    }

    /// fuse_send_writepage(fm, wpa, size): crop at `crop`, drop if wholly
    /// beyond it, otherwise queue the WRITE on /dev/fuse.
    pub(super) fn send_writepage(&self, s: &mut State, w: Wpa, crop: u8) {
        // ghost: data of folios beyond the crop is discarded unsent
        for p in crop.max(w.first)..w.first + w.n {
            s.drops[p as usize] = s.drops[p as usize].saturating_add(1);
        }
        s.writectr += 1;
        let real_crop = crop;
        // the mutant crops at the page holding i_size, not at its byte
        let crop = if self.cfg.variant.mut_crop_by_page {
            match crop {
                0 => 0,
                c => self.lay.page_end[c as usize - 1],
            }
        } else {
            crop
        };
        // data_size: the descriptors' lengths (lfolio.rs)
        let size = self.wpa_data_size(w);
        let sent = if w.first + size <= crop {
            size
        } else {
            crop.saturating_sub(w.first)
        };
        self.check_writeback_request(s, w, real_crop, sent);
        if w.first < crop && self.refuse_writepage(s, w) {
            return;
        }
        if w.first + size <= crop {
            // fuse_simple_background with args->force: never waits in
            // fuse_get_req, may wait on fc->bg_queue
            self.queue_background(
                s,
                Req::CacheWrite {
                    first: w.first,
                    n: w.n,
                    sent: size,
                },
            );
            if self.cfg.variant.temp_pages {
                s.l_end[w.first as usize] = w.first + size;
            }
        } else if w.first < crop {
            self.queue_background(
                s,
                Req::CacheWrite {
                    first: w.first,
                    n: w.n,
                    sent: crop - w.first,
                },
            );
            if self.cfg.variant.temp_pages {
                s.l_end[w.first as usize] = crop;
            }
            s.ev = Event::Crop;
        } else {
            // out_free: "Got truncated off completely"
            self.writepage_out_free(s, w, true);
            s.ev = Event::Drop;
        }
    }

    /// fuse_send_writepage's out_free: writectr--, fuse_writepage_finish;
    /// L: rb_erase, and the secondaries are freed with it (their data is
    /// discarded: beyond EOF when `beyond_eof`, else lost).
    pub(super) fn writepage_out_free(&self, s: &mut State, w: Wpa, beyond_eof: bool) {
        s.writectr -= 1;
        self.writepage_finish(s, w.first, w.n);
        if self.cfg.variant.temp_pages {
            // L: rb_erase; the aux list is private now and freed
            let mut i = 0;
            while i < s.aux.len() {
                if s.aux[i].prim == w.first {
                    let a = s.aux.remove(i);
                    let q = a.page as usize;
                    if beyond_eof {
                        s.drops[q] = s.drops[q].saturating_add(1);
                    } else {
                        s.lost |= 1 << q;
                    }
                } else {
                    i += 1;
                }
            }
        }
    }

    /// fuse_flush_writepages: send queued WRITEs while writectr >= 0,
    /// cropped to i_size sampled once.
    pub(super) fn flush_writepages(&self, s: &mut State) {
        let crop = s.i_size;
        let v = &self.cfg.variant;
        while (s.writectr >= 0 || v.mut_flush_ignores_nowrite || v.p_no_writectr)
            && !s.queued.is_empty()
        {
            let w = s.queued.remove(0);
            self.send_writepage(s, w, crop);
        }
    }

    /// fuse_writepages_send / fuse_writepage_locked's tail: queue the wpa
    /// on fi->queued_writes and flush.
    pub(super) fn queue_writepage(&self, s: &mut State, w: Wpa) {
        s.queued.push(w);
        self.flush_writepages(s);
        if self.cfg.variant.temp_pages {
            // L: fuse_writepages_send / fuse_writepage_locked end
            // PG_writeback on the page-cache folios once the temp copies
            // are queued
            for p in pages_mask(w.first, w.n) {
                s.pages[p].clear(PG_WRITEBACK | PG_RECLAIM | PG_READAHEAD);
            }
        }
    }

    pub(super) fn op_fdata_wait(&self, s: &mut State, t: usize, first: u8, n: u8) -> Option<Step> {
        let task = s.tasks[t];
        Some({
            let p = task.cur as usize;
            if s.pages[p].wb() {
                return None;
            }
            match (p + 1..(first + n) as usize).find(|&q| s.pages[q].wb()) {
                Some(q) => s.tasks[t].cur = q as u8,
                None => self.advance(s, t),
            }
            Step::FdataWait
        })
    }

    /// One step of fuse_writepages (write_cache_pages / writeback_iter →
    /// fuse_writepages_fill → fuse_writepages_send).
    pub(super) fn exec_writepages(
        &self,
        s: &mut State,
        t: usize,
        first: u8,
        n: u8,
        all: bool,
    ) -> Option<Step> {
        let task = s.tasks[t];
        let end = (first + n) as usize;
        match task.ph {
            0 => {
                if !all && self.congested(s) {
                    // fuse_writepages: "if (wbc->sync_mode == WB_SYNC_NONE
                    // && fc->num_background >= fc->congestion_threshold)
                    // return 0"
                    s.ev = Event::WbCongested;
                    self.advance(s, t);
                    return Some(Step::WbCongested);
                }
                // write_cache_pages begins; WB_SYNC_ALL tags the dirty
                // folios TOWRITE (tag_pages_for_writeback)
                if all {
                    for p in first as usize..end {
                        if s.pages[p].present() && self.folio_dirty(s, p) {
                            s.pages[p].set(PG_TOWRITE);
                        }
                    }
                }
                s.tasks[t].ph = 1;
                s.tasks[t].cur = first;
                s.tasks[t].bn = 0;
                Some(Step::WbBegin)
            }
            1 => {
                let tag = if all { PG_TOWRITE } else { PG_DIRTY };
                let cand = (task.cur as usize..end).find(|&p| {
                    let pg = &s.pages[p];
                    pg.present() && pg.has(tag)
                });
                let p = match cand {
                    None => {
                        // end of the walk: fuse_writepages_send the last batch
                        if task.bn > 0 {
                            self.queue_writepage(
                                s,
                                Wpa {
                                    first: task.bfirst,
                                    n: task.bn,
                                },
                            );
                        }
                        self.wb_reset(s, t);
                        self.advance(s, t);
                        let step = if task.bn > 0 {
                            Step::WbSend
                        } else {
                            Step::WbDone // nothing batched: no send
                        };
                        return Some(step);
                    }
                    Some(p) => self.folio(p).start,
                };
                let fend = self.folio(p).end as u8;
                if s.pages[p].locked() {
                    return None; // folio_lock sleeps
                }
                // folio_prepare_writeback
                let pg = s.pages[p];
                let dirty = self.folio_dirty(s, p);
                let honour_wb = !self.cfg.variant.mut_wb_ignores_writeback;
                if !dirty || (pg.wb() && !all && honour_wb) {
                    // a clean folio keeps its TOWRITE tag; the walk moves on
                    s.tasks[t].cur = fend;
                    return Some(Step::WbSkip);
                }
                if pg.wb() && honour_wb {
                    // WB_SYNC_ALL: folio_wait_writeback with the folio locked
                    self.folio_set(s, p, PG_LOCKED);
                    s.tasks[t].cur = p as u8;
                    s.tasks[t].ph = 2;
                    return Some(Step::WbFolio);
                }
                self.fill(s, t, p);
                Some(Step::WbFolio)
            }
            _ => {
                let p = task.cur as usize;
                if s.pages[p].wb() {
                    return None;
                }
                s.tasks[t].ph = 1;
                if !self.folio_dirty(s, p) {
                    self.folio_clear(s, p, PG_LOCKED);
                    s.tasks[t].cur = self.folio(p).end as u8;
                } else {
                    self.fill(s, t, p);
                }
                Some(Step::WbWaitFolio)
            }
        }
    }

    /// folio_clear_dirty_for_io + fuse_writepages_fill(folio) + unlock.
    pub(super) fn fill(&self, s: &mut State, t: usize, p: usize) {
        if self.cfg.variant.temp_pages {
            return self.fill_l(s, t, p);
        }
        let f = self.folio(p);
        if self.cfg.variant.iomap_wb_eof && f.start as u8 >= s.i_size {
            // folio_clear_dirty_for_io, then iomap_writeback_folio →
            // iomap_writeback_handle_eof: the folio lies wholly beyond
            // i_size (a truncation in progress will remove it): unlock, no
            // writeback, no WRITE; its dirty data is discarded
            for q in f.clone() {
                if s.pages[q].dirty() {
                    s.drops[q] = s.drops[q].saturating_add(1);
                }
            }
            self.folio_clear(s, p, PG_DIRTY | PG_LOCKED);
            s.tasks[t].cur = f.end as u8;
            s.ev = Event::WbEofSkip;
            return;
        }
        if self.cfg.variant.iomap_wb_eof && f.end as u8 > s.i_size {
            // a folio across i_size: folio_zero_segment zeroes the rest in
            // the page cache, and the range ends at i_size (end_pos): the
            // WRITE's crop at i_size below sends the same units. The
            // folio's PG_writeback still ends with that WRITE, so the
            // range stays the folio's here. iomap_writeback_handle_eof:
            // "folio_zero_segment(folio, poff, folio_size(folio))" with
            // poff = offset_in_folio(folio, isize). With units below a
            // page this drops what a store through a mapping put beyond
            // EOF (mmap(2): "modifications to that region are not written
            // out to the file"); the mutant keeps it in the page cache.
            for q in s.i_size as usize..f.end {
                let z = self.last_zeros(s.hist[q]);
                if self.cfg.variant.mut_no_wb_eof_zero {
                    continue;
                }
                if s.pages[q].ver != z && self.eof_stores() {
                    s.ev = Event::WbEofZeroed;
                }
                s.pages[q].ver = z;
            }
        }
        // folio_clear_dirty_for_io; then one writeback range per run of
        // dirty blocks (one run: the folio, in T; C: iomap's dirty ranges,
        // fuse_iomap_writeback_range each)
        let runs = self.dirty_runs(s, p);
        self.folio_clear(s, p, PG_DIRTY);
        // folio_start_writeback clears PAGECACHE_TAG_TOWRITE
        self.folio_set(s, p, PG_WRITEBACK);
        self.folio_clear(s, p, PG_TOWRITE | PG_LOCKED);
        let h = self.folio(p).start;
        for (rs, rl) in runs {
            // fuse_writepage_need_send / fuse_folios_need_send (wbslots.rs)
            if self.wb_need_send(s, t, rs, rl) {
                let task = s.tasks[t];
                self.queue_writepage(
                    s,
                    Wpa {
                        first: task.bfirst,
                        n: task.bn,
                    },
                );
                self.wb_reset(s, t);
            }
            self.wb_append(s, t);
            let task = &mut s.tasks[t];
            if task.bn == 0 {
                task.bfirst = rs;
            }
            task.bn += rl;
            if self.cfg.folio_blocks > 1 {
                s.pages[h].pend += 1;
            }
        }
        s.tasks[t].cur = self.folio(p).end as u8;
    }
}
