//! `wbspec show NAME` and `wbspec list [--long] [--kernel] [--task]
//! [--tag]`: what the catalogue says about a check, read back against
//! the catalogue itself; bad names and filter values are one-line errors.

mod common;
use common::*;
use wbspec::catalogue::{self, Verdict, Witnesses};

fn cat() -> catalogue::Catalogue {
    catalogue::load_dir(&catalogue_dir()).unwrap()
}

/// The value of field `head` (`Tasks:`), continuation lines joined.
fn field(out: &str, head: &str) -> String {
    let mut v = Vec::new();
    let mut inside = false;
    for l in out.lines() {
        if let Some(rest) = l.strip_prefix(head) {
            inside = true;
            v.push(rest.trim().to_string());
        } else if inside && l.starts_with("           ") {
            v.push(l.trim().to_string());
        } else {
            inside = false;
        }
    }
    v.join(" ")
}

#[test]
fn show_prints_what_the_catalogue_says() {
    let cat = cat();
    let e = cat
        .entries
        .iter()
        .find(|e| e.name == "t-fopen-dio-read")
        .unwrap();
    let out = wbspec(&["show", "t-fopen-dio-read"]);
    assert_eq!(out.status.code(), Some(0));
    let s = stdout(&out);
    assert_eq!(field(&s, "Check:"), "t-fopen-dio-read");
    assert_eq!(field(&s, "Question:"), e.question);
    assert_eq!(field(&s, "Kernel:").split(' ').next(), Some("T"));
    assert_eq!(field(&s, "Tasks:"), "T0 write 0+1, T1 dio-read 0+1");
    // the file and the line that names the check
    let file = field(&s, "File:");
    let (path, line) = file.rsplit_once(':').unwrap();
    assert_eq!(path, "checks/catalogue/30-direct-io.toml");
    let text = std::fs::read_to_string(repo_root().join(path)).unwrap();
    let n: usize = line.parse().unwrap();
    assert_eq!(
        text.lines().nth(n - 1).unwrap().trim(),
        "name = \"t-fopen-dio-read\""
    );
    assert_eq!(repo_root().join(path), e.file);
    // bounds: written and defaulted
    assert!(field(&s, "Settings:").contains("pages = 1"), "{s}");
    let d = field(&s, "Defaults:");
    for k in [
        "daemon_threads = 1",
        "max_background = none",
        "max_pages = 1",
    ] {
        assert!(d.contains(k), "{k}: {s}");
    }
    let violated: Vec<&str> = e
        .expect
        .iter()
        .filter(|(_, v)| *v == Verdict::Violated)
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(violated, ["b1"]);
    assert!(field(&s, "Expect:").starts_with("b1 violated; the other "));
    assert_eq!(
        field(&s, "States:"),
        format!("{} unique (pinned)", e.states.unwrap())
    );
    let Witnesses::Pinned(w) = &e.witnesses else {
        panic!("witnesses not pinned")
    };
    for (k, v) in w {
        assert!(field(&s, "Witnesses:").contains(&format!("{k} = {v}")));
    }
    let twin = cat
        .entries
        .iter()
        .find(|x| x.name == "t-fopen-dio-read-bg1")
        .unwrap();
    let c = field(&s, "Congested:");
    assert!(
        c.starts_with("t-fopen-dio-read-bg1 (max_background 1)"),
        "{c}"
    );
    assert!(
        c.contains(&format!("states {}", twin.states.unwrap())),
        "{c}"
    );
    assert_eq!(field(&s, "Tags:"), e.tags.join(", "));
    assert_eq!(field(&s, "Pair:"), e.pair.clone().unwrap());
    // a derived check says where its pins live
    let s = stdout(&wbspec(&["show", "t-fopen-dio-read-bg1"]));
    assert!(
        field(&s, "Derived:").starts_with("from t-fopen-dio-read,"),
        "{s}"
    );
    assert!(field(&s, "Defaults:").contains("max_background = 1"), "{s}");
}

/// Switches are named with what they stand for; every check's block fits
/// 72 columns.
#[test]
fn show_names_switches_and_fits_72_columns() {
    let cat = cat();
    let s = stdout(&wbspec(&["show", "gup-v2-layouts"]));
    assert!(
        field(&s, "Switch:").starts_with("p_v2 on (proposal: "),
        "{s}"
    );
    for e in &cat.entries {
        for l in wbspec::show::show(e, &cat) {
            assert!(l.chars().count() <= 72, "{}: {l:?}", e.name);
        }
    }
}

