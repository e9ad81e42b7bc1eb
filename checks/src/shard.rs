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
use crate::search::Stop;
use crate::{paths, report, results};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Per-check work besides exploring its states (loading, counterexample
/// searches), in states: keeps many tiny checks from piling on one shard.
const CHECK_OVERHEAD: u64 = 2_000;

/// Most shards a run may be split into (a split is sized in memory).
pub const MAX_SHARDS: u64 = 4096;

/// `I/N` with 1 <= I <= N <= `MAX_SHARDS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad =
            || format!("--shard '{s}': expected I/N with 1 <= I <= N <= {MAX_SHARDS}, e.g. 2/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        Shard::new(index, count).map_err(|_| bad())
    }

    /// Shard `index` of `count`, range checked.
    pub fn new(index: u64, count: u64) -> Result<Shard, String> {
        if count == 0 || count > MAX_SHARDS || index == 0 || index > count {
            return Err(format!(
                "shard {index}/{count}: expected 1 <= I <= N <= {MAX_SHARDS}"
            ));
        }
        Ok(Shard {
            index: index as usize,
            count: count as usize,
        })
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
        Some("unknown") if k == "observed" => Ok(Verdict::Unknown),
        _ => Err(format!("{what}: field `{k}` is not holds/violated")),
    }
}

/// A check's `seconds`: a finite time of at most a year (a report's
/// number is input, not trusted).
fn seconds_of(v: &Value, what: &str) -> Result<Duration, String> {
    let s = field(v, "seconds", what)?
        .as_f64()
        .ok_or_else(|| format!("{what}: field `seconds` is not a number"))?;
    if !(0.0..=3.2e7).contains(&s) {
        return Err(format!("{what}: field `seconds` is {s}, not a time"));
    }
    Ok(Duration::from_secs_f64(s))
}

/// A property's counterexample as a report records it, replayed on the
/// model: it must be a path to a state violating `prop`, each step with
/// its label (a cut or edited trace does not replay).
fn counterexample_of(
    e: &Entry,
    prop: &str,
    c: &Value,
    what: &str,
) -> Result<Counterexample, String> {
    let at = format!("{what}: property '{prop}': counterexample");
    let encoded = field(c, "encoded", &at)?
        .as_str()
        .ok_or_else(|| format!("{at}: `encoded` is not a string"))?
        .to_string();
    let actions = field(c, "actions", &at)?
        .as_array()
        .ok_or_else(|| format!("{at}: `actions` is not a list"))?
        .clone();
    let labels = field(c, "steps", &at)?
        .as_array()
        .ok_or_else(|| format!("{at}: `steps` is not a list"))?
        .iter()
        .map(|x| x.as_str().map(str::to_string))
        .collect::<Option<Vec<String>>>()
        .ok_or_else(|| format!("{at}: a step that is not a string"))?;
    if labels.len() != actions.len() {
        return Err(format!(
            "{at}: {} steps but {} actions",
            labels.len(),
            actions.len()
        ));
    }
    let cx = Counterexample {
        encoded,
        actions,
        labels,
    };
    e.check
        .replay(prop, &cx)
        .map_err(|m| format!("{at} does not replay: {}", paths::one_line(&m)))?;
    Ok(cx)
}

