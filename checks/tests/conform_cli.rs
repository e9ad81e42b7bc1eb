//! `wbspec conform` passes its arguments to the harness and keeps its exit
//! codes (docs/conformance.md §4): a trace not modelled that no
//! declaration covers is 3, never a silent 0, unless
//! `--allow-not-modelled` is given.
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
    // outside the model as its scenario declares: 0
    assert_eq!(
        wbspec_conform(&["--trace", &f("6.18.44/n_copy_range.jsonl")]),
        0
    );
    // not modelled under a free label (no declaration): 3, or 0 allowed
    assert_eq!(
        wbspec_conform(&["--trace", &f("6.18.44/n_copy_range.jsonl"), "--label", "x"]),
        3
    );
    assert_eq!(
        wbspec_conform(&[
            "--trace",
            &f("6.18.44/n_copy_range.jsonl"),
            "--label",
            "x",
            "--allow-not-modelled"
        ]),
        0
    );
    // declared conforming but not modelled: a difference
    assert_eq!(
        wbspec_conform(&["--trace", &f("altered/b_ftrunc_written_short.jsonl")]),
        1
    );
}

/// `wbspec conform --help` is the runner's help (options and the scenario
/// table), not clap's.
#[test]
fn wbspec_conform_help_is_the_runners() {
    let o = Command::new(env!("CARGO_BIN_EXE_wbspec"))
        .args(["conform", "--help"])
        .output()
        .expect("run wbspec");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        out.contains("--allow-not-modelled") && out.contains("n_copy_range"),
        "{out}"
    );
}

/// `wbspec record` is dispatched to the harness (docs/record.md): its
/// usage errors are one `wbspec: record:` line and exit 2, found before
/// anything is mounted (no root needed), and --help is its usage.
#[test]
fn wbspec_record_is_the_harness_record() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_wbspec"))
            .arg("record")
            .args(args)
            .output()
            .expect("run wbspec")
    };
    for bad in [&[][..], &["--trace", "t.jsonl"], &["--", "true"]] {
        let o = run(bad);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("wbspec: record: "), "{err}");
        if bad.len() == 2 && bad[0] == "--" {
            // clap takes this `--`: the error must still name what is
            // missing, not say the command came before `--`
            assert!(err.contains("--trace OUT is required"), "{err}");
        }
    }
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("usage: wbspec record --trace OUT"));
}
