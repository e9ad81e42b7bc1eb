//! The recording server's configuration: which FUSE_INIT flags it
//! negotiates, what it replies to OPEN, its watchdog bound, and the
//! command-line form the runner passes to `fuse-recorder`. It is also
//! recorded in the trace header.

/// Server configuration (also recorded in the trace header).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ServerConfig {
    /// Negotiate FUSE_WRITEBACK_CACHE.
    pub writeback_cache: bool,
    pub max_write: u32,
    pub max_background: u16,
    /// Always set together with max_background (fuser's default 3/4 rounds
    /// max_background=1 down to 0, which the kernel ignores).
    pub congestion_threshold: u16,
    /// Negotiate FUSE_DIRECT_IO_ALLOW_MMAP.
    pub direct_io_allow_mmap: bool,
    /// Negotiate FUSE_ATOMIC_O_TRUNC.
    pub atomic_o_trunc: bool,
    /// Reply FOPEN_DIRECT_IO to OPEN/CREATE whose flags contain O_DIRECT.
    pub dio_on_odirect: bool,
    /// Reply FOPEN_KEEP_CACHE to every OPEN/CREATE.
    pub keep_cache: bool,
    /// Reply FOPEN_PARALLEL_DIRECT_WRITES with every FOPEN_DIRECT_IO.
    pub parallel_dio: bool,
    /// Negotiate FUSE_ASYNC_DIO (fc->async_dio: a direct I/O on an
    /// asynchronous kiocb is sent in the background, fuse_direct_IO).
    /// Off by default, so the recorded traces of the other scenarios keep
    /// their INIT; absent from older trace headers (read as false).
    #[serde(default)]
    pub async_dio: bool,
    /// Answer GETXATTR with ENODATA (the kernel keeps asking) instead of
    /// ENOSYS (the kernel stops asking: fc->no_getxattr).
    pub xattr_enodata: bool,
    /// Watchdog bound for a held reply.
    pub hold_timeout_ms: u64,
    /// Entry and attribute TTL (long and constant: no surprise GETATTRs).
    pub ttl_ms: u64,
    /// After the session ends (the connection aborted: the dispatch
    /// thread's read fails with ENODEV), keep the control socket serving
    /// until `quit` (or [`LINGER_MAX_MS`]), so a scenario can still log
    /// its marks after an abort. Absent from headers when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub linger: bool,
}

/// Longest a lingering server waits for `quit` after its session ended.
pub const LINGER_MAX_MS: u64 = 20_000;

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            writeback_cache: true,
            max_write: 1 << 20,
            max_background: 16,
            congestion_threshold: 12,
            direct_io_allow_mmap: false,
            atomic_o_trunc: false,
            dio_on_odirect: true,
            keep_cache: false,
            parallel_dio: false,
            async_dio: false,
            xattr_enodata: false,
            hold_timeout_ms: 10_000,
            ttl_ms: 60_000,
            linger: false,
        }
    }
}

impl ServerConfig {
    /// Command-line form understood by [`ServerConfig::parse_args`].
    pub fn to_args(&self) -> Vec<String> {
        let mut a = vec![];
        if !self.writeback_cache {
            a.push("--no-wbc".to_string());
        }
        if self.direct_io_allow_mmap {
            a.push("--dio-allow-mmap".into());
        }
        if self.atomic_o_trunc {
            a.push("--atomic-o-trunc".into());
        }
        if !self.dio_on_odirect {
            a.push("--no-dio-on-odirect".into());
        }
        if self.keep_cache {
            a.push("--keep-cache".into());
        }
        if self.parallel_dio {
            a.push("--parallel-dio".into());
        }
        if self.async_dio {
            a.push("--async-dio".into());
        }
        if self.xattr_enodata {
            a.push("--xattr-enodata".into());
        }
        if self.linger {
            a.push("--linger".into());
        }
        for (k, v) in [
            ("--max-write", self.max_write as u64),
            ("--max-bg", self.max_background as u64),
            ("--cong", self.congestion_threshold as u64),
            ("--hold-timeout-ms", self.hold_timeout_ms),
            ("--ttl-ms", self.ttl_ms),
        ] {
            a.push(k.into());
            a.push(v.to_string());
        }
        a
    }

    /// Parse one option (and its value from `it`). Returns Ok(false) if `arg` is not a config option.
    pub fn parse_arg(
        &mut self,
        arg: &str,
        it: &mut dyn Iterator<Item = String>,
    ) -> Result<bool, String> {
        let mut val = |name: &str| -> Result<u64, String> {
            it.next()
                .ok_or(format!("{name} needs a value"))?
                .parse::<u64>()
                .map_err(|e| format!("{name}: {e}"))
        };
        match arg {
            "--no-wbc" => self.writeback_cache = false,
            "--wbc" => self.writeback_cache = true,
            "--dio-allow-mmap" => self.direct_io_allow_mmap = true,
            "--atomic-o-trunc" => self.atomic_o_trunc = true,
            "--no-dio-on-odirect" => self.dio_on_odirect = false,
            "--keep-cache" => self.keep_cache = true,
            "--parallel-dio" => self.parallel_dio = true,
            "--xattr-enodata" => self.xattr_enodata = true,
            "--linger" => self.linger = true,
            "--async-dio" => self.async_dio = true,
            "--max-write" => self.max_write = val(arg)? as u32,
            "--max-bg" => self.max_background = val(arg)? as u16,
            "--cong" => self.congestion_threshold = val(arg)? as u16,
            "--hold-timeout-ms" => self.hold_timeout_ms = val(arg)?,
            "--ttl-ms" => self.ttl_ms = val(arg)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}
