//! Where the model's positions lie in the file (issue 21): the kernel
//! page each position is in, and its bytes. Three shapes:
//! - whole pages: a position is a kernel page, or in trace conformance a
//!   run of `Config::real_pages` pages (a region);
//! - uniform units: `units_per_page` (T, T2) or `blocks_per_page` (C)
//!   positions per page (subpage.rs);
//! - uneven positions: `unit_bytes = [12, 500, 4, 3580]`, each position
//!   inside one page or a run of whole pages starting on a page
//!   boundary. Trace conformance maps a program's own byte offsets onto
//!   them (sqlite3 writes at 12, 100, 512, ...).
//!
//! What the kernel keeps per folio stays per folio (the folio is the
//! page: `folio_pages` is 1 with uneven positions); what it does per byte
//! range is per position range, as with uniform units. With uneven
//! positions `max_pages` counts kernel pages (as fc->max_pages does), and
//! a byte limit (max_read, max_write) smaller than the file is refused:
//! its chunk boundaries would fall where no position ends.

use super::config::{Config, Kernel, TaskSpec, MAX_PAGES};

/// The page arithmetic of a configuration, computed once
/// (`FuseModel::lay`): per position, its page's first position and one
/// past its page's last, and the kernel pages before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub page_start: [u8; MAX_PAGES],
    pub page_end: [u8; MAX_PAGES],
    /// Kernel pages before position p, p = 0..=pages.
    pub kpage: [u32; MAX_PAGES + 1],
    /// `unit_bytes` given: `max_pages` counts kernel pages.
    pub uneven: bool,
}

impl Config {
    /// Uneven positions (`unit_bytes`) given.
    pub fn uneven(&self) -> bool {
        self.sub.unit_bytes[0] != 0
    }

    /// Some position is smaller than a page (units or uneven positions):
    /// the sub-page mechanics of subpage.rs apply.
    pub fn sub_page(&self) -> bool {
        self.sub.units_per_page > 1
            || (self.uneven()
                && self
                    .sub
                    .unit_bytes
                    .iter()
                    .any(|b| b % self.sub.page_size != 0))
    }

    /// The byte range `(start, len)` of every position.
    pub fn position_bytes(&self) -> Vec<(u64, u64)> {
        let mut at = 0u64;
        (0..self.pages as usize)
            .map(|p| {
                let len = if self.uneven() {
                    self.sub.unit_bytes[p] as u64
                } else if self.per_page() > 1 {
                    self.unit_bytes() as u64
                } else {
                    self.real_pages[p] as u64 * self.sub.page_size as u64
                };
                at += len;
                (at - len, len)
            })
            .collect()
    }

    /// The page arithmetic (see [`Layout`]).
    pub fn layout(&self) -> Layout {
        let n = self.pages as usize;
        let mut l = Layout {
            page_start: [0; MAX_PAGES],
            page_end: [0; MAX_PAGES],
            kpage: [0; MAX_PAGES + 1],
            uneven: self.uneven(),
        };
        let ps = self.sub.page_size as u64;
        let bytes = self.position_bytes();
        for p in 0..n {
            let (a, len) = bytes[p];
            l.kpage[p] = (a / ps) as u32;
            if !l.uneven {
                let per = self.per_page() as usize;
                l.page_start[p] = (p - p % per) as u8;
                l.page_end[p] = (p - p % per + per).min(n) as u8;
                continue;
            }
            // a position inside one page shares it with its neighbours in
            // that page; a run of whole pages is its own
            let whole = a % ps == 0 && len % ps == 0;
            let same = |q: usize| {
                let (b, m) = bytes[q];
                !(b % ps == 0 && m % ps == 0) && b / ps == a / ps
            };
            let (mut lo, mut hi) = (p, p + 1);
            if !whole {
                while lo > 0 && same(lo - 1) {
                    lo -= 1;
                }
                while hi < n && same(hi) {
                    hi += 1;
                }
            }
            l.page_start[p] = lo as u8;
            l.page_end[p] = hi as u8;
        }
        l.kpage[n] = bytes.last().map_or(0, |(a, len)| (a + len).div_ceil(ps)) as u32;
        if !l.uneven && self.per_page() > 1 {
            // (uniform units: the file is whole pages of them)
            l.kpage[n] = (n / self.per_page() as usize) as u32;
        }
        // (past the file: more pages of the same shape, for arithmetic
        // that runs a position past the end)
        for p in n + 1..=MAX_PAGES {
            l.kpage[p] = if !l.uneven && self.per_page() > 1 {
                (p / self.per_page() as usize) as u32
            } else {
                l.kpage[n] + (p - n) as u32
            };
        }
        l
    }

