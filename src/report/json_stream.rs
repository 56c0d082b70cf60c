//! The one JSON writer of bcwire: every command's JSON and JSON Lines goes through it.
//!
//! Records are written straight to a byte buffer. The `"type":"packet"` record, which
//! `decode --format jsonl` writes millions of, is written from the pipeline's record
//! types directly ([`PacketWriter`]), with the key layout of each sequence of field names
//! worked out once and reused and the text of recent `f32` values cached; the other
//! records (`info`, `flows`, `stats`, `diff`, the summary) are documents of serde types
//! ([`write_doc`]): serialized straight into the text when compact, built as values and
//! written by [`write_value`] when pretty. Numbers go through one float formatter
//! ([`super::json_float`]); strings are escaped as JSON requires (`\"`, `\\`, the short
//! escapes, `\u00xx` for other control characters). Keys are written in the order of
//! the contract (`docs/json.md`), decoded fields in wire order.
//!
//! Why this file is long: the writer ends at about 1115 lines; the rest is tests against `serde_json`
//! as a reference (escapes, floats, integers, the fields object) and of the StateUpdate
//! writer against the field-tree writer.

use super::json_prims::{
    bool_json, f64_json, hex_bytes_json, hex_twin_json, i64_json, key_bytes, natural_width,
    opt_u64_json, plain_str_json, push_prefix, seconds_json, str_json, u64_json, FloatCache,
    FrameText, TimeText,
};
use super::json_state_update::TypedWriter;
use crate::diag::{Direction, Warning};
use crate::game::field::{Field, Value};
use crate::game::registry::{hex_twin, FieldId, LAYOUT_CHILD};
use crate::game::ships::ShipCatalog;
use crate::game::GameMessage;
use crate::pipeline::facts::Fact;
use crate::pipeline::record::{
    FragmentRef, GamePacket, MessageRecord, PacketBody, PacketRecord, TransportInfo,
};
use rustc_hash::FxHashMap;
use serde_json::Value as Json;
use std::io::Write;
use std::net::SocketAddr;
use std::rc::Rc;

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

/// `,"name":` as one literal, for [`Obj::key`] (plain ASCII names only).
macro_rules! key {
    ($name:literal) => {
        concat!(",\"", $name, "\":").as_bytes()
    };
    // A name spelt elsewhere (a record fact's): the same bytes, built at compile time.
    ($name:expr) => {{
        const NAME: &str = $name;
        static KEY: [u8; NAME.len() + 4] = key_bytes(NAME);
        &KEY[..]
    }};
}

/// Constant text pieces joined into one static byte string at compile time (fixed
/// runs of keys and values written in one copy, the keys taken from where they are
/// spelt).
macro_rules! joined {
    ($($part:expr),+ $(,)?) => {{
        const PARTS: &[&str] = &[$($part),+];
        static BYTES: [u8; joined_len(PARTS)] = join(PARTS);
        &BYTES[..]
    }};
}

const fn joined_len(parts: &[&str]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < parts.len() {
        n += parts[i].len();
        i += 1;
    }
    n
}

const fn join<const N: usize>(parts: &[&str]) -> [u8; N] {
    let mut out = [0u8; N];
    let (mut at, mut i) = (0, 0);
    while i < parts.len() {
        let b = parts[i].as_bytes();
        let mut k = 0;
        while k < b.len() {
            out[at] = b[k];
            at += 1;
            k += 1;
        }
        i += 1;
    }
    out
}

