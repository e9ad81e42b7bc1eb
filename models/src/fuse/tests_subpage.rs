//! Unit tests of sizes below a page (subpage.rs): the catalogue syntax in
//! units, the one-line refusals, fuse_write_begin's READ and zeroing, the
//! byte crop and the limits in bytes.

use super::config::*;
use super::model::*;
use super::state::*;
use super::step::Step;
use super::tests::{model, run, D0, T0, T1};

fn from_toml(text: &str) -> Result<Config, String> {
    let table: toml::Table = text.parse().map_err(|e| format!("{e}"))?;
    Config::from_table(&table)
}

const BASE: &str = "kernel = \"T\"\nunits_per_page = 4\npages = 1\ndaemon_threads = 1\n";

#[test]
fn task_ranges_in_units_and_pages() {
    let c = from_toml(&format!(
        "{BASE}init_size = \"3u\"\ncached = [0]\ntasks = [\"write 1u+2u\", \"truncate 1\", \"read 0+1\"]\n"
    ))
    .unwrap();
    assert_eq!(c.pages, 4, "one page of four units");
    assert_eq!(c.init_size, 3);
    assert_eq!(c.cached, 0b1111, "the EOF page is cached whole");
    assert_eq!(c.tasks[0], TaskSpec::Write { first: 1, n: 2 });
    assert_eq!(
        c.tasks[1],
        TaskSpec::Truncate { size: 4 },
        "a plain number is pages"
    );
    assert_eq!(
        c.tasks[2],
        TaskSpec::Read {
            first: 0,
            n: 4,
            fd: None,
            random: false
        }
    );
    // a range without a count: one page, or one unit
    let c = from_toml(&format!(
        "{BASE}init_size = \"3u\"\ntasks = [\"write 0\", \"read 1u\", \"fault 3u\"]\n"
    ))
    .unwrap();
    assert_eq!(c.tasks[0], TaskSpec::Write { first: 0, n: 4 }, "page 0");
    assert_eq!(
        c.tasks[1],
        TaskSpec::Read {
            first: 1,
            n: 1,
            fd: None,
            random: false
        },
        "unit 1"
    );
    assert_eq!(c.tasks[2], TaskSpec::Fault { page: 3, fd: None });
}

