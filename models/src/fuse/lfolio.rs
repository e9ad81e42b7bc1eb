//! Large folios in T and T2 (seed 003: "fuse: support large folios", v2 as
//! posted, and the support code merged in 6.16), the request-size caps
//! (fc->max_read, max_write, max_pages) and fuse_readahead.
//!
//! Released kernels give FUSE files order-0 folios (fuse_init_file_inode
//! sets no folio order up to the 2026 trees); `Config::folio_pages` is the
//! order an enabling patch would allow, capped as that patch caps it:
//! v2 patch 12 `ilog2(min(max_write >> PAGE_SHIFT, max_pages))`, or, with
//! the switch `lf_cap_max_read`, the Aug 2025 posting
//! `ilog2(min(min(max_write, max_read) >> PAGE_SHIFT, max_pages))`.
//!
//! T has no iomap (6.16): dirty and uptodate are whole-folio flags
//! (filemap_dirty_folio), one PG_writeback per folio, one descriptor per
//! folio (fuse_writepage_args_page_fill: `length = folio_size`).
//! - fuse_read_folio (fuse_do_readfolio): one READ of the whole folio.
//! - writeback: per folio (wbslots.rs, fuse_writepage_need_send).
//! - fuse_send_writepage: `data_size = Σ descs[i].length` (v2 patch 08;
//!   before it `num_folios * PAGE_SIZE`), full if it fits below the crop,
//!   cropped to `size - offset` if it starts below, dropped otherwise.
//! - fuse_readahead (merged 906354c87f49 = v6 09/11): `max = min(max_pages,
//!   max_read / PAGE)`; per round `cur = min(max, nr_pages)`; folios are
//!   added while they fit; a folio that does not fit is kept for the next
//!   round. v5 stopped when a round took nothing (`if (!pages) { free;
//!   break; }`, switch `lf_readahead_guard`); v2 had no guard and v6, as
//!   merged, has `WARN_ON(!pages)` and sends anyway: fuse_send_readpages
//!   then reads `folio_pos(ap->folios[0])` of an empty array (an oops). A
//!   folio left over is released with folio_end_read(folio, false); the
//!   rest of the window is unlocked by read_pages.
//! - truncate_inode_partial_folio (a folio across the new EOF): wait for
//!   writeback, zero the tail; the model keeps the folio whole (if
//!   split_folio succeeds the head pages stay dirty all the same, so the
//!   server sees the same cropped WRITE).
//!
//! Deviation, stated: a folio created by write(2) has the configured
//! order (the merged fuse_write_begin asks for order 0; iomap, 6.17+, and
//! Jingbo's v2 review ask for `fgf_set_order(len)`). Workloads with large
//! folios write whole folios and truncate at most once (validate_geometry).

use super::config::{Config, Kernel, TaskSpec};
use super::model::FuseModel;
use super::state::*;
use super::step::Step;

/// Blocks (C) or pages (T, T2) per folio, after the order cap.
pub fn folio_size(cfg: &Config) -> u8 {
    match cfg.kernel {
        Kernel::C => cfg.folio_blocks.max(1),
        Kernel::L => 1,
        Kernel::T | Kernel::T2 if cfg.uneven() => {
            // uneven positions (layout.rs, folio_pages 1): folios differ
            // in positions; the most any has (FuseModel::folio is exact)
            let l = cfg.layout();
            (0..cfg.pages as usize)
                .map(|p| l.page_end[p] - l.page_start[p])
                .max()
                .unwrap_or(1)
        }
        Kernel::T | Kernel::T2 => {
            // a page is `units_per_page` model units (subpage.rs)
            let (fp, u) = (cfg.folio_pages.max(1), cfg.sub.units_per_page.max(1));
            if fp == 1 || cfg.variant.mut_lf_no_order_cap {
                return fp * u;
            }
            // mapping_set_folio_order_range(mapping, 0, ilog2(cap)), the
            // limits in whole pages (max_write >> PAGE_SHIFT)
            let mut cap = (cfg.max_pages as u16).min(cfg.limit_pages(true).unwrap_or(u16::MAX));
            if cfg.variant.lf_cap_max_read {
                cap = cap.min(cfg.limit_pages(false).unwrap_or(u16::MAX));
            }
            fp.min(1 << cap.max(1).ilog2()) * u
        }
    }
}

