//! The nowait model in kernel words: what one step did (`describe`),
//! which values break a property at the end of a path (`why`), and the
//! compact state rendering trace files diff (`render`).

use super::config::TaskSpec;
use super::model::{Action, Actor, EnvActor, NowaitModel};
use super::state::*;
use super::step::Step;

fn folios(n: u8) -> String {
    format!("{n} folio{}", if n == 1 { "" } else { "s" })
}

fn cause(c: Cause, s: &State, m: &NowaitModel) -> String {
    match c {
        Cause::None => "-EAGAIN".into(),
        Cause::Iolock => "the IOLOCK is held".into(),
        Cause::Privs => "S_ISUID must be removed, which would block".into(),
        Cause::Times => {
            if m.cfg.variant.pending_time {
                "the times need an update: S_PENDING_TIME set".into()
            } else {
                format!(
                    "the times/i_version need an update (mtime {}, ctime {}, clock {}, i_version {}queried)",
                    s.mtime,
                    s.ctime,
                    s.now,
                    if s.ivq { "" } else { "not " }
                )
            }
        }
        Cause::Ilock => "the ILOCK is held".into(),
        Cause::Alloc => "the range beyond EOF needs a delalloc reservation (RFC v1)".into(),
        Cause::Bdp => format!("dirty {} > limit {}", s.dirty_total(), m.cfg.limit),
        Cause::Folio => "the folio is locked".into(),
    }
}

/// What io_write did with the attempt's result (after a NOWAIT failure
/// or a completion).
fn outcome(m: &NowaitModel, b: &State, a: &State, t: usize) -> String {
    let (bt, at) = (b.tasks[t], a.tasks[t]);
    match a.ev {
        Event::EagainPunt => {
            "nothing was written: io_write restores the iov_iter and punts the request to io-wq".into()
        }
        Event::EagainAfterCopy => format!(
            "iomap_write_iter reverts the iov_iter by {} although they stay in the page cache (i_size {}); xfs_iunlock; io_write sees -EAGAIN, restores the iter to chunk {} and punts to io-wq",
            folios(bt.cur - bt.ipos),
            a.i_size,
            at.it
        ),
        Event::ShortPunt => format!(
            "iomap_file_buffered_write returns the progress; xfs_iunlock; io_write sees a short write: bytes_done = {}, iter saved at chunk {}, punted to io-wq",
            folios(at.done),
            at.it
        ),
        _ if at.ph == Phase::Done => {
            let who = if matches!(m.cfg.tasks[t], TaskSpec::Uring { .. }) {
                format!("the CQE reports {}", folios(at.cqe))
            } else {
                format!("write(2) returns {}", folios(at.cqe))
            };
            format!("xfs_iunlock; {who}")
        }
        _ => String::new(),
    }
}

/// `mtime 0→1, i_version 1→2`: the times and i_version that changed.
fn changes(b: &State, a: &State) -> String {
    let mut v = Vec::new();
    for (name, x, y) in [
        ("mtime", b.mtime, a.mtime),
        ("ctime", b.ctime, a.ctime),
        ("i_version", b.iv, a.iv),
    ] {
        if x != y {
            v.push(format!("{name} {x}→{y}"));
        }
    }
    v.join(", ")
}

fn mode(t: &Task, wq: bool) -> &'static str {
    if t.nowait {
        "IOCB_NOWAIT"
    } else if wq {
        "blocking, io-wq"
    } else {
        "blocking"
    }
}

