//! The `conform` command line: options (range-checked before anything
//! runs), what each scenario declares about the model, how a verdict is
//! judged against that declaration, and the exit code
//! (docs/conformance.md §4).
use super::*;
use crate::scenario_kit::{Outside, Scenario};

/// Most random workloads one `conform --random N` runs.
pub const MAX_RANDOM: u64 = 10_000;

/// What the options ask for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Opts {
    pub names: Vec<String>,
    pub keep: Option<std::path::PathBuf>,
    pub trace: Option<std::path::PathBuf>,
    /// `--scenario NAME`: a known scenario.
    pub scenario: Option<String>,
    /// `--label TEXT`: a free label, printed as `label:TEXT`.
    pub label: Option<String>,
    pub verbose: bool,
    /// `--random N [--seed S]`: (N, S); seeds S..=S+N-1 all exist.
    pub random: Option<(u64, u64)>,
    /// `--length L` with `--random`: long plans of L modelled syscalls.
    pub length: Option<usize>,
    pub allow_not_modelled: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    Help,
    Run(Opts),
}

fn known_scenario(name: &str) -> bool {
    crate::scenarios::all().iter().any(|s| s.name == name)
        || name.strip_prefix("rand_").is_some_and(|s| {
            let canon = |x: &str| x.parse::<u64>().is_ok_and(|n| n.to_string() == x);
            match s.split_once('_') {
                None => canon(s),
                Some((seed, len)) => {
                    canon(seed)
                        && canon(len)
                        && len
                            .parse::<usize>()
                            .is_ok_and(|l| (MIN_LENGTH..=crate::random::MAX_LENGTH).contains(&l))
                }
            }
        })
}

/// Shortest long plan (`--length`): longer than the model's tasks.
const MIN_LENGTH: usize = 9;

fn count(opt: &str, v: Option<&String>, lo: u64, hi: u64) -> Result<u64, String> {
    let v = v.ok_or(format!("{opt} needs a number {lo}..={hi}"))?;
    match v.parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!("{opt} {v:?} is not a number {lo}..={hi}")),
    }
}

