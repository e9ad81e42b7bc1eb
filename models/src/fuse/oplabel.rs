//! Op labels and drops (issue 19): every op of a task program (program.rs)
//! is named `caller:callee` as the kernel calls it, e.g.
//! `fuse_fsync:filemap_fdatawait_range`, so a check can run without one
//! call (`drop = [...]` in the catalogue, `wbspec check --drop`).
//!
//! A label may name several ops of one program: the ops one kernel call
//! stands for (fuse_sync_writes: `SetNowrite` and its wait and release),
//! or the same call once per chunk of a split write. Dropping a label
//! removes them all and fixes up what the kernel pairs with them: a
//! dropped inode_lock drops its inode_unlock, a dropped fuse_set_nowrite
//! drops its wait and its release (in fuse_do_setattr the release is in
//! the SETATTR reply handler). The skip offsets of the conditional ops
//! are recomputed so that each still lands on the op it jumped to. Ops
//! whose removal would leave no kernel call to drop (the syscall's own
//! body, a request and its reply, where the model checks properties, a
//! return) are refused with the reason.
//!
//! Labels are computed from the built program, so program.rs stays the
//! one place that says what each task runs.

use super::config::{Config, TaskSpec};
use super::program::{Op, RecvKind};
use super::step::Tree;

/// One op's label and whether it can be dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpLabel {
    /// `caller:callee`.
    pub label: String,
    /// Why the op cannot be dropped (`None`: it can).
    pub refused: Option<&'static str>,
}

const BODY: &str = "it is the syscall's own work: drop the task instead";
const REQUEST: &str =
    "a request and its reply handler are where the model checks the task's outcome (d at FSYNC/FLUSH, b1 at a READ reply, the size at a WRITE or SETATTR reply): dropping one removes the check, not just the call";
const RETURN: &str = "the syscall's return (and unlock): drop the lock instead";
const GHOST: &str = "a ghost op (the checker's bookkeeping), not a kernel call";
const FOLIO_LOCK: &str =
    "the model runs the store's folio_unlock in the same step as the store: drop the page_mkwrite wait instead";
const SETATTR_UNLOCK: &str =
    "fuse_do_setattr's end (clear FUSE_I_SIZE_UNSTABLE, inode_unlock) is one step in the model; its inode_unlock cannot be dropped alone";
const MUTANT_WALK: &str =
    "the mutant mut_inval_skip_busy's walk in place of invalidate_inode_pages2_range: drop that op on the kernel's checks instead";
const NOTIFY_SERVER: &str =
    "the server's own change that the notification announces, not kernel code";
const UPDATE_ATTR: &str =
    "the post-reply code of a split request (where the model checks the size)";
const AIO: &str =
    "fuse_direct_IO's asynchronous bookkeeping (the blocking decision, the submitter's reference, the completion): the task's return, not a call that can go alone";

