//! The `fields` object of a StateUpdate, written from its typed value.
//!
//! StateUpdates are most of a capture, and building their field trees (and freeing them)
//! was most of the cost of `decode --format jsonl`. This module writes the same JSON,
//! key for key and digit for digit, from the [`StateUpdate`] and its class's layout.
//! [`crate::pipeline::FieldTrees::TypedStateUpdates`] leaves the tree out of every StateUpdate
//! with a typed value: one that warned keeps what its tree shows beyond the typed values
//! (a failed read, a raw block, bytes left over: [`crate::game::stateupdate::Shown`]) in that value, and is written
//! from it the same way. A StateUpdate that kept its tree is written from the tree.
//!
//! The key order is the decoder's field order (`game::stateupdate`, `game::subsys`):
//! a test decodes every flag combination of every stock class both ways and compares.
//! What repeats is worked out once: the JSON text of each class's keys and names, and
//! of every value a byte can stand for (a condition, a power byte, a direction
//! component), and, as they are met, of the axes a pair of directions gives and of
//! each wire value of a speed.
//!
//! Why this file is long: about 915 lines, its tests in `json_stream` beside the
//! field-tree writer they compare with; one writer of one record type, whose kept
//! texts (blocks, records, power blocks, directions, speeds, object heads) share its
//! class's.

use super::json_prims::{
    bool_json, f32_json, hex_bytes_json, hex_twin_json, key_bytes, natural_width, needs_escape,
    push_prefix, str_json, u64_json, FloatCache,
};
use crate::game::dirty::FLAG_NAMES;
use crate::game::field::{Field, Value};
use crate::game::registry::state_update_names as su_names;
use crate::game::ships::{RecordFormat, ShipCatalog, ShipClass, SubsystemLayout};
use crate::game::stateupdate::{Cf16, Dir3, StateUpdate, SubsystemData};
use crate::game::subsys::{
    byte_pct, push_record_summary, PowerSetting, SubsystemBlock, SubsystemRecord,
};

/// `,"name":` for a constant name, as one static array: one copy of a length the
/// compiler knows.
macro_rules! key {
    ($name:expr) => {{
        const NAME: &str = $name;
        static KEY: [u8; NAME.len() + 4] = key_bytes(NAME);
        &KEY
    }};
}