impl Config {
    /// The issue-11 geometry keys: one-line errors for what the model
    /// does not cover.
    pub(super) fn validate_geometry(&self) -> Result<(), String> {
        let (fp, bpp) = (self.folio_pages, self.blocks_per_page);
        if ![1, 2, 4].contains(&fp) || (fp > 1 && !matches!(self.kernel, Kernel::T | Kernel::T2)) {
            return Err("folio_pages is 1, or 2 or 4 with kernel T or T2".into());
        }
        if bpp == 0 || bpp as usize > 4 || (bpp > 1 && self.kernel != Kernel::C) {
            return Err("blocks_per_page is 1, or 2..=4 with kernel C".into());
        }
        if !self.folio_blocks.is_multiple_of(bpp) {
            return Err("folio_blocks must be a multiple of blocks_per_page".into());
        }
        if self.max_read == Some(0) || self.max_write == Some(0) {
            return Err("max_read and max_write are at least 1 page".into());
        }
        for t in &self.tasks {
            // (direct I/O over max_read / max_write is split in
            // fuse_direct_io's loop, a write-through write in
            // fuse_perform_write's: program.rs, issue 10)
            if matches!(t, TaskSpec::Readahead { .. })
                && !matches!(self.kernel, Kernel::T | Kernel::T2)
            {
                return Err(format!("task '{t}': readahead is modelled for T and T2"));
            }
        }
        // a folio in model positions: pages, times units per page
        let u = self.sub.units_per_page.max(1);
        if fp == 1 && u == 1 && !self.uneven() {
            return Ok(());
        }
        let fu = fp * u;
        if !self.pages.is_multiple_of(fu) {
            return Err(format!("with folio_pages = {fp}, pages are whole folios"));
        }
        // the folio of a position: fu of them, or with uneven positions
        // (folio_pages 1) its page's (layout.rs)
        let lay = self.layout();
        let fstart = |p: u8| {
            if self.uneven() {
                lay.page_start[p as usize]
            } else {
                p - p % fu
            }
        };
        let is_start = |p: u8| p >= self.pages || fstart(p) == p;
        let sizes = if self.uneven() {
            format!(
                "unit_bytes = {:?}",
                self.position_bytes()
                    .iter()
                    .map(|b| b.1)
                    .collect::<Vec<_>>()
            )
        } else {
            format!("units_per_page = {u}")
        };
        for (mask, what) in [(self.cached, "cached"), (self.dirty, "dirty")] {
            for p in 0..self.pages {
                if (mask >> p) & 1 != (mask >> fstart(p)) & 1 {
                    return Err(format!(
                        "with folio_pages = {fp} and {sizes}, {what} covers whole folios"
                    ));
                }
            }
        }
        let mut sizing = 0;
        for (i, t) in self.tasks.iter().enumerate() {
            let whole = |first: u8, n: u8| is_start(first) && is_start(first + n);
            let bad = match *t {
                // (a write may cover part of a folio of units: subpage.rs;
                // write-through with units: write.rs, op_fill_units, whose
                // folios are single pages)
                TaskSpec::Write { first, n } => {
                    (!self.writeback_cache && fp > 1) || (!self.sub_page() && !whole(first, n))
                }
                TaskSpec::Punch { first, n } | TaskSpec::Readahead { first, n } => !whole(first, n),
                TaskSpec::Truncate { .. } | TaskSpec::Open { trunc: true, .. } => {
                    sizing += 1;
                    false
                }
                _ => false,
            };
            if bad {
                return Err(format!(
                    "task '{}': with folio_pages = {fp} and {sizes}, punches and readahead cover whole folios, and so do writes of whole pages (write-through writes are not modelled with folio_pages > 1)",
                    self.task_text(i)
                ));
            }
        }
        if sizing > 1 {
            return Err(format!(
                "with folio_pages = {fp} and {sizes}, at most one truncation (a zeroed folio tail is not tracked across a second size change)"
            ));
        }
        Ok(())
    }
}