/// Parse the arguments after `conform`; `Err` is a usage error (one line,
/// exit 2), found before anything runs.
pub fn parse_args(args: &[String]) -> Result<Parsed, String> {
    let mut o = Opts::default();
    let (mut random, mut seed) = (None, None);
    let mut it = args.iter();
    let mut seen: Vec<&str> = vec![];
    while let Some(a) = it.next() {
        // an option given twice is refused, not silently the last
        const ONCE: &[&str] = &[
            "--keep-traces",
            "--trace",
            "--scenario",
            "--label",
            "--random",
            "--seed",
            "--length",
        ];
        if ONCE.contains(&a.as_str()) {
            if seen.contains(&a.as_str()) {
                return Err(format!("{a} is given twice"));
            }
            seen.push(a);
        }
        match a.as_str() {
            "--keep-traces" => {
                o.keep = Some(it.next().ok_or("--keep-traces needs DIR")?.into());
            }
            "--trace" => o.trace = Some(it.next().ok_or("--trace needs FILE")?.into()),
            "--scenario" => {
                let s = it.next().ok_or("--scenario needs NAME")?;
                if !known_scenario(s) {
                    return Err(format!(
                        "--scenario {s:?} is not a known scenario (`conform --help` lists them; --label TEXT names a trace freely)"
                    ));
                }
                o.scenario = Some(s.clone());
            }
            "--label" => {
                let s = it.next().ok_or("--label needs TEXT")?;
                if s.is_empty() || s.len() > 64 || !s.chars().all(|c| c.is_ascii_graphic()) {
                    return Err(format!(
                        "--label {s:?} must be 1 to 64 printable characters without spaces"
                    ));
                }
                o.label = Some(s.clone());
            }
            "--random" => random = Some(count("--random", it.next(), 1, MAX_RANDOM)?),
            "--seed" => seed = Some(count("--seed", it.next(), 0, u64::MAX)?),
            "--length" => {
                o.length = Some(count(
                    "--length",
                    it.next(),
                    MIN_LENGTH as u64,
                    crate::random::MAX_LENGTH as u64,
                )? as usize)
            }
            "--allow-not-modelled" => o.allow_not_modelled = true,
            "--verbose" | "-v" => o.verbose = true,
            "-h" | "--help" => return Ok(Parsed::Help),
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            s => {
                if !crate::scenarios::all().iter().any(|x| x.name == s) {
                    return Err(format!(
                        "unknown scenario {s} (`conform --help` lists them)"
                    ));
                }
                o.names.push(s.to_string());
            }
        }
    }
    if seed.is_some() && random.is_none() {
        return Err("--seed goes with --random".into());
    }
    if o.length.is_some() && random.is_none() {
        return Err("--length goes with --random".into());
    }
    if let Some(n) = random {
        let s = seed.unwrap_or(1);
        if s.checked_add(n - 1).is_none() {
            return Err(format!(
                "--random {n} --seed {s} would run seeds past {} (the last seed is S+N-1)",
                u64::MAX
            ));
        }
        if o.trace.is_some() || !o.names.is_empty() {
            return Err("--random takes no scenario names and no --trace".into());
        }
        o.random = Some((n, s));
    }
    if o.scenario.is_some() && o.label.is_some() {
        return Err("--scenario and --label exclude each other".into());
    }
    if o.trace.is_some() {
        if !o.names.is_empty() || o.keep.is_some() {
            return Err("--trace takes no scenario names and no --keep-traces".into());
        }
    } else if o.scenario.is_some() || o.label.is_some() {
        return Err("--scenario and --label only go with --trace".into());
    }
    Ok(Parsed::Run(o))
}

/// The help text: the options and every scenario with what it declares
/// (from the scenario table).
pub fn help_text() -> String {
    let mut s = String::from(
        "usage: conform [SCENARIO...] [--keep-traces DIR] [--allow-not-modelled] [--verbose]
       conform --random N [--seed S] [--length L] [--keep-traces DIR] [--allow-not-modelled] [--verbose]
       conform --trace FILE [--scenario NAME | --label TEXT] [--allow-not-modelled] [--verbose]

Runs each scenario against a fresh FUSE mount (root and /dev/fuse) and
checks that its recorded trace is a behaviour of the model; or checks one
recorded trace (docs/conformance.md).

options:
  SCENARIO...           run these scenarios (default: all below)
  --keep-traces DIR     copy each recorded trace to DIR/<scenario>.jsonl
  --random N            run seeded random workloads rand_S..rand_S+N-1 (N 1..=10000)
  --length L            with --random: L modelled syscalls each (9..=100000),
                        scenario rand_<seed>_<L>
  --seed S              first seed of --random (0..=18446744073709551615, default 1;
                        S+N-1 must not pass it)
  --trace FILE          check a recorded trace (no root needed)
  --scenario NAME       the trace is of scenario NAME (a name below, rand_<seed> or
                        rand_<seed>_<L>); judged against its declaration
  --label TEXT          a free name for the trace, printed as label:TEXT; not judged
                        against any declaration
  --allow-not-modelled  accept traces not modelled that no declaration covers
  --verbose, -v         print the mapping of every trace
  --help, -h            this text

exit: 0 every trace behaves as its scenario declares (conforms, or is outside
the model for the declared reason) and every kernel check passed; 1 a
difference (a trace does not conform, is inconclusive, or is not as
declared; a kernel check failed); 2 bad input; 3 a trace no declaration
covers is not modelled (0 with --allow-not-modelled); 77 nothing run (no
root or /dev/fuse); 130/143 interrupted (SIGINT/SIGTERM; the mount is
removed).

scenarios (the table in harness/src/scenarios*.rs):
",
    );
    for sc in crate::scenarios::all() {
        let d = match (&sc.outside, &sc.if_evicted) {
            (None, None) => "conforms".to_string(),
            (None, Some(o)) => format!(
                "conforms; after an eviction (READs in its trace) it may be outside the model: {}",
                o.reason
            ),
            (Some(o), _) => format!("outside the model: {}", o.reason),
        };
        s += &format!("  {:<22} {d}\n", sc.name);
    }
    s.trim_end().to_string()
}