#[test]
fn configurations_the_kernel_cannot_produce_are_refused() {
    let bad = |extra: &str, want: &str| {
        let e = from_toml(&format!(
            "{BASE}init_size = 1\ntasks = [\"fsync\"]\n{extra}"
        ))
        .unwrap_err();
        assert!(e.contains(want), "{extra}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    };
    bad("page_size = 8192\n", "page_size 8192");
    bad("max_write_bytes = 2048\n", "raises it to 4096");
    bad("max_read_bytes = 1000\n", "raises it to 4096");
    bad(
        "max_write_bytes = 5000\n",
        "not a whole number of model positions",
    );
    bad("max_write = 1\nmax_write_bytes = 4096\n", "not both");
    // state L's temp pages on T (`check --with temp_pages`): not a panic
    // at a model bound
    bad("variant = [\"temp_pages\"]\n", "not with temp_pages");
    let e = from_toml(
        "kernel = \"L\"\nunits_per_page = 2\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\n",
    )
    .unwrap_err();
    assert!(e.contains("modelled for T and T2"), "{e}");
    // a plain store through a mapping is modelled (a6); GUP into one is not
    assert!(from_toml(&format!("{BASE}init_size = 1\ntasks = [\"mmap 1u\"]\n")).is_ok());
    let e = from_toml(&format!("{BASE}init_size = 1\ntasks = [\"gup 1u\"]\n")).unwrap_err();
    assert!(e.contains("direct I/O into a mapping"), "{e}");
    for k in ["T19", "C"] {
        let e = from_toml(&format!(
            "kernel = \"{k}\"\npage_size = 16384\nmax_read_bytes = 4096\npages = 1\ninit_size = 1\ndaemon_threads = 1\ntasks = [\"read 0+1\"]\n"
        ))
        .unwrap_err();
        assert!(e.contains("modelled up to 6.18"), "{k}: {e}");
    }
    // 6.18.3+ (T2) still has the folio loop: modelled
    assert!(from_toml(&format!(
        "kernel = \"T2\"\npage_size = 16384\nunits_per_page = 4\nmax_read_bytes = 4096\npages = 1\ninit_size = 1\ndaemon_threads = 1\ntasks = [\"read 0+1\"]\n"
    ))
    .is_ok());
    let e = from_toml(&format!("{BASE}units_per_page = 3\n")).unwrap_err();
    assert!(!e.is_empty());
    let e = from_toml(
        "kernel = \"T\"\nunits_per_page = 4\npages = 5\ninit_size = 1\ntasks = [\"fsync\"]\n",
    )
    .unwrap_err();
    assert!(e.contains("pages x units_per_page"), "{e}");
    // positions in errors are the catalogue's units
    let e = from_toml(&format!("{BASE}init_size = 1\ntasks = [\"write 3u+2u\"]\n")).unwrap_err();
    assert!(e.contains("'write 3u+2u' goes beyond unit 3"), "{e}");
    let e = from_toml(&format!("{BASE}init_size = \"5u\"\ntasks = [\"fsync\"]\n")).unwrap_err();
    assert!(e.contains("init_size 5u exceeds 4 units"), "{e}");
}

#[test]
fn limits_in_bytes_become_units_and_pages() {
    let c = from_toml(&format!(
        "{BASE}page_size = 16384\nmax_write_bytes = 4096\nmax_read_bytes = 8192\ninit_size = 1\ntasks = [\"fsync\"]\n"
    ))
    .unwrap();
    assert_eq!(c.unit_bytes(), 4096);
    assert_eq!(c.limit_units(true), Some(1));
    assert_eq!(c.limit_units(false), Some(2));
    // fuse_readahead: min(max_pages, max_read / PAGE_SIZE) = 0 pages
    assert_eq!(c.limit_pages(false), Some(0));
    assert_eq!(c.readahead_units(), 0);
}

/// A write of part of a page that is not cached, below EOF: write_begin
/// sends a READ of the whole page with the folio locked, and the reply
/// step copies and ends the write.
#[test]
fn partial_write_below_eof_reads_the_page_first() {
    let c = from_toml(&format!(
        "{BASE}init_size = \"2u\"\ntasks = [\"write 1u+1u\"]\n"
    ))
    .unwrap();
    let m = model(c);
    let s = run(&m, &m.initial(), T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::WriteBeginSendRead);
    assert!(s.pages[0].locked());
    assert!(matches!(s.fuse_q[0], Req::Read { first: 0, n: 4, .. }));
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, T0, Step::WriteBeginRead);
    assert!(!s.pages[0].locked() && s.pages[0].dirty());
    let ver = s.pages[1].ver;
    assert_eq!(s.pages[0].ver, V_INIT, "unit 0 read from the server");
    assert_ne!(ver, V_INIT, "unit 1 written");
    assert_eq!(s.i_size, 2, "the write ends at i_size");
}

/// A write into a page that starts at EOF: no READ; the units the write
/// does not cover are zeros (Event::EofZero), i_size ends at the write.
#[test]
fn partial_write_beyond_eof_zeroes_without_a_read() {
    let c = from_toml(
        "kernel = \"T\"\nunits_per_page = 2\npages = 2\ninit_size = \"2u\"\ndaemon_threads = 1\ntasks = [\"write 3u+1u\"]\n",
    )
    .unwrap();
    let m = model(c);
    let s = run(&m, &m.initial(), T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::CopyPage);
    assert!(s.fuse_q.is_empty(), "no READ");
    assert_eq!(s.ev, Event::EofZero);
    assert_eq!(s.pages[2].ver, V_ZERO);
    assert_eq!(s.i_size, 4);
}

/// fuse_send_writepage crops at i_size's unit: a dirty page of four
/// units with i_size at unit 3 sends three (lf-crop holds); the mutant
/// cropping at the page sends four.
#[test]
fn the_eof_page_gets_a_short_write() {
    let text =
        format!("{BASE}init_size = \"3u\"\ncached = [0]\ntasks = [\"write 0u+3u\", \"wb all\"]\n");
    for (mutant, sent) in [(false, 3), (true, 4)] {
        let mut c = from_toml(&text).unwrap();
        c.variant.mut_crop_by_page = mutant;
        assert_eq!(crop_sent(c), (Some(sent), !mutant), "mutant {mutant}");
    }
}

/// A write (task 0: inode lock, copy, return) then `wb all` (task 1) to
/// the first WRITE: the positions it sends, and whether lf-crop holds.
pub(super) fn crop_sent(c: Config) -> (Option<u8>, bool) {
    let m = model(c);
    let s = run(&m, &m.initial(), T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::CopyPage);
    let s = run(&m, &s, T0, Step::UnlockReturn);
    let t1 = Actor::Task(1);
    let s = run(&m, &s, t1, Step::WbBegin);
    let s = run(&m, &s, t1, Step::WbFolio);
    let s = run(&m, &s, t1, Step::WbSend);
    let got = s.fuse_q.iter().find_map(|r| match *r {
        Req::CacheWrite { sent, .. } => Some(sent),
        _ => None,
    });
    (got, super::lfolio::lf_crop(&m, &s))
}

/// fuse_write_begin's READ fails: write(2) returns -EIO, but
/// fuse_cache_write_iter's inode_unlock still runs, so a later syscall
/// that takes the inode lock (fsync) is not blocked for ever (e holds).
#[test]
fn a_failed_write_begin_read_unlocks_the_inode() {
    let c = from_toml(&format!(
        "{BASE}init_size = \"2u\"\nerrors = [\"READ\"]\ntasks = [\"write 1u+1u\", \"fsync\"]\n"
    ))
    .unwrap();
    let m = model(c);
    let s = run(&m, &m.initial(), T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::WriteBeginSendRead);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReplyError);
    let s = run(&m, &s, T0, Step::ReadError);
    assert!(!s.pages[0].locked() && !s.pages[0].dirty());
    assert_eq!(s.rwsem.owner, 0, "write(2) still holds i_rwsem");
    let s = run(&m, &s, T0, Step::UnlockReturn);
    assert!(m.task_done(&s, 0));
    assert!(s.rwsem.is_free(), "inode_unlock ran");
    assert_eq!(s.i_size, 2, "nothing was written");
    // fsync can now take the inode lock
    let s = run(&m, &s, T1, Step::Entry);
    let s = run(&m, &s, T1, Step::InodeLock);
    assert!(super::properties::e(&m, &s));
}

