//! Presentation of decoded packets: an indented tree for people, JSON for programs,
//! and located warning lines for stderr.

use super::decoder::{DecodedSub, PacketReport, Stream};
use super::delta::SubKind;
use super::names::{controller_name, object_type_name, update_type_name};
use super::packet::packet_name;
use super::update::Update;
use crate::diag::Warning;
use crate::game::field::{hex_string, Field, Value};
use serde_json::{json, Map, Value as Json};
use std::io::{self, Write};

/// Where a packet came from, for headings and warning locations.
#[derive(Debug, Clone, Copy)]
pub struct Origin {
    /// Position of the packet in the input (0-based).
    pub index: usize,
    /// 1-based line number in a `--lines` file.
    pub line: Option<usize>,
}

impl Origin {
    fn label(&self) -> String {
        match self.line {
            Some(l) => format!("line {l}"),
            None => format!("packet #{}", self.index),
        }
    }
}

fn spaced_hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 3);
    for (i, x) in b.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&format!("{x:02x}"));
    }
    s
}

fn id_label(id: u8) -> String {
    match packet_name(id) {
        Some(n) => format!("{n} ({id:#04x})"),
        None => format!("packet {id:#04x}"),
    }
}

// ---------------------------------------------------------------- text

/// Write the tree for one packet.
pub fn write_text(out: &mut dyn Write, r: &PacketReport, origin: Origin) -> io::Result<()> {
    let id = r
        .packet_id
        .map(id_label)
        .unwrap_or_else(|| "payload".into());
    write!(
        out,
        "{}: {id}, {} layer, {} byte(s)",
        origin.label(),
        r.layer.as_str(),
        r.input_len
    )?;
    if let Some(n) = r.decompressed_len {
        write!(out, ", {n} byte(s) after LZ4")?;
    }
    writeln!(out)?;
    for (i, s) in r.streams.iter().enumerate() {
        write_stream(out, s, i, r.streams.len() > 1 || r.packet_id == Some(0x1d))?;
    }
    let n = r.warning_count();
    if n > 0 {
        writeln!(out, "  ({n} warning(s) on stderr)")?;
    }
    Ok(())
}

fn write_stream(out: &mut dyn Write, s: &Stream, index: usize, inner: bool) -> io::Result<()> {
    let pad = if inner { "    " } else { "  " };
    if inner {
        let at = s.id_offset.map(|o| format!(" @{o}")).unwrap_or_default();
        writeln!(
            out,
            "  inner #{index}{at}: {}, {} byte(s)",
            id_label(s.packet_id),
            s.len
        )?;
    }
    if !s.is_update_stream() {
        writeln!(out, "{pad}(not a NetworkUpdate: bytes not decoded)")?;
        return Ok(());
    }
    match s.tick {
        Some(t) => writeln!(out, "{pad}tick {t}, {} sub-update(s)", s.subs.len())?,
        None => writeln!(out, "{pad}no tick")?,
    }
    for (i, d) in s.subs.iter().enumerate() {
        write_sub(out, d, i, pad)?;
    }
    if let Some((o, n)) = s.undecoded {
        writeln!(out, "{pad}@{o}: {n} byte(s) not framed")?;
    }
    Ok(())
}

fn write_sub(out: &mut dyn Write, d: &DecodedSub, i: usize, pad: &str) -> io::Result<()> {
    let sub = &d.sub;
    let how = match sub.kind {
        SubKind::Raw { size } => format!("raw size {size}"),
        SubKind::Delta { bitfield, len } => format!(
            "delta bitfield {} ({:0w$b}), took {}",
            hex_string(&bitfield.to_be_bytes()[8 - len as usize..]),
            bitfield,
            sub.taken,
            w = len as usize * 8
        ),
    };
    writeln!(
        out,
        "{pad}#{i} @{} {how}: {}",
        sub.offset,
        spaced_hex(&sub.data)
    )?;
    let u = &d.update;
    let pad2 = format!("{pad}    ");
    writeln!(out, "{pad2}{}", update_heading(u))?;
    for f in &u.fields {
        let note = if u.undocumented.contains(&f.name.as_ref()) {
            UNDOCUMENTED_NOTE
        } else {
            ""
        };
        write_field(out, f, &format!("{pad2}  "), note)?;
    }
    Ok(())
}

