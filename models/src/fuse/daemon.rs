//! The FUSE daemon: worker threads read requests from /dev/fuse, apply them
//! to the server's file and reply; a writeback WRITE's reply runs
//! fuse_writepage_end in the replying thread.

use super::config::{TaskSpec, MAX_PAGES};
use super::model::{pages_mask, FuseModel};
use super::state::*;
use super::step::Step;

impl FuseModel {
    // ------------------------------------------------------------------
    // The background queue (fs/fuse/dev.c): fuse_simple_background,
    // fuse_request_queue_background, flush_bg_queue and the background
    // half of fuse_request_end.

    /// Is `r` a background request (FR_BACKGROUND)? Writeback WRITEs
    /// (fuse_send_writepage) and readahead READs (fuse_send_readpages
    /// with async_read) always; with FUSE_ASYNC_DIO the READs and WRITEs
    /// of O_DIRECT I/O through fuse_direct_IO (fuse_async_req_send).
    /// Everything else is sent by fuse_simple_request straight to the
    /// pending queue.
    pub(super) fn is_bg(&self, r: &Req) -> bool {
        match *r {
            Req::CacheWrite { .. } | Req::ReadPages { .. } => true,
            Req::Read { task, .. } | Req::DirectWrite { task, .. } => {
                self.cfg.async_dio
                    && (self.cfg.tasks[task as usize].is_aio()
                        || matches!(
                            self.cfg.tasks[task as usize],
                            TaskSpec::OdirectRead { .. } | TaskSpec::OdirectWrite { .. }
                        ))
            }
            _ => false,
        }
    }

    /// fc->num_background: background requests from
    /// fuse_request_queue_background until fuse_request_end (on
    /// fc->bg_queue, on /dev/fuse, or at the daemon). fuse_request_end
    /// does its background half (num_background--, fc->blocked cleared,
    /// flush_bg_queue) before it calls the end callback, so a WRITE whose
    /// fuse_writepage_end is still to run (`Worker::Ending`) no longer
    /// counts (dev.c fuse_request_end).
    pub fn num_background(&self, s: &State) -> u8 {
        let q = s.fuse_q.iter().filter(|r| self.is_bg(r)).count();
        let w = s
            .workers
            .iter()
            .filter(|w| match w {
                Worker::Busy { req, .. } => self.is_bg(req),
                Worker::Ending { .. } | Worker::Idle => false,
            })
            .count();
        (s.bg_q.len() + q + w) as u8
    }

    /// fc->blocked: set when num_background reaches max_background and
    /// cleared when it drops below, so it equals num_background >=
    /// max_background; fuse_get_req(for_background) waits while it is set.
    pub fn bg_blocked(&self, s: &State) -> bool {
        self.cfg
            .max_background
            .is_some_and(|m| self.num_background(s) >= m)
    }

    /// num_background >= congestion_threshold (fuse_writepages'
    /// WB_SYNC_NONE skip, fuse_readahead's async skip).
    pub(super) fn congested(&self, s: &State) -> bool {
        self.cfg
            .congestion_threshold
            .is_some_and(|c| self.num_background(s) >= c)
    }

    /// fuse_request_queue_background: num_background++, onto
    /// fc->bg_queue, flush_bg_queue. Unbounded, the request goes to
    /// /dev/fuse at once, as flush_bg_queue would move it.
    pub(super) fn queue_background(&self, s: &mut State, r: Req) {
        if self.refuse_background(s, r) {
            return;
        }
        if self.uring() {
            // fuse_request_queue_background → fuse_uring_queue_bq_req
            self.uring_queue_bg(s, r);
            return;
        }
        if self.cfg.max_background.is_none() {
            self.pend_push(s, r);
            return;
        }
        s.bg_q.push(r);
        self.flush_bg_queue(s);
    }

    /// flush_bg_queue: while active_background < max_background, move the
    /// head of fc->bg_queue to the pending queue (its unique is assigned
    /// now).
    pub(super) fn flush_bg_queue(&self, s: &mut State) {
        let Some(max) = self.cfg.max_background else {
            return;
        };
        if self.uring() {
            // fc->bg_queue stays empty with a ring (uring.rs)
            return;
        }
        while !s.bg_q.is_empty() && self.num_background(s) - (s.bg_q.len() as u8) < max {
            let r = s.bg_q.remove(0);
            s.fuse_q.push(r);
        }
    }

    // ------------------------------------------------------------------
    // Daemon

    /// The worker that reads next: the lowest-numbered idle one (workers
    /// are interchangeable, so this loses no behaviour).
    pub(super) fn reader(s: &State, nw: usize) -> Option<usize> {
        (0..nw).find(|&w| matches!(s.workers[w], Worker::Idle))
    }

