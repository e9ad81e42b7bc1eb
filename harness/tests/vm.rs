//! `wbspec-harness vm` (docs/vm.md): Debian's 6.12 and 6.1 kernels boot
//! under TCG and a handful of scenarios conform to state L there; a bad
//! image, a missing QEMU, a guest that panics and a guest that hangs each
//! give one line and the right exit code, and leave no QEMU running.
//!
//! The boots need qemu-system-x86_64 and the kernels `.ci/fetch-kernels`
//! caches: they skip without them, and fail where WBSPEC_REQUIRE_VM is
//! set (.ci/run sets it; .ci/setup installs both).
use std::process::{Command, Output};
use std::sync::Mutex;

use wbspec_harness::require;

const BIN: &str = env!("CARGO_BIN_EXE_wbspec-harness");

/// One guest at a time: two vCPUs, and each boot is timed by its own
/// --timeout only.
static ONE: Mutex<()> = Mutex::new(());

fn missing(series: &str) -> Option<String> {
    if wbspec_harness::vm::initramfs::which("qemu-system-x86_64").is_none() {
        return Some("no qemu-system-x86_64 (Debian package qemu-system-x86)".into());
    }
    let d = wbspec_harness::vm::cache_dir().join(format!("debian-{series}/vmlinuz"));
    (!d.is_file()).then(|| {
        format!(
            "no cached Debian {series} kernel ({}; run .ci/fetch-kernels)",
            d.display()
        )
    })
}

fn vm(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("vm")
        .args(args)
        .output()
        .expect("run wbspec-harness vm")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// No QEMU process of the run whose work directory is wbspec-vm-<pid>-*.
fn no_qemu_left(pid: u32) {
    let tag = format!("wbspec-vm-{pid}-");
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd);
        assert!(
            !(cmd.contains("qemu-system") && cmd.contains(&tag)),
            "a QEMU of the run is still there: {cmd}"
        );
    }
    // and its work directory is gone
    for e in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().to_string();
        assert!(!n.starts_with(&tag), "{n} left behind");
    }
}

fn run_vm(args: &[&str]) -> (Output, u32) {
    let child = Command::new(BIN)
        .arg("vm")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn wbspec-harness vm");
    let pid = child.id();
    let o = child.wait_with_output().expect("wait");
    (o, pid)
}

/// b_rewrite and b_wait_after assert their L kernel checks there
/// (Scenario::expect_on); the others conform (their kernel checks are
/// T2's). r_ra_skip conforms on 6.1 only with the release's
/// ra_ondemand, on 6.12 only without it; r_ra_midread the same with
/// ra_prev_pos_each_copy (docs/findings.md M-ra-ondemand);
/// r_ra_cong_batch and r_ra_cong_shrink need ra_count_batch and
/// ra_skip_shrinks, on for both releases (M-ra-stale-asz).
const SCENARIOS: &[&str] = &[
    "a_fsync",
    "b_ftrunc",
    "b_extend",
    "h_crop",
    "e_odirect_eof",
    "b_rewrite",
    "b_wait_after",
    "r_ra_skip",
    "r_ra_midread",
    "r_ra_cong_batch",
    "r_ra_cong_shrink",
];

fn conforms_on(series: &str, label: &str) {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    if !require::may_run(require::VM, &format!("vm {series}"), missing(series)) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let keep = dir.path().join("out");
    let keep_s = keep.display().to_string();
    // (2 GiB: a CI run on 4 Dec 2026 saw the guest's conform killed,
    // exit 137, in r_ra_skip after 36 s at the default 1 GiB; a recording
    // with background writeback WRITEs can need a wider search)
    let mut args = vec![
        "--debian",
        series,
        "--tcg",
        "--mem",
        "2048",
        "--timeout",
        "600",
        "--keep",
        &keep_s,
        "--",
        "conform",
    ];
    args.extend_from_slice(SCENARIOS);
    let (o, pid) = run_vm(&args);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for s in SCENARIOS {
        // kernel=n/a: the scenarios' kernel checks are written for T2;
        // on L the trace's conformance is the check
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("Conform {s} ")))
            .unwrap_or_else(|| panic!("no Conform line for {s}:\n{out}"));
        // b_rewrite and b_wait_after assert their L kernel checks (temp
        // pages: write(2) waits in fuse_wait_on_page_writeback; the
        // WAIT_AFTER wait returns with the WRITE held); b_wait_after's
        // sync_file_range(WAIT) has no model task, as it declares
        let want = match *s {
            "b_rewrite" => format!("Conform {s} kernel=pass model=conforms"),
            "b_wait_after" => format!("Conform {s} kernel=pass model=not-modelled ("),
            _ => format!("Conform {s} kernel=n/a model=conforms"),
        };
        assert!(line.starts_with(&want), "{line}");
        if *s == "b_wait_after" {
            assert!(line.ends_with(" as-declared"), "{line}");
        }
        assert!(keep.join(format!("traces/{s}.jsonl")).is_file(), "{s}");
    }
    let last = out.lines().last().unwrap_or("");
    assert!(
        last.starts_with("vm: kernel ") && last.contains(label),
        "{last}"
    );
    assert!(last.contains("guest command exited 0"), "{last}");
    // the guest's trace names the guest's kernel, which maps to L
    let t = std::fs::read_to_string(keep.join("traces/a_fsync.jsonl")).unwrap();
    let hdr = wbspec_harness::trace::parse_trace(&t).unwrap()[0].clone();
    let rel = hdr.kernel.unwrap();
    assert_eq!(
        wbspec_harness::kernels::state_of(&rel).map(|r| r.state.as_str()),
        Some("L"),
        "{rel}"
    );
    assert!(keep.join("console.log").is_file());
    no_qemu_left(pid);
}

