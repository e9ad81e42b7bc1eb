//! Control protocol between the scenario runner and the recording server.
//!
//! One command per line over a Unix stream socket; one reply line per command,
//! starting with `ok` or `err` (or `timeout` for the wait commands).
//!
//! | command | reply |
//! |---|---|
//! | `ping` | `ok` |
//! | `hold OP [n=N\|inf] [cache=0\|1] [size=0\|1]` | `ok` (adds a rule; n defaults to 1; `cache` only for WRITE: its FUSE_WRITE_CACHE; `size` only for SETATTR: it sets the size) |
//! | `unhold OP\|all` | `ok` (removes rules) |
//! | `release all\|first\|<unique>` | `ok <n released>` |
//! | `wait_held N MS` | `ok <held>` or `timeout <held>` |
//! | `wait_count OP N MS` | `ok <count>` or `timeout <count>` |
//! | `count OP` | `ok <count>` (requests of OP read so far) |
//! | `stall OP MS` | `ok` (the next OP handler sleeps MS ms on the dispatch thread) |
//! | `mark TEXT` | `ok <seq>` |
//! | `dump` | `ok <json>`: server-side files with size and page tags |
//! | `inflight` | `ok <json>`: server-side in-flight requests |
//! | `held` | `ok <json>`: parked replies |
//! | `fail OP [n=N] [errno=EIO\|EINTR]` | `ok` (the next N replies to OP are -EIO, or -EINTR: a server that honours a FUSE_INTERRUPT; the request is not applied) |
//! | `quit` | `ok` (a server that lingers after its session ended, `--linger`, exits now; otherwise it exits when its session ends) |
//! | `truncate NAME SIZE` | `ok` (another client truncates the server's file) |
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Upper bound for any server-side wait, so a command can never block forever.
pub const MAX_WAIT_MS: u64 = 30_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseWhich {
    All,
    First,
    Unique(u64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Ping,
    Hold {
        op: String,
        /// None = unlimited.
        n: Option<u64>,
        /// WRITE only: Some(true) = only FUSE_WRITE_CACHE writes, Some(false) = only others.
        cache: Option<bool>,
    },
    Unhold(Option<String>),
    Release(ReleaseWhich),
    WaitHeld {
        n: usize,
        ms: u64,
    },
    WaitCount {
        op: String,
        n: u64,
        ms: u64,
    },
    Count(String),
    Stall {
        op: String,
        ms: u64,
    },
    Mark(String),
    Dump,
    Inflight,
    Held,
    Fail {
        op: String,
        n: u64,
        /// EIO or EINTR.
        errno: i32,
    },
    Quit,
    Truncate {
        name: String,
        size: u64,
    },
    /// Another client's write of `tags` (one letter per 4 KiB page) from
    /// page `first` into file `name` on the server, then
    /// FUSE_NOTIFY_INVAL_INODE(off, len) for it, on a thread of its own
    /// logged as `actor`'s `notify_inval` call (server/notify.rs).
    NotifyInval {
        actor: String,
        name: String,
        off: i64,
        len: i64,
        first: u64,
        tags: String,
    },
    /// Wait until `n` notifications returned (their `ret` is logged).
    WaitNotified {
        n: u64,
        ms: u64,
    },
}

fn op_name(s: &str) -> Result<String, String> {
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("bad op name {s:?}"));
    }
    Ok(s.to_ascii_uppercase())
}

fn num(s: &str, what: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|_| format!("bad {what} {s:?}"))
}

fn ms(s: &str) -> Result<u64, String> {
    let v = num(s, "milliseconds")?;
    if v > MAX_WAIT_MS {
        return Err(format!("wait {v} ms exceeds bound {MAX_WAIT_MS} ms"));
    }
    Ok(v)
}

