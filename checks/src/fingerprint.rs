//! State fingerprints and the set of visited fingerprints, for the
//! exhaustive search (search.rs).
//!
//! A derived `Hash` of a model state issues one small `write` per field
//! (about a hundred for the FUSE state). `WordHasher` packs the bytes of
//! those writes into 8-byte words as they come (a shift and an or per
//! field) and folds every two words into the running hash with one
//! 64x64->128-bit multiply (the wyhash construction), so a state costs a
//! few dozen multiplies instead of one per field. The byte stream of a
//! derived `Hash` determines the value (lengths and enum discriminants are
//! written too), so equal fingerprints of distinct states are chance
//! collisions. Like Stateright's own checker, the search stores only these
//! 64-bit fingerprints: two distinct states with the same fingerprint
//! would be merged. With n states the chance of any such collision is
//! about n^2 / 2^65 (2e-6 at 8 M states); the pinned state counts, which
//! the reference checker reproduces with another hash function, would show
//! one.

use std::hash::{Hash, Hasher};
use wbspec_models::common::encode::{Enc, ENCODE_MAX};
use wbspec_models::spec::Spec;

const S0: u64 = 0xa076_1d64_78bd_642f;
const S1: u64 = 0xe703_7ed1_a0b4_28db;
const S2: u64 = 0x8ebc_6af0_9c88_c6e3;
const S3: u64 = 0x5899_65cc_7537_4cc3;

