//! The constrained search: is there a behaviour of the model that produces
//! exactly the observed event sequence?

use super::slots::{parked, Slots};
use super::*;
use std::collections::{HashSet, VecDeque};

use wbspec_models::fuse::config::{low_mask, PageMask};
use wbspec_models::fuse::program::Op;
use wbspec_models::fuse::state::{Req, Task, Worker, NONE};
use wbspec_models::fuse::{Action, Actor, FuseModel, State, Step};

/// A search node: a model state, which tasks have been issued, and which
/// direct reads have had their READ answered (what they return is then
/// checked; one with no READ returns 0).
pub(super) type Node = (State, u16, u16);

#[derive(Debug, Clone)]
pub enum Verdict {
    Conforms {
        events: usize,
        explored: usize,
        /// The most model states possible at once (after closing under
        /// free steps, at one event): what the search holds in memory.
        widest: usize,
    },
    Violation {
        /// Index into `Mapping::obs` (== obs.len() for "cannot finish").
        index: usize,
        what: String,
        expected: String,
        /// Model states still possible just before the event.
        states: Vec<String>,
        possible: usize,
        /// Observable events the model could produce instead.
        instead: Vec<String>,
    },
    Inconclusive {
        index: usize,
        explored: usize,
        /// A model limit stopped the search (task slots, data versions);
        /// `None`: the state bound.
        why: Option<String>,
    },
}

impl Verdict {
    /// One word for the verdict's kind: conforms, violation, bound (the
    /// state bound stopped it), limit (a model limit stopped it).
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Conforms { .. } => "conforms",
            Verdict::Violation { .. } => "violation",
            Verdict::Inconclusive { why: None, .. } => "bound",
            Verdict::Inconclusive { why: Some(_), .. } => "limit",
        }
    }

    pub fn short(&self) -> String {
        match self {
            Verdict::Conforms { .. } => "conforms".into(),
            Verdict::Violation {
                index,
                what,
                expected,
                ..
            } => {
                format!("VIOLATION at event {index} ({what}): the model cannot produce {expected}")
            }
            Verdict::Inconclusive {
                index,
                explored,
                why: None,
            } => {
                format!("inconclusive (state bound hit at event {index} after {explored} states)")
            }
            Verdict::Inconclusive {
                index,
                why: Some(why),
                ..
            } => format!("inconclusive (a model limit at event {index}: {why})"),
        }
    }

    /// Multi-line report with the possible model states.
    pub fn report(&self, m: &Mapping) -> String {
        let mut s = self.short();
        if let Verdict::Violation {
            states,
            possible,
            instead,
            ..
        } = self
        {
            s += "\n";
            s += &m.summary();
            s += &format!(
                "\n  the model could instead: {}",
                if instead.is_empty() {
                    "nothing observable".into()
                } else {
                    instead.join("; ")
                }
            );
            s += &format!(
                "\n  {possible} model states possible before it; {} of them:",
                states.len()
            );
            for st in states {
                for l in st.lines() {
                    s += &format!("\n    {l}");
                }
                s += "\n    --";
            }
        }
        s
    }
}

fn payload_ok(want: &[Vec<Id>], first: u8, got: &[u8]) -> bool {
    want.iter()
        .enumerate()
        .all(|(i, w)| w.contains(&(got[first as usize + i] as Id)))
}

