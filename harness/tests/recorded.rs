//! Conformance of traces recorded on Linux 6.18.44 (harness/tests/traces/),
//! so the check runs without root or /dev/fuse: every recorded trace of a
//! modelled scenario conforms, the others are reported as not modelled, and
//! deliberately altered traces (traces/altered/) do not conform.
use std::path::Path;

use wbspec_harness::conform::{conform_trace, declared, judge, Class, Declared, Judged};
use wbspec_harness::trace::parse_trace;

fn verdict(p: &Path) -> (String, Class) {
    let text = std::fs::read_to_string(p).unwrap();
    let ev = parse_trace(&text).unwrap();
    let c = conform_trace(&ev, None).unwrap();
    (c.word, c.class)
}

/// The trace at `rel` under tests/traces, and its mapping onto the model
/// (it must be modelled).
fn modelled(
    rel: &str,
) -> (
    Vec<wbspec_harness::trace::Event>,
    Box<wbspec_harness::conform::Mapping>,
) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/traces")
        .join(rel);
    let ev = parse_trace(&std::fs::read_to_string(p).unwrap()).unwrap();
    match wbspec_harness::conform::translate(&ev, None) {
        Ok(wbspec_harness::conform::Translation::Modelled(m)) => (ev, m),
        other => panic!("{rel}: not modelled: {other:?}"),
    }
}

fn files(dir: &str) -> Vec<std::path::PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/traces")
        .join(dir);
    let mut v: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    v.sort();
    v
}

/// Scenarios the model cannot express (docs/conformance.md §5), as their
/// definitions declare (`Scenario::outside`): copy_file_range's
/// COPY_FILE_RANGE_64 is answered inside fuser, so the trace lacks a
/// request; r_reclaim_*: the memcg-v1 child's reclaim is not a model task
/// (its verdicts are the catalogue's reclaim checks, docs/findings.md);
/// b_wait_after: sync_file_range with SYNC_FILE_RANGE_WAIT_* has no model
/// task (the model's is SYNC_FILE_RANGE_WRITE);
/// r_short_read: fstat on a write-through mount and the server-side
/// truncation have no mapping.
const NOT_MODELLED: &[&str] = &[
    "b_wait_after",
    "n_copy_range",
    "r_reclaim_nowbc",
    "r_reclaim_wbc",
    "r_short_read",
];

