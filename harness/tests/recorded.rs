//! Conformance of traces recorded on Linux 6.18.44 (harness/tests/traces/),
//! so the check runs without root or /dev/fuse: every recorded trace of a
//! modelled scenario conforms, the others are reported as not modelled, and
//! deliberately altered traces (traces/altered/) do not conform.
use std::path::Path;

use wbspec_harness::conform::conform_trace;
use wbspec_harness::trace::parse_trace;

fn verdict(p: &Path) -> (String, bool) {
    let text = std::fs::read_to_string(p).unwrap();
    let ev = parse_trace(&text).unwrap();
    let (word, ok, _) = conform_trace(&ev, None).unwrap();
    (word, ok)
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

/// Scenarios the model cannot express (docs/conformance.md §5):
/// copy_file_range's COPY_FILE_RANGE_64 is answered inside fuser, so
/// the trace lacks a request; r_reclaim_*: the memcg-v1 child's reclaim
/// is not a model task (its verdicts are the catalogue's reclaim checks,
/// docs/findings.md).
const NOT_MODELLED: &[&str] = &[
    "n_copy_range",
    "r_reclaim_nowbc",
    "r_reclaim_wbc",
    "r_short_read",
];
/// Scenarios checked up to a cut, the rest not modelled (docs/conformance.md
/// §2): a_nowbc's 2 MiB write-through pwrite goes as two WRITEs.
const TO_CUT: &[&str] = &["a_nowbc"];

#[test]
fn recorded_traces_conform() {
    let fs = files("6.18.44");
    assert_eq!(fs.len(), 55);
    for p in fs {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let (word, ok) = verdict(&p);
        assert!(ok, "{name}: {word}");
        if NOT_MODELLED.contains(&name.as_str()) {
            assert!(word.starts_with("not-modelled"), "{name}: {word}");
        } else if TO_CUT.contains(&name.as_str()) {
            assert!(word.starts_with("conforms-to-cut"), "{name}: {word}");
        } else {
            assert_eq!(word, "conforms", "{name}");
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
        let (word, _) = verdict(&p);
        assert_eq!(word, "conforms", "{}", p.display());
    }
}

#[test]
fn altered_traces_do_not_conform() {
    // where each must be rejected (docs/conformance.md §4)
    let at: &[(&str, &str)] = &[
        ("a_nowbc_wrong_letter", "req WRITE"),
        ("a_nowbc_write_early", "req WRITE"),
        ("b_ftrunc_setattr_early", "req SETATTR"),
        ("b_otrunc_atomic_open_early", "req OPEN"),
        ("b_otrunc_setattr_early", "req SETATTR"),
        ("b_rewrite_stale", "req WRITE"),
        ("c_store_early", "ret T1 store"),
        ("d2_held_dio_early", "req WRITE"),
        ("d3_read_first", "req READ"),
        ("d_dirty_open_ret_early", "ret T0 open"),
        ("d_open_held_ret_early", "ret T1 open"),
        ("h_crop_no_crop", "req WRITE"),
        ("k_flush_early", "req FLUSH"),
        ("k_fsync_early", "req FSYNC"),
        ("r_reread_dio_stale", "ret T0 pread"),
    ];
    let fs = files("altered");
    assert_eq!(fs.len(), at.len());
    for p in fs {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let (word, ok) = verdict(&p);
        let want = at.iter().find(|a| a.0 == name).expect("listed").1;
        assert!(
            !ok && word.starts_with("VIOLATION") && word.contains(want),
            "{name}: {word} (expected a violation at {want})"
        );
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
        let (word, ok) = verdict(&p);
        assert!(
            word.starts_with("not-modelled (request 20 not recorded"),
            "{}: {word}",
            p.display()
        );
        assert!(ok, "not modelled is not a failure");
    }
}