/// fuse_writepage_need_send counts pages against max_pages and bytes
/// against max_write: two dirty pages of two units each, 4 KiB pages.
/// max_pages 2 and no byte limit: one WRITE of both pages; max_write
/// 4096 bytes (one page): the second page starts a new WRITE, and no
/// WRITE exceeds max_write (lf-limits holds).
#[test]
fn writeback_batches_count_pages_and_bytes_not_units() {
    let base = "kernel = \"T\"\nunits_per_page = 2\npages = 2\ninit_size = \"4u\"\ncached = [0, 1]\ndirty = [0, 1]\ndaemon_threads = 1\ntasks = [\"fsync\"]\n";
    for (extra, want) in [
        ("", vec![(0u8, 4u8)]),
        (
            "max_pages = 4\nmax_write_bytes = 4096\n",
            vec![(0, 2), (2, 2)],
        ),
    ] {
        let m = model(from_toml(&format!("{base}{extra}")).unwrap());
        let s = run(&m, &m.initial(), T0, Step::Entry);
        let s = run(&m, &s, T0, Step::InodeLock);
        let s = run(&m, &s, T0, Step::WbBegin);
        let s = run(&m, &s, T0, Step::WbFolio);
        let s = run(&m, &s, T0, Step::WbFolio);
        let s = run(&m, &s, T0, Step::WbSend);
        let got: Vec<(u8, u8)> = s
            .fuse_q
            .iter()
            .filter_map(|r| match *r {
                Req::CacheWrite { first, n, .. } => Some((first, n)),
                _ => None,
            })
            .collect();
        assert_eq!(got, want, "{extra}");
        assert!(super::lfolio::lf_limits(&m, &s), "{extra}");
    }
}

