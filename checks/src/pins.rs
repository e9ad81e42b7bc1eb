//! `check --update-pins`: rewrites the pinned counts of checks in their
//! catalogue files through a TOML document editor (toml_edit), so every
//! layout the TOML grammar allows keeps its shape: comments, key order,
//! multi-line arrays, `[[ check ]]` headers. Only `states`, `witnesses`
//! and `violations` of the named checks change (for a derived `-bg1`
//! check, those of its parent's `congested` table).

use crate::outcome::CheckResult;
use std::collections::BTreeMap;
use std::path::Path;
use toml_edit::{value, DocumentMut, InlineTable, Item, Value};

/// Suffix of a pin key naming a check's `congested` table.
pub const CONGESTED_KEY: &str = "@congested";

/// The pins of one check: its unique state count, the witnesses it
/// reaches and the always-properties it violates, with their counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pins {
    pub states: u64,
    pub witnesses: BTreeMap<String, u64>,
    /// Written as `violations = {...}`, left out when empty.
    pub violations: BTreeMap<String, u64>,
}

pub fn pins_of(r: &CheckResult) -> Pins {
    Pins {
        states: r.unique_states,
        witnesses: r
            .witnesses
            .iter()
            .filter(|w| w.count > 0)
            .map(|w| (w.name.to_string(), w.count))
            .collect(),
        violations: r
            .props
            .iter()
            .filter(|p| p.count > 0)
            .map(|p| (p.name.to_string(), p.count))
            .collect(),
    }
}

fn counts(m: &BTreeMap<String, u64>) -> InlineTable {
    let mut it = InlineTable::new();
    for (k, c) in m {
        it.insert(k, Value::from(*c as i64));
    }
    it
}

/// Rewrites the pins of the checks named in `pins` in the catalogue text
/// `text`; returns the new text. Fails when a named check is not in the
/// file exactly once.
pub fn update_text(text: &str, pins: &BTreeMap<String, Pins>) -> Result<String, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    let arr = match doc.get_mut("check") {
        Some(Item::ArrayOfTables(a)) => a,
        _ => return Err("no [[check]] tables".into()),
    };
    let mut found: BTreeMap<&str, usize> = BTreeMap::new();
    for t in arr.iter_mut() {
        let name = match t.get("name").and_then(Item::as_str) {
            Some(n) => n.to_string(),
            None => continue,
        };
        if let Some((k, p)) = pins.get_key_value(name.as_str()) {
            *found.entry(k.as_str()).or_default() += 1;
            t["states"] = value(p.states as i64);
            t["witnesses"] = value(counts(&p.witnesses));
            if p.violations.is_empty() {
                t.remove("violations");
            } else {
                t["violations"] = value(counts(&p.violations));
            }
        }
        let ckey = format!("{name}{CONGESTED_KEY}");
        if let Some((k, p)) = pins.get_key_value(ckey.as_str()) {
            *found.entry(k.as_str()).or_default() += 1;
            let mut ct = match t.get("congested").and_then(Item::as_inline_table) {
                Some(x) => x.clone(),
                None => InlineTable::new(),
            };
            ct.insert("states", Value::from(p.states as i64));
            ct.insert("witnesses", Value::InlineTable(counts(&p.witnesses)));
            if p.violations.is_empty() {
                ct.remove("violations");
            } else {
                ct.insert("violations", Value::InlineTable(counts(&p.violations)));
            }
            ct.fmt();
            t["congested"] = value(ct);
        }
    }
    for n in pins.keys() {
        match found.get(n.as_str()) {
            Some(1) => {}
            Some(k) => return Err(format!("check '{n}' appears {k} times")),
            None => return Err(format!("check '{n}' is not in this file")),
        }
    }
    Ok(doc.to_string())
}

