//! Verdict lines, narratives and the JSON report.

use crate::catalogue::{Entry, Verdict};
use crate::runner::{self, CheckResult};
use serde_json::{json, Value};
use stateright::Model;
use std::time::Duration;
use wbspec_models::fuse::{Actor, FuseModel, State};

/// JSON report schema version.
pub const SCHEMA: u32 = 1;

/// One line per check × property, herd7 style:
/// `Check <check> <property> Never|Sometimes <count> <states> ok|MISMATCH`.
pub fn print_verdicts(e: &Entry, r: &CheckResult) {
    for l in verdict_lines(e, r) {
        println!("{l}");
    }
}

/// The lines `print_verdicts` prints.
pub fn verdict_lines(e: &Entry, r: &CheckResult) -> Vec<String> {
    let mut out = Vec::new();
    for p in &r.props {
        let word = match p.observed {
            Verdict::Holds => "Never",
            Verdict::Violated => "Sometimes",
        };
        let status = if p.expected == p.observed {
            "ok".to_string()
        } else {
            format!("MISMATCH expected {}", p.expected.as_str())
        };
        out.push(format!(
            "Check {} {} {} {} {} {}",
            r.name, p.name, word, p.count, r.unique_states, status
        ));
    }
    for w in &r.witnesses {
        if !w.required && w.count == 0 {
            continue;
        }
        let word = if w.count > 0 { "Reached" } else { "Unreached" };
        let status = if w.required && w.count == 0 {
            "MISMATCH required"
        } else if w.required {
            "ok"
        } else {
            "-"
        };
        out.push(format!(
            "Witness {} {} {} {} {} {}",
            r.name, w.name, word, w.count, r.unique_states, status
        ));
    }
    let states = match r.expected_states {
        Some(x) if x == r.unique_states => "ok".to_string(),
        Some(x) => format!("MISMATCH pinned {x}"),
        None => "unpinned".to_string(),
    };
    out.push(format!(
        "States {} {} {} depth={} {:.2}s {}",
        r.name,
        if r.complete { "complete" } else { "INCOMPLETE" },
        r.unique_states,
        r.max_depth,
        r.elapsed.as_secs_f64(),
        states
    ));
    let _ = e;
    out
}

pub fn print_summary(results: &[CheckResult], t: Duration) {
    let verdicts: usize = results.iter().map(|r| r.props.len()).sum();
    let mism: usize = results
        .iter()
        .map(|r| r.props.iter().filter(|p| p.expected != p.observed).count())
        .sum();
    let bad: Vec<&str> = results
        .iter()
        .filter(|r| !r.ok())
        .map(|r| r.name.as_str())
        .collect();
    println!(
        "Summary: {} checks, {} verdicts, {} verdict mismatches, {} checks not as expected, {:.1}s",
        results.len(),
        verdicts,
        mism,
        bad.len(),
        t.as_secs_f64()
    );
    if !bad.is_empty() {
        println!("Not as expected: {}", bad.join(" "));
    }
}

/// Numbered kernel-terms narrative of a path, ≤ 72 columns per line.
pub fn narrate(
    m: &FuseModel,
    states: &[State],
    actions: &[wbspec_models::fuse::Action],
) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        let (before, after) = (&states[i], &states[i + 1]);
        let who = match a.actor {
            Actor::Task(t) => format!("T{t} {:<10}", m.cfg.tasks[t as usize].short()),
            Actor::Daemon(w) => format!("D{w} {:<10}", "daemon"),
        };
        let what = wbspec_models::fuse::narrate::describe(m, before, after, a);
        let head = format!("{:>2} {} ", i + 1, who);
        out.extend(wrap(&head, &what, 72));
    }
    out
}

/// Wraps `text` after `head` at `width` columns; continuation lines are
/// indented under the text. Breaks at "; " or spaces.
pub fn wrap(head: &str, text: &str, width: usize) -> Vec<String> {
    let indent = " ".repeat(head.chars().count());
    let room = width.saturating_sub(indent.len()).max(20);
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let add = if cur.is_empty() {
            word.len()
        } else {
            cur.len() + 1 + word.len()
        };
        if add > room && !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{head}{l}")
            } else {
                format!("{indent}{l}")
            }
        })
        .collect()
}

pub fn print_counterexamples(e: &Entry, r: &CheckResult) -> Result<(), String> {
    let m = runner::build_model(e)?;
    for p in &r.props {
        if let Some(cx) = &p.trace {
            let states = runner::replay(&m, &cx.actions)?;
            println!(
                "Counterexample {} {} ({} steps)",
                r.name,
                p.name,
                cx.actions.len()
            );
            println!("Explorer path #/steps/{}", cx.encoded);
            // ≤ 72 columns as they are: no indent
            for l in crate::explain::explain(&m, &states, &cx.actions, p.name) {
                println!("{l}");
            }
        }
    }
    Ok(())
}

pub fn json_report(entries: &[&Entry], results: &[CheckResult]) -> Value {
    let checks: Vec<Value> = entries
        .iter()
        .zip(results)
        .map(|(e, r)| {
            let m = runner::build_model(e).expect("model built before");
            json!({
                "name": r.name,
                "question": e.question,
                "tags": e.tags,
                "model": e.model,
                "kernel": format!("{:?}", e.config.kernel),
                "variant": e.config.variant.flags_on(),
                "config": e.config,
                "complete": r.complete,
                "unique_states": r.unique_states,
                "total_states": r.total_states,
                "max_depth": r.max_depth,
                "pinned_states": r.expected_states,
                "seconds": r.elapsed.as_secs_f64(),
                "as_expected": r.ok(),
                "properties": r.props.iter().map(|p| json!({
                    "name": p.name,
                    "expected": p.expected.as_str(),
                    "observed": p.observed.as_str(),
                    "violating_states": p.count,
                    "counterexample": p.trace.as_ref().map(|cx| json!({
                        "encoded": cx.encoded,
                        "actions": cx.actions,
                        "steps": cx.actions.iter().map(|a| m.format_action(a)).collect::<Vec<_>>(),
                    })),
                })).collect::<Vec<_>>(),
                "witnesses": r.witnesses.iter().map(|w| json!({
                    "name": w.name,
                    "required": w.required,
                    "reached": w.count > 0,
                    "states": w.count,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let ms = crate::results::mutation_score(entries, results);
    json!({
        "schema": SCHEMA,
        "mutation_score": ms.map(|m| json!({
            "killed": m.killed,
            "survived": m.survived,
            "equivalent": m.equivalent,
        })),
        "tool": format!("wbspec {}", env!("CARGO_PKG_VERSION")),
        "stateright": "0.31.0",
        "checks": checks,
    })
}
