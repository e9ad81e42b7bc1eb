//! Loads and stores through a recorded program's mappings of the file.
//!
//! A program `wbspec record` traced touches a mapped page with plain
//! loads and stores: no syscall, so no mark. What they do in the kernel
//! is the fault path: a load that misses is filemap_fault (read-around,
//! do_sync_mmap_readahead, then read_folio), a store to a page not
//! mapped writable is filemap_fault if it misses and then
//! fuse_page_mkwrite (folio_lock, folio_wait_writeback, the folio
//! dirtied). The trace sees them only through what later reaches the
//! server: the READs of the faults, and the WRITEs of the dirtied pages.
//!
//! So such accesses are the environment's (issue 21 item 4): while a
//! mapping of real page `p` is live, the search may run, at any point
//! and any number of times, the model's read fault on `p` and, for a
//! writable MAP_SHARED mapping, its store to `p` (the write fault,
//! fuse_page_mkwrite's wait, the store). They are one task per page
//! with no call or ret in the trace: `env` (TaskSpec::EnvAccess, a
//! load then a store; the search may begin it at the store and end it
//! after the load, search.rs) for a page of a writable shared mapping,
//! `fault` (the load alone) for a page only mapped MAP_PRIVATE or
//! read-only. A page mapped both ways at once has both. A task names
//! the open its mappings' fd belongs to, whose readahead state
//! (file->f_ra) its faults share with that open's reads (translate.rs:
//! `fd=F`); a page mapped from two opens names none (`map`). The task is
//! issued when the mapping's mmap returns and restarts whenever it has
//! finished, and it must be idle, between a load and a store, or
//! finished when the last mapping of its page ends (a munmap's call,
//! or the exit of the process that held it). One task per page rather
//! than a load task and a store task costs one of the model's task
//! slots per mapped page, not two; it leaves out a load and a store of
//! the same page in flight at once, which the requests cannot tell
//! apart from one after the other: a second fault on a page waits for
//! the first one's folio (filemap_fault's lock_folio_maybe_drop_mmap)
//! and sends nothing of its own. A store
//! writes its own data version, and any tag on its page may be that
//! data (translate.rs): the trace does not see what the program stored,
//! so a page last written by a store has its data unchecked, while its
//! requests (which pages, when, how many) are checked.
//!
//! Only traces of `wbspec record` (header scenario `record`) get these
//! tasks: a scenario marks its stores (`store` marks, the model's `mmap`
//! task), and letting the environment store there as well would check
//! less than the trace says. Refused (not modelled): a mapping in a
//! trace mapped in units below a page, a mapping of a FOPEN_DIRECT_IO
//! fd, a munmap that ends part of a mapping or a mapping another actor
//! made, mappings ended by an exit of another actor than the one that
//! made them, and an exit holding mappings its actor did not make
//! (inherited across fork: its stores are not the environment's).