/// Does a request (with the payload the daemon copied) match a pattern?
fn matches(p: &Pat, req: &Req, payload: &[u8]) -> bool {
    match (p, *req) {
        (
            Pat::CacheWrite {
                first,
                n,
                payload: w,
            },
            Req::CacheWrite { first: f, sent, .. },
        ) => *first == f && *n == sent && payload_ok(w, f, payload),
        (
            Pat::DirectWrite {
                first,
                n,
                payload: w,
            },
            Req::DirectWrite { first: f, n: m, .. },
        ) => *first == f && *n == m && payload_ok(w, f, payload),
        (
            Pat::ThroughWrite {
                first,
                n,
                payload: w,
            },
            Req::ThroughWrite { first: f, n: m, .. },
        ) => *first == f && *n == m && payload_ok(w, f, payload),
        (Pat::Read { first, n }, Req::Read { first: f, n: m, .. })
        | (Pat::Read { first, n }, Req::ReadPages { first: f, n: m, .. }) => *first == f && *n == m,
        (Pat::Setattr { size }, Req::Setattr { size: s, .. }) => *size == s,
        (Pat::Fsync, Req::Fsync { .. }) => true,
        (Pat::Flush, Req::Flush { .. }) => true,
        (Pat::Open { task, trunc }, Req::Open { task: t, trunc: tr }) => {
            *task == t as usize && *trunc == tr
        }
        _ => false,
    }
}

/// The bit of the direct read a READ reply answers (0 for any other
/// request).
fn direct_read_bit(m: Option<&Mapping>, req: &Req) -> u16 {
    match (m, *req) {
        (Some(m), Req::Read { task, .. })
            if returns::returns(m, task as usize) == returns::Returns::ReadReply =>
        {
            1 << task
        }
        _ => 0,
    }
}

/// The environment's tasks in a search (envmap.rs): their slots, the
/// versions of zeros (`State::dedup_history` on a restart), and how many
/// may be in an access at once (`Mapping::env_threads`).
#[derive(Clone, Copy)]
struct EnvCtx {
    slots: u16,
    zeros: u16,
    threads: u8,
    /// Pages whose clean folio the environment's reclaim may take
    /// (FuseModel::reclaim_clean): with `Mapping::reclaim`, those a READ
    /// at this event or later reads ([`reclaim_masks`]); else none.
    reclaim: PageMask,
    /// Reclaim only when it can matter ([`reclaim_matters`]).
    lazy: bool,
}

impl EnvCtx {
    fn new(slots: &[usize], zeros: u16, threads: Option<u8>, reclaim: PageMask) -> EnvCtx {
        EnvCtx {
            slots: slots.iter().fold(0, |b, s| b | 1 << s),
            zeros,
            threads: threads.unwrap_or(u8::MAX),
            reclaim,
            lazy: true,
        }
    }

    /// Whether an environment's task of node `n` that is at rest (in
    /// `rest`'s form) may begin an access: fewer than `threads` of them
    /// are in one. A thread handles one fault at a time.
    fn may_begin(&self, n: &Node) -> bool {
        let busy = (0..n.0.tasks.len())
            .filter(|&e| self.slots & n.1 & (1 << e) != 0 && n.0.tasks[e] != Task::new())
            .count();
        busy < self.threads as usize
    }
}

/// Node `n` with task `e` set to `task`.
fn with_task(n: &Node, e: usize, task: Task) -> Node {
    let mut x = *n;
    x.0.tasks[e] = task;
    x
}

/// An `env` task between its load and its store: at the store's first
/// op, which has not begun (its first step moves the phase or the pc:
/// models/src/fuse/tests_env.rs), so the task holds nothing.
fn at_store_start(model: &FuseModel, s: &State, t: usize) -> bool {
    let task = s.tasks[t];
    model.store_start(t) == Some(task.pc) && task.ph == 0 && task.cur == 0
}

/// An environment's task with no access in progress: not begun,
/// finished, or (an `env` task) between its load and its store.
fn env_idle(model: &FuseModel, s: &State, t: usize) -> bool {
    s.tasks[t] == Task::new() || model.task_done(s, t) || at_store_start(model, s, t)
}

