//! State L (≤ 6.15): the fi->writepages rb-tree, temp pages and
//! secondary requests (kernel-sources.md §3.5).

use super::model::FuseModel;
use super::state::*;

impl FuseModel {
    /// fuse_writepage_need_send's "reached max pages" (L) before the
    /// position after a batch of `bn` positions from `bfirst` is added:
    /// `bn >= max_pages`, or, with positions of different sizes
    /// (`Config::max_kpages`), the kernel pages with that position.
    fn l_batch_full(&self, bfirst: u8, bn: u8) -> bool {
        match self.cfg.max_kpages {
            0 => bn >= self.cfg.max_pages,
            k => {
                let full = self.pages_spanned(bfirst, bn + 1) > k;
                if full {
                    self.note_cap_inside(bfirst, bfirst + bn, 1, k);
                }
                full
            }
        }
    }

    /// State L: the primary wpa in fi->writepages (rb-tree) covering page
    /// `p`, by its first page: a queued or in-flight writeback WRITE, or a
    /// batch a writeback task is building (inserted at
    /// fuse_writepage_add).
    pub fn in_tree(&self, s: &State, p: usize) -> Option<u8> {
        let cover = |first: u8, n: u8| (first as usize..(first + n) as usize).contains(&p);
        for w in s.queued.iter() {
            if cover(w.first, w.n) {
                return Some(w.first);
            }
        }
        for r in s.fuse_q.iter().chain(s.bg_q.iter()) {
            if let Req::CacheWrite { first, n, .. } = *r {
                if cover(first, n) {
                    return Some(first);
                }
            }
        }
        for w in s.workers.iter() {
            match *w {
                Worker::Busy {
                    req: Req::CacheWrite { first, n, .. },
                    ..
                }
                | Worker::Ending { first, n }
                    if cover(first, n) =>
                {
                    return Some(first);
                }
                _ => {}
            }
        }
        for t in s.tasks.iter() {
            if t.bn > 0 && cover(t.bfirst, t.bn) {
                return Some(t.bfirst);
            }
        }
        None
    }

    /// State L's fuse_writepages_fill (kernel-sources.md §3.5): the folio is copied into
    /// a temp page now; a folio already covered by an in-flight request in
    /// the rb-tree becomes a secondary request (or replaces the data of the
    /// existing one for that page) and its writeback ends at once.
    pub(super) fn fill_l(&self, s: &mut State, t: usize, p: usize) {
        let task = s.tasks[t];
        s.pages[p].clear(PG_DIRTY);
        let ignore_tree = self.cfg.variant.mut_l_no_secondary;
        let in_other = match self.in_tree(s, p) {
            Some(f) if !(task.bn > 0 && f == task.bfirst) && !ignore_tree => Some(f),
            _ => None,
        };
        // fuse_writepage_need_send (L also cuts at a folio under rb-tree
        // writeback)
        if task.bn > 0
            && (task.bfirst + task.bn != p as u8
                || self.l_batch_full(task.bfirst, task.bn)
                || in_other.is_some())
        {
            self.queue_writepage(
                s,
                Wpa {
                    first: task.bfirst,
                    n: task.bn,
                },
            );
            s.tasks[t].bn = 0;
        }
        let ver = s.pages[p].ver;
        s.pages[p].set(PG_WRITEBACK);
        s.pages[p].clear(PG_TOWRITE | PG_LOCKED);
        s.tasks[t].cur = p as u8 + 1;
        if s.tasks[t].bn > 0 {
            // the batch grows (its rb-tree range with it)
            s.tmp[p] = ver;
            s.tasks[t].bn += 1;
            return;
        }
        // fuse_writepage_add
        match self.in_tree(s, p).filter(|_| !ignore_tree) {
            Some(prim) => {
                // secondary: swap data into an existing one for this page,
                // or link a new one on old->next; writeback ends now
                match s
                    .aux
                    .iter()
                    .position(|a| a.prim == prim && a.page == p as u8)
                {
                    Some(i) => s.aux[i].ver = ver,
                    None => s.aux.push(Aux {
                        prim,
                        page: p as u8,
                        ver,
                    }),
                }
                s.pages[p].clear(PG_WRITEBACK | PG_RECLAIM | PG_READAHEAD);
                s.ev = Event::Secondary;
            }
            None => {
                s.tmp[p] = ver;
                s.tasks[t].bfirst = p as u8;
                s.tasks[t].bn = 1;
            }
        }
    }
}
