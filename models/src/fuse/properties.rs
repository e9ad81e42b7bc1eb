//! Properties, named as in kernel-sources.md §10, and the `sometimes`
//! witnesses that prove each racy window is reached.

use super::lfolio;
use super::model::{Action, Actor, FuseModel};
use super::notify;
use super::program::Op;
use super::reclaim;
use super::state::*;
use super::transport;
use super::uring;
use super::wbslots;
use crate::spec::{Hits, PropertyDef, Stricter};
use stateright::Expectation;

/// Every property, in `CONDITIONS` order.
pub const PROPERTIES: &[PropertyDef] = &[
    PropertyDef {
        name: "a1",
        expectation: Expectation::Always,
        stricter: None,
        description: "no writeback WRITE outstanding with SETATTR(size)/OPEN(O_TRUNC)",
    },
    PropertyDef {
        name: "a2",
        expectation: Expectation::Always,
        stricter: None,
        description: "no WRITE of data older than an applied truncation",
    },
    PropertyDef {
        name: "a3",
        expectation: Expectation::Always,
        stricter: None,
        description: "quiescent: server size == i_size, content == last data",
    },
    PropertyDef {
        name: "b1",
        expectation: Expectation::Always,
        stricter: None,
        description: "direct read sees every write(2) returned before it",
    },
    PropertyDef {
        name: "b2",
        expectation: Expectation::Always,
        stricter: None,
        description: "no older page-cache WRITE applied after a direct WRITE",
    },
    PropertyDef {
        name: "b3",
        expectation: Expectation::Always,
        stricter: None,
        description: "page-cache read sees every write returned before it",
    },
    PropertyDef {
        name: "c1",
        expectation: Expectation::Always,
        stricter: None,
        description: "at most one page-cache WRITE in flight per page",
    },
    PropertyDef {
        name: "d",
        expectation: Expectation::Always,
        stricter: None,
        description: "FSYNC/FLUSH sent only after the data they cover",
    },
    PropertyDef {
        name: "e",
        expectation: Expectation::Always,
        stricter: None,
        description: "no deadlock: all done or a step enabled",
    },
    PropertyDef {
        name: "g-bugon",
        expectation: Expectation::Always,
        stricter: None,
        description: "no BUG_ON on writectr (nested fuse_set_nowrite)",
    },
    PropertyDef {
        name: "i1",
        expectation: Expectation::Always,
        stricter: None,
        description: "no page-cache store while a parallel direct write holds i_rwsem",
    },
    PropertyDef {
        name: "f1",
        expectation: Expectation::Always,
        stricter: None,
        description: "a failed writeback WRITE is reported by every later fsync (errseq)",
    },
    PropertyDef {
        name: "f1-close",
        expectation: Expectation::Always,
        stricter: Some(Stricter {
            contract: "f1",
            promise: "errseq reports a writeback error to fsync on every fd \
                      (vfs.rst); close's fuse_flush reports AS_EIO once \
                      (filemap_check_errors, test-and-clear)",
        }),
        description: "a failed writeback WRITE is reported by every later close() too",
    },
    PropertyDef {
        name: "a5",
        expectation: Expectation::Always,
        stricter: None,
        description: "a failed SETATTR leaves i_size and the queued WRITEs' crop alone",
    },
    PropertyDef {
        name: "a4",
        expectation: Expectation::Always,
        stricter: None,
        description: "i_size: sizes produced or a short READ's bound; no stale reply undoes one",
    },
    PropertyDef {
        name: "a4-exact",
        expectation: Expectation::Always,
        stricter: Some(Stricter {
            contract: "a4",
            promise: "\"Short read means EOF. If file size is larger, \
                      truncate it\" (fuse_do_readfolio): i_size = pos + \
                      num_read, an upper bound of the server's size",
        }),
        description: "i_size only takes sizes operations produced, a short READ's too",
    },
    PropertyDef {
        name: "a6",
        expectation: Expectation::Always,
        stricter: None,
        description: "an extension's range [old EOF, new EOF) reads as zeros and reaches the server as zeros until written",
    },
    PropertyDef {
        name: "w-nowrite-queued",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "writeback WRITE queued under FUSE_NOWRITE",
    },
    PropertyDef {
        name: "w-crop",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "queued WRITE cropped at i_size",
    },
    PropertyDef {
        name: "w-drop",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "queued WRITE dropped (wholly beyond i_size)",
    },
    PropertyDef {
        name: "w-trunc-waits-write",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "truncate waits for an in-flight WRITE",
    },
    PropertyDef {
        name: "w-mkwrite-blocked",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "mmap store blocked on PG_writeback",
    },
    PropertyDef {
        name: "w-dio-waits-wb",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "direct I/O waits for writeback",
    },
    PropertyDef {
        name: "w-redirty-under-wb",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "folio dirty again while under writeback",
    },
    PropertyDef {
        name: "w-second-write",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "second WRITE of a page after the first completed",
    },
    PropertyDef {
        name: "w-cache-after-direct",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "page-cache WRITE applied after a direct WRITE",
    },
    PropertyDef {
        name: "w-dio-read-checked",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "direct read of data a returned write(2) wrote",
    },
    PropertyDef {
        name: "w-sync-checked",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "FSYNC/FLUSH sent with data to cover",
    },
    PropertyDef {
        name: "w-quiescent",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "all done, nothing dirty or in flight",
    },
    PropertyDef {
        name: "w-secondary",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "state L: a redirtied page became a secondary request",
    },
    PropertyDef {
        name: "w-split",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "state C: one folio's blocks in two WRITEs in flight at once",
    },
    // ---- issue 11 (reclaim.rs, lfolio.rs, wbslots.rs)
    PropertyDef {
        name: "r-flag",
        expectation: Expectation::Always,
        stricter: None,
        description: "no reclaim wait on the writeback of a flagged mapping",
    },
    PropertyDef {
        name: "lf-limits",
        expectation: Expectation::Always,
        stricter: None,
        description: "page-cache READs/WRITEs within max_read/max_write/max_pages",
    },
    PropertyDef {
        name: "lf-progress",
        expectation: Expectation::Always,
        stricter: None,
        description: "readahead never sends a READ with no folio",
    },
    PropertyDef {
        name: "lf-crop",
        expectation: Expectation::Always,
        stricter: None,
        description: "a writeback WRITE carries its dirty bytes below i_size, none above",
    },
    PropertyDef {
        name: "lf-slots",
        expectation: Expectation::Always,
        stricter: None,
        description: "descriptors in a writeback batch never exceed its slots",
    },
    PropertyDef {
        name: "w-reclaim-wait",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a daemon worker sleeps in reclaim's folio_wait_writeback",
    },
    PropertyDef {
        name: "w-reclaim-mark",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "reclaim marks a folio under writeback PG_reclaim",
    },
    PropertyDef {
        name: "w-batch-cut",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "writeback batch sent: the next folio/range exceeds max_pages/max_write",
    },
    PropertyDef {
        name: "w-ra-nofit",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "readahead keeps a folio that does not fit the round's READ",
    },
    PropertyDef {
        name: "w-ra-sequential",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a read's miss follows its open file's ra->prev_pos: the initial readahead window",
    },
    PropertyDef {
        name: "w-ra-kick",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "readahead finds a folio of its window present (another task's) and kicks off the batch before it",
    },
    PropertyDef {
        name: "w-crop-in-folio",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a writeback WRITE cropped inside a folio (large, or a page of units)",
    },
    PropertyDef {
        name: "w-slots-grow",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "fuse_pages_realloc runs on a full writeback batch",
    },
    PropertyDef {
        name: "w-iomode-wait",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a caching open waits for parallel direct writes (direct_io_waitq)",
    },
    PropertyDef {
        name: "w-pdio-shared",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "two direct writers hold i_rwsem shared at once",
    },
    PropertyDef {
        name: "w-wb-error",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "the server failed a writeback WRITE",
    },
    PropertyDef {
        name: "w-error-reported",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "an fsync or close returned a writeback error",
    },
    PropertyDef {
        name: "w-setattr-error",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a failed SETATTR's error path flushed queued WRITEs",
    },
    PropertyDef {
        name: "w-stale-attr",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a GETATTR reply or short READ ignored as stale",
    },
    PropertyDef {
        name: "w-attr-size",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a GETATTR reply changed i_size",
    },
    PropertyDef {
        name: "w-short-read",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a short READ shrank i_size",
    },
    PropertyDef {
        name: "w-short-io",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a split direct request answered short ends fuse_direct_io's loop",
    },
    PropertyDef {
        name: "w-through-gap",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a task ran between two chunks of a split write-through write(2)",
    },
    PropertyDef {
        name: "w-read-checked",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "page-cache read of data a returned write wrote",
    },
    PropertyDef {
        name: "w-stale-cached",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "clean cached page older than the server's data",
    },
    PropertyDef {
        name: "w-bg-queued",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "background request waits on fc->bg_queue",
    },
    PropertyDef {
        name: "w-bg-overtaken",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "foreground request sent ahead of a waiting background one",
    },
    PropertyDef {
        name: "w-ra-blocked",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "readahead waits in fuse_get_req (fc->blocked)",
    },
    PropertyDef {
        name: "w-wb-congested",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "WB_SYNC_NONE writeback skipped: congested",
    },
    PropertyDef {
        name: "w-wb-read",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a partial write waits for fuse_write_begin's READ of its folio",
    },
    PropertyDef {
        name: "w-eof-zeroed",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a partial write zeroes the rest of a new folio beyond EOF",
    },
    PropertyDef {
        name: "w-store-past-eof",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a MAP_SHARED store at or beyond EOF inside the EOF page",
    },
    PropertyDef {
        name: "w-extend-over-store",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "an extension exposed a cached unit that holds stored data, not zeros",
    },
    PropertyDef {
        name: "w-wb-eof-zeroed",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "iomap writeback zeroed stored data beyond i_size in the EOF folio",
    },
    PropertyDef {
        name: "w-wb-eof-skip",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "iomap writeback skips a dirty folio wholly beyond i_size",
    },
    PropertyDef {
        name: "w-otrunc-gap",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "atomic open(O_TRUNC) between fuse_open's return and handle_truncate, after a write landed (i_size > 0): F-otrunc's window",
    },
    PropertyDef {
        name: "w-pdio-folio-locked",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "two direct writers hold i_rwsem shared while a folio is locked (filemap_range_has_writeback true): F-pdio-lock's window",
    },
    // ---- the transport (transport.rs)
    PropertyDef {
        name: "x-abort-write",
        expectation: Expectation::Always,
        stricter: None,
        description: "no WRITE is queued for the daemon after the connection is aborted",
    },
    PropertyDef {
        name: "w-abort-wb",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "the abort ends a writeback WRITE holding PG_writeback",
    },
    PropertyDef {
        name: "w-abort-end",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "the abort ends a synchronous request a task waits on",
    },
    PropertyDef {
        name: "w-abort-unsent",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "after the abort a writeback WRITE is freed unsent (out_free)",
    },
    PropertyDef {
        name: "w-abort-refused",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "after the abort a request fails at once (-ENOTCONN)",
    },
    PropertyDef {
        name: "w-abort-nowrite",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "the abort wakes a task waiting for writectr == FUSE_NOWRITE",
    },
    PropertyDef {
        name: "w-timeout",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "the request timeout fires and aborts the connection",
    },
    PropertyDef {
        name: "x-intr",
        expectation: Expectation::Always,
        stricter: None,
        description: "no request is applied by the server after its task returned -EINTR for it",
    },
    PropertyDef {
        name: "w-intr",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a signal interrupts a request in flight (FUSE_INTERRUPT)",
    },
    PropertyDef {
        name: "w-intr-bailout",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "SIGKILL takes back a request the daemon has not read (-EINTR)",
    },
    PropertyDef {
        name: "w-intr-eintr",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "the server answers an interrupted request with -EINTR",
    },
    PropertyDef {
        name: "w-aio-inflight",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "io_submit returns -EIOCBQUEUED with a request of it outstanding",
    },
    PropertyDef {
        name: "w-aio-blocking",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "an extending aio write waits for its requests (io->blocking)",
    },
    // ---- server notifications (notify.rs)
    PropertyDef {
        name: "n1",
        expectation: Expectation::Always,
        stricter: None,
        description: "when NOTIFY_INVAL_INODE returns, no clean cached page of its range holds data its change superseded and the server lacks",
    },
    PropertyDef {
        name: "w-notify-stale",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a clean cached page is older than the server's change a notification is about to announce",
    },
    PropertyDef {
        name: "w-notify-blocked",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "NOTIFY_INVAL_INODE blocks in its page walk with no dirty page in its range",
    },
    PropertyDef {
        name: "w-notify-launder",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "NOTIFY_INVAL_INODE waits for the WRITE of a folio it laundered",
    },
    PropertyDef {
        name: "w-store-over-dirty",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "NOTIFY_STORE copies into a dirty folio or one under writeback",
    },
    PropertyDef {
        name: "w-store-extend",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "NOTIFY_STORE extends i_size",
    },
    // ---- FUSE over io_uring (uring.rs)
    PropertyDef {
        name: "u1",
        expectation: Expectation::Always,
        stricter: None,
        description: "at most max_background + ring queues - 1 background requests active",
    },
    PropertyDef {
        name: "w-uring-overtake",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a ring entry fetches a request while one queued before it waits on another queue",
    },
    PropertyDef {
        name: "w-uring-over-max",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "more than max_background background requests active (one per queue past the bound)",
    },
    PropertyDef {
        name: "w-uring-idle-slot",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a background request waits on a ring queue although active_background < max_background",
    },
    PropertyDef {
        name: "w-autoinval",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "auto_inval_data: a GETATTR reply shows the server's mtime moved at the same size; invalidate_inode_pages2 follows",
    },
    PropertyDef {
        name: "w-autoinval-stale",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "auto_inval_data: a read's GETATTR reply is dropped (attr_version moved or FUSE_I_SIZE_UNSTABLE)",
    },
    PropertyDef {
        name: "w-autoinval-race",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "auto_inval_data: a read's page-cache invalidation is under way while another task changes the file or writeback is in flight",
    },
    PropertyDef {
        name: "w-autoinval-wait",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "auto_inval_data: a read's invalidate_inode_pages2 waits on a locked folio, on writeback or on a folio it laundered",
    },
    PropertyDef {
        name: "w-wt-partial-locked",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "write-through below a page: a reader waits on the folio a WRITE in flight wrote in part (not uptodate, kept locked)",
    },
    PropertyDef {
        name: "w-ra-async",
        expectation: Expectation::Sometimes,
        stricter: None,
        description: "a read finds a folio marked PG_readahead: page_cache_async_ra sets the next window, with a folio to add",
    },
];

