//! The comparison of two captures (A → B), as `bcwire diff` finds it.

use super::problems::file_name;
use super::svg::esc;
use super::table::{row, td, thead, tn};
use crate::game::dirty::flag_names;
use crate::game::opcodes::opcode_name;
use crate::report::diff::DiffResult;
use std::fmt::Write as _;

pub(super) fn section(r: &DiffResult, a: &str, b: &str) -> String {
    let mut h = String::from("<section id=\"diff\"><h2>Comparison (A → B)</h2><div class=\"col\">");
    let _ = write!(
        h,
        "<p>A = {}<br>B = {}</p><p class=\"{}\">{}</p>",
        esc(file_name(a)),
        esc(file_name(b)),
        if r.is_same() { "same" } else { "differ" },
        if r.is_same() {
            "The captures are equivalent."
        } else {
            "The captures differ."
        }
    );
    let delta = |x: u64, y: u64| {
        let d = y as i64 - x as i64;
        if d == 0 {
            "=".to_string()
        } else {
            format!("{d:+}")
        }
    };
    h.push_str("<h4>Game messages by opcode</h4><table class=\"diff-opcodes\">");
    h.push_str(&thead(&["direction", "opcode", "name", "A", "B", "Δ"]));
    for (d, op, x, y) in &r.opcode_rows {
        h.push_str(&row(&[
            td(d.as_str()),
            td(&format!("0x{op:02X}")),
            td(opcode_name(*op)),
            tn(x),
            tn(y),
            tn(delta(*x, *y)),
        ]));
    }
    h.push_str("</table>");
    if !r.flag_rows.is_empty() {
        h.push_str("<h4>StateUpdate dirty flags</h4><table class=\"diff-flags\">");
        h.push_str(&thead(&["direction", "flags", "fields", "A", "B", "Δ"]));
        for (d, f, x, y) in &r.flag_rows {
            h.push_str(&row(&[
                td(d.as_str()),
                td(&format!("0x{f:02X}")),
                td(&flag_names(*f)),
                tn(x),
                tn(y),
                tn(delta(*x, *y)),
            ]));
        }
        h.push_str("</table>");
    }
    for k in &r.only_in_a {
        let _ = write!(
            h,
            "<p class=\"warn\">flow only in A: {}</p>",
            esc(&k.to_string())
        );
    }
    for k in &r.only_in_b {
        let _ = write!(
            h,
            "<p class=\"warn\">flow only in B: {}</p>",
            esc(&k.to_string())
        );
    }
    if !r.unmatched.is_empty() {
        h.push_str("<h4>Messages without an equal twin in the other capture</h4><table>");
        h.push_str(&thead(&[
            "direction",
            "opcode",
            "name",
            "only in A",
            "only in B",
        ]));
        for (d, op, x, y) in &r.unmatched {
            h.push_str(&row(&[
                td(d.as_str()),
                td(&format!("0x{op:02X}")),
                td(opcode_name(*op)),
                tn(x),
                tn(y),
            ]));
        }
        h.push_str("</table>");
    }
    if !r.divergences.is_empty() {
        h.push_str("<h4>First divergence per flow</h4><table>");
        h.push_str(&thead(&["flow", "message #", "A", "B"]));
        let name = |o: Option<u8>| {
            o.map(|o| format!("0x{o:02X} {}", opcode_name(o)))
                .unwrap_or_else(|| "(end)".into())
        };
        for d in &r.divergences {
            h.push_str(&row(&[
                td(&d.flow.to_string()),
                tn(d.index),
                td(&name(d.a_opcode)),
                td(&name(d.b_opcode)),
            ]));
        }
        h.push_str("</table>");
    }
    for m in &r.mismatches {
        let _ = write!(
            h,
            "<h4>{} message #{} 0x{:02X} {} (A frame {}, B frame {})</h4><table>",
            esc(&m.flow.to_string()),
            m.index,
            m.opcode,
            opcode_name(m.opcode),
            m.a_frame,
            m.b_frame
        );
        h.push_str(&thead(&["field", "A", "B"]));
        for d in &m.differences {
            let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
            h.push_str(&row(&[td(&d.path), td(&side(&d.a)), td(&side(&d.b))]));
        }
        h.push_str("</table>");
    }
    h.push_str("<p class=\"note\">Volatile fields (game time, timestamps) are ignored, as in <code>bcwire diff</code>.</p></div></section>");
    h
}
