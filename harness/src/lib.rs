//! wbspec-harness: a real-kernel FUSE conformance harness.
//!
//! - [`server`]: a recording, reply-holding fuser server (binary `fuse-recorder`).
//! - [`control`]: the line protocol of its control socket.
//! - [`trace`]: the JSON-lines trace format (public, versioned).
//! - [`runner`]: runs scenarios one at a time against a fresh mount.
//! - [`conform`]: trace conformance of recorded traces to the wbspec FUSE model.
//! - [`scenarios`]: the scenario catalogue with kernel-keyed expectations.
//! - [`mount`]: mount lookup and the bounded unmount / fusectl-abort escape hatches.
//! - [`sys`]: raw libc syscall wrappers used by the workloads.
//! - [`require`]: whether a test that needs the kernel or a browser skips or
//!   fails where they are missing.
pub mod conform;
pub mod control;
pub mod mount;
pub mod require;
pub mod runner;
pub mod scenarios;
pub mod server;
pub mod sys;
pub mod trace;
