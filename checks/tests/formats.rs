//! Property-based tests of the input formats the checker reads (catalogue
//! TOML, trace JSON): generated valid inputs round-trip, generated
//! corruptions are rejected with one-line errors, never a panic, in
//! bounded time. (The recorded JSONL of the kernel harness has its own
//! suite in harness/tests.)

mod common;
use common::*;
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;
use wbspec::{catalogue, trace};

const TASKS: &[&str] = &[
    "write 0+1",
    "mmap 0",
    "wb none",
    "wb all",
    "truncate 0",
    "truncate 1",
    "fsync",
    "close",
    "dio-write 0+1",
    "dio-read 0+1",
    "odirect-write 0+1",
    "odirect-read 0+1",
    "fault 0",
    "open",
    "open trunc",
];

#[derive(Clone, Debug)]
struct Gen {
    name: String,
    question: String,
    kernel: &'static str,
    pages: u8,
    threads: u8,
    tasks: Vec<&'static str>,
    states: Option<u64>,
    tags: Vec<String>,
    expect_b1: Option<bool>,
    witness: Option<u64>,
}

fn gen() -> impl Strategy<Value = Gen> {
    (
        "[a-z0-9][a-z0-9-]{0,20}",
        "[ -~&&[^\"\\\\]]{1,40}",
        prop::sample::select(vec!["L", "T", "T2", "C"]),
        1u8..=4,
        1u8..=2,
        prop::collection::vec(prop::sample::select(TASKS.to_vec()), 1..4),
        prop::option::of(1u64..1_000_000),
        prop::collection::vec("[a-z]{1,6}", 0..3),
        prop::option::of(any::<bool>()),
        prop::option::of(1u64..1000),
    )
        .prop_map(
            |(name, question, kernel, pages, threads, tasks, states, tags, expect_b1, witness)| {
                Gen {
                    name,
                    question,
                    kernel,
                    pages,
                    threads,
                    tasks,
                    states,
                    tags,
                    expect_b1,
                    witness,
                }
            },
        )
}

fn render(g: &Gen) -> String {
    let mut s = format!(
        "[[check]]\nname = {:?}\nquestion = {:?}\nkernel = {:?}\npages = {}\ninit_size = {}\ndaemon_threads = {}\ntasks = {:?}\ntags = {:?}\n",
        g.name, g.question, g.kernel, g.pages, g.pages, g.threads, g.tasks, g.tags
    );
    if let Some(st) = g.states {
        s.push_str(&format!("states = {st}\n"));
    }
    if let Some(b) = g.expect_b1 {
        s.push_str(&format!(
            "expect = {{ b1 = \"{}\" }}\n",
            if b { "violated" } else { "holds" }
        ));
    }
    if let Some(w) = g.witness {
        s.push_str(&format!("witnesses = {{ w-quiescent = {w} }}\n"));
    }
    s
}

fn one_line(e: &str) {
    assert!(!e.contains('\n'), "error spans lines: {e:?}");
    assert!(!e.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn valid_catalogue_entries_round_trip(g in gen()) {
        let text = render(&g);
        let (entries, _) = catalogue::parse(&text, Path::new("gen.toml")).expect("valid entry");
        prop_assert_eq!(entries.len(), 1);
        let e = &entries[0];
        prop_assert_eq!(&e.name, &g.name);
        prop_assert_eq!(&e.question, &g.question);
        prop_assert_eq!(&e.tags, &g.tags);
        prop_assert_eq!(e.states, g.states);
        prop_assert_eq!(e.check.kernel(), g.kernel);
        let cfg = e.check.config_json();
        prop_assert_eq!(cfg["pages"].as_u64(), Some(g.pages as u64));
        prop_assert_eq!(cfg["daemon_threads"].as_u64(), Some(g.threads as u64));
        prop_assert_eq!(cfg["tasks"].as_array().map(|a| a.len()), Some(g.tasks.len()));
        let want = g.expect_b1.map(|b| if b { catalogue::Verdict::Violated } else { catalogue::Verdict::Holds });
        prop_assert_eq!(e.expect.iter().find(|(p, _)| p == "b1").map(|(_, v)| *v), want);
        prop_assert_eq!(e.witness_pin("w-quiescent"), (g.witness.is_some(), g.witness));
    }

    #[test]
    fn corrupted_catalogues_are_rejected_in_one_line(
        g in gen(),
        cut in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        kind in 0u8..5,
    ) {
        let text = render(&g);
        let bad = match kind {
            0 => text[..cut.index(text.len())].to_string(),
            1 => {
                let mut b = text.clone().into_bytes();
                let i = at.index(b.len());
                b[i] = byte;
                String::from_utf8_lossy(&b).into_owned()
            }
            2 => format!("{text}colour = 3\n"),
            3 => text.replace("pages = ", "pages = 9"),
            _ => format!("{text}{text}"),
        };
        if let Err(e) = catalogue::parse(&bad, Path::new("bad.toml")) {
            one_line(&e);
        }
        if kind == 2 || kind == 3 {
            prop_assert!(catalogue::parse(&bad, Path::new("bad.toml")).is_err());
        }
    }
}

fn entries() -> &'static catalogue::Catalogue {
    static C: OnceLock<catalogue::Catalogue> = OnceLock::new();
    C.get_or_init(|| catalogue::load_dir(&catalogue_dir()).unwrap())
}

fn trace_text() -> &'static str {
    static T: OnceLock<String> = OnceLock::new();
    T.get_or_init(|| {
        std::fs::read_to_string(traces_dir().join("t-fopen-dio-read--b1.json")).unwrap()
    })
}

/// Parses and replays a trace text against the catalogue.
fn check_trace(text: &str) -> Result<(), String> {
    let t = trace::parse(text)?;
    trace::replay(t, &entries().entries).map(|_| ())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn the_committed_trace_round_trips(_x in 0u8..1) {
        let t = trace::parse(trace_text()).unwrap();
        let again = serde_json::to_string_pretty(&t).unwrap() + "\n";
        prop_assert_eq!(again.as_str(), trace_text());
        prop_assert!(check_trace(trace_text()).is_ok());
    }

    #[test]
    fn corrupted_traces_are_rejected_in_one_line(
        cut in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        kind in 0u8..4,
        key in any::<prop::sample::Index>(),
    ) {
        let text = trace_text();
        let bad: String = match kind {
            0 => text[..cut.index(text.len())].to_string(),
            1 => {
                let mut b = text.as_bytes().to_vec();
                let i = at.index(b.len());
                b[i] = byte;
                String::from_utf8_lossy(&b).into_owned()
            }
            2 => {
                // drop one top-level field
                let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
                let o = v.as_object_mut().unwrap();
                let k = o.keys().nth(key.index(o.len())).unwrap().clone();
                o.remove(&k);
                v.to_string()
            }
            _ => {
                // one top-level field of another type
                let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
                let o = v.as_object_mut().unwrap();
                let k = o.keys().nth(key.index(o.len())).unwrap().clone();
                o.insert(k, serde_json::json!([{"x": 1}]));
                v.to_string()
            }
        };
        let same = serde_json::from_str::<serde_json::Value>(&bad).ok()
            == serde_json::from_str::<serde_json::Value>(text).ok();
        match check_trace(&bad) {
            Ok(()) => prop_assert!(same, "an altered trace was accepted"),
            Err(e) => one_line(&e),
        }
    }
}