fn cache_writes(s: &State) -> impl Iterator<Item = (u8, u8, u8, bool)> + '_ {
    // (first, n, sent, ending); fc->bg_queue holds sent ones too
    let q = s
        .fuse_q
        .iter()
        .chain(s.bg_q.iter())
        .filter_map(|r| match *r {
            Req::CacheWrite { first, n, sent } => Some((first, n, sent, false)),
            _ => None,
        });
    let w = s.workers.iter().filter_map(|w| match *w {
        Worker::Busy {
            req: Req::CacheWrite { first, n, sent },
            ..
        } => Some((first, n, sent, false)),
        Worker::Ending { first, n } => Some((first, n, n, true)),
        _ => None,
    });
    q.chain(w)
}

/// A size-changing request: SETATTR(size), or OPEN with O_TRUNC
/// (FUSE_ATOMIC_O_TRUNC, kernel-sources.md §10(a): "the same protocol applies").
fn sizing(r: &Req) -> bool {
    matches!(r, Req::Setattr { .. } | Req::Open { trunc: true, .. })
}

fn setattr_outstanding(s: &State) -> bool {
    s.fuse_q.iter().any(sizing)
        || s.workers.iter().any(|w| match w {
            Worker::Busy { req, .. } => sizing(req),
            _ => false,
        })
}

