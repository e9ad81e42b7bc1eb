//! The event scan of translation: one pass over a recorded trace that maps
//! each syscall mark onto a model task (by its fd's kind: cached,
//! FOPEN_DIRECT_IO, O_DIRECT) and each request and reply onto a raw
//! observation, dropping what the model does not have by the listed filter
//! rules. Everything is still in real 4 KiB pages; [`super::translate`]
//! splits the file into model regions afterwards.
use super::envmap::EnvMaps;
use super::meta::{no_fallocate_from, posix_locks_off, returns_by_call};
use super::raw::*;
use super::*;
use std::collections::{BTreeMap, HashMap, HashSet};

use crate::trace::Event;
use wbspec_models::fuse::RA_BYTES;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum FdKind {
    Cached,
    /// FOPEN_DIRECT_IO
    Dio,
    /// O_DIRECT without FOPEN_DIRECT_IO
    Odirect,
}

pub(super) struct Pending {
    syscall: String,
    task: Option<usize>,
    store_page: Option<u64>,
    /// A buffered pread: its first real page (the ret mark's data starts
    /// there).
    read_first: Option<u64>,
    /// A pread's offset in bytes (where its ret mark's `segs=` start).
    read_off: Option<u64>,
    /// The bytes a pread, pwrite or sendfile asked for: it cannot return
    /// more.
    asked: Option<u64>,
    open_flags: i32,
    /// The scenario's first open, which creates the file (setup).
    setup_open: bool,
    /// A pwrite on a FOPEN_DIRECT_IO or O_DIRECT fd (its WRITEs are direct).
    direct_write: bool,
    /// A pwrite on a cached fd of a mount without writeback_cache
    /// (write-through: its WRITE is a `Req::ThroughWrite`).
    through_write: bool,
    /// An mmap whose accesses are the environment's (envmap.rs): its
    /// first real page, pages, MAP_SHARED, and the open of its fd
    /// (numbered in trace order).
    map: Option<(u64, u64, bool, Option<usize>)>,
    /// An fcntl(F_DUPFD[_CLOEXEC]) of this fd: its return is a new fd of
    /// the same open file.
    dup_of: Option<i64>,
    /// A posix_fadvise(RANDOM or NORMAL): the open whose FMODE_RANDOM it
    /// sets or clears.
    advises: Option<usize>,
}

pub(super) fn arg<'a>(args: &'a str, key: &str) -> Option<&'a str> {
    args.split_whitespace()
        .find_map(|w| w.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
}

pub(super) fn num(s: Option<&str>) -> Option<u64> {
    s.and_then(|v| v.parse().ok())
}

/// The byte count `key=` of a call's arguments: a whole number, and with
/// `base` (the offset) a range ending below the largest file offset;
/// anything else is refused, never read as 0.
fn byte_arg(args: &str, key: &str, base: u64, seq: u64, sc: &str) -> Result<u64, String> {
    match num(arg(args, key)) {
        Some(v)
            if base
                .checked_add(v)
                .is_some_and(|end| end <= i64::MAX as u64) =>
        {
            Ok(v)
        }
        _ => Err(format!(
            "bad trace: #{seq} {sc} without a valid {key}= (a byte count up to 2^63-1): {args:?}"
        )),
    }
}

/// What a value the scan cannot express in its unit says: translate then
/// scans again in a smaller unit (2 KiB, then 1 KiB).
pub(super) const UNALIGNED: &str = "is not a whole number of 4 KiB pages";

/// How a scan maps the trace's bytes to model positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Grid {
    /// Positions of `unit` bytes: 4 KiB pages, or 2 or 1 KiB units.
    Unit(u64),
    /// Uneven positions between these byte offsets (ascending, from 0;
    /// the model's `unit_bytes`): the offsets the trace names, and the
    /// page boundaries around those inside a page; then the byte no
    /// file size in the trace exceeds ([`read_end`]).
    Bounds(Vec<u64>, u64),
    /// Positions are bytes: the first pass, which only collects the
    /// offsets the trace names (no data tags).
    Bytes,
}

impl Grid {
    /// Are positions smaller than a page (units or uneven)?
    pub(super) fn below_page(&self) -> bool {
        !matches!(self, Grid::Unit(PG))
    }

    /// The position starting at byte `bytes` (a size: the position it
    /// ends before).
    pub(super) fn index(&self, bytes: u64, what: &str) -> Result<u64, String> {
        match self {
            Grid::Unit(u) => pages_of(bytes, what, *u),
            Grid::Bytes => Ok(bytes),
            Grid::Bounds(b, _) => match b.binary_search(&bytes) {
                Ok(i) => Ok(i as u64),
                Err(_) => nm(format!(
                    "{what} {bytes} is not an offset of the mapping's positions (bytes {b:?})"
                )),
            },
        }
    }

    /// The byte where position `i` starts.
    pub(super) fn at(&self, i: u64) -> u64 {
        match self {
            Grid::Unit(u) => i * u,
            Grid::Bytes => i,
            Grid::Bounds(b, _) => b.get(i as usize).copied().unwrap_or(u64::MAX),
        }
    }

    /// The position holding byte `bytes`.
    pub(super) fn containing(&self, bytes: u64) -> u64 {
        match self {
            Grid::Unit(u) => bytes / u,
            Grid::Bytes => bytes,
            Grid::Bounds(b, _) => b.partition_point(|x| *x <= bytes).saturating_sub(1) as u64,
        }
    }
}

/// `bytes` in units of `unit` bytes (4 KiB pages, or 2 or 1 KiB units).
/// The end a buffered read (filemap_read) of positions `first..end`
/// is mapped with, in positions of which `page` make a kernel page,
/// when no file size in the trace exceeds position `data_end`: its
/// bytes past every size the file can have are none, and its length
/// counts only for the readahead window (mm/readahead.c, the model's
/// read.rs `read_window`: req_count, the kernel pages from the miss to
/// the one holding the read's end). So an end whose page lies wholly
/// past `data_end` is that page's end (the same kernel pages), and an
/// end `ra` (ra_pages, in positions) or more past `data_end`'s page
/// end is cut there: a miss lies in a page below `data_end`, so
/// req_count exceeds ra_pages either way, an oversized read, whose
/// window is the initial one, ra_pages with async_size half of it,
/// whatever req_count is. A read starting that far out is left as it
/// is. Without this a read loop with a large buffer named an offset
/// per read far past the data, and a small file needed more positions
/// than the model has. (An attack found the first version, which cut
/// at one page less, inexact: the model then took an oversized read
/// away from offset 0 down the prev-miss path, M-ra-oversized.)
pub(super) fn read_end(first: u64, end: u64, data_end: u64, page: u64, ra: u64) -> u64 {
    let ceil = |x: u64| x.div_ceil(page) * page;
    let far = ceil(data_end) + ra;
    if first >= far {
        return end;
    }
    let end = if end / page * page >= data_end {
        ceil(end)
    } else {
        end
    };
    end.min(far)
}

pub(super) fn pages_of(bytes: u64, what: &str, unit: u64) -> Result<u64, String> {
    if !bytes.is_multiple_of(unit) {
        return nm(format!(
            "{what} {bytes} {UNALIGNED}{}",
            if unit < PG {
                format!(
                    " nor of {} KiB units (the model's smallest unit, a quarter page)",
                    unit / 1024
                )
            } else {
                String::new()
            }
        ));
    }
    Ok(bytes / unit)
}

/// The data tags of `len` bytes at byte `start`, one per `unit`: from
/// the segment digests `segs` where the recorder wrote them (`wbspec
/// record`, trace::segs), else from the first bytes of pages and units
/// ([`tags_in`]).
pub(super) fn data_tags(
    grid: &Grid,
    page: &str,
    units: Option<&str>,
    segs: Option<&str>,
    start: u64,
    len: u64,
) -> Result<String, String> {
    let unit = match grid {
        Grid::Unit(u) => *u,
        // (the first pass keeps no data)
        Grid::Bytes => return Ok(String::new()),
        Grid::Bounds(..) if len == 0 => return Ok(String::new()),
        Grid::Bounds(b, _) => {
            let Some(s) = segs else {
                return Err(format!(
                    "bad trace: {len} bytes at {start} without segs= in a trace mapped in uneven positions"
                ));
            };
            return bound_tags(b, s, start, len);
        }
    };
    let first = tags_in(unit, page, units, len)?;
    match segs {
        Some(s) => seg_tags(unit, s, start, len, &first),
        None => Ok(first),
    }
}

/// First of the private-use characters that stand for units whose tag
/// comes from digests ([`seg_tags`]).
const SEG_TAG_BASE: u32 = 0xF0000;
/// Digest buckets per first-byte tag: 95 tags (`' '`..=`'~'` as
/// trace::page_tag gives them) x 689 buckets fit plane 15's 65,534
/// private-use characters.
const SEG_BUCKETS: u32 = 689;
/// First of the private-use characters that stand for uneven positions
/// ([`bound_tags`]): plane 16's 65,534.
const BOUND_TAG_BASE: u32 = 0x100000;
const BOUND_BUCKETS: u32 = 65534;

/// One tag per `unit` bytes of the `len` bytes at byte `start` whose
/// segment digests are `segs` (`OFF+LEN:D,...`, trace::segs) and whose
/// first-byte tags, one per unit, are `first`: `.` where every piece
/// the unit overlaps is zeros, else a private-use character that
/// encodes the unit's first-byte tag and one of 689 buckets of the
/// digests of the pieces it overlaps (their places and digests). Equal
/// tags therefore mean equal first bytes, as before, and pieces that
/// agree up to 1 in 689 (and the digests' collisions). The recorder cuts
/// every payload at every offset the trace names and every 1 KiB, so
/// every model page is whole pieces in every payload over it.
pub(super) fn seg_tags(
    unit: u64,
    segs: &str,
    start: u64,
    len: u64,
    first: &str,
) -> Result<String, String> {
    let pieces = seg_pieces(segs, start, len)?;
    let first: Vec<char> = first.chars().collect();
    if first.len() as u64 != len.div_ceil(unit) {
        return Err(format!(
            "bad trace: {} first-byte tags for {len} bytes in units of {unit}",
            first.len()
        ));
    }
    let mut out = String::new();
    // (units and pieces both ascend: the first piece a unit overlaps
    // never goes back)
    let mut lo = 0;
    for (k, f) in first.into_iter().enumerate() {
        let k = k as u64;
        let (a, b) = (start + k * unit, (start + (k + 1) * unit).min(start + len));
        while pieces[lo].0 + pieces[lo].1 <= a {
            lo += 1;
        }
        let over: Vec<&(u64, u64, &str)> =
            pieces[lo..].iter().take_while(|(o, _, _)| *o < b).collect();
        if over.iter().all(|(_, _, t)| t.ends_with(":.")) {
            out.push('.');
            continue;
        }
        let joined: Vec<&str> = over.iter().map(|p| p.2).collect();
        let bucket = crate::trace::digest(joined.join(",").as_bytes()) % SEG_BUCKETS;
        let class = (f as u32).clamp(32, 126) - 32;
        let c = char::from_u32(SEG_TAG_BASE + class * SEG_BUCKETS + bucket).expect("plane 15");
        out.push(c);
    }
    Ok(out)
}

