//! Error replies and how writeback errors reach the user.
//!
//! A check lists the requests the server may fail (`errors = [...]`); the
//! daemon may then answer such a request with -EIO instead of applying it.
//! A failed writeback WRITE is recorded by fuse_writepage_end's
//! mapping_set_error (mm/filemap.c: errseq_set on mapping->wb_err and
//! AS_EIO); fuse_fsync reports it through file_check_and_advance_wb_err
//! (per-fd errseq cursor, and clears AS_EIO), fuse_flush through
//! write_inode_now → filemap_fdatawait and filemap_check_errors (AS_EIO,
//! test-and-clear). A failed SETATTR takes fuse_do_setattr's error path:
//! fuse_release_nowrite (queued WRITEs cropped at the unchanged i_size),
//! no i_size_write, no truncate_pagecache.

use super::config::{Kernel, TaskSpec, ERROR_OPS};
use super::model::{pages_mask, FuseModel};
use super::program::{Op, RecvKind};
use super::state::*;

impl FuseModel {
    /// May the server fail this request in this check?
    pub fn may_fail(&self, req: &Req) -> bool {
        let name = match req {
            Req::CacheWrite { .. } | Req::DirectWrite { .. } | Req::ThroughWrite { .. } => "WRITE",
            Req::Read { .. } => "READ",
            Req::Setattr { .. } => "SETATTR",
            Req::Fsync { .. } => "FSYNC",
            Req::Flush { .. } => "FLUSH",
            _ => return false,
        };
        let bit = ERROR_OPS.iter().position(|o| *o == name).unwrap_or(15);
        self.cfg.errors & (1 << bit) != 0
    }

    /// May the server answer this request short (`short = [...]`)? Only
    /// the direct WRITEs and READs of fuse_direct_io and the WRITEs of a
    /// split write-through write.
    pub fn may_short(&self, req: &Req) -> bool {
        let (bit, task) = match *req {
            Req::DirectWrite { task, .. } => (0, task),
            // fuse_perform_write's loop handles a short WRITE; only a
            // split write-through write is given short replies (an unsplit
            // one would need the same handling in its single reply)
            Req::ThroughWrite { task, .. } => {
                return self.cfg.short & 1 != 0 && self.split_through(task as usize);
            }
            Req::Read { task, .. } => (1, task),
            _ => return false,
        };
        self.cfg.short & (1 << bit) != 0
            && matches!(
                self.cfg.tasks[task as usize],
                TaskSpec::DioWrite { .. }
                    | TaskSpec::DioRead { .. }
                    | TaskSpec::OdirectWrite { .. }
                    | TaskSpec::OdirectRead { .. }
            )
    }

    /// Is task `t`'s direct request split into max_write / max_read
    /// chunks (its program has a chunk reply)?
    pub(super) fn split_direct(&self, t: usize) -> bool {
        self.programs[t]
            .iter()
            .any(|o| matches!(o, Op::Recv(RecvKind::DirectChunk { .. })))
    }

    /// mapping_set_error(mapping, -EIO): errseq_set + set_bit(AS_EIO).
    pub(super) fn mapping_set_error(s: &mut State) {
        s.wb_err = s.wb_err.wrapping_add(1);
        s.as_eio = true;
    }

    /// A writeback WRITE of `first..first+sent` ended with an error
    /// (fuse_writepage_end's mapping_set_error, unless the mutant drops
    /// it): its data is lost on the server.
    pub(super) fn wb_write_failed(&self, s: &mut State, first: u8, sent: u8) {
        if !self.cfg.variant.mut_wb_error_ignored {
            Self::mapping_set_error(s);
        }
        for p in pages_mask(first, sent) {
            s.lost |= 1 << p;
        }
        s.losses = s.losses.saturating_add(1);
    }

    /// The daemon answers its request with an error instead of applying
    /// it. For a writeback WRITE, fuse_writepage_end (which this thread
    /// runs next) starts with mapping_set_error: it is recorded here with
    /// the reply; every reader of the error first waits for that
    /// fuse_writepage_end (PG_writeback or writectr), so no check can fall
    /// between the two.
    pub(super) fn daemon_reply_error(&self, s: &mut State, w: usize) -> bool {
        let req = match s.workers[w] {
            Worker::Busy { req, .. }
                if (self.may_fail(&req) && !self.aio_blocking_req(s, &req))
                    || self.interrupted(s, &req) =>
            {
                req
            }
            _ => return false,
        };
        // an interrupted request answered with -EINTR (transport.rs)
        if !self.may_fail(&req) {
            s.ev = Event::IntrEintr;
        }
        self.request_ended(s, &req, false);
        s.workers[w] = Worker::Idle;
        match req {
            Req::CacheWrite { first, n, sent } => {
                self.wb_write_failed(s, first, sent);
                s.ev = Event::WbError;
                s.workers[w] = Worker::Ending { first, n };
            }
            _ => return self.fail_request(s, req),
        }
        true
    }

