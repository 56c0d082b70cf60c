//! `decode --fields PATH,…`: chosen values of every selected message, as CSV columns
//! (one per path, as tshark's `-T fields -e`) or as JSON Lines holding only those paths.
//!
//! A path names a key of the record (`frame`, `time`, `direction`, `opcode`, `seq`, …),
//! a decoded value under `fields.` or `assembled.fields.`, or, without a prefix, a
//! decoded value of the message (its own fields, else those of the message it
//! completes): `subsystems[hull].condition_pct`, `position[0]`, `player_name`. The
//! syntax is [`crate::game::path`]'s.

use super::json_stream::{str_json, u64_json, PacketWriter};
use crate::game::path::FieldPath;
use crate::game::{GameMessage, Value};
use crate::pipeline::record::{MessageRecord, PacketBody, PacketRecord};
use std::borrow::Cow;
use std::fmt::Write as _;

/// Keys of the packet and message records a column can name.
const RECORD_KEYS: &[&str] = &[
    "frame",
    "time",
    "src",
    "dst",
    "direction",
    "session",
    "client",
    "client_name",
    "peer_id",
    "offset",
    "length",
    "transport_type",
    "reliable",
    "seq",
    "retransmission",
    "opcode",
    "opcode_hex",
    "name",
    "object",
];

#[derive(Debug, Clone)]
enum Column {
    Record(&'static str),
    /// A decoded value; `Some(true)`: of `assembled.fields`, `Some(false)`: of
    /// `fields`, `None`: the message's own, else the assembled one's.
    Field(Option<bool>, FieldPath),
}

/// The columns of `--fields`, parsed once.
#[derive(Debug, Clone)]
pub struct Selection {
    texts: Vec<String>,
    columns: Vec<Column>,
}

/// One value of a column for one message.
enum Cell<'a> {
    None,
    Text(Cow<'a, str>),
    Uint(u64),
    Float(f64),
    Bool(bool),
    Values(Vec<Cow<'a, Value>>),
}

/// What a message is read against: its packet, its record, the names.
pub struct Context<'a> {
    pub packet: &'a PacketRecord,
    pub client_name: Option<&'a str>,
    pub describe: &'a dyn Fn(u32) -> Option<std::rc::Rc<str>>,
}

impl Selection {
    /// Parse `PATH,…` (already split); a malformed path is refused with its place.
    pub fn parse(paths: &[String]) -> Result<Selection, String> {
        let mut columns = Vec::with_capacity(paths.len());
        for text in paths {
            let column = if let Some(k) = RECORD_KEYS.iter().find(|k| **k == text) {
                Column::Record(k)
            } else {
                let (scope, rest) = if let Some(r) = text.strip_prefix("assembled.fields.") {
                    (Some(true), r)
                } else if let Some(r) = text.strip_prefix("fields.") {
                    (Some(false), r)
                } else {
                    (None, text.as_str())
                };
                let p: FieldPath = rest
                    .parse()
                    .map_err(|e| format!("--fields {text:?}: not a field path ({e})"))?;
                Column::Field(scope, p)
            };
            columns.push(column);
        }
        if columns.is_empty() {
            return Err("--fields: no path given".into());
        }
        Ok(Selection {
            texts: paths.to_vec(),
            columns,
        })
    }

