//! Buffered readers: filemap_read (read(2); sendfile and splice from the
//! file take the same path), the page-cache lookup of filemap_fault, and
//! how a miss is filled: page_cache_sync_ra / do_sync_mmap_readahead →
//! page_cache_ra_unbounded (locked, not uptodate folios added) →
//! fuse_readahead (background READs; fuse_readpages_end in the daemon
//! marks them uptodate and unlocks them), or read_folio
//! (fuse_read_folio → fuse_do_readfolio, a synchronous READ with the folio
//! locked). State L waits on the rb-tree in both, as fuse_readahead and
//! fuse_do_readfolio did before 0c58a97f919c removed the tree.
//!
//! Phases of a lookup (`Task::ph`): `PH_GET` is filemap_get_pages from the
//! top, `PH_RA_ADD` page_cache_ra_unbounded's loop over the window (one
//! folio per step), `PH_RA` fuse_readahead with folios of a batch left to
//! send (`PH_RA_GET` when its next READ waits in fuse_get_req),
//! `PH_RA_DONE` the rest of the call after readahead, `PH_FOLIO_L` (L)
//! read_folio holding the folio lock while the rb-tree covers it,
//! `PH_FOLIO` waiting for the read_folio READ's reply.

use super::config::{low_mask, PageMask};
use super::model::{pages_mask, FuseModel};
use super::state::*;
use super::step::Step;

pub(super) const PH_GET: u8 = 0;
pub(super) const PH_RA: u8 = 1;
pub(super) const PH_RA_DONE: u8 = 2;
pub(super) const PH_FOLIO_L: u8 = 3;
pub(super) const PH_FOLIO: u8 = 4;
pub(super) const PH_RA_ADD: u8 = 5;
/// fuse_readahead past its congestion check (and L's writeback wait) for
/// its next READ, waiting in fuse_get_req while fc->blocked: when it
/// wakes it sends that READ without checking again.
pub(super) const PH_RA_GET: u8 = 6;

/// The readahead window in bytes: ra->ra_pages for a FUSE bdi is
/// VM_READAHEAD_PAGES = SZ_128K / PAGE_SIZE (32 pages of 4 KiB, 2 of 64
/// KiB). Every window the model computes covers the model's pages up to
/// EOF, except a standalone small random read.
pub const RA_BYTES: u32 = 128 * 1024;

/// A readahead window: model positions `lo..hi` (clamped to EOF when
/// page_cache_ra_unbounded's loop is set up, `readahead`), ra->async_size
/// (the lookahead: fuse_readahead's congestion check and the mark), the
/// window in kernel pages (`kstart`, `ksize`: where the mark goes), the
/// read's end in kernel pages (`last`, filemap_get_pages' last_index: an
/// async readahead's req_count), and whether the reading file keeps it as
/// its file->f_ra (`keep`: page_cache_sync_ra's initial and prev-miss
/// windows; not a standalone read, not a fault, whose file the model does
/// not keep).
///
/// `ra_asz` is what fuse_readahead's congestion check reads,
/// rac->ra->async_size, as of the window's setup: `asz` for a window the
/// file keeps, but the file's older async_size for one that leaves
/// file->f_ra alone (a standalone read, force_page_cache_ra), whose
/// lookahead `asz` is 0. Found by an attack on FMODE_RANDOM (4 Dec
/// 2026): before, such a window read 0 there and was never skipped while
/// congested. (For an open shared by `fd=F` the check reads the file's
/// value again when the READ goes out: `ra_send`.)
#[derive(Clone, Copy)]
pub(super) struct Window {
    pub lo: u8,
    pub hi: u8,
    pub asz: u8,
    pub ra_asz: u8,
    pub kstart: u32,
    pub ksize: u32,
    pub last: u32,
    pub keep: bool,
}

/// The outcome of one lookup step.
pub(super) enum Got {
    /// The step did something and the lookup goes on.
    Step(Step),
    /// The folio is uptodate: the caller copies or maps it in this step.
    Ready,
}

/// get_next_ra_size(ra, max) of mm/readahead.c, of a window of `cur`
/// pages.
fn next_ra_size(cur: u32, max: u32) -> u32 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

/// get_init_ra_size(size, max) of mm/readahead.c.
fn init_ra_size(req: u8, max: u8) -> u8 {
    let size = (req.max(1) as u16).next_power_of_two().min(255) as u8;
    if size <= max / 32 {
        size * 4
    } else if size <= max / 4 {
        size * 2
    } else {
        max
    }
}

/// ondemand_readahead's `readit:` (ra_ondemand, 6.1 - 6.10): "Will this
/// read hit the readahead marker made by itself? If so, trigger the
/// readahead marker hit now, and merge the resulted next readahead
/// window into the current one": `index == ra->start && ra->size ==
/// ra->async_size`. Both callers pass a window of `size` whose
/// async_size is its size, so it merges when it starts at the index
/// (`at_index`): it grows by get_next_ra_size, or becomes max_pages
/// with async_size max_pages / 2. Returns (size, async_size).
fn ondemand_merge(at_index: bool, size: u32, max: u32) -> (u32, u32) {
    if !at_index {
        return (size, size);
    }
    let add = next_ra_size(size, max);
    if size + add <= max {
        (size + add, add)
    } else {
        (max, max / 2)
    }
}

impl FuseModel {
    /// ra->ra_pages in kernel pages.
    fn ra_pages(&self) -> u8 {
        (RA_BYTES / self.cfg.sub.page_size) as u8
    }

    /// Kernel pages before model page `p`: `Config::real_pages` (trace
    /// conformance), or, with units smaller than a page, `p / U`.
    fn real_start(&self, p: u8) -> u32 {
        self.lay.kpage[p as usize]
    }