/// `,"name":` (the first key of an object has no comma; these never are first).
#[inline(always)]
fn key(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// The JSON text of the value each byte stands for.
struct ByteTexts {
    /// Per byte: its text and the text's length.
    texts: Box<[([u8; ByteTexts::MAX], u8)]>,
}

impl ByteTexts {
    /// Longest text kept (`-0.007874016`, a direction component, is 12).
    const MAX: usize = 16;

    fn new(floats: &mut FloatCache, value: impl Fn(u8) -> f64) -> ByteTexts {
        let mut text = Vec::new();
        let texts = (0..=255u8)
            .map(|b| {
                text.clear();
                floats.write(&mut text, value(b));
                // The values are fixed (a percentage, a direction component): the
                // typed-writer test writes every byte of each.
                assert!(text.len() <= ByteTexts::MAX, "byte {b}: {text:?}");
                let mut t = [0u8; ByteTexts::MAX];
                t[..text.len()].copy_from_slice(&text);
                (t, text.len() as u8)
            })
            .collect();
        ByteTexts { texts }
    }

    #[inline(always)]
    fn write(&self, out: &mut Vec<u8>, b: u8) {
        let (text, len) = &self.texts[b as usize];
        push_prefix(out, text, *len as usize);
    }
}

/// The JSON text of one class's keys and names, per entry of its list.
struct ClassText {
    /// `{"index":N,"key":"…","name":"…","condition_pct":`
    record_head: Vec<Box<[u8]>>,
    /// `{"index":N,"key":"…","name":"…","value":`
    power_head: Vec<Box<[u8]>>,
    /// `"…"`: the entry's name as a JSON string.
    name: Vec<Box<[u8]>>,
    /// `"child_key":`, per child.
    child_keys: Vec<Vec<Box<[u8]>>>,
}

impl ClassText {
    fn of(class: &ShipClass) -> ClassText {
        let mut t = ClassText {
            record_head: Vec::new(),
            power_head: Vec::new(),
            name: Vec::new(),
            child_keys: Vec::new(),
        };
        for (i, e) in class.subsystems.iter().enumerate() {
            let head = |last: &str| {
                let mut h = b"{\"index\":".to_vec();
                u64_json(&mut h, i as u64);
                key(&mut h, su_names::KEY);
                str_json(&mut h, &e.key);
                key(&mut h, su_names::NAME);
                str_json(&mut h, &e.name);
                key(&mut h, last);
                h.into_boxed_slice()
            };
            t.record_head.push(head(su_names::CONDITION_PCT));
            t.power_head.push(head(su_names::VALUE));
            let mut name = Vec::new();
            str_json(&mut name, &e.name);
            t.name.push(name.into_boxed_slice());
            t.child_keys.push(
                e.children
                    .iter()
                    .map(|c| {
                        let mut k = Vec::new();
                        str_json(&mut k, &c.key);
                        k.push(b':');
                        k.into_boxed_slice()
                    })
                    .collect(),
            );
        }
        t
    }
}

/// Writes the fields of StateUpdates decoded with one ship catalog.
pub(super) struct TypedWriter {
    ships: ShipCatalog,
    /// By species id of the class (an alias shares its class's entry), indexed by it:
    /// at most 65,536 entries, one per species id of the catalog's classes.
    classes: Vec<Option<ClassText>>,
    condition: ByteTexts,
    power: ByteTexts,
    direction: ByteTexts,
    records: RecordCache,
    /// The text of recent power blocks, by a hash of their [`PowerKey`]. Power
    /// settings change seldom: nearly every block is one met before.
    powers: Box<[PowerText]>,
    /// Per flags byte: `,"flags":N,"flags_hex":"0xNN","flag_names":"…"` and its length
    /// (a fixed size, copied without a call).
    flags: Box<[([u8; FLAGS_TEXT], u8)]>,
    /// The opening `{"object_id":N,"object_id_hex":"0x…","game_time":` of recent
    /// objects.
    ids: Box<[IdText]>,
    /// The text of `"forward"`, `"up"` and `"right"` for recent pairs of directions.
    axes: Box<[AxesText]>,
    /// Per `cf16` speed, the text of its value once met: `SPEED_TEXT - 1` bytes at
    /// most, the length in the last byte (0: not yet met).
    speeds: Box<[[u8; SPEED_TEXT]]>,
}

/// Bytes per entry of [`TypedWriter::flags`]: all eight flags' text is 84.
const FLAGS_TEXT: usize = 96;

/// Bytes per entry of [`TypedWriter::speeds`].
const SPEED_TEXT: usize = 16;

/// `,"forward":[…],"up":[…],"right":[…]` for one pair of forward and up directions
/// (`len` 0: empty).
#[derive(Clone, Copy)]
struct AxesText {
    /// The six direction bytes.
    dirs: [u8; 6],
    len: u8,
    text: [u8; AxesText::MAX],
}

impl AxesText {
    /// Keys of 11, 6 and 9 bytes; two directions of at most 40 (components of up to
    /// 12 bytes: `-0.007874016`) and a right axis of at most 49 (up to 15).
    const MAX: usize = 160;
    const SLOTS: usize = 1024;
}

/// The text a StateUpdate's fields open with for one object id (`len` 0: empty).
#[derive(Clone, Copy)]
struct IdText {
    id: u32,
    len: u8,
    text: [u8; IdText::MAX],
}

impl IdText {
    /// `{"object_id":4294967295,"object_id_hex":"0xFFFFFFFF","game_time":` is 65 bytes.
    const MAX: usize = 72;
    const SLOTS: usize = 256;
}

impl TypedWriter {
    pub(super) fn new(ships: &ShipCatalog, floats: &mut FloatCache) -> TypedWriter {
        TypedWriter {
            ships: ships.clone(),
            classes: Vec::new(),
            condition: ByteTexts::new(floats, byte_pct),
            power: ByteTexts::new(floats, |b| {
                PowerSetting { index: 0, value: b }.interpreted_pct()
            }),
            direction: ByteTexts::new(floats, |b| Dir3([b, 0, 0]).vector()[0] as f64),
            records: RecordCache::new(),
            powers: (0..PowerKey::SLOTS)
                .map(|_| PowerText {
                    key: PowerKey::EMPTY,
                    text: Vec::new(),
                })
                .collect(),
            flags: (0..=255u8)
                .map(|f| {
                    let mut t = b",\"flags\":".to_vec();
                    u64_json(&mut t, f as u64);
                    key(&mut t, su_names::FLAGS_HEX);
                    hex_twin_json(&mut t, f as u64, 2);
                    key(&mut t, su_names::FLAG_NAMES);
                    flag_names_json(&mut t, f);
                    // The names are fixed: the typed-writer test writes every flags byte.
                    assert!(t.len() <= FLAGS_TEXT, "flags {f}: {t:?}");
                    let mut text = [0u8; FLAGS_TEXT];
                    text[..t.len()].copy_from_slice(&t);
                    (text, t.len() as u8)
                })
                .collect(),
            ids: vec![
                IdText {
                    id: 0,
                    len: 0,
                    text: [0; IdText::MAX],
                };
                IdText::SLOTS
            ]
            .into_boxed_slice(),
            axes: vec![
                AxesText {
                    dirs: [0; 6],
                    len: 0,
                    text: [0; AxesText::MAX],
                };
                AxesText::SLOTS
            ]
            .into_boxed_slice(),
            speeds: vec![[0u8; SPEED_TEXT]; 1 << 16].into_boxed_slice(),
        }
    }

    /// `,"forward":[…],"up":[…],"right":[…]`, kept for the next update with the same
    /// directions (a ship turns slowly: most updates repeat its last pair).
    fn axes(
        axes: &mut [AxesText],
        floats: &mut FloatCache,
        direction: &ByteTexts,
        out: &mut Vec<u8>,
        forward: Dir3,
        up: Dir3,
    ) {
        let (Dir3(f), Dir3(u)) = (forward, up);
        let dirs = [f[0], f[1], f[2], u[0], u[1], u[2]];
        let mut word = [0u8; 8];
        word[..6].copy_from_slice(&dirs);
        let h = u64::from_le_bytes(word).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let kept = &mut axes[(h >> 54) as usize % AxesText::SLOTS];
        if kept.len > 0 && kept.dirs == dirs {
            push_prefix(out, &kept.text, kept.len as usize);
            return;
        }
        let start = out.len();
        out.extend_from_slice(key!(su_names::FORWARD));
        dir3(direction, out, forward);
        out.extend_from_slice(key!(su_names::UP));
        dir3(direction, out, up);
        out.extend_from_slice(key!(su_names::RIGHT));
        vec3(floats, out, StateUpdate::right_of(forward, up));
        let text = &out[start..];
        if text.len() <= AxesText::MAX {
            kept.dirs = dirs;
            kept.len = text.len() as u8;
            kept.text[..text.len()].copy_from_slice(text);
        } else {
            kept.len = 0;
        }
    }

    /// A `cf16` speed's value, its text kept per wire value.
    fn speed(
        speeds: &mut [[u8; SPEED_TEXT]],
        floats: &mut FloatCache,
        out: &mut Vec<u8>,
        speed: Cf16,
    ) {
        let kept = &mut speeds[speed.0 as usize];
        let len = kept[SPEED_TEXT - 1] as usize;
        if len > 0 {
            push_prefix(out, kept, len);
            return;
        }
        let start = out.len();
        floats.write(out, speed.value() as f64);
        let text = &out[start..];
        if text.len() < SPEED_TEXT {
            kept[..text.len()].copy_from_slice(text);
            kept[SPEED_TEXT - 1] = text.len() as u8;
        }
    }

    /// `{"object_id":N,"object_id_hex":"0x…","game_time":`, kept for the object's next
    /// update.
    fn object_id(ids: &mut [IdText], out: &mut Vec<u8>, id: u32) {
        let kept = &mut ids[(id.wrapping_mul(0x9E37_79B1) >> 24) as usize % IdText::SLOTS];
        if kept.len == 0 || kept.id != id {
            let mut t = b"{\"object_id\":".to_vec();
            u64_json(&mut t, id as u64);
            key(&mut t, su_names::OBJECT_ID_HEX);
            hex_twin_json(&mut t, id as u64, 8);
            key(&mut t, su_names::GAME_TIME);
            // At most 65 bytes (ten digits and eight hex digits).
            kept.id = id;
            kept.len = t.len() as u8;
            kept.text[..t.len()].copy_from_slice(&t);
        }
        push_prefix(out, &kept.text, kept.len as usize);
    }

    /// `{…}`: the fields of `su`, as its field tree would write them.
    pub(super) fn fields(&mut self, out: &mut Vec<u8>, su: &StateUpdate, floats: &mut FloatCache) {
        let TypedWriter {
            ships,
            classes,
            condition,
            power,
            direction,
            records,
            powers,
            flags,
            ids,
            axes,
            speeds,
        } = self;
        let class = su.species.and_then(|s| ships.class(s));
        let text = class.map(|c| {
            let i = c.species_id as usize;
            if classes.len() <= i {
                classes.resize_with(i + 1, || None);
            }
            &*classes[i].get_or_insert_with(|| ClassText::of(c))
        });
        Self::object_id(ids, out, su.object_id);
        floats.write(out, su.game_time as f64);
        let (flags_text, len) = &flags[su.flags as usize];
        push_prefix(out, flags_text, *len as usize);
        let shown = su.shown.as_deref();
        let failed = shown.and_then(|s| s.failed.as_deref());
        if let Some(p) = su.position {
            out.extend_from_slice(key!(su_names::POSITION));
            fresh_vec3(out, p);
            // A failed read of the presence bit shows no bit; one of the hash after
            // it shows the bit set.
            if failed != Some(su_names::HASH_PRESENT) {
                out.extend_from_slice(key!(su_names::HASH_PRESENT));
                let present =
                    su.integrity_hash.is_some() || failed == Some(su_names::INTEGRITY_HASH);
                bool_json(out, present);
            }
            if let Some(h) = su.integrity_hash {
                out.extend_from_slice(key!(su_names::INTEGRITY_HASH));
                u64_json(out, h as u64);
                out.extend_from_slice(key!(su_names::INTEGRITY_HASH_HEX));
                hex_twin_json(out, h as u64, natural_width(h as u64));
            }
        }
        if let Some(d) = su.delta {
            out.extend_from_slice(key!(su_names::DELTA));
            fresh_vec3(out, d.vector());
        }
        match (su.forward, su.up) {
            (Some(f), Some(u)) => Self::axes(axes, floats, direction, out, f, u),
            (Some(f), None) => {
                out.extend_from_slice(key!(su_names::FORWARD));
                dir3(direction, out, f);
            }
            (None, Some(u)) => {
                out.extend_from_slice(key!(su_names::UP));
                dir3(direction, out, u);
            }
            (None, None) => {}
        }
        if let Some(s) = su.speed {
            out.extend_from_slice(key!(su_names::SPEED));
            Self::speed(speeds, floats, out, s);
        }
        if let Some(c) = su.cloak {
            out.extend_from_slice(key!(su_names::CLOAK));
            bool_json(out, c);
        }
        if let (Some(SubsystemData::Decoded(block)), Some(class), Some(text)) =
            (&su.subsystems, class, text)
        {
            subsystem_block(out, block, class, text, records, condition);
        }
        // A raw block comes with a warning: it is shown as the tree has it.
        for f in shown.map_or(&[][..], |s| &s.raw_block[..]) {
            shown_field(out, f);
        }
        if let Some(pairs) = &su.power {
            match PowerKey::of(su.species, pairs) {
                Some(k) => {
                    let slot = &mut powers[k.slot()];
                    if slot.key != k {
                        slot.key = PowerKey::EMPTY;
                        slot.text.clear();
                        power_block(&mut slot.text, pairs, text, power);
                        if slot.text.len() <= PowerText::MAX {
                            slot.key = k;
                        }
                    }
                    out.extend_from_slice(&slot.text);
                    if slot.key == PowerKey::EMPTY {
                        // Too long to keep (never from a real class): let go.
                        slot.text = Vec::new();
                    }
                }
                None => power_block(out, pairs, text, power),
            }
        }
        if let Some(rest) = shown.and_then(|s| s.rest.as_ref()) {
            shown_field(out, rest);
        }
        out.push(b'}');
    }
}

/// `,"power_block":[…]`: each setting's entry, its key and name from the class's text.
fn power_block(
    out: &mut Vec<u8>,
    pairs: &[PowerSetting],
    text: Option<&ClassText>,
    power: &ByteTexts,
) {
    out.extend_from_slice(key!(su_names::POWER_BLOCK));
    out.push(b'[');
    for (k, p) in pairs.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        match text.and_then(|t| t.power_head.get(p.index as usize)) {
            Some(head) => out.extend_from_slice(head),
            None => {
                out.extend_from_slice(b"{\"index\":");
                u64_json(out, p.index as u64);
                key(out, su_names::VALUE);
            }
        }
        u64_json(out, p.value as u64);
        out.extend_from_slice(key!(su_names::POWER_PCT_INTERPRETED));
        power.write(out, p.value);
        out.push(b'}');
    }
    out.push(b']');
}