/// The caller of op `i` of `spec`'s program `prog`, as the narrations
/// name it.
fn caller(cfg: &Config, spec: &TaskSpec, prog: &[Op], i: usize) -> &'static str {
    let op = prog[i];
    let before = |f: &dyn Fn(&Op) -> bool| prog[..i].iter().any(f);
    let is_req = matches!(op, Op::Send(_) | Op::Recv(_));
    match *spec {
        TaskSpec::Write { .. } if cfg.writeback_cache => "fuse_cache_write_iter",
        TaskSpec::Write { .. } => match op {
            Op::InodeLock | Op::UnlockReturn { .. } => "fuse_cache_write_iter",
            Op::FdataWait { .. } | Op::BatchWait | Op::Send(_) | Op::Recv(_) => {
                "fuse_send_write_pages"
            }
            _ => "fuse_perform_write",
        },
        TaskSpec::Mmap { .. } | TaskSpec::Gup { .. } => match op {
            Op::GupRedirty { .. } => "gup",
            _ => "fuse_page_mkwrite",
        },
        TaskSpec::Fault { .. } => "filemap_fault",
        TaskSpec::EnvAccess { .. } => match op {
            Op::Entry | Op::PrivateFault { .. } => "filemap_fault",
            _ => "fuse_page_mkwrite",
        },
        TaskSpec::Stat => match op {
            Op::Send(_) | Op::Recv(_) => "fuse_do_getattr",
            Op::UnlockReturn { .. } => "fuse_update_attributes",
            _ => "fuse_change_attributes",
        },
        TaskSpec::RemoteTruncate { .. } => "server",
        TaskSpec::NotifyInval { .. } => match op {
            Op::Notify(super::notify::NotifyOp::ServerWrite { .. }) => "server",
            _ => "fuse_reverse_inval_inode",
        },
        TaskSpec::NotifyStore { .. } => match op {
            Op::Notify(super::notify::NotifyOp::ServerWrite { .. }) => "server",
            _ => "fuse_notify_store",
        },
        TaskSpec::DioMmap { .. } => match op {
            Op::Invalidate { .. } | Op::CachedIoStart => "fuse_file_mmap",
            _ => "fuse_page_mkwrite",
        },
        TaskSpec::Open { trunc: true, .. } if cfg.atomic_o_trunc => {
            // fuse_open takes its own inode_lock only with writeback_cache
            // (is_wb_truncate); the next one is do_truncate's
            // (handle_truncate)
            let own = cfg.writeback_cache as usize;
            let locks = prog[..=i].iter().filter(|o| **o == Op::InodeLock).count();
            if locks <= own {
                match op {
                    Op::CachedIoStart => "fuse_finish_open",
                    _ => "fuse_open",
                }
            } else {
                match op {
                    Op::InodeLock | Op::UnlockReturn { .. } => "do_truncate",
                    _ => setattr_caller(op),
                }
            }
        }
        TaskSpec::Open { .. } if before(&|o| matches!(o, Op::Recv(_))) && !is_req => match op {
            Op::CachedIoStart => "fuse_finish_open",
            Op::Invalidate {
                if_resized: false, ..
            } => "fuse_open",
            Op::UnlockReturn { .. } => "fuse_open",
            _ => setattr_caller(op),
        },
        TaskSpec::Open { .. } if is_req && before(&|o| matches!(o, Op::Recv(_))) => {
            "fuse_do_setattr"
        }
        TaskSpec::Open { .. } => "fuse_open",
        TaskSpec::Truncate { .. } => setattr_caller(op),
        TaskSpec::Punch { .. } => match op {
            Op::WritePages { .. }
            | Op::FdataWait { .. }
            | Op::SetNowrite
            | Op::SyncWritesWait { .. } => "fuse_writeback_range",
            _ => "fuse_file_fallocate",
        },
        TaskSpec::Fsync | TaskSpec::Msync { .. } => "fuse_fsync",
        TaskSpec::Read { .. } => match op {
            // auto_inval_data: fuse_cache_read_iter →
            // fuse_update_attributes before filemap_read
            Op::Send(_) | Op::Recv(_) => "fuse_do_getattr",
            Op::IfAttrValid { .. } => "fuse_update_get_attr",
            Op::TruncatePagecache | Op::Invalidate { .. } => "fuse_change_attributes",
            _ => "fuse_file_read_iter",
        },
        TaskSpec::Munmap => "fuse_vma_close",
        TaskSpec::SyncRange { .. } => "sync_file_range",
        TaskSpec::Writeback { .. } => "writeback",
        TaskSpec::Close | TaskSpec::CloseRelease => {
            // after FLUSH's reply: fuse_release
            if before(&|o| *o == Op::Recv(RecvKind::Plain)) && !is_req {
                "fuse_release"
            } else {
                "fuse_flush"
            }
        }
        _ if matches!(op, Op::AioStart | Op::AioQueued { .. } | Op::AioComplete) => {
            "fuse_direct_IO"
        }
        TaskSpec::DioWrite { .. } => match op {
            Op::DioLock | Op::InodeLock | Op::UnlockReturn { .. } => "fuse_direct_write_iter",
            // (E): after the requests
            Op::Invalidate { .. } if before(&|o| matches!(o, Op::Recv(_) | Op::AioComplete)) => {
                "fuse_direct_write_iter"
            }
            _ => "fuse_direct_io",
        },
        TaskSpec::DioRead { .. } => match op {
            Op::Entry | Op::UnlockReturn { .. } => "fuse_direct_read_iter",
            Op::IfReadPastEof { .. } => "fuse_direct_IO",
            _ => "fuse_direct_io",
        },
        TaskSpec::OdirectWrite { .. } => match op {
            Op::InodeLock | Op::UnlockReturn { .. } => "generic_file_write_iter",
            Op::Invalidate { .. } if before(&|o| matches!(o, Op::Recv(_) | Op::AioComplete)) => {
                "kiocb_invalidate_post_direct_write"
            }
            Op::WritePages { .. } | Op::FdataWait { .. } | Op::Invalidate { .. } => {
                "kiocb_invalidate_pages"
            }
            _ => "fuse_direct_io",
        },
        TaskSpec::OdirectRead { .. } => match op {
            Op::Entry | Op::UnlockReturn { .. } => "generic_file_read_iter",
            Op::WritePages { .. } | Op::FdataWait { .. } => "kiocb_write_and_wait",
            Op::IfReadPastEof { .. } => "fuse_direct_IO",
            _ => "fuse_direct_io",
        },
        TaskSpec::Readahead { .. } => "page_cache_ra_order",
        #[allow(unreachable_patterns)]
        _ => spec.short(),
    }
}