    /// One-line errors for `unit_bytes` the model cannot take.
    pub(super) fn validate_layout(&self) -> Result<(), String> {
        if !self.uneven() {
            return Ok(());
        }
        let ub = &self.sub.unit_bytes;
        let n = ub.iter().take_while(|b| **b != 0).count();
        if ub[n..].iter().any(|b| *b != 0) || n != self.pages as usize {
            return Err(format!(
                "unit_bytes: {n} positions for {} model positions (no 0 between them)",
                self.pages
            ));
        }
        let also = [
            (self.sub.units_per_page > 1, "units_per_page"),
            (self.blocks_per_page > 1, "blocks_per_page"),
            (self.folio_pages > 1, "folio_pages"),
            (self.folio_blocks > 1, "folio_blocks"),
            (self.real_pages.iter().any(|r| *r != 1), "real_pages"),
        ];
        if let Some((_, what)) = also.iter().find(|(on, _)| *on) {
            return Err(format!("unit_bytes with {what}: give one of them"));
        }
        if !matches!(self.kernel, Kernel::T | Kernel::T2) || self.variant.temp_pages {
            return Err(
                "unit_bytes is modelled for T and T2's writeback (as units_per_page is)".into(),
            );
        }
        if !self.sub_page() {
            return Err("unit_bytes of whole pages only: give pages (positions are pages)".into());
        }
        let ps = self.sub.page_size as u64;
        // a position of several pages is one folio in the model: the
        // kernel's order-0 folios would be split at max_pages inside it
        let mp = match self.read_max_pages {
            0 => self.max_pages,
            r => r.min(self.max_pages),
        } as u64;
        for (a, len) in self.position_bytes() {
            check_position(a, len, ps)?;
            if len / ps > mp {
                return Err(format!(
                    "unit_bytes: the position at byte {a} is {} pages, more than max_pages {mp}: a request would be split inside it",
                    len / ps
                ));
            }
        }
        let total: u64 = ub.iter().map(|b| *b as u64).sum();
        if total % ps != 0 {
            return Err(format!(
                "unit_bytes: {total} bytes in all, not whole pages of {ps} (the file is whole pages of positions)"
            ));
        }
        for write in [false, true] {
            let (pages, bytes) = if write {
                (self.max_write, self.sub.max_write_bytes)
            } else {
                (self.max_read, self.sub.max_read_bytes)
            };
            let b = bytes.map(|b| b as u64).or(pages.map(|p| p as u64 * ps));
            if b.is_some_and(|b| b < total) {
                return Err(format!(
                    "unit_bytes with a {} of {} bytes under the file's {total}: its chunks would end where no position does",
                    if write { "max_write" } else { "max_read" },
                    b.unwrap_or(0)
                ));
            }
        }
        for t in &self.tasks {
            if matches!(t, TaskSpec::Gup { .. } | TaskSpec::DioMmap { .. }) {
                return Err(format!(
                    "task '{t}': with unit_bytes, direct I/O into a mapping is not modelled"
                ));
            }
        }
        Ok(())
    }
}

/// A position of `len` bytes at byte `a` lies inside one page of `ps`
/// bytes, or is whole pages from a page boundary.
pub(super) fn check_position(a: u64, len: u64, ps: u64) -> Result<(), String> {
    let inside = len > 0 && a / ps == (a + len - 1) / ps;
    let whole = a % ps == 0 && len % ps == 0 && len > 0;
    if !inside && !whole {
        return Err(format!(
            "unit_bytes: the position at byte {a} of {len} bytes crosses a page boundary (a position lies inside one page of {ps} bytes, or is whole pages)"
        ));
    }
    Ok(())
}

impl super::model::FuseModel {
    /// The first position of kernel page `k` or after it (`pages` past
    /// the file).
    pub(super) fn pos_of_kpage(&self, k: u32) -> u8 {
        let n = self.cfg.pages;
        (0..n)
            .find(|&q| self.lay.kpage[q as usize] >= k && self.lay.page_start[q as usize] == q)
            .unwrap_or(n)
    }

    /// The kernel page where position `e` starts, counting a page that
    /// `e` starts inside of: DIV_ROUND_UP of its byte offset.
    pub(super) fn kpage_end(&self, e: u8) -> u32 {
        let e = e as usize;
        if e >= self.cfg.pages as usize || self.lay.page_start[e] as usize == e {
            self.lay.kpage[e]
        } else {
            self.lay.kpage[e] + 1
        }
    }

