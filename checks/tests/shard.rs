//! Sharded runs and their merge, the run bounds (--max-states,
//! --max-seconds) and the catalogue's symmetry opt-in.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// A report without what differs from run to run (timings, the tool).
fn comparable(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("tool");
    }
    if let Some(cs) = v["checks"].as_array_mut() {
        for c in cs {
            c.as_object_mut().unwrap().remove("seconds");
        }
    }
    v
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The lines after the verdict lines, without the timing.
fn catalogue_lines(out: &std::process::Output) -> Vec<String> {
    stdout(out)
        .lines()
        .filter(|l| {
            l.starts_with("Mutation score")
                || l.starts_with("Switch ")
                || l.starts_with("Not as expected")
        })
        .map(String::from)
        .chain(
            stdout(out)
                .lines()
                .filter(|l| l.starts_with("Summary"))
                .map(|l| {
                    // drop the trailing ", 12.3s"
                    l.rsplit_once(", ").map_or(l, |(a, _)| a).to_string()
                }),
        )
        .collect()
}

#[test]
fn sharded_runs_merge_to_the_unsharded_report() {
    let d = tmpdir();
    let full = d.path().join("full.json");
    let all = wbspec(&["check", "--all", "--json", full.to_str().unwrap()]);
    let n = 3;
    let mut files = Vec::new();
    let mut names = Vec::new();
    for i in 1..=n {
        let f = d.path().join(format!("shard{i}.json"));
        let shard = format!("{i}/{n}");
        let out = wbspec(&[
            "check",
            "--all",
            "--shard",
            &shard,
            "--json",
            f.to_str().unwrap(),
        ]);
        let s = stdout(&out);
        assert!(
            !s.contains("Mutation score") && !s.contains("Switch "),
            "{s}"
        );
        let v = read_json(&f);
        assert_eq!(v["shard"]["index"], i);
        let checks = v["checks"].as_array().unwrap();
        assert!(!checks.is_empty(), "shard {shard} is empty");
        names.extend(
            checks
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_string()),
        );
        files.push(f);
    }
    // every check once
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "a check ran in two shards");
    let merged = d.path().join("merged.json");
    let mut args = vec!["merge-reports", "--json", merged.to_str().unwrap()];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    // shards given in any order
    args[3..].reverse();
    let m = wbspec(&args);
    assert_eq!(m.status.code(), all.status.code(), "{}", stdout(&m));
    assert_eq!(catalogue_lines(&m), catalogue_lines(&all));
    assert_eq!(comparable(read_json(&merged)), comparable(read_json(&full)));
    // the same split twice is deterministic
    let again = d.path().join("again.json");
    wbspec(&[
        "check",
        "--all",
        "--shard",
        "1/3",
        "--json",
        again.to_str().unwrap(),
    ]);
    assert_eq!(
        comparable(read_json(&again)),
        comparable(read_json(&files[0]))
    );
}

const TWO: &str = r#"
[[check]]
name = "a"
question = "q"
kernel = "T"
pages = 1
init_size = 1
cached = [0]
tasks = ["write 0+1", "dio-read 0+1"]
expect = { b1 = "violated" }
states = 1

[[check]]
name = "b"
question = "q"
kernel = "T"
pages = 2
init_size = 2
cached = [0, 1]
dirty = [1]
daemon_threads = 2
tasks = ["wb none", "truncate 1"]
tags = ["mutant"]
"#;

#[test]
fn merging_recomputes_the_catalogue_wide_results_and_exit_code() {
    let d = fake_checkout(TWO);
    let run = |args: &[&str]| wbspec_in(d.path(), args);
    let full = d.path().join("full.json");
    let all = run(&["check", "--all", "--json", full.to_str().unwrap()]);
    assert_eq!(all.status.code(), Some(1), "wrong pins: {}", stdout(&all));
    let s1 = d.path().join("s1.json");
    let s2 = d.path().join("s2.json");
    run(&[
        "check",
        "--all",
        "--shard",
        "1/2",
        "--json",
        s1.to_str().unwrap(),
    ]);
    run(&[
        "check",
        "--all",
        "--shard",
        "2/2",
        "--json",
        s2.to_str().unwrap(),
    ]);
    let merged = d.path().join("m.json");
    let m = run(&[
        "merge-reports",
        "--json",
        merged.to_str().unwrap(),
        s1.to_str().unwrap(),
        s2.to_str().unwrap(),
    ]);
    assert_eq!(m.status.code(), Some(1));
    assert!(stdout(&m).contains("Mutation score: 0/1 mutants killed; SURVIVED: b"));
    assert_eq!(catalogue_lines(&m), catalogue_lines(&all));
    assert_eq!(comparable(read_json(&merged)), comparable(read_json(&full)));
    // a missing shard, a repeated one, an unsharded report: one-line errors
    one_line_error(&run(&["merge-reports", s1.to_str().unwrap()]), "missing");
    one_line_error(
        &run(&["merge-reports", s1.to_str().unwrap(), s1.to_str().unwrap()]),
        "twice",
    );
    one_line_error(
        &run(&["merge-reports", full.to_str().unwrap()]),
        "not a sharded report",
    );
    one_line_error(
        &run(&["check", "a", "--shard", "1/2"]),
        "--shard needs --all",
    );
    one_line_error(&run(&["check", "--all", "--shard", "3/2"]), "--shard");
}

