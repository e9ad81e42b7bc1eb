//! Trace conformance (trace validation, Cirstea, Kuppe, Loillier and Merz
//! 2024): is a trace recorded from the real kernel a behaviour of the wbspec
//! FUSE model?
//!
//! Two parts:
//! 1. [`translate`] (translate.rs) maps a recorded trace onto the model: a model [`Config`]
//!    (kernel state, pages, daemon threads, `max_pages`, one `TaskSpec` per
//!    modelled syscall) and the sequence of model-observable events ([`Obs`]):
//!    syscall issued / returned (marks), request read by the server, reply
//!    written. Requests and syscalls the model does not have are dropped by
//!    explicit, listed rules ([`FILTERED_OPS`], [`FILTERED_SYSCALLS`]); traces
//!    the model cannot express are reported as not modelled, with the reason.
//! 2. [`check`] (search.rs) searches the model for a behaviour producing exactly that
//!    observation sequence: the set of model states consistent with the prefix
//!    is kept; steps that are not observable (kernel task steps of started
//!    tasks, `fuse_writepage_end`) are free; the daemon's reads and replies
//!    must match the next observed event. The result is `conforms`, the first
//!    event the model cannot produce (with the states still possible), or
//!    `inconclusive` if the state bound is hit.
//!
//! A trace of several files is first split into one trace per file
//! (project.rs), each checked as above, when the files' shared
//! connection cannot make the kernel decide otherwise than the one-inode
//! model.
//!
//! docs/conformance.md explains the mapping and its abstractions.
use std::collections::BTreeMap;
use std::fmt;

use wbspec_models::fuse::Config;

use crate::trace::Event;

const PG: u64 = 4096;
/// Model limits (models/src/fuse/config/mod.rs).
const MODEL_PAGES: usize = wbspec_models::fuse::config::MAX_PAGES;
const MODEL_WORKERS: usize = wbspec_models::fuse::config::MAX_WORKERS;
const MODEL_TASKS: usize = wbspec_models::fuse::config::MAX_TASKS;
/// Default bound on the model states possible at one event (the
/// closure the search holds; search.rs).
pub const DEFAULT_BOUND: usize = 2_000_000;

/// Requests the model does not have, dropped with their replies.
pub const FILTERED_OPS: &[(&str, &str)] = &[
    (
        "LOOKUP",
        "name lookup: the model has one inode and no directory",
    ),
    (
        "CREATE",
        "file creation by the first open() (setup; init_size 0); a CREATE elsewhere is not modelled",
    ),
    (
        "RELEASE",
        "sent by the last fuse_file_put (after close() or munmap returned, never before a WRITE carrying its fh is answered); the model has no file handles (docs/model.md)",
    ),
    (
        "GETXATTR",
        "security.capability lookup of file_remove_privs on the first write",
    ),
    ("GETATTR", "attributes other than size are not modelled"),
    ("FORGET", "inode lifetime is not modelled"),
    ("ACCESS", "permissions are not modelled"),
    ("STATFS", "not modelled"),
    ("READDIR", "not modelled"),
    ("OPENDIR", "not modelled"),
    ("RELEASEDIR", "not modelled"),
    (
        "FSYNCDIR",
        "fsync of the root directory (fuse_dir_fsync): no file's pages",
    ),
    (
        "UNLINK",
        "the request of an unlink the syscall rules filter (a failed one, or one of a closed, unmapped file); an unlink syscall no rule filters is not modelled",
    ),
    (
        "FALLOCATE",
        "the request of a failed fallocate the syscall rules filter (no page touched, no size changed); a fallocate no rule filters is not modelled",
    ),
    (
        "SETATTR(times)",
        "a SETATTR without a size (cmtime flush of fsync/close/writeback)",
    ),
    (
        "INTERRUPT",
        "FUSE_INTERRUPT, queued by the signal task's step (request_wait_answer: queue_interrupt once the daemon read the request); the model's daemon has no step for reading it, and fuser's -ENOSYS answer only sets fc->no_interrupt",
    ),
    (
        "reply after the abort",
        "the daemon's reply to a request the abort ended (fuse_abort_conn: -ECONNABORTED): fuse_dev_do_write finds no such request and drops it; the model's daemon applies nothing after the abort",
    ),
    (
        project::NOT_THIS_FILE,
        "in one file's projection of a trace of several files: a request for another file, or a LOOKUP of a name no syscall names (docs/conformance.md, Several files)",
    ),
];

