//! The trace header states the background limits the kernel holds: for
//! every (max_background, congestion_threshold) that a scenario, a random
//! seed or `record`'s default gives the server, a fresh mount's
//! /sys/fs/fuse/connections/N/{max_background,congestion_threshold} read
//! what the header of its trace says (docs/findings.md, M-ra-prev-pos:
//! a header once said 8 where the kernel had 1). Root and /dev/fuse; a
//! skip without them unless WBSPEC_REQUIRE_KERNEL.
use std::collections::BTreeSet;

use wbspec_harness::require::{may_run, KERNEL};
use wbspec_harness::runner::{cannot_run, serve};
use wbspec_harness::server::ServerConfig;

#[test]
fn every_configured_limit_is_the_kernels() {
    if !may_run(KERNEL, "header against fusectl", cannot_run()) {
        return;
    }
    let mut pairs = BTreeSet::new();
    let mut add = |c: &ServerConfig| pairs.insert((c.max_background, c.congestion_threshold));
    add(&ServerConfig::default());
    for sc in wbspec_harness::scenarios::all() {
        let mut c = ServerConfig::default();
        (sc.config)(&mut c);
        add(&c);
    }
    for seed in 0..400 {
        let mut c = ServerConfig::default();
        wbspec_harness::random::config_of(seed, &mut c);
        add(&c);
    }
    assert!(pairs.len() >= 3, "{pairs:?}");
    let recorder = std::path::PathBuf::from(env!("CARGO_BIN_EXE_fuse-recorder"));
    for (bg, cong) in pairs {
        let cfg = ServerConfig {
            max_background: bg,
            congestion_threshold: cong,
            ..ServerConfig::default()
        };
        let mut s = serve("header_truth", &cfg, &recorder).unwrap_or_else(|e| panic!("{e:?}"));
        let conn = s.conn().expect("the mount's connection");
        let got: Vec<u64> = ["max_background", "congestion_threshold"]
            .iter()
            .map(|f| wbspec_harness::mount::fusectl_read(conn, f).unwrap())
            .collect();
        let header = std::fs::read_to_string(&s.trace).unwrap();
        let h: serde_json::Value =
            serde_json::from_str(header.lines().next().expect("a header line")).unwrap();
        let said = [
            h["config"]["max_background"].as_u64(),
            h["config"]["congestion_threshold"].as_u64(),
        ];
        s.cleanup();
        assert_eq!(got, [bg as u64, cong as u64], "kernel for ({bg}, {cong})");
        assert_eq!(said, [Some(bg as u64), Some(cong as u64)], "header");
    }
}
