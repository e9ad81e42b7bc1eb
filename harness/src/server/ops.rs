//! The FUSE operations the recording server implements: one handler per
//! opcode, each recording its `req` event and passing the completion
//! (apply to the in-memory file system, log the `reply`, send it) through
//! the hold path (`RecFs::go`). Operations it does not implement are
//! recorded and answered ENOSYS (unimpl.rs).
use std::ffi::OsStr;
use std::time::SystemTime;

use fuser::{
    AccessFlags, Errno, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    InitFlags, KernelConfig, LockOwner, OpenFlags, ReplyAttr, ReplyCreate, ReplyData,
    ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr,
    Request, TimeOrNow, WriteFlags,
};
use serde_json::json;

use super::memfs::{attr_of, file_attr, FileNode};
use super::record::{
    bit_names, errno_result, fopen_names, open_flag_names, write_flag_names, FATTR_NAMES,
};
use super::shared::lock;
use super::RecFs;
use crate::trace::{hex, page_tags, unit_tags, Event};

impl Filesystem for RecFs {
    crate::unimpl::recorded_enosys_ops!();

    fn init(&mut self, req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        let cfg = self.core.cfg.clone();
        let caps = config.capabilities();
        let mut want = InitFlags::empty();
        if cfg.writeback_cache {
            want |= InitFlags::FUSE_WRITEBACK_CACHE;
        }
        if cfg.atomic_o_trunc {
            want |= InitFlags::FUSE_ATOMIC_O_TRUNC;
        }
        if cfg.direct_io_allow_mmap {
            want |= InitFlags::FUSE_DIRECT_IO_ALLOW_MMAP;
        }
        if cfg.async_dio {
            want |= InitFlags::FUSE_ASYNC_DIO;
        }
        let added = config.add_capabilities(want);
        let mw = config.set_max_write(cfg.max_write);
        // Always set BOTH (see ServerConfig::congestion_threshold).
        let mb = config.set_max_background(cfg.max_background.max(1));
        let ct = config.set_congestion_threshold(cfg.congestion_threshold.max(1));
        let mut e = Event::new("init");
        e.unique = Some(req.unique().0);
        e.op = Some("INIT".into());
        e.result = Some(json!({
            "kernel_abi": format!("{}", config.kernel_abi()),
            "kernel_caps": format!("{caps:?}"),
            "requested_extra": format!("{want:?}"),
            "add_capabilities": format!("{added:?}"),
            "max_write": format!("{mw:?}"),
            "max_background": format!("{mb:?}"),
            "congestion_threshold": format!("{ct:?}"),
        }));
        self.core.log(e);
        if added.is_err() {
            return Err(std::io::Error::from_raw_os_error(libc::ENOSYS));
        }
        Ok(())
    }

    fn lookup(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let mut e = self.ev(req, "LOOKUP", parent);
        // (a name that is not UTF-8 names no file: CREATE refuses them)
        let not_utf8 = name.to_str().is_none();
        let name = name.to_string_lossy().to_string();
        e.name = Some(name.clone());
        self.go(e, None, move |core, unique, t0| {
            let fs = lock(&core.fs);
            let found = fs
                .files
                .iter()
                .find(|(_, f)| f.name == name)
                .filter(|_| !not_utf8);
            match found {
                Some((ino, f)) => {
                    let a = file_attr(*ino, f);
                    drop(fs);
                    core.log_reply(
                        unique,
                        "LOOKUP",
                        json!({"ino": a.ino.0, "size": a.size}),
                        t0,
                    );
                    reply.entry(&core.ttl(), &a, Generation(0));
                }
                None => {
                    drop(fs);
                    core.log_reply(unique, "LOOKUP", errno_result(libc::ENOENT, "ENOENT"), t0);
                    reply.error(Errno::ENOENT);
                }
            }
        });
    }

    fn forget(&self, req: &Request, ino: INodeNo, nlookup: u64) {
        let mut e = self.ev(req, "FORGET", ino);
        e.size = Some(nlookup);
        self.core.recv(e, false);
        // The kernel evicted the inode (FORGET comes at its eviction
        // with every lookup it counted): an unlinked file is gone now.
        let mut fs = lock(&self.core.fs);
        if fs.files.get(&ino.0).is_some_and(|f| f.name.is_empty()) {
            fs.files.remove(&ino.0);
        }
    }

    fn getattr(&self, req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let mut e = self.ev(req, "GETATTR", ino);
        e.fh = fh.map(|f| f.0);
        self.go(e, None, move |core, unique, t0| {
            let a = attr_of(&lock(&core.fs), ino.0);
            match a {
                Some(a) => {
                    core.log_reply(unique, "GETATTR", json!({"size": a.size}), t0);
                    reply.attr(&core.ttl(), &a);
                }
                None => {
                    core.log_reply(unique, "GETATTR", errno_result(libc::ENOENT, "ENOENT"), t0);
                    reply.error(Errno::ENOENT);
                }
            }
        });
    }

