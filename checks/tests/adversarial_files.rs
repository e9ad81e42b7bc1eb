//! Attacks on how wbspec writes files and verifies merged shard reports
//! (issue 17; docs/reliability.md, "Files it touches"): a full disk under
//! every output, outputs that cannot be written, concurrent pin updates,
//! edited and foreign shard reports, and `bench --against` children that
//! hang or are interrupted. Each test names the defect it holds off.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wbspec_harness::require;

/// Exit 2, exactly one `wbspec:` line on stderr, and it is the last line
/// (progress lines such as `running x ...` come before it).
fn refused(out: &std::process::Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("wbspec:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert_eq!(err.trim().lines().last(), Some(errors[0]), "{err}");
    assert!(
        errors[0].contains(needle),
        "{err:?} should mention {needle:?}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// Every file under `dir` with its contents.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// A tmpfs of 64 KiB mounted on a fresh directory, unmounted when dropped
/// (also when the test panics).
struct SmallTmpfs {
    dir: tempfile::TempDir,
}

impl SmallTmpfs {
    /// None (after a skip line, or a failure when WBSPEC_REQUIRE_KERNEL is
    /// set) when this process may not mount.
    fn mount(test: &str) -> Option<SmallTmpfs> {
        let dir = tmpdir();
        let c = |s: &str| std::ffi::CString::new(s).unwrap();
        let target = c(dir.path().to_str().unwrap());
        let r = unsafe {
            libc::mount(
                c("tmpfs").as_ptr(),
                target.as_ptr(),
                c("tmpfs").as_ptr(),
                0,
                c("size=128k").as_ptr().cast(),
            )
        };
        if r != 0 {
            let why = format!("cannot mount a tmpfs: {}", std::io::Error::last_os_error());
            require::may_run(require::KERNEL, test, Some(why));
            return None;
        }
        Some(SmallTmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the file system: a file `filler` grows until ENOSPC.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.path().join("filler")).unwrap();
        let block = [0u8; 4096];
        while f.write_all(&block).is_ok() {}
        while f.write_all(&[0]).is_ok() {}
        let e = f.write_all(&[0]).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let c = std::ffi::CString::new(self.path().to_str().unwrap()).unwrap();
        unsafe {
            libc::umount2(c.as_ptr(), libc::MNT_DETACH);
        }
    }
}

/// Defect: every output was written in place, so on a full disk
/// `--update-pins` left the catalogue cut mid-line and `--write-traces`,
/// `--json`, `--markdown`, `merge-reports` and `bench --json` left empty
/// or truncated files where the previous ones were. Now each is one line
/// and exit 2, and every old file is byte for byte what it was, with no
/// temporary file left.
#[test]
fn a_full_disk_leaves_every_old_file_intact() {
    let Some(fs) = SmallTmpfs::mount("a_full_disk_leaves_every_old_file_intact") else {
        return;
    };
    let root = fs.path();
    std::fs::write(root.join("Cargo.toml"), "[workspace]\n").unwrap();
    std::fs::create_dir_all(root.join("checks/catalogue")).unwrap();
    std::fs::create_dir_all(root.join("traces")).unwrap();
    let cat = root.join("checks/catalogue/c.toml");
    std::fs::write(&cat, ONE).unwrap();
    let run = |args: &[&str]| wbspec_in(root, args);
    run(&["check", "--all", "--update-pins"]);
    let p = |n: &str| root.join(n).to_str().unwrap().to_string();
    // the old outputs, from runs that had the space
    for args in [
        vec!["check", "x", "--write-traces"],
        vec!["check", "x", "--json", &p("r.json")],
        vec!["check", "x", "--markdown", &p("r.md")],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stdout(&out));
    }
    assert!(root.join("traces/x--b1.json").is_file());
    // a pin that must be rewritten
    let text = std::fs::read_to_string(&cat).unwrap();
    let (head, tail) = text.split_once("\nstates = ").unwrap();
    let rest = tail.split_once('\n').unwrap().1;
    std::fs::write(&cat, format!("{head}\nstates = 1\n{rest}")).unwrap();

    // a shard report kept off the small file system, merged into it (made
    // with the catalogue as it is now)
    let elsewhere = tmpdir();
    let shard = elsewhere.path().join("s.json");
    let shard = shard.to_str().unwrap();
    run(&["check", "--all", "--shard", "1/1", "--json", shard]);
    for f in ["m.json", "m.md", "b.json"] {
        std::fs::write(root.join(f), format!("old {f}\n")).unwrap();
    }
    fs.fill();
    let before = snapshot(root);
    let filler = root.join("filler");
    for (args, file) in [
        (vec!["check", "x", "x-bg1", "--update-pins"], "c.toml"),
        (vec!["check", "x", "--write-traces"], "x--b1.json"),
        (vec!["check", "x", "--json", &p("r.json")], "r.json"),
        (vec!["check", "x", "--markdown", &p("r.md")], "r.md"),
        (
            vec!["merge-reports", shard, "--json", &p("m.json")],
            "m.json",
        ),
        (
            vec!["merge-reports", shard, "--markdown", &p("m.md")],
            "m.md",
        ),
        (
            vec![
                "bench",
                "x",
                "--repeat",
                "1",
                "--engines",
                "fast",
                "--json",
                &p("b.json"),
            ],
            "b.json",
        ),
    ] {
        let out = run(&args);
        refused(&out, file);
        refused(&out, "No space left on device");
        let mut after = snapshot(root);
        assert_eq!(
            after.remove(&filler).map(|f| f.len()),
            Some(before[&filler].len())
        );
        let mut want = before.clone();
        want.remove(&filler);
        assert_eq!(
            after.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{args:?}: files added or removed"
        );
        assert!(after == want, "{args:?}: an old file changed");
    }
}

/// Without the right to mount (as nobody), the full-disk test skips,
/// saying so, and fails when WBSPEC_REQUIRE_KERNEL=1 requires it.
#[test]
fn the_full_disk_test_skips_or_fails_without_mount_rights() {
    let name = "a_full_disk_leaves_every_old_file_intact";
    let (passed, out) = require::rerun_test(name, require::KERNEL, false, &[], true);
    assert!(passed && out.contains("skipping"), "{out}");
    let (passed, out) = require::rerun_test(name, require::KERNEL, true, &[], true);
    assert!(!passed && out.contains("cannot mount a tmpfs"), "{out}");
}

/// Defect: `--json /nonexistent/r.json` (and a directory given as the
/// file, or an unwritable directory) failed only after the whole run.
/// Every output path is refused before the first check runs.
#[test]
fn unwritable_outputs_are_refused_before_the_run() {
    let d = tmpdir();
    let dir = d.path().to_str().unwrap();
    let plain = d.path().join("plain");
    std::fs::write(&plain, "x").unwrap();
    let under_file = plain.join("r.json");
    let under_file = under_file.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["check", "--all", "--json", "/nonexistent/r.json"],
            "/nonexistent",
        ),
        (vec!["check", "--all", "--markdown", dir], "is a directory"),
        (vec!["check", "--all", "--json", under_file], "plain"),
        (
            vec![
                "check",
                "--all",
                "--write-traces",
                "--traces-dir",
                under_file,
            ],
            "plain",
        ),
        (
            vec!["merge-reports", "s.json", "--json", "/nonexistent/m.json"],
            "/nonexistent",
        ),
        (vec!["bench", "--json", dir], "is a directory"),
    ] {
        let t0 = std::time::Instant::now();
        let out = wbspec(&args);
        one_line_error(&out, needle);
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("running "),
            "{args:?} ran checks before refusing"
        );
        assert!(t0.elapsed().as_secs() < 10, "{args:?}");
    }
    // a catalogue in a read-only directory: --update-pins is refused
    // before the run (root ignores the mode bits; a read-only mount does not)
    let ro = fake_checkout(ONE);
    let cdir = ro.path().join("checks/catalogue");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cdir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = wbspec_in(ro.path(), &["check", "x", "--update-pins"]);
    std::fs::set_permissions(&cdir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let is_root = unsafe { libc::geteuid() } == 0;
    if !is_root {
        one_line_error(&out, "cannot write in");
    }
}

