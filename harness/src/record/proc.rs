//! What the tracer reads about a stopped tracee without touching the
//! mount: its fds (`/proc/PID/fd/N` links, `/proc/PID/fdinfo/N`), its
//! working directory, its file mappings (`/proc/PID/maps`) and its
//! memory (`process_vm_readv`). None of these sends a FUSE request:
//! readlink of a /proc fd link prints the dentry path (d_path), fdinfo
//! and maps print kernel state, and process_vm_readv of a page that is
//! not present would fault it in — so [`mapped_on_mount`] is checked
//! before any buffer is read.
use std::path::{Component, Path, PathBuf};

/// A path relative to the mount (`.` for its root), with whitespace and
/// `%` percent-escaped so it is one word of a mark, and `=` and `#` too:
/// a name such as `path=x` is not read as a mark's `path=` word, and a
/// real `f#2` is not conform's label of the second file named `f`
/// (project.rs `gen_label`).
pub fn word(rel: &str) -> String {
    let mut s = String::new();
    for c in rel.chars() {
        match c {
            '%' => s += "%25",
            '=' => s += "%3D",
            '#' => s += "%23",
            c if c.is_whitespace() || c.is_control() => {
                let mut b = [0u8; 4];
                for x in c.encode_utf8(&mut b).bytes() {
                    s += &format!("%{x:02X}");
                }
            }
            c => s.push(c),
        }
    }
    if s.is_empty() {
        ".".into()
    } else {
        s
    }
}

/// `p` relative to `mnt` if it is the mount or under it.
pub fn under(mnt: &Path, p: &Path) -> Option<String> {
    let r = p.strip_prefix(mnt).ok()?;
    Some(word(&r.to_string_lossy()))
}

/// The target of an fd of `pid`, if the link reads.
pub fn fd_target(pid: i32, fd: i64) -> Option<PathBuf> {
    if fd < 0 || fd > i32::MAX as i64 {
        return None;
    }
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()
}

/// The mount-relative name of fd `fd` of `pid`, if it is a file of the
/// mount. A file unlinked while open reads as `NAME (deleted)` and is
/// named NAME, as its mappings are ([`mount_maps`]); a live file may be
/// called `x (deleted)` too, so the suffix is stripped only when the
/// fd's inode has no links left ([`no_links`]).
pub fn fd_on(mnt: &Path, pid: i32, fd: i64) -> Option<String> {
    let t = fd_target(pid, fd)?;
    if let Some(p) = t.to_str().and_then(|s| s.strip_suffix(" (deleted)")) {
        if no_links(&format!("/proc/{pid}/fd/{fd}"), None) {
            return under(mnt, Path::new(p));
        }
    }
    under(mnt, &t)
}

/// Whether the inode `link` (a /proc magic link: an fd, or a mapping's
/// map_files entry) leads to has no links left (fuse_unlink drops
/// i_nlink), and, with `ino`, is that inode. Read with
/// `AT_STATX_DONT_SYNC`: FUSE answers from the inode's cached
/// attributes and sends no GETATTR. When that cannot be read, the inode
/// is taken as unlinked, as d_path's ` (deleted)` says.
fn no_links(link: &str, ino: Option<u64>) -> bool {
    let Ok(link) = std::ffi::CString::new(link) else {
        return true;
    };
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            link.as_ptr(),
            libc::AT_STATX_DONT_SYNC,
            libc::STATX_INO | libc::STATX_NLINK,
            &mut st,
        )
    };
    let want = libc::STATX_INO | libc::STATX_NLINK;
    if r != 0 || st.stx_mask & want != want || ino.is_some_and(|i| st.stx_ino != i) {
        return true;
    }
    st.stx_nlink == 0
}

