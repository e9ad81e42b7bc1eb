//! Attributes: stat → fuse_update_attributes → fuse_do_getattr (GETATTR)
//! → fuse_change_attributes with fi->attr_version and
//! FUSE_I_SIZE_UNSTABLE (fs/fuse/inode.c, dir.c; kernel-sources.md
//! §8); short READs (fuse_read_update_size, 484ce65715b0: shrink only if
//! attr_ver >= fi->attr_version, the size shrinks and the bit is clear);
//! server-side size changes by another client (write-through mounts).
//! With writeback_cache, fuse_get_cache_mask() keeps the local i_size:
//! GETATTR never changes it and a short READ means a hole.

use super::config::TaskSpec;
use super::model::FuseModel;
use super::state::*;
use super::step::Step;

impl FuseModel {
    /// fi->attr_version = atomic64_inc_return(&fc->attr_version): every
    /// sample taken before is now older (the model keeps only that order).
    pub(super) fn bump_attr(s: &mut State) {
        for t in s.tasks.iter_mut() {
            if t.attr == 1 {
                t.attr = 2;
            }
        }
    }

    /// fuse_get_attr_version before sending a GETATTR or a READ.
    pub(super) fn sample_attr(&self, s: &mut State, t: usize) {
        if self.cfg.attr_readers() {
            s.tasks[t].attr = 1;
            s.tasks[t].rsize = NONE;
            s.tasks[t].moved = false;
        }
    }

    /// The server answers a GETATTR or READ of task `t` (ghost for a4).
    pub(super) fn answered(&self, s: &mut State, t: usize) {
        if self.cfg.attr_readers() {
            s.tasks[t].rsize = s.srv_size;
            s.tasks[t].moved = false;
        }
    }

    /// Ghost bookkeeping after every step (a4): sizes that size-changing
    /// operations produced, and "a local size change completed after an
    /// answer". `reader` marks the steps that apply a GETATTR or short
    /// READ size (they are judged, not recorded).
    pub(super) fn track_sizes(&self, before: &State, s: &mut State, reader: bool) {
        if !self.cfg.attr_readers() {
            return;
        }
        if s.srv_size != before.srv_size {
            s.sizes |= 1 << s.srv_size;
        }
        if !reader && s.i_size != before.i_size {
            s.sizes |= 1 << s.i_size;
            for t in s.tasks.iter_mut() {
                if t.rsize != NONE {
                    t.moved = true;
                }
            }
        }
    }

    /// a4 and a4-exact when a GETATTR (`short_of: None`) or a short READ
    /// (`Some(rsize)`: the server's size when it answered) writes i_size
    /// = `v`. The kernel's contract (a4): a GETATTR size is one the
    /// server had; a short READ's `pos + num_read` is an upper bound of
    /// it (fuse_read_update_size; the short READ says only that EOF is at
    /// or before it); neither undoes a later local size change
    /// (attr_version, 484ce65715b0). a4-exact also asks the short READ's
    /// size to be one the server had: stricter than the contract.
    fn apply_attr_size(s: &mut State, t: usize, v: u8, short_of: Option<u8>) {
        let task = s.tasks[t];
        let undoes = task.moved && v != s.i_size;
        let unproduced = s.sizes & (1 << v) == 0;
        let out_of_contract = match short_of {
            None => unproduced,
            Some(rsize) => rsize == NONE || v < rsize,
        };
        if undoes || out_of_contract {
            s.viol2 |= VIOL2_A4;
        }
        if undoes || unproduced {
            s.viol2 |= VIOL2_A4_EXACT;
        }
        s.i_size = v;
    }

    /// fuse_do_getattr's reply → fuse_change_attributes(attr_version)
    /// (fuse_change_attributes_i): ignored if fi->attr_version moved past
    /// the sample or FUSE_I_SIZE_UNSTABLE is set; otherwise
    /// fuse_change_attributes_common (attr_version++, the server's mtime
    /// without a cache mask) and, without writeback_cache,
    /// i_size_write(attr->size); `saved` gets the old size for the
    /// truncate_pagecache / invalidate_inode_pages2 that follow, and with
    /// auto_inval_data an mtime change at the same size sets MT_INVAL
    /// for the invalidate_inode_pages2 (autoinval.rs).
    pub(super) fn recv_getattr(&self, s: &mut State, t: usize, size: u8) -> Step {
        let task = s.tasks[t];
        s.tasks[t].attr = 0;
        s.tasks[t].rsize = NONE;
        s.tasks[t].saved = s.i_size;
        let stale = task.attr == 2 || s.size_unstable;
        if stale && !self.cfg.variant.mut_attr_no_version {
            self.drop_mtime(s, t);
            s.ev = if self.cfg.auto_inval_data && matches!(self.cfg.tasks[t], TaskSpec::Read { .. })
            {
                Event::AutoInvalStale
            } else {
                Event::StaleAttr
            };
            return Step::GetattrStale;
        }
        Self::bump_attr(s);
        let mtime_moved = self.take_mtime(s, t);
        if !self.attr_cache_mask() && size != s.i_size {
            Self::apply_attr_size(s, t, size, None);
            s.ev = Event::AttrSize;
        } else if mtime_moved && !self.attr_cache_mask() {
            // else if (fc->auto_inval_data) { ... if
            // (!timespec64_equal(&old_mtime, &new_mtime)) inval = true; }
            s.tasks[t].mt = super::autoinval::MT_INVAL;
            s.ev = Event::AutoInval;
            return Step::GetattrAutoInval;
        }
        Step::GetattrReply
    }

    /// A page-cache READ at page `q` came back short (the server's file
    /// ends at or before it): without writeback_cache,
    /// fuse_short_read → fuse_read_update_size(pos + num_read = q).
    /// Returns whether i_size shrank.
    pub(super) fn short_read(&self, s: &mut State, t: usize, q: usize) -> bool {
        let task = s.tasks[t];
        s.tasks[t].attr = 0;
        s.tasks[t].rsize = NONE;
        if self.cfg.writeback_cache || task.rsize == NONE || (q as u8) < task.rsize {
            return false; // a full READ (or a hole, with writeback_cache)
        }
        let fresh = task.attr == 1 || self.cfg.variant.mut_attr_no_version;
        let q = q as u8;
        if q >= s.i_size {
            return false;
        }
        if !fresh || (s.size_unstable && !self.cfg.variant.mut_attr_no_version) {
            s.ev = Event::StaleAttr;
            return false;
        }
        Self::bump_attr(s);
        Self::apply_attr_size(s, t, q, Some(task.rsize));
        s.ev = Event::ShortRead;
        true
    }

    /// Another client truncates the server's file to `size` pages (zeros
    /// beyond, written "by" this task).
    pub(super) fn op_remote_truncate(&self, s: &mut State, t: usize) -> Option<Step> {
        let size = match self.cfg.tasks[t] {
            TaskSpec::RemoteTruncate { size } => size,
            _ => unreachable!("remote truncate from another task"),
        };
        self.window_open(s, t);
        let v = self.ver(t);
        let (lo, hi) = if size < s.srv_size {
            (size, self.cfg.pages)
        } else {
            (s.srv_size, size)
        };
        for p in lo as usize..hi as usize {
            s.srv[p] = v;
            s.hist[p] = hist_push(s.hist[p], v);
        }
        s.srv_size = size;
        self.server_modified(s);
        self.window_close(s, t);
        self.advance(s, t);
        Some(Step::RemoteTruncate)
    }
}
