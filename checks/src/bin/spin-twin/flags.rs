//! Which catalogue checks the Spin twin (spin/fuse.pml) covers, and the
//! preprocessor flags that give the twin the same configuration.
//!
//! The twin covers kernel states T and T2 with one-page folios and a
//! writeback_cache mount, the tasks `wb none`, `wb all`, `truncate S` and
//! `write A+N`, and the switches that change those tasks' programs or
//! steps. Anything else is refused with the reason, so a check is only
//! ever compared on a configuration the twin really models.

use wbspec_models::fuse::{Config, Kernel, TaskSpec};

/// Variant flags the twin implements (name in fuse/config/variant.rs, cpp macro).
const SWITCHES: &[(&str, &str)] = &[
    ("p_no_writectr", "P_NO_WRITECTR"),
    ("mut_crop_old_size", "MUT_CROP_OLD_SIZE"),
    ("mut_flush_ignores_nowrite", "MUT_FLUSH_IGNORES_NOWRITE"),
    (
        "mut_invalidate_under_nowrite",
        "MUT_INVALIDATE_UNDER_NOWRITE",
    ),
    ("mut_wb_ignores_writeback", "MUT_WB_IGNORES_WRITEBACK"),
    ("iomap_wb_eof", "IOMAP_WB_EOF"),
];

/// Flags that are on in T or T2 but change nothing the twin's tasks do:
/// reclaim_flag acts only with memcg_v1 (refused below); the 6.19
/// direct-I/O flags act only in direct-I/O programs. The twin has no
/// direct-I/O task, so dio_write_no_invalidate (6.1's fuse_direct_io
/// without step (C); off in T and T2) is refused as a switch it does
/// not model.
const INERT: &[&str] = &[
    "reclaim_flag",
    "dio_flush_always",
    "dio_invalidate_after_write",
];

/// Keys of a `[[check]]` table that are the checker's, not the model's:
/// the catalogue's own list, so a key added there is stripped here too.
pub use wbspec::catalogue::GENERIC_KEYS;

/// The twin's `-D` flags for a FUSE model configuration, or why the twin
/// does not model it.
pub fn defines(c: &Config) -> Result<Vec<String>, String> {
    if !matches!(c.kernel, Kernel::T | Kernel::T2) {
        return Err(format!("kernel {:?} (the twin models T and T2)", c.kernel));
    }
    if !c.writeback_cache {
        return Err("write-through mount (the twin models writeback_cache)".into());
    }
    if c.folio_blocks != 1 || c.folio_pages != 1 || c.blocks_per_page != 1 {
        return Err("large folios or sub-page blocks".into());
    }
    if !c.sub.is_default() {
        return Err("page size, units or byte limits (sub-page geometry)".into());
    }
    if c.max_read.is_some() || c.max_write.is_some() {
        return Err("max_read / max_write".into());
    }
    if c.errors != 0 || c.short != 0 {
        return Err("error or short replies".into());
    }
    if c.memcg_v1 {
        return Err("memcg v1 reclaim".into());
    }
    if !c.drop.is_empty() {
        return Err("dropped ops (the twin runs the programs whole)".into());
    }
    if c.max_background.is_some() || c.congestion_threshold.is_some() {
        // (a check's -bg1 twin is not a catalogue table: never compared)
        return Err("max_background / congestion_threshold (the twin has no fc->bg_queue)".into());
    }
    if c.uring_queues != 0 {
        return Err("uring_queues (the twin has /dev/fuse only)".into());
    }
    if c.pages == 0 || c.pages > 4 {
        return Err(format!("{} pages (the twin has 1..4)", c.pages));
    }
    if c.tasks.is_empty() || c.tasks.len() > 6 {
        return Err(format!("{} tasks (the twin has 1..6)", c.tasks.len()));
    }
    if c.daemon_threads == 0 || c.daemon_threads > 3 {
        return Err(format!("{} daemon threads", c.daemon_threads));
    }
    let mut d = vec![
        format!("-DNP={}", c.pages),
        format!("-DINIT_SIZE={}", c.init_size),
        format!("-DCACHED={}", c.cached),
        format!("-DDIRTY={}", c.dirty),
        format!("-DNW={}", c.daemon_threads),
        format!("-DMAX_PAGES={}", c.max_pages),
        format!("-DNT={}", c.tasks.len()),
        // /dev/fuse and queued_writes: about one WRITE per page and one
        // request per task; more (a mutant's second WRITE of a page) is
        // an assertion failure in the twin, reported as a difference
        format!("-DMAXQ={}", c.pages as usize + c.tasks.len()),
    ];
    for (i, t) in c.tasks.iter().enumerate() {
        let spec = match *t {
            TaskSpec::Writeback { all } => format!("WB,{},0", all as u8),
            TaskSpec::Truncate { size } => format!("TRUNC,{size},0"),
            TaskSpec::Write { first, n } => format!("WRITE,{first},{n}"),
            other => return Err(format!("task `{}`", other.short())),
        };
        d.push(format!("-DTASK{i}={spec}"));
    }
    for f in c.variant.flags_on() {
        if let Some((_, m)) = SWITCHES.iter().find(|(n, _)| *n == f) {
            d.push(format!("-D{m}=1"));
        } else if !INERT.contains(&f) {
            return Err(format!("switch {f}"));
        }
    }
    Ok(d)
}
