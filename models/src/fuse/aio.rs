//! Asynchronous direct I/O (fs/fuse/file.c fuse_direct_IO,
//! fuse_async_req_send, fuse_aio_complete_req, fuse_aio_complete), issue
//! 22 item 1. Read at torvalds/linux v6.16 (the same code in 6.17 and
//! 6.18); the design is bcba24cc ("fuse: enable asynchronous
//! processing direct IO", 3.10).
//!
//! A direct task on an asynchronous kiocb (`aio dio-write 0+1`: io_submit
//! or io_uring) on a connection with FUSE_ASYNC_DIO (`async_dio`):
//! - fuse_direct_IO reads i_size; a write past it is *blocking* ("We
//!   cannot asynchronously extend the size of a file"): it behaves as a
//!   synchronous one, except that every chunk is sent before any reply is
//!   waited for, and a short reply fails the whole write with -EIO
//!   (fuse_get_res_by_io);
//! - otherwise fuse_direct_io sends every max_write / max_read chunk in
//!   the background (fuse_async_req_send → fuse_simple_background; each
//!   send may wait in fuse_get_req while fc->blocked), drops the
//!   submitter's reference (fuse_aio_complete(io, 0, -1)) and returns
//!   -EIOCBQUEUED. The caller then unlocks: fuse_direct_write_iter's
//!   fuse_dio_unlock (a shared holder also ends the uncached io-mode,
//!   fuse_inode_uncached_io_end), fuse_cache_write_iter's inode_unlock;
//!   generic_file_direct_write skips kiocb_invalidate_post_direct_write
//!   (`written` is -EIOCBQUEUED). The thread's next syscall may start
//!   (`AioQueued`).
//! - Each reply runs fuse_aio_complete_req in the replying context: a
//!   short write or an error is recorded in the fuse_io_priv. When the
//!   last reference goes, fuse_aio_complete bumps fi->attr_version (if
//!   the result is not an error) and calls ki_complete: no i_size update
//!   (the write did not extend), no page-cache invalidation.
//!
//! Abstraction: the completion (fuse_aio_complete's attr_version bump
//! and ki_complete) is the aio task's own step `AioComplete`, enabled
//! once none of its requests is outstanding and after `AioQueued`,
//! rather than part of the last reply's step. In the kernel it runs in
//! the replying context, or in fuse_direct_IO before the unlock if every
//! reply came first; the model delays it to any later point. The task's
//! write counts as returned (the ghost window of b1/b3/a3 closes) at
//! that step, so reads in the gap carry no obligation (weaker, never a
//! false alarm). A GETATTR sent or answered in the gap sees the other
//! attr_version than the kernel would; a non-extending write does not
//! move the server's size past i_size, so no size the model tracks
//! changes. Not modelled either: a *synchronous* O_DIRECT request with
//! FUSE_ASYNC_DIO (io->async and io->blocking) is still the one-chunk-
//! at-a-time loop of program.rs, not "send all, then wait" with -EIO
//! for a short chunk; no catalogue check splits or shorts one.
//! Not modelled: fuse_do_truncate after a failed *extending* write (the
//! server may not answer a blocking aio write short or with an error).

use super::config::TaskSpec;
use super::model::FuseModel;
use super::program::{Op, SendKind};
use super::state::*;
use super::step::Step;

/// `Task::aio`: fuse_direct_IO found the write extends the file
/// (io->blocking).
pub const AIO_BLOCKING: u8 = 1;

impl FuseModel {
    /// Is task `t` a direct task on an asynchronous kiocb whose I/O goes
    /// asynchronously (FUSE_ASYNC_DIO)?
    pub(super) fn is_aio(&self, t: usize) -> bool {
        self.cfg.async_dio && self.cfg.tasks[t].is_aio()
    }

    /// fuse_direct_IO's start, inline (no scheduling point): i_size_read;
    /// a write past it is blocking. The fuse_io_priv starts with nothing
    /// failed and the whole range as its result.
    pub(super) fn aio_start(&self, s: &mut State, t: usize) {
        let spec = self.cfg.tasks[t];
        let (first, n) = spec.range().expect("direct task has a range");
        let write = spec.writes();
        let task = &mut s.tasks[t];
        task.aio = if write && first + n > s.i_size && !self.cfg.variant.mut_aio_extend_async {
            AIO_BLOCKING
        } else {
            0
        };
        task.saved = first + n;
        task.failed = false;
    }

    /// Is the aio task `t` blocking (an extending write)?
    pub(super) fn aio_blocking(s: &State, t: usize) -> bool {
        s.tasks[t].aio & AIO_BLOCKING != 0
    }

    /// Is `req` a request of a blocking aio write? The server answers it
    /// in full: fuse_direct_IO's fuse_do_truncate after a failed
    /// extending write is not modelled.
    pub(super) fn aio_blocking_req(&self, s: &State, req: &Req) -> bool {
        match *req {
            Req::DirectWrite { task, .. } => {
                self.is_aio(task as usize) && Self::aio_blocking(s, task as usize)
            }
            _ => false,
        }
    }

    /// Has task `t`'s syscall returned to its thread? For a
    /// non-blocking aio task that is once io_submit returned
    /// -EIOCBQUEUED (it waits for its completion); otherwise once done.
    pub fn returned(&self, s: &State, t: usize) -> bool {
        if self.task_done(s, t) {
            return true;
        }
        if !self.is_aio(t) || Self::aio_blocking(s, t) {
            return false;
        }
        let queued = self.programs[t]
            .iter()
            .position(|o| matches!(o, Op::AioQueued { .. }));
        queued.is_some_and(|q| s.tasks[t].pc as usize > q)
    }