pub fn a1(_m: &FuseModel, s: &State) -> bool {
    !(setattr_outstanding(s) && cache_writes(s).any(|(.., ending)| !ending))
}

pub fn a3(m: &FuseModel, s: &State) -> bool {
    if !m.quiescent(s) {
        return true;
    }
    // The server holds, per page, the data of a write that no other write
    // really-follows (one that began after it ended): the last write of
    // some linearisation. Sequential writes leave exactly one candidate.
    // (a page whose WRITE failed is judged by f1, and a failed WRITE may
    // leave the server shorter than i_size)
    (s.srv_size == s.i_size || s.lost != 0)
        && (0..s.i_size as usize).all(|p| {
            let last = s.fin[p] & !s.sup[p];
            s.lost & (1 << p) != 0 || (s.srv[p] != NONE && last & (1 << s.srv[p]) != 0)
        })
}

/// a6, the contract of an extension (POSIX ftruncate: "If the file size
/// is increased, the extended area shall appear as if it were
/// zero-filled"; a write past
/// EOF leaves a hole that reads as zeros; mmap(2): "modifications to that
/// region [the partial page beyond EOF] are not written out to the
/// file"): every unit an extension exposed and no write wrote since
/// (`State::ext0`, subpage.rs) reads as zeros from the page cache
/// (checked at each read, `VIOL2_EOF_ZERO`) and holds zeros on the
/// server. Kept only with units below a page and a store through a
/// mapping (the only way to put data beyond EOF in the EOF page).
/// a3 judges the server's side too, at quiescence (the store beyond EOF
/// is no write of the file, so the last data of the exposed units is
/// zeros: the truncation's, or the initial ones), and a2 the launder
/// WRITE that carries the store after an extending truncation; no
/// property but a6 judges what a read returns there (b3 compares with
/// writes, and the store is none).
pub fn a6(m: &FuseModel, s: &State) -> bool {
    s.viol2 & VIOL2_EOF_ZERO == 0
        && (0..m.cfg.pages as usize)
            .all(|q| s.ext0 & (1 << q) == 0 || q as u8 >= s.srv_size || m.is_zeros(s.srv[q]))
}

