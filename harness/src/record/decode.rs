//! Syscall decoding (x86_64): which syscalls at a syscall-entry stop are
//! on a file of the mount, and the `call` mark each becomes, in the
//! vocabulary of conform's event scan (conform/scan.rs):
//!
//! | syscall | mark |
//! |---|---|
//! | open, openat, openat2, creat | `open REL FLAGS path=REL` (FLAGS `0x…`) |
//! | read, pread64, readv, preadv, preadv2 | `pread fd=N off=O len=L path=REL` (ret: `data=TAGS segs=...`, ` buffer=fault` if it stopped short of a byte of its buffer a copy would fault on; ` buffer=unreadable` and no data if its buffer cannot be read back, e.g. memfd_secret memory) |
//! | write, pwrite64, writev, pwritev, pwritev2 | `pwrite fd=N off=O TAGS len=L path=REL segs=...` (ret: ` buffer=changed` if the buffer changed while it ran) |
//! | fsync, fdatasync, close | `NAME fd=N path=REL` |
//! | ftruncate | `ftruncate fd=N SIZE path=REL` |
//! | truncate | `truncate REL SIZE path=REL` |
//! | sync_file_range | `sync_file_range fd=N OFF LEN FLAGS path=REL` |
//! | fstat, newfstatat(fd, "", AT_EMPTY_PATH) | `fstat fd=N path=REL` |
//! | fcntl | `fcntl fd=N cmd=F_SETLK path=REL` (the number if unnamed) |
//! | fadvise64 | `fadvise64 fd=N OFF LEN ADVICE path=REL` (`DONTNEED`...) |
//! | fallocate | `fallocate fd=N mode=0xM OFF LEN path=REL` (since 4 Dec 2026; before, `fallocate fd=N path=REL`) |
//! | mmap of a mount fd | `mmap fd=N off=O len=L shared\|private [populate] prot=rw\|r\|… path=REL` (`populate`: MAP_POPULATE or MAP_LOCKED); its ret mark ends ` vma=exec` when the new mapping is executable (VM_EXEC in /proc/PID/maps: PROT_EXEC or READ_IMPLIES_EXEC) |
//! | mlockall with MCL_FUTURE (no MCL_ONFAULT) | `mlockall future`: later mappings are populated by their mmap |
//! | munmap, msync on a mount mapping | `munmap off=O len=L path=REL`, `msync MS_SYNC off=O len=L path=REL` (`msync_async` for MS_ASYNC) |
//! | sendfile into a mount fd | `sendfile fd=N off=O TAGS len=L path=REL` (ret: ` buffer=changed` if the source or its offset changed while it ran); `sendfile fd=N path=REL copy=WHY` when what it copies is not known (`append`: an O_APPEND fd; `unsized`: a source whose size says nothing, sysfs, procfs, a pipe; `unread`; `none`: nothing at the source's offset) |
//! | dup2, dup3 with an fd on the mount | `dup2 fd=N path=REL from=OLD onto=NEW` (`fd=`: each of the two on the mount) |
//! | fork, vfork, clone/clone3 without CLONE_FILES (a new process) | `fork fd=N path=REL ...` (the mount fds the child gets copies of, if any; `vm` if it shares its parent's memory, CLONE_VM; ret: the child's tid) |
//! | every other clone/clone3 with CLONE_THREAD and CLONE_FILES (a thread), or with CLONE_VM and neither (vfork, posix_spawn) | `thread` (`thread vm`; ret: the new tid), whatever it holds: conform counts the threads that may touch a mapping at once (`THREADS_NOTE`) |
//! | io_uring_setup, process_vm_readv/writev, process_madvise, an open of /proc/PID/mem, setns, unshare(CLONE_NEWPID), a clone with CLONE_UNTRACED or CLONE_NEWPID | `thread untraced=NAME` (`untraced=clone`; with mount fds: `clone ... files=untraced`): threads ptrace does not see (io_uring's workers, an untraced child), another process's memory touched, or pids a PID namespace makes local, so conform counts none |
//! | clone/clone3 with CLONE_FILES and without CLONE_THREAD, or CLONE_THREAD without CLONE_FILES; unshare(CLONE_FILES); close_range with CLOSE_RANGE_UNSHARE | `clone fd=N path=REL ... files=shared\|copied` (`unshare ...`, `close_range ...`), whatever the process holds: a table shared by processes or copied for a thread (no task in conform) |
//!
//! read/write/readv/writev (and preadv2/pwritev2 at offset -1) use the
//! fd's position read at entry (`/proc/PID/fdinfo/N`). Any other
//! syscall with an fd, a path or an address on a file of the mount is
//! marked with its own name (`lseek fd=3 path=f`), and so are the cases
//! above the model's words cannot say: a write on an O_APPEND fd, an I/O
//! of 0 bytes, RWF_* flags, a buffer that is itself a mapping of a mount
//! file, sendfile out of a mount file, an open of a directory
//! (`opendir`). An exec (`execve fd=N path=REL ...`: its close-on-exec
//! fds and its mappings) and the exit of a
//! process's last thread (`exit ...`, [`holdings`]) are marked when the
//! process holds mount files. TAGS: the first byte of every 4 KiB of the data
//! (trace::page_tags). `path=REL` (mount-relative, percent-escaped,
//! `.` for the root) is the file's identity on every mark.
use std::path::Path;

use super::proc;

/// What a marked syscall needs at its exit stop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AtExit {
    Nothing,
    /// A read into these buffers: its `ret` mark carries their page tags.
    Data(Vec<(u64, u64)>),
    /// An mmap of a mount file: later buffers are checked against it.
    Mapped,
    /// A write of these buffers' first `len` bytes, whose digest at entry
    /// was `digest`: read again at exit, and if they changed meanwhile
    /// (the program wrote its buffer while the kernel copied it), the
    /// `ret` mark says ` buffer=changed`.
    Written(Vec<(u64, u64)>, u64, u32),
    /// A sendfile from source fd `fd` at offset `off` (read through the
    /// pointer `ptr`, or the fd's position when it is `None`), asked for
    /// `count` bytes, whose `len` bytes there had digest `digest` at
    /// entry: the source is read again at exit, and if it changed
    /// meanwhile (another thread or process wrote it while the kernel
    /// copied it), the call copied more than it held at entry, or the
    /// offset it leaves is not `off` + what it returned (another thread
    /// moved the position or the pointer's value before the kernel read
    /// it: do_sendfile takes no f_pos_lock), the `ret` mark says
    /// ` buffer=changed`.
    Source {
        fd: i64,
        off: u64,
        ptr: Option<u64>,
        count: u64,
        len: u64,
        digest: u32,
    },
}

