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
use crate::pipeline::record::{
    FragmentRef, GamePacket, MessageRecord, PacketBody, PacketRecord, TransportInfo,
};
use rustc_hash::FxHashMap;
use serde_json::ser::{CompactFormatter, Formatter};
use std::io::Write;
use std::net::SocketAddr;
use std::rc::Rc;

// Writing into a Vec cannot fail: the io::Results below are ignored on purpose.

fn u64_json(out: &mut Vec<u8>, n: u64) {
    let _ = CompactFormatter.write_u64(out, n);
}

fn i64_json(out: &mut Vec<u8>, n: i64) {
    let _ = CompactFormatter.write_i64(out, n);
}

fn opt_u64_json(out: &mut Vec<u8>, n: Option<u64>) {
    match n {
        Some(n) => u64_json(out, n),
        None => out.extend_from_slice(b"null"),
    }
}

fn bool_json(out: &mut Vec<u8>, b: bool) {
    out.extend_from_slice(if b { b"true" } else { b"false" });
}

/// An `f64` number as `serde_json` writes one (`null` when not finite).
fn f64_json(out: &mut Vec<u8>, f: f64) {
    if f.is_finite() {
        let _ = CompactFormatter.write_f64(out, f);
    } else {
        out.extend_from_slice(b"null");
    }
}

/// Whether `bytes` holds a byte `serde_json` escapes (`"`, `\\`, a control character),
/// eight bytes at a time: most strings written here have none.
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte below n sets its high bit in (x - n·ONES) & !x & HIGH (exact for the word).
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * n as u64) & !x & HIGH;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(c);
        let x = u64::from_le_bytes(word);
        let quote = x ^ (ONES * b'"' as u64);
        let backslash = x ^ (ONES * b'\\' as u64);
        if below(x, 0x20) | below(quote, 1) | below(backslash, 1) != 0 {
            return true;
        }
    }
    chunks
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// A string with `serde_json`'s escapes: `\"`, `\\`, `\b \t \n \f \r`, and `\u00xx`
/// for the other control characters; everything else as is.
fn str_json(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if !needs_escape(bytes) {
        out.reserve(bytes.len() + 2);
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    out.push(b'"');
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0C => b"\\f",
            b'\r' => b"\\r",
            0..=0x1F => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[run..i]);
        run = i + 1;
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 15) as usize]);
        } else {
            out.extend_from_slice(esc);
        }
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

fn hex_bytes_json(out: &mut Vec<u8>, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2 + 2);
    out.push(b'"');
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize]);
        out.push(DIGITS[(b & 15) as usize]);
    }
    out.push(b'"');
}

/// `"ip:port"` as `SocketAddr`'s `Display` writes it (IPv4 by hand, IPv6 through it).
fn addr_json(out: &mut Vec<u8>, addr: &SocketAddr) {
    match addr {
        SocketAddr::V4(a) => {
            out.push(b'"');
            for (k, octet) in a.ip().octets().iter().enumerate() {
                if k > 0 {
                    out.push(b'.');
                }
                u64_json(out, *octet as u64);
            }
            out.push(b':');
            u64_json(out, a.port() as u64);
            out.push(b'"');
        }
        SocketAddr::V6(_) => {
            let _ = write!(out, "\"{addr}\"");
        }
    }
}

/// Writes one object whose keys are fixed words given in sorted order (checked in
/// debug builds, so the tests catch a key out of place).
struct Obj<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
    #[cfg(debug_assertions)]
    last: &'static str,
}