/// a6's window: a unit an extension exposed is cached holding stored
/// data, not zeros (a read or the EOF folio's next WRITE shows it).
fn w_extend_over_store(m: &FuseModel, s: &State) -> bool {
    (0..m.cfg.pages as usize)
        .any(|q| s.ext0 & (1 << q) != 0 && s.pages[q].present() && !m.is_zeros(s.pages[q].ver))
}

pub fn c1(m: &FuseModel, s: &State) -> bool {
    (0..m.cfg.pages as usize).all(|p| {
        cache_writes(s)
            .filter(|&(first, _, sent, _)| (first as usize..(first + sent) as usize).contains(&p))
            .count()
            <= 1
    })
}

pub fn e(m: &FuseModel, s: &State) -> bool {
    e_with(m, s, || m.any_enabled(s))
}

/// e with "some step is enabled" given (hits_given knows the successors).
fn e_with(m: &FuseModel, s: &State, any_enabled: impl FnOnce() -> bool) -> bool {
    // after a BUG_ON the kernel has oopsed: liveness is not judged (g-bugon
    // reports it)
    // (likewise after the oops of a readahead READ with no folio:
    // lf-progress reports it)
    s.viol & VIOL_BUG != 0 || s.lf_viol & VIOL_LF_EMPTY != 0 || m.all_finished(s) || any_enabled()
}

