//! Server notifications (the model's `notify-inval` task,
//! models/src/fuse/notify.rs): the control command `notify_inval ACTOR
//! NAME OFF LEN [FIRST TAGS]` stands for another client's write on the
//! server followed by FUSE_NOTIFY_INVAL_INODE, written to /dev/fuse by a
//! thread of its own (never the dispatch thread: the write(2) may block
//! in `fuse_reverse_inval_inode` → `invalidate_inode_pages2_range` until
//! a request the dispatch thread or a held reply must end, F-notify-blocks).
//!
//! The thread logs, in order: the `call ACTOR notify_inval path=NAME ino=I
//! off=O len=L first=F TAGS` mark (before anything else the notification does,
//! as a syscall's call mark), the server's change of its file (the
//! model's `ServerWrite`) and then the note `server changed ACTOR
//! notify_inval` (conform: the change happened by then), the write(2) of `struct
//! fuse_notify_inval_inode_out { ino, off, len }` (fuser's
//! `Notifier::inval_inode`), and the `ret ACTOR notify_inval R errno=E
//! dur_us=D` mark once it returned (R = 0, or -1 with the errno). The
//! control command answers `ok TID` (the thread's kernel tid, whose
//! /proc state a scenario polls) once the call mark is logged; every
//! held reply is still released by `release` or the watchdog, so the
//! notification always returns.
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use fuser::INodeNo;

use super::shared::{lock, Core};
use crate::trace::Event;

impl Core {
    /// Start a notification (see the module doc); the reply line.
    pub(super) fn notify_inval(
        self: &Arc<Self>,
        actor: String,
        name: String,
        off: i64,
        len: i64,
        first: u64,
        tags: String,
    ) -> String {
        let Some(notifier) = self.notifier.get().cloned() else {
            return "err no session to notify on".into();
        };
        let ino = {
            let fs = lock(&self.fs);
            match fs.files.iter().find(|(_, f)| f.name == name) {
                Some((ino, _)) => *ino,
                None => return format!("err no file {name}"),
            }
        };
        let core = self.clone();
        let (tx, rx) = mpsc::channel();
        let spawned = thread::Builder::new().name("notify".into()).spawn(move || {
            let w = if tags.is_empty() {
                String::new()
            } else {
                format!(" first={first} {tags}")
            };
            core.log(Event::mark(&format!(
                "call {actor} notify_inval path={name} ino={ino} off={off} len={len}{w}"
            )));
            let _ = tx.send(unsafe { libc::gettid() });
            let t0 = Instant::now();
            core.server_write(ino, first, &tags);
            if !tags.is_empty() {
                // the change is applied: conform's Obs::Changed (the
                // model's NotifyServerWrite happened by now)
                core.log(Event::mark(&format!("server changed {actor} notify_inval")));
            }
            let r = notifier.inval_inode(INodeNo(ino), off, len);
            let d = t0.elapsed().as_micros() as u64;
            let (ret, errno) = match &r {
                Ok(()) => (0, 0),
                Err(e) => (-1, e.raw_os_error().unwrap_or(libc::EIO)),
            };
            core.log(Event::mark(&format!(
                "ret {actor} notify_inval {ret} errno={errno} dur_us={d}"
            )));
            lock(&core.ctl).notified += 1;
            core.cv.notify_all();
        });
        if let Err(e) = spawned {
            return format!("err spawn: {e}");
        }
        match rx.recv_timeout(Duration::from_secs(5)) {
            Ok(tid) => format!("ok {tid}"),
            Err(_) => "err the notify thread did not start".into(),
        }
    }

    /// Another client's write: page `first + i` of the file gets letter
    /// `tags[i]` in every byte (`.`: zeros), extending the file if needed.
    fn server_write(&self, ino: u64, first: u64, tags: &str) {
        if tags.is_empty() {
            return;
        }
        let mut fs = lock(&self.fs);
        let Some(f) = fs.files.get_mut(&ino) else {
            return;
        };
        let end = ((first as usize) + tags.len()) * 4096;
        if f.data.len() < end {
            f.data.resize(end, 0);
        }
        for (i, c) in tags.bytes().enumerate() {
            let a = (first as usize + i) * 4096;
            f.data[a..a + 4096].fill(if c == b'.' { 0 } else { c });
        }
        f.mtime = SystemTime::now();
    }

    /// Wait until `n` notifications returned, at most `ms`.
    pub(super) fn wait_notified(&self, n: u64, ms: u64) -> String {
        let ok = self.wait_until(ms, |c| c.notified >= n);
        let got = lock(&self.ctl).notified;
        format!("{} {got}", if ok { "ok" } else { "timeout" })
    }
}
