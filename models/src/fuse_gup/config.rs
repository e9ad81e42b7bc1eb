//! Configuration of the direct-I/O extraction model: which version of
//! `fuse_get_user_pages` runs (kernel state and switches), the folios a
//! user buffer is built from, the buffers to try, and the connection's
//! limits. Everything here is data; the steps never branch on a check's
//! name.

use serde::{Deserialize, Serialize};

/// Most folios a buffer is built from (named A, B, C, D).
pub const MAX_FOLIOS: usize = 4;
/// Largest folio order: 4 pages, enough for Willy's "A0 A1 B0 A3".
pub const MAX_ORDER: u8 = 2;
/// Most virtual pages in a user buffer.
pub const MAX_VPAGES: usize = 4;
/// Most byte units a page is cut into (a unit is PAGE_SIZE / units).
pub const MAX_UNITS: u8 = 4;
/// Most descriptors a run can hold: every descriptor carries at least one
/// unit of the buffer, so a buffer of MAX_VPAGES × MAX_UNITS units bounds
/// both a request and everything sent.
pub const MAX_DESCS: usize = MAX_VPAGES * MAX_UNITS as usize;
/// Largest fc->max_pages the model takes (the pages array of a request).
pub const MAX_MAX_PAGES: u8 = 8;

/// Kernel states of fs/fuse/file.c's fuse_get_user_pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Kernel {
    /// 6.13-rc1 .. 6.13-rc6: 3b97c3652d91 ("fuse: convert direct io to use
    /// folios"). One descriptor per extracted page, `offset = start` for
    /// the first and 0 for the others (zeroed by kzalloc in fuse_io_alloc),
    /// `length = PAGE_SIZE - offset` (fuse_folio_descs_length_init), the
    /// last trimmed to the end of the data; the folio is page_folio(page),
    /// so inside a large folio the offset names the folio's first page.
    R1,
    /// 6.13-rc7 .. 2026 (6.18.44 here): R1 plus 7a4f54187373 ("fuse: fix
    /// direct io folio offset and length calculation"): `offset = start +
    /// folio_page_idx(folio, page) * PAGE_SIZE`, `length = min(ret,
    /// PAGE_SIZE - start)`, one descriptor per page.
    M,
}

impl Kernel {
    /// The kernel state is the fix: a configuration that turns
    /// fix_folio_offset off in M is R1, and on in R1 is M.
    pub fn of(v: &Variant) -> Kernel {
        if v.fix_folio_offset {
            Kernel::M
        } else {
            Kernel::R1
        }
    }

    pub fn parse(s: &str) -> Option<Kernel> {
        match s {
            "R1" | "6.13-rc1" => Some(Kernel::R1),
            "M" | "6.13" | "6.18" => Some(Kernel::M),
            _ => None,
        }
    }
}

/// Behaviour switches. A kernel state sets the base; a check adds a
/// review proposal or a mutant on top.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Variant {
    /// 7a4f54187373: the offset inside the folio and the per-page length
    /// (state M). Off: 6.13-rc1's page-relative offsets (state R1).
    pub fix_folio_offset: bool,

    // ---- review proposals: each replaces the loop that builds descriptors
    /// Seed 003, v2 patch 10 (25 Nov 2024, on top of R1): one descriptor
    /// from the page to the end of its folio (or of the data), then skip
    /// `DIV_ROUND_UP(start + len, PAGE_SIZE)` extracted pages, assuming
    /// they are that folio's next pages.
    pub p_v2: bool,
    /// v3–v6 patch 10 "fuse: optimize direct io large folios processing"
    /// (Dec 2024 – May 2025, on top of M, not merged): per extracted page;
    /// when the page's folio is the previous descriptor's folio and the
    /// page differs from the previous page, the previous descriptor's
    /// length grows by the page's bytes, otherwise a new descriptor.
    pub p_collate: bool,
    /// The collate loop with David Hildenbrand's test (review of v5, Jul
    /// 2025: num_pages_contiguous(), "making sure that we don't exceed the
    /// current folio"): the previous descriptor grows only when the page is
    /// the next page of the same folio. A suggestion; no code was posted.
    pub p_collate_contig: bool,

    // ---- mutants of state M: each breaks one thing a property guards
    /// The per-page loop keeps `start` for every page (no `start = 0`):
    /// kills gup-cover.
    pub mut_no_start_reset: bool,
    /// `len = min(ret, PAGE_SIZE)`, ignoring `start`: a descriptor runs
    /// past its page, and past its folio at a folio's last page: kills
    /// gup-in-folio.
    pub mut_len_ignores_start: bool,
    /// iov_iter_extract_pages is asked for `max_pages` pages instead of
    /// `max_pages - nr_pages`: a second extraction overruns the request's
    /// arrays: kills gup-slots.
    pub mut_extract_ignores_nr_pages: bool,
    /// fuse_release_user_pages unpins each distinct folio once, not once
    /// per descriptor: kills gup-pins.
    pub mut_unpin_per_folio: bool,
}