/// The scenario table declares exactly these outside the model, and every
/// recorded trace behaves as its scenario declares: the others conform,
/// these are not modelled for the declared reason.
#[test]
fn recorded_traces_conform() {
    let mut outside: Vec<&str> = wbspec_harness::scenarios::all()
        .iter()
        .filter(|s| s.outside.is_some())
        .map(|s| s.name)
        .collect();
    outside.sort();
    assert_eq!(outside, NOT_MODELLED);
    let fs = files("6.18.44");
    assert_eq!(fs.len(), 80);
    for p in fs {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let ev = parse_trace(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let c = conform_trace(&ev, None).unwrap();
        let d = declared(&name, &ev);
        assert_eq!(judge(&c, &d), Judged::AsDeclared, "{name}: {}", c.word);
        if NOT_MODELLED.contains(&name.as_str()) {
            assert_eq!(c.class, Class::NotModelled, "{name}: {}", c.word);
            assert!(matches!(d, Declared::Outside(_)), "{name}");
        } else {
            assert_eq!(c.class, Class::Conforms, "{name}: {}", c.word);
            // (a trace of several files lists each file's verdict:
            // p_two_files, docs/conformance.md "Several files")
            let files = c.word.strip_prefix("conforms [2 files: ");
            assert!(
                c.word == "conforms"
                    || files == Some("f: conforms; g: conforms]") && name == "p_two_files",
                "{name}: {}",
                c.word
            );
            assert_eq!(d, Declared::Conforms, "{name}");
        }
    }
}

/// Second recordings of the scenarios that open(2) made modelled (b_otrunc,
/// b_otrunc_atomic, d_dirty_open, e_dirty_open, d_open_held, m_dio_mmap,
/// m_dio_mmap_allow), from a later run whose interleavings differ from
/// traces/6.18.44/ where the scheduler allowed: all conform.
#[test]
fn rerun_traces_conform() {
    let fs = files("6.18.44-rerun");
    assert_eq!(fs.len(), 7);
    for p in fs {
        let (word, class) = verdict(&p);
        assert_eq!(class, Class::Conforms, "{}: {word}", p.display());
    }
}

/// How an altered trace must be refused.
enum Refused {
    /// A VIOLATION at this event (exit 1).
    At(&'static str),
    /// Bad input naming this problem (exit 2).
    Bad(&'static str),
    /// Not modelled, for this reason (exit 3).
    NotModelled(&'static str),
}

#[test]
fn altered_traces_do_not_conform() {
    use Refused::*;
    // where or why each must be rejected (docs/conformance.md §4)
    let at: &[(&str, Refused)] = &[
        ("a_nowbc_wrong_letter", At("req WRITE")),
        ("a_nowbc_write_early", At("req WRITE")),
        // (a recording with max_write 64 KiB whose WRITEs were merged:
        // one of 40 pages; one of 24 pages after one of 16. The model
        // notes the cap inside the position and conformance splits it
        // there: docs/findings.md M-maxpages)
        ("maxpages_position_over_cap", At("req WRITE u=14 off=65536 size=98304")),
        ("maxpages_write_over_cap", At("req WRITE u=12 off=0 size=163840")),
        // (traces/record/fio_default_hints.jsonl with its fadvise RANDOM
        // made NORMAL: the reads after it would read ahead, and the 4 KiB
        // READ the kernel sent is one no window gives)
        (
            "fio_hints_random_made_normal",
            At("req READ u=50 off=0 size=4096"),
        ),
        (
            "b_ftrunc_dup_reply",
            Bad("#20 a second reply to WRITE u=10"),
        ),
        (
            "b_ftrunc_ftruncate_ret_7",
            At("ret T1 ftruncate 7 errno=0 dur_us=300266): the model cannot produce the return of T2 truncate 1 (the trace returns 7, the model's task returns 0)"),
        ),
        (
            "b_ftrunc_no_ret",
            Bad("T1's ftruncate (call #17) never returns"),
        ),
        ("b_ftrunc_setattr_early", At("req SETATTR")),
        (
            "b_ftrunc_short_pwrite",
            At("ret T0 pwrite 8192 errno=0 dur_us=70): the model cannot produce the return of T0 write 0+2 (the trace returns 8192, the model's task returns 16384)"),
        ),
        (
            "b_ftrunc_written_long",
            Bad("WRITE reply u=10 writes 32768 bytes of a 16384-byte request"),
        ),
        (
            "b_ftrunc_written_short",
            NotModelled("WRITE reply u=10 writes 8192 of 16384 bytes"),
        ),
        ("b_otrunc_atomic_open_early", At("req OPEN")),
        ("b_otrunc_setattr_early", At("req SETATTR")),
        (
            "b_otrunc_setattr_wrong_pid",
            Bad("SETATTR u=14 from pid 24720, which is not the pid of a pending call"),
        ),
        ("b_rewrite_stale", At("req WRITE")),
        ("c_store_early", At("ret T1 store")),
        ("d2_held_dio_early", At("req WRITE")),
        ("d3_read_first", At("req READ")),
        (
            "d3_read_wrong_nodeid",
            Bad("READ u=14 for nodeid 3, which no LOOKUP or CREATE reply returned"),
        ),
        ("d3_schema_2", Bad("header schema 2 is unknown")),
        (
            "d3_short_pread",
            At("reply READ u=14): the model cannot produce a reply to READ(p0) returning [p0:v3] (after it the model's direct read returns [8192] bytes of the server's data, not what the trace's read returned)"),
        ),
        (
            "d3_unknown_event",
            Bad("#2 unknown event kind \"annotation\""),
        ),
        ("d_dirty_open_ret_early", At("ret T0 open")),
        ("d_open_held_ret_early", At("ret T1 open")),
        ("h_crop_no_crop", At("req WRITE")),
        ("k_flush_early", At("req FLUSH")),
        // validation's "not modelled" holds for the fuse-gup traces too
        (
            "l_dio_cow_short_write",
            NotModelled("WRITE reply u=14 writes 8192 of 16384 bytes: a short write"),
        ),
        (
            "l_dio_cow_write_pid0",
            NotModelled("WRITE u=14 from pid 0 (a kernel thread)"),
        ),
        ("k_fsync_early", At("req FSYNC")),
        // aio (issue 22): an extending (blocking) aio write's io_submit
        // returning before its WRITE is answered; a buffered read after
        // the completion returning the new data (F-aio-stale says the
        // page cached by the racing read is served); a completion reaped
        // before the WRITE reply
        ("j_aio_extend_submit_early", At("ret T1 io_submit")),
        ("j_aio_stale_fresh", At("ret T0 pread")),
        ("j_aio_trunc_reaped_early", At("ret T0 io_getevents")),
        ("r_reread_dio_stale", At("ret T0 pread")),
        // sizes below a page, checked per 1 KiB unit: the reader's middle
        // unit holds A where the page had zeros, the WRITE lost B, a read
        // returns 2K of a 1K file, SETATTR carries 2K for ftruncate(1K)
        // and a queued writeback WRITE sent whole past the new 1K EOF
        ("u_crop_eof_not_cropped", At("req WRITE")),
        // every size a whole 2 KiB, but the WRITE's second 1 KiB of its
        // first 2 KiB is stale (A for B): checked in 1 KiB units, not 2
        ("u_crop_eof_2k_write_half_stale", At("req WRITE")),
        // the WRITE's page tag B and its unit tag A contradict (a page's
        // tag is its first unit's); the unit tag alone had conformed
        (
            "u_crop_eof_unit_tags_disagree",
            Bad("unit tags \"A\" disagree with page tags \"B\""),
        ),
        ("u_extend_eof_read_stale_zeros", At("ret T2 pread")),
        ("u_extend_eof_read_write_loses_b", At("req WRITE")),
        ("u_trunc_eof_wb_read_past_eof", At("reply READ")),
        ("u_trunc_eof_wb_setattr_2k", At("req SETATTR")),
        // write-through below a page: the reader's READ sent while the
        // partial write's WRITE is held (and returning the server's old
        // A there): the model keeps that folio, not uptodate, locked
        // until the WRITE's reply (fuse_fill_write_pages' folio_locked)
        ("u_wt_partial_lock_read_early", At("req READ")),
        // the transport: a request read after the fusectl abort; an
        // -EINTR reply with no signal (FUSE_INTERRUPT without one); an
        // INTERRUPT naming a request already answered; a direct write
        // returning EINTR whose WRITE was answered (the interrupt ignored)
        // a SIGKILL takes back only a request the daemon has not read:
        // t_kill_pending with the WRITE read and answered before the kill
        // cannot return -EINTR; with SIGUSR1 for the SIGKILL, the missing
        // unique of the taken-back WRITE is a gap again
        (
            "t_kill_pending_after_read",
            At("ret T1 pwrite -1 errno=4 dur_us=0): the model cannot produce the return of T0 dio-write 0+1 (the trace returns -1, the model's task has not failed)"),
        ),
        (
            "t_kill_pending_not_fatal",
            NotModelled("request 10 not recorded"),
        ),
        // the missing unique moved before the killed task's pwrite began
        // (CREATE 6 -> 8, LOOKUP 8 -> 10): no take-back can be that
        // request, so the gap is a request the trace lacks again
        // SIGTERM for SIGUSR1: a signal whose disposition the model
        // does not know (a fatal one would end the task)
        (
            "t_signal_ignored_sigterm",
            NotModelled("a signal other than SIGUSR1 or SIGKILL"),
        ),
        (
            "t_kill_pending_gap_early",
            NotModelled("request 6 not recorded"),
        ),
        (
            "t_abort_trunc_setattr_after",
            NotModelled("SETATTR u=12 read after the abort"),
        ),
        (
            "t_signal_eintr_no_signal",
            NotModelled("a FUSE_INTERRUPT with no signal task before it"),
        ),
        (
            "t_signal_eintr_wrong_target",
            Bad("INTERRUPT u=7 for unique 6, which is not a request read and unanswered"),
        ),
        (
            "t_signal_ignored_eintr_ret",
            At("ret T1 pwrite -1 errno=4 dur_us=300665): the model cannot produce the return of T0 dio-write 0+1 (the trace returns -1, the model's task has not failed)"),
        ),
        // server notifications (server/notify.rs): NOTIFY_INVAL_INODE
        // returning while the writeback WRITE of its page is held (the
        // walk waits for writeback, F-notify-blocks); returning before
        // the WRITE that launders the page written again is read
        (
            "n_inval_wb_ret_early",
            At("ret N1 notify_inval 0 errno=0 dur_us=329): the model cannot produce the return of T2 notify-inval 0+1 whole"),
        ),
        // the notification returning while the readahead READ it
        // waits on (folio lock) is still held
        (
            "n_inval_read_locked_ret_early",
            At("ret N1 notify_inval 0 errno=0 dur_us=225): the model cannot produce the return of T4 notify-inval 0+1"),
        ),
        // the server's change (its `server changed` note) before the
        // held WRITE of A is answered: a later READ cannot carry N, and
        // the held READ, answered after the change, cannot carry A
        (
            "n_inval_wb_read_server_change",
            At("reply READ u=12): the model cannot produce a reply to READ(p0) returning [p0:v4]"),
        ),
        (
            "n_inval_read_locked_stale_read",
            At("reply READ u=18): the model cannot produce a reply to READ(p0) returning [p0:v2]"),
        ),
        (
            "n_inval_redirty_no_launder",
            At("ret N1 notify_inval 0 errno=0 dur_us=224): the model cannot produce the return of T3 notify-inval 0+1 whole"),
        ),
        (
            "w_setattr_error_ret_0",
            At("ret T1 ftruncate 0 errno=0 dur_us=200415): the model cannot produce the return of T1 truncate 1 (the trace returns 0, the model's task failed (-EIO))"),
        ),
    ];
    let fs = files("altered");
    assert_eq!(fs.len(), at.len());
    for p in fs {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let want = &at.iter().find(|a| a.0 == name).expect("listed").1;
        let text = std::fs::read_to_string(&p).unwrap();
        let got = conform_trace(&parse_trace(&text).unwrap(), None);
        match (want, got) {
            (At(w), Ok(c)) => assert!(
                c.class == Class::DoesNotConform
                    && c.word.starts_with("VIOLATION")
                    && c.word.contains(w),
                "{name}: {} (expected a violation at {w})",
                c.word
            ),
            (NotModelled(w), Ok(c)) => assert!(
                c.class == Class::NotModelled
                    && c.word.starts_with("not-modelled")
                    && c.word.contains(w),
                "{name}: {} (expected not modelled: {w})",
                c.word
            ),
            (Bad(w), Err(e)) => assert!(
                e.starts_with("bad trace: ") && e.contains(w) && !e.contains('\n'),
                "{name}: {e} (expected bad input: {w})"
            ),
            (_, got) => panic!("{name}: {got:?}"),
        }
    }
}

/// A trace with a request deleted (a gap in the uniques) is never
/// "conforms": traces/gap/ holds r_reread_dio with its re-read's READ
/// deleted and the read's data made stale, without renumbering.
#[test]
fn a_missing_request_is_not_modelled() {
    let fs = files("gap");
    assert_eq!(fs.len(), 1);
    for p in fs {
        let (word, class) = verdict(&p);
        assert!(
            word.starts_with("not-modelled (request 20 not recorded"),
            "{}: {word}",
            p.display()
        );
        assert_eq!(class, Class::NotModelled, "{word}");
    }
}

/// docs/findings.md M-ra-prev-pos, once a model gap: a real 6.18.44
/// trace (random seed 2^64-1) whose read right after a cache hit on the
/// same fd gets the initial readahead window (READ of pages 1-2). The
/// model now keeps the open file's ra->prev_pos (`read A+N fd=F`; conform
/// gives the reads of one open one fd), so the trace conforms; before, the
/// model's fresh-readahead-state read offered READ(p1) alone.
/// rand_5_5000 with buffered reads (docs/findings.md, M-ra-prev-pos, "Long
/// plans with buffered reads"), recorded before ServerConfig::check: its
/// header says max_background 1 and congestion_threshold 8, but fuser
/// sent min(8, 1) = 1 in FUSE_INIT, so the kernel skipped a readahead
/// page as congested. Read at the threshold the kernel had, all 5,000
/// syscalls conform.
#[test]
fn seed5_long_trace_conforms_at_the_threshold_the_kernel_had() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/traces/ra-state/rand_5_5000_reads.jsonl.xz");
    let out = std::process::Command::new("xz")
        .arg("-dc")
        .arg(&p)
        .output()
        .expect("xz (.ci/setup installs xz-utils)");
    assert!(out.status.success());
    let ev = parse_trace(&String::from_utf8(out.stdout).unwrap()).unwrap();
    let h = &ev[0];
    assert_eq!(h.ev, "header");
    let cfg = h.config.as_ref().unwrap();
    assert_eq!(
        (&cfg["max_background"], &cfg["congestion_threshold"]),
        (&serde_json::json!(1), &serde_json::json!(8))
    );
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.word, "conforms", "{}", c.word);
}

/// `wbspec record --max-write 8192` of two 8K direct writes and a buffered
/// 16K read on 6.18.44 (docs/findings.md, M-read-max-pages): the kernel's
/// one READ of 16K conforms because the model's READ cap is fc->max_pages
/// (32 pages, `read_max_pages`), not max_write's 2 pages.
#[test]
fn a_readahead_read_above_max_write_conforms() {
    let (ev, m) = modelled("max-write/read_16k_max_write_8k.jsonl");
    assert_eq!((m.cfg.max_pages, m.cfg.read_max_pages), (1, 2));
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.word, "conforms", "{}", c.word);
}

#[test]
fn readahead_after_a_hit_on_the_same_fd_conforms() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/traces/ra-prev-pos/rand_18446744073709551615.jsonl"),
    )
    .unwrap();
    let c = conform_trace(&parse_trace(&text).unwrap(), None).unwrap();
    assert_eq!(c.word, "conforms", "{}", c.word);
}

