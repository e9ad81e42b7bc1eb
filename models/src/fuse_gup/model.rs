//! The steps of one direct write(2) through fuse_direct_io and
//! fuse_get_user_pages (fs/fuse/file.c), one per region of the C code:
//!
//! | step | kernel |
//! |---|---|
//! | `IoAlloc` | fuse_direct_io: `max_pages = iov_iter_npages(iter, fc->max_pages)`, fuse_io_alloc, `nbytes = min(count, fc->max_write)` |
//! | `Extract` | fuse_get_user_pages: iov_iter_extract_pages → pin_user_pages_fast (pins, advances the iter) |
//! | `Desc` | one pass of the loop over the extracted pages (variant-specific) |
//! | `Trim` | 6.13-rc1: `descs[last].length -= (PAGE_SIZE - ret) & (PAGE_SIZE - 1)` |
//! | `Send` | fuse_send_write: the WRITE's payload as fuse_copy_folios copies it |
//! | `Release` | fuse_release_user_pages: unpin_folio per descriptor |
//!
//! The server is assumed to write every byte (nres == nbytes), so the
//! loop only ends when the buffer is sent.

use super::config::{Config, LoopKind, PageRef, MAX_DESCS};
use super::state::{Desc, Layout, Pc, State, NO_FOLIO};
use crate::common::bounded::Bounded;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Action {
    IoAlloc,
    /// iov_iter_extract_pages returns `pages` pinned pages.
    Extract {
        pages: u8,
    },
    Desc,
    Trim,
    Send,
    Release,
}

#[derive(Clone, Debug)]
pub struct GupModel {
    pub cfg: Config,
    pub kind: LoopKind,
    /// Every initial state, in the enumeration order of `layouts`.
    pub inits: Vec<State>,
}

/// Every buffer of a configuration, in a fixed order: by number of pages,
/// then by pages (lexicographic over A0, A1, ..., B0, ...), then by start
/// and end offset inside the first and last page.
pub fn layouts(cfg: &Config) -> Vec<Layout> {
    let u = cfg.units;
    let mut out = vec![];
    let layout = |pages: &[PageRef], start: u8, len: u8| {
        let mut arr = [PageRef::default(); super::config::MAX_VPAGES];
        arr[..pages.len()].copy_from_slice(pages);
        Layout {
            pages: arr,
            n: pages.len() as u8,
            start,
            len,
        }
    };
    if !cfg.buffers.is_empty() {
        for b in &cfg.buffers {
            out.push(layout(&b.pages, b.start, b.data_len(u)));
        }
        return out;
    }
    // every start and end inside the first and last page
    let push = |pages: &[PageRef], out: &mut Vec<Layout>| {
        let n = pages.len() as u8;
        for start in 0..u {
            for tail in 0..u {
                if start + tail < n * u {
                    out.push(layout(pages, start, n * u - start - tail));
                }
            }
        }
    };
    let all = cfg.all_pages();
    let p = all.len();
    for n in 1..=cfg.max_vpages as u32 {
        // sequences of n pages in lexicographic order: the first page is
        // the most significant digit
        for code in 0..p.pow(n) {
            let pages: Vec<PageRef> = (0..n).map(|i| all[code / p.pow(n - 1 - i) % p]).collect();
            push(&pages, &mut out);
        }
    }
    out
}

fn div_up(a: u8, b: u8) -> u8 {
    a.div_ceil(b)
}

impl GupModel {
    pub fn new(cfg: Config) -> Result<GupModel, String> {
        cfg.validate()?;
        let inits = layouts(&cfg).into_iter().map(State::new).collect();
        Ok(GupModel {
            kind: cfg.variant.loop_kind(),
            cfg,
            inits,
        })
    }

    pub fn u(&self) -> u8 {
        self.cfg.units
    }

    /// Size of folio `f` in units.
    pub fn folio_units(&self, f: u8) -> u8 {
        self.cfg.folio_pages(f) * self.cfg.units
    }

    /// The offset of the iterator inside its current page, in units.
    pub fn iter_off(&self, s: &State) -> u8 {
        (s.layout.start + s.pos) % self.u()
    }

    /// The virtual page the iterator is in.
    pub fn iter_vpage(&self, s: &State) -> u8 {
        (s.layout.start + s.pos) / self.u()
    }

    /// `maxpages` of the iov_iter_extract_pages call.
    pub fn extract_maxpages(&self, s: &State) -> u8 {
        if self.cfg.variant.mut_extract_ignores_nr_pages {
            s.slots
        } else {
            s.slots - s.nr_pages
        }
    }

    /// Pages iov_iter_extract_pages asks pin_user_pages_fast for
    /// (want_pages_array: DIV_ROUND_UP(maxsize + offset, PAGE_SIZE), capped).
    pub fn extract_want(&self, s: &State) -> u8 {
        let maxsize = s.nbytes_max - s.nbytes;
        div_up(maxsize + self.iter_off(s), self.u()).min(self.extract_maxpages(s))
    }

