//! Two files on one connection (issue 21): each inode's writeback and
//! fsync are its own. fuse_fsync waits for the writeback of its own
//! inode only (file_write_and_wait_range on its mapping, fuse_sync_writes
//! on its fi->writectr), so with the other file's writeback WRITE held at
//! the server, an fsync of the first file completes. `conform` checks the
//! trace file by file (docs/conformance.md, "Several files").
//! Expectations are those of kernel state T'' (6.18.y).
use crate::ctx::Ctx;
use crate::fail::Res;
use crate::scenario_kit::{briefs, sc, wrap, Scenario};
use crate::server::ServerConfig;

fn dflt(_: &mut ServerConfig) {}

pub fn all() -> Vec<Scenario> {
    vec![sc!("p_two_files", "two files: g's writeback WRITE held; f written and fsynced meanwhile (its WRITE and FSYNC answered, fsync returns); after the release g's fsync; the trace is checked per file", dflt, |c| wrap(c, p_two_files))]
}

fn p_two_files(ctx: &mut Ctx) -> Res {
    let f = ctx.create("T0", "f")?;
    let g = ctx.create("T0", "g")?;
    // armed before g's write: a background writeback WRITE of g sent at
    // the end of the write is then the held one (as dirty_and_hold)
    ctx.ctl("hold WRITE n=1 cache=1")?;
    ctx.pwrite("T0", g, 0, "B")?;
    ctx.sfr("T0", g)?;
    ctx.wait_held(1, 2000)?;
    ctx.pwrite("T0", f, 0, "A")?;
    ctx.fsync("T0", f)?;
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    let held = ws.iter().find(|w| w.page_tags.as_deref() == Some("B"));
    let fw = ws.iter().find(|w| w.page_tags.as_deref() == Some("A"));
    ctx.expect(
        "g's WRITE still held when f's fsync returned; f's WRITE answered, on another nodeid",
        held.is_some_and(|h| t.reply_seq(h).is_none())
            && fw.is_some_and(|w| t.reply_seq(w).is_some())
            && held.zip(fw).is_some_and(|(h, w)| h.nodeid != w.nodeid),
        || briefs(&ws),
    )?;
    ctx.ctl("release all")?;
    ctx.fsync("T0", g)?;
    ctx.expect_file("f", 4096, "A")?;
    ctx.expect_file("g", 4096, "B")
}
