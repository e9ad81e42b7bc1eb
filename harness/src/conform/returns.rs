//! Return values: the value a recorded syscall returned must be what the
//! model's task returns (docs/conformance.md §3, "Return values").
//!
//! On success, what a task returns is fixed by its kind, except for direct
//! reads:
//!
//! - write(2) of any kind returns every byte it was given: the model's
//!   write, direct-write and write-through programs never stop short,
//!   except a write-through write split into max_write chunks, which
//!   returns the bytes written before a failed chunk (`Task::saved`);
//! - ftruncate/truncate, fsync, msync(MS_SYNC), close, sync_file_range,
//!   syncfs, an mmap store and the recording server's
//!   NOTIFY_INVAL_INODE return 0;
//! - open(2) returns a file descriptor, any number >= 0 (the model has no
//!   descriptor table);
//! - a direct read (FOPEN_DIRECT_IO or O_DIRECT) returns what its READ
//!   reply carried (`fuse_direct_io` stops at the first short reply), and
//!   the model's server replies with the pages it holds below its size
//!   (`State::srv_size`), so the return is checked where the model's READ
//!   is answered: [`read_reply_ok`].
//!
//! A task fails (returns -1, errno EIO) only where the check lets the
//! server fail requests (`Config::errors`, an -EIO reply in the trace): its
//! last synchronous request failed (`Task::failed`), or, for fsync and
//! close, it reported a writeback error (`check_wb_err`, which leaves no
//! mark in the task's state, so a failing fsync or close is accepted
//! whenever the check has errors). A task that returned a value must not
//! have failed in the model.
use super::{Id, Mapping};

use wbspec_models::fuse::state::{Req, State, CONN_ABORTED, NONE};
use wbspec_models::fuse::TaskSpec;

/// What the model's task returns, where the interleaving does not matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Returns {
    /// Exactly this many (bytes, or 0).
    Exactly(i64),
    /// A file descriptor.
    Fd,
    /// The byte count of its READ reply ([`read_reply_ok`]).
    ReadReply,
    /// A buffered read(2): the byte count and the data it copied are
    /// checked together at its `ReadRet` observation (search.rs), against
    /// the pages the model's task copied (`Task::snap`).
    ReadData,
    /// Not a syscall the mapping produces (readahead of a buffered read,
    /// another client's truncation): nothing to compare.
    NotMapped,
}

/// Real bytes of model pages `first..first+n` (regions count 4 KiB
/// pages, or units below a page: `Config::unit_bytes`).
fn bytes(m: &Mapping, first: u8, n: u8) -> i64 {
    if m.cfg.uneven() {
        let b = m.cfg.position_bytes();
        return b[first as usize..(first + n) as usize]
            .iter()
            .map(|p| p.1 as i64)
            .sum();
    }
    let unit = m.cfg.unit_bytes() as u64;
    m.regions[first as usize..(first + n) as usize]
        .iter()
        .map(|r| ((r.1 - r.0) * unit) as i64)
        .sum()
}

/// What task `t` returns (see the module doc).
pub fn returns(m: &Mapping, t: usize) -> Returns {
    match m.cfg.tasks[t] {
        TaskSpec::Write { first, n }
        | TaskSpec::DioWrite { first, n, .. }
        | TaskSpec::OdirectWrite { first, n, .. } => Returns::Exactly(bytes(m, first, n)),
        TaskSpec::DioRead { .. } | TaskSpec::OdirectRead { .. } => Returns::ReadReply,
        TaskSpec::Read { .. } => Returns::ReadData,
        TaskSpec::Open { .. } => Returns::Fd,
        TaskSpec::Truncate { .. }
        | TaskSpec::Fsync
        | TaskSpec::Close
        | TaskSpec::CloseRelease
        | TaskSpec::Writeback { .. }
        | TaskSpec::Punch { .. }
        | TaskSpec::Mmap { .. }
        | TaskSpec::DioMmap { .. }
        | TaskSpec::Fault { .. }
        | TaskSpec::EnvAccess { .. }
        | TaskSpec::Gup { .. }
        | TaskSpec::Munmap
        | TaskSpec::Msync { .. }
        | TaskSpec::SyncRange { .. }
        | TaskSpec::Stat
        // the notification's write(2), as the recorder logs it (0, as
        // libfuse's fuse_lowlevel_notify_inval_inode returns)
        | TaskSpec::NotifyInval { .. } => Returns::Exactly(0),
        TaskSpec::Readahead { .. }
        | TaskSpec::RemoteTruncate { .. }
        | TaskSpec::Abort
        | TaskSpec::Timeout
        | TaskSpec::Signal { .. }
        | TaskSpec::NotifyStore { .. } => Returns::NotMapped,
    }
}

/// Whether task `t` may fail in state `s` without leaving `failed` (fsync
/// and close report a writeback error and skip their request): where the
/// server may fail requests, or once the connection was aborted (the
/// abort ends writeback WRITEs with an error too; read from the state, as
/// the abort task may have left its slot, slots.rs).
fn may_report_wb_error(m: &Mapping, t: usize, s: &State) -> bool {
    (m.cfg.errors != 0 || s.conn & CONN_ABORTED != 0)
        && matches!(
            m.cfg.tasks[t],
            TaskSpec::Fsync | TaskSpec::Close | TaskSpec::CloseRelease
        )
}

