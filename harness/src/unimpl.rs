//! The FUSE operations the recording server does not implement. fuser 0.18
//! answers them ENOSYS (some EPERM) in the `Filesystem` trait's default
//! methods, without the server ever seeing them, so a trace would silently
//! lack those requests (copy_file_range sends COPY_FILE_RANGE and, on 6.18+,
//! first COPY_FILE_RANGE_64). Here each is recorded as a `req` and answered
//! ENOSYS with a `reply` line, like every other request.
//!
//! Requests fuser answers before any `Filesystem` method runs (an opcode it
//! does not know, such as COPY_FILE_RANGE_64; FUSE_INTERRUPT; NOTIFY_REPLY;
//! CUSE_INIT) cannot be recorded by a fuser server; their `unique` is then
//! missing from the trace, and the conformance check reports the gap
//! ("request N not recorded") instead of checking the trace.

/// Defines, inside `impl Filesystem for RecFs`, one method per operation
/// the server does not implement; each calls `RecFs::enosys`.
macro_rules! recorded_enosys_ops {
    () => {
        fn readlink(&self, req: &Request, ino: INodeNo, reply: ReplyData) {
            self.enosys(req, "READLINK", ino, move |e| reply.error(e));
        }
        fn mknod(
            &self,
            req: &Request,
            parent: INodeNo,
            _name: &OsStr,
            _mode: u32,
            _umask: u32,
            _rdev: u32,
            reply: ReplyEntry,
        ) {
            self.enosys(req, "MKNOD", parent, move |e| reply.error(e));
        }
        fn mkdir(
            &self,
            req: &Request,
            parent: INodeNo,
            _name: &OsStr,
            _mode: u32,
            _umask: u32,
            reply: ReplyEntry,
        ) {
            self.enosys(req, "MKDIR", parent, move |e| reply.error(e));
        }
        fn rmdir(&self, req: &Request, parent: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
            self.enosys(req, "RMDIR", parent, move |e| reply.error(e));
        }
        fn symlink(
            &self,
            req: &Request,
            parent: INodeNo,
            _link_name: &OsStr,
            _target: &std::path::Path,
            reply: ReplyEntry,
        ) {
            self.enosys(req, "SYMLINK", parent, move |e| reply.error(e));
        }
        fn rename(
            &self,
            req: &Request,
            parent: INodeNo,
            _name: &OsStr,
            _newparent: INodeNo,
            _newname: &OsStr,
            _flags: fuser::RenameFlags,
            reply: ReplyEmpty,
        ) {
            self.enosys(req, "RENAME", parent, move |e| reply.error(e));
        }
        fn link(
            &self,
            req: &Request,
            ino: INodeNo,
            _newparent: INodeNo,
            _newname: &OsStr,
            reply: ReplyEntry,
        ) {
            self.enosys(req, "LINK", ino, move |e| reply.error(e));
        }
        fn readdirplus(
            &self,
            req: &Request,
            ino: INodeNo,
            _fh: FileHandle,
            _offset: u64,
            reply: fuser::ReplyDirectoryPlus,
        ) {
            self.enosys(req, "READDIRPLUS", ino, move |e| reply.error(e));
        }
        fn fsyncdir(
            &self,
            req: &Request,
            ino: INodeNo,
            _fh: FileHandle,
            _datasync: bool,
            reply: ReplyEmpty,
        ) {
            self.enosys(req, "FSYNCDIR", ino, move |e| reply.error(e));
        }
        fn setxattr(
            &self,
            req: &Request,
            ino: INodeNo,
            _name: &OsStr,
            _value: &[u8],
            _flags: i32,
            _position: u32,
            reply: ReplyEmpty,
        ) {
            self.enosys(req, "SETXATTR", ino, move |e| reply.error(e));
        }
        fn listxattr(&self, req: &Request, ino: INodeNo, _size: u32, reply: ReplyXattr) {
            self.enosys(req, "LISTXATTR", ino, move |e| reply.error(e));
        }
        fn removexattr(&self, req: &Request, ino: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
            self.enosys(req, "REMOVEXATTR", ino, move |e| reply.error(e));
        }
        fn getlk(
            &self,
            req: &Request,
            ino: INodeNo,
            _fh: FileHandle,
            _lock_owner: LockOwner,
            _start: u64,
            _end: u64,
            _typ: i32,
            _pid: u32,
            reply: fuser::ReplyLock,
        ) {
            self.enosys(req, "GETLK", ino, move |e| reply.error(e));
        }
        fn setlk(
            &self,
            req: &Request,
            ino: INodeNo,
            _fh: FileHandle,
            _lock_owner: LockOwner,
            _start: u64,
            _end: u64,
            _typ: i32,
            _pid: u32,
            _sleep: bool,
            reply: ReplyEmpty,
        ) {
            self.enosys(req, "SETLK", ino, move |e| reply.error(e));
        }
        fn bmap(
            &self,
            req: &Request,
            ino: INodeNo,
            _blocksize: u32,
            _idx: u64,
            reply: fuser::ReplyBmap,
        ) {
            self.enosys(req, "BMAP", ino, move |e| reply.error(e));
        }
        fn ioctl(
            &self,
            req: &Request,
            ino: INodeNo,
            _fh: FileHandle,
            _flags: fuser::IoctlFlags,
            _cmd: u32,
            _in_data: &[u8],
            _out_size: u32,
            reply: fuser::ReplyIoctl,
        ) {
            self.enosys(req, "IOCTL", ino, move |e| reply.error(e));
        }
        fn poll(
            &self,
            req: &Request,
            ino: INodeNo,
            _fh: FileHandle,
            _ph: fuser::PollNotifier,
            _events: fuser::PollEvents,
            _flags: fuser::PollFlags,
            reply: fuser::ReplyPoll,
        ) {
            self.enosys(req, "POLL", ino, move |e| reply.error(e));
        }
        fn lseek(
            &self,
            req: &Request,
            ino: INodeNo,
            _fh: FileHandle,
            _offset: i64,
            _whence: i32,
            reply: fuser::ReplyLseek,
        ) {
            self.enosys(req, "LSEEK", ino, move |e| reply.error(e));
        }
        fn copy_file_range(
            &self,
            req: &Request,
            ino_in: INodeNo,
            _fh_in: FileHandle,
            _offset_in: u64,
            _ino_out: INodeNo,
            _fh_out: FileHandle,
            _offset_out: u64,
            _len: u64,
            _flags: fuser::CopyFileRangeFlags,
            reply: ReplyWrite,
        ) {
            self.enosys(req, "COPY_FILE_RANGE", ino_in, move |e| reply.error(e));
        }
    };
}
pub(crate) use recorded_enosys_ops;
