//! Server notifications on the real kernel (issue 22 item 6; the model's
//! `notify-inval` task, models/src/fuse/notify.rs, catalogue
//! checks/catalogue/49-notify.toml; findings F-notify-blocks and
//! F-notify-wbc). The recording server, as another client, changes its
//! file and then writes FUSE_NOTIFY_INVAL_INODE to /dev/fuse from a
//! thread of its own (server/notify.rs), logged as actor N1's
//! `notify_inval` call, while the writeback WRITE of the page is held.
//!
//! Expectations, from the model first (`t2-notify-inval-wb`: w-notify-
//! blocked, a3 violated) and fs/fuse/inode.c fuse_reverse_inval_inode
//! (6.18: attr_version++, fuse_invalidate_attr, then for offset >= 0
//! invalidate_inode_pages2_range(pg_start, len <= 0 ? -1 : pg_end)):
//!
//! - the walk locks the folio and waits for its writeback
//!   (folio_wait_writeback; since 0c58a97f919c PG_writeback lasts until
//!   the WRITE's reply): the notification's write(2) does not return
//!   while the WRITE is held. Its thread sleeps uninterruptibly ('D' in
//!   /proc/TID/stat: polled, a kernel state, not a timing guess);
//! - after the reply the folio is clean and not under writeback: it is
//!   removed and the notification returns 0;
//! - the client's older WRITE was applied after the server's change: the
//!   server ends with the client's data and the change is lost
//!   (F-notify-wbc, intended: libfuse documents the writeback); a read
//!   after the notification READs the page again (it was dropped) and
//!   returns the client's data.
use crate::ctx::Ctx;
use crate::fail::Res;
use crate::scenario_kit::{
    briefs, dirty_and_hold, fail, mmap, sc, store, unmap, wrap, Scenario, PG,
};
use crate::scenarios_cache::on_server_not_cached;
use crate::server::ServerConfig;

fn dflt(_: &mut ServerConfig) {}
fn nowbc(c: &mut ServerConfig) {
    c.writeback_cache = false;
}

pub fn all() -> Vec<Scenario> {
    vec![
        sc!("n_inval_wb", "F-notify-blocks: writeback_cache; page A's writeback WRITE held; the server writes N over page 0 and sends NOTIFY_INVAL_INODE(off 0, len 0: whole file): its write(2) sleeps (D) until the WRITE reply, then returns 0; the page was dropped (a read READs A again); the server ends with A (F-notify-wbc)", dflt, |c| wrap(c, |x| inval_wb(x, (0, 0)))),
        sc!("n_inval_wb_range", "the same with NOTIFY_INVAL_INODE(off 0, len 4096), the range of the changed page", dflt, |c| wrap(c, |x| inval_wb(x, (0, PG as i64)))),
        sc!("n_inval_read_locked", "F-notify-blocks with nothing dirty: page A not cached; a buffered read's readahead READ held (folio locked); the server writes N and sends NOTIFY_INVAL_INODE(off 0, len 4096): it sleeps (D) until the READ reply (which carries N), then drops the page: it is READ once more (the held reader's retry or a second read), both reads return N", dflt, |c| wrap(c, inval_read_locked)),
        sc!("n_inval_redirty", "page A's WRITE held, the page written again (B); NOTIFY_INVAL_INODE (whole file) sleeps until the reply, then launders the dirty page (a WRITE of B) and returns after that WRITE's reply; a read READs B, the server ends with B (F-notify-wbc)", dflt, |c| wrap(c, inval_redirty)),
        sc!("n_inval_mmap_wt", "F-notify-wbc without writeback_cache: a MAP_SHARED store of B, its WRITE held; NOTIFY_INVAL_INODE(off 0, len 4096) sleeps until the reply, then drops the page; a read READs B, the server ends with B", nowbc, |c| wrap(c, inval_mmap_wt)),
    ]
}

/// The state letter of thread `tid` (/proc/TID/stat, field 3) and its
/// kernel stack's functions, innermost first (/proc/TID/stack, root
/// only; empty where it cannot be read), or None once it is gone.
fn thread_state(tid: i32) -> Option<(char, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{tid}/stat")).ok()?;
    // "pid (comm) S ...": comm may hold spaces; the state follows the last ')'
    let st = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
    let stack = std::fs::read_to_string(format!("/proc/{tid}/stack")).unwrap_or_default();
    let fns: Vec<&str> = stack
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(|f| f.split('+').next().unwrap_or(f))
        .take_while(|f| !f.starts_with("do_syscall"))
        .collect();
    Some((st, fns.join("<")))
}

