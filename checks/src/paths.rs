//! Where the catalogue and the traces are, and how input files are read.
//!
//! The defaults come from the working directory: walking up from it to
//! the first directory that holds `checks/catalogue/` next to a
//! `Cargo.toml` (as cargo finds its manifest), never from the checkout the
//! binary was built in. Input files must be regular files no larger than
//! `MAX_INPUT_BYTES`; a FIFO or a device is refused without being opened
//! for a blocking read.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

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
    fn oversized_inputs_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("big.json");
        let file = std::fs::File::create(&f).unwrap();
        file.set_len(MAX_INPUT_BYTES + 1).unwrap();
        let e = read_input(&f).unwrap_err();
        assert!(e.contains("more than"), "{e}");
    }
}