    /// fuse_get_user_pages' loop condition.
    pub fn loop_continues(&self, s: &State) -> bool {
        s.nbytes < s.nbytes_max && s.nr_pages < s.slots
    }

    pub fn enabled(&self, s: &State, out: &mut Vec<Action>) {
        match s.pc {
            Pc::Alloc => out.push(Action::IoAlloc),
            Pc::Loop => {
                if self.loop_continues(s) {
                    let want = self.extract_want(s);
                    if self.cfg.short_pins {
                        out.extend((1..=want).map(|pages| Action::Extract { pages }));
                    } else {
                        out.push(Action::Extract { pages: want });
                    }
                } else {
                    out.push(Action::Send);
                }
            }
            Pc::Batch => out.push(Action::Desc),
            Pc::Trim => out.push(Action::Trim),
            Pc::Release => out.push(Action::Release),
            Pc::Done => {}
        }
    }

    pub fn step(&self, s: &State, a: Action) -> Option<State> {
        let mut n = *s;
        match a {
            Action::IoAlloc => self.io_alloc(&mut n),
            Action::Extract { pages } => self.extract(&mut n, pages),
            Action::Desc => match self.kind {
                LoopKind::Rc1 => self.desc_rc1(&mut n),
                LoopKind::PerPage => self.desc_per_page(&mut n),
                LoopKind::V2 => self.desc_v2(&mut n),
                LoopKind::Collate => self.desc_collate(&mut n),
            },
            Action::Trim => self.trim(&mut n),
            Action::Send => self.send(&mut n),
            Action::Release => self.release(&mut n),
        }
        Some(n)
    }

    /// fuse_direct_io: size the request from what is left of the iter.
    fn io_alloc(&self, s: &mut State) {
        let u = self.u();
        let count = s.layout.len - s.pos;
        s.slots = div_up(self.iter_off(s) + count, u).min(self.cfg.max_pages);
        s.nbytes_max = count.min(self.cfg.max_write);
        s.nbytes = 0;
        s.nr_pages = 0;
        s.descs = Bounded::new();
        s.batch = Bounded::new();
        s.pc = Pc::Loop;
    }

    /// iov_iter_extract_pages (ITER_UBUF): pin `k` pages from the iter's
    /// page on; return `min(maxsize, k * PAGE_SIZE - offset)` bytes and
    /// advance the iter by them.
    fn extract(&self, s: &mut State, k: u8) {
        let u = self.u();
        let off = self.iter_off(s);
        let vp = self.iter_vpage(s) as usize;
        let maxsize = s.nbytes_max - s.nbytes;
        let ret = maxsize.min(k * u - off);
        s.batch = s.layout.pages[vp..vp + k as usize]
            .iter()
            .copied()
            .collect();
        for p in s.batch.iter() {
            s.pinned[p.folio as usize] += 1;
        }
        s.pos += ret;
        s.nbytes += ret;
        s.bstart = off;
        s.bret = ret;
        s.bi = 0;
        s.bnpages = div_up(ret + off, u);
        s.btotal = ret + off;
        s.prev_folio = NO_FOLIO;
        s.pc = Pc::Batch;
    }

    fn end_batch(&self, s: &mut State, next: Pc) {
        s.nr_pages += s.bnpages;
        s.pc = next;
    }

    /// 6.13-rc1 (3b97c3652d91): page_folio(page) with the page-relative
    /// offset (`start` for the first page, 0 for the others) and
    /// `PAGE_SIZE - offset` bytes.
    fn desc_rc1(&self, s: &mut State) {
        let p = s.batch[s.bi as usize];
        let off = if s.bi == 0 { s.bstart } else { 0 };
        s.descs.push(Desc {
            folio: p.folio,
            off,
            len: self.u() - off,
        });
        s.bi += 1;
        if s.bi == s.bnpages {
            self.end_batch(s, Pc::Trim);
        }
    }

    /// 6.13-rc1: the last descriptor loses `(PAGE_SIZE - ret) & (PAGE_SIZE - 1)`
    /// (with `ret` = bytes + start).
    fn trim(&self, s: &mut State) {
        let u = self.u();
        let cut = (u - s.btotal % u) % u;
        let last = s.descs.len() - 1;
        s.descs[last].len -= cut;
        s.pc = Pc::Loop;
    }

    /// 7a4f54187373 (state M): one descriptor per page, offset inside the
    /// folio, `min(ret, PAGE_SIZE - start)` bytes; `start = 0` after the
    /// first page.
    fn desc_per_page(&self, s: &mut State) {
        let u = self.u();
        let v = &self.cfg.variant;
        let p = s.batch[s.bi as usize];
        let len = if v.mut_len_ignores_start {
            s.bret.min(u)
        } else {
            s.bret.min(u - s.bstart)
        };
        s.descs.push(Desc {
            folio: p.folio,
            off: s.bstart + p.idx * u,
            len,
        });
        if !v.mut_no_start_reset {
            s.bstart = 0;
        }
        s.bret -= len;
        s.bi += 1;
        if s.bi == s.bnpages {
            self.end_batch(s, Pc::Loop);
        }
    }