/// A kept text's slot hash over its key, eight bytes at a time (a last short piece
/// padded with zeros, the length mixed in first so that padding cannot collide): the
/// high bits pick the slot.
fn key_hash(key: &[u8]) -> u64 {
    let step = |h: u64, w: [u8; 8]| {
        (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(0x517c_c1b7_2722_0a95)
    };
    let mut h = key.len() as u64;
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = step(h, w);
    }
    if !chunks.remainder().is_empty() {
        let mut w = [0u8; 8];
        w[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        h = step(h, w);
    }
    h
}

/// What a power block's text depends on: the update's species (which gives the class
/// and its names) and every setting, in a fixed-size key (blocks of more settings than
/// fit are written without the cache).
#[derive(Clone, Copy, PartialEq, Eq)]
struct PowerKey([u8; PowerKey::LEN]);

impl PowerKey {
    const LEN: usize = 40;
    /// Never a block's key: its count byte is beyond any that fits.
    const EMPTY: PowerKey = PowerKey([0xFF; PowerKey::LEN]);
    const SLOTS: usize = 256;

    fn of(species: Option<u16>, pairs: &[PowerSetting]) -> Option<PowerKey> {
        // Species present and value, count: 4 bytes before the settings.
        const HEAD: usize = 4;
        if HEAD + 2 * pairs.len() > PowerKey::LEN {
            return None;
        }
        let mut k = [0u8; PowerKey::LEN];
        k[0] = species.is_some() as u8;
        k[1..3].copy_from_slice(&species.unwrap_or(0).to_le_bytes());
        k[3] = pairs.len() as u8;
        for (i, p) in pairs.iter().enumerate() {
            k[HEAD + 2 * i] = p.index;
            k[HEAD + 2 * i + 1] = p.value;
        }
        Some(PowerKey(k))
    }

    fn slot(&self) -> usize {
        (key_hash(&self.0) >> 56) as usize % PowerKey::SLOTS
    }
}

/// A kept power block: its key and its text.
struct PowerText {
    key: PowerKey,
    text: Vec<u8>,
}

impl PowerText {
    /// Longest text kept (18 settings of a class's longest names fit).
    const MAX: usize = 2048;
}

/// `,"name":value` of a field kept in [`Shown`]: a number, bytes or a list of texts
/// (the raw block's start, its bytes and fitting classes, bytes left over).
fn shown_field(out: &mut Vec<u8>, f: &Field) {
    key(out, &f.name);
    shown_value(out, &f.value);
}

fn shown_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Uint(n) => u64_json(out, *n),
        Value::Bytes(b) => hex_bytes_json(out, b),
        Value::Text(t) => str_json(out, t),
        Value::List(items) => {
            out.push(b'[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                shown_value(out, item);
            }
            out.push(b']');
        }
        // The decoder keeps no other kind there; the typed-writer tests write every
        // kind of warned update both ways.
        _ => out.extend_from_slice(b"null"),
    }
}

