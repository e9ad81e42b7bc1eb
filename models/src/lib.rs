//! wbspec models: Stateright specifications of Linux writeback, direct-I/O
//! and truncate races. One module per kernel subsystem; kernel versions and
//! review proposals are configuration data of that module's model. Every
//! model implements `spec::Spec`; `registry` is the one place that lists
//! them.

pub mod common;
pub mod fuse;
pub mod fuse_gup;
pub mod nowait;
pub mod registry;
pub mod spec;
