//! Properties (the reviewers' concerns of seed 004 as invariants,
//! docs/kernel-sources.md, model nowait) and the `sometimes` witnesses
//! that prove each racy window is reached.

use super::config::TaskSpec;
use super::model::NowaitModel;
use super::state::*;
use crate::spec::PropertyDef;
use stateright::Expectation;

pub const PROPERTIES: &[PropertyDef] = &[
    PropertyDef {
        name: "io1-exactly-once",
        expectation: Expectation::Always,
        stricter: None,
        description: "quiescent: each append's folios in the file exactly once; size = initial + CQE results",
    },
    PropertyDef {
        name: "io2-append-atomic",
        expectation: Expectation::Always,
        stricter: None,
        description: "no other write's data between the folios of one O_APPEND write",
    },
    PropertyDef {
        name: "io3-eagain-pure",
        expectation: Expectation::Always,
        stricter: None,
        description: "an attempt that reports -EAGAIN changed nothing observable (data, size, times, i_version, mode, S_PENDING_TIME)",
    },
    PropertyDef {
        name: "iv-logged",
        expectation: Expectation::Always,
        stricter: None,
        description: "when a write completes, every i_version bump is in the log",
    },
    PropertyDef {
        name: "io4-times",
        expectation: Expectation::Always,
        stricter: None,
        description: "at completion mtime/ctime are no older than the write's kiocb_modified, and a queried i_version was bumped",
    },
    PropertyDef {
        name: "io5-pending-cleared",
        expectation: Expectation::Always,
        stricter: None,
        description: "quiescent: S_PENDING_TIME is clear",
    },
    PropertyDef {
        name: "io6-suid",
        expectation: Expectation::Always,
        stricter: None,
        description: "no unprivileged write's data becomes visible while S_ISUID is set",
    },
    PropertyDef {
        name: "io7-dirty-limit",
        expectation: Expectation::Always,
        stricter: None,
        description: "dirty folios <= limit + one ratelimit batch per dirtying task context (and the dirtier's batch)",
    },
    PropertyDef {
        name: "e",
        expectation: Expectation::Always,
        stricter: None,
        description: "no deadlock: all done or a step enabled",
    },
    PropertyDef {
        name: "w-eagain-punt",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "an inline attempt returned -EAGAIN having copied nothing and was punted",
    },
    PropertyDef {
        name: "w-eagain-after-copy",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "an attempt returned -EAGAIN although it had copied folios",
    },
    PropertyDef {
        name: "w-short-punt",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a short write was punted to io-wq with bytes_done",
    },
    PropertyDef {
        name: "w-split-append",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a write whose folios came from two attempts completed",
    },
    PropertyDef {
        name: "w-bdp-eagain",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "balance_dirty_pages(BDP_ASYNC) refused a NOWAIT attempt",
    },
    PropertyDef {
        name: "w-folio-eagain",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "iomap_write_begin(FGP_NOWAIT) found the folio locked",
    },
    PropertyDef {
        name: "w-times-eagain",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "kiocb_modified refused a NOWAIT attempt over timestamps",
    },
    PropertyDef {
        name: "w-privs-eagain",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "kiocb_modified refused a NOWAIT attempt over S_ISUID",
    },
    PropertyDef {
        name: "w-time-skipped",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a NOWAIT attempt went on without its timestamp update",
    },
    PropertyDef {
        name: "w-pending-set",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "S_PENDING_TIME is set",
    },
    PropertyDef {
        name: "w-lazytime-nowait",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a NOWAIT attempt updated the times in memory (N70 lazytime)",
    },
    PropertyDef {
        name: "w-suid-removed",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a write cleared S_ISUID",
    },
    PropertyDef {
        name: "w-over-limit",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "dirty folios above the limit",
    },
    PropertyDef {
        name: "w-stat-between",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a stat ran while an io_uring write was punted",
    },
    PropertyDef {
        name: "w-quiescent",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "all done, no lock held",
    },
];

/// The folios of the file whose data is task `t`'s.
fn owned_by(s: &State, t: usize) -> impl Iterator<Item = usize> + '_ {
    (0..s.i_size as usize).filter(move |&p| chunk_of(s.data[p]).map(|(o, _)| o) == Some(t))
}

pub fn io1(m: &NowaitModel, s: &State) -> bool {
    if !m.quiescent(s) {
        return true;
    }
    let c = &m.cfg;
    let mut size = c.init_size;
    let mut appends = false;
    for (t, spec) in c.tasks.iter().enumerate() {
        let Some((_, append, n)) = spec.write() else {
            continue;
        };
        if s.tasks[t].cqe != n {
            return false;
        }
        if append {
            appends = true;
            size += s.tasks[t].cqe;
            for k in 0..n {
                let d = chunk(t, k);
                if (0..s.i_size as usize).filter(|&p| s.data[p] == d).count() != 1 {
                    return false;
                }
            }
        }
    }
    if !appends {
        for spec in &c.tasks {
            if let TaskSpec::Uring { first, n, .. } | TaskSpec::Write { first, n, .. } = *spec {
                size = size.max(first + n);
            }
        }
    }
    s.i_size == size
}

pub fn io2(m: &NowaitModel, s: &State) -> bool {
    m.cfg.tasks.iter().enumerate().all(|(t, spec)| {
        if !matches!(spec.write(), Some((_, true, _))) {
            return true;
        }
        let mut own = owned_by(s, t);
        let Some(lo) = own.next() else {
            return true;
        };
        let hi = own.last().unwrap_or(lo);
        (lo..=hi).all(|p| chunk_of(s.data[p]).map(|(o, _)| o) == Some(t))
    })
}

pub fn io7(m: &NowaitModel, s: &State) -> bool {
    let c = &m.cfg;
    c.limit == 0
        || s.dirty_total() as usize
            <= c.limit as usize + c.ratelimit as usize * c.dirtying_contexts() + c.dirtier as usize
}

pub fn e(m: &NowaitModel, s: &State) -> bool {
    m.all_done(s) || m.any_enabled(s)
}

type Cond = fn(&NowaitModel, &State) -> bool;

/// Conditions in `PROPERTIES` order: for an always-property, "holds";
/// for a witness, "reached here".
pub const CONDITIONS: [Cond; PROPERTIES.len()] = [
    io1,
    io2,
    |_, s| s.viol & VIOL_IO3 == 0,
    |_, s| s.viol & VIOL_IVLOG == 0,
    |_, s| s.viol & VIOL_IO4 == 0,
    |m, s| !(m.quiescent(s) && s.pending),
    |_, s| s.viol & VIOL_IO6 == 0,
    io7,
    e,
    |_, s| s.ev == Event::EagainPunt,
    |_, s| s.ev == Event::EagainAfterCopy,
    |_, s| s.ev == Event::ShortPunt,
    |_, s| s.ev == Event::SplitComplete,
    |_, s| s.cause == Cause::Bdp,
    |_, s| s.cause == Cause::Folio,
    |_, s| s.cause == Cause::Times,
    |_, s| s.cause == Cause::Privs,
    |_, s| s.ev == Event::TimeSkipped,
    |_, s| s.pending,
    |_, s| s.ev == Event::LazytimeNowait,
    |_, s| s.ev == Event::SuidRemoved,
    |m, s| m.cfg.limit > 0 && s.dirty_total() > m.cfg.limit,
    |_, s| s.ev == Event::StatBetween,
    |m, s| m.quiescent(s),
];
