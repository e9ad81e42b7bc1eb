//! `wbspec explore CHECK [--trace FILE] [--port N]`: Stateright's web
//! Explorer on 127.0.0.1, opened at a counterexample's last step, with
//! wbspec's own page.
//!
//! Stateright's Explorer reads each of its UI files from `./ui/` when the
//! working directory has it ("dev mode"), else serves its built-in copy.
//! The server runs in a private directory (mode 0700, random name, removed
//! when the Explorer ends by SIGINT, SIGTERM or SIGHUP) whose `ui/` holds
//! wbspec's `index.htm` and `app.css` (checks/assets/explorer/): the
//! check's own verdicts from an exhaustive run instead of the model's
//! every property "Searching", the path of actions first, the sequence
//! diagram at its own size on a light background, ASCII text only.
//! Stateright's `app.js` and knockout are served unchanged.
//!
//! Stateright binds the port itself (and panics when it cannot; the panic
//! is caught and becomes a one-line error). The URL and "serving on" are
//! printed only once this process holds a listening socket on the port.

use crate::catalogue::{Entry, Verdict};
use crate::outcome::CheckResult;
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};
use wbspec_models::spec::Spec;

const INDEX: &str = include_str!("../assets/explorer/index.htm");
const CSS: &str = include_str!("../assets/explorer/app.css");

/// Serves the Explorer (`serve`: Stateright's server for a model, given
/// the port, run on its own thread) on 127.0.0.1:`port` from a private
/// directory holding `page`, and once the port is bound prints the URL of
/// `encoded` on `out` (one line). Returns when the server ends; a signal
/// ends the process after removing the directory.
pub fn serve_at(
    port: u16,
    encoded: &str,
    what: &str,
    page: &str,
    serve: impl FnOnce(u16) -> Result<(), String> + Send + 'static,
    out: &mut dyn Write,
) -> Result<u8, String> {
    // If another process takes the port between this probe and
    // Stateright's bind, that bind fails and is reported below, before
    // anything is printed.
    let port = probe_port(port)?;
    let dir = tempfile::Builder::new()
        .prefix("wbspec-explore-")
        .tempdir()
        .map_err(|err| format!("private directory for the Explorer: {err}"))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .map_err(|err| format!("{}: {err}", dir.path().display()))?;
    }
    let ui = dir.path().join("ui");
    std::fs::create_dir(&ui)
        .and_then(|()| std::fs::write(ui.join("index.htm"), page))
        .and_then(|()| std::fs::write(ui.join("app.css"), CSS))
        .map_err(|err| format!("{}: {err}", ui.display()))?;
    std::env::set_current_dir(dir.path())
        .map_err(|err| format!("{}: {err}", dir.path().display()))?;
    remove_on_signal(dir.path());
    let server = std::thread::spawn(move || serve(port));
    let bound = wait_bound(port, &server, Duration::from_secs(30));
    if let Err(e) = bound {
        // the server thread has ended (its error) or never bound
        let r = if server.is_finished() {
            server.join().unwrap_or_else(|_| Err(e.clone()))
        } else {
            Err(e.clone())
        };
        drop(dir);
        return Err(r.err().unwrap_or(e));
    }
    writeln!(out, "http://127.0.0.1:{port}/#/steps/{encoded}")
        .and_then(|()| out.flush())
        .map_err(|e| format!("standard output: {e}"))?;
    eprintln!("explore: {what}; serving on 127.0.0.1:{port} until interrupted");
    let r = server
        .join()
        .unwrap_or_else(|_| Err("the Explorer's server thread panicked".into()));
    drop(dir);
    r.map(|()| 0)
}

/// Binds 127.0.0.1:`port` and lets it go: a busy port is a one-line
/// error; port 0 becomes a free port the kernel picked.
pub fn probe_port(port: u16) -> Result<u16, String> {
    let l =
        TcpListener::bind(("127.0.0.1", port)).map_err(|err| format!("127.0.0.1:{port}: {err}"))?;
    Ok(l.local_addr().map_err(|err| err.to_string())?.port())
}

