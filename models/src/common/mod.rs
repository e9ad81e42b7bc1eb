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
/// expected u8`), which toml's own error does not.
pub fn from_table<T: serde::de::DeserializeOwned>(table: &toml::Table) -> Result<T, String> {
    serde_path_to_error::deserialize(toml::Value::Table(table.clone())).map_err(|e| {
        let msg = e.inner().message().trim().to_string();
        match e.path().to_string() {
            p if p.is_empty() || p == "." => msg,
            p => format!("{p}: {msg}"),
        }
    })
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
