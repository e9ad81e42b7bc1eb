//! Direct reclaim inside a daemon worker (seed 000 patches 1–2): in legacy
//! (cgroup v1) memcg reclaim, shrink_folio_list may wait for a FUSE folio's
//! writeback from inside the daemon that must answer that very WRITE.
//!
//! mm/vmscan.c, shrink_folio_list, a folio under PG_writeback (the three
//! cases of its comment; the flag test added by 0c4f8ed498ce, 6.16):
//!  1. kswapd, PG_reclaim set, node flagged PGDAT_WRITEBACK: count and
//!     activate (kswapd is never a daemon thread, so not modelled);
//!  2. writeback_throttling_sane(sc) (global or cgroup v2 reclaim), or
//!     !PG_reclaim, or !may_enter_fs(gfp), or the mapping carries
//!     AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM: folio_set_reclaim, activate,
//!     go on;
//!  3. otherwise (legacy memcg, PG_reclaim already set, __GFP_FS):
//!     folio_unlock, folio_wait_writeback, then retry the folio.
//!
//! fuse_init_file_inode sets the flag only when fc->writeback_cache (6.16
//! to the 2026 trees); folio_end_writeback clears PG_reclaim. The model's
//! premise is the deadlock's: the server's allocations are charged to the
//! legacy memcg that also holds the file's folios, with __GFP_FS (a
//! userspace allocation). Reclaim at another moment, or global / v2
//! reclaim, only ever marks folios (case 2), which no property observes,
//! so without `Config::memcg_v1` no reclaim step is generated at all.
//! `Config::reclaim_env` takes one precondition away at a time: cgroup
//! v2 memcg reclaim (marks only), MGLRU (sort_folio never isolates a
//! folio under writeback: marks only), or the file's folios charged to a
//! memcg the server does not allocate in (no reclaim step meets them).
//! Two of these are narrower in the kernel than here (findings.md,
//! "Review of the fix, transport and reclaim semantics"): cgroup v2 memcg
//! reclaim is writeback_throttling_sane only with CONFIG_CGROUP_WRITEBACK
//! (without it, v2 memcg reclaim is case 3 like v1); and MGLRU decides
//! "under writeback" in sort_folio, before isolation, while
//! shrink_folio_list runs the same three cases on what it isolated, so a
//! folio that enters writeback between the two, with PG_reclaim already
//! set, is waited on (a window `mglru` does not model).
//!
//! Abstractions: a pass meets one folio under writeback, any one (LRU
//! order is not modelled); at most `MAX_PASSES` passes per request (one
//! marks, the next may wait); a clean folio that reclaim would free after
//! the wait stays in the page cache (eviction only causes a later READ).

use super::model::{Action, Actor, FuseModel};
use super::program::{Op, RecvKind, SendKind};
use super::state::*;
use super::step::Step;

/// Reclaim passes a worker makes while handling one request.
pub const MAX_PASSES: u8 = 2;

impl FuseModel {
    /// Does the inode's mapping carry AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM?
    /// (fuse_init_file_inode: only on writeback_cache mounts, unless
    /// `fix_reclaim_flag_always`.)
    pub fn reclaim_flag(&self) -> bool {
        self.cfg.variant.reclaim_flag
            && (self.cfg.writeback_cache || self.cfg.variant.fix_reclaim_flag_always)
    }

    /// Worker `w` sleeps in folio_wait_writeback from reclaim and the folio
    /// is still under writeback.
    pub fn reclaim_blocked(&self, s: &State, w: usize) -> bool {
        let p = s.rcl[w].wait;
        p != NONE && s.pages[p as usize].wb()
    }

