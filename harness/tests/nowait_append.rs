//! The nowait model's io1 on the real kernel: io_uring O_APPEND records on
//! xfs over a loop device whose bdi has a small strict dirty limit, with a
//! write(2) appender alongside. Every record must be in the file exactly
//! once and the size must be the sum of the results (the model: holds
//! from 6.15 on, 1a1a3b574b97). Torn records (io2, which the model finds
//! violated) are reported, not asserted: whether the write(2) appender
//! wins the IOLOCK between the inline attempt and the io-wq retry is a
//! matter of timing. Skips where the machine cannot run it, saying so,
//! unless WBSPEC_REQUIRE_KERNEL=1 (set by .ci/run) makes that a failure.
//!
//! Exactly-once holds trivially if no inline attempt was ever cut short,
//! so the test also shows the precondition: the tracepoint
//! writeback:balance_dirty_pages (traced, in mm/page-writeback.c, right
//! before `if (flags & BDP_ASYNC) return -EAGAIN`) fired with a positive
//! pause in this thread, the io_uring submitter, whose inline issue is
//! the only IOCB_NOWAIT writer here (the write(2) appender and io-wq
//! workers are other threads). It is recorded in a private tracefs
//! instance, filtered to this thread, removed afterwards.

use wbspec_harness::nowait_rk::{run, unavailable, Config};
use wbspec_harness::require::{may_run, rerun_test, KERNEL};

/// As nobody the test skips, saying so; with WBSPEC_REQUIRE_KERNEL=1 it
/// fails.
#[test]
fn missing_kernel_skips_or_fails_as_required() {
    let name = "io_uring_appends_land_exactly_once_on_xfs";
    let (ok, out) = rerun_test(name, KERNEL, false, &[], true);
    assert!(
        ok && out.contains("skipping the io_uring append test: needs root"),
        "{out}"
    );
    let (ok, out) = rerun_test(name, KERNEL, true, &[], true);
    assert!(
        !ok && out.contains("the io_uring append test cannot run: needs root"),
        "{out}"
    );
}

#[test]
fn io_uring_appends_land_exactly_once_on_xfs() {
    if !may_run(KERNEL, "the io_uring append test", unavailable()) {
        return;
    }
    // The throttle is the precondition, not a promise: under other
    // memory load the inline attempts may stop earlier (or not reach the
    // pause). Up to ATTEMPTS runs, each checked for exactly-once, until
    // one shows the throttle. (3 attempts were not enough once in CI on
    // 2026-12-02: 0 throttles in 3 runs after the suite's other
    // real-kernel tests; alone it throttles in the first run. Each
    // attempt is about 1-4 s and is checked for exactly-once.)
    const ATTEMPTS: usize = 8;
    let cfg = Config::default();
    let mut throttled = 0;
    let mut r = None;
    for attempt in 1..=ATTEMPTS {
        let tracer = match Throttles::start() {
            Ok(t) => t,
            Err(why) => {
                may_run(KERNEL, "the io_uring append test", Some(why));
                return;
            }
        };
        let run_r = run(&cfg);
        let t = tracer.finish();
        let one = run_r.expect("scenario runs and cleans up");
        throttled = t.expect("read the balance_dirty_pages trace");
        eprintln!(
            "attempt {attempt}: {}: {} records x {} blocks, torn {} (by write(2): {}), {} ms, {} inline throttles",
            one.kernel, one.records, one.blocks, one.torn, one.torn_by_plain, one.elapsed_ms, throttled
        );
        assert_exactly_once(&cfg, &one);
        r = Some(one);
        if throttled > 0 {
            break;
        }
    }
    assert!(
        throttled > 0,
        "in {ATTEMPTS} runs no inline (IOCB_NOWAIT) write reached balance_dirty_pages' pause: exactly-once was not put to the test ({:?})",
        r
    );
}

