# The steps of rand_5_5000 just before its event #550 (docs/findings.md,
# M-ra-prev-pos, "Long plans with buffered reads"): run as
#   wbspec record --trace T -- python3 -I -S /abs/path/ra_prefix_seed5.py {mnt}
# and look for READ off=8192 before the first pread of fd 3 returns.
import os, sys
mnt = sys.argv[1]
f = os.path.join(mnt, "f")
fd3 = os.open(f, os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd3, b"A" * 16384, 0)
os.fsync(fd3)
fd6 = os.open(f, os.O_RDWR | os.O_DIRECT)
os.ftruncate(fd3, 0)
os.fdatasync(fd3)
os.pwrite(fd3, b"P" * 4096, 4096)
os.pwrite(fd6, b"Q" * 4096, 8192)
d = os.pread(fd3, 8192, 0)
st = os.fstat(fd3).st_size
print("pread", len(d), d[:1], d[4096:4097], "size after", st, file=sys.stderr)
d2 = os.pread(fd3, 4096, 8192)
print("pread p2", len(d2), d2[:1], file=sys.stderr)
os.close(fd6)
os.close(fd3)
