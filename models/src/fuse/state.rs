//! The model's state: one inode of a writeback_cache FUSE mount, its page
//! cache, the kernel tasks, the /dev/fuse queue and the daemon.
//!
//! Everything is small, flat and deterministic (no hashing collections, no
//! time). Ghost fields (used only by properties) are marked as such.

use super::config::{PageMask, MAX_PAGES, MAX_TASKS, MAX_WORKERS};
use crate::common::bounded::Bounded;
pub use crate::common::history::*;
pub use crate::common::page::*;
use crate::common::rwsem::Rwsem;
pub use crate::common::NONE;
use serde::{Deserialize, Serialize};
use std::fmt;

/// FUSE_NOWRITE: the bias added to fi->writectr by fuse_set_nowrite. The
/// kernel uses INT_MIN; any value below -(most WRITEs in flight) behaves the
/// same, and -64 keeps the state in an i8.
pub const FUSE_NOWRITE: i8 = -64;
/// Capacity of /dev/fuse and of fi->queued_writes in the model. Every
/// entry is a distinct request of a bounded workload: at most one
/// page-cache request per position (16) and one per task (8) but for an
/// aio task's chunks; 4-position workloads stayed within 12 (the bound
/// until positions went to 16; uring.rs tags entries in a u16 and is
/// modelled up to 4 positions).
pub const MAX_QUEUE: usize = 32;
/// Capacity of fc->bg_queue in the model (8 until positions went to 16).
pub const MAX_BGQ: usize = 24;
/// Capacity of the secondary-request lists (state L): one per page.
pub const MAX_AUX: usize = 16;
/// Version of never-written (zero) data.
pub const V_ZERO: u8 = 0;
/// Version of the file's data at the start.
pub const V_INIT: u8 = 1;
/// Version of data dirtied before the workload began (`Config::dirty`).
pub const V_PREDIRTY: u8 = 15;

/// A request on /dev/fuse. `task` names the kernel task waiting for the
/// reply (synchronous requests); writeback WRITEs are background requests
/// whose completion is fuse_writepage_end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Req {
    /// A page-cache (writeback) WRITE with FUSE_WRITE_CACHE: the wpa covers
    /// `first..first+n`; `sent` pages survived the crop at i_size.
    CacheWrite {
        first: u8,
        n: u8,
        sent: u8,
    },
    /// A direct WRITE (fuse_direct_io) of task `task`'s data.
    DirectWrite {
        task: u8,
        first: u8,
        n: u8,
    },
    /// A write-through WRITE (fuse_perform_write, no FUSE_WRITE_CACHE): the
    /// data is in the page-cache folios, copied when the daemon reads it.
    ThroughWrite {
        task: u8,
        first: u8,
        n: u8,
    },
    /// A READ: direct read, or a page-cache fill from a fault.
    Read {
        task: u8,
        first: u8,
        n: u8,
    },
    /// SETATTR(size).
    Setattr {
        task: u8,
        size: u8,
    },
    Fsync {
        task: u8,
    },
    Flush {
        task: u8,
    },
    /// OPEN, with O_TRUNC when `trunc` (FUSE_ATOMIC_O_TRUNC).
    Open {
        task: u8,
        trunc: bool,
    },
    /// FALLOCATE(PUNCH_HOLE | KEEP_SIZE) of pages first..first+n.
    Fallocate {
        task: u8,
        first: u8,
        n: u8,
    },
    /// A readahead READ (fuse_send_readpages with async_read: a
    /// background request) filling the locked folios of pages
    /// `first..first+n`; its reply runs fuse_readpages_end, which marks
    /// them uptodate and unlocks them.
    ReadPages {
        /// The reader whose readahead sent it (attr_version sample).
        task: u8,
        first: u8,
        n: u8,
    },
    /// GETATTR (fuse_do_getattr).
    Getattr {
        task: u8,
    },
}

impl Default for Req {
    fn default() -> Self {
        Req::Fsync { task: 0 }
    }
}

impl Req {
    /// The task that sent the request (none for a writeback WRITE; a
    /// readahead READ names its reader).
    pub fn task(&self) -> Option<u8> {
        match *self {
            Req::CacheWrite { .. } => None,
            Req::DirectWrite { task, .. }
            | Req::ThroughWrite { task, .. }
            | Req::Read { task, .. }
            | Req::Setattr { task, .. }
            | Req::Fsync { task }
            | Req::Flush { task }
            | Req::Open { task, .. }
            | Req::Fallocate { task, .. }
            | Req::ReadPages { task, .. }
            | Req::Getattr { task } => Some(task),
        }
    }

