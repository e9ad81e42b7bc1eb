//! Task slots: a trace of any length in the model's `MAX_TASKS` tasks.
//!
//! A trace with at most `MAX_TASKS` modelled syscalls (background
//! writeback passes included) runs as one workload: model task `t` is the
//! trace's task `t` and writes version `t + 2`, and data id `t + 2` is
//! that version. A longer trace runs its syscalls in slots:
//!
//! - A syscall takes a slot when it is issued (its `call` mark), with a
//!   data version that no possible state holds and no other slot writes
//!   (`Config::versions`); its data id means that version from then on.
//!   A syscall that writes no data (`TaskSpec::writes` false: a read,
//!   fsync, close, munmap) takes none (0): the model reads a task's
//!   version only where the task puts data.
//! - A slot is over when its syscall has returned (its `ret` mark is
//!   matched), has finished in every possible state, and nothing in any of
//!   them names it (no request, no lock). An over slot writes nothing more:
//!   its version is released (the data keeps its name as long as a state
//!   holds it), except that a truncation's zeros still held are renamed
//!   `V_ZERO` (`State::rename_version`; the zeros lookup finds zeros by
//!   task, and all zeros are the same bytes), and its ghosts are
//!   forgotten. A new syscall takes an over slot when all are taken.
//! - On reuse, page histories (a ghost only the properties judge, and the
//!   zeros lookup, which compaction keeps) are cut to their zeros and
//!   current data, and the ghosts' version sets to what is still held
//!   (`State::compact_history`); finished background writeback passes
//!   start again (the kernel's flusher runs whenever it likes).
//!
//! The states kept between two events are the states consistent with the
//! trace so far, with names changed in ways no later step can tell: an
//! over task runs no more ops, a new version is one no state holds, and the
//! model compares versions only for equality (rebase.rs in the model). So
//! the verdict is the one the model would give with a slot per syscall,
//! but for restarted background passes (one pass in slots stands for any
//! number of flusher runs: tests_slots.rs), as long as no slot and no
//! version runs out; when one does (more than
//! `MAX_TASKS` syscalls in progress or unreturned at once, more data of
//! over syscalls alive at once than the 13 versions can name), the search
//! stops and says so: inconclusive, not a violation.

use super::*;
use std::collections::HashMap;

use wbspec_models::fuse::config::Whole;
use wbspec_models::fuse::model::version_of;
use wbspec_models::fuse::state::{Task, V_PREDIRTY, V_ZERO};
use wbspec_models::fuse::{FuseModel, TaskSpec};

use super::search::Node;

/// Highest data version a state can hold (`hist` keeps 4-bit slots).
const MAX_VERSION: u8 = 14;

fn zeros_of(spec: &TaskSpec) -> bool {
    matches!(
        spec,
        TaskSpec::Truncate { .. } | TaskSpec::Open { trunc: true, .. } | TaskSpec::Punch { .. }
    )
}

/// Which trace task runs in which model task slot, and which model
/// version each data id has now.
pub(super) struct Slots {
    /// Most slots (`MAX_TASKS`; smaller in tests, to exercise reuse).
    cap: usize,
    /// One slot per trace task (the trace fits: no reuse).
    identity: bool,
    /// Per slot: the trace task it runs.
    task: Vec<usize>,
    /// Per slot: the data version its task writes (`Config::versions`).
    vers: Vec<u8>,
    /// Trace task -> its slot, while it has one.
    slot_of: HashMap<usize, usize>,
    /// Data id -> model version, for data some state may hold.
    ver_of: HashMap<Id, u8>,
    /// Trace tasks whose return has been matched.
    returned: Vec<bool>,
    /// Trace tasks with a return event in the trace.
    has_ret: Vec<bool>,
    /// Slots of the background writeback passes.
    background: Vec<usize>,
    /// Slots of the environment's loads and stores (envmap.rs): like the
    /// background passes, they keep their slots for the whole trace.
    pub env: Vec<usize>,
    /// The model and the mapping restricted to the slots.
    pub model: FuseModel,
    pub local: Mapping,
}

