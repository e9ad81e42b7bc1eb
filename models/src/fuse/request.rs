//! Synchronous requests: a task sends a request on /dev/fuse and, after
//! the reply, runs its caller's post-reply code (fuse_simple_request and
//! the callers: fuse_do_setattr, fuse_open, fuse_direct_io,
//! fuse_fsync, fuse_flush, fuse_file_fallocate).

use super::config::{Kernel, TaskSpec};
use super::model::{pages_mask, FuseModel};
use super::program::{Op, RecvKind, SendKind};

/// Is the op at `pc` the first chunk of a split direct request?
fn pc_is_first_chunk(prog: &[Op], pc: usize) -> bool {
    pc < 2 || !matches!(prog[pc - 2], Op::Send(SendKind::DirectChunk { .. }))
}
use super::state::*;
use super::step::Step;

impl FuseModel {
    pub(super) fn op_send(&self, s: &mut State, t: usize, kind: SendKind) -> Option<Step> {
        let task = s.tasks[t];
        let spec = self.cfg.tasks[t];
        Some({
            let tt = t as u8;
            let (req, step) = match (kind, spec) {
                (SendKind::Setattr, TaskSpec::Truncate { size }) => {
                    s.size_unstable = true;
                    s.tasks[t].saved = s.i_size;
                    (Req::Setattr { task: tt, size }, Step::SendSetattr)
                }
                (SendKind::Setattr, TaskSpec::Open { trunc: true, .. }) => {
                    s.size_unstable = true;
                    s.tasks[t].saved = s.i_size;
                    (Req::Setattr { task: tt, size: 0 }, Step::SendSetattr)
                }
                (SendKind::Open, TaskSpec::Open { trunc, .. }) => {
                    if task.pc == 0 {
                        self.window_open(s, t);
                    }
                    s.tasks[t].saved = s.i_size;
                    let atomic = trunc && self.cfg.atomic_o_trunc;
                    (
                        Req::Open {
                            task: tt,
                            trunc: atomic,
                        },
                        Step::SendOpen,
                    )
                }
                (SendKind::Open, _) => unreachable!("OPEN from a non-open task"),
                (SendKind::ThroughWrite, _) => {
                    let (first, n) = spec.range().expect("write has a range");
                    (
                        Req::ThroughWrite { task: tt, first, n },
                        Step::SendThroughWrite,
                    )
                }
                (SendKind::DirectWrite, _) => {
                    let (first, n) = spec.range().expect("direct write has a range");
                    (Req::DirectWrite { task: tt, first, n }, Step::SendWrite)
                }
                (SendKind::ThroughChunk { first, n }, _) => (
                    Req::ThroughWrite { task: tt, first, n },
                    Step::SendThroughWrite,
                ),
                (SendKind::ThroughBatch, _) => (
                    Req::ThroughWrite {
                        task: tt,
                        first: task.bfirst,
                        n: task.bn,
                    },
                    Step::SendThroughWrite,
                ),
                (SendKind::DirectRead, _) => {
                    let (first, mut n) = spec.range().expect("direct read has a range");
                    if self.read_via_direct_io_async(&spec) {
                        // fuse_direct_IO's "optimization for short read":
                        // the iter is cut to i_size rounded up to max_pages
                        let m = self.cfg.max_pages;
                        let left = s.i_size.saturating_sub(first);
                        n = n.min(left.div_ceil(m) * m).max(1);
                    }
                    (Req::Read { task: tt, first, n }, Step::SendRead)
                }
                (SendKind::Fsync, _) => (Req::Fsync { task: tt }, Step::SendFsync),
                (SendKind::Fallocate, TaskSpec::Punch { first, n }) => {
                    (Req::Fallocate { task: tt, first, n }, Step::SendFallocate)
                }
                (SendKind::Fallocate, _) => unreachable!("FALLOCATE from a non-punch task"),
                (SendKind::Flush, _) => (Req::Flush { task: tt }, Step::SendFlush),
                (SendKind::DirectChunk { write, first, n }, _) => {
                    if pc_is_first_chunk(&self.programs[t], task.pc as usize) {
                        s.tasks[t].saved = first;
                    }
                    if write {
                        (Req::DirectWrite { task: tt, first, n }, Step::SendWrite)
                    } else {
                        (Req::Read { task: tt, first, n }, Step::SendRead)
                    }
                }
                (SendKind::Getattr, _) => {
                    // fuse_do_getattr: attr_version = fuse_get_attr_version
                    self.sample_attr(s, t);
                    (Req::Getattr { task: tt }, Step::SendGetattr)
                }
                (SendKind::Setattr, _) => unreachable!("SETATTR from a non-truncate task"),
            };
            if !self.is_bg(&req) && self.refuse_sync(s, t) {
                // after the abort: -ENOTCONN, nothing sent (transport.rs)
                self.advance(s, t);
                return Some(step);
            }
            if matches!(kind, SendKind::Fsync | SendKind::Flush) {
                // property d: the data dirty at entry is on the server
                let mut checked = false;
                // (a page beyond EOF, or a dirty page that a
                // concurrent truncate discarded, owes nothing)
                for p in 0..s.i_size.min(self.cfg.pages) as usize {
                    let need = task.snap[p];
                    // (a page whose WRITE failed owes nothing here: f1)
                    if need == NONE || s.drops[p] as u16 != task.before[p] || s.lost & (1 << p) != 0
                    {
                        continue;
                    }
                    checked = true;
                    if hist_older(s.hist[p], s.srv[p], need) {
                        s.viol |= VIOL_D;
                    }
                }
                if checked {
                    s.ev = Event::SyncChecked;
                }
            }
            if self.is_bg(&req) {
                // FUSE_ASYNC_DIO: fuse_async_req_send →
                // fuse_simple_background, which waits in fuse_get_req
                // while fc->blocked
                if self.bg_blocked(s) && !Self::aborted(s) {
                    return None;
                }
                self.queue_background(s, req);
            } else {
                // fuse_simple_request: straight to the pending queue,
                // ahead of any background request on fc->bg_queue
                if !s.bg_q.is_empty() {
                    s.ev = Event::BgOvertaken;
                }
                self.pend_push(s, req);
            }
            s.tasks[t].reply = NONE;
            self.advance(s, t);
            step
        })
    }

