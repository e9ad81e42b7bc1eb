//! The recording, reply-holding FUSE server (fuser 0.18, single dispatch thread).
//!
//! Every handler first records a `req` event, then builds a closure that
//! applies the effect to the in-memory FS, logs the `reply` event and sends
//! the reply. The closure is either run at once or, if a hold rule matches,
//! parked; a parked closure is run later by `release` (control socket), by the
//! watchdog (after `hold_timeout_ms`) or at server exit. A parked reply is
//! never dropped: fuser answers EIO for a dropped `Reply*`.
//!
//! What stock fuser 0.18 cannot show (documented limits of this trace):
//! - The raw SETATTR `valid` mask is not exposed. We RECONSTRUCT it from the
//!   decoded Options (MODE, UID, GID, SIZE, ATIME(_NOW), MTIME(_NOW), FH,
//!   CTIME). FATTR_LOCKOWNER (1<<9) and FATTR_KILL_SUIDGID (1<<11) are
//!   invisible, so they never appear in `valid` here.
//! - FUSE_INTERRUPT is answered ENOSYS inside fuser and never reaches us
//!   (after which the kernel sets fc->no_interrupt); it is recorded from
//!   fuser's dispatch log (intr.rs). Opcodes fuser does not know
//!   (COPY_FILE_RANGE_64) are answered ENOSYS inside fuser too. Operations
//!   fuser knows but we do not implement are recorded and answered ENOSYS
//!   (unimpl.rs), so only the former leave a gap in the `unique`s.
//! - Requests queued in the kernel but not yet read are invisible (only
//!   /sys/fs/fuse/connections/N/waiting counts them).
//!
//! Files: `config.rs` the server's configuration; `shared.rs` the state
//! the threads share (`Core`); `record.rs` the trace lines (requests,
//! replies, flag names); `hold.rs` held replies, the watchdog and the
//! control socket; `notify.rs` server notifications; `memfs.rs` the in-memory files; `ops.rs` the opcode
//! handlers. This file holds the request pipeline every handler goes
//! through (`RecFs::go`) and `run_server`.
use std::fs::File;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use fuser::{Config, Errno, FopenFlags, INodeNo, MountOption, Request, Session, SessionACL};
use serde_json::Value;

use record::errno_result;
use shared::{lock, Core};

use crate::control::ReleaseWhich;
use crate::trace::Event;

mod config;
mod hold;
mod intr;
mod memfs;
mod notify;
mod ops;
mod record;
mod shared;

pub use config::ServerConfig;

// ---------------------------------------------------------------- the request pipeline (handlers: ops.rs)

/// The fuser filesystem: a flat in-memory directory.
pub struct RecFs {
    core: Arc<Core>,
}

impl RecFs {
    fn ev(&self, req: &Request, op: &str, ino: INodeNo) -> Event {
        let mut e = Event::new("req");
        e.unique = Some(req.unique().0);
        e.op = Some(op.into());
        e.nodeid = Some(ino.0);
        e.pid = Some(req.pid());
        e.uid = Some(req.uid());
        e
    }

    /// Record, maybe stall, then dispatch the completion.
    fn go(
        &self,
        e: Event,
        cache: Option<bool>,
        done: impl FnOnce(&Core, u64, Instant) + Send + 'static,
    ) {
        let op = e.op.clone().unwrap_or_default();
        let unique = self.core.recv(e, true);
        self.core.maybe_stall(&op);
        let core = self.core.clone();
        let t0 = Instant::now();
        self.core.dispatch(
            unique,
            &op,
            cache,
            Box::new(move || done(&core, unique, t0)),
        );
    }