/// The environment's tasks at rest, in one form: a task of a live
/// mapping that has finished an access, or an `env` task between its
/// load and its store, is kept as one that has not begun. Their futures
/// are the same: a finished task may start again at once, an `env` task
/// that has not begun may begin at its store (free_steps), and one
/// between load and store holds nothing and is as if it had not begun
/// (models/src/fuse/tests_env.rs). A store adds its version to the
/// page's history again each time: the repeats no step reads are
/// dropped here (State::dedup_history keeps first occurrences, the last
/// entry and zeros), or the histories would grow by one per store.
///
/// An `env` task in fuse_page_mkwrite's folio_wait_writeback on a folio
/// not under writeback takes the wait at once: the step only moves its
/// pc, no request or observation sees it, and it stays enabled until
/// taken, since no other step starts writeback on the folio the task
/// holds locked (models/src/fuse/tests_env.rs checks both on every
/// reachable state): the states before the wait and after it have the
/// same futures, less the wait.
fn rest(model: &FuseModel, env: EnvCtx, n: &mut Node) {
    for e in 0..n.0.tasks.len() {
        if env.slots & n.1 & (1 << e) == 0 {
            continue;
        }
        if n.0.tasks[e] != Task::new()
            && (model.task_done(&n.0, e) || at_store_start(model, &n.0, e))
        {
            n.0.tasks[e] = Task::new();
            n.0.dedup_history(|v| env.zeros & (1 << v) != 0);
        }
        if model.store_start(e).is_some()
            && matches!(model.current_op(&n.0, e), Some(Op::MkwriteWait { .. }))
        {
            let wait = Action {
                actor: Actor::Task(e as u8),
                step: Step::MkwriteWait,
            };
            if let Some(s) = model.step(&n.0, wait) {
                n.0 = s;
            }
        }
    }
}

fn free_steps(model: &FuseModel, env: EnvCtx, n: &Node, out: &mut Vec<Node>) {
    let mut acts = vec![];
    let may_begin = env.may_begin(n);
    model.enabled(&n.0, &mut acts);
    for a in acts.drain(..) {
        let free = match a.actor {
            Actor::Task(t) => {
                let t = t as usize;
                n.1 & (1 << t) != 0
                    && (may_begin || env.slots & (1 << t) == 0 || n.0.tasks[t] != Task::new())
            }
            Actor::Daemon(_) => a.step == Step::WritepageEnd,
        };
        if free {
            if let Some(s) = model.step(&n.0, a) {
                out.push((s, n.1, n.2));
            }
        }
    }
    // the environment's reclaim takes a clean folio out of the page cache
    // (no request: a later access READs it again), at the latest moment
    // it can matter ([`reclaim_matters`])
    let mut r = env.reclaim;
    let mut here = None;
    while r != 0 {
        let p = r.trailing_zeros() as usize;
        r &= r - 1;
        if let Some(s) = model.reclaim_clean(&n.0, p) {
            if !env.lazy || {
                let keys = here.get_or_insert_with(|| step_keys(model, n));
                reclaim_matters(model, env, n, keys, &(s, n.1, n.2), p)
            } {
                out.push((s, n.1, n.2));
            }
        }
    }
    // the program loads or stores through a live mapping as often as it
    // likes (a finished task is at rest, above, and begins again): an
    // `env` task that has not begun may begin at its store (a store
    // with no load before it), its first step taken from there
    for e in 0..n.0.tasks.len() {
        if model.store_start(e).is_none() {
            continue;
        }
        if env.slots & n.1 & (1 << e) == 0 || n.0.tasks[e] != Task::new() || !may_begin {
            continue;
        }
        let j = env_begun(model, n, e);
        model.enabled(&j.0, &mut acts);
        for a in acts.drain(..) {
            if a.actor == Actor::Task(e as u8) {
                if let Some(s) = model.step(&j.0, a) {
                    out.push((s, n.1, n.2));
                }
            }
        }
    }
}

/// Every step that may ever be taken from node `n`, by key: an idle
/// environment task's first step from its store (`free_steps`; `true`),
/// then every enabled action of the model (a task's, issued or not, or
/// a daemon worker's, observable or not).
fn step_keys(model: &FuseModel, n: &Node) -> Vec<(Action, bool)> {
    let mut out = vec![];
    let mut acts = vec![];
    for e in 0..n.0.tasks.len() {
        if model.store_start(e).is_none() || n.0.tasks[e] != Task::new() {
            continue;
        }
        model.enabled(&env_begun(model, n, e).0, &mut acts);
        out.extend(
            acts.drain(..)
                .filter(|a| a.actor == Actor::Task(e as u8))
                .map(|a| (a, true)),
        );
    }
    model.enabled(&n.0, &mut acts);
    out.extend(acts.drain(..).map(|a| (a, false)));
    out
}

