//! The nowait model's real-kernel scenario: io_uring O_APPEND writes on
//! xfs (FMODE_BUF_WASYNC) whose inline IOCB_NOWAIT attempts are cut short
//! by balance_dirty_pages(BDP_ASYNC), checked for exactly-once (io1) and
//! for torn appends (io2).
//!
//! Setup: a sparse image file in a temporary directory, a loop device,
//! mkfs.xfs, a mount; the loop device's own bdi gets `strict_limit` and a
//! small `max_bytes` (never a global sysctl), so a write of a few hundred
//! KiB crosses the bdi's limit while writeback still runs (the loop
//! device writes to the image file at disk speed, so blocking writers
//! sleep in balance_dirty_pages for bounded pauses). Every external
//! command runs under `timeout`; a watchdog lifts the bdi limit if the
//! workload overruns; teardown unmounts (lazily as a last resort),
//! detaches the loop device and removes the directory.
//!
//! Each record is `blocks` 4 KiB blocks; block `b` of record `r` starts
//! with a tag (magic, r, b), so the file can be parsed back block by
//! block: every block of every completed record exactly once, size = the
//! sum of the CQE results (io1); a record whose blocks are not contiguous
//! is torn (io2).

use io_uring::{opcode, types, IoUring};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BLOCK: usize = 4096;
const MAGIC: u32 = 0x6e77_6169; // "nwai"
/// Tag of the write(2) appender's records.
const PLAIN: u32 = 1 << 20;

#[derive(Clone, Debug)]
pub struct Config {
    /// io_uring records.
    pub records: u32,
    /// 4 KiB blocks per record.
    pub blocks: u32,
    /// SQEs in flight.
    pub depth: u32,
    /// A write(2) O_APPEND thread of one-block records alongside.
    pub plain_appender: bool,
    /// The loop bdi's max_bytes (with strict_limit), 0: leave the bdi alone.
    pub max_bytes: u64,
    /// Overall bound of the workload.
    pub timeout: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            records: 24,
            blocks: 64,
            depth: 4,
            plain_appender: true,
            max_bytes: 64 * 1024,
            timeout: Duration::from_secs(60),
        }
    }
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Report {
    pub kernel: String,
    pub records: u32,
    pub blocks: u32,
    pub depth: u32,
    pub max_bytes: u64,
    /// Sum of the io_uring CQE results and of the write(2) returns.
    pub cqe_bytes: u64,
    pub plain_bytes: u64,
    pub file_bytes: u64,
    /// CQEs with a result other than the record's length.
    pub bad_cqes: Vec<i32>,
    /// (record, block) pairs seen more than once, and never.
    pub duplicates: u64,
    pub missing: u64,
    /// Blocks that carry no tag.
    pub garbage: u64,
    /// io_uring records whose blocks are not contiguous in the file.
    pub torn: u32,
    /// ... and among those, records with a write(2) record inside.
    pub torn_by_plain: u32,
    pub elapsed_ms: u64,
}

impl Report {
    /// io1: every block once, size = the results.
    pub fn exactly_once(&self) -> bool {
        self.bad_cqes.is_empty()
            && self.duplicates == 0
            && self.missing == 0
            && self.garbage == 0
            && self.file_bytes == self.cqe_bytes + self.plain_bytes
    }
}

/// Why the scenario cannot run here, if it cannot.
pub fn unavailable() -> Option<String> {
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root (loop device, mount)".into());
    }
    let fs = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !fs.lines().any(|l| l.trim_end().ends_with("xfs")) {
        return Some("the kernel has no xfs".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no loop devices (/dev/loop-control)".into());
    }
    for tool in ["mkfs.xfs", "losetup", "mount", "umount", "timeout"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if !found {
            return Some(format!(
                "{tool} is not installed (.ci/setup installs xfsprogs)"
            ));
        }
    }
    let dis = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").unwrap_or_default();
    if dis.trim() != "0" && !dis.trim().is_empty() {
        return Some("io_uring is disabled (kernel.io_uring_disabled)".into());
    }
    None
}