/// Appended to the first line of a field whose layout seed 002 does not give.
const UNDOCUMENTED_NOTE: &str = "  [not in seed 002]";

fn update_heading(u: &Update) -> String {
    let mut s = u.display_name();
    if let Some(c) = u.controller_type {
        s.push_str(&format!(" controller {c}"));
        if let Some(n) = controller_name(u.object_type, c) {
            s.push_str(&format!(" ({n})"));
        }
    }
    if let Some(id) = u.object_id {
        s.push_str(&format!(" id {id}"));
    }
    if let Some(l) = u.layout {
        if l.source != super::update::LayoutSource::Header {
            let name = controller_name(u.object_type, l.controller_type).unwrap_or("?");
            s.push_str(&format!(
                " [layout: controller {} ({name}), {}]",
                l.controller_type,
                l.source.as_str()
            ));
        }
    }
    s
}

fn scalar(v: &Value) -> Option<String> {
    Some(match v {
        Value::Bool(b) => b.to_string(),
        Value::Uint(n) => n.to_string(),
        Value::Int(n) => n.to_string(),
        Value::Float(f) => format!("{}", *f as f32),
        Value::ObjectId(n) => format!("{n} (0x{n:08X})"),
        Value::Hex(n) => format!("0x{n:08X}"),
        Value::Text(t) => t.clone(),
        Value::Vec3(a) => format!("({}, {}, {})", a[0], a[1], a[2]),
        Value::Bytes(b) => spaced_hex(b),
        Value::List(_) | Value::Group(_) => return None,
    })
}