/// `subsystems_start_index` … `subsystems_summary` of a block `class` reads.
fn subsystem_block(
    out: &mut Vec<u8>,
    block: &SubsystemBlock,
    class: &ShipClass,
    text: &ClassText,
    records: &mut RecordCache,
    condition: &ByteTexts,
) {
    // The whole block's text, kept by its class, start and records: a ship sends the
    // same few blocks over and over while nothing is damaged (three in four blocks of
    // a battle are one met before).
    let RecordCache {
        blocks, block_key, ..
    } = records;
    block_key.clear();
    block_key.extend_from_slice(&class.species_id.to_le_bytes());
    block_key.push(block.start);
    for rec in &block.records {
        match RecordKey::of(class.species_id, rec) {
            Some(k) if block_key.len() < BlockText::MAX_KEY => block_key.extend_from_slice(&k.0),
            // A record with more children than a key holds, or too many records.
            _ => return records_json(out, block, class, text, records, condition),
        }
    }
    let slot = BlockText::slot_of(block_key);
    if blocks[slot].key == *block_key {
        out.extend_from_slice(&blocks[slot].text);
        return;
    }
    let start = out.len();
    records_json(out, block, class, text, records, condition);
    let text = &out[start..];
    let RecordCache {
        blocks, block_key, ..
    } = records;
    let kept = &mut blocks[slot];
    kept.key.clear();
    kept.text.clear();
    if text.len() <= BlockText::MAX_TEXT {
        kept.key.extend_from_slice(block_key);
        kept.text.extend_from_slice(text);
    }
}