/// Writes one object whose keys are fixed words, in the order given (the contract's).
struct Obj<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl<'o> Obj<'o> {
    fn new(out: &'o mut Vec<u8>) -> Obj<'o> {
        out.push(b'{');
        Obj { out, first: true }
    }
    /// Start the value of a key given as [`key!`] makes it (`,"name":`, one literal):
    /// one copy of a length the compiler knows, the comma left out before the first.
    #[inline(always)]
    fn key(&mut self, key: &'static [u8]) -> &mut Vec<u8> {
        if self.first {
            self.first = false;
            self.out.extend_from_slice(&key[1..]);
        } else {
            self.out.extend_from_slice(key);
        }
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
        plain_str_json(o.key(key!("code")), w.code.as_str());
        opt_u64_json(o.key(key!("offset")), w.offset.map(|v| v as u64));
        str_json(o.key(key!("message")), &w.message);
        o.end();
    }
    out.push(b']');
}

fn opcode_hex_json(out: &mut Vec<u8>, op: u8) {
    hex_twin_json(out, op as u64, 2);
}

fn has_twin(v: &Value) -> bool {
    matches!(v, Value::ObjectId(_) | Value::Hex(_))
}

/// Whether `x` takes the key of `f`'s hex twin, so that the twin is not written: `x`
/// is the registered twin entry of `f` (`twin`). Tree names decide only where they are
/// not the entry's: another game's fields ([`FieldId::OTHER_GAME`]) and ship layout
/// child keys ([`LAYOUT_CHILD`]), which may be spelt like anything.
fn named_like_twin(x: &Field, f: &Field, twin: Option<FieldId>) -> bool {
    let by_name = |g: &Field| g.id == FieldId::OTHER_GAME || g.id == LAYOUT_CHILD;
    if by_name(x) || by_name(f) {
        x.name.len() == f.name.len() + 4 && x.name.strip_suffix("_hex") == Some(&f.name)
    } else {
        twin.is_some_and(|t| x.id == t)
    }
}

/// The keys of one fields object, in output order: the JSON text of each key (`"name":`,
/// with the comma before every key but the first) and the fields its value comes from.
/// Keys are the distinct names in wire order (a repeated name at its first place, its
/// values as an array), each id or hex value followed by its `<name>_hex` twin (unless a
/// field of that name exists). It depends only on the field names and on which values
/// have a twin, so it is worked out once per such sequence and reused ([`PacketWriter`]).
struct Layout {
    /// The names this layout was made for, one after another, to confirm a cache hit.
    names: Box<[u8]>,
    /// Per field: its name's length and whether its value has a hex twin.
    shape: Box<[(u32, bool)]>,
    slots: Box<[Slot]>,
    /// The fields of repeated names, one run per repeated key.
    members: Box<[u32]>,
    /// The keys' JSON text, one after another.
    text: Box<[u8]>,
}

/// One key of a [`Layout`]: its text is `text[start..end]`; it holds the value of
/// `fields[field]` (or that value's hex twin), or, when `count` > 1, an array of the
/// values of the fields `members[field..field + count]`.
#[derive(Clone, Copy)]
struct Slot {
    start: u32,
    end: u32,
    field: u32,
    count: u32,
    twin: bool,
}

impl Layout {
    fn of(fields: &[Field]) -> Layout {
        let mut text = Vec::new();
        let mut slots = Vec::with_capacity(fields.len() + 4);
        let mut members = Vec::new();
        let key = |text: &mut Vec<u8>, name: &str, twin: bool| {
            let start = text.len() as u32;
            if start > 0 {
                text.push(b',');
            }
            str_json(text, name);
            if twin {
                // The suffix is plain ASCII: it goes inside the closing quote.
                text.pop();
                text.extend_from_slice(b"_hex\"");
            }
            text.push(b':');
            (start, text.len() as u32)
        };
        for (i, f) in fields.iter().enumerate() {
            // Repeats by tree name, not entry: a JSON object's keys are names, and
            // members a failed group read left flat may print a name a top-level field
            // of another entry prints too; those are one key, as in the value form.
            if fields[..i].iter().any(|x| x.name == f.name) {
                continue;
            }
            let same: Vec<u32> = (i..fields.len())
                .filter(|&k| fields[k].name == f.name)
                .map(|k| k as u32)
                .collect();
            let (field, count) = if same.len() > 1 {
                let at = members.len() as u32;
                members.extend_from_slice(&same);
                (at, same.len() as u32)
            } else {
                (i as u32, 1)
            };
            let (start, end) = key(&mut text, &f.name, false);
            slots.push(Slot {
                start,
                end,
                field,
                count,
                twin: false,
            });
            let twin = hex_twin(f.id);
            let twin_name_taken = fields.iter().any(|x| named_like_twin(x, f, twin));
            if same.iter().any(|&k| has_twin(&fields[k as usize].value)) && !twin_name_taken {
                let (start, end) = key(&mut text, &f.name, true);
                slots.push(Slot {
                    start,
                    end,
                    field,
                    count,
                    twin: true,
                });
            }
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
            members: members.into(),
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

/// At most this many flows' [`PacketWriter::ends`] text is kept; others are written
/// each time.
const MAX_ENDS: usize = 4096;

/// What the text [`PacketWriter::ends`] writes depends on, besides the client's name:
/// source, destination, whether client to host, session, client.
type EndsKey = (SocketAddr, SocketAddr, bool, usize, usize);

/// The client name a flow's [`PacketWriter::ends`] text was made with, and the text.
type EndsText = (Option<Box<str>>, Box<[u8]>);

/// Slots of the kept `"object"` texts, indexed by a hash of the object id.
const OBJECT_SLOTS: usize = 256;

/// An object's description as the names gave it (the same `Rc` while it stands), and
/// its `"object"` key and JSON string.
type ObjectText = (u32, Rc<str>, Box<[u8]>);

/// An opcode's name and the text [`PacketWriter::opcode_head`] made with it.
type OpcodeText = (&'static str, Box<[u8]>);

/// The text [`PacketWriter::head`] keeps for one unreliable data message (`len` 0:
/// empty): by offset, length, flags and game length (`key`), opcode, and the address
/// and length of its name (the name a decoder gives is a constant).
#[derive(Clone, Copy)]
struct HeadText {
    key: u64,
    opcode: u8,
    name: (usize, usize),
    len: u16,
    text: [u8; HeadText::MAX],
}

impl HeadText {
    /// The head of a message with five-digit offset and lengths and a name of 40
    /// letters is about 270 bytes: longer ones are not kept.
    const MAX: usize = 288;
    const SLOTS: usize = 1024;
}

/// Writes `"type":"packet"` records and decoded fields, keeping the [`Layout`] of each
/// sequence of field names seen and the text of recent f32 values: one per output
/// stream. A StateUpdate decoded without its field tree is written from its typed
/// value and the ship classes the writer was made with ([`super::json_state_update`]).
pub struct PacketWriter {
    layouts: FxHashMap<u64, Rc<Layout>>,
    /// Per flow one way (a capture has a few dozen), the text [`PacketWriter::ends`]
    /// writes and the client name it was made with.
    ends: FxHashMap<EndsKey, EndsText>,
    /// The `"object"` text of recent objects (see [`PacketWriter::object`]).
    objects: Box<[Option<ObjectText>]>,
    /// Per opcode, the text [`PacketWriter::opcode_head`] writes.
    opcodes: Box<[Option<OpcodeText>]>,
    /// The text [`PacketWriter::head`] writes, for recent messages.
    heads: Box<[HeadText]>,
    floats: FloatCache,
    typed: TypedWriter,
    /// The text of the last record's frame number and whole seconds.
    frames: FrameText,
    times: TimeText,
    /// The input the records come from, written as `"file"` when several are read.
    pub file: Option<String>,
}

impl Default for PacketWriter {
    /// A writer for the stock ship classes.
    fn default() -> PacketWriter {
        PacketWriter::new(&ShipCatalog::stock())
    }
}

impl PacketWriter {
    /// A writer for records decoded with `ships`.
    pub fn new(ships: &ShipCatalog) -> PacketWriter {
        let mut floats = FloatCache::default();
        PacketWriter {
            layouts: FxHashMap::default(),
            ends: FxHashMap::default(),
            objects: vec![None; OBJECT_SLOTS].into_boxed_slice(),
            opcodes: vec![None; 256].into_boxed_slice(),
            heads: vec![
                HeadText {
                    key: 0,
                    opcode: 0,
                    name: (0, 0),
                    len: 0,
                    text: [0; HeadText::MAX],
                };
                HeadText::SLOTS
            ]
            .into_boxed_slice(),
            typed: TypedWriter::new(ships, &mut floats),
            floats,
            frames: FrameText::default(),
            times: TimeText::default(),
            file: None,
        }
    }

    fn float(&mut self, out: &mut Vec<u8>, v: f64) {
        self.floats.write(out, v);
    }

    /// An opcode's value, then `"opcode_hex"` and `"name"` with theirs, then the key
    /// `"game_length":`; kept per opcode (with the name it was made for: an empty
    /// message has opcode 0 but its own name).
    fn opcode_head(&mut self, out: &mut Vec<u8>, opcode: u8, name: &'static str) {
        let slot = &mut self.opcodes[opcode as usize];
        if let Some((kept, text)) = slot {
            // The same constant nearly always: its address settles it without a compare.
            if std::ptr::eq(*kept, name) || *kept == name {
                out.extend_from_slice(text);
                return;
            }
        }
        let at = out.len();
        u64_json(out, opcode as u64);
        out.extend_from_slice(key!(Fact::OpcodeHex.name()));
        opcode_hex_json(out, opcode);
        out.extend_from_slice(key!(Fact::Name.name()));
        plain_str_json(out, name);
        out.extend_from_slice(key!(Fact::GameLength.name()));
        *slot = Some((name, out[at..].into()));
    }

    /// An unreliable data message's text from `{` up to the value of `"game_length"`,
    /// written from the kept text when it has one (`false`: not such a message, write it
    /// key by key). That text depends only on the offset, the lengths and the opcode and
    /// its name, which a battle repeats (some thousands of distinct heads in a hundred
    /// thousand frames), so it is kept by those.
    fn head(&mut self, out: &mut Vec<u8>, msg: &MessageRecord) -> bool {
        let (
            0x32,
            false,
            None,
            false,
            Some(g),
            TransportInfo::Data {
                flags_len,
                reliable: false,
                ordered: false,
                seq: None,
                fragment: None,
            },
        ) = (
            msg.transport_type,
            msg.retransmission,
            msg.original_frame,
            msg.keepalive,
            &msg.game,
            &msg.transport,
        )
        else {
            return false;
        };
        if (msg.offset | msg.length | g.length) > 0xFFFF {
            return false;
        }
        let key = msg.offset as u64
            | (msg.length as u64) << 16
            | (*flags_len as u64) << 32
            | (g.length as u64) << 48;
        let name = (g.name.as_ptr() as usize, g.name.len());
        let h = (key ^ (g.opcode as u64) << 56).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = (h >> 54) as usize % HeadText::SLOTS;
        let kept = &self.heads[slot];
        if kept.len > 0 && kept.key == key && kept.opcode == g.opcode && kept.name == name {
            push_prefix(out, &kept.text, kept.len as usize);
            return true;
        }
        let start = out.len();
        let mut o = Obj::new(out);
        u64_json(o.key(key!(Fact::Offset.name())), msg.offset as u64);
        u64_json(o.key(key!(Fact::Length.name())), msg.length as u64);
        unreliable_data_head(&mut o, *flags_len);
        self.opcode_head(o.key(key!(Fact::Opcode.name())), g.opcode, g.name);
        u64_json(out, g.length as u64);
        let text = &out[start..];
        let kept = &mut self.heads[slot];
        if text.len() <= HeadText::MAX {
            kept.key = key;
            kept.opcode = g.opcode;
            kept.name = name;
            kept.len = text.len() as u16;
            kept.text[..text.len()].copy_from_slice(text);
        } else {
            kept.len = 0;
        }
        true
    }

    /// The value of `"src"` up to that of `"client_name"` (when the client is named):
    /// `"ip:port","dst":"ip:port","direction":…,"session":N,"client":N`, the same for
    /// every datagram of a flow one way, so kept per flow (up to [`MAX_ENDS`]) with the
    /// name it was made with.
    fn ends(&mut self, out: &mut Vec<u8>, p: &PacketRecord, client_name: Option<&str>) {
        let key = (
            p.src,
            p.dst,
            p.direction == Direction::C2S,
            p.session,
            p.client,
        );
        if let Some((name, text)) = self.ends.get(&key) {
            if name.as_deref() == client_name {
                out.extend_from_slice(text);
                return;
            }
        }
        let start = out.len();
        addr_json(out, &p.src);
        out.extend_from_slice(key!(Fact::Dst.name()));
        addr_json(out, &p.dst);
        out.extend_from_slice(key!(Fact::Direction.name()));
        plain_str_json(out, p.direction.as_str());
        out.extend_from_slice(key!(Fact::Session.name()));
        u64_json(out, p.session as u64);
        out.extend_from_slice(key!(Fact::Client.name()));
        u64_json(out, p.client as u64);
        if let Some(n) = client_name {
            out.extend_from_slice(key!(Fact::ClientName.name()));
            str_json(out, n);
        }
        if self.ends.len() < MAX_ENDS || self.ends.contains_key(&key) {
            self.ends
                .insert(key, (client_name.map(Box::from), out[start..].into()));
        }
    }

    /// `,"object":` and an object's description as a JSON string, kept per object while
    /// the names give the same description (the same `Rc`, which the slot holds on to).
    fn object(&mut self, out: &mut Vec<u8>, id: u32, name: Rc<str>) {
        let slot = (id.wrapping_mul(0x9E37_79B1) >> 24) as usize % OBJECT_SLOTS;
        let kept = &mut self.objects[slot];
        match kept {
            Some((kept_id, kept_name, text)) if *kept_id == id && Rc::ptr_eq(kept_name, &name) => {
                out.extend_from_slice(text);
            }
            _ => {
                let start = out.len();
                out.extend_from_slice(key!(Fact::Object.name()));
                str_json(out, &name);
                *kept = Some((id, name, out[start..].into()));
            }
        }
    }

    /// The fields of a game message: from its tree, or, for a StateUpdate, from its
    /// typed value where that says all the tree would: without a warning, or with
    /// what the tree would show besides kept in it (`StateUpdate::shown`). Its tree
    /// may hold only the fields a selection reads then.
    fn game_fields(&mut self, out: &mut Vec<u8>, g: &GameMessage) {
        match g.state_update() {
            Some(su) if g.warnings.is_empty() || su.shown.is_some() || g.fields.is_empty() => {
                self.typed.fields(out, su, &mut self.floats)
            }
            _ => self.fields(out, &g.fields),
        }
    }

    /// Decoded fields as one JSON object (see [`Layout`]).
    pub fn fields(&mut self, out: &mut Vec<u8>, fields: &[Field]) {
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
            if s.count == 1 {
                // `fits` checked that `fields` has the layout's length.
                self.slot_value(out, &fields[s.field as usize].value, s.twin);
                continue;
            }
            out.push(b'[');
            let run = &layout.members[s.field as usize..(s.field + s.count) as usize];
            for (k, &i) in run.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                self.slot_value(out, &fields[i as usize].value, s.twin);
            }
            out.push(b']');
        }
        out.push(b'}');
    }

    fn slot_value(&mut self, out: &mut Vec<u8>, v: &Value, twin: bool) {
        match (twin, v) {
            (false, v) => self.value(out, v),
            (true, Value::ObjectId(v)) => hex_twin_json(out, *v as u64, 8),
            (true, Value::Hex(v)) => hex_twin_json(out, *v, natural_width(*v)),
            (true, _) => out.extend_from_slice(b"null"),
        }
    }

    /// One decoded value: numbers as numbers, vectors as `[x, y, z]`, bytes as
    /// lowercase hex, lists as arrays, groups as objects.
    pub fn value(&mut self, out: &mut Vec<u8>, v: &Value) {
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
    u64_json(o.key(key!("index")), f.index as u64);
    opt_u64_json(o.key(key!("total")), f.total.map(u64::from));
    o.end();
}

/// One entry of `messages`, keys in the contract's order.
fn message_json(
    w: &mut PacketWriter,
    out: &mut Vec<u8>,
    msg: &MessageRecord,
    names: &dyn Fn(u32) -> Option<Rc<str>>,
) {
    if w.head(out, msg) {
        // `{` up to the value of `"game_length"` written from the kept text.
        message_rest(w, Obj { out, first: false }, msg, names);
        return;
    }
    let mut o = Obj::new(out);
    u64_json(o.key(key!(Fact::Offset.name())), msg.offset as u64);
    u64_json(o.key(key!(Fact::Length.name())), msg.length as u64);
    if let (
        0x32,
        false,
        TransportInfo::Data {
            flags_len,
            reliable: false,
            ordered: false,
            seq: None,
            fragment: None,
        },
    ) = (msg.transport_type, msg.retransmission, &msg.transport)
    {
        unreliable_data_head(&mut o, *flags_len);
    } else {
        transport_head(&mut o, msg);
    }
    message_tail(w, o, msg, names);
}

/// The keys and values from `"transport_type"` to `"retransmission"` of an unreliable
/// data message (most of a battle), in three copies.
fn unreliable_data_head(o: &mut Obj, flags_len: u16) {
    o.key(joined!(
        ",\"",
        Fact::TransportType.name(),
        "\":50,\"transport_name\":\"data\",\"",
        Fact::Reliable.name(),
        "\":false,\"ordered\":false,\"flags_len\":"
    ));
    u64_json(o.out, flags_len as u64);
    unreliable_tail(o);
}

/// `"seq"`, `"fragment"` and `"retransmission"` of an unreliable message that is not a
/// resend, in one copy.
fn unreliable_tail(o: &mut Obj) {
    o.key(joined!(
        ",\"",
        Fact::Seq.name(),
        "\":null,\"",
        Fact::Fragment.name(),
        "\":null,\"",
        Fact::Retransmission.name(),
        "\":false"
    ));
}

/// The keys of a message from `"transport_type"` to `"retransmission"`.
fn transport_head(o: &mut Obj, msg: &MessageRecord) {
    let name = match &msg.transport {
        TransportInfo::Data { .. } => "data",
        TransportInfo::Ack { .. } => "ack",
        TransportInfo::Low { name, .. } => name,
        TransportInfo::Unknown => "unknown",
    };
    if msg.transport_type == 0x32 && name == "data" {
        // Most messages: the three keys and two values in one copy.
        o.key(joined!(
            ",\"",
            Fact::TransportType.name(),
            "\":50,\"transport_name\":\"data\",\"",
            Fact::Reliable.name(),
            "\":"
        ));
    } else {
        u64_json(
            o.key(key!(Fact::TransportType.name())),
            msg.transport_type as u64,
        );
        plain_str_json(o.key(key!("transport_name")), name);
        o.key(key!(Fact::Reliable.name()));
    }
    bool_json(o.out, msg.reliable());
    if let TransportInfo::Data {
        ordered, flags_len, ..
    } = &msg.transport
    {
        bool_json(o.key(key!("ordered")), *ordered);
        u64_json(o.key(key!("flags_len")), *flags_len as u64);
    }
    match (msg.seq(), msg.fragment(), msg.retransmission) {
        // An unreliable message (most of a battle): the three in one copy.
        (None, None, false) => unreliable_tail(o),
        (seq, fragment, retransmission) => {
            opt_u64_json(o.key(key!(Fact::Seq.name())), seq.map(u64::from));
            fragment_json(o.key(key!(Fact::Fragment.name())), fragment);
            bool_json(o.key(key!(Fact::Retransmission.name())), retransmission);
        }
    }
}

/// The keys of a message after `"retransmission"`, and its end.
fn message_tail(
    w: &mut PacketWriter,
    mut o: Obj,
    msg: &MessageRecord,
    names: &dyn Fn(u32) -> Option<Rc<str>>,
) {
    let game = msg.game.as_ref();
    if let Some(f) = msg.original_frame {
        u64_json(o.key(key!("original_frame")), f);
    }
    if msg.keepalive {
        bool_json(o.key(key!(Fact::Keepalive.name())), true);
    }
    if let TransportInfo::Ack {
        flags,
        fragment_index,
        acked_frame,
        delay_ns,
        duplicate,
        ..
    } = &msg.transport
    {
        let mut a = Obj::new(o.key(key!("ack")));
        u64_json(a.key(key!("flags")), *flags as u64);
        opt_u64_json(a.key(key!("fragment_index")), fragment_index.map(u64::from));
        opt_u64_json(a.key(key!("acked_frame")), *acked_frame);
        match delay_ns {
            Some(d) => seconds_json(a.key(key!("delay")), *d as f64 / 1e9, *d),
            None => a.key(key!("delay")).extend_from_slice(b"null"),
        }
        bool_json(a.key(key!("duplicate")), *duplicate);
        a.end();
    }
    if let Some(g) = game {
        // `"opcode"` to `"game_length":`, the same text for every message of an
        // opcode: kept per opcode.
        w.opcode_head(o.key(key!(Fact::Opcode.name())), g.opcode, g.name);
        u64_json(o.out, g.length as u64);
    }
    message_rest(w, o, msg, names);
}

/// The keys of a message after `"game_length"` (or after `"ack"` when it has no game
/// message), and its end.
fn message_rest(
    w: &mut PacketWriter,
    mut o: Obj,
    msg: &MessageRecord,
    names: &dyn Fn(u32) -> Option<Rc<str>>,
) {
    let game = msg.game.as_ref();
    match (game, &msg.transport) {
        (Some(g), _) => {
            if let Some(id) = super::json::object_of(g) {
                if let Some(n) = names(id) {
                    w.object(o.out, id, n);
                }
            }
            w.game_fields(o.key(key!("fields")), g);
        }
        (None, TransportInfo::Low { fields, .. }) => w.fields(o.key(key!("fields")), fields),
        _ => {}
    }
    if let Some(a) = &msg.assembled {
        let g = &a.game;
        let mut m = Obj::new(o.key(key!("assembled")));
        u64_json(m.key(key!(Fact::Opcode.name())), g.opcode as u64);
        opcode_hex_json(m.key(key!(Fact::OpcodeHex.name())), g.opcode);
        plain_str_json(m.key(key!(Fact::Name.name())), g.name);
        // The completed game message's own length (the contract's `assembled.length`),
        // which the record facts call `game_length`.
        u64_json(m.key(key!("length")), g.length as u64);
        let frames = m.key(key!("frames"));
        frames.push(b'[');
        for (k, f) in a.frames.iter().enumerate() {
            if k > 0 {
                frames.push(b',');
            }
            u64_json(frames, *f);
        }
        frames.push(b']');
        w.game_fields(m.key(key!("fields")), g);
        warnings_json(m.key(key!("warnings")), g.warnings.iter());
        m.end();
    }
    if let Some(r) = msg.relay_of {
        u64_json(o.key(key!("relay_of")), r);
    }
    let game_warnings: &[Warning] = game.map_or(&[], |g| &g.warnings);
    if msg.warnings.is_empty() && game_warnings.is_empty() {
        // The key, the empty list and the object's end in one copy.
        o.key(b",\"warnings\":[]}");
        return;
    }
    warnings_json(
        o.key(key!("warnings")),
        msg.warnings.iter().chain(game_warnings.iter()),
    );
    o.end();
}

fn messages_json(
    w: &mut PacketWriter,
    out: &mut Vec<u8>,
    g: &GamePacket,
    names: &dyn Fn(u32) -> Option<Rc<str>>,
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

/// Append the `"type":"packet"` record of `p` to `out`, with only the messages `keep`
/// accepts in `messages`. A writer that writes many records is faster:
/// [`PacketWriter::write_packet`].
pub fn write_packet(
    out: &mut Vec<u8>,
    p: &PacketRecord,
    with_hex: bool,
    client_name: Option<&str>,
    names: &dyn Fn(u32) -> Option<Rc<str>>,
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
        names: &dyn Fn(u32) -> Option<Rc<str>>,
        keep: &dyn Fn(&MessageRecord) -> bool,
    ) {
        let mut o = Obj::new(out);
        match &self.file {
            None => {
                // `"type":"packet","frame":` in one copy.
                o.key(joined!(
                    ",\"type\":\"packet\",\"",
                    Fact::Frame.name(),
                    "\":"
                ));
            }
            Some(f) => {
                plain_str_json(o.key(key!("type")), "packet");
                str_json(o.key(key!("file")), f);
                o.key(key!(Fact::Frame.name()));
            }
        }
        self.frames.write(o.out, p.frame);
        const TIME_NS: &str = Fact::TimeNs.name();
        static TIME_NS_KEY: [u8; TIME_NS.len() + 4] = key_bytes(TIME_NS);
        self.times.write(
            o.key(key!(Fact::Time.name())),
            super::json::time_seconds(p.ts_ns),
            p.ts_ns,
            &TIME_NS_KEY,
        );
        self.ends(o.key(key!(Fact::Src.name())), p, client_name);
        if let Some(c) = &p.comment {
            str_json(o.key(key!("comment")), c);
        }
        u64_json(o.key(key!(Fact::UdpLength.name())), p.udp_len as u64);
        match &p.body {
            PacketBody::GameSpy { text } => {
                plain_str_json(o.key(key!(Fact::Kind.name())), "gamespy");
                str_json(o.key(key!(Fact::Text.name())), text);
            }
            PacketBody::Game(g) => {
                // `"kind":"game","peer_id":` in one copy.
                o.key(joined!(
                    ",\"",
                    Fact::Kind.name(),
                    "\":\"game\",\"",
                    Fact::PeerId.name(),
                    "\":"
                ));
                u64_json(o.out, g.peer_id as u64);
                u64_json(o.key(key!("msg_count")), g.msg_count as u64);
                if with_hex {
                    hex_bytes_json(o.key(key!("plain_hex")), &g.plain);
                }
                messages_json(self, o.key(key!("messages")), g, names, keep);
                if g.warnings.is_empty() {
                    // The key, the empty list and the record's end in one copy.
                    o.key(b",\"warnings\":[]}");
                    return;
                } else {
                    warnings_json(o.key(key!("warnings")), g.warnings.iter());
                }
            }
        }
        o.end();
    }
}

/// A record built as a value (`info`, `flows`, `stats`, `diff`, the summary): compact
/// on one line, or `pretty` with two-space indents. Object keys keep the order they
/// were built in; a float that came from an `f32` is written as decoded fields are.
pub fn write_value(out: &mut Vec<u8>, v: &Json, pretty: bool) {
    value_at(out, v, pretty.then_some(0));
}

fn newline(out: &mut Vec<u8>, indent: Option<usize>) {
    if let Some(n) = indent {
        out.push(b'\n');
        out.resize(out.len() + 2 * n, b' ');
    }
}

fn value_at(out: &mut Vec<u8>, v: &Json, indent: Option<usize>) {
    let inner = indent.map(|n| n + 1);
    match v {
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(b) => bool_json(out, *b),
        Json::Number(n) => {
            if let Some(u) = n.as_u64() {
                u64_json(out, u);
            } else if let Some(i) = n.as_i64() {
                i64_json(out, i);
            } else {
                f64_json(out, n.as_f64().unwrap_or(f64::NAN));
            }
        }
        Json::String(s) => str_json(out, s),
        Json::Array(items) => {
            out.push(b'[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                newline(out, inner);
                value_at(out, item, inner);
            }
            if !items.is_empty() {
                newline(out, indent);
            }
            out.push(b']');
        }
        Json::Object(map) => {
            out.push(b'{');
            for (k, (key, item)) in map.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                newline(out, inner);
                str_json(out, key);
                out.push(b':');
                if indent.is_some() {
                    out.push(b' ');
                }
                value_at(out, item, inner);
            }
            if !map.is_empty() {
                newline(out, indent);
            }
            out.push(b'}');
        }
    }
}

/// A document of the contract's types (`report::schema`: `info`, `flows`, `stats`,
/// `diff`, the summary), written by this writer: the schema files are generated from
/// the very types written here. serde lays the value out (keys in declaration order);
/// the text, floats included, is this module's.
///
/// The compact form is serialized straight into `out` (serde_json's serializer with
/// [`NumberText`] for the numbers), the same text as the value written by
/// [`write_value`]: a summary holds a document per session, and building each as a
/// value first (a `String` and a map entry per key) cost more than writing it.
pub fn write_doc<T: serde::Serialize>(
    out: &mut Vec<u8>,
    doc: &T,
    pretty: bool,
) -> serde_json::Result<()> {
    if pretty {
        write_value(out, &serde_json::to_value(doc)?, true);
    } else {
        doc.serialize(&mut serde_json::Serializer::with_formatter(out, NumberText))?;
    }
    Ok(())
}

/// serde_json's compact text with the numbers [`write_value`] writes: an `f32` as the
/// `f64` it widens to (as a value holds it), every float through
/// [`super::json_float::write_f64_to`].
struct NumberText;

impl serde_json::ser::Formatter for NumberText {
    fn write_f32<W: ?Sized + Write>(&mut self, w: &mut W, v: f32) -> std::io::Result<()> {
        super::json_float::write_f64_to(w, f64::from(v))
    }

    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, v: f64) -> std::io::Result<()> {
        super::json_float::write_f64_to(w, v)
    }
}

/// [`write_doc`] as a `String` (pretty), for commands that print one document.
pub fn doc_to_pretty_string<T: serde::Serialize>(doc: &T) -> serde_json::Result<String> {
    Ok(to_pretty_string(&serde_json::to_value(doc)?))
}

/// [`write_value`] as a `String` (pretty), for commands that print one document.
pub fn to_pretty_string(v: &Json) -> String {
    let mut out = Vec::new();
    write_value(&mut out, v, true);
    // Every byte written is ASCII or comes from a `&str`.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::field::Span;
    use crate::game::registry::FieldId;

    /// A document serialized straight into compact text reads exactly as the same
    /// document built as a value and written by [`write_value`]: every kind of number
    /// (an `f32` included), escapes, absent and empty parts, integer map keys, nesting.
    #[test]
    fn compact_documents_match_their_value_form() {
        #[derive(serde::Serialize)]
        struct Inner {
            name: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            skipped: Option<u64>,
            absent: Option<f64>,
            counts: std::collections::BTreeMap<u8, u64>,
        }
        #[derive(serde::Serialize)]
        struct Doc {
            floats: Vec<f64>,
            narrow: Vec<f32>,
            ints: (u64, i64, i64, u8),
            flag: bool,
            text: &'static str,
            inner: Vec<Inner>,
            empty_list: Vec<u8>,
            empty_map: std::collections::BTreeMap<String, u8>,
        }
        let doc = Doc {
            floats: vec![
                0.0,
                -0.0,
                0.1,
                1.0,
                1e20,
                1e-7,
                123.456,
                f64::NAN,
                f64::INFINITY,
            ],
            narrow: vec![0.1, 5.13, -2.5e-6, f32::MAX, f32::NEG_INFINITY],
            ints: (u64::MAX, i64::MIN, 42, 7),
            flag: false,
            text: "quote \" backslash \\ tab \t nul \u{0} bell \u{7} é ✓",
            inner: vec![
                Inner {
                    name: "a\nb".into(),
                    skipped: None,
                    absent: None,
                    counts: [(0u8, 1u64), (255, u64::MAX)].into_iter().collect(),
                },
                Inner {
                    name: String::new(),
                    skipped: Some(3),
                    absent: Some(1.5),
                    counts: Default::default(),
                },
            ],
            empty_list: Vec::new(),
            empty_map: Default::default(),
        };
        let mut direct = Vec::new();
        write_doc(&mut direct, &doc, false).unwrap();
        let mut valued = Vec::new();
        write_value(&mut valued, &serde_json::to_value(&doc).unwrap(), false);
        assert_eq!(
            String::from_utf8(direct).unwrap(),
            String::from_utf8(valued).unwrap()
        );
    }

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
            Field::keyed(
                FieldId::OTHER_GAME,
                "object_id",
                Value::ObjectId(0x3FFF_FFFF),
                s,
            ),
            // Collides with the twin above: becomes object_id_hex_2.
            Field::keyed(
                FieldId::OTHER_GAME,
                "object_id_hex",
                Value::Text("x\"y\n".into()),
                s,
            ),
            Field::keyed(FieldId::OTHER_GAME, "a", Value::Hex(0x1C), s),
            // A field named like the twin of a later field: the twin replaces it.
            Field::keyed(FieldId::OTHER_GAME, "b_hex", Value::Uint(1), s),
            Field::keyed(FieldId::OTHER_GAME, "b", Value::Hex(2), s),
            Field::keyed(
                FieldId::OTHER_GAME,
                "raw",
                Value::Bytes(vec![0xAB, 0x01]),
                s,
            ),
            Field::keyed(FieldId::OTHER_GAME, "raw", Value::Bytes(vec![]), s),
            Field::keyed(FieldId::OTHER_GAME, "raw", Value::Int(-5), s),
            Field::keyed(
                FieldId::OTHER_GAME,
                "speed",
                Value::Float(5.13f32 as f64),
                s,
            ),
            Field::keyed(FieldId::OTHER_GAME, "exact", Value::Float(0.1), s),
            Field::keyed(FieldId::OTHER_GAME, "nan", Value::Float(f64::NAN), s),
            Field::keyed(
                FieldId::OTHER_GAME,
                "inf",
                Value::Float(f64::NEG_INFINITY),
                s,
            ),
            Field::keyed(FieldId::OTHER_GAME, "v", Value::Vec3([1.0, -0.5, 1e-7]), s),
            Field::keyed(
                FieldId::OTHER_GAME,
                "list",
                Value::List(vec![Value::Float(2.5), Value::Text("é".into())]),
                s,
            ),
            Field::keyed(
                FieldId::OTHER_GAME,
                "group",
                Value::Group(vec![
                    Field::keyed(FieldId::OTHER_GAME, "z", Value::Bool(true), s),
                    Field::keyed(FieldId::OTHER_GAME, "id", Value::ObjectId(7), s),
                ]),
                s,
            ),
            Field::keyed(FieldId::OTHER_GAME, "Upper", Value::Uint(u64::MAX), s),
            // "r" twice with "r_2" taken: the second becomes "r_3".
            Field::keyed(FieldId::OTHER_GAME, "r_2", Value::Hex(0x1234_5678_9ABC), s),
            Field::keyed(FieldId::OTHER_GAME, "r", Value::Hex(0), s),
            Field::keyed(FieldId::OTHER_GAME, "r", Value::ObjectId(0), s),
            Field::keyed(FieldId::OTHER_GAME, "r_10", Value::Uint(10), s),
            Field::keyed(
                FieldId::OTHER_GAME,
                "long name with spaces é",
                Value::Hex(255),
                s,
            ),
        ];
        assert_eq!(direct(&fields), via_value(&fields));
        assert_eq!(direct(&[]), via_value(&[]));
    }

