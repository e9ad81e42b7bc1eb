//! Mount inspection and the bounded unmount / abort escape hatches.
//!
//! Nothing here touches the FUSE mount itself (no stat, no open): mounts are
//! found through /proc/self/mountinfo, which also gives the connection number
//! (the minor of st_dev) without sending a GETATTR.
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const FUSECTL: &str = "/sys/fs/fuse/connections";

/// (major, minor, fstype) of the mount whose mount point is exactly `mnt`.
pub fn find_mount(mnt: &Path) -> Option<(u32, u32, String)> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = mnt.to_string_lossy().replace(' ', "\\040");
    // Last matching line wins (stacked mounts).
    let mut found = None;
    for line in info.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() < 5 || f[4] != want {
            continue;
        }
        let Some(dash) = f.iter().position(|x| *x == "-") else {
            continue;
        };
        let fstype = f.get(dash + 1).unwrap_or(&"").to_string();
        let (ma, mi) = f[2].split_once(':')?;
        found = Some((ma.parse().ok()?, mi.parse().ok()?, fstype));
    }
    found
}

pub fn is_mounted(mnt: &Path) -> bool {
    find_mount(mnt).is_some()
}

/// All FUSE mount lines in /proc/mounts (for before/after comparisons).
pub fn fuse_mount_lines() -> Vec<String> {
    std::fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("fuse"))
        .map(str::to_string)
        .collect()
}

/// Run an external command with a deadline; kill it (by its PID) if it overruns.
pub fn run_bounded(prog: &str, args: &[&str], timeout: Duration) -> Result<bool, String> {
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{prog}: {e}"))?;
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Ok(st.success()),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{prog} {args:?} timed out"));
            }
            Err(e) => return Err(format!("{prog}: {e}")),
        }
    }
}

fn fusectl_mounted() -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(FUSECTL))
}

/// Run `f` with fusectl mounted at /sys/fs/fuse/connections: mounts it
/// if it is not, and unmounts it again afterwards if we mounted it.
fn with_fusectl<R>(f: impl FnOnce() -> Result<R, String>) -> Result<R, String> {
    let mut we_mounted = false;
    if !fusectl_mounted() {
        let r = unsafe {
            libc::mount(
                c"none".as_ptr(),
                c"/sys/fs/fuse/connections".as_ptr(),
                c"fusectl".as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if r != 0 {
            return Err(format!(
                "mount fusectl: {}",
                std::io::Error::last_os_error()
            ));
        }
        we_mounted = true;
    }
    let res = f();
    if we_mounted {
        unsafe { libc::umount2(c"/sys/fs/fuse/connections".as_ptr(), 0) };
    }
    res
}

/// Poll /sys/fs/fuse/connections/<minor>/waiting (fc->num_waiting: the
/// requests allocated and not yet ended) until it is at least `n`, for at
/// most `ms` milliseconds. Mounts fusectl if needed and unmounts it again
/// if we mounted it. Returns the last count read (so the caller can say
/// what it saw) and whether it reached `n`.
pub fn fusectl_wait_waiting(minor: u32, n: u64, ms: u64) -> Result<(u64, bool), String> {
    with_fusectl(|| {
        let p = format!("{FUSECTL}/{minor}/waiting");
        let start = std::time::Instant::now();
        loop {
            let v = std::fs::read_to_string(&p)
                .map_err(|e| format!("{p}: {e}"))?
                .trim()
                .parse::<u64>()
                .map_err(|e| format!("{p}: {e}"))?;
            if v >= n {
                return Ok((v, true));
            }
            if start.elapsed().as_millis() as u64 >= ms {
                return Ok((v, false));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    })
}

/// Read the number in /sys/fs/fuse/connections/<minor>/<file>
/// (`max_background`, `congestion_threshold`, `waiting`): what the kernel
/// holds for the connection. Mounts fusectl if needed and unmounts it
/// again if we mounted it.
pub fn fusectl_read(minor: u32, file: &str) -> Result<u64, String> {
    with_fusectl(|| {
        let p = format!("{FUSECTL}/{minor}/{file}");
        std::fs::read_to_string(&p)
            .map_err(|e| format!("{p}: {e}"))?
            .trim()
            .parse::<u64>()
            .map_err(|e| format!("{p}: {e}"))
    })
}

/// Write 1 to /sys/fs/fuse/connections/<minor>/abort: fails every pending and
/// future request of that connection with ENOTCONN. Mounts fusectl if needed
/// and unmounts it again if we mounted it.
pub fn fusectl_abort(minor: u32) -> Result<(), String> {
    with_fusectl(|| {
        let p = format!("{FUSECTL}/{minor}/abort");
        if Path::new(&p).exists() {
            std::fs::write(&p, "1").map_err(|e| format!("{p}: {e}"))
        } else {
            Ok(()) // connection already gone
        }
    })
}

/// `fusermount3 -u`, then `umount -l`. Returns the steps taken.
pub fn unmount(mnt: &Path, log: &mut Vec<String>) {
    if !is_mounted(mnt) {
        return;
    }
    let m = mnt.to_string_lossy().to_string();
    let r = run_bounded("fusermount3", &["-u", "--", &m], Duration::from_secs(3));
    log.push(format!("fusermount3 -u: {r:?}"));
    if !is_mounted(mnt) {
        return;
    }
    let r = run_bounded("umount", &["-l", &m], Duration::from_secs(3));
    log.push(format!("umount -l: {r:?}"));
}