/// What one step did, in kernel words.
pub fn describe(m: &NowaitModel, b: &State, a: &State, act: &Action) -> String {
    let t = match act.actor {
        Actor::Task(t) | Actor::Iowq(t) => t as usize,
        Actor::Env(e) => return describe_env(b, a, e, act.step),
    };
    let (bt, at) = (b.tasks[t], a.tasks[t]);
    let wq = matches!(act.actor, Actor::Iowq(_));
    match act.step {
        Step::IlockIocb => format!("xfs_ilock_iocb takes the IOLOCK ({})", mode(&at, wq)),
        Step::AppendPunt => {
            "io_write: a buffered O_APPEND write is punted to io-wq before any inline attempt (fix_append_punt)".into()
        }
        Step::IlockIocbEagain => format!(
            "xfs_ilock_iocb(IOCB_NOWAIT) finds the IOLOCK held and returns -EAGAIN; {}",
            outcome(m, b, a, t)
        ),
        Step::WriteChecks => {
            let mut v = Vec::new();
            if let Some((_, true, _)) = m.cfg.tasks[t].write() {
                v.push(format!(
                    "generic_write_checks: O_APPEND, ki_pos = i_size = {}",
                    at.kpos
                ));
            }
            if a.ev == Event::SuidRemoved {
                v.push("file_remove_privs clears S_ISUID (notify_change)".into());
            }
            if (a.mtime, a.ctime, a.iv) != (b.mtime, b.ctime, b.iv) {
                let how = if a.ev == Event::LazytimeNowait {
                    " in memory (lazytime, IOCB_NOWAIT allowed)"
                } else if a.iv != a.iv_disk && a.iv == b.iv {
                    " in memory (lazytime); the earlier i_version bump is still not in the log"
                } else if a.iv != a.iv_disk {
                    " (i_version not logged)"
                } else if a.iv != b.iv {
                    " (logged)"
                } else if m.cfg.lazytime {
                    " in memory (lazytime)"
                } else {
                    " (logged)"
                };
                v.push(format!("kiocb_modified updates {}{how}", changes(b, a)));
            } else if a.ev == Event::TimeSkipped {
                v.push(format!(
                    "kiocb_modified skips the needed time update (S_PENDING_TIME set; mtime {} < clock {})",
                    a.mtime, a.now
                ));
            } else {
                v.push("kiocb_modified: nothing to update".into());
            }
            format!("xfs_file_write_checks: {}", v.join("; "))
        }
        Step::WriteChecksEagain => {
            let mut extra = String::new();
            if a.pending && !b.pending {
                extra.push_str("sets S_PENDING_TIME, ");
            }
            let ch = changes(b, a);
            if !ch.is_empty() {
                extra.push_str(&format!("has already changed {ch}, "));
            }
            format!(
                "kiocb_modified(IOCB_NOWAIT): {}; it {extra}returns -EAGAIN; xfs_iunlock; {}",
                cause(a.cause, b, m),
                outcome(m, b, a, t)
            )
        }
        Step::IomapBegin => format!(
            "xfs_buffered_write_iomap_begin maps folios {}..{} (ILOCK taken and dropped)",
            at.cur,
            at.mend - 1
        ),
        Step::IomapBeginEagain | Step::BdpEagain | Step::FolioEagain => format!(
            "{} at folio {}: {}; {}",
            act.step.kernel_fn(),
            bt.cur,
            cause(a.cause, b, m),
            outcome(m, b, a, t)
        ),
        Step::WriteFolio | Step::WriteFolioDone => {
            let p = bt.cur as usize;
            let mut txt = format!(
                "iomap_write_iter copies {} into folio {p}",
                dname(a.data[p])
            );
            if a.i_size != b.i_size {
                txt.push_str(&format!(
                    "; iomap_write_end: i_size {}→{}",
                    b.i_size, a.i_size
                ));
            }
            if a.viol & VIOL_IO6 != 0 && b.viol & VIOL_IO6 == 0 {
                txt.push_str(" while S_ISUID is set");
            }
            if act.step == Step::WriteFolioDone {
                txt.push_str(&format!("; the write is done: {}", outcome(m, b, a, t)));
            }
            txt
        }
        Step::InodeLock => "inode_lock (the IOLOCK)".into(),
        Step::SetattrMode => format!(
            "notify_change sets S_ISUID, ctime = {}, i_version {}→{} (logged); inode_unlock",
            a.ctime, b.iv, a.iv
        ),
        Step::SetattrTimes => format!(
            "notify_change sets mtime = ctime = {}, i_version {}→{} (logged); inode_unlock",
            a.mtime, b.iv, a.iv
        ),
        Step::Getattr => format!(
            "statx sees size {}, mtime {}, ctime {}, i_version {} (now queried), {}",
            a.i_size,
            a.mtime,
            a.ctime,
            a.iv,
            if a.suid { "S_ISUID" } else { "no S_ISUID" }
        ),
        Step::Writeback => {
            let p = (0..8)
                .find(|&p| b.is_dirty(p) && !a.is_dirty(p))
                .unwrap_or(0);
            format!(
                "writes back folio {p} (dirty {}→{})",
                b.dirty_total(),
                a.dirty_total()
            )
        }
        Step::WritebackOther => format!(
            "writes back a folio of the other file (dirty {}→{})",
            b.dirty_total(),
            a.dirty_total()
        ),
        _ => act.step.kernel_fn().to_string(),
    }
}

