//! Traces recorded in `wbspec vm` guests on Debian's 6.12.117 and 6.1.192
//! kernels (harness/tests/traces/6.12.117/, 6.1.0-57/; docs/vm.md), judged
//! against state L without a VM: every trace's verdict is the one its
//! directory's verdicts.tsv pins, and every verdict but "conforms" names
//! the docs/findings.md entry (or the scope note) that explains it. The
//! same for the 6.18.44 recording behind finding M-ra-batch
//! (traces/ra-batch/, state T2, release label T''), M-ra-oversized
//! (traces/ra-oversized/) and M-ra-async (traces/ra-async/).
use std::path::Path;

use wbspec_harness::conform::{
    check, conform_trace, translate, Translation, Verdict, DEFAULT_BOUND,
};
use wbspec_harness::trace::parse_trace;

fn check_dir(dir: &str, state: &str) {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/traces")
        .join(dir);
    let findings =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/findings.md"))
            .unwrap();
    let table = std::fs::read_to_string(d.join("verdicts.tsv")).unwrap();
    let mut pinned = std::collections::BTreeMap::new();
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 3, "{dir}/verdicts.tsv: {line}");
        pinned.insert(f[0].to_string(), (f[1].to_string(), f[2].to_string()));
    }
    let mut traces: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    traces.sort();
    assert_eq!(
        traces.len(),
        pinned.len(),
        "{dir}: traces vs verdicts.tsv rows"
    );
    let mut diffs = vec![];
    for p in traces {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let ev = parse_trace(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let rel = ev[0].kernel.clone().unwrap();
        assert_eq!(
            wbspec_harness::kernels::state_of(&rel).map(|r| r.label.as_str()),
            Some(state),
            "{name}: {rel}"
        );
        let c = conform_trace(&ev, None).unwrap();
        let (want, why) = pinned
            .get(&name)
            .unwrap_or_else(|| panic!("{dir}: {name} has no verdicts.tsv row"));
        if &c.word != want {
            diffs.push(format!("{name}\t{}\t{why}", c.word));
        }
        if c.word != "conforms" {
            assert_ne!(why, "-", "{dir}/{name}: '{}' needs an explanation", c.word);
            let id = why.split_whitespace().next().unwrap();
            assert!(
                why.starts_with("scope:") || findings.contains(&format!("{id}:")),
                "{dir}/{name}: '{why}' is not a docs/findings.md entry"
            );
        }
    }
    assert!(
        diffs.is_empty(),
        "{dir}: verdicts differ from verdicts.tsv:\n{}",
        diffs.join("\n")
    );
}

/// The recording behind finding M-ra-batch (6.18.44, state T2).
#[test]
fn ra_batch_traces_have_their_pinned_verdicts() {
    check_dir("ra-batch", "T''");
}

/// The recording behind finding M-ra-oversized (6.18.44, state T2);
/// models/src/fuse/tests_layout.rs shows the model rejects it without
/// the initial-window branch.
#[test]
fn ra_oversized_trace_has_its_pinned_verdict() {
    check_dir("ra-oversized", "T''");
}

/// The recordings behind finding M-ra-async (6.18.44, state T2): a
/// sequential reader's async readahead; models/src/fuse/tests_async_ra.rs
/// shows the windows.
#[test]
fn ra_async_traces_have_their_pinned_verdicts() {
    check_dir("ra-async", "T''");
}

/// The recordings behind finding M-ra-stale-asz (6.18.44, state T2,
/// congestion_threshold 1): two that conform since the congestion
/// check reads the file's async_size, one still a false VIOLATION (the
/// open gap: a VIOLATION is not refined).
#[test]
fn ra_congested_traces_have_their_pinned_verdicts() {
    check_dir("ra-congested", "T''");
}

