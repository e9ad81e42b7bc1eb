//! Step semantics of the FUSE model (kernel-fuse-protocol.md §2–§8) and the
//! Stateright `Model` implementation.
//!
//! Stateright's `ActorModel` is message-only; kernel tasks share inode and
//! page-cache memory, so we implement `Model` directly and make the actors
//! explicit: every kernel task and every daemon worker has its own program
//! counter, and kernel and daemon talk only through `State::fuse_q`
//! (/dev/fuse) and the reply slots.

use super::config::{Config, TaskSpec, MAX_PAGES, MAX_WORKERS};
use super::program::{build, Op, RecvKind, SendKind, Step};
use super::state::*;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Who acts in a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Actor {
    /// Kernel task `T<i>`.
    Task(u8),
    /// Daemon worker `D<i>`.
    Daemon(u8),
}

/// One atomic step: the actor and the kernel function it executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Action {
    pub actor: Actor,
    pub step: Step,
}

/// The FUSE writeback / direct-I/O / truncate model.
#[derive(Clone)]
pub struct FuseModel {
    pub cfg: Config,
    pub programs: Vec<Vec<Op>>,
    /// Per property, how many visited states violate (always) or satisfy
    /// (sometimes) it. Filled while a checker evaluates properties; each
    /// unique state is evaluated once by the DFS checker.
    pub tally: Arc<Vec<AtomicU64>>,
    /// Report properties to Stateright as one tallying property (used by
    /// `wbspec check`); otherwise one Stateright property each.
    pub tally_mode: bool,
}

/// Version (data identity) written by task `t`.
pub fn version_of(t: usize) -> u8 {
    (t + 2) as u8
}

fn pages_mask(first: u8, n: u8) -> impl Iterator<Item = usize> {
    first as usize..(first + n) as usize
}

impl FuseModel {
    pub fn new(cfg: Config) -> Result<FuseModel, String> {
        cfg.validate()?;
        let programs = cfg.tasks.iter().map(|t| build(&cfg, t)).collect();
        let n = super::properties::PROPERTY_NAMES.len();
        Ok(FuseModel {
            cfg,
            programs,
            tally: Arc::new((0..n).map(|_| AtomicU64::new(0)).collect()),
            tally_mode: false,
        })
    }

    pub fn reset_tally(&self) {
        for c in self.tally.iter() {
            c.store(0, Ordering::Relaxed);
        }
    }

    pub fn tally_of(&self, idx: usize) -> u64 {
        self.tally[idx].load(Ordering::Relaxed)
    }

