//! The raw vocabulary of translation: what the event scan ([`super::scan`])
//! records from a trace before regions exist: requests, observations and
//! syscall tasks in real 4 KiB pages (`RawReq`, `RawObs`, `RawTask`), and
//! `nm`, the not-modelled verdict. [`super::translate`] maps them onto model
//! pages.

#[derive(Clone, Debug)]
pub(super) enum RawReq {
    CacheWrite { first: u64, n: u64, tags: String },
    DirectWrite { first: u64, n: u64, tags: String },
    ThroughWrite { first: u64, n: u64, tags: String },
    Read { first: u64, n: u64 },
    Setattr { size: u64 },
    Fsync,
    Flush,
    Open { task: usize, trunc: bool },
}

#[derive(Clone, Debug)]
pub(super) enum RawObs {
    Call(usize),
    Ret(usize),
    /// An aio task's io_submit returned (harness/src/aio.rs).
    Queued(usize),
    /// A notification task's server change is applied (the recorder's
    /// `server changed ACTOR notify_inval` note, server/notify.rs).
    Changed(usize),
    /// A buffered read returned `bytes` bytes starting at real page
    /// `first`, with these page tags (None: the ret mark has no data=).
    ReadRet(usize, u64, u64, Option<String>),
    Read(RawReq),
    /// A reply: a READ's page tags and byte count.
    Reply(RawReq, Option<String>, Option<u64>),
    /// An -EIO reply (the server failed the request).
    ReplyErr(RawReq),
    /// The environment's loads and stores through a mapping (envmap.rs)
    /// may start (`on`: a mapping's mmap returned) or must have ended
    /// (a munmap or exit began).
    Env {
        on: bool,
        tasks: Vec<usize>,
    },
}

#[derive(Clone, Debug)]
pub(super) enum RawTask {
    Write {
        first: u64,
        n: u64,
        tags: String,
    },
    DioWrite {
        first: u64,
        n: u64,
        tags: String,
    },
    OdirectWrite {
        first: u64,
        n: u64,
        tags: String,
    },
    DioRead {
        first: u64,
        n: u64,
    },
    OdirectRead {
        first: u64,
        n: u64,
    },
    Mmap {
        page: u64,
        tag: String,
    },
    Writeback,
    Read {
        first: u64,
        n: u64,
        /// The open (numbered in trace order) whose fd the read used:
        /// reads of one open share its readahead state (file->f_ra).
        open: Option<usize>,
        /// That open has FMODE_RANDOM (a posix_fadvise(RANDOM) before).
        random: bool,
    },
    SyncRange {
        first: u64,
        n: u64,
    },
    Munmap,
    /// The environment's read fault on real page `page` through a live
    /// MAP_PRIVATE or read-only mapping (envmap.rs): the model's `fault`
    /// task.
    EnvLoad {
        page: u64,
        /// The open (numbered in trace order) the page's mappings were
        /// made from: the file whose readahead state (file->f_ra) its
        /// faults share with that open's reads.
        open: Option<usize>,
    },
    /// The environment's loads and stores to real page `page` through a
    /// live writable MAP_SHARED mapping (envmap.rs): the model's `env`
    /// task, a load then a store, either of which the search may skip.
    EnvAccess {
        page: u64,
        /// As `EnvLoad`'s.
        open: Option<usize>,
    },
    Msync {
        first: u64,
        n: u64,
    },
    Truncate {
        size: u64,
    },
    Fsync,
    Close,
    /// close() of the last caching fd: fuse_release drops the io-mode.
    CloseRelease,
    /// `direct`: the OPEN reply had FOPEN_DIRECT_IO (set at the return).
    Open {
        trunc: bool,
        direct: bool,
    },
    /// The connection aborted through fusectl (the model's `abort`).
    Abort,
    /// The server's change of pages `first..first+n` (their tags), then
    /// FUSE_NOTIFY_INVAL_INODE of the `form` (server/notify.rs).
    NotifyInval {
        first: u64,
        n: u64,
        tags: String,
        form: wbspec_models::fuse::config::InvalForm,
    },
    /// A signal to the task of a pending call (`signal N`, `kill N`).
    Signal {
        target: usize,
        fatal: bool,
    },
}

pub(super) fn nm<T>(why: impl Into<String>) -> Result<T, String> {
    Err(why.into())
}

impl RawTask {
    /// The open whose readahead state (file->f_ra) this task uses: a
    /// buffered read's, or a mapped page's (envmap.rs), when known.
    pub(super) fn ra_open(&self) -> Option<usize> {
        match self {
            RawTask::Read { open, .. }
            | RawTask::EnvLoad { open, .. }
            | RawTask::EnvAccess { open, .. } => *open,
            _ => None,
        }
    }
}
