//! `wbspec show NAME` and `wbspec list [--long] [--kernel K] [--task KIND]
//! [--tag T]`: what a check is, read from the catalogue alone (nothing is
//! explored): kernel state, switches, tasks, bounds, expected verdicts,
//! pins, tags, pair and the file it is in.

use crate::catalogue::{Catalogue, Entry, Verdict, Witnesses, CONGESTED_SUFFIX};
use crate::explain::wrap;
use std::collections::BTreeSet;

/// The filters of `list`; every one given must match.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Kernel state, as `kernel = "..."` names it (`T2`).
    pub kernel: Option<String>,
    /// Task kind, the first word of a task (`dio-write`).
    pub task: Option<String>,
    pub tag: Option<String>,
}

impl Filter {
    /// A value that no model or check knows is an error naming the known
    /// ones (a filter that matches nothing is a typo, not an answer).
    pub fn validate(&self, cat: &Catalogue) -> Result<(), String> {
        if let Some(k) = &self.kernel {
            let mut known: Vec<&str> = Vec::new();
            for e in &cat.entries {
                for s in e.check.kernel_states() {
                    if !known.contains(&s.name) {
                        known.push(s.name);
                    }
                }
            }
            if !known.contains(&k.as_str()) {
                return Err(format!(
                    "--kernel {k}: no model has this kernel state (known: {})",
                    known.join(", ")
                ));
            }
        }
        if let Some(t) = &self.task {
            let mut forms: Vec<&str> = Vec::new();
            for e in &cat.entries {
                for f in e.check.task_syntax() {
                    if !forms.contains(f) {
                        forms.push(f);
                    }
                }
            }
            if !forms.iter().any(|f| kind_of(f) == t) {
                return Err(format!(
                    "--task {t}: not a task kind, the first word of a task (tasks: {})",
                    forms.join(", ")
                ));
            }
        }
        if let Some(t) = &self.tag {
            let known: BTreeSet<&str> = cat
                .entries
                .iter()
                .flat_map(|e| e.tags.iter().map(String::as_str))
                .collect();
            if !known.contains(t.as_str()) {
                return Err(format!(
                    "--tag {t}: no check has this tag (tags: {})",
                    known.into_iter().collect::<Vec<_>>().join(", ")
                ));
            }
        }
        Ok(())
    }

    pub fn matches(&self, e: &Entry) -> bool {
        self.kernel.as_ref().is_none_or(|k| e.check.kernel() == *k)
            && self
                .task
                .as_ref()
                .is_none_or(|t| tasks(e).iter().any(|x| kind_of(x) == t))
            && self.tag.as_ref().is_none_or(|t| e.has_tag(t))
    }
}

/// The kind of a task or task form: its first word.
fn kind_of(task: &str) -> &str {
    task.split_whitespace().next().unwrap_or("")
}

/// The entry's tasks as written in the catalogue.
/// (`threads = [[...]]`: every thread's tasks, thread by thread.)
pub fn tasks(e: &Entry) -> Vec<String> {
    let strs = |a: &Vec<toml::Value>| -> Vec<String> {
        a.iter()
            .filter_map(|t| t.as_str().map(String::from))
            .collect()
    };
    if let Some(a) = e.settings.get("tasks").and_then(|v| v.as_array()) {
        return strs(a);
    }
    match e.settings.get("threads").and_then(|v| v.as_array()) {
        Some(ths) => ths
            .iter()
            .filter_map(|t| t.as_array())
            .flat_map(strs)
            .collect(),
        None => vec![],
    }
}

/// Kernel state and the switches that differ from it (`T2 + !reclaim_flag`).
fn kernel_and_flags(e: &Entry) -> String {
    let mut k = e.check.kernel();
    let flags = e.check.switches_changed();
    if !flags.is_empty() {
        k = format!("{k} + {}", flags.join(" "));
    }
    k
}

/// The always-properties the entry expects violated.
fn violated(e: &Entry) -> Vec<&str> {
    e.expect
        .iter()
        .filter(|(_, v)| *v == Verdict::Violated)
        .map(|(n, _)| n.as_str())
        .collect()
}