/// Defect: two concurrent `--update-pins` on one catalogue file lost an
/// update. Two processes pin different checks of one file at once: both
/// pins are in the file afterwards.
#[test]
fn concurrent_update_pins_keep_both_updates() {
    let two = format!("{ONE}\n{}", ONE.replace("name = \"x\"", "name = \"y\""));
    for _ in 0..3 {
        let d = fake_checkout(&two);
        let spawn = |names: &[&str]| {
            std::process::Command::new(env!("CARGO_BIN_EXE_wbspec"))
                .args(["check", "--update-pins"])
                .args(names)
                .current_dir(d.path())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        };
        let mut a = spawn(&["x", "x-bg1"]);
        let mut b = spawn(&["y", "y-bg1"]);
        assert!(a.wait().unwrap().code().is_some());
        assert!(b.wait().unwrap().code().is_some());
        let text = std::fs::read_to_string(d.path().join("checks/catalogue/c.toml")).unwrap();
        assert_eq!(text.matches("\nstates = ").count(), 2, "{text}");
        assert_eq!(text.matches("congested = { states = ").count(), 2, "{text}");
        let out = wbspec_in(d.path(), &["check", "x", "y"]);
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    }
}

/// Defect: update-pins re-rendered the file: every `[[check]]` header took
/// the first header's decoration and a pinned key lost its comment. A
/// pinned catalogue differs from its unpinned text only in pinned lines.
#[test]
fn update_pins_changes_only_the_pinned_lines() {
    let text = format!(
        "# catalogue comment\n[[ check ]]  # first\n{}\nstates = 1 # why this count\n\n# about y\n{}# trailing comment\n",
        ONE.trim_start_matches("[[check]]\n").trim_end(),
        ONE.replace("name = \"x\"", "name = \"y\"")
    );
    let d = fake_checkout(&text);
    wbspec_in(d.path(), &["check", "--all", "--update-pins"]);
    let new = std::fs::read_to_string(d.path().join("checks/catalogue/c.toml")).unwrap();
    let unpinned = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| {
                !l.starts_with("states")
                    && !l.starts_with("witnesses")
                    && !l.starts_with("congested")
                    && !l.starts_with("violations")
            })
            .map(String::from)
            .collect()
    };
    assert_eq!(unpinned(&new), unpinned(&text), "{new}");
    assert!(new.contains("\n[[check]]\nname = \"y\""), "{new}");
    assert!(new.contains(" # why this count\n"), "{new}");
    assert!(!new.contains("states = 1 #"), "{new}");
}