impl<'o> Obj<'o> {
    fn new(out: &'o mut Vec<u8>) -> Obj<'o> {
        out.push(b'{');
        Obj {
            out,
            first: true,
            #[cfg(debug_assertions)]
            last: "",
        }
    }
    /// Start the value of `key` (plain ASCII, written without escaping).
    fn key(&mut self, key: &'static str) -> &mut Vec<u8> {
        #[cfg(debug_assertions)]
        {
            assert!(self.first || self.last < key, "{} then {key}", self.last);
            self.last = key;
        }
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }
    fn end(self) {
        self.out.push(b'}');
    }
}

fn warnings_json<'w>(out: &mut Vec<u8>, all: impl Iterator<Item = &'w Warning>) {
    out.push(b'[');
    for (k, w) in all.enumerate() {
        if k > 0 {
            out.push(b',');
        }
        let mut o = Obj::new(out);
        str_json(o.key("code"), w.code.as_str());
        str_json(o.key("message"), &w.message);
        opt_u64_json(o.key("offset"), w.offset.map(|v| v as u64));
        o.end();
    }
    out.push(b']');
}

fn opcode_hex_json(out: &mut Vec<u8>, op: u8) {
    hex_twin_json(out, op as u64, 2);
}

/// A key of a fields object: a field name, a `_N` suffix that makes it unique, and the
/// `_hex` ending of a twin, compared as the text they make.
#[derive(Clone, Copy)]
struct Key<'a> {
    name: &'a str,
    n: u32,
    hex: bool,
}

impl Key<'_> {
    /// The text after the name: `_N` and/or `_hex`, rendered by hand.
    fn suffix(&self, buf: &mut [u8; 16]) -> usize {
        let mut len = 0;
        if self.n > 0 {
            let mut digits = [0u8; 10];
            let mut d = 0;
            let mut n = self.n;
            while n > 0 {
                digits[d] = b'0' + (n % 10) as u8;
                n /= 10;
                d += 1;
            }
            buf[0] = b'_';
            len = 1;
            for k in (0..d).rev() {
                buf[len] = digits[k];
                len += 1;
            }
        }
        if self.hex {
            buf[len..len + 4].copy_from_slice(b"_hex");
            len += 4;
        }
        len
    }
    fn cmp_text(&self, other: &Key<'_>) -> std::cmp::Ordering {
        if self.n == 0 && !self.hex && other.n == 0 && !other.hex {
            return self.name.cmp(other.name);
        }
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        let (la, lb) = (self.suffix(&mut a), other.suffix(&mut b));
        let x = self.name.bytes().chain(a[..la].iter().copied());
        let y = other.name.bytes().chain(b[..lb].iter().copied());
        x.cmp(y)
    }
    fn eq_text(&self, other: &Key<'_>) -> bool {
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        let (la, lb) = (self.suffix(&mut a), other.suffix(&mut b));
        self.name.len() + la == other.name.len() + lb
            && self.cmp_text(other) == std::cmp::Ordering::Equal
    }
    fn write(&self, out: &mut Vec<u8>) {
        let mut buf = [0u8; 16];
        let n = self.suffix(&mut buf);
        str_json(out, self.name);
        if n > 0 {
            // The suffix is plain ASCII: it goes inside the closing quote.
            out.pop();
            out.extend_from_slice(&buf[..n]);
            out.push(b'"');
        }
    }
}

/// Digits of `field::hex_padded`: the value's natural width, 2, 4, 8 or 16.
fn natural_width(v: u64) -> usize {
    match v {
        0..=0xFF => 2,
        0x100..=0xFFFF => 4,
        0x1_0000..=0xFFFF_FFFF => 8,
        _ => 16,
    }
}

/// `"0x` + upper-case hex, at least `width` digits + `"`, as `format!("0x{v:0width$X}")`.
fn hex_twin_json(out: &mut Vec<u8>, v: u64, width: usize) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut buf = [0u8; 16];
    let mut n = 0;
    let mut x = v;
    while x > 0 || n < width {
        buf[n] = DIGITS[(x & 15) as usize];
        x >>= 4;
        n += 1;
    }
    out.extend_from_slice(b"\"0x");
    for k in (0..n).rev() {
        out.push(buf[k]);
    }
    out.push(b'"');
}

