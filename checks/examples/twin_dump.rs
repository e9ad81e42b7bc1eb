//! Debugging aid for the Spin twin (spin/fuse.pml): prints every reachable
//! state of a catalogue check in the twin's dump format, one line each,
//! so that `sort -u` of both sides can be diffed when the counts differ.
//! Usage: cargo run --release --example twin_dump -- NAME
use std::collections::{HashSet, VecDeque};
use wbspec_models::fuse::config::MAX_PAGES;
use wbspec_models::fuse::state::{Req, Worker};
use wbspec_models::fuse::{Config, FuseModel, State};

fn find(name: &str) -> toml::Table {
    if let Ok(text) = std::fs::read_to_string(name) {
        // a file holding one check's keys (without [[check]])
        return text.parse().unwrap();
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogue");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let doc: toml::Table = text.parse().unwrap();
        if let Some(toml::Value::Array(checks)) = doc.get("check") {
            for c in checks {
                let t = c.as_table().unwrap();
                if t.get("name").and_then(|v| v.as_str()) == Some(name) {
                    let mut t = t.clone();
                    for k in [
                        "name",
                        "question",
                        "states",
                        "witnesses",
                        "tags",
                        "expect",
                        "pair",
                        "model",
                    ] {
                        t.remove(k);
                    }
                    return t;
                }
            }
        }
    }
    panic!("no check {name}")
}

fn req(r: &Req) -> (u8, u8, u8, u8) {
    match *r {
        Req::CacheWrite { first, n, sent } => (1, first, n, sent),
        Req::Setattr { task, size } => (2, task, size, 0),
        Req::DirectWrite { task, first, n } => (3, task, first, n),
        Req::Read { task, first, n } => (4, task, first, n),
        Req::Fsync { task } => (5, task, 0, 0),
        Req::Flush { task } => (6, task, 0, 0),
        _ => (99, 0, 0, 0),
    }
}

fn line(m: &FuseModel, s: &State) -> String {
    let np = m.cfg.pages as usize;
    let mut o = format!("I{} U{} W{} Q", s.i_size, s.size_unstable as u8, s.writectr);
    for w in s.queued.iter() {
        o += &format!("{}.{},", w.first, w.n);
    }
    o += &format!(" O{} P", s.rwsem.owner);
    for p in 0..np {
        o += &format!("{}.{},", s.pages[p].flags, s.pages[p].ver);
    }
    o += " T";
    for t in s.tasks.iter() {
        o += &format!(
            "{}.{}.{}.{}.{}.{}.{}",
            t.pc, t.ph, t.cur, t.bfirst, t.bn, t.reply, t.saved
        );
        for p in 0..np {
            o += &format!(".{}", t.before[p]);
        }
        for p in 0..np {
            o += &format!(".{}", t.snap[p]);
        }
        o += &format!(".{};", t.applied as u8);
    }
    o += " F";
    for r in s.fuse_q.iter() {
        let (k, a, b, c) = req(r);
        o += &format!("{k}.{a}.{b}.{c},");
    }
    o += " D";
    for w in 0..m.cfg.daemon_threads as usize {
        let (st, (k, a, b, c), pay) = match s.workers[w] {
            Worker::Idle => (0, (0, 0, 0, 0), [255u8; MAX_PAGES]),
            Worker::Busy { req: r, payload } => (1, req(&r), payload),
            Worker::Ending { first, n } => (2, (0, first, n, 0), [255u8; MAX_PAGES]),
        };
        o += &format!("{st}.{k}.{a}.{b}.{c}");
        for p in pay.iter().take(np) {
            o += &format!(".{p}");
        }
        o += ";";
    }
    o += &format!(" S{} V", s.srv_size);
    for p in 0..np {
        o += &format!(
            "{}.{}.{}.{}.{},",
            s.srv[p], s.hist[p], s.fin[p], s.sup[p], s.drops[p]
        );
    }
    o += &format!(" O{} B{} E{}", s.wrote_once, s.viol, s.ev as u8);
    o
}

fn main() {
    let name = std::env::args().nth(1).expect("check name");
    let cfg = Config::from_table(&find(&name)).unwrap();
    let m = FuseModel::new(cfg).unwrap();
    let init = m.initial();
    let mut seen = HashSet::new();
    let mut q = VecDeque::new();
    seen.insert(init);
    q.push_back(init);
    let mut acts = Vec::new();
    while let Some(s) = q.pop_front() {
        println!("{}", line(&m, &s));
        acts.clear();
        m.enabled(&s, &mut acts);
        for a in &acts {
            if let Some(n) = m.step(&s, *a) {
                if seen.insert(n) {
                    q.push_back(n);
                }
            }
        }
    }
    eprintln!("{} states", seen.len());
}
