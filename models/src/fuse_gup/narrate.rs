//! The extraction in kernel words: what a step did, why a property fails
//! at the end of a path, and the compact state rendering of trace files.

use super::config::{folio_name, LoopKind, PageRef};
use super::model::{Action, GupModel};
use super::state::{Desc, Layout, Pc, State};

/// Bytes of `units` units (a unit is PAGE_SIZE / cfg.units).
pub fn bytes(m: &GupModel, units: u8) -> String {
    let b = units as u32 * (4096 / m.u() as u32);
    if b == 0 {
        "0".into()
    } else if b.is_multiple_of(1024) {
        format!("{}K", b / 1024)
    } else {
        format!("{b}")
    }
}

/// `A@4K+2K`: folio, offset in the folio, length.
pub fn desc(m: &GupModel, d: &Desc) -> String {
    format!(
        "{}@{}+{}",
        folio_name(d.folio),
        bytes(m, d.off),
        bytes(m, d.len)
    )
}

fn descs(m: &GupModel, ds: &[Desc]) -> String {
    if ds.is_empty() {
        return "-".into();
    }
    ds.iter().map(|d| desc(m, d)).collect::<Vec<_>>().join(" ")
}

fn pages(ps: &[PageRef]) -> String {
    ps.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `A0 A1 B0 A3` (+ the offsets when the data does not fill the pages).
pub fn layout(m: &GupModel, l: &Layout) -> String {
    let mut s = pages(l.vpages());
    let u = m.u();
    let tail = l.n * u - l.start - l.len;
    if l.start > 0 || tail > 0 {
        s += &format!(
            " (from {} into the first page, {} long)",
            bytes(m, l.start),
            bytes(m, l.len)
        );
    }
    s
}

pub fn kernel_fn(m: &GupModel, a: &Action) -> &'static str {
    match a {
        Action::IoAlloc => "fuse_direct_io: iov_iter_npages, fuse_io_alloc",
        Action::Extract { .. } => "fuse_get_user_pages: iov_iter_extract_pages",
        Action::Desc => match m.kind {
            LoopKind::Rc1 => "fuse_get_user_pages: page_folio, page-relative offset (6.13-rc1)",
            LoopKind::PerPage => {
                "fuse_get_user_pages: page_folio, folio_page_idx (one descriptor per page)"
            }
            LoopKind::V2 => {
                "fuse_get_user_pages: descriptor to the folio's end, skip its pages (v2)"
            }
            LoopKind::Collate if m.cfg.variant.p_collate_contig => {
                "fuse_get_user_pages: collate a folio's next page (David's test)"
            }
            LoopKind::Collate => "fuse_get_user_pages: collate pages of the previous folio (v3-v6)",
        },
        Action::Trim => "fuse_get_user_pages: trim the last descriptor (6.13-rc1)",
        Action::Send => "fuse_send_write: fuse_copy_folios",
        Action::Release => "fuse_release_user_pages: unpin_folio",
    }
}

pub fn describe(m: &GupModel, b: &State, a: &State, act: &Action) -> String {
    match act {
        Action::IoAlloc => format!(
            "request {}: {} of the buffer left; iov_iter_npages gives {} slot(s) (fc->max_pages {}), nbytes = {} (fc->max_write {})",
            a.reqs + 1,
            bytes(m, b.layout.len - b.pos),
            a.slots,
            m.cfg.max_pages,
            bytes(m, a.nbytes_max),
            bytes(m, m.cfg.max_write)
        ),
        Action::Extract { pages: k } => {
            let want = m.extract_want(b);
            let short = if *k < want {
                format!(" (pin_user_pages_fast pinned {k} of {want})")
            } else {
                String::new()
            };
            format!(
                "pins {}{}: start {}, {} returned",
                pages(&a.batch),
                short,
                bytes(m, a.bstart),
                bytes(m, a.bret)
            )
        }
        Action::Desc => {
            let page = b.batch[b.bi as usize];
            if a.descs.len() > b.descs.len() {
                let d = a.descs[a.descs.len() - 1];
                let skip = if m.kind == LoopKind::V2 && a.bi > b.bi + 1 {
                    format!(
                        "; skips pages {} as if they were {}'s next pages",
                        pages(&b.batch[b.bi as usize + 1..(a.bi as usize).min(b.batch.len())]),
                        folio_name(page.folio)
                    )
                } else {
                    String::new()
                };
                format!("descriptor {} for page {page}{skip}", desc(m, &d))
            } else {
                let d = a.descs[a.descs.len() - 1];
                let why = if m.cfg.variant.p_collate_contig {
                    "is the next page of the same folio"
                } else {
                    "is the same folio's and not the previous page"
                };
                format!(
                    "page {page} {why}: the last descriptor grows to {}",
                    desc(m, &d)
                )
            }
        }
        Action::Trim => format!(
            "the last descriptor becomes {}",
            desc(m, &a.descs[a.descs.len() - 1])
        ),
        Action::Send => format!(
            "WRITE {} of {}: descriptors {}; the payload is {}",
            a.reqs,
            bytes(m, b.nbytes),
            descs(m, &b.descs),
            descs(m, &a.wire[b.wire.len()..])
        ),
        Action::Release => {
            let v: Vec<String> = (0..m.cfg.folios.len())
                .filter(|&f| a.pinned[f] > 0)
                .map(|f| {
                    format!(
                        "{} {}/{}",
                        folio_name(f as u8),
                        a.unpinned[f],
                        a.pinned[f]
                    )
                })
                .collect();
            let end = if a.pc == Pc::Done {
                "; write(2) returns"
            } else {
                ""
            };
            format!(
                "unpins {} descriptor folio(s); pins dropped/taken: {}{end}",
                b.descs.len(),
                v.join(", ")
            )
        }
    }
}

