//! SIGINT and SIGTERM during a run (`conform`, `run`): what the run made
//! is taken down before the process ends. The handler itself only
//! records the signal (an atomic store); a watcher thread does the rest.
//!
//! One lock guards the registry of what each scenario made and a
//! `stopping` flag. A scenario's directory is created, and its server
//! child spawned, while that lock is held ([`make_dir`], [`spawn`]), and
//! only if no signal has been acted on: so everything that exists is
//! registered, and after a signal nothing new starts. On a signal the
//! watcher takes the lock, sets `stopping`, aborts each FUSE connection,
//! kills and reaps each server child (by its PID: only a process this
//! run started; once it is reaped no new mount can appear), unmounts
//! lazily, removes the directories and exits 128 + the signal number,
//! still holding the lock. The main thread ends a run through
//! [`finish`], which takes the same lock: if a signal arrived, the exit
//! code is 128 + the signal whichever thread gets there first; a signal
//! that arrives after [`finish`] has the run's own code.
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard, Once};
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

struct State {
    /// A signal was acted on: nothing new may be created.
    stopping: bool,
    /// The run ended ([`finish`]): its code stands.
    done: bool,
    made: Vec<(usize, Made)>,
    next: usize,
}

static STATE: Mutex<State> = Mutex::new(State {
    stopping: false,
    done: false,
    made: Vec::new(),
    next: 0,
});

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
}

fn lock() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
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
                    let mut st = lock();
                    if st.done {
                        // the main thread ended the run first (finish)
                        return;
                    }
                    let code = stop(&mut st, sig);
                    // exits holding the lock: nothing else starts
                    std::process::exit(code);
                }
            });
    });
}

/// Take down everything registered; returns 128 + `sig`.
fn stop(st: &mut State, sig: i32) -> i32 {
    st.stopping = true;
    for (_, m) in std::mem::take(&mut st.made) {
        take_down(&m);
    }
    eprintln!("wbspec: interrupted (signal {sig}); removed the run's mounts and directories");
    128 + sig
}

/// Why nothing new may start: a signal arrived.
pub const INTERRUPTED: &str = "interrupted by a signal";

/// Create the scenario directory `dir` (which must not exist) and
/// register it with its mount point `mnt`; returns its id. Refused once
/// a signal was acted on.
pub fn make_dir(dir: &Path, mnt: PathBuf) -> std::io::Result<usize> {
    let mut st = lock();
    if st.stopping || st.done || SIGNAL.load(Ordering::SeqCst) != 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            INTERRUPTED,
        ));
    }
    std::fs::create_dir(dir)?;
    st.next += 1;
    let id = st.next;
    st.made.push((
        id,
        Made {
            dir: dir.to_path_buf(),
            mnt,
            ..Made::default()
        },
    ));
    Ok(id)
}

/// Spawn the server child of `id` and register its PID, under the lock;
/// refused once a signal was acted on.
pub fn spawn(id: usize, cmd: &mut Command) -> Result<Child, String> {
    let mut st = lock();
    if st.stopping || st.done || SIGNAL.load(Ordering::SeqCst) != 0 {
        return Err(INTERRUPTED.into());
    }
    let c = cmd.spawn().map_err(|e| e.to_string())?;
    if let Some((_, m)) = st.made.iter_mut().find(|(i, _)| *i == id) {
        m.child = Some(c.id());
    }
    Ok(c)
}

/// The server child of `id` (its PID, `None` once reaped) and, once
/// mounted, its connection.
pub fn set(id: usize, child: Option<u32>, minor: Option<u32>) {
    let mut st = lock();
    if let Some((_, m)) = st.made.iter_mut().find(|(i, _)| *i == id) {
        m.child = child;
        m.minor = minor;
    }
}

/// `id` was taken down normally.
pub fn unregister(id: usize) {
    lock().made.retain(|(i, _)| *i != id)
}

/// The run is over and `code` is its exit code, unless a signal arrived:
/// then what is still registered is taken down and the code is 128 +
/// the signal. Call it last, with nothing of the run still live.
pub fn finish(code: i32) -> i32 {
    let mut st = lock();
    st.done = true;
    match SIGNAL.load(Ordering::SeqCst) {
        0 => code,
        sig => stop(&mut st, sig),
    }
}

/// Abort, kill and reap our server child, unmount lazily, remove the
/// directory.
fn take_down(m: &Made) {
    if let Some(minor) = m.minor {
        let _ = crate::mount::fusectl_abort(minor);
    }
    if let Some(pid) = m.child {
        // our own child, by PID; reap it so no zombie stays and no mount
        // can appear after the check below
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        for _ in 0..200 {
            let r =
                unsafe { libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), libc::WNOHANG) };
            if r != 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    if crate::mount::is_mounted(&m.mnt) {
        if let Ok(c) = std::ffi::CString::new(m.mnt.to_string_lossy().as_bytes()) {
            unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
        }
    }
    if !crate::mount::is_mounted(&m.mnt) {
        // the main thread may still be writing into it: retry a little
        for _ in 0..5 {
            match std::fs::remove_dir_all(&m.dir) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => break,
            }
        }
    }
}
