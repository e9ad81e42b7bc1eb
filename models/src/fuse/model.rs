//! Step semantics of the FUSE model (kernel-sources.md §2–§8) and the
//! Stateright `Model` implementation.
//!
//! Stateright's `ActorModel` is message-only; kernel tasks share inode and
//! page-cache memory, so we implement `Model` directly and make the actors
//! explicit: every kernel task and every daemon worker has its own program
//! counter, and kernel and daemon talk only through `State::fuse_q`
//! (/dev/fuse) and the reply slots.

use super::config::{Config, TaskSpec};
use super::program::Op;
use super::state::*;
use super::step::Step;
use serde::{Deserialize, Serialize};

/// Who acts in a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Actor {
    /// Kernel task `T<i>`.
    Task(u8),
    /// Daemon worker `D<i>`.
    Daemon(u8),
}

/// One atomic step: the actor and the kernel function it executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Action {
    pub actor: Actor,
    pub step: Step,
}

/// The FUSE writeback / direct-I/O / truncate model.
#[derive(Clone)]
pub struct FuseModel {
    pub cfg: Config,
    pub programs: Vec<Vec<Op>>,
    /// Blocks (C) or pages (T, T2) per folio, after the large-folio order
    /// cap (lfolio.rs).
    pub fsize: u8,
    /// Where positions lie in pages (layout.rs).
    pub lay: super::layout::Layout,
    /// Per task, the task before it on its thread (`Config::pred`): it
    /// starts only once that one has returned.
    pub pred: Vec<Option<usize>>,
    /// Per task, the data version it writes (`Config::versions`).
    pub vers: Vec<u8>,
}

/// Version (data identity) written by task `t`, unless the configuration
/// names another (`Config::versions`, `FuseModel::ver`).
pub fn version_of(t: usize) -> u8 {
    (t + 2) as u8
}

pub(super) fn pages_mask(first: u8, n: u8) -> impl Iterator<Item = usize> {
    first as usize..(first + n) as usize
}

impl FuseModel {
    /// The data version task `t` writes.
    pub fn ver(&self, t: usize) -> u8 {
        self.vers[t]
    }

    /// The task that writes version `v`, if any (`V_ZERO` is nobody's).
    pub fn task_of_version(&self, v: u8) -> Option<usize> {
        if v == super::state::V_ZERO {
            return None;
        }
        self.vers.iter().position(|&x| x == v)
    }

    // ------------------------------------------------------------------
    // Program control

    /// Moves task `t` to its next op and skips ops that have nothing to do
    /// (conditions evaluated in the same atomic region, with no scheduling
    /// point in between).
    pub(super) fn advance(&self, s: &mut State, t: usize) {
        let task = &mut s.tasks[t];
        task.pc += 1;
        task.ph = 0;
        task.cur = 0;
        self.skip_empty(s, t);
    }

    pub(super) fn skip_empty(&self, s: &mut State, t: usize) {
        let prog = &self.programs[t];
        loop {
            let pc = s.tasks[t].pc as usize;
            if pc >= prog.len() {
                return;
            }
            let skip = match prog[pc] {
                Op::FdataWait { first, n } => {
                    // find the first folio under writeback
                    match pages_mask(first, n).find(|&p| s.pages[p].wb()) {
                        None => true,
                        Some(p) => {
                            s.tasks[t].cur = p as u8;
                            false
                        }
                    }
                }
                Op::BatchWait => {
                    // fuse_send_write_pages' folio_wait_writeback loop
                    match self.batch_folios(s, t).find(|&p| s.pages[p].wb()) {
                        None => true,
                        Some(p) => {
                            s.tasks[t].cur = p as u8;
                            false
                        }
                    }
                }
                Op::TruncatePagecache => {
                    let task = &s.tasks[t];
                    task.saved == s.i_size
                        || !(s.i_size as usize..self.cfg.pages as usize)
                            .any(|p| s.pages[p].present())
                }
                Op::TruncateRange { first, n } => {
                    !pages_mask(first, n).any(|p| s.pages[p].present())
                }
                // fuse_file_cached_io_start without a wait happens in the
                // step that reaches it (fuse_finish_open, fuse_file_mmap)
                Op::CachedIoStart => Self::cached_io_start(s),
                // the writeback-error check of fsync / close: no
                // scheduling point; on an error the request is skipped
                Op::IoRelease => {
                    Self::cached_io_end(s);
                    true
                }
                Op::CheckWbErr { close, skip } => {
                    if self.check_wb_err(s, t, close) {
                        s.tasks[t].pc += skip;
                    }
                    true
                }
                Op::Invalidate {
                    first,
                    n,
                    if_resized,
                } => {
                    // fuse_change_attributes_i's `inval`: the size
                    // changed, or (auto_inval_data) the mtime did
                    (if_resized
                        && s.tasks[t].saved == s.i_size
                        && s.tasks[t].mt & super::autoinval::MT_INVAL == 0)
                        || !pages_mask(first, n).any(|p| s.pages[p].present())
                }
                Op::AioStart => {
                    self.aio_start(s, t);
                    true
                }
                // a blocking aio write waits instead of returning
                Op::AioQueued { .. } => Self::aio_blocking(s, t),
                Op::IfAttrValid { skip } => {
                    if self.attrs_valid(s) {
                        s.tasks[t].pc += skip;
                    }
                    true
                }
                Op::IfReadPastEof { first } => {
                    if first >= s.i_size {
                        // return 0: on to the task's last op (its return)
                        let task = &mut s.tasks[t];
                        task.pc = (prog.len() - 1) as u8;
                        task.ph = 0;
                        task.cur = 0;
                        continue;
                    }
                    true
                }
                _ => false,
            };
            if !skip {
                return;
            }
            let task = &mut s.tasks[t];
            task.pc += 1;
            task.ph = 0;
            task.cur = 0;
        }
    }