/// Rewrites the pins of the checks named in `pins` in file `file`.
pub fn update_file(file: &Path, pins: &BTreeMap<String, Pins>) -> Result<(), String> {
    let text = crate::paths::read_input(file)?;
    let new = update_text(&text, pins).map_err(|e| format!("{}: {e}", file.display()))?;
    // re-read check: the new text must still parse as a catalogue
    crate::catalogue::parse(&new, file)?;
    std::fs::write(file, new).map_err(|e| format!("{}: {e}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(name: &str, s: u64, w: &[(&str, u64)]) -> BTreeMap<String, Pins> {
        let mut m = BTreeMap::new();
        m.insert(
            name.to_string(),
            Pins {
                states: s,
                witnesses: w.iter().map(|(a, b)| (a.to_string(), *b)).collect(),
                violations: BTreeMap::new(),
            },
        );
        m
    }

    fn states_of(text: &str) -> Vec<(String, Option<i64>)> {
        let doc: toml::Table = toml::from_str(text).unwrap();
        doc["check"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c.get("states").and_then(|s| s.as_integer()),
                )
            })
            .collect()
    }

    const TWO: &str = r#"# a comment
[[check]]
name = "a"
question = "q"
tasks = ["wb none", "truncate 1"]
states = 100

[[check]]
name = "b"
question = "q"
tasks = [
    "wb none",
    "truncate 1",
]
states = 7
"#;

    #[test]
    fn rewrites_only_the_named_check_once() {
        let out = update_text(TWO, &pin("a", 101, &[("w-crop", 3)])).unwrap();
        assert_eq!(
            states_of(&out),
            vec![("a".into(), Some(101)), ("b".into(), Some(7))]
        );
        assert!(out.starts_with("# a comment\n"));
        assert_eq!(out.matches("states =").count(), 2, "{out}");
        assert!(out.contains("witnesses = { w-crop = 3 }"), "{out}");
    }

    #[test]
    fn adds_a_missing_pin_without_touching_multi_line_arrays() {
        let text = TWO.replace("states = 7\n", "");
        let out = update_text(&text, &pin("b", 9, &[])).unwrap();
        assert_eq!(
            states_of(&out),
            vec![("a".into(), Some(100)), ("b".into(), Some(9))]
        );
        assert!(
            out.contains("tasks = [\n    \"wb none\",\n    \"truncate 1\",\n]"),
            "{out}"
        );
    }

    #[test]
    fn spaced_headers_inline_comments_and_key_order() {
        let text = "[[ check ]]\nstates = 5 # pinned\nname = \"x\"\n\n[[ check ]]\nname = \"y\"\nstates = 6\n";
        let out = update_text(text, &pin("x", 50, &[])).unwrap();
        assert_eq!(
            states_of(&out),
            vec![("x".into(), Some(50)), ("y".into(), Some(6))]
        );
    }

    #[test]
    fn congested_pins_go_into_the_congested_table() {
        let text = TWO.replace(
            "states = 7\n",
            "states = 7\ncongested = { expect = { a1 = \"violated\" } }\n",
        );
        let out = update_text(&text, &pin("b@congested", 8, &[("w-bg-queued", 2)])).unwrap();
        assert!(
            out.contains(
                "congested = { expect = { a1 = \"violated\" }, states = 8, witnesses = { w-bg-queued = 2 } }"
            ),
            "{out}"
        );
        assert_eq!(
            states_of(&out),
            vec![("a".into(), Some(100)), ("b".into(), Some(7))]
        );
    }

    #[test]
    fn violation_counts_are_written_and_removed_when_none() {
        let mut p = pin("a", 101, &[]);
        p.get_mut("a").unwrap().violations.insert("c1".into(), 12);
        let out = update_text(TWO, &p).unwrap();
        assert!(out.contains("violations = { c1 = 12 }"), "{out}");
        let out = update_text(&out, &pin("a", 101, &[])).unwrap();
        assert!(!out.contains("violations"), "{out}");
        let mut c = pin("b@congested", 8, &[]);
        c.get_mut("b@congested")
            .unwrap()
            .violations
            .insert("a3".into(), 4);
        let out = update_text(TWO, &c).unwrap();
        assert!(
            out.contains("congested = { states = 8, witnesses = {}, violations = { a3 = 4 } }"),
            "{out}"
        );
    }

    #[test]
    fn unknown_or_duplicate_checks_are_errors() {
        assert!(update_text(TWO, &pin("zz", 1, &[])).is_err());
        let dup = format!("{TWO}\n[[check]]\nname = \"a\"\nquestion = \"q\"\n");
        assert!(update_text(&dup, &pin("a", 1, &[]))
            .unwrap_err()
            .contains("2 times"));
    }
}