const TWO: &str = r#"
[[check]]
name = "a"
question = "q"
kernel = "T"
pages = 1
init_size = 1
cached = [0]
tasks = ["write 0+1", "dio-read 0+1"]
expect = { b1 = "violated" }

[[check]]
name = "b"
question = "q"
kernel = "T"
pages = 2
init_size = 2
cached = [0, 1]
dirty = [1]
daemon_threads = 2
tasks = ["wb none", "truncate 1"]
"#;

/// A pinned two-check checkout and its two shard reports.
fn two_shards() -> (tempfile::TempDir, Vec<PathBuf>) {
    let d = fake_checkout(TWO);
    wbspec_in(d.path(), &["check", "--all", "--update-pins"]);
    let files: Vec<PathBuf> = (1..=2)
        .map(|i| {
            let f = d.path().join(format!("s{i}.json"));
            let sh = format!("{i}/2");
            wbspec_in(
                d.path(),
                &[
                    "check",
                    "--all",
                    "--shard",
                    &sh,
                    "--json",
                    f.to_str().unwrap(),
                ],
            );
            f
        })
        .collect();
    (d, files)
}

fn merge_in(d: &Path, files: &[PathBuf], extra: &[&str]) -> std::process::Output {
    let mut args = vec!["merge-reports"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    args.extend_from_slice(extra);
    wbspec_in(d, &args)
}

/// The shard holding check `name`, and the path of its JSON.
fn shard_of(files: &[PathBuf], name: &str) -> (PathBuf, serde_json::Value) {
    for f in files {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        if v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == name)
        {
            return (f.clone(), v);
        }
    }
    panic!("no shard holds {name}");
}

