//! The generated blocks of each doc (docgen.rs splices them in): the
//! README's per-kernel summary and findings by class, example output, the
//! harness's scenario and conformance counts, the cite example and the
//! benchmark set's state counts. Each is computed from one `check --all`
//! result, checks/facts/findings.toml, the harness's scenario table and the
//! committed recorded traces; none from a kernel.

use crate::catalogue::{Entry, Verdict};
use crate::docgen::{Inputs, COMMAND};
use crate::findings::{Class, Finding};
use crate::outcome::CheckResult;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use wbspec_harness::conform::{conform_trace, Class as Conf};

type Blocks = BTreeMap<&'static str, String>;

fn plural(n: u64, one: &str) -> String {
    format!("{n} {one}{}", if n == 1 { "" } else { "s" })
}

/// `DioRead` → `dio-read`.
fn kebab(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('-');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// What a check explores, from its configuration: pages, tasks and
/// daemon threads where the model has them, else the model's notes.
pub fn scope(e: &Entry) -> String {
    let c = e.check.config_json();
    let mut v = Vec::new();
    if let Some(p) = c.get("pages").and_then(Value::as_u64) {
        // sizes below a page (fuse): `pages` counts units of the page
        let sub = c.get("sub");
        let u = sub
            .and_then(|s| s.get("units_per_page"))
            .and_then(Value::as_u64)
            .unwrap_or(1)
            .max(1);
        let ps = sub
            .and_then(|s| s.get("page_size"))
            .and_then(Value::as_u64)
            .unwrap_or(4096);
        // uneven positions (`unit_bytes`): their bytes add up to pages
        let uneven: u64 = sub
            .and_then(|s| s.get("unit_bytes"))
            .and_then(Value::as_array)
            .map_or(0, |b| b.iter().filter_map(Value::as_u64).sum());
        if uneven > 0 {
            v.push(format!(
                "{} of {} KiB in {p} uneven positions",
                plural(uneven.div_ceil(ps), "page"),
                ps / 1024
            ));
        } else if u > 1 || ps != 4096 {
            let mut t = format!("{} of {} KiB", plural(p / u, "page"), ps / 1024);
            if u > 1 {
                t += &format!(" in {p} units");
            }
            v.push(t);
        } else {
            v.push(plural(p, "page"));
        }
    }
    if let Some(ts) = c.get("tasks").and_then(Value::as_array) {
        let names: Vec<String> = ts
            .iter()
            .map(|t| match t {
                Value::String(s) => kebab(s),
                Value::Object(m) if m.len() == 1 => {
                    let (k, args) = m.iter().next().expect("one key");
                    // the flags a task variant turns on: open(trunc)
                    let on: Vec<&str> = args
                        .as_object()
                        .map(|a| {
                            a.iter()
                                .filter(|(_, v)| **v == Value::Bool(true))
                                .map(|(f, _)| f.as_str())
                                .collect()
                        })
                        .unwrap_or_default();
                    if on.is_empty() {
                        kebab(k)
                    } else {
                        format!("{}({})", kebab(k), on.join(", "))
                    }
                }
                _ => "?".into(),
            })
            .collect();
        // thread programs (`threads = [[...]]`): the tasks of each thread
        // in brackets, in the order the thread runs them
        let thread: Vec<u64> = c
            .get("thread")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        if thread.len() == names.len() && !thread.is_empty() {
            let n = thread.iter().max().map_or(0, |m| m + 1);
            let progs: Vec<String> = (0..n)
                .map(|th| {
                    let ts: Vec<&str> = (0..names.len())
                        .filter(|&i| thread[i] == th)
                        .map(|i| names[i].as_str())
                        .collect();
                    format!("[{}]", ts.join(", "))
                })
                .collect();
            v.push(format!(
                "{} in {}: {}",
                plural(ts.len() as u64, "task"),
                plural(n, "thread"),
                progs.join(", ")
            ));
        } else {
            v.push(format!(
                "{}: {}",
                plural(ts.len() as u64, "task"),
                names.join(", ")
            ));
        }
    }
    if let Some(d) = c.get("daemon_threads").and_then(Value::as_u64) {
        v.push(plural(d, "daemon thread"));
    }
    if v.is_empty() {
        e.check.config_notes()
    } else {
        v.join("; ")
    }
}

/// The check's violated properties with the steps of their shortest
/// counterexamples: `a3 (17 steps)`.
fn violations(r: &CheckResult) -> Vec<String> {
    r.props
        .iter()
        .filter(|p| p.observed == Verdict::Violated)
        .map(|p| match &p.trace {
            Some(cx) => format!("{} ({} steps)", p.name, cx.len()),
            None => p.name.to_string(),
        })
        .collect()
}

/// A check of a kernel state as it ships: no behaviour switch changed,
/// not a mutant or proposal, not a derived `-bg1` twin.
fn shipped(e: &Entry) -> bool {
    e.parent.is_none()
        && !e.has_tag("mutant")
        && !e.has_tag("proposal")
        && e.check.switches_changed().is_empty()
}

fn findings_of<'a>(f: &'a [Finding], check: &str) -> Vec<&'a str> {
    f.iter()
        .filter(|x| x.checks.iter().any(|c| c == check))
        .map(|x| x.id.as_str())
        .collect()
}

