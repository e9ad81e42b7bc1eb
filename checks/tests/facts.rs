//! checks/facts/kernels.toml: every commit id the docs, the README and
//! the catalogue mention is in it (with a title and a source), and every
//! kernel state of every model has an entry.

mod common;
use common::*;
use wbspec::catalogue;
use wbspec::facts::{commit_ids_in, facts};

/// Hex words of 12-40 digits with a letter: how the catalogue's comments
/// and the docs' tables name kernel commits without backticks.
fn bare_ids(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            (12..=40).contains(&w.len())
                && w.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                && w.bytes().any(|b| b.is_ascii_alphabetic())
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn every_commit_id_mentioned_is_in_the_facts_file() {
    let f = facts().expect("the facts file parses");
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    for dir in ["docs", "checks/catalogue"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if matches!(p.extension().and_then(|x| x.to_str()), Some("md" | "toml")) {
                files.push(p);
            }
        }
    }
    let mut missing = Vec::new();
    let mut seen = 0;
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        let mut ids = commit_ids_in(&text);
        ids.extend(bare_ids(&text));
        for id in ids {
            seen += 1;
            if f.commit(&id).is_none() {
                missing.push(format!(
                    "{}: {id}",
                    p.strip_prefix(&root).unwrap().display()
                ));
            }
        }
    }
    assert!(seen > 20, "only {seen} ids found: is the scan broken?");
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "commit ids with no [[commit]] in checks/facts/kernels.toml:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_kernel_state_has_facts_and_every_fact_a_state() {
    let f = facts().unwrap();
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let mut models = Vec::new();
    for e in &cat.entries {
        if !models.contains(&e.check.model()) {
            models.push(e.check.model());
            for k in e.check.kernel_states() {
                let s = f
                    .state(e.check.model(), k.name)
                    .unwrap_or_else(|| panic!("no [[state]] for {} {}", e.check.model(), k.name));
                assert!(
                    !s.label.is_empty() && s.label.starts_with(k.name),
                    "{}",
                    s.label
                );
            }
            let names: Vec<&str> = e.check.kernel_states().iter().map(|k| k.name).collect();
            for s in f.states_of(e.check.model()) {
                assert!(
                    names.contains(&s.name.as_str()),
                    "{} is no state of {}",
                    s.name,
                    s.model
                );
            }
        }
    }
    for s in &f.state {
        assert!(
            models.contains(&s.model.as_str()),
            "model {} has no check",
            s.model
        );
    }
}

