//! Unit tests of the issue-11 steps: daemon reclaim (reclaim.rs), large
//! folios and readahead (lfolio.rs), the writeback slot bound (wbslots.rs).

use super::config::*;
use super::lfolio::folio_size;
use super::model::*;
use super::state::*;
use super::step::Step;
use super::tests::{cfg, enabled, model, run, D0, T0, T1};

/// 2 pages, page 0 dirty, memcg v1, one daemon thread: flusher + fault.
fn reclaim_cfg(flag: bool) -> Config {
    let mut c = cfg(2, &["wb none", "fault 1"]);
    c.cached = 1;
    c.dirty = 1;
    c.memcg_v1 = true;
    c.variant.reclaim_flag = flag;
    c
}

/// The flusher sends WRITE(p0) and the daemon reads it.
fn write_in_daemon(m: &FuseModel) -> State {
    let s = m.initial();
    let s = run(m, &s, T0, Step::WbBegin);
    let s = run(m, &s, T0, Step::WbFolio);
    let s = run(m, &s, T0, Step::WbSend);
    run(m, &s, D0, Step::DaemonRead)
}

#[test]
fn reclaim_marks_then_waits_without_the_flag() {
    let m = model(reclaim_cfg(false));
    let s = write_in_daemon(&m);
    let shrink = Step::ShrinkFolio { page: 0 };
    let s = run(&m, &s, D0, shrink);
    assert!(s.pages[0].has(PG_RECLAIM));
    assert_eq!(s.rcl[0].wait, NONE, "case 2 first: mark, no wait");
    let s = run(&m, &s, D0, shrink);
    assert_eq!(s.rcl[0].wait, 0, "case 3: folio_wait_writeback");
    // asleep: no reply, no further reclaim; only the fault task may step
    assert!(enabled(&m, &s, D0).is_empty());
    // the fault reads page 1 ahead (a background READ) and waits on
    // its locked folio
    let s = run(&m, &s, T1, Step::Entry);
    let (s, _) = super::tests::read_around(&m, &s, T1);
    assert!(
        !m.any_enabled(&s),
        "the WRITE's worker waits on its own folio"
    );
    assert!(!super::properties::e(&m, &s));
}

#[test]
fn the_flag_turns_every_encounter_into_case_2() {
    let m = model(reclaim_cfg(true));
    let s = write_in_daemon(&m);
    let shrink = Step::ShrinkFolio { page: 0 };
    let s = run(&m, &s, D0, shrink);
    let s = run(&m, &s, D0, shrink);
    assert_eq!(s.rcl[0].wait, NONE);
    assert_eq!(s.rcl[0].passes, 2);
    assert!(!enabled(&m, &s, D0).contains(&shrink), "passes are bounded");
    // the reply ends the request and its reclaim, and PG_reclaim goes with
    // PG_writeback
    let s = run(&m, &s, D0, Step::DaemonReply);
    assert_eq!(s.rcl[0].passes, 0);
    let s = run(&m, &s, D0, Step::WritepageEnd);
    assert!(!s.pages[0].has(PG_RECLAIM | PG_WRITEBACK));
}

#[test]
fn no_writeback_cache_means_no_flag() {
    let mut c = reclaim_cfg(true);
    c.writeback_cache = false;
    assert!(!model(c).reclaim_flag());
    let mut c = reclaim_cfg(true);
    c.memcg_v1 = false;
    let m = model(c);
    let s = write_in_daemon(&m);
    assert_eq!(
        enabled(&m, &s, D0),
        vec![Step::DaemonReply],
        "no reclaim step"
    );
}

fn lf_cfg(tasks: &[&str]) -> Config {
    let mut c = cfg(2, tasks);
    c.folio_pages = 2;
    c
}

#[test]
fn order_cap_follows_the_enabling_patch() {
    let mut c = lf_cfg(&["fault 0"]);
    c.max_read = Some(1);
    assert_eq!(folio_size(&c), 2, "v2 patch 12 ignores max_read");
    c.variant.lf_cap_max_read = true;
    assert_eq!(folio_size(&c), 1);
    let mut c = lf_cfg(&["fault 0"]);
    c.max_pages = 1;
    assert_eq!(folio_size(&c), 1);
    c.variant.mut_lf_no_order_cap = true;
    assert_eq!(folio_size(&c), 2);
    c.kernel = Kernel::L;
    c.variant = Variant::base(Kernel::L);
    c.folio_pages = 1;
    assert_eq!(folio_size(&c), 1);
}

