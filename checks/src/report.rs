//! Verdict lines, counterexample narratives and the JSON report.

use crate::catalogue::{Entry, Verdict};
use crate::facts::Facts;
use crate::outcome::{CheckResult, PropResult};
use crate::search::Stop;
use serde_json::{json, Value};
use std::process::Command;
use std::time::Duration;

/// JSON report schema version.
pub const SCHEMA: u32 = 2;

/// One line per check × property, herd7 style:
/// `Check <check> <property> Never|Sometimes <count> <states> ok|MISMATCH`,
/// then `Witness` lines and a `States` line.
pub fn verdict_lines(r: &CheckResult) -> Vec<String> {
    let mut out = Vec::new();
    for p in &r.props {
        let word = match p.observed {
            Verdict::Holds => "Never",
            Verdict::Violated => "Sometimes",
            // an incomplete search proves no "never"
            Verdict::Unknown => "Unknown",
        };
        let status = prop_status(r, p);
        out.push(format!(
            "Check {} {} {} {} {} {}",
            r.name, p.name, word, p.count, r.unique_states, status
        ));
    }
    for w in &r.witnesses {
        if !w.listed && w.count == 0 {
            continue;
        }
        let word = if w.count > 0 { "Reached" } else { "Unreached" };
        let status = match w.status(r.witnesses_pinned) {
            // a partial count is compared with no pin
            _ if !r.complete => "incomplete".to_string(),
            // a window the catalogue's run reaches and the drop closes
            _ if !r.dropped.is_empty() && w.listed && w.count == 0 => {
                "UNREACHED with the drop (the catalogue's run reaches it)".to_string()
            }
            _ if !r.dropped.is_empty() => "not compared (drop)".to_string(),
            Err(m) => m,
            Ok(()) if !r.witnesses_pinned => "unpinned".to_string(),
            Ok(()) => "ok".to_string(),
        };
        out.push(format!(
            "Witness {} {} {} {} {} {}",
            r.name, w.name, word, w.count, r.unique_states, status
        ));
    }
    let states = match r.expected_states {
        _ if !r.complete => format!(
            "({}: incomplete, not a proof)",
            r.stopped.map_or("stopped".into(), |s| s.describe())
        ),
        _ if !r.dropped.is_empty() => format!("not compared (dropped {})", r.dropped.join(" ")),
        Some(_) if !r.pins_apply => format!(
            "not compared (symmetry {}, the pins are {})",
            if r.symmetry { "on" } else { "off" },
            if r.symmetry { "unreduced" } else { "reduced" }
        ),
        Some(x) if x == r.unique_states => "ok".to_string(),
        Some(x) => format!("MISMATCH pinned {x}"),
        None => "MISMATCH unpinned".to_string(),
    };
    out.push(format!(
        "States {} {} {} depth={} {:.2}s{} {}",
        r.name,
        if r.complete { "complete" } else { "INCOMPLETE" },
        r.unique_states,
        // several threads visit in an order that varies: no DFS depth
        if r.depth_unknown {
            "n/a".to_string()
        } else {
            r.max_depth.to_string()
        },
        r.elapsed.as_secs_f64(),
        if r.symmetry { " symmetry" } else { "" },
        states
    ));
    out
}

/// The last word of a `Check` line: `ok` only for a verdict that is
/// proven (complete run, counterexample found) and as expected.
pub fn prop_status(r: &CheckResult, p: &PropResult) -> String {
    let cut = |s: Option<Stop>| s.map_or("stopped".into(), |s| s.describe());
    match p.observed {
        Verdict::Unknown => format!("incomplete ({}, not a proof)", cut(r.stopped)),
        // a what-if run: compared with the catalogue's verdict, no pin
        v if !r.dropped.is_empty() && v != p.expected => {
            format!("CHANGED by the drop (catalogue: {})", p.expected.as_str())
        }
        _ if !r.dropped.is_empty() => "as in the catalogue (drop)".to_string(),
        v if v != p.expected && p.intended => "MISMATCH expected intended (violated)".to_string(),
        v if v != p.expected => format!("MISMATCH expected {}", p.expected.as_str()),
        _ if p.count_status().is_err() => p.count_status().unwrap_err(),
        _ if p.trace_missing() => format!(
            "NO-COUNTEREXAMPLE (its search {}, not a proof)",
            cut(p.search_stopped)
        ),
        // a violation seen before the bound: its count is a lower bound
        Verdict::Violated if !r.complete => {
            format!("violated-before-bound ({})", cut(r.stopped))
        }
        // expected, and not a bug: the property asks more than the
        // kernel promises
        Verdict::Violated if p.intended => format!(
            "ok intended (stricter than the kernel's contract, {})",
            p.stricter_than.unwrap_or("?")
        ),
        _ => "ok".to_string(),
    }
}

