//! Server notifications racing the page cache (issue 22 item 3):
//! FUSE_NOTIFY_INVAL_INODE and FUSE_NOTIFY_STORE, written by a server
//! thread to /dev/fuse at any moment (fs/fuse/dev.c fuse_notify_*, read at
//! torvalds/linux 6.18: fuse_notify_inval_inode → fuse_reverse_inval_inode
//! in fs/fuse/inode.c; fuse_notify_store in fs/fuse/dev.c).
//!
//! A notification task stands for a server that changes its file (another
//! client's write of pages `first..first+n`, a new data version) and then
//! tells the kernel. The change is a write whose window opens when the
//! server's data changes and closes when the notification's write(2) on
//! /dev/fuse returns: the most generous server, one that acknowledges its
//! own client only after the kernel took the notification. a3 and b3
//! judge it like any write; a violation is then the kernel's or the
//! protocol's, not a server that notified late.
//!
//! fuse_reverse_inval_inode (no inode lock, no FUSE_NOWRITE):
//! fi->attr_version = atomic64_inc_return(&fc->attr_version) (a GETATTR
//! or READ sampled before is now stale), fuse_invalidate_attr, and for
//! offset >= 0 invalidate_inode_pages2_range(pg_start, pg_end) (len <= 0:
//! pg_end = -1, to the end): per folio folio_lock (waits on a locked
//! folio), folio_wait_writeback, a dirty folio is laundered
//! (fuse_launder_folio: writeback WRITE, waited for), then removed. The
//! model reuses the invalidation steps of truncate.rs (InvLock, InvLaunder,
//! InvRemove).
//!
//! fuse_notify_store (no inode lock): i_size_read; if the store ends past
//! it, fuse_write_update_attr(inode, end, num) (attr_version++, i_size =
//! end); then per page filemap_grab_folio (creates the folio or waits for
//! its lock), fuse_copy_folio, folio_mark_uptodate if it was not (whole
//! page), folio_unlock. It neither waits for writeback nor looks at
//! PG_dirty: a dirty folio keeps its flag and now holds the stored data,
//! a folio under writeback gets the stored data under its WRITE.
//!
//! Abstractions: the notifying thread is not one of the daemon's request
//! workers (libfuse asks servers to notify outside the request they
//! handle); one model page per folio (no large folios, sub-page blocks or
//! units); FUSE_NOTIFY_RETRIEVE, INVAL_ENTRY and FUSE_INVAL_ALL_INODES are
//! not modelled.

use super::config::{Config, InvalForm, TaskSpec};
use super::model::{pages_mask, FuseModel};
use super::program::Op;
use super::state::*;
use super::step::Step;

/// The steps of a notification task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NotifyOp {
    /// The server's file changes: pages `first..first+n` get the task's
    /// version (the write's window opens).
    ServerWrite { first: u8, n: u8 },
    /// fuse_reverse_inval_inode up to the page walk: attr_version++,
    /// fuse_invalidate_attr.
    InvalAttr,
    /// The mutant's walk (`mut_inval_skip_busy`): drop the clean,
    /// unlocked folios of `first..first+n`, skip the others.
    InvalSkipBusy { first: u8, n: u8 },
    /// fuse_notify_store up to the page loop: fuse_write_update_attr
    /// when the store ends past i_size.
    StoreSize { end: u8 },
    /// fuse_notify_store's loop over `first..first+n`, a page a step.
    StorePages { first: u8, n: u8 },
    /// The notification's write(2) on /dev/fuse returns (the server's
    /// change is acknowledged: its window closes); n1 is judged over
    /// `first..first+n`, the pages a NOTIFY_INVAL_INODE invalidated.
    Return { first: u8, n: u8 },
}

impl FuseModel {
    /// Whether notification task `t` has run its NotifyServerWrite (the
    /// server's change is applied): what a recorded `server changed`
    /// note asserts (harness conform, Obs::Changed).
    pub fn server_changed(&self, s: &State, t: usize) -> bool {
        self.task_done(s, t)
            || self.programs[t]
                .iter()
                .position(|o| matches!(o, Op::Notify(NotifyOp::ServerWrite { .. })))
                .is_some_and(|q| s.tasks[t].pc as usize > q)
    }
}