impl FuseModel {
    /// Pages per folio in T and T2 (1 in L and C, whose folios are
    /// `folio_blocks` blocks).
    pub fn lf_folio_pages(&self) -> u8 {
        match self.cfg.kernel {
            Kernel::T | Kernel::T2 => self.fsize,
            _ => 1,
        }
    }

    /// Is any issue-11 or issue-18 geometry configured (large folios,
    /// sub-page blocks, max_read, max_write, sizes below a page)?
    pub(super) fn lf_geometry(&self) -> bool {
        let c = &self.cfg;
        c.folio_pages > 1
            || c.blocks_per_page > 1
            || c.max_read.is_some()
            || c.max_write.is_some()
            || !c.sub.is_default()
    }

    /// The READ of fuse_read_folio for block `q`: the block (C: iomap reads
    /// what is not uptodate, one block per READ here), or the whole folio.
    pub(super) fn read_folio_range(&self, q: usize) -> (u8, u8) {
        if self.lf_folio_pages() > 1 {
            let f = self.folio(q);
            (f.start as u8, f.len() as u8)
        } else {
            (q as u8, 1)
        }
    }

    /// lf-limits for a READ of `n` model pages.
    pub(super) fn check_read_limits(&self, s: &mut State, first: u8, n: u8) {
        let c = &self.cfg;
        let pages = self.pages_spanned(first, n);
        // a READ's fc->max_pages is `read_max_pages` where conform set it
        // (above max_write's cap: fuse_readahead's `min(fc->max_pages,
        // fc->max_read / PAGE_SIZE)`, subpage.rs readahead_units)
        let cap = match c.read_max_pages {
            0 => c.max_pages,
            r => r,
        };
        if pages > cap as u16 || c.limit_units(false).is_some_and(|mr| n as u16 > mr) {
            s.lf_viol |= VIOL_LF_LIMITS;
        }
    }

    /// A READ reply into a locked large folio (fuse_copy_folios; a short
    /// read zeroes the rest, fuse_short_read).
    pub(super) fn read_reply_into_folio(&self, s: &mut State, first: u8, n: u8) {
        for p in first as usize..(first + n) as usize {
            s.pages[p].ver = if (p as u8) < s.srv_size {
                s.srv[p]
            } else {
                // fuse_short_read zero-fills: the page's current zeros
                self.last_zeros(s.hist[p])
            };
        }
    }

    /// fuse_send_writepage's data_size: Σ descriptor lengths, or (before
    /// v2 patch 08, the mutant) one page per folio.
    pub(super) fn wpa_data_size(&self, w: Wpa) -> u8 {
        let fp = self.lf_folio_pages();
        if self.cfg.variant.mut_lf_datasize_pages && fp > 1 {
            w.n / fp
        } else {
            w.n
        }
    }

    /// lf-crop and lf-limits of a writeback WRITE: it must carry exactly
    /// the wpa's pages below the crop, within max_write and max_pages.
    pub(super) fn check_writeback_request(&self, s: &mut State, w: Wpa, crop: u8, sent: u8) {
        let expected = crop.saturating_sub(w.first).min(w.n);
        if sent != expected {
            s.lf_viol |= VIOL_LF_CROP;
        }
        let c = &self.cfg;
        let pages = self.pages_spanned(w.first, sent);
        if pages > c.max_pages as u16 || c.limit_units(true).is_some_and(|mw| sent as u16 > mw) {
            s.lf_viol |= VIOL_LF_LIMITS;
        }
    }