    /// The model pages covering real pages `a..b`: `(lo, hi)`, a page
    /// partly inside counted in.
    fn model_span(&self, a: u32, b: u32) -> (u8, u8) {
        let n = self.cfg.pages;
        let u = self.cfg.sub.units_per_page.max(1) as u32;
        if u > 1 {
            let lo = (a * u).min(n as u32) as u8;
            return (lo, (b * u).min(n as u32) as u8);
        }
        if a >= self.lay.kpage[n as usize] {
            // a window that starts past the last position holds none
            // (before 4 Dec 2026 it took the last position, which the
            // EOF clamp did not remove when the file reached it)
            return (n, n);
        }
        // (the first position of a page: uneven positions share pages)
        let lo = (0..n)
            .rev()
            .find(|&q| self.real_start(q) <= a && self.page_start(q) == q)
            .unwrap_or(0);
        let hi = (0..n).find(|&q| self.real_start(q) >= b).unwrap_or(n);
        (lo, hi)
    }

    /// The open file of read task `t` whose readahead state the model
    /// keeps (`read A+N fd=F`); `None`: a fresh open of its own.
    fn read_fd(&self, t: usize) -> Option<usize> {
        match self.cfg.tasks.get(t) {
            Some(super::config::TaskSpec::Read { fd: Some(f), .. }) => Some(*f as usize),
            _ => None,
        }
    }

    /// filemap_read's last act, `ra->prev_pos = last_pos`: the end of
    /// what task `t` copied, model position `end` (nothing copied: the
    /// file's prev_pos stays).
    fn set_prev_pos(&self, s: &mut State, t: usize, copied: bool, end: u8) {
        if let (Some(f), true) = (self.read_fd(t), copied) {
            s.ra_prev[f] = end + 1;
        }
    }

    /// `index - prev_index <= 1UL` of page_cache_sync_ra for task `t`'s
    /// miss at page `p`, with prev_index from its open file's prev_pos
    /// (never for a fresh open: prev_pos = -1, unless
    /// ra_prev_pos_each_copy set it earlier in the same read).
    fn sequential_miss(&self, s: &State, t: usize, p: u8) -> bool {
        if self.cfg.variant.ra_prev_pos_each_copy && self.read_fd(t).is_none() && s.tasks[t].cur > 0
        {
            // 6.1 - 6.5: the read's own copy of the position before set
            // prev_pos (a read with `fd=F` keeps it in its file's state)
            return true;
        }
        let start = self.real_start(p);
        self.read_fd(t).is_some_and(|f| {
            let prev = s.ra_prev[f];
            prev != 0 && start.wrapping_sub(self.real_start(prev - 1)) <= 1
        })
    }

    /// page_cache_sync_ra for a read(2) miss at page `p` with `req` pages
    /// of the request left by task `t`: the window `lo..hi` in model pages
    /// (clamped to EOF later) and ra->async_size. The arithmetic is in
    /// 4 KiB pages. A start of file, an oversized read or a sequential
    /// cache miss (`!index || req_count > max_pages || index - prev_index
    /// <= 1UL`, prev_index = ra->prev_pos >> PAGE_SHIFT) takes the
    /// initial window; prev_pos is the open file's (`fd=F`), or -1 for a
    /// read on a fresh open of its own (prev_index = ULONG_MAX >>
    /// PAGE_SHIFT: the subtraction wraps, never <= 1). max_pages is
    /// ractl_max_pages: ra_pages, as a FUSE bdi's io_pages is no more
    /// (bdi_init's VM_READAHEAD_PAGES). Until 4 Dec 2026 an oversized
    /// read away from offset 0 took the prev-miss path (M-ra-oversized).
    /// page_cache_prev_miss looks back at most max_pages (since 4 Dec
    /// 2026: before, every cached page before the miss counted, which
    /// async readahead turned into false VIOLATIONs, M-ra-async).
    fn read_window(&self, s: &State, t: usize, p: u8, req: u8) -> Window {
        let start = self.real_start(p);
        // req_count = DIV_ROUND_UP(pos + count, PAGE_SIZE) - index: the
        // kernel pages the read touches (a read ending inside a page
        // counts it)
        let req = self.kpage_end(p + req) - start;
        let oversized = req > self.ra_pages() as u32;
        let last = start + req;
        if self.random_read(t) {
            return self.forced_window(s, t, p, start, req, last);
        }
        if let Some(win) = self.ondemand_sync(s, t, start, last) {
            return win;
        }
        let (w, asz) = if start == 0 || oversized || self.sequential_miss(s, t, p) {
            // start of file, an oversized read, or a sequential miss: the
            // initial window
            let w = init_ra_size(req.min(255) as u8, self.ra_pages()) as u32;
            (w, if w > req { w - req } else { w / 2 })
        } else {
            // page_cache_prev_miss: cached pages right before p's page,
            // in kernel pages (several positions may share one)
            let mut q = self.page_start(p) as usize;
            while q > 0 && s.pages[q - 1].present() {
                q -= 1;
            }
            let cached = start - self.real_start(q as u8);
            // page_cache_prev_miss(mapping, index - 1, max_pages) looks
            // at index - 1 down to index - max_pages: a gap there gives
            // contig_count = the cached pages; none gives index -
            // max_pages, contig_count = max_pages - 1; ULONG_MAX (the scan
            // passed page 0, cached: index < max_pages) gives index
            let max = self.ra_pages() as u32;
            let from_start = q == 0 && start < max;
            let mut contig = if from_start {
                start
            } else {
                cached.min(max - 1)
            };
            if contig <= req {
                // standalone small random read: read as is, the (fresh)
                // readahead state keeps async_size 0
                (req, 0)
            } else {
                if from_start {
                    // "File cached from the beginning" (miss ==
                    // ULONG_MAX)
                    contig *= 2;
                }
                ((contig + req).min(self.ra_pages() as u32), 1)
            }
        };
        let (_, hi) = self.model_span(start, start + w);
        let asz = asz.min(255) as u8;
        Window {
            lo: p,
            hi,
            asz,
            // (a standalone read leaves the file's async_size as it was)
            ra_asz: if asz != 0 {
                asz
            } else {
                self.ra_state(s, t).asz
            },
            kstart: start,
            ksize: w,
            last,
            // "Standalone, small random read. Read as is, and do not
            // pollute the readahead state."
            keep: asz != 0,
        }
    }