/// The caller of an op of fuse_do_setattr(ATTR_SIZE) under do_truncate.
fn setattr_caller(op: Op) -> &'static str {
    match op {
        Op::InodeLock | Op::SetattrReturn => "do_truncate",
        _ => "fuse_do_setattr",
    }
}

/// The callee op `i` stands for, and why it cannot be dropped.
fn callee(
    cfg: &Config,
    spec: &TaskSpec,
    prog: &[Op],
    i: usize,
) -> (&'static str, Option<&'static str>) {
    let tree = cfg.tree();
    let l = tree == Tree::V615;
    // the body of a task whose program is that one op
    let body = |name| (name, Some(BODY));
    match prog[i] {
        Op::Entry => ("entry", Some(GHOST)),
        Op::InodeLock => ("inode_lock", None),
        Op::DioLock => ("fuse_dio_lock", None),
        Op::PrivateFault { .. } => body("filemap_fault"),
        Op::UnlockReturn { unlock: true } => ("inode_unlock", Some(RETURN)),
        Op::UnlockReturn { unlock: false } => ("return", Some(RETURN)),
        Op::CopyPages { .. } if tree.iomap_writeback() => body("iomap_write_iter"),
        Op::CopyPages { .. } => body("generic_perform_write"),
        Op::FillPages { .. } | Op::FillUnits { .. } => body("fuse_fill_write_pages"),
        Op::BatchWait => ("folio_wait_writeback", None),
        Op::MkwriteFault { .. } => ("folio_lock", Some(FOLIO_LOCK)),
        Op::MkwriteWait { .. } if l => ("fuse_wait_on_folio_writeback", None),
        Op::MkwriteWait { .. } => ("folio_wait_writeback", None),
        Op::MkwriteStore { .. } => body("folio_mark_dirty"),
        Op::GupRedirty { .. } => body("unpin_user_pages_dirty_lock"),
        Op::WritePages { .. } if prog.len() == 1 => body("filemap_fdatawrite_range"),
        Op::WritePages { .. } => ("filemap_fdatawrite_range", None),
        Op::FdataWait { .. } => ("filemap_fdatawait_range", None),
        // fuse_sync_writes: fuse_set_nowrite then fuse_release_nowrite
        Op::SetNowrite if matches!(prog.get(i + 1), Some(Op::SyncWritesWait { .. })) => {
            ("fuse_sync_writes", None)
        }
        Op::SetNowrite | Op::WaitNowrite | Op::ReleaseNowrite => ("fuse_set_nowrite", None),
        Op::LockSetNowrite | Op::SyncWritesWait { .. } => ("fuse_sync_writes", None),
        Op::IfRangeHasWriteback { .. } if cfg.variant.temp_pages => {
            ("fuse_range_is_writeback", None)
        }
        Op::IfRangeHasWriteback { .. } => ("filemap_range_has_writeback", None),
        Op::Send(_) | Op::Recv(_) => ("fuse_simple_request", Some(REQUEST)),
        Op::TruncatePagecache => ("truncate_pagecache", None),
        // fuse_open's truncate_pagecache(inode, 0) without inode_lock
        // (write-through): the model truncates a fixed range from 0
        Op::TruncateRange { .. } if matches!(spec, TaskSpec::Open { .. }) => {
            ("truncate_pagecache", None)
        }
        Op::TruncateRange { .. } => ("truncate_pagecache_range", None),
        Op::Invalidate { .. }
            if matches!(
                spec,
                TaskSpec::DioWrite { .. }
                    | TaskSpec::OdirectWrite { .. }
                    | TaskSpec::NotifyInval { .. }
            ) =>
        {
            ("invalidate_inode_pages2_range", None)
        }
        Op::Invalidate { .. } => ("invalidate_inode_pages2", None),
        Op::SetattrReturn => ("inode_unlock", Some(SETATTR_UNLOCK)),
        Op::BufRead { .. } => body("filemap_read"),
        Op::IfReadPastEof { .. } => ("i_size_read", None),
        Op::IfAttrValid { .. } => ("time_before64", None),
        Op::CachedIoStart => ("fuse_file_cached_io_open", None),
        Op::OpenTruncSize => ("i_size_write", None),
        Op::CheckWbErr { close: true, .. } => ("filemap_check_errors", None),
        Op::CheckWbErr { close: false, .. } => ("file_check_and_advance_wb_err", None),
        Op::RemoteTruncate => body("truncate"),
        Op::IoRelease => ("fuse_file_io_release", None),
        Op::DirectWriteDone | Op::ThroughWriteDone => ("fuse_write_update_attr", Some(UPDATE_ATTR)),
        Op::Readahead { .. } if tree.iomap_reads() => body("iomap_readahead"),
        Op::Readahead { .. } => body("fuse_readahead"),
        // the transport tasks (transport.rs): the kernel function each
        // one's step runs
        Op::Abort { timeout: false } => body("fuse_abort_conn"),
        Op::Abort { timeout: true } => body("fuse_check_timeout"),
        Op::Signal { .. } => body("request_wait_answer"),
        // asynchronous direct I/O (aio.rs)
        Op::AioStart => ("i_size_read", Some(AIO)),
        Op::AioQueued { .. } => ("fuse_aio_complete", Some(AIO)),
        Op::AioComplete => ("fuse_aio_complete", Some(AIO)),
        // the notification tasks (notify.rs)
        Op::Notify(super::notify::NotifyOp::ServerWrite { .. }) => ("write", Some(NOTIFY_SERVER)),
        Op::Notify(super::notify::NotifyOp::InvalAttr) => ("fuse_invalidate_attr", None),
        Op::Notify(super::notify::NotifyOp::InvalSkipBusy { .. }) => {
            ("invalidate_mapping_pages", Some(MUTANT_WALK))
        }
        Op::Notify(super::notify::NotifyOp::StoreSize { .. }) => ("fuse_write_update_attr", None),
        Op::Notify(super::notify::NotifyOp::StorePages { .. }) => ("fuse_copy_folio", Some(BODY)),
        Op::Notify(super::notify::NotifyOp::Return { .. }) => ("return", Some(RETURN)),
        #[allow(unreachable_patterns)]
        _ => ("op", Some(BODY)),
    }
}

