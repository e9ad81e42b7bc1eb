//! FUSE over io_uring (fs/fuse/dev_uring.c, 6.14+; `Config::uring_queues`).
//!
//! Once the ring is ready (fuse_uring_ready: every queue has a registered
//! entry; the model starts there), fiq->ops is fuse_io_uring_ops and every
//! request goes to a ring queue instead of /dev/fuse:
//! fuse_uring_task_to_queue picks the queue of the CPU the queuing task
//! runs on (task_cpu(current)). A queue serves its requests FIFO
//! (fuse_uring_ent_assign_req takes the head of queue->fuse_req_queue)
//! and only to its own ring entries; the model's worker w serves queue
//! w % Q and its UringFetch step is the assignment and the copy to the
//! ring (fuse_uring_add_req_to_ring_ent, fuse_uring_send_in_task or
//! fuse_uring_send_next_to_ring), delayed at will as a /dev/fuse read is.
//!
//! Background requests (fuse_request_queue_background's uring branch,
//! fuse_uring_queue_bq_req): fc->num_background++ (fc->blocked at
//! max_background, congestion: connection-wide, as before), onto that
//! queue's fuse_req_bg_queue, then fuse_uring_flush_bg(queue): while
//! `fc->active_background < fc->max_background || !queue->active_background`
//! move the head to the queue's pending list (both active counts ++).
//! So each queue may run one background request past the connection's
//! bound: up to max_background + Q - 1 are active (property u1).
//! A background request ends in fuse_uring_req_end:
//! queue->active_background--, fuse_uring_flush_bg of that queue only,
//! then fuse_request_end, whose background half (num_background--,
//! active_background--, flush_bg_queue of the unused fc->bg_queue) runs
//! after the flush: the flush still counts the ending request in
//! fc->active_background. Joanne Koong's fix (switch
//! `uring_bg_finish_first`, state C) accounts first (fuse_request_bg_finish).
//! No other queue is flushed when one queue's request ends.
//!
//! The CPU: a task runs on CPU t % Q, and the scheduler may move it to
//! the other CPU before any step that queues a request (Step::UringMigrate,
//! one-shot): every queue choice of every queueing step is reached. The
//! requests one step queues share a queue: right under fi->lock
//! (fuse_flush_writepages), an assumption where the kernel can migrate
//! between them (readahead's READs of one RaSend, a large folio's or C's
//! per-range WRITEs; docs/model.md "Which CPU"). A daemon worker queues
//! nothing in T, T2, C.
//!
//! FIFO per queue holds while a flush moves at most one request or a
//! queue has one entry; config validation refuses the rest (a queue of
//! two entries with max_background >= 2: fuse_uring_queue_fuse_req would
//! hand a new request to the idle entry ahead of a flushed one).
//!
//! Not modelled: FORGET and INTERRUPT still go through /dev/fuse
//! (fuse_io_uring_ops' send_forget / send_interrupt; the model's
//! interrupt semantics are unchanged); the teardown of ring entries
//! (fuse_uring_stop_queues) is part of the atomic abort, as the ending of
//! the processing lists is on /dev/fuse.

use super::model::FuseModel;
use super::state::*;

/// `m` without bit `i`, the bits above it moved down one (a list entry
/// removed).
fn drop_bit16(m: u16, i: usize) -> u16 {
    let low = m & ((1u16 << i) - 1);
    let high = (m >> (i + 1)) << i;
    low | high
}

fn drop_bit8(m: u8, i: usize) -> u8 {
    drop_bit16(m as u16, i) as u8
}

impl FuseModel {
    /// FUSE over io_uring is on.
    pub(super) fn uring(&self) -> bool {
        self.cfg.uring_queues > 0
    }

    /// The ring queue worker `w` serves.
    pub(super) fn worker_queue(&self, w: usize) -> u8 {
        (w % self.cfg.uring_queues.max(1) as usize) as u8
    }