/// An extending truncation inside the cached EOF page: the server fills
/// [1u, 3u) with the truncation's zeros, and the page's units there are
/// zeros too, so the laundered WRITE carries no data older than the
/// truncation (a2) and the quiescent file matches (a3).
#[test]
fn an_extension_inside_the_eof_page_keeps_its_zeros_current() {
    let c = from_toml(&format!(
        "{BASE}init_size = \"1u\"\ncached = [0]\ntasks = [\"write 0u+1u\", \"truncate 3u\"]\n"
    ))
    .unwrap();
    let m = model(c);
    let s = run(&m, &m.initial(), T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::CopyPage);
    let s = run(&m, &s, T0, Step::UnlockReturn);
    assert_eq!(s.pages[1].ver, V_ZERO);
    let s = run(&m, &s, T1, Step::InodeLock);
    let s = run(&m, &s, T1, Step::SetNowrite);
    let s = run(&m, &s, T1, Step::WaitNowrite);
    let s = run(&m, &s, T1, Step::SendSetattr);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    // the server has the truncation's zeros, the page its own: the same
    // bytes, no stale folio (w-stale-cached)
    assert!(!super::properties::w_stale_cached(&m, &s));
    let s = run(&m, &s, T1, Step::SetattrReply);
    let vt = m.ver(1);
    assert_eq!(s.i_size, 3);
    assert_eq!((s.pages[1].ver, s.pages[2].ver), (vt, vt));
    assert_eq!(s.pages[3].ver, V_ZERO, "beyond the new EOF: untouched");
    // truncate_pagecache, then the launder WRITE of units 0..3
    let mut s = s;
    while !m.quiescent(&s) {
        let steps = super::tests::enabled(&m, &s, T1);
        let d = super::tests::enabled(&m, &s, D0);
        s = match (steps.first(), d.first()) {
            (Some(&st), _) => run(&m, &s, T1, st),
            (None, Some(&st)) => run(&m, &s, D0, st),
            _ => panic!("stuck"),
        };
        assert!(s.viol & VIOL_A2 == 0, "a2");
    }
    assert!(super::properties::a3(&m, &s));
}

/// The lf-limits sentence names the limit that was passed as the server
/// negotiated it (bytes) and the folio in pages of units: 16 KiB pages,
/// max_write 4096, one dirty page written back whole.
#[test]
fn lf_limits_narration_names_byte_limits() {
    let c = from_toml(&format!(
        "{BASE}page_size = 16384\nmax_write_bytes = 4096\ninit_size = \"4u\"\ncached = [0]\ndirty = [0]\ntasks = [\"wb all\"]\n"
    ))
    .unwrap();
    let m = model(c);
    let s0 = run(&m, &m.initial(), T0, Step::WbBegin);
    let s1 = run(&m, &s0, T0, Step::WbFolio);
    let s2 = run(&m, &s1, T0, Step::WbSend);
    assert!(!super::lfolio::lf_limits(&m, &s2), "a 16 KiB WRITE");
    let why = super::lfolio::why(&m, &[s1, s2], "lf-limits").join(" ");
    assert!(why.contains("max_write 4096 B"), "{why}");
    assert!(why.contains("1 page(s) of 4 units"), "{why}");
}

/// Narration in units: sizes and positions become units, page counts of
/// limits stay pages.
#[test]
fn narration_says_units() {
    use super::subpage::unit_words;
    assert_eq!(
        unit_words("sends SETATTR(size=3p T0); i_size=3p"),
        "sends SETATTR(size=3u T0); i_size=3u"
    );
    assert_eq!(
        unit_words("server size is 3p but i_size is 1p"),
        "server size is 3u but i_size is 1u"
    );
    assert_eq!(
        unit_words("carrying page 1 = v0 (never written), older than the truncation to 3p by T0 (page 1 history [0, 2])"),
        "carrying unit 1 = v0 (never written), older than the truncation to 3u by T0 (unit 1 history [0, 2])"
    );
    assert_eq!(
        unit_words("max_pages 1p; folios are 1 page(s) of 4 units; p0:v4 dirty; PAGE_SIZE 16384; WRITE(p0-2)"),
        "max_pages 1p; folios are 1 page(s) of 4 units; p0:v4 dirty; PAGE_SIZE 16384; WRITE(p0-2)"
    );
    assert_eq!(unit_words("T″ → page 2, size=4p"), "T″ → unit 2, size=4u");
}

