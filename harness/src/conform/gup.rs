//! Conformance of the direct-I/O extraction scenarios (dio_folios.rs) to
//! the fuse-gup model: the buffer the scenario built (its `gup-buffer`
//! mark, read from pagemap/kpageflags) becomes a fuse-gup configuration of
//! kernel state M; the model's one path for that buffer must send the
//! WRITEs the kernel sent: same offsets and sizes, and a payload whose
//! 4 KiB chunks start with the bytes the trace's `page_tags` show.
//!
//! Abstractions (docs/model-fuse-gup.md §5): the tmpfs folio (512 pages)
//! is folio A of order 2, as only its pages 0-3 are in a buffer and M's
//! descriptors depend on a page's index, not on the folio's size; other
//! pages are order-0 folios B, C...; one unit is 1 KiB; fc->max_pages is
//! the model's largest (8), which no 4-page buffer reaches, as the
//! kernel's does not here (an 8 KiB WRITE from 1 KiB spans 3 pages).
use wbspec_models::fuse_gup::config::{Buffer, Config, Kernel, PageRef, Variant, MAX_MAX_PAGES};
use wbspec_models::fuse_gup::model::{Action, GupModel};
use wbspec_models::fuse_gup::properties::{cover, in_folio, pins, slots};

use crate::trace::Event;

const UNIT: u64 = 1024;

/// A `Conform` line's model word, whether it is good, and the detail.
type Outcome = (String, bool, Option<String>);

/// The scenario's buffer: page names, data start and length in bytes.
struct Mark {
    pages: Vec<String>,
    start: u64,
    len: u64,
}

fn parse_mark(text: &str) -> Option<Result<Mark, String>> {
    let rest = text.strip_prefix("gup-buffer ")?;
    let mut m = Mark {
        pages: vec![],
        start: 0,
        len: 0,
    };
    for kv in rest.split_whitespace() {
        let (k, v) = kv.split_once('=')?;
        match k {
            "pages" => m.pages = v.split(',').map(str::to_string).collect(),
            "start" => m.start = v.parse().ok()?,
            "len" => m.len = v.parse().ok()?,
            _ => {}
        }
    }
    Some(Ok(m))
}

/// The letter the scenario's fill puts at byte unit `k` (1 KiB) of a page
/// (largefolio.rs: file page i is `A+i` then `a+i`; a COW page `Z` then `z`).
fn letter(p: PageRef, k: u8) -> char {
    let upper = k < 2;
    let base = if p.folio == 0 {
        b'A' + p.idx % 26
    } else {
        b'Z'
    };
    (if upper {
        base
    } else {
        base.to_ascii_lowercase()
    }) as char
}

/// `None` when the trace is not one of the extraction scenarios.
pub fn conform(events: &[Event]) -> Option<Result<Outcome, String>> {
    let mark = events
        .iter()
        .filter(|e| e.ev == "mark")
        .find_map(|e| e.text.as_deref().and_then(parse_mark))?;
    Some(mark.and_then(|m| check(events, &m)))
}

fn not_modelled(why: String) -> Result<Outcome, String> {
    Ok((format!("not-modelled ({why})"), true, None))
}

