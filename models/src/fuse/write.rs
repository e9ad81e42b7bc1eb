//! write(2): generic_perform_write with writeback_cache, and the
//! write-through fuse_perform_write without it (kernel-sources.md
//! §3.8, §3.9).

use super::model::FuseModel;
use super::state::*;
use super::step::Step;

impl FuseModel {
    /// The flags a buffered write's dirtying clears: ≤ 6.16's
    /// fuse_write_end calls folio_mark_dirty, which clears PG_reclaim,
    /// the bit of a readahead mark; 6.17's iomap buffered writes
    /// (a4c9ab1d4975, merged with iomap writeback, `iomap_wb_eof`)
    /// dirty through filemap_dirty_folio in __iomap_write_end, which
    /// keeps it.
    pub(super) fn write_dirty_clears(&self) -> u8 {
        if self.cfg.variant.iomap_wb_eof {
            0
        } else {
            PG_READAHEAD
        }
    }

    pub(super) fn op_copy_pages(&self, s: &mut State, t: usize, first: u8, n: u8) -> Option<Step> {
        let task = s.tasks[t];
        let ver = self.ver(t);
        Some({
            let p = (first + task.cur) as usize;
            if self.cfg.variant.temp_pages {
                // L: fuse_write_begin waits on the rb-tree holding the
                // folio lock (fuse_wait_on_page_writeback)
                if task.ph == 0 {
                    if s.pages[p].locked() {
                        return None;
                    }
                    if self.in_tree(s, p).is_some() {
                        s.pages[p].set(PG_LOCKED);
                        if !s.pages[p].present() {
                            s.pages[p].set(PG_PRESENT);
                        }
                        s.tasks[t].ph = 1;
                        return Some(Step::WriteBeginWait);
                    }
                } else if self.in_tree(s, p).is_some() {
                    return None;
                }
                s.tasks[t].ph = 0;
                s.pages[p].clear(PG_LOCKED);
            }
            if self.lf_folio_pages() > 1 {
                // a folio of several pages or units is dirtied whole
                // (lfolio.rs); the write may cover part of it (subpage.rs)
                if s.tasks[t].ph == 0 {
                    Self::check_cached_store(s);
                }
                return self.op_copy_partial(s, t, p, first, n);
            }
            if s.pages[p].locked() {
                return None; // folio_lock sleeps
            }
            Self::check_cached_store(s);
            let pg = &mut s.pages[p];
            // write_begin: __filemap_get_folio(FGP_WRITEBEGIN) creates
            // the folio; a whole-page write needs no READ. No wait on
            // writeback in T (kernel-sources.md §3.8).
            let created = !pg.present();
            pg.set(PG_PRESENT | PG_UPTODATE | PG_DIRTY);
            pg.clear(self.write_dirty_clears());
            pg.ver = ver;
            if created {
                // the folio's other blocks exist, not uptodate
                self.folio_set(s, p, PG_PRESENT);
            }
            s.hist[p] = hist_push(s.hist[p], ver);
            // write_end: extend i_size
            if p as u8 + 1 > s.i_size {
                s.i_size = p as u8 + 1;
            }
            if task.cur + 1 >= n {
                self.advance(s, t);
            } else {
                s.tasks[t].cur += 1;
            }
            Step::CopyPage
        })
    }

    pub(super) fn op_fill_pages(&self, s: &mut State, t: usize, first: u8, n: u8) -> Option<Step> {
        let task = s.tasks[t];
        let ver = self.ver(t);
        Some({
            let p = (first + task.cur) as usize;
            if s.pages[p].locked() {
                return None; // __filemap_get_folio(FGP_WRITEBEGIN)
            }
            // (the whole write's range: a split write fills chunk by chunk)
            let (wfirst, wn) = self.cfg.tasks[t].range().unwrap_or((first, n));
            if task.cur == 0 && first == wfirst && wfirst + wn > s.i_size && self.cfg.attr_readers()
            {
                // fuse_perform_write: an extending write sets
                // FUSE_I_SIZE_UNSTABLE once, before the loop
                s.size_unstable = true;
            }
            Self::check_cached_store(s);
            let created = !s.pages[p].present();
            s.pages[p].set(PG_PRESENT | PG_UPTODATE);
            s.pages[p].ver = ver;
            if created {
                self.folio_set(s, p, PG_PRESENT);
            }
            s.hist[p] = hist_push(s.hist[p], ver);
            if task.cur + 1 >= n {
                self.advance(s, t);
            } else {
                s.tasks[t].cur += 1;
            }
            Step::FillPage
        })
    }

