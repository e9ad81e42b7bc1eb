//! Dropping kernel calls (issue 19): a check run without one call of its
//! task programs (`check NAME --drop LABEL`, `drop = [...]` in the
//! catalogue), the list of droppable ops (`wbspec ops`), and op mutation
//! (`check --all --mutate-ops`): each op dropped in turn over the
//! catalogue's checks whose programs run it, killed when some verdict
//! differs from the check's expected ones.
//!
//! A dropped run is a what-if, never the catalogue's verdict: its pins
//! are not compared (`CheckResult::dropped`), `--update-pins` and the
//! docs refuse it, and its report lines say so.

use crate::catalogue::{Catalogue, Entry, Verdict};
use crate::check;
use crate::outcome::{self, Settings};
use crate::paths;
use crate::shard::Shard;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// `e` with `drops` added to its `drop` list: the model rebuilt from the
/// entry's keys, its pins kept but never compared. Errors are one line
/// naming the check (a label that matches nothing lists the close
/// matches).
pub fn with_drops(e: &Entry, drops: &[String]) -> Result<Entry, String> {
    if e.check.ops().is_none() {
        return Err(format!(
            "--drop is not supported by model {} (check '{}')",
            e.model, e.name
        ));
    }
    let mut all = e.check.drops();
    for d in drops {
        if !all.contains(d) {
            all.push(d.clone());
        }
    }
    let mut settings = e.settings.clone();
    settings.insert(
        "drop".into(),
        toml::Value::Array(all.iter().cloned().map(toml::Value::String).collect()),
    );
    let ctx = |m: String| format!("check '{}': {m}", e.name);
    let switches = e.check.switches_changed();
    let mut c = check::from_table(&e.model, &settings).map_err(|m| {
        if m.contains("names no op") && !switches.is_empty() {
            // p_no_writectr removes every NOWRITE: the call may be gone
            ctx(format!(
                "{m} (this check's switches {} change its programs)",
                switches.join(" ")
            ))
        } else {
            ctx(m)
        }
    })?;
    if e.parent.is_some() {
        // a -bg1 twin runs its parent's keys under the queue bound
        c = c
            .congested()
            .map(|(cc, _)| cc)
            .ok_or_else(|| ctx("no congested twin with the drop".into()))?;
    }
    let mut d = e.clone();
    d.check = c;
    Ok(d)
}

/// What `wbspec ops` prints about one label.
#[derive(Default)]
struct OpRow {
    kinds: BTreeSet<String>,
    states: BTreeSet<String>,
    checks: usize,
    refused: Option<String>,
}

/// `wbspec ops`: every op label of the selected checks' programs, with
/// its kernel function, the task kinds whose programs run it, the kernel
/// states and how many checks; the ops that cannot be dropped follow,
/// with the reason. `task`: only ops of tasks of this kind.
pub fn ops_lines(entries: &[&Entry], task: Option<&str>) -> Vec<String> {
    let mut rows: BTreeMap<String, OpRow> = BTreeMap::new();
    let mut unsupported = BTreeSet::new();
    for e in entries.iter().filter(|e| e.parent.is_none()) {
        let Some(ops) = e.check.ops() else {
            unsupported.insert(e.model.clone());
            continue;
        };
        let mut seen = BTreeSet::new();
        for o in ops.iter().filter(|o| task.is_none_or(|t| o.kind == t)) {
            let r = rows.entry(o.label.clone()).or_default();
            r.kinds.insert(o.kind.clone());
            r.states.insert(e.check.kernel());
            if r.refused.is_none() {
                r.refused = o.refused.clone();
            }
            if seen.insert(o.label.clone()) {
                r.checks += 1;
            }
        }
    }
    let join = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(",");
    let mut out = vec![format!(
        "{:<52} {:<30} {:<28} {:<16} checks",
        "label (caller:callee)", "kernel function", "tasks", "states"
    )];
    for (l, r) in rows.iter().filter(|(_, r)| r.refused.is_none()) {
        let f = l.split_once(':').map_or(l.as_str(), |(_, f)| f);
        out.push(format!(
            "{l:<52} {f:<30} {:<28} {:<16} {}",
            join(&r.kinds),
            join(&r.states),
            r.checks
        ));
    }
    let refused: Vec<_> = rows.iter().filter(|(_, r)| r.refused.is_some()).collect();
    if !refused.is_empty() {
        out.push(String::new());
        out.push("Not droppable:".into());
        for (l, r) in refused {
            out.push(format!(
                "{l} ({}): {}",
                join(&r.kinds),
                r.refused.as_deref().unwrap_or("")
            ));
        }
    }
    for m in unsupported {
        out.push(format!("(model {m}: --drop is not supported)"));
    }
    out
}

