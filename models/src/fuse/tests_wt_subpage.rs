//! Unit tests of write-through writes with units below a page (write.rs,
//! `op_fill_units`; request.rs, `recv_through_batch`): the folio a write
//! covers in part and that is not uptodate stays locked across the WRITE,
//! a reader waits on it, and after the reply it is unlocked and still not
//! uptodate; an uptodate folio is unlocked before the WRITE; max_write
//! below a page makes one WRITE per unit; a short WRITE clears uptodate
//! where it ended.

use super::config::*;
use super::model::*;
use super::properties::{hit, PROPERTIES};
use super::state::*;
use super::step::Step;
use super::tests::{enabled, model, run, D0, T0, T1};

fn from_toml(text: &str) -> Config {
    let table: toml::Table = text.parse().expect("toml");
    Config::from_table(&table).expect("a valid configuration")
}

/// Write-through, one page of two units, both below EOF.
const WT: &str = "kernel = \"T\"\nwriteback_cache = false\nunits_per_page = 2\npages = 1\ninit_size = \"2u\"\ndaemon_threads = 1\n";

fn witness(m: &FuseModel, s: &State, name: &str) -> bool {
    let i = PROPERTIES
        .iter()
        .position(|p| p.name == name)
        .expect("a property");
    hit(i, m, s)
}

/// An uncached page: the write of unit 1 leaves the folio not uptodate,
/// so fuse_fill_write_pages keeps it locked; the reader that meets it
/// waits until the writer has the WRITE's reply, then reads the page from
/// the server, which has the new unit by then.
#[test]
fn a_partial_folio_stays_locked_across_the_write_and_a_reader_waits() {
    let m = model(from_toml(&format!(
        "{WT}tasks = [\"write 1u+1u\", \"read 0u+2u\"]\n"
    )));
    let s = run(&m, &m.initial(), T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::FillFolioLocked);
    assert!(s.tasks[0].folio_locked);
    assert!(
        s.pages[0].locked() && s.pages[1].locked(),
        "the whole folio"
    );
    assert!(!s.pages[0].has(PG_UPTODATE) && !s.pages[1].has(PG_UPTODATE));
    assert_eq!(s.pages[1].ver, m.ver(0), "the written unit");
    assert!(!s.pages[0].dirty(), "write-through dirties nothing");
    let s = run(&m, &s, T0, Step::SendThroughWrite);
    assert!(matches!(
        s.fuse_q[0],
        Req::ThroughWrite { first: 1, n: 1, .. }
    ));
    let s = run(&m, &s, T1, Step::Entry);
    assert!(
        enabled(&m, &s, T1).is_empty(),
        "the reader waits on the folio lock"
    );
    assert!(witness(&m, &s, "w-wt-partial-locked"));
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    assert_eq!(s.srv[1], m.ver(0));
    assert!(
        enabled(&m, &s, T1).is_empty(),
        "still locked: the writer unlocks it after the reply"
    );
    assert!(
        !witness(&m, &s, "w-wt-partial-locked"),
        "the WRITE is answered"
    );
    let s = run(&m, &s, T0, Step::WriteBatchEnd);
    assert!(!s.tasks[0].folio_locked);
    assert!(!s.pages[0].locked() && !s.pages[0].has(PG_UPTODATE));
    assert_eq!(enabled(&m, &s, T0), vec![Step::WriteReply]);
    // the reader reads the folio now: the server's bytes are the new ones
    let s = run(&m, &s, T1, Step::ReadFolio);
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    let s = run(&m, &s, T1, Step::FaultReadDone);
    assert!(s.pages[0].has(PG_UPTODATE));
    assert_eq!(s.pages[1].ver, m.ver(0));
}

/// The mutant: the folio is unlocked before the WRITE, still not
/// uptodate, and the reader may read it at once.
#[test]
fn the_mutant_unlocks_the_partial_folio_before_the_write() {
    let mut c = from_toml(&format!("{WT}tasks = [\"write 1u+1u\", \"read 0u+2u\"]\n"));
    c.variant.mut_wt_unlock_partial = true;
    let m = model(c);
    let s = run(&m, &m.initial(), T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::FillFolio);
    assert!(!s.tasks[0].folio_locked && !s.pages[1].locked());
    assert!(!s.pages[1].has(PG_UPTODATE));
    let s = run(&m, &s, T0, Step::SendThroughWrite);
    let s = run(&m, &s, T1, Step::Entry);
    assert_eq!(enabled(&m, &s, T1), vec![Step::ReadFolio]);
}

/// A cached, uptodate page: the copy leaves it uptodate, so it is
/// unlocked before the WRITE and a reader copies the new unit at once.
#[test]
fn a_partial_write_into_an_uptodate_folio_unlocks_it_before_the_write() {
    let m = model(from_toml(&format!(
        "{WT}cached = [0]\ntasks = [\"write 1u+1u\", \"read 1u+1u\"]\n"
    )));
    let s = run(&m, &m.initial(), T0, Step::InodeLock);
    let s = run(&m, &s, T0, Step::FillFolio);
    assert!(!s.tasks[0].folio_locked && !s.pages[0].locked());
    assert!(s.pages[0].has(PG_UPTODATE) && s.pages[1].has(PG_UPTODATE));
    let s = run(&m, &s, T0, Step::SendThroughWrite);
    let s = run(&m, &s, T1, Step::Entry);
    let s = run(&m, &s, T1, Step::ReadCopy);
    assert_eq!(s.tasks[1].snap[1], m.ver(0));
}

