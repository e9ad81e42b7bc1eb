//! docs/reports/: `wbspec report ID` regenerates each report from data;
//! a report that differs from what the tool makes now has drifted (run
//! `cargo run --release -- report --all`). Every line of the mail text
//! fits 72 columns; every finding with a fix or a reproducer has one.

mod common;
use common::*;
use wbspec::catalogue;
use wbspec::findings;

#[test]
fn every_report_is_generated_and_fits_72_columns() {
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let fs = findings::load(&repo_root().join("checks/facts/findings.toml"), &cat).unwrap();
    let dir = repo_root().join("docs/reports");
    let want: Vec<_> = fs
        .iter()
        .filter(|f| !f.fixes.is_empty() || f.reproducer.is_some())
        .collect();
    assert!(want.len() >= 4, "the four findings with fixes");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expect: Vec<String> = want.iter().map(|f| format!("{}.md", f.id)).collect();
    expect.sort();
    assert_eq!(
        names, expect,
        "docs/reports/ holds one report per finding with a fix or reproducer"
    );
    for f in want {
        let out = wbspec(&["report", &f.id, "--stdout"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let now = String::from_utf8_lossy(&out.stdout);
        let file = std::fs::read_to_string(dir.join(format!("{}.md", f.id))).unwrap();
        assert_eq!(
            now.trim_end(),
            file.trim_end(),
            "docs/reports/{}.md drifted: cargo run --release -- report --all",
            f.id
        );
        for l in file.lines() {
            assert!(l.chars().count() <= 72, "{}: over 72 columns: {l:?}", f.id);
        }
        assert!(file.contains("Subject: [REPORT] "), "{}", f.id);
        // a finding that is not a bug says so in its subject and before
        // its reference, so it does not read as a bug report
        if !f.class.is_bug() {
            let tag = format!("Subject: [REPORT] ({})", f.class.label());
            assert!(file.contains(&tag), "{}: subject lacks {tag:?}", f.id);
            assert!(file.contains("Not a bug report"), "{}", f.id);
        }
        for fix in &f.fixes {
            assert!(file.contains(&format!("{fix}: ")), "{}: fix {fix}", f.id);
        }
    }
}

#[test]
fn report_and_reproduce_refuse_unknown_ids_in_one_line() {
    let not_a_kernel = repo_root().join("Cargo.toml");
    let not_a_kernel = not_a_kernel.to_str().unwrap();
    for args in [
        &["report", "F-nope", "--stdout"][..],
        &["report", "--stdout"][..],
        &["reproduce", "F-nope"][..],
        // a finding without a reproducer
        &["reproduce", "F-lf-readahead"][..],
        // a VM-only reproducer without a guest image
        &["reproduce", "F-pdio-lock"][..],
        // ... with one that does not exist, or is not a kernel (checked
        // before anything runs or prints)
        &[
            "reproduce",
            "F-pdio-lock",
            "--kernel",
            "/nonexistent/bzImage",
        ][..],
        &["reproduce", "F-pdio-lock", "--kernel", not_a_kernel][..],
        // a host reproducer given a guest image: refused, not run on the
        // host
        &["reproduce", "F-otrunc", "--kernel", "/nonexistent/bzImage"][..],
        &["reproduce", "N1", "--kernel", "/nonexistent/bzImage"][..],
    ] {
        let out = wbspec(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("wbspec: "), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: printed before refusing");
    }
}

/// `wbspec reproduce` of the host reproducers: F-otrunc's held-reply
/// scenario reproduces (the scenario asserts what the model predicts and
/// its trace conforms), and the output puts the model's prediction next
/// to it. Real kernel: root and /dev/fuse (WBSPEC_REQUIRE_KERNEL makes a
/// missing one a failure).
#[test]
fn reproduce_f_otrunc_on_the_host() {
    let test = "reproduce_f_otrunc_on_the_host";
    if !wbspec_harness::require::may_run(
        wbspec_harness::require::KERNEL,
        test,
        wbspec_harness::runner::cannot_run(),
    ) {
        return;
    }
    let out = wbspec(&["reproduce", "F-otrunc"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Model predicts (F-otrunc):"), "{text}");
    assert!(
        text.contains("  t2-otrunc-atomic-race (T2): a3 violated"),
        "{text}"
    );
    assert!(text.contains("Reproduced: "), "{text}");
}

/// A report cites only checks that run as the catalogue expects: one
/// that does not (here, no pinned state count) makes the report a
/// difference (exit 1, its Verdict line says NOT), as `cite` does; and a
/// foreign catalogue never writes the checkout's docs/reports.
#[test]
fn a_report_of_a_check_not_as_expected_is_a_difference() {
    let d = fake_checkout(ONE);
    std::fs::create_dir_all(d.path().join("checks/facts")).unwrap();
    std::fs::write(
        d.path().join("checks/facts/findings.toml"),
        r#"[[finding]]
id = "F-x"
title = "a title"
class = "bug-not-reported"
reference = ""
checks = ["x"]
kernels = ["T"]
reproduced = ""
checked = "2026-12-01"
"#,
    )
    .unwrap();
    let cat = d.path().join("checks/catalogue");
    let cat = cat.to_str().unwrap();
    let o = wbspec(&["--catalogue", cat, "report", "F-x", "--stdout"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        stdout(&o).contains("NOT as the catalogue"),
        "{}",
        stdout(&o)
    );
    assert!(err.contains("wbspec: F-x: a check it cites is not as the catalogue expects"));
    // without --stdout: refused before anything runs
    let o = wbspec(&["--catalogue", cat, "report", "F-x"]);
    one_line_error(&o, "use --stdout with --catalogue");
}
