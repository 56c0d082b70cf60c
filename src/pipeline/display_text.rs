//! The text of a `-Y` expression before and beside its grammar: the mistakes said
//! plainly before parsing (an unclosed string or parenthesis, a lone `=`), and the
//! literals' values (numbers, string escapes).

use pest::error::{Error as PestError, ErrorVariant};

/// A `-Y` expression that does not parse or names something unknown: the message
/// points at the column.
#[derive(Debug)]
pub struct DisplayFilterError(pub(super) String);

impl std::fmt::Display for DisplayFilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DisplayFilterError {}

pub(super) fn located(
    text: &str,
    pair_span: pest::Span<'_>,
    message: String,
) -> DisplayFilterError {
    // The message is the whole error: no grammar rule is named, so none is typed.
    let e: PestError<()> =
        PestError::new_from_span(ErrorVariant::CustomError { message }, pair_span);
    DisplayFilterError(format!("-Y {text:?}:\n{e}"))
}

/// The mistakes a grammar error would only half explain, each said plainly at its
/// place: a string never closed, a `(` never closed or a `)` closing nothing, and `=`
/// where a test was meant (`==`).
pub(super) fn precheck(text: &str) -> Result<(), DisplayFilterError> {
    let at = |start: usize, message: &str| {
        let end = text[start..]
            .char_indices()
            .nth(1)
            .map_or(text.len(), |(i, _)| start + i);
        let span = pest::Span::new(text, start, end).expect("a char boundary");
        located(text, span, message.to_string())
    };
    let bytes = text.as_bytes();
    let mut opened: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if i >= bytes.len() {
                    return Err(at(
                        start,
                        "this string is never closed: expected a closing \"",
                    ));
                }
            }
            b'(' => opened.push(i),
            b')' if opened.pop().is_none() => {
                return Err(at(i, "this `)` closes no `(`"));
            }
            b'=' => {
                let before = i.checked_sub(1).map(|k| bytes[k]);
                let after = bytes.get(i + 1).copied();
                let paired =
                    matches!(before, Some(b'=' | b'!' | b'<' | b'>' | b'~')) || after == Some(b'=');
                if !paired {
                    return Err(at(i, "`=` is not a test: did you mean `==`?"));
                }
                if after == Some(b'=') {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    if let Some(&open) = opened.last() {
        return Err(at(open, "this `(` is never closed: expected `)`"));
    }
    Ok(())
}

pub(super) fn parse_number(s: &str) -> Option<f64> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let v = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16).ok()? as f64,
        None => digits.parse::<f64>().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// A string literal's text: `\n`, `\t`, `\xHH`, octal `\NNN`, and `\` before any
/// other character standing for that character (as in Wireshark's strings).
pub(super) fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('x') => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 {
                    match chars.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            chars.next();
                            n += 1;
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
            }
            Some(d @ '0'..='7') => {
                let mut v = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}
