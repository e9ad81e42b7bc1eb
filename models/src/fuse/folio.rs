//! Folio geometry: in state C a folio is `folio_blocks` blocks (iomap
//! sub-folio state); in T and T2 `FuseModel::fsize` pages (1 unless large
//! folios are configured, lfolio.rs), in L one page. Flags that are per
//! folio (PG_locked, PG_writeback, presence, TOWRITE) are kept equal on
//! all its blocks; PG_dirty, PG_uptodate and data are per block in C and
//! whole-folio in T/T2 (lfolio.rs keeps them equal).

use super::model::FuseModel;
use super::state::*;

impl FuseModel {
    // ---- folios (state C: `folio_blocks` blocks each; else one page)

    /// The blocks of the folio holding block `p`.
    pub fn folio(&self, p: usize) -> std::ops::Range<usize> {
        if self.lay.uneven {
            if p >= self.cfg.pages as usize {
                return p..p;
            }
            return self.lay.page_start[p] as usize..self.lay.page_end[p] as usize;
        }
        let fb = self.fsize.max(1) as usize;
        let h = p - p % fb;
        h..(h + fb).min(self.cfg.pages as usize)
    }

    pub(super) fn folio_set(&self, s: &mut State, p: usize, f: u8) {
        for q in self.folio(p) {
            s.pages[q].set(f);
        }
    }

    pub(super) fn folio_clear(&self, s: &mut State, p: usize, f: u8) {
        for q in self.folio(p) {
            s.pages[q].clear(f);
        }
    }

    /// Any block of the folio dirty (the folio's PG_dirty).
    pub fn folio_dirty(&self, s: &State, p: usize) -> bool {
        self.folio(p).any(|q| s.pages[q].dirty())
    }

    /// The first block of the folio that is not uptodate.
    pub(super) fn folio_not_uptodate(&self, s: &State, p: usize) -> Option<usize> {
        self.folio(p).find(|&q| !s.pages[q].has(PG_UPTODATE))
    }

    /// Maximal runs of dirty blocks in the folio (iomap's dirty ranges).
    pub(super) fn dirty_runs(&self, s: &State, p: usize) -> Vec<(u8, u8)> {
        let mut runs: Vec<(u8, u8)> = Vec::new();
        for q in self.folio(p) {
            if !s.pages[q].dirty() {
                continue;
            }
            match runs.last_mut() {
                Some((f, n)) if (*f + *n) as usize == q => *n += 1,
                _ => runs.push((q as u8, 1)),
            }
        }
        runs
    }

    /// The folio leaves the page cache (all its blocks).
    pub(super) fn remove_page(&self, s: &mut State, p: usize) {
        for q in self.folio(p) {
            s.pages[q] = Page::default();
        }
    }
}
