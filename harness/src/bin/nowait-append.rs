//! `nowait-append`: the nowait model's real-kernel scenario (see
//! `wbspec_harness::nowait_rk`). Prints a JSON report; exits 0 when every
//! io_uring O_APPEND record is in the file exactly once, 1 when not, 2 on
//! a setup error, 0 with "skipped" when the machine cannot run it.
//!
//! Options: --records N, --blocks N, --depth N, --max-bytes N (0: leave
//! the loop bdi alone), --no-plain (no write(2) appender).

use wbspec_harness::nowait_rk::{run, unavailable, Config};

fn main() {
    let mut cfg = Config::default();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let num = |i: usize| -> u64 {
            match args.get(i + 1).and_then(|v| v.parse::<u64>().ok()) {
                Some(v) => v,
                None => {
                    eprintln!("nowait-append: {} needs a number", args[i]);
                    std::process::exit(2);
                }
            }
        };
        match args[i].as_str() {
            "--records" => cfg.records = num(i) as u32,
            "--blocks" => cfg.blocks = num(i) as u32,
            "--depth" => cfg.depth = num(i) as u32,
            "--max-bytes" => cfg.max_bytes = num(i),
            "--no-plain" => {
                cfg.plain_appender = false;
                i += 1;
                continue;
            }
            a => {
                eprintln!("nowait-append: unknown option {a}");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    if cfg.records == 0 || cfg.blocks == 0 || cfg.depth == 0 || cfg.depth > 64 {
        eprintln!("nowait-append: records, blocks >= 1 and depth 1..=64");
        std::process::exit(2);
    }
    if let Some(why) = unavailable() {
        println!("skipped: {why}");
        return;
    }
    match run(&cfg) {
        Ok(r) => {
            println!("{}", serde_json::to_string_pretty(&r).unwrap());
            std::process::exit(if r.exactly_once() { 0 } else { 1 });
        }
        Err(e) => {
            eprintln!("nowait-append: {e}");
            std::process::exit(2);
        }
    }
}
