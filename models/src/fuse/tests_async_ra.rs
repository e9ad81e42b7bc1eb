//! Async readahead (read.rs `async_ra`): the PG_readahead mark a window
//! leaves, and the next window a lookup of the marked folio reads
//! (page_cache_async_ra, mm/readahead.c of 6.18).

use super::config::*;
use super::model::FuseModel;
use super::state::*;
use super::step::Step;
use super::tests::{model, reachable, reachable_from};
use super::tests_layout::reads_in_pages as reads;
use crate::common::page::PG_READAHEAD;

fn from_toml(text: &str) -> Result<Config, String> {
    let table: toml::Table = text.parse().map_err(|e| format!("{e}"))?;
    Config::from_table(&table)
}

/// Positions of `real` kernel pages each (as conform maps a program's
/// reads of whole pages), one thread running `prog`.
fn seq(real: &[u8], prog: &str, extra: &str) -> FuseModel {
    let n = real.len();
    let mut c = from_toml(&format!(
        "kernel = \"T2\"\npages = {n}\ninit_size = {n}\n{extra}threads = [{prog}]\n"
    ))
    .unwrap();
    c.real_pages[..n].copy_from_slice(real);
    model(c)
}

/// `cat` of a file in 128 KiB reads: the first read's initial window is
/// 32 pages with async_size 16, so page 16 is marked; reaching it, the
/// same read starts the next window, pages 32-63, before it returns
/// (recorded on 6.18.44: READ(0, 32 pages), then READ(32, 32 pages)
/// while the first pread is still in the kernel). The second read finds
/// page 32 marked (async_size = size: the mark is the window's first
/// folio) and reads pages 64-95. Without async readahead the second read
/// missed and read pages 32-63 itself, and nothing read 64-95 until a
/// third read.
#[test]
fn a_sequential_reader_reads_the_next_window_at_the_mark() {
    let m = seq(
        &[32, 32, 32],
        "[\"read 0+1 fd=0\", \"read 1+1 fd=0\"]",
        "daemon_threads = 1\n",
    );
    let r = reads(&m);
    assert_eq!(
        r,
        [(0, 32), (32, 64), (64, 96)].into_iter().collect(),
        "{r:?}"
    );
    // the second window's READ is queued while the first read is in
    // the kernel
    let early = reachable(&m).into_iter().any(|s| {
        (s.tasks[0].pc as usize) < m.programs[0].len()
            && s.fuse_q
                .iter()
                .chain(s.bg_q.iter())
                .any(|q| matches!(*q, Req::ReadPages { first: 1, .. }))
    });
    assert!(early, "READ(32-63) before the first read returns");
}

/// The mark is where page_cache_ra_unbounded puts it: none for a
/// standalone small read (lookahead 0) nor when do_page_cache_ra's EOF
/// clamp leaves fewer pages than the lookahead; the initial window of
/// a 1-page read at offset 0 (4 pages, async_size 3) marks page 1.
#[test]
fn the_mark_is_where_the_window_puts_it() {
    let marked = |m: &FuseModel| -> std::collections::BTreeSet<usize> {
        reachable(m)
            .iter()
            .flat_map(|s| (0..m.cfg.pages as usize).filter(|&p| s.pages[p].has(PG_READAHEAD)))
            .collect()
    };
    let one = |pages: u8, extra: &str, task: &str| {
        model(
            from_toml(&format!(
                "kernel = \"T2\"\npages = {pages}\ninit_size = {pages}\n{extra}tasks = [\"{task}\"]\n"
            ))
            .unwrap(),
        )
    };
    assert_eq!(marked(&one(4, "", "read 0+1")), [1].into_iter().collect());
    // 2 pages: 4-page window clamped to 2 < async_size 3
    assert!(marked(&one(2, "", "read 0+1")).is_empty());
    // page 0 cached, a read of page 1: contig 1 <= req 1, standalone
    assert!(marked(&one(3, "cached = [0]\n", "read 1+1")).is_empty());
}

