//! FUSE_AUTO_INVAL_DATA, the client side (issue 22 item 3): with
//! fc->auto_inval_data a buffered read first refreshes the attributes and
//! a GETATTR that shows the server's mtime moved invalidates the page
//! cache. Read at torvalds/linux (fs/fuse/file.c 0c58a97f919c and
//! 1ce120dcefc0, fs/fuse/inode.c and dir.c of the 6.1x trees; the same
//! code in L, T, T2 and C):
//!
//! - fuse_cache_read_iter: `if (fc->auto_inval_data || pos + count >
//!   i_size) fuse_update_attributes(inode, file, STATX_SIZE)` before
//!   generic_file_read_iter, no inode lock.
//! - fuse_update_get_attr: GETATTR (fuse_do_getattr, attr_version
//!   sampled first) when `request_mask & fi->inval_mask & ~cache_mask` or
//!   the attributes timed out (fi->i_time). The model's attributes always
//!   time out (attr_timeout 0): every such call sends GETATTR.
//! - fuse_change_attributes_i: with a cache mask (writeback_cache:
//!   STATX_MTIME | STATX_CTIME | STATX_SIZE) the server's size and mtime
//!   are replaced by the inode's own and nothing is invalidated; a reply
//!   older than fi->attr_version, or one that arrives while
//!   FUSE_I_SIZE_UNSTABLE is set, is dropped; otherwise
//!   fuse_change_attributes_common takes the server's mtime, and if the
//!   size changed truncate_pagecache + invalidate_inode_pages2 (unless
//!   explicit_inval_data, not modelled), else with auto_inval_data an
//!   mtime that differs from the cached one invalidate_inode_pages2 of the
//!   whole mapping (its -EBUSY ignored). The walk is truncate.rs's
//!   (InvLock, InvLaunder: fuse_launder_folio, InvRemove).
//!
//! The kernel's cached mtime changes only through
//! fuse_change_attributes_common (GETATTR, and the SETATTR reply of
//! fuse_do_setattr): without writeback_cache the inode has S_NOCMTIME,
//! so file_update_time does nothing, and fuse_write_update_attr (after a
//! write-through or direct WRITE) only invalidates the attributes. The
//! server's mtime moves with every change it applies (WRITE, SETATTR,
//! FALLOCATE, OPEN(O_TRUNC), another client's change): an ideal server
//! whose timestamps never coincide. So the client's own writes make the
//! next read invalidate the page cache too.
//!
//! State: `State::mtime` (MT_STALE: the server's mtime differs from the
//! inode's) and, per task, `Task::mt` for a GETATTR or SETATTR reply on
//! its way (MT_PENDING; MT_DIFF: its mtime differs from the inode's;
//! MT_MOVED: the server changed again after answering) and, after a
//! GETATTR, MT_INVAL (fuse_change_attributes_i's `inval` from the mtime).
//! Kept only with auto_inval_data on a mount without a cache mask, so
//! every other configuration keeps its states.

use super::config::TaskSpec;
use super::model::FuseModel;
use super::program::Op;
use super::state::*;

/// `State::mtime`: the server's mtime differs from the cached one.
pub const MT_STALE: u8 = 1;
/// `State::mtime` (`attr_valid`): STATX_SIZE is in fi->inval_mask.
pub const MT_INVAL_SIZE: u8 = 2;
/// `Task::mt`: a GETATTR or SETATTR reply of this task is on its way.
pub const MT_PENDING: u8 = 1;
/// `Task::mt`: that reply's mtime differs from the inode's.
pub const MT_DIFF: u8 = 2;
/// `Task::mt`: the server changed after it answered.
pub const MT_MOVED: u8 = 4;
/// `Task::mt`: fuse_change_attributes_i decided to invalidate because
/// the mtime changed (the size did not).
pub const MT_INVAL: u8 = 8;

impl FuseModel {
    /// fuse_get_cache_mask() != 0: writeback_cache keeps the inode's
    /// size and mtime (the mutant ignores the mask).
    pub(super) fn attr_cache_mask(&self) -> bool {
        self.cfg.writeback_cache && !self.cfg.variant.mut_cache_mask_ignored
    }

    /// Is the server's mtime against the inode's tracked?
    fn mtime_tracked(&self) -> bool {
        self.cfg.auto_inval_data && !self.attr_cache_mask()
    }