    pub fn task_done(&self, s: &State, t: usize) -> bool {
        s.tasks[t].pc as usize >= self.programs[t].len()
    }

    /// An `env` task's store start (TaskSpec::EnvAccess): a task there
    /// has finished a load, or has not begun; None for any other task.
    pub fn store_start(&self, t: usize) -> Option<u8> {
        matches!(self.cfg.tasks[t], TaskSpec::EnvAccess { .. })
            .then_some(super::program::ENV_STORE_START as u8)
    }

    pub fn current_op(&self, s: &State, t: usize) -> Option<Op> {
        self.programs[t].get(s.tasks[t].pc as usize).copied()
    }

    pub(super) fn op_inode_lock(&self, s: &mut State, t: usize) -> Option<Step> {
        let task = s.tasks[t];
        Some({
            if !s.rwsem.try_lock(t as u8) {
                return None;
            }
            if task.pc == 0 {
                self.window_open(s, t);
            }
            self.advance(s, t);
            Step::InodeLock
        })
    }

    pub(super) fn op_unlock_return(&self, s: &mut State, t: usize, unlock: bool) -> Option<Step> {
        let task = s.tasks[t];
        let spec = self.cfg.tasks[t];
        Some({
            // a queued aio task unlocked at io_submit's return (aio.rs)
            let unlock = unlock && !self.aio_queued(s, t);
            if unlock {
                // inode_unlock, or fuse_dio_unlock of a shared holder
                if s.rwsem.owner != t as u8 {
                    Self::uncached_io_end(s);
                }
                s.rwsem.unlock(t as u8);
            }
            if matches!(spec, TaskSpec::Punch { .. }) {
                // fuse_file_fallocate: fuse_invalidate_attr_mask after
                // truncate_pagecache_range, before inode_unlock
                self.invalidate_attr_size(s);
            }
            let last = task.pc as usize + 1 == self.programs[t].len();
            if last && spec.writes() && !matches!(spec, TaskSpec::Truncate { .. }) {
                self.window_close(s, t);
            }
            self.advance(s, t);
            if self.aio_queued(s, t) && spec.writes() {
                // p_aio_inval_worker: the worker's ki_complete
                Step::AioWorkerDone
            } else if unlock {
                Step::UnlockReturn
            } else {
                Step::Return
            }
        })
    }

    /// Runs task `t`'s next step if it is enabled.
    pub fn exec_task(&self, s0: &State, t: usize) -> Option<(Step, State)> {
        let mut s = *s0;
        let step = self.exec_task_in(s0, &mut s, t)?;
        Some((step, s))
    }

