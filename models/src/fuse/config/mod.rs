//! Configuration of the FUSE model: kernel state, variant flags, geometry
//! and workload. Everything here is data; the model never branches on a
//! check's name.
//!
//! This file holds the [`Config`] itself (geometry, mount options, the
//! workload's tasks, the bounds every model array is sized by) and the
//! error-reply bits. The rest, one concern a file:
//! - `variant.rs`: the kernel states and their behaviour switches
//!   ([`Kernel`], [`Variant`]);
//! - `task.rs`: one kernel task of the workload ([`TaskSpec`]) and its
//!   catalogue syntax;
//! - `validate.rs`: `Config::validate`, what the model does not cover;
//! - `table.rs`: `Config::from_table`, the FUSE keys of a catalogue entry.

use serde::{Deserialize, Serialize};

mod table;
mod task;
mod validate;
mod variant;

pub use task::{InvalForm, TaskSpec, SYNTAX as TASK_SYNTAX, TARGETS_TASK};
pub use variant::{Kernel, Variant, VARIANT_FLAGS};

/// Most model positions (pages, or units below a page) a configuration
/// may have. The catalogue's checks have at most 4; more are for traces
/// whose I/O names more offsets (conform's uneven positions: sqlite's
/// database and journals need 12-14).
pub const MAX_PAGES: usize = 16;
/// The width of the state's byte image (encode.rs) for a configuration
/// of at most this many positions: such checks keep the image, and so the
/// fingerprints, they had when the state held 4 pages.
pub const NARROW_PAGES: usize = 4;
/// A set of model positions, bit p for position p.
pub type PageMask = u16;

/// Per-position arrays in JSON (saved traces, reports): the entries up
/// to the last one that is not the fill value, at least 4, as written
/// when the model had 4 positions; a shorter array read back is filled.
mod per_position {
    use super::MAX_PAGES;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    fn ser<T: Serialize + PartialEq + Copy, S: Serializer>(
        a: &[T; MAX_PAGES],
        fill: T,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let n = a.iter().rposition(|x| *x != fill).map_or(0, |i| i + 1);
        a[..n.max(4)].serialize(s)
    }

    fn de<'d, T: Deserialize<'d> + Copy, D: Deserializer<'d>>(
        d: D,
        fill: T,
    ) -> Result<[T; MAX_PAGES], D::Error> {
        let v: Vec<T> = Vec::deserialize(d)?;
        if v.len() > MAX_PAGES {
            return Err(serde::de::Error::custom(format!(
                "{} positions, the model has at most {MAX_PAGES}",
                v.len()
            )));
        }
        let mut a = [fill; MAX_PAGES];
        a[..v.len()].copy_from_slice(&v);
        Ok(a)
    }

    pub fn ser_zeros<S: Serializer>(a: &[u32; MAX_PAGES], s: S) -> Result<S::Ok, S::Error> {
        ser(a, 0, s)
    }
    pub fn de_zeros<'d, D: Deserializer<'d>>(d: D) -> Result<[u32; MAX_PAGES], D::Error> {
        de(d, 0)
    }
    pub fn ser_ones<S: Serializer>(a: &[u8; MAX_PAGES], s: S) -> Result<S::Ok, S::Error> {
        ser(a, 1, s)
    }
    pub fn de_ones<'d, D: Deserializer<'d>>(d: D) -> Result<[u8; MAX_PAGES], D::Error> {
        de(d, 1)
    }
}

/// The positions `0..n` (n <= MAX_PAGES).
pub fn low_mask(n: u8) -> PageMask {
    ((1u32 << n) - 1) as PageMask
}
/// Most daemon worker threads.
pub const MAX_WORKERS: usize = 3;
/// Most io_uring queues (CPUs) a configuration models (uring.rs).
pub const MAX_URING_QUEUES: usize = 2;
/// Most kernel tasks in one workload. Versions are 4-bit (see `hist`), and
/// versions 0 and 1 are reserved, so at most 14 writing tasks fit; we keep
/// it smaller to bound the state.
pub const MAX_TASKS: usize = 8;