/// A syscall to mark: its mark name, its arguments, what to do at exit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub name: String,
    pub args: String,
    pub at_exit: AtExit,
}

fn call(name: &str, args: String) -> Option<Call> {
    Some(Call {
        name: name.into(),
        args,
        at_exit: AtExit::Nothing,
    })
}

/// How a syscall names files.
#[derive(Clone, Copy)]
enum Shape {
    /// fds in these argument positions
    Fds(&'static [usize]),
    /// (dirfd position, path position) pairs (dirfd None: AT_FDCWD)
    Paths(&'static [(Option<usize>, usize)]),
    /// an address range: (addr, len) positions
    Mem,
}

use Shape::*;

/// The syscalls looked at, with how they name files. A syscall not here
/// is not looked at (no x86_64 syscall outside this table takes an fd
/// or a path of a regular file, except io_uring's submissions, which are
/// not followed).
const TABLE: &[(i64, &str, Shape)] = &[
    (libc::SYS_read, "read", Fds(&[0])),
    (libc::SYS_write, "write", Fds(&[0])),
    (libc::SYS_pread64, "pread64", Fds(&[0])),
    (libc::SYS_pwrite64, "pwrite64", Fds(&[0])),
    (libc::SYS_readv, "readv", Fds(&[0])),
    (libc::SYS_writev, "writev", Fds(&[0])),
    (libc::SYS_preadv, "preadv", Fds(&[0])),
    (libc::SYS_pwritev, "pwritev", Fds(&[0])),
    (libc::SYS_preadv2, "preadv2", Fds(&[0])),
    (libc::SYS_pwritev2, "pwritev2", Fds(&[0])),
    (libc::SYS_close, "close", Fds(&[0])),
    (libc::SYS_fsync, "fsync", Fds(&[0])),
    (libc::SYS_fdatasync, "fdatasync", Fds(&[0])),
    (libc::SYS_ftruncate, "ftruncate", Fds(&[0])),
    (libc::SYS_sync_file_range, "sync_file_range", Fds(&[0])),
    (libc::SYS_fstat, "fstat", Fds(&[0])),
    (libc::SYS_mmap, "mmap", Fds(&[4])),
    (libc::SYS_sendfile, "sendfile", Fds(&[0, 1])),
    (libc::SYS_copy_file_range, "copy_file_range", Fds(&[0, 2])),
    (libc::SYS_splice, "splice", Fds(&[0, 2])),
    (libc::SYS_tee, "tee", Fds(&[0, 1])),
    (libc::SYS_lseek, "lseek", Fds(&[0])),
    (libc::SYS_fallocate, "fallocate", Fds(&[0])),
    (libc::SYS_fadvise64, "fadvise64", Fds(&[0])),
    (libc::SYS_readahead, "readahead", Fds(&[0])),
    (libc::SYS_ioctl, "ioctl", Fds(&[0])),
    (libc::SYS_fcntl, "fcntl", Fds(&[0])),
    (libc::SYS_flock, "flock", Fds(&[0])),
    (libc::SYS_fstatfs, "fstatfs", Fds(&[0])),
    (libc::SYS_getdents64, "getdents64", Fds(&[0])),
    (libc::SYS_getdents, "getdents", Fds(&[0])),
    (libc::SYS_fchmod, "fchmod", Fds(&[0])),
    (libc::SYS_fchown, "fchown", Fds(&[0])),
    (libc::SYS_fchdir, "fchdir", Fds(&[0])),
    (libc::SYS_fsetxattr, "fsetxattr", Fds(&[0])),
    (libc::SYS_fgetxattr, "fgetxattr", Fds(&[0])),
    (libc::SYS_flistxattr, "flistxattr", Fds(&[0])),
    (libc::SYS_fremovexattr, "fremovexattr", Fds(&[0])),
    (libc::SYS_syncfs, "syncfs", Fds(&[0])),
    (libc::SYS_dup, "dup", Fds(&[0])),
    (libc::SYS_dup2, "dup2", Fds(&[0, 1])),
    (libc::SYS_dup3, "dup3", Fds(&[0, 1])),
    (libc::SYS_close_range, "close_range", Fds(&[])),
    (libc::SYS_open, "open", Paths(&[(None, 0)])),
    (libc::SYS_creat, "creat", Paths(&[(None, 0)])),
    (libc::SYS_openat, "openat", Paths(&[(Some(0), 1)])),
    (libc::SYS_openat2, "openat2", Paths(&[(Some(0), 1)])),
    (libc::SYS_truncate, "truncate", Paths(&[(None, 0)])),
    (libc::SYS_stat, "stat", Paths(&[(None, 0)])),
    (libc::SYS_lstat, "lstat", Paths(&[(None, 0)])),
    (libc::SYS_newfstatat, "newfstatat", Paths(&[(Some(0), 1)])),
    (libc::SYS_statx, "statx", Paths(&[(Some(0), 1)])),
    (libc::SYS_access, "access", Paths(&[(None, 0)])),
    (libc::SYS_faccessat, "faccessat", Paths(&[(Some(0), 1)])),
    (libc::SYS_faccessat2, "faccessat2", Paths(&[(Some(0), 1)])),
    (libc::SYS_readlink, "readlink", Paths(&[(None, 0)])),
    (libc::SYS_readlinkat, "readlinkat", Paths(&[(Some(0), 1)])),
    (libc::SYS_unlink, "unlink", Paths(&[(None, 0)])),
    (libc::SYS_unlinkat, "unlinkat", Paths(&[(Some(0), 1)])),
    (libc::SYS_rename, "rename", Paths(&[(None, 0), (None, 1)])),
    (
        libc::SYS_renameat,
        "renameat",
        Paths(&[(Some(0), 1), (Some(2), 3)]),
    ),
    (
        libc::SYS_renameat2,
        "renameat2",
        Paths(&[(Some(0), 1), (Some(2), 3)]),
    ),
    (libc::SYS_link, "link", Paths(&[(None, 0), (None, 1)])),
    (
        libc::SYS_linkat,
        "linkat",
        Paths(&[(Some(0), 1), (Some(2), 3)]),
    ),
    (libc::SYS_symlink, "symlink", Paths(&[(None, 1)])),
    (libc::SYS_symlinkat, "symlinkat", Paths(&[(Some(1), 2)])),
    (libc::SYS_mkdir, "mkdir", Paths(&[(None, 0)])),
    (libc::SYS_mkdirat, "mkdirat", Paths(&[(Some(0), 1)])),
    (libc::SYS_rmdir, "rmdir", Paths(&[(None, 0)])),
    (libc::SYS_mknod, "mknod", Paths(&[(None, 0)])),
    (libc::SYS_mknodat, "mknodat", Paths(&[(Some(0), 1)])),
    (libc::SYS_chmod, "chmod", Paths(&[(None, 0)])),
    (libc::SYS_fchmodat, "fchmodat", Paths(&[(Some(0), 1)])),
    (libc::SYS_chown, "chown", Paths(&[(None, 0)])),
    (libc::SYS_lchown, "lchown", Paths(&[(None, 0)])),
    (libc::SYS_fchownat, "fchownat", Paths(&[(Some(0), 1)])),
    (libc::SYS_utime, "utime", Paths(&[(None, 0)])),
    (libc::SYS_utimes, "utimes", Paths(&[(None, 0)])),
    (libc::SYS_utimensat, "utimensat", Paths(&[(Some(0), 1)])),
    (libc::SYS_futimesat, "futimesat", Paths(&[(Some(0), 1)])),
    (libc::SYS_getxattr, "getxattr", Paths(&[(None, 0)])),
    (libc::SYS_lgetxattr, "lgetxattr", Paths(&[(None, 0)])),
    (libc::SYS_setxattr, "setxattr", Paths(&[(None, 0)])),
    (libc::SYS_lsetxattr, "lsetxattr", Paths(&[(None, 0)])),
    (libc::SYS_listxattr, "listxattr", Paths(&[(None, 0)])),
    (libc::SYS_llistxattr, "llistxattr", Paths(&[(None, 0)])),
    (libc::SYS_removexattr, "removexattr", Paths(&[(None, 0)])),
    (libc::SYS_lremovexattr, "lremovexattr", Paths(&[(None, 0)])),
    (libc::SYS_chdir, "chdir", Paths(&[(None, 0)])),
    (libc::SYS_statfs, "statfs", Paths(&[(None, 0)])),
    (libc::SYS_execve, "execve", Paths(&[(None, 0)])),
    (libc::SYS_execveat, "execveat", Paths(&[(Some(0), 1)])),
    (
        libc::SYS_name_to_handle_at,
        "name_to_handle_at",
        Paths(&[(Some(0), 1)]),
    ),
    (libc::SYS_munmap, "munmap", Mem),
    (libc::SYS_msync, "msync", Mem),
    (libc::SYS_mprotect, "mprotect", Mem),
    // pkey_mprotect(addr, len, prot, -1) is mprotect: it can add
    // PROT_WRITE to a shared mapping marked prot=r, which conform then
    // gives no stores (an unmarked one made a false VIOLATION)
    (libc::SYS_pkey_mprotect, "pkey_mprotect", Mem),
    (libc::SYS_madvise, "madvise", Mem),
    (libc::SYS_mremap, "mremap", Mem),
    (libc::SYS_mlock, "mlock", Mem),
    (libc::SYS_munlock, "munlock", Mem),
];

/// The name of syscall `nr` if it is in the table.
pub fn name_of(nr: i64) -> Option<&'static str> {
    TABLE.iter().find(|t| t.0 == nr).map(|t| t.1)
}

/// What the decoder knows besides the stopped thread.
pub struct Env<'a> {
    pub mnt: &'a Path,
    /// A mount file has been mapped: buffers are checked against the
    /// tracee's mappings before they are read.
    pub mapped: bool,
}