/// Whether a thread state is the walk's sleep: 'D' with
/// invalidate_inode_pages2_range on the stack (or the stack unreadable),
/// not a passing uninterruptible sleep elsewhere in the write(2).
fn in_the_walk(st: char, stack: &str) -> bool {
    st == 'D' && (stack.is_empty() || stack.contains("invalidate_inode_pages2_range"))
}

/// Poll thread `tid` until it sleeps in the walk (`in_the_walk`), at
/// most `ms`: the last state seen.
fn wait_uninterruptible(tid: i32, ms: u64) -> Option<(char, String)> {
    let start = std::time::Instant::now();
    loop {
        let s = thread_state(tid);
        if s.as_ref().is_none_or(|(c, k)| in_the_walk(*c, k))
            || start.elapsed().as_millis() as u64 >= ms
        {
            return s;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// With one reply held (`what` the notification waits for): the server
/// writes N over page 0 and notifies (`range`); the notification must
/// sleep (D) and not return until the release, then return within 3 s.
fn notify_behind_hold(ctx: &mut Ctx, range: (i64, i64), what: &str) -> Res {
    let tid = ctx.notify_inval("N1", "f", range, 0, "N")?;
    let seen = wait_uninterruptible(tid, 2000);
    let returned = ctx.wait_notified(1, 0)?;
    let (st, stack) = seen.clone().unwrap_or(('-', String::new()));
    ctx.mark(&format!("notify thread {tid} state {st} stack {stack}"))?;
    ctx.expect(
        &format!("the notification sleeps in the kernel (D, in invalidate_inode_pages2_range where /proc/TID/stack is readable) and has not returned while the reply is held (the walk waits for {what})"),
        in_the_walk(st, &stack) && !returned,
        || format!("thread state {seen:?}, returned {returned}"),
    )?;
    ctx.ctl("release all")?;
    if !ctx.wait_notified(1, 3000)? {
        return Err(fail(
            "the notification returns after the held reply",
            "no return within 3 s".into(),
        ));
    }
    Ok(())
}

/// The notification returned 0 after the reply of the last of the
/// `n_writes` page-cache WRITEs, the last carrying `last`; a read of page
/// 0 then READs it again (the notification dropped it) and returns
/// `last`, which the server holds too: its own N was overwritten by the
/// client's older WRITE (F-notify-wbc).
fn after_notify(ctx: &mut Ctx, fd: i32, n_writes: usize, last: &str) -> Res {
    let t = ctx.trace()?;
    let ws = t.cache_writes();
    let ret = t
        .mark("ret", "N1", "notify_inval")
        .ok_or_else(|| fail("the notification's ret is logged", String::new()))?;
    let w_reply = ws.last().and_then(|w| t.reply_seq(w)).unwrap_or(u64::MAX);
    ctx.expect(
        &format!("the notification returns 0 after the reply of WRITE {n_writes} of {n_writes} (page {last})"),
        ret.ret == Some(0)
            && ret.seq > w_reply
            && ws.len() == n_writes
            && ws.last().and_then(|w| w.page_tags.as_deref()) == Some(last),
        || format!("ret {:?} at #{}; WRITEs {}", ret.ret, ret.seq, briefs(&ws)),
    )?;
    let reads_before = t.reqs("READ").len();
    let data = ctx.pread("T0", fd, 0, PG as usize)?;
    let t = ctx.trace()?;
    ctx.expect(
        &format!("the page was dropped: the read READs it again and returns the client's {last} (the server's N was overwritten by the older WRITE)"),
        t.reqs("READ").len() == reads_before + 1 && data.first() == last.as_bytes().first(),
        || format!("READs {} -> {}, data {:?}", reads_before, t.reqs("READ").len(), data.first()),
    )?;
    ctx.expect_file("f", PG, last)
}

/// What the walk waits for behind a held writeback WRITE.
const WB: &str = "the folio's writeback";

fn inval_wb(ctx: &mut Ctx, range: (i64, i64)) -> Res {
    let fd = dirty_and_hold(ctx, "A")?;
    notify_behind_hold(ctx, range, WB)?;
    after_notify(ctx, fd, 1, "A")?;
    ctx.close("T0", fd)
}

/// The page written again (B) while its WRITE of A is held (T2: write(2)
/// does not wait for writeback): after the reply the walk finds the
/// folio dirty and launders it (fuse_launder_folio: a WRITE of B, waited
/// for) before it drops it.
fn inval_redirty(ctx: &mut Ctx) -> Res {
    let fd = dirty_and_hold(ctx, "A")?;
    ctx.pwrite("T0", fd, 0, "B")?;
    notify_behind_hold(ctx, (0, 0), WB)?;
    after_notify(ctx, fd, 2, "B")?;
    ctx.close("T0", fd)
}

/// Write-through: page A written through; a MAP_SHARED store of B
/// dirties the page; its writeback WRITE held (sync_file_range).
fn inval_mmap_wt(ctx: &mut Ctx) -> Res {
    let fd = ctx.create("T0", "f")?;
    ctx.pwrite("T0", fd, 0, "A")?;
    let (addr, r) = mmap(ctx, fd, PG as usize)?;
    if r.ret < 0 {
        return Err(fail("mmap succeeds", format!("errno {}", r.errno)));
    }
    store(ctx, addr, 0, b'B')?;
    ctx.ctl("hold WRITE n=1 cache=1")?;
    ctx.sfr("T0", fd)?;
    ctx.wait_held(1, 2000)?;
    notify_behind_hold(ctx, (0, PG as i64), WB)?;
    after_notify(ctx, fd, 1, "B")?;
    unmap(ctx, addr, PG as usize)?;
    ctx.close("T0", fd)
}

/// Nothing dirty: page A on the server, not cached; a buffered read's
/// readahead READ held (the folio locked until its reply). The walk
/// waits on the folio lock (folio_lock in invalidate_inode_pages2_range),
/// which libfuse's "If there are no dirty pages, this function will
/// never block" does not cover. The held READ is answered after the
/// server's change, so it carries N; the walk then drops the page. Who
/// reads it again depends on the scheduler: the held reader itself, if
/// the walk removed the folio before it copied (filemap_read finds it
/// truncated and READs again; seen on 6.18.44), or else the second
/// read; either way the page is READ exactly once more and both reads
/// return N.
fn inval_read_locked(ctx: &mut Ctx) -> Res {
    let (fd1, fd2) = on_server_not_cached(ctx, "A")?;
    ctx.ctl("hold READ n=1")?;
    let mut rd = ctx.spawn_pread("T1", fd1, 0, PG as usize)?;
    ctx.wait_held(1, 2000)?;
    notify_behind_hold(ctx, (0, PG as i64), "the folio lock the readahead holds")?;
    let (r, _) = rd.join(3000)?;
    ctx.expect("the held read returns one page", r.ret == PG as i64, || {
        format!("{r:?}")
    })?;
    let t = ctx.trace()?;
    let ret = t
        .mark("ret", "N1", "notify_inval")
        .ok_or_else(|| fail("the notification's ret is logged", String::new()))?;
    let reads = t.reqs("READ");
    let first_read = reads.first().copied();
    let r_reply = first_read.and_then(|r| t.reply_seq(r)).unwrap_or(u64::MAX);
    let carried = first_read
        .and_then(|r| t.reply(r))
        .and_then(|e| e.result.as_ref())
        .and_then(|v| v["page_tags"].as_str())
        .map(str::to_string);
    let t1_data = t
        .mark("ret", "T1", "pread")
        .and_then(|e| e.page_tags.clone());
    ctx.expect(
        "the notification returns 0 after the held READ's reply, which carries the server's N; the held read returns N",
        ret.ret == Some(0)
            && ret.seq > r_reply
            && carried.as_deref() == Some("N")
            && t1_data.as_deref() == Some("N"),
        || {
            format!(
                "ret {:?} at #{}; READs {}; T1 read {t1_data:?}",
                ret.ret,
                ret.seq,
                briefs(&reads)
            )
        },
    )?;
    let data = ctx.pread("T0", fd1, 0, PG as usize)?;
    let t = ctx.trace()?;
    ctx.expect(
        "the walk dropped the page: it is READ once more (by the held reader's retry or by the second read), and the second read returns N",
        // (at least: the clean page may be evicted again before the
        // second read, M-reclaim-clean, and READ a third time)
        t.reqs("READ").len() >= 2 && data.first() == Some(&b'N'),
        || format!("READs {}, data {:?}", briefs(&t.reqs("READ")), data.first()),
    )?;
    ctx.close("T0", fd2)?;
    ctx.close("T0", fd1)?;
    ctx.expect_file("f", PG, "N")
}

#[cfg(test)]
mod tests {
    use super::in_the_walk;

    /// A 'D' sleep elsewhere in the write(2) (e.g. a page fault on the
    /// buffer) is not the walk's wait; an unreadable stack trusts 'D'.
    #[test]
    fn only_a_sleep_in_the_walk_counts() {
        let walk = "folio_wait_bit<folio_wait_writeback<invalidate_inode_pages2_range<fuse_reverse_inval_inode";
        assert!(in_the_walk('D', walk));
        assert!(in_the_walk('D', ""));
        assert!(!in_the_walk('S', walk));
        assert!(!in_the_walk(
            'D',
            "folio_wait_bit<filemap_fault<handle_mm_fault"
        ));
    }
}
