//! `wbspec cite CHECK`: a plain-text block (≤ 72 columns) to paste into a
//! review mail: the question, the model's commit, the command that
//! reproduces the result, the verdict lines, the good/bad pair and the
//! narrated counterexample.

use crate::catalogue::{Entry, Verdict};
use crate::explain::wrap;
use crate::outcome::CheckResult;
use crate::report::verdict_lines;

/// The kernel state (with its versions) and the switches that differ
/// from it.
fn kernel_of(e: &Entry) -> String {
    let k = e.check.kernel();
    let label = e
        .check
        .kernel_states()
        .iter()
        .find(|s| s.name == k)
        .map(|s| format!("{k} ({})", s.versions))
        .unwrap_or(k);
    let flags = e.check.switches_changed();
    if flags.is_empty() {
        label
    } else {
        format!("{label} + {}", flags.join(", "))
    }
}

/// The citation block for `e` (and its pair, already run). Returns the
/// lines; every line is at most 72 columns.
pub fn cite(
    e: &Entry,
    r: &CheckResult,
    pair: Option<(&Entry, &CheckResult)>,
    commit: &str,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    out.extend(wrap("Question:  ", &e.question, 72));
    out.push(format!(
        "Model:     wbspec {commit} (model {}, Stateright 0.31.0)",
        e.check.model_version()
    ));
    out.extend(wrap("Kernel:    ", &kernel_of(e), 72));
    let mut names = vec![e.name.as_str()];
    if let Some((pe, _)) = pair {
        names.push(pe.name.as_str());
    }
    out.push("Reproduce:".into());
    if commit != "unknown" {
        out.push(format!(
            "  git checkout {}",
            commit.trim_end_matches("+dirty")
        ));
    }
    let cmd = format!(
        "  cargo run --release -- check {} --explain",
        names.join(" ")
    );
    if cmd.len() <= 72 {
        out.push(cmd);
    } else {
        // a shell continuation, so the lines paste as one command
        out.push("  cargo run --release -- check \\".into());
        out.push(format!("    {} --explain", names.join(" ")));
    }
    out.push(String::new());
    let mut runs = vec![(e, r)];
    if let Some(p) = pair {
        runs.push(p);
    }
    for (_, pr) in &runs {
        for l in verdict_lines(pr) {
            out.extend(wrap("", &l, 72));
        }
    }
    if let Some((pe, pr)) = pair {
        out.push(String::new());
        out.push("Pair:".into());
        let mut differs = false;
        for (a, b) in r.props.iter().zip(&pr.props) {
            if a.observed != b.observed {
                differs = true;
                out.extend(wrap(
                    "  ",
                    &format!(
                        "{}: {} in {} ({}), {} in {} ({})",
                        a.name,
                        a.observed.as_str(),
                        e.name,
                        kernel_of(e),
                        b.observed.as_str(),
                        pe.name,
                        kernel_of(pe)
                    ),
                    72,
                ));
            }
        }
        if !differs {
            out.push(format!(
                "  {} and {} agree on every property",
                e.name, pe.name
            ));
        }
    }
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
            out.push(format!(
                "Counterexample {} {} ({} steps):",
                ce.name,
                p.name,
                cx.len()
            ));
            out.push(format!("Explorer: wbspec explore {} shows it", ce.name));
            out.extend(ce.check.explain(p.name, cx)?);
        }
    }
    Ok(out)
}