/// The mount files `pid` holds: `fd=N path=REL` for each fd on the
/// mount (with `exec`, each close-on-exec one: do_close_on_exec closes
/// only those, the others stay open in the new program), `map path=REL`
/// for each mapping of a mount file; None if none. An exit closes those
/// fds (FLUSH, RELEASE at the last reference), an exec or an exit
/// unmaps those mappings (fuse_vma_close writes them back), in the
/// thread's name.
pub fn holdings(env: &Env, pid: i32, exec: bool) -> Option<String> {
    let mut v = mount_fds(env, pid, exec);
    if env.mapped {
        let mut maps: Vec<String> = proc::mount_maps(env.mnt, pid)
            .into_iter()
            .map(|m| format!("map path={}", m.rel))
            .collect();
        maps.dedup();
        v.extend(maps);
    }
    (!v.is_empty()).then(|| v.join(" "))
}

/// `fds` and then `w`, space-separated.
fn words(mut fds: Vec<String>, w: &str) -> String {
    fds.push(w.into());
    fds.join(" ")
}

/// `fd=N path=REL` for each fd of `pid` on the mount (with `cloexec`,
/// each close-on-exec one), sorted.
fn mount_fds(env: &Env, pid: i32, cloexec: bool) -> Vec<String> {
    let on_exec = |f: i64| proc::fdinfo(pid, f).is_some_and(|(_, fl)| fl & libc::O_CLOEXEC != 0);
    let mut v: Vec<String> = proc::fds(pid)
        .into_iter()
        .filter(|&f| !cloexec || on_exec(f))
        .filter_map(|f| proc::fd_on(env.mnt, pid, f).map(|r| format!("fd={f} path={r}")))
        .collect();
    v.sort();
    v
}

