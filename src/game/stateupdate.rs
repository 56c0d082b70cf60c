//! StateUpdate (opcode 0x1C, `stateupdate.md`): one ship's movement and systems state.
//!
//! Field order on the wire is 0x01, 0x02, 0x04, 0x08, 0x10, 0x40, 0x20, 0x80 (§3) and the
//! whole message is read with one [`Reader`], because the hash flag, the cloak bit and
//! the subsystem power bits share packed bytes. Compressed values keep their raw wire
//! form in [`StateUpdate`] so that [`encode`] reproduces the decoded bytes exactly.
//!
//! Why this file is long: the decoder ends at about 815 lines; the rest is tests on the seed
//! examples, the real captures' blocks and hostile inputs.

use super::dirty::flag_names;
use super::field::{Field, Span, Value};
use super::message::GameMessage;
use super::opcodes::Body;
use super::reader::{DecodeError, DecodeResult, FieldReader};
use super::registry::FieldName;
use super::ships::{ShipCatalog, ShipClass};
use super::subsys::{
    power_entry, power_fields, read_block_into, read_power_block_into, walk_block,
    walk_block_fields, walk_power_block, FitMemo, PowerSetting, SubsystemRecord,
};
use super::walk::{Lean, TreeBuilder, Visitor};
use crate::diag::{Code, Warning};
use crate::game::registry::field;

// The typed value and its encoder live below the decoder, where the message body and
// the dirty-flag statistics can name them without importing the decoder.
pub use super::update::{
    encode, flag, Cf16, Delta, Dir3, Shown, StateUpdate, SubsystemData, OPCODE,
};

/// Decode a whole StateUpdate message (opcode byte first). `species` is the ship class of
/// the object if the registry knows it.
pub fn decode(msg: &[u8], species: Option<u16>, catalog: &ShipCatalog) -> GameMessage {
    decode_with(msg, species, catalog, true)
}

/// [`decode`]; with `keep_fields` false the message has no fields (a lean decode: the
/// typed [`StateUpdate`] and the warnings are the same).
pub fn decode_with(
    msg: &[u8],
    species: Option<u16>,
    catalog: &ShipCatalog,
    keep_fields: bool,
) -> GameMessage {
    decode_reusing(msg, species, catalog, keep_fields, &mut UpdatePool::new())
}

/// StateUpdates nobody reads any more, kept for the next ones: the boxes, and the
/// subsystem record and power lists that were inside them. The lists are pooled apart
/// from the boxes because an update without a subsystem block would otherwise drop
/// the record list the next update with one needs (an allocation per message).
#[derive(Default)]
pub struct UpdatePool {
    /// Boxed because `Body::StateUpdate` is: reusing the box is the point.
    #[allow(clippy::vec_box)]
    boxes: Vec<Box<StateUpdate>>,
    records: Vec<Vec<SubsystemRecord>>,
    power: Vec<Vec<PowerSetting>>,
    /// Which classes read the raw blocks seen lately.
    fits: FitMemo,
    /// The texts of the unfit-block warnings given lately.
    unfit_texts: UnfitTexts,
}

/// The texts of recent "subsystem block does not fit the layout" warnings, by what
/// they say. A third-party host sends the same unfit block in update after update (a
/// few distinct texts over thousands of updates in the shared captures), and
/// formatting each text again was a visible share of decoding such a capture.
#[derive(Default)]
struct UnfitTexts {
    recent: Vec<(UnfitKey, String)>,
    /// The slot the next new text replaces, once all are taken.
    next: usize,
}

/// Everything an unfit-block warning's text is made of.
struct UnfitKey {
    class: String,
    species: u16,
    error: DecodeError,
}

impl UnfitKey {
    fn says(&self, class: &ShipClass, e: &DecodeError) -> bool {
        self.species == class.species_id && self.error == *e && self.class == class.display_name
    }
}

impl UnfitTexts {
    const SLOTS: usize = 16;

    /// The warning text for `class` not reading a block because of `e`.
    fn text(&mut self, class: &ShipClass, e: &DecodeError) -> String {
        if let Some((_, text)) = self.recent.iter().find(|(k, _)| k.says(class, e)) {
            return text.clone();
        }
        let text = unfit_text(class, e);
        let entry = (
            UnfitKey {
                class: class.display_name.clone(),
                species: class.species_id,
                error: e.clone(),
            },
            text.clone(),
        );
        if self.recent.len() < Self::SLOTS {
            self.recent.push(entry);
        } else {
            self.recent[self.next] = entry;
            self.next = (self.next + 1) % Self::SLOTS;
        }
        text
    }
}

/// The text of a warning for a subsystem block that `class`'s layout does not read.
fn unfit_text(class: &ShipClass, why: &dyn std::fmt::Display) -> String {
    use std::fmt::Write;
    // Sized once: `format!` grows the text a piece at a time.
    let mut message = String::with_capacity(192);
    let _ = write!(
        message,
        "subsystem block does not fit the {} layout (species {}): {why}; kept raw",
        class.display_name, class.species_id
    );
    message
}

impl UpdatePool {
    /// At most this many of each are kept (a datagram carries a few updates).
    pub const MAX: usize = 64;

    pub fn new() -> UpdatePool {
        UpdatePool::default()
    }

    /// Keep `su`'s storage for a later [`decode_reusing`]. Inlined for an update
    /// without lists (every update of a counting decode): the call cost it some 18
    /// instructions.
    #[inline]
    pub fn recycle(&mut self, mut su: Box<StateUpdate>) {
        if su.subsystems.is_some() || su.power.is_some() {
            self.keep_lists(&mut su);
        }
        if self.boxes.len() < Self::MAX {
            self.boxes.push(su);
        }
    }

    /// The record and power lists of `su`, emptied into the pool.
    fn keep_lists(&mut self, su: &mut StateUpdate) {
        if let Some(SubsystemData::Decoded(block)) = su.subsystems.take() {
            self.keep_records(block.records);
        }
        if let Some(power) = su.power.take() {
            self.keep_power(power);
        }
    }

    fn keep_power(&mut self, mut power: Vec<PowerSetting>) {
        if power.capacity() > 0 && self.power.len() < Self::MAX {
            power.clear();
            self.power.push(power);
        }
    }