    /// A registered field's twin is found by entry and written beside other registered
    /// fields; a layout child key spelt like the twin takes its key, as in the value form.
    #[test]
    fn registered_twins_are_found_by_entry_and_layout_keys_by_name() {
        use crate::game::registry::field;
        let s = Span::new(0, 1);
        let id = Field::new(field!("object_id"), Value::ObjectId(7), s);
        let flags = Field::new(field!("flags"), Value::Hex(0x1C), s);
        let plain = [id.clone(), flags.clone()];
        let out = direct(&plain);
        assert_eq!(out, via_value(&plain));
        assert!(
            out.contains("\"0x00000007\"") && out.contains("\"0x1C\""),
            "{out}"
        );
        let child = Field::keyed(LAYOUT_CHILD, "object_id_hex", Value::Float(50.0), s);
        let spelt = [id, child, flags];
        let out = direct(&spelt);
        assert_eq!(out, via_value(&spelt));
        assert!(
            !out.contains("\"0x00000007\"") && out.contains("\"0x1C\""),
            "{out}"
        );
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
            let field = [Field::keyed(
                FieldId::OTHER_GAME,
                "v",
                Value::Float(v),
                Span::new(0, 1),
            )];
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

    #[test]
    fn integers_and_hex_twins_are_written_as_format_writes_them() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let randoms = std::iter::from_fn(move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Some(x)
        });
        let wide = randoms.take(10_000).flat_map(|x| [x, x >> 32, x >> 48]);
        for v in (0..=70_000u64)
            .chain(wide)
            .chain([u64::MAX, u32::MAX as u64])
        {
            let mut out = Vec::new();
            u64_json(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), v.to_string());
            for width in [2, 4, 8, 16] {
                let mut out = Vec::new();
                hex_twin_json(&mut out, v, width);
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    format!("\"0x{v:0width$X}\"")
                );
            }
        }
    }
}

