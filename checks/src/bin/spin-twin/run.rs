//! Running both sides of a comparison: the twin through `spin -a`, gcc
//! and pan, and the check through the `wbspec` binary's JSON report.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One run of a side: unique states, exploration seconds, and the
/// always-properties it found violated.
#[derive(Clone, Debug)]
pub struct Run {
    pub states: u64,
    pub seconds: f64,
    pub violated: BTreeSet<String>,
}

/// A pan verifier compiled for one configuration, in its own directory.
pub struct Pan {
    pub dir: tempfile::TempDir,
    pub exe: PathBuf,
}

fn run_ok(cmd: &mut Command, what: &str) -> Result<std::process::Output, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let msg = String::from_utf8_lossy(&out.stdout);
        let first = err.lines().chain(msg.lines()).next().unwrap_or("");
        return Err(format!("{what} failed ({}): {first}", out.status));
    }
    Ok(out)
}

/// `spin -o2 -a` the model with the flags, then `gcc -O2 -DNOREDUCE`.
/// (-o2: keep write-only variables in the state vector; -DNOREDUCE: no
/// partial-order reduction; -DSAFETY: no cycle detection, as wbspec.)
/// `opt` is gcc's optimisation level (-O2 for timing; -O0 compiles the
/// large pan.c ten times faster when only the counts matter).
pub fn compile(model: &Path, defines: &[String], opt: &str) -> Result<Pan, String> {
    let dir = tempfile::Builder::new()
        .prefix("spin-twin-")
        .tempdir()
        .map_err(|e| format!("temporary directory: {e}"))?;
    let pml = dir.path().join("fuse.pml");
    std::fs::copy(model, &pml).map_err(|e| format!("{}: {e}", model.display()))?;
    run_ok(
        Command::new("spin")
            .current_dir(dir.path())
            .arg("-o2")
            .args(defines)
            .args(["-a", "fuse.pml"]),
        "spin -a",
    )?;
    let exe = dir.path().join("pan");
    run_ok(
        Command::new("gcc").current_dir(dir.path()).args([
            opt,
            "-DNOREDUCE",
            "-DSAFETY",
            "-w",
            "-o",
            "pan",
            "pan.c",
        ]),
        "gcc",
    )?;
    Ok(Pan { dir, exe })
}

/// Runs pan exhaustively (-c0: go on after a violation, -n: no
/// unreached-code listing) with a hash table of 2^w slots.
pub fn pan(p: &Pan, w: u32) -> Result<Run, String> {
    let start = Instant::now();
    let out = run_ok(
        Command::new(&p.exe).current_dir(p.dir.path()).args([
            "-c0",
            "-n",
            "-m100000",
            &format!("-w{w}"),
        ]),
        "pan",
    )?;
    let wall = start.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut states = None;
    let mut seconds = None;
    let mut violated = BTreeSet::new();
    for l in text.lines() {
        let l = l.trim();
        if let Some(n) = l.strip_suffix("states, stored") {
            states = n.trim().parse::<u64>().ok();
        } else if let Some(s) = l.strip_prefix("pan: elapsed time ") {
            seconds = s
                .split_whitespace()
                .next()
                .and_then(|x| x.parse::<f64>().ok());
        } else if let Some(i) = l.find("assertion violated ") {
            let name = l[i + "assertion violated ".len()..]
                .split_whitespace()
                .next()
                .unwrap_or("");
            violated.insert(name.replace('_', "-"));
        } else if l.contains("invalid end state") && l.starts_with("pan:") {
            violated.insert("end-state".into());
        }
        if l.starts_with("pan:") && l.contains("out of memory") {
            return Err("pan: out of memory".into());
        }
    }
    if text.contains("Search not completed") || text.contains("max search depth too small") {
        return Err("pan: search incomplete (depth or memory limit)".into());
    }
    let states = states.ok_or("pan printed no state count")?;
    // pan prints its time with 2 decimals at best; below 0.1 s the wall
    // clock of the whole process is the better measure
    let seconds = match seconds {
        Some(s) if s >= 0.1 => s,
        _ => wall,
    };
    Ok(Run {
        states,
        seconds,
        violated,
    })
}

/// Runs `wbspec check NAME --json` and reads the exploration's unique
/// states, seconds and violated always-properties.
pub fn wbspec(exe: &Path, catalogue: &Path, name: &str) -> Result<Run, String> {
    let dir = tempfile::Builder::new()
        .prefix("spin-twin-")
        .tempdir()
        .map_err(|e| format!("temporary directory: {e}"))?;
    let json = dir.path().join("report.json");
    let out = Command::new(exe)
        .arg("--catalogue")
        .arg(catalogue)
        .args(["check", name, "--json"])
        .arg(&json)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    // exit 1 only means "not as expected", which the comparison reports
    if !matches!(out.status.code(), Some(0) | Some(1)) {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("wbspec check {name}: {}", err.trim()));
    }
    let text = std::fs::read_to_string(&json).map_err(|e| format!("wbspec report: {e}"))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{e}"))?;
    let c = v["checks"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == name))
        .ok_or_else(|| format!("wbspec report has no check {name}"))?;
    if c["complete"] != true {
        return Err(format!("wbspec check {name}: incomplete exploration"));
    }
    let mut violated = BTreeSet::new();
    for p in c["properties"].as_array().into_iter().flatten() {
        if p["observed"] == "violated" {
            violated.insert(p["name"].as_str().unwrap_or("?").to_string());
        }
    }
    Ok(Run {
        states: c["unique_states"].as_u64().ok_or("no unique_states")?,
        seconds: c["seconds"].as_f64().ok_or("no seconds")?,
        violated,
    })
}

pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}
