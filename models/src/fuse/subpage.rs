//! Sizes below a page (issue 18): the kernel's PAGE_SIZE, model units
//! smaller than a page, and fc->max_read / fc->max_write in bytes.
//!
//! With `units_per_page` U > 1 (T and T2), every model position is a unit
//! of PAGE_SIZE / U bytes: task ranges, i_size, the server's size, the
//! crop of a writeback WRITE. A kernel page is a folio of U units (with
//! `folio_pages`, a large folio of that many pages), so what the kernel
//! keeps per folio stays per folio (PG_dirty, PG_uptodate, PG_locked,
//! PG_writeback: 6.16 has no iomap_folio_state for FUSE) and what it does
//! per byte range is per unit range:
//! - fuse_send_writepage crops a WRITE at i_size in bytes (the EOF page's
//!   short WRITE);
//! - truncate_inode_partial_folio zeroes the tail of the folio across the
//!   new EOF (lfolio.rs, truncate_partial_folio);
//! - fuse_write_begin on a folio that is not uptodate and not wholly
//!   overwritten reads it (fuse_do_readfolio, a synchronous READ with the
//!   folio locked), or, when the folio starts at or beyond EOF, zeroes
//!   what the write does not cover (fuse_write_begin's head,
//!   fuse_write_end's tail): `op_copy_partial` below;
//! - a READ reply shorter than the folio zero-fills it (fuse_short_read);
//! - filemap_fault gives SIGBUS only from the first page wholly beyond
//!   EOF (`max_idx = DIV_ROUND_UP(i_size, PAGE_SIZE)`).
//!
//! The limits are bytes as the kernel holds them: the server's INIT reply
//! sets max_write and the mount option max_read, both raised to at least
//! 4096 bytes (not to a page), so on 16 KiB and 64 KiB pages a limit can
//! be smaller than one page. fuse_readahead reads at most
//! `min(max_pages, max_read / PAGE_SIZE)` pages per READ.

use super::config::{low_mask, Config, Kernel, TaskSpec};
use super::model::FuseModel;
use super::state::*;
use super::step::Step;

/// `Task::ph` of a write waiting for fuse_write_begin's READ.
pub(super) const PH_WB_READ: u8 = 7;

/// The page sizes modelled: x86-64's 4 KiB, and arm64's and ppc64's
/// 16 KiB / 64 KiB.
pub const PAGE_SIZES: &[u32] = &[4096, 16384, 65536];

/// The kernel's floor for max_read and max_write, in bytes.
pub const MIN_LIMIT: u32 = 4096;

impl Config {
    /// Model positions per kernel page: units (T, T2) or blocks (C).
    pub fn per_page(&self) -> u16 {
        self.sub.units_per_page.max(1) as u16 * self.blocks_per_page.max(1) as u16
    }

    /// Bytes per model position.
    pub fn unit_bytes(&self) -> u32 {
        self.sub.page_size / self.per_page() as u32
    }

    /// fc->max_write (`write`) or fc->max_read in model positions; `None`:
    /// larger than any request of the configuration.
    pub fn limit_units(&self, write: bool) -> Option<u16> {
        if self.uneven() {
            // (no smaller than the file: validate_layout)
            return None;
        }
        let (pages, bytes) = self.limits(write);
        match bytes {
            Some(b) => Some((b / self.unit_bytes()).min(u16::MAX as u32) as u16),
            None => pages.map(|p| p as u16 * self.per_page()),
        }
    }

    /// The same limit in whole kernel pages (`limit / PAGE_SIZE`, rounded
    /// down as fuse_readahead and the folio order cap round it).
    pub fn limit_pages(&self, write: bool) -> Option<u16> {
        let (pages, bytes) = self.limits(write);
        match bytes {
            Some(b) => Some((b / self.sub.page_size).min(u16::MAX as u32) as u16),
            None => pages.map(|p| p as u16),
        }
    }

    fn limits(&self, write: bool) -> (Option<u8>, Option<u32>) {
        if write {
            (self.max_write, self.sub.max_write_bytes)
        } else {
            (self.max_read, self.sub.max_read_bytes)
        }
    }