fn blocked_in(m: &FuseModel, s: &State, t: usize) -> bool {
    m.exec_task(s, t).is_none() && !m.task_done(s, t)
}

pub fn w_trunc_waits_write(m: &FuseModel, s: &State) -> bool {
    (0..s.tasks.len())
        .any(|t| matches!(m.current_op(s, t), Some(Op::WaitNowrite)) && s.writectr != FUSE_NOWRITE)
}

pub fn w_mkwrite_blocked(m: &FuseModel, s: &State) -> bool {
    (0..s.tasks.len()).any(|t| match m.current_op(s, t) {
        Some(Op::MkwriteWait { page }) => s.pages[page as usize].wb(),
        _ => false,
    })
}

pub fn w_dio_waits_wb(m: &FuseModel, s: &State) -> bool {
    dio_waits_wb(m, s, |t| blocked_in(m, s, t))
}

/// w-dio-waits-wb with the blocked test given.
fn dio_waits_wb(m: &FuseModel, s: &State, blocked: impl Fn(usize) -> bool) -> bool {
    use super::config::TaskSpec::*;
    (0..s.tasks.len()).any(|t| {
        matches!(
            m.cfg.tasks[t],
            DioWrite { .. } | DioRead { .. } | OdirectWrite { .. } | OdirectRead { .. }
        ) && matches!(
            m.current_op(s, t),
            Some(Op::FdataWait { .. })
                | Some(Op::Invalidate { .. })
                | Some(Op::SyncWritesWait { .. })
                | Some(Op::WritePages { .. })
        ) && blocked(t)
            && s.pages.iter().any(|p| p.wb())
    })
}

