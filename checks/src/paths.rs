//! Where the catalogue and the traces are, and how input files are read.
//!
//! The defaults come from the working directory: walking up from it to
//! the first directory that holds `checks/catalogue/` next to a
//! `Cargo.toml` (as cargo finds its manifest), never from the checkout the
//! binary was built in. Input files must be regular files no larger than
//! `MAX_INPUT_BYTES`; a FIFO or a device is refused without being opened
//! for a blocking read.
//!
//! Every file the tool writes goes through `write_atomic` (a temporary
//! file in the same directory, fsynced, renamed over the old one, the
//! directory fsynced), so an error or a full disk leaves the old file as
//! it was; `check_output` and `check_output_dir` refuse an output path
//! before a run starts, and `lock_dir` serialises read-modify-write
//! updates of one directory's files (`--update-pins`).

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Largest catalogue file or trace file the tool reads (4 MiB; the
/// largest committed one is about 40 KiB).
pub const MAX_INPUT_BYTES: u64 = 4 << 20;

/// Largest JSON report `merge-reports` reads (256 MiB; a whole-catalogue
/// report with its counterexamples is about 17 MB at 439 checks).
pub const MAX_REPORT_BYTES: u64 = 256 << 20;

/// The wbspec checkout that contains the working directory.
pub fn workspace_root() -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("working directory: {e}"))?;
    root_above(&cwd).ok_or_else(|| {
        format!(
            "no wbspec checkout at or above {} (no checks/catalogue next to a Cargo.toml); give --catalogue",
            cwd.display()
        )
    })
}

/// The first directory at or above `dir` with `Cargo.toml` and
/// `checks/catalogue/`.
pub fn root_above(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join("Cargo.toml").is_file() && d.join("checks/catalogue").is_dir())
        .map(Path::to_path_buf)
}

pub fn default_catalogue() -> Result<PathBuf, String> {
    Ok(workspace_root()?.join("checks/catalogue"))
}

pub fn default_traces() -> Result<PathBuf, String> {
    Ok(workspace_root()?.join("traces"))
}

/// Reads a whole input file as UTF-8: a regular file of at most
/// `MAX_INPUT_BYTES`. Errors are one line naming the file.
pub fn read_input(path: &Path) -> Result<String, String> {
    read_bounded(path, MAX_INPUT_BYTES)
}

/// `read_input` for a file of at most `max` bytes.
pub fn read_bounded(path: &Path, max: u64) -> Result<String, String> {
    let d = path.display();
    // O_NONBLOCK: opening a FIFO for reading does not wait for a writer.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("{d}: {e}"))?;
    let meta = f.metadata().map_err(|e| format!("{d}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{d}: not a regular file"));
    }
    if meta.len() > max {
        return Err(format!(
            "{d}: {} bytes, more than the {max} an input may have",
            meta.len()
        ));
    }
    let mut text = String::new();
    f.take(max + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{d}: {e}"))?;
    if text.len() as u64 > max {
        return Err(format!("{d}: grew past {max} bytes while read"));
    }
    Ok(text)
}

/// The directory a file path is in (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Can this process create files in `dir`? (A directory it may write and
/// search, on a file system mounted read-write.)
fn writable_dir(dir: &Path, what: &str) -> Result<(), String> {
    let meta = std::fs::metadata(dir).map_err(|e| format!("{what}: {}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("{what}: {} is not a directory", dir.display()));
    }
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{what}: {}: NUL in the path", dir.display()))?;
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!("{what}: cannot write in {}: {e}", dir.display()));
    }
    Ok(())
}

/// Checks, before a run, that `write_atomic(path)` can succeed as far as
/// can be known without writing: `path` is not a directory, and its
/// directory exists and is writable. Errors are one line naming `path`.
pub fn check_output(path: &Path) -> Result<(), String> {
    let d = path.display().to_string();
    if path.as_os_str().is_empty() {
        return Err("an output path is empty".into());
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(format!("{d}: is a directory")),
        // a device or a FIFO is written in place (no old file to keep)
        Ok(m) if !m.is_file() => Ok(()),
        Ok(_) => {
            let real = path.canonicalize().map_err(|e| format!("{d}: {e}"))?;
            writable_dir(parent_of(&real), &d)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            not_dangling(path)?;
            writable_dir(parent_of(path), &d)
        }
        Err(e) => Err(format!("{d}: {e}")),
    }
}

/// Refuses a symbolic link to nothing: writing through it would create a
/// file wherever it points, replacing it would drop the link.
fn not_dangling(path: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(format!(
            "{}: a symbolic link to a missing file (remove it or create its target)",
            path.display()
        )),
        _ => Ok(()),
    }
}

/// Checks, before a run, that files can be written in directory `dir`
/// (created when missing): it is a writable directory, or the first of
/// its ancestors that exists is.
pub fn check_output_dir(dir: &Path) -> Result<(), String> {
    let d = dir.display().to_string();
    match dir
        .ancestors()
        .find(|a| !a.as_os_str().is_empty() && a.exists())
    {
        Some(a) => writable_dir(a, &d),
        None => writable_dir(Path::new("."), &d),
    }
}