/// (file position, open flags) of fd `fd` of `pid` (`/proc/PID/fdinfo`).
pub fn fdinfo(pid: i32, fd: i64) -> Option<(u64, i32)> {
    let t = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).ok()?;
    let mut pos = None;
    let mut flags = None;
    for l in t.lines() {
        if let Some(v) = l.strip_prefix("pos:") {
            pos = v.trim().parse().ok();
        } else if let Some(v) = l.strip_prefix("flags:") {
            flags = i32::from_str_radix(v.trim(), 8).ok();
        }
    }
    Some((pos?, flags?))
}

/// The fds `pid` has open (for close_range).
pub fn fds(pid: i32) -> Vec<i64> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// `path` as `pid` resolves it from directory fd `dirfd` (AT_FDCWD: its
/// working directory), without touching the mount: `.` and `..` are
/// folded, and symbolic links are followed (lstat, readlink) only while
/// the path so far is outside `mnt`; the part on the mount is taken
/// lexically (the recording server has no symbolic links).
pub fn resolve(mnt: &Path, pid: i32, dirfd: Option<i64>, path: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let p = Path::new(std::ffi::OsStr::from_bytes(path));
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        let base = match dirfd {
            Some(fd) if fd != libc::AT_FDCWD as i64 => fd_target(pid, fd)?,
            _ => std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?,
        };
        base.join(p)
    };
    // components still to walk, the next one last
    let mut todo: Vec<std::ffi::OsString> = vec![];
    push_components(&mut todo, &joined);
    let mut out = PathBuf::from("/");
    let mut links = 0;
    while let Some(c) = todo.pop() {
        if c == ".." {
            out.pop();
            continue;
        }
        out.push(&c);
        if out.starts_with(mnt) {
            continue;
        }
        let is_link = std::fs::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_symlink());
        if is_link {
            links += 1;
            if links > 40 {
                return None; // ELOOP
            }
            let target = std::fs::read_link(&out).ok()?;
            out.pop();
            if target.is_absolute() {
                out = PathBuf::from("/");
            }
            push_components(&mut todo, &target);
        }
    }
    Some(out)
}

/// Push `p`'s components (`..` kept, `.` dropped) onto `todo` so its
/// first is popped first.
fn push_components(todo: &mut Vec<std::ffi::OsString>, p: &Path) {
    let cs: Vec<std::ffi::OsString> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    todo.extend(cs.into_iter().rev());
}

/// One file mapping of `/proc/PID/maps`: [start, end), file offset, path.
pub struct Map {
    pub start: u64,
    pub end: u64,
    pub off: u64,
    pub rel: String,
}

/// One line of `/proc/PID/maps`: [start, end), whether writable and
/// executable, file offset, inode number, path ("" for an anonymous
/// mapping).
struct MapsLine {
    start: u64,
    end: u64,
    writable: bool,
    executable: bool,
    off: u64,
    ino: u64,
    path: String,
}

/// Every mapping of `pid` (none if its maps cannot be read).
fn maps(pid: i32) -> Vec<MapsLine> {
    let t = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    t.lines()
        .filter_map(|l| {
            // start-end perms offset dev inode [path]
            let f: Vec<&str> = l.splitn(6, ' ').collect();
            let (a, b) = f.first()?.split_once('-')?;
            Some(MapsLine {
                start: u64::from_str_radix(a, 16).ok()?,
                end: u64::from_str_radix(b, 16).ok()?,
                writable: f.get(1)?.as_bytes().get(1) == Some(&b'w'),
                executable: f.get(1)?.as_bytes().get(2) == Some(&b'x'),
                off: u64::from_str_radix(f.get(2)?, 16).ok()?,
                ino: f.get(4)?.parse().ok()?,
                path: f.get(5).map_or("", |p| p.trim_start()).to_string(),
            })
        })
        .collect()
}