fn check(events: &[Event], mark: &Mark) -> Result<Outcome, String> {
    let max_write = events
        .first()
        .and_then(|h| h.config.as_ref())
        .and_then(|c| c["max_write"].as_u64())
        .ok_or("no max_write in the trace header")?;
    if !(mark.start.is_multiple_of(UNIT)
        && mark.len.is_multiple_of(UNIT)
        && max_write.is_multiple_of(UNIT))
    {
        return not_modelled("offsets or max_write not a multiple of 1 KiB".into());
    }
    // folio A: the tmpfs folio; B, C...: one order-0 folio each
    let mut others: Vec<String> = vec![];
    let mut pages = vec![];
    for name in &mark.pages {
        let (f, idx) = name.split_at(1);
        let idx: u8 = idx.parse().map_err(|_| format!("page name {name}"))?;
        if f == "A" {
            if idx > 3 {
                return not_modelled(format!("page {name}: the model's folios have 4 pages"));
            }
            pages.push(PageRef { folio: 0, idx });
        } else {
            let k = others.iter().position(|o| o == f).unwrap_or_else(|| {
                others.push(f.to_string());
                others.len() - 1
            });
            pages.push(PageRef {
                folio: 1 + k as u8,
                idx: 0,
            });
        }
    }
    let mut folios = vec![2u8];
    folios.extend(others.iter().map(|_| 0u8));
    let cfg = Config {
        kernel: Kernel::M,
        variant: Variant::base(Kernel::M),
        folios,
        max_vpages: pages.len() as u8,
        units: 4,
        max_pages: MAX_MAX_PAGES,
        max_write: (max_write / UNIT).min(u8::MAX as u64) as u8,
        short_pins: false,
        buffers: vec![Buffer {
            pages,
            start: (mark.start / UNIT) as u8,
            len: Some((mark.len / UNIT) as u8),
        }],
    };
    let (model_writes, props_ok) = writes_of(&cfg)?;
    // what the other versions of fuse_get_user_pages would have sent
    let mut others_sent = vec![];
    for (name, kernel, flag) in [
        ("6.13-rc1", Kernel::R1, None),
        ("v2", Kernel::R1, Some("p_v2")),
        ("collate", Kernel::M, Some("p_collate")),
    ] {
        let mut c = cfg.clone();
        c.kernel = kernel;
        c.variant = Variant::base(kernel);
        if let Some(f) = flag {
            c.variant.set(f)?;
        }
        let (w, ok) = writes_of(&c)?;
        let tags: Vec<&str> = w.iter().map(|x| x.2.as_str()).collect();
        others_sent.push(format!(
            "{name} {}{}",
            tags.join(" "),
            if ok { "" } else { " (a property fails)" }
        ));
    }
    let kernel_writes: Vec<(u64, u64, String)> = events
        .iter()
        .filter(|e| e.is_req("WRITE") && !e.is_cache_write())
        .map(|e| {
            (
                e.offset.unwrap_or(0),
                e.size.unwrap_or(0),
                e.page_tags.clone().unwrap_or_default(),
            )
        })
        .collect();
    let show = |v: &[(u64, u64, String)]| {
        v.iter()
            .map(|(o, n, t)| format!("{o}+{n} {t}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let detail = format!(
        "fuse-gup M, buffer {} from {} for {} bytes, max_write {max_write}\n  model WRITEs:  {}\n  kernel WRITEs: {}\n  model properties on the path: {}\n  other versions would send: {}",
        mark.pages.join(" "),
        mark.start,
        mark.len,
        show(&model_writes),
        show(&kernel_writes),
        if props_ok { "all hold" } else { "VIOLATED" },
        others_sent.join("; ")
    );
    if model_writes == kernel_writes && props_ok {
        Ok(("conforms".into(), true, Some(format!("conforms\n{detail}"))))
    } else {
        Ok((
            "VIOLATION (the model's WRITEs differ from the kernel's)".into(),
            false,
            Some(format!("violation\n{detail}")),
        ))
    }
}

type Write = (u64, u64, String);

/// The WRITEs of the model's one path for `cfg`'s buffer: (offset, size,
/// page_tags), and whether every always-property held on the way.
fn writes_of(cfg: &Config) -> Result<(Vec<Write>, bool), String> {
    let m = GupModel::new(cfg.clone())?;
    let mut s = m.inits[0];
    let mut out = vec![];
    let mut ok = true;
    loop {
        ok &= cover(&m, &s) && in_folio(&m, &s) && slots(&m, &s) && pins(&m, &s);
        let mut acts = vec![];
        m.enabled(&s, &mut acts);
        let Some(&a) = acts.first() else { break };
        let before = s;
        s = m.step(&s, a).ok_or("model step failed")?;
        if a == Action::Send {
            let units = m.wire_units(&s)[m.wire_units(&before).len()..].to_vec();
            let tags: String = units
                .chunks(4)
                .map(|c| c[0].map_or('?', |(p, k)| letter(p, k)))
                .collect();
            let off = (before.pos - before.nbytes) as u64 * UNIT;
            out.push((off, before.nbytes as u64 * UNIT, tags));
        }
    }
    Ok((out, ok))
}
