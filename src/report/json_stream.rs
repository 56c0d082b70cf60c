//! The `"type":"packet"` JSON record of [`super::json::packet_json`], written straight to
//! a byte buffer instead of being built as a `serde_json::Value` tree first.
//!
//! The output is byte for byte the same as `serde_json::to_writer(packet_json(..))`:
//! keys in the order of a `serde_json::Map` (sorted, as the crate is built without
//! `preserve_order`), strings escaped and numbers formatted by `serde_json` itself.
//! `decode --format jsonl` writes millions of these; building, sorting and dropping a
//! tree of maps per record was most of its cost. The tests compare both writers on the
//! real-peer captures.

use crate::diag::Warning;
use crate::game::field::{Field, Value};
use crate::game::GameMessage;
use crate::pipeline::record::{
    FragmentRef, GamePacket, MessageRecord, PacketBody, PacketRecord, TransportInfo,
};
use std::borrow::Cow;
use std::io::Write;

/// One value of a fixed-key object; objects are lists of (key, value) sorted before
/// writing, so their order is the map's whatever order they are listed in.
enum V<'a> {
    Null,
    Bool(bool),
    U64(u64),
    /// A float written as `serde_json` writes an `f64` number (finite in practice).
    F64(f64),
    Str(&'a str),
    /// `0x` and two or more upper-case hex digits, as a string.
    Hex2(u64),
    /// `host:port`, as a string.
    Addr(std::net::SocketAddr),
    /// Lower-case hex of the bytes, as a string.
    HexBytes(&'a [u8]),
    U64s(&'a [u64]),
    Fields(&'a [Field]),
    /// Two warning lists written as one array.
    Warnings(&'a [Warning], &'a [Warning]),
    Fragment(Option<FragmentRef>),
    Ack(&'a TransportInfo),
    /// A game message with its frames: the `assembled` object.
    Assembled(&'a GameMessage, &'a [u64]),
}

fn opt_u64(v: Option<u64>) -> V<'static> {
    v.map_or(V::Null, V::U64)
}

/// Writes `serde_json` text into a byte buffer (writing to a `Vec` cannot fail).
fn ser<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    let _ = serde_json::to_writer(&mut *out, v);
}

fn write_object(out: &mut Vec<u8>, entries: &mut [(&str, V<'_>)]) {
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (k, (key, v)) in entries.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        ser(out, *key);
        out.push(b':');
        write_value(out, v);
    }
    out.push(b'}');
}

fn write_value(out: &mut Vec<u8>, v: &V<'_>) {
    match v {
        V::Null => out.extend_from_slice(b"null"),
        V::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        V::U64(n) => ser(out, n),
        V::F64(f) => write_f64(out, *f),
        V::Str(s) => ser(out, *s),
        V::Hex2(n) => {
            let _ = write!(out, "\"0x{n:02X}\"");
        }
        V::Addr(a) => {
            let _ = write!(out, "\"{a}\"");
        }
        V::HexBytes(b) => write_hex_bytes(out, b),
        V::U64s(list) => {
            out.push(b'[');
            for (k, n) in list.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                ser(out, n);
            }
            out.push(b']');
        }
        V::Fields(f) => write_fields(out, f),
        V::Warnings(a, b) => {
            out.push(b'[');
            for (k, w) in a.iter().chain(b.iter()).enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                write_warning(out, w);
            }
            out.push(b']');
        }
        V::Fragment(None) => out.extend_from_slice(b"null"),
        V::Fragment(Some(f)) => write_object(
            out,
            &mut [
                ("index", V::U64(f.index as u64)),
                ("total", opt_u64(f.total.map(u64::from))),
            ],
        ),
        V::Ack(TransportInfo::Ack {
            flags,
            fragment_index,
            acked_frame,
            delay_ns,
            duplicate,
            ..
        }) => write_object(
            out,
            &mut [
                ("flags", V::U64(*flags as u64)),
                ("fragment_index", opt_u64(fragment_index.map(u64::from))),
                ("acked_frame", opt_u64(*acked_frame)),
                (
                    "delay",
                    delay_ns.map_or(V::Null, |d| V::F64(d as f64 / 1e9)),
                ),
                ("duplicate", V::Bool(*duplicate)),
            ],
        ),
        V::Ack(_) => out.extend_from_slice(b"null"),
        V::Assembled(g, frames) => write_object(
            out,
            &mut [
                ("opcode", V::U64(g.opcode as u64)),
                ("opcode_hex", V::Hex2(g.opcode as u64)),
                ("name", V::Str(g.name)),
                ("length", V::U64(g.length as u64)),
                ("fields", V::Fields(&g.fields)),
                ("warnings", V::Warnings(&g.warnings, &[])),
                ("frames", V::U64s(frames)),
            ],
        ),
    }
}

/// An `f64` number exactly as `serde_json` writes one (non-finite numbers become
/// `null` there too).
fn write_f64(out: &mut Vec<u8>, f: f64) {
    ser(out, &f);
}

fn write_hex_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2 + 2);
    out.push(b'"');
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize]);
        out.push(DIGITS[(b & 15) as usize]);
    }
    out.push(b'"');
}

