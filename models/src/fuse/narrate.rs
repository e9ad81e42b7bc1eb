//! The FUSE model in kernel words: what one step did (`describe`) and
//! which values break a property at the end of a path (`why`). The
//! checker numbers, wraps and assembles them (checks/src/explain.rs).

use super::config::{TaskSpec, MAX_PAGES};
use super::lfolio;
use super::model::{Action, Actor, FuseModel};
use super::reclaim;
use super::state::*;
use super::step::Step;
use super::wbslots;

/// `v2 (T0 write)`, `v1 (initial data)`.
pub fn vname(m: &FuseModel, v: u8) -> String {
    match v {
        V_ZERO => "v0 (never written)".into(),
        V_INIT => "v1 (initial data)".into(),
        V_PREDIRTY => "v15 (dirty before the run)".into(),
        NONE => "nothing".into(),
        v => match m.task_of_version(v) {
            Some(t) => format!("v{v} (T{t} {})", m.cfg.tasks[t].short()),
            None => format!("v{v}"),
        },
    }
}

fn vset(m: &FuseModel, bits: u16) -> String {
    let v: Vec<String> = (0..16u8)
        .filter(|b| bits & (1 << b) != 0)
        .map(|b| vname(m, b))
        .collect();
    if v.is_empty() {
        "nothing".into()
    } else {
        v.join(" or ")
    }
}

fn wctr(w: i8) -> String {
    if w < 0 {
        format!("NOWRITE+{}", w - FUSE_NOWRITE)
    } else {
        w.to_string()
    }
}

/// Page-cache WRITEs in flight: (request, where).
fn cache_writes(s: &State) -> Vec<(u8, u8, String)> {
    let mut out = Vec::new();
    for r in s.fuse_q.iter() {
        if let Req::CacheWrite { first, sent, .. } = *r {
            out.push((first, sent, format!("{r} on /dev/fuse")));
        }
    }
    for r in s.bg_q.iter() {
        if let Req::CacheWrite { first, sent, .. } = *r {
            out.push((first, sent, format!("{r} on fc->bg_queue")));
        }
    }
    for (w, wk) in s.workers.iter().enumerate() {
        match *wk {
            Worker::Busy {
                req: req @ Req::CacheWrite { first, sent, .. },
                ..
            } => out.push((first, sent, format!("{req} at D{w}"))),
            Worker::Ending { first, n } => out.push((
                first,
                n,
                format!("WRITE(p{first}..{}) replied, ending at D{w}", first + n - 1),
            )),
            _ => {}
        }
    }
    out
}