/// b3's window: a clean, uptodate, unlocked folio holds data older than
/// the server's (a direct WRITE or a server-side truncation overtook it);
/// until it is invalidated, a read served from it is stale.
pub fn w_stale_cached(m: &FuseModel, s: &State) -> bool {
    (0..m.cfg.pages as usize).any(|p| {
        let pg = &s.pages[p];
        pg.present()
            && pg.has(PG_UPTODATE)
            && !pg.dirty()
            && !pg.locked()
            && (p as u8) < s.srv_size
            && hist_older(s.hist[p], pg.ver, s.srv[p])
            // zeros against zeros (a hole, a truncation's) are the same
            // bytes: not stale
            && !(m.is_zeros(pg.ver) && m.is_zeros(s.srv[p]))
    })
}

/// A reader's readahead has folios left to send and fuse_get_req would
/// wait: fc->blocked.
pub fn w_ra_blocked(m: &FuseModel, s: &State) -> bool {
    s.tasks
        .iter()
        .any(|t| t.ra != 0 && matches!(t.ph, super::read::PH_RA | super::read::PH_RA_GET))
        && m.bg_blocked(s)
}

pub fn w_split(m: &FuseModel, s: &State) -> bool {
    if m.cfg.folio_blocks <= 1 {
        return false;
    }
    let ws: Vec<(u8, u8, u8, bool)> = cache_writes(s).collect();
    let head = |p: u8| m.folio(p as usize).start;
    ws.iter().enumerate().any(|(i, a)| {
        ws[i + 1..]
            .iter()
            .any(|b| (a.0..a.0 + a.2).any(|p| (b.0..b.0 + b.2).any(|q| head(p) == head(q))))
    })
}

pub fn w_iomode_wait(m: &FuseModel, s: &State) -> bool {
    s.iocachectr < 0
        && (0..s.tasks.len()).any(|t| matches!(m.current_op(s, t), Some(Op::CachedIoStart)))
}

type Cond = fn(&FuseModel, &State) -> bool;

