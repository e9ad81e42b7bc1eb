//! The name of every atomic step and the kernel function(s) it stands
//! for in each code tree a kernel state label names (docs/model.md has
//! the generated table, `step_tree_table`).

use serde::{Deserialize, Serialize};

use super::config::Kernel;

/// The name of one atomic step, for actions, traces and narratives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Step {
    Entry,
    InodeLock,
    DioLockShared,
    UnlockReturn,
    Return,
    CopyPage,
    FillPage,
    SendThroughWrite,
    /// Write-through with units below a page (write.rs, op_fill_units).
    FillFolio,
    FillFolioLocked,
    BatchWaitWb,
    WriteBatchEnd,
    WriteBeginWait,
    FaultMapped,
    FaultReadDone,
    Sigbus,
    MkwriteLock,
    MkwriteWait,
    MkwriteStore,
    GupRedirty,
    RangeIsWritebackL,
    WbBegin,
    WbFolio,
    WbSkip,
    WbWaitFolio,
    WbSend,
    WbDone,
    FdataWait,
    SetNowrite,
    LockSetNowrite,
    WaitNowrite,
    SyncWritesDone,
    ReleaseNowrite,
    RangeHasWriteback,
    SendSetattr,
    SendWrite,
    SendRead,
    SendFsync,
    SendFlush,
    SendFallocate,
    SendOpen,
    OpenTruncAttr,
    SetattrReply,
    WriteReply,
    Reply,
    TruncLock,
    TruncFolio,
    InvLock,
    InvLaunder,
    InvRemove,
    InvDone,
    SetattrReturn,
    // buffered readers (read.rs)
    ReadCopy,
    ReadEof,
    RaSubmit,
    RaWindow,
    /// page_cache_async_ra: a lookup found a folio marked PG_readahead.
    RaAsync,
    RaAdd,
    RaPresent,
    RaSkip,
    ReadError,
    ReadFolio,
    ReadFolioLock,
    WbCongested,
    CachedIoStart,
    OpenTruncSize,
    SendGetattr,
    GetattrReply,
    GetattrStale,
    /// fuse_change_attributes_i with auto_inval_data: the mtime moved.
    GetattrAutoInval,
    ShortRead,
    RemoteTruncate,
    // daemon
    DaemonRead,
    /// FUSE over io_uring (uring.rs): a ring entry of the worker's queue
    /// takes the head of that queue and the request is copied to it.
    UringFetch,
    /// The scheduler moves a task to the other CPU before a step that
    /// queues a request (uring.rs).
    UringMigrate,
    DaemonReply,
    DaemonReplyError,
    DaemonReplyShort,
    WritepageEnd,
    /// Direct reclaim in the worker's request meets folio `page` under
    /// writeback (memcg v1; reclaim.rs).
    ShrinkFolio {
        page: u8,
    },
    ReclaimWaitDone,
    /// Large folios and readahead (lfolio.rs).
    TruncPartial,
    RaAlloc,
    RaSend,
    /// fuse_readahead's next READ passed its congestion check and waits
    /// in fuse_get_req while fc->blocked (read.rs `PH_RA_GET`).
    RaGetWait,
    RaEmpty,
    RaStop,
    RaNone,
    /// Partial-folio writes (subpage.rs).
    WriteBeginSendRead,
    WriteBeginRead,
    /// The transport (transport.rs).
    AbortConn,
    TimeoutAbort,
    TimeoutIdle,
    Signal,
    SignalIdle,
    AioQueued,
    AioComplete,
    AioWaited,
    AioCompleteWork,
    AioWorkerDone,
    /// Server notifications (notify.rs).
    NotifyServerWrite,
    ReverseInvalInode,
    NotifyStoreSize,
    NotifyStorePage,
}