impl Command {
    pub fn parse(line: &str) -> Result<Command, String> {
        let line = line.trim();
        let (word, rest) = match line.split_once(char::is_whitespace) {
            Some((w, r)) => (w, r.trim()),
            None => (line, ""),
        };
        let a: Vec<&str> = rest.split_whitespace().collect();
        let want = |n: usize| -> Result<(), String> {
            if a.len() != n {
                Err(format!("{word}: expected {n} argument(s), got {}", a.len()))
            } else {
                Ok(())
            }
        };
        match word {
            "ping" => {
                want(0)?;
                Ok(Command::Ping)
            }
            "hold" => {
                if a.is_empty() || a.len() > 3 {
                    return Err("usage: hold OP [n=N|inf] [cache=0|1] [size=0|1]".into());
                }
                let op = op_name(a[0])?;
                let mut n = Some(1);
                let mut cache = None;
                for kv in &a[1..] {
                    match kv.split_once('=') {
                        Some(("n", "inf")) => n = None,
                        Some(("n", v)) => n = Some(num(v, "count")?),
                        // The rule's one request flag: a WRITE's
                        // FUSE_WRITE_CACHE, a SETATTR's FATTR_SIZE (the
                        // server passes each as the flag; other requests
                        // have none, so a flag there would be ignored).
                        Some((f @ ("cache" | "size"), v @ ("0" | "1")))
                            if (f, op.as_str()) == ("cache", "WRITE")
                                || (f, op.as_str()) == ("size", "SETATTR") =>
                        {
                            if cache.is_some() {
                                return Err(format!("hold: {f}= is given twice"));
                            }
                            cache = Some(v == "1")
                        }
                        _ => return Err(format!("hold: bad option {kv:?}")),
                    }
                }
                Ok(Command::Hold { op, n, cache })
            }
            "unhold" => {
                want(1)?;
                if a[0] == "all" {
                    Ok(Command::Unhold(None))
                } else {
                    Ok(Command::Unhold(Some(op_name(a[0])?)))
                }
            }
            "release" => {
                want(1)?;
                Ok(Command::Release(match a[0] {
                    "all" => ReleaseWhich::All,
                    "first" => ReleaseWhich::First,
                    u => ReleaseWhich::Unique(num(u, "unique")?),
                }))
            }
            "wait_held" => {
                want(2)?;
                Ok(Command::WaitHeld {
                    n: num(a[0], "count")? as usize,
                    ms: ms(a[1])?,
                })
            }
            "wait_count" => {
                want(3)?;
                Ok(Command::WaitCount {
                    op: op_name(a[0])?,
                    n: num(a[1], "count")?,
                    ms: ms(a[2])?,
                })
            }
            "count" => {
                want(1)?;
                Ok(Command::Count(op_name(a[0])?))
            }
            "stall" => {
                want(2)?;
                Ok(Command::Stall {
                    op: op_name(a[0])?,
                    ms: ms(a[1])?,
                })
            }
            "mark" => {
                if rest.is_empty() {
                    return Err("mark: empty text".into());
                }
                Ok(Command::Mark(rest.to_string()))
            }
            "dump" => {
                want(0)?;
                Ok(Command::Dump)
            }
            "fail" => {
                if a.is_empty() || a.len() > 3 {
                    return Err("usage: fail OP [n=N] [errno=EIO|EINTR]".into());
                }
                let op = op_name(a[0])?;
                let (mut n, mut errno) = (1, libc::EIO);
                for kv in &a[1..] {
                    match kv.split_once('=') {
                        Some(("n", v)) => n = num(v, "count")?,
                        Some(("errno", "EIO")) => errno = libc::EIO,
                        Some(("errno", "EINTR")) => errno = libc::EINTR,
                        _ => return Err(format!("fail: bad option {kv:?}")),
                    }
                }
                Ok(Command::Fail { op, n, errno })
            }
            "truncate" => {
                want(2)?;
                if a[0].contains('/') {
                    return Err(format!("truncate: bad name {:?}", a[0]));
                }
                Ok(Command::Truncate {
                    name: a[0].to_string(),
                    size: num(a[1], "size")?,
                })
            }
            "notify_inval" => {
                if a.len() != 4 && a.len() != 6 {
                    return Err("usage: notify_inval ACTOR NAME OFF LEN [FIRST TAGS]".into());
                }
                if a[1].contains('/') {
                    return Err(format!("notify_inval: bad name {:?}", a[1]));
                }
                let int =
                    |s: &str, what: &str| s.parse::<i64>().map_err(|_| format!("bad {what} {s:?}"));
                let (first, tags) = match a.get(4..6) {
                    Some([f, t]) => {
                        if !t.bytes().all(|c| c.is_ascii_alphabetic() || c == b'.') {
                            return Err(format!("notify_inval: bad page tags {t:?}"));
                        }
                        (num(f, "first page")?, t.to_string())
                    }
                    _ => (0, String::new()),
                };
                Ok(Command::NotifyInval {
                    actor: a[0].to_string(),
                    name: a[1].to_string(),
                    off: int(a[2], "offset")?,
                    len: int(a[3], "length")?,
                    first,
                    tags,
                })
            }
            "wait_notified" => {
                want(2)?;
                Ok(Command::WaitNotified {
                    n: num(a[0], "count")?,
                    ms: ms(a[1])?,
                })
            }
            "inflight" => {
                want(0)?;
                Ok(Command::Inflight)
            }
            "held" => {
                want(0)?;
                Ok(Command::Held)
            }
            "quit" => {
                want(0)?;
                Ok(Command::Quit)
            }
            "" => Err("empty command".into()),
            w => Err(format!("unknown command {w:?}")),
        }
    }

