//! The byte image of a FUSE model state (`Spec::encode`): every field by
//! name, so adding a field to `State`, `Task`, `Page`, `Wpa`, `Aux`,
//! `Reclaim` or `Rwsem` is a compile error here until it is encoded.
//! Fixed-size parts are gathered into constant-size arrays (one copy
//! each); bounded lists write their length, then their used entries; enums
//! go through their derived `Hash`.

use super::config::{MAX_PAGES, MAX_WORKERS, NARROW_PAGES};
use super::state::*;
use crate::common::encode::Enc;
use crate::common::rwsem::Rwsem;
use std::hash::Hash;

/// A task's image over its first `W` pages. With `W` = 4 (NARROW_PAGES)
/// both page masks of its readahead_control share a byte, as when the
/// state had 4 pages; wider, each is a u16 after the scalars.
fn task<const W: usize>(e: &mut Enc, t: &Task) {
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
        ra_mark,
        raw,
        aio,
        mt,
        folio_locked,
    } = *t;
    let narrow = W <= NARROW_PAGES;
    debug_assert!(!narrow || (ra | ra_todo) >> NARROW_PAGES == 0);
    let ras = if narrow { (ra | ra_todo << 4) as u8 } else { 0 };
    e.arr([
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
        ras,
        rd,
        aio,
        mt,
        folio_locked as u8,
    ]);
    if !narrow {
        e.u16(ra);
        e.u16(ra_todo);
    }
    let a = e.take(3 * W);
    for p in 0..W {
        a[p] = snap[p];
        a[W + 2 * p..W + 2 * p + 2].copy_from_slice(&before[p].to_le_bytes());
    }
    // readahead marks and a file of its own's window: written only when
    // set, after a byte no task or queue length starts with
    if ra_mark != 0 || raw != RaWin::FRESH {
        ra_win(e, 0xA5, &raw);
        e.u8(ra_mark);
    }
}

/// A file's readahead window, tagged.
fn ra_win(e: &mut Enc, tag: u8, w: &RaWin) {
    let RaWin { start, size, asz } = *w;
    e.u8(tag);
    e.u32(start);
    e.arr([size, asz]);
}

/// A daemon worker: its derived `Hash` image, the payload cut to `W`
/// pages (the same bytes as the derived image of a 4-page payload).
fn worker<const W: usize>(e: &mut Enc, w: &Worker) {
    match w {
        Worker::Busy { req, payload } => {
            debug_assert!(payload[W..].iter().all(|v| *v == NONE));
            std::mem::discriminant(w).hash(e);
            req.hash(e);
            payload[..W].hash(e);
        }
        _ => e.hashed(w),
    }
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

/// The image of `s`, a state of a configuration of `pages` positions.
/// Every per-page field past a configuration's positions keeps its
/// initial value, so an image of the first `pages` (at least 4) determines
/// the state; up to 4 positions the image is the one the 4-page state
/// had (same fingerprints, so bitstate and hash-compaction runs are
/// unchanged).
pub fn encode(e: &mut Enc, s: &State, pages: usize) {
    if pages <= NARROW_PAGES {
        encode_w::<NARROW_PAGES>(e, s)
    } else {
        encode_w::<MAX_PAGES>(e, s)
    }
}

fn encode_w<const W: usize>(e: &mut Enc, s: &State) {
    let narrow = W <= NARROW_PAGES;
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
        ra_win: wins,
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
    debug_assert!(!narrow || (*wrote_once | *lost) >> NARROW_PAGES == 0 && *sizes < 0x100);
    let Rwsem { owner, readers } = *rwsem;
    let fixed = e.take(HEAD + PAGE * W);
    fixed[SCALARS - MAX_FDS..SCALARS].copy_from_slice(ra_prev);
    fixed[..SCALARS - MAX_FDS].copy_from_slice(&[
        *i_size,
        *size_unstable as u8,
        *writectr as u8,
        owner,
        readers,
        *srv_size,
        *wrote_once as u8,
        *viol,
        *lf_viol,
        *iocachectr as u8,
        *cache_io_mode as u8,
        *wb_err,
        *as_eio as u8,
        *lost as u8,
        *losses,
        *sizes as u8,
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
    for p in 0..W {
        let Page { flags, ver, pend } = pages[p];
        let o = HEAD + PAGE * p;
        fixed[o..o + 7].copy_from_slice(&[flags, ver, pend, tmp[p], l_end[p], srv[p], drops[p]]);
        fixed[o + 7..o + 15].copy_from_slice(&hist[p].to_le_bytes());
        fixed[o + 15..o + 17].copy_from_slice(&fin[p].to_le_bytes());
        fixed[o + 17..o + 19].copy_from_slice(&sup[p].to_le_bytes());
    }
    if !narrow {
        // the masks' high bytes and the sizes past 7 pages
        e.u16(*wrote_once);
        e.u16(*lost);
        e.u32(*sizes);
    }
    e.u8(queued.len() as u8);
    for w in queued.iter() {
        let Wpa { first, n } = *w;
        e.arr([first, n]);
    }
    e.u8(tasks.len() as u8);
    for t in tasks.iter() {
        task::<W>(e, t);
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
        worker::<W>(e, w);
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
        e.u8(0xE0);
        if narrow {
            e.u8(*ext0 as u8);
        } else {
            e.u16(*ext0);
        }
    }
    // the open files' readahead windows (read.rs), likewise
    for (f, w) in wins.iter().enumerate() {
        if *w != RaWin::FRESH {
            ra_win(e, 0xA0 + f as u8, w);
        }
    }
}
