//! The FUSE client model: writeback, truncate and direct I/O on one inode
//! of a writeback_cache mount (kernel-sources.md §2–§10).

mod aio;
mod attr;
mod autoinval;
pub mod config;
pub mod cuts;
mod daemon;
mod direct;
mod encode;
mod errors;
mod folio;
mod ghost;
mod init;
mod iomode;
pub mod layout;
mod legacy;
mod lfolio;
mod mmap;
pub mod model;
pub mod narrate;
mod notify;
pub mod oplabel;
pub mod program;
pub mod properties;
mod read;
pub mod rebase;
mod reclaim;
mod request;
mod scope;
pub mod state;
pub mod step;
mod subpage;
pub mod svg;
pub mod transport;
mod truncate;
pub mod uring;
mod wbslots;
mod write;
mod writeback;

pub use config::{Config, Kernel, TaskSpec, Variant};
pub use model::{Action, Actor, FuseModel};
pub use read::RA_BYTES;
pub use state::{State, MAX_FDS};
pub use step::Step;

use crate::common::encode::Enc;
use crate::spec::{self, Hits, KernelState, PropertyDef, Spec, SwitchDef, SwitchKind};

/// Version of the model's step semantics, recorded in every saved trace
/// (traces/*.json) and checked by `wbspec replay`. Bump it whenever a
/// change to `enabled`/`step`, the programs, the `Action`/`Step`/`State`
/// definitions, the order of actions or a property's condition could make
/// a saved trace mean something else, and then regenerate the traces
/// (`cargo run --release -- check --all --write-traces`).
pub const MODEL_VERSION: &str = "fuse-9";

impl stateright::Model for FuseModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![self.initial()]
    }

    fn actions(&self, s: &State, out: &mut Vec<Action>) {
        self.enabled(s, out);
    }

    fn next_state(&self, s: &State, a: Action) -> Option<State> {
        self.step(s, a)
    }

    fn format_action(&self, a: &Action) -> String {
        format!(
            "{}: {}",
            self.actor_label(a.actor),
            a.step.kernel_fn(self.cfg.tree())
        )
    }

    fn as_svg(&self, path: stateright::Path<State, Action>) -> Option<String> {
        let actions = path.clone().into_actions();
        Some(svg::sequence_svg(self, &path.into_states(), &actions))
    }

    fn properties(&self) -> Vec<stateright::Property<Self>> {
        spec::stateright_properties::<Self>()
    }
}

const KERNEL_STATES: &[KernelState] = &[
    KernelState { name: "L" },
    KernelState { name: "T" },
    KernelState { name: "T17" },
    KernelState { name: "T2" },
    KernelState { name: "T19" },
    KernelState { name: "C" },
];