/// The mappings of files of the mount in `pid`, each named by the path
/// its file had: a file unlinked while mapped reads `NAME (deleted)` in
/// maps and is named NAME, but a live file may be called `x (deleted)`
/// too (see [`unlinked`]).
///
/// A name whose maps text holds `\012` is read from
/// `/proc/PID/map_files/START-END` (readlink: d_path's bytes as they
/// are): maps writes a newline in a name as `\012` (seq_file_path
/// escapes only that) and a backslash as itself, so that `a\012b` and
/// a name with a newline read the same there; maps' text is the
/// fallback when the link cannot be read. (Reading every mapping's
/// link made `record` 1.3x slower with 50 mappings live, 2.1x with
/// 500: an attack's measurement.)
pub fn mount_maps(mnt: &Path, pid: i32) -> Vec<Map> {
    maps(pid)
        .into_iter()
        .filter(|m| Path::new(&m.path).starts_with(mnt))
        .filter_map(|m| {
            let link = format!("/proc/{pid}/map_files/{:x}-{:x}", m.start, m.end);
            let path = if m.path.contains("\\012") {
                std::fs::read_link(link)
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| m.path.clone())
            } else {
                m.path.clone()
            };
            let path = match path.strip_suffix(" (deleted)") {
                Some(p) if unlinked(pid, &m) => p,
                _ => &path,
            };
            Some(Map {
                start: m.start,
                end: m.end,
                off: m.off,
                rel: under(mnt, Path::new(path))?,
            })
        })
        .collect()
}

/// Whether the file of mapping `m` of `pid` has been unlinked: its
/// inode, reached through `/proc/PID/map_files/START-END` (the mapping's
/// file, not a lookup of its name) and read with `AT_STATX_DONT_SYNC`
/// (FUSE answers from the inode's cached attributes and sends no
/// GETATTR), is `m`'s and has no links left (fuse_unlink drops
/// i_nlink). When that cannot be read, a name ending ` (deleted)` is
/// taken as unlinked, as d_path writes it.
fn unlinked(pid: i32, m: &MapsLine) -> bool {
    let link = format!("/proc/{pid}/map_files/{:x}-{:x}", m.start, m.end);
    no_links(&link, Some(m.ino))
}

/// The first mount mapping overlapping [addr, addr+len), with the
/// overlap as (file offset, length).
pub fn mapping_at(mnt: &Path, pid: i32, addr: u64, len: u64) -> Option<(u64, u64, String)> {
    let end = addr.saturating_add(len.max(1));
    mount_maps(mnt, pid)
        .into_iter()
        .find(|m| m.start < end && addr < m.end)
        .map(|m| {
            let a = addr.max(m.start);
            let b = end.min(m.end);
            (m.off + (a - m.start), b - a, m.rel)
        })
}

/// Whether any of the memory ranges lies in a mapping of a file of the
/// mount (reading it could fault a page in from the server).
pub fn mapped_on_mount(mnt: &Path, pid: i32, ranges: &[(u64, u64)]) -> bool {
    let maps = mount_maps(mnt, pid);
    ranges.iter().any(|(a, l)| {
        let end = a.saturating_add(*l);
        maps.iter().any(|m| m.start < end && *a < m.end)
    })
}

/// Whether a copy to byte `addr` of `pid` would fault: it lies in no
/// writable mapping (`/proc/PID/maps`, perms `?w??`), or in one whose
/// page cannot be had (a shared file mapping past its file's end
/// raises SIGBUS; read with `process_vm_readv`, which faults the page
/// in as a read would, and does nothing else to a private or anonymous
/// page).
pub fn would_fault(pid: i32, addr: u64) -> bool {
    let writable = maps(pid)
        .iter()
        .any(|m| m.writable && m.start <= addr && addr < m.end);
    !writable || read_mem(pid, addr, 1).is_none()
}

/// Is the mapping of `pid` at `addr` executable (VM_EXEC: PROT_EXEC,
/// or READ_IMPLIES_EXEC adding it to PROT_READ in do_mmap)? `None`:
/// no mapping there, or maps unreadable.
pub fn executable_at(pid: i32, addr: u64) -> Option<bool> {
    maps(pid)
        .iter()
        .find(|m| m.start <= addr && addr < m.end)
        .map(|m| m.executable)
}

