//! Kernel task programs. Each task kind is a straight-line list of ops
//! built from the kernel state and variant flags: kernel versions and
//! review proposals are data here, never copied code.
//!
//! An op may take several atomic steps (its phases); each step is one
//! region between scheduling points and is named by a `Step`, which maps to
//! the kernel function(s) it stands for (docs/model.md has the table).

use super::config::{Config, TaskSpec};

/// Which reply handler a `Recv` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecvKind {
    /// fuse_do_setattr after SETATTR: i_size_write, __fuse_release_nowrite.
    Setattr { release: bool },
    /// fuse_direct_io / fuse_write_update_attr after a direct WRITE.
    DirectWrite,
    /// fuse_open with FUSE_ATOMIC_O_TRUNC: fuse_truncate_update_attr
    /// (i_size_write(0)).
    OpenTrunc,
    /// A READ, FSYNC or FLUSH reply: nothing but wake the caller.
    Plain,
    /// fuse_do_getattr's reply: fuse_change_attributes.
    Getattr,
    /// One reply of fuse_direct_io's loop over max_write / max_read
    /// chunks: a short reply ends the loop (skip the `skip` ops of the
    /// remaining chunks).
    DirectChunk { skip: u8 },
    /// One reply of fuse_perform_write's loop over max_write chunks
    /// (fuse_send_write_pages): a short or failed reply ends the loop
    /// (skip the `skip` ops of the remaining chunks).
    ThroughChunk { skip: u8 },
    /// With units below a page: the reply of the batch `FillUnits` built
    /// (fuse_send_write_pages' folio loop: uptodate cleared on an error
    /// or a short write, the locked folio unlocked); then
    /// fuse_perform_write's loop goes back to `FillUnits` for the rest.
    ThroughBatch,
}