    /// The environment's reclaim of a clean folio, `None` if the folio
    /// holding block `p` cannot be reclaimed now. kswapd, direct or
    /// memcg reclaim, and DAMON's pageout scheme (damon_pa_pageout →
    /// reclaim_pages) all reach shrink_folio_list → __remove_mapping
    /// (mm/vmscan.c), which takes a clean folio out of the page cache at
    /// any time, mapped or not (try_to_unmap first), when folio_trylock
    /// succeeds, it is neither dirty nor under writeback, and its
    /// refcount can be frozen: no task holds it between two of its steps.
    /// The model's tasks hold a folio across steps locked, or (a
    /// write-through write) referenced: fuse_fill_write_pages keeps each
    /// folio of its batch in `ap->folios`, unlocked once uptodate, until
    /// fuse_send_write_pages puts them after the WRITE's reply
    /// ([`Self::write_through_holds`]); a reader copies in the step that
    /// finds a folio uptodate (read.rs). No
    /// request is sent: a later access misses and READs it again, and
    /// its data then comes from the server. The exhaustive checks never
    /// take this step (the catalogue's scope); trace conformance does
    /// (harness conform/search.rs), since no kernel promise keeps a
    /// clean folio cached.
    pub fn reclaim_clean(&self, s: &State, p: usize) -> Option<State> {
        let f = self.folio(p);
        if f.is_empty() {
            return None;
        }
        let busy = |q: usize| {
            let g = s.pages[q];
            !g.present()
                || g.dirty()
                || g.wb()
                || g.locked()
                || (0..s.tasks.len()).any(|t| self.write_through_holds(s, t, q))
        };
        if f.clone().any(busy) {
            return None;
        }
        let mut n = *s;
        self.remove_page(&mut n, p);
        Some(n)
    }

    /// Does task `t`, a write-through write (fuse_perform_write), hold a
    /// reference on block `q`'s folio: one of the batch it has filled and
    /// not yet had answered (from its `FillPages` / `FillUnits` to the
    /// reply of that batch's WRITE)?
    pub fn write_through_holds(&self, s: &State, t: usize, q: usize) -> bool {
        let task = s.tasks[t];
        let prog = &self.programs[t];
        let pc = task.pc as usize;
        let within = |a: u8, n: u8| (a as usize..(a + n) as usize).contains(&q);
        match prog.get(pc) {
            Some(Op::FillPages { first, .. }) => within(*first, task.cur),
            Some(Op::FillUnits { .. }) if task.ph != 0 => within(task.bfirst, task.bn),
            Some(Op::BatchWait)
            | Some(Op::Send(SendKind::ThroughBatch))
            | Some(Op::Recv(RecvKind::ThroughBatch)) => within(task.bfirst, task.bn),
            // after the fill: its wait, its WRITE, its reply
            Some(
                Op::FdataWait { .. }
                | Op::Send(SendKind::ThroughWrite | SendKind::ThroughChunk { .. })
                | Op::Recv(RecvKind::DirectWrite | RecvKind::ThroughChunk { .. }),
            ) => prog[..pc]
                .iter()
                .rev()
                .take(3)
                .find_map(|o| match o {
                    Op::FillPages { first, n } => Some(within(*first, *n)),
                    _ => None,
                })
                .unwrap_or(false),
            _ => false,
        }
    }

    /// Does a worker's memcg reclaim meet the file's folios? (memcg v1 or
    /// v2 reclaim in the daemon, the folios charged to its memcg.)
    pub fn reclaim_meets_file(&self) -> bool {
        let env = self.cfg.reclaim_env;
        (self.cfg.memcg_v1 || env.memcg_v2) && !env.charged_elsewhere
    }

    /// May shrink_folio_list wait on a folio under writeback at all?
    /// Only legacy (v1) memcg reclaim on the classic LRU: cgroup v2
    /// reclaim is writeback_throttling_sane (case 2), and MGLRU's
    /// sort_folio never isolates a folio under writeback.
    fn may_wait(&self) -> bool {
        self.cfg.memcg_v1 && !self.cfg.reclaim_env.memcg_v2 && !self.cfg.reclaim_env.mglru
    }

    /// The reclaim steps of a worker handling a request.
    pub(super) fn reclaim_actions(&self, s: &State, w: usize, out: &mut Vec<Action>) {
        if !self.reclaim_meets_file() {
            return;
        }
        let actor = Actor::Daemon(w as u8);
        let r = s.rcl[w];
        if r.wait != NONE {
            if !s.pages[r.wait as usize].wb() {
                out.push(Action {
                    actor,
                    step: Step::ReclaimWaitDone,
                });
            }
            return;
        }
        if r.passes >= MAX_PASSES {
            return;
        }
        for p in 0..self.cfg.pages as usize {
            if self.folio(p).start == p && s.pages[p].present() && s.pages[p].wb() {
                out.push(Action {
                    actor,
                    step: Step::ShrinkFolio { page: p as u8 },
                });
            }
        }
    }

