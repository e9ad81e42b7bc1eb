//! inode->i_rwsem as two bytes: the exclusive owner (a task index, or
//! `NONE`) and the number of shared holders. Waiting is modelled by the
//! caller's step not being enabled while `try_*` fails.

use super::NONE;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rwsem {
    /// Exclusive holder (task index) or `NONE`.
    pub owner: u8,
    /// Shared holders.
    pub readers: u8,
}

impl Default for Rwsem {
    fn default() -> Self {
        Rwsem {
            owner: NONE,
            readers: 0,
        }
    }
}

impl Rwsem {
    pub fn is_free(&self) -> bool {
        self.owner == NONE && self.readers == 0
    }
    /// down_write: succeeds only when nobody holds it.
    pub fn try_lock(&mut self, t: u8) -> bool {
        if !self.is_free() {
            return false;
        }
        self.owner = t;
        true
    }
    /// down_read: succeeds unless a writer holds it (no writer
    /// preference: the model has no waiter queue).
    pub fn try_lock_shared(&mut self) -> bool {
        if self.owner != NONE {
            return false;
        }
        self.readers += 1;
        true
    }
    /// up_write by `t`, or up_read of one shared holder otherwise.
    pub fn unlock(&mut self, t: u8) {
        if self.owner == t {
            self.owner = NONE;
        } else {
            debug_assert!(self.readers > 0, "up_read without a holder");
            self.readers -= 1;
        }
    }
    /// `excl T1`, `shared x2`, `free`.
    pub fn describe(&self) -> String {
        if self.owner != NONE {
            format!("excl T{}", self.owner)
        } else if self.readers > 0 {
            format!("shared x{}", self.readers)
        } else {
            "free".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_and_shared_exclude_each_other() {
        let mut r = Rwsem::default();
        assert!(r.try_lock_shared());
        assert!(!r.try_lock(1), "a writer waits for readers");
        r.unlock(1);
        assert!(r.try_lock(1));
        assert!(!r.try_lock_shared(), "a reader waits for the writer");
        assert_eq!(r.describe(), "excl T1");
        r.unlock(1);
        assert!(r.is_free());
    }
}