/// Refuses a property whose fields contradict each other: a violation is
/// some violating states and either a counterexample or the bound that
/// stopped its search; anything else has neither.
fn consistent(
    what: &str,
    name: &str,
    observed: Verdict,
    count: u64,
    trace: bool,
    stopped: Option<Stop>,
) -> Result<(), String> {
    let at = format!("{what}: property '{name}' is {}", observed.as_str());
    let violated = observed == Verdict::Violated;
    if violated != (count > 0) {
        return Err(format!("{at} with {count} violating states"));
    }
    if violated && trace == stopped.is_some() {
        return Err(format!(
            "{at} with {} (a violation has a counterexample or the bound that stopped its search)",
            if trace {
                "a counterexample and a stopped search"
            } else {
                "no counterexample and no stopped search"
            }
        ));
    }
    if !violated && (trace || stopped.is_some()) {
        return Err(format!("{at} but has a counterexample or its search"));
    }
    Ok(())
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
    // a shard that stopped at a bound stays incomplete, and none of its
    // unviolated properties is read as proven (whatever the shard says)
    let complete = field(v, "complete", &what)?
        .as_bool()
        .ok_or_else(|| format!("{what}: field `complete` is not true/false"))?;
    let symmetry = field(v, "symmetry", &what)?
        .as_bool()
        .ok_or_else(|| format!("{what}: field `symmetry` is not true/false"))?;
    if symmetry != e.symmetry {
        return Err(format!(
            "{what}: explored with symmetry {}, the catalogue's pins are {}: its counts cannot be compared (run the shard without --symmetry/--no-symmetry)",
            if symmetry { "on" } else { "off" },
            if e.symmetry { "reduced" } else { "unreduced" }
        ));
    }
    let pins_apply = true;
    let mut props = Vec::new();
    for p in field(v, "properties", &what)?
        .as_array()
        .ok_or_else(|| format!("{what}: `properties` is not a list"))?
    {
        let name = field(p, "name", &what)?.as_str().unwrap_or("");
        let d = def(name)?;
        let trace = match p.get("counterexample") {
            None | Some(Value::Null) => None,
            Some(c) => Some(counterexample_of(e, d.name, c, &what)?),
        };
        let observed = match verdict_of(p, "observed", &what)? {
            Verdict::Holds if !complete => Verdict::Unknown,
            o => o,
        };
        let count = u64_of(p, "violating_states", &what)?;
        let search_stopped = match p.get("counterexample_search_stopped") {
            None | Some(Value::Null) => None,
            Some(s) => Some(Stop::from_json(s).ok_or_else(|| {
                format!("{what}: property '{name}': `counterexample_search_stopped` is not a bound")
            })?),
        };
        consistent(
            &what,
            name,
            observed,
            count,
            trace.is_some(),
            search_stopped,
        )?;
        props.push(PropResult {
            name: d.name,
            description: d.description,
            // the catalogue's expectation, not the shard's
            expected: e.expected(d.name),
            intended: e.is_intended(d.name),
            stricter_than: d.stricter.map(|x| x.contract),
            observed,
            count,
            trace,
            search_stopped,
            // the catalogue's pin, not the shard's
            pinned: e.violation_pin(d.name),
            compare: pins_apply && complete,
        });
    }
    let mut witnesses = Vec::new();
    for w in field(v, "witnesses", &what)?
        .as_array()
        .ok_or_else(|| format!("{what}: `witnesses` is not a list"))?
    {
        let name = field(w, "name", &what)?.as_str().unwrap_or("");
        // the catalogue's pin, not the shard's
        let (listed, pinned) = e.witness_pin(name);
        witnesses.push(WitnessResult {
            name: def(name)?.name,
            pinned,
            listed,
            compare: pins_apply,
            count: u64_of(w, "states", &what)?,
        });
    }
    // every property and witness of the model, once
    let mut seen: Vec<&str> = props.iter().map(|p| p.name).collect();
    seen.extend(witnesses.iter().map(|w| w.name));
    for d in defs.iter() {
        match seen.iter().filter(|n| **n == d.name).count() {
            1 => {}
            0 => return Err(format!("{what}: property '{}' is missing", d.name)),
            k => return Err(format!("{what}: property '{}' is listed {k} times", d.name)),
        }
    }
    if props.iter().any(|p| {
        defs.iter().any(|d| {
            d.name == p.name && matches!(d.expectation, stateright::Expectation::Sometimes)
        })
    }) || witnesses.iter().any(|w| {
        defs.iter().any(|d| {
            d.name == w.name && !matches!(d.expectation, stateright::Expectation::Sometimes)
        })
    }) {
        return Err(format!(
            "{what}: a property listed as a witness or the reverse"
        ));
    }
    Ok(CheckResult {
        name: e.name.clone(),
        model: e.check.model(),
        model_version: e.check.model_version(),
        complete,
        stopped: v.get("bound").and_then(Stop::from_json),
        symmetry,
        pins_apply,
        engine: Engine::Fast,
        unique_states: u64_of(v, "unique_states", &what)?,
        total_states: u64_of(v, "total_states", &what)?,
        // null: a run on several threads (no DFS depth)
        max_depth: if v.get("max_depth").is_some_and(Value::is_null) {
            0
        } else {
            u64_of(v, "max_depth", &what)?
        },
        depth_unknown: v.get("max_depth").is_some_and(Value::is_null),
        expected_states: e.states,
        props,
        witnesses,
        witnesses_pinned: e.witnesses_pinned(),
        elapsed: seconds_of(v, &what)?,
        table_bytes: 0,
        dropped: Vec::new(),
    })
}