/// page_cache_async_ra returns on a folio under writeback ("Same bit is
/// used for PG_readahead and PG_reclaim"): the mark stays, no window;
/// folio_end_writeback clears PG_reclaim, so the mark. And a store
/// through a mapping dirties with folio_mark_dirty, which clears it.
#[test]
fn writeback_keeps_the_mark_and_its_end_and_a_store_clear_it() {
    let c = from_toml(
        "kernel = \"T2\"\npages = 4\ninit_size = 4\ncached = [0, 1, 2, 3]\ndirty = [1]\ndaemon_threads = 1\ntasks = [\"wb all\", \"read 1+1\"]\n",
    )
    .unwrap();
    let m = model(c);
    let mut s0 = m.initial();
    s0.pages[1].set(PG_READAHEAD);
    let (mut kept, mut async_ra) = (false, false);
    reachable_from(&m, s0, |s, a, n| {
        if n.pages[1].has(PG_READAHEAD) && !n.pages[1].wb() && s.pages[1].wb() {
            panic!("the end of writeback left the mark");
        }
        if s.pages[1].wb() && s.pages[1].has(PG_READAHEAD) && n.tasks[1].pc > s.tasks[1].pc {
            kept = true; // the read went past the folio under writeback
        }
        if a.step == Step::RaAsync {
            async_ra = true;
            assert!(
                !s.pages[1].wb(),
                "async readahead on a folio under writeback"
            );
        }
    });
    assert!(kept && async_ra, "kept {kept}, async {async_ra}");
    let c = from_toml(
        "kernel = \"T2\"\npages = 2\ninit_size = 2\ncached = [0, 1]\ntasks = [\"mmap 1\"]\n",
    )
    .unwrap();
    let m = model(c);
    let mut s0 = m.initial();
    s0.pages[1].set(PG_READAHEAD);
    let mut stored = false;
    for s in reachable_from(&m, s0, |_, _, _| {}) {
        if s.pages[1].dirty() {
            stored = true;
            assert!(!s.pages[1].has(PG_READAHEAD), "a store kept the mark");
        }
    }
    assert!(stored);
}

/// page_cache_prev_miss looks back max_pages (32) pages at most: a 128
/// KiB read at page 64 after one at page 0 (whose async window read
/// pages 32-63) finds no gap in pages 32-63, contig_count 31, no more
/// than the request: a standalone read, which marks nothing, so nothing
/// reads pages 96-127 (recorded on 6.18.44: traces/ra-async/
/// jump_128k.jsonl). Counting all 64 cached pages, doubled, the model
/// took the prev-miss window, async_size 1, and its mark read them.
#[test]
fn the_prev_miss_scan_looks_back_max_pages() {
    let m = seq(
        &[32, 32, 32, 32],
        "[\"read 0+1 fd=0\", \"read 2+1 fd=0\"]",
        "daemon_threads = 1\n",
    );
    let r = reads(&m);
    assert_eq!(
        r,
        [(0, 32), (32, 64), (64, 96)].into_iter().collect(),
        "{r:?}"
    );
}

/// A fault and read(2) on one open file share file->f_ra: the
/// read-around of a fault at page 0 (ra->start 0, size 32, async_size
/// 8) marks page 24, and a read reaching it takes page_cache_async_ra's
/// expected path, ra->start += ra->size: pages 32-63 (recorded on
/// 6.18.44: traces/ra-async/read_at_fault_mark.jsonl). A fault without
/// `fd=F` keeps no readahead state: the read (of page 24 alone) finds
/// no valid state, and its window starts at the next miss, 32, with
/// size get_next_ra_size(8 + 1) = 18, its end rounded down to 48.
#[test]
fn a_fault_shares_its_files_readahead_state_with_read() {
    let shared = seq(
        &[24, 1, 7, 16, 16],
        "[\"fault 0 fd=0\", \"read 1+1 fd=0\"]",
        "daemon_threads = 1\n",
    );
    let r = reads(&shared);
    assert_eq!(r, [(0, 32), (32, 64)].into_iter().collect(), "{r:?}");
    let own = seq(
        &[24, 1, 7, 16, 16],
        "[\"fault 0\", \"read 1+1 fd=0\"]",
        "daemon_threads = 1\n",
    );
    let r = reads(&own);
    assert_eq!(r, [(0, 32), (32, 48)].into_iter().collect(), "{r:?}");
    // and the other way: a read of page 0 (initial window 0-3,
    // async_size 3: the mark at page 1), then a load of page 1 through
    // a mapping of the same file: the expected path, pages 4-11
    // (traces/ra-async/fault_at_read_mark.jsonl); a fault keeping no
    // state takes the no-valid-state path, from the next miss (4) for
    // get_next_ra_size(3 + ra_pages) = 32 pages
    let layout = [1, 3, 4, 4, 24];
    let shared = seq(
        &layout,
        "[\"read 0+1 fd=0\", \"fault 1 fd=0\"]",
        "daemon_threads = 1\n",
    );
    let r = reads(&shared);
    assert_eq!(r, [(0, 4), (4, 12)].into_iter().collect(), "{r:?}");
    let own = seq(
        &layout,
        "[\"read 0+1 fd=0\", \"fault 1\"]",
        "daemon_threads = 1\n",
    );
    let r = reads(&own);
    assert_eq!(r, [(0, 4), (4, 36)].into_iter().collect(), "{r:?}");
}

