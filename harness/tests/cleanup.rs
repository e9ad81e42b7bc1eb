//! The runner leaves no temporary directory behind, also when a scenario's
//! setup fails before the server runs. Needs root and /dev/fuse (otherwise
//! the runner skips before making a directory); it mounts nothing: the
//! server binary does not exist.
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

#[test]
fn failed_setup_leaves_no_directory() {
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
