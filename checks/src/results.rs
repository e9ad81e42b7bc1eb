//! Catalogue-wide results, generated from a run, never written by hand:
//! the mutation score, which check pairs observe each behaviour switch,
//! and the results table (docs/results.md).

use crate::catalogue::{Catalogue, Entry, Verdict};
use crate::outcome::CheckResult;
use serde_json::{json, Value};
use stateright::Expectation;
use std::collections::HashMap;
use wbspec_models::spec::SwitchKind;

/// Mutation score: a mutant check (tagged `mutant`, or running a mutant
/// switch: `Entry::is_mutant`) is killed when some always-property is
/// violated (an expected `intended` violation, the kernel's own
/// behaviour, kills nothing). Checks tagged `equivalent` are mutants shown (by the model)
/// to change no property; they are reported, not counted.
pub struct MutationScore {
    pub killed: Vec<String>,
    pub survived: Vec<String>,
    pub equivalent: Vec<String>,
    /// Mutants whose run stopped at a bound before a violation: neither
    /// killed nor shown to survive (counted as not killed).
    pub undecided: Vec<String>,
}

impl MutationScore {
    pub fn total(&self) -> usize {
        self.killed.len() + self.survived.len() + self.undecided.len()
    }
    /// Mutants that make the run fail: survivors and undecided ones.
    pub fn failed(&self) -> usize {
        self.survived.len() + self.undecided.len()
    }
    pub fn line(&self) -> String {
        let mut s = format!(
            "Mutation score: {}/{} mutants killed",
            self.killed.len(),
            self.total()
        );
        if !self.equivalent.is_empty() {
            s.push_str(&format!(
                " ({} equivalent, kept: {})",
                self.equivalent.len(),
                self.equivalent.join(" ")
            ));
        }
        if !self.survived.is_empty() {
            s.push_str(&format!("; SURVIVED: {}", self.survived.join(" ")));
        }
        if !self.undecided.is_empty() {
            s.push_str(&format!(
                "; UNDECIDED (stopped at a bound): {}",
                self.undecided.join(" ")
            ));
        }
        s
    }
    pub fn json(&self) -> Value {
        json!({
            "killed": self.killed,
            "survived": self.survived,
            "equivalent": self.equivalent,
            "undecided": self.undecided,
        })
    }
}

pub fn mutation_score(entries: &[&Entry], results: &[CheckResult]) -> Option<MutationScore> {
    let mut m = MutationScore {
        killed: vec![],
        survived: vec![],
        equivalent: vec![],
        undecided: vec![],
    };
    for (e, r) in entries.iter().zip(results) {
        if !e.is_mutant() {
            continue;
        }
        // a violation seen before a bound is real; no violation proves
        // survival only after a complete run
        let killed = r
            .props
            .iter()
            .any(|p| p.observed == Verdict::Violated && !p.intended);
        let unknown = r.props.iter().any(|p| p.observed == Verdict::Unknown);
        if killed {
            m.killed.push(e.name.clone());
        } else if unknown {
            m.undecided.push(e.name.clone());
        } else if e.has_tag("equivalent") {
            m.equivalent.push(e.name.clone());
        } else {
            m.survived.push(e.name.clone());
        }
    }
    if m.total() + m.equivalent.len() == 0 {
        None
    } else {
        Some(m)
    }
}

/// How one behaviour switch fared in the catalogue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SwitchStatus {
    /// Two checks whose configurations differ only in the switch, with
    /// different verdicts.
    Observed(String, String),
    /// Declared unobservable in the catalogue, with the reason.
    Unobservable(String),
    Unobserved,
}

pub struct SwitchResult {
    pub model: String,
    pub name: String,
    pub kind: SwitchKind,
    pub status: SwitchStatus,
}

impl SwitchResult {
    pub fn ok(&self) -> bool {
        self.status != SwitchStatus::Unobserved
    }
    pub fn line(&self) -> String {
        match &self.status {
            SwitchStatus::Observed(a, b) => {
                format!("Switch {} observed-by {a} {b}", self.name)
            }
            SwitchStatus::Unobservable(why) => {
                format!("Switch {} unobservable: {why}", self.name)
            }
            SwitchStatus::Unobserved => format!("Switch {} UNOBSERVED", self.name),
        }
    }
}

