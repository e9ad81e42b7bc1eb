//! A sequence diagram of one path for Stateright's Explorer: one lane per
//! actor lane (`Spec::lanes`), one row per step with the step's kernel
//! function on its lane, and a red mark on every row where an always
//! property is first violated. Self-contained SVG.

use super::model::{Action, Actor, NowaitModel};
use super::narrate;
use super::properties::PROPERTIES;
use super::state::State;
use super::step::Step;
use crate::spec::Spec;
use stateright::Expectation;
use std::fmt::Write;

const LANE_W: usize = 190;
const ROW_H: usize = 20;
const TOP: usize = 40;
const LEFT: usize = 10;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub fn sequence_svg(m: &NowaitModel, states: &[State], actions: &[Action]) -> String {
    let lanes = m.lanes();
    let n = actions.len().min(states.len().saturating_sub(1));
    let width = LEFT * 2 + lanes.len() * LANE_W + 240;
    let height = TOP + (n + 1) * ROW_H + 34;
    let x = |i: usize| LEFT + i * LANE_W + 8;
    let mut o = String::new();
    o.push_str(&crate::common::svg_open(width, height));
    for (i, name) in lanes.iter().enumerate() {
        let _ = write!(
            o,
            r##"<text x="{}" y="20" font-weight="bold">{}</text><line x1="{}" y1="26" x2="{}" y2="{}" stroke="#bbb"/>"##,
            x(i),
            esc(name),
            x(i),
            x(i),
            height - 10
        );
    }
    for k in 0..n {
        let a = &actions[k];
        let y = TOP + (k + 1) * ROW_H;
        let lane = m.lane_of(a);
        let broke: Vec<&str> = PROPERTIES
            .iter()
            .enumerate()
            .filter(|(i, p)| {
                p.expectation == Expectation::Always
                    && m.condition(*i, &states[k])
                    && !m.condition(*i, &states[k + 1])
            })
            .map(|(_, p)| p.name)
            .collect();
        let colour = if broke.is_empty() { "#333" } else { "#c00" };
        let mut label = a.step.kernel_fn().to_string();
        if label.len() > 34 {
            label.truncate(33);
            label.push('…');
        }
        if !broke.is_empty() {
            label.push_str(&format!(" ✗ violated here: {}", broke.join(", ")));
        }
        let _ = write!(
            o,
            r##"<circle cx="{}" cy="{}" r="3" fill="{colour}"/><text x="{}" y="{}" fill="{colour}">{}: {}</text>"##,
            x(lane),
            y - 3,
            x(lane) + 6,
            y,
            k + 1,
            esc(&label)
        );
    }
    // tasks blocked at the end of the path (a deadlock's waiters)
    if let Some(last) = states.get(n) {
        for t in 0..last.tasks.len() {
            if let Some(w) = narrate::blocked_on(m, last, t) {
                let actor = if last.tasks[t].wq {
                    Actor::Iowq(t as u8)
                } else {
                    Actor::Task(t as u8)
                };
                let lane = m.lane_of(&Action {
                    actor,
                    step: Step::IlockIocb,
                });
                let _ = write!(
                    o,
                    r##"<text x="{}" y="{}" fill="#c00">blocked in {}</text>"##,
                    x(lane) + 6,
                    TOP + (n + 1) * ROW_H + 14,
                    esc(&w)
                );
            }
        }
    }
    o.push_str("</svg>");
    o
}
