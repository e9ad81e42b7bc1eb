//! `check --drop`, `wbspec ops` and `check --all --mutate-ops` (issue
//! 19): a dropped kernel call changes verdicts, pairs are dropped
//! together, refusals are one line with exit 2, and op mutation reports
//! killed ops and survivors.

mod common;
use common::*;
use serde_json::Value;

fn report(args: &[&str]) -> (std::process::Output, Value) {
    let dir = tmpdir();
    let json = dir.path().join("r.json");
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["--json", json.to_str().unwrap()]);
    let out = wbspec(&a);
    let v = serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_default())
        .unwrap_or(Value::Null);
    (out, v)
}

fn prop<'a>(check: &'a Value, name: &str) -> &'a Value {
    check["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap()
}

/// "Remove fuse_set_nowrite from fuse_do_setattr" on state T: a1-a3
/// become violated (exit 1, the lines say CHANGED, pins not compared),
/// and the run is exactly P-nowritectr's on this workload (same states,
/// same violating-state counts): the proposal's truncate bug is that one
/// call.
#[test]
fn dropping_setattrs_nowrite_reproduces_p_nowritectr() {
    let (out, v) = report(&[
        "check",
        "t-trunc-vs-wb-2p",
        "--drop",
        "fuse_do_setattr:fuse_set_nowrite",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("Dropped t-trunc-vs-wb-2p: fuse_do_setattr:fuse_set_nowrite"));
    assert!(text.contains("a1 Sometimes 4 112 CHANGED by the drop (catalogue: holds)"));
    assert!(text.contains("not compared (dropped fuse_do_setattr:fuse_set_nowrite)"));
    // the window the NOWRITE opens is gone, and said so
    assert!(text.contains(
        "Witness t-trunc-vs-wb-2p w-nowrite-queued Unreached 0 112 UNREACHED with the drop"
    ));
    assert!(text.contains("Witness t-trunc-vs-wb-2p w-crop Reached 5 112 not compared (drop)"));
    assert!(!text.contains("MISMATCH"), "{text}");
    let c = &v["checks"][0];
    assert_eq!(c["dropped"][0], "fuse_do_setattr:fuse_set_nowrite");
    assert_eq!(c["config"]["drop"][0], "fuse_do_setattr:fuse_set_nowrite");
    let (pout, pv) = report(&["check", "pn-trunc-wb-1t"]);
    assert!(pout.status.success());
    let p = &pv["checks"][0];
    assert_eq!(c["unique_states"], p["unique_states"]);
    for a in ["a1", "a2", "a3"] {
        assert_eq!(prop(c, a)["observed"], "violated");
        assert_eq!(
            prop(c, a)["violating_states"],
            prop(p, a)["violating_states"],
            "{a}"
        );
    }
}

/// A drop that changes no verdict exits 0; dropping fuse_fsync's
/// inode_lock drops its inode_unlock (else every later locker would
/// wait forever, or the unlock would release a lock it does not hold):
/// the run is complete and the catalogue's verdicts stay.
#[test]
fn a_dropped_lock_drops_its_unlock() {
    let (out, v) = report(&[
        "check",
        "t-trunc-vs-wb-2p",
        "--drop",
        "fuse_do_setattr:truncate_pagecache",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(v["checks"][0]["complete"], true);
    let o = wbspec(&[
        "check",
        "t2-wb-error-fsync",
        "--drop",
        "fuse_fsync:inode_lock",
    ]);
    let text = stdout(&o);
    assert!(
        o.status.code() != Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("complete"), "{text}");
    assert!(!text.contains("INCOMPLETE"), "{text}");
}

#[test]
fn bad_drops_are_one_line_errors() {
    let o = wbspec(&[
        "check",
        "t-trunc-vs-wb-2p",
        "--drop",
        "fuse_do_setattr:fuse_sync_writes",
    ]);
    one_line_error(&o, "close matches: fuse_do_setattr:fuse_set_nowrite");
    let o = wbspec(&[
        "check",
        "t-trunc-vs-wb-2p",
        "--drop",
        "do_truncate:inode_lock",
    ]);
    one_line_error(&o, "one step in the model");
    let o = wbspec(&[
        "check",
        "t-trunc-vs-wb-2p",
        "--drop",
        "fuse_do_setattr:fuse_simple_request",
    ]);
    one_line_error(&o, "request and its reply");
    // the proposal's switch already removed the call: said so
    let o = wbspec(&[
        "check",
        "pn-trunc-wb-1t",
        "--drop",
        "fuse_do_setattr:fuse_set_nowrite",
    ]);
    one_line_error(&o, "switches p_no_writectr change its programs");
    let o = wbspec(&[
        "check",
        "t-trunc-vs-wb-2p",
        "--drop",
        "fuse_do_setattr:fuse_set_nowrite",
        "--update-pins",
    ]);
    one_line_error(&o, "--update-pins refused with --drop");
    let o = wbspec(&[
        "check",
        "--all",
        "--drop",
        "fuse_do_setattr:fuse_set_nowrite",
    ]);
    one_line_error(&o, "--drop names checks");
    let o = wbspec(&["check", "nw-m60-append-dup", "--drop", "x:y"]);
    one_line_error(&o, "--drop is not supported by model nowait");
    let o = wbspec(&["check", "t-trunc-vs-wb-2p", "--mutate-ops"]);
    one_line_error(&o, "--mutate-ops needs --all");
}

/// A dropped run's trace replays and explains (the configuration carries
/// the drop); the checkout's traces/ is not where it goes.
#[test]
fn a_dropped_trace_replays() {
    let d = tmpdir();
    let td = d.path().to_str().unwrap();
    let args = [
        "check",
        "t-trunc-vs-wb-2p",
        "--drop",
        "fuse_do_setattr:fuse_set_nowrite",
        "--write-traces",
    ];
    one_line_error(&wbspec(&args), "needs --traces-dir");
    let mut a = args.to_vec();
    a.extend(["--traces-dir", td]);
    assert_eq!(wbspec(&a).status.code(), Some(1));
    let f = d.path().join("t-trunc-vs-wb-2p--a1.json");
    let r = wbspec(&["replay", f.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let e = wbspec(&["explain", f.to_str().unwrap()]);
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    assert!(stdout(&e).contains("Dropped: fuse_do_setattr:fuse_set_nowrite"));
    // the Explorer shows the catalogue's configuration: a what-if trace
    // is refused, saying what it is (before any run or port)
    let x = wbspec(&[
        "explore",
        "t-trunc-vs-wb-2p",
        "--trace",
        f.to_str().unwrap(),
        "--port",
        "0",
    ]);
    one_line_error(
        &x,
        "a what-if run of 't-trunc-vs-wb-2p' without fuse_do_setattr:fuse_set_nowrite (check --drop)",
    );
}

#[test]
fn ops_lists_labels_and_refusals() {
    let o = wbspec(&["ops", "--task", "truncate"]);
    assert!(o.status.success());
    let text = stdout(&o);
    let row = text
        .lines()
        .find(|l| l.starts_with("fuse_do_setattr:fuse_set_nowrite "))
        .expect(&text);
    assert!(
        row.contains("fuse_set_nowrite") && row.contains("truncate"),
        "{row}"
    );
    assert!(!text.contains("fuse_fsync:"), "only truncate's ops: {text}");
    let refused = text.split("Not droppable:").nth(1).expect(&text);
    assert!(refused.contains("do_truncate:inode_lock (truncate): "));
    // names are the tree's: state L's page_mkwrite waits on the rb-tree
    let l = stdout(&wbspec(&["ops", "--kernel", "L"]));
    assert!(l.contains("fuse_page_mkwrite:fuse_wait_on_folio_writeback"));
    assert!(!l.contains("fuse_page_mkwrite:folio_wait_writeback"));
    one_line_error(&wbspec(&["ops", "--kernel", "X9"]), "X9");
}

/// A small catalogue, the truncate-vs-flusher workload on T: dropping
/// fuse_do_setattr's NOWRITE is killed, its truncate_pagecache and
/// invalidate survive; a survivor the catalogue does not explain fails
/// the run (exit 1), an explained one is an equivalent.
#[test]
fn mutate_ops_kills_and_flags_survivors() {
    const CHECK: &str = r#"[[check]]
name = "tw"
question = "q"
kernel = "T"
pages = 2
init_size = 2
cached = [0, 1]
dirty = [0, 1]
tasks = ["wb none", "truncate 1"]
"#;
    let d = fake_checkout(CHECK);
    let o = wbspec_in(d.path(), &["check", "--all", "--mutate-ops"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "Op fuse_do_setattr:fuse_set_nowrite killed by tw: a1 violated (catalogue: holds)"
        ),
        "{text}"
    );
    assert!(
        text.contains("Op fuse_do_setattr:truncate_pagecache SURVIVED 1 checks (tw)"),
        "{text}"
    );
    assert!(
        text.contains("Op-mutation score: 1/3 ops killed, 0 equivalent"),
        "{text}"
    );
    let eq = format!(
        "{CHECK}\n[[equivalent-op]]\nlabel = \"fuse_do_setattr:truncate_pagecache\"\nwhy = \"w\"\n\n[[equivalent-op]]\nlabel = \"fuse_do_setattr:invalidate_inode_pages2\"\nwhy = \"w\"\n"
    );
    let d = fake_checkout(&eq);
    let o = wbspec_in(
        d.path(),
        &["check", "--all", "--mutate-ops", "--shard", "1/1"],
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("Op-mutation score: 1/1 ops killed, 2 equivalent"),
        "{text}"
    );
    // shard 2 of 3 runs the second label only
    let o = wbspec_in(
        d.path(),
        &["check", "--all", "--mutate-ops", "--shard", "2/3"],
    );
    assert_eq!(
        stdout(&o).lines().filter(|l| l.starts_with("Op ")).count(),
        1
    );
    let bad = format!("{CHECK}\n[[equivalent-op]]\nlabel = \"nope:nothing\"\nwhy = \"w\"\n");
    let d = fake_checkout(&bad);
    one_line_error(
        &wbspec_in(d.path(), &["check", "--all", "--mutate-ops"]),
        "names no droppable op 'nope:nothing'",
    );
}

/// A catalogue `drop` is shown by `show` and `cite`, and pinned like any
/// configuration.
#[test]
fn a_catalogue_drop_is_shown_and_cited() {
    let d = fake_checkout(
        r#"[[check]]
name = "tw"
question = "q"
kernel = "T"
pages = 2
init_size = 2
cached = [0, 1]
dirty = [0, 1]
tasks = ["wb none", "truncate 1"]
drop = ["fuse_do_setattr:fuse_set_nowrite"]
expect = { a1 = "violated", a2 = "violated", a3 = "violated" }
"#,
    );
    let s = stdout(&wbspec_in(d.path(), &["show", "tw"]));
    assert!(
        s.contains("Dropped:   fuse_do_setattr:fuse_set_nowrite"),
        "{s}"
    );
    // the entry's own drop is its configuration: pinned and compared
    let p = wbspec_in(d.path(), &["check", "tw", "--update-pins"]);
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    let r = wbspec_in(d.path(), &["check", "tw"]);
    let rt = stdout(&r);
    assert!(r.status.success(), "{rt}");
    assert!(
        rt.contains("States tw complete 112 depth=18") && rt.contains(" ok"),
        "{rt}"
    );
    assert!(!rt.contains("(drop)"), "{rt}");
    let c = wbspec_in(d.path(), &["cite", "tw"]);
    let t = stdout(&c);
    assert!(c.status.success(), "{t}");
    assert!(t.contains("fuse_do_setattr:fuse_set_nowrite"), "{t}");
    assert!(t.contains("not the kernel"), "{t}");
}

/// One shard of the catalogue's op mutation (the whole run is a separate
/// job of minutes, docs/performance.md): every op of the shard is killed
/// or explained in [[equivalent-op]], and no explanation is stale.
#[test]
fn catalogue_op_mutation_shard_is_clean() {
    let o = wbspec(&["check", "--all", "--mutate-ops", "--shard", "1/8"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        !text.contains("SURVIVED") && !text.contains("STALE"),
        "{text}"
    );
    assert!(text.contains(", 0 unexplained survivors"), "{text}");
    assert!(
        text.lines().filter(|l| l.starts_with("Op ")).count() >= 5,
        "{text}"
    );
}