/// The program of a notification task.
pub(super) fn build(cfg: &Config, spec: &TaskSpec, p: &mut Vec<Op>) {
    match *spec {
        TaskSpec::NotifyInval { first, n, form } => {
            p.push(Op::Notify(NotifyOp::ServerWrite { first, n }));
            p.push(Op::Notify(NotifyOp::InvalAttr));
            let (a, m) = match form {
                InvalForm::Range => (first, n),
                InvalForm::Whole => (0, cfg.pages),
                InvalForm::Attr => (0, 0),
            };
            if m > 0 {
                p.push(if cfg.variant.mut_inval_skip_busy {
                    Op::Notify(NotifyOp::InvalSkipBusy { first: a, n: m })
                } else {
                    Op::Invalidate {
                        first: a,
                        n: m,
                        if_resized: false,
                    }
                });
            }
            p.push(Op::Notify(NotifyOp::Return { first: a, n: m }));
        }
        TaskSpec::NotifyStore { first, n } => {
            p.push(Op::Notify(NotifyOp::ServerWrite { first, n }));
            p.push(Op::Notify(NotifyOp::StoreSize { end: first + n }));
            p.push(Op::Notify(NotifyOp::StorePages { first, n }));
            p.push(Op::Notify(NotifyOp::Return { first: 0, n: 0 }));
        }
        _ => unreachable!("not a notification"),
    }
}

impl Config {
    /// A notification task: one page per folio, and no abort (after it
    /// the server cannot write to /dev/fuse).
    pub(super) fn validate_notify(&self, t: &TaskSpec) -> Result<(), String> {
        if !matches!(
            t,
            TaskSpec::NotifyInval { .. } | TaskSpec::NotifyStore { .. }
        ) {
            return Ok(());
        }
        if self.folio_blocks > 1 || self.folio_pages > 1 || self.sub_page() {
            return Err(format!(
                "task '{t}': notifications are modelled with one page per folio (no folio_blocks, folio_pages or units)"
            ));
        }
        if self
            .tasks
            .iter()
            .any(|u| matches!(u, TaskSpec::Abort | TaskSpec::Timeout))
        {
            return Err(format!(
                "task '{t}': a notification after the abort fails (-ENOTCONN): not modelled with abort or timeout"
            ));
        }
        Ok(())
    }
}

impl FuseModel {
    pub(super) fn op_notify(&self, s: &mut State, t: usize, op: NotifyOp) -> Option<Step> {
        let step = match op {
            NotifyOp::ServerWrite { first, n } => {
                self.window_open(s, t);
                let v = self.ver(t);
                for p in pages_mask(first, n) {
                    s.srv[p] = v;
                    s.hist[p] = hist_push(s.hist[p], v);
                }
                s.srv_size = s.srv_size.max(first + n);
                self.server_modified(s);
                Step::NotifyServerWrite
            }
            NotifyOp::InvalAttr => {
                // fi->attr_version = atomic64_inc_return(); fuse_invalidate_attr
                Self::bump_attr(s);
                self.invalidate_attr_size(s);
                s.ev = Event::NotifyInval;
                Step::ReverseInvalInode
            }
            NotifyOp::InvalSkipBusy { first, n } => {
                for p in pages_mask(first, n) {
                    let pg = s.pages[p];
                    if pg.present() && !pg.locked() && !pg.wb() && !pg.dirty() {
                        self.remove_page(s, p);
                    }
                }
                Step::InvRemove
            }
            NotifyOp::StoreSize { end } => {
                // file_size = i_size_read(); only if end > file_size:
                // fuse_write_update_attr(inode, end, num) (attr_version++,
                // i_size_write); the mutant skips that call
                if end > s.i_size && !self.cfg.variant.mut_store_no_size {
                    Self::bump_attr(s);
                    self.invalidate_attr_size(s);
                    s.i_size = end;
                    s.ev = Event::StoreExtend;
                }
                Step::NotifyStoreSize
            }
            NotifyOp::StorePages { first, n } => {
                let p = (first + s.tasks[t].cur) as usize;
                // filemap_grab_folio: FGP_LOCK sleeps on a locked folio
                if s.pages[p].locked() {
                    return None;
                }
                let pg = s.pages[p];
                if pg.dirty() || pg.wb() {
                    s.ev = Event::StoreOverDirty;
                }
                // fuse_copy_folio; folio_mark_uptodate (a whole page);
                // PG_dirty and PG_writeback stay as they were
                s.pages[p].set(PG_PRESENT | PG_UPTODATE);
                s.pages[p].ver = self.ver(t);
                if s.tasks[t].cur + 1 < n {
                    s.tasks[t].cur += 1;
                    return Some(Step::NotifyStorePage);
                }
                Step::NotifyStorePage
            }
            NotifyOp::Return { first, n } => {
                // n1: the invalidated range holds no clean page older
                // than the server's data
                let before = s.tasks[t].before;
                if pages_mask(first, n).any(|p| self.stale_clean(s, p, before[p])) {
                    s.viol2 |= VIOL2_NOTIFY_INVAL;
                }
                self.window_close(s, t);
                Step::Return
            }
        };
        self.advance(s, t);
        Some(step)
    }
}

