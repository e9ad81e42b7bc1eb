//! Configuration of the nowait model: kernel state, behaviour switches,
//! mount options, dirty-limit geometry, the environment's budgets and the
//! workload. Everything here is data; the model never branches on a
//! check's name.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Most folios a configuration may touch (the file grows by appends,
/// including the duplicate an iter revert writes).
pub const MAX_PAGES: usize = 8;
/// Most tasks in one workload (data ids are `(t + 1) << 3 | chunk`).
pub const MAX_TASKS: usize = 6;
/// Most folios one write carries.
pub const MAX_CHUNKS: u8 = 4;

/// Kernel states of the io_uring / xfs / iomap NOWAIT buffered write path
/// (docs/kernel-sources.md, model nowait).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kernel {
    /// RFC v1 as posted (seed 004, 26 Apr 2022): need_/do_ split of
    /// remove-privs and update-time, S_PENDING_TIME, async throttling
    /// that records a pause and goes on writing.
    V1,
    /// v7 (1 Jun 2022): file_modified_flags in the VFS, S_PENDING_TIME
    /// ("fs: Optimization for concurrent file time updates"),
    /// balance_dirty_pages_ratelimited_flags(BDP_ASYNC) returning -EAGAIN,
    /// iomap_write_iter keeping its progress.
    V7,
    /// Merged v6.0 – v6.14: no pending flag (NOWAIT + stale times ->
    /// -EAGAIN), BDP_ASYNC (fe6c9c6e3e3e), and 18e419f6e80a: on -EAGAIN
    /// iomap_write_iter reverts the iov_iter by what it wrote in the
    /// current mapping and returns -EAGAIN.
    M60,
    /// v6.15 – v6.19 (6.18.44 here): 1a1a3b574b97 advances the iomap iter
    /// per folio; progress made before an -EAGAIN is returned.
    M615,
    /// v7.0: M615 plus non-blocking timestamp updates (85c871a02b03,
    /// 08489c4f4133): with lazytime, kiocb_modified under IOCB_NOWAIT
    /// updates the in-memory times unless i_version needs a bump.
    N70,
}

impl Kernel {
    pub fn parse(s: &str) -> Option<Kernel> {
        match s {
            "V1" | "RFC" => Some(Kernel::V1),
            "V7" => Some(Kernel::V7),
            "M60" | "6.0" | "6.1" | "6.6" | "6.12" | "6.14" => Some(Kernel::M60),
            "M615" | "6.15" | "6.18" | "6.19" => Some(Kernel::M615),
            "N70" | "7.0" => Some(Kernel::N70),
            _ => None,
        }
    }
}

/// Every switch by name, in `Variant` field order.
pub const VARIANT_FLAGS: &[&str] = &[
    "pending_time",
    "delalloc_nowait_eagain",
    "bdp_async_eagain",
    "iter_revert",
    "nowait_lazytime",
    "p_nowait_iversion_first",
    "mut_cqe_ignores_bytes_done",
    "mut_iolock_shared",
    "mut_nowait_time_then_eagain",
    "mut_iversion_unlogged",
    "mut_nowait_skip_time",
    "mut_pending_never_cleared",
    "mut_cached_privs_check",
    "mut_bdp_skip_nowait",
    "mut_bdp_no_freerun",
    "mut_iolock_leak_on_eagain",
    "fix_append_punt",
];