/// The names `list` prints with `args`.
fn listed(args: &[&str]) -> Vec<String> {
    let mut a = vec!["list"];
    a.extend_from_slice(args);
    let out = wbspec(&a);
    assert_eq!(out.status.code(), Some(0), "{:?}", out);
    stdout(&out)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn list_filters_select_exactly_the_matching_checks() {
    let cat = cat();
    let names = |f: &dyn Fn(&catalogue::Entry) -> bool| -> Vec<String> {
        cat.entries
            .iter()
            .filter(|e| f(e))
            .map(|e| e.name.clone())
            .collect()
    };
    let dio_write = |e: &catalogue::Entry| {
        wbspec::show::tasks(e)
            .iter()
            .any(|t| t.split_whitespace().next() == Some("dio-write"))
    };
    let t2 = names(&|e| e.check.kernel() == "T2");
    assert!(t2.len() > 5);
    assert_eq!(listed(&["--kernel", "T2"]), t2);
    let dw = names(&dio_write);
    assert!(dw.len() > 3);
    assert_eq!(listed(&["--task", "dio-write"]), dw);
    let finding = names(&|e| e.has_tag("finding"));
    assert!(!finding.is_empty());
    assert_eq!(listed(&["--tag", "finding"]), finding);
    let both = names(&|e| e.check.kernel() == "T2" && dio_write(e));
    assert!(!both.is_empty() && both.len() < t2.len());
    assert_eq!(
        listed(&["--long", "--kernel", "T2", "--task", "dio-write"]),
        both
    );
    // without a filter: every check, the long form with tasks and pins
    assert_eq!(listed(&[]), names(&|_| true));
    let long = stdout(&wbspec(&["list", "--long", "--tag", "finding"]));
    let first = cat.entries.iter().find(|e| e.has_tag("finding")).unwrap();
    let l = long.lines().next().unwrap();
    assert!(
        l.contains(&format!(
            "tasks=[{}]",
            wbspec::show::tasks(first).join(", ")
        )),
        "{l}"
    );
    assert!(
        l.contains(&format!("states={}", first.states.unwrap())),
        "{l}"
    );
    // a check's switches stay separate words of its kernel field
    let long = stdout(&wbspec(&["list", "--long", "--kernel", "L"]));
    assert!(
        long.lines()
            .any(|l| l.starts_with("l612-fopen-dio-write-vs-wb ")
                && l.contains("kernel=L+dio_flush_always+dio_invalidate_after_write ")),
        "{long}"
    );
}

#[test]
fn bad_names_and_filter_values_are_one_line_errors() {
    one_line_error(
        &wbspec(&["show", "no-such-check"]),
        "unknown check 'no-such-check'",
    );
    one_line_error(
        &wbspec(&["list", "--kernel", "T9"]),
        "--kernel T9: no model has this kernel state (known: L, T, T17, T2",
    );
    // the task syntax is listed
    one_line_error(&wbspec(&["list", "--task", "dio-wrote"]), "dio-write F+N");
    one_line_error(
        &wbspec(&["list", "--tag", "no-such-tag"]),
        "--tag no-such-tag: no check has this tag",
    );
}

/// An unknown task in a catalogue names the task syntax.
#[test]
fn an_unknown_task_lists_the_task_syntax() {
    let d = tmpdir();
    std::fs::write(
        d.path().join("c.toml"),
        "[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\npages = 1\ninit_size = 1\ntasks = [\"dio-wrote 0+1\"]\n",
    )
    .unwrap();
    let out = wbspec(&["--catalogue", d.path().to_str().unwrap(), "list"]);
    one_line_error(&out, "unknown task 'dio-wrote 0+1' (tasks: write F+N,");
    one_line_error(&out, "dio-write F+N");
    std::fs::write(
        d.path().join("c.toml"),
        "[[check]]\nname = \"x\"\nmodel = \"nowait\"\nquestion = \"q\"\nkernel = \"M615\"\ntasks = [\"uring-apend 2\"]\n",
    )
    .unwrap();
    let out = wbspec(&["--catalogue", d.path().to_str().unwrap(), "show", "x"]);
    one_line_error(&out, "uring-append N");
}
