//! The guest's initramfs: an uncompressed cpio ("newc") archive holding
//! the guest init, the harness binaries, the helpers they run, every
//! shared library those need (as `ldd` lists them) and, for kernels that
//! build FUSE as a module, fuse.ko.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What goes into the archive: path in the guest → contents.
#[derive(Default)]
pub struct Tree {
    files: BTreeMap<String, (Vec<u8>, u32)>,
    dirs: Vec<String>,
}

impl Tree {
    pub fn dir(&mut self, path: &str) {
        let mut p = String::new();
        for part in path.trim_matches('/').split('/') {
            p.push('/');
            p.push_str(part);
            if !self.dirs.contains(&p) {
                self.dirs.push(p.clone());
            }
        }
    }

    pub fn file(&mut self, path: &str, data: Vec<u8>, mode: u32) {
        if let Some((parent, _)) = path.rsplit_once('/') {
            if !parent.is_empty() {
                self.dir(parent);
            }
        }
        self.files.insert(path.to_string(), (data, mode));
    }

    /// Copy a host file to `guest` (its contents; symlinks followed).
    pub fn copy(&mut self, host: &Path, guest: &str, mode: u32) -> Result<(), String> {
        let data = std::fs::read(host).map_err(|e| format!("read {}: {e}", host.display()))?;
        self.file(guest, data, mode);
        Ok(())
    }

    /// Copy an executable and every library `ldd` says it needs, each at
    /// its host path.
    pub fn executable(&mut self, host: &Path, guest: &str) -> Result<(), String> {
        self.copy(host, guest, 0o755)?;
        for lib in libraries(host)? {
            let g = lib.display().to_string();
            if !self.files.contains_key(&g) {
                self.copy(&lib, &g, 0o755)?;
            }
        }
        Ok(())
    }

    /// The archive in cpio newc format, directories first.
    pub fn cpio(&self) -> Vec<u8> {
        let mut out = vec![];
        let mut ino = 1u32;
        for d in &self.dirs {
            entry(&mut out, ino, d, 0o040755, &[]);
            ino += 1;
        }
        for (path, (data, mode)) in &self.files {
            entry(&mut out, ino, path, 0o100000 | mode, data);
            ino += 1;
        }
        entry(&mut out, 0, "TRAILER!!!", 0, &[]);
        while !out.len().is_multiple_of(512) {
            out.push(0);
        }
        out
    }
}

fn pad4(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

fn entry(out: &mut Vec<u8>, ino: u32, path: &str, mode: u32, data: &[u8]) {
    let name = path.trim_start_matches('/');
    let name = if name.is_empty() { "." } else { name };
    let fields = [
        ino,
        mode,
        0,
        0,
        1,
        0,
        data.len() as u32,
        0,
        0,
        0,
        0,
        name.len() as u32 + 1,
        0,
    ];
    out.extend_from_slice(b"070701");
    for f in fields {
        out.extend_from_slice(format!("{f:08X}").as_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    pad4(out);
    out.extend_from_slice(data);
    pad4(out);
}

/// The shared libraries (and the dynamic loader) `ldd` lists for `bin`.
/// A static binary needs none.
pub fn libraries(bin: &Path) -> Result<Vec<PathBuf>, String> {
    let out = Command::new("ldd")
        .arg(bin)
        .output()
        .map_err(|e| format!("ldd {}: {e}", bin.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        if text.contains("not a dynamic executable")
            || String::from_utf8_lossy(&out.stderr).contains("not a dynamic executable")
        {
            return Ok(vec![]);
        }
        return Err(format!("ldd {} failed", bin.display()));
    }
    let mut libs = vec![];
    for line in text.lines() {
        let line = line.trim();
        if line.contains("=> not found") {
            return Err(format!("{}: a library is missing: {line}", bin.display()));
        }
        // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or
        // "/lib64/ld-linux-x86-64.so.2 (0x...)"; "linux-vdso.so.1 (0x...)"
        // is the kernel's.
        let path = match line.split_once("=>") {
            Some((_, rest)) => rest.split_whitespace().next(),
            None => line.split_whitespace().next(),
        };
        if let Some(p) = path.filter(|p| p.starts_with('/')) {
            libs.push(PathBuf::from(p));
        }
    }
    Ok(libs)
}

/// `name` on PATH, if it is there.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newc_entries_are_aligned_and_end_with_the_trailer() {
        let mut t = Tree::default();
        t.file("/bin/x", b"abc".to_vec(), 0o755);
        t.file("/wbspec/argv", b"conform\0".to_vec(), 0o644);
        let c = t.cpio();
        assert_eq!(c.len() % 512, 0);
        assert!(c.starts_with(b"070701"));
        let s = String::from_utf8_lossy(&c);
        assert!(s.contains("bin/x\0"));
        assert!(s.contains("TRAILER!!!"));
        // dirs /bin and /wbspec, two files, the trailer
        assert_eq!(s.matches("070701").count(), 5);
        // the header of bin/x says 3 bytes of data
        let i = s.find("bin/x\0").unwrap();
        let hdr = &s[i - 110..i];
        assert_eq!(&hdr[54..62], "00000003");
    }

    #[test]
    fn ldd_of_a_dynamic_binary_lists_libc_and_the_loader() {
        let sh = which("sh").expect("sh");
        let libs = libraries(&sh).unwrap();
        assert!(
            libs.iter().any(|l| l.to_string_lossy().contains("libc.so")),
            "{libs:?}"
        );
        assert!(
            libs.iter()
                .any(|l| l.to_string_lossy().contains("ld-linux")),
            "{libs:?}"
        );
    }
}
