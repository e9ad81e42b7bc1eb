//! Step semantics of the nowait model: the task dispatcher, the inode
//! operations that are not writes (chmod, utimes, stat), the flusher and
//! the environment actors. The write path is in write.rs.
//!
//! As in the FUSE model, kernel tasks share inode and page-cache memory,
//! so the model implements `stateright::Model` directly with explicit
//! actors: each task has its phase and locals; a blocked task has no
//! enabled step; only enabled actions are returned.

use super::config::{Config, TaskSpec, MAX_PAGES};
use super::state::*;
use super::step::Step;
use serde::{Deserialize, Serialize};

/// The environment's actors: what makes an IOCB_NOWAIT attempt fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum EnvActor {
    /// The clock (current_time's granularity).
    Clock,
    /// Another holder of the lock of folio `p` (reclaim, a reader, ...).
    FolioHolder(u8),
    /// Another holder of the xfs ILOCK (log flush, a reader of extents).
    IlockHolder,
    /// Another task dirtying another file's pages on the same bdi.
    Dirtier,
}

/// Who acts in a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Actor {
    /// Task `T<i>` in its own context (io_uring submission, a syscall).
    Task(u8),
    /// Task `T<i>`'s io_uring request on an io-wq worker (after a punt).
    Iowq(u8),
    Env(EnvActor),
}

/// One atomic step: the actor and the kernel function it executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Action {
    pub actor: Actor,
    pub step: Step,
}

/// The io_uring / xfs / iomap NOWAIT buffered write model.
#[derive(Clone)]
pub struct NowaitModel {
    pub cfg: Config,
}

impl NowaitModel {
    pub fn new(cfg: Config) -> Result<NowaitModel, String> {
        cfg.validate()?;
        Ok(NowaitModel { cfg })
    }

    pub fn initial(&self) -> State {
        let c = &self.cfg;
        let mut data = [D_HOLE; MAX_PAGES];
        for d in data.iter_mut().take(c.init_size as usize) {
            *d = D_INIT;
        }
        let tasks = c
            .tasks
            .iter()
            .map(|t| Task {
                kpos: match *t {
                    TaskSpec::Uring { first, .. } | TaskSpec::Write { first, .. } => first,
                    _ => 0,
                },
                ivo: NONE,
                ..Task::default()
            })
            .collect();
        State {
            i_size: c.init_size,
            data,
            dirty: 0,
            now: c.stale as u8,
            mtime: 0,
            ctime: 0,
            iv: 0,
            iv_disk: 0,
            ivq: false,
            suid: c.suid,
            pending: false,
            iolock: Default::default(),
            env: Env {
                ticks: c.clock_ticks,
                flock_left: c.folio_lock,
                flock_held: NONE,
                ilock_left: c.ilock,
                ilock_held: false,
                dirtier: c.dirtier,
            },
            ext: 0,
            tasks,
            viol: 0,
            ev: Event::None,
            cause: Cause::None,
        }
    }

    /// Every workload task returned (the flusher never finishes: it is a
    /// daemon with nothing to do).
    pub fn all_done(&self, s: &State) -> bool {
        self.cfg
            .tasks
            .iter()
            .enumerate()
            .all(|(t, spec)| *spec == TaskSpec::Flusher || s.tasks[t].ph == Phase::Done)
    }

    /// All done and nobody holds a lock.
    pub fn quiescent(&self, s: &State) -> bool {
        self.all_done(s) && s.iolock.is_free() && !s.env.ilock_held && s.env.flock_held == NONE
    }