/// The keys of one fields object, in output order: the JSON text of each key (`"name":`,
/// with the comma before every key but the first) and the field its value comes from.
/// It depends only on the field names and on which values have a hex twin, so it is
/// worked out once per such sequence and reused ([`PacketWriter`]).
struct Layout {
    /// The names this layout was made for, one after another, to confirm a cache hit.
    names: Box<[u8]>,
    /// Per field: its name's length and whether its value has a hex twin.
    shape: Box<[(u32, bool)]>,
    slots: Box<[Slot]>,
    /// The keys' JSON text, one after another.
    text: Box<[u8]>,
}

/// One key of a [`Layout`]: its text is `text[start..end]`; it holds the value of
/// `fields[field]`, or that value's hex twin.
#[derive(Clone, Copy)]
struct Slot {
    start: u32,
    end: u32,
    field: u32,
    twin: bool,
}

fn has_twin(v: &Value) -> bool {
    matches!(v, Value::ObjectId(_) | Value::Hex(_))
}

impl Layout {
    /// `fields_to_json`'s keys: names made unique with `_2`, `_3`, … and a `<name>_hex`
    /// twin for ids and hex values, with the same insert-and-replace order as the map it
    /// mirrors, sorted as the map sorts them.
    fn of(fields: &[Field]) -> Layout {
        let mut map: Vec<(Key<'_>, u32, bool)> = Vec::with_capacity(fields.len() + 4);
        let contains =
            |map: &[(Key<'_>, u32, bool)], key: &Key<'_>| map.iter().any(|(k, ..)| k.eq_text(key));
        // Insert or replace, as a map does.
        fn put<'a>(map: &mut Vec<(Key<'a>, u32, bool)>, k: Key<'a>, field: u32, twin: bool) {
            match map.iter_mut().find(|(x, ..)| x.eq_text(&k)) {
                Some(slot) => (slot.1, slot.2) = (field, twin),
                None => map.push((k, field, twin)),
            }
        }
        for (i, f) in fields.iter().enumerate() {
            let mut key = Key {
                name: &f.name,
                n: 0,
                hex: false,
            };
            if contains(&map, &key) {
                key.n = 2;
                while contains(&map, &key) {
                    key.n += 1;
                }
            }
            if has_twin(&f.value) {
                put(&mut map, Key { hex: true, ..key }, i as u32, true);
            }
            put(&mut map, key, i as u32, false);
        }
        map.sort_unstable_by(|a, b| a.0.cmp_text(&b.0));
        let mut text = Vec::new();
        let mut slots = Vec::with_capacity(map.len());
        for (k, (key, field, twin)) in map.iter().enumerate() {
            let start = text.len() as u32;
            if k > 0 {
                text.push(b',');
            }
            key.write(&mut text);
            text.push(b':');
            slots.push(Slot {
                start,
                end: text.len() as u32,
                field: *field,
                twin: *twin,
            });
        }
        Layout {
            names: fields
                .iter()
                .flat_map(|f| f.name.bytes())
                .collect::<Vec<u8>>()
                .into(),
            shape: fields
                .iter()
                .map(|f| (f.name.len() as u32, has_twin(&f.value)))
                .collect(),
            slots: slots.into(),
            text: text.into(),
        }
    }

    /// Whether this layout was made for these names and twins.
    fn fits(&self, fields: &[Field]) -> bool {
        if self.shape.len() != fields.len() {
            return false;
        }
        let mut at = 0;
        for (f, &(len, twin)) in fields.iter().zip(self.shape.iter()) {
            let name = f.name.as_bytes();
            if name.len() != len as usize
                || has_twin(&f.value) != twin
                || self.names.get(at..at + name.len()) != Some(name)
            {
                return false;
            }
            at += name.len();
        }
        true
    }
}

/// A hash of the names of `fields` and of which values have a hex twin.
fn shape_hash(fields: &[Field]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, x: u64| (h.rotate_left(5) ^ x).wrapping_mul(K);
    let mut h = fields.len() as u64;
    for f in fields {
        let name = f.name.as_bytes();
        h = mix(h, name.len() as u64 | (has_twin(&f.value) as u64) << 63);
        let mut chunks = name.chunks_exact(8);
        for c in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            h = mix(h, u64::from_le_bytes(word));
        }
        let mut word = [0u8; 8];
        word[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        h = mix(h, u64::from_le_bytes(word));
    }
    h
}

/// At most this many layouts are kept; others are worked out each time. Decoders name
/// their fields from a fixed set (code and the ship catalog), so real input needs a
/// few hundred at most.
const MAX_LAYOUTS: usize = 4096;

/// The JSON text of one f32 value, as [`PacketWriter`] keeps it (`len` 0: empty).
#[derive(Clone, Copy)]
struct FloatText {
    bits: u32,
    len: u8,
    text: [u8; 23],
}

/// Slots of the f32 text cache, indexed by a hash of the bit pattern.
const FLOAT_SLOTS: usize = 1024;

/// Writes `"type":"packet"` records, keeping the [`Layout`] of each sequence of field
/// names seen and the text of recent f32 values (most are percentages of a byte, so a
/// few hundred distinct values): one per output stream.
pub struct PacketWriter {
    layouts: FxHashMap<u64, Rc<Layout>>,
    floats: Box<[FloatText]>,
}

impl Default for PacketWriter {
    fn default() -> PacketWriter {
        let empty = FloatText {
            bits: 0,
            len: 0,
            text: [0; 23],
        };
        PacketWriter {
            layouts: FxHashMap::default(),
            floats: vec![empty; FLOAT_SLOTS].into_boxed_slice(),
        }
    }
}

impl PacketWriter {
    /// `float_json` of `crate::game::field`: a value that came from an `f32` is written
    /// as the `f64` nearest to the `f32`'s `Display` form (5.13, not 5.130000114…),
    /// through the shortest-digits writer of [`super::json_float`] (tested equal to that
    /// path); non-finite values become strings.
    fn float(&mut self, out: &mut Vec<u8>, v: f64) {
        if !v.is_finite() {
            let _ = write!(out, "\"{v}\"");
            return;
        }
        let short = v as f32;
        if short as f64 != v {
            f64_json(out, v);
            return;
        }
        let bits = short.to_bits();
        let slot = bits.wrapping_mul(0x9E37_79B1) as usize >> (32 - FLOAT_SLOTS.trailing_zeros());
        let Some(cached) = self.floats.get_mut(slot) else {
            super::json_float::write_f32(out, short);
            return;
        };
        if cached.len > 0 && cached.bits == bits {
            out.extend_from_slice(&cached.text[..cached.len as usize]);
            return;
        }
        let start = out.len();
        super::json_float::write_f32(out, short);
        let text = &out[start..];
        if text.len() <= cached.text.len() {
            cached.bits = bits;
            cached.len = text.len() as u8;
            cached.text[..text.len()].copy_from_slice(text);
        }
    }