    /// truncate_inode_partial_folio for the folio at `p` across the new EOF
    /// `lo` (locked, writeback waited for): zero the tail; the folio stays.
    pub(super) fn truncate_partial_folio(&self, s: &mut State, t: usize, p: usize, lo: u8) {
        for q in lo as usize..self.folio(p).end {
            if s.pages[q].dirty() {
                // the tail's dirty data is discarded
                s.drops[q] = s.drops[q].saturating_add(1);
            }
            // folio_zero_range: this truncation's zeros (the mutant
            // leaves the tail as it was)
            if !self.cfg.variant.mut_no_tail_zero {
                s.pages[q].ver = self.ver(t);
            }
        }
        self.folio_clear(s, p, PG_LOCKED);
    }

    /// One step of a readahead task: add the window's folios, then one
    /// fuse_readahead round per step.
    pub(super) fn op_readahead(&self, s: &mut State, t: usize, first: u8, n: u8) -> Option<Step> {
        let task = s.tasks[t];
        if task.ph == 0 {
            // page_cache_ra_order: add absent folios below EOF, locked and
            // not uptodate; stop at the first folio already present
            let mut p = first as usize;
            while p < (first + n) as usize && !s.pages[p].present() && (p as u8) < s.i_size {
                self.folio_set(s, p, PG_PRESENT | PG_LOCKED);
                p = self.folio(p).end;
            }
            if p == first as usize {
                self.advance(s, t);
                return Some(Step::RaNone);
            }
            let tk = &mut s.tasks[t];
            tk.ph = 1;
            tk.cur = first;
            tk.saved = p as u8;
            return Some(Step::RaAlloc);
        }
        // fuse_readahead: one round
        let c = &self.cfg;
        // the loop counts kernel pages (`kpages`: model positions, with
        // uneven positions kernel pages, layout.rs)
        let (cur_pages, mut pages, mut pos) = if self.lay.uneven {
            let mp = match c.read_max_pages {
                0 => c.max_pages,
                r => r,
            };
            let left = self.pages_spanned(task.cur, task.saved - task.cur);
            (left.min(mp as u16), 0u16, task.cur as usize)
        } else {
            let max = c.readahead_units().min(u8::MAX as u16) as u8;
            let nr = task.saved - task.cur;
            (max.min(nr) as u16, 0u16, task.cur as usize)
        };
        while pages < cur_pages {
            let f = self.folio(pos);
            let fp = if self.lay.uneven {
                self.pages_spanned(f.start as u8, f.len() as u8)
            } else {
                f.len() as u16
            };
            if fp > cur_pages - pages {
                // keep the folio for the next round
                s.ev = Event::RaNoFit;
                break;
            }
            pages += fp;
            pos = f.end;
        }
        let pages = (pos - task.cur as usize) as u8;
        if pages == 0 {
            if c.variant.lf_readahead_guard {
                // v5: free the request, stop; folio_end_read(folio, false)
                // and read_pages unlock the rest of the window
                for q in task.cur as usize..task.saved as usize {
                    s.pages[q].clear(PG_LOCKED);
                }
                self.advance(s, t);
                return Some(Step::RaStop);
            }
            // v2, v6 / merged: fuse_send_readpages with no folio reads
            // folio_pos(ap->folios[0]): the task oopses, its folios stay
            // locked
            s.lf_viol |= VIOL_LF_EMPTY;
            s.tasks[t].pc = self.programs[t].len() as u8;
            return Some(Step::RaEmpty);
        }
        if self.bg_blocked(s) {
            // fuse_simple_background → fuse_get_req waits on fc->blocked
            return None;
        }
        self.check_read_limits(s, task.cur, pages);
        self.queue_background(
            s,
            Req::ReadPages {
                task: t as u8,
                first: task.cur,
                n: pages,
            },
        );
        s.tasks[t].cur = task.cur + pages;
        if task.cur + pages >= task.saved {
            self.advance(s, t);
        }
        Some(Step::RaSend)
    }

    /// fuse_readpages_end: the data lands in the locked folios, which
    /// become uptodate and are unlocked (folio_end_read).
    pub(super) fn readpages_end(&self, s: &mut State, first: u8, n: u8) {
        self.read_reply_into_folio(s, first, n);
        for p in first as usize..(first + n) as usize {
            s.pages[p].set(PG_UPTODATE);
            s.pages[p].clear(PG_LOCKED);
        }
    }
}