#[cfg(test)]
mod typed_state_update_tests {
    //! The StateUpdate writer of json_state_update against the field-tree writer.
    use super::super::json_prims::FloatCache;
    use super::super::json_state_update::*;
    use super::super::test_rng::Rng;
    use super::PacketWriter;
    use crate::game::ships::{ShipCatalog, ShipClass};
    use crate::game::stateupdate::{
        self, flag, Cf16, Delta, Dir3, StateUpdate, SubsystemData, UpdatePool,
    };
    use crate::game::subsys::{plan_host_block, PowerSetting, SubsystemRecord};
    use crate::game::walk::Lean;

    /// A condition-style byte: mostly one of three values, so that records which differ
    /// in one byte follow each other (the writer keeps the text of recent records).
    fn byte(rng: &mut Rng) -> u8 {
        match rng.below(8) {
            0 => rng.below(256) as u8,
            k => [0xFF, 0xFE, 0x00][k as usize % 3],
        }
    }

    /// A StateUpdate of `class` with every field `flags` sets, its values drawn from
    /// `rng` (conditions, power data or none, hash or none, cloak either way).
    fn random_update(class: &ShipClass, flags: u8, rng: &mut Rng) -> StateUpdate {
        let mut su = StateUpdate {
            species: Some(class.species_id),
            // Few enough ids that kept openings are reused, and more than the writer
            // keeps, so that they are also replaced.
            object_id: match rng.below(8) {
                0 => rng.next() as u32,
                1 => [0, u32::MAX][rng.below(2) as usize],
                _ => 0x3FFF_FFF0 + rng.below(600) as u32,
            },
            game_time: (rng.below(1 << 20) as f32) / 64.0,
            flags,
            ..StateUpdate::default()
        };
        let mut f = || (rng.below(20_001) as f32 - 10_000.0) / 7.0;
        if flags & flag::POSITION != 0 {
            su.position = Some([f(), f(), f()]);
        }
        if flags & flag::DELTA != 0 {
            su.delta = Some(Delta::from_vector([f(), f(), f()]));
        }
        if flags & flag::FORWARD != 0 {
            su.forward = Some(Dir3::from_vector([f(), f(), f()]));
        }
        if flags & flag::UP != 0 {
            su.up = Some(Dir3::from_vector([f(), f(), f()]));
        }
        if flags & flag::SPEED != 0 {
            su.speed = Some(Cf16::from_value(f() / 100.0));
        }
        if flags & flag::POSITION != 0 && rng.below(2) == 0 {
            su.integrity_hash = Some(rng.below(0x1_0000) as u16);
        }
        if flags & flag::CLOAK != 0 {
            su.cloak = Some(rng.below(2) == 0);
        }
        if flags & flag::SUBSYSTEMS != 0 {
            let start = rng.below(class.len() as u64) as usize;
            let owner = rng.below(2) == 0;
            let (block, _) = plan_host_block(class, start, su.bits_before_subsystems(), |i, e| {
                let power = (!owner).then(|| rng.below(101) as u8);
                let mut r = SubsystemRecord::full(i as u8, e, power);
                r.condition = byte(rng);
                for c in r.children.iter_mut() {
                    *c = byte(rng);
                }
                r.batteries = [byte(rng), byte(rng)];
                if r.facings != [0; 6] {
                    r.facings = std::array::from_fn(|_| byte(rng));
                }
                r
            });
            su.subsystem_start = Some(block.start);
            su.subsystems = Some(SubsystemData::Decoded(block));
        }
        if flags & flag::POWER != 0 && flags & flag::SUBSYSTEMS == 0 {
            su.power = Some(
                (0..class.len())
                    .filter(|&i| class.subsystems[i].powered_type)
                    .map(|i| PowerSetting {
                        index: i as u8,
                        value: rng.below(256) as u8,
                    })
                    .collect(),
            );
        }
        su
    }