/// The JSON report of `wbspec check NAME --json`.
fn json_report(name: &str) -> serde_json::Value {
    let tmp = tmpdir();
    let json = tmp.path().join("r.json");
    let out = wbspec(&["check", name, "--json", json.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// The JSON report's `kernel` object carries the state's versions.
#[test]
fn the_json_report_names_the_kernel_versions() {
    let doc = json_report("t-fopen-dio-read");
    let k = &doc["checks"][0]["kernel"];
    assert_eq!(k["name"], "T");
    assert_eq!(k["stable"], "6.16.y");
    assert_eq!(k["label"], "T (6.16)");
    assert!(k["excludes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["id"] == "1ce120dcefc0"
            && c["title"]
                .as_str()
                .unwrap()
                .starts_with("fuse: Always flush")));
}

/// The docs cite kernel sources through docs/kernel-sources.md, not
/// through "ref §N" of files outside the repository, and every link into
/// it names a section that exists.
#[test]
fn kernel_source_links_resolve() {
    let root = repo_root();
    let ks = std::fs::read_to_string(root.join("docs/kernel-sources.md")).unwrap();
    let mut links = 0;
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("md") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            !text.contains("ref §"),
            "{} still cites \"ref §\"",
            p.display()
        );
        for (i, _) in text.match_indices("kernel-sources.md#") {
            let rest = &text[i + "kernel-sources.md#".len()..];
            let anchor: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
                .collect();
            let anchor = anchor.trim_end_matches('.');
            links += 1;
            assert!(
                ks.contains(&format!("<a id=\"{anchor}\"></a>")),
                "{}: no section #{anchor} in docs/kernel-sources.md",
                p.display()
            );
        }
    }
    assert!(links > 50, "only {links} links into kernel-sources.md");
}

/// Each code tree a FUSE narration can name is a kernel state of the
/// model with its own `[[state]]`: the label a check carries is the
/// tree its traces name, and `cite` / the JSON report print that tree's
/// versions.
#[test]
fn every_code_tree_is_a_kernel_state_with_facts() {
    use wbspec_models::fuse::step::Tree;
    let f = facts().unwrap();
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let fuse = cat
        .entries
        .iter()
        .find(|e| e.check.model() == "fuse")
        .expect("a fuse check");
    let states: Vec<&str> = fuse.check.kernel_states().iter().map(|k| k.name).collect();
    let labels: Vec<&str> = Tree::ALL.iter().map(|t| t.label()).collect();
    assert_eq!(states, labels);
    for t in Tree::ALL {
        let s = f
            .state("fuse", t.label())
            .unwrap_or_else(|| panic!("no [[state]] for tree {}", t.label()));
        assert!(
            s.label.starts_with(&format!("{} (", t.label())),
            "{}",
            s.label
        );
    }
    // a label that shares mechanics is still its own state in the JSON
    let doc = json_report("t17-trunc-vs-wb-2p");
    let k = &doc["checks"][0]["kernel"];
    assert_eq!(k["name"], "T17");
    assert_eq!(k["label"], "T17 (6.17 - 6.18.2)");
    assert_eq!(doc["checks"][0]["config"]["kernel"], "T");
    assert_eq!(doc["checks"][0]["config"]["tree"], "V617");
}

/// Every saved FUSE trace narrates each step with the function names of
/// the tree its kernel label names (a T17 trace prints 6.17's, not
/// 6.16's), and has a name for every step.
#[test]
fn saved_traces_narrate_their_labels_tree() {
    use wbspec_models::fuse::step::Tree;
    use wbspec_models::fuse::Step;
    let mut seen = std::collections::BTreeSet::new();
    for e in std::fs::read_dir(repo_root().join("traces")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("json") {
            continue;
        }
        let t: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        if t["model"] != "fuse" {
            continue;
        }
        let label = t["kernel"].as_str().unwrap();
        let tree = Tree::parse(label).unwrap_or_else(|| panic!("{}: label {label}", p.display()));
        let actions = t["actions"].as_array().unwrap();
        let steps = t["steps"].as_array().unwrap();
        assert_eq!(actions.len(), steps.len(), "{}", p.display());
        for (a, s) in actions.iter().zip(steps) {
            let step: Step = serde_json::from_value(a["step"].clone()).unwrap();
            assert_eq!(
                s["kernel_fn"].as_str().unwrap(),
                step.kernel_fn(tree),
                "{}: step {}",
                p.display(),
                s["n"]
            );
        }
        seen.insert(label.to_string());
    }
    for l in ["L", "T", "T17", "T2", "C"] {
        assert!(seen.contains(l), "no saved trace of {l}: {seen:?}");
    }
}

/// docs/model.md's step/tree table is what step.rs generates (the
/// block `check --all --update-docs` writes), without a catalogue run.
#[test]
fn the_step_tree_table_in_docs_model_is_current() {
    let text = std::fs::read_to_string(repo_root().join("docs/model.md")).unwrap();
    let open = "<!-- wbspec:gen step-trees -->";
    let a = text.find(open).expect("the step-trees block") + open.len();
    let b = a + text[a..].find("<!-- /wbspec:gen -->").unwrap();
    let want = wbspec::docgen_blocks::model_md();
    assert_eq!(
        &text[a..b],
        want["step-trees"].as_str(),
        "docs/model.md's step-trees block is stale: run cargo run --release -- check --all --update-docs"
    );
}