/// Every switch by the name a catalogue entry uses.
pub const FLAGS: &[&str] = &[
    "fix_folio_offset",
    "p_v2",
    "p_collate",
    "p_collate_contig",
    "mut_no_start_reset",
    "mut_len_ignores_start",
    "mut_extract_ignores_nr_pages",
    "mut_unpin_per_folio",
];

impl Variant {
    pub fn base(k: Kernel) -> Variant {
        Variant {
            fix_folio_offset: k == Kernel::M,
            ..Variant::default()
        }
    }

    fn flag_mut(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "fix_folio_offset" => &mut self.fix_folio_offset,
            "p_v2" => &mut self.p_v2,
            "p_collate" => &mut self.p_collate,
            "p_collate_contig" => &mut self.p_collate_contig,
            "mut_no_start_reset" => &mut self.mut_no_start_reset,
            "mut_len_ignores_start" => &mut self.mut_len_ignores_start,
            "mut_extract_ignores_nr_pages" => &mut self.mut_extract_ignores_nr_pages,
            "mut_unpin_per_folio" => &mut self.mut_unpin_per_folio,
            _ => return None,
        })
    }

    /// Turns `name` on, or off when written `!name`.
    pub fn set(&mut self, flag: &str) -> Result<(), String> {
        let (name, on) = match flag.strip_prefix('!') {
            Some(n) => (n, false),
            None => (flag, true),
        };
        let f = self
            .flag_mut(name)
            .ok_or_else(|| format!("unknown switch '{name}' (known: {})", FLAGS.join(", ")))?;
        *f = on;
        Ok(())
    }

    pub fn flags_on(&self) -> Vec<&'static str> {
        let mut v = self.clone();
        FLAGS
            .iter()
            .copied()
            .filter(|f| *v.flag_mut(f).expect("known flag"))
            .collect()
    }

    /// Which loop builds the descriptors.
    pub fn loop_kind(&self) -> LoopKind {
        if self.p_v2 {
            LoopKind::V2
        } else if self.p_collate || self.p_collate_contig {
            LoopKind::Collate
        } else if self.fix_folio_offset {
            LoopKind::PerPage
        } else {
            LoopKind::Rc1
        }
    }
}

/// The descriptor-building loop of a configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    Rc1,
    PerPage,
    V2,
    Collate,
}

/// A physical page: page `idx` of folio `folio`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PageRef {
    pub folio: u8,
    pub idx: u8,
}

pub fn folio_name(f: u8) -> char {
    (b'A' + f) as char
}

impl std::fmt::Display for PageRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", folio_name(self.folio), self.idx)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub kernel: Kernel,
    pub variant: Variant,
    /// Order of each folio the buffers are built from (A, B, ...).
    pub folios: Vec<u8>,
    /// Buffers of 1..=max_vpages virtual pages are enumerated.
    pub max_vpages: u8,
    /// Byte units per page: 1 = page-aligned buffers only; 2 = buffers may
    /// start or end half-way into a page; ...
    pub units: u8,
    /// fc->max_pages.
    pub max_pages: u8,
    /// fc->max_write, in units.
    pub max_write: u8,
    /// pin_user_pages_fast may pin fewer pages than asked (its contract);
    /// the extraction then loops.
    pub short_pins: bool,
    /// Fixed buffers (e.g. `A0 A1 B0 A3`) instead of every buffer of
    /// 1..=max_vpages pages.
    pub buffers: Vec<Buffer>,
}

/// A fixed buffer: its pages, where the data starts in the first (units)
/// and how long it is (units; `None`: to the end of the last page).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Buffer {
    pub pages: Vec<PageRef>,
    pub start: u8,
    pub len: Option<u8>,
}

impl Buffer {
    /// The data length in units.
    pub fn data_len(&self, units: u8) -> u8 {
        self.len
            .unwrap_or((self.pages.len() as u8 * units).saturating_sub(self.start))
    }
}

impl Config {
    /// Pages of folio `f`.
    pub fn folio_pages(&self, f: u8) -> u8 {
        1 << self.folios[f as usize]
    }

