//! The catalogue of named checks: TOML files in checks/catalogue/, each a
//! list of `[[check]]` tables. The checker reads the generic keys (name,
//! question, model, expect, witnesses, states, violations, tags, pair,
//! congested, symmetry); every other key belongs to the model named by `model` (default "fuse"), which
//! parses it (`Spec::parse_config`). `[[unobservable]]` tables name the
//! switches no workload can tell apart, with the reason.
//!
//! When the model can bound its request queue (`Spec::congested`), every
//! check has a derived twin `<name>-bg1` run under that bound. Its
//! expectations and pins live in the check's `congested` table
//! (`congested = { expect = {...}, states = N, witnesses = {...},
//! violations = {...} }`); an expectation it does not list is the check's
//! own, so a verdict that depends on an uncongested queue is always
//! written down.
//!
//! `violations = { c1 = 123 }` pins, per always-property, the number of
//! reachable states that violate it (a property not listed: none), so a
//! weakened property or mutant that changes how often it fails shows.

use crate::check::{self, Check};
use crate::paths;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Keys of a `[[check]]` table that the checker reads; the rest go to
/// the model (the Spin twin strips the same keys).
pub const GENERIC_KEYS: &[&str] = &[
    "name",
    "question",
    "model",
    "expect",
    "witnesses",
    "states",
    "tags",
    "pair",
    "congested",
    "symmetry",
    "violations",
];

/// Suffix of a derived check run under the model's queue bound.
pub const CONGESTED_SUFFIX: &str = "-bg1";

/// Expected or observed verdict of an `always` property. `Unknown` is
/// only ever observed: a run stopped at a bound before any violating
/// state proves nothing (a catalogue cannot expect it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    Violated,
    Unknown,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Violated => "violated",
            Verdict::Unknown => "unknown",
        }
    }
}

/// The witnesses of an entry: a list (each must be reached; counts not
/// pinned, so the entry is not as expected until `--update-pins`), or a
/// table of pinned counts (exactly these are reached, with these counts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Witnesses {
    Listed(Vec<String>),
    Pinned(BTreeMap<String, u64>),
}

/// One named check.
#[derive(Clone)]
pub struct Entry {
    pub name: String,
    pub question: String,
    pub file: PathBuf,
    pub model: String,
    /// Expected verdict per always-property (the others: holds).
    pub expect: Vec<(String, Verdict)>,
    /// Properties stricter than the kernel's contract whose violation is
    /// expected as the kernel's intended behaviour (`expect = { p =
    /// "intended" }`; in `expect` too, as violated).
    pub intended: Vec<String>,
    pub witnesses: Witnesses,
    /// Pinned unique state count.
    pub states: Option<u64>,
    /// Pinned number of violating states per always-property
    /// (`violations = { c1 = 123 }`); a property not listed has none.
    pub violations: BTreeMap<String, u64>,
    pub tags: Vec<String>,
    /// The other half of a good/bad pair (e.g. the same workload on the
    /// kernel state that fixed it).
    pub pair: Option<String>,
    /// The pins are of an exploration reduced by the model's symmetry
    /// (`symmetry = true`; docs/performance.md).
    pub symmetry: bool,
    /// The model's keys of the entry as written (tasks, pages, ...).
    pub settings: toml::Table,
    pub check: Arc<dyn Check>,
    /// For a derived `<name>-bg1` check: the check it derives from (its
    /// pins are written into that check's `congested` table).
    pub parent: Option<String>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Entry({} {})", self.model, self.name)
    }
}

impl Entry {
    /// Is the expected violation of `prop` the kernel's intended
    /// behaviour (a property stricter than its contract)?
    pub fn is_intended(&self, prop: &str) -> bool {
        self.intended.iter().any(|n| n == prop)
    }

    pub fn expected(&self, prop: &str) -> Verdict {
        self.expect
            .iter()
            .find(|(n, _)| n == prop)
            .map(|(_, v)| *v)
            .unwrap_or(Verdict::Holds)
    }

    /// Is the witness listed, and with which pinned count?
    pub fn witness_pin(&self, w: &str) -> (bool, Option<u64>) {
        match &self.witnesses {
            Witnesses::Listed(v) => (v.iter().any(|x| x == w), None),
            Witnesses::Pinned(m) => (m.contains_key(w), m.get(w).copied()),
        }
    }

    pub fn witnesses_pinned(&self) -> bool {
        matches!(self.witnesses, Witnesses::Pinned(_))
    }

    pub fn has_tag(&self, t: &str) -> bool {
        self.tags.iter().any(|x| x == t)
    }

