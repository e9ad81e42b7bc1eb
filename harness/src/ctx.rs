//! What a scenario body gets ([`Ctx`]): the mount, the control socket,
//! syscall helpers bracketed by `call`/`ret` marks, syscalls on their own
//! threads ([`Pending`]). runner.rs builds a `Ctx` per mount and tears it
//! down; the scenario files use it and never the runner.
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::control::CtlClient;
use crate::fail::{Fail, Res};
use crate::sys::{self, Ret};
use crate::trace_query::{read_trace, Tr};

/// A syscall running on its own thread.
pub struct Pending {
    what: String,
    rx: mpsc::Receiver<(Ret, u64)>,
    got: Option<(Ret, u64)>,
    /// The thread's kernel tid (0 until it started): a signal's target.
    tid: std::sync::Arc<std::sync::atomic::AtomicI32>,
}

impl Pending {
    /// Wait up to `ms` for the call to return: Some((ret, duration_us)).
    pub fn wait(&mut self, ms: u64) -> Option<(Ret, u64)> {
        if self.got.is_none() {
            self.got = self.rx.recv_timeout(Duration::from_millis(ms)).ok();
        }
        self.got
    }

    pub fn done(&mut self) -> bool {
        if self.got.is_none() {
            self.got = self.rx.try_recv().ok();
        }
        self.got.is_some()
    }

    /// The thread's tid, once it runs (it is set before the syscall).
    pub fn tid(&self) -> i32 {
        self.tid.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Wait, failing the named check if the call has not returned in `ms`.
    pub fn join(&mut self, ms: u64) -> Result<(Ret, u64), Fail> {
        self.wait(ms).ok_or_else(|| Fail {
            check: format!("{} returns", self.what),
            detail: format!("did not return within {ms} ms"),
        })
    }
}

/// What a scenario body gets: the mount, the control socket, syscall helpers with marks.
pub struct Ctx {
    pub mnt: PathBuf,
    /// The mount's FUSE connection (the minor of its st_dev, from
    /// mountinfo): /sys/fs/fuse/connections/<conn>.
    pub(crate) conn: Option<u32>,
    pub(crate) ctl: CtlClient,
    pub(crate) trace_path: PathBuf,
    pub(crate) asserting: bool,
    /// The model state the running kernel stands for (a `[[state]]` name
    /// of checks/facts/kernels.toml: "L", "T2", ...), if any: a body
    /// whose kernel checks differ by state branches on it.
    pub(crate) state: Option<&'static str>,
    /// Expectations that did not hold on a kernel whose outcome is not asserted.
    pub notes: Vec<String>,
    /// fds to close at the end (closed after all holds are cleared).
    pub open_fds: Vec<i32>,
    /// mappings (addr, len) to unmap at the end (a mapping keeps the mount busy).
    pub maps: Vec<(usize, usize)>,
}

impl Ctx {
    /// The model state the running kernel stands for, if any.
    pub fn state(&self) -> Option<&'static str> {
        self.state
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.mnt.join(name)
    }

    /// Send a control command; fail unless the reply is `ok ...`.
    pub fn ctl(&mut self, cmd: &str) -> Result<String, Fail> {
        Ok(self.ctl.ok(cmd)?)
    }

    pub fn count(&mut self, op: &str) -> Result<u64, Fail> {
        Ok(self.ctl.counted(&format!("count {op}"))?.1)
    }

    /// wait_held: fail (harness) if fewer than n replies are parked after ms.
    pub fn wait_held(&mut self, n: usize, ms: u64) -> Res {
        let (ok, got) = self.ctl.counted(&format!("wait_held {n} {ms}"))?;
        if !ok {
            return Err(Fail {
                check: "hold".into(),
                detail: format!("expected {n} held replies within {ms} ms, have {got}"),
            });
        }
        Ok(())
    }

    pub fn wait_count(&mut self, op: &str, n: u64, ms: u64) -> Result<bool, Fail> {
        Ok(self.ctl.counted(&format!("wait_count {op} {n} {ms}"))?.0)
    }

    pub fn mark(&mut self, text: &str) -> Res {
        self.ctl(&format!("mark {text}"))?;
        Ok(())
    }

    /// A check on the kernel's behaviour. On an unknown kernel it is recorded, not failed.
    pub fn expect(&mut self, check: &str, cond: bool, detail: impl FnOnce() -> String) -> Res {
        if cond {
            return Ok(());
        }
        let d = detail();
        if self.asserting {
            Err(Fail {
                check: check.into(),
                detail: d,
            })
        } else {
            self.notes.push(format!("{check}: {d}"));
            Ok(())
        }
    }

