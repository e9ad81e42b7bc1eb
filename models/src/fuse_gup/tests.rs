use super::config::{parse_buffer, Config};
use super::model::{layouts, Action, GupModel};
use super::narrate;
use super::properties::{cover, in_folio, pins, slots};
use super::state::{Pc, State};
use crate::spec::Spec;
use stateright::{Checker, Model};

fn cfg(text: &str) -> Config {
    let t: toml::Table = toml::from_str(text).expect("toml");
    Config::from_table(&t).expect("config")
}

/// Runs the one path of a layout (no short pins) and returns its states.
fn run(m: &GupModel, init: usize) -> Vec<State> {
    let mut s = m.init_states()[init];
    let mut v = vec![s];
    loop {
        let mut acts = vec![];
        m.actions(&s, &mut acts);
        if acts.is_empty() {
            return v;
        }
        assert_eq!(acts.len(), 1, "deterministic without short pins");
        s = m.next_state(&s, acts[0]).unwrap();
        v.push(s);
    }
}

fn payload(m: &GupModel, s: &State) -> String {
    m.wire_units(s)
        .iter()
        .map(|x| match x {
            Some((p, _)) => p.to_string(),
            None => "?".into(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

const WILLY: &str = "folios = [2, 1]\nbuffers = [\"A0 A1 B0 A3\"]\n";

#[test]
fn willy_layout_per_variant() {
    // merged: one descriptor per page, the payload is the buffer
    let m = GupModel::new(cfg(&format!("kernel = \"M\"\n{WILLY}"))).unwrap();
    let s = *run(&m, 0).last().unwrap();
    assert_eq!(s.pc, Pc::Done);
    assert_eq!(payload(&m, &s), "A0 A1 B0 A3");
    assert!(cover(&m, &s) && pins(&m, &s) && in_folio(&m, &s) && slots(&m, &s));

    // v2: one descriptor A@0+16K: A2 goes out where B0 is; 3 pins leak
    let m = GupModel::new(cfg(&format!(
        "kernel = \"R1\"\nvariant = [\"p_v2\"]\n{WILLY}"
    )))
    .unwrap();
    let s = *run(&m, 0).last().unwrap();
    assert_eq!(payload(&m, &s), "A0 A1 A2 A3");
    assert!(!cover(&m, &s));
    assert_eq!((s.pinned[0], s.unpinned[0]), (3, 1));
    assert!(!pins(&m, &s));

    // collate: A0+A1 collated, B0, A3: the bytes are right, one pin leaks
    let m = GupModel::new(cfg(&format!(
        "kernel = \"M\"\nvariant = [\"p_collate\"]\n{WILLY}"
    )))
    .unwrap();
    let s = *run(&m, 0).last().unwrap();
    assert_eq!(payload(&m, &s), "A0 A1 B0 A3");
    assert!(cover(&m, &s));
    assert_eq!(s.descs.len(), 3);
    assert!(!pins(&m, &s));

    // 6.13-rc1: page-relative offsets name each folio's first page
    let m = GupModel::new(cfg(&format!("kernel = \"R1\"\n{WILLY}"))).unwrap();
    let s = *run(&m, 0).last().unwrap();
    assert_eq!(payload(&m, &s), "A0 A0 B0 A0");
    assert!(!cover(&m, &s) && pins(&m, &s));
}

#[test]
fn collate_extends_across_a_gap_and_past_the_folio() {
    let m = GupModel::new(cfg(
        "kernel = \"M\"\nvariant = [\"p_collate\"]\nfolios = [2]\nbuffers = [\"A0 A2\", \"A3 A0\", \"A1 A1\"]\n",
    ))
    .unwrap();
    // A0 A2: one descriptor A@0+8K: A1 goes out for A2
    let s = *run(&m, 0).last().unwrap();
    assert_eq!(payload(&m, &s), "A0 A1");
    // A3 A0: A@12K+8K runs past the 16K folio
    let st = run(&m, 1);
    assert!(st.iter().any(|s| !in_folio(&m, s)));
    assert_eq!(payload(&m, st.last().unwrap()), "A3 ?");
    // the same page twice is not collated (pages[i] == pages[i-1])
    let s = *run(&m, 2).last().unwrap();
    assert_eq!(payload(&m, &s), "A1 A1");
    assert!(pins(&m, &s));
}

#[test]
fn contiguous_collation_gets_the_bytes_right_but_leaks_pins() {
    let m = GupModel::new(cfg(
        "kernel = \"M\"\nvariant = [\"p_collate_contig\"]\nfolios = [2]\nbuffers = [\"A0 A2\", \"A3 A0\", \"A1 A2\"]\n",
    ))
    .unwrap();
    for (i, want) in [(0, "A0 A2"), (1, "A3 A0"), (2, "A1 A2")] {
        let s = *run(&m, i).last().unwrap();
        assert_eq!(payload(&m, &s), want);
        assert!(cover(&m, &s));
        assert_eq!(pins(&m, &s), i != 2, "only A1 A2 is collated");
    }
}

#[test]
fn the_kernel_state_is_the_fix() {
    let c = cfg("kernel = \"M\"\nvariant = [\"!fix_folio_offset\"]\nfolios = [0]\n");
    assert_eq!(c.kernel, super::config::Kernel::R1);
    let f = GupModel::flip(&c, "fix_folio_offset").unwrap();
    assert_eq!(f, cfg("kernel = \"M\"\nfolios = [0]\n"));
    assert!(GupModel::flip(&c, "nope").is_none());
}

#[test]
fn sub_page_offsets_follow_the_kernel_arithmetic() {
    // half-page units: data from A0's second half to B0's first half
    let m = GupModel::new(cfg(
        "kernel = \"M\"\nfolios = [1, 0]\nunits = 2\nmax_vpages = 2\n",
    ))
    .unwrap();
    let i = m
        .inits
        .iter()
        .position(|s| {
            narrate::layout(&m, &s.layout) == "A0 B0 (from 2K into the first page, 4K long)"
        })
        .expect("layout enumerated");
    let st = run(&m, i);
    let s = st.last().unwrap();
    assert_eq!(
        narrate::render(&m, s).lines().nth(3),
        Some("payload A@2K+2K B@0+2K")
    );
    assert!(cover(&m, s));
    // 6.13-rc1 trims the last descriptor: (PAGE_SIZE - ret) & (PAGE_SIZE - 1)
    let m = GupModel::new(cfg(
        "kernel = \"R1\"\nfolios = [0, 0]\nunits = 2\nmax_vpages = 2\n",
    ))
    .unwrap();
    let i = m
        .inits
        .iter()
        .position(|s| {
            narrate::layout(&m, &s.layout) == "A0 B0 (from 2K into the first page, 4K long)"
        })
        .unwrap();
    let s = *run(&m, i).last().unwrap();
    assert!(cover(&m, &s), "order-0 folios: 6.13-rc1 is right");
}

#[test]
fn layouts_are_every_buffer_in_a_fixed_order() {
    let c = cfg("kernel = \"M\"\nfolios = [2, 0, 0]\nunits = 2\n");
    let l = layouts(&c);
    // 6 pages; 3 offset pairs for one page, 4 for more
    assert_eq!(l.len(), 6 * 3 + 36 * 4 + 216 * 4 + 1296 * 4);
    let b = parse_buffer("A0 A0", &c.folios).unwrap();
    assert_eq!(
        l[18].vpages(),
        &b.pages[..],
        "after the 18 one-page buffers"
    );
    let b = parse_buffer("A0 B0 @1+2", &c.folios).unwrap();
    assert_eq!((b.start, b.len), (1, Some(2)));
    assert!(parse_buffer("A0 @1", &c.folios).is_err());
    assert!(parse_buffer("A4", &c.folios).is_err());
    assert!(parse_buffer("E0", &c.folios).is_err());
}

#[test]
fn bad_configurations_are_one_line_errors() {
    for (t, want) in [
        ("kernel = \"X\"\nfolios = [0]\n", "unknown kernel state"),
        ("kernel = \"M\"\nfolios = [3]\n", "order 3"),
        ("kernel = \"M\"\nfolios = [0]\nunits = 3\n", "units"),
        (
            "kernel = \"M\"\nvariant = [\"p_v2\", \"p_collate\"]\nfolios = [0]\n",
            "same loop",
        ),
        (
            "kernel = \"R1\"\nvariant = [\"mut_no_start_reset\"]\nfolios = [0]\n",
            "per-page",
        ),
        (
            "kernel = \"M\"\nfolios = [0]\nbuffers = [\"A1\"]\n",
            "not a page",
        ),
        (
            "kernel = \"M\"\nfolios = [0, 0]\nunits = 2\nbuffers = [\"A0 B0 @0+1\"]\n",
            "end in its last",
        ),
        ("kernel = \"M\"\nfolios = [0]\nbogus = 1\n", "bogus"),
        (
            "kernel = \"M\"\nfolios = [0]\nvariant = [\"nope\"]\n",
            "unknown switch",
        ),
    ] {
        let tb: toml::Table = toml::from_str(t).unwrap();
        let e = Config::from_table(&tb).unwrap_err();
        assert!(e.contains(want), "{t:?}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

fn explore(m: &GupModel) -> (usize, Vec<&'static str>) {
    let c = m.clone().checker().spawn_dfs().join();
    let mut bad: Vec<&'static str> = GupModel::property_defs()
        .iter()
        .filter(|p| p.expectation == stateright::Expectation::Always)
        .filter(|p| c.discovery(p.name).is_some())
        .map(|p| p.name)
        .collect();
    bad.sort();
    (c.unique_state_count(), bad)
}

#[test]
fn merged_holds_on_every_small_layout_with_limits_and_short_pins() {
    let m = GupModel::new(cfg(
        "kernel = \"M\"\nfolios = [2, 0]\nmax_vpages = 3\nunits = 2\nmax_pages = 2\nmax_write = 5\nshort_pins = true\n",
    ))
    .unwrap();
    let (_, bad) = explore(&m);
    assert!(bad.is_empty(), "{bad:?}");
}

#[test]
fn each_mutant_breaks_its_property() {
    let base = "kernel = \"M\"\nfolios = [2, 0]\nmax_vpages = 3\nunits = 2\nmax_pages = 2\nmax_write = 5\nshort_pins = true\n";
    for (mutant, prop) in [
        ("mut_no_start_reset", "gup-cover"),
        ("mut_len_ignores_start", "gup-in-folio"),
        ("mut_extract_ignores_nr_pages", "gup-slots"),
        ("mut_unpin_per_folio", "gup-pins"),
    ] {
        let m = GupModel::new(cfg(&format!("{base}variant = [\"{mutant}\"]\n"))).unwrap();
        let (_, bad) = explore(&m);
        assert!(bad.contains(&prop), "{mutant}: {bad:?}");
    }
}

#[test]
fn extraction_is_bounded_by_the_request() {
    // three pages, max_pages 2: two WRITEs; a short pin splits an extraction
    let m = GupModel::new(cfg(
        "kernel = \"M\"\nfolios = [2]\nbuffers = [\"A0 A1 A2\"]\nmax_pages = 2\nshort_pins = true\n",
    ))
    .unwrap();
    let s0 = m.init_states()[0];
    let s1 = m.next_state(&s0, Action::IoAlloc).unwrap();
    assert_eq!((s1.slots, s1.nbytes_max), (2, 3));
    let mut acts = vec![];
    m.actions(&s1, &mut acts);
    assert_eq!(
        acts,
        vec![Action::Extract { pages: 1 }, Action::Extract { pages: 2 }]
    );
}

/// The checker's breadth-first search returns the violation with the
/// fewest steps, and among those the lowest initial state. On the layout
/// checks the first failing buffer (in enumeration order) is also one of
/// the quickest to fail, so the counterexample starts at it.
#[test]
fn first_failing_buffer_is_a_shortest_counterexample() {
    for (variant, kernel) in [
        ("", "R1"),
        ("\"p_v2\"", "R1"),
        ("\"p_collate\"", "M"),
        ("\"p_collate_contig\"", "M"),
    ] {
        let m = GupModel::new(cfg(&format!(
            "kernel = \"{kernel}\"\nvariant = [{variant}]\nfolios = [2, 0, 0]\nunits = 2\n"
        )))
        .unwrap();
        let paths: Vec<Vec<State>> = (0..m.inits.len()).map(|i| run(&m, i)).collect();
        for (pi, p) in GupModel::property_defs().iter().enumerate() {
            if p.expectation != stateright::Expectation::Always {
                continue;
            }
            // (init, steps to the first violating state) of every failing buffer
            let fails: Vec<(usize, usize)> = paths
                .iter()
                .enumerate()
                .filter_map(|(i, st)| st.iter().position(|s| !m.condition(pi, s)).map(|d| (i, d)))
                .collect();
            if let Some(&(first, d)) = fails.first() {
                let min = fails.iter().map(|f| f.1).min().unwrap();
                assert_eq!(
                    d, min,
                    "{variant} {}: first failing buffer #{first}",
                    p.name
                );
            }
        }
    }
}