/// Refuses a report that was not made by this wbspec (version, commit and
/// dirty flag of the checkout, as `report::tool_json` records them), in
/// this report schema, with this catalogue (its content hash).
fn same_origin(cat: &Catalogue, file: &str, doc: &Value) -> Result<(), String> {
    let schema = doc.get("schema").and_then(Value::as_u64);
    if schema != Some(report::SCHEMA as u64) {
        return Err(format!(
            "{file}: report schema {}, this wbspec reads {}",
            schema.map_or("missing".into(), |x| x.to_string()),
            report::SCHEMA
        ));
    }
    let me = report::tool_json();
    for k in ["name", "version", "commit", "dirty"] {
        let theirs = doc.get("tool").and_then(|t| t.get(k));
        if theirs != me.get(k) {
            return Err(format!(
                "{file}: made by another wbspec (tool {k} {}, this one {}): use the binary and checkout it was made with",
                theirs.map_or("missing".into(), Value::to_string),
                me[k]
            ));
        }
    }
    let hash = doc.pointer("/catalogue/hash").and_then(Value::as_str);
    if hash != Some(cat.hash.as_str()) {
        return Err(format!(
            "{file}: made with another catalogue (hash {}, this one {})",
            hash.unwrap_or("missing"),
            cat.hash
        ));
    }
    Ok(())
}

/// Refuses a check's report whose model, model version or configuration
/// is not the catalogue's under this binary.
fn same_check(e: &Entry, file: &str, c: &Value) -> Result<(), String> {
    let what = format!("{file}: check '{}'", e.name);
    let model = c.get("model").and_then(Value::as_str);
    if model != Some(e.check.model()) {
        return Err(format!(
            "{what}: model {}, the catalogue's is {}",
            model.unwrap_or("missing"),
            e.check.model()
        ));
    }
    let version = c.get("model_version").and_then(Value::as_str);
    if version != Some(e.check.model_version()) {
        return Err(format!(
            "{what}: model version {}, this wbspec's is {}",
            version.unwrap_or("missing"),
            e.check.model_version()
        ));
    }
    if c.get("config") != Some(&e.check.config_json()) {
        return Err(format!("{what}: its configuration is not the catalogue's"));
    }
    Ok(())
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
        let Shard { index: i, count: n } =
            Shard::new(u64_of(sh, "index", file)?, u64_of(sh, "count", file)?)
                .map_err(|e| format!("{file}: {e}"))?;
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
        same_origin(cat, file, doc)?;
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
        checks_of(cat, file, doc, &mut by_name)?;
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
    in_catalogue_order(cat, by_name)
}