#[test]
fn a_fault_reads_the_whole_large_folio() {
    let mut c = lf_cfg(&["fault 1"]);
    c.cached = 0;
    c.dirty = 0;
    let m = model(c);
    // read_folio of any block reads its whole folio
    assert_eq!(m.read_folio_range(1), (0, 2));
    // a miss reads the folio ahead: one READ of both pages
    let s = run(&m, &m.initial(), T0, Step::Entry);
    let (s, turns) = super::tests::read_around(&m, &s, T0);
    assert_eq!(
        turns,
        [Step::RaAdd, Step::RaSend],
        "one turn: one large folio"
    );
    assert_eq!(
        s.fuse_q,
        vec![Req::ReadPages {
            task: 0,
            first: 0,
            n: 2
        }]
    );
    assert!(s.pages[0].locked() && s.pages[1].locked());
    let s = run(&m, &s, D0, Step::DaemonRead);
    let s = run(&m, &s, D0, Step::DaemonReply);
    assert!(s.pages[0].has(PG_UPTODATE) && s.pages[1].has(PG_UPTODATE));
    assert_eq!((s.pages[0].ver, s.pages[1].ver), (V_INIT, V_INIT));
    let s = run(&m, &s, T0, Step::FaultMapped);
    assert!(m.task_done(&s, 0));
    assert_eq!(s.lf_viol, 0);
}

#[test]
fn readahead_with_no_fitting_folio() {
    let mut c = lf_cfg(&["readahead 0+2"]);
    c.cached = 0;
    c.dirty = 0;
    c.max_read = Some(1);
    let m = model(c.clone());
    let s = run(&m, &m.initial(), T0, Step::RaAlloc);
    let s = run(&m, &s, T0, Step::RaEmpty);
    assert_eq!(s.lf_viol, VIOL_LF_EMPTY);
    assert!(s.fuse_q.is_empty() && m.task_done(&s, 0));
    c.variant.lf_readahead_guard = true;
    let m = model(c);
    let s = run(&m, &m.initial(), T0, Step::RaAlloc);
    let s = run(&m, &s, T0, Step::RaStop);
    assert_eq!(s.lf_viol, 0);
    assert!(!s.pages[0].locked() && !s.pages[0].has(PG_UPTODATE));
}

#[test]
fn readahead_keeps_a_folio_for_the_next_round() {
    let mut c = cfg(4, &["readahead 0+4"]);
    c.folio_pages = 2;
    c.cached = 0;
    c.dirty = 0;
    c.max_read = Some(3);
    c.variant.lf_cap_max_read = true;
    let m = model(c);
    let s = run(&m, &m.initial(), T0, Step::RaAlloc);
    let s = run(&m, &s, T0, Step::RaSend);
    assert_eq!(s.ev, Event::RaNoFit);
    let s = run(&m, &s, T0, Step::RaSend);
    assert_eq!(
        s.fuse_q,
        vec![
            Req::ReadPages {
                task: 0,
                first: 0,
                n: 2
            },
            Req::ReadPages {
                task: 0,
                first: 2,
                n: 2
            }
        ]
    );
    assert!(m.task_done(&s, 0));
}