    pub fn opname(&self) -> &'static str {
        match self {
            Req::CacheWrite { .. } => "WRITE",
            Req::DirectWrite { .. } => "WRITE",
            Req::ThroughWrite { .. } => "WRITE",
            Req::Read { .. } => "READ",
            Req::Setattr { .. } => "SETATTR",
            Req::Fsync { .. } => "FSYNC",
            Req::Flush { .. } => "FLUSH",
            Req::Fallocate { .. } => "FALLOCATE",
            Req::Open { .. } => "OPEN",
            Req::ReadPages { .. } => "READ",
            Req::Getattr { .. } => "GETATTR",
        }
    }
}

fn pr(first: u8, n: u8) -> String {
    if n <= 1 {
        format!("p{first}")
    } else {
        format!("p{}-{}", first, first + n - 1)
    }
}

impl fmt::Display for Req {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Req::CacheWrite { first, n, sent } => {
                if sent == n {
                    write!(f, "WRITE({})", pr(first, n))
                } else {
                    write!(
                        f,
                        "WRITE({} cropped from {})",
                        pr(first, sent),
                        pr(first, n)
                    )
                }
            }
            Req::ThroughWrite { task, first, n } => {
                write!(f, "WRITE({} T{task})", pr(first, n))
            }
            Req::DirectWrite { task, first, n } => {
                write!(f, "WRITE({} direct T{task})", pr(first, n))
            }
            Req::Read { task, first, n } => write!(f, "READ({} T{task})", pr(first, n)),
            Req::Setattr { task, size } => write!(f, "SETATTR(size={size}p T{task})"),
            Req::Fsync { task } => write!(f, "FSYNC(T{task})"),
            Req::Flush { task } => write!(f, "FLUSH(T{task})"),
            Req::Open { task, trunc } => {
                write!(f, "OPEN({}T{task})", if trunc { "O_TRUNC " } else { "" })
            }
            Req::Fallocate { task, first, n } => {
                write!(f, "FALLOCATE(punch {} T{task})", pr(first, n))
            }
            Req::ReadPages { task, first, n } => {
                write!(f, "READ({} readahead T{task})", pr(first, n))
            }
            Req::Getattr { task } => write!(f, "GETATTR(T{task})"),
        }
    }
}

/// A FUSE daemon worker thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Worker {
    Idle,
    /// Has read `req` from /dev/fuse; for a WRITE, `payload` holds the data
    /// versions copied out of the folios at read time (c2; real-kernel-fuse.md
    /// §4.7), or the direct writer's version.
    Busy {
        req: Req,
        payload: [u8; MAX_PAGES],
    },
    /// Has replied to a writeback WRITE of wpa `first..first+n`; the kernel
    /// runs fuse_writepage_end in this thread's write(2) on /dev/fuse.
    Ending {
        first: u8,
        n: u8,
    },
}

/// A writeback request (struct fuse_writepage_args) on fi->queued_writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Wpa {
    pub first: u8,
    pub n: u8,
}

/// A daemon worker's direct reclaim inside the request it handles
/// (shrink_folio_list, reclaim.rs): the passes made so far, and the folio
/// it sleeps on in folio_wait_writeback (`NONE` when not waiting).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Reclaim {
    pub passes: u8,
    pub wait: u8,
}

impl Default for Reclaim {
    fn default() -> Self {
        Reclaim {
            passes: 0,
            wait: NONE,
        }
    }
}