    /// `exec_task_in`, and whether the step queued a request on a ring
    /// queue (uring.rs: then a migration before it is enabled too).
    pub fn exec_task_q(&self, s0: &State, s: &mut State, t: usize) -> Option<(Step, bool)> {
        if self.uring() {
            s.qsel = self.task_queue(s0, t);
        }
        let step = self.exec_task_body(s0, s, t);
        if step.is_some() && self.eof_stores() {
            self.eof_ghost(s0, s, Some(t));
        }
        let queued = s.qsel & QSEL_QUEUED != 0;
        s.qsel = 0;
        s.away &= !(1 << t);
        Some((step?, queued))
    }

    /// Step::UringMigrate of task `t` is enabled: two queues, and its next
    /// step queues a request (`queued`, from `exec_task_q`).
    fn migrate_enabled(&self, s: &State, t: usize, queued: bool) -> bool {
        queued && self.cfg.uring_queues == 2 && s.away & (1 << t) == 0
    }

    /// The state after task `t` migrates (one-shot: its next step runs on
    /// the other CPU).
    fn migrated(s: &State, t: usize) -> State {
        let mut ns = *s;
        ns.away |= 1 << t;
        ns.ev = Event::None;
        ns
    }

    /// Runs task `t`'s next step on `s`, a copy of `s0`, in place if it is
    /// enabled (`s` is garbage when it is not). `successors` builds each
    /// successor in its slot of the output this way, with one copy of the
    /// state.
    pub fn exec_task_in(&self, s0: &State, s: &mut State, t: usize) -> Option<Step> {
        self.exec_task_q(s0, s, t).map(|(step, _)| step)
    }

    #[allow(clippy::needless_borrow)]
    fn exec_task_body(&self, s0: &State, mut s: &mut State, t: usize) -> Option<Step> {
        let op = self.current_op(s0, t)?;
        // A thread's next syscall starts once the one before it returned
        // (once done, a task stays done, so checking at every pc is the
        // same as checking at the first).
        if let Some(p) = self.pred[t] {
            if !self.returned(s0, p) {
                return None;
            }
        }
        s.ev = Event::None;
        let step = match op {
            Op::Entry => self.op_entry(&mut s, t)?,
            Op::InodeLock => self.op_inode_lock(&mut s, t)?,
            Op::DioLock => self.op_dio_lock(&mut s, t)?,
            Op::PrivateFault { page } => self.op_private_fault(&mut s, t, page)?,
            Op::UnlockReturn { unlock } => self.op_unlock_return(&mut s, t, unlock)?,
            Op::CopyPages { first, n } => self.op_copy_pages(&mut s, t, first, n)?,
            Op::FillPages { first, n } => self.op_fill_pages(&mut s, t, first, n)?,
            Op::FillUnits { first, n } => self.op_fill_units(&mut s, t, first, n)?,
            Op::BatchWait => self.op_batch_wait(&mut s, t)?,
            Op::MkwriteFault { page } => self.op_mkwrite_fault(&mut s, t, page)?,
            Op::MkwriteWait { page } => self.op_mkwrite_wait(&mut s, t, page)?,
            Op::MkwriteStore { page } => self.op_mkwrite_store(&mut s, t, page)?,
            Op::GupRedirty { page } => self.op_gup_redirty(&mut s, t, page)?,
            Op::WritePages { first, n, all } => self.exec_writepages(&mut s, t, first, n, all)?,
            Op::FdataWait { first, n } => self.op_fdata_wait(&mut s, t, first, n)?,
            Op::SetNowrite => self.op_set_nowrite_op(&mut s, t)?,
            Op::LockSetNowrite => self.op_lock_set_nowrite(&mut s, t)?,
            Op::WaitNowrite => self.op_wait_nowrite(&mut s, t)?,
            Op::SyncWritesWait { unlock } => self.op_sync_writes_wait(&mut s, t, unlock)?,
            Op::ReleaseNowrite => self.op_release_nowrite_op(&mut s, t)?,
            Op::IfRangeHasWriteback { first, n, skip } => {
                self.op_if_range_has_writeback(&mut s, t, first, n, skip)?
            }
            Op::Send(kind) => self.op_send(&mut s, t, kind)?,
            Op::Recv(kind) => self.op_recv(&mut s, t, kind)?,
            Op::TruncatePagecache => {
                // truncate_pagecache(inode, i_size): folios at or beyond EOF
                let lo = s.i_size;
                self.exec_truncate(&mut s, t, lo, self.cfg.pages)?
            }
            Op::TruncateRange { first, n } => {
                // truncate_pagecache_range(offset, offset + len - 1)
                self.exec_truncate(&mut s, t, first, first + n)?
            }
            Op::Invalidate { first, n, .. } => self.exec_invalidate(&mut s, t, first, n)?,
            Op::SetattrReturn => self.op_setattr_return(&mut s, t)?,
            Op::BufRead { first, n } => self.op_buf_read(&mut s, t, first, n)?,
            Op::IfReadPastEof { .. } => unreachable!("resolved by skip_empty"),
            Op::IfAttrValid { .. } => unreachable!("resolved by skip_empty"),
            Op::Readahead { first, n } => self.op_readahead(&mut s, t, first, n)?,
            Op::CachedIoStart => self.op_cached_io_start(&mut s, t)?,
            Op::CheckWbErr { .. } => unreachable!("done inline in skip_empty"),
            Op::RemoteTruncate => self.op_remote_truncate(&mut s, t)?,
            Op::IoRelease => unreachable!("done inline in skip_empty"),
            Op::DirectWriteDone => self.op_direct_write_done(&mut s, t)?,
            Op::ThroughWriteDone => self.op_through_write_done(&mut s, t)?,
            Op::OpenTruncSize => self.op_open_trunc_size(&mut s, t)?,
            Op::Abort { timeout } => self.op_abort(&mut s, t, timeout)?,
            Op::Signal { target, fatal } => self.op_signal(&mut s, t, target as usize, fatal)?,
            Op::AioStart => unreachable!("done inline in skip_empty"),
            Op::AioQueued { unlock } => self.op_aio_queued(&mut s, t, unlock)?,
            Op::AioComplete => self.op_aio_complete(&mut s, t)?,
            Op::Notify(op) => self.op_notify(&mut s, t, op)?,
        };
        if s.ev == Event::None
            && !self.split_through(t)
            && (0..s.tasks.len()).any(|u| self.in_through_gap(s0, u))
        {
            // another task ran between two chunks of a split
            // write-through write
            s.ev = Event::ThroughGap;
        }
        let reader = matches!(
            step,
            Step::GetattrReply | Step::GetattrAutoInval | Step::ShortRead
        );
        self.track_sizes(s0, &mut s, reader);
        Some(step)
    }