/// Behaviour switches. A kernel state sets a base; a check may add a
/// proposal or a mutant on top.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Variant {
    /// S_PENDING_TIME (RFC v1 patch 9, v2–v7 "Optimization for concurrent
    /// file time updates"): a NOWAIT write that needs a time update sets
    /// the flag and returns -EAGAIN; a NOWAIT write that finds it set
    /// skips its update; only a blocking update clears it.
    pub pending_time: bool,
    /// RFC v1 patch 6: xfs_buffered_write_iomap_begin returns -EAGAIN
    /// under IOMAP_NOWAIT when the range needs a delalloc reservation (a
    /// write beyond EOF). Dave Chinner: "Why? Delayed allocation doesn't
    /// block..."; dropped in v2.
    pub delalloc_nowait_eagain: bool,
    /// balance_dirty_pages(BDP_ASYNC) returns -EAGAIN where it would sleep
    /// (Jan Kara's design, fe6c9c6e3e3e). Off: RFC v1 patch 15 records the
    /// pause in task_struct and the NOWAIT write goes on.
    pub bdp_async_eagain: bool,
    /// 18e419f6e80a (6.0–6.14): on -EAGAIN iomap_write_iter reverts the
    /// iov_iter by what it wrote in this mapping and returns -EAGAIN,
    /// although those folios are in the page cache and i_size moved.
    pub iter_revert: bool,
    /// 85c871a02b03 + 08489c4f4133 (7.0): with lazytime, a NOWAIT
    /// timestamp update is done in memory; inode_update_cmtime sets ctime
    /// first and returns -EAGAIN if i_version needs a bump.
    pub nowait_lazytime: bool,

    // ---- review proposals
    /// v1 of "re-enable IOCB_NOWAIT writes to files" (14 Nov 2025) in
    /// xfs_vn_update_time: bumps i_version in memory, then -EAGAIN; the
    /// blocking retry takes the lazytime path and never logs the bump
    /// (Dave Chinner, 16 Nov 2025; fixed in v2).
    pub p_nowait_iversion_first: bool,

    // ---- mutants: each breaks one protection (vacuity guards)
    /// io_uring posts the CQE of the last attempt only, forgetting
    /// io->bytes_done (kills io1).
    pub mut_cqe_ignores_bytes_done: bool,
    /// xfs_file_buffered_write takes the IOLOCK shared (kills io2).
    pub mut_iolock_shared: bool,
    /// NOWAIT kiocb_modified updates the times in memory and then returns
    /// -EAGAIN (kills io3).
    pub mut_nowait_time_then_eagain: bool,
    /// A blocking timestamp update bumps i_version without logging it
    /// (kills iv-logged).
    pub mut_iversion_unlogged: bool,
    /// NOWAIT kiocb_modified skips a needed time update (kills io4).
    pub mut_nowait_skip_time: bool,
    /// S_PENDING_TIME is never cleared (kills io5).
    pub mut_pending_never_cleared: bool,
    /// The remove-privs check is made once at submission and its result
    /// reused under the IOLOCK (Dave's check/act split, kills io6).
    pub mut_cached_privs_check: bool,
    /// NOWAIT iomap_write_iter skips balance_dirty_pages (kills io7).
    pub mut_bdp_skip_nowait: bool,
    /// NOWAIT balance_dirty_pages refuses at every ratelimit check, even
    /// under the limit (no freerun pass, which Jan Kara's design keeps):
    /// io_uring writes split wherever they are (kills io2).
    pub mut_bdp_no_freerun: bool,
    /// xfs_file_buffered_write returns -EAGAIN without xfs_iunlock
    /// (kills e).
    pub mut_iolock_leak_on_eagain: bool,

    // ---- fixes wbspec proposes (docs/findings.md)
    /// io2 fix (N1): io_write punts a buffered IOCB_APPEND write to io-wq
    /// before any inline attempt (`goto ret_eagain` next to the
    /// FOP_BUFFER_WASYNC test), so one blocking attempt under the IOLOCK
    /// writes it whole, as before 6.0.
    #[serde(default)]
    pub fix_append_punt: bool,
}

impl Variant {
    pub fn base(k: Kernel) -> Variant {
        let mut v = Variant {
            bdp_async_eagain: k != Kernel::V1,
            ..Variant::default()
        };
        match k {
            Kernel::V1 => {
                v.pending_time = true;
                v.delalloc_nowait_eagain = true;
            }
            Kernel::V7 => v.pending_time = true,
            Kernel::M60 => v.iter_revert = true,
            Kernel::M615 => {}
            Kernel::N70 => v.nowait_lazytime = true,
        }
        v
    }