/// The variant flags as switches: kernel mechanisms and fixes, review
/// proposals (seed 000) and mutants.
const SWITCHES: &[SwitchDef] = &[
    SwitchDef { name: "temp_pages", kind: SwitchKind::Kernel, description: "state L writeback: temp pages, the rb-tree, secondary requests" },
    SwitchDef { name: "dio_flush_always", kind: SwitchKind::Kernel, description: "1ce120dcefc0: FOPEN_DIRECT_IO always flushes before direct I/O" },
    SwitchDef { name: "dio_invalidate_after_write", kind: SwitchKind::Kernel, description: "b359af8275a9: invalidate the range after a FOPEN_DIRECT_IO write" },
    SwitchDef { name: "dio_write_no_invalidate", kind: SwitchKind::Kernel, description: "before 80e4f25262f9 (6.6): a FOPEN_DIRECT_IO write does not invalidate (launder) its range before the WRITE" },
    SwitchDef { name: "flush_sync_writes", kind: SwitchKind::Kernel, description: "state L: fuse_flush takes inode_lock and calls fuse_sync_writes" },
    SwitchDef { name: "p_no_writectr", kind: SwitchKind::Proposal, description: "P-nowritectr: no writectr, queued_writes or fuse_sync_writes" },
    SwitchDef { name: "p_syncwrites", kind: SwitchKind::Proposal, description: "P-syncwrites: fuse_sync_writes outside truncate replaced by filemap_write_and_wait_range" },
    SwitchDef { name: "p_writeiter", kind: SwitchKind::Proposal, description: "P-writeiter: as P-syncwrites, the flush in fuse_direct_write_iter only" },
    SwitchDef { name: "mut_mkwrite_no_wait", kind: SwitchKind::Mutant, description: "fuse_page_mkwrite without folio_wait_writeback" },
    SwitchDef { name: "mut_crop_old_size", kind: SwitchKind::Mutant, description: "queued WRITEs cropped with the old i_size" },
    SwitchDef { name: "mut_flush_ignores_nowrite", kind: SwitchKind::Mutant, description: "fuse_flush_writepages ignores FUSE_NOWRITE" },
    SwitchDef { name: "mut_invalidate_under_nowrite", kind: SwitchKind::Mutant, description: "fuse_do_setattr invalidates before releasing NOWRITE" },
    SwitchDef { name: "mut_fsync_no_wait", kind: SwitchKind::Mutant, description: "fuse_fsync without waiting for writeback" },
    SwitchDef { name: "mut_dio_write_no_flush", kind: SwitchKind::Mutant, description: "fuse_direct_io write without steps (A), (B), (C)" },
    SwitchDef { name: "mut_wb_ignores_writeback", kind: SwitchKind::Mutant, description: "folio_prepare_writeback ignores PG_writeback" },
    SwitchDef { name: "mut_l_no_secondary", kind: SwitchKind::Mutant, description: "state L: fuse_writepage_add ignores the rb-tree" },
    SwitchDef { name: "mut_c_end_early", kind: SwitchKind::Mutant, description: "state C: PG_writeback ends with a folio's first range" },
    SwitchDef { name: "reclaim_flag", kind: SwitchKind::Kernel, description: "0c4f8ed498ce: AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM on writeback_cache mounts; vmscan does not wait on their writeback" },
    SwitchDef { name: "slot_check", kind: SwitchKind::Kernel, description: "c3880a7b10e4: fuse_folios_need_send sends once the descriptors fill max_pages slots" },
    SwitchDef { name: "lf_cap_max_read", kind: SwitchKind::Proposal, description: "large folios: the folio order cap honours max_read (Aug 2025 posting)" },
    SwitchDef { name: "lf_readahead_guard", kind: SwitchKind::Proposal, description: "large folios: fuse_readahead stops when no folio fits (v5's `if (!pages) break`)" },
    SwitchDef { name: "mut_vmscan_ignores_flag", kind: SwitchKind::Mutant, description: "shrink_folio_list waits on writeback despite the mapping flag" },
    SwitchDef { name: "mut_lf_datasize_pages", kind: SwitchKind::Mutant, description: "fuse_send_writepage sizes a WRITE as num_folios * PAGE_SIZE (before v2 patch 08)" },
    SwitchDef { name: "mut_lf_no_order_cap", kind: SwitchKind::Mutant, description: "large folios: no folio order cap" },
    SwitchDef { name: "mut_realloc_no_grow", kind: SwitchKind::Mutant, description: "fuse_pages_realloc returns true without growing the arrays" },
    SwitchDef { name: "mut_iomode_no_wait", kind: SwitchKind::Mutant, description: "fuse_file_cached_io_open does not wait for parallel direct writes" },
    SwitchDef { name: "mut_wb_error_ignored", kind: SwitchKind::Mutant, description: "fuse_writepage_end without mapping_set_error" },
    SwitchDef { name: "mut_setattr_error_size", kind: SwitchKind::Mutant, description: "a failed SETATTR(size) still writes the requested i_size" },
    SwitchDef { name: "mut_attr_no_version", kind: SwitchKind::Mutant, description: "GETATTR replies and short READs ignore attr_version and SIZE_UNSTABLE" },
    SwitchDef { name: "mut_l_read_no_wait", kind: SwitchKind::Mutant, description: "state L: readahead and read_folio do not wait on the rb-tree" },
    SwitchDef { name: "mut_odirect_no_post_invalidate", kind: SwitchKind::Mutant, description: "generic_file_direct_write without the post-write invalidation" },
    SwitchDef { name: "iomap_wb_eof", kind: SwitchKind::Kernel, description: "ef7e7cbb323f (6.17): iomap writeback skips a dirty folio wholly beyond i_size and cuts one across it" },
    SwitchDef { name: "ra_round_end", kind: SwitchKind::Kernel, description: "6.17's readahead series: page_cache_async_ra rounds the next window's end down (ra->order += 2)" },
    SwitchDef { name: "ra_ondemand", kind: SwitchKind::Kernel, description: "6.1 - 6.10's ondemand_readahead: a miss at the expected index or at ra->start + ra->size pushes the window forward; a window starting at the index with size == async_size merges the next" },
    SwitchDef { name: "ra_prev_pos_each_copy", kind: SwitchKind::Kernel, description: "6.1 - 6.5's filemap_read: ra->prev_pos after each folio copied, so a miss later in the same read takes the initial window" },
    SwitchDef { name: "ra_skip_shrinks", kind: SwitchKind::Kernel, description: "6.13 and before (until 7a1eb89f7918): read_pages lowers ra->size and ra->async_size by each folio a congested fuse_readahead skipped" },
    SwitchDef { name: "ra_count_batch", kind: SwitchKind::Kernel, description: "before 6.13's folio conversion: fuse_readahead's congestion check counts the whole previous READ of the batch (__readahead_batch)" },
    SwitchDef { name: "mut_no_tail_zero", kind: SwitchKind::Mutant, description: "truncate_inode_partial_folio without zeroing the tail" },
    SwitchDef { name: "mut_no_eof_zero", kind: SwitchKind::Mutant, description: "a partial write into a new folio beyond EOF without zeroing the rest" },
    SwitchDef { name: "mut_crop_by_page", kind: SwitchKind::Mutant, description: "fuse_send_writepage crops at the page holding i_size" },
    SwitchDef { name: "mut_abort_keeps_bg_queue", kind: SwitchKind::Mutant, description: "fuse_abort_conn leaves fc->bg_queue alone (no flush with max_background = UINT_MAX)" },
    SwitchDef { name: "mut_abort_queues", kind: SwitchKind::Mutant, description: "fuse_request_queue_background queues after the abort (no fc->connected check)" },
    SwitchDef { name: "mut_intr_bailout_sent", kind: SwitchKind::Mutant, description: "request_wait_answer takes back a request on SIGKILL after the daemon read it" },
    SwitchDef { name: "p_aio_inval_worker", kind: SwitchKind::Proposal, description: "Cheng Ding's v3 (Mar 2026): an async write's completion invalidates its range in fuse_aio_invalidate_worker before ki_complete; (E) after fuse_direct_IO" },
    SwitchDef { name: "mut_aio_extend_async", kind: SwitchKind::Mutant, description: "fuse_direct_IO returns -EIOCBQUEUED for an extending aio write too (no io->blocking)" },
    SwitchDef { name: "mut_wb_no_read", kind: SwitchKind::Mutant, description: "fuse_write_begin zeroes a partly written folio below EOF instead of reading it" },
    SwitchDef { name: "mut_wt_unlock_partial", kind: SwitchKind::Mutant, description: "fuse_fill_write_pages unlocks a write-through folio it wrote in part and that is not uptodate before the WRITE" },
    SwitchDef { name: "mut_no_wb_eof_zero", kind: SwitchKind::Mutant, description: "iomap_writeback_handle_eof without zeroing the EOF folio beyond i_size in the page cache" },
    SwitchDef { name: "fix_otrunc_keep_size", kind: SwitchKind::Fix, description: "F-otrunc fix (a): fuse_do_setattr(ATTR_OPEN) with atomic_o_trunc returns without i_size_write(0) and truncate_pagecache(0)" },
    SwitchDef { name: "fix_otrunc_setattr", kind: SwitchKind::Fix, description: "F-otrunc fix (b): fuse_do_setattr(ATTR_OPEN) sends SETATTR(size=0) under FUSE_NOWRITE even with atomic_o_trunc" },
    SwitchDef { name: "fix_pdio_wait_range", kind: SwitchKind::Fix, description: "F-pdio-lock fix: fuse_direct_io (B) for a write waits with filemap_fdatawait_range_keep_errors on its range, not fuse_sync_writes" },
    SwitchDef { name: "uring_bg_finish_first", kind: SwitchKind::Fix, description: "FUSE over io_uring: fuse_uring_req_end accounts fc->num_background and fc->active_background (fuse_request_bg_finish) before fuse_uring_flush_bg (Joanne Koong, applied Jun 2026)" },
    SwitchDef { name: "mut_uring_no_queue_slot", kind: SwitchKind::Mutant, description: "fuse_uring_flush_bg without the per-queue slot (|| !queue->active_background)" },
    SwitchDef { name: "mut_uring_flush_whole", kind: SwitchKind::Mutant, description: "fuse_uring_flush_bg moves a queue's whole background list once its condition holds" },
    SwitchDef { name: "mut_inval_skip_busy", kind: SwitchKind::Mutant, description: "fuse_reverse_inval_inode skips locked, dirty and writeback folios (invalidate_mapping_pages) instead of waiting and laundering" },
    SwitchDef { name: "mut_store_no_size", kind: SwitchKind::Mutant, description: "fuse_notify_store does not extend i_size past EOF (no fuse_write_update_attr)" },
    SwitchDef { name: "mut_cache_mask_ignored", kind: SwitchKind::Mutant, description: "fuse_change_attributes_i ignores fuse_get_cache_mask: with writeback_cache a GETATTR sets the server's size and invalidates the page cache" },
    SwitchDef { name: "fix_reclaim_flag_always", kind: SwitchKind::Fix, description: "F-reclaim-nowbc fix: fuse_init_file_inode sets AS_WRITEBACK_MAY_DEADLOCK_ON_RECLAIM on every mount" },
];