/// max_write one unit (4 KiB of a 16 KiB page): fuse_fill_write_pages'
/// `num = min(iov_iter_count(ii), fc->max_write)` makes one WRITE per
/// unit; each leaves the folio not uptodate and locked until its reply,
/// and the folio never becomes uptodate (no copy was of the full folio).
#[test]
fn max_write_below_a_page_writes_a_unit_per_batch() {
    let m = model(from_toml(
        "kernel = \"T2\"\nwriteback_cache = false\npage_size = 16384\nunits_per_page = 4\nmax_write_bytes = 4096\npages = 1\ninit_size = \"4u\"\ndaemon_threads = 1\ntasks = [\"write 0u+2u\", \"stat\"]\n",
    ));
    assert!(m.split_through(0));
    let mut s = run(&m, &m.initial(), T0, Step::InodeLock);
    for u in 0..2u8 {
        s = run(&m, &s, T0, Step::FillFolioLocked);
        assert_eq!((s.tasks[0].bfirst, s.tasks[0].bn), (u, 1));
        assert!(s.pages[0].locked());
        s = run(&m, &s, T0, Step::SendThroughWrite);
        assert!(matches!(
            s.fuse_q[0],
            Req::ThroughWrite { first, n: 1, .. } if first == u
        ));
        s = run(&m, &s, D0, Step::DaemonRead);
        s = run(&m, &s, D0, Step::DaemonReply);
        s = run(&m, &s, T0, Step::WriteBatchEnd);
        assert!(!s.pages[0].locked());
        assert_eq!(s.tasks[0].saved, u + 1);
        assert_eq!(m.in_through_gap(&s, 0), u == 0, "between the two batches");
    }
    assert!(!s.pages[0].has(PG_UPTODATE));
    let s = run(&m, &s, T0, Step::WriteReply);
    assert!(!s.tasks[0].failed);
}

/// A short WRITE: fuse_send_write_pages clears uptodate on the folio the
/// written bytes end in, not on the folio they cover whole, and the loop
/// ends with i_size where the WRITE ended.
#[test]
fn a_short_write_clears_uptodate_where_it_ended() {
    let m = model(from_toml(
        "kernel = \"T\"\nwriteback_cache = false\nunits_per_page = 2\npages = 2\ninit_size = \"3u\"\ncached = [0, 1]\nshort = [\"WRITE\"]\ndaemon_threads = 1\ntasks = [\"write 1u+3u\"]\n",
    ));
    let s = run(&m, &m.initial(), T0, Step::InodeLock);
    // unit 1 to the end of folio 0 (uptodate: unlocked, the batch goes
    // on at the folio boundary), then units 2-3, the whole folio 1
    let s = run(&m, &s, T0, Step::FillFolio);
    assert_eq!(s.tasks[0].pc, 1, "the batch goes on");
    let s = run(&m, &s, T0, Step::FillFolio);
    let s = run(&m, &s, T0, Step::SendThroughWrite);
    assert!(matches!(
        s.fuse_q[0],
        Req::ThroughWrite { first: 1, n: 3, .. }
    ));
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReplyShort);
    let s = run(&m, &s, T0, Step::WriteBatchEnd);
    assert_eq!(s.ev, Event::ShortIo);
    assert!(
        s.pages[0].has(PG_UPTODATE),
        "the reply covers the unit folio 0 got"
    );
    assert!(!s.pages[2].has(PG_UPTODATE) && !s.pages[3].has(PG_UPTODATE));
    let s = run(&m, &s, T0, Step::WriteReply);
    assert_eq!(s.i_size, 3, "units 1-2 written: i_size stays 3u");
}

/// Write-through with units is accepted on T and T2; large folios and L
/// and C stay refused.
#[test]
fn write_through_with_units_is_modelled_for_t_and_t2_only() {
    for k in ["T", "T2", "T17"] {
        let t: toml::Table = format!(
            "kernel = \"{k}\"\nwriteback_cache = false\nunits_per_page = 2\npages = 1\ninit_size = 1\ntasks = [\"write 1u+1u\"]\n"
        )
        .parse()
        .unwrap();
        assert!(Config::from_table(&t).is_ok(), "{k}");
    }
    for (extra, k, want) in [
        ("folio_pages = 2\npages = 2\n", "T", "folio_pages > 1"),
        ("pages = 1\n", "L", "modelled for T and T2"),
        ("pages = 1\n", "C", "modelled for T and T2"),
    ] {
        let t: toml::Table = format!(
            "kernel = \"{k}\"\nwriteback_cache = false\nunits_per_page = 2\n{extra}init_size = 1\ntasks = [\"write 1u+1u\"]\n"
        )
        .parse()
        .unwrap();
        let e = Config::from_table(&t).unwrap_err();
        assert!(e.contains(want), "{k}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}