    fn field(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "pending_time" => &mut self.pending_time,
            "delalloc_nowait_eagain" => &mut self.delalloc_nowait_eagain,
            "bdp_async_eagain" => &mut self.bdp_async_eagain,
            "iter_revert" => &mut self.iter_revert,
            "nowait_lazytime" => &mut self.nowait_lazytime,
            "p_nowait_iversion_first" => &mut self.p_nowait_iversion_first,
            "mut_cqe_ignores_bytes_done" => &mut self.mut_cqe_ignores_bytes_done,
            "mut_iolock_shared" => &mut self.mut_iolock_shared,
            "mut_nowait_time_then_eagain" => &mut self.mut_nowait_time_then_eagain,
            "mut_iversion_unlogged" => &mut self.mut_iversion_unlogged,
            "mut_nowait_skip_time" => &mut self.mut_nowait_skip_time,
            "mut_pending_never_cleared" => &mut self.mut_pending_never_cleared,
            "mut_cached_privs_check" => &mut self.mut_cached_privs_check,
            "mut_bdp_skip_nowait" => &mut self.mut_bdp_skip_nowait,
            "mut_bdp_no_freerun" => &mut self.mut_bdp_no_freerun,
            "mut_iolock_leak_on_eagain" => &mut self.mut_iolock_leak_on_eagain,
            "fix_append_punt" => &mut self.fix_append_punt,
            _ => return None,
        })
    }

    /// Turns on (or, with a leading '!', off) one switch by name.
    pub fn set(&mut self, flag: &str) -> Result<(), String> {
        let (name, on) = match flag.strip_prefix('!') {
            Some(n) => (n, false),
            None => (flag, true),
        };
        let f = self.field(name).ok_or_else(|| {
            format!(
                "unknown variant flag '{name}' (known: {})",
                VARIANT_FLAGS.join(", ")
            )
        })?;
        *f = on;
        Ok(())
    }

    pub fn flags_on(&self) -> Vec<&'static str> {
        let mut c = self.clone();
        VARIANT_FLAGS
            .iter()
            .copied()
            .filter(|n| *c.field(n).expect("every listed flag is a field"))
            .collect()
    }
}

/// One task of the workload. Ranges are in folios.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskSpec {
    /// An io_uring IORING_OP_WRITE on an xfs file (FMODE_BUF_WASYNC):
    /// inline NOWAIT attempt, io-wq retry, CQE. `append`: O_APPEND (the
    /// offset is i_size at each attempt), else at folio `first`.
    Uring { append: bool, first: u8, n: u8 },
    /// write(2) (blocking), O_APPEND or at `first`.
    Write { append: bool, first: u8, n: u8 },
    /// chmod u+s by the owner (notify_change under inode_lock).
    ChmodSuid,
    /// utimes(path, NULL) by the owner: mtime = ctime = now.
    Utimes,
    /// statx with the change cookie (nfsd GETATTR): size, times, i_version
    /// (marks it queried), mode.
    Stat,
    /// The flusher: writes back dirty folios (and another file's).
    Flusher,
}

/// The catalogue's task syntax, one form per task kind (N: folios, F+N:
/// first folio and count). Unknown-task errors list it; `wbspec list
/// --task` matches on the kind, the first word.
pub const SYNTAX: &[&str] = &[
    "uring-append N",
    "uring-write F+N",
    "append N",
    "write F+N",
    "chmod-suid",
    "utimes",
    "stat",
    "flusher",
];

impl TaskSpec {
    /// Parses `uring-append 2`, `uring-write 0+1`, `append 1`,
    /// `write 0+2`, `chmod-suid`, `utimes`, `stat`, `flusher`.
    pub fn parse(s: &str) -> Result<TaskSpec, String> {
        let w: Vec<&str> = s.split_whitespace().collect();
        let num = |x: Option<&&str>| -> Result<u8, String> {
            let x = x.ok_or_else(|| format!("task '{s}': missing folio count"))?;
            x.parse::<u8>()
                .map_err(|_| format!("task '{s}': bad number '{x}'"))
        };
        let range = |x: Option<&&str>| -> Result<(u8, u8), String> {
            let x = x.ok_or_else(|| format!("task '{s}': missing range like 0+2"))?;
            let (a, b) = x.split_once('+').unwrap_or((x, "1"));
            let first = a
                .parse::<u8>()
                .map_err(|_| format!("task '{s}': bad first folio '{a}'"))?;
            let n = b
                .parse::<u8>()
                .map_err(|_| format!("task '{s}': bad folio count '{b}'"))?;
            Ok((first, n))
        };
        let t = match w.first().copied() {
            Some("uring-append") => TaskSpec::Uring {
                append: true,
                first: 0,
                n: num(w.get(1))?,
            },
            Some("uring-write") => {
                let (first, n) = range(w.get(1))?;
                TaskSpec::Uring {
                    append: false,
                    first,
                    n,
                }
            }
            Some("append") => TaskSpec::Write {
                append: true,
                first: 0,
                n: num(w.get(1))?,
            },
            Some("write") => {
                let (first, n) = range(w.get(1))?;
                TaskSpec::Write {
                    append: false,
                    first,
                    n,
                }
            }
            Some("chmod-suid") => TaskSpec::ChmodSuid,
            Some("utimes") => TaskSpec::Utimes,
            Some("stat") => TaskSpec::Stat,
            Some("flusher") => TaskSpec::Flusher,
            _ => return Err(format!("unknown task '{s}' (tasks: {})", SYNTAX.join(", "))),
        };
        let words = match t {
            TaskSpec::Uring { .. } | TaskSpec::Write { .. } => 2,
            _ => 1,
        };
        if w.len() > words {
            return Err(format!("task '{s}': trailing words"));
        }
        if let Some((_, _, n)) = t.write() {
            if n == 0 || n > MAX_CHUNKS {
                return Err(format!(
                    "task '{s}': a write carries 1..={MAX_CHUNKS} folios"
                ));
            }
        }
        Ok(t)
    }