    /// The CSV header: the paths as given.
    pub fn csv_header(&self) -> String {
        self.texts
            .iter()
            .map(|t| csv_quote(t))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn cell<'a>(&self, c: &Column, cx: &Context<'a>, m: &'a MessageRecord) -> Cell<'a> {
        let p = cx.packet;
        let game: Option<&'a GameMessage> = m.game.as_ref();
        let assembled: Option<&'a GameMessage> = m.assembled.as_ref().map(|a| &a.game);
        let either = game.or(assembled);
        match c {
            Column::Record(k) => match *k {
                "frame" => Cell::Uint(p.frame),
                "time" => Cell::Float(super::json::time_seconds(p.ts_ns)),
                "src" => Cell::Text(p.src.to_string().into()),
                "dst" => Cell::Text(p.dst.to_string().into()),
                "direction" => Cell::Text(p.direction.as_str().into()),
                "session" => Cell::Uint(p.session as u64),
                "client" => Cell::Uint(p.client as u64),
                "client_name" => cx.client_name.map_or(Cell::None, |n| Cell::Text(n.into())),
                "peer_id" => match &p.body {
                    PacketBody::Game(g) => Cell::Uint(g.peer_id as u64),
                    PacketBody::GameSpy { .. } => Cell::None,
                },
                "offset" => Cell::Uint(m.offset as u64),
                "length" => Cell::Uint(m.length as u64),
                "transport_type" => Cell::Uint(m.transport_type as u64),
                "reliable" => Cell::Bool(m.reliable()),
                "seq" => m.seq().map_or(Cell::None, |s| Cell::Uint(s as u64)),
                "retransmission" => Cell::Bool(m.retransmission),
                "opcode" => either.map_or(Cell::None, |g| Cell::Uint(g.opcode as u64)),
                "opcode_hex" => either.map_or(Cell::None, |g| {
                    Cell::Text(format!("0x{:02X}", g.opcode).into())
                }),
                "name" => either.map_or(Cell::None, |g| Cell::Text(g.name.into())),
                "object" => either
                    .and_then(super::json::object_of)
                    .and_then(cx.describe)
                    .map_or(Cell::None, |n| Cell::Text(n.to_string().into())),
                _ => Cell::None,
            },
            Column::Field(scope, path) => {
                let g = match scope {
                    Some(true) => assembled,
                    Some(false) => game,
                    None => either,
                };
                match g.map(|g| path.resolve(&g.fields)) {
                    Some(v) if !v.is_empty() => Cell::Values(v),
                    _ => Cell::None,
                }
            }
        }
    }

    /// One CSV row per message `keep` accepts.
    pub fn csv_rows(
        &self,
        w: &mut PacketWriter,
        cx: &Context<'_>,
        keep: &dyn Fn(&MessageRecord) -> bool,
        out: &mut String,
    ) {
        let PacketBody::Game(g) = &cx.packet.body else {
            return;
        };
        let mut json = Vec::new();
        for m in g.messages.iter().filter(|m| keep(m)) {
            for (k, c) in self.columns.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                let text = match self.cell(c, cx, m) {
                    Cell::None => String::new(),
                    Cell::Text(t) => t.into_owned(),
                    Cell::Uint(n) => n.to_string(),
                    Cell::Float(f) => format!("{f:.6}"),
                    Cell::Bool(b) => b.to_string(),
                    // Several values (a pattern, a repeated name): `;` between them.
                    Cell::Values(vs) => vs
                        .iter()
                        .map(|v| match v.as_ref() {
                            Value::Text(t) => t.clone(),
                            v => {
                                json.clear();
                                w.value(&mut json, v);
                                String::from_utf8_lossy(&json).into_owned()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(";"),
                };
                out.push_str(&csv_quote(&text));
            }
            out.push('\n');
        }
    }

    /// One JSON object per message `keep` accepts, keyed by the paths as given (a
    /// value not there: `null`; several: an array).
    pub fn json_lines(
        &self,
        w: &mut PacketWriter,
        cx: &Context<'_>,
        keep: &dyn Fn(&MessageRecord) -> bool,
        out: &mut Vec<u8>,
    ) {
        let PacketBody::Game(g) = &cx.packet.body else {
            return;
        };
        for m in g.messages.iter().filter(|m| keep(m)) {
            out.push(b'{');
            for (k, (c, text)) in self.columns.iter().zip(&self.texts).enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                str_json(out, text);
                out.push(b':');
                match self.cell(c, cx, m) {
                    Cell::None => out.extend_from_slice(b"null"),
                    Cell::Text(t) => str_json(out, &t),
                    Cell::Uint(n) => u64_json(out, n),
                    Cell::Float(f) => super::json_float::write_f64(out, f),
                    Cell::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
                    // A pattern is always an array, however many values it finds.
                    Cell::Values(vs)
                        if vs.len() == 1 && !matches!(c, Column::Field(_, p) if p.is_pattern()) =>
                    {
                        w.value(out, &vs[0])
                    }
                    Cell::Values(vs) => {
                        out.push(b'[');
                        for (i, v) in vs.iter().enumerate() {
                            if i > 0 {
                                out.push(b',');
                            }
                            w.value(out, v);
                        }
                        out.push(b']');
                    }
                }
            }
            out.extend_from_slice(b"}\n");
        }
    }
}

/// RFC 4180 quoting.
fn csv_quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        let mut q = String::with_capacity(s.len() + 2);
        let _ = write!(q, "\"{}\"", s.replace('"', "\"\""));
        q
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_record_keys_are_told_apart_and_bad_paths_refused() {
        let s = Selection::parse(&[
            "frame".into(),
            "subsystems[hull].condition_pct".into(),
            "assembled.fields.player_name".into(),
        ])
        .unwrap();
        assert!(matches!(s.columns[0], Column::Record("frame")));
        assert!(matches!(s.columns[1], Column::Field(None, _)));
        assert!(matches!(s.columns[2], Column::Field(Some(true), _)));
        assert_eq!(
            s.csv_header(),
            "frame,subsystems[hull].condition_pct,assembled.fields.player_name"
        );
        assert!(Selection::parse(&["a[".into()])
            .unwrap_err()
            .contains("not a field path"));
        assert!(Selection::parse(&[]).is_err());
    }
}
