//! One kernel task of a workload (`TaskSpec`): the syscall or kernel
//! thread it stands for, its page range, and the catalogue's compact
//! syntax (`write 0+2`, `wb all`, `truncate 1`) both ways.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One kernel task of the workload. Page ranges are `first..first+n` in
/// page units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskSpec {
    /// write(2) on a cached open with writeback_cache (whole pages).
    Write { first: u8, n: u8 },
    /// A store through a MAP_SHARED mapping to one page.
    Mmap { page: u8 },
    /// open(2) of the file (fuse_open): with `trunc`, O_TRUNC; without
    /// `keep_cache` (FOPEN_KEEP_CACHE not replied) the page cache is
    /// invalidated after OPEN (launder + wait, real-kernel-fuse.md §0).
    /// With `direct`, the server replies FOPEN_DIRECT_IO: the open takes
    /// no io-mode reference (fuse_file_io_open returns at once).
    Open {
        trunc: bool,
        keep_cache: bool,
        direct: bool,
    },
    /// close(2) of the workload's caching open when it is the last
    /// reference: fuse_flush, then fuse_release (write_inode_now again;
    /// fuse_file_put → fuse_file_io_release: iocachectr--). The RELEASE
    /// request is not modelled.
    CloseRelease,
    /// fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE) over pages
    /// `first..first+n` (the server zeroes them).
    Punch { first: u8, n: u8 },
    /// A read fault through a MAP_PRIVATE mapping (of a FOPEN_DIRECT_IO
    /// open: no io-mode change, kernel-sources.md §6): filemap_fault reads the folio
    /// with the folio locked. `fd`: the open file the mapping was made
    /// from, whose readahead state (file->f_ra) the fault's read-around
    /// sets and its async readahead reads, shared with the reads and
    /// faults that name it (`fault 1 fd=0`); `None`: the fault keeps no
    /// readahead state (read.rs `mark_index`).
    Fault {
        page: u8,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fd: Option<u8>,
    },
    /// Direct I/O (on another file) that reads into a MAP_SHARED mapping of
    /// this page: pin_user_pages faults it writable (fuse_page_mkwrite),
    /// the data lands, and unpin dirties the folio again with
    /// set_page_dirty_lock, without page_mkwrite — "a direct read to an
    /// mmaped fuse file will set the page dirty twice" (kernel-sources.md §3.5).
    Gup { page: u8 },
    /// The flusher / sync_file_range(WRITE): fuse_writepages over the
    /// whole file, WB_SYNC_NONE (`all == false`) or WB_SYNC_ALL.
    Writeback { all: bool },
    /// ftruncate(fd, size) (shrink or extend), size in pages.
    Truncate { size: u8 },
    /// fsync(fd) over the whole file.
    Fsync,
    /// close(fd): fuse_flush.
    Close,
    /// write(2) on a FOPEN_DIRECT_IO open. With `aio` (catalogue
    /// `aio dio-write F+N`) an asynchronous kiocb (io_submit, io_uring):
    /// with FUSE_ASYNC_DIO fuse_direct_IO sends every chunk in the
    /// background and, unless the write extends the file, returns
    /// -EIOCBQUEUED; the completion comes later (aio.rs).
    DioWrite {
        first: u8,
        n: u8,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        aio: bool,
    },
    /// read(2) on a FOPEN_DIRECT_IO open (`aio`: asynchronous, aio.rs).
    DioRead {
        first: u8,
        n: u8,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        aio: bool,
    },
    /// write(2) with O_DIRECT on a cached open (no FOPEN_DIRECT_IO)
    /// (`aio`: asynchronous, aio.rs).
    OdirectWrite {
        first: u8,
        n: u8,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        aio: bool,
    },
    /// read(2) with O_DIRECT on a cached open (no FOPEN_DIRECT_IO)
    /// (`aio`: asynchronous, aio.rs).
    OdirectRead {
        first: u8,
        n: u8,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        aio: bool,
    },
    /// Buffered read(2) (or sendfile/splice from the file) on a cached
    /// open: filemap_read, readahead on a miss (read.rs). `fd`: the open
    /// file, shared with the other reads that name it (`read 1+1 fd=0`),
    /// whose file->f_ra.prev_pos the read's readahead consults and sets;
    /// `None`: a file of its own, opened fresh (prev_pos = -1).
    Read {
        first: u8,
        n: u8,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fd: Option<u8>,
        /// The open file has FMODE_RANDOM (posix_fadvise
        /// POSIX_FADV_RANDOM before the read): page_cache_sync_ra
        /// reads the request as is (force_page_cache_ra), no window.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        random: bool,
    },
    /// munmap of a shared mapping: fuse_vma_close → write_inode_now(inode,
    /// 1), WB_SYNC_ALL writeback of the whole file and a wait.
    Munmap,
    /// msync(MS_SYNC) over pages `first..first+n` of a shared mapping:
    /// vfs_fsync_range(file, start, end, datasync = 1) → fuse_fsync over
    /// the range. (MS_ASYNC starts nothing: not a task.)
    Msync { first: u8, n: u8 },
    /// sync_file_range(SYNC_FILE_RANGE_WRITE) over `first..first+n`:
    /// WB_SYNC_NONE writeback of the range, no wait.
    SyncRange { first: u8, n: u8 },
    /// Readahead of pages `first..first+n` (page_cache_ra_order ->
    /// read_pages -> fuse_readahead), as a buffered read or a fault starts
    /// it; the READs are sent in the background (FUSE_ASYNC_READ).
    Readahead { first: u8, n: u8 },
    /// mmap(MAP_SHARED) of a FOPEN_DIRECT_IO open (needs
    /// direct_io_allow_mmap), then a store to one page: fuse_file_mmap
    /// invalidates the page cache and enters caching io-mode
    /// (fuse_file_cached_io_start, waiting for parallel direct writes).
    DioMmap { page: u8 },
    /// The environment's loads and stores through a MAP_SHARED mapping
    /// of one page (conform of a `wbspec record` trace, harness
    /// conform/envmap.rs): a read fault (`fault`), then a store
    /// (`mmap`). The search may start it at the store, and may end it
    /// after the load (`FuseModel::store_start`), so one task stands for
    /// any sequence of loads and stores to the page. `fd`: as `Fault`'s.
    EnvAccess {
        page: u8,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fd: Option<u8>,
    },
    /// stat(2) with stale attributes: fuse_update_attributes →
    /// fuse_do_getattr (GETATTR) → fuse_change_attributes.
    Stat,
    /// Another client truncates the file on the server (a server-side size
    /// change the kernel learns only from GETATTR or a short READ).
    RemoteTruncate { size: u8 },
    /// The connection is aborted (fuse_abort_conn: umount -f, a write
    /// to /sys/fs/fuse/connections/N/abort, or the daemon's death
    /// releasing /dev/fuse), at any moment (transport.rs).
    Abort,
    /// The request timeout (6.14+, `request_timeout` mount option or
    /// the max_request_timeout sysctl): fuse_check_timeout finds a
    /// request outstanding too long and calls fuse_abort_conn.
    Timeout,
    /// A signal to task `target` (`kill N`: SIGKILL, `signal N`: any
    /// other) while it waits for a synchronous request's reply
    /// (request_wait_answer): FUSE_INTERRUPT for the request, and with a
    /// fatal signal a request not yet read by the daemon is taken back
    /// (-EINTR). Delivered once the target blocks in a request, or after
    /// it returned (then it changes nothing here).
    Signal { target: u8, fatal: bool },
    /// The server changes pages `first..first+n` of its file (another
    /// client's write, a new version) and then sends
    /// FUSE_NOTIFY_INVAL_INODE (notify.rs): over that range
    /// (`Range`), from offset 0 with len 0 (`Whole`: the whole page
    /// cache), or with a negative offset (`Attr`: attributes only). The
    /// change counts as one write whose window closes when the
    /// notification returns to the server.
    NotifyInval { first: u8, n: u8, form: InvalForm },
    /// The server changes pages `first..first+n` and pushes the new data
    /// into the page cache with FUSE_NOTIFY_STORE (notify.rs).
    NotifyStore { first: u8, n: u8 },
}

