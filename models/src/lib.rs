//! wbspec models: Stateright specifications of Linux writeback, direct-I/O
//! and truncate races. One module per kernel subsystem; kernel versions and
//! review proposals are configuration data of that module's model.

pub mod bounded;
pub mod fuse;