    pub fn exec_daemon(&self, s0: &State, w: usize, step: Step) -> Option<State> {
        let mut s = self.exec_daemon_in(s0, w, step)?;
        s.qsel = 0;
        Some(s)
    }

    /// The background half of fuse_request_end for a background request
    /// worker `w` ended: flush_bg_queue, or with a ring fuse_uring_req_end's
    /// flush of the worker's queue.
    fn bg_ended(&self, s: &mut State, w: usize) {
        if self.uring() {
            self.uring_flush_bg(s, self.worker_queue(w), true);
        } else {
            self.flush_bg_queue(s);
        }
    }

    fn exec_daemon_in(&self, s0: &State, w: usize, step: Step) -> Option<State> {
        let mut s = *s0;
        s.ev = Event::None;
        s.qsel = self.worker_queue(w) * self.uring() as u8;
        match step {
            Step::DaemonRead | Step::UringFetch => {
                if (step == Step::UringFetch) != self.uring()
                    || Self::aborted(&s)
                    || !self.readers(&s).any(|r| r == w)
                {
                    return None;
                }
                let i = self.next_for(&s, w)?;
                if (0..i).any(|j| Self::pend_queue(&s, j) != self.worker_queue(w)) {
                    // a request queued before this one waits on another
                    // queue
                    s.ev = Event::UringOvertake;
                }
                let req = Self::pend_remove(&mut s, i);
                let mut payload = [NONE; MAX_PAGES];
                match req {
                    Req::CacheWrite { first, sent, .. } => {
                        // fuse_dev_do_read copies the folios now (c2)
                        for p in pages_mask(first, sent) {
                            // T: the folio itself, copied now (c2);
                            // L: the temp page copied at writeback time
                            payload[p] = if self.cfg.variant.temp_pages {
                                s.tmp[p]
                            } else {
                                s.pages[p].ver
                            };
                            // a2: data older than a truncation already
                            // applied on the server must not reach it
                            for (ti, spec) in self.cfg.tasks.iter().enumerate() {
                                if let TaskSpec::Truncate { .. }
                                | TaskSpec::Open { trunc: true, .. } = spec
                                {
                                    let vt = self.ver(ti);
                                    if hist_pos(s.hist[p], vt).is_some()
                                        && hist_older(s.hist[p], payload[p], vt)
                                    {
                                        s.viol |= VIOL_A2;
                                    }
                                }
                            }
                            if s.wrote_once & (1 << p) != 0 {
                                s.ev = Event::SecondWriteSent;
                            }
                        }
                    }
                    Req::DirectWrite { task, first, n } => {
                        for p in pages_mask(first, n) {
                            payload[p] = self.ver(task as usize);
                        }
                    }
                    Req::ThroughWrite { task, first, n } => {
                        // fuse_copy_args copies the folios now. A folio
                        // an invalidation removed from the page cache
                        // meanwhile is still the request's (ap->folios
                        // holds a reference) and has the writer's data;
                        // a folio at that index now is another one
                        // unless it holds the writer's data or newer
                        for p in pages_mask(first, n) {
                            let v = self.ver(task as usize);
                            let cur = s.pages[p].ver;
                            payload[p] = if s.pages[p].present() && !hist_older(s.hist[p], cur, v) {
                                cur
                            } else {
                                v
                            };
                        }
                    }
                    _ => {}
                }
                s.workers[w] = Worker::Busy { req, payload };
                Some(s)
            }
            Step::DaemonReply | Step::DaemonReplyShort => {
                let (mut req, payload) = match s.workers[w] {
                    Worker::Busy { req, payload } => (req, payload),
                    _ => return None,
                };
                if step == Step::DaemonReplyShort {
                    // the server does one page less than asked
                    if !self.may_short(&req) || self.aio_blocking_req(&s, &req) {
                        return None;
                    }
                    match &mut req {
                        Req::DirectWrite { n, .. }
                        | Req::Read { n, .. }
                        | Req::ThroughWrite { n, .. } => *n -= 1,
                        _ => return None,
                    }
                    s.ev = Event::ShortIo;
                }
                s.workers[w] = Worker::Idle;
                self.request_ended(&mut s, &req, true);
                match req {
                    Req::CacheWrite { first, n, sent } => {
                        for p in pages_mask(first, sent) {
                            // b2: no page-cache data written before a direct
                            // write began lands after that direct WRITE
                            // (data stored concurrently, e.g. by an mmap
                            // re-dirty, is excepted: §10(b)(ii))
                            for (ti, spec) in self.cfg.tasks.iter().enumerate() {
                                if matches!(
                                    spec,
                                    TaskSpec::DioWrite { .. } | TaskSpec::OdirectWrite { .. }
                                ) && s.tasks[ti].applied
                                    && (first as usize..(first + sent) as usize).contains(&p)
                                {
                                    s.ev = Event::CacheAfterDirect;
                                    if payload[p] != NONE
                                        && s.tasks[ti].before[p] & (1 << payload[p]) != 0
                                    {
                                        s.viol |= VIOL_B2;
                                    }
                                }
                            }
                            s.srv[p] = payload[p];
                        }
                        s.srv_size = s.srv_size.max(first + sent);
                        s.workers[w] = Worker::Ending { first, n };
                    }
                    Req::ThroughWrite { task, first, n } => {
                        for p in pages_mask(first, n) {
                            s.srv[p] = payload[p];
                        }
                        if n > 0 {
                            s.srv_size = s.srv_size.max(first + n);
                        }
                        // the reply's size, pages written (read only by a
                        // split write's loop)
                        s.tasks[task as usize].reply = if self.split_through(task as usize) {
                            n
                        } else {
                            0
                        };
                    }
                    Req::DirectWrite { task, first, n } => {
                        let v = self.ver(task as usize);
                        for p in pages_mask(first, n) {
                            s.srv[p] = v;
                            s.hist[p] = hist_push(s.hist[p], v);
                        }
                        if n > 0 {
                            s.srv_size = s.srv_size.max(first + n);
                        }
                        if self.is_aio(task as usize) {
                            // fuse_aio_complete_req (aio.rs)
                            self.aio_req_end(&mut s, task as usize, first, Some(n));
                        } else {
                            // the reply's size, pages written (read only
                            // by a split request's loop)
                            s.tasks[task as usize].reply = if self.split_direct(task as usize) {
                                n
                            } else {
                                0
                            };
                        }
                        s.tasks[task as usize].applied = true;
                    }
                    Req::Read { task, first, n } => {
                        let t = task as usize;
                        match self.cfg.tasks[t] {
                            TaskSpec::Mmap { .. }
                            | TaskSpec::Gup { .. }
                            | TaskSpec::Fault { .. }
                            | TaskSpec::EnvAccess { .. }
                            | TaskSpec::DioMmap { .. }
                            | TaskSpec::Read { .. }
                            | TaskSpec::Write { .. } => {
                                // (Read: read_folio's READ of one block;
                                // Write: fuse_write_begin's, subpage.rs)
                                self.answered(&mut s, t);
                                if n > 1 {
                                    // a large folio (lfolio.rs): the reply
                                    // is copied into the locked folio now
                                    self.read_reply_into_folio(&mut s, first, n);
                                    s.tasks[t].reply = 0;
                                } else {
                                    let p = first as usize;
                                    s.tasks[t].reply =
                                        if first < s.srv_size { s.srv[p] } else { V_ZERO };
                                }
                            }
                            _ => {
                                // b1: a direct read returns data no older than
                                // the last write(2) that returned before it began
                                for p in pages_mask(first, n) {
                                    if p as u8 >= s.srv_size || s.lost & (1 << p) != 0 {
                                        continue; // short read, or a failed WRITE (f1)
                                    }
                                    let stale = s.tasks[t].before[p];
                                    if stale != 0 {
                                        s.ev = Event::DirectReadChecked;
                                    }
                                    if s.srv[p] != NONE && stale & (1 << s.srv[p]) != 0 {
                                        s.viol |= VIOL_B1;
                                    }
                                }
                                // the reply's size, pages read (short at the
                                // server's EOF; read only by a split request's
                                // loop); an aio READ: fuse_aio_complete_req
                                if self.is_aio(t) {
                                    let got = n.min(s.srv_size.saturating_sub(first));
                                    self.aio_req_end(&mut s, t, first, Some(got));
                                } else if self.split_direct(t) {
                                    s.tasks[t].reply = n.min(s.srv_size.saturating_sub(first));
                                } else {
                                    s.tasks[t].reply = 0;
                                }
                            }
                        }
                    }
                    Req::Setattr { task, size } => {
                        let vt = self.ver(task as usize);
                        let old = s.srv_size;
                        let pages = self.cfg.pages;
                        // Ghost: the zeros this truncation makes current,
                        // judged against the kernel's i_size when it was
                        // sent (fuse_do_setattr's oldsize), not the
                        // server's: pages below the kernel's EOF hold
                        // dirty data still to be written back, or holes.
                        let kold = s.tasks[task as usize].saved;
                        let (glo, ghi) = if size < kold {
                            (size, pages)
                        } else {
                            (kold, size)
                        };
                        for p in glo as usize..ghi as usize {
                            s.hist[p] = hist_push(s.hist[p], vt);
                        }
                        // The server's file: cut, or extended with zeros.
                        if size < old {
                            for p in size as usize..pages as usize {
                                s.srv[p] = vt;
                            }
                        } else {
                            for p in old as usize..size as usize {
                                s.srv[p] = if p as u8 >= kold {
                                    vt
                                } else {
                                    // zero-fill below the kernel's EOF:
                                    // the same bytes as the page's last
                                    // zeros (a hole), until writeback
                                    // brings the kernel's data
                                    self.last_zeros(s.hist[p])
                                };
                            }
                        }
                        s.srv_size = size;
                        s.tasks[task as usize].reply = size;
                    }
                    Req::Fsync { task } | Req::Flush { task } => {
                        s.tasks[task as usize].reply = 0;
                    }
                    Req::Open { task, trunc } => {
                        if trunc {
                            // the server truncates the file to 0
                            let v = self.ver(task as usize);
                            for p in 0..self.cfg.pages as usize {
                                s.srv[p] = v;
                                s.hist[p] = hist_push(s.hist[p], v);
                            }
                            s.srv_size = 0;
                        }
                        s.tasks[task as usize].reply = 0;
                    }
                    Req::ReadPages { task, first, n } => {
                        // fuse_readpages_end (lfolio.rs); a short reply
                        // (the server's file ends inside the READ):
                        // fuse_short_read → fuse_read_update_size
                        let t = task as usize;
                        self.answered(&mut s, t);
                        self.readpages_end(&mut s, first, n);
                        let rs = s.srv_size;
                        let q = if rs < first + n { rs.max(first) } else { first };
                        self.short_read(&mut s, t, q as usize);
                    }
                    Req::Getattr { task } => {
                        // the server's attributes: its size now
                        self.answered(&mut s, task as usize);
                        s.tasks[task as usize].reply = s.srv_size;
                    }
                    Req::Fallocate { task, first, n } => {
                        // the server zeroes the range (KEEP_SIZE: pages
                        // beyond its size stay absent)
                        let v = self.ver(task as usize);
                        for p in pages_mask(first, n) {
                            if (p as u8) < s.srv_size {
                                s.srv[p] = v;
                                s.hist[p] = hist_push(s.hist[p], v);
                            }
                        }
                        s.tasks[task as usize].reply = 0;
                    }
                }
                // the server's mtime moves with each change it applies;
                // a GETATTR or SETATTR reply carries it (autoinval.rs)
                if Self::modifies(&req) {
                    self.server_modified(&mut s);
                }
                if let Req::Getattr { task } | Req::Setattr { task, .. } = req {
                    self.reply_mtime(&mut s, task as usize);
                }
                if self.is_bg(&req) {
                    // the background half of fuse_request_end (for a
                    // writeback WRITE too: it runs before the end
                    // callback, fuse_writepage_end)
                    self.bg_ended(&mut s, w);
                }
                self.track_sizes(s0, &mut s, false);
                Some(s)
            }
            Step::DaemonReplyError => {
                let bg = matches!(s.workers[w], Worker::Busy { req, .. } if self.is_bg(&req));
                if !self.daemon_reply_error(&mut s, w) {
                    return None;
                }
                // a failed background request ends too (fuse_request_end)
                if bg || !self.uring() {
                    self.bg_ended(&mut s, w);
                }
                self.track_sizes(s0, &mut s, false);
                Some(s)
            }
            Step::WritepageEnd => {
                let (first, n) = match s.workers[w] {
                    Worker::Ending { first, n } => (first, n),
                    _ => return None,
                };
                // (fuse_request_end's background half ran with the
                // reply)
                s.workers[w] = Worker::Idle; // (L: rb_erase)
                self.writepage_end(&mut s, first, n);
                Some(s)
            }
            _ => None,
        }
    }

    /// fuse_writepage_end after its mapping_set_error: lock fi; [L:
    /// rb_erase, send the secondaries cropped at this WRITE's end,
    /// bypassing queued_writes]; writectr--; fuse_writepage_finish (end
    /// writeback, wake); unlock.
    pub(super) fn writepage_end(&self, s: &mut State, first: u8, n: u8) {
        if self.cfg.variant.temp_pages {
            let crop = s.l_end[first as usize];
            let mut i = 0;
            while i < s.aux.len() {
                if s.aux[i].prim == first {
                    let a = s.aux.remove(i);
                    s.tmp[a.page as usize] = a.ver;
                    self.send_writepage(
                        s,
                        Wpa {
                            first: a.page,
                            n: 1,
                        },
                        crop,
                    );
                } else {
                    i += 1;
                }
            }
        }
        s.writectr -= 1;
        self.writepage_finish(s, first, n);
        for p in pages_mask(first, n) {
            s.wrote_once |= 1 << p;
        }
    }
}