    fn fields(&mut self, out: &mut Vec<u8>, fields: &[Field]) {
        let h = shape_hash(fields);
        let layout = match self.layouts.get(&h) {
            Some(l) if l.fits(fields) => Rc::clone(l),
            // A hash shared by two shapes (never seen): the first keeps the entry.
            Some(_) => Rc::new(Layout::of(fields)),
            None => {
                let l = Rc::new(Layout::of(fields));
                if self.layouts.len() < MAX_LAYOUTS {
                    self.layouts.insert(h, Rc::clone(&l));
                }
                l
            }
        };
        out.push(b'{');
        for s in layout.slots.iter() {
            out.extend_from_slice(&layout.text[s.start as usize..s.end as usize]);
            // `fits` checked that `fields` has the layout's length.
            let v = &fields[s.field as usize].value;
            match (s.twin, v) {
                (false, v) => self.value(out, v),
                (true, Value::ObjectId(v)) => hex_twin_json(out, *v as u64, 8),
                (true, Value::Hex(v)) => hex_twin_json(out, *v, natural_width(*v)),
                (true, _) => out.extend_from_slice(b"null"),
            }
        }
        out.push(b'}');
    }

    /// `Value::to_json` of `crate::game::field`, written directly.
    fn value(&mut self, out: &mut Vec<u8>, v: &Value) {
        match v {
            Value::Bool(b) => bool_json(out, *b),
            Value::Uint(n) | Value::Hex(n) => u64_json(out, *n),
            Value::Int(n) => i64_json(out, *n),
            Value::ObjectId(n) => u64_json(out, *n as u64),
            Value::Float(f) => self.float(out, *f),
            Value::Text(s) => str_json(out, s),
            Value::Vec3(v) => {
                out.push(b'[');
                for (k, c) in v.iter().enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    self.float(out, *c as f64);
                }
                out.push(b']');
            }
            Value::Bytes(b) => hex_bytes_json(out, b),
            Value::List(items) => {
                out.push(b'[');
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    self.value(out, item);
                }
                out.push(b']');
            }
            Value::Group(fields) => self.fields(out, fields),
        }
    }
}