/// A complete configuration of the FUSE model.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Config {
    pub kernel: Kernel,
    /// The code tree the narrations name when the catalogue's label is
    /// not the kernel state's own (`kernel = "T17"`: T's mechanics, 6.17's
    /// functions); `None`: `Tree::of(kernel)`. Never changes mechanics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<crate::fuse::step::Tree>,
    pub variant: Variant,
    /// Positions modelled (1..=MAX_PAGES; a catalogue check 1..=4).
    pub pages: u8,
    /// File size in pages at the start (server size == i_size).
    pub init_size: u8,
    /// Bitmask of pages that start in the page cache, uptodate and clean.
    pub cached: PageMask,
    /// Bitmask of pages that start dirty (data written before the
    /// workload began; implies cached).
    pub dirty: PageMask,
    /// FUSE daemon worker threads (1 = FIFO server, 2 or 3 = any order).
    pub daemon_threads: u8,
    /// fc->direct_io_allow_mmap (FUSE_DIRECT_IO_ALLOW_MMAP).
    pub direct_io_allow_mmap: bool,
    /// The server replies FOPEN_PARALLEL_DIRECT_WRITES to the
    /// FOPEN_DIRECT_IO opens. Whether fuse_dio_lock then takes i_rwsem
    /// shared follows from the io-mode (State::iocachectr,
    /// FUSE_I_CACHE_IO_MODE: no caching open) and EOF, step by step.
    #[serde(default)]
    pub parallel_dio: bool,
    /// FUSE_ATOMIC_O_TRUNC: OPEN carries O_TRUNC (no SETATTR), with
    /// FUSE_NOWRITE held around it.
    #[serde(default)]
    pub atomic_o_trunc: bool,
    /// FUSE_WRITEBACK_CACHE negotiated (default). Without it, write(2) is
    /// write-through (fuse_perform_write: a synchronous WRITE per call).
    #[serde(default = "yes")]
    pub writeback_cache: bool,
    /// FUSE_AUTO_INVAL_DATA negotiated (fc->auto_inval_data; libfuse 3
    /// asks for it by default): every buffered read first calls
    /// fuse_update_attributes(STATX_SIZE) (fuse_cache_read_iter), and
    /// fuse_change_attributes_i invalidates the page cache when the
    /// server's mtime moved (autoinval.rs). The model's attributes always
    /// time out (attr_timeout 0), so that call always sends GETATTR,
    /// unless `attr_valid`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_inval_data: bool,
    /// With auto_inval_data: the attributes do not time out during the
    /// run (a long attr_timeout), so a read's fuse_update_attributes
    /// sends GETATTR only when fi->inval_mask has STATX_SIZE and no cache
    /// mask hides it (fuse_update_get_attr). Refused with a `stat` task
    /// (its STATX_BASIC_STATS request would need fi->inval_mask's
    /// FUSE_STATX_MODIFY bits, which are not tracked).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub attr_valid: bool,
    /// Blocks per folio (state C only: 2, so a folio's dirty blocks can be
    /// split across WRITEs). Model "pages" are then blocks.
    #[serde(default = "one_block")]
    pub folio_blocks: u8,
    /// fc->max_pages: most folios in one writeback WRITE (and in one
    /// readahead READ, unless `read_max_pages` says otherwise).
    pub max_pages: u8,
    /// The readahead READ's cap where it is not `max_pages` (0: it is).
    /// A recorded trace's writeback WRITEs are capped by max_write, its
    /// READs by the kernel's fc->max_pages, which the server sets from
    /// max(max_write, max_readahead) (fuser 0.18: 32 pages for a
    /// max_write below 128 KiB); conform sets both (translate.rs).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_max_pages: u8,
    /// fc->max_pages and max_write for a writeback or write-through
    /// WRITE in kernel pages, where positions of one page split differ
    /// in size (conform, translate.rs): the model then counts the kernel
    /// pages a batch spans, as it does with uneven positions, and not
    /// positions against `max_pages` (M-maxpages). 0: it counts
    /// positions.
    #[serde(default, skip_serializing_if = "is_zero16")]
    pub max_kpages: u16,
    /// The same for a readahead READ (fc->max_pages).
    #[serde(default, skip_serializing_if = "is_zero16")]
    pub read_max_kpages: u16,
    pub tasks: Vec<TaskSpec>,
    /// Per task, the workload thread that runs it (`threads = [[...]]`):
    /// a thread runs its tasks in order, each starting only once the one
    /// before it has returned. Empty: every task is a thread of its own
    /// (`tasks = [...]`), all issued at once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread: Vec<u8>,
    /// Trace conformance runs a long trace's syscalls a few at a time in
    /// the task slots (harness/src/conform/search.rs); what depends on the
    /// whole workload is then given here rather than read off `tasks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole: Option<Whole>,
    /// Per task, the data version it writes (empty: task t writes t + 2).
    /// Trace conformance gives a slot's next syscall a version no state
    /// holds (harness/src/conform/slots.rs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<u8>,
    /// fc->max_background: background requests (writeback WRITEs,
    /// readahead READs, async direct I/O) beyond it wait on fc->bg_queue,
    /// and non-forced ones block in fuse_get_req. `None`: unbounded.
    #[serde(default)]
    pub max_background: Option<u8>,
    /// fc->congestion_threshold: WB_SYNC_NONE writeback and async
    /// readahead stop while num_background reaches it. `None`: never.
    #[serde(default)]
    pub congestion_threshold: Option<u8>,
    /// FUSE_ASYNC_DIO: O_DIRECT I/O through fuse_direct_IO (no
    /// FOPEN_DIRECT_IO) sends its requests as background requests.
    #[serde(default)]
    pub async_dio: bool,
    /// FUSE over io_uring (uring.rs): 0 = /dev/fuse; Q = 1 or 2 ring
    /// queues (one per CPU), daemon worker w serving queue w % Q, each
    /// request queued on the queue of the CPU its task runs on.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uring_queues: u8,
    /// How many 4 KiB pages each model page stands for (1 in the
    /// catalogue; trace conformance maps runs of real pages onto one model
    /// page). Only the readahead window arithmetic of mm/readahead.c,
    /// which counts real pages, reads it.
    #[serde(
        default = "one_each",
        skip_serializing_if = "is_one_each",
        serialize_with = "per_position::ser_ones",
        deserialize_with = "per_position::de_ones"
    )]
    pub real_pages: [u8; MAX_PAGES],
    /// Legacy (cgroup v1) memcg reclaim reaches the daemon: a worker
    /// handling a request may enter direct reclaim (reclaim.rs).
    #[serde(default)]
    pub memcg_v1: bool,
    /// The rest of the reclaim environment (reclaim.rs): cgroup v2 memcg
    /// reclaim instead of v1, MGLRU, where the file's folios are charged.
    #[serde(default, skip_serializing_if = "ReclaimEnv::is_default")]
    pub reclaim_env: ReclaimEnv,
    /// T, T2: pages per folio once large folios are enabled (whole-folio
    /// dirty and uptodate, one PG_writeback per folio), before the order
    /// cap (lfolio.rs). 1 = order 0, as in every released kernel.
    #[serde(default = "one_block")]
    pub folio_pages: u8,
    /// C: blocks per page (sub-page blocks, fuseblk); model "pages" are
    /// then blocks and `folio_blocks` is a multiple of it (wbslots.rs).
    #[serde(default = "one_block")]
    pub blocks_per_page: u8,
    /// fc->max_read and fc->max_write in pages (None: larger than any
    /// request of the configuration).
    #[serde(default)]
    pub max_read: Option<u8>,
    #[serde(default)]
    pub max_write: Option<u8>,
    /// Requests the server may fail (bit per `ERROR_OPS` entry): the
    /// daemon may answer such a request with -EIO instead of applying it.
    #[serde(default)]
    pub errors: u16,
    /// Direct requests (WRITE, READ: bits as in `ERROR_OPS`) the server may
    /// answer short: one page less than asked (`short = [...]`).
    #[serde(default)]
    pub short: u16,
    /// Sub-page geometry: the kernel's PAGE_SIZE, model units per page and
    /// the byte limits the server and mount negotiate (subpage.rs).
    #[serde(default, skip_serializing_if = "SubPage::is_default")]
    pub sub: SubPage,
    /// Op labels dropped from the task programs (`drop = [...]`,
    /// `wbspec check --drop`; oplabel.rs): a what-if run, not the
    /// catalogue's kernel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop: Vec<String>,
}