pub fn summary_lines(results: &[CheckResult], t: Duration) -> Vec<String> {
    let verdicts: usize = results.iter().map(|r| r.props.len()).sum();
    let mism: usize = results
        .iter()
        .map(|r| {
            r.props
                .iter()
                .filter(|p| p.expected != p.observed && p.observed != Verdict::Unknown)
                .count()
        })
        .sum();
    let bad: Vec<&str> = results
        .iter()
        .filter(|r| !r.ok())
        .map(|r| r.name.as_str())
        .collect();
    let incomplete = results.iter().filter(|r| !r.complete).count();
    let intended: Vec<String> = results
        .iter()
        .flat_map(|r| {
            r.props
                .iter()
                .filter(|p| p.intended && p.observed == Verdict::Violated)
                .map(move |p| format!("{}:{}", r.name, p.name))
        })
        .collect();
    let mut out = vec![format!(
        "Summary: {} checks, {} verdicts, {} verdict mismatches, {} checks not as expected, {:.1}s",
        results.len(),
        verdicts,
        mism,
        bad.len(),
        t.as_secs_f64()
    )];
    if !intended.is_empty() {
        out.push(format!(
            "Intended: {} expected violations of properties stricter than the kernel's contract (not bugs): {}",
            intended.len(),
            intended.join(" ")
        ));
    }
    if incomplete > 0 {
        out.push(format!(
            "Incomplete: {incomplete} checks stopped at a bound: their verdicts are unknown, not a proof"
        ));
    }
    let no_trace: usize = results
        .iter()
        .map(|r| r.props.iter().filter(|p| p.trace_missing()).count())
        .sum();
    if no_trace > 0 {
        out.push(format!(
            "No counterexample: {no_trace} violations whose counterexample search stopped at a bound"
        ));
    }
    if !bad.is_empty() {
        out.push(format!("Not as expected: {}", bad.join(" ")));
    }
    out
}

/// `Counterexample` blocks of every violation of `r`, narrated.
pub fn counterexample_lines(e: &Entry, r: &CheckResult) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for p in &r.props {
        if let Some(cx) = &p.trace {
            out.push(format!(
                "Counterexample {} {} ({} steps)",
                r.name,
                p.name,
                cx.len()
            ));
            out.push(format!("Explorer path #/steps/{}", cx.encoded));
            out.extend(e.check.explain(p.name, cx)?);
        }
    }
    Ok(out)
}

/// Identity of the tool that made a report: version, commit, dirty tree.
pub fn tool_json() -> Value {
    let (commit, dirty) = commit_of_tree();
    json!({
        "name": "wbspec",
        "version": env!("CARGO_PKG_VERSION"),
        "commit": commit,
        "dirty": dirty,
        "stateright": "0.31.0",
    })
}

/// Identity of the catalogue a report was made with (`merge-reports`
/// refuses shards of another one).
pub fn catalogue_json(cat: &crate::catalogue::Catalogue) -> Value {
    json!({ "hash": cat.hash })
}

/// The JSON of a check's kernel state: its label and what it stands for
/// (checks/facts/kernels.toml), and the switches that differ from it.
pub fn kernel_json(e: &Entry, facts: &Facts) -> Value {
    let name = e.check.kernel();
    let commits = |ids: &[String]| {
        ids.iter()
            .map(|id| {
                let c = facts.commit(id);
                json!({"id": id, "title": c.map(|c| c.title.as_str())})
            })
            .collect::<Vec<_>>()
    };
    match facts.state(e.check.model(), &name) {
        Some(s) => json!({
            "name": name,
            "label": s.label,
            "mainline": s.mainline,
            "stable": s.stable,
            "includes": commits(&s.includes),
            "excludes": commits(&s.excludes),
            "gaps": s.gaps,
            "checked": s.checked,
        }),
        None => json!({"name": name}),
    }
}

