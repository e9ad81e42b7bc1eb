//! Holding replies, and the control socket that drives it. A hold rule
//! parks the completion of a matching request; the parked reply is sent
//! by `release` (control socket), by the watchdog once it has been held
//! `hold_timeout_ms`, or at server exit, and never dropped. The control
//! commands (control.rs's line protocol) also arm one-shot stalls of the
//! dispatch thread and injected -EIO replies, wait for counts, and read
//! the server's file contents and in-flight requests.
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use super::record::errno_result;
use super::shared::{lock, Core, CtlState, Done, Parked, Rule};
use crate::control::{Command, ReleaseWhich};
use crate::trace::{page_tags, unit_tags, units_from, Event};

impl Core {
    /// The errno of an injected error reply to `op` (`fail OP`: -EIO, or
    /// -EINTR), if one is armed. Decided when the reply is produced (after
    /// any hold).
    fn take_fail(&self, op: &str) -> Option<i32> {
        let mut c = lock(&self.ctl);
        match c.fails.get_mut(op) {
            Some((n, errno)) if *n > 0 => {
                *n -= 1;
                Some(*errno)
            }
            _ => None,
        }
    }

    /// The error to reply to `op` if a failure is armed (the reply is
    /// logged); the caller replies it.
    pub(super) fn failed(&self, unique: u64, op: &str, t0: Instant) -> Option<fuser::Errno> {
        let errno = self.take_fail(op)?;
        let name = if errno == libc::EINTR { "EINTR" } else { "EIO" };
        self.log_reply(unique, op, errno_result(errno, name), t0);
        Some(fuser::Errno::from_i32(errno))
    }

    /// Block the dispatch thread if a stall for `op` is armed (one-shot).
    pub(super) fn maybe_stall(&self, op: &str) {
        let ms = {
            let mut c = lock(&self.ctl);
            match &c.stall {
                Some((o, ms)) if o == op => {
                    let ms = *ms;
                    c.stall = None;
                    ms
                }
                _ => return,
            }
        };
        let mut e = Event::new("stall");
        e.op = Some(op.into());
        e.ms = Some(ms);
        self.log(e);
        thread::sleep(Duration::from_millis(ms));
        let mut e = Event::new("stall_end");
        e.op = Some(op.into());
        self.log(e);
    }

    /// Run `done` now, or park it if a hold rule matches.
    pub(super) fn dispatch(&self, unique: u64, op: &str, cache: Option<bool>, done: Done) {
        let parked = {
            let mut c = lock(&self.ctl);
            let hit = !c.exiting
                && c.rules.iter_mut().any(|r| {
                    let m = r.op == op
                        && r.remaining != Some(0)
                        && match (r.cache, cache) {
                            (Some(want), Some(is)) => want == is,
                            _ => true,
                        };
                    if m {
                        if let Some(n) = r.remaining.as_mut() {
                            *n -= 1;
                        }
                    }
                    m
                });
            if hit {
                c.rules.retain(|r| r.remaining != Some(0));
                let mut e = Event::new("hold");
                e.unique = Some(unique);
                e.op = Some(op.into());
                self.log(e);
                c.parked.push(Parked {
                    unique,
                    op: op.to_string(),
                    since: Instant::now(),
                    done,
                });
                self.cv.notify_all();
                None
            } else {
                Some(done)
            }
        };
        if let Some(done) = parked {
            done();
        }
    }

    /// Wait until `quit` arrived, at most `ms`.
    pub(super) fn linger(&self, ms: u64) {
        self.wait_until(ms, |c| c.quit);
    }

    pub(super) fn release(&self, which: ReleaseWhich, why: &str) -> usize {
        let taken: Vec<Parked> = {
            let mut c = lock(&self.ctl);
            match which {
                ReleaseWhich::All => std::mem::take(&mut c.parked),
                ReleaseWhich::First => {
                    if c.parked.is_empty() {
                        vec![]
                    } else {
                        vec![c.parked.remove(0)]
                    }
                }
                ReleaseWhich::Unique(u) => {
                    let (t, keep) = std::mem::take(&mut c.parked)
                        .into_iter()
                        .partition(|p| p.unique == u);
                    c.parked = keep;
                    t
                }
            }
        };
        let n = taken.len();
        for p in taken {
            self.run_parked(p, why);
        }
        n
    }

    fn run_parked(&self, p: Parked, why: &str) {
        let mut e = Event::new("release");
        e.unique = Some(p.unique);
        e.op = Some(p.op.clone());
        e.why = Some(why.into());
        e.held_ms = Some(p.since.elapsed().as_millis() as u64);
        self.log(e);
        (p.done)();
    }

    pub(super) fn watchdog(self: Arc<Self>) {
        let bound = Duration::from_millis(self.cfg.hold_timeout_ms);
        loop {
            thread::sleep(Duration::from_millis(20));
            let expired: Vec<Parked> = {
                let mut c = lock(&self.ctl);
                if c.exiting {
                    return;
                }
                let (exp, keep) = std::mem::take(&mut c.parked)
                    .into_iter()
                    .partition(|p| p.since.elapsed() >= bound);
                c.parked = keep;
                exp
            };
            for p in expired {
                self.run_parked(p, "watchdog");
            }
        }
    }

