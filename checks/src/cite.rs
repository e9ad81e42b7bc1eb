//! `wbspec cite CHECK`: a plain-text block (≤ 72 columns) to paste into a
//! review mail: the question and verdict, what differs from the check's
//! pair, the properties whose verdicts differ (one line each, the rest
//! counted), the scope of the check, the kernel state with its commits
//! (checks/facts/kernels.toml), where the tool comes from, a command that
//! reproduces the result, and the narrated counterexample.

use crate::catalogue::{Entry, Verdict};
use crate::explain::wrap;
use crate::facts::Facts;
use crate::outcome::CheckResult;
use serde_json::Value;
use std::path::PathBuf;
use wbspec_models::spec::PropertyDef;

/// Width of every line of a citation.
pub const WIDTH: usize = 72;

/// The repository the tool is published at (Cargo.toml's `repository`).
pub const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// Where the citation's command and the tool come from.
pub struct Context<'a> {
    /// `git rev-parse --short HEAD` of the tool's checkout, `+dirty` if
    /// tracked files were modified, `unknown` without git.
    pub commit: String,
    /// The catalogue directory, when it is not the checkout's own (made
    /// absolute, so the command works from the checkout).
    pub catalogue: Option<PathBuf>,
    pub facts: &'a Facts,
}

/// A note that a property is stricter than the kernel's contract (the
/// model's `Stricter` marker), for the property's meaning line: which
/// contract property it goes beyond and what the kernel promises.
fn stricter_note(p: &PropertyDef) -> Option<String> {
    p.stricter.map(|s| {
        format!(
            "stricter than the kernel's contract, {}: {}",
            s.contract, s.promise
        )
    })
}

fn lines(out: &mut Vec<String>, head: &str, text: &str) {
    out.extend(wrap(head, text, WIDTH));
}

/// `T2 (6.18.3+)`, plus the switches that differ from the state.
fn kernel_label(e: &Entry, facts: &Facts) -> String {
    let k = e.check.kernel();
    let label = facts
        .state(e.check.model(), &k)
        .map(|s| s.label.clone())
        .unwrap_or(k);
    let flags = e.check.switches_changed();
    if flags.is_empty() {
        label
    } else {
        format!("{label} + {}", flags.join(", "))
    }
}

/// Leading commit ids of a switch description (`1ce120dcefc0: ...`,
/// `85c871a02b03/08489c4f4133: ...`).
fn commits_of(description: &str) -> Vec<&str> {
    let head = description.split(':').next().unwrap_or("");
    let ids: Vec<&str> = head.split('/').map(str::trim).collect();
    if ids
        .iter()
        .all(|i| (7..=40).contains(&i.len()) && i.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        ids
    } else {
        Vec::new()
    }
}

/// `key: a here, b there` for each configuration key that differs
/// between two checks (the variant's flags one by one).
fn config_diff(a: &Value, b: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return out;
    };
    let show = |v: Option<&Value>| match v {
        None | Some(Value::Null) => "-".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let (x, y) = (a.get(k), b.get(k));
        if x == y {
            continue;
        }
        match (x, y) {
            (Some(Value::Object(_)), Some(Value::Object(_))) => {
                for (kk, xx, yy) in config_diff(x.unwrap(), y.unwrap()) {
                    out.push((kk, xx, yy));
                }
            }
            _ => out.push((k.clone(), show(x), show(y))),
        }
    }
    out
}

/// The command that reruns the check and its pair.
fn reproduce(names: &[&str], ctx: &Context) -> Vec<String> {
    let mut out = Vec::new();
    let commit = ctx.commit.trim_end_matches("+dirty");
    if ctx.commit != "unknown" {
        out.push(format!("  git checkout {commit}"));
        if ctx.commit.ends_with("+dirty") {
            lines(
                &mut out,
                "  # ",
                "the block was made from a tree with local changes to this commit",
            );
        }
    }
    let mut words: Vec<String> = vec![
        "cargo".into(),
        "run".into(),
        "--release".into(),
        "--".into(),
    ];
    if let Some(dir) = &ctx.catalogue {
        words.push("--catalogue".into());
        words.push(shell_word(&dir.display().to_string()));
    }
    words.push("check".into());
    words.extend(names.iter().map(|n| n.to_string()));
    words.push("--explain".into());
    // a shell continuation, so the lines paste as one command; a word
    // longer than a line (a deep --catalogue path) stays whole, as a shell
    // needs it, and is the only thing that may exceed the width
    let mut cur = String::from(" ");
    for w in words {
        if cur.len() + 1 + w.len() > WIDTH - 2 && cur.trim() != "" {
            out.push(format!("{cur} \\"));
            cur = String::from("   ");
        }
        cur.push(' ');
        cur.push_str(&w);
    }
    out.push(cur);
    out
}