    /// fuse_uring_task_to_queue: the queue of the CPU task `t` runs on
    /// (its own CPU t % Q, the other one after a migration).
    pub(super) fn task_queue(&self, s: &State, t: usize) -> u8 {
        let q = self.cfg.uring_queues.max(1) as usize;
        ((t + ((s.away >> t) & 1) as usize) % q) as u8
    }

    /// The queue `fuse_q[i]` is on.
    pub(super) fn pend_queue(s: &State, i: usize) -> u8 {
        ((s.utag >> i) & 1) as u8
    }

    /// The queue `bg_q[i]` is on.
    fn bg_queue_of(s: &State, i: usize) -> u8 {
        (s.bgtag >> i) & 1
    }

    /// A request goes to the pending list: /dev/fuse's (fiq->pending),
    /// or the running CPU's ring queue (fuse_uring_queue_fuse_req).
    pub(super) fn pend_push(&self, s: &mut State, r: Req) {
        let q = s.qsel & 1;
        self.pend_push_q(s, r, q);
    }

    /// `r` onto queue `q`'s pending list.
    fn pend_push_q(&self, s: &mut State, r: Req, q: u8) {
        let i = s.fuse_q.len();
        s.fuse_q.push(r);
        if q != 0 {
            s.utag |= 1 << i;
        }
        if self.uring() {
            s.qsel |= QSEL_QUEUED;
        }
    }

    /// Takes `fuse_q[i]` off its list.
    pub(super) fn pend_remove(s: &mut State, i: usize) -> Req {
        s.utag = drop_bit16(s.utag, i);
        s.fuse_q.remove(i)
    }

    /// Takes `bg_q[i]` off its list; returns it and its queue.
    pub(super) fn bg_remove(s: &mut State, i: usize) -> (Req, u8) {
        let q = Self::bg_queue_of(s, i);
        s.bgtag = drop_bit8(s.bgtag, i);
        (s.bg_q.remove(i), q)
    }

    /// An aborted connection's background lists go to the pending lists
    /// (fuse_abort_conn: max_background = UINT_MAX, flush_bg_queue; with
    /// a ring fuse_uring_abort_end_requests flushes every queue so).
    pub(super) fn flush_all_bg(&self, s: &mut State) {
        while !s.bg_q.is_empty() {
            let (r, q) = Self::bg_remove(s, 0);
            self.pend_push_q(s, r, q);
        }
    }

    /// queue->active_background: background requests of queue `q` moved
    /// to its pending list and not yet ended (pending, or at a worker of
    /// the queue).
    pub(super) fn queue_active(&self, s: &State, q: u8) -> u8 {
        let pend = (0..s.fuse_q.len())
            .filter(|&i| Self::pend_queue(s, i) == q && self.is_bg(&s.fuse_q[i]))
            .count();
        let busy = (0..self.cfg.daemon_threads as usize)
            .filter(|&w| self.worker_queue(w) == q)
            .filter(|&w| matches!(s.workers[w], Worker::Busy { req, .. } if self.is_bg(&req)))
            .count();
        (pend + busy) as u8
    }

    /// fc->active_background: background requests moved to a pending
    /// list and not yet ended.
    pub fn active_background(&self, s: &State) -> u8 {
        self.num_background(s) - s.bg_q.len() as u8
    }

    /// fuse_uring_queue_bq_req: onto the running CPU's queue's
    /// fuse_req_bg_queue (num_background++ is derived), then
    /// fuse_uring_flush_bg of that queue.
    pub(super) fn uring_queue_bg(&self, s: &mut State, r: Req) {
        let q = s.qsel & 1;
        let i = s.bg_q.len();
        s.bg_q.push(r);
        if q != 0 {
            s.bgtag |= 1 << i;
        }
        s.qsel |= QSEL_QUEUED;
        self.uring_flush_bg(s, q, false);
    }

