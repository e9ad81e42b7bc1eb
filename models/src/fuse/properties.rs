//! Properties, named as in kernel-fuse-protocol.md §10, and the `sometimes`
//! witnesses that prove each racy window is reached.

use super::model::FuseModel;
use super::program::Op;
use super::state::*;
use stateright::{Expectation, Property};

/// Every property, in the order `properties()` returns them (which then
/// adds `EXPLORE_ALL`, a checker device that is not a verdict).
pub const PROPERTY_NAMES: &[(&str, Expectation, &str)] = &[
    (
        "a1",
        Expectation::Always,
        "no writeback WRITE outstanding with SETATTR(size)/OPEN(O_TRUNC)",
    ),
    (
        "a2",
        Expectation::Always,
        "no WRITE of data older than an applied truncation",
    ),
    (
        "a3",
        Expectation::Always,
        "quiescent: server size == i_size, content == last data",
    ),
    (
        "b1",
        Expectation::Always,
        "direct read sees every write(2) returned before it",
    ),
    (
        "b2",
        Expectation::Always,
        "no older page-cache WRITE applied after a direct WRITE",
    ),
    (
        "c1",
        Expectation::Always,
        "at most one page-cache WRITE in flight per page",
    ),
    (
        "d",
        Expectation::Always,
        "FSYNC/FLUSH sent only after the data they cover",
    ),
    (
        "e",
        Expectation::Always,
        "no deadlock: all done or a step enabled",
    ),
    (
        "g-bugon",
        Expectation::Always,
        "no BUG_ON on writectr (nested fuse_set_nowrite)",
    ),
    (
        "w-nowrite-queued",
        Expectation::Sometimes,
        "writeback WRITE queued under FUSE_NOWRITE",
    ),
    (
        "w-crop",
        Expectation::Sometimes,
        "queued WRITE cropped at i_size",
    ),
    (
        "w-drop",
        Expectation::Sometimes,
        "queued WRITE dropped (wholly beyond i_size)",
    ),
    (
        "w-trunc-waits-write",
        Expectation::Sometimes,
        "truncate waits for an in-flight WRITE",
    ),
    (
        "w-mkwrite-blocked",
        Expectation::Sometimes,
        "mmap store blocked on PG_writeback",
    ),
    (
        "w-dio-waits-wb",
        Expectation::Sometimes,
        "direct I/O waits for writeback",
    ),
    (
        "w-redirty-under-wb",
        Expectation::Sometimes,
        "folio dirty again while under writeback",
    ),
    (
        "w-second-write",
        Expectation::Sometimes,
        "second WRITE of a page after the first completed",
    ),
    (
        "w-cache-after-direct",
        Expectation::Sometimes,
        "page-cache WRITE applied after a direct WRITE",
    ),
    (
        "w-dio-read-checked",
        Expectation::Sometimes,
        "direct read of data a returned write(2) wrote",
    ),
    (
        "w-sync-checked",
        Expectation::Sometimes,
        "FSYNC/FLUSH sent with data to cover",
    ),
    (
        "w-quiescent",
        Expectation::Sometimes,
        "all done, nothing dirty or in flight",
    ),
    (
        "w-secondary",
        Expectation::Sometimes,
        "state L: a redirtied page became a secondary request",
    ),
    (
        "w-split",
        Expectation::Sometimes,
        "state C: one folio's blocks in two WRITEs in flight at once",
    ),
];

/// An always-true property. Stateright's DFS stops once every property has
/// a discovery (HasDiscoveries::All) and does not expand a state in which
/// every property already has its discovery (checker/dfs.rs, 0.31.0).
/// With one property that never fails, neither can happen, so every run is
/// exhaustive and `unique_state_count` is the same for every variant.
pub const EXPLORE_ALL: &str = "_explore-all";

pub fn index_of(name: &str) -> Option<usize> {
    PROPERTY_NAMES.iter().position(|(n, _, _)| *n == name)
}

fn cache_writes(s: &State) -> impl Iterator<Item = (u8, u8, u8, bool)> + '_ {
    // (first, n, sent, ending)
    let q = s.fuse_q.iter().filter_map(|r| match *r {
        Req::CacheWrite { first, n, sent } => Some((first, n, sent, false)),
        _ => None,
    });
    let w = s.workers.iter().filter_map(|w| match *w {
        Worker::Busy {
            req: Req::CacheWrite { first, n, sent },
            ..
        } => Some((first, n, sent, false)),
        Worker::Ending { first, n } => Some((first, n, n, true)),
        _ => None,
    });
    q.chain(w)
}

/// A size-changing request: SETATTR(size), or OPEN with O_TRUNC
/// (FUSE_ATOMIC_O_TRUNC, ref §10(a): "the same protocol applies").
fn sizing(r: &Req) -> bool {
    matches!(r, Req::Setattr { .. } | Req::Open { trunc: true, .. })
}

fn setattr_outstanding(s: &State) -> bool {
    s.fuse_q.iter().any(sizing)
        || s.workers.iter().any(|w| match w {
            Worker::Busy { req, .. } => sizing(req),
            _ => false,
        })
}

pub fn a1(_m: &FuseModel, s: &State) -> bool {
    !(setattr_outstanding(s) && cache_writes(s).any(|(.., ending)| !ending))
}

pub fn a3(m: &FuseModel, s: &State) -> bool {
    if !m.quiescent(s) {
        return true;
    }
    // The server holds, per page, the data of a write that no other write
    // really-follows (one that began after it ended): the last write of
    // some linearisation. Sequential writes leave exactly one candidate.
    s.srv_size == s.i_size
        && (0..s.i_size as usize).all(|p| {
            let last = s.fin[p] & !s.sup[p];
            s.srv[p] != NONE && last & (1 << s.srv[p]) != 0
        })
}

