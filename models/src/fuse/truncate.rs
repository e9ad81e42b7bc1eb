//! Truncation and invalidation: the FUSE_NOWRITE machinery
//! (fuse_set_nowrite, fuse_release_nowrite, fuse_sync_writes), the end of
//! fuse_do_setattr, truncate_pagecache and invalidate_inode_pages2 with
//! fuse_launder_folio (kernel-sources.md §2, §4, §3.6).

use super::model::FuseModel;
use super::program::Op;
use super::state::*;
use super::step::Step;

impl FuseModel {
    /// __fuse_release_nowrite.
    pub(super) fn release_nowrite(&self, s: &mut State) {
        if s.writectr != FUSE_NOWRITE {
            s.viol |= VIOL_BUG;
        }
        s.writectr = 0;
        self.flush_writepages(s);
    }

    /// fuse_set_nowrite's first half.
    pub(super) fn set_nowrite(s: &mut State) {
        if s.writectr < 0 {
            // BUG_ON(fi->writectr < 0): nested NOWRITE
            s.viol |= VIOL_BUG;
        } else {
            s.writectr += FUSE_NOWRITE;
        }
    }

    pub(super) fn op_set_nowrite_op(&self, s: &mut State, t: usize) -> Option<Step> {
        Some({
            Self::set_nowrite(s);
            self.advance(s, t);
            Step::SetNowrite
        })
    }

    pub(super) fn op_lock_set_nowrite(&self, s: &mut State, t: usize) -> Option<Step> {
        Some({
            if !s.rwsem.try_lock(t as u8) {
                return None;
            }
            Self::set_nowrite(s);
            self.advance(s, t);
            Step::LockSetNowrite
        })
    }

    pub(super) fn op_wait_nowrite(&self, s: &mut State, t: usize) -> Option<Step> {
        Some({
            if s.writectr != FUSE_NOWRITE {
                return None;
            }
            self.advance(s, t);
            Step::WaitNowrite
        })
    }

    pub(super) fn op_sync_writes_wait(
        &self,
        s: &mut State,
        t: usize,
        unlock: bool,
    ) -> Option<Step> {
        Some({
            if s.writectr != FUSE_NOWRITE {
                return None;
            }
            self.release_nowrite(s);
            if unlock {
                s.rwsem.unlock(t as u8);
            }
            self.advance(s, t);
            Step::SyncWritesDone
        })
    }

    pub(super) fn op_release_nowrite_op(&self, s: &mut State, t: usize) -> Option<Step> {
        Some({
            self.release_nowrite(s);
            self.advance(s, t);
            Step::ReleaseNowrite
        })
    }

    /// fuse_do_setattr(ATTR_OPEN) with atomic_o_trunc: i_size_write(0);
    /// truncate_pagecache(0) follows (always: `saved` is not a size).
    pub(super) fn op_open_trunc_size(&self, s: &mut State, t: usize) -> Option<Step> {
        s.tasks[t].saved = NONE;
        s.i_size = 0;
        self.advance(s, t);
        Some(Step::OpenTruncSize)
    }

    pub(super) fn op_setattr_return(&self, s: &mut State, t: usize) -> Option<Step> {
        Some({
            if s.tasks[t].failed {
                // the SETATTR failed: a5 at fuse_do_setattr's return
                self.check_setattr_failed(s, t);
            }
            self.window_close(s, t);
            s.size_unstable = false;
            s.rwsem.unlock(t as u8);
            self.advance(s, t);
            Step::SetattrReturn
        })
    }

    /// One step of a truncate_inode_pages_range walk over `lo..hi`: per
    /// folio, folio_lock, folio_wait_writeback, remove (dirty data is
    /// discarded).
    pub(super) fn exec_truncate(&self, s: &mut State, t: usize, lo: u8, hi: u8) -> Option<Step> {
        let task = s.tasks[t];
        let start = task.cur.max(lo) as usize;
        // the folio this walk locked stays its folio, wherever i_size
        // went meanwhile (fuse_notify_store writes i_size without
        // inode_lock; the kernel's walk has its bounds as arguments)
        let locked = (task.ph != 0).then_some(task.cur as usize);
        let p = match locked.or_else(|| (start..hi as usize).find(|&p| s.pages[p].present())) {
            Some(p) => self.folio(p).start,
            None => {
                // the folios went away meanwhile (another task's
                // invalidation): nothing left to truncate
                self.advance(s, t);
                return Some(Step::InvDone);
            }
        };
        if task.ph == 0 {
            if s.pages[p].locked() {
                return None;
            }
            // folio_lock (find_lock_entries / the second pass): the lock is
            // held into the next step, where the lockless
            // filemap_range_has_writeback of another task can see it
            self.folio_set(s, p, PG_LOCKED);
            s.tasks[t].ph = if s.pages[p].wb() { 1 } else { 2 };
            s.tasks[t].cur = p as u8;
            return Some(Step::TruncLock);
        } else if s.pages[p].wb() {
            return None; // folio_wait_writeback
        }
        let step = if p < lo as usize {
            // a large folio across the new EOF (lfolio.rs)
            self.truncate_partial_folio(s, t, p, lo);
            Step::TruncPartial
        } else {
            for q in self.folio(p) {
                if s.pages[q].dirty() {
                    s.drops[q] = s.drops[q].saturating_add(1);
                }
            }
            self.remove_page(s, p);
            Step::TruncFolio
        };
        let next = self.folio(p).end;
        s.tasks[t].ph = 0;
        s.tasks[t].cur = next as u8;
        if !(next..hi as usize).any(|q| s.pages[q].present()) {
            self.advance(s, t);
        }
        Some(step)
    }