    /// v2 patch 10: a descriptor to the end of the page's folio (or of the
    /// data), then `i += DIV_ROUND_UP(start + len, PAGE_SIZE)`.
    fn desc_v2(&self, s: &mut State) {
        let u = self.u();
        let p = s.batch[s.bi as usize];
        let off = p.idx * u + s.bstart;
        let len = s.bret.min(self.folio_units(p.folio) - off);
        s.descs.push(Desc {
            folio: p.folio,
            off,
            len,
        });
        s.bret -= len;
        s.bi += div_up(s.bstart + len, u);
        s.bstart = 0;
        if !(s.bret > 0 && s.bi < s.bnpages) {
            self.end_batch(s, Pc::Loop);
        }
    }

    /// v3–v6 patch 10: per page; the previous descriptor grows when the
    /// folio is `prev_folio` and the page is not the previous page (with
    /// p_collate_contig: when it is the previous page's next page).
    fn desc_collate(&self, s: &mut State) {
        let u = self.u();
        let i = s.bi as usize;
        let p = s.batch[i];
        let len = s.bret.min(u - s.bstart);
        let grow = p.folio == s.prev_folio
            && if self.cfg.variant.p_collate_contig {
                p.idx == s.batch[i - 1].idx + 1
            } else {
                s.batch[i] != s.batch[i - 1]
            };
        if grow {
            let last = s.descs.len() - 1;
            s.descs[last].len += len;
        } else {
            s.descs.push(Desc {
                folio: p.folio,
                off: s.bstart + p.idx * u,
                len,
            });
            s.bstart = 0;
            s.prev_folio = p.folio;
        }
        s.bret -= len;
        s.bi += 1;
        if !(s.bi < s.bnpages && s.bret > 0) {
            self.end_batch(s, Pc::Loop);
        }
    }

    /// fuse_send_write: the WRITE carries `nbytes`; fuse_copy_folios takes
    /// `min(nbytes_left, desc.length)` from each descriptor in turn.
    fn send(&self, s: &mut State) {
        let mut rem = s.nbytes;
        for d in s.descs.iter() {
            let c = rem.min(d.len);
            if c > 0 {
                s.wire.push(Desc { len: c, ..*d });
            }
            rem -= c;
        }
        s.reqs += 1;
        s.pc = Pc::Release;
    }

    /// fuse_release_user_pages: unpin_folio(ap->folios[i]) for every
    /// descriptor; then fuse_direct_io goes round again or returns.
    fn release(&self, s: &mut State) {
        if self.cfg.variant.mut_unpin_per_folio {
            let mut seen = [false; super::config::MAX_FOLIOS];
            for d in s.descs.iter() {
                seen[d.folio as usize] = true;
            }
            for (f, &on) in seen.iter().enumerate() {
                if on {
                    s.unpinned[f] += 1;
                }
            }
        } else {
            for d in s.descs.iter() {
                s.unpinned[d.folio as usize] += 1;
            }
        }
        s.pc = if s.pos == s.layout.len {
            Pc::Done
        } else {
            Pc::Alloc
        };
    }

    // ---- what the properties and the narration read

    /// The physical byte unit behind unit `o` of folio `f`, or `None` when
    /// `o` lies past the folio's end.
    pub fn folio_unit(&self, f: u8, o: u8) -> Option<(PageRef, u8)> {
        let u = self.u();
        (o < self.folio_units(f)).then_some((
            PageRef {
                folio: f,
                idx: o / u,
            },
            o % u,
        ))
    }

    /// Unit `k` of the buffer's data.
    pub fn buffer_unit(&self, l: &Layout, k: u8) -> (PageRef, u8) {
        let u = self.u();
        let x = l.start + k;
        (l.pages[(x / u) as usize], x % u)
    }

    /// The units the WRITEs sent so far carried, in order.
    pub fn wire_units(&self, s: &State) -> Vec<Option<(PageRef, u8)>> {
        let mut v = Vec::with_capacity(MAX_DESCS);
        for d in s.wire.iter() {
            for j in 0..d.len {
                v.push(self.folio_unit(d.folio, d.off + j));
            }
        }
        v
    }

    /// Index of the first unit sent that is not the buffer's, if any.
    pub fn first_wrong_unit(&self, s: &State) -> Option<usize> {
        let w = self.wire_units(s);
        for (k, x) in w.iter().enumerate() {
            if k >= s.layout.len as usize || *x != Some(self.buffer_unit(&s.layout, k as u8)) {
                return Some(k);
            }
        }
        None
    }
}
