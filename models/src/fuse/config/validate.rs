//! `Config::validate`: one-line errors for the configurations the model
//! does not cover (bounds of the state arrays, geometry, workload against
//! kernel state and mount options). The large-folio geometry keys are
//! checked in lfolio.rs (`Config::validate_geometry`).

use super::{low_mask, Config, Kernel, TaskSpec, MAX_PAGES, MAX_TASKS, MAX_WORKERS};

impl Config {
    pub fn validate(&self) -> Result<(), String> {
        if self.tasks.is_empty() || self.tasks.len() > MAX_TASKS {
            return Err(format!("a workload has 1..={MAX_TASKS} tasks"));
        }
        self.validate_any_length()
    }

    /// Everything `validate` checks but the number of tasks: a trace's
    /// whole workload, which trace conformance runs in task slots
    /// (harness/src/conform/search.rs).
    pub fn validate_any_length(&self) -> Result<(), String> {
        // first: the checks below shift page masks by page numbers
        let p = self.pages;
        if p == 0 || p as usize > MAX_PAGES {
            return Err(format!("pages must be 1..={MAX_PAGES}, got {p}"));
        }
        self.validate_subpage()?;
        self.validate_geometry()?;
        if let Some(t) = self.tree.filter(|t| t.kernel() != self.kernel) {
            return Err(format!(
                "tree {} runs kernel {:?}, not {:?}",
                t.label(),
                t.kernel(),
                self.kernel
            ));
        }
        let env = self.reclaim_env;
        if env.memcg_v2 && self.memcg_v1 {
            return Err("memcg_v1 and memcg_v2: the daemon's memcg is one or the other".into());
        }
        if (env.mglru || env.charged_elsewhere) && !self.memcg_v1 && !env.memcg_v2 {
            return Err(
                "mglru and charged_elsewhere describe memcg reclaim: give memcg_v1 or memcg_v2"
                    .into(),
            );
        }
        if self.variant.fix_pdio_wait_range && self.variant.temp_pages {
            return Err("fix_pdio_wait_range needs PG_writeback to last until the WRITE's reply (0c58a97f919c, 6.16+); state L ends it at once (temp pages)".into());
        }
        if self.variant.fix_otrunc_keep_size && self.variant.fix_otrunc_setattr {
            return Err("fix_otrunc_keep_size and fix_otrunc_setattr are two designs of one fix: turn on one".into());
        }
        if !self.writeback_cache && self.variant.temp_pages {
            return Err("write-through (writeback_cache = false) is modelled for T, T2, C".into());
        }
        self.validate_auto_inval()?;
        let fb = self.folio_blocks;
        if fb == 0 || fb as usize > MAX_PAGES || (fb > 1 && self.kernel != Kernel::C) {
            return Err("folio_blocks is 1, or 2..=4 with kernel C".into());
        }
        if fb > 1 {
            if !self.pages.is_multiple_of(fb) || !self.init_size.is_multiple_of(fb) {
                return Err(format!(
                    "with folio_blocks = {fb}, pages and init_size are whole folios"
                ));
            }
            for p in 0..self.pages {
                let h = p - p % fb;
                if (self.cached >> p) & 1 != (self.cached >> h) & 1 {
                    return Err(format!(
                        "with folio_blocks = {fb}, cached covers whole folios"
                    ));
                }
            }
            for t in &self.tasks {
                let bad = match *t {
                    TaskSpec::Truncate { size } => size % fb != 0,
                    TaskSpec::Punch { first, n } => first % fb != 0 || n % fb != 0,
                    _ => false,
                };
                if bad {
                    return Err(format!(
                        "task '{t}': with folio_blocks = {fb}, sizes are whole folios"
                    ));
                }
            }
        }
        if self.init_size > p {
            let (u, what) = if self.sub_page() {
                ("u", "units")
            } else {
                ("", "pages")
            };
            return Err(format!(
                "init_size {}{u} exceeds {p} {what}",
                self.init_size
            ));
        }
        let all = low_mask(p);
        if self.cached & !all != 0 || self.dirty & !all != 0 {
            return Err("cached/dirty name a page beyond `pages`".into());
        }
        if self.dirty & !self.cached != 0 {
            return Err("a dirty page must also be cached".into());
        }
        // cached pages must lie inside the file (with units smaller than a
        // page, the EOF page is cached whole: its units beyond EOF zero)
        let end = match self.init_size {
            0 => 0,
            // (the end of the page holding the last byte)
            i => self.layout().page_end[i as usize - 1].min(p),
        };
        let inside = if end == 0 { 0 } else { low_mask(end) };
        if self.cached & !inside != 0 {
            return Err("a cached page lies beyond init_size".into());
        }
        if self.daemon_threads == 0 || self.daemon_threads as usize > MAX_WORKERS {
            return Err(format!("daemon_threads must be 1..={MAX_WORKERS}"));
        }
        if self.max_pages == 0 {
            return Err("max_pages must be at least 1".into());
        }
        if self.uring_queues > 0 {
            // FUSE over io_uring is 6.14+ (fs/fuse/dev_uring.c); state L
            // stands for older kernels too
            if self.kernel == super::Kernel::L {
                return Err("uring_queues: FUSE over io_uring is 6.14 and later; state L stands for older kernels too (use T, T2 or C)".into());
            }
            // uring.rs tags queue entries by index in a u16 and a u8
            // (State::utag, bgtag): enough for the queues of 4 positions
            if self.pages as usize > super::NARROW_PAGES {
                return Err(format!(
                    "uring_queues: FUSE over io_uring is modelled for 1..={} positions, got {}",
                    super::NARROW_PAGES,
                    self.pages
                ));
            }
            if self.uring_queues as usize > super::MAX_URING_QUEUES {
                return Err(format!(
                    "uring_queues must be 0 (/dev/fuse) or 1..={}",
                    super::MAX_URING_QUEUES
                ));
            }
            // is_ring_ready: every queue needs a registered ring entry
            if self.daemon_threads < self.uring_queues {
                return Err(
                    "uring_queues: every queue needs a registered entry, so daemon_threads >= uring_queues".into(),
                );
            }
            // uring.rs serves a queue FIFO. The kernel does not once a
            // queue has two entries and fuse_uring_flush_bg can move two
            // requests at once (max_background >= 2, with a second queue's
            // completions not flushing this one): only one entry gets
            // one, the other waits on fuse_req_queue, and a foreground
            // request queued meanwhile goes straight to an available
            // entry (fuse_uring_queue_fuse_req), ahead of it.
            if self.uring_queues >= 2
                && self.daemon_threads > self.uring_queues
                && self.max_background.map_or(false, |m| m >= 2)
            {
                return Err("uring_queues: a queue with two entries and max_background >= 2 is not modelled (fuse_uring_queue_fuse_req overtakes requests fuse_uring_flush_bg left queued); use daemon_threads = uring_queues or max_background 1".into());
            }
        }
        if self.max_background == Some(0) {
            return Err("max_background must be at least 1 (leave it out for no bound)".into());
        }
        if self.real_pages.contains(&0) {
            return Err("real_pages: a model page stands for at least one 4 KiB page".into());
        }
        if self.congestion_threshold == Some(0) {
            return Err(
                "congestion_threshold must be at least 1 (leave it out for no congestion)".into(),
            );
        }
        if self.errors != 0 && self.variant.temp_pages {
            return Err("error replies are modelled for T, T2, C".into());
        }
        if self.tasks.is_empty() {
            return Err("a workload has at least one task".into());
        }
        if !self.versions.is_empty() {
            // (0: a finished task of a trace that writes no more)
            let mut vs: Vec<u8> = self.versions.iter().copied().filter(|&v| v != 0).collect();
            let n = vs.len();
            vs.sort();
            vs.dedup();
            if self.versions.len() != self.tasks.len()
                || vs.len() != n
                || vs.iter().any(|v| !(2..=14).contains(v))
            {
                return Err(format!(
                    "versions: per task 0 or a distinct version 2..=14, got {:?} for {} tasks",
                    self.versions,
                    self.tasks.len()
                ));
            }
        }
        if !self.thread.is_empty() {
            if self.thread.len() != self.tasks.len() {
                return Err(format!(
                    "{} thread indices for {} tasks",
                    self.thread.len(),
                    self.tasks.len()
                ));
            }
            let n = self.thread.iter().copied().max().unwrap_or(0) as usize + 1;
            if let Some(th) = (0..n).find(|th| !self.thread.contains(&(*th as u8))) {
                return Err(format!("thread {th} has no task"));
            }
        }
        // (with units smaller than a page, positions are units: the task
        // as the catalogue wrote it, `2u+1u`, and "unit")
        let what = if self.sub_page() { "unit" } else { "page" };
        for (i, t) in self.tasks.iter().enumerate() {
            let text = self.task_text(i);
            if let Some((first, n)) = t.range() {
                if first as usize + n as usize > p as usize {
                    return Err(format!("task '{text}' goes beyond {what} {}", p - 1));
                }
            }
            if let TaskSpec::Truncate { size } = t {
                if *size > p {
                    return Err(format!("task '{text}' exceeds {p} {what}s"));
                }
            }
            if let TaskSpec::RemoteTruncate { size } = *t {
                if self.writeback_cache {
                    return Err(format!(
                        "task '{t}': server-side size changes are modelled on write-through mounts (writeback_cache trusts the local i_size)"
                    ));
                }
                if size > p {
                    return Err(format!("task '{t}' exceeds pages {p}"));
                }
            }
            self.validate_transport(t)?;
            if self.variant.p_aio_inval_worker && !self.variant.dio_invalidate_after_write {
                return Err("p_aio_inval_worker applies on trees with b359af8275a9 ((E), dio_invalidate_after_write: T2, C)".into());
            }
            if t.is_aio() && !self.async_dio {
                // fuse_direct_IO: io->async = fc->async_dio
                return Err(format!(
                    "task '{t}': without async_dio (FUSE_ASYNC_DIO) the kernel does an aio direct request synchronously; write it without 'aio'"
                ));
            }
            self.validate_notify(t)?;
            if let TaskSpec::DioMmap { .. } = t {
                // fuse_file_mmap: MAP_SHARED of a FOPEN_DIRECT_IO open
                if !self.direct_io_allow_mmap {
                    return Err(format!(
                        "task '{t}': MAP_SHARED of a FOPEN_DIRECT_IO open fails with ENODEV without direct_io_allow_mmap"
                    ));
                }
                if self.variant.temp_pages {
                    return Err(format!(
                        "task '{t}': the io-mode of a direct mmap is modelled for T, T2, C"
                    ));
                }
            }
        }
        // every drop names an op and leaves well-formed programs
        crate::fuse::oplabel::check_drops(self)?;
        for t in self.tasks.iter().filter(|_| !self.drop.is_empty()) {
            let p = crate::fuse::program::build(self, t);
            crate::fuse::oplabel::apply(self, t, &p, &self.drop)?;
        }
        Ok(())
    }