    /// A StateUpdate's `fields` as JSON text twice: from its field tree and from its
    /// typed value.
    fn both_ways(
        writer: &mut PacketWriter,
        typed: &mut TypedWriter,
        floats: &mut FloatCache,
        tree: &[crate::game::field::Field],
        su: &StateUpdate,
    ) -> (String, String) {
        let mut from_tree = Vec::new();
        writer.fields(&mut from_tree, tree);
        let mut from_type = Vec::new();
        typed.fields(&mut from_type, su, floats);
        // Again: the second time from the texts the writer kept (records, power
        // blocks, directions, speeds, the object's head).
        let mut again = Vec::new();
        typed.fields(&mut again, su, floats);
        assert_eq!(from_type, again);
        (
            String::from_utf8_lossy(&from_tree).into_owned(),
            String::from_utf8_lossy(&from_type).into_owned(),
        )
    }

    #[test]
    fn typed_fields_are_written_as_the_field_tree_writes_them() {
        let catalog = ShipCatalog::stock();
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut writer = PacketWriter::default();
        let mut floats = FloatCache::default();
        let mut typed = TypedWriter::new(&catalog, &mut floats);
        let mut pool = UpdatePool::new();
        let mut compared = 0;
        // Every flag combination of every stock class, and of a class the catalog does
        // not know (its blocks have no names: no subsystem block decodes cleanly).
        for class in catalog.classes() {
            for flags in 0..=255u8 {
                for _ in 0..3 {
                    let su = random_update(class, flags, &mut rng);
                    let bytes = stateupdate::encode(&su);
                    for species in [Some(class.species_id), None] {
                        let full =
                            stateupdate::decode_reusing(&bytes, species, &catalog, true, &mut pool);
                        let lean = stateupdate::decode_reusing(
                            &bytes, species, &catalog, false, &mut pool,
                        );
                        assert_eq!(full.warnings, lean.warnings);
                        if !lean.warnings.is_empty() {
                            // A lean decode keeps no more than the values: see
                            // `warned_updates_are_written_as_their_field_trees_write_them`.
                            continue;
                        }
                        assert!(lean.fields.is_empty());
                        let su = lean.state_update().unwrap();
                        let (from_tree, from_type) =
                            both_ways(&mut writer, &mut typed, &mut floats, &full.fields, su);
                        assert_eq!(
                            from_tree,
                            from_type,
                            "{} flags {flags:#04x}",
                            species.map_or("no class", |_| class.display_name.as_str())
                        );
                        compared += 1;
                    }
                }
            }
        }
        // Both blocks together always warn; everything else decodes cleanly with the
        // class (and without it unless the subsystem block is set).
        assert!(compared > 16 * 3 * 192, "compared {compared}");
    }

