//! A seeded, reproducible random workload generator (fsx style) for trace
//! conformance: each seed gives one scenario `rand_<seed>` that mixes
//! every modelled syscall (buffered and direct pwrite/pread, O_DIRECT
//! reads, mmap stores, munmap, msync, ftruncate, fsync, fdatasync,
//! sync_file_range, sendfile) over at most 4 pages, on 1 to 3 threads,
//! some steps racing a held reply. Kernel outcomes are not asserted (the
//! safety invariants of every scenario are); the trace must conform to
//! the model, or be reported not modelled with a reason.
//!
//! The same seed gives the same plan (the server configuration and every
//! step); the kernel may still interleave unheld requests differently.
//! A plan keeps within the model's bounds: at most 8 modelled syscalls
//! (closes included), at most 2 requests held at once, stores only below
//! the file size. A long plan (`--length L`, scenario `rand_<seed>_<L>`)
//! has L modelled syscalls, checked in the model's task slots
//! (conform/slots.rs), with fewer held races (3 in 100 steps: each costs
//! two settle waits).

use crate::ctx::{Ctx, Pending};
use crate::fail::Res;
use crate::scenario_kit::{wrap, Scenario, ODIRECT_RW, PG, SETTLE_MS};
use crate::server::ServerConfig;
use crate::sys::{self, Ret};
use std::sync::Arc;

/// splitmix64: small, seedable, reproducible across platforms.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// One syscall of a plan. Pages are 4 KiB pages of the file.
#[derive(Clone, Debug)]
enum Op {
    /// pwrite on the cached fd (letter = its data).
    Write {
        first: u64,
        n: u64,
        letter: u8,
    },
    /// pwrite on the O_DIRECT fd.
    DirectWrite {
        first: u64,
        n: u64,
        letter: u8,
    },
    /// sendfile of `n` pages from a memfd into the cached fd at `first`.
    Sendfile {
        first: u64,
        n: u64,
        letter: u8,
    },
    Read {
        first: u64,
        n: u64,
    },
    DirectRead {
        first: u64,
        n: u64,
    },
    /// A store to a page of the shared mapping.
    Store {
        page: u64,
        letter: u8,
    },
    Msync,
    Truncate {
        size: u64,
    },
    Fsync,
    Fdatasync,
    /// sync_file_range(WRITE); `None`: the whole file.
    SyncRange(Option<(u64, u64)>),
}

#[derive(Clone, Debug)]
enum Step {
    Do(Op),
    /// Hold the next request of `hold`, run `first` on T0 (it sends the
    /// request that is held, or not), then `others` on T1, T2 while it is
    /// held; release everything and wait for them.
    Race {
        hold: &'static str,
        first: Op,
        others: Vec<Op>,
    },
}

#[derive(Clone, Debug)]
struct Plan {
    direct: bool,
    mapped: bool,
    steps: Vec<Step>,
}

const PAGES: u64 = 4;
/// Modelled syscalls a plan may have (the model's MAX_TASKS).
const TASKS: usize = 8;

/// The server configuration of seed `seed`.
pub fn config_of(seed: u64, c: &mut ServerConfig) {
    let mut r = Rng(seed ^ 0xC0FF_EE00);
    match r.below(4) {
        // (fuser sends min(congestion_threshold, max_background): with
        // max_background 1 the threshold is 1, ServerConfig::check)
        0 => {
            c.max_background = 1;
            c.congestion_threshold = 1;
        }
        1 => {
            c.max_background = 2;
            c.congestion_threshold = 2;
        }
        _ => {}
    }
    c.keep_cache = r.chance(20);
    c.atomic_o_trunc = r.chance(30);
    c.dio_on_odirect = !r.chance(30);
}

/// Most modelled syscalls of a long plan (`--length`).
pub const MAX_LENGTH: usize = 100_000;