/// [`subsystem_block`] written record by record (each record's text kept).
fn records_json(
    out: &mut Vec<u8>,
    block: &SubsystemBlock,
    class: &ShipClass,
    text: &ClassText,
    records: &mut RecordCache,
    condition: &ByteTexts,
) {
    let RecordCache {
        slots,
        summary,
        scratch,
        ..
    } = records;
    out.extend_from_slice(key!(su_names::SUBSYSTEMS_START_INDEX));
    u64_json(out, block.start as u64);
    out.extend_from_slice(key!(su_names::SUBSYSTEMS_START_NAME));
    match text.name.get(block.start as usize) {
        Some(name) => out.extend_from_slice(name),
        None => out.extend_from_slice(b"\"?\""),
    }
    out.extend_from_slice(key!(su_names::SUBSYSTEMS));
    out.push(b'[');
    summary.clear();
    summary.push(b'"');
    let mut first = true;
    for rec in &block.records {
        let i = rec.index as usize;
        // The same records the tree lists: those with an entry in the class.
        let (Some(entry), Some(head), Some(child_keys)) = (
            class.entry(i),
            text.record_head.get(i),
            text.child_keys.get(i),
        ) else {
            continue;
        };
        if !first {
            out.push(b',');
            summary.extend_from_slice(b"; ");
        }
        first = false;
        let Some(key) = RecordKey::of(class.species_id, rec) else {
            record_json(out, rec, head, child_keys, condition);
            summary_json(summary, rec, entry, scratch);
            continue;
        };
        let slot = &mut slots[RecordCache::slot_of(&key)];
        if slot.key != key {
            slot.key = RecordKey::EMPTY;
            slot.json.clear();
            record_json(&mut slot.json, rec, head, child_keys, condition);
            slot.summary.clear();
            summary_json(&mut slot.summary, rec, entry, scratch);
            if slot.json.len() + slot.summary.len() <= RecordCache::MAX_TEXT {
                slot.key = key;
            } else {
                // Too long to keep: written, and the slot emptied.
                out.extend_from_slice(&slot.json);
                summary.extend_from_slice(&slot.summary);
                slot.json = Vec::new();
                slot.summary = Vec::new();
                continue;
            }
        }
        out.extend_from_slice(&slot.json);
        summary.extend_from_slice(&slot.summary);
    }
    out.push(b']');
    out.extend_from_slice(key!(su_names::SUBSYSTEMS_SUMMARY));
    summary.push(b'"');
    out.extend_from_slice(summary);
}

