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
    /// The `max_read` mount option (fc->max_read): 0 leaves the kernel's
    /// default (~0). It caps a readahead READ at min(fc->max_pages,
    /// max_read / PAGE_SIZE) pages (fuse_readahead) and a direct READ at
    /// max_read bytes (fuse_direct_io). Absent from headers when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_read: u32,
    pub max_background: u16,
    /// Always set together with max_background (fuser's default 3/4 rounds
    /// max_background=1 down to 0, which the kernel ignores). At most
    /// max_background ([`ServerConfig::check`]): fuser 0.18 sends
    /// min(congestion_threshold, max_background) in FUSE_INIT
    /// (KernelConfig::congestion_threshold), so a larger value would
    /// never reach the kernel and the trace header would misstate it.
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
    /// Write every WRITE payload and READ reply in hex (`raw`) for `wbspec
    /// record`'s last pass, which replaces them with segment digests
    /// (record/segs.rs) before the trace is published. Absent from
    /// headers when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub raw: bool,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// Longest a lingering server waits for `quit` after its session ended.
pub const LINGER_MAX_MS: u64 = 20_000;

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            writeback_cache: true,
            max_write: 1 << 20,
            max_read: 0,
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
            raw: false,
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
        if self.raw {
            a.push("--raw".into());
        }
        if self.max_read != 0 {
            a.push("--max-read".into());
            a.push(self.max_read.to_string());
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

    /// What this server cannot negotiate as written, in one line; Ok if
    /// the kernel gets exactly these values. fuser 0.18 clamps the
    /// congestion threshold to max_background before FUSE_INIT, so a
    /// threshold above max_background is refused rather than recorded
    /// in a header that the kernel never saw (docs/findings.md,
    /// M-ra-prev-pos: such a header made a 5,000-syscall trace look
    /// like a readahead the model lacked).
    pub fn check(&self) -> Result<(), String> {
        if self.max_write < 4096 || self.max_background == 0 || self.congestion_threshold == 0 {
            return Err("--max-write is at least 4096, --max-bg and --cong at least 1".into());
        }
        if self.max_read != 0 && self.max_read < 4096 {
            return Err(format!(
                "--max-read {} is below 4096: the kernel raises it to 4096 (fuse_fill_super: max_t(unsigned int, 4096, max_read)), so the header would misstate it",
                self.max_read
            ));
        }
        // fuser 0.18 KernelConfig::set_max_write: `if value >
        // MAX_WRITE_SIZE as u32 { return Err(MAX_WRITE_SIZE as u32) }`,
        // leaving its default (16 MiB) in FUSE_INIT
        if self.max_write > 1 << 24 {
            return Err(format!(
                "--max-write {} is above 16777216: the server (fuser 0.18) would refuse it and send 16777216 in FUSE_INIT",
                self.max_write
            ));
        }
        if self.congestion_threshold > self.max_background {
            return Err(format!(
                "--cong {} is above --max-bg {}: the server (fuser 0.18) would send min(congestion_threshold, max_background) = {} in FUSE_INIT",
                self.congestion_threshold, self.max_background, self.max_background
            ));
        }
        Ok(())
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
            "--raw" => self.raw = true,
            "--async-dio" => self.async_dio = true,
            // (out of range is an error, not the value's low bits)
            "--max-write" => {
                self.max_write = u32::try_from(val(arg)?).map_err(|e| format!("{arg}: {e}"))?
            }
            "--max-read" => {
                self.max_read = u32::try_from(val(arg)?).map_err(|e| format!("{arg}: {e}"))?
            }
            "--max-bg" => {
                self.max_background = u16::try_from(val(arg)?).map_err(|e| format!("{arg}: {e}"))?
            }
            "--cong" => {
                self.congestion_threshold =
                    u16::try_from(val(arg)?).map_err(|e| format!("{arg}: {e}"))?
            }
            "--hold-timeout-ms" => self.hold_timeout_ms = val(arg)?,
            "--ttl-ms" => self.ttl_ms = val(arg)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::ServerConfig;

    #[test]
    fn check_refuses_a_threshold_fuser_would_not_send() {
        let mut c = ServerConfig::default();
        assert_eq!(c.check(), Ok(()));
        (c.max_background, c.congestion_threshold) = (1, 1);
        assert_eq!(c.check(), Ok(()));
        c.congestion_threshold = 8;
        let e = c.check().unwrap_err();
        assert!(e.contains("--cong 8 is above --max-bg 1"), "{e}");
        assert!(!e.contains('\n'));
        (c.congestion_threshold, c.max_write) = (1, 4095);
        assert!(c.check().is_err());
    }

    /// A max_write fuser refuses (above its MAX_WRITE_SIZE, 16 MiB) would
    /// be written into the header while the kernel got 16 MiB; a value
    /// beyond the field's type would be cut to its low bits.
    #[test]
    fn check_refuses_a_max_write_fuser_would_not_send() {
        let mut c = ServerConfig::default();
        c.max_write = 1 << 24;
        assert_eq!(c.check(), Ok(()));
        c.max_write = (1 << 24) + 4096;
        let e = c.check().unwrap_err();
        assert!(e.contains("--max-write 16781312 is above 16777216"), "{e}");
        for (arg, v) in [
            ("--max-write", "4294971392"),
            ("--max-bg", "65537"),
            ("--cong", "65536"),
        ] {
            let mut c = ServerConfig::default();
            let mut it = std::iter::once(v.to_string());
            let e = c.parse_arg(arg, &mut it).unwrap_err();
            assert!(e.starts_with(arg), "{e}");
        }
    }

    /// Every scenario's configuration passes the check (serve refuses
    /// one that does not).
    #[test]
    fn every_scenario_config_is_negotiable() {
        for sc in crate::scenarios::all() {
            let mut c = ServerConfig::default();
            (sc.config)(&mut c);
            c.check().unwrap_or_else(|e| panic!("{}: {e}", sc.name));
        }
    }
}
