import os, sys, threading, ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
d = sys.argv[1]
fd = os.open(d + "/f", os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, 8192)
a = libc.mmap(None, 8192, 3, 1, fd, 0)
B = (ctypes.c_char * 8192).from_address(a)
stop = False
def loads():
    while not stop: _ = B[0]
def stores():
    i = 0
    while not stop:
        B[0] = bytes([65 + i % 26]); i += 1
ts = ([threading.Thread(target=loads)] if "noload" not in sys.argv else []) + ([threading.Thread(target=stores)] if "nostore" not in sys.argv else [])
for t in ts: t.start()
os.fsync(fd)
os.ftruncate(fd, 4096)
os.ftruncate(fd, 8192)
_ = B[4096]
B[4096] = b"Z"
os.fsync(fd)
stop = True
for t in ts: t.join()
libc.munmap(ctypes.c_void_p(a), 8192)
os.close(fd)