/// One record of a subsystem block as a JSON object.
fn record_json(
    out: &mut Vec<u8>,
    rec: &SubsystemRecord,
    head: &[u8],
    child_keys: &[Box<[u8]>],
    condition: &ByteTexts,
) {
    out.extend_from_slice(head);
    condition.write(out, rec.condition);
    if !rec.children.is_empty() {
        key(out, su_names::CHILDREN_PCT);
        out.push(b'{');
        for (k, c) in rec.children.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            match child_keys.get(k) {
                Some(child) => out.extend_from_slice(child),
                None => {
                    str_json(out, &format!("child_{k}"));
                    out.push(b':');
                }
            }
            condition.write(out, *c);
        }
        out.push(b'}');
    }
    match rec.format {
        RecordFormat::Base => {}
        RecordFormat::Power => {
            key(out, su_names::MAIN_BATTERY_PCT);
            condition.write(out, rec.batteries[0]);
            key(out, su_names::BACKUP_BATTERY_PCT);
            condition.write(out, rec.batteries[1]);
        }
        RecordFormat::Powered | RecordFormat::Shield => {
            key(out, su_names::HAS_POWER_DATA);
            bool_json(out, rec.power_pct.is_some());
            if let Some(p) = rec.power_pct {
                key(out, su_names::POWER_PCT);
                u64_json(out, p as u64);
            }
            if rec.format == RecordFormat::Shield {
                key(out, su_names::FACINGS_PCT);
                out.push(b'[');
                for (k, f) in rec.facings.iter().enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    condition.write(out, *f);
                }
                out.push(b']');
            }
        }
    }
    out.push(b'}');
}

