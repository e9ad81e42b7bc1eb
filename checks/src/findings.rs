//! checks/facts/findings.toml: every finding the README and docs present,
//! with its class against the kernel's contract (a bug, intended
//! behaviour, ...), the checks that show it and the kernel states it
//! concerns. Read by the doc generator (docgen.rs); every error is one
//! line naming the finding.

use crate::catalogue::Catalogue;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// What a finding is, judged against what the kernel promises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// A bug no upstream report or fix is known for.
    BugNotReported,
    /// A bug with an upstream reference (commit, release or thread).
    BugKnown,
    /// What the kernel does on purpose; a property stricter than its
    /// contract flags it.
    Intended,
    /// A composition no released tree contains.
    Hypothetical,
    /// A statement about the code, not a bug.
    KernelFact,
}

impl Class {
    pub const ALL: [Class; 5] = [
        Class::BugNotReported,
        Class::BugKnown,
        Class::Intended,
        Class::Hypothetical,
        Class::KernelFact,
    ];

    /// The word in the file.
    pub fn key(self) -> &'static str {
        match self {
            Class::BugNotReported => "bug-not-reported",
            Class::BugKnown => "bug-known",
            Class::Intended => "intended",
            Class::Hypothetical => "hypothetical",
            Class::KernelFact => "kernel-fact",
        }
    }

    /// How the docs name the class.
    pub fn heading(self) -> &'static str {
        match self {
            Class::BugNotReported => "Bugs, not reported upstream",
            Class::BugKnown => "Bugs, known upstream",
            Class::Intended => {
                "Intended behaviour (a property stricter than the kernel's contract)"
            }
            Class::Hypothetical => "Hypothetical (a composition no released tree contains)",
            Class::KernelFact => "Kernel facts (statements about the code, not bugs)",
        }
    }

    /// The class as docs/findings.md's Class lines say it.
    pub fn label(self) -> &'static str {
        match self {
            Class::BugNotReported => "bug, not reported upstream",
            Class::BugKnown => "bug, known",
            Class::Intended => "intended behaviour",
            Class::Hypothetical => "hypothetical",
            Class::KernelFact => "kernel fact",
        }
    }
    pub fn is_bug(self) -> bool {
        matches!(self, Class::BugNotReported | Class::BugKnown)
    }

    fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.key() == s)
    }
}

