//! Scenarios of fuse_perform_write's max_write loop (issue 10): a
//! write-through pwrite larger than max_write goes as one synchronous
//! WRITE per 1 MiB chunk under the one inode_lock; the second chunk's
//! WRITE is held to force what the model says may run between two chunks
//! (a buffered read), or failed to end the loop early. Expectations are
//! those of kernel state T'' (6.18.y); conventions as in scenarios.rs.
use crate::ctx::{Ctx, Pending};
use crate::fail::{Fail, Res};
use crate::scenario_kit::{briefs, sc, wrap, Scenario, PG, SETTLE_MS};
use crate::server::ServerConfig;
use crate::sys::{self, AlignedBuf};

/// Not modelled when the machine evicted the first chunk's folios before
/// the scenario's last buffered pread (a READ of them then cuts the
/// chunk into positions of different sizes).
const EVICTED_SPLIT: &str = "the kernel's write-through WRITEs are";
const EVICTED_SPLIT_WHY: &str = "the model chunks a write-through write by a count of positions (max_write, max_pages): READs that re-read an evicted chunk split it into positions of different sizes, which no position count chunks as the kernel's 1 MiB does";

fn nowbc(c: &mut ServerConfig) {
    c.writeback_cache = false;
}

/// 1 MiB: the recording server's max_write, one chunk.
const CHUNK: u64 = 1 << 20;

pub fn all() -> Vec<Scenario> {
    vec![
        sc!("a_nowbc_gap", "no writeback_cache: the second 1 MiB WRITE of a 2 MiB pwrite held; a buffered pread of the first chunk's range returns 0 (i_size is extended only after the loop); after the reply the pwrite returns 2 MiB and the pread returns the first chunk from the cache", nowbc, |c| wrap(c, a_nowbc_gap))
            .outside_if_evicted(EVICTED_SPLIT, EVICTED_SPLIT_WHY),
        sc!("a_nowbc_fail2", "no writeback_cache: the second 1 MiB WRITE of a 2 MiB pwrite fails (-EIO): the loop ends, pwrite returns 1 MiB, i_size and the server end after the first chunk", nowbc, |c| wrap(c, a_nowbc_fail2))
            .outside_if_evicted(EVICTED_SPLIT, EVICTED_SPLIT_WHY),
    ]
}

/// "A" at page 0 and "B" at page 1 (one WRITE each), then T2's 2 MiB
/// pwrite of "F" at page 2 on its own thread (its own actor: the model
/// learns each actor's pid) with every write-through WRITE held; the
/// first chunk is released, the second is held.
fn second_chunk_held(ctx: &mut Ctx) -> Result<(i32, Pending), Fail> {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "A")?;
    ctx.pwrite("T0", fd, PG, "B")?;
    ctx.ctl("hold WRITE n=inf cache=0")?;
    let tags = "F".repeat((2 * CHUNK / PG) as usize);
    let buf = AlignedBuf::pages(&tags);
    let mut w = ctx.spawn(
        "T2",
        "pwrite",
        &format!("fd={fd} off={} {tags}", 2 * PG),
        move || sys::pwrite(fd, buf.bytes(), 2 * PG),
    )?;
    ctx.wait_held(1, 2000)?;
    ctx.ctl("release first")?;
    ctx.wait_held(1, 2000)?;
    ctx.ctl("unhold WRITE")?;
    ctx.sleep_ms(SETTLE_MS);
    ctx.expect("the pwrite waits for its second WRITE", !w.done(), || {
        "returned".into()
    })?;
    let t = ctx.trace()?;
    let ws = t.plain_writes();
    ctx.expect(
        "two 1 MiB WRITEs so far: at page 2 (answered), at page 258 (held)",
        ws.len() == 4
            && ws[2].offset == Some(2 * PG)
            && ws[2].size == Some(CHUNK)
            && t.reply(ws[2]).is_some()
            && ws[3].offset == Some(2 * PG + CHUNK)
            && ws[3].size == Some(CHUNK)
            && t.reply(ws[3]).is_none(),
        || briefs(&ws),
    )?;
    Ok((fd, w))
}

fn a_nowbc_gap(ctx: &mut Ctx) -> Res {
    let (fd, mut w) = second_chunk_held(ctx)?;
    // between the chunks: the server has the first, i_size does not
    let mut r = ctx.spawn_pread("T1", fd, 2 * PG, CHUNK as usize)?;
    let (got, _) = r.join(3000)?;
    ctx.expect(
        "a pread of the first chunk's range returns 0 while the second WRITE is held (i_size = 8 KiB until fuse_write_update_attr)",
        got.ret == 0,
        || format!("returned {} errno={}", got.ret, got.errno),
    )?;
    ctx.ctl("release all")?;
    let (ret, _) = w.join(3000)?;
    ctx.expect(
        "the pwrite returns 2 MiB",
        ret.ret == 2 * CHUNK as i64,
        || format!("returned {} errno={}", ret.ret, ret.errno),
    )?;
    let data = ctx.pread("T1", fd, 2 * PG, CHUNK as usize)?;
    ctx.expect(
        "the pread after it returns the first chunk (from the cache)",
        data.len() == CHUNK as usize && data.iter().step_by(PG as usize).all(|b| *b == b'F'),
        || format!("{} bytes", data.len()),
    )?;
    ctx.expect_file(
        "f",
        2 * PG + 2 * CHUNK,
        &("AB".to_string() + &"F".repeat(512)),
    )?;
    ctx.close("T0", fd)
}

fn a_nowbc_fail2(ctx: &mut Ctx) -> Res {
    let (fd, mut w) = second_chunk_held(ctx)?;
    ctx.ctl("fail WRITE n=1")?;
    ctx.ctl("release all")?;
    let (ret, _) = w.join(3000)?;
    ctx.expect(
        "the pwrite returns the first chunk's 1 MiB (the failed chunk ends the loop)",
        ret.ret == CHUNK as i64,
        || format!("returned {} errno={}", ret.ret, ret.errno),
    )?;
    let data = ctx.pread("T1", fd, 2 * PG, 2 * CHUNK as usize)?;
    ctx.expect(
        "a pread of both chunks stops at i_size, the end written",
        data.len() == CHUNK as usize,
        || format!("{} bytes", data.len()),
    )?;
    let t = ctx.trace()?;
    let ws = t.plain_writes();
    ctx.expect("no WRITE after the failed one", ws.len() == 4, || {
        briefs(&ws)
    })?;
    ctx.expect_file("f", 2 * PG + CHUNK, &("AB".to_string() + &"F".repeat(256)))?;
    ctx.close("T0", fd)
}
