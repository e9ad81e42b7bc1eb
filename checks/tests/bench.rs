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
    let d = tmpdir();
    let json = d.path().join("b.json");
    let me = env!("CARGO_BIN_EXE_wbspec");
    let cat = other.path().join("checks/catalogue");
    let out = wbspec(&[
        "bench",
        "t-trunc-vs-wb-2p",
        "--repeat",
        "1",
        "--engines",
        "fast",
        "--against",
        me,
        "--against-catalogue",
        cat.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
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
    let out = wbspec(&[
        "bench",
        "t-trunc-vs-wb-2p",
        "--repeat",
        "1",
        "--engines",
        "fast",
        "--against",
        me,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for r in v["rows"].as_array().unwrap() {
        assert_eq!(r["unique_states"], 108, "{r}");
    }
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
