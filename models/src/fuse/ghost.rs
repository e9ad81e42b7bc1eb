//! Ghost state for properties: the syscall windows of writes (a3's "last
//! written data", b2) and the obligations snapshot at syscall entry (b1, d).

use super::config::TaskSpec;
use super::model::{pages_mask, FuseModel};
use super::state::*;
use super::step::Step;

impl FuseModel {
    // ------------------------------------------------------------------
    // Ghost: syscall windows of writes (a3's "last written data", b2)

    /// Pages whose data task `t` may write.
    pub(super) fn written_pages(&self, t: usize) -> std::ops::Range<usize> {
        match self.cfg.tasks[t] {
            TaskSpec::Truncate { .. }
            | TaskSpec::Open { trunc: true, .. }
            | TaskSpec::RemoteTruncate { .. } => 0..self.cfg.pages as usize,
            spec => match spec.range() {
                Some((first, n)) if spec.writes() => first as usize..(first + n) as usize,
                _ => 0..0,
            },
        }
    }

    /// The newest version in a page's history that stands for zeros: never
    /// written (`V_ZERO`), or the zeros of a truncation or hole punch.
    pub(super) fn last_zeros(&self, h: u64) -> u8 {
        hist_list(h)
            .into_iter()
            .rev()
            .find(|&v| self.is_zeros(v))
            .unwrap_or(V_ZERO)
    }

    /// Does version `v` stand for zeros: never written, or a truncation's
    /// or hole punch's zeros?
    pub(super) fn is_zeros(&self, v: u8) -> bool {
        v == V_ZERO
            || (v >= 2
                && matches!(
                    self.task_of_version(v).map(|t| &self.cfg.tasks[t]),
                    Some(
                        TaskSpec::Truncate { .. }
                            | TaskSpec::Open { trunc: true, .. }
                            | TaskSpec::Punch { .. }
                            | TaskSpec::RemoteTruncate { .. }
                    )
                ))
    }

    /// The write's syscall window opens.
    pub(super) fn window_open(&self, s: &mut State, t: usize) {
        for p in self.written_pages(t) {
            s.tasks[t].before[p] = s.fin[p];
        }
    }

    /// The write's syscall window closes: writes that ended before it
    /// opened can no longer be the last data of the pages it wrote.
    pub(super) fn window_close(&self, s: &mut State, t: usize) {
        let v = self.ver(t);
        let mut pages = self.written_pages(t);
        if self.split_through(t) {
            // fuse_perform_write's loop ended at `saved` (a short or
            // failed chunk): write(2) returned that count, the pages after
            // it were not written
            pages.end = pages.end.min(s.tasks[t].saved as usize);
        }
        for p in pages {
            if hist_pos(s.hist[p], v).is_some() {
                s.sup[p] |= s.tasks[t].before[p];
                s.fin[p] |= 1 << v;
            }
        }
    }

    pub(super) fn op_entry(&self, s: &mut State, t: usize) -> Option<Step> {
        let spec = self.cfg.tasks[t];
        let _ver = self.ver(t);
        Some({
            // Ghost snapshot of the obligations at syscall entry.
            let snap = &mut s.tasks[t].snap;
            match spec {
                TaskSpec::Fsync
                | TaskSpec::Close
                | TaskSpec::CloseRelease
                | TaskSpec::Msync { .. } => {
                    // (msync covers its range only)
                    let (first, n) = match spec {
                        TaskSpec::Msync { first, n } => (first as usize, n as usize),
                        _ => (0, self.cfg.pages as usize),
                    };
                    for p in first..first + n {
                        let pg = &s.pages[p];
                        if pg.present() && (pg.dirty() || pg.wb()) {
                            snap[p] = pg.ver;
                        }
                    }
                    for p in 0..self.cfg.pages as usize {
                        s.tasks[t].before[p] = s.drops[p] as u16;
                    }
                }
                TaskSpec::DioRead { first, n, .. }
                | TaskSpec::OdirectRead { first, n, .. }
                | TaskSpec::Read { first, n, .. } => {
                    // b1 (direct), b3 (page cache): data superseded by a
                    // write that returned before this read began must not
                    // be returned
                    for p in pages_mask(first, n) {
                        s.tasks[t].before[p] = s.sup[p];
                    }
                }
                TaskSpec::Fault { page, .. } | TaskSpec::EnvAccess { page, .. } => {
                    // b3: the same for the page a read fault maps
                    s.tasks[t].before[page as usize] = s.sup[page as usize];
                }
                // a writer whose first op was a dropped lock (oplabel.rs):
                // its window opens at entry, as it did at the lock
                _ if s.tasks[t].pc == 0 => self.window_open(s, t),
                _ => {}
            }
            self.advance(s, t);
            Step::Entry
        })
    }
}
