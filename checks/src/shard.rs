//! Splitting `check --all` over CI jobs and merging their reports.
//!
//! `--shard I/N` runs a deterministic subset of the catalogue: checks are
//! dealt, largest pinned state count first, each to the shard with the
//! least work so far (longest-processing-time-first), so every shard gets
//! about the same number of states to explore. `merge-reports` puts the
//! shards' JSON reports back together and recomputes what needs every
//! check: the mutation score and the behaviour-switch judgement.

use crate::catalogue::{Catalogue, Entry, Verdict};
use crate::outcome::{CheckResult, PropResult, WitnessResult};
use crate::runner::{Counterexample, Engine};
use crate::{paths, report, results};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Per-check work besides exploring its states (loading, counterexample
/// searches), in states: keeps many tiny checks from piling on one shard.
const CHECK_OVERHEAD: u64 = 2_000;

/// `I/N` with 1 <= I <= N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard '{s}': expected I/N with 1 <= I <= N, e.g. 2/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// Which shard (0-based) each entry goes to.
pub fn assign(entries: &[Entry], count: usize) -> Vec<usize> {
    let weight = |e: &Entry| e.states.unwrap_or(0) + CHECK_OVERHEAD;
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|&a, &b| {
        weight(&entries[b])
            .cmp(&weight(&entries[a]))
            .then(a.cmp(&b))
    });
    let mut load = vec![0u64; count];
    let mut out = vec![0; entries.len()];
    for i in order {
        let s = (0..count)
            .min_by_key(|&s| (load[s], s))
            .expect("at least one shard");
        load[s] += weight(&entries[i]);
        out[i] = s;
    }
    out
}

/// The entries of shard `sh`, in catalogue order.
pub fn select(entries: &[Entry], sh: Shard) -> Vec<&Entry> {
    let a = assign(entries, sh.count);
    entries
        .iter()
        .zip(a)
        .filter(|(_, s)| *s == sh.index - 1)
        .map(|(e, _)| e)
        .collect()
}

fn field<'a>(v: &'a Value, k: &str, what: &str) -> Result<&'a Value, String> {
    v.get(k)
        .ok_or_else(|| format!("{what}: missing field `{k}`"))
}

fn u64_of(v: &Value, k: &str, what: &str) -> Result<u64, String> {
    field(v, k, what)?
        .as_u64()
        .ok_or_else(|| format!("{what}: field `{k}` is not a count"))
}

fn verdict_of(v: &Value, k: &str, what: &str) -> Result<Verdict, String> {
    match field(v, k, what)?.as_str() {
        Some("holds") => Ok(Verdict::Holds),
        Some("violated") => Ok(Verdict::Violated),
        _ => Err(format!("{what}: field `{k}` is not holds/violated")),
    }
}

/// A check's result as its JSON report records it (`report::check_json`),
/// for the catalogue entry of the same name.
pub fn result_from_json(e: &Entry, v: &Value) -> Result<CheckResult, String> {
    let what = format!("check '{}'", e.name);
    let defs = e.check.property_defs();
    let def = |n: &str| {
        defs.iter()
            .find(|d| d.name == n)
            .ok_or_else(|| format!("{what}: model {} has no property '{n}'", e.model))
    };
    let mut props = Vec::new();
    for p in field(v, "properties", &what)?
        .as_array()
        .ok_or_else(|| format!("{what}: `properties` is not a list"))?
    {
        let name = field(p, "name", &what)?.as_str().unwrap_or("");
        let d = def(name)?;
        let trace = match p.get("counterexample") {
            None | Some(Value::Null) => None,
            Some(c) => Some(Counterexample {
                encoded: field(c, "encoded", &what)?
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                actions: field(c, "actions", &what)?
                    .as_array()
                    .cloned()
                    .unwrap_or_default(),
                labels: field(c, "steps", &what)?
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|x| x.as_str().unwrap_or("").to_string())
                            .collect()
                    })
                    .unwrap_or_default(),
            }),
        };
        props.push(PropResult {
            name: d.name,
            description: d.description,
            expected: verdict_of(p, "expected", &what)?,
            observed: verdict_of(p, "observed", &what)?,
            count: u64_of(p, "violating_states", &what)?,
            trace,
        });
    }
    let symmetry = v.get("symmetry").and_then(Value::as_bool).unwrap_or(false);
    let pins_apply = symmetry == e.symmetry;
    let mut witnesses = Vec::new();
    for w in field(v, "witnesses", &what)?
        .as_array()
        .ok_or_else(|| format!("{what}: `witnesses` is not a list"))?
    {
        let name = field(w, "name", &what)?.as_str().unwrap_or("");
        witnesses.push(WitnessResult {
            name: def(name)?.name,
            pinned: w.get("pinned").and_then(Value::as_u64),
            listed: field(w, "listed", &what)?.as_bool().unwrap_or(false),
            compare: pins_apply,
            count: u64_of(w, "states", &what)?,
        });
    }
    Ok(CheckResult {
        name: e.name.clone(),
        model: e.check.model(),
        model_version: e.check.model_version(),
        complete: field(v, "complete", &what)?.as_bool().unwrap_or(false),
        stopped: None,
        symmetry,
        pins_apply,
        engine: Engine::Fast,
        unique_states: u64_of(v, "unique_states", &what)?,
        total_states: u64_of(v, "total_states", &what)?,
        max_depth: u64_of(v, "max_depth", &what)?,
        expected_states: v.get("pinned_states").and_then(Value::as_u64),
        props,
        witnesses,
        witnesses_pinned: e.witnesses_pinned(),
        elapsed: Duration::from_secs_f64(v.get("seconds").and_then(Value::as_f64).unwrap_or(0.0)),
        table_bytes: 0,
    })
}

