//! Docs that cannot drift: every number the tool can compute in README.md,
//! harness/README.md, docs/citing.md and docs/performance.md sits between
//! `<!-- wbspec:gen NAME -->` and `<!-- /wbspec:gen -->` and is written by
//! `wbspec check --all --update-docs` (or `wbspec docs --report FILE` from
//! a saved `check --all --json` report), together with docs/results.md.
//! `wbspec docs --report FILE --check` writes nothing and names every block
//! that differs from what the command would write (the CLI test runs it on
//! the one `check --all` it makes).
//!
//! The generators are in docgen_blocks.rs; this file holds the markers,
//! the splicing and the atomic writes.

use crate::catalogue::{Catalogue, Entry};
use crate::findings::Finding;
use crate::outcome::CheckResult;
use crate::results::{self, SwitchResult};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The command that regenerates every generated file and block.
pub const COMMAND: &str = "cargo run --release -- check --all --update-docs";
/// The same from a saved report (no catalogue run).
pub const COMMAND_FROM_REPORT: &str =
    "cargo run --release -- docs --report REPORT.json (from check --all --json REPORT.json)";

const OPEN: &str = "<!-- wbspec:gen ";
const OPEN_END: &str = " -->";
const CLOSE: &str = "<!-- /wbspec:gen -->";

/// What the generators read: the whole catalogue's results (one
/// `check --all`), the findings file and the checkout.
pub struct Inputs<'a> {
    pub cat: &'a Catalogue,
    /// Every catalogue entry, in catalogue order, with its result.
    pub entries: &'a [&'a Entry],
    pub results: &'a [CheckResult],
    pub switches: &'a [SwitchResult],
    pub findings: &'a [Finding],
    /// The checkout's root (README.md, docs/, harness/).
    pub root: &'a Path,
}

impl Inputs<'_> {
    /// The entry and result of a check, or an error naming the doc that
    /// needs it.
    pub fn get(&self, name: &str, why: &str) -> Result<(&Entry, &CheckResult), String> {
        self.entries
            .iter()
            .zip(self.results)
            .find(|(e, _)| e.name == name)
            .map(|(e, r)| (*e, r))
            .ok_or_else(|| format!("{why} names check '{name}', which is not in the catalogue"))
    }
}

/// A file the generator maintains: wholly generated, or blocks in it.
pub enum Doc {
    Whole(String),
    Blocks(BTreeMap<&'static str, String>),
}

/// Every generated file (relative to the root) and its content.
pub fn render(inp: &Inputs) -> Result<Vec<(&'static str, Doc)>, String> {
    let results_md = results::markdown(inp.entries, inp.results, Some(inp.switches), COMMAND)?;
    Ok(vec![
        ("docs/results.md", Doc::Whole(results_md)),
        ("README.md", Doc::Blocks(crate::docgen_blocks::readme(inp)?)),
        (
            "harness/README.md",
            Doc::Blocks(crate::docgen_blocks::harness_readme(inp)?),
        ),
        (
            "docs/citing.md",
            Doc::Blocks(crate::docgen_blocks::citing(inp)?),
        ),
        (
            "docs/performance.md",
            Doc::Blocks(crate::docgen_blocks::performance(inp)?),
        ),
        (
            "docs/model.md",
            Doc::Blocks(crate::docgen_blocks::model_md()),
        ),
    ])
}

/// `text` with every generated block replaced by `blocks`' content, and
/// the names of the blocks whose content changed. Errors: a block without
/// its end marker, a block inside a block, a block the generator does not
/// know, a block the generator writes that the file lacks.
pub fn splice(
    text: &str,
    file: &str,
    blocks: &BTreeMap<&'static str, String>,
) -> Result<(String, Vec<String>), String> {
    let mut out = String::with_capacity(text.len());
    let mut stale: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(OPEN) {
        let line = line_of(text, text.len() - rest.len() + i);
        let after = &rest[i + OPEN.len()..];
        let j = after
            .find(OPEN_END)
            .ok_or_else(|| format!("{file}:{line}: unterminated `{OPEN}` marker"))?;
        let name = &after[..j];
        let body_start = &after[j + OPEN_END.len()..];
        let k = body_start
            .find(CLOSE)
            .ok_or_else(|| format!("{file}:{line}: block '{name}' has no `{CLOSE}` after it"))?;
        let body = &body_start[..k];
        if body.contains(OPEN) {
            return Err(format!(
                "{file}:{line}: block '{name}' holds another block before its `{CLOSE}`"
            ));
        }
        let (key, want) = blocks.get_key_value(name).ok_or_else(|| {
            let known: Vec<&str> = blocks.keys().copied().collect();
            format!(
                "{file}:{line}: unknown generated block '{name}' (this file's: {})",
                known.join(", ")
            )
        })?;
        if body != want && !stale.iter().any(|s| s == name) {
            stale.push(name.to_string());
        }
        seen.push(key);
        out.push_str(&rest[..i + OPEN.len() + j + OPEN_END.len()]);
        out.push_str(want);
        out.push_str(CLOSE);
        rest = &body_start[k + CLOSE.len()..];
    }
    if let Some(k) = rest.find(CLOSE) {
        let line = line_of(text, text.len() - rest.len() + k);
        return Err(format!("{file}:{line}: `{CLOSE}` without a block"));
    }
    out.push_str(rest);
    if let Some(missing) = blocks.keys().find(|k| !seen.contains(k)) {
        return Err(format!(
            "{file}: generated block '{missing}' is missing (add `{OPEN}{missing}{OPEN_END}{CLOSE}` where it belongs)"
        ));
    }
    Ok((out, stale))
}

/// The 1-based line of byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// A generated file, or a block in a file, that differs from what the
/// generator writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stale {
    pub file: &'static str,
    /// `None`: the whole file is generated.
    pub block: Option<String>,
}