fn describe_env(b: &State, a: &State, e: EnvActor, step: Step) -> String {
    match (e, step) {
        (EnvActor::Clock, _) => format!("clock: tick {}→{}", b.now, a.now),
        (EnvActor::FolioHolder(p), Step::EnvFolioLock) => format!("another task locks folio {p}"),
        (EnvActor::FolioHolder(p), _) => format!("another task unlocks folio {p}"),
        (EnvActor::IlockHolder, Step::EnvIlock) => "another task takes the ILOCK".into(),
        (EnvActor::IlockHolder, _) => "another task drops the ILOCK".into(),
        (EnvActor::Dirtier, _) => format!(
            "another task dirties {} of another file: dirty {}→{}",
            folios(a.ext - b.ext),
            b.dirty_total(),
            a.dirty_total()
        ),
    }
}

/// What task `t` waits for, if it is blocked.
pub(super) fn blocked_on(m: &NowaitModel, s: &State, t: usize) -> Option<String> {
    let task = s.tasks[t];
    if task.ph == Phase::Done || m.cfg.tasks[t] == TaskSpec::Flusher {
        return None;
    }
    if m.exec_task(s, t).is_some() {
        return None;
    }
    Some(match task.ph {
        Phase::Start | Phase::Queued => format!("the IOLOCK ({})", s.iolock.describe()),
        Phase::Checks | Phase::Locked => "the ILOCK".into(),
        Phase::IomapBegin => "the ILOCK".into(),
        Phase::Folio => {
            if s.env.flock_held == task.cur {
                format!("the lock of folio {}", task.cur)
            } else {
                format!(
                    "balance_dirty_pages: dirty {} > limit {} and nothing writes back",
                    s.dirty_total(),
                    m.cfg.limit
                )
            }
        }
        Phase::Done => unreachable!(),
    })
}

