//! The scaling table of docs/performance.md ("Scaling", issue 20 item 4)
//! quotes unique-state counts of the families in checks/scaling. Those
//! counts are the tool's to compute, so they are tested: every row up to
//! `LIMIT` states is explored again here, with and without symmetry, and
//! must give the table's numbers. Larger rows (minutes, gigabytes) are
//! measurements of one run, labelled so in the document; their times
//! and memory are not tested (no timed test in the suite).

mod common;

use common::{repo_root, stdout, wbspec};

/// Rows with at most this many unreduced states are re-explored.
const LIMIT: u64 = 500_000;

/// `(name, states, states with symmetry)` of the table's rows: the
/// first cell is a family name in backquotes, the states and symmetry
/// cells are the columns headed so.
fn rows() -> Vec<(String, u64, u64)> {
    let doc = std::fs::read_to_string(repo_root().join("docs/performance.md")).unwrap();
    let start = doc
        .find("<!-- scaling-table -->")
        .expect("docs/performance.md has the scaling table marker");
    let table = &doc[start..];
    let end = table.find("\n\n").unwrap_or(table.len());
    let mut lines = table[..end].lines().skip(1);
    let head: Vec<String> = lines
        .next()
        .unwrap()
        .split('|')
        .map(|c| c.trim().to_string())
        .collect();
    let col = |name: &str| {
        head.iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("column {name:?} in {head:?}"))
    };
    let (c_states, c_sym) = (col("states"), col("with symmetry"));
    let num = |s: &str| -> u64 {
        s.trim()
            .replace(',', "")
            .parse()
            .unwrap_or_else(|_| panic!("a number: {s:?}"))
    };
    let mut out = Vec::new();
    for l in lines.skip(1) {
        let cells: Vec<&str> = l.split('|').collect();
        let name = cells[1].trim().trim_matches('`').to_string();
        out.push((name, num(cells[c_states]), num(cells[c_sym])));
    }
    out
}

fn states(name: &str, symmetry: bool) -> u64 {
    let mut args = vec!["--catalogue", "checks/scaling", "check", name];
    if symmetry {
        args.push("--symmetry");
    }
    let out = wbspec(&args);
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("States {name} ")))
        .unwrap_or_else(|| panic!("no States line for {name}: {text}"));
    assert!(line.contains(" complete "), "{line}");
    line.split_whitespace().nth(3).unwrap().parse().unwrap()
}

#[test]
fn the_scaling_table_counts_are_the_tools() {
    let rows = rows();
    assert!(rows.len() >= 20, "{} rows", rows.len());
    let mut checked = 0;
    for (name, plain, sym) in rows {
        if plain > LIMIT {
            continue;
        }
        assert_eq!(states(&name, false), plain, "{name}: states");
        assert_eq!(states(&name, true), sym, "{name}: with symmetry");
        checked += 1;
    }
    // the small rows are most of the table: a table whose rows all grew
    // past the limit would test nothing
    assert!(checked >= 15, "only {checked} rows re-explored");
}