fn fragment_json(out: &mut Vec<u8>, f: Option<FragmentRef>) {
    let Some(f) = f else {
        out.extend_from_slice(b"null");
        return;
    };
    let mut o = Obj::new(out);
    u64_json(o.key("index"), f.index as u64);
    opt_u64_json(o.key("total"), f.total.map(u64::from));
    o.end();
}

/// `message_json`, written directly (keys in sorted order).
fn message_json(
    w: &mut PacketWriter,
    out: &mut Vec<u8>,
    msg: &MessageRecord,
    names: &dyn Fn(u32) -> Option<String>,
) {
    let mut o = Obj::new(out);
    let game = msg.game.as_ref();
    if let TransportInfo::Ack {
        flags,
        fragment_index,
        acked_frame,
        delay_ns,
        duplicate,
        ..
    } = &msg.transport
    {
        let mut a = Obj::new(o.key("ack"));
        opt_u64_json(a.key("acked_frame"), *acked_frame);
        match delay_ns {
            Some(d) => f64_json(a.key("delay"), *d as f64 / 1e9),
            None => a.key("delay").extend_from_slice(b"null"),
        }
        bool_json(a.key("duplicate"), *duplicate);
        u64_json(a.key("flags"), *flags as u64);
        opt_u64_json(a.key("fragment_index"), fragment_index.map(u64::from));
        a.end();
    }
    if let Some(a) = &msg.assembled {
        let g = &a.game;
        let mut m = Obj::new(o.key("assembled"));
        w.fields(m.key("fields"), &g.fields);
        let frames = m.key("frames");
        frames.push(b'[');
        for (k, f) in a.frames.iter().enumerate() {
            if k > 0 {
                frames.push(b',');
            }
            u64_json(frames, *f);
        }
        frames.push(b']');
        u64_json(m.key("length"), g.length as u64);
        str_json(m.key("name"), g.name);
        u64_json(m.key("opcode"), g.opcode as u64);
        opcode_hex_json(m.key("opcode_hex"), g.opcode);
        warnings_json(m.key("warnings"), g.warnings.iter());
        m.end();
    }
    // A game message's fields replace a connection-management message's (never both
    // in practice; the map keeps the last insert).
    match (game, &msg.transport) {
        (Some(g), _) => w.fields(o.key("fields"), &g.fields),
        (None, TransportInfo::Low { fields, .. }) => w.fields(o.key("fields"), fields),
        _ => {}
    }
    if let TransportInfo::Data { flags_len, .. } = &msg.transport {
        u64_json(o.key("flags_len"), *flags_len as u64);
    }
    fragment_json(o.key("fragment"), msg.fragment());
    if let Some(g) = game {
        u64_json(o.key("game_length"), g.length as u64);
    }
    if msg.keepalive {
        bool_json(o.key("keepalive"), true);
    }
    u64_json(o.key("length"), msg.length as u64);
    if let Some(g) = game {
        str_json(o.key("name"), g.name);
        if let Some(n) = super::json::object_of(g).and_then(names) {
            str_json(o.key("object"), &n);
        }
    }
    u64_json(o.key("offset"), msg.offset as u64);
    if let Some(g) = game {
        u64_json(o.key("opcode"), g.opcode as u64);
        opcode_hex_json(o.key("opcode_hex"), g.opcode);
    }
    if let TransportInfo::Data { ordered, .. } = &msg.transport {
        bool_json(o.key("ordered"), *ordered);
    }
    if let Some(f) = msg.original_frame {
        u64_json(o.key("original_frame"), f);
    }
    if let Some(r) = msg.relay_of {
        u64_json(o.key("relay_of"), r);
    }
    bool_json(o.key("reliable"), msg.reliable());
    bool_json(o.key("retransmission"), msg.retransmission);
    opt_u64_json(o.key("seq"), msg.seq().map(u64::from));
    let name = match &msg.transport {
        TransportInfo::Data { .. } => "data",
        TransportInfo::Ack { .. } => "ack",
        TransportInfo::Low { name, .. } => name,
        TransportInfo::Unknown => "unknown",
    };
    str_json(o.key("transport_name"), name);
    u64_json(o.key("transport_type"), msg.transport_type as u64);
    let game_warnings: &[Warning] = game.map_or(&[], |g| &g.warnings);
    warnings_json(
        o.key("warnings"),
        msg.warnings.iter().chain(game_warnings.iter()),
    );
    o.end();
}