/// The pieces `(offset, length, token)` of segment digests `segs` that
/// tile the `len` bytes at byte `start`.
fn seg_pieces(segs: &str, start: u64, len: u64) -> Result<Vec<(u64, u64, &str)>, String> {
    let bad = || {
        format!("bad trace: segs {segs:?} are not pieces OFF+LEN:D (D `.` or 8 hex digits) tiling the {len} bytes at {start}")
    };
    let mut pieces: Vec<(u64, u64, &str)> = vec![];
    let mut at = start;
    for tok in segs.split(',').filter(|t| !t.is_empty()) {
        let (range, d) = tok.split_once(':').ok_or_else(bad)?;
        let (o, l) = range.split_once('+').ok_or_else(bad)?;
        let (o, l): (u64, u64) = (o.parse().map_err(|_| bad())?, l.parse().map_err(|_| bad())?);
        let digest = d == "." || (d.len() == 8 && d.bytes().all(|b| b.is_ascii_hexdigit()));
        if o != at || l == 0 || !digest {
            return Err(bad());
        }
        pieces.push((o, l, tok));
        at = o.checked_add(l).ok_or_else(bad)?;
    }
    if Some(at) != start.checked_add(len) {
        return Err(bad());
    }
    Ok(pieces)
}

/// One tag per uneven position (`bounds`, [`Grid::Bounds`]) of the
/// `len` bytes at byte `start`: `.` where every piece is zeros, else
/// one of plane 16's 65,534 private-use characters, chosen by the
/// digests of the position's pieces alone: a position need not start
/// where the recorder took a first byte. Every position is whole
/// pieces: the recorder cuts at every offset the trace names, and the
/// positions end only there and at page boundaries; a piece across one
/// is a trace this mapping cannot read (bad input).
pub(super) fn bound_tags(
    bounds: &[u64],
    segs: &str,
    start: u64,
    len: u64,
) -> Result<String, String> {
    let pieces = seg_pieces(segs, start, len)?;
    let end = start + len;
    let lo = bounds.partition_point(|b| *b < start);
    if bounds.get(lo) != Some(&start) {
        return Err(format!(
            "bad trace: data at byte {start}, inside a position of the mapping (bytes {bounds:?})"
        ));
    }
    let mut out = String::new();
    let mut k = 0;
    for w in bounds[lo..].windows(2) {
        if w[0] >= end {
            break;
        }
        let b = w[1].min(end);
        let mut over: Vec<&str> = vec![];
        while k < pieces.len() && pieces[k].0 < b {
            if pieces[k].0 + pieces[k].1 > b {
                return Err(format!(
                    "bad trace: segs piece {} runs across byte {b}, where a position of the mapping ends",
                    pieces[k].2
                ));
            }
            over.push(pieces[k].2);
            k += 1;
        }
        if over.iter().all(|t| t.ends_with(":.")) {
            out.push('.');
            continue;
        }
        let bucket = crate::trace::digest(over.join(",").as_bytes()) % BOUND_BUCKETS;
        out.push(char::from_u32(BOUND_TAG_BASE + bucket).expect("plane 16"));
    }
    if bounds.last().is_some_and(|l| *l < end) {
        return Err(format!(
            "bad trace: data up to byte {end}, past the mapping's last position (bytes {bounds:?})"
        ));
    }
    Ok(out)
}

/// A tag string for people: a digest tag ([`seg_tags`]) as its first
/// byte's tag, `~` and its bucket in hex (`A~2b1`), an uneven
/// position's ([`bound_tags`]) as `#~` and its bucket, others as they are.
pub fn tag_text(t: &str) -> String {
    t.chars()
        .map(|c| match (c as u32).checked_sub(SEG_TAG_BASE) {
            Some(i) if i >= BOUND_TAG_BASE - SEG_TAG_BASE => {
                format!("#~{:x}", i - (BOUND_TAG_BASE - SEG_TAG_BASE))
            }
            Some(i) if i < 95 * SEG_BUCKETS => {
                format!(
                    "{}~{:x}",
                    (b' ' + (i / SEG_BUCKETS) as u8) as char,
                    i % SEG_BUCKETS
                )
            }
            _ => c.to_string(),
        })
        .collect()
}

/// The data tags, one per unit of `unit` bytes, of `len` bytes of data
/// recorded with page tags `page` and 1 KiB unit tags `units` where the
/// page tags do not give them (trace::unit_tags).
pub(super) fn tags_in(
    unit: u64,
    page: &str,
    units: Option<&str>,
    len: u64,
) -> Result<String, String> {
    if unit == PG && units.is_none() {
        return Ok(page.to_string());
    }
    let k = (unit / crate::trace::UNIT as u64) as usize;
    let all = crate::trace::units_from(page, units, len);
    if all.len() as u64 != len.div_ceil(crate::trace::UNIT as u64) {
        return Err(format!(
            "bad trace: {} unit tags {all:?} for {len} bytes",
            all.len()
        ));
    }
    // a page's tag is its first byte, so its first unit's tag: unit tags
    // that say otherwise contradict the page tags
    let per_page = PG as usize / crate::trace::UNIT;
    if units.is_some()
        && page
            .chars()
            .zip(all.chars().step_by(per_page))
            .any(|(p, u)| p != u)
    {
        return Err(format!(
            "bad trace: unit tags {all:?} disagree with page tags {page:?} (a page's tag is its first unit's)"
        ));
    }
    if unit == PG {
        // whole-page traces compare page tags; unit tags (fio's random
        // bytes give every 1 KiB its own) are not used
        return Ok(page.to_string());
    }
    // one tag per unit stands for the unit's data: a 2 KiB unit whose
    // 1 KiB parts differ (a buffer written so, or a WRITE or read with one
    // part stale) is checked in 1 KiB units, or else a difference inside
    // the unit would go unseen
    if let Some(c) = all
        .as_bytes()
        .chunks(k)
        .find(|c| c.iter().any(|t| *t != c[0]))
    {
        return nm(format!(
            "data with unit tags {all:?} (one unit of {unit} bytes holds {:?}) {UNALIGNED} nor of {} KiB units of one tag",
            String::from_utf8_lossy(c),
            unit / 1024
        ));
    }
    Ok(all.chars().step_by(k).collect())
}

pub(super) fn parse_open_flags(s: &str) -> i32 {
    if let Some(h) = s.strip_prefix("0x") {
        return i32::from_str_radix(h, 16).unwrap_or(0);
    }
    let mut f = 0;
    for n in s.split('|') {
        f |= match n {
            "O_WRONLY" => libc::O_WRONLY,
            "O_RDWR" => libc::O_RDWR,
            "O_CREAT" => libc::O_CREAT,
            "O_TRUNC" => libc::O_TRUNC,
            "O_DIRECT" => libc::O_DIRECT,
            "O_APPEND" => libc::O_APPEND,
            _ => 0,
        };
    }
    f
}

/// The task of closing `fd` (forgotten from `fds` and `open_of`): the
/// last caching fd, with no mapping holding a reference (`maps`), is
/// fuse_release's too, which drops the inode's caching io-mode.
fn close_fd(
    fd: Option<u64>,
    fds: &mut HashMap<i64, FdKind>,
    open_of: &mut HashMap<i64, usize>,
    held: &mut HashMap<i64, u32>,
    maps: u32,
) -> RawTask {
    // a copy of the fd in another process (a fork's) still holds the
    // open file: this close flushes, the last one releases
    if let Some(h) = fd
        .and_then(|fd| held.get_mut(&(fd as i64)))
        .filter(|h| **h > 0)
    {
        *h -= 1;
        return RawTask::Close;
    }
    let kind = fd.and_then(|fd| {
        open_of.remove(&(fd as i64));
        fds.remove(&(fd as i64))
    });
    let caching = |k: &FdKind| *k != FdKind::Dio;
    if kind.as_ref().is_some_and(caching) && !fds.values().any(caching) && maps == 0 {
        RawTask::CloseRelease
    } else {
        RawTask::Close
    }
}

/// What the scan hands to the translation.
pub(super) struct Scan {
    /// (order key, seq, obs, what)
    pub(super) raw: Vec<(u64, u64, RawObs, String)>,
    /// the modelled syscalls, with what each was
    pub(super) tasks: Vec<(RawTask, String)>,
    /// filtered rule -> count
    pub(super) filtered: BTreeMap<String, usize>,
    /// most modelled requests in flight at the server at once
    pub(super) max_inflight: usize,
    /// order key of the body's last mark
    pub(super) last_mark_key: u64,
    /// FLUSHes outside close(): (order key, task)
    pub(super) implicit_flush: Vec<(u64, usize)>,
    /// requests the server failed (`fail OP`)
    pub(super) errors: u16,
    /// a checked prefix (conforms-to-cut)
    pub(super) cut: Option<String>,
    /// write-through WRITEs: (task, first, n real pages, seq)
    pub(super) through_reqs: Vec<(Option<usize>, u64, u64, u64)>,
    /// syscall return values by task
    pub(super) rets: HashMap<usize, i64>,
    /// the page tags a read's `ret` mark carries (`data=`), by task
    pub(super) ret_tags: HashMap<usize, String>,
    /// the direct writes submitted by io_submit (asynchronous kiocbs:
    /// the model's `aio` tasks)
    pub(super) aio: HashSet<usize>,
}

