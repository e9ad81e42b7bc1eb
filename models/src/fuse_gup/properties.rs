//! Properties of the extraction: four `always` properties (the reviewers'
//! concerns and the memory-safety bounds) and the `sometimes` witnesses
//! that show each layout feature is reached.

use super::model::GupModel;
use super::state::{Pc, State};
use crate::spec::PropertyDef;
use stateright::Expectation::{Always, Sometimes};

pub const PROPERTIES: &[PropertyDef] = &[
    PropertyDef {
        name: "gup-cover",
        expectation: Always,
        stricter: None,
        description: "the WRITEs carry exactly the user buffer's bytes, in order (Willy's A0 A1 B0 A3; David's pages[i] != pages[i-1])",
    },
    PropertyDef {
        name: "gup-in-folio",
        expectation: Always,
        stricter: None,
        description: "no folio descriptor reaches past its folio's end",
    },
    PropertyDef {
        name: "gup-slots",
        expectation: Always,
        stricter: None,
        description: "a request holds no more descriptors than fuse_io_alloc allocated, and that is within fc->max_pages",
    },
    PropertyDef {
        name: "gup-pins",
        expectation: Always,
        stricter: None,
        description: "fuse_release_user_pages drops every pin iov_iter_extract_pages took, and no more",
    },
    PropertyDef {
        name: "w-done",
        expectation: Sometimes,
        stricter: None,
        description: "write(2) returned",
    },
    PropertyDef {
        name: "w-same-page",
        expectation: Sometimes,
        stricter: None,
        description: "one extraction returned the same page twice (a page mapped at two addresses)",
    },
    PropertyDef {
        name: "w-out-of-order",
        expectation: Sometimes,
        stricter: None,
        description: "one extraction returned two pages of a folio side by side that are not consecutive in it (a gap or a reversal)",
    },
    PropertyDef {
        name: "w-cow",
        expectation: Sometimes,
        stricter: None,
        description: "one extraction returned a folio's page, another folio's page, then the first folio again (Willy's COW-replaced page)",
    },
    PropertyDef {
        name: "w-mid-folio",
        expectation: Sometimes,
        stricter: None,
        description: "a descriptor starts past the first page of its folio",
    },
    PropertyDef {
        name: "w-multi-page-desc",
        expectation: Sometimes,
        stricter: None,
        description: "a descriptor is longer than a page",
    },
    PropertyDef {
        name: "w-partial",
        expectation: Sometimes,
        stricter: None,
        description: "a buffer that starts or ends inside a page was written",
    },
    PropertyDef {
        name: "w-second-extract",
        expectation: Sometimes,
        stricter: None,
        description: "a request extracted pages twice (pin_user_pages_fast pinned fewer than asked)",
    },
    PropertyDef {
        name: "w-second-request",
        expectation: Sometimes,
        stricter: None,
        description: "the write needed more than one WRITE (fc->max_pages or fc->max_write)",
    },
];

type Cond = fn(&GupModel, &State) -> bool;

pub const CONDITIONS: &[Cond] = &[
    cover,
    in_folio,
    slots,
    pins,
    |_, s| s.pc == Pc::Done,
    same_page,
    out_of_order,
    cow,
    |m, s| s.descs.iter().any(|d| d.off >= m.u()),
    |m, s| s.descs.iter().any(|d| d.len > m.u()),
    |m, s| s.pc == Pc::Done && (s.layout.start > 0 || (s.layout.start + s.layout.len) % m.u() != 0),
    |_, s| s.pc == Pc::Batch && s.nr_pages > 0,
    |_, s| s.reqs >= 2,
];

/// Every unit sent is the buffer's next unit; once write(2) returned, all
/// of the buffer was sent.
pub fn cover(m: &GupModel, s: &State) -> bool {
    if m.first_wrong_unit(s).is_some() {
        return false;
    }
    s.pc != Pc::Done || m.wire_units(s).len() == s.layout.len as usize
}

pub fn in_folio(m: &GupModel, s: &State) -> bool {
    s.descs
        .iter()
        .all(|d| d.off as u16 + d.len as u16 <= m.folio_units(d.folio) as u16)
}

pub fn slots(m: &GupModel, s: &State) -> bool {
    s.descs.len() <= s.slots as usize && s.slots <= m.cfg.max_pages
}

/// Never more unpins than pins; between requests and at the end, as many.
pub fn pins(_: &GupModel, s: &State) -> bool {
    let idle = matches!(s.pc, Pc::Alloc | Pc::Done);
    s.pinned
        .iter()
        .zip(s.unpinned.iter())
        .all(|(p, u)| u <= p && (!idle || u == p))
}

fn same_page(_: &GupModel, s: &State) -> bool {
    let b = &s.batch;
    (0..b.len()).any(|i| (i + 1..b.len()).any(|j| b[i] == b[j]))
}

fn out_of_order(_: &GupModel, s: &State) -> bool {
    s.batch
        .windows(2)
        .any(|w| w[0].folio == w[1].folio && w[0] != w[1] && w[1].idx != w[0].idx + 1)
}

fn cow(_: &GupModel, s: &State) -> bool {
    let b = &s.batch;
    (0..b.len()).any(|i| {
        (i + 1..b.len())
            .any(|j| b[j].folio != b[i].folio && (j + 1..b.len()).any(|k| b[k].folio == b[i].folio))
    })
}
