//! How a scenario check ends: [`Fail`] (which check, and why), [`Res`],
//! and [`skip`] for a scenario this machine cannot run. Shared by the
//! scenario context (ctx.rs), the trace queries (trace_query.rs) and the
//! runner, which turns them into an outcome.

/// A failed check: which one, and why.
#[derive(Debug, Clone)]
pub struct Fail {
    pub check: String,
    pub detail: String,
}

impl From<String> for Fail {
    fn from(detail: String) -> Fail {
        Fail {
            check: "harness".into(),
            detail,
        }
    }
}

pub type Res = Result<(), Fail>;

/// The `check` of a [`Fail`] that is not a failure: the scenario cannot
/// run on this machine (a missing kernel feature), said in `detail`.
pub const SKIP: &str = "skip";

/// Stop a scenario as skipped, saying why.
pub fn skip(why: impl Into<String>) -> Fail {
    Fail {
        check: SKIP.into(),
        detail: why.into(),
    }
}