    /// After a split direct write: fuse_write_update_attr(pos + written,
    /// written) (attr_version++, extend i_size if anything was written past
    /// it).
    pub(super) fn op_direct_write_done(&self, s: &mut State, t: usize) -> Option<Step> {
        let (first, _) = self.cfg.tasks[t].range().expect("direct write has a range");
        let end = s.tasks[t].saved;
        Self::bump_attr(s);
        self.invalidate_attr_size(s);
        if end > first && end > s.i_size {
            s.i_size = end;
        }
        self.advance(s, t);
        Some(Step::WriteReply)
    }

    /// fuse_perform_write after its loop: fuse_write_update_attr(pos,
    /// res) (attr_version++, i_size extended to the end written if
    /// anything was written past it), clear_bit(FUSE_I_SIZE_UNSTABLE).
    pub(super) fn op_through_write_done(&self, s: &mut State, t: usize) -> Option<Step> {
        let (first, _) = self.cfg.tasks[t].range().expect("write has a range");
        let end = s.tasks[t].saved;
        Self::bump_attr(s);
        self.invalidate_attr_size(s);
        if end > first && end > s.i_size {
            s.i_size = end;
        }
        if self.cfg.attr_readers() {
            s.size_unstable = false;
        }
        // `if (!res) return err;`: write(2) fails only if no chunk was
        // written; otherwise it returns the bytes written
        s.tasks[t].failed = end == first;
        self.advance(s, t);
        Some(Step::WriteReply)
    }

    /// Is task `t` a write-through write(2) split into max_write chunks
    /// (its program has a chunk reply)?
    pub(super) fn split_through(&self, t: usize) -> bool {
        self.programs[t].iter().any(|o| {
            matches!(
                o,
                Op::Recv(RecvKind::ThroughChunk { .. }) | Op::Recv(RecvKind::ThroughBatch)
            )
        })
    }

    /// Is task `t` a write-through write with units below a page (its
    /// program loops over `FillUnits` batches)? Where its `FillUnits` is.
    pub(super) fn through_units(&self, t: usize) -> Option<usize> {
        self.programs[t]
            .iter()
            .position(|o| matches!(o, Op::FillUnits { .. }))
    }

