//! `wbspec cite`: a block a reviewer can paste. Every line fits 72
//! columns (also with a generated long question and long names), the
//! reproduce command it prints works (also with --catalogue), it names
//! the kernel state's commits from checks/facts/kernels.toml, and
//! (docs/citing.md's example is a generated block: `check --all --update-docs`.)

mod common;
use common::*;
use std::path::Path;

fn assert_width(text: &str) {
    for l in text.lines() {
        assert!(l.chars().count() <= 72, "over 72 columns: {l:?}");
    }
}

/// The commands of the block's `Reproduce:` section, continuation lines
/// joined, as argument lists for the built binary (the leading
/// `cargo run --release --` dropped).
fn reproduce_args(block: &str) -> Vec<Vec<String>> {
    let mut cmds = Vec::new();
    let mut cur = String::new();
    for l in block
        .lines()
        .skip_while(|l| *l != "Reproduce:")
        .skip(1)
        .take_while(|l| !l.is_empty())
    {
        let t = l.trim();
        if t.starts_with('#') || t.starts_with("git checkout") {
            continue;
        }
        match t.strip_suffix('\\') {
            Some(head) => cur.push_str(head),
            None => {
                cur.push_str(t);
                cmds.push(std::mem::take(&mut cur));
            }
        }
    }
    cmds.into_iter()
        .map(|c| {
            let words = shell_words(&c);
            assert_eq!(&words[..4], ["cargo", "run", "--release", "--"], "{c}");
            words[4..].to_vec()
        })
        .collect()
}

/// POSIX shell words of `c`: blanks split, single quotes quote.
fn shell_words(c: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur: Option<String> = None;
    let mut quoted = false;
    for ch in c.chars() {
        match ch {
            '\'' => {
                quoted = !quoted;
                cur.get_or_insert_with(String::new);
            }
            ' ' if !quoted => words.extend(cur.take()),
            _ => cur.get_or_insert_with(String::new).push(ch),
        }
    }
    words.extend(cur);
    words
}

