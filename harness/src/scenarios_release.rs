//! Which file handle a writeback WRITE carries, and when RELEASE goes
//! (issue 10). fuse_writepages takes the fuse_file of its WRITEs from
//! fuse_write_file_get: the first entry of fi->write_files, where
//! fuse_link_write_file adds every writable open at the head (the most
//! recent open first) and fuse_prepare_release (at fuse_release) removes
//! it. Each WRITE holds a reference on that fuse_file; RELEASE is sent by
//! the last fuse_file_put. A MAP_SHARED mapping holds the struct file, so
//! close(2) of its fd sends FLUSH but no RELEASE until munmap.
//! Expectations are those of kernel state T'' (6.18.y).
use crate::ctx::Ctx;
use crate::fail::Res;
use crate::scenario_kit::{briefs, fail, mmap, sc, store, unmap, wrap, Scenario, PG};
use crate::server::ServerConfig;
use crate::trace_query::Tr;

fn dflt(_: &mut ServerConfig) {}

pub fn all() -> Vec<Scenario> {
    vec![sc!("k_release_fh", "writeback_cache, two opens: close(fd1)'s writeback WRITE carries fd2's fh (the newest writable open); fd1 mmapped, closed (FLUSH, no RELEASE); after fd2's close a store + msync sends a WRITE with the closed fd1's fh; RELEASE of fd1 only at munmap, after that WRITE's reply", dflt, |c| wrap(c, k_release_fh))]
}

/// The fh in the CREATE or OPEN reply of the `n`th open (0-based).
fn open_fh(t: &Tr, n: usize) -> Option<u64> {
    t.0.iter()
        .filter(|e| e.ev == "reply" && matches!(e.op.as_deref(), Some("CREATE") | Some("OPEN")))
        .nth(n)
        .and_then(|e| e.result.as_ref())
        .and_then(|r| r["fh"].as_u64())
}

fn k_release_fh(ctx: &mut Ctx) -> Res {
    let fd1 = ctx.create("T0", "f")?;
    let fd2 = ctx.open("T0", "f", libc::O_RDWR)?;
    ctx.pwrite("T0", fd1, 0, "A")?;
    let (addr, r) = mmap(ctx, fd1, PG as usize)?;
    if r.ret < 0 {
        return Err(fail("mmap succeeds", format!("errno {}", r.errno)));
    }
    ctx.close("T0", fd1)?;
    let t = ctx.trace()?;
    let (h1, h2) = (open_fh(&t, 0), open_fh(&t, 1));
    ctx.expect("two distinct fhs", h1.is_some() && h1 != h2, || {
        format!("{h1:?} {h2:?}")
    })?;
    let ws = t.cache_writes();
    ctx.expect(
        "close(fd1)'s WRITE of A carries fd2's fh (fuse_write_file_get: the newest writable open)",
        ws.len() == 1 && ws[0].page_tags.as_deref() == Some("A") && ws[0].fh == h2,
        || briefs(&ws),
    )?;
    let fl = t.reqs("FLUSH");
    ctx.expect(
        "FLUSH with fd1's fh, no RELEASE: the mapping holds the file",
        fl.len() == 1 && fl[0].fh == h1 && t.reqs("RELEASE").is_empty(),
        || briefs(&[fl, t.reqs("RELEASE")].concat()),
    )?;
    ctx.close("T0", fd2)?;
    ctx.wait_count("RELEASE", 1, 2000)?;
    store(ctx, addr, 0, b'M')?;
    ctx.sys_ok("T0", "msync", &format!("MS_SYNC off=0 len={PG}"), || {
        crate::sys::msync(addr, PG as usize, true)
    })?;
    unmap(ctx, addr, PG as usize)?;
    ctx.wait_count("RELEASE", 2, 2000)?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    let rel = t.reqs("RELEASE");
    let w = ws.last().copied();
    ctx.expect(
        "msync's WRITE of M carries the closed fd1's fh (the only open left)",
        ws.len() == 2 && w.is_some_and(|w| w.page_tags.as_deref() == Some("M") && w.fh == h1),
        || briefs(&ws),
    )?;
    ctx.expect(
        "RELEASE of fd2 at its close, RELEASE of fd1 after munmap and after the WRITE of M's reply",
        rel.len() == 2
            && rel[0].fh == h2
            && rel[1].fh == h1
            && w.is_some_and(|w| rel[1].seq > t.reply_seq(w).unwrap_or(u64::MAX))
            && rel[1].seq > t.mark_seq("ret", "T0", "msync").unwrap_or(u64::MAX),
        || briefs(&rel),
    )?;
    ctx.expect_file("f", PG, "M")
}