fn messages_json(
    w: &mut PacketWriter,
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
        message_json(w, out, m, names);
    }
    out.push(b']');
}

/// Append the JSON of `packet_json(p, with_hex, client_name, names)` to `out`, with only
/// the messages `keep` accepts in `messages`. A writer that writes many records is
/// faster: [`PacketWriter::write_packet`].
pub fn write_packet(
    out: &mut Vec<u8>,
    p: &PacketRecord,
    with_hex: bool,
    client_name: Option<&str>,
    names: &dyn Fn(u32) -> Option<String>,
    keep: &dyn Fn(&MessageRecord) -> bool,
) {
    PacketWriter::default().write_packet(out, p, with_hex, client_name, names, keep);
}

impl PacketWriter {
    /// [`write_packet`], reusing the layouts of earlier records.
    pub fn write_packet(
        &mut self,
        out: &mut Vec<u8>,
        p: &PacketRecord,
        with_hex: bool,
        client_name: Option<&str>,
        names: &dyn Fn(u32) -> Option<String>,
        keep: &dyn Fn(&MessageRecord) -> bool,
    ) {
        let mut o = Obj::new(out);
        u64_json(o.key("client"), p.client as u64);
        if let Some(n) = client_name {
            str_json(o.key("client_name"), n);
        }
        if let Some(c) = &p.comment {
            str_json(o.key("comment"), c);
        }
        str_json(o.key("direction"), p.direction.as_str());
        addr_json(o.key("dst"), &p.dst);
        u64_json(o.key("frame"), p.frame);
        match &p.body {
            PacketBody::GameSpy { text } => {
                str_json(o.key("kind"), "gamespy");
                u64_json(o.key("session"), p.session as u64);
                addr_json(o.key("src"), &p.src);
                str_json(o.key("text"), text);
            }
            PacketBody::Game(g) => {
                str_json(o.key("kind"), "game");
                messages_json(self, o.key("messages"), g, names, keep);
                u64_json(o.key("msg_count"), g.msg_count as u64);
                u64_json(o.key("peer_id"), g.peer_id as u64);
                if with_hex {
                    hex_bytes_json(o.key("plain_hex"), &g.plain);
                }
                u64_json(o.key("session"), p.session as u64);
                addr_json(o.key("src"), &p.src);
            }
        }
        f64_json(o.key("time"), super::json::time_seconds(p.ts_ns));
        str_json(o.key("type"), "packet");
        u64_json(o.key("udp_length"), p.udp_len as u64);
        if let PacketBody::Game(g) = &p.body {
            warnings_json(o.key("warnings"), g.warnings.iter());
        }
        o.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::field::Span;

    fn via_value(fields: &[Field]) -> String {
        serde_json::to_string(&crate::game::field::fields_to_json(fields)).unwrap()
    }

    fn direct(fields: &[Field]) -> String {
        // Twice through one writer: the layout worked out, then the layout reused.
        let mut w = PacketWriter::default();
        let mut first = Vec::new();
        w.fields(&mut first, fields);
        let mut again = Vec::new();
        w.fields(&mut again, fields);
        assert_eq!(first, again);
        String::from_utf8(first).unwrap()
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
            // "r" twice with "r_2" taken: the second becomes "r_3".
            Field::new("r_2", Value::Hex(0x1234_5678_9ABC), s),
            Field::new("r", Value::Hex(0), s),
            Field::new("r", Value::ObjectId(0), s),
            Field::new("r_10", Value::Uint(10), s),
            Field::new("long name with spaces é", Value::Hex(255), s),
        ];
        assert_eq!(direct(&fields), via_value(&fields));
        assert_eq!(direct(&[]), via_value(&[]));
    }

