//! Task slots: a trace of any length in the model's `MAX_TASKS` tasks.
//!
//! A trace with at most `MAX_TASKS` modelled syscalls (background
//! writeback passes included) runs as one workload: model task `t` is the
//! trace's task `t`, and data id `t + 2` is the model's version of it.
//! A longer trace runs its syscalls in slots. A syscall takes a slot when
//! it is issued (its `call` mark); when every slot is taken, a slot whose
//! syscall has returned (its `ret` mark is matched) and that nothing in
//! any possible state refers to any more (no request names it, it holds
//! no lock) is given to the new syscall, in every state at once:
//!
//! - the slot's task restarts at its first op, not yet issued;
//! - the old syscall's data version (the slot's version) is renamed, in
//!   every state, to a version no state holds (`State::rename_version`),
//!   or to `V_ZERO` if it was the zeros of a truncation. Renaming is a
//!   bijection on data identities and the model only compares versions
//!   for equality (rebase.rs in the model), so the states keep their
//!   behaviours;
//! - page histories, a ghost only the properties judge (and the zeros
//!   lookup, which compaction keeps), are cut to their zeros and current
//!   data (`State::compact_history`): properties are not judged here;
//! - background writeback passes that have finished run again from their
//!   first op (the kernel's flusher runs whenever it likes).
//!
//! The states kept between two events are exactly the states consistent
//! with the trace so far, renamed; so the verdict is the one the model
//! would give with as many task slots as syscalls, as long as no slot and
//! no version runs out. When one does (more than `MAX_TASKS` syscalls in
//! progress or unreturned at once, more retired data alive at once than
//! free versions), the search stops and says so: inconclusive, not a
//! violation.

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
            // the background passes first, then syscalls in issue order
            let mut v = bg.clone();
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
        let (model, local) = Self::build(m, &task, &ver_of);
        let mut s0 = model.initial();
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
            slot_of,
            ver_of,
            returned: vec![false; n],
            has_ret,
            background,
            model,
            local,
        };
        (slots, (s0, issued, 0))
    }

    /// The model and the mapping of the tasks in `task` (slot order).
    fn build(m: &Mapping, task: &[usize], ver_of: &HashMap<Id, u8>) -> (FuseModel, Mapping) {
        let mut cfg = m.cfg.clone();
        cfg.tasks = task.iter().map(|&t| m.cfg.tasks[t]).collect();
        if task.len() != m.cfg.tasks.len() {
            cfg.whole = Some(Whole {
                attr_readers: m.cfg.attr_readers(),
                cached_opens: m.cfg.cached_opens(),
            });
            cfg.thread.clear();
        }
        let background = (0..task.len())
            .filter(|s| m.background.contains(&task[*s]))
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
            Obs::ReadRet(t, d) => Obs::ReadRet(
                slot(t)?,
                d.iter().map(|(p, v)| (*p, v.as_ref().map(vs))).collect(),
            ),
            Obs::Read(p) => Obs::Read(pat(p)?),
            Obs::Reply(p, d, b) => {
                Obs::Reply(pat(p)?, d.iter().map(|(p, v)| (*p, vs(v))).collect(), *b)
            }
            Obs::ReplyErr(p) => Obs::ReplyErr(pat(p)?),
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
        let free = (0..self.task.len()).find(|&s| {
            let g = self.task[s];
            !self.background.contains(&s)
                && (self.returned[g] || !self.has_ret[g])
                && frontier
                    .iter()
                    .all(|n| model.task_done(&n.0, s) && !n.0.refers_to_task(s as u8))
        });
        let s = match free {
            Some(s) => s,
            None if self.task.len() < self.cap => {
                // a new slot: a task that has not started, in every node
                for n in frontier.iter_mut() {
                    n.0.tasks.push(Task::new());
                }
                self.task.push(t);
                self.slot_of.insert(t, self.task.len() - 1);
                self.ver_of.insert(id_of(t), version_of(self.task.len() - 1));
                let (model, local) = Self::build(m, &self.task, &self.ver_of);
                self.model = model;
                self.local = local;
                return Ok(());
            }
            None => {
                return Err(format!(
                    "all {} model task slots hold a syscall in progress, or one whose return is not yet in the trace, or that a request still names",
                    self.task.len()
                ))
            }
        };
        let old = self.task[s];
        let v = version_of(s);
        let held = frontier.iter().fold(0u16, |b, n| b | n.0.versions());
        if held & (1 << v) != 0 {
            let to = if zeros_of(&m.cfg.tasks[old]) {
                V_ZERO
            } else {
                let in_use: Vec<u8> = (0..self.cap).map(version_of).collect();
                (2..=MAX_VERSION)
                    .find(|r| held & (1 << r) == 0 && !in_use.contains(r) && *r != V_PREDIRTY)
                    .ok_or_else(|| {
                        "no free data version: more data of returned syscalls is still in the page cache, on the server or in flight than the model's versions can name".to_string()
                    })?
            };
            for n in frontier.iter_mut() {
                n.0.rename_version(v, to);
            }
            self.ver_of.insert(id_of(old), to);
        } else {
            self.ver_of.remove(&id_of(old));
        }
        // data ids whose version no state holds any more are gone
        let held = frontier.iter().fold(0u16, |b, n| b | n.0.versions());
        let slots: Vec<Id> = self.task.iter().map(|&g| id_of(g)).collect();
        self.ver_of
            .retain(|id, v| *id == ID_ZERO || slots.contains(id) || held & (1 << *v) != 0);
        self.slot_of.remove(&old);
        self.task[s] = t;
        self.slot_of.insert(t, s);
        self.ver_of.insert(id_of(t), v);
        let cfg_tasks: Vec<TaskSpec> = self.task.iter().map(|&g| m.cfg.tasks[g]).collect();
        let is_zero =
            |x: u8| x == V_ZERO || (x >= 2 && cfg_tasks.get(x as usize - 2).is_some_and(zeros_of));
        let bg: u16 = self.background.iter().fold(0, |b, s| b | 1 << s);
        let (model, local) = Self::build(m, &self.task, &self.ver_of);
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
        self.model = model;
        self.local = local;
        Ok(())
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
