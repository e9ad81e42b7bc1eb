//! Kernel pages inside a model position where the kernel would cut,
//! for trace conformance's refinement (harness conform/mod.rs
//! `conform_file_bounded`): readahead edges (below) and request caps
//! (layout.rs `note_cap_inside`).
//!
//! A model position may stand for a run of kernel pages (conform's
//! page split, `Config::real_pages`); a readahead window whose start or
//! end, or whose PG_readahead mark, falls strictly inside such a
//! position that is not cached is taken by the model in whole positions
//! (read.rs `model_span`, `ra_mark`), where the kernel adds only the
//! window's pages. Such an edge is noted here, and conformance splits
//! the position there and checks the trace again, so that the trace
//! sees which window the kernel took. A catalogue check never notes one
//! (its positions are one page or one unit each).
//!
//! The notes are kept per thread, only inside [`collecting`]; outside
//! it [`note`] does nothing.

use std::cell::RefCell;
use std::collections::BTreeSet;

thread_local! {
    static CUTS: RefCell<Option<BTreeSet<u32>>> = const { RefCell::new(None) };
}

/// Runs `f`, returning what it returns and the kernel pages noted
/// meanwhile on this thread.
pub fn collecting<R>(f: impl FnOnce() -> R) -> (R, BTreeSet<u32>) {
    let prev = CUTS.with(|c| c.replace(Some(BTreeSet::new())));
    let r = f();
    let got = CUTS.with(|c| c.replace(prev)).unwrap_or_default();
    // a nested collection also counts for the one around it
    CUTS.with(|c| {
        if let Some(s) = c.borrow_mut().as_mut() {
            s.extend(got.iter().copied());
        }
    });
    (r, got)
}

/// Notes kernel page `k` as an edge inside a position.
pub(super) fn note(k: u32) {
    CUTS.with(|c| {
        if let Some(s) = c.borrow_mut().as_mut() {
            s.insert(k);
        }
    });
}