/// Scan the events after the header (`wbc`: writeback_cache; `keep_cache`:
/// FOPEN_KEEP_CACHE on every OPEN reply).
/// `unit`: the bytes of one position of the result (4096, or 2048 or
/// 1024 for a trace whose sizes are not whole pages); tags are per unit.
pub(super) fn scan(
    events: &[Event],
    wbc: bool,
    keep_cache: bool,
    grid: &Grid,
) -> Result<Scan, String> {
    let pages_of = |b: u64, what: &str| grid.index(b, what);
    // a length in positions: from its start's position to its end's
    // (uneven positions differ in size)
    let len_of = |a: u64, l: u64, what: &str| -> Result<u64, String> {
        match grid {
            Grid::Unit(_) => pages_of(l, what),
            _ => Ok(grid.index(a.saturating_add(l), what)? - grid.index(a, what)?),
        }
    };
    // a `wbspec record` trace whose payloads all carry segment digests
    // (record/segs.rs): one without them is malformed, not compared by
    // its first bytes against the others' digests
    let segs_trace = events
        .first()
        .and_then(|h| h.config.as_ref())
        .is_some_and(|c| c["segs"] == true);
    // record's temporary hex payloads never reach a published trace
    if let Some(e) = events
        .iter()
        .find(|e| e.raw.is_some() || e.result.as_ref().is_some_and(|r| r.get("raw").is_some()))
    {
        return Err(format!(
            "bad trace: #{} carries a raw payload (wbspec record's last pass did not run on it)",
            e.seq
        ));
    }
    let data_tags = |page: &str, units: Option<&str>, segs: Option<&str>, start: u64, len: u64| {
        if segs_trace && segs.is_none() && len > 0 {
            return Err(format!(
                "bad trace: {len} bytes at {start} without segs= in a trace whose header says segs"
            ));
        }
        // one tag per unit is built from the digests: as many units as
        // the page tags the line holds allow (a line states its size)
        if segs.is_some() && page.chars().count() as u64 != len.div_ceil(PG) {
            return Err(format!(
                "bad trace: {len} bytes at {start} with {} page tags",
                page.chars().count()
            ));
        }
        data_tags(grid, page, units, segs, start, len)
    };
    let mut raw: Vec<(u64, u64, RawObs, String)> = vec![]; // (order key, seq, obs, what)
    let mut tasks: Vec<(RawTask, String)> = vec![];
    let mut filtered: BTreeMap<String, usize> = BTreeMap::new();
    let mut fds: HashMap<i64, FdKind> = HashMap::new();
    // fd -> the copies of it other processes hold (`fork` marks: the fds
    // are one table, one entry per number, so a copy is a count)
    let mut held: HashMap<i64, u32> = HashMap::new();
    // fds opened O_RDONLY: a MAP_SHARED mapping of one cannot be written
    // (mmap refuses PROT_WRITE, mprotect cannot add it: no VM_MAYWRITE),
    // so the environment gets no store through it
    let mut readonly: HashSet<i64> = HashSet::new();
    // fd -> the open (in trace order) it refers to
    let mut open_of: HashMap<i64, usize> = HashMap::new();
    let mut opens = 0usize;
    let mut pending: HashMap<String, Pending> = HashMap::new();
    let mut reqs: HashMap<u64, Option<RawReq>> = HashMap::new();
    let mut inflight: HashSet<u64> = HashSet::new();
    let mut max_inflight = 0usize;
    let mut last_open_reply: Option<Vec<String>> = None;
    // The file the setup open created (the path word of its mark).
    let mut file: Option<String> = None;
    let mut last_mark_key = 0u64;
    let mut implicit_flush: Vec<(u64, usize)> = vec![];
    // requests the server failed (`fail OP`): the model's `errors`
    let mut errors: u16 = 0;
    // shared mappings alive (each holds a reference to its file)
    let mut maps: u32 = 0;
    // The pid of each workload actor, learned from the requests its calls send.
    let mut actor_pid: HashMap<String, u32> = HashMap::new();
    // A checked prefix (conforms-to-cut); no rule cuts a trace today.
    let cut: Option<String> = None;
    // Write-through WRITEs: (the writer's task if one writer is pending,
    // first, n real pages, seq)
    let mut through_reqs: Vec<(Option<usize>, u64, u64, u64)> = vec![];
    // fhs RELEASEd so far (seq of the RELEASE): no WRITE may carry one
    // after (fuse_file_put sends RELEASE at the last reference, and each
    // WRITE holds one); the model has no fh, so such a trace is not checked
    let mut released: HashMap<u64, u64> = HashMap::new();
    let mut rets: HashMap<usize, i64> = HashMap::new();
    let mut ret_tags: HashMap<usize, String> = HashMap::new();
    let mut filt = |rule: &str| *filtered.entry(rule.to_string()).or_default() += 1;
    // what each call returned (by the call's position): some filter
    // rules hold only for a failed call
    let ret_of = returns_by_call(events);
    // POSIX locks not negotiated (fc->no_lock): the byte-range locks rule
    let no_lock = posix_locks_off(events);
    // fc->no_fallocate set (from this seq on): the failed fallocate rule
    let no_fallocate = no_fallocate_from(events);
    // the file was unlinked (closed and unmapped): it has no later syscall
    let mut unlinked = false;
    // a fadvise(DONTNEED) dropped clean pages, which the model does not:
    // until an open invalidates the cache, no task may read it
    let mut dropped: Option<u64> = None;
    // opens (numbered in trace order) with FMODE_RANDOM: a
    // posix_fadvise(RANDOM) returned on one of their fds, and no
    // NORMAL since
    let mut random: HashSet<usize> = HashSet::new();
    // the last task of the file was an open that invalidated the cache
    // (no FOPEN_KEEP_CACHE): no page is cached, in kernel or model
    let mut fresh_open = false;
    // the connection was aborted (the abort's call mark; `abort_done`:
    // its ret mark): the kernel ended every request with -ECONNABORTED,
    // refuses later ones (-ENOTCONN), and drops the daemon's replies
    let mut aborted: Option<u64> = None;
    let mut abort_done = false;
    // a signal task was issued: FUSE_INTERRUPT and -EINTR replies
    let mut signalled = false;
    // aio tasks: every one io_submit started; those whose io_submit
    // returned and whose completion io_getevents has not reaped yet
    let mut aio: HashSet<usize> = HashSet::new();
    let mut aio_out: Vec<usize> = vec![];
    // the bytes each aio task's iocb asked for (its io_submit's `len=`):
    // its completion cannot return more
    let mut aio_asked: HashMap<usize, u64> = HashMap::new();
    // a program's loads and stores through its mappings (envmap.rs): a
    // trace of `wbspec record`, whose accesses have no marks
    let mut env = EnvMaps::new(
        events
            .first()
            .is_some_and(|h| h.ev == "header" && h.scenario.as_deref() == Some("record")),
    );

    // a trace of `wbspec record` (a real program's; its fork is not marked)
    let recorded = env.on;
    'events: for (i, e) in events.iter().enumerate().skip(1) {
        let key = 2 * i as u64;
        let brief = crate::trace_query::Tr::brief(e);
        match e.ev.as_str() {
            "mark" => {
                last_mark_key = key;
                // the recording server's change of its file is applied
                // (server/notify.rs): `server changed ACTOR notify_inval`
                if let ["server", "changed", actor, "notify_inval"] = e
                    .text
                    .as_deref()
                    .unwrap_or("")
                    .split_whitespace()
                    .collect::<Vec<_>>()[..]
                {
                    if let Some(t) = pending.get(actor).and_then(|p| p.task) {
                        raw.push((key, e.seq, RawObs::Changed(t), brief));
                    }
                    continue 'events;
                }
                // the recorder's note of the mount's readahead when CMD
                // ended: the model's window is VM_READAHEAD_PAGES
                // (128 KiB, read.rs RA_BYTES)
                if let Some(kb) = e
                    .text
                    .as_deref()
                    .and_then(|t| t.strip_prefix(crate::record::READ_AHEAD_NOTE))
                {
                    if kb.trim() != "128" {
                        return nm(format!("#{} the mount's read_ahead_kb was {kb} when the program ended: the model's readahead window is 128 KiB", e.seq));
                    }
                    continue 'events;
                }
                let (Some(kind), Some(actor), Some(sc)) =
                    (e.kind.as_deref(), e.actor.clone(), e.syscall.clone())
                else {
                    continue;
                };
                if kind == "call" {
                    let args = e.args.clone().unwrap_or_default();
                    let words: Vec<&str> = args.split_whitespace().collect();
                    let fd_kind = |fds: &HashMap<i64, FdKind>| -> Result<FdKind, String> {
                        let fd = num(arg(&args, "fd"))
                            .ok_or_else(|| format!("bad trace: #{} {sc} without fd=", e.seq))?
                            as i64;
                        fds.get(&fd).copied().ok_or_else(|| {
                            if recorded {
                                // fds are one table here, and fork is
                                // marked only by a recorder of 3 Dec 2026
                                // or later: a child's copy of an fd
                                // another process has since closed looks
                                // closed
                                format!("#{} {sc} on fd {fd}, which the marks before it do not leave open: fd tables of processes that fork (an fd inherited across fork and closed in another process, with no fork mark) are not modelled", e.seq)
                            } else {
                                format!("bad trace: #{} {sc} on unknown fd {fd}", e.seq)
                            }
                        })
                    };
                    let mut p = Pending {
                        syscall: sc.clone(),
                        task: None,
                        store_page: None,
                        read_first: None,
                        read_off: None,
                        asked: None,
                        open_flags: 0,
                        setup_open: false,
                        direct_write: false,
                        through_write: false,
                        map: None,
                        dup_of: None,
                        advises: None,
                    };
                    let failed = ret_of.get(&i).is_some_and(|r| r.0 < 0);
                    // ENOENT: the name's LOOKUP found nothing
                    let enoent = ret_of.get(&i).is_some_and(|r| r.1 == libc::ENOENT as i64);
                    let creat = words
                        .get(1)
                        .is_some_and(|f| parse_open_flags(f) & libc::O_CREAT != 0);
                    let root = arg(&args, "path") == Some(".");
                    let task = match sc.as_str() {
                        // the root directory: OPENDIR, ACCESS, FSYNCDIR,
                        // RELEASEDIR, GETATTR on nodeid 1 (FILTERED_SYSCALLS)
                        "opendir" | "fchdir" | "close" | "fsync" | "fdatasync" | "fstat"
                        | "newfstatat" | "statx" | "stat" | "lstat"
                            if root =>
                        {
                            filt("syscall on the root directory");
                            None
                        }
                        "mkdir" | "mkdirat" | "unlink" | "unlinkat" if failed => {
                            filt("syscall failed mkdir/unlink");
                            None
                        }
                        // an exec that returns failed never passed
                        // begin_new_exec (after it a failure is a fatal
                        // signal): no fd closed, no mapping gone (a PATH
                        // search's ENOENT)
                        "execve" if failed => {
                            filt("syscall execve (failed)");
                            None
                        }
                        "open" if failed && enoent && !creat => {
                            filt("syscall open of no file (ENOENT)");
                            None
                        }
                        "unlink" | "unlinkat" => {
                            if !fds.is_empty() || maps > 0 {
                                return nm(format!("#{} unlink of a file still open or mapped: the inode outlives its name, which the model does not have", e.seq));
                            }
                            unlinked = true;
                            filt("syscall unlink (closed, unmapped file)");
                            None
                        }
                        "newfstatat" | "statx" | "lstat" | "fstat" | "access" | "faccessat"
                        | "faccessat2"
                            if wbc =>
                        {
                            filt("syscall stat/access (writeback_cache)");
                            None
                        }
                        // fuse_file_llseek: SEEK_SET/SEEK_CUR move the
                        // position only; SEEK_END takes the inode lock for
                        // fuse_update_attributes (a GETATTR, filtered with
                        // writeback_cache as for stat); SEEK_DATA/HOLE send
                        // FUSE_LSEEK, a request no rule filters. pread and
                        // pwrite marks carry their offsets, so the position
                        // is not the model's
                        "lseek" if wbc => {
                            filt("syscall lseek (writeback_cache)");
                            None
                        }
                        // dup, dup2, dup3 of a mount fd: a second fd of
                        // the same open file, as F_DUPFD (dd moves its
                        // output to fd 1); one that replaces another
                        // mount fd closes it too: not modelled (at the
                        // ret, below)
                        // dup2/dup3 onto a mount fd from an fd that is
                        // not the file's (`from=`, `onto=`: the recorder's
                        // since 3 Dec 2026): do_dup2 closes the mount fd
                        // (filp_close: FLUSH, and RELEASE at the last
                        // reference), the close task; failed, nothing
                        "dup2" | "dup3"
                            if num(arg(&args, "onto")).is_some_and(|o| {
                                fds.contains_key(&(o as i64))
                                    && !num(arg(&args, "from")).is_some_and(|f| fds.contains_key(&(f as i64)))
                            }) =>
                        {
                            if ret_of.get(&i).is_some_and(|r| r.0 < 0) {
                                filt("syscall dup (failed)");
                                None
                            } else {
                                let onto = num(arg(&args, "onto"));
                                if let Some(fd) = onto {
                                    readonly.remove(&(fd as i64));
                                }
                                Some(close_fd(onto, &mut fds, &mut open_of, &mut held, maps))
                            }
                        }
                        // a new process with copies of the file's fds
                        // (dup_fd): each open file has one more holder
                        "fork" => {
                            if !ret_of.get(&i).is_some_and(|r| r.0 < 0) {
                                for f in words.iter().filter_map(|w| w.strip_prefix("fd=")) {
                                    let f = num(Some(f)).ok_or_else(|| format!("bad trace: #{} fork with a bad fd= ({f})", e.seq))? as i64;
                                    if !fds.contains_key(&f) {
                                        return nm(format!("#{} a fork holding fd {f}, which the marks before it do not leave open: fd tables of processes that fork are modelled only from their fork marks", e.seq));
                                    }
                                    *held.entry(f).or_default() += 1;
                                }
                            }
                            filt("syscall fork");
                            None
                        }
                        "dup" | "dup2" | "dup3" => {
                            // the source: `from=` if the mark has it
                            // (`fd=` may be the fd it replaces)
                            let src = num(arg(&args, "from")).or(num(arg(&args, "fd")));
                            if src.is_some_and(|f| !fds.contains_key(&(f as i64))) {
                                fd_kind(&fds)?;
                            }
                            p.dup_of = src.map(|f| f as i64);
                            filt("syscall dup");
                            None
                        }
                        "fcntl" => match arg(&args, "cmd") {
                            Some("F_GETFD" | "F_SETFD" | "F_GETFL") => {
                                filt("syscall fcntl F_GETFD/F_SETFD/F_GETFL");
                                None
                            }
                            // a second fd of the same open file (its ret):
                            // no request; each close of either flushes
                            Some("F_DUPFD" | "F_DUPFD_CLOEXEC") => {
                                fd_kind(&fds)?;
                                p.dup_of = num(arg(&args, "fd")).map(|f| f as i64);
                                filt("syscall fcntl F_DUPFD");
                                None
                            }
                            Some(
                                "F_GETLK" | "F_SETLK" | "F_SETLKW" | "F_OFD_GETLK" | "F_OFD_SETLK"
                                | "F_OFD_SETLKW",
                            ) if no_lock => {
                                filt("syscall fcntl lock (no FUSE_POSIX_LOCKS)");
                                None
                            }
                            c => {
                                return nm(format!(
                                    "#{} fcntl {} has no model task",
                                    e.seq,
                                    c.unwrap_or("(no cmd=)")
                                ))
                            }
                        },
                        // a failed fallocate (fuse_file_fallocate): a
                        // mode it refuses, or fc->no_fallocate, returns
                        // before the inode lock; otherwise the lock, the
                        // FALLOCATE (filtered) and its error, and
                        // fuse_flush_time_update (sync_inode_metadata:
                        // do_writepages returns at once for nr_to_write
                        // 0, then it waits for writeback in flight),
                        // which the model leaves out: more permissive.
                        // Only PUNCH_HOLE and ZERO_RANGE touch pages
                        // before the request (fuse_writeback_range)
                        "fallocate" if failed => {
                            let mode = arg(&args, "mode")
                                .and_then(|m| u32::from_str_radix(m.trim_start_matches("0x"), 16).ok())
                                .ok_or_else(|| format!("#{} a failed fallocate whose mark has no mode= (recorded before 4 Dec 2026): whether it wrote back pages is not known", e.seq))?;
                            let known = libc::FALLOC_FL_KEEP_SIZE | libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE;
                            let (punch, keep) = (libc::FALLOC_FL_PUNCH_HOLE as u32, libc::FALLOC_FL_KEEP_SIZE as u32);
                            // vfs_fallocate's refusals before f_op->fallocate
                            // (fs/open.c): offset < 0 or len <= 0 (EINVAL), a
                            // punch without KEEP_SIZE (EOPNOTSUPP), an fd
                            // not open for writing (EBADF); then
                            // fuse_file_fallocate's: a mode it does not
                            // know, fc->no_fallocate
                            // (the recorder writes the registers unsigned)
                            let signed = |k: usize| words.get(k).and_then(|w| w.parse::<u64>().ok()).map(|x| x as i64);
                            // (an fd opened O_RDONLY: the server's own
                            // reply could say EBADF after a write-back)
                            let ro = num(arg(&args, "fd")).is_some_and(|f| readonly.contains(&(f as i64)));
                            let early = signed(2).is_some_and(|o| o < 0)
                                || signed(3).is_some_and(|l| l <= 0)
                                || (mode & punch != 0 && mode & keep == 0)
                                || ro
                                || mode & !(known as u32) != 0
                                || no_fallocate.is_some_and(|s| s < e.seq);
                            let pages = mode & (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) as u32 != 0;
                            if pages && !early {
                                return nm(format!("#{} a failed fallocate with mode {mode:#x}: fuse_file_fallocate may have written back from its offset to the end of the file (fuse_writeback_range) before it failed, which no model task does alone", e.seq));
                            }
                            filt("syscall fallocate (failed, no page touched)");
                            None
                        }
                        // fuse_do_setattr with writeback_cache: a chown or
                        // chmod first runs write_inode_now(inode, true), the
                        // munmap task's program; its SETATTR has no size
                        "fchown" | "fchmod" if wbc => Some(RawTask::Munmap),
                        // generic_fadvise(POSIX_FADV_DONTNEED):
                        // __filemap_fdatawrite_range(WB_SYNC_NONE), the
                        // sync_file_range task, then mapping_try_invalidate
                        // drops the clean pages (see `dropped`)
                        "fadvise64" if words.get(3) == Some(&"DONTNEED") => {
                            let a = num(words.get(1).copied()).unwrap_or(0);
                            let l = num(words.get(2).copied()).unwrap_or(0);
                            // right after an open that emptied the
                            // cache, with no other task pending, there is
                            // no clean page to drop
                            let alone = pending.values().all(|p| p.task.is_none());
                            if !(fresh_open && alone) {
                                if env.active() {
                                    return nm(format!("#{} a fadvise(DONTNEED) while the file is mapped: the environment's loads could read the clean pages it dropped, which the model keeps", e.seq));
                                }
                                dropped = Some(e.seq);
                            }
                            if l == 0 {
                                Some(RawTask::Writeback)
                            } else {
                                Some(RawTask::SyncRange {
                                    first: pages_of(a, "fadvise offset")?,
                                    n: len_of(a, l, "fadvise length")?,
                                })
                            }
                        }
                        // generic_fadvise (FUSE has no ->fadvise):
                        // RANDOM sets FMODE_RANDOM on the open file,
                        // NORMAL clears it (and restores ra_pages, which
                        // only SEQUENTIAL changes): no request, no page.
                        // A buffered read on an open with FMODE_RANDOM
                        // is `read ... random` (force_page_cache_ra); one
                        // running at the same time on the same open could
                        // see either mode: not modelled
                        "fadvise64"
                            if matches!(words.get(3).copied(), Some("RANDOM" | "NORMAL")) =>
                        {
                            if !failed {
                                let open = num(arg(&args, "fd"))
                                    .and_then(|fd| open_of.get(&(fd as i64)).copied());
                                let Some(open) = open else {
                                    return nm(format!("#{} a fadvise on an fd whose open the marks do not name", e.seq));
                                };
                                let reading = pending.values().any(|q| {
                                    q.task.is_some_and(|k| {
                                        matches!(tasks[k].0, RawTask::Read { open: Some(o), .. } if o == open)
                                    })
                                });
                                if reading {
                                    return nm(format!("#{} a fadvise({}) while a buffered read of the same open file runs: which mode the read saw is not known", e.seq, words[3]));
                                }
                                p.advises = Some(open);
                                if words[3] == "RANDOM" {
                                    random.insert(open);
                                } else {
                                    random.remove(&open);
                                }
                            }
                            filt("syscall fadvise64 RANDOM/NORMAL");
                            None
                        }
                        "open" => {
                            let path = words.first().copied().unwrap_or("").to_string();
                            let fl = parse_open_flags(words.get(1).copied().unwrap_or(""));
                            p.open_flags = fl;
                            last_open_reply = None;
                            match &file {
                                // The first open creates the file (LOOKUP,
                                // CREATE): setup, as init_size 0.
                                None => {
                                    if fl & libc::O_CREAT == 0 {
                                        return nm("the first open() has no O_CREAT: the model starts from a new empty file");
                                    }
                                    file = Some(path);
                                    p.setup_open = true;
                                    filt("syscall open (setup)");
                                    None
                                }
                                Some(f) if *f != path => {
                                    return nm(format!(
                                        "open() of a second file {path}: the model has one inode"
                                    ))
                                }
                                // fuse_open: OPEN, then invalidate_inode_pages2
                                // unless FOPEN_KEEP_CACHE; O_TRUNC truncates.
                                Some(_) => Some(RawTask::Open {
                                    trunc: fl & libc::O_TRUNC != 0,
                                    direct: false,
                                }),
                            }
                        }
                        // sendfile(2) into the file takes the write(2) path
                        // (iter_file_splice_write → vfs_iter_write);
                        // io_submit of one IOCB_CMD_PWRITE (`... pwrite`,
                        // harness/src/aio.rs) a direct write on an
                        // asynchronous kiocb: the `aio` task, whose
                        // io_submit ret is `Queued` and whose completion
                        // is io_getevents' ret
                        // sendfile out of a file of the mount: marked
                        // with no offset (record/decode.rs)
                        // (`copy=WHY`: into the file, but what it
                        // copies is not known to the recorder)
                        "sendfile" if arg(&args, "off").is_none() => {
                            let why = match arg(&args, "copy") {
                                None => "out of a file of the mount: no model task (the model's sendfile writes into the file)",
                                Some("append") => "onto an O_APPEND fd: its offset is the file's size at the time, which the recorder does not know",
                                Some("unsized") => "from a source whose size does not say what it holds (sysfs, procfs: a stat size of 4096 or 0, contents made at each read; or not a regular file): the bytes it copied are not known",
                                Some("none") => "with nothing to copy at its source's offset (the model's writes write pages)",
                                Some(_) => "from a source the recorder could not read: the bytes it copied are not known",
                            };
                            return nm(format!("#{} sendfile {why}", e.seq));
                        }
                        "pwrite" | "sendfile" | "io_submit" => {
                            if sc == "io_submit" && words.last() != Some(&"pwrite") {
                                return nm(format!("#{} io_submit of other than one pwrite iocb: no model task", e.seq));
                            }
                            let off = byte_arg(&args, "off", 0, e.seq, &sc)?;
                            let ptags = words.get(2).copied().unwrap_or("").to_string();
                            let first = pages_of(off, "pwrite offset")?;
                            let n = ptags.len() as u64;
                            // `len=` (wbspec record): the bytes written,
                            // one tag per 4 KiB of them (`units=`: per
                            // 1 KiB, where those do not give them)
                            let len = match arg(&args, "len") {
                                Some(_) => {
                                    let len = byte_arg(&args, "len", off, e.seq, &sc)?;
                                    if len.div_ceil(PG) != n {
                                        return Err(format!("bad trace: #{} {sc} of {len} bytes with {n} page tags: {args:?}", e.seq));
                                    }
                                    len
                                }
                                None => n * PG,
                            };
                            let n = len_of(off, len, "pwrite length")?;
                            // (sendfile's `len=` is what its source held
                            // at the entry stop, not the count it asked
                            // for: its return is checked against it
                            // below; io_submit returns a count of iocbs)
                            if sc != "io_submit" {
                                p.asked = Some(len);
                            }
                            let tags = data_tags(&ptags, arg(&args, "units"), arg(&args, "segs"), off, len)?;
                            let kind = fd_kind(&fds)?;
                            if sc == "io_submit" {
                                if kind == FdKind::Cached {
                                    return nm(format!("#{} io_submit on a cached fd: a buffered aio write is synchronous (no IOCB_DIRECT); the model's aio tasks are direct", e.seq));
                                }
                                aio.insert(tasks.len());
                                aio_asked.insert(tasks.len(), len);
                            }
                            p.direct_write = kind != FdKind::Cached;
                            p.through_write = kind == FdKind::Cached && !wbc;
                            // (fuse_perform_write sends one WRITE per
                            // max_write / max_pages chunk: the model's
                            // max_write is set from the recorded WRITEs
                            // below, `through_chunks`)
                            Some(match kind {
                                FdKind::Cached => RawTask::Write { first, n, tags },
                                FdKind::Dio => RawTask::DioWrite { first, n, tags },
                                FdKind::Odirect => RawTask::OdirectWrite { first, n, tags },
                            })
                        }
                        "pread" => {
                            let off = byte_arg(&args, "off", 0, e.seq, &sc)?;
                            let len = byte_arg(&args, "len", off, e.seq, &sc)?;
                            if len == 0 {
                                return nm(format!(
                                    "#{} a 0-byte pread (the model's reads read pages)",
                                    e.seq
                                ));
                            }
                            let kind = fd_kind(&fds)?;
                            // (a buffered read past the data: `read_end`;
                            // the first pass's reads are cut in translate)
                            let span = match grid {
                                Grid::Bounds(_, data_end) if kind == FdKind::Cached => {
                                    read_end(off, off + len, *data_end, PG, RA_BYTES as u64) - off
                                }
                                _ => len,
                            };
                            let first = pages_of(off, "pread offset")?;
                            let n = len_of(off, span, "pread length")?;
                            p.read_off = Some(off);
                            p.asked = Some(len);
                            match kind {
                                FdKind::Cached => {
                                    p.read_first = Some(first);
                                    let open = num(arg(&args, "fd"))
                                        .and_then(|fd| open_of.get(&(fd as i64)).copied());
                                    if open.is_some()
                                        && pending.values().any(|q| q.advises.is_some() && q.advises == open)
                                    {
                                        return nm(format!("#{} a buffered read while a fadvise on the same open file runs: which mode the read saw is not known", e.seq));
                                    }
                                    let random = open.is_some_and(|o| random.contains(&o));
                                    Some(RawTask::Read { first, n, open, random })
                                }
                                FdKind::Dio => Some(RawTask::DioRead { first, n }),
                                FdKind::Odirect => Some(RawTask::OdirectRead { first, n }),
                            }
                        }
                        "sync_file_range" => {
                            // the model's tasks are SYNC_FILE_RANGE_WRITE
                            // (WB_SYNC_NONE, no wait)
                            let flags = words.get(3).copied().unwrap_or("WRITE");
                            if flags != "WRITE" {
                                return nm(format!(
                                    "#{} sync_file_range with {flags}: only SYNC_FILE_RANGE_WRITE has a model task",
                                    e.seq
                                ));
                            }
                            let a = num(words.get(1).copied()).unwrap_or(0);
                            let l = num(words.get(2).copied()).unwrap_or(0);
                            if l == 0 {
                                // to the end of the file: the flusher's walk
                                Some(RawTask::Writeback)
                            } else {
                                Some(RawTask::SyncRange {
                                    first: pages_of(a, "sync_file_range offset")?,
                                    n: len_of(a, l, "sync_file_range length")?,
                                })
                            }
                        }
                        // syncfs on this kernel (SB_I_NO_DATA_INTEGRITY) writes
                        // back without waiting: the WB_SYNC_NONE writeback task.
                        "syncfs" => Some(RawTask::Writeback),
                        // fdatasync is fuse_fsync with datasync = 1
                        "fsync" | "fdatasync" => Some(RawTask::Fsync),
                        // msync(MS_SYNC): vfs_fsync_range over the mapped
                        // range (the whole file when the mark has no range)
                        "msync" if args.contains("MS_SYNC") => {
                            match (num(arg(&args, "off")), num(arg(&args, "len"))) {
                                (Some(o), Some(l)) => Some(RawTask::Msync {
                                    first: pages_of(o, "msync offset")?,
                                    n: len_of(o, l, "msync length")?,
                                }),
                                _ => Some(RawTask::Fsync),
                            }
                        }
                        // munmap of a shared mapping: fuse_vma_close →
                        // write_inode_now(inode, 1)
                        "munmap" => {
                            maps = maps.saturating_sub(1);
                            if env.on {
                                // the environment's accesses to its pages
                                // end before it (envmap.rs)
                                let off = byte_arg(&args, "off", 0, e.seq, &sc)?;
                                let len = byte_arg(&args, "len", off, e.seq, &sc)?;
                                let off = env.munmap(e.seq, &actor, off / PG, (off + len).div_ceil(PG) - off / PG)?;
                                raw.push((key - 1, e.seq, RawObs::Env { on: false, tasks: off }, brief.clone()));
                            }
                            Some(RawTask::Munmap)
                        }
                        // the exit (or exec) of a process that holds
                        // mappings of the file and no fd of it: exit_mmap
                        // → remove_vma → fuse_vma_close → write_inode_now
                        // for each mapping, the munmap task's program (a
                        // second mapping's finds nothing the first left
                        // dirty: the process stores no more); the last
                        // reference's RELEASE is filtered
                        "exit" | "execve"
                            if env.on
                                && args.split_whitespace().any(|w| w == "map")
                                && arg(&args, "fd").is_none() =>
                        {
                            maps = 0;
                            let off = env.exit(e.seq, &actor)?;
                            raw.push((key - 1, e.seq, RawObs::Env { on: false, tasks: off }, brief.clone()));
                            Some(RawTask::Munmap)
                        }
                        "close" => {
                            if let Some(fd) = num(arg(&args, "fd")) {
                                readonly.remove(&(fd as i64));
                            }
                            Some(close_fd(num(arg(&args, "fd")), &mut fds, &mut open_of, &mut held, maps))
                        }
                        // the exit (or exec) of a process holding one fd of
                        // the file and no mapping of it: exit_files (or
                        // do_close_on_exec) closes it, the close task
                        "exit" | "execve"
                            if !args.split_whitespace().any(|w| w == "map")
                                && args.split_whitespace().filter(|w| w.starts_with("fd=")).count() == 1 =>
                        {
                            if let Some(fd) = num(arg(&args, "fd")) {
                                readonly.remove(&(fd as i64));
                            }
                            Some(close_fd(num(arg(&args, "fd")), &mut fds, &mut open_of, &mut held, maps))
                        }
                        "ftruncate" | "truncate" => {
                            let size = num(words.get(1).copied()).ok_or_else(|| {
                                format!("bad trace: #{} {sc} without a size", e.seq)
                            })?;
                            Some(RawTask::Truncate {
                                size: pages_of(size, "truncate size")?,
                            })
                        }
                        "store" => {
                            let off = num(arg(&args, "off")).unwrap_or(0);
                            let page = grid.containing(off);
                            p.store_page = Some(page);
                            Some(RawTask::Mmap {
                                page,
                                tag: words.get(1).copied().unwrap_or("").to_string(),
                            })
                        }
                        // fusectl abort: fuse_abort_conn (transport.rs)
                        "abort" => {
                            if aborted.is_some() {
                                return nm(format!("#{} a second abort: the model has one abort task", e.seq));
                            }
                            aborted = Some(e.seq);
                            Some(RawTask::Abort)
                        }
                        // the recording server's notification
                        // (server/notify.rs): the server's change of
                        // `first=F TAGS`, then FUSE_NOTIFY_INVAL_INODE(off,
                        // len): fuse_reverse_inval_inode walks pages
                        // off >> PAGE_SHIFT ..= len <= 0 ? -1 :
                        // (off + len - 1) >> PAGE_SHIFT; off < 0: none
                        "notify_inval" => Some(notify_inval(&args, &words, e.seq)?),
                        // a signal to the thread of another actor's
                        // pending call (request_wait_answer)
                        "signal" => {
                            let who = arg(&args, "target").unwrap_or("");
                            let Some(target) = pending.get(who).and_then(|p| p.task) else {
                                return nm(format!("#{} a signal to {who:?}, which has no pending modelled call", e.seq));
                            };
                            // SIGUSR1 (a handler, no SA_RESTART: the
                            // scenarios' only non-fatal signal) or SIGKILL;
                            // another signal's disposition is not known
                            let fatal = words.contains(&"SIGKILL");
                            if !fatal && !words.contains(&"SIGUSR1") {
                                return nm(format!(
                                    "#{} a signal other than SIGUSR1 or SIGKILL: its disposition is not modelled",
                                    e.seq
                                ));
                            }
                            signalled = true;
                            Some(RawTask::Signal { target, fatal })
                        }
                        "mmap" | "msync_async" | "stat" => {
                            if sc == "mmap" && words.contains(&"populate") {
                                return nm(format!("#{} an mmap with MAP_POPULATE or MAP_LOCKED: it faults the pages in before it returns, when the environment's loads have not begun", e.seq));
                            }
                            if sc == "mmap" {
                                maps += 1;
                                if env.on {
                                    if grid.below_page() {
                                        return nm(format!("#{} a mapping of the file in a trace mapped in units below a page: the environment's loads and stores are mapped in whole pages only", e.seq));
                                    }
                                    if fd_kind(&fds)? == FdKind::Dio {
                                        return nm(format!("#{} an mmap of a FOPEN_DIRECT_IO fd: the environment's stores through it are not mapped", e.seq));
                                    }
                                    let off = byte_arg(&args, "off", 0, e.seq, &sc)?;
                                    let len = byte_arg(&args, "len", off, e.seq, &sc)?;
                                    let first = pages_of(off, "mmap offset")?;
                                    let ro = num(arg(&args, "fd")).is_some_and(|f| readonly.contains(&(f as i64)));
                                    // without PROT_WRITE a store faults
                                    // (SIGSEGV); mprotect could add it, but
                                    // an mprotect of a mapping of the file
                                    // is refused (no model task). A mark
                                    // without prot= (traces before it was
                                    // recorded) may store
                                    let no_write = arg(&args, "prot").is_some_and(|p| !p.contains('w'));
                                    // VM_EXEC: since 6.17 do_sync_mmap_readahead
                                    // reads from the fault to the VMA's end
                                    // with async_size 0, not the read-around
                                    // the model's faults do
                                    if arg(&args, "prot").is_some_and(|p| p.contains('x')) {
                                        return nm(format!("#{} an executable mapping (PROT_EXEC): since 6.17 a fault of a VM_EXEC mapping reads ahead from the fault to the mapping's end and marks nothing (do_sync_mmap_readahead), which the model's read-around does not follow", e.seq));
                                    }
                                    let shared = words.contains(&"shared") && !ro && !no_write;
                                    let n = (off + len).div_ceil(PG) - first;
                                    // each mapped page is a region of its
                                    // own with a task: more pages than
                                    // the model has are refused here, before
                                    // a task is made for each (a mapping of
                                    // 2^50 pages would never end)
                                    if n > wbspec_models::fuse::config::MAX_PAGES as u64 {
                                        return nm(format!("#{} a mapping of {n} pages: the environment's loads and stores are a task each per page, and the model has at most {} pages", e.seq, wbspec_models::fuse::config::MAX_PAGES));
                                    }
                                    let open = num(arg(&args, "fd")).and_then(|fd| open_of.get(&(fd as i64)).copied());
                                    p.map = Some((first, n, shared, open));
                                }
                            }
                            filt(&format!("syscall {sc}"));
                            None
                        }
                        "statx_cached" => {
                            filt("syscall statx_cached");
                            None
                        }
                        // a thread, or a child sharing the memory: only
                        // counted (envmap.rs `env_threads`)
                        "thread" => {
                            filt("syscall thread");
                            None
                        }
                        // the reaping of an aio completion: its ret is the
                        // aio task's return (below)
                        "io_getevents" => None,
                        other => return nm(format!("syscall {other} has no model task")),
                    };
                    if task.is_some() {
                        // (an open with another task pending: that task
                        // may fill the cache after the invalidation)
                        let alone = pending.values().all(|p| p.task.is_none());
                        fresh_open =
                            matches!(task, Some(RawTask::Open { .. })) && !keep_cache && alone;
                    }
                    match (&task, dropped) {
                        // fuse_open's invalidate_inode_pages2 (no
                        // FOPEN_KEEP_CACHE) drops every clean page too
                        (Some(RawTask::Open { .. }), Some(_)) if !keep_cache => dropped = None,
                        (
                            Some(
                                RawTask::Close
                                | RawTask::CloseRelease
                                | RawTask::SyncRange { .. }
                                | RawTask::Fsync
                                | RawTask::Writeback,
                            ),
                            _,
                        )
                        | (None, _)
                        | (_, None) => {}
                        (Some(_), Some(at)) => {
                            return nm(format!("#{} {sc} after the fadvise(DONTNEED) at #{at} and before an open that invalidates the cache: the clean pages it dropped are not modelled", e.seq));
                        }
                    }
                    if unlinked && task.is_some() {
                        return nm(format!("#{} {sc} after the file was unlinked", e.seq));
                    }
                    if let Some(t) = task {
                        let idx = tasks.len();
                        let mut label = format!("{actor} {sc} {args}").trim().to_string();
                        if label.len() > 48 {
                            // (at a character boundary: names may be
                            // any UTF-8)
                            let cut = (0..=45).rev().find(|&i| label.is_char_boundary(i));
                            label.truncate(cut.unwrap_or(0));
                            label += "...";
                        }
                        tasks.push((t, label));
                        p.task = Some(idx);
                        raw.push((key, e.seq, RawObs::Call(idx), brief));
                    }
                    if pending.insert(actor.clone(), p).is_some() {
                        return Err(format!(
                            "bad trace: #{} {actor} issues {sc} while another call is pending",
                            e.seq
                        ));
                    }
                } else if kind == "ret" {
                    let p = pending.remove(&actor).ok_or_else(|| {
                        format!("bad trace: #{} ret without call for {actor}", e.seq)
                    })?;
                    if p.syscall != sc {
                        return Err(format!(
                            "bad trace: #{} ret {sc} but {actor} called {}",
                            e.seq, p.syscall
                        ));
                    }
                    if sc == "open" {
                        if let Some(fd) = e.ret.filter(|r| *r >= 0) {
                            // (one process's open never returns an fd it
                            // holds: another process holds this number,
                            // a forked copy)
                            // (in a recorded program, also with no fork
                            // mark: processes forked before either held
                            // the file each open it, same number)
                            if fds.contains_key(&fd) && (!held.is_empty() || recorded) {
                                return nm(format!("#{} an open returned fd {fd}, whose number another process's fd (a forked copy, or its own open) still has: fd tables of processes are one table here, by number", e.seq));
                            }
                            let dio = last_open_reply
                                .take()
                                .map(|f| f.iter().any(|x| x == "FOPEN_DIRECT_IO"))
                                .unwrap_or(false);
                            if let Some(t) = p.task {
                                if let RawTask::Open { direct, .. } = &mut tasks[t].0 {
                                    *direct = dio;
                                }
                            }
                            let k = if dio {
                                FdKind::Dio
                            } else if p.open_flags & libc::O_DIRECT != 0 {
                                FdKind::Odirect
                            } else {
                                FdKind::Cached
                            };
                            fds.insert(fd, k);
                            if p.open_flags & libc::O_ACCMODE == libc::O_RDONLY {
                                readonly.insert(fd);
                            } else {
                                readonly.remove(&fd);
                            }
                            open_of.insert(fd, opens);
                            opens += 1;
                        }
                    }
                    if let (Some(old), Some(new)) = (p.dup_of, e.ret.filter(|r| *r >= 0)) {
                        if new != old && fds.contains_key(&new) {
                            return nm(format!("#{} {sc} onto fd {new}, an fd of the file: the implicit close of that fd is not modelled", e.seq));
                        }
                        if let Some(k) = fds.get(&old).copied() {
                            fds.insert(new, k);
                        }
                        if let Some(o) = open_of.get(&old).copied() {
                            open_of.insert(new, o);
                        }
                        if readonly.contains(&old) {
                            readonly.insert(new);
                        } else {
                            readonly.remove(&new);
                        }
                        continue 'events;
                    }
                    if let (Some((first, n, shared, open)), true) = (p.map, e.ret.unwrap_or(-1) >= 0) {
                        // the VMA's own flags, read by the recorder
                        // (READ_IMPLIES_EXEC makes PROT_READ executable)
                        let tail = e.text.as_deref().unwrap_or("");
                        if tail.split_whitespace().any(|w| w == "vma=exec") {
                            return nm(format!("#{} an executable mapping (VM_EXEC without PROT_EXEC: READ_IMPLIES_EXEC): since 6.17 a fault of a VM_EXEC mapping reads ahead from the fault to the mapping's end and marks nothing (do_sync_mmap_readahead), which the model's read-around does not follow", e.seq));
                        }
                        if tail.split_whitespace().any(|w| w == "vma=unreadable") {
                            return nm(format!("#{} a mapping whose flags the recorder could not read: whether it is executable (its faults' readahead) is not known", e.seq));
                        }
                        if let Some(at) = dropped {
                            return nm(format!("#{} a mapping after the fadvise(DONTNEED) at #{at} and before an open that invalidates the cache: the environment's loads could read the clean pages it dropped, which the model keeps", e.seq));
                        }
                        let on = env.map(&actor, first, n, shared, open, &mut tasks);
                        raw.push((key, e.seq, RawObs::Env { on: true, tasks: on }, brief));
                        continue 'events;
                    }
                    if sc == "io_submit" {
                        let Some(t) = p.task else { continue 'events };
                        if e.ret != Some(1) {
                            return nm(format!("#{} io_submit returned {:?} (errno {}), not 1: a failed submission is not modelled", e.seq, e.ret, e.errno.unwrap_or(0)));
                        }
                        raw.push((key, e.seq, RawObs::Queued(t), brief));
                        aio_out.push(t);
                        continue 'events;
                    }
                    if sc == "io_getevents" {
                        match e.ret {
                            Some(0) => continue 'events,
                            Some(1) => {}
                            r => return nm(format!("#{} io_getevents returned {r:?}: only one completion at a time is mapped", e.seq)),
                        }
                        let [t] = aio_out[..] else {
                            return nm(format!("#{} io_getevents reaped a completion with {} aio writes outstanding: it cannot be given to one aio task", e.seq, aio_out.len()));
                        };
                        let res = e
                            .text
                            .as_deref()
                            .and_then(|x| x.split_whitespace().find_map(|w| w.strip_prefix("res=")))
                            .and_then(|v| v.parse::<i64>().ok())
                            .ok_or_else(|| format!("bad trace: #{} io_getevents ret without res=", e.seq))?;
                        if let Some(asked) = aio_asked.get(&t).filter(|a| res > **a as i64) {
                            return Err(format!(
                                "bad trace: #{} {actor}'s io_getevents reaps a completion of {res} bytes, more than the {asked} its io_submit's iocb asked for",
                                e.seq
                            ));
                        }
                        if res < 0 && errors == 0 {
                            return nm(format!("#{} the aio write failed (res {res}): errors are not modelled", e.seq));
                        }
                        aio_out.clear();
                        rets.insert(t, res);
                        raw.push((key, e.seq, RawObs::Ret(t), brief));
                        continue 'events;
                    }
                    // after the abort: the writeback error it left
                    // (ECONNABORTED, fuse_writepage_end's mapping_set_error)
                    // or a refused request (ENOTCONN, fuse_get_req); after
                    // a signal: an -EINTR reply
                    let errno = e.errno.unwrap_or(0);
                    let transport = (aborted.is_some()
                        && (errno == libc::ECONNABORTED || errno == libc::ENOTCONN))
                        || (signalled && errno == libc::EINTR);
                    if sc == "abort" {
                        abort_done = true;
                    }
                    if e.ret.unwrap_or(0) < 0
                        && p.task.is_some()
                        && sc != "store"
                        && errors == 0
                        && !transport
                    {
                        return nm(format!(
                            "{sc} failed (errno {}): errors are not modelled",
                            e.errno.unwrap_or(0)
                        ));
                    }
                    if let Some(t) = p.task {
                        if sc == "sendfile" && e.text.as_deref().is_some_and(|x| x.ends_with(" buffer=changed")) {
                            return nm(format!(
                                "#{} {actor}'s sendfile: its source file or offset changed while it ran (the recorder's reads at entry and exit differ), so the bytes the kernel copied are not known",
                                e.seq
                            ));
                        }
                        if e.text.as_deref().is_some_and(|x| x.ends_with(" buffer=changed")) {
                            return nm(format!(
                                "#{} {actor}'s {sc}: the program changed its buffer while the write ran (the recorder's copies at entry and exit differ), so the bytes the kernel copied are not known",
                                e.seq
                            ));
                        }
                        if sc == "pread" && e.text.as_deref().is_some_and(|x| x.split_whitespace().any(|w| w == "buffer=fault")) {
                            return nm(format!(
                                "#{} {actor}'s {sc} returned {} bytes, short of a fault in its buffer (EFAULT after some bytes, not the file's end): the model's reads have no buffer",
                                e.seq,
                                e.ret.unwrap_or(0)
                            ));
                        }
                        if sc == "pread" && e.text.as_deref().is_some_and(|x| x.split_whitespace().any(|w| w == "buffer=unreadable")) {
                            return nm(format!(
                                "#{} {actor}'s {sc} returned {} bytes into a buffer the recorder could not read (process_vm_readv failed: memfd_secret memory, or unmapped by then): the data it read is not known",
                                e.seq,
                                e.ret.unwrap_or(0)
                            ));
                        }
                        if let Some(asked) = p.asked.filter(|a| e.ret.is_some_and(|r| r > *a as i64)) {
                            if sc == "sendfile" {
                                return nm(format!(
                                    "#{} {actor}'s sendfile returns {} bytes, more than the {asked} its source held when it was called (the source grew while it ran): the bytes it copied are not known",
                                    e.seq,
                                    e.ret.unwrap_or(0)
                                ));
                            }
                            return Err(format!(
                                "bad trace: #{} {actor}'s {sc} returns {} bytes, more than the {asked} it asked for",
                                e.seq,
                                e.ret.unwrap_or(0)
                            ));
                        }
                        if sc == "pread" && e.ret.unwrap_or(0) > 0 && e.page_tags.is_none() {
                            return Err(format!(
                                "bad trace: #{} {actor}'s pread returns {} bytes without the data it read (data=)",
                                e.seq,
                                e.ret.unwrap_or(0)
                            ));
                        }
                        // (a dup2 that closed the file's fd returns the
                        // new fd: its close returned 0)
                        let dup = matches!(sc.as_str(), "dup2" | "dup3");
                        // (an exit's ret is the process's status, not its
                        // close's: exit_files ignores filp_close's value)
                        if !matches!(sc.as_str(), "exit" | "execve") {
                            rets.extend(e.ret.map(|r| (t, if dup && r >= 0 { 0 } else { r })));
                        }
                        let got = e.ret.unwrap_or(0).max(0) as u64;
                        let tags = match &e.page_tags {
                            Some(g) => Some(data_tags(
                                g,
                                e.unit_tags.as_deref(),
                                e.segs.as_deref(),
                                p.read_off.unwrap_or(0),
                                got,
                            )?),
                            None => None,
                        };
                        ret_tags.extend(tags.clone().map(|g| (t, g)));
                        match p.read_first {
                            Some(first) => raw.push((
                                key,
                                e.seq,
                                RawObs::ReadRet(t, first, got, tags),
                                brief,
                            )),
                            None => raw.push((key, e.seq, RawObs::Ret(t), brief)),
                        }
                    }
                }
            }
            "req" => {
                let op = e.op.clone().unwrap_or_default();
                let u = e
                    .unique
                    .ok_or_else(|| format!("bad trace: #{} req without unique", e.seq))?;
                if let Some(at) = aborted {
                    // (fuse_dev_do_read fails once !fiq->connected)
                    return nm(format!(
                        "#{} {op} u={u} read after the abort at #{at}: the aborted connection delivers nothing",
                        e.seq
                    ));
                }
                if let (Some(pid), [(actor, _)]) = (
                    e.pid.filter(|p| *p != 0),
                    &pending.iter().collect::<Vec<_>>()[..],
                ) {
                    actor_pid.entry((*actor).clone()).or_insert(pid);
                }
                if let Some(fh) = e.fh {
                    if op == "RELEASE" {
                        released.insert(fh, e.seq);
                    } else if let Some(r) = released.get(&fh) {
                        return nm(format!("#{} {op} carries fh {fh}, RELEASEd at #{r}: the kernel keeps a file until its requests end (fuse_file_put); the model has no file handles", e.seq));
                    }
                }
                let r = match op.as_str() {
                    "WRITE" => {
                        let first = pages_of(e.offset.unwrap_or(0), "WRITE offset")?;
                        let n = len_of(e.offset.unwrap_or(0), e.size.unwrap_or(0), "WRITE size")?;
                        let tags = data_tags(
                            e.page_tags.as_deref().unwrap_or_default(),
                            e.unit_tags.as_deref(),
                            e.segs.as_deref(),
                            e.offset.unwrap_or(0),
                            e.size.unwrap_or(0),
                        )?;
                        if e.is_cache_write() {
                            Some(RawReq::CacheWrite { first, n, tags })
                        } else if !wbc && !pending.values().any(|p| p.direct_write) {
                            // fuse_perform_write's WRITE, sent by the writer
                            if e.pid == Some(0) {
                                return nm(format!("#{} a WRITE without FUSE_WRITE_CACHE from pid 0: not a write(2)'s", e.seq));
                            }
                            let writers: Vec<&String> = pending
                                .iter()
                                .filter(|(_, p)| p.through_write)
                                .map(|(a, _)| a)
                                .collect();
                            if let ([a], Some(pid)) = (&writers[..], e.pid) {
                                if actor_pid.get(*a).is_some_and(|w| *w != pid) {
                                    return nm(format!("#{} a write-through WRITE from pid {pid}, not from the writer {a}", e.seq));
                                }
                            }
                            let writer = match writers[..] {
                                [a] => pending[a].task,
                                _ => None,
                            };
                            through_reqs.push((writer, first, n, e.seq));
                            Some(RawReq::ThroughWrite { first, n, tags })
                        } else {
                            Some(RawReq::DirectWrite { first, n, tags })
                        }
                    }
                    "READ" => {
                        let first = pages_of(e.offset.unwrap_or(0), "READ offset")?;
                        let n = len_of(e.offset.unwrap_or(0), e.size.unwrap_or(0), "READ size")?;
                        // a direct READ, or a page-cache fill: readahead
                        // (background) or read_folio (synchronous) of a
                        // buffered read or a fault
                        Some(RawReq::Read { first, n })
                    }
                    "SETATTR" => match e.size {
                        Some(s) => Some(RawReq::Setattr {
                            size: pages_of(s, "SETATTR size")?,
                        }),
                        None => {
                            filt("SETATTR(times)");
                            None
                        }
                    },
                    "FSYNC" => Some(RawReq::Fsync),
                    "CREATE" => {
                        if !pending.values().any(|p| p.setup_open) {
                            return nm("CREATE outside the first open(): the model has one file, created by the setup open");
                        }
                        filt("CREATE");
                        None
                    }
                    "OPEN" => {
                        if pending.values().any(|p| p.setup_open) {
                            return nm("the first open() sent OPEN, not CREATE: the file existed, the model starts from a new empty file");
                        }
                        let opens: Vec<usize> = pending
                            .values()
                            .filter(|p| p.syscall == "open")
                            .filter_map(|p| p.task)
                            .collect();
                        let [task] = opens[..] else {
                            // none: an open the marks do not show as
                            // one of the mount's (a path outside it that
                            // leads in, /proc/PID/fd/N: an attack on 4
                            // Dec 2026)
                            let why = if opens.is_empty() {
                                " (an open of a path outside the mount that reaches its file, such as /proc/PID/fd/N, is not marked as the mount's)"
                            } else {
                                ""
                            };
                            return nm(format!(
                                "an OPEN read while {} open() calls are pending: it cannot be given to one open task{why}",
                                opens.len()
                            ));
                        };
                        let trunc = e
                            .flag_names
                            .as_ref()
                            .is_some_and(|f| f.iter().any(|x| x == "O_TRUNC"));
                        Some(RawReq::Open { task, trunc })
                    }
                    "INTERRUPT" => {
                        if !signalled {
                            return nm(format!(
                                "#{} a FUSE_INTERRUPT with no signal task before it",
                                e.seq
                            ));
                        }
                        filt("INTERRUPT");
                        None
                    }
                    "FLUSH" => {
                        // (a close, or an exit that closes: its task)
                        let closing = |p: &Pending| {
                            p.syscall == "close"
                                || p.task.is_some_and(|t| {
                                    matches!(tasks[t].0, RawTask::Close | RawTask::CloseRelease)
                                })
                        };
                        if !pending.values().any(closing) {
                            // close() by the runner's cleanup, after the body.
                            let idx = tasks.len();
                            tasks.push((RawTask::Close, "(runner cleanup) close".into()));
                            implicit_flush.push((key, idx));
                        }
                        Some(RawReq::Flush)
                    }
                    other => {
                        if FILTERED_OPS.iter().any(|(o, _)| *o == other) {
                            filt(other);
                            None
                        } else {
                            return nm(format!(
                                "request {other} is not modelled and not in the filter list"
                            ));
                        }
                    }
                };
                if let Some(r) = &r {
                    raw.push((key, e.seq, RawObs::Read(r.clone()), brief));
                    inflight.insert(u);
                    max_inflight = max_inflight.max(inflight.len());
                }
                reqs.insert(u, r);
            }
            "reply" => {
                let u = e.unique.unwrap_or(0);
                if matches!(e.op.as_deref(), Some("OPEN") | Some("CREATE")) {
                    last_open_reply = e.result.as_ref().and_then(|r| {
                        r["open_flags"].as_array().map(|a| {
                            a.iter()
                                .filter_map(|x| x.as_str().map(str::to_string))
                                .collect()
                        })
                    });
                }
                if let Some(Some(r)) = reqs.remove(&u) {
                    inflight.remove(&u);
                    if let Some(at) = aborted {
                        if !abort_done {
                            return nm(format!("{brief}: a reply during the abort (#{at}): whether the kernel took it is not known"));
                        }
                        // fuse_abort_conn ended the request; the reply finds
                        // none (fuse_dev_do_write: request_find, -ENOENT)
                        filt("reply after the abort");
                        continue 'events;
                    }
                    if matches!(r, RawReq::Open { .. })
                        && last_open_reply
                            .as_ref()
                            .is_some_and(|f| f.iter().any(|x| x == "FOPEN_KEEP_CACHE"))
                            != keep_cache
                    {
                        return nm(format!("{brief}: FOPEN_KEEP_CACHE in the reply disagrees with keep_cache={keep_cache} in the trace header"));
                    }
                    if let Some(errno) = e.result.as_ref().and_then(|r| r["errno"].as_i64()) {
                        // an injected -EIO (`fail OP`) of a request the
                        // model may fail: the daemon's error reply
                        let op = match r {
                            RawReq::CacheWrite { .. }
                            | RawReq::DirectWrite { .. }
                            | RawReq::ThroughWrite { .. } => Some("WRITE"),
                            RawReq::Read { .. } => Some("READ"),
                            RawReq::Setattr { .. } => Some("SETATTR"),
                            RawReq::Fsync => Some("FSYNC"),
                            RawReq::Flush => Some("FLUSH"),
                            RawReq::Open { .. } => None,
                        };
                        match op {
                            // a server honouring FUSE_INTERRUPT: the
                            // request answered -EINTR, not done (the
                            // model's daemon may fail an interrupted
                            // request, transport.rs)
                            Some(_) if errno == libc::EINTR as i64 && signalled => {
                                raw.push((key, e.seq, RawObs::ReplyErr(r), brief));
                                continue 'events;
                            }
                            Some(op) if errno == libc::EIO as i64 => {
                                errors |= wbspec_models::fuse::config::parse_errors(&[op.to_string()])?;
                                raw.push((key, e.seq, RawObs::ReplyErr(r), brief));
                                continue 'events;
                            }
                            _ => return nm(format!("{brief}: this error reply is not modelled")),
                        }
                    }
                    let bytes = e.result.as_ref().and_then(|r| r["bytes"].as_u64());
                    let at = match &r {
                        RawReq::Read { first, .. } => grid.at(*first),
                        _ => 0,
                    };
                    match grid {
                        Grid::Unit(unit) if *unit < PG && bytes.is_some_and(|b| !b.is_multiple_of(*unit)) => {
                            return nm(format!(
                                "{brief}: a READ reply of {} bytes, not whole units of {unit} bytes",
                                bytes.unwrap_or(0)
                            ));
                        }
                        Grid::Bounds(..) => {
                            grid.index(at + bytes.unwrap_or(0), "a READ reply's end at byte")?;
                        }
                        _ => {}
                    }
                    let data = match e.result.as_ref().and_then(|r| r["page_tags"].as_str()) {
                        Some(g) => {
                            let res = e.result.as_ref();
                            let units = res.and_then(|r| r["unit_tags"].as_str());
                            let segs = res.and_then(|r| r["segs"].as_str());
                            Some(data_tags(g, units, segs, at, bytes.unwrap_or(0))?)
                        }
                        // a READ that returned bytes must say which in a
                        // trace whose header promises every payload
                        None if segs_trace && bytes.unwrap_or(0) > 0 => {
                            return Err(format!(
                                "bad trace: {brief}: a READ reply of {} bytes without its data in a trace whose header says segs",
                                bytes.unwrap_or(0)
                            ));
                        }
                        None => None,
                    };
                    raw.push((key, e.seq, RawObs::Reply(r, data, bytes), brief));
                }
            }
            "server_truncate" => {
                return nm(format!(
                    "{brief}: a server-side truncation by another client (the model's remote-truncate task is not mapped)"
                ))
            }
            _ => {}
        }
    }
    if !aio_out.is_empty() {
        return nm("an aio write whose completion the trace never reaps (io_getevents)");
    }
    if let Some(why) = env.mixed_shared(&tasks) {
        return nm(why);
    }
    if env.active() {
        let off = env.finish();
        let key = 2 * events.len() as u64 + 2;
        raw.push((
            key,
            0,
            RawObs::Env {
                on: false,
                tasks: off,
            },
            "(end of trace: the mappings end)".into(),
        ));
    }
    Ok(Scan {
        aio,
        raw,
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
    })
}