    /// Read task `t`'s open file has FMODE_RANDOM (`read A+N random`).
    pub(super) fn random_read(&self, t: usize) -> bool {
        matches!(
            self.cfg.tasks.get(t),
            Some(super::config::TaskSpec::Read { random: true, .. })
        )
    }

    /// page_cache_sync_ra with FMODE_RANDOM ("be dumb", 6.1 and 6.18
    /// alike): force_page_cache_ra(ractl, req_count) reads the request
    /// from the miss at kernel page `start`, at most max(io_pages,
    /// ra_pages) = ra_pages pages, in one do_page_cache_ra chunk (2 MiB
    /// is more than any ra_pages here) with lookahead_size 0: no
    /// PG_readahead mark, and file->f_ra is not touched (fuse_readahead's
    /// congestion check reads its older async_size). The read's
    /// prev_pos is still set by filemap_read, and a folio an earlier
    /// window marked still starts page_cache_async_ra, which does not
    /// look at FMODE_RANDOM.
    fn forced_window(&self, s: &State, t: usize, p: u8, start: u32, req: u32, last: u32) -> Window {
        let w = req.min(self.ra_pages() as u32);
        let (_, hi) = self.model_span(start, start + w);
        Window {
            lo: p,
            hi,
            asz: 0,
            ra_asz: self.ra_state(s, t).asz,
            kstart: start,
            ksize: w,
            last,
            keep: false,
        }
    }

    /// ondemand_readahead's sync miss (ra_ondemand: 6.1 - 6.10) at kernel
    /// page `start`, not the file's first, of a read ending at `last`:
    /// "It's the expected callback index, assume sequential access. Ramp
    /// up sizes, and push forward the readahead window" when `start` is
    /// ra->start + ra->size - ra->async_size or ra->start + ra->size,
    /// checked before the oversized read and the sequential miss. The
    /// window starts at ra->start + ra->size: at the expected index of a
    /// window with async_size > 0 it does not hold the miss, which
    /// filemap_get_pages then reads alone (filemap_create_folio), the
    /// case "readahead: Make sure sync readahead reads needed page"
    /// (6.11) removed. `None`: another path, or ra_ondemand off.
    fn ondemand_sync(&self, s: &State, t: usize, start: u32, last: u32) -> Option<Window> {
        if !self.cfg.variant.ra_ondemand || start == 0 {
            return None;
        }
        let w = self.ra_state(s, t);
        let end = w.start + w.size as u32;
        if start != end - (w.asz as u32).min(w.size as u32) && start != end {
            return None;
        }
        let max = self.ra_pages() as u32;
        let size = (w.size as u32).max(next_ra_size(w.size as u32, max));
        let (size, asz) = ondemand_merge(start == end, size, max);
        let (lo, hi) = self.model_span(end, end + size);
        Some(Window {
            lo,
            hi,
            asz: asz.min(255) as u8,
            ra_asz: asz.min(255) as u8,
            kstart: end,
            ksize: size,
            last,
            keep: true,
        })
    }

    /// A miss: page_cache_sync_ra (read(2)) or do_sync_mmap_readahead
    /// (a fault) sets the window `lo..hi`, clamped to EOF as
    /// do_page_cache_ra does once, before page_cache_ra_unbounded's loop;
    /// the loop runs one folio per step (`ra_add`). `asz` is
    /// ra->async_size for fuse_readahead's congestion check.
    fn readahead(&self, s: &mut State, t: usize, win: &Window) -> Step {
        if win.keep {
            // page_cache_sync_ra: ra->start, ra->size, ra->async_size
            // (ra->order = 0)
            self.set_ra_state(
                s,
                t,
                RaWin {
                    start: win.kstart,
                    size: win.ksize.min(255) as u8,
                    asz: win.asz,
                },
            );
        }
        self.ra_loop(s, t, win);
        Step::RaWindow
    }

    /// do_page_cache_ra's clamp to EOF, then page_cache_ra_unbounded's
    /// loop over the window's folios (`ra_add`, one per step) with the
    /// folio it marks PG_readahead (`Task::ra_mark`). Returns whether
    /// the window holds a folio to add.
    fn ra_loop(&self, s: &mut State, t: usize, win: &Window) -> bool {
        self.note_cuts(s, win);
        let hi = win.hi.min(s.i_size).min(self.cfg.pages);
        let mut todo: PageMask = 0;
        let mut absent = false;
        let mut p = self.folio(win.lo as usize).start;
        while p < hi as usize {
            let f = self.folio(p);
            absent |= !s.pages[f.start].present();
            for q in f.clone() {
                todo |= 1 << q;
            }
            p = f.end;
        }
        let mark = self.ra_mark(s, win);
        let task = &mut s.tasks[t];
        task.ra = 0;
        task.ra_todo = todo;
        task.ra_mark = mark;
        task.saved = win.ra_asz;
        task.ph = if todo == 0 { PH_RA_DONE } else { PH_RA_ADD };
        absent
    }

    /// The edges of window `win` after do_page_cache_ra's clamp to EOF,
    /// and its mark, that lie strictly inside a position of several
    /// kernel pages not cached: where the kernel would add part of the
    /// position and the model adds it whole (cuts.rs, for conformance's
    /// refinement). Arithmetic only unless one is found.
    fn note_cuts(&self, s: &State, win: &Window) {
        if s.i_size == 0 {
            return;
        }
        let end_index = self.kpage_end(s.i_size) - 1;
        if win.kstart > end_index {
            return;
        }
        let ke = (win.kstart + win.ksize).min(end_index + 1);
        let nr = ke - win.kstart;
        let la = win.asz as u32;
        let mark = (la != 0 && la <= nr).then(|| win.kstart + nr - la);
        for k in [Some(win.kstart), Some(ke), mark].into_iter().flatten() {
            if let Some(q) = self.folio_of_kpage(k) {
                if self.real_start(q) < k && !s.pages[q as usize].present() {
                    super::cuts::note(k);
                }
            }
        }
    }