/// Edits check `name` in its shard report with `edit`; restores the
/// report when the returned guard is dropped.
fn edited(
    files: &[PathBuf],
    name: &str,
    edit: impl FnOnce(&mut serde_json::Value, usize),
) -> impl Drop {
    let (f, mut v) = shard_of(files, name);
    let old = std::fs::read(&f).unwrap();
    let i = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["name"] == name)
        .unwrap();
    edit(&mut v, i);
    std::fs::write(&f, serde_json::to_string(&v).unwrap()).unwrap();
    struct Restore(PathBuf, Vec<u8>);
    impl Drop for Restore {
        fn drop(&mut self) {
            std::fs::write(&self.0, &self.1).unwrap();
        }
    }
    Restore(f, old)
}

/// Defect: merge-reports took expectations, pins, symmetry and the
/// property and witness lists from the shards and checked neither config,
/// model_version, schema nor the tool, so an edited or foreign shard
/// merged with exit 0. Each edit below is refused (one line, exit 2) or,
/// where only the merge's own judgement can tell, fails it (exit 1).
#[test]
fn merge_reports_verifies_the_shards() {
    let (d, files) = two_shards();
    let root = d.path();
    // a scratch catalogue observes none of the model's switches (exit 1);
    // every check is as expected
    let clean = |out: &std::process::Output| {
        assert_eq!(out.status.code(), Some(1), "{}", stdout(out));
        assert!(
            stdout(out).contains(" 0 checks not as expected"),
            "{}",
            stdout(out)
        );
    };
    clean(&merge_in(root, &files, &[]));

    type Edit = Box<dyn Fn(&mut serde_json::Value, usize)>;
    let refusals: Vec<(&str, Edit)> = vec![
        (
            "configuration",
            Box::new(|v, i| v["checks"][i]["config"]["pages"] = 7.into()),
        ),
        (
            "model version",
            Box::new(|v, i| v["checks"][i]["model_version"] = "fuse-0".into()),
        ),
        (
            "model",
            Box::new(|v, i| v["checks"][i]["model"] = "other".into()),
        ),
        ("schema", Box::new(|v, _| v["schema"] = 1.into())),
        (
            "another wbspec",
            Box::new(|v, _| v["tool"]["commit"] = "0000000".into()),
        ),
        (
            "another wbspec",
            Box::new(|v, _| v["tool"]["version"] = "0.0.1".into()),
        ),
        (
            "another catalogue",
            Box::new(|v, _| v["catalogue"]["hash"] = "0".repeat(16).into()),
        ),
        (
            "missing",
            Box::new(|v, i| {
                v["checks"][i]["properties"]
                    .as_array_mut()
                    .unwrap()
                    .remove(0);
            }),
        ),
        (
            "missing",
            Box::new(|v, i| {
                v["checks"][i]["witnesses"].as_array_mut().unwrap().pop();
            }),
        ),
        (
            "symmetry",
            Box::new(|v, i| v["checks"][i]["symmetry"] = true.into()),
        ),
    ];
    for (needle, edit) in refusals {
        let _g = edited(&files, "a", |v, i| edit(v, i));
        one_line_error(&merge_in(root, &files, &[]), needle);
    }

    // claims the merge no longer trusts: the shard's own expectation and
    // pins, edited to agree with a forged result, are replaced by the
    // catalogue's, and the forged result fails the merge
    {
        let _g = edited(&files, "a", |v, i| {
            let c = &mut v["checks"][i];
            for p in c["properties"].as_array_mut().unwrap() {
                p["expected"] = "holds".into();
                p["observed"] = "holds".into();
                p["violating_states"] = 0.into();
                p["counterexample"] = serde_json::Value::Null;
            }
            c["unique_states"] = 2.into();
            c["pinned_states"] = 2.into();
        });
        let m = root.join("m.json");
        let out = merge_in(root, &files, &["--json", m.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        assert!(
            stdout(&out).contains("Not as expected: a"),
            "{}",
            stdout(&out)
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
        let a = v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "a")
            .unwrap();
        assert_eq!(a["as_expected"], false);
        assert_ne!(a["pinned_states"], 2);
        let b1 = a["properties"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "b1")
            .unwrap();
        assert_eq!(b1["expected"], "violated");
    }

    // a shard made with another catalogue: the catalogue changed after
    // the shards were made (a comment is enough)
    let cat = root.join("checks/catalogue/c.toml");
    let text = std::fs::read_to_string(&cat).unwrap();
    std::fs::write(&cat, format!("# edited\n{text}")).unwrap();
    one_line_error(&merge_in(root, &files, &[]), "another catalogue");
    std::fs::write(&cat, &text).unwrap();

    // a shard run with --symmetry: its counts are of another exploration
    let sym = root.join("sym.json");
    let (f, _) = shard_of(&files, "b");
    let idx = if f.ends_with("s1.json") { "1/2" } else { "2/2" };
    wbspec_in(
        root,
        &[
            "check",
            "--all",
            "--shard",
            idx,
            "--symmetry",
            "--json",
            sym.to_str().unwrap(),
        ],
    );
    let others: Vec<PathBuf> = files
        .iter()
        .filter(|x| **x != f)
        .cloned()
        .chain([sym])
        .collect();
    one_line_error(&merge_in(root, &others, &[]), "symmetry");
    clean(&merge_in(root, &files, &[]));
}

/// A stand-in for an `--against` binary that never finishes: it writes its
/// pid to `$WBSPEC_TEST_PIDFILE` and sleeps.
fn hanging_binary(dir: &Path) -> PathBuf {
    let f = dir.join("hang.sh");
    std::fs::write(
        &f,
        "#!/bin/sh\necho $$ > \"$WBSPEC_TEST_PIDFILE\"\nexec sleep 1000\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    f
}

/// Is process `pid` gone (or a zombie nobody reaps)?
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s.rsplit(") ").next().is_some_and(|r| r.starts_with('Z')),
    }
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = std::time::Instant::now();
    while !cond() {
        assert!(t0.elapsed().as_secs() < 30, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `bench t-trunc-vs-wb-2p --against <hanging binary>` with a private
/// TMPDIR, started.
fn bench_against_hang(d: &Path, extra: &[&str]) -> (std::process::Child, PathBuf, PathBuf) {
    let tmp = d.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let pidfile = d.join("pid");
    let bin = hanging_binary(d);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_wbspec"))
        .args([
            "bench",
            "t-trunc-vs-wb-2p",
            "--repeat",
            "1",
            "--engines",
            "fast",
            "--against",
        ])
        .arg(&bin)
        .args(extra)
        .current_dir(repo_root())
        .env("TMPDIR", &tmp)
        .env("WBSPEC_TEST_PIDFILE", &pidfile)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    (child, tmp, pidfile)
}

fn pid_in(f: &Path) -> i32 {
    std::fs::read_to_string(f).unwrap().trim().parse().unwrap()
}

/// Defect: `bench --against` waited forever for a binary that hangs.
/// With `--timeout` the child is killed, its temporary directory removed,
/// and the bench fails with one line.
#[test]
fn bench_against_a_hanging_binary_times_out() {
    let d = tmpdir();
    let (child, tmp, pidfile) = bench_against_hang(d.path(), &["--timeout", "1"]);
    let out = child.wait_with_output().unwrap();
    refused(&out, "did not finish within --timeout 1 s");
    assert!(gone(pid_in(&pidfile)), "the hanging child is still running");
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "temporary directory left"
    );
    one_line_error(&wbspec(&["bench", "--timeout", "0"]), "--timeout");
}

/// Defect: SIGINT (or SIGTERM) during `bench --against` left the child
/// running and its temporary directory behind. Both are gone when the
/// bench has ended.
#[test]
fn bench_interrupted_kills_its_child_and_removes_its_directory() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let d = tmpdir();
        let (mut child, tmp, pidfile) = bench_against_hang(d.path(), &[]);
        wait_for("the measured child", || {
            pidfile.is_file() && std::fs::read_to_string(&pidfile).is_ok_and(|s| s.ends_with('\n'))
        });
        let pid = pid_in(&pidfile);
        assert_eq!(
            std::fs::read_dir(&tmp).unwrap().count(),
            1,
            "its directory exists"
        );
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        wait_for("the bench to end", || child.try_wait().unwrap().is_some());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(128 + sig), "{err}");
        assert!(
            gone(pid),
            "signal {sig}: the measured child is still running"
        );
        assert_eq!(
            std::fs::read_dir(&tmp).unwrap().count(),
            0,
            "signal {sig}: directory left"
        );
    }
}

