//! A byte image of a model state, for the checker's fingerprints
//! (`Spec::encode`). A derived `Hash` makes one hasher call per field and
//! writes every array length and enum discriminant as 8 bytes; an encoder
//! that names the state's fields writes each as a byte or two into a flat
//! buffer that the checker hashes in one pass, several times faster.
//!
//! An encoding must determine the state: equal images exactly for equal
//! states. Encoders destructure their structs without `..`, so a new
//! field is a compile error until it is encoded; small enums go through
//! their derived `Hash` (`Enc` is a `Hasher` that appends compactly).

use std::hash::{Hash, Hasher};

/// Largest image a model may write (`Spec::encode`).
pub const ENCODE_MAX: usize = 2048;

/// Appends bytes to a fixed buffer.
pub struct Enc<'a> {
    buf: &'a mut [u8; ENCODE_MAX],
    n: usize,
}

impl<'a> Enc<'a> {
    pub fn new(buf: &'a mut [u8; ENCODE_MAX]) -> Self {
        Enc { buf, n: 0 }
    }
    /// Bytes written.
    pub fn len(&self) -> usize {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    #[inline(always)]
    pub fn u8(&mut self, x: u8) {
        self.buf[self.n] = x;
        self.n += 1;
    }
    #[inline(always)]
    pub fn bool(&mut self, x: bool) {
        self.u8(x as u8);
    }
    #[inline(always)]
    pub fn i8(&mut self, x: i8) {
        self.u8(x as u8);
    }
    #[inline(always)]
    pub fn u16(&mut self, x: u16) {
        self.u8(x as u8);
        self.u8((x >> 8) as u8);
    }
    #[inline(always)]
    pub fn u32(&mut self, x: u32) {
        self.buf[self.n..self.n + 4].copy_from_slice(&x.to_le_bytes());
        self.n += 4;
    }
    #[inline(always)]
    pub fn u64(&mut self, x: u64) {
        self.buf[self.n..self.n + 8].copy_from_slice(&x.to_le_bytes());
        self.n += 8;
    }
    /// A fixed-size group of bytes: one bounds check, a constant-size
    /// copy (the fast way to write a struct's fields).
    #[inline(always)]
    pub fn arr<const K: usize>(&mut self, a: [u8; K]) {
        self.buf[self.n..self.n + K].copy_from_slice(&a);
        self.n += K;
    }
    /// The next `k` bytes of the image, for the caller to fill (every one
    /// of them: the buffer holds the previous image's bytes).
    #[inline(always)]
    pub fn take(&mut self, k: usize) -> &mut [u8] {
        let o = self.n;
        self.n += k;
        &mut self.buf[o..o + k]
    }
    #[inline(always)]
    pub fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.u8(x);
        }
    }
    /// A count or discriminant, LEB128 (prefix-free, one byte below 128).
    #[inline(always)]
    pub fn varint(&mut self, mut x: u64) {
        while x >= 0x80 {
            self.u8(x as u8 | 0x80);
            x >>= 7;
        }
        self.u8(x as u8);
    }
    /// A value through its derived `Hash` (enums).
    #[inline(always)]
    pub fn hashed<T: Hash>(&mut self, x: &T) {
        x.hash(self);
    }
}

/// Every write appends a prefix-free encoding of its value, so the bytes
/// of a derived `Hash` (fixed field order per type) determine the value.
impl Hasher for Enc<'_> {
    #[inline(always)]
    fn write(&mut self, b: &[u8]) {
        self.bytes(b);
    }
    #[inline(always)]
    fn write_u8(&mut self, x: u8) {
        self.u8(x);
    }
    #[inline(always)]
    fn write_u16(&mut self, x: u16) {
        self.u16(x);
    }
    #[inline(always)]
    fn write_u32(&mut self, x: u32) {
        self.u32(x);
    }
    #[inline(always)]
    fn write_u64(&mut self, x: u64) {
        self.u64(x);
    }
    #[inline(always)]
    fn write_usize(&mut self, x: usize) {
        self.varint(x as u64);
    }
    #[inline(always)]
    fn write_isize(&mut self, x: isize) {
        // zigzag, then LEB128
        self.varint(((x << 1) ^ (x >> (isize::BITS - 1))) as u64);
    }
    fn finish(&self) -> u64 {
        unreachable!("Enc collects bytes; the checker hashes them")
    }
}
