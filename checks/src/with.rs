//! `check --with SWITCH`: a family run. Each selected check runs again with
//! one more switch on (typically a fix wbspec proposes for a finding,
//! docs/findings.md) and is judged against the check's own expected
//! verdicts:
//! - a property the check expects to hold and that is now violated is a
//!   NEW VIOLATION (the run exits 1);
//! - a property the check expects violated that now holds is reported as
//!   fixed;
//! - a witness the check pins as reached and that is no longer reached is
//!   reported (the switch closes that window): information, since a fix
//!   may close a window on purpose; the finding's own `-fix` checks in the
//!   catalogue pin the windows that must stay reached.
//!
//! Pins (state counts, witness counts) are not compared: the
//! configuration is not the catalogue's. A check whose model has no such
//! switch, whose kernel state already has it on (its run would be the
//! catalogue's own), or whose model refuses the configuration with it
//! (e.g. a fix that needs 6.16's writeback on state L), is listed as not
//! applicable, with the reason. When no selected check applies, nothing
//! would be judged: that is a usage error (exit 2), never a verdict.

use crate::catalogue::{Entry, Verdict, Witnesses};
use crate::check;
use crate::outcome::{self, CheckResult, Settings};

/// How one check fared with the switch.
pub enum Judged {
    /// The model has no such switch, or refuses the configuration with it.
    NotApplicable(String),
    Ran(Box<CheckResult>),
}

/// The check `e` with `flags` added to its `variant` list: an entry with
/// the same expectations and no pins. `Err` is the reason it does not
/// apply.
pub fn derive(e: &Entry, flags: &[String]) -> Result<Entry, String> {
    let defs = e.check.switch_defs();
    let keys = e.check.key_switches();
    let mut own = e.settings.clone();
    let mut variant: Vec<toml::Value> = match own.get("variant") {
        None => vec![],
        Some(toml::Value::Array(a)) => a.clone(),
        Some(_) => return Err("its `variant` is not a list".into()),
    };
    let (mut flagged, mut keyed) = (vec![], vec![]);
    for f in flags {
        if keys.iter().any(|(k, _)| k == f) {
            // a connection option set as a catalogue key
            match own.get(f.as_str()) {
                None => {
                    own.insert(f.clone(), toml::Value::Boolean(true));
                }
                Some(toml::Value::Boolean(true)) => {
                    return Err(format!("it already sets {f} = true"))
                }
                Some(_) => return Err(format!("it sets {f} itself")),
            }
            keyed.push(f);
            continue;
        }
        if !defs.iter().any(|d| d.name == f) {
            return Err(format!("model {} has no switch '{f}'", e.model));
        }
        let has = |s: &str| variant.iter().any(|v| v.as_str() == Some(s));
        if has(f) {
            return Err(format!("it already turns '{f}' on"));
        }
        if has(&format!("!{f}")) {
            return Err(format!("it turns '{f}' off"));
        }
        variant.push(toml::Value::String(f.clone()));
        flagged.push(f);
    }
    if !flagged.is_empty() {
        own.insert("variant".into(), toml::Value::Array(variant));
    }
    let check = check::from_table(&e.model, &own)?;
    // a switch the kernel state already has on changes nothing: its run
    // would be the catalogue's, not a family member
    for f in flagged {
        if !check.switches_changed().iter().any(|s| s == f) {
            return Err(format!(
                "its kernel state {} already has '{f}' on",
                check.kernel()
            ));
        }
    }
    // nor does a key the configuration never consults
    for f in keyed {
        if let Some(why) = check.key_switch_inert(f) {
            return Err(why);
        }
    }
    // a derived -bg1 twin runs its parent's configuration, congested
    let check = if e.parent.is_some() {
        check
            .congested()
            .map(|(c, _)| c)
            .ok_or("its congested twin does not exist with the switch")?
    } else {
        check
    };
    let witnesses = match &e.witnesses {
        Witnesses::Pinned(m) => Witnesses::Listed(
            m.iter()
                .filter(|(_, &n)| n > 0)
                .map(|(k, _)| k.clone())
                .collect(),
        ),
        w => w.clone(),
    };
    Ok(Entry {
        name: format!("{}+{}", e.name, flags.join("+")),
        states: None,
        violations: Default::default(),
        witnesses,
        settings: own,
        check,
        ..e.clone()
    })
}