/// The label of every op of `spec`'s program `prog` under `cfg`.
pub fn labels(cfg: &Config, spec: &TaskSpec, prog: &[Op]) -> Vec<OpLabel> {
    (0..prog.len())
        .map(|i| {
            let (f, refused) = callee(cfg, spec, prog, i);
            OpLabel {
                label: format!("{}:{f}", caller(cfg, spec, prog, i)),
                refused,
            }
        })
        .collect()
}

/// Does op `o` release the inode lock (exclusive or shared)?
fn unlocks(o: &Op) -> bool {
    matches!(o, Op::UnlockReturn { unlock: true } | Op::SetattrReturn)
}

/// `prog` without the ops labelled by `drops`, with their pairs fixed up
/// and every skip offset recomputed; an error names the first op that
/// cannot be dropped and why.
pub fn apply(
    cfg: &Config,
    spec: &TaskSpec,
    prog: &[Op],
    drops: &[String],
) -> Result<Vec<Op>, String> {
    let labels = labels(cfg, spec, prog);
    let mut out: Vec<Option<Op>> = prog.iter().copied().map(Some).collect();
    let mut gone = vec![false; prog.len()];
    for (i, l) in labels.iter().enumerate() {
        if !drops.contains(&l.label) {
            continue;
        }
        if let Some(why) = l.refused {
            return Err(format!("cannot drop {} ({}): {why}", l.label, spec.short()));
        }
        gone[i] = true;
    }
    if !gone.iter().any(|g| *g) {
        return Ok(prog.to_vec());
    }
    for i in 0..prog.len() {
        if !gone[i] {
            continue;
        }
        match prog[i] {
            Op::InodeLock | Op::DioLock => {
                // its inode_unlock goes with it: the first unlock after it
                let j = (i + 1..prog.len())
                    .find(|&j| unlocks(&prog[j]))
                    .ok_or_else(|| {
                        format!("cannot drop {}: no inode_unlock after it", labels[i].label)
                    })?;
                if prog[j] == Op::SetattrReturn {
                    return Err(format!("cannot drop {}: {SETATTR_UNLOCK}", labels[i].label));
                }
                if j + 1 == prog.len() {
                    // the return stays
                    out[j] = Some(Op::UnlockReturn { unlock: false });
                } else {
                    gone[j] = true;
                }
                if i == 0 {
                    // the syscall's entry stays (the write's window opens
                    // there: ghost.rs)
                    out[i] = Some(Op::Entry);
                    gone[i] = false;
                }
            }
            Op::SetNowrite | Op::WaitNowrite => {
                // fuse_do_setattr's release is in the SETATTR reply
                for o in out.iter_mut().skip(i) {
                    if let Some(Op::Recv(RecvKind::Setattr { release: true })) = o {
                        *o = Some(Op::Recv(RecvKind::Setattr { release: false }));
                    }
                }
            }
            _ => {}
        }
    }
    // new index of every old index (the first kept op at or after it)
    let mut kept_before = vec![0usize; prog.len() + 1];
    for i in 0..prog.len() {
        kept_before[i + 1] = kept_before[i] + usize::from(!gone[i]);
    }
    let reskip = |i: usize, skip: u8| -> Result<u8, String> {
        let target = (i + 1 + skip as usize).min(prog.len());
        u8::try_from(kept_before[target] - kept_before[i + 1]).map_err(|e| e.to_string())
    };
    let mut res = Vec::new();
    for i in 0..prog.len() {
        if gone[i] {
            continue;
        }
        let op = out[i].expect("kept");
        res.push(match op {
            Op::IfRangeHasWriteback { first, n, skip } => Op::IfRangeHasWriteback {
                first,
                n,
                skip: reskip(i, skip)?,
            },
            Op::CheckWbErr { close, skip } => Op::CheckWbErr {
                close,
                skip: reskip(i, skip)?,
            },
            Op::IfAttrValid { skip } => Op::IfAttrValid {
                skip: reskip(i, skip)?,
            },
            Op::Recv(RecvKind::DirectChunk { skip }) => Op::Recv(RecvKind::DirectChunk {
                skip: reskip(i, skip)?,
            }),
            Op::Recv(RecvKind::ThroughChunk { skip }) => Op::Recv(RecvKind::ThroughChunk {
                skip: reskip(i, skip)?,
            }),
            o => o,
        });
    }
    well_formed(&res)
        .map_err(|e| format!("dropping {} leaves {}: {e}", drops.join(", "), spec.short()))?;
    Ok(res)
}