    /// Readahead's READ size in model positions: fuse_readahead's
    /// `min(fc->max_pages, fc->max_read / PAGE_SIZE)` pages (fc->max_pages
    /// is `read_max_pages` when set).
    /// With uneven positions, every position: the cap is in kernel pages
    /// (`FuseModel::ra_fits`).
    pub fn readahead_units(&self) -> u16 {
        if self.uneven() {
            return self.pages as u16;
        }
        let mp = match self.read_max_pages {
            0 => self.max_pages,
            r => r,
        };
        let pages = (mp as u16).min(self.limit_pages(false).unwrap_or(u16::MAX));
        pages.saturating_mul(self.per_page())
    }

    /// Task `i` as the catalogue writes it: positions in units (`2u+1u`)
    /// when a page has several.
    pub fn task_text(&self, i: usize) -> String {
        let text = self.tasks[i].to_string();
        let kind = text.split_whitespace().next().unwrap_or("");
        if !self.sub_page() || super::config::TARGETS_TASK.contains(&kind) {
            return text;
        }
        let mut out: Vec<String> = Vec::new();
        for (k, w) in text.split_whitespace().enumerate() {
            let numeric = w.chars().next().is_some_and(|c| c.is_ascii_digit());
            out.push(if k > 0 && numeric {
                w.split('+')
                    .map(|x| format!("{x}u"))
                    .collect::<Vec<_>>()
                    .join("+")
            } else {
                w.to_string()
            });
        }
        out.join(" ")
    }

    /// One-line errors for sub-page configurations the kernel cannot
    /// produce or the model does not cover.
    pub(super) fn validate_subpage(&self) -> Result<(), String> {
        let sub = &self.sub;
        self.validate_layout()?;
        if !PAGE_SIZES.contains(&sub.page_size) {
            return Err(format!(
                "page_size {}: the modelled page sizes are 4096, 16384 and 65536 bytes",
                sub.page_size
            ));
        }
        let u = sub.units_per_page;
        if ![1, 2, 4].contains(&u) {
            return Err(format!("units_per_page is 1, 2 or 4, got {u}"));
        }
        if u > 1 && !matches!(self.kernel, Kernel::T | Kernel::T2) {
            return Err(
                "units_per_page > 1 is modelled for T and T2 (C has iomap blocks: blocks_per_page)"
                    .into(),
            );
        }
        // T and T2's folio writeback: state L's temp pages and rb-tree
        // (`check --with temp_pages`) are modelled a page at a time
        if u > 1 && self.variant.temp_pages {
            return Err(
                "units_per_page > 1 is modelled for T and T2's writeback, not with temp_pages (state L)"
                    .into(),
            );
        }
        if u > 1 {
            for t in &self.tasks {
                // (a plain MAP_SHARED store is modelled: `mmap 2u`, a6)
                if matches!(
                    t,
                    super::config::TaskSpec::Gup { .. } | super::config::TaskSpec::DioMmap { .. }
                ) {
                    return Err(format!(
                        "task '{t}': with units_per_page > 1, direct I/O into a mapping is not modelled (a plain store is: mmap 2u)"
                    ));
                }
            }
        }
        if self.tree().iomap_reads() && self.limit_pages(false) == Some(0) {
            // fuse_readahead's max_read / PAGE_SIZE = 0 is the folio loop
            // of 6.16 - 6.18.y (T, T17, T2); 6.19 reads through iomap
            // (4ea907108a5c), whose fuse_handle_readahead puts the first
            // range in a READ whatever max_read is: no oops, a READ over
            // max_read. T19 and C narrate the folio loop's mechanics.
            return Err(format!(
                "max_read_bytes {} below page_size {} is modelled up to 6.18 (T, T17, T2): 6.19+ reads through iomap (4ea907108a5c), whose readahead sends the page over max_read where the older fuse_readahead loop oopses",
                sub.max_read_bytes.unwrap_or(0),
                sub.page_size
            ));
        }
        for (what, b, who) in [
            (
                "max_read_bytes",
                sub.max_read_bytes,
                "fuse_fill_super_common: the mount option",
            ),
            (
                "max_write_bytes",
                sub.max_write_bytes,
                "process_init_reply: the server's INIT reply",
            ),
        ] {
            let Some(b) = b else { continue };
            if b < MIN_LIMIT {
                return Err(format!(
                    "{what} {b}: the kernel raises it to {MIN_LIMIT} ({who}, max_t(unsigned int, 4096, ...)); no mount has less"
                ));
            }
            if b % self.unit_bytes() != 0 && !self.uneven() {
                return Err(format!(
                    "{what} {b} is not a whole number of model positions ({} bytes): make them smaller with {}",
                    self.unit_bytes(),
                    match self.kernel {
                        Kernel::C => "blocks_per_page (C: fuseblk blocks)",
                        Kernel::T | Kernel::T2 => "units_per_page",
                        Kernel::L => "units_per_page, which is modelled for T and T2, not L",
                    }
                ));
            }
        }
        Ok(())
    }
}