/// Defect: an output path that is a symbolic link to nothing was replaced
/// by a regular file (the link lost). It is refused before the run; a
/// link to a file is followed, the link kept.
#[test]
fn a_dangling_symlink_output_is_refused() {
    let d = tmpdir();
    let link = d.path().join("out.json");
    std::os::unix::fs::symlink(d.path().join("gone/nowhere.json"), &link).unwrap();
    let l = link.to_str().unwrap();
    refused(
        &wbspec(&["check", "t-trunc-vs-wb-2p", "--json", l]),
        "symbolic link to a missing file",
    );
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    std::fs::remove_file(&link).unwrap();
    std::fs::write(d.path().join("real.json"), "old").unwrap();
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    let out = wbspec(&["check", "t-trunc-vs-wb-2p", "--json", l]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(d.path().join("real.json"))
        .unwrap()
        .contains("t-trunc-vs-wb-2p"));
}

/// Defect: an error line echoed a name from the command line raw, escape
/// sequences and all (`wbspec show $'\e[31mred'` coloured the terminal).
/// Every control character of an error line is shown escaped.
#[test]
fn error_lines_escape_control_characters() {
    for args in [
        &["show", "\u{1b}[31mred\u{7}"][..],
        &["check", "a\u{1b}]0;title\u{7}b"],
    ] {
        let out = wbspec(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!err.trim_end().chars().any(|c| c.is_control()), "{err:?}");
        assert!(err.contains("\\u{1b}"), "{err:?}");
    }
    // clap's usage errors go through the same line (clap itself drops
    // the escape sequence here)
    let out = wbspec(&["no-such\u{1b}[2J\u{7}"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.trim_end().chars().any(|c| c.is_control()), "{err:?}");
}

/// Defect: `show NAME` printed a question with a long unbroken word at
/// 111 columns. It wraps with cite's helper (explain::wrap), cutting a
/// word longer than a line: no line over 72 columns, nothing lost.
#[test]
fn show_wraps_a_long_unbroken_word_at_72_columns() {
    let word = format!("{}{}", "a".repeat(100), "é".repeat(70));
    let d = fake_checkout(&ONE.replace(
        "question = \"q\"",
        &format!("question = \"q {word} = end\""),
    ));
    let out = wbspec_in(d.path(), &["show", "x"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let text = stdout(&out);
    for l in text.lines() {
        assert!(
            l.chars().count() <= 72,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    let flat: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(flat.contains(&word), "{text}");
}