    /// `bytes` changed the ways a real capture's updates warn: cut short, with bytes
    /// after the last field, with one byte changed.
    fn damaged(bytes: &[u8], rng: &mut Rng) -> Vec<Vec<u8>> {
        let mut out = vec![bytes.to_vec()];
        for _ in 0..4 {
            let cut = stateupdate::HEADER_LEN + rng.below(bytes.len() as u64) as usize;
            out.push(bytes[..cut.min(bytes.len())].to_vec());
        }
        for n in 1..=3 {
            let mut b = bytes.to_vec();
            b.extend((0..n).map(|_| rng.below(256) as u8));
            out.push(b);
        }
        for _ in 0..3 {
            let mut b = bytes.to_vec();
            let at = stateupdate::HEADER_LEN - 1 + rng.below((b.len() - 9) as u64) as usize;
            if let Some(x) = b.get_mut(at) {
                *x ^= 1 << rng.below(8);
            }
            out.push(b);
        }
        out
    }

    #[test]
    fn warned_updates_are_written_as_their_field_trees_write_them() {
        let catalog = ShipCatalog::stock();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut writer = PacketWriter::default();
        let mut floats = FloatCache::default();
        let mut typed = TypedWriter::new(&catalog, &mut floats);
        let mut pool = UpdatePool::new();
        let classes = catalog.classes();
        let (mut warned, mut raw, mut failed, mut rest) = (0, 0, 0, 0);
        for (k, class) in classes.iter().enumerate() {
            // Another class's species: its layout misreads the block.
            let other = classes[(k + 1) % classes.len()].species_id;
            for flags in 0..=255u8 {
                let su = random_update(class, flags, &mut rng);
                for bytes in damaged(&stateupdate::encode(&su), &mut rng) {
                    for species in [Some(class.species_id), Some(other), None] {
                        let full =
                            stateupdate::decode_reusing(&bytes, species, &catalog, true, &mut pool);
                        let one = stateupdate::decode_shown(
                            &bytes, species, &catalog, &mut Lean, &mut pool,
                        );
                        assert_eq!(full.warnings, one.warnings);
                        assert!(one.fields.is_empty());
                        let su = one.state_update().unwrap();
                        // A warned update keeps what its tree shows besides its values.
                        assert_eq!(su.shown.is_some(), !one.warnings.is_empty());
                        let (from_tree, from_type) =
                            both_ways(&mut writer, &mut typed, &mut floats, &full.fields, su);
                        assert_eq!(
                            from_tree, from_type,
                            "{} species {species:?} bytes {bytes:02x?}",
                            class.display_name
                        );
                        if !one.warnings.is_empty() {
                            warned += 1;
                        }
                        if let Some(s) = &su.shown {
                            raw += !s.raw_block.is_empty() as usize;
                            failed += s.failed.is_some() as usize;
                            rest += s.rest.is_some() as usize;
                        }
                    }
                }
            }
        }
        // Every way of warning was written, many times over.
        assert!(
            warned > 10_000 && raw > 1_000 && failed > 1_000 && rest > 1_000,
            "warned {warned}, raw {raw}, failed {failed}, rest {rest}"
        );
    }
}