/// Narration with units smaller than a page: the sentences of narrate.rs
/// and the requests' labels print sizes as `3p` and positions as `page
/// 3`, which with `units_per_page` > 1 are units. Rewrites a size
/// (`size=3p`, `i_size is 3p`, `truncation to 3p`, `became 3p`) to `3u`
/// and `page 3` to `unit 3`; limits counted in pages (`max_pages 1p`)
/// stay pages.
pub fn unit_words(text: &str) -> String {
    const SIZE_BEFORE: &[&str] = &["size=", "size is ", "size ", "became ", "truncation to "];
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        // copy up to the next digit run (digits are ASCII: the slices end
        // on character boundaries)
        let Some(d) = text[i..].find(|c: char| c.is_ascii_digit()) else {
            out.push_str(&text[i..]);
            break;
        };
        out.push_str(&text[i..i + d]);
        i += d;
        let j = (i..b.len())
            .find(|&k| !b[k].is_ascii_digit())
            .unwrap_or(b.len());
        if i > 0 && b[i - 1].is_ascii_alphanumeric() {
            // part of a word (p0, v15, T0)
            out.push_str(&text[i..j]);
            i = j;
            continue;
        }
        let head = &text[..i];
        let ends_word = |k: usize| k >= b.len() || !b[k].is_ascii_alphanumeric();
        if j < b.len()
            && b[j] == b'p'
            && ends_word(j + 1)
            && SIZE_BEFORE.iter().any(|w| head.ends_with(w))
        {
            out.push_str(&text[i..j]);
            out.push('u');
            i = j + 1;
            continue;
        }
        if head.ends_with("page ") && !head.ends_with("_page ") && ends_word(j) {
            // `page 3` → `unit 3` ("page " is the last five bytes of out)
            out.truncate(out.len() - "page ".len());
            out.push_str("unit ");
        }
        out.push_str(&text[i..j]);
        i = j;
    }
    out
}

impl FuseModel {
    /// A narration sentence in the model's positions (`unit_words` when a
    /// page has several units).
    pub fn positions_text(&self, text: String) -> String {
        if self.cfg.sub_page() {
            unit_words(&text)
        } else {
            text
        }
    }

    /// Model positions per kernel page.
    pub fn per_page(&self) -> u8 {
        self.cfg.per_page() as u8
    }

    /// The first position of the page holding position `p`.
    pub fn page_start(&self, p: u8) -> u8 {
        self.lay.page_start[p as usize]
    }