/// The checks of one whole report (`check --all --json`, a merged report
/// or a 1/1 shard), verified as `merge` verifies a shard: this wbspec,
/// schema and catalogue, every check's model, version and configuration,
/// every catalogue check once and nothing else. `docs --report` reads it.
pub fn whole_report<'a>(
    cat: &'a Catalogue,
    file: &str,
    doc: &Value,
) -> Result<Vec<(&'a Entry, Value)>, String> {
    same_origin(cat, file, doc)?;
    let mut by_name = Default::default();
    checks_of(cat, file, doc, &mut by_name)?;
    in_catalogue_order(cat, by_name).map_err(|e| match e.starts_with(file) {
        true => e,
        false => format!("{file}: {e} (the docs need a report of check --all)"),
    })
}

/// Adds the checks of report `file` to `by_name`, each verified against
/// its catalogue entry; a name seen before is refused.
fn checks_of(
    cat: &Catalogue,
    file: &str,
    doc: &Value,
    by_name: &mut std::collections::BTreeMap<String, (String, Value)>,
) -> Result<(), String> {
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
        if let Some(e) = cat.entries.iter().find(|e| e.name == name) {
            same_check(e, file, c)?;
        }
        by_name.insert(name.to_string(), (file.to_string(), c.clone()));
    }
    Ok(())
}

/// Every catalogue check of `by_name`, in catalogue order; errors when
/// one is missing or `by_name` holds a check the catalogue does not.
fn in_catalogue_order(
    cat: &Catalogue,
    mut by_name: std::collections::BTreeMap<String, (String, Value)>,
) -> Result<Vec<(&Entry, Value)>, String> {
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

/// A shard's check JSON with what the merge judged itself in place of the
/// shard's claims: the catalogue's expectations and pins, and whether the
/// check is as expected.
fn judged(mut v: Value, r: &CheckResult) -> Value {
    v["pinned_states"] = serde_json::json!(r.expected_states);
    v["as_expected"] = Value::Bool(r.ok());
    if let Some(ps) = v["properties"].as_array_mut() {
        for (p, pr) in ps.iter_mut().zip(&r.props) {
            p["expected"] = pr.expected.as_str().into();
        }
    }
    if let Some(ws) = v["witnesses"].as_array_mut() {
        for (w, wr) in ws.iter_mut().zip(&r.witnesses) {
            w["pinned"] = serde_json::json!(wr.pinned);
            w["listed"] = Value::Bool(wr.listed);
            w["as_expected"] = Value::Bool(wr.status(r.witnesses_pinned).is_ok());
        }
    }
    v
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
    for p in json.iter().chain(markdown.iter()) {
        paths::check_output(p)?;
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
        &report::summary_lines(
            &results_v,
            Duration::try_from_secs_f64(elapsed).unwrap_or(Duration::MAX),
        ),
    )?;
    let ms = results::mutation_score(&selected, &results_v);
    if let Some(ms) = &ms {
        out(&ms.line())?;
        bad += ms.failed();
    }
    let sw = results::switches(cat, &results_v);
    for s in &sw {
        out(&s.line())?;
    }
    bad += sw.iter().filter(|s| !s.ok()).count();
    if let Some(path) = markdown {
        let cmd = crate::docgen::COMMAND;
        let text = results::markdown(&selected, &results_v, Some(&sw), cmd)?;
        paths::write_atomic(path, text.as_bytes())?;
    }
    if let Some(path) = json {
        let mut extra = serde_json::Map::new();
        extra.insert("catalogue".into(), report::catalogue_json(cat));
        if let Some(ms) = &ms {
            extra.insert("mutation_score".into(), ms.json());
        }
        extra.insert("switches".into(), results::switches_json(&sw));
        let doc = report::json_report(
            merged
                .into_iter()
                .zip(&results_v)
                .map(|((_, v), r)| judged(v, r))
                .collect(),
            serde_json::Value::Object(extra),
        );
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
        paths::write_atomic(path, (text + "\n").as_bytes())?;
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
        for bad in [
            "0/4",
            "5/4",
            "1/0",
            "x",
            "1/",
            "/2",
            "1/2/3",
            "1/18446744073709551615",
            "1/4097",
            "-1/2",
        ] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
