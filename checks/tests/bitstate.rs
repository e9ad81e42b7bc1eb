//! `--bitstate N` (checks/src/bitstate.rs): a search for state spaces
//! beyond memory that says in every verdict that it is not a proof.

mod common;
use common::*;

/// With room to spare the bits store every state, yet no property
/// `holds`: every verdict, the States line and the JSON report say the
/// run is not a proof, and the exit status is 1.
#[test]
fn a_bitstate_run_is_never_a_proof() {
    let d = tmpdir();
    let json = d.path().join("r.json");
    let o = wbspec(&[
        "check",
        "m-c1-c-end-early",
        "--bitstate",
        "26",
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let checks: Vec<&str> = out.lines().filter(|l| l.starts_with("Check ")).collect();
    assert!(checks.len() > 5, "{out}");
    for l in &checks {
        assert!(
            l.contains("bitstate 2^26 bits") && !l.ends_with(" ok"),
            "{l}"
        );
        if !l.contains(" Sometimes ") {
            assert!(l.contains("not a proof") && l.contains(" Unknown "), "{l}");
        }
    }
    let states = out.lines().find(|l| l.starts_with("States ")).unwrap();
    assert!(
        states.contains(" INCOMPLETE 54005 ") && states.contains("not a proof"),
        "{states}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let c = &v["checks"][0];
    assert_eq!(c["complete"], false);
    assert_eq!(c["bound"]["bound"], "--bitstate");
    assert_eq!(c["bound"]["limit"], 26);
    assert!(c["bound"]["expected_omissions"].as_f64().unwrap() < 0.01);
}

/// Too few bits: states are omitted, fewer are stored than the pin, and
/// the estimate says many may be missing.
#[test]
fn too_few_bits_omit_states_and_say_so() {
    let o = wbspec(&["check", "t-large-dio-trunc-3p", "--bitstate", "20"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let states = out.lines().find(|l| l.starts_with("States ")).unwrap();
    let n: u64 = states.split_whitespace().nth(3).unwrap().parse().unwrap();
    assert!(n < 523_753, "{states}");
    let about: f64 = states
        .split("about ")
        .nth(1)
        .and_then(|x| x.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(about > 1000.0, "{states}");
}

#[test]
fn bad_bitstate_values_are_usage_errors() {
    for args in [
        &["check", "t-close-after-write", "--bitstate", "19"][..],
        &["check", "t-close-after-write", "--bitstate", "41"],
        &["check", "t-close-after-write", "--bitstate", "x"],
        &[
            "check",
            "t-close-after-write",
            "--bitstate",
            "24",
            "--threads",
            "2",
        ],
        &[
            "check",
            "t-close-after-write",
            "--bitstate",
            "24",
            "--engine",
            "stateright",
        ],
    ] {
        one_line_error(&wbspec(args), "--bitstate");
    }
}