/// Do two runs disagree on a verdict both of them proved? (An unknown
/// verdict differs from nothing.)
fn differ(a: &CheckResult, b: &CheckResult) -> bool {
    a.props.iter().zip(&b.props).any(|(p, q)| {
        p.observed != q.observed && p.observed != Verdict::Unknown && q.observed != Verdict::Unknown
    })
}

/// For every switch of every model in the catalogue: a pair of checks
/// that differ only in it and disagree on some verdict, or the
/// catalogue's reason why none can exist. Needs results for every entry.
pub fn switches(cat: &Catalogue, results: &[CheckResult]) -> Vec<SwitchResult> {
    let mut out = Vec::new();
    let mut models: Vec<&Entry> = Vec::new();
    for e in &cat.entries {
        if !models.iter().any(|m| m.model == e.model) {
            models.push(e);
        }
    }
    // every configuration serialised once (serde_json's maps are sorted,
    // so equal configurations are equal strings): the checks by model and
    // configuration, in catalogue order
    let mut by_config: HashMap<(&str, String), Vec<usize>> = HashMap::new();
    for (j, d) in cat.entries.iter().enumerate() {
        by_config
            .entry((d.model.as_str(), d.check.config_json().to_string()))
            .or_default()
            .push(j);
    }
    for me in models {
        for sw in me.check.switch_defs() {
            let mut status = SwitchStatus::Unobserved;
            'find: for (i, e) in cat.entries.iter().enumerate() {
                if e.model != me.model {
                    continue;
                }
                let Some(flipped) = e.check.flipped_json(sw.name) else {
                    continue;
                };
                let Some(same) = by_config.get(&(e.model.as_str(), flipped.to_string())) else {
                    continue;
                };
                for &j in same {
                    if i != j && differ(&results[i], &results[j]) {
                        let d = &cat.entries[j];
                        status = SwitchStatus::Observed(e.name.clone(), d.name.clone());
                        break 'find;
                    }
                }
            }
            if status == SwitchStatus::Unobserved {
                if let Some(u) = cat
                    .unobservable
                    .iter()
                    .find(|u| u.model == me.model && u.switch == sw.name)
                {
                    status = SwitchStatus::Unobservable(u.why.clone());
                }
            }
            out.push(SwitchResult {
                model: me.model.clone(),
                name: sw.name.to_string(),
                kind: sw.kind,
                status,
            });
        }
    }
    out
}

/// Unobservable declarations that name no switch of their model: errors.
pub fn unknown_unobservable(cat: &Catalogue) -> Vec<String> {
    cat.unobservable
        .iter()
        .filter(|u| {
            !cat.entries.iter().any(|e| {
                e.model == u.model && e.check.switch_defs().iter().any(|s| s.name == u.switch)
            })
        })
        .map(|u| {
            format!(
                "[[unobservable]] names no switch '{}' of model {}",
                u.switch, u.model
            )
        })
        .collect()
}

pub fn switches_json(sw: &[SwitchResult]) -> Value {
    Value::Array(
        sw.iter()
            .map(|s| {
                let (status, detail) = match &s.status {
                    SwitchStatus::Observed(a, b) => ("observed", json!([a, b])),
                    SwitchStatus::Unobservable(w) => ("unobservable", json!(w)),
                    SwitchStatus::Unobserved => ("unobserved", Value::Null),
                };
                json!({"model": s.model, "name": s.name, "kind": s.kind.as_str(),
                       "status": status, "detail": detail})
            })
            .collect(),
    )
}

/// Stable file name of a saved counterexample.
pub fn trace_file(check: &str, prop: &str) -> String {
    crate::trace::file_name(check, prop)
}

