//! `wbspec bench`: the exploration throughput of fixed catalogue checks,
//! medians over repeats, measured side by side.
//!
//! Every measurement is one child process (`wbspec bench-run`, or another
//! wbspec binary's `check --json` with `--against`), so its peak resident
//! set is its own (wait4's ru_maxrss). Repeats interleave the engines
//! (A B A B ...), so that both see the same load on a shared machine.
//! Only the exploration is timed; the counterexample search and the
//! reports are not.

use crate::catalogue::Catalogue;
use crate::report;
use crate::runner::Engine;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The measured child running now (0: none), killed on SIGINT/SIGTERM.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// The `--against` run's temporary directory now, removed on a signal.
static TEMP: Mutex<Option<PathBuf>> = Mutex::new(None);
/// A signal is ending the process: a child that died of it is no error.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// On SIGINT, SIGTERM or SIGHUP: kills the measured child, removes the
/// temporary directory, exits 128 + the signal.
fn clean_up_on_signal() {
    crate::explore::on_termination(|sig| {
        STOPPING.store(true, Ordering::SeqCst);
        let pid = CHILD.load(Ordering::SeqCst);
        if pid > 0 {
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
        if let Some(d) = TEMP.lock().map(|g| g.clone()).unwrap_or(None) {
            let _ = std::fs::remove_dir_all(d);
        }
        eprintln!("bench: stopped by signal {sig}");
        std::process::exit(128 + sig);
    });
}

/// The default set: a small, a medium and the largest catalogue check.
pub const DEFAULT_CHECKS: &[&str] = &[
    "t-large-trunc-mmap-fsync-3p",
    "t-large-dio-trunc-3p",
    "t-large-odirect-3p",
];

/// Who explores in one measurement.
#[derive(Clone, Debug, PartialEq)]
pub enum Runner {
    /// This binary's engine (`fast`, `stateright`), with or without the
    /// model's symmetry, on `threads` threads (`fast@2`).
    Engine {
        engine: String,
        symmetry: bool,
        threads: usize,
    },
    /// Another wbspec binary's `check NAME --json` (e.g. a build of an
    /// older commit): its States line and report give the counts and time.
    /// Another wbspec binary, and the catalogue it reads (None: the same
    /// as this run's; an older binary may not parse a newer catalogue).
    Binary(PathBuf, Option<PathBuf>),
}

impl Runner {
    pub fn label(&self) -> String {
        match self {
            Runner::Engine {
                engine,
                symmetry,
                threads,
            } => format!(
                "{engine}{}{}",
                if *symmetry { "+sym" } else { "" },
                if *threads > 1 {
                    format!("@{threads}")
                } else {
                    String::new()
                }
            ),
            Runner::Binary(p, _) => format!(
                "bin:{}",
                p.file_name()
                    .map_or("?".into(), |f| f.to_string_lossy().into_owned())
            ),
        }
    }
}

/// One measurement.
#[derive(Clone, Debug)]
pub struct Sample {
    pub unique: u64,
    pub total: u64,
    pub depth: u64,
    pub complete: bool,
    pub seconds: f64,
    /// Bytes of the visited-state table (0: unknown).
    pub table_bytes: u64,
    /// Peak resident set of the process, bytes.
    pub rss: u64,
    /// CPU time of the whole process (user + system), seconds: steadier
    /// than wall time on a loaded machine.
    pub cpu: f64,
}

/// What a child process used.
struct Usage {
    rss: u64,
    cpu: f64,
    code: i32,
}

/// While a signal ends the process, the measuring thread waits for the
/// signal thread's exit instead of reporting the killed child as an error.
fn park_if_stopping() {
    while STOPPING.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs `cmd` to the end, or kills it after `timeout`; its standard
/// output and resource usage. The child dies with this process
/// (PR_SET_PDEATHSIG) and is killed on SIGINT/SIGTERM (`CHILD`).
fn run_measured(mut cmd: Command, timeout: Duration) -> Result<(String, Usage), String> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("bench: cannot start {cmd:?}: {e}"))?;
    let pid = child.id() as libc::pid_t;
    CHILD.store(pid, Ordering::SeqCst);
    let reader = child.stdout.take().map(|mut so| {
        std::thread::spawn(move || {
            let mut out = String::new();
            so.read_to_string(&mut out).map(|_| out)
        })
    });
    let t0 = Instant::now();
    let mut status = 0;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut timed_out = false;
    loop {
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            break;
        }
        if r != 0 {
            let e = std::io::Error::last_os_error();
            // (the signal thread may have reaped the child)
            park_if_stopping();
            CHILD.store(0, Ordering::SeqCst);
            return Err(format!("bench: wait4: {e}"));
        }
        if t0.elapsed() > timeout && !timed_out {
            timed_out = true;
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    CHILD.store(0, Ordering::SeqCst);
    park_if_stopping();
    if timed_out {
        return Err(format!(
            "bench: {} {} did not finish within --timeout {} s (killed)",
            cmd.get_program().to_string_lossy(),
            cmd.get_args()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            timeout.as_secs_f64()
        ));
    }
    let out = match reader.map(|h| h.join()) {
        Some(Ok(Ok(s))) => s,
        Some(Ok(Err(e))) => return Err(format!("bench: reading the child's output: {e}")),
        Some(Err(_)) => return Err("bench: reading the child's output failed".into()),
        None => String::new(),
    };
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Ok((
        out,
        Usage {
            // ru_maxrss is in KiB on Linux
            rss: ru.ru_maxrss as u64 * 1024,
            cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
            code,
        },
    ))
}

/// Most measurements per check and runner `--repeat` asks for.
pub const MAX_REPEAT: usize = 1000;

/// Extra arguments for `bench-run` (limits).
#[derive(Clone, Debug, Default)]
pub struct Bounds {
    pub max_states: Option<u64>,
    pub max_seconds: Option<f64>,
    /// Wall time after which a measured child is killed (and the bench
    /// fails); None: `DEFAULT_TIMEOUT`.
    pub timeout: Option<Duration>,
}

/// Bound of one measurement's wall time by default (`--timeout`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3600);

/// One measurement of check `name` by `runner`.
pub fn measure(
    runner: &Runner,
    name: &str,
    catalogue: &Path,
    bounds: &Bounds,
) -> Result<Sample, String> {
    match runner {
        Runner::Engine {
            engine,
            symmetry,
            threads,
        } => {
            let me = std::env::current_exe().map_err(|e| format!("bench: {e}"))?;
            let mut c = Command::new(me);
            c.arg("--catalogue")
                .arg(catalogue)
                .args(["bench-run", name, "--engine", engine]);
            c.arg(if *symmetry {
                "--symmetry"
            } else {
                "--no-symmetry"
            });
            if let Some(n) = bounds.max_states {
                c.args(["--max-states", &n.to_string()]);
            }
            if let Some(s) = bounds.max_seconds {
                c.args(["--max-seconds", &s.to_string()]);
            }
            c.args(["--threads", &threads.to_string()]);
            let (out, u) = run_measured(c, bounds.timeout.unwrap_or(DEFAULT_TIMEOUT))?;
            let v: Value = serde_json::from_str(out.trim()).map_err(|e| {
                format!(
                    "bench: {name} with {}: no result (exit {}): {e}",
                    runner.label(),
                    u.code
                )
            })?;
            let g = |k: &str| v[k].as_u64().unwrap_or(0);
            Ok(Sample {
                unique: g("unique_states"),
                total: g("total_states"),
                depth: g("max_depth"),
                complete: v["complete"].as_bool().unwrap_or(false),
                seconds: v["seconds"].as_f64().unwrap_or(0.0),
                table_bytes: g("table_bytes"),
                rss: u.rss,
                cpu: u.cpu,
            })
        }
        Runner::Binary(bin, own) => {
            let dir = tempfile::Builder::new()
                .prefix("wbspec-bench-")
                .tempdir()
                .map_err(|e| format!("bench: temporary directory: {e}"))?;
            *TEMP.lock().map_err(|_| "bench: lock poisoned")? = Some(dir.path().to_path_buf());
            let json = dir.path().join("r.json");
            let mut c = Command::new(bin);
            c.arg("--catalogue")
                .arg(own.as_deref().unwrap_or(catalogue))
                .args(["check", name, "--json"])
                .arg(&json);
            let measured = run_measured(c, bounds.timeout.unwrap_or(DEFAULT_TIMEOUT));
            let read = measured.and_then(|(_, u)| {
                std::fs::read_to_string(&json)
                    .map(|t| (t, u.rss, u.cpu))
                    .map_err(|e| {
                        format!(
                            "bench: {} check {name} wrote no report (exit {}): {e}",
                            bin.display(),
                            u.code
                        )
                    })
            });
            // the directory goes before any error returns
            drop(dir);
            *TEMP.lock().map_err(|_| "bench: lock poisoned")? = None;
            let (text, rss, cpu) = read?;
            let v: Value = serde_json::from_str(&text).map_err(|e| format!("bench: {e}"))?;
            let r = &v["checks"][0];
            let g = |k: &str| r[k].as_u64().unwrap_or(0);
            Ok(Sample {
                unique: g("unique_states"),
                total: g("total_states"),
                depth: g("max_depth"),
                complete: r["complete"].as_bool().unwrap_or(false),
                seconds: r["seconds"].as_f64().unwrap_or(0.0),
                table_bytes: 0,
                rss,
                cpu,
            })
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The medians of one (check, runner) cell.
#[derive(Clone, Debug)]
pub struct Row {
    pub check: String,
    pub runner: String,
    /// Threads of the runner's search (1 for another binary).
    pub threads: usize,
    pub unique: u64,
    pub total: u64,
    pub depth: u64,
    pub complete: bool,
    pub seconds: f64,
    pub states_per_s: f64,
    pub cpu: f64,
    pub states_per_cpu_s: f64,
    pub table_bytes_per_state: f64,
    pub rss: f64,
    pub rss_bytes_per_state: f64,
    pub repeats: usize,
    /// Median over repeats of this runner's states/s divided by the first
    /// runner's in the same repeat (wall time, and CPU time).
    pub ratio: f64,
    pub cpu_ratio: f64,
}

/// Medians of the samples of one cell; `base` are the first runner's
/// samples in the same repeats (for the ratio).
pub fn row(check: &str, runner: &Runner, s: &[Sample], base: &[Sample]) -> Row {
    let u = s.first().map_or(0, |x| x.unique);
    let rate = |x: &Sample| x.unique as f64 / x.seconds.max(1e-9);
    let crate_ = |x: &Sample| x.unique as f64 / x.cpu.max(1e-9);
    let rss = median(s.iter().map(|x| x.rss as f64).collect());
    Row {
        check: check.to_string(),
        runner: runner.label(),
        threads: match runner {
            Runner::Engine { threads, .. } => *threads,
            Runner::Binary(..) => 1,
        },
        unique: u,
        total: s.first().map_or(0, |x| x.total),
        depth: s.first().map_or(0, |x| x.depth),
        complete: s.iter().all(|x| x.complete),
        seconds: median(s.iter().map(|x| x.seconds).collect()),
        states_per_s: median(s.iter().map(rate).collect()),
        cpu: median(s.iter().map(|x| x.cpu).collect()),
        states_per_cpu_s: median(s.iter().map(crate_).collect()),
        table_bytes_per_state: median(
            s.iter()
                .map(|x| x.table_bytes as f64 / x.unique.max(1) as f64)
                .collect(),
        ),
        rss,
        rss_bytes_per_state: rss / u.max(1) as f64,
        repeats: s.len(),
        ratio: median(s.iter().zip(base).map(|(x, b)| rate(x) / rate(b)).collect()),
        cpu_ratio: median(
            s.iter()
                .zip(base)
                .map(|(x, b)| crate_(x) / crate_(b))
                .collect(),
        ),
    }
}

/// Samples of different repeats of one cell disagree on the counts: a
/// nondeterministic search (never expected).
pub fn consistent(s: &[Sample]) -> bool {
    s.windows(2)
        .all(|w| (w[0].unique, w[0].total, w[0].depth) == (w[1].unique, w[1].total, w[1].depth))
}

pub fn header() -> Vec<String> {
    vec![
        "| check | runner | unique states | transitions | depth | wall s | states/s | ratio | CPU s | states/CPU-s | CPU ratio | table B/state | peak RSS MB | RSS B/state |".into(),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|".into(),
    ]
}

pub fn line(r: &Row) -> String {
    format!(
        "| {} | {} | {}{} | {} | {} | {:.2} | {:.0} | {:.2}x | {:.2} | {:.0} | {:.2}x | {} | {:.0} | {:.1} |",
        r.check,
        r.runner,
        r.unique,
        if r.complete { "" } else { " (incomplete)" },
        r.total,
        // several threads visit in an order that varies: no DFS depth
        if r.threads > 1 {
            "n/a".to_string()
        } else {
            r.depth.to_string()
        },
        r.seconds,
        r.states_per_s,
        r.ratio,
        r.cpu,
        r.states_per_cpu_s,
        r.cpu_ratio,
        if r.table_bytes_per_state > 0.0 {
            format!("{:.1}", r.table_bytes_per_state)
        } else {
            "-".into()
        },
        r.rss / 1e6,
        r.rss_bytes_per_state
    )
}

pub fn row_json(r: &Row) -> Value {
    json!({
        "check": r.check, "runner": r.runner, "threads": r.threads,
        "unique_states": r.unique,
        "transitions": r.total, "max_depth": r.depth, "complete": r.complete,
        "median_seconds": r.seconds, "states_per_second": r.states_per_s,
        "ratio_to_first": r.ratio, "cpu_seconds": r.cpu,
        "states_per_cpu_second": r.states_per_cpu_s, "cpu_ratio_to_first": r.cpu_ratio,
        "table_bytes_per_state": r.table_bytes_per_state,
        "peak_rss_bytes": r.rss, "rss_bytes_per_state": r.rss_bytes_per_state,
        "repeats": r.repeats,
    })
}

/// `wbspec bench`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    cat: &Catalogue,
    names: &[String],
    repeat: usize,
    engines: &str,
    against: &[PathBuf],
    against_catalogue: Option<&Path>,
    bounds: &Bounds,
    json: Option<&Path>,
    out: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<u8, String> {
    if repeat == 0 || repeat > MAX_REPEAT {
        return Err(format!(
            "--repeat {repeat}: give a count from 1 to {MAX_REPEAT}"
        ));
    }
    // the children get the same bounds: refuse bad ones before any run
    crate::search::Limits::from_flags(bounds.max_states, bounds.max_seconds)?;
    if let Some(p) = json {
        crate::paths::check_output(p)?;
    }
    // before any thread starts: the signal mask is inherited
    clean_up_on_signal();
    // other binaries first: they are the baseline the ratios compare with
    let mut runners: Vec<Runner> = against
        .iter()
        .map(|b| Runner::Binary(b.clone(), against_catalogue.map(Path::to_path_buf)))
        .collect();
    for e in engines.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        // `fast+sym@2`: symmetry, two threads
        let (e, threads) = match e.split_once('@') {
            Some((x, n)) => match n.parse::<usize>() {
                Ok(k) if (1..=crate::parallel::MAX_THREADS).contains(&k) => (x, k),
                _ => {
                    return Err(format!(
                        "--engines {e}: after @ give a thread count from 1 to {}",
                        crate::parallel::MAX_THREADS
                    ))
                }
            },
            None => (e, 1),
        };
        let (engine, symmetry) = match e.strip_suffix("+sym") {
            Some(x) => (x, true),
            None => (e, false),
        };
        let parsed = Engine::parse(engine).map_err(|m| format!("--engines: {m}"))?;
        if threads > 1 && parsed != Engine::Fast {
            return Err(format!(
                "--engines {e}@{threads}: only the fast engine runs on several threads"
            ));
        }
        runners.push(Runner::Engine {
            engine: engine.to_string(),
            symmetry,
            threads,
        });
    }
    if runners.is_empty() {
        return Err("bench: no runner (--engines or --against)".into());
    }
    let names: Vec<String> = if names.is_empty() {
        DEFAULT_CHECKS.iter().map(|s| s.to_string()).collect()
    } else {
        names.to_vec()
    };
    for n in &names {
        if !cat.entries.iter().any(|e| &e.name == n) {
            return Err(format!("unknown check '{n}' (see `wbspec list`)"));
        }
    }
    let (commit, dirty) = report::commit_of_tree();
    out(&format!(
        "Bench: commit {commit}{}, {} repeats, {} online CPUs, load {}",
        if dirty { "+dirty" } else { "" },
        repeat,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split_whitespace().next().map(String::from))
            .unwrap_or_else(|| "?".into())
    ))?;
    emit_all(out, &header())?;
    let mut rows = Vec::new();
    let mut bad = 0;
    for n in &names {
        let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); runners.len()];
        for k in 0..repeat {
            for (i, r) in runners.iter().enumerate() {
                eprintln!("bench {n} {} #{}", r.label(), k + 1);
                samples[i].push(measure(r, n, &cat.dir, bounds)?);
            }
        }
        for (i, r) in runners.iter().enumerate() {
            let row = row(n, r, &samples[i], &samples[0]);
            if !consistent(&samples[i]) && bounds.max_seconds.is_none() {
                eprintln!("bench {n} {}: counts differ between repeats", r.label());
                bad += 1;
            }
            if row.unique != rows.last().map_or(row.unique, |x: &Row| x.unique)
                && i > 0
                && !matches!(r, Runner::Engine { symmetry: true, .. })
            {
                eprintln!(
                    "bench {n} {}: unique states differ from the first runner",
                    r.label()
                );
            }
            out(&line(&row))?;
            rows.push(row);
        }
    }
    if let Some(p) = json {
        let v = serde_json::json!({
            "commit": commit, "dirty": dirty, "repeats": repeat,
            "rows": rows.iter().map(row_json).collect::<Vec<_>>(),
        });
        let text = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?;
        crate::paths::write_atomic(p, (text + "\n").as_bytes())?;
    }
    Ok(if bad == 0 { 0 } else { 1 })
}

fn emit_all(out: &mut dyn FnMut(&str) -> Result<(), String>, ls: &[String]) -> Result<(), String> {
    for l in ls {
        out(l)?;
    }
    Ok(())
}