/// The scope line names the readahead state a fault does not share
/// exactly where a task faults without `fd=F`.
#[test]
fn the_scope_names_unshared_fault_readahead_only_where_a_fault_has_no_fd() {
    let item = "the readahead state (file->f_ra) a fault shares with read(2)";
    let says = |tasks: &str| {
        let c = from_toml(&format!(
            "kernel = \"T2\"\npages = 2\ninit_size = 2\ntasks = [{tasks}]\n"
        ))
        .unwrap();
        super::scope::scope(&c)
            .iter()
            .any(|(k, v)| *k == "not modelled" && v.contains(item))
    };
    assert!(says("\"fault 0\", \"read 1+1 fd=0\""));
    assert!(says("\"mmap 0\""));
    assert!(!says("\"fault 0 fd=0\", \"read 1+1 fd=0\""));
    assert!(!says("\"read 0+1\""));
}

/// The catalogue's t2-16k-fault-read-shared-ra (ra_pages 8): with the
/// file's state the fault's window is pages 2-3; a fault keeping none
/// reads pages 2-7, as its comment says. Without the truncation.
#[test]
fn the_16k_catalogue_check_reads_the_windows_its_comment_names() {
    let m = |fault: &str| {
        model(
            from_toml(&format!(
                "kernel = \"T2\"\npage_size = 16384\npages = 8\ninit_size = 8\ndaemon_threads = 1\nthreads = [[\"read 0+1 fd=0\", \"{fault}\"]]\n"
            ))
            .unwrap(),
        )
    };
    let r = reads(&m("fault 1 fd=0"));
    assert_eq!(r, [(0, 2), (2, 4)].into_iter().collect(), "{r:?}");
    let r = reads(&m("fault 1"));
    assert_eq!(r, [(0, 2), (2, 8)].into_iter().collect(), "{r:?}");
}

/// ra_round_end (6.17 on): the fault's async window of
/// t2-16k-fault-read-shared-ra, pages 2-5 (ra->start 2, size 4), has its
/// end rounded down to 4 pages on 6.18 (T2) and on the T17 label; 6.16
/// (T) and L read it whole.
#[test]
fn the_window_end_is_rounded_from_6_17_on() {
    let m = |kernel: &str| {
        model(
            from_toml(&format!(
                "kernel = \"{kernel}\"\npage_size = 16384\npages = 8\ninit_size = 8\ndaemon_threads = 1\nthreads = [[\"read 0+1 fd=0\", \"fault 1 fd=0\"]]\n"
            ))
            .unwrap(),
        )
    };
    for (k, end) in [("T2", 4), ("T17", 4), ("T", 6), ("L", 6)] {
        let r = reads(&m(k));
        assert_eq!(r, [(0, 2), (2, end)].into_iter().collect(), "{k}: {r:?}");
    }
}