/// The page range a FUSE_NOTIFY_INVAL_INODE names (fuse_reverse_inval_inode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum InvalForm {
    /// offset and len of the changed pages.
    Range,
    /// offset 0, len 0: pg_end = -1, the whole page cache.
    Whole,
    /// offset < 0: attributes only, no page is invalidated.
    Attr,
}

/// The catalogue's task syntax, one form per task kind (F+N: first page
/// and page count, P: a page, S: a size in pages, N alone: a task index;
/// `a|b`: one of them, `[x]`: optional). Unknown-task errors list it;
/// `wbspec list --task` matches on the kind, the first word.
/// Task kinds whose number is another task's (`signal N`, `kill N`),
/// not a position: never turned into units.
pub const TARGETS_TASK: &[&str] = &["signal", "kill"];

pub const SYNTAX: &[&str] = &[
    "write F+N",
    "sendfile F+N",
    "mmap P",
    "open [trunc] [keep] [direct]",
    "close [release]",
    "punch F+N",
    "fault P [fd=N]",
    "gup P",
    "wb none|all",
    "truncate S",
    "fsync",
    "fdatasync",
    "dio-write F+N",
    "dio-read F+N",
    "odirect-write F+N",
    "odirect-read F+N",
    "aio dio-write|dio-read|odirect-write|odirect-read F+N",
    "read F+N [fd=N] [random]",
    "munmap",
    "msync F+N",
    "sync_file_range F+N",
    "readahead F+N",
    "dio-mmap P",
    "stat",
    "remote-truncate S",
    "abort",
    "timeout",
    "signal N",
    "kill N",
    "notify-inval F+N [whole|attr]",
    "notify-store F+N",
];

