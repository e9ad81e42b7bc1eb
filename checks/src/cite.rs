//! `wbspec cite CHECK`: a plain-text block (≤ 72 columns) to paste into a
//! review mail: the question, the model's commit, the command that
//! reproduces the result, the verdict lines, the good/bad pair and the
//! narrated counterexample.

use crate::catalogue::{Entry, Verdict};
use crate::report::{verdict_lines, wrap};
use crate::runner::{self, CheckResult};
use std::path::Path;
use std::process::Command;
use wbspec_models::fuse::{Variant, MODEL_VERSION};

/// `git rev-parse --short HEAD` of the checkout the binary was built in
/// (or of the current directory), with `+dirty` when tracked files have
/// uncommitted changes; "unknown" without git.
pub fn model_commit() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for dir in [root.as_path(), Path::new(".")] {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["rev-parse", "--short", "HEAD"])
            .output();
        if let Ok(o) = out {
            if o.status.success() {
                let hash = String::from_utf8_lossy(&o.stdout).trim().to_string();
                let dirty = Command::new("git")
                    .arg("-C")
                    .arg(dir)
                    .args(["status", "--porcelain", "--untracked-files=no"])
                    .output()
                    .map(|o| o.status.success() && !o.stdout.is_empty())
                    .unwrap_or(false);
                return if dirty { format!("{hash}+dirty") } else { hash };
            }
        }
    }
    "unknown".into()
}

/// The kernel state and the variant flags that differ from its base.
fn kernel_of(e: &Entry) -> String {
    let base = Variant::base(e.config.kernel).flags_on();
    let on = e.config.variant.flags_on();
    let mut flags: Vec<String> = on
        .iter()
        .filter(|f| !base.contains(f))
        .map(|f| f.to_string())
        .collect();
    flags.extend(
        base.iter()
            .filter(|f| !on.contains(f))
            .map(|f| format!("!{f}")),
    );
    if flags.is_empty() {
        e.config.kernel.label().to_string()
    } else {
        format!("{} + {}", e.config.kernel.label(), flags.join(", "))
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
        "Model:     wbspec {commit} (model {MODEL_VERSION}, Stateright 0.31.0)"
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
    for (pe, pr) in &runs {
        for l in verdict_lines(pe, pr) {
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
    let m = runner::build_model(ce)?;
    for p in &cr.props {
        if let (Verdict::Violated, Some(cx)) = (p.observed, &p.trace) {
            let states = runner::replay(&m, &cx.actions)?;
            out.push(String::new());
            out.push(format!(
                "Counterexample {} {} ({} steps):",
                ce.name,
                p.name,
                cx.actions.len()
            ));
            out.push(format!("Explorer: wbspec explore {} shows it", ce.name));
            out.extend(crate::explain::explain(&m, &states, &cx.actions, p.name));
        }
    }
    Ok(out)
}
