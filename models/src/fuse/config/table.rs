//! `Config::from_table`: the FUSE model's keys of a catalogue entry
//! (TOML), parsed into a validated [`Config`].

use serde::Deserialize;

use super::{
    one_block, one_each, parse_errors, parse_short, yes, Config, PageMask, SubPage, TaskSpec,
    Variant,
};

/// The FUSE model's keys of a catalogue entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigRaw {
    kernel: String,
    #[serde(default)]
    variant: Vec<String>,
    pages: u8,
    /// Pages (an integer) or units (`"5u"`).
    init_size: toml::Value,
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
    #[serde(default)]
    auto_inval_data: bool,
    #[serde(default)]
    attr_valid: bool,
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
    uring_queues: u8,
    #[serde(default)]
    memcg_v1: bool,
    #[serde(default)]
    memcg_v2: bool,
    #[serde(default)]
    mglru: bool,
    #[serde(default)]
    charged_elsewhere: bool,
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
    #[serde(default = "one_block")]
    units_per_page: u8,
    #[serde(default = "page_4k")]
    page_size: u32,
    max_read_bytes: Option<u32>,
    max_write_bytes: Option<u32>,
    /// Uneven positions (layout.rs): the bytes of each, in order.
    unit_bytes: Option<Vec<u32>>,
    /// Op labels to drop from the task programs (oplabel.rs).
    #[serde(default)]
    drop: Vec<String>,
}

fn page_4k() -> u32 {
    4096
}

/// A page mask (bit per page) as a unit mask (U bits per page).
fn unit_mask(m: PageMask, u: u8, what: &str) -> Result<PageMask, String> {
    let mut out = 0u32;
    for p in 0..PageMask::BITS {
        if (m >> p) & 1 == 1 {
            out |= ((1u32 << u) - 1) << (p * u as u32);
        }
    }
    PageMask::try_from(out).map_err(|_| format!("{what}: a page beyond the model's units"))
}

/// A number of the task syntax: pages (`3`, times `u` units) or units
/// (`3u`).
fn unit_number(w: &str, u: u8) -> Result<u8, String> {
    let (digits, units) = match w.strip_suffix('u') {
        Some(d) => (d, true),
        None => (w, false),
    };
    let n: u8 = digits.parse().map_err(|_| format!("bad number '{w}'"))?;
    if units {
        Ok(n)
    } else {
        n.checked_mul(u)
            .ok_or_else(|| format!("'{w}' is too large"))
    }
}

/// A task in pages and units (`write 1u+3u`, `truncate 5u`, `write 0+1`)
/// rewritten in model units, the numbers TaskSpec::parse takes. A range
/// without a count is one page or one unit as its start is written
/// (`read 1` is page 1, `read 1u` unit 1).
pub(super) fn to_units(t: &str, u: u8) -> Result<String, String> {
    let mut out: Vec<String> = Vec::new();
    let kind = t.split_whitespace().next().unwrap_or("");
    if super::TARGETS_TASK.contains(&kind) {
        // (a task number, not a position)
        return Ok(t.to_string());
    }
    let ranged = super::TASK_SYNTAX
        .iter()
        .any(|f| f.split_whitespace().next() == Some(kind) && f.contains("F+N"));
    for (i, w) in t.split_whitespace().enumerate() {
        let numeric = w.chars().next().is_some_and(|c| c.is_ascii_digit());
        if i == 0 || !numeric {
            out.push(w.to_string());
            continue;
        }
        let conv = |x: &str| unit_number(x, u).map_err(|e| format!("task '{t}': {e}"));
        out.push(match w.split_once('+') {
            Some((a, b)) => format!("{}+{}", conv(a)?, conv(b)?),
            None if ranged => {
                let n = if w.ends_with('u') { "1u" } else { "1" };
                format!("{}+{}", conv(w)?, conv(n)?)
            }
            None => conv(w)?.to_string(),
        });
    }
    Ok(out.join(" "))
}

fn one() -> u8 {
    1
}

fn mask(pages: &[u8], what: &str) -> Result<PageMask, String> {
    let mut m: PageMask = 0;
    for &p in pages {
        if p as u32 >= PageMask::BITS {
            return Err(format!("{what}: page {p} out of range"));
        }
        m |= 1 << p;
    }
    Ok(m)
}

