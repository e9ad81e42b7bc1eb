//! write(2): generic_perform_write with writeback_cache, and the
//! write-through fuse_perform_write without it (kernel-sources.md
//! §3.8, §3.9).

use super::model::FuseModel;
use super::state::*;
use super::step::Step;

impl FuseModel {
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
}