/// Syscalls that have no model task and no effect the model tracks.
pub const FILTERED_SYSCALLS: &[(&str, &str)] = &[
    ("open (setup)", "the scenario's first open, which creates the file (LOOKUP, CREATE): every trace starts from a new empty file; later opens are open tasks"),
    ("mmap", "sets up the mapping only; the store is the modelled event"),
    ("msync_async", "msync(MS_ASYNC) starts no I/O: mm/msync.c calls vfs_fsync_range for MS_SYNC only"),
    ("stat", "a LOOKUP of another name (used to stall the server)"),
    ("statx_cached", "statx answered from the inode's cached attributes: no request"),
    (
        "on the root directory",
        "opendir, fchdir, close, fsync/fdatasync and the stat family on the mount's root (path=.): OPENDIR, ACCESS (fuse_permission), RELEASEDIR, FSYNCDIR (fuse_dir_fsync) and GETATTR on nodeid 1; the root has no page cache and is not the model's inode",
    ),
    (
        "fadvise64 RANDOM/NORMAL",
        "generic_fadvise sets (RANDOM) or clears (NORMAL) FMODE_RANDOM on the open file: no request, no page; the buffered reads of that open after it are `read ... random` (force_page_cache_ra); a read of the same open running at the same time is not modelled",
    ),
    (
        "fallocate (failed, no page touched)",
        "a fallocate that returned an error and whose mode has neither PUNCH_HOLE nor ZERO_RANGE (or that fc->no_fallocate or an unknown mode ended before the inode lock): fuse_file_fallocate changes i_size and drops pages only after a successful FALLOCATE, and writes back only for those modes; the inode lock it holds and the wait for writeback in flight of its fuse_flush_time_update are not modelled (more permissive)",
    ),
    (
        "failed mkdir/unlink",
        "a mkdir or unlink that returned an error: a LOOKUP that found nothing (ENOENT), or none (EEXIST from the dcache); no file's state changed",
    ),
    (
        "open of no file (ENOENT)",
        "an open without O_CREAT that failed with ENOENT: its LOOKUP found no such name, no OPEN was sent, no fd exists",
    ),
    (
        "unlink (closed, unmapped file)",
        "ends the file's projection: no fd is open and no mapping is live, and every close ran fuse_flush's write_inode_now(inode, 1), so no dirty page is left; the name's next CREATE is a new file (its own projection, docs/conformance.md, Several files). An unlink of an open or mapped file is not modelled",
    ),
    (
        "stat/access (writeback_cache)",
        "newfstatat, statx, lstat, fstat, access, faccessat: a GETATTR, LOOKUP or ACCESS. With writeback_cache, fuse_change_attributes_i takes size and mtime from the inode, not the reply (fuse_get_cache_mask: STATX_SIZE | STATX_MTIME), so the reply neither truncates the page cache nor invalidates it (no FUSE_AUTO_INVAL_DATA either: the recording server does not ask for it). Without writeback_cache it is not modelled",
    ),
    (
        "fcntl F_GETFD/F_SETFD/F_GETFL",
        "the fd's close-on-exec flag or its status flags read: the fd table only, no request (F_SETFL, which can set O_DIRECT, is not modelled)",
    ),
    (
        "fcntl lock (no FUSE_POSIX_LOCKS)",
        "F_GETLK/F_SETLK/F_SETLKW and the OFD forms when the server did not ask for FUSE_POSIX_LOCKS (fc->no_lock, fs/fuse/inode.c process_init_reply): fuse_file_lock calls posix_test_lock or posix_lock_file, local lock lists only, no request and no page-cache effect. With POSIX locks negotiated it is not modelled",
    ),
];

// ---------------------------------------------------------------- observations

