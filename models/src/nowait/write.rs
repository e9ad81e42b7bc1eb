//! The buffered write path, one attempt at a time: io_write (inline with
//! IOCB_NOWAIT, or blocking on io-wq) or write(2) -> xfs_file_buffered_write
//! -> xfs_ilock_iocb -> xfs_file_write_checks (generic_write_checks,
//! kiocb_modified) -> iomap_file_buffered_write -> per mapping
//! xfs_buffered_write_iomap_begin -> per folio iomap_write_iter
//! (balance_dirty_pages_ratelimited_flags, iomap_write_begin, copy,
//! iomap_write_end) -> xfs_iunlock -> io_write's decision (CQE, or punt
//! to io-wq after -EAGAIN or a short write).
//!
//! Sources: seed 004 (RFC v1), v7 11/15, 66fa3cedf16a (file_modified_flags),
//! fe6c9c6e3e3e (BDP_ASYNC), 18e419f6e80a (iter revert, 6.0–6.14),
//! 1a1a3b574b97 (iter advance, 6.15+), io_uring/rw.c io_write (6.18),
//! 85c871a02b03 / 08489c4f4133 (7.0 non-blocking timestamps).

use super::model::NowaitModel;
use super::state::*;
use super::step::Step;

/// Outcome of kiocb_modified's timestamp part under IOCB_NOWAIT.
enum TimeUpdate {
    Pass,
    Eagain,
}

impl NowaitModel {
    pub(super) fn exec_writer(&self, s: &mut State, t: usize) -> Option<Step> {
        let (uring, append, _) = self.cfg.tasks[t].write().expect("a write task");
        match s.tasks[t].ph {
            // fix_append_punt: io_write sends a buffered append to io-wq
            Phase::Start if uring && append && self.cfg.variant.fix_append_punt => {
                let task = &mut s.tasks[t];
                task.ph = Phase::Queued;
                task.wq = true;
                s.ev = Event::EagainPunt;
                Some(Step::AppendPunt)
            }
            // io_uring: the inline issue runs with IOCB_NOWAIT; write(2) blocks.
            Phase::Start => self.ilock_iocb(s, t, uring),
            // io_wq_submit_work -> io_write without IO_URING_F_NONBLOCK
            Phase::Queued => self.ilock_iocb(s, t, false),
            Phase::Checks => self.write_checks(s, t),
            Phase::IomapBegin => self.iomap_begin(s, t),
            Phase::Folio => self.write_folio(s, t),
            _ => None,
        }
    }

    /// xfs_file_buffered_write: xfs_ilock_iocb(IOLOCK_EXCL): trylock under
    /// IOCB_NOWAIT (-EAGAIN: io_write restores the iter and punts), else
    /// wait.
    fn ilock_iocb(&self, s: &mut State, t: usize, nowait: bool) -> Option<Step> {
        let v = &self.cfg.variant;
        if s.tasks[t].ph == Phase::Start && v.mut_cached_privs_check {
            // the mutant samples "privileges to remove?" at submission
            s.tasks[t].privs_cached = s.suid;
        }
        let got = if v.mut_iolock_shared {
            s.iolock.try_lock_shared()
        } else {
            s.iolock.try_lock(t as u8)
        };
        if !got {
            if !nowait {
                return None;
            }
            s.cause = Cause::Iolock;
            self.io_write_result(s, t, None);
            return Some(Step::IlockIocbEagain);
        }
        let task = &mut s.tasks[t];
        task.nowait = nowait;
        task.touched = false;
        task.copied = false;
        task.ph = Phase::Checks;
        Some(Step::IlockIocb)
    }

