//! The data-version history of one page (ghost state): the order in which
//! data versions became current, packed as 4-bit slots in a `u64`, oldest
//! in the low bits; the last slot is the current data. Slot 0 always
//! exists (the initial data); later slots are never version 0, and a
//! version appears at most once. Properties judge staleness by it: data
//! is stale when a newer version is already in the history.

/// Most slots a history holds.
pub const HIST_SLOTS: usize = 16;

/// Appends `v` to a history.
pub fn hist_push(h: u64, v: u8) -> u64 {
    let len = hist_len(h);
    debug_assert!(len < HIST_SLOTS);
    h | ((v as u64 & 0xF) << (4 * len))
}

/// Number of slots used. Slot 0 always exists (initial data); later slots
/// are never version 0, so the first zero nibble after slot 0 ends it.
pub fn hist_len(h: u64) -> usize {
    let mut n = 1;
    while n < HIST_SLOTS && (h >> (4 * n)) & 0xF != 0 {
        n += 1;
    }
    n
}

/// Position of version `v` in the history, if present.
pub fn hist_pos(h: u64, v: u8) -> Option<usize> {
    (0..hist_len(h)).find(|&i| ((h >> (4 * i)) & 0xF) as u8 == v)
}

/// The current (last) version.
pub fn hist_cur(h: u64) -> u8 {
    ((h >> (4 * (hist_len(h) - 1))) & 0xF) as u8
}

pub fn hist_list(h: u64) -> Vec<u8> {
    (0..hist_len(h))
        .map(|i| ((h >> (4 * i)) & 0xF) as u8)
        .collect()
}

/// Is version `a` older than version `b` on this page? Unknown versions
/// count as oldest.
pub fn hist_older(h: u64, a: u8, b: u8) -> bool {
    match (hist_pos(h, a), hist_pos(h, b)) {
        (Some(x), Some(y)) => x < y,
        (None, Some(_)) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_orders_versions() {
        let h = hist_push(hist_push(1, 3), 5);
        assert_eq!(hist_list(h), vec![1, 3, 5]);
        assert_eq!(hist_cur(h), 5);
        assert!(hist_older(h, 1, 5));
        assert!(!hist_older(h, 5, 3));
        assert!(hist_older(h, 9, 3), "an unknown version is the oldest");
        assert_eq!(hist_pos(h, 3), Some(1));
    }
}