/// README "What the model says today": per kernel state, the shipped
/// checks and which violate what; then the findings by class.
fn summary(inp: &Inputs) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "\n\nGenerated by `{COMMAND}` from the catalogue's verdicts and \
         checks/facts/findings.toml; do not edit by hand. A violated \
         property is not by itself a bug: the findings below say which \
         violations are bugs and which are the kernel's intended \
         behaviour judged by a stricter property.\n\n"
    ));
    s.push_str(
        "Per kernel state, the checks of the state as it ships (no behaviour \
         switch changed; proposals, mutants and `-bg1` twins are in \
         docs/results.md), with the steps of each shortest counterexample \
         and the finding it belongs to:\n\n",
    );
    s.push_str("| model | kernel state | versions | checks | all hold | violated |\n");
    s.push_str("|---|---|---|---|---|---|\n");
    let mut models: Vec<&Entry> = Vec::new();
    for e in inp.entries {
        if !models.iter().any(|m| m.model == e.model) {
            models.push(e);
        }
    }
    let mut unfiled = 0;
    for m in &models {
        for k in m.check.kernel_states() {
            let rows: Vec<(&Entry, &CheckResult)> = inp
                .entries
                .iter()
                .zip(inp.results)
                .filter(|(e, _)| e.model == m.model && shipped(e) && e.check.kernel() == k.name)
                .map(|(e, r)| (*e, r))
                .collect();
            if rows.is_empty() {
                continue;
            }
            let mut bad = Vec::new();
            for (e, r) in &rows {
                let v = violations(r);
                if v.is_empty() {
                    continue;
                }
                let f = findings_of(inp.findings, &e.name);
                if f.is_empty() {
                    unfiled += 1;
                }
                bad.push(format!(
                    "`{}` {}{}",
                    e.name,
                    v.join(", "),
                    if f.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", f.join(", "))
                    }
                ));
            }
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                m.model,
                k.name,
                crate::facts::facts()
                    .map(|f| f.versions(&m.model, k.name))
                    .unwrap_or_else(|_| k.name.to_string()),
                rows.len(),
                rows.len() - bad.len(),
                if bad.is_empty() {
                    "none".to_string()
                } else {
                    bad.join("; ")
                }
            ));
        }
    }
    s.push_str(&format!(
        "\n{} of these violating checks belong to no finding in \
         checks/facts/findings.toml yet.\n",
        unfiled
    ));
    for class in Class::ALL {
        s.push_str(&format!("\n**{}**\n\n", class.heading()));
        let fs: Vec<&Finding> = inp.findings.iter().filter(|f| f.class == class).collect();
        if fs.is_empty() {
            s.push_str("None in checks/facts/findings.toml.\n");
            continue;
        }
        s.push_str(
            "| finding | kernel states | checks: violated property (steps of the shortest counterexample) (scope) | reproduced | reference |\n\
             |---|---|---|---|---|\n",
        );
        for f in fs {
            let checks: Vec<String> = f
                .checks
                .iter()
                .map(|c| {
                    let Ok((e, r)) = inp.get(c, "checks/facts/findings.toml") else {
                        return format!("`{c}` (not in the catalogue)");
                    };
                    let v = violations(r);
                    format!(
                        "`{c}`: {} ({})",
                        if v.is_empty() {
                            "holds".to_string()
                        } else {
                            v.join(", ")
                        },
                        scope(e)
                    )
                })
                .collect();
            let or_dash = |x: &str| {
                if x.trim().is_empty() {
                    "-".to_string()
                } else {
                    x.replace('|', "/")
                }
            };
            s.push_str(&format!(
                "| {}: {} | {} | {} | {} | {} |\n",
                f.id,
                f.title.replace('|', "/"),
                f.kernels.join(", "),
                checks.join("; "),
                or_dash(&f.reproduced),
                or_dash(&f.reference)
            ));
        }
    }
    s.push_str("\nThe evidence and sources of each finding are in docs/findings.md.\n\n");
    s
}