/// For fork, vfork, clone and clone3: the clone flags (0 for fork and
/// vfork, whose CLONE_VFORK does not share the table); None for other
/// syscalls. Some(None): a clone3 whose arguments cannot be read.
fn clone_flags(pid: i32, nr: i64, a: [u64; 6]) -> Option<Option<u64>> {
    Some(match nr {
        libc::SYS_fork => Some(0),
        libc::SYS_vfork => Some((libc::CLONE_VM | libc::CLONE_VFORK) as u64),
        libc::SYS_clone => Some(a[0]),
        libc::SYS_clone3 => proc::read_u64(pid, a[0]),
        _ => return None,
    })
}

/// Whether open/openat/openat2 `nr` of thread `pid` opens some
/// process's `mem` file (/proc/PID/mem, /proc/PID/task/TID/mem, or
/// relative to a /proc directory fd: any path ending in `/mem` or
/// named `mem` under a directory fd, to be safe).
fn proc_mem(pid: i32, nr: i64, a: [u64; 6]) -> bool {
    let at = if nr == libc::SYS_open { a[0] } else { a[1] };
    let Some(p) = proc::read_cstr(pid, at) else {
        return false;
    };
    let p = String::from_utf8_lossy(&p);
    (p.starts_with("/proc/") && p.ends_with("/mem")) || (nr != libc::SYS_open && p == "mem")
}

/// The mark of syscall `nr` with arguments `a` of thread `pid` at its
/// entry stop, if it is on a file of the mount.
pub fn entry(env: &Env, pid: i32, nr: i64, a: [u64; 6]) -> Option<Call> {
    if nr == libc::SYS_execve || nr == libc::SYS_execveat {
        if let Some(h) = holdings(env, pid, true) {
            // an exec of a process holding mount files: its close-on-exec
            // fds and its mappings go in it
            let name = name_of(nr).unwrap_or("execve");
            return call(name, h);
        }
    }
    // threads no clone of its own shows: io_uring's io-wq and SQPOLL
    // workers (create_io_thread: CLONE_UNTRACED) copy to and from the
    // process's memory, and process_vm_readv/writev touch another
    // process's; conform then counts no threads (THREADS_NOTE)
    let untraced = match nr {
        libc::SYS_io_uring_setup => Some("io_uring_setup"),
        libc::SYS_process_vm_readv => Some("process_vm_readv"),
        libc::SYS_process_vm_writev => Some("process_vm_writev"),
        // another process's pages faulted from here (madvise_vma's
        // WILLNEED reads them in)
        libc::SYS_process_madvise => Some("process_madvise"),
        // a PID namespace: a fork's or clone's ret inside it is a local
        // pid, not the tid its marks carry
        libc::SYS_setns => Some("setns"),
        libc::SYS_unshare if a[0] & libc::CLONE_NEWPID as u64 != 0 => Some("unshare_newpid"),
        // another process's memory through /proc/PID/mem (access_remote_vm)
        libc::SYS_open | libc::SYS_openat | libc::SYS_openat2 if proc_mem(pid, nr, a) => {
            Some("proc_mem")
        }
        _ => None,
    };
    if let Some(u) = untraced {
        return call("thread", format!("untraced={u}"));
    }
    // mlockall(MCL_FUTURE): every later mmap is populated in its call
    if nr == libc::SYS_mlockall
        && a[0] & libc::MCL_FUTURE as u64 != 0
        && a[0] & libc::MCL_ONFAULT as u64 == 0
    {
        return call("mlockall", "future".into());
    }
    // a new process (its own copy of the fd table: no CLONE_FILES) made
    // by one holding mount fds: each fd's open file has a reference more
    // (the copies are closed in the child, or at its exit)
    if let Some(flags) = clone_flags(pid, nr, a) {
        let fds = mount_fds(env, pid, false);
        let (files, thread, vm, untraced) = match flags {
            Some(f) => (
                f & libc::CLONE_FILES as u64 != 0,
                f & libc::CLONE_THREAD as u64 != 0,
                f & libc::CLONE_VM as u64 != 0,
                f & libc::CLONE_UNTRACED as u64 != 0,
            ),
            None => (false, true, true, true),
        };
        // a child ptrace does not follow (CLONE_UNTRACED, or flags that
        // could not be read): what it does is not seen, so conform counts
        // no threads; holding mount fds, it is not modelled at all. A
        // child in a new PID namespace: rets inside it are local pids
        if untraced || flags.is_some_and(|f| f & libc::CLONE_NEWPID as u64 != 0) {
            return match fds.is_empty() {
                true => call("thread", "untraced=clone".into()),
                false => call("clone", words(fds, "files=untraced")),
            };
        }
        return match (files, thread) {
            // a thread: the same table, the same memory. Marked so that
            // conform knows how many threads may touch a mapping at once
            // (THREADS_NOTE)
            (true, true) => call("thread", String::new()),
            // a child sharing the memory (vfork, posix_spawn's
            // CLONE_VM): as a thread of its parent for the mappings
            (false, false) if fds.is_empty() && vm => call("thread", "vm".into()),
            // a child with a copy of the memory: it keeps copies of the
            // parent's mappings (conform counts its threads if the
            // parent's memory made a mapping)
            (false, false) if fds.is_empty() => call("fork", String::new()),
            (false, false) if vm => call("fork", words(fds, "vm")),
            (false, false) => call("fork", fds.join(" ")),
            // a process sharing the table (copy_files: CLONE_FILES, no
            // copy): its exit closes nothing while another holds the
            // table (put_files_struct: "if (atomic_dec_and_test(
            // &files->count))"), so its fds are not its own; or a
            // thread with a copy of its own, whose exit is not the
            // process's (not marked). Marked whatever it holds (it may
            // open mount files later); conform has no task for it
            (true, false) => call("clone", words(fds, "files=shared")),
            (false, true) => call("clone", words(fds, "files=copied")),
        };
    }
    // unshare(CLONE_FILES), close_range(CLOSE_RANGE_UNSHARE) of a thread
    // sharing its table: unshare_fd copies it (each open file one more
    // reference; this thread's closes flush without releasing, its exit
    // is not the process's). Marked whatever it holds, as a clone
    if (nr == libc::SYS_unshare && a[0] & libc::CLONE_FILES as u64 != 0)
        || (nr == libc::SYS_close_range && a[2] & libc::CLOSE_RANGE_UNSHARE as u64 != 0)
    {
        let name = if nr == libc::SYS_unshare {
            "unshare"
        } else {
            "close_range"
        };
        return call(name, words(mount_fds(env, pid, false), "files=copied"));
    }
    let (_, name, shape) = TABLE.iter().find(|t| t.0 == nr)?;
    let fd = |i: usize| a[i] as i32 as i64;
    match shape {
        Fds(_) if nr == libc::SYS_close_range => {
            let (lo, hi) = (a[0], a[1].min(i32::MAX as u64));
            let on: Vec<String> = proc::fds(pid)
                .into_iter()
                .filter(|f| (lo..=hi).contains(&(*f as u64)))
                .filter_map(|f| proc::fd_on(env.mnt, pid, f).map(|r| format!("fd={f} path={r}")))
                .collect();
            (!on.is_empty()).then(|| Call {
                name: name.to_string(),
                args: on.join(" "),
                at_exit: AtExit::Nothing,
            })
        }
        Fds(pos) => {
            let on: Vec<(usize, String)> = pos
                .iter()
                .filter_map(|i| proc::fd_on(env.mnt, pid, fd(*i)).map(|r| (*i, r)))
                .collect();
            if on.is_empty() {
                return None;
            }
            let first = pos[0];
            // the model's words, when they say what the syscall does
            let modelled = if on[0].0 == first {
                fd_call(env, pid, nr, a, &on[0].1)
            } else {
                None
            };
            modelled.or_else(|| {
                let mut args: Vec<String> = on
                    .iter()
                    .map(|(i, r)| format!("fd={} path={r}", fd(*i)))
                    .collect();
                if nr == libc::SYS_dup2 || nr == libc::SYS_dup3 {
                    // which fd is the copy's source and which it replaces
                    // (closing it: filp_close, FLUSH): `fd=` alone cannot
                    // say when only one of them is on the mount
                    args.push(format!("from={} onto={}", fd(0), fd(1)));
                }
                call(name, args.join(" "))
            })
        }
        Paths(ps) => {
            // newfstatat / statx / utimensat on an fd (empty or no path)
            if let Some(Some(d)) = ps.first().map(|p| p.0) {
                let path = proc::read_cstr(pid, a[ps[0].1]);
                if path.as_deref().is_none_or(|p| p.is_empty()) {
                    let r = proc::fd_on(env.mnt, pid, fd(d))?;
                    let empty_path = match nr {
                        libc::SYS_newfstatat => a[3] & libc::AT_EMPTY_PATH as u64 != 0,
                        _ => false,
                    };
                    let n = if empty_path { "fstat" } else { name };
                    return call(n, format!("fd={} path={r}", fd(d)));
                }
            }
            let rels: Vec<String> = ps
                .iter()
                .filter_map(|(d, p)| {
                    let s = proc::read_cstr(pid, a[*p])?;
                    let full = proc::resolve(env.mnt, pid, d.map(fd), &s)?;
                    proc::under(env.mnt, &full)
                })
                .collect();
            let rel = rels.first()?;
            path_call(pid, nr, a, rel).or_else(|| {
                let args: Vec<String> = rels.iter().map(|r| format!("path={r}")).collect();
                call(name, args.join(" "))
            })
        }
        Mem => {
            if !env.mapped {
                return None;
            }
            let (off, len, rel) = proc::mapping_at(env.mnt, pid, a[0], a[1])?;
            let range = format!("off={off} len={len} path={rel}");
            match nr {
                libc::SYS_munmap => call("munmap", range),
                libc::SYS_msync if a[2] & libc::MS_SYNC as u64 != 0 => {
                    call("msync", format!("MS_SYNC {range}"))
                }
                libc::SYS_msync if a[2] & libc::MS_ASYNC as u64 != 0 => {
                    call("msync_async", format!("MS_ASYNC {range}"))
                }
                _ => call(name, range),
            }
        }
    }
}