    pub fn enabled(&self, s: &State, out: &mut Vec<Action>) {
        for t in 0..s.tasks.len() {
            let mut ns = *s;
            if let Some((step, queued)) = self.exec_task_q(s, &mut ns, t) {
                out.push(Action {
                    actor: Actor::Task(t as u8),
                    step,
                });
                if self.migrate_enabled(s, t, queued) {
                    out.push(Action {
                        actor: Actor::Task(t as u8),
                        step: Step::UringMigrate,
                    });
                }
            }
        }
        self.daemon_actions(s, out);
    }

    /// The enabled actions with their successor states, in `enabled`
    /// order (`Spec::successors`): each task step executed once, in its
    /// output slot; the daemon's actions as `enabled` lists them, each
    /// executed by `step`.
    pub fn successors(&self, s: &State, out: &mut Vec<(Action, State)>) {
        for t in 0..s.tasks.len() {
            if self.task_done(s, t) {
                continue;
            }
            // the step is filled in once known
            let i = out.len();
            let actor = Actor::Task(t as u8);
            out.push((
                Action {
                    actor,
                    step: Step::Return,
                },
                *s,
            ));
            match self.exec_task_q(s, &mut out[i].1, t) {
                Some((step, queued)) => {
                    out[i].0.step = step;
                    if self.migrate_enabled(s, t, queued) {
                        out.push((
                            Action {
                                actor,
                                step: Step::UringMigrate,
                            },
                            Self::migrated(s, t),
                        ));
                    }
                }
                None => out.truncate(i),
            }
        }
        let mut acts = Vec::new();
        self.daemon_actions(s, &mut acts);
        for a in acts {
            if let Some(ns) = self.step(s, a) {
                out.push((a, ns));
            }
        }
    }