/// How one op fared under op mutation.
#[derive(Clone, Debug)]
pub enum Fate {
    /// Some verdict of this check differs with the op dropped.
    Killed {
        check: String,
        prop: String,
        observed: Verdict,
        expected: Verdict,
    },
    /// Every check whose programs run it kept its verdicts.
    Survived { checks: Vec<String> },
}

/// One label's op-mutation result.
#[derive(Clone, Debug)]
pub struct OpResult {
    pub label: String,
    pub fate: Fate,
    /// The catalogue's `[[equivalent-op]]` reason, if it gives one.
    pub equivalent: Option<String>,
}

impl OpResult {
    /// A survivor the catalogue does not explain, or an explained one
    /// that some check kills (the explanation is stale).
    pub fn failed(&self) -> bool {
        matches!(
            (&self.fate, &self.equivalent),
            (Fate::Survived { .. }, None) | (Fate::Killed { .. }, Some(_))
        )
    }

    pub fn line(&self) -> String {
        match (&self.fate, &self.equivalent) {
            (
                Fate::Killed {
                    check,
                    prop,
                    observed,
                    expected,
                },
                eq,
            ) => format!(
                "Op {} killed by {check}: {prop} {} (catalogue: {}){}",
                self.label,
                observed.as_str(),
                expected.as_str(),
                if eq.is_some() {
                    " STALE [[equivalent-op]]"
                } else {
                    ""
                }
            ),
            (Fate::Survived { checks }, Some(why)) => format!(
                "Op {} equivalent over {} checks: {why}",
                self.label,
                checks.len()
            ),
            (Fate::Survived { checks }, None) => format!(
                "Op {} SURVIVED {} checks ({}): explain it in [[equivalent-op]] or add a property, witness or workload",
                self.label,
                checks.len(),
                checks.join(" ")
            ),
        }
    }

    pub fn json(&self) -> Value {
        match &self.fate {
            Fate::Killed {
                check,
                prop,
                observed,
                expected,
            } => json!({"label": self.label, "fate": "killed", "check": check,
                "property": prop, "observed": observed.as_str(),
                "expected": expected.as_str(), "equivalent": self.equivalent}),
            Fate::Survived { checks } => json!({"label": self.label,
                "fate": if self.equivalent.is_some() { "equivalent" } else { "survived" },
                "checks": checks, "equivalent": self.equivalent}),
        }
    }
}

/// The checks op mutation drops from: the catalogue's own (no derived
/// `-bg1` twin, no mutant: a mutant's verdicts are not the kernel's),
/// cheapest first; per label, the checks whose programs can drop it.
pub fn plan(cat: &Catalogue) -> BTreeMap<String, Vec<&Entry>> {
    let mut es: Vec<&Entry> = cat
        .entries
        .iter()
        .filter(|e| e.parent.is_none() && !e.is_mutant())
        .collect();
    es.sort_by_key(|e| e.states.unwrap_or(u64::MAX));
    let mut by: BTreeMap<String, Vec<&Entry>> = BTreeMap::new();
    for e in es {
        let Some(ops) = e.check.ops() else { continue };
        if !e.check.drops().is_empty() {
            continue;
        }
        let labels: BTreeSet<&str> = ops.iter().map(|o| o.label.as_str()).collect();
        for l in labels {
            // droppable when every op of that label is
            if ops
                .iter()
                .filter(|o| o.label == l)
                .all(|o| o.refused.is_none())
            {
                by.entry(l.to_string()).or_default().push(e);
            }
        }
    }
    by
}

