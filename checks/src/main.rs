//! `wbspec`: run the catalogue of named model checks.

use wbspec::{catalogue, cite, explain, explore, report, results, runner, trace};

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "wbspec",
    version,
    about = "Model-checked Linux writeback, direct-I/O and truncate races"
)]
struct Cli {
    /// Catalogue directory (default: checks/catalogue next to this crate).
    #[arg(long, global = true)]
    catalogue: Option<PathBuf>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the catalogue's checks.
    List,
    /// Run checks and print one verdict line per check and property.
    Check {
        /// Checks to run (names or tags).
        names: Vec<String>,
        /// Run every check.
        #[arg(long)]
        all: bool,
        /// Write a JSON report here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Also print the narrated counterexample of every violation.
        #[arg(long)]
        explain: bool,
        /// Rewrite each check's pinned `states` to the count observed (say
        /// why in the commit message).
        #[arg(long)]
        update_pins: bool,
        /// Write the results table (Markdown) here, e.g. docs/results.md.
        #[arg(long)]
        markdown: Option<PathBuf>,
        /// Write a trace file, <traces-dir>/<check>--<property>.json, for
        /// every violated property. With --all, trace files of violations
        /// that are gone are removed.
        #[arg(long)]
        write_traces: bool,
        /// Directory for --write-traces (default: the repository's traces/).
        #[arg(long, value_name = "DIR")]
        traces_dir: Option<PathBuf>,
    },
    /// Re-execute a trace file and confirm its property fails at its last
    /// step (exit 2 if it does not replay).
    Replay {
        /// A trace file written by `check --write-traces`.
        file: PathBuf,
    },
    /// Narrate a trace file in kernel terms (≤ 72 columns).
    Explain {
        /// A trace file written by `check --write-traces`.
        file: PathBuf,
    },
    /// Serve Stateright's Explorer on 127.0.0.1 at a counterexample.
    Explore {
        /// The check whose model to serve.
        check: String,
        /// Open at this trace's last step (default: the check's first
        /// expected violation, else the initial state).
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Port on 127.0.0.1 (0: any free port).
        #[arg(long, default_value_t = 3000)]
        port: u16,
    },
    /// Print a citation block for a review mail (≤ 72 columns).
    Cite {
        /// The check to cite (its `pair`, if any, is cited with it).
        check: String,
    },
    /// Run the real-kernel scenarios (root, /dev/fuse) and check that each
    /// recorded trace is a behaviour of the model; or check a recorded
    /// trace: `conform --trace FILE [--scenario NAME]`. See
    /// docs/conformance.md; `wbspec conform --help` lists the options.
    Conform {
        /// Scenario names and options, passed to the conformance runner.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn default_traces() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../traces");
    if here.is_dir() {
        here
    } else {
        PathBuf::from("traces")
    }
}

fn find<'a>(entries: &'a [catalogue::Entry], name: &str) -> Result<&'a catalogue::Entry, String> {
    entries
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| format!("unknown check '{name}' (see `wbspec list`)"))
}

