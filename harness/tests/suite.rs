//! Runs the whole real-kernel scenario suite once (root + /dev/fuse needed;
//! otherwise every scenario is reported skipped and the test passes).
use wbspec_harness::conform::conform_trace;
use wbspec_harness::runner::{cannot_run, run_suite, summary, RunOptions};

/// The random-workload seeds CI replays (`wbspec conform --random 1 --seed
/// S` runs one of them by hand).
const RANDOM_SEEDS: &[u64] = &[1, 2, 3, 5, 8, 13, 21, 34];

#[test]
fn real_kernel_suite() {
    if let Some(why) = cannot_run() {
        for s in wbspec_harness::scenarios::all() {
            println!("Scenario {} skipped: {why}", s.name);
        }
        println!("skipping the real-kernel suite: {why}");
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
    // Trace conformance (docs/conformance.md): every modelled scenario's
    // trace must be a behaviour of the model.
    let t0 = std::time::Instant::now();
    let mut bad = vec![];
    let mut conforming = 0;
    for o in &outcomes {
        let (word, ok, detail) = conform_trace(&o.trace, Some(&o.name))
            .unwrap_or_else(|e| (format!("ERROR ({e})"), false, None));
        println!("Conform {} kernel={} model={word}", o.name, o.outcome);
        if !ok {
            bad.push(format!("{}: {}", o.name, detail.unwrap_or(word)));
        } else if word == "conforms" {
            conforming += 1;
        }
    }
    println!(
        "conformance: {conforming} conform, {} ms",
        t0.elapsed().as_millis()
    );
    assert!(bad.is_empty(), "non-conforming traces:\n{}", bad.join("\n"));
    assert!(conforming >= 40, "only {conforming} traces conform");
    // Seeded random workloads (random.rs), a small fixed set of seeds:
    // each conforms or is not modelled with a reason; a violation names
    // the seed and the first event the model cannot produce.
    for seed in RANDOM_SEEDS {
        let o = wbspec_harness::runner::run_one(&wbspec_harness::random::scenario(*seed), &opts);
        println!("{}", o.line());
        assert_eq!(o.outcome, "pass", "seed {seed}: {}", o.line());
        let (word, ok, detail) = conform_trace(&o.trace, Some(&o.name))
            .unwrap_or_else(|e| (format!("ERROR ({e})"), false, None));
        println!("Conform {} seed={seed} model={word}", o.name);
        assert!(
            ok && (word == "conforms" || word.starts_with("not-modelled (")),
            "seed {seed}: {}",
            detail.unwrap_or(word)
        );
    }
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