/// 6.1's ondemand_readahead (ra_ondemand) against 6.11+, on the
/// positions of the recorded scenario r_ra_skip (32 pages; reads of
/// pages 0, 4 and 13 on one fd): the first read's window is pages 0-3
/// (async_size 3, page 1 marked); the read of page 4 skips the mark and
/// misses at ra->start + ra->size. 6.1 pushes the window forward (8
/// pages, async_size 8) and, as it starts at the index with size ==
/// async_size, merges the next (16): pages 4-27, and page 13 is cached.
/// 6.11+ take the 4 cached pages before the miss, from the file's
/// start, doubled, plus the page: pages 4-12, and page 13 misses
/// (13 cached pages from the start, doubled, cut at EOF: 13-31).
/// Recorded so on Debian's 6.1.192 and 6.12.118
/// (harness/tests/traces/6.1.0-57/r_ra_skip.jsonl; the 6.12 run in
/// harness/tests/vm.rs).
#[test]
fn a_miss_at_the_windows_end_pushes_it_forward_on_6_1() {
    let real = [1, 3, 1, 8, 1, 14, 4];
    let prog = "\"read 0+1 fd=0\", \"read 2+1 fd=0\", \"read 4+1 fd=0\"";
    let m = |variant: &str| on_l(variant, &real, prog);
    let r = reads(&m("ra_ondemand"));
    assert_eq!(r, [(0, 4), (4, 28)].into_iter().collect(), "6.1: {r:?}");
    let r = reads(&m(""));
    assert_eq!(
        r,
        [(0, 4), (4, 13), (13, 32)].into_iter().collect(),
        "6.11+: {r:?}"
    );
}

/// ra_prev_pos_each_copy (6.1 - 6.5), on the positions of the recorded
/// scenario r_ra_midread (16 pages; on one fd, standalone reads of
/// pages 2 and 8, then a read of pages 2-5): the third read copies the
/// cached page 2, then misses at page 3. 6.1 has set ra->prev_pos after
/// that copy, so the miss is sequential: the initial window for 3
/// pages, 8 (pages 3-10, async_size 5), READ of 3-7 and 9-10 around the
/// cached page 8. From 6.6 prev_pos is still the second read's end, so
/// the miss is no sequential one, and the one cached page before it
/// (page 2) is no more than the 3 pages asked: a standalone read of
/// pages 3-5. Recorded so on Debian's
/// 6.1.192 and 6.12.118 (harness/tests/traces/6.1.0-57/r_ra_midread.jsonl).
#[test]
fn a_miss_inside_a_read_is_sequential_on_6_1() {
    let real = [2, 1, 3, 2, 1, 2, 5];
    let prog = "\"read 1+1 fd=0\", \"read 4+1 fd=0\", \"read 1+2 fd=0\"";
    let m = |variant: &str| on_l(variant, &real, prog);
    let r = reads(&m("ra_prev_pos_each_copy"));
    assert_eq!(
        r,
        [(2, 3), (8, 9), (3, 8), (9, 11)].into_iter().collect(),
        "6.1: {r:?}"
    );
    let r = reads(&m("ra_ondemand"));
    assert_eq!(
        r,
        [(2, 3), (8, 9), (3, 6)].into_iter().collect(),
        "ra_ondemand alone: {r:?}"
    );
    let r = reads(&m(""));
    assert_eq!(
        r,
        [(2, 3), (8, 9), (3, 6)].into_iter().collect(),
        "6.6+: {r:?}"
    );
}

/// State L with `variant` (one switch, or none), positions of `real`
/// kernel pages each (as conform maps a recording), one thread running
/// `prog` (quoted task words, comma-separated).
fn on_l(variant: &str, real: &[u8], prog: &str) -> FuseModel {
    let n = real.len();
    let v = match variant {
        "" => String::new(),
        v => format!("variant = [\"{v}\"]\n"),
    };
    let mut c = from_toml(&format!(
        "kernel = \"L\"\n{v}pages = {n}\ninit_size = {n}\ndaemon_threads = 1\nthreads = [[{prog}]]\n"
    ))
    .unwrap();
    c.real_pages[..n].copy_from_slice(real);
    model(c)
}

