//! checks/catalogue/18-page-sizes.toml: every check's comment names its
//! 4 KiB original (a catalogue check without `page_size`), which asks
//! the same kernel state the same workload with the same expected
//! verdicts (docs/model.md: "no verdict differs from the 4 KiB original
//! each check names"; check --all compares each side's verdicts with
//! these expectations).

mod common;
use common::*;
use std::collections::BTreeMap;

#[test]
fn each_page_size_check_names_its_4k_original() {
    let dir = catalogue_dir();
    let mut all: BTreeMap<String, toml::Table> = BTreeMap::new();
    for f in std::fs::read_dir(&dir).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|e| e == "toml") {
            let t: toml::Table = toml::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            for c in t
                .get("check")
                .and_then(|c| c.as_array())
                .into_iter()
                .flatten()
            {
                let c = c.as_table().unwrap().clone();
                all.insert(c["name"].as_str().unwrap().to_string(), c);
            }
        }
    }
    let text = std::fs::read_to_string(dir.join("18-page-sizes.toml")).unwrap();
    let mut comment = String::new();
    let mut checked = 0;
    for line in text.lines() {
        if let Some(c) = line.strip_prefix('#') {
            comment.push_str(c);
            comment.push(' ');
            continue;
        }
        let Some(name) = line
            .strip_prefix("name = \"")
            .and_then(|l| l.strip_suffix('"'))
        else {
            if line.trim().is_empty() {
                comment.clear();
            }
            continue;
        };
        let this = &all[name];
        let original = comment
            .split(|c: char| !(c.is_alphanumeric() || c == '-'))
            .find(|w| *w != name && all.get(*w).is_some_and(|c| !c.contains_key("page_size")))
            .unwrap_or_else(|| panic!("{name}: its comment names no 4 KiB original: {comment}"));
        let orig = &all[original];
        for key in [
            "kernel",
            "tasks",
            "expect",
            "variant",
            "pages",
            "init_size",
            "folio_pages",
        ] {
            assert_eq!(this.get(key), orig.get(key), "{name} vs {original}: {key}");
        }
        checked += 1;
        comment.clear();
    }
    assert!(checked >= 9, "{checked} checks");
}