    /// The daemon's enabled actions (the second half of `enabled`).
    pub fn daemon_actions(&self, s: &State, out: &mut Vec<Action>) {
        let nw = self.cfg.daemon_threads as usize;
        // (after the abort fuse_dev_do_read fails: !fiq->connected; the
        // ring queues are stopped)
        if !Self::aborted(s) {
            let step = if self.uring() {
                Step::UringFetch
            } else {
                Step::DaemonRead
            };
            for w in self.readers(s) {
                out.push(Action {
                    actor: Actor::Daemon(w as u8),
                    step,
                });
            }
        }
        for w in 0..nw {
            match s.workers[w] {
                Worker::Busy { req, .. } => {
                    if s.rcl[w].wait == NONE {
                        out.push(Action {
                            actor: Actor::Daemon(w as u8),
                            step: Step::DaemonReply,
                        });
                        if (self.may_fail(&req) && !self.aio_blocking_req(s, &req))
                            || self.interrupted(s, &req)
                        {
                            out.push(Action {
                                actor: Actor::Daemon(w as u8),
                                step: Step::DaemonReplyError,
                            });
                        }
                        if self.may_short(&req) && !self.aio_blocking_req(s, &req) {
                            out.push(Action {
                                actor: Actor::Daemon(w as u8),
                                step: Step::DaemonReplyShort,
                            });
                        }
                    }
                    self.reclaim_actions(s, w, out);
                }
                Worker::Ending { .. } => out.push(Action {
                    actor: Actor::Daemon(w as u8),
                    step: Step::WritepageEnd,
                }),
                Worker::Idle => {}
            }
        }
    }

    /// Is any step enabled? (Daemon first: it is cheap to decide.)
    pub fn any_enabled(&self, s: &State) -> bool {
        let nw = self.cfg.daemon_threads as usize;
        if s.workers[..nw]
            .iter()
            .enumerate()
            .any(|(w, wk)| !matches!(wk, Worker::Idle) && !self.reclaim_blocked(s, w))
        {
            return true;
        }
        if !Self::aborted(s) && self.readers(s).next().is_some() {
            return true;
        }
        (0..s.tasks.len()).any(|t| self.exec_task(s, t).is_some())
    }

    pub fn step(&self, s: &State, a: Action) -> Option<State> {
        match a.actor {
            Actor::Task(t) if a.step == Step::UringMigrate => {
                let mut ns = *s;
                let (_, queued) = self.exec_task_q(s, &mut ns, t as usize)?;
                self.migrate_enabled(s, t as usize, queued)
                    .then(|| Self::migrated(s, t as usize))
            }
            Actor::Task(t) => {
                let (step, ns) = self.exec_task(s, t as usize)?;
                if step == a.step {
                    Some(ns)
                } else {
                    None
                }
            }
            Actor::Daemon(w) => {
                let w = w as usize;
                let ns = match a.step {
                    Step::ShrinkFolio { .. } | Step::ReclaimWaitDone => {
                        self.exec_reclaim(s, w, a.step)
                    }
                    // a worker asleep in reclaim cannot reply; a reply
                    // ends the request, and its reclaim passes with it
                    Step::DaemonReply if s.rcl[w].wait != NONE => None,
                    Step::DaemonReply => self.exec_daemon(s, w, a.step).map(|mut ns| {
                        ns.rcl[w] = Reclaim::default();
                        ns
                    }),
                    _ => self.exec_daemon(s, w, a.step),
                };
                ns.map(|mut ns| {
                    if self.eof_stores() {
                        self.eof_ghost(s, &mut ns, None);
                    }
                    ns
                })
            }
        }
    }

    /// Everything finished: every task returned, nothing on /dev/fuse or
    /// in the daemon, nothing queued.
    pub fn all_finished(&self, s: &State) -> bool {
        (0..s.tasks.len()).all(|t| self.task_done(s, t))
            && s.fuse_q.is_empty()
            && s.workers.iter().all(|w| matches!(w, Worker::Idle))
            && s.queued.is_empty()
    }

    /// Quiescent for a3: finished, and no dirty or writeback folio left.
    pub fn quiescent(&self, s: &State) -> bool {
        self.all_finished(s) && s.writectr == 0 && s.pages.iter().all(|p| !p.dirty() && !p.wb())
    }

    /// Task label for narratives: `T1 ftruncate`.
    pub fn actor_label(&self, a: Actor) -> String {
        match a {
            Actor::Task(t) => match self.cfg.thread.get(t as usize) {
                Some(th) => format!(
                    "T{} {} [thread {th}]",
                    t,
                    self.cfg.tasks[t as usize].short()
                ),
                None => format!("T{} {}", t, self.cfg.tasks[t as usize].short()),
            },
            Actor::Daemon(w) => format!("D{w} daemon"),
        }
    }
}