/// What a scenario's definition declares about its trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Declared {
    /// Its trace conforms.
    Conforms,
    /// Its trace is not modelled, for this reason.
    Outside(Outside),
    /// Its trace shows an eviction (`Scenario::if_evicted`): it conforms,
    /// or is not modelled for this reason.
    ConformsOrOutside(Outside),
    /// No declaration covers the trace: a random workload, a free label,
    /// a kernel with no model state, or a state the scenario was not
    /// written for (its `expect_on`).
    Nothing,
}

/// What `name`'s definition declares about this trace.
pub fn declared(name: &str, events: &[Event]) -> Declared {
    let kernel = events
        .first()
        .and_then(|h| h.kernel.as_deref())
        .unwrap_or("");
    let Some(state) = crate::kernels::state_of(kernel) else {
        return Declared::Nothing;
    };
    // A declaration is about the states the scenario was written for
    // (Scenario::expect_on); on another state nothing is declared: a
    // trace that conforms counts as conforming, one the model cannot
    // express as not modelled, a violation as a difference.
    let sc = crate::scenarios::all().into_iter().find(|s| s.name == name);
    if sc
        .as_ref()
        .is_some_and(|s| !s.expect_on.contains(&state.state.as_str()))
    {
        return Declared::Nothing;
    }
    match sc {
        Some(Scenario {
            outside: None,
            if_evicted: Some(o),
            ..
        }) if crate::scenario_kit::evicted(events) => Declared::ConformsOrOutside(o),
        Some(Scenario { outside: None, .. }) => Declared::Conforms,
        Some(Scenario {
            outside: Some(o), ..
        }) => Declared::Outside(o),
        None => Declared::Nothing,
    }
}

/// A verdict judged against its declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judged {
    /// Conforms, or outside the model as declared.
    AsDeclared,
    /// Does not conform, or not as declared (why).
    Difference(String),
    /// Not modelled (or only to a cut), and no declaration covers it.
    NotModelled,
}

/// Judge a verdict against what the scenario declares.
pub fn judge(c: &Conformance, d: &Declared) -> Judged {
    match (c.class, d) {
        (Class::DoesNotConform, _) => Judged::Difference(c.word.clone()),
        (Class::Conforms, Declared::Outside(o)) => Judged::Difference(format!(
            "declared outside the model ({}), but it conforms",
            o.reason
        )),
        (Class::Conforms, _) => Judged::AsDeclared,
        (Class::NotModelled, Declared::ConformsOrOutside(o)) if c.word.contains(o.because) => {
            Judged::AsDeclared
        }
        (_, Declared::ConformsOrOutside(o)) => Judged::Difference(format!(
            "declared conforming, or not modelled because of {:?} after an eviction, but not modelled for another reason",
            o.because
        )),
        (_, Declared::Conforms) => {
            Judged::Difference("declared conforming, but not modelled".into())
        }
        (Class::NotModelled, Declared::Outside(o)) if c.word.contains(o.because) => {
            Judged::AsDeclared
        }
        (_, Declared::Outside(o)) => Judged::Difference(format!(
            "declared outside the model because of {:?}, but not modelled for another reason",
            o.because
        )),
        (_, Declared::Nothing) => Judged::NotModelled,
    }
}

/// Tally of a run.
#[derive(Default)]
struct Tally {
    conform: usize,
    outside: usize,
    not_modelled: usize,
    failed: usize,
    skipped: usize,
}

