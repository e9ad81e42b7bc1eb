//! The `wbspec-harness` command's exit codes (docs/conformance.md §4):
//! 0 as declared, 1 a difference, 2 bad input, 3 not modelled and not
//! declared (0 with `--allow-not-modelled`), 77 skipped; and a closed
//! standard output.
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use wbspec_harness::conform::exit;
use wbspec_harness::trace::{parse_trace, Event};

const BIN: &str = env!("CARGO_BIN_EXE_wbspec-harness");

fn traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces")
}

fn conform(file: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .arg("conform")
        .arg("--trace")
        .arg(file)
        .args(extra)
        .output()
        .expect("run wbspec-harness")
}

fn code(o: &Output) -> i32 {
    o.status
        .code()
        .unwrap_or_else(|| panic!("killed: {:?}", o.status))
}

/// A recorded trace, changed by `f`, with `seq` renumbered in file order,
/// written to a file in `dir`.
fn altered(dir: &Path, name: &str, f: impl FnOnce(&mut Vec<Event>)) -> PathBuf {
    let text = std::fs::read_to_string(traces().join("6.18.44").join(name)).unwrap();
    let mut ev = parse_trace(&text).unwrap();
    f(&mut ev);
    for (i, e) in ev.iter_mut().enumerate().skip(1) {
        e.seq = i as u64;
    }
    let p = dir.join(name);
    let lines: Vec<String> = ev.iter().map(Event::to_line).collect();
    std::fs::write(&p, lines.join("\n")).unwrap();
    p
}

#[test]
fn conform_trace_exit_codes() {
    let t = traces();
    let o = conform(&t.join("6.18.44/b_ftrunc.jsonl"), &[]);
    assert_eq!(code(&o), exit::CONFORMS, "{o:?}");
    let o = conform(&t.join("altered/k_flush_early.jsonl"), &[]);
    assert_eq!(code(&o), exit::DOES_NOT_CONFORM, "{o:?}");
    // bad input: one line on stderr, nothing on stdout
    for f in ["altered/d3_schema_2.jsonl", "altered/b_ftrunc_no_ret.jsonl"] {
        let o = conform(&t.join(f), &[]);
        assert_eq!(code(&o), exit::BAD_INPUT, "{f}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{f}: {err}");
        assert!(
            o.stdout.is_empty() && !err.contains("panicked"),
            "{f}: {err}"
        );
    }
    // outside the model as their scenarios declare: 0, saying so
    for f in ["6.18.44/n_copy_range.jsonl", "6.18.44/r_short_read.jsonl"] {
        let o = conform(&t.join(f), &[]);
        assert_eq!(code(&o), exit::CONFORMS, "{f}: {o:?}");
        assert!(String::from_utf8_lossy(&o.stdout).contains("as-declared"));
    }
    // not modelled where no declaration covers the trace (a free label):
    // 3, or 0 when allowed; never a silent 0
    for f in [
        "6.18.44/n_copy_range.jsonl",
        "6.18.44/r_short_read.jsonl",
        "altered/b_ftrunc_written_short.jsonl",
    ] {
        let o = conform(&t.join(f), &["--label", "x"]);
        assert_eq!(code(&o), exit::NOT_MODELLED, "{f}: {o:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("not modelled"));
        let o = conform(&t.join(f), &["--label", "x", "--allow-not-modelled"]);
        assert_eq!(code(&o), exit::CONFORMS, "{f}: {o:?}");
    }
    // a trace of a scenario declared conforming that is not modelled is a
    // difference, also with --allow-not-modelled
    for extra in [&[][..], &["--allow-not-modelled"][..]] {
        let o = conform(&t.join("altered/b_ftrunc_written_short.jsonl"), extra);
        assert_eq!(code(&o), exit::DOES_NOT_CONFORM, "{o:?}");
        assert!(String::from_utf8_lossy(&o.stdout)
            .contains("DIFFERENCE: declared conforming, but not modelled"));
    }
    // --allow-not-modelled does not hide a violation or bad input
    let o = conform(
        &t.join("altered/k_flush_early.jsonl"),
        &["--allow-not-modelled"],
    );
    assert_eq!(code(&o), exit::DOES_NOT_CONFORM);
}

/// A trace argument that is not a regular file, or too large, is bad
/// input at once: a FIFO without a writer does not block.
#[test]
fn trace_files_must_be_regular_and_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("t.jsonl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let big = dir.path().join("big.jsonl");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(wbspec_harness::trace::MAX_TRACE_BYTES + 1)
        .unwrap();
    for (p, says) in [
        (fifo, "not a regular file"),
        (dir.path().to_path_buf(), "not a regular file"),
        (big, "a trace may have"),
        (dir.path().join("missing"), "No such file"),
    ] {
        // bounded: a reader that blocks on the FIFO is killed (our child)
        let mut child = Command::new(BIN)
            .args(["conform", "--trace"])
            .arg(&p)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if t0.elapsed() > std::time::Duration::from_secs(5) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("conform --trace {} blocked", p.display());
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), exit::BAD_INPUT, "{err}");
        assert!(
            err.contains(says) && err.trim().lines().count() == 1,
            "{err}"
        );
    }
}