#[test]
fn data_size_before_patch_08_sends_one_page_per_folio() {
    let mut c = lf_cfg(&["wb none"]);
    c.variant.mut_lf_datasize_pages = true;
    let m = model(c);
    let s = run(&m, &m.initial(), T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    let s = run(&m, &s, T0, Step::WbSend);
    assert_eq!(
        s.fuse_q,
        vec![Req::CacheWrite {
            first: 0,
            n: 2,
            sent: 1
        }]
    );
    assert_eq!(s.lf_viol, VIOL_LF_CROP);
}

#[test]
fn partial_folio_truncation_zeroes_the_tail() {
    let mut c = lf_cfg(&["truncate 1"]);
    c.dirty = 0;
    let m = model(c);
    let mut s = m.initial();
    s.i_size = 1; // as after the SETATTR reply
    s.tasks[0].pc = m.programs[0]
        .iter()
        .position(|o| matches!(o, super::program::Op::TruncatePagecache))
        .unwrap() as u8;
    // folio_lock, held into the zeroing step (lock-then-act, as for removal)
    let s = run(&m, &s, T0, Step::TruncLock);
    assert!(s.pages[0].locked());
    let s = run(&m, &s, T0, Step::TruncPartial);
    assert!(s.pages[0].present() && s.pages[1].present());
    assert_eq!((s.pages[0].ver, s.pages[1].ver), (V_INIT, version_of(0)));
    assert!(!s.pages[0].locked());
}

#[test]
fn slot_overflow_needs_sub_page_blocks_and_no_slot_check() {
    let mut c = cfg(4, &["wb none"]);
    c.kernel = Kernel::C;
    c.variant = Variant::base(Kernel::C);
    c.folio_blocks = 2;
    c.blocks_per_page = 2;
    c.max_pages = 1;
    c.dirty = 0b0110;
    let walk = |m: &FuseModel| {
        let s = run(m, &m.initial(), T0, Step::WbBegin);
        let s = run(m, &s, T0, Step::WbFolio);
        run(m, &s, T0, Step::WbFolio)
    };
    let m = model(c.clone());
    let s = walk(&m);
    assert_eq!(s.lf_viol, 0);
    assert_eq!(s.fuse_q.len(), 1, "c3880a7b10e4 sends block 1 alone");
    c.variant.slot_check = false;
    let m = model(c);
    let s = walk(&m);
    assert_eq!((s.tasks[0].bdesc, s.tasks[0].bslots), (2, 1));
    assert_eq!(s.lf_viol, VIOL_LF_SLOTS);
}

#[test]
fn geometry_validation_names_the_problem() {
    let bad = |f: &dyn Fn(&mut Config), want: &str| {
        let mut c = lf_cfg(&["wb none"]);
        f(&mut c);
        let e = c.validate().unwrap_err();
        assert!(e.contains(want), "{e}");
    };
    bad(&|c| c.folio_pages = 3, "folio_pages");
    bad(&|c| c.kernel = Kernel::C, "folio_pages");
    bad(&|c| c.blocks_per_page = 2, "blocks_per_page");
    bad(&|c| c.cached = 1, "cached covers whole folios");
    bad(
        &|c| c.tasks = vec![TaskSpec::parse("write 1+1").unwrap()],
        "whole folios",
    );
    bad(
        &|c| {
            c.tasks = vec![
                TaskSpec::parse("truncate 1").unwrap(),
                TaskSpec::parse("truncate 2").unwrap(),
            ]
        },
        "at most one truncation",
    );
    // direct I/O over max_read / max_write and a write-through write over
    // max_write are split in the model (issue 10): no longer refused
    let mut c = lf_cfg(&["write 0+2"]);
    c.folio_pages = 1;
    c.writeback_cache = false;
    c.max_write = Some(1);
    assert_eq!(c.validate(), Ok(()));
}

/// The environment's reclaim (reclaim.rs `reclaim_clean`) takes only a
/// clean, unlocked folio not under writeback out of the page cache, the
/// whole folio at once.
#[test]
fn reclaim_takes_only_a_clean_idle_folio_whole() {
    let mut c = cfg(4, &["wb none"]);
    c.folio_pages = 2;
    c.cached = 0b1111;
    c.dirty = 0b0011;
    let m = model(c);
    let s = m.initial();
    // pages 0-1: one dirty folio; pages 2-3: one clean folio
    assert!(m.reclaim_clean(&s, 0).is_none(), "a dirty folio stays");
    assert!(m.reclaim_clean(&s, 1).is_none(), "its second page too");
    let r = m.reclaim_clean(&s, 3).expect("a clean folio may go");
    assert!(!r.pages[2].present() && !r.pages[3].present(), "whole");
    assert!(r.pages[0].present() && r.pages[0].dirty(), "others stay");
    assert!(m.reclaim_clean(&r, 2).is_none(), "an absent folio: nothing");
    // locked or under writeback: trylock fails, or the folio is skipped
    for f in [PG_LOCKED, PG_WRITEBACK] {
        let mut l = s;
        l.pages[2].set(f);
        l.pages[3].set(f);
        assert!(m.reclaim_clean(&l, 2).is_none(), "flag {f}");
    }
    // the flusher takes the dirty folio: under writeback, still not
    let s = run(&m, &s, T0, Step::WbBegin);
    let s = run(&m, &s, T0, Step::WbFolio);
    assert!(m.reclaim_clean(&s, 0).is_none(), "under writeback");
}