/// Writes `bytes` to `path` so that the file is either its old contents or
/// all of the new ones, whatever fails: a temporary file
/// `.<name>.wbspec-<pid>-<n>.tmp` in the same directory, written and
/// fsynced, takes the old file's mode (and owner, when allowed), is
/// renamed over `path` and the directory is fsynced. On an error the
/// temporary file is removed and the old file is untouched. A symbolic
/// link is followed (its target is replaced), a link to nothing refused;
/// a device or a FIFO is written in place. Errors are one line naming `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let d = path.display().to_string();
    let err = |e: std::io::Error| format!("{d}: {e}");
    let (target, old) = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(format!("{d}: is a directory")),
        Ok(m) if !m.is_file() => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(err)?;
            return f.write_all(bytes).and_then(|()| f.flush()).map_err(err);
        }
        Ok(m) => (path.canonicalize().map_err(err)?, Some(m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            not_dangling(path)?;
            (path.to_path_buf(), None)
        }
        Err(e) => return Err(err(e)),
    };
    let dir = parent_of(&target);
    let name = target
        .file_name()
        .ok_or_else(|| format!("{d}: not a file name"))?
        .to_string_lossy();
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.wbspec-{}-{seq}.tmp", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(&tmp)
        .map_err(|e| format!("{d}: temporary file {}: {e}", tmp.display()))?;
    let written = (|| -> std::io::Result<()> {
        if let Some(m) = &old {
            // as the old file was; the owner only when this process may
            let _ = std::os::unix::fs::fchown(&f, Some(m.uid()), Some(m.gid()));
            f.set_permissions(std::fs::Permissions::from_mode(m.mode() & 0o7777))?;
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(err(e));
    }
    std::fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| format!("{d}: fsync of {}: {e}", dir.display()))
}

/// An exclusive lock (flock) on a directory, held until dropped.
pub struct DirLock(#[allow(dead_code)] std::fs::File);

/// How long `lock_dir` waits for another process's lock.
pub const LOCK_WAIT: Duration = Duration::from_secs(60);

/// Takes an exclusive lock on directory `dir` (flock on the directory
/// itself: no lock file is created), waiting up to `LOCK_WAIT` for another
/// wbspec holding it; then refuses with one line.
pub fn lock_dir(dir: &Path) -> Result<DirLock, String> {
    let d = dir.display();
    let f = std::fs::File::open(dir).map_err(|e| format!("{d}: {e}"))?;
    let t0 = Instant::now();
    loop {
        use std::os::fd::AsRawFd;
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(DirLock(f));
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(format!("{d}: lock: {e}"));
        }
        if t0.elapsed() > LOCK_WAIT {
            return Err(format!(
                "{d}: another process has held its lock for {} s (a concurrent --update-pins?)",
                LOCK_WAIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A message on one line: its lines joined with "; ", spaces squeezed.
pub fn one_line(msg: &str) -> String {
    msg.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Is `name` a valid check name: `[a-z0-9][a-z0-9-]*`, at most 64
/// characters? (It becomes part of trace file names.)
pub fn valid_check_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_names_are_restricted() {
        for ok in ["t-trunc-vs-wb-2p", "a", "0x"] {
            assert!(valid_check_name(ok), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "A",
            "a b",
            "../../x",
            "a/b",
            "a.b",
            "a_b",
            &"a".repeat(65),
        ] {
            assert!(!valid_check_name(bad), "{bad}");
        }
    }

    #[test]
    fn fifo_and_directories_are_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("x.toml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_input(&fifo).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let e = read_input(d.path()).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[test]
    fn atomic_writes_replace_keep_the_mode_and_leave_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("r.json");
        write_atomic(&f, b"one").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"one");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&f, b"two").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        // through a symbolic link: the target is replaced, the link kept
        let l = d.path().join("link.json");
        std::os::unix::fs::symlink(&f, &l).unwrap();
        write_atomic(&l, b"three").unwrap();
        assert!(std::fs::symlink_metadata(&l).unwrap().is_symlink());
        assert_eq!(std::fs::read(&f).unwrap(), b"three");
        // a directory is refused, before and at the write
        let e = write_atomic(d.path(), b"x").unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
        assert!(check_output(d.path())
            .unwrap_err()
            .contains("is a directory"));
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // a device is written in place
        write_atomic(Path::new("/dev/null"), b"x").unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn output_paths_are_checked_before_a_run() {
        let d = tempfile::tempdir().unwrap();
        let e = check_output(Path::new("/nonexistent/r.json")).unwrap_err();
        assert!(e.contains("/nonexistent"), "{e}");
        let file = d.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let e = check_output(&file.join("r.json")).unwrap_err();
        assert!(e.to_lowercase().contains("not a directory"), "{e}");
        check_output(&d.path().join("new.json")).unwrap();
        check_output(&file).unwrap();
        check_output_dir(&d.path().join("a/b/c")).unwrap();
        assert!(check_output_dir(&file.join("a")).is_err());
    }

    #[test]
    fn the_directory_lock_is_exclusive() {
        let d = tempfile::tempdir().unwrap();
        let l = lock_dir(d.path()).unwrap();
        let f = std::fs::File::open(d.path()).unwrap();
        use std::os::fd::AsRawFd;
        let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_eq!(r, -1, "a second lock while the first is held");
        drop(l);
        let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_eq!(r, 0);
    }

    #[test]
    fn oversized_inputs_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("big.json");
        let file = std::fs::File::create(&f).unwrap();
        file.set_len(MAX_INPUT_BYTES + 1).unwrap();
        let e = read_input(&f).unwrap_err();
        assert!(e.contains("more than"), "{e}");
    }
}
