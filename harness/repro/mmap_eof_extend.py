"""Stores through a MAP_SHARED mapping beyond EOF in the EOF page, then
the file is extended: do the stored bytes show in [old EOF, new EOF)?

POSIX ftruncate: "the extended area shall appear as if it were
zero-filled"; mmap: "the system shall never write out any modified
portions of the last page of an object which are beyond its end".

Run on the recording server's mount (writeback_cache), one file per case:

    wbspec-harness record --trace /tmp/t.jsonl -- \
        python3 -I -S harness/repro/mmap_eof_extend.py {mnt}

Each case: a 1000-byte file of 'A' (pwrite + fsync), a MAP_SHARED map of
page 0, 100 bytes of 'X' stored at offset 2000 (beyond EOF, inside page
0), optionally an fsync first (the EOF page written back at i_size 1000),
then the extension: ftruncate(8192) or pwrite of one byte at 6000. What
pread returns for 1000..4096 through the page cache, and what the server
holds there after fsync, munmap and close (an O_DIRECT read on a fresh
open: FUSE sends a READ, after flushing dirty pages). Prints one line a
case and exits 1 when any case shows the stored bytes.

Docs: docs/findings.md, F-mmap-eof-extend.
"""

import ctypes
import mmap
import os
import sys

PAGE = mmap.PAGESIZE
# libc mmap: Python's mmap.mmap refuses a length beyond the file's size
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.mmap.restype = ctypes.c_void_p
LIBC.mmap.argtypes = [
    ctypes.c_void_p,
    ctypes.c_size_t,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_long,
]
LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
MAP_FAILED = ctypes.c_void_p(-1).value
OLD = 1000
STORE_AT = 2000
STORE = b"X" * 100


def count_x(data):
    return data.count(b"X")


def run_case(mnt, name, extend, flush_first):
    path = os.path.join(mnt, name)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.pwrite(fd, b"A" * OLD, 0)
    os.fsync(fd)
    addr = LIBC.mmap(
        None, PAGE, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0
    )
    if addr == MAP_FAILED:
        raise OSError(ctypes.get_errno(), "mmap")
    # a store beyond EOF inside the EOF page: no SIGBUS (filemap_fault's
    # max_idx = DIV_ROUND_UP(i_size, PAGE_SIZE) = 1)
    ctypes.memmove(addr + STORE_AT, STORE, len(STORE))
    if flush_first:
        # writeback of the EOF page at i_size 1000 (cropped WRITE)
        os.fsync(fd)
    if extend == "ftruncate":
        os.ftruncate(fd, 8192)
    else:
        os.pwrite(fd, b"B", 6000)
    cached = os.pread(fd, PAGE - OLD, OLD)
    LIBC.munmap(addr, PAGE)
    os.fsync(fd)
    os.close(fd)
    # the server's bytes: O_DIRECT sends a READ (fuse_direct_IO / the
    # server's FOPEN_DIRECT_IO), no page-cache copy
    dfd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        server = os.pread(dfd, PAGE - OLD, OLD)
    finally:
        os.close(dfd)
    size = os.stat(path).st_size
    bad = count_x(cached) or count_x(server)
    print(
        f"{name}: extend={extend} fsync_before={int(flush_first)} size={size} "
        f"cache_X={count_x(cached)} server_X={count_x(server)} "
        f"{'EXPOSED' if bad else 'zeros'}"
    )
    return bool(bad)


def main():
    mnt = sys.argv[1]
    exposed = False
    for extend in ("ftruncate", "pwrite"):
        for flush_first in (False, True):
            name = f"{extend}-{'fsync' if flush_first else 'dirty'}"
            exposed |= run_case(mnt, name, extend, flush_first)
    sys.exit(1 if exposed else 0)


if __name__ == "__main__":
    main()