#[test]
fn cite_prints_a_review_block() {
    let out = wbspec(&["cite", "t-fopen-dio-read"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = stdout(&out);
    assert_width(&s);
    assert!(s.starts_with("Question:  FOPEN_DIRECT_IO read"), "{s}");
    assert!(
        s.contains("Verdict:   b1 violated (exhaustive, 44 states;"),
        "{s}"
    );
    // the pair's switches with their commits and titles
    assert!(s.contains("differs: dio_flush_always = false here, true there\n           1ce120dcefc0 (\"fuse: Always flush the page cache before"), "{s}");
    // only the differing property, the rest counted, meanings
    assert!(
        s.contains("  b1     violated here, holds in t2-fopen-dio-read\n"),
        "{s}"
    );
    // every always-property of the model but b1 (counted, not pinned:
    // the model gains properties)
    let cat = wbspec::catalogue::load_dir(&catalogue_dir()).unwrap();
    let e = cat
        .entries
        .iter()
        .find(|e| e.name == "t-fopen-dio-read")
        .unwrap();
    let always = e
        .check
        .property_defs()
        .iter()
        .filter(|d| d.expectation != stateright::Expectation::Sometimes)
        .count();
    assert!(
        s.contains(&format!(
            "{} other properties: same verdict in both",
            always - 1
        )),
        "{s}"
    );
    assert!(
        !s.contains("  a1 "),
        "unrelated properties are not listed: {s}"
    );
    assert!(
        s.contains("  b1     direct read sees every write(2)"),
        "{s}"
    );
    // scope and kernel facts
    assert!(
        s.contains("  tasks          T0 \"write 0+1\", T1 \"dio-read 0+1\"\n"),
        "{s}"
    );
    assert!(s.contains("  daemon         1 thread\n"), "{s}");
    assert!(s.contains("  not modelled   "), "{s}");
    assert!(s.contains("Kernel:    T (6.16)\n"), "{s}");
    assert!(
        s.contains("  lacks    1ce120dcefc0 (\"fuse: Always flush"),
        "{s}"
    );
    assert!(
        s.contains("  has      0c58a97f919c (\"fuse: remove tmp folio"),
        "{s}"
    );
    assert!(s.contains("Tool:      wbspec "), "{s}");
    assert!(s.contains(wbspec::cite::REPOSITORY), "{s}");
    assert!(
        s.contains("Counterexample t-fopen-dio-read b1 (10 steps;"),
        "{s}"
    );
    assert!(s.contains("=> b1 fails at step 10"), "{s}");
    one_line_error(&wbspec(&["cite", "nope"]), "unknown check 'nope'");
}

#[test]
fn cite_of_the_otrunc_race_is_short_and_names_commits() {
    let out = wbspec(&["cite", "t2-otrunc-atomic-race"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = stdout(&out);
    assert_width(&s);
    // 92 lines before the facts file and the pair-only property list
    assert!(s.lines().count() < 92, "{} lines:\n{s}", s.lines().count());
    assert!(
        s.contains("differs: mount: writeback_cache, atomic_o_trunc; max_pages 1 here;"),
        "{s}"
    );
    assert!(s.contains("  has      1ce120dcefc0"), "{s}");
    assert!(s.contains("  has      b359af8275a9"), "{s}");
    assert!(
        !s.contains("r-flag") && !s.contains("lf-slots"),
        "unrelated properties: {s}"
    );
}

/// The printed command reruns the check and its pair, also when the
/// catalogue is not the checkout's own.
#[test]
fn the_reproduce_command_works_with_a_catalogue_dir() {
    let tmp = tmpdir();
    let cat = tmp.path().join("my catalogue");
    std::fs::create_dir(&cat).unwrap();
    std::fs::copy(
        catalogue_dir().join("15-open.toml"),
        cat.join("15-open.toml"),
    )
    .unwrap();
    let out = wbspec_in(
        Path::new("/"),
        &[
            "--catalogue",
            cat.to_str().unwrap(),
            "cite",
            "t2-otrunc-atomic-race",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = stdout(&out);
    assert_width(&s);
    let cmds = reproduce_args(&s);
    assert_eq!(cmds.len(), 1, "{s}");
    assert!(cmds[0].contains(&"--catalogue".to_string()), "{s}");
    let args: Vec<&str> = cmds[0].iter().map(String::as_str).collect();
    // from the checkout, as a reader would after `git checkout`
    let run = wbspec(&args);
    let text = stdout(&run);
    assert!(
        run.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        text.contains("Check t2-otrunc-atomic-race a3 Sometimes"),
        "{text}"
    );
    assert!(text.contains("Check t2-otrunc-race a3 Never"), "{text}");
}

/// A generated long question, long words and the longest check names
/// still fit 72 columns.
#[test]
fn a_long_question_and_names_fit_72_columns() {
    let long_word = "x".repeat(130);
    let name_a = format!("a{}", "b".repeat(63));
    let name_b = format!("c{}", "d".repeat(63));
    let question = format!(
        "{} {long_word} what happens to O_TRUNC when {} ünïcödé {}",
        "a long question, ".repeat(8),
        "w".repeat(80),
        "é".repeat(90)
    );
    let check = |name: &str, pair: &str| {
        format!(
            "[[check]]\nname = \"{name}\"\nquestion = \"{question}\"\nkernel = \"T\"\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\npair = \"{pair}\"\n"
        )
    };
    let d = fake_checkout(&(check(&name_a, &name_b) + &check(&name_b, &name_a)));
    let out = wbspec_in(d.path(), &["cite", &name_a]);
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = stdout(&out);
    assert!(s.contains("Question:"), "{s}");
    assert_width(&s);
    assert!(s.contains(&long_word[..50]), "{s}");
}

/// Every model's citation has a scope block that says what it leaves
/// out, and fits 72 columns.
#[test]
fn every_model_cites_its_scope() {
    for (check, kernel) in [
        ("nw-m60-append-dup", "Kernel:    M60 (6.0 - 6.14)"),
        ("gup-r1-willy", "Kernel:    R1 (6.13-rc1 - rc6)"),
        ("c-slots", "Kernel:    C (iomap, 2026 trees)"),
    ] {
        let out = wbspec(&["cite", check]);
        assert!(out.status.success(), "{check}");
        let s = stdout(&out);
        assert_width(&s);
        assert!(s.contains("\nScope:\n"), "{s}");
        assert!(s.contains("  not modelled   "), "{s}");
        assert!(s.contains(kernel), "{s}");
    }
}