    /// Is task `u` a split write-through write between two chunks: one
    /// chunk's reply handled, the next chunk's WRITE not yet sent, the
    /// loop not ended (inode_lock held all along)?
    pub(super) fn in_through_gap(&self, s: &State, u: usize) -> bool {
        let prog = &self.programs[u];
        let pc = s.tasks[u].pc as usize;
        if let Some(fill) = self.through_units(u) {
            // units below a page: a batch's reply handled (`saved`, where
            // the WRITEs ended, is past the write's start) and the next
            // batch's WRITE not yet sent
            let (first, _) = self.cfg.tasks[u].range().expect("write has a range");
            return (fill..=fill + 2).contains(&pc) && s.tasks[u].saved > first;
        }
        let first_recv = prog
            .iter()
            .position(|o| matches!(o, Op::Recv(RecvKind::ThroughChunk { .. })));
        match first_recv {
            Some(r) if pc > r && pc < prog.len() => prog[pc..]
                .iter()
                .take_while(|o| !matches!(o, Op::ThroughWriteDone))
                .any(|o| matches!(o, Op::Send(SendKind::ThroughChunk { .. }))),
            _ => false,
        }
    }

    pub(super) fn op_recv(&self, s: &mut State, t: usize, kind: RecvKind) -> Option<Step> {
        let task = s.tasks[t];
        let spec = self.cfg.tasks[t];
        Some({
            if task.reply == NONE {
                return None;
            }
            let reply = task.reply;
            s.tasks[t].reply = NONE;
            s.tasks[t].failed = reply == REPLY_ERR;
            let step = match kind {
                RecvKind::Setattr { release } if reply == REPLY_ERR => {
                    // fuse_do_setattr's error path: fuse_release_nowrite;
                    // i_size, the page cache and the server unchanged
                    // (truncate_pagecache / invalidate are skipped: the
                    // size did not change)
                    self.setattr_error(s, t, release);
                    self.drop_mtime(s, t);
                    Step::SetattrReply
                }
                RecvKind::Setattr { release } => {
                    // an extension within the cached EOF folio
                    // (subpage.rs): its units in [oldsize, size) become
                    // this truncation's zeros before the queued WRITEs go
                    if reply > task.saved {
                        self.extend_in_folio(s, t, task.saved, reply);
                    }
                    // lock fi->lock; i_size_write(outarg.attr.size);
                    // __fuse_release_nowrite; unlock
                    if release && self.cfg.variant.mut_crop_old_size {
                        self.release_nowrite(s);
                        s.i_size = reply;
                    } else {
                        s.i_size = reply;
                        if release {
                            self.release_nowrite(s);
                        }
                    }
                    // fuse_change_attributes_common: attr_version++,
                    // the server's mtime (without a cache mask)
                    Self::bump_attr(s);
                    self.take_mtime(s, t);
                    Step::SetattrReply
                }
                RecvKind::OpenTrunc => {
                    // fuse_truncate_update_attr: i_size_write(0)
                    s.i_size = 0;
                    Self::bump_attr(s);
                    self.invalidate_attr_size(s);
                    Step::OpenTruncAttr
                }
                RecvKind::DirectWrite if reply == REPLY_ERR => {
                    // the write failed: fuse_write_update_attr(pos, 0)
                    // changes no size; write(2) returns -EIO
                    Self::bump_attr(s);
                    self.invalidate_attr_size(s);
                    if let TaskSpec::Write { .. } = spec {
                        if self.cfg.attr_readers() {
                            s.size_unstable = false;
                        }
                    }
                    Step::WriteReply
                }
                RecvKind::Getattr => self.recv_getattr(s, t, reply),
                RecvKind::DirectChunk { skip } => {
                    // fuse_direct_io: count -= nres; pos += nres; a short
                    // reply (or an error) ends the loop
                    let (a, m) = match self.programs[t][task.pc as usize - 1] {
                        Op::Send(SendKind::DirectChunk { first, n, .. }) => (first, n),
                        _ => unreachable!("a chunk reply follows its send"),
                    };
                    let done = if reply == REPLY_ERR { 0 } else { reply.min(m) };
                    s.tasks[t].saved = a + done;
                    if done < m {
                        s.tasks[t].pc += skip;
                        s.ev = Event::ShortIo;
                    }
                    Step::Reply
                }
                RecvKind::ThroughChunk { skip } => {
                    // fuse_perform_write: res += num_written; pos +=
                    // num_written; a short or failed reply ends the loop.
                    // L, T, T2: fuse_send_write_pages clears uptodate on
                    // the folios a short write did not cover (an error:
                    // daemon_reply_error); C's fuse_send_write_pages
                    // clears nothing
                    let (a, m) = match self.programs[t][task.pc as usize - 1] {
                        Op::Send(SendKind::ThroughChunk { first, n }) => (first, n),
                        _ => unreachable!("a chunk reply follows its send"),
                    };
                    let done = if reply == REPLY_ERR { 0 } else { reply.min(m) };
                    s.tasks[t].saved = a + done;
                    if done < m {
                        if reply != REPLY_ERR {
                            for p in pages_mask(a + done, m - done) {
                                if self.cfg.kernel != Kernel::C {
                                    s.pages[p].clear(PG_UPTODATE);
                                }
                                s.lost |= 1 << p;
                            }
                        }
                        s.tasks[t].pc += skip;
                        s.ev = Event::ShortIo;
                    }
                    Step::Reply
                }
                RecvKind::ThroughBatch => {
                    return Some(self.recv_through_batch(s, t, reply));
                }
                RecvKind::DirectWrite => {
                    // fuse_write_update_attr: attr_version++, extend
                    Self::bump_attr(s);
                    self.invalidate_attr_size(s);
                    if let Some((first, n)) = spec.range() {
                        if first + n > s.i_size {
                            s.i_size = first + n;
                        }
                    }
                    if let TaskSpec::Write { .. } = spec {
                        // fuse_perform_write: clear FUSE_I_SIZE_UNSTABLE
                        if self.cfg.attr_readers() {
                            s.size_unstable = false;
                        }
                    }
                    Step::WriteReply
                }
                RecvKind::Plain => Step::Reply,
            };
            self.advance(s, t);
            step
        })
    }