    /// Longest time the server may take to answer this command.
    pub fn server_bound(&self) -> Duration {
        match self {
            Command::WaitHeld { ms, .. }
            | Command::WaitCount { ms, .. }
            | Command::WaitNotified { ms, .. } => Duration::from_millis(*ms),
            // (the server waits up to 5 s for the notify thread to start)
            Command::NotifyInval { .. } => Duration::from_secs(5),
            _ => Duration::ZERO,
        }
    }
}

/// Client side of the control socket. Every operation has a timeout.
pub struct CtlClient {
    path: PathBuf,
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

/// Extra slack on top of the server-side bound of a command.
const CLIENT_SLACK: Duration = Duration::from_millis(3000);

impl CtlClient {
    pub fn connect(path: &Path) -> std::io::Result<CtlClient> {
        let s = UnixStream::connect(path)?;
        s.set_write_timeout(Some(CLIENT_SLACK))?;
        s.set_read_timeout(Some(CLIENT_SLACK))?;
        Ok(CtlClient {
            path: path.to_path_buf(),
            reader: BufReader::new(s.try_clone()?),
            writer: s,
        })
    }

    /// A fresh connection to the same server (one per workload thread).
    pub fn reconnect(&self) -> std::io::Result<CtlClient> {
        CtlClient::connect(&self.path)
    }

    /// Send one command line and return the reply line (without newline).
    pub fn cmd(&mut self, line: &str) -> Result<String, String> {
        let parsed = Command::parse(line)?;
        let bound = parsed.server_bound() + CLIENT_SLACK;
        self.reader
            .get_ref()
            .set_read_timeout(Some(bound))
            .map_err(|e| e.to_string())?;
        let mut l = line.trim().replace('\n', " ");
        l.push('\n');
        self.writer
            .write_all(l.as_bytes())
            .map_err(|e| format!("ctl write {line:?}: {e}"))?;
        let mut reply = String::new();
        match self.reader.read_line(&mut reply) {
            Ok(0) => Err(format!("ctl {line:?}: server closed the connection")),
            Ok(_) => Ok(reply.trim_end().to_string()),
            Err(e) => Err(format!("ctl {line:?}: {e}")),
        }
    }

    /// Like [`cmd`](Self::cmd) but fails unless the reply starts with `ok`;
    /// returns the rest of the reply.
    pub fn ok(&mut self, line: &str) -> Result<String, String> {
        let r = self.cmd(line)?;
        match r.strip_prefix("ok") {
            Some(rest) => Ok(rest.trim().to_string()),
            None => Err(format!("ctl {line:?} -> {r:?}")),
        }
    }

