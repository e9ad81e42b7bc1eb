//! `Config::from_table`: the FUSE model's keys of a catalogue entry
//! (TOML), parsed into a validated [`Config`].

use serde::Deserialize;

use super::{one_block, one_each, parse_errors, parse_short, yes, Config, TaskSpec, Variant};

/// The FUSE model's keys of a catalogue entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigRaw {
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
    #[serde(default = "one_block")]
    folio_blocks: u8,
    #[serde(default = "yes")]
    writeback_cache: bool,
    max_pages: Option<u8>,
    #[serde(default)]
    tasks: Vec<String>,
    /// Thread programs: each thread runs its syscalls in order.
    #[serde(default)]
    threads: Vec<Vec<String>>,
    max_background: Option<u8>,
    congestion_threshold: Option<u8>,
    #[serde(default)]
    async_dio: bool,
    #[serde(default)]
    memcg_v1: bool,
    #[serde(default = "one_block")]
    folio_pages: u8,
    #[serde(default = "one_block")]
    blocks_per_page: u8,
    max_read: Option<u8>,
    max_write: Option<u8>,
    #[serde(default)]
    errors: Vec<String>,
    #[serde(default)]
    short: Vec<String>,
}

fn one() -> u8 {
    1
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

impl Config {
    /// Builds a configuration from the FUSE keys of a catalogue entry.
    pub fn from_table(table: &toml::Table) -> Result<Config, String> {
        let raw: ConfigRaw = toml::Value::Table(table.clone())
            .try_into()
            .map_err(|e: toml::de::Error| e.message().to_string())?;
        let tree = crate::fuse::step::Tree::parse(&raw.kernel).ok_or_else(|| {
            format!(
                "unknown kernel state '{}' (known: L, T, T17, T2, T19, C)",
                raw.kernel
            )
        })?;
        let kernel = tree.kernel();
        let mut variant = Variant::base(kernel);
        for f in crate::common::variant_flags(&raw.variant)? {
            variant.set(f)?;
        }
        let mut tasks = Vec::new();
        for t in &raw.tasks {
            tasks.push(TaskSpec::parse(t)?);
        }
        // `threads = [[...], ...]`: the tasks of thread 0, then thread 1's,
        // ...; each remembers its thread.
        let mut thread = Vec::new();
        match (raw.tasks.is_empty(), raw.threads.is_empty()) {
            (false, false) => return Err("give tasks or threads, not both".into()),
            (true, true) => return Err("a workload needs tasks or threads".into()),
            _ => {}
        }
        for (th, prog) in raw.threads.iter().enumerate() {
            if prog.is_empty() {
                return Err(format!("thread {th} has no task"));
            }
            for t in prog {
                tasks.push(TaskSpec::parse(t)?);
                thread.push(th as u8);
            }
        }
        let config = Config {
            kernel,
            tree: (tree != crate::fuse::step::Tree::of(kernel)).then_some(tree),
            variant,
            pages: raw.pages,
            init_size: raw.init_size,
            cached: mask(&raw.cached, "cached")?,
            dirty: mask(&raw.dirty, "dirty")?,
            daemon_threads: raw.daemon_threads,
            direct_io_allow_mmap: raw.direct_io_allow_mmap,
            parallel_dio: raw.parallel_dio,
            atomic_o_trunc: raw.atomic_o_trunc,
            folio_blocks: raw.folio_blocks,
            writeback_cache: raw.writeback_cache,
            max_pages: raw.max_pages.unwrap_or(raw.pages),
            tasks,
            thread,
            whole: None,
            versions: Vec::new(),
            max_background: raw.max_background,
            congestion_threshold: raw.congestion_threshold,
            async_dio: raw.async_dio,
            real_pages: one_each(),
            memcg_v1: raw.memcg_v1,
            folio_pages: raw.folio_pages,
            blocks_per_page: raw.blocks_per_page,
            max_read: raw.max_read,
            max_write: raw.max_write,
            errors: parse_errors(&raw.errors)?,
            short: parse_short(&raw.short)?,
        };
        config.validate()?;
        Ok(config)
    }
}