/// Scenarios r_ra_cong_batch and r_ra_cong_shrink (max_read 8192 or
/// 4096, max_background 1, congestion 1; 5 Dec 2026) on Debian's 6.1
/// and 6.12 in a wbspec vm guest and on this host's 6.18.44: the
/// kernels' READs differ as the model's switches ra_count_batch and
/// ra_skip_shrinks say (docs/findings.md M-ra-stale-asz), each trace
/// conforms as its kernel's, and the 6.1 and 6.12 ones read as a 6.18
/// kernel's are VIOLATIONs at their READ of page 2. The 6.18
/// r_ra_cong_shrink was a false VIOLATION (at the READ of page 1) while
/// the model counted only the pages left.
#[test]
fn ra_cong_traces_show_how_each_kernel_counts_and_shrinks() {
    check_dir("ra-cong-6.1", "L (6.1.y)");
    check_dir("ra-cong-6.12", "L+dio (6.12.64+)");
    check_dir("ra-cong-6.18", "T''");
    let reads = |dir: &str, name: &str| -> Vec<(u64, u64)> {
        let p =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/traces/{dir}/{name}.jsonl"));
        parse_trace(&std::fs::read_to_string(p).unwrap())
            .unwrap()
            .iter()
            .filter(|e| e.ev == "req" && e.op.as_deref() == Some("READ"))
            .map(|e| (e.offset.unwrap() / 4096, e.size.unwrap() / 4096))
            .collect()
    };
    for old in ["ra-cong-6.1", "ra-cong-6.12"] {
        // __readahead_batch: 2 left + the whole previous READ > 3
        assert_eq!(reads(old, "r_ra_cong_batch"), [(0, 2), (2, 2)], "{old}");
        // the skip shrank the window: the next one is pages 2-5
        assert_eq!(
            reads(old, "r_ra_cong_shrink"),
            [(0, 1), (1, 1), (2, 1)],
            "{old}"
        );
    }
    // __readahead_folio: 2 left + 1 folio <= 3, skipped
    assert_eq!(reads("ra-cong-6.18", "r_ra_cong_batch"), [(0, 2)]);
    // no shrink: the next window is pages 4-11
    assert_eq!(
        reads("ra-cong-6.18", "r_ra_cong_shrink"),
        [(0, 1), (1, 1), (4, 1)]
    );
    for old in ["ra-cong-6.1", "ra-cong-6.12"] {
        for name in ["r_ra_cong_batch", "r_ra_cong_shrink"] {
            let p = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("tests/traces/{old}/{name}.jsonl"));
            let mut ev = parse_trace(&std::fs::read_to_string(&p).unwrap()).unwrap();
            ev[0].kernel = Some("6.18.44".into());
            let c = conform_trace(&ev, None).unwrap();
            assert!(
                c.word.starts_with("VIOLATION")
                    && c.word.contains("req READ u=")
                    && c.word.contains("off=8192"),
                "{old}/{name} as 6.18's: {}",
                c.word
            );
        }
    }
}

/// The recording behind finding M-maxpages (6.18.44, state T2): a
/// false VIOLATION of conformance's max_pages, counted in positions,
/// pinned as the open gap it is.
#[test]
fn maxpages_trace_has_its_pinned_verdict() {
    check_dir("maxpages", "T''");
}

/// The recordings behind finding M-reclaim-clean (6.18.44, state T2):
/// they conform only with the environment's reclaim of clean folios,
/// and without it the model still rejects them (the strict search is
/// what the verdict's "+clean-page reclaim" reports).
#[test]
fn reclaim_traces_have_their_pinned_verdicts() {
    check_dir("reclaim", "T''");
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces/reclaim");
    for name in ["rand_1_refault_p2", "rand_1_reread_p1"] {
        let t = std::fs::read_to_string(d.join(format!("{name}.jsonl"))).unwrap();
        let ev = parse_trace(&t).unwrap();
        let Ok(Translation::Modelled(m)) = translate(&ev, None) else {
            panic!("{name}: not modelled")
        };
        assert!(!m.reclaim);
        let v = check(&m, DEFAULT_BOUND);
        assert!(
            matches!(v, Verdict::Violation { .. }),
            "{name}: {}",
            v.short()
        );
    }
}

#[test]
fn debian_6_12_117_traces_have_their_pinned_verdicts() {
    check_dir("6.12.117", "L+dio (6.12.64+)");
}