/// A data identity in a request's payload or a read's data. In a
/// [`Mapping`] from [`translate`] it names who wrote the bytes: [`ID_ZERO`]
/// for zeros, `task + 2` for model task `task` (the global task index of
/// the trace); the search turns each into the model data version that
/// task's slot uses when the event is matched (search.rs). Within a
/// trace of at most `MAX_TASKS` syscalls the two are the same numbers.
pub type Id = u32;
/// Zeros (a hole, or past a truncation): the model's `V_ZERO`.
pub const ID_ZERO: Id = 0;

/// The data id of what task `t` writes.
pub fn id_of(t: usize) -> Id {
    t as Id + 2
}

/// A model request as observed at the server (model pages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pat {
    /// WRITE with FUSE_WRITE_CACHE; `payload[i]` = allowed versions of page first+i.
    CacheWrite {
        first: u8,
        n: u8,
        payload: Vec<Vec<Id>>,
    },
    /// WRITE without FUSE_WRITE_CACHE (direct).
    DirectWrite {
        first: u8,
        n: u8,
        payload: Vec<Vec<Id>>,
    },
    /// WRITE without FUSE_WRITE_CACHE of a write(2) on a mount without
    /// writeback_cache (fuse_perform_write).
    ThroughWrite {
        first: u8,
        n: u8,
        payload: Vec<Vec<Id>>,
    },
    Read {
        first: u8,
        n: u8,
    },
    Setattr {
        size: u8,
    },
    Fsync,
    Flush,
    /// OPEN of open task `task`; `trunc`: O_TRUNC in its flags (sent only
    /// with atomic_o_trunc).
    Open {
        task: usize,
        trunc: bool,
    },
}

impl fmt::Display for Pat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pr = |a: u8, n: u8| {
            if n == 1 {
                format!("p{a}")
            } else {
                // (a range is never empty; never wrap if it were)
                format!("p{}-{}", a, (a as usize + n as usize).saturating_sub(1))
            }
        };
        let pl = |p: &Vec<Vec<Id>>| {
            p.iter()
                .map(|v| {
                    v.iter()
                        .map(|x| format!("v{x}"))
                        .collect::<Vec<_>>()
                        .join("|")
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        match self {
            Pat::CacheWrite { first, n, payload } => {
                write!(
                    f,
                    "WRITE[CACHE]({}) payload [{}]",
                    pr(*first, *n),
                    pl(payload)
                )
            }
            Pat::DirectWrite { first, n, payload } => {
                write!(
                    f,
                    "WRITE[direct]({}) payload [{}]",
                    pr(*first, *n),
                    pl(payload)
                )
            }
            Pat::ThroughWrite { first, n, payload } => {
                write!(
                    f,
                    "WRITE[through]({}) payload [{}]",
                    pr(*first, *n),
                    pl(payload)
                )
            }
            Pat::Read { first, n } => write!(f, "READ({})", pr(*first, *n)),
            Pat::Setattr { size } => write!(f, "SETATTR(size={size}p)"),
            Pat::Fsync => write!(f, "FSYNC"),
            Pat::Flush => write!(f, "FLUSH"),
            Pat::Open { task, trunc } => {
                write!(f, "OPEN({}T{task})", if *trunc { "O_TRUNC " } else { "" })
            }
        }
    }
}

/// One model-observable event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Obs {
    /// Model task `t` may start (its syscall was issued).
    Call(usize),
    /// Model task `t` has returned.
    Ret(usize),
    /// Aio task `t`'s io_submit returned: a queued write at
    /// -EIOCBQUEUED (`FuseModel::returned`), a blocking one when done.
    Queued(usize),
    /// Notification task `t`'s server change is applied: its model
    /// NotifyServerWrite step has run (`FuseModel::server_changed`).
    Changed(usize),
    /// Buffered read task `t` has returned this data: per model page, the
    /// versions its bytes may be (`None`: past the bytes returned, a short
    /// read). The model's read must have copied exactly that.
    ReadRet(usize, Vec<(u8, Option<Vec<Id>>)>),
    /// The daemon read this request from /dev/fuse.
    Read(Pat),
    /// The daemon replied to this request; for a READ, the allowed data
    /// versions of the pages returned (server content at reply time) and
    /// its byte count (`bytes`), which a direct read returns.
    Reply(Pat, Vec<(u8, Vec<Id>)>, Option<u64>),
    /// The daemon failed this request (-EIO, injected by `fail OP`).
    ReplyErr(Pat),
    /// The environment's loads and stores through a mapping (envmap.rs):
    /// these tasks may run from here on, again and again (`on`), or have
    /// to be idle or finished here, and run no more.
    Env { on: bool, tasks: Vec<usize> },
}