impl TaskSpec {
    /// Parses the catalogue's compact syntax, e.g. `write 0+2`, `mmap 1`,
    /// `wb none`, `wb all`, `truncate 1`, `fsync`, `close`,
    /// `dio-write 0+1`, `dio-read 0+1`, `odirect-write 0+1`,
    /// `odirect-read 0+1`.
    pub fn parse(s: &str) -> Result<TaskSpec, String> {
        let mut words: Vec<&str> = s.split_whitespace().collect();
        // `aio dio-write 0+1`: the direct task on an asynchronous kiocb
        let aio = words.first() == Some(&"aio");
        if aio {
            words.remove(0);
        }
        let range = |w: Option<&&str>| -> Result<(u8, u8), String> {
            let w = w.ok_or_else(|| format!("task '{s}': missing page range like 0+2"))?;
            let (a, b) = w.split_once('+').unwrap_or((w, "1"));
            let first = a
                .parse::<u8>()
                .map_err(|_| format!("task '{s}': bad first page '{a}'"))?;
            let n = b
                .parse::<u8>()
                .map_err(|_| format!("task '{s}': bad page count '{b}'"))?;
            if n == 0 {
                return Err(format!("task '{s}': empty page range"));
            }
            Ok((first, n))
        };
        let num = |w: Option<&&str>| -> Result<u8, String> {
            w.ok_or_else(|| format!("task '{s}': missing number"))?
                .parse::<u8>()
                .map_err(|_| format!("task '{s}': bad number"))
        };
        // `fd=F`: the open file whose readahead state a read or a fault
        // shares (`None`: no word)
        let fd_word = |w: Option<&&str>, usage: &str| -> Result<Option<u8>, String> {
            match w.map(|w| w.strip_prefix("fd=")) {
                None => Ok(None),
                Some(Some(f)) => match f.parse::<u8>() {
                    Ok(f) if (f as usize) < super::super::state::MAX_FDS => Ok(Some(f)),
                    _ => Err(format!(
                        "task '{s}': fd= takes 0 to {}",
                        super::super::state::MAX_FDS - 1
                    )),
                },
                Some(None) => Err(format!("task '{s}': {usage}")),
            }
        };
        let t = match words.first().copied() {
            Some("write") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::Write { first, n }
            }
            Some("mmap") => TaskSpec::Mmap {
                page: num(words.get(1))?,
            },
            Some("open") => {
                let mut trunc = false;
                let mut keep_cache = false;
                let mut direct = false;
                for w in &words[1..] {
                    match *w {
                        "trunc" => trunc = true,
                        "keep" => keep_cache = true,
                        "direct" => direct = true,
                        _ => {
                            return Err(format!(
                                "task '{s}': open takes 'trunc', 'keep' and/or 'direct'"
                            ))
                        }
                    }
                }
                TaskSpec::Open {
                    trunc,
                    keep_cache,
                    direct,
                }
            }
            Some("punch") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::Punch { first, n }
            }
            Some("fault") => TaskSpec::Fault {
                page: num(words.get(1))?,
                fd: fd_word(words.get(2), "fault takes a page and optionally fd=F")?,
            },
            Some("env") => TaskSpec::EnvAccess {
                page: num(words.get(1))?,
                fd: fd_word(words.get(2), "env takes a page and optionally fd=F")?,
            },
            Some("gup") => TaskSpec::Gup {
                page: num(words.get(1))?,
            },
            Some("wb") => match words.get(1).copied() {
                Some("none") => TaskSpec::Writeback { all: false },
                Some("all") => TaskSpec::Writeback { all: true },
                _ => return Err(format!("task '{s}': wb takes 'none' or 'all'")),
            },
            Some("truncate") => TaskSpec::Truncate {
                size: num(words.get(1))?,
            },
            // fdatasync(2) is fuse_fsync with datasync = 1: the same path
            // (the flag only reaches the FSYNC request, not modelled)
            Some("fsync") | Some("fdatasync") => TaskSpec::Fsync,
            Some("close") => match words.get(1).copied() {
                None => TaskSpec::Close,
                Some("release") => TaskSpec::CloseRelease,
                Some(_) => return Err(format!("task '{s}': close takes only 'release'")),
            },
            Some("dio-write") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::DioWrite { first, n, aio }
            }
            Some("dio-read") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::DioRead { first, n, aio }
            }
            Some("odirect-write") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::OdirectWrite { first, n, aio }
            }
            Some("odirect-read") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::OdirectRead { first, n, aio }
            }
            Some("read") => {
                let (first, n) = range(words.get(1))?;
                let usage = "read takes a range and optionally fd=F, then random";
                let mut rest = &words[2.min(words.len())..];
                let fd = match rest.first() {
                    Some(w) if w.starts_with("fd=") => {
                        rest = &rest[1..];
                        fd_word(Some(w), usage)?
                    }
                    _ => None,
                };
                let random = match rest {
                    [] => false,
                    ["random"] => true,
                    _ => return Err(format!("task '{s}': {usage}")),
                };
                TaskSpec::Read {
                    first,
                    n,
                    fd,
                    random,
                }
            }
            // sendfile(2) into the file: iter_file_splice_write →
            // vfs_iter_write → fuse_file_write_iter, the write(2) path
            Some("sendfile") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::Write { first, n }
            }
            Some("munmap") => TaskSpec::Munmap,
            Some("msync") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::Msync { first, n }
            }
            Some("sync_file_range") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::SyncRange { first, n }
            }
            Some("readahead") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::Readahead { first, n }
            }
            Some("dio-mmap") => TaskSpec::DioMmap {
                page: num(words.get(1))?,
            },
            Some("stat") => TaskSpec::Stat,
            Some("remote-truncate") => TaskSpec::RemoteTruncate {
                size: num(words.get(1))?,
            },
            Some("abort") => TaskSpec::Abort,
            Some("timeout") => TaskSpec::Timeout,
            Some("signal") => TaskSpec::Signal {
                target: num(words.get(1))?,
                fatal: false,
            },
            Some("kill") => TaskSpec::Signal {
                target: num(words.get(1))?,
                fatal: true,
            },
            Some("notify-inval") => {
                let (first, n) = range(words.get(1))?;
                let form = match words.get(2).copied() {
                    None => InvalForm::Range,
                    Some("whole") => InvalForm::Whole,
                    Some("attr") => InvalForm::Attr,
                    Some(_) => {
                        return Err(format!(
                            "task '{s}': notify-inval takes 'whole' or 'attr' after its range"
                        ))
                    }
                };
                TaskSpec::NotifyInval { first, n, form }
            }
            Some("notify-store") => {
                let (first, n) = range(words.get(1))?;
                TaskSpec::NotifyStore { first, n }
            }
            _ => return Err(format!("unknown task '{s}' (tasks: {})", SYNTAX.join(", "))),
        };
        if aio && !t.is_aio() {
            return Err(format!(
                "task '{s}': 'aio' applies only to dio-write, dio-read, odirect-write and odirect-read"
            ));
        }
        let max_words = match t {
            TaskSpec::Fsync
            | TaskSpec::Close
            | TaskSpec::Stat
            | TaskSpec::Munmap
            | TaskSpec::Abort
            | TaskSpec::Timeout => 1,
            TaskSpec::Open { .. } => 4,
            TaskSpec::NotifyInval { .. } => 3,
            TaskSpec::Read { .. } => 4,
            TaskSpec::Fault { .. } | TaskSpec::EnvAccess { .. } => 3,
            _ => 2,
        };
        if words.len() > max_words {
            return Err(format!("task '{s}': trailing words"));
        }
        Ok(t)
    }

    /// Short name used in narratives (≤ 10 columns).
    pub fn short(&self) -> &'static str {
        match self {
            TaskSpec::Write { .. } => "write",
            TaskSpec::Mmap { .. } => "mmap-store",
            TaskSpec::Gup { .. } => "gup-dirty",
            TaskSpec::Fault { .. } => "priv-fault",
            TaskSpec::Punch { .. } => "punch-hole",
            TaskSpec::Open { trunc: true, .. } => "open-trunc",
            TaskSpec::Open { .. } => "open",
            TaskSpec::Writeback { all: false } => "flusher",
            TaskSpec::Writeback { all: true } => "sync-wb",
            TaskSpec::Truncate { .. } => "ftruncate",
            TaskSpec::Fsync => "fsync",
            TaskSpec::Close => "close",
            TaskSpec::CloseRelease => "close-rel",
            TaskSpec::DioWrite { aio: true, .. } => "aio-dio-wr",
            TaskSpec::DioRead { aio: true, .. } => "aio-dio-rd",
            TaskSpec::OdirectWrite { aio: true, .. } => "aio-odir-w",
            TaskSpec::OdirectRead { aio: true, .. } => "aio-odir-r",
            TaskSpec::DioWrite { .. } => "dio-write",
            TaskSpec::DioRead { .. } => "dio-read",
            TaskSpec::OdirectWrite { .. } => "odir-write",
            TaskSpec::OdirectRead { .. } => "odir-read",
            TaskSpec::Read { .. } => "read",
            TaskSpec::Munmap => "munmap",
            TaskSpec::Msync { .. } => "msync",
            TaskSpec::SyncRange { .. } => "sync-range",
            TaskSpec::Readahead { .. } => "readahead",
            TaskSpec::DioMmap { .. } => "dio-mmap",
            TaskSpec::EnvAccess { .. } => "env-access",
            TaskSpec::Stat => "stat",
            TaskSpec::RemoteTruncate { .. } => "remote-trn",
            TaskSpec::Abort => "abort",
            TaskSpec::Timeout => "timeout",
            TaskSpec::Signal { fatal: false, .. } => "signal",
            TaskSpec::Signal { fatal: true, .. } => "kill",
            TaskSpec::NotifyInval { .. } => "n-inval",
            TaskSpec::NotifyStore { .. } => "n-store",
        }
    }

    /// Does this task produce data (and so owns a version number)?
    pub fn writes(&self) -> bool {
        matches!(
            self,
            TaskSpec::Write { .. }
                | TaskSpec::Mmap { .. }
                | TaskSpec::Gup { .. }
                | TaskSpec::DioMmap { .. }
                | TaskSpec::EnvAccess { .. }
                | TaskSpec::RemoteTruncate { .. }
                | TaskSpec::Punch { .. }
                | TaskSpec::Open { trunc: true, .. }
                | TaskSpec::Truncate { .. }
                | TaskSpec::DioWrite { .. }
                | TaskSpec::OdirectWrite { .. }
                | TaskSpec::NotifyInval { .. }
                | TaskSpec::NotifyStore { .. }
        )
    }

    /// Does the task use the workload's caching open (opened before the
    /// workload and held throughout: fuse_file_cached_io_start ran, so
    /// FUSE_I_CACHE_IO_MODE is set from the start)? write(2) in either
    /// mode, MAP_SHARED stores and O_DIRECT on a non-FOPEN_DIRECT_IO open
    /// do; FOPEN_DIRECT_IO I/O, MAP_PRIVATE faults, writeback, truncate,
    /// fsync, close and fallocate may use any open.
    pub fn uses_cached_open(&self) -> bool {
        matches!(
            self,
            TaskSpec::Write { .. }
                | TaskSpec::Mmap { .. }
                | TaskSpec::EnvAccess { .. }
                | TaskSpec::Gup { .. }
                | TaskSpec::OdirectWrite { .. }
                | TaskSpec::OdirectRead { .. }
                | TaskSpec::CloseRelease
        )
    }

    /// A direct task on an asynchronous kiocb (`aio ...`, aio.rs)?
    pub fn is_aio(&self) -> bool {
        matches!(
            self,
            TaskSpec::DioWrite { aio: true, .. }
                | TaskSpec::DioRead { aio: true, .. }
                | TaskSpec::OdirectWrite { aio: true, .. }
                | TaskSpec::OdirectRead { aio: true, .. }
        )
    }

    pub fn range(&self) -> Option<(u8, u8)> {
        match *self {
            TaskSpec::Write { first, n }
            | TaskSpec::DioWrite { first, n, .. }
            | TaskSpec::DioRead { first, n, .. }
            | TaskSpec::OdirectWrite { first, n, .. }
            | TaskSpec::OdirectRead { first, n, .. }
            | TaskSpec::Read { first, n, .. }
            | TaskSpec::Msync { first, n }
            | TaskSpec::SyncRange { first, n }
            | TaskSpec::Readahead { first, n }
            | TaskSpec::NotifyInval { first, n, .. }
            | TaskSpec::NotifyStore { first, n }
            | TaskSpec::Punch { first, n } => Some((first, n)),
            TaskSpec::Mmap { page }
            | TaskSpec::Gup { page }
            | TaskSpec::Fault { page, .. }
            | TaskSpec::EnvAccess { page, .. }
            | TaskSpec::DioMmap { page } => Some((page, 1)),
            _ => None,
        }
    }
}