    fn keep_records(&mut self, mut records: Vec<SubsystemRecord>) {
        if records.capacity() > 0 && self.records.len() < Self::MAX {
            records.clear();
            self.records.push(records);
        }
    }
}

/// [`decode_with`], filling storage from `pool` (typed values of earlier messages
/// nobody reads any more) instead of new allocations.
pub fn decode_reusing(
    msg: &[u8],
    species: Option<u16>,
    catalog: &ShipCatalog,
    keep_fields: bool,
    pool: &mut UpdatePool,
) -> GameMessage {
    // Two calls rather than one through a chosen visitor, so the lean decode returns
    // its message in place (the message is large; moving it shows in a profile).
    if keep_fields {
        let mut tree = TreeBuilder::new();
        let mut m = decode_walking(msg, species, catalog, &mut tree, pool);
        m.fields = tree.into_fields();
        m
    } else {
        decode_walking(msg, species, catalog, &mut Lean, pool)
    }
}

/// [`decode_reusing`], handing the fields to `visitor` in wire order as they are read:
/// the message's own `fields` stay empty.
pub fn decode_walking(
    msg: &[u8],
    species: Option<u16>,
    catalog: &ShipCatalog,
    visitor: &mut dyn Visitor,
    pool: &mut UpdatePool,
) -> GameMessage {
    decode_keeping(msg, species, catalog, visitor, pool, Keep::Records)
}

/// The shortest StateUpdate with a header (opcode, object id, game time, flags); a
/// shorter one has no typed value, only its bytes.
pub const HEADER_LEN: usize = 10;

/// [`decode_walking`], whose typed value also keeps what a field tree would show
/// beyond it ([`StateUpdate::shown`]) when the update warns: the one decode behind
/// [`FieldTrees::TypedStateUpdates`](super::opcodes::FieldTrees::TypedStateUpdates).
/// A message shorter than [`HEADER_LEN`] has no typed value to keep it in: decode it
/// with a tree.
pub fn decode_shown(
    msg: &[u8],
    species: Option<u16>,
    catalog: &ShipCatalog,
    visitor: &mut dyn Visitor,
    pool: &mut UpdatePool,
) -> GameMessage {
    decode_keeping(msg, species, catalog, visitor, pool, Keep::Shown)
}

/// A lean decode that keeps no subsystem or power records (`subsystems` and `power`
/// stay `None`): the blocks are still read to the end, so the warnings, the flags and
/// the subsystem start are those of [`decode_reusing`]. For a reader that only counts
/// ([`FieldTrees::Counts`](super::opcodes::FieldTrees::Counts)); building and
/// recycling the records was a sixth of decoding a capture.
pub fn decode_counting(
    msg: &[u8],
    species: Option<u16>,
    catalog: &ShipCatalog,
    pool: &mut UpdatePool,
) -> GameMessage {
    decode_keeping(msg, species, catalog, &mut Lean, pool, Keep::Counts)
}

/// [`decode_counting`], written into `slot`: the pipeline decodes into its record's
/// place, and a returned message was copied there whole (some 150 bytes per message).
pub fn decode_counting_into(
    msg: &[u8],
    species: Option<u16>,
    catalog: &ShipCatalog,
    pool: &mut UpdatePool,
    slot: &mut Option<GameMessage>,
) {
    decode_lean_into(msg, species, catalog, pool, Keep::Counts, slot);
}

/// [`decode_shown`] with no fields wanted, written into `slot` as
/// [`decode_counting_into`] writes: the JSON writers' decode of every StateUpdate.
pub fn decode_shown_into(
    msg: &[u8],
    species: Option<u16>,
    catalog: &ShipCatalog,
    pool: &mut UpdatePool,
    slot: &mut Option<GameMessage>,
) {
    decode_lean_into(msg, species, catalog, pool, Keep::Shown, slot);
}

/// A decode that hands no fields over, written into `slot`.
#[inline(always)]
fn decode_lean_into(
    msg: &[u8],
    species: Option<u16>,
    catalog: &ShipCatalog,
    pool: &mut UpdatePool,
    keep: Keep,
    slot: &mut Option<GameMessage>,
) {
    let (warnings, su) = decode_parts(msg, species, catalog, &mut Lean, pool, keep);
    // Emptied first: the message is then built where it lies, with no drop of an old
    // one in between (the pipeline hands a reset record, whose slot is empty).
    if slot.is_some() {
        *slot = None;
    }
    *slot = Some(message_of(msg, warnings, su));
}

/// The message of a StateUpdate decode: its warnings and typed value (none when the
/// header did not read).
#[inline(always)]
fn message_of(msg: &[u8], warnings: Vec<Warning>, su: Option<Box<StateUpdate>>) -> GameMessage {
    GameMessage {
        opcode: OPCODE,
        name: "StateUpdate",
        length: msg.len(),
        fields: Vec::new(),
        warnings,
        body: su.map(Body::StateUpdate),
    }
}

/// What a decode keeps in the typed value besides the header and motion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Neither records nor anything else: [`decode_counting`].
    Counts,
    /// The subsystem and power records.
    Records,
    /// The records and what a field tree would show beyond them: [`decode_shown`].
    Shown,
}

/// [`decode_walking`]; as [`decode_counting`] or [`decode_shown`] by `keep`.
fn decode_keeping(
    msg: &[u8],
    species: Option<u16>,
    catalog: &ShipCatalog,
    visitor: &mut dyn Visitor,
    pool: &mut UpdatePool,
    keep: Keep,
) -> GameMessage {
    let (warnings, su) = decode_parts(msg, species, catalog, visitor, pool, keep);
    message_of(msg, warnings, su)
}