/// FMODE_RANDOM (`read ... random`, posix_fadvise RANDOM on the open):
/// page_cache_sync_ra calls force_page_cache_ra, which reads the
/// request and no more, capped at ra_pages (32), and sets no mark, on
/// 6.1 as on 6.18. Without it a read of page 0 takes the initial
/// window (4 pages for a 1-page request). Recorded: fio's buffered job
/// with its default fadvise_hint (harness/tests/record.rs).
#[test]
fn a_random_read_reads_the_request_only() {
    // pages 0-3 one each, then 31 and 5
    let real = [1, 1, 1, 1, 31, 5];
    for k in ["T2", "L"] {
        let m = |prog: &str| {
            let mut c = from_toml(&format!(
                "kernel = \"{k}\"\npages = 6\ninit_size = 6\ndaemon_threads = 1\nthreads = [[{prog}]]\n"
            ))
            .unwrap();
            c.real_pages[..6].copy_from_slice(&real);
            model(c)
        };
        let r = reads(&m("\"read 1+1 fd=0 random\""));
        assert_eq!(r, [(1, 2)].into_iter().collect(), "{k}: {r:?}");
        let r = reads(&m("\"read 0+1 fd=0\""));
        assert_eq!(r, [(0, 4)].into_iter().collect(), "{k}: {r:?}");
        // 37 pages asked: the first 32, then the next lookup's forced
        // readahead reads the rest
        let r = reads(&m("\"read 3+3 fd=0 random\""));
        assert_eq!(r, [(3, 35), (35, 40)].into_iter().collect(), "{k}: {r:?}");
        // no mark: nothing read past the request
        let m = m("\"read 0+1 fd=0 random\", \"read 1+1 fd=0 random\"");
        assert_eq!(reads(&m), [(0, 1), (1, 2)].into_iter().collect(), "{k}");
        assert!(reachable(&m)
            .iter()
            .all(|s| s.pages.iter().all(|p| p.flags & PG_READAHEAD == 0)));
    }
}

#[test]
fn the_random_word_parses_and_prints() {
    let t = |s: &str| TaskSpec::parse(s);
    for s in ["read 0+2 fd=1 random", "read 0+2 random", "read 0+2 fd=1"] {
        assert_eq!(t(s).unwrap().to_string(), s);
    }
    assert!(t("read 0+2 random fd=1").is_err());
    assert!(t("read 0+2 fd=1 random x").is_err());
    assert!(t("read 0+2 randomly").is_err());
}

/// fuse_readahead reads `rac->ra->async_size` when it runs, and nothing
/// locks f_ra between the window's setup and then: on an open shared by
/// `fd=F`, another reader's async readahead may have raised it
/// (docs/findings.md M-ra-stale-asz). T0's window is pages 0-3
/// (async_size 3, the mark on page 1); T1 finds the marked folio while
/// T0 is still adding folios and reads the next window (async_size 8).
/// With a background request in flight (congested), T0's READ of 4
/// pages is skipped: 8 >= 4. Read at setup, 3 < 4, it was sent.
#[test]
fn the_congestion_check_reads_the_files_async_size_when_it_sends() {
    use super::read::PH_RA;
    let m = model(
        from_toml(
            "kernel = \"T2\"\npages = 12\ninit_size = 12\ndaemon_threads = 1\ncongestion_threshold = 1\nthreads = [[\"read 0+1 fd=0\"], [\"read 1+1 fd=0\"]]\n",
        )
        .unwrap(),
    );
    let mut s = reachable(&m)
        .into_iter()
        .find(|s| {
            s.tasks[0].ph == PH_RA
                && s.tasks[0].ra != 0
                && s.tasks[0].saved == 3
                && s.ra_win[0].asz == 8
                && m.num_background(s) == 0
        })
        .expect("T1's async readahead before T0's READ");
    s.bg_q.push(Req::CacheWrite {
        first: 11,
        n: 1,
        sent: 1,
    });
    assert_eq!(task0_steps(&m, &s), [Step::RaSkip]);
}

/// One thread's reads on state `kernel` with `variant`, 12 one-page
/// positions, READs of at most `max_pages` pages and
/// congestion_threshold 1 (a readahead's first READ congests the
/// connection for its next check).
fn congested(kernel: &str, variant: &str, max_pages: u8, prog: &str) -> FuseModel {
    let v = match variant {
        "" => String::new(),
        v => format!("variant = [\"{v}\"]\n"),
    };
    model(
        from_toml(&format!(
            "kernel = \"{kernel}\"\n{v}pages = 12\ninit_size = 12\nmax_pages = {max_pages}\ncongestion_threshold = 1\ndaemon_threads = 1\nthreads = [[{prog}]]\n"
        ))
        .unwrap(),
    )
}