/// Node `n` with environment task `e`, idle, at its store's first op.
fn env_begun(model: &FuseModel, n: &Node, e: usize) -> Node {
    let pc = model.store_start(e).expect("an env task");
    with_task(n, e, Task { pc, ..Task::new() })
}

/// The step of key `k` ([`step_keys`]) from node `n`, in the form the
/// search stores nodes (`closure`): the properties' ghosts forgotten,
/// the environment's tasks at rest.
fn take(model: &FuseModel, env: EnvCtx, n: &Node, k: (Action, bool)) -> Option<Node> {
    let Actor::Task(e) = k.0.actor else {
        return model
            .step(&n.0, k.0)
            .map(|s| normal(model, env, (s, n.1, n.2)));
    };
    let from = if k.1 {
        env_begun(model, n, e as usize)
    } else {
        *n
    };
    model
        .step(&from.0, k.0)
        .map(|s| normal(model, env, (s, n.1, n.2)))
}

/// Node `n` as `closure` stores it.
fn normal(model: &FuseModel, env: EnvCtx, mut n: Node) -> Node {
    n.0.forget_property_ghosts();
    rest(model, env, &mut n);
    n
}

/// Whether reclaiming page `p` of node `n` (giving `r`) can matter now:
/// some step that may be taken from `n` or from `r` (`keys`: those of
/// `n`) is not the same step, to the same node, before the reclaim and
/// after it. Otherwise the reclaim can wait: every step leaves a node
/// from which it is still possible, to the same node as taking it
/// first, or the step removed the page itself. By induction along any
/// run that reclaims `p` early, the run that takes the same steps and
/// reclaims `p` only when some step's behaviour depends on it is a run
/// of this search, through the same nodes from there on; so the search
/// keeps every behaviour, while its frontier no longer holds every
/// subset of the clean pages a later READ reads (an 8-page re-read held
/// 2,112 nodes at one event, now 80). The events between
/// (`check_in_slots`) read a node's tasks, requests and server, never
/// whether a clean page is cached, and the slots' choices read the
/// versions all nodes hold, which a reclaim only lowers in the node
/// that takes it.
fn reclaim_matters(
    model: &FuseModel,
    env: EnvCtx,
    n: &Node,
    keys: &[(Action, bool)],
    r: &Node,
    p: usize,
) -> bool {
    // (the keys' steps first: one that differs is found before the
    // reclaimed node's keys are gathered)
    let differs = keys.iter().any(|&k| {
        let (x, y) = (take(model, env, n, k), take(model, env, r, k));
        let same = match (x, y) {
            (Some(x), Some(y)) => {
                x == y
                    || model
                        .reclaim_clean(&x.0, p)
                        .is_some_and(|s| normal(model, env, (s, x.1, x.2)) == y)
            }
            (None, None) => true,
            _ => false,
        };
        !same
    });
    differs || step_keys(model, r) != keys
}

