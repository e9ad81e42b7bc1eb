//! Building blocks every model uses: a `Copy` bounded vector, folio flags,
//! the i_rwsem encoding and the data-version history that judges
//! staleness. Models keep their states small, flat and `Copy` with these.

pub mod bounded;
pub mod encode;
pub mod history;
pub mod page;
pub mod rwsem;

/// "no value" in u8 slots (no owner, no reply, no version).
pub const NONE: u8 = 0xFF;

/// The opening tag of a model's sequence diagram (Explorer, docs): drawn
/// in `width` x `height` user units with 10-unit monospace text, shown
/// 1.3 times that size, so its text is 13 CSS px at 100 % zoom (the
/// Explorer page shows an SVG at its own size, unscaled).
pub fn svg_open(width: usize, height: usize) -> String {
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {width} {height}" font-family="monospace" font-size="10">"##,
        width * 13 / 10,
        height * 13 / 10
    )
}

/// A model's raw configuration from a catalogue entry's keys; a value of
/// the wrong type names its key (`pages: invalid type: string "two",
/// expected u8`), which toml's own error does not. The key path is
/// written as TOML writes keys ([`key_path`]: a quoted key `"a.b"` is
/// not the nested `a.b`), and an unknown key is named once, by the
/// message, after the path of the table it is in (not
/// `colour: unknown field `colour``).
pub fn from_table<T: serde::de::DeserializeOwned>(table: &toml::Table) -> Result<T, String> {
    serde_path_to_error::deserialize(toml::Value::Table(table.clone())).map_err(|e| {
        let msg = e.inner().message().trim().to_string();
        let mut segs: Vec<&serde_path_to_error::Segment> = e.path().iter().collect();
        if let Some(serde_path_to_error::Segment::Map { key }) = segs.last() {
            if msg.starts_with(&format!("unknown field `{key}`")) {
                segs.pop();
            }
        }
        match key_path(&segs) {
            p if p.is_empty() => msg,
            p => format!("{p}: {msg}"),
        }
    })
}

/// A path of keys as TOML writes it: `a.b[1].c`, each key that is not
/// a bare key (letters, digits, `_`, `-`) quoted, `"a.b"`; "" for none.
pub fn key_path(segs: &[&serde_path_to_error::Segment]) -> String {
    use serde_path_to_error::Segment;
    let key = |k: &str| {
        let bare = !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if bare {
            k.to_string()
        } else {
            toml::Value::String(k.to_string()).to_string()
        }
    };
    let mut s = String::new();
    for seg in segs {
        match seg {
            Segment::Seq { index } => s += &format!("[{index}]"),
            Segment::Map { key: k } | Segment::Enum { variant: k } => {
                if !s.is_empty() {
                    s.push('.');
                }
                s += &key(k);
            }
            Segment::Unknown => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push('?');
            }
        }
    }
    s
}

/// A catalogue entry's `variant` list: each switch named at most once
/// (`temp_pages` and `!temp_pages` together contradict each other, and
/// the last one would silently win). Returns the flags in order.
pub fn variant_flags(flags: &[String]) -> Result<&[String], String> {
    for (i, f) in flags.iter().enumerate() {
        let name = f.strip_prefix('!').unwrap_or(f);
        if let Some(g) = flags[..i]
            .iter()
            .find(|g| g.strip_prefix('!').unwrap_or(g) == name)
        {
            return Err(if g == f {
                format!("variant: '{f}' is given twice")
            } else {
                format!("variant: '{g}' and '{f}' contradict each other")
            });
        }
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::variant_flags;

    /// A quoted key with a dot is quoted in the error's path (it printed
    /// as the nested `m.a.b`), and an unknown key is named once.
    #[test]
    fn error_paths_are_written_as_toml_keys() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Raw {
            m: std::collections::BTreeMap<String, std::collections::BTreeMap<String, u8>>,
            #[serde(default)]
            v: Vec<u8>,
        }
        let err =
            |s: &str| super::from_table::<Raw>(&s.parse::<toml::Table>().unwrap()).unwrap_err();
        assert_eq!(
            err("m = { \"a.b\" = { c = \"x\" } }"),
            "m.\"a.b\".c: invalid type: string \"x\", expected u8"
        );
        assert_eq!(
            err("m = { a = { b = { c = \"x\" } } }"),
            "m.a.b: invalid type: map, expected u8"
        );
        assert_eq!(
            err("m = {}\nv = [1, -1]"),
            "v[1]: invalid value: integer `-1`, expected u8"
        );
        let e = err("m = {}\ncolour = 3");
        assert!(e.starts_with("unknown field `colour`, expected"), "{e}");
        assert_eq!(e.matches("colour").count(), 1, "{e}");
        let e = err("m = {}\n\"a.b\" = 3");
        assert!(e.starts_with("unknown field `a.b`, expected"), "{e}");
    }

    #[test]
    fn contradictory_or_repeated_switches_are_refused() {
        let v = |x: &[&str]| {
            variant_flags(&x.iter().map(|s| s.to_string()).collect::<Vec<_>>()).map(|_| ())
        };
        assert!(v(&["temp_pages", "!dio_flush_always"]).is_ok());
        assert!(v(&["temp_pages", "!temp_pages"])
            .unwrap_err()
            .contains("contradict"));
        assert!(v(&["!x", "x"]).unwrap_err().contains("contradict"));
        assert!(v(&["x", "x"]).unwrap_err().contains("twice"));
    }
}
