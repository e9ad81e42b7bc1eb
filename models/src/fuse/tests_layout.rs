//! Unit tests of uneven positions (layout.rs): `unit_bytes` of equal
//! sizes reach exactly the states of `units_per_page`; uneven ones put
//! each position in its page, count max_pages in kernel pages, and keep
//! fuse_write_begin's READ, the EOF crop and the crop mutant.

use super::config::*;
use super::model::FuseModel;
use super::state::*;
use super::step::Step;
use super::tests::{model, reachable, run, D0, T0};

fn from_toml(text: &str) -> Result<Config, String> {
    let table: toml::Table = text.parse().map_err(|e| format!("{e}"))?;
    Config::from_table(&table)
}

/// Equal sizes are the uniform units: the same reachable states, for
/// workloads that take every sub-page path (fuse_write_begin's READ, the
/// EOF zeroing, truncation inside a page, readahead, stores, fsync).
#[test]
fn equal_unit_bytes_reach_the_states_of_units_per_page() {
    let cases = [
        (
            "pages = 1\ninit_size = \"2u\"\n",
            "units_per_page = 4\n",
            "unit_bytes = [1024, 1024, 1024, 1024]\n",
            "tasks = [\"write 1u+1u\", \"truncate 3u\", \"fsync\"]\n",
        ),
        (
            "pages = 2\ninit_size = \"3u\"\ncached = [0, 1]\n",
            "units_per_page = 2\n",
            "unit_bytes = [2048, 2048, 2048, 2048]\n",
            "tasks = [\"write 0u+3u\", \"read 1u+2u\", \"wb all\"]\n",
        ),
        (
            "pages = 2\ninit_size = \"1u\"\ncached = [0]\n",
            "units_per_page = 2\n",
            "unit_bytes = [2048, 2048, 2048, 2048]\n",
            "tasks = [\"mmap 2u\", \"write 3u+1u\", \"fsync\"]\n",
        ),
        // fuse_readahead's round at max_pages 1 (an attack found
        // uneven positions leaving the loop with a spurious no-fit)
        (
            "pages = 2\ninit_size = \"4u\"\nmax_pages = 1\n",
            "units_per_page = 2\n",
            "unit_bytes = [2048, 2048, 2048, 2048]\n",
            "tasks = [\"readahead 0u+4u\", \"read 3u+1u\"]\n",
        ),
    ];
    for (common, uniform, uneven, tasks) in cases {
        let head = "kernel = \"T\"\ndaemon_threads = 1\n";
        let a = from_toml(&format!("{head}{common}{uniform}{tasks}")).unwrap();
        let b = from_toml(&format!("{head}{common}{uneven}{tasks}")).unwrap();
        assert!(b.uneven() && b.sub_page());
        assert_eq!(
            (a.pages, a.init_size, a.cached),
            (b.pages, b.init_size, b.cached)
        );
        let (ma, mb) = (model(a), model(b));
        let np = ma.cfg.pages as usize;
        assert_eq!(ma.lay.page_start[..np], mb.lay.page_start[..np], "{tasks}");
        assert_eq!(ma.lay.page_end[..np], mb.lay.page_end[..np], "{tasks}");
        assert_eq!(ma.lay.kpage[..np], mb.lay.kpage[..np], "{tasks}");
        let sa: std::collections::HashSet<State> = reachable(&ma).into_iter().collect();
        let sb: std::collections::HashSet<State> = reachable(&mb).into_iter().collect();
        assert!(sa.len() > 60, "{tasks}: {} states", sa.len());
        assert_eq!(sa, sb, "{tasks}");
    }
}