#[inline(always)]
fn mix(a: u64, b: u64) -> u64 {
    let r = (a as u128).wrapping_mul(b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

/// A `Hasher` that folds every write into the running hash with one
/// 64x64->128-bit multiply (the update of aHash's portable hasher, which
/// Stateright's own fingerprints use): a few instructions per field, no
/// buffer. A slice write is folded 8 bytes at a time, then its length.
#[derive(Clone, Copy)]
pub struct WordHasher {
    acc: u64,
}

impl Default for WordHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl WordHasher {
    #[inline(always)]
    pub fn new() -> Self {
        WordHasher { acc: S0 }
    }

    #[inline(always)]
    fn put(&mut self, x: u64) {
        self.acc = mix(self.acc ^ x, S1);
    }
}

impl Hasher for WordHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut c = bytes.chunks_exact(8);
        for w in &mut c {
            self.put(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        let r = c.remainder();
        if !r.is_empty() {
            let mut b = [0u8; 8];
            b[..r.len()].copy_from_slice(r);
            self.put(u64::from_le_bytes(b));
        }
        self.put(bytes.len() as u64 ^ S2);
    }
    #[inline(always)]
    fn write_u8(&mut self, x: u8) {
        self.put(x as u64);
    }
    #[inline(always)]
    fn write_u16(&mut self, x: u16) {
        self.put(x as u64);
    }
    #[inline(always)]
    fn write_u32(&mut self, x: u32) {
        self.put(x as u64);
    }
    #[inline(always)]
    fn write_u64(&mut self, x: u64) {
        self.put(x);
    }
    #[inline(always)]
    fn write_usize(&mut self, x: usize) {
        self.put(x as u64);
    }
    #[inline(always)]
    fn write_i8(&mut self, x: i8) {
        self.put(x as u8 as u64);
    }
    #[inline(always)]
    fn write_isize(&mut self, x: isize) {
        self.put(x as u64);
    }

    fn finish(&self) -> u64 {
        mix(self.acc ^ S2, S3)
    }
}

/// The hash of a byte string: 32-byte blocks in two independent lanes
/// (two multiplies per block, half the dependency chain), then the tail
/// and the length.
#[inline]
pub fn hash_bytes(b: &[u8]) -> u64 {
    #[inline(always)]
    fn w(x: &[u8]) -> u64 {
        u64::from_le_bytes(x[..8].try_into().expect("8 bytes"))
    }
    let (mut a, mut c) = (S0, S3);
    let mut blocks = b.chunks_exact(32);
    for x in &mut blocks {
        a = mix(w(x) ^ S1, w(&x[8..]) ^ a);
        c = mix(w(&x[16..]) ^ S2, w(&x[24..]) ^ c);
    }
    let r = blocks.remainder();
    if !r.is_empty() {
        let mut t = [0u8; 32];
        t[..r.len()].copy_from_slice(r);
        a = mix(w(&t) ^ S1, w(&t[8..]) ^ a);
        c = mix(w(&t[16..]) ^ S2, w(&t[24..]) ^ c);
    }
    mix(a ^ S2 ^ b.len() as u64, c ^ S0)
}

/// Fingerprints a model's states: by its byte image (`Spec::encode`)
/// when it has one, else by its derived `Hash`.
pub struct Fingerprinter {
    buf: Box<[u8; ENCODE_MAX]>,
}

impl Default for Fingerprinter {
    fn default() -> Self {
        Self::new()
    }
}

impl Fingerprinter {
    pub fn new() -> Self {
        Fingerprinter {
            buf: Box::new([0; ENCODE_MAX]),
        }
    }

    /// Never 0.
    #[inline]
    pub fn of<M: Spec>(&mut self, m: &M, s: &M::State) -> u64 {
        let mut e = Enc::new(&mut self.buf);
        let f = if m.encode(s, &mut e) {
            let n = e.len();
            hash_bytes(&self.buf[..n])
        } else {
            fingerprint(s)
        };
        if f == 0 {
            1
        } else {
            f
        }
    }
}

/// The fingerprint of a value: never 0 (0 marks a free slot of `FpSet`).
#[inline]
pub fn fingerprint<T: Hash>(x: &T) -> u64 {
    let mut h = WordHasher::new();
    x.hash(&mut h);
    match h.finish() {
        0 => 1,
        f => f,
    }
}

/// A set of nonzero fingerprints: one flat table with linear probing, the
/// slot chosen by the fingerprint's high bits (`f * capacity >> 64`), so
/// the capacity need not be a power of two and can be sized to a pinned
/// state count. It doubles when it is more than `MAX_LOAD` full.
pub struct FpSet {
    slots: Vec<u64>,
    len: usize,
}

/// Most filled fraction, in percent, before the table grows.
const MAX_LOAD: usize = 75;

impl FpSet {
    /// A table for about `expected` fingerprints without growing.
    pub fn with_expected(expected: usize) -> Self {
        let cap = (expected.max(1024) * 100 / 70).max(1024);
        FpSet {
            slots: table(cap),
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held by the table.
    pub fn bytes(&self) -> usize {
        self.slots.len() * 8
    }

    #[inline(always)]
    fn home(f: u64, cap: usize) -> usize {
        ((f as u128 * cap as u128) >> 64) as usize
    }

    /// Inserts `f` (nonzero); false when it was already there.
    #[inline]
    pub fn insert(&mut self, f: u64) -> bool {
        debug_assert!(f != 0);
        if (self.len + 1) * 100 > self.slots.len() * MAX_LOAD {
            self.grow();
        }
        let cap = self.slots.len();
        let mut i = Self::home(f, cap);
        loop {
            let x = self.slots[i];
            if x == f {
                return false;
            }
            if x == 0 {
                self.slots[i] = f;
                self.len += 1;
                return true;
            }
            i += 1;
            if i == cap {
                i = 0;
            }
        }
    }

    /// Hints the processor to fetch `f`'s home slot.
    #[inline(always)]
    pub fn prefetch(&self, f: u64) {
        prefetch(&self.slots, Self::home(f, self.slots.len()));
    }

    #[cold]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = table(old.len() * 2);
        self.len = 0;
        for f in old.into_iter().filter(|&f| f != 0) {
            self.insert(f);
        }
    }
}

/// Hints the processor to fetch `t[i]` (`i` in bounds).
#[inline(always)]
pub(crate) fn prefetch<T>(t: &[T], i: usize) {
    debug_assert!(i < t.len());
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch(t.as_ptr().add(i) as *const i8, _MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (t, i);
}

/// What a concurrent insert found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insert {
    New,
    Old,
    /// The table is past its load bound for this round: the caller keeps
    /// the fingerprint and inserts it after `SharedFpSet::grow`.
    Full,
}

/// `FpSet` shared by several threads: the same flat table of nonzero
/// fingerprints with linear probing, each slot an atomic word claimed by
/// compare-and-swap (a slot only ever goes from 0 to a fingerprint, so a
/// reader that sees a fingerprint sees it for good). It does not grow
/// while threads insert: a thread reserves room for `BLOCK` new
/// fingerprints at a time from one shared counter (so the counter's cache
/// line is written once per `BLOCK` inserts, not once per insert), and
/// `insert` answers `Full` when no reservation fits under the load bound;
/// the owner then grows it (`grow`, with `&mut self`: no thread inserts).
pub struct SharedFpSet {
    slots: Vec<std::sync::atomic::AtomicU64>,
    /// Slots reserved: at least the fingerprints stored.
    reserved: std::sync::atomic::AtomicUsize,
    limit: usize,
    /// Threads that may hold a reservation.
    threads: usize,
}

/// New fingerprints a thread reserves room for at a time.
pub const BLOCK: usize = 256;

impl SharedFpSet {
    /// A table for about `expected` fingerprints, inserted by `threads`
    /// threads.
    pub fn with_expected(expected: usize, threads: usize) -> Self {
        let cap = (expected.max(1024) * 100 / 70).max(1024);
        let mut t = Self::with_capacity(cap, threads);
        t.grow(0, 0);
        t
    }

    fn with_capacity(cap: usize, threads: usize) -> Self {
        let t = table(cap);
        // a Vec<u64> of zeros is a Vec<AtomicU64> of zeros (same size and
        // alignment), and keeps its huge-page advice
        let mut t = std::mem::ManuallyDrop::new(t);
        let slots = unsafe {
            Vec::from_raw_parts(
                t.as_mut_ptr() as *mut std::sync::atomic::AtomicU64,
                t.len(),
                t.capacity(),
            )
        };
        SharedFpSet {
            slots,
            reserved: std::sync::atomic::AtomicUsize::new(0),
            limit: cap * MAX_LOAD / 100,
            threads,
        }
    }

    /// Slots reserved: an upper bound of the fingerprints stored, at most
    /// `threads * BLOCK` above it.
    pub fn reserved(&self) -> usize {
        self.reserved.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn bytes(&self) -> usize {
        self.slots.len() * 8
    }

    /// Inserts `f` (nonzero) unless the table is at its load bound;
    /// `room` is the calling thread's reservation (start it at 0).
    #[inline]
    pub fn insert(&self, f: u64, room: &mut usize) -> Insert {
        use std::sync::atomic::Ordering::Relaxed;
        debug_assert!(f != 0);
        let cap = self.slots.len();
        let mut i = FpSet::home(f, cap);
        loop {
            let x = self.slots[i].load(Relaxed);
            if x == f {
                return Insert::Old;
            }
            if x == 0 {
                if *room == 0 {
                    if self.reserved.fetch_add(BLOCK, Relaxed) + BLOCK > self.limit {
                        self.reserved.fetch_sub(BLOCK, Relaxed);
                        return Insert::Full;
                    }
                    *room = BLOCK;
                }
                match self.slots[i].compare_exchange(0, f, Relaxed, Relaxed) {
                    Ok(_) => {
                        *room -= 1;
                        return Insert::New;
                    }
                    // another thread took the slot: look at what it wrote
                    Err(y) if y == f => return Insert::Old,
                    Err(_) => {}
                }
            }
            i += 1;
            if i == cap {
                i = 0;
            }
        }
    }

    #[inline(always)]
    pub fn prefetch(&self, f: u64) {
        prefetch(&self.slots, FpSet::home(f, self.slots.len()));
    }

    /// Inserts `f` (nonzero) with the table to itself (no thread holds
    /// it), after `grow` made room: true when it was new.
    pub fn insert_alone(&mut self, f: u64) -> bool {
        let mut room = usize::MAX;
        let new = self.insert(f, &mut room) == Insert::New;
        *self.reserved.get_mut() += new as usize;
        new
    }

    /// Makes room for `more` further fingerprints besides every thread's
    /// reservation, doubling the table as often as needed (nothing when
    /// they fit); `stored` is the number of fingerprints in the table.
    /// Reservations held stay valid: the counter restarts at `stored`
    /// plus a full block per thread.
    pub fn grow(&mut self, stored: usize, more: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        let need = stored + more + self.threads * BLOCK;
        let mut cap = self.slots.len();
        while need * 100 > cap * MAX_LOAD {
            cap *= 2;
        }
        if cap != self.slots.len() {
            let old = std::mem::replace(self, Self::with_capacity(cap, self.threads));
            let mut room = usize::MAX;
            for s in &old.slots {
                let f = s.load(Relaxed);
                if f != 0 {
                    self.insert(f, &mut room);
                }
            }
        }
        *self.reserved.get_mut() = stored + self.threads * BLOCK;
    }
}

/// A zeroed table of `cap` slots. Lookups land on random slots, so a
/// large table misses the TLB on nearly every probe; it asks for
/// transparent huge pages (2 MiB) where the kernel offers them on request.
pub(crate) fn table(cap: usize) -> Vec<u64> {
    let v = vec![0u64; cap];
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = cap * 8;
        if bytes >= 2 * HUGE {
            let page = 4096;
            let start = v.as_ptr() as usize;
            let lo = start.div_ceil(page) * page;
            let hi = start + bytes;
            if hi > lo {
                // advice only: failure (no THP) changes nothing but speed
                unsafe {
                    libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_and_lengths_count() {
        let bytes: Vec<u8> = (0..1500u32).map(|i| (i * 7 + 3) as u8).collect();
        let f = |b: &[u8]| {
            let mut h = WordHasher::new();
            h.write(b);
            h.finish()
        };
        assert_eq!(f(&bytes), f(&bytes.clone()));
        // trailing zeros change the fingerprint
        let mut z = bytes.clone();
        z.push(0);
        assert_ne!(f(&bytes), f(&z));
        assert_ne!(f(&[]), f(&[0]));
        for n in 0..100 {
            assert_ne!(hash_bytes(&bytes[..n]), hash_bytes(&bytes[..n + 1]));
        }
    }

    #[test]
    fn small_differences_change_the_fingerprint() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..64u32 {
            for j in 0..64u32 {
                let v = [0u8; 40];
                let mut v = v;
                v[(i % 40) as usize] ^= 1 << (j % 8);
                v[39] = j as u8;
                seen.insert((v, fingerprint(&v)));
            }
        }
        let fps: std::collections::HashSet<u64> = seen.iter().map(|(_, f)| *f).collect();
        assert_eq!(
            fps.len(),
            seen.len(),
            "no collisions among near-equal inputs"
        );
    }

    #[test]
    fn the_shared_set_agrees_with_the_set() {
        let mut shared = SharedFpSet::with_expected(10, 1);
        let mut plain = FpSet::with_expected(10);
        let (mut room, mut stored) = (0, 0);
        let mut full = Vec::new();
        let admit = |shared: &mut SharedFpSet, full: &mut Vec<(u64, bool)>, stored: &mut usize| {
            shared.grow(*stored, full.len());
            for (f, want) in full.drain(..) {
                let new = shared.insert_alone(f);
                assert_eq!(new, want);
                *stored += new as usize;
            }
        };
        for i in 1..=20_000u64 {
            let f = fingerprint(&(i % 15_000));
            let want = plain.insert(f);
            match shared.insert(f, &mut room) {
                Insert::New => {
                    assert!(want);
                    stored += 1;
                }
                Insert::Old => assert!(!want),
                Insert::Full => full.push((f, want)),
            }
            if full.len() > 100 {
                admit(&mut shared, &mut full, &mut stored);
            }
        }
        admit(&mut shared, &mut full, &mut stored);
        assert_eq!((stored, plain.len()), (15_000, 15_000));
        assert!(shared.reserved() >= stored);
        // two threads inserting the same fingerprints: each is new once
        let s = SharedFpSet::with_expected(40_000, 2);
        let news: usize = std::thread::scope(|sc| {
            let h: Vec<_> = (0..2)
                .map(|_| {
                    sc.spawn(|| {
                        let mut room = 0;
                        (1..=30_000u64)
                            .filter(|i| s.insert(fingerprint(i), &mut room) == Insert::New)
                            .count()
                    })
                })
                .collect();
            h.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(news, 30_000);
    }

    #[test]
    fn the_set_grows_and_keeps_every_member() {
        let mut s = FpSet::with_expected(10);
        for i in 1..=50_000u64 {
            assert!(s.insert(fingerprint(&i)));
        }
        assert_eq!(s.len(), 50_000);
        for i in 1..=50_000u64 {
            assert!(!s.insert(fingerprint(&i)), "{i} is a member");
        }
        assert!(s.insert(fingerprint(&0u64)));
        assert!(s.bytes() >= 50_001 * 8 * 100 / MAX_LOAD);
    }
}
