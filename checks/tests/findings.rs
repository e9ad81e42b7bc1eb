//! checks/facts/findings.toml against the catalogue and
//! docs/findings.md: every finding has a class from the fixed set, the
//! checks it names exist and carry the kernel labels it names, its id is
//! in docs/findings.md, every entry of docs/findings.md has a Class line,
//! and every violation the catalogue expects as "intended" belongs to a
//! finding classed intended.

mod common;
use common::*;
use std::collections::BTreeSet;
use wbspec::catalogue;

const CLASSES: &[&str] = &[
    "bug-not-reported",
    "bug-known",
    "intended",
    "hypothetical",
    "kernel-fact",
];
const KEYS: &[&str] = &[
    "id",
    "title",
    "class",
    "reference",
    "checks",
    "kernels",
    "reproduced",
    "checked",
];
/// Headings of docs/findings.md that group entries (no class of their
/// own).
const GROUPS: &[&str] = &[
    "## Direct-I/O page extraction with large folios",
    "## nowait (seed 004",
    "## Buffered readers and the background queue",
    "## Model corrections",
    "## Real kernels in a VM",
    "## Pages larger than 4 KiB",
    // proposals for findings classed in their own entries
    "## Fix proposals",
    "## The transport: aborts and the request timeout",
    "## Asynchronous direct I/O",
    "## Server notifications racing the page cache",
    "## FUSE over io_uring",
    "## FUSE_AUTO_INVAL_DATA, the client side",
];

/// How many rows of the recorded traces' verdicts.tsv files name `id` as
/// what explains their verdict (third column, first word).
fn verdict_rows_naming(id: &str) -> usize {
    let traces = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/traces");
    let mut n = 0;
    for d in std::fs::read_dir(&traces).unwrap().flatten() {
        let Ok(t) = std::fs::read_to_string(d.path().join("verdicts.tsv")) else {
            continue;
        };
        n += t
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter(|l| {
                l.split('\t')
                    .nth(2)
                    .and_then(|w| w.split_whitespace().next())
                    == Some(id)
            })
            .count();
    }
    n
}

fn strings(v: &toml::Value, what: &str) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("{what} is a list"))
        .iter()
        .map(|x| x.as_str().expect("a string").to_string())
        .collect()
}

#[test]
fn findings_facts_agree_with_catalogue_and_docs() {
    let root = repo_root();
    let text = std::fs::read_to_string(root.join("checks/facts/findings.toml")).unwrap();
    let doc: toml::Table = text.parse().expect("findings.toml parses");
    let md = std::fs::read_to_string(root.join("docs/findings.md")).unwrap();
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let findings = doc["finding"].as_array().expect("[[finding]] tables");
    assert!(findings.len() >= 20);
    let mut ids = BTreeSet::new();
    let mut intended_checks = BTreeSet::new();
    for f in findings {
        let f = f.as_table().unwrap();
        // `fixes` is optional (findings.rs validates it)
        let keys: Vec<&str> = f
            .keys()
            .map(String::as_str)
            .filter(|k| *k != "fixes" && *k != "reproducer")
            .collect();
        let mut want = KEYS.to_vec();
        want.sort();
        let mut got = keys.clone();
        got.sort();
        assert_eq!(got, want, "keys of {f:?}");
        let id = f["id"].as_str().unwrap();
        assert!(ids.insert(id.to_string()), "{id} twice");
        assert!(md.contains(id), "{id} is not in docs/findings.md");
        let title = f["title"].as_str().unwrap();
        assert!(
            !title.is_empty() && title.chars().count() <= 72,
            "{id}: title"
        );
        let class = f["class"].as_str().unwrap();
        assert!(CLASSES.contains(&class), "{id}: class {class}");
        let reference = f["reference"].as_str().unwrap();
        if class == "bug-known" || class == "intended" {
            assert!(
                !reference.is_empty(),
                "{id}: a {class} finding needs a reference"
            );
        }
        let checked = f["checked"].as_str().unwrap();
        assert!(
            checked.len() == 10 && checked.as_bytes()[4] == b'-' && checked.as_bytes()[7] == b'-',
            "{id}: checked is a date"
        );
        let checks = strings(&f["checks"], "checks");
        // A kernel fact may be shown by a real kernel's trace alone (a
        // conformance finding, docs/vm.md): then it names where.
        let reproduced = f["reproduced"].as_str().expect("reproduced is a string");
        assert!(
            !checks.is_empty() || (class == "kernel-fact" && !reproduced.is_empty()),
            "{id}: no check shows it (only a kernel fact may rest on a reproduction alone)"
        );
        if checks.is_empty() {
            // the reproduction is a recorded trace whose pinned verdict
            // names this finding (harness/tests/traces/*/verdicts.tsv,
            // checked by harness/tests/recorded_l.rs): free text in
            // `reproduced` alone would show nothing
            assert!(
                verdict_rows_naming(id) > 0,
                "{id}: no check, and no recorded trace's verdicts.tsv row names it"
            );
        }
        let mut kernels = BTreeSet::new();
        for c in &checks {
            let e = cat
                .entries
                .iter()
                .find(|e| &e.name == c)
                .unwrap_or_else(|| panic!("{id}: no catalogue check {c}"));
            kernels.insert(e.check.kernel());
            if class == "intended" {
                intended_checks.insert(c.clone());
            }
        }
        let named: BTreeSet<String> = strings(&f["kernels"], "kernels").into_iter().collect();
        if checks.is_empty() {
            assert!(!named.is_empty(), "{id}: names no kernel state");
        } else {
            assert_eq!(named, kernels, "{id}: kernels of its checks");
        }
    }
    // a violation expected as the kernel's intended behaviour is shown by
    // a finding classed intended (twins count as their parent)
    for e in cat.entries.iter().filter(|e| !e.intended.is_empty()) {
        let name = e.parent.as_ref().unwrap_or(&e.name);
        assert!(
            intended_checks.contains(name),
            "{name} expects {:?} intended, but no finding classed intended names it",
            e.intended
        );
    }
    // every entry of docs/findings.md has a Class line
    let mut heading: Option<&str> = None;
    let mut classed = false;
    let mut unclassed = Vec::new();
    for line in md.lines().chain(std::iter::once("## end")) {
        if line.starts_with("## ") || line.starts_with("### ") {
            if let Some(h) = heading {
                if !classed && !GROUPS.iter().any(|g| h.starts_with(g)) {
                    unclassed.push(h.to_string());
                }
            }
            heading = Some(line);
            classed = false;
        } else if line.starts_with("**Class.**") {
            classed = true;
        }
    }
    assert!(
        unclassed.is_empty(),
        "entries without a Class line: {unclassed:?}"
    );
}