    fn setattr(
        &self,
        req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        // Reconstructed valid mask: stock fuser decodes the mask into Options and
        // does not expose FATTR_LOCKOWNER / FATTR_KILL_SUIDGID (see module docs).
        let mut valid = 0u32;
        if mode.is_some() {
            valid |= 1;
        }
        if uid.is_some() {
            valid |= 1 << 1;
        }
        if gid.is_some() {
            valid |= 1 << 2;
        }
        if size.is_some() {
            valid |= 1 << 3;
        }
        match atime {
            Some(TimeOrNow::Now) => valid |= (1 << 4) | (1 << 7),
            Some(_) => valid |= 1 << 4,
            None => {}
        }
        match mtime {
            Some(TimeOrNow::Now) => valid |= (1 << 5) | (1 << 8),
            Some(_) => valid |= 1 << 5,
            None => {}
        }
        if fh.is_some() {
            valid |= 1 << 6;
        }
        if ctime.is_some() {
            valid |= 1 << 10;
        }
        let mut e = self.ev(req, "SETATTR", ino);
        e.size = size;
        e.fh = fh.map(|f| f.0);
        e.mode = mode;
        e.valid = Some(valid);
        e.valid_names = Some(bit_names(valid, &FATTR_NAMES));
        // the hold rules' flag for SETATTR: does it set the size
        // (`hold SETATTR size=1` skips the flusher's SETATTR(times))
        self.go(e, Some(size.is_some()), move |core, unique, t0| {
            // only a size change can be failed (`fail SETATTR`): the
            // SETATTR(times) of fsync/close are answered as usual
            if let Some(e) = size.and_then(|_| core.failed(unique, "SETATTR", t0)) {
                return reply.error(e);
            }
            let mut fs = lock(&core.fs);
            let now = SystemTime::now();
            let (before, a) = match fs.files.get_mut(&ino.0) {
                Some(f) => {
                    let before = f.data.len() as u64;
                    if let Some(s) = size {
                        f.data.resize(s as usize, 0);
                    }
                    if let Some(m) = mode {
                        f.perm = (m & 0o7777) as u16;
                    }
                    if let Some(t) = mtime {
                        f.mtime = match t {
                            TimeOrNow::Now => now,
                            TimeOrNow::SpecificTime(t) => t,
                        };
                    }
                    f.ctime = ctime.unwrap_or(now);
                    (before, Some(file_attr(ino.0, f)))
                }
                None => (0, attr_of(&fs, ino.0)),
            };
            drop(fs);
            match a {
                Some(a) => {
                    core.log_reply(
                        unique,
                        "SETATTR",
                        json!({"old_size": before, "size": a.size}),
                        t0,
                    );
                    reply.attr(&core.ttl(), &a);
                }
                None => {
                    core.log_reply(unique, "SETATTR", errno_result(libc::ENOENT, "ENOENT"), t0);
                    reply.error(Errno::ENOENT);
                }
            }
        });
    }

    fn unlink(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut e = self.ev(req, "UNLINK", parent);
        let name = name.to_string_lossy().to_string();
        e.name = Some(name.clone());
        self.go(e, None, move |core, unique, t0| {
            let mut fs = lock(&core.fs);
            let ino = fs
                .files
                .iter()
                .find(|(_, f)| f.name == name)
                .map(|(i, _)| *i);
            // The inode outlives its name while the kernel holds it (an
            // open fd, a mapping): a SETATTR(times) or WRITE of it then
            // is answered, not ENOENT. (Removing it here made the
            // SETATTR that fuse_unlink's ctime update sends fail, and
            // fuse_flush_time_update set ENOENT on the mapping: the
            // program's next fsync or msync failed with ENOENT.)
            if let Some(f) = ino.and_then(|i| fs.files.get_mut(&i)) {
                f.name.clear();
            }
            drop(fs);
            if ino.is_some() {
                core.log_reply(unique, "UNLINK", json!({}), t0);
                reply.ok();
            } else {
                core.log_reply(unique, "UNLINK", errno_result(libc::ENOENT, "ENOENT"), t0);
                reply.error(Errno::ENOENT);
            }
        });
    }