fn write_field(out: &mut dyn Write, f: &Field, pad: &str, note: &str) -> io::Result<()> {
    if let Some(s) = scalar(&f.value) {
        return writeln!(out, "{pad}{} = {s}{note}", f.name);
    }
    match &f.value {
        Value::Group(g) if g.iter().all(|c| scalar(&c.value).is_some()) => {
            let parts: Vec<String> = g
                .iter()
                .map(|c| format!("{}: {}", c.name, scalar(&c.value).unwrap_or_default()))
                .collect();
            writeln!(out, "{pad}{} = {{{}}}{note}", f.name, parts.join(", "))
        }
        Value::Group(g) => {
            writeln!(out, "{pad}{}:{note}", f.name)?;
            for c in g {
                write_field(out, c, &format!("{pad}  "), "")?;
            }
            Ok(())
        }
        Value::List(items) => {
            writeln!(out, "{pad}{}: {} item(s){note}", f.name, items.len())?;
            for (i, item) in items.iter().enumerate() {
                let child = Field::keyed(f.id, format!("[{i}]"), item.clone(), f.span);
                write_field(out, &child, &format!("{pad}  "), "")?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------- JSON

fn warnings_json(w: &[Warning]) -> Json {
    Json::Array(w.iter().map(Warning::to_json).collect())
}

fn undecoded_json(u: Option<(usize, usize)>) -> Json {
    match u {
        Some((offset, len)) => json!({ "offset": offset, "len": len }),
        None => Json::Null,
    }
}

/// The `<name>_hex` twin of an id or hex-style value, as wide as the field's wire type.
/// Every such field in a NetworkUpdate is a be u32 (object ids, tool instance ids,
/// player ids, colours), so the twin is always eight digits: `0x00000001`, never `0x01`.
/// (`game::field::hex_padded` sizes by value, which would give one field two widths.)
fn hex_twin(v: &Value) -> Option<String> {
    match v {
        Value::ObjectId(n) => Some(format!("0x{n:08X}")),
        Value::Hex(n) => Some(match u32::try_from(*n) {
            Ok(n) => format!("0x{n:08X}"),
            Err(_) => format!("0x{n:016X}"),
        }),
        _ => None,
    }
}

fn value_json(v: &Value) -> Json {
    match v {
        Value::List(items) => Json::Array(items.iter().map(value_json).collect()),
        Value::Group(fields) => fields_json(fields),
        other => other.to_json(),
    }
}

/// Fields as a JSON object with `<name>_hex` twins (see [`hex_twin`]); repeated names
/// get a numeric suffix, as in the Bridge Commander output.
pub fn fields_json(fields: &[Field]) -> Json {
    let mut map = Map::with_capacity(fields.len());
    for f in fields {
        let mut key = f.name.to_string();
        if map.contains_key(&key) {
            let mut n = 2;
            while map.contains_key(&format!("{key}_{n}")) {
                n += 1;
            }
            key = format!("{key}_{n}");
        }
        if let Some(hex) = hex_twin(&f.value) {
            map.insert(format!("{key}_hex"), json!(hex));
        }
        map.insert(key, value_json(&f.value));
    }
    Json::Object(map)
}

pub fn update_json(u: &Update) -> Json {
    json!({
        "name": u.name(),
        "header_ok": u.header_ok,
        "update_type": u.update_type,
        "update_type_name": update_type_name(u.update_type),
        "object_type": u.object_type,
        "object_type_name": object_type_name(u.object_type),
        "controller_type": u.controller_type,
        "controller_name": u.controller_type.and_then(|c| controller_name(u.object_type, c)),
        "object_id": u.object_id,
        "layout": u.layout.map(|l| json!({
            "controller_type": l.controller_type,
            "controller_name": controller_name(u.object_type, l.controller_type),
            "source": l.source.as_str(),
            "inferred": l.source == super::update::LayoutSource::Inferred,
        })),
        "fields": fields_json(&u.fields),
        "undocumented_fields": u.undocumented,
        "warnings": warnings_json(&u.warnings),
    })
}

fn sub_json(i: usize, d: &DecodedSub) -> Json {
    let s = &d.sub;
    let mut j = json!({
        "index": i,
        "offset": s.offset,
        "kind": s.kind.name(),
        "taken": s.taken,
        "len": s.data.len(),
        "bytes": hex_string(&s.data),
    });
    match s.kind {
        SubKind::Raw { size } => j["size"] = json!(size),
        SubKind::Delta { bitfield, len } => {
            j["bitfield"] = json!(hex_string(&bitfield.to_be_bytes()[8 - len as usize..]));
            j["bitfield_value"] = json!(bitfield);
            j["bitfield_len"] = json!(len);
        }
    }
    j["update"] = update_json(&d.update);
    j
}

fn stream_json(s: &Stream) -> Json {
    json!({
        "packet_id": s.packet_id,
        "packet_name": packet_name(s.packet_id),
        "id_offset": s.id_offset,
        "len": s.len,
        "tick": s.tick,
        "sub_updates": s.subs.iter().enumerate().map(|(i, d)| sub_json(i, d)).collect::<Vec<_>>(),
        "undecoded": undecoded_json(s.undecoded),
        "warnings": warnings_json(&s.warnings),
    })
}

pub fn packet_json(r: &PacketReport, origin: Origin) -> Json {
    json!({
        "index": origin.index,
        "line": origin.line,
        "layer": r.layer.as_str(),
        "input_len": r.input_len,
        "packet_id": r.packet_id,
        "packet_name": r.packet_id.and_then(packet_name),
        "decompressed_len": r.decompressed_len,
        "decoded": r.decoded_something(),
        "streams": r.streams.iter().map(stream_json).collect::<Vec<_>>(),
        "warnings": warnings_json(&r.warnings),
    })
}

// ---------------------------------------------------------------- stderr

/// One line per warning, each saying where it is: input position, packet offset,
/// sub-update and byte inside the rebuilt update.
pub fn located_warnings(r: &PacketReport, origin: Origin) -> Vec<String> {
    let head = origin.label();
    let mut lines = Vec::new();
    for w in &r.warnings {
        lines.push(format!("{head}: {w}"));
    }
    for (si, s) in r.streams.iter().enumerate() {
        let inner = if r.streams.len() > 1 || r.packet_id == Some(0x1d) {
            format!(", inner packet #{si}")
        } else {
            String::new()
        };
        for w in &s.warnings {
            lines.push(format!("{head}{inner}: {w}"));
        }
        for (i, d) in s.subs.iter().enumerate() {
            for w in &d.update.warnings {
                let at = w
                    .offset
                    .map(|o| format!(", update byte {o}"))
                    .unwrap_or_default();
                lines.push(format!(
                    "{head}{inner}: sub-update #{i} at offset {}{at}: {}: {}",
                    d.sub.offset, w.code, w.message
                ));
            }
        }
    }
    lines
}