pub fn check_json(e: &Entry, r: &CheckResult, facts: &Facts) -> Value {
    let mut v = check_json_fields(e, r, facts);
    // a run on several threads has no DFS depth (its order varies from
    // run to run); the one-thread report is unchanged
    if r.depth_unknown {
        v["max_depth"] = Value::Null;
    }
    v
}

fn check_json_fields(e: &Entry, r: &CheckResult, facts: &Facts) -> Value {
    json!({
        "name": r.name,
        "question": e.question,
        "tags": e.tags,
        "model": r.model,
        "model_version": r.model_version,
        "kernel": kernel_json(e, facts),
        "switches": e.check.switches_changed(),
        "config": e.check.config_json(),
        "complete": r.complete,
        "stopped": r.stopped.map(|s| s.describe()),
        "bound": r.stopped.map(|s| s.json()),
        "symmetry": r.symmetry,
        "unique_states": r.unique_states,
        "total_states": r.total_states,
        "max_depth": r.max_depth,
        "pinned_states": r.expected_states,
        "seconds": r.elapsed.as_secs_f64(),
        "as_expected": r.ok(),
        "dropped": r.dropped,
        "mutant": e.is_mutant(),
        "properties": r.props.iter().map(|p| json!({
            "name": p.name,
            "expected": p.expected.as_str(),
            "intended": p.intended,
            "stricter_than": p.stricter_than,
            "observed": p.observed.as_str(),
            "violating_states": p.count,
            "pinned_violating_states": p.pinned,
            "counterexample": p.trace.as_ref().map(|cx| json!({
                "encoded": cx.encoded,
                "actions": cx.actions,
                "steps": cx.labels,
            })),
            "counterexample_search_stopped": p.search_stopped.map(|s| s.json()),
        })).collect::<Vec<_>>(),
        "witnesses": r.witnesses.iter().map(|w| json!({
            "name": w.name,
            "listed": w.listed,
            "pinned": w.pinned,
            "reached": w.count > 0,
            "states": w.count,
            "as_expected": w.status(r.witnesses_pinned).is_ok(),
        })).collect::<Vec<_>>(),
    })
}

/// The whole report; `extra` carries the catalogue-wide results (mutation
/// score, switches).
pub fn json_report(checks: Vec<Value>, extra: Value) -> Value {
    let mut models: Vec<(String, String)> = checks
        .iter()
        .map(|c| {
            (
                c["model"].as_str().unwrap_or("").to_string(),
                c["model_version"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    models.sort();
    models.dedup();
    let mut doc = json!({
        "schema": SCHEMA,
        "tool": tool_json(),
        "models": models.iter().map(|(m, v)| json!({"name": m, "version": v})).collect::<Vec<_>>(),
        "checks": checks,
    });
    if let (Some(o), Some(x)) = (doc.as_object_mut(), extra.as_object()) {
        for (k, v) in x {
            o.insert(k.clone(), v.clone());
        }
    }
    doc
}

/// The commit of the checkout that contains the working directory (`git
/// rev-parse --short HEAD`) and whether tracked files have uncommitted
/// changes; ("unknown", false) without git.
pub fn commit_of_tree() -> (String, bool) {
    let out = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let hash = String::from_utf8_lossy(&o.stdout).trim().to_string();
            let dirty = Command::new("git")
                .args(["status", "--porcelain", "--untracked-files=no"])
                .output()
                .map(|o| o.status.success() && !o.stdout.is_empty())
                .unwrap_or(false);
            (hash, dirty)
        }
        _ => ("unknown".into(), false),
    }
}

/// `abc1234`, `abc1234+dirty` or `unknown`.
pub fn model_commit() -> String {
    match commit_of_tree() {
        (h, true) => format!("{h}+dirty"),
        (h, false) => h,
    }
}
