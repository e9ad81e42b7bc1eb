//! The environment's reclaim of clean folios (`retry_with_reclaim`,
//! search.rs `reclaim_masks`): a READ of a page the model holds clean
//! conforms only with it, and says so; a READ of a page the model holds
//! dirty does not, with it or without.

use super::test_trace::{mapping, tr, OPEN};
use super::*;
use serde_json::json;

const WRITE_SYNC: &[&str] = &[
    "call T0 pwrite fd=6 off=0 A",
    "ret T0 pwrite 4096",
    "call T0 fsync fd=6",
    "req 6 WRITE 0 4096 A cache",
    "reply 6 WRITE",
    "req 8 FSYNC",
    "reply 8 FSYNC",
    "ret T0 fsync 0",
];

const READ_BACK: &[&str] = &[
    "call T0 pread fd=6 off=0 len=4096",
    "req 10 READ 0 4096",
    "reply 10 READ tags=A",
    "ret T0 pread 4096 data=A",
];

const CLOSE: &[&str] = &[
    "call T0 close fd=6",
    "req 12 FLUSH",
    "reply 12 FLUSH",
    "ret T0 close 0",
];

fn trace(parts: &[&[&str]]) -> Vec<Event> {
    let mut l: Vec<&str> = OPEN.to_vec();
    for p in parts {
        l.extend(*p);
    }
    tr(json!({}), &l)
}

#[test]
fn a_clean_page_read_again_conforms_only_with_reclaim() {
    let ev = trace(&[WRITE_SYNC, READ_BACK, CLOSE]);
    let m = mapping(&ev);
    assert!(!m.reclaim);
    assert!(
        matches!(check(&m, DEFAULT_BOUND), Verdict::Violation { .. }),
        "without reclaim the page stays cached: no READ"
    );
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.class, Class::Conforms, "{}", c.word);
    assert_eq!(c.word, "conforms (+clean-page reclaim)");
    let d = c.detail.unwrap();
    assert!(
        d.contains("with the environment's reclaim of clean folios"),
        "{d}"
    );
    // the same trace without the READ conforms strictly, and says nothing
    let c = conform_trace(&trace(&[WRITE_SYNC, CLOSE]), None).unwrap();
    assert_eq!(c.word, "conforms");
}

#[test]
fn reclaim_never_takes_a_dirty_page() {
    // the page is dirty when the READ comes (no fsync): reclaim cannot
    // take it, and the violation reported is the strict one
    let dirty: &[&str] = &["call T0 pwrite fd=6 off=0 A", "ret T0 pwrite 4096"];
    let close_w: &[&str] = &[
        "call T0 close fd=6",
        "req 12 WRITE 0 4096 A cache",
        "reply 12 WRITE",
        "req 14 FLUSH",
        "reply 14 FLUSH",
        "ret T0 close 0",
    ];
    let ev = trace(&[dirty, READ_BACK, close_w]);
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.class, Class::DoesNotConform, "{}", c.word);
    assert!(c.word.starts_with("VIOLATION"), "{}", c.word);
    assert!(!c.detail.unwrap().contains("reclaim of clean folios"));
}

/// The pages reclaim may take at each event are those a READ at it or
/// later reads: none once the last READ has passed, none without
/// `Mapping::reclaim`.
#[test]
fn reclaim_masks_are_the_pages_read_later() {
    let mut m = mapping(&trace(&[WRITE_SYNC, READ_BACK, CLOSE]));
    assert!(search::reclaim_masks(&m).iter().all(|&r| r == 0));
    m.reclaim = true;
    let r = search::reclaim_masks(&m);
    let at = m
        .obs
        .iter()
        .position(|o| matches!(o.obs, Obs::Read(Pat::Read { .. })))
        .unwrap();
    assert!(r[..=at].iter().all(|&x| x == 1), "{r:?}");
    assert!(r[at + 1..].iter().all(|&x| x == 0), "{r:?}");
}

/// A write-through write holds a reference on the folios of its batch
/// until its WRITE is answered (fuse_fill_write_pages' `ap->folios`):
/// reclaim cannot take them, so a read meanwhile is served from the
/// page cache, and a READ of the page is no behaviour, with reclaim or
/// without (model reclaim.rs `write_through_holds`).
#[test]
fn reclaim_never_takes_a_page_a_write_through_write_holds() {
    // (after the first pwrite of A, answered)
    let nowbc = super::tests_through::nowbc;
    let second: &[&str] = &["call T0 pwrite fd=6 off=0 B", "req 12 WRITE 0 4096 B pid=7"];
    let mut l = second.to_vec();
    l.extend([
        "call T1 pread fd=6 off=0 len=4096",
        "req 14 READ 0 4096",
        "reply 14 READ tags=A",
        "ret T1 pread 4096 data=A",
        "reply 12 WRITE",
        "ret T0 pwrite 4096",
    ]);
    let c = conform_trace(&nowbc(&l), None).unwrap();
    assert_eq!(c.class, Class::DoesNotConform, "{}", c.word);
    assert!(c.word.starts_with("VIOLATION"), "{}", c.word);
    // once the WRITE is answered the clean page may go, and be READ
    let mut l = second.to_vec();
    l.extend([
        "reply 12 WRITE",
        "ret T0 pwrite 4096",
        "call T1 pread fd=6 off=0 len=4096",
        "req 14 READ 0 4096",
        "reply 14 READ tags=B",
        "ret T1 pread 4096 data=B",
    ]);
    let c = conform_trace(&nowbc(&l), None).unwrap();
    assert_eq!(c.word, "conforms (+clean-page reclaim)", "{}", c.word);
}

/// A strict violation the reclaim retry cannot decide within the state
/// bound is said beside the inconclusive verdict.
#[test]
fn an_undecided_reclaim_retry_keeps_the_strict_violation() {
    // the re-read returns data the server never had: a violation with
    // reclaim too, but a bound of a few states stops the retry first
    let bad: &[&str] = &[
        "call T0 pread fd=6 off=0 len=4096",
        "req 10 READ 0 4096",
        "reply 10 READ tags=Z",
        "ret T0 pread 4096 data=Z",
    ];
    let ev = trace(&[WRITE_SYNC, bad, CLOSE]);
    assert!(matches!(
        check(&mapping(&ev), DEFAULT_BOUND),
        Verdict::Violation { .. }
    ));
    // the bound is on the states possible at one event: the smallest
    // bounds stop the strict search, larger ones decide both; in
    // between, the retry's wider frontier stops it alone
    let mut found = false;
    for bound in 1..200 {
        let (c, _) = super::conform_file_bounded(&ev, None, None, bound).unwrap();
        assert_eq!(c.class, Class::DoesNotConform, "{}", c.word);
        if c.word.starts_with("inconclusive") && c.word.contains("without reclaim") {
            assert!(
                c.word
                    .contains("+clean-page reclaim); without reclaim: VIOLATION"),
                "{}",
                c.word
            );
            let d = c.detail.unwrap();
            assert!(
                d.contains("without the environment's reclaim of clean folios:"),
                "{d}"
            );
            found = true;
            break;
        }
    }
    assert!(found, "no bound stops the retry but not the strict search");
}