    /// A synchronous request (or an async direct one) ends with an error:
    /// the waiter finds REPLY_ERR. Returns false for the requests this
    /// does not cover (writeback WRITEs, readahead READs).
    pub(super) fn fail_request(&self, s: &mut State, req: Req) -> bool {
        match req {
            Req::ThroughWrite { task, first, n } => {
                // fuse_send_write_pages (L, T, T2): on error the folios
                // are not left uptodate; C's (09e95ab1a848) clears
                // nothing; the loop ends (write(2) returns what earlier
                // chunks wrote, or the error)
                // (with units below a page the writer clears uptodate
                // after the reply: request.rs, recv_through_batch)
                let units = self.through_units(task as usize).is_some();
                for p in pages_mask(first, n) {
                    if self.cfg.kernel != Kernel::C && !units {
                        s.pages[p].clear(PG_UPTODATE);
                    }
                    s.lost |= 1 << p;
                }
                s.tasks[task as usize].reply = REPLY_ERR;
            }
            // an aio task's request: fuse_aio_complete_req(err) (aio.rs)
            Req::DirectWrite { task, first, .. } | Req::Read { task, first, .. }
                if self.is_aio(task as usize) =>
            {
                self.aio_req_end(s, task as usize, first, None)
            }
            Req::CacheWrite { .. } | Req::ReadPages { .. } => return false,
            // every other request: its waiter finds REPLY_ERR
            r => {
                let t = r.task().expect("a synchronous request names its task");
                s.tasks[t as usize].reply = REPLY_ERR;
            }
        }
        true
    }

    /// fuse_fsync's file_check_and_advance_wb_err or fuse_flush's
    /// filemap_check_errors, inline in the step that reaches it. Returns
    /// whether the call reports an error (and then skips its request).
    pub(super) fn check_wb_err(&self, s: &mut State, t: usize, close: bool) -> bool {
        let reported = if close {
            // filemap_check_errors: test_and_clear_bit(AS_EIO)
            std::mem::replace(&mut s.as_eio, false)
        } else {
            // errseq_check_and_advance(&mapping->wb_err, &file->f_wb_err);
            // then clear AS_EIO / AS_ENOSPC
            let seen = s.tasks[t].wb_seen;
            s.tasks[t].wb_seen = s.wb_err;
            s.as_eio = false;
            seen != s.wb_err
        };
        // every writeback WRITE that failed while this fd was open (all
        // fds are opened before the workload, and each task checks once)
        // is reported by it: by fsync, the kernel's contract (f1:
        // errseq, Documentation/filesystems/vfs.rst); by close, stricter
        // than it (f1-close: fuse_flush reports AS_EIO once)
        if !reported && s.losses > 0 {
            if close {
                s.viol2 |= VIOL2_F1_CLOSE;
            } else {
                s.viol |= VIOL_F1;
            }
        }
        if reported {
            s.ev = Event::ErrReported;
        }
        reported
    }

    /// fuse_do_setattr's error path after a failed SETATTR(size):
    /// fuse_release_nowrite (the queued WRITEs are cropped at the i_size
    /// that still holds); i_size unchanged (mutant: the requested size is
    /// written anyway).
    pub(super) fn setattr_error(&self, s: &mut State, t: usize, release: bool) {
        if self.cfg.variant.mut_setattr_error_size {
            s.i_size = match self.cfg.tasks[t] {
                TaskSpec::Truncate { size } => size,
                _ => 0,
            };
        }
        if release {
            if !s.queued.is_empty() {
                s.ev = Event::SetattrErrorFlush;
                // a5: no queued WRITE is cropped below the server's size
                if s.i_size < s.srv_size {
                    s.viol |= VIOL_A5;
                }
            }
            self.release_nowrite(s);
        }
    }

    /// a5 at the end of a failed fuse_do_setattr: i_size is what it was.
    pub(super) fn check_setattr_failed(&self, s: &mut State, t: usize) {
        if s.i_size != s.tasks[t].saved {
            s.viol |= VIOL_A5;
        }
    }
}