/// Conditions in `PROPERTIES` order: for an
/// always-property, "holds"; for a witness, "reached here".
pub const CONDITIONS: [Cond; PROPERTIES.len()] = [
    a1,
    |_, s| s.viol & VIOL_A2 == 0,
    a3,
    |_, s| s.viol & VIOL_B1 == 0,
    |_, s| s.viol & VIOL_B2 == 0,
    |_, s| s.viol2 & VIOL2_B3 == 0,
    c1,
    |_, s| s.viol & VIOL_D == 0,
    e,
    |_, s| s.viol & VIOL_BUG == 0,
    |_, s| s.viol & VIOL_IOMODE == 0,
    |_, s| s.viol & VIOL_F1 == 0,
    |_, s| s.viol2 & VIOL2_F1_CLOSE == 0,
    |_, s| s.viol & VIOL_A5 == 0,
    |_, s| s.viol2 & VIOL2_A4 == 0,
    |_, s| s.viol2 & VIOL2_A4_EXACT == 0,
    a6,
    |_, s| s.writectr < 0 && !s.queued.is_empty(),
    |_, s| cache_writes(s).any(|(_, n, sent, _)| sent < n),
    |_, s| s.ev == Event::Drop,
    w_trunc_waits_write,
    w_mkwrite_blocked,
    w_dio_waits_wb,
    |_, s| s.pages.iter().any(|p| p.dirty() && p.wb()),
    |_, s| s.ev == Event::SecondWriteSent,
    |_, s| s.ev == Event::CacheAfterDirect,
    |_, s| s.ev == Event::DirectReadChecked,
    |_, s| s.ev == Event::SyncChecked,
    |m, s| m.quiescent(s),
    |_, s| s.ev == Event::Secondary,
    w_split,
    reclaim::r_flag,
    lfolio::lf_limits,
    lfolio::lf_progress,
    lfolio::lf_crop,
    wbslots::lf_slots,
    reclaim::w_reclaim_wait,
    |_, s| s.ev == Event::ReclaimMark,
    |_, s| s.ev == Event::BatchCut,
    |_, s| s.ev == Event::RaNoFit,
    |_, s| s.ev == Event::RaSequential,
    |_, s| s.ev == Event::RaKick,
    lfolio::w_crop_in_folio,
    |_, s| s.ev == Event::SlotRealloc,
    w_iomode_wait,
    |_, s| s.rwsem.readers >= 2,
    |_, s| s.ev == Event::WbError,
    |_, s| s.ev == Event::ErrReported,
    |_, s| s.ev == Event::SetattrErrorFlush,
    |_, s| matches!(s.ev, Event::StaleAttr | Event::AutoInvalStale),
    |_, s| s.ev == Event::AttrSize,
    |_, s| s.ev == Event::ShortRead,
    |_, s| s.ev == Event::ShortIo,
    |_, s| s.ev == Event::ThroughGap,
    |_, s| s.ev == Event::CacheReadChecked,
    w_stale_cached,
    |_, s| !s.bg_q.is_empty(),
    |_, s| s.ev == Event::BgOvertaken,
    w_ra_blocked,
    |_, s| s.ev == Event::WbCongested,
    |_, s| {
        s.tasks
            .iter()
            .any(|t| t.ph == super::subpage::PH_WB_READ && t.reply == NONE)
    },
    |_, s| s.ev == Event::EofZero,
    |_, s| s.ev == Event::StorePastEof,
    w_extend_over_store,
    |_, s| s.ev == Event::WbEofZeroed,
    |_, s| s.ev == Event::WbEofSkip,
    w_otrunc_gap,
    |_, s| s.rwsem.readers >= 2 && s.pages.iter().any(|p| p.locked()),
    transport::x_abort_write,
    |_, s| s.ev == Event::AbortWb,
    |_, s| s.ev == Event::AbortEnd,
    |_, s| s.ev == Event::AbortUnsent,
    |_, s| s.ev == Event::Refused,
    transport::w_abort_nowrite,
    |_, s| s.ev == Event::TimeoutAbort,
    transport::x_intr,
    |_, s| s.ev == Event::Interrupt,
    |_, s| s.ev == Event::IntrBailout,
    |_, s| s.ev == Event::IntrEintr,
    |_, s| s.ev == Event::AioInFlight,
    |_, s| s.ev == Event::AioBlocking,
    |_, s| s.viol2 & VIOL2_NOTIFY_INVAL == 0,
    notify::w_notify_stale,
    notify::w_notify_blocked,
    notify::w_notify_launder,
    |_, s| s.ev == Event::StoreOverDirty,
    |_, s| s.ev == Event::StoreExtend,
    uring::u1,
    |_, s| s.ev == Event::UringOvertake,
    uring::w_over_max,
    uring::w_idle_slot,
    |_, s| s.ev == Event::AutoInval,
    |_, s| s.ev == Event::AutoInvalStale,
    super::autoinval::w_autoinval_race,
    super::autoinval::w_autoinval_wait,
    w_wt_partial_locked,
    |_, s| s.ev == Event::RaAsync,
];

/// w-wt-partial-locked: a write-through write with units below a page
/// holds the folio it wrote in part, not uptodate and locked
/// (ia->write.folio_locked), its WRITE sent and not answered, and a
/// buffered read or a read fault is blocked on that folio's lock
/// (filemap_update_page / filemap_fault: the folio is not uptodate).
/// Were the folio unlocked, the reader would READ the server's old bytes
/// into it (mut_wt_unlock_partial).
fn w_wt_partial_locked(m: &FuseModel, s: &State) -> bool {
    (0..s.tasks.len()).any(|t| {
        let tk = &s.tasks[t];
        if !tk.folio_locked
            || tk.reply != NONE
            || m.current_op(s, t) != Some(Op::Recv(super::program::RecvKind::ThroughBatch))
        {
            return false;
        }
        let held = m.folio((tk.bfirst + tk.bn - 1) as usize).start;
        (0..s.tasks.len()).any(|u| {
            let p = match m.current_op(s, u) {
                Some(Op::BufRead { first, .. }) => first + s.tasks[u].cur,
                Some(Op::PrivateFault { page }) => page,
                _ => return false,
            };
            u != t && m.folio(p as usize).start == held && blocked_in(m, s, u)
        })
    })
}

