//! The classic 16-bytes-per-line hex dump with its ASCII column, plain (`decode
//! --hex`) or with each decoded field's bytes in that field's colour (`show`).

use super::term::Palette;
use std::fmt::Write as _;

/// A byte range of the dump with the index of the field that owns it.
pub struct Mark {
    pub start: usize,
    pub end: usize,
    pub field: usize,
}

/// [`hex_dump`] without colour or field marks.
pub fn plain_hex_dump(bytes: &[u8]) -> String {
    hex_dump(bytes, &[], Palette::new(false))
}

/// Classic 16-bytes-per-line dump; bytes inside a field's span get that field's colour.
pub fn hex_dump(bytes: &[u8], marks: &[Mark], pal: Palette) -> String {
    let mut out = String::new();
    for (line, chunk) in bytes.chunks(16).enumerate() {
        let base = line * 16;
        let _ = write!(out, "{}  ", pal.dim(&format!("{base:04x}")));
        for i in 0..16 {
            if i == 8 {
                out.push(' ');
            }
            match chunk.get(i) {
                Some(b) => {
                    let at = base + i;
                    let text = format!("{b:02x}");
                    match marks.iter().find(|m| m.start <= at && at < m.end) {
                        Some(m) => out.push_str(&pal.field_bg(m.field, &text)),
                        None => out.push_str(&text),
                    }
                    out.push(' ');
                }
                None => out.push_str("   "),
            }
        }
        out.push(' ');
        for b in chunk {
            out.push(if b.is_ascii_graphic() || *b == b' ' {
                *b as char
            } else {
                '.'
            });
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_dump_lines_and_ascii() {
        let bytes: Vec<u8> = (0..20).collect();
        let d = hex_dump(&bytes, &[], Palette::new(false));
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("0000  00 01 02 03 04 05 06 07  08 09"));
        assert!(lines[1].starts_with("0010  10 11 12 13"));
    }
}