/// Every selected check with `flags`, derived before anything runs: the
/// derived entry, or why it does not apply. An error when the command
/// line is wrong (a switch given twice, settings a derived check cannot
/// run under) or when no check applies (nothing would be judged).
pub fn plan(
    selected: &[&Entry],
    flags: &[String],
    set: &Settings,
) -> Result<Vec<(String, Result<Entry, String>)>, String> {
    let with = flags.join("+");
    for (i, f) in flags.iter().enumerate() {
        if flags[..i].contains(f) {
            return Err(format!("--with {f} given twice"));
        }
    }
    let mut v = Vec::new();
    for e in selected {
        let d = derive(e, flags);
        if let Ok(d) = &d {
            outcome::validate(d, set)?;
        }
        v.push((e.name.clone(), d));
    }
    if !v.iter().any(|(_, d)| d.is_ok()) {
        let (name, why) = v
            .iter()
            .find_map(|(n, d)| d.as_ref().err().map(|w| (n, w)))
            .ok_or("--with needs a check")?;
        let more = match v.len() {
            1 => String::new(),
            n => format!("; and {} more", n - 1),
        };
        return Err(format!(
            "--with {with}: no selected check applies ({name}: {why}{more})"
        ));
    }
    Ok(v)
}

/// Runs a derived check (`plan`), or says why it does not apply.
pub fn run(d: &Result<Entry, String>, set: &Settings) -> Result<Judged, String> {
    match d {
        Err(why) => Ok(Judged::NotApplicable(why.clone())),
        Ok(d) => Ok(Judged::Ran(Box::new(outcome::run(d, set, true)?))),
    }
}

/// The witness of a workload's end: every task returned, nothing dirty or
/// in flight. What a model judges at quiescence (the fuse model's a3, the
/// nowait model's io1) holds vacuously in a run that never gets there.
pub const END_WITNESS: &str = "w-quiescent";

/// The judgement of one run: new violations, fixed properties, witnesses
/// no longer reached.
pub struct Verdicts {
    pub new: Vec<&'static str>,
    pub fixed: Vec<&'static str>,
    pub closed: Vec<&'static str>,
    pub complete: bool,
    /// The catalogue's run reaches `END_WITNESS` and this one does not:
    /// the switch keeps the workload from ending (tasks that never return
    /// without a deadlock, e.g. a cycle, or pages left dirty), which `e`
    /// does not catch and which makes the end-state properties vacuous.
    pub never_quiescent: bool,
}

impl Verdicts {
    pub fn of(r: &CheckResult) -> Verdicts {
        let mut v = Verdicts {
            new: vec![],
            fixed: vec![],
            closed: vec![],
            complete: r.complete,
            never_quiescent: false,
        };
        for p in &r.props {
            match (p.expected, p.observed) {
                (Verdict::Holds, Verdict::Violated) => v.new.push(p.name),
                (Verdict::Violated, Verdict::Holds) => v.fixed.push(p.name),
                _ => {}
            }
        }
        for w in &r.witnesses {
            if w.listed && w.count == 0 && r.complete {
                if w.name == END_WITNESS {
                    v.never_quiescent = true;
                } else {
                    v.closed.push(w.name);
                }
            }
        }
        v
    }
    /// No new violation, a complete run (an incomplete one proves
    /// nothing) that still ends.
    pub fn ok(&self) -> bool {
        self.new.is_empty() && self.complete && !self.never_quiescent
    }
}