    /// (io_uring?, append?, folios) of a write task.
    pub fn write(&self) -> Option<(bool, bool, u8)> {
        match *self {
            TaskSpec::Uring { append, n, .. } => Some((true, append, n)),
            TaskSpec::Write { append, n, .. } => Some((false, append, n)),
            _ => None,
        }
    }

    /// Short name used in narratives.
    pub fn short(&self) -> &'static str {
        match self {
            TaskSpec::Uring { append: true, .. } => "uring-append",
            TaskSpec::Uring { .. } => "uring-write",
            TaskSpec::Write { append: true, .. } => "append",
            TaskSpec::Write { .. } => "write",
            TaskSpec::ChmodSuid => "chmod u+s",
            TaskSpec::Utimes => "utimes",
            TaskSpec::Stat => "stat",
            TaskSpec::Flusher => "flusher",
        }
    }
}

impl fmt::Display for TaskSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TaskSpec::Uring {
                append: true, n, ..
            } => write!(f, "uring-append {n}"),
            TaskSpec::Uring { first, n, .. } => write!(f, "uring-write {first}+{n}"),
            TaskSpec::Write {
                append: true, n, ..
            } => write!(f, "append {n}"),
            TaskSpec::Write { first, n, .. } => write!(f, "write {first}+{n}"),
            _ => write!(f, "{}", self.short()),
        }
    }
}

/// A complete configuration of the nowait model.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Config {
    pub kernel: Kernel,
    pub variant: Variant,
    /// i_size in folios at the start; those folios are cached, uptodate
    /// and clean, holding the initial data.
    pub init_size: u8,
    /// The lazytime mount option.
    pub lazytime: bool,
    /// S_ISUID set at the start.
    pub suid: bool,
    /// mtime/ctime older than the clock at the start (a NOWAIT write
    /// needs a timestamp update at once).
    pub stale: bool,
    /// Dirty threshold in folios where balance_dirty_pages throttles
    /// (0: no limit modelled).
    pub limit: u8,
    /// Folios a task dirties between balance_dirty_pages calls
    /// (current->nr_dirtied_pause).
    pub ratelimit: u8,
    /// Folios per xfs extent mapping (0: one mapping covers each write).
    pub mapping: u8,
    /// Environment: clock ticks available.
    pub clock_ticks: u8,
    /// Environment: folios another task may hold locked once each (mask).
    pub folio_lock: u8,
    /// Environment: times another task may hold the ILOCK.
    pub ilock: u8,
    /// Environment: folios of another file dirtied once (crossing the
    /// dirty limit for everyone).
    pub dirtier: u8,
    pub tasks: Vec<TaskSpec>,
}

impl Config {
    /// Folios the workload can reach: every positional range, plus each
    /// append, plus the duplicate an io_uring append can write under an
    /// iter revert.
    pub fn pages(&self) -> usize {
        let mut hi = self.init_size as usize;
        let mut app = 0usize;
        for t in &self.tasks {
            match *t {
                TaskSpec::Uring {
                    append: true, n, ..
                } => app += 2 * n as usize - 1,
                TaskSpec::Write {
                    append: true, n, ..
                } => app += n as usize,
                TaskSpec::Uring { first, n, .. } | TaskSpec::Write { first, n, .. } => {
                    hi = hi.max((first + n) as usize)
                }
                _ => {}
            }
        }
        hi + app
    }

    pub fn writers(&self) -> usize {
        self.tasks.iter().filter(|t| t.write().is_some()).count()
    }

