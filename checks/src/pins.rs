//! `check --update-pins`: rewrites the pinned counts of checks in their
//! catalogue files through a TOML document editor (toml_edit), so every
//! layout the TOML grammar allows keeps its shape: comments, key order,
//! multi-line arrays, `[[ check ]]` headers. Only `states` and `witnesses`
//! of the named checks change.

use crate::outcome::CheckResult;
use std::collections::BTreeMap;
use std::path::Path;
use toml_edit::{value, DocumentMut, InlineTable, Item, Value};

/// The pins of one check: its unique state count and the witnesses it
/// reaches, with their counts.
pub fn pins_of(r: &CheckResult) -> (u64, BTreeMap<String, u64>) {
    let w = r
        .witnesses
        .iter()
        .filter(|w| w.count > 0)
        .map(|w| (w.name.to_string(), w.count))
        .collect();
    (r.unique_states, w)
}

/// Rewrites the pins of the checks named in `pins` in the catalogue text
/// `text`; returns the new text. Fails when a named check is not in the
/// file exactly once.
pub fn update_text(
    text: &str,
    pins: &BTreeMap<String, (u64, BTreeMap<String, u64>)>,
) -> Result<String, String> {
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
        if let Some((k, (states, witnesses))) = pins.get_key_value(name.as_str()) {
            *found.entry(k.as_str()).or_default() += 1;
            t["states"] = value(*states as i64);
            let mut it = InlineTable::new();
            for (w, c) in witnesses {
                it.insert(w, Value::from(*c as i64));
            }
            t["witnesses"] = value(it);
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
pub fn update_file(
    file: &Path,
    pins: &BTreeMap<String, (u64, BTreeMap<String, u64>)>,
) -> Result<(), String> {
    let text = crate::paths::read_input(file)?;
    let new = update_text(&text, pins).map_err(|e| format!("{}: {e}", file.display()))?;
    // re-read check: the new text must still parse as a catalogue
    crate::catalogue::parse(&new, file)?;
    std::fs::write(file, new).map_err(|e| format!("{}: {e}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(
        name: &str,
        s: u64,
        w: &[(&str, u64)],
    ) -> BTreeMap<String, (u64, BTreeMap<String, u64>)> {
        let mut m = BTreeMap::new();
        m.insert(
            name.to_string(),
            (s, w.iter().map(|(a, b)| (a.to_string(), *b)).collect()),
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
    fn unknown_or_duplicate_checks_are_errors() {
        assert!(update_text(TWO, &pin("zz", 1, &[])).is_err());
        let dup = format!("{TWO}\n[[check]]\nname = \"a\"\nquestion = \"q\"\n");
        assert!(update_text(&dup, &pin("a", 1, &[]))
            .unwrap_err()
            .contains("2 times"));
    }
}