    /// Does the completion of aio task `t` queue
    /// fuse_aio_invalidate_worker (p_aio_inval_worker, a write)? Its
    /// invalidation is the program's next op (the post-write
    /// invalidation a blocking write runs too).
    fn aio_post_invalidate(&self, s: &State, t: usize) -> bool {
        self.cfg.variant.p_aio_inval_worker
            && self.cfg.tasks[t].writes()
            && matches!(
                self.programs[t].get(s.tasks[t].pc as usize + 1),
                Some(Op::Invalidate { .. })
            )
    }

    /// Is task `t` a queued (non-blocking) aio task? Its final op
    /// returns without an unlock: io_submit's caller unlocked already.
    pub(super) fn aio_queued(&self, s: &State, t: usize) -> bool {
        self.is_aio(t) && !Self::aio_blocking(s, t)
    }

    /// Is a request of task `t` on /dev/fuse, fc->bg_queue or at a
    /// daemon worker (io->reqs > 0)?
    fn aio_outstanding(s: &State, t: usize) -> bool {
        // (an aio task sends only its direct WRITEs or READs)
        s.requests().any(|r| r.task() == Some(t as u8))
    }

    /// The size of the chunk of task `t` that starts at `first`, as sent.
    fn aio_chunk_len(&self, t: usize, first: u8) -> u8 {
        self.programs[t]
            .iter()
            .find_map(|o| match *o {
                Op::Send(SendKind::DirectChunk { first: a, n, .. }) if a == first => Some(n),
                Op::Send(SendKind::DirectWrite) => self.cfg.tasks[t].range().map(|r| r.1),
                _ => None,
            })
            .expect("an aio request was sent by its task")
    }

    /// fuse_aio_complete_req for a request of aio task `t` that started
    /// at `first`: `done` units written or read, `None` for an error.
    /// fuse_aio_complete keeps the first error, and for a short reply the
    /// lowest end (io->bytes); for a write either makes the result
    /// negative (fuse_get_res_by_io: -EIO when io->bytes >= 0).
    pub(super) fn aio_req_end(&self, s: &mut State, t: usize, first: u8, done: Option<u8>) {
        let write = self.cfg.tasks[t].writes();
        let task = &mut s.tasks[t];
        match done {
            None => task.failed = true,
            Some(d) if write => {
                let m = self.aio_chunk_len(t, first);
                if d < m {
                    task.failed = true;
                    task.saved = task.saved.min(first + d);
                }
            }
            Some(_) => {}
        }
    }

    /// `AioQueued`: fuse_aio_complete(io, 0, -1) drops the submitter's
    /// reference; return -EIOCBQUEUED; the caller's unlock
    /// (fuse_dio_unlock: a shared holder ends the uncached io-mode;
    /// inode_unlock). A blocking write never gets here (`skip_empty`).
    pub(super) fn op_aio_queued(&self, s: &mut State, t: usize, unlock: bool) -> Option<Step> {
        if unlock {
            if s.rwsem.owner != t as u8 {
                Self::uncached_io_end(s);
            }
            s.rwsem.unlock(t as u8);
        }
        if Self::aio_outstanding(s, t) {
            s.ev = Event::AioInFlight;
        }
        self.advance(s, t);
        Some(Step::AioQueued)
    }

    /// `AioComplete`, once no request of the task is outstanding. A
    /// blocking write: wait_for_completion returns; fuse_get_res_by_io;
    /// fuse_write_update_attr(pos, ret) (attr_version++, i_size extended
    /// when the write succeeded); on to the rest of its program (the
    /// post-write invalidation of O_DIRECT, the unlock and return). A
    /// queued one: fuse_aio_complete's last reference (attr_version++
    /// unless it failed) and ki_complete: the write has returned.
    pub(super) fn op_aio_complete(&self, s: &mut State, t: usize) -> Option<Step> {
        if Self::aio_outstanding(s, t) {
            return None;
        }
        let spec = self.cfg.tasks[t];
        let failed = s.tasks[t].failed;
        if Self::aio_blocking(s, t) {
            Self::bump_attr(s);
            let (first, n) = spec.range().expect("direct task has a range");
            if !failed && first + n > s.i_size {
                s.i_size = first + n;
            }
            s.ev = Event::AioBlocking;
            self.advance(s, t);
            return Some(Step::AioWaited);
        }
        if !failed {
            Self::bump_attr(s);
        }
        if self.aio_post_invalidate(s, t) && !failed {
            // p_aio_inval_worker: `io->write && res > 0`: queue
            // fuse_aio_invalidate_worker, which invalidates the range
            // (the next op), then calls ki_complete (the last op, which
            // closes the write's window)
            self.advance(s, t);
            return Some(Step::AioCompleteWork);
        }
        if spec.writes() {
            self.window_close(s, t);
        }
        s.tasks[t].pc = self.programs[t].len() as u8;
        Some(Step::AioComplete)
    }

    /// Is `spec` read through fuse_direct_IO with io->async (the READ is
    /// cut at i_size rounded up to max_pages)? O_DIRECT on a cached open
    /// always goes through fuse_direct_IO; a FOPEN_DIRECT_IO read only on
    /// an asynchronous kiocb.
    pub(super) fn read_via_direct_io_async(&self, spec: &TaskSpec) -> bool {
        self.cfg.async_dio
            && matches!(
                spec,
                TaskSpec::OdirectRead { .. } | TaskSpec::DioRead { aio: true, .. }
            )
    }
}
