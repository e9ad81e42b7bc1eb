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
    let mut it = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|s| s.parse::<u32>().ok());
    let major = it.next()??;
    let minor = it.next()??;
    // "6.1.0-57-cloud-amd64": Debian's 6.1 packages put the ABI number,
    // not the patch level, in the release; the patch level is unknowable
    // from uname -r then, and only entries with from = 0 and no `to`
    // match it (see state_of).
    let patch = it.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

/// The entry `release` falls in, if any.
pub fn state_of(release: &str) -> Option<&'static Release> {
    let (ma, mi, p) = version_of(release)?;
    let series = format!("{ma}.{mi}");
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
        assert_eq!(label(""), None);
    }
}