/// Runs a command under `timeout 30`; its stderr on failure.
fn sh(args: &[&str]) -> Result<String, String> {
    let out = Command::new("timeout")
        .arg("30")
        .args(args)
        .output()
        .map_err(|e| format!("{}: {e}", args[0]))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Everything the setup made, undone in reverse order on drop.
struct Setup {
    dir: PathBuf,
    dev: Option<String>,
    mnt: Option<PathBuf>,
    bdi: Option<(PathBuf, String, String)>,
}

impl Setup {
    fn restore_bdi(&mut self) {
        if let Some((bdi, strict, max)) = self.bdi.take() {
            let _ = std::fs::write(bdi.join("max_bytes"), max);
            let _ = std::fs::write(bdi.join("strict_limit"), strict);
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        self.restore_bdi();
        if let Some(m) = self.mnt.take() {
            let m = m.to_string_lossy().to_string();
            if sh(&["umount", &m]).is_err() {
                let _ = sh(&["umount", "-l", &m]);
            }
        }
        if let Some(d) = self.dev.take() {
            let _ = sh(&["losetup", "-d", &d]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn tag(buf: &mut [u8], rec: u32, blk: u32) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (rec as u8).wrapping_mul(31).wrapping_add(blk as u8) ^ (i as u8);
    }
    buf[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    buf[4..8].copy_from_slice(&rec.to_le_bytes());
    buf[8..12].copy_from_slice(&blk.to_le_bytes());
}

fn record(rec: u32, blocks: u32) -> Vec<u8> {
    let mut v = vec![0u8; blocks as usize * BLOCK];
    for (b, chunk) in v.chunks_mut(BLOCK).enumerate() {
        tag(chunk, rec, b as u32);
    }
    v
}

/// Sets up, runs the workload, parses the file, tears down.
pub fn run(cfg: &Config) -> Result<Report, String> {
    if let Some(why) = unavailable() {
        return Err(format!("skipped: {why}"));
    }
    let start = Instant::now();
    let dir = std::env::temp_dir().join(format!(
        "wbspec-nowait-{}-{}",
        std::process::id(),
        start.elapsed().as_nanos()
            ^ (std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0))
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut setup = Setup {
        dir: dir.clone(),
        dev: None,
        mnt: None,
        bdi: None,
    };
    let img = dir.join("xfs.img");
    let f = std::fs::File::create(&img).map_err(|e| format!("{}: {e}", img.display()))?;
    f.set_len(512 << 20)
        .map_err(|e| format!("sparse image: {e}"))?;
    drop(f);
    let dev = sh(&["losetup", "--find", "--show", &img.to_string_lossy()])?;
    setup.dev = Some(dev.clone());
    sh(&["mkfs.xfs", "-q", "-f", &dev])?;
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).map_err(|e| format!("{}: {e}", mnt.display()))?;
    sh(&["mount", "-t", "xfs", &dev, &mnt.to_string_lossy()])?;
    setup.mnt = Some(mnt.clone());
    if cfg.max_bytes > 0 {
        let bdi = bdi_of(&dev)?;
        let strict = std::fs::read_to_string(bdi.join("strict_limit")).unwrap_or_default();
        let max = std::fs::read_to_string(bdi.join("max_bytes")).unwrap_or_default();
        setup.bdi = Some((bdi.clone(), strict.trim().into(), max.trim().into()));
        std::fs::write(bdi.join("strict_limit"), "1")
            .map_err(|e| format!("{}/strict_limit: {e}", bdi.display()))?;
        std::fs::write(bdi.join("max_bytes"), cfg.max_bytes.to_string())
            .map_err(|e| format!("{}/max_bytes: {e}", bdi.display()))?;
    }
    let file = mnt.join("log");
    let mut report = workload(cfg, &file, setup.bdi.as_ref().map(|b| b.0.clone()))?;
    setup.restore_bdi();
    parse(cfg, &file, &mut report)?;
    report.kernel = sh(&["uname", "-r"]).unwrap_or_default();
    report.elapsed_ms = start.elapsed().as_millis() as u64;
    drop(setup);
    Ok(report)
}

/// /sys/class/bdi/<major>:<minor> of a block device.
fn bdi_of(dev: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(dev).map_err(|e| format!("{dev}: {e}"))?;
    let rdev = md.rdev();
    let (maj, min) = (libc::major(rdev), libc::minor(rdev));
    let p = PathBuf::from(format!("/sys/class/bdi/{maj}:{min}"));
    if p.join("strict_limit").exists() && p.join("max_bytes").exists() {
        Ok(p)
    } else {
        Err(format!("{} has no strict_limit/max_bytes", p.display()))
    }
}

fn open_append(p: &Path) -> Result<i32, String> {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).expect("no NUL");
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND | libc::O_CLOEXEC,
            0o644,
        )
    };
    if fd < 0 {
        Err(format!(
            "open {}: {}",
            p.display(),
            std::io::Error::last_os_error()
        ))
    } else {
        Ok(fd)
    }
}

fn workload(cfg: &Config, file: &Path, bdi: Option<PathBuf>) -> Result<Report, String> {
    let fd = open_append(file)?;
    let done = Arc::new(AtomicBool::new(false));
    // watchdog: lift the bdi limit if the workload overruns, so nothing
    // stays throttled
    let wd = {
        let done = done.clone();
        let timeout = cfg.timeout;
        std::thread::spawn(move || {
            let t0 = Instant::now();
            while !done.load(Ordering::Relaxed) {
                if t0.elapsed() > timeout {
                    if let Some(b) = &bdi {
                        let _ = std::fs::write(b.join("strict_limit"), "0");
                        let _ = std::fs::write(b.join("max_bytes"), "0");
                    }
                    return true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            false
        })
    };
    let plain = if cfg.plain_appender {
        let done = done.clone();
        let pfd = open_append(file)?;
        Some(std::thread::spawn(move || {
            let mut bytes = 0u64;
            let mut n = 0u32;
            while !done.load(Ordering::Relaxed) && n < 4096 {
                let buf = record(PLAIN + n, 1);
                let r = unsafe { libc::write(pfd, buf.as_ptr().cast(), buf.len()) };
                if r > 0 {
                    bytes += r as u64;
                }
                n += 1;
                std::thread::yield_now();
            }
            unsafe { libc::close(pfd) };
            bytes
        }))
    } else {
        None
    };
    let result = uring_appends(cfg, fd);
    done.store(true, Ordering::Relaxed);
    let plain_bytes = plain.map(|h| h.join().unwrap_or(0)).unwrap_or(0);
    let overran = wd.join().unwrap_or(false);
    unsafe { libc::close(fd) };
    let (cqe_bytes, bad) = result?;
    if overran {
        return Err(format!("the workload overran {:?}", cfg.timeout));
    }
    Ok(Report {
        records: cfg.records,
        blocks: cfg.blocks,
        depth: cfg.depth,
        max_bytes: cfg.max_bytes,
        cqe_bytes,
        plain_bytes,
        bad_cqes: bad,
        ..Report::default()
    })
}

/// Submits the records `depth` at a time; returns the sum of the results
/// and the results that are not the record's length.
fn uring_appends(cfg: &Config, fd: i32) -> Result<(u64, Vec<i32>), String> {
    let mut ring = IoUring::new(cfg.depth.max(1).next_power_of_two())
        .map_err(|e| format!("io_uring_setup: {e}"))?;
    let bufs: Vec<Vec<u8>> = (0..cfg.records).map(|r| record(r, cfg.blocks)).collect();
    let len = cfg.blocks as usize * BLOCK;
    let mut sum = 0u64;
    let mut bad = Vec::new();
    let mut next = 0usize;
    let mut inflight = 0usize;
    while next < bufs.len() || inflight > 0 {
        while next < bufs.len() && inflight < cfg.depth as usize {
            let e = opcode::Write::new(types::Fd(fd), bufs[next].as_ptr(), len as u32)
                .offset(0)
                .build()
                .user_data(next as u64);
            unsafe { ring.submission().push(&e) }.map_err(|_| "SQ full".to_string())?;
            next += 1;
            inflight += 1;
        }
        ring.submit_and_wait(1)
            .map_err(|e| format!("io_uring_enter: {e}"))?;
        for c in ring.completion() {
            inflight -= 1;
            let res = c.result();
            if res > 0 {
                sum += res as u64;
            }
            if res != len as i32 {
                bad.push(res);
            }
        }
    }
    Ok((sum, bad))
}

/// Reads the file back and fills the io1/io2 counts of `r`.
fn parse(cfg: &Config, file: &Path, r: &mut Report) -> Result<(), String> {
    let data = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    r.file_bytes = data.len() as u64;
    let mut seen: std::collections::HashMap<(u32, u32), Vec<usize>> = Default::default();
    for (pos, b) in data.chunks(BLOCK).enumerate() {
        if b.len() < 12 || u32::from_le_bytes(b[0..4].try_into().unwrap()) != MAGIC {
            r.garbage += 1;
            continue;
        }
        let rec = u32::from_le_bytes(b[4..8].try_into().unwrap());
        let blk = u32::from_le_bytes(b[8..12].try_into().unwrap());
        seen.entry((rec, blk)).or_default().push(pos);
    }
    for (k, v) in &seen {
        if v.len() > 1 {
            r.duplicates += (v.len() - 1) as u64;
        }
        let _ = k;
    }
    let plain_recs = (r.plain_bytes / BLOCK as u64) as u32;
    for rec in 0..cfg.records {
        let mut pos = Vec::new();
        for blk in 0..cfg.blocks {
            match seen.get(&(rec, blk)) {
                Some(v) => pos.push(v[0]),
                None => r.missing += 1,
            }
        }
        if pos.windows(2).any(|w| w[1] != w[0] + 1) {
            r.torn += 1;
            let (lo, hi) = (pos[0], *pos.last().unwrap());
            let by_plain = (lo..=hi).any(|p| {
                data.get(p * BLOCK + 4..p * BLOCK + 8)
                    .map(|x| u32::from_le_bytes(x.try_into().unwrap()) >= PLAIN)
                    .unwrap_or(false)
            });
            if by_plain {
                r.torn_by_plain += 1;
            }
        }
    }
    for n in 0..plain_recs {
        if !seen.contains_key(&(PLAIN + n, 0)) {
            r.missing += 1;
        }
    }
    Ok(())
}
