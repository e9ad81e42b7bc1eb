//! Rebasing a state onto a new workload, for trace conformance of traces
//! longer than the model's task slots (harness/src/conform/search.rs).
//!
//! A task slot whose syscall has returned, and that nothing in the state
//! refers to any more, can run a later syscall of the trace. Its data
//! version (`version_of(slot)`) may still be in the page cache, on the
//! server or in a WRITE the daemon holds: before the slot is reused that
//! version is renamed everywhere it occurs to a free one. Renaming is a
//! bijection on data identities, so the renamed state has the same
//! behaviours as the old one with the names changed: the model compares
//! versions only for equality, with one exception, the zeros of a
//! truncation (`FuseModel::last_zeros` looks the writer of a version up
//! among the tasks). A retired truncation's zeros are therefore renamed to
//! `V_ZERO`, which stands for zeros everywhere.
//!
//! Every field that holds a data version is named in [`State::versions`]
//! and [`State::rename_version`], by exhaustive destructuring: a new field
//! does not compile until it is placed here.

use super::config::MAX_PAGES;
use super::state::*;

/// A set of data versions (bit v).
pub type VersionSet = u16;

fn bit(v: u8) -> VersionSet {
    if v == NONE || v > 15 {
        0
    } else {
        1 << v
    }
}

fn rename_set(b: VersionSet, from: u8, to: u8) -> VersionSet {
    if b & bit(from) == 0 {
        b
    } else {
        (b & !bit(from)) | bit(to)
    }
}

impl State {
    /// Every data version the state holds: data, the page histories and
    /// the read snapshots (the version sets of the ghosts `fin`, `sup`
    /// and `Task::before` only name versions, and are cut to these by
    /// [`State::compact_history`]).
    pub fn versions(&self) -> VersionSet {
        let State {
            i_size: _,
            size_unstable: _,
            writectr: _,
            queued: _,
            rwsem: _,
            pages,
            tasks,
            fuse_q: _,
            bg_q: _,
            workers,
            rcl: _,
            tmp,
            aux,
            l_end: _,
            srv_size: _,
            srv,
            hist,
            fin: _,
            sup: _,
            drops: _,
            wrote_once: _,
            viol: _,
            lf_viol: _,
            ev: _,
            iocachectr: _,
            cache_io_mode: _,
            ra_prev: _,
            ra_win: _,
            wb_err: _,
            as_eio: _,
            lost: _,
            losses: _,
            sizes: _,
            viol2: _,
            conn: _,
            intr: _,
            bailed: _,
            utag: _,
            bgtag: _,
            away: _,
            qsel: _,
            mtime: _,
            ext0: _,
        } = self;
        let mut b = 0;
        for p in 0..MAX_PAGES {
            b |= bit(pages[p].ver) | bit(tmp[p]) | bit(srv[p]);
            for v in hist_list(hist[p]) {
                b |= bit(v);
            }
        }
        for t in tasks.iter() {
            for p in 0..MAX_PAGES {
                b |= bit(t.snap[p]);
            }
        }
        for w in workers {
            if let Worker::Busy { payload, .. } = w {
                for v in payload {
                    b |= bit(*v);
                }
            }
        }
        for a in aux.iter() {
            b |= bit(a.ver);
        }
        b
    }

    /// Renames data version `from` to `to` everywhere (`to` must not be in
    /// [`State::versions`], unless it is `V_ZERO`).
    pub fn rename_version(&mut self, from: u8, to: u8) {
        let r = |v: &mut u8| {
            if *v == from {
                *v = to
            }
        };
        let State {
            i_size: _,
            size_unstable: _,
            writectr: _,
            queued: _,
            rwsem: _,
            pages,
            tasks,
            fuse_q: _,
            bg_q: _,
            workers,
            rcl: _,
            tmp,
            aux,
            l_end: _,
            srv_size: _,
            srv,
            hist,
            fin,
            sup,
            drops: _,
            wrote_once: _,
            viol: _,
            lf_viol: _,
            ev: _,
            iocachectr: _,
            cache_io_mode: _,
            ra_prev: _,
            ra_win: _,
            wb_err: _,
            as_eio: _,
            lost: _,
            losses: _,
            sizes: _,
            viol2: _,
            conn: _,
            intr: _,
            bailed: _,
            utag: _,
            bgtag: _,
            away: _,
            qsel: _,
            mtime: _,
            ext0: _,
        } = self;
        for p in 0..MAX_PAGES {
            r(&mut pages[p].ver);
            r(&mut tmp[p]);
            r(&mut srv[p]);
            fin[p] = rename_set(fin[p], from, to);
            sup[p] = rename_set(sup[p], from, to);
            hist[p] = hist_rename(hist[p], from, to);
        }
        for t in tasks.iter_mut() {
            for p in 0..MAX_PAGES {
                r(&mut t.snap[p]);
                t.before[p] = rename_set(t.before[p], from, to);
            }
        }
        for w in workers.iter_mut() {
            if let Worker::Busy { payload, .. } = w {
                for v in payload.iter_mut() {
                    r(v);
                }
            }
        }
        for a in aux.iter_mut() {
            r(&mut a.ver);
        }
    }