/// One kernel task: a program counter into its program (see `program.rs`)
/// plus the locals the kernel keeps on its stack.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Task {
    /// Index of the current op in the task's program.
    pub pc: u8,
    /// Phase inside the current op.
    pub ph: u8,
    /// Page cursor inside the current op.
    pub cur: u8,
    /// Writeback batch being built (fuse_fill_wb_data.wpa): first page and
    /// length; `bn == 0` means none.
    pub bfirst: u8,
    pub bn: u8,
    /// Reply value of the last synchronous request (NONE while waiting).
    pub reply: u8,
    /// Saved value (e.g. oldsize in fuse_do_setattr; for readers,
    /// ra->async_size of their readahead).
    pub saved: u8,
    /// Ghost: per-page snapshot taken at syscall entry (property d: data
    /// that must be on the server before FSYNC/FLUSH; property b1: the
    /// data a direct read must not be older than). NONE = no obligation.
    /// For a buffered read: the data it returned, per page.
    pub snap: [u8; MAX_PAGES],
    /// Ghost, writers only: per page, the versions whose writes had ended
    /// when this write's syscall window opened (`State::fin` then). Those
    /// writes are really-before this one (a3, b2).
    pub before: [u16; MAX_PAGES],
    /// Ghost: set when the daemon applied this task's direct WRITE.
    pub applied: bool,
    /// Readers: the folios this task's readahead added to the page cache
    /// (locked, not uptodate) that fuse_readahead has not yet put in a
    /// READ (the readahead_control), as a page bitmask.
    pub ra: PageMask,
    /// Readers: the pages of the readahead window that
    /// page_cache_ra_unbounded has not yet looked at (its loop adds one
    /// folio per step, read.rs `ra_add`), as a page bitmask.
    pub ra_todo: PageMask,
    /// Readers: the block a read_folio READ of this task fills.
    pub rd: u8,
    /// Readers: the model position + 1 of the folio the readahead window
    /// being added marks PG_readahead (page_cache_ra_unbounded's `mark`);
    /// 0: none.
    #[serde(default)]
    pub ra_mark: u8,
    /// Readers on a file of their own (no `fd=F`) and faults: that
    /// file's readahead state (read.rs `ra_state`).
    #[serde(default)]
    pub raw: RaWin,
    /// Writeback batch with sub-page blocks (wbslots.rs): descriptors in
    /// it (ap->num_folios) and slots allocated (data->max_folios); 0 when
    /// not tracked.
    pub bdesc: u8,
    pub bslots: u8,
    /// file->f_wb_err of the task's fd (an errseq sample; fds are opened
    /// before the workload, at sequence 0).
    pub wb_seen: u8,
    /// The task's last synchronous request failed (-EIO).
    pub failed: bool,
    /// The attr_version sample of a GETATTR or READ in flight
    /// (fuse_get_attr_version): 0 none, 1 taken, 2 stale (fi->attr_version
    /// moved past it). The model keeps only this order, not the counter.
    pub attr: u8,
    /// Ghost (a4): the server's size when it answered this task's GETATTR
    /// or READ (NONE: no answer pending).
    pub rsize: u8,
    /// Ghost (a4): a local size change completed after that answer.
    pub moved: bool,
    /// An aio direct task's fuse_io_priv flags (aio.rs: AIO_BLOCKING).
    pub aio: u8,
    /// auto_inval_data: the mtime of this task's GETATTR or SETATTR reply
    /// against the inode's, and fuse_change_attributes_i's decision
    /// (autoinval.rs: MT_PENDING, MT_DIFF, MT_MOVED, MT_INVAL).
    pub mt: u8,
    /// A write-through write with units below a page (write.rs,
    /// `op_fill_units`): ia->write.folio_locked, the batch's last folio
    /// was partly written and not uptodate, and stays locked until
    /// fuse_send_write_pages has the WRITE's reply.
    pub folio_locked: bool,
}

impl Task {
    pub fn new() -> Task {
        Task {
            pc: 0,
            ph: 0,
            cur: 0,
            bfirst: 0,
            bn: 0,
            reply: NONE,
            saved: 0,
            snap: [NONE; MAX_PAGES],
            before: [0; MAX_PAGES],
            applied: false,
            ra: 0,
            ra_todo: 0,
            rd: 0,
            ra_mark: 0,
            raw: RaWin::FRESH,
            bdesc: 0,
            bslots: 0,
            wb_seen: 0,
            failed: false,
            attr: 0,
            rsize: NONE,
            moved: false,
            aio: 0,
            mt: 0,
            folio_locked: false,
        }
    }
}

impl Default for Task {
    fn default() -> Self {
        Task::new()
    }
}

/// State L: a secondary writeback request (fuse_writepage_args on
/// wpa->next) for page `page`, attached to the in-flight primary that
/// starts at page `prim`, carrying the temp-page data `ver`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Aux {
    pub prim: u8,
    pub page: u8,
    pub ver: u8,
}