/// The plan of seed `seed`, of `len` modelled syscalls (`None`: at most
/// the model's tasks, as every seed has always been).
fn plan(seed: u64, len: Option<usize>) -> Plan {
    let mut r = Rng(seed);
    let direct = r.chance(40);
    let mapped = r.chance(40);
    // budget: the O_DIRECT fd's open and close, the cached fd's close,
    // the munmap that ends a mapped plan
    let fixed = 1 + usize::from(direct) * 2 + usize::from(mapped);
    let mut budget = len.unwrap_or(TASKS).saturating_sub(fixed).max(1);
    let race_chance = if len.is_some() { 3 } else { 45 };
    let mut letter = b'A';
    let mut size = 0u64; // pages, as far as every step has run
    let mut steps = vec![];
    let mut next_letter = || {
        let l = letter;
        letter = if letter == b'Z' { b'A' } else { letter + 1 };
        l
    };
    let range = |r: &mut Rng| {
        let first = r.below(PAGES);
        let n = 1 + r.below(PAGES - first);
        (first, n)
    };
    // an op that does not shrink the file, and stores only below `size`
    let op = |r: &mut Rng, size: u64, allow_trunc: bool, l: u8| -> Op {
        loop {
            let o = match r.below(12) {
                0 | 1 => {
                    let (first, n) = range(r);
                    Op::Write {
                        first,
                        n,
                        letter: l,
                    }
                }
                2 if direct => {
                    let (first, n) = range(r);
                    Op::DirectWrite {
                        first,
                        n,
                        letter: l,
                    }
                }
                3 => {
                    let (first, n) = range(r);
                    Op::Read { first, n }
                }
                4 if direct => {
                    let (first, n) = range(r);
                    Op::DirectRead { first, n }
                }
                5 if mapped && size > 0 => Op::Store {
                    page: r.below(size),
                    letter: l,
                },
                6 if mapped => Op::Msync,
                7 if allow_trunc && !mapped => Op::Truncate {
                    size: r.below(PAGES + 1),
                },
                8 => Op::Fsync,
                9 => Op::Fdatasync,
                10 => Op::SyncRange(if r.chance(50) { None } else { Some(range(r)) }),
                11 => {
                    let (first, n) = range(r);
                    Op::Sendfile {
                        first,
                        n,
                        letter: l,
                    }
                }
                _ => continue,
            };
            return o;
        }
    };
    let grow = |size: u64, o: &Op| match *o {
        Op::Write { first, n, .. }
        | Op::DirectWrite { first, n, .. }
        | Op::Sendfile { first, n, .. } => size.max(first + n),
        Op::Truncate { size: s } => s,
        _ => size,
    };
    while budget > 0 {
        if budget >= 2 && r.chance(race_chance) {
            // a race: a held request and one or two concurrent syscalls
            let pick = match r.below(3) {
                1 if len.is_some() => 2,
                k => k,
            };
            let (hold, first) = match pick {
                0 => ("WRITE n=1 cache=1", Op::SyncRange(None)),
                1 => (
                    "READ n=1",
                    Op::Read {
                        first: 0,
                        n: 1 + r.below(PAGES),
                    },
                ),
                _ => ("WRITE n=1 cache=1", Op::Fsync),
            };
            let l0 = next_letter();
            let mut others = vec![op(&mut r, size, false, l0)];
            if budget >= 3 && r.chance(30) {
                let l1 = next_letter();
                others.push(op(&mut r, size, false, l1));
            }
            budget -= 1 + others.len();
            let mut s2 = grow(size, &first);
            for o in &others {
                s2 = grow(s2, o);
            }
            size = s2;
            steps.push(Step::Race {
                hold,
                first,
                others,
            });
        } else {
            let l = next_letter();
            let o = op(&mut r, size, true, l);
            size = grow(size, &o);
            budget -= 1;
            steps.push(Step::Do(o));
        }
    }
    Plan {
        direct,
        mapped,
        steps,
    }
}

/// The scenario of seed `seed` (`len`: a long plan of that many modelled
/// syscalls, named `rand_<seed>_<len>`).
pub fn scenario(seed: u64, len: Option<usize>) -> Scenario {
    let name = match len {
        None => format!("rand_{seed}"),
        Some(l) => format!("rand_{seed}_{l}"),
    };
    let name: &'static str = Box::leak(name.into_boxed_str());
    Scenario {
        name,
        about: "seeded random workload (random.rs)",
        config: Arc::new(move |c: &mut ServerConfig| config_of(seed, c)),
        run: Arc::new(move |ctx: &mut Ctx| wrap(ctx, |c| run(c, seed, len))),
        needs: crate::scenario_kit::no_needs,
        outside: None,
        if_evicted: None,
        expect_on: crate::scenario_kit::WRITTEN_FOR,
    }
}