fn unit_name(m: &GupModel, x: Option<(PageRef, u8)>) -> String {
    match x {
        Some((p, _)) if m.u() == 1 => p.to_string(),
        Some((p, k)) => format!("{p}[{}]", bytes(m, k)),
        None => "memory past the folio".into(),
    }
}

pub fn why(m: &GupModel, states: &[State], _actions: &[Action], prop: &str) -> Vec<String> {
    let Some(s) = states.last() else {
        return vec![];
    };
    let mut v = vec![format!("Buffer: {}.", layout(m, &s.layout))];
    match prop {
        "gup-cover" => {
            if let Some(k) = m.first_wrong_unit(s) {
                let w = m.wire_units(s);
                let sent = unit_name(m, w[k]);
                let want = if k < s.layout.len as usize {
                    unit_name(m, Some(m.buffer_unit(&s.layout, k as u8)))
                } else {
                    "nothing (past the buffer)".into()
                };
                v.push(format!(
                    "Byte {} of the data went out from {sent}; the buffer has {want} there.",
                    bytes(m, k as u8)
                ));
            } else {
                v.push(format!(
                    "write(2) returned after sending {} of {}.",
                    bytes(m, m.wire_units(s).len() as u8),
                    bytes(m, s.layout.len)
                ));
            }
            v.push(format!("Payload: {}.", descs(m, &s.wire)));
        }
        "gup-in-folio" => {
            for d in s.descs.iter() {
                if d.off + d.len > m.folio_units(d.folio) {
                    v.push(format!(
                        "Descriptor {} ends at {}, past folio {}'s {}.",
                        desc(m, d),
                        bytes(m, d.off + d.len),
                        folio_name(d.folio),
                        bytes(m, m.folio_units(d.folio))
                    ));
                }
            }
        }
        "gup-slots" => v.push(format!(
            "Request {} holds {} descriptors in {} slot(s) (fc->max_pages {}).",
            s.reqs + 1,
            s.descs.len(),
            s.slots,
            m.cfg.max_pages
        )),
        "gup-pins" => {
            for f in 0..m.cfg.folios.len() {
                if s.pinned[f] != s.unpinned[f] {
                    v.push(format!(
                        "Folio {}: {} pin(s) taken by iov_iter_extract_pages, {} dropped by fuse_release_user_pages.",
                        folio_name(f as u8),
                        s.pinned[f],
                        s.unpinned[f]
                    ));
                }
            }
        }
        _ => {}
    }
    v
}

pub fn render(m: &GupModel, s: &State) -> String {
    let pins: Vec<String> = (0..m.cfg.folios.len())
        .map(|f| format!("{}{}/{}", folio_name(f as u8), s.unpinned[f], s.pinned[f]))
        .collect();
    format!(
        "buffer {}\npc {:?}  pos {}  requests {}  slots {}  nbytes {}/{}  nr_pages {}\nbatch {}  descs {}\npayload {}\nunpinned/pinned {}",
        layout(m, &s.layout),
        s.pc,
        bytes(m, s.pos),
        s.reqs,
        s.slots,
        bytes(m, s.nbytes),
        bytes(m, s.nbytes_max),
        s.nr_pages,
        if s.batch.is_empty() { "-".into() } else { pages(&s.batch) },
        descs(m, &s.descs),
        descs(m, &s.wire),
        pins.join(" ")
    )
}