/// Sticky violation bits for properties checked at an event (a request
/// read or applied by the daemon). Set once, never cleared, so the first
/// state that has the bit is the first violating state.
pub const VIOL_A2: u8 = 1;
pub const VIOL_B1: u8 = 2;
pub const VIOL_B2: u8 = 4;
pub const VIOL_D: u8 = 8;
/// A kernel BUG_ON on writectr (nested fuse_set_nowrite, or release
/// without NOWRITE).
pub const VIOL_BUG: u8 = 16;
/// Sticky bits of `State::lf_viol` (lfolio.rs, wbslots.rs): a page-cache
/// request beyond max_read / max_write / max_pages; a readahead READ with
/// no folio; a writeback WRITE that does not carry exactly its dirty bytes
/// below i_size; more descriptors in a batch than slots allocated.
pub const VIOL_LF_LIMITS: u8 = 1;
pub const VIOL_LF_EMPTY: u8 = 2;
pub const VIOL_LF_CROP: u8 = 4;
pub const VIOL_LF_SLOTS: u8 = 8;

/// The property each sticky violation bit stands for (state view).
pub const VIOL_NAMES: &[(u8, &str)] = &[
    (VIOL_A2, "a2"),
    (VIOL_B1, "b1"),
    (VIOL_B2, "b2"),
    (VIOL_D, "d"),
    (VIOL_BUG, "g-bugon"),
    (VIOL_IOMODE, "i1"),
    (VIOL_F1, "f1"),
    (VIOL_A5, "a5"),
];
/// i1: a page-cache store while a parallel direct write holds i_rwsem
/// shared.
pub const VIOL_IOMODE: u8 = 32;
/// f1: an fsync returned success although a writeback WRITE failed while
/// its fd was open (the errseq contract).
pub const VIOL_F1: u8 = 64;
/// a5: a failed SETATTR changed i_size, or its error path cropped queued
/// WRITEs below the size the server really has.
pub const VIOL_A5: u8 = 128;
/// A reply slot value: the request failed (-EIO).
pub const REPLY_ERR: u8 = 0xFE;
/// `State::viol2` bit, a4: a GETATTR set i_size to a value no
/// size-changing operation produced, a short READ set it below the
/// server's size when it answered, or either undid a later local size
/// change.
pub const VIOL2_A4: u8 = 1;
/// `State::viol2` bit, b3: a read served from the page cache returned
/// data older than a write that had returned before the read began.
pub const VIOL2_B3: u8 = 2;
/// `State::viol2` bit, f1-close (stricter than the kernel's contract): a
/// close() returned success although a writeback WRITE failed while its
/// fd was open.
pub const VIOL2_F1_CLOSE: u8 = 4;
/// `State::viol2` bit, a4-exact (stricter than the kernel's contract): a
/// GETATTR or short READ set i_size to a size no operation produced (a
/// short READ's upper bound included).
pub const VIOL2_A4_EXACT: u8 = 8;
/// `State::viol2` bit, x-abort-write: a WRITE was queued for the daemon
/// after the connection was aborted.
pub const VIOL2_ABORT_WRITE: u8 = 16;
/// `State::conn` bit: fc->connected == 0 (fuse_abort_conn ran).
pub const CONN_ABORTED: u8 = 1;
/// `State::viol2` bit, x-intr: the server applied a request whose task
/// had already returned -EINTR for it (the fatal-signal bail-out).
pub const VIOL2_INTR_APPLIED: u8 = 32;
/// `State::viol2` bit, n1: when a NOTIFY_INVAL_INODE returned, a clean
/// cached page of its range held data older than the server's.
pub const VIOL2_NOTIFY_INVAL: u8 = 64;
/// `State::viol2` bit, a6: a page-cache read returned, in a range an
/// extension exposed, data that is not zeros (subpage.rs).
pub const VIOL2_EOF_ZERO: u8 = 128;

