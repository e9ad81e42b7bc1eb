//! What a test needs from the machine, and whether a missing need skips it
//! or fails it.
//!
//! Tests that need root and /dev/fuse (the real kernel) or Chromium skip,
//! saying so, where those are missing — unless the environment says the
//! machine must have them: `WBSPEC_REQUIRE_KERNEL=1` and
//! `WBSPEC_REQUIRE_BROWSER=1` (and `WBSPEC_REQUIRE_SPIN=1` for spin and
//! gcc), which `.ci/run` sets. Then a missing need
//! fails the test, so CI never passes by skipping.

/// Set (to anything but `0` or empty) where root and /dev/fuse must be
/// present.
pub const KERNEL: &str = "WBSPEC_REQUIRE_KERNEL";
/// Set where Chromium must be present.
pub const BROWSER: &str = "WBSPEC_REQUIRE_BROWSER";
/// Set where spin and gcc must be present (the Spin twin's comparison,
/// checks/tests/spin.rs).
pub const SPIN: &str = "WBSPEC_REQUIRE_SPIN";
/// Set where QEMU and the cached Debian kernels must be present (`wbspec
/// vm`, harness/tests/vm.rs; .ci/setup installs and fetches them).
pub const VM: &str = "WBSPEC_REQUIRE_VM";

/// Whether `var` requires its need on this machine.
pub fn required(var: &str) -> bool {
    is_set(std::env::var(var).ok().as_deref())
}

fn is_set(v: Option<&str>) -> bool {
    v.is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether `test` may run: `missing` says why it cannot (None: it can).
/// When something is missing, prints a skip line on stderr (shown also
/// for a passing test) and returns false, or
/// panics if `var` requires it.
pub fn may_run(var: &str, test: &str, missing: Option<String>) -> bool {
    decide(var, required(var), test, missing)
}

fn decide(var: &str, required: bool, test: &str, missing: Option<String>) -> bool {
    let Some(why) = missing else {
        return true;
    };
    if required {
        panic!("{test} cannot run: {why}; {var} is set, so this is a failure, not a skip");
    }
    // Straight to file descriptor 2, not println!/eprintln!: the test
    // runner captures both macros' output of a passing test, so a skip
    // would show as a bare `ok`.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "skipping {test}: {why} (set {var}=1 to make this a failure)"
    );
    false
}

/// Runs test `name` of the current test binary again in a child process,
/// with `var` set or not, and with `env` added; as nobody when this process
/// is root and `drop_root`. Returns (passed, its output). Used to check that
/// a test skips without its need and fails when the need is required.
pub fn rerun_test(
    name: &str,
    var: &str,
    require: bool,
    env: &[(&str, &str)],
    drop_root: bool,
) -> (bool, String) {
    use std::process::Command;
    let me = std::env::current_exe().expect("test binary");
    let mut cmd = if drop_root && crate::sys::is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&me);
        c
    } else {
        Command::new(&me)
    };
    // Without --nocapture, as `cargo test` runs it: a skip line must show
    // for the passing test too.
    cmd.args(["--exact", name, "--test-threads=1"]);
    cmd.env_remove(var);
    if require {
        cmd.env(var, "1");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("rerun the test binary");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_need_skips_or_fails() {
        assert!(decide(KERNEL, false, "t", None) && decide(KERNEL, true, "t", None));
        assert!(!decide(KERNEL, false, "t", Some("no widget".into())));
        let r = std::panic::catch_unwind(|| decide(KERNEL, true, "t", Some("no widget".into())));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(
            msg.contains("t cannot run: no widget") && msg.contains(KERNEL),
            "{msg}"
        );
        assert!(is_set(Some("1")) && is_set(Some("yes")));
        assert!(!is_set(None) && !is_set(Some("")) && !is_set(Some("0")));
    }
}