    /// The pinned number of states that violate `prop` (0 when not
    /// listed).
    pub fn violation_pin(&self, prop: &str) -> u64 {
        self.violations.get(prop).copied().unwrap_or(0)
    }

    /// Is the check a mutant, judged by the mutation score? Tagged
    /// `mutant`, or running a switch its model classes as a mutant,
    /// tagged or not. A derived `-bg1` twin is not one: its mutant's
    /// violation may need an uncongested queue.
    pub fn is_mutant(&self) -> bool {
        if self.parent.is_some() {
            return false;
        }
        let defs = self.check.switch_defs();
        self.has_tag("mutant")
            || self.check.switches_changed().iter().any(|s| {
                defs.iter().any(|d| {
                    d.name == s.as_str() && d.kind == wbspec_models::spec::SwitchKind::Mutant
                })
            })
    }
}

/// A switch the catalogue declares unobservable, with the reason.
#[derive(Clone, Debug)]
pub struct Unobservable {
    pub model: String,
    pub switch: String,
    pub why: String,
}

/// An op whose drop no catalogue check can tell apart
/// (`[[equivalent-op]]`, `check --all --mutate-ops`), with the reason.
#[derive(Clone, Debug)]
pub struct EquivalentOp {
    pub model: String,
    pub label: String,
    pub why: String,
}

/// A loaded catalogue.
#[derive(Clone, Debug)]
pub struct Catalogue {
    pub dir: PathBuf,
    pub entries: Vec<Entry>,
    pub unobservable: Vec<Unobservable>,
    pub equivalent_ops: Vec<EquivalentOp>,
    /// Hash of the catalogue's contents (every `.toml` file's name and
    /// text, in load order), 16 hex digits: a report records it so that
    /// `merge-reports` can tell a shard of another catalogue.
    pub hash: String,
}

/// Loads every `*.toml` file of a catalogue directory (sorted by name).
pub fn load_dir(dir: &Path) -> Result<Catalogue, String> {
    let rd = std::fs::read_dir(dir)
        .map_err(|e| format!("catalogue directory {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().map(|x| x == "toml").unwrap_or(false))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "catalogue directory {} has no .toml file",
            dir.display()
        ));
    }
    let mut cat = Catalogue {
        dir: dir.to_path_buf(),
        entries: Vec::new(),
        unobservable: Vec::new(),
        equivalent_ops: Vec::new(),
        hash: String::new(),
    };
    let mut h = crate::fingerprint::WordHasher::new();
    for f in files {
        let text = paths::read_input(&f)?;
        {
            use std::hash::Hash;
            f.file_name().map(|n| n.as_encoded_bytes()).hash(&mut h);
            text.hash(&mut h);
        }
        let (entries, unobs) = parse(&text, &f)?;
        cat.equivalent_ops
            .extend(equivalent_ops(&text).map_err(|e| format!("{}: {e}", f.display()))?);
        for e in entries {
            if cat.entries.iter().any(|o| o.name == e.name) {
                return Err(format!(
                    "{}: check '{}' is defined twice",
                    f.display(),
                    e.name
                ));
            }
            cat.entries.push(e);
        }
        cat.unobservable.extend(unobs);
    }
    if cat.entries.is_empty() {
        // `check --all` over nothing would pass as "0 checks"
        return Err(format!(
            "catalogue directory {} defines no [[check]]",
            dir.display()
        ));
    }
    cat.hash = format!("{:016x}", std::hash::Hasher::finish(&h));
    for e in &cat.entries {
        if let Some(p) = &e.pair {
            if !cat.entries.iter().any(|o| &o.name == p) {
                return Err(format!(
                    "{}: check '{}' pairs with unknown check '{p}'",
                    e.file.display(),
                    e.name
                ));
            }
        }
    }
    Ok(cat)
}

/// `:LINE` of a TOML error span, or nothing.
pub(crate) fn line_of(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    match span {
        Some(sp) => format!(
            ":{}",
            text[..sp.start.min(text.len())].matches('\n').count() + 1
        ),
        None => String::new(),
    }
}

/// The 1-based line of the `i`-th `[[check]]` header of a catalogue
/// text (`None` when the checks are not written as headers).
fn header_line(text: &str, i: usize) -> Option<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let t: String = l.chars().filter(|c| !c.is_whitespace()).collect();
            t.starts_with("[[check]]")
        })
        .nth(i)
        .map(|(n, _)| n + 1)
}

