//! Faults: filemap_fault and fuse_read_folio, fuse_page_mkwrite, and the
//! GUP re-dirty of a direct read into a MAP_SHARED page
//! (kernel-sources.md §3.7).

use super::model::FuseModel;
use super::read::{Got, PH_GET};
use super::state::*;
use super::step::Step;

impl FuseModel {
    /// filemap_fault's lookup of block `page`: SIGBUS at or past EOF;
    /// a miss reads around the fault (do_sync_mmap_readahead), a folio
    /// left not uptodate is read by read_folio; the folio lock is waited
    /// for (read.rs). `Ok` is a step of the lookup, `Err` an uptodate,
    /// unlocked folio.
    /// `write`: a write fault, which the model also lets stand for a
    /// write-protect fault on a mapped page (do_wp_page, no i_size check),
    /// so only a miss past EOF raises SIGBUS; a read fault always goes
    /// through filemap_fault's check.
    fn fault_lookup(
        &self,
        s: &mut State,
        t: usize,
        page: u8,
        write: bool,
    ) -> Option<Result<Step, ()>> {
        let p = page as usize;
        if s.tasks[t].ph == PH_GET
            && !(write && s.pages[p].present())
            && self.page_start(page) >= s.i_size
        {
            // "if (unlikely(index >= max_idx)) return VM_FAULT_SIGBUS",
            // max_idx = DIV_ROUND_UP(i_size, PAGE_SIZE): the task ends
            // without mapping
            s.tasks[t].pc = self.programs[t].len() as u8;
            return Some(Ok(Step::Sigbus));
        }
        match self.get_folio(s, t, p, true, self.fault_window(t, page))? {
            Got::Step(step) => Some(Ok(step)),
            Got::Ready => Some(Err(())),
        }
    }

    pub(super) fn op_private_fault(&self, s: &mut State, t: usize, page: u8) -> Option<Step> {
        Some(match self.fault_lookup(s, t, page, false)? {
            Ok(step) => step,
            Err(()) => {
                // the folio is mapped: the data the read fault returns
                self.check_cache_read(s, t, page as usize);
                self.advance(s, t);
                if self.store_start(t).is_some() {
                    // an `env` task's load is over: the fault's locals
                    // (readahead size, reply) die with it, and its store
                    // is a fault of its own (trace conformance keeps
                    // such a task as one that has not begun)
                    s.tasks[t] = Task {
                        pc: s.tasks[t].pc,
                        ..Task::new()
                    };
                }
                Step::FaultMapped
            }
        })
    }

    pub(super) fn op_mkwrite_fault(&self, s: &mut State, t: usize, page: u8) -> Option<Step> {
        Some(match self.fault_lookup(s, t, page, true)? {
            Ok(step) => step,
            Err(()) => {
                // fuse_page_mkwrite: folio_lock
                self.folio_set(s, page as usize, PG_LOCKED);
                self.advance(s, t);
                Step::MkwriteLock
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
        let ver = self.ver(t);
        Some({
            let p = page as usize;
            Self::check_cached_store(s);
            // a store at or beyond EOF inside the EOF page (the fault gave
            // no SIGBUS: the page starts below EOF): the bytes stay in the
            // page cache and writeback crops them; they are no data of the
            // file (mmap(2): "modifications to that region are not written
            // out to the file"), so the store is no write for a3 / b3
            let past_eof = page >= s.i_size && self.eof_stores();
            if past_eof {
                s.ev = Event::StorePastEof;
            }
            s.pages[p].ver = ver;
            // page_mkwrite dirties the whole folio (iomap_page_mkwrite
            // in C marks every block dirty); folio_mark_dirty clears
            // PG_reclaim, so a readahead mark
            self.folio_set(s, p, PG_DIRTY);
            self.folio_clear(s, p, PG_READAHEAD);
            self.folio_clear(s, p, PG_LOCKED);
            s.hist[p] = hist_push(s.hist[p], ver);
            // an atomic write: its window opens and closes here
            if !past_eof {
                self.window_open(s, t);
                self.window_close(s, t);
            }
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
            // iomap_dirty_folio: the whole folio is dirtied (through
            // folio_mark_dirty, which clears a readahead mark)
            self.folio_set(s, p, PG_DIRTY);
            self.folio_clear(s, p, PG_READAHEAD);
            self.advance(s, t);
            Step::GupRedirty
        })
    }
}