/// An observation with where it came from.
#[derive(Clone, Debug)]
pub struct ObsAt {
    pub obs: Obs,
    /// Trace `seq` of the event (0 for implicit events).
    pub seq: u64,
    /// Short description of the trace event.
    pub what: String,
}

/// The result of mapping a trace onto the model.
#[derive(Clone, Debug)]
pub struct Mapping {
    pub scenario: String,
    pub cfg: Config,
    pub obs: Vec<ObsAt>,
    /// Model page i = real 4 KiB pages regions[i].0 .. regions[i].1 (in
    /// a trace mapped in units below a page, `cfg.sub.units_per_page` >
    /// 1: unit i, regions[i] = (i, i + 1)).
    pub regions: Vec<(u64, u64)>,
    /// Model task index -> "T1 ftruncate fd=6 4096".
    pub task_labels: Vec<String>,
    /// Model task index -> the value its syscall returned in the trace
    /// (None: no `ret` mark, e.g. the runner's cleanup close).
    pub rets: Vec<Option<i64>>,
    /// (page, tag string) -> versions; printed in reports and docs.
    pub letters: BTreeMap<(u8, String), Vec<Id>>,
    /// How many trace events each filter rule dropped.
    pub filtered: BTreeMap<String, usize>,
    /// Where the checked prefix ends, and why the rest is not modelled
    /// (a write-through write(2) the kernel split into several WRITEs).
    pub cut: Option<String>,
    /// Direct read task -> the versions each model page it returned may
    /// hold (from its `ret` mark's page tags): checked against the server
    /// when its READ is answered.
    pub read_data: BTreeMap<usize, Vec<(u8, Vec<Id>)>>,
    /// Tasks issued from the start, with no call or ret in the trace: the
    /// background writeback passes [`with_flusher`] adds.
    pub background: Vec<usize>,
    /// Tasks of the environment's loads and stores through mappings
    /// (envmap.rs): no call or ret, issued and stopped by `Obs::Env`.
    pub env: Vec<usize>,
    /// At most this many of them in an access at once: the threads that
    /// may touch the mappings (envmap.rs `env_threads`); `None`: any.
    pub env_threads: Option<u8>,
    /// The environment may reclaim clean folios ([`retry_with_reclaim`]).
    pub reclaim: bool,
}

/// Most background writeback passes a trace may need ([`with_flusher`]).
pub const MAX_FLUSHER_PASSES: usize = 2;

/// `m` with `k` more tasks that are background writeback passes
/// (`TaskSpec::Writeback { all: false }`, the flusher: wb_workfn →
/// wb_writeback with WB_SYNC_NONE), issued from the start and free to run
/// at any point. The kernel starts such a pass whenever it likes:
/// balance_dirty_pages → wb_start_background_writeback when a bdi is over
/// its dirty threshold (FUSE's bdi has a strict limit), or the periodic
/// wb_workfn after dirty_writeback_interval. No syscall in the trace
/// stands for it, so a trace with one has no task for its WRITEs. The
/// passes take task slots of their own (slots.rs); `None` if they would
/// take them all.
pub fn with_flusher(m: &Mapping, k: usize) -> Option<Mapping> {
    let n = m.cfg.tasks.len();
    // (a trace longer than the task slots runs in slots, slots.rs; the
    // passes keep theirs)
    if k + m.env.len() >= MODEL_TASKS {
        return None;
    }
    let mut b = m.clone();
    for i in 0..k {
        b.cfg
            .tasks
            .push(wbspec_models::fuse::TaskSpec::Writeback { all: false });
        b.rets.push(None);
        b.task_labels
            .push("(kernel) background writeback, no syscall".into());
        b.background.push(n + i);
    }
    b.cfg.validate_any_length().ok()?;
    Some(b)
}