/// A result as the docs show it: the run's time is not reproducible, so
/// it reads 0.00s.
fn timeless(r: &CheckResult) -> CheckResult {
    let mut r = r.clone();
    r.elapsed = Duration::ZERO;
    r
}

/// The README's example output: a violated and a holding verdict line;
/// then a witness, a States and a Switch line.
fn output_examples(inp: &Inputs) -> Result<(String, String), String> {
    let why = "README.md's example output";
    let pick = |check: &str, prefix: &str| -> Result<String, String> {
        let (_, r) = inp.get(check, why)?;
        crate::report::verdict_lines(&timeless(r))
            .into_iter()
            .find(|l| l.starts_with(prefix))
            .ok_or_else(|| format!("{why}: no line '{prefix}...' for {check}"))
    };
    let a = format!(
        "\n\n    {}\n    {}\n\n",
        pick("t-fopen-dio-read", "Check t-fopen-dio-read b1 ")?,
        pick("t-trunc-vs-wb-2p", "Check t-trunc-vs-wb-2p a2 ")?
    );
    let sw = inp
        .switches
        .iter()
        .find(|s| s.name == "dio_flush_always")
        .ok_or_else(|| format!("{why}: no switch dio_flush_always"))?;
    let b = format!(
        "\n\n    {}\n    {}\n    {}\n\n",
        pick("t-trunc-vs-wb-2p", "Witness t-trunc-vs-wb-2p w-crop ")?,
        pick("t-trunc-vs-wb-2p", "States ")?,
        sw.line()
    );
    Ok((a, b))
}

/// How the committed recorded traces fare against the models.
struct Recorded {
    total: usize,
    conforms: usize,
    /// Of `conforms`: those that needed background writeback passes.
    background: usize,
    to_cut: Vec<String>,
    not_modelled: Vec<String>,
    not_conforming: Vec<String>,
}

fn jsonl_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, String> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    v.sort();
    Ok(v)
}

fn recorded_in(dir: &Path) -> Result<Recorded, String> {
    let mut r = Recorded {
        total: 0,
        conforms: 0,
        background: 0,
        to_cut: vec![],
        not_modelled: vec![],
        not_conforming: vec![],
    };
    for p in jsonl_files(dir)? {
        let name = p
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let text = crate::paths::read_input(&p)?;
        let ev = wbspec_harness::trace::parse_trace(&text)
            .map_err(|e| format!("{}: {e}", p.display()))?;
        let c = conform_trace(&ev, None).map_err(|e| format!("{}: {e}", p.display()))?;
        r.total += 1;
        match c.class {
            Conf::Conforms => {
                r.conforms += 1;
                r.background += usize::from(c.word.contains("background writeback"));
            }
            Conf::ConformsToCut => r.to_cut.push(name),
            Conf::NotModelled => r.not_modelled.push(name),
            _ => r.not_conforming.push(name),
        }
    }
    Ok(r)
}