/// One `[[finding]]`.
#[derive(Clone, Debug)]
pub struct Finding {
    pub id: String,
    pub title: String,
    pub class: Class,
    pub reference: String,
    pub checks: Vec<String>,
    pub kernels: Vec<String>,
    /// The kernel release it was reproduced on, or empty.
    pub reproduced: String,
    /// When the finding was last checked against the sources.
    pub checked: String,
    /// Fix switches wbspec proposes for it (`SwitchKind::Fix`), each
    /// turned on by a catalogue check paired with one of `checks`.
    pub fixes: Vec<String>,
    /// Its real-kernel reproducer (reproduce.rs: `scenario:NAME`,
    /// `vm:NAME` or `nowait-append`), if it has one.
    pub reproducer: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFinding {
    id: String,
    title: String,
    class: String,
    reference: String,
    checks: Vec<String>,
    kernels: Vec<String>,
    reproduced: String,
    checked: String,
    #[serde(default)]
    fixes: Vec<String>,
    #[serde(default)]
    reproducer: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    finding: Vec<RawFinding>,
}

/// The findings file of the checkout that holds `catalogue_dir`
/// (`checks/catalogue` → `checks/facts/findings.toml`).
pub fn path_for(catalogue_dir: &Path) -> PathBuf {
    catalogue_dir
        .parent()
        .unwrap_or(Path::new("."))
        .join("facts/findings.toml")
}

/// Reads and validates `path` against the catalogue: every class known,
/// every check a catalogue check, every kernel a kernel state of a model
/// in the catalogue, ids unique, titles one line of at most 72 columns, a
/// known bug with its reference.
pub fn load(path: &Path, cat: &Catalogue) -> Result<Vec<Finding>, String> {
    let text = crate::paths::read_input(path)?;
    parse(&text, &path.display().to_string(), cat)
}

/// `load` on text already read (`what` names it in errors).
pub fn parse(text: &str, what: &str, cat: &Catalogue) -> Result<Vec<Finding>, String> {
    let raw: RawFile = toml::from_str(text)
        .map_err(|e| format!("{what}: {}", crate::paths::one_line(&e.to_string())))?;
    let mut out: Vec<Finding> = Vec::new();
    for r in raw.finding {
        let at = format!("{what}: finding '{}'", r.id);
        if r.id.trim().is_empty() {
            return Err(format!("{what}: a finding with an empty id"));
        }
        // `report` writes docs/reports/ID.md: an id is one file name
        let id_ok =
            r.id.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric())
                && r.id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !id_ok {
            return Err(format!(
                "{what}: finding id '{}': letters, digits, '-' and '_' only, starting with a letter or digit",
                r.id.escape_default()
            ));
        }
        if out.iter().any(|f| f.id == r.id) {
            return Err(format!("{at}: duplicate id"));
        }
        let class = Class::parse(&r.class).ok_or_else(|| {
            let known: Vec<&str> = Class::ALL.iter().map(|c| c.key()).collect();
            format!(
                "{at}: unknown class '{}' (one of {})",
                r.class,
                known.join(", ")
            )
        })?;
        if r.title.contains('\n') || r.title.chars().count() > 72 || r.title.trim().is_empty() {
            return Err(format!("{at}: the title must be one line of 1-72 columns"));
        }
        if class == Class::BugKnown && r.reference.trim().is_empty() {
            return Err(format!(
                "{at}: a bug-known finding needs its upstream reference"
            ));
        }
        if class == Class::Intended && r.reference.trim().is_empty() {
            return Err(format!(
                "{at}: an intended finding needs its reference (what the kernel promises instead)"
            ));
        }
        // A kernel fact may rest on a real kernel's trace alone (a
        // conformance finding, docs/vm.md), which `reproduced` names.
        if r.checks.is_empty() && !(class == Class::KernelFact && !r.reproduced.trim().is_empty()) {
            return Err(format!(
                "{at}: no checks (`checks = []`): name those that show it (only a kernel fact with `reproduced` may have none)"
            ));
        }
        if !is_date(&r.checked) {
            return Err(format!(
                "{at}: checked '{}' is not a YYYY-MM-DD date",
                r.checked
            ));
        }
        let mut entries = Vec::new();
        for c in &r.checks {
            let e = cat.entries.iter().find(|e| &e.name == c);
            entries
                .push(e.ok_or_else(|| format!("{at}: unknown check '{c}' (see `wbspec list`)"))?);
        }
        // what its checks expect must agree with the class: a bug is an
        // expected violation that is not `intended`; intended behaviour is
        // an expected violation. (Not necessarily an `intended` one: io3
        // of the nowait model is not split into a contract and a stricter
        // form, so N4's checks expect it `violated`; docs/findings.md, N4.)
        let violations = || {
            entries.iter().flat_map(|e| {
                e.expect
                    .iter()
                    .filter(|(_, v)| *v == crate::catalogue::Verdict::Violated)
                    .map(|(p, _)| e.is_intended(p))
            })
        };
        if class == Class::Intended && violations().next().is_none() {
            return Err(format!(
                "{at}: class intended, but none of its checks expects a violation"
            ));
        }
        if class.is_bug() && !violations().any(|i| !i) {
            return Err(format!(
                "{at}: class {}, but its checks expect no violation that is not \"intended\"",
                class.key()
            ));
        }
        for k in &r.kernels {
            let known = cat
                .entries
                .iter()
                .any(|e| e.check.kernel_states().iter().any(|s| s.name == k));
            if !known {
                return Err(format!("{at}: unknown kernel state '{k}'"));
            }
        }
        for (i, f) in r.fixes.iter().enumerate() {
            if r.fixes[..i].contains(f) {
                return Err(format!("{at}: fix '{f}' is listed twice"));
            }
            let is_fix = entries.iter().any(|e| {
                e.check
                    .switch_defs()
                    .iter()
                    .any(|d| &d.name == f && d.kind == wbspec_models::spec::SwitchKind::Fix)
            });
            if !is_fix {
                return Err(format!(
                    "{at}: fix '{f}' is no fix switch of its checks' models"
                ));
            }
            let shown = cat.entries.iter().any(|e| {
                e.pair.as_ref().is_some_and(|p| r.checks.contains(p))
                    && e.check.switches_changed().iter().any(|s| s == f)
            });
            if !shown {
                return Err(format!(
                    "{at}: fix '{f}' has no catalogue check that turns it on and is paired with one of the finding's checks"
                ));
            }
        }
        if let Some(rep) = &r.reproducer {
            crate::reproduce::validate(rep).map_err(|e| format!("{at}: {e}"))?;
            // `reproduce` prints the model's prediction next to the
            // kernel's outcome: the checks are that prediction
            if r.checks.is_empty() {
                return Err(format!(
                    "{at}: a reproducer needs the checks whose prediction it tests (`checks = []`)"
                ));
            }
        }
        out.push(Finding {
            id: r.id,
            title: r.title,
            class,
            reference: r.reference,
            checks: r.checks,
            kernels: r.kernels,
            reproduced: r.reproduced,
            checked: r.checked,
            fixes: r.fixes,
            reproducer: r.reproducer,
        });
    }
    Ok(out)
}

