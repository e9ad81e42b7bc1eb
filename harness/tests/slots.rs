//! Task slots (harness/src/conform/slots.rs): a trace checked in fewer
//! task slots than it has syscalls, so that slots and data versions are
//! reused, gets the verdict it gets with one slot per syscall, or stops
//! at a model limit (inconclusive, saying which) — never another verdict.
//! Every recorded trace the model expresses is checked with 2, 3 and 4
//! slots.
use std::path::Path;

use wbspec_harness::conform::{check, check_in_slots, translate, Translation};
use wbspec_harness::trace::parse_trace;

#[test]
fn fewer_slots_give_the_same_verdict_or_a_named_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces");
    let (mut same_reused, mut limits, mut total) = (0, 0, 0);
    for dir in ["6.18.44", "6.18.44-rerun", "6.12.117", "6.1.0-57"] {
        let mut fs: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        fs.sort();
        for p in fs {
            let ev = parse_trace(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let Ok(Translation::Modelled(m)) = translate(&ev, None) else {
                continue;
            };
            let full = check(&m, 2_000_000);
            for cap in [2, 3, 4] {
                if m.cfg.tasks.len() <= cap {
                    continue;
                }
                total += 1;
                let v = check_in_slots(&m, 2_000_000, cap);
                match (full.kind(), v.kind()) {
                    (a, b) if a == b => same_reused += 1,
                    (_, "limit") => limits += 1,
                    (a, b) => panic!(
                        "{}: {a} with one slot per task, {b} with {cap} slots: {}",
                        p.display(),
                        v.short()
                    ),
                }
            }
        }
    }
    eprintln!(
        "{total} checks with reused slots: {same_reused} same verdict, {limits} stopped at a limit"
    );
    assert!(same_reused * 2 > total, "{same_reused} of {total}");
}