#[test]
fn debian_6_1_192_traces_have_their_pinned_verdicts() {
    check_dir("6.1.0-57", "L (6.1.y)");
}

/// r_ra_skip on 6.1.192 (reads of pages 0, 4 and 13 of 32) needs
/// ra_ondemand, and r_ra_midread (reads of pages 2, 8, then 2-5 of 16)
/// ra_prev_pos_each_copy: the 6.1 release's flags give both, and the
/// same traces read as a 6.12.0-63 kernel's (L without them: 6.11's
/// page_cache_sync_ra, 6.6's prev_pos) are VIOLATIONs at the READ of
/// pages 4-27 (that model reads 4-12) and of pages 3-7 (that model
/// reads 3-5) (docs/findings.md M-ra-ondemand).
#[test]
fn the_6_1_skip_read_needs_ondemand_readahead() {
    for (name, read) in [
        ("r_ra_skip", "off=16384 size=98304"),
        ("r_ra_midread", "off=12288 size=20480"),
    ] {
        the_6_1_trace_needs_its_flags(name, read);
    }
}

fn the_6_1_trace_needs_its_flags(name: &str, read: &str) {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/traces/6.1.0-57/{name}.jsonl"));
    let mut ev = parse_trace(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let c = conform_trace(&ev, None).unwrap();
    assert_eq!(c.word, "conforms");
    let rel = "6.12.40-amd64".to_string();
    let r = wbspec_harness::kernels::state_of(&rel).unwrap();
    // 6.12 shares 6.1's fuse_readahead and read_pages (ra_count_batch,
    // ra_skip_shrinks), not its readahead windows
    assert_eq!(r.label, "L (6.12.0-63)");
    assert_eq!(r.flags, ["ra_skip_shrinks", "ra_count_batch"]);
    ev[0].kernel = Some(rel);
    let c = conform_trace(&ev, None).unwrap();
    assert!(
        c.word.starts_with("VIOLATION") && c.word.contains(read),
        "{name}: {}",
        c.word
    );
}

/// The 6.1 recording of r_ra_skip without its read of page 13 (the
/// scenario's first version): read as a 6.12.0-63 kernel's, whose
/// model reads pages 4-12 where 6.1 READ 4-27, the split the trace
/// names puts pages 5-27 in one position, and the model's window,
/// ending inside it, is taken whole: the search alone conforms.
/// conform splits the position where the window ended (pages 12, 13)
/// and checks again: a VIOLATION. As a 6.1 kernel's (ra_ondemand) it
/// conforms either way (docs/conformance.md §7).
#[test]
fn a_window_end_inside_a_position_is_refined() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces/6.1.0-57/r_ra_skip.jsonl");
    let all = parse_trace(&std::fs::read_to_string(&p).unwrap()).unwrap();
    // drop the pread of page 13 (offset 53248): its call and its ret
    let mut ev = vec![];
    let mut dropping = false;
    for e in all {
        let pread = e.ev == "mark" && e.syscall.as_deref() == Some("pread");
        if pread
            && e.kind.as_deref() == Some("call")
            && e.args.as_deref().is_some_and(|a| a.contains("off=53248"))
        {
            dropping = true;
            continue;
        }
        if dropping && pread && e.kind.as_deref() == Some("ret") {
            dropping = false;
            continue;
        }
        ev.push(e);
    }
    assert_eq!(conform_trace(&ev, None).unwrap().word, "conforms");
    ev[0].kernel = Some("6.12.40-amd64".to_string());
    // the split the trace names: the search alone conforms
    let Translation::Modelled(m) = translate(&ev, None).unwrap() else {
        panic!("not modelled")
    };
    assert!(m.regions.contains(&(5, 28)), "{:?}", m.regions);
    assert!(matches!(check(&m, DEFAULT_BOUND), Verdict::Conforms { .. }));
    // conform refines it
    let c = conform_trace(&ev, None).unwrap();
    assert!(
        c.word.starts_with("VIOLATION") && c.word.contains("off=16384 size=98304"),
        "{}",
        c.word
    );
}