    /// Runs task `t`'s next step if it is enabled. Tracks io3: a NOWAIT
    /// attempt that changes something observable is `touched`, and one
    /// that then reports -EAGAIN violates -EAGAIN purity.
    pub fn exec_task(&self, s0: &State, t: usize) -> Option<(Step, State)> {
        let mut s = *s0;
        s.ev = Event::None;
        s.cause = Cause::None;
        let task = s0.tasks[t];
        let in_attempt =
            task.nowait && matches!(task.ph, Phase::Checks | Phase::IomapBegin | Phase::Folio);
        let step = match self.cfg.tasks[t] {
            TaskSpec::Uring { .. } | TaskSpec::Write { .. } => self.exec_writer(&mut s, t)?,
            TaskSpec::ChmodSuid | TaskSpec::Utimes => self.exec_setattr(&mut s, t)?,
            TaskSpec::Stat => self.exec_getattr(&mut s, t)?,
            TaskSpec::Flusher => self.exec_flusher(&mut s)?,
        };
        if in_attempt {
            if observable(&s) != observable(s0) {
                s.tasks[t].touched = true;
            }
            if matches!(s.ev, Event::EagainPunt | Event::EagainAfterCopy) && s.tasks[t].touched {
                s.viol |= VIOL_IO3;
            }
        }
        Some((step, s))
    }

    /// The actor of task `t`'s next step: its io-wq worker once punted.
    fn task_actor(&self, s: &State, t: usize) -> Actor {
        if s.tasks[t].wq {
            Actor::Iowq(t as u8)
        } else {
            Actor::Task(t as u8)
        }
    }

    pub fn enabled(&self, s: &State, out: &mut Vec<Action>) {
        for t in 0..s.tasks.len() {
            if let Some((step, _)) = self.exec_task(s, t) {
                out.push(Action {
                    actor: self.task_actor(s, t),
                    step,
                });
            }
        }
        let busy = !self.all_done(s);
        let env = |e, step| Action {
            actor: Actor::Env(e),
            step,
        };
        let e = &s.env;
        if busy && e.ticks > 0 {
            out.push(env(EnvActor::Clock, Step::ClockTick));
        }
        if e.flock_held != NONE {
            out.push(env(
                EnvActor::FolioHolder(e.flock_held),
                Step::EnvFolioUnlock,
            ));
        } else if busy {
            for p in 0..MAX_PAGES as u8 {
                if e.flock_left & (1 << p) != 0 && s.present(p as usize) {
                    out.push(env(EnvActor::FolioHolder(p), Step::EnvFolioLock));
                }
            }
        }
        if e.ilock_held {
            out.push(env(EnvActor::IlockHolder, Step::EnvIunlock));
        } else if busy && e.ilock_left > 0 {
            out.push(env(EnvActor::IlockHolder, Step::EnvIlock));
        }
        // the dirtier is throttled like any writer: it dirties its batch
        // only from under the limit
        if busy && e.dirtier > 0 && s.dirty_total() <= self.cfg.limit {
            out.push(env(EnvActor::Dirtier, Step::EnvDirty));
        }
    }

    pub fn any_enabled(&self, s: &State) -> bool {
        let mut v = Vec::new();
        self.enabled(s, &mut v);
        !v.is_empty()
    }

    pub fn step(&self, s: &State, a: Action) -> Option<State> {
        match a.actor {
            Actor::Task(t) | Actor::Iowq(t) => {
                let t = t as usize;
                if t >= s.tasks.len() || self.task_actor(s, t) != a.actor {
                    return None;
                }
                let (step, ns) = self.exec_task(s, t)?;
                (step == a.step).then_some(ns)
            }
            Actor::Env(e) => {
                let mut v = Vec::new();
                self.enabled(s, &mut v);
                if !v.contains(&a) {
                    return None;
                }
                let mut ns = *s;
                ns.ev = Event::None;
                ns.cause = Cause::None;
                let en = &mut ns.env;
                match (e, a.step) {
                    (EnvActor::Clock, Step::ClockTick) => {
                        ns.now += 1;
                        en.ticks -= 1;
                    }
                    (EnvActor::FolioHolder(p), Step::EnvFolioLock) => {
                        en.flock_held = p;
                        en.flock_left &= !(1 << p);
                    }
                    (EnvActor::FolioHolder(_), Step::EnvFolioUnlock) => en.flock_held = NONE,
                    (EnvActor::IlockHolder, Step::EnvIlock) => {
                        en.ilock_held = true;
                        en.ilock_left -= 1;
                    }
                    (EnvActor::IlockHolder, Step::EnvIunlock) => en.ilock_held = false,
                    (EnvActor::Dirtier, Step::EnvDirty) => {
                        ns.ext += en.dirtier;
                        en.dirtier = 0;
                    }
                    _ => return None,
                }
                Some(ns)
            }
        }
    }