/// File descriptors and mapping of a running plan.
#[derive(Clone, Copy)]
struct Fds {
    cached: i32,
    direct: i32,
    map: usize,
}

fn run(ctx: &mut Ctx, seed: u64, len: Option<usize>) -> Res {
    let p = plan(seed, len);
    if len.is_some() {
        // (a long plan's steps would make one mark of megabytes)
        ctx.mark(&format!("random seed {seed}: {} steps", p.steps.len()))?;
    } else {
        ctx.mark(&format!("random seed {seed}: {:?}", p.steps))?;
    }
    let cached = ctx.create("T0", "f")?;
    let direct = if p.direct {
        ctx.open("T0", "f", ODIRECT_RW)?
    } else {
        -1
    };
    let mut map = 0;
    if p.mapped {
        let (addr, r) = crate::scenario_kit::mmap(ctx, cached, (PAGES * PG) as usize)?;
        if r.ret < 0 {
            return Err(crate::scenario_kit::fail(
                "mmap succeeds",
                format!("errno {}", r.errno),
            ));
        }
        map = addr;
    }
    let fds = Fds {
        cached,
        direct,
        map,
    };
    for st in &p.steps {
        match st {
            Step::Do(o) => {
                let mut p = start(ctx, "T0", o, fds)?;
                p.join(5000)?;
            }
            Step::Race {
                hold,
                first,
                others,
            } => {
                ctx.ctl(&format!("hold {hold}"))?;
                let mut p0 = start(ctx, "T0", first, fds)?;
                // the request may not come (nothing to write back)
                let _ = ctx.ctl(&format!("wait_held 1 {SETTLE_MS}"));
                let mut ps = vec![];
                for (i, o) in others.iter().enumerate() {
                    ps.push(start(ctx, &format!("T{}", i + 1), o, fds)?);
                }
                ctx.sleep_ms(SETTLE_MS);
                ctx.ctl("unhold all")?;
                ctx.ctl("release all")?;
                p0.join(5000)?;
                for mut p in ps {
                    p.join(5000)?;
                }
            }
        }
    }
    if p.mapped {
        crate::scenario_kit::unmap(ctx, map, (PAGES * PG) as usize)?;
    }
    if p.direct {
        ctx.close("T0", direct)?;
    }
    ctx.close("T0", cached)
}

