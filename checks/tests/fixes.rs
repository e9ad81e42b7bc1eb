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
        // a switch given twice
        &[
            "check",
            "t2-otrunc-atomic-race",
            "--with",
            "fix_otrunc_keep_size",
            "--with",
            "fix_otrunc_keep_size",
        ][..],
        // two designs of one fix: no check applies, nothing is judged
        &[
            "check",
            "t2-otrunc-atomic-race",
            "--with",
            "fix_otrunc_keep_size",
            "--with",
            "fix_otrunc_setattr",
        ][..],
        // the check turns the switch off
        &[
            "check",
            "t2-no-inval-read-vs-dio-write",
            "--with",
            "dio_invalidate_after_write",
        ][..],
    ] {
        let out = wbspec(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("wbspec: "), "{args:?}: {err}");
    }
    // a check whose model refuses the fix is not applicable, with the
    // model's reason; when no selected check applies nothing is judged:
    // a usage error, not a difference
    let out = wbspec(&[
        "check",
        "l-fopen-dio-write-vs-wb",
        "--with",
        "fix_pdio_wait_range",
    ]);
    one_line_error(
        &out,
        "no selected check applies (l-fopen-dio-write-vs-wb: fix_pdio_wait_range needs PG_writeback",
    );
    assert!(stdout(&out).is_empty());
    // beside one that applies, it is listed as not applicable
    let out = wbspec(&[
        "check",
        "l-fopen-dio-write-vs-wb",
        "t2-pdio-three-writers",
        "--with",
        "fix_pdio_wait_range",
    ]);
    let text = stdout(&out);
    assert!(
        text.contains(
            "l-fopen-dio-write-vs-wb not-applicable: fix_pdio_wait_range needs PG_writeback"
        ),
        "{text}"
    );
    assert!(text.contains("1 checks run, 1 not applicable"), "{text}");
    assert_eq!(out.status.code(), Some(0), "{text}");
}

/// A switch the check's kernel state already has on changes nothing: the
/// run would be the catalogue's own, so it is not applicable rather than
/// "as expected" (dio_flush_always is in T2's kernel state, not in T's).
#[test]
fn with_a_switch_the_kernel_state_has_is_not_applicable() {
    let out = wbspec(&[
        "check",
        "t2-fopen-dio-read",
        "t-fopen-dio-read",
        "--with",
        "dio_flush_always",
    ]);
    let text = stdout(&out);
    assert!(
        text.contains(
            "With dio_flush_always t2-fopen-dio-read not-applicable: its kernel state T2 already has 'dio_flush_always' on"
        ),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("With dio_flush_always t-fopen-dio-read ")
                && !l.contains("not-applicable")),
        "{text}"
    );
    let out = wbspec(&["check", "t2-fopen-dio-read", "--with", "dio_flush_always"]);
    one_line_error(&out, "already has 'dio_flush_always' on");
}