    /// An abort or timeout task: only with tasks whose request error
    /// paths the model has, and a timeout only on kernel states that
    /// all have it (transport.rs).
    fn validate_transport(&self, t: &TaskSpec) -> Result<(), String> {
        if !matches!(
            t,
            TaskSpec::Abort | TaskSpec::Timeout | TaskSpec::Signal { .. }
        ) {
            return Ok(());
        }
        if let TaskSpec::Signal { target, .. } = *t {
            let ok = self.tasks.get(target as usize).is_some_and(|u| {
                !matches!(
                    u,
                    TaskSpec::Abort | TaskSpec::Timeout | TaskSpec::Signal { .. }
                )
            });
            if !ok {
                return Err(format!(
                    "task '{t}': the target must be another task of the workload, not an abort, timeout or signal"
                ));
            }
            if self.tasks[target as usize].is_aio() {
                return Err(format!(
                    "task '{t}': an aio task does not wait in request_wait_answer (its requests are background ones); a signal to it is not modelled"
                ));
            }
        }
        if *t == TaskSpec::Timeout && self.kernel == Kernel::L {
            return Err(format!(
                "task '{t}': the request timeout is in 6.14 and later; state L also stands for older kernels (use T, T2 or C)"
            ));
        }
        if let Some(u) = self.tasks.iter().find(|u| {
            matches!(
                u,
                TaskSpec::Open { .. } | TaskSpec::Punch { .. } | TaskSpec::Stat
            )
        }) {
            return Err(format!(
                "task '{t}' with '{u}': the model has no error path for its request (OPEN, FALLOCATE, GETATTR)"
            ));
        }
        let same = |u: &&TaskSpec| {
            matches!(u, TaskSpec::Signal { .. }) == matches!(t, TaskSpec::Signal { .. })
                && matches!(
                    u,
                    TaskSpec::Abort | TaskSpec::Timeout | TaskSpec::Signal { .. }
                )
        };
        if self.tasks.iter().filter(same).count() > 1 {
            return Err(format!(
                "task '{t}': one abort or timeout task, and one signal, per workload"
            ));
        }
        Ok(())
    }
}

