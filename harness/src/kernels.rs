//! Which model state a running kernel stands for: the `[[release]]`
//! table of checks/facts/kernels.toml (the one file every version fact
//! lives in), compiled in. The scenario runner asserts its kernel checks,
//! and `conform` judges traces, only on a release this table lists.
use serde::Deserialize;
use std::sync::OnceLock;

/// The facts file as compiled in.
pub const TEXT: &str = include_str!("../../checks/facts/kernels.toml");

/// One `[[release]]` entry.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// "MAJOR.MINOR".
    pub series: String,
    /// First stable patch level covered.
    pub from: u32,
    /// Last stable patch level covered; none: every later one.
    #[serde(default)]
    pub to: Option<u32>,
    pub model: String,
    /// A `[[state]]` name of `model`.
    pub state: String,
    /// Variant flags on top of the state's own.
    pub flags: Vec<String>,
    /// What reports print.
    pub label: String,
    pub source: String,
    pub gaps: Vec<String>,
    pub checked: String,
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    release: Vec<Release>,
}

/// Every `[[release]]` entry, in file order. The file is checked by
/// checks/tests/facts.rs; a malformed table here is a build-time mistake,
/// so it reads as no entry rather than a panic.
pub fn releases() -> &'static [Release] {
    static R: OnceLock<Vec<Release>> = OnceLock::new();
    R.get_or_init(|| {
        toml::from_str::<File>(TEXT)
            .map(|f| f.release)
            .unwrap_or_default()
    })
}

/// (major, minor, patch) of a release string such as
/// "6.12.117+deb12-cloud-amd64" or "6.18.0-rc3"; a missing patch is 0.
pub fn version_of(release: &str) -> Option<(u32, u32, u32)> {
    let mut it = release.split(|c: char| !c.is_ascii_digit());
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    // "6.1.0-57-cloud-amd64": Debian's 6.1 packages put the ABI number,
    // not the patch level, in the release; the patch level is unknowable
    // from uname -r then, and only entries with from = 0 and no `to`
    // match it (see state_of). An empty field ("6.12-rc7") is no patch
    // level; one past u32 makes no version, not patch level 0.
    let patch = match it.next() {
        None | Some("") => 0,
        Some(p) => p.parse().ok()?,
    };
    Some((major, minor, patch))
}

/// The entry `release` falls in, if any.
pub fn state_of(release: &str) -> Option<&'static Release> {
    let (ma, mi, p) = version_of(release)?;
    let series = format!("{ma}.{mi}");
    // A mainline release candidate ("6.1.0-rc3") precedes the release
    // the table's entries were read at: no model state. (A stable -rc,
    // "6.12.64-rc1", carries that release's queued patches.)
    let rc = [format!("{series}.0-rc"), format!("{series}-rc")]
        .iter()
        .any(|p| release.starts_with(p.as_str()));
    if rc {
        return None;
    }
    // Debian's 6.1 release strings are "6.1.0-ABI-flavour": patch level 0
    // there says nothing about the stable patch level.
    let debian_abi = release.starts_with(&format!("{series}.0-"));
    releases().iter().find(|r| {
        r.series == series
            && if debian_abi {
                r.from == 0 && r.to.is_none()
            } else {
                p >= r.from && r.to.is_none_or(|t| p <= t)
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_names_known_states() {
        assert!(releases().len() >= 4, "{:?}", releases());
        for r in releases() {
            assert!(
                wbspec_models::fuse::Kernel::parse(&r.state).is_some(),
                "{r:?}"
            );
            let mut v = wbspec_models::fuse::Variant::base(
                wbspec_models::fuse::Kernel::parse(&r.state).unwrap(),
            );
            for f in &r.flags {
                v.set(f).unwrap_or_else(|e| panic!("{r:?}: {e}"));
            }
        }
    }

    #[test]
    fn releases_map_to_their_states() {
        let label = |r: &str| state_of(r).map(|s| s.label.as_str());
        assert_eq!(label("6.18.44"), Some("T''"));
        assert_eq!(label("6.18.3-foo"), Some("T''"));
        assert_eq!(label("6.18.2"), None);
        assert_eq!(
            label("6.12.117+deb12-cloud-amd64"),
            Some("L+dio (6.12.64+)")
        );
        assert_eq!(label("6.12.63"), Some("L (6.12.0-63)"));
        assert_eq!(label("6.12.0"), Some("L (6.12.0-63)"));
        assert_eq!(label("6.1.0-57-cloud-amd64"), Some("L (6.1.y)"));
        assert_eq!(label("6.1.192"), Some("L (6.1.y)"));
        assert_eq!(label("6.6.100"), None);
        assert_eq!(label("5.10.1"), None);
        assert_eq!(label("garbage"), None);
        // mainline release candidates precede the releases read
        assert_eq!(label("6.1.0-rc3"), None);
        assert_eq!(label("6.12.0-rc7"), None);
        assert_eq!(label("6.12-rc7"), None);
        // a stable -rc carries its release's patches
        assert_eq!(label("6.12.64-rc1"), Some("L+dio (6.12.64+)"));
        // other series that merely start with the digits of a known one
        assert_eq!(label("6.180.1"), None);
        assert_eq!(label("16.12.1"), None);
        assert_eq!(label("6.120.64"), None);
        // a patch level past u32 is no version, not patch level 0
        assert_eq!(label("6.12.4294967296"), None);
        assert_eq!(label("6.18.99999999999999999999"), None);
        // vendor strings
        assert_eq!(label("6.8.0-45-generic"), None);
        assert_eq!(label("6.12.0-55.el10.x86_64"), None);
        assert_eq!(label("6.1.0-28-amd64"), Some("L (6.1.y)"));
        assert_eq!(label(""), None);
    }
}