    /// page_cache_ra_unbounded's `mark` for window `win` after
    /// do_page_cache_ra's clamp to the page of the file's last byte
    /// (`nr_to_read = end_index - index + 1`; lookahead_size is not
    /// clamped): the folio at `nr_to_read - lookahead_size`, if the
    /// lookahead fits, as a model position + 1 (0: none). Only a folio
    /// the loop adds gets it (`ra_add`).
    fn ra_mark(&self, s: &State, win: &Window) -> u8 {
        if s.i_size == 0 {
            return 0;
        }
        let end_index = self.kpage_end(s.i_size) - 1;
        if win.kstart > end_index {
            return 0;
        }
        let nr = win.ksize.min(end_index - win.kstart + 1);
        let la = win.asz as u32;
        if la == 0 || la > nr {
            return 0;
        }
        self.folio_of_kpage(win.kstart + nr - la)
            .map_or(0, |q| q + 1)
    }

    /// The first position of the folio holding kernel page `k` (`None`:
    /// past the model's positions).
    fn folio_of_kpage(&self, k: u32) -> Option<u8> {
        let q = (0..self.cfg.pages)
            .rev()
            .find(|&q| self.page_start(q) == q && self.real_start(q) <= k)?;
        (k < self.kpage_end(self.folio(q as usize).end as u8)).then_some(q)
    }

    /// The open file whose readahead state task `t` shares: a read's
    /// or a fault's `fd=F` (a fault's: the file its mapping was made
    /// from, vma->vm_file).
    fn ra_fd(&self, t: usize) -> Option<usize> {
        use super::config::TaskSpec;
        match self.cfg.tasks.get(t) {
            Some(TaskSpec::Fault { fd: Some(f), .. } | TaskSpec::EnvAccess { fd: Some(f), .. }) => {
                Some(*f as usize)
            }
            _ => self.read_fd(t),
        }
    }

    /// Whether task `t` keeps a readahead state: a read always (its
    /// `fd=F`'s or its own fresh open's), a fault (`fault`) only with
    /// `fd=F`. Without it a fault's ra->start, size and async_size read
    /// 0 and its read-around sets nothing (`mark_index`).
    fn keeps_ra(&self, t: usize, fault: bool) -> bool {
        !fault || self.ra_fd(t).is_some()
    }

    /// The readahead state task `t` reads: its file's if it keeps one
    /// (`keeps_ra`), else a fresh file's (all 0).
    fn fault_or_read_ra(&self, s: &State, t: usize, fault: bool) -> RaWin {
        if self.keeps_ra(t, fault) {
            self.ra_state(s, t)
        } else {
            RaWin::FRESH
        }
    }

    /// The readahead state of task `t`'s file: its `fd=F`'s, or the
    /// task's own file's.
    fn ra_state(&self, s: &State, t: usize) -> RaWin {
        match self.ra_fd(t) {
            Some(f) => s.ra_win[f],
            None => s.tasks[t].raw,
        }
    }

    fn set_ra_state(&self, s: &mut State, t: usize, w: RaWin) {
        match self.ra_fd(t) {
            Some(f) => s.ra_win[f] = w,
            None => s.tasks[t].raw = w,
        }
    }

    /// page_cache_next_miss(mapping, from, max): the first kernel page
    /// from `from` on that no folio holds, looking at `max` pages (`from
    /// + max` if all are cached; with ra_ondemand `from + max - 1`, the
    /// last page it looked at, as before "filemap: fix
    /// page_cache_next_miss() when no hole found", 6.11).
    fn next_miss(&self, s: &State, from: u32, max: u32) -> u32 {
        let mut k = from;
        while k < from + max {
            match self.folio_of_kpage(k) {
                Some(q) if s.pages[q as usize].present() => {
                    k = self.kpage_end(self.folio(q as usize).end as u8);
                }
                _ => return k,
            }
        }
        if self.cfg.variant.ra_ondemand {
            from + max - 1
        } else {
            from + max
        }
    }

    /// A lookup finds folio `p` marked PG_readahead: filemap_readahead
    /// → page_cache_async_ra (read(2), req_count = last_index -
    /// folio->index) or do_async_mmap_readahead (a fault, req_count =
    /// ra_pages). `None`: no mark, or the folio is under writeback ("Same
    /// bit is used for PG_readahead and PG_reclaim": the mark stays).
    /// Otherwise folio_clear_readahead and, on the expected callback
    /// index or a marked folio without valid readahead state, the next
    /// window: ra->order += 2 rounds its end down to a multiple of
    /// 1 << min(order, ffs(max_pages) - 1) pages (page_cache_ra_order
    /// sets ra->order back to 0 on a mapping without large folios, so
    /// order is 2 here), async_size = size, and page_cache_ra_order →
    /// do_page_cache_ra reads it as `readahead` does a miss's window.
    ///
    /// The mark's kernel page: the expected one (ra->start + ra->size -
    /// ra->async_size) when it lies in the folio, else the folio's first
    /// (a model position may span kernel pages; exact when it does not).
    /// A fault without `fd=F` keeps no readahead state in the model
    /// (its ra->start, size and async_size read 0, as a fresh file's):
    /// its mark takes the "no valid readahead state" path, which for the
    /// mark its own read-around window leaves (at pgoff + ra_pages / 4
    /// of a window ending at pgoff + ra_pages / 2) gives the window the
    /// expected path would, [pgoff + ra_pages / 2, + ra_pages). A fault
    /// with `fd=F` reads and sets that open file's state, which read(2)
    /// on the same file shares (file->f_ra).
    /// The kernel page of folio `p`'s PG_readahead mark as task `t`
    /// reading it sees it, and whether it is the expected callback index
    /// of its file's readahead state; `None`: no mark, or the folio is
    /// under writeback ("Same bit is used for PG_readahead and
    /// PG_reclaim": page_cache_async_ra returns, the mark stays). The
    /// model keeps one bit per folio: a position of several kernel pages
    /// has the mark at the expected index when that lies in it, else at
    /// its first page (exact for positions of one page).
    fn mark_index(&self, s: &State, t: usize, p: usize, fault: bool) -> Option<(u32, bool)> {
        let f = self.folio(p);
        if !s.pages[f.start].has(PG_READAHEAD) || s.pages[f.start].wb() {
            return None;
        }
        let w = self.fault_or_read_ra(s, t, fault);
        let (ka, kb) = (self.real_start(f.start as u8), self.kpage_end(f.end as u8));
        let end = w.start + w.size as u32;
        let expected = end.saturating_sub(w.asz as u32);
        Some(if (ka..kb).contains(&expected) {
            (expected, true)
        } else if self.cfg.variant.ra_ondemand && (ka..kb).contains(&end) {
            // ondemand_readahead: `index == expected || index ==
            // (ra->start + ra->size)`
            (end, true)
        } else {
            (ka, false)
        })
    }

