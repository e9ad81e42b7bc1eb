//! The state of one direct write(2) of a user buffer to a FOPEN_DIRECT_IO
//! file: the buffer (fixed for the run), fuse_direct_io's loop over
//! requests, fuse_get_user_pages' extraction batch and descriptors, and
//! the ghosts the properties read (what the WRITEs carried, pin counts).

use super::config::{PageRef, MAX_DESCS, MAX_FOLIOS, MAX_MAX_PAGES, MAX_VPAGES};
use crate::common::bounded::Bounded;
use serde::{Deserialize, Serialize};

/// A user buffer: `n` virtual pages, each backed by a physical page; the
/// data starts `start` units into the first and is `len` units long.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Layout {
    pub pages: [PageRef; MAX_VPAGES],
    pub n: u8,
    pub start: u8,
    pub len: u8,
}

impl Layout {
    pub fn vpages(&self) -> &[PageRef] {
        &self.pages[..self.n as usize]
    }
}

/// A `struct fuse_folio_desc` with its folio: `len` units from `off` units
/// into the folio. Also one segment of a WRITE's payload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Desc {
    pub folio: u8,
    pub off: u8,
    pub len: u8,
}

/// Where the writer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Pc {
    /// fuse_direct_io is about to size and allocate a request.
    Alloc,
    /// fuse_get_user_pages' outer loop: extract more, or stop.
    Loop,
    /// Inside the loop over one extraction's pages.
    Batch,
    /// 6.13-rc1: the last descriptor of the batch is still to be trimmed.
    Trim,
    /// The request is built; fuse_release_user_pages is next.
    Release,
    /// write(2) returned.
    Done,
}

/// No folio (collate's `prev_folio = NULL`).
pub const NO_FOLIO: u8 = u8::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub layout: Layout,
    pub pc: Pc,
    /// Units of the buffer the iov_iter has advanced past.
    pub pos: u8,
    /// Requests sent.
    pub reqs: u8,

    // ---- the current request (struct fuse_io_args)
    /// Descriptor slots fuse_io_alloc allocated: iov_iter_npages(iter,
    /// fc->max_pages), also fuse_get_user_pages' `max_pages`.
    pub slots: u8,
    /// `*nbytesp`: min(count, fc->max_write).
    pub nbytes_max: u8,
    /// Units packed into the request so far.
    pub nbytes: u8,
    /// Pages extracted into the request so far.
    pub nr_pages: u8,
    /// ap->folios[] / ap->descs[].
    pub descs: Bounded<Desc, MAX_DESCS>,

    // ---- the current extraction (the pages[] array and its loop)
    pub batch: Bounded<PageRef, { MAX_MAX_PAGES as usize }>,
    /// `start`: offset in units into the batch's first page.
    pub bstart: u8,
    /// `ret`: units of the batch not yet in a descriptor.
    pub bret: u8,
    /// `i`: next page of the batch.
    pub bi: u8,
    /// `npages` / `nfolios`: DIV_ROUND_UP(ret + start, PAGE_SIZE).
    pub bnpages: u8,
    /// 6.13-rc1: `ret + start` of the batch, for the trim.
    pub btotal: u8,
    /// collate: `prev_folio`.
    pub prev_folio: u8,

    // ---- ghosts
    /// Payload segments of the WRITEs sent, in order, as fuse_copy_folios
    /// copies them.
    pub wire: Bounded<Desc, MAX_DESCS>,
    /// Pins iov_iter_extract_pages took, per folio.
    pub pinned: [u8; MAX_FOLIOS],
    /// Pins fuse_release_user_pages dropped, per folio.
    pub unpinned: [u8; MAX_FOLIOS],
}

impl State {
    pub fn new(layout: Layout) -> State {
        State {
            layout,
            pc: Pc::Alloc,
            pos: 0,
            reqs: 0,
            slots: 0,
            nbytes_max: 0,
            nbytes: 0,
            nr_pages: 0,
            descs: Bounded::new(),
            batch: Bounded::new(),
            bstart: 0,
            bret: 0,
            bi: 0,
            bnpages: 0,
            btotal: 0,
            prev_folio: NO_FOLIO,
            wire: Bounded::new(),
            pinned: [0; MAX_FOLIOS],
            unpinned: [0; MAX_FOLIOS],
        }
    }
}