/// A syscall whose first fd is the mount file `rel`, in the model's
/// words; None: it is marked with its own name.
fn fd_call(env: &Env, pid: i32, nr: i64, a: [u64; 6], rel: &str) -> Option<Call> {
    let fd = a[0] as i32 as i64;
    let (pos, flags) = proc::fdinfo(pid, fd)?;
    let append = flags & libc::O_APPEND != 0;
    // the offset of a positional I/O (-1: the fd's position)
    let at = |o: u64| if o as i64 == -1 { pos } else { o };
    let plain = |n: &str| call(n, format!("fd={fd} path={rel}"));
    match nr {
        libc::SYS_read
        | libc::SYS_pread64
        | libc::SYS_readv
        | libc::SYS_preadv
        | libc::SYS_preadv2 => {
            let (bufs, off) = match nr {
                libc::SYS_read => (vec![(a[1], a[2])], pos),
                libc::SYS_pread64 => (vec![(a[1], a[2])], a[3]),
                libc::SYS_readv => (proc::read_iovecs(pid, a[1], a[2])?, pos),
                _ if nr == libc::SYS_preadv2 && a[5] != 0 => return None,
                _ => (proc::read_iovecs(pid, a[1], a[2])?, at(a[3])),
            };
            let len: u64 = bufs.iter().map(|b| b.1).sum();
            if len == 0 || (env.mapped && proc::mapped_on_mount(env.mnt, pid, &bufs)) {
                return None;
            }
            Some(Call {
                name: "pread".into(),
                args: format!("fd={fd} off={off} len={len} path={rel}"),
                at_exit: AtExit::Data(bufs),
            })
        }
        libc::SYS_write
        | libc::SYS_pwrite64
        | libc::SYS_writev
        | libc::SYS_pwritev
        | libc::SYS_pwritev2 => {
            if append {
                return None;
            }
            let (bufs, off) = match nr {
                libc::SYS_write => (vec![(a[1], a[2])], pos),
                libc::SYS_pwrite64 => (vec![(a[1], a[2])], a[3]),
                libc::SYS_writev => (proc::read_iovecs(pid, a[1], a[2])?, pos),
                _ if nr == libc::SYS_pwritev2 && a[5] != 0 => return None,
                _ => (proc::read_iovecs(pid, a[1], a[2])?, at(a[3])),
            };
            let len: u64 = bufs.iter().map(|b| b.1).sum();
            if len == 0 || (env.mapped && proc::mapped_on_mount(env.mnt, pid, &bufs)) {
                return None;
            }
            let data = proc::read_bufs(pid, &bufs, len)?;
            let (tags, units, raw) = data_words(&data);
            Some(Call {
                name: "pwrite".into(),
                args: format!("fd={fd} off={off} {tags} len={len}{units} path={rel}{raw}"),
                at_exit: AtExit::Written(bufs, len, crate::trace::digest(&data)),
            })
        }
        libc::SYS_sendfile => {
            // out = the mount file; the source must not be on the mount
            // (out of a mount file: marked by its own name, no `copy=`)
            let src = a[1] as i32 as i64;
            if proc::fd_on(env.mnt, pid, src).is_some() {
                return None;
            }
            // why the bytes it copies are not known: its own name with
            // `copy=WHY`, so conform says the right thing
            let unknown = |why: &str| call("sendfile", format!("fd={fd} path={rel} copy={why}"));
            if append {
                return unknown("append");
            }
            let ptr = (a[2] != 0).then_some(a[2]);
            let Some(src_off) = source_offset(pid, src, ptr) else {
                return unknown("unread");
            };
            // what the source holds from its offset, up to the count
            let data = match proc::file_bytes(pid, src, src_off, a[3]) {
                Ok(d) => d,
                Err(why) => return unknown(why),
            };
            if data.is_empty() {
                return unknown("none");
            }
            let (tags, units, raw) = data_words(&data);
            let len = data.len();
            Some(Call {
                name: "sendfile".into(),
                args: format!("fd={fd} off={pos} {tags} len={len}{units} path={rel}{raw}"),
                at_exit: AtExit::Source {
                    fd: src,
                    off: src_off,
                    ptr,
                    count: a[3],
                    len: len as u64,
                    digest: crate::trace::digest(&data),
                },
            })
        }
        libc::SYS_close => plain("close"),
        libc::SYS_fsync => plain("fsync"),
        libc::SYS_fdatasync => plain("fdatasync"),
        libc::SYS_fstat => plain("fstat"),
        // the command says whether it is a byte-range lock (conform
        // filters those when the server did not negotiate POSIX locks)
        libc::SYS_fcntl => call(
            "fcntl",
            format!("fd={fd} cmd={} path={rel}", fcntl_cmd(a[1])),
        ),
        libc::SYS_fadvise64 => call(
            "fadvise64",
            format!("fd={fd} {} {} {} path={rel}", a[1], a[2], fadvice(a[3])),
        ),
        // the mode says whether fuse_file_fallocate writes back and
        // drops pages (PUNCH_HOLE, ZERO_RANGE) before its request
        libc::SYS_fallocate => call(
            "fallocate",
            format!(
                "fd={fd} mode={:#x} {} {} path={rel}",
                a[1] as u32, a[2], a[3]
            ),
        ),
        libc::SYS_ftruncate => call("ftruncate", format!("fd={fd} {} path={rel}", a[1])),
        libc::SYS_sync_file_range => call(
            "sync_file_range",
            format!("fd={fd} {} {} {} path={rel}", a[1], a[2], sfr_flags(a[3])),
        ),
        libc::SYS_mmap => {
            let fl = a[3] as i32;
            let kind = if fl & libc::MAP_SHARED != 0 {
                "shared"
            } else {
                "private"
            };
            // MAP_POPULATE, MAP_LOCKED: the call faults the pages in
            // itself (populate_vma_page_range), before it returns
            let populate = if fl & (libc::MAP_POPULATE | libc::MAP_LOCKED) != 0 {
                " populate"
            } else {
                ""
            };
            Some(Call {
                name: "mmap".into(),
                args: format!(
                    "fd={} off={} len={} {kind}{populate} prot={} path={rel}",
                    a[4] as i32,
                    a[5],
                    a[1],
                    prot(a[2])
                ),
                at_exit: AtExit::Mapped,
            })
        }
        _ => None,
    }
}

