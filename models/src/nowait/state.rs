//! The nowait model's state: one xfs inode (i_size, times, i_version,
//! mode, S_PENDING_TIME, the IOLOCK), its page cache (data and dirty
//! bits), the tasks, the environment and the ghost fields properties read.
//! Small, flat, `Copy`.

use super::config::{MAX_PAGES, MAX_TASKS};
use crate::common::bounded::Bounded;
use crate::common::rwsem::Rwsem;
pub use crate::common::NONE;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Data id of a folio never written (a hole beyond the initial size).
pub const D_HOLE: u8 = 0;
/// Data id of the file's initial content.
pub const D_INIT: u8 = 1;

/// Data id of chunk `k` (the k-th folio of the buffer) of task `t`.
pub fn chunk(t: usize, k: u8) -> u8 {
    ((t as u8 + 1) << 3) | k
}

/// (task, chunk) of a data id written by a task.
pub fn chunk_of(d: u8) -> Option<(usize, u8)> {
    if d < 8 {
        None
    } else {
        Some(((d >> 3) as usize - 1, d & 7))
    }
}

/// Where a task is. Writers go Start -> Checks -> IomapBegin -> Folio
/// (-> IomapBegin ...) -> Done, or leave an attempt for Queued (punted to
/// io-wq) and come back through Checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Phase {
    /// Not started (io_uring: SQE submitted, about to issue inline).
    #[default]
    Start,
    /// Holds the IOLOCK; next: xfs_file_write_checks.
    Checks,
    /// Next: iomap_iter -> xfs_buffered_write_iomap_begin.
    IomapBegin,
    /// Next: iomap_write_iter for the folio at `cur`.
    Folio,
    /// Punted: on the io-wq list, to be retried blocking.
    Queued,
    /// chmod/utimes: holds inode_lock; next: notify_change.
    Locked,
    Done,
}

/// One task: its place and the locals the kernel keeps for it (kiocb,
/// iov_iter, iomap_iter, io_async_rw), plus ghosts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Task {
    pub ph: Phase,
    /// The current attempt runs with IOCB_NOWAIT.
    pub nowait: bool,
    /// Punted once: runs on an io-wq worker.
    pub wq: bool,
    /// kiocb->ki_pos (folio).
    pub kpos: u8,
    /// iomap_iter.pos: start of the current mapping.
    pub ipos: u8,
    /// Next folio to write in the current mapping.
    pub cur: u8,
    /// End of the current mapping.
    pub mend: u8,
    /// End of this attempt's range (ki_pos + iov_iter_count at the checks).
    pub wend: u8,
    /// iov_iter: index of the next chunk of the buffer.
    pub it: u8,
    /// io_uring's saved iter state (iov_iter_save_state).
    pub it_saved: u8,
    /// io_async_rw->bytes_done (folios).
    pub done: u8,
    /// CQE result / write(2) return (folios), when done.
    pub cqe: u8,
    /// current->nr_dirtied since the last balance_dirty_pages.
    pub nrd: u8,
    /// Mutant mut_cached_privs_check: the remove-privs check made at
    /// submission.
    pub privs_cached: bool,
    /// Ghost: this NOWAIT attempt changed something observable.
    pub touched: bool,
    /// Ghost: this attempt copied a folio.
    pub copied: bool,
    /// Ghost: attempts that copied folios.
    pub attempts: u8,
    /// Ghost: the clock when the write last passed kiocb_modified.
    pub tstart: u8,
    /// Ghost: i_version value a reader had queried when the write passed
    /// kiocb_modified without bumping it (NONE: no obligation).
    pub ivo: u8,
}

/// The environment: what makes a NOWAIT attempt fail, with budgets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Env {
    /// Clock ticks left.
    pub ticks: u8,
    /// Folios another task may still lock (mask) and the one it holds.
    pub flock_left: u8,
    pub flock_held: u8,
    /// ILOCK holds left, and whether another task holds it now.
    pub ilock_left: u8,
    pub ilock_held: bool,
    /// Folios of another file still to be dirtied (once).
    pub dirtier: u8,
}

/// What the last step did, for witnesses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Event {
    #[default]
    None,
    /// io_write got -EAGAIN with nothing reported and punted.
    EagainPunt,
    /// ... although the attempt had copied folios (iter revert).
    EagainAfterCopy,
    /// io_write got a short write and punted with bytes_done.
    ShortPunt,
    /// balance_dirty_pages(BDP_ASYNC) refused a NOWAIT attempt.
    BdpEagain,
    /// A NOWAIT attempt skipped a needed time update (S_PENDING_TIME set).
    TimeSkipped,
    /// A NOWAIT attempt updated the times in memory (lazytime, 7.0).
    LazytimeNowait,
    /// A write cleared S_ISUID.
    SuidRemoved,
    /// A write whose data came from two attempts completed.
    SplitComplete,
    /// A stat ran while an io_uring write was punted.
    StatBetween,
}

/// Why the last step's attempt failed under IOCB_NOWAIT.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Cause {
    #[default]
    None,
    /// xfs_ilock_iocb: the IOLOCK is held.
    Iolock,
    /// kiocb_modified: privileges to remove.
    Privs,
    /// kiocb_modified: a timestamp / i_version update would block.
    Times,
    /// xfs_buffered_write_iomap_begin: the ILOCK is held.
    Ilock,
    /// xfs_buffered_write_iomap_begin (RFC v1): a delalloc reservation.
    Alloc,
    /// balance_dirty_pages(BDP_ASYNC): over the dirty limit.
    Bdp,
    /// iomap_write_begin(FGP_NOWAIT): the folio is locked.
    Folio,
}