    fn async_ra(
        &self,
        s: &mut State,
        t: usize,
        p: usize,
        fault: bool,
        win: &Window,
        index: u32,
        expected: bool,
    ) -> Step {
        s.pages[self.folio(p).start].clear(PG_READAHEAD);
        let max = self.ra_pages() as u32;
        let mut w = self.fault_or_read_ra(s, t, fault);
        let (start, size) = if expected {
            // the expected callback index: ramp up, push forward
            let size = (w.size as u32).max(next_ra_size(w.size as u32, max));
            (w.start + w.size as u32, size)
        } else {
            let req = if fault {
                max
            } else {
                win.last.saturating_sub(index)
            };
            let start = self.next_miss(s, index + 1, max);
            if start == 0 || start - index > max {
                return Step::RaAsync;
            }
            (start, next_ra_size(start - index + req, max))
        };
        // readit: ra->order += 2 (from 0), and since 6.17 the end rounded
        // down to 1 << min(order, ffs(max_pages) - 1) pages
        let align = if self.cfg.variant.ra_round_end {
            1u32 << 2u32.min(max.trailing_zeros())
        } else {
            1
        };
        let end = start + size;
        let aligned_end = end / align * align;
        let size = if aligned_end > start {
            size - (end - aligned_end)
        } else {
            size
        };
        // async_size = size; ondemand_readahead (6.1 - 6.10) merges the
        // next window into one that starts at the index: a marked folio
        // at ra->start + ra->size
        let (size, asz) = if self.cfg.variant.ra_ondemand {
            ondemand_merge(index == start, size, max)
        } else {
            (size, size)
        };
        w = RaWin {
            start,
            size: size.min(255) as u8,
            asz: asz.min(255) as u8,
        };
        if self.keeps_ra(t, fault) {
            self.set_ra_state(s, t, w);
        }
        let (lo, hi) = self.model_span(start, start + size);
        let next = Window {
            lo,
            hi,
            asz: w.asz,
            ra_asz: w.asz,
            kstart: start,
            ksize: size,
            last: win.last,
            keep: false,
        };
        if size > 0 && self.ra_loop(s, t, &next) {
            s.ev = Event::RaAsync;
        } else {
            // nothing to add: the lookup goes on from the top
            let task = &mut s.tasks[t];
            task.ra_todo = 0;
            task.ra_mark = 0;
            task.ph = PH_GET;
        }
        Step::RaAsync
    }

    /// One turn of page_cache_ra_unbounded's loop, at the window's next
    /// folio. There is no lock between two turns (the invalidate lock is
    /// shared), so another task may add a folio of the window meanwhile:
    /// - absent: filemap_add_folio, locked and not uptodate, into the
    ///   batch (the readahead_control);
    /// - present: "Kick off the current batch of contiguous pages before
    ///   continuing with the next batch": read_pages of the batch, if any.
    ///
    /// After the window's last folio read_pages submits the batch, in a
    /// step of its own (`ra_send`): another task may kick off a batch of
    /// its own in between, so either READ may go first (M-ra-batch). A
    /// kick at a present folio sends in the same step as its xa_load:
    /// another task's READ may still go before or after it.
    fn ra_add(&self, s: &mut State, t: usize) -> Step {
        let todo = s.tasks[t].ra_todo;
        let p = todo.trailing_zeros() as usize;
        let f = self.folio(p);
        let mut fmask: PageMask = 0;
        for q in f.clone() {
            fmask |= 1 << q;
        }
        s.tasks[t].ra_todo = todo & !fmask;
        let last = s.tasks[t].ra_todo == 0;
        let m = s.tasks[t].ra_mark;
        if last {
            s.tasks[t].ra_mark = 0; // the loop's last turn
        }
        if !s.pages[p].present() {
            self.folio_set(s, p, PG_PRESENT | PG_LOCKED);
            if m != 0 && f.contains(&(m as usize - 1)) {
                // "if (i == mark) folio_set_readahead(folio)"
                s.pages[f.start].set(PG_READAHEAD);
            }
            s.tasks[t].ra |= fmask;
            if last {
                s.tasks[t].ph = PH_RA; // read_pages(ractl), next step
            }
            return Step::RaAdd;
        }
        if s.tasks[t].ra == 0 {
            if last {
                s.tasks[t].ph = PH_RA_DONE;
            }
            return Step::RaPresent;
        }
        // read_pages(ractl): fuse_readahead over the batch
        s.ev = Event::RaKick;
        s.tasks[t].ph = PH_RA;
        self.ra_send(s, t);
        if s.tasks[t].ra == 0 {
            Step::RaSubmit
        } else {
            Step::RaPresent
        }
    }