    /// `ok <number>` / `timeout <number>` -> (ok?, number)
    pub fn counted(&mut self, line: &str) -> Result<(bool, u64), String> {
        let r = self.cmd(line)?;
        let (ok, rest) = if let Some(rest) = r.strip_prefix("ok") {
            (true, rest)
        } else if let Some(rest) = r.strip_prefix("timeout") {
            (false, rest)
        } else {
            return Err(format!("ctl {line:?} -> {r:?}"));
        };
        let n = rest
            .trim()
            .parse()
            .map_err(|_| format!("ctl {line:?} -> {r:?}"))?;
        Ok((ok, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_hold() {
        assert_eq!(
            Command::parse("hold WRITE").unwrap(),
            Command::Hold {
                op: "WRITE".into(),
                n: Some(1),
                cache: None
            }
        );
        assert_eq!(
            Command::parse("hold write n=inf cache=1").unwrap(),
            Command::Hold {
                op: "WRITE".into(),
                n: None,
                cache: Some(true)
            }
        );
        assert_eq!(
            Command::parse("hold SETATTR n=3 size=0").unwrap(),
            Command::Hold {
                op: "SETATTR".into(),
                n: Some(3),
                cache: Some(false)
            }
        );
        // a flag of another request, or one given twice, is refused (it
        // was taken: `cache=1` on SETATTR held truncates, `cache=` on READ
        // was ignored, the last of two contradicting flags won)
        for bad in [
            "hold SETATTR cache=1",
            "hold SETATTR size=1 size=0",
            "hold WRITE cache=1 cache=0",
            "hold READ cache=1",
            "hold FLUSH size=1",
        ] {
            assert!(Command::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Command::parse("hold setattr size=1").unwrap(),
            Command::Hold {
                op: "SETATTR".into(),
                n: Some(1),
                cache: Some(true)
            }
        );
        assert!(Command::parse("hold WRITE size=1").is_err());
        assert!(Command::parse("hold SETATTR size=2").is_err());
        assert!(Command::parse("hold").is_err());
        assert!(Command::parse("hold WRITE n=x").is_err());
        assert!(Command::parse("hold WRITE cache=2").is_err());
        assert!(Command::parse("hold WR/TE").is_err());
    }

    #[test]
    fn parse_notify_inval() {
        assert_eq!(
            Command::parse("notify_inval N1 f 0 0 0 N").unwrap(),
            Command::NotifyInval {
                actor: "N1".into(),
                name: "f".into(),
                off: 0,
                len: 0,
                first: 0,
                tags: "N".into()
            }
        );
        // attributes only (offset < 0), no change of the server's file
        assert_eq!(
            Command::parse("notify_inval N1 f -1 0").unwrap(),
            Command::NotifyInval {
                actor: "N1".into(),
                name: "f".into(),
                off: -1,
                len: 0,
                first: 0,
                tags: String::new()
            }
        );
        for bad in [
            "notify_inval N1 f 0",
            "notify_inval N1 d/f 0 0",
            "notify_inval N1 f x 0",
            "notify_inval N1 f 0 0 0",
            "notify_inval N1 f 0 0 0 N1",
            "notify_inval N1 f 0 0 -1 N",
        ] {
            assert!(Command::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Command::parse("wait_notified 1 3000").unwrap(),
            Command::WaitNotified { n: 1, ms: 3000 }
        );
        assert!(Command::parse("wait_notified 1 999999").is_err());
    }

    #[test]
    fn parse_release_and_waits() {
        assert_eq!(
            Command::parse("release all").unwrap(),
            Command::Release(ReleaseWhich::All)
        );
        assert_eq!(
            Command::parse("release first").unwrap(),
            Command::Release(ReleaseWhich::First)
        );
        assert_eq!(
            Command::parse("release 42").unwrap(),
            Command::Release(ReleaseWhich::Unique(42))
        );
        assert!(Command::parse("release").is_err());
        assert_eq!(
            Command::parse("wait_held 2 500").unwrap(),
            Command::WaitHeld { n: 2, ms: 500 }
        );
        assert_eq!(
            Command::parse("wait_count WRITE 3 1000").unwrap(),
            Command::WaitCount {
                op: "WRITE".into(),
                n: 3,
                ms: 1000
            }
        );
        // Waits are bounded.
        assert!(Command::parse("wait_held 1 999999").is_err());
        assert!(Command::parse("stall LOOKUP 99999999").is_err());
        assert_eq!(
            Command::parse("wait_held 1 500").unwrap().server_bound(),
            Duration::from_millis(500)
        );
    }

    #[test]
    fn parse_misc() {
        assert_eq!(
            Command::parse("mark call T1 ftruncate 4096").unwrap(),
            Command::Mark("call T1 ftruncate 4096".into())
        );
        assert!(Command::parse("mark").is_err());
        assert_eq!(
            Command::parse("count fsync").unwrap(),
            Command::Count("FSYNC".into())
        );
        assert_eq!(
            Command::parse("stall LOOKUP 800").unwrap(),
            Command::Stall {
                op: "LOOKUP".into(),
                ms: 800
            }
        );
        assert_eq!(Command::parse(" dump ").unwrap(), Command::Dump);
        assert_eq!(Command::parse("inflight").unwrap(), Command::Inflight);
        assert_eq!(Command::parse("unhold all").unwrap(), Command::Unhold(None));
        assert!(Command::parse("dump x").is_err());
        assert!(Command::parse("").is_err());
        assert!(Command::parse("frobnicate").is_err());
    }
}
