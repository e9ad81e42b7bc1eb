//! Runs the whole real-kernel scenario suite once. Needs root and /dev/fuse:
//! without them it skips, saying so, unless WBSPEC_REQUIRE_KERNEL=1 (set by
//! .ci/run) makes that a failure.
use wbspec_harness::conform::{conform_trace, Class, Conformance};
use wbspec_harness::require::{may_run, rerun_test, KERNEL};
use wbspec_harness::runner::{cannot_run, run_suite, summary, RunOptions};

/// The random-workload seeds CI replays (`wbspec conform --random 1 --seed
/// S` runs one of them by hand).
const RANDOM_SEEDS: &[u64] = &[1, 2, 3, 5, 8, 13, 21, 34];

/// The two tests of this binary run one at a time: the other one forks
/// (rerun_test), and a child forked while a scenario has a file of its
/// mount open closes its copy at exec, which sends a FLUSH from the
/// child's pid into that scenario's trace (seen: "FLUSH u=18 from pid
/// 5230, which is not the pid of a pending call").
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Without root the suite skips, saying so; with WBSPEC_REQUIRE_KERNEL=1
/// it fails (as nobody when this test runs as root).
#[test]
fn missing_kernel_skips_or_fails_as_required() {
    let _one = one_at_a_time();
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
    let _one = one_at_a_time();
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
    // every scenario of the table ran, once
    let table: Vec<&str> = wbspec_harness::scenarios::all()
        .iter()
        .map(|s| s.name)
        .collect();
    let names: Vec<&str> = outcomes.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, table, "the suite did not run the scenario table");
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
    let mut conforming = vec![];
    let mut not_modelled = vec![];
    for o in &outcomes {
        if o.outcome == "skipped" {
            continue; // allowed above only where the machine need not run it
        }
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
            Class::Conforms => conforming.push(o.name.clone()),
            Class::ConformsToCut => bad.push(format!(
                "{}: {} (expected to conform to its end)",
                o.name, c.word
            )),
            Class::NotModelled => not_modelled.push((o.name.clone(), c.word)),
        }
    }
    println!(
        "conformance: {} conform, {} not modelled, {} ms",
        conforming.len(),
        not_modelled.len(),
        t0.elapsed().as_millis()
    );
    assert!(bad.is_empty(), "non-conforming traces:\n{}", bad.join("\n"));
    // not modelled: exactly the declared scenarios, for the declared reason
    let ran = |n: &&str| {
        outcomes
            .iter()
            .any(|o| o.name == *n && o.outcome != "skipped")
    };
    // Scenarios whose trace the model cannot express declare it in their
    // definition (`Scenario::outside_model`, docs/conformance.md): exactly
    // these are "not modelled", for the declared reason; every other
    // scenario of the table must conform, to its end.
    let scenarios = wbspec_harness::scenarios::all();
    let outside = |n: &str| {
        scenarios
            .iter()
            .find(|s| s.name == n)
            .and_then(|s| s.outside)
    };
    assert!(
        !scenarios.iter().all(|s| s.outside.is_none()),
        "no scenario declares itself outside the model: the check below would be vacuous"
    );
    let declared: Vec<&str> = table
        .iter()
        .copied()
        .filter(|n| outside(n).is_some())
        .filter(ran)
        .collect();
    // A scenario declaring `if_evicted` may be not modelled, for its
    // reason, when its trace shows the eviction (READs the scenario does
    // not otherwise make): the kernel may evict clean folios at any time
    // (the machine's memory pressure, DAMON pageout), so its verdict
    // depends on the machine. Without READs it must conform.
    let evicted: Vec<&str> = not_modelled
        .iter()
        .filter(|(n, word)| {
            let sc = scenarios.iter().find(|s| s.name == n.as_str());
            let trace = outcomes.iter().find(|o| &o.name == n).map(|o| &o.trace);
            sc.filter(|s| s.outside.is_none())
                .and_then(|s| s.if_evicted)
                .is_some_and(|o| word.contains(o.because))
                && trace.is_some_and(|t| wbspec_harness::scenario_kit::evicted(t))
        })
        .map(|n| n.0.as_str())
        .collect();
    if !evicted.is_empty() {
        println!("not modelled after an eviction (declared): {evicted:?}");
    }
    let got: Vec<&str> = not_modelled
        .iter()
        .map(|n| n.0.as_str())
        .filter(|n| !evicted.contains(n))
        .collect();
    assert_eq!(got, declared, "not modelled: {not_modelled:?}");
    for (name, word) in not_modelled
        .iter()
        .filter(|n| !evicted.contains(&n.0.as_str()))
    {
        let why = outside(name).map_or("", |d| d.because);
        assert!(
            word.starts_with("not-modelled (") && word.contains(why),
            "{name}: {word} (declared: {why})"
        );
    }
    // conforming: exactly the rest of the table
    let expected: Vec<&str> = table
        .iter()
        .copied()
        .filter(|n| ran(n) && !declared.contains(n) && !evicted.contains(n))
        .collect();
    assert_eq!(conforming, expected, "the conforming set differs");
    // Seeded random workloads (random.rs), a small fixed set of seeds:
    // each conforms or is not modelled with a reason; a violation names
    // the seed and the first event the model cannot produce.
    for seed in RANDOM_SEEDS {
        let o =
            wbspec_harness::runner::run_one(&wbspec_harness::random::scenario(*seed, None), &opts);
        println!("{}", o.line());
        assert_eq!(o.outcome, "pass", "seed {seed}: {}", o.line());
        let c = conform_trace(&o.trace, Some(&o.name)).unwrap_or_else(|e| Conformance {
            word: format!("ERROR ({e})"),
            class: Class::DoesNotConform,
            detail: None,
        });
        println!("Conform {} seed={seed} model={}", o.name, c.word);
        assert!(
            c.class == Class::Conforms
                || (c.class == Class::NotModelled && c.word.starts_with("not-modelled (")),
            "seed {seed}: {}",
            c.detail.unwrap_or(c.word)
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