/// A record's part of `subsystems_summary`, escaped as inside a JSON string (escaping
/// each part escapes the whole: the `; ` between parts needs none).
fn summary_json(
    out: &mut Vec<u8>,
    rec: &SubsystemRecord,
    entry: &SubsystemLayout,
    scratch: &mut String,
) {
    scratch.clear();
    push_record_summary(scratch, rec, entry);
    if !needs_escape(scratch.as_bytes()) {
        // Nearly always (names from the catalog): the text as it is.
        out.extend_from_slice(scratch.as_bytes());
        return;
    }
    let start = out.len();
    str_json(out, scratch);
    // Without the quotes str_json put around it.
    out.pop();
    out.remove(start);
}

/// What a record's JSON depends on besides its class: its index and every value, in a
/// fixed-size key (records with more children than fit are written without the cache).
#[derive(Clone, Copy, PartialEq, Eq)]
struct RecordKey([u8; RecordKey::LEN]);

impl RecordKey {
    const LEN: usize = 32;
    /// Never a record's key: its child count byte is beyond any that fits.
    const EMPTY: RecordKey = RecordKey([0xFF; RecordKey::LEN]);

    fn of(species: u16, rec: &SubsystemRecord) -> Option<RecordKey> {
        // species 2, index, format, condition, power flag and value, 2 batteries,
        // 6 facings, child count: 16 bytes before the children.
        const HEAD: usize = 16;
        let n = rec.children.len();
        if HEAD + n > RecordKey::LEN {
            return None;
        }
        let mut k = [0u8; RecordKey::LEN];
        k[..2].copy_from_slice(&species.to_le_bytes());
        k[2] = rec.index;
        k[3] = rec.format as u8;
        k[4] = rec.condition;
        k[5] = rec.power_pct.is_some() as u8;
        k[6] = rec.power_pct.unwrap_or(0);
        k[7..9].copy_from_slice(&rec.batteries);
        k[9..15].copy_from_slice(&rec.facings);
        k[HEAD - 1] = n as u8;
        k[HEAD..HEAD + n].copy_from_slice(&rec.children);
        Some(RecordKey(k))
    }
}