pub const VIOL_IO3: u8 = 1;
pub const VIOL_IVLOG: u8 = 2;
pub const VIOL_IO4: u8 = 4;
pub const VIOL_IO6: u8 = 8;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct State {
    pub i_size: u8,
    /// Page-cache data id per folio (folios below i_size are present).
    pub data: [u8; MAX_PAGES],
    /// PG_dirty per folio.
    pub dirty: u8,
    /// The clock (jiffies-granular current_time) and the inode's times.
    pub now: u8,
    pub mtime: u8,
    pub ctime: u8,
    /// i_version, its value in the log, and I_VERSION_QUERIED.
    pub iv: u8,
    pub iv_disk: u8,
    pub ivq: bool,
    /// S_ISUID.
    pub suid: bool,
    /// S_PENDING_TIME (RFC / v7).
    pub pending: bool,
    /// IOLOCK = inode->i_rwsem.
    pub iolock: Rwsem,
    pub env: Env,
    /// Dirty folios of another file (the dirtier's, until written back).
    pub ext: u8,
    pub tasks: Bounded<Task, MAX_TASKS>,
    /// Ghost: sticky violation bits (VIOL_*).
    pub viol: u8,
    /// Ghost: the last step's event, and the cause of a NOWAIT failure.
    pub ev: Event,
    pub cause: Cause,
}

impl State {
    pub fn present(&self, p: usize) -> bool {
        p < self.i_size as usize
    }
    pub fn is_dirty(&self, p: usize) -> bool {
        self.dirty & (1 << p) != 0
    }
    /// Dirty folios balance_dirty_pages counts: ours and another file's.
    pub fn dirty_total(&self) -> u8 {
        self.dirty.count_ones() as u8 + self.ext
    }
}

/// What another task can observe of the inode (for io3).
pub fn observable(s: &State) -> (u8, [u8; MAX_PAGES], u8, u8, u8, bool, bool) {
    (s.i_size, s.data, s.mtime, s.ctime, s.iv, s.suid, s.pending)
}

/// `T0[1]` (the second folio of T0's buffer), `initial`, `hole`.
pub fn dname(d: u8) -> String {
    match d {
        D_HOLE => "hole".into(),
        D_INIT => "initial".into(),
        d => match chunk_of(d) {
            Some((t, k)) => format!("T{t}[{k}]"),
            None => format!("?{d}"),
        },
    }
}

/// The file as `[initial, T0[0], T1[0]]`.
pub fn file(s: &State) -> String {
    let v: Vec<String> = (0..s.i_size as usize).map(|p| dname(s.data[p])).collect();
    format!("[{}]", v.join(", "))
}

/// Names of the sticky violation bits.
pub const VIOL_NAMES: &[(u8, &str)] = &[
    (VIOL_IO3, "io3-eagain-pure"),
    (VIOL_IVLOG, "iv-logged"),
    (VIOL_IO4, "io4-times"),
    (VIOL_IO6, "io6-suid"),
];

/// The Explorer's state view: the inode, the page cache, each task, the
/// environment, then the violated properties and the last step's event
/// by name.
impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "inode: i_size={} mtime={} ctime={} clock={} i_version={} (logged {}{}){}{} IOLOCK={}",
            self.i_size,
            self.mtime,
            self.ctime,
            self.now,
            self.iv,
            self.iv_disk,
            if self.ivq { ", queried" } else { "" },
            if self.suid { " S_ISUID" } else { "" },
            if self.pending { " S_PENDING_TIME" } else { "" },
            self.iolock.describe()
        )?;
        let dirty: Vec<String> = (0..MAX_PAGES)
            .filter(|&p| self.is_dirty(p))
            .map(|p| p.to_string())
            .collect();
        writeln!(
            f,
            "file: {} dirty folios [{}] + {} of another file",
            file(self),
            dirty.join(", "),
            self.ext
        )?;
        for (i, t) in self.tasks.iter().enumerate() {
            writeln!(
                f,
                "T{i}: {:?}{}{} ki_pos={} iter={} bytes_done={} cqe={} nr_dirtied={}",
                t.ph,
                if t.nowait { " NOWAIT" } else { "" },
                if t.wq { " io-wq" } else { "" },
                t.kpos,
                t.it,
                t.done,
                t.cqe,
                t.nrd
            )?;
        }
        let e = &self.env;
        writeln!(
            f,
            "environment: ticks left {}, folio lock {}, ILOCK {}, dirtier {}",
            e.ticks,
            if e.flock_held == NONE {
                "free".to_string()
            } else {
                format!("held on folio {}", e.flock_held)
            },
            if e.ilock_held { "held" } else { "free" },
            e.dirtier
        )?;
        if self.viol != 0 {
            let names: Vec<&str> = VIOL_NAMES
                .iter()
                .filter(|(bit, _)| self.viol & bit != 0)
                .map(|(_, n)| *n)
                .collect();
            writeln!(f, "violated (sticky): {}", names.join(", "))?;
        }
        if self.ev != Event::None || self.cause != Cause::None {
            writeln!(
                f,
                "last step: {:?}, NOWAIT failure cause {:?}",
                self.ev, self.cause
            )?;
        }
        Ok(())
    }
}
