//! Inode io modes (fs/fuse/iomode.c, kernel-sources.md §6):
//! fi->iocachectr counts caching opens (> 0) or parallel direct writes in
//! progress (< 0); FUSE_I_CACHE_IO_MODE makes new direct writers take
//! i_rwsem exclusively; a caching open waits on direct_io_waitq until the
//! parallel writes are done. Read at torvalds/linux iomode.c 205c1d802683
//! and the fuse_dio_lock / fuse_dio_unlock of file.c (6.10+).

use super::model::FuseModel;
use super::state::*;
use super::step::Step;

impl FuseModel {
    /// fuse_file_cached_io_start when it need not wait (iocachectr >= 0):
    /// the open enters caching mode. Runs inside the step that precedes it
    /// (fuse_finish_open / fuse_file_mmap, no scheduling point). Returns
    /// false, having set FUSE_I_CACHE_IO_MODE, when the caller must wait.
    pub(super) fn cached_io_start(s: &mut State) -> bool {
        if s.iocachectr < 0 {
            // "Setting the bit advises new direct-io writes to use an
            // exclusive lock - without it the wait below might be forever."
            s.cache_io_mode = true;
            return false;
        }
        s.cache_io_mode = true;
        s.iocachectr += 1;
        true
    }

    /// The wait in fuse_file_cached_io_start: wait_event(direct_io_waitq,
    /// iocachectr >= 0), then enter caching mode.
    pub(super) fn op_cached_io_start(&self, s: &mut State, t: usize) -> Option<Step> {
        if s.iocachectr < 0 && !self.cfg.variant.mut_iomode_no_wait {
            return None;
        }
        if s.iocachectr < 0 {
            // the mutant: caching mode without waiting; the counter is
            // left to the parallel writers
            s.cache_io_mode = true;
        } else {
            Self::cached_io_start(s);
        }
        self.advance(s, t);
        Some(Step::CachedIoStart)
    }

    /// fuse_file_cached_io_end (fuse_file_io_release of a caching open at
    /// the last fuse_file_put).
    pub(super) fn cached_io_end(s: &mut State) {
        s.iocachectr -= 1;
        if s.iocachectr == 0 {
            s.cache_io_mode = false;
        }
    }

    /// fuse_dio_wr_exclusive_lock plus the re-check under the shared lock
    /// in fuse_dio_lock: a parallel-capable direct write (FOPEN_PARALLEL_
    /// DIRECT_WRITES) goes exclusive when FUSE_I_CACHE_IO_MODE is set, when
    /// it extends the file, or when fuse_inode_uncached_io_start refuses
    /// (iocachectr > 0). Evaluated when the lock is taken (see
    /// docs/model.md, abstractions).
    pub(super) fn dio_wants_exclusive(s: &State, past_eof: bool) -> bool {
        past_eof || s.cache_io_mode || s.iocachectr > 0
    }

    /// The shared path of fuse_dio_lock took i_rwsem shared:
    /// fuse_inode_uncached_io_start(fi, NULL).
    pub(super) fn uncached_io_start(s: &mut State) {
        s.iocachectr -= 1;
    }

    /// i1: a page-cache store (write(2) into the page cache, a MAP_SHARED
    /// store) while a parallel direct write holds i_rwsem shared: the
    /// exclusion the io-modes exist for.
    pub(super) fn check_cached_store(s: &mut State) {
        if s.rwsem.readers > 0 {
            s.viol |= VIOL_IOMODE;
        }
    }

    /// fuse_dio_unlock of a shared holder: fuse_inode_uncached_io_end
    /// (iocachectr++, wake direct_io_waitq at 0; waiters are re-evaluated
    /// in every state), then inode_unlock_shared.
    pub(super) fn uncached_io_end(s: &mut State) {
        s.iocachectr += 1;
    }
}