/// What a `Send` op puts on /dev/fuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SendKind {
    Setattr,
    ThroughWrite,
    Open,
    Fallocate,
    DirectWrite,
    DirectRead,
    Fsync,
    Flush,
    Getattr,
    /// One max_write / max_read chunk of fuse_direct_io.
    DirectChunk {
        write: bool,
        first: u8,
        n: u8,
    },
    /// One max_write chunk of fuse_perform_write (fuse_send_write_pages).
    ThroughChunk {
        first: u8,
        n: u8,
    },
    /// With units below a page: the WRITE of the batch `FillUnits` built
    /// (the task's `bfirst`, `bn`).
    ThroughBatch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Readahead of `first..first+n`: add the missing folios locked, then
    /// fuse_readahead's rounds (lfolio.rs).
    Readahead { first: u8, n: u8 },
    /// Ghost: syscall entry, snapshot obligations for d / b1.
    Entry,
    /// inode_lock(inode) (exclusive i_rwsem).
    InodeLock,
    /// fuse_dio_lock: shared i_rwsem with `Config::parallel_dio` unless the
    /// write goes past EOF, else exclusive.
    DioLock,
    /// A read fault (MAP_PRIVATE): filemap_fault, READ with the folio
    /// locked; done once the folio is uptodate.
    PrivateFault { page: u8 },
    /// inode_unlock, and for writers the syscall returns (ghost window).
    UnlockReturn { unlock: bool },
    /// generic_perform_write: per page write_begin, copy, write_end.
    CopyPages { first: u8, n: u8 },
    /// fuse_perform_write → fuse_fill_write_pages: per page, lock the
    /// folio, copy, mark uptodate (not dirty), unlock.
    FillPages { first: u8, n: u8 },
    /// fuse_perform_write's loop with units below a page
    /// (`units_per_page` > 1) over the write `first..first+n`: one
    /// fuse_fill_write_pages batch, a folio per step, from where the last
    /// batch's WRITE ended; a folio left not uptodate stays locked and
    /// ends the batch (write.rs, `op_fill_units`).
    FillUnits { first: u8, n: u8 },
    /// fuse_send_write_pages: folio_wait_writeback on each folio of the
    /// batch `FillUnits` built.
    BatchWait,
    /// Page fault on a MAP_SHARED page, then fuse_page_mkwrite's folio_lock.
    MkwriteFault { page: u8 },
    /// fuse_page_mkwrite: folio_wait_writeback (holding the folio lock).
    MkwriteWait { page: u8 },
    /// The store; folio_mark_dirty; folio_unlock.
    MkwriteStore { page: u8 },
    /// unpin_user_pages_dirty_lock: folio_lock, folio_mark_dirty, unlock
    /// (no page_mkwrite, no writeback wait).
    GupRedirty { page: u8 },
    /// fuse_writepages → write_cache_pages/writeback_iter → fill → send.
    WritePages { first: u8, n: u8, all: bool },
    /// filemap_fdatawait_range.
    FdataWait { first: u8, n: u8 },
    /// fuse_set_nowrite, first half: writectr += FUSE_NOWRITE.
    SetNowrite,
    /// fuse_direct_io read path: inode_lock, then fuse_set_nowrite.
    LockSetNowrite,
    /// fuse_set_nowrite, second half: wait_event(writectr == FUSE_NOWRITE).
    WaitNowrite,
    /// fuse_set_nowrite's wait, then fuse_release_nowrite (the end of
    /// fuse_sync_writes); `unlock` also drops inode_lock (direct read).
    SyncWritesWait { unlock: bool },
    /// fuse_release_nowrite.
    ReleaseNowrite,
    /// fuse_direct_io (B): if !filemap_range_has_writeback skip `skip` ops.
    IfRangeHasWriteback { first: u8, n: u8, skip: u8 },
    /// Send a synchronous request.
    Send(SendKind),
    /// Wait for the reply and run the caller's post-reply code.
    Recv(RecvKind),
    /// truncate_pagecache(inode, i_size) (skipped if the size is unchanged).
    TruncatePagecache,
    /// truncate_pagecache_range over `first..first+n`.
    TruncateRange { first: u8, n: u8 },
    /// invalidate_inode_pages2_range over `first..first+n`; `if_resized`:
    /// only when fuse_do_setattr changed the size.
    Invalidate { first: u8, n: u8, if_resized: bool },
    /// fuse_do_setattr's end: clear FUSE_I_SIZE_UNSTABLE; inode_unlock.
    SetattrReturn,
    /// filemap_read over `first..first+n` (read.rs): copy uptodate folios,
    /// readahead on a miss, read_folio on a folio left not uptodate; stops
    /// at EOF.
    BufRead { first: u8, n: u8 },
    /// fuse_direct_IO: a read at or past i_size returns 0 without a READ
    /// (decided with no scheduling point: resolved in `skip_empty`, which
    /// jumps to the task's last op).
    IfReadPastEof { first: u8 },
    /// fuse_update_get_attr with valid attributes (`attr_valid`): skip
    /// the GETATTR and what follows it (`skip` ops) unless
    /// fi->inval_mask has STATX_SIZE (autoinval.rs).
    IfAttrValid { skip: u8 },
    /// fuse_file_cached_io_start: enter caching io-mode, waiting on
    /// direct_io_waitq while parallel direct writes are in progress.
    CachedIoStart,
    /// handle_truncate → do_truncate → fuse_do_setattr(ATTR_OPEN) with
    /// atomic_o_trunc: i_size_write(0), no request (the OPEN truncated).
    OpenTruncSize,
    /// fuse_fsync's file_check_and_advance_wb_err (`close == false`) or
    /// fuse_flush's filemap_check_errors: on an error skip `skip` ops (the
    /// request). Done inline, never a step of its own.
    CheckWbErr { close: bool, skip: u8 },
    /// A server-side truncation by another client.
    RemoteTruncate,
    /// fuse_file_put's last reference: fuse_file_io_release of a caching
    /// open (iocachectr--, FUSE_I_CACHE_IO_MODE cleared at 0). Inline.
    IoRelease,
    /// After a split direct write: fuse_write_update_attr(pos + written).
    DirectWriteDone,
    /// After a split write-through write: fuse_perform_write's
    /// fuse_write_update_attr(pos + written) and clear_bit
    /// (FUSE_I_SIZE_UNSTABLE).
    ThroughWriteDone,
    /// fuse_abort_conn (`timeout`: called by fuse_check_timeout, only
    /// once a request is outstanding) (transport.rs).
    Abort { timeout: bool },
    /// A signal to task `target` in request_wait_answer (transport.rs).
    Signal { target: u8, fatal: bool },
    /// fuse_direct_IO's start on an asynchronous kiocb: i_size_read, a
    /// write past it is blocking (aio.rs). Inline.
    AioStart,
    /// The submitter's fuse_aio_complete, -EIOCBQUEUED, the caller's
    /// unlock (skipped by a blocking write) (aio.rs).
    AioQueued { unlock: bool },
    /// The completion, once no request is outstanding (aio.rs).
    AioComplete,
    /// A server notification's steps (notify.rs).
    Notify(super::notify::NotifyOp),
}