impl Tally {
    /// Print the Conform line of one trace and count it (`kernel`:
    /// `pass`, `n/a`, or `FAIL(check)`: a scenario counts as failed once,
    /// for its kernel check or its trace).
    fn add(&mut self, name: &str, kernel: &str, c: Conformance, d: &Declared, verbose: bool) {
        let j = judge(&c, d);
        if kernel.starts_with("FAIL") && !matches!(j, Judged::Difference(_)) {
            self.failed += 1;
        }
        let tail = match (&j, c.class) {
            (Judged::AsDeclared, Class::Conforms) => {
                self.conform += 1;
                String::new()
            }
            (Judged::AsDeclared, _) => {
                self.outside += 1;
                " as-declared".into()
            }
            (Judged::NotModelled, _) => {
                self.not_modelled += 1;
                String::new()
            }
            (Judged::Difference(_), Class::DoesNotConform) => {
                self.failed += 1;
                String::new()
            }
            (Judged::Difference(why), _) => {
                self.failed += 1;
                format!(" DIFFERENCE: {why}")
            }
        };
        println!("Conform {name} kernel={kernel} model={}{tail}", c.word);
        let failed = c.class == Class::DoesNotConform;
        if let Some(d) = c.detail.filter(|_| verbose || failed) {
            println!("{}", d.lines().skip(1).collect::<Vec<_>>().join("\n"));
        }
    }

    /// The exit code (`summary`: print the summary line first).
    fn code(&self, allow_nm: bool, summary: bool) -> i32 {
        if summary {
            println!(
                "{} conform, {} outside the model as declared, {} not modelled, {} failed",
                self.conform, self.outside, self.not_modelled, self.failed
            );
        }
        if self.failed > 0 {
            exit::DOES_NOT_CONFORM
        } else if self.not_modelled > 0 && !allow_nm {
            eprintln!(
                "conform: {} trace(s) not modelled that no declaration covers (exit {}; --allow-not-modelled accepts them)",
                self.not_modelled,
                exit::NOT_MODELLED
            );
            exit::NOT_MODELLED
        } else if self.skipped > 0 {
            exit::SKIPPED
        } else {
            exit::CONFORMS
        }
    }
}

/// `conform` (args after the subcommand): see [`help_text`]. Returns an
/// [`exit`] code.
pub fn conform_main(args: &[String]) -> i32 {
    let o = match parse_args(args) {
        Ok(Parsed::Help) => {
            println!("{}", help_text());
            return exit::CONFORMS;
        }
        Ok(Parsed::Run(o)) => o,
        Err(e) => {
            eprintln!("conform: {e} (try --help)");
            return exit::BAD_INPUT;
        }
    };
    if let Some(f) = &o.trace {
        return one_trace(f, &o);
    }
    if let Some(why) = crate::runner::cannot_run() {
        println!("Conform skipped: {why}");
        eprintln!("conform: nothing was run ({why}; exit {})", exit::SKIPPED);
        return exit::SKIPPED;
    }
    let recorder = match crate::runner::find_recorder() {
        Some(r) => r,
        None => {
            eprintln!("conform: fuse-recorder not found next to this binary (build it: cargo build --release -p wbspec-harness, or set WBSPEC_FUSE_RECORDER)");
            return exit::BAD_INPUT;
        }
    };
    // SIGINT / SIGTERM: unmount and remove what the run made, then exit
    crate::interrupt::install();
    let mut opts = crate::runner::RunOptions::new(recorder);
    opts.keep_traces = o.keep.clone();
    if let Some(l) = o.length {
        // a long plan: 20 s, plus 50 ms a syscall (a race waits two
        // settle times; a syscall on this machine takes about 1 ms)
        opts.scenario_deadline += std::time::Duration::from_millis(50 * l as u64);
    }
    let mut t = Tally::default();
    let mut each = |r: &crate::runner::Outcome| {
        if r.outcome == "skipped" {
            t.skipped += 1;
            println!(
                "Conform {} skipped: {}",
                r.name,
                r.detail.as_deref().unwrap_or("")
            );
            return;
        }
        // `n/a`: the kernel checks were recorded, not asserted (a kernel
        // whose state the scenario's checks were not written for).
        let kernel = if r.outcome == "pass" && r.asserted {
            "pass".to_string()
        } else if r.outcome == "pass" {
            "n/a".to_string()
        } else {
            format!("FAIL({})", r.failed_check.as_deref().unwrap_or("?"))
        };
        let c = conform_trace(&r.trace, Some(&r.name)).unwrap_or_else(|e| Conformance {
            word: format!("ERROR ({e})"),
            class: Class::DoesNotConform,
            detail: None,
        });
        let d = declared(&r.name, &r.trace);
        t.add(&r.name, &kernel, c, &d, o.verbose);
    };
    match o.random {
        // seeded random workloads: seeds S..=S+N-1 (parse_args checked
        // that they exist); a line names each seed (rand_<seed>)
        Some((n, s0)) => {
            for i in 0..n {
                let sc = crate::random::scenario(s0 + i, o.length);
                each(&crate::runner::run_one(&sc, &opts));
            }
        }
        None => {
            crate::runner::run_suite(&o.names, &opts, each);
        }
    }
    // a signal's code wins over the run's (interrupt.rs)
    crate::interrupt::finish(t.code(o.allow_not_modelled, true))
}