    /// Shortens every page's history (a ghost, but `last_zeros` reads it)
    /// to what later steps can tell apart: whether zeros are in it (then
    /// `V_ZERO` first), and the current data; and cuts the ghosts' version
    /// sets to the versions the state still holds. Properties are not
    /// judged on a rebased state; the history only must not overflow, and
    /// a version no state holds is free for the next syscall.
    pub fn compact_history(&mut self, is_zero: impl Fn(u8) -> bool) {
        for h in self.hist.iter_mut() {
            let list = hist_list(*h);
            let cur = *list.last().expect("slot 0 exists");
            let first = if list.iter().any(|&v| is_zero(v)) {
                V_ZERO
            } else {
                list[0]
            };
            *h = first as u64;
            if cur != first && !(is_zero(cur) && first == V_ZERO) {
                *h = hist_push(*h, cur);
            }
        }
        let live = self.versions();
        for p in 0..MAX_PAGES {
            self.fin[p] &= live;
            self.sup[p] &= live;
        }
        for t in self.tasks.iter_mut() {
            for p in 0..MAX_PAGES {
                t.before[p] &= live;
            }
        }
    }

    /// Forgets the ghosts of finished task `t` whose return the trace has
    /// shown: its read snapshot and its writes-before set name versions
    /// that no later step reads.
    pub fn forget_task_ghosts(&mut self, t: usize) {
        self.tasks[t].snap = [NONE; MAX_PAGES];
        self.tasks[t].before = [0; MAX_PAGES];
    }

    /// Drops from each page's history the repeats of a version that are
    /// neither its first occurrence nor the last entry, unless the version
    /// is zeros (`is_zero`). What steps read of a history is kept: the
    /// order of first occurrences (`hist_pos`, `hist_older`), the current
    /// version (`hist_cur`) and which zeros came last (`last_zeros`), so
    /// the state's behaviours are the same (tests_forget.rs). Trace
    /// conformance runs it when an environment's store restarts
    /// (harness/src/conform/search.rs): a page stored again and again
    /// would otherwise grow its history by one version per store.
    /// (`compact_history`, which the slots' reuse runs, keeps less: it
    /// can change a write-through WRITE's payload copy, tests_forget.rs.)
    pub fn dedup_history(&mut self, is_zero: impl Fn(u8) -> bool) {
        for h in self.hist.iter_mut() {
            let list = hist_list(*h);
            let last = list.len() - 1;
            let mut out = list[0] as u64;
            for (i, &v) in list.iter().enumerate().skip(1) {
                let first = list[..i].iter().all(|&w| w != v);
                if first || i == last || is_zero(v) {
                    out = hist_push(out, v);
                }
            }
            *h = out;
        }
    }

    /// The state with the ghosts only the properties read set to their
    /// initial values: what the last step did (`ev`), the sticky
    /// violation bits (`viol`, `lf_viol`, `viol2`), the version sets of
    /// writes ended (`fin`, `sup`, `Task::before`) and `Task::applied`.
    /// No step reads them except to set `ev` or a violation bit (every
    /// step starts by clearing `ev`), so a state and its forgetting have
    /// the same behaviours, forgotten alike (tests_forget.rs checks it on
    /// every reachable state of several workloads). Trace conformance,
    /// which judges no property, keeps states this way: states that
    /// differ only in these ghosts are one (harness/src/conform/search.rs).
    pub fn forget_property_ghosts(&mut self) {
        self.ev = Event::None;
        self.viol = 0;
        self.lf_viol = 0;
        self.viol2 = 0;
        self.fin = [0; MAX_PAGES];
        self.sup = [0; MAX_PAGES];
        for t in self.tasks.iter_mut() {
            t.before = [0; MAX_PAGES];
            t.applied = false;
        }
    }

    /// Does anything in flight name task `t` (a request on /dev/fuse or
    /// the background queue, a request a daemon worker holds, the inode
    /// lock)? Such a slot cannot take another syscall yet.
    pub fn refers_to_task(&self, t: u8) -> bool {
        self.requests().any(|r| r.task() == Some(t)) || self.rwsem.owner == t
    }
}

/// `h` with `from` renamed `to`. A history holds 0 only in slot 0, so a
/// rename to `V_ZERO` (zeros) compacts it: zeros first, then the current
/// data unless that is the zeros.
fn hist_rename(h: u64, from: u8, to: u8) -> u64 {
    if hist_pos(h, from).is_none() {
        return h;
    }
    let list: Vec<u8> = hist_list(h)
        .into_iter()
        .map(|v| if v == from { to } else { v })
        .collect();
    if to == V_ZERO {
        let cur = *list.last().expect("slot 0 exists");
        return if cur == V_ZERO {
            V_ZERO as u64
        } else {
            hist_push(V_ZERO as u64, cur)
        };
    }
    let mut out = list[0] as u64;
    for &v in &list[1..] {
        out = hist_push(out, v);
    }
    out
}
