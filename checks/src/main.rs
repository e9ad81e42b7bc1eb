//! `wbspec`: run the catalogue of named model checks.

use wbspec::catalogue::{self, Catalogue, Entry, Verdict};
use wbspec::outcome::Settings;
use wbspec::pool;
use wbspec::runner::Engine;
use wbspec::search::Limits;
use wbspec::{
    bench, cite, docgen, dropops, explore, findings, outcome, paths, pins, report, results, shard,
    show, trace,
};

use clap::{Parser, Subcommand};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "wbspec",
    version,
    about = "Model-checked Linux writeback, direct-I/O and truncate races"
)]
struct Cli {
    /// Catalogue directory (default: checks/catalogue of the wbspec
    /// checkout that contains the working directory).
    #[arg(long, global = true)]
    catalogue: Option<PathBuf>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the catalogue's checks (name, model, kernel state, question).
    List {
        /// One line per check with its switches, tasks, the properties
        /// it expects violated, pinned states and tags.
        #[arg(long)]
        long: bool,
        /// Only checks of this kernel state (e.g. T2).
        #[arg(long, value_name = "STATE")]
        kernel: Option<String>,
        /// Only checks with a task of this kind, the task's first word
        /// (e.g. dio-write).
        #[arg(long, value_name = "KIND")]
        task: Option<String>,
        /// Only checks with this tag (e.g. finding).
        #[arg(long)]
        tag: Option<String>,
    },
    /// Print what the catalogue says about one check: kernel state,
    /// switches, tasks, bounds, expected verdicts, pins, tags, pair and
    /// its file (nothing is run).
    Show {
        /// The check (a derived `-bg1` check too).
        check: String,
    },
    /// Run checks and print one verdict line per check and property.
    Check {
        /// Checks to run (names or tags).
        names: Vec<String>,
        /// Run every check (and judge every behaviour switch).
        #[arg(long)]
        all: bool,
        /// Write a JSON report here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Also print the narrated counterexample of every violation.
        #[arg(long)]
        explain: bool,
        /// Rewrite each run check's pinned `states` and `witnesses` to the
        /// counts observed, and those of its derived `-bg1` check (its
        /// `congested` entry), which this option runs too; refused unless
        /// every verdict is as expected (say why in the commit message).
        #[arg(long)]
        update_pins: bool,
        /// Write the results table (Markdown) here, e.g. docs/results.md.
        #[arg(long)]
        markdown: Option<PathBuf>,
        /// With --all: regenerate docs/results.md and every generated
        /// block of README.md, harness/README.md, docs/citing.md and
        /// docs/performance.md from this run (refused unless every
        /// verdict, pin and switch is as expected).
        #[arg(long)]
        update_docs: bool,
        /// Write a trace file, <traces-dir>/<check>--<property>.json, for
        /// every violated property. With --all on the repository's own
        /// catalogue, trace files of the catalogue's checks whose
        /// violations are gone are removed.
        #[arg(long)]
        write_traces: bool,
        /// Directory for --write-traces (default: the checkout's traces/;
        /// required with --catalogue).
        #[arg(long, value_name = "DIR")]
        traces_dir: Option<PathBuf>,
        /// With --all: run shard I of N, a deterministic subset balanced by
        /// pinned state count (merge the JSON reports with merge-reports).
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// Family run: run the checks again with this switch on (e.g. a
        /// fix of docs/findings.md; repeatable) and judge each against its
        /// expected verdicts: a property expected to hold that is violated
        /// is a new violation (exit 1); one expected violated that holds is
        /// fixed. Pins are not compared. With --all: every check; those
        /// whose model lacks the switch or refuses it are not applicable.
        #[arg(long = "with", value_name = "SWITCH")]
        with: Vec<String>,
        /// Run the named checks without this kernel call (an op label,
        /// `caller:callee`, as `wbspec ops` lists it); repeatable. A
        /// what-if run: verdicts are compared with the catalogue's, pins
        /// are not; exit 1 when a verdict changes.
        #[arg(long, value_name = "LABEL")]
        drop: Vec<String>,
        /// With --all: op mutation instead of the catalogue run. Each op
        /// label is dropped in turn over the checks whose programs run it
        /// (killed: some verdict changes); survivors must be explained
        /// in [[equivalent-op]]. Shardable with --shard (over labels).
        #[arg(long)]
        mutate_ops: bool,
        /// Checks explored at once (default: the available cores). The
        /// output is the same for any number: verdict lines, traces and
        /// reports come in catalogue order.
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
        #[command(flatten)]
        run: RunArgs,
    },
    /// List the op labels `check --drop` and `drop = [...]` take: kernel
    /// function, the task kinds whose programs run it, kernel states,
    /// checks; then the ops that cannot be dropped, with the reason.
    Ops {
        /// Only checks of this kernel state (e.g. T2).
        #[arg(long, value_name = "STATE")]
        kernel: Option<String>,
        /// Only ops of tasks of this kind (e.g. truncate).
        #[arg(long, value_name = "KIND")]
        task: Option<String>,
    },
    /// Measure exploration throughput: unique states, transitions,
    /// states/s, bytes per stored state and peak RSS, medians over
    /// repeats, runners interleaved (docs/performance.md).
    Bench {
        /// Checks to measure (default: a small, a medium and the largest).
        names: Vec<String>,
        /// Measurements per check and runner.
        #[arg(long, default_value_t = 3)]
        repeat: usize,
        /// Runners, comma-separated: fast, stateright, fast+sym; `@N`
        /// runs the fast engine on N threads (fast@2, fast+sym@2).
        #[arg(long, default_value = "fast,stateright")]
        engines: String,
        /// Also measure another wbspec binary (its `check NAME --json`),
        /// e.g. a build of the previous commit; repeatable. These come
        /// first: ratios are relative to the first runner.
        #[arg(long, value_name = "BINARY")]
        against: Vec<PathBuf>,
        /// The catalogue the `--against` binaries read (default: this
        /// run's): an older binary may not parse a newer catalogue. Only
        /// checks whose configuration is the same in both are comparable;
        /// the unique-state counts in the table show it.
        #[arg(long, value_name = "DIR", requires = "against")]
        against_catalogue: Option<PathBuf>,
        /// Bound each run (an incomplete run is reported as such).
        #[arg(long)]
        max_states: Option<u64>,
        #[arg(long)]
        max_seconds: Option<f64>,
        /// Kill a measured process (and fail the bench) after this many
        /// seconds of wall time (default 3600): an `--against` binary that
        /// hangs does not hang the bench.
        #[arg(long, value_name = "S")]
        timeout: Option<f64>,
        /// Write the rows as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// One exploration, no verdicts: a JSON line (used by `bench`).
    #[command(hide = true)]
    BenchRun {
        check: String,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Merge the JSON reports of `check --all --shard I/N` runs into one,
    /// recomputing the mutation score and the switch judgement; exits as
    /// `check --all` would have.
    MergeReports {
        /// The shards' reports (every shard of one split, once).
        reports: Vec<PathBuf>,
        /// Write the merged JSON report here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write the results table (Markdown) here.
        #[arg(long)]
        markdown: Option<PathBuf>,
    },
    /// Regenerate (or, with --check, compare) docs/results.md and every
    /// generated block of the docs from a saved `check --all --json`
    /// report, without running the catalogue.
    Docs {
        /// The JSON report of a `check --all` run of this catalogue.
        #[arg(long, value_name = "FILE")]
        report: PathBuf,
        /// Write nothing; exit 1 naming every stale file and block.
        #[arg(long)]
        check: bool,
    },
    /// Re-execute a trace file, confirm its property fails at its last
    /// step, and that the file is what its catalogue check records.
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
    /// Write a finding's mail-ready report, docs/reports/ID.md, from
    /// data (findings.toml, the catalogue, its fix checks); ≤ 72 columns.
    Report {
        /// Finding ids (checks/facts/findings.toml); with --all, every
        /// finding that has a fix or a reproducer.
        ids: Vec<String>,
        #[arg(long)]
        all: bool,
        /// Print to standard output instead of writing the file.
        #[arg(long)]
        stdout: bool,
    },
    /// Run a finding's real-kernel reproducer and print what the kernel
    /// did next to what the model predicts: exit 0 when reproduced, 1
    /// when not, 2 when it cannot run here (checks/facts/findings.toml,
    /// `reproducer`).
    Reproduce {
        /// The finding id.
        id: String,
        /// Guest kernel image, for a reproducer that runs only in a VM.
        #[arg(long, value_name = "IMAGE")]
        kernel: Option<String>,
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
    #[command(disable_help_flag = true)]
    Conform {
        /// Scenario names and options, passed to the conformance runner.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Record a program's file I/O on the recording FUSE server (root,
    /// /dev/fuse): `record --trace OUT [SERVER OPTIONS] -- CMD [ARGS...]`,
    /// `{mnt}` in ARGS is the mount. Exit status: CMD's; 2 when the
    /// recording failed. See docs/record.md.
    #[command(disable_help_flag = true)]
    Record {
        /// Options, then `--` and the command.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run `conform` or `run` in a QEMU guest on another kernel:
    /// `vm (--kernel IMAGE | --debian 6.1|6.12) [--mem MIB] [--cpus N]
    /// [--timeout S] [--keep DIR] [--tcg] -- conform [SCENARIO...]`.
    /// See docs/vm.md.
    #[command(disable_help_flag = true)]
    Vm {
        /// Options, then `--` and the guest command.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// How checks are explored (check, bench-run).
#[derive(clap::Args, Clone, Debug)]
struct RunArgs {
    /// Exploration engine: fast, or stateright (the reference).
    #[arg(long, default_value = "fast")]
    engine: String,
    /// Reduce every check by its model's symmetry (pins of checks the
    /// catalogue does not reduce are then not compared).
    #[arg(long, conflicts_with = "no_symmetry")]
    symmetry: bool,
    /// Reduce no check (pins of `symmetry = true` checks not compared).
    #[arg(long)]
    no_symmetry: bool,
    /// Stop each exploration after this many unique states: the run is
    /// incomplete, not a proof (exit 1).
    #[arg(long, value_name = "N")]
    max_states: Option<u64>,
    /// Stop each exploration after this many seconds: the run is
    /// incomplete, not a proof (exit 1).
    #[arg(long, value_name = "S")]
    max_seconds: Option<f64>,
    /// Threads of the fast engine's search (default 1: the DFS in the
    /// reference's order; more: the same DFS on N threads over one shared
    /// state table, same counts and verdicts, no depth: `depth=n/a`).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Bitstate search in 2^N bits (N 20..40) for state spaces beyond
    /// memory: states may be omitted, so no run is a proof; the expected
    /// omissions are printed (docs/performance.md).
    #[arg(long, value_name = "N")]
    bitstate: Option<u8>,
}

impl RunArgs {
    fn settings(&self) -> Result<Settings, String> {
        Ok(Settings {
            engine: Engine::parse(&self.engine)?,
            limits: Limits::from_flags(self.max_states, self.max_seconds)?,
            symmetry: if self.symmetry {
                Some(true)
            } else if self.no_symmetry {
                Some(false)
            } else {
                None
            },
            threads: wbspec::parallel::threads_flag(self.threads)?,
            bitstate: wbspec::bitstate::flag(self.bitstate)?,
        })
    }
}

/// Standard output that turns a write error into a one-line error (a
/// closed pipe ends the process quietly: SIGPIPE is left at its default).
struct Out(std::io::BufWriter<std::io::Stdout>);

impl Out {
    fn line(&mut self, l: &str) -> Result<(), String> {
        writeln!(self.0, "{l}").map_err(|e| format!("standard output: {e}"))
    }
    fn lines(&mut self, ls: &[String]) -> Result<(), String> {
        for l in ls {
            self.line(l)?;
        }
        Ok(())
    }
    fn flush(&mut self) -> Result<(), String> {
        self.0.flush().map_err(|e| format!("standard output: {e}"))
    }
}

/// The checks `check` runs: every one with `all`, else those named or
/// tagged by `names`, each once, in the order named.
fn select<'a>(entries: &'a [Entry], names: &[String], all: bool) -> Result<Vec<&'a Entry>, String> {
    if all {
        if !names.is_empty() {
            return Err("give check names or --all, not both".into());
        }
        return Ok(entries.iter().collect());
    }
    if names.is_empty() {
        return Err("name at least one check, or use --all (see `wbspec list`)".into());
    }
    let mut v: Vec<&Entry> = Vec::new();
    for n in names {
        let hits: Vec<&Entry> = entries
            .iter()
            .filter(|e| &e.name == n || e.has_tag(n))
            .collect();
        if hits.is_empty() {
            return Err(format!("unknown check '{n}' (see `wbspec list`)"));
        }
        for h in hits {
            if !v.iter().any(|x| x.name == h.name) {
                v.push(h);
            }
        }
    }
    Ok(v)
}

/// `check --with`: every selected check with the switches on, one line
/// each, then the summary (with.rs). Exit 1 unless clean. The checks
/// run `jobs` at a time and are reported in catalogue order (pool.rs).
fn with_run(
    out: &mut Out,
    selected: &[&Entry],
    flags: &[String],
    set: &Settings,
    jobs: usize,
) -> Result<u8, String> {
    for f in flags {
        if !selected.iter().any(|e| {
            e.check.switch_defs().iter().any(|d| d.name == f)
                || e.check.key_switches().iter().any(|(k, _)| k == f)
        }) {
            return Err(format!(
                "--with {f}: no selected check's model has such a switch (see `wbspec show CHECK` for a model's switches)"
            ));
        }
    }
    let mut judged = Vec::new();
    let plan = wbspec::with::plan(selected, flags, set)?;
    pool::run_ordered(
        &plan,
        jobs,
        |(name, d)| {
            if d.is_ok() {
                eprintln!("running {name} with {} ...", flags.join("+"));
            }
            wbspec::with::run(d, set)
        },
        |(name, _), j| {
            out.line(&wbspec::with::line(name, flags, &j))?;
            judged.push((name.clone(), j));
            Ok(())
        },
    )?;
    let (line, ok) = wbspec::with::summary(flags, &judged);
    out.line(&line)?;
    out.flush()?;
    Ok(if ok { 0 } else { 1 })
}

fn find<'a>(entries: &'a [Entry], name: &str) -> Result<&'a Entry, String> {
    entries
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| format!("unknown check '{name}' (see `wbspec list`)"))
}

fn main() -> ExitCode {
    // A closed stdout (`wbspec list | head -1`) ends the process quietly,
    // as it does coreutils, instead of a panic in println!.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return parse_error(e),
    };
    let mut out = Out(std::io::BufWriter::new(std::io::stdout()));
    let r = run(cli, &mut out);
    let r = r.and_then(|code| out.flush().map(|()| code));
    match r {
        Ok(code) => ExitCode::from(code),
        Err(msg) => {
            eprintln!("wbspec: {}", error_line(&msg));
            ExitCode::from(2)
        }
    }
}

/// An error message as printed: one line, whatever the parser said, and
/// no raw control character (a name from the command line or a file may
/// hold an escape sequence): each is shown escaped, e.g. `\u{1b}`.
fn error_line(msg: &str) -> String {
    let one: Vec<&str> = msg.split_whitespace().collect();
    one.join(" ")
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A command line clap did not run: a usage error is one line on stderr
/// (its message, without clap's tips and usage) and exit 2; `--help` and `--version`
/// go to standard output, and a failed write there is an error too
/// (`wbspec --help > /dev/full`).
fn parse_error(e: clap::Error) -> ExitCode {
    let text = e.render().to_string();
    if e.use_stderr() {
        // the message, up to clap's tips and usage, on one line
        let msg: Vec<&str> = text
            .lines()
            .map(str::trim)
            .take_while(|l| {
                !l.starts_with("Usage:")
                    && !l.starts_with("tip:")
                    && !l.starts_with("For more information")
            })
            .filter(|l| !l.is_empty())
            .collect();
        eprintln!(
            "wbspec: {}",
            error_line(msg.join(" ").trim_start_matches("error: "))
        );
        return ExitCode::from(2);
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::from(0),
        Err(err) => {
            eprintln!("wbspec: standard output: {err}");
            ExitCode::from(2)
        }
    }
}

/// The catalogue in use, and whether it is the checkout's own.
fn catalogue_of(cli_dir: Option<&Path>) -> Result<(Catalogue, bool), String> {
    let own = paths::default_catalogue();
    let (dir, is_own) = match cli_dir {
        Some(d) => {
            let same = match (&own, d.canonicalize()) {
                (Ok(o), Ok(c)) => o.canonicalize().map(|o| o == c).unwrap_or(false),
                _ => false,
            };
            (d.to_path_buf(), same)
        }
        None => (own?, true),
    };
    Ok((catalogue::load_dir(&dir)?, is_own))
}

fn run(cli: Cli, out: &mut Out) -> Result<u8, String> {
    if let Cmd::Conform { args } = &cli.cmd {
        let code = wbspec_harness::conform::conform_main(args);
        return Ok(code.clamp(0, 255) as u8);
    }
    if let Cmd::Record { args } = &cli.cmd {
        let code = wbspec_harness::record::record_main(args);
        return Ok(code.clamp(0, 255) as u8);
    }
    if let Cmd::Vm { args } = &cli.cmd {
        let code = wbspec_harness::vm::vm_main(args);
        return Ok(code.clamp(0, 255) as u8);
    }
    let (cat, own) = catalogue_of(cli.catalogue.as_deref())?;
    let entries = &cat.entries;
    match cli.cmd {
        Cmd::Conform { .. } | Cmd::Record { .. } | Cmd::Vm { .. } => unreachable!("handled above"),
        Cmd::Replay { file } => {
            let r = trace::replay_file(&file, entries)?;
            out.line(&trace::summary(&r))?;
            Ok(0)
        }
        Cmd::Explain { file } => {
            let r = trace::replay_file(&file, entries)?;
            let t = &r.trace;
            out.line(&format!(
                "Trace {} {} ({} steps, model {})",
                t.check,
                t.property,
                t.actions.len(),
                t.model_version
            ))?;
            out.lines(&wbspec::explain::wrap("", &t.question, 72))?;
            let drops = r.check.drops();
            if !drops.is_empty() {
                out.lines(&wbspec::explain::wrap(
                    "",
                    &format!(
                        "Dropped: {} (a what-if run, not the kernel)",
                        drops.join(", ")
                    ),
                    72,
                ))?;
            }
            out.lines(&r.check.explain(&t.property, &t.counterexample())?)?;
            Ok(0)
        }
        Cmd::Explore { check, trace, port } => {
            let e = find(entries, &check)?;
            out.flush()?;
            // bad input (a busy port, a foreign trace) before the run
            let port = explore::probe_port(port)?;
            let given = match &trace {
                Some(f) => Some(trace_start(e, f, entries)?),
                None => None,
            };
            // the page shows the check's verdicts: an exhaustive run first
            eprintln!("running {} ...", e.name);
            let r = outcome::run(e, &Settings::default(), true)?;
            let (encoded, what) = given.unwrap_or_else(|| default_start(e, &r));
            let page = explore::page(e, &r, &what);
            let check = e.check.clone();
            explore::serve_at(
                port,
                &encoded,
                &what,
                &page,
                move |p| check.serve(p),
                &mut std::io::stdout(),
            )
        }
        Cmd::Report { ids, all, stdout } => {
            let fs = findings::load(&findings::path_for(&cat.dir), &cat)?;
            let chosen: Vec<&findings::Finding> = if all {
                if !ids.is_empty() {
                    return Err("give finding ids or --all, not both".into());
                }
                fs.iter()
                    .filter(|f| !f.fixes.is_empty() || f.reproducer.is_some())
                    .collect()
            } else {
                if ids.is_empty() {
                    return Err(
                        "name a finding id (checks/facts/findings.toml), or use --all".into(),
                    );
                }
                ids.iter()
                    .map(|id| {
                        fs.iter().find(|f| &f.id == id).ok_or_else(|| {
                            format!(
                                "unknown finding '{id}' (ids are in checks/facts/findings.toml)"
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?
            };
            if !stdout && !own {
                return Err(
                    "report writes into the checkout's docs/reports: use --stdout with --catalogue"
                        .into(),
                );
            }
            let dir = paths::workspace_root()?.join("docs/reports");
            let mut code = 0;
            for f in chosen {
                let (lines, ok) = wbspec::finding_report::report(f, entries)?;
                let text = lines.join("\n") + "\n";
                if !ok {
                    // a difference, as cite says it: the text is printed,
                    // never written into docs/reports
                    code = 1;
                    eprintln!(
                        "wbspec: {}: a check it cites is not as the catalogue expects (see its Verdict line){}",
                        f.id,
                        if stdout { "" } else { "; docs/reports not written" }
                    );
                }
                if stdout {
                    out.line(text.trim_end())?;
                } else if ok {
                    let p = dir.join(format!("{}.md", f.id));
                    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                    paths::check_output(&p)?;
                    paths::write_atomic(&p, text.as_bytes())?;
                    eprintln!("wrote {}", p.display());
                }
            }
            Ok(code)
        }
        Cmd::Reproduce { id, kernel } => {
            let fs = findings::load(&findings::path_for(&cat.dir), &cat)?;
            let f = fs.iter().find(|f| f.id == id).ok_or_else(|| {
                format!("unknown finding '{id}' (ids are in checks/facts/findings.toml)")
            })?;
            out.flush()?;
            wbspec::reproduce::run(f, entries, kernel.as_deref())
        }
        Cmd::Cite { check } => {
            let e = find(entries, &check)?;
            eprintln!("running {} ...", e.name);
            let set = Settings::default();
            let r = outcome::run(e, &set, true)?;
            let pair = match &e.pair {
                Some(p) => {
                    let pe = find(entries, p)?;
                    eprintln!("running {} ...", pe.name);
                    Some((pe, outcome::run(pe, &set, true)?))
                }
                None => None,
            };
            let ok = r.ok() && pair.as_ref().map_or(true, |(_, pr)| pr.ok());
            let catalogue = match (&cli.catalogue, own) {
                (Some(d), false) => Some(
                    d.canonicalize()
                        .map_err(|err| format!("{}: {err}", d.display()))?,
                ),
                _ => None,
            };
            let ctx = cite::Context {
                commit: report::model_commit(),
                catalogue,
                facts: wbspec::facts::facts()?,
            };
            let lines = cite::cite(e, &r, pair.as_ref().map(|(pe, pr)| (*pe, pr)), &ctx)?;
            out.lines(&lines)?;
            Ok(if ok { 0 } else { 1 })
        }
        Cmd::Bench {
            names,
            repeat,
            engines,
            against,
            against_catalogue,
            max_states,
            max_seconds,
            timeout,
            json,
        } => bench::run(
            &cat,
            &names,
            repeat,
            &engines,
            &against,
            against_catalogue.as_deref(),
            &bench::Bounds {
                max_states,
                max_seconds,
                timeout: match timeout {
                    None => None,
                    Some(s) if s.is_finite() && s > 0.0 && s < 1e9 => {
                        Some(std::time::Duration::from_secs_f64(s))
                    }
                    Some(s) => return Err(format!("--timeout {s}: give a positive number")),
                },
            },
            json.as_deref(),
            &mut |l| out.line(l).and_then(|()| out.flush()),
        ),
        Cmd::BenchRun { check, run } => {
            let e = find(entries, &check)?;
            let set = run.settings()?;
            outcome::validate(e, &set)?;
            let symmetry = set.symmetry.unwrap_or(e.symmetry);
            let x = e.check.explore(
                &e.name,
                &wbspec::runner::RunOptions {
                    engine: set.engine,
                    limits: set.limits,
                    symmetry,
                    expected: e.states.filter(|_| symmetry == e.symmetry),
                    threads: set.threads,
                    bitstate: set.bitstate,
                },
                // progress on stderr for a long run (bench discards it)
                true,
            );
            let v = serde_json::json!({
                "check": e.name, "engine": set.engine.as_str(), "symmetry": symmetry,
                "threads": set.threads.max(1),
                "bound": x.stopped.map(|s| s.json()),
                "complete": x.complete, "unique_states": x.unique_states,
                "total_states": x.total_states,
                "max_depth": (!x.depth_unknown).then_some(x.max_depth),
                "seconds": x.elapsed.as_secs_f64(), "table_bytes": x.table_bytes,
            });
            out.line(&v.to_string())?;
            Ok(if x.complete { 0 } else { 1 })
        }
        Cmd::MergeReports {
            reports,
            json,
            markdown,
        } => shard::run_merge(
            &cat,
            &reports,
            json.as_deref(),
            markdown.as_deref(),
            &mut |l| out.line(l),
        ),
        Cmd::Docs { report, check } => {
            if !own {
                return Err(
                    "docs: the generated docs are the checkout's: give no --catalogue".into(),
                );
            }
            let findings_v = findings::load(&findings::path_for(&cat.dir), &cat)?;
            let f = report.display().to_string();
            let text = paths::read_bounded(&report, paths::MAX_REPORT_BYTES)?;
            let doc: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("{f}: not a JSON report: {e}"))?;
            let results_v = docgen::results_from_report(&cat, &doc, &f)?;
            let bad: Vec<&str> = results_v
                .iter()
                .filter(|r| !r.ok())
                .map(|r| r.name.as_str())
                .collect();
            if let Some(b) = bad.first() {
                return Err(format!(
                    "{f}: check '{b}' is not as expected in the report ({} such); the docs need a green check --all",
                    bad.len()
                ));
            }
            let switches = results::switches(&cat, &results_v);
            let selected: Vec<&Entry> = entries.iter().collect();
            let inp = docgen::Inputs {
                cat: &cat,
                entries: &selected,
                results: &results_v,
                switches: &switches,
                findings: &findings_v,
                root: &paths::workspace_root()?,
            };
            let stale = docgen::update(&inp, !check)?;
            if check {
                if stale.is_empty() {
                    out.line("docs: every generated file and block is up to date")?;
                    Ok(0)
                } else {
                    out.line(&format!("docs: {}", docgen::stale_message(&stale)))?;
                    Ok(1)
                }
            } else {
                for s in &stale {
                    out.line(&s.updated())?;
                }
                Ok(0)
            }
        }
        Cmd::List {
            long,
            kernel,
            task,
            tag,
        } => {
            let f = show::Filter { kernel, task, tag };
            f.validate(&cat)?;
            for e in entries.iter().filter(|e| f.matches(e)) {
                out.line(&if long {
                    show::long_line(e)
                } else {
                    show::list_line(e)
                })?;
            }
            Ok(0)
        }
        Cmd::Ops { kernel, task } => {
            let f = show::Filter {
                kernel,
                task: task.clone(),
                tag: None,
            };
            f.validate(&cat)?;
            let sel: Vec<&Entry> = entries.iter().filter(|e| f.matches(e)).collect();
            out.lines(&dropops::ops_lines(&sel, task.as_deref()))?;
            Ok(0)
        }
        Cmd::Show { check } => {
            let e = find(entries, &check)?;
            out.lines(&show::show(e, &cat))?;
            Ok(0)
        }
        Cmd::Check {
            names,
            all,
            json,
            explain,
            update_pins,
            markdown,
            update_docs,
            write_traces,
            traces_dir,
            shard,
            with,
            drop,
            mutate_ops,
            jobs,
            run,
        } => {
            let set = run.settings()?;
            if jobs.is_some_and(|j| !(1..=1024).contains(&j)) {
                return Err("--jobs must be 1..=1024".into());
            }
            if !with.is_empty() {
                if update_pins
                    || update_docs
                    || write_traces
                    || markdown.is_some()
                    || json.is_some()
                    || shard.is_some()
                    || explain
                    || mutate_ops
                    || !drop.is_empty()
                {
                    return Err("--with runs a configuration the catalogue does not pin: it takes no --update-pins, --update-docs, --write-traces, --markdown, --json, --shard, --explain, --drop or --mutate-ops".into());
                }
                let selected = select(entries, &names, all)?;
                return with_run(
                    out,
                    &selected,
                    &with,
                    &set,
                    jobs.unwrap_or_else(pool::available),
                );
            }
            if mutate_ops {
                if !all {
                    return Err("--mutate-ops needs --all".into());
                }
                if update_pins
                    || update_docs
                    || markdown.is_some()
                    || write_traces
                    || explain
                    || !drop.is_empty()
                    || set.limits != Limits::default()
                    || set.symmetry.is_some()
                {
                    return Err("--mutate-ops runs alone (with --shard, --json): no pins, docs, traces, --drop or bounds".into());
                }
                let sh = shard.as_deref().map(shard::Shard::parse).transpose()?;
                return dropops::run(&cat, sh, json.as_deref(), &mut |l| {
                    out.line(l).and_then(|()| out.flush())
                });
            }
            if !drop.is_empty() {
                if all {
                    return Err("--drop names checks, not --all (check --all --mutate-ops drops every op in turn)".into());
                }
                if update_pins {
                    return Err("--update-pins refused with --drop: a dropped run's counts are not the catalogue's pins".into());
                }
                if markdown.is_some() {
                    return Err(
                        "--markdown refused with --drop: the results table is the catalogue's"
                            .into(),
                    );
                }
                if write_traces && traces_dir.is_none() {
                    return Err("--write-traces with --drop needs --traces-dir: traces/ holds the catalogue's own".into());
                }
            }
            if update_docs && (!all || shard.is_some() || !own) {
                return Err(
                    "--update-docs needs --all, no --shard, and the checkout's own catalogue"
                        .into(),
                );
            }
            if update_docs && set.limits != Limits::default() {
                return Err("--update-docs refused with --max-states/--max-seconds: the docs need complete runs".into());
            }
            // the findings file is read before the run, so a bad one
            // costs no catalogue run
            let findings_v = if update_docs {
                findings::load(&findings::path_for(&cat.dir), &cat)?
            } else {
                Vec::new()
            };
            let shard = match shard {
                Some(_) if !all => return Err("--shard needs --all".into()),
                Some(_) if markdown.is_some() => {
                    return Err("--shard with --markdown: the table needs every check (merge-reports --markdown)".into())
                }
                Some(s) => Some(shard::Shard::parse(&s)?),
                None => None,
            };
            if traces_dir.is_some() && !write_traces {
                return Err("--traces-dir needs --write-traces".into());
            }
            let trace_dir = if write_traces {
                Some(match traces_dir {
                    Some(d) => d,
                    None if own => paths::default_traces()?,
                    None => return Err("--write-traces with --catalogue needs --traces-dir".into()),
                })
            } else {
                None
            };
            let selected: Vec<&Entry> = if all {
                if !names.is_empty() {
                    return Err("give check names or --all, not both".into());
                }
                let bad = results::unknown_unobservable(&cat);
                if let Some(b) = bad.first() {
                    return Err(b.clone());
                }
                match shard {
                    Some(sh) => shard::select(entries, sh),
                    None => entries.iter().collect(),
                }
            } else {
                let mut v = select(entries, &names, false)?;
                if update_pins {
                    // a check's derived twins (`-bg1`) are pinned with it:
                    // `check --all` judges them too
                    let twins: Vec<&Entry> = entries
                        .iter()
                        .filter(|t| {
                            t.parent
                                .as_ref()
                                .is_some_and(|p| v.iter().any(|x| &x.name == p))
                        })
                        .collect();
                    for t in twins {
                        if !v.iter().any(|x| x.name == t.name) {
                            v.push(t);
                        }
                    }
                }
                v
            };
            // a what-if run: the checks with the drops (a label that
            // matches nothing in a check is an error naming it)
            let derived: Vec<Entry> = if drop.is_empty() {
                Vec::new()
            } else {
                selected
                    .iter()
                    .map(|e| dropops::with_drops(e, &drop))
                    .collect::<Result<_, _>>()?
            };
            let selected: Vec<&Entry> = if drop.is_empty() {
                selected
            } else {
                derived.iter().collect()
            };
            for e in &selected {
                outcome::validate(e, &set)?;
            }
            // every output is checked before the run, not after it
            for p in json.iter().chain(markdown.iter()) {
                paths::check_output(p)?;
            }
            if let Some(d) = &trace_dir {
                paths::check_output_dir(d)?;
            }
            if update_pins {
                for e in &selected {
                    paths::check_output(&e.file)?;
                }
            }
            if update_pins {
                if let Some(e) = selected
                    .iter()
                    .find(|e| set.symmetry.is_some_and(|x| x != e.symmetry))
                {
                    return Err(format!(
                        "--update-pins refused: --symmetry/--no-symmetry differs from the catalogue's choice for {}",
                        e.name
                    ));
                }
                if set.limits != Limits::default() {
                    return Err("--update-pins refused with --max-states/--max-seconds".into());
                }
            }
            let mut results_v = Vec::new();
            let mut written = Vec::new();
            let t0 = std::time::Instant::now();
            let jobs = jobs.unwrap_or_else(pool::available);
            // explored `jobs` at a time; each result is reported on this
            // thread in catalogue order, as a one-at-a-time run reports it
            pool::run_ordered(
                &selected,
                jobs,
                |e| {
                    eprintln!("running {} ...", e.name);
                    outcome::run(e, &set, true)
                },
                |e, r| {
                    if !r.dropped.is_empty() {
                        out.line(&format!(
                            "Dropped {}: {} (a what-if run, not the kernel: verdicts compared with the catalogue's, pins not compared)",
                            e.name,
                            r.dropped.join(" ")
                        ))?;
                    }
                    out.lines(&report::verdict_lines(&r))?;
                    if explain {
                        out.lines(&report::counterexample_lines(e, &r)?)?;
                    }
                    if let Some(d) = &trace_dir {
                        for f in trace::write_all(d, e, &r)? {
                            eprintln!("wrote {}", f.display());
                            written.push(f);
                        }
                    }
                    results_v.push(r);
                    Ok(())
                },
            )?;
            if let (true, true, None, Some(d)) = (all, own, shard, &trace_dir) {
                remove_stale_traces(d, &selected, &results_v, &written)?;
            }
            let mut bad = results_v.iter().filter(|r| !r.ok()).count();
            out.lines(&report::summary_lines(&results_v, t0.elapsed()))?;
            // a shard cannot judge what needs every check: merge-reports does
            let ms = if shard.is_some() || !drop.is_empty() {
                None
            } else {
                results::mutation_score(&selected, &results_v)
            };
            if let Some(ms) = &ms {
                out.line(&ms.line())?;
                bad += ms.failed();
            }
            let switches = (all && shard.is_none()).then(|| results::switches(&cat, &results_v));
            if let Some(sw) = &switches {
                for s in sw {
                    out.line(&s.line())?;
                }
                bad += sw.iter().filter(|s| !s.ok()).count();
            }
            if update_pins {
                let refused: Vec<&str> = results_v
                    .iter()
                    .filter(|r| !r.complete || !r.verdicts_ok())
                    .map(|r| r.name.as_str())
                    .collect();
                if !refused.is_empty() {
                    let twin = selected
                        .iter()
                        .any(|e| e.parent.is_some() && refused.contains(&e.name.as_str()));
                    return Err(format!(
                        "--update-pins refused: verdicts not as expected (or incomplete) in {}{}",
                        refused.join(" "),
                        if twin {
                            " (a -bg1 check's expectations are its parent's unless its `congested = { expect = {...} }` says otherwise)"
                        } else {
                            ""
                        }
                    ));
                }
                let mut by_file: BTreeMap<&Path, BTreeMap<String, _>> = BTreeMap::new();
                for (e, r) in selected.iter().zip(&results_v) {
                    // a derived -bg1 check pins into its parent's
                    // `congested` table
                    let key = match &e.parent {
                        Some(p) => format!("{p}{}", pins::CONGESTED_KEY),
                        None => e.name.clone(),
                    };
                    by_file
                        .entry(e.file.as_path())
                        .or_default()
                        .insert(key, pins::pins_of(r));
                }
                for (f, p) in &by_file {
                    pins::update_file(f, p)?;
                    eprintln!("pinned {} checks in {}", p.len(), f.display());
                }
                // the verdicts were as expected (else refused above) and
                // the counts are now pinned: only pins differed
                bad -= results_v.iter().filter(|r| !r.ok()).count();
            }
            if let Some(path) = markdown {
                let cmd = if all {
                    docgen::COMMAND.to_string()
                } else {
                    format!(
                        "wbspec check {} --markdown {}",
                        names.join(" "),
                        path.display()
                    )
                };
                let text = results::markdown(&selected, &results_v, switches.as_deref(), &cmd)?;
                paths::write_atomic(&path, text.as_bytes())?;
            }
            if let Some(path) = json {
                let facts = wbspec::facts::facts()?;
                let checks = selected
                    .iter()
                    .zip(&results_v)
                    .map(|(e, r)| report::check_json(e, r, facts))
                    .collect();
                let mut extra = serde_json::Map::new();
                extra.insert("catalogue".into(), report::catalogue_json(&cat));
                if let Some(ms) = &ms {
                    extra.insert("mutation_score".into(), ms.json());
                }
                if let Some(sw) = &switches {
                    extra.insert("switches".into(), results::switches_json(sw));
                }
                if let Some(sh) = shard {
                    extra.insert(
                        "shard".into(),
                        serde_json::json!({"index": sh.index, "count": sh.count}),
                    );
                }
                let doc = report::json_report(checks, serde_json::Value::Object(extra));
                let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
                paths::write_atomic(&path, (text + "\n").as_bytes())?;
            }
            if update_docs {
                if bad != 0 {
                    return Err(
                        "--update-docs refused: some verdict, pin or switch is not as expected (see above)"
                            .into(),
                    );
                }
                let inp = docgen::Inputs {
                    cat: &cat,
                    entries: &selected,
                    results: &results_v,
                    switches: switches.as_deref().unwrap_or(&[]),
                    findings: &findings_v,
                    root: &paths::workspace_root()?,
                };
                for s in docgen::update(&inp, true)? {
                    eprintln!("{}", s.updated());
                }
            }
            Ok(if bad == 0 { 0 } else { 1 })
        }
    }
}

/// Where to open the Explorer with `--trace`: the `Path::encode` string
/// and what it is.
fn trace_start(e: &Entry, f: &Path, entries: &[Entry]) -> Result<(String, String), String> {
    let r = trace::replay_file(f, entries)?;
    if r.trace.model != e.model || r.trace.config != e.check.config_json() {
        // a `check --drop` trace: say so, not "another configuration"
        let own = e.check.drops();
        let dropped: Vec<&str> = r
            .trace
            .config
            .get("drop")
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
            .unwrap_or_default();
        let dropped: Vec<&str> = dropped
            .into_iter()
            .filter(|d| !own.iter().any(|o| o == d))
            .collect();
        return Err(if !dropped.is_empty() {
            format!(
                "{}: the trace is of a what-if run of '{}' without {} (check --drop); the Explorer shows the catalogue's configuration",
                f.display(),
                r.trace.check,
                dropped.join(", ")
            )
        } else {
            format!(
                "{}: the trace is of check '{}' with another configuration than the catalogue's '{}'",
                f.display(),
                r.trace.check,
                e.name
            )
        });
    }
    let what = format!(
        "{} counterexample of {} from {}",
        r.trace.property,
        e.name,
        f.display()
    );
    Ok((r.trace.encoded, what))
}

/// Where to open the Explorer without `--trace`: the shortest
/// counterexample (as the run `r` found it) of the first property the
/// catalogue expects to be violated, else the initial state.
fn default_start(e: &Entry, r: &outcome::CheckResult) -> (String, String) {
    for (prop, v) in &e.expect {
        if *v == Verdict::Violated {
            if let Some(cx) = r
                .props
                .iter()
                .find(|p| p.name == prop)
                .and_then(|p| p.trace.as_ref())
            {
                return (
                    cx.encoded.clone(),
                    format!("{prop} counterexample of {}", e.name),
                );
            }
        }
    }
    ("0".into(), format!("initial state of {}", e.name))
}

/// After `check --all --write-traces` on the checkout's own catalogue:
/// removes trace files `<check>--<property>.json` of this catalogue's
/// checks and their models' properties that this run did not write and
/// whose violation it disproved: only a complete exploration that saw no
/// violating state disproves one (a run stopped at a bound, or a
/// violation whose counterexample search stopped, removes nothing).
/// Nothing else in the directory is touched.
fn remove_stale_traces(
    dir: &Path,
    entries: &[&Entry],
    results: &[outcome::CheckResult],
    written: &[PathBuf],
) -> Result<(), String> {
    for (e, r) in entries.iter().zip(results) {
        if !r.complete {
            continue;
        }
        for p in e.check.property_defs() {
            let seen = r
                .props
                .iter()
                .any(|x| x.name == p.name && x.observed != Verdict::Holds);
            let f = dir.join(trace::file_name(&e.name, p.name));
            if !seen && !written.contains(&f) && f.is_file() {
                std::fs::remove_file(&f).map_err(|err| format!("{}: {err}", f.display()))?;
                eprintln!("removed stale {}", f.display());
            }
        }
    }
    Ok(())
}