/// Sizes below a page (issue 18): with `units_per_page` U > 1, the
/// model's positions ("pages" p0, p1, ... of `Config::pages`, task ranges,
/// i_size) are units of PAGE_SIZE / U bytes, and a kernel page (an order-0
/// folio, or a large folio of `folio_pages` pages) is U units. The byte
/// limits are what the server's INIT reply (max_write) and the mount
/// option (max_read) give, after the kernel's clamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SubPage {
    /// Model units per kernel page (1, 2 or 4).
    pub units_per_page: u8,
    /// The kernel's PAGE_SIZE in bytes (4096, 16384, 65536).
    pub page_size: u32,
    /// fc->max_read in bytes (`None`: `Config::max_read` in pages, or
    /// unlimited).
    pub max_read_bytes: Option<u32>,
    /// fc->max_write in bytes (`None`: `Config::max_write` in pages, or
    /// unlimited).
    pub max_write_bytes: Option<u32>,
    /// Uneven positions (layout.rs): the bytes of position 0, 1, ...;
    /// 0 past the last. All 0: whole pages or uniform units.
    #[serde(
        default,
        skip_serializing_if = "no_layout",
        serialize_with = "per_position::ser_zeros",
        deserialize_with = "per_position::de_zeros"
    )]
    pub unit_bytes: [u32; MAX_PAGES],
}