fn default_catalogue() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("catalogue");
    if here.is_dir() {
        here
    } else {
        PathBuf::from("checks/catalogue")
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let dir = cli.catalogue.clone().unwrap_or_else(default_catalogue);
    match run(cli, &dir) {
        Ok(code) => ExitCode::from(code),
        Err(msg) => {
            // one line, whatever the parser said
            let one: Vec<&str> = msg.split_whitespace().collect();
            eprintln!("wbspec: {}", one.join(" "));
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli, dir: &std::path::Path) -> Result<u8, String> {
    // replay and explain read only the trace file
    match &cli.cmd {
        Cmd::Conform { args } => {
            let code = wbspec_harness::conform::conform_main(args);
            return Ok(code.clamp(0, 255) as u8);
        }
        Cmd::Replay { file } => {
            let r = trace::replay_file(file)?;
            println!("{}", trace::summary(&r));
            return Ok(0);
        }
        Cmd::Explain { file } => {
            let r = trace::replay_file(file)?;
            let t = &r.trace;
            println!(
                "Trace {} {} ({} steps, model {})",
                t.check,
                t.property,
                t.actions.len(),
                t.model_version
            );
            for l in report::wrap("", &t.question, 72) {
                println!("{l}");
            }
            for l in explain::explain(&r.model, &r.states, &t.actions, &t.property) {
                println!("{l}");
            }
            return Ok(0);
        }
        _ => {}
    }
    let entries = catalogue::load_dir(dir)?;
    match cli.cmd {
        Cmd::Replay { .. } | Cmd::Explain { .. } | Cmd::Conform { .. } => {
            unreachable!("handled above")
        }
        Cmd::Explore { check, trace, port } => {
            let e = find(&entries, &check)?;
            explore::serve(e, trace.as_deref(), port)
        }
        Cmd::Cite { check } => {
            let e = find(&entries, &check)?;
            eprintln!("running {} ...", e.name);
            let r = runner::run(e, true)?;
            let pair = match &e.pair {
                Some(p) => {
                    let pe = find(&entries, p)?;
                    eprintln!("running {} ...", pe.name);
                    Some((pe, runner::run(pe, true)?))
                }
                None => None,
            };
            let ok = r.ok() && pair.as_ref().map_or(true, |(_, pr)| pr.ok());
            let lines = cite::cite(
                e,
                &r,
                pair.as_ref().map(|(pe, pr)| (*pe, pr)),
                &cite::model_commit(),
            )?;
            for l in lines {
                println!("{l}");
            }
            Ok(if ok { 0 } else { 1 })
        }
        Cmd::List => {
            for e in &entries {
                println!(
                    "{:<28} {:<8} {}",
                    e.name,
                    e.config.kernel.label().split(' ').next().unwrap_or(""),
                    e.question
                );
            }
            Ok(0)
        }
        Cmd::Check {
            names,
            all,
            json,
            explain,
            update_pins,
            markdown,
            write_traces,
            traces_dir,
        } => {
            if traces_dir.is_some() && !write_traces {
                return Err("--traces-dir needs --write-traces".into());
            }
            let trace_dir = write_traces.then(|| traces_dir.unwrap_or_else(default_traces));
            let mut written = Vec::new();
            let selected: Vec<&catalogue::Entry> = if all {
                if !names.is_empty() {
                    return Err("give check names or --all, not both".into());
                }
                entries.iter().collect()
            } else {
                if names.is_empty() {
                    return Err("name at least one check, or use --all (see `wbspec list`)".into());
                }
                let mut v = Vec::new();
                for n in &names {
                    let hits: Vec<&catalogue::Entry> = entries
                        .iter()
                        .filter(|e| &e.name == n || e.tags.iter().any(|t| t == n))
                        .collect();
                    if hits.is_empty() {
                        return Err(format!("unknown check '{n}' (see `wbspec list`)"));
                    }
                    for h in hits {
                        if !v.iter().any(|x: &&catalogue::Entry| x.name == h.name) {
                            v.push(h);
                        }
                    }
                }
                v
            };
            let mut results = Vec::new();
            let t0 = std::time::Instant::now();
            for e in &selected {
                eprintln!("running {} ...", e.name);
                let r = runner::run(e, true)?;
                report::print_verdicts(e, &r);
                if explain {
                    report::print_counterexamples(e, &r)?;
                }
                if let Some(d) = &trace_dir {
                    for f in trace::write_all(d, e, &r)? {
                        eprintln!("wrote {}", f.display());
                        written.push(f);
                    }
                }
                if update_pins && r.complete && e.states != Some(r.unique_states) {
                    catalogue::update_pin(&e.file, &e.name, r.unique_states)?;
                    eprintln!("pinned {} states = {}", e.name, r.unique_states);
                }
                results.push(r);
            }
            if let (true, Some(d)) = (all, &trace_dir) {
                remove_stale_traces(d, &written)?;
            }
            let bad = results.iter().filter(|r| !r.ok()).count();
            report::print_summary(&results, t0.elapsed());
            if let Some(ms) = results::mutation_score(&selected, &results) {
                println!("{}", ms.line());
            }
            if let Some(path) = markdown {
                let cmd = if all {
                    "cargo run --release -- check --all --markdown docs/results.md".to_string()
                } else {
                    format!(
                        "wbspec check {} --markdown {}",
                        names.join(" "),
                        path.display()
                    )
                };
                let text = results::markdown(&selected, &results, &cmd);
                std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            if let Some(path) = json {
                let doc = report::json_report(&selected, &results);
                let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
                std::fs::write(&path, text + "\n")
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
            Ok(if bad == 0 { 0 } else { 1 })
        }
    }
}

/// After `check --all --write-traces`: removes trace files of violations
/// that no longer exist, so the directory holds exactly the current ones.
fn remove_stale_traces(dir: &std::path::Path, written: &[PathBuf]) -> Result<(), String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for f in rd.filter_map(|e| e.ok().map(|e| e.path())) {
        let is_trace = f.extension().map_or(false, |x| x == "json")
            && f.file_name()
                .map_or(false, |n| n.to_string_lossy().contains("--"));
        if is_trace && !written.contains(&f) {
            std::fs::remove_file(&f).map_err(|e| format!("{}: {e}", f.display()))?;
            eprintln!("removed stale {}", f.display());
        }
    }
    Ok(())
}