/// Not a behaviour with the trace's syscalls alone (`v`): perhaps with
/// the kernel's own background writeback ([`with_flusher`], up to
/// [`MAX_FLUSHER_PASSES`]). Returns the mapping and verdict that stand,
/// and whether no task slot was left for even one pass. The first
/// violation is the one reported if no pass helps; but when a search with
/// passes stopped at `bound`, the violation is not proven (the trace may
/// be a behaviour with them): that inconclusive verdict stands instead.
pub(crate) fn retry_with_flusher(m: Mapping, v: Verdict, bound: usize) -> (Mapping, Verdict) {
    if !matches!(v, Verdict::Violation { .. }) {
        return (m, v);
    }
    let mut stopped = None;
    for k in 1..=MAX_FLUSHER_PASSES {
        let Some(b) = with_flusher(&m, k) else {
            break;
        };
        match check(&b, bound) {
            vb @ Verdict::Conforms { .. } => return (b, vb),
            vb @ Verdict::Inconclusive { .. } => stopped = stopped.or(Some((b, vb))),
            Verdict::Violation { .. } => {}
        }
    }
    stopped.unwrap_or((m, v))
}

/// Not a behaviour of the model as it stands (`v`, after
/// [`retry_with_flusher`]): perhaps with the environment's reclaim of
/// clean folios (`Mapping::reclaim`, FuseModel::reclaim_clean). Memory
/// pressure, memcg limits or a proactive reclaimer (DAMON's pageout
/// scheme runs on this project's machine kind) may take any clean
/// folio out of the page cache at any time; no kernel promise keeps it
/// cached, and the trace then shows a READ of a page the model holds.
/// The strict search runs first, so a verdict says when it needed this
/// ("+clean-page reclaim"). If reclaim does not help either, the strict
/// violation stands (it is the one a reader can follow); if the search
/// with reclaim stopped at `bound`, that inconclusive verdict stands.
pub(crate) fn retry_with_reclaim(m: Mapping, v: Verdict, bound: usize) -> (Mapping, Verdict) {
    if !matches!(v, Verdict::Violation { .. }) || m.reclaim {
        return (m, v);
    }
    let mut b = m.clone();
    b.reclaim = true;
    let vb = check(&b, bound);
    match retry_with_flusher(b, vb, bound) {
        (_, Verdict::Violation { .. }) => (m, v),
        other => other,
    }
}

#[derive(Debug)]
pub enum Translation {
    Modelled(Box<Mapping>),
    NotModelled(String),
}

mod cli;
mod envmap;
mod gup;
mod meta;
mod project;
mod raw;
mod returns;
mod scan;
mod search;
mod slots;
mod translate;
pub mod validate;

pub use cli::{
    conform_main, declared, help_text, judge, parse_args, Declared, Judged, Opts, Parsed,
    MAX_RANDOM,
};
pub use search::{check, check_in_slots, Verdict};
pub use translate::translate;

/// How a trace compares with the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The whole trace is a behaviour of the model.
    Conforms,
    /// The trace up to a cut is a behaviour of the model; the rest is not
    /// modelled.
    ConformsToCut,
    /// The model cannot express the trace (the reason is in the word).
    NotModelled,
    /// Not a behaviour of the model, or the search bound was hit
    /// (`inconclusive`).
    DoesNotConform,
}

/// Exit codes of `conform` (docs/conformance.md §4).
pub mod exit {
    /// Every trace conforms (and every kernel check passed).
    pub const CONFORMS: i32 = 0;
    /// A trace does not conform or is inconclusive, or a kernel check failed.
    pub const DOES_NOT_CONFORM: i32 = 1;
    /// A usage or input error (a malformed or altered trace file).
    pub const BAD_INPUT: i32 = 2;
    /// Some trace, or part of one, is not modelled (and nothing failed);
    /// `--allow-not-modelled` turns this into 0.
    pub const NOT_MODELLED: i32 = 3;
    /// Nothing was run: no root or no /dev/fuse (the automake convention
    /// for a skipped test).
    pub const SKIPPED: i32 = 77;
}

