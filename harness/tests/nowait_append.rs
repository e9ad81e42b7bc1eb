//! The nowait model's io1 on the real kernel: io_uring O_APPEND records on
//! xfs over a loop device whose bdi has a small strict dirty limit, with a
//! write(2) appender alongside. Every record must be in the file exactly
//! once and the size must be the sum of the results (the model: holds
//! from 6.15 on, 1a1a3b574b97). Torn records (io2, which the model finds
//! violated) are reported, not asserted: whether the write(2) appender
//! wins the IOLOCK between the inline attempt and the io-wq retry is a
//! matter of timing. Skips where the machine cannot run it, saying so,
//! unless WBSPEC_REQUIRE_KERNEL=1 (set by .ci/run) makes that a failure.

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
    let cfg = Config::default();
    let r = run(&cfg).expect("scenario runs and cleans up");
    eprintln!(
        "{}: {} records x {} blocks, torn {} (by write(2): {}), {} ms",
        r.kernel, r.records, r.blocks, r.torn, r.torn_by_plain, r.elapsed_ms
    );
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
