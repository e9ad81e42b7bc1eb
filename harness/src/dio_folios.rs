//! Direct writes from user buffers backed by large folios (seed 003, the
//! fuse-gup model, docs/model-fuse-gup.md): the buffer's pages come from a
//! large tmpfs folio in an order the kernel must not assume (Willy's
//! "A0 A1 B0 A3", gaps, reversals, repeats), and each is written with
//! write(2) to a FOPEN_DIRECT_IO file. Every WRITE's payload must be the
//! buffer's bytes at that offset; the file read back must be the buffer.
//!
//! The buffer's real layout is read from pagemap/kpageflags and logged as a
//! `gup-buffer` mark, which `conform` maps onto the fuse-gup model.
//! Skipped (with the reason) when tmpfs cannot give a large folio.
use crate::ctx::Ctx;
use crate::fail::{skip, Fail, Res};
use crate::largefolio::{backing, cow_page_bytes, name_pages, HugeTmpfs, PG};
use crate::scenario_kit::Scenario;
use crate::server::ServerConfig;
use crate::sys;
use crate::trace::page_tags;

/// How the buffer is built.
#[derive(Clone, Copy)]
enum Build {
    /// The tmpfs file mapped MAP_PRIVATE; a store to page 2 replaces it
    /// with an anonymous COW page: A0 A1 B0 A3.
    Cow,
    /// File pages mapped one by one with MAP_FIXED, in this order.
    Pages(&'static [usize]),
}

#[derive(Clone, Copy)]
struct Case {
    build: Build,
    /// The layout the buffer must have (names as in the model).
    expect: &'static str,
    /// Bytes into the first page where the data starts, and its length.
    start: usize,
    len: usize,
}

const COW: Case = Case {
    build: Build::Cow,
    expect: "A0 A1 B0 A3",
    start: 0,
    len: 4 * PG,
};
const REMAP: Case = Case {
    build: Build::Pages(&[0, 2, 1, 1]),
    expect: "A0 A2 A1 A1",
    start: 1024,
    len: 4 * PG - 2048,
};
const SPLIT: Case = Case {
    build: Build::Cow,
    expect: "A0 A1 B0 A3",
    start: 1024,
    len: 4 * PG - 2048,
};

fn maxwrite8k(c: &mut ServerConfig) {
    c.max_write = 8192;
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "l_dio_cow",
            about: "write(2) of a buffer A0 A1 B0 A3 (tmpfs huge folio, page 2 COW-replaced) to a FOPEN_DIRECT_IO file: the WRITE carries the buffer's pages in order",
            config: std::sync::Arc::new(|_| {}),
            run: std::sync::Arc::new(|c| dio_from_folios(c, COW)),
            needs: || None,
            outside: None,
            if_evicted: None,
            expect_on: crate::scenario_kit::WRITTEN_FOR,
        },
        Scenario {
            name: "l_dio_remap",
            about: "buffer A0 A2 A1 A1 (single tmpfs-folio pages mapped MAP_FIXED: a gap, a reversal, a repeat), 1K into the first page: the WRITE carries exactly the buffer's bytes",
            config: std::sync::Arc::new(|_| {}),
            run: std::sync::Arc::new(|c| dio_from_folios(c, REMAP)),
            needs: || None,
            outside: None,
            if_evicted: None,
            expect_on: crate::scenario_kit::WRITTEN_FOR,
        },
        Scenario {
            name: "l_dio_split",
            about: "max_write=8K: the A0 A1 B0 A3 buffer from 1K is sent as 8K + 6K WRITEs, each with the buffer's bytes at its offset",
            config: std::sync::Arc::new(maxwrite8k),
            run: std::sync::Arc::new(|c| dio_from_folios(c, SPLIT)),
            needs: || None,
            outside: None,
            if_evicted: None,
            expect_on: crate::scenario_kit::WRITTEN_FOR,
        },
    ]
}

fn harness_fail(check: &str, detail: String) -> Fail {
    Fail {
        check: check.into(),
        detail,
    }
}