/// Every trace the mapping classes as not modelled never exits 0: a
/// header-only trace, an unknown kernel, an error reply other than -EIO,
/// an unknown request; 3 under a free label, 1 (a difference) as a
/// scenario declared conforming.
#[test]
fn not_modelled_traces_never_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            altered(d, "b_ftrunc.jsonl", |ev| ev.truncate(1)),
            "no modelled syscall",
        ),
        (
            altered(d, "b_path.jsonl", |ev| {
                ev[0].kernel = Some("6.17.0".into());
            }),
            "kernel 6.17.0 has no model state",
        ),
        (
            altered(d, "h_crop.jsonl", |ev| {
                let r = ev
                    .iter_mut()
                    .find(|e| e.ev == "reply" && e.op.as_deref() == Some("SETATTR"))
                    .unwrap();
                r.result = Some(serde_json::json!({"errno": 28, "error": "ENOSPC"}));
            }),
            "this error reply is not modelled",
        ),
        (
            altered(d, "k_fsync_held.jsonl", |ev| {
                let at = ev.len() - 1;
                // the next unique (a gap would be "not recorded")
                let u = ev.iter().filter_map(|e| e.unique).max().unwrap() + 2;
                let mut q = Event::new("req");
                q.unique = Some(u);
                q.op = Some("IOCTL".into());
                q.nodeid = Some(2);
                q.pid = Some(1);
                let mut r = Event::new("reply");
                r.unique = Some(u);
                r.op = Some("IOCTL".into());
                r.result = Some(serde_json::json!({}));
                ev.insert(at, r);
                ev.insert(at, q);
            }),
            "request IOCTL is not modelled",
        ),
    ];
    for (p, why) in cases {
        // under a free label: not modelled, exit 3
        let o = conform(&p, &["--label", "altered"]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(code(&o), exit::NOT_MODELLED, "{why}: {out}");
        assert!(out.contains(why), "{out} (expected {why})");
        // as the scenario its header names (declared conforming): a
        // difference, except on a kernel no declaration is for
        let o = conform(&p, &[]);
        let want = if why.contains("no model state") {
            exit::NOT_MODELLED
        } else {
            exit::DOES_NOT_CONFORM
        };
        assert_eq!(code(&o), want, "{why}: {o:?}");
    }
}

/// `conform` (the live suite) and `run` without root or /dev/fuse run
/// nothing and say so with exit 77, never 0. As root they run as nobody.
#[test]
fn without_root_is_skipped_not_passed() {
    for (sub, says) in [
        ("conform", "Conform skipped: needs root and /dev/fuse"),
        ("run", "Scenario b_ftrunc skipped: needs root and /dev/fuse"),
    ] {
        let o = unprivileged().arg(sub).output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(code(&o), exit::SKIPPED, "{sub}: {out} {o:?}");
        assert!(out.contains(says), "{sub}: {out}");
    }
}

/// This binary without root: as nobody when the tests run as root.
fn unprivileged() -> Command {
    if wbspec_harness::sys::is_root() {
        let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("setpriv (util-linux) to drop root for this test");
        let mut c = Command::new(setpriv);
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(BIN);
        c
    } else {
        Command::new(BIN)
    }
}

/// A closed standard output ends the command quietly (SIGPIPE), without a
/// panic.
#[test]
fn closed_stdout_is_not_a_panic() {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(r);
    let o = Command::new(BIN)
        .arg("list")
        .stdout(Stdio::from(w))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        o.status.signal(),
        Some(libc::SIGPIPE),
        "{:?} {err}",
        o.status
    );
}