/// Observable successors of `n` matching `o` (Read / Reply only). With the
/// mapping `m`, a READ reply must also let its direct read return what the
/// trace recorded (returns.rs).
fn observe(model: &FuseModel, m: Option<&Mapping>, n: &Node, o: &Obs, out: &mut Vec<Node>) {
    let nw = model.cfg.daemon_threads as usize;
    match o {
        Obs::Read(p) => {
            for w in 0..nw {
                let a = Action {
                    actor: Actor::Daemon(w as u8),
                    step: Step::DaemonRead,
                };
                if let Some(s) = model.step(&n.0, a) {
                    if let Worker::Busy { req, payload } = s.workers[w] {
                        if matches(p, &req, &payload) {
                            out.push((s, n.1, n.2));
                        }
                    }
                }
            }
        }
        Obs::Reply(p, data, bytes) => {
            for w in 0..nw {
                if let Worker::Busy { req, payload } = n.0.workers[w] {
                    if !matches(p, &req, &payload) {
                        continue;
                    }
                    let srv_ok = data.iter().all(|(pg, allowed)| {
                        *pg < n.0.srv_size && allowed.contains(&(n.0.srv[*pg as usize] as Id))
                    });
                    if !srv_ok {
                        continue;
                    }
                    let a = Action {
                        actor: Actor::Daemon(w as u8),
                        step: Step::DaemonReply,
                    };
                    if m.is_some_and(|m| !returns::read_reply_ok(m, &n.0, &req, *bytes)) {
                        continue;
                    }
                    if let Some(s) = model.step(&n.0, a) {
                        out.push((s, n.1, n.2 | direct_read_bit(m, &req)));
                    }
                }
            }
        }
        Obs::ReplyErr(p) => {
            for w in 0..nw {
                if let Worker::Busy { req, payload } = n.0.workers[w] {
                    if !matches(p, &req, &payload) {
                        continue;
                    }
                    let a = Action {
                        actor: Actor::Daemon(w as u8),
                        step: Step::DaemonReplyError,
                    };
                    if let Some(s) = model.step(&n.0, a) {
                        out.push((s, n.1, n.2 | direct_read_bit(m, &req)));
                    }
                }
            }
        }
        _ => {}
    }
}

/// What observable events a node offers (for reports).
fn offers(model: &FuseModel, n: &Node, out: &mut Vec<String>) {
    let nw = model.cfg.daemon_threads as usize;
    for w in 0..nw {
        let a = Action {
            actor: Actor::Daemon(w as u8),
            step: Step::DaemonRead,
        };
        if let Some(s) = model.step(&n.0, a) {
            if let Worker::Busy { req, payload } = s.workers[w] {
                out.push(format!("read {req}{}", show_payload(&req, &payload)));
            }
        }
        if let Worker::Busy { req, .. } = n.0.workers[w] {
            out.push(format!("reply to {req}"));
        }
    }
}

fn show_payload(req: &Req, payload: &[u8]) -> String {
    match *req {
        Req::CacheWrite { first, sent: n, .. }
        | Req::DirectWrite { first, n, .. }
        | Req::ThroughWrite { first, n, .. } => format!(
            " payload [{}]",
            (first..first + n)
                .map(|p| match payload[p as usize] {
                    NONE => "-".to_string(),
                    v => format!("v{v}"),
                })
                .collect::<Vec<_>>()
                .join(",")
        ),
        _ => String::new(),
    }
}

/// The most states possible at one event this machine can hold:
/// MemAvailable (read once) over six copies of a state: `closure`'s
/// `seen` (also holding its queue) and `all`, each grown by doubling,
/// and `search`'s copies of the closure (an attack on 5 Dec 2026
/// measured about twice a three-copy estimate: 178 MB at a bound of
/// 20,000 states of 1,432 bytes); unbounded
/// where /proc/meminfo says nothing. A 2 GiB guest of `wbspec vm` had a
/// conform killed by the OOM killer (exit 137) on 4 Dec 2026.
fn memory_bound() -> usize {
    static B: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *B.get_or_init(|| {
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| states_in(&t, std::mem::size_of::<Node>()))
            .unwrap_or(usize::MAX)
    })
}

/// `memory_bound` of a /proc/meminfo text, states of `node` bytes.
pub(super) fn states_in(meminfo: &str, node: usize) -> Option<usize> {
    let kib: usize = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some((kib * 1024 / (6 * node + 64)).max(1000))
}

