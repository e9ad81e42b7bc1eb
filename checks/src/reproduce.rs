//! `wbspec reproduce ID`: run a finding's real-kernel reproducer
//! (checks/facts/findings.toml, `reproducer`) and print what the kernel
//! did next to what the model predicts. Exit 0 when the kernel did what
//! the model predicts (reproduced), 1 when it did not, 2 when the
//! reproducer cannot run here.
//!
//! Reproducers, by kind:
//! - `scenario:NAME`: a held-reply scenario on the host (`conform NAME`):
//!   the scenarios named after a finding assert the kernel outcome the
//!   model predicts, and conform checks their trace against the model.
//! - `vm:NAME`: a scenario that could oops the host (a BUG_ON): it runs
//!   only in a `wbspec vm` guest, on the image `--kernel` names.
//! - `nowait-append`: the io_uring O_APPEND run on an xfs loop device
//!   (harness/src/nowait_rk.rs); torn records are the reproduction. Its
//!   precondition, a NOWAIT attempt cut short by the dirty limit, is
//!   environmental, so it tries up to `NOWAIT_ATTEMPTS` runs.

use crate::catalogue::{Entry, Verdict};
use crate::findings::Finding;

/// Runs of the nowait reproducer before it gives up.
pub const NOWAIT_ATTEMPTS: usize = 3;

/// What the model predicts: the finding's checks and their expected
/// violations, one line each.
pub fn model_lines(f: &Finding, entries: &[Entry]) -> Vec<String> {
    let mut v = vec![format!("Model predicts ({}):", f.id)];
    for c in &f.checks {
        if let Some(e) = entries.iter().find(|e| &e.name == c) {
            let bad: Vec<&str> = e
                .expect
                .iter()
                .filter(|(_, x)| *x == Verdict::Violated)
                .map(|(p, _)| p.as_str())
                .collect();
            v.push(format!(
                "  {c} ({}): {}",
                e.check.kernel(),
                if bad.is_empty() {
                    "every always-property holds".to_string()
                } else {
                    format!("{} violated", bad.join(", "))
                }
            ));
        }
    }
    v
}

/// Parses `reproducer`: (kind, name).
pub fn parse(r: &str) -> Result<(&str, &str), String> {
    if r == "nowait-append" {
        return Ok((r, ""));
    }
    match r.split_once(':') {
        Some((k @ ("scenario" | "vm"), n)) if !n.is_empty() => Ok((k, n)),
        _ => Err(format!(
            "reproducer '{r}': one of scenario:NAME, vm:NAME, nowait-append"
        )),
    }
}

/// Can a guest boot from `image` here? QEMU is installed and the image
/// is a bzImage (`wbspec vm` checks the same, after printing).
fn check_guest(f: &Finding, image: &str) -> Result<(), String> {
    if wbspec_harness::vm::initramfs::which("qemu-system-x86_64").is_none() {
        return Err(format!(
            "{}: qemu-system-x86_64 not found (Debian package qemu-system-x86); nothing was run",
            f.id
        ));
    }
    let p = std::path::Path::new(image);
    match wbspec_harness::vm::qemu::is_bzimage(p) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!(
            "{}: --kernel {image}: not an x86 bzImage kernel",
            f.id
        )),
        Err(e) => Err(format!("{}: --kernel {e}", f.id)),
    }
}

/// `parse`, and the scenario it names exists: a host scenario
/// (`conform` runs it) for `scenario:`, any scenario or the VM-only
/// x_pdio_bugon for `vm:`. A misspelt name is caught when findings.toml
/// is read, not when `reproduce` mounts.
pub fn validate(r: &str) -> Result<(), String> {
    let (kind, name) = parse(r)?;
    let host = || wbspec_harness::scenarios::all();
    let known = match kind {
        "scenario" => host().iter().any(|s| s.name == name),
        "vm" => host()
            .iter()
            .chain(wbspec_harness::scenarios::selftests().iter())
            .any(|s| s.name == name),
        _ => true,
    };
    if known {
        Ok(())
    } else if kind == "scenario"
        && wbspec_harness::scenarios::selftests()
            .iter()
            .any(|s| s.name == name)
    {
        Err(format!(
            "reproducer '{r}': {name} runs only in a guest (vm:{name})"
        ))
    } else {
        Err(format!(
            "reproducer '{r}': no scenario {name} (`wbspec conform --help` lists them)"
        ))
    }
}

