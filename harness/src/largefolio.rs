//! User buffers backed by large folios, for the direct-I/O extraction
//! scenarios (docs/model-fuse-gup.md): a private tmpfs mounted
//! `huge=always` inside the scenario's temp dir, one file whose page cache
//! is one large folio, and mappings of its pages in any order (MAP_PRIVATE
//! with a COW-replaced page, or single pages mapped with MAP_FIXED).
//!
//! What the buffer really is, is read back from /proc/self/pagemap and
//! /proc/kpageflags (root): the PFN of every virtual page and whether it
//! is a page of a compound (large) folio.
//!
//! Cleanup: [`HugeTmpfs`] unmaps, closes and lazily unmounts on drop,
//! so a failing or panicking scenario leaves no mount behind.
use std::ffi::CString;
use std::path::{Path, PathBuf};

use crate::sys;

pub const PG: usize = 4096;

const KPF_ANON: u64 = 1 << 12;
const KPF_COMPOUND_HEAD: u64 = 1 << 15;
const KPF_COMPOUND_TAIL: u64 = 1 << 16;
const KPF_THP: u64 = 1 << 22;

/// The content of page `i` of the tmpfs file: its first half is one
/// upper-case letter, its second half the lower-case one, so a payload that
/// starts inside a page is told apart from one that starts at the page.
pub fn file_page_bytes(i: usize) -> Vec<u8> {
    let c = (i % 26) as u8;
    let mut v = vec![b'A' + c; PG];
    v[PG / 2..].fill(b'a' + c);
    v
}

/// The content a COW-replaced page is given.
pub fn cow_page_bytes() -> Vec<u8> {
    let mut v = vec![b'Z'; PG];
    v[PG / 2..].fill(b'z');
    v
}

/// A tmpfs mounted `huge=always` and one file on it.
pub struct HugeTmpfs {
    pub dir: PathBuf,
    pub fd: i32,
    pub file_pages: usize,
    maps: Vec<(usize, usize)>,
    mounted: bool,
}

fn cstr(s: &str) -> CString {
    CString::new(s).expect("no NUL")
}

impl HugeTmpfs {
    /// Mounts a tmpfs at `dir` (created) and writes a file of `file_pages`
    /// pages. Err: why it cannot be done here (a skip, not a failure).
    pub fn new(dir: &Path, file_pages: usize) -> Result<HugeTmpfs, String> {
        std::fs::create_dir(dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let target = sys::cpath(dir);
        let r = unsafe {
            libc::mount(
                cstr("tmpfs").as_ptr(),
                target.as_ptr(),
                cstr("tmpfs").as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                cstr("size=8m,huge=always").as_ptr().cast(),
            )
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            let _ = std::fs::remove_dir(dir);
            return Err(format!("cannot mount tmpfs huge=always: {e}"));
        }
        let mut t = HugeTmpfs {
            dir: dir.to_path_buf(),
            fd: -1,
            file_pages,
            maps: vec![],
            mounted: true,
        };
        let r = sys::open(&dir.join("buf"), libc::O_CREAT | libc::O_RDWR, 0o600);
        if r.ret < 0 {
            return Err(format!("open tmpfs file: errno {}", r.errno));
        }
        t.fd = r.ret as i32;
        let mut data = Vec::with_capacity(file_pages * PG);
        for i in 0..file_pages {
            data.extend(file_page_bytes(i));
        }
        let w = sys::pwrite(t.fd, &data, 0);
        if w.ret != data.len() as i64 {
            return Err(format!("write tmpfs file: {} errno {}", w.ret, w.errno));
        }
        Ok(t)
    }

    fn track(&mut self, p: *mut libc::c_void, len: usize) -> Result<usize, String> {
        if p == libc::MAP_FAILED {
            return Err(format!("mmap: {}", std::io::Error::last_os_error()));
        }
        self.maps.push((p as usize, len));
        Ok(p as usize)
    }

    /// The whole file, MAP_PRIVATE read-write.
    pub fn map_private(&mut self) -> Result<usize, String> {
        let len = self.file_pages * PG;
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE,
                self.fd,
                0,
            )
        };
        self.track(p, len)
    }

    /// A buffer whose virtual page i maps file page `file_pages[i]`
    /// (MAP_SHARED, read-only, one MAP_FIXED mapping per page).
    pub fn map_pages(&mut self, file_pages: &[usize]) -> Result<usize, String> {
        let len = file_pages.len() * PG;
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        let base = self.track(base, len)?;
        for (i, &fp) in file_pages.iter().enumerate() {
            let p = unsafe {
                libc::mmap(
                    (base + i * PG) as *mut libc::c_void,
                    PG,
                    libc::PROT_READ,
                    libc::MAP_SHARED | libc::MAP_FIXED,
                    self.fd,
                    (fp * PG) as libc::off_t,
                )
            };
            if p == libc::MAP_FAILED || p as usize != base + i * PG {
                return Err(format!(
                    "mmap page {fp}: {}",
                    std::io::Error::last_os_error()
                ));
            }
        }
        Ok(base)
    }

    /// Unmap, close, unmount (lazily), remove the mount point. Idempotent.
    pub fn cleanup(&mut self) -> Vec<String> {
        let mut log = vec![];
        for (a, l) in std::mem::take(&mut self.maps) {
            sys::munmap(a, l);
        }
        if self.fd >= 0 {
            sys::close(self.fd);
            self.fd = -1;
        }
        if self.mounted {
            let t = sys::cpath(&self.dir);
            let r = unsafe { libc::umount2(t.as_ptr(), libc::MNT_DETACH) };
            if r != 0 {
                log.push(format!(
                    "umount {}: {}",
                    self.dir.display(),
                    std::io::Error::last_os_error()
                ));
            }
            self.mounted = crate::mount::is_mounted(&self.dir);
            if self.mounted {
                log.push(format!("TMPFS LEFT MOUNTED at {}", self.dir.display()));
            }
        }
        if !self.mounted {
            let _ = std::fs::remove_dir(&self.dir);
        }
        log
    }
}