fn write_warning(out: &mut Vec<u8>, w: &Warning) {
    write_object(
        out,
        &mut [
            ("code", V::Str(w.code)),
            ("offset", opt_u64(w.offset.map(|o| o as u64))),
            ("message", V::Str(&w.message)),
        ],
    );
}

/// `Value::to_json` of `crate::game::field`, written directly.
fn write_field_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Bool(b) => write_value(out, &V::Bool(*b)),
        Value::Uint(n) | Value::Hex(n) => ser(out, n),
        Value::Int(n) => ser(out, n),
        Value::ObjectId(n) => ser(out, n),
        Value::Float(f) => write_float(out, *f),
        Value::Text(s) => ser(out, s.as_str()),
        Value::Vec3(v) => {
            out.push(b'[');
            for (k, c) in v.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                write_float(out, *c as f64);
            }
            out.push(b']');
        }
        Value::Bytes(b) => write_hex_bytes(out, b),
        Value::List(items) => {
            out.push(b'[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                write_field_value(out, item);
            }
            out.push(b']');
        }
        Value::Group(fields) => write_fields(out, fields),
    }
}

/// `float_json` of `crate::game::field`: a value that came from an `f32` is written as
/// the `f64` nearest to the `f32`'s shortest decimal form (5.13, not 5.130000114…);
/// non-finite values become strings.
fn write_float(out: &mut Vec<u8>, v: f64) {
    if !v.is_finite() {
        let _ = write!(out, "\"{v}\"");
        return;
    }
    let short = v as f32;
    if short as f64 == v {
        let mut buf = [0u8; 64];
        let mut cursor = std::io::Cursor::new(&mut buf[..]);
        if write!(cursor, "{short}").is_ok() {
            let n = cursor.position() as usize;
            if let Some(parsed) = std::str::from_utf8(&buf[..n])
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
            {
                write_f64(out, parsed);
                return;
            }
        }
    }
    write_f64(out, v);
}

/// What a key of a fields object holds.
enum FieldEntry<'a> {
    Value(&'a Value),
    /// The `<name>_hex` twin of an id or hex value.
    HexTwin(&'a Value),
}

/// `fields_to_json`: names made unique with `_2`, `_3`, … and a `<name>_hex` twin for
/// ids and hex values, with the same insert-and-replace order as the map it mirrors.
fn write_fields(out: &mut Vec<u8>, fields: &[Field]) {
    let mut map: Vec<(Cow<'_, str>, FieldEntry<'_>)> = Vec::with_capacity(fields.len() + 2);
    fn insert<'a>(
        map: &mut Vec<(Cow<'a, str>, FieldEntry<'a>)>,
        key: Cow<'a, str>,
        e: FieldEntry<'a>,
    ) {
        match map.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = e,
            None => map.push((key, e)),
        }
    }
    let contains =
        |map: &Vec<(Cow<'_, str>, FieldEntry<'_>)>, key: &str| map.iter().any(|(k, _)| k == key);
    for f in fields {
        let mut key: Cow<'_, str> = Cow::Borrowed(&f.name);
        if contains(&map, &key) {
            let mut n = 2;
            while contains(&map, &format!("{key}_{n}")) {
                n += 1;
            }
            key = Cow::Owned(format!("{key}_{n}"));
        }
        if matches!(f.value, Value::ObjectId(_) | Value::Hex(_)) {
            insert(
                &mut map,
                Cow::Owned(format!("{key}_hex")),
                FieldEntry::HexTwin(&f.value),
            );
        }
        insert(&mut map, key, FieldEntry::Value(&f.value));
    }
    map.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    out.push(b'{');
    for (k, (key, e)) in map.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        ser(out, key.as_ref());
        out.push(b':');
        match e {
            FieldEntry::Value(v) => write_field_value(out, v),
            FieldEntry::HexTwin(Value::ObjectId(v)) => {
                let _ = write!(out, "\"0x{v:08X}\"");
            }
            FieldEntry::HexTwin(Value::Hex(v)) => {
                let _ = write!(out, "\"0x{v:02X}\"");
            }
            FieldEntry::HexTwin(_) => out.extend_from_slice(b"null"),
        }
    }
    out.push(b'}');
}