    /// The batch is sent (or dropped): back to page_cache_ra_unbounded's
    /// loop if the window has folios left, else the rest of the lookup.
    fn ra_batch_done(&self, s: &mut State, t: usize) {
        s.tasks[t].ph = if s.tasks[t].ra_todo == 0 {
            PH_RA_DONE
        } else {
            PH_RA_ADD
        };
    }

    /// fuse_readahead over the task's unsent readahead folios, one run of
    /// contiguous folios (one read_pages batch) at a time: [L: wait until
    /// the rb-tree has no WRITE over the run]; per READ of at most
    /// max_pages: skip the rest when congested and only async folios are
    /// left; fuse_get_req (waits while fc->blocked); background READ.
    /// `None` when nothing could be done (the task waits).
    fn ra_send(&self, s: &mut State, t: usize) -> Option<Step> {
        let (mut sent, mut skipped) = (false, false);
        // the previous READ of this batch: its end and what
        // readahead_count(rac) still counts of it at the next check
        let mut prev: Option<(u8, u32)> = None;
        // woken in fuse_get_req: this READ passed its check
        let waited = s.tasks[t].ph == PH_RA_GET;
        let mut passed = waited;
        s.tasks[t].ph = PH_RA;
        let done = |sent: bool, skipped: bool| match (sent, skipped) {
            (true, _) => Some(Step::RaSend),
            (false, true) => Some(Step::RaSkip),
            _ => None,
        };
        loop {
            let mask = s.tasks[t].ra;
            if mask == 0 {
                self.ra_batch_done(s, t);
                return done(sent, skipped).or(Some(Step::RaSend));
            }
            let first = mask.trailing_zeros() as u8;
            let mut len = 0u8;
            while ((first + len) as u32) < PageMask::BITS && mask & (1 << (first + len)) != 0 {
                len += 1;
            }
            let v = &self.cfg.variant;
            if !passed
                && v.temp_pages
                && !v.mut_l_read_no_wait
                && pages_mask(first, len).any(|p| self.in_tree(s, p).is_some())
            {
                // L: wait_event(page_waitq, !fuse_range_is_writeback())
                return done(sent, skipped);
            }
            let left = self.real_start(first + len) - self.real_start(first);
            // readahead_count(rac) at the check: the pages left, and of
            // the previous READ of this batch what the rac has not yet
            // dropped (`prev`, below)
            let count = left + prev.filter(|&(end, _)| end == first).map_or(0, |(_, k)| k);
            // rac->ra->async_size now: an open shared by `fd=F` has the
            // file's current value (another reader's async readahead or
            // sync miss may have set it since this window was set up;
            // nothing locks f_ra between); else the window's, `saved`
            let asz = match self.ra_fd(t) {
                Some(f) => s.ra_win[f].asz,
                // a read's own file: its f_ra, which a skip of an earlier
                // batch of this window may have shrunk (ra_skip_shrinks;
                // else it is `saved`)
                None if self.ra_kept(t) => s.tasks[t].raw.asz,
                None => s.tasks[t].saved,
            };
            if !passed && self.congested(s) && asz as u32 >= count {
                // "Congested and only async pages left, so skip the
                // rest": read_pages drops the folios it was given
                for p in pages_mask(first, len) {
                    s.pages[p] = Page::default();
                }
                s.tasks[t].ra &= !(low_mask(len) << first);
                if self.cfg.variant.ra_skip_shrinks && self.ra_kept(t) {
                    // read_pages before 7a1eb89f7918: "The sizes in ->ra
                    // may be used to size the next readahead", ra->size
                    // and ra->async_size lose each folio left (asz >=
                    // count >= left: every folio is removed)
                    let mut w = self.ra_state(s, t);
                    w.size = (w.size as u32).saturating_sub(left) as u8;
                    w.asz = (w.asz as u32).saturating_sub(left) as u8;
                    self.set_ra_state(s, t, w);
                }
                skipped = true;
                continue;
            }
            // fuse_readahead: a READ of the whole folios that fit
            // min(max_pages, max_read) pages (model pages are blocks with
            // sub-page blocks)
            let (mut n, mut pos, mut last) = (0u8, first as usize, 0u32);
            while pos < (first + len) as usize {
                let f = self.folio(pos);
                if !self.ra_fits(first, f.end as u8) {
                    self.note_cap_inside(
                        first,
                        f.start as u8,
                        f.len() as u8,
                        self.cfg.read_max_kpages,
                    );
                    break;
                }
                n += f.len() as u8;
                last = self.real_start(f.end as u8) - self.real_start(f.start as u8);
                pos = f.end;
            }
            // held: a folio taken while the READ had room that did not
            // fit stays for the next READ. Without large folios (no FUSE
            // tree before the large-folio series) every folio is one
            // kernel page, whatever kernel pages a position stands for:
            // the last folio is 1 page and none is ever held
            let large = self.cfg.folio_pages > 1;
            let held = large && pos < (first + len) as usize && self.ra_room(first, n);
            if !large {
                last = 1;
            }
            if n == 0 {
                // a large folio that fits no READ (lfolio.rs): v5's guard
                // stops and read_pages unlocks the rest, not uptodate; the
                // merged code sends a READ with no folio
                if self.cfg.variant.lf_readahead_guard {
                    for p in pages_mask(first, len) {
                        s.pages[p].clear(PG_LOCKED);
                    }
                    s.tasks[t].ra = 0;
                    self.ra_batch_done(s, t);
                    return Some(Step::RaStop);
                }
                s.lf_viol |= VIOL_LF_EMPTY;
                s.tasks[t].pc = self.programs[t].len() as u8;
                return Some(Step::RaEmpty);
            }
            if self.bg_blocked(s) {
                // fuse_get_req: wait while fc->blocked, the check passed
                if waited && !sent && !skipped {
                    return None; // still waiting
                }
                s.tasks[t].ph = PH_RA_GET;
                return done(sent, skipped).or(Some(Step::RaGetWait));
            }
            passed = false;
            self.check_read_limits(s, first, n);
            // fuse_send_readpages: ia->read.attr_ver = fuse_get_attr_version()
            self.sample_attr(s, t);
            self.queue_background(
                s,
                Req::ReadPages {
                    task: t as u8,
                    first,
                    n,
                },
            );
            s.tasks[t].ra &= !(low_mask(n) << first);
            sent = true;
            // what the next check's readahead_count still counts of this
            // READ: with __readahead_batch (before the folio
            // conversion, 6.13) the whole READ, as _batch_count is
            // dropped at the next batch; with __readahead_folio its last
            // folio, dropped at the next call, unless a folio that did
            // not fit is held (it is the next READ's first)
            // iomap_readahead (C, 6.19) takes each folio with
            // readahead_folio before fuse_handle_readahead checks at the
            // next READ's first folio: nothing of the previous READ
            prev = Some((
                first + n,
                match (self.cfg.variant.ra_count_batch, held) {
                    _ if self.cfg.tree().iomap_reads() => 0,
                    (true, _) => self.real_start(first + n) - self.real_start(first),
                    (false, true) => 0,
                    (false, false) => last,
                },
            ));
        }
    }

