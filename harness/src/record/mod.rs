//! `wbspec record --trace OUT [SERVER OPTIONS] -- CMD ARGS...`: record any
//! program's file I/O on the recording FUSE server, as a trace `wbspec
//! conform --trace OUT` checks (docs/record.md).
//!
//! The server is started as every scenario's is ([`crate::runner::serve`]:
//! same mount, same options unless SERVER OPTIONS change them), CMD runs
//! with its working directory on the mount and `{mnt}` in ARGS replaced by
//! the mount path, traced by [`tracer`]; [`decode`] says which syscalls
//! are on files of the mount and what their marks say; [`proc`] reads the
//! tracee without touching the mount.
//!
//! Exit status: CMD's (128 + N when signal N ended it), 2 when the
//! recording failed or the input is bad (one line `wbspec: ...`), 128 +
//! N when SIGINT/SIGTERM interrupted the recording (CMD is killed and the
//! trace up to then is written). The trace is published only when the
//! recording did not fail: written next to OUT and renamed onto it with
//! RENAME_NOREPLACE, so OUT is never replaced.
pub mod decode;
pub mod proc;
pub mod segs;
pub mod tracer;

use std::path::{Path, PathBuf};

use crate::server::ServerConfig;

pub const USAGE: &str = "usage: wbspec record --trace OUT [--no-wbc] [--keep-cache] [--atomic-o-trunc] [--dio-allow-mmap] [--no-dio-on-odirect] [--parallel-dio] [--max-write B] [--max-bg N] [--cong N] -- CMD [ARGS...]   ({mnt} in ARGS is the mount)";

/// The note `wbspec record` writes before CMD runs: every thread and
/// every process CMD's processes make has a mark (`thread`, `thread
/// vm`, `fork`, `fork ... vm`, `thread untraced=...`; decode.rs), so
/// conform can count the threads that may touch a mapping (envmap.rs).
/// (Recordings of the first hours of 3 Dec 2026 carry an older note,
/// "marks: every thread and every child sharing memory", written before
/// forks without mount fds were marked: conform bounds nothing there.)
pub const THREADS_NOTE: &str = "marks: every thread and every process made";

/// The note `wbspec record` writes after CMD ends: the mount's bdi's
/// read_ahead_kb then (`bdi read_ahead_kb=N`).
pub const READ_AHEAD_NOTE: &str = "bdi read_ahead_kb=";

/// /sys/class/bdi/MAJ:MIN/read_ahead_kb of the file system at `mnt` (a
/// FUSE bdi is named by the superblock's device: super_setup_bdi_name
/// "%u:%u%s"). The device comes from /proc/self/mountinfo: a stat of
/// the mount would send the server a GETATTR outside every call.
fn read_ahead_kb(mnt: &Path) -> Option<u64> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = mnt.to_string_lossy().replace(' ', "\\040");
    let dev = info.lines().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        (f.get(4) == Some(&want.as_str())).then(|| f.get(2).map(|d| d.to_string()))?
    })?;
    std::fs::read_to_string(format!("/sys/class/bdi/{dev}/read_ahead_kb"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The header's scenario name of a recorded trace.
pub const SCENARIO: &str = "record";

#[derive(Clone, Debug)]
pub struct Opts {
    pub trace: PathBuf,
    pub cfg: ServerConfig,
    pub cmd: Vec<String>,
}

/// Parse the arguments after `record`; Err is a usage error.
pub fn parse_args(args: &[String]) -> Result<Opts, String> {
    let mut trace = None;
    let mut cfg = ServerConfig::default();
    let mut it = args.iter().cloned();
    let mut seen: Vec<String> = vec![];
    let mut cmd = None;
    while let Some(a) = it.next() {
        if a == "--" {
            cmd = Some(it.by_ref().collect::<Vec<_>>());
            break;
        }
        if a.starts_with("--") {
            if seen.contains(&a) {
                return Err(format!("{a} is given twice"));
            }
            seen.push(a.clone());
        }
        match a.as_str() {
            "--trace" => trace = Some(PathBuf::from(it.next().ok_or("--trace needs OUT")?)),
            // the server watchdog and the attribute TTL stay the
            // scenarios' (nothing is held under record)
            "--hold-timeout-ms" | "--ttl-ms" | "--wbc" | "--xattr-enodata" => {
                return Err(format!("{a} is not a record option"))
            }
            o if o.starts_with('-') => match cfg.parse_arg(o, &mut it)? {
                true => {}
                false => return Err(format!("unknown option {o}")),
            },
            // clap takes the first `--` of `wbspec record -- CMD`: a
            // word with no --trace before it is that CMD, and the
            // missing option is what to name
            _ if trace.is_none() => return Err("--trace OUT is required".into()),
            o => return Err(format!("{o:?} before `--`: the command goes after `--`")),
        }
    }
    let cmd = cmd.ok_or("missing `-- CMD`")?;
    if cmd.is_empty() {
        return Err("missing CMD after `--`".into());
    }
    let trace = trace.ok_or("--trace OUT is required")?;
    cfg.check()?;
    Ok(Opts { trace, cfg, cmd })
}

/// OUT must not exist (a dangling symbolic link exists too) and its
/// directory must.
fn check_out(out: &Path) -> Result<(), String> {
    if out.symlink_metadata().is_ok() {
        return Err(format!(
            "--trace {}: exists (give a new file name)",
            out.display()
        ));
    }
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if out.file_name().is_none() || !dir.is_dir() {
        return Err(format!(
            "--trace {}: not a file name in an existing directory",
            out.display()
        ));
    }
    Ok(())
}

/// Write `bytes` as `out`: into a temporary sibling, renamed onto `out`
/// with RENAME_NOREPLACE (a file that appeared at `out` meanwhile is not
/// replaced); the temporary is removed on failure.
fn publish(out: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = out.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.wbspec-{}.tmp", std::process::id()));
    let r = (|| -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        crate::vm::rename_noreplace(&tmp, out)
    })();
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("--trace {}: {e}", out.display()));
    }
    Ok(())
}