    pub(crate) fn count(&self, idx: usize, hit: bool) {
        if hit {
            self.tally[idx].fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn initial(&self) -> State {
        let c = &self.cfg;
        let mut pages = [Page::default(); MAX_PAGES];
        let mut srv = [V_ZERO; MAX_PAGES];
        let mut hist = [0u64; MAX_PAGES];
        let mut fin = [0u16; MAX_PAGES];
        let mut sup = [0u16; MAX_PAGES];
        for p in 0..c.pages as usize {
            let v = if p < c.init_size as usize {
                V_INIT
            } else {
                V_ZERO
            };
            srv[p] = v;
            hist[p] = v as u64;
            fin[p] = 1 << v;
            if c.cached & (1 << p) != 0 {
                pages[p].flags = PG_PRESENT | PG_UPTODATE;
                pages[p].ver = v;
            }
        }
        let mut i_size = c.init_size;
        // Pages dirty before the workload: data version 1 is already on the
        // server, so a dirty page holds a distinct earlier write. We give
        // it the version of a pseudo-writer 15 (never a task's version).
        for p in 0..c.pages as usize {
            if c.dirty & (1 << p) != 0 {
                pages[p].set(PG_DIRTY);
                pages[p].ver = V_PREDIRTY;
                hist[p] = hist_push(hist[p], V_PREDIRTY);
                sup[p] = fin[p];
                fin[p] |= 1 << V_PREDIRTY;
                i_size = i_size.max(p as u8 + 1);
            }
        }
        State {
            i_size,
            size_unstable: false,
            writectr: 0,
            queued: Default::default(),
            rwsem_owner: NONE,
            rwsem_readers: 0,
            pages,
            tasks: (0..c.tasks.len()).map(|_| Task::new()).collect(),
            fuse_q: Default::default(),
            tmp: [0; MAX_PAGES],
            aux: Default::default(),
            l_end: [0; MAX_PAGES],
            workers: [Worker::Idle; MAX_WORKERS],
            srv_size: c.init_size,
            srv,
            hist,
            fin,
            sup,
            drops: [0; MAX_PAGES],
            wrote_once: 0,
            viol: 0,
            ev: Event::None,
        }
    }

    // ------------------------------------------------------------------
    // Shared kernel routines (run inside the caller's atomic step)

    /// fuse_writepage_finish: folio_end_writeback on every folio of the
    /// wpa; wakes page_waitq (waiters are re-evaluated every state).
    fn writepage_finish(&self, s: &mut State, first: u8, n: u8) {
        if self.cfg.variant.temp_pages {
            return; // L: only stats; PG_writeback ended at send time
        }
        // iomap_finish_folio_write per folio of the request: PG_writeback
        // ends when the folio's last pending range completes
        // (T: fuse_writepage_finish ends writeback on each folio at once)
        if self.cfg.folio_blocks <= 1 {
            for p in pages_mask(first, n) {
                s.pages[p].clear(PG_WRITEBACK);
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
                self.folio_clear(s, h, PG_WRITEBACK);
            }
        }
    }

    // ---- folios (state C: `folio_blocks` blocks each; else one page)

    /// The blocks of the folio holding block `p`.
    pub fn folio(&self, p: usize) -> std::ops::Range<usize> {
        let fb = self.cfg.folio_blocks.max(1) as usize;
        let h = p - p % fb;
        h..(h + fb).min(self.cfg.pages as usize)
    }

    fn folio_set(&self, s: &mut State, p: usize, f: u8) {
        for q in self.folio(p) {
            s.pages[q].set(f);
        }
    }

    fn folio_clear(&self, s: &mut State, p: usize, f: u8) {
        for q in self.folio(p) {
            s.pages[q].clear(f);
        }
    }

    /// Any block of the folio dirty (the folio's PG_dirty).
    pub fn folio_dirty(&self, s: &State, p: usize) -> bool {
        self.folio(p).any(|q| s.pages[q].dirty())
    }

    /// The first block of the folio that is not uptodate.
    fn folio_not_uptodate(&self, s: &State, p: usize) -> Option<usize> {
        self.folio(p).find(|&q| !s.pages[q].has(PG_UPTODATE))
    }

    /// Maximal runs of dirty blocks in the folio (iomap's dirty ranges).
    fn dirty_runs(&self, s: &State, p: usize) -> Vec<(u8, u8)> {
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

    /// State L: the primary wpa in fi->writepages (rb-tree) covering page
    /// `p`, by its first page: a queued or in-flight writeback WRITE, or a
    /// batch a writeback task is building (inserted at
    /// fuse_writepage_add).
    pub fn in_tree(&self, s: &State, p: usize) -> Option<u8> {
        let cover = |first: u8, n: u8| (first as usize..(first + n) as usize).contains(&p);
        for w in s.queued.iter() {
            if cover(w.first, w.n) {
                return Some(w.first);
            }
        }
        for r in s.fuse_q.iter() {
            if let Req::CacheWrite { first, n, .. } = *r {
                if cover(first, n) {
                    return Some(first);
                }
            }
        }
        for w in s.workers.iter() {
            match *w {
                Worker::Busy {
                    req: Req::CacheWrite { first, n, .. },
                    ..
                }
                | Worker::Ending { first, n }
                    if cover(first, n) =>
                {
                    return Some(first);
                }
                _ => {}
            }
        }
        for t in s.tasks.iter() {
            if t.bn > 0 && cover(t.bfirst, t.bn) {
                return Some(t.bfirst);
            }
        }
        None
    }

    /// fuse_send_writepage(fm, wpa, size): crop at `crop`, drop if wholly
    /// beyond it, otherwise queue the WRITE on /dev/fuse.
    fn send_writepage(&self, s: &mut State, w: Wpa, crop: u8) {
        // ghost: data of folios beyond the crop is discarded unsent
        for p in crop.max(w.first)..w.first + w.n {
            s.drops[p as usize] = s.drops[p as usize].saturating_add(1);
        }
        s.writectr += 1;
        if w.first + w.n <= crop {
            s.fuse_q.push(Req::CacheWrite {
                first: w.first,
                n: w.n,
                sent: w.n,
            });
            if self.cfg.variant.temp_pages {
                s.l_end[w.first as usize] = w.first + w.n;
            }
        } else if w.first < crop {
            s.fuse_q.push(Req::CacheWrite {
                first: w.first,
                n: w.n,
                sent: crop - w.first,
            });
            if self.cfg.variant.temp_pages {
                s.l_end[w.first as usize] = crop;
            }
            s.ev = Event::Crop;
        } else {
            // out_free: "Got truncated off completely"
            s.writectr -= 1;
            self.writepage_finish(s, w.first, w.n);
            if self.cfg.variant.temp_pages {
                // L: rb_erase; the aux list is private now and freed
                let mut i = 0;
                while i < s.aux.len() {
                    if s.aux[i].prim == w.first {
                        let a = s.aux.remove(i);
                        let q = a.page as usize;
                        s.drops[q] = s.drops[q].saturating_add(1);
                    } else {
                        i += 1;
                    }
                }
            }
            s.ev = Event::Drop;
        }
    }

    /// fuse_flush_writepages: send queued WRITEs while writectr >= 0,
    /// cropped to i_size sampled once.
    fn flush_writepages(&self, s: &mut State) {
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
    fn queue_writepage(&self, s: &mut State, w: Wpa) {
        s.queued.push(w);
        self.flush_writepages(s);
        if self.cfg.variant.temp_pages {
            // L: fuse_writepages_send / fuse_writepage_locked end
            // PG_writeback on the page-cache folios once the temp copies
            // are queued
            for p in pages_mask(w.first, w.n) {
                s.pages[p].clear(PG_WRITEBACK);
            }
        }
    }

    /// __fuse_release_nowrite.
    fn release_nowrite(&self, s: &mut State) {
        if s.writectr != FUSE_NOWRITE {
            s.viol |= VIOL_BUG;
        }
        s.writectr = 0;
        self.flush_writepages(s);
    }

    /// fuse_set_nowrite's first half.
    fn set_nowrite(s: &mut State) {
        if s.writectr < 0 {
            // BUG_ON(fi->writectr < 0): nested NOWRITE
            s.viol |= VIOL_BUG;
        } else {
            s.writectr += FUSE_NOWRITE;
        }
    }

    /// filemap_range_has_writeback: any folio in range dirty, locked or
    /// under writeback.
    fn range_has_writeback(s: &State, first: u8, n: u8) -> bool {
        pages_mask(first, n).any(|p| {
            let pg = &s.pages[p];
            pg.present() && (pg.dirty() || pg.locked() || pg.wb())
        })
    }

    /// filemap_fault → read_folio: lock the folio and READ block `q`
    /// (state C reads one block per READ).
    fn fault_read(&self, s: &mut State, t: usize, q: usize) -> Step {
        self.folio_set(s, q, PG_LOCKED);
        s.fuse_q.push(Req::Read {
            task: t as u8,
            first: q as u8,
            n: 1,
        });
        s.tasks[t].ph = 1;
        s.tasks[t].cur = q as u8;
        s.tasks[t].reply = NONE;
        Step::FaultRead
    }

    /// The READ reply of `fault_read`: the block is uptodate, the folio
    /// unlocked; the fault starts over.
    fn fault_read_done(&self, s: &mut State, t: usize) {
        let task = s.tasks[t];
        let q = task.cur as usize;
        s.pages[q].ver = task.reply;
        s.pages[q].set(PG_UPTODATE);
        self.folio_clear(s, q, PG_LOCKED);
        s.tasks[t].ph = 0;
        s.tasks[t].cur = 0;
        s.tasks[t].reply = NONE;
    }

    /// The folio leaves the page cache (all its blocks).
    fn remove_page(&self, s: &mut State, p: usize) {
        for q in self.folio(p) {
            s.pages[q] = Page::default();
        }
    }

    // ------------------------------------------------------------------
    // Ghost: syscall windows of writes (a3's "last written data", b2)

    /// Pages whose data task `t` may write.
    fn written_pages(&self, t: usize) -> std::ops::Range<usize> {
        match self.cfg.tasks[t] {
            TaskSpec::Truncate { .. } | TaskSpec::Open { trunc: true, .. } => {
                0..self.cfg.pages as usize
            }
            spec => match spec.range() {
                Some((first, n)) if spec.writes() => first as usize..(first + n) as usize,
                _ => 0..0,
            },
        }
    }

    /// The write's syscall window opens.
    fn window_open(&self, s: &mut State, t: usize) {
        for p in self.written_pages(t) {
            s.tasks[t].before[p] = s.fin[p];
        }
    }

    /// The write's syscall window closes: writes that ended before it
    /// opened can no longer be the last data of the pages it wrote.
    fn window_close(&self, s: &mut State, t: usize) {
        let v = version_of(t);
        for p in self.written_pages(t) {
            if hist_pos(s.hist[p], v).is_some() {
                s.sup[p] |= s.tasks[t].before[p];
                s.fin[p] |= 1 << v;
            }
        }
    }

    // ------------------------------------------------------------------
    // Program control

    /// Moves task `t` to its next op and skips ops that have nothing to do
    /// (conditions evaluated in the same atomic region, with no scheduling
    /// point in between).
    fn advance(&self, s: &mut State, t: usize) {
        let task = &mut s.tasks[t];
        task.pc += 1;
        task.ph = 0;
        task.cur = 0;
        self.skip_empty(s, t);
    }

    fn skip_empty(&self, s: &mut State, t: usize) {
        let prog = &self.programs[t];
        loop {
            let pc = s.tasks[t].pc as usize;
            if pc >= prog.len() {
                return;
            }
            let skip = match prog[pc] {
                Op::FdataWait { first, n } => {
                    // find the first folio under writeback
                    match pages_mask(first, n).find(|&p| s.pages[p].wb()) {
                        None => true,
                        Some(p) => {
                            s.tasks[t].cur = p as u8;
                            false
                        }
                    }
                }
                Op::TruncatePagecache => {
                    let task = &s.tasks[t];
                    task.saved == s.i_size
                        || !(s.i_size as usize..self.cfg.pages as usize)
                            .any(|p| s.pages[p].present())
                }
                Op::TruncateRange { first, n } => {
                    !pages_mask(first, n).any(|p| s.pages[p].present())
                }
                Op::Invalidate {
                    first,
                    n,
                    if_resized,
                } => {
                    (if_resized && s.tasks[t].saved == s.i_size)
                        || !pages_mask(first, n).any(|p| s.pages[p].present())
                }
                _ => false,
            };
            if !skip {
                return;
            }
            let task = &mut s.tasks[t];
            task.pc += 1;
            task.ph = 0;
            task.cur = 0;
        }
    }

    pub fn task_done(&self, s: &State, t: usize) -> bool {
        s.tasks[t].pc as usize >= self.programs[t].len()
    }

    pub fn current_op(&self, s: &State, t: usize) -> Option<Op> {
        self.programs[t].get(s.tasks[t].pc as usize).copied()
    }

    /// Runs task `t`'s next step if it is enabled.
    pub fn exec_task(&self, s0: &State, t: usize) -> Option<(Step, State)> {
        let op = self.current_op(s0, t)?;
        let spec = self.cfg.tasks[t];
        let ver = version_of(t);
        let task = s0.tasks[t];
        let mut s = *s0;
        s.ev = Event::None;
        let step = match op {
            Op::Entry => {
                // Ghost snapshot of the obligations at syscall entry.
                let snap = &mut s.tasks[t].snap;
                match spec {
                    TaskSpec::Fsync | TaskSpec::Close => {
                        for p in 0..self.cfg.pages as usize {
                            let pg = &s0.pages[p];
                            if pg.present() && (pg.dirty() || pg.wb()) {
                                snap[p] = pg.ver;
                            }
                        }
                        for p in 0..self.cfg.pages as usize {
                            s.tasks[t].before[p] = s0.drops[p] as u16;
                        }
                    }
                    TaskSpec::DioRead { first, n } | TaskSpec::OdirectRead { first, n } => {
                        // b1: data superseded by a write that returned
                        // before this read began must not be returned
                        for p in pages_mask(first, n) {
                            s.tasks[t].before[p] = s0.sup[p];
                        }
                    }
                    _ => {}
                }
                self.advance(&mut s, t);
                Step::Entry
            }
            Op::InodeLock => {
                if s.rwsem_owner != NONE || s.rwsem_readers > 0 {
                    return None;
                }
                s.rwsem_owner = t as u8;
                if task.pc == 0 {
                    self.window_open(&mut s, t);
                }
                self.advance(&mut s, t);
                Step::InodeLock
            }
            Op::DioLock => {
                // fuse_dio_wr_exclusive_lock: past EOF -> exclusive
                let (first, n) = spec.range().expect("direct write has a range");
                if first + n > s.i_size {
                    if s.rwsem_owner != NONE || s.rwsem_readers > 0 {
                        return None;
                    }
                    s.rwsem_owner = t as u8;
                    self.window_open(&mut s, t);
                    self.advance(&mut s, t);
                    Step::InodeLock
                } else {
                    if s.rwsem_owner != NONE {
                        return None;
                    }
                    s.rwsem_readers += 1;
                    self.window_open(&mut s, t);
                    self.advance(&mut s, t);
                    Step::DioLockShared
                }
            }
            Op::PrivateFault { page } => {
                let p = page as usize;
                if task.ph == 1 {
                    if task.reply == NONE {
                        return None;
                    }
                    self.fault_read_done(&mut s, t);
                    if self.folio_not_uptodate(&s, p).is_none() {
                        self.advance(&mut s, t);
                    }
                    Step::FaultReadDone
                } else if s.pages[p].present() {
                    if s.pages[p].locked() {
                        return None; // folio_lock in filemap_fault
                    }
                    match self.folio_not_uptodate(&s, p) {
                        None => {
                            self.advance(&mut s, t);
                            Step::FaultMapped
                        }
                        Some(q) => self.fault_read(&mut s, t, q),
                    }
                } else if page >= s.i_size {
                    s.tasks[t].pc = self.programs[t].len() as u8;
                    Step::Sigbus
                } else {
                    self.folio_set(&mut s, p, PG_PRESENT);
                    self.fault_read(&mut s, t, p)
                }
            }
            Op::UnlockReturn { unlock } => {
                if unlock {
                    if s.rwsem_owner == t as u8 {
                        s.rwsem_owner = NONE;
                    } else {
                        // fuse_dio_unlock of a shared holder
                        debug_assert!(s.rwsem_readers > 0);
                        s.rwsem_readers -= 1;
                    }
                }
                let last = task.pc as usize + 1 == self.programs[t].len();
                if last && spec.writes() && !matches!(spec, TaskSpec::Truncate { .. }) {
                    self.window_close(&mut s, t);
                }
                self.advance(&mut s, t);
                if unlock {
                    Step::UnlockReturn
                } else {
                    Step::Return
                }
            }
            Op::CopyPages { first, n } => {
                let p = (first + task.cur) as usize;
                if self.cfg.variant.temp_pages {
                    // L: fuse_write_begin waits on the rb-tree holding the
                    // folio lock (fuse_wait_on_page_writeback)
                    if task.ph == 0 {
                        if s.pages[p].locked() {
                            return None;
                        }
                        if self.in_tree(&s, p).is_some() {
                            s.pages[p].set(PG_LOCKED);
                            if !s.pages[p].present() {
                                s.pages[p].set(PG_PRESENT);
                            }
                            s.tasks[t].ph = 1;
                            return Some((Step::WriteBeginWait, s));
                        }
                    } else if self.in_tree(&s, p).is_some() {
                        return None;
                    }
                    s.tasks[t].ph = 0;
                    s.pages[p].clear(PG_LOCKED);
                }
                let pg = &mut s.pages[p];
                if pg.locked() {
                    return None; // folio_lock sleeps
                }
                // write_begin: __filemap_get_folio(FGP_WRITEBEGIN) creates
                // the folio; a whole-page write needs no READ. No wait on
                // writeback in T (kernel-fuse-protocol.md §3.8).
                let created = !pg.present();
                pg.set(PG_PRESENT | PG_UPTODATE | PG_DIRTY);
                pg.ver = ver;
                if created {
                    // the folio's other blocks exist, not uptodate
                    self.folio_set(&mut s, p, PG_PRESENT);
                }
                s.hist[p] = hist_push(s.hist[p], ver);
                // write_end: extend i_size
                if p as u8 + 1 > s.i_size {
                    s.i_size = p as u8 + 1;
                }
                if task.cur + 1 >= n {
                    self.advance(&mut s, t);
                } else {
                    s.tasks[t].cur += 1;
                }
                Step::CopyPage
            }
            Op::FillPages { first, n } => {
                let p = (first + task.cur) as usize;
                if s.pages[p].locked() {
                    return None; // __filemap_get_folio(FGP_WRITEBEGIN)
                }
                let created = !s.pages[p].present();
                s.pages[p].set(PG_PRESENT | PG_UPTODATE);
                s.pages[p].ver = ver;
                if created {
                    self.folio_set(&mut s, p, PG_PRESENT);
                }
                s.hist[p] = hist_push(s.hist[p], ver);
                if task.cur + 1 >= n {
                    self.advance(&mut s, t);
                } else {
                    s.tasks[t].cur += 1;
                }
                Step::FillPage
            }
            Op::MkwriteFault { page } => {
                let p = page as usize;
                if task.ph == 1 {
                    // READ reply for the fault
                    if task.reply == NONE {
                        return None;
                    }
                    self.fault_read_done(&mut s, t);
                    Step::FaultReadDone
                } else if !s.pages[p].present() {
                    if page >= s.i_size {
                        // SIGBUS: the task ends without storing
                        s.tasks[t].pc = self.programs[t].len() as u8;
                        Step::Sigbus
                    } else {
                        self.folio_set(&mut s, p, PG_PRESENT);
                        self.fault_read(&mut s, t, p)
                    }
                } else {
                    if s.pages[p].locked() {
                        return None;
                    }
                    if let Some(q) = self.folio_not_uptodate(&s, p) {
                        // the folio must be uptodate to be mapped
                        self.fault_read(&mut s, t, q)
                    } else {
                        self.folio_set(&mut s, p, PG_LOCKED);
                        self.advance(&mut s, t);
                        Step::MkwriteLock
                    }
                }
            }
            Op::MkwriteWait { page } => {
                let p = page as usize;
                let busy = if self.cfg.variant.temp_pages {
                    // L: fuse_wait_on_folio_writeback (rb-tree)
                    self.in_tree(&s, p).is_some()
                } else {
                    s.pages[p].wb()
                };
                if busy {
                    return None;
                }
                self.advance(&mut s, t);
                Step::MkwriteWait
            }
            Op::MkwriteStore { page } => {
                let p = page as usize;
                s.pages[p].ver = ver;
                // page_mkwrite dirties the whole folio (iomap_page_mkwrite
                // in C marks every block dirty)
                self.folio_set(&mut s, p, PG_DIRTY);
                self.folio_clear(&mut s, p, PG_LOCKED);
                s.hist[p] = hist_push(s.hist[p], ver);
                // an atomic write: its window opens and closes here
                self.window_open(&mut s, t);
                self.window_close(&mut s, t);
                self.advance(&mut s, t);
                Step::MkwriteStore
            }
            Op::GupRedirty { page } => {
                let p = page as usize;
                if !s.pages[p].present() {
                    // truncated meanwhile: the pin kept a folio no longer in
                    // the mapping; marking it dirty affects nothing
                    self.advance(&mut s, t);
                    return Some((Step::GupRedirty, s));
                }
                if s.pages[p].locked() {
                    return None;
                }
                // iomap_dirty_folio: the whole folio is dirtied
                self.folio_set(&mut s, p, PG_DIRTY);
                self.advance(&mut s, t);
                Step::GupRedirty
            }
            Op::WritePages { first, n, all } => {
                return self.exec_writepages(s, t, first, n, all);
            }
            Op::FdataWait { first, n } => {
                let p = task.cur as usize;
                if s.pages[p].wb() {
                    return None;
                }
                match (p + 1..(first + n) as usize).find(|&q| s.pages[q].wb()) {
                    Some(q) => s.tasks[t].cur = q as u8,
                    None => self.advance(&mut s, t),
                }
                Step::FdataWait
            }
            Op::SetNowrite => {
                Self::set_nowrite(&mut s);
                self.advance(&mut s, t);
                Step::SetNowrite
            }
            Op::LockSetNowrite => {
                if s.rwsem_owner != NONE || s.rwsem_readers > 0 {
                    return None;
                }
                s.rwsem_owner = t as u8;
                Self::set_nowrite(&mut s);
                self.advance(&mut s, t);
                Step::LockSetNowrite
            }
            Op::WaitNowrite => {
                if s.writectr != FUSE_NOWRITE {
                    return None;
                }
                self.advance(&mut s, t);
                Step::WaitNowrite
            }
            Op::SyncWritesWait { unlock } => {
                if s.writectr != FUSE_NOWRITE {
                    return None;
                }
                self.release_nowrite(&mut s);
                if unlock {
                    s.rwsem_owner = NONE;
                }
                self.advance(&mut s, t);
                Step::SyncWritesDone
            }
            Op::ReleaseNowrite => {
                self.release_nowrite(&mut s);
                self.advance(&mut s, t);
                Step::ReleaseNowrite
            }
            Op::IfRangeHasWriteback { first, n, skip } => {
                let has = if self.cfg.variant.temp_pages {
                    // L: fuse_range_is_writeback (rb-tree overlap)
                    pages_mask(first, n).any(|p| self.in_tree(&s, p).is_some())
                } else {
                    Self::range_has_writeback(&s, first, n)
                };
                if !has {
                    s.tasks[t].pc += skip;
                }
                self.advance(&mut s, t);
                if self.cfg.variant.temp_pages {
                    Step::RangeIsWritebackL
                } else {
                    Step::RangeHasWriteback
                }
            }
            Op::Send(kind) => {
                let tt = t as u8;
                let (req, step) = match (kind, spec) {
                    (SendKind::Setattr, TaskSpec::Truncate { size }) => {
                        s.size_unstable = true;
                        s.tasks[t].saved = s.i_size;
                        (Req::Setattr { task: tt, size }, Step::SendSetattr)
                    }
                    (SendKind::Setattr, TaskSpec::Open { trunc: true, .. }) => {
                        s.size_unstable = true;
                        s.tasks[t].saved = s.i_size;
                        (Req::Setattr { task: tt, size: 0 }, Step::SendSetattr)
                    }
                    (SendKind::Open, TaskSpec::Open { trunc, .. }) => {
                        if task.pc == 0 {
                            self.window_open(&mut s, t);
                        }
                        s.tasks[t].saved = s.i_size;
                        let atomic = trunc && self.cfg.atomic_o_trunc;
                        (
                            Req::Open {
                                task: tt,
                                trunc: atomic,
                            },
                            Step::SendOpen,
                        )
                    }
                    (SendKind::Open, _) => unreachable!("OPEN from a non-open task"),
                    (SendKind::ThroughWrite, _) => {
                        let (first, n) = spec.range().expect("write has a range");
                        (
                            Req::ThroughWrite { task: tt, first, n },
                            Step::SendThroughWrite,
                        )
                    }
                    (SendKind::DirectWrite, _) => {
                        let (first, n) = spec.range().expect("direct write has a range");
                        (Req::DirectWrite { task: tt, first, n }, Step::SendWrite)
                    }
                    (SendKind::DirectRead, _) => {
                        let (first, n) = spec.range().expect("direct read has a range");
                        (Req::Read { task: tt, first, n }, Step::SendRead)
                    }
                    (SendKind::Fsync, _) => (Req::Fsync { task: tt }, Step::SendFsync),
                    (SendKind::Fallocate, TaskSpec::Punch { first, n }) => {
                        (Req::Fallocate { task: tt, first, n }, Step::SendFallocate)
                    }
                    (SendKind::Fallocate, _) => unreachable!("FALLOCATE from a non-punch task"),
                    (SendKind::Flush, _) => (Req::Flush { task: tt }, Step::SendFlush),
                    (SendKind::Setattr, _) => unreachable!("SETATTR from a non-truncate task"),
                };
                if matches!(kind, SendKind::Fsync | SendKind::Flush) {
                    // property d: the data dirty at entry is on the server
                    let mut checked = false;
                    // (a page beyond EOF, or a dirty page that a
                    // concurrent truncate discarded, owes nothing)
                    for p in 0..s.i_size.min(self.cfg.pages) as usize {
                        let need = task.snap[p];
                        if need == NONE || s.drops[p] as u16 != task.before[p] {
                            continue;
                        }
                        checked = true;
                        if hist_older(s.hist[p], s.srv[p], need) {
                            s.viol |= VIOL_D;
                        }
                    }
                    if checked {
                        s.ev = Event::SyncChecked;
                    }
                }
                s.fuse_q.push(req);
                s.tasks[t].reply = NONE;
                self.advance(&mut s, t);
                step
            }
            Op::Recv(kind) => {
                if task.reply == NONE {
                    return None;
                }
                let reply = task.reply;
                s.tasks[t].reply = NONE;
                let step = match kind {
                    RecvKind::Setattr { release } => {
                        // lock fi->lock; i_size_write(outarg.attr.size);
                        // __fuse_release_nowrite; unlock
                        if release && self.cfg.variant.mut_crop_old_size {
                            self.release_nowrite(&mut s);
                            s.i_size = reply;
                        } else {
                            s.i_size = reply;
                            if release {
                                self.release_nowrite(&mut s);
                            }
                        }
                        Step::SetattrReply
                    }
                    RecvKind::OpenTrunc => {
                        // fuse_truncate_update_attr: i_size_write(0)
                        s.i_size = 0;
                        Step::OpenTruncAttr
                    }
                    RecvKind::DirectWrite => {
                        // fuse_write_update_attr
                        if let Some((first, n)) = spec.range() {
                            if first + n > s.i_size {
                                s.i_size = first + n;
                            }
                        }
                        Step::WriteReply
                    }
                    RecvKind::Plain => Step::Reply,
                };
                self.advance(&mut s, t);
                step
            }
            Op::TruncatePagecache => {
                // truncate_pagecache(inode, i_size): folios at or beyond EOF
                let (lo, hi) = (s.i_size, self.cfg.pages);
                return self.exec_truncate(s, t, lo, hi);
            }
            Op::TruncateRange { first, n } => {
                // truncate_pagecache_range(offset, offset + len - 1)
                return self.exec_truncate(s, t, first, first + n);
            }
            Op::Invalidate { first, n, .. } => {
                return self.exec_invalidate(s, t, first, n);
            }
            Op::SetattrReturn => {
                self.window_close(&mut s, t);
                s.size_unstable = false;
                s.rwsem_owner = NONE;
                self.advance(&mut s, t);
                Step::SetattrReturn
            }
        };
        Some((step, s))
    }

    /// One step of fuse_writepages (write_cache_pages / writeback_iter →
    /// fuse_writepages_fill → fuse_writepages_send).
    fn exec_writepages(
        &self,
        mut s: State,
        t: usize,
        first: u8,
        n: u8,
        all: bool,
    ) -> Option<(Step, State)> {
        let task = s.tasks[t];
        let end = (first + n) as usize;
        match task.ph {
            0 => {
                // write_cache_pages begins; WB_SYNC_ALL tags the dirty
                // folios TOWRITE (tag_pages_for_writeback)
                if all {
                    for p in first as usize..end {
                        if s.pages[p].present() && self.folio_dirty(&s, p) {
                            s.pages[p].set(PG_TOWRITE);
                        }
                    }
                }
                s.tasks[t].ph = 1;
                s.tasks[t].cur = first;
                s.tasks[t].bn = 0;
                Some((Step::WbBegin, s))
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
                                &mut s,
                                Wpa {
                                    first: task.bfirst,
                                    n: task.bn,
                                },
                            );
                        }
                        s.tasks[t].bn = 0;
                        self.advance(&mut s, t);
                        let step = if task.bn > 0 {
                            Step::WbSend
                        } else {
                            Step::WbDone // nothing batched: no send
                        };
                        return Some((step, s));
                    }
                    Some(p) => self.folio(p).start,
                };
                let fend = self.folio(p).end as u8;
                if s.pages[p].locked() {
                    return None; // folio_lock sleeps
                }
                // folio_prepare_writeback
                let pg = s.pages[p];
                let dirty = self.folio_dirty(&s, p);
                let honour_wb = !self.cfg.variant.mut_wb_ignores_writeback;
                if !dirty || (pg.wb() && !all && honour_wb) {
                    // a clean folio keeps its TOWRITE tag; the walk moves on
                    s.tasks[t].cur = fend;
                    return Some((Step::WbSkip, s));
                }
                if pg.wb() && honour_wb {
                    // WB_SYNC_ALL: folio_wait_writeback with the folio locked
                    self.folio_set(&mut s, p, PG_LOCKED);
                    s.tasks[t].cur = p as u8;
                    s.tasks[t].ph = 2;
                    return Some((Step::WbFolio, s));
                }
                self.fill(&mut s, t, p);
                Some((Step::WbFolio, s))
            }
            _ => {
                let p = task.cur as usize;
                if s.pages[p].wb() {
                    return None;
                }
                s.tasks[t].ph = 1;
                if !self.folio_dirty(&s, p) {
                    self.folio_clear(&mut s, p, PG_LOCKED);
                    s.tasks[t].cur = self.folio(p).end as u8;
                } else {
                    self.fill(&mut s, t, p);
                }
                Some((Step::WbWaitFolio, s))
            }
        }
    }

