//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the built `wbspec` binary from the repository root.
pub fn wbspec(args: &[&str]) -> Output {
    wbspec_in(&repo_root(), args)
}

/// Runs the built `wbspec` binary with working directory `dir`.
pub fn wbspec_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wbspec"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run wbspec")
}

/// A fresh temporary directory, removed when the guard is dropped (also
/// when the test panics).
pub fn tmpdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("wbspec-test-")
        .tempdir()
        .expect("temporary directory")
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

pub fn catalogue_dir() -> PathBuf {
    repo_root().join("checks/catalogue")
}

pub fn traces_dir() -> PathBuf {
    repo_root().join("traces")
}

/// Asserts exit 2 and a one-line error on stderr that mentions `needle`.
pub fn one_line_error(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit code; stderr {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    assert!(!err.contains("panicked"), "{err}");
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A minimal checkout in a temporary directory: Cargo.toml,
/// checks/catalogue/<file> with `catalogue` as its text, traces/.
pub fn fake_checkout(catalogue: &str) -> tempfile::TempDir {
    let d = tmpdir();
    std::fs::write(d.path().join("Cargo.toml"), "[workspace]\n").unwrap();
    std::fs::create_dir_all(d.path().join("checks/catalogue")).unwrap();
    std::fs::create_dir_all(d.path().join("traces")).unwrap();
    std::fs::write(d.path().join("checks/catalogue/c.toml"), catalogue).unwrap();
    d
}

/// A one-check catalogue: a violation (b1) and properties that hold.
pub const ONE: &str = r#"[[check]]
name = "x"
question = "q"
kernel = "T"
pages = 1
init_size = 1
cached = [0]
tasks = ["write 0+1", "dio-read 0+1"]
expect = { b1 = "violated" }
"#;
