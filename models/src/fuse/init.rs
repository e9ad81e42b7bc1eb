//! Building the FUSE model from a [`Config`], and its initial state: the
//! inode, page cache and server file before the workload starts (the
//! catalogue's `init_size`, `cached` and `dirty`), one program per task
//! (program.rs), and the folio size that the large-folio order cap leaves
//! (lfolio.rs). model.rs holds the types and the step dispatch; keeping
//! construction here keeps model.rs from importing a kernel area that
//! itself imports model.rs.

use super::config::{Config, MAX_PAGES, MAX_WORKERS};
use super::model::{version_of, FuseModel};
use super::program::build;
use super::state::*;

impl FuseModel {
    pub fn new(cfg: Config) -> Result<FuseModel, String> {
        cfg.validate()?;
        let mut programs = Vec::new();
        for t in &cfg.tasks {
            programs.push(super::oplabel::apply(&cfg, t, &build(&cfg, t), &cfg.drop)?);
        }
        let fsize = super::lfolio::folio_size(&cfg);
        let lay = cfg.layout();
        let pred = (0..cfg.tasks.len()).map(|t| cfg.pred(t)).collect();
        let vers = if cfg.versions.is_empty() {
            (0..cfg.tasks.len()).map(version_of).collect()
        } else {
            cfg.versions.clone()
        };
        Ok(FuseModel {
            cfg,
            programs,
            fsize,
            lay,
            pred,
            vers,
        })
    }

    pub fn initial(&self) -> State {
        let c = &self.cfg;
        let mut pages = [Page::default(); MAX_PAGES];
        let mut srv = [V_ZERO; MAX_PAGES];
        let mut hist = [0u64; MAX_PAGES];
        let mut fin = [0u16; MAX_PAGES];
        let mut sup = [0u16; MAX_PAGES];
        for p in 0..c.pages as usize {
            let v = if p < c.init_size as usize {
                V_INIT
            } else {
                V_ZERO
            };
            srv[p] = v;
            hist[p] = v as u64;
            fin[p] = 1 << v;
            if c.cached & (1 << p) != 0 {
                pages[p].flags = PG_PRESENT | PG_UPTODATE;
                pages[p].ver = v;
            }
        }
        let mut i_size = c.init_size;
        // Pages dirty before the workload: data version 1 is already on the
        // server, so a dirty page holds a distinct earlier write. We give
        // it the version of a pseudo-writer 15 (never a task's version).
        for p in 0..c.pages as usize {
            if c.dirty & (1 << p) != 0 {
                pages[p].set(PG_DIRTY);
                pages[p].ver = V_PREDIRTY;
                hist[p] = hist_push(hist[p], V_PREDIRTY);
                sup[p] = fin[p];
                fin[p] |= 1 << V_PREDIRTY;
                i_size = i_size.max(p as u8 + 1);
            }
        }
        State {
            i_size,
            size_unstable: false,
            writectr: 0,
            queued: Default::default(),
            rwsem: Default::default(),
            pages,
            tasks: (0..c.tasks.len()).map(|_| Task::new()).collect(),
            fuse_q: Default::default(),
            bg_q: Default::default(),
            tmp: [0; MAX_PAGES],
            aux: Default::default(),
            l_end: [0; MAX_PAGES],
            workers: [Worker::Idle; MAX_WORKERS],
            rcl: [Reclaim::default(); MAX_WORKERS],
            srv_size: c.init_size,
            srv,
            hist,
            fin,
            sup,
            drops: [0; MAX_PAGES],
            wrote_once: 0,
            viol: 0,
            lf_viol: 0,
            ev: Event::None,
            iocachectr: c.cached_opens() as i8,
            cache_io_mode: c.cached_opens() > 0,
            ra_prev: [0; MAX_FDS],
            ra_win: [RaWin::FRESH; MAX_FDS],
            wb_err: 0,
            as_eio: false,
            lost: 0,
            losses: 0,
            sizes: if c.attr_readers() {
                (1 << c.init_size) | (1 << i_size)
            } else {
                0
            },
            viol2: 0,
            conn: 0,
            intr: 0,
            bailed: 0,
            utag: 0,
            bgtag: 0,
            away: 0,
            qsel: 0,
            mtime: 0,
            ext0: 0,
        }
    }
}