/// What the model's steps assume of a program: some kernel op, every
/// reply right after its request, every lock released.
fn well_formed(p: &[Op]) -> Result<(), String> {
    if p.iter().all(|o| *o == Op::Entry) {
        return Err("no kernel call".into());
    }
    for (i, o) in p.iter().enumerate() {
        if matches!(o, Op::Recv(_)) && !matches!(i.checked_sub(1).map(|j| p[j]), Some(Op::Send(_)))
        {
            return Err(format!("a reply without its request at op {i}"));
        }
    }
    let locks = p
        .iter()
        .filter(|o| matches!(o, Op::InodeLock | Op::DioLock | Op::LockSetNowrite))
        .count();
    let unl = p
        .iter()
        .filter(|o| unlocks(o) || **o == Op::SyncWritesWait { unlock: true })
        .count();
    if locks != unl {
        return Err(format!("{locks} lock(s) and {unl} unlock(s)"));
    }
    Ok(())
}

/// Every label of the configuration's programs that names no op: the
/// error of a `drop` that matches nothing, with the close matches.
pub fn check_drops(cfg: &Config) -> Result<(), String> {
    if cfg.drop.is_empty() {
        return Ok(());
    }
    let all: Vec<String> = cfg
        .tasks
        .iter()
        .flat_map(|t| {
            let p = super::program::build(cfg, t);
            labels(cfg, t, &p).into_iter().map(|l| l.label)
        })
        .collect();
    for d in &cfg.drop {
        if !all.contains(d) {
            let close = close_matches(d, &all);
            return Err(if close.is_empty() {
                format!(
                    "drop: '{d}' names no op of this check's programs (`wbspec ops` lists them)"
                )
            } else {
                format!(
                    "drop: '{d}' names no op of this check's programs; close matches: {}",
                    close.join(", ")
                )
            });
        }
    }
    Ok(())
}