    /// One step of write(2) into folio `f` (position `p` of the write
    /// `first..first+n`) when the write does not cover the whole folio
    /// (units_per_page > 1): fuse_write_begin, the copy, fuse_write_end.
    /// `None`: the task waits.
    pub(super) fn op_copy_partial(
        &self,
        s: &mut State,
        t: usize,
        p: usize,
        first: u8,
        n: u8,
    ) -> Option<Step> {
        let f = self.folio(p);
        let hi = ((first + n) as usize).min(f.end);
        let task = s.tasks[t];
        if task.ph == PH_WB_READ {
            // fuse_do_readfolio waits for its READ's reply (folio locked)
            if task.reply == NONE {
                return None;
            }
            if task.reply == REPLY_ERR {
                // the READ failed: write_begin returns -EIO, the folio is
                // unlocked and put (it stays cached, not uptodate);
                // generic_perform_write stops, and fuse_cache_write_iter
                // still ends with inode_unlock: on to the program's last
                // op (UnlockReturn), which closes the write's window over
                // what it copied before
                self.folio_clear(s, p, PG_LOCKED);
                s.tasks[t].reply = NONE;
                s.tasks[t].ph = 0;
                s.tasks[t].pc = self.programs[t].len() as u8 - 1;
                return Some(Step::ReadError);
            }
            self.short_read(s, t, f.start);
            self.folio_set(s, p, PG_UPTODATE);
            s.tasks[t].reply = NONE;
            s.tasks[t].ph = 0;
            // the folio stays locked: copy and write_end in this step
            self.copy_units(s, t, p, hi, first, n);
            return Some(Step::WriteBeginRead);
        }
        if s.pages[f.start].locked() {
            return None; // __filemap_get_folio(FGP_WRITEBEGIN): folio_lock
        }
        let whole = p == f.start && hi == f.end;
        let uptodate = s.pages[f.start].present() && self.folio_not_uptodate(s, p).is_none();
        if !whole && !uptodate {
            self.folio_set(s, p, PG_PRESENT);
            if s.i_size as usize > f.start && !self.cfg.variant.mut_wb_no_read {
                // fuse_write_begin: "if (fsize <= folio_pos(folio))" fails:
                // fuse_do_readfolio, a synchronous READ of the folio
                self.folio_set(s, p, PG_LOCKED);
                self.read_folio_send(s, t, f.start);
                s.tasks[t].ph = PH_WB_READ;
                return Some(Step::WriteBeginSendRead);
            }
            // the folio starts at or beyond EOF: no READ. write_begin zeroes
            // the head before the write, write_end the tail after it
            // (folio_zero_segment), then marks the folio uptodate
            for q in f.clone() {
                if q < p || q >= hi {
                    s.pages[q].ver = if self.cfg.variant.mut_no_eof_zero {
                        // (the mutant: the folio's memory as allocated,
                        // not any version of the file's data)
                        NONE
                    } else {
                        self.last_zeros(s.hist[q])
                    };
                }
            }
            self.folio_set(s, p, PG_UPTODATE);
            s.ev = Event::EofZero;
        }
        self.copy_units(s, t, p, hi, first, n);
        Some(Step::CopyPage)
    }

    /// fuse_do_setattr extended the file from `old` to `new` units. The
    /// cached units in between, the tail of the old EOF folio, hold zeros
    /// unless a store through a mapping put data there while they lay
    /// beyond EOF (a short READ, fuse_write_begin and
    /// truncate_inode_partial_folio zero them otherwise). The server's
    /// file now has this truncation's zeros there (daemon.rs), so cached
    /// zero units are relabelled to them: the same bytes (without the
    /// relabelling, the WRITE that carries those zeros was judged older
    /// than the truncation: a2, a3, b3).
    ///
    /// Stored data is left as it is: fuse_do_setattr zeroes nothing in
    /// [oldsize, size). After `i_size_write(inode, outarg.attr.size)` it
    /// runs `truncate_pagecache(inode, outarg.attr.size);
    /// invalidate_inode_pages2(mapping);` only (read at 2396356a945b and
    /// c0c5ee6f9104; the same lines in every fuse_do_setattr of the
    /// source index): truncate_pagecache removes folios from the new
    /// size on, and invalidate_inode_pages2 launders the dirty EOF folio
    /// with the new i_size as the crop. pagecache_isize_extended, which
    /// zeroes a dirty EOF folio's [from, to) since 52aecaee1c26, is not
    /// called by fuse_do_setattr; iomap_write_iter calls it for 6.17+
    /// writeback_cache writes, where it returns early: `if (from >= to ||
    /// bsize >= PAGE_SIZE) return;` with i_blkbits = PAGE_SHIFT
    /// (542ede096e48). Upstream 34b5c4a6e4fb (7.3-rc1) adds the zeroing
    /// (truncate_pagecache_range on the exposed range); no state here
    /// has it.
    /// An earlier version of this comment said Debian 6.12.117 zeroes the
    /// range with truncate_pagecache_range(inode, oldsize, size - 1); no
    /// such tree was found, and 6.18.44 does not (F-mmap-eof-extend).
    pub(super) fn extend_in_folio(&self, s: &mut State, t: usize, old: u8, new: u8) {
        if !self.cfg.sub_page() {
            return;
        }
        let vt = self.ver(t);
        for q in old as usize..(new as usize).min(self.cfg.pages as usize) {
            if s.pages[q].present() && self.is_zeros(s.pages[q].ver) {
                s.pages[q].ver = vt;
            }
        }
    }

