//! Aio writes (io_submit / io_getevents marks, harness/src/aio.rs):
//! their mapping onto the model's `aio` tasks and its refusals
//! (docs/conformance.md §2, "Syscalls → tasks").

use super::test_trace::{mapping, not_modelled, tr, OPEN};
use super::*;
use serde_json::json;
use wbspec_models::fuse::TaskSpec;

/// OPEN, then an O_DIRECT open (fd 7, no FOPEN_DIRECT_IO), then `rest`.
fn odirect(rest: &[&str]) -> Vec<Event> {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend([
        "call T0 open f 0x4002",
        "req 6 OPEN",
        "reply 6 OPEN",
        "ret T0 open 7",
    ]);
    l.extend(rest);
    tr(json!({"async_dio": true, "dio_on_odirect": false}), &l)
}

const SUBMIT: &[&str] = &[
    "call T0 io_submit fd=7 off=0 B pwrite",
    "ret T0 io_submit 1",
    "req 8 WRITE 0 4096 B",
    "reply 8 WRITE",
];

#[test]
fn an_io_submit_on_an_odirect_fd_is_an_aio_odirect_write() {
    let mut l = SUBMIT.to_vec();
    l.extend([
        "call T0 io_getevents min=1 max=1",
        "ret T0 io_getevents 1 res=4096",
    ]);
    let m = mapping(&odirect(&l));
    assert!(m.cfg.async_dio);
    assert!(m
        .cfg
        .tasks
        .iter()
        .any(|t| matches!(t, TaskSpec::OdirectWrite { aio: true, .. })));
    // io_submit's ret is Queued, the reaped completion the task's Ret
    let t = m
        .cfg
        .tasks
        .iter()
        .position(|t| matches!(t, TaskSpec::OdirectWrite { .. }))
        .unwrap();
    let q = m
        .obs
        .iter()
        .position(|o| matches!(o.obs, Obs::Queued(x) if x == t));
    let r = m
        .obs
        .iter()
        .position(|o| matches!(o.obs, Obs::Ret(x) if x == t));
    assert!(q.is_some() && r.is_some() && q < r, "{:?}", m.obs);
}

#[test]
fn aio_refusals_name_their_reason() {
    // a buffered aio write (cached fd 6)
    let ev = tr(
        json!({"async_dio": true}),
        &[
            OPEN,
            &[
                "call T0 io_submit fd=6 off=0 B pwrite",
                "ret T0 io_submit 1",
            ],
        ]
        .concat(),
    );
    assert!(not_modelled(&ev).contains("io_submit on a cached fd"));
    // never reaped
    assert!(not_modelled(&odirect(SUBMIT)).contains("never reaps"));
    // two outstanding when one completion is reaped
    let mut l = SUBMIT.to_vec();
    l.extend([
        "call T0 io_submit fd=7 off=4096 C pwrite",
        "ret T0 io_submit 1",
        "req 10 WRITE 4096 4096 C",
        "reply 10 WRITE",
        "call T0 io_getevents min=1 max=1",
        "ret T0 io_getevents 1 res=4096",
    ]);
    assert!(not_modelled(&odirect(&l)).contains("cannot be given to one aio task"));
    // a failed submission
    let ev = odirect(&[
        "call T0 io_submit fd=7 off=0 B pwrite",
        "ret T0 io_submit -1 errno=11",
    ]);
    assert!(not_modelled(&ev).contains("a failed submission"));
}

/// A completion cannot return more than its iocb asked for (the
/// io_submit's `len=`, or its pages): like a pread or pwrite returning
/// more, that is bad trace input, not a verdict (it was taken as the
/// aio task's return unchecked); as much as it asked for is mapped.
#[test]
fn a_completion_of_more_than_its_iocb_asked_for_is_bad_input() {
    for (call, res) in [
        ("call T0 io_submit fd=7 off=0 B pwrite", "res=8192"),
        ("call T0 io_submit fd=7 off=0 B len=4096 pwrite", "res=4097"),
    ] {
        let ret = format!("ret T0 io_getevents 1 {res}");
        let l = [
            call,
            "ret T0 io_submit 1",
            "req 8 WRITE 0 4096 B",
            "reply 8 WRITE",
            "call T0 io_getevents min=1 max=1",
            &ret,
        ];
        let e = translate(&odirect(&l), None).unwrap_err();
        assert!(
            e.contains("io_getevents reaps a completion of")
                && e.contains("more than the 4096 its io_submit's iocb asked for"),
            "{e}"
        );
    }
    let mut l = SUBMIT.to_vec();
    l.extend([
        "call T0 io_getevents min=1 max=1",
        "ret T0 io_getevents 1 res=4096",
    ]);
    mapping(&odirect(&l));
}
