//! The kernel facts file, checks/facts/kernels.toml: what each kernel
//! state label stands for (versions, commits included and excluded, known
//! gaps), the stable backports that moved a boundary, and every commit id
//! the docs mention, each with its title, source and the date it was last
//! checked. It is compiled into the binary, like the models it describes;
//! `cite`, the JSON report and docs/results.md read it.

use crate::catalogue::line_of;
use crate::paths;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// The file's path in the repository, for messages.
pub const PATH: &str = "checks/facts/kernels.toml";
/// The file as compiled in.
pub const TEXT: &str = include_str!("../facts/kernels.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    pub model: String,
    pub name: String,
    pub label: String,
    pub mainline: String,
    pub stable: String,
    pub summary: String,
    pub includes: Vec<String>,
    pub excludes: Vec<String>,
    pub gaps: Vec<String>,
    pub checked: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Backport {
    pub upstream: String,
    pub stable_commit: String,
    pub branch: String,
    pub release: String,
    pub status: String,
    pub source: String,
    pub moves: String,
    pub checked: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Commit {
    pub id: String,
    pub title: String,
    pub repo: String,
    #[serde(rename = "where")]
    pub where_: String,
    pub source: String,
    pub checked: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Facts {
    pub state: Vec<State>,
    /// Running kernels → model states; the harness reads the same table
    /// (harness/src/kernels.rs).
    #[serde(default)]
    pub release: Vec<wbspec_harness::kernels::Release>,
    pub backport: Vec<Backport>,
    pub commit: Vec<Commit>,
}

fn is_hex_id(s: &str) -> bool {
    (7..=40).contains(&s.len()) && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

impl Facts {
    /// Parses and validates `text` (named `path` in messages). Errors are
    /// one line.
    pub fn parse(text: &str, path: &str) -> Result<Facts, String> {
        let f: Facts = toml::from_str(text).map_err(|e| {
            format!(
                "{path}{}: {}",
                line_of(text, e.span()),
                paths::one_line(e.message())
            )
        })?;
        f.validate().map_err(|e| format!("{path}: {e}"))?;
        Ok(f)
    }

    fn validate(&self) -> Result<(), String> {
        let mut ids = BTreeSet::new();
        for c in &self.commit {
            if !is_hex_id(&c.id) {
                return Err(format!(
                    "commit id '{}' is not 7-40 lowercase hex digits",
                    c.id
                ));
            }
            if !ids.insert(c.id.as_str()) {
                return Err(format!("commit {} is listed twice", c.id));
            }
            if c.title.trim().is_empty() || c.source.trim().is_empty() {
                return Err(format!("commit {} needs a title and a source", c.id));
            }
            if !is_date(&c.checked) {
                return Err(format!(
                    "commit {}: checked = '{}' is not YYYY-MM-DD",
                    c.id, c.checked
                ));
            }
        }
        for c in &self.commit {
            if let Some(o) = self
                .commit
                .iter()
                .find(|o| o.id != c.id && (o.id.starts_with(&c.id) || c.id.starts_with(&o.id)))
            {
                return Err(format!("commit ids {} and {} are ambiguous", c.id, o.id));
            }
        }
        let mut names = BTreeSet::new();
        for s in &self.state {
            if !names.insert((s.model.as_str(), s.name.as_str())) {
                return Err(format!(
                    "state {} of model {} is listed twice",
                    s.name, s.model
                ));
            }
            if !is_date(&s.checked) {
                return Err(format!(
                    "state {}: checked = '{}' is not YYYY-MM-DD",
                    s.name, s.checked
                ));
            }
            for id in s.includes.iter().chain(&s.excludes) {
                if self.commit(id).is_none() {
                    return Err(format!(
                        "state {} names commit {id}, which has no [[commit]] entry",
                        s.name
                    ));
                }
            }
        }
        for (i, r) in self.release.iter().enumerate() {
            let at = format!("release {}.{}", r.series, r.from);
            if self.state(&r.model, &r.state).is_none() {
                return Err(format!(
                    "{at}: state {} of model {} has no [[state]] entry",
                    r.state, r.model
                ));
            }
            if !is_date(&r.checked) {
                return Err(format!("{at}: checked = '{}' is not YYYY-MM-DD", r.checked));
            }
            // "MAJOR.MINOR" as uname -r spells it: another spelling
            // ("6.012", "6.12.0") would never match a release
            let canonical = r
                .series
                .split_once('.')
                .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
                .is_some_and(|(a, b)| format!("{a}.{b}") == r.series);
            if !canonical {
                return Err(format!("{at}: series '{}' is not MAJOR.MINOR", r.series));
            }
            if let Some(k) =
                wbspec_models::fuse::Kernel::parse(&r.state).filter(|_| r.model == "fuse")
            {
                let mut v = wbspec_models::fuse::Variant::base(k);
                for f in &r.flags {
                    v.set(f).map_err(|e| format!("{at}: flag {f}: {e}"))?;
                }
            }
            if r.to.is_some_and(|t| t < r.from) {
                return Err(format!("{at}: to is below from"));
            }
            if r.label.trim().is_empty() || r.source.trim().is_empty() {
                return Err(format!("{at}: needs a label and a source"));
            }
            // no two entries cover one release
            let hi = |x: &wbspec_harness::kernels::Release| x.to.unwrap_or(u32::MAX);
            if let Some(o) = self.release[..i]
                .iter()
                .find(|o| o.series == r.series && o.from <= hi(r) && r.from <= hi(o))
            {
                return Err(format!(
                    "{at}: overlaps release {}.{} (one release, one state)",
                    o.series, o.from
                ));
            }
        }
        for b in &self.backport {
            if self.commit(&b.upstream).is_none() {
                return Err(format!(
                    "backport of {}: no [[commit]] entry for it",
                    b.upstream
                ));
            }
            if !b.stable_commit.is_empty() && self.commit(&b.stable_commit).is_none() {
                return Err(format!(
                    "backport {}: no [[commit]] entry for it",
                    b.stable_commit
                ));
            }
            if !is_date(&b.checked) {
                return Err(format!(
                    "backport of {}: checked = '{}' is not YYYY-MM-DD",
                    b.upstream, b.checked
                ));
            }
        }
        Ok(())
    }

    /// The commit `id` names (the file's id and `id` agree on their common
    /// prefix, at least 7 digits).
    pub fn commit(&self, id: &str) -> Option<&Commit> {
        let id = id.to_ascii_lowercase();
        if id.len() < 7 {
            return None;
        }
        self.commit
            .iter()
            .find(|c| c.id.starts_with(&id) || id.starts_with(&c.id))
    }

    /// The kernel state `name` of `model`.
    pub fn state(&self, model: &str, name: &str) -> Option<&State> {
        self.state
            .iter()
            .find(|s| s.model == model && s.name == name)
    }

    /// The states of `model`, in file order.
    /// What kernel state `name` of `model` stands for in versions, as its
    /// label says it (`T17 (6.17 - 6.18.2)` gives `6.17 - 6.18.2`); the
    /// name itself for a state without facts.
    pub fn versions(&self, model: &str, name: &str) -> String {
        match self.state(model, name) {
            Some(s) => match (s.label.find('('), s.label.rfind(')')) {
                (Some(a), Some(b)) if a < b => s.label[a + 1..b].to_string(),
                _ => s.label.clone(),
            },
            None => name.to_string(),
        }
    }

    pub fn states_of<'a>(&'a self, model: &'a str) -> impl Iterator<Item = &'a State> + 'a {
        self.state.iter().filter(move |s| s.model == model)
    }

    /// Backports of `upstream` (or to a stable commit `upstream`).
    pub fn backports_of<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a Backport> + 'a {
        self.backport.iter().filter(move |b| {
            self.commit(id)
                .is_some_and(|c| c.id == b.upstream || c.id == b.stable_commit)
        })
    }

    /// `id "title"` for a commit of the file, or the id alone.
    pub fn cite_commit(&self, id: &str) -> String {
        match self.commit(id) {
            Some(c) => format!("{} (\"{}\")", c.id, c.title),
            None => id.to_string(),
        }
    }
}

/// The compiled-in facts, parsed once. A malformed file is a one-line
/// error (the CLI exits 2 on it).
pub fn facts() -> Result<&'static Facts, String> {
    static F: OnceLock<Result<Facts, String>> = OnceLock::new();
    F.get_or_init(|| Facts::parse(TEXT, PATH))
        .as_ref()
        .map_err(Clone::clone)
}

/// Commit ids a text mentions: 7-40 hex digits (at least one a-f letter
/// or 12+ digits) in backticks, or after the word "commit"/"commits".
pub fn commit_ids_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let looks_like_id =
        |w: &str| is_hex_id(w) && (w.len() >= 12 || w.bytes().any(|b| b.is_ascii_alphabetic()));
    // in backticks
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 && looks_like_id(part) {
            out.push(part.to_string());
        }
    }
    // after "commit"
    let words: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for w in words.windows(2) {
        if (w[0].eq_ignore_ascii_case("commit") || w[0].eq_ignore_ascii_case("commits"))
            && looks_like_id(w[1])
        {
            out.push(w[1].to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_in_file_parses() {
        let f = facts().unwrap();
        assert!(f.state("fuse", "T2").is_some());
        assert!(
            f.commit("0c4f8ed498cea1").is_some(),
            "a longer id finds its prefix"
        );
        assert!(f.commit("0c4f8").is_none(), "too short to name a commit");
    }

    #[test]
    fn release_entries_that_cannot_match_or_collide_are_refused() {
        let entry = |series: &str, from: u32, to: &str, flags: &str| {
            format!(
                "\n[[release]]\nseries = \"{series}\"\nfrom = {from}\n{to}model = \"fuse\"\nstate = \"L\"\nflags = [{flags}]\nlabel = \"x\"\nsource = \"s\"\ngaps = []\nchecked = \"2026-12-01\"\n"
            )
        };
        assert!(Facts::parse(&format!("{TEXT}{}", entry("6.6", 0, "", "")), "k").is_ok());
        for (extra, why) in [
            (entry("6.12", 70, "", ""), "overlaps"),
            (entry("6.6", 5, "to = 4\n", ""), "to is below from"),
            (entry("6.012", 0, "", ""), "MAJOR.MINOR"),
            (entry("6.6.1", 0, "", ""), "MAJOR.MINOR"),
            (entry("6.6", 0, "", "\"no_such_flag\""), "flag no_such_flag"),
        ] {
            let e = Facts::parse(&format!("{TEXT}{extra}"), "k").unwrap_err();
            assert!(e.contains(why), "{why}: {e}");
        }
    }

    #[test]
    fn malformed_files_are_one_line_errors() {
        let bad = [
            ("state = 3\n", "invalid type"),
            (
                "state = []\nbackport = []\ncommit = []\nextra = 1\n",
                "unknown field",
            ),
            (
                "state = []\nbackport = []\n[[commit]]\nid = \"xyz1234\"\ntitle = \"t\"\nrepo = \"r\"\nwhere = \"w\"\nsource = \"s\"\nchecked = \"2026-12-01\"\n",
                "not 7-40",
            ),
            (
                "state = []\nbackport = []\n[[commit]]\nid = \"abcdef1\"\ntitle = \"t\"\nrepo = \"r\"\nwhere = \"w\"\nsource = \"s\"\nchecked = \"Dec 1\"\n",
                "YYYY-MM-DD",
            ),
            (
                "backport = []\ncommit = []\n[[state]]\nmodel = \"m\"\nname = \"X\"\nlabel = \"X\"\nmainline = \"\"\nstable = \"\"\nsummary = \"\"\nincludes = [\"abcdef1\"]\nexcludes = []\ngaps = []\nchecked = \"2026-12-01\"\n",
                "no [[commit]] entry",
            ),
        ];
        for (text, want) in bad {
            let e = Facts::parse(text, "k.toml").expect_err(text);
            assert!(e.starts_with("k.toml"), "{e}");
            assert!(e.contains(want), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn commit_ids_are_found_in_backticks_and_after_commit() {
        let t = "see `0c58a97f919c` and commit 56d9f05, not `1234567` nor 6.18.44 nor `deadbeefx`";
        assert_eq!(commit_ids_in(t), vec!["0c58a97f919c", "56d9f05"]);
    }
}