/// One verdict line for `check --with`.
pub fn line(name: &str, flags: &[String], j: &Judged) -> String {
    let with = flags.join("+");
    match j {
        Judged::NotApplicable(why) => format!("With {with} {name} not-applicable: {why}"),
        Judged::Ran(r) => {
            let v = Verdicts::of(r);
            let mut parts = vec![];
            if !v.complete {
                parts.push(format!(
                    "INCOMPLETE ({}): not a proof",
                    r.stopped.map(|s| s.describe()).unwrap_or_default()
                ));
            }
            if !v.new.is_empty() {
                parts.push(format!("NEW VIOLATION {}", v.new.join(" ")));
            }
            if v.never_quiescent {
                parts.push(format!(
                    "NEVER QUIESCENT ({END_WITNESS} no longer reached: what is judged at the end holds vacuously)"
                ));
            }
            if !v.fixed.is_empty() {
                parts.push(format!("fixed {}", v.fixed.join(" ")));
            }
            if !v.closed.is_empty() {
                parts.push(format!("window closed {}", v.closed.join(" ")));
            }
            if parts.is_empty() {
                parts.push("as expected".into());
            }
            format!(
                "With {with} {name} {} ({} states)",
                parts.join("; "),
                r.unique_states
            )
        }
    }
}

/// The summary line and whether the family run is clean.
pub fn summary(flags: &[String], judged: &[(String, Judged)]) -> (String, bool) {
    let (mut ran, mut na, mut new, mut fixed, mut closed, mut incomplete) = (0, 0, 0, 0, 0, 0);
    let mut unended = 0;
    for (_, j) in judged {
        match j {
            Judged::NotApplicable(_) => na += 1,
            Judged::Ran(r) => {
                ran += 1;
                let v = Verdicts::of(r);
                new += (!v.new.is_empty()) as usize;
                fixed += (!v.fixed.is_empty()) as usize;
                closed += (!v.closed.is_empty()) as usize;
                incomplete += (!v.complete) as usize;
                unended += v.never_quiescent as usize;
            }
        }
    }
    let ok = new == 0 && incomplete == 0 && unended == 0 && ran > 0;
    (
        format!(
            "With {}: {ran} checks run, {na} not applicable; {new} with a new violation, {incomplete} incomplete, {unended} never quiescent; {fixed} fixed; {closed} with a window closed{}",
            flags.join("+"),
            if ok { "" } else { " — NOT CLEAN" }
        ),
        ok,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;
    use std::path::Path;

    /// A switch that keeps a check's workload from ending (the catalogue's
    /// run reaches w-quiescent, the family run does not) is not clean,
    /// even with every property holding: a3 is judged at the end only.
    #[test]
    fn a_run_that_never_ends_is_not_clean() {
        let cat =
            catalogue::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogue")).unwrap();
        let e = cat
            .entries
            .iter()
            .find(|e| e.name == "t-trunc-vs-wb-2p")
            .unwrap();
        let flags = vec!["fix_otrunc_keep_size".to_string()];
        let d = derive(e, &flags).unwrap();
        let mut r = outcome::run(&d, &Settings::default(), false).unwrap();
        let j = |r: &CheckResult| {
            let name = "t-trunc-vs-wb-2p".to_string();
            let l = line(&name, &flags, &Judged::Ran(Box::new(r.clone())));
            let (sum, ok) = summary(&flags, &[(name, Judged::Ran(Box::new(r.clone())))]);
            (l, sum, ok)
        };
        let (l, _, ok) = j(&r);
        assert!(ok && l.contains(" as expected "), "{l}");
        // the same run, had the switch kept every task from finishing
        let w = r
            .witnesses
            .iter_mut()
            .find(|w| w.name == END_WITNESS)
            .unwrap();
        assert!(w.listed && w.count > 0);
        w.count = 0;
        assert!(!Verdicts::of(&r).ok());
        let (l, sum, ok) = j(&r);
        assert!(!ok, "{sum}");
        assert!(l.contains("NEVER QUIESCENT"), "{l}");
        assert!(!l.contains("as expected"), "{l}");
        assert!(
            sum.contains("1 never quiescent") && sum.ends_with("NOT CLEAN"),
            "{sum}"
        );
    }
}