/// What the last transition did that no state field shows afterwards
/// (used only by `sometimes` witnesses; reset by every step).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Event {
    None,
    /// State L: a redirtied page became a secondary request.
    Secondary,
    /// fuse_send_writepage dropped a queued WRITE wholly beyond i_size.
    Drop,
    /// fuse_send_writepage cropped a WRITE at i_size.
    Crop,
    /// The daemon applied a page-cache WRITE over a page that a direct
    /// WRITE had written before (b2 was evaluated on a real overlap).
    CacheAfterDirect,
    /// A direct READ returned data for a page a returned write(2) wrote
    /// (b1 was evaluated on a real obligation).
    DirectReadChecked,
    /// FSYNC or FLUSH was sent with data it had to wait for (d evaluated).
    SyncChecked,
    /// A page-cache WRITE covering a page was sent while an earlier
    /// page-cache WRITE of that page had completed in this run.
    SecondWriteSent,
    /// A read served from the page cache (filemap_read's copy or a read
    /// fault's mapping) returned a page a returned write had written (b3
    /// was evaluated on a real obligation).
    CacheReadChecked,
    /// A foreground request went to /dev/fuse while background requests
    /// queued before it waited on fc->bg_queue: it overtakes them.
    BgOvertaken,
    /// fuse_writepages returned at once: WB_SYNC_NONE while
    /// num_background >= congestion_threshold.
    WbCongested,
    /// Direct reclaim in a daemon worker marked a folio under writeback
    /// PG_reclaim and went on (shrink_folio_list case 2).
    ReclaimMark,
    /// A writeback batch was sent because the next folio or range would
    /// exceed max_pages or max_write (recorded with the issue-11 geometry
    /// only, so older configurations keep their state counts).
    BatchCut,
    /// fuse_readahead kept a folio that does not fit the round's READ.
    RaNoFit,
    /// page_cache_sync_ra took the initial window for a sequential miss
    /// after its open file's ra->prev_pos (read.rs).
    RaSequential,
    /// page_cache_ra_unbounded found a folio of its window present and
    /// kicked off the batch it had built before it (read.rs `ra_add`).
    RaKick,
    /// fuse_pages_realloc ran on a full batch (sub-page blocks).
    SlotRealloc,
    /// The server failed a writeback WRITE (mapping_set_error).
    WbError,
    /// An fsync or close returned a writeback error to its caller.
    ErrReported,
    /// A failed SETATTR's error path flushed queued WRITEs.
    SetattrErrorFlush,
    /// A GETATTR reply or short READ was ignored: attr_version moved or
    /// FUSE_I_SIZE_UNSTABLE was set.
    StaleAttr,
    /// A GETATTR reply changed i_size.
    AttrSize,
    /// A short READ shrank i_size (fuse_read_update_size).
    ShortRead,
    /// A direct request was answered short; fuse_direct_io's loop ended.
    ShortIo,
    /// A task took a step while a split write-through write was between
    /// two of its chunks (fuse_perform_write's loop, inode_lock held).
    ThroughGap,
    /// fuse_write_begin / fuse_write_end zeroed the parts of a folio at or
    /// beyond EOF that a write does not cover (subpage.rs).
    EofZero,
    /// iomap writeback skipped a dirty folio wholly beyond i_size.
    WbEofSkip,
    /// fuse_abort_conn ended requests; none was a writeback WRITE.
    AbortEnd,
    /// fuse_abort_conn ended a writeback WRITE holding PG_writeback
    /// (fuse_writepage_end with -ECONNABORTED).
    AbortWb,
    /// After the abort, fuse_send_writepage could not queue a WRITE
    /// (fuse_simple_background: -ENOTCONN) and freed it (out_free).
    AbortUnsent,
    /// After the abort, a synchronous request failed at once
    /// (fuse_get_req or __fuse_request_send: -ENOTCONN).
    Refused,
    /// fuse_check_timeout found an expired request and aborted.
    TimeoutAbort,
    /// A signal interrupted a request in flight (FR_INTERRUPTED; the
    /// daemon gets FUSE_INTERRUPT once it has read the request).
    Interrupt,
    /// A fatal signal took back a request the daemon had not read
    /// (request_wait_answer: FR_PENDING, -EINTR).
    IntrBailout,
    /// The server answered an interrupted request with -EINTR.
    IntrEintr,
    /// io_submit returned -EIOCBQUEUED with a request of it still
    /// outstanding (aio.rs).
    AioInFlight,
    /// An extending aio write's wait_for_completion returned (aio.rs).
    AioBlocking,
    /// fuse_reverse_inval_inode bumped attr_version (notify.rs).
    NotifyInval,
    /// fuse_notify_store extended i_size.
    StoreExtend,
    /// fuse_notify_store copied into a dirty folio or one under
    /// writeback.
    StoreOverDirty,
    /// A ring entry fetched a request while one queued before it waited
    /// on another ring queue (uring.rs).
    UringOvertake,
    /// fuse_change_attributes_i (auto_inval_data): the GETATTR reply's
    /// mtime differs from the inode's, the size does not: the page
    /// cache is invalidated.
    AutoInval,
    /// An auto_inval_data read's GETATTR reply was dropped (attr_version
    /// moved or FUSE_I_SIZE_UNSTABLE): no invalidation.
    AutoInvalStale,
    /// A store through a MAP_SHARED mapping at or beyond EOF, inside the
    /// EOF page (subpage.rs: units_per_page > 1).
    StorePastEof,
    /// iomap_writeback_handle_eof zeroed stored data beyond i_size in the
    /// EOF folio (writeback.rs, T2).
    WbEofZeroed,
    /// A lookup found a folio marked PG_readahead and page_cache_async_ra
    /// set up a window with a folio to add (read.rs `async_ra`).
    RaAsync,
}