/// `wbspec record --max-write 2097152` of one 2 MiB O_DIRECT pwrite from
/// a page-aligned buffer on 6.18.44: the kernel sent WRITE 1 MiB + WRITE
/// 1 MiB (fuse_direct_io's `iov_iter_npages(iter, fc->max_pages)`, with
/// fc->max_pages 256 though fuser sent 512), so the trace is not the
/// model's one request: not modelled, naming fc->max_pages. It was a
/// VIOLATION while the direct-write cap was max_write alone.
#[test]
fn a_direct_write_cut_at_fc_max_pages_is_not_modelled() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/traces/max-write/dio_write_2m_max_write_2m.jsonl"),
    )
    .unwrap();
    let ev = parse_trace(&text).unwrap();
    let sizes: Vec<u64> = ev
        .iter()
        .filter(|e| e.ev == "req" && e.op.as_deref() == Some("WRITE"))
        .map(|e| e.size.unwrap_or(0))
        .collect();
    assert_eq!(sizes, [1 << 20, 1 << 20]);
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.class, Class::NotModelled, "{}", c.word);
    assert!(
        c.word
            .contains("a direct I/O of 2097152 bytes above fc->max_pages (1048576 bytes)"),
        "{}",
        c.word
    );
}

/// fio's buffered randrw job with its defaults for `--fallocate` and
/// `--fadvise_hint` (`wbspec record -- fio --name=j --filename={mnt}/f
/// --size=16k --bs=4k --rw=randrw --verify=crc32c --do_verify=1
/// --verify_state_save=0 --unlink=0 --number_ios=64 --output=/dev/null
/// --ioengine=psync`, Linux 6.18.44, fio 3.33, 4 Dec 2026): its
/// fallocate failed (the server answers ENOSYS), and its two opens after
/// the layout advise RANDOM, so every read READs its 4 KiB alone
/// (force_page_cache_ra). It conforms with the reads mapped `random`;
/// the same trace with the advice made NORMAL is a VIOLATION
/// (traces/altered/fio_hints_random_made_normal.jsonl).
#[test]
fn fio_with_its_default_hints_conforms() {
    let (ev, m) = modelled("record/fio_default_hints.jsonl");
    assert_eq!(m.filtered["syscall fadvise64 RANDOM/NORMAL"], 2);
    assert_eq!(m.filtered["syscall fallocate (failed, no page touched)"], 1);
    let random = m
        .cfg
        .tasks
        .iter()
        .filter(|t| matches!(t, wbspec_models::fuse::TaskSpec::Read { random: true, .. }))
        .count();
    assert_eq!(random, 4, "{:?}", m.cfg.tasks);
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.word, "conforms", "{}", c.word);
}