    fn open(&self, req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let mut e = self.ev(req, "OPEN", ino);
        e.flags = Some(flags.0);
        e.flag_names = Some(open_flag_names(flags.0));
        let fo = self.open_flags_reply(flags.0);
        self.go(e, None, move |core, unique, t0| {
            let mut fs = lock(&core.fs);
            let fh = fs.next_fh;
            fs.next_fh += 1;
            // O_TRUNC only reaches the server with FUSE_ATOMIC_O_TRUNC.
            let mut truncated = None;
            if flags.0 & libc::O_TRUNC != 0 {
                if let Some(f) = fs.files.get_mut(&ino.0) {
                    truncated = Some(f.data.len());
                    f.data.clear();
                    f.mtime = SystemTime::now();
                    f.ctime = f.mtime;
                }
            }
            drop(fs);
            core.log_reply(
                unique,
                "OPEN",
                json!({"fh": fh, "open_flags": fopen_names(fo), "truncated_from": truncated}),
                t0,
            );
            reply.opened(FileHandle(fh), fo);
        });
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let mut e = self.ev(req, "CREATE", parent);
        // names are kept as UTF-8: two names that are not would both
        // become U+FFFD, one file, so such a name is refused (EILSEQ)
        let not_utf8 = name.to_str().is_none();
        let name = name.to_string_lossy().to_string();
        e.name = Some(name.clone());
        e.mode = Some(mode);
        e.flags = Some(flags);
        e.flag_names = Some(open_flag_names(flags));
        let fo = self.open_flags_reply(flags);
        self.go(e, None, move |core, unique, t0| {
            if not_utf8 {
                core.log_reply(unique, "CREATE", errno_result(libc::EILSEQ, "EILSEQ"), t0);
                reply.error(Errno::from_i32(libc::EILSEQ));
                return;
            }
            let mut fs = lock(&core.fs);
            let now = SystemTime::now();
            let existing = fs
                .files
                .iter()
                .find(|(_, f)| f.name == name)
                .map(|(i, _)| *i);
            let ino = match existing {
                Some(i) => i,
                None => {
                    let i = fs.next_ino;
                    fs.next_ino += 1;
                    fs.files.insert(
                        i,
                        FileNode {
                            name: name.clone(),
                            data: vec![],
                            perm: (mode & 0o7777) as u16,
                            mtime: now,
                            ctime: now,
                        },
                    );
                    i
                }
            };
            let fh = fs.next_fh;
            fs.next_fh += 1;
            let a = file_attr(ino, &fs.files[&ino]);
            drop(fs);
            core.log_reply(
                unique,
                "CREATE",
                json!({"ino": ino, "fh": fh, "open_flags": fopen_names(fo)}),
                t0,
            );
            reply.created(&core.ttl(), &a, Generation(0), FileHandle(fh), fo);
        });
    }

    fn read(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let mut e = self.ev(req, "READ", ino);
        e.fh = Some(fh.0);
        e.offset = Some(offset);
        e.size = Some(size as u64);
        e.end = Some(offset + size as u64);
        e.flags = Some(flags.0);
        e.flag_names = Some(open_flag_names(flags.0));
        self.go(e, None, move |core, unique, t0| {
            if let Some(e) = core.failed(unique, "READ", t0) {
                return reply.error(e);
            }
            let fs = lock(&core.fs);
            let data: Vec<u8> = match fs.files.get(&ino.0) {
                Some(f) => {
                    let s = (offset as usize).min(f.data.len());
                    let en = (offset as usize + size as usize).min(f.data.len());
                    f.data[s..en].to_vec()
                }
                None => vec![],
            };
            drop(fs);
            core.log_reply(
                unique,
                "READ",
                {
                    let mut r = json!({"bytes": data.len(), "page_tags": page_tags(&data)});
                    if let Some(u) = unit_tags(&data) {
                        r["unit_tags"] = json!(u);
                    }
                    if core.cfg.raw {
                        r["raw"] = json!(hex(&data));
                    }
                    r
                },
                t0,
            );
            reply.data(&data);
        });
    }

    fn write(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        write_flags: WriteFlags,
        flags: OpenFlags,
        lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let wf = write_flags.bits();
        let mut e = self.ev(req, "WRITE", ino);
        e.fh = Some(fh.0);
        e.offset = Some(offset);
        e.size = Some(data.len() as u64);
        e.end = Some(offset + data.len() as u64);
        e.write_flags = Some(wf);
        e.write_flag_names = Some(write_flag_names(wf));
        e.flags = Some(flags.0);
        e.flag_names = Some(open_flag_names(flags.0));
        e.lock_owner = lock_owner.map(|l| l.0);
        e.page_tags = Some(page_tags(data));
        e.unit_tags = unit_tags(data);
        if self.core.cfg.raw {
            e.raw = Some(hex(data));
        }
        // The payload borrows fuser's read buffer: copy it before deferring.
        let data = data.to_vec();
        self.go(e, Some(wf & 1 != 0), move |core, unique, t0| {
            if let Some(e) = core.failed(unique, "WRITE", t0) {
                return reply.error(e);
            }
            let mut fs = lock(&core.fs);
            let (before, after) = match fs.files.get_mut(&ino.0) {
                Some(f) => {
                    let before = f.data.len();
                    let end = offset as usize + data.len();
                    if f.data.len() < end {
                        f.data.resize(end, 0);
                    }
                    f.data[offset as usize..end].copy_from_slice(&data);
                    f.mtime = SystemTime::now();
                    (before, f.data.len())
                }
                None => (0, 0),
            };
            drop(fs);
            core.log_reply(
                unique,
                "WRITE",
                json!({"written": data.len(), "file_size_before": before, "file_size_after": after}),
                t0,
            );
            reply.written(data.len() as u32);
        });
    }