pub fn c1(m: &FuseModel, s: &State) -> bool {
    (0..m.cfg.pages as usize).all(|p| {
        cache_writes(s)
            .filter(|&(first, _, sent, _)| (first as usize..(first + sent) as usize).contains(&p))
            .count()
            <= 1
    })
}

pub fn e(m: &FuseModel, s: &State) -> bool {
    // after a BUG_ON the kernel has oopsed: liveness is not judged (g-bugon
    // reports it)
    s.viol & VIOL_BUG != 0 || m.all_finished(s) || m.any_enabled(s)
}

fn blocked_in(m: &FuseModel, s: &State, t: usize) -> bool {
    m.exec_task(s, t).is_none() && !m.task_done(s, t)
}

pub fn w_trunc_waits_write(m: &FuseModel, s: &State) -> bool {
    (0..s.tasks.len())
        .any(|t| matches!(m.current_op(s, t), Some(Op::WaitNowrite)) && s.writectr != FUSE_NOWRITE)
}

pub fn w_mkwrite_blocked(m: &FuseModel, s: &State) -> bool {
    (0..s.tasks.len()).any(|t| match m.current_op(s, t) {
        Some(Op::MkwriteWait { page }) => s.pages[page as usize].wb(),
        _ => false,
    })
}

pub fn w_dio_waits_wb(m: &FuseModel, s: &State) -> bool {
    use super::config::TaskSpec::*;
    (0..s.tasks.len()).any(|t| {
        matches!(
            m.cfg.tasks[t],
            DioWrite { .. } | DioRead { .. } | OdirectWrite { .. } | OdirectRead { .. }
        ) && matches!(
            m.current_op(s, t),
            Some(Op::FdataWait { .. })
                | Some(Op::Invalidate { .. })
                | Some(Op::SyncWritesWait { .. })
                | Some(Op::WritePages { .. })
        ) && blocked_in(m, s, t)
            && s.pages.iter().any(|p| p.wb())
    })
}

pub fn w_split(m: &FuseModel, s: &State) -> bool {
    if m.cfg.folio_blocks <= 1 {
        return false;
    }
    let ws: Vec<(u8, u8, u8, bool)> = cache_writes(s).collect();
    let head = |p: u8| m.folio(p as usize).start;
    ws.iter().enumerate().any(|(i, a)| {
        ws[i + 1..]
            .iter()
            .any(|b| (a.0..a.0 + a.2).any(|p| (b.0..b.0 + b.2).any(|q| head(p) == head(q))))
    })
}

type Cond = fn(&FuseModel, &State) -> bool;

/// Conditions in `PROPERTY_NAMES` order (without `EXPLORE_ALL`): for an
/// always-property, "holds"; for a witness, "reached here".
pub const CONDITIONS: [Cond; PROPERTY_NAMES.len()] = [
    a1,
    |_, s| s.viol & VIOL_A2 == 0,
    a3,
    |_, s| s.viol & VIOL_B1 == 0,
    |_, s| s.viol & VIOL_B2 == 0,
    c1,
    |_, s| s.viol & VIOL_D == 0,
    e,
    |_, s| s.viol & VIOL_BUG == 0,
    |_, s| s.writectr < 0 && !s.queued.is_empty(),
    |_, s| cache_writes(s).any(|(_, n, sent, _)| sent < n),
    |_, s| s.ev == Event::Drop,
    w_trunc_waits_write,
    w_mkwrite_blocked,
    w_dio_waits_wb,
    |_, s| s.pages.iter().any(|p| p.dirty() && p.wb()),
    |_, s| s.ev == Event::SecondWriteSent,
    |_, s| s.ev == Event::CacheAfterDirect,
    |_, s| s.ev == Event::DirectReadChecked,
    |_, s| s.ev == Event::SyncChecked,
    |m, s| m.quiescent(s),
    |_, s| s.ev == Event::Secondary,
    w_split,
];

/// Does the state violate (always) or witness (sometimes) property `i`?
pub fn hit(i: usize, m: &FuseModel, s: &State) -> bool {
    let c = CONDITIONS[i](m, s);
    match PROPERTY_NAMES[i].1 {
        Expectation::Sometimes => c,
        _ => !c,
    }
}

/// The properties as Stateright sees them (Explorer, plain checkers).
pub fn properties() -> Vec<Property<FuseModel>> {
    let mut v: Vec<Property<FuseModel>> = PROPERTY_NAMES
        .iter()
        .zip(CONDITIONS.iter())
        .map(|((name, exp, _), c)| match exp {
            Expectation::Sometimes => Property::sometimes(name, *c),
            _ => Property::always(name, *c),
        })
        .collect();
    v.push(Property::<FuseModel>::always(EXPLORE_ALL, |_, _| true));
    v
}

/// For `wbspec check`: one property that evaluates every condition on
/// each visited state and counts violations and witnesses in the model's
/// tally. It always holds, so the DFS explores everything (see
/// `EXPLORE_ALL`), and Stateright keeps one discovery slot instead of 21
/// (its per-state, per-property bookkeeping dominated the run time).
pub fn tally_properties() -> Vec<Property<FuseModel>> {
    vec![Property::<FuseModel>::always(TALLY, |m, s| {
        for i in 0..CONDITIONS.len() {
            m.count(i, hit(i, m, s));
        }
        true
    })]
}

pub const TALLY: &str = "_tally";