/// fuse_readahead's congestion check, "rac->ra->async_size >=
/// readahead_count(rac)", at a batch's second and later READs: the
/// count still holds part of the previous READ. A read of page 0 takes
/// the window 0-3, async_size 3; its first READ congests. 6.13 on
/// (__readahead_folio, which drops a folio at the next call): the
/// previous READ's last folio counts, so with 1-page READs the second
/// check counts 3 + 1 = 4 > 3 (page 1 is READ) and the third 2 + 1 = 3
/// (skipped); with 2-page READs the second counts 2 + 1 = 3 (skipped).
/// 6.1 - 6.12 (__readahead_batch, ra_count_batch): the whole previous
/// READ counts, 2 + 2 = 4 > 3, and pages 2-3 are READ too. (Until 5
/// Dec 2026 the model counted only the pages left: page 1 was skipped.)
#[test]
fn a_batchs_next_read_counts_what_the_rac_still_holds() {
    let read0 = "\"read 0+1 fd=0\"";
    for k in ["T2", "L"] {
        let r = reads(&congested(k, "", 1, read0));
        assert_eq!(r, [(0, 1), (1, 2)].into_iter().collect(), "{k}: {r:?}");
        let r = reads(&congested(k, "", 2, read0));
        assert_eq!(r, [(0, 2)].into_iter().collect(), "{k}: {r:?}");
    }
    let r = reads(&congested("L", "ra_count_batch", 2, read0));
    assert_eq!(r, [(0, 2), (2, 4)].into_iter().collect(), "6.12: {r:?}");
    let r = reads(&congested("L", "ra_count_batch", 1, read0));
    assert_eq!(r, [(0, 1), (1, 2)].into_iter().collect(), "6.12: {r:?}");
}

/// read_pages until 7a1eb89f7918 (ra_skip_shrinks; 6.1 - 6.13) lowers
/// the file's ra->size and ra->async_size by the folios a congested
/// fuse_readahead skipped. The read of page 0 READs pages 0 and 1 and
/// skips 2-3 (above): the window is now 2 pages, async_size 1. A read
/// of the marked page 1 hits the expected index (start + size -
/// async_size = 1 either way) and pushes the window forward by its
/// size: from 2 to 4 pages (get_next_ra_size), pages 2-5, where later
/// kernels push it from 4 to 8, pages 4-11. The first READ of either
/// window goes out (nothing in flight once the first read's READs are
/// answered); the rest is skipped.
#[test]
fn a_congested_skip_shrinks_the_window_on_6_13_and_before() {
    let prog = "\"read 0+1 fd=0\", \"read 1+1 fd=0\"";
    let r = reads(&congested("L", "ra_skip_shrinks", 1, prog));
    assert!(r.contains(&(2, 3)) && !r.contains(&(4, 5)), "6.1: {r:?}");
    let r = reads(&congested("L", "", 1, prog));
    assert!(r.contains(&(4, 5)) && !r.contains(&(2, 3)), "later: {r:?}");
}

/// fuse_readahead checks congestion before it takes a READ's folios and
/// calls fuse_get_req, which waits while fc->blocked (num_background at
/// max_background): woken, it sends that READ without checking again
/// (read.rs `PH_RA_GET`, step `RaGetWait`). A writeback WRITE and the
/// window's first READ fill max_background 2; the second READ passes
/// its check (3 pages left and the first READ's folio: 4 > async_size
/// 3) and waits. When one reply leaves the connection congested
/// (threshold 1) a check then would skip (3 >= 3), and the model sends.
/// Until 5 Dec 2026 the model checked again when it woke, without the
/// previous READ's folio.
#[test]
fn a_read_woken_in_fuse_get_req_is_not_checked_again() {
    use super::read::PH_RA_GET;
    let m = model(
        from_toml(
            "kernel = \"T2\"\npages = 12\ninit_size = 12\ncached = [8]\ndirty = [8]\nmax_pages = 1\nmax_background = 2\ncongestion_threshold = 1\ndaemon_threads = 1\nthreads = [[\"read 0+1 fd=0\"], [\"wb none\"]]\n",
        )
        .unwrap(),
    );
    let woken: Vec<State> = reachable(&m)
        .into_iter()
        .filter(|s| {
            s.tasks[0].ph == PH_RA_GET
                && s.tasks[0].ra == 0b1110
                && !m.bg_blocked(s)
                && m.congested(s)
        })
        .collect();
    assert!(!woken.is_empty(), "no READ woken while congested");
    for s in woken {
        assert_eq!(s.ra_win[0].asz, 3);
        assert_eq!(task0_steps(&m, &s), [Step::RaSend]);
    }
}

