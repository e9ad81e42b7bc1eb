//! spin-twin: runs the Spin twin of the FUSE model (spin/fuse.pml) beside
//! `wbspec check` on the same catalogue configurations, and compares the
//! unique-state counts, the violated always-properties and the speed.
//!
//!   spin-twin list                  checks the twin covers (and the others, with why not)
//!   spin-twin flags NAME            the twin's -D flags for a check
//!   spin-twin compare [NAMES...]    run both sides; exit 1 on any difference
//!       --repeat N                  runs per side (medians), default 3
//!       --max-states N              only checks pinned at most N states
//!       --gcc-opt -O0               compile pan without optimisation
//!                                   (faster when only the counts matter)
//!
//! Options for all: --catalogue DIR, --model FILE (spin/fuse.pml),
//! --wbspec FILE (the wbspec binary beside this one). Needs spin and gcc.
//! docs/performance.md ("Spin twin") has the encoding and the numbers.

mod flags;
mod run;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use wbspec_models::fuse::Config;

struct Entry {
    name: String,
    states: Option<u64>,
    twin: Result<Vec<String>, String>,
}

/// Every FUSE check of the catalogue, in file order, with its twin flags
/// (or why it has none).
fn load(dir: &PathBuf) -> Result<Vec<Entry>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let doc: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| format!("{}: {}", f.display(), e.message()))?;
        let Some(toml::Value::Array(checks)) = doc.get("check") else {
            continue;
        };
        for c in checks {
            let Some(t) = c.as_table() else { continue };
            let name = t.get("name").and_then(|v| v.as_str()).unwrap_or("");
            if t.get("model").and_then(|v| v.as_str()).unwrap_or("fuse") != "fuse" {
                continue;
            }
            let mut cfg = t.clone();
            for k in flags::GENERIC_KEYS {
                cfg.remove(*k);
            }
            let twin = Config::from_table(&cfg).and_then(|c| flags::defines(&c));
            out.push(Entry {
                name: name.to_string(),
                states: t
                    .get("states")
                    .and_then(|v| v.as_integer())
                    .map(|n| n as u64),
                twin,
            });
        }
    }
    Ok(out)
}

/// 2^w hash slots for pan: about twice the states, at least 2^18.
fn hash_bits(states: Option<u64>) -> u32 {
    let n = states.unwrap_or(1 << 20).max(1);
    (64 - n.leading_zeros() + 1).clamp(18, 30)
}

fn compare(
    entries: &[&Entry],
    repeat: usize,
    model: &Path,
    wbspec: &Path,
    catalogue: &Path,
    opt: &str,
) -> Result<bool, String> {
    let mut all_equal = true;
    println!(
        "{:<32} {:>10} {:>10} {:>12} {:>12} {:>7}  verdicts",
        "check", "wbspec", "spin", "wbspec st/s", "spin st/s", "ratio"
    );
    for e in entries {
        let defines = e
            .twin
            .as_ref()
            .map_err(|why| format!("{}: {why}", e.name))?;
        let pan = run::compile(model, defines, opt)?;
        let w = hash_bits(e.states);
        let (mut ws, mut ss) = (Vec::new(), Vec::new());
        let (mut wl, mut sl) = (None, None);
        // interleaved, so that both sides see the same machine load
        for _ in 0..repeat.max(1) {
            let a = run::wbspec(wbspec, catalogue, &e.name)?;
            let b = run::pan(&pan, w)?;
            ws.push(a.states as f64 / a.seconds.max(1e-9));
            ss.push(b.states as f64 / b.seconds.max(1e-9));
            wl = Some(a);
            sl = Some(b);
        }
        let (a, b) = (wl.unwrap(), sl.unwrap());
        let (wr, sr) = (run::median(ws), run::median(ss));
        let same = a.states == b.states && a.violated == b.violated;
        all_equal &= same;
        let v = |s: &std::collections::BTreeSet<String>| {
            if s.is_empty() {
                "-".to_string()
            } else {
                s.iter().cloned().collect::<Vec<_>>().join(",")
            }
        };
        let verdicts = if a.violated == b.violated {
            v(&a.violated)
        } else {
            format!("wbspec {} / spin {}", v(&a.violated), v(&b.violated))
        };
        println!(
            "{:<32} {:>10} {:>10} {:>12.0} {:>12.0} {:>7.2}  {} {}",
            e.name,
            a.states,
            b.states,
            wr,
            sr,
            wr / sr.max(1e-9),
            verdicts,
            if same { "equal" } else { "DIFFERENT" }
        );
    }
    Ok(all_equal)
}

fn main() -> ExitCode {
    match real_main() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("spin-twin: {}", e.lines().next().unwrap_or(""));
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<bool, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut catalogue = root.join("catalogue");
    let mut model = root.join("../spin/fuse.pml");
    let mut wbspec = std::env::current_exe()
        .map_err(|e| format!("{e}"))?
        .with_file_name("wbspec");
    let mut repeat = 3usize;
    let mut max_states: Option<u64> = None;
    let mut opt = "-O2".to_string();
    let mut words = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |what: &str| args.next().ok_or(format!("{a} needs {what}"));
        match a.as_str() {
            "--catalogue" => catalogue = PathBuf::from(val("a directory")?),
            "--model" => model = PathBuf::from(val("a file")?),
            "--wbspec" => wbspec = PathBuf::from(val("a file")?),
            "--repeat" => {
                repeat = val("a number")?
                    .parse()
                    .map_err(|_| "--repeat needs a number".to_string())?
            }
            "--max-states" => {
                max_states = Some(
                    val("a number")?
                        .parse()
                        .map_err(|_| "--max-states needs a number".to_string())?,
                )
            }
            "--gcc-opt" => {
                opt = val("an optimisation level")?;
                if !opt.starts_with("-O") {
                    return Err(format!("--gcc-opt takes -O0..-O3, not {opt}"));
                }
            }
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            _ => words.push(a),
        }
    }
    let entries = load(&catalogue)?;
    let find = |n: &str| {
        entries
            .iter()
            .find(|e| e.name == n)
            .ok_or(format!("no FUSE check named {n:?} in the catalogue"))
    };
    match words.first().map(String::as_str) {
        Some("list") => {
            for e in &entries {
                match &e.twin {
                    Ok(_) => println!("twin {} {}", e.name, e.states.unwrap_or(0)),
                    Err(why) => println!("no-twin {} ({why})", e.name),
                }
            }
            Ok(true)
        }
        Some("flags") => {
            let n = words.get(1).ok_or("flags needs a check name")?;
            let e = find(n)?;
            let d = e
                .twin
                .as_ref()
                .map_err(|why| format!("{n}: no twin: {why}"))?;
            println!("{}", d.join(" "));
            Ok(true)
        }
        Some("compare") => {
            let chosen: Vec<&Entry> = if words.len() > 1 {
                words[1..]
                    .iter()
                    .map(|n| find(n))
                    .collect::<Result<_, _>>()?
            } else {
                entries
                    .iter()
                    .filter(|e| e.twin.is_ok())
                    .filter(|e| match (max_states, e.states) {
                        (Some(m), Some(s)) => s <= m,
                        _ => true,
                    })
                    .collect()
            };
            if chosen.is_empty() {
                return Err("no check to compare".into());
            }
            compare(&chosen, repeat, &model, &wbspec, &catalogue, &opt)
        }
        Some(other) => Err(format!("unknown command {other} (list, flags, compare)")),
        None => Err("usage: spin-twin list | flags NAME | compare [NAMES...]".into()),
    }
}
