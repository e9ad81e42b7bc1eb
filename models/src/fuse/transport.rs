//! The transport: connection abort and the request timeout (fs/fuse/dev.c).
//!
//! fuse_abort_conn (umount -f, /sys/fs/fuse/connections/N/abort, the
//! daemon's death releasing /dev/fuse) clears fc->connected, pushes
//! fc->bg_queue to the pending list (max_background = UINT_MAX;
//! flush_bg_queue), then ends every request on the processing lists and
//! the pending list with -ECONNABORTED (end_requests → fuse_request_end:
//! the waiter wakes, a background request's end callback runs). Later
//! requests fail at once: fuse_get_req and __fuse_request_send with
//! -ENOTCONN, fuse_request_queue_background refuses (fc->connected
//! checked under bg_lock), and the daemon reads nothing more
//! (fuse_dev_do_read: !fiq->connected).
//!
//! A writeback WRITE ended by the abort runs fuse_writepage_end with the
//! error: mapping_set_error, writectr--, fuse_writepage_finish (PG_writeback
//! ends; L: its secondaries are sent, and refused). A WRITE that
//! fuse_send_writepage tries to queue after the abort is freed unsent
//! (out_free: writectr--, fuse_writepage_finish, no mapping_set_error).
//!
//! The request timeout (6.14+): fuse_check_timeout looks at the oldest
//! request on the pending list, fc->bg_queue and the processing lists; if
//! one has been there longer than the timeout it calls fuse_abort_conn.
//! The model has no time: the timeout may fire whenever a request is on
//! one of those lists.
//!
//! Abstractions: the abort is one atomic step (fuse_abort_conn holds
//! fc->lock, end_requests then ends one request after another with no
//! lock: a task may run between two ends; every end only releases
//! waiters, so no property here depends on their order). A request the
//! daemon had read is ended with the rest and its reply (fuse_dev_do_write:
//! request_find fails, -ENOENT) is dropped: the model's daemon applies
//! nothing after the abort (its death; a live daemon that still applies a
//! request whose reply the kernel drops is not modelled).

use super::model::{pages_mask, FuseModel};
use super::state::*;
use super::step::Step;

impl FuseModel {
    /// fc->connected == 0.
    pub(super) fn aborted(s: &State) -> bool {
        s.conn & CONN_ABORTED != 0
    }

    /// Is a request on the pending list, fc->bg_queue or a processing
    /// list (fuse_check_timeout's lists)? A WRITE whose reply ran
    /// (`Worker::Ending`) is on none.
    fn outstanding(s: &State) -> bool {
        s.requests().next().is_some()
    }

    /// The abort or the timeout task's step.
    pub(super) fn op_abort(&self, s: &mut State, t: usize, timeout: bool) -> Option<Step> {
        let step = if !timeout {
            if !Self::aborted(s) {
                self.abort_conn(s);
            }
            Step::AbortConn
        } else if !Self::aborted(s) && Self::outstanding(s) {
            self.abort_conn(s);
            s.ev = Event::TimeoutAbort;
            Step::TimeoutAbort
        } else if Self::aborted(s) || (0..s.tasks.len()).all(|u| u == t || self.task_done(s, u)) {
            // fuse_abort_conn cancelled the timer, or the workload ended
            // with nothing outstanding: the timer never fires
            Step::TimeoutIdle
        } else {
            return None;
        };
        self.advance(s, t);
        Some(step)
    }

    /// fuse_abort_conn.
    fn abort_conn(&self, s: &mut State) {
        s.conn |= CONN_ABORTED;
        // fc->blocked = 0; fc->max_background = UINT_MAX; flush_bg_queue
        if !self.cfg.variant.mut_abort_keeps_bg_queue {
            self.flush_all_bg(s);
        }
        // the processing lists, then the pending list, onto to_end
        let mut to_end = Vec::new();
        for w in 0..s.workers.len() {
            if let Worker::Busy { req, .. } = s.workers[w] {
                to_end.push(req);
                s.workers[w] = Worker::Idle;
                s.rcl[w] = Reclaim::default();
            }
        }
        while !s.fuse_q.is_empty() {
            to_end.push(Self::pend_remove(s, 0));
        }
        // end_requests
        let mut wb = false;
        for req in &to_end {
            wb |= matches!(req, Req::CacheWrite { .. });
            self.end_aborted(s, *req);
        }
        s.ev = if wb {
            Event::AbortWb
        } else if to_end.is_empty() {
            Event::None
        } else {
            Event::AbortEnd
        };
    }

