//! The recording side of the server: each request read from /dev/fuse,
//! each reply (logged before it is written back), and each control event
//! becomes one JSON line of the trace (trace.rs), stamped with a sequence
//! number, a time and the thread; the requests still awaiting a reply are
//! tracked so every line can say what was in flight. Also the names the
//! trace gives to flag bits and errors.
use std::io::Write;
use std::thread;
use std::time::Instant;

use fuser::FopenFlags;
use serde_json::{json, Value};

use super::shared::{lock, Core, LogState};
use crate::trace::Event;

pub(super) const FATTR_NAMES: [(u32, &str); 12] = [
    (1 << 0, "MODE"),
    (1 << 1, "UID"),
    (1 << 2, "GID"),
    (1 << 3, "SIZE"),
    (1 << 4, "ATIME"),
    (1 << 5, "MTIME"),
    (1 << 6, "FH"),
    (1 << 7, "ATIME_NOW"),
    (1 << 8, "MTIME_NOW"),
    (1 << 9, "LOCKOWNER"),
    (1 << 10, "CTIME"),
    (1 << 11, "KILL_SUIDGID"),
];

pub(super) fn bit_names(v: u32, table: &[(u32, &str)]) -> Vec<String> {
    table
        .iter()
        .filter(|(b, _)| v & b != 0)
        .map(|(_, n)| n.to_string())
        .collect()
}

pub(super) fn write_flag_names(v: u32) -> Vec<String> {
    bit_names(v, &[(1, "CACHE"), (2, "LOCKOWNER"), (4, "KILL_SUIDGID")])
}

/// Names of open(2) flags (the access mode first).
pub(super) fn open_flag_names(f: i32) -> Vec<String> {
    let mut v = vec![match f & libc::O_ACCMODE {
        libc::O_RDONLY => "O_RDONLY".to_string(),
        libc::O_WRONLY => "O_WRONLY".into(),
        _ => "O_RDWR".into(),
    }];
    for (b, n) in [
        (libc::O_CREAT, "O_CREAT"),
        (libc::O_EXCL, "O_EXCL"),
        (libc::O_TRUNC, "O_TRUNC"),
        (libc::O_APPEND, "O_APPEND"),
        (libc::O_NONBLOCK, "O_NONBLOCK"),
        (libc::O_DIRECT, "O_DIRECT"),
        (libc::O_SYNC, "O_SYNC"),
        (libc::O_NOATIME, "O_NOATIME"),
        (libc::O_CLOEXEC, "O_CLOEXEC"),
        // libc::O_LARGEFILE is 0 on x86-64 userspace; the kernel sets 0o100000.
        (0o100000, "O_LARGEFILE"),
    ] {
        if f & b == b && b != 0 {
            v.push(n.to_string());
        }
    }
    v
}

pub(super) fn fopen_names(f: FopenFlags) -> Vec<String> {
    let mut v = vec![];
    if f.contains(FopenFlags::FOPEN_DIRECT_IO) {
        v.push("FOPEN_DIRECT_IO".to_string());
    }
    if f.contains(FopenFlags::FOPEN_KEEP_CACHE) {
        v.push("FOPEN_KEEP_CACHE".to_string());
    }
    if f.contains(FopenFlags::FOPEN_PARALLEL_DIRECT_WRITES) {
        v.push("FOPEN_PARALLEL_DIRECT_WRITES".to_string());
    }
    v
}

pub(super) fn errno_result(e: i32, name: &str) -> Value {
    json!({"errno": e, "error": name})
}

impl Core {
    fn stamp(&self, st: &mut LogState, e: &mut Event) {
        st.seq += 1;
        e.seq = st.seq;
        e.t_us = self.start.elapsed().as_micros() as u64;
        e.thread = thread::current().name().unwrap_or("?").to_string();
    }

    fn write(st: &mut LogState, e: &Event) {
        let _ = writeln!(st.out, "{}", e.to_line());
        let _ = st.out.flush();
    }

    /// Log any event; returns its seq.
    pub fn log(&self, mut e: Event) -> u64 {
        let mut st = lock(&self.log);
        if e.ev != "header" {
            self.stamp(&mut st, &mut e);
        }
        Self::write(&mut st, &e);
        e.seq
    }

    /// Log a request read from /dev/fuse and count it. `tracked`: a reply will follow.
    pub(super) fn recv(&self, mut e: Event, tracked: bool) -> u64 {
        let unique = e.unique.unwrap_or(0);
        let op = e.op.clone().unwrap_or_default();
        {
            let mut st = lock(&self.log);
            self.stamp(&mut st, &mut e);
            e.inflight_before = Some(st.inflight.keys().copied().collect());
            if tracked {
                st.inflight.insert(unique, op.clone());
            }
            Self::write(&mut st, &e);
        }
        let mut c = lock(&self.ctl);
        *c.counts.entry(op).or_default() += 1;
        self.cv.notify_all();
        unique
    }

    /// Log the reply (BEFORE it is written to /dev/fuse).
    pub(super) fn log_reply(&self, unique: u64, op: &str, result: Value, t0: Instant) {
        let mut st = lock(&self.log);
        let mut e = Event::new("reply");
        self.stamp(&mut st, &mut e);
        st.inflight.remove(&unique);
        e.unique = Some(unique);
        e.op = Some(op.to_string());
        e.result = Some(result);
        e.latency_us = Some(t0.elapsed().as_micros() as u64);
        e.inflight_after = Some(st.inflight.keys().copied().collect());
        Self::write(&mut st, &e);
    }
}