/// Text the terminal will print must not carry control characters (an
/// escape sequence in a `question` would reach the reader's terminal).
fn printable<'a>(what: &str, s: &'a str) -> Result<&'a str, String> {
    match s.chars().find(|c| c.is_control()) {
        Some(c) => Err(format!(
            "`{what}` contains the control character {:?}; write plain text",
            c
        )),
        None => Ok(s),
    }
}

/// Parses one catalogue file.
pub fn parse(text: &str, f: &Path) -> Result<(Vec<Entry>, Vec<Unobservable>), String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| {
        format!(
            "{}{}: {}",
            f.display(),
            line_of(text, e.span()),
            paths::one_line(e.message())
        )
    })?;
    let fd = f.display();
    let mut entries = Vec::new();
    let mut unobs = Vec::new();
    for (k, v) in doc {
        match k.as_str() {
            "check" => {
                let arr = v.as_array().ok_or_else(|| {
                    format!("{fd}: `check` must be an array of tables ([[check]])")
                })?;
                for (i, c) in arr.iter().enumerate() {
                    // semantic errors name the file and the line of the
                    // check's [[check]] header
                    let at = header_line(text, i).map_or(String::new(), |l| format!(":{l}"));
                    let t = c
                        .as_table()
                        .ok_or_else(|| format!("{fd}{at}: check #{} is not a table", i + 1))?;
                    entries.extend(
                        convert(t, f).map_err(|e| format!("{fd}{at}: {}", paths::one_line(&e)))?,
                    );
                }
            }
            "unobservable" => {
                let arr = v.as_array().ok_or_else(|| {
                    format!("{fd}: `unobservable` must be an array of tables ([[unobservable]])")
                })?;
                for c in arr {
                    unobs.push(unobservable(c).map_err(|e| format!("{fd}: {e}"))?);
                }
            }
            // read by `equivalent_ops`
            "equivalent-op" => {}
            other => {
                return Err(format!(
                    "{fd}: unknown top-level key `{other}` (expected [[check]], [[unobservable]] or [[equivalent-op]])"
                ))
            }
        }
    }
    Ok((entries, unobs))
}

/// The `[[equivalent-op]]` tables of a catalogue file: `label`, `why`,
/// optional `model` (default fuse).
pub fn equivalent_ops(text: &str) -> Result<Vec<EquivalentOp>, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| paths::one_line(e.message()))?;
    let Some(v) = doc.get("equivalent-op") else {
        return Ok(Vec::new());
    };
    let arr = v
        .as_array()
        .ok_or("`equivalent-op` must be an array of tables ([[equivalent-op]])")?;
    let mut out = Vec::new();
    for c in arr {
        let t = c
            .as_table()
            .ok_or("an [[equivalent-op]] entry is not a table")?;
        for k in t.keys() {
            if !["model", "label", "why"].contains(&k.as_str()) {
                return Err(format!("[[equivalent-op]]: unknown field `{k}`"));
            }
        }
        let label = str_key(t, "label")?.ok_or("[[equivalent-op]]: missing field `label`")?;
        let why = printable(
            "why",
            str_key(t, "why")?.ok_or("[[equivalent-op]]: missing field `why`")?,
        )?;
        if why.trim().is_empty() {
            return Err(format!("[[equivalent-op]] {label}: `why` is empty"));
        }
        out.push(EquivalentOp {
            model: str_key(t, "model")?.unwrap_or("fuse").to_string(),
            label: label.to_string(),
            why: why.to_string(),
        });
    }
    Ok(out)
}

fn str_key<'a>(t: &'a toml::Table, k: &str) -> Result<Option<&'a str>, String> {
    match t.get(k) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("`{k}` must be a string")),
    }
}

fn unobservable(v: &toml::Value) -> Result<Unobservable, String> {
    let t = v
        .as_table()
        .ok_or("an [[unobservable]] entry is not a table")?;
    for k in t.keys() {
        if !["model", "switch", "why"].contains(&k.as_str()) {
            return Err(format!("[[unobservable]]: unknown field `{k}`"));
        }
    }
    let switch = str_key(t, "switch")?.ok_or("[[unobservable]]: missing field `switch`")?;
    let why = printable(
        "why",
        str_key(t, "why")?.ok_or("[[unobservable]]: missing field `why`")?,
    )?;
    if why.trim().is_empty() {
        return Err(format!("[[unobservable]] {switch}: `why` is empty"));
    }
    Ok(Unobservable {
        model: str_key(t, "model")?.unwrap_or("fuse").to_string(),
        switch: switch.to_string(),
        why: why.to_string(),
    })
}