/// `Err(why)` when task `t`'s recorded return value is not what the model's
/// task returns when it has finished in state `s`; checked at the task's
/// `Ret` observation. The byte count of a direct read whose READ was
/// answered (`read_answered`) is checked at that reply; one that sent no
/// READ (an O_DIRECT read at or past EOF) returns 0.
pub fn check_return(m: &Mapping, t: usize, s: &State, read_answered: bool) -> Result<(), String> {
    let Some(got) = m.rets.get(t).copied().flatten() else {
        return Ok(());
    };
    let failed = s.tasks[t].failed;
    if got < 0 {
        return if failed || may_report_wb_error(m, t, s) {
            Ok(())
        } else {
            Err(format!(
                "the trace returns {got}, the model's task has not failed"
            ))
        };
    }
    if failed {
        return Err(format!(
            "the trace returns {got}, the model's task failed (-EIO)"
        ));
    }
    let want = match (returns(m, t), m.cfg.tasks[t]) {
        // a write-through write(2) split into max_write chunks returns
        // the bytes written before a failed chunk ended its loop
        (Returns::Exactly(_), TaskSpec::Write { first, n })
            if !m.cfg.writeback_cache && split_through(m, n) =>
        {
            let end = s.tasks[t].saved.clamp(first, first + n);
            Returns::Exactly(bytes(m, first, end - first))
        }
        // a buffered read returns the bytes of the pages it copied
        // (`Task::snap`), stopping at EOF
        (Returns::ReadData, TaskSpec::Read { first, n, .. }) => {
            let copied = (first..first + n)
                .filter(|p| s.tasks[t].snap[*p as usize] != NONE)
                .count() as u8;
            return match bytes(m, first, copied) {
                want if want == got => Ok(()),
                want => Err(format!(
                    "the trace returns {got}, the model's read returns {want}"
                )),
            };
        }
        // a direct read that sent no READ (at or past EOF) returns 0
        (Returns::ReadReply, _) if !read_answered => Returns::Exactly(0),
        (r, _) => r,
    };
    match want {
        Returns::Exactly(want) if got != want => Err(format!(
            "the trace returns {got}, the model's task returns {want}"
        )),
        Returns::Fd if got < 0 => Err(format!(
            "the trace returns {got}, the model's open returns a file descriptor"
        )),
        _ => Ok(()),
    }
}

/// Does the model split a write-through write of `n` pages
/// (fuse_perform_write's chunks of min(max_write, max_pages) pages)?
fn split_through(m: &Mapping, n: u8) -> bool {
    m.cfg.max_write.unwrap_or(u8::MAX).min(m.cfg.max_pages) < n
}

/// What the model's direct read `req` returns when the daemon answers it in
/// state `s`: the bytes of the pages of its range below the server's size.
pub fn read_returns(m: &Mapping, s: &State, first: u8, n: u8) -> i64 {
    let end = (first + n).min(s.srv_size);
    if end <= first {
        0
    } else {
        bytes(m, first, end - first)
    }
}

/// Why a READ reply that matched in `states` (after the reply) was refused:
/// the byte counts the model's direct read returns there ("" if none).
pub fn explain_read<'a>(
    m: &Mapping,
    states: impl Iterator<Item = &'a State>,
    first: u8,
    n: u8,
) -> String {
    let mut could: Vec<i64> = states.map(|s| read_returns(m, s, first, n)).collect();
    could.sort();
    could.dedup();
    if could.is_empty() {
        String::new()
    } else {
        format!(" (after it the model's direct read returns {could:?} bytes of the server's data, not what the trace's read returned)")
    }
}

/// Whether answering `req` in state `s` lets its task return what the trace
/// recorded, count and data, and whether the recorded reply carried the
/// `reply_bytes` the model's reply does (only direct reads are
/// constrained here: `fuse_direct_io` returns what its READ reply
/// carried, so a reply of 4096 bytes to a read returning 8192 is no
/// behaviour of the model).
pub fn read_reply_ok(m: &Mapping, s: &State, req: &Req, reply_bytes: Option<u64>) -> bool {
    let Req::Read { task, first, n } = *req else {
        return true;
    };
    let t = task as usize;
    if returns(m, t) != Returns::ReadReply {
        return true; // a fault's page-cache fill: the store returns 0
    }
    let would = read_returns(m, s, first, n);
    let count_ok = match m.rets.get(t).copied().flatten() {
        Some(got) => got == would,
        None => true,
    } && reply_bytes.is_none_or(|b| i64::try_from(b) == Ok(would));
    // the data it returned is what the server holds when it answers
    count_ok
        && m.read_data.get(&t).is_none_or(|d| {
            d.iter().all(|(p, allowed)| {
                *p < s.srv_size && allowed.contains(&(s.srv[*p as usize] as Id))
            })
        })
}
