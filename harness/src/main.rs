//! `wbspec-harness run [SCENARIO...] [--keep-traces DIR] [--json FILE] [--hold-timeout-ms MS]`
//! `wbspec-harness list`
//! `wbspec-harness conform ...` (`conform --help` lists its options)
//! `wbspec-harness record --trace OUT [SERVER OPTIONS] -- CMD [ARGS...]` (docs/record.md)
//!
//! Exit status of `run`: 0 all passed, 1 a scenario failed, 2 usage error,
//! 77 nothing failed but scenarios were skipped (no root or /dev/fuse).
//! `conform` has its own codes (docs/conformance.md §4,
//! [`wbspec_harness::conform::exit`]).
//!
//! A closed standard output (`wbspec-harness list | head -1`) ends the
//! process quietly by SIGPIPE, as coreutils do.
use std::path::PathBuf;
use std::process::exit;

use wbspec_harness::runner::{run_suite, summary, RunOptions};
use wbspec_harness::scenarios;

/// Longest hold timeout or scenario deadline (`run`): one hour.
const MAX_MS: u64 = 3_600_000;

fn usage(msg: &str) -> ! {
    eprintln!("wbspec-harness: {msg}");
    eprintln!("usage: wbspec-harness run [SCENARIO...] [--keep-traces DIR] [--json FILE] [--hold-timeout-ms MS] [--deadline-ms MS]");
    eprintln!("       wbspec-harness list");
    eprintln!("       wbspec-harness vm ... (docs/vm.md)");
    eprintln!("       wbspec-harness record --trace OUT [SERVER OPTIONS] -- CMD [ARGS...] (docs/record.md)");
    eprintln!("       wbspec-harness conform ... (`wbspec-harness conform --help` lists its options and scenarios)");
    exit(2)
}

fn main() {
    // Rust ignores SIGPIPE, so println! on a closed pipe would panic:
    // restore the default action (end quietly).
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("conform") => {
            let rest: Vec<String> = args.collect();
            exit(wbspec_harness::conform::conform_main(&rest))
        }
        Some("record") => {
            let rest: Vec<String> = args.collect();
            exit(wbspec_harness::record::record_main(&rest))
        }
        Some("vm") => {
            let rest: Vec<String> = args.collect();
            exit(wbspec_harness::vm::vm_main(&rest))
        }
        Some("list") => {
            for s in scenarios::all() {
                println!("{:<18} {}", s.name, s.about);
            }
            for s in scenarios::selftests() {
                println!("{:<18} {} (run only by name)", s.name, s.about);
            }
        }
        Some("run") => {
            let exe =
                std::env::current_exe().unwrap_or_else(|e| usage(&format!("current_exe: {e}")));
            let recorder = exe.with_file_name("fuse-recorder");
            let mut opts = RunOptions::new(recorder);
            let mut names = vec![];
            let mut json: Option<PathBuf> = None;
            while let Some(a) = args.next() {
                match a.as_str() {
                    "--keep-traces" => {
                        opts.keep_traces = Some(
                            args.next()
                                .unwrap_or_else(|| usage("--keep-traces needs DIR"))
                                .into(),
                        )
                    }
                    "--json" => {
                        json = Some(
                            args.next()
                                .unwrap_or_else(|| usage("--json needs FILE"))
                                .into(),
                        )
                    }
                    "--hold-timeout-ms" => {
                        opts.hold_timeout_ms = args
                            .next()
                            .and_then(|v| v.parse().ok())
                            .filter(|v| (1..=MAX_MS).contains(v))
                            .unwrap_or_else(|| {
                                usage("--hold-timeout-ms needs a number 1..=3600000")
                            })
                    }
                    "--deadline-ms" => {
                        opts.scenario_deadline = std::time::Duration::from_millis(
                            args.next()
                                .and_then(|v| v.parse().ok())
                                .filter(|v| (1..=MAX_MS).contains(v))
                                .unwrap_or_else(|| {
                                    usage("--deadline-ms needs a number 1..=3600000")
                                }),
                        )
                    }
                    s if s.starts_with('-') => usage(&format!("unknown option {s}")),
                    s => {
                        let known = scenarios::all()
                            .iter()
                            .chain(scenarios::selftests().iter())
                            .any(|x| x.name == s);
                        if !known {
                            usage(&format!("unknown scenario {s} (see `wbspec-harness list`)"));
                        }
                        names.push(s.to_string());
                    }
                }
            }
            if wbspec_harness::runner::cannot_run().is_none() && !opts.recorder.exists() {
                usage(&format!(
                    "{} not found (build both binaries: cargo build --release)",
                    opts.recorder.display()
                ));
            }
            wbspec_harness::interrupt::install();
            let t0 = std::time::Instant::now();
            let outcomes = run_suite(&names, &opts, |o| println!("{}", o.line()));
            if let Some(j) = json {
                let text = serde_json::to_string_pretty(&outcomes).expect("serialize outcomes");
                if let Err(e) = std::fs::write(&j, text) {
                    eprintln!("wbspec-harness: write {}: {e}", j.display());
                }
            }
            eprintln!("suite wall time {} ms", t0.elapsed().as_millis());
            println!("{}", summary(&outcomes));
            exit(wbspec_harness::interrupt::finish(
                if outcomes.iter().any(|o| o.outcome == "fail") {
                    1
                } else if outcomes.iter().any(|o| o.outcome == "skipped") {
                    wbspec_harness::conform::exit::SKIPPED
                } else {
                    0
                },
            ))
        }
        Some("-h") | Some("--help") => usage("help"),
        Some(x) => usage(&format!("unknown command {x}")),
        None => usage("missing command"),
    }
}
