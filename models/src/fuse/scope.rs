//! What a citation of a FUSE check says about its scope (`Spec::scope`):
//! the sizes, the tasks as written, the daemon and queue, and what the
//! model leaves out for this configuration (docs/model.md, "Abstractions").

use super::config::{Config, TaskSpec};

fn plural(n: u8, one: &str) -> String {
    format!("{n} {one}{}", if n == 1 { "" } else { "s" })
}

pub fn scope(cfg: &Config) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    let u = cfg.sub.units_per_page;
    v.push((
        if cfg.sub_page() { "units" } else { "pages" },
        format!(
            "{}{} ({} in the file at the start, {} cached, {} dirty)",
            cfg.pages,
            if cfg.uneven() {
                let b: Vec<String> = cfg
                    .position_bytes()
                    .iter()
                    .map(|(a, n)| format!("{a}+{n}"))
                    .collect();
                format!(" (bytes {}, uneven)", b.join(" "))
            } else if u > 1 {
                format!(" ({} pages of {u})", cfg.pages / u)
            } else {
                String::new()
            },
            cfg.init_size,
            cfg.cached.count_ones(),
            cfg.dirty.count_ones()
        ),
    ));
    let folio = if cfg.folio_pages > 1 {
        format!("{} pages", cfg.folio_pages)
    } else {
        "1 page (order 0)".to_string()
    };
    let blocks = if cfg.folio_blocks > 1 || cfg.blocks_per_page > 1 {
        format!(
            ", {} per folio, {} per page",
            plural(cfg.folio_blocks, "block"),
            plural(cfg.blocks_per_page, "block")
        )
    } else {
        String::new()
    };
    v.push(("folio", format!("{folio}{blocks}")));
    let sub = &cfg.sub;
    if !sub.is_default() {
        let lim = |b: Option<u32>| b.map_or("-".to_string(), |b| format!("{b} B"));
        v.push((
            "page",
            format!(
                "PAGE_SIZE {} B; positions p0.. are {}; max_read {}, max_write {} (the kernel's 4096-byte floor)",
                sub.page_size,
                if cfg.uneven() {
                    "of uneven bytes (above)".to_string()
                } else {
                    format!("units of {} B ({} per page)", cfg.unit_bytes(), sub.units_per_page)
                },
                lim(sub.max_read_bytes),
                lim(sub.max_write_bytes)
            ),
        ));
    }
    if !cfg.drop.is_empty() {
        v.push((
            "dropped",
            format!(
                "{} (not the kernel: a what-if run without these calls)",
                cfg.drop.join(", ")
            ),
        ));
    }
    let task = |i: usize| format!("T{i} \"{}\"", cfg.task_text(i));
    if cfg.thread.is_empty() {
        let tasks: Vec<String> = (0..cfg.tasks.len()).map(task).collect();
        v.push(("tasks", tasks.join(", ")));
    } else {
        // thread programs: each thread's tasks in the order it runs them
        let threads: Vec<String> = cfg
            .threads()
            .iter()
            .enumerate()
            .map(|(th, ts)| {
                let ts: Vec<String> = ts.iter().map(|&i| task(i)).collect();
                format!("thread {th}: {}", ts.join(" then "))
            })
            .collect();
        v.push(("threads", threads.join("; ")));
    }
    v.push(("daemon", plural(cfg.daemon_threads, "thread")));
    v.push((
        "max_background",
        match cfg.max_background {
            Some(b) => b.to_string(),
            None => "unbounded (the check's -bg1 twin runs at 1)".to_string(),
        },
    ));
    let mut mount = vec![if cfg.writeback_cache {
        "writeback_cache"
    } else {
        "write-through"
    }];
    if cfg.atomic_o_trunc {
        mount.push("atomic_o_trunc");
    }
    if cfg.direct_io_allow_mmap {
        mount.push("direct_io_allow_mmap");
    }
    if cfg.parallel_dio {
        mount.push("parallel direct writes");
    }
    if cfg.async_dio {
        mount.push("async_dio");
    }
    let env = cfg.reclaim_env;
    if cfg.memcg_v1 || env.memcg_v2 {
        mount.push(if env.memcg_v2 {
            "memcg v2 reclaim"
        } else {
            "memcg v1 reclaim"
        });
        if env.mglru {
            mount.push("MGLRU");
        }
        if env.charged_elsewhere {
            mount.push("folios charged outside the daemon's memcg");
        }
    }
    v.push((
        "mount",
        format!("{}; max_pages {}", mount.join(", "), cfg.max_pages),
    ));
    let mut out = if cfg.sub_page() {
        vec![
            "direct I/O into a mapping",
            "a second size change",
            "iomap's per-block state",
        ]
    } else {
        vec!["sizes below a page"]
    };
    out.push("attributes other than size");
    if cfg.errors == 0 {
        out.push("error replies");
    }
    if cfg.short == 0 {
        out.push("short replies");
    }
    if !cfg.memcg_v1 && !cfg.reclaim_env.memcg_v2 {
        out.push("memory reclaim");
    } else {
        // reclaim.rs: the daemon's reclaim meets folios under writeback;
        // the eviction of a clean folio only trace conformance allows
        out.push("reclaim's eviction of clean folios");
    }
    if cfg.folio_pages == 1 {
        out.push("large folios");
    }
    if !cfg
        .tasks
        .iter()
        .any(|t| matches!(t, TaskSpec::Signal { .. }))
    {
        out.push("interrupts");
    }
    if cfg.tasks.iter().any(|t| t.is_aio()) {
        // aio.rs: the server answers a blocking aio write in full
        out.push("fuse_do_truncate after a failed extending aio write");
    } else {
        out.push("asynchronous direct I/O (aio)");
    }
    out.extend(["RELEASE", "passthrough"]);
    // a fault keeps its file's f_ra only with `fd=F` (read.rs
    // `keeps_ra`); every task that faults without it keeps none
    if cfg.tasks.iter().any(|t| {
        matches!(
            t,
            TaskSpec::Fault { fd: None, .. }
                | TaskSpec::EnvAccess { fd: None, .. }
                | TaskSpec::Mmap { .. }
                | TaskSpec::Gup { .. }
                | TaskSpec::DioMmap { .. }
        )
    }) {
        out.push("the readahead state (file->f_ra) a fault shares with read(2)");
    }
    if !cfg.tasks.iter().any(|t| {
        matches!(
            t,
            TaskSpec::RemoteTruncate { .. }
                | TaskSpec::NotifyInval { .. }
                | TaskSpec::NotifyStore { .. }
        )
    }) {
        out.push("other clients of the server");
    }
    v.push(("not modelled", out.join(", ")));
    v
}
