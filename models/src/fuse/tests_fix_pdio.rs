//! Where `fix_pdio_wait_range` is exercised: the fix changes only
//! fuse_direct_io's step (B) for writes, and on T2 and C step (A)
//! (filemap_write_and_wait_range, dio_flush_always) already waited for
//! the range's writeback just before it. These tests measure whether
//! (B)'s filemap_fdatawait_range ever blocks in the fix checks' workloads
//! and in one built so that it must (an mmap store redirtying a folio
//! between (A) and (B)), so a claim that the fix was exercised rests on
//! a state, not on the family run's "no new violation".

use super::config::*;
use super::model::*;
use super::program::Op;
use super::state::*;
use super::tests::{cfg, model, reachable};

/// A catalogue-like configuration with the fix on.
fn fix_cfg(kernel: Kernel, pages: u8, tasks: &[&str], threads: u8) -> Config {
    let mut c = cfg(pages, tasks);
    c.kernel = kernel;
    c.variant = Variant::base(kernel);
    c.variant.fix_pdio_wait_range = true;
    c.parallel_dio = true;
    c.writeback_cache = true;
    c.daemon_threads = threads;
    c
}

/// Is task `t` blocked at step (B)'s filemap_fdatawait_range (an FdataWait
/// not preceded by step (A)'s WritePages)?
fn blocked_at_b(m: &FuseModel, s: &State, t: usize) -> bool {
    let pc = s.tasks[t].pc as usize;
    let prog = &m.programs[t];
    matches!(prog.get(pc), Some(Op::FdataWait { .. }))
        && !matches!(
            pc.checked_sub(1).map(|i| prog[i]),
            Some(Op::WritePages { .. })
        )
        && m.exec_task(s, t).is_none()
        && !m.task_done(s, t)
}

/// Does some reachable state violate b2 (an older WRITE landed after a
/// direct one)?
fn b2_violated(m: &FuseModel) -> bool {
    reachable(m).iter().any(|s| s.viol & VIOL_B2 != 0)
}

/// How many reachable states have a task blocked at (B) with the fix.
fn states_blocked_at_b(m: &FuseModel) -> usize {
    reachable(m)
        .iter()
        .filter(|s| (0..s.tasks.len()).any(|t| blocked_at_b(m, s, t)))
        .count()
}

/// t2-pdio-wb-fix's workload (55-fixes.toml): on T2 every FOPEN_DIRECT_IO
/// write runs (A) first, which writes back and waits for the range; the
/// flusher's WRITE in flight is waited for there. (B)'s wait never
/// blocks: this check does not exercise the fix's wait, only its absence
/// of FUSE_NOWRITE.
#[test]
fn t2_pdio_wb_fix_never_blocks_at_b() {
    let m = model(fix_cfg(
        Kernel::T2,
        2,
        &["wb none", "dio-write 0+1", "dio-write 0+2"],
        2,
    ));
    assert_eq!(states_blocked_at_b(&m), 0);
}

/// On T (6.16, no dio_flush_always, no direct_io_allow_mmap) (A) is not
/// run and the same workload does block at (B): the fix's wait is reached
/// on T only.
#[test]
fn t_pdio_wb_fix_blocks_at_b() {
    let m = model(fix_cfg(
        Kernel::T,
        2,
        &["wb none", "dio-write 0+1", "dio-write 0+2"],
        2,
    ));
    assert!(states_blocked_at_b(&m) > 0);
}

/// The writers' programs with `drop(prog, b)` applied: `b` is the index of
/// step (B)'s FdataWait (not preceded by (A)'s WritePages).
fn with_programs(m: &FuseModel, edit: impl Fn(&mut Vec<Op>, usize)) -> FuseModel {
    let mut e = model(m.cfg.clone());
    for (t, prog) in e.programs.iter_mut().enumerate() {
        if !matches!(m.cfg.tasks[t], TaskSpec::DioWrite { .. }) {
            continue;
        }
        let b = (1..prog.len())
            .find(|&i| {
                matches!(prog[i], Op::FdataWait { .. })
                    && !matches!(prog[i - 1], Op::WritePages { .. })
            })
            .expect("the writer has step (B)");
        edit(prog, b);
    }
    e
}

/// What carries b2 in t-pdio-wb-fix (T): not (B). With the writers' (B)
/// removed (no fuse_sync_writes and no replacement) b2 still holds,
/// because step (C), invalidate_inode_pages2_range of a FOPEN_DIRECT_IO
/// write, folio_wait_writeback()s each cached folio of the range before
/// the direct WRITE is sent, and since 0c58a97f919c PG_writeback lasts
/// until the WRITE's reply. Removing (C) as well breaks b2: the flusher's
/// older WRITE lands after the direct one. So on 6.16+ a direct write's
/// (B) adds nothing to b2 in this workload; the fix's wait is a second
/// wait, and a fix that drops (B) outright is as good for b2 here.
#[test]
fn t_pdio_wb_b2_rests_on_the_invalidation_not_on_b() {
    let m = model(fix_cfg(
        Kernel::T,
        2,
        &["wb none", "dio-write 0+1", "dio-write 0+2"],
        2,
    ));
    assert!(!b2_violated(&m));
    let no_b = with_programs(&m, |prog, b| {
        prog.remove(b);
    });
    assert!(!b2_violated(&no_b), "(C) waits on the writeback");
    let no_bc = with_programs(&m, |prog, b| {
        prog.remove(b);
        assert!(matches!(prog[b], Op::Invalidate { .. }), "(C) follows (B)");
        prog.remove(b);
    });
    assert!(b2_violated(&no_bc));
}

/// On T2 the kernel reaches (B)'s wait when the range is redirtied after
/// (A) and its writeback starts before (B) (an mmap store and the
/// flusher between an exclusive direct writer's (A) and (B)). The model
/// does not: skip_empty decides an FdataWait with nothing under
/// writeback in the step that reaches it, so (B) is folded into (A)'s
/// last step. That is the kernel schedule in which (B) runs at once
/// (sound for the safety properties: every state after it is reachable
/// with the wait done), but no T2 or C state has a writer blocked at
/// (B): the fix's wait is exercised on T only (t-pdio-wb-fix). If this
/// starts failing, the model gained the window: re-measure the family.
#[test]
fn t2_b_is_folded_into_a_in_the_model() {
    let mut c = fix_cfg(Kernel::T2, 1, &["mmap 0", "wb none", "dio-write 0+1"], 1);
    c.parallel_dio = false;
    c.dirty = 0;
    let m = model(c);
    assert!(matches!(
        &m.programs[2][1..4],
        [
            Op::WritePages { .. },
            Op::FdataWait { .. },
            Op::FdataWait { .. }
        ]
    ));
    assert_eq!(states_blocked_at_b(&m), 0);
}