/// docs/results.md: per model, a legend of its kernel states, then one
/// row per check × always-property.
pub fn markdown(
    entries: &[&Entry],
    results: &[CheckResult],
    switches: Option<&[SwitchResult]>,
    command: &str,
) -> Result<String, String> {
    let facts = crate::facts::facts()?;
    let mut s = String::new();
    s.push_str("# Results\n\n");
    s.push_str(&format!(
        "Generated by `{command}`; do not edit by hand. Each row is one \
         catalogue check (checks/catalogue/), explored exhaustively. \
         \u{2713} = the property holds in every reachable state; \
         \u{2717} = violated, linked to its shortest counterexample in traces/ \
         (`wbspec explain FILE` narrates it); \u{2717} intended = violated, \
         as expected, by the kernel's intended behaviour: the property asks \
         more than the kernel's contract (its meaning names the contract), \
         so the violation is no bug. `states` is the pinned unique \
         state count. Every check also runs under the model's small queue \
         bound (its `-bg1` twin, e.g. `max_background 1`); a cell reads \
         `\u{2713} / \u{2717} bg1` when the verdict there differs, i.e. \
         when the verdict depends on an uncongested queue, and the last \
         section lists those verdicts.\n"
    ));
    let incomplete: Vec<&str> = results
        .iter()
        .filter(|r| !r.proven())
        .map(|r| r.name.as_str())
        .collect();
    if !incomplete.is_empty() {
        s.push_str(&format!(
            "\n**INCOMPLETE, NOT A PROOF**: {} checks stopped at a bound \
             (--max-states/--max-seconds): ? = unknown; \u{2717} without a \
             link = violated, counterexample search stopped. {}\n",
            incomplete.len(),
            incomplete.join(" ")
        ));
    }
    let mut models: Vec<&str> = Vec::new();
    for e in entries {
        if !models.contains(&e.model.as_str()) {
            models.push(&e.model);
        }
    }
    for model in models {
        let first = entries.iter().find(|e| e.model == model).expect("a check");
        let c = &first.check;
        s.push_str(&format!("\n## Model `{model}` ({})\n\n", c.model_version()));
        s.push_str(
            "| kernel state | mainline | stable | what it is | includes | excludes |\n\
             |---|---|---|---|---|---|\n",
        );
        let mut gaps = Vec::new();
        for k in c.kernel_states() {
            let f = facts.state(model, k.name).ok_or_else(|| {
                format!(
                    "{}: no [[state]] for kernel state {} of model {model}",
                    crate::facts::PATH,
                    k.name
                )
            })?;
            let ids = |v: &[String]| {
                if v.is_empty() {
                    "-".to_string()
                } else {
                    v.join(", ")
                }
            };
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                k.name,
                f.mainline,
                f.stable,
                f.summary,
                ids(&f.includes),
                ids(&f.excludes)
            ));
            gaps.extend(f.gaps.iter().map(|g| format!("- {}: {g}\n", k.name)));
        }
        s.push_str(&format!(
            "\nVersions and commits: {} (titles, sources, dates checked).\n",
            crate::facts::PATH
        ));
        if !gaps.is_empty() {
            s.push_str("\nKnown gaps between the states and the trees they name:\n\n");
            for g in gaps {
                s.push_str(&g);
            }
        }
        let props: Vec<(&str, &str)> = c
            .property_defs()
            .iter()
            .filter(|p| p.expectation == Expectation::Always)
            .map(|p| (p.name, p.description))
            .collect();
        s.push_str("\n| property | meaning |\n|---|---|\n");
        for p in c
            .property_defs()
            .iter()
            .filter(|p| p.expectation == Expectation::Always)
        {
            match p.stricter {
                None => s.push_str(&format!("| {} | {} |\n", p.name, p.description)),
                Some(x) => s.push_str(&format!(
                    "| {} | {} — stricter than the kernel's contract ({}): {} |\n",
                    p.name,
                    p.description,
                    x.contract,
                    x.promise.replace('|', "/")
                )),
            }
        }
        let mut header = String::from("\n| check | kernel | switches | settings |");
        let mut rule = String::from("|---|---|---|---|");
        for (p, _) in &props {
            header.push_str(&format!(" {p} |"));
            rule.push_str("---|");
        }
        header.push_str(" states | question |");
        rule.push_str("---|---|");
        s.push_str(&header);
        s.push('\n');
        s.push_str(&rule);
        s.push('\n');
        let twin = |name: &str| {
            entries
                .iter()
                .zip(results)
                .find(|(d, _)| d.parent.as_deref() == Some(name))
                .map(|(d, r)| (*d, r))
        };
        for (e, r) in entries
            .iter()
            .zip(results)
            .filter(|(e, _)| e.model == model && e.parent.is_none())
        {
            let sw = e.check.switches_changed();
            let mut row = format!(
                "| {} | {} | {} | {} |",
                e.name,
                e.check.kernel(),
                if sw.is_empty() {
                    "-".into()
                } else {
                    sw.join(", ")
                },
                e.check.config_notes()
            );
            let mark =
                |name: &str, r: &CheckResult, p: &str| match r.props.iter().find(|x| x.name == p) {
                    // a check mark only for a complete run's verdict
                    Some(x) if x.observed == Verdict::Holds && r.complete => "\u{2713}".to_string(),
                    Some(x) if x.trace_missing() => "\u{2717}".to_string(),
                    Some(x) if x.observed == Verdict::Violated && x.intended => {
                        format!("[\u{2717} intended](../traces/{})", trace_file(name, p))
                    }
                    Some(x) if x.observed == Verdict::Violated => {
                        format!("[\u{2717}](../traces/{})", trace_file(name, p))
                    }
                    _ => "?".into(),
                };
            for (p, _) in &props {
                let mut cell = mark(&e.name, r, p);
                if let Some((d, dr)) = twin(&e.name) {
                    let v =
                        |r: &CheckResult| r.props.iter().find(|x| x.name == *p).map(|x| x.observed);
                    if v(dr) != v(r) {
                        cell.push_str(&format!(" / {} bg1", mark(&d.name, dr, p)));
                    }
                }
                row.push_str(&format!(" {cell} |"));
            }
            row.push_str(&format!(
                " {}{}{} | {} |",
                r.unique_states,
                if r.symmetry { " (symmetry)" } else { "" },
                if r.complete { "" } else { " (INCOMPLETE)" },
                e.question.replace('|', "/")
            ));
            s.push_str(&row);
            s.push('\n');
        }
    }
    if let Some(m) = mutation_score(entries, results) {
        s.push_str(&format!("\n{}.\n", m.line()));
    }
    let mut dep = String::new();
    for (d, dr) in entries.iter().zip(results) {
        let Some(pn) = &d.parent else { continue };
        let Some((_, pr)) = entries.iter().zip(results).find(|(e, _)| &e.name == pn) else {
            continue;
        };
        for p in &dr.props {
            let Some(q) = pr.props.iter().find(|x| x.name == p.name) else {
                continue;
            };
            if q.observed != p.observed
                && q.observed != Verdict::Unknown
                && p.observed != Verdict::Unknown
            {
                let link = |name: &str, v: Verdict| match v {
                    Verdict::Holds => "holds".to_string(),
                    Verdict::Violated => {
                        format!("[violated](../traces/{})", trace_file(name, p.name))
                    }
                    Verdict::Unknown => "unknown (incomplete)".to_string(),
                };
                dep.push_str(&format!(
                    "| {pn} | {} | {} | {} | {} |\n",
                    p.name,
                    link(pn, q.observed),
                    link(&d.name, p.observed),
                    d.question
                        .rsplit_once('[')
                        .map_or("", |x| x.1)
                        .trim_end_matches(']')
                ));
            }
        }
    }
    s.push_str("\n## Verdicts that depend on an uncongested queue\n\n");
    if dep.is_empty() {
        s.push_str("None: every check has the same verdicts under the model's queue bound.\n");
    } else {
        s.push_str("| check | property | unbounded queue | bounded queue | bound |\n|---|---|---|---|---|\n");
        s.push_str(&dep);
    }
    if let Some(sw) = switches {
        s.push_str("\n## Behaviour switches\n\nEach switch is observed by two checks whose configurations differ only in it and whose verdicts differ, or the catalogue says why no workload can tell it apart.\n\n| model | switch | kind | observed by |\n|---|---|---|---|\n");
        for x in sw {
            let by = match &x.status {
                SwitchStatus::Observed(a, b) => format!("{a} / {b}"),
                SwitchStatus::Unobservable(w) => format!("unobservable: {w}"),
                SwitchStatus::Unobserved => "**UNOBSERVED**".into(),
            };
            s.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                x.model,
                x.name,
                x.kind.as_str(),
                by.replace('|', "/")
            ));
        }
    }
    Ok(s)
}