fn names(v: &[String]) -> String {
    v.iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The conformance of the committed 6.18.44 traces, in one paragraph.
fn recorded(inp: &Inputs) -> Result<String, String> {
    let t = inp.root.join("harness/tests/traces");
    let main = recorded_in(&t.join("6.18.44"))?;
    let gup = recorded_in(&t.join("6.18.44-gup"))?;
    let rerun = recorded_in(&t.join("6.18.44-rerun"))?;
    let mut s = format!(
        "Of the {} traces recorded on Linux 6.18.44 and committed in \
         harness/tests/traces/6.18.44/, {} conform to the `fuse` model",
        main.total, main.conforms
    );
    if !main.to_cut.is_empty() {
        s.push_str(&format!(
            ", {} conform up to a cut ({})",
            main.to_cut.len(),
            names(&main.to_cut)
        ));
    }
    if !main.not_conforming.is_empty() {
        s.push_str(&format!(
            ", **{} do not conform** ({})",
            main.not_conforming.len(),
            names(&main.not_conforming)
        ));
    }
    s.push_str(&format!(
        " and {} are outside the model, each with its stated reason ({}); \
         the {} direct-I/O traces in 6.18.44-gup/ are checked against the \
         `fuse-gup` model ({} conform), and {} of the {} second recordings in \
         6.18.44-rerun/ conform. Counted from the committed traces by the \
         doc generator (no kernel needed); `cargo test -p wbspec-harness \
         --test recorded` asserts each trace's verdict, and the real-kernel \
         suite (`real_kernel_suite`) records and checks them anew.",
        main.not_modelled.len(),
        names(&main.not_modelled),
        gup.total,
        gup.conforms,
        rerun.conforms,
        rerun.total
    ));
    Ok(s)
}

/// The conformance to state L of the traces recorded in `wbspec vm`
/// guests on Debian's kernels, in one paragraph.
fn recorded_l(inp: &Inputs) -> Result<String, String> {
    let t = inp.root.join("harness/tests/traces");
    let mut parts = vec![];
    for (dir, what) in [
        (
            "6.12.117",
            "Debian's 6.12.117 (L with the 6.12.64 FOPEN_DIRECT_IO fixes)",
        ),
        ("6.1.0-57", "Debian's 6.1.192 (L without 80e4f25262f9)"),
    ] {
        let r = recorded_in(&t.join(dir))?;
        let mut bad = r.not_conforming;
        bad.extend(r.to_cut);
        parts.push(format!(
            "on {what}, of {} traces {} conform ({} of them with \
             background writeback passes, docs/findings.md M-flusher), {} are \
             not modelled and {} not conforming{}",
            r.total,
            r.conforms,
            r.background,
            r.not_modelled.len(),
            bad.len(),
            if bad.is_empty() {
                String::new()
            } else {
                format!(" ({})", names(&bad))
            }
        ));
    }
    Ok(format!(
        "In `wbspec vm` guests, {}. Each verdict and the finding that \
         explains each non-conforming one are in the directory's \
         verdicts.tsv under harness/tests/traces/; counted by the doc \
         generator, asserted by `cargo test -p wbspec-harness --test \
         recorded_l`.",
        parts.join("; ")
    ))
}

pub fn readme(inp: &Inputs) -> Result<Blocks, String> {
    let mut b = Blocks::new();
    b.insert("summary", summary(inp));
    let (a, c) = output_examples(inp)?;
    b.insert("output-example", a);
    b.insert("output-example-2", c);
    b.insert(
        "n-scenarios",
        wbspec_harness::scenarios::all().len().to_string(),
    );
    b.insert(
        "n-gup-scenarios",
        wbspec_harness::dio_folios::scenarios().len().to_string(),
    );
    b.insert("recorded", recorded(inp)?);
    b.insert("recorded-l", recorded_l(inp)?);
    Ok(b)
}

/// The harness's scenario table, from its code: name, server
/// configuration (what differs from the default) and what it asserts.
fn scenario_table() -> String {
    use wbspec_harness::server::ServerConfig;
    let base = serde_json::to_value(ServerConfig::default()).unwrap_or(Value::Null);
    let mut s =
        String::from("\n\n| scenario | server configuration | what it asserts |\n|---|---|---|\n");
    for sc in wbspec_harness::scenarios::all() {
        let mut c = ServerConfig::default();
        (sc.config)(&mut c);
        let v = serde_json::to_value(&c).unwrap_or(Value::Null);
        let mut diff = Vec::new();
        if let (Some(a), Some(b)) = (v.as_object(), base.as_object()) {
            for (k, x) in a {
                if b.get(k) != Some(x) {
                    diff.push(format!("{k}={x}"));
                }
            }
        }
        s.push_str(&format!(
            "| {} | {} | {} |\n",
            sc.name,
            if diff.is_empty() {
                "default".to_string()
            } else {
                diff.join(", ")
            },
            sc.about.replace('|', "/")
        ));
    }
    s.push('\n');
    s
}

/// The line `conform --trace FILE` prints for a committed trace (its
/// first line; the detail follows only with --verbose or a violation).
fn conform_line(path: &Path) -> Result<String, String> {
    let text = crate::paths::read_input(path)?;
    let ev = wbspec_harness::trace::parse_trace(&text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let name = ev
        .first()
        .and_then(|h| h.scenario.clone())
        .unwrap_or_else(|| path.display().to_string());
    let c = conform_trace(&ev, None).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(format!("Conform {name} kernel=n/a model={}", c.word))
}

pub fn harness_readme(inp: &Inputs) -> Result<Blocks, String> {
    let n = wbspec_harness::scenarios::all().len();
    let t = inp.root.join("harness/tests/traces");
    let count = |d: &str| jsonl_files(&t.join(d)).map(|v| v.len().to_string());
    let mut b = Blocks::new();
    b.insert(
        "runner-output",
        format!(
            "\n\n```\nScenario b_ftrunc kernel=6.18.44-fc-v782 outcome=pass 325ms\n...\n{n} passed, 0 failed\n```\n\n"
        ),
    );
    b.insert("n-scenarios", n.to_string());
    b.insert("recorded", recorded(inp)?);
    b.insert("n-recorded", count("6.18.44")?);
    b.insert("n-rerun", count("6.18.44-rerun")?);
    b.insert("n-altered", count("altered")?);
    b.insert("scenario-table", scenario_table());
    b.insert(
        "settle-ms",
        wbspec_harness::scenario_kit::SETTLE_MS.to_string(),
    );
    let hold = wbspec_harness::server::ServerConfig::default().hold_timeout_ms;
    b.insert("hold-timeout-s", format!("{}", hold as f64 / 1000.0));
    let mut lines = Vec::new();
    for f in [
        "6.18.44/b_ftrunc.jsonl",
        "6.18.44/n_copy_range.jsonl",
        "altered/b_ftrunc_setattr_early.jsonl",
    ] {
        lines.push(conform_line(&t.join(f))?);
    }
    b.insert(
        "conform-output",
        format!("\n\n```\n{}\n```\n\n", lines.join("\n")),
    );
    Ok(b)
}

/// docs/citing.md's example: `cite t-fopen-dio-read` from the report,
/// with the commit shown as COMMIT and times as 0.00s.
pub fn citing(inp: &Inputs) -> Result<Blocks, String> {
    let why = "docs/citing.md's example";
    let (e, r) = inp.get("t-fopen-dio-read", why)?;
    let pair = match &e.pair {
        Some(p) => {
            let (pe, pr) = inp.get(p, why)?;
            Some((pe, timeless(pr)))
        }
        None => None,
    };
    let lines = crate::cite::cite(
        e,
        &timeless(r),
        pair.as_ref().map(|(pe, pr)| (*pe, pr)),
        &crate::cite::Context {
            commit: "COMMIT".into(),
            catalogue: None,
            facts: crate::facts::facts()?,
        },
    )?;
    let mut b = Blocks::new();
    b.insert(
        "cite-example",
        format!("\n\n```\n{}\n```\n\n", lines.join("\n")),
    );
    Ok(b)
}

/// docs/model.md: the FUSE model's step ↔ kernel function ↔ code tree
/// table (models/src/fuse/step.rs), which no catalogue run changes.
pub fn model_md() -> Blocks {
    let mut b = Blocks::new();
    b.insert(
        "step-trees",
        format!("\n\n{}\n", wbspec_models::fuse::step::step_tree_table()),
    );
    b
}

/// docs/performance.md: the catalogue's size and the benchmark set's
/// pinned state counts today.
pub fn performance(inp: &Inputs) -> Result<Blocks, String> {
    let why = "docs/performance.md's benchmark set";
    let twins = inp.entries.iter().filter(|e| e.parent.is_some()).count();
    let mut s = format!(
        "\n\nToday (generated by `{COMMAND}`): the catalogue has {} checks \
         ({} written, {} derived `-bg1` twins); the fixed set's pinned \
         unique state counts:\n\n| check | states | max depth |\n|---|---:|---:|\n",
        inp.entries.len(),
        inp.entries.len() - twins,
        twins
    );
    for name in crate::bench::DEFAULT_CHECKS {
        let (_, r) = inp.get(name, why)?;
        // a run on several threads has no DFS depth
        let depth = if r.depth_unknown {
            "n/a".to_string()
        } else {
            r.max_depth.to_string()
        };
        s.push_str(&format!("| {name} | {} | {depth} |\n", r.unique_states));
    }
    s.push('\n');
    let mut b = Blocks::new();
    b.insert("bench-set", s);
    let sym: Vec<&str> = inp
        .entries
        .iter()
        .filter(|e| e.symmetry && e.parent.is_none())
        .map(|e| e.name.as_str())
        .collect();
    b.insert(
        "symmetry-opt-in",
        match sym.len() {
            0 => "No catalogue check opts in".to_string(),
            n => format!(
                "{} opt in ({})",
                plural(n as u64, "catalogue check"),
                sym.join(", ")
            ),
        },
    );
    Ok(b)
}
