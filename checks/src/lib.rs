//! wbspec: the catalogue of named checks, the runner and the reports,
//! generic over the models' `Spec` trait (no model is named here). The
//! `wbspec` binary (main.rs) is a thin command line over this library.

pub mod bench;
pub mod bitstate;
pub mod catalogue;
pub mod check;
pub mod cite;
pub mod docgen;
pub mod docgen_blocks;
pub mod dropops;
pub mod explain;
pub mod explore;
pub mod facts;
pub mod finding_report;
pub mod findings;
pub mod fingerprint;
pub mod outcome;
pub mod parallel;
pub mod paths;
pub mod pins;
pub mod pool;
pub mod report;
pub mod reproduce;
pub mod results;
pub mod runner;
pub mod search;
pub mod shard;
pub mod show;
pub mod tally;
pub mod trace;
pub mod with;