/// [`decode_keeping`] up to its message: the warnings and the typed value.
#[inline(always)]
fn decode_parts(
    msg: &[u8],
    species: Option<u16>,
    catalog: &ShipCatalog,
    visitor: &mut dyn Visitor,
    pool: &mut UpdatePool,
    keep: Keep,
) -> (Vec<Warning>, Option<Box<StateUpdate>>) {
    #[cfg(test)]
    tests::DECODES.with(|n| n.set(n.get() + 1));
    let mut su = match pool.boxes.pop() {
        Some(mut su) => {
            // Its lists went to the pool when it was recycled: nothing to free here.
            su.clear();
            su
        }
        // Boxed from the start: the message keeps it, and filling it in place saves
        // moving the whole value into a box at the end.
        None => Box::default(),
    };
    su.species = species;
    let mut d = Decoder {
        f: FieldReader::after_opcode(msg, visitor),
        warnings: Vec::new(),
        su,
        species,
        class: species.and_then(|s| catalog.class(s)),
        catalog,
        pool,
        keep_records: keep != Keep::Counts,
        keep_shown: keep == Keep::Shown,
    };
    if msg.first() != Some(&OPCODE) {
        d.warnings.push(Warning::new(
            Code::DecodeError,
            Some(0),
            format!("opcode byte is {:?}, expected 0x1C", msg.first()),
        ));
    }
    let header_ok = d.header().is_ok();
    if header_ok {
        if let Err(e) = d.body() {
            d.fail(e);
        }
    }
    // Finished in place: taking the decoder apart first copied its reader.
    if keep == Keep::Shown && !d.warnings.is_empty() {
        // Says "written from this value" even where the tree shows nothing more.
        d.su.shown.get_or_insert_with(Box::default);
    }
    if !header_ok {
        d.header_failed(msg.len());
    }
    (d.warnings, header_ok.then_some(d.su))
}

/// The top-level fields of a decoded subsystem block ([`walk_block_fields`]).
const BLOCK_FIELDS: [FieldName; 4] = [
    field!("subsystems_start_index"),
    field!("subsystems_start_name"),
    field!("subsystems"),
    field!("subsystems_summary"),
];

struct Decoder<'a, 'c, 'v> {
    f: FieldReader<'a, 'v>,
    warnings: Vec<Warning>,
    su: Box<StateUpdate>,
    species: Option<u16>,
    class: Option<&'c ShipClass>,
    catalog: &'c ShipCatalog,
    /// Emptied record and power lists, taken only by a block that fills one (taking
    /// both up front and handing the unused one back cost some 60 instructions an
    /// update), the fit memo and the unfit-block texts.
    pool: &'c mut UpdatePool,
    /// Keep the subsystem and power records in the typed value ([`decode_counting`]
    /// does not).
    keep_records: bool,
    /// Keep what the tree would show beyond the typed values ([`decode_shown`]).
    keep_shown: bool,
}

impl<'a> Decoder<'a, '_, '_> {
    fn warn(&mut self, code: Code, offset: usize, message: String) {
        self.warnings
            .push(Warning::new(code, Some(offset), message));
    }

    /// A message too short for the header (`len` bytes): said, and its bytes kept raw
    /// in the tree.
    #[cold]
    #[inline(never)]
    fn header_failed(&mut self, len: usize) {
        let at = self.f.r.pos();
        self.warnings.push(Warning::new(
            Code::DecodeError,
            Some(at),
            format!("StateUpdate header needs 10 bytes, message has {len}"),
        ));
        self.f.rest(field!("undecoded"));
    }

    /// Record a failed read and keep the rest of the message as raw bytes.
    fn fail(&mut self, e: Box<DecodeError>) {
        self.warn(Code::DecodeError, e.offset, e.to_string());
        if self.keep_shown {
            self.shown().failed = Some(e.field.clone());
        }
        self.rest(field!("undecoded"));
    }

    /// What the tree would show beyond the typed values, opened on first use.
    #[cold]
    #[inline(never)]
    fn shown(&mut self) -> &mut Shown {
        self.su.shown.get_or_insert_with(Box::default)
    }