    /// Every physical page, folio by folio.
    pub fn all_pages(&self) -> Vec<PageRef> {
        let mut v = vec![];
        for f in 0..self.folios.len() as u8 {
            for idx in 0..self.folio_pages(f) {
                v.push(PageRef { folio: f, idx });
            }
        }
        v
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.folios.is_empty() || self.folios.len() > MAX_FOLIOS {
            return Err(format!("folios: 1..={MAX_FOLIOS} folio orders"));
        }
        if let Some(o) = self.folios.iter().find(|&&o| o > MAX_ORDER) {
            return Err(format!("folios: order {o} is above {MAX_ORDER}"));
        }
        if self.max_vpages == 0 || self.max_vpages as usize > MAX_VPAGES {
            return Err(format!("max_vpages must be 1..={MAX_VPAGES}"));
        }
        if ![1, 2, 4].contains(&self.units) {
            return Err("units must be 1, 2 or 4 (a page cut into 4K, 2K or 1K units)".into());
        }
        if self.max_pages == 0 || self.max_pages > MAX_MAX_PAGES {
            return Err(format!("max_pages must be 1..={MAX_MAX_PAGES}"));
        }
        if self.max_write == 0 {
            return Err("max_write must be at least 1 unit".into());
        }
        let v = &self.variant;
        if [v.p_v2, v.p_collate, v.p_collate_contig]
            .iter()
            .filter(|&&x| x)
            .count()
            > 1
        {
            return Err(
                "p_v2, p_collate and p_collate_contig replace the same loop: turn on one".into(),
            );
        }
        if self.kernel != Kernel::of(v) {
            return Err(format!(
                "kernel {:?} does not match fix_folio_offset = {}",
                self.kernel, v.fix_folio_offset
            ));
        }
        if (v.mut_no_start_reset || v.mut_len_ignores_start) && v.loop_kind() != LoopKind::PerPage {
            return Err(
                "mut_no_start_reset and mut_len_ignores_start are mutants of state M's per-page loop"
                    .into(),
            );
        }
        for b in &self.buffers {
            if b.pages.is_empty() || b.pages.len() > self.max_vpages as usize {
                return Err(format!("a buffer has 1..={} pages", self.max_vpages));
            }
            for p in &b.pages {
                if p.folio as usize >= self.folios.len() || p.idx >= self.folio_pages(p.folio) {
                    return Err(format!("buffer page {p} is not a page of the folios"));
                }
            }
            let span = b.pages.len() as u8 * self.units;
            let len = b.data_len(self.units);
            if b.start >= self.units
                || len == 0
                || b.start + len > span
                || span - b.start - len >= self.units
            {
                return Err(format!(
                    "a buffer's data must start in its first page and end in its last ({} units a page)",
                    self.units
                ));
            }
        }
        Ok(())
    }

    /// Builds a configuration from the model's keys of a catalogue entry.
    pub fn from_table(table: &toml::Table) -> Result<Config, String> {
        let raw: ConfigRaw = crate::common::from_table(table)?;
        let kernel = Kernel::parse(&raw.kernel)
            .ok_or_else(|| format!("unknown kernel state '{}' (known: R1, M)", raw.kernel))?;
        let mut variant = Variant::base(kernel);
        for f in crate::common::variant_flags(&raw.variant)? {
            variant.set(f)?;
        }
        let kernel = Kernel::of(&variant);
        let folios = raw.folios;
        let mut buffers = vec![];
        for b in &raw.buffers {
            buffers.push(parse_buffer(b, &folios)?);
        }
        let max_vpages = raw.max_vpages.unwrap_or(MAX_VPAGES as u8);
        let units = raw.units.unwrap_or(1);
        let config = Config {
            kernel,
            variant,
            folios,
            max_vpages,
            units,
            max_pages: raw.max_pages.unwrap_or(max_vpages),
            max_write: raw
                .max_write
                .unwrap_or(max_vpages.saturating_mul(units).max(1)),
            short_pins: raw.short_pins,
            buffers,
        };
        config.validate()?;
        Ok(config)
    }
}

/// `A0 A1 B0 A3`: folio letter, page index; optionally `@S+L`: the data
/// starts S units into the first page and is L units long.
pub fn parse_buffer(s: &str, folios: &[u8]) -> Result<Buffer, String> {
    let (pages, offsets) = match s.split_once('@') {
        Some((p, o)) => (p, Some(o.trim())),
        None => (s, None),
    };
    let (start, len) = match offsets {
        None => (0, None),
        Some(o) => {
            let (a, b) = o
                .split_once('+')
                .ok_or_else(|| format!("buffer '{s}': offsets are written @START+LEN"))?;
            let num = |x: &str| {
                x.trim()
                    .parse::<u8>()
                    .map_err(|_| format!("buffer '{s}': '{x}' is not a number of units"))
            };
            (num(a)?, Some(num(b)?))
        }
    };
    let mut v = vec![];
    for w in pages.split_whitespace() {
        let mut cs = w.chars();
        let f = cs.next().unwrap_or(' ');
        let idx: Option<u8> = cs.as_str().parse().ok();
        match (f, idx) {
            ('A'..='D', Some(idx)) => {
                let folio = f as u8 - b'A';
                if folio as usize >= folios.len() || idx >= 1 << folios[folio as usize] {
                    return Err(format!("buffer '{s}': {w} is not a page of the folios"));
                }
                v.push(PageRef { folio, idx });
            }
            _ => return Err(format!("buffer '{s}': '{w}' is not a page like A0")),
        }
    }
    if v.is_empty() {
        return Err("an empty buffer".into());
    }
    Ok(Buffer {
        pages: v,
        start,
        len,
    })
}

/// The model's keys of a catalogue entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigRaw {
    kernel: String,
    #[serde(default)]
    variant: Vec<String>,
    folios: Vec<u8>,
    max_vpages: Option<u8>,
    units: Option<u8>,
    max_pages: Option<u8>,
    max_write: Option<u8>,
    #[serde(default)]
    short_pins: bool,
    #[serde(default)]
    buffers: Vec<String>,
}
