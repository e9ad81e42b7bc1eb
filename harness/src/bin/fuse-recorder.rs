//! `fuse-recorder --mount DIR --ctl SOCK --trace FILE [--scenario NAME] [config options]`
//!
//! Mounts the recording FUSE server at DIR and serves until unmounted.
//! Config options: --no-wbc --dio-allow-mmap --atomic-o-trunc --no-dio-on-odirect
//! --keep-cache --max-write B --max-bg N --cong N --hold-timeout-ms MS --ttl-ms MS
use std::path::PathBuf;
use wbspec_harness::server::{run_server, ServerConfig};

fn usage(msg: &str) -> ! {
    eprintln!("fuse-recorder: {msg}");
    eprintln!(
        "usage: fuse-recorder --mount DIR --ctl SOCK --trace FILE [--scenario NAME] \
         [--no-wbc] [--dio-allow-mmap] [--atomic-o-trunc] [--no-dio-on-odirect] [--keep-cache] \
         [--max-write B] [--max-bg N] [--cong N] [--hold-timeout-ms MS] [--ttl-ms MS]"
    );
    std::process::exit(2)
}

fn main() {
    let mut cfg = ServerConfig::default();
    let (mut mnt, mut ctl, mut trace) = (None, None, None);
    let mut scenario = String::from("manual");
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--mount" => mnt = it.next().map(PathBuf::from),
            "--ctl" => ctl = it.next().map(PathBuf::from),
            "--trace" => trace = it.next().map(PathBuf::from),
            "--scenario" => {
                scenario = it
                    .next()
                    .unwrap_or_else(|| usage("--scenario needs a value"))
            }
            "-h" | "--help" => usage("help"),
            other => match cfg.parse_arg(other, &mut it) {
                Ok(true) => {}
                Ok(false) => usage(&format!("unknown argument {other:?}")),
                Err(e) => usage(&e),
            },
        }
    }
    let (Some(mnt), Some(ctl), Some(trace)) = (mnt, ctl, trace) else {
        usage("--mount, --ctl and --trace are required")
    };
    if let Err(e) = cfg.check() {
        usage(&e);
    }
    if let Err(e) = run_server(&mnt, &ctl, &trace, &scenario, cfg) {
        eprintln!("fuse-recorder: {e}");
        std::process::exit(1);
    }
}