/// `message_json`, written directly.
fn write_message(out: &mut Vec<u8>, msg: &MessageRecord, names: &dyn Fn(u32) -> Option<String>) {
    // Every key message_json can produce; game keys and transport keys never overlap.
    let mut e: Vec<(&str, V<'_>)> = Vec::with_capacity(20);
    e.push(("offset", V::U64(msg.offset as u64)));
    e.push(("length", V::U64(msg.length as u64)));
    e.push(("transport_type", V::U64(msg.transport_type as u64)));
    e.push(("reliable", V::Bool(msg.reliable())));
    e.push(("seq", opt_u64(msg.seq().map(u64::from))));
    e.push(("fragment", V::Fragment(msg.fragment())));
    e.push(("retransmission", V::Bool(msg.retransmission)));
    if msg.keepalive {
        e.push(("keepalive", V::Bool(true)));
    }
    if let Some(f) = msg.original_frame {
        e.push(("original_frame", V::U64(f)));
    }
    match &msg.transport {
        TransportInfo::Data {
            flags_len, ordered, ..
        } => {
            e.push(("transport_name", V::Str("data")));
            e.push(("flags_len", V::U64(*flags_len as u64)));
            e.push(("ordered", V::Bool(*ordered)));
        }
        t @ TransportInfo::Ack { .. } => {
            e.push(("transport_name", V::Str("ack")));
            e.push(("ack", V::Ack(t)));
        }
        TransportInfo::Low { name, fields, .. } => {
            e.push(("transport_name", V::Str(name)));
            e.push(("fields", V::Fields(fields)));
        }
        TransportInfo::Unknown => {
            e.push(("transport_name", V::Str("unknown")));
        }
    }
    let object_name;
    if let Some(g) = &msg.game {
        // A game message's fields replace a connection-management message's (never
        // both in practice; the map keeps the last insert).
        e.retain(|(k, _)| *k != "fields");
        e.push(("opcode", V::U64(g.opcode as u64)));
        e.push(("opcode_hex", V::Hex2(g.opcode as u64)));
        e.push(("name", V::Str(g.name)));
        e.push(("game_length", V::U64(g.length as u64)));
        e.push(("fields", V::Fields(&g.fields)));
        object_name = super::json::object_of(g).and_then(names);
        if let Some(n) = &object_name {
            e.push(("object", V::Str(n)));
        }
    }
    if let Some(a) = &msg.assembled {
        e.push(("assembled", V::Assembled(&a.game, &a.frames)));
    }
    if let Some(r) = msg.relay_of {
        e.push(("relay_of", V::U64(r)));
    }
    let game_warnings: &[Warning] = msg.game.as_ref().map_or(&[], |g| &g.warnings);
    e.push(("warnings", V::Warnings(&msg.warnings, game_warnings)));
    write_object(out, &mut e);
}

fn write_messages(
    out: &mut Vec<u8>,
    g: &GamePacket,
    names: &dyn Fn(u32) -> Option<String>,
    keep: &dyn Fn(&MessageRecord) -> bool,
) {
    out.push(b'[');
    let mut first = true;
    for m in g.messages.iter().filter(|m| keep(m)) {
        if !first {
            out.push(b',');
        }
        first = false;
        write_message(out, m, names);
    }
    out.push(b']');
}

/// Append the JSON of `packet_json(p, with_hex, client_name, names)` to `out`, with only
/// the messages `keep` accepts in `messages`.
pub fn write_packet(
    out: &mut Vec<u8>,
    p: &PacketRecord,
    with_hex: bool,
    client_name: Option<&str>,
    names: &dyn Fn(u32) -> Option<String>,
    keep: &dyn Fn(&MessageRecord) -> bool,
) {
    let mut e: Vec<(&str, V<'_>)> = Vec::with_capacity(17);
    e.push(("type", V::Str("packet")));
    e.push(("frame", V::U64(p.frame)));
    e.push(("time", V::F64(super::json::time_seconds(p.ts_ns))));
    e.push(("src", V::Addr(p.src)));
    e.push(("dst", V::Addr(p.dst)));
    e.push(("direction", V::Str(p.direction.as_str())));
    e.push(("session", V::U64(p.session as u64)));
    e.push(("client", V::U64(p.client as u64)));
    if let Some(n) = client_name {
        e.push(("client_name", V::Str(n)));
    }
    e.push(("udp_length", V::U64(p.udp_len as u64)));
    let game = match &p.body {
        PacketBody::GameSpy { text } => {
            e.push(("kind", V::Str("gamespy")));
            e.push(("text", V::Str(text)));
            None
        }
        PacketBody::Game(g) => {
            e.push(("kind", V::Str("game")));
            e.push(("peer_id", V::U64(g.peer_id as u64)));
            e.push(("msg_count", V::U64(g.msg_count as u64)));
            if with_hex {
                e.push(("plain_hex", V::HexBytes(&g.plain)));
            }
            e.push(("warnings", V::Warnings(&g.warnings, &[])));
            Some(g)
        }
    };
    e.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    let mut first = true;
    let mut put_key = |out: &mut Vec<u8>, key: &str| {
        if !first {
            out.push(b',');
        }
        first = false;
        ser(out, key);
        out.push(b':');
    };
    // "messages" sorts between "kind" and "msg_count": written in its place.
    let mut messages_done = game.is_none();
    for (key, v) in &e {
        if !messages_done && *key > "messages" {
            if let Some(g) = game {
                put_key(out, "messages");
                write_messages(out, g, names, keep);
            }
            messages_done = true;
        }
        put_key(out, key);
        write_value(out, v);
    }
    if !messages_done {
        if let Some(g) = game {
            put_key(out, "messages");
            write_messages(out, g, names, keep);
        }
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::field::Span;

    fn via_value(fields: &[Field]) -> String {
        serde_json::to_string(&crate::game::field::fields_to_json(fields)).unwrap()
    }

    fn direct(fields: &[Field]) -> String {
        let mut out = Vec::new();
        write_fields(&mut out, fields);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn fields_match_the_value_form_including_odd_names_and_floats() {
        let s = Span::new(0, 1);
        let fields = vec![
            Field::new("object_id", Value::ObjectId(0x3FFF_FFFF), s),
            // Collides with the twin above: becomes object_id_hex_2.
            Field::new("object_id_hex", Value::Text("x\"y\n".into()), s),
            Field::new("a", Value::Hex(0x1C), s),
            // A field named like the twin of a later field: the twin replaces it.
            Field::new("b_hex", Value::Uint(1), s),
            Field::new("b", Value::Hex(2), s),
            Field::new("raw", Value::Bytes(vec![0xAB, 0x01]), s),
            Field::new("raw", Value::Bytes(vec![]), s),
            Field::new("raw", Value::Int(-5), s),
            Field::new("speed", Value::Float(5.13f32 as f64), s),
            Field::new("exact", Value::Float(0.1), s),
            Field::new("nan", Value::Float(f64::NAN), s),
            Field::new("inf", Value::Float(f64::NEG_INFINITY), s),
            Field::new("v", Value::Vec3([1.0, -0.5, 1e-7]), s),
            Field::new(
                "list",
                Value::List(vec![Value::Float(2.5), Value::Text("é".into())]),
                s,
            ),
            Field::new(
                "group",
                Value::Group(vec![
                    Field::new("z", Value::Bool(true), s),
                    Field::new("id", Value::ObjectId(7), s),
                ]),
                s,
            ),
            Field::new("Upper", Value::Uint(u64::MAX), s),
        ];
        assert_eq!(direct(&fields), via_value(&fields));
        assert_eq!(direct(&[]), via_value(&[]));
    }
}