/// The steps task 0 can take from `s`.
fn task0_steps(m: &FuseModel, s: &State) -> Vec<Step> {
    let mut out = Vec::new();
    m.successors(s, &mut out);
    out.iter()
        .filter(|(a, _)| a.actor == super::model::Actor::Task(0))
        .map(|(a, _)| a.step)
        .collect()
}

/// iomap's readahead (C, and T19 for 6.19) takes each folio with
/// readahead_folio before fuse_handle_readahead checks congestion at
/// the next READ's first folio: readahead_count is the pages left,
/// nothing of the previous READ. Window 0-3 (async_size 3), 1-page
/// READs: the second check counts 3 <= 3 and skips. (Found by an
/// attack on 5 Dec 2026, when the model added the previous READ's last
/// folio in every tree.)
#[test]
fn the_iomap_check_counts_only_the_pages_left() {
    let read0 = "\"read 0+1 fd=0\"";
    for k in ["T19", "C"] {
        let r = reads(&congested(k, "", 1, read0));
        assert_eq!(r, [(0, 1)].into_iter().collect(), "{k}: {r:?}");
    }
}

/// Positions of several kernel pages (conform's real_pages): FUSE's
/// folios are order-0 before the large-folio series (6.18's fs/fuse has
/// no mapping_set_large_folios), so readahead_count holds 1 page of the
/// previous READ, not the position's 3. An oversized read of 35 pages:
/// window of 32, async_size 16, READs of one 3-page position. After
/// the READ ending at page 18 the check counts 14 + 1 = 15 <= 16 and,
/// congested, skips: the READ at position 6 is never sent. (Found by
/// the same attack: the model counted 14 + 3 and always sent it.)
#[test]
fn a_position_of_several_pages_is_order_0_folios_to_the_count() {
    let mut real = [3u8; 12];
    real[10] = 2;
    let m = seq(
        &real,
        "[\"read 0+12 fd=0\"]",
        "max_pages = 1\ncongestion_threshold = 1\ndaemon_threads = 1\n",
    );
    assert_eq!(m.lay.kpage[6], 18);
    let (mut sent6, mut dropped6) = (0, 0);
    reachable_from(&m, m.initial(), |s, _a, n| {
        if s.tasks[0].ra & (1 << 5) != 0
            && s.tasks[0].ra & (1 << 6) != 0
            && n.tasks[0].ra & (1 << 6) == 0
        {
            let q = n
                .fuse_q
                .iter()
                .chain(n.bg_q.iter())
                .any(|r| matches!(*r, Req::ReadPages { first: 6, .. }));
            if q {
                sent6 += 1
            } else {
                dropped6 += 1
            }
        }
    });
    assert!(
        dropped6 > 0 && sent6 == 0,
        "sent {sent6}, dropped {dropped6}"
    );
}

/// With ra_skip_shrinks a read on its own open checks its file's f_ra,
/// which a skip of an earlier batch of the same window shrank (both
/// read_pages calls of page_cache_ra_unbounded pass &file->f_ra). read
/// 0+4 with page 4 cached: window 0-7, async_size 4; batch 0-3 (4 <=
/// 4) is skipped while congested and f_ra goes to size 4, async_size 0;
/// batch 5-7 then checks 0 >= 3, false: READ. (Found by the same
/// attack: the model checked the window's async_size, 4, and skipped.)
#[test]
fn a_shrunk_async_size_is_what_the_next_batch_checks() {
    let m = model(
        from_toml(
            "kernel = \"L\"\nvariant = [\"ra_skip_shrinks\", \"ra_count_batch\"]\npages = 12\ninit_size = 12\ncached = [4, 10]\ndirty = [10]\nmax_pages = 4\ncongestion_threshold = 1\ndaemon_threads = 1\nthreads = [[\"read 0+4\"], [\"wb none\"]]\n",
        )
        .unwrap(),
    );
    let hits: Vec<State> = reachable(&m)
        .into_iter()
        .filter(|s| {
            s.tasks[0].ph == super::read::PH_RA
                && s.tasks[0].ra == 0b1110_0000
                && m.congested(s)
                && s.tasks[0].raw.asz == 0
        })
        .collect();
    assert!(!hits.is_empty(), "no batch 5-7 after a shrinking skip");
    for s in hits {
        assert_eq!(
            task0_steps(&m, &s),
            [Step::RaSend],
            "saved {}",
            s.tasks[0].saved
        );
    }
}