/// Runs the reproducer of `f`; prints as it goes. `kernel`: the guest
/// image for a `vm:` reproducer.
pub fn run(f: &Finding, entries: &[Entry], kernel: Option<&str>) -> Result<u8, String> {
    let r = f.reproducer.as_deref().ok_or_else(|| {
        format!(
            "{}: no real-kernel reproducer (findings.toml has no `reproducer` for it)",
            f.id
        )
    })?;
    let (kind, name) = parse(r)?;
    // everything the command line names is checked before anything runs
    // or prints: a --kernel that is not used would run the reproducer on
    // the host instead of the guest the user asked for
    match (kind, kernel) {
        ("vm", Some(image)) => check_guest(f, image)?,
        ("vm", None) => {}
        (_, Some(image)) => {
            return Err(format!(
                "{}: --kernel {image}: its reproducer {r} runs on this host, not in a guest (--kernel is for a vm: reproducer)",
                f.id
            ))
        }
        (_, None) => {}
    }
    let model = model_lines(f, entries);
    let code = match kind {
        "scenario" => {
            println!("Kernel: scenario {name} on this host (wbspec conform {name})");
            let c = wbspec_harness::conform::conform_main(&[name.to_string()]);
            // what the scenario asserts the kernel does
            if let Some(sc) = wbspec_harness::scenarios::all()
                .into_iter()
                .find(|s| s.name == name)
            {
                println!("Kernel asserted: {}", sc.about);
            }
            for l in &model {
                println!("{l}");
            }
            match c {
                0 => {
                    println!("Reproduced: the scenario's assertions (the model's prediction) held, and its trace conforms");
                    0
                }
                2 => return Err(format!("{}: the scenario {name} could not run (see above)", f.id)),
                77 => return Err(format!("{}: the scenario {name} was skipped here (see above: root and /dev/fuse are needed)", f.id)),
                _ => {
                    println!("Not reproduced: the kernel did not do what the model predicts, or the trace does not conform (see above)");
                    1
                }
            }
        }
        "vm" => {
            let image = kernel.ok_or_else(|| {
                format!(
                    "{}: its reproducer {name} could oops the host, so it runs only in a guest: give --kernel IMAGE (a kernel whose state has the window)",
                    f.id
                )
            })?;
            println!("Kernel: scenario {name} in a guest booted from {image}");
            let c = wbspec_harness::vm::vm_main(&[
                "--kernel".into(),
                image.into(),
                "--".into(),
                "run".into(),
                name.into(),
            ]);
            for l in &model {
                println!("{l}");
            }
            match c {
                0 => {
                    println!("Not reproduced: the guest finished and its kernel reported no oops");
                    1
                }
                2 | 77 => return Err(format!("{}: the guest could not run (see above)", f.id)),
                _ => {
                    println!("Not claimed: the guest reported a kernel failure or hung (see the console excerpt above; a BUG at the finding's line is the reproduction, which this command does not tell apart from a hang)");
                    1
                }
            }
        }
        _ => {
            if let Some(why) = wbspec_harness::nowait_rk::unavailable() {
                return Err(format!("{}: nowait-append cannot run here: {why}", f.id));
            }
            let cfg = wbspec_harness::nowait_rk::Config::default();
            let mut torn_seen = None;
            for i in 1..=NOWAIT_ATTEMPTS {
                let rep = wbspec_harness::nowait_rk::run(&cfg)
                    .map_err(|e| format!("{}: nowait-append: {e}", f.id))?;
                println!(
                    "Kernel {} run {i}: {} of {} io_uring records torn ({} with a write(2) record inside); exactly once: {}",
                    rep.kernel,
                    rep.torn,
                    rep.records,
                    rep.torn_by_plain,
                    if rep.exactly_once() { "yes" } else { "NO" }
                );
                if rep.torn > 0 {
                    torn_seen = Some(rep.torn);
                    break;
                }
            }
            for l in &model {
                println!("{l}");
            }
            match torn_seen {
                Some(_) => {
                    println!("Reproduced: an io_uring O_APPEND record with another writer's data inside (io2)");
                    0
                }
                None => {
                    println!("Not reproduced in {NOWAIT_ATTEMPTS} runs: no inline attempt was cut short by the dirty limit with another appender ready (an environmental precondition)");
                    1
                }
            }
        }
    };
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;
    use std::path::Path;

    /// The prediction lines: a check's expected violations, or that
    /// every property holds (a kernel fact's check), never an empty list.
    #[test]
    fn the_prediction_names_what_each_check_expects() {
        let cat =
            catalogue::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogue")).unwrap();
        let text = r#"
[[finding]]
id = "F-x"
title = "a title"
class = "kernel-fact"
reference = ""
checks = ["t2-otrunc-atomic-race", "t2-stat-dio-extend"]
kernels = ["T2"]
reproduced = ""
checked = "2026-12-01"
reproducer = "scenario:o_otrunc_atomic_race"
"#;
        let f = &crate::findings::parse(text, "f.toml", &cat).unwrap()[0];
        let l = model_lines(f, &cat.entries);
        assert_eq!(l[1], "  t2-otrunc-atomic-race (T2): a3 violated");
        assert_eq!(
            l[2],
            "  t2-stat-dio-extend (T2): every always-property holds"
        );
    }
}