impl Config {
    /// Builds a configuration from the FUSE keys of a catalogue entry.
    pub fn from_table(table: &toml::Table) -> Result<Config, String> {
        let raw: ConfigRaw = crate::common::from_table(table)?;
        let tree = crate::fuse::step::Tree::parse(&raw.kernel).ok_or_else(|| {
            format!(
                "unknown kernel state '{}' (known: L, T, T17, T2, T19, C)",
                raw.kernel
            )
        })?;
        let kernel = tree.kernel();
        let mut variant = Variant::base(kernel);
        // a label's code tree decides what its mechanics lack: T17 runs
        // T's with 6.17's iomap writeback
        variant.iomap_wb_eof |= tree.iomap_writeback();
        variant.ra_round_end |= tree.ra_round_end();
        for f in crate::common::variant_flags(&raw.variant)? {
            variant.set(f)?;
        }
        let u = raw.units_per_page;
        if ![1, 2, 4].contains(&u) {
            return Err(format!("units_per_page is 1, 2 or 4, got {u}"));
        }
        if raw.unit_bytes.as_ref().is_some_and(|b| b.is_empty()) {
            return Err("unit_bytes: 1..=4 positions, got none".into());
        }
        let unit_bytes_raw = raw.unit_bytes.clone().unwrap_or_default();
        let uneven = !unit_bytes_raw.is_empty();
        let task = |t: &str| {
            let kind = t.split_whitespace().next().unwrap_or("");
            if uneven
                && !super::TARGETS_TASK.contains(&kind)
                && t.split_whitespace().skip(1).any(|w| {
                    w.split('+')
                        .any(|x| x.starts_with(|c: char| c.is_ascii_digit()) && !x.ends_with('u'))
                })
            {
                return Err(format!(
                    "task '{t}': with unit_bytes, positions are units (write 1u+2u)"
                ));
            }
            TaskSpec::parse(&to_units(t, u)?)
        };
        let mut tasks = Vec::new();
        for t in &raw.tasks {
            tasks.push(task(t)?);
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
                tasks.push(task(t)?);
                thread.push(th as u8);
            }
        }
        if (raw.max_read.is_some() && raw.max_read_bytes.is_some())
            || (raw.max_write.is_some() && raw.max_write_bytes.is_some())
        {
            return Err(
                "give max_read (pages) or max_read_bytes, max_write or max_write_bytes, not both"
                    .into(),
            );
        }
        let pages = raw.pages;
        // uneven positions: `pages` is the kernel pages they cover; a
        // page number (init_size, cached, dirty) is its first position
        // (`None`: a page inside a position of several pages)
        let mut page_pos: Vec<Option<u8>> = Vec::new();
        let mut unit_bytes = [0u32; super::MAX_PAGES];
        if uneven {
            if u != 1 {
                return Err("give units_per_page or unit_bytes, not both".into());
            }
            let n = unit_bytes_raw.len();
            if n > super::MAX_PAGES || unit_bytes_raw.contains(&0) {
                return Err(format!(
                    "unit_bytes: 1..={} positions of at least one byte, got {:?}",
                    super::MAX_PAGES,
                    unit_bytes_raw
                ));
            }
            unit_bytes[..n].copy_from_slice(&unit_bytes_raw);
            if !crate::fuse::subpage::PAGE_SIZES.contains(&raw.page_size) {
                return Err(format!(
                    "page_size {}: the modelled page sizes are 4096, 16384 and 65536 bytes",
                    raw.page_size
                ));
            }
            let ps = raw.page_size as u64;
            let total: u64 = unit_bytes_raw.iter().map(|b| *b as u64).sum();
            if total != pages as u64 * ps {
                return Err(format!(
                    "unit_bytes: {total} bytes in all for pages = {pages} of {ps} bytes"
                ));
            }
            let mut at = 0u64;
            for (i, b) in unit_bytes_raw.iter().enumerate() {
                crate::fuse::layout::check_position(at, *b as u64, ps)?;
                if at % ps == 0 {
                    page_pos.resize((at / ps) as usize, None);
                    page_pos.push(Some(i as u8));
                }
                at += *b as u64;
            }
            page_pos.resize(pages as usize, None);
            page_pos.push(Some(n as u8));
        }
        let pos_of = |p: u8| -> Result<u8, String> {
            match page_pos.get(p as usize) {
                Some(Some(q)) => Ok(*q),
                Some(None) => Err(format!(
                    "page {p} lies inside a position of several pages (unit_bytes): name the page it starts at"
                )),
                None => Ok(p.saturating_mul(u)),
            }
        };
        // a page's positions: from its first to the next page's first
        let pos_mask = |m: PageMask| -> Result<PageMask, String> {
            let mut out: PageMask = 0;
            for p in 0..pages.min(PageMask::BITS as u8) {
                if (m >> p) & 1 == 1 {
                    let next_page = (p + 1..=pages)
                        .find(|q| page_pos.get(*q as usize).copied().flatten().is_some())
                        .unwrap_or(pages);
                    // (a position of several pages: all of them or none)
                    if let Some(q) = (p + 1..next_page).find(|q| (m >> q) & 1 == 0) {
                        return Err(format!(
                            "page {p} starts a position of pages {p}-{}, and page {q} is not named with it",
                            next_page - 1
                        ));
                    }
                    let next = page_pos
                        .get(next_page as usize)
                        .copied()
                        .flatten()
                        .unwrap_or(0);
                    let Ok(first) = pos_of(p) else {
                        // (inside a position whose first page is named:
                        // covered there)
                        if (0..p)
                            .rev()
                            .find(|q| page_pos.get(*q as usize).copied().flatten().is_some())
                            .is_some_and(|s| (m >> s) & 1 == 1)
                        {
                            continue;
                        }
                        return Err(pos_of(p).unwrap_err());
                    };
                    for q in first..next {
                        out |= 1 << q;
                    }
                }
            }
            Ok(out)
        };
        if uneven {
            // (the masks' pages beyond `pages` are validate's to refuse)
            for (m, what) in [(&raw.cached, "cached"), (&raw.dirty, "dirty")] {
                if let Some(p) = m.iter().find(|p| **p >= pages) {
                    return Err(format!("{what}: page {p} beyond pages = {pages}"));
                }
            }
        } else if pages == 0 || pages as usize * u as usize > super::MAX_PAGES {
            return Err(if u == 1 {
                format!("pages must be 1..={}, got {pages}", super::MAX_PAGES)
            } else {
                format!(
                    "pages x units_per_page must be 1..={} (model units), got {pages} x {u}",
                    super::MAX_PAGES
                )
            });
        }
        let init_size = match &raw.init_size {
            toml::Value::Integer(i) if (0..=pages as i64).contains(i) => {
                pos_of(*i as u8).map_err(|e| format!("init_size: {e}"))?
            }
            toml::Value::String(w) => unit_number(w, u).map_err(|e| format!("init_size: {e}"))?,
            v => {
                return Err(format!(
                    "init_size: pages (0..={pages}) or units (\"5u\"), got {v}"
                ))
            }
        };
        let config = Config {
            kernel,
            tree: (tree != crate::fuse::step::Tree::of(kernel)).then_some(tree),
            variant,
            pages: if uneven {
                unit_bytes_raw.len() as u8
            } else {
                pages * u
            },
            init_size,
            cached: if uneven {
                pos_mask(mask(&raw.cached, "cached")?).map_err(|e| format!("cached: {e}"))?
            } else {
                unit_mask(mask(&raw.cached, "cached")?, u, "cached")?
            },
            dirty: if uneven {
                pos_mask(mask(&raw.dirty, "dirty")?).map_err(|e| format!("dirty: {e}"))?
            } else {
                unit_mask(mask(&raw.dirty, "dirty")?, u, "dirty")?
            },
            daemon_threads: raw.daemon_threads,
            direct_io_allow_mmap: raw.direct_io_allow_mmap,
            parallel_dio: raw.parallel_dio,
            atomic_o_trunc: raw.atomic_o_trunc,
            folio_blocks: raw.folio_blocks,
            writeback_cache: raw.writeback_cache,
            auto_inval_data: raw.auto_inval_data,
            attr_valid: raw.attr_valid,
            max_pages: raw.max_pages.unwrap_or(raw.pages),
            read_max_pages: 0,
            max_kpages: 0,
            read_max_kpages: 0,
            // (pages; subpage.rs turns them into units)
            tasks,
            thread,
            whole: None,
            versions: Vec::new(),
            max_background: raw.max_background,
            congestion_threshold: raw.congestion_threshold,
            async_dio: raw.async_dio,
            uring_queues: raw.uring_queues,
            real_pages: one_each(),
            memcg_v1: raw.memcg_v1,
            reclaim_env: super::ReclaimEnv {
                memcg_v2: raw.memcg_v2,
                mglru: raw.mglru,
                charged_elsewhere: raw.charged_elsewhere,
            },
            folio_pages: raw.folio_pages,
            blocks_per_page: raw.blocks_per_page,
            max_read: raw.max_read,
            max_write: raw.max_write,
            errors: parse_errors(&raw.errors)?,
            short: parse_short(&raw.short)?,
            sub: SubPage {
                units_per_page: u,
                page_size: raw.page_size,
                max_read_bytes: raw.max_read_bytes,
                max_write_bytes: raw.max_write_bytes,
                unit_bytes,
            },
            drop: raw.drop,
        };
        config.validate()?;
        Ok(config)
    }
}