impl Spec for FuseModel {
    type Config = Config;
    const NAME: &'static str = "fuse";
    const VERSION: &'static str = MODEL_VERSION;

    fn parse_config(table: &toml::Table) -> Result<Config, String> {
        Config::from_table(table)
    }

    fn build(cfg: &Config) -> Result<Self, String> {
        FuseModel::new(cfg.clone())
    }

    fn config(&self) -> &Config {
        &self.cfg
    }

    fn property_defs() -> &'static [PropertyDef] {
        properties::PROPERTIES
    }

    fn condition(&self, i: usize, s: &State) -> bool {
        properties::CONDITIONS[i](self, s)
    }

    fn hits_given(&self, s: &State, succ: &[(Action, State)]) -> Hits {
        properties::hits_given(self, s, succ)
    }

    fn successors(&self, s: &State, out: &mut Vec<(Action, State)>) {
        FuseModel::successors(self, s, out)
    }

    fn has_symmetry() -> bool {
        true
    }

    /// The daemon's worker threads are interchangeable: the state with
    /// its workers sorted, each with its per-worker state (`rcl`, the
    /// direct reclaim it is in). Sound because a worker's index appears in
    /// no step but "the lowest idle worker reads" (whichever reads, the
    /// successors are permutations of each other) and every property
    /// reads the workers as a multiset; state L's rb-tree lookup is argued
    /// in docs/performance.md, and checks/tests/engines.rs checks, on
    /// every reachable state of every catalogue check but the largest,
    /// that successors and properties commute with this map.
    fn representative(&self, s: &State) -> State {
        let nw = self.cfg.daemon_threads as usize;
        let key = |w: usize| {
            let state::Reclaim { passes, wait } = s.rcl[w];
            (s.workers[w], passes, wait)
        };
        let mut r = *s;
        // with a ring, only the workers of one queue are interchangeable
        // (worker w serves queue w % Q; uring.rs)
        let nq = self.cfg.uring_queues.max(1) as usize;
        for q in 0..nq {
            let mut slots = [0usize; config::MAX_WORKERS];
            let mut k = 0;
            for w in (q..nw).step_by(nq) {
                slots[k] = w;
                k += 1;
            }
            let mut order = slots;
            order[..k].sort_unstable_by_key(|&w| key(w));
            for i in 0..k {
                r.workers[slots[i]] = s.workers[order[i]];
                r.rcl[slots[i]] = s.rcl[order[i]];
            }
        }
        r
    }

    fn encode(&self, s: &State, out: &mut Enc) -> bool {
        encode::encode(out, s, self.cfg.pages as usize);
        true
    }

    fn kernel_states() -> &'static [KernelState] {
        KERNEL_STATES
    }

    /// The catalogue label: its code tree's (`T17`, `T2`, ...).
    fn kernel_of(cfg: &Config) -> String {
        cfg.tree().label().to_string()
    }

    fn switches() -> &'static [SwitchDef] {
        SWITCHES
    }

    fn switches_changed(cfg: &Config) -> Vec<String> {
        let base = Variant::base(cfg.kernel).flags_on();
        let on = cfg.variant.flags_on();
        let mut v: Vec<String> = on
            .iter()
            .filter(|f| !base.contains(f))
            .map(|f| f.to_string())
            .collect();
        v.extend(
            base.iter()
                .filter(|f| !on.contains(f))
                .map(|f| format!("!{f}")),
        );
        v
    }

    fn flip(cfg: &Config, name: &str) -> Option<Config> {
        let mut c = cfg.clone();
        let on = c.variant.flags_on().contains(&name);
        let flag = if on {
            format!("!{name}")
        } else {
            name.to_string()
        };
        c.variant.set(&flag).ok()?;
        Some(c)
    }

    fn task_syntax() -> &'static [&'static str] {
        config::TASK_SYNTAX
    }

    fn key_switches() -> &'static [(&'static str, &'static str)] {
        &[(
            "auto_inval_data",
            "FUSE_AUTO_INVAL_DATA (autoinval.rs): a buffered read first refreshes the attributes, and a GETATTR that shows the server's mtime moved invalidates the page cache",
        )]
    }

    fn key_switch_inert(cfg: &Config, name: &str) -> Option<String> {
        // the option acts through a GETATTR's reply: only reads
        // (fuse_cache_read_iter) and stat send one here
        (name == "auto_inval_data"
            && !cfg
                .tasks
                .iter()
                .any(|t| matches!(t, config::TaskSpec::Read { .. } | config::TaskSpec::Stat)))
        .then(|| "it has no read or stat task (the option acts through their GETATTR)".into())
    }

    fn ops(cfg: &Config) -> Option<Vec<crate::spec::OpInfo>> {
        let mut v = Vec::new();
        for (t, spec) in cfg.tasks.iter().enumerate() {
            let kind = cfg.task_text(t);
            let kind = kind.split_whitespace().next().unwrap_or("").to_string();
            let p = program::build(cfg, spec);
            for l in oplabel::labels(cfg, spec, &p) {
                // a label the labels allow may still be refused by its
                // pairing (fuse_do_setattr's inode_unlock)
                let refused = match l.refused {
                    Some(r) => Some(r.to_string()),
                    None => oplabel::apply(cfg, spec, &p, std::slice::from_ref(&l.label)).err(),
                };
                v.push(crate::spec::OpInfo {
                    task: t,
                    kind: kind.clone(),
                    label: l.label,
                    refused,
                });
            }
        }
        Some(v)
    }

    fn drops(cfg: &Config) -> Vec<String> {
        cfg.drop.clone()
    }

    fn scope(cfg: &Config) -> Vec<(&'static str, String)> {
        scope::scope(cfg)
    }

    fn config_notes(cfg: &Config) -> String {
        let mut v = vec![format!(
            "{} thread{}",
            cfg.daemon_threads,
            if cfg.daemon_threads == 1 { "" } else { "s" }
        )];
        if !cfg.writeback_cache {
            v.push("write-through".into());
        }
        if cfg.folio_blocks > 1 {
            v.push(format!("{} blocks/folio", cfg.folio_blocks));
        }
        if cfg.folio_pages > 1 {
            v.push(format!("{} pages/folio", cfg.folio_pages));
        }
        if cfg.blocks_per_page > 1 {
            v.push(format!("{} blocks/page", cfg.blocks_per_page));
        }
        if cfg.sub.page_size != 4096 {
            v.push(format!("{}K pages", cfg.sub.page_size / 1024));
        }
        if cfg.sub.units_per_page > 1 {
            v.push(format!("{} units/page", cfg.sub.units_per_page));
        }
        if cfg.uneven() {
            let b: Vec<String> = cfg
                .position_bytes()
                .iter()
                .map(|b| b.1.to_string())
                .collect();
            v.push(format!("units {}B", b.join("+")));
        }
        if let Some(b) = cfg.sub.max_read_bytes {
            v.push(format!("max_read {b}B"));
        }
        if let Some(b) = cfg.sub.max_write_bytes {
            v.push(format!("max_write {b}B"));
        }
        if let Some(r) = cfg.max_read {
            v.push(format!("max_read {r}p"));
        }
        if let Some(w) = cfg.max_write {
            v.push(format!("max_write {w}p"));
        }
        if cfg.memcg_v1 {
            v.push("memcg v1".into());
        }
        if cfg.reclaim_env.memcg_v2 {
            v.push("memcg v2".into());
        }
        if cfg.reclaim_env.mglru {
            v.push("MGLRU".into());
        }
        if cfg.reclaim_env.charged_elsewhere {
            v.push("charged elsewhere".into());
        }
        if cfg.parallel_dio {
            v.push("parallel dio".into());
        }
        if cfg.atomic_o_trunc {
            v.push("atomic_o_trunc".into());
        }
        if cfg.direct_io_allow_mmap {
            v.push("allow_mmap".into());
        }
        if let Some(b) = cfg.max_background {
            v.push(format!("max_background {b}"));
        }
        if let Some(c) = cfg.congestion_threshold {
            v.push(format!("congestion {c}"));
        }
        if cfg.async_dio {
            v.push("async_dio".into());
        }
        v.join(", ")
    }

    /// max_background 1 with no congestion threshold: every background
    /// request beyond the first waits on fc->bg_queue, so foreground
    /// requests overtake it; nothing is skipped for congestion.
    fn congested(cfg: &Config) -> Option<(Config, &'static str)> {
        if cfg.max_background.is_some() {
            return None;
        }
        let mut c = cfg.clone();
        c.max_background = Some(1);
        Some((c, "max_background 1"))
    }

    fn actor_label(&self, a: &Action) -> String {
        FuseModel::actor_label(self, a.actor)
    }

    fn step_fn(&self, a: &Action) -> &'static str {
        a.step.kernel_fn(self.cfg.tree())
    }

    fn lanes(&self) -> Vec<String> {
        let mut v: Vec<String> = (0..self.cfg.tasks.len())
            .map(|t| self.actor_label(Actor::Task(t as u8)))
            .collect();
        v.push("/dev/fuse".into());
        v.extend((0..self.cfg.daemon_threads).map(|w| format!("D{w} daemon")));
        v
    }

    fn lane_of(&self, a: &Action) -> usize {
        match a.actor {
            Actor::Task(t) => t as usize,
            Actor::Daemon(w) => self.cfg.tasks.len() + 1 + w as usize,
        }
    }

    fn describe(&self, before: &State, after: &State, a: &Action) -> String {
        self.positions_text(narrate::describe(self, before, after, a))
    }

    fn why(&self, states: &[State], actions: &[Action], prop: &str) -> Vec<String> {
        narrate::why(self, states, actions, prop)
            .into_iter()
            .map(|l| self.positions_text(l))
            .collect()
    }
}
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_aio;
#[cfg(test)]
mod tests_async_ra;
#[cfg(test)]
mod tests_autoinval;
#[cfg(test)]
mod tests_env;
#[cfg(test)]
mod tests_fix_pdio;
#[cfg(test)]
mod tests_forget;
#[cfg(test)]
mod tests_layout;
#[cfg(test)]
mod tests_lfolio;
#[cfg(test)]
mod tests_notify;
#[cfg(test)]
mod tests_split;
#[cfg(test)]
mod tests_subpage;
#[cfg(test)]
mod tests_transport;
#[cfg(test)]
mod tests_uring;
#[cfg(test)]
mod tests_wt_subpage;
