//! The recording server's notifications (`notify_inval` marks,
//! harness/src/server/notify.rs): their mapping onto the model's
//! `notify-inval` task and its refusals (docs/conformance.md §2,
//! "Syscalls → tasks").

use super::test_trace::{mapping, not_modelled, tr, OPEN};
use super::*;
use serde_json::json;
use wbspec_models::fuse::config::InvalForm;
use wbspec_models::fuse::TaskSpec;

/// A 2-page file written (AB), then a notification with `args`.
fn notify(args: &str) -> Vec<Event> {
    let call = format!("call T9 notify_inval path=f ino=2 {args}");
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend(["call T0 pwrite fd=6 off=0 AB", "ret T0 pwrite 8192"]);
    l.extend([call.as_str(), "ret T9 notify_inval 0 errno=0"]);
    tr(json!({}), &l)
}

fn the_notification(args: &str) -> TaskSpec {
    let m = mapping(&notify(args));
    *m.cfg
        .tasks
        .iter()
        .find(|t| matches!(t, TaskSpec::NotifyInval { .. }))
        .expect("a notify-inval task")
}

#[test]
fn the_three_forms_of_notify_inval_inode_are_mapped() {
    // the changed page's own range
    assert_eq!(
        the_notification("off=4096 len=4096 first=1 N"),
        TaskSpec::NotifyInval {
            first: 1,
            n: 1,
            form: InvalForm::Range
        }
    );
    // offset 0, len 0 (or below): the whole page cache
    for len in ["0", "-1"] {
        assert_eq!(
            the_notification(&format!("off=0 len={len} first=1 N")),
            TaskSpec::NotifyInval {
                first: 1,
                n: 1,
                form: InvalForm::Whole
            }
        );
    }
    // offset < 0: attributes only (pages 0 and 1, written and changed
    // together, are one model page)
    assert_eq!(
        the_notification("off=-1 len=0 first=0 NM"),
        TaskSpec::NotifyInval {
            first: 0,
            n: 1,
            form: InvalForm::Attr
        }
    );
}

#[test]
fn other_ranges_and_notifications_without_a_change_are_not_modelled() {
    for (args, why) in [
        (
            "off=0 len=4096 first=1 N",
            "of pages 0..1, the server changed 1..2",
        ),
        (
            "off=0 len=8192 first=1 N",
            "of pages 0..2, the server changed 1..2",
        ),
        ("off=4096 len=0 first=1 N", "from offset 4096 to the end"),
        ("off=0 len=0", "without a change of the server's file"),
    ] {
        let got = not_modelled(&notify(args));
        assert!(got.contains(why), "{args}: {got}");
    }
}

/// The recorder's `server changed ACTOR notify_inval` note is the
/// observation that the model's NotifyServerWrite has run (Obs::Changed);
/// without it the search may put the change after a later reply
/// (tests/recorded.rs: n_inval_wb_read_server_change).
#[test]
fn the_server_changed_note_is_observed() {
    let mut l: Vec<&str> = OPEN.to_vec();
    l.extend(["call T0 pwrite fd=6 off=0 AB", "ret T0 pwrite 8192"]);
    l.extend([
        "call T9 notify_inval path=f ino=2 off=4096 len=4096 first=1 N",
        "server changed T9 notify_inval",
        "ret T9 notify_inval 0 errno=0",
    ]);
    let m = mapping(&tr(json!({}), &l));
    let t = m
        .cfg
        .tasks
        .iter()
        .position(|t| matches!(t, TaskSpec::NotifyInval { .. }))
        .expect("a notify-inval task");
    let kinds: Vec<String> = m
        .obs
        .iter()
        .filter(|o| !matches!(o.obs, Obs::Read(_) | Obs::Reply(..)))
        .map(|o| format!("{:?}", o.obs))
        .collect();
    let at = |want: &str| kinds.iter().position(|k| k == want);
    let (c, ch, r) = (
        at(&format!("Call({t})")),
        at(&format!("Changed({t})")),
        at(&format!("Ret({t})")),
    );
    assert!(c < ch && ch < r && c.is_some(), "{kinds:?}");
}
