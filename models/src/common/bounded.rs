//! A fixed-capacity vector that is `Copy`, hashes only its used part and
//! needs no allocation, so cloning a model state is a memcpy.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};

#[derive(Clone, Copy)]
pub struct Bounded<T: Copy + Default, const N: usize> {
    len: u8,
    items: [T; N],
}

impl<T: Copy + Default, const N: usize> Bounded<T, N> {
    pub fn new() -> Self {
        Bounded {
            len: 0,
            items: [T::default(); N],
        }
    }

    /// Appends; the model's bounds (checked in `Config::validate`) keep
    /// this within capacity, so overflow is an internal error.
    pub fn push(&mut self, x: T) {
        assert!(
            (self.len as usize) < N,
            "model bound exceeded: more than {N} entries"
        );
        self.items[self.len as usize] = x;
        self.len += 1;
    }

    /// Removes and returns the element at `i`, shifting the rest down.
    pub fn remove(&mut self, i: usize) -> T {
        let n = self.len as usize;
        assert!(i < n);
        let x = self.items[i];
        self.items.copy_within(i + 1..n, i);
        self.items[n - 1] = T::default();
        self.len -= 1;
        x
    }
}

impl<T: Copy + Default, const N: usize> Default for Bounded<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default, const N: usize> Deref for Bounded<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items[..self.len as usize]
    }
}

impl<T: Copy + Default, const N: usize> DerefMut for Bounded<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items[..self.len as usize]
    }
}

impl<T: Copy + Default + PartialEq, const N: usize> PartialEq for Bounded<T, N> {
    fn eq(&self, o: &Self) -> bool {
        **self == **o
    }
}
impl<T: Copy + Default + Eq, const N: usize> Eq for Bounded<T, N> {}

impl<T: Copy + Default + PartialEq, const N: usize> PartialEq<Vec<T>> for Bounded<T, N> {
    fn eq(&self, o: &Vec<T>) -> bool {
        **self == o[..]
    }
}

impl<T: Copy + Default + Hash, const N: usize> Hash for Bounded<T, N> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (**self).hash(h)
    }
}

impl<T: Copy + Default + fmt::Debug, const N: usize> fmt::Debug for Bounded<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Copy + Default + Serialize, const N: usize> Serialize for Bounded<T, N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de, T: Copy + Default + Deserialize<'de>, const N: usize> Deserialize<'de> for Bounded<T, N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Vec::<T>::deserialize(d)?;
        if v.len() > N {
            return Err(serde::de::Error::custom(format!("more than {N} entries")));
        }
        let mut b = Bounded::new();
        for x in v {
            b.push(x);
        }
        Ok(b)
    }
}

impl<T: Copy + Default, const N: usize> FromIterator<T> for Bounded<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Self {
        let mut b = Bounded::new();
        for x in it {
            b.push(x);
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::Bounded;
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};

    #[test]
    fn push_remove_and_equality_ignore_unused_slots() {
        let mut a: Bounded<u8, 4> = Bounded::new();
        a.push(1);
        a.push(2);
        a.push(3);
        assert_eq!(a.remove(0), 1);
        let b: Bounded<u8, 4> = [2, 3].into_iter().collect();
        assert_eq!(a, b);
        let h = |x: &Bounded<u8, 4>| {
            let mut s = DefaultHasher::new();
            x.hash(&mut s);
            s.finish()
        };
        assert_eq!(h(&a), h(&b));
        assert_eq!(a, vec![2, 3]);
        let j = serde_json::to_string(&a).unwrap();
        assert_eq!(j, "[2,3]");
    }
}
