//! The catalogue of named checks: TOML files in checks/catalogue/, each a
//! list of `[[check]]` tables with a configuration, a workload and the
//! expected verdicts.

use serde::Deserialize;
use stateright::Expectation;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wbspec_models::fuse::properties::PROPERTIES;
use wbspec_models::fuse::{Config, Kernel, TaskSpec, Variant};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRaw {
    #[serde(default)]
    check: Vec<EntryRaw>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryRaw {
    name: String,
    question: String,
    #[serde(default = "default_model")]
    model: String,
    kernel: String,
    #[serde(default)]
    variant: Vec<String>,
    pages: u8,
    init_size: u8,
    #[serde(default)]
    cached: Vec<u8>,
    #[serde(default)]
    dirty: Vec<u8>,
    #[serde(default = "one")]
    daemon_threads: u8,
    #[serde(default)]
    direct_io_allow_mmap: bool,
    #[serde(default)]
    parallel_dio: bool,
    #[serde(default)]
    atomic_o_trunc: bool,
    #[serde(default = "one")]
    folio_blocks: u8,
    #[serde(default = "yes")]
    writeback_cache: bool,
    max_pages: Option<u8>,
    tasks: Vec<String>,
    #[serde(default)]
    errors: Vec<String>,
    #[serde(default)]
    expect: BTreeMap<String, String>,
    #[serde(default)]
    witnesses: Vec<String>,
    states: Option<u64>,
    #[serde(default)]
    tags: Vec<String>,
    /// The other half of a good/bad pair (e.g. the same workload on the
    /// kernel state that fixed it).
    pair: Option<String>,
}

fn default_model() -> String {
    "fuse".into()
}
fn one() -> u8 {
    1
}
fn yes() -> bool {
    true
}

/// Expected or observed verdict of an `always` property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    Violated,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Violated => "violated",
        }
    }
}

/// One named check.
#[derive(Clone, Debug)]
pub struct Entry {
    pub name: String,
    pub question: String,
    pub file: PathBuf,
    pub model: String,
    pub config: Config,
    /// Expected verdict per always-property (all of them, defaults holds).
    pub expect: Vec<(&'static str, Verdict)>,
    /// Witnesses that must be reached.
    pub witnesses: Vec<&'static str>,
    /// Pinned unique state count.
    pub states: Option<u64>,
    pub tags: Vec<String>,
    pub pair: Option<String>,
}

impl Entry {
    pub fn expected(&self, prop: &str) -> Verdict {
        self.expect
            .iter()
            .find(|(n, _)| *n == prop)
            .map(|(_, v)| *v)
            .unwrap_or(Verdict::Holds)
    }
}

pub fn always_properties() -> Vec<&'static str> {
    PROPERTIES
        .iter()
        .filter(|p| p.expectation == Expectation::Always)
        .map(|p| p.name)
        .collect()
}

pub fn witness_properties() -> Vec<&'static str> {
    PROPERTIES
        .iter()
        .filter(|p| p.expectation == Expectation::Sometimes)
        .map(|p| p.name)
        .collect()
}

