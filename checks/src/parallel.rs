//! The exhaustive search on several threads (`--threads N`, N > 1): the
//! one-thread DFS of search.rs run by N threads over one shared
//! fingerprint table (fingerprint.rs, `SharedFpSet`), with work sharing.
//!
//! Each thread runs the DFS loop on a stack of its own. A thread that
//! runs out of work says so (`hungry`) and waits on a shared pool; a busy
//! thread that sees a hungry one moves the older half of its stack (the
//! roots of the largest unexplored subtrees) to the pool. The search ends
//! when every thread waits and the pool is empty.
//!
//! A state is expanded by the thread that inserted its fingerprint, once;
//! the set of reachable states does not depend on which thread that is.
//! So the unique and total state counts and every property's hits are
//! those of the one-thread run (checks/tests/parallel.rs compares them on
//! catalogue checks). What varies from run to run is the visiting order,
//! and with it the depth: a DFS's `max_depth` is the deepest point of its
//! stack, a property of its order, so this search does not report one
//! (`Exploration::depth_unknown`; the `States` line says `depth=n/a`).
//!
//! The table does not grow while threads insert. When it reaches its
//! load bound an insert answers `Full`; the thread keeps the successor
//! aside and raises `grow`; threads leave their DFS loop at the next
//! state, the first to take the table exclusively grows it, and each
//! inserts what it kept aside. With a pinned state count the table is
//! sized once and never grows.

use crate::fingerprint::{Fingerprinter, Insert, SharedFpSet};
use crate::search::{Exploration, Options, Stop};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};
use wbspec_models::spec::Spec;

/// Most threads `--threads` accepts.
pub const MAX_THREADS: usize = 1024;

/// The value of `--threads` (None: 1), range checked.
pub fn threads_flag(n: Option<usize>) -> Result<usize, String> {
    match n {
        None => Ok(1),
        Some(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        Some(n) => Err(format!("--threads {n}: give 1 to {MAX_THREADS}")),
    }
}

/// How often (in expanded states) a thread looks at the bounds.
const CLOCK_EVERY: u64 = 4096;

/// Work handed between threads.
struct Pool<S> {
    chunks: Vec<Vec<S>>,
    /// Threads waiting for a chunk.
    idle: usize,
    done: bool,
}

struct Shared<'a, S> {
    table: RwLock<SharedFpSet>,
    pool: Mutex<Pool<S>>,
    wake: Condvar,
    /// Threads waiting for work (read by busy threads at every state).
    hungry: AtomicUsize,
    /// Some thread holds successors the full table refused.
    grow: AtomicBool,
    /// A bound was reached: every thread stops.
    stop: AtomicBool,
    /// Fingerprints stored (exact at the end: threads add their counts
    /// when they stop).
    stored: AtomicUsize,
    threads: usize,
    opt: &'a Options,
    start: Instant,
}

/// What one thread counted.
struct Tally {
    hits: Vec<u64>,
    total: u64,
    /// The bound this thread saw reached.
    stopped: Option<Stop>,
}