    /// Run a syscall on this thread, bracketed by `call`/`ret` marks.
    pub fn sys(
        &mut self,
        actor: &str,
        name: &str,
        args: &str,
        f: impl FnOnce() -> Ret,
    ) -> Result<(Ret, u64), Fail> {
        self.mark(&format!("call {actor} {name} {args}"))?;
        let t = Instant::now();
        let r = f();
        let d = t.elapsed().as_micros() as u64;
        self.mark(&format!(
            "ret {actor} {name} {} errno={} dur_us={d}",
            r.ret, r.errno
        ))?;
        Ok((r, d))
    }

    /// Like [`sys`](Self::sys) but the call must succeed.
    pub fn sys_ok(
        &mut self,
        actor: &str,
        name: &str,
        args: &str,
        f: impl FnOnce() -> Ret,
    ) -> Result<(i64, u64), Fail> {
        let (r, d) = self.sys(actor, name, args, f)?;
        if r.ret < 0 {
            return Err(Fail {
                check: format!("{name} succeeds"),
                detail: format!("{actor} {name}({args}) failed errno={}", r.errno),
            });
        }
        Ok((r.ret, d))
    }

    /// Run a syscall on a new thread (with its own control connection for the marks).
    pub fn spawn(
        &mut self,
        actor: &str,
        name: &str,
        args: &str,
        f: impl FnOnce() -> Ret + Send + 'static,
    ) -> Result<Pending, Fail> {
        let mut c = self
            .ctl
            .reconnect()
            .map_err(|e| format!("ctl reconnect: {e}"))?;
        let (tx, rx) = mpsc::channel();
        let (a, n, g) = (actor.to_string(), name.to_string(), args.to_string());
        // The call mark is logged before the thread starts, so it precedes any request.
        c.ok(&format!("mark call {a} {n} {g}"))?;
        let tid = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
        let tid2 = tid.clone();
        thread::Builder::new()
            .name(format!("wl-{actor}"))
            .spawn(move || {
                tid2.store(
                    unsafe { libc::gettid() },
                    std::sync::atomic::Ordering::SeqCst,
                );
                let t = Instant::now();
                let r = f();
                let d = t.elapsed().as_micros() as u64;
                let _ = c.ok(&format!(
                    "mark ret {a} {n} {} errno={} dur_us={d}",
                    r.ret, r.errno
                ));
                let _ = tx.send((r, d));
            })
            .map_err(|e| format!("spawn: {e}"))?;
        Ok(Pending {
            what: format!("{actor} {name}"),
            rx,
            got: None,
            tid,
        })
    }

    // ---- common syscalls ----

    pub fn open(&mut self, actor: &str, name: &str, flags: i32) -> Result<i32, Fail> {
        let p = self.path(name);
        let (fd, _) = self.sys_ok(actor, "open", &format!("{name} {flags:#x}"), || {
            sys::open(&p, flags, 0o644)
        })?;
        self.open_fds.push(fd as i32);
        Ok(fd as i32)
    }

    pub fn create(&mut self, actor: &str, name: &str) -> Result<i32, Fail> {
        self.open(actor, name, libc::O_CREAT | libc::O_RDWR)
    }

    /// pwrite one page per letter of `tags` at `off`; must write everything.
    pub fn pwrite(&mut self, actor: &str, fd: i32, off: u64, tags: &str) -> Result<u64, Fail> {
        let buf = sys::AlignedBuf::pages(tags);
        let (n, d) = self.sys_ok(
            actor,
            "pwrite",
            &format!("fd={fd} off={off} {tags}"),
            || sys::pwrite(fd, buf.bytes(), off),
        )?;
        self.expect("pwrite complete", n as usize == tags.len() * 4096, || {
            format!("short write {n}")
        })?;
        Ok(d)
    }

    /// pwrite `unit` bytes per letter of `tags` at `off` (sizes below a
    /// page); the mark has the data's page tags, its byte count (`len=`)
    /// and, where the page tags do not give them, its 1 KiB unit tags
    /// (`units=`), as trace conformance reads them.
    pub fn pwrite_units(
        &mut self,
        actor: &str,
        fd: i32,
        off: u64,
        tags: &str,
        unit: usize,
    ) -> Result<u64, Fail> {
        let mut buf = sys::AlignedBuf::new(tags.len() * unit);
        for (i, c) in tags.bytes().enumerate() {
            buf.bytes_mut()[i * unit..(i + 1) * unit].fill(c);
        }
        let len = buf.bytes().len();
        let units = crate::trace::unit_tags(buf.bytes())
            .map(|u| format!(" units={u}"))
            .unwrap_or_default();
        let args = format!(
            "fd={fd} off={off} {} len={len}{units}",
            crate::trace::page_tags(buf.bytes())
        );
        let (n, d) = self.sys_ok(actor, "pwrite", &args, || sys::pwrite(fd, buf.bytes(), off))?;
        self.expect("pwrite complete", n as usize == len, || {
            format!("short write {n}")
        })?;
        Ok(d)
    }