/// The request worker `w` was handling before the last step, if the
/// last step was a daemon step.
fn last_daemon_req(states: &[State], actions: &[Action]) -> Option<(usize, Req, [u8; MAX_PAGES])> {
    let a = actions.last()?;
    let n = actions.len();
    match a.actor {
        Actor::Daemon(w) => {
            let w = w as usize;
            let src = if matches!(a.step, Step::DaemonRead | Step::UringFetch) {
                &states[n]
            } else {
                &states[n - 1]
            };
            match src.workers[w] {
                Worker::Busy { req, payload } => Some((w, req, payload)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Sentences saying which values break `prop` at the end of the path.
pub fn why(m: &FuseModel, states: &[State], actions: &[Action], prop: &str) -> Vec<String> {
    let s = states.last().expect("a path has a state");
    let mut out = Vec::new();
    match prop {
        "a1" => {
            let sa: Vec<String> = s
                .fuse_q
                .iter()
                .filter(|r| matches!(r, Req::Setattr { .. }))
                .map(|r| r.to_string())
                .chain(s.workers.iter().filter_map(|w| match w {
                    Worker::Busy {
                        req: r @ Req::Setattr { .. },
                        ..
                    } => Some(r.to_string()),
                    _ => None,
                }))
                .collect();
            for (_, _, w) in cache_writes(s) {
                out.push(format!(
                    "{} is outstanding while {w}",
                    sa.first().cloned().unwrap_or_else(|| "SETATTR".into())
                ));
            }
        }
        "a2" => {
            if let Some((w, req, payload)) = last_daemon_req(states, actions) {
                if let Req::CacheWrite { first, sent, .. } = req {
                    for p in first as usize..(first + sent) as usize {
                        for (ti, spec) in m.cfg.tasks.iter().enumerate() {
                            if let TaskSpec::Truncate { size } = spec {
                                let vt = m.ver(ti);
                                if hist_pos(s.hist[p], vt).is_some()
                                    && hist_older(s.hist[p], payload[p], vt)
                                {
                                    out.push(format!(
                                        "D{w} took {req} carrying page {p} = {}, older than the truncation to {size}p by T{ti}, which the server had applied (page {p} history {:?})",
                                        vname(m, payload[p]),
                                        hist_list(s.hist[p])
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
        "a3" => {
            if s.srv_size != s.i_size {
                out.push(format!(
                    "server size is {}p but i_size is {}p",
                    s.srv_size, s.i_size
                ));
            }
            for p in 0..s.i_size as usize {
                let last = s.fin[p] & !s.sup[p];
                if s.srv[p] == NONE || last & (1 << s.srv[p]) == 0 {
                    out.push(format!(
                        "page {p}: server has {}, but the last data written is {}",
                        vname(m, s.srv[p]),
                        vset(m, last)
                    ));
                }
            }
        }
        "b1" => {
            if let Some((w, Req::Read { task, first, n }, _)) = last_daemon_req(states, actions) {
                let t = task as usize;
                // the state in which the read began (its Entry step)
                let entry = actions
                    .iter()
                    .position(|a| a.actor == Actor::Task(task) && a.step == Step::Entry)
                    .map(|k| &states[k])
                    .unwrap_or(&states[0]);
                for p in first as usize..(first + n) as usize {
                    if p as u8 >= s.srv_size {
                        continue;
                    }
                    let stale = s.tasks[t].before[p];
                    if s.srv[p] != NONE && stale & (1 << s.srv[p]) != 0 {
                        let must = entry.fin[p] & !entry.sup[p];
                        let mut line = format!(
                            "page {p}: D{w} answered T{t}'s READ with {} from the server, but a write(2) of {} had returned before the read began",
                            vname(m, s.srv[p]),
                            vset(m, must)
                        );
                        let pg = &s.pages[p];
                        if pg.present() {
                            line.push_str(&format!(
                                "; the page cache holds it ({})",
                                s.page_str(p)
                            ));
                        }
                        out.push(line);
                    }
                }
            }
        }
        "b2" => {
            if let Some((w, req @ Req::CacheWrite { first, sent, .. }, payload)) =
                last_daemon_req(states, actions)
            {
                for p in first as usize..(first + sent) as usize {
                    for (ti, spec) in m.cfg.tasks.iter().enumerate() {
                        if matches!(
                            spec,
                            TaskSpec::DioWrite { .. } | TaskSpec::OdirectWrite { .. }
                        ) && s.tasks[ti].applied
                            && payload[p] != NONE
                            && s.tasks[ti].before[p] & (1 << payload[p]) != 0
                        {
                            out.push(format!(
                                "page {p}: D{w} applied {req} with {} after T{ti}'s direct WRITE of {}, though that data was written before T{ti} began; the server now has {}",
                                vname(m, payload[p]),
                                vname(m, m.ver(ti)),
                                vname(m, s.srv[p])
                            ));
                        }
                    }
                }
            }
        }
        "b3" => {
            if let Some(Action {
                actor: Actor::Task(t),
                ..
            }) = actions.last()
            {
                let t = *t as usize;
                let entry = actions
                    .iter()
                    .position(|a| a.actor == Actor::Task(t as u8) && a.step == Step::Entry)
                    .map(|k| &states[k])
                    .unwrap_or(&states[0]);
                for p in 0..m.cfg.pages as usize {
                    let stale = s.tasks[t].before[p];
                    let v = s.pages[p].ver;
                    if stale != 0 && v != NONE && stale & (1 << v) != 0 && s.pages[p].present() {
                        out.push(format!(
                            "page {p}: T{t} {} returned {} from the page cache, but a write of {} had returned before it began; the server has {}",
                            m.cfg.tasks[t].short(),
                            vname(m, v),
                            vset(m, entry.fin[p] & !entry.sup[p]),
                            vname(m, s.srv[p])
                        ));
                    }
                }
            }
        }
        "c1" => {
            let cw = cache_writes(s);
            for p in 0..m.cfg.pages {
                let on: Vec<&str> = cw
                    .iter()
                    .filter(|(f, n, _)| (*f..*f + *n).contains(&p))
                    .map(|(_, _, w)| w.as_str())
                    .collect();
                if on.len() > 1 {
                    out.push(format!(
                        "page {p}: {} page-cache WRITEs in flight: {}",
                        on.len(),
                        on.join("; ")
                    ));
                }
            }
        }
        "d" => {
            if let Some(Action {
                actor: Actor::Task(t),
                ..
            }) = actions.last()
            {
                let task = &s.tasks[*t as usize];
                for p in 0..s.i_size.min(m.cfg.pages) as usize {
                    let need = task.snap[p];
                    if need != NONE && hist_older(s.hist[p], s.srv[p], need) {
                        out.push(format!(
                            "page {p}: T{t} sent its request while the server has {}; the data dirty when it began was {}",
                            vname(m, s.srv[p]),
                            vname(m, need)
                        ));
                    }
                }
            }
        }
        "e" => {
            out.push("no step is enabled and not everything is done".into());
            out.extend(reclaim::why(m, s));
            for t in 0..s.tasks.len() {
                if !m.task_done(s, t) {
                    out.push(format!(
                        "T{t} {} waits in {:?}",
                        m.cfg.tasks[t].short(),
                        m.current_op(s, t).expect("not done")
                    ));
                }
            }
            for p in 0..m.cfg.pages as usize {
                let pg = &s.pages[p];
                if pg.locked() || pg.wb() {
                    out.push(format!("page {p}: {}", s.page_str(p)));
                }
            }
            out.push(format!(
                "writectr={}, queued_writes holds {}, i_rwsem owner={}, /dev/fuse holds {} requests",
                wctr(s.writectr),
                s.queued.len(),
                if s.rwsem.owner == NONE {
                    "none".to_string()
                } else {
                    format!("T{}", s.rwsem.owner)
                },
                s.fuse_q.len()
            ));
        }
        "g-bugon" => {
            let before = &states[states.len().saturating_sub(2)];
            let wc = wctr(before.writectr);
            match actions.last().map(|a| a.step) {
                Some(Step::SetNowrite) | Some(Step::LockSetNowrite) => out.push(format!(
                    "fuse_set_nowrite found writectr={wc} (< 0: nested NOWRITE), BUG_ON"
                )),
                _ => out.push(format!(
                    "__fuse_release_nowrite found writectr={wc}, not NOWRITE: BUG_ON"
                )),
            }
        }
        "r-flag" => out.extend(reclaim::why(m, s)),
        "lf-limits" | "lf-progress" | "lf-crop" => out.extend(lfolio::why(m, states, prop)),
        "lf-slots" => out.extend(wbslots::why(m, s)),
        "i1" => out.push(format!(
            "a page-cache store ran while {} parallel direct writer(s) held i_rwsem shared (iocachectr={}, FUSE_I_CACHE_IO_MODE {})",
            s.rwsem.readers,
            s.iocachectr,
            if s.cache_io_mode { "set" } else { "clear" }
        )),
        "f1" => out.push(format!(
            "{} writeback WRITE(s) failed while every fd was open, but this {} found no error in its fd's errseq cursor",
            s.losses,
            actions
                .last()
                .map(|a| m.actor_label(a.actor))
                .unwrap_or_default(),
        )),
        "f1-close" => out.push(format!(
            "{} writeback WRITE(s) failed while every fd was open, but this {} found no error: {}",
            s.losses,
            actions
                .last()
                .map(|a| m.actor_label(a.actor))
                .unwrap_or_default(),
            "AS_EIO was already test-and-cleared by another fd's fsync/close (filemap_check_errors does not use the fd's errseq cursor; stricter than the kernel's contract, which is f1's)"
        )),
        "a6" => out.push(format!(
            "units {:?} lie in a range an extension exposed (no write since): they must read as zeros and reach the server as zeros; the cache holds versions {:?}, the server {:?} (size {}p); fuse_do_setattr and the write path zero nothing in [old EOF, new EOF), so what a store through the mapping put beyond the old EOF is inside the file now",
            (0..m.cfg.pages).filter(|q| s.ext0 & (1 << q) != 0).collect::<Vec<_>>(),
            (0..m.cfg.pages as usize)
                .filter(|q| s.ext0 & (1 << q) != 0)
                .map(|q| s.pages[q].ver)
                .collect::<Vec<_>>(),
            (0..m.cfg.pages as usize)
                .filter(|q| s.ext0 & (1 << q) != 0)
                .map(|q| s.srv[q])
                .collect::<Vec<_>>(),
            s.srv_size
        )),
        "a5" => out.push(format!(
            "after the failed SETATTR i_size is {}p, the server's size {}p",
            s.i_size, s.srv_size
        )),
        "a4" => out.push(format!(
            "i_size became {}p: a GETATTR size no operation produced (sizes produced: {:?}), a short READ's size below the server's, or one a later local size change had replaced",
            s.i_size,
            (0..=m.cfg.pages).filter(|v| s.sizes & (1 << v) != 0).collect::<Vec<_>>()
        )),
        "a4-exact" => out.push(format!(
            "i_size became {}p: a size no operation produced (sizes produced: {:?}) or one a later local size change had replaced (a short READ's pos + num_read is only an upper bound of the server's size: stricter than the kernel's contract, which is a4's)",
            s.i_size,
            (0..=m.cfg.pages).filter(|v| s.sizes & (1 << v) != 0).collect::<Vec<_>>()
        )),
        _ => {}
    }
    out
}

/// What changed, in kernel words.
pub fn describe(m: &FuseModel, b: &State, a: &State, act: &Action) -> String {
    if let Some(d) = reclaim::describe(m, b, a, act) {
        return d;
    }
    let mut bits: Vec<String> = vec![act.step.kernel_fn(m.cfg.tree()).to_string()];
    if b.writectr != a.writectr {
        bits.push(if a.writectr < 0 {
            format!("writectr=NOWRITE+{}", a.writectr - FUSE_NOWRITE)
        } else {
            format!("writectr={}", a.writectr)
        });
    }
    if b.i_size != a.i_size {
        bits.push(format!("i_size={}p", a.i_size));
    }
    if let Actor::Task(_) = act.actor {
        // a task step only appends to /dev/fuse (and fc->bg_queue)
        for r in a.fuse_q.iter().skip(b.fuse_q.len()) {
            bits.push(format!("sends {r}"));
        }
        for r in a.bg_q.iter().skip(b.bg_q.len()) {
            bits.push(format!("queues {r} on fc->bg_queue"));
        }
    }

    if a.queued.len() > b.queued.len() {
        bits.push("queued on queued_writes".into());
    }
    match act.actor {
        Actor::Daemon(w) => match (b.workers[w as usize], a.workers[w as usize]) {
            (_, Worker::Busy { req, payload }) => {
                let mut s = format!("reads {req}");
                if let Req::CacheWrite { first, sent, .. } = req {
                    let vs: Vec<String> = (first..first + sent)
                        .map(|p| format!("v{}", payload[p as usize]))
                        .collect();
                    s.push_str(&format!(" data {}", vs.join(",")));
                }
                bits = vec![s];
            }
            (Worker::Busy { req, .. }, _) if act.step == Step::DaemonReplyError => {
                bits = vec![format!("fails {req}: -EIO reply, nothing applied")];
            }
            (Worker::Busy { req, .. }, _) => {
                let mut line = format!("applies {req}, replies; server size={}p", a.srv_size);
                if let Req::ReadPages { first, n, .. } = req {
                    let vs: Vec<String> = (first..first + n)
                        .map(|p| format!("v{}", a.pages[p as usize].ver))
                        .collect();
                    line.push_str(&format!(
                        "; fuse_readpages_end: folios uptodate ({}), unlocked",
                        vs.join(",")
                    ));
                }
                bits = vec![line];
            }
            (Worker::Ending { first, n }, _) => {
                bits.push(format!("end writeback p{}..{}", first, first + n - 1));
            }
            _ => {}
        },
        Actor::Task(_) => {
            for p in 0..m.cfg.pages as usize {
                let (x, y) = (b.pages[p], a.pages[p]);
                if x != y {
                    bits.push(format!("p{p}:{}", a.page_str(p)));
                }
            }
        }
    }
    if let Actor::Daemon(_) = act.actor {
        // flush_bg_queue in fuse_request_end
        if a.bg_q.len() < b.bg_q.len() {
            bits.push(format!(
                "flush_bg_queue moves {} request(s) to /dev/fuse",
                b.bg_q.len() - a.bg_q.len()
            ));
        }
    }
    bits.join("; ")
}