    /// xfs_file_write_checks: generic_write_checks (O_APPEND: ki_pos =
    /// i_size), then kiocb_modified -> file_modified_flags:
    /// file_remove_privs_flags (check and act in one call under the
    /// IOLOCK; NOWAIT -> -EAGAIN) and the timestamp update
    /// (inode_needs_update_time; what NOWAIT does is the kernel state's).
    /// A blocking update that needs a transaction waits for the ILOCK.
    fn write_checks(&self, s: &mut State, t: usize) -> Option<Step> {
        let v = &self.cfg.variant;
        let (_, append, n) = self.cfg.tasks[t].write().expect("a write task");
        let nowait = s.tasks[t].nowait;
        if append {
            s.tasks[t].kpos = s.i_size;
        }
        let mut need_ilock = false;
        let kill = if v.mut_cached_privs_check {
            s.tasks[t].privs_cached
        } else {
            s.suid
        };
        if kill {
            if nowait {
                s.cause = Cause::Privs;
                return Some(self.eagain_exit(s, t, Step::WriteChecksEagain));
            }
            // __remove_privs -> notify_change(ATTR_KILL_SUID) ->
            // xfs_setattr_nonsize: a transaction logging the inode core
            if s.suid {
                need_ilock = true;
                s.suid = false;
                s.ctime = s.now;
                super::model::bump_iversion_logged(s);
                s.ev = Event::SuidRemoved;
            }
        }
        let stale = s.mtime != s.now || s.ctime != s.now;
        if stale || s.ivq {
            if nowait {
                if let TimeUpdate::Eagain = self.nowait_time_update(s) {
                    s.cause = Cause::Times;
                    return Some(self.eagain_exit(s, t, Step::WriteChecksEagain));
                }
            } else {
                // __file_update_time -> xfs_vn_update_time: with lazytime
                // and no i_version bump the update stays in memory
                // (generic_update_time); else a transaction (ILOCK) that
                // bumps a queried i_version and logs it.
                if !self.cfg.lazytime || s.ivq {
                    need_ilock = true;
                }
                s.mtime = s.now;
                s.ctime = s.now;
                if s.ivq {
                    s.iv += 1;
                    s.ivq = false;
                    if !v.mut_iversion_unlogged {
                        s.iv_disk = s.iv;
                    }
                }
                if v.pending_time && !v.mut_pending_never_cleared {
                    // RFC: do_file_update_time; v7: after __file_update_time
                    s.pending = false;
                }
            }
        }
        if need_ilock && s.env.ilock_held {
            return None;
        }
        let now = s.now;
        let ivo = if s.ivq { s.iv } else { NONE };
        let task = &mut s.tasks[t];
        task.tstart = now;
        task.ivo = ivo;
        task.wend = task.kpos + (n - task.it);
        task.ipos = task.kpos;
        task.cur = task.kpos;
        task.ph = Phase::IomapBegin;
        Some(Step::WriteChecks)
    }

    /// kiocb_modified's timestamp part under IOCB_NOWAIT, per kernel state.
    fn nowait_time_update(&self, s: &mut State) -> TimeUpdate {
        let v = &self.cfg.variant;
        if v.pending_time {
            // RFC v1 patch 10 / v7 11/15
            if s.pending {
                s.ev = Event::TimeSkipped;
                return TimeUpdate::Pass;
            }
            s.pending = true;
            return TimeUpdate::Eagain;
        }
        if v.nowait_lazytime && self.cfg.lazytime {
            if v.p_nowait_iversion_first {
                // 2025 v1 xfs_vn_update_time: inode_maybe_inc_iversion,
                // then S_NOWAIT -> -EAGAIN (Dave Chinner's review)
                if s.ivq {
                    s.iv += 1;
                    s.ivq = false;
                    return TimeUpdate::Eagain;
                }
            } else {
                // 85c871a02b03 inode_update_cmtime: now =
                // inode_set_ctime_current(); then -EAGAIN if i_version
                // needs a bump; else mtime, in memory (I_DIRTY_TIME)
                s.ctime = s.now;
                if s.ivq {
                    return TimeUpdate::Eagain;
                }
            }
            s.ctime = s.now;
            s.mtime = s.now;
            s.ev = Event::LazytimeNowait;
            return TimeUpdate::Pass;
        }
        if v.mut_nowait_skip_time {
            s.ev = Event::TimeSkipped;
            return TimeUpdate::Pass;
        }
        if v.mut_nowait_time_then_eagain {
            s.mtime = s.now;
            s.ctime = s.now;
        }
        // file_modified_flags: if (flags & IOCB_NOWAIT) return -EAGAIN;
        TimeUpdate::Eagain
    }

    /// iomap_iter -> xfs_buffered_write_iomap_begin: xfs_ilock_for_iomap
    /// (IOMAP_NOWAIT: trylock, -EAGAIN), a delalloc mapping from `cur` to
    /// the end of the write or of the extent.
    fn iomap_begin(&self, s: &mut State, t: usize) -> Option<Step> {
        if s.env.ilock_held {
            if !s.tasks[t].nowait {
                return None;
            }
            s.cause = Cause::Ilock;
            return Some(self.eagain_exit(s, t, Step::IomapBeginEagain));
        }
        if s.tasks[t].nowait
            && self.cfg.variant.delalloc_nowait_eagain
            && s.tasks[t].cur >= s.i_size
        {
            // RFC v1 patch 6: a delalloc reservation under IOMAP_NOWAIT
            s.cause = Cause::Alloc;
            return Some(self.eagain_exit(s, t, Step::IomapBeginEagain));
        }
        let m = self.cfg.mapping;
        let task = &mut s.tasks[t];
        task.mend = match task.cur.checked_div(m) {
            None => task.wend,
            Some(q) => task.wend.min((q + 1) * m),
        };
        task.ph = Phase::Folio;
        Some(Step::IomapBegin)
    }

