//! Direct-I/O page extraction (fs/fuse/file.c, fuse_get_user_pages): one
//! write(2) of a user buffer to a FOPEN_DIRECT_IO file, for every buffer
//! of up to four virtual pages built from a few folios of different
//! orders. Seed 003's question: does the request's folio descriptor list
//! describe exactly the buffer's bytes when the buffer's pages come from
//! large folios in any order (Willy's "A0 A1 B0 A3")? See
//! docs/model-fuse-gup.md.
//!
//! Not a concurrency model: the nondeterminism is the buffer (one initial
//! state per layout) and pin_user_pages_fast pinning fewer pages than
//! asked (`short_pins`).

pub mod config;
pub mod model;
pub mod narrate;
pub mod properties;
pub mod state;
pub mod svg;

pub use config::{Config, Kernel, Variant};
pub use model::{Action, GupModel};
pub use state::State;

use crate::spec::{self, KernelState, PropertyDef, Spec, SwitchDef, SwitchKind};

/// Version of the step semantics, recorded in every saved trace.
pub const MODEL_VERSION: &str = "fuse-gup-1";

impl stateright::Model for GupModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        self.inits.clone()
    }

    fn actions(&self, s: &State, out: &mut Vec<Action>) {
        self.enabled(s, out);
    }

    fn next_state(&self, s: &State, a: Action) -> Option<State> {
        self.step(s, a)
    }

    fn format_action(&self, a: &Action) -> String {
        format!("T0 write: {}", narrate::kernel_fn(self, a))
    }

    fn as_svg(&self, path: stateright::Path<State, Action>) -> Option<String> {
        let actions = path.clone().into_actions();
        Some(svg::sequence_svg(self, &path.into_states(), &actions))
    }

    fn properties(&self) -> Vec<stateright::Property<Self>> {
        spec::stateright_properties::<Self>()
    }
}

const KERNEL_STATES: &[KernelState] = &[KernelState { name: "R1" }, KernelState { name: "M" }];

const SWITCHES: &[SwitchDef] = &[
    SwitchDef { name: "fix_folio_offset", kind: SwitchKind::Kernel, description: "7a4f54187373: offset inside the folio, one page's bytes per descriptor" },
    SwitchDef { name: "p_v2", kind: SwitchKind::Proposal, description: "large folios v2 patch 10 (seed 003): a descriptor to the folio's end, skipping its pages" },
    SwitchDef { name: "p_collate", kind: SwitchKind::Proposal, description: "large folios v3-v6 patch 10: collate pages of the previous descriptor's folio" },
    SwitchDef { name: "p_collate_contig", kind: SwitchKind::Proposal, description: "collate only a folio's next page (David Hildenbrand's suggestion on v5; no code posted)" },
    SwitchDef { name: "mut_no_start_reset", kind: SwitchKind::Mutant, description: "per-page loop without start = 0" },
    SwitchDef { name: "mut_len_ignores_start", kind: SwitchKind::Mutant, description: "per-page loop with len = min(ret, PAGE_SIZE)" },
    SwitchDef { name: "mut_extract_ignores_nr_pages", kind: SwitchKind::Mutant, description: "iov_iter_extract_pages asked for max_pages, not max_pages - nr_pages" },
    SwitchDef { name: "mut_unpin_per_folio", kind: SwitchKind::Mutant, description: "fuse_release_user_pages unpins each distinct folio once" },
];

impl Spec for GupModel {
    type Config = Config;
    const NAME: &'static str = "fuse-gup";
    const VERSION: &'static str = MODEL_VERSION;

    fn parse_config(table: &toml::Table) -> Result<Config, String> {
        Config::from_table(table)
    }

    fn build(cfg: &Config) -> Result<Self, String> {
        GupModel::new(cfg.clone())
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

    fn kernel_states() -> &'static [KernelState] {
        KERNEL_STATES
    }

    fn kernel_of(cfg: &Config) -> String {
        format!("{:?}", cfg.kernel)
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
        c.kernel = Kernel::of(&c.variant);
        c.validate().ok()?;
        Some(c)
    }

    fn scope(cfg: &Config) -> Vec<(&'static str, String)> {
        vec![
            ("buffers", Self::config_notes(cfg)),
            (
                "not modelled",
                "error paths and async I/O, writev and kernel iterators, the \
                 read direction, folios and buffers over 4 pages, what GUP \
                 does to the pages (docs/model-fuse-gup.md, section 7)"
                    .to_string(),
            ),
        ]
    }

    fn config_notes(cfg: &Config) -> String {
        let orders: Vec<String> = cfg
            .folios
            .iter()
            .enumerate()
            .map(|(f, o)| format!("{}:{}p", config::folio_name(f as u8), 1 << o))
            .collect();
        let mut v = vec![format!("folios {}", orders.join(" "))];
        if cfg.buffers.is_empty() {
            v.push(format!("all buffers <= {} pages", cfg.max_vpages));
        } else {
            let b: Vec<String> = cfg
                .buffers
                .iter()
                .map(|b| {
                    let p: Vec<String> = b.pages.iter().map(|p| p.to_string()).collect();
                    match b.len {
                        Some(l) => format!("{} @{}+{}", p.join(" "), b.start, l),
                        None => p.join(" "),
                    }
                })
                .collect();
            v.push(format!("buffer {}", b.join(", ")));
        }
        if cfg.units > 1 {
            v.push(format!("1/{} page offsets", cfg.units));
        }
        v.push(format!("max_pages {}", cfg.max_pages));
        if (cfg.max_write as usize) < cfg.max_vpages as usize * cfg.units as usize {
            let bytes = cfg.max_write as u32 * 4096 / cfg.units as u32;
            v.push(format!("max_write {}K", bytes / 1024));
        }
        if cfg.short_pins {
            v.push("short pins".into());
        }
        v.join(", ")
    }

    fn actor_label(&self, _a: &Action) -> String {
        "T0 write".into()
    }

    fn step_fn(&self, a: &Action) -> &'static str {
        narrate::kernel_fn(self, a)
    }

    fn lanes(&self) -> Vec<String> {
        vec![
            "T0 write".into(),
            "pin_user_pages".into(),
            "/dev/fuse".into(),
        ]
    }

    fn lane_of(&self, a: &Action) -> usize {
        match a {
            Action::Extract { .. } => 1,
            Action::Send => 2,
            _ => 0,
        }
    }

    fn describe(&self, before: &State, after: &State, a: &Action) -> String {
        narrate::describe(self, before, after, a)
    }

    fn why(&self, states: &[State], actions: &[Action], prop: &str) -> Vec<String> {
        narrate::why(self, states, actions, prop)
    }

    fn render(&self, s: &State) -> String {
        narrate::render(self, s)
    }
}

#[cfg(test)]
mod tests;