impl Config {
    /// auto_inval_data (autoinval.rs): one page per folio, no transport
    /// task (a GETATTR failed by the abort, a timeout or a signal is not
    /// modelled), no trace-conformance slots.
    fn validate_auto_inval(&self) -> Result<(), String> {
        if self.attr_valid && !self.auto_inval_data {
            return Err("attr_valid says when a read's fuse_update_attributes sends GETATTR: give auto_inval_data".into());
        }
        if self.attr_valid && self.tasks.iter().any(|u| matches!(u, TaskSpec::Stat)) {
            // fuse_update_get_attr(STATX_BASIC_STATS): with valid
            // attributes a stat sends GETATTR only when fi->inval_mask has
            // a basic stat; the model tracks STATX_SIZE alone (not the
            // FUSE_STATX_MODIFY that fuse_writepage_end sets), and a stat
            // that always sent one would see what the kernel does not
            return Err("attr_valid is not modelled with stat tasks (fi->inval_mask's FUSE_STATX_MODIFY bits are not tracked)".into());
        }
        if self.attr_valid && self.tasks.iter().any(|u| u.is_aio()) {
            return Err("attr_valid is not modelled with aio tasks (fuse_direct_IO's fuse_write_update_attr at submission)".into());
        }
        if !self.auto_inval_data && !self.variant.mut_cache_mask_ignored {
            return Ok(());
        }
        if self.folio_blocks > 1 || self.folio_pages > 1 || self.sub_page() {
            return Err("auto_inval_data is modelled with one page per folio (no folio_blocks, folio_pages or units)".into());
        }
        if self.tasks.iter().any(|u| {
            matches!(
                u,
                TaskSpec::Abort | TaskSpec::Timeout | TaskSpec::Signal { .. }
            )
        }) {
            return Err(
                "auto_inval_data is not modelled with abort, timeout or signal tasks".into(),
            );
        }
        Ok(())
    }
}
