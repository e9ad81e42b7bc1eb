//! The runner leaves no temporary directory behind, also when a scenario's
//! setup fails before the server runs, and nothing mounted after a
//! scenario that aborted its connection. Needs root and /dev/fuse
//! (otherwise the runner skips before making a directory).
use wbspec_harness::require::{may_run, KERNEL};
use wbspec_harness::runner::{cannot_run, run_one, RunOptions};

fn mine() -> Vec<String> {
    let tag = format!("wbspec-{}-", std::process::id());
    let mut v: Vec<String> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&tag))
        .collect();
    v.sort();
    v
}

/// The tests of this binary compare the temporary directories before and
/// after: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// This process's FUSE mounts (mount points wbspec-<pid>-...).
fn my_mounts() -> Vec<String> {
    let tag = format!("wbspec-{}-", std::process::id());
    wbspec_harness::mount::fuse_mount_lines()
        .into_iter()
        .filter(|l| l.contains(&tag))
        .collect()
}

/// After a fusectl abort (t_abort_wb) the scenario's own cleanup leaves
/// nothing mounted and no directory, and the lingering server exits on the
/// runner's `quit`: it is neither aborted again nor killed.
#[test]
fn aborted_connection_leaves_nothing_mounted() {
    let _one = one_at_a_time();
    if !may_run(KERNEL, "the abort cleanup test", cannot_run()) {
        return;
    }
    let before = mine();
    let opts = RunOptions::new(env!("CARGO_BIN_EXE_fuse-recorder").into());
    let sc = wbspec_harness::scenarios::all()
        .into_iter()
        .find(|s| s.name == "t_abort_wb")
        .unwrap();
    let o = run_one(&sc, &opts);
    assert_eq!(o.outcome, "pass", "{}", o.line());
    assert!(
        o.trace.iter().any(|e| e.kind.as_deref() == Some("ret")
            && e.syscall.as_deref() == Some("abort")
            && e.ret == Some(0)),
        "no abort in the trace"
    );
    assert!(
        !o.cleanup.iter().any(|l| l.contains("killed server")
            || l.contains("still running")
            || l.contains("LEFT BEHIND")),
        "{:?}",
        o.cleanup
    );
    assert!(my_mounts().is_empty(), "{:?}", my_mounts());
    assert_eq!(mine(), before, "temporary directories left behind");
}

#[test]
fn failed_setup_leaves_no_directory() {
    let _one = one_at_a_time();
    if !may_run(KERNEL, "the runner cleanup test", cannot_run()) {
        return;
    }
    let before = mine();
    let opts = RunOptions::new("/nonexistent/fuse-recorder".into());
    let sc = wbspec_harness::scenarios::all()
        .into_iter()
        .find(|s| s.name == "b_ftrunc")
        .unwrap();
    let o = run_one(&sc, &opts);
    assert_eq!(o.outcome, "fail", "{}", o.line());
    assert!(
        o.detail.as_deref().unwrap_or("").contains("spawn"),
        "{}",
        o.line()
    );
    assert_eq!(mine(), before, "temporary directories left behind");
}
