//! End-to-end tests of the `wbspec` command: the whole catalogue, the JSON
//! report, counterexample quality, and errors on bad input.

mod common;
use common::*;
use serde_json::Value;
use stateright::Expectation;
use std::path::PathBuf;
use wbspec::catalogue;
use wbspec::check::Check;

/// The main job: every check runs to completion with the expected
/// verdicts, pinned state counts and required witnesses.
#[test]
fn whole_catalogue_matches_expectations() {
    let dir = tmpdir();
    let json = dir.path().join("report.json");
    let md = dir.path().join("results.md");
    let out = wbspec(&[
        "check",
        "--all",
        "--json",
        json.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "wbspec check --all failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("MISMATCH"), "{stdout}");
    // docs/results.md is generated, never hand-edited: it must match.
    let committed = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/results.md"),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&md).unwrap(),
        committed,
        "docs/results.md is stale: run cargo run --release -- check --all --update-docs"
    );
    // Every generated block of README.md, harness/README.md,
    // docs/citing.md, docs/performance.md and docs/model.md is what this
    // run would write (no second run of the catalogue: the blocks are
    // rendered from the report).
    let docs = wbspec(&["docs", "--report", json.to_str().unwrap(), "--check"]);
    assert!(
        docs.status.success(),
        "{}{}",
        String::from_utf8_lossy(&docs.stdout),
        String::from_utf8_lossy(&docs.stderr)
    );
    stale_docs_are_named_and_regenerated(&json);
    assert!(stdout.contains("Mutation score: "), "{stdout}");
    assert!(!stdout.contains("SURVIVED"), "{stdout}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(doc["tool"]["commit"].is_string() && doc["tool"]["dirty"].is_boolean());
    assert!(doc["models"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["name"] == "fuse"));
    assert!(!stdout.contains("UNOBSERVED"), "{stdout}");
    assert!(doc["switches"].as_array().unwrap().len() >= 16);
    let checks = doc["checks"].as_array().unwrap();
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    assert_eq!(checks.len(), cat.entries.len());
    assert!(checks.len() >= 12);

    for c in checks {
        let name = c["name"].as_str().unwrap();
        assert_eq!(c["complete"], true, "{name} incomplete");
        assert_eq!(c["as_expected"], true, "{name}");
        assert!(
            c["pinned_states"].is_u64(),
            "{name} has no pinned state count"
        );
        assert_eq!(c["pinned_states"], c["unique_states"], "{name}");
        for p in c["properties"].as_array().unwrap() {
            assert_eq!(p["expected"], p["observed"], "{name} {}", p["name"]);
            let violated = p["observed"] == "violated";
            assert_eq!(
                violated,
                p["counterexample"].is_object(),
                "{name} {}",
                p["name"]
            );
        }
    }
    // Every always-property of every model: violated by at least one
    // mutant (the check can fail), and holding in at least one check of a
    // real kernel state.
    let mut models: Vec<&catalogue::Entry> = Vec::new();
    for e in &cat.entries {
        if !models.iter().any(|m| m.model == e.model) {
            models.push(e);
        }
    }
    let props = |e: &catalogue::Entry, x: Expectation| -> Vec<&'static str> {
        e.check
            .property_defs()
            .iter()
            .filter(|p| p.expectation == x)
            .map(|p| p.name)
            .collect()
    };
    let always: Vec<&str> = models
        .iter()
        .flat_map(|e| props(e, Expectation::Always))
        .collect();
    let witnesses: Vec<&str> = models
        .iter()
        .flat_map(|e| props(e, Expectation::Sometimes))
        .collect();
    for prop in &always {
        let killed = checks.iter().any(|c| {
            c["tags"].as_array().unwrap().iter().any(|t| t == "mutant")
                && c["properties"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["name"] == *prop && p["observed"] == "violated")
        });
        let real_violation_or_mutant = checks.iter().any(|c| {
            c["properties"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == *prop && p["observed"] == "violated")
        });
        assert!(
            killed || (*prop == "b1" && real_violation_or_mutant),
            "no mutant violates {prop}"
        );
        let holds_somewhere = checks.iter().any(|c| {
            !c["tags"].as_array().unwrap().iter().any(|t| t == "mutant")
                && c["properties"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["name"] == *prop && p["observed"] == "holds")
        });
        assert!(
            holds_somewhere,
            "{prop} never checked on a real kernel state"
        );
    }
    // Every witness is reached by some check.
    for w in witnesses {
        let reached = checks.iter().any(|c| {
            c["witnesses"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["name"] == w && x["reached"] == true)
        });
        assert!(reached, "witness {w} is never reached");
    }
}

/// Counterexamples replay, end at their first violating state, and no
/// shorter path exists (checked against a plain BFS depth bound).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), &t).unwrap();
        }
    }
}