impl fmt::Display for TaskSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TaskSpec::Write { first, n } => write!(f, "write {first}+{n}"),
            TaskSpec::Mmap { page } => write!(f, "mmap {page}"),
            TaskSpec::Gup { page } => write!(f, "gup {page}"),
            TaskSpec::Fault { page, fd } => write!(f, "fault {page}{}", fd_suffix(fd)),
            TaskSpec::EnvAccess { page, fd } => write!(f, "env {page}{}", fd_suffix(fd)),
            TaskSpec::Punch { first, n } => write!(f, "punch {first}+{n}"),
            TaskSpec::Open {
                trunc,
                keep_cache,
                direct,
            } => write!(
                f,
                "open{}{}{}",
                if trunc { " trunc" } else { "" },
                if keep_cache { " keep" } else { "" },
                if direct { " direct" } else { "" }
            ),
            TaskSpec::Writeback { all } => write!(f, "wb {}", if all { "all" } else { "none" }),
            TaskSpec::Truncate { size } => write!(f, "truncate {size}"),
            TaskSpec::Fsync => write!(f, "fsync"),
            TaskSpec::Close => write!(f, "close"),
            TaskSpec::CloseRelease => write!(f, "close release"),
            TaskSpec::DioWrite { first, n, aio } => {
                write!(f, "{}dio-write {first}+{n}", if aio { "aio " } else { "" })
            }
            TaskSpec::DioRead { first, n, aio } => {
                write!(f, "{}dio-read {first}+{n}", if aio { "aio " } else { "" })
            }
            TaskSpec::OdirectWrite { first, n, aio } => {
                write!(
                    f,
                    "{}odirect-write {first}+{n}",
                    if aio { "aio " } else { "" }
                )
            }
            TaskSpec::OdirectRead { first, n, aio } => {
                write!(
                    f,
                    "{}odirect-read {first}+{n}",
                    if aio { "aio " } else { "" }
                )
            }
            TaskSpec::Read {
                first,
                n,
                fd,
                random,
            } => write!(
                f,
                "read {first}+{n}{}{}",
                fd_suffix(fd),
                if random { " random" } else { "" }
            ),
            TaskSpec::Munmap => write!(f, "munmap"),
            TaskSpec::Msync { first, n } => write!(f, "msync {first}+{n}"),
            TaskSpec::SyncRange { first, n } => write!(f, "sync_file_range {first}+{n}"),
            TaskSpec::Readahead { first, n } => write!(f, "readahead {first}+{n}"),
            TaskSpec::DioMmap { page } => write!(f, "dio-mmap {page}"),
            TaskSpec::Stat => write!(f, "stat"),
            TaskSpec::RemoteTruncate { size } => write!(f, "remote-truncate {size}"),
            TaskSpec::Abort => write!(f, "abort"),
            TaskSpec::Timeout => write!(f, "timeout"),
            TaskSpec::Signal { target, fatal } => {
                write!(f, "{} {target}", if fatal { "kill" } else { "signal" })
            }
            TaskSpec::NotifyInval { first, n, form } => write!(
                f,
                "notify-inval {first}+{n}{}",
                match form {
                    InvalForm::Range => "",
                    InvalForm::Whole => " whole",
                    InvalForm::Attr => " attr",
                }
            ),
            TaskSpec::NotifyStore { first, n } => write!(f, "notify-store {first}+{n}"),
        }
    }
}

/// ` fd=F`, or nothing for a task with a fresh open of its own.
fn fd_suffix(fd: Option<u8>) -> String {
    fd.map(|f| format!(" fd={f}")).unwrap_or_default()
}
