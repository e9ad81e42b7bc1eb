//! `wbspec-harness record -- CMD` on the real kernel (root, /dev/fuse;
//! skipped without them unless WBSPEC_REQUIRE_KERNEL is set): programs
//! nobody here wrote (dd, cp, truncate, python3) are recorded, and the
//! trace is checked for what `record` promises: every call mark is
//! acknowledged before the syscall runs, so it precedes every request the
//! syscall sends, and every call has its ret, after them; offsets and
//! data tags are the syscall's; a killed command or an interrupted
//! recording still leaves a well-formed trace that `conform --trace`
//! gives a verdict on (not a parse error); bad input is one line and
//! exit 2 with nothing left mounted. The tests run one at a time (a lock):
//! each compares the machine's FUSE mounts before and after.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use wbspec_harness::mount::fuse_mount_lines;
use wbspec_harness::require::{may_run, KERNEL};
use wbspec_harness::runner::cannot_run;
use wbspec_harness::trace::{parse_trace, Event};

const BIN: &str = env!("CARGO_BIN_EXE_wbspec-harness");
/// Longest any one recording may take here.
const BOUND: Duration = Duration::from_secs(20);

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn can_run(test: &str) -> bool {
    let missing = cannot_run().or_else(|| python().is_none().then(|| "needs python3".into()));
    may_run(KERNEL, test, missing)
}

