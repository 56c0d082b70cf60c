//! Short text forms of decoded values, for one-line summaries and detail trees.

use crate::game::field::{hex_string, Field, Value};
use std::fmt::Write as _;

/// A value as people read it: ids in hex, floats with sensible precision, text quoted.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Uint(n) => n.to_string(),
        Value::Int(n) => n.to_string(),
        Value::Float(f) => float_text(*f),
        Value::ObjectId(id) => format!("0x{id:08X}"),
        Value::Hex(h) => crate::game::field::hex_padded(*h),
        Value::Text(s) => format!("{s:?}"),
        Value::Vec3(v) => format!(
            "({}, {}, {})",
            float_text(v[0] as f64),
            float_text(v[1] as f64),
            float_text(v[2] as f64)
        ),
        Value::Bytes(b) if b.len() <= 16 => format!("[{}]", hex_string(b)),
        Value::Bytes(b) => format!("[{} bytes: {}…]", b.len(), hex_string(&b[..16])),
        Value::List(items) => {
            let parts: Vec<String> = items.iter().map(value_text).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Group(fields) => format!("{{{}}}", fields_inline(fields, usize::MAX)),
    }
}

/// Text from the wire as it reads: control characters escaped (`\n`, `\u{1b}`), every
/// other character, the backslash included, as it is.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Up to 4 significant decimals, trailing zeros trimmed.
pub fn float_text(f: f64) -> String {
    if !f.is_finite() {
        return f.to_string();
    }
    let s = if f.abs() >= 1000.0 {
        format!("{f:.1}")
    } else {
        format!("{f:.4}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// `name=value` pairs separated by spaces, at most `max` of them; says how many more.
pub fn fields_inline(fields: &[Field], max: usize) -> String {
    let mut s = String::new();
    for (i, f) in fields.iter().enumerate() {
        if i == max {
            let _ = write!(s, " …(+{} fields)", fields.len() - max);
            break;
        }
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{}={}", f.name, value_text(&f.value));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Span;

    #[test]
    fn floats_are_trimmed() {
        assert_eq!(float_text(5.0), "5");
        assert_eq!(float_text(5.1297), "5.1297");
        assert_eq!(float_text(-0.0), "0");
        assert_eq!(float_text(5997.8), "5997.8");
    }

    #[test]
    fn inline_fields_say_what_was_left_out() {
        let f = |n: &'static str, v| {
            Field::keyed(
                crate::game::registry::FieldId::OTHER_GAME,
                n,
                v,
                Span::default(),
            )
        };
        let fields = vec![
            f("a", Value::ObjectId(0x3FFFFFFF)),
            f("b", Value::Text("gg".into())),
            f("c", Value::Uint(1)),
        ];
        assert_eq!(
            fields_inline(&fields, 2),
            "a=0x3FFFFFFF b=\"gg\" …(+1 fields)"
        );
    }
}
