//! `check --update-pins`: rewrites the pinned counts of checks in their
//! catalogue files through a TOML document editor (toml_edit), so every
//! layout the TOML grammar allows keeps its shape: comments, key order,
//! multi-line arrays, `[[ check ]]` headers. Only `states`, `witnesses`
//! and `violations` of the named checks change (for a derived `-bg1`
//! check, those of its parent's `congested` table).

use crate::outcome::CheckResult;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use toml_edit::{ImDocument, InlineTable, Item, Value};

/// Suffix of a pin key naming a check's `congested` table.
pub const CONGESTED_KEY: &str = "@congested";

/// The pins of one check: its unique state count, the witnesses it
/// reaches and the always-properties it violates, with their counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pins {
    pub states: u64,
    pub witnesses: BTreeMap<String, u64>,
    /// Written as `violations = {...}`; a check that violates nothing
    /// gets no key (an existing one becomes `{}`).
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

/// The pinned keys of `p` with their rendered values and tables; the
/// `violations` key only where there are violations or `present` (a key
/// already in the file, which must then be updated, to `{}` if need be).
fn keyed(p: &Pins, present: bool) -> Vec<(&'static str, String, Option<&BTreeMap<String, u64>>)> {
    let mut v = vec![
        ("states", p.states.to_string(), None),
        ("witnesses", render(&p.witnesses), Some(&p.witnesses)),
    ];
    if present || !p.violations.is_empty() {
        v.push(("violations", render(&p.violations), Some(&p.violations)));
    }
    v
}

/// Rewrites the pins of the checks named in `pins` in the catalogue text
/// `text`; returns the new text. Fails when a named check is not in the
/// file exactly once.
///
/// The text is edited in place, not re-rendered: the parser gives the
/// byte span of every pinned value, and only those spans change (or a
/// missing key is added after the table's last line, or before an inline
/// table's closing brace). Every other byte stays: comments, spacing,
/// header decoration (`[[ check ]]` next to `[[check]]`), line ends.
pub fn update_text(text: &str, pins: &BTreeMap<String, Pins>) -> Result<String, String> {
    let doc = ImDocument::parse(text).map_err(|e| crate::paths::one_line(&e.to_string()))?;
    let arr = match doc.get("check") {
        Some(Item::ArrayOfTables(a)) => a,
        _ => return Err("no [[check]] tables".into()),
    };
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut found: BTreeMap<&str, usize> = BTreeMap::new();
    for t in arr.iter() {
        let name = match t.get("name").and_then(Item::as_str) {
            Some(n) => n.to_string(),
            None => continue,
        };
        let what = format!("check '{name}'");
        // where a new line goes: after the end of the table's last key's
        // line (and its comment)
        let new_line = |line: &str| -> Result<(Range<usize>, String), String> {
            let end = t
                .iter()
                .filter_map(|(_, i)| i.as_value().and_then(Value::span))
                .map(|r| r.end)
                .max()
                .ok_or_else(|| format!("{what}: no key to add the pins after"))?;
            let at = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
            let lead = if at == text.len() && !text.ends_with('\n') {
                eol
            } else {
                ""
            };
            Ok((at..at, format!("{lead}{line}")))
        };
        if let Some((k, p)) = pins.get_key_value(name.as_str()) {
            *found.entry(k.as_str()).or_default() += 1;
            let mut missing = String::new();
            for (key, v, table) in keyed(p, t.contains_key("violations")) {
                match t.get(key) {
                    None => missing.push_str(&format!("{key} = {v}{eol}")),
                    Some(Item::Value(old)) => edit_value(old, table, v, &what, &mut edits)?,
                    Some(_) => {
                        return Err(format!("{what}: `{key}` is not a value; edit it by hand"))
                    }
                }
            }
            if !missing.is_empty() {
                edits.push(new_line(&missing)?);
            }
        }
        let ckey = format!("{name}{CONGESTED_KEY}");
        if let Some((k, p)) = pins.get_key_value(ckey.as_str()) {
            *found.entry(k.as_str()).or_default() += 1;
            let fresh = |present| {
                let kv: Vec<String> = keyed(p, present)
                    .into_iter()
                    .map(|(key, v, _)| format!("{key} = {v}"))
                    .collect();
                format!("{{ {} }}", kv.join(", "))
            };
            match t.get("congested") {
                None => edits.push(new_line(&format!("congested = {}{eol}", fresh(false)))?),
                Some(Item::Value(Value::InlineTable(ct))) => {
                    let mut add = String::new();
                    for (key, v, table) in keyed(p, ct.contains_key("violations")) {
                        match ct.get(key) {
                            None => add.push_str(&format!(", {key} = {v}")),
                            Some(old) => edit_value(old, table, v, &what, &mut edits)?,
                        }
                    }
                    if !add.is_empty() {
                        match ct.iter().filter_map(|(_, v)| v.span()).map(|r| r.end).max() {
                            Some(end) => edits.push((end..end, add)),
                            None => edits.push((span(ct.span(), &what)?, fresh(false))),
                        }
                    }
                }
                Some(_) => {
                    return Err(format!(
                        "{what}: `congested` is not an inline table; edit its pins by hand"
                    ))
                }
            }
        }
    }
    for n in pins.keys() {
        match found.get(n.as_str()) {
            Some(1) => {}
            Some(k) => return Err(format!("check '{n}' appears {k} times")),
            None => return Err(format!("check '{n}' is not in this file")),
        }
    }
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = text.to_string();
    for (r, v) in edits {
        out.replace_range(r, &v);
    }
    Ok(out)
}

