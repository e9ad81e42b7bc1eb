//! The writeback batch budget: when fuse_writepages sends the request it
//! is building, and how many folio / descriptor slots that request has.
//!
//! T (6.16, fuse_writepage_need_send, f3cb8bd908c7), per folio: send if
//! `nr_pages + folio_nr_pages > max_pages`, or `nr_pages * PAGE_SIZE +
//! folio_size > max_write`, or the folio does not follow the last one, or
//! the folio array cannot grow. C (6.17+, fuse_folios_need_send, per dirty
//! range from iomap): send if `DIV_ROUND_UP(bytes + len, PAGE_SIZE) >
//! max_pages`, or `bytes + len > max_write`, or the range does not start
//! where the last descriptor ended; c3880a7b10e4 (2026) first sends when
//! `num_folios >= max_pages`. Otherwise, when `num_folios == max_folios`,
//! fuse_pages_realloc grows the arrays to `min(max(2 * max_folios,
//! FUSE_DEFAULT_MAX_PAGES_PER_REQ = 32), max_pages)`: with nothing to gain
//! it only WARNs and still returns true, and the next append writes one
//! past the arrays (the overflow c3880a7b10e4 fixes). A new request has one
//! slot (fuse_writepage_args_alloc).
//!
//! With page-sized blocks every descriptor is at least a page, so the page
//! budget caps descriptors at max_pages and no slot can overflow; slots are
//! therefore tracked only with sub-page blocks (`Config::blocks_per_page`,
//! fuseblk), which keeps every other configuration's state unchanged. An
//! allocation failure (the other way realloc returns false) is not modelled.

use super::model::FuseModel;
use super::state::*;

/// FUSE_DEFAULT_MAX_PAGES_PER_REQ.
const DEFAULT_MAX_PAGES_PER_REQ: u8 = 32;

impl FuseModel {
    /// Are descriptor slots tracked (sub-page blocks)?
    pub(super) fn slots_tracked(&self) -> bool {
        self.cfg.blocks_per_page > 1
    }

    /// fuse_writepage_need_send / fuse_folios_need_send: must task `t`'s
    /// batch be sent before the range `rs..rs+rl` (model pages, i.e.
    /// blocks with sub-page blocks) is appended?
    pub(super) fn wb_need_send(&self, s: &mut State, t: usize, rs: u8, rl: u8) -> bool {
        let task = s.tasks[t];
        let c = &self.cfg;
        // a range larger than the cap on its own, whichever batch it
        // starts or joins
        self.note_cap_inside(rs, rs, rl, c.max_kpages);
        if task.bn == 0 {
            return false;
        }
        if self.slots_tracked() && c.variant.slot_check && task.bdesc >= c.max_pages {
            // c3880a7b10e4: "Reached max pages or max folio slots"
            return true;
        }
        // positions per page: blocks (C) or units (T, T2: subpage.rs);
        // "Reached max pages" counts pages, "Reached max write bytes"
        // bytes (fc->max_write, in positions)
        let bytes = (task.bn + rl) as u16;
        let cap = match c.max_kpages {
            0 => c.max_pages as u16,
            k => k,
        };
        let over_pages = self.pages_spanned(task.bfirst, task.bn + rl) > cap;
        if over_pages && task.bfirst + task.bn == rs {
            self.note_cap_inside(task.bfirst, rs, rl, cap);
        }
        let over_write = c.limit_units(true).is_some_and(|mw| bytes > mw);
        if over_pages || over_write {
            if self.lf_geometry() {
                s.ev = Event::BatchCut;
            }
            return true;
        }
        // discontinuity (the array's growth is wb_append's)
        task.bfirst + task.bn != rs
    }

    /// The append after wb_need_send said no: fuse_pages_realloc when the
    /// slots are full, then one more descriptor.
    pub(super) fn wb_append(&self, s: &mut State, t: usize) {
        if !self.slots_tracked() {
            return;
        }
        let mp = self.cfg.max_pages;
        let task = &mut s.tasks[t];
        if task.bn == 0 {
            // fuse_writepage_args_setup: a new request, one slot
            task.bdesc = 1;
            task.bslots = 1;
            return;
        }
        let grow = task.bdesc == task.bslots;
        if grow && !self.cfg.variant.mut_realloc_no_grow {
            // fuse_pages_realloc (WARN_ON(nfolios <= data->max_folios))
            task.bslots = (2 * task.bslots).max(DEFAULT_MAX_PAGES_PER_REQ).min(mp);
        }
        task.bdesc += 1;
        let over = task.bdesc > task.bslots;
        if grow {
            s.ev = Event::SlotRealloc;
        }
        if over {
            s.lf_viol |= VIOL_LF_SLOTS;
        }
    }

    /// The batch was sent (or the walk ended): no request being built.
    pub(super) fn wb_reset(&self, s: &mut State, t: usize) {
        let task = &mut s.tasks[t];
        task.bn = 0;
        task.bdesc = 0;
        task.bslots = 0;
    }
}

/// lf-slots: no batch holds more descriptors than slots allocated.
pub fn lf_slots(_m: &FuseModel, s: &State) -> bool {
    s.lf_viol & VIOL_LF_SLOTS == 0
}

/// Sentences for lf-slots (narrate.rs).
pub fn why(m: &FuseModel, s: &State) -> Vec<String> {
    let mut out = Vec::new();
    for (t, task) in s.tasks.iter().enumerate() {
        if task.bdesc > task.bslots {
            out.push(format!(
                "T{t}'s writeback request holds {} descriptors (blocks {}..{}) in {} slot{}: fuse_pages_realloc could not grow past max_pages={} and still returned true{}",
                task.bdesc,
                task.bfirst,
                task.bfirst + task.bn - 1,
                task.bslots,
                if task.bslots == 1 { "" } else { "s" },
                m.cfg.max_pages,
                if m.cfg.variant.slot_check {
                    ""
                } else {
                    "; without c3880a7b10e4 nothing sends the request first"
                }
            ));
        }
    }
    out
}
