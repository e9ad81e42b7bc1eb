//! Runs the whole real-kernel scenario suite once. Needs root and /dev/fuse:
//! without them it skips, saying so, unless WBSPEC_REQUIRE_KERNEL=1 (set by
//! .ci/run) makes that a failure.
use wbspec_harness::conform::{conform_trace, Class, Conformance};
use wbspec_harness::require::{may_run, rerun_test, KERNEL};
use wbspec_harness::runner::{cannot_run, run_suite, summary, RunOptions};

/// Without root the suite skips, saying so; with WBSPEC_REQUIRE_KERNEL=1
/// it fails (as nobody when this test runs as root).
#[test]
fn missing_kernel_skips_or_fails_as_required() {
    let (ok, out) = rerun_test("real_kernel_suite", KERNEL, false, &[], true);
    assert!(ok, "{out}");
    assert!(
        out.contains("skipping the real-kernel suite: needs root and /dev/fuse"),
        "{out}"
    );
    let (ok, out) = rerun_test("real_kernel_suite", KERNEL, true, &[], true);
    assert!(!ok, "{out}");
    assert!(
        out.contains("the real-kernel suite cannot run: needs root and /dev/fuse"),
        "{out}"
    );
}

#[test]
fn real_kernel_suite() {
    if !may_run(KERNEL, "the real-kernel suite", cannot_run()) {
        return;
    }
    let before = wbspec_harness::mount::fuse_mount_lines();
    let opts = RunOptions::new(env!("CARGO_BIN_EXE_fuse-recorder").into());
    let outcomes = run_suite(&[], &opts, |o| println!("{}", o.line()));
    println!("{}", summary(&outcomes));
    let failed: Vec<String> = outcomes
        .iter()
        .filter(|o| o.outcome == "fail")
        .map(|o| o.line())
        .collect();
    assert!(
        failed.is_empty(),
        "failed scenarios:\n{}",
        failed.join("\n")
    );
    assert!(outcomes.len() >= 25);
    // a scenario that skips (e.g. no large tmpfs folio) is a failure where
    // the machine must run them all
    let skipped: Vec<String> = outcomes
        .iter()
        .filter(|o| o.outcome == "skipped")
        .map(|o| o.line())
        .collect();
    assert!(
        skipped.is_empty() || !wbspec_harness::require::required(KERNEL),
        "{KERNEL} is set, but scenarios skipped:\n{}",
        skipped.join("\n")
    );
    // Trace conformance (docs/conformance.md): every modelled scenario's
    // trace must be a behaviour of the model.
    let t0 = std::time::Instant::now();
    let mut bad = vec![];
    let mut conforming = 0;
    for o in &outcomes {
        let c = conform_trace(&o.trace, Some(&o.name)).unwrap_or_else(|e| Conformance {
            word: format!("ERROR ({e})"),
            class: Class::DoesNotConform,
            detail: None,
        });
        println!("Conform {} kernel={} model={}", o.name, o.outcome, c.word);
        match c.class {
            Class::DoesNotConform => {
                bad.push(format!("{}: {}", o.name, c.detail.unwrap_or(c.word)))
            }
            Class::Conforms => conforming += 1,
            Class::ConformsToCut | Class::NotModelled => {}
        }
    }
    println!(
        "conformance: {conforming} conform, {} ms",
        t0.elapsed().as_millis()
    );
    assert!(bad.is_empty(), "non-conforming traces:\n{}", bad.join("\n"));
    assert!(conforming >= 27, "only {conforming} traces conform");
    // Safety self-test (after the suite, never concurrently): a body stuck in
    // fsync on a held WRITE must be cut off by the deadline + fusectl abort.
    let mut o2 = opts.clone();
    o2.hold_timeout_ms = 30_000;
    o2.scenario_deadline = std::time::Duration::from_millis(1000);
    let st = run_suite(&["x_stuck_body".to_string()], &o2, |o| {
        println!("{}", o.line())
    });
    assert_eq!(st.len(), 1);
    assert_eq!(
        st[0].failed_check.as_deref(),
        Some("deadline"),
        "{}",
        st[0].line()
    );
    assert!(st[0].wall_ms < 10_000, "{}", st[0].line());
    // Only this process's mounts count (its mount points are named
    // wbspec-<pid>-…): another suite running on the machine may mount too.
    let mine = |v: Vec<String>| -> Vec<String> {
        let tag = format!("wbspec-{}-", std::process::id());
        v.into_iter().filter(|l| l.contains(&tag)).collect()
    };
    let after = wbspec_harness::mount::fuse_mount_lines();
    assert_eq!(
        mine(before),
        mine(after),
        "FUSE mounts left behind by the suite"
    );
}
