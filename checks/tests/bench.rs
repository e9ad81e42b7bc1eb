//! `wbspec bench`: another binary is measured on the catalogue it is
//! given (`--against-catalogue`), and the rows say what each runner
//! explored.

mod common;
use common::*;

#[test]
fn against_binary_reads_its_own_catalogue() {
    // the same check name, another workload: the other runner's count
    // shows which catalogue it read
    let other = fake_checkout(
        r#"
[[check]]
name = "t-trunc-vs-wb-2p"
question = "the same name, one task fewer"
kernel = "T"
pages = 2
init_size = 2
cached = [0, 1]
dirty = [0, 1]
tasks = ["wb none"]
"#,
    );
    let me = env!("CARGO_BIN_EXE_wbspec");
    let cat = other.path().join("checks/catalogue");
    let (out, rows) = bench_against(me, &["--against-catalogue", cat.to_str().unwrap()]);
    let unique = |runner: &str| {
        rows.iter()
            .find(|r| r["runner"].as_str().unwrap().starts_with(runner))
            .unwrap_or_else(|| panic!("no {runner} row: {rows:?}"))["unique_states"]
            .as_u64()
            .unwrap()
    };
    // this catalogue's pin, and the other catalogue's one-task workload
    assert_eq!(unique("fast"), 108);
    let theirs = unique("bin:");
    assert!(
        theirs > 0 && theirs < 108,
        "other catalogue: {theirs} states"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unique states differ"), "{err}");

    // without --against-catalogue the other binary reads this catalogue
    let (_, rows) = bench_against(me, &[]);
    for r in &rows {
        assert_eq!(r["unique_states"], 108, "{r}");
    }
}

/// `bench t-trunc-vs-wb-2p` once with the fast engine and `--against
/// bin` plus `extra`; exit 0 required; its JSON rows.
fn bench_against(bin: &str, extra: &[&str]) -> (std::process::Output, Vec<serde_json::Value>) {
    let d = tmpdir();
    let json = d.path().join("b.json");
    let mut args = vec![
        "bench",
        "t-trunc-vs-wb-2p",
        "--repeat",
        "1",
        "--engines",
        "fast",
        "--against",
        bin,
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = wbspec(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (out, v["rows"].as_array().unwrap().clone())
}

#[test]
fn against_catalogue_needs_against() {
    let out = wbspec(&[
        "bench",
        "t-trunc-vs-wb-2p",
        "--against-catalogue",
        "/nonexistent",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--against"));
}