/// Waits until this process holds a socket listening on 127.0.0.1:`port`
/// (not merely: some process accepts connections there), or `server` has
/// ended, or `limit` has passed.
fn wait_bound(
    port: u16,
    server: &std::thread::JoinHandle<Result<(), String>>,
    limit: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    loop {
        if listening_here(port)? {
            return Ok(());
        }
        if server.is_finished() {
            return Err(format!(
                "127.0.0.1:{port}: the Explorer ended before it listened"
            ));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "127.0.0.1:{port}: the Explorer did not listen within {}s",
                limit.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Does this process hold a TCP socket listening on 127.0.0.1:`port`?
/// (/proc/net/tcp: the socket's inode, then /proc/self/fd.)
pub fn listening_here(port: u16) -> Result<bool, String> {
    let tcp =
        std::fs::read_to_string("/proc/net/tcp").map_err(|e| format!("/proc/net/tcp: {e}"))?;
    let local = format!("0100007F:{port:04X}");
    let inodes: Vec<String> = tcp
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
            (f.len() > 9 && f[1] == local && f[3] == "0A").then(|| f[9].to_string())
        })
        .collect();
    if inodes.is_empty() {
        return Ok(false);
    }
    let fds = std::fs::read_dir("/proc/self/fd").map_err(|e| format!("/proc/self/fd: {e}"))?;
    for fd in fds.flatten() {
        if let Ok(target) = std::fs::read_link(fd.path()) {
            let t = target.to_string_lossy();
            if inodes.iter().any(|i| t == format!("socket:[{i}]")) {
                return Ok(true);
            }
        }
    }
    Ok(false)
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

/// `text` for HTML, ASCII only: markup characters escaped, anything past
/// ASCII as a numeric reference (the installed fonts decide its glyph;
/// the catalogue's text is ASCII but for a few symbols).
fn html(text: &str) -> String {
    let mut o = String::new();
    for c in text.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c if c.is_ascii() => o.push(c),
            c => o.push_str(&format!("&#{};", c as u32)),
        }
    }
    o
}

fn plural(n: u64, one: &str) -> String {
    format!("{n} {one}{}", if n == 1 { "" } else { "s" })
}

/// The verdicts of `r` (an exhaustive run of `e`) as HTML: one row per
/// always-property violated or not as expected, with its counterexample;
/// the properties that hold as expected on one line; the witnesses
/// reached; the run.
pub fn verdicts_html(e: &Entry, r: &CheckResult) -> String {
    let mut o = String::from("<table class=\"verdicts\">\n");
    let states = r.unique_states;
    for p in &r.props {
        let holds_ok = p.observed == Verdict::Holds && p.expected == Verdict::Holds;
        if holds_ok {
            continue;
        }
        let mism = p.expected != p.observed;
        let observed = match p.observed {
            Verdict::Violated => format!("violated in {} of {states}", plural(p.count, "state")),
            Verdict::Holds if !r.complete => "not violated before the run stopped".into(),
            Verdict::Holds => format!("holds in all {states} states"),
            Verdict::Unknown => "unknown: the run stopped at a bound, not a proof".into(),
        };
        let judged = if p.observed == Verdict::Unknown {
            "unproven".into()
        } else if mism {
            format!(
                "NOT as expected: the catalogue expects {}",
                p.expected.as_str()
            )
        } else if p.intended {
            format!(
                "as expected: intended, stricter than the kernel's contract ({})",
                p.stricter_than.unwrap_or("?")
            )
        } else {
            "as expected".into()
        };
        let cx = match &p.trace {
            Some(cx) => format!(
                "; <a href=\"#/steps/{}\">shortest counterexample</a> ({})",
                html(&cx.encoded),
                plural(cx.len() as u64, "step")
            ),
            None => String::new(),
        };
        o.push_str(&format!(
            "<tr{}><td class=\"violated\">{}</td><td>{observed}, {judged}{cx}<br>{}</td></tr>\n",
            if mism { " class=\"mismatch\"" } else { "" },
            html(p.name),
            html(p.description)
        ));
    }
    o.push_str("</table>\n");
    let holds: Vec<&str> = r
        .props
        .iter()
        .filter(|p| p.observed == Verdict::Holds && p.expected == Verdict::Holds)
        .map(|p| p.name)
        .collect();
    if !holds.is_empty() {
        let how = if r.complete {
            format!("Hold in all {states} states, as expected")
        } else {
            "Not violated before the run stopped (not a proof)".into()
        };
        o.push_str(&format!(
            "<p class=\"holds-list\">{how}: {}.</p>\n",
            html(&holds.join(", "))
        ));
    }
    let reached: Vec<String> = r
        .witnesses
        .iter()
        .filter(|w| w.count > 0)
        .map(|w| format!("{} ({})", w.name, plural(w.count, "state")))
        .collect();
    let missing: Vec<&str> = r
        .witnesses
        .iter()
        .filter(|w| w.listed && w.count == 0)
        .map(|w| w.name)
        .collect();
    o.push_str(&format!(
        "<p class=\"holds-list\">Racy windows reached (witnesses): {}.</p>\n",
        if reached.is_empty() {
            "none".to_string()
        } else {
            html(&reached.join(", "))
        }
    ));
    if !missing.is_empty() {
        o.push_str(&format!(
            "<p class=\"holds-list mismatch\">Witnesses the catalogue requires, NOT reached: {}.</p>\n",
            html(&missing.join(", "))
        ));
    }
    let run = match (r.complete, r.stopped) {
        (true, _) => format!(
            "Exhaustive run of {}: {states} unique states, depth {}, complete{}.",
            html(&e.name),
            r.max_depth,
            if r.ok() {
                "; every verdict, pin and witness as the catalogue expects"
            } else {
                "; NOT everything as the catalogue expects (run wbspec check)"
            }
        ),
        (false, s) => format!(
            "INCOMPLETE run of {} ({}): not a proof.",
            html(&e.name),
            s.map_or("stopped".into(), |s| s.describe())
        ),
    };
    o.push_str(&format!("<p class=\"hint\">{run}</p>\n"));
    o
}