use super::raw::*;
use crate::trace::Event;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How many of the environment's tasks may be in an access at once, in
/// a trace whose recorder marked every thread and process it made
/// (`record::THREADS_NOTE`); `None` (any number) in one that did not
/// say so.
///
/// An access is a page fault (a load's read fault, a store's write fault
/// and fuse_page_mkwrite) in the thread that touched the page, and a
/// thread handles one fault at a time, whether in user code or in a
/// syscall's copy to or from user memory. The threads that may touch a
/// mapping are those of the memories holding it: the mapping's maker,
/// the threads and children that share its memory (`thread`, `thread
/// vm`, `fork ... vm` marks: ret is the new tid), and the children with
/// a copy of a memory that made a mapping (`fork`: the copy keeps the
/// parent's MAP_SHARED mappings and may end them unseen, covering them
/// with MAP_FIXED), with theirs. So the bound is the number of distinct
/// tids in those memories over the whole trace: threads that ended,
/// children forked before the mapping was made, or that an exec left,
/// still count (more than the kernel can have at once, never fewer).
/// Threads the recorder cannot see may touch a memory too: io_uring's
/// workers (io_uring_setup), a child made with CLONE_UNTRACED (by a
/// thread of such a memory), and process_vm_readv/writev of any traced
/// thread (`thread untraced=` marks) leave no bound. What the trace
/// cannot show at all, a process outside the recording writing this
/// one's memory (/proc/PID/mem, a debugger), is assumed not to happen.
pub(super) fn env_threads(ev: &[Event]) -> Option<u8> {
    let note = |e: &Event| {
        e.ev == "mark"
            && e.kind.as_deref() == Some("note")
            && e.text.as_deref() == Some(crate::record::THREADS_NOTE)
    };
    if !ev.iter().any(note) {
        return None;
    }
    // union-find over tids: a memory is a set of threads
    let mut up: HashMap<String, String> = HashMap::new();
    fn root(up: &HashMap<String, String>, mut a: String) -> String {
        while let Some(b) = up.get(&a).filter(|b| **b != a) {
            a = b.clone();
        }
        a
    }
    let mut shares: HashMap<String, bool> = HashMap::new();
    let mut tids: BTreeSet<String> = BTreeSet::new();
    let mut mappers: BTreeSet<String> = BTreeSet::new();
    // actors of io_uring_setup or an untraced clone (their memory: no
    // bound)
    let mut uring: BTreeSet<String> = BTreeSet::new();
    // forks that copy the memory: (parent, child)
    let mut copies: HashMap<String, bool> = HashMap::new();
    let mut forks: Vec<(String, String)> = vec![];
    for e in ev.iter().filter(|e| e.ev == "mark") {
        let (Some(a), Some(sc)) = (e.actor.clone(), e.syscall.as_deref()) else {
            continue;
        };
        tids.insert(a.clone());
        match e.kind.as_deref() {
            Some("call") => {
                let args = e.args.as_deref().unwrap_or("");
                match args
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("untraced="))
                {
                    Some("io_uring_setup" | "clone") if sc == "thread" => {
                        uring.insert(a.clone());
                    }
                    // process_vm_*: another memory, which the trace
                    // does not say
                    Some(_) if sc == "thread" => return None,
                    _ => {}
                }
                let vm = (sc == "thread" && !args.contains("untraced="))
                    || (sc == "fork" && args.split_whitespace().any(|w| w == "vm"));
                shares.insert(a.clone(), vm);
                copies.insert(a.clone(), sc == "fork" && !vm);
                if sc == "mmap" {
                    mappers.insert(a);
                }
            }
            Some("ret") if copies.get(&a) == Some(&true) && sc == "fork" => {
                if let Some(child) = e.ret.filter(|r| *r > 0).map(|r| format!("T{r}")) {
                    tids.insert(child.clone());
                    forks.push((a, child));
                }
            }
            Some("ret") if shares.get(&a) == Some(&true) && matches!(sc, "thread" | "fork") => {
                if let Some(child) = e.ret.filter(|r| *r > 0).map(|r| format!("T{r}")) {
                    tids.insert(child.clone());
                    let (ra, rc) = (root(&up, a), root(&up, child));
                    if ra != rc {
                        up.insert(rc, ra);
                    }
                }
            }
            _ => {}
        }
    }
    // a copy of a memory that made a mapping holds it too: its child
    // joins that memory (and may make copies of its own in turn)
    loop {
        let mapping: BTreeSet<String> = mappers.iter().map(|a| root(&up, a.clone())).collect();
        let join = forks.iter().find_map(|(p, c)| {
            let (rp, rc) = (root(&up, p.clone()), root(&up, c.clone()));
            (mapping.contains(&rp) && rp != rc).then_some((rc, rp))
        });
        match join {
            Some((rc, rp)) => {
                up.insert(rc, rp);
            }
            None => break,
        }
    }
    let mapping: BTreeSet<String> = mappers.into_iter().map(|a| root(&up, a)).collect();
    if uring.into_iter().any(|a| mapping.contains(&root(&up, a))) {
        return None;
    }
    let n = tids
        .into_iter()
        .filter(|t| mapping.contains(&root(&up, t.clone())))
        .count();
    Some(n.min(u8::MAX as usize) as u8)
}

/// One live mapping: the actor whose mmap made it, its real pages, and
/// whether it is MAP_SHARED (stores reach the file).
#[derive(Clone, Debug)]
struct Map {
    actor: String,
    first: u64,
    n: u64,
    shared: bool,
}

/// The environment's tasks and the mappings that enable them.
pub(super) struct EnvMaps {
    /// Accesses are not marked (a `wbspec record` trace).
    pub(super) on: bool,
    live: Vec<Map>,
    /// real page -> its `env` task (writable shared mappings) and its
    /// load task (the others), as trace task indices
    access: BTreeMap<u64, usize>,
    load: BTreeMap<u64, usize>,
    /// Opens some page was mapped from along with another open: their
    /// faults on it keep no readahead state (`map`)
    mixed: BTreeSet<usize>,
}

impl EnvMaps {
    pub(super) fn new(on: bool) -> EnvMaps {
        EnvMaps {
            on,
            live: vec![],
            access: BTreeMap::new(),
            load: BTreeMap::new(),
            mixed: BTreeSet::new(),
        }
    }

    /// The environment's tasks enabled by the live mappings, in order.
    fn enabled(&self) -> Vec<usize> {
        let mut v = vec![];
        for m in &self.live {
            for p in m.first..m.first + m.n {
                if m.shared {
                    v.extend(self.access.get(&p));
                }
                if !m.shared {
                    v.extend(self.load.get(&p));
                }
            }
        }
        v.sort();
        v.dedup();
        v
    }