impl Slots {
    /// The slots at the start of the trace, and the initial node.
    pub fn new(m: &Mapping, cap: usize) -> (Slots, Node) {
        let n = m.cfg.tasks.len();
        let bg = m.background.clone();
        let mut has_ret = vec![false; n];
        for o in &m.obs {
            if let Obs::Ret(t) | Obs::ReadRet(t, _) = o.obs {
                has_ret[t] = true;
            }
        }
        let identity = n <= cap;
        let task: Vec<usize> = if identity {
            (0..n).collect()
        } else {
            // the background passes and the environment's tasks first,
            // then syscalls in issue order
            let mut v = bg.clone();
            v.extend(m.env.iter().copied());
            for o in &m.obs {
                if v.len() == cap {
                    break;
                }
                if let Obs::Call(t) = o.obs {
                    if !v.contains(&t) {
                        v.push(t);
                    }
                }
            }
            v
        };
        let mut ver_of = HashMap::new();
        ver_of.insert(ID_ZERO, V_ZERO);
        let mut slot_of = HashMap::new();
        for (s, &t) in task.iter().enumerate() {
            slot_of.insert(t, s);
            ver_of.insert(id_of(t), version_of(s));
        }
        let background = bg.iter().map(|t| slot_of[t]).collect();
        let env: Vec<usize> = m.env.iter().map(|t| slot_of[t]).collect();
        let vers: Vec<u8> = (0..task.len()).map(version_of).collect();
        let (model, local) = Self::build(m, &task, &vers, &ver_of);
        let mut s0 = model.initial();
        // the environment's tasks wait, finished, for a mapping
        for &e in &env {
            s0.tasks[e] = parked(&model, e);
        }
        if !identity {
            // what depends on the whole workload (Config::whole)
            s0.iocachectr = m.cfg.cached_opens() as i8;
            s0.cache_io_mode = m.cfg.cached_opens() > 0;
        }
        let issued = local.background.iter().fold(0u16, |b, s| b | 1 << s);
        let slots = Slots {
            cap,
            identity,
            task,
            vers,
            slot_of,
            ver_of,
            returned: vec![false; n],
            has_ret,
            background,
            env,
            model,
            local,
        };
        (slots, (s0, issued, 0))
    }

    /// The model and the mapping of the tasks in `task` (slot order).
    fn build(
        m: &Mapping,
        task: &[usize],
        vers: &[u8],
        ver_of: &HashMap<Id, u8>,
    ) -> (FuseModel, Mapping) {
        let mut cfg = m.cfg.clone();
        cfg.tasks = task
            .iter()
            .map(|&t| match m.cfg.tasks[t] {
                // a signal names its target by task: its slot here (the
                // target holds one while the signal can act on it)
                TaskSpec::Signal { target, fatal } => TaskSpec::Signal {
                    target: task
                        .iter()
                        .position(|&u| u == target as usize)
                        .map_or(target, |s| s as u8),
                    fatal,
                },
                spec => spec,
            })
            .collect();
        if task.len() != m.cfg.tasks.len() {
            cfg.versions = vers.to_vec();
            cfg.whole = Some(Whole {
                attr_readers: m.cfg.attr_readers(),
                cached_opens: m.cfg.cached_opens(),
            });
            cfg.thread.clear();
        }
        let background = (0..task.len())
            .filter(|s| m.background.contains(&task[*s]))
            .collect();
        let env = (0..task.len())
            .filter(|s| m.env.contains(&task[*s]))
            .collect();
        let local = Mapping {
            scenario: m.scenario.clone(),
            cfg: cfg.clone(),
            obs: vec![],
            regions: m.regions.clone(),
            task_labels: task.iter().map(|&t| m.task_labels[t].clone()).collect(),
            rets: task.iter().map(|&t| m.rets[t]).collect(),
            letters: BTreeMap::new(),
            filtered: BTreeMap::new(),
            cut: None,
            read_data: task
                .iter()
                .enumerate()
                .filter_map(|(s, t)| {
                    m.read_data.get(t).map(|d| {
                        let d = d
                            .iter()
                            .map(|(p, ids)| (*p, versions(ver_of, ids)))
                            .collect();
                        (s, d)
                    })
                })
                .collect(),
            background,
            env,
            env_threads: m.env_threads,
            reclaim: m.reclaim,
        };
        let model = FuseModel::new(cfg).expect("a validated configuration, any length");
        (model, local)
    }