    /// Task contexts that dirty folios, each with its own
    /// current->nr_dirtied: a write(2) task, an io_uring submitter and the
    /// io-wq worker that retries its request.
    pub fn dirtying_contexts(&self) -> usize {
        self.tasks
            .iter()
            .map(|t| match t.write() {
                Some((true, _, _)) => 2,
                Some(_) => 1,
                None => 0,
            })
            .sum()
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.tasks.is_empty() || self.tasks.len() > MAX_TASKS {
            return Err(format!("a workload has 1..={MAX_TASKS} tasks"));
        }
        if self.pages() > MAX_PAGES {
            return Err(format!(
                "the workload reaches {} folios; at most {MAX_PAGES}",
                self.pages()
            ));
        }
        let appends = self
            .tasks
            .iter()
            .any(|t| matches!(t.write(), Some((_, true, _))));
        for t in &self.tasks {
            if let TaskSpec::Uring {
                append: false,
                first,
                n,
            }
            | TaskSpec::Write {
                append: false,
                first,
                n,
            } = *t
            {
                if first > self.init_size {
                    return Err(format!(
                        "task '{t}' starts beyond EOF (xfs zeroing is not modelled)"
                    ));
                }
                if appends && first + n > self.init_size {
                    return Err(format!(
                        "task '{t}' extends the file while appends run (io1 compares sizes)"
                    ));
                }
            }
        }
        if self
            .tasks
            .iter()
            .filter(|t| **t == TaskSpec::Flusher)
            .count()
            > 1
        {
            return Err("at most one flusher".into());
        }
        if self.ratelimit == 0 {
            return Err("ratelimit must be at least 1".into());
        }
        if self.limit > 0 && self.dirtier > self.limit {
            return Err(
                "dirtier must not exceed limit (the environment alone stays within it)".into(),
            );
        }
        if self.limit == 0 && self.dirtier > 0 {
            return Err("dirtier needs a limit".into());
        }
        if self.pages() < 8 && self.folio_lock >> self.pages() != 0 {
            return Err("folio_lock names a folio the workload never reaches".into());
        }
        if self.clock_ticks > 3 || self.ilock > 2 || self.dirtier > 4 {
            return Err("environment budgets: clock_ticks <= 3, ilock <= 2, dirtier <= 4".into());
        }
        Ok(())
    }
}

/// The nowait model's keys of a catalogue entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigRaw {
    kernel: String,
    #[serde(default)]
    variant: Vec<String>,
    #[serde(default)]
    init_size: u8,
    #[serde(default)]
    lazytime: bool,
    #[serde(default)]
    suid: bool,
    #[serde(default)]
    stale: bool,
    #[serde(default)]
    limit: u8,
    #[serde(default = "one")]
    ratelimit: u8,
    #[serde(default)]
    mapping: u8,
    #[serde(default)]
    clock_ticks: u8,
    #[serde(default)]
    folio_lock: Vec<u8>,
    #[serde(default)]
    ilock: u8,
    #[serde(default)]
    dirtier: u8,
    tasks: Vec<String>,
}

fn one() -> u8 {
    1
}

impl Config {
    /// Builds a configuration from the nowait keys of a catalogue entry.
    pub fn from_table(table: &toml::Table) -> Result<Config, String> {
        let raw: ConfigRaw = crate::common::from_table(table)?;
        let kernel = Kernel::parse(&raw.kernel).ok_or_else(|| {
            format!(
                "unknown kernel state '{}' (known: V1, V7, M60, M615, N70)",
                raw.kernel
            )
        })?;
        let mut variant = Variant::base(kernel);
        for f in crate::common::variant_flags(&raw.variant)? {
            variant.set(f)?;
        }
        let mut tasks = Vec::new();
        for t in &raw.tasks {
            tasks.push(TaskSpec::parse(t)?);
        }
        let mut folio_lock = 0u8;
        for &p in &raw.folio_lock {
            if p as usize >= MAX_PAGES {
                return Err(format!("folio_lock: folio {p} out of range"));
            }
            folio_lock |= 1 << p;
        }
        let c = Config {
            kernel,
            variant,
            init_size: raw.init_size,
            lazytime: raw.lazytime,
            suid: raw.suid,
            stale: raw.stale,
            limit: raw.limit,
            ratelimit: raw.ratelimit,
            mapping: raw.mapping,
            clock_ticks: raw.clock_ticks,
            folio_lock,
            ilock: raw.ilock,
            dirtier: raw.dirtier,
            tasks,
        };
        c.validate()?;
        Ok(c)
    }
}
