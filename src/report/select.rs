//! `decode --fields PATH,…`: chosen values of every selected message, as CSV columns
//! (one per path, as tshark's `-T fields -e`) or as JSON Lines holding only those paths.
//!
//! A path names a key of the record (`frame`, `time`, `direction`, `opcode`, `seq`, …),
//! a decoded value under `fields.` or `assembled.fields.`, or, without a prefix, a
//! decoded value of the message (its own fields, else those of the message it
//! completes): `subsystems[hull].condition_pct`, `position[0]`, `player_name`. The
//! syntax is [`crate::game::path`]'s.

use super::json_prims::{str_json, u64_json};
use super::json_stream::PacketWriter;
use crate::game::field::{hex_padded, hex_twin_text};
use crate::game::opcodes::FieldTrees;
use crate::game::Value;
use crate::pipeline::facts::{self, Fact, FactValue, RecordCx};
use crate::pipeline::field_names::{top_entries, FieldRef, FieldRefError};
use crate::pipeline::names::Names;
use crate::pipeline::record::{MessageRecord, PacketBody, PacketRecord};
use std::borrow::Cow;
use std::fmt::Write as _;

#[derive(Debug, Clone)]
enum Column {
    /// A record fact (`frame`, `opcode`, `udp.srcport`, …).
    Fact(Fact),
    /// A decoded value, read as `-Y` reads it (`field_names::FieldRef`).
    Field(FieldRef),
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
    Facts(Vec<FactValue<'a>>),
    Values(Vec<Cow<'a, Value>>),
    /// `_hex` twins: `0x` text.
    Hex(Vec<String>),
}

/// What a message is read against: its packet, the names, the file's first frame.
pub struct Context<'a> {
    pub packet: &'a PacketRecord,
    pub names: &'a dyn Names,
    pub first_ts_ns: i64,
}

impl Selection {
    /// Parse `PATH,…` (already split); a malformed path or a name no field has is
    /// refused with its place and the closest names.
    pub fn parse(paths: &[String]) -> Result<Selection, String> {
        let mut columns = Vec::with_capacity(paths.len());
        for text in paths {
            let column = match facts::lookup(text) {
                Some(f) => Column::Fact(f.fact),
                None => Column::Field(FieldRef::parse(text).map_err(|e| match e {
                    FieldRefError::Syntax(_) => format!("--fields {text:?}: {e}"),
                    FieldRefError::Unknown(_) => format!("--fields: {e}"),
                })?),
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

    /// The field trees the columns read: the top-level decoded fields the paths start
    /// from, resolved against the field registry once, so a decode builds only those
    /// (`FieldTrees::Only`), or whole trees where a path starts from any name (`*`) or
    /// from a name without an entry; and what a fact column reads of the trees
    /// (`facts::trees`).
    pub fn field_trees(&self) -> FieldTrees {
        let mut refs = Vec::new();
        let mut trees = FieldTrees::None;
        for c in &self.columns {
            match c {
                Column::Field(r) => refs.push(r),
                Column::Fact(f) => trees = trees.union(facts::trees(*f)),
            }
        }
        if refs.is_empty() {
            return trees;
        }
        trees.union(top_entries(refs).map_or(FieldTrees::All, FieldTrees::Only))
    }

    /// The CSV header: the paths as given, after a `file` column when several inputs
    /// are read.
    pub fn csv_header(&self, file: bool) -> String {
        let cols = self
            .texts
            .iter()
            .map(|t| csv_quote(t))
            .collect::<Vec<_>>()
            .join(",");
        if file {
            format!("file,{cols}")
        } else {
            cols
        }
    }

    /// The rows of a record: one per message `keep` accepts; a GameSpy datagram, or a
    /// game datagram whose walk found no message, is one row of its datagram facts (as
    /// tshark prints a row for every packet).
    fn rows<'a>(
        cx: &Context<'a>,
        keep: &'a dyn Fn(Option<&MessageRecord>) -> bool,
    ) -> Box<dyn Iterator<Item = Option<&'a MessageRecord>> + 'a> {
        match &cx.packet.body {
            PacketBody::Game(g) if !g.messages.is_empty() => {
                Box::new(g.messages.iter().map(Some).filter(move |m| keep(*m)))
            }
            _ => Box::new(std::iter::once(None).filter(move |m| keep(*m))),
        }
    }

    fn cell<'a>(&self, c: &Column, cx: &Context<'a>, m: Option<&'a MessageRecord>) -> Cell<'a> {
        match c {
            Column::Fact(f) => {
                let rcx = RecordCx {
                    packet: cx.packet,
                    message: m,
                    names: cx.names,
                    client_names: None,
                    first_ts_ns: cx.first_ts_ns,
                };
                let mut vs = facts::FactValues::new();
                facts::values(*f, &rcx, &mut vs);
                if vs.is_empty() {
                    Cell::None
                } else {
                    Cell::Facts(vs.into_vec())
                }
            }
            Column::Field(field) => {
                let vs = m.map(|m| field.resolve(m)).unwrap_or_default();
                if vs.is_empty() {
                    Cell::None
                } else if field.hex {
                    let texts: Vec<String> = vs.iter().filter_map(|v| hex_twin_text(v)).collect();
                    if texts.is_empty() {
                        Cell::None
                    } else {
                        Cell::Hex(texts)
                    }
                } else {
                    Cell::Values(vs)
                }
            }
        }
    }

    /// One CSV row per message `keep` accepts (a message-less datagram: `keep(None)`).
    pub fn csv_rows(
        &self,
        w: &mut PacketWriter,
        cx: &Context<'_>,
        keep: &dyn Fn(Option<&MessageRecord>) -> bool,
        out: &mut String,
    ) {
        let mut json = Vec::new();
        for m in Self::rows(cx, keep) {
            if let Some(f) = &w.file {
                out.push_str(&csv_quote(f));
                out.push(',');
            }
            for (k, c) in self.columns.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                // Several values (a pattern, a repeated name, `port`): `;` between them.
                let text = match self.cell(c, cx, m) {
                    Cell::None => String::new(),
                    Cell::Facts(vs) => vs.iter().map(fact_text).collect::<Vec<_>>().join(";"),
                    Cell::Hex(vs) => vs.join(";"),
                    Cell::Values(vs) => vs
                        .iter()
                        .map(|v| match v.as_ref() {
                            Value::Text(t) => t.clone(),
                            // Bytes are their hex text, unquoted as text is.
                            Value::Bytes(b) => crate::game::field::hex_string(b),
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
        keep: &dyn Fn(Option<&MessageRecord>) -> bool,
        out: &mut Vec<u8>,
    ) {
        for m in Self::rows(cx, keep) {
            out.push(b'{');
            if let Some(f) = &w.file {
                str_json(out, "file");
                out.push(b':');
                str_json(out, f);
                out.push(b',');
            }
            for (k, (c, text)) in self.columns.iter().zip(&self.texts).enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                str_json(out, text);
                out.push(b':');
                let pattern = matches!(c, Column::Field(f) if f.path.is_pattern());
                match self.cell(c, cx, m) {
                    Cell::None => out.extend_from_slice(b"null"),
                    // A fact with one value is that value; `port`, `ip` and the
                    // warnings are arrays.
                    Cell::Facts(vs) => {
                        let many = matches!(
                            c,
                            Column::Fact(
                                Fact::Port
                                    | Fact::Ip
                                    | Fact::ObjectIds
                                    | Fact::WarningCode
                                    | Fact::WarningKind
                            )
                        );
                        json_array(out, many || vs.len() > 1, &vs, |out, v| fact_json(out, v));
                    }
                    Cell::Hex(vs) => {
                        json_array(out, pattern || vs.len() > 1, &vs, |out, v| str_json(out, v))
                    }
                    // A pattern is always an array, however many values it finds.
                    Cell::Values(vs) => {
                        json_array(out, pattern || vs.len() > 1, &vs, |out, v| w.value(out, v))
                    }
                }
            }
            out.extend_from_slice(b"}\n");
        }
    }
}

/// `vs` as one JSON value, or as an array when `array`.
fn json_array<T>(out: &mut Vec<u8>, array: bool, vs: &[T], mut one: impl FnMut(&mut Vec<u8>, &T)) {
    if !array {
        match vs.first() {
            Some(v) => one(out, v),
            None => out.extend_from_slice(b"null"),
        }
        return;
    }
    out.push(b'[');
    for (i, v) in vs.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        one(out, v);
    }
    out.push(b']');
}

/// A fact's value as CSV text: hex-based numbers as `0x1C`, times with the six
/// decimals of the default CSV.
fn fact_text(v: &FactValue<'_>) -> String {
    match v {
        FactValue::Uint(n) => n.to_string(),
        FactValue::Hex(n) => hex_padded(*n),
        FactValue::Float(f) => format!("{f:.6}"),
        FactValue::Bool(b) => b.to_string(),
        FactValue::Text(t) => t.to_string(),
    }
}

/// A fact's value in JSON: numbers as numbers (hex-based ones too, as the records
/// write `opcode`).
fn fact_json(out: &mut Vec<u8>, v: &FactValue<'_>) {
    match v {
        FactValue::Uint(n) | FactValue::Hex(n) => u64_json(out, *n),
        FactValue::Float(f) => super::json_float::write_f64(out, *f),
        FactValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        FactValue::Text(t) => str_json(out, t),
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
    use crate::pipeline::field_names::Part;

    #[test]
    fn paths_and_record_keys_are_told_apart_and_bad_paths_refused() {
        let s = Selection::parse(&[
            "frame".into(),
            "subsystems[hull].condition_pct".into(),
            "assembled.fields.player_name".into(),
        ])
        .unwrap();
        assert!(matches!(s.columns[0], Column::Fact(Fact::Frame)));
        assert!(matches!(&s.columns[1], Column::Field(f) if f.part == Part::Either));
        assert!(matches!(&s.columns[2], Column::Field(f) if f.part == Part::Assembled));
        assert_eq!(
            s.csv_header(false),
            "frame,subsystems[hull].condition_pct,assembled.fields.player_name"
        );
        assert!(Selection::parse(&["a[".into()])
            .unwrap_err()
            .contains("not a field path"));
        assert!(Selection::parse(&[]).is_err());
    }
}