/// `{ w-a = 1, w-b = 2 }`, or `{}`.
fn render(counts: &BTreeMap<String, u64>) -> String {
    let mut it = InlineTable::new();
    for (w, c) in counts {
        it.insert(w, Value::from(*c as i64));
    }
    it.fmt();
    Value::InlineTable(it).to_string().trim().to_string()
}

fn span(s: Option<Range<usize>>, what: &str) -> Result<Range<usize>, String> {
    s.ok_or_else(|| format!("{what}: the parser gave no position"))
}

/// The edit of one existing pinned value `old` to `new`: a table of
/// counts (`table`: witnesses, violations) with the same keys keeps its
/// layout and only its counts change; anything else is replaced whole.
fn edit_value(
    old: &Value,
    table: Option<&BTreeMap<String, u64>>,
    new: String,
    what: &str,
    edits: &mut Vec<(Range<usize>, String)>,
) -> Result<(), String> {
    if let Some(witnesses) = table {
        if let Value::InlineTable(w) = old {
            if w.len() == witnesses.len() && witnesses.keys().all(|k| w.contains_key(k)) {
                for (k, c) in witnesses {
                    let v = w.get(k).expect("checked above");
                    edits.push((span(v.span(), what)?, c.to_string()));
                }
                return Ok(());
            }
        }
    }
    edits.push((span(old.span(), what)?, new));
    Ok(())
}