fn lookup(name: &str, list: &[&'static str], what: &str) -> Result<&'static str, String> {
    list.iter()
        .copied()
        .find(|n| *n == name)
        .ok_or_else(|| format!("unknown {what} '{name}' (known: {})", list.join(", ")))
}

fn mask(pages: &[u8], what: &str) -> Result<u8, String> {
    let mut m = 0u8;
    for &p in pages {
        if p >= 8 {
            return Err(format!("{what}: page {p} out of range"));
        }
        m |= 1 << p;
    }
    Ok(m)
}

fn convert(raw: EntryRaw, file: &Path) -> Result<Entry, String> {
    let ctx = |e: String| format!("check '{}': {e}", raw.name);
    if raw.model != "fuse" {
        return Err(ctx(format!("unknown model '{}' (known: fuse)", raw.model)));
    }
    let kernel = Kernel::parse(&raw.kernel).ok_or_else(|| {
        ctx(format!(
            "unknown kernel state '{}' (known: L, T, T2, C)",
            raw.kernel
        ))
    })?;
    let mut variant = Variant::base(kernel);
    for f in &raw.variant {
        variant.set(f).map_err(ctx)?;
    }
    let mut tasks = Vec::new();
    for t in &raw.tasks {
        tasks.push(TaskSpec::parse(t).map_err(ctx)?);
    }
    let config = Config {
        kernel,
        variant,
        pages: raw.pages,
        init_size: raw.init_size,
        cached: mask(&raw.cached, "cached").map_err(ctx)?,
        dirty: mask(&raw.dirty, "dirty").map_err(ctx)?,
        daemon_threads: raw.daemon_threads,
        direct_io_allow_mmap: raw.direct_io_allow_mmap,
        parallel_dio: raw.parallel_dio,
        atomic_o_trunc: raw.atomic_o_trunc,
        folio_blocks: raw.folio_blocks,
        writeback_cache: raw.writeback_cache,
        max_pages: raw.max_pages.unwrap_or(raw.pages),
        tasks,
        errors: wbspec_models::fuse::config::parse_errors(&raw.errors).map_err(ctx)?,
    };
    config.validate().map_err(ctx)?;
    let always = always_properties();
    let mut expect = Vec::new();
    for (k, v) in &raw.expect {
        let n = lookup(k, &always, "property").map_err(ctx)?;
        let v = match v.as_str() {
            "holds" => Verdict::Holds,
            "violated" => Verdict::Violated,
            _ => return Err(ctx(format!("expect.{k} must be \"holds\" or \"violated\""))),
        };
        expect.push((n, v));
    }
    let wl = witness_properties();
    let mut witnesses = Vec::new();
    for w in &raw.witnesses {
        witnesses.push(lookup(w, &wl, "witness").map_err(ctx)?);
    }
    Ok(Entry {
        name: raw.name,
        question: raw.question,
        file: file.to_path_buf(),
        model: raw.model,
        config,
        expect,
        witnesses,
        states: raw.states,
        tags: raw.tags,
        pair: raw.pair,
    })
}

/// Loads every `*.toml` file of a catalogue directory (sorted by name).
pub fn load_dir(dir: &Path) -> Result<Vec<Entry>, String> {
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
    let mut out: Vec<Entry> = Vec::new();
    for f in files {
        for e in load_file(&f)? {
            if out.iter().any(|o| o.name == e.name) {
                return Err(format!(
                    "{}: check '{}' is defined twice",
                    f.display(),
                    e.name
                ));
            }
            out.push(e);
        }
    }
    for e in &out {
        if let Some(p) = &e.pair {
            if !out.iter().any(|o| &o.name == p) {
                return Err(format!(
                    "{}: check '{}' pairs with unknown check '{p}'",
                    e.file.display(),
                    e.name
                ));
            }
        }
    }
    Ok(out)
}

pub fn load_file(f: &Path) -> Result<Vec<Entry>, String> {
    let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
    parse(&text, f)
}

pub fn parse(text: &str, f: &Path) -> Result<Vec<Entry>, String> {
    let raw: FileRaw = toml::from_str(text).map_err(|e| {
        let msg = e.message().to_string();
        match e.span() {
            Some(sp) => {
                let line = text[..sp.start].matches('\n').count() + 1;
                format!("{}:{line}: {msg}", f.display())
            }
            None => format!("{}: {msg}", f.display()),
        }
    })?;
    raw.check
        .into_iter()
        .map(|r| convert(r, f).map_err(|e| format!("{}: {e}", f.display())))
        .collect()
}

/// Rewrites the `states = N` line of check `name` in its catalogue file
/// (adding it after `tasks` if missing). Used by `--update-pins`.
pub fn update_pin(file: &Path, name: &str, states: u64) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut out: Vec<String> = Vec::new();
    let mut in_block = false;
    let mut done = false;
    let mut pending_insert: Option<usize> = None;
    let name_line = format!("name = \"{name}\"");
    for line in text.lines() {
        let t = line.trim();
        if t == "[[check]]" {
            if let Some(i) = pending_insert.take() {
                out.insert(i + 1, format!("states = {states}"));
                done = true;
            }
            in_block = false;
        } else if t == name_line {
            in_block = true;
        }
        if in_block && t.starts_with("states =") {
            out.push(format!("states = {states}"));
            in_block = false;
            pending_insert = None;
            done = true;
            continue;
        }
        if in_block && t.starts_with("tasks =") {
            pending_insert = Some(out.len());
        }
        out.push(line.to_string());
    }
    if let Some(i) = pending_insert.take() {
        out.insert(i + 1, format!("states = {states}"));
        done = true;
    }
    if !done {
        return Err(format!(
            "{}: could not place the pin for '{name}'",
            file.display()
        ));
    }
    let mut s = out.join("\n");
    s.push('\n');
    std::fs::write(file, s).map_err(|e| format!("{}: {e}", file.display()))
}

/// Flags that the check's kernel state sets by itself (not the check's
/// own additions).
pub fn base_flags(e: &Entry) -> Vec<&'static str> {
    Variant::base(e.config.kernel).flags_on()
}