    /// One step of a truncate_inode_pages_range walk over `lo..hi`: per
    /// folio, folio_lock, folio_wait_writeback, remove (dirty data is
    /// discarded).
    fn exec_truncate(&self, mut s: State, t: usize, lo: u8, hi: u8) -> Option<(Step, State)> {
        let task = s.tasks[t];
        let start = task.cur.max(lo) as usize;
        let p = match (start..hi as usize).find(|&p| s.pages[p].present()) {
            Some(p) => self.folio(p).start,
            None => {
                // the folios went away meanwhile (another task's
                // invalidation): nothing left to truncate
                self.advance(&mut s, t);
                return Some((Step::InvDone, s));
            }
        };
        if task.ph == 0 {
            if s.pages[p].locked() {
                return None;
            }
            self.folio_set(&mut s, p, PG_LOCKED);
            if s.pages[p].wb() {
                s.tasks[t].ph = 1;
                s.tasks[t].cur = p as u8;
                return Some((Step::TruncLock, s));
            }
        } else if s.pages[p].wb() {
            return None; // folio_wait_writeback
        }
        for q in self.folio(p) {
            if s.pages[q].dirty() {
                s.drops[q] = s.drops[q].saturating_add(1);
            }
        }
        self.remove_page(&mut s, p);
        let next = self.folio(p).end;
        s.tasks[t].ph = 0;
        s.tasks[t].cur = next as u8;
        if !(next..hi as usize).any(|q| s.pages[q].present()) {
            self.advance(&mut s, t);
        }
        Some((Step::TruncFolio, s))
    }