impl FuseModel {
    /// A clean, uptodate cached page whose data the notification's
    /// change superseded (written by a write that had ended when the
    /// server's change began: `before`, the window's snapshot of `fin`)
    /// and that the server no longer has (a WRITE of the client's that
    /// landed after the change put it back there: a3's business).
    /// Under writeback counts: its WRITE carries that data. (A write
    /// concurrent with the change may be ordered either way: b3's and
    /// a3's business, not the notification's.)
    fn stale_clean(&self, s: &State, p: usize, before: u16) -> bool {
        let pg = &s.pages[p];
        pg.present()
            && pg.has(PG_UPTODATE)
            && !pg.dirty()
            && pg.ver != NONE
            && before & (1 << pg.ver) != 0
            && pg.ver != s.srv[p]
    }
}

fn notifier(m: &FuseModel, t: usize) -> bool {
    matches!(
        m.cfg.tasks[t],
        TaskSpec::NotifyInval { .. } | TaskSpec::NotifyStore { .. }
    )
}

/// libfuse documents fuse_lowlevel_notify_inval_inode as "If there are
/// no dirty pages, this function will never block": the page walk of a
/// NOTIFY_INVAL_INODE blocked (on a locked folio or on writeback that
/// was under way) while no page of its range is dirty.
pub fn w_notify_blocked(m: &FuseModel, s: &State) -> bool {
    (0..s.tasks.len()).any(|t| {
        let range = match m.current_op(s, t) {
            Some(Op::Invalidate { first, n, .. }) if notifier(m, t) => (first, n),
            _ => return false,
        };
        matches!(s.tasks[t].ph, 0 | 1)
            && !pages_mask(range.0, range.1).any(|p| s.pages[p].dirty())
            && m.exec_task(s, t).is_none()
    })
}

/// The NOTIFY_INVAL_INODE's page walk waits for the writeback of a folio
/// it laundered (fuse_launder_folio).
pub fn w_notify_launder(m: &FuseModel, s: &State) -> bool {
    (0..s.tasks.len()).any(|t| {
        notifier(m, t)
            && matches!(m.current_op(s, t), Some(Op::Invalidate { .. }))
            && matches!(s.tasks[t].ph, 2 | 3)
            && s.pages[s.tasks[t].cur as usize].wb()
    })
}

/// A notification's window: a clean cached page older than the server's
/// data while a notification task is between its server change and its
/// return (what the notification is there to end).
pub fn w_notify_stale(m: &FuseModel, s: &State) -> bool {
    (0..s.tasks.len()).any(|t| notifier(m, t) && s.tasks[t].pc > 0 && !m.task_done(s, t))
        && super::properties::w_stale_cached(m, s)
}