/// Starts one syscall on its own thread (marks included).
fn start(ctx: &mut Ctx, actor: &str, o: &Op, f: Fds) -> Result<Pending, crate::fail::Fail> {
    let pg = PG as usize;
    match *o {
        Op::Write { first, n, letter } | Op::DirectWrite { first, n, letter } => {
            let fd = if matches!(o, Op::Write { .. }) {
                f.cached
            } else {
                f.direct
            };
            let tags: String = std::iter::repeat_n(letter as char, n as usize).collect();
            let buf = sys::AlignedBuf::pages(&tags);
            ctx.spawn(
                actor,
                "pwrite",
                &format!("fd={fd} off={} {tags}", first * PG),
                move || sys::pwrite(fd, buf.bytes(), first * PG),
            )
        }
        Op::Sendfile { first, n, letter } => {
            let fd = f.cached;
            let tags: String = std::iter::repeat_n(letter as char, n as usize).collect();
            let buf = sys::AlignedBuf::pages(&tags);
            ctx.spawn(
                actor,
                "sendfile",
                &format!("fd={fd} off={} {tags}", first * PG),
                move || {
                    let m = sys::memfd_with(buf.bytes());
                    if m.ret < 0 {
                        return m;
                    }
                    let s = sys::seek(fd, first * PG);
                    let r = if s.ret < 0 {
                        s
                    } else {
                        sys::sendfile(fd, m.ret as i32, n as usize * pg)
                    };
                    sys::close(m.ret as i32);
                    r
                },
            )
        }
        Op::Read { first, n } => ctx.spawn_pread(actor, f.cached, first * PG, n as usize * pg),
        Op::DirectRead { first, n } => {
            ctx.spawn_pread(actor, f.direct, first * PG, n as usize * pg)
        }
        Op::Store { page, letter } => {
            let a = f.map;
            ctx.spawn(
                actor,
                "store",
                &format!("off={} {}", page * PG, letter as char),
                move || {
                    unsafe { sys::store_byte(a, page as usize * pg, letter) };
                    Ret { ret: 0, errno: 0 }
                },
            )
        }
        Op::Msync => {
            let a = f.map;
            ctx.spawn(
                actor,
                "msync",
                &format!("MS_SYNC off=0 len={}", PAGES * PG),
                move || sys::msync(a, PAGES as usize * pg, true),
            )
        }
        Op::Truncate { size } => {
            let fd = f.cached;
            ctx.spawn(
                actor,
                "ftruncate",
                &format!("fd={fd} {}", size * PG),
                move || sys::ftruncate(fd, size * PG),
            )
        }
        Op::Fsync => {
            let fd = f.cached;
            ctx.spawn(actor, "fsync", &format!("fd={fd}"), move || sys::fsync(fd))
        }
        Op::Fdatasync => {
            let fd = f.cached;
            ctx.spawn(actor, "fdatasync", &format!("fd={fd}"), move || {
                sys::fdatasync(fd)
            })
        }
        Op::SyncRange(r) => {
            let fd = f.cached;
            let (a, l) = r.map_or((0, 0), |(a, n)| (a * PG, n * PG));
            ctx.spawn(
                actor,
                "sync_file_range",
                &format!("fd={fd} {a} {l} WRITE"),
                move || sys::sync_file_range_write(fd, a, l),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every seed's server configuration is one the server negotiates as
    /// written (ServerConfig::check: no threshold above max_background),
    /// and the first kind, max_background 1, occurs.
    #[test]
    fn every_seed_config_is_negotiable() {
        let mut bg1 = 0;
        for seed in 0..400 {
            let mut c = ServerConfig::default();
            config_of(seed, &mut c);
            c.check().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            bg1 += usize::from(c.max_background == 1);
        }
        assert!(bg1 > 0);
    }

    /// A plan's modelled syscalls: its steps', and the fixed ones (the
    /// opens, closes and munmap around them).
    fn syscalls(a: &Plan) -> (usize, usize) {
        let ops = a
            .steps
            .iter()
            .map(|s| match s {
                Step::Do(_) => 1,
                Step::Race { others, .. } => 1 + others.len(),
            })
            .sum();
        (ops, 1 + usize::from(a.direct) * 2 + usize::from(a.mapped))
    }

    #[test]
    fn plans_are_reproducible_and_within_the_model() {
        for seed in 0..200 {
            let (a, b) = (plan(seed, None), plan(seed, None));
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "seed {seed}");
            let (ops, fixed) = syscalls(&a);
            assert!(ops + fixed <= TASKS, "seed {seed}: {a:?}");
            for s in &a.steps {
                if let Step::Race { others, .. } = s {
                    assert!(others.len() <= 2, "seed {seed}");
                    assert!(
                        !others.iter().any(|o| matches!(o, Op::Truncate { .. })),
                        "seed {seed}: no truncate races a store"
                    );
                }
            }
        }
        assert_ne!(
            format!("{:?}", plan(1, None)),
            format!("{:?}", plan(2, None))
        );
    }

    #[test]
    fn long_plans_have_their_length_and_three_threads() {
        for seed in 0..20 {
            let a = plan(seed, Some(5000));
            let (ops, fixed) = syscalls(&a);
            assert_eq!(ops + fixed, 5000, "seed {seed}");
            assert!(
                a.steps
                    .iter()
                    .any(|s| matches!(s, Step::Race { others, .. } if others.len() == 2)),
                "seed {seed}: a race of three threads"
            );
        }
    }
}