/// The verdict expectations, the properties among them expected
/// `intended`, witnesses, state pin and violation pins of a table (a
/// check, or its `congested` table).
type Pins = (
    Vec<(String, Verdict)>,
    Vec<String>,
    Witnesses,
    Option<u64>,
    BTreeMap<String, u64>,
);

fn pins_of_table(
    t: &toml::Table,
    check: &Arc<dyn Check>,
    ctx: &dyn Fn(String) -> String,
) -> Result<Pins, String> {
    let defs = check.property_defs();
    let always: Vec<&str> = defs
        .iter()
        .filter(|p| p.expectation == stateright::Expectation::Always)
        .map(|p| p.name)
        .collect();
    let sometimes: Vec<&str> = defs
        .iter()
        .filter(|p| p.expectation == stateright::Expectation::Sometimes)
        .map(|p| p.name)
        .collect();
    let lookup = |n: &str, list: &[&str], what: &str| -> Result<(), String> {
        if list.contains(&n) {
            Ok(())
        } else {
            Err(ctx(format!(
                "unknown {what} '{n}' (known: {})",
                list.join(", ")
            )))
        }
    };
    let mut expect = Vec::new();
    let mut intended = Vec::new();
    if let Some(v) = t.get("expect") {
        let tab = v.as_table().ok_or_else(|| {
            ctx("`expect` must be a table of property = \"holds\"|\"violated\"|\"intended\"".into())
        })?;
        for (k, v) in tab {
            lookup(k, &always, "property")?;
            let v = match v.as_str() {
                Some("holds") => Verdict::Holds,
                Some("violated") => Verdict::Violated,
                Some("intended") => {
                    // only a property that asks more than the kernel
                    // promises can be violated by intended behaviour
                    if defs.iter().any(|d| d.name == k && d.stricter.is_none()) {
                        return Err(ctx(format!(
                            "expect.{k} = \"intended\": {k} is a kernel contract, not a property stricter than one (a violation of it is \"violated\")"
                        )));
                    }
                    intended.push(k.clone());
                    Verdict::Violated
                }
                _ => {
                    return Err(ctx(format!(
                        "expect.{k} must be \"holds\", \"violated\" or \"intended\""
                    )))
                }
            };
            expect.push((k.clone(), v));
        }
    }
    let witnesses = match t.get("witnesses") {
        None => Witnesses::Listed(vec![]),
        Some(toml::Value::Array(a)) => {
            let mut v = Vec::new();
            for w in a {
                let w = w
                    .as_str()
                    .ok_or_else(|| ctx("`witnesses` lists witness names".into()))?;
                lookup(w, &sometimes, "witness")?;
                v.push(w.to_string());
            }
            Witnesses::Listed(v)
        }
        Some(toml::Value::Table(tab)) => {
            let mut m = BTreeMap::new();
            for (w, c) in tab {
                lookup(w, &sometimes, "witness")?;
                let c = c
                    .as_integer()
                    .filter(|c| *c > 0)
                    .ok_or_else(|| ctx(format!("witnesses.{w} must be a positive count")))?;
                m.insert(w.clone(), c as u64);
            }
            Witnesses::Pinned(m)
        }
        Some(_) => {
            return Err(ctx(
                "`witnesses` is a list of names or a table of pinned counts".into(),
            ))
        }
    };
    let states = match t.get("states") {
        None => None,
        Some(v) => Some(
            v.as_integer()
                .filter(|c| *c > 0)
                .ok_or_else(|| ctx("`states` must be a positive count".into()))? as u64,
        ),
    };
    let mut violations = BTreeMap::new();
    match t.get("violations") {
        None => {}
        Some(toml::Value::Table(tab)) => {
            for (p, c) in tab {
                lookup(p, &always, "property")?;
                let c = c
                    .as_integer()
                    .filter(|c| *c > 0)
                    .ok_or_else(|| ctx(format!("violations.{p} must be a positive count")))?;
                violations.insert(p.clone(), c as u64);
            }
        }
        Some(_) => {
            return Err(ctx(
                "`violations` is a table of property = pinned violating states".into(),
            ))
        }
    }
    Ok((expect, intended, witnesses, states, violations))
}

/// A violation pin on a property expected to hold contradicts the
/// expectation.
fn violations_agree(
    expect: &[(String, Verdict)],
    violations: &BTreeMap<String, u64>,
    ctx: &dyn Fn(String) -> String,
) -> Result<(), String> {
    for p in violations.keys() {
        if !expect
            .iter()
            .any(|(n, v)| n == p && *v == Verdict::Violated)
        {
            return Err(ctx(format!(
                "violations.{p} is pinned, but {p} is expected to hold"
            )));
        }
    }
    Ok(())
}

