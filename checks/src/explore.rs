//! `wbspec explore CHECK [--trace FILE] [--port N]`: Stateright's web
//! Explorer on 127.0.0.1, opened at a counterexample's last step.

use crate::catalogue::{Entry, Verdict};
use crate::runner;
use crate::trace;
use stateright::{Checker, Model};
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;

/// Where to open the Explorer: the `Path::encode` string and what it is.
pub fn start_path(e: &Entry, trace_file: Option<&Path>) -> Result<(String, String), String> {
    if let Some(f) = trace_file {
        let r = trace::replay_file(f)?;
        if r.trace.config != e.config {
            return Err(format!(
                "{}: the trace is of check '{}' with another configuration than '{}'",
                f.display(),
                r.trace.check,
                e.name
            ));
        }
        let what = format!(
            "{} counterexample of {} from {}",
            r.trace.property,
            e.name,
            f.display()
        );
        return Ok((r.trace.encoded, what));
    }
    // The first property the catalogue expects to be violated: its
    // shortest counterexample (a BFS; checks that hold need no search).
    let m = runner::build_model(e)?;
    for (prop, v) in &e.expect {
        if *v == Verdict::Violated {
            if let Some(cx) = runner::shortest_counterexample(&m, prop) {
                return Ok((cx.encoded, format!("{prop} counterexample of {}", e.name)));
            }
        }
    }
    Ok(("0".into(), format!("initial state of {}", e.name)))
}

/// Serves the Explorer until the process is interrupted. Prints the URL
/// of the start path on stdout (one line) before serving.
pub fn serve(e: &Entry, trace_file: Option<&Path>, port: u16) -> Result<u8, String> {
    let (encoded, what) = start_path(e, trace_file)?;
    // Bind once to reject a busy port with a clear error (tiny_http would
    // panic) and to resolve port 0 to a free port.
    let port = {
        let l = TcpListener::bind(("127.0.0.1", port))
            .map_err(|err| format!("127.0.0.1:{port}: {err}"))?;
        l.local_addr().map_err(|err| err.to_string())?.port()
    };
    // stateright-notes §4: a ./ui directory in the working directory
    // replaces the Explorer's compiled-in pages ("dev mode").
    if Path::new("ui").exists() {
        let d = std::env::temp_dir().join(format!("wbspec-explore-{}", std::process::id()));
        std::fs::create_dir_all(&d).map_err(|err| format!("{}: {err}", d.display()))?;
        std::env::set_current_dir(&d).map_err(|err| format!("{}: {err}", d.display()))?;
    }
    let model = runner::build_model(e)?; // not in tally mode: one property each
    println!("http://127.0.0.1:{port}/#/steps/{encoded}");
    let _ = std::io::stdout().flush();
    eprintln!("explore: {what}; serving on 127.0.0.1:{port} until interrupted");
    let checker = model.checker().serve(("127.0.0.1", port));
    // serve() returns only if the web thread ends
    let _ = checker.is_done();
    Ok(0)
}
