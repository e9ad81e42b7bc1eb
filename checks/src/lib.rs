//! wbspec: the catalogue of named checks, the runner and the reports.
//! The `wbspec` binary (main.rs) is a thin command line over this library.

pub mod catalogue;
pub mod cite;
pub mod explain;
pub mod explore;
pub mod report;
pub mod results;
pub mod runner;
pub mod tally;
pub mod trace;
