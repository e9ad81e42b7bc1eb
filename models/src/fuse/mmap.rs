//! Faults: filemap_fault and fuse_read_folio, fuse_page_mkwrite, and the
//! GUP re-dirty of a direct read into a MAP_SHARED page
//! (kernel-fuse-protocol.md §3.7).

use super::model::{version_of, FuseModel};
use super::state::*;
use super::step::Step;

impl FuseModel {
    /// filemap_fault → read_folio: lock the folio and READ block `q`
    /// (state C reads one block per READ).
    pub(super) fn fault_read(&self, s: &mut State, t: usize, q: usize) -> Step {
        // fuse_do_readfolio: attr_ver = fuse_get_attr_version()
        self.sample_attr(s, t);
        self.folio_set(s, q, PG_LOCKED);
        // fuse_read_folio: one block, or a whole large folio (lfolio.rs)
        let (first, n) = self.read_folio_range(q);
        self.check_read_limits(s, n);
        s.fuse_q.push(Req::Read {
            task: t as u8,
            first,
            n,
        });
        s.tasks[t].ph = 1;
        s.tasks[t].cur = first;
        s.tasks[t].reply = NONE;
        Step::FaultRead
    }

    /// A failed READ of `fault_read`: filemap_read_folio fails, the folio
    /// is unlocked and stays !uptodate, the fault returns VM_FAULT_SIGBUS;
    /// the task ends without storing.
    pub(super) fn fault_read_failed(&self, s: &mut State, t: usize) -> bool {
        if s.tasks[t].reply != REPLY_ERR {
            return false;
        }
        let q = s.tasks[t].cur as usize;
        self.folio_clear(s, q, PG_LOCKED);
        s.tasks[t].reply = NONE;
        s.tasks[t].pc = self.programs[t].len() as u8;
        true
    }

    /// The READ reply of `fault_read`: the block is uptodate, the folio
    /// unlocked; the fault starts over.
    pub(super) fn fault_read_done(&self, s: &mut State, t: usize) -> bool {
        let task = s.tasks[t];
        let q = task.cur as usize;
        let short = self.short_read(s, t, q);
        if self.lf_folio_pages() > 1 {
            // the reply filled the whole folio (read_reply_into_folio)
            self.folio_set(s, q, PG_UPTODATE);
        } else {
            s.pages[q].ver = task.reply;
            s.pages[q].set(PG_UPTODATE);
        }
        self.folio_clear(s, q, PG_LOCKED);
        s.tasks[t].ph = 0;
        s.tasks[t].cur = 0;
        s.tasks[t].reply = NONE;
        if short {
            // filemap_fault re-checks i_size with the folio: the page now
            // lies beyond EOF, SIGBUS
            s.tasks[t].pc = self.programs[t].len() as u8;
        }
        short
    }

    pub(super) fn op_private_fault(&self, s: &mut State, t: usize, page: u8) -> Option<Step> {
        let task = s.tasks[t];
        Some({
            let p = page as usize;
            if task.ph == 1 {
                if task.reply == NONE {
                    return None;
                }
                if self.fault_read_failed(s, t) {
                    return Some(Step::Sigbus);
                }
                if self.fault_read_done(s, t) {
                    return Some(Step::ShortRead);
                }
                if self.folio_not_uptodate(s, p).is_none() {
                    self.advance(s, t);
                }
                Step::FaultReadDone
            } else if s.pages[p].present() {
                if s.pages[p].locked() {
                    return None; // folio_lock in filemap_fault
                }
                match self.folio_not_uptodate(s, p) {
                    None => {
                        self.advance(s, t);
                        Step::FaultMapped
                    }
                    Some(q) => self.fault_read(s, t, q),
                }
            } else if page >= s.i_size {
                s.tasks[t].pc = self.programs[t].len() as u8;
                Step::Sigbus
            } else {
                self.folio_set(s, p, PG_PRESENT);
                self.fault_read(s, t, p)
            }
        })
    }

    pub(super) fn op_mkwrite_fault(&self, s: &mut State, t: usize, page: u8) -> Option<Step> {
        let task = s.tasks[t];
        Some({
            let p = page as usize;
            if task.ph == 1 {
                // READ reply for the fault
                if task.reply == NONE {
                    return None;
                }
                if self.fault_read_failed(s, t) {
                    return Some(Step::Sigbus);
                }
                if self.fault_read_done(s, t) {
                    return Some(Step::ShortRead);
                }
                Step::FaultReadDone
            } else if !s.pages[p].present() {
                if page >= s.i_size {
                    // SIGBUS: the task ends without storing
                    s.tasks[t].pc = self.programs[t].len() as u8;
                    Step::Sigbus
                } else {
                    self.folio_set(s, p, PG_PRESENT);
                    self.fault_read(s, t, p)
                }
            } else {
                if s.pages[p].locked() {
                    return None;
                }
                if let Some(q) = self.folio_not_uptodate(s, p) {
                    // the folio must be uptodate to be mapped
                    self.fault_read(s, t, q)
                } else {
                    self.folio_set(s, p, PG_LOCKED);
                    self.advance(s, t);
                    Step::MkwriteLock
                }
            }
        })
    }

    pub(super) fn op_mkwrite_wait(&self, s: &mut State, t: usize, page: u8) -> Option<Step> {
        Some({
            let p = page as usize;
            let busy = if self.cfg.variant.temp_pages {
                // L: fuse_wait_on_folio_writeback (rb-tree)
                self.in_tree(s, p).is_some()
            } else {
                s.pages[p].wb()
            };
            if busy {
                return None;
            }
            self.advance(s, t);
            Step::MkwriteWait
        })
    }

    pub(super) fn op_mkwrite_store(&self, s: &mut State, t: usize, page: u8) -> Option<Step> {
        let ver = version_of(t);
        Some({
            let p = page as usize;
            Self::check_cached_store(s);
            s.pages[p].ver = ver;
            // page_mkwrite dirties the whole folio (iomap_page_mkwrite
            // in C marks every block dirty)
            self.folio_set(s, p, PG_DIRTY);
            self.folio_clear(s, p, PG_LOCKED);
            s.hist[p] = hist_push(s.hist[p], ver);
            // an atomic write: its window opens and closes here
            self.window_open(s, t);
            self.window_close(s, t);
            self.advance(s, t);
            Step::MkwriteStore
        })
    }

    pub(super) fn op_gup_redirty(&self, s: &mut State, t: usize, page: u8) -> Option<Step> {
        Some({
            let p = page as usize;
            if !s.pages[p].present() {
                // truncated meanwhile: the pin kept a folio no longer in
                // the mapping; marking it dirty affects nothing
                self.advance(s, t);
                return Some(Step::GupRedirty);
            }
            if s.pages[p].locked() {
                return None;
            }
            // iomap_dirty_folio: the whole folio is dirtied
            self.folio_set(s, p, PG_DIRTY);
            self.advance(s, t);
            Step::GupRedirty
        })
    }
}
