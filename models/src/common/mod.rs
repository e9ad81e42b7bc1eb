//! Building blocks every model uses: a `Copy` bounded vector, folio flags,
//! the i_rwsem encoding and the data-version history that judges
//! staleness. Models keep their states small, flat and `Copy` with these.

pub mod bounded;
pub mod encode;
pub mod history;
pub mod page;
pub mod rwsem;

/// "no value" in u8 slots (no owner, no reply, no version).
pub const NONE: u8 = 0xFF;
