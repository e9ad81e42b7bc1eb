//! Direct I/O: fuse_dio_lock and fuse_direct_io step (B)'s
//! filemap_range_has_writeback (kernel-sources.md §5).

use super::model::{pages_mask, FuseModel};
use super::state::*;
use super::step::Step;

impl FuseModel {
    pub(super) fn op_dio_lock(&self, s: &mut State, t: usize) -> Option<Step> {
        let spec = self.cfg.tasks[t];
        Some({
            // fuse_dio_wr_exclusive_lock: past EOF or caching io-mode ->
            // exclusive
            let (first, n) = spec.range().expect("direct write has a range");
            if Self::dio_wants_exclusive(s, first + n > s.i_size) {
                if !s.rwsem.try_lock(t as u8) {
                    return None;
                }
                self.window_open(s, t);
                self.advance(s, t);
                Step::InodeLock
            } else {
                if !s.rwsem.try_lock_shared() {
                    return None;
                }
                Self::uncached_io_start(s);
                self.window_open(s, t);
                self.advance(s, t);
                Step::DioLockShared
            }
        })
    }

    pub(super) fn op_if_range_has_writeback(
        &self,
        s: &mut State,
        t: usize,
        first: u8,
        n: u8,
        skip: u8,
    ) -> Option<Step> {
        Some({
            let has = if self.cfg.variant.temp_pages {
                // L: fuse_range_is_writeback (rb-tree overlap)
                pages_mask(first, n).any(|p| self.in_tree(s, p).is_some())
            } else {
                Self::range_has_writeback(s, first, n)
            };
            if !has {
                s.tasks[t].pc += skip;
            }
            self.advance(s, t);
            if self.cfg.variant.temp_pages {
                Step::RangeIsWritebackL
            } else {
                Step::RangeHasWriteback
            }
        })
    }

    /// filemap_range_has_writeback: any folio in range dirty, locked or
    /// under writeback.
    pub(super) fn range_has_writeback(s: &State, first: u8, n: u8) -> bool {
        pages_mask(first, n).any(|p| {
            let pg = &s.pages[p];
            pg.present() && (pg.dirty() || pg.locked() || pg.wb())
        })
    }
}
