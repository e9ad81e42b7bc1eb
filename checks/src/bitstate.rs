//! Bitstate search (`--bitstate N`): for state spaces whose fingerprint
//! table does not fit in memory. The visited set is an array of 2^N bits;
//! a state sets `HASHES` bits chosen from its 64-bit fingerprint, and is
//! taken as seen when all of them are set already (Spin's `-DBITSTATE`
//! with `-k3`; a Bloom filter). A new state whose bits happen to be set
//! by others is not explored (an omission), nor is anything reachable
//! only through it, so a bitstate run is never a proof: it reports
//! itself as stopped (`Stop::Bitstate`), every `holds` becomes
//! `incomplete (..., not a proof)`, and the estimate of omitted states
//! is printed with it.
//!
//! The estimate (docs/performance.md, "Beyond memory"): with m bits, k
//! hashes and i states stored, a fraction about 1 - e^(-k i / m) of the
//! bits is set (Bloom 1970), so the next new state is omitted with
//! probability about (1 - e^(-k i / m))^k; the expected number of
//! omissions while n states are stored is the sum of that over i < n,
//! computed here as an integral. The k bit indices come from one 64-bit
//! fingerprint by double hashing (Kirsch and Mitzenmacher 2006), so two
//! states with equal fingerprints are merged as in the exhaustive search:
//! n^2 / 2^65 more expected omissions, added to the estimate.

use crate::search::Visited;

/// Bits set per state (Spin's default `-k3`).
pub const HASHES: u32 = 3;
/// Smallest and largest N of `--bitstate N` (2^N bits: 128 KiB to
/// 128 GiB).
pub const MIN_LOG2: u8 = 20;
pub const MAX_LOG2: u8 = 40;

/// The value of `--bitstate N`, range checked.
pub fn flag(n: Option<u8>) -> Result<Option<u8>, String> {
    match n {
        None => Ok(None),
        Some(n) if (MIN_LOG2..=MAX_LOG2).contains(&n) => Ok(Some(n)),
        Some(n) => Err(format!(
            "--bitstate {n}: give N from {MIN_LOG2} to {MAX_LOG2} (2^N bits of memory)"
        )),
    }
}

/// The bit array.
pub struct BitSet {
    words: Vec<u64>,
    mask: u64,
    stored: usize,
}

impl BitSet {
    /// 2^`log2` bits, zeroed.
    pub fn new(log2: u8) -> Self {
        let bits = 1u64 << log2;
        BitSet {
            words: crate::fingerprint::table((bits / 64) as usize),
            mask: bits - 1,
            stored: 0,
        }
    }

    #[inline(always)]
    fn indices(&self, f: u64) -> [u64; HASHES as usize] {
        // double hashing: h1 + i * h2, h2 odd (so it cycles the whole
        // power-of-two array)
        let h2 = (f.rotate_left(29).wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1;
        let mut out = [0; HASHES as usize];
        for (i, x) in out.iter_mut().enumerate() {
            *x = f.wrapping_add((i as u64).wrapping_mul(h2)) & self.mask;
        }
        out
    }
}

impl Visited for BitSet {
    /// Sets the state's bits; true when one of them was clear (a new
    /// state, as far as the bits can tell).
    #[inline]
    fn insert(&mut self, f: u64) -> bool {
        let mut new = false;
        for b in self.indices(f) {
            let w = &mut self.words[(b >> 6) as usize];
            let bit = 1u64 << (b & 63);
            new |= *w & bit == 0;
            *w |= bit;
        }
        self.stored += new as usize;
        new
    }
    #[inline(always)]
    fn prefetch(&self, f: u64) {
        for b in self.indices(f) {
            crate::fingerprint::prefetch(&self.words, (b >> 6) as usize);
        }
    }
    fn stored(&self) -> usize {
        self.stored
    }
    fn bytes(&self) -> usize {
        self.words.len() * 8
    }
}

/// Expected states omitted by a bitstate search of 2^`log2` bits that
/// stored `n` states with `k` bits each: the integral over i from 0 to n
/// of (1 - e^(-k i / m))^k, plus the fingerprint merges n^2 / 2^65.
pub fn expected_omissions(log2: u8, k: u32, n: u64) -> f64 {
    let m = (1u64 << log2) as f64;
    let n = n as f64;
    let k = k as f64;
    let steps = 10_000;
    let dx = n / steps as f64;
    let mut sum = 0.0;
    for j in 0..steps {
        let x = (j as f64 + 0.5) * dx;
        sum += (1.0 - (-k * x / m).exp()).powf(k);
    }
    sum * dx + n * n / 2f64.powi(65)
}

/// `about 12 of 1000000 states (1.2e-5)` for the verdict lines.
pub fn describe(log2: u8, n: u64) -> String {
    let e = expected_omissions(log2, HASHES, n);
    format!(
        "bitstate 2^{log2} bits, k={HASHES}: about {} of {n} states may have been omitted ({:.1e} per state)",
        if e >= 10.0 {
            format!("{e:.0}")
        } else {
            format!("{e:.2}")
        },
        e / (n.max(1) as f64)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::fingerprint;

    #[test]
    fn the_estimate_follows_the_fill() {
        // nearly empty array: almost nothing omitted
        assert!(expected_omissions(30, 3, 1000) < 1e-9);
        // m/n = 8 bits per state, k = 3: the Bloom false-positive rate
        // at the end is (1 - e^(-3/8))^3 = 0.0306; the average over the
        // run is below that
        let n = 1u64 << 27;
        let e = expected_omissions(30, 3, n) / n as f64;
        assert!(e > 0.005 && e < 0.0306, "{e}");
        // more bits, fewer omissions
        assert!(expected_omissions(32, 3, n) < expected_omissions(31, 3, n));
    }

    #[test]
    fn the_bits_tell_new_states_with_the_estimated_error() {
        // 2^20 bits, 100 k distinct keys: the omissions counted are
        // near the estimate
        let mut b = BitSet::new(20);
        let n = 100_000u64;
        let mut omitted = 0;
        for i in 0..n {
            if !b.insert(fingerprint(&i)) {
                omitted += 1;
            }
        }
        let e = expected_omissions(20, HASHES, n - omitted);
        assert!(
            (omitted as f64) > e * 0.7 && (omitted as f64) < e * 1.3,
            "omitted {omitted}, estimate {e:.0}"
        );
        // a key stored is always seen again
        assert!(!b.insert(fingerprint(&5u64)));
        assert_eq!(b.stored() as u64, n - omitted);
    }
}