/// The u64 at `addr` in `pid`'s memory (an offset or flags argument
/// passed by pointer).
pub fn read_u64(pid: i32, addr: u64) -> Option<u64> {
    Some(u64::from_ne_bytes(read_mem(pid, addr, 8)?.try_into().ok()?))
}

/// Read `len` bytes at `addr` of `pid`.
pub fn read_mem(pid: i32, addr: u64, len: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; len];
    if len == 0 {
        return Some(buf);
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: len,
    };
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    (n == len as isize).then_some(buf)
}

/// A NUL-terminated string at `addr` of `pid` (at most PATH_MAX bytes),
/// read page by page so a string ending before an unmapped page reads.
pub fn read_cstr(pid: i32, addr: u64) -> Option<Vec<u8>> {
    if addr == 0 {
        return None;
    }
    let mut out = vec![];
    let mut a = addr;
    while out.len() < libc::PATH_MAX as usize {
        let n = (4096 - (a % 4096)) as usize;
        let chunk = read_mem(pid, a, n)?;
        if let Some(i) = chunk.iter().position(|b| *b == 0) {
            out.extend_from_slice(&chunk[..i]);
            return Some(out);
        }
        out.extend_from_slice(&chunk);
        a += n as u64;
    }
    None
}

/// The iovec array `iov` (`cnt` entries) of `pid` as (base, len).
pub fn read_iovecs(pid: i32, iov: u64, cnt: u64) -> Option<Vec<(u64, u64)>> {
    if cnt > libc::UIO_MAXIOV as u64 {
        return None;
    }
    let raw = read_mem(pid, iov, cnt as usize * 16)?;
    Some(
        raw.chunks(16)
            .map(|c| {
                let w = |i: usize| u64::from_ne_bytes(c[i..i + 8].try_into().unwrap());
                (w(0), w(8))
            })
            .collect(),
    )
}

/// The first `total` bytes of the buffers `bufs` of `pid`, concatenated.
pub fn read_bufs(pid: i32, bufs: &[(u64, u64)], total: u64) -> Option<Vec<u8>> {
    let mut data = Vec::with_capacity(total.min(1 << 30) as usize);
    for (base, len) in bufs {
        // (an empty iovec in the middle is skipped, not the end)
        let want = (total - data.len() as u64).min(*len);
        if want > 0 {
            data.extend(read_mem(pid, *base, want as usize)?);
        }
    }
    (data.len() as u64 == total).then_some(data)
}

/// Up to `len` bytes from `off` of a file `pid` has open as `fd` (not
/// on the mount; fewer at its end): sendfile's source, read by the
/// tracer through /proc/PID/fd/N. Err says why they are not known:
/// `unread` (the file cannot be opened or read), `unsized` (its stat
/// size is not what it holds: not a regular file, which the tracer
/// must not read (a pipe's bytes are the program's), a file of a
/// pseudo file system whose contents are made at each read (sysfs,
/// procfs: st_size 4096 or 0 whatever they hold), or a read that
/// gives other than its size says).
pub fn file_bytes(pid: i32, fd: i64, off: u64, len: u64) -> Result<Vec<u8>, &'static str> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let path = format!("/proc/{pid}/fd/{fd}");
    // a FIFO is not opened at all (an open of one with no writer
    // blocks), and nothing is opened blocking
    if !std::fs::metadata(&path)
        .map_err(|_| "unread")?
        .file_type()
        .is_file()
    {
        return Err("unsized");
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
        .map_err(|_| "unread")?;
    let meta = f.metadata().map_err(|_| "unread")?;
    if !meta.file_type().is_file() || pseudo_fs(&f) {
        return Err("unsized");
    }
    let size = meta.len();
    let want = off.saturating_add(len).min(size).max(off) - off;
    // read to the end (or `len`), whatever the size said, to see that
    // the file holds what its size says
    let mut data = vec![0u8; len.min(want.saturating_add(1)) as usize];
    let mut got = 0;
    while got < data.len() {
        match f.read_at(&mut data[got..], off + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err("unread"),
        }
    }
    if got as u64 != want {
        return Err("unsized");
    }
    data.truncate(got);
    Ok(data)
}