/// One line of `list`: name, model, kernel state, question.
pub fn list_line(e: &Entry) -> String {
    format!(
        "{:<28} {:<7} {:<5} {}",
        e.name,
        e.model,
        e.check.kernel(),
        e.question
    )
}

/// One line of `list --long`: name, model, kernel state and switches,
/// tasks, the properties expected violated, pinned states, tags.
pub fn long_line(e: &Entry) -> String {
    let v = violated(e);
    format!(
        "{}  model={}  kernel={}  tasks=[{}]  violated=[{}]  states={}  tags=[{}]",
        e.name,
        e.model,
        // one word: `L+dio_flush_always+dio_invalidate_after_write`
        kernel_and_flags(e).replace(" + ", "+").replace(' ', "+"),
        tasks(e).join(", "),
        v.join(" "),
        e.states.map_or("unpinned".into(), |s| s.to_string()),
        e.tags.join(" ")
    )
}

/// A TOML value on one line (`[0, 1]`, `"x"`, `2`).
fn toml_inline(v: &toml::Value) -> String {
    v.to_string()
}

/// A JSON scalar as the catalogue would write it (`null`: none).
fn json_scalar(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::Null => Some("none".into()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// The line in `text` that gives check `name` its name, 1-based.
fn line_of_name(text: &str, name: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let l = l.trim();
            l.strip_prefix("name")
                .map(|r| r.trim_start())
                .and_then(|r| r.strip_prefix('='))
                .map(|r| r.trim().trim_end_matches(|c: char| c != '"'))
                .is_some_and(|r| r == format!("\"{name}\""))
        })
        .map(|i| i + 1)
}

fn witnesses_text(w: &Witnesses) -> String {
    match w {
        Witnesses::Pinned(m) if m.is_empty() => "none reached (pinned)".into(),
        Witnesses::Pinned(m) => m
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        Witnesses::Listed(v) if v.is_empty() => "not pinned".into(),
        Witnesses::Listed(v) => format!("{} (counts not pinned)", v.join(", ")),
    }
}