    /// Observation `o` in the slots' terms: slot indices, model versions.
    /// `None`: it names a task that has no slot (cannot happen once
    /// `issue` gave it one).
    pub fn local_obs(&self, o: &Obs) -> Option<Obs> {
        let slot = |t: &usize| self.slot_of.get(t).copied();
        let vs = |ids: &Vec<Id>| versions(&self.ver_of, ids);
        let pat = |p: &Pat| -> Option<Pat> {
            Some(match p {
                Pat::CacheWrite { first, n, payload } => Pat::CacheWrite {
                    first: *first,
                    n: *n,
                    payload: payload.iter().map(vs).collect(),
                },
                Pat::DirectWrite { first, n, payload } => Pat::DirectWrite {
                    first: *first,
                    n: *n,
                    payload: payload.iter().map(vs).collect(),
                },
                Pat::ThroughWrite { first, n, payload } => Pat::ThroughWrite {
                    first: *first,
                    n: *n,
                    payload: payload.iter().map(vs).collect(),
                },
                Pat::Open { task, trunc } => Pat::Open {
                    task: slot(task)?,
                    trunc: *trunc,
                },
                p => p.clone(),
            })
        };
        Some(match o {
            Obs::Call(t) => Obs::Call(slot(t)?),
            Obs::Ret(t) => Obs::Ret(slot(t)?),
            Obs::Queued(t) => Obs::Queued(slot(t)?),
            Obs::Changed(t) => Obs::Changed(slot(t)?),
            Obs::ReadRet(t, d) => Obs::ReadRet(
                slot(t)?,
                d.iter().map(|(p, v)| (*p, v.as_ref().map(vs))).collect(),
            ),
            Obs::Read(p) => Obs::Read(pat(p)?),
            Obs::Reply(p, d, b) => {
                Obs::Reply(pat(p)?, d.iter().map(|(p, v)| (*p, vs(v))).collect(), *b)
            }
            Obs::ReplyErr(p) => Obs::ReplyErr(pat(p)?),
            Obs::Env { on, tasks } => Obs::Env {
                on: *on,
                tasks: tasks.iter().map(slot).collect::<Option<_>>()?,
            },
        })
    }

    /// Trace task `t`'s return was matched.
    pub fn returned(&mut self, t: usize) {
        self.returned[t] = true;
    }

