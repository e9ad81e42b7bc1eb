//! One page-cache folio's flags and data (or one block of a larger folio,
//! where the model tracks sub-folio state).

use serde::{Deserialize, Serialize};

// Page flag bits.
pub const PG_PRESENT: u8 = 1; // folio in the page cache
pub const PG_UPTODATE: u8 = 2; // PG_uptodate
pub const PG_DIRTY: u8 = 4; // PG_dirty
pub const PG_WRITEBACK: u8 = 8; // PG_writeback
pub const PG_LOCKED: u8 = 16; // PG_locked
pub const PG_TOWRITE: u8 = 32; // PAGECACHE_TAG_TOWRITE (WB_SYNC_ALL tagging)
pub const PG_RECLAIM: u8 = 64; // PG_reclaim (set by reclaim on a folio under writeback)
/// PG_readahead: the folio a readahead window marks, whose lookup by a
/// read starts the next window (page_cache_async_ra). The kernel keeps it
/// in PG_reclaim's bit; the model keeps the two apart (read.rs
/// `async_ra`).
pub const PG_READAHEAD: u8 = 128;

/// One page-cache folio (order 0: released kernels use order-0 folios for
/// FUSE regular files, kernel-sources.md §0.1).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Page {
    pub flags: u8,
    /// Version of the data the folio holds (meaningful when uptodate).
    pub ver: u8,
    /// On a folio's first block: writeback ranges still pending (iomap's
    /// write_bytes_pending, counted in ranges); PG_writeback ends at 0.
    pub pend: u8,
}

impl Page {
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    pub fn set(&mut self, f: u8) {
        self.flags |= f;
    }
    pub fn clear(&mut self, f: u8) {
        self.flags &= !f;
    }
    pub fn present(&self) -> bool {
        self.has(PG_PRESENT)
    }
    pub fn dirty(&self) -> bool {
        self.has(PG_DIRTY)
    }
    pub fn wb(&self) -> bool {
        self.has(PG_WRITEBACK)
    }
    pub fn locked(&self) -> bool {
        self.has(PG_LOCKED)
    }
}
