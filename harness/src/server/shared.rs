//! The server's shared state, behind one lock each: the trace writer and
//! the requests in flight (`LogState`, record.rs writes it), the in-memory
//! files (`FsState`, memfs.rs), and the hold rules, parked replies, counts,
//! stalls and armed failures (`CtlState`, hold.rs acts on it). The
//! dispatch thread, the control threads and the watchdog share one
//! [`Core`]; each side's methods are in its own file.
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufWriter;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::config::ServerConfig;
use super::memfs::FsState;

/// Shared between the dispatch thread, the control threads and the watchdog.
pub struct Core {
    pub(super) cfg: ServerConfig,
    pub(super) start: Instant,
    pub(super) log: Mutex<LogState>,
    pub(super) fs: Mutex<FsState>,
    pub(super) ctl: Mutex<CtlState>,
    pub(super) cv: Condvar,
    /// The session's notification channel (/dev/fuse), set once the
    /// session exists (notify.rs).
    pub(super) notifier: OnceLock<fuser::Notifier>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere must not wedge the server: keep going with the data.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Core {
    pub(super) fn new(cfg: ServerConfig, trace: File) -> Core {
        // ino 1 is the root directory; it is not in `files`.
        let files = BTreeMap::new();
        Core {
            cfg,
            start: Instant::now(),
            log: Mutex::new(LogState {
                out: BufWriter::new(trace),
                seq: 0,
                inflight: BTreeMap::new(),
            }),
            fs: Mutex::new(FsState {
                files,
                next_ino: 2,
                next_fh: 1,
            }),
            ctl: Mutex::new(CtlState::default()),
            cv: Condvar::new(),
            notifier: OnceLock::new(),
        }
    }

    pub(super) fn ttl(&self) -> Duration {
        Duration::from_millis(self.cfg.ttl_ms)
    }
}

pub(super) struct LogState {
    pub(super) out: BufWriter<File>,
    pub(super) seq: u64,
    /// unique -> op of requests read but not yet replied.
    pub(super) inflight: BTreeMap<u64, String>,
}

pub(super) type Done = Box<dyn FnOnce() + Send>;

pub(super) struct Rule {
    pub(super) op: String,
    pub(super) remaining: Option<u64>,
    pub(super) cache: Option<bool>,
}

pub(super) struct Parked {
    pub(super) unique: u64,
    pub(super) op: String,
    pub(super) since: Instant,
    pub(super) done: Done,
}

#[derive(Default)]
pub(super) struct CtlState {
    pub(super) rules: Vec<Rule>,
    pub(super) parked: Vec<Parked>,
    pub(super) counts: HashMap<String, u64>,
    pub(super) stall: Option<(String, u64)>,
    pub(super) exiting: bool,
    /// op -> (replies still to fail, their errno) (`fail OP n=N errno=E`).
    pub(super) fails: HashMap<String, (u64, i32)>,
    /// `quit` arrived: a server lingering after its session ended exits.
    pub(super) quit: bool,
    /// Notifications that returned (`wait_notified`, notify.rs).
    pub(super) notified: u64,
}