/// Exhaustive search of `m` under `opt` with `opt.threads` threads.
pub fn explore<M: Spec>(m: &M, opt: &Options, label: &str, progress: bool) -> Exploration {
    let start = Instant::now();
    let threads = opt.threads.max(1);
    let expected = opt
        .expected
        .unwrap_or(1 << 16)
        .min(opt.limits.max_states.unwrap_or(u64::MAX))
        .min(1 << 32) as usize;
    let mut table = SharedFpSet::with_expected(expected, threads);
    let mut fpr = Fingerprinter::new();
    let mut inits = Vec::new();
    let mut total = 0u64;
    let mut stored = 0usize;
    for s in m.init_states() {
        if !m.within_boundary(&s) {
            continue;
        }
        total += 1;
        let f = key(m, opt, &mut fpr, &s);
        table.grow(stored, 1);
        if table.insert_alone(f) {
            stored += 1;
            inits.push((s, 1u32));
        }
    }
    let sh = Shared {
        table: RwLock::new(table),
        pool: Mutex::new(Pool {
            chunks: vec![inits],
            idle: 0,
            done: false,
        }),
        wake: Condvar::new(),
        hungry: AtomicUsize::new(0),
        grow: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        stored: AtomicUsize::new(stored),
        threads,
        opt,
        start,
    };
    let tallies: Vec<Tally> = std::thread::scope(|sc| {
        let hs: Vec<_> = (1..threads)
            .map(|_| sc.spawn(|| worker(m, &sh, None)))
            .collect();
        let mut v = vec![worker(m, &sh, Some((label, progress)))];
        v.extend(
            hs.into_iter()
                .map(|h| h.join().expect("a search thread panicked")),
        );
        v
    });
    let mut hits = vec![0u64; M::property_defs().len()];
    let mut stop = None;
    for t in &tallies {
        for (a, b) in hits.iter_mut().zip(&t.hits) {
            *a += b;
        }
        total += t.total;
        stop = stop.or(t.stopped);
    }
    // every thread added its count when it left its last loop
    let unique = sh.stored.load(Ordering::Relaxed) as u64;
    let bytes = sh.table.read().map_or(0, |t| t.bytes()) as u64;
    Exploration {
        complete: stop.is_none(),
        stopped: stop,
        unique_states: unique,
        total_states: total,
        max_depth: 0,
        depth_unknown: true,
        hits,
        elapsed: start.elapsed(),
        table_bytes: bytes,
    }
}

/// The fingerprint a state is stored under.
fn key<M: Spec>(m: &M, opt: &Options, fpr: &mut Fingerprinter, s: &M::State) -> u64 {
    if opt.symmetry {
        fpr.of(m, &m.representative(s))
    } else {
        fpr.of(m, s)
    }
}