/// A code tree: the kernel code a state label's narrations name. Each
/// catalogue label names exactly one tree; a tree runs the mechanics of
/// one `Kernel` (several trees may share mechanics: T17 runs T's, T19
/// runs T2's). Versions and gaps are data in checks/facts/kernels.toml
/// (one `[[state]]` per label); where each tree's fs/fuse/file.c was read
/// is `read_at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Tree {
    /// <= 6.15: temp folios, the fi->writepages rb-tree, legacy
    /// writeback (write_cache_pages) and reads.
    V615,
    /// 6.16: legacy writeback (write_cache_pages, fuse_writepages_fill)
    /// without temp folios, legacy reads.
    V616,
    /// 6.17 - 6.18.2: iomap buffered writes and writeback
    /// (iomap_writepages, fuse_iomap_writeback_range), legacy reads.
    V617,
    /// 6.18.3 and later 6.18.y: as 6.17 plus the two FOPEN_DIRECT_IO
    /// fixes; legacy reads.
    V6183,
    /// 6.19: iomap writeback and iomap reads (iomap_readahead,
    /// iomap_read_folio).
    V619,
    /// 2026 fuse trees: iomap writeback and reads, the max_pages slot
    /// check.
    Fuse2026,
}

impl Tree {
    pub const ALL: [Tree; 6] = [
        Tree::V615,
        Tree::V616,
        Tree::V617,
        Tree::V6183,
        Tree::V619,
        Tree::Fuse2026,
    ];

    /// The catalogue label that names this tree (`kernel = "T17"`), also
    /// its `[[state]]` name in checks/facts/kernels.toml.
    pub fn label(self) -> &'static str {
        match self {
            Tree::V615 => "L",
            Tree::V616 => "T",
            Tree::V617 => "T17",
            Tree::V6183 => "T2",
            Tree::V619 => "T19",
            Tree::Fuse2026 => "C",
        }
    }

    /// The tree a catalogue label names. "T''" and "T″" are older
    /// spellings of T2.
    pub fn parse(s: &str) -> Option<Tree> {
        match s {
            "T''" | "T″" => Some(Tree::V6183),
            _ => Tree::ALL.into_iter().find(|t| t.label() == s),
        }
    }

    /// The mechanics the tree runs in the model.
    pub fn kernel(self) -> Kernel {
        match self {
            Tree::V615 => Kernel::L,
            Tree::V616 | Tree::V617 => Kernel::T,
            Tree::V6183 | Tree::V619 => Kernel::T2,
            Tree::Fuse2026 => Kernel::C,
        }
    }

    /// The tree a kernel state's own label names (`kernel = "T"` is 6.16).
    pub fn of(k: Kernel) -> Tree {
        match k {
            Kernel::L => Tree::V615,
            Kernel::T => Tree::V616,
            Kernel::T2 => Tree::V6183,
            Kernel::C => Tree::Fuse2026,
        }
    }

    /// Where the tree's fs/fuse/file.c was read for its names (repository
    /// and commit; every id is a `[[commit]]` of the facts file).
    pub fn read_at(self) -> &'static str {
        match self {
            Tree::V615 => "torvalds/linux `faa794dd2e17` (v6.15-rc1 base)",
            Tree::V616 => "torvalds/linux `f3cb8bd908c7` (6.16-rc1)",
            Tree::V617 => "torvalds/linux `1097a87dcb74` (6.17, vfs-6.17.iomap)",
            Tree::V6183 => "torvalds/linux `1ce120dcefc0` (6.18-based; backported to 6.18.3)",
            Tree::V619 => "torvalds/linux `4ea907108a5c` (6.19)",
            Tree::Fuse2026 => {
                "torvalds/linux `4ea907108a5c` for reads and writeback names; the slot check of `c3880a7b10e4` (mszeredi/fuse `09e95ab1a848`)"
            }
        }
    }

    /// Writeback (and buffered writes, launder) through iomap: 6.17 on.
    pub fn iomap_writeback(self) -> bool {
        self >= Tree::V617
    }

    /// page_cache_async_ra rounds its window's end (6.17's readahead
    /// series): 6.17 on.
    pub fn ra_round_end(self) -> bool {
        self >= Tree::V617
    }

    /// Reads (readahead, read_folio) through iomap: 6.19 on.
    pub fn iomap_reads(self) -> bool {
        self >= Tree::V619
    }
}