    /// The rest of the message as raw bytes, under `name` (kept for the typed value
    /// too when it keeps what the tree shows). Only a message that warns has any.
    #[cold]
    #[inline(never)]
    fn rest(&mut self, name: FieldName) -> &'a [u8] {
        let at = self.f.r.pos();
        let bytes = self.f.rest(name);
        if self.keep_shown && !bytes.is_empty() {
            let span = Span::new(at, at + bytes.len());
            self.shown().rest = Some(Field::new(name, Value::Bytes(bytes.to_vec()), span));
        }
        bytes
    }

    fn header(&mut self) -> DecodeResult<()> {
        // Check the length first so a short message yields no half header.
        // The nine bytes taken in one step: one bounds check instead of one a field.
        let at = self.f.r.pos();
        let Ok(h) = self.f.r.take::<{ HEADER_LEN - 1 }>("header") else {
            return Err(self.f.r.error("header", "9 bytes after the opcode"));
        };
        let object_id = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let game_time = f32::from_le_bytes([h[4], h[5], h[6], h[7]]);
        let flags = h[8];
        self.f.push_plain_over(
            field!("object_id"),
            Value::ObjectId(object_id),
            Span::new(at, at + 4),
        );
        self.f.push_plain_over(
            field!("game_time"),
            Value::Float(game_time as f64),
            Span::new(at + 4, at + 8),
        );
        self.f.push_plain_over(
            field!("flags"),
            Value::Hex(flags as u64),
            Span::new(at + 8, at + 9),
        );
        self.su.object_id = object_id;
        self.su.game_time = game_time;
        self.su.flags = flags;
        let at = at + 8;
        const FLAG_NAMES: FieldName = field!("flag_names");
        if self.f.wants(FLAG_NAMES.id) {
            self.f
                .push(FLAG_NAMES, Value::Text(flag_names(self.su.flags)), at);
        }
        Ok(())
    }

    fn body(&mut self) -> DecodeResult<()> {
        let flags = self.su.flags;
        let fields = self.f.keeps_fields();
        if flags & flag::POSITION != 0 {
            // Check the whole vector first so a short message loses no bytes.
            let at = self.f.r.pos();
            let Ok(p) = self.f.r.take::<12>("position") else {
                return Err(self.f.r.error("position", "12 bytes (3 × f32)"));
            };
            let position = [
                f32::from_le_bytes([p[0], p[1], p[2], p[3]]),
                f32::from_le_bytes([p[4], p[5], p[6], p[7]]),
                f32::from_le_bytes([p[8], p[9], p[10], p[11]]),
            ];
            self.f.push_plain_over(
                field!("position"),
                Value::Vec3(position),
                Span::new(at, at + 12),
            );
            self.su.position = Some(position);
            if self.f.bit(field!("hash_present"))? {
                let at = self.f.r.pos();
                let h = self.f.r.u16("integrity_hash")?;
                self.f
                    .push(field!("integrity_hash"), Value::Hex(h as u64), at);
                self.su.integrity_hash = Some(h);
            }
        }
        if flags & flag::DELTA != 0 {
            let at = self.f.r.pos();
            let Ok(b) = self.f.r.take::<5>("delta") else {
                return Err(self.f.r.error("delta", "5 bytes (cv4)"));
            };
            let d = Delta {
                dir: Dir3([b[0], b[1], b[2]]),
                magnitude: Cf16(u16::from_le_bytes([b[3], b[4]])),
            };
            // The decoded vectors and the speed below only serve fields: a lean decode
            // keeps the wire form and skips the float arithmetic.
            if fields {
                self.f.push(field!("delta"), Value::Vec3(d.vector()), at);
            }
            self.su.delta = Some(d);
        }
        if flags & flag::FORWARD != 0 {
            let at = self.f.r.pos();
            let v = self.dir3("forward")?;
            if fields {
                self.f.push(field!("forward"), Value::Vec3(v.vector()), at);
            }
            self.su.forward = Some(v);
        }
        if flags & flag::UP != 0 {
            let at = self.f.r.pos();
            let v = self.dir3("up")?;
            self.su.up = Some(v);
            if fields {
                self.f.push(field!("up"), Value::Vec3(v.vector()), at);
                if let Some(right) = self.su.right() {
                    // Derived, not on the wire: spans forward and up.
                    self.f.push(field!("right"), Value::Vec3(right), at - 3);
                }
            }
        }
        if flags & flag::SPEED != 0 {
            let at = self.f.r.pos();
            let s = Cf16(u16::from_le_bytes(self.f.r.take("speed")?));
            if fields {
                self.f
                    .push(field!("speed"), Value::Float(s.value() as f64), at);
            }
            self.su.speed = Some(s);
        }
        if flags & flag::CLOAK != 0 {
            self.su.cloak = Some(self.f.bit(field!("cloak"))?);
        }
        if flags & flag::SUBSYSTEMS != 0 {
            self.subsystem_block()?;
        }
        if flags & flag::POWER != 0 {
            if flags & flag::SUBSYSTEMS != 0 {
                let at = self.f.r.pos();
                self.warn(
                    Code::BothBlocks,
                    at,
                    "flags 0x20 and 0x80 are both set: the 0x20 block runs to the end of \
                     the message, so the 0x80 block is empty"
                        .into(),
                );
            }
            self.power_block();
        }
        if !self.f.r.is_empty() {
            let at = self.f.r.pos();
            let n = self.f.r.remaining();
            self.warn(
                Code::TrailingBytes,
                at,
                format!("{n} byte(s) after the last field of flags {flags:#04x}"),
            );
            self.rest(field!("trailing"));
        }
        Ok(())
    }

    fn dir3(&mut self, field: &'static str) -> DecodeResult<Dir3> {
        Ok(Dir3(self.f.r.take(field)?))
    }

    fn subsystem_block(&mut self) -> DecodeResult<()> {
        let at = self.f.r.pos();
        if self.f.r.is_empty() {
            return Err(self.f.r.error("subsystem block", "a start index byte"));
        }
        if let Some(class) = self.class {
            let mut probe = self.f.r.clone();
            let keep_spans = self.f.keeps_fields();
            let read = if self.keep_records {
                let records = self.pool.records.pop().unwrap_or_default();
                read_block_into(&mut probe, class, keep_spans, records)
            } else {
                walk_block(&mut probe, class)
            };
            let problem = match read {
                Ok(read) if read.fits() => {
                    if read.wrapped_past_start {
                        self.warn(
                            Code::SubsystemCycle,
                            at,
                            "records continue past a full cycle of the list".into(),
                        );
                    }
                    self.f.r = probe;
                    self.su.subsystem_start = Some(read.block.start);
                    if BLOCK_FIELDS.iter().any(|n| self.f.wants(n.id)) {
                        walk_block_fields(&mut self.f, &read, class, at);
                    }
                    if self.keep_records {
                        self.su.subsystems = Some(SubsystemData::Decoded(read.block));
                    }
                    return Ok(());
                }
                Ok(read) if read.wrapped_past_start => (
                    Code::LayoutMismatch,
                    at,
                    "records continue past a full cycle of the list".to_string(),
                ),
                Ok(read) => (
                    Code::LayoutMismatch,
                    probe.last_bit_pos(),
                    format!(
                        "{} packed boolean(s) left unread at the end of the block",
                        read.unread_bits
                    ),
                ),
                // A bad start index or a byte that cannot be a packed-bit byte means
                // the layout is wrong; running out of bytes means the block is shorter
                // than the class's records (a reimplementation's own block).
                Err(e) => {
                    let mismatch =
                        e.field.contains("start index") || e.expected.contains("packed-bit");
                    let code = if mismatch {
                        Code::LayoutMismatch
                    } else {
                        Code::LayoutUnfit
                    };
                    // Third-party hosts send such blocks often: the text is kept for
                    // the next block that fails the same way.
                    let text = self.pool.unfit_texts.text(class, &e);
                    self.warn(code, e.offset, text);
                    self.raw_subsystem_block(at);
                    return Ok(());
                }
            };
            let (code, offset, what) = problem;
            self.layout_warning(class, code, offset, &what);
        }
        self.raw_subsystem_block(at);
        Ok(())
    }

    /// A subsystem block that `class`'s layout does not read, and why.
    fn layout_warning(
        &mut self,
        class: &ShipClass,
        code: Code,
        offset: usize,
        why: &dyn std::fmt::Display,
    ) {
        self.warn(code, offset, unfit_text(class, why));
    }

    /// Keep the block raw and say which known layouts would read it exactly.
    fn raw_subsystem_block(&mut self, at: usize) {
        // Probing every class is costly: skip it when nobody will read the answer.
        let fits = if self.class.is_none() || self.f.keeps_fields() || self.keep_shown {
            self.pool.fits.fitting(&self.f.r, self.catalog)
        } else {
            Vec::new()
        };
        let names: Vec<String> = fits
            .iter()
            .map(|c| format!("{} ({})", c.display_name, c.species_id))
            .collect();
        if self.class.is_none() {
            let who = match self.species {
                Some(s) => format!("species {s} has no known layout"),
                None => "the ship's class is unknown".to_string(),
            };
            let fit = if names.is_empty() {
                "no known layout reads it exactly".to_string()
            } else {
                format!("layouts that read it exactly: {}", names.join(", "))
            };
            self.warn(
                Code::NoLayout,
                at,
                format!("subsystem block kept raw: {who}; {fit}"),
            );
        }
        let start_at = self.f.r.pos();
        let start = match self.f.u8(field!("subsystem_start")) {
            Ok(start) => {
                if self.keep_shown {
                    let field = Field::new(
                        field!("subsystem_start"),
                        Value::Uint(start.into()),
                        Span::new(start_at, start_at + 1),
                    );
                    self.shown().raw_block.push(field);
                }
                start
            }
            Err(_) => 0,
        };
        self.su.subsystem_start = Some(start);
        let mut shared_bits = Vec::new();
        for _ in 0..self.f.r.open_bits() {
            match self.f.r.bit("shared bit") {
                Ok(b) => shared_bits.push(b),
                Err(_) => break,
            }
        }
        let bytes_at = self.f.r.pos();
        let bytes = self.f.rest(field!("subsystem_block_raw"));
        if self.keep_shown && !bytes.is_empty() {
            let span = Span::new(bytes_at, bytes_at + bytes.len());
            let field = Field::new(
                field!("subsystem_block_raw"),
                Value::Bytes(bytes.to_vec()),
                span,
            );
            self.shown().raw_block.push(field);
        }
        let bytes = if self.keep_records {
            bytes.to_vec()
        } else {
            Vec::new()
        };
        let fits = Field::new(
            field!("fits_classes"),
            Value::List(names.into_iter().map(Value::Text).collect()),
            Span::new(at, at),
        );
        if self.keep_shown && !self.f.keeps_fields() {
            // Nobody takes the field but the typed value: moved there, not copied.
            self.shown().raw_block.push(fits);
        } else {
            if self.keep_shown {
                self.shown().raw_block.push(fits.clone());
            }
            self.f.push_field(fits);
        }
        if self.keep_records {
            self.su.subsystems = Some(SubsystemData::Raw {
                start,
                shared_bits,
                bytes,
            });
        }
    }

    fn power_block(&mut self) {
        let at = self.f.r.pos();
        let err = if self.keep_records {
            self.power_block_kept(at)
        } else {
            // The same pairs and warnings, none of them kept.
            let (class, warnings) = (self.class, &mut self.warnings);
            let mut k = 0;
            walk_power_block(&mut self.f.r, |p| {
                if let Some(Err(why)) = class.map(|c| power_entry(c, p.index)) {
                    warnings.push(Warning::new(Code::LayoutMismatch, Some(at + 2 * k), why));
                }
                k += 1;
            })
        };
        if let Some(e) = err {
            self.warn(Code::DecodeError, e.offset, e.to_string());
            self.rest(field!("power_block_trailing"));
        }
    }

    /// The power block's pairs read into the typed value (and its field, when wanted);
    /// the error that ended the block early, if any.
    fn power_block_kept(&mut self, at: usize) -> Option<Box<DecodeError>> {
        let (pairs, err) =
            read_power_block_into(&mut self.f.r, self.pool.power.pop().unwrap_or_default());
        if let Some(class) = self.class {
            for (k, p) in pairs.iter().enumerate() {
                if let Err(why) = power_entry(class, p.index) {
                    self.warn(Code::LayoutMismatch, at + 2 * k, why);
                }
            }
        }
        const POWER_BLOCK: FieldName = field!("power_block");
        if self.f.wants(POWER_BLOCK.id) {
            self.f.push_field(power_fields(&pairs, self.class, at));
        }
        self.su.power = Some(pairs);
        err
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::subsys::{plan_host_block, SubsystemRecord};
    use super::*;

    thread_local! {
        /// StateUpdates decoded on this thread: a test that a reader's message is
        /// decoded once counts them.
        pub(crate) static DECODES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    const SEED_001_EX1: [u8; 39] = [
        0x1C, 0xFF, 0xFF, 0xFF, 0x3F, 0x00, 0x80, 0xE1, 0x41, 0x9D, 0x00, 0x00, 0xB0, 0x42, 0x00,
        0x00, 0x84, 0xC2, 0x00, 0x00, 0x92, 0xC2, 0x21, 0x37, 0xFB, 0x0B, 0x68, 0x46, 0x30, 0xBB,
        0x5E, 0x00, 0x00, 0x01, 0xCC, 0x02, 0xCC, 0x04, 0xCC,
    ];
    const SEED_001_EX2: [u8; 25] = [
        0x1C, 0xFF, 0xFF, 0xFF, 0x3F, 0x00, 0xA0, 0x1B, 0x42, 0x20, 0x08, 0xFF, 0x60, 0xFF, 0xFF,
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    ];

    fn field<'m>(m: &'m GameMessage, name: &str) -> &'m Field {
        m.fields
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no field {name} in {:#?}", m.fields))
    }

    fn close(a: [f32; 3], b: [f32; 3]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 0.001)
    }

    /// A kept unfit-block text is given again only for the same class and the same
    /// error: a change in any one part of either gives that part's own text.
    #[test]
    fn unfit_texts_are_reused_only_for_what_they_say() {
        let cat = ShipCatalog::stock();
        let (a, b) = (&cat.classes()[0], &cat.classes()[1]);
        let error = DecodeError {
            offset: 19,
            field: "Shield Generator (shield) has-power-data bit".into(),
            expected: "packed-bit byte with count 1..5, got 0xff".into(),
            available: 2,
        };
        let mut variants = vec![(a, error.clone()), (b, error.clone())];
        let mut e = error.clone();
        e.offset = 20;
        variants.push((a, e));
        let mut e = error.clone();
        e.available = 3;
        variants.push((a, e));
        let mut e = error.clone();
        e.field = "Sensor Array (sensor) condition".into();
        variants.push((a, e));
        let mut e = error.clone();
        e.expected = "1 byte(s)".into();
        variants.push((a, e));
        let mut renamed = a.clone();
        renamed.display_name.push_str(" Refit");
        let mut texts = UnfitTexts::default();
        // Twice round, and more variants than slots the second time, so texts are
        // both found and replaced.
        for round in 0..2 {
            for (class, e) in &variants {
                assert_eq!(texts.text(class, e), unfit_text(class, e));
                assert_eq!(texts.text(&renamed, e), unfit_text(&renamed, e));
            }
            for k in 0..UnfitTexts::SLOTS * round {
                let mut e = error.clone();
                e.offset = 100 + k;
                assert_eq!(texts.text(a, &e), unfit_text(a, &e));
            }
        }
    }

    /// Decoding with storage from a pool that earlier, differently shaped updates
    /// were recycled into gives exactly what a fresh decode gives: no record, power
    /// pair, warning or field of an earlier message survives into a later one.
    #[test]
    fn pooled_decoding_equals_fresh_decoding() {
        let cat = ShipCatalog::stock();
        // Both seed examples (a power block; a subsystem block), every prefix of them
        // (the error paths), under a known class, another class and no class.
        let mut messages: Vec<(Vec<u8>, Option<u16>)> = Vec::new();
        for whole in [&SEED_001_EX1[..], &SEED_001_EX2[..]] {
            for len in (1..=whole.len()).rev() {
                for species in [Some(1), Some(5), None] {
                    messages.push((whole[..len].to_vec(), species));
                }
            }
        }
        for keep_fields in [false, true] {
            let mut pool = UpdatePool::new();
            // Forwards and then backwards, so that each shape is decoded into storage
            // left by both smaller and larger ones.
            for (msg, species) in messages.iter().chain(messages.iter().rev()) {
                let pooled = decode_reusing(msg, *species, &cat, keep_fields, &mut pool);
                let fresh = decode_with(msg, *species, &cat, keep_fields);
                assert_eq!(
                    pooled,
                    fresh,
                    "{} bytes, species {species:?}, fields {keep_fields}",
                    msg.len()
                );
                let mut pooled = pooled;
                if let Some(su) = pooled.take_state_update() {
                    pool.recycle(su);
                }
            }
            assert!(!pool.boxes.is_empty() && !pool.records.is_empty() && !pool.power.is_empty());
        }
    }

    // stateupdate.md §6 worked decode.
    #[test]
    fn seed_001_example_1_client_update() {
        let cat = ShipCatalog::stock();
        let m = decode(&SEED_001_EX1, Some(1), &cat);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        let su = m.state_update().unwrap();
        assert_eq!(su.object_id, 0x3FFF_FFFF);
        assert_eq!(su.game_time, 28.1875);
        assert_eq!(su.flags, 0x9D);
        assert_eq!(su.position, Some([88.0, -66.0, -73.0]));
        assert_eq!(su.integrity_hash, Some(0xFB37));
        assert_eq!(su.delta, None);
        assert!(close(su.forward.unwrap().vector(), [0.087, 0.819, 0.551]));
        assert!(close(su.up.unwrap().vector(), [0.378, -0.543, 0.740]));
        assert_eq!(su.speed, Some(Cf16(0)));
        assert_eq!(su.cloak, None);
        let pairs: Vec<(u8, u8)> = su
            .power
            .as_ref()
            .unwrap()
            .iter()
            .map(|p| (p.index, p.value))
            .collect();
        assert_eq!(pairs, [(1, 0xCC), (2, 0xCC), (4, 0xCC)]);
        assert_eq!(
            field(&m, "flag_names").value,
            Value::Text("POS+FWD+UP+SPD+WPN".into())
        );
        assert_eq!(field(&m, "hash_present").span, Span::new(22, 23));
        assert_eq!(field(&m, "integrity_hash").span, Span::new(23, 25));
        let names: Vec<String> = "power_block[*].name"
            .parse::<crate::game::path::FieldPath>()
            .unwrap()
            .resolve(&m.fields)
            .iter()
            .map(|v| match &**v {
                crate::game::field::Value::Text(t) => format!("{t:?}"),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            names,
            [
                "\"Shield Generator\"",
                "\"Sensor Array\"",
                "\"Impulse Engines\""
            ]
        );
        // Right = forward × up is a unit vector orthogonal to both.
        let r = su.right().unwrap();
        let len = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
        assert!((len - 1.0).abs() < 0.02, "{len}");
        assert_eq!(encode(su), SEED_001_EX1);
    }

    // stateupdate.md §5.5 worked decode.
    #[test]
    fn seed_001_example_2_host_block() {
        let cat = ShipCatalog::stock();
        let m = decode(&SEED_001_EX2, Some(1), &cat);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        let su = m.state_update().unwrap();
        assert_eq!(su.game_time, 38.90625);
        assert_eq!(su.flags, 0x20);
        assert_eq!(su.subsystem_start, Some(8));
        let Some(SubsystemData::Decoded(b)) = &su.subsystems else {
            panic!("{:?}", su.subsystems)
        };
        let idx: Vec<u8> = b.records.iter().map(|r| r.index).collect();
        assert_eq!(idx, [8, 9, 10, 0, 1]);
        let Value::List(g) = &field(&m, "subsystems").value else {
            panic!()
        };
        assert_eq!(
            field(&m, "subsystems_summary").value,
            Value::Text(
                "Engineering 100%, no power data; Tractors 100% (Forward Tractor 100%, \
                 Aft Tractor 100%), no power data; Bridge 100%; Hull 100%; Shield Generator \
                 100%, no power data, facings 100/100/100/100/100/100%"
                    .into()
            )
        );
        let tractors = "subsystems[tractors].condition_pct"
            .parse::<crate::game::path::FieldPath>()
            .unwrap()
            .resolve(&m.fields);
        assert_eq!(tractors.len(), 1);
        let Value::Group(rec) = &g[1] else { panic!() };
        let span = rec.iter().find(|f| f.name == "condition_pct").unwrap().span;
        assert_eq!(span, Span::new(13, 14));
        assert_eq!(encode(su), SEED_001_EX2);
    }

    #[test]
    fn unknown_class_is_resolved_by_trying_the_layouts() {
        let cat = ShipCatalog::stock();
        let m = decode(&SEED_001_EX2, None, &cat);
        let w = m
            .warnings
            .iter()
            .find(|w| w.code == Code::NoLayout)
            .unwrap();
        assert_eq!(w.offset, Some(10));
        // Not unique: Nebula has the Akira's wire structure, the Ambassador differs only
        // by Bridge/Tractors order and the Bird of Prey's list happens to produce the
        // same 14 bytes and 3 bits from index 8. No other stock class fits.
        let fits = &field(&m, "fits_classes").value;
        let want = [
            "Akira (1)",
            "Ambassador (2)",
            "Nebula (4)",
            "Bird of Prey (6)",
        ];
        assert_eq!(
            fits,
            &Value::List(want.iter().map(|s| Value::Text(s.to_string())).collect())
        );
        assert!(w.message.contains(&want.join(", ")), "{w}");
        let su = m.state_update().unwrap();
        assert!(matches!(
            su.subsystems,
            Some(SubsystemData::Raw { start: 8, .. })
        ));
        assert_eq!(encode(su), SEED_001_EX2);
        // A class whose layout does not fit: located mismatch, raw bytes kept.
        let m = decode(&SEED_001_EX2, Some(3), &cat);
        let w = m.warnings.iter().find(|w| w.code == Code::LayoutMismatch);
        assert!(w.is_some(), "{:?}", m.warnings);
        assert_eq!(
            field(&m, "subsystem_block_raw").value,
            Value::Bytes(SEED_001_EX2[11..].to_vec())
        );
        assert_eq!(encode(m.state_update().unwrap()), SEED_001_EX2);
    }

    #[test]
    fn bad_input_gives_located_warnings_not_panics() {
        let cat = ShipCatalog::stock();
        // Ends inside the Phasers record.
        let mut msg = SEED_001_EX2[..10].to_vec();
        msg.extend_from_slice(&[5, 0xFF, 0xFF, 0xFF]);
        let m = decode(&msg, Some(1), &cat);
        let w = m
            .warnings
            .iter()
            .find(|w| w.code == Code::LayoutUnfit)
            .unwrap();
        assert_eq!(w.offset, Some(12));
        assert!(m.fields.iter().any(|f| f.name == "subsystem_block_raw"));
        // Start index beyond the list.
        msg.truncate(10);
        msg.extend_from_slice(&[40, 0xFF]);
        let m = decode(&msg, Some(1), &cat);
        let w = m
            .warnings
            .iter()
            .find(|w| w.code == Code::LayoutMismatch)
            .unwrap();
        assert_eq!(w.offset, Some(10));
        // Truncated position.
        let m = decode(&SEED_001_EX1[..15], Some(1), &cat);
        assert_eq!(m.warnings[0].code, Code::DecodeError);
        assert_eq!(m.warnings[0].offset, Some(10));
        // Every prefix of both seeds decodes without panicking.
        for seed in [&SEED_001_EX1[..], &SEED_001_EX2[..]] {
            for n in 0..=seed.len() {
                for species in [None, Some(1), Some(3), Some(99)] {
                    let m = decode(&seed[..n], species, &cat);
                    // Every byte after the opcode is in some top-level field.
                    let mut covered = vec![false; n];
                    for f in &m.fields {
                        for b in f.span.start..f.span.end() {
                            if let Some(c) = covered.get_mut(b as usize) {
                                *c = true;
                            }
                        }
                    }
                    let gap = covered.iter().skip(1).position(|c| !c);
                    assert_eq!(gap, None, "{n} {species:?} {:#?}", m.fields);
                }
            }
        }
        assert!(decode(&[], None, &cat).state_update().is_none());
    }

    #[test]
    fn trailing_bytes_and_odd_power_blocks_are_reported() {
        let cat = ShipCatalog::stock();
        let mut msg = SEED_001_EX2[..9].to_vec();
        msg.extend_from_slice(&[0x10, 0x00, 0x00, 0xAB]);
        let m = decode(&msg, Some(1), &cat);
        assert_eq!(m.warnings[0].code, Code::TrailingBytes);
        assert_eq!(m.warnings[0].offset, Some(12));
        let mut msg = SEED_001_EX1.to_vec();
        msg.push(0x05);
        let m = decode(&msg, Some(1), &cat);
        assert_eq!(m.warnings[0].code, Code::DecodeError);
        assert_eq!(m.warnings[0].offset, Some(39));
        // 0x80 pair naming the Warp Core (not powered).
        let mut msg = SEED_001_EX1.to_vec();
        msg.extend_from_slice(&[3, 0xCC]);
        let m = decode(&msg, Some(1), &cat);
        assert_eq!(m.warnings[0].code, Code::LayoutMismatch);
        assert_eq!(m.warnings[0].offset, Some(39));
    }

    /// A StateUpdate with every field of `flags` set from the class layout.
    fn sample(class: &ShipClass, flags: u8) -> StateUpdate {
        let n = class.len();
        let owner = flags & 1 == 0;
        let mut su = StateUpdate {
            species: Some(class.species_id),
            object_id: 0x4000_0000 + flags as u32,
            game_time: flags as f32 * 0.5,
            flags,
            ..StateUpdate::default()
        };
        if flags & flag::POSITION != 0 {
            su.position = Some([1.5, -2.25, flags as f32]);
            su.integrity_hash = (flags & 0x08 != 0).then_some(0xFB37);
        }
        if flags & flag::DELTA != 0 {
            su.delta = Some(Delta::from_vector([3.0, -4.0, 0.5]));
        }
        if flags & flag::FORWARD != 0 {
            su.forward = Some(Dir3([0x0B, 0x68, 0x46]));
        }
        if flags & flag::UP != 0 {
            su.up = Some(Dir3([0x30, 0xBB, 0x5E]));
        }
        if flags & flag::SPEED != 0 {
            su.speed = Some(Cf16::from_value(-7.6));
        }
        if flags & flag::CLOAK != 0 {
            su.cloak = Some(flags & 0x02 != 0);
        }
        if flags & flag::SUBSYSTEMS != 0 {
            let start = flags as usize % n;
            let (block, _) = plan_host_block(class, start, su.bits_before_subsystems(), |i, e| {
                let mut r = SubsystemRecord::full(i as u8, e, (!owner).then_some(100 - i as u8));
                r.condition = 0xF0 - i as u8;
                r
            });
            su.subsystem_start = Some(block.start);
            su.subsystems = Some(SubsystemData::Decoded(block));
        }
        if flags & flag::POWER != 0 {
            su.power = Some(if flags & flag::SUBSYSTEMS != 0 {
                Vec::new()
            } else {
                (0..n)
                    .filter(|&i| class.subsystems[i].powered_type)
                    .take(3)
                    .map(|i| PowerSetting {
                        index: i as u8,
                        value: 0xCC,
                    })
                    .collect()
            });
        }
        su
    }

    #[test]
    fn every_flag_combination_round_trips_on_every_stock_class() {
        let cat = ShipCatalog::stock();
        for class in cat.classes() {
            for flags in 0..=255u8 {
                let su = sample(class, flags);
                let bytes = encode(&su);
                let m = decode(&bytes, Some(class.species_id), &cat);
                let unexpected: Vec<_> = m
                    .warnings
                    .iter()
                    .filter(|w| w.code != Code::BothBlocks)
                    .collect();
                assert!(
                    unexpected.is_empty(),
                    "{} {flags:#04x}: {unexpected:?}",
                    class.name
                );
                let back = m.state_update().unwrap();
                assert_eq!(back, &su, "{} {flags:#04x}", class.name);
                assert_eq!(encode(back), bytes);
            }
        }
    }

    /// Every field a decode hands to its visitor: registry entry, name, span; and the
    /// groups closed, by entry.
    #[derive(Default)]
    struct Recorder {
        fields: Vec<(crate::game::registry::FieldId, String, Value, Span)>,
        groups: Vec<crate::game::registry::FieldId>,
    }

    impl Visitor for Recorder {
        fn building(&self) -> bool {
            true
        }
        fn field(
            &mut self,
            id: crate::game::registry::FieldId,
            name: std::borrow::Cow<'static, str>,
            value: Value,
            span: Span,
        ) {
            self.fields.push((id, name.into_owned(), value, span));
        }
        fn begin(&mut self) -> crate::game::walk::Mark {
            0
        }
        fn end_group(
            &mut self,
            id: crate::game::registry::FieldId,
            _: std::borrow::Cow<'static, str>,
            _: crate::game::walk::Mark,
            _: Span,
        ) {
            self.groups.push(id);
        }
        fn end_list(
            &mut self,
            _: crate::game::registry::FieldId,
            _: std::borrow::Cow<'static, str>,
            _: crate::game::walk::Mark,
            _: Span,
        ) {
        }
        fn last_span(&self) -> Option<Span> {
            None
        }
        fn furthest_end(&self) -> Option<u32> {
            None
        }
    }

    /// Each member of a record's `children_pct` reaches the visitor on its own, with
    /// the one entry for every child, the layout's child key and the span of its
    /// condition byte: the byte there is the child's condition (`stateupdate.md` §5.2:
    /// one byte per child after the record's own condition), for every stock class.
    #[test]
    fn each_child_condition_reaches_the_visitor_with_its_entry_and_byte() {
        let cat = ShipCatalog::stock();
        let child = field!("subsystems.children_pct.child").id;
        let group = field!("subsystems.children_pct").id;
        let mut with_children = 0;
        for class in cat.classes() {
            let mut su = sample(class, flag::SUBSYSTEMS);
            let (block, _) = plan_host_block(class, 0, su.bits_before_subsystems(), |i, e| {
                let mut r = SubsystemRecord::full(i as u8, e, Some(100));
                // A distinct byte per child, so a span one byte off reads another.
                for (k, c) in r.children.iter_mut().enumerate() {
                    *c = (0x40 + 3 * i + k) as u8;
                }
                r
            });
            let want: Vec<(String, u8)> = block
                .records
                .iter()
                .flat_map(|r| {
                    let entry = class.entry(r.index as usize).unwrap();
                    r.children
                        .iter()
                        .enumerate()
                        .map(|(k, c)| (entry.children[k].key.clone(), *c))
                        .collect::<Vec<_>>()
                })
                .collect();
            su.subsystems = Some(SubsystemData::Decoded(block));
            let bytes = encode(&su);
            let mut rec = Recorder::default();
            let m = decode_walking(
                &bytes,
                Some(class.species_id),
                &cat,
                &mut rec,
                &mut UpdatePool::new(),
            );
            assert!(m.warnings.is_empty(), "{}: {:?}", class.name, m.warnings);
            let got: Vec<(String, u8)> = rec
                .fields
                .iter()
                .filter(|(id, ..)| *id == child)
                .map(|(_, name, value, span)| {
                    assert_eq!(span.len, 1, "{}: {name}", class.name);
                    let b = bytes[span.start as usize];
                    assert_eq!(*value, Value::Float(super::super::subsys::byte_pct(b)));
                    (name.clone(), b)
                })
                .collect();
            assert_eq!(got, want, "{}", class.name);
            let groups = rec.groups.iter().filter(|id| **id == group).count();
            let records = su_records_with_children(&su);
            assert_eq!(groups, records, "{}", class.name);
            with_children += records;
        }
        assert!(with_children > 0);
    }

    fn su_records_with_children(su: &StateUpdate) -> usize {
        match &su.subsystems {
            Some(SubsystemData::Decoded(b)) => {
                b.records.iter().filter(|r| !r.children.is_empty()).count()
            }
            _ => 0,
        }
    }

    // §3: with flags 0x41 the cloak bit is the second bit of the hash-flag byte.
    #[test]
    fn hash_flag_cloak_bit_and_power_bits_share_a_byte() {
        let cat = ShipCatalog::stock();
        let akira = cat.class(1).unwrap();
        let mut su = sample(akira, 0x61);
        su.cloak = Some(true);
        su.integrity_hash = None;
        let (block, _) = plan_host_block(akira, 8, su.bits_before_subsystems(), |i, e| {
            SubsystemRecord::full(i as u8, e, None)
        });
        su.subsystems = Some(SubsystemData::Decoded(block));
        su.subsystem_start = Some(8);
        let b = encode(&su);
        // Position ends at 22; the packed byte holds hash=0, cloak=1, then Engineering,
        // Tractors and Shield Generator power bits (all 0): five bits.
        assert_eq!(b[22], 0xA2);
        assert_eq!(b[23], 8);
        let m = decode(&b, Some(1), &cat);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        assert_eq!(m.state_update(), Some(&su));
        // Unknown class: the raw block keeps the bits it stored in that byte.
        let m = decode(&b, None, &cat);
        let raw = m.state_update().unwrap();
        assert!(
            matches!(&raw.subsystems, Some(SubsystemData::Raw { shared_bits, .. }) if shared_bits.len() == 3)
        );
        assert_eq!(encode(raw), b);
    }
}
