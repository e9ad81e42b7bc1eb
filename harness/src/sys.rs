//! Thin raw-libc syscall wrappers. Each returns the raw return value and errno
//! (0 on success) so that workloads can record exactly what the kernel said.
use std::ffi::CString;
use std::path::Path;

/// Result of one syscall: return value, errno (0 when ret >= 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ret {
    pub ret: i64,
    pub errno: i32,
}

impl Ret {
    fn from(ret: i64) -> Ret {
        let errno = if ret < 0 {
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
        } else {
            0
        };
        Ret { ret, errno }
    }
}

pub fn cpath(p: &Path) -> CString {
    use std::os::unix::ffi::OsStrExt;
    CString::new(p.as_os_str().as_bytes()).expect("path without NUL")
}

pub fn open(p: &Path, flags: i32, mode: u32) -> Ret {
    let c = cpath(p);
    Ret::from(unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, mode) } as i64)
}

pub fn close(fd: i32) -> Ret {
    Ret::from(unsafe { libc::close(fd) } as i64)
}

pub fn pwrite(fd: i32, buf: &[u8], off: u64) -> Ret {
    Ret::from(unsafe { libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), off as i64) } as i64)
}

pub fn pread(fd: i32, buf: &mut [u8], off: u64) -> Ret {
    Ret::from(unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), off as i64) } as i64)
}

pub fn ftruncate(fd: i32, len: u64) -> Ret {
    Ret::from(unsafe { libc::ftruncate(fd, len as i64) } as i64)
}

pub fn truncate(p: &Path, len: u64) -> Ret {
    let c = cpath(p);
    Ret::from(unsafe { libc::truncate(c.as_ptr(), len as i64) } as i64)
}

pub fn fsync(fd: i32) -> Ret {
    Ret::from(unsafe { libc::fsync(fd) } as i64)
}

/// sync_file_range(SYNC_FILE_RANGE_WRITE): start WB_SYNC_NONE writeback, do not wait.
pub fn sync_file_range_write(fd: i32, off: u64, len: u64) -> Ret {
    Ret::from(unsafe {
        libc::sync_file_range(fd, off as i64, len as i64, libc::SYNC_FILE_RANGE_WRITE)
    } as i64)
}

/// sync_file_range(WAIT_BEFORE | WRITE | WAIT_AFTER): write the range back
/// (WB_SYNC_ALL) and wait for PG_writeback on it, before and after.
pub fn sync_file_range_wait(fd: i32, off: u64, len: u64) -> Ret {
    Ret::from(unsafe {
        libc::sync_file_range(
            fd,
            off as i64,
            len as i64,
            libc::SYNC_FILE_RANGE_WAIT_BEFORE
                | libc::SYNC_FILE_RANGE_WRITE
                | libc::SYNC_FILE_RANGE_WAIT_AFTER,
        )
    } as i64)
}

/// fdatasync(2).
pub fn fdatasync(fd: i32) -> Ret {
    Ret::from(unsafe { libc::fdatasync(fd) } as i64)
}

/// An anonymous memory file (memfd) holding `buf`, for sendfile's source.
pub fn memfd_with(buf: &[u8]) -> Ret {
    let name = CString::new("wbspec-src").expect("name");
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Ret::from(-1);
    }
    let w = pwrite(fd, buf, 0);
    if w.ret != buf.len() as i64 {
        close(fd);
        return if w.ret < 0 {
            w
        } else {
            Ret {
                ret: -1,
                errno: libc::EIO,
            }
        };
    }
    Ret {
        ret: fd as i64,
        errno: 0,
    }
}

/// fstat(2): `ret` is st_size on success.
pub fn fstat_size(fd: i32) -> Ret {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let r = Ret::from(unsafe { libc::fstat(fd, &mut st) } as i64);
    if r.ret < 0 {
        return r;
    }
    Ret {
        ret: st.st_size,
        errno: 0,
    }
}

/// sendfile(out_fd, in_fd) of `count` bytes from offset 0 of `in_fd`,
/// written at `out_fd`'s file position.
pub fn sendfile(out_fd: i32, in_fd: i32, count: usize) -> Ret {
    let mut off: libc::off_t = 0;
    Ret::from(unsafe { libc::sendfile(out_fd, in_fd, &mut off, count) } as i64)
}

/// lseek(fd, off, SEEK_SET).
pub fn seek(fd: i32, off: u64) -> Ret {
    Ret::from(unsafe { libc::lseek(fd, off as i64, libc::SEEK_SET) } as i64)
}