#[cfg(test)]
mod head_tests {
    use super::*;
    use crate::report::test_rng::Rng;
    use serde_json::json;

    /// A message entry as `docs/json.md` lays it out, built with serde_json: the
    /// transport keys of a data message, its game message's opcode, name and length,
    /// empty fields and warnings.
    fn contract(msg: &MessageRecord, g: &GameMessage, flags_len: u16) -> String {
        let mut m = serde_json::Map::new();
        m.insert("offset".into(), json!(msg.offset));
        m.insert("length".into(), json!(msg.length));
        m.insert("transport_type".into(), json!(50));
        m.insert("transport_name".into(), json!("data"));
        m.insert("reliable".into(), json!(false));
        m.insert("ordered".into(), json!(false));
        m.insert("flags_len".into(), json!(flags_len));
        m.insert("seq".into(), json!(null));
        m.insert("fragment".into(), json!(null));
        m.insert("retransmission".into(), json!(msg.retransmission));
        if let Some(f) = msg.original_frame {
            m.insert("original_frame".into(), json!(f));
        }
        if msg.keepalive {
            m.insert("keepalive".into(), json!(true));
        }
        m.insert("opcode".into(), json!(g.opcode));
        m.insert("opcode_hex".into(), json!(format!("0x{:02X}", g.opcode)));
        m.insert("name".into(), json!(g.name));
        m.insert("game_length".into(), json!(g.length));
        m.insert("fields".into(), json!({}));
        m.insert("warnings".into(), json!([]));
        serde_json::to_string(&serde_json::Value::Object(m)).unwrap()
    }