    /// One step of fuse_perform_write's loop with units below a page
    /// (`units_per_page` > 1, T and T2): one folio of the current
    /// fuse_fill_write_pages batch. As read in fs/fuse/file.c at
    /// 1ce120dcefc0 (T2); f3cb8bd908c7 (T) has the same loop but bounds
    /// it by `max_pages << PAGE_SHIFT` bytes, which 6.16-rc5 replaced by
    /// the `max_folios` count (dbee298cb7bb; docs/model.md, "Sizes below
    /// a page"):
    ///
    /// ```text
    /// num = min(iov_iter_count(ii), fc->max_write);
    /// while (num && ap->num_folios < max_folios) {
    ///     folio = __filemap_get_folio(mapping, index, FGP_WRITEBEGIN, ...);
    ///     tmp = copy_folio_from_iter_atomic(folio, folio_offset, bytes, ii);
    ///     /* If we copied full folio, mark it uptodate */
    ///     if (tmp == folio_size(folio))
    ///         folio_mark_uptodate(folio);
    ///     if (folio_test_uptodate(folio)) {
    ///         folio_unlock(folio);
    ///     } else {
    ///         ia->write.folio_locked = true;
    ///         break;
    ///     }
    ///     if (!fc->big_writes || offset != 0)
    ///         break;
    /// }
    /// ```
    ///
    /// `max_folios` is fuse_wr_pages(pos, len, fc->max_pages): the pages
    /// the rest of the write spans, at most max_pages, from pos's page.
    /// There is no READ here (no fuse_write_begin): a folio written in
    /// part that was not uptodate holds the written units and garbage,
    /// stays not uptodate, and stays locked until fuse_send_write_pages
    /// has the WRITE's reply (`RecvKind::ThroughBatch`), so a reader
    /// cannot read the server's old bytes into it meanwhile. big_writes
    /// is assumed (the batch goes on at a folio boundary). The batch is
    /// the task's `bfirst`, `bn`; `ph` 0 is the write's first step.
    pub(super) fn op_fill_units(&self, s: &mut State, t: usize, first: u8, n: u8) -> Option<Step> {
        let task = s.tasks[t];
        let (bfirst, bn) = if task.ph == 0 {
            (first, 0)
        } else {
            (task.bfirst, task.bn)
        };
        let p = (bfirst + bn) as usize;
        if s.pages[p].locked() {
            return None; // __filemap_get_folio(FGP_WRITEBEGIN): folio_lock
        }
        if task.ph == 0 {
            // fuse_perform_write, once before the loop: "if
            // (inode->i_size < pos + iov_iter_count(ii))
            // set_bit(FUSE_I_SIZE_UNSTABLE, &fi->state);"
            if first + n > s.i_size && self.cfg.attr_readers() {
                s.size_unstable = true;
            }
            s.tasks[t].saved = first;
            s.tasks[t].folio_locked = false;
        }
        // the batch's end: num = min(count, max_write) from its start, and
        // max_folios pages from the start's page
        let c = &self.cfg;
        let mut lim = (first + n) as u16;
        if let Some(mw) = c.limit_units(true) {
            lim = lim.min(bfirst as u16 + mw);
        }
        lim = lim.min(self.max_pages_end(bfirst));
        let lim = lim as usize;
        Self::check_cached_store(s);
        let f = self.folio(p);
        let hi = f.end.min(lim);
        let ver = self.ver(t);
        for q in p..hi {
            s.pages[q].ver = ver;
            s.hist[q] = hist_push(s.hist[q], ver);
        }
        // (a folio created here has its other units' memory as allocated)
        self.folio_set(s, p, PG_PRESENT);
        if p == f.start && hi == f.end {
            // "If we copied full folio, mark it uptodate"
            self.folio_set(s, p, PG_UPTODATE);
        }
        let tk = &mut s.tasks[t];
        tk.ph = 1;
        tk.bfirst = bfirst;
        tk.bn = hi as u8 - bfirst;
        if self.folio_not_uptodate(s, p).is_some() && !self.cfg.variant.mut_wt_unlock_partial {
            // ia->write.folio_locked = true; break: the folio stays
            // locked across the WRITE (the mutant unlocks it)
            self.folio_set(s, p, PG_LOCKED);
            s.tasks[t].folio_locked = true;
            self.advance(s, t);
            return Some(Step::FillFolioLocked);
        }
        // folio_unlock; the batch ends when num is used up or the copy
        // did not end at the folio's end (offset != 0)
        if hi == lim || hi != f.end {
            self.advance(s, t);
        }
        Some(Step::FillFolio)
    }

    /// The folios of task `t`'s write-through batch (`op_fill_units`), as
    /// a range of model positions.
    pub(super) fn batch_folios(&self, s: &State, t: usize) -> std::ops::Range<usize> {
        let task = &s.tasks[t];
        let last = (task.bfirst + task.bn.max(1) - 1) as usize;
        self.folio(task.bfirst as usize).start..self.folio(last).end
    }

    /// fuse_send_write_pages: "for (i = 0; i < ap->num_folios; i++)
    /// folio_wait_writeback(ap->folios[i]);", one folio per step (the
    /// first under writeback is in `cur`, skip_empty's `BatchWait` arm).
    pub(super) fn op_batch_wait(&self, s: &mut State, t: usize) -> Option<Step> {
        let p = s.tasks[t].cur as usize;
        if s.pages[p].wb() {
            return None;
        }
        let end = self.batch_folios(s, t).end;
        match (p + 1..end).find(|&q| s.pages[q].wb()) {
            Some(q) => s.tasks[t].cur = q as u8,
            None => self.advance(s, t),
        }
        Some(Step::BatchWaitWb)
    }
}