fn dio_from_folios(ctx: &mut Ctx, case: Case) -> Res {
    let dir = ctx
        .mnt
        .parent()
        .ok_or_else(|| "mount point has no parent".to_string())?
        .join("tmpfs");
    let mut t = HugeTmpfs::new(&dir, 512).map_err(skip)?;
    let r = with_buffer(ctx, &mut t, case);
    let log = t.cleanup();
    if log.iter().any(|l| l.contains("LEFT")) {
        return Err(harness_fail("cleanup", log.join("; ")));
    }
    r
}

fn with_buffer(ctx: &mut Ctx, t: &mut HugeTmpfs, case: Case) -> Res {
    let (addr, n) = match case.build {
        Build::Cow => {
            let a = t.map_private()?;
            // SAFETY: a maps the whole (512-page) file read-write.
            let page2 = unsafe { std::slice::from_raw_parts_mut((a + 2 * PG) as *mut u8, PG) };
            page2.copy_from_slice(&cow_page_bytes());
            (a, 4)
        }
        Build::Pages(p) => (t.map_pages(p)?, p.len()),
    };
    let file = t.map_pages(&[0, 1, 2, 3])?;
    let fb = backing(file, 4).map_err(skip)?;
    let bb = backing(addr, n).map_err(skip)?;
    let names =
        name_pages(&bb, &fb).map_err(|e| skip(format!("tmpfs gave no large folio here ({e})")))?;
    let layout = names.join(" ");
    if layout != case.expect {
        return Err(harness_fail(
            "buffer layout",
            format!("built {layout}, wanted {}", case.expect),
        ));
    }
    ctx.mark(&format!(
        "gup-buffer pages={} start={} len={} file-folio={}",
        names.join(","),
        case.start,
        case.len,
        if fb.first().is_some_and(|f| f.thp()) {
            "thp"
        } else {
            "large"
        }
    ))?;
    // SAFETY: addr maps n readable pages; start + len <= n pages.
    let buf: &[u8] =
        unsafe { std::slice::from_raw_parts((addr + case.start) as *const u8, case.len) };
    let fd0 = ctx.create("T0", "f")?;
    ctx.close("T0", fd0)?;
    let fd = ctx.open("T0", "f", libc::O_RDWR | libc::O_DIRECT)?;
    let (w, _) = ctx.sys_ok(
        "T0",
        "pwrite-buffer",
        &format!("fd={fd} off=0 len={} pages={}", case.len, names.join(",")),
        || sys::pwrite(fd, buf, 0),
    )?;
    ctx.expect("write(2) complete", w as usize == case.len, || {
        format!("wrote {w} of {}", case.len)
    })?;
    let tr = ctx.trace()?;
    let writes = tr.plain_writes();
    let mut at = 0u64;
    for wr in &writes {
        let (off, size) = (wr.offset.unwrap_or(u64::MAX), wr.size.unwrap_or(0));
        ctx.expect("WRITEs follow each other", off == at, || {
            format!("WRITE at {off}, expected {at}")
        })?;
        // a WRITE outside the buffer (a kernel that does otherwise) is a
        // failed check below, not a slice index panicking
        let end = off.saturating_add(size).min(case.len as u64) as usize;
        let want = buf
            .get(off.min(case.len as u64) as usize..end)
            .map(page_tags)
            .unwrap_or_default();
        let got = wr.page_tags.clone().unwrap_or_default();
        ctx.expect("WRITE payload = the buffer's pages", got == want, || {
            format!("WRITE {off}+{size} carries {got:?}, the buffer has {want:?}")
        })?;
        at = off + size;
    }
    ctx.expect("WRITEs cover the buffer", at == case.len as u64, || {
        format!("{} WRITE(s) cover {at} of {}", writes.len(), case.len)
    })?;
    let back = ctx.pread("T0", fd, 0, case.len)?;
    let first_diff = back.iter().zip(buf).position(|(a, b)| a != b);
    ctx.expect(
        "file content = the buffer (byte for byte)",
        back.len() == buf.len() && first_diff.is_none(),
        || {
            format!(
                "read back {} bytes, first difference at {first_diff:?}",
                back.len()
            )
        },
    )?;
    Ok(())
}