    /// Are stores through a mapping below a page modelled here (a6's
    /// ghost `ext0` is kept)? Only then, so that every other
    /// configuration's states are as before.
    pub(super) fn eof_stores(&self) -> bool {
        self.cfg.sub_page()
            && self
                .cfg
                .tasks
                .iter()
                .any(|t| matches!(t, TaskSpec::Mmap { .. } | TaskSpec::EnvAccess { .. }))
    }

    /// a6's ghost after a step of task `t` (`None`: a daemon step) from
    /// `s0`: a unit whose current data became a write's (not zeros)
    /// inside the file is written, so no longer judged; an extension of
    /// i_size by write(2), a direct write or ftruncate exposes the units
    /// in [old EOF, new EOF) that the operation does not write itself
    /// (POSIX: "the extended area shall appear as if it were
    /// zero-filled"; a write past EOF leaves a hole that reads as zeros);
    /// units at or beyond i_size are not judged.
    pub(super) fn eof_ghost(&self, s0: &State, s: &mut State, t: Option<usize>) {
        for q in 0..self.cfg.pages as usize {
            if s.hist[q] != s0.hist[q]
                && (q as u8) < s.i_size
                && !self.is_zeros(hist_cur(s.hist[q]))
            {
                s.ext0 &= !(1 << q);
            }
        }
        if let Some(t) = t {
            if s.i_size > s0.i_size {
                let own = match self.cfg.tasks[t] {
                    TaskSpec::Write { first, n }
                    | TaskSpec::DioWrite { first, n, .. }
                    | TaskSpec::OdirectWrite { first, n, .. } => Some(first..first + n),
                    TaskSpec::Truncate { .. } => Some(0..0),
                    // (other size changes, e.g. a NOTIFY_STORE, take the
                    // server's word for the range)
                    _ => None,
                };
                if let Some(own) = own {
                    for q in s0.i_size..s.i_size {
                        if !own.contains(&q) {
                            s.ext0 |= 1 << q;
                        }
                    }
                }
            }
        }
        s.ext0 &= low_mask(s.i_size);
    }

    /// a6 at a page-cache read of unit `p`: data that is not zeros in a
    /// range an extension exposed (read.rs check_cache_read).
    pub(super) fn check_eof_read(&self, s: &mut State, p: usize) {
        if s.ext0 & (1 << p) != 0 && !self.is_zeros(s.pages[p].ver) {
            s.viol2 |= VIOL2_EOF_ZERO;
        }
    }

    /// The copy and fuse_write_end for positions `p..hi` of one locked
    /// uptodate folio: the folio is dirtied whole, i_size extended to the
    /// write's end in this folio, the folio unlocked.
    fn copy_units(&self, s: &mut State, t: usize, p: usize, hi: usize, first: u8, n: u8) {
        let ver = self.ver(t);
        for q in p..hi {
            s.pages[q].ver = ver;
            s.hist[q] = hist_push(s.hist[q], ver);
        }
        self.folio_set(s, p, PG_PRESENT | PG_UPTODATE | PG_DIRTY);
        self.folio_clear(s, p, PG_LOCKED | self.write_dirty_clears());
        s.i_size = s.i_size.max(hi as u8);
        let done = hi as u8 - first;
        if done >= n {
            self.advance(s, t);
        } else {
            s.tasks[t].cur = done;
        }
    }
}