    // ------------------------------------------------------------------
    // chmod u+s, utimes, stat

    /// chmod / utimes: inode_lock, then notify_change -> xfs_vn_setattr ->
    /// xfs_setattr_nonsize, whose transaction takes the ILOCK and logs
    /// the inode core (XFS_ILOG_CORE: i_version is bumped and logged).
    fn exec_setattr(&self, s: &mut State, t: usize) -> Option<Step> {
        match s.tasks[t].ph {
            Phase::Start => {
                if !s.iolock.try_lock(t as u8) {
                    return None;
                }
                s.tasks[t].ph = Phase::Locked;
                Some(Step::InodeLock)
            }
            Phase::Locked => {
                if s.env.ilock_held {
                    return None;
                }
                let step = if self.cfg.tasks[t] == TaskSpec::ChmodSuid {
                    s.suid = true;
                    Step::SetattrMode
                } else {
                    s.mtime = s.now;
                    Step::SetattrTimes
                };
                s.ctime = s.now;
                bump_iversion_logged(s);
                s.iolock.unlock(t as u8);
                s.tasks[t].ph = Phase::Done;
                Some(step)
            }
            _ => None,
        }
    }

    /// statx with STATX_CHANGE_COOKIE (as nfsd asks): reads size, times,
    /// mode and i_version, which inode_query_iversion marks queried. No
    /// lock (xfs_vn_getattr).
    fn exec_getattr(&self, s: &mut State, t: usize) -> Option<Step> {
        if s.tasks[t].ph != Phase::Start {
            return None;
        }
        s.ivq = true;
        if s.tasks.iter().any(|k| k.ph == Phase::Queued) {
            s.ev = Event::StatBetween;
        }
        s.tasks[t].ph = Phase::Done;
        Some(Step::Getattr)
    }

    /// The flusher writes back the lowest dirty folio nobody else holds
    /// locked, else a folio of the other file. Writeback ends at once
    /// (the model counts dirty folios only).
    fn exec_flusher(&self, s: &mut State) -> Option<Step> {
        let n = self.cfg.pages();
        if let Some(p) = (0..n).find(|&p| s.is_dirty(p) && s.env.flock_held != p as u8) {
            s.dirty &= !(1 << p);
            return Some(Step::Writeback);
        }
        if s.ext > 0 {
            s.ext -= 1;
            return Some(Step::WritebackOther);
        }
        None
    }

    /// `T1 uring-append`, `T1 io-wq`, `clock`.
    pub fn actor_label(&self, a: Actor) -> String {
        match a {
            Actor::Task(t) => format!("T{t} {}", self.cfg.tasks[t as usize].short()),
            Actor::Iowq(t) => format!("T{t} io-wq"),
            Actor::Env(EnvActor::Clock) => "clock".into(),
            Actor::Env(EnvActor::FolioHolder(p)) => format!("folio {p} holder"),
            Actor::Env(EnvActor::IlockHolder) => "ILOCK holder".into(),
            Actor::Env(EnvActor::Dirtier) => "other dirtier".into(),
        }
    }
}

/// A transaction that logs the inode core: i_version is bumped
/// (inode_maybe_inc_iversion with force) and the bump is in the log.
pub(super) fn bump_iversion_logged(s: &mut State) {
    s.iv += 1;
    s.ivq = false;
    s.iv_disk = s.iv;
}