    /// fuse_uring_flush_bg(queue `q`). `ending`: called from
    /// fuse_uring_req_end for a background request of `q` that the model
    /// has already taken off its worker; before the fix
    /// (`uring_bg_finish_first`) fc->active_background still counts it.
    pub(super) fn uring_flush_bg(&self, s: &mut State, q: u8, ending: bool) {
        let max = self.cfg.max_background.unwrap_or(u8::MAX);
        let extra = (ending && !self.cfg.variant.uring_bg_finish_first) as u8;
        while let Some(i) = (0..s.bg_q.len()).find(|&i| Self::bg_queue_of(s, i) == q) {
            let global = self.active_background(s) + extra < max;
            let slot = !self.cfg.variant.mut_uring_no_queue_slot && self.queue_active(s, q) == 0;
            if !(global || slot) {
                break;
            }
            if self.cfg.variant.mut_uring_flush_whole {
                while let Some(j) = (0..s.bg_q.len()).find(|&j| Self::bg_queue_of(s, j) == q) {
                    let (r, _) = Self::bg_remove(s, j);
                    self.pend_push_q(s, r, q);
                }
                break;
            }
            let (r, _) = Self::bg_remove(s, i);
            self.pend_push_q(s, r, q);
        }
    }

    /// The worker that fetches next for queue `q`: the lowest-numbered
    /// idle worker serving it (a queue's entries are interchangeable).
    pub(super) fn uring_reader(&self, s: &State, q: u8) -> Option<usize> {
        (0..self.cfg.daemon_threads as usize)
            .find(|&w| self.worker_queue(w) == q && matches!(s.workers[w], Worker::Idle))
    }

    /// The workers that may read or fetch a request now (at most one
    /// per queue, and one on /dev/fuse).
    pub(super) fn readers(&self, s: &State) -> impl Iterator<Item = usize> {
        let mut out = [None; super::config::MAX_URING_QUEUES];
        if !self.uring() {
            if !s.fuse_q.is_empty() {
                out[0] = Self::reader(s, self.cfg.daemon_threads as usize);
            }
        } else {
            for q in 0..self.cfg.uring_queues {
                if (0..s.fuse_q.len()).any(|i| Self::pend_queue(s, i) == q) {
                    out[q as usize] = self.uring_reader(s, q);
                }
            }
        }
        out.into_iter().flatten()
    }

    /// The index in `fuse_q` worker `w` takes next: the head of its
    /// queue (the head of /dev/fuse without a ring).
    pub(super) fn next_for(&self, s: &State, w: usize) -> Option<usize> {
        if !self.uring() {
            return (!s.fuse_q.is_empty()).then_some(0);
        }
        let q = self.worker_queue(w);
        (0..s.fuse_q.len()).find(|&i| Self::pend_queue(s, i) == q)
    }
}

/// u1: at most max_background + Q - 1 background requests are active
/// (fuse_uring_flush_bg lets each queue run one past the connection's
/// bound). Judged on a ring only: on /dev/fuse it is flush_bg_queue's own
/// loop condition (active_background < max_background), and every state
/// of every other check would pay for the count.
pub fn u1(m: &FuseModel, s: &State) -> bool {
    match m.cfg.max_background {
        None => true,
        Some(_) if !m.uring() => true,
        Some(max) => {
            let q = m.cfg.uring_queues.max(1);
            m.active_background(s) < max + q
        }
    }
}

/// w-uring-over-max: more than max_background background requests
/// active at once.
pub fn w_over_max(m: &FuseModel, s: &State) -> bool {
    m.uring()
        && m.cfg
            .max_background
            .is_some_and(|max| m.active_background(s) > max)
}

/// w-uring-idle-slot: a background request waits on a queue's
/// background list although fc->active_background < max_background (no
/// other queue's completion flushes it; before the fix, not its own
/// queue's either while the queue has another request active).
pub fn w_idle_slot(m: &FuseModel, s: &State) -> bool {
    m.uring()
        && !s.bg_q.is_empty()
        && m.cfg
            .max_background
            .is_some_and(|max| m.active_background(s) < max)
}