    /// One reclaim step of worker `w` (None when not enabled).
    pub(super) fn exec_reclaim(&self, s0: &State, w: usize, step: Step) -> Option<State> {
        if !self.reclaim_meets_file() || !matches!(s0.workers[w], Worker::Busy { .. }) {
            return None;
        }
        let mut s = *s0;
        s.ev = Event::None;
        let r = s.rcl[w];
        match step {
            Step::ShrinkFolio { page } => {
                let p = page as usize;
                let ok = r.wait == NONE
                    && r.passes < MAX_PASSES
                    && p < self.cfg.pages as usize
                    && self.folio(p).start == p
                    && s.pages[p].present()
                    && s.pages[p].wb();
                if !ok {
                    return None;
                }
                s.rcl[w].passes += 1;
                let flagged = self.reclaim_flag() && !self.cfg.variant.mut_vmscan_ignores_flag;
                if !s.pages[p].has(PG_RECLAIM) || flagged || !self.may_wait() {
                    // case 2: folio_set_reclaim, activate, next folio
                    // (MGLRU: sort_folio's folio_inc_gen sets PG_reclaim
                    // and keeps the folio; v2: writeback_throttling_sane)
                    self.folio_set(&mut s, p, PG_RECLAIM);
                    s.ev = Event::ReclaimMark;
                } else {
                    // case 3: folio_unlock, folio_wait_writeback
                    s.rcl[w].wait = page;
                }
                Some(s)
            }
            Step::ReclaimWaitDone => {
                if r.wait == NONE || s.pages[r.wait as usize].wb() {
                    return None;
                }
                s.rcl[w].wait = NONE;
                Some(s)
            }
            _ => None,
        }
    }
}

/// Kernel words for a reclaim step (narrate.rs).
pub fn describe(m: &FuseModel, b: &State, a: &State, act: &Action) -> Option<String> {
    let Actor::Daemon(w) = act.actor else {
        return None;
    };
    let w = w as usize;
    match act.step {
        Step::ShrinkFolio { page } => {
            let flag = if m.reclaim_flag() {
                "its mapping has AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM"
            } else {
                "its mapping has no AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM"
            };
            Some(if a.rcl[w].wait != NONE {
                format!(
                    "D{w}'s allocation enters memcg v1 reclaim; p{page} is under writeback with PG_reclaim already set and {flag}: folio_wait_writeback (case 3)"
                )
            } else if b.pages[page as usize].has(PG_RECLAIM) {
                format!(
                    "D{w}'s allocation enters memcg v1 reclaim; p{page} is under writeback and {flag}: activate, no wait (case 2)"
                )
            } else {
                format!(
                    "D{w}'s allocation enters memcg v1 reclaim; p{page} is under writeback without PG_reclaim: folio_set_reclaim, activate (case 2)"
                )
            })
        }
        Step::ReclaimWaitDone => Some(format!(
            "p{} left writeback: D{w}'s folio_wait_writeback returns, reclaim goes on",
            b.rcl[w].wait
        )),
        _ => None,
    }
}

/// Sentences for `e` and `r-flag`: which worker sleeps in reclaim on what.
pub fn why(m: &FuseModel, s: &State) -> Vec<String> {
    let mut out = Vec::new();
    for (w, r) in s.rcl.iter().enumerate().take(m.cfg.daemon_threads as usize) {
        if r.wait == NONE {
            continue;
        }
        let req = match s.workers[w] {
            Worker::Busy { req, .. } => req.to_string(),
            _ => "a request".into(),
        };
        out.push(format!(
            "D{w} handles {req} and sleeps in folio_wait_writeback (shrink_folio_list, memcg v1) on p{}: {}; the mapping {} AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM",
            r.wait,
            s.page_str(r.wait as usize),
            if m.reclaim_flag() { "has" } else { "lacks" }
        ));
    }
    out
}

/// r-flag: no worker sleeps in reclaim on the writeback of a folio whose
/// mapping carries the flag.
pub fn r_flag(m: &FuseModel, s: &State) -> bool {
    !(m.reclaim_flag() && s.rcl.iter().any(|r| r.wait != NONE))
}

/// Witness: a worker sleeps in folio_wait_writeback from reclaim.
pub fn w_reclaim_wait(_m: &FuseModel, s: &State) -> bool {
    s.rcl.iter().any(|r| r.wait != NONE)
}