#[test]
fn debian_6_12_guest_conforms_to_l() {
    conforms_on("6.12", "L+dio (6.12.64+)");
}

#[test]
fn debian_6_1_guest_conforms_to_l() {
    // 6.1 builds FUSE as a module: the guest init loads fuse.ko
    conforms_on("6.1", "L (6.1.y)");
}

#[test]
fn a_guest_that_panics_or_hangs_is_one_line_and_exit_1() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    if !require::may_run(require::VM, "vm panic/hang", missing("6.12")) {
        return;
    }
    // no init: the kernel panics ("No working init found"); panic=-1
    // ends QEMU at once. One CPU: with two, a 6.12 guest under TCG once
    // oopsed at boot, before init (Oops: int3 at 2.6 s, CI on 3 Dec
    // 2026; cause not established: int3 is what the kernel's text
    // patching plants, which a second emulated CPU can run into), and
    // this test is about the panic of no init
    let (o, pid) = run_vm(&[
        "--debian",
        "6.12",
        "--tcg",
        "--cpus",
        "1",
        "--timeout",
        "300",
        "--append",
        "rdinit=/nonexistent init=/nonexistent",
        "--",
        "conform",
        "a_fsync",
    ]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with("vm: guest kernel failed: Kernel panic - not syncing"),
        "{out}"
    );
    no_qemu_left(pid);
    // the same with panic=0: the guest hangs, and is killed at --timeout
    let t0 = std::time::Instant::now();
    let (o, pid) = run_vm(&[
        "--debian",
        "6.12",
        "--tcg",
        "--cpus",
        "1",
        "--timeout",
        "20",
        "--append",
        "rdinit=/nonexistent init=/nonexistent panic=0",
        "--",
        "conform",
        "a_fsync",
    ]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with("vm: guest did not finish within 20 s and was killed"),
        "{out}"
    );
    assert!(t0.elapsed().as_secs() >= 20);
    no_qemu_left(pid);
}

#[test]
fn bad_input_is_one_line_and_exit_2_and_no_qemu_is_77() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("vmlinuz");
    std::fs::write(&junk, b"not a kernel").unwrap();
    let j = junk.display().to_string();
    let have_qemu = wbspec_harness::vm::initramfs::which("qemu-system-x86_64").is_some();
    for (args, code, want) in [
        (
            vec!["--debian", "5.10", "--", "conform"],
            2,
            "only 6.1 and 6.12",
        ),
        (vec!["--debian", "6.12"], 2, "no guest command"),
        (
            vec!["--debian", "6.12", "--", "conform", "--trace", "x"],
            2,
            "host's business",
        ),
        (
            vec!["--debian", "6.12", "--mem", "7", "--", "conform"],
            2,
            "--mem",
        ),
        (
            vec!["--kernel", &j, "--", "conform"],
            if have_qemu { 2 } else { 77 },
            if have_qemu {
                "not an x86 bzImage"
            } else {
                "not found"
            },
        ),
    ] {
        let o = vm(&args);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o));
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // no QEMU on PATH: nothing was run (77), one line
    let o = Command::new(BIN)
        .args(["vm", "--kernel", &j, "--", "conform"])
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("qemu-system-x86_64 not found") && err.lines().count() == 1,
        "{err}"
    );
    // --keep never replaces an existing directory
    let o = vm(&[
        "--debian",
        "6.12",
        "--keep",
        &dir.path().display().to_string(),
        "--",
        "conform",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(junk.is_file());
}

/// The scenario that may oops (F-pdio-lock's BUG_ON) is refused outside a
/// guest, one line, exit 77; on 6.12 (state L: fuse_direct_io checks the
/// fi->writepages tree, so the window does not exist) it runs without an
/// oops.
#[test]
fn the_bugon_scenario_is_refused_on_the_host_and_runs_on_6_12() {
    let o = Command::new(BIN)
        .args(["run", "x_pdio_bugon"])
        .env_remove("WBSPEC_VM_GUEST")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(77), "{}", text(&o));
    let line = out.lines().next().unwrap_or("");
    assert!(line.starts_with("Scenario x_pdio_bugon skipped: "), "{out}");
    if wbspec_harness::runner::cannot_run().is_none() {
        assert!(line.contains("runs only in a wbspec vm guest"), "{line}");
    }
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    if !require::may_run(require::VM, "vm x_pdio_bugon", missing("6.12")) {
        return;
    }
    let (o, pid) = run_vm(&[
        "--debian",
        "6.12",
        "--tcg",
        "--timeout",
        "600",
        "--",
        "run",
        "x_pdio_bugon",
    ]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(out.contains("Scenario x_pdio_bugon kernel=6.12"), "{out}");
    assert!(out.contains("outcome=pass"), "{out}");
    let last = out.lines().last().unwrap_or("");
    assert!(
        last.starts_with("vm: kernel 6.12") && last.ends_with("guest command exited 0"),
        "{last}"
    );
    no_qemu_left(pid);
}