/// The system's python3 (not a version-manager shim, which stats its
/// working directory: the mount).
fn python() -> Option<&'static str> {
    ["/usr/bin/python3", "/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wbspec-rectest-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

struct Rec {
    code: i32,
    stderr: String,
    /// The trace file's text, if there is one.
    text: Option<String>,
    out: PathBuf,
}

impl Rec {
    /// The trace, which must have been written and must parse.
    fn trace(&self) -> Vec<Event> {
        let t = self.text.as_deref().expect("a trace");
        parse_trace(t).unwrap_or_else(|e| panic!("trace {}: {e}", self.out.display()))
    }
}

/// When to send the recorder a signal: once its mount appears, or once
/// its server's trace (in the run's directory) holds this text.
#[derive(Clone, Copy)]
enum When {
    Mounted(i32),
    TraceHas(i32, &'static str),
}

/// Run `record --trace DIR/t.jsonl -- CMD` with `env` added, bounded;
/// `signal`: send it a signal then.
/// `cmd` may begin with server options and `--` (`["--max-write",
/// "8192", "--", prog, ...]`).
fn record_with(dir: &Path, env: &[(&str, &str)], cmd: &[&str], signal: Option<When>) -> Rec {
    let out = dir.join("t.jsonl");
    let (opts, cmd) = match cmd.iter().position(|a| *a == "--") {
        Some(i) => (&cmd[..i], &cmd[i + 1..]),
        None => (&[][..], cmd),
    };
    let mut child = Command::new(BIN)
        .arg("record")
        .arg("--trace")
        .arg(&out)
        .args(opts)
        .envs(env.iter().copied())
        .arg("--")
        .args(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // this record's own mount (its work directory is named by its pid):
    // other processes on the machine may mount and unmount meanwhile
    // (a CI run failed so when a second test run shared the machine)
    let own = format!("/wbspec-{}-record-", child.id());
    let mounted = || fuse_mount_lines().iter().any(|l| l.contains(&own));
    let t0 = Instant::now();
    let mut signalled = false;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if let (Some(w), false) = (signal, signalled) {
            let (s, now) = match w {
                When::Mounted(s) => (s, mounted()),
                When::TraceHas(s, text) => {
                    let t = std::env::temp_dir()
                        .join(format!("wbspec-{}-record-0/trace.jsonl", child.id()));
                    (
                        s,
                        std::fs::read_to_string(t).is_ok_and(|t| t.contains(text)),
                    )
                }
            };
            if now {
                unsafe { libc::kill(child.id() as i32, s) };
                signalled = true;
            }
        }
        if t0.elapsed() > BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!("record {cmd:?} did not end within {BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!mounted(), "record {cmd:?} left a mount behind");
    let text = std::fs::read_to_string(&out).ok();
    use std::os::unix::process::ExitStatusExt;
    Rec {
        code: status
            .code()
            .unwrap_or_else(|| panic!("record killed: {:?}", status.signal())),
        stderr,
        text,
        out,
    }
}

fn record(dir: &Path, cmd: &[&str]) -> Rec {
    record_with(dir, &[], cmd, None)
}

/// One test at a time, if it may run: `prog` run by `python3 -I -S -c`
/// in the scratch directory `name`, recorded, exiting 0; the guard keeps
/// the lock for the rest of the caller's test.
fn record_python(
    test: &str,
    name: &str,
    prog: &str,
) -> Option<(std::sync::MutexGuard<'static, ()>, PathBuf, Rec)> {
    let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run(test) {
        return None;
    }
    let d = scratch(name);
    let r = record(&d, &[python().unwrap(), "-I", "-S", "-c", prog]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    Some((one, d, r))
}

/// The marks' texts, in order.
fn marks(ev: &[Event]) -> Vec<String> {
    ev.iter()
        .filter(|e| e.ev == "mark" && e.kind.as_deref() != Some("note"))
        .map(|e| e.text.clone().unwrap_or_default())
        .collect()
}

/// The (call, ret) seqs of each marked syscall of each actor, in order;
/// asserts every call has its ret and an actor has one call at a time.
fn calls(ev: &[Event]) -> Vec<(String, u64, u64, String)> {
    let mut open: HashMap<String, (u64, String)> = HashMap::new();
    let mut v = vec![];
    for e in ev.iter().filter(|e| e.ev == "mark") {
        let (Some(a), Some(sc)) = (e.actor.clone(), e.syscall.clone()) else {
            continue;
        };
        match e.kind.as_deref() {
            Some("call") => {
                assert!(a.starts_with('T'), "actor {a}");
                let prev = open.insert(a.clone(), (e.seq, e.text.clone().unwrap()));
                assert!(prev.is_none(), "{a} calls {sc} with {prev:?} pending");
            }
            Some("ret") => {
                let (c, text) = open
                    .remove(&a)
                    .unwrap_or_else(|| panic!("#{} ret without call", e.seq));
                assert!(e.ret.is_some(), "#{} ret without value", e.seq);
                v.push((a, c, e.seq, text));
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "calls without ret: {open:?}");
    v
}

/// Every request a traced thread sent (pid = its tid) after its first
/// call mark, other than the FLUSH/RELEASE of its exit, lies inside one
/// of its own calls: the call mark precedes the requests of its syscall
/// and the ret mark follows them.
fn requests_inside_calls(ev: &[Event]) {
    requests_inside_calls_but(ev, &[]);
}

/// [`requests_inside_calls`], but for requests of the opcodes `but`
/// (a fault's READ is sent by a load or store, no syscall).
fn requests_inside_calls_but(ev: &[Event], but: &[&str]) {
    let cs = calls(ev);
    let first = cs.iter().map(|c| c.1).min().unwrap_or(u64::MAX);
    for e in ev.iter().filter(|e| e.ev == "req" && e.seq > first) {
        let pid = e.pid.unwrap_or(0);
        let op = e.op.as_deref().unwrap_or("");
        if pid == 0 || matches!(op, "FLUSH" | "RELEASE") || but.contains(&op) {
            continue;
        }
        let actor = format!("T{pid}");
        // (a pid with no call is no traced thread: the flusher's
        // write_inode sends SETATTR(times) from a kworker at any time)
        if !cs.iter().any(|c| c.0 == actor) {
            continue;
        }
        assert!(
            cs.iter()
                .any(|(a, c, r, _)| *a == actor && *c < e.seq && e.seq < *r),
            "#{} {op} from pid {pid} lies in none of {actor}'s calls: {:?}",
            e.seq,
            marks(ev)
        );
    }
}

/// `conform --trace` on the recorded trace: a verdict, not bad input.
/// `conform` of `r` says it conforms.
fn conforms(r: &Rec) {
    let (code, out) = conform(r);
    assert_eq!(code, 0, "{out}");
    assert!(conform_line_conforms(&out), "{out}");
}

fn conform(r: &Rec) -> (i32, String) {
    conform_with(r, &[])
}

/// `wbspec conform --trace` with `flags` (e.g. `--verbose`): its exit
/// status and what it printed.
fn conform_with(r: &Rec, flags: &[&str]) -> (i32, String) {
    let o = Command::new(BIN)
        .arg("conform")
        .args(flags)
        .arg("--trace")
        .arg(&r.out)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let code = o.status.code().unwrap();
    assert!(
        [0, 1, 3].contains(&code) && out.starts_with("Conform record "),
        "conform: {code} {out} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (code, out)
}

/// The marks of `r` without actor and timing, asserted to hold every one
/// of `wants`.
fn has_marks(r: &Rec, wants: &[&str]) -> Vec<String> {
    let m = actorless_marks(r);
    for want in wants {
        assert!(m.iter().any(|x| x == want), "no {want:?} in {m:#?}");
    }
    m
}

/// The marks of `r`, each without its actor and timing
/// ([`strip_actor`]).
fn actorless_marks(r: &Rec) -> Vec<String> {
    marks(&r.trace()).iter().map(|m| strip_actor(m)).collect()
}

fn strip_actor(m: &str) -> String {
    let w: Vec<&str> = m.split_whitespace().collect();
    let mut v = vec![w[0]];
    v.extend(&w[2..]);
    v.iter()
        // (digests: `segs_are_the_bytes_cut_at_every_offset_the_trace_names`)
        .filter(|x| !x.starts_with("dur_us=") && !x.starts_with("segs="))
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn dd_writes_at_the_file_position_and_fsync_is_bracketed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record dd") {
        return;
    }
    let d = scratch("dd");
    let r = record(
        &d,
        &[
            "dd",
            "if=/dev/zero",
            "of={mnt}/f",
            "bs=4096",
            "count=3",
            "conv=fsync",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ev = &r.trace();
    assert_eq!(ev[0].scenario.as_deref(), Some("record"));
    requests_inside_calls(ev);
    let m: Vec<String> = marks(ev).iter().map(|m| strip_actor(m)).collect();
    // dd opens f, moves it to fd 1 (dup2, a second fd of the open), writes
    // three pages at the positions write(2) used, fsyncs, closes
    for want in [
        "call open f 0x241 path=f",
        "call dup2 fd=3 path=f from=3 onto=1",
        "call pwrite fd=1 off=0 . len=4096 path=f",
        "call pwrite fd=1 off=4096 . len=4096 path=f",
        "call pwrite fd=1 off=8192 . len=4096 path=f",
        "ret pwrite 4096 errno=0",
        "call fsync fd=1 path=f",
        "call close fd=1 path=f",
    ] {
        assert!(m.contains(&want.to_string()), "no {want:?} in {m:#?}");
    }
    // fsync's page-cache WRITE of the three pages and its FSYNC lie
    // between its call and ret marks
    let (_, c, rt, _) = calls(ev)
        .into_iter()
        .find(|x| x.3.contains(" fsync "))
        .unwrap();
    let inside = |op: &str| {
        ev.iter()
            .filter(|e| e.ev == "req" && e.op.as_deref() == Some(op))
            .all(|e| c < e.seq && e.seq < rt)
    };
    assert!(inside("WRITE") && inside("FSYNC"), "{m:#?}");
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn python_pwrite_fsync_ftruncate_conforms() {
    let prog = "import os
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b'A' * 4096 + b'B' * 4096, 0)
os.fsync(fd)
os.ftruncate(fd, 4096)
os.close(fd)
";
    let Some((_one, d, r)) = record_python("record python3", "py", prog) else {
        return;
    };
    let ev = &r.trace();
    requests_inside_calls(ev);
    let m: Vec<String> = marks(ev)
        .iter()
        .map(|m| strip_actor(m))
        .filter(|m| m.starts_with("call"))
        .collect();
    assert_eq!(
        m,
        [
            "call open f 0x80042 path=f",
            "call pwrite fd=3 off=0 AB len=8192 path=f",
            "call fsync fd=3 path=f",
            "call ftruncate fd=3 4096 path=f",
            "call close fd=3 path=f",
        ]
    );
    // the whole chain: a program nobody here wrote, recorded, conforms
    let (code, out) = conform(&r);
    assert_eq!(code, 0, "{out}");
    std::fs::remove_file(&r.out).unwrap();
    // sendfile of a whole file elsewhere (a count past its end): a write
    // of what the source holds
    let src = d.join("src");
    std::fs::write(&src, [vec![b'S'; 4096], vec![b'T'; 4096]].concat()).unwrap();
    let prog = format!(
        "import os
src = os.open({src:?}, os.O_RDONLY)
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
assert os.sendfile(fd, src, None, 1 << 20) == 8192
os.fsync(fd)
os.close(fd)
"
    );
    let r = record(&d, &[python().unwrap(), "-I", "-S", "-c", &prog]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ev = &r.trace();
    requests_inside_calls(ev);
    let m: Vec<String> = marks(ev).iter().map(|m| strip_actor(m)).collect();
    assert!(
        m.contains(&"call sendfile fd=4 off=0 ST len=8192 path=f".to_string()),
        "{m:#?}"
    );
    let (code, out) = conform(&r);
    assert_eq!(code, 0, "{out}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Names that are not UTF-8: the recording server kept names as lossy
/// UTF-8, so b'\xff' and b'\xfe' were one file (an attack, 3 Dec 2026;
/// the program read another file's data). Such a name is refused now
/// (EILSEQ) and looks up nothing, even beside a file named U+FFFD.
#[test]
fn names_that_are_not_utf8_are_refused_not_merged() {
    let prog = "import os, errno
fd = os.open('\\ufffd', os.O_CREAT | os.O_RDWR, 0o644)
os.close(fd)
for n in (b'\\xff', b'\\xfe'):
    try:
        os.open(n, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
        raise SystemExit('created %r' % n)
    except OSError as e:
        assert e.errno == errno.EILSEQ, e
    try:
        os.stat(n)
        raise SystemExit('found %r' % n)
    except FileNotFoundError:
        pass
";
    let Some((_one, d, _r)) = record_python("record python3 non-UTF-8 names", "py-not-utf8", prog)
    else {
        return;
    };
    std::fs::remove_dir_all(&d).unwrap();
}

/// A sendfile from a FIFO with no writer: the tracer opened the source
/// through /proc/PID/fd before looking at its type, and an open of a
/// FIFO with no writer blocks, so the recording hung (an attack, 3 Dec
/// 2026). It is `copy=unsized` at once now, and the recording ends.
#[test]
fn a_sendfile_from_a_fifo_with_no_writer_does_not_hang_the_tracer() {
    let prog = "import os
p = '/tmp/wbspec-fifo-%d' % os.getpid()
os.mkfifo(p)
try:
    r = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.sendfile(fd, r, None, 500)
    except OSError:
        pass  # EINVAL on 6.18: the tracer's look at the source came first
    os.close(fd)
finally:
    os.unlink(p)
";
    let Some((_one, d, r)) =
        record_python("record python3 sendfile fifo", "py-sendfile-fifo", prog)
    else {
        return;
    };
    let m = actorless_marks(&r);
    assert!(
        m.contains(&"call sendfile fd=4 path=f copy=unsized".to_string()),
        "{m:#?}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// sendfile from a sysfs file (its stat size 4096, whatever it holds)
/// into a mount file: the tracer's read of the source failed and the
/// sendfile was marked as one out of a mount file, and conform said so.
/// It is marked `copy=unsized` now, and conform says that.
#[test]
fn a_sendfile_from_sysfs_is_not_modelled_for_its_unknown_source() {
    const SRC: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
    let missing = (!Path::new(SRC).exists()).then(|| format!("no {SRC}"));
    if !may_run(KERNEL, "sendfile from sysfs", missing) {
        return;
    }
    let prog = format!(
        "import os
src = os.open({SRC:?}, os.O_RDONLY)
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
assert os.sendfile(fd, src, None, 4096) > 0
os.fsync(fd)
os.close(fd)
"
    );
    let Some((_one, d, r)) =
        record_python("record python3 sendfile sysfs", "py-sendfile-sys", &prog)
    else {
        return;
    };
    let m = actorless_marks(&r);
    assert!(
        m.contains(&"call sendfile fd=4 path=f copy=unsized".to_string()),
        "{m:#?}"
    );
    let (code, out) = conform(&r);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("sendfile from a source whose size does not say what it holds"),
        "{out}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// A max_write below 128 KiB caps writeback and direct WRITEs, not
/// readahead READs: the kernel's fc->max_pages is what the server sets
/// from max(max_write, max_readahead) (32 pages with fuser 0.18). Two 8K
/// direct writes, then a buffered 16K read: one READ of 16K, and the
/// trace conforms (the model's READ cap is `read_max_pages`). A single
/// 16K direct write is split by fuse_direct_io into two 8K WRITEs, which
/// the model's direct write does not do: not modelled, saying so.
#[test]
fn a_small_max_write_caps_writes_not_readahead() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record --max-write 8192") {
        return;
    }
    let d = scratch("maxwrite");
    let prog = |one: bool| {
        format!(
            "import os, mmap
fd = os.open('f', os.O_RDWR | os.O_CREAT, 0o644)
fdd = os.open('f', os.O_RDWR | os.O_DIRECT)
m = mmap.mmap(-1, 16384)
m[:] = b'A' * 4096 + b'B' * 4096 + b'C' * 4096 + b'D' * 4096
if {one}:
    assert os.pwrite(fdd, m, 0) == 16384
else:
    assert os.pwrite(fdd, m[:8192], 0) == 8192
    assert os.pwrite(fdd, m[8192:], 8192) == 8192
assert os.pread(fd, 16384, 0) == bytes(m)
os.close(fdd)
os.close(fd)
",
            one = if one { "True" } else { "False" }
        )
    };
    let reqs = |r: &Rec| -> Vec<(String, u64)> {
        r.trace()
            .iter()
            .filter(|e| e.ev == "req" && matches!(e.op.as_deref(), Some("READ" | "WRITE")))
            .map(|e| (e.op.clone().unwrap(), e.size.unwrap_or(0)))
            .collect()
    };
    let w = |n| ("WRITE".to_string(), n);
    // (one 16K direct write: not modelled, saying why)
    for (one, want, says) in [
        (false, 0, "model=conforms"),
        (
            true,
            3,
            "a direct I/O of 16384 bytes above max_write (8192 bytes)",
        ),
    ] {
        let p = prog(one);
        let py = python().unwrap();
        let r = record(&d, &["--max-write", "8192", "--", py, "-I", "-S", "-c", &p]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(reqs(&r), [w(8192), w(8192), ("READ".into(), 16384)]);
        let (code, out) = conform(&r);
        assert_eq!(code, want, "{out}");
        assert!(out.contains(says), "{out}");
        std::fs::remove_file(&r.out).unwrap();
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// A program's I/O below a page (docs/conformance.md, "Units below a
/// page"): 3 KiB of A, a zero KiB and B written at once, fsynced,
/// truncated to 2 KiB and read back. The recorder's marks carry the
/// 1 KiB units the page tags do not give (`units=A.B`, the read's
/// `units=A.`), and the trace conforms in 1 KiB units, the zero unit a
/// write of zeros.
#[test]
fn python_sub_page_io_conforms_in_units() {
    let prog = "import os
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
assert os.pwrite(fd, b'A' * 1024 + bytes(1024) + b'B' * 1024, 0) == 3072
os.fsync(fd)
os.ftruncate(fd, 2048)
assert os.pread(fd, 4096, 0) == b'A' * 1024 + bytes(1024)
os.close(fd)
";
    let Some((_one, d, r)) = record_python("record python3", "py-units", prog) else {
        return;
    };
    let ev = &r.trace();
    requests_inside_calls(ev);
    let m: Vec<String> = marks(ev).iter().map(|m| strip_actor(m)).collect();
    assert!(
        m.contains(&"call pwrite fd=3 off=0 A len=3072 units=A.B path=f".to_string()),
        "{m:#?}"
    );
    assert!(
        m.iter()
            .any(|l| l.starts_with("ret pread 2048 ") && l.ends_with("data=A units=A.")),
        "{m:#?}"
    );
    let (code, out) = conform(&r);
    assert_eq!(code, 0, "{out}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A python program's 100-byte write at 0 and 12-byte write at 100,
/// then fsync: the two tests below read them back differently.
const SMALL_WRITES: &str = "import os
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
assert os.pwrite(fd, b'A' * 100, 0) == 100
assert os.pwrite(fd, bytes(range(1, 13)), 100) == 12
os.fsync(fd)
";

/// Every payload is cut at every offset the trace names and compared by
/// digests (record/segs.rs): a program's 100-byte and 12-byte writes and
/// 16-byte read give pieces 0+24, 24+16, 40+60 and 100+12, and the
/// WRITE that fsync sends carries exactly the pieces of the two writes,
/// so what reached the server is what the program wrote, byte for byte;
/// the temporary hex payloads are gone from the published trace.
#[test]
fn segs_are_the_bytes_cut_at_every_offset_the_trace_names() {
    use wbspec_harness::record::segs::cuts;
    use wbspec_harness::trace::segs;
    let prog = &format!(
        "{SMALL_WRITES}assert os.pread(fd, 16, 24) == b'A' * 16
os.close(fd)
"
    );
    let Some((_one, d, r)) = record_python("record python3 segs", "py-segs", prog) else {
        return;
    };
    let text = std::fs::read_to_string(&r.out).unwrap();
    assert!(!text.contains("raw"), "{text}");
    let ev = &r.trace();
    assert_eq!(ev[0].config.as_ref().unwrap()["segs"], true);
    let c = cuts(ev);
    for o in [0, 24, 40, 100, 112] {
        assert!(c.contains(&o), "{o} not in {c:?}");
    }
    let file: Vec<u8> = [vec![b'A'; 100], (1..=12).collect()].concat();
    let mark_segs = |prefix: &str| -> String {
        let m = ev
            .iter()
            .filter(|e| e.ev == "mark")
            .find(|e| strip_actor(e.text.as_deref().unwrap()).starts_with(prefix))
            .unwrap_or_else(|| panic!("no mark {prefix}: {:#?}", marks(ev)));
        m.segs.clone().unwrap_or_else(|| {
            let t = m.text.as_deref().unwrap();
            t.split_whitespace()
                .find_map(|w| w.strip_prefix("segs="))
                .unwrap_or_else(|| panic!("no segs in {t}"))
                .to_string()
        })
    };
    let w1 = mark_segs("call pwrite fd=3 off=0 ");
    let w2 = mark_segs("call pwrite fd=3 off=100 ");
    assert_eq!(w1, segs(0, &file[..100], &c));
    assert_eq!(w2, segs(100, &file[100..], &c));
    assert!(
        w1.starts_with("0+24:") && w1.contains(",24+16:") && w1.contains(",40+60:"),
        "{w1}"
    );
    assert_eq!(mark_segs("ret pread 16 "), segs(24, &file[24..40], &c));
    let writes: Vec<&Event> = ev.iter().filter(|e| e.is("req", "WRITE")).collect();
    assert_eq!(writes.len(), 1, "{writes:#?}");
    assert_eq!(
        writes[0].segs.as_deref(),
        Some(format!("{w1},{w2}").as_str())
    );
    assert_eq!(writes[0].segs.as_deref(), Some(segs(0, &file, &c).as_str()));
    // five uneven positions (0, 24, 40, 100, 112, the page's end): the
    // model has 16 (it had 4 until 3 Dec 2026)
    let (code, out) = conform_with(&r, &["--verbose"]);
    assert_eq!(code, 0, "{out}");
    assert!(conform_line_conforms(&out), "{out}");
    assert!(
        out.contains("5 positions of uneven size at bytes [(0, 24), (24, 16), (40, 60), (100, 12), (112, 3984)]"),
        "{out}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// A program's writes of 100 and 12 bytes map to uneven positions at
/// the offsets they name (0, 100, 112 and the page's end) and conform:
/// fuse_write_begin, the EOF crop of the fsync's WRITE and the read back
/// compared by the digests of each position. (The program of
/// `segs_are_the_bytes_cut_at_every_offset_the_trace_names`, reading
/// bytes 24..40, names five: not modelled, saying so.)
#[test]
fn small_writes_conform_in_uneven_positions() {
    let prog = &format!(
        "{SMALL_WRITES}assert os.pread(fd, 200, 0) == b'A' * 100 + bytes(range(1, 13))
os.close(fd)
"
    );
    let Some((_one, d, r)) = record_python("record python3 uneven", "py-uneven", prog) else {
        return;
    };
    let (code, out) = conform_with(&r, &["--verbose"]);
    assert_eq!(code, 0, "{out}");
    assert!(conform_line_conforms(&out), "{out}");
    assert!(
        out.contains(
            "4 positions of uneven size at bytes [(0, 100), (100, 12), (112, 88), (200, 3896)]"
        ),
        "{out}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// A store through a 100-byte mapping at 4096 dirties page 1 only;
/// conform's environment pages end at 8192, which no syscall names, and
/// the pieces are cut there too (every 1 KiB), so page 2's digests stay
/// the pwrite's and the trace conforms (before the 1 KiB cuts: a false
/// VIOLATION, page 2 matching no version; found by an attack).
#[test]
fn a_store_through_a_short_mapping_leaves_the_next_page_its_digests() {
    let prog = "import os, mmap, ctypes
fd = os.open('f', os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b'A' * 12288, 0)
m = mmap.mmap(fd, 100, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=4096)
a = ctypes.addressof(ctypes.c_char.from_buffer(m))
ctypes.memset(a + 200, ord('B'), 1)
os.fsync(fd)
del a
m.close()
os.close(fd)
";
    let Some((_one, d, r)) = record_python("record python3 mmap store segs", "py-mmap-span", prog)
    else {
        return;
    };
    let w = r.trace();
    let w = w.iter().find(|e| e.is("req", "WRITE")).unwrap();
    assert!(w.segs.as_deref().unwrap().contains(",8192+1024:"), "{w:?}");
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A name with a newline: /proc/PID/maps writes it `\012`, so the
/// msync and munmap marks, named from the mapping, read `a\012b` while
/// the fd's marks read `a%0Ab`, and conform took them for two files (a
/// false VIOLATION an attack found on 3 Dec 2026). The mapping's name
/// is now read from /proc/PID/map_files, as the fd's is from /proc/PID/fd.
#[test]
fn a_newline_in_a_mapped_files_name_is_one_name() {
    let prog = "import os, mmap
fd = os.open('a\\nb', os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b'A' * 4096, 0)
m = mmap.mmap(fd, 4096)
m[0:1] = b'B'
m.flush()
m.close()
os.close(fd)
";
    let Some((_one, d, r)) = record_python("record python3 newline name", "py-newline", prog)
    else {
        return;
    };
    let ms = has_marks(
        &r,
        &[
            "call msync MS_SYNC off=0 len=4096 path=a%0Ab",
            "call munmap off=0 len=4096 path=a%0Ab",
            "call close fd=3 path=a%0Ab",
        ],
    );
    assert!(!ms.iter().any(|m| m.contains("\\012")), "{ms:?}");
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Pages whose first bytes spell `path=g`: the pwrite's tag word must
/// not read as the mark's `path=` (before `=` was tagged `?`, conform
/// took `g` as the file's name: a false VIOLATION an attack found).
#[test]
fn data_that_spells_a_key_is_data() {
    let prog = "import os
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
data = b''.join(bytes([c]) * 4096 for c in b'path=g')
assert os.pwrite(fd, data, 0) == len(data)
os.fsync(fd)
os.close(fd)
";
    let Some((_one, d, r)) = record_python("record python3 path= data", "py-pathword", prog) else {
        return;
    };
    let m = actorless_marks(&r);
    assert!(
        m.contains(&"call pwrite fd=3 off=0 path?g len=24576 path=f".to_string()),
        "{m:#?}"
    );
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A process that exits without closing its fd: exit_files closes it
/// (write back, FLUSH, RELEASE) inside the `exit` mark, which conform
/// maps to the close task.
#[test]
fn python_exit_without_close_conforms() {
    let prog = "import os
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b'A' * 8192, 0)
os._exit(0)
";
    let Some((_one, d, r)) = record_python("record python3 exit", "exit-fd", prog) else {
        return;
    };
    let m = actorless_marks(&r);
    assert!(m.contains(&"call exit fd=3 path=f".to_string()), "{m:#?}");
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn python_read_and_mmap_marks_carry_data_and_file_ranges() {
    let prog = "import os, mmap
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b'A' * 4096 + b'B' * 4096 + b'C' * 4096)
os.lseek(fd, 4096, 0)
os.read(fd, 8192)
m = mmap.mmap(fd, 8192, offset=4096)
m[0:1] = b'Q'
m.flush()
m.close()
os.close(fd)
";
    let Some((_one, d, r)) = record_python("record python3 mmap", "mmap", prog) else {
        return;
    };
    let ev = &r.trace();
    // (the store through the mapping faults outside any syscall: a READ
    // there, of a page written back early and evicted, is the kernel's)
    requests_inside_calls_but(ev, &["READ"]);
    let m: Vec<String> = marks(ev).iter().map(|m| strip_actor(m)).collect();
    for want in [
        // write(2) at the position 0, read(2) at the position lseek set
        "call pwrite fd=3 off=0 ABC len=12288 path=f",
        "call lseek fd=3 path=f",
        "call pread fd=3 off=4096 len=8192 path=f",
        "ret pread 8192 errno=0 data=BC",
        "call mmap fd=3 off=4096 len=8192 shared prot=rw path=f",
        // msync and munmap name the file range of their addresses
        "call msync MS_SYNC off=4096 len=8192 path=f",
        "call munmap off=4096 len=8192 path=f",
        // mmap's dup of the fd
        "call fcntl fd=3 cmd=F_DUPFD_CLOEXEC path=f",
    ] {
        assert!(m.contains(&want.to_string()), "no {want:?} in {m:#?}");
    }
    // the store is the environment's (docs/conformance.md, "Loads and
    // stores through a program's mappings"); lseek and the dup filtered
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// An mmap's ret mark says `vma=exec` when the mapping the kernel made
/// is executable: PROT_READ under personality(READ_IMPLIES_EXEC) is
/// VM_EXEC, whose faults 6.17 and later read ahead differently, so conform
/// refuses it; a plain PROT_READ mapping's ret has no such word.
#[test]
fn an_executable_mapping_is_marked_and_not_modelled() {
    let prog = "import os, mmap, ctypes
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b'A' * 8192, 0)
m = mmap.mmap(fd, 4096, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
m.close()
ctypes.CDLL(None).personality(0x0400000)
m = mmap.mmap(fd, 4096, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
m.close()
os.close(fd)
";
    let Some((_one, d, r)) = record_python("record python3 exec mapping", "exec-map", prog) else {
        return;
    };
    let rets: Vec<String> = marks(&r.trace())
        .iter()
        .map(|m| strip_actor(m))
        .filter(|m| m.starts_with("ret mmap "))
        .collect();
    assert_eq!(rets.len(), 2, "{rets:#?}");
    assert!(!rets[0].contains("vma="), "{rets:#?}");
    assert!(rets[1].ends_with(" vma=exec"), "{rets:#?}");
    let (code, out) = conform(&r);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("an executable mapping (VM_EXEC without PROT_EXEC"),
        "{out}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// A live file whose real name ends in ` (deleted)`: /proc/PID/maps
/// prints it as d_path prints an unlinked file. The recorder named its
/// mapping `x` (the suffix stripped, as for an unlinked file) and
/// conform read the server's CREATE of `x (deleted)` as a file other
/// than the marks' `x%20(deleted)`: a false VIOLATION at the msync.
/// The inode's link count (map_files, cached attributes) decides now,
/// and a request's name is escaped as a mark's path is.
#[test]
fn a_live_file_named_deleted_is_not_taken_for_an_unlinked_one() {
    let prog = "import os, mmap
fd = os.open('x (deleted)', os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b'A' * 8192, 0)
m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
m[0:1] = b'Q'
m.flush()
m.close()
os.close(fd)
";
    let Some((_one, d, r)) = record_python("record python3 x (deleted)", "py-deleted-name", prog)
    else {
        return;
    };
    has_marks(
        &r,
        &[
            "call msync MS_SYNC off=0 len=8192 path=x%20(deleted)",
            "call munmap off=0 len=8192 path=x%20(deleted)",
        ],
    );
    let (_, out) = conform(&r);
    assert!(!out.contains("VIOLATION"), "{out}");
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A file mapped, unlinked, then msync'd: the recording server removed
/// the inode at UNLINK, so the SETATTR(times) of fuse_unlink's ctime
/// update got ENOENT, which fuse_flush_time_update stores as the
/// mapping's error: the program's msync failed with ENOENT (a
/// FileNotFoundError in python). The server keeps an unlinked inode
/// until the kernel forgets it, as a disk file system does; conform
/// says the unlink is not modelled, and why.
#[test]
fn msync_after_unlink_of_a_mapped_file_succeeds_and_is_not_modelled() {
    let prog = "import os, mmap
fd = os.open('f', os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b'A' * 8192, 0)
m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
os.unlink('f')
m[0:1] = b'Q'
m.flush()
m.close()
os.close(fd)
";
    // (record_python asserts the program exited 0: its msync did not fail)
    let Some((_one, d, r)) = record_python("record python3 unlink mapped", "py-unlink-map", prog)
    else {
        return;
    };
    let ev = r.trace();
    let m: Vec<String> = marks(&ev).iter().map(|m| strip_actor(m)).collect();
    assert!(m.contains(&"ret msync 0 errno=0".to_string()), "{m:#?}");
    let of_inode = |e: &&Event| matches!(e.op.as_deref(), Some("SETATTR" | "WRITE" | "FSYNC"));
    for e in ev.iter().filter(|e| e.ev == "reply").filter(of_inode) {
        let errno = e.result.as_ref().and_then(|r| r["errno"].as_i64());
        assert_ne!(errno, Some(libc::ENOENT as i64), "#{}: {e:?}", e.seq);
    }
    let (code, out) = conform(&r);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("unlink of a file still open or mapped"),
        "{out}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Whether this kernel gives memfd_secret (x86_64 syscall 447; off
/// unless built with CONFIG_SECRETMEM, and refused with
/// secretmem.enable=0 on older kernels).
fn memfd_secret_works() -> bool {
    let fd = unsafe { libc::syscall(447, 0) };
    if fd >= 0 {
        unsafe { libc::close(fd as i32) };
    }
    fd >= 0
}

/// A read into memfd_secret memory: no other process may read it, so
/// the tracer's process_vm_readv fails, and the recording failed ("could
/// not be read back", exit 2, no trace). It goes on now: the read's ret
/// says `buffer=unreadable`, and conform says why it is not modelled.
/// (Without memfd_secret the fallback is shown by decode.rs's unit test
/// `a_read_into_an_unreadable_buffer_says_so`.)
#[test]
fn a_read_into_secret_memory_is_recorded_as_unreadable() {
    let missing = (!memfd_secret_works())
        .then(|| "memfd_secret (syscall 447) is not available on this kernel".to_string());
    if !may_run(KERNEL, "read into secret memory", missing) {
        return;
    }
    let prog = "import os, mmap, ctypes
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b'A' * 4096, 0)
s = libc.syscall(447, 0)
assert s >= 0, ctypes.get_errno()
os.ftruncate(s, 4096)
m = mmap.mmap(s, 4096)
assert os.preadv(fd, [m], 0) == 4096
assert m[0:1] == b'A'
m.close()
os.close(fd)
";
    let Some((_one, d, r)) = record_python("record python3 memfd_secret", "py-secret", prog) else {
        return;
    };
    let m = actorless_marks(&r);
    assert!(
        m.contains(&"ret pread 4096 errno=0 buffer=unreadable".to_string()),
        "{m:#?}"
    );
    let (code, out) = conform(&r);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("into a buffer the recorder could not read"),
        "{out}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn threads_are_actors_of_their_own() {
    let prog = "import os, threading
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
def w(i):
    os.pwrite(fd, bytes([65 + i]) * 4096, 4096 * i)
    os.fdatasync(fd)
ts = [threading.Thread(target=w, args=(i,)) for i in range(3)]
[t.start() for t in ts]
[t.join() for t in ts]
os.close(fd)
";
    let Some((_one, d, r)) = record_python("record python3 threads", "threads", prog) else {
        return;
    };
    let ev = &r.trace();
    requests_inside_calls(ev);
    let cs = calls(ev);
    // each writer thread: its pwrite of its page, then its fdatasync
    let mut writers = std::collections::BTreeSet::new();
    for (i, tag) in ["A", "B", "C"].iter().enumerate() {
        let want = format!("pwrite fd=3 off={} {tag} len=4096 path=f", 4096 * i);
        let (a, _, w_ret, _) = cs
            .iter()
            .find(|c| c.3.contains(&format!(" {want} segs=")))
            .unwrap_or_else(|| panic!("no {want:?} in {:#?}", marks(ev)));
        assert!(
            cs.iter()
                .any(|(b, c, _, t)| b == a && *c > *w_ret && t.contains(" fdatasync ")),
            "{a} has no fdatasync after its pwrite"
        );
        writers.insert(a.clone());
    }
    let opener = &cs.iter().find(|c| c.3.contains(" open ")).unwrap().0;
    assert_eq!(writers.len(), 3, "{writers:?}");
    assert!(!writers.contains(opener));
    conform(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn cp_and_truncate() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record cp, truncate") {
        return;
    }
    let d = scratch("cp");
    let src = d.join("src");
    std::fs::write(&src, vec![b'x'; 8192]).unwrap();
    let r = record(&d, &["cp", src.to_str().unwrap(), "{mnt}/g"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ev = &r.trace();
    requests_inside_calls(ev);
    let m = marks(ev);
    // whatever way cp copies (copy_file_range, sendfile, read/write),
    // the data reaches g, and the WRITE carries the tags
    assert!(m.iter().any(|x| x.contains(" path=g")), "{m:#?}");
    assert!(
        ev.iter()
            .any(|e| e.is_req("WRITE") && e.page_tags.as_deref() == Some("xx")),
        "{m:#?}"
    );
    conform(&r);
    std::fs::remove_file(&r.out).unwrap();
    let r = record(&d, &["truncate", "-s", "8192", "{mnt}/h"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ev = &r.trace();
    requests_inside_calls(ev);
    let m: Vec<String> = marks(ev).iter().map(|m| strip_actor(m)).collect();
    assert!(
        m.contains(&"call ftruncate fd=3 8192 path=h".to_string()),
        "{m:#?}"
    );
    let sa = ev
        .iter()
        .find(|e| e.is_req("SETATTR") && e.size == Some(8192))
        .expect("SETATTR(size)");
    let (_, c, rt, _) = calls(ev)
        .into_iter()
        .find(|x| x.3.contains(" ftruncate "))
        .unwrap();
    assert!(c < sa.seq && sa.seq < rt);
    conform(&r);
    std::fs::remove_file(&r.out).unwrap();
    // a path that reaches the mount through a symbolic link outside it
    let r = record(
        &d,
        &[
            "sh",
            "-c",
            "ln -s \"$1\" \"$2/link\" && exec truncate -s 4096 \"$2/link/h\"",
            "sh",
            "{mnt}",
            d.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ev = &r.trace();
    requests_inside_calls(ev);
    let m: Vec<String> = marks(ev).iter().map(|m| strip_actor(m)).collect();
    assert!(
        m.contains(&"call open h 0x841 path=h".to_string())
            && m.contains(&"call ftruncate fd=3 4096 path=h".to_string()),
        "{m:#?}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// `ls -la` of the mount: its directory syscalls are named by their own
/// names, and the GETXATTR it sends for the root directory is not taken
/// for a request on a file (conform read it as bad input).
#[test]
fn ls_of_the_mount() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record ls") {
        return;
    }
    let d = scratch("ls");
    let r = record(&d, &["ls", "-la", "{mnt}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ev = &r.trace();
    requests_inside_calls(ev);
    let m = marks(ev);
    assert!(m.iter().any(|x| x.contains(" getdents64 fd=")), "{m:#?}");
    conform(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// fio (if installed; .ci/setup installs it): a verified random
/// read/write job of 4 KiB blocks on a 16 KiB file with `extra`
/// options, recorded; asserted to conform. fio's own setup (opendir,
/// fchdir and close of the root, newfstatat, a failed mkdir and unlink,
/// fadvise DONTNEED after the layout and at each open) goes by the filter
/// rules of docs/conformance.md ("Programs checked fully"). fio's
/// defaults stay: its fallocate fails (the recorder answers FALLOCATE
/// ENOSYS) and its random job advises RANDOM at each open, so its
/// buffered reads are forced readahead of the request alone (since 4
/// Dec 2026; before, `--fallocate=none --fadvise_hint=0`).
fn fio_conforms(test: &str, extra: &[&str]) {
    let Some((d, r)) = fio_record(test, "16k", "randrw", extra) else {
        return;
    };
    let ev = &r.trace();
    requests_inside_calls(ev);
    // psync: every data I/O is a pread/pwrite of one 4 KiB block (fio's
    // random bytes give its pwrites 1 KiB unit tags, `units=`, which
    // whole-page traces do not use)
    let io: Vec<String> = marks(ev)
        .iter()
        .map(|m| strip_actor(m))
        .filter(|m| m.starts_with("call pwrite") || m.starts_with("call pread"))
        .collect();
    assert!(io.len() >= 8, "{io:#?}");
    let all: Vec<String> = marks(ev).iter().map(|m| strip_actor(m)).collect();
    assert!(
        all.iter()
            .any(|m| m.starts_with("call fallocate fd=") && m.contains(" mode=0x0 ")),
        "{all:#?}"
    );
    assert!(
        all.iter()
            .any(|m| m.starts_with("call fadvise64 ") && m.contains(" RANDOM ")),
        "{all:#?}"
    );
    assert!(
        io.iter()
            .all(|m| m.contains(" len=4096 ") && m.ends_with(" path=f") && m.contains(" off=")),
        "{io:#?}"
    );
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// fio's job `j` on `{mnt}/f` of `size`, `--rw=RW`, with `extra` options, recorded
/// (its scratch directory and recording); None if the test may not run.
fn fio_record(test: &str, size: &str, rw: &str, extra: &[&str]) -> Option<(PathBuf, Rec)> {
    let size = format!("--size={size}");
    let rw = format!("--rw={rw}");
    let mut args = vec!["--name=j", "--filename={mnt}/f", &size, "--bs=4k", &rw];
    args.extend(FIO_VERIFY);
    args.extend(["--number_ios=64", "--output=/dev/null"]);
    args.extend(extra);
    fio_run(test, &args)
}

/// fio's verify options, and the default these jobs turn off
/// (docs/conformance.md, "Programs checked fully"; the mmap jobs also
/// turn off `--fadvise_hint`, whose madvise has no model task).
const FIO_VERIFY: [&str; 4] = [
    "--verify=crc32c",
    "--do_verify=1",
    "--verify_state_save=0",
    "--unlink=0",
];

/// fio with `args`, recorded (its scratch directory and recording);
/// None if the test may not run.
fn fio_run(test: &str, args: &[&str]) -> Option<(PathBuf, Rec)> {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let fio = ["/usr/bin/fio", "/usr/local/bin/fio"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let missing = cannot_run().or_else(|| fio.is_none().then(|| "needs fio".into()));
    if !may_run(KERNEL, test, missing) {
        return None;
    }
    let d = scratch(test);
    let mut cmd = vec![fio.unwrap()];
    cmd.extend(args);
    let r = record(&d, &cmd);
    assert_eq!(r.code, 0, "{}", r.stderr);
    Some((d, r))
}

/// Buffered psync randrw with crc32c verify.
#[test]
fn fio_job_conforms() {
    fio_conforms("fio", &["--ioengine=psync"]);
}

/// The same job with O_DIRECT (`--direct=1`): its verify pass reads
/// through direct READs.
#[test]
fn fio_direct_job_conforms() {
    fio_conforms("fio-direct", &["--ioengine=psync", "--direct=1"]);
}

/// The job with `--ioengine=mmap`, writing (`--rw=randwrite`: a randrw
/// job of two blocks may do no write at all) and verifying: fio maps
/// the file (MAP_SHARED) and copies its blocks into the mapping and back
/// out, so its I/O is loads and stores, no syscall; its verify pass maps
/// the file again, and it exits with both mappings live (the exit's
/// fuse_vma_close writes back). The loads and stores are the
/// environment's (docs/conformance.md, "Loads and stores through a
/// program's mappings"): a task slot per mapped page.
#[test]
fn fio_mmap_job_conforms() {
    fio_mmap_conforms("fio-mmap", 8192);
}

/// The same on 12 KiB: three pages mapped, each page's loads and stores
/// one task (with a load task and a store task per page the search
/// passed its bound of 2 M states at one event: inconclusive).
#[test]
fn fio_mmap_job_on_three_pages_conforms() {
    fio_mmap_conforms("fio-mmap-3", 12288);
}

fn fio_mmap_conforms(test: &str, size: u64) {
    let sz = format!("{}k", size / 1024);
    let Some((d, r)) = fio_record(
        test,
        &sz,
        "randwrite",
        &["--ioengine=mmap", "--fadvise_hint=0"],
    ) else {
        return;
    };
    let ev = &r.trace();
    // the faults' READs are the only requests outside calls
    requests_inside_calls_but(ev, &["READ"]);
    let m: Vec<String> = marks(ev).iter().map(|m| strip_actor(m)).collect();
    // the job maps the whole file (its verify pass, when it runs, maps
    // it again), reads and writes none of its blocks with syscalls, and
    // exits with the mappings live
    assert!(
        m.iter().any(|x| x.starts_with("call mmap fd=")
            && x.ends_with(&format!(" off=0 len={size} shared prot=rw path=f"))),
        "{m:#?}"
    );
    assert!(m.iter().any(|x| x == "call exit map path=f"), "{m:#?}");
    // (the layout pass before the job writes the file with pwrite)
    let exit = m.iter().position(|x| x.starts_with("call exit")).unwrap();
    let first_map = m.iter().position(|x| x.starts_with("call mmap")).unwrap();
    assert!(
        !m[first_map..exit]
            .iter()
            .any(|x| x.starts_with("call pwrite") || x.starts_with("call pread")),
        "{m:#?}"
    );
    // the stores reached the server: a page-cache WRITE after the mmap
    let mmap_seq = ev
        .iter()
        .find(|e| e.kind.as_deref() == Some("call") && e.syscall.as_deref() == Some("mmap"))
        .unwrap()
        .seq;
    assert!(
        ev.iter()
            .any(|e| e.is_req("WRITE") && e.is_cache_write() && e.seq > mmap_seq),
        "no WRITE of a stored page"
    );
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Three fio jobs at once, one per file and per kind of I/O (issue 21
/// item 5, "mixed buffered, O_DIRECT and mmap jobs with verify"):
/// buffered psync randrw on `a`, O_DIRECT psync randrw on `b`, mmap
/// randwrite on `c` (8 KiB, as above). fio runs each job in a process of
/// its own, so their syscalls and a fault's READ interleave on one
/// connection; each file's projection conforms (docs/conformance.md,
/// "Several files").
#[test]
fn fio_mixed_jobs_conform() {
    let mut args = vec!["--output=/dev/null"];
    for job in [
        &[
            "--name=buf",
            "--filename={mnt}/a",
            "--size=16k",
            "--rw=randrw",
            "--ioengine=psync",
        ][..],
        &[
            "--name=dio",
            "--filename={mnt}/b",
            "--size=16k",
            "--rw=randrw",
            "--ioengine=psync",
            "--direct=1",
        ],
        &[
            "--name=map",
            "--filename={mnt}/c",
            "--size=8k",
            "--rw=randwrite",
            "--ioengine=mmap",
            "--fadvise_hint=0",
        ],
    ] {
        args.extend(job);
        args.extend(["--bs=4k", "--number_ios=64"]);
        args.extend(FIO_VERIFY);
    }
    let Some((d, r)) = fio_run("fio mixed jobs", &args) else {
        return;
    };
    requests_inside_calls_but(&r.trace(), &["READ"]);
    let (code, out) = conform(&r);
    assert_eq!(code, 0, "{out}");
    // each file conforms (with the environment's reclaim of clean
    // folios if the machine evicted one: conformance.md)
    let files = out
        .split_once(" model=conforms [3 files: ")
        .and_then(|(_, r)| r.split_once(']'))
        .map(|(l, _)| l.split("; ").collect::<Vec<_>>())
        .unwrap_or_default();
    assert_eq!(files.len(), 3, "{out}");
    for (f, name) in files.iter().zip(["a", "b", "c"]) {
        let w = f.strip_prefix(&format!("{name}: ")).unwrap_or("");
        assert!(is_conforms(w), "{out}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// sqlite3 (if installed; .ci/setup installs it) on a database in the
/// mount: 2,000 inserts in one transaction after `pragmas` and a
/// CREATE TABLE. Returns the recording and `conform --verbose`'s exit
/// code and output; None if the test may not run.
fn sqlite_run(test: &str, pragmas: &str) -> Option<(Rec, i32, String)> {
    let sqlite = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let missing = cannot_run().or_else(|| sqlite.is_none().then(|| "needs sqlite3".into()));
    if !may_run(KERNEL, test, missing) {
        return None;
    }
    let mut sql = format!("{pragmas} CREATE TABLE t(a, b); BEGIN;");
    for i in 0..2000 {
        sql += &format!(" INSERT INTO t VALUES({i}, 'row {i}');");
    }
    sql += " COMMIT; SELECT count(*) FROM t;";
    let d = scratch(test);
    let r = record(&d, &[sqlite.unwrap(), "{mnt}/db.sqlite", &sql]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    requests_inside_calls(&r.trace());
    let (code, out) = conform_with(&r, &["--verbose"]);
    Some((r, code, out))
}

/// Each file's verdict line (`file NAME: WORD`) of a verbose conform.
/// A verdict that conforms: strictly, or only with the environment's
/// reclaim of clean folios (the machine's memory pressure or DAMON took
/// a clean page the model keeps, and the program read it again:
/// docs/conformance.md). The pages the scenario sets up are not the
/// test's promise; the kernel keeps none cached. Also a verdict that
/// says which readahead edges inside positions it could not check
/// (docs/conformance.md §7): the trace conforms on its own split.
fn is_conforms(w: &str) -> bool {
    w == "conforms" || (w.starts_with("conforms (") && w.ends_with(')'))
}

/// A `Conform` line of `out` says the trace conforms (to its end, not
/// `conforms-to-cut`), with or without what it needed (`is_conforms`)
/// and a list of files.
fn conform_line_conforms(out: &str) -> bool {
    out.lines()
        .filter_map(|l| l.split_once(" model="))
        .any(|(_, w)| {
            let w = w.split(" [").next().unwrap_or(w);
            let w = w.split(" as-declared").next().unwrap_or(w);
            is_conforms(w.trim_end())
        })
}

fn file_verdicts(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| l.trim_start().strip_prefix("file "))
        .filter_map(|l| l.split_once(": "))
        .map(|(f, w)| (f.to_string(), w.to_string()))
        .collect()
}

/// Every file conforms, or is "not modelled" for the number of its
/// uneven positions alone (the model has 16), and the files `conforming`
/// conform.
fn only_too_many_positions(files: &[(String, String)], conforming: &[&str]) {
    for (f, w) in files {
        assert!(
            is_conforms(w)
                || (w.starts_with("not-modelled (needs ")
                    && w.contains(" positions of uneven size ")
                    && w.ends_with("the model has 16)")),
            "{f}: {w}"
        );
    }
    for c in conforming {
        assert!(
            files.iter().any(|(f, w)| f == c && is_conforms(w)),
            "{c}: {files:?}"
        );
    }
}

/// sqlite3 in rollback-journal mode conforms, every file of it
/// (docs/conformance.md, Programs checked fully): its metadata syscalls
/// (fcntl locks, fchown, fstat, access, opendir and fsync of the root,
/// unlink) all pass the filter rules; the rollback journal, unlinked and
/// created again, is one file per inode lifetime; its sub-page I/O (the
/// database header's 100 bytes, the journal's 12 and 512) maps to
/// uneven positions: 4 for the first journal, 13-14 for the database
/// and the second journal.
#[test]
fn sqlite3_rollback_journal_conforms() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some((r, code, out)) = sqlite_run("sqlite-rollback", "PRAGMA journal_mode=DELETE;") else {
        return;
    };
    assert_eq!(code, 0, "{out}");
    let files = file_verdicts(&out);
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        names,
        ["db.sqlite", "db.sqlite-journal", "db.sqlite-journal#2"],
        "{out}"
    );
    assert!(files.iter().all(|f| is_conforms(&f.1)), "{out}");
    // the database and the second journal took more than 4 positions
    assert!(
        out.lines()
            .filter_map(|l| l.split_once(" positions of uneven size"))
            .filter_map(|(a, _)| a.rsplit(' ').next()?.parse::<u32>().ok())
            .any(|n| n > 4),
        "{out}"
    );
    std::fs::remove_dir_all(r.out.parent().unwrap()).unwrap();
}

/// WAL mode with `locking_mode=EXCLUSIVE`: sqlite keeps the WAL index
/// in heap memory, so there is no -shm file and no shared mapping whose
/// stores the recorder could not see. The database and the journal of
/// the table's creation conform; the WAL file needs more positions than
/// the model has (its 32-byte header and 24-byte frame headers: 41).
#[test]
fn sqlite3_wal_exclusive_is_blocked_only_by_its_number_of_positions() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some((r, code, out)) = sqlite_run(
        "sqlite-wal",
        "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL;",
    ) else {
        return;
    };
    assert_eq!(code, 3, "{out}");
    assert!(!r.text.as_deref().unwrap().contains("-shm"));
    assert!(!marks(&r.trace()).iter().any(|m| m.contains(" mmap ")));
    let files = file_verdicts(&out);
    assert!(files.iter().any(|f| f.0 == "db.sqlite-wal"), "{out}");
    only_too_many_positions(&files, &["db.sqlite", "db.sqlite-journal"]);
    std::fs::remove_dir_all(r.out.parent().unwrap()).unwrap();
}

#[test]
fn a_killed_command_leaves_a_well_formed_trace() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record a killed command") {
        return;
    }
    let d = scratch("killed");
    // the command kills itself: its status is record's
    let r = record(
        &d,
        &[
            "sh",
            "-c",
            "dd if=/dev/zero of=f bs=4096 count=2 2>/dev/null; kill -9 $$",
        ],
    );
    assert_eq!(r.code, 128 + 9, "{}", r.stderr);
    calls(&r.trace());
    conform(&r);
    std::fs::remove_file(&r.out).unwrap();
    // a process killed inside a marked syscall (flock waiting for its
    // parent's lock): its call gets a ret, -1 EINTR died=9
    let prog = "import os, fcntl, time
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
pid = os.fork()
if pid == 0:
    fd2 = os.open('f', os.O_RDWR)
    fcntl.flock(fd2, fcntl.LOCK_EX)
    os._exit(0)
for _ in range(1000):
    if open(f'/proc/{pid}/syscall').read().startswith('73 '):
        break
    time.sleep(0.01)
os.kill(pid, 9)
os.waitpid(pid, 0)
os.close(fd)
";
    let r = record(&d, &[python().unwrap(), "-I", "-S", "-c", prog]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ev = &r.trace();
    calls(ev);
    let m: Vec<String> = marks(ev).iter().map(|m| strip_actor(m)).collect();
    assert!(
        m.contains(&"ret flock -1 errno=4 died=9".to_string()),
        "{m:#?}"
    );
    assert!(
        r.stderr.contains("1 calls ended by the thread's death"),
        "{}",
        r.stderr
    );
    conform(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// An exec from a thread other than the leader while the leader waits
/// in a marked flock, and the exit of a process holding a mount file:
/// the leader's call gets a ret (`died=exec`), the exec and the exit are
/// calls of their own (their FLUSH/RELEASE inside), and the execve's ret
/// names the actor its call named though the thread's tid changed.
#[test]
fn exec_and_exit_of_processes_holding_mount_files() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record exec and exit") {
        return;
    }
    let d = scratch("exec");
    let prog = "import os, fcntl, threading, time
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
r, w = os.pipe()
me = os.getpid()
if os.fork() == 0:
    fcntl.flock(os.open('f', os.O_RDWR), fcntl.LOCK_EX)
    os.write(w, b'x')
    while os.getppid() == me:
        time.sleep(0.01)
    os._exit(0)
os.read(r, 1)
def ex():
    for _ in range(1000):
        if open(f'/proc/{me}/task/{me}/syscall').read().startswith('73 '):
            break
        time.sleep(0.01)
    os.execv('/bin/sh', ['sh', '-c', 'exit 3'])
threading.Thread(target=ex).start()
fcntl.flock(fd, fcntl.LOCK_EX)
";
    let r = record(&d, &[python().unwrap(), "-I", "-S", "-c", prog]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let ev = &r.trace();
    let cs = calls(ev);
    let m: Vec<String> = marks(ev).iter().map(|m| strip_actor(m)).collect();
    for want in [
        "call flock fd=3 path=f",
        "ret flock -1 errno=4 died=exec",
        "call execve fd=3 path=f",
        "ret execve 0 errno=0",
        "ret exit 0 errno=0",
    ] {
        assert!(m.contains(&want.to_string()), "no {want:?} in {m:#?}");
    }
    // the exiting child's FLUSHes lie inside its exit call
    let (child, c, rt, _) = cs.iter().find(|x| x.3.contains(" exit ")).unwrap();
    let pid: u32 = child[1..].parse().unwrap();
    let flushes: Vec<u64> = ev
        .iter()
        .filter(|e| e.is_req("FLUSH") && e.pid == Some(pid))
        .map(|e| e.seq)
        .collect();
    assert!(
        !flushes.is_empty() && flushes.iter().all(|s| c < s && s < rt),
        "{m:#?}"
    );
    conform(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// An exec closes only close-on-exec fds (do_close_on_exec): a mount fd
/// made inheritable stays open in the new program, whose exit is its
/// close; the exec is not marked (it holds no mount file it would
/// close).
#[test]
fn an_exec_keeps_an_inheritable_fd_open() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record exec with an inheritable fd") {
        return;
    }
    let d = scratch("exec-keep");
    // (F_SETFD, filtered: os.set_inheritable would use ioctl(FIONCLEX))
    let prog = "import os, fcntl
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b'A' * 4096)
fcntl.fcntl(fd, fcntl.F_SETFD, 0)
os.execv('/bin/sh', ['sh', '-c', 'exit 0'])
";
    let r = record(&d, &[python().unwrap(), "-I", "-S", "-c", prog]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = actorless_marks(&r);
    assert!(!m.iter().any(|x| x.starts_with("call execve")), "{m:#?}");
    assert!(m.contains(&"call exit fd=3 path=f".to_string()), "{m:#?}");
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A shell's redirection: sh opens the file, moves it to fd 1, forks a
/// child (vfork) that writes and exits, and restores its own fd 1 (dup2 onto
/// it: the last close). The fork is marked with the fd it copies, so
/// the child's exit is a close that does not release.
#[test]
fn a_shell_redirection_conforms() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record a shell redirection") {
        return;
    }
    let d = scratch("shell");
    let r = record(
        &d,
        &[
            "sh",
            "-c",
            "head -c 16384 /dev/zero > {mnt}/f; head -c 8192 {mnt}/f > /dev/null",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = actorless_marks(&r);
    // sh spawns with vfork (CLONE_VM): the child shares its memory
    assert!(
        m.contains(&"call fork fd=1 path=f vm".to_string()),
        "{m:#?}"
    );
    assert!(
        m.iter()
            .any(|x| x.starts_with("call dup2 fd=1 path=f from=") && x.ends_with(" onto=1")),
        "{m:#?}"
    );
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn sigterm_kills_the_command_and_keeps_the_trace() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record under SIGTERM") {
        return;
    }
    let d = scratch("sigterm");
    // the command starts with no signal blocked (the recorder blocks
    // SIGINT, SIGTERM and SIGCHLD for itself)
    let r = record(&d, &["grep", "-qE", "^SigBlk:\\s+0+$", "/proc/self/status"]);
    assert_eq!(r.code, 0, "the command starts with signals blocked");
    std::fs::remove_file(&r.out).unwrap();
    // SIGTERM whenever it lands (the command never ends by itself)
    let r = record_with(
        &d,
        &[],
        &["sh", "-c", "echo x > f; exec sleep 60"],
        Some(When::Mounted(libc::SIGTERM)),
    );
    assert_eq!(r.code, 128 + libc::SIGTERM, "{}", r.stderr);
    calls(&r.trace());
    conform(&r);
    std::fs::remove_file(&r.out).unwrap();
    // SIGTERM while the command is busy on the mount (it always has a
    // next syscall stop)
    let prog = "import os
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
while True:
    os.pwrite(fd, b'A' * 4096, 0)
";
    let r = record_with(
        &d,
        &[],
        &[python().unwrap(), "-I", "-S", "-c", prog],
        Some(When::TraceHas(libc::SIGTERM, "call T")),
    );
    assert_eq!(r.code, 128 + libc::SIGTERM, "{}", r.stderr);
    let ev = &r.trace();
    calls(ev);
    requests_inside_calls(ev);
    conform(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record bad input") {
        return;
    }
    let d = scratch("bad");
    let one_line = |r: &Rec, what: &str| {
        assert_eq!(r.code, 2, "{what}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{what}: {}", r.stderr);
        assert!(r.stderr.starts_with("wbspec: record: "), "{}", r.stderr);
        assert!(r.text.is_none(), "{what}: a trace was written");
    };
    // no command; a command that does not exist (after the mount)
    one_line(&record(&d, &[]), "no command");
    let r = record(&d, &["/nonexistent/prog"]);
    one_line(&r, "missing program");
    assert!(r.stderr.contains("/nonexistent/prog"), "{}", r.stderr);
    // a mount that fails: a server that exits at once
    let r = record_with(
        &d,
        &[("WBSPEC_FUSE_RECORDER", "/bin/false")],
        &["true"],
        None,
    );
    one_line(&r, "a failed mount");
    // OUT exists: refused before anything runs, and left alone
    std::fs::write(d.join("t.jsonl"), "mine").unwrap();
    let r = record(&d, &["true"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("exists"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(d.join("t.jsonl")).unwrap(), "mine");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_process_sharing_or_unsharing_its_fd_table_is_not_modelled() {
    // fds are one table per process in conform's reading: a process
    // made with CLONE_FILES (no CLONE_THREAD) shares its parent's
    // table, so its exit (put_files_struct: not the last reference)
    // closes nothing; a thread's unshare(CLONE_FILES) gives it a copy,
    // so its close flushes without releasing. Both read as closes of
    // the one table (a false VIOLATION; a "close release" where the
    // kernel only flushed)
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record python3 clone(CLONE_FILES), unshare") {
        return;
    }
    let shared = "import os, ctypes
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b'A' * 8192, 0)
pid = libc.syscall(56, 0x400 | 17, 0, 0, 0, 0)  # clone(CLONE_FILES|SIGCHLD)
if pid == 0:
    os.pwrite(fd, b'B' * 4096, 0)
    os._exit(0)
os.waitpid(pid, 0)
";
    let unshared = "import os, ctypes, threading
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open('f', os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b'A' * 8192, 0)
def t():
    assert libc.unshare(0x400) == 0  # CLONE_FILES: a copy of the table
    os.pwrite(fd, b'B' * 4096, 0)
    os.close(fd)
th = threading.Thread(target=t)
th.start()
th.join()
";
    for (name, prog, mark) in [
        ("clone-files", shared, "call clone fd=3 path=f files=shared"),
        (
            "unshare-files",
            unshared,
            "call unshare fd=3 path=f files=copied",
        ),
    ] {
        let d = scratch(name);
        let r = record(&d, &[python().unwrap(), "-I", "-S", "-c", prog]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let m = actorless_marks(&r);
        assert!(m.contains(&mark.to_string()), "{m:#?}");
        let (code, out) = conform(&r);
        assert_eq!(code, 3, "{out}");
        assert!(out.contains("not-modelled"), "{out}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}

/// Every thread is marked, and the note before CMD says so: a Python
/// thread that maps the file and stores to it is a `thread` mark's new
/// tid, so conform counts one thread for the mapping's process (at most
/// one of the environment's accesses in flight at once,
/// docs/conformance.md) and the trace conforms.
#[test]
fn a_thread_is_marked_and_its_mapping_conforms() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record a thread's mapping") {
        return;
    }
    let d = scratch("thread-map");
    let script = [
        "import mmap, os, threading",
        "def w():",
        "    fd = os.open('{mnt}/f', os.O_RDWR | os.O_CREAT, 0o644)",
        "    os.ftruncate(fd, 8192)",
        "    m = mmap.mmap(fd, 8192)",
        "    m[0:4096] = b'A' * 4096",
        "    m.close()",
        "    os.close(fd)",
        "t = threading.Thread(target=w)",
        "t.start()",
        "t.join()",
    ]
    .join("\n");
    let r = record(&d, &[python().unwrap(), "-I", "-S", "-c", &script]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ev = r.trace();
    assert!(
        ev.iter()
            .any(|e| e.ev == "mark"
                && e.text.as_deref() == Some(wbspec_harness::record::THREADS_NOTE)),
        "no note that threads are marked"
    );
    // the thread's tid is the actor of the mmap
    let made: Vec<String> = ev
        .iter()
        .filter(|e| e.kind.as_deref() == Some("ret") && e.syscall.as_deref() == Some("thread"))
        .filter_map(|e| e.ret.map(|t| format!("T{t}")))
        .collect();
    let mapper = ev
        .iter()
        .find(|e| e.kind.as_deref() == Some("call") && e.syscall.as_deref() == Some("mmap"))
        .and_then(|e| e.actor.clone())
        .expect("an mmap mark");
    assert!(made.contains(&mapper), "{mapper} not among {made:?}");
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// An mmap with MAP_POPULATE faults its pages in before it returns
/// (an attack on 3 Dec 2026: READ(p0-1) between its call and ret), when
/// the environment's loads, which begin at the return, cannot explain
/// it: the mark says `populate`, and conform refuses the trace.
#[test]
fn a_populating_mmap_is_not_modelled() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record a populating mmap") {
        return;
    }
    let d = scratch("populate");
    let prog = [
        "import mmap, os",
        "fd = os.open('f', os.O_RDWR | os.O_CREAT, 0o644)",
        "os.ftruncate(fd, 8192)",
        "os.close(fd)",
        "fd = os.open('f', os.O_RDWR)",
        "m = mmap.mmap(fd, 8192, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE)",
        "m.close()",
        "os.close(fd)",
    ]
    .join("\n");
    let r = record(&d, &[python().unwrap(), "-I", "-S", "-c", &prog]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = marks(&r.trace());
    assert!(
        m.iter()
            .any(|x| x.contains(" mmap ") && x.contains(" shared populate ")),
        "{m:#?}"
    );
    let (code, out) = conform(&r);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("MAP_POPULATE"), "{out}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// The mount's readahead as the program left it is in the trace (`bdi
/// read_ahead_kb=N`, written after CMD ends): a program that turns
/// readahead off reads page by page, which the model's 128 KiB window
/// cannot (an attack on 3 Dec 2026), so conform refuses the trace.
#[test]
fn a_mount_without_readahead_is_not_modelled() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record with read_ahead_kb 0") {
        return;
    }
    let d = scratch("ra0");
    let r = record(
        &d,
        &[
            "sh",
            "-c",
            "head -c 8192 /dev/zero > f; echo 0 > /sys/class/bdi/$(mountpoint -d .)/read_ahead_kb",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let note = |ev: &[Event]| -> Vec<String> {
        ev.iter()
            .filter_map(|e| e.text.clone())
            .filter(|t| t.starts_with(wbspec_harness::record::READ_AHEAD_NOTE))
            .collect()
    };
    assert_eq!(note(&r.trace()), ["bdi read_ahead_kb=0"]);
    let (code, out) = conform(&r);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("read_ahead_kb was 0"), "{out}");
    std::fs::remove_dir_all(&d).unwrap();
    // a program that leaves it alone: 128, and modelled
    let d = scratch("ra128");
    let r = record(&d, &["sh", "-c", "head -c 8192 /dev/zero > f"]);
    assert_eq!(note(&r.trace()), ["bdi read_ahead_kb=128"]);
    conforms(&r);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Another process's memory read through /proc/PID/mem faults its pages
/// in the reader (access_remote_vm): an attack on 3 Dec 2026 split a
/// read-around that way. The open is marked `thread untraced=proc_mem`,
/// which leaves conform no thread bound.
#[test]
fn an_open_of_proc_mem_is_marked() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run("record an open of /proc/self/mem") {
        return;
    }
    let d = scratch("procmem");
    let r = record(
        &d,
        &[
            python().unwrap(),
            "-I",
            "-S",
            "-c",
            "open('/proc/self/mem', 'rb').close()",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = actorless_marks(&r);
    assert!(
        m.contains(&"call thread untraced=proc_mem".to_string()),
        "{m:#?}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}