/// Whether `f` is on a file system whose files are made at each read
/// and whose sizes say nothing (sysfs, procfs, debugfs, tracefs,
/// cgroup, securityfs, configfs).
fn pseudo_fs(f: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd;
    const PSEUDO: [u32; 8] = [
        0x6265_6572, // sysfs
        0x9fa0,      // proc
        0x6462_6720, // debugfs
        0x7472_6163, // tracefs
        0x0027_e0eb, // cgroup
        0x6367_7270, // cgroup2
        0x7363_6673, // securityfs
        0x6265_6570, // configfs
    ];
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::fstatfs(f.as_raw_fd(), &mut st) };
    r == 0 && PSEUDO.contains(&(st.f_type as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty iovec between two others is skipped (preadv with
    /// {p,50},{q,0},{p+50,250} returning 100 was "could not be read
    /// back": the copy stopped at the empty one).
    #[test]
    fn an_empty_iovec_in_the_middle_is_skipped() {
        let me = std::process::id() as i32;
        let buf: Vec<u8> = (0..=255).collect();
        let p = buf.as_ptr() as u64;
        let got = read_bufs(me, &[(p, 50), (p + 7, 0), (p + 50, 250)], 100).unwrap();
        assert_eq!(got, buf[..100]);
        assert_eq!(read_bufs(me, &[(p, 50), (p, 0)], 50).unwrap(), buf[..50]);
        assert_eq!(read_bufs(me, &[(p, 50)], 60), None);
    }

    /// An fd of a file unlinked while open is named by the name it had;
    /// a live file whose name ends ` (deleted)` keeps its name.
    #[test]
    fn an_unlinked_files_fd_is_named_by_its_name_and_a_live_deleted_name_is_kept() {
        use std::os::fd::AsRawFd;
        let me = std::process::id() as i32;
        let dir = std::env::temp_dir().join(format!("wbspec-fd-{me}"));
        std::fs::create_dir_all(&dir).unwrap();
        let gone = std::fs::File::create(dir.join("x")).unwrap();
        std::fs::remove_file(dir.join("x")).unwrap();
        let live = std::fs::File::create(dir.join("x (deleted)")).unwrap();
        assert_eq!(
            fd_on(&dir, me, gone.as_raw_fd() as i64).as_deref(),
            Some("x")
        );
        assert_eq!(
            fd_on(&dir, me, live.as_raw_fd() as i64).as_deref(),
            Some("x%20(deleted)")
        );
        drop((gone, live));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// sendfile's source as the tracer reads it: a regular file's bytes
    /// (fewer at its end), a sysfs or procfs file `unsized` (its size
    /// says 4096 or 0 whatever it holds), a pipe not read at all.
    #[test]
    fn a_sendfile_source_is_read_only_when_its_size_says_what_it_holds() {
        use std::os::fd::AsRawFd;
        let me = std::process::id() as i32;
        let mut t = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut t, &[7u8; 100]).unwrap();
        let fd = t.as_raw_fd() as i64;
        assert_eq!(file_bytes(me, fd, 0, 1 << 20), Ok(vec![7u8; 100]));
        assert_eq!(file_bytes(me, fd, 90, 5), Ok(vec![7u8; 5]));
        assert_eq!(file_bytes(me, fd, 200, 5), Ok(vec![]));
        for p in [
            "/proc/self/status",
            "/sys/kernel/mm/transparent_hugepage/enabled",
        ] {
            let Ok(f) = std::fs::File::open(p) else {
                continue;
            };
            let fd = f.as_raw_fd() as i64;
            assert_eq!(file_bytes(me, fd, 0, 4096), Err("unsized"), "{p}");
            assert_eq!(file_bytes(me, fd, 0, 4), Err("unsized"), "{p}");
        }
        let mut p = [0i32; 2];
        assert_eq!(unsafe { libc::pipe(p.as_mut_ptr()) }, 0);
        assert_eq!(unsafe { libc::write(p[1], b"abc".as_ptr().cast(), 3) }, 3);
        assert_eq!(file_bytes(me, p[0] as i64, 0, 3), Err("unsized"));
        let mut b = [0u8; 3];
        // (the pipe still holds its bytes: the tracer took none)
        assert_eq!(unsafe { libc::read(p[0], b.as_mut_ptr().cast(), 3) }, 3);
        unsafe { libc::close(p[0]) };
        unsafe { libc::close(p[1]) };
    }

    #[test]
    fn words_are_one_word() {
        assert_eq!(word(""), ".");
        assert_eq!(word("f"), "f");
        assert_eq!(word("a b%\n"), "a%20b%25%0A");
        assert_eq!(word("path=x#2"), "path%3Dx%232");
    }

    #[test]
    fn paths_resolve_without_touching_the_mount() {
        let me = std::process::id() as i32;
        let m = Path::new("/nonexistent-m");
        let r = resolve(m, me, None, b"/nonexistent-m/./a/../b//c").unwrap();
        assert_eq!(r, PathBuf::from("/nonexistent-m/b/c"));
        assert_eq!(under(m, &r).as_deref(), Some("b/c"));
        assert_eq!(under(m, m).as_deref(), Some("."));
        assert_eq!(under(m, Path::new("/nonexistent-mx/f")), None);
        let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
        assert_eq!(resolve(m, me, None, b"x").unwrap(), cwd.join("x"));
        // symbolic links outside the mount that lead onto it
        let d = std::env::temp_dir().join(format!("wbspec-resolve-{me}"));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("real/mnt")).unwrap();
        std::os::unix::fs::symlink("real", d.join("abs")).unwrap();
        std::os::unix::fs::symlink("../real/mnt", d.join("real/rel")).unwrap();
        let d = d.canonicalize().unwrap();
        let mnt = d.join("real/mnt");
        let via = |p: &Path| resolve(&mnt, me, None, p.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(via(&d.join("abs/mnt/f")), mnt.join("f"));
        assert_eq!(via(&d.join("real/rel/x/../f")), mnt.join("f"));
        assert_eq!(via(&d.join("abs/../real/mnt")), mnt);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn tags_of_own_memory() {
        let me = std::process::id() as i32;
        let mut a = vec![b'A'; 4096];
        a.extend(vec![0u8; 4096]);
        a.extend(vec![b'C'; 100]);
        let b = vec![b'D'; 8192];
        let bufs = [
            (a.as_ptr() as u64, a.len() as u64),
            (b.as_ptr() as u64, b.len() as u64),
        ];
        // 8292 bytes of a, then b: offsets 0, 4096, 8192 in a, 12288 in b
        let tags = |bufs: &[(u64, u64)], n: u64| {
            read_bufs(me, bufs, n).map(|d| crate::trace::page_tags(&d))
        };
        assert_eq!(tags(&bufs, 16384).as_deref(), Some("A.CD"));
        assert_eq!(tags(&bufs, 4097).as_deref(), Some("A."));
        assert_eq!(tags(&bufs, 0).as_deref(), Some(""));
        assert_eq!(tags(&bufs[..1], 16384), None);
        // the bytes themselves, across the two buffers
        let d = read_bufs(me, &bufs, 8294).unwrap();
        assert_eq!(
            (&d[8190..8194], &d[8292..]),
            (&[0, 0, b'C', b'C'][..], &[b'D'; 2][..])
        );
        let s = std::ffi::CString::new("abc").unwrap();
        assert_eq!(read_cstr(me, s.as_ptr() as u64).unwrap(), b"abc");
    }
}