    /// Whether task `t`'s readahead_control points at a file_ra_state
    /// the model keeps: a read's (its `fd=F`'s or its own file's), a
    /// fault's only with `fd=F` (`keeps_ra`).
    fn ra_kept(&self, t: usize) -> bool {
        use super::config::TaskSpec;
        match self.cfg.tasks.get(t) {
            Some(TaskSpec::Fault { .. } | TaskSpec::EnvAccess { .. }) => self.ra_fd(t).is_some(),
            _ => true,
        }
    }

    /// read_folio of block `q` (its folio unlocked): folio_lock, [L:
    /// fuse_do_readfolio waits on the rb-tree], a synchronous READ
    /// (fuse_simple_request) of the block.
    fn read_folio(&self, s: &mut State, t: usize, q: usize) -> Step {
        self.folio_set(s, q, PG_LOCKED);
        s.tasks[t].rd = q as u8;
        let v = &self.cfg.variant;
        if v.temp_pages && !v.mut_l_read_no_wait && self.in_tree(s, q).is_some() {
            s.tasks[t].ph = PH_FOLIO_L;
            return Step::ReadFolioLock;
        }
        self.read_folio_send(s, t, q);
        Step::ReadFolio
    }

    pub(super) fn read_folio_send(&self, s: &mut State, t: usize, q: usize) {
        // fuse_do_readfolio: attr_ver = fuse_get_attr_version()
        self.sample_attr(s, t);
        // one block, or a whole large folio (lfolio.rs)
        let (first, n) = self.read_folio_range(q);
        self.check_read_limits(s, first, n);
        s.tasks[t].rd = first;
        s.tasks[t].reply = NONE;
        s.tasks[t].ph = PH_FOLIO;
        if self.refuse_sync(s, t) {
            return; // after the abort: -ENOTCONN (transport.rs)
        }
        if !s.bg_q.is_empty() {
            s.ev = Event::BgOvertaken; // a foreground READ
        }
        self.pend_push(
            s,
            Req::Read {
                task: t as u8,
                first,
                n,
            },
        );
    }

    /// The READ reply of read_folio: the block (or large folio) is
    /// uptodate, the folio unlocked. `Err` when the READ failed (the folio
    /// stays not uptodate: filemap_read_folio returns -EIO), `Ok(true)`
    /// when it was short and fuse_read_update_size shrank i_size.
    fn read_folio_done(&self, s: &mut State, t: usize) -> Result<bool, ()> {
        let task = s.tasks[t];
        let q = task.rd as usize;
        if task.reply == REPLY_ERR {
            self.folio_clear(s, q, PG_LOCKED);
            s.tasks[t].reply = NONE;
            return Err(());
        }
        let short = self.short_read(s, t, q);
        if self.lf_folio_pages() > 1 {
            // the reply filled the whole folio (read_reply_into_folio)
            self.folio_set(s, q, PG_UPTODATE);
        } else {
            s.pages[q].ver = task.reply;
            s.pages[q].set(PG_UPTODATE);
        }
        self.folio_clear(s, q, PG_LOCKED);
        s.tasks[t].ph = PH_GET;
        s.tasks[t].reply = NONE;
        Ok(short)
    }