fn no_layout(b: &[u32; MAX_PAGES]) -> bool {
    b[0] == 0
}

impl Default for SubPage {
    fn default() -> Self {
        SubPage {
            units_per_page: 1,
            page_size: 4096,
            max_read_bytes: None,
            max_write_bytes: None,
            unit_bytes: [0; MAX_PAGES],
        }
    }
}

impl SubPage {
    pub fn is_default(&self) -> bool {
        *self == SubPage::default()
    }

    /// Bytes per model unit.
    pub fn unit_bytes(&self) -> u32 {
        self.page_size / self.units_per_page.max(1) as u32
    }
}

/// What the model reads off the whole workload (see `Config::whole`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Whole {
    pub attr_readers: bool,
    pub cached_opens: u8,
}

fn one_each() -> [u8; MAX_PAGES] {
    [1; MAX_PAGES]
}

fn is_one_each(r: &[u8; MAX_PAGES]) -> bool {
    *r == one_each()
}

/// Requests a check may let the server fail (`errors = [...]`), in bit
/// order. OPEN and FALLOCATE errors are not modelled.
pub const ERROR_OPS: &[&str] = &["WRITE", "READ", "SETATTR", "FSYNC", "FLUSH"];

/// Parses a check's `short` list (WRITE, READ) into `ERROR_OPS` bits.
pub fn parse_short(names: &[String]) -> Result<u16, String> {
    for n in names {
        if n != "WRITE" && n != "READ" {
            return Err(format!(
                "short: '{n}' cannot be answered short (known: WRITE, READ)"
            ));
        }
    }
    parse_errors(names)
}