    fn flush(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        let mut e = self.ev(req, "FLUSH", ino);
        e.fh = Some(fh.0);
        e.lock_owner = Some(lock_owner.0);
        self.go(e, None, move |core, unique, t0| {
            if let Some(e) = core.failed(unique, "FLUSH", t0) {
                return reply.error(e);
            }
            core.log_reply(unique, "FLUSH", json!({}), t0);
            reply.ok();
        });
    }

    fn release(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let mut e = self.ev(req, "RELEASE", ino);
        e.fh = Some(fh.0);
        e.flags = Some(flags.0);
        e.flag_names = Some(open_flag_names(flags.0));
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(unique, "RELEASE", json!({}), t0);
            reply.ok();
        });
    }

    fn fsync(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        let mut e = self.ev(req, "FSYNC", ino);
        e.fh = Some(fh.0);
        e.datasync = Some(datasync);
        self.go(e, None, move |core, unique, t0| {
            if let Some(e) = core.failed(unique, "FSYNC", t0) {
                return reply.error(e);
            }
            core.log_reply(unique, "FSYNC", json!({}), t0);
            reply.ok();
        });
    }

    fn opendir(&self, req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let e = self.ev(req, "OPENDIR", ino);
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(unique, "OPENDIR", json!({"fh": 0}), t0);
            reply.opened(FileHandle(0), FopenFlags::empty());
        });
    }

    fn releasedir(
        &self,
        req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        let e = self.ev(req, "RELEASEDIR", ino);
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(unique, "RELEASEDIR", json!({}), t0);
            reply.ok();
        });
    }

    fn readdir(
        &self,
        req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let mut e = self.ev(req, "READDIR", ino);
        e.offset = Some(offset);
        self.go(e, None, move |core, unique, t0| {
            let fs = lock(&core.fs);
            let mut entries: Vec<(u64, FileType, String)> = vec![
                (1, FileType::Directory, ".".into()),
                (1, FileType::Directory, "..".into()),
            ];
            for (i, f) in fs.files.iter().filter(|(_, f)| !f.name.is_empty()) {
                entries.push((*i, FileType::RegularFile, f.name.clone()));
            }
            drop(fs);
            let mut n = 0;
            for (idx, (i, k, name)) in entries.iter().enumerate().skip(offset as usize) {
                if reply.add(INodeNo(*i), (idx + 1) as u64, *k, name) {
                    break;
                }
                n += 1;
            }
            core.log_reply(unique, "READDIR", json!({"entries": n}), t0);
            reply.ok();
        });
    }

    fn statfs(&self, req: &Request, ino: INodeNo, reply: ReplyStatfs) {
        let e = self.ev(req, "STATFS", ino);
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(unique, "STATFS", json!({}), t0);
            reply.statfs(0, 0, 0, 0, 0, 4096, 255, 4096);
        });
    }

    fn getxattr(&self, req: &Request, ino: INodeNo, name: &OsStr, _size: u32, reply: ReplyXattr) {
        let mut e = self.ev(req, "GETXATTR", ino);
        e.name = Some(name.to_string_lossy().to_string());
        self.go(e, None, move |core, unique, t0| {
            if core.cfg.xattr_enodata {
                core.log_reply(
                    unique,
                    "GETXATTR",
                    errno_result(libc::ENODATA, "ENODATA"),
                    t0,
                );
                reply.error(Errno::ENODATA);
            } else {
                core.log_reply(unique, "GETXATTR", errno_result(libc::ENOSYS, "ENOSYS"), t0);
                reply.error(Errno::ENOSYS);
            }
        });
    }

    fn access(&self, req: &Request, ino: INodeNo, mask: AccessFlags, reply: ReplyEmpty) {
        let mut e = self.ev(req, "ACCESS", ino);
        e.mode = Some(mask.bits() as u32);
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(unique, "ACCESS", json!({}), t0);
            reply.ok();
        });
    }

    fn fallocate(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let mut e = self.ev(req, "FALLOCATE", ino);
        e.fh = Some(fh.0);
        e.offset = Some(offset);
        e.size = Some(length);
        e.mode = Some(mode as u32);
        self.go(e, None, move |core, unique, t0| {
            core.log_reply(
                unique,
                "FALLOCATE",
                errno_result(libc::ENOSYS, "ENOSYS"),
                t0,
            );
            reply.error(Errno::ENOSYS);
        });
    }
}