    pub(super) fn wait_until(&self, ms: u64, pred: impl Fn(&CtlState) -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_millis(ms);
        let mut c = lock(&self.ctl);
        loop {
            if pred(&c) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            c = self
                .cv
                .wait_timeout(c, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Execute one control command and produce the reply line.
    pub fn control(&self, cmd: Command) -> String {
        match cmd {
            Command::Ping => "ok".into(),
            Command::Hold { op, n, cache } => {
                lock(&self.ctl).rules.push(Rule {
                    op,
                    remaining: n,
                    cache,
                });
                "ok".into()
            }
            Command::Unhold(op) => {
                let mut c = lock(&self.ctl);
                match op {
                    None => c.rules.clear(),
                    Some(o) => c.rules.retain(|r| r.op != o),
                }
                "ok".into()
            }
            Command::Release(w) => format!("ok {}", self.release(w, "ctl")),
            Command::WaitHeld { n, ms } => {
                let ok = self.wait_until(ms, |c| c.parked.len() >= n);
                let held = lock(&self.ctl).parked.len();
                format!("{} {held}", if ok { "ok" } else { "timeout" })
            }
            Command::WaitCount { op, n, ms } => {
                let ok = self.wait_until(ms, |c| c.counts.get(&op).copied().unwrap_or(0) >= n);
                let cnt = lock(&self.ctl).counts.get(&op).copied().unwrap_or(0);
                format!("{} {cnt}", if ok { "ok" } else { "timeout" })
            }
            Command::Count(op) => {
                format!(
                    "ok {}",
                    lock(&self.ctl).counts.get(&op).copied().unwrap_or(0)
                )
            }
            Command::Stall { op, ms } => {
                lock(&self.ctl).stall = Some((op, ms));
                "ok".into()
            }
            Command::Mark(text) => format!("ok {}", self.log(Event::mark(&text))),
            Command::Dump => {
                let fs = lock(&self.fs);
                let v: Vec<Value> = fs
                    .files
                    .iter()
                    // (an unlinked file still held by the kernel has no name)
                    .filter(|(_, f)| !f.name.is_empty())
                    .map(|(ino, f)| {
                        json!({"ino": ino, "name": f.name, "size": f.data.len(),
                               "page_tags": page_tags(&f.data),
                               "unit_tags": units_from(&page_tags(&f.data),
                                   unit_tags(&f.data).as_deref(), f.data.len() as u64)})
                    })
                    .collect();
                format!("ok {}", Value::Array(v))
            }
            Command::Inflight => {
                let st = lock(&self.log);
                let v: Vec<Value> = st
                    .inflight
                    .iter()
                    .map(|(u, op)| json!({"unique": u, "op": op}))
                    .collect();
                format!("ok {}", Value::Array(v))
            }
            Command::Fail { op, n, errno } => {
                lock(&self.ctl).fails.insert(op, (n, errno));
                "ok".into()
            }
            Command::Quit => {
                lock(&self.ctl).quit = true;
                self.cv.notify_all();
                "ok".into()
            }
            Command::Truncate { name, size } => {
                let mut fs = lock(&self.fs);
                match fs.files.values_mut().find(|f| f.name == name) {
                    Some(f) => {
                        f.data.resize(size as usize, 0);
                        f.mtime = SystemTime::now();
                        drop(fs);
                        let mut e = Event::new("server_truncate");
                        e.name = Some(name);
                        e.size = Some(size);
                        self.log(e);
                        "ok".into()
                    }
                    None => format!("err no file {name}"),
                }
            }
            Command::WaitNotified { n, ms } => self.wait_notified(n, ms),
            Command::NotifyInval { .. } => "err notify_inval: only on a control connection".into(),
            Command::Held => {
                let c = lock(&self.ctl);
                let v: Vec<Value> = c
                    .parked
                    .iter()
                    .map(|p| {
                        json!({"unique": p.unique, "op": p.op,
                                    "held_ms": p.since.elapsed().as_millis() as u64})
                    })
                    .collect();
                format!("ok {}", Value::Array(v))
            }
        }
    }

    pub(super) fn serve_conn(self: Arc<Self>, s: UnixStream) {
        let Ok(w) = s.try_clone() else { return };
        let mut w = w;
        for line in BufReader::new(s).lines() {
            let Ok(line) = line else { return };
            if line.trim().is_empty() {
                continue;
            }
            let reply = match Command::parse(&line) {
                // (a thread of its own: needs the Arc)
                Ok(Command::NotifyInval {
                    actor,
                    name,
                    off,
                    len,
                    first,
                    tags,
                }) => self.notify_inval(actor, name, off, len, first, tags),
                Ok(c) => self.control(c),
                Err(e) => format!("err {e}"),
            };
            if writeln!(w, "{reply}").is_err() {
                return;
            }
        }
    }
}