    /// Record an operation the server does not implement and answer it
    /// ENOSYS (unimpl.rs), through the same hold/release path as the rest.
    fn enosys(
        &self,
        req: &Request,
        op: &'static str,
        ino: INodeNo,
        reply: impl FnOnce(Errno) + Send + 'static,
    ) {
        let e = self.ev(req, op, ino);
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(unique, op, errno_result(libc::ENOSYS, "ENOSYS"), t0);
            reply(Errno::ENOSYS);
        });
    }

    fn open_flags_reply(&self, flags: i32) -> FopenFlags {
        let mut f = FopenFlags::empty();
        if self.core.cfg.dio_on_odirect && flags & libc::O_DIRECT != 0 {
            f |= FopenFlags::FOPEN_DIRECT_IO;
            if self.core.cfg.parallel_dio {
                f |= FopenFlags::FOPEN_PARALLEL_DIRECT_WRITES;
            }
        }
        if self.core.cfg.keep_cache {
            f |= FopenFlags::FOPEN_KEEP_CACHE;
        }
        f
    }
}

/// Release the uname.
pub fn kernel_release() -> String {
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".into();
    }
    let c = unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) };
    c.to_string_lossy().into_owned()
}

/// Mount at `mountpoint`, serve until unmounted, then release everything still held.
/// The control socket is created only after mount + INIT, so a successful
/// `ping` means the file system is ready.
pub fn run_server(
    mountpoint: &Path,
    ctl_path: &Path,
    trace_path: &Path,
    scenario: &str,
    cfg: ServerConfig,
) -> std::io::Result<()> {
    let trace = File::create(trace_path)?;
    let core = Arc::new(Core::new(cfg.clone(), trace));
    let mut cfg_json = serde_json::to_value(&cfg).unwrap_or(Value::Null);
    // data events carry 1 KiB unit tags where the page tags do not give
    // them (trace::unit_tags): unaligned traces can be checked per unit
    if let Some(m) = cfg_json.as_object_mut() {
        m.insert("unit_tags".into(), Value::Bool(true));
    }
    core.log(Event::header(&kernel_release(), cfg_json, scenario));

    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("wbspec".into()),
        MountOption::Subtype("wbspec".into()),
    ];
    if cfg.max_read != 0 {
        // fuse_fill_super's max_read (fc->max_read)
        config
            .mount_options
            .push(MountOption::CUSTOM(format!("max_read={}", cfg.max_read)));
    }
    config.acl = SessionACL::All;
    config.n_threads = Some(1);
    let session = Session::new(RecFs { core: core.clone() }, mountpoint, &config)?;
    let _ = core.notifier.set(session.notifier());
    intr::install(core.clone());

    {
        let c = core.clone();
        thread::Builder::new()
            .name("watchdog".into())
            .spawn(move || c.watchdog())?;
    }
    let _ = std::fs::remove_file(ctl_path);
    let listener = UnixListener::bind(ctl_path)?;
    {
        let c = core.clone();
        thread::Builder::new()
            .name("ctl-accept".into())
            .spawn(move || {
                for s in listener.incoming() {
                    let Ok(s) = s else { continue };
                    let c2 = c.clone();
                    let _ = thread::Builder::new()
                        .name("ctl-conn".into())
                        .spawn(move || c2.serve_conn(s));
                }
            })?;
    }
    let mut ready = Event::new("mark");
    ready.text = Some("server ready".into());
    ready.kind = Some("note".into());
    core.log(ready);

    let res = session.run();

    if core.cfg.linger {
        // the connection is gone (aborted, or unmounted); the scenario may
        // still log marks until it says `quit`
        let mut e = Event::new("mark");
        e.text = Some(format!("session ended: {res:?}"));
        e.kind = Some("note".into());
        core.log(e);
        core.linger(config::LINGER_MAX_MS);
    }
    // Never leave a reply parked: release everything (replies to a dead
    // connection are harmless).
    lock(&core.ctl).exiting = true;
    core.release(ReleaseWhich::All, "exit");
    let mut e = Event::new("exit");
    e.text = Some(format!("{res:?}"));
    core.log(e);
    let _ = std::fs::remove_file(ctl_path);
    res
}
