//! The byte image of a FUSE model state (`Spec::encode`): every field by
//! name, so adding a field to `State`, `Task`, `Page`, `Wpa`, `Aux` or
//! `Rwsem` is a compile error here until it is encoded. Fixed-size parts
//! are gathered into constant-size arrays (one copy each); bounded lists
//! write their length, then their used entries; enums go through their
//! derived `Hash`.

use super::config::MAX_PAGES;
use super::state::*;
use crate::common::encode::Enc;
use crate::common::rwsem::Rwsem;

const TASK: usize = 8 + 3 * MAX_PAGES;

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
    } = *t;
    let mut a = [0u8; TASK];
    a[..8].copy_from_slice(&[pc, ph, cur, bfirst, bn, reply, saved, applied as u8]);
    for p in 0..MAX_PAGES {
        a[8 + p] = snap[p];
        a[8 + MAX_PAGES + 2 * p..8 + MAX_PAGES + 2 * p + 2]
            .copy_from_slice(&before[p].to_le_bytes());
    }
    a
}

/// Per page: flags, ver, pend, tmp, l_end, srv, drops, hist (8), fin (2),
/// sup (2).
const PAGE: usize = 19;
/// i_size, size_unstable, writectr, rwsem (2), srv_size, wrote_once, viol.
const HEAD: usize = 8;

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
        workers,
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
        ev,
    } = s;
    let Rwsem { owner, readers } = *rwsem;
    let mut fixed = [0u8; HEAD + PAGE * MAX_PAGES];
    fixed[..HEAD].copy_from_slice(&[
        *i_size,
        *size_unstable as u8,
        *writectr as u8,
        owner,
        readers,
        *srv_size,
        *wrote_once,
        *viol,
    ]);
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
    for w in workers {
        e.hashed(w);
    }
    e.u8(aux.len() as u8);
    for a in aux.iter() {
        let Aux { prim, page, ver } = *a;
        e.arr([prim, page, ver]);
    }
    e.hashed(ev);
}
