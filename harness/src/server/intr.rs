//! FUSE_INTERRUPT in the trace. fuser 0.18 answers FUSE_INTERRUPT itself
//! (`-ENOSYS`, request.rs: "TODO: handle FUSE_INTERRUPT"), so it never
//! reaches the filesystem; but its dispatch logs every request it reads
//! (`debug!("{} thread={}", request, ...)`, target `fuser::request`)
//! before answering it, on the dispatch thread. This logger reads that
//! line for INTERRUPT requests only and records them as a `req` (op
//! INTERRUPT, `interrupts` = the unique of the interrupted request) and
//! the `reply` fuser then writes (-ENOSYS: the kernel sets
//! fc->no_interrupt, fs/fuse/dev.c fuse_dev_do_write, so a connection
//! sends at most one INTERRUPT). The line's form is fuser 0.18's
//! (ll/request.rs `Display for AnyRequest`: `FUSE(<unique>) ino <nodeid>
//! INTERRUPT unique RequestId(<unique>)`), pinned by Cargo.lock and by
//! [`parse`]'s test.
use std::sync::Arc;
use std::time::Instant;

use super::record::errno_result;
use super::shared::Core;
use crate::trace::Event;

struct IntrLog {
    core: Arc<Core>,
}

/// (its own unique, its nodeid, the interrupted request's unique) of
/// an INTERRUPT request line of fuser's dispatch log.
pub(super) fn parse(line: &str) -> Option<(u64, u64, u64)> {
    let rest = line.strip_prefix("FUSE(")?;
    let (u, rest) = rest.split_once(')')?;
    let rest = rest.trim_start().strip_prefix("ino ")?;
    let (ino, rest) = rest.split_once(' ')?;
    let rest = rest.strip_prefix("INTERRUPT unique RequestId(")?;
    let (target, _) = rest.split_once(')')?;
    let ino = u64::from_str_radix(ino.trim_start_matches("0x"), 16).ok()?;
    Some((u.trim().parse().ok()?, ino, target.parse().ok()?))
}

impl log::Log for IntrLog {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() == log::Level::Debug && m.target() == "fuser::request"
    }

    fn log(&self, r: &log::Record) {
        if !self.enabled(r.metadata()) {
            return;
        }
        let line = r.args().to_string();
        let Some((unique, nodeid, target)) = parse(&line) else {
            return;
        };
        let mut e = Event::new("req");
        e.unique = Some(unique);
        e.op = Some("INTERRUPT".into());
        e.nodeid = Some(nodeid);
        // fuse_read_interrupt builds the header with no pid or uid
        e.pid = Some(0);
        e.uid = Some(0);
        e.interrupts = Some(target);
        let t0 = Instant::now();
        self.core.recv(e, true);
        // fuser's answer, written right after this line returns
        self.core.log_reply(
            unique,
            "INTERRUPT",
            errno_result(libc::ENOSYS, "ENOSYS"),
            t0,
        );
    }

    fn flush(&self) {}
}

/// Install the logger (once per process: the server's).
pub(super) fn install(core: Arc<Core>) {
    let l: &'static IntrLog = Box::leak(Box::new(IntrLog { core }));
    if log::set_logger(l).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_fusers_interrupt_line() {
        assert_eq!(
            super::parse("FUSE( 13) ino 0x0000000000000000 INTERRUPT unique RequestId(12)"),
            Some((13, 0, 12))
        );
        assert_eq!(
            super::parse("FUSE( 12) ino 0x0000000000000002 WRITE fh FileHandle(1)"),
            None
        );
    }
}