/// Open files whose readahead state (`file->f_ra`) the model keeps: the
/// `fd=F` of read tasks, F < MAX_FDS.
pub const MAX_FDS: usize = 4;

/// The part of a file's readahead state (struct file_ra_state) that
/// page_cache_async_ra reads: ra->start in kernel pages, ra->size and
/// ra->async_size (at most ra_pages, 32). ra->order is 0 whenever
/// page_cache_async_ra reads it on a FUSE file: page_cache_sync_ra and
/// do_sync_mmap_readahead set it to 0, and page_cache_ra_order sets it
/// back to 0 on a mapping without large folio support. A fresh file's
/// state is all 0 (file_ra_state_init leaves it zeroed).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RaWin {
    pub start: u32,
    pub size: u8,
    pub asz: u8,
}

impl RaWin {
    pub const FRESH: RaWin = RaWin {
        start: 0,
        size: 0,
        asz: 0,
    };
}

/// The whole state.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct State {
    // ---- struct inode / struct fuse_inode
    /// i_size in pages.
    pub i_size: u8,
    /// FUSE_I_SIZE_UNSTABLE.
    pub size_unstable: bool,
    /// fi->writectr (FUSE_NOWRITE bias included).
    pub writectr: i8,
    /// fi->queued_writes (FIFO).
    pub queued: Bounded<Wpa, MAX_QUEUE>,
    /// inode->i_rwsem.
    pub rwsem: Rwsem,
    // ---- page cache
    pub pages: [Page; MAX_PAGES],
    // ---- kernel tasks
    pub tasks: Bounded<Task, MAX_TASKS>,
    // ---- /dev/fuse: requests sent, not yet read by a daemon thread
    pub fuse_q: Bounded<Req, MAX_QUEUE>,
    /// fc->bg_queue: background requests held back while
    /// active_background >= max_background (empty when unbounded).
    /// num_background, active_background and fc->blocked are functions of
    /// the state (daemon.rs), not fields.
    pub bg_q: Bounded<Req, MAX_BGQ>,
    // ---- the daemon
    pub workers: [Worker; MAX_WORKERS],
    /// Per worker: direct reclaim in the request it handles (memcg v1).
    pub rcl: [Reclaim; MAX_WORKERS],
    // ---- state L only (constant in T)
    /// Temp-page data of the queued or in-flight writeback WRITE covering
    /// each page (copied at writeback time, not when the daemon reads).
    pub tmp: [u8; MAX_PAGES],
    /// Secondary requests (wpa->next lists).
    pub aux: Bounded<Aux, MAX_AUX>,
    /// Per primary (by first page): the end of its WRITE as sent
    /// (inarg.offset + inarg.size), the crop for its secondaries.
    pub l_end: [u8; MAX_PAGES],
    /// Server file size in pages.
    pub srv_size: u8,
    /// Server file contents: a data version per page.
    pub srv: [u8; MAX_PAGES],
    // ---- ghosts (properties only)
    /// Per page, the order in which data versions became current
    /// (linearisation order): 4-bit slots, oldest in the low bits; the
    /// last slot is the current data. Versions appear at most once.
    pub hist: [u64; MAX_PAGES],
    /// Per page, the versions whose writing syscall has ended (bit v).
    pub fin: [u16; MAX_PAGES],
    /// Per page, the versions superseded: their write ended before another
    /// write of the page began, so they can no longer be the last data.
    pub sup: [u16; MAX_PAGES],
    /// Per page, how often its data was discarded unsent because it lay
    /// beyond EOF (truncate_pagecache of a dirty folio, or the crop/drop
    /// in fuse_send_writepage): legitimately lost (property d).
    pub drops: [u8; MAX_PAGES],
    /// Per page, whether a page-cache WRITE of it has completed.
    pub wrote_once: PageMask,
    /// Sticky violation bits (VIOL_*).
    pub viol: u8,
    /// Sticky violation bits of the large-folio and slot properties
    /// (VIOL_LF_*).
    pub lf_viol: u8,
    /// What the last step did (witnesses only).
    pub ev: Event,
    // ---- io modes (fs/fuse/iomode.c)
    /// fi->iocachectr: > 0 caching opens, < 0 parallel direct writes in
    /// progress (fuse_inode_uncached_io_start without a backing file).
    pub iocachectr: i8,
    /// FUSE_I_CACHE_IO_MODE.
    pub cache_io_mode: bool,
    /// Per open file that several read tasks share (`read A+N fd=F`):
    /// its file->f_ra.prev_pos as a model position + 1 (0: -1, a fresh
    /// file's; read.rs `read_window`).
    pub ra_prev: [u8; MAX_FDS],
    /// Per such open file, the rest of file->f_ra that readahead keeps
    /// (read.rs `async_ra`).
    #[serde(default)]
    pub ra_win: [RaWin; MAX_FDS],
    // ---- writeback errors (mm/filemap.c, lib/errseq.c)
    /// mapping->wb_err's sequence: bumped by every mapping_set_error
    /// (errseq_set; the model has no "seen" bit: a new error always
    /// advances it).
    pub wb_err: u8,
    /// AS_EIO in mapping->flags (test-and-cleared by filemap_check_errors,
    /// cleared by file_check_and_advance_wb_err).
    pub as_eio: bool,
    /// Ghost: pages whose data a failed WRITE did not put on the server
    /// (a3 does not judge them: the error is reported instead, f1).
    pub lost: PageMask,
    /// Ghost: writeback WRITEs that failed so far (f1).
    pub losses: u8,
    /// Ghost (a4): sizes (bit per page count) that size-changing
    /// operations produced, locally or on the server (only kept when
    /// something reads attributes: `Config::attr_readers`).
    pub sizes: u32,
    /// More sticky violation bits (VIOL2_*).
    pub viol2: u8,
    // ---- the connection (transport.rs)
    /// CONN_* bits.
    pub conn: u8,
    /// Per task (bit t): its outstanding request is interrupted
    /// (FR_INTERRUPTED) until it ends.
    pub intr: u8,
    /// Ghost (x-intr), per task: it returned -EINTR from a request a
    /// fatal signal took back.
    pub bailed: u8,
    // ---- FUSE over io_uring (uring.rs; all 0 on /dev/fuse)
    /// Bit i: `fuse_q[i]` is on ring queue 1 (else queue 0): each queue's
    /// fuse_req_queue is the subsequence of `fuse_q` with its bit, in
    /// queueing order.
    pub utag: u16,
    /// Bit i: `bg_q[i]` is on queue 1's fuse_req_bg_queue.
    pub bgtag: u8,
    /// Per task (bit t): the scheduler moved it to the other CPU for its
    /// next step (Step::UringMigrate; cleared by that step).
    pub away: u8,
    /// Scratch of the running step, 0 between steps: bit 0 the queue of
    /// the CPU it runs on, `QSEL_QUEUED` set when it queued a request.
    pub qsel: u8,
    // ---- FUSE_AUTO_INVAL_DATA (autoinval.rs)
    /// MT_STALE: the server's mtime differs from inode->i_mtime (kept
    /// only with auto_inval_data on a mount without a cache mask).
    pub mtime: u8,
    // ---- ghost of a6 (subpage.rs; kept only with mmap stores and
    // units_per_page > 1)
    /// Units an extension of i_size exposed (in [old EOF, new EOF), not
    /// written by the extending operation) that no write has written
    /// since: they must read as zeros and reach the server as zeros.
    pub ext0: PageMask,
}