/// F-otrunc's window: an atomic open(O_TRUNC) has returned from fuse_open
/// (its inode_lock dropped) and waits to take it again for
/// handle_truncate, while i_size > 0: a write landed in between.
fn w_otrunc_gap(m: &FuseModel, s: &State) -> bool {
    s.i_size > 0
        && (0..s.tasks.len()).any(|t| {
            let pc = s.tasks[t].pc as usize;
            matches!(
                m.cfg.tasks[t],
                super::config::TaskSpec::Open { trunc: true, .. }
            ) && m.cfg.atomic_o_trunc
                && pc > 0
                && matches!(m.current_op(s, t), Some(Op::InodeLock))
                && matches!(
                    m.programs[t].get(pc - 1),
                    Some(Op::UnlockReturn { unlock: true })
                )
        })
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Index of a property in `PROPERTIES` (compile error if absent).
const fn index_of(name: &str) -> usize {
    let mut i = 0;
    while i < PROPERTIES.len() {
        if str_eq(PROPERTIES[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("no such property")
}

const I_E: usize = index_of("e");
const I_C1: usize = index_of("c1");
const I_DIO_WAITS_WB: usize = index_of("w-dio-waits-wb");

// `hits_given` evaluates properties 0..128 only: more would be silently
// ignored, so more do not compile.
const _: () = assert!(PROPERTIES.len() <= crate::spec::MAX_PROPERTIES);

/// Bit i set when property i is an `always` property (its condition
/// holding is no hit).
const ALWAYS: Hits = {
    let mut m: Hits = 0;
    let mut i = 0;
    while i < PROPERTIES.len() {
        if !matches!(PROPERTIES[i].expectation, Expectation::Sometimes) {
            m |= 1 << i;
        }
        i += 1;
    }
    m
};

/// c1 in one pass: a page covered by two page-cache WRITEs in flight.
fn c1_fast(m: &FuseModel, s: &State) -> bool {
    let mut seen = 0u32;
    for (first, _, sent, _) in cache_writes(s) {
        let hi = ((first + sent) as u32).min(m.cfg.pages as u32);
        for p in first as u32..hi {
            if seen & (1 << p) != 0 {
                return false;
            }
            seen |= 1 << p;
        }
    }
    true
}

/// `Spec::hits` given the successors of `s` (the exhaustive search has
/// them): `e` and the blocked-task test of `w-dio-waits-wb` read
/// enabledness from `succ` instead of executing every task's step again;
/// `c1` in one pass; every other property is its condition. Equal to the
/// generic `hits` (checks/tests/engines.rs compares them on every
/// reachable state of every catalogue check but the largest).
pub fn hits_given(m: &FuseModel, s: &State, succ: &[(Action, State)]) -> Hits {
    /// Condition `I` (0 past the last property), each a direct call the
    /// compiler can inline: no loop, no dispatch through the table.
    #[inline(always)]
    fn bit<const I: usize>(m: &FuseModel, s: &State, succ: &[(Action, State)]) -> Hits {
        if I >= CONDITIONS.len() {
            return 0;
        }
        let enabled = |t: usize| succ.iter().any(|(a, _)| a.actor == Actor::Task(t as u8));
        let holds = match I {
            I_E => e_with(m, s, || !succ.is_empty()),
            I_C1 => c1_fast(m, s),
            I_DIO_WAITS_WB => dio_waits_wb(m, s, |t| !enabled(t) && !m.task_done(s, t)),
            _ => CONDITIONS[I](m, s),
        };
        (holds as Hits) << I
    }
    macro_rules! bits {
        ($($i:literal)*) => { 0 $(| bit::<$i>(m, s, succ))* };
    }
    let c: Hits = bits!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26
        27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55
        56 57 58 59 60 61 62 63
        64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127);
    c ^ ALWAYS
}

/// Does the state violate (always) or witness (sometimes) property `i`?
pub fn hit(i: usize, m: &FuseModel, s: &State) -> bool {
    let c = CONDITIONS[i](m, s);
    match PROPERTIES[i].expectation {
        Expectation::Sometimes => c,
        _ => !c,
    }
}