/// Rewrites the pins of the checks named in `pins` in file `file`.
pub fn update_file(file: &Path, pins: &BTreeMap<String, Pins>) -> Result<(), String> {
    // read, edit and replace under the directory's lock: a concurrent
    // --update-pins of another check in this file waits, then edits
    // this one's result (no lost update)
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let _lock = crate::paths::lock_dir(dir)?;
    let text = crate::paths::read_input(file)?;
    let new = update_text(&text, pins).map_err(|e| format!("{}: {e}", file.display()))?;
    // re-read check: the new text must still parse as a catalogue
    crate::catalogue::parse(&new, file)?;
    crate::paths::write_atomic(file, new.as_bytes())
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

    #[test]
    fn violation_counts_are_written_and_emptied_when_none() {
        let mut p = pin("a", 101, &[]);
        p.get_mut("a").unwrap().violations.insert("c1".into(), 12);
        let out = update_text(TWO, &p).unwrap();
        assert!(out.contains("violations = { c1 = 12 }"), "{out}");
        p.get_mut("a").unwrap().violations.insert("c1".into(), 13);
        let out = update_text(&out, &p).unwrap();
        assert!(out.contains("violations = { c1 = 13 }"), "{out}");
        let out = update_text(&out, &pin("a", 101, &[])).unwrap();
        assert!(out.contains("violations = {}"), "{out}");
        assert!(!out.contains("c1"), "{out}");
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
        // a congested table that has pins already gains the key in place
        let out = update_text(&out.replace(", violations = { a3 = 4 }", ""), &c).unwrap();
        assert!(
            out.contains("congested = { states = 8, witnesses = {}, violations = { a3 = 4 } }"),
            "{out}"
        );
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

    /// Lines that are not a pinned key's, in order.
    fn unpinned_lines(text: &str) -> Vec<&str> {
        text.split_inclusive('\n')
            .filter(|l| {
                let k = l.trim_start();
                !(k.starts_with("states")
                    || k.starts_with("witnesses")
                    || k.starts_with("congested"))
            })
            .collect()
    }

    /// Defects: update-pins gave every `[[check]]` header the first
    /// header's decoration (`[[check]]` became `[[ check ]]`), dropped a
    /// pinned key's comment and reformatted its spacing, and wrote a CRLF
    /// file back with LF line ends. Only the pinned keys' values change;
    /// every other byte stays.
    #[test]
    fn only_the_pinned_values_change() {
        let text = "# file comment\n\n# about a\n[[ check ]]  # header a\nname = \"a\"\nstates   =  1 # pinned by hand\nwitnesses = {w-x=1,  w-y = 2}   # wit\n\n# about b\n[[ check ]]\t# header b\nname = \"b\"\nquestion = \"q\" # q\ncongested = { expect = { a1 = \"holds\" } } # cong\n# last key of b above\n\n[[check]]\nname = \"c\"\n\n# trailing comment\n  # indented trailing comment";
        let mut p = pin("a", 5, &[("w-x", 3), ("w-y", 4)]);
        p.extend(pin("b", 7, &[("w-z", 1)]));
        p.extend(pin("b@congested", 9, &[]));
        let out = update_text(text, &p).unwrap();
        assert_eq!(unpinned_lines(&out), unpinned_lines(text), "{out}");
        for line in [
            "states   =  5 # pinned by hand\n",
            "witnesses = {w-x=3,  w-y = 4}   # wit\n",
            "congested = { expect = { a1 = \"holds\" }, states = 9, witnesses = {} } # cong\n",
            "states = 7\nwitnesses = { w-z = 1 }\n",
        ] {
            assert!(out.contains(line), "{line:?} in {out}");
        }
        // c is not named: untouched
        assert!(out.contains("name = \"c\"\n\n# trailing"), "{out}");
        // a new witness set replaces the old table; its comment stays
        let out2 = update_text(&out, &pin("a", 5, &[("w-x", 3)])).unwrap();
        assert!(out2.contains("witnesses = { w-x = 3 }   # wit\n"), "{out2}");
        assert_eq!(unpinned_lines(&out2), unpinned_lines(text));
        // CRLF in, CRLF out
        let crlf = text.replace('\n', "\r\n");
        let out3 = update_text(&crlf, &p).unwrap();
        assert_eq!(out3, out.replace('\n', "\r\n"));
    }

    /// Defect: two concurrent `--update-pins` on one file lost an update
    /// (each read the file, then wrote its own edit over the other's).
    /// Eight threads pin eight checks of one file, ten times each: every
    /// check ends with its thread's last pin.
    #[test]
    fn concurrent_updates_of_one_file_lose_nothing() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("c.toml");
        let one = "[[check]]\nname = \"cNAME\"\nquestion = \"q\"\nkernel = \"T\"\npages = 1\ninit_size = 1\ncached = [0]\ntasks = [\"write 0+1\", \"dio-read 0+1\"]\n\n";
        let text: String = (0..8)
            .map(|i| one.replace("NAME", &i.to_string()))
            .collect();
        std::fs::write(&f, text).unwrap();
        let threads: Vec<_> = (0..8u64)
            .map(|i| {
                let f = f.clone();
                std::thread::spawn(move || {
                    for round in 1..=10u64 {
                        update_file(&f, &pin(&format!("c{i}"), round * 100 + i, &[])).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let got = states_of(&std::fs::read_to_string(&f).unwrap());
        let want: Vec<_> = (0..8).map(|i| (format!("c{i}"), Some(1000 + i))).collect();
        assert_eq!(got, want);
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
