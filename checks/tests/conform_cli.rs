//! `wbspec conform` passes its arguments to the harness and keeps its exit
//! codes (docs/conformance.md §4): a not-modelled trace is 3, never a silent
//! 0, unless `--allow-not-modelled` is given.
use std::path::PathBuf;
use std::process::Command;

fn traces() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/traces")
}

fn wbspec_conform(args: &[&str]) -> i32 {
    let o = Command::new(env!("CARGO_BIN_EXE_wbspec"))
        .arg("conform")
        .args(args)
        .output()
        .expect("run wbspec");
    o.status.code().expect("exit code")
}

#[test]
fn wbspec_conform_exit_codes() {
    let f = |p: &str| traces().join(p).to_string_lossy().into_owned();
    assert_eq!(
        wbspec_conform(&["--trace", &f("6.18.44/b_ftrunc.jsonl")]),
        0
    );
    assert_eq!(
        wbspec_conform(&["--trace", &f("altered/k_flush_early.jsonl")]),
        1
    );
    assert_eq!(
        wbspec_conform(&["--trace", &f("altered/d3_schema_2.jsonl")]),
        2
    );
    assert_eq!(wbspec_conform(&["--trace", &f("6.18.44/c_mmap.jsonl")]), 3);
    assert_eq!(
        wbspec_conform(&[
            "--trace",
            &f("6.18.44/c_mmap.jsonl"),
            "--allow-not-modelled"
        ]),
        0
    );
}
