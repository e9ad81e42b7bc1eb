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