/// `State::qsel`: the running step queued a request.
pub const QSEL_QUEUED: u8 = 0x80;

impl State {
    /// Every request the kernel has sent and not yet ended: on /dev/fuse,
    /// on fc->bg_queue, or read by a daemon worker (a WRITE whose reply
    /// ran, `Worker::Ending`, is on none of them).
    pub fn requests(&self) -> impl Iterator<Item = &Req> {
        self.fuse_q
            .iter()
            .chain(self.bg_q.iter())
            .chain(self.workers.iter().filter_map(|w| match w {
                Worker::Busy { req, .. } => Some(req),
                _ => None,
            }))
    }

    pub fn page_str(&self, p: usize) -> String {
        let pg = &self.pages[p];
        if !pg.present() {
            return "-".into();
        }
        let mut s = format!("v{}", pg.ver);
        if !pg.has(PG_UPTODATE) {
            s = "!uptodate".into();
        }
        for (bit, c) in [
            (PG_DIRTY, " dirty"),
            (PG_WRITEBACK, " writeback"),
            (PG_LOCKED, " locked"),
            (PG_TOWRITE, " towrite"),
            (PG_RECLAIM, " reclaim"),
            (PG_READAHEAD, " readahead"),
        ] {
            if pg.has(bit) {
                s.push_str(c);
            }
        }
        s
    }
}