/// One search thread; `report` (label, on) for the thread that prints
/// progress lines.
fn worker<M: Spec>(m: &M, sh: &Shared<'_, (M::State, u32)>, report: Option<(&str, bool)>) -> Tally {
    let opt = sh.opt;
    let mut t = Tally {
        hits: vec![0; M::property_defs().len()],
        total: 0,
        stopped: None,
    };
    let mut fpr = Fingerprinter::new();
    let mut stack: Vec<(M::State, u32)> = Vec::new();
    let mut aside: Vec<(u64, M::State, u32)> = Vec::new();
    let mut succ: Vec<(M::Action, M::State)> = Vec::new();
    let mut fps: Vec<u64> = Vec::new();
    let mut room = 0usize;
    let mut expanded = 0u64;
    let mut last = sh.start;
    loop {
        if !stack.is_empty() {
            let table = sh.table.read().expect("table lock");
            // fingerprints this thread stored in this loop
            let mut stored = 0usize;
            while let Some((s, depth)) = stack.last() {
                let depth = *depth;
                expanded += 1;
                if expanded.is_multiple_of(CLOCK_EVERY) {
                    if let Some(stop) = bound(opt, sh.start, table.reserved()) {
                        t.stopped = Some(stop);
                        sh.stop.store(true, Ordering::Relaxed);
                    }
                    if let Some((label, true)) = report {
                        if sh.start.elapsed() > Duration::from_secs(2)
                            && last.elapsed() >= Duration::from_secs(5)
                        {
                            eprintln!(
                                "  {label}: about {} unique states, {:.0}s ({} threads)",
                                table.reserved(),
                                sh.start.elapsed().as_secs_f64(),
                                sh.threads
                            );
                            last = Instant::now();
                        }
                    }
                }
                if sh.stop.load(Ordering::Relaxed) || sh.grow.load(Ordering::Relaxed) {
                    break;
                }
                succ.clear();
                m.successors(s, &mut succ);
                succ.retain(|(_, ns)| m.within_boundary(ns));
                t.total += succ.len() as u64;
                fps.clear();
                for (_, ns) in &succ {
                    let f = key(m, opt, &mut fpr, ns);
                    table.prefetch(f);
                    fps.push(f);
                }
                let mut h = m.hits_given(s, &succ);
                while h != 0 {
                    let i = h.trailing_zeros() as usize;
                    t.hits[i] += 1;
                    h &= h - 1;
                }
                stack.pop();
                for (i, &f) in fps.iter().enumerate() {
                    match table.insert(f, &mut room) {
                        Insert::New => {
                            stored += 1;
                            stack.push((succ[i].1.clone(), depth + 1));
                        }
                        Insert::Old => {}
                        Insert::Full => {
                            aside.push((f, succ[i].1.clone(), depth + 1));
                            sh.grow.store(true, Ordering::Relaxed);
                        }
                    }
                }
                if sh.hungry.load(Ordering::Relaxed) > 0 && stack.len() >= 2 {
                    share(sh, &mut stack);
                }
            }
            // counted before the read lock goes: a thread that takes the
            // table to itself sees every other thread's count
            sh.stored.fetch_add(stored, Ordering::Relaxed);
        }
        if sh.stop.load(Ordering::Relaxed) {
            // a stop leaves work undone: the search is incomplete (the
            // thread that saw the bound says which)
            let mut p = sh.pool.lock().expect("pool lock");
            p.done = true;
            sh.wake.notify_all();
            return t;
        }
        if !aside.is_empty() {
            let mut table = sh.table.write().expect("table lock");
            table.grow(sh.stored.load(Ordering::Relaxed), aside.len());
            sh.grow.store(false, Ordering::Relaxed);
            room = 0;
            let mut stored = 0;
            for (f, s, d) in aside.drain(..) {
                if table.insert_alone(f) {
                    stored += 1;
                    stack.push((s, d));
                }
            }
            sh.stored.fetch_add(stored, Ordering::Relaxed);
        } else if sh.grow.load(Ordering::Relaxed) {
            // another thread grows the table: wait for it
            drop(sh.table.write().expect("table lock"));
        }
        if stack.is_empty() {
            match take(sh) {
                Some(c) => stack = c,
                None => return t,
            }
        }
    }
}

/// A bound of `opt` reached after `stored` states (an upper bound).
fn bound(opt: &Options, start: Instant, stored: usize) -> Option<Stop> {
    if let Some(n) = opt.limits.max_states {
        if stored as u64 >= n {
            return Some(Stop::MaxStates(n));
        }
    }
    match opt.limits.max_time {
        Some(t) if start.elapsed() >= t => Some(Stop::MaxTime(t)),
        _ => None,
    }
}

/// Moves the older half of `stack` to the pool for a hungry thread.
fn share<S>(sh: &Shared<'_, S>, stack: &mut Vec<S>) {
    let half: Vec<S> = stack.drain(..stack.len() / 2).collect();
    let mut p = sh.pool.lock().expect("pool lock");
    p.chunks.push(half);
    sh.wake.notify_one();
}

/// Waits for work; None when the search is over (every thread waits and
/// the pool is empty, or a bound stopped it).
fn take<S>(sh: &Shared<'_, S>) -> Option<Vec<S>> {
    let mut p = sh.pool.lock().expect("pool lock");
    loop {
        if p.done {
            return None;
        }
        if let Some(c) = p.chunks.pop() {
            return Some(c);
        }
        if p.idle + 1 == sh.threads {
            p.done = true;
            sh.wake.notify_all();
            return None;
        }
        p.idle += 1;
        sh.hungry.fetch_add(1, Ordering::Relaxed);
        p = sh.wake.wait(p).expect("pool lock");
        p.idle -= 1;
        sh.hungry.fetch_sub(1, Ordering::Relaxed);
    }
}