/// A cached record: its JSON object and its part of the summary.
struct RecordText {
    key: RecordKey,
    json: Vec<u8>,
    summary: Vec<u8>,
}

/// A kept subsystem block: its key (species, start, each record's [`RecordKey`]) and
/// its text, from `,"subsystems_start_index":` to the end of the summary.
struct BlockText {
    key: Vec<u8>,
    text: Vec<u8>,
}

impl BlockText {
    const SLOTS: usize = 1024;
    /// Keys of blocks of up to 8 records are kept (a block of the stock classes holds 1
    /// to 5).
    const MAX_KEY: usize = 3 + 8 * RecordKey::LEN;
    /// Longest text kept (bounds the cache at about 4 MB).
    const MAX_TEXT: usize = 4096;

    fn slot_of(key: &[u8]) -> usize {
        (key_hash(key) >> 54) as usize % BlockText::SLOTS
    }
}

/// The text of recent subsystem records, by a hash of their key. A ship's records
/// change a few at a time, so most of a block is written as it was last time.
struct RecordCache {
    /// Whole blocks (see [`subsystem_block`]).
    blocks: Box<[BlockText]>,
    /// Reused for the key of the block being written.
    block_key: Vec<u8>,
    slots: Box<[RecordText]>,
    /// Reused for the text of a subsystem summary, and of one record's part.
    summary: Vec<u8>,
    scratch: String,
}

impl RecordCache {
    const SLOTS: usize = 1024;
    /// Longest text kept per slot (bounds the cache at about 1 MB).
    const MAX_TEXT: usize = 1024;

    fn new() -> RecordCache {
        RecordCache {
            blocks: (0..BlockText::SLOTS)
                .map(|_| BlockText {
                    key: Vec::new(),
                    text: Vec::new(),
                })
                .collect(),
            block_key: Vec::new(),
            slots: (0..RecordCache::SLOTS)
                .map(|_| RecordText {
                    key: RecordKey::EMPTY,
                    json: Vec::new(),
                    summary: Vec::new(),
                })
                .collect(),
            summary: Vec::new(),
            scratch: String::new(),
        }
    }

    fn slot_of(key: &RecordKey) -> usize {
        (key_hash(&key.0) >> 54) as usize % RecordCache::SLOTS
    }
}

/// A direction's three components, each kept per byte.
fn dir3(direction: &ByteTexts, out: &mut Vec<u8>, Dir3(bytes): Dir3) {
    out.push(b'[');
    direction.write(out, bytes[0]);
    out.push(b',');
    direction.write(out, bytes[1]);
    out.push(b',');
    direction.write(out, bytes[2]);
    out.push(b']');
}

fn vec3(floats: &mut FloatCache, out: &mut Vec<u8>, v: [f32; 3]) {
    out.push(b'[');
    floats.write(out, v[0] as f64);
    out.push(b',');
    floats.write(out, v[1] as f64);
    out.push(b',');
    floats.write(out, v[2] as f64);
    out.push(b']');
}

/// A vector whose components seldom repeat (a position, a position delta: two thirds
/// of a capture's delta components are met once), written without the float cache.
fn fresh_vec3(out: &mut Vec<u8>, v: [f32; 3]) {
    out.push(b'[');
    f32_json(out, v[0]);
    out.push(b',');
    f32_json(out, v[1]);
    out.push(b',');
    f32_json(out, v[2]);
    out.push(b']');
}

/// `"POS+FWD"` as `dirty::flag_names` spells it, without building the text.
fn flag_names_json(out: &mut Vec<u8>, flags: u8) {
    if flags == 0 {
        out.extend_from_slice(b"\"NONE\"");
        return;
    }
    out.push(b'"');
    let mut first = true;
    for (bit, name) in FLAG_NAMES.iter().enumerate() {
        if flags & (1 << bit) != 0 {
            if !first {
                out.push(b'+');
            }
            first = false;
            out.extend_from_slice(name.as_bytes());
        }
    }
    out.push(b'"');
}