    /// pread; the `ret` mark carries the data read as page tags
    /// (`data=AB`), which trace conformance checks against the page cache.
    pub fn pread(&mut self, actor: &str, fd: i32, off: u64, len: usize) -> Result<Vec<u8>, Fail> {
        self.mark(&format!("call {actor} pread fd={fd} off={off} len={len}"))?;
        let (r, d, data) = read_at(fd, off, len);
        self.mark(&read_ret(actor, &r, d, &data))?;
        if r.ret < 0 {
            return Err(Fail {
                check: "pread succeeds".into(),
                detail: format!("{actor} pread(fd={fd}) failed errno={}", r.errno),
            });
        }
        Ok(data)
    }

    /// pread on its own thread (its `ret` mark carries the data).
    pub fn spawn_pread(
        &mut self,
        actor: &str,
        fd: i32,
        off: u64,
        len: usize,
    ) -> Result<Pending, Fail> {
        let mut c = self
            .ctl
            .reconnect()
            .map_err(|e| format!("ctl reconnect: {e}"))?;
        let (tx, rx) = mpsc::channel();
        let a = actor.to_string();
        c.ok(&format!("mark call {a} pread fd={fd} off={off} len={len}"))?;
        thread::Builder::new()
            .name(format!("wl-{actor}"))
            .spawn(move || {
                let (r, d, data) = read_at(fd, off, len);
                let _ = c.ok(&format!("mark {}", read_ret(&a, &r, d, &data)));
                let _ = tx.send((r, d));
            })
            .map_err(|e| format!("spawn: {e}"))?;
        Ok(Pending {
            what: format!("{actor} pread"),
            rx,
            got: None,
            tid: Default::default(),
        })
    }

    pub fn sfr(&mut self, actor: &str, fd: i32) -> Result<u64, Fail> {
        Ok(self
            .sys_ok(
                actor,
                "sync_file_range",
                &format!("fd={fd} 0 0 WRITE"),
                || sys::sync_file_range_write(fd, 0, 0),
            )?
            .1)
    }

    pub fn fsync(&mut self, actor: &str, fd: i32) -> Result<u64, Fail> {
        Ok(self
            .sys_ok(actor, "fsync", &format!("fd={fd}"), || sys::fsync(fd))?
            .1)
    }

    pub fn ftruncate(&mut self, actor: &str, fd: i32, len: u64) -> Result<u64, Fail> {
        Ok(self
            .sys_ok(actor, "ftruncate", &format!("fd={fd} {len}"), || {
                sys::ftruncate(fd, len)
            })?
            .1)
    }

    pub fn close(&mut self, actor: &str, fd: i32) -> Res {
        self.open_fds.retain(|f| *f != fd);
        self.sys_ok(actor, "close", &format!("fd={fd}"), || sys::close(fd))?;
        Ok(())
    }

    /// Abort the connection through fusectl
    /// (/sys/fs/fuse/connections/N/abort, `fuse_abort_conn`), bracketed by
    /// `call T abort` / `ret T abort` marks. The server must linger
    /// (`ServerConfig::linger`): its session ends with the abort.
    pub fn abort_conn(&mut self, actor: &str) -> Res {
        let conn = self.conn.ok_or_else(|| Fail {
            check: "abort".into(),
            detail: "the mount's connection number is not known".into(),
        })?;
        let mut err = None;
        self.sys_ok(
            actor,
            "abort",
            &format!("conn={conn}"),
            || match crate::mount::fusectl_abort(conn) {
                Ok(()) => Ret { ret: 0, errno: 0 },
                Err(e) => {
                    err = Some(e);
                    Ret {
                        ret: -1,
                        errno: libc::EIO,
                    }
                }
            },
        )
        .map_err(|f| Fail {
            detail: format!("{}: {}", f.detail, err.unwrap_or_default()),
            ..f
        })?;
        Ok(())
    }

