//! What every scenario file shares: the [`Scenario`] type and the `sc!`
//! macro that builds one, `wrap` (a body, then the global invariants c1
//! and a1 on its trace), trace helpers (`first`, `briefs`, `tags_by_offset`,
//! `fail`), the held-writeback setup `dirty_and_hold`, the mmap syscalls
//! with marks (`mmap`, `unmap`, `store`) and the shared constants.
//! It imports no scenario file; the table ([`crate::scenarios`]) and the
//! bodies import it. Conventions as in [`crate::scenarios`].
use crate::ctx::Ctx;
use crate::fail::{Fail, Res};
use crate::server::ServerConfig;
use crate::sys::{self, Ret};
use crate::trace::Event;
use crate::trace_query::Tr;

/// Time given to a syscall to reach its wait point.
pub const SETTLE_MS: u64 = 300;
pub(crate) const PG: u64 = 4096;

/// The server configuration of a scenario.
pub type ConfigFn = std::sync::Arc<dyn Fn(&mut ServerConfig) + Send + Sync>;
/// A scenario body (a closure, so generated workloads can carry their seed).
pub type RunFn = std::sync::Arc<dyn Fn(&mut Ctx) -> Res + Send + Sync>;

pub struct Scenario {
    pub name: &'static str,
    pub about: &'static str,
    pub config: ConfigFn,
    pub run: RunFn,
    /// Why this machine cannot run the scenario (beyond root and
    /// /dev/fuse), if it cannot: it is then reported skipped.
    pub needs: fn() -> Option<String>,
    /// Declared outside the model (`conform` expects its trace to be not
    /// modelled, for this reason); `None`: its trace must conform.
    pub outside: Option<Outside>,
    /// Conforms unless the machine evicted clean page-cache folios during
    /// the run (the kernel may, at any time: a later read then READs them
    /// again); with READs in its trace it may instead be not modelled for
    /// this reason (`Scenario::outside_if_evicted`).
    pub if_evicted: Option<Outside>,
    /// The model states (`[[state]]` names of checks/facts/kernels.toml)
    /// whose behaviour the body's kernel checks (`Ctx::expect`) encode:
    /// they are asserted on a kernel that stands for one of these and
    /// recorded as notes on any other. Default: T2 (6.18.3+), the state
    /// the scenarios were written against.
    pub expect_on: &'static [&'static str],
}

/// A scenario whose trace the model cannot express, and why: `conform`
/// judges its trace as expected only when it is not modelled with a
/// reason containing `because` (docs/conformance.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outside {
    /// A part of the not-modelled reason `conform` must give.
    pub because: &'static str,
    /// Why the model cannot express it (printed by `conform --help`).
    pub reason: &'static str,
}

impl Scenario {
    /// Declare the scenario outside the model (see [`Outside`]).
    pub fn outside_model(mut self, because: &'static str, reason: &'static str) -> Scenario {
        self.outside = Some(Outside { because, reason });
        self
    }

    /// Declare the scenario not modelled for this reason when its trace
    /// shows an eviction (see [`Scenario::if_evicted`]).
    pub fn outside_if_evicted(mut self, because: &'static str, reason: &'static str) -> Scenario {
        self.if_evicted = Some(Outside { because, reason });
        self
    }
}

/// Did clean folios leave the page cache during the run? A scenario that
/// declares `if_evicted` reads back only data it cached: a READ whose
/// reply carries data is the eviction's trace. (A READ answered with no
/// bytes is not: 6.1 and 6.12 READ the folio of a failed write-through
/// chunk, past i_size, in a_nowbc_fail2 without any eviction.)
pub fn evicted(events: &[Event]) -> bool {
    let reads: std::collections::HashSet<u64> = events
        .iter()
        .filter(|e| e.ev == "req" && e.op.as_deref() == Some("READ"))
        .filter_map(|e| e.unique)
        .collect();
    events.iter().any(|e| {
        e.ev == "reply"
            && e.unique.is_some_and(|u| reads.contains(&u))
            && e.result
                .as_ref()
                .and_then(|r| r.get("bytes"))
                .and_then(|b| b.as_u64())
                .is_some_and(|b| b > 0)
    })
}

/// The states the scenarios' kernel checks were written against.
pub const WRITTEN_FOR: &[&str] = &["T2"];

impl Scenario {
    /// The kernel checks also hold on these states (see [`Scenario::expect_on`]).
    pub fn expect_on(mut self, states: &'static [&'static str]) -> Scenario {
        self.expect_on = states;
        self
    }
}

pub(crate) fn no_needs() -> Option<String> {
    None
}

macro_rules! sc {
    ($name:expr, $about:expr, $cfg:expr, $run:expr) => {
        sc!($name, $about, $cfg, $run, $crate::scenario_kit::no_needs)
    };
    ($name:expr, $about:expr, $cfg:expr, $run:expr, $needs:expr) => {
        Scenario {
            name: $name,
            about: $about,
            config: std::sync::Arc::new($cfg),
            run: std::sync::Arc::new($run),
            needs: $needs,
            outside: None,
            if_evicted: None,
            expect_on: $crate::scenario_kit::WRITTEN_FOR,
        }
    };
}
pub(crate) use sc;

