//! The name of every atomic step and the kernel function(s) it stands for
//! (docs/model-nowait.md has the table with versions).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Step {
    // ---- a write attempt (io_uring inline, io-wq retry, write(2))
    /// xfs_ilock_iocb(IOLOCK_EXCL) succeeded.
    IlockIocb,
    /// io_write with `fix_append_punt`: a buffered IOCB_APPEND write goes
    /// to io-wq without an inline attempt.
    AppendPunt,
    /// xfs_ilock_iocb under IOCB_NOWAIT failed: -EAGAIN, io_write punts.
    IlockIocbEagain,
    /// xfs_file_write_checks: generic_write_checks, kiocb_modified passed.
    WriteChecks,
    /// kiocb_modified returned -EAGAIN (privs or times).
    WriteChecksEagain,
    /// iomap_iter -> xfs_buffered_write_iomap_begin (ILOCK) mapped a range.
    IomapBegin,
    /// xfs_ilock_for_iomap under IOMAP_NOWAIT failed: -EAGAIN.
    IomapBeginEagain,
    /// iomap_write_iter: one folio copied (more to do).
    WriteFolio,
    /// iomap_write_iter: last folio copied; the write returns.
    WriteFolioDone,
    /// balance_dirty_pages(BDP_ASYNC): -EAGAIN.
    BdpEagain,
    /// iomap_write_begin(FGP_NOWAIT): folio locked, -EAGAIN.
    FolioEagain,
    // ---- chmod / utimes / stat
    InodeLock,
    SetattrMode,
    SetattrTimes,
    Getattr,
    // ---- flusher
    Writeback,
    WritebackOther,
    // ---- environment
    ClockTick,
    EnvFolioLock,
    EnvFolioUnlock,
    EnvIlock,
    EnvIunlock,
    EnvDirty,
}

impl Step {
    pub fn kernel_fn(self) -> &'static str {
        match self {
            Step::IlockIocb => "xfs_ilock_iocb(IOLOCK_EXCL)",
            Step::AppendPunt => {
                "io_write: IOCB_APPEND buffered write, ret_eagain: punt to io-wq (fix)"
            }
            Step::IlockIocbEagain => "xfs_ilock_iocb: trylock failed, -EAGAIN; io_write punts",
            Step::WriteChecks => "xfs_file_write_checks: generic_write_checks, kiocb_modified",
            Step::WriteChecksEagain => "kiocb_modified: -EAGAIN; xfs_iunlock; io_write punts",
            Step::IomapBegin => "iomap_iter: xfs_buffered_write_iomap_begin (ILOCK)",
            Step::IomapBeginEagain => "xfs_buffered_write_iomap_begin(IOMAP_NOWAIT): -EAGAIN",
            Step::WriteFolio => "iomap_write_iter: iomap_write_begin, copy, iomap_write_end",
            Step::WriteFolioDone => {
                "iomap_write_iter: last folio; xfs_iunlock; CQE / write(2) returns"
            }
            Step::BdpEagain => "balance_dirty_pages_ratelimited_flags(BDP_ASYNC): -EAGAIN",
            Step::FolioEagain => "iomap_write_begin(FGP_NOWAIT): folio locked, -EAGAIN",
            Step::InodeLock => "inode_lock (i_rwsem = IOLOCK)",
            Step::SetattrMode => "notify_change(ATTR_MODE): xfs_setattr_nonsize; inode_unlock",
            Step::SetattrTimes => "vfs_utimes: notify_change(ATTR_MTIME|ATTR_CTIME); inode_unlock",
            Step::Getattr => "vfs_getattr: xfs_vn_getattr (STATX_CHANGE_COOKIE)",
            Step::Writeback => "writeback: folio_clear_dirty_for_io, write, end",
            Step::WritebackOther => "writeback of another file's folio",
            Step::ClockTick => "clock tick (current_time advances)",
            Step::EnvFolioLock => "another task: folio_lock",
            Step::EnvFolioUnlock => "another task: folio_unlock",
            Step::EnvIlock => "another task: xfs_ilock(ILOCK)",
            Step::EnvIunlock => "another task: xfs_iunlock(ILOCK)",
            Step::EnvDirty => "another task dirties another file: over the dirty limit",
        }
    }
}
