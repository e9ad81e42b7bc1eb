//! Translation: a recorded kernel trace onto the model — a `Config` and the
//! sequence of model-observable events (`Obs`). The event scan is in
//! [`super::scan`] (syscalls to tasks, requests to raw observations, in
//! real pages); here: the header, the regions (model pages) and page
//! boundaries, the tasks' data versions and request patterns, the `Config`.

use super::raw::*;
use super::scan::{scan, Grid, Scan, UNALIGNED};
use super::*;
use std::collections::BTreeMap;

use wbspec_models::fuse::{Config, Kernel, TaskSpec, Variant, RA_BYTES};

use crate::trace::Event;

/// What a read returned, per model page: the versions its data may be
/// (`None`: past the bytes returned).
type PagesRead = Vec<(u8, Option<Vec<Id>>)>;

/// The smallest unit a trace is mapped in: a quarter of a 4 KiB page
/// (the model's units_per_page is at most 4).
const MIN_UNIT: u64 = 1024;

/// The model state and variant `release` stands for (fuse model entries
/// of the `[[release]]` table, [`crate::kernels`]).
fn kernel_of(release: &str) -> Option<(Kernel, Variant)> {
    let r = crate::kernels::state_of(release).filter(|r| r.model == "fuse")?;
    let k = Kernel::parse(&r.state)?;
    let mut v = Variant::base(k);
    for f in &r.flags {
        v.set(f).ok()?;
    }
    Some((k, v))
}