/// Sentences naming the values that break `prop` at the end of a path.
pub fn why(m: &NowaitModel, states: &[State], actions: &[Action], prop: &str) -> Vec<String> {
    let s = states.last().expect("a path has a state");
    let c = &m.cfg;
    let mut out = Vec::new();
    let writers = || {
        c.tasks
            .iter()
            .enumerate()
            .filter_map(|(t, spec)| spec.write().map(|w| (t, w)))
    };
    match prop {
        "io1-exactly-once" => {
            out.push(format!("the file is {} (i_size {})", file(s), s.i_size));
            let mut want = c.init_size;
            for (t, (uring, append, n)) in writers() {
                let how = if uring { "CQE" } else { "write(2)" };
                out.push(format!(
                    "T{t} asked for {}; its {how} reports {}",
                    folios(n),
                    folios(s.tasks[t].cqe)
                ));
                if append {
                    want += s.tasks[t].cqe;
                    for k in 0..n {
                        let d = chunk(t, k);
                        let at: Vec<String> = (0..s.i_size as usize)
                            .filter(|&p| s.data[p] == d)
                            .map(|p| p.to_string())
                            .collect();
                        if at.len() != 1 {
                            out.push(format!(
                                "{} is in the file {} time(s) (folios {})",
                                dname(d),
                                at.len(),
                                at.join(", ")
                            ));
                        }
                    }
                }
            }
            if s.i_size != want {
                out.push(format!(
                    "i_size {} but the initial size plus the appends' results is {want}",
                    s.i_size
                ));
            }
        }
        "io2-append-atomic" => {
            for (t, (_, append, _)) in writers() {
                if !append {
                    continue;
                }
                let own: Vec<usize> = (0..s.i_size as usize)
                    .filter(|&p| chunk_of(s.data[p]).map(|x| x.0) == Some(t))
                    .collect();
                if let (Some(&lo), Some(&hi)) = (own.first(), own.last()) {
                    let foreign: Vec<String> = (lo..=hi)
                        .filter(|&p| chunk_of(s.data[p]).map(|x| x.0) != Some(t))
                        .map(|p| format!("{} at folio {p}", dname(s.data[p])))
                        .collect();
                    if !foreign.is_empty() {
                        out.push(format!(
                            "T{t}'s O_APPEND data spans folios {lo}..{hi} of {} with {} inside",
                            file(s),
                            foreign.join(", ")
                        ));
                    }
                }
            }
        }
        "io3-eagain-pure" => {
            // the step that set the bit, and what its attempt changed
            if let Some(k) = (0..actions.len())
                .find(|&k| states[k].viol & VIOL_IO3 == 0 && states[k + 1].viol & VIOL_IO3 != 0)
            {
                let (b, a) = (&states[k], &states[k + 1]);
                let t = match actions[k].actor {
                    Actor::Task(t) | Actor::Iowq(t) => t as usize,
                    _ => 0,
                };
                // the attempt began at the last xfs_ilock_iocb of t
                let start = (0..k)
                    .rev()
                    .find(|&j| {
                        actions[j].step == Step::IlockIocb
                            && matches!(actions[j].actor, Actor::Task(x) | Actor::Iowq(x) if x as usize == t)
                    })
                    .map(|j| &states[j + 1])
                    .unwrap_or(b);
                out.push(format!(
                    "T{t}'s NOWAIT attempt reported -EAGAIN at step {} ({}), yet since it took the IOLOCK:",
                    k + 1,
                    actions[k].step.kernel_fn()
                ));
                let d = |name: &str, x: String, y: String, out: &mut Vec<String>| {
                    if x != y {
                        out.push(format!("{name} {x} → {y}"));
                    }
                };
                d("the file", file(start), file(a), &mut out);
                d("mtime", start.mtime.to_string(), a.mtime.to_string(), &mut out);
                d("ctime", start.ctime.to_string(), a.ctime.to_string(), &mut out);
                d("i_version", start.iv.to_string(), a.iv.to_string(), &mut out);
                d("S_ISUID", start.suid.to_string(), a.suid.to_string(), &mut out);
                d(
                    "S_PENDING_TIME",
                    start.pending.to_string(),
                    a.pending.to_string(),
                    &mut out,
                );
            }
        }
        "iv-logged" => out.push(format!(
            "i_version is {} in memory but {} in the log when the write completed",
            s.iv, s.iv_disk
        )),
        "io4-times" => {
            for (t, _) in writers() {
                let k = s.tasks[t];
                if k.ph == Phase::Done && (s.mtime < k.tstart || s.ctime < k.tstart) {
                    out.push(format!(
                        "T{t} passed kiocb_modified at clock {} and completed with mtime {}, ctime {}",
                        k.tstart, s.mtime, s.ctime
                    ));
                }
                if k.ph == Phase::Done && k.ivo != NONE && s.iv <= k.ivo {
                    out.push(format!(
                        "a reader had queried i_version {} before T{t} passed kiocb_modified; it is still {} when T{t} completes",
                        k.ivo, s.iv
                    ));
                }
            }
        }
        "io5-pending-cleared" => out.push(format!(
            "every task returned but S_PENDING_TIME is still set (mtime {}, clock {}): later NOWAIT writes skip their timestamp updates",
            s.mtime, s.now
        )),
        "io6-suid" => {
            if let Some(k) = (0..actions.len())
                .find(|&k| states[k].viol & VIOL_IO6 == 0 && states[k + 1].viol & VIOL_IO6 != 0)
            {
                out.push(format!(
                    "{} copied data while S_ISUID was set (step {})",
                    m.actor_label(actions[k].actor),
                    k + 1
                ));
            }
        }
        "io7-dirty-limit" => out.push(format!(
            "{} dirty folios ({} of this file, {} of another) > limit {} + ratelimit {} x {} dirtying context(s) + the dirtier's {}",
            s.dirty_total(),
            s.dirty.count_ones(),
            s.ext,
            c.limit,
            c.ratelimit,
            c.dirtying_contexts(),
            c.dirtier
        )),
        "e" => {
            for t in 0..s.tasks.len() {
                if let Some(w) = blocked_on(m, s, t) {
                    out.push(format!("T{t} {} waits for {w}", c.tasks[t].short()));
                }
            }
        }
        _ => {}
    }
    out
}

/// The compact multi-line state rendering.
pub fn render(m: &NowaitModel, s: &State) -> String {
    let mut o =
        format!(
        "file {} dirty {:#04b}+{} | clock {} mtime {} ctime {} iv {}/{}{}{}{} | IOLOCK {}{}{}\n",
        file(s),
        s.dirty,
        s.ext,
        s.now,
        s.mtime,
        s.ctime,
        s.iv,
        s.iv_disk,
        if s.ivq { " queried" } else { "" },
        if s.suid { " S_ISUID" } else { "" },
        if s.pending { " S_PENDING_TIME" } else { "" },
        s.iolock.describe(),
        if s.env.ilock_held { " ILOCK(other)" } else { "" },
        if s.env.flock_held != NONE {
            format!(" folio {} locked(other)", s.env.flock_held)
        } else {
            String::new()
        }
    );
    for (t, k) in s.tasks.iter().enumerate() {
        if m.cfg.tasks[t] == TaskSpec::Flusher {
            continue;
        }
        o.push_str(&format!(
            "  T{t} {:?}{}{} pos {} it {} done {} cqe {}\n",
            k.ph,
            if k.nowait { " nowait" } else { "" },
            if k.wq { " io-wq" } else { "" },
            k.kpos,
            k.it,
            k.done,
            k.cqe
        ));
    }
    o
}