/// Where an `env` task's store begins: after its load (`Entry`,
/// `PrivateFault`).
pub const ENV_STORE_START: usize = 2;

/// Builds the program of one task from its spec and the configuration.
pub fn build(cfg: &Config, spec: &TaskSpec) -> Vec<Op> {
    let v = &cfg.variant;
    let pages = cfg.pages;
    let mut p = Vec::new();
    // Does fuse_sync_writes exist (and is it kept in this call site)?
    let nowritectr = v.p_no_writectr;
    // fuse_sync_writes under an already held inode_lock.
    let sync_writes = |p: &mut Vec<Op>| {
        if !nowritectr {
            p.push(Op::SetNowrite);
            p.push(Op::SyncWritesWait { unlock: false });
        }
    };
    // fuse_do_setattr(ATTR_SIZE) under inode_lock: NOWRITE, SETATTR,
    // i_size_write + __fuse_release_nowrite, then truncate_pagecache and
    // invalidate_inode_pages2 (before the release in the mutant).
    let do_setattr_size = |p: &mut Vec<Op>| {
        p.push(Op::InodeLock);
        if !nowritectr {
            p.push(Op::SetNowrite);
            p.push(Op::WaitNowrite);
        }
        p.push(Op::Send(SendKind::Setattr));
        let under = v.mut_invalidate_under_nowrite && !nowritectr;
        p.push(Op::Recv(RecvKind::Setattr {
            release: !nowritectr && !under,
        }));
        p.push(Op::TruncatePagecache);
        p.push(Op::Invalidate {
            first: 0,
            n: pages,
            if_resized: true,
        });
        if under {
            p.push(Op::ReleaseNowrite);
        }
        p.push(Op::SetattrReturn);
    };
    // filemap_write_and_wait_range over a range.
    let flush_range = |p: &mut Vec<Op>, first: u8, n: u8| {
        p.push(Op::WritePages {
            first,
            n,
            all: true,
        });
        p.push(Op::FdataWait { first, n });
    };
    // fuse_direct_io (B) for a read: if the range has writeback,
    // inode_lock, fuse_sync_writes, inode_unlock.
    let read_sync_writes = |p: &mut Vec<Op>, first: u8, n: u8| {
        p.push(Op::IfRangeHasWriteback { first, n, skip: 2 });
        p.push(Op::LockSetNowrite);
        p.push(Op::SyncWritesWait { unlock: true });
    };
    // fuse_direct_io step (A): filemap_write_and_wait_range of the range.
    let dio_flush = |write: bool| -> bool {
        if v.p_writeiter {
            write
        } else {
            v.p_syncwrites || cfg.direct_io_allow_mmap || v.dio_flush_always
        }
    };
    // fuse_direct_io's request loop (D): one request per max_write /
    // max_read chunk, ended by a short reply; unsplit, the Send/Recv pair
    // of before.
    let direct_requests = |p: &mut Vec<Op>, write: bool, first: u8, n: u8| {
        let lim = cfg.limit_units(write).map(|l| l.min(u8::MAX as u16) as u8);
        match lim {
            Some(l) if l < n => {
                let mut chunks = vec![];
                let mut a = first;
                while a < first + n {
                    let m = l.min(first + n - a);
                    chunks.push((a, m));
                    a += m;
                }
                let k = chunks.len();
                for (i, &(a, m)) in chunks.iter().enumerate() {
                    p.push(Op::Send(SendKind::DirectChunk {
                        write,
                        first: a,
                        n: m,
                    }));
                    p.push(Op::Recv(RecvKind::DirectChunk {
                        skip: ((k - 1 - i) * 2) as u8,
                    }));
                }
                if write {
                    p.push(Op::DirectWriteDone);
                }
            }
            _ => {
                if write {
                    p.push(Op::Send(SendKind::DirectWrite));
                    p.push(Op::Recv(RecvKind::DirectWrite));
                } else {
                    p.push(Op::Send(SendKind::DirectRead));
                    p.push(Op::Recv(RecvKind::Plain));
                }
            }
        }
    };
    let aio = cfg.async_dio && spec.is_aio();
    // fuse_direct_io's request loop with io->async (aio.rs): every
    // chunk sent in the background, no reply waited for in the loop.
    let aio_requests = |p: &mut Vec<Op>, write: bool, first: u8, n: u8| {
        let lim = cfg.limit_units(write).map(|l| l.min(u8::MAX as u16) as u8);
        match lim {
            Some(l) if l < n => {
                let mut a = first;
                while a < first + n {
                    let m = l.min(first + n - a);
                    p.push(Op::Send(SendKind::DirectChunk {
                        write,
                        first: a,
                        n: m,
                    }));
                    a += m;
                }
            }
            _ => p.push(Op::Send(if write {
                SendKind::DirectWrite
            } else {
                SendKind::DirectRead
            })),
        }
    };
    // fuse_direct_io's requests: synchronous (above) or, for an aio
    // task, all sent, then fuse_direct_IO's -EIOCBQUEUED (`unlock`: the
    // caller's unlock) and the completion; `e_sent`: b359af8275a9's (E)
    // in fuse_direct_io right after the loop (an aio FOPEN_DIRECT_IO
    // write without p_aio_inval_worker)
    let requests = |p: &mut Vec<Op>, write: bool, first: u8, n: u8, unlock: bool, e_sent: bool| {
        if aio {
            aio_requests(p, write, first, n);
            if e_sent {
                p.push(Op::Invalidate {
                    first,
                    n,
                    if_resized: false,
                });
            }
            p.push(Op::AioQueued { unlock });
            p.push(Op::AioComplete);
        } else {
            direct_requests(p, write, first, n);
        }
    };
    // fuse_direct_io step (B): fuse_sync_writes if the range has writeback.
    let dio_sync_writes = !(nowritectr || v.p_syncwrites || v.p_writeiter);
    // (B) for a write: if filemap_range_has_writeback, fuse_sync_writes;
    // with fix_pdio_wait_range, filemap_fdatawait_range of the range
    let write_b = |p: &mut Vec<Op>, first: u8, n: u8| {
        if v.fix_pdio_wait_range {
            p.push(Op::FdataWait { first, n });
        } else {
            p.push(Op::IfRangeHasWriteback { first, n, skip: 2 });
            sync_writes(p);
        }
    };
    match *spec {
        TaskSpec::Write { first, n } if cfg.writeback_cache => {
            // fuse_cache_write_iter → generic_file_write_iter (writeback_cache)
            p.push(Op::InodeLock);
            p.push(Op::CopyPages { first, n });
            p.push(Op::UnlockReturn { unlock: true });
        }
        TaskSpec::Write { first, n } => {
            // fuse_cache_write_iter (write-through): inode_lock;
            // fuse_perform_write: fill the folios, folio_wait_writeback on
            // each (fuse_send_write_pages), a synchronous WRITE,
            // fuse_write_update_attr; inode_unlock. The folios are not
            // dirtied, and the WRITE bypasses writectr/queued_writes.
            p.push(Op::InodeLock);
            // fuse_fill_write_pages takes at most fc->max_write bytes and
            // fc->max_pages folios (fuse_wr_pages) per round
            let lim = cfg
                .limit_units(true)
                .unwrap_or(u16::MAX)
                .min(cfg.max_pages as u16 * cfg.per_page())
                .min(u8::MAX as u16) as u8;
            if cfg.sub_page() {
                // units below a page: the batches depend on the page
                // cache (a folio left not uptodate ends one), so the loop
                // is the program's: fill, wait, WRITE, reply, and back
                // to the fill while the write has units left
                p.push(Op::FillUnits { first, n });
                p.push(Op::BatchWait);
                p.push(Op::Send(SendKind::ThroughBatch));
                p.push(Op::Recv(RecvKind::ThroughBatch));
                p.push(Op::ThroughWriteDone);
            } else if lim < n {
                // the loop: per chunk fill, folio_wait_writeback, one
                // synchronous WRITE; a short or failed reply ends it;
                // then one fuse_write_update_attr
                let mut chunks = vec![];
                let mut a = first;
                while a < first + n {
                    let m = lim.min(first + n - a);
                    chunks.push((a, m));
                    a += m;
                }
                let k = chunks.len();
                for (i, &(a, m)) in chunks.iter().enumerate() {
                    p.push(Op::FillPages { first: a, n: m });
                    p.push(Op::FdataWait { first: a, n: m });
                    p.push(Op::Send(SendKind::ThroughChunk { first: a, n: m }));
                    p.push(Op::Recv(RecvKind::ThroughChunk {
                        skip: ((k - 1 - i) * 4) as u8,
                    }));
                }
                p.push(Op::ThroughWriteDone);
            } else {
                p.push(Op::FillPages { first, n });
                p.push(Op::FdataWait { first, n });
                p.push(Op::Send(SendKind::ThroughWrite));
                p.push(Op::Recv(RecvKind::DirectWrite));
            }
            p.push(Op::UnlockReturn { unlock: true });
        }
        TaskSpec::Mmap { page } => {
            p.push(Op::MkwriteFault { page });
            if !v.mut_mkwrite_no_wait {
                p.push(Op::MkwriteWait { page });
            }
            p.push(Op::MkwriteStore { page });
        }
        TaskSpec::Fault { page, .. } => {
            // a read fault returns page-cache data: its window opens here (b3)
            p.push(Op::Entry);
            p.push(Op::PrivateFault { page });
        }
        TaskSpec::EnvAccess { page, .. } => {
            // a load (as `fault`), then a store (as `mmap`): the store
            // starts at ENV_STORE_START (FuseModel::store_start)
            p.push(Op::Entry);
            p.push(Op::PrivateFault { page });
            debug_assert_eq!(p.len(), ENV_STORE_START);
            p.push(Op::MkwriteFault { page });
            if !v.mut_mkwrite_no_wait {
                p.push(Op::MkwriteWait { page });
            }
            p.push(Op::MkwriteStore { page });
        }
        TaskSpec::Stat => {
            // fuse_update_attributes(STATX_SIZE) with expired attributes:
            // fuse_do_getattr; fuse_change_attributes; without
            // writeback_cache a changed size also truncates and
            // invalidates the page cache (no inode lock)
            getattr_and_change(&mut p, pages);
            p.push(Op::UnlockReturn { unlock: false });
        }
        TaskSpec::RemoteTruncate { .. } => {
            p.push(Op::RemoteTruncate);
        }
        TaskSpec::DioMmap { page } => {
            // fuse_file_mmap of a FOPEN_DIRECT_IO open (MAP_SHARED,
            // direct_io_allow_mmap): invalidate_inode_pages2, then
            // fuse_file_cached_io_open; then the store as for `mmap`
            p.push(Op::Invalidate {
                first: 0,
                n: pages,
                if_resized: false,
            });
            p.push(Op::CachedIoStart);
            p.push(Op::MkwriteFault { page });
            if !v.mut_mkwrite_no_wait {
                p.push(Op::MkwriteWait { page });
            }
            p.push(Op::MkwriteStore { page });
        }
        TaskSpec::Open {
            trunc,
            keep_cache,
            direct,
        } => {
            // do_sys_open → vfs_open → fuse_open
            let atomic = trunc && cfg.atomic_o_trunc;
            // fuse_open takes inode_lock and FUSE_NOWRITE around the OPEN
            // only with writeback_cache (is_wb_truncate; DAX not modelled)
            let locked = atomic && cfg.writeback_cache;
            if locked {
                p.push(Op::InodeLock);
                if !nowritectr {
                    p.push(Op::SetNowrite);
                    p.push(Op::WaitNowrite);
                }
            }
            p.push(Op::Send(SendKind::Open));
            if atomic {
                p.push(Op::Recv(RecvKind::OpenTrunc));
                // fuse_finish_open → fuse_file_io_open
                if !direct {
                    p.push(Op::CachedIoStart);
                }
                if locked && !nowritectr {
                    p.push(Op::ReleaseNowrite);
                }
                if locked {
                    p.push(Op::TruncatePagecache);
                } else {
                    // truncate_pagecache(inode, 0) with no inode_lock: a
                    // write-through write may change i_size meanwhile, so
                    // the range is fixed at 0.. (the op truncating at the
                    // current i_size would stop early)
                    p.push(Op::TruncateRange {
                        first: 0,
                        n: cfg.pages,
                    });
                }
                // fuse_open drops inode_lock (if it took it) and returns
                p.push(Op::UnlockReturn { unlock: locked });
                // do_open → handle_truncate → do_truncate: inode_lock,
                // notify_change → fuse_do_setattr(ATTR_OPEN): with
                // atomic_o_trunc, i_size_write(0) and truncate_pagecache(0),
                // no SETATTR, no FUSE_NOWRITE
                if v.fix_otrunc_setattr {
                    // fix (b): SETATTR(size=0) under FUSE_NOWRITE, as
                    // without atomic_o_trunc
                    do_setattr_size(&mut p);
                } else {
                    p.push(Op::InodeLock);
                    // fix (a): return at once, fuse_open truncated
                    if !v.fix_otrunc_keep_size {
                        p.push(Op::OpenTruncSize);
                        p.push(Op::TruncatePagecache);
                    }
                    p.push(Op::UnlockReturn { unlock: true });
                }
            } else {
                p.push(Op::Recv(RecvKind::Plain));
                // fuse_finish_open → fuse_file_io_open
                if !direct {
                    p.push(Op::CachedIoStart);
                }
                if !keep_cache {
                    // fuse_open: invalidate_inode_pages2 (launders, waits)
                    p.push(Op::Invalidate {
                        first: 0,
                        n: pages,
                        if_resized: false,
                    });
                }
                if trunc {
                    // handle_truncate → do_truncate → fuse_do_setattr(0)
                    do_setattr_size(&mut p);
                } else {
                    p.push(Op::UnlockReturn { unlock: false });
                }
            }
        }
        TaskSpec::Punch { first, n } => {
            // fuse_file_fallocate(PUNCH_HOLE | KEEP_SIZE)
            p.push(Op::InodeLock);
            // fuse_writeback_range: filemap_write_and_wait_range(start,
            // LLONG_MAX), then fuse_sync_writes
            p.push(Op::WritePages {
                first,
                n: pages - first,
                all: true,
            });
            p.push(Op::FdataWait {
                first,
                n: pages - first,
            });
            sync_writes(&mut p);
            // FALLOCATE is sent without FUSE_NOWRITE held (kernel-sources.md §10(g))
            p.push(Op::Send(SendKind::Fallocate));
            p.push(Op::Recv(RecvKind::Plain));
            p.push(Op::TruncateRange { first, n });
            p.push(Op::UnlockReturn { unlock: true });
        }
        TaskSpec::Gup { page } => {
            p.push(Op::MkwriteFault { page });
            if !v.mut_mkwrite_no_wait {
                p.push(Op::MkwriteWait { page });
            }
            p.push(Op::MkwriteStore { page });
            p.push(Op::GupRedirty { page });
        }
        TaskSpec::Writeback { all } => {
            p.push(Op::WritePages {
                first: 0,
                n: pages,
                all,
            });
        }
        TaskSpec::Truncate { .. } => {
            // do_truncate → notify_change → fuse_setattr
            do_setattr_size(&mut p);
        }
        TaskSpec::Fsync | TaskSpec::Msync { .. } => {
            // fuse_fsync(file, start, end, datasync); msync(MS_SYNC) is
            // vfs_fsync_range over the mapped range
            let (first, n) = spec.range().unwrap_or((0, pages));
            p.push(Op::Entry);
            p.push(Op::InodeLock);
            p.push(Op::WritePages {
                first,
                n,
                all: true,
            });
            if !v.mut_fsync_no_wait {
                p.push(Op::FdataWait { first, n });
                if !v.p_syncwrites && !v.p_writeiter {
                    sync_writes(&mut p);
                }
            }
            p.push(Op::CheckWbErr {
                close: false,
                skip: 2,
            });
            p.push(Op::Send(SendKind::Fsync));
            p.push(Op::Recv(RecvKind::Plain));
            p.push(Op::UnlockReturn { unlock: true });
        }
        TaskSpec::Read { first, n, .. } => {
            // fuse_file_read_iter → fuse_cache_read_iter →
            // generic_file_read_iter → filemap_read
            p.push(Op::Entry);
            if cfg.auto_inval_data {
                // fuse_cache_read_iter: fuse_update_attributes(inode,
                // file, STATX_SIZE) first (attributes timed out, or
                // invalidated: GETATTR); fuse_change_attributes_i
                // truncates and invalidates on a size change, invalidates
                // on an mtime change (autoinval.rs)
                if cfg.attr_valid {
                    p.push(Op::IfAttrValid { skip: 4 });
                }
                getattr_and_change(&mut p, pages);
            }
            p.push(Op::BufRead { first, n });
        }
        TaskSpec::Munmap => {
            // remove_vma → fuse_vma_close → write_inode_now(inode, 1)
            p.push(Op::WritePages {
                first: 0,
                n: pages,
                all: true,
            });
            p.push(Op::FdataWait { first: 0, n: pages });
        }
        TaskSpec::SyncRange { first, n } => {
            // sync_file_range(SYNC_FILE_RANGE_WRITE) →
            // __filemap_fdatawrite_range(WB_SYNC_NONE)
            p.push(Op::WritePages {
                first,
                n,
                all: false,
            });
        }
        TaskSpec::Close | TaskSpec::CloseRelease => {
            // filp_flush → fuse_flush: write_inode_now(inode, 1)
            p.push(Op::Entry);
            p.push(Op::WritePages {
                first: 0,
                n: pages,
                all: true,
            });
            p.push(Op::FdataWait { first: 0, n: pages });
            if v.flush_sync_writes && !nowritectr {
                p.push(Op::InodeLock);
                sync_writes(&mut p);
                p.push(Op::UnlockReturn { unlock: true });
            }
            p.push(Op::CheckWbErr {
                close: true,
                skip: 2,
            });
            p.push(Op::Send(SendKind::Flush));
            p.push(Op::Recv(RecvKind::Plain));
            if let TaskSpec::CloseRelease = spec {
                // __fput → fuse_release: with writeback_cache,
                // write_inode_now(inode, 1) again ("writes racing with
                // the close"); fuse_release_common → fuse_file_put
                if cfg.writeback_cache {
                    flush_range(&mut p, 0, pages);
                }
                p.push(Op::IoRelease);
            }
            p.push(Op::UnlockReturn { unlock: false });
        }
        TaskSpec::DioWrite { first, n, .. } => {
            // fuse_direct_write_iter: fuse_dio_lock
            p.push(if cfg.parallel_dio {
                Op::DioLock
            } else {
                Op::InodeLock
            });
            if aio {
                // fuse_direct_IO (fuse_direct_write_iter, !is_sync_kiocb)
                p.push(Op::AioStart);
            }
            if !v.mut_dio_write_no_flush {
                if dio_flush(true) {
                    // (A)
                    p.push(Op::WritePages {
                        first,
                        n,
                        all: true,
                    });
                    p.push(Op::FdataWait { first, n });
                }
                if dio_sync_writes {
                    // (B)
                    write_b(&mut p, first, n);
                }
                // (C), since 80e4f25262f9 (6.6)
                if !v.dio_write_no_invalidate {
                    p.push(Op::Invalidate {
                        first,
                        n,
                        if_resized: false,
                    });
                }
            }
            // (E) as b359af8275a9 placed it: in fuse_direct_io, right
            // after the loop sent every chunk (res counts the bytes
            // submitted); p_aio_inval_worker moves it after
            // fuse_direct_IO returns (below)
            let e_sent = v.dio_invalidate_after_write && !v.p_aio_inval_worker;
            requests(&mut p, true, first, n, true, e_sent);
            // (E); an aio write without p_aio_inval_worker had it above
            if v.dio_invalidate_after_write && !(aio && !v.p_aio_inval_worker) {
                p.push(Op::Invalidate {
                    first,
                    n,
                    if_resized: false,
                });
            }
            p.push(Op::UnlockReturn { unlock: true });
        }
        TaskSpec::DioRead { first, n, .. } => {
            // fuse_direct_read_iter: no inode lock
            p.push(Op::Entry);
            if aio {
                // fuse_direct_IO: a read at or past EOF returns 0
                p.push(Op::IfReadPastEof { first });
                p.push(Op::AioStart);
            }
            if dio_flush(false) {
                flush_range(&mut p, first, n);
            }
            if dio_sync_writes {
                read_sync_writes(&mut p, first, n);
            }
            requests(&mut p, false, first, n, false, false);
            p.push(Op::UnlockReturn { unlock: false });
        }
        TaskSpec::OdirectWrite { first, n, .. } => {
            // generic_file_write_iter → generic_file_direct_write
            p.push(Op::InodeLock);
            // kiocb_invalidate_pages → filemap_invalidate_pages
            flush_range(&mut p, first, n);
            p.push(Op::Invalidate {
                first,
                n,
                if_resized: false,
            });
            // fuse_direct_IO → fuse_direct_io: (A), (C) skipped (no FOPEN_DIRECT_IO)
            if aio {
                p.push(Op::AioStart);
            }
            if dio_sync_writes {
                write_b(&mut p, first, n);
            }
            requests(&mut p, true, first, n, true, false);
            // kiocb_invalidate_post_direct_write
            if !v.mut_odirect_no_post_invalidate {
                p.push(Op::Invalidate {
                    first,
                    n,
                    if_resized: false,
                });
            }
            p.push(Op::UnlockReturn { unlock: true });
        }
        TaskSpec::OdirectRead { first, n, .. } => {
            // generic_file_read_iter: kiocb_write_and_wait, then fuse_direct_IO
            p.push(Op::Entry);
            flush_range(&mut p, first, n);
            // fuse_direct_IO: a read at or past EOF returns 0, no READ
            p.push(Op::IfReadPastEof { first });
            if aio {
                p.push(Op::AioStart);
            }
            if dio_sync_writes {
                read_sync_writes(&mut p, first, n);
            }
            requests(&mut p, false, first, n, false, false);
            p.push(Op::UnlockReturn { unlock: false });
        }
        TaskSpec::Readahead { first, n } => {
            // page_cache_ra_order -> read_pages -> fuse_readahead (lfolio.rs)
            p.push(Op::Readahead { first, n });
        }
        TaskSpec::Abort => p.push(Op::Abort { timeout: false }),
        TaskSpec::Timeout => p.push(Op::Abort { timeout: true }),
        TaskSpec::Signal { target, fatal } => p.push(Op::Signal { target, fatal }),
        TaskSpec::NotifyInval { .. } | TaskSpec::NotifyStore { .. } => {
            super::notify::build(cfg, spec, &mut p)
        }
    }
    p
}

/// fuse_do_getattr, then fuse_change_attributes: a changed size truncates
/// and invalidates the page cache (without writeback_cache; with
/// auto_inval_data a moved mtime invalidates too, autoinval.rs).
fn getattr_and_change(p: &mut Vec<Op>, pages: u8) {
    p.push(Op::Send(SendKind::Getattr));
    p.push(Op::Recv(RecvKind::Getattr));
    p.push(Op::TruncatePagecache);
    p.push(Op::Invalidate {
        first: 0,
        n: pages,
        if_resized: true,
    });
}