    /// Unreliable data messages written one after another through one writer, whose
    /// kept heads are hit, replaced and bypassed, read as the contract lays them out:
    /// offsets and lengths from 0 to past 16 bits, every opcode, names of one text at
    /// two addresses, a name too long to keep, retransmissions and keepalive repeats
    /// (written key by key).
    #[test]
    fn unreliable_data_heads_match_the_contract() {
        let long: &'static str = Box::leak("Long".repeat(80).into_boxed_str());
        let twin: &'static str = Box::leak(String::from("StateUpdate").into_boxed_str());
        let names = ["StateUpdate", twin, "ChecksumRequest", "Unknown", long];
        let mut rng = Rng(0x5EED_4EAD);
        let mut w = PacketWriter::default();
        let no_names = |_: u32| None;
        for i in 0..200_000u64 {
            let r = rng.next();
            // Mostly a few small values (kept heads are hit), sometimes any.
            let small = |shift: u32, n: u64| ((r >> shift) % n) as usize;
            let (offset, length) = if r.is_multiple_of(64) {
                (small(8, 200_000), small(28, 200_000))
            } else {
                (2 + small(8, 6), 10 + small(16, 12))
            };
            let flags_len = if r.is_multiple_of(7) {
                (r >> 40) as u16
            } else {
                length as u16
            };
            let mut msg = MessageRecord::blank(offset, length);
            msg.transport_type = 0x32;
            msg.transport = TransportInfo::Data {
                flags_len,
                reliable: false,
                ordered: false,
                seq: None,
                fragment: None,
            };
            match (r >> 48) % 50 {
                0 => msg.original_frame = Some(i),
                1 => msg.keepalive = true,
                2 => {
                    msg.retransmission = true;
                    msg.original_frame = Some(i / 2);
                }
                _ => {}
            }
            let g = GameMessage {
                opcode: if r.is_multiple_of(3) {
                    (r >> 20) as u8
                } else {
                    0x1C
                },
                name: names[small(52, names.len() as u64)],
                length: if r % 128 == 1 {
                    small(30, 100_000)
                } else {
                    length.saturating_sub(3)
                },
                fields: Vec::new(),
                warnings: Vec::new(),
                body: None,
            };
            let expected = contract(&msg, &g, flags_len);
            msg.game = Some(g);
            let mut out = Vec::new();
            message_json(&mut w, &mut out, &msg, &no_names);
            assert_eq!(String::from_utf8(out).unwrap(), expected, "message {i}");
        }
    }
}