/// `conform --trace FILE`.
fn one_trace(f: &std::path::Path, o: &Opts) -> i32 {
    let events = match crate::trace::read_trace_file(f).and_then(|t| crate::trace::parse_trace(&t))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("conform: {}: {e}", f.display());
            return exit::BAD_INPUT;
        }
    };
    let in_header = events.first().and_then(|h| h.scenario.clone());
    if let (Some(s), Some(h)) = (&o.scenario, &in_header) {
        if s != h {
            eprintln!(
                "conform: {}: the trace header names scenario {h:?}, not {s:?}",
                f.display()
            );
            return exit::BAD_INPUT;
        }
    }
    // the name printed and the declaration judged against
    let (name, decl) = match (&o.label, o.scenario.clone().or(in_header)) {
        (Some(l), _) => (format!("label:{l}"), Declared::Nothing),
        (None, Some(s)) => {
            let d = declared(&s, &events);
            (s.escape_debug().to_string(), d)
        }
        (None, None) => (
            format!("label:{}", f.display().to_string().escape_debug()),
            Declared::Nothing,
        ),
    };
    match conform_trace(&events, o.scenario.as_deref()) {
        Ok(c) => {
            let mut t = Tally::default();
            t.add(&name, "n/a", c, &decl, o.verbose);
            t.code(o.allow_not_modelled, false)
        }
        Err(e) => {
            eprintln!("conform: {}: {e}", f.display());
            exit::BAD_INPUT
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--scenario` takes the names `conform --random` gives, and only
    /// those: canonical numbers, a length `--length` accepts.
    #[test]
    fn random_scenario_names() {
        let max = crate::random::MAX_LENGTH;
        for ok in ["rand_0", "rand_1", "rand_1_9", &format!("rand_7_{max}")] {
            assert!(known_scenario(ok), "{ok}");
        }
        for bad in [
            "rand_",
            "rand__9",
            "rand_1_",
            "rand_01",
            "rand_01_9",
            "rand_1_09",
            "rand_1_8",
            "rand_1_0",
            "rand_+1",
            "rand_1_9_9",
            "rand_18446744073709551616",
            &format!("rand_1_{}", max + 1),
        ] {
            assert!(!known_scenario(bad), "{bad}");
        }
        assert!(help_text().contains("rand_<seed>_<L>); judged"));
    }
}