fn assert_exactly_once(cfg: &Config, r: &wbspec_harness::nowait_rk::Report) {
    assert!(
        r.bad_cqes.is_empty(),
        "short or failed CQEs: {:?}",
        r.bad_cqes
    );
    assert_eq!(r.cqe_bytes, (cfg.records * cfg.blocks) as u64 * 4096);
    assert_eq!((r.duplicates, r.missing, r.garbage), (0, 0, 0), "{r:?}");
    assert_eq!(r.file_bytes, r.cqe_bytes + r.plain_bytes, "{r:?}");
    assert!(r.exactly_once());
}

/// A private tracefs mount and instance recording
/// writeback:balance_dirty_pages for this thread only; unmounted and
/// removed by `finish` (or on drop).
struct Throttles {
    dir: Option<tempfile::TempDir>,
    inst: std::path::PathBuf,
    mounted: bool,
}

impl Throttles {
    fn start() -> Result<Throttles, String> {
        let dir = tempfile::Builder::new()
            .prefix("wbspec-tracefs-")
            .tempdir()
            .map_err(|e| format!("tracefs mount point: {e}"))?;
        let c = std::ffi::CString::new(dir.path().as_os_str().as_encoded_bytes()).unwrap();
        let r = unsafe {
            libc::mount(
                c"nodev".as_ptr(),
                c.as_ptr(),
                c"tracefs".as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        let t = Throttles {
            inst: dir
                .path()
                .join(format!("instances/wbspec-{}", std::process::id())),
            dir: Some(dir),
            mounted: r == 0,
        };
        if !t.mounted {
            return Err(format!(
                "cannot mount tracefs: {}",
                std::io::Error::last_os_error()
            ));
        }
        std::fs::create_dir(&t.inst).map_err(|e| format!("tracefs instance: {e}"))?;
        let ev = t.inst.join("events/writeback/balance_dirty_pages");
        let tid = unsafe { libc::gettid() };
        std::fs::write(ev.join("filter"), format!("common_pid == {tid}"))
            .and_then(|_| std::fs::write(ev.join("enable"), "1"))
            .map_err(|e| format!("{}: {e}", ev.display()))?;
        // on an error above, `t` is dropped: unmounted and removed
        Ok(t)
    }

    /// How many events showed a positive pause (the throttle), then
    /// cleans up.
    fn finish(self) -> Result<usize, String> {
        let text = std::fs::read_to_string(self.inst.join("trace"))
            .map_err(|e| format!("{}: {e}", self.inst.display()))?;
        Ok(text.lines().filter(|l| positive_pause(l)).count())
    }
}

impl Drop for Throttles {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let ev = self
                .inst
                .join("events/writeback/balance_dirty_pages/enable");
            let _ = std::fs::write(ev, "0");
            let _ = std::fs::remove_dir(&self.inst);
            if self.mounted {
                let c = std::ffi::CString::new(dir.path().as_os_str().as_encoded_bytes()).unwrap();
                unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
            }
        }
    }
}

/// A balance_dirty_pages trace line with `pause=N`, N > 0: the task was
/// throttled (the `pause < min_pause` exit traces pause <= 0).
fn positive_pause(line: &str) -> bool {
    line.contains("balance_dirty_pages:")
        && line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("pause="))
            .and_then(|n| n.parse::<i64>().ok())
            .is_some_and(|n| n > 0)
}

#[test]
fn a_trace_line_with_a_positive_pause_is_a_throttle() {
    let l = |p: &str| {
        format!(
            " io_uring-1234 [001] ..... 5.0: balance_dirty_pages: bdi 7:0: limit=10 \
             setpoint=5 dirty=9 bdi_setpoint=1 bdi_dirty=16 dirty_ratelimit=25 \
             task_ratelimit=0 dirtied=16 dirtied_pause=8 paused=0 pause={p} \
             period=0 think=0 cgroup_ino=1"
        )
    };
    assert!(positive_pause(&l("20")));
    assert!(!positive_pause(&l("0")) && !positive_pause(&l("-3")));
    assert!(!positive_pause("# tracer: nop"));
}
