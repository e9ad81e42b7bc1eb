//! The byte image of a FUSE model state (`Spec::encode`): every field by
//! name, so adding a field to `State`, `Task`, `Page`, `Wpa`, `Aux`,
//! `Reclaim` or `Rwsem` is a compile error here until it is encoded.
//! Fixed-size parts are gathered into constant-size arrays (one copy
//! each); bounded lists write their length, then their used entries; enums
//! go through their derived `Hash`.

use super::config::{MAX_PAGES, MAX_WORKERS};
use super::state::*;
use crate::common::encode::Enc;
use crate::common::rwsem::Rwsem;

/// Scalars, then the per-page snapshot and `before` (u16).
const TASK: usize = 20 + 3 * MAX_PAGES;

fn task(t: &Task) -> [u8; TASK] {
    let Task {
        pc,
        ph,
        cur,
        bfirst,
        bn,
        reply,
        saved,
        snap,
        before,
        applied,
        bdesc,
        bslots,
        wb_seen,
        failed,
        attr,
        rsize,
        moved,
        ra,
        ra_todo,
        rd,
        aio,
        mt,
        folio_locked,
    } = *t;
    // both page masks of the readahead_control in one byte (pages < 4)
    const _: () = assert!(MAX_PAGES <= 4);
    let mut a = [0u8; TASK];
    a[..20].copy_from_slice(&[
        pc,
        ph,
        cur,
        bfirst,
        bn,
        reply,
        saved,
        applied as u8,
        bdesc,
        bslots,
        wb_seen,
        failed as u8,
        attr,
        rsize,
        moved as u8,
        ra | ra_todo << 4,
        rd,
        aio,
        mt,
        folio_locked as u8,
    ]);
    for p in 0..MAX_PAGES {
        a[20 + p] = snap[p];
        a[20 + MAX_PAGES + 2 * p..20 + MAX_PAGES + 2 * p + 2]
            .copy_from_slice(&before[p].to_le_bytes());
    }
    a
}

/// Per page: flags, ver, pend, tmp, l_end, srv, drops, hist (8), fin (2),
/// sup (2).
const PAGE: usize = 19;
/// i_size, size_unstable, writectr, rwsem (2), srv_size, wrote_once, viol,
/// lf_viol, iocachectr, cache_io_mode, wb_err, as_eio, lost, losses, sizes,
/// viol2, conn, intr, bailed, mtime, ra_prev (MAX_FDS); then per worker
/// its reclaim's passes and wait.
const SCALARS: usize = 21 + MAX_FDS;
const HEAD: usize = SCALARS + 2 * MAX_WORKERS;

pub fn encode(e: &mut Enc, s: &State) {
    let State {
        i_size,
        size_unstable,
        writectr,
        queued,
        rwsem,
        pages,
        tasks,
        fuse_q,
        bg_q,
        workers,
        rcl,
        tmp,
        aux,
        l_end,
        srv_size,
        srv,
        hist,
        fin,
        sup,
        drops,
        wrote_once,
        viol,
        lf_viol,
        ev,
        iocachectr,
        cache_io_mode,
        ra_prev,
        wb_err,
        as_eio,
        lost,
        losses,
        sizes,
        viol2,
        conn,
        intr,
        bailed,
        utag,
        bgtag,
        away,
        qsel,
        mtime,
        ext0,
    } = s;
    let Rwsem { owner, readers } = *rwsem;
    let mut fixed = [0u8; HEAD + PAGE * MAX_PAGES];
    fixed[SCALARS - MAX_FDS..SCALARS].copy_from_slice(ra_prev);
    fixed[..SCALARS - MAX_FDS].copy_from_slice(&[
        *i_size,
        *size_unstable as u8,
        *writectr as u8,
        owner,
        readers,
        *srv_size,
        *wrote_once,
        *viol,
        *lf_viol,
        *iocachectr as u8,
        *cache_io_mode as u8,
        *wb_err,
        *as_eio as u8,
        *lost,
        *losses,
        *sizes,
        *viol2,
        *conn,
        *intr,
        *bailed,
        *mtime,
    ]);
    for (w, r) in rcl.iter().enumerate() {
        let Reclaim { passes, wait } = *r;
        fixed[SCALARS + 2 * w] = passes;
        fixed[SCALARS + 2 * w + 1] = wait;
    }
    for p in 0..MAX_PAGES {
        let Page { flags, ver, pend } = pages[p];
        let o = HEAD + PAGE * p;
        fixed[o..o + 7].copy_from_slice(&[flags, ver, pend, tmp[p], l_end[p], srv[p], drops[p]]);
        fixed[o + 7..o + 15].copy_from_slice(&hist[p].to_le_bytes());
        fixed[o + 15..o + 17].copy_from_slice(&fin[p].to_le_bytes());
        fixed[o + 17..o + 19].copy_from_slice(&sup[p].to_le_bytes());
    }
    e.arr(fixed);
    e.u8(queued.len() as u8);
    for w in queued.iter() {
        let Wpa { first, n } = *w;
        e.arr([first, n]);
    }
    e.u8(tasks.len() as u8);
    for t in tasks.iter() {
        e.arr(task(t));
    }
    e.u8(fuse_q.len() as u8);
    for r in fuse_q.iter() {
        e.hashed(r);
    }
    e.u8(bg_q.len() as u8);
    for r in bg_q.iter() {
        e.hashed(r);
    }
    for w in workers {
        e.hashed(w);
    }
    e.u8(aux.len() as u8);
    for a in aux.iter() {
        let Aux { prim, page, ver } = *a;
        e.arr([prim, page, ver]);
    }
    e.hashed(ev);
    // FUSE over io_uring: written only when set, so a /dev/fuse state's
    // image is what it was before uring.rs
    if (*utag, *bgtag, *away, *qsel) != (0, 0, 0, 0) {
        let [u0, u1] = utag.to_le_bytes();
        e.arr([u0, u1, *bgtag, *away, *qsel]);
    }
    // a6's ghost (subpage.rs): likewise written only when set, so the
    // images of states without mmap stores below a page are unchanged
    if *ext0 != 0 {
        e.arr([0xE0, *ext0]);
    }
}