impl Stale {
    /// `README.md: generated block 'summary' is stale`.
    pub fn line(&self) -> String {
        match &self.block {
            Some(b) => format!("{}: generated block '{b}' is stale", self.file),
            None => format!("{} (a generated file) is stale", self.file),
        }
    }
    /// `updated README.md block 'summary'`.
    pub fn updated(&self) -> String {
        match &self.block {
            Some(b) => format!("updated {} block '{b}'", self.file),
            None => format!("updated {}", self.file),
        }
    }
}

/// Regenerates every file under `root`. With `write`, changed files are
/// replaced atomically; without, nothing is written. Returns every stale
/// block or file (empty: the docs are up to date).
pub fn update(inp: &Inputs, write: bool) -> Result<Vec<Stale>, String> {
    let mut stale = Vec::new();
    let mut new_texts: Vec<(PathBuf, String)> = Vec::new();
    // render everything first: nothing is written unless all of it renders
    for (rel, doc) in render(inp)? {
        let path = inp.root.join(rel);
        let old = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let new = match doc {
            Doc::Whole(t) => {
                if t != old {
                    stale.push(Stale {
                        file: rel,
                        block: None,
                    });
                }
                t
            }
            Doc::Blocks(b) => {
                let (t, s) = splice(&old, rel, &b)?;
                for name in s {
                    stale.push(Stale {
                        file: rel,
                        block: Some(name),
                    });
                }
                t
            }
        };
        if new != old {
            new_texts.push((path, new));
        }
    }
    if write {
        for (path, text) in &new_texts {
            crate::paths::write_atomic(path, text.as_bytes())?;
        }
    }
    Ok(stale)
}

/// The results of a `check --all --json` report, verified as
/// merge-reports verifies a shard (`shard::whole_report`).
pub fn results_from_report(
    cat: &Catalogue,
    doc: &serde_json::Value,
    file: &str,
) -> Result<Vec<CheckResult>, String> {
    crate::shard::whole_report(cat, file, doc)?
        .iter()
        .map(|(e, v)| crate::shard::result_from_json(e, v))
        .collect()
}

/// The message for stale docs: what is stale and the command to run.
pub fn stale_message(stale: &[Stale]) -> String {
    let what: Vec<String> = stale.iter().map(Stale::line).collect();
    format!(
        "{}; run `{COMMAND}` (or `{COMMAND_FROM_REPORT}`) and commit the result",
        what.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(v: &[(&'static str, &str)]) -> BTreeMap<&'static str, String> {
        v.iter().map(|(k, t)| (*k, t.to_string())).collect()
    }

    #[test]
    fn splice_replaces_blocks_and_names_the_stale_ones() {
        let text = "a <!-- wbspec:gen n -->58<!-- /wbspec:gen --> b\n\
                    <!-- wbspec:gen t -->\nold\n<!-- /wbspec:gen -->\nend\n";
        let b = blocks(&[("n", "61"), ("t", "\nnew\n")]);
        let (out, stale) = splice(text, "X.md", &b).unwrap();
        assert_eq!(
            out,
            "a <!-- wbspec:gen n -->61<!-- /wbspec:gen --> b\n\
             <!-- wbspec:gen t -->\nnew\n<!-- /wbspec:gen -->\nend\n"
        );
        assert_eq!(stale, vec!["n".to_string(), "t".to_string()]);
        // up to date: the same text, nothing stale
        let (again, stale) = splice(&out, "X.md", &b).unwrap();
        assert_eq!(again, out);
        assert!(stale.is_empty());
    }

    #[test]
    fn a_block_may_appear_twice() {
        let text = "<!-- wbspec:gen n -->1<!-- /wbspec:gen --> and <!-- wbspec:gen n -->61<!-- /wbspec:gen -->";
        let (out, stale) = splice(text, "X.md", &blocks(&[("n", "61")])).unwrap();
        assert_eq!(out.matches(">61<").count(), 2);
        assert_eq!(stale, vec!["n".to_string()]);
    }

    #[test]
    fn bad_markers_are_one_line_errors() {
        let b = blocks(&[("n", "1")]);
        for (text, want) in [
            ("x <!-- wbspec:gen n -->1", "X.md:1: block 'n' has no"),
            ("<!-- wbspec:gen n", "unterminated"),
            (
                "<!-- wbspec:gen m -->1<!-- /wbspec:gen -->",
                "unknown generated block 'm' (this file's: n)",
            ),
            (
                "<!-- wbspec:gen n -->1<!-- wbspec:gen n -->1<!-- /wbspec:gen -->",
                "holds another block",
            ),
            (
                "\n\n<!-- /wbspec:gen -->",
                "X.md:3: `<!-- /wbspec:gen -->` without a block",
            ),
            ("no blocks", "generated block 'n' is missing"),
        ] {
            let e = splice(text, "X.md", &b).unwrap_err();
            assert!(e.contains(want) && !e.contains('\n'), "{text:?}: {e}");
        }
    }
}