    /// Gives issued trace task `t` a slot, reusing one if all are taken
    /// (module doc), in every node of `frontier`. `Err` names the limit
    /// that stopped it.
    pub fn issue(&mut self, m: &Mapping, t: usize, frontier: &mut Vec<Node>) -> Result<(), String> {
        if self.identity || self.slot_of.contains_key(&t) {
            return Ok(());
        }
        let model = &self.model;
        // Slots whose syscall is over: returned, finished in every state,
        // named by nothing. Such a task writes no more data: its version
        // is released (0: none), after its zeros, if it was a truncation,
        // became `V_ZERO` (the zeros lookup finds zeros by task).
        let over: Vec<usize> = (0..self.task.len())
            .filter(|&s| {
                let g = self.task[s];
                !self.background.contains(&s)
                    && !self.env.contains(&s)
                    && (self.returned[g] || !self.has_ret[g])
                    && frontier
                        .iter()
                        .all(|n| model.task_done(&n.0, s) && !n.0.refers_to_task(s as u8))
            })
            .collect();
        for &x in &over {
            let v = self.vers[x];
            if v == V_ZERO {
                // (a syscall that wrote nothing, or a slot released
                // before: its ghosts go all the same)
                for n in frontier.iter_mut() {
                    n.0.forget_task_ghosts(x);
                }
                continue;
            }
            // (the states' versions are gathered only for a truncation)
            if zeros_of(&m.cfg.tasks[self.task[x]])
                && frontier.iter().any(|n| n.0.versions() & (1 << v) != 0)
            {
                for n in frontier.iter_mut() {
                    n.0.rename_version(v, V_ZERO);
                }
                self.ver_of.insert(id_of(self.task[x]), V_ZERO);
            }
            self.vers[x] = V_ZERO;
            for n in frontier.iter_mut() {
                n.0.forget_task_ghosts(x);
            }
        }
        let free = over.first().copied();
        if free.is_none() && self.task.len() >= self.cap {
            return Err(format!(
                "all {} model task slots hold a syscall in progress, or one whose return is not yet in the trace, or that a request still names",
                self.task.len()
            ));
        }
        if let Some(s) = free {
            self.slot_of.remove(&self.task[s]);
        }
        // the new syscall's version: one no state holds and no slot
        // writes; none (V_ZERO) for a syscall that writes no data (the
        // model reads a task's version only where it puts data:
        // `TaskSpec::writes`)
        let held = frontier.iter().fold(0u16, |b, n| b | n.0.versions());
        let others: Vec<u8> = (0..self.task.len())
            .filter(|&x| Some(x) != free)
            .map(|x| self.vers[x])
            .collect();
        let writes = m.cfg.tasks[t].writes();
        let nv = if writes {
            (2..=MAX_VERSION)
                .find(|r| held & (1 << r) == 0 && !others.contains(r) && *r != V_PREDIRTY)
                .ok_or_else(|| {
                    "no free data version: the data of returned syscalls still in the page cache, on the server or in flight, and the slots' own, take all 13".to_string()
                })?
        } else {
            V_ZERO
        };
        let s = match free {
            Some(s) => {
                self.task[s] = t;
                self.vers[s] = nv;
                s
            }
            None => {
                for n in frontier.iter_mut() {
                    n.0.tasks.push(Task::new());
                }
                self.task.push(t);
                self.vers.push(nv);
                self.task.len() - 1
            }
        };
        self.slot_of.insert(t, s);
        // data ids whose version no state holds any more are gone; an
        // over slot that keeps its trace task (only one slot is reused)
        // released its version, which `nv` may be: its id must not keep
        // it, or a stale tag of its data would match the new syscall's
        let writing: Vec<Id> = (0..self.task.len())
            .filter(|&x| self.vers[x] != V_ZERO)
            .map(|x| id_of(self.task[x]))
            .collect();
        self.ver_of
            .retain(|id, v| *id == ID_ZERO || writing.contains(id) || held & (1 << *v) != 0);
        if writes {
            self.ver_of.insert(id_of(t), nv);
        }
        let (model, local) = Self::build(m, &self.task, &self.vers, &self.ver_of);
        if free.is_some() {
            let cfg_tasks: Vec<TaskSpec> = self.task.iter().map(|&g| m.cfg.tasks[g]).collect();
            let vers = self.vers.clone();
            let is_zero = |x: u8| {
                x == V_ZERO
                    || vers
                        .iter()
                        .position(|&y| y == x)
                        .is_some_and(|k| zeros_of(&cfg_tasks[k]))
            };
            let bg: u16 = self.background.iter().fold(0, |b, s| b | 1 << s);
            for n in frontier.iter_mut() {
                n.0.compact_history(is_zero);
                n.0.tasks[s] = Task::new();
                n.1 &= !(1 << s);
                n.2 &= !(1 << s);
                // finished background passes run again
                for &b in &self.background {
                    if model.task_done(&n.0, b) {
                        n.0.tasks[b] = Task::new();
                    }
                }
                n.1 |= bg;
            }
            let mut seen = std::collections::HashSet::new();
            frontier.retain(|n| seen.insert(*n));
        }
        self.model = model;
        self.local = local;
        Ok(())
    }
}

/// Task `t` of `model` finished and idle: an environment's task outside
/// its mappings (envmap.rs).
pub(super) fn parked(model: &FuseModel, t: usize) -> Task {
    Task {
        pc: model.programs[t].len() as u8,
        ..Task::new()
    }
}

/// The versions of zeros in the slots: `V_ZERO` and those of the
/// truncations (for `State::compact_history` and `State::dedup_history`).
impl Slots {
    pub fn zero_versions(&self, m: &Mapping) -> u16 {
        let mut z = 1u16 << V_ZERO;
        for (s, &t) in self.task.iter().enumerate() {
            if zeros_of(&m.cfg.tasks[t]) {
                z |= 1 << self.vers[s];
            }
        }
        z
    }
}

/// The model versions data ids `ids` have now (ids of data no state holds
/// are left out).
fn versions(ver_of: &HashMap<Id, u8>, ids: &[Id]) -> Vec<Id> {
    let mut v: Vec<Id> = ids
        .iter()
        .filter_map(|id| ver_of.get(id).map(|&x| x as Id))
        .collect();
    v.sort();
    v.dedup();
    v
}