/// The releases that have a model state, for messages.
fn known_releases() -> String {
    crate::kernels::releases()
        .iter()
        .map(|r| match r.to {
            Some(t) => format!("{}.{}-{} = {}", r.series, r.from, t, r.label),
            None => format!("{}.y, y>={} = {}", r.series, r.from, r.label),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Map a recorded trace onto the model. `Err` is a malformed trace (an input
/// error); `Ok(NotModelled)` a trace the model cannot express.
pub fn translate(events: &[Event], scenario: Option<&str>) -> Result<Translation, String> {
    translate_split(events, scenario, &std::collections::BTreeSet::new())
}

/// [`translate`] with more position boundaries (4 KiB pages) than the
/// trace names: where the model's readahead windows ended inside a
/// position (conform/mod.rs `conform_file_bounded`, models cuts.rs).
/// Applied to a split in whole pages and to uneven positions (units
/// below a page have none inside a position).
pub fn translate_split(
    events: &[Event],
    scenario: Option<&str>,
    extra: &std::collections::BTreeSet<u64>,
) -> Result<Translation, String> {
    match super::validate::validate(events) {
        Err(super::validate::Invalid::Bad(e)) => return Err(e),
        Err(super::validate::Invalid::NotModelled(why)) => {
            return Ok(Translation::NotModelled(why))
        }
        Ok(()) => {}
    }
    match translate_inner(events, scenario, extra) {
        Ok(m) => Ok(Translation::Modelled(Box::new(m))),
        Err(e) if e.starts_with("bad trace:") => Err(e),
        Err(e) => Ok(Translation::NotModelled(e)),
    }
}

fn translate_inner(
    events: &[Event],
    scenario: Option<&str>,
    extra: &std::collections::BTreeSet<u64>,
) -> Result<Mapping, String> {
    let hdr = events
        .first()
        .filter(|e| e.ev == "header")
        .ok_or("bad trace: first line is not a header")?;
    let name = scenario
        .map(str::to_string)
        .or_else(|| hdr.scenario.clone())
        .unwrap_or_else(|| "?".into());
    let conf = hdr.config.clone().unwrap_or_default();
    let flag = |k: &str, d: bool| conf[k].as_bool().unwrap_or(d);
    let numc = |k: &str, d: u64| conf[k].as_u64().unwrap_or(d);
    let kernel = hdr.kernel.clone().unwrap_or_default();
    let (kstate, kvariant) = match kernel_of(&kernel) {
        Some(k) => k,
        None => {
            return nm(format!(
                "kernel {kernel} has no model state (only {})",
                known_releases()
            ))
        }
    };
    // Without FUSE_WRITEBACK_CACHE write(2) is write-through
    // (fuse_perform_write): a synchronous WRITE without FUSE_WRITE_CACHE.
    let wbc = flag("writeback_cache", true);
    // fc->max_background and fc->congestion_threshold as negotiated (the
    // recorder always sets both): the model's bg queue and congestion.
    // The recorder (fuser 0.18) sends min(congestion_threshold,
    // max_background) in FUSE_INIT; headers written before 2 Dec 2026
    // could state a larger threshold the kernel never got (1 and 8:
    // /sys/fs/fuse/connections/N/congestion_threshold read 1), and the
    // recorder now refuses one (ServerConfig::check), so the min is what
    // every trace's kernel had (docs/conformance.md, Configuration)
    let (bg, cong) = (numc("max_background", 16), numc("congestion_threshold", 12));
    let cong = cong.min(bg);
    let (bg, cong) = (bg.clamp(1, 255) as u8, cong.clamp(1, 255) as u8);
    let keep_cache = flag("keep_cache", false);
    let real_max_pages = (numc("max_write", 1 << 20) / PG).clamp(1, 256);

    // Every request the kernel sent got the next `unique` (fuse_get_unique:
    // steps of FUSE_REQ_ID_STEP = 2; odd ones are interrupts). One the
    // trace does not have was answered by fuser without the server (an
    // opcode fuser does not know, FUSE_INTERRUPT): the trace cannot be
    // checked.
    let mut uniques: Vec<u64> = events
        .iter()
        .filter(|e| e.ev == "req" || e.ev == "init")
        .filter_map(|e| e.unique)
        .filter(|u| u % 2 == 0)
        .collect();
    uniques.sort();
    uniques.dedup();
    // A SIGKILL takes back a request still on the pending list
    // (request_wait_answer: FR_PENDING, list_del, -EINTR): it had its
    // unique (fuse_get_unique when queued) and was never read. One such
    // gap per SIGKILL task is that request, and only where it can be:
    // above the last unique read before the target's pending call began
    // and below the first one read after the kill returned; the search
    // then has to take it back (the model's kill step), as nothing of it
    // was observed.
    let read_before = |seq: u64| {
        events
            .iter()
            .filter(|e| (e.ev == "req" || e.ev == "init") && e.seq < seq)
            .filter_map(|e| e.unique)
            .max()
            .unwrap_or(0)
    };
    let read_after = |seq: u64| {
        events
            .iter()
            .filter(|e| e.ev == "req" && e.seq > seq)
            .filter_map(|e| e.unique)
            .min()
            .unwrap_or(u64::MAX)
    };
    let mark = |e: &&Event, kind: &str| e.ev == "mark" && e.kind.as_deref() == Some(kind);
    // per SIGKILL: the window (lo, hi) of uniques its take-back may have
    let mut kill_windows: Vec<(u64, u64)> = vec![];
    for k in events.iter().filter(|e| {
        mark(e, "call")
            && e.syscall.as_deref() == Some("signal")
            && e.args
                .as_deref()
                .is_some_and(|a| a.split_whitespace().any(|w| w == "SIGKILL"))
    }) {
        let target = k
            .args
            .as_deref()
            .and_then(|a| a.split_whitespace().find_map(|w| w.strip_prefix("target=")));
        let call = events
            .iter()
            .filter(|e| mark(e, "call") && e.seq < k.seq && e.actor.as_deref() == target)
            .map(|e| e.seq)
            .max();
        let ret = events
            .iter()
            .filter(|e| {
                mark(e, "ret")
                    && e.seq > k.seq
                    && e.actor == k.actor
                    && e.syscall.as_deref() == Some("signal")
            })
            .map(|e| e.seq)
            .min();
        if let (Some(c), Some(r)) = (call, ret) {
            kill_windows.push((read_before(c), read_after(r)));
        }
    }
    let taken_back = |w: &&[u64]| {
        let missing = (w[1] - w[0]) / 2 - 1;
        if missing != 1 {
            return true;
        }
        match kill_windows
            .iter()
            .position(|&(lo, hi)| w[0] >= lo && w[1] <= hi)
        {
            Some(i) => {
                kill_windows.remove(i);
                false
            }
            None => true,
        }
    };
    if let Some(w) = uniques
        .windows(2)
        .filter(|w| w[1] - w[0] > 2)
        .find(taken_back)
    {
        return nm(format!(
            "request {} not recorded (the trace jumps from unique {} to {}: fuser answered it without the server, e.g. an opcode it does not know)",
            w[0] + 2,
            w[0],
            w[1]
        ));
    }
    let (
        Scan {
            mut raw,
            tasks,
            filtered,
            max_inflight,
            last_mark_key,
            implicit_flush,
            errors,
            cut,
            through_reqs,
            rets,
            ret_tags,
            aio,
        },
        grid,
    ) = {
        // the largest unit (4 KiB, 2 KiB, 1 KiB) that every offset,
        // length and size is a whole number of; else, in a trace with
        // every payload's digests, uneven positions at the offsets the
        // trace names (layout.rs)
        let mut unit = PG;
        loop {
            match scan(events, wbc, keep_cache, &Grid::Unit(unit)) {
                Err(e) if e.contains(UNALIGNED) && unit > MIN_UNIT => unit /= 2,
                Err(e) if e.contains(UNALIGNED) && flag("segs", false) => {
                    let mut named = scan(events, wbc, keep_cache, &Grid::Bytes)?;
                    let data_end = cut_reads(&mut named.tasks, &named.raw, 1, true);
                    let mut nb = named_bounds(&named.tasks, &named.raw, true);
                    // readahead edges the model found inside a
                    // position (a run of whole pages), when conformance
                    // refines the split
                    let end = nb.iter().copied().max().unwrap_or(0);
                    nb.extend(extra.iter().map(|k| k * PG).filter(|b| *b < end));
                    let g = Grid::Bounds(uneven_grid(nb)?, data_end);
                    break (scan(events, wbc, keep_cache, &g)?, g);
                }
                r => {
                    let mut r = r?;
                    cut_reads(&mut r.tasks, &r.raw, unit, false);
                    break (r, Grid::Unit(unit));
                }
            }
        }
    };
    // units below a page: the model's sub-page units (cfg.sub)
    let unit = match &grid {
        Grid::Unit(u) => *u,
        _ => 1,
    };
    let uneven = match &grid {
        Grid::Bounds(b, _) => Some(b.clone()),
        _ => None,
    };
    let per_page = (PG / unit).min(4) as u8;
    if matches!(grid, Grid::Unit(u) if u < PG) && !flag("unit_tags", false) {
        return nm(format!(
            "offsets or sizes in {} KiB units, and the recorder gives data tags per 4 KiB page only (its header has no unit_tags): the data of each unit is not known",
            unit / 1024
        ));
    }
    // Implicit closes start right after the body's last mark.
    for (k, idx) in implicit_flush {
        if k < last_mark_key {
            return nm("a FLUSH outside any close() before the workload ended");
        }
        raw.push((
            last_mark_key + 1,
            0,
            RawObs::Call(idx),
            "(runner cleanup closes its fds after the last mark)".into(),
        ));
    }
    raw.sort_by_key(|r| r.0);
    if tasks.is_empty() {
        return nm("no modelled syscall in the trace");
    }
    if max_inflight > MODEL_WORKERS {
        return nm(format!("{max_inflight} modelled requests in flight at the server at once; the model has {MODEL_WORKERS} daemon workers"));
    }

    // ---- regions: the coarsest split of the file such that every syscall
    // range, request range and size is whole model pages.
    let mut bounds = named_bounds(&tasks, &raw, false);
    if uneven.is_none() && unit == PG {
        // the page of the PG_readahead mark an environment's fault's
        // read-around leaves (do_sync_mmap_readahead: ra->start = pgoff -
        // ra_pages / 2, size ra_pages, async_size ra_pages / 4; then
        // do_page_cache_ra cuts the window at EOF and
        // page_cache_ra_unbounded marks nr_to_read - async_size, none if
        // fewer pages are read), for every size the file may have at the
        // fault (each write's end and truncation size, and the largest
        // offset named), when it lies inside the file: it starts a
        // position, so that a read or fault reaching it off the expected
        // index sees the kernel's index (the model takes a position's
        // first page; attacks on 4 Dec 2026 found false VIOLATIONs that
        // way, also with the window cut at EOF)
        let end = bounds.last().copied().unwrap_or(0);
        let ra = RA_BYTES as u64 / PG;
        let mut sizes: Vec<u64> = tasks
            .iter()
            .filter_map(|(t, _)| match t {
                RawTask::Write { first, n, .. }
                | RawTask::DioWrite { first, n, .. }
                | RawTask::OdirectWrite { first, n, .. } => Some(first + n),
                RawTask::Truncate { size } => Some(*size),
                _ => None,
            })
            .collect();
        sizes.push(end);
        let mut marks: Vec<u64> = vec![];
        for (t, _) in &tasks {
            if let RawTask::EnvLoad { page, .. } | RawTask::EnvAccess { page, .. } = t {
                let start = page.saturating_sub(ra / 2);
                for &size in &sizes {
                    let nr = ra.min(size.saturating_sub(start));
                    if nr >= ra / 4 {
                        marks.push(start + nr - ra / 4);
                    }
                }
            }
        }
        bounds.extend(marks.into_iter().filter(|m| *m < end));
        // readahead edges the model found inside a position, when
        // conformance refines the split
        bounds.extend(extra.iter().copied().filter(|b| *b < end));
        bounds.sort();
        bounds.dedup();
    }
    if let Some(b) = &uneven {
        // uneven positions: every position is one (uneven_grid)
        bounds = (0..b.len() as u64).collect();
    } else if unit < PG {
        // every model position is one unit: the model derives the page
        // arithmetic from units_per_page; the file is whole pages of units
        let end = bounds.last().copied().unwrap_or(0);
        let units = end.next_multiple_of(per_page as u64);
        if units > MODEL_PAGES as u64 {
            return nm(format!(
                "needs {units} units of {unit} bytes (the trace reaches byte {}, {} pages of {per_page} units); the model has {MODEL_PAGES} units in all",
                end * unit,
                units / per_page as u64
            ));
        }
        bounds = (0..=units).collect();
    }
    let regions: Vec<(u64, u64)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    if regions.is_empty() {
        return nm("the trace touches no page");
    }
    if regions.len() > MODEL_PAGES {
        return nm(format!(
            "needs {} model pages (page boundaries {:?}); the model has {MODEL_PAGES}",
            regions.len(),
            bounds
        ));
    }
    let at = |p: u64| bounds.iter().position(|b| *b == p).expect("boundary") as u8;
    let range = |first: u64, n: u64| (at(first), at(first + n) - at(first));
    // model max_pages: most consecutive model pages whose real pages fit
    // one WRITE (`cap` real pages)
    let fit = |cap: u64| -> u8 {
        let mut k = regions.len() as u8;
        if let Some(b) = &uneven {
            // (kernel pages, as the model counts max_pages with uneven
            // positions)
            let pages = b.last().copied().unwrap_or(0).div_ceil(PG);
            return pages.min(cap).clamp(1, u8::MAX as u64) as u8;
        }
        if unit < PG {
            // (kernel pages: fc->max_pages against the units' pages)
            return (regions.len() as u8 / per_page)
                .min(cap.min(u8::MAX as u64) as u8)
                .max(1);
        }
        while k > 1
            && regions
                .windows(k as usize)
                .any(|w| w.iter().map(|r| r.1 - r.0).sum::<u64>() > cap)
        {
            k -= 1;
        }
        k
    };
    let max_pages = fit(real_max_pages);
    // a readahead READ is capped by the kernel's fc->max_pages, not by
    // max_write: the server (fuser 0.18) sets it from max(max_write,
    // max_readahead), the kernel asking for 128 KiB (VM_READAHEAD_PAGES),
    // so it exceeds max_write's cap when max_write is below 128 KiB
    let fc_read_pages = numc("max_write", 1 << 20)
        .max(128 << 10)
        .div_ceil(PG)
        .clamp(1, 256);
    // and by the max_read mount option (fuse_readahead: min(fc->max_pages,
    // fc->max_read / PAGE_SIZE); the server refuses one below a page)
    let max_read = numc("max_read", 0);
    let real_read_pages = match max_read {
        0 => fc_read_pages,
        b => fc_read_pages.min((b / PG).max(1)),
    };
    let read_cap_name = match real_read_pages < fc_read_pages {
        true => "max_read",
        false => "fc->max_pages",
    };
    let read_max_pages = match fit(real_read_pages) {
        k if k == max_pages => 0,
        k => k,
    };
    // positions of different sizes on a page split: the model counts
    // the kernel pages a writeback WRITE or a readahead READ spans, as
    // it does with uneven positions, since "the most consecutive
    // positions that fit" is stricter than the kernel there (a false
    // VIOLATION, docs/findings.md M-maxpages). Not for write-through
    // (its chunks are mapped in positions, through_max_write) nor for a
    // position of more than 255 pages (real_pages is a u8).
    // A position over a cap counts too: a request of it whole is one
    // the kernel cannot send (the model notes the cap inside it, and
    // conformance splits it there: cuts.rs).
    let kcount = uneven.is_none()
        && unit == PG
        && wbc
        && regions.iter().all(|r| r.1 - r.0 <= 255)
        && (regions
            .iter()
            .map(|r| r.1 - r.0)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            > 1
            || regions
                .iter()
                .any(|r| r.1 - r.0 > real_max_pages.min(real_read_pages)));
    let (max_kpages, read_max_kpages) = match kcount {
        true => (real_max_pages as u16, real_read_pages as u16),
        false => (0, 0),
    };

    let max_write = if let Some(b) = &uneven {
        // uneven positions: a byte limit under the file would end a
        // chunk where no position does (layout.rs refuses it)
        let span = b.last().copied().unwrap_or(0);
        let mw = numc("max_write", 1 << 20);
        if mw < span {
            return nm(format!(
                "uneven positions with max_write {mw} under the file's {span} bytes: chunks are not mapped"
            ));
        }
        None
    } else if unit < PG && !wbc {
        // write-through below a page: fuse_fill_write_pages ends a batch
        // at a folio it wrote in part and that is not uptodate, so the
        // batches depend on the page cache and the search, not a uniform
        // chunk size, decides them; a max_write that could split the
        // file's bytes is not mapped
        let span = regions.len() as u64 * unit;
        let mw = numc("max_write", 1 << 20);
        if !through_reqs.is_empty() && mw < span {
            return nm(format!(
                "write-through below a page with max_write {mw} under the file's {span} bytes: split chunks in units are not mapped"
            ));
        }
        None
    } else {
        through_max_write(&tasks, &through_reqs, range, max_pages, errors != 0)?
    };
    // fuse_direct_io sends a direct write in max_write chunks and a direct
    // read in chunks of fc->max_pages; the model's direct I/O is one
    // request, so a larger one is not mapped. A write's chunk is also cut
    // at fc->max_pages pages of the buffer (`max_pages =
    // iov_iter_npages(iter, fc->max_pages)`, fuse_get_user_pages), which
    // is below max_write when max_write exceeds 1 MiB (fc->max_pages_limit
    // 256). (A buffer not page-aligned spans one page more: the harness's
    // are aligned; a recorded program's may not be.)
    let mw_bytes = numc("max_write", 1 << 20);
    let fc_pages_bytes = real_read_pages * PG;
    for (task, label) in &tasks {
        let (first, n, cap, what) = match task {
            RawTask::DioWrite { first, n, .. } | RawTask::OdirectWrite { first, n, .. } => {
                if mw_bytes <= fc_pages_bytes {
                    (*first, *n, mw_bytes, "max_write")
                } else {
                    (*first, *n, fc_pages_bytes, "fc->max_pages")
                }
            }
            RawTask::DioRead { first, n } | RawTask::OdirectRead { first, n } => {
                (*first, *n, real_read_pages * PG, read_cap_name)
            }
            _ => continue,
        };
        let bytes = grid.at(first + n) - grid.at(first);
        if bytes > cap {
            return nm(format!(
                "[{label}]: a direct I/O of {bytes} bytes above {what} ({cap} bytes): fuse_direct_io splits it, the model sends it as one request"
            ));
        }
    }

    // ---- tasks and data versions
    // an open read more than once, or read and mapped, or mapped over
    // several pages, shares its readahead state (file->f_ra: prev_pos
    // for reads; start, size, async_size for reads and faults) in the
    // model, at most MAX_FDS of them; a read on an open used once is a
    // fresh open's (prev_pos = -1), a fault of a lone mapped page keeps
    // none (read.rs `keeps_ra`). More such opens are not modelled:
    // reading them as fresh opens would offer a random read's window
    // where the kernel takes a sequential miss's, a VIOLATION on a
    // correct kernel (docs/findings.md M-ra-prev-pos, M-ra-async)
    let mut users_of: BTreeMap<usize, usize> = BTreeMap::new();
    for o in tasks.iter().filter_map(|(t, _)| t.ra_open()) {
        *users_of.entry(o).or_default() += 1;
    }
    let shared = users_of.values().filter(|n| **n > 1).count();
    if shared > wbspec_models::fuse::MAX_FDS {
        return nm(format!(
            "{shared} opens read more than once or mapped (the readahead state, file->f_ra, of each is shared); the model keeps {}",
            wbspec_models::fuse::MAX_FDS
        ));
    }
    let read_fd: BTreeMap<usize, u8> = users_of
        .iter()
        .filter(|(_, n)| **n > 1)
        .enumerate()
        .map(|(f, (o, _))| (*o, f as u8))
        .collect();
    let fd_of = |open: &Option<usize>| open.and_then(|o| read_fd.get(&o).copied());
    let mut specs = vec![];
    let mut letters: BTreeMap<(u8, String), Vec<Id>> = BTreeMap::new();
    let mut zero_versions = vec![ID_ZERO];
    // model page -> the data id of the environment's stores to it
    let mut env_data: BTreeMap<u8, Id> = BTreeMap::new();
    // (by characters: a recorded trace's digest tags are not ASCII,
    // scan.rs seg_tags)
    let sub = |tags: &str, first: u64, r: (u64, u64)| -> String {
        let a = (r.0 - first) as usize;
        let b = (r.1 - first) as usize;
        let t: Vec<char> = tags.chars().collect();
        t.get(a..b).map(|s| s.iter().collect()).unwrap_or_default()
    };
    for (i, (t, _)) in tasks.iter().enumerate() {
        let v = id_of(i);
        let mut data = |first: u64, n: u64, tags: &str| {
            let (a, m) = range(first, n);
            for p in a..a + m {
                let s = sub(tags, first, regions[p as usize]);
                let e = letters.entry((p, s)).or_default();
                if !e.contains(&v) {
                    e.push(v);
                }
            }
            (a, m)
        };
        let spec = match t {
            RawTask::Write { first, n, tags } => {
                let (first, n) = data(*first, *n, tags);
                TaskSpec::Write { first, n }
            }
            RawTask::DioWrite { first, n, tags } => {
                let (first, n) = data(*first, *n, tags);
                TaskSpec::DioWrite {
                    first,
                    n,
                    aio: aio.contains(&i),
                }
            }
            RawTask::OdirectWrite { first, n, tags } => {
                let (first, n) = data(*first, *n, tags);
                TaskSpec::OdirectWrite {
                    first,
                    n,
                    aio: aio.contains(&i),
                }
            }
            RawTask::Mmap { page, tag } => {
                let (first, _) = data(*page, 1, tag);
                TaskSpec::Mmap { page: first }
            }
            RawTask::DioRead { first, n } => {
                let (first, n) = range(*first, *n);
                TaskSpec::DioRead {
                    first,
                    n,
                    aio: false,
                }
            }
            RawTask::OdirectRead { first, n } => {
                let (first, n) = range(*first, *n);
                TaskSpec::OdirectRead {
                    first,
                    n,
                    aio: false,
                }
            }
            RawTask::Read {
                first,
                n,
                open,
                random,
            } => {
                let (first, n) = range(*first, *n);
                TaskSpec::Read {
                    first,
                    n,
                    fd: fd_of(open),
                    random: *random,
                }
            }
            RawTask::SyncRange { first, n } => {
                let (first, n) = range(*first, *n);
                TaskSpec::SyncRange { first, n }
            }
            RawTask::Msync { first, n } => {
                let (first, n) = range(*first, *n);
                TaskSpec::Msync { first, n }
            }
            RawTask::Munmap => TaskSpec::Munmap,
            // the environment's accesses through a mapping (envmap.rs):
            // what a store wrote is not in the trace (`allowed` below)
            RawTask::EnvLoad { page, open } => TaskSpec::Fault {
                page: at(*page),
                fd: fd_of(open),
            },
            RawTask::EnvAccess { page, open } => {
                env_data.insert(at(*page), v);
                TaskSpec::EnvAccess {
                    page: at(*page),
                    fd: fd_of(open),
                }
            }
            RawTask::Writeback => TaskSpec::Writeback { all: false },
            RawTask::Truncate { size } => {
                zero_versions.push(v);
                TaskSpec::Truncate { size: at(*size) }
            }
            RawTask::Fsync => TaskSpec::Fsync,
            RawTask::Close => TaskSpec::Close,
            RawTask::CloseRelease => TaskSpec::CloseRelease,
            RawTask::Abort => TaskSpec::Abort,
            // the server's change writes the task's version
            RawTask::NotifyInval {
                first,
                n,
                tags,
                form,
            } => {
                let (first, n) = data(*first, *n, tags);
                TaskSpec::NotifyInval {
                    first,
                    n,
                    form: *form,
                }
            }
            RawTask::Signal { target, fatal } => {
                if tasks.len() > MODEL_TASKS {
                    return nm(format!("a signal in a trace of {} syscalls: the model's task slots ({MODEL_TASKS}) would renumber its target", tasks.len()));
                }
                TaskSpec::Signal {
                    target: *target as u8,
                    fatal: *fatal,
                }
            }
            RawTask::Open { trunc, direct } => {
                if *trunc {
                    // the truncation writes zeros "by" the open task
                    zero_versions.push(v);
                }
                TaskSpec::Open {
                    trunc: *trunc,
                    keep_cache,
                    direct: *direct,
                }
            }
        };
        specs.push(spec);
    }
    let allowed = |p: u8, s: &str| -> Vec<Id> {
        let mut wrote = letters
            .get(&(p, s.to_string()))
            .cloned()
            .unwrap_or_default();
        // the environment's stores: data the trace does not see, so any
        // tag (envmap.rs)
        if let Some(&v) = env_data.get(&p) {
            if !s.is_empty() && !wrote.contains(&v) {
                wrote.push(v);
            }
        }
        if !s.is_empty() && s.chars().all(|c| c == '.') {
            // zeros: never written, a truncation's, or a write of zeros
            // (a program's buffer with a zero unit or page)
            let mut v = zero_versions.clone();
            for w in wrote {
                if !v.contains(&w) {
                    v.push(w);
                }
            }
            v
        } else {
            wrote
        }
    };
    let payload = |first: u64, n: u64, tags: &str| -> Vec<Vec<Id>> {
        let (a, m) = range(first, n);
        (a..a + m)
            .map(|p| allowed(p, &sub(tags, first, regions[p as usize])))
            .collect()
    };
    let pat = |r: &RawReq| -> Pat {
        match r {
            RawReq::CacheWrite { first, n, tags }
            | RawReq::DirectWrite { first, n, tags }
            | RawReq::ThroughWrite { first, n, tags } => {
                let (f, m) = range(*first, *n);
                let payload = payload(*first, *n, tags);
                match r {
                    RawReq::CacheWrite { .. } => Pat::CacheWrite {
                        first: f,
                        n: m,
                        payload,
                    },
                    RawReq::DirectWrite { .. } => Pat::DirectWrite {
                        first: f,
                        n: m,
                        payload,
                    },
                    _ => Pat::ThroughWrite {
                        first: f,
                        n: m,
                        payload,
                    },
                }
            }
            RawReq::Read { first, n } => {
                let (f, m) = range(*first, *n);
                Pat::Read { first: f, n: m }
            }
            RawReq::Setattr { size } => Pat::Setattr { size: at(*size) },
            RawReq::Fsync => Pat::Fsync,
            RawReq::Flush => Pat::Flush,
            RawReq::Open { task, trunc } => Pat::Open {
                task: *task,
                trunc: *trunc,
            },
        }
    };
    // What a read returned, per model page of its range: those within the
    // bytes returned must hold data whose tags match, the rest nothing (a
    // short read).
    // (`whole`: a count ending inside a model page is not modelled; a
    // direct read's count is checked by value at its READ reply instead)
    let read_chk = |seq: u64,
                    first: u64,
                    bytes: u64,
                    data: Option<&str>,
                    (mf, mn): (u8, u8),
                    whole: bool|
     -> Result<PagesRead, String> {
        let end = if uneven.is_some() {
            let e = grid.at(first) + bytes;
            grid.index(e, "").or_else(|_| {
                nm(format!(
                    "#{seq} a read returned {bytes} bytes, ending at byte {e} inside a position: a short read not at the file's end (a fault in the buffer?), which the model does not have"
                ))
            })?
        } else {
            if unit < PG && !bytes.is_multiple_of(unit) {
                return nm(format!(
                    "#{seq} a read returned {bytes} bytes, not whole units of {unit} bytes"
                ));
            }
            first + bytes.div_ceil(unit)
        };
        let mut chk = vec![];
        for p in mf..mf + mn {
            let reg = regions[p as usize];
            if reg.1 <= end {
                if let Some(tags) = data {
                    chk.push((p, Some(allowed(p, &sub(tags, first, reg)))));
                }
            } else if reg.0 >= end {
                chk.push((p, None));
            } else if whole {
                return nm(format!("#{seq} a short read ends inside model page {p}"));
            }
        }
        Ok(chk)
    };
    // A direct read returns what its READ reply carried: the data it
    // returned is checked against the server's pages when the model's
    // READ is answered (returns.rs).
    let mut read_data = BTreeMap::new();
    for (t, spec) in specs.iter().enumerate() {
        if let TaskSpec::DioRead {
            first: mf, n: mn, ..
        }
        | TaskSpec::OdirectRead {
            first: mf, n: mn, ..
        } = *spec
        {
            let Some(&got) = rets.get(&t).filter(|r| **r > 0) else {
                continue;
            };
            let tags = ret_tags.get(&t).map(String::as_str);
            let chk = read_chk(0, regions[mf as usize].0, got as u64, tags, (mf, mn), false)?;
            read_data.insert(
                t,
                chk.into_iter()
                    .filter_map(|(p, v)| v.map(|v| (p, v)))
                    .collect::<Vec<_>>(),
            );
        }
    }
    let mut obs = vec![];
    for (_, seq, o, what) in &raw {
        let o = match o {
            RawObs::Call(t) => Obs::Call(*t),
            RawObs::Ret(t) => Obs::Ret(*t),
            RawObs::Queued(t) => Obs::Queued(*t),
            RawObs::Changed(t) => Obs::Changed(*t),
            RawObs::ReadRet(t, first, bytes, data) => {
                let TaskSpec::Read {
                    first: mf, n: mn, ..
                } = specs[*t]
                else {
                    unreachable!("a ReadRet is a read task's")
                };
                Obs::ReadRet(
                    *t,
                    read_chk(*seq, *first, *bytes, data.as_deref(), (mf, mn), true)?,
                )
            }
            RawObs::Read(r) => Obs::Read(pat(r)),
            RawObs::Reply(r, data, bytes) => {
                let mut chk = vec![];
                if let (RawReq::Read { first, n }, Some(tags)) = (r, data) {
                    let (a, m) = range(*first, *n);
                    for p in a..a + m {
                        let reg = regions[p as usize];
                        if (reg.1 - first) as usize <= tags.chars().count() {
                            chk.push((p, allowed(p, &sub(tags, *first, reg))));
                        }
                    }
                }
                let bytes = match r {
                    RawReq::Read { .. } => *bytes,
                    _ => None,
                };
                Obs::Reply(pat(r), chk, bytes)
            }
            RawObs::ReplyErr(r) => Obs::ReplyErr(pat(r)),
            RawObs::Env { on, tasks } => Obs::Env {
                on: *on,
                tasks: tasks.clone(),
            },
        };
        obs.push(ObsAt {
            obs: o,
            seq: *seq,
            what: what.clone(),
        });
    }
    let cfg = Config {
        kernel: kstate,
        tree: None,
        variant: kvariant,
        pages: regions.len() as u8,
        init_size: 0,
        cached: 0,
        dirty: 0,
        daemon_threads: max_inflight.max(1) as u8,
        direct_io_allow_mmap: flag("direct_io_allow_mmap", false),
        parallel_dio: flag("parallel_dio", false),
        atomic_o_trunc: flag("atomic_o_trunc", false),
        folio_blocks: 1,
        writeback_cache: wbc,
        // the recording server does not ask for FUSE_AUTO_INVAL_DATA
        auto_inval_data: false,
        attr_valid: false,
        max_pages,
        read_max_pages,
        max_kpages,
        read_max_kpages,
        tasks: specs,
        thread: Vec::new(),
        whole: None,
        versions: Vec::new(),
        max_background: Some(bg),
        congestion_threshold: Some(cong),
        async_dio: flag("async_dio", false),
        uring_queues: 0,
        real_pages: {
            let mut rp = [1u8; MODEL_PAGES];
            // (uneven positions carry their bytes in unit_bytes)
            for (i, r) in regions.iter().enumerate().filter(|_| uneven.is_none()) {
                // (the readahead arithmetic saturates far below 255)
                rp[i] = (r.1 - r.0).min(255) as u8;
            }
            rp
        },
        memcg_v1: false,
        reclaim_env: Default::default(),
        folio_pages: 1,
        blocks_per_page: 1,
        max_read: None,
        max_write,
        errors,
        short: 0,
        sub: wbspec_models::fuse::config::SubPage {
            units_per_page: if uneven.is_some() { 1 } else { per_page },
            unit_bytes: {
                let mut ub = [0u32; MODEL_PAGES];
                if let Some(b) = &uneven {
                    for (i, w) in b.windows(2).enumerate() {
                        ub[i] = (w[1] - w[0]).min(u32::MAX as u64) as u32;
                    }
                }
                ub
            },
            ..Default::default()
        },
        drop: Vec::new(),
    };
    // (any number of tasks: the search runs them in the model's task
    // slots, search.rs)
    cfg.validate_any_length()
        .map_err(|e| format!("model configuration: {e}"))?;
    let tasks_env: Vec<usize> = tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| matches!(t.0, RawTask::EnvLoad { .. } | RawTask::EnvAccess { .. }))
        .map(|(i, _)| i)
        .collect();
    // the environment's tasks hold a task slot each for the whole trace
    // (slots.rs): the syscalls need at least one more
    if tasks_env.len() >= super::MODEL_TASKS {
        return Err(format!(
            "{} environment tasks (one per mapped position loaded or stored through): the model has {} task slots, and the syscalls need one",
            tasks_env.len(),
            super::MODEL_TASKS
        ));
    }
    Ok(Mapping {
        scenario: name,
        cfg,
        obs,
        rets: (0..tasks.len()).map(|t| rets.get(&t).copied()).collect(),
        regions,
        task_labels: tasks.into_iter().map(|t| t.1).collect(),
        letters,
        filtered,
        cut,
        read_data,
        background: vec![],
        env: tasks_env,
        env_threads: super::envmap::env_threads(events),
        reclaim: false,
    })
}

/// The model's max_write (model pages) under which its write-through
/// tasks send exactly the recorded WRITEs (fuse_perform_write's loop:
/// chunks of min(max_write, max_pages) pages, ended by a failed chunk).
/// `None` when no write(2) was split. Not modelled when the chunks are
/// not a uniform model max_write, or when that max_write would split a
/// direct write the model then could not match.
fn through_max_write(
    tasks: &[(RawTask, String)],
    reqs: &[(Option<usize>, u64, u64, u64)],
    range: impl Fn(u64, u64) -> (u8, u8),
    max_pages: u8,
    errors: bool,
) -> Result<Option<u8>, String> {
    let mut per_task: BTreeMap<usize, Vec<(u8, u8, u64)>> = BTreeMap::new();
    for &(t, first, n, seq) in reqs {
        // (a WRITE no single pending writer owns is not a chunk of any
        // task here: the search refuses it, or a task's chunks below are
        // then incomplete)
        if let Some(t) = t {
            let (a, m) = range(first, n);
            per_task.entry(t).or_default().push((a, m, seq));
        }
    }
    // the uniform chunk size of the split writes
    let mut mw: Option<u8> = None;
    for chunks in per_task.values().filter(|c| c.len() > 1) {
        let k = chunks[0].1;
        if mw.is_some_and(|x| x != k) {
            return nm(format!(
                "#{} write-through WRITEs of {k} model pages and of {} elsewhere: no single model max_write",
                chunks[0].2,
                mw.unwrap_or(0)
            ));
        }
        mw = Some(k);
    }
    let lim = mw.unwrap_or(u8::MAX).min(max_pages);
    for (t, (task, label)) in tasks.iter().enumerate() {
        match task {
            RawTask::Write { first, n, .. } => {
                let Some(got) = per_task.get(&t) else {
                    continue;
                };
                let (a, m) = range(*first, *n);
                let mut want = vec![];
                let mut p = a;
                while p < a + m {
                    let c = lim.min(a + m - p);
                    want.push((p, c));
                    p += c;
                }
                let got: Vec<(u8, u8)> = got.iter().map(|c| (c.0, c.1)).collect();
                // a failed chunk ends the loop early
                let ok = got == want
                    || (errors
                        && !got.is_empty()
                        && got.len() < want.len()
                        && got[..] == want[..got.len()]);
                if !ok {
                    return nm(format!(
                        "[{label}]: the kernel's write-through WRITEs are {got:?} (model pages), the model with max_write {mw:?} and max_pages {max_pages} sends {want:?}"
                    ));
                }
            }
            RawTask::DioWrite { first, n, .. } | RawTask::OdirectWrite { first, n, .. } => {
                let (_, m) = range(*first, *n);
                if mw.is_some_and(|k| m > k) {
                    return nm(format!(
                        "[{label}]: a direct write of {m} model pages with a model max_write of {mw:?} pages, set from the write-through WRITEs: its chunks are not mapped"
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(mw)
}

/// The offsets (in the scan's positions) a trace names: every syscall
/// range, request range and size, from 0; with `replies`, the end of
/// every READ reply too (the first pass of uneven positions, whose
/// positions are bytes).
fn named_bounds(
    tasks: &[(RawTask, String)],
    raw: &[(u64, u64, RawObs, String)],
    replies: bool,
) -> Vec<u64> {
    let mut bounds: Vec<u64> = vec![0];
    let mut add = |a: u64, n: u64| {
        bounds.push(a);
        bounds.push(a + n);
    };
    for (t, _) in tasks {
        match t {
            RawTask::Write { first, n, .. }
            | RawTask::DioWrite { first, n, .. }
            | RawTask::OdirectWrite { first, n, .. }
            | RawTask::DioRead { first, n }
            | RawTask::OdirectRead { first, n }
            | RawTask::Read { first, n, .. }
            | RawTask::SyncRange { first, n }
            | RawTask::Msync { first, n }
            | RawTask::NotifyInval { first, n, .. } => add(*first, *n),
            RawTask::Mmap { page, .. }
            | RawTask::EnvLoad { page, .. }
            | RawTask::EnvAccess { page, .. } => add(*page, 1),
            RawTask::Truncate { size } => add(*size, 0),
            _ => {}
        }
    }
    for (_, _, o, _) in raw {
        if let RawObs::Read(r) | RawObs::Reply(r, _, _) | RawObs::ReplyErr(r) = o {
            match r {
                RawReq::CacheWrite { first, n, .. }
                | RawReq::DirectWrite { first, n, .. }
                | RawReq::ThroughWrite { first, n, .. }
                | RawReq::Read { first, n } => add(*first, *n),
                RawReq::Setattr { size } => add(*size, 0),
                _ => {}
            }
        }
    }
    if replies {
        for (_, _, o, _) in raw {
            if let RawObs::Reply(RawReq::Read { first, .. }, _, Some(b)) = o {
                add(*first, *b);
            }
        }
    }
    bounds.sort();
    bounds.dedup();
    bounds
}

/// Cuts every buffered read of `tasks` (positions of `unit` bytes) to
/// the end it is mapped with (scan.rs `read_end`), and returns the
/// position no file size exceeds: the largest offset the trace names
/// but for those reads (with `replies`, READ replies' ends too).
fn cut_reads(
    tasks: &mut [(RawTask, String)],
    raw: &[(u64, u64, RawObs, String)],
    unit: u64,
    replies: bool,
) -> u64 {
    let others: Vec<(RawTask, String)> = tasks
        .iter()
        .filter(|t| !matches!(t.0, RawTask::Read { .. }))
        .cloned()
        .collect();
    let data_end = named_bounds(&others, raw, replies)
        .last()
        .copied()
        .unwrap_or(0);
    for (t, _) in tasks.iter_mut() {
        if let RawTask::Read { first, n, .. } = t {
            let end = super::scan::read_end(
                *first,
                *first + *n,
                data_end,
                PG / unit,
                RA_BYTES as u64 / unit,
            );
            *n = end - *first;
        }
    }
    data_end
}

/// Uneven positions (layout.rs) for the byte offsets `named`: those
/// offsets, and the page boundaries around each inside a page, so that
/// every position lies inside one page or is a run of whole pages.
fn uneven_grid(named: Vec<u64>) -> Result<Vec<u64>, String> {
    let mut b = named.clone();
    for x in named.iter().filter(|x| !x.is_multiple_of(PG)) {
        b.push(x / PG * PG);
        b.push(x.div_ceil(PG) * PG);
    }
    b.sort();
    b.dedup();
    if b.len() - 1 > MODEL_PAGES {
        // (the first and last few offsets: a verdict line, not a dump)
        let at = if b.len() > 16 {
            let head: Vec<String> = b[..8].iter().map(|x| x.to_string()).collect();
            let tail: Vec<String> = b[b.len() - 4..].iter().map(|x| x.to_string()).collect();
            format!(
                "[{}, ... {} more ..., {}]",
                head.join(", "),
                b.len() - 12,
                tail.join(", ")
            )
        } else {
            format!("{b:?}")
        };
        return nm(format!(
            "needs {} positions of uneven size (bytes {at}: the offsets the trace names and the pages around them); the model has {MODEL_PAGES}",
            b.len() - 1
        ));
    }
    Ok(b)
}

impl Mapping {
    /// Several lines: the model configuration and the mapping (for --verbose
    /// and reports).
    pub fn summary(&self) -> String {
        let mut s = if self.cfg.uneven() {
            format!(
                "  model: kernel {:?}, {} positions of uneven size at bytes {:?}, max_pages {}, {} daemon worker(s)",
                self.cfg.kernel,
                self.cfg.pages,
                self.cfg.position_bytes(),
                self.cfg.max_pages,
                self.cfg.daemon_threads
            )
        } else if self.cfg.sub.units_per_page > 1 {
            format!(
                "  model: kernel {:?}, {} units of {} bytes ({} per 4 KiB page), max_pages {}, {} daemon worker(s)",
                self.cfg.kernel,
                self.cfg.pages,
                self.cfg.unit_bytes(),
                self.cfg.sub.units_per_page,
                self.cfg.max_pages,
                self.cfg.daemon_threads
            )
        } else {
            format!(
                "  model: kernel {:?}, {} pages {:?} (4 KiB page ranges), max_pages {}, {} daemon worker(s)",
                self.cfg.kernel, self.cfg.pages, self.regions, self.cfg.max_pages, self.cfg.daemon_threads
            )
        };
        if let Some(w) = self.cfg.max_write {
            s += &format!(", max_write {w} (the recorded write-through chunks)");
        }
        if self.cfg.max_kpages != 0 {
            // (max_pages above then bounds nothing the model reads)
            s += &format!(
                ", WRITEs up to {} and readahead READs up to {} kernel pages (positions of different sizes: the model counts kernel pages)",
                self.cfg.max_kpages, self.cfg.read_max_kpages
            );
        } else if self.cfg.read_max_pages != 0 {
            s += &format!(
                ", readahead READs up to {} (fc->max_pages above max_write)",
                self.cfg.read_max_pages
            );
        }
        if self.reclaim {
            s += ", with the environment's reclaim of clean folios";
        }
        s += &format!(
            "\n  tasks: {}",
            self.task_labels
                .iter()
                .enumerate()
                .map(|(i, l)| format!("T{i}={} [{l}]", self.cfg.tasks[i]))
                .collect::<Vec<_>>()
                .join(", ")
        );
        s += &format!(
            "\n  data: {}",
            self.letters
                .iter()
                .map(|((p, t), v)| {
                    let n = t.chars().count();
                    let t = if n > 6 {
                        let head: String = t.chars().take(3).collect();
                        format!("{}..({n} pages)", super::scan::tag_text(&head))
                    } else {
                        super::scan::tag_text(t)
                    };
                    format!(
                        "p{p} '{t}'={}",
                        v.iter()
                            .map(|x| format!("v{x}"))
                            .collect::<Vec<_>>()
                            .join("|")
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        );
        s += &format!(
            "\n  filtered: {}",
            self.filtered
                .iter()
                .map(|(k, n)| format!("{k} x{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        s += &format!("\n  {} observable events", self.obs.len());
        if let Some(c) = &self.cut {
            s += &format!("\n  checked up to a cut; not modelled from {c}");
        }
        s
    }
}