/// Run a body, then check the global invariants on its trace.
pub(crate) fn wrap(ctx: &mut Ctx, body: impl FnOnce(&mut Ctx) -> Res) -> Res {
    body(ctx)?;
    let t = ctx.trace()?;
    if let Some(v) = invariant_c1(&t) {
        ctx.expect("c1: one page-cache WRITE per byte in flight", false, || v)?;
    }
    if let Some(v) = invariant_a1(&t) {
        ctx.expect(
            "a1: no WRITE[CACHE] in flight with SETATTR(size)",
            false,
            || v,
        )?;
    }
    Ok(())
}

/// Two requests for the same bytes of the same file (inode).
fn overlap(a: &Event, b: &Event) -> bool {
    let (ao, ae) = (a.offset.unwrap_or(0), a.end.unwrap_or(0));
    let (bo, be) = (b.offset.unwrap_or(0), b.end.unwrap_or(0));
    a.nodeid == b.nodeid && ao < be && bo < ae
}

/// (c1) Two overlapping page-cache WRITEs of one inode are never
/// outstanding at once.
pub fn invariant_c1(t: &Tr) -> Option<String> {
    let ws = t.cache_writes();
    for (i, a) in ws.iter().enumerate() {
        let ar = t.reply_seq(a).unwrap_or(u64::MAX);
        for b in &ws[i + 1..] {
            if overlap(a, b) && b.seq < ar {
                return Some(format!(
                    "{} sent before reply of {}",
                    Tr::brief(b),
                    Tr::brief(a)
                ));
            }
        }
    }
    None
}

/// (a1) While SETATTR(size) is outstanding, no page-cache WRITE of the inode is.
pub fn invariant_a1(t: &Tr) -> Option<String> {
    let ws = t.cache_writes();
    for s in t.reqs("SETATTR").into_iter().filter(|s| s.size.is_some()) {
        let sr = t.reply_seq(s).unwrap_or(u64::MAX);
        for w in ws.iter().filter(|w| w.nodeid == s.nodeid) {
            let wr = t.reply_seq(w).unwrap_or(u64::MAX);
            if w.seq < sr && wr > s.seq {
                return Some(format!("{} overlaps {}", Tr::brief(w), Tr::brief(s)));
            }
        }
    }
    None
}

pub(crate) fn fail(check: &str, detail: String) -> Fail {
    Fail {
        check: check.into(),
        detail,
    }
}

pub(crate) fn tags_by_offset(ws: &[&Event]) -> String {
    let mut v: Vec<&&Event> = ws.iter().collect();
    v.sort_by_key(|e| e.offset);
    v.iter()
        .map(|e| e.page_tags.clone().unwrap_or_default())
        .collect()
}

pub(crate) fn briefs(ws: &[&Event]) -> String {
    ws.iter()
        .map(|e| Tr::brief(e))
        .collect::<Vec<_>>()
        .join("; ")
}

/// create f, dirty `tags`, hold the next WRITE[CACHE], start writeback, wait until held.
pub(crate) fn dirty_and_hold(ctx: &mut Ctx, tags: &str) -> Result<i32, Fail> {
    let fd = ctx.create("T0", "f")?;
    // Armed before the write: background writeback may send the page's
    // WRITE as soon as it is dirty (balance_dirty_pages at the end of the
    // write, docs/findings.md M-flusher); that WRITE is then the held one.
    ctx.ctl("hold WRITE n=1 cache=1")?;
    ctx.pwrite("T0", fd, 0, tags)?;
    ctx.sfr("T0", fd)?;
    ctx.wait_held(1, 2000)?;
    Ok(fd)
}

pub(crate) fn first<'a>(v: &[&'a Event], what: &str) -> Result<&'a Event, Fail> {
    v.first()
        .copied()
        .ok_or_else(|| fail(what, "no such request in the trace".into()))
}

pub(crate) fn mmap(ctx: &mut Ctx, fd: i32, len: usize) -> Result<(usize, Ret), Fail> {
    let mut addr = 0;
    let (r, _) = ctx.sys(
        "T0",
        "mmap",
        &format!("fd={fd} len={len} MAP_SHARED"),
        || {
            let (a, r) = sys::mmap_shared(fd, len);
            addr = a;
            r
        },
    )?;
    if addr != 0 {
        ctx.maps.push((addr, len));
    }
    Ok((addr, r))
}

/// munmap with marks; forgets the mapping so it is not unmapped twice.
pub(crate) fn unmap(ctx: &mut Ctx, addr: usize, len: usize) -> Res {
    ctx.maps.retain(|m| m.0 != addr);
    ctx.sys_ok("T0", "munmap", &format!("len={len}"), || {
        sys::munmap(addr, len)
    })?;
    Ok(())
}

pub(crate) fn store(ctx: &mut Ctx, addr: usize, off: usize, b: u8) -> Res {
    ctx.sys_ok("T0", "store", &format!("off={off} {}", b as char), || {
        unsafe { sys::store_byte(addr, off, b) };
        Ret { ret: 0, errno: 0 }
    })?;
    Ok(())
}

pub(crate) const ODIRECT_RW: i32 = libc::O_RDWR | libc::O_DIRECT;