    /// One step of getting an uptodate folio for block `p` (`p` below
    /// EOF): filemap_get_pages for read(2) (`fault` false: an uptodate
    /// folio is copied even when locked, and a block that is uptodate in
    /// a partly uptodate folio is enough), filemap_fault's lookup
    /// (`fault` true: the folio is locked first, so a locked folio is
    /// waited for). `win` is the readahead window on a miss.
    pub(super) fn get_folio(
        &self,
        s: &mut State,
        t: usize,
        p: usize,
        fault: bool,
        win: Window,
    ) -> Option<Got> {
        let task = s.tasks[t];
        match task.ph {
            PH_FOLIO => {
                if task.reply == NONE {
                    return None;
                }
                return Some(Got::Step(match self.read_folio_done(s, t) {
                    Err(()) => {
                        // a fault: VM_FAULT_SIGBUS; read(2): -EIO, or
                        // what it copied before page p; filemap_read
                        // still ends with ra->prev_pos = last_pos, the
                        // end of that copy (read(2) only: faults have
                        // no fd, and task.cur counts a read's copies)
                        if !fault {
                            self.set_prev_pos(s, t, task.cur > 0, p as u8);
                        }
                        s.tasks[t].pc = self.programs[t].len() as u8;
                        if fault {
                            Step::Sigbus
                        } else {
                            Step::ReadError
                        }
                    }
                    Ok(true) if fault && self.page_start(p as u8) >= s.i_size => {
                        // filemap_fault re-checks i_size: the page now
                        // lies beyond EOF, SIGBUS (read(2) stops at the
                        // new EOF on its next lookup)
                        s.tasks[t].pc = self.programs[t].len() as u8;
                        Step::ShortRead
                    }
                    Ok(_) => Step::FaultReadDone,
                }));
            }
            PH_FOLIO_L => {
                let q = task.rd as usize;
                if self.in_tree(s, q).is_some() {
                    return None;
                }
                self.read_folio_send(s, t, q);
                return Some(Got::Step(Step::ReadFolio));
            }
            PH_RA | PH_RA_GET => return self.ra_send(s, t).map(Got::Step),
            PH_RA_ADD => return Some(Got::Step(self.ra_add(s, t))),
            _ => {}
        }
        if !s.pages[p].present() {
            if task.ph == PH_GET {
                return Some(Got::Step(self.readahead(s, t, &win)));
            }
            // readahead left no folio here (skipped while congested):
            // filemap_create_folio / __filemap_get_folio(FGP_CREAT), then
            // read_folio
            self.folio_set(s, p, PG_PRESENT);
            return Some(Got::Step(self.read_folio(s, t, p)));
        }
        // a folio marked PG_readahead: filemap_get_pages calls
        // filemap_readahead when the batch's last folio is marked
        // (filemap_get_read_batch stops at it), before
        // filemap_update_page waits for it; filemap_fault "found the
        // page, so try async readahead before waiting for the lock". A
        // mark inside a position of several kernel pages is reached once
        // the pages before it are uptodate and copied.
        let lookup = matches!(task.ph, PH_GET | PH_RA_DONE);
        let mark = if lookup {
            self.mark_index(s, t, p, fault)
        } else {
            None
        };
        if let Some((index, expected)) = mark {
            if index == self.real_start(self.folio(p).start as u8) {
                return Some(Got::Step(
                    self.async_ra(s, t, p, fault, &win, index, expected),
                ));
            }
        }
        let whole = self.folio_not_uptodate(s, p).is_none();
        let locked = s.pages[p].locked();
        // read(2): filemap_get_read_batch takes an uptodate folio even
        // while locked; otherwise (a fault, a partly uptodate folio:
        // filemap_range_uptodate) once it is unlocked
        if (whole && !fault) || (!locked && (whole || (!fault && s.pages[p].has(PG_UPTODATE)))) {
            if let Some((index, expected)) = mark {
                return Some(Got::Step(
                    self.async_ra(s, t, p, fault, &win, index, expected),
                ));
            }
            return Some(Got::Ready);
        }
        if locked {
            return None; // folio_lock / folio_put_wait_locked
        }
        let q = self.folio_not_uptodate(s, p).expect("not uptodate");
        Some(Got::Step(self.read_folio(s, t, q)))
    }

    /// b3: a read served from the page cache returns block `p`; stale if
    /// its data was superseded by a write that returned before the read
    /// began (the task's Entry snapshot).
    pub(super) fn check_cache_read(&self, s: &mut State, t: usize, p: usize) {
        let stale = s.tasks[t].before[p];
        if stale != 0 {
            s.ev = Event::CacheReadChecked;
        }
        let v = s.pages[p].ver;
        if v != NONE && stale & (1 << v) != 0 {
            s.viol2 |= VIOL2_B3;
        }
        self.check_eof_read(s, p);
    }

    /// One step of filemap_read over pages `first..first+n`.
    pub(super) fn op_buf_read(&self, s: &mut State, t: usize, first: u8, n: u8) -> Option<Step> {
        let task = s.tasks[t];
        let p = first + task.cur;
        let lookup = matches!(task.ph, PH_GET | PH_RA_DONE);
        if lookup && p >= s.i_size {
            // "if (unlikely(iocb->ki_pos >= i_size_read(inode))) break":
            // a short read
            self.set_prev_pos(s, t, task.cur > 0, p);
            self.advance(s, t);
            return Some(Step::ReadEof);
        }
        let win = self.read_window(s, t, p, first + n - p);
        let (lookup_miss, seq) = (
            task.ph == PH_GET && !s.pages[p as usize].present(),
            p > 0 && !self.random_read(t) && self.sequential_miss(s, t, p),
        );
        match self.get_folio(s, t, p as usize, false, win)? {
            Got::Step(step) => {
                if lookup_miss && seq && s.ev == Event::None {
                    s.ev = Event::RaSequential;
                }
                Some(step)
            }
            Got::Ready => {
                // copy_folio_to_iter: the data this read returns (kept in
                // the ghost `snap` for trace conformance)
                self.check_cache_read(s, t, p as usize);
                s.tasks[t].snap[p as usize] = s.pages[p as usize].ver;
                if task.cur + 1 >= n {
                    self.set_prev_pos(s, t, true, p + 1);
                    self.advance(s, t);
                } else {
                    if self.cfg.variant.ra_prev_pos_each_copy {
                        // 6.1 - 6.5: `ra->prev_pos = iocb->ki_pos` after
                        // each folio copied
                        self.set_prev_pos(s, t, true, p + 1);
                    }
                    s.tasks[t].cur += 1;
                    s.tasks[t].ph = PH_GET;
                }
                Some(Step::ReadCopy)
            }
        }
    }

    /// The readahead window of a page fault at `page`:
    /// do_sync_mmap_readahead's read-around, ra->start = pgoff -
    /// ra_pages / 2, ra->size = ra_pages, ra->async_size = ra_pages / 4,
    /// kept in the open file's state for a fault of task `t` with `fd=F`
    /// (mmap_miss, which stops read-around after MMAP_LOTSAMISS misses
    /// more than hits, is not modelled).
    pub(super) fn fault_window(&self, t: usize, page: u8) -> Window {
        let ra = self.ra_pages();
        let kstart = self.real_start(page).saturating_sub(ra as u32 / 2);
        let (lo, hi) = self.model_span(kstart, kstart + ra as u32);
        Window {
            lo,
            hi,
            asz: ra / 4,
            ra_asz: ra / 4,
            kstart,
            ksize: ra as u32,
            last: self.real_start(page) + 1,
            keep: self.ra_fd(t).is_some(),
        }
    }
}
