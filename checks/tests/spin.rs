//! The Spin twin (spin/fuse.pml) must find exactly wbspec's unique-state
//! counts and violated always-properties on every catalogue check it
//! models (docs/performance.md, "Spin twin"). Needs `spin` and `gcc`:
//! without them the tests say they skipped, unless WBSPEC_REQUIRE_SPIN is
//! set (.ci/run sets it), which makes a missing tool a failure.

mod common;

use std::process::Command;
use wbspec_harness::require;

fn have(tool: &str, arg: &str) -> bool {
    Command::new(tool)
        .arg(arg)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Are spin and gcc there? Skips, saying so, or fails if they must be.
fn tools(test: &str) -> bool {
    let missing = if !have("spin", "-V") {
        Some("spin is not installed (.ci/setup installs it)".to_string())
    } else if !have("gcc", "--version") {
        Some("gcc is not installed".to_string())
    } else {
        None
    };
    require::may_run(require::SPIN, test, missing)
}

fn spin_twin(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_spin-twin"))
        .args(["--wbspec", env!("CARGO_BIN_EXE_wbspec")])
        .args(args)
        .current_dir(common::repo_root())
        .output()
        .expect("run spin-twin")
}

/// The state bound of the comparison below (it keeps the test quick).
const MAX_STATES: u64 = 5000;

/// Twinnable checks pinned above [`MAX_STATES`], which the comparison
/// leaves out: each must be listed here (none today), so a check that
/// grows past the bound fails a test instead of dropping out silently.
const LEFT_OUT: &[&str] = &[];

/// The checks the twin covers, with their pinned state counts
/// (`spin-twin list`; needs neither spin nor gcc).
fn twinnable() -> Vec<(String, u64)> {
    let out = spin_twin(&["list"]);
    assert!(out.status.success(), "{}", common::stdout(&out));
    common::stdout(&out)
        .lines()
        .filter_map(|l| l.strip_prefix("twin "))
        .map(|l| {
            let (n, s) = l.split_once(' ').expect("twin NAME STATES");
            (n.to_string(), s.parse().expect("a state count"))
        })
        .collect()
}

#[test]
fn the_state_bound_leaves_out_only_the_listed_checks() {
    let all = twinnable();
    assert!(all.len() > 9, "{all:?}");
    let over: Vec<&str> = all
        .iter()
        .filter(|(_, s)| *s > MAX_STATES)
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(
        over, LEFT_OUT,
        "twinnable checks above {MAX_STATES} states: list them in LEFT_OUT or raise the bound"
    );
}

#[test]
fn twin_counts_and_verdicts_equal_wbspec() {
    if !tools("twin_counts_and_verdicts_equal_wbspec") {
        return;
    }
    // every twinnable check of at most MAX_STATES states (LEFT_OUT: the
    // others);
    // counts do not depend on gcc's optimisation, so -O0 keeps this quick
    let out = spin_twin(&[
        "compare",
        "--repeat",
        "1",
        "--max-states",
        &MAX_STATES.to_string(),
        "--gcc-opt",
        "-O0",
    ]);
    let text = common::stdout(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}\n{err}");
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert!(rows.iter().all(|l| l.ends_with(" equal")), "{text}");
    // every twinnable check within the bound was compared
    for (name, states) in twinnable() {
        let compared = rows
            .iter()
            .any(|l| l.split_whitespace().next() == Some(name.as_str()));
        assert!(
            compared || states > MAX_STATES,
            "{name} not compared:\n{text}"
        );
    }
    // the family: plain, max_pages, extension, proposals and mutants
    for name in [
        "t-trunc-vs-wb-2p",
        "t-trunc-drop-2p",
        "t-trunc-extend-2p",
        "b-m-trunc-wb-2t",
        "m-a2-crop-old-size",
        "m-a1-flush-ignores-nowrite",
        "m-e-invalidate-under-nowrite",
        "pn-trunc-wb-2t",
        "m-c1-wb-ignores-writeback",
    ] {
        let row = rows
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} not compared:\n{text}"));
        // both counts printed and equal
        let f: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(f[1], f[2], "{row}");
    }
    // the mutants are caught by the twin's assertions as by wbspec
    let row = |n: &str| *rows.iter().find(|l| l.starts_with(n)).unwrap();
    assert!(row("m-a2-crop-old-size ").contains(" a2,a3 "), "{text}");
    assert!(
        row("m-a1-flush-ignores-nowrite ").contains(" a1,a2,a3,g-bugon "),
        "{text}"
    );
    assert!(
        row("m-e-invalidate-under-nowrite ").contains(" e "),
        "{text}"
    );
    assert!(row("t-trunc-vs-wb-2p ").contains(" - "), "{text}");
}

#[test]
fn a_wrong_twin_is_reported_different() {
    if !tools("a_wrong_twin_is_reported_different") {
        return;
    }
    // The comparison can fail: a twin whose fuse_send_writepage forgets
    // the witness event of a crop merges states wbspec keeps apart.
    let dir = common::tmpdir();
    let model = common::repo_root().join("spin/fuse.pml");
    let text = std::fs::read_to_string(&model).unwrap();
    let broken = text.replacen("ev = EV_CROP", "skip", 1);
    assert_ne!(broken, text, "the mutation applies");
    let path = dir.path().join("fuse.pml");
    std::fs::write(&path, broken).unwrap();
    let out = spin_twin(&[
        "--model",
        path.to_str().unwrap(),
        "compare",
        "--repeat",
        "1",
        "--gcc-opt",
        "-O0",
        "t-trunc-vs-wb-2p",
    ]);
    let text = common::stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("DIFFERENT"), "{text}");
}

#[test]
fn untwinnable_checks_are_refused_with_a_reason() {
    // no spin needed: the configuration mapping alone
    let out = spin_twin(&["flags", "t-large-odirect-3p"]);
    common::one_line_error(&out, "no twin");
    let out = spin_twin(&["flags", "t-trunc-drop-2p"]);
    assert!(out.status.success());
    assert_eq!(
        common::stdout(&out).trim(),
        "-DNP=2 -DINIT_SIZE=2 -DCACHED=3 -DDIRTY=3 -DNW=2 -DMAX_PAGES=1 -DNT=2 -DMAXQ=4 \
         -DTASK0=WB,0,0 -DTASK1=TRUNC,1,0"
    );
}