    /// Send SIGUSR1 to the thread running `target`'s pending call
    /// (`target_actor`), bracketed by `call ACTOR signal target=T SIGUSR1`
    /// / `ret` marks. SIGUSR1 has a handler that does nothing, installed
    /// without SA_RESTART ([`sys::install_sigusr1`]): a syscall it
    /// interrupts is not restarted, and nothing else happens to the runner.
    pub fn signal(&mut self, actor: &str, target_actor: &str, target: &Pending) -> Res {
        sys::install_sigusr1();
        let tid = target.tid();
        if tid == 0 {
            return Err(Fail {
                check: "signal".into(),
                detail: format!("{target_actor}'s thread has not started"),
            });
        }
        self.sys_ok(
            actor,
            "signal",
            &format!("target={target_actor} SIGUSR1"),
            || sys::tgkill(tid, libc::SIGUSR1),
        )?;
        Ok(())
    }

    /// The server, as another client, writes `tags` from page `first`
    /// of `name` and sends FUSE_NOTIFY_INVAL_INODE(off, len) from a
    /// thread of its own, logged as `actor`'s `notify_inval` call
    /// (server/notify.rs). Returns that thread's tid (in the server).
    pub fn notify_inval(
        &mut self,
        actor: &str,
        name: &str,
        (off, len): (i64, i64),
        first: u64,
        tags: &str,
    ) -> Result<i32, Fail> {
        let r = self.ctl(&format!(
            "notify_inval {actor} {name} {off} {len} {first} {tags}"
        ))?;
        r.split_whitespace()
            .next()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| format!("notify_inval: no tid in {r:?}").into())
    }

    /// Wait up to `ms` until `n` notifications returned.
    pub fn wait_notified(&mut self, n: u64, ms: u64) -> Result<bool, Fail> {
        Ok(self.ctl.counted(&format!("wait_notified {n} {ms}"))?.0)
    }

    pub fn sleep_ms(&self, ms: u64) {
        thread::sleep(Duration::from_millis(ms));
    }

    /// Server-side (size, page_tags) of file `name`, via `dump` (never touches the mount).
    pub fn server_file(&mut self, name: &str) -> Result<(u64, String), Fail> {
        let j = self.ctl("dump")?;
        let v: serde_json::Value =
            serde_json::from_str(&j).map_err(|e| format!("dump json: {e}"))?;
        for f in v.as_array().into_iter().flatten() {
            if f["name"] == name {
                return Ok((
                    f["size"].as_u64().unwrap_or(0),
                    f["page_tags"].as_str().unwrap_or("").to_string(),
                ));
            }
        }
        Err(format!("dump: no file {name}").into())
    }

    /// Check the server-side file's size and 1 KiB unit tags.
    pub fn expect_file_units(&mut self, name: &str, size: u64, units: &str) -> Res {
        let j = self.ctl("dump")?;
        let v: serde_json::Value =
            serde_json::from_str(&j).map_err(|e| format!("dump json: {e}"))?;
        let f = v
            .as_array()
            .into_iter()
            .flatten()
            .find(|f| f["name"] == name)
            .ok_or_else(|| format!("dump: no file {name}"))?;
        let (s, u) = (
            f["size"].as_u64().unwrap_or(0),
            f["unit_tags"].as_str().unwrap_or(""),
        );
        self.expect(
            "server file content (1 KiB units)",
            s == size && u == units,
            || format!("server {name}: size {s} units {u:?}, expected size {size} units {units:?}"),
        )
    }

    /// Check the server-side file content at the end of a scenario.
    pub fn expect_file(&mut self, name: &str, size: u64, tags: &str) -> Res {
        let (s, t) = self.server_file(name)?;
        self.expect("server file content", s == size && t == tags, || {
            format!("server {name}: size {s} tags {t:?}, expected size {size} tags {tags:?}")
        })
    }

    /// The trace so far (the server flushes every line).
    pub fn trace(&self) -> Result<Tr, Fail> {
        Ok(Tr(read_trace(&self.trace_path)?))
    }
}

/// pread into a fresh aligned buffer: (ret, duration_us, the bytes read).
fn read_at(fd: i32, off: u64, len: usize) -> (Ret, u64, Vec<u8>) {
    let mut buf = sys::AlignedBuf::new(len);
    let t = Instant::now();
    let r = sys::pread(fd, buf.bytes_mut(), off);
    let d = t.elapsed().as_micros() as u64;
    let n = r.ret.max(0) as usize;
    (r, d, buf.bytes()[..n].to_vec())
}

/// The `ret` mark of a read, with its data as page tags (and, where they
/// do not give them, 1 KiB unit tags: `units=`).
fn read_ret(actor: &str, r: &Ret, d: u64, data: &[u8]) -> String {
    let units = crate::trace::unit_tags(data)
        .map(|u| format!(" units={u}"))
        .unwrap_or_default();
    format!(
        "ret {actor} pread {} errno={} dur_us={d} data={}{units}",
        r.ret,
        r.errno,
        crate::trace::page_tags(data)
    )
}