/// fuse_readahead skips a window while congested when the file's
/// ra->async_size covers it, and a window that leaves file->f_ra alone
/// (a standalone read, do_page_cache_ra(req, 0); a read with
/// FMODE_RANDOM, force_page_cache_ra) is checked against the file's
/// older async_size (docs/findings.md M-ra-stale-asz). Recorded with
/// `wbspec record --cong 1` on 6.18.44 (4 Dec 2026, by an attack on the
/// FMODE_RANDOM change): a 9-page read at 0 leaves async_size 23; with a
/// background WRITE in flight, a 10-page standalone read at page 100
/// (standalone_read_congested), or after fadvise RANDOM a 10-page read
/// at 0 (random_read_congested), is skipped and read a folio at a time.
/// Both were false VIOLATIONs while such windows carried async_size 0.
#[test]
fn windows_that_leave_the_files_readahead_state_are_skipped_while_congested() {
    for name in ["standalone_read_congested", "random_read_congested"] {
        let (ev, m) = modelled(&format!("ra-congested/{name}.jsonl"));
        assert_eq!(m.cfg.congestion_threshold, Some(1), "{name}");
        let c = conform_trace(&ev, None).unwrap();
        assert_eq!(c.word, "conforms", "{name}: {}", c.word);
    }
}

/// The last gap of docs/findings.md M-ra-stale-asz: a 40-page read at
/// 0 while congested, whose async window (pages 64-95) the kernel
/// skipped, ends inside the position of pages 64-199 that the trace
/// alone names, and the model never skips part of a position: a
/// VIOLATION at the FLUSH. Refinement (docs/conformance.md §7) splits
/// that position where the model's window ended, and the finer split
/// conforms. Until 5 Dec 2026 only conforming verdicts were refined and
/// this recording was a false VIOLATION.
#[test]
fn a_violation_whose_window_ends_inside_a_position_is_refined() {
    let (ev, m) = modelled("ra-congested/async_window_inside_position.jsonl");
    // the split the trace names alone does not conform...
    let coarse = wbspec_harness::conform::check(&m, 200_000);
    assert!(
        matches!(coarse, wbspec_harness::conform::Verdict::Violation { .. }),
        "{}",
        coarse.short()
    );
    // ...the refined one does
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.word, "conforms", "{}", c.word);
}