/// copy_file_range of `len` bytes from offset 0 of `in_fd` to offset
/// `off_out` of `out_fd`.
pub fn copy_file_range(in_fd: i32, out_fd: i32, off_out: u64, len: usize) -> Ret {
    let mut a: libc::loff_t = 0;
    let mut b: libc::loff_t = off_out as libc::loff_t;
    Ret::from(unsafe { libc::copy_file_range(in_fd, &mut a, out_fd, &mut b, len, 0) } as i64)
}

/// statx(fd, AT_STATX_DONT_SYNC, STATX_SIZE): the inode's cached i_size,
/// without a GETATTR. `ret` is the size on success.
pub fn cached_size(fd: i32) -> Ret {
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let empty = c"";
    let r = Ret::from(unsafe {
        libc::statx(
            fd,
            empty.as_ptr(),
            libc::AT_EMPTY_PATH | libc::AT_STATX_DONT_SYNC,
            libc::STATX_SIZE,
            &mut st,
        )
    } as i64);
    if r.ret < 0 {
        return r;
    }
    Ret {
        ret: st.stx_size as i64,
        errno: 0,
    }
}

pub fn stat(p: &Path) -> Ret {
    let c = cpath(p);
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    Ret::from(unsafe { libc::stat(c.as_ptr(), &mut st) } as i64)
}

/// mmap(MAP_SHARED, PROT_READ|PROT_WRITE). Returns the address as usize (0 on failure).
pub fn mmap_shared(fd: i32, len: usize) -> (usize, Ret) {
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        (0, Ret::from(-1))
    } else {
        (p as usize, Ret { ret: 0, errno: 0 })
    }
}

pub fn munmap(addr: usize, len: usize) -> Ret {
    Ret::from(unsafe { libc::munmap(addr as *mut libc::c_void, len) } as i64)
}

pub fn msync(addr: usize, len: usize, sync: bool) -> Ret {
    let fl = if sync { libc::MS_SYNC } else { libc::MS_ASYNC };
    Ret::from(unsafe { libc::msync(addr as *mut libc::c_void, len, fl) } as i64)
}

/// Store one byte into a mapping (may fault and block in page_mkwrite).
///
/// # Safety
/// `addr` must be a valid writable mapping of at least `off + 1` bytes.
pub unsafe fn store_byte(addr: usize, off: usize, b: u8) {
    std::ptr::write_volatile((addr + off) as *mut u8, b);
}

/// A 4096-aligned buffer (for O_DIRECT).
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub fn new(len: usize) -> AlignedBuf {
        let layout = std::alloc::Layout::from_size_align(len.max(4096), 4096).expect("layout");
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "alloc");
        AlignedBuf { ptr, len }
    }

    /// Pages filled with the letters of `tags`, one letter per 4 KiB page.
    pub fn pages(tags: &str) -> AlignedBuf {
        let mut b = AlignedBuf::new(tags.len() * 4096);
        for (i, c) in tags.bytes().enumerate() {
            b.bytes_mut()[i * 4096..(i + 1) * 4096].fill(c);
        }
        b
    }

    pub fn bytes(&self) -> &[u8] {
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.len.max(4096), 4096).expect("layout");
        unsafe { std::alloc::dealloc(self.ptr, layout) }
    }
}

pub fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

extern "C" fn on_sigusr1(_: libc::c_int) {}

/// Install a SIGUSR1 handler that does nothing, without SA_RESTART (once
/// per process): a syscall the signal interrupts returns -EINTR rather
/// than restarting, and the process is not disturbed otherwise.
pub fn install_sigusr1() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigusr1 as *const () as usize;
        sa.sa_flags = 0;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut());
    });
}

/// tgkill(getpid(), tid, sig): a signal to one thread of this process.
pub fn tgkill(tid: i32, sig: i32) -> Ret {
    Ret::from(unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, sig) })
}

/// fork a child that pwrites `buf` at `off` to the inherited `fd`, then
/// exits; returns its pid (or -1). Between fork and exit the child calls
/// only pwrite(2) and _exit(2) (async-signal-safe: the runner has other
/// threads). A scenario kills it while its request waits.
pub fn fork_pwrite(fd: i32, buf: &[u8], off: u64) -> i32 {
    let (p, n) = (buf.as_ptr(), buf.len());
    match unsafe { libc::fork() } {
        0 => unsafe {
            libc::pwrite(fd, p.cast(), n, off as i64);
            libc::_exit(0)
        },
        pid => pid,
    }
}

/// Reap our child `pid` within `ms`: Some(wait status), None if it has
/// not exited (it is then still ours to kill).
pub fn reap_within(pid: i32, ms: u64) -> Option<i32> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    loop {
        let mut st = 0;
        let r = unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) };
        if r == pid {
            return Some(st);
        }
        if r < 0 || std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