    /// fuse_request_end of one request with -ECONNABORTED: its
    /// background half (flush_bg_queue), then the waiter's wake-up or the
    /// end callback.
    fn end_aborted(&self, s: &mut State, req: Req) {
        if self.is_bg(&req) {
            self.flush_bg_queue(s);
        }
        match req {
            Req::CacheWrite { first, n, sent } => {
                // fuse_writepage_end(error): mapping_set_error first
                self.wb_write_failed(s, first, sent);
                self.writepage_end(s, first, n);
            }
            Req::ReadPages { first, n, .. } => self.readpages_failed(s, first, n),
            _ => {
                self.request_ended(s, &req, false);
                self.fail_request(s, req);
            }
        }
    }

    /// fuse_readpages_end with an error: folio_end_read(folio, false) on
    /// every folio: unlocked, not uptodate.
    fn readpages_failed(&self, s: &mut State, first: u8, n: u8) {
        for p in pages_mask(first, n) {
            self.folio_clear(s, p, PG_LOCKED);
        }
    }

    /// A background request submitted after the abort:
    /// fuse_request_queue_background refuses it (-ENOTCONN) and its
    /// sender ends it (fuse_send_readpages → fuse_readpages_end,
    /// fuse_async_req_send → fuse_aio_complete_req). Returns whether it
    /// was refused. (fuse_send_writepage's WRITEs: `refuse_writepage`.)
    pub(super) fn refuse_background(&self, s: &mut State, r: Req) -> bool {
        if !Self::aborted(s) {
            return false;
        }
        if self.cfg.variant.mut_abort_queues {
            if r.opname() == "WRITE" {
                s.viol2 |= VIOL2_ABORT_WRITE;
            }
            return false;
        }
        match r {
            Req::ReadPages { first, n, .. } => self.readpages_failed(s, first, n),
            _ => {
                self.fail_request(s, r);
            }
        }
        s.ev = Event::Refused;
        true
    }

    /// fuse_send_writepage after the abort: fuse_simple_background fails
    /// ("Fails on broken connection only") and the WRITE is freed unsent
    /// (out_free: writectr--, fuse_writepage_finish; no mapping_set_error).
    /// Returns whether it was.
    pub(super) fn refuse_writepage(&self, s: &mut State, w: Wpa) -> bool {
        if !Self::aborted(s) || self.cfg.variant.mut_abort_queues {
            return false;
        }
        for p in pages_mask(w.first, w.n) {
            s.lost |= 1 << p;
        }
        self.writepage_out_free(s, w, false);
        s.ev = Event::AbortUnsent;
        true
    }

    /// A synchronous request after the abort: fuse_get_req (or, for a
    /// forced one, __fuse_request_send) fails with -ENOTCONN and nothing
    /// is queued; the task finds its reply at once. Returns whether it was
    /// refused.
    pub(super) fn refuse_sync(&self, s: &mut State, t: usize) -> bool {
        if !Self::aborted(s) {
            return false;
        }
        s.tasks[t].reply = REPLY_ERR;
        s.ev = Event::Refused;
        true
    }
}

/// x-abort-write: no WRITE queued for the daemon after the abort.
pub fn x_abort_write(_m: &FuseModel, s: &State) -> bool {
    s.viol2 & VIOL2_ABORT_WRITE == 0
}

/// Witness: ending a writeback WRITE, the abort woke a task blocked in fuse_set_nowrite's or
/// fuse_sync_writes' wait on writectr.
pub fn w_abort_nowrite(m: &FuseModel, s: &State) -> bool {
    use super::program::Op;
    s.ev == Event::AbortWb
        && s.writectr == FUSE_NOWRITE
        && (0..s.tasks.len()).any(|t| {
            matches!(
                m.current_op(s, t),
                Some(Op::WaitNowrite) | Some(Op::SyncWritesWait { .. })
            )
        })
}