/// The shards' reports, put together: every check of the catalogue once,
/// in catalogue order, with its JSON as its shard wrote it. Errors when a
/// report is not a shard of this catalogue, when shards are missing or
/// repeated, or when they were made by different commits.
pub fn merge<'a>(
    cat: &'a Catalogue,
    reports: &[(String, Value)],
) -> Result<Vec<(&'a Entry, Value)>, String> {
    let mut count = None;
    let mut indices = Vec::new();
    let mut commit: Option<(String, Value)> = None;
    let mut by_name: std::collections::BTreeMap<String, (String, Value)> = Default::default();
    for (file, doc) in reports {
        let sh = doc.get("shard").ok_or_else(|| {
            format!("{file}: not a sharded report (no `shard`; run check --all --shard I/N --json)")
        })?;
        let i = u64_of(sh, "index", file)? as usize;
        let n = u64_of(sh, "count", file)? as usize;
        if *count.get_or_insert(n) != n {
            return Err(format!(
                "{file}: shard {i}/{n} of another split than {}",
                count.unwrap()
            ));
        }
        if indices.contains(&i) {
            return Err(format!("{file}: shard {i}/{n} given twice"));
        }
        indices.push(i);
        let c = doc.pointer("/tool/commit").cloned().unwrap_or(Value::Null);
        let d = doc.pointer("/tool/dirty").cloned().unwrap_or(Value::Null);
        let id = Value::Array(vec![c, d]);
        match &commit {
            None => commit = Some((file.clone(), id)),
            Some((f0, c0)) if *c0 != id => {
                return Err(format!("{file}: made by tool {id}, but {f0} by {c0}"))
            }
            _ => {}
        }
        for c in doc
            .get("checks")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{file}: no `checks` list"))?
        {
            let name = c
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{file}: a check without a name"))?;
            if let Some((f0, _)) = by_name.get(name) {
                return Err(format!("{file}: check '{name}' is also in {f0}"));
            }
            by_name.insert(name.to_string(), (file.clone(), c.clone()));
        }
    }
    let n = count.unwrap_or(0);
    let mut missing: Vec<usize> = (1..=n).filter(|i| !indices.contains(i)).collect();
    missing.sort();
    if !missing.is_empty() {
        return Err(format!(
            "shards {} of {n} are missing",
            missing
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut out = Vec::new();
    for e in &cat.entries {
        let (_, v) = by_name.remove(&e.name).ok_or_else(|| {
            format!(
                "check '{}' is in no report (a shard of another catalogue?)",
                e.name
            )
        })?;
        out.push((e, v));
    }
    if let Some((name, (f, _))) = by_name.into_iter().next() {
        return Err(format!("{f}: check '{name}' is not in the catalogue"));
    }
    Ok(out)
}

/// `wbspec merge-reports`.
pub fn run_merge(
    cat: &Catalogue,
    reports: &[PathBuf],
    json: Option<&Path>,
    markdown: Option<&Path>,
    out: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<u8, String> {
    if reports.is_empty() {
        return Err("merge-reports: name the shards' JSON reports".into());
    }
    let mut docs = Vec::new();
    for f in reports {
        let text = paths::read_bounded(f, paths::MAX_REPORT_BYTES)?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a JSON report: {e}", f.display()))?;
        docs.push((f.display().to_string(), v));
    }
    let merged = merge(cat, &docs)?;
    let mut results_v = Vec::new();
    for (e, v) in &merged {
        results_v.push(result_from_json(e, v)?);
    }
    let selected: Vec<&Entry> = merged.iter().map(|(e, _)| *e).collect();
    let elapsed: f64 = results_v.iter().map(|r| r.elapsed.as_secs_f64()).sum();
    let mut bad = results_v.iter().filter(|r| !r.ok()).count();
    emit_all(
        out,
        &report::summary_lines(&results_v, std::time::Duration::from_secs_f64(elapsed)),
    )?;
    let ms = results::mutation_score(&selected, &results_v);
    if let Some(ms) = &ms {
        out(&ms.line())?;
        bad += ms.survived.len();
    }
    let sw = results::switches(cat, &results_v);
    for s in &sw {
        out(&s.line())?;
    }
    bad += sw.iter().filter(|s| !s.ok()).count();
    if let Some(path) = markdown {
        let cmd = "cargo run --release -- check --all --markdown docs/results.md";
        let text = results::markdown(&selected, &results_v, Some(&sw), cmd)?;
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(path) = json {
        let mut extra = serde_json::Map::new();
        if let Some(ms) = &ms {
            extra.insert("mutation_score".into(), ms.json());
        }
        extra.insert("switches".into(), results::switches_json(&sw));
        let doc = report::json_report(
            merged.into_iter().map(|(_, v)| v).collect(),
            serde_json::Value::Object(extra),
        );
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(if bad == 0 { 0 } else { 1 })
}

fn emit_all(out: &mut dyn FnMut(&str) -> Result<(), String>, ls: &[String]) -> Result<(), String> {
    for l in ls {
        out(l)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_syntax() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "x", "1/", "/2", "1/2/3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