    /// The `mmap` of `actor` returned: real pages `first..first+n`
    /// (MAP_SHARED and writable if `shared`) of open `open` (numbered in
    /// trace order; `None`: not known) are mapped. Creates the pages'
    /// tasks the first time (appended to `tasks`) and returns those it
    /// enables. A task's faults share its open's readahead state
    /// (file->f_ra); a page mapped from two opens keeps one task, whose
    /// open becomes `None`: its faults keep no readahead state, as
    /// before 4 Dec 2026 (a task for each open made fio's mmap job,
    /// which maps its file twice, cost 7-20 times the states and its 16
    /// KiB run more tasks than the model has).
    pub(super) fn map(
        &mut self,
        actor: &str,
        first: u64,
        n: u64,
        shared: bool,
        open: Option<usize>,
        tasks: &mut Vec<(RawTask, String)>,
    ) -> Vec<usize> {
        let before = self.enabled();
        for p in first..first + n {
            let (tab, task) = if shared {
                (&mut self.access, RawTask::EnvAccess { page: p, open })
            } else {
                (&mut self.load, RawTask::EnvLoad { page: p, open })
            };
            match tab.get(&p) {
                Some(&t) => {
                    if let RawTask::EnvAccess { open: o, .. } | RawTask::EnvLoad { open: o, .. } =
                        &mut tasks[t].0
                    {
                        if *o != open {
                            self.mixed.extend(o.iter().chain(open.iter()));
                            *o = None;
                        }
                    }
                }
                None => {
                    tab.insert(p, tasks.len());
                    let what = if shared { "loads and stores" } else { "loads" };
                    tasks.push((task, format!("(environment) {what}, page {p}")));
                }
            }
        }
        self.live.push(Map {
            actor: actor.to_string(),
            first,
            n,
            shared,
        });
        let after = self.enabled();
        after.into_iter().filter(|t| !before.contains(t)).collect()
    }

    /// Changes the live mappings with `f`; returns the tasks no live
    /// mapping enables any more.
    fn without(&mut self, f: impl FnOnce(&mut Vec<Map>)) -> Vec<usize> {
        let before = self.enabled();
        f(&mut self.live);
        let after = self.enabled();
        before.into_iter().filter(|t| !after.contains(t)).collect()
    }

    /// A munmap by `actor` of real pages `first..first+n`: it must end
    /// a whole mapping that actor made (one of them, if it made several
    /// of the same range: a private one if there is one). A mapping of
    /// another actor's may be another
    /// process's copy (inherited across fork, which the marks do not
    /// show): ending it would stop stores the other process still makes.
    pub(super) fn munmap(
        &mut self,
        seq: u64,
        actor: &str,
        first: u64,
        n: u64,
    ) -> Result<Vec<usize>, String> {
        // of several such mappings (the mark names file pages, not
        // addresses), a private one first: the shared ones' stores stay
        // possible, which can only accept more
        let mine = |m: &&Map| m.actor == actor && m.first == first && m.n == n;
        let Some(i) = (self.live.iter().position(|m| mine(&m) && !m.shared))
            .or_else(|| self.live.iter().position(|m| mine(&m)))
        else {
            return nm(format!(
                "#{seq} a munmap by {actor} of pages {first}..{} that is not one whole mapping it made (live: {}): a partial unmap, or an unmap of a mapping inherited across fork or made by another thread, is not modelled",
                first + n,
                self.describe()
            ));
        };
        Ok(self.without(|l| {
            l.remove(i);
        }))
    }

    /// The exit (or exec) of `actor`'s process, which held mappings: it
    /// ends them all. Mappings another actor made may belong to another
    /// process, which the marks do not say: refused.
    pub(super) fn exit(&mut self, seq: u64, actor: &str) -> Result<Vec<usize>, String> {
        if let Some(m) = self.live.iter().find(|m| m.actor != actor) {
            return nm(format!(
                "#{seq} {actor} exits holding a mapping while {} made one: which process held which is not in the trace",
                m.actor
            ));
        }
        // holding a mapping it did not make (one inherited across fork,
        // whose stores after its maker's munmap the environment does not
        // have)
        if !self.live.iter().any(|m| m.actor == actor) {
            return nm(format!(
                "#{seq} {actor} exits holding a mapping it did not make (live: none): one inherited across fork is not modelled"
            ));
        }
        Ok(self.without(Vec::clear))
    }

    /// The end of the trace: every mapping ends.
    pub(super) fn finish(&mut self) -> Vec<usize> {
        self.without(Vec::clear)
    }

    /// The live mappings, for messages.
    fn describe(&self) -> String {
        if self.live.is_empty() {
            return "none".into();
        }
        self.live
            .iter()
            .map(|m| format!("{}..{}", m.first, m.first + m.n))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Why the trace is not modelled when a page mapped from two opens
    /// (whose faults keep no readahead state) belongs to an open whose
    /// state `tasks` also use: a read(2) of it, or a fault of another
    /// page that names it. The kernel's faults on the page set and read
    /// that state; the model's would not, a false VIOLATION (an attack on
    /// 4 Dec 2026: a fault's window, then a pread reaching its mark).
    pub(super) fn mixed_shared(&self, tasks: &[(RawTask, String)]) -> Option<String> {
        let (_, what) = tasks
            .iter()
            .find(|(t, _)| t.ra_open().is_some_and(|o| self.mixed.contains(&o)))?;
        Some(format!("a page mapped from two opens, and {what} uses the readahead state (file->f_ra) of one of them: the page's one task cannot tell which file's state its faults set"))
    }

    /// Are any of the environment's tasks enabled now?
    pub(super) fn active(&self) -> bool {
        !self.live.is_empty()
    }
}
