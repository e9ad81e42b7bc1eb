//! The file system the recording server serves: one flat directory of
//! in-memory regular files (root is ino 1), and the attributes it replies.
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use fuser::{FileAttr, FileType, INodeNo};

pub(super) struct FileNode {
    /// Its name; empty once it is unlinked: the inode lives on, without
    /// a name, until the kernel forgets it (an open fd, a mapping), as a
    /// disk file system's does (see `forget` in ops.rs).
    pub(super) name: String,
    pub(super) data: Vec<u8>,
    pub(super) perm: u16,
    pub(super) mtime: SystemTime,
    pub(super) ctime: SystemTime,
}

pub(super) struct FsState {
    pub(super) files: BTreeMap<u64, FileNode>,
    pub(super) next_ino: u64,
    pub(super) next_fh: u64,
}

fn root_attr() -> FileAttr {
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    FileAttr {
        ino: INodeNo(1),
        size: 0,
        blocks: 0,
        atime: t,
        mtime: t,
        ctime: t,
        crtime: t,
        kind: FileType::Directory,
        perm: 0o755,
        nlink: 2,
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

pub(super) fn file_attr(ino: u64, f: &FileNode) -> FileAttr {
    let size = f.data.len() as u64;
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: f.mtime,
        mtime: f.mtime,
        ctime: f.ctime,
        crtime: f.ctime,
        kind: FileType::RegularFile,
        perm: f.perm,
        nlink: u32::from(!f.name.is_empty()),
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

pub(super) fn attr_of(fs: &FsState, ino: u64) -> Option<FileAttr> {
    if ino == 1 {
        return Some(root_attr());
    }
    fs.files.get(&ino).map(|f| file_attr(ino, f))
}