/// `show NAME`: every line of what the catalogue says about `e`.
pub fn show(e: &Entry, cat: &Catalogue) -> Vec<String> {
    let mut out = Vec::new();
    // wrapped at spaces, but never inside a `key = value` item or a name
    // with its value (a no-break space holds them together)
    let mut field = |head: &str, text: &str| {
        let held = text.replace(" = ", "\u{a0}=\u{a0}");
        for l in wrap(&format!("{head:<11}"), &held, 72) {
            out.push(l.replace('\u{a0}', " "));
        }
    };
    field("Check:", &e.name);
    field("Question:", &e.question);
    // relative to the working directory when inside it
    let path = std::env::current_dir()
        .ok()
        .and_then(|d| e.file.strip_prefix(d).ok().map(|p| p.to_path_buf()))
        .unwrap_or_else(|| e.file.clone());
    let file = match std::fs::read_to_string(&e.file)
        .ok()
        .and_then(|t| line_of_name(&t, e.parent.as_deref().unwrap_or(&e.name)))
    {
        Some(l) => format!("{}:{l}", path.display()),
        None => path.display().to_string(),
    };
    field("File:", &file);
    if let Some(p) = &e.parent {
        field(
            "Derived:",
            &format!(
                "from {p}, run under the model's queue bound; its pins are {p}'s `congested` entry"
            ),
        );
    }
    field(
        "Model:",
        &format!("{} (version {})", e.model, e.check.model_version()),
    );
    let k = e.check.kernel();
    let versions = match crate::facts::facts() {
        Ok(f) if f.state(&e.model, &k).is_some() => {
            format!("{k} ({})", f.versions(&e.model, &k))
        }
        _ => k,
    };
    field("Kernel:", &versions);
    let flags = e.check.switches_changed();
    if flags.is_empty() {
        field("Switches:", "as the kernel state");
    }
    for f in &flags {
        let name = f.trim_start_matches('!');
        let what = e
            .check
            .switch_defs()
            .iter()
            .find(|s| s.name == name)
            .map(|s| format!(" ({}: {})", s.kind.as_str(), s.description))
            .unwrap_or_default();
        let onoff = if f.starts_with('!') { "off" } else { "on" };
        field("Switch:", &format!("{name} {onoff}{what}"));
    }
    let drops = e.check.drops();
    if !drops.is_empty() {
        field(
            "Dropped:",
            &format!(
                "{} (a what-if run without these kernel calls, not the kernel)",
                drops.join(", ")
            ),
        );
    }
    let ts = tasks(e);
    if !ts.is_empty() {
        let list: Vec<String> = ts
            .iter()
            .enumerate()
            .map(|(i, t)| format!("T{i} {t}"))
            .collect();
        field("Tasks:", &list.join(", "));
    }
    // the model's other keys as written, then what the defaults supply
    let written: Vec<String> = e
        .settings
        .iter()
        .filter(|(k, _)| !["kernel", "variant", "tasks"].contains(&k.as_str()))
        .map(|(k, v)| format!("{k} = {}", toml_inline(v)))
        .collect();
    if !written.is_empty() {
        field("Settings:", &written.join(", "));
    }
    let mut defaults = Vec::new();
    if let serde_json::Value::Object(m) = e.check.config_json() {
        for (k, v) in &m {
            if e.settings.contains_key(k) || k == "kernel" {
                continue;
            }
            // booleans only when on: the off ones are the absent features
            match (v, json_scalar(v)) {
                (serde_json::Value::Bool(false), _) => {}
                (_, Some(s)) => defaults.push(format!("{k} = {s}")),
                _ => {}
            }
        }
    }
    if !defaults.is_empty() {
        field("Defaults:", &defaults.join(", "));
    }
    let v = violated(e);
    let always: Vec<&str> = e
        .check
        .property_defs()
        .iter()
        .filter(|p| p.expectation == stateright::Expectation::Always)
        .map(|p| p.name)
        .collect();
    let expect = if v.is_empty() {
        format!("every always-property holds ({})", always.len())
    } else {
        format!(
            "{} violated; the other {} hold",
            v.join(", "),
            always.len() - v.len()
        )
    };
    field("Expect:", &expect);
    field(
        "States:",
        &match e.states {
            Some(s) => format!(
                "{s} unique (pinned{})",
                if e.symmetry { ", symmetry-reduced" } else { "" }
            ),
            None => "not pinned (check NAME --update-pins)".into(),
        },
    );
    field("Witnesses:", &witnesses_text(&e.witnesses));
    let twin = format!("{}{CONGESTED_SUFFIX}", e.name);
    if let Some(t) = cat.entries.iter().find(|x| x.name == twin) {
        let differs: Vec<String> = t
            .expect
            .iter()
            .filter(|(n, v)| e.expected(n) != *v)
            .map(|(n, v)| format!("{n} {}", v.as_str()))
            .collect();
        let exp = if differs.is_empty() {
            "expects the same verdicts".to_string()
        } else {
            format!("expects {}", differs.join(", "))
        };
        let states = t
            .states
            .map_or("states not pinned".into(), |s| format!("states {s}"));
        field(
            "Congested:",
            &format!(
                "{twin} ({}): {exp}; {states}; witnesses {}",
                e.check.congested().map_or("", |(_, label)| label),
                witnesses_text(&t.witnesses)
            ),
        );
    }
    field(
        "Tags:",
        &if e.tags.is_empty() {
            "none".to_string()
        } else {
            e.tags.join(", ")
        },
    );
    let paired_by: Vec<&str> = cat
        .entries
        .iter()
        .filter(|x| x.pair.as_deref() == Some(e.name.as_str()))
        .map(|x| x.name.as_str())
        .collect();
    let pair = match (&e.pair, paired_by.is_empty()) {
        (Some(p), _) => p.clone(),
        (None, false) => format!("none (named as pair by {})", paired_by.join(", ")),
        (None, true) => "none".into(),
    };
    field("Pair:", &pair);
    out
}

#[cfg(test)]
mod tests {
    use super::line_of_name;

    #[test]
    fn the_name_line_is_found_in_any_spacing() {
        let t = "# x\n[[check]]\nname = \"a-b\"\n\n[[check]]\n  name=\"a\" # c\n";
        assert_eq!(line_of_name(t, "a-b"), Some(3));
        assert_eq!(line_of_name(t, "a"), Some(6));
        assert_eq!(line_of_name(t, "b"), None);
    }
}