/// The model task of a `notify_inval` call mark (`path=P ino=I off=O
/// len=L first=F TAGS`, server/notify.rs): the model's notification
/// invalidates the pages its server changed (`Range`), the whole file
/// (offset 0, len <= 0) or nothing (offset < 0); another range is not
/// modelled, and neither is a notification without a change.
fn notify_inval(args: &str, words: &[&str], seq: u64) -> Result<RawTask, String> {
    use wbspec_models::fuse::config::InvalForm;
    let int = |k: &str| -> Result<i64, String> {
        arg(args, k)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("bad trace: #{seq} notify_inval without a whole {k}="))
    };
    let (off, len) = (int("off")?, int("len")?);
    let tags = words
        .last()
        .filter(|w| !w.contains('='))
        .map(|w| w.to_string())
        .unwrap_or_default();
    let Some(first) = num(arg(args, "first")).filter(|_| !tags.is_empty()) else {
        return nm(format!("#{seq} a notification without a change of the server's file: the model's notify-inval task always changes pages first"));
    };
    let n = tags.len() as u64;
    let form = if off < 0 {
        InvalForm::Attr
    } else if len <= 0 {
        if off != 0 {
            return nm(format!("#{seq} NOTIFY_INVAL_INODE from offset {off} to the end: the model invalidates the changed pages or the whole file"));
        }
        InvalForm::Whole
    } else {
        let (a, b) = (off as u64 / PG, (off + len - 1) as u64 / PG + 1);
        if (a, b) != (first, first + n) {
            return nm(format!("#{seq} NOTIFY_INVAL_INODE of pages {a}..{b}, the server changed {first}..{}: the model invalidates the changed pages", first + n));
        }
        InvalForm::Range
    };
    Ok(RawTask::NotifyInval {
        first,
        n,
        tags,
        form,
    })
}