/// Parses a check's `errors` list into the bitmask of `ERROR_OPS`.
pub fn parse_errors(names: &[String]) -> Result<u16, String> {
    let mut m = 0u16;
    for n in names {
        match ERROR_OPS.iter().position(|o| o == n) {
            Some(i) => m |= 1 << i,
            None => {
                return Err(format!(
                    "errors: unknown request '{n}' (known: {})",
                    ERROR_OPS.join(", ")
                ))
            }
        }
    }
    Ok(m)
}

fn one_block() -> u8 {
    1
}

fn yes() -> bool {
    true
}

impl Config {
    /// The code tree the configuration's narrations name.
    pub fn tree(&self) -> crate::fuse::step::Tree {
        self.tree
            .unwrap_or(crate::fuse::step::Tree::of(self.kernel))
    }

    /// Does anything read fi->attr_version (a GETATTR, or a page-cache
    /// READ that may be short on a write-through mount)? Without a reader
    /// the model does not track attr_version, the size history (a4) or a
    /// write-through write's FUSE_I_SIZE_UNSTABLE: nothing could tell.
    pub fn attr_readers(&self) -> bool {
        if let Some(w) = self.whole {
            return w.attr_readers;
        }
        self.tasks.iter().any(|t| match t {
            TaskSpec::Stat | TaskSpec::RemoteTruncate { .. } => true,
            // fuse_cache_read_iter's GETATTR (auto_inval_data)
            TaskSpec::Read { .. } => self.auto_inval_data,
            TaskSpec::Mmap { .. }
            | TaskSpec::Gup { .. }
            | TaskSpec::Fault { .. }
            | TaskSpec::EnvAccess { .. }
            | TaskSpec::DioMmap { .. } => !self.writeback_cache,
            _ => false,
        })
    }

    /// Caching opens held for the whole workload (fi->iocachectr at the
    /// start): one if any task uses it.
    pub fn cached_opens(&self) -> u8 {
        if let Some(w) = self.whole {
            return w.cached_opens;
        }
        self.tasks.iter().any(|t| t.uses_cached_open()) as u8
    }

    /// The task that runs before task `t` on its thread (`None`: the
    /// thread's first task, or every task its own thread).
    pub fn pred(&self, t: usize) -> Option<usize> {
        let th = *self.thread.get(t)?;
        (0..t).rev().find(|&u| self.thread[u] == th)
    }

    /// Threads of the workload: the task indices of each, in order.
    pub fn threads(&self) -> Vec<Vec<usize>> {
        if self.thread.is_empty() {
            return (0..self.tasks.len()).map(|t| vec![t]).collect();
        }
        let n = self
            .thread
            .iter()
            .copied()
            .max()
            .map_or(0, |m| m as usize + 1);
        (0..n)
            .map(|th| {
                (0..self.tasks.len())
                    .filter(|&t| self.thread[t] as usize == th)
                    .collect()
            })
            .collect()
    }
}

/// Where and how a daemon worker's direct reclaim runs (reclaim.rs).
/// Catalogue keys `memcg_v2`, `mglru`, `charged_elsewhere`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReclaimEnv {
    /// cgroup v2 memcg reclaim reaches the daemon (instead of v1):
    /// writeback_throttling_sane() is true there, so shrink_folio_list
    /// only ever marks a folio under writeback (case 2).
    #[serde(default)]
    pub memcg_v2: bool,
    /// MGLRU (lru_gen_enabled()): sort_folio moves a folio under
    /// writeback to the next generation (setting PG_reclaim) and never
    /// isolates it, so reclaim never waits on it.
    #[serde(default)]
    pub mglru: bool,
    /// The file's folios are charged to a memcg the server does not
    /// allocate in: the server's memcg reclaim never meets them.
    #[serde(default)]
    pub charged_elsewhere: bool,
}

impl ReclaimEnv {
    pub fn is_default(&self) -> bool {
        *self == ReclaimEnv::default()
    }
}

fn is_zero(v: &u8) -> bool {
    *v == 0
}

fn is_zero16(v: &u16) -> bool {
    *v == 0
}
