//! A sequence diagram of one path for Stateright's Explorer
//! (`Model::as_svg`): the buffer on top, three lanes (the writer,
//! pin_user_pages, /dev/fuse), one dot per step on its lane with the
//! step's kernel function, and the WRITE payloads as they go out.
//! Self-contained SVG (no scripts, no external references).

use super::model::{Action, GupModel};
use super::narrate;
use super::state::State;
use crate::spec::Spec;
use stateright::Expectation;
use std::fmt::Write;

const LANE_W: usize = 120;
const ROW_H: usize = 20;
const TOP: usize = 52;
const LEFT: usize = 10;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub fn sequence_svg(m: &GupModel, states: &[State], actions: &[Action]) -> String {
    let lanes = m.lanes();
    let n = actions.len().min(states.len().saturating_sub(1));
    let lane_x = |i: usize| LEFT + i * LANE_W + 8;
    let row_y = |k: usize| TOP + k * ROW_H;
    let text_x = LEFT + lanes.len() * LANE_W;
    let width = text_x + 560;
    let height = row_y(n + 1) + 10;
    let mut o = String::new();
    o.push_str(&crate::common::svg_open(width, height));
    if let Some(s0) = states.first() {
        let _ = write!(
            o,
            r##"<text x="{LEFT}" y="14" font-weight="bold">buffer {}</text>"##,
            esc(&narrate::layout(m, &s0.layout))
        );
    }
    for (i, name) in lanes.iter().enumerate() {
        let x = lane_x(i);
        let _ = write!(
            o,
            r##"<text x="{x}" y="34" font-weight="bold">{}</text><line x1="{x}" y1="40" x2="{x}" y2="{}" stroke="#bbb"/>"##,
            esc(name),
            row_y(n) + 4
        );
    }
    for (k, a) in actions.iter().enumerate().take(n) {
        let y = row_y(k + 1);
        let x = lane_x(m.lane_of(a));
        let what = m.describe(&states[k], &states[k + 1], a);
        // always-properties that hold before this step and fail after it
        let broken: Vec<&str> = GupModel::property_defs()
            .iter()
            .enumerate()
            .filter(|(i, p)| {
                p.expectation == Expectation::Always
                    && m.condition(*i, &states[k])
                    && !m.condition(*i, &states[k + 1])
            })
            .map(|(_, p)| p.name)
            .collect();
        let mark = if broken.is_empty() {
            String::new()
        } else {
            format!("  violated here: {}", broken.join(", "))
        };
        let _ = write!(
            o,
            r##"<circle cx="{x}" cy="{}" r="4" fill="#333"><title>{}</title></circle><text x="{text_x}" y="{y}">{}{}</text>"##,
            y - 3,
            esc(&what),
            esc(m.step_fn(a)),
            esc(&mark)
        );
    }
    o.push_str("</svg>");
    o
}