    /// folio_clear_dirty_for_io + fuse_writepages_fill(folio) + unlock.
    fn fill(&self, s: &mut State, t: usize, p: usize) {
        if self.cfg.variant.temp_pages {
            return self.fill_l(s, t, p);
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
            let task = s.tasks[t];
            // fuse_writepage_need_send / fuse_folios_need_send:
            // discontiguous, or the batch would exceed max_pages
            if task.bn > 0 && (task.bfirst + task.bn != rs || task.bn + rl > self.cfg.max_pages) {
                self.queue_writepage(
                    s,
                    Wpa {
                        first: task.bfirst,
                        n: task.bn,
                    },
                );
                s.tasks[t].bn = 0;
            }
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

    /// State L's fuse_writepages_fill (ref §3.5): the folio is copied into
    /// a temp page now; a folio already covered by an in-flight request in
    /// the rb-tree becomes a secondary request (or replaces the data of the
    /// existing one for that page) and its writeback ends at once.
    fn fill_l(&self, s: &mut State, t: usize, p: usize) {
        let task = s.tasks[t];
        s.pages[p].clear(PG_DIRTY);
        let ignore_tree = self.cfg.variant.mut_l_no_secondary;
        let in_other = match self.in_tree(s, p) {
            Some(f) if !(task.bn > 0 && f == task.bfirst) && !ignore_tree => Some(f),
            _ => None,
        };
        // fuse_writepage_need_send (L also cuts at a folio under rb-tree
        // writeback)
        if task.bn > 0
            && (task.bfirst + task.bn != p as u8
                || task.bn >= self.cfg.max_pages
                || in_other.is_some())
        {
            self.queue_writepage(
                s,
                Wpa {
                    first: task.bfirst,
                    n: task.bn,
                },
            );
            s.tasks[t].bn = 0;
        }
        let ver = s.pages[p].ver;
        s.pages[p].set(PG_WRITEBACK);
        s.pages[p].clear(PG_TOWRITE | PG_LOCKED);
        s.tasks[t].cur = p as u8 + 1;
        if s.tasks[t].bn > 0 {
            // the batch grows (its rb-tree range with it)
            s.tmp[p] = ver;
            s.tasks[t].bn += 1;
            return;
        }
        // fuse_writepage_add
        match self.in_tree(s, p).filter(|_| !ignore_tree) {
            Some(prim) => {
                // secondary: swap data into an existing one for this page,
                // or link a new one on old->next; writeback ends now
                match s
                    .aux
                    .iter()
                    .position(|a| a.prim == prim && a.page == p as u8)
                {
                    Some(i) => s.aux[i].ver = ver,
                    None => s.aux.push(Aux {
                        prim,
                        page: p as u8,
                        ver,
                    }),
                }
                s.pages[p].clear(PG_WRITEBACK);
                s.ev = Event::Secondary;
            }
            None => {
                s.tmp[p] = ver;
                s.tasks[t].bfirst = p as u8;
                s.tasks[t].bn = 1;
            }
        }
    }

    /// One step of invalidate_inode_pages2_range (with fuse_launder_folio).
    fn exec_invalidate(&self, mut s: State, t: usize, first: u8, n: u8) -> Option<(Step, State)> {
        let task = s.tasks[t];
        let end = (first + n) as usize;
        let p = match task.ph {
            0 => match (first.max(task.cur) as usize..end).find(|&p| s.pages[p].present()) {
                Some(p) => self.folio(p).start,
                None => {
                    // another task removed the remaining folios meanwhile:
                    // the walk finds nothing more and returns
                    self.advance(&mut s, t);
                    return Some((Step::InvDone, s));
                }
            },
            _ => task.cur as usize,
        };
        let step = match task.ph {
            0 => {
                if s.pages[p].locked() {
                    return None;
                }
                self.folio_set(&mut s, p, PG_LOCKED);
                s.tasks[t].cur = p as u8;
                if s.pages[p].wb() {
                    s.tasks[t].ph = 1; // folio_wait_writeback
                    return Some((Step::InvLock, s));
                }
                return Some(self.launder_or_remove(s, t, p, Step::InvLock));
            }
            1 => {
                if s.pages[p].wb() {
                    return None;
                }
                return Some(self.launder_or_remove(s, t, p, Step::InvLock));
            }
            2 if self.cfg.variant.temp_pages => {
                // L: fuse_launder_folio: fuse_wait_on_page_writeback, then
                // fuse_writepage_locked
                if self.in_tree(&s, p).is_some() {
                    return None;
                }
                s.tmp[p] = s.pages[p].ver;
                s.pages[p].set(PG_WRITEBACK);
                s.pages[p].clear(PG_TOWRITE);
                self.queue_writepage(
                    &mut s,
                    Wpa {
                        first: p as u8,
                        n: 1,
                    },
                );
                s.tasks[t].ph = 3;
                return Some((Step::InvLaunder, s));
            }
            3 => {
                // L: the second fuse_wait_on_page_writeback (reply)
                if self.in_tree(&s, p).is_some() {
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
        self.remove_and_next(&mut s, t, p, end);
        Some((step, s))
    }

    fn launder_or_remove(&self, mut s: State, t: usize, p: usize, _lock: Step) -> (Step, State) {
        if s.pages[p].dirty() && self.cfg.variant.temp_pages {
            // L: folio_clear_dirty_for_io, then wait on the rb-tree
            s.pages[p].clear(PG_DIRTY);
            s.tasks[t].ph = 2;
            return self
                .exec_invalidate(s, t, 0, 0)
                .map(|(_, ns)| (Step::InvLaunder, ns))
                .unwrap_or((Step::InvLock, s));
        }
        if self.folio_dirty(&s, p) {
            // folio_launder → fuse_launder_folio: clear_dirty_for_io,
            // fuse_writepage_locked / iomap_writeback_folio (start
            // writeback, one WRITE per dirty range, queue, flush)
            let runs = self.dirty_runs(&s, p);
            self.folio_clear(&mut s, p, PG_DIRTY);
            self.folio_set(&mut s, p, PG_WRITEBACK);
            self.folio_clear(&mut s, p, PG_TOWRITE);
            let h = self.folio(p).start;
            for (rs, rl) in runs {
                if self.cfg.folio_blocks > 1 {
                    s.pages[h].pend += 1;
                }
                self.queue_writepage(&mut s, Wpa { first: rs, n: rl });
            }
            s.tasks[t].ph = 2;
            return (Step::InvLaunder, s);
        }
        let end = match self.current_op(&s, t) {
            Some(Op::Invalidate { first, n, .. }) => (first + n) as usize,
            _ => unreachable!(),
        };
        self.remove_and_next(&mut s, t, p, end);
        (Step::InvRemove, s)
    }

    fn remove_and_next(&self, s: &mut State, t: usize, p: usize, end: usize) {
        self.remove_page(s, p);
        let next = self.folio(p).end;
        s.tasks[t].ph = 0;
        s.tasks[t].cur = next as u8;
        if !(next..end).any(|q| s.pages[q].present()) {
            self.advance(s, t);
        }
    }

    // ------------------------------------------------------------------
    // Daemon

    /// The worker that reads next: the lowest-numbered idle one (workers
    /// are interchangeable, so this loses no behaviour).
    fn reader(s: &State, nw: usize) -> Option<usize> {
        (0..nw).find(|&w| matches!(s.workers[w], Worker::Idle))
    }

    pub fn exec_daemon(&self, s0: &State, w: usize, step: Step) -> Option<State> {
        let mut s = *s0;
        s.ev = Event::None;
        match step {
            Step::DaemonRead => {
                if s.fuse_q.is_empty()
                    || Self::reader(&s, self.cfg.daemon_threads as usize) != Some(w)
                {
                    return None;
                }
                let req = s.fuse_q.remove(0);
                let mut payload = [NONE; MAX_PAGES];
                match req {
                    Req::CacheWrite { first, sent, .. } => {
                        // fuse_dev_do_read copies the folios now (c2)
                        for p in pages_mask(first, sent) {
                            // T: the folio itself, copied now (c2);
                            // L: the temp page copied at writeback time
                            payload[p] = if self.cfg.variant.temp_pages {
                                s.tmp[p]
                            } else {
                                s.pages[p].ver
                            };
                            // a2: data older than a truncation already
                            // applied on the server must not reach it
                            for (ti, spec) in self.cfg.tasks.iter().enumerate() {
                                if let TaskSpec::Truncate { .. }
                                | TaskSpec::Open { trunc: true, .. } = spec
                                {
                                    let vt = version_of(ti);
                                    if hist_pos(s.hist[p], vt).is_some()
                                        && hist_older(s.hist[p], payload[p], vt)
                                    {
                                        s.viol |= VIOL_A2;
                                    }
                                }
                            }
                            if s.wrote_once & (1 << p) != 0 {
                                s.ev = Event::SecondWriteSent;
                            }
                        }
                    }
                    Req::DirectWrite { task, first, n } => {
                        for p in pages_mask(first, n) {
                            payload[p] = version_of(task as usize);
                        }
                    }
                    Req::ThroughWrite { first, n, .. } => {
                        // fuse_copy_args copies the folios now
                        for p in pages_mask(first, n) {
                            payload[p] = s.pages[p].ver;
                        }
                    }
                    _ => {}
                }
                s.workers[w] = Worker::Busy { req, payload };
                Some(s)
            }
            Step::DaemonReply => {
                let (req, payload) = match s.workers[w] {
                    Worker::Busy { req, payload } => (req, payload),
                    _ => return None,
                };
                s.workers[w] = Worker::Idle;
                match req {
                    Req::CacheWrite { first, n, sent } => {
                        for p in pages_mask(first, sent) {
                            // b2: no page-cache data written before a direct
                            // write began lands after that direct WRITE
                            // (data stored concurrently, e.g. by an mmap
                            // re-dirty, is excepted: §10(b)(ii))
                            for (ti, spec) in self.cfg.tasks.iter().enumerate() {
                                if matches!(
                                    spec,
                                    TaskSpec::DioWrite { .. } | TaskSpec::OdirectWrite { .. }
                                ) && s.tasks[ti].applied
                                    && (first as usize..(first + sent) as usize).contains(&p)
                                {
                                    s.ev = Event::CacheAfterDirect;
                                    if payload[p] != NONE
                                        && s.tasks[ti].before[p] & (1 << payload[p]) != 0
                                    {
                                        s.viol |= VIOL_B2;
                                    }
                                }
                            }
                            s.srv[p] = payload[p];
                        }
                        s.srv_size = s.srv_size.max(first + sent);
                        s.workers[w] = Worker::Ending { first, n };
                    }
                    Req::ThroughWrite { task, first, n } => {
                        for p in pages_mask(first, n) {
                            s.srv[p] = payload[p];
                        }
                        s.srv_size = s.srv_size.max(first + n);
                        s.tasks[task as usize].reply = 0;
                    }
                    Req::DirectWrite { task, first, n } => {
                        let v = version_of(task as usize);
                        for p in pages_mask(first, n) {
                            s.srv[p] = v;
                            s.hist[p] = hist_push(s.hist[p], v);
                        }
                        s.srv_size = s.srv_size.max(first + n);
                        s.tasks[task as usize].reply = 0;
                        s.tasks[task as usize].applied = true;
                    }
                    Req::Read { task, first, n } => {
                        let t = task as usize;
                        match self.cfg.tasks[t] {
                            TaskSpec::Mmap { .. }
                            | TaskSpec::Gup { .. }
                            | TaskSpec::Fault { .. } => {
                                let p = first as usize;
                                s.tasks[t].reply =
                                    if first < s.srv_size { s.srv[p] } else { V_ZERO };
                            }
                            _ => {
                                // b1: a direct read returns data no older than
                                // the last write(2) that returned before it began
                                for p in pages_mask(first, n) {
                                    if p as u8 >= s.srv_size {
                                        continue; // short read
                                    }
                                    let stale = s.tasks[t].before[p];
                                    if stale != 0 {
                                        s.ev = Event::DirectReadChecked;
                                    }
                                    if s.srv[p] != NONE && stale & (1 << s.srv[p]) != 0 {
                                        s.viol |= VIOL_B1;
                                    }
                                }
                                s.tasks[t].reply = 0;
                            }
                        }
                    }
                    Req::Setattr { task, size } => {
                        let vt = version_of(task as usize);
                        let old = s.srv_size;
                        let (lo, hi) = if size < old {
                            (size, self.cfg.pages)
                        } else {
                            (old, size)
                        };
                        for p in lo as usize..hi as usize {
                            s.srv[p] = vt; // zeros, written by this truncate
                            s.hist[p] = hist_push(s.hist[p], vt);
                        }
                        s.srv_size = size;
                        s.tasks[task as usize].reply = size;
                    }
                    Req::Fsync { task } | Req::Flush { task } => {
                        s.tasks[task as usize].reply = 0;
                    }
                    Req::Open { task, trunc } => {
                        if trunc {
                            // the server truncates the file to 0
                            let v = version_of(task as usize);
                            for p in 0..self.cfg.pages as usize {
                                s.srv[p] = v;
                                s.hist[p] = hist_push(s.hist[p], v);
                            }
                            s.srv_size = 0;
                        }
                        s.tasks[task as usize].reply = 0;
                    }
                    Req::Fallocate { task, first, n } => {
                        // the server zeroes the range (KEEP_SIZE: pages
                        // beyond its size stay absent)
                        let v = version_of(task as usize);
                        for p in pages_mask(first, n) {
                            if (p as u8) < s.srv_size {
                                s.srv[p] = v;
                                s.hist[p] = hist_push(s.hist[p], v);
                            }
                        }
                        s.tasks[task as usize].reply = 0;
                    }
                }
                Some(s)
            }
            Step::WritepageEnd => {
                let (first, n) = match s.workers[w] {
                    Worker::Ending { first, n } => (first, n),
                    _ => return None,
                };
                // fuse_writepage_end: lock fi; [L: rb_erase, send the
                // secondaries cropped at this WRITE's end, bypassing
                // queued_writes]; writectr--; fuse_writepage_finish (end
                // writeback, wake); unlock
                if self.cfg.variant.temp_pages {
                    let crop = s.l_end[first as usize];
                    s.workers[w] = Worker::Idle; // rb_erase
                    let mut i = 0;
                    while i < s.aux.len() {
                        if s.aux[i].prim == first {
                            let a = s.aux.remove(i);
                            s.tmp[a.page as usize] = a.ver;
                            self.send_writepage(
                                &mut s,
                                Wpa {
                                    first: a.page,
                                    n: 1,
                                },
                                crop,
                            );
                        } else {
                            i += 1;
                        }
                    }
                }
                s.writectr -= 1;
                self.writepage_finish(&mut s, first, n);
                for p in pages_mask(first, n) {
                    s.wrote_once |= 1 << p;
                }
                s.workers[w] = Worker::Idle;
                Some(s)
            }
            _ => None,
        }
    }

    /// All enabled actions, in a fixed order: tasks by index, then daemon
    /// workers (read, reply, writepage_end).
    pub fn enabled(&self, s: &State, out: &mut Vec<Action>) {
        for t in 0..s.tasks.len() {
            if let Some((step, _)) = self.exec_task(s, t) {
                out.push(Action {
                    actor: Actor::Task(t as u8),
                    step,
                });
            }
        }
        let nw = self.cfg.daemon_threads as usize;
        if !s.fuse_q.is_empty() {
            if let Some(w) = Self::reader(s, nw) {
                out.push(Action {
                    actor: Actor::Daemon(w as u8),
                    step: Step::DaemonRead,
                });
            }
        }
        for w in 0..nw {
            match s.workers[w] {
                Worker::Busy { .. } => out.push(Action {
                    actor: Actor::Daemon(w as u8),
                    step: Step::DaemonReply,
                }),
                Worker::Ending { .. } => out.push(Action {
                    actor: Actor::Daemon(w as u8),
                    step: Step::WritepageEnd,
                }),
                Worker::Idle => {}
            }
        }
    }

    /// Is any step enabled? (Daemon first: it is cheap to decide.)
    pub fn any_enabled(&self, s: &State) -> bool {
        let nw = self.cfg.daemon_threads as usize;
        if s.workers[..nw].iter().any(|w| !matches!(w, Worker::Idle)) {
            return true;
        }
        if !s.fuse_q.is_empty() && Self::reader(s, nw).is_some() {
            return true;
        }
        (0..s.tasks.len()).any(|t| self.exec_task(s, t).is_some())
    }

    pub fn step(&self, s: &State, a: Action) -> Option<State> {
        match a.actor {
            Actor::Task(t) => {
                let (step, ns) = self.exec_task(s, t as usize)?;
                if step == a.step {
                    Some(ns)
                } else {
                    None
                }
            }
            Actor::Daemon(w) => self.exec_daemon(s, w as usize, a.step),
        }
    }

    /// Everything finished: every task returned, nothing on /dev/fuse or
    /// in the daemon, nothing queued.
    pub fn all_finished(&self, s: &State) -> bool {
        (0..s.tasks.len()).all(|t| self.task_done(s, t))
            && s.fuse_q.is_empty()
            && s.workers.iter().all(|w| matches!(w, Worker::Idle))
            && s.queued.is_empty()
    }

    /// Quiescent for a3: finished, and no dirty or writeback folio left.
    pub fn quiescent(&self, s: &State) -> bool {
        self.all_finished(s) && s.writectr == 0 && s.pages.iter().all(|p| !p.dirty() && !p.wb())
    }

    /// Task label for narratives: `T1 ftruncate`.
    pub fn actor_label(&self, a: Actor) -> String {
        match a {
            Actor::Task(t) => format!("T{} {}", t, self.cfg.tasks[t as usize].short()),
            Actor::Daemon(w) => format!("D{w} daemon"),
        }
    }
}