/// Op mutation over the catalogue (or one shard of its labels: label i
/// of the sorted list goes to shard i mod N). A label is killed by the
/// first check, cheapest first, whose verdicts change; a survivor has
/// run on every check that can drop it.
pub fn mutate_ops(
    cat: &Catalogue,
    shard: Option<Shard>,
    out: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<Vec<OpResult>, String> {
    let by = plan(cat);
    let mut res = Vec::new();
    for (i, (label, es)) in by.iter().enumerate() {
        if let Some(sh) = shard {
            if i % sh.count != sh.index - 1 {
                continue;
            }
        }
        let mut fate = None;
        for e in es {
            eprintln!("dropping {label} in {} ...", e.name);
            let d = with_drops(e, std::slice::from_ref(label))?;
            let r = outcome::run(&d, &Settings::default(), false)?;
            if !r.complete {
                return Err(format!(
                    "{}: run with {label} dropped is incomplete",
                    e.name
                ));
            }
            if let Some(p) = r.props.iter().find(|p| p.observed != p.expected) {
                fate = Some(Fate::Killed {
                    check: e.name.clone(),
                    prop: p.name.to_string(),
                    observed: p.observed,
                    expected: p.expected,
                });
                break;
            }
        }
        let r = OpResult {
            label: label.clone(),
            fate: fate.unwrap_or_else(|| Fate::Survived {
                checks: es.iter().map(|e| e.name.clone()).collect(),
            }),
            equivalent: cat
                .equivalent_ops
                .iter()
                .find(|q| &q.label == label)
                .map(|q| q.why.clone()),
        };
        out(&r.line())?;
        res.push(r);
    }
    Ok(res)
}

/// `[[equivalent-op]]` labels that name no droppable op of the catalogue.
pub fn unknown_equivalents(cat: &Catalogue) -> Vec<String> {
    let by = plan(cat);
    cat.equivalent_ops
        .iter()
        .filter(|q| !by.contains_key(&q.label))
        .map(|q| {
            format!(
                "[[equivalent-op]] names no droppable op '{}' of the catalogue (`wbspec ops` lists them)",
                q.label
            )
        })
        .collect()
}

/// The op-mutation score line.
pub fn score_line(res: &[OpResult]) -> String {
    let killed = res
        .iter()
        .filter(|r| matches!(r.fate, Fate::Killed { .. }))
        .count();
    let eq = res
        .iter()
        .filter(|r| matches!(r.fate, Fate::Survived { .. }) && r.equivalent.is_some())
        .count();
    let surv = res
        .iter()
        .filter(|r| matches!(r.fate, Fate::Survived { .. }) && r.equivalent.is_none())
        .count();
    format!(
        "Op-mutation score: {killed}/{} ops killed, {eq} equivalent (explained in [[equivalent-op]]), {surv} unexplained survivors",
        killed + surv,
    )
}

/// `check --all --mutate-ops [--shard I/N] [--json FILE]`: the per-op
/// lines, the score and the time; exit 1 when an op survives
/// unexplained or an `[[equivalent-op]]` is killed.
pub fn run(
    cat: &Catalogue,
    shard: Option<Shard>,
    json: Option<&std::path::Path>,
    out: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<u8, String> {
    if let Some(p) = json {
        paths::check_output(p)?;
    }
    if let Some(b) = unknown_equivalents(cat).first() {
        return Err(b.clone());
    }
    let t0 = std::time::Instant::now();
    let res = mutate_ops(cat, shard, out)?;
    let score = score_line(&res);
    out(&score)?;
    out(&format!(
        "Op-mutation time: {:.1}s",
        t0.elapsed().as_secs_f64()
    ))?;
    if let Some(p) = json {
        let doc = json!({
            "op_mutation": res.iter().map(|r| r.json()).collect::<Vec<_>>(),
            "score": score,
            "shard": shard.map(|s| json!({"index": s.index, "count": s.count})),
        });
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
        paths::write_atomic(p, (text + "\n").as_bytes())?;
    }
    Ok(if res.iter().any(|r| r.failed()) { 1 } else { 0 })
}