/// The verdict on one trace: the `model=...` word of a Conform line, its
/// class, and the multi-line detail (mapping, or the violation report).
#[derive(Clone, Debug)]
pub struct Conformance {
    pub word: String,
    pub class: Class,
    pub detail: Option<String>,
}

/// Translate and check one trace. `Err` is bad input (one line).
pub fn conform_trace(events: &[Event], scenario: Option<&str>) -> Result<Conformance, String> {
    // Any trace must be one the recording server could have written
    // (a trace of several files is split by file below).
    let not_modelled = match validate::validate_connection(events) {
        Err(validate::Invalid::Bad(e)) => return Err(e),
        Err(validate::Invalid::NotModelled(why)) => Some(why),
        Ok(()) => None,
    };
    // The direct-I/O extraction scenarios map onto the fuse-gup model,
    // unless validation found what no model has (a short write, a
    // non-CACHE WRITE from pid 0): translate says so for the others.
    if let Some(r) = gup::conform(events) {
        if let Some(why) = not_modelled {
            return Ok(Conformance {
                word: format!("not-modelled ({why})"),
                class: Class::NotModelled,
                detail: None,
            });
        }
        return r.map(|(word, ok, detail)| Conformance {
            class: if word.starts_with("not-modelled") {
                Class::NotModelled
            } else if ok {
                Class::Conforms
            } else {
                Class::DoesNotConform
            },
            word,
            detail,
        });
    }
    // Several files: one projection each, checked as one file's trace
    // (project.rs; docs/conformance.md, Several files).
    match project::project(events) {
        project::Split::One => conform_file(events, scenario, None).map(|(c, _)| c),
        project::Split::NotModelled(why) => Ok(Conformance {
            word: format!("not-modelled ({why})"),
            class: Class::NotModelled,
            detail: None,
        }),
        project::Split::Several(ps) => Ok(project::combine({
            // the threads that may touch a mapping, counted over the
            // whole trace: a projection keeps only its file's marks, and
            // a fork mark naming another file's fds would be lost there
            // (the memories that mapped any file count: never fewer)
            let threads = envmap::env_threads(events);
            ps.into_iter()
                .map(|p| {
                    let v = conform_file(&p.events, scenario, Some(threads));
                    (p.file, v)
                })
                .collect()
        })),
    }
}

/// Translate and check the trace of one file; with the `seq` of the event
/// a violation stopped at (u64::MAX: the end, or no violation).
/// `threads`: the environment's bound to use instead of the one the
/// events give (a projection of a trace of several files).
fn conform_file(
    events: &[Event],
    scenario: Option<&str>,
    threads: Option<Option<u8>>,
) -> project::FileVerdict {
    conform_file_bounded(events, scenario, threads, DEFAULT_BOUND)
}