/// `record` for the command line: returns the exit status.
pub fn record_main(args: &[String]) -> i32 {
    let say = |e: &str| eprintln!("wbspec: record: {e}");
    if matches!(args.first().map(String::as_str), Some("-h" | "--help")) {
        println!("{USAGE}");
        return 0;
    }
    let o = match parse_args(args) {
        Ok(o) => o,
        Err(e) => {
            say(&format!("{e} ({USAGE})"));
            return 2;
        }
    };
    if let Err(e) = check_out(&o.trace) {
        say(&e);
        return 2;
    }
    if !cfg!(target_arch = "x86_64") {
        say("the syscall decoder is written for x86_64");
        return 2;
    }
    if let Some(why) = crate::runner::cannot_run() {
        say(&why);
        return 2;
    }
    let Some(recorder) = crate::runner::find_recorder() else {
        say("fuse-recorder not found next to this binary (build it: cargo build --release -p wbspec-harness, or set WBSPEC_FUSE_RECORDER)");
        return 2;
    };
    match record(&o, &recorder) {
        Ok((code, summary)) => {
            eprintln!("wbspec: record: {summary}");
            code
        }
        Err(e) => {
            say(&e);
            2
        }
    }
}

/// Mount, run and trace CMD, unmount, publish the trace: (exit code,
/// summary line).
fn record(o: &Opts, recorder: &Path) -> Result<(i32, String), String> {
    // before any thread exists (the tracer's signal handling)
    tracer::block_signals();
    // mounts of earlier runs that were killed (as `conform` does)
    for l in crate::runner::reap_stale_mounts() {
        eprintln!("wbspec: record: {l}");
    }
    // payloads in hex, for the last pass (segs.rs)
    let cfg = ServerConfig {
        raw: true,
        ..o.cfg.clone()
    };
    let mut served = crate::runner::serve(SCENARIO, &cfg, recorder)
        .map_err(|f| format!("mount: {}", f.detail))?;
    // the mount's path without symbolic links (as /proc/PID/fd links
    // read it): its parent is resolved, never the mount itself
    let mnt = match served.mnt.parent().map(Path::canonicalize) {
        Some(Ok(p)) => p.join("mnt"),
        _ => {
            return Err(format!(
                "{}: cannot resolve its directory",
                served.mnt.display()
            ))
        }
    };
    let m = mnt.to_string_lossy().to_string();
    let argv: Vec<String> = o.cmd.iter().map(|a| a.replace("{mnt}", &m)).collect();
    let run = (|| -> Result<tracer::Ended, String> {
        if let Some(s) = tracer::pending_stop() {
            return Ok(tracer::Ended {
                code: 128 + s,
                interrupted: Some(s),
                ..Default::default()
            });
        }
        served
            .client
            .ok(&format!("mark {THREADS_NOTE}"))
            .map_err(|e| format!("the server did not acknowledge a mark: {e}"))?;
        let root = tracer::spawn(&argv, &mnt)?;
        let server = served.server_pid();
        let ended = tracer::Tracer::new(&mut served.client, &mnt, root, server).run()?;
        // the mount's readahead as CMD left it (it may have written its
        // bdi's read_ahead_kb): conform's window assumes 128 KiB
        if let Some(kb) = read_ahead_kb(&mnt) {
            served
                .client
                .ok(&format!("mark {READ_AHEAD_NOTE}{kb}"))
                .map_err(|e| format!("the server did not acknowledge a mark: {e}"))?;
        }
        Ok(ended)
    })();
    let steps = served.cleanup();
    let ended = run?;
    if crate::mount::is_mounted(&served.mnt) {
        return Err(format!(
            "the mount {} could not be removed: {}",
            served.mnt.display(),
            steps.join("; ")
        ));
    }
    let text = segs::finish_file(&served.trace).map_err(|e| format!("the trace: {e}"))?;
    publish(&o.trace, text.as_bytes())?;
    drop(served);
    let code = match ended.interrupted {
        Some(s) => 128 + s,
        None => ended.code,
    };
    let mut summary = format!(
        "{} syscalls on the mount marked, {} threads/processes; trace {}",
        ended.marked,
        ended.threads,
        o.trace.display()
    );
    if ended.died_in_call > 0 {
        summary += &format!(
            "; {} calls ended by the thread's death (ret -1 died=)",
            ended.died_in_call
        );
    }
    if let Some(s) = ended.interrupted {
        summary += &format!("; interrupted by signal {s}, the command was killed");
    }
    Ok((code, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn args() {
        let o = parse_args(&v(&["--trace", "t", "--no-wbc", "--", "dd", "of={mnt}/f"])).unwrap();
        assert_eq!(o.trace, PathBuf::from("t"));
        assert!(!o.cfg.writeback_cache);
        assert_eq!(o.cmd, v(&["dd", "of={mnt}/f"]));
        // options after `--` are CMD's
        let o = parse_args(&v(&["--trace", "t", "--", "x", "--trace", "y"])).unwrap();
        assert_eq!(o.cmd, v(&["x", "--trace", "y"]));
        for bad in [
            &["--trace", "t"][..],
            &["--trace", "t", "--"],
            &["--", "x"],
            &["--trace", "t", "--trace", "u", "--", "x"],
            &["--trace", "t", "dd", "--", "x"],
            &["--trace", "t", "--bogus", "--", "x"],
            &["--trace", "t", "--max-write", "x", "--", "x"],
            &["--trace", "t", "--max-write", "100", "--", "x"],
            &["--trace", "t", "--hold-timeout-ms", "5", "--", "x"],
        ] {
            assert!(parse_args(&v(bad)).is_err(), "{bad:?}");
        }
        // `wbspec record -- true` reaches here as ["true"] (clap takes
        // the `--`): the missing --trace is named, not a misplaced `--`
        for bad in [&["true"][..], &["--no-wbc", "true"]] {
            assert_eq!(parse_args(&v(bad)).unwrap_err(), "--trace OUT is required");
        }
        assert!(parse_args(&v(&["--trace", "t", "dd"]))
            .unwrap_err()
            .contains("before `--`"));
    }

    #[test]
    fn out_is_never_replaced() {
        let d = std::env::temp_dir().join(format!("wbspec-record-out-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        let f = d.join("t.jsonl");
        check_out(&f).unwrap();
        publish(&f, b"one").unwrap();
        assert!(check_out(&f).is_err());
        assert!(publish(&f, b"two").is_err());
        assert_eq!(std::fs::read(&f).unwrap(), b"one");
        // a dangling link exists
        let l = d.join("l");
        std::os::unix::fs::symlink(d.join("nowhere"), &l).unwrap();
        assert!(check_out(&l).is_err());
        assert!(check_out(&d.join("no/such/dir/t")).is_err());
        // nothing but the two names is left
        let mut left: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["l", "t.jsonl"]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