    /// iomap_write_iter, one folio: balance_dirty_pages_ratelimited_flags
    /// (BDP_ASYNC under NOWAIT), iomap_write_begin (FGP_NOWAIT: a locked
    /// folio is -EAGAIN), copy, iomap_write_end (i_size_write, dirty).
    /// The last folio of the attempt also returns.
    fn write_folio(&self, s: &mut State, t: usize) -> Option<Step> {
        let v = &self.cfg.variant;
        let c = &self.cfg;
        let nowait = s.tasks[t].nowait;
        let skip_bdp = nowait && v.mut_bdp_skip_nowait;
        let no_freerun = nowait && v.mut_bdp_no_freerun;
        if (c.limit > 0 || no_freerun) && !skip_bdp && s.tasks[t].nrd >= c.ratelimit {
            if s.dirty_total() > c.limit || no_freerun {
                if nowait && v.bdp_async_eagain {
                    s.cause = Cause::Bdp;
                    return Some(self.eagain_exit(s, t, Step::BdpEagain));
                }
                if !nowait {
                    // balance_dirty_pages sleeps until writeback catches up
                    return None;
                }
                // RFC v1 patch 15: record bdp_pause in task_struct, go on
            }
            s.tasks[t].nrd = 0;
        }
        let task = s.tasks[t];
        if s.env.flock_held == task.cur {
            if !nowait {
                return None;
            }
            s.cause = Cause::Folio;
            return Some(self.eagain_exit(s, t, Step::FolioEagain));
        }
        let p = task.cur as usize;
        if s.suid {
            // an unprivileged writer's data becomes visible under S_ISUID
            s.viol |= VIOL_IO6;
        }
        s.data[p] = chunk(t, task.it);
        if !s.is_dirty(p) {
            s.dirty |= 1 << p;
            s.tasks[t].nrd += 1;
        }
        if task.cur + 1 > s.i_size {
            s.i_size = task.cur + 1;
        }
        let task = &mut s.tasks[t];
        task.cur += 1;
        task.it += 1;
        task.copied = true;
        if task.cur < task.mend {
            return Some(Step::WriteFolio);
        }
        // mapping done: iomap_iter advances iter.pos
        task.ipos = task.cur;
        if task.cur < task.wend {
            task.ph = Phase::IomapBegin;
            return Some(Step::WriteFolio);
        }
        let progress = task.ipos - task.kpos;
        task.kpos = task.ipos;
        s.iolock.unlock(t as u8);
        self.io_write_result(s, t, Some(progress));
        Some(Step::WriteFolioDone)
    }

    /// An -EAGAIN inside xfs_file_buffered_write: iomap_write_iter's end
    /// (6.0–6.14 revert the iov_iter by what this mapping wrote and
    /// return -EAGAIN; otherwise the progress stays), then
    /// iomap_file_buffered_write (progress if iter.pos moved, else the
    /// error; ki_pos = iter.pos), xfs_iunlock, io_write's decision.
    pub(super) fn eagain_exit(&self, s: &mut State, t: usize, step: Step) -> Step {
        let v = &self.cfg.variant;
        let task = &mut s.tasks[t];
        let mut progress = 0;
        if matches!(task.ph, Phase::IomapBegin | Phase::Folio) {
            let written = task.cur - task.ipos;
            if v.iter_revert {
                task.it -= written;
                task.cur = task.ipos;
            } else {
                task.ipos = task.cur;
            }
            progress = task.ipos - task.kpos;
            task.kpos = task.ipos;
        }
        if !v.mut_iolock_leak_on_eagain {
            s.iolock.unlock(t as u8);
        }
        self.io_write_result(s, t, (progress > 0).then_some(progress));
        step
    }

    /// io_write after ->write_iter returned `res` (None: -EAGAIN):
    /// -EAGAIN under NONBLOCK -> iov_iter_restore, punt to io-wq;
    /// 0 <= res < wanted on a regular file -> bytes_done += res,
    /// iov_iter_save_state, punt; else kiocb_done posts the CQE (write(2)
    /// returns).
    pub(super) fn io_write_result(&self, s: &mut State, t: usize, res: Option<u8>) {
        let (_, _, n) = self.cfg.tasks[t].write().expect("a write task");
        let v = &self.cfg.variant;
        let task = &mut s.tasks[t];
        if task.copied {
            task.attempts += 1;
        }
        match res {
            None => {
                task.it = task.it_saved;
                // the retry runs in an io-wq worker: its own nr_dirtied
                task.nrd = 0;
                s.ev = if task.copied {
                    Event::EagainAfterCopy
                } else {
                    Event::EagainPunt
                };
                task.ph = Phase::Queued;
                task.wq = true;
            }
            Some(r) if task.done + r < n => {
                task.done += r;
                task.it_saved = task.it;
                task.nrd = 0;
                s.ev = Event::ShortPunt;
                task.ph = Phase::Queued;
                task.wq = true;
            }
            Some(r) => {
                task.cqe = if v.mut_cqe_ignores_bytes_done {
                    r
                } else {
                    task.done + r
                };
                task.ph = Phase::Done;
                if task.attempts >= 2 {
                    s.ev = Event::SplitComplete;
                }
                let task = *task;
                if s.mtime < task.tstart
                    || s.ctime < task.tstart
                    || (task.ivo != NONE && s.iv <= task.ivo)
                {
                    s.viol |= VIOL_IO4;
                }
                if s.iv_disk != s.iv {
                    s.viol |= VIOL_IVLOG;
                }
            }
        }
    }
}