/// `YYYY-MM-DD` with a month 01-12 and a day 01-31.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().ok();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && s.chars()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
        && matches!(num(5..7), Some(1..=12))
        && matches!(num(8..10), Some(1..=31))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;

    fn cat() -> Catalogue {
        catalogue::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogue")).unwrap()
    }

    const GOOD: &str = r#"
[[finding]]
id = "F-x"
title = "a title"
class = "bug-not-reported"
reference = ""
checks = ["t2-otrunc-atomic-race"]
kernels = ["T2", "C"]
reproduced = "6.18.44"
checked = "2026-12-01"
"#;

    #[test]
    fn the_committed_file_loads_against_the_catalogue() {
        let c = cat();
        let f = load(&path_for(&c.dir), &c).unwrap();
        assert!(f.iter().any(|x| x.id == "F-otrunc" && x.class.is_bug()));
        // intended behaviour is never presented as a bug
        for id in ["F-close-eio", "F-short-read"] {
            let x = f.iter().find(|x| x.id == id).expect(id);
            assert!(!x.class.is_bug(), "{id} is classed as a bug");
        }
    }

    /// A check whose only expected violation is intended behaviour.
    const INTENDED_CHECK: &str = "t2-wb-error-two-fds";
    /// A check that expects every property to hold.
    const HOLDING_CHECK: &str = "t2-stat-dio-extend";

    #[test]
    fn bad_findings_are_one_line_errors() {
        let c = cat();
        let f = parse(GOOD, "f.toml", &c).unwrap();
        assert_eq!(f[0].class, Class::BugNotReported);
        let twice = format!("{GOOD}{GOOD}");
        for (text, want) in [
            (
                GOOD.replace("bug-not-reported", "bug"),
                "f.toml: finding 'F-x': unknown class 'bug' (one of bug-not-reported,",
            ),
            (
                GOOD.replace("t2-otrunc-atomic-race", "no-such-check"),
                "f.toml: finding 'F-x': unknown check 'no-such-check'",
            ),
            (twice, "f.toml: finding 'F-x': duplicate id"),
            // an id is the name of docs/reports/ID.md
            (
                GOOD.replace("\"F-x\"", "\"../../x\""),
                "f.toml: finding id '../../x': letters, digits",
            ),
            (
                GOOD.replace("\"F-x\"", "\"F x\""),
                "letters, digits, '-' and '_' only",
            ),
            (GOOD.replace("\"C\"", "\"T9\""), "unknown kernel state 'T9'"),
            (
                GOOD.replace("bug-not-reported", "bug-known"),
                "a bug-known finding needs its upstream reference",
            ),
            (
                GOOD.replace("a title", &"x".repeat(73)),
                "one line of 1-72 columns",
            ),
            (
                GOOD.replace("checked =", "severity = 1\nchecked ="),
                "unknown field `severity`",
            ),
            (
                GOOD.replace("checked = \"2026-12-01\"", ""),
                "missing field `checked`",
            ),
            (
                GOOD.replace("2026-12-01", "yesterday"),
                "checked 'yesterday' is not a YYYY-MM-DD date",
            ),
            (
                GOOD.replace("2026-12-01", "2026-13-01"),
                "not a YYYY-MM-DD date",
            ),
            (
                GOOD.replace("[\"t2-otrunc-atomic-race\"]", "[]"),
                "no checks (`checks = []`)",
            ),
            (
                GOOD.replace("bug-not-reported", "intended"),
                "an intended finding needs its reference",
            ),
            (
                GOOD.replace("bug-not-reported", "bug-known")
                    .replace("reference = \"\"", "reference = \"  \""),
                "a bug-known finding needs its upstream reference",
            ),
            // a bug shown only by intended behaviour
            (
                GOOD.replace("t2-otrunc-atomic-race", INTENDED_CHECK),
                "class bug-not-reported, but its checks expect no violation that is not \"intended\"",
            ),
            // intended behaviour shown by a check that expects nothing violated
            (
                GOOD.replace("bug-not-reported", "intended")
                    .replace("reference = \"\"", "reference = \"r\"")
                    .replace("t2-otrunc-atomic-race", HOLDING_CHECK),
                "class intended, but none of its checks expects a violation",
            ),
            // the optional keys: a fix twice, a reproducer that names no
            // scenario, a VM-only scenario on the host, a reproducer
            // without the checks it tests
            (
                format!("{GOOD}fixes = [\"fix_otrunc_keep_size\", \"fix_otrunc_keep_size\"]\n"),
                "fix 'fix_otrunc_keep_size' is listed twice",
            ),
            (
                format!("{GOOD}fixes = [\"mut_crop_old_size\"]\n"),
                "fix 'mut_crop_old_size' is no fix switch",
            ),
            (
                format!("{GOOD}reproducer = \"scenario:o_otrunc_atomic_rac\"\n"),
                "reproducer 'scenario:o_otrunc_atomic_rac': no scenario o_otrunc_atomic_rac",
            ),
            (
                format!("{GOOD}reproducer = \"vm:nope\"\n"),
                "no scenario nope",
            ),
            (
                format!("{GOOD}reproducer = \"scenario:x_pdio_bugon\"\n"),
                "x_pdio_bugon runs only in a guest (vm:x_pdio_bugon)",
            ),
            (
                format!("{GOOD}reproducer = \"scenario\"\n"),
                "one of scenario:NAME, vm:NAME, nowait-append",
            ),
            (
                format!("{GOOD}reproducer = 3\n"),
                "invalid type",
            ),
            (
                GOOD.replace("bug-not-reported", "kernel-fact")
                    .replace("[\"t2-otrunc-atomic-race\"]", "[]")
                    + "reproducer = \"scenario:o_otrunc_atomic_race\"\n",
                "a reproducer needs the checks whose prediction it tests",
            ),
        ] {
            let e = parse(&text, "f.toml", &c).unwrap_err();
            assert!(e.contains(want) && !e.contains('\n'), "{want}: got {e}");
        }
    }
}