// ----------------------------------------------------------------------
// Signals: request_wait_answer (fs/fuse/dev.c).
//
// A task waiting for a synchronous request's reply first waits
// interruptibly: any signal sets FR_INTERRUPTED and, once the daemon has
// read the request (FR_SENT; else fuse_dev_do_read does it when it reads
// it), queues FUSE_INTERRUPT (queue_interrupt). The server may ignore it
// and answer normally, or answer the request with -EINTR without doing
// it. Then, unless the request is forced (FR_FORCE: FLUSH here), the task
// waits killably: a fatal signal while the request is still pending
// (FR_PENDING: not yet read) takes it off the pending list and returns
// -EINTR; once read, the task waits for the reply, uninterruptibly.
// Background requests (writeback WRITEs, readahead READs, async direct
// I/O) have no waiter to signal. fc->no_interrupt is not modelled.

impl FuseModel {
    /// The task waiting for `r`, if `r` is a synchronous request.
    fn sync_task(&self, r: &Req) -> Option<usize> {
        if self.is_bg(r) || matches!(r, Req::ReadPages { .. }) {
            return None;
        }
        r.task().map(|t| t as usize)
    }

    /// Is `r` interrupted (FR_INTERRUPTED: the server may answer it with
    /// -EINTR)?
    pub(super) fn interrupted(&self, s: &State, r: &Req) -> bool {
        self.sync_task(r).is_some_and(|t| s.intr & (1 << t) != 0)
    }

    /// The daemon ends `r` (a reply or an error): its interruption ends
    /// with it; x-intr: a request whose task already returned -EINTR for
    /// it must not be applied.
    pub(super) fn request_ended(&self, s: &mut State, r: &Req, applied: bool) {
        if let Some(t) = self.sync_task(r) {
            s.intr &= !(1 << t);
            if applied && s.bailed & (1 << t) != 0 {
                s.viol2 |= VIOL2_INTR_APPLIED;
            }
            s.bailed &= !(1 << t);
        }
    }

    /// The signal task's step.
    pub(super) fn op_signal(
        &self,
        s: &mut State,
        t: usize,
        target: usize,
        fatal: bool,
    ) -> Option<Step> {
        let mine = |r: &Req| self.sync_task(r) == Some(target);
        let pending = s.fuse_q.iter().position(mine);
        let read = (0..s.workers.len()).find(|&w| match s.workers[w] {
            Worker::Busy { req, .. } => mine(&req),
            _ => false,
        });
        let req = match (pending, read) {
            (Some(i), _) => s.fuse_q[i],
            (None, Some(w)) => match s.workers[w] {
                Worker::Busy { req, .. } => req,
                _ => unreachable!("found busy"),
            },
            (None, None) => {
                if !self.task_done(s, target) {
                    return None; // delivered once the target blocks
                }
                self.advance(s, t);
                return Some(Step::SignalIdle);
            }
        };
        // wait_event_interruptible returns: FR_INTERRUPTED, FUSE_INTERRUPT
        s.intr |= 1 << target;
        s.ev = Event::Interrupt;
        let forced = matches!(req, Req::Flush { .. });
        let takeback = pending.is_some() || self.cfg.variant.mut_intr_bailout_sent;
        if fatal && !forced && takeback {
            // FR_PENDING: list_del, -EINTR (the mutant: also once read;
            // the daemon still holds and applies it)
            if let Some(i) = pending {
                Self::pend_remove(s, i);
            }
            self.fail_request(s, req);
            s.intr &= !(1 << target);
            if pending.is_none() {
                s.bailed |= 1 << target;
            }
            s.ev = Event::IntrBailout;
        }
        self.advance(s, t);
        Some(Step::Signal)
    }
}

/// x-intr: no request is applied by the server after its task returned
/// -EINTR for it.
pub fn x_intr(_m: &FuseModel, s: &State) -> bool {
    s.viol2 & VIOL2_INTR_APPLIED == 0
}