/// Compact rendering for the Explorer and narratives (stateright-notes.md
/// §4: the default pretty Debug is a wall of text).
impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let wc = if self.writectr < 0 {
            format!("NOWRITE+{}", self.writectr - FUSE_NOWRITE)
        } else {
            format!("{}", self.writectr)
        };
        let rw = self.rwsem.describe();
        writeln!(
            f,
            "inode: i_size={}p{} writectr={} i_rwsem={} queued_writes=[{}]",
            self.i_size,
            if self.size_unstable {
                " SIZE_UNSTABLE"
            } else {
                ""
            },
            wc,
            rw,
            self.queued
                .iter()
                .map(|w| format!("p{}..{}", w.first, w.first + w.n - 1))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
        let np = self
            .pages
            .iter()
            .enumerate()
            .rev()
            .find(|(i, p)| p.flags != 0 || self.srv[*i] != 0 || hist_len(self.hist[*i]) > 1)
            .map(|(i, _)| i + 1)
            .unwrap_or(1)
            .max(self.srv_size as usize)
            .max(self.i_size as usize)
            .min(MAX_PAGES);
        for p in 0..np {
            writeln!(
                f,
                "page {p}: {:<28} server v{}  history {:?}",
                self.page_str(p),
                self.srv[p],
                hist_list(self.hist[p])
            )?;
        }
        writeln!(f, "server: size={}p", self.srv_size)?;
        for (i, t) in self.tasks.iter().enumerate() {
            writeln!(
                f,
                "T{i}: pc={} ph={} cur={} batch={} reply={}",
                t.pc,
                t.ph,
                t.cur,
                if t.bn == 0 {
                    "-".to_string()
                } else {
                    format!("p{}..{}", t.bfirst, t.bfirst + t.bn - 1)
                },
                if t.reply == NONE {
                    "-".to_string()
                } else {
                    t.reply.to_string()
                }
            )?;
        }
        writeln!(
            f,
            "/dev/fuse: [{}]",
            self.fuse_q
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
        if !self.bg_q.is_empty() {
            writeln!(
                f,
                "bg_queue: [{}]",
                self.bg_q
                    .iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )?;
        }
        for (w, wk) in self.workers.iter().enumerate() {
            match wk {
                Worker::Idle => {}
                Worker::Busy { req, payload } => {
                    // (the pages a 4-page state had, and any further
                    // one that holds data)
                    let n = payload
                        .iter()
                        .rposition(|v| *v != NONE)
                        .map_or(0, |i| i + 1)
                        .max(4);
                    writeln!(f, "D{w}: handling {req} payload {:?}", &payload[..n])?;
                    if self.rcl[w].wait != NONE {
                        writeln!(
                            f,
                            "D{w}: in direct reclaim, folio_wait_writeback on p{}",
                            self.rcl[w].wait
                        )?;
                    }
                }
                Worker::Ending { first, n } => writeln!(
                    f,
                    "D{w}: replied WRITE p{}..{}, fuse_writepage_end pending",
                    first,
                    first + n - 1
                )?,
            }
        }
        if self.viol != 0 {
            let names: Vec<&str> = VIOL_NAMES
                .iter()
                .filter(|(bit, _)| self.viol & bit != 0)
                .map(|(_, n)| *n)
                .collect();
            writeln!(f, "violated (sticky): {}", names.join(", "))?;
        }
        if self.ev != Event::None {
            writeln!(f, "last step: {:?}", self.ev)?;
        }
        if self.lf_viol != 0 {
            writeln!(f, "violated (large folios, slots): {:#x}", self.lf_viol)?;
        }
        Ok(())
    }
}