/// [`conform_file`] with the search's state bound `bound` (tests use a
/// small one).
fn conform_file_bounded(
    events: &[Event],
    scenario: Option<&str>,
    threads: Option<Option<u8>>,
    bound: usize,
) -> project::FileVerdict {
    // The split the trace names, then (whole pages or uneven positions)
    // refined where the model's readahead windows ended inside a
    // position that was not cached (models/src/fuse/cuts.rs): the
    // coarser split's verdict, conforming or not, may rest on a window
    // the kernel did not take.
    let mut extra: std::collections::BTreeSet<u64> = std::collections::BTreeSet::new();
    let mut coarser: Option<(Conformance, u64, String)> = None;
    let mut round = 0;
    loop {
        let m = match translate::translate_split(events, scenario, &extra)? {
            Translation::NotModelled(why) => {
                if let Some((c, at, cuts)) = coarser {
                    // the finer split is not modelled (too many
                    // positions): the coarser verdict stands, weaker
                    return Ok((unchecked(c, &cuts, &why), at));
                }
                return Ok((
                    Conformance {
                        word: format!("not-modelled ({why})"),
                        class: Class::NotModelled,
                        detail: None,
                    },
                    u64::MAX,
                ));
            }
            Translation::Modelled(m) => m,
        };
        // Is max_pages exact? Kernel pages are counted with uneven
        // positions and with positions of different sizes (max_kpages);
        // otherwise "the most consecutive positions that fit one
        // request" is exact when the whole file fits one WRITE and one
        // READ (write-through, a position over 255 pages), else
        // stricter than the kernel (a conforming verdict under it
        // still stands)
        let whole = m.cfg.uneven()
            || m.cfg.max_kpages > 0
            || (m.cfg.max_pages >= m.cfg.pages
                && (m.cfg.read_max_pages == 0 || m.cfg.read_max_pages >= m.cfg.pages));
        // a finer split whose max_pages is inexact is only worth what
        // it proves: a small bound, as its failing search (with the
        // environment's reclaim) can take gigabytes where the coarser
        // one took hundreds of states (an attack, 4 Dec 2026)
        let b = match (&coarser, whole) {
            (Some(_), false) => bound.min(REFINED_INEXACT_BOUND),
            _ => bound,
        };
        let ((c, at, conforms, m), cuts) =
            wbspec_models::fuse::cuts::collecting(|| judge_mapping(*m, threads, b));
        if let Some((cc, cat, cuts)) = coarser.take() {
            if !conforms && c.word.starts_with("inconclusive") {
                // the finer split reached its bound: nothing shown
                return Ok((
                    unchecked(cc, &cuts, "the finer split's search is inconclusive"),
                    cat,
                ));
            }
            if !conforms && !whole {
                // the finer split's max_pages may forbid a request the
                // kernel sent: the coarser verdict stands, weaker
                return Ok((unchecked(cc, &cuts, "the finer split does not conform, and its max_pages counts positions of different sizes"), cat));
            }
        }
        // (units below a page have no page boundary inside a position;
        // uneven positions have units_per_page 1)
        let page_split = m.cfg.sub.units_per_page <= 1;
        let starts = position_starts(&m);
        let new: Vec<u64> = cuts
            .iter()
            .map(|&k| k as u64)
            .filter(|k| !starts.contains(k))
            .collect();
        // a VIOLATION is refined too: a window rounded out to a whole
        // position also moves the readahead mark and what a congested
        // fuse_readahead skips, so the coarser split can lack a
        // behaviour of the finer one (ra-congested/
        // async_window_inside_position)
        let violation = c.word.starts_with("VIOLATION");
        if !((conforms || violation) && page_split && !new.is_empty()) {
            let mut c = c;
            if violation && round > 0 {
                // a VIOLATION of a split the trace does not name: say so
                let all: Vec<u64> = extra.iter().copied().collect();
                c.word = format!("{} (positions split again at pages {all:?})", c.word);
            }
            return Ok((c, at));
        }
        if round == MAX_REFINEMENTS {
            let why = format!("{MAX_REFINEMENTS} refinements");
            return Ok((unchecked(c, &format!("{new:?}"), &why), at));
        }
        extra.extend(new.iter().copied());
        coarser = Some((c, at, format!("{new:?}")));
        round += 1;
    }
}

/// A verdict whose finer split could not be checked (`why`) where the
/// model's windows or requests ended inside positions at kernel pages
/// `cuts`: a conforming one stands, weaker; a VIOLATION is not shown
/// (the rounding to whole positions may be what the kernel's behaviour
/// lacks), so it is inconclusive, naming the VIOLATION of the split
/// the trace names.
fn unchecked(mut c: Conformance, cuts: &str, why: &str) -> Conformance {
    let note = format!("readahead edges inside positions at pages {cuts} not checked: {why}");
    if c.word.starts_with("VIOLATION") {
        c.word = format!(
            "inconclusive (split as the trace names it: {}; {note})",
            c.word
        );
        c.class = Class::DoesNotConform;
    } else {
        c.word = format!("{} ({note})", c.word);
    }
    c
}

/// The kernel pages at which a position of `m` starts.
fn position_starts(m: &Mapping) -> std::collections::BTreeSet<u64> {
    m.cfg
        .position_bytes()
        .iter()
        .filter(|(a, _)| a % PG == 0)
        .map(|(a, _)| a / PG)
        .collect()
}