/// sqlite3's journal header page: 12 + 500 + 4 + 3580 bytes are one page
/// of four positions, then a whole page, then 516 + 3580.
#[test]
fn uneven_positions_share_their_page() {
    let c = from_toml(
        "kernel = \"T\"\npages = 2\nunit_bytes = [12, 500, 3584, 4096]\ninit_size = 1\ntasks = [\"write 1u+1u\"]\n",
    )
    .unwrap();
    assert_eq!(c.pages, 4);
    assert_eq!(c.init_size, 3, "page 1 starts at position 3");
    let m = model(c);
    assert_eq!(&m.lay.page_start[..4], &[0, 0, 0, 3]);
    assert_eq!(&m.lay.page_end[..4], &[3, 3, 3, 4]);
    assert_eq!(&m.lay.kpage[..5], &[0, 0, 0, 1, 2]);
    assert_eq!(m.folio(1), 0..3);
    assert_eq!(m.folio(3), 3..4);
    assert_eq!(m.pages_spanned(1, 3), 2, "positions 1..4 touch both pages");
    assert_eq!(m.pages_spanned(0, 2), 1);
    // fuse_write_begin: 500 bytes at 12 inside the file, the page not
    // cached: a READ of the whole page (three positions) first
    let s = run(&m, &m.initial(), T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::WriteBeginSendRead);
    assert!(matches!(s.fuse_q[0], Req::Read { first: 0, n: 3, .. }));
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, T0, Step::WriteBeginRead);
    assert_eq!(s.pages[0].ver, V_INIT, "bytes 0..12 read from the server");
    assert_ne!(s.pages[1].ver, V_INIT, "bytes 12..512 written");
    assert_eq!(s.pages[2].ver, V_INIT);
}