/// The Explorer's page for `e` after the run `r`, opened at `what`.
pub fn page(e: &Entry, r: &CheckResult, what: &str) -> String {
    let mut kernel = e.check.kernel();
    let flags = e.check.switches_changed();
    if !flags.is_empty() {
        kernel = format!("{kernel} + {}", flags.join(" "));
    }
    let tasks = crate::show::tasks(e);
    let meta = format!(
        "kernel state {kernel}; model {} {}{}",
        e.model,
        e.check.model_version(),
        if tasks.is_empty() {
            String::new()
        } else {
            format!("; tasks: {}", tasks.join(", "))
        }
    );
    INDEX
        .replace("{{CHECK}}", &html(&e.name))
        .replace("{{QUESTION}}", &html(&e.question))
        .replace("{{META}}", &html(&meta))
        .replace("{{WHAT}}", &html(what))
        .replace("{{VERDICTS}}", &verdicts_html(e, r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_port() -> u16 {
        let l = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        l.local_addr().unwrap().port()
    }

    /// A server that fails to bind (Stateright's unwrap, caught) ends
    /// `wait_bound` with an error: nothing would be printed.
    #[test]
    fn a_server_that_cannot_bind_is_an_error_before_any_output() {
        let port = free_port();
        let server = std::thread::spawn(|| Err::<(), String>("bind: address in use".into()));
        let r = wait_bound(port, &server, Duration::from_secs(5));
        assert!(r.unwrap_err().contains("ended before it listened"));
        assert_eq!(server.join().unwrap().unwrap_err(), "bind: address in use");
    }

    /// Only a listening socket of this process on the port counts.
    #[test]
    fn bound_means_this_process_listens_on_the_port() {
        let l = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = l.local_addr().unwrap().port();
        assert!(listening_here(port).unwrap());
        let other = free_port();
        assert!(!listening_here(other).unwrap());
        // a server thread that binds, then serves a while
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            let _l = TcpListener::bind(("127.0.0.1", other)).map_err(|e| e.to_string())?;
            let _ = rx.recv_timeout(Duration::from_secs(10));
            Ok(())
        });
        assert!(wait_bound(other, &server, Duration::from_secs(5)).is_ok());
        tx.send(()).unwrap();
        server.join().unwrap().unwrap();
        drop(l);
        assert!(!listening_here(port).unwrap());
    }

    #[test]
    fn page_text_is_ascii_and_escaped() {
        assert_eq!(
            html("a<b & \"c\" \u{2264} d"),
            "a&lt;b &amp; &quot;c&quot; &#8804; d"
        );
        for k in [
            "{{CHECK}}",
            "{{QUESTION}}",
            "{{META}}",
            "{{WHAT}}",
            "{{VERDICTS}}",
        ] {
            assert!(INDEX.contains(k), "{k}");
        }
        assert!(INDEX.is_ascii() && CSS.is_ascii());
    }
}