    /// The server applied a change: its mtime moves.
    pub(super) fn server_modified(&self, s: &mut State) {
        if !self.mtime_tracked() {
            return;
        }
        s.mtime |= MT_STALE;
        for t in s.tasks.iter_mut() {
            if t.mt & MT_PENDING != 0 {
                t.mt |= MT_MOVED;
            }
        }
    }

    /// The server answers task `t`'s GETATTR or SETATTR: the reply
    /// carries its mtime now.
    pub(super) fn reply_mtime(&self, s: &mut State, t: usize) {
        if !self.mtime_tracked() {
            return;
        }
        s.tasks[t].mt = MT_PENDING | if s.mtime & MT_STALE != 0 { MT_DIFF } else { 0 };
    }

    /// fuse_change_attributes_common runs with task `t`'s reply: the
    /// inode takes its mtime, and fi->inval_mask's basic stats are
    /// cleared. Returns whether that mtime differed from the inode's.
    pub(super) fn take_mtime(&self, s: &mut State, t: usize) -> bool {
        if !self.mtime_tracked() {
            return false;
        }
        let mt = s.tasks[t].mt;
        s.mtime = if mt & MT_MOVED != 0 { MT_STALE } else { 0 };
        s.tasks[t].mt = 0;
        mt & MT_DIFF != 0
    }

    /// A reply that is dropped (stale GETATTR, failed SETATTR): the
    /// inode keeps its mtime.
    pub(super) fn drop_mtime(&self, s: &mut State, t: usize) {
        s.tasks[t].mt = 0;
    }

    /// fuse_invalidate_attr_mask with STATX_SIZE (fuse_write_update_attr,
    /// fuse_truncate_update_attr, fuse_reverse_inval_inode's
    /// fuse_invalidate_attr, fuse_file_fallocate): with `attr_valid` the
    /// next read's fuse_update_attributes sends GETATTR.
    pub(super) fn invalidate_attr_size(&self, s: &mut State) {
        if self.mtime_tracked() && self.cfg.attr_valid {
            s.mtime |= MT_INVAL_SIZE;
        }
    }

    /// fuse_update_get_attr of a read with valid attributes: no GETATTR
    /// unless STATX_SIZE is in fi->inval_mask (no cache mask hides it:
    /// with one, `mtime_tracked` is off and nothing is sent).
    pub(super) fn attrs_valid(&self, s: &State) -> bool {
        self.cfg.attr_valid && (!self.mtime_tracked() || s.mtime & MT_INVAL_SIZE == 0)
    }

    /// Requests whose application changes the server's file (its mtime).
    pub(super) fn modifies(req: &Req) -> bool {
        match *req {
            Req::CacheWrite { sent, .. } => sent > 0,
            Req::ThroughWrite { n, .. } | Req::DirectWrite { n, .. } => n > 0,
            Req::Setattr { .. } | Req::Fallocate { .. } => true,
            Req::Open { trunc, .. } => trunc,
            _ => false,
        }
    }
}

/// An auto_inval_data read is in fuse_change_attributes_i's page-cache
/// invalidation (its truncate_pagecache or invalidate_inode_pages2 is
/// its next op, not skipped: the size or the mtime changed) while
/// another task is inside a syscall that changes the file (a write,
/// truncation, a direct write, an mmap store) or writeback is under
/// way: the window the option opens.
pub fn w_autoinval_race(m: &FuseModel, s: &State) -> bool {
    if !m.cfg.auto_inval_data {
        return false;
    }
    (0..s.tasks.len()).any(|t| {
        matches!(m.cfg.tasks[t], TaskSpec::Read { .. })
            && matches!(
                m.current_op(s, t),
                Some(Op::Invalidate { .. } | Op::TruncatePagecache)
            )
            && ((0..s.tasks.len()).any(|u| {
                u != t && m.cfg.tasks[u].writes() && s.tasks[u].pc > 0 && !m.task_done(s, u)
            }) || s.pages.iter().any(|p| p.wb()))
    })
}

/// An auto_inval_data read's invalidation waits: on a locked folio, on
/// writeback, or for the WRITE of a folio it laundered
/// (fuse_launder_folio).
pub fn w_autoinval_wait(m: &FuseModel, s: &State) -> bool {
    if !m.cfg.auto_inval_data {
        return false;
    }
    (0..s.tasks.len()).any(|t| {
        matches!(m.cfg.tasks[t], TaskSpec::Read { .. })
            && matches!(m.current_op(s, t), Some(Op::Invalidate { .. }))
            && m.exec_task(s, t).is_none()
    })
}