fn closure(
    model: &FuseModel,
    env: EnvCtx,
    start: Vec<Node>,
    explored: &mut usize,
    bound: usize,
) -> Option<Vec<Node>> {
    let mut seen: HashSet<Node> = HashSet::new();
    let mut q: VecDeque<Node> = VecDeque::new();
    // states that differ only in the ghosts of the properties, which the
    // search does not judge, are one (State::forget_property_ghosts:
    // their behaviours are the same), and so are the forms of an
    // environment's task at rest (`rest`)
    let forget = |n: Node| normal(model, env, n);
    for n in start {
        let n = forget(n);
        if seen.insert(n) {
            q.push_back(n);
        }
    }
    let mut all = vec![];
    let mut buf = vec![];
    while let Some(n) = q.pop_front() {
        *explored += 1;
        // the bound is on the states possible at one event (memory), not
        // on the trace's total (which grows with its length)
        if all.len() >= bound {
            return None;
        }
        buf.clear();
        free_steps(model, env, &n, &mut buf);
        for m in buf.drain(..) {
            let m = forget(m);
            if seen.insert(m) {
                q.push_back(m);
            }
        }
        all.push(n);
    }
    Some(all)
}

fn describe(m: &Mapping, o: &Obs) -> String {
    match o {
        Obs::Call(t) => format!("the start of T{t} {}", m.cfg.tasks[*t]),
        Obs::Ret(t) => format!("the return of T{t} {}", m.cfg.tasks[*t]),
        Obs::Queued(t) => format!("the return of T{t} {}'s io_submit", m.cfg.tasks[*t]),
        Obs::Changed(t) => format!("the server's change of T{t} {}", m.cfg.tasks[*t]),
        Obs::ReadRet(t, d) => format!(
            "the return of T{t} {} with [{}]",
            m.cfg.tasks[*t],
            d.iter()
                .map(|(pg, v)| match v {
                    Some(v) => format!(
                        "p{pg}:{}",
                        v.iter()
                            .map(|x| format!("v{x}"))
                            .collect::<Vec<_>>()
                            .join("|")
                    ),
                    None => format!("p{pg}:-"),
                })
                .collect::<Vec<_>>()
                .join(",")
        ),
        Obs::Read(p) => format!("a daemon read of {p}"),
        Obs::ReplyErr(p) => format!("an -EIO reply to {p}"),
        Obs::Env { on: true, tasks } => format!(
            "a mapping's start: the environment's {} may run",
            env_tasks(m, tasks)
        ),
        Obs::Env { on: false, tasks } => format!(
            "a mapping's end: the environment's {} idle or finished",
            env_tasks(m, tasks)
        ),
        Obs::Reply(p, d, _) if d.is_empty() => format!("a reply to {p}"),
        Obs::Reply(p, d, _) => format!(
            "a reply to {p} returning [{}]",
            d.iter()
                .map(|(pg, v)| format!(
                    "p{pg}:{}",
                    v.iter()
                        .map(|x| format!("v{x}"))
                        .collect::<Vec<_>>()
                        .join("|")
                ))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

fn env_tasks(m: &Mapping, tasks: &[usize]) -> String {
    tasks
        .iter()
        .map(|t| format!("T{t} {}", m.cfg.tasks[*t]))
        .collect::<Vec<_>>()
        .join(", ")
}

fn violation(
    model: &FuseModel,
    m: &Mapping,
    index: usize,
    what: String,
    expected: String,
    cl: &[Node],
) -> Verdict {
    let mut instead = vec![];
    for n in cl {
        offers(model, n, &mut instead);
    }
    instead.sort();
    instead.dedup();
    instead.truncate(8);
    let states = cl
        .iter()
        .rev()
        .take(3)
        .map(|n| {
            let started: Vec<String> = (0..m.cfg.tasks.len())
                .filter(|t| n.1 & (1 << t) != 0)
                .map(|t| {
                    format!(
                        "T{t}{}",
                        if model.task_done(&n.0, t) {
                            "(done)"
                        } else {
                            ""
                        }
                    )
                })
                .collect();
            format!("issued: {}\n{:?}", started.join(" "), n.0)
        })
        .collect();
    Verdict::Violation {
        index,
        what,
        expected,
        states,
        possible: cl.len(),
        instead,
    }
}

/// Per event `i`, the pages the environment's reclaim may take before
/// it: with `m.reclaim`, the pages of every READ at `i` or later; none
/// without. Reclaiming a clean folio sends nothing, and the model state
/// it leaves differs from the one it came from only in that folio. A
/// later step that meets the folio's absence either READs it (a READ
/// the trace must show: its page is in the mask while that READ is
/// ahead), or writes it whole or removes it (truncate, invalidate),
/// leaving the state it leaves with the folio present. So a branch that
/// reclaims a page no later READ reads has no observable behaviour the
/// branch without the reclaim lacks, and the search keeps the frontier
/// from growing with the pages nobody reads again.
pub(super) fn reclaim_masks(m: &Mapping) -> Vec<PageMask> {
    let mut v = vec![0 as PageMask; m.obs.len() + 1];
    if !m.reclaim {
        return v;
    }
    for i in (0..m.obs.len()).rev() {
        let here = match &m.obs[i].obs {
            Obs::Read(Pat::Read { first, n }) => low_mask(*n) << *first,
            _ => 0,
        };
        v[i] = v[i + 1] | here;
    }
    v
}

/// Search the model for a behaviour producing exactly `m.obs`, in the
/// model's `MAX_TASKS` task slots (slots.rs).
pub fn check(m: &Mapping, bound: usize) -> Verdict {
    check_in_slots(m, bound, MODEL_TASKS)
}

/// [`check`] with at most `cap` task slots (tests use fewer, to make a
/// short trace reuse slots).
pub fn check_in_slots(m: &Mapping, bound: usize, cap: usize) -> Verdict {
    search(m, bound, cap, true)
}

/// [`check`] taking the environment's reclaim (`Mapping::reclaim`) as
/// soon as it is possible, not when it can matter ([`reclaim_matters`]):
/// the search that one is tested against.
#[cfg(test)]
pub(super) fn check_reclaiming_eagerly(m: &Mapping, bound: usize) -> Verdict {
    search(m, bound, MODEL_TASKS, false)
}

fn search(m: &Mapping, bound: usize, cap: usize, lazy: bool) -> Verdict {
    // (the closure holds every state possible at one event in `seen`
    // and `all`, with its queue, and the search copies it on: a bound
    // this machine's memory cannot hold would end in the OOM killer,
    // not in an inconclusive verdict)
    let bound = bound.min(memory_bound());
    let (mut sl, n0) = Slots::new(m, cap);
    let reclaim = reclaim_masks(m);
    let mut frontier: Vec<Node> = vec![n0];
    let mut explored = 0usize;
    let mut widest = 0usize;
    for (i, oa) in m.obs.iter().enumerate() {
        if let Obs::Call(t) = oa.obs {
            if let Err(why) = sl.issue(m, t, &mut frontier) {
                return Verdict::Inconclusive {
                    index: i,
                    explored,
                    why: Some(why),
                };
            }
        }
        let (model, lm) = (&sl.model, &sl.local);
        let obs = sl
            .local_obs(&oa.obs)
            .expect("every task of an event was issued before it");
        let mut env = EnvCtx::new(&sl.env, sl.zero_versions(m), m.env_threads, reclaim[i]);
        env.lazy = lazy;
        let Some(cl) = closure(model, env, frontier, &mut explored, bound) else {
            return Verdict::Inconclusive {
                index: i,
                explored,
                why: None,
            };
        };
        widest = widest.max(cl.len());
        let mut next: Vec<Node> = vec![];
        let mut expected = describe(m, &oa.obs);
        match &obs {
            Obs::Call(t) => next.extend(cl.iter().map(|n| (n.0, n.1 | (1 << t), n.2))),
            // the environment's tasks of a new mapping start, idle
            Obs::Env { on: true, tasks } => next.extend(cl.iter().map(|n| {
                let mut x = *n;
                for &t in tasks {
                    x.0.tasks[t] = Task::new();
                    x.1 |= 1 << t;
                }
                x
            })),
            // a mapping ends: its environment's tasks are idle or done,
            // and wait, finished, for the next
            Obs::Env { on: false, tasks } => next.extend(
                cl.iter()
                    .filter(|n| tasks.iter().all(|&t| env_idle(model, &n.0, t)))
                    .map(|n| {
                        let mut x = *n;
                        for &t in tasks {
                            x.0.tasks[t] = parked(model, t);
                            x.1 &= !(1 << t);
                        }
                        x
                    }),
            ),
            // the recorder changed its file before this note: the
            // model's NotifyServerWrite has run
            Obs::Changed(t) => next.extend(
                cl.iter()
                    .filter(|n| model.server_changed(&n.0, *t))
                    .copied(),
            ),
            Obs::Queued(t) => {
                // a queued aio write past AioQueued, a blocking one done
                next.extend(cl.iter().filter(|n| model.returned(&n.0, *t)).copied())
            }
            Obs::Ret(t) => {
                // done, and returning what the trace records (returns.rs)
                let mut why = None;
                for n in cl.iter().filter(|n| model.task_done(&n.0, *t)) {
                    match returns::check_return(lm, *t, &n.0, n.2 & (1 << t) != 0) {
                        Ok(()) => next.push(*n),
                        Err(w) => why = why.or(Some(w)),
                    }
                }
                if let (true, Some(w)) = (next.is_empty(), why) {
                    expected += &format!(" ({w})");
                }
            }
            Obs::ReadRet(t, data) => {
                // done, returning what the trace records: the byte count
                // and the data of every page (returns.rs)
                let mut why = None;
                for n in cl.iter().filter(|n| model.task_done(&n.0, *t)) {
                    if let Err(w) = returns::check_return(lm, *t, &n.0, false) {
                        why = why.or(Some(w));
                        continue;
                    }
                    let data_ok = data.iter().all(|(p, want)| {
                        let got = n.0.tasks[*t].snap[*p as usize];
                        match want {
                            Some(w) => w.contains(&(got as Id)),
                            None => got == NONE,
                        }
                    });
                    if data_ok {
                        next.push(*n);
                    }
                }
                if let (true, Some(w)) = (next.is_empty(), why) {
                    expected += &format!(" ({w})");
                }
            }
            o => {
                for n in &cl {
                    observe(model, Some(lm), n, o, &mut next);
                }
                if let (true, Obs::Reply(Pat::Read { first, n }, _, _)) = (next.is_empty(), o) {
                    // matched but for the read's return value: say so
                    let mut loose = vec![];
                    for nd in &cl {
                        observe(model, None, nd, o, &mut loose);
                    }
                    expected += &returns::explain_read(lm, loose.iter().map(|x| &x.0), *first, *n);
                }
            }
        }
        if next.is_empty() {
            return violation(model, lm, i, oa.what.clone(), expected, &cl);
        }
        if let Obs::Ret(t) | Obs::ReadRet(t, _) = oa.obs {
            sl.returned(t);
        }
        let mut seen = HashSet::new();
        next.retain(|n| seen.insert(*n));
        frontier = next;
    }
    let (model, lm) = (&sl.model, &sl.local);
    let env = EnvCtx::new(&sl.env, sl.zero_versions(m), m.env_threads, 0);
    let Some(cl) = closure(model, env, frontier, &mut explored, bound) else {
        return Verdict::Inconclusive {
            index: m.obs.len(),
            explored,
            why: None,
        };
    };
    if cl.iter().any(|n| model.all_finished(&n.0)) {
        Verdict::Conforms {
            events: m.obs.len(),
            explored,
            widest: widest.max(cl.len()),
        }
    } else {
        violation(
            model,
            lm,
            m.obs.len(),
            "end of trace".into(),
            "a finished state (all tasks returned, nothing queued or in flight) without further observable events".into(),
            &cl,
        )
    }
}