/// An mmap protection as letters (`rw`, `r`, `none`; `x` for
/// PROT_EXEC): what the mapping may do, for conform's stores.
fn prot(p: u64) -> String {
    let p = p as i32;
    let mut s = String::new();
    for (bit, c) in [
        (libc::PROT_READ, 'r'),
        (libc::PROT_WRITE, 'w'),
        (libc::PROT_EXEC, 'x'),
    ] {
        if p & bit != 0 {
            s.push(c);
        }
    }
    if s.is_empty() {
        s.push_str("none");
    }
    s
}

/// An fcntl command's name (the number when it is not one of these).
fn fcntl_cmd(c: u64) -> String {
    let n = match c as i32 {
        libc::F_DUPFD => "F_DUPFD",
        libc::F_DUPFD_CLOEXEC => "F_DUPFD_CLOEXEC",
        libc::F_GETLK => "F_GETLK",
        libc::F_SETLK => "F_SETLK",
        libc::F_SETLKW => "F_SETLKW",
        libc::F_OFD_GETLK => "F_OFD_GETLK",
        libc::F_OFD_SETLK => "F_OFD_SETLK",
        libc::F_OFD_SETLKW => "F_OFD_SETLKW",
        libc::F_GETFD => "F_GETFD",
        libc::F_SETFD => "F_SETFD",
        libc::F_GETFL => "F_GETFL",
        libc::F_SETFL => "F_SETFL",
        _ => return c.to_string(),
    };
    n.to_string()
}

/// A posix_fadvise advice's name (the number when it is not one).
fn fadvice(a: u64) -> String {
    let n = match a as i32 {
        libc::POSIX_FADV_NORMAL => "NORMAL",
        libc::POSIX_FADV_RANDOM => "RANDOM",
        libc::POSIX_FADV_SEQUENTIAL => "SEQUENTIAL",
        libc::POSIX_FADV_WILLNEED => "WILLNEED",
        libc::POSIX_FADV_DONTNEED => "DONTNEED",
        libc::POSIX_FADV_NOREUSE => "NOREUSE",
        _ => return a.to_string(),
    };
    n.to_string()
}