    /// One step of invalidate_inode_pages2_range (with fuse_launder_folio).
    pub(super) fn exec_invalidate(
        &self,
        s: &mut State,
        t: usize,
        first: u8,
        n: u8,
    ) -> Option<Step> {
        let task = s.tasks[t];
        let end = (first + n) as usize;
        let p = match task.ph {
            0 => match (first.max(task.cur) as usize..end).find(|&p| s.pages[p].present()) {
                Some(p) => self.folio(p).start,
                None => {
                    // another task removed the remaining folios meanwhile:
                    // the walk finds nothing more and returns
                    self.advance(s, t);
                    return Some(Step::InvDone);
                }
            },
            _ => task.cur as usize,
        };
        let step = match task.ph {
            0 => {
                if s.pages[p].locked() {
                    return None;
                }
                self.folio_set(s, p, PG_LOCKED);
                s.tasks[t].cur = p as u8;
                if s.pages[p].wb() {
                    s.tasks[t].ph = 1; // folio_wait_writeback
                    return Some(Step::InvLock);
                }
                if !self.folio_dirty(s, p) {
                    // a clean folio: locked now, removed in the next step
                    // (the lock is visible to filemap_range_has_writeback)
                    s.tasks[t].ph = 5;
                    return Some(Step::InvLock);
                }
                return Some(self.launder_or_remove(s, t, p, Step::InvLock));
            }
            5 => Step::InvRemove,
            1 => {
                if s.pages[p].wb() {
                    return None;
                }
                return Some(self.launder_or_remove(s, t, p, Step::InvLock));
            }
            2 if self.cfg.variant.temp_pages => {
                // L: fuse_launder_folio: fuse_wait_on_page_writeback, then
                // fuse_writepage_locked
                if self.in_tree(s, p).is_some() {
                    return None;
                }
                s.tmp[p] = s.pages[p].ver;
                s.pages[p].set(PG_WRITEBACK);
                s.pages[p].clear(PG_TOWRITE);
                self.queue_writepage(
                    s,
                    Wpa {
                        first: p as u8,
                        n: 1,
                    },
                );
                s.tasks[t].ph = 3;
                return Some(Step::InvLaunder);
            }
            3 => {
                // L: the second fuse_wait_on_page_writeback (reply)
                if self.in_tree(s, p).is_some() {
                    return None;
                }
                Step::InvRemove
            }
            _ => {
                // fuse_launder_folio's folio_wait_writeback
                if s.pages[p].wb() {
                    return None;
                }
                Step::InvRemove
            }
        };
        self.remove_and_next(s, t, p, end);
        Some(step)
    }

    pub(super) fn launder_or_remove(&self, s: &mut State, t: usize, p: usize, _lock: Step) -> Step {
        if s.pages[p].dirty() && self.cfg.variant.temp_pages {
            // L: folio_clear_dirty_for_io, then wait on the rb-tree
            s.pages[p].clear(PG_DIRTY);
            s.tasks[t].ph = 2;
            // (exec_invalidate changes nothing when it cannot proceed)
            return match self.exec_invalidate(s, t, 0, 0) {
                Some(_) => Step::InvLaunder,
                None => Step::InvLock,
            };
        }
        if self.folio_dirty(s, p) {
            // folio_launder → fuse_launder_folio: clear_dirty_for_io,
            // fuse_writepage_locked / iomap_writeback_folio (start
            // writeback, one WRITE per dirty range, queue, flush)
            let runs = self.dirty_runs(s, p);
            self.folio_clear(s, p, PG_DIRTY);
            self.folio_set(s, p, PG_WRITEBACK);
            self.folio_clear(s, p, PG_TOWRITE);
            let h = self.folio(p).start;
            for (rs, rl) in runs {
                if self.cfg.folio_blocks > 1 {
                    s.pages[h].pend += 1;
                }
                self.queue_writepage(s, Wpa { first: rs, n: rl });
            }
            s.tasks[t].ph = 2;
            return Step::InvLaunder;
        }
        let end = match self.current_op(s, t) {
            Some(Op::Invalidate { first, n, .. }) => (first + n) as usize,
            _ => unreachable!(),
        };
        self.remove_and_next(s, t, p, end);
        Step::InvRemove
    }

    pub(super) fn remove_and_next(&self, s: &mut State, t: usize, p: usize, end: usize) {
        self.remove_page(s, p);
        let next = self.folio(p).end;
        s.tasks[t].ph = 0;
        s.tasks[t].cur = next as u8;
        if !(next..end).any(|q| s.pages[q].present()) {
            self.advance(s, t);
        }
    }
}