/// `s` quoted for a POSIX shell when it needs quoting.
fn shell_word(s: &str) -> String {
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The citation block for `e` (and its pair, already run). Returns the
/// lines; every line is at most 72 columns, except a --catalogue path
/// longer than a line, which a shell cannot split.
pub fn cite(
    e: &Entry,
    r: &CheckResult,
    pair: Option<(&Entry, &CheckResult)>,
    ctx: &Context,
) -> Result<Vec<String>, String> {
    let facts = ctx.facts;
    let mut out = Vec::new();
    lines(&mut out, "Question:  ", &e.question);
    let violated: Vec<&str> = r
        .props
        .iter()
        .filter(|p| p.observed == Verdict::Violated)
        .map(|p| p.name)
        .collect();
    let as_expected = if r.ok() {
        "as the catalogue expects"
    } else {
        "NOT as the catalogue expects"
    };
    let search = if r.complete {
        format!("exhaustive, {} states", r.unique_states)
    } else {
        "INCOMPLETE search, not a proof".to_string()
    };
    let verdict = if violated.is_empty() {
        format!("every property holds ({search}; {as_expected})")
    } else {
        format!("{} violated ({search}; {as_expected})", violated.join(", "))
    };
    lines(&mut out, "Verdict:   ", &verdict);

    // the pair: what differs, and the properties whose verdict differs
    let defs = e.check.property_defs();
    let meaning = |name: &str| {
        defs.iter()
            .find(|d| d.name == name)
            .map(|d| match stricter_note(d) {
                Some(n) => format!("{} ({n})", d.description),
                None => d.description.to_string(),
            })
    };
    let mut shown: Vec<&str> = Vec::new();
    if let Some((pe, pr)) = pair {
        let pverdict = if pr.complete {
            format!("{} states", pr.unique_states)
        } else {
            "INCOMPLETE, not a proof".to_string()
        };
        lines(
            &mut out,
            "Pair:      ",
            &format!("{} ({pverdict}; {})", pe.name, kernel_label(pe, facts)),
        );
        if e.check.kernel() != pe.check.kernel() {
            lines(
                &mut out,
                "  differs: ",
                &format!(
                    "kernel {} here, {} there",
                    e.check.kernel(),
                    pe.check.kernel()
                ),
            );
        }
        // the behaviour switches, with their commits
        let (ca, cb) = (e.check.config_json(), pe.check.config_json());
        let switches = e.check.switch_defs();
        for (k, here, there) in config_diff(&ca["variant"], &cb["variant"]) {
            lines(
                &mut out,
                "  differs: ",
                &format!("{k} = {here} here, {there} there"),
            );
            if let Some(sw) = switches.iter().find(|s| s.name == k.as_str()) {
                for id in commits_of(sw.description) {
                    lines(&mut out, "           ", &facts.cite_commit(id));
                }
            }
        }
        // the workload and settings, as the scope block words them
        let theirs = pe.check.scope();
        for (k, v) in e.check.scope() {
            match theirs.iter().find(|(tk, _)| *tk == k) {
                Some((_, tv)) if *tv == v => {}
                Some((_, tv)) => lines(
                    &mut out,
                    "  differs: ",
                    &format!("{k}: {v} here; {tv} there"),
                ),
                None => {}
            }
        }
        out.push("Properties that differ:".into());
        for (a, b) in r.props.iter().zip(&pr.props) {
            if a.observed != b.observed {
                shown.push(a.name);
                lines(
                    &mut out,
                    &format!("  {:<6} ", a.name),
                    &format!(
                        "{} here, {} in {}",
                        a.observed.as_str(),
                        b.observed.as_str(),
                        pe.name
                    ),
                );
            }
        }
        if shown.is_empty() {
            out.push("  none".into());
        }
    } else {
        out.push("Properties violated:".into());
        for p in r.props.iter().filter(|p| p.observed == Verdict::Violated) {
            shown.push(p.name);
            lines(&mut out, &format!("  {:<6} ", p.name), "violated");
        }
        if shown.is_empty() {
            out.push("  none".into());
        }
    }
    let rest = r.props.len() - shown.len();
    if rest > 0 {
        let how = if pair.is_some() {
            "same verdict in both"
        } else {
            "hold"
        };
        lines(
            &mut out,
            "  ",
            &format!(
                "{rest} other propert{} {how} (wbspec check {} lists them)",
                if rest == 1 { "y:" } else { "ies:" },
                e.name
            ),
        );
    }
    if !shown.is_empty() {
        out.push("Meaning:".into());
        for n in &shown {
            if let Some(m) = meaning(n) {
                lines(&mut out, &format!("  {n:<6} "), &m);
            }
        }
    }

    // scope
    out.push("Scope:".into());
    for (k, v) in e.check.scope() {
        lines(&mut out, &format!("  {k:<14} "), &v);
    }

    // kernel state, from the facts file
    let k = e.check.kernel();
    match facts.state(e.check.model(), &k) {
        Some(s) => {
            lines(&mut out, "Kernel:    ", &kernel_label(e, facts));
            lines(&mut out, "  mainline ", &s.mainline);
            lines(&mut out, "  stable   ", &s.stable);
            for (word, ids) in [("has", &s.includes), ("lacks", &s.excludes)] {
                for id in ids.iter() {
                    lines(&mut out, &format!("  {word:<8} "), &facts.cite_commit(id));
                }
            }
            if !s.gaps.is_empty() {
                lines(
                    &mut out,
                    "  gaps     ",
                    &format!(
                        "{} known (model vs trees): {}, checked {}",
                        s.gaps.len(),
                        crate::facts::PATH,
                        s.checked
                    ),
                );
            }
        }
        None => lines(&mut out, "Kernel:    ", &kernel_label(e, facts)),
    }

    // the tool
    lines(
        &mut out,
        "Tool:      ",
        &format!(
            "wbspec {} (model {}, Stateright 0.31.0)",
            ctx.commit,
            e.check.model_version()
        ),
    );
    let repo = if REPOSITORY.contains(".invalid") {
        format!("{REPOSITORY} (placeholder: not published yet)")
    } else {
        REPOSITORY.to_string()
    };
    lines(&mut out, "           ", &repo);
    out.push("Reproduce:".into());
    let mut names = vec![e.name.as_str()];
    if let Some((pe, _)) = pair {
        names.push(pe.name.as_str());
    }
    out.extend(reproduce(&names, ctx));

    // the counterexamples: of this check, else of its pair
    let (ce, cr) = if r.props.iter().any(|p| p.trace.is_some()) {
        (e, r)
    } else {
        match pair {
            Some(p) if p.1.props.iter().any(|p| p.trace.is_some()) => p,
            _ => (e, r),
        }
    };
    for p in &cr.props {
        if let (Verdict::Violated, Some(cx)) = (p.observed, &p.trace) {
            out.push(String::new());
            lines(
                &mut out,
                "",
                &format!(
                    "Counterexample {} {} ({} steps; wbspec explore {} shows it):",
                    ce.name,
                    p.name,
                    cx.len(),
                    ce.name
                ),
            );
            out.extend(ce.check.explain(p.name, cx)?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_descriptions_name_their_commits() {
        assert_eq!(
            commits_of("1ce120dcefc0: FOPEN_DIRECT_IO always flushes"),
            vec!["1ce120dcefc0"]
        );
        assert_eq!(
            commits_of("85c871a02b03/08489c4f4133: NOWAIT lazytime"),
            vec!["85c871a02b03", "08489c4f4133"]
        );
        assert!(commits_of("state L writeback: temp pages").is_empty());
    }

    #[test]
    fn config_diff_reports_flags_one_by_one() {
        let a = serde_json::json!({"kernel": "T", "pages": 1, "variant": {"x": true, "y": false}});
        let b = serde_json::json!({"kernel": "T2", "pages": 1, "variant": {"x": true, "y": true}});
        assert_eq!(
            config_diff(&a, &b),
            vec![
                ("kernel".to_string(), "T".to_string(), "T2".to_string()),
                ("y".to_string(), "false".to_string(), "true".to_string())
            ]
        );
    }
}
