//! Saved traces (traces/*.json): the committed ones replay and match the
//! catalogue's violations; bad trace files give one-line errors; explain,
//! cite and the Explorer's SVG render what a reviewer needs.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use wbspec::{catalogue, trace};

fn committed() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(traces_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().map_or(false, |x| x == "json"))
        .collect();
    v.sort();
    v
}

const REGEN: &str = "regenerate with `cargo run --release -- check --all --write-traces`";

fn assert_width(text: &str) {
    for l in text.lines() {
        assert!(l.chars().count() <= 72, "over 72 columns: {l:?}");
    }
}

/// Every committed trace replays with the built binary.
#[test]
fn committed_traces_replay() {
    let files = committed();
    assert!(files.len() >= 13, "only {} committed traces", files.len());
    for f in &files {
        let out = wbspec(&["replay", f.to_str().unwrap()]);
        let s = stdout(&out);
        assert!(
            out.status.success(),
            "{} does not replay ({REGEN}): {}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let t: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let n = t["actions"].as_array().unwrap().len();
        assert_eq!(
            s.trim(),
            format!(
                "replayed {n} steps; {} fails at step {n} as recorded",
                t["property"].as_str().unwrap()
            )
        );
        let name = f.file_name().unwrap().to_str().unwrap();
        assert_eq!(
            name,
            trace::file_name(
                t["check"].as_str().unwrap(),
                t["property"].as_str().unwrap()
            )
        );
        assert!(t.get("fingerprint").is_none() && !t.to_string().contains("fingerprint"));
    }
}

/// The committed traces are exactly the catalogue's expected violations
/// (the whole-catalogue test checks that those are the observed ones),
/// and each is what `check --write-traces` would write now.
#[test]
fn committed_traces_match_the_catalogue() {
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let mut expected = Vec::new();
    for e in &cat.entries {
        for (prop, v) in &e.expect {
            if *v == catalogue::Verdict::Violated {
                let f = traces_dir().join(trace::file_name(&e.name, prop));
                assert!(f.exists(), "no trace {} ({REGEN})", f.display());
                let cx = e.check.shortest(prop).unwrap().unwrap();
                let now = serde_json::to_value(trace::build(e, prop, &cx).unwrap()).unwrap();
                let saved: Value =
                    serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
                assert_eq!(now, saved, "{} is stale ({REGEN})", f.display());
                expected.push(f);
            }
        }
    }
    expected.sort();
    assert_eq!(expected, committed(), "stale files in traces/ ({REGEN})");
}

fn b1_trace() -> (PathBuf, Value) {
    let f = traces_dir().join("t-fopen-dio-read--b1.json");
    let v = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    (f, v)
}

fn write_json(dir: &Path, name: &str, v: &Value) -> String {
    let dir = dir.to_path_buf();
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn bad_trace_files_give_one_line_errors() {
    let tmp = tmpdir();
    let dir = tmp.path();
    let (f, good) = b1_trace();
    // truncated JSON
    let text = std::fs::read_to_string(&f).unwrap();
    let p = dir.join("truncated.json");
    std::fs::write(&p, &text[..text.len() / 2]).unwrap();
    one_line_error(&wbspec(&["replay", p.to_str().unwrap()]), "malformed JSON");
    // wrong schema version
    let mut v = good.clone();
    v["schema"] = 9.into();
    one_line_error(
        &wbspec(&["replay", &write_json(dir, "schema.json", &v)]),
        "trace schema version 9",
    );
    // a trace from another model version
    let mut v = good.clone();
    v["model_version"] = "fuse-0".into();
    one_line_error(
        &wbspec(&["replay", &write_json(dir, "version.json", &v)]),
        "made by model fuse-0",
    );
    // a numeric model_version is not a string, not missing
    let mut v = good.clone();
    v["model_version"] = 7.into();
    one_line_error(
        &wbspec(&["replay", &write_json(dir, "version_num.json", &v)]),
        "field model_version: 7 is not a string",
    );
    // a missing field
    let mut v = good.clone();
    v.as_object_mut().unwrap().remove("actions");
    one_line_error(
        &wbspec(&["explain", &write_json(dir, "field.json", &v)]),
        "missing field `actions`",
    );
    // an action that is not enabled: step 3 is T0's inode_unlock, and
    // T0 has already copied its one page
    let mut v = good.clone();
    v["actions"][2]["step"] = "CopyPage".into();
    one_line_error(
        &wbspec(&["replay", &write_json(dir, "enabled.json", &v)]),
        r#"step 3: action {"actor":{"Task":0},"step":"CopyPage"} is not enabled"#,
    );
    // an Explorer index that names another action
    let mut v = good.clone();
    v["encoded"] = "0/1/0/0/0/0/0/0/0/0/0".into();
    one_line_error(
        &wbspec(&["replay", &write_json(dir, "index.json", &v)]),
        "step 1: Explorer index 1 names T1 dio-read: syscall entry",
    );
    // the property no longer fails at the last step
    let mut v = good.clone();
    v["actions"].as_array_mut().unwrap().pop();
    v["steps"].as_array_mut().unwrap().pop();
    v["encoded"] = "0/0/0/0/0/0/0/0/0/0".into();
    one_line_error(
        &wbspec(&["replay", &write_json(dir, "short.json", &v)]),
        "b1 no longer fails at step 9",
    );
    // a recorded state change that the model does not make
    let mut v = good.clone();
    v["steps"][1]["changed"] = serde_json::json!(["+ page 0: v9"]);
    one_line_error(
        &wbspec(&["replay", &write_json(dir, "changed.json", &v)]),
        "field steps[2].changed",
    );
    // not a file
    one_line_error(
        &wbspec(&["replay", dir.join("absent.json").to_str().unwrap()]),
        "absent.json",
    );
}

#[test]
fn explain_narrates_in_kernel_terms_and_names_the_values() {
    let (f, _) = b1_trace();
    let out = wbspec(&["explain", f.to_str().unwrap()]);
    assert!(out.status.success());
    let s = stdout(&out);
    assert_width(&s);
    for n in 1..=10 {
        assert!(
            s.lines().any(|l| l.starts_with(&format!("{n:>2} "))),
            "no step {n}: {s}"
        );
    }
    assert!(
        s.contains(" 8 T1 dio-read   fuse_direct_io: send READ"),
        "{s}"
    );
    assert!(s.contains("=> b1 fails at step 10"), "{s}");
    // the page and version the read returned vs the data it had to see
    assert!(s.contains("page 0:"), "{s}");
    assert!(s.contains("v1 (initial data)"), "{s}");
    assert!(s.contains("v2 (T0 write)"), "{s}");

    let f = traces_dir().join("m-a2-crop-old-size--a3.json");
    let s = stdout(&wbspec(&["explain", f.to_str().unwrap()]));
    assert_width(&s);
    assert!(s.contains("=> a3 fails at step"), "{s}");
    assert!(s.contains("server size is 2p but i_size is 1p"), "{s}");

    // check --explain prints the same narrative
    let s = stdout(&wbspec(&["check", "t-fopen-dio-read", "--explain"]));
    assert!(s.contains("Counterexample t-fopen-dio-read b1 (10 steps)"));
    assert!(s.contains("Explorer path #/steps/0/0/0/0/0/0/0/0/0/0/0"));
    assert!(s.contains("v2 (T0 write)"), "{s}");
}

#[test]
fn check_writes_traces_on_request() {
    let tmp = tmpdir();
    let dir = tmp.path();
    let out = wbspec(&[
        "check",
        "m-d-fsync-no-wait",
        "t-fopen-dio-read-allow-mmap",
        "--write-traces",
        "--traces-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, vec!["m-d-fsync-no-wait--d.json".to_string()]);
    let a = std::fs::read_to_string(dir.join(&files[0])).unwrap();
    let b = std::fs::read_to_string(traces_dir().join(&files[0])).unwrap();
    assert_eq!(a, b, "written trace differs from the committed one");
    one_line_error(
        &wbspec(&["check", "m-d-fsync-no-wait", "--traces-dir", "x"]),
        "--write-traces",
    );
}

#[test]
fn a_pair_must_name_another_check() {
    let tmp = tmpdir();
    let dir = tmp.path();
    std::fs::write(
        dir.join("p.toml"),
        "[[check]]\nname = \"x\"\nquestion = \"q\"\nkernel = \"T\"\npages = 1\ninit_size = 1\ntasks = [\"fsync\"]\npair = \"y\"\n",
    )
    .unwrap();
    one_line_error(
        &wbspec(&["--catalogue", dir.to_str().unwrap(), "list"]),
        "pairs with unknown check 'y'",
    );
}

/// The Explorer's SVG of each committed trace: self-contained, one lane
/// per lane of the model (`Spec::lanes`), one dot per step, the violation
/// marked, blocked spans for a deadlock. FUSE: a lane per task and worker
/// plus /dev/fuse.
#[test]
fn sequence_diagrams_of_the_traces() {
    let cat = catalogue::load_dir(&catalogue_dir()).unwrap();
    let mut models = std::collections::BTreeSet::new();
    for f in committed() {
        let r = trace::replay_file(&f, &cat.entries).unwrap();
        let svg = r.check.svg(&r.trace.counterexample()).unwrap();
        models.insert(r.trace.model.clone());
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.ends_with("</svg>"));
        assert!(!svg.contains("<script") && !svg.contains("href"));
        assert!(svg.len() < 20_000, "{} bytes", svg.len());
        // text of at least 12 CSS px at 100 % zoom: font size times the
        // scale from the viewBox to the displayed width
        let attr = |k: &str, i: usize| -> f64 {
            let v = svg.split(&format!(" {k}=\"")).nth(1).unwrap();
            let v = &v[..v.find('"').unwrap()];
            v.split(' ').nth(i).unwrap().parse().unwrap()
        };
        // viewBox="0 0 W H"
        let px = attr("font-size", 0) * attr("width", 0) / attr("viewBox", 2);
        assert!(px >= 12.0, "{}: text {px:.1} px", f.display());
        assert!(!svg.contains("font-size=\"8") && !svg.contains("font-size=\"9"));
        assert_eq!(svg.matches("<circle").count(), r.trace.actions.len());
        // the property is in the list "violated here: a2, a3, a6" (FUSE:
        // a6 after a3), or starts or ends another model's list
        let listed = svg
            .split("violated here: ")
            .nth(1)
            .and_then(|t| t.split('<').next())
            .is_some_and(|t| t.split(", ").any(|p| p == r.trace.property));
        assert!(
            listed
                || svg.contains(&format!("violated here: {}", r.trace.property))
                || svg.contains(&format!(", {}<", r.trace.property)),
            "{}",
            f.display()
        );
        if r.trace.property == "e" {
            // a blocked task, or a request nobody will read (after an
            // abort the daemon is gone: m-abort-queues)
            assert!(
                svg.contains("blocked in") || svg.contains("stuck after the abort"),
                "{}: deadlock shows nothing blocked",
                f.display()
            );
        }
        if r.trace.model == "nowait" {
            use wbspec_models::nowait::TaskSpec;
            let tasks: Vec<TaskSpec> =
                serde_json::from_value(r.trace.config["tasks"].clone()).unwrap();
            for (t, spec) in tasks.iter().enumerate() {
                assert!(svg.contains(&format!(">T{t} {}</text>", spec.short())));
                if matches!(spec, TaskSpec::Uring { .. }) {
                    assert!(svg.contains(&format!(">T{t} io-wq</text>")));
                }
            }
        }
        if r.trace.model != "fuse" {
            continue;
        }
        let tasks: Vec<String> = r.trace.config["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                serde_json::from_value::<wbspec_models::fuse::TaskSpec>(t.clone())
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert!(svg.contains(">/dev/fuse</text>"));
        for (t, spec) in tasks.iter().enumerate() {
            assert!(svg.contains(&format!(">T{t} {spec}</text>")));
        }
        assert!(svg.contains(">D0 daemon</text>"));
    }
    assert!(
        models.contains("fuse") && models.contains("nowait"),
        "{models:?}"
    );
}

/// Runs wbspec and kills it (by its PID) if it has not exited within
/// `secs`: a wrongly started Explorer must not hang the tests.
fn wbspec_bounded(args: &[&str], secs: u64) -> Output {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_wbspec"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn wbspec");
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed().as_secs() >= secs {
            let _ = child.kill();
            let _ = child.wait();
            panic!("wbspec {args:?} still running after {secs}s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn explore_rejects_a_busy_port_and_a_foreign_trace() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port().to_string();
    one_line_error(
        &wbspec_bounded(&["explore", "t-fopen-dio-read", "--port", &port], 20),
        &format!("127.0.0.1:{port}"),
    );
    drop(l);
    let (f, _) = b1_trace();
    one_line_error(
        &wbspec_bounded(
            &[
                "explore",
                "t2-fopen-dio-read",
                "--trace",
                f.to_str().unwrap(),
            ],
            20,
        ),
        "another configuration",
    );
}