/// On a copy of the checkout's docs: a hand-edited number in a generated
/// block makes `docs --check` exit 1 naming the block and the command to
/// run; `docs` (writing) restores it, and then `--check` passes. Uses the
/// report of the one `check --all` run above.
fn stale_docs_are_named_and_regenerated(report: &std::path::Path) {
    let root = repo_root();
    let dir = tmpdir();
    let d = dir.path();
    for f in [
        "Cargo.toml",
        "README.md",
        "harness/README.md",
        "docs/results.md",
        "docs/citing.md",
        "docs/performance.md",
        "docs/model.md",
    ] {
        std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
        std::fs::copy(root.join(f), d.join(f)).unwrap();
    }
    for t in [
        "checks/catalogue",
        "checks/facts",
        "harness/tests/traces/6.18.44",
        "harness/tests/traces/6.18.44-gup",
        "harness/tests/traces/6.18.44-rerun",
        "harness/tests/traces/6.12.117",
        "harness/tests/traces/6.1.0-57",
        "harness/tests/traces/altered",
    ] {
        copy_tree(&root.join(t), &d.join(t));
    }
    let readme = std::fs::read_to_string(d.join("README.md")).unwrap();
    let n = wbspec_harness::scenarios::all().len();
    let tampered = readme.replacen(
        &format!("<!-- wbspec:gen n-scenarios -->{n}<"),
        "<!-- wbspec:gen n-scenarios -->58<",
        1,
    );
    assert_ne!(tampered, readme, "README.md has no n-scenarios block");
    // README.md a symbolic link: docs replaces its target, keeps the link
    std::fs::write(d.join("README.real.md"), &tampered).unwrap();
    std::fs::remove_file(d.join("README.md")).unwrap();
    std::os::unix::fs::symlink("README.real.md", d.join("README.md")).unwrap();
    // the copy is no git checkout: its tool is commit `unknown`, clean,
    // and docs --report refuses a report of another tool
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    v["tool"]["commit"] = "unknown".into();
    v["tool"]["dirty"] = false.into();
    let copy = d.join("report.json");
    std::fs::write(&copy, v.to_string()).unwrap();
    let r = copy.to_str().unwrap();
    let check = wbspec_in(d, &["docs", "--report", r, "--check"]);
    let out = stdout(&check);
    assert_eq!(check.status.code(), Some(1), "{out}");
    assert!(
        out.contains("README.md: generated block 'n-scenarios' is stale")
            && out.contains("cargo run --release -- check --all --update-docs"),
        "{out}"
    );
    assert!(!out.contains("harness/README.md"), "{out}");
    assert_eq!(
        std::fs::read_to_string(d.join("README.md")).unwrap(),
        tampered
    );
    let fix = wbspec_in(d, &["docs", "--report", r]);
    assert!(
        fix.status.success(),
        "{}",
        String::from_utf8_lossy(&fix.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(d.join("README.md")).unwrap(),
        readme
    );
    assert!(std::fs::symlink_metadata(d.join("README.md"))
        .unwrap()
        .file_type()
        .is_symlink());
    let again = wbspec_in(d, &["docs", "--report", r, "--check"]);
    assert!(again.status.success(), "{}", stdout(&again));
}

/// `docs` and `--update-docs` refuse bad input with a one-line error
/// before running anything.
#[test]
fn docs_bad_input_is_a_usage_error() {
    let dir = tmpdir();
    let bad = dir.path().join("r.json");
    std::fs::write(&bad, "{\"checks\": []}").unwrap();
    one_line_error(
        &wbspec(&["docs", "--report", bad.to_str().unwrap(), "--check"]),
        "report schema missing",
    );
    std::fs::write(&bad, "not json").unwrap();
    one_line_error(
        &wbspec(&["docs", "--report", bad.to_str().unwrap()]),
        "not a JSON report",
    );
    one_line_error(
        &wbspec(&["check", "t-trunc-vs-wb-2p", "--update-docs"]),
        "--update-docs needs --all",
    );
    one_line_error(
        &wbspec(&["check", "--all", "--update-docs", "--max-states", "10"]),
        "--update-docs refused with --max-states",
    );
}

#[test]
fn counterexamples_are_shortest_and_replay() {
    use wbspec::check::Typed;
    use wbspec_models::fuse::FuseModel;
    use wbspec_models::spec::{property_index, Spec};
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let mut seen = 0;
    for e in cat
        .entries
        .iter()
        .filter(|e| e.model == "fuse" && (e.has_tag("mutant") || e.has_tag("dio")))
    {
        let cfg = serde_json::from_value(e.check.config_json()).unwrap();
        let m = <FuseModel as Spec>::build(&cfg).unwrap();
        for (prop, v) in &e.expect {
            if *v != catalogue::Verdict::Violated {
                continue;
            }
            let i = property_index::<FuseModel>(prop).unwrap();
            let cond = |s: &<FuseModel as stateright::Model>::State| m.condition(i, s);
            let (actions, encoded) = wbspec::runner::shortest(&m, i).expect("counterexample");
            let states = wbspec::runner::replay(&m, 0, &actions).unwrap();
            let last = states.len() - 1;
            assert!(
                !cond(&states[last]),
                "{} {prop}: last state must violate",
                e.name
            );
            for (k, s) in states[..last].iter().enumerate() {
                assert!(cond(s), "{} {prop}: state {k} already violates", e.name);
            }
            // no violating state at a smaller depth
            let mut frontier = vec![states[0]];
            let mut seen_states = std::collections::HashSet::new();
            for _depth in 0..actions.len() {
                let mut next = Vec::new();
                for s in &frontier {
                    assert!(cond(s), "{} {prop}: shorter violation exists", e.name);
                    let mut acts = Vec::new();
                    stateright::Model::actions(&m, s, &mut acts);
                    for a in acts {
                        let ns = stateright::Model::next_state(&m, s, a).unwrap();
                        if seen_states.insert(ns) {
                            next.push(ns);
                        }
                    }
                }
                frontier = next;
            }
            assert_eq!(encoded.split('/').count(), actions.len() + 1);
            // the generic Check gives the same counterexample
            let t = Typed { model: m.clone() };
            let cx = t.shortest(prop).unwrap().unwrap();
            assert_eq!(cx.encoded, encoded);
            t.replay(prop, &cx).unwrap();
            seen += 1;
        }
    }
    assert!(seen >= 6, "only {seen} counterexamples checked");
}

#[test]
fn unknown_check_is_a_usage_error() {
    one_line_error(
        &wbspec(&["check", "no-such-check"]),
        "unknown check 'no-such-check'",
    );
    one_line_error(&wbspec(&["check"]), "--all");
}

#[test]
fn malformed_catalogues_are_rejected_with_the_problem_named() {
    let cases: &[(&str, &str)] = &[
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\npages = 1\ninit_size = 1\ntasks = [\"fsync\"\n", "bad.toml:"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"Z\"\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\n", "unknown kernel state 'Z'"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\npages = 1\ninit_size = 1\ntasks = [\"splice 0\"]\n", "unknown task 'splice 0'"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\nexpect = { zz = \"holds\" }\n", "unknown property 'zz'"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\npages = 17\ninit_size = 1\ntasks = [\"fsync\"]\n", "pages must be 1..=16, got 17"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\ncolour = 3\n", "unknown field"),
        // a value of the wrong type names its key (and its index)
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\npages = 1\ninit_size = 1\ndaemon_threads = 1.5\ntasks = [\"fsync\"]\n", "daemon_threads: invalid type: floating point `1.5`, expected u8"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\nunit_bytes = [12, -1]\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\n", "unit_bytes[1]: invalid value: integer `-1`"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"V1\"\nmodel = \"nowait\"\ntasks = [3]\n", "tasks[0]: invalid type: integer `3`"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\nvariant = [\"mut_nothing\"]\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\n", "unknown variant flag"),
        // an io-mode combination the kernel refuses: MAP_SHARED of a
        // FOPEN_DIRECT_IO open without direct_io_allow_mmap
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T2\"\npages = 1\ninit_size = 1\ntasks = [\"dio-mmap 0\"]\n", "ENODEV"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T2\"\npages = 1\ninit_size = 1\nerrors = [\"WRITE\", \"MKNOD\"]\ntasks = [\"fsync\"]\n", "errors: unknown request 'MKNOD'"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T2\"\npages = 1\ninit_size = 1\ndaemon_threads = 4\ntasks = [\"fsync\"]\n", "daemon_threads must be 1..=3"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T2\"\npages = 1\ninit_size = 1\nshort = [\"SETATTR\"]\ntasks = [\"fsync\"]\n", "short: 'SETATTR' cannot be answered short"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T2\"\npages = 1\ninit_size = 1\ntasks = [\"remote-truncate 0\"]\n", "write-through mounts"),
        // sizes below a page (issue 18): configurations no kernel has, and
        // ones the model does not step through
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\nunits_per_page = 3\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\n", "units_per_page is 1, 2 or 4"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\npage_size = 8192\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\n", "page_size 8192"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\nunits_per_page = 4\nmax_write_bytes = 2048\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\n", "raises it to 4096"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\nunits_per_page = 4\npages = 1\ninit_size = \"5u\"\ntasks = [\"fsync\"]\n", "init_size 5u exceeds 4 units"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\nunits_per_page = 4\npages = 1\ninit_size = 1\ntasks = [\"write 200+200\"]\n", "'200' is too large"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"C\"\npage_size = 16384\nmax_write_bytes = 4096\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\n", "blocks_per_page"),
        ("[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T19\"\npage_size = 16384\nunits_per_page = 4\nmax_read_bytes = 4096\npages = 1\ninit_size = 1\ntasks = [\"read 0+1\"]\n", "modelled up to 6.18"),
    ];
    for (text, needle) in cases {
        let dir = tmpdir();
        std::fs::write(dir.path().join("bad.toml"), text).unwrap();
        let out = wbspec(&["--catalogue", dir.path().to_str().unwrap(), "list"]);
        one_line_error(&out, needle);
    }
    let dir = tmpdir();
    one_line_error(
        &wbspec(&["--catalogue", dir.path().to_str().unwrap(), "list"]),
        "no .toml file",
    );
}

/// A one-check catalogue with `extra` lines: its one-line error.
fn catalogue_error(extra: &str) -> String {
    const HEAD: &str = "[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\n";
    let dir = tmpdir();
    std::fs::write(dir.path().join("bad.toml"), format!("{HEAD}{extra}\n")).unwrap();
    let out = wbspec(&["--catalogue", dir.path().to_str().unwrap(), "list"]);
    one_line_error(&out, "check 'x': ");
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// How a malformed catalogue's error names its key: an unknown key
/// once (it was `colour: unknown field `colour``), and a quoted key
/// with a dot not as the nested key it is not (`"a.b" = 1` read
/// `a.b: unknown field `a.b``; models/src/common `key_path` quotes it
/// where it is on a path).
#[test]
fn malformed_catalogue_errors_name_their_key_once_and_as_written() {
    let err = catalogue_error;
    let e = err("colour = 3");
    assert!(
        e.contains("check 'x': unknown field `colour`, expected"),
        "{e}"
    );
    assert_eq!(e.matches("colour").count(), 1, "{e}");
    let e = err("\"a.b\" = 1");
    assert!(
        e.contains("check 'x': unknown field `a.b`, expected"),
        "{e}"
    );
    assert!(!e.contains("a.b: "), "{e}");
    let e = err("a.b = 1");
    assert!(e.contains("check 'x': unknown field `a`, expected"), "{e}");
    // the nowait model's keys go the same way
    let dir = tmpdir();
    std::fs::write(
        dir.path().join("bad.toml"),
        "[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"V1\"\nmodel = \"nowait\"\ntasks = [\"a\"]\n\"p.q\" = 1\n",
    )
    .unwrap();
    let out = wbspec(&["--catalogue", dir.path().to_str().unwrap(), "list"]);
    one_line_error(&out, "check 'x': unknown field `p.q`, expected");
}

/// An error in the `congested` table comes after the colon every
/// `check 'x': ...` error has (it read `check 'x' congested: ...`).
#[test]
fn congested_table_errors_have_the_colon_of_other_errors() {
    for (extra, want) in [
        (
            "congested = { expect = { zz = \"holds\" } }",
            "check 'x': congested: unknown property 'zz'",
        ),
        (
            "congested = { states = 0 }",
            "check 'x': congested: `states` must be a positive count",
        ),
    ] {
        let e = catalogue_error(extra);
        assert!(e.contains(want), "{extra}: {e}");
    }
}

#[test]
fn a_differing_verdict_exits_1() {
    let dir = tmpdir();
    std::fs::write(
        dir.path().join("w.toml"),
        "[[check]]\nname = \"w\"\nquestion = \"q\"\nkernel = \"T\"\npages = 1\ninit_size = 1\ncached = [0]\ntasks = [\"write 0+1\", \"dio-read 0+1\"]\n",
    )
    .unwrap();
    let out = wbspec(&["--catalogue", dir.path().to_str().unwrap(), "check", "w"]);
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("Check w b1 Sometimes"), "{s}");
    assert!(s.contains("MISMATCH expected holds"), "{s}");
}

/// docs/model.md's recipe for a new check, followed: a check without
/// pins, `check NAME --update-pins` (which pins its `-bg1` twin too, in
/// its `congested` entry), then the check and its twin are as expected —
/// the judgement `check --all` makes of each check (`CheckResult::ok`).
#[test]
fn a_new_check_is_green_after_one_update_pins() {
    let dir = tmpdir();
    for f in std::fs::read_dir(catalogue_dir()).unwrap() {
        let p = f.unwrap().path();
        std::fs::copy(&p, dir.path().join(p.file_name().unwrap())).unwrap();
    }
    let new = dir.path().join("99-new.toml");
    std::fs::write(
        &new,
        "[[check]]\nname = \"t2-new-recipe\"\nquestion = \"q\"\nkernel = \"T2\"\npages = 1\ninit_size = 1\ncached = [0]\ntasks = [\"write 0+1\", \"dio-read 0+1\"]\n",
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    // before: both unpinned, exit 1
    let out = wbspec(&[
        "--catalogue",
        d,
        "check",
        "t2-new-recipe",
        "t2-new-recipe-bg1",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("MISMATCH unpinned"));
    let out = wbspec(&["--catalogue", d, "check", "t2-new-recipe", "--update-pins"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}\n{err}", stdout(&out));
    assert!(err.contains("running t2-new-recipe-bg1"), "{err}");
    assert!(err.contains("pinned 2 checks in"), "{err}");
    let text = std::fs::read_to_string(&new).unwrap();
    assert!(text.contains("\nstates = "), "{text}");
    assert!(text.contains("congested = { states = "), "{text}");
    let out = wbspec(&[
        "--catalogue",
        d,
        "check",
        "t2-new-recipe",
        "t2-new-recipe-bg1",
    ]);
    let s = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{s}");
    assert!(!s.contains("MISMATCH") && !s.contains("unpinned"), "{s}");
    assert_eq!(s.matches("\nStates ").count(), 2, "{s}");
    // the same judgement as check --all's, per check
    let cat = catalogue::load_dir(dir.path()).unwrap();
    let set = wbspec::outcome::Settings::default();
    for n in ["t2-new-recipe", "t2-new-recipe-bg1"] {
        let e = cat.entries.iter().find(|e| e.name == n).unwrap();
        assert!(wbspec::outcome::run(e, &set, false).unwrap().ok(), "{n}");
    }
}
