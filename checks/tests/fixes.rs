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

/// FUSE_AUTO_INVAL_DATA as a key switch (`--with auto_inval_data`): the
/// family run is clean, fixes exactly the checks docs/findings.md names,
/// and its summary line is the one findings.md quotes. A check that sets
/// the key itself, or has no read or stat task, is not applicable; with
/// only such checks selected nothing is judged (one line, exit 2).
#[test]
fn the_auto_inval_data_family_run_is_the_one_findings_quotes() {
    let out = wbspec(&["check", "--all", "--with", "auto_inval_data"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let summary = text
        .lines()
        .find(|l| l.starts_with("With auto_inval_data: "))
        .expect("a summary line");
    let findings = std::fs::read_to_string(repo_root().join("docs/findings.md")).unwrap();
    assert!(
        findings.contains(summary),
        "docs/findings.md does not quote the family run's summary:\n{summary}"
    );
    let mut fixed: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" fixed "))
        .filter_map(|l| l.strip_prefix("With auto_inval_data "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    fixed.sort();
    let mut want = vec![];
    for c in [
        "c-wt-notify-inval-attr",
        "t-wt-read-vs-dio-write",
        "t2wt-notify-inval-attr",
        "t2wt-remote-trunc-read",
    ] {
        assert!(
            findings.contains(&format!("`{c}`")),
            "findings.md names {c}"
        );
        want.push(c.to_string());
        want.push(format!("{c}-bg1"));
    }
    want.sort();
    assert_eq!(fixed, want, "{text}");
    let out = wbspec(&[
        "check",
        "t2wt-aid-notify-attr",
        "t2-aid-wbc-extend",
        "--with",
        "auto_inval_data",
    ]);
    one_line_error(&out, "it already sets auto_inval_data = true");
    let out = wbspec(&[
        "check",
        "t2wt-mmap-wb-read",
        "t-fopen-dio-read",
        "--with",
        "auto_inval_data",
    ]);
    let text = stdout(&out);
    assert!(
        text.contains("With auto_inval_data t2wt-mmap-wb-read as expected"),
        "{text}"
    );
    let out = wbspec(&["check", "t-trunc-vs-wb-2p", "--with", "auto_inval_data"]);
    one_line_error(&out, "it has no read or stat task");
}