impl Drop for HugeTmpfs {
    fn drop(&mut self) {
        self.cleanup();
    }
}

/// What backs one virtual page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backing {
    pub pfn: u64,
    pub flags: u64,
}

impl Backing {
    pub fn compound(&self) -> bool {
        self.flags & (KPF_COMPOUND_HEAD | KPF_COMPOUND_TAIL) != 0
    }
    pub fn head(&self) -> bool {
        self.flags & KPF_COMPOUND_HEAD != 0
    }
    pub fn anon(&self) -> bool {
        self.flags & KPF_ANON != 0
    }
    pub fn thp(&self) -> bool {
        self.flags & KPF_THP != 0
    }
}

fn read_u64(f: &mut std::fs::File, index: u64) -> Result<u64, String> {
    use std::io::{Read, Seek, SeekFrom};
    f.seek(SeekFrom::Start(index * 8))
        .map_err(|e| e.to_string())?;
    let mut b = [0u8; 8];
    f.read_exact(&mut b).map_err(|e| e.to_string())?;
    Ok(u64::from_le_bytes(b))
}

/// PFN and kpageflags of the `n` pages at `addr` (touched first so that
/// they are mapped).
pub fn backing(addr: usize, n: usize) -> Result<Vec<Backing>, String> {
    let mut pm = std::fs::File::open("/proc/self/pagemap").map_err(|e| format!("pagemap: {e}"))?;
    let mut kf = std::fs::File::open("/proc/kpageflags").map_err(|e| format!("kpageflags: {e}"))?;
    let mut v = vec![];
    for i in 0..n {
        let va = addr + i * PG;
        // SAFETY: the caller's mapping covers n readable pages.
        unsafe { std::ptr::read_volatile(va as *const u8) };
        let e = read_u64(&mut pm, (va / PG) as u64)?;
        if e >> 63 == 0 {
            return Err(format!("page {i} of the buffer is not present"));
        }
        let pfn = e & ((1 << 55) - 1);
        if pfn == 0 {
            return Err("pagemap gives no PFN (needs CAP_SYS_ADMIN)".into());
        }
        let flags = read_u64(&mut kf, pfn)?;
        v.push(Backing { pfn, flags });
    }
    Ok(v)
}

/// Names the buffer's pages as the model does (`A0 A1 B0 A3`): `A` is the
/// tmpfs file's folio (page k has PFN head + k), every other page a folio
/// of its own (B, C, ...). `file` is the backing of the file's first pages
/// through a plain mapping.
pub fn name_pages(buf: &[Backing], file: &[Backing]) -> Result<Vec<String>, String> {
    let head = file.first().ok_or("no file pages")?;
    if !head.head() {
        return Err("the tmpfs file's first page is not the head of a large folio".into());
    }
    for (k, b) in file.iter().enumerate() {
        if b.pfn != head.pfn + k as u64 || !b.compound() {
            return Err(format!(
                "tmpfs file page {k} is not page {k} of the first folio"
            ));
        }
    }
    let mut others: Vec<u64> = vec![];
    let mut names = vec![];
    for b in buf {
        if b.compound() && b.pfn >= head.pfn && b.pfn < head.pfn + file.len() as u64 {
            names.push(format!("A{}", b.pfn - head.pfn));
        } else {
            if b.compound() {
                return Err("a buffer page of another large folio".into());
            }
            let k = match others.iter().position(|&p| p == b.pfn) {
                Some(k) => k,
                None => {
                    others.push(b.pfn);
                    others.len() - 1
                }
            };
            names.push(format!("{}0", (b'B' + k as u8) as char));
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(pfn: u64, flags: u64) -> Backing {
        Backing { pfn, flags }
    }

    #[test]
    fn pages_are_named_by_folio_and_index() {
        let file: Vec<Backing> = (0..4)
            .map(|k| {
                b(
                    100 + k,
                    if k == 0 {
                        KPF_COMPOUND_HEAD | KPF_THP
                    } else {
                        KPF_COMPOUND_TAIL | KPF_THP
                    },
                )
            })
            .collect();
        let cow = b(7, KPF_ANON);
        let buf = [file[0], file[1], cow, file[3]];
        assert_eq!(name_pages(&buf, &file).unwrap(), ["A0", "A1", "B0", "A3"]);
        let buf = [file[2], cow, b(9, KPF_ANON), cow];
        assert_eq!(name_pages(&buf, &file).unwrap(), ["A2", "B0", "C0", "B0"]);
    }

    #[test]
    fn small_folios_are_refused() {
        // tmpfs without huge pages: order-0 pages, no compound flags
        let file: Vec<Backing> = (0..4).map(|k| b(100 + k, 0)).collect();
        let e = name_pages(&file, &file).unwrap_err();
        assert!(e.contains("not the head of a large folio"), "{e}");
    }

    #[test]
    fn fills_tell_halves_apart() {
        let p = file_page_bytes(1);
        assert_eq!(
            (p[0], p[PG / 2 - 1], p[PG / 2], p[PG - 1]),
            (b'B', b'B', b'b', b'b')
        );
        assert_eq!(cow_page_bytes()[0], b'Z');
    }
}