    /// Pages a request over positions `first..first+n` counts against
    /// max_pages: kernel pages with uneven positions, else what
    /// `max_pages` counts (model pages, or pages of uniform units).
    pub(super) fn pages_spanned(&self, first: u8, n: u8) -> u16 {
        if !self.lay.uneven && self.cfg.max_kpages == 0 {
            return (n as u16).div_ceil(self.cfg.per_page());
        }
        if !self.lay.uneven {
            // a page split with positions of different sizes
            // (`Config::max_kpages`): their kernel pages
            let (a, b) = (first as usize, (first + n) as usize);
            return (self.lay.kpage[b] - self.lay.kpage[a]) as u16;
        }
        if n == 0 {
            return 0;
        }
        let last = (first + n - 1) as usize;
        (self.lay.kpage[self.lay.page_end[last] as usize] - self.lay.kpage[first as usize]) as u16
    }

    /// With kernel-page caps (`Config::max_kpages`): a request from
    /// position `first` whose cap, `cap` kernel pages on, falls inside
    /// positions `next..next+n`, which the batch would take next (or
    /// starts with), where the kernel's order-0 folios would fill the
    /// request to the cap: noted for conformance's refinement
    /// (cuts.rs), which then splits the position there. A trace of a
    /// correct kernel has a boundary at that page already (its WRITE or
    /// READ ends there), so the note never fires for one; without it
    /// the model cut such a batch early at the position's start, or sent
    /// a position larger than the cap whole, and accepted a kernel that
    /// under- or over-filled its requests (an attack, 4 Dec 2026).
    pub(super) fn note_cap_inside(&self, first: u8, next: u8, n: u8, cap: u16) {
        if self.lay.uneven || self.cfg.max_kpages == 0 {
            return;
        }
        let lim = self.lay.kpage[first as usize] + cap as u32;
        let (a, b) = (
            self.lay.kpage[next as usize],
            self.lay.kpage[(next + n) as usize],
        );
        if a < lim && lim < b {
            super::cuts::note(lim);
        }
    }

    /// One past the last position a batch from `p` may take under
    /// max_pages: the page of `p` and the max_pages - 1 after it.
    pub(super) fn max_pages_end(&self, p: u8) -> u16 {
        let c = &self.cfg;
        let start = self.page_start(p);
        if !self.lay.uneven && c.max_kpages > 0 {
            // the last position that ends within max_kpages of the start
            let lim = self.lay.kpage[start as usize] + c.max_kpages as u32;
            return (start + 1..=c.pages)
                .rev()
                .find(|&e| self.lay.kpage[e as usize] <= lim)
                .unwrap_or(start + 1) as u16;
        }
        if !self.lay.uneven {
            return start as u16 + c.max_pages as u16 * c.per_page();
        }
        self.pos_of_kpage(self.lay.kpage[start as usize] + c.max_pages as u32) as u16
    }

    /// Has a readahead READ of positions `first..first+n` room for one
    /// more kernel page (fuse_readahead takes the next folio while
    /// `pages < cur_pages`; a folio that then does not fit is held for
    /// the next READ)? Counted as `ra_fits` counts.
    pub(super) fn ra_room(&self, first: u8, n: u8) -> bool {
        let c = &self.cfg;
        if !self.lay.uneven && c.read_max_kpages > 0 {
            return self.pages_spanned(first, n) < c.read_max_kpages;
        }
        if !self.lay.uneven {
            return (n as u16) < c.readahead_units().min(u8::MAX as u16);
        }
        let mp = match c.read_max_pages {
            0 => c.max_pages,
            r => r,
        };
        self.pages_spanned(first, n) < mp as u16
    }

    /// Do positions `first..end` fit one readahead READ (fuse_readahead's
    /// `min(fc->max_pages, fc->max_read / PAGE_SIZE)` pages)?
    pub(super) fn ra_fits(&self, first: u8, end: u8) -> bool {
        let c = &self.cfg;
        if !self.lay.uneven && c.read_max_kpages > 0 {
            return self.pages_spanned(first, end - first) <= c.read_max_kpages;
        }
        if !self.lay.uneven {
            return (end - first) as u16 <= c.readahead_units().min(u8::MAX as u16);
        }
        let mp = match c.read_max_pages {
            0 => c.max_pages,
            r => r,
        };
        self.pages_spanned(first, end - first) <= mp as u16
    }
}
