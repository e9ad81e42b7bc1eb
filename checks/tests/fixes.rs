//! Fix proposals (issue 19, docs/findings.md "Fix proposals"): every fix
//! switch that checks/facts/findings.toml names runs as a family run,
//! `wbspec check --all --with FIX`, over the whole catalogue. The run must
//! be clean (no check gains a violation, every run complete) and must fix
//! the finding: at least one of the finding's own checks has its expected
//! violation hold with the fix. Bad `--with` arguments: one line, exit 2.

mod common;
use common::*;
use wbspec::catalogue;
use wbspec::findings;

#[test]
fn every_fix_family_run_is_clean_and_fixes_its_finding() {
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let fs = findings::load(&repo_root().join("checks/facts/findings.toml"), &cat).unwrap();
    let with_fixes: Vec<_> = fs.iter().filter(|f| !f.fixes.is_empty()).collect();
    // the four real findings of issue 19 have one at least
    for id in ["F-otrunc", "F-pdio-lock", "N1", "F-reclaim-nowbc"] {
        assert!(
            with_fixes.iter().any(|f| f.id == id),
            "{id} has no fix in findings.toml"
        );
    }
    for f in with_fixes {
        for fix in &f.fixes {
            let out = wbspec(&["check", "--all", "--with", fix]);
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}: --with {fix} is not clean:\n{}{}",
                f.id,
                text.lines()
                    .filter(|l| l.contains("NEW VIOLATION")
                        || l.contains("INCOMPLETE")
                        || l.contains(" checks run"))
                    .collect::<Vec<_>>()
                    .join("\n"),
                String::from_utf8_lossy(&out.stderr)
            );
            let summary = text.lines().last().unwrap_or("");
            assert!(
                summary.contains(" 0 with a new violation, 0 incomplete"),
                "{fix}: {summary}"
            );
            let fixed_own = f.checks.iter().any(|c| {
                text.lines()
                    .any(|l| l.starts_with(&format!("With {fix} {c} fixed ")))
            });
            assert!(
                fixed_own,
                "{fix} fixes none of {}'s checks: {summary}",
                f.id
            );
        }
    }
}

#[test]
fn with_refuses_bad_arguments_in_one_line() {
    for args in [
        &["check", "--all", "--with", "no_such_switch"][..],
        &[
            "check",
            "t2-otrunc-atomic-race",
            "--with",
            "fix_otrunc_keep_size",
            "--update-pins",
        ][..],
        &[
            "check",
            "t2-otrunc-atomic-race",
            "--with",
            "fix_otrunc_keep_size",
            "--json",
            "/tmp/x.json",
        ][..],
        &["check", "--with", "fix_otrunc_keep_size"][..],
    ] {
        let out = wbspec(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("wbspec: "), "{args:?}: {err}");
    }
    // a check whose model refuses the fix is not applicable, with the
    // model's reason, and the run proves nothing: exit 1
    let out = wbspec(&[
        "check",
        "l-fopen-dio-write-vs-wb",
        "--with",
        "fix_pdio_wait_range",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "l-fopen-dio-write-vs-wb not-applicable: fix_pdio_wait_range needs PG_writeback"
        ),
        "{text}"
    );
    assert!(text.contains("0 checks run, 1 not applicable"), "{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
}