/// A store through a mapping beyond EOF inside the EOF page: no SIGBUS
/// (the page starts below EOF), the unit is stored, and it is no write of
/// the file (no fin bit: mmap(2), "modifications to that region are not
/// written out"). A write(2) past EOF in the same page then exposes
/// [1u, 3u) (a6's ghost), and a read of the page returns the stored unit
/// inside the file: a6 is violated. A store into the next page, which
/// starts at or beyond EOF, gets SIGBUS.
#[test]
fn a_store_beyond_eof_is_exposed_by_an_extending_write() {
    let c = from_toml(&format!(
        "{BASE}init_size = \"1u\"\ncached = [0]\nthreads = [[\"mmap 2u\", \"write 3u+1u\", \"read 0u+4u\"]]\n"
    ))
    .unwrap();
    let m = model(c);
    let s = run(&m, &m.initial(), T0, Step::MkwriteLock);
    let s = run(&m, &s, T0, Step::MkwriteWait);
    let s = run(&m, &s, T0, Step::MkwriteStore);
    let vm = m.ver(0);
    assert_eq!(s.ev, Event::StorePastEof);
    assert_eq!((s.pages[2].ver, s.i_size), (vm, 1));
    assert_eq!(s.fin[2] & (1 << vm), 0, "no data of the file");
    assert_eq!(s.ext0, 0);
    let s = run(&m, &s, T1, Step::InodeLock);
    let s = run(&m, &s, T1, Step::CopyPage);
    assert_eq!(s.i_size, 4);
    assert_eq!(s.ext0, 0b0110, "the hole [1u, 3u), not the written unit");
    assert!(
        super::properties::a6(&m, &s),
        "nothing read, nothing sent yet"
    );
    let mut s = run(&m, &s, T1, Step::UnlockReturn);
    let t2 = Actor::Task(2);
    while s.viol2 & VIOL2_EOF_ZERO == 0 {
        let st = *super::tests::enabled(&m, &s, t2)
            .first()
            .expect("the read runs to its end");
        s = run(&m, &s, t2, st);
    }
    assert!(!super::properties::a6(&m, &s), "the read returned unit 2");

    // two pages of two units: unit 2 starts page 1, wholly beyond EOF
    let c = from_toml(
        "kernel = \"T\"\nunits_per_page = 2\npages = 2\ndaemon_threads = 1\ninit_size = \"1u\"\ncached = [0]\ntasks = [\"mmap 2u\"]\n",
    )
    .unwrap();
    let m = model(c);
    let s = run(&m, &m.initial(), T0, Step::Sigbus);
    assert!(m.task_done(&s, 0));
}

/// A config as conform builds it for a recorded sub-page trace with
/// max_write 4096 (translate.rs: max_pages 1, `read_max_pages` 2, the
/// kernel's fc->max_pages being 32): readahead sends the two-page READ
/// fuse_readahead allows, and lf-limits must not call it a violation
/// (check_read_limits compared the READ with `max_pages`).
#[test]
fn a_readahead_read_within_read_max_pages_keeps_lf_limits() {
    let mut c = from_toml(&format!(
        "kernel = \"T\"\nunits_per_page = 2\npages = 2\ndaemon_threads = 1\ninit_size = 2\ntasks = [\"read 0+2\"]\n"
    ))
    .unwrap();
    c.max_pages = 1;
    c.read_max_pages = 2;
    assert_eq!(c.readahead_units(), 4, "two pages of two units");
    let states = super::tests::reachable(&model(c));
    assert!(
        states.iter().any(|s| s.tasks[0].pc > 0),
        "the read made progress"
    );
    assert!(
        states.iter().all(|s| s.lf_viol & VIOL_LF_LIMITS == 0),
        "lf-limits flags a READ within fc->max_pages"
    );
}
