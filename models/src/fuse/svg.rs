//! A sequence diagram of one path for Stateright's Explorer
//! (`Model::as_svg`): one lane per kernel task, the /dev/fuse queue, one
//! lane per daemon worker. Requests and replies are arrows, a task that
//! is blocked (not done, no step enabled) is a red span on its lane, a
//! request waiting on /dev/fuse and a busy daemon worker are grey spans.
//! Self-contained SVG (no scripts, no external references), a few KB.

use super::model::{Actor, FuseModel};
use super::properties::{hit, PROPERTIES};
use super::state::{State, Worker, CONN_ABORTED, NONE};
use super::step::Step;
use super::Action;
use std::fmt::Write;

const LANE_W: usize = 180;
const ROW_H: usize = 20;
const TOP: usize = 40;
const LEFT: usize = 10;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Renders the path `states[0] -a0-> states[1] -a1-> …` as an SVG
/// sequence diagram.
pub fn sequence_svg(m: &FuseModel, states: &[State], actions: &[Action]) -> String {
    let nt = m.cfg.tasks.len();
    let nw = m.cfg.daemon_threads as usize;
    let fuse_lane = nt;
    let lanes = nt + 1 + nw;
    let lane_x = |i: usize| LEFT + i * LANE_W + 8;
    let actor_lane = |a: Actor| match a {
        Actor::Task(t) => t as usize,
        Actor::Daemon(w) => nt + 1 + w as usize,
    };
    let n = actions.len().min(states.len().saturating_sub(1));
    let row_y = |k: usize| TOP + k * ROW_H; // step k (1-based)
    let width = LEFT * 2 + lanes * LANE_W;
    let height = row_y(n + 1) + 28;
    let mut o = String::new();
    o.push_str(&crate::common::svg_open(width, height));
    o.push_str(
        r##"<defs><marker id="wbspec-arrow" markerWidth="8" markerHeight="8" refX="7" refY="3" orient="auto"><path d="M0,0 L7,3 L0,6 z" fill="#333"/></marker></defs>"##,
    );
    // lane headers and lines
    for i in 0..lanes {
        let x = lane_x(i);
        let name = if i < nt {
            format!("T{i} {}", m.cfg.tasks[i])
        } else if i == fuse_lane {
            "/dev/fuse".to_string()
        } else {
            format!("D{} daemon", i - nt - 1)
        };
        let _ = write!(
            o,
            r##"<text x="{x}" y="16" font-weight="bold">{}</text><line x1="{x}" y1="24" x2="{x}" y2="{}" stroke="#bbb"/>"##,
            esc(&name),
            row_y(n + 1)
        );
    }
    // spans: blocked tasks, requests waiting on /dev/fuse, busy workers
    for (i, s) in states.iter().enumerate().take(n + 1) {
        let y = row_y(i) + 3;
        let h = ROW_H - 6;
        for t in 0..nt.min(s.tasks.len()) {
            if !m.task_done(s, t) && m.exec_task(s, t).is_none() {
                let what = m
                    .current_op(s, t)
                    .map(|op| format!("{op:?}"))
                    .unwrap_or_default();
                let _ = write!(
                    o,
                    r##"<rect x="{}" y="{y}" width="6" height="{h}" fill="#d33" opacity="0.7"><title>T{t} blocked in {}</title></rect>"##,
                    lane_x(t) - 3,
                    esc(&what)
                );
            }
        }
        if !s.fuse_q.is_empty() {
            let q: Vec<String> = s.fuse_q.iter().map(|r| r.to_string()).collect();
            // after fuse_abort_conn no daemon reads /dev/fuse: what is
            // queued then is stuck, like a blocked task
            let (fill, what) = if s.conn & CONN_ABORTED != 0 {
                ("#d33", "stuck after the abort (nobody reads /dev/fuse)")
            } else {
                ("#888", "queued")
            };
            let _ = write!(
                o,
                r##"<rect x="{}" y="{y}" width="6" height="{h}" fill="{fill}"><title>{what}: {}</title></rect>"##,
                lane_x(fuse_lane) - 3,
                esc(&q.join(", "))
            );
        }
        for w in 0..nw {
            if m.reclaim_blocked(s, w) {
                // a worker asleep in reclaim: blocked, like a task
                let _ = write!(
                    o,
                    r##"<rect x="{}" y="{y}" width="6" height="{h}" fill="#d33" opacity="0.7"><title>D{w} blocked in folio_wait_writeback (reclaim) on p{}</title></rect>"##,
                    lane_x(nt + 1 + w) - 3,
                    s.rcl[w].wait
                );
                continue;
            }
            if let Worker::Busy { req, .. } = s.workers[w] {
                let _ = write!(
                    o,
                    r##"<rect x="{}" y="{y}" width="6" height="{h}" fill="#888"><title>D{w} handling {}</title></rect>"##,
                    lane_x(nt + 1 + w) - 3,
                    esc(&req.to_string())
                );
            }
        }
    }
    // steps and arrows
    let arrow = |o: &mut String, from: usize, to: usize, y: usize, dashed: bool| {
        let (x1, x2) = (lane_x(from), lane_x(to));
        let x2 = if x2 > x1 { x2 - 4 } else { x2 + 4 };
        let _ = write!(
            o,
            r##"<line x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" stroke="#333"{} marker-end="url(#wbspec-arrow)"/>"##,
            if dashed {
                r##" stroke-dasharray="4,2""##
            } else {
                ""
            }
        );
    };
    for (k, a) in actions.iter().enumerate().take(n) {
        let (b, s) = (&states[k], &states[k + 1]);
        let y = row_y(k + 1);
        let lane = actor_lane(a.actor);
        let mut label = format!("{} {}", k + 1, a.step.kernel_fn(m.cfg.tree()));
        match a.actor {
            Actor::Task(t) => {
                // a task step only appends to /dev/fuse
                let sent: Vec<String> = s
                    .fuse_q
                    .iter()
                    .skip(b.fuse_q.len())
                    .map(|r| r.to_string())
                    .collect();
                if !sent.is_empty() {
                    arrow(&mut o, t as usize, fuse_lane, y, false);
                    label = format!("{} {}", k + 1, sent.join(" "));
                }
            }
            Actor::Daemon(w) => match (b.workers[w as usize], s.workers[w as usize]) {
                // direct reclaim inside the handler: no message
                _ if matches!(a.step, Step::ShrinkFolio { .. } | Step::ReclaimWaitDone) => {}
                (Worker::Idle, Worker::Busy { req, .. }) => {
                    arrow(&mut o, fuse_lane, lane, y, false);
                    label = format!("{} reads {req}", k + 1);
                }
                (Worker::Busy { req, .. }, _) => {
                    // the reply goes to the task whose reply slot it
                    // filled; a writeback WRITE's goes back to the kernel
                    // (fuse_writepage_end), drawn at /dev/fuse
                    let to = (0..nt.min(s.tasks.len()))
                        .find(|&t| b.tasks[t].reply == NONE && s.tasks[t].reply != NONE)
                        .unwrap_or(fuse_lane);
                    arrow(&mut o, lane, to, y, true);
                    label = format!("{} reply {}", k + 1, req.opname());
                }
                _ => {}
            },
        }
        let _ = write!(
            o,
            r##"<circle cx="{}" cy="{y}" r="3" fill="#333"/><text x="{}" y="{}">{}</text>"##,
            lane_x(lane),
            lane_x(lane) + 6,
            y - 3,
            esc(&label)
        );
    }
    // which always-properties the last state violates
    if let Some(last) = states.get(n) {
        let bad: Vec<&str> = PROPERTIES
            .iter()
            .enumerate()
            .filter(|(i, p)| p.expectation == stateright::Expectation::Always && hit(*i, m, last))
            .map(|(_, p)| p.name)
            .collect();
        let text = if bad.is_empty() {
            "red: task blocked; grey: request queued or being handled".to_string()
        } else {
            format!("violated here: {}", bad.join(", "))
        };
        let _ = write!(
            o,
            r##"<text x="{LEFT}" y="{}" fill="{}">{}</text>"##,
            row_y(n + 1) + 18,
            if bad.is_empty() { "#555" } else { "#c00" },
            esc(&text)
        );
    }
    o.push_str("</svg>");
    o
}