/// max_pages counts kernel pages: with max_pages 1, a writeback of two
/// dirty pages of three positions sends the first page's two positions,
/// then the third; the i_size crop falls on a position inside the EOF
/// page, and the crop mutant rounds it up to the page's end.
#[test]
fn max_pages_counts_kernel_pages_and_the_crop_is_a_position() {
    let base = "kernel = \"T\"\npages = 2\nunit_bytes = [100, 3996, 4096]\ndaemon_threads = 1\ncached = [0, 1]\ndirty = [0, 1]\ninit_size = 2\ntasks = [\"fsync\"]\n";
    let m = model(from_toml(&format!("{base}max_pages = 1\n")).unwrap());
    let s = run(&m, &m.initial(), T0, Step::Entry);
    let s = run(&m, &s, T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbFolio);
    let writes = |s: &State| -> Vec<(u8, u8)> {
        s.fuse_q
            .iter()
            .filter_map(|r| match *r {
                Req::CacheWrite { first, n, .. } => Some((first, n)),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        writes(&s),
        vec![(0, 2)],
        "page 0 is sent before page 1 joins"
    );
    assert!(super::lfolio::lf_limits(&m, &s));
    // the crop: i_size at position 1 (byte 100) inside a dirty page
    let text = "kernel = \"T\"\npages = 1\nunit_bytes = [100, 3996]\ndaemon_threads = 1\ncached = [0]\ninit_size = \"1u\"\ntasks = [\"write 0u+1u\", \"wb all\"]\n";
    for (mutant, sent) in [(false, 1), (true, 2)] {
        let mut c = from_toml(text).unwrap();
        c.variant.mut_crop_by_page = mutant;
        assert_eq!(
            super::tests_subpage::crop_sent(c),
            (Some(sent), !mutant),
            "mutant {mutant}"
        );
    }
}

#[test]
fn unit_bytes_the_model_cannot_take_are_refused_in_one_line() {
    let bad = |extra: &str, want: &str| {
        let e = from_toml(&format!("kernel = \"T\"\ninit_size = 1\n{extra}")).unwrap_err();
        assert!(e.contains(want), "{extra}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    };
    bad(
        "pages = 1\nunit_bytes = [100, 3000]\ntasks = [\"fsync\"]\n",
        "3100 bytes in all",
    );
    bad(
        "pages = 2\nunit_bytes = [100, 4096, 3996]\ntasks = [\"fsync\"]\n",
        "crosses a page boundary",
    );
    bad(
        "pages = 1\nunit_bytes = [100, 3996]\ntasks = [\"write 0+1\"]\n",
        "positions are units",
    );
    bad(
        "pages = 1\nunits_per_page = 2\nunit_bytes = [100, 3996]\ntasks = [\"fsync\"]\n",
        "not both",
    );
    bad(
        "pages = 1\nunit_bytes = [4096]\ntasks = [\"fsync\"]\n",
        "whole pages only",
    );
    bad(
        "pages = 1\nunit_bytes = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4080]\ntasks = [\"fsync\"]\n",
        "1..=16 positions",
    );
    bad(
        "pages = 1\nunit_bytes = [0, 4096]\ntasks = [\"fsync\"]\n",
        "at least one byte",
    );
    bad(
        "pages = 2\nunit_bytes = [100, 3996, 4096]\nmax_write = 1\ntasks = [\"fsync\"]\n",
        "max_write of 4096 bytes under the file's 8192",
    );
    bad(
        "pages = 1\nunit_bytes = [100, 3996]\nvariant = [\"temp_pages\"]\ntasks = [\"fsync\"]\n",
        "T and T2",
    );
    // a page inside a position of two pages has no position of its own
    bad(
        "pages = 3\nunit_bytes = [8192, 12, 4084]\ncached = [1]\ntasks = [\"fsync\"]\n",
        "page 1 lies inside a position of several pages",
    );
    let c = from_toml(
        "kernel = \"T\"\npages = 3\nunit_bytes = [8192, 12, 4084]\ninit_size = 3\ncached = [0, 1, 2]\ntasks = [\"fsync\"]\n",
    )
    .unwrap();
    assert_eq!((c.pages, c.init_size, c.cached), (3, 3, 0b111));
    let e = from_toml(
        "kernel = \"T\"\npages = 3\nunit_bytes = [8192, 12, 4084]\ninit_size = 3\ncached = [1]\ntasks = [\"fsync\"]\n",
    )
    .unwrap_err();
    assert!(e.starts_with("cached: page 1 lies inside"), "{e}");
    // ... named without the other pages of its position
    let e = from_toml(
        "kernel = \"T\"\npages = 3\nunit_bytes = [8192, 12, 4084]\ninit_size = 3\ncached = [0]\ntasks = [\"fsync\"]\n",
    )
    .unwrap_err();
    assert!(
        e.contains("page 0 starts a position of pages 0-1, and page 1 is not named with it"),
        "{e}"
    );
    // a position of two pages is one folio here; the kernel splits a
    // request at max_pages 1 inside it
    bad(
        "pages = 3\nunit_bytes = [100, 3996, 8192]\nmax_pages = 1\ntasks = [\"fsync\"]\n",
        "is 2 pages, more than max_pages 1",
    );
    // the page size is checked before it divides anything
    bad(
        "pages = 1\npage_size = 0\nunit_bytes = [100, 3996]\ntasks = [\"fsync\"]\n",
        "page_size 0",
    );
    bad(
        "pages = 1\npage_size = 1\nunit_bytes = [4000000000, 1, 4000000000, 5]\ntasks = [\"fsync\"]\n",
        "page_size 1",
    );
    bad(
        "pages = 1\nunit_bytes = []\ntasks = [\"fsync\"]\n",
        "got none",
    );
    // a signal's number is a task's, not a position
    let c = from_toml(
        "kernel = \"T\"\npages = 1\nunit_bytes = [100, 3996]\ninit_size = 1\nthreads = [[\"write 0u+1u\"], [\"signal 0\"]]\n",
    )
    .unwrap();
    assert_eq!(
        c.tasks[1],
        TaskSpec::Signal {
            target: 0,
            fatal: false
        }
    );
    let c = from_toml(
        "kernel = \"T\"\npages = 1\nunits_per_page = 2\ninit_size = 1\nthreads = [[\"write 0u+1u\"], [\"fsync\"], [\"kill 1\"]]\n",
    )
    .unwrap();
    assert_eq!(
        c.tasks[2],
        TaskSpec::Signal {
            target: 1,
            fatal: true
        }
    );
    assert_eq!(c.task_text(2), "kill 1");
    let e = from_toml(
        "kernel = \"C\"\npages = 1\nunit_bytes = [100, 3996]\ninit_size = 1\ntasks = [\"fsync\"]\n",
    )
    .unwrap_err();
    assert!(e.contains("T and T2"), "{e}");
}

/// The READs (readahead and read_folio) of every reachable state, as
/// kernel page ranges.
pub(super) fn reads_in_pages(m: &FuseModel) -> std::collections::BTreeSet<(u32, u32)> {
    let mut out = std::collections::BTreeSet::new();
    for s in reachable(m) {
        for r in s.fuse_q.iter().chain(s.bg_q.iter()) {
            if let Req::Read { first, n, .. } | Req::ReadPages { first, n, .. } = *r {
                out.insert((m.lay.kpage[first as usize], m.kpage_end(first + n)));
            }
        }
    }
    out
}

/// page_cache_sync_ra counts kernel pages, not positions: a read of
/// page 1 after a cached page 0 of two positions is a standalone read
/// of page 1 (contig 1 <= req 1), as with whole pages; a 12-byte read
/// counts its page (req_count rounds up). (An attack found both counted
/// in positions: page 2 read ahead, and a smaller read a larger window.)
#[test]
fn the_readahead_window_counts_kernel_pages() {
    // three pages, page 0 cached; `units`: the unit_bytes line or none
    let m = |units: &str, read: &str| {
        model(
            from_toml(&format!(
                "kernel = \"T\"\npages = 3\n{units}init_size = 3\ncached = [0]\ntasks = [\"{read}\"]\n"
            ))
            .unwrap(),
        )
    };
    let whole = m("", "read 1+1");
    let uneven = m("unit_bytes = [12, 4084, 4096, 4096]\n", "read 2u+1u");
    assert_eq!(reads_in_pages(&uneven), reads_in_pages(&whole));
    assert!(!reads_in_pages(&whole).is_empty());
    let small = m("unit_bytes = [4096, 12, 4084, 4096]\n", "read 1u+1u");
    let page = m("unit_bytes = [4096, 12, 4084, 4096]\n", "read 1u+2u");
    assert_eq!(reads_in_pages(&small), reads_in_pages(&page));
}

/// An oversized read (req_count > max_pages, ra_pages here) away from
/// offset 0 takes the initial window, 32 pages, whatever the cache
/// holds before it (page_cache_sync_ra; M-ra-oversized): 120 pages
/// cached, a read of the next 128 READs pages 120-151 first. Until 4
/// Dec 2026 it took the prev-miss path: 120 cached pages are no more
/// than the request, a standalone read of all 128 pages at once, which
/// a recording on 6.18.44 showed the kernel does not do.
#[test]
fn an_oversized_read_takes_the_initial_window() {
    // (three model pages of 120, 32 and 96 kernel pages, as conform
    // maps a trace's runs of whole pages: `real_pages`)
    let mut c = from_toml(
        "kernel = \"T\"\npages = 3\ninit_size = 3\ncached = [0]\ntasks = [\"read 1+2\"]\n",
    )
    .unwrap();
    c.real_pages[..3].copy_from_slice(&[120, 32, 96]);
    let m = model(c);
    let reads = reads_in_pages(&m);
    assert!(reads.contains(&(120, 152)), "{reads:?}");
    assert!(!reads.contains(&(120, 248)), "{reads:?}");
}

/// The byte image (encode.rs) determines the state at any width: equal
/// images exactly for equal states, for workloads of 2 positions (the
/// 4-page image) and of 6, 9 and 16 (the wide one), with readahead masks,
/// writeback, truncation and reads past the first 4 positions.
#[test]
fn the_byte_image_determines_the_state_at_every_width() {
    use crate::common::encode::{Enc, ENCODE_MAX};
    use crate::spec::Spec;
    let cases = [
        (
            "pages = 2\ninit_size = 2\ncached = [0]\n",
            "[\"write 0+2\", \"read 0+2\", \"wb all\"]",
        ),
        (
            "pages = 6\ninit_size = 6\ncached = [4]\n",
            "[\"readahead 0+6\", \"write 4+2\", \"truncate 5\"]",
        ),
        (
            "pages = 9\ninit_size = 9\ncached = [8]\n",
            "[\"write 6+3\", \"read 5+4\", \"fsync\"]",
        ),
        (
            "pages = 16\ninit_size = 16\ncached = [15]\n",
            "[\"write 14+2\", \"wb all\", \"read 12+4\"]",
        ),
    ];
    let mut buf = Box::new([0u8; ENCODE_MAX]);
    for (common, tasks) in cases {
        let c = from_toml(&format!(
            "kernel = \"T\"\ndaemon_threads = 2\n{common}tasks = {tasks}\n"
        ))
        .unwrap();
        let m = model(c);
        let states: std::collections::HashSet<State> = reachable(&m).into_iter().collect();
        let images: std::collections::HashSet<Vec<u8>> = states
            .iter()
            .map(|s| {
                let mut e = Enc::new(&mut buf);
                assert!(m.encode(s, &mut e));
                let n = e.len();
                buf[..n].to_vec()
            })
            .collect();
        assert!(states.len() > 50, "{tasks}: {} states", states.len());
        assert_eq!(images.len(), states.len(), "{common}{tasks}");
    }
}

/// Up to 4 positions the image is the one the 4-page state had: a daemon
/// worker's payload writes the bytes a derived `Hash` of a 4-entry array
/// wrote (so fingerprints, bitstate and hash-compaction runs of the
/// catalogue's checks do not move).
#[test]
fn a_narrow_worker_image_is_the_four_page_one() {
    use crate::common::encode::{Enc, ENCODE_MAX};
    use crate::spec::Spec;
    use std::hash::Hash;
    #[derive(Hash)]
    #[allow(dead_code)]
    enum Worker4 {
        Idle,
        Busy { req: Req, payload: [u8; 4] },
        Ending { first: u8, n: u8 },
    }
    let c = from_toml(
        "kernel = \"T\"\ndaemon_threads = 1\npages = 2\ninit_size = 2\ncached = [0, 1]\ndirty = [0, 1]\ntasks = [\"wb all\"]\n",
    )
    .unwrap();
    let m = model(c);
    let busy = reachable(&m)
        .into_iter()
        .find(|s| matches!(s.workers[0], Worker::Busy { .. }))
        .expect("a WRITE read by the daemon");
    let Worker::Busy { req, payload } = busy.workers[0] else {
        unreachable!()
    };
    let mut buf = Box::new([0u8; ENCODE_MAX]);
    let mut e = Enc::new(&mut buf);
    m.encode(&busy, &mut e);
    let n = e.len();
    let image = buf[..n].to_vec();
    let mut buf4 = Box::new([0u8; ENCODE_MAX]);
    let mut e4 = Enc::new(&mut buf4);
    Worker4::Busy {
        req,
        payload: payload[..4].try_into().unwrap(),
    }
    .hash(&mut e4);
    let k = e4.len();
    let w4 = buf4[..k].to_vec();
    assert!(payload[..2].iter().all(|v| *v != NONE), "{payload:?}");
    assert!(
        image.windows(k).any(|w| w == w4.as_slice()),
        "the 4-page worker image is in the state's"
    );
}

/// Per-position arrays in JSON keep the 4-entry form a saved trace of a
/// 4-position check has always had; a shorter array reads back filled,
/// a longer one than the model has is refused with the count.
#[test]
fn per_position_arrays_keep_their_saved_form() {
    let c = from_toml(
        "kernel = \"T\"\npages = 1\nunit_bytes = [12, 500, 3584]\ndaemon_threads = 1\ninit_size = \"3u\"\ntasks = [\"fsync\"]\n",
    )
    .unwrap();
    let j = serde_json::to_value(&c).unwrap();
    assert_eq!(
        j["sub"]["unit_bytes"],
        serde_json::json!([12, 500, 3584, 0])
    );
    let back: Config = serde_json::from_value(j.clone()).unwrap();
    assert_eq!(back, c);
    // 6 positions: all 6 written, none more
    let mut wide = c.clone();
    wide.sub.unit_bytes[..6].copy_from_slice(&[12, 500, 3584, 100, 3996, 4096]);
    let j6 = serde_json::to_value(&wide).unwrap();
    assert_eq!(j6["sub"]["unit_bytes"].as_array().unwrap().len(), 6);
    let back: Config = serde_json::from_value(j6).unwrap();
    assert_eq!(back.sub.unit_bytes, wide.sub.unit_bytes);
    let mut long = j;
    long["sub"]["unit_bytes"] = serde_json::json!(vec![1; 17]);
    let e = serde_json::from_value::<Config>(long)
        .unwrap_err()
        .to_string();
    assert!(e.contains("17 positions, the model has at most 16"), "{e}");
}

/// FUSE over io_uring tags its queue entries in a u16 and a u8 (uring.rs):
/// modelled up to 4 positions, refused beyond in one line.
#[test]
fn uring_is_refused_past_four_positions() {
    let t = |pages: u8| {
        from_toml(&format!(
            "kernel = \"T2\"\npages = {pages}\ninit_size = 1\nuring_queues = 1\ndaemon_threads = 1\ntasks = [\"fsync\"]\n"
        ))
    };
    assert!(t(4).is_ok());
    let e = t(5).unwrap_err();
    assert!(e.contains("modelled for 1..=4 positions, got 5"), "{e}");
}