impl Step {
    /// The kernel function(s) the step stands for in `tree`. Every name
    /// was read in that tree (`Tree::read_at`; mm/ and fs/iomap/ names
    /// as docs/kernel-sources.md §0 says). A step whose code the tree
    /// does not have says so first: "(L only)" for the rb-tree waits of
    /// the temp-folio era, "(<= 6.18 only)" for the legacy readahead
    /// loop's large-folio paths.
    pub fn kernel_fn(self, tree: Tree) -> &'static str {
        let l = tree == Tree::V615;
        let wb = tree.iomap_writeback();
        let rd = tree.iomap_reads();
        match self {
            Step::Entry => "syscall entry",
            Step::InodeLock => "inode_lock",
            Step::DioLockShared => "fuse_dio_lock: inode_lock_shared",
            Step::UnlockReturn => "inode_unlock, return",
            Step::Return => "return",
            Step::CopyPage if wb => "iomap_write_iter: iomap_write_begin, copy, iomap_write_end",
            Step::CopyPage => "generic_perform_write: fuse_write_begin, copy, fuse_write_end",
            Step::FillPage => "fuse_fill_write_pages: copy",
            Step::SendThroughWrite => "fuse_send_write_pages: send WRITE",
            Step::FillFolio => {
                "fuse_fill_write_pages: __filemap_get_folio, copy_folio_from_iter_atomic, folio uptodate: folio_unlock"
            }
            Step::FillFolioLocked => {
                "fuse_fill_write_pages: partial copy, folio not uptodate: ia->write.folio_locked, break"
            }
            Step::BatchWaitWb => "fuse_send_write_pages: folio_wait_writeback",
            Step::WriteBatchEnd => {
                "fuse_send_write_pages: WRITE reply, folio_clear_uptodate (error, short), folio_unlock (folio_locked)"
            }
            Step::WriteBeginWait if l => "fuse_write_begin: fuse_wait_on_page_writeback (rb-tree)",
            Step::WriteBeginWait => "(L only) fuse_write_begin: rb-tree wait",
            Step::FaultMapped => "filemap_fault: folio uptodate, mapped",
            Step::FaultReadDone if rd => {
                "fuse_iomap_read_folio_range_async: READ reply, iomap_finish_folio_read"
            }
            Step::FaultReadDone => "fuse_read_folio: READ reply, folio uptodate, folio_unlock",
            Step::Sigbus => "filemap_fault: beyond EOF, SIGBUS",
            Step::MkwriteLock => "fuse_page_mkwrite: folio_lock",
            Step::MkwriteWait if l => "fuse_page_mkwrite: fuse_wait_on_folio_writeback (rb-tree)",
            Step::MkwriteWait => "fuse_page_mkwrite: folio_wait_writeback",
            Step::MkwriteStore => "store, folio_mark_dirty, unlock",
            Step::GupRedirty => "unpin_user_pages_dirty_lock",
            Step::RangeIsWritebackL if l => "fuse_direct_io: fuse_range_is_writeback (rb-tree)",
            Step::RangeIsWritebackL => "(L only) fuse_direct_io: fuse_range_is_writeback",
            Step::WbBegin if wb => "fuse_writepages: iomap_writepages",
            Step::WbBegin => "fuse_writepages: write_cache_pages",
            Step::WbFolio if wb => {
                "writeback_iter, iomap_writeback_folio, fuse_iomap_writeback_range"
            }
            Step::WbFolio if l => "writeback_iter, fuse_writepages_fill: temp folio",
            Step::WbFolio => "writeback_iter, fuse_writepages_fill",
            Step::WbSkip => "writeback_iter: skip folio",
            Step::WbWaitFolio => "writeback_iter: folio_wait_writeback",
            Step::WbSend => "fuse_writepages_send",
            Step::WbDone if wb => "iomap_writepages: walk done, none sent",
            Step::WbDone => "fuse_writepages: walk done, none sent",
            Step::FdataWait => "filemap_fdatawait_range",
            Step::SetNowrite => "fuse_set_nowrite: writectr+=NOWRITE",
            Step::LockSetNowrite => "inode_lock, fuse_set_nowrite",
            Step::WaitNowrite => "fuse_set_nowrite: wait_event",
            Step::SyncWritesDone => "fuse_sync_writes: release_nowrite",
            Step::ReleaseNowrite => "fuse_release_nowrite",
            Step::RangeHasWriteback => "filemap_range_has_writeback",
            Step::SendSetattr => "fuse_do_setattr: send SETATTR",
            Step::SendWrite => "fuse_direct_io: send WRITE",
            Step::SendRead => "fuse_direct_io: send READ",
            Step::SendFsync => "fuse_fsync: send FSYNC",
            Step::SendFlush => "fuse_flush: send FLUSH",
            Step::SendFallocate => "fuse_file_fallocate: send FALLOCATE",
            Step::SendOpen => "fuse_open: send OPEN",
            Step::OpenTruncAttr => "fuse_truncate_update_attr: i_size 0",
            Step::SetattrReply => "fuse_do_setattr: i_size_write, release",
            Step::WriteReply => "fuse_write_update_attr",
            Step::Reply => "request_wait_answer: reply",
            Step::TruncLock => "truncate_pagecache: folio_lock",
            Step::TruncFolio => "truncate_pagecache: folio removed",
            Step::InvLock => "invalidate_inode_pages2: folio_lock",
            Step::InvLaunder if wb => "fuse_launder_folio: iomap_writeback_folio, WRITE queued",
            Step::InvLaunder => "fuse_launder_folio: fuse_writepage_locked, WRITE queued",
            Step::InvRemove => "invalidate_inode_pages2: folio removed",
            Step::InvDone => "no folio left in the range: done",
            Step::SetattrReturn => "clear SIZE_UNSTABLE, inode_unlock",
            Step::ReadCopy => "filemap_read: copy_folio_to_iter",
            Step::ReadEof => "filemap_read: pos >= i_size, return",
            Step::RaSubmit if rd => {
                "page_cache_ra_unbounded: folio present, read_pages, iomap_readahead: READ"
            }
            Step::RaSubmit => {
                "page_cache_ra_unbounded: folio present, read_pages, fuse_readahead: READ"
            }
            Step::RaWindow => "page_cache_sync_ra, do_sync_mmap_readahead: a miss, the window",
            Step::RaAsync => "page_cache_async_ra: a marked folio, the next window",
            Step::RaAdd => "page_cache_ra_unbounded: filemap_add_folio, locked",
            Step::RaPresent => "page_cache_ra_unbounded: folio present",
            Step::RaSkip if rd => {
                "fuse_handle_readahead: congested (-EAGAIN), async folios dropped"
            }
            Step::RaSkip => "fuse_readahead: congested, async folios dropped",
            Step::ReadError if rd => "iomap_read_folio: READ failed, the read returns -EIO",
            Step::ReadError => "fuse_read_folio: READ failed, the read returns -EIO",
            Step::ReadFolio if rd => "fuse_read_folio: iomap_read_folio, fuse_do_readfolio, READ",
            Step::ReadFolio => "fuse_read_folio: fuse_do_readfolio, READ",
            Step::ReadFolioLock if l => {
                "fuse_read_folio: folio locked, fuse_do_readfolio waits on the rb-tree"
            }
            Step::ReadFolioLock => "(L only) fuse_do_readfolio: rb-tree wait",
            Step::WbCongested => "fuse_writepages: congested, WB_SYNC_NONE skips",
            Step::CachedIoStart => "fuse_file_cached_io_open: waited",
            Step::OpenTruncSize => "fuse_do_setattr(ATTR_OPEN): i_size 0",
            Step::SendGetattr => "fuse_do_getattr: send GETATTR",
            Step::GetattrReply => "fuse_change_attributes",
            Step::GetattrStale => "fuse_change_attributes: stale, ignored",
            Step::GetattrAutoInval => {
                "fuse_change_attributes: mtime changed (auto_inval_data), invalidate_inode_pages2 follows"
            }
            Step::ShortRead => "fuse_read_update_size: short READ",
            Step::RemoteTruncate => "another client truncates (server)",
            Step::DaemonRead => "daemon reads /dev/fuse",
            Step::UringFetch => {
                "fuse_uring_ent_assign_req, fuse_uring_send_in_task: head of the ring queue to its entry"
            }
            Step::UringMigrate => "scheduler moves the task to the other CPU (task_cpu changes)",
            Step::DaemonReply => "daemon applies, replies",
            Step::DaemonReplyError => "daemon fails it: -EIO reply",
            Step::DaemonReplyShort => "daemon applies one page less, replies",
            Step::WritepageEnd => "fuse_writepage_end",
            Step::ShrinkFolio { .. } => "shrink_folio_list: folio under writeback",
            Step::ReclaimWaitDone => "shrink_folio_list: folio_wait_writeback returns",
            Step::TruncPartial => "truncate_inode_partial_folio: zero the tail",
            Step::RaAlloc => "page_cache_ra_order: folios added, locked",
            Step::RaSend if tree == Tree::V619 => "fuse_iomap_read_submit: fuse_send_readpages",
            Step::RaSend if rd => "iomap_readahead: submit_read, fuse_send_readpages",
            Step::RaSend => "fuse_readahead: fuse_send_readpages",
            Step::RaGetWait if rd => "fuse_send_readpages: fuse_get_req waits (fc->blocked)",
            Step::RaGetWait => "fuse_readahead: checked, fuse_get_req waits (fc->blocked)",
            Step::RaEmpty if rd => "(<= 6.18 only) fuse_readahead: READ with no folio",
            Step::RaEmpty => "fuse_readahead: READ with no folio (oops)",
            Step::RaStop if rd => "(<= 6.18 only) fuse_readahead: no folio fits, stop",
            Step::RaStop => "fuse_readahead: no folio fits, stop; read_pages unlocks the rest",
            Step::RaNone => "readahead: no folio to add",
            Step::WriteBeginSendRead if wb => {
                "__iomap_write_begin: fuse_iomap_read_folio_range, READ"
            }
            Step::WriteBeginSendRead => "fuse_write_begin: fuse_do_readfolio, READ",
            Step::WriteBeginRead if wb => "__iomap_write_begin: READ reply; copy, iomap_write_end",
            Step::WriteBeginRead => "fuse_write_begin: READ reply; copy, fuse_write_end",
            Step::AbortConn => "fuse_abort_conn: end_requests (-ECONNABORTED)",
            Step::TimeoutAbort => "fuse_check_timeout: a request expired, fuse_abort_conn",
            Step::TimeoutIdle => "fuse_check_timeout: nothing outstanding (or aborted)",
            Step::Signal => "request_wait_answer: signal (FUSE_INTERRUPT, or -EINTR if pending)",
            Step::SignalIdle => "signal after the syscall returned",
            Step::AioQueued => "fuse_direct_IO: fuse_aio_complete, -EIOCBQUEUED; unlock",
            Step::AioComplete => "fuse_aio_complete: last reference, ki_complete",
            Step::AioWaited => "fuse_direct_IO: wait_for_completion, fuse_write_update_attr",
            Step::AioCompleteWork => {
                "(proposal) fuse_aio_complete: last reference, queue fuse_aio_invalidate_worker"
            }
            Step::AioWorkerDone => "(proposal) fuse_aio_invalidate_worker: ki_complete",
            Step::NotifyServerWrite => "the server's file changes (another client writes)",
            Step::ReverseInvalInode => {
                "fuse_notify_inval_inode → fuse_reverse_inval_inode: attr_version++, fuse_invalidate_attr"
            }
            Step::NotifyStoreSize => "fuse_notify_store: i_size_read, fuse_write_update_attr",
            Step::NotifyStorePage => {
                "fuse_notify_store: filemap_grab_folio, fuse_copy_folio, folio_mark_uptodate, folio_unlock"
            }
        }
    }

    /// One of every step, for the generated table and the tests.
    pub const ALL: &'static [Step] = &[
        Step::Entry,
        Step::InodeLock,
        Step::DioLockShared,
        Step::UnlockReturn,
        Step::Return,
        Step::CopyPage,
        Step::FillPage,
        Step::SendThroughWrite,
        Step::FillFolio,
        Step::FillFolioLocked,
        Step::BatchWaitWb,
        Step::WriteBatchEnd,
        Step::WriteBeginWait,
        Step::FaultMapped,
        Step::FaultReadDone,
        Step::Sigbus,
        Step::MkwriteLock,
        Step::MkwriteWait,
        Step::MkwriteStore,
        Step::GupRedirty,
        Step::RangeIsWritebackL,
        Step::WbBegin,
        Step::WbFolio,
        Step::WbSkip,
        Step::WbWaitFolio,
        Step::WbSend,
        Step::WbDone,
        Step::FdataWait,
        Step::SetNowrite,
        Step::LockSetNowrite,
        Step::WaitNowrite,
        Step::SyncWritesDone,
        Step::ReleaseNowrite,
        Step::RangeHasWriteback,
        Step::SendSetattr,
        Step::SendWrite,
        Step::SendRead,
        Step::SendFsync,
        Step::SendFlush,
        Step::SendFallocate,
        Step::SendOpen,
        Step::OpenTruncAttr,
        Step::SetattrReply,
        Step::WriteReply,
        Step::Reply,
        Step::TruncLock,
        Step::TruncFolio,
        Step::InvLock,
        Step::InvLaunder,
        Step::InvRemove,
        Step::InvDone,
        Step::SetattrReturn,
        Step::ReadCopy,
        Step::ReadEof,
        Step::RaSubmit,
        Step::RaWindow,
        Step::RaAsync,
        Step::RaAdd,
        Step::RaPresent,
        Step::RaSkip,
        Step::ReadError,
        Step::ReadFolio,
        Step::ReadFolioLock,
        Step::WbCongested,
        Step::CachedIoStart,
        Step::OpenTruncSize,
        Step::SendGetattr,
        Step::GetattrReply,
        Step::GetattrStale,
        Step::GetattrAutoInval,
        Step::ShortRead,
        Step::RemoteTruncate,
        Step::DaemonRead,
        Step::UringFetch,
        Step::UringMigrate,
        Step::DaemonReply,
        Step::DaemonReplyError,
        Step::DaemonReplyShort,
        Step::WritepageEnd,
        Step::ShrinkFolio { page: 0 },
        Step::ReclaimWaitDone,
        Step::TruncPartial,
        Step::RaAlloc,
        Step::RaSend,
        Step::RaGetWait,
        Step::RaEmpty,
        Step::RaStop,
        Step::RaNone,
        Step::WriteBeginSendRead,
        Step::WriteBeginRead,
        Step::AbortConn,
        Step::TimeoutAbort,
        Step::TimeoutIdle,
        Step::Signal,
        Step::SignalIdle,
        Step::AioQueued,
        Step::AioComplete,
        Step::AioWaited,
        Step::AioCompleteWork,
        Step::AioWorkerDone,
        Step::NotifyServerWrite,
        Step::ReverseInvalInode,
        Step::NotifyStoreSize,
        Step::NotifyStorePage,
    ];
}

