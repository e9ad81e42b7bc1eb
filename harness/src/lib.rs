//! wbspec-harness: a real-kernel FUSE conformance harness.
//!
//! - [`server`]: a recording, reply-holding fuser server (binary `fuse-recorder`).
//! - [`control`]: the line protocol of its control socket.
//! - [`trace`]: the JSON-lines trace format (public, versioned).
//! - [`runner`]: runs scenarios one at a time against a fresh mount.
//! - [`ctx`]: what a scenario body gets (mount, control socket, syscalls
//!   with marks); [`fail`]: how a scenario check fails or skips.
//! - [`trace_query`]: queries over a recorded trace.
//! - [`random`]: seeded random workloads (`conform --random N --seed S`).
//! - [`record`]: `record -- CMD`: any program's file I/O on the recording
//!   server, traced with ptrace into a trace `conform --trace` checks.
//! - [`conform`]: trace conformance of recorded traces to the wbspec FUSE model.
//! - [`scenarios`]: the scenario table with kernel-keyed expectations;
//!   [`scenario_kit`]: the scenario type, `sc!`, `wrap` and the helpers the
//!   bodies share. Bodies by kernel area: [`scenarios_writeback`],
//!   [`scenarios_truncate`], [`scenarios_mmap`], [`scenarios_dio`],
//!   [`scenarios_fidelity`] (held-reply races), [`scenarios_cache`] (buffered
//!   reads, munmap/msync, the background queue), [`scenarios_split`]
//!   (write-through writes split into max_write chunks), [`scenarios_release`]
//!   (the fh of writeback WRITEs and RELEASE), [`scenarios_files`] (two
//!   files on one connection), [`scenarios_transport`] (the connection
//!   aborted through fusectl, a signal to a task in a held request).
//! - [`mount`]: mount lookup and the bounded unmount / fusectl-abort escape hatches.
//! - [`sys`]: raw libc syscall wrappers used by the workloads.
//! - [`memcg`]: the cgroup-v1 reclaim scenarios (a child in its own memory cgroup).
//! - [`dio_folios`], [`largefolio`]: direct writes from user buffers backed by large folios.
//! - [`nowait_rk`]: the nowait model's real-kernel scenario (io_uring O_APPEND
//!   on xfs over a loop device; binary `nowait-append`).
//! - [`require`]: whether a test that needs the kernel or a browser skips or
//!   fails where they are missing.
pub mod aio;
pub mod conform;
pub mod control;
pub mod ctx;
pub mod dio_folios;
pub mod fail;
pub mod interrupt;
pub mod kernels;
pub mod largefolio;
pub mod memcg;
pub mod mount;
pub mod nowait_rk;
pub mod random;
pub mod record;
pub mod require;
pub mod runner;
pub mod scenario_kit;
pub mod scenarios;
pub mod scenarios_aio;
pub mod scenarios_cache;
pub mod scenarios_dio;
pub mod scenarios_eof;
pub mod scenarios_fidelity;
pub mod scenarios_files;
pub mod scenarios_mmap;
pub mod scenarios_notify;
pub mod scenarios_release;
pub mod scenarios_split;
pub mod scenarios_transport;
pub mod scenarios_truncate;
pub mod scenarios_writeback;
pub mod server;
pub mod sys;
pub mod trace;
pub mod trace_query;
mod unimpl;
pub mod vm;