/// SYNC_FILE_RANGE_* flags as conform reads them (`WRITE` alone: the
/// model's task).
fn sfr_flags(f: u64) -> String {
    let mut v = vec![];
    for (bit, n) in [
        (libc::SYNC_FILE_RANGE_WAIT_BEFORE, "WAIT_BEFORE"),
        (libc::SYNC_FILE_RANGE_WRITE, "WRITE"),
        (libc::SYNC_FILE_RANGE_WAIT_AFTER, "WAIT_AFTER"),
    ] {
        if f & bit as u64 != 0 {
            v.push(n.to_string());
        }
    }
    let rest = f & !7;
    if rest != 0 {
        v.push(format!("{rest:#x}"));
    }
    if v.is_empty() {
        "0".into()
    } else {
        v.join("|")
    }
}

/// A path syscall on the mount file `rel`, in the model's words.
fn path_call(pid: i32, nr: i64, a: [u64; 6], rel: &str) -> Option<Call> {
    let flags = match nr {
        libc::SYS_open => a[1],
        libc::SYS_openat => a[2],
        libc::SYS_creat => (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64,
        // struct open_how { u64 flags; u64 mode; u64 resolve }
        libc::SYS_openat2 => proc::read_u64(pid, a[2])?,
        libc::SYS_truncate => return call("truncate", format!("{rel} {} path={rel}", a[1])),
        _ => return None,
    } as i32;
    let name = if flags & libc::O_DIRECTORY != 0 || rel == "." {
        "opendir"
    } else {
        "open"
    };
    call(name, format!("{rel} {flags:#x} path={rel}"))
}

/// A mark's words for data: its page tags (trace::page_tags), ` units=`
/// its 1 KiB unit tags where those do not give them (trace::unit_tags),
/// and ` raw=HEX`, which record's last pass replaces with the data's
/// segment digests (segs.rs) before the trace is published.
fn data_words(data: &[u8]) -> (String, String, String) {
    let units = crate::trace::unit_tags(data)
        .map(|u| format!(" units={u}"))
        .unwrap_or_default();
    let raw = format!(" raw={}", crate::trace::hex(data));
    (crate::trace::page_tags(data), units, raw)
}

/// The buffers `bufs` past their first `done` bytes.
fn rest(bufs: &[(u64, u64)], done: u64) -> Vec<(u64, u64)> {
    let mut skip = done;
    bufs.iter()
        .filter_map(|&(a, l)| {
            let k = skip.min(l);
            skip -= k;
            (k < l).then_some((a + k, l - k))
        })
        .collect()
}

/// sendfile's source offset: the value of its offset pointer `ptr`, or
/// the source fd's position when the pointer is NULL (`None`).
fn source_offset(pid: i32, fd: i64, ptr: Option<u64>) -> Option<u64> {
    match ptr {
        None => proc::fdinfo(pid, fd).map(|p| p.0),
        Some(a) => proc::read_u64(pid, a),
    }
}

/// The `ret` mark's tail for a call that returned `ret` (bytes for a
/// read): ` data=TAGS` (and ` units=TAGS` where the page tags do not
/// give the 1 KiB units, ` buffer=fault` where it returned some bytes
/// but not all and a copy to the first byte it did not fill faults,
/// then ` raw=HEX` for record's last pass) for a read, ` buffer=changed`
/// for a write whose buffer no longer holds what it held at entry,
/// empty otherwise. A read whose bytes cannot be read back from its
/// buffer (`process_vm_readv` fails: memfd_secret memory, which no
/// other process may read, or a buffer another thread unmapped) says
/// ` buffer=unreadable` and carries no data: the recording goes on,
/// and conform says such a read is not modelled.
pub fn exit_tail(pid: i32, c: &Call, ret: i64) -> String {
    match &c.at_exit {
        // the VMA's own exec bit: READ_IMPLIES_EXEC (personality) makes
        // a PROT_READ mapping VM_EXEC, whose faults read ahead
        // differently (conform refuses it); `vma=unreadable`: maps gave
        // no mapping at the address
        AtExit::Mapped if ret >= 0 => match proc::executable_at(pid, ret as u64) {
            Some(true) => " vma=exec".into(),
            Some(false) => String::new(),
            None => " vma=unreadable".into(),
        },
        AtExit::Data(bufs) if ret >= 0 => {
            let Some(data) = proc::read_bufs(pid, bufs, ret as u64) else {
                return " buffer=unreadable".into();
            };
            let (tags, units, raw) = data_words(&data);
            // a read that stopped short of a fault in its buffer (EFAULT
            // after some bytes; with none copied it returns -EFAULT):
            // filemap_read copies up to the faulting byte, so the first
            // byte it did not fill is one a copy cannot reach
            let fault = match rest(bufs, ret as u64).first() {
                Some(&(at, _)) if ret > 0 && proc::would_fault(pid, at) => " buffer=fault",
                _ => "",
            };
            format!(" data={tags}{units}{fault}{raw}")
        }
        AtExit::Written(bufs, len, d) => {
            let now = proc::read_bufs(pid, bufs, *len).map(|b| crate::trace::digest(&b));
            if now == Some(*d) {
                String::new()
            } else {
                " buffer=changed".into()
            }
        }
        AtExit::Source {
            fd,
            off,
            ptr,
            count,
            len,
            digest,
        } => {
            let now = proc::file_bytes(pid, *fd, *off, *count).ok();
            let same =
                now.is_some_and(|d| d.len() as u64 == *len && crate::trace::digest(&d) == *digest);
            let moved = ret >= 0 && source_offset(pid, *fd, *ptr) != Some(off + ret as u64);
            if same && !moved && ret <= *len as i64 {
                String::new()
            } else {
                " buffer=changed".into()
            }
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_changed_during_its_write_is_said_at_exit() {
        let me = std::process::id() as i32;
        let mut buf = vec![b'A'; 100];
        let bufs = vec![(buf.as_ptr() as u64, 100)];
        let c = Call {
            name: "pwrite".into(),
            args: String::new(),
            at_exit: AtExit::Written(bufs, 100, crate::trace::digest(&buf)),
        };
        assert_eq!(exit_tail(me, &c, 100), "");
        buf[99] = b'B';
        std::hint::black_box(&buf);
        assert_eq!(exit_tail(me, &c, 100), " buffer=changed");
    }

    /// sendfile's source is read at entry and again at exit: a source
    /// rewritten, grown under a short count, or copied past what it held
    /// at entry is said; an unchanged one is not.
    #[test]
    fn a_sendfile_source_changed_during_the_call_is_said_at_exit() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let me = std::process::id() as i32;
        let dir = std::env::temp_dir().join(format!("wbspec-src-{me}"));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("src");
        std::fs::write(&path, b"AAAA").unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let fd = f.as_raw_fd();
        let data = proc::file_bytes(me, fd as i64, 0, 8).unwrap();
        let source = |ptr| Call {
            name: "sendfile".into(),
            args: String::new(),
            at_exit: AtExit::Source {
                fd: fd as i64,
                off: 0,
                ptr,
                count: 8,
                len: data.len() as u64,
                digest: crate::trace::digest(&data),
            },
        };
        let c = source(None);
        let seek = |o| assert_eq!(unsafe { libc::lseek(fd, o, libc::SEEK_SET) }, o);
        // the kernel leaves the position at off + what it returned
        seek(4);
        assert_eq!(exit_tail(me, &c, 4), "");
        assert_eq!(exit_tail(me, &c, 5), " buffer=changed", "more than it held");
        seek(0);
        assert_eq!(exit_tail(me, &c, 4), " buffer=changed", "position moved");
        seek(4);
        let mut w = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        w.write_all(b"B").unwrap();
        assert_eq!(exit_tail(me, &c, 4), " buffer=changed", "grown");
        std::fs::write(&path, b"AAAC").unwrap();
        assert_eq!(exit_tail(me, &c, 4), " buffer=changed", "rewritten");
        std::fs::write(&path, b"AAAA").unwrap();
        assert_eq!(exit_tail(me, &c, 4), "", "the same bytes again");
        // an offset pointer: its value at exit
        let mut at: u64 = 4;
        let c = source(Some(&at as *const u64 as u64));
        assert_eq!(exit_tail(me, &c, 4), "");
        at = 0;
        std::hint::black_box(&mut at);
        assert_eq!(exit_tail(me, &c, 4), " buffer=changed", "pointer moved");
        drop((f, w));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_read_short_of_a_fault_in_its_buffer_says_so() {
        let me = std::process::id() as i32;
        // two pages, the second made unwritable
        let pg = 4096usize;
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * pg,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        let a = p as u64;
        let c = Call {
            name: "pread".into(),
            args: String::new(),
            at_exit: AtExit::Data(vec![(a, 100), (a + 100, 2 * pg as u64 - 100)]),
        };
        let tail = |ret| exit_tail(me, &c, ret);
        assert!(!tail(2 * pg as i64).contains("buffer=fault"));
        assert!(!tail(10).contains("buffer=fault"), "{}", tail(10));
        assert_eq!(unsafe { libc::mprotect(p.add(pg), pg, libc::PROT_READ) }, 0);
        // short exactly at the page it could not write: said
        let t = tail(pg as i64);
        assert!(t.contains(" buffer=fault raw="), "{t}");
        // short of a writable byte (the file's end), none copied (a
        // fault at the first byte returns -EFAULT, not 0), or filled to
        // the end: not said
        assert!(!tail(10).contains("buffer=fault"));
        assert!(!tail(pg as i64 - 1).contains("buffer=fault"));
        assert!(!tail(0).contains("buffer=fault"));
        assert!(!tail(2 * pg as i64).contains("buffer=fault"));
        // a writable page that cannot be had: a shared mapping of a
        // one-page file over two pages (SIGBUS past its end)
        let f = tempfile::tempfile().unwrap();
        f.set_len(pg as u64).unwrap();
        let q = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * pg,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                std::os::fd::AsRawFd::as_raw_fd(&f),
                0,
            )
        };
        assert_ne!(q, libc::MAP_FAILED);
        let c2 = Call {
            name: "pread".into(),
            args: String::new(),
            at_exit: AtExit::Data(vec![(q as u64, 2 * pg as u64)]),
        };
        let t = exit_tail(me, &c2, pg as i64);
        assert!(t.contains(" buffer=fault"), "{t}");
        assert!(!exit_tail(me, &c2, 10).contains("buffer=fault"));
        unsafe { libc::munmap(q, 2 * pg) };
        assert_eq!(rest(&[(a, 100), (a + 100, 50)], 120), vec![(a + 120, 30)]);
        assert_eq!(rest(&[(a, 100)], 100), vec![]);
        unsafe { libc::munmap(p, 2 * pg) };
    }

    /// A read into memory the tracer cannot read (memfd_secret: no
    /// other process may; here an address nothing maps, which fails
    /// process_vm_readv the same way) is said, not a failed recording
    /// (the tracer stopped with "could not be read back").
    #[test]
    fn a_read_into_an_unreadable_buffer_says_so() {
        let me = std::process::id() as i32;
        let c = Call {
            name: "pread".into(),
            args: String::new(),
            at_exit: AtExit::Data(vec![(8, 4096)]),
        };
        assert_eq!(exit_tail(me, &c, 100), " buffer=unreadable");
        // nothing read: nothing to read back
        assert!(exit_tail(me, &c, 0).starts_with(" data= "));
    }

    #[test]
    fn table_has_each_syscall_once() {
        let mut nrs: Vec<i64> = TABLE.iter().map(|t| t.0).collect();
        nrs.sort();
        nrs.dedup();
        assert_eq!(nrs.len(), TABLE.len());
        assert_eq!(name_of(libc::SYS_pwrite64), Some("pwrite64"));
        assert_eq!(name_of(libc::SYS_getpid), None);
    }

    #[test]
    fn sync_file_range_flags() {
        assert_eq!(sfr_flags(2), "WRITE");
        assert_eq!(sfr_flags(7), "WAIT_BEFORE|WRITE|WAIT_AFTER");
        assert_eq!(sfr_flags(0), "0");
        assert_eq!(sfr_flags(0x12), "WRITE|0x10");
    }

    #[test]
    fn mmap_protections() {
        assert_eq!(prot(3), "rw");
        assert_eq!(prot(1), "r");
        assert_eq!(prot(0), "none");
        assert_eq!(prot(7), "rwx");
    }
}
