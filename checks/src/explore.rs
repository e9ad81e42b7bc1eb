//! `wbspec explore CHECK [--trace FILE] [--port N]`: Stateright's web
//! Explorer on 127.0.0.1, opened at a counterexample's last step.
//!
//! Stateright's Explorer loads its pages from `./ui/` when the working
//! directory has one ("dev mode"), so the server runs in a private empty
//! directory (mode 0700, random name) that is removed when the Explorer
//! ends (SIGINT, SIGTERM or SIGHUP). Stateright binds the port itself and
//! panics when it cannot; that panic is caught and becomes a one-line
//! error.

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use wbspec_models::spec::Spec;

/// Serves the Explorer (`serve`: Stateright's server for a model, given
/// the port) on 127.0.0.1:`port` from a private directory, after printing
/// the URL of `encoded` on stdout (one line). Returns when the server
/// ends; a signal ends the process after removing the directory.
pub fn serve_at(
    port: u16,
    encoded: &str,
    what: &str,
    serve: impl FnOnce(u16) -> Result<(), String>,
) -> Result<u8, String> {
    // Port 0: ask the kernel for a free port. A busy port is refused here
    // with a clear error; if another process takes the port between this
    // probe and Stateright's bind, the caught panic in `serve_model` says
    // so.
    let port = {
        let l = TcpListener::bind(("127.0.0.1", port))
            .map_err(|err| format!("127.0.0.1:{port}: {err}"))?;
        l.local_addr().map_err(|err| err.to_string())?.port()
    };
    let dir = tempfile::Builder::new()
        .prefix("wbspec-explore-")
        .tempdir()
        .map_err(|err| format!("private directory for the Explorer: {err}"))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .map_err(|err| format!("{}: {err}", dir.path().display()))?;
    }
    std::env::set_current_dir(dir.path())
        .map_err(|err| format!("{}: {err}", dir.path().display()))?;
    remove_on_signal(dir.path());
    println!("http://127.0.0.1:{port}/#/steps/{encoded}");
    let _ = std::io::stdout().flush();
    eprintln!("explore: {what}; serving on 127.0.0.1:{port} until interrupted");
    let r = serve(port);
    drop(dir);
    r.map(|()| 0)
}

/// Removes `dir` and ends the process on SIGINT, SIGTERM or SIGHUP.
fn remove_on_signal(dir: &Path) {
    let dir = dir.to_path_buf();
    on_termination(move |_| {
        let _ = std::fs::remove_dir_all(&dir);
        eprintln!("explore: stopped");
        std::process::exit(0);
    });
}

/// Blocks SIGINT, SIGTERM and SIGHUP in this thread and the threads it
/// starts later, and starts a thread that waits for them and calls
/// `cleanup` with the signal (which should end the process). Call it
/// before starting other threads. Children started with
/// `std::process::Command` get an empty signal mask.
pub fn on_termination(cleanup: impl FnOnce(i32) + Send + 'static) {
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        std::thread::spawn(move || {
            let mut sig = 0;
            libc::sigwait(&set, &mut sig);
            cleanup(sig);
        });
    }
}

/// Serves `model` on 127.0.0.1:`port`; returns when the web thread ends.
/// A failed bind (Stateright unwraps it) is an error, not a panic.
pub fn serve_model<M: Spec>(model: M, port: u16) -> Result<(), String> {
    use stateright::Checker;
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let checker = model.checker().serve(("127.0.0.1", port));
        let _ = checker.is_done();
    }));
    std::panic::set_hook(prev);
    r.map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!(
            "127.0.0.1:{port}: the Explorer could not serve ({})",
            msg.split_whitespace().collect::<Vec<_>>().join(" ")
        )
    })
}
