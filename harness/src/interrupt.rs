//! SIGINT and SIGTERM during a run (`conform`, `run`): what the run made
//! is taken down before the process ends. Each scenario's directory and
//! mount are registered while they exist ([`register`]); on a signal a
//! watcher thread aborts the FUSE connection, unmounts lazily, kills the
//! server child (by its PID: only a process this run started), removes
//! the directory and exits 128 + the signal number. The handler itself
//! only records the signal (an atomic store).
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

/// The signal received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static INSTALL: Once = Once::new();

/// What one running scenario made.
#[derive(Clone, Debug, Default)]
struct Made {
    dir: PathBuf,
    mnt: PathBuf,
    minor: Option<u32>,
    child: Option<u32>,
}

static MADE: Mutex<Vec<(usize, Made)>> = Mutex::new(Vec::new());
static NEXT: Mutex<usize> = Mutex::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
}

/// Install the handlers and the watcher thread (once per process).
pub fn install() {
    INSTALL.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM] {
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as *const () as usize;
                sa.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
        let _ = std::thread::Builder::new()
            .name("wbspec-signal".into())
            .spawn(|| loop {
                std::thread::sleep(Duration::from_millis(20));
                let sig = SIGNAL.load(Ordering::SeqCst);
                if sig != 0 {
                    take_down();
                    eprintln!("wbspec: interrupted (signal {sig}); removed the run's mounts and directories");
                    std::process::exit(128 + sig);
                }
            });
    });
}

fn with<R>(f: impl FnOnce(&mut Vec<(usize, Made)>) -> R) -> R {
    let mut g = MADE.lock().unwrap_or_else(|e| e.into_inner());
    f(&mut g)
}

/// Register a scenario's directory and mount point; returns its id.
pub fn register(dir: PathBuf, mnt: PathBuf) -> usize {
    let id = {
        let mut n = NEXT.lock().unwrap_or_else(|e| e.into_inner());
        *n += 1;
        *n
    };
    with(|v| {
        v.push((
            id,
            Made {
                dir,
                mnt,
                ..Made::default()
            },
        ))
    });
    id
}

/// The server child of `id` (its PID, `None` once reaped) and, once
/// mounted, its connection.
pub fn set(id: usize, child: Option<u32>, minor: Option<u32>) {
    with(|v| {
        if let Some((_, m)) = v.iter_mut().find(|(i, _)| *i == id) {
            m.child = child;
            m.minor = minor;
        }
    })
}

/// `id` was taken down normally.
pub fn unregister(id: usize) {
    with(|v| v.retain(|(i, _)| *i != id))
}

/// Abort, unmount lazily, kill our server child, remove the directory.
fn take_down() {
    for (_, m) in with(std::mem::take) {
        if let Some(minor) = m.minor {
            let _ = crate::mount::fusectl_abort(minor);
        }
        if crate::mount::is_mounted(&m.mnt) {
            if let Ok(c) = std::ffi::CString::new(m.mnt.to_string_lossy().as_bytes()) {
                unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
            }
        }
        if let Some(pid) = m.child {
            // our own child, by PID; reap it so no zombie stays
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            for _ in 0..200 {
                let r = unsafe {
                    libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), libc::WNOHANG)
                };
                if r != 0 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        if !crate::mount::is_mounted(&m.mnt) {
            let _ = std::fs::remove_dir_all(&m.dir);
        }
    }
}