#[test]
fn a_bounded_run_is_incomplete_not_a_proof() {
    let out = wbspec(&["check", "t-large-dio-trunc-3p", "--max-states", "5000"]);
    assert_eq!(out.status.code(), Some(1));
    let s = stdout(&out);
    assert!(s.contains("INCOMPLETE"), "{s}");
    assert!(
        s.contains("stopped at --max-states 5000: incomplete, not a proof"),
        "{s}"
    );
    assert!(s.contains(" a1 Unknown 0 "), "{s}");
    assert!(!s.contains(" Never "), "{s}");
    let out = wbspec(&["check", "t-large-odirect-3p", "--max-seconds", "0.5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("stopped at --max-seconds 0.5: incomplete, not a proof"),
        "{}",
        stdout(&out)
    );
    // a violation found before the bound is still reported, with its trace
    let out = wbspec(&["check", "m-a2-crop-old-size", "--max-states", "100000"]);
    assert!(stdout(&out).contains("a2 Sometimes"), "{}", stdout(&out));
    one_line_error(
        &wbspec(&["check", "t-trunc-vs-wb-2p", "--max-seconds=-1"]),
        "--max-seconds",
    );
    one_line_error(
        &wbspec(&["check", "t-trunc-vs-wb-2p", "--max-states", "0"]),
        "--max-states",
    );
}

#[test]
fn the_catalogue_chooses_symmetry_and_pins_its_counts() {
    // t-large-trunc-mmap-fsync-3p, reduced by its two interchangeable
    // daemon workers
    let base = r#"
[[check]]
name = "s"
question = "q"
kernel = "T"
pages = 3
init_size = 3
cached = [0, 1, 2]
dirty = [2]
daemon_threads = 2
tasks = ["write 0+2", "mmap 2", "wb none", "truncate 1", "fsync"]
symmetry = true
"#;
    let d = fake_checkout(base);
    let run = |args: &[&str]| wbspec_in(d.path(), args);
    // (exits 1: the verdict lines it prints precede the pinning)
    run(&["check", "s", "--update-pins"]);
    let ok = run(&["check", "s"]);
    assert_eq!(ok.status.code(), Some(0), "{}", stdout(&ok));
    let s = stdout(&ok);
    let line = s.lines().find(|l| l.starts_with("States s ")).unwrap();
    assert!(line.contains(" symmetry ok"), "{line}");
    let count = |l: &str| -> u64 { l.split(' ').nth(3).unwrap().parse().unwrap() };
    let reduced = count(line);
    // without the reduction: more states (the catalogue's pin of this
    // configuration), the pins not compared
    let off = run(&["check", "s", "--no-symmetry"]);
    assert_eq!(off.status.code(), Some(0), "{}", stdout(&off));
    let so = stdout(&off);
    let full_line = so.lines().find(|l| l.starts_with("States s ")).unwrap();
    assert!(full_line.contains("not compared"), "{full_line}");
    let cat = wbspec::catalogue::load_dir(&catalogue_dir()).unwrap();
    let pinned = cat
        .entries
        .iter()
        .find(|e| e.name == "t-large-trunc-mmap-fsync-3p")
        .and_then(|e| e.states)
        .unwrap();
    assert_eq!(count(full_line), pinned, "{full_line}");
    assert!(reduced < pinned, "{line}");
    one_line_error(
        &run(&["check", "s", "--no-symmetry", "--update-pins"]),
        "--update-pins refused",
    );
    let bad = fake_checkout(&base.replace("symmetry = true", "symmetry = \"yes\""));
    one_line_error(
        &wbspec_in(bad.path(), &["list"]),
        "`symmetry` must be true or false",
    );
    one_line_error(
        &run(&["check", "s", "--engine", "stateright"]),
        "symmetry reduction needs the fast engine",
    );
}