/// One `[[check]]` table: the check, and its derived `-bg1` twin when the
/// model bounds its queue.
fn convert(t: &toml::Table, file: &Path) -> Result<Vec<Entry>, String> {
    let name = str_key(t, "name")?
        .ok_or("a check has no `name`")?
        .to_string();
    if !paths::valid_check_name(&name) {
        return Err(format!(
            "check name {name:?}: use lower-case letters, digits and '-', starting with a letter or digit (at most 64)"
        ));
    }
    let ctx = |e: String| format!("check '{name}': {e}");
    let question = str_key(t, "question")
        .map_err(ctx)?
        .ok_or_else(|| ctx("missing field `question`".into()))?;
    let question = printable("question", question).map_err(ctx)?.to_string();
    let model = str_key(t, "model")
        .map_err(ctx)?
        .unwrap_or("fuse")
        .to_string();
    let mut own = toml::Table::new();
    for (k, v) in t {
        if !GENERIC_KEYS.contains(&k.as_str()) {
            own.insert(k.clone(), v.clone());
        }
    }
    let check = check::from_table(&model, &own).map_err(ctx)?;
    let (expect, intended, witnesses, states, violations) = pins_of_table(t, &check, &ctx)?;
    violations_agree(&expect, &violations, &ctx)?;
    let tags = match t.get("tags") {
        None => vec![],
        Some(toml::Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map(String::from))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| ctx("`tags` lists strings".into()))?,
        Some(_) => return Err(ctx("`tags` lists strings".into())),
    };
    for tag in &tags {
        printable("tags", tag).map_err(ctx)?;
    }
    let symmetry = match t.get("symmetry") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(_) => return Err(ctx("`symmetry` must be true or false".into())),
    };
    if symmetry && !check.has_symmetry() {
        return Err(ctx(format!(
            "`symmetry = true`, but model {model} defines no symmetry reduction"
        )));
    }
    let mut out = Vec::new();
    let congested = check.congested();
    match (t.get("congested"), &congested) {
        (Some(_), None) => {
            return Err(ctx(
                "`congested` is given, but this configuration has no congested twin (the model has no queue bound, or the check sets it)".into(),
            ))
        }
        (Some(v), Some(_)) if !v.is_table() => {
            return Err(ctx(
                "`congested` is a table: { expect = {...}, states = N, witnesses = {...} }"
                    .into(),
            ))
        }
        _ => {}
    }
    if let Some((cc, label)) = congested {
        let empty = toml::Table::new();
        let ct = t
            .get("congested")
            .and_then(|v| v.as_table())
            .unwrap_or(&empty);
        for k in ct.keys() {
            if !["expect", "witnesses", "states", "violations"].contains(&k.as_str()) {
                return Err(ctx(format!(
                    "congested: unknown key `{k}` (expect, witnesses, states, violations)"
                )));
            }
        }
        let cctx = |e: String| format!("check '{name}': congested: {e}");
        let (cexp, cint, cwit, cstates, cviol) = pins_of_table(ct, &cc, &cctx)?;
        let mut exp = expect.clone();
        let mut int = intended.clone();
        for (k, v) in cexp {
            exp.retain(|(n, _)| *n != k);
            int.retain(|n| *n != k);
            exp.push((k, v));
        }
        int.extend(cint);
        violations_agree(&exp, &cviol, &cctx)?;
        let mut ctags: Vec<String> = tags
            .iter()
            .filter(|x| *x != "mutant" && *x != "equivalent")
            .cloned()
            .collect();
        ctags.push("congested".into());
        out.push(Entry {
            name: format!("{name}{CONGESTED_SUFFIX}"),
            question: format!("{question} [{label}]"),
            file: file.to_path_buf(),
            model: model.clone(),
            expect: exp,
            intended: int,
            witnesses: cwit,
            states: cstates,
            violations: cviol,
            tags: ctags,
            pair: None,
            symmetry,
            settings: own.clone(),
            check: cc,
            parent: Some(name.clone()),
        });
    }
    out.insert(
        0,
        Entry {
            question,
            file: file.to_path_buf(),
            model,
            expect,
            intended,
            witnesses,
            states,
            violations,
            tags,
            pair: str_key(t, "pair").map_err(ctx)?.map(String::from),
            symmetry,
            settings: own,
            check,
            name,
            parent: None,
        },
    );
    Ok(out)
}