/// The state bound of a finer split whose max_pages counts positions
/// of different sizes (`conform_file_bounded`).
pub const REFINED_INEXACT_BOUND: usize = 50_000;

/// How often conformance splits positions again where the model's
/// readahead windows ended inside one (`conform_file_bounded`).
pub const MAX_REFINEMENTS: usize = 4;

/// The search of one translated trace with its retries (background
/// writeback, the environment's reclaim): the Conform line's word and
/// detail, the seq of a violation, whether it conforms, and the mapping
/// that stands.
fn judge_mapping(
    mut m: Mapping,
    threads: Option<Option<u8>>,
    bound: usize,
) -> (Conformance, u64, bool, Mapping) {
    {
        {
            if let Some(t) = threads {
                m.env_threads = t;
            }
            let v = check(&m, bound);
            let (m, v) = retry_with_flusher(m, v, bound);
            // a strict violation the reclaim retry could not decide (its
            // state bound: it branches on every clean page a later READ
            // reads) is said beside the inconclusive verdict, not lost
            let strict = matches!(v, Verdict::Violation { .. }).then(|| (m.clone(), v.clone()));
            let (m, v) = retry_with_reclaim(m, v, bound);
            let strict = strict.filter(|_| m.reclaim && matches!(v, Verdict::Inconclusive { .. }));
            let mut with = vec![];
            if !m.background.is_empty() {
                with.push(format!("+{} background writeback", m.background.len()));
            }
            if m.reclaim {
                with.push("+clean-page reclaim".to_string());
            }
            let passes = match with.is_empty() {
                true => String::new(),
                false => format!(" ({})", with.join(", ")),
            };
            // A prefix that conforms is not a conforming trace: say where it
            // was cut.
            let (word, class) = match (&v, &m.cut) {
                (Verdict::Conforms { .. }, Some(c)) => (
                    format!("conforms-to-cut (not modelled from {c})"),
                    Class::ConformsToCut,
                ),
                (Verdict::Conforms { .. }, None) => {
                    (format!("{}{passes}", v.short()), Class::Conforms)
                }
                // inconclusive with background writeback: say so
                _ => match &strict {
                    Some((_, sv)) => (
                        format!("{}{passes}; without reclaim: {}", v.short(), sv.short()),
                        Class::DoesNotConform,
                    ),
                    None => (format!("{}{passes}", v.short()), Class::DoesNotConform),
                },
            };
            let detail = match &v {
                Verdict::Conforms {
                    explored, widest, ..
                } => format!(
                    "{}\n{}\n  {explored} model states explored, at most {widest} possible at once",
                    v.short(),
                    m.summary()
                ),
                _ => match &strict {
                    Some((sm, sv)) => format!(
                        "{}\n  without the environment's reclaim of clean folios:\n{}",
                        v.report(&m),
                        sv.report(sm)
                    ),
                    None => v.report(&m),
                },
            };
            let at = match &v {
                Verdict::Violation { index, .. } => m.obs.get(*index).map_or(u64::MAX, |o| o.seq),
                _ => u64::MAX,
            };
            let conforms = class == Class::Conforms;
            (
                Conformance {
                    word,
                    class,
                    detail: Some(detail),
                },
                at,
                conforms,
                m,
            )
        }
    }
}

#[cfg(test)]
mod test_trace;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_aio;
#[cfg(test)]
mod tests_atk3;
#[cfg(test)]
mod tests_env;
#[cfg(test)]
mod tests_env_atk;
#[cfg(test)]
mod tests_env_atk2;
#[cfg(test)]
mod tests_env_threads;
#[cfg(test)]
mod tests_filters;
#[cfg(test)]
mod tests_notify;
#[cfg(test)]
mod tests_project;
#[cfg(test)]
mod tests_reclaim;
#[cfg(test)]
mod tests_segs;
#[cfg(test)]
mod tests_slots;
#[cfg(test)]
mod tests_through;
#[cfg(test)]
mod tests_uneven;
#[cfg(test)]
mod tests_units;
#[cfg(test)]
mod tests_wide;