    /// The reply of a write-through batch with units below a page
    /// (`op_fill_units`): fuse_send_write_pages after
    /// fuse_simple_request, then fuse_perform_write's loop. As read in
    /// fs/fuse/file.c at f3cb8bd908c7 (T) and 1ce120dcefc0 (T2), the
    /// same in both:
    ///
    /// ```text
    /// short_write = ia->write.out.size < count;
    /// offset = ap->descs[0].offset;
    /// count = ia->write.out.size;
    /// for (i = 0; i < ap->num_folios; i++) {
    ///     if (err) {
    ///         folio_clear_uptodate(folio);
    ///     } else {
    ///         if (count >= folio_size(folio) - offset)
    ///             count -= folio_size(folio) - offset;
    ///         else {
    ///             if (short_write)
    ///                 folio_clear_uptodate(folio);
    ///             count = 0;
    ///         }
    ///         offset = 0;
    ///     }
    ///     if (ia->write.folio_locked && (i == ap->num_folios - 1))
    ///         folio_unlock(folio);
    /// ```
    ///
    /// then `res += num_written; pos += num_written;`, a short or failed
    /// WRITE ends the loop, and the loop goes on while the write has
    /// bytes left (back to `FillUnits` with the next batch from `pos`).
    /// Unlike the whole-page program, where the daemon's error reply
    /// clears uptodate (errors.rs), the clearing is here, in the writer's
    /// step after the reply, as in the kernel.
    fn recv_through_batch(&self, s: &mut State, t: usize, reply: u8) -> Step {
        let task = s.tasks[t];
        let (a, m) = (task.bfirst, task.bn);
        let err = reply == REPLY_ERR;
        let done = if err { 0 } else { reply.min(m) };
        let end = (a + m) as usize;
        let mut p = self.folio(a as usize).start;
        while p < end {
            let f = self.folio(p);
            // the count runs out inside this folio: (a + done) < its end
            if err || (done < m && ((a + done) as usize) < f.end) {
                self.folio_clear(s, p, PG_UPTODATE);
            }
            if task.folio_locked && f.end >= end {
                self.folio_clear(s, p, PG_LOCKED);
            }
            p = f.end;
        }
        s.tasks[t].folio_locked = false;
        if !err {
            // (a failed WRITE's units are marked in fail_request)
            for q in pages_mask(a + done, m - done) {
                s.lost |= 1 << q;
            }
        }
        s.tasks[t].saved = a + done;
        let (first, n) = self.cfg.tasks[t].range().expect("write has a range");
        if done < m {
            // `if (num_written != count) err = -EIO;`: the loop ends
            s.ev = Event::ShortIo;
        } else if a + m < first + n {
            // `while (!err && iov_iter_count(ii))`: the next batch
            let fill = self.through_units(t).expect("a batch program");
            let tk = &mut s.tasks[t];
            tk.pc = fill as u8;
            tk.ph = 1;
            tk.cur = 0;
            tk.bfirst = a + m;
            tk.bn = 0;
            return Step::WriteBatchEnd;
        }
        self.advance(s, t);
        Step::WriteBatchEnd
    }
}
