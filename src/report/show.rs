//! `bcwire show`: the full detail tree of a datagram and an annotated hex dump in which
//! every decoded field's bytes are marked.

use super::decode::transport_summary;
use super::hexdump::{hex_dump, Mark};
use super::names::Names;
use super::term::Palette;
use super::text::value_text;
use crate::game::field::{Field, Value};
use crate::game::GameMessage;
use crate::pipeline::record::{PacketBody, PacketRecord, TransportInfo};
use std::fmt::Write as _;

/// The detail of one datagram. Its heading gives the time as `time` (a `-t` format),
/// or by default as epoch seconds with the seconds since `first_ts_ns`.
pub fn render_packet(
    p: &PacketRecord,
    first_ts_ns: i64,
    time: Option<&str>,
    names: &dyn Names,
    pal: Palette,
) -> String {
    let mut out = String::new();
    let client = names
        .client_name(p.session, p.client)
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    let when = match time {
        Some(t) => t.to_string(),
        None => format!(
            "{:.6} (+{:.6} s)",
            p.ts_ns as f64 / 1e9,
            (p.ts_ns - first_ts_ns) as f64 / 1e9
        ),
    };
    let _ = writeln!(
        out,
        "{}",
        pal.heading(&format!(
            "Frame {}  {}  {} → {}  {}  session {} client {}{}",
            p.frame, when, p.src, p.dst, p.direction, p.session, p.client, client
        ))
    );
    if let Some(c) = &p.comment {
        let _ = writeln!(out, "Comment: {}", c.escape_debug());
    }
    let g = match &p.body {
        PacketBody::GameSpy { text } => {
            let _ = writeln!(
                out,
                "GameSpy text, {} bytes: {}",
                p.udp_len,
                super::text::printable(text)
            );
            return out;
        }
        PacketBody::Game(g) => g,
    };
    let _ = writeln!(
        out,
        "Game packet, {} bytes, peer id 0x{:02X}, {} message(s)",
        p.udp_len, g.peer_id, g.msg_count
    );
    for w in &g.warnings {
        let _ = writeln!(out, "  {}", pal.warn(&format!("⚠ {w}")));
    }
    let mut marks: Vec<Mark> = Vec::new();
    let mut legend: Vec<String> = Vec::new();
    let mut assembled_dumps = String::new();
    for (i, m) in g.messages.iter().enumerate() {
        let last = i + 1 == g.messages.len();
        let branch = if last { "└─" } else { "├─" };
        let indent = if last { "   " } else { "│  " };
        let _ = writeln!(
            out,
            "{branch} [{}..{}] type 0x{:02X} {}",
            m.offset,
            m.offset + m.length,
            m.transport_type,
            transport_summary(m)
        );
        if let Some(of) = m.original_frame {
            let _ = writeln!(
                out,
                "{indent}   copy of the message first sent in frame {of}"
            );
        }
        if let Some(r) = m.relay_of {
            let _ = writeln!(out, "{indent}   relayed copy of frame {r}");
        }
        for w in &m.warnings {
            let _ = writeln!(out, "{indent}   {}", pal.warn(&format!("⚠ {w}")));
        }
        match &m.transport {
            TransportInfo::Ack {
                acked_frame: Some(f),
                delay_ns,
                duplicate,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "{indent}   acknowledges frame {f}{}{}",
                    delay_ns
                        .map(|d| format!(" after {:.3} ms", d as f64 / 1e6))
                        .unwrap_or_default(),
                    if *duplicate { " (duplicate)" } else { "" }
                );
            }
            TransportInfo::Low { fields, .. } => {
                let base = m.payload_offset.unwrap_or(m.offset);
                tree(&mut out, fields, &format!("{indent}   "), pal, None, base);
            }
            _ => {}
        }
        if let (Some(game), Some(base)) = (&m.game, m.payload_offset) {
            describe_game(&mut out, game, indent, p, names, pal);
            let first_colour = legend.len();
            collect_marks(&game.fields, base, &mut marks, &mut legend);
            tree(
                &mut out,
                &game.fields,
                &format!("{indent}   "),
                pal,
                Some(first_colour),
                base,
            );
        }
        if let Some(a) = &m.assembled {
            let _ = writeln!(
                out,
                "{indent}   completes a fragment set from frames {:?}",
                a.frames
            );
            describe_game(&mut out, &a.game, indent, p, names, pal);
            tree(
                &mut out,
                &a.game.fields,
                &format!("{indent}   "),
                pal,
                Some(0),
                0,
            );
            let mut am = Vec::new();
            let mut al = Vec::new();
            collect_marks(&a.game.fields, 0, &mut am, &mut al);
            let _ = writeln!(
                assembled_dumps,
                "\nReassembled message ({} bytes):",
                a.bytes.len()
            );
            assembled_dumps.push_str(&hex_dump(&a.bytes, &am, pal));
        }
    }
    let _ = writeln!(out, "\nDecrypted datagram:");
    out.push_str(&hex_dump(&g.plain, &marks, pal));
    out.push_str(&assembled_dumps);
    out
}

fn describe_game(
    out: &mut String,
    game: &GameMessage,
    indent: &str,
    p: &PacketRecord,
    names: &dyn Names,
    pal: Palette,
) {
    let about = super::json::object_of(game)
        .and_then(|o| names.describe_object(p.session, o))
        .map(|n| format!("  [{n}]"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{indent}   {} ({} bytes){about}",
        pal.opcode(&format!("0x{:02X} {}", game.opcode, game.name)),
        game.length
    );
    for w in &game.warnings {
        let _ = writeln!(out, "{indent}   {}", pal.warn(&format!("⚠ {w}")));
    }
}

/// Top-level fields become marks in the hex view; nested groups keep their parent's colour.
fn collect_marks(fields: &[Field], base: usize, marks: &mut Vec<Mark>, legend: &mut Vec<String>) {
    for f in fields {
        let idx = legend.len();
        legend.push(f.name.to_string());
        if f.span.len > 0 {
            marks.push(Mark {
                start: base + f.span.start as usize,
                end: base + f.span.end() as usize,
                field: idx,
            });
        }
    }
}

/// The field tree: `[start..end] name = value`, groups indented below their parent.
/// `first_colour` is the hex-view colour index of the first field (None: no swatches);
/// `base` turns message-relative spans into offsets of the dump shown below the tree.
fn tree(
    out: &mut String,
    fields: &[Field],
    indent: &str,
    pal: Palette,
    first_colour: Option<usize>,
    base: usize,
) {
    for (i, f) in fields.iter().enumerate() {
        let swatch = match first_colour {
            Some(c) => pal.field_bg(c + i, "  "),
            None => "  ".into(),
        };
        let range = format!(
            "[{}..{}]",
            base + f.span.start as usize,
            base + f.span.end() as usize
        );
        match &f.value {
            Value::Group(children) => {
                let _ = writeln!(out, "{indent}{swatch} {} {}", pal.dim(&range), f.name);
                tree(out, children, &format!("{indent}    "), pal, None, base);
            }
            v => {
                let _ = writeln!(
                    out,
                    "{indent}{swatch} {} {} = {}",
                    pal.dim(&range),
                    f.name,
                    value_text(v)
                );
            }
        }
    }
}
