//! The tool's promises about the files it touches, its exit codes and its
//! inputs (docs/reliability.md): each test names the defect it guards.

mod common;
use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A bound on a test's wait for a child: if the guard is still alive after
/// `limit`, the child is killed (so every read and wait on it ends) and
/// [`Deadline::check`] fails the test instead of letting it hang.
struct Deadline {
    _alive: std::sync::mpsc::Sender<()>,
    fired: std::sync::Arc<std::sync::atomic::AtomicBool>,
    what: &'static str,
    limit: Duration,
}

fn deadline(child: &std::process::Child, limit: Duration, what: &'static str) -> Deadline {
    use std::sync::atomic::{AtomicBool, Ordering};
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let fired = std::sync::Arc::new(AtomicBool::new(false));
    let (f, pid) = (fired.clone(), child.id() as i32);
    std::thread::spawn(move || {
        if rx.recv_timeout(limit) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            f.store(true, Ordering::SeqCst);
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    Deadline {
        _alive: tx,
        fired,
        what,
        limit,
    }
}

impl Deadline {
    fn fired(&self) -> bool {
        self.fired.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Fails the test if the child had to be killed; ends the guard.
    fn check(self) {
        assert!(
            !self.fired(),
            "{} did not end within {:?}",
            self.what,
            self.limit
        );
    }
}

/// `wbspec ARGS` in `dir`, killed and failed after `limit`.
fn wbspec_within(dir: &std::path::Path, args: &[&str], limit: Duration) -> std::process::Output {
    let child = Command::new(env!("CARGO_BIN_EXE_wbspec"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let d = deadline(&child, limit, "wbspec");
    let out = child.wait_with_output().unwrap();
    d.check();
    out
}

/// A check pinned by `--update-pins` in a scratch checkout.
fn pinned_checkout(text: &str) -> tempfile::TempDir {
    let d = fake_checkout(text);
    let out = wbspec_in(d.path(), &["check", "--all", "--update-pins"]);
    assert!(
        out.status.code() == Some(1) || out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // not --all: a scratch catalogue cannot observe the model's switches
    let names = check_names(d.path());
    let mut args = vec!["check"];
    args.extend(names.iter().map(String::as_str));
    let out = wbspec_in(d.path(), &args);
    assert!(out.status.success(), "{}", stdout(&out));
    d
}

fn check_names(root: &std::path::Path) -> Vec<String> {
    stdout(&wbspec_in(root, &["list"]))
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

/// Exit 2 and the error as the last line of stderr (progress lines come
/// before it).
fn last_line_error(out: &std::process::Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let last = err.trim().lines().last().unwrap_or("");
    assert!(
        last.starts_with("wbspec: ") && last.contains(needle),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// Defect: `--update-pins` inserted a second `states =` line and edited
/// multi-line arrays; with `[[ check ]]` headers it edited the next check.
#[test]
fn update_pins_keeps_the_catalogue_valid() {
    let text = format!(
        "# header comment\n[[ check ]]\nname = \"a\"\nquestion = \"q\"\nkernel = \"T\"\npages = 1\ninit_size = 1\ntasks = [\n  \"wb none\",\n  \"fsync\",\n]\nstates = 3\n\n{}",
        ONE.replace("[[check]]", "[[ check ]]")
    );
    let d = pinned_checkout(&text);
    let new = std::fs::read_to_string(d.path().join("checks/catalogue/c.toml")).unwrap();
    assert!(new.starts_with("# header comment\n"));
    assert_eq!(new.matches("\nstates =").count(), 2, "{new}");
    // the derived -bg1 twins pin into their check's `congested` table
    assert_eq!(new.matches("congested = { states =").count(), 2, "{new}");
    assert!(
        new.contains("tasks = [\n  \"wb none\",\n  \"fsync\",\n]"),
        "{new}"
    );
    assert!(new.contains("witnesses = {"), "{new}");
}

/// Defect: `--update-pins` pinned even when verdicts mismatched.
#[test]
fn update_pins_refuses_when_a_verdict_differs() {
    let d = fake_checkout(&ONE.replace("violated", "holds"));
    let before = std::fs::read_to_string(d.path().join("checks/catalogue/c.toml")).unwrap();
    let out = wbspec_in(d.path(), &["check", "--all", "--update-pins"]);
    last_line_error(&out, "--update-pins refused");
    let after = std::fs::read_to_string(d.path().join("checks/catalogue/c.toml")).unwrap();
    assert_eq!(before, after);
}

/// Defects: unpinned checks and wrong witness pins passed.
#[test]
fn unpinned_and_wrongly_pinned_checks_fail() {
    let d = fake_checkout(ONE);
    let out = wbspec_in(d.path(), &["check", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("MISMATCH unpinned"),
        "{}",
        stdout(&out)
    );
    let d = pinned_checkout(ONE);
    let f = d.path().join("checks/catalogue/c.toml");
    let text = std::fs::read_to_string(&f).unwrap();
    // a vacuously true witness would change its count: the pin catches it
    let re = text.replace("w-dio-read-checked = ", "w-dio-read-checked = 1");
    assert_ne!(re, text);
    std::fs::write(&f, re).unwrap();
    let out = wbspec_in(d.path(), &["check", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("MISMATCH pinned"), "{}", stdout(&out));
    // a reached witness that the pins do not list
    let re = text.replace("w-dio-read-checked = ", "w-quiescent = 1, w-zz-unused = ");
    std::fs::write(&f, &re).unwrap();
    one_line_error(
        &wbspec_in(d.path(), &["check", "x"]),
        "unknown witness 'w-zz-unused'",
    );
}

/// Defect: a surviving mutant exited 0.
#[test]
fn a_surviving_mutant_fails_the_run() {
    let m = r#"[[check]]
name = "m"
question = "mutant that breaks nothing here"
kernel = "T"
variant = ["mut_fsync_no_wait"]
pages = 1
init_size = 1
tasks = ["fsync"]
tags = ["mutant"]
"#;
    let d = pinned_checkout_allowing(m);
    let out = wbspec_in(d.path(), &["check", "m"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("SURVIVED: m"), "{}", stdout(&out));
}

/// A failed writeback WRITE, then fsync on one fd and close on another:
/// the kernel's contract (f1) holds, the stricter f1-close does not.
const CLOSE_EIO: &str = r#"[[check]]
name = "x"
question = "fsync then close on two fds after a failed writeback WRITE"
kernel = "T2"
pages = 1
init_size = 1
cached = [0]
dirty = [0]
daemon_threads = 2
errors = ["WRITE"]
tasks = ["wb none", "fsync", "close"]
expect = { f1-close = "intended" }
"#;

/// `expect = { p = "intended" }` is accepted only for a property stricter
/// than the kernel's contract, is printed as intended (not a plain `ok`),
/// and an intended violation kills no mutant.
#[test]
fn intended_is_only_for_properties_stricter_than_the_contract() {
    let d = pinned_checkout(CLOSE_EIO);
    let out = wbspec_in(d.path(), &["check", "x"]);
    assert!(out.status.success(), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("Check x f1-close Sometimes ")
                && l.ends_with(" ok intended (stricter than the kernel's contract, f1)")),
        "{text}"
    );
    assert!(text.contains("Check x f1 Never "), "{text}");
    assert!(text.contains("Intended: 1 expected violations"), "{text}");
    let f = d.path().join("checks/catalogue/c.toml");
    // a contract cannot be violated "as intended"
    std::fs::write(
        &f,
        CLOSE_EIO.replace("f1-close = \"intended\"", "f1 = \"intended\""),
    )
    .unwrap();
    one_line_error(
        &wbspec_in(d.path(), &["check", "x"]),
        "f1 is a kernel contract",
    );
    // a mutant whose only violation is the intended one survives
    let m = CLOSE_EIO.replace("expect =", "tags = [\"mutant\"]\nexpect =");
    let d = pinned_checkout_allowing(&m);
    let out = wbspec_in(d.path(), &["check", "x"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("SURVIVED: x"), "{}", stdout(&out));
}

/// Pins a checkout without requiring the run to pass afterwards.
fn pinned_checkout_allowing(text: &str) -> tempfile::TempDir {
    let d = fake_checkout(text);
    let _ = wbspec_in(d.path(), &["check", "--all", "--update-pins"]);
    d
}

/// Defects: `--write-traces` deleted every `*--*.json` it did not write
/// (a user's `meeting--notes.json`), and with a custom `--catalogue` it
/// removed the checkout's committed traces.
#[test]
fn trace_writing_touches_only_its_own_files() {
    let d = pinned_checkout(ONE);
    let traces = d.path().join("traces");
    std::fs::write(traces.join("meeting--notes.json"), "{}").unwrap();
    std::fs::write(traces.join("x--a1.json"), "stale").unwrap();
    std::fs::write(traces.join("other--b1.json"), "not ours").unwrap();
    // --all judges switches too (a scratch catalogue observes none: exit
    // 1); the files are what matters here
    let out = wbspec_in(d.path(), &["check", "--all", "--write-traces"]);
    assert!(stdout(&out).contains("Switch p_no_writectr UNOBSERVED"));
    let mut names: Vec<String> = std::fs::read_dir(&traces)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "meeting--notes.json",
            "other--b1.json",
            "x--b1.json",
            "x-bg1--b1.json"
        ]
    );
    // another catalogue: nothing is removed, and a traces dir is required
    let other = tmpdir();
    std::fs::copy(
        d.path().join("checks/catalogue/c.toml"),
        other.path().join("c.toml"),
    )
    .unwrap();
    let cat = other.path().to_str().unwrap();
    one_line_error(
        &wbspec_in(
            d.path(),
            &["--catalogue", cat, "check", "--all", "--write-traces"],
        ),
        "needs --traces-dir",
    );
    std::fs::write(traces.join("x--a1.json"), "stale").unwrap();
    let out = wbspec_in(
        d.path(),
        &[
            "--catalogue",
            cat,
            "check",
            "--all",
            "--write-traces",
            "--traces-dir",
            traces.to_str().unwrap(),
        ],
    );
    assert!(stdout(&out).contains("Check x b1 Sometimes"));
    assert!(
        traces.join("x--a1.json").exists(),
        "a foreign catalogue removed a file"
    );
}

/// Defect: check names were not validated (`../../escaped` wrote outside
/// the traces directory; `""` and names with spaces were accepted).
#[test]
fn check_names_are_validated() {
    for bad in ["../../escaped", "", "a b", "A"] {
        let text = ONE.replace("name = \"x\"", &format!("name = {bad:?}"));
        let d = fake_checkout(&text);
        one_line_error(&wbspec_in(d.path(), &["list"]), "check name");
    }
}

/// Defect: the default catalogue and traces were the build checkout's.
#[test]
fn defaults_come_from_the_working_directory() {
    let d = fake_checkout(ONE);
    let sub = d.path().join("checks");
    let out = wbspec_in(&sub, &["list"]);
    assert!(out.status.success());
    let s = stdout(&out);
    // the check and its derived twin under max_background 1
    assert_eq!(s.lines().count(), 2, "{s}");
    assert!(s.starts_with("x "), "{s}");
    assert!(s.contains("\nx-bg1 "), "{s}");
    let nowhere = tmpdir();
    one_line_error(&wbspec_in(nowhere.path(), &["list"]), "no wbspec checkout");
}

fn b1_trace() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(traces_dir().join("t-fopen-dio-read--b1.json")).unwrap(),
    )
    .unwrap()
}

fn replay_json(v: &Value) -> std::process::Output {
    let d = tmpdir();
    let p = d.path().join("t.json");
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    wbspec(&["replay", p.to_str().unwrap()])
}

/// Defect: replay trusted a trace's labels; a relabelled trace replayed
/// and `explain` presented it as the other check's violation.
#[test]
fn replay_rejects_relabelled_traces() {
    let mut v = b1_trace();
    v["check"] = "t2-fopen-dio-read".into();
    one_line_error(&replay_json(&v), "field config");
    let mut v = b1_trace();
    v["question"] = "something else".into();
    one_line_error(&replay_json(&v), "field question");
    let mut v = b1_trace();
    v["steps"][3]["kernel_fn"] = "inode_lock".into();
    one_line_error(&replay_json(&v), "field steps[4].kernel_fn");
    let mut v = b1_trace();
    v["explorer_fragment"] = "#/steps/0".into();
    one_line_error(&replay_json(&v), "field explorer_fragment");
    let mut v = b1_trace();
    v["check"] = "no-such-check".into();
    one_line_error(&replay_json(&v), "no check 'no-such-check'");
}

/// Defect: an action naming an actor that does not exist panicked.
#[test]
fn replay_rejects_impossible_actors_without_panicking() {
    let mut v = b1_trace();
    v["actions"][0]["actor"] = serde_json::json!({"Task": 200});
    one_line_error(&replay_json(&v), "is not enabled");
    let mut v = b1_trace();
    v["actions"][0]["actor"] = serde_json::json!({"Daemon": 9});
    one_line_error(&replay_json(&v), "is not enabled");
    let mut v = b1_trace();
    v["actions"][0] = serde_json::json!({"actor": "nobody"});
    one_line_error(&replay_json(&v), "not an action");
}

/// Defect: `wbspec list | head -1` panicked on the closed pipe.
#[test]
fn a_closed_stdout_ends_quietly() {
    // more output than a pipe holds (64 KiB), so a write meets the closed
    // pipe
    let mut text = String::new();
    for i in 0..3000 {
        text.push_str(&ONE.replace("name = \"x\"", &format!("name = \"x{i}\"")));
    }
    let d = fake_checkout(&text);
    let mut child = Command::new(env!("CARGO_BIN_EXE_wbspec"))
        .args(["list"])
        .current_dir(d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let d = deadline(&child, Duration::from_secs(60), "wbspec list");
    let mut line = String::new();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with("x0 ") || d.fired(), "{line}");
    drop(r); // the reader is gone now
    let out = child.wait_with_output().unwrap();
    d.check();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty(), "{err}");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}", out.status);
}

/// Defect: stdout on a full device panicked.
#[test]
fn a_full_device_is_a_one_line_error() {
    // Linux always has /dev/full
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = Command::new(env!("CARGO_BIN_EXE_wbspec"))
        .args(["list"])
        .current_dir(repo_root())
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    one_line_error(&out, "standard output");
}

/// Defect: a FIFO named *.toml hung the loader.
#[test]
fn a_fifo_in_the_catalogue_does_not_hang() {
    let d = fake_checkout(ONE);
    let fifo = d.path().join("checks/catalogue/z.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let out = wbspec_within(d.path(), &["list"], Duration::from_secs(10));
    one_line_error(&out, "not a regular file");
}

/// Defect: the Explorer served its UI from a predictable /tmp directory
/// that was never removed.
#[test]
fn explore_removes_its_private_directory() {
    let tmp = tmpdir();
    let mut child = Command::new(env!("CARGO_BIN_EXE_wbspec"))
        .args(["explore", "t-fopen-dio-read", "--port", "0"])
        .current_dir(repo_root())
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let guard = deadline(&child, Duration::from_secs(60), "explore's first line");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.starts_with("http://127.0.0.1:") || guard.fired(),
        "{line}"
    );
    guard.check();
    let dirs: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(dirs.len(), 1, "one private directory while serving");
    let d = dirs[0].as_ref().unwrap().path();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&d).unwrap().permissions().mode() & 0o777,
        0o700
    );
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("explore did not end on SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!d.exists(), "private directory left behind");
}

/// A check's `congested` table is validated: unknown keys, a check that
/// sets the queue bound itself (no twin), and a bad value are one-line
/// errors; a declared verdict becomes the twin's expectation.
#[test]
fn congested_tables_are_validated() {
    for (extra, needle) in [
        ("congested = { nope = 1 }\n", "unknown key `nope`"),
        (
            "max_background = 2\ncongested = { states = 3 }\n",
            "no congested twin",
        ),
        ("congested = 3\n", "`congested` is a table"),
        (
            "congested = { expect = { zz = \"holds\" } }\n",
            "unknown property 'zz'",
        ),
        ("max_background = 0\n", "max_background must be at least 1"),
    ] {
        let d = fake_checkout(&format!("{ONE}{extra}"));
        one_line_error(&wbspec_in(d.path(), &["list"]), needle);
    }
    let d = fake_checkout(&format!(
        "{ONE}congested = {{ expect = {{ b1 = \"holds\" }} }}\n"
    ));
    let out = wbspec_in(d.path(), &["check", "x-bg1"]);
    // the twin violates b1 like x, against its declared expectation
    assert!(
        stdout(&out).contains("Check x-bg1 b1 Sometimes")
            && stdout(&out).contains("MISMATCH expected holds"),
        "{}",
        stdout(&out)
    );
}

/// Defect: `.ci/run` ran `bash .ci/setup && cargo test …` under `set -e`;
/// bash does not stop on a failed non-final command of an && list, so a
/// failed setup ran no test and CI exited 0. Runs a copy of `.ci/run` with
/// a failing (then passing) setup and a `cargo` on PATH that records its
/// arguments; and the README's test command is `.ci/run`'s two steps.
#[test]
fn ci_run_stops_on_a_failed_setup_and_runs_every_suite() {
    use std::os::unix::fs::PermissionsExt;
    let d = tmpdir();
    let ci = d.path().join(".ci");
    let bin = d.path().join("bin");
    std::fs::create_dir_all(&ci).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    let run = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    std::fs::write(ci.join("run"), &run).unwrap();
    let args = d.path().join("cargo-args");
    let cargo = bin.join("cargo");
    std::fs::write(
        &cargo,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n", args.display()),
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let ci_run = |setup_status: i32| {
        std::fs::write(ci.join("setup"), format!("exit {setup_status}\n")).unwrap();
        let _ = std::fs::remove_file(&args);
        let out = Command::new("bash")
            .arg(ci.join("run"))
            .env("PATH", &path)
            .output()
            .unwrap();
        (out.status.code(), std::fs::read_to_string(&args).ok())
    };
    // setup fails: no cargo, and a failure
    let (code, called) = ci_run(3);
    assert_eq!((code, called), (Some(3), None));
    // setup passes: cargo test once, every suite, its failure is CI's
    let (code, called) = ci_run(0);
    assert_eq!(code, Some(1));
    let called = called.expect("cargo was run");
    assert_eq!(
        called.trim(),
        "test --release --workspace --no-fail-fast",
        "{called}"
    );
    // the README's command is the same two steps
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let steps: Vec<&str> = run
        .lines()
        .filter(|l| l.starts_with("bash .ci/setup") || l.starts_with("cargo test"))
        .collect();
    assert_eq!(steps.len(), 2, "{run}");
    assert!(
        readme.contains(&format!("    {}\n", steps.join(" && "))),
        "README's test command differs from .ci/run's steps {steps:?}"
    );
}