/// Labels close to `want`: the same callee or caller, or a small edit
/// distance; at most five, closest first.
pub fn close_matches(want: &str, all: &[String]) -> Vec<String> {
    let (wc, wf) = want.split_once(':').unwrap_or(("", want));
    let mut scored: Vec<(usize, &String)> = all
        .iter()
        .filter_map(|l| {
            let (c, f) = l.split_once(':').unwrap_or(("", l));
            let d = edit_distance(want, l);
            let score = if f == wf || c == wc {
                d.min(want.len() / 2)
            } else {
                d
            };
            (score <= want.len().max(8) / 3 || f == wf || c == wc).then_some((score, l))
        })
        .collect();
    scored.sort();
    let mut v: Vec<String> = Vec::new();
    for (_, l) in scored {
        if !v.contains(l) {
            v.push(l.clone());
        }
    }
    v.truncate(5);
    v
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuse::config::Kernel;
    use crate::fuse::program::{build, SendKind};
    use crate::fuse::tests::cfg;

    fn drop1(c: &Config, t: usize, label: &str) -> Result<Vec<Op>, String> {
        let spec = c.tasks[t];
        apply(c, &spec, &build(c, &spec), &[label.to_string()])
    }

    fn has(p: &[Op], f: impl Fn(&Op) -> bool) -> bool {
        p.iter().any(f)
    }

    /// fuse_do_setattr's fuse_set_nowrite goes with its wait and with the
    /// release in the SETATTR reply (or its own release in the mutant
    /// that invalidates under NOWRITE).
    #[test]
    fn a_dropped_set_nowrite_takes_its_wait_and_release() {
        let c = cfg(2, &["wb none", "truncate 1"]);
        let p = drop1(&c, 1, "fuse_do_setattr:fuse_set_nowrite").unwrap();
        assert!(!has(&p, |o| matches!(
            o,
            Op::SetNowrite | Op::WaitNowrite | Op::ReleaseNowrite
        )));
        assert!(p.contains(&Op::Recv(RecvKind::Setattr { release: false })));
        assert_eq!(p.len(), build(&c, &c.tasks[1]).len() - 2);
        let mut m = cfg(2, &["wb none", "truncate 1"]);
        m.variant.mut_invalidate_under_nowrite = true;
        let before = build(&m, &m.tasks[1]);
        assert!(before.contains(&Op::ReleaseNowrite));
        let p = drop1(&m, 1, "fuse_do_setattr:fuse_set_nowrite").unwrap();
        assert_eq!(p.len(), before.len() - 3);
        assert!(!has(&p, |o| *o == Op::ReleaseNowrite));
        // the dropped model builds and runs
        let mut d = c.clone();
        d.drop = vec!["fuse_do_setattr:fuse_set_nowrite".into()];
        let fm = crate::fuse::FuseModel::new(d).unwrap();
        assert_eq!(
            fm.programs[1],
            drop1(&c, 1, "fuse_do_setattr:fuse_set_nowrite").unwrap()
        );
    }

    /// A dropped inode_lock takes its inode_unlock: the return stays
    /// (without the unlock), and a lock that opened the syscall becomes
    /// its ghost entry.
    #[test]
    fn a_dropped_inode_lock_takes_its_unlock() {
        let c = cfg(2, &["fsync", "write 0+1"]);
        let before = build(&c, &c.tasks[0]);
        let p = drop1(&c, 0, "fuse_fsync:inode_lock").unwrap();
        assert_eq!(p.len(), before.len() - 1);
        assert!(!has(&p, |o| *o == Op::InodeLock));
        assert_eq!(p.last(), Some(&Op::UnlockReturn { unlock: false }));
        // the error check still skips exactly the FSYNC request
        let i = p
            .iter()
            .position(|o| matches!(o, Op::CheckWbErr { .. }))
            .unwrap();
        assert_eq!(
            p[i],
            Op::CheckWbErr {
                close: false,
                skip: 2
            }
        );
        assert_eq!(p[i + 1], Op::Send(SendKind::Fsync));
        let w = drop1(&c, 1, "fuse_cache_write_iter:inode_lock").unwrap();
        assert_eq!(w[0], Op::Entry);
        assert_eq!(w.last(), Some(&Op::UnlockReturn { unlock: false }));
        assert!(well_formed(&w).is_ok());
    }

    /// The skip offsets land on the same op after a drop: the per-chunk
    /// wait of a split write-through write, and fuse_direct_io's
    /// conditional fuse_sync_writes.
    #[test]
    fn skips_are_recomputed_after_a_drop() {
        let mut c = cfg(3, &["write 0+3"]);
        c.writeback_cache = false;
        c.max_write = Some(1);
        c.validate().unwrap();
        let before = build(&c, &c.tasks[0]);
        let skips = |p: &[Op]| -> Vec<u8> {
            p.iter()
                .filter_map(|o| match o {
                    Op::Recv(RecvKind::ThroughChunk { skip }) => Some(*skip),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(skips(&before), vec![8, 4, 0]);
        let p = drop1(&c, 0, "fuse_send_write_pages:filemap_fdatawait_range").unwrap();
        assert_eq!(skips(&p), vec![6, 3, 0]);
        // each skip still ends on fuse_write_update_attr
        for (i, o) in p.iter().enumerate() {
            if let Op::Recv(RecvKind::ThroughChunk { skip }) = o {
                assert_eq!(p[i + 1 + *skip as usize], Op::ThroughWriteDone);
            }
        }
        let d = cfg(2, &["wb none", "dio-write 0+2"]);
        let q = drop1(&d, 1, "fuse_direct_io:fuse_sync_writes").unwrap();
        let i = q
            .iter()
            .position(|o| matches!(o, Op::IfRangeHasWriteback { .. }))
            .unwrap();
        assert_eq!(
            q[i],
            Op::IfRangeHasWriteback {
                first: 0,
                n: 2,
                skip: 0
            }
        );
        // without the test, fuse_sync_writes runs every time
        let r = drop1(&d, 1, "fuse_direct_io:filemap_range_has_writeback").unwrap();
        assert!(!has(&r, |o| matches!(o, Op::IfRangeHasWriteback { .. })));
        assert!(has(&r, |o| *o == Op::SetNowrite));
    }

    /// What cannot be dropped says why; a label that names nothing lists
    /// the close matches.
    #[test]
    fn refusals_give_the_reason() {
        let c = cfg(2, &["wb none", "truncate 1"]);
        let e = drop1(&c, 1, "do_truncate:inode_lock").unwrap_err();
        assert!(e.contains("one step in the model"), "{e}");
        let e = drop1(&c, 1, "fuse_do_setattr:fuse_simple_request").unwrap_err();
        assert!(e.contains("request and its reply"), "{e}");
        let e = drop1(&c, 0, "writeback:filemap_fdatawrite_range").unwrap_err();
        assert!(e.contains("syscall's own work"), "{e}");
        let mut d = c.clone();
        d.drop = vec!["fuse_do_setattr:fuse_sync_writes".into()];
        let e = d.validate().unwrap_err();
        assert!(
            e.contains("close matches: fuse_do_setattr:fuse_set_nowrite"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }

    /// Every program of every task form, undropped, is well-formed, and
    /// every op has a `caller:callee` label.
    #[test]
    fn every_program_is_well_formed_and_labelled() {
        for k in [Kernel::L, Kernel::T, Kernel::T2, Kernel::C] {
            for form in crate::fuse::config::TASK_SYNTAX {
                for t in crate::spec::task_syntax_instances(form) {
                    let mut c = cfg(2, &["wb none"]);
                    c.kernel = k;
                    c.variant = crate::fuse::config::Variant::base(k);
                    let Ok(spec) = TaskSpec::parse(&t) else {
                        continue;
                    };
                    c.tasks = vec![spec];
                    if c.validate().is_err() {
                        continue;
                    }
                    let p = build(&c, &spec);
                    well_formed(&p).unwrap_or_else(|e| panic!("{t} on {k:?}: {e}"));
                    for l in labels(&c, &spec, &p) {
                        let (a, b) = l.label.split_once(':').expect("caller:callee");
                        assert!(!a.is_empty() && !b.is_empty(), "{t}: {}", l.label);
                        // a kernel function, not the fallback's "op"
                        assert_ne!(b, "op", "{t} on {k:?}: {}", l.label);
                    }
                }
            }
        }
    }
}