/// lf-limits: every page-cache READ and writeback WRITE within max_read /
/// max_write and max_pages.
pub fn lf_limits(_m: &FuseModel, s: &State) -> bool {
    s.lf_viol & VIOL_LF_LIMITS == 0
}

/// lf-progress: readahead never sends a READ with no folio.
pub fn lf_progress(_m: &FuseModel, s: &State) -> bool {
    s.lf_viol & VIOL_LF_EMPTY == 0
}

/// lf-crop: a writeback WRITE carries every dirty byte of its folios below
/// i_size and none above.
pub fn lf_crop(_m: &FuseModel, s: &State) -> bool {
    s.lf_viol & VIOL_LF_CROP == 0
}

/// Witness: a page-cache WRITE cropped inside a large folio.
pub fn w_crop_in_folio(m: &FuseModel, s: &State) -> bool {
    let fp = m.lf_folio_pages();
    fp > 1
        && s.fuse_q.iter().any(|r| match *r {
            Req::CacheWrite { first, n, sent } => sent < n && (first + sent) % fp != 0,
            _ => false,
        })
}

/// Sentences for the lf-* properties (narrate.rs).
pub fn why(m: &FuseModel, states: &[State], prop: &str) -> Vec<String> {
    let s = states.last().expect("a path has a state");
    let b = &states[states.len().saturating_sub(2)];
    let c = &m.cfg;
    // a limit as configured: in bytes (subpage.rs) or in pages
    let lim = |write: bool| {
        let (pages, bytes) = if write {
            (c.max_write, c.sub.max_write_bytes)
        } else {
            (c.max_read, c.sub.max_read_bytes)
        };
        match (bytes, pages) {
            (Some(b), _) => format!("{b} B"),
            (None, Some(p)) => format!("{p}p"),
            (None, None) => "unlimited".to_string(),
        }
    };
    // a folio's size: pages, and units when a page has several
    let u = c.sub.units_per_page.max(1);
    let fp = m.lf_folio_pages();
    let folio = if u > 1 {
        format!("{} page(s) of {u} units", fp / u)
    } else {
        format!("{fp} page(s)")
    };
    let mut out = Vec::new();
    let new_reqs: Vec<String> = s
        .fuse_q
        .iter()
        .filter(|r| !b.fuse_q.iter().any(|x| x == *r))
        .map(|r| r.to_string())
        .collect();
    match prop {
        "lf-limits" => out.push(format!(
            "{} exceeds the limits: max_read {}, max_write {}, max_pages {}p; folios are {}{}",
            if new_reqs.is_empty() {
                "the request just built".to_string()
            } else {
                new_reqs.join(", ")
            },
            lim(false),
            lim(true),
            c.max_pages,
            folio,
            if c.variant.lf_cap_max_read || c.folio_pages <= 1 {
                ""
            } else {
                " (the order cap ignores max_read)"
            }
        )),
        "lf-progress" => out.push(format!(
            "fuse_readahead's round takes no folio: the next folio is {}, a READ at most {} page(s) (min(max_pages {}, max_read {}{})); without v5's `if (!pages)` guard fuse_send_readpages is called with no folio and reads folio_pos(ap->folios[0])",
            folio,
            (c.max_pages as u16).min(c.limit_pages(false).unwrap_or(u16::MAX)),
            c.max_pages,
            lim(false),
            if c.sub.max_read_bytes.is_some() {
                format!(" / PAGE_SIZE {}", c.sub.page_size)
            } else {
                String::new()
            }
        )),
        "lf-crop" => out.push(format!(
            "{} does not carry exactly the folios' pages below i_size={}p{}",
            if new_reqs.is_empty() {
                "the WRITE".to_string()
            } else {
                new_reqs.join(", ")
            },
            s.i_size,
            if c.variant.mut_lf_datasize_pages {
                " (data_size = num_folios * PAGE_SIZE)"
            } else {
                ""
            }
        )),
        _ => {}
    }
    out
}
