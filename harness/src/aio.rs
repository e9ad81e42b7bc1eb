//! Linux native aio (io_setup / io_submit / io_getevents, fs/aio.c) for
//! the asynchronous direct-I/O scenarios ([`crate::scenarios_aio`]).
//!
//! Why io_submit and not io_uring: io_submit issues the write inline
//! (aio_write → ->write_iter on the submitter's thread), so its return is
//! exactly the kernel's submission return: -EIOCBQUEUED from
//! fuse_direct_IO (a queued write; io_submit returns 1 at once) or, for a
//! *blocking* aio write (one past i_size, io->blocking), only after the
//! reply. io_uring would punt a FUSE write to an io-wq worker (FUSE files
//! have no FMODE_NOWAIT), so io_uring_enter returns at once either way and
//! the submission's return is not visible to user space.
//!
//! Every wait is bounded (io_getevents with a timeout). The context is
//! destroyed on drop only when nothing is outstanding: io_destroy waits
//! for in-flight I/O, and a held reply must never hang a teardown (a
//! context with I/O still out is leaked, with its buffers, until the
//! process exits).
use crate::sys::{AlignedBuf, Ret};

/// struct iocb (include/uapi/linux/aio_abi.h), little-endian x86-64 layout.
#[repr(C)]
#[derive(Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// struct io_event.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const IOCB_CMD_PWRITE: u16 = 1;

fn ret_of(r: libc::c_long) -> Ret {
    Ret {
        ret: r,
        errno: if r < 0 {
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
        } else {
            0
        },
    }
}

/// One aio context and the buffers of the writes it submitted.
pub struct Aio {
    ctx: libc::c_ulong,
    /// Submitted, not reaped: (aio_data, iocb, buffer), kept alive until reaped.
    out: Vec<(u64, Box<Iocb>, AlignedBuf)>,
    next: u64,
}

/// A reaped completion: the submission's `aio_data` and its result
/// (bytes written, or -errno).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub data: u64,
    pub res: i64,
}

impl Aio {
    /// io_setup for `nr` events.
    pub fn new(nr: u32) -> Result<Aio, String> {
        let mut ctx: libc::c_ulong = 0;
        let r = unsafe { libc::syscall(libc::SYS_io_setup, nr as libc::c_long, &mut ctx) };
        if r < 0 {
            return Err(format!("io_setup: {}", std::io::Error::last_os_error()));
        }
        Ok(Aio {
            ctx,
            out: vec![],
            next: 1,
        })
    }

    /// Prepare a pwrite of `buf` at `off` on `fd`; [`Submit::go`] submits it.
    /// Split from the submission so the submission can run on another
    /// thread ([`Submit`] is Send) while the buffers stay owned here.
    pub fn prepare_pwrite(&mut self, fd: i32, buf: AlignedBuf, off: u64) -> Submit {
        let data = self.next;
        self.next += 1;
        let iocb = Box::new(Iocb {
            aio_data: data,
            aio_lio_opcode: IOCB_CMD_PWRITE,
            aio_fildes: fd as u32,
            aio_buf: buf.bytes().as_ptr() as u64,
            aio_nbytes: buf.bytes().len() as u64,
            aio_offset: off as i64,
            ..Default::default()
        });
        let p = &*iocb as *const Iocb as usize;
        self.out.push((data, iocb, buf));
        Submit {
            ctx: self.ctx,
            iocb: p,
            data,
        }
    }

    /// io_getevents: wait up to `ms` for at least one completion and reap
    /// it; `Ok(None)`: none within `ms`.
    pub fn reap(&mut self, ms: u64) -> Result<(Ret, Option<Completion>), String> {
        let mut ev = [IoEvent::default(); 1];
        let ts = libc::timespec {
            tv_sec: (ms / 1000) as libc::time_t,
            tv_nsec: ((ms % 1000) * 1_000_000) as libc::c_long,
        };
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_getevents,
                self.ctx,
                1 as libc::c_long,
                1 as libc::c_long,
                ev.as_mut_ptr(),
                &ts as *const libc::timespec,
            )
        };
        let ret = ret_of(r);
        if r < 0 {
            return Err(format!("io_getevents: errno {}", ret.errno));
        }
        if r == 0 {
            return Ok((ret, None));
        }
        let c = Completion {
            data: ev[0].data,
            res: ev[0].res,
        };
        self.out.retain(|o| o.0 != c.data);
        Ok((ret, Some(c)))
    }

    /// Submissions not reaped yet.
    pub fn outstanding(&self) -> usize {
        self.out.len()
    }
}

impl Drop for Aio {
    fn drop(&mut self) {
        if self.out.is_empty() {
            unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
        } else {
            // io_destroy would wait for the outstanding I/O (maybe a held
            // reply): leak the context and the buffers the kernel may
            // still read.
            std::mem::forget(std::mem::take(&mut self.out));
        }
    }
}

/// One prepared io_submit of a single iocb (Send: the iocb and its buffer
/// stay owned by the [`Aio`], which must outlive the submission).
pub struct Submit {
    ctx: libc::c_ulong,
    iocb: usize,
    pub data: u64,
}

impl Submit {
    /// io_submit(ctx, 1, [iocb]): 1 once the kernel has taken it (for a
    /// queued aio write, at -EIOCBQUEUED; for a blocking one, after the
    /// reply), or -1 and errno.
    pub fn go(self) -> Ret {
        let list = [self.iocb as *const Iocb];
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_submit,
                self.ctx,
                1 as libc::c_long,
                list.as_ptr(),
            )
        };
        ret_of(r)
    }
}