    #[test]
    fn hex_twins_match_format() {
        for v in [
            0u64,
            1,
            0x1C,
            0xFF,
            0x100,
            0x3FFF_FFFF,
            u32::MAX as u64,
            u64::MAX,
        ] {
            for width in [2, 8] {
                let mut out = Vec::new();
                hex_twin_json(&mut out, v, width);
                let expected = format!("\"0x{v:0width$X}\"");
                assert_eq!(String::from_utf8(out).unwrap(), expected);
            }
            let mut out = Vec::new();
            hex_twin_json(&mut out, v, natural_width(v));
            let expected = format!("\"{}\"", crate::game::field::hex_padded(v));
            assert_eq!(String::from_utf8(out).unwrap(), expected);
        }
    }

    #[test]
    fn strings_are_escaped_as_serde_json_does() {
        let mut all: String = (0u8..0x80).map(char::from).collect();
        all.push_str("é€😀\u{7f}\"\\/");
        for s in [all.as_str(), "", "plain", "\"", "a\nb"] {
            let mut out = Vec::new();
            str_json(&mut out, s);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(s).unwrap()
            );
        }
    }

    #[test]
    fn every_escaped_byte_is_found_wherever_it_stands() {
        for len in 0..20 {
            for at in 0..len {
                for b in [0u8, 0x1F, b'"', b'\\', b'\n'] {
                    let mut text = vec![b'a'; len];
                    text[at] = b;
                    let s = String::from_utf8(text).unwrap();
                    let mut out = Vec::new();
                    str_json(&mut out, &s);
                    assert_eq!(out, serde_json::to_string(&s).unwrap().as_bytes());
                }
            }
        }
    }

    #[test]
    fn floats_and_integers_are_written_as_serde_json_does() {
        // One writer throughout, each value twice: its text worked out, then cached
        // (or evicted by a value of the same slot).
        let mut w = PacketWriter::default();
        let mut check = |v: f64| {
            let field = [Field::new("v", Value::Float(v), Span::new(0, 1))];
            let expected = via_value(&field);
            for _ in 0..2 {
                let mut out = Vec::new();
                w.float(&mut out, v);
                assert_eq!(
                    format!("{{\"v\":{}}}", String::from_utf8(out).unwrap()),
                    expected
                );
            }
        };
        for byte in 0..=255u8 {
            check((byte as f32 / 255.0 * 100.0) as f64);
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let f32v = f32::from_bits(x as u32);
            let f64v = f64::from_bits(x);
            for v in [f32v as f64, f64v, (x % 100_000) as f64 / 1000.0] {
                check(v);
            }
            let mut out = Vec::new();
            i64_json(&mut out, x as i64);
            assert_eq!(String::from_utf8(out).unwrap(), (x as i64).to_string());
        }
    }
}
