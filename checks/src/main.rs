//! `wbspec`: run the catalogue of named model checks.

use wbspec::{catalogue, report, results, runner};

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
    },
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
    let entries = catalogue::load_dir(dir)?;
    match cli.cmd {
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
        } => {
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
                if update_pins && r.complete && e.states != Some(r.unique_states) {
                    catalogue::update_pin(&e.file, &e.name, r.unique_states)?;
                    eprintln!("pinned {} states = {}", e.name, r.unique_states);
                }
                results.push(r);
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