/// docs/model.md's generated table: every step, the function(s) it
/// stands for in each tree, and where each tree was read. Rows whose
/// names are the same in every tree are listed once.
pub fn step_tree_table() -> String {
    let mut s = String::from("| step |");
    for t in Tree::ALL {
        s.push_str(&format!(" {} |", t.label()));
    }
    s.push_str("\n|---|");
    for _ in Tree::ALL {
        s.push_str("---|");
    }
    s.push('\n');
    for step in Step::ALL {
        let name = match step {
            Step::ShrinkFolio { .. } => "ShrinkFolio".to_string(),
            _ => format!("{step:?}"),
        };
        s.push_str(&format!("| `{name}` |"));
        let first = step.kernel_fn(Tree::ALL[0]);
        if Tree::ALL.iter().all(|t| step.kernel_fn(*t) == first) {
            s.push_str(&format!(" {first} (every tree) |"));
            for _ in 1..Tree::ALL.len() {
                s.push_str(" |");
            }
        } else {
            for t in Tree::ALL {
                s.push_str(&format!(" {} |", step.kernel_fn(t)));
            }
        }
        s.push('\n');
    }
    s.push_str("\n| label | mechanics | fs/fuse/file.c read at |\n|---|---|---|\n");
    for t in Tree::ALL {
        s.push_str(&format!(
            "| {} | {:?} | {} |\n",
            t.label(),
            t.kernel(),
            t.read_at()
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuse::config::Config;
    use crate::spec::Spec;

    /// No wildcard: a new `Step` variant fails to compile here until it
    /// is added to `Step::ALL` (and so to the generated table).
    fn listed(s: Step) -> bool {
        match s {
            Step::Entry
            | Step::InodeLock
            | Step::DioLockShared
            | Step::UnlockReturn
            | Step::Return
            | Step::CopyPage
            | Step::FillPage
            | Step::SendThroughWrite
            | Step::FillFolio
            | Step::FillFolioLocked
            | Step::BatchWaitWb
            | Step::WriteBatchEnd
            | Step::WriteBeginWait
            | Step::FaultMapped
            | Step::FaultReadDone
            | Step::Sigbus
            | Step::MkwriteLock
            | Step::MkwriteWait
            | Step::MkwriteStore
            | Step::GupRedirty
            | Step::RangeIsWritebackL
            | Step::WbBegin
            | Step::WbFolio
            | Step::WbSkip
            | Step::WbWaitFolio
            | Step::WbSend
            | Step::WbDone
            | Step::FdataWait
            | Step::SetNowrite
            | Step::LockSetNowrite
            | Step::WaitNowrite
            | Step::SyncWritesDone
            | Step::ReleaseNowrite
            | Step::RangeHasWriteback
            | Step::SendSetattr
            | Step::SendWrite
            | Step::SendRead
            | Step::SendFsync
            | Step::SendFlush
            | Step::SendFallocate
            | Step::SendOpen
            | Step::OpenTruncAttr
            | Step::SetattrReply
            | Step::WriteReply
            | Step::Reply
            | Step::TruncLock
            | Step::TruncFolio
            | Step::InvLock
            | Step::InvLaunder
            | Step::InvRemove
            | Step::InvDone
            | Step::SetattrReturn
            | Step::ReadCopy
            | Step::ReadEof
            | Step::RaSubmit
            | Step::RaWindow
            | Step::RaAsync
            | Step::RaAdd
            | Step::RaPresent
            | Step::RaSkip
            | Step::ReadError
            | Step::ReadFolio
            | Step::ReadFolioLock
            | Step::WbCongested
            | Step::CachedIoStart
            | Step::OpenTruncSize
            | Step::SendGetattr
            | Step::GetattrReply
            | Step::GetattrStale
            | Step::GetattrAutoInval
            | Step::ShortRead
            | Step::RemoteTruncate
            | Step::DaemonRead
            | Step::UringFetch
            | Step::UringMigrate
            | Step::DaemonReply
            | Step::DaemonReplyError
            | Step::DaemonReplyShort
            | Step::WritepageEnd
            | Step::ShrinkFolio { .. }
            | Step::ReclaimWaitDone
            | Step::TruncPartial
            | Step::RaAlloc
            | Step::RaSend
            | Step::RaGetWait
            | Step::RaEmpty
            | Step::RaStop
            | Step::RaNone
            | Step::WriteBeginSendRead
            | Step::WriteBeginRead
            | Step::AbortConn
            | Step::TimeoutAbort
            | Step::TimeoutIdle
            | Step::Signal
            | Step::SignalIdle
            | Step::AioQueued
            | Step::AioComplete
            | Step::AioWaited
            | Step::AioCompleteWork
            | Step::AioWorkerDone => Step::ALL.contains(&s),
            Step::NotifyServerWrite
            | Step::ReverseInvalInode
            | Step::NotifyStoreSize
            | Step::NotifyStorePage => Step::ALL.contains(&s),
        }
    }

    #[test]
    fn every_step_is_listed_once() {
        for (i, s) in Step::ALL.iter().enumerate() {
            assert!(listed(*s));
            assert!(!Step::ALL[..i].contains(s), "{s:?} twice");
        }
        assert_eq!(Step::ALL.len(), 104);
    }

    #[test]
    fn every_step_has_a_name_in_every_tree() {
        for s in Step::ALL {
            for t in Tree::ALL {
                let n = s.kernel_fn(t);
                assert!(!n.trim().is_empty(), "{s:?} has no name in {}", t.label());
                // the rb-tree waits of the temp-folio era exist only in L
                let l_only = [
                    Step::WriteBeginWait,
                    Step::RangeIsWritebackL,
                    Step::ReadFolioLock,
                ];
                assert_eq!(
                    n.starts_with("(L only)"),
                    t != Tree::V615 && l_only.contains(s),
                    "{s:?} in {}: {n}",
                    t.label()
                );
                // the legacy readahead loop's paths: not in iomap-read trees
                if n.starts_with("(<= 6.18 only)") {
                    assert!(t >= Tree::V619, "{s:?} in {}", t.label());
                }
            }
        }
    }

    #[test]
    fn the_iomap_trees_name_iomap_and_the_legacy_trees_do_not() {
        for t in Tree::ALL {
            let wb = Step::WbBegin.kernel_fn(t);
            let rd = Step::ReadFolio.kernel_fn(t);
            assert_eq!(
                wb.contains("iomap_writepages"),
                t >= Tree::V617,
                "{}",
                t.label()
            );
            assert_eq!(
                wb.contains("write_cache_pages"),
                t < Tree::V617,
                "{}",
                t.label()
            );
            assert_eq!(
                rd.contains("iomap_read_folio"),
                t >= Tree::V619,
                "{}",
                t.label()
            );
        }
    }

    #[test]
    fn labels_parse_to_their_tree_and_mechanics() {
        for t in Tree::ALL {
            assert_eq!(Tree::parse(t.label()), Some(t));
            assert_eq!(Kernel::parse(t.label()), Some(t.kernel()));
        }
        for k in [Kernel::L, Kernel::T, Kernel::T2, Kernel::C] {
            assert_eq!(Tree::of(k).kernel(), k);
        }
        assert_eq!(Tree::parse("T''"), Some(Tree::V6183));
        assert_eq!(Tree::parse("6.18"), None);
    }

    fn table(kernel: &str) -> toml::Table {
        format!(
            "kernel = \"{kernel}\"\npages = 1\ninit_size = 1\ncached = [0]\ndirty = [0]\ntasks = [\"fsync\"]\n"
        )
        .parse()
        .unwrap()
    }

    /// A check's label, its mechanics and its narration agree: `T17`
    /// runs T's mechanics (the same configuration but for the tree, its
    /// iomap writeback and its readahead window rounding) and
    /// prints 6.17's names; `T` stays 6.16 and serialises as before.
    #[test]
    fn a_label_names_its_tree_in_config_and_narration() {
        let t17 = Config::from_table(&table("T17")).unwrap();
        let t = Config::from_table(&table("T")).unwrap();
        assert_eq!(
            (t17.kernel, t17.tree(), t.tree()),
            (Kernel::T, Tree::V617, Tree::V616)
        );
        assert_eq!(
            t.tree, None,
            "a state's own label adds nothing to the config"
        );
        assert!(t17.variant.iomap_wb_eof && !t.variant.iomap_wb_eof);
        assert!(t17.variant.ra_round_end && !t.variant.ra_round_end);
        let mut same = t17.clone();
        same.tree = None;
        same.variant.iomap_wb_eof = false;
        same.variant.ra_round_end = false;
        assert_eq!(
            same, t,
            "only the tree, its iomap writeback and its readahead rounding differ"
        );
        assert_eq!(crate::fuse::FuseModel::kernel_of(&t17), "T17");
        assert_eq!(crate::fuse::FuseModel::kernel_of(&t), "T");
        let m = crate::fuse::FuseModel::build(&t17).unwrap();
        let a = crate::fuse::Action {
            actor: crate::fuse::Actor::Task(0),
            step: Step::WbBegin,
        };
        assert_eq!(m.step_fn(&a), "fuse_writepages: iomap_writepages");
        assert!(!serde_json::to_string(&t).unwrap().contains("tree"));
        let mut bad = t17.clone();
        bad.kernel = Kernel::T2;
        assert!(bad.validate().unwrap_err().contains("tree T17"));
    }
}
