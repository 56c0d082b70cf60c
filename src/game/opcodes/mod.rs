//! Decoders and encoders for every game opcode (`opcodes.md`).
//!
//! Each family lives in its own module and offers typed values with a `parse` (which also
//! records the fields with their spans) and an `emit` (the exact bytes, opcode first).
//! [`decode`] is the single entry point used by the pipeline: it never fails and never
//! panics; what it cannot decode is reported as a located warning plus raw bytes.

mod body;
pub mod checksum;
mod common;
pub mod events;
pub mod lobby;
pub mod objects;
pub mod op;
pub mod script;
pub mod ship_layouts;
pub mod weapons;

#[cfg(test)]
pub(crate) mod test_util;

pub use body::Body;
pub use common::emit_raw;

use super::field::{Span, Value};
use super::message::GameMessage;
use super::objects::ObjectRegistry;
use super::reader::{DecodeError, DecodeResult, FieldReader};
use super::ships::ShipCatalog;
use super::stateupdate::{self, UpdatePool};
use super::walk::{EntrySet, Lean, Selective, TreeBuilder, Visitor};
use crate::diag::{Code, Warning};
use crate::game::registry::field;

/// Which messages get a field tree. Every decode gives the same opcode, name, length,
/// warnings and typed body; only `fields` differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldTrees {
    /// Every message.
    All,
    /// None: `fields` left empty (a lean decode).
    None,
    /// None, and a StateUpdate keeps no subsystem or power records: its block is
    /// still read to the end (the same warnings), and its flags and subsystem start
    /// are kept. For a reader that only counts (statistics); everything else in the
    /// typed values is as with [`FieldTrees::None`].
    Counts,
    /// Every message except a StateUpdate with a typed value, in one decode: one that
    /// warned keeps what its tree would show beyond its values in the value itself
    /// ([`StateUpdate::shown`](super::update::StateUpdate::shown)), so a writer
    /// writes every StateUpdate from its typed value (the JSON writers). A
    /// StateUpdate gets only its top-level fields of these names (those a selection
    /// reads), in the same pass.
    TypedStateUpdates(EntrySet),
    /// Every message, but only its top-level fields of these names (each whole): for a
    /// consumer that reads a few paths, built by [`Selective`] in the same one pass.
    Only(EntrySet),
}

impl FieldTrees {
    /// Whole trees for every message but a StateUpdate, which is read from its typed
    /// value: one that warned keeps in it what its tree would show.
    pub const TYPED_STATE_UPDATES: FieldTrees = FieldTrees::TypedStateUpdates(EntrySet::EMPTY);

    /// What two readers of the same records need together (a selection and the
    /// output it feeds): the named fields of both, else whole trees. A StateUpdate
    /// left without a tree for one gets the named fields of the other; more names
    /// than a few, whole trees.
    pub fn union(self, other: FieldTrees) -> FieldTrees {
        use FieldTrees::*;
        match (self, other) {
            // Counting needs the least: whatever the other reader needs covers it.
            (Counts, t) | (t, Counts) => t,
            (None, t) | (t, None) => t,
            (Only(a), Only(b)) => a.union(b).map_or(All, Only),
            (TypedStateUpdates(a), TypedStateUpdates(b) | Only(b))
            | (Only(b), TypedStateUpdates(a)) => a.union(b).map_or(All, TypedStateUpdates),
            _ => All,
        }
    }

    /// No message gets a field tree.
    pub fn builds_none(self) -> bool {
        matches!(self, FieldTrees::None | FieldTrees::Counts)
    }
}

/// What a decoder may consult besides the bytes: the session's objects and ship classes.
#[derive(Debug, Clone, Copy)]
pub struct DecodeContext<'a> {
    pub registry: &'a ObjectRegistry,
    pub catalog: &'a ShipCatalog,
    pub trees: FieldTrees,
}

impl<'a> DecodeContext<'a> {
    pub fn new(registry: &'a ObjectRegistry, catalog: &'a ShipCatalog) -> DecodeContext<'a> {
        DecodeContext {
            registry,
            catalog,
            trees: FieldTrees::All,
        }
    }

    /// The same context for a lean decode (no fields).
    pub fn lean(self) -> DecodeContext<'a> {
        self.with_trees(FieldTrees::None)
    }

    pub fn with_trees(self, trees: FieldTrees) -> DecodeContext<'a> {
        DecodeContext { trees, ..self }
    }
}

/// Names of all opcodes with a known meaning, indexed by opcode.
const NAMES: &[(u8, &str)] = &[
    (0x00, "Settings"),
    (0x01, "GameInit"),
    (0x02, "ObjCreate"),
    (0x03, "ObjCreateTeam"),
    (0x04, "BootPlayer"),
    (0x06, "PythonEvent"),
    (0x07, "StartFiring"),
    (0x08, "StopFiring"),
    (0x09, "StopFiringAtTarget"),
    (0x0A, "SubsystemStatus"),
    (0x0B, "AddToRepairList"),
    (0x0C, "ClientEvent"),
    (0x0D, "PythonEvent2"),
    (0x0E, "StartCloaking"),
    (0x0F, "StopCloaking"),
    (0x10, "StartWarp"),
    (0x11, "RepairListPriority"),
    (0x12, "SetPhaserLevel"),
    (0x13, "HostMsg"),
    (0x14, "DestroyObject"),
    (0x15, "CollisionEffect"),
    (0x16, "UICollisionSetting"),
    (0x17, "DeletePlayerUI"),
    (0x18, "DeletePlayerAnim"),
    (0x19, "TorpedoFire"),
    (0x1A, "BeamFire"),
    (0x1B, "TorpedoTypeChange"),
    (0x1C, "StateUpdate"),
    (0x1D, "ObjNotFound"),
    (0x1E, "RequestObject"),
    (0x1F, "EnterSet"),
    (0x20, "ChecksumRequest"),
    (0x21, "ChecksumResponse"),
    (0x22, "VersionMismatch"),
    (0x23, "SystemChecksumFail"),
    (0x25, "FileTransfer"),
    (0x27, "FileTransferAck"),
    (0x28, "ChecksumComplete"),
    (0x29, "Explosion"),
    (0x2A, "NewPlayerInGame"),
    (0x2C, "ChatMessage"),
    (0x2D, "TeamChatMessage"),
    (0x35, "MissionInit"),
    (0x36, "ScoreChange"),
    (0x37, "Score"),
    (0x38, "EndGame"),
    (0x39, "RestartGame"),
    (0x3F, "ScoreInit"),
    (0x40, "TeamScore"),
    (0x41, "TeamMessage"),
];

/// [`NAMES`] spread over all 256 opcodes, so the per-message lookup is one index.
const NAME_TABLE: [&str; 256] = {
    let mut t = ["Unknown"; 256];
    let mut i = 0;
    while i < NAMES.len() {
        t[NAMES[i].0 as usize] = NAMES[i].1;
        i += 1;
    }
    t
};

/// Human name of an opcode; `"Unknown"` for opcodes nobody has described.
pub fn opcode_name(op: u8) -> &'static str {
    NAME_TABLE[op as usize]
}

/// Every opcode with a known meaning and its name, in opcode order.
pub fn opcode_names() -> impl Iterator<Item = (u8, &'static str)> {
    NAMES.iter().copied()
}

/// Opcode for a name (case-insensitive), or a number written as `0x1C` / `28`.
pub fn opcode_from_name(name: &str) -> Option<u8> {
    let name = name.trim();
    if let Some((op, _)) = NAMES.iter().find(|(_, n)| n.eq_ignore_ascii_case(name)) {
        return Some(*op);
    }
    if let Some(hex) = name.strip_prefix("0x").or_else(|| name.strip_prefix("0X")) {
        return u8::from_str_radix(hex, 16).ok();
    }
    name.parse::<u8>().ok()
}

/// Decode one game message (opcode byte first).
pub fn decode(msg: &[u8], ctx: &DecodeContext) -> GameMessage {
    decode_reusing(msg, ctx, &mut UpdatePool::new())
}

/// [`decode`]; a StateUpdate is filled with storage taken from `spare` (typed values
/// of earlier messages nobody reads any more) instead of new allocations.
pub fn decode_reusing(msg: &[u8], ctx: &DecodeContext, spare: &mut UpdatePool) -> GameMessage {
    let Some(&op) = msg.first() else {
        return GameMessage {
            opcode: 0,
            name: "Empty",
            length: 0,
            fields: Vec::new(),
            warnings: vec![Warning::new(
                Code::DecodeError,
                Some(0),
                "empty game message: expected at least the opcode byte",
            )],
            body: None,
        };
    };
    if op == op::STATE_UPDATE {
        let species = object_id_at(msg, 1)
            .and_then(|id| ctx.registry.species(id))
            .map(u16::from);
        return decode_state_update(msg, species, ctx, spare);
    }
    if let FieldTrees::Only(names) = ctx.trees {
        let mut selective = Selective::new(names);
        let mut m = decode_body(op, msg, ctx, &mut selective);
        m.fields = selective.into_fields();
        return m;
    }
    // As in `stateupdate::decode_reusing`: the lean decode returns its message in place.
    if ctx.trees.builds_none() {
        return decode_body(op, msg, ctx, &mut Lean);
    }
    let mut tree = TreeBuilder::new();
    let mut m = decode_body(op, msg, ctx, &mut tree);
    m.fields = tree.into_fields();
    m
}

/// [`decode_reusing`], written into `slot`: a counting StateUpdate decode (the bulk of
/// what statistics decode) fills the slot itself rather than returning a message to
/// be copied into it.
pub fn decode_into(
    msg: &[u8],
    ctx: &DecodeContext,
    spare: &mut UpdatePool,
    slot: &mut Option<GameMessage>,
) {
    if msg.first() == Some(&op::STATE_UPDATE) && matches!(ctx.trees, FieldTrees::Counts) {
        let species = object_id_at(msg, 1)
            .and_then(|id| ctx.registry.species(id))
            .map(u16::from);
        stateupdate::decode_counting_into(msg, species, ctx.catalog, spare, slot);
    } else if msg.first() == Some(&op::STATE_UPDATE)
        && msg.len() >= stateupdate::HEADER_LEN
        && ctx.trees == FieldTrees::TYPED_STATE_UPDATES
    {
        // The JSON writers' StateUpdate: into the slot too.
        let species = object_id_at(msg, 1)
            .and_then(|id| ctx.registry.species(id))
            .map(u16::from);
        stateupdate::decode_shown_into(msg, species, ctx.catalog, spare, slot);
    } else {
        *slot = Some(decode_reusing(msg, ctx, spare));
    }
}

/// Decode a StateUpdate with the fields `ctx.trees` asks for. Each way returns the
/// decoder's message in place: the message is large, and moving it shows in a profile.
#[inline(always)]
fn decode_state_update(
    msg: &[u8],
    species: Option<u16>,
    ctx: &DecodeContext,
    spare: &mut UpdatePool,
) -> GameMessage {
    use FieldTrees::*;
    let catalog = ctx.catalog;
    match ctx.trees {
        Counts => stateupdate::decode_counting(msg, species, catalog, spare),
        None => stateupdate::decode_reusing(msg, species, catalog, false, spare),
        All => stateupdate::decode_reusing(msg, species, catalog, true, spare),
        // A message too short for a typed value has only its tree.
        TypedStateUpdates(_) if msg.len() < stateupdate::HEADER_LEN => {
            stateupdate::decode_reusing(msg, species, catalog, true, spare)
        }
        TypedStateUpdates(names) if names.is_empty() => {
            stateupdate::decode_shown(msg, species, catalog, &mut Lean, spare)
        }
        TypedStateUpdates(names) => {
            let mut selective = Selective::new(names);
            let mut m = stateupdate::decode_shown(msg, species, catalog, &mut selective, spare);
            m.fields = selective.into_fields();
            m
        }
        Only(names) => selective_state_update(msg, species, catalog, names, spare),
    }
}

/// A StateUpdate with only its top-level fields of `names`.
fn selective_state_update(
    msg: &[u8],
    species: Option<u16>,
    catalog: &ShipCatalog,
    names: EntrySet,
    spare: &mut UpdatePool,
) -> GameMessage {
    let mut selective = Selective::new(names);
    let mut m = stateupdate::decode_walking(msg, species, catalog, &mut selective, spare);
    m.fields = selective.into_fields();
    m
}

/// Decode a message other than a StateUpdate (opcode `op` first), handing its fields
/// to `visitor` in wire order: the message's own `fields` stay empty.
fn decode_body(op: u8, msg: &[u8], ctx: &DecodeContext, visitor: &mut dyn Visitor) -> GameMessage {
    let mut f = FieldReader::after_opcode(msg, visitor);
    let mut warnings = Vec::new();
    let (body, result) = parse_body(op, &mut f, &mut warnings, ctx.catalog);
    finish(op, msg, f, warnings, body, result)
}

fn object_id_at(msg: &[u8], at: usize) -> Option<u32> {
    let b = msg.get(at..at + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Dispatch to the family decoders; each reads the body with the shared reader and
/// returns its typed value. Creations and events keep what they read when a later part
/// fails (see [`Body`]); the error still goes to [`finish`].
fn parse_body(
    opcode: u8,
    f: &mut FieldReader,
    w: &mut Vec<Warning>,
    catalog: &ShipCatalog,
) -> (Option<Body>, DecodeResult<()>) {
    use op::*;
    fn typed<T>(
        r: DecodeResult<T>,
        wrap: impl FnOnce(T) -> Body,
    ) -> (Option<Body>, DecodeResult<()>) {
        match r {
            Ok(v) => (Some(wrap(v)), Ok(())),
            Err(e) => (None, Err(e)),
        }
    }
    match opcode {
        SETTINGS => typed(lobby::Settings::parse(f, w), Body::Settings),
        GAME_INIT | HOST_MSG | FILE_TRANSFER_ACK | CHECKSUM_COMPLETE | RESTART_GAME => {
            (Some(Body::Bare(opcode)), Ok(()))
        }
        OBJ_CREATE | OBJ_CREATE_TEAM => {
            let (c, r) = objects::ObjCreate::parse_keeping(opcode, f, w, catalog);
            (c.map(|c| Body::ObjCreate(Box::new(c))), r)
        }
        BOOT_PLAYER => typed(lobby::BootPlayer::parse(f), Body::BootPlayer),
        PYTHON_EVENT..=SET_PHASER_LEVEL
        | COLLISION_EFFECT
        | DELETE_PLAYER_UI
        | TORPEDO_TYPE_CHANGE => {
            let (e, r) = events::EventMessage::parse_keeping(opcode, f, w);
            (e.map(Body::Event), r)
        }
        DESTROY_OBJECT | OBJ_NOT_FOUND | REQUEST_OBJECT => {
            typed(lobby::ObjectMessage::parse(opcode, f), Body::Object)
        }
        UI_COLLISION_SETTING => typed(
            lobby::UiCollisionSetting::parse(f),
            Body::UiCollisionSetting,
        ),
        DELETE_PLAYER_ANIM => typed(lobby::DeletePlayerAnim::parse(f), Body::DeletePlayerAnim),
        TORPEDO_FIRE => typed(weapons::TorpedoFire::parse(f, w), Body::TorpedoFire),
        BEAM_FIRE => typed(weapons::BeamFire::parse(f, w), Body::BeamFire),
        ENTER_SET => typed(lobby::EnterSet::parse(f), Body::EnterSet),
        CHECKSUM_REQUEST => typed(checksum::ChecksumRequest::parse(f), Body::ChecksumRequest),
        CHECKSUM_RESPONSE => typed(checksum::ChecksumResponse::parse(f), Body::ChecksumResponse),
        VERSION_MISMATCH | SYSTEM_CHECKSUM_FAIL => {
            typed(checksum::ChecksumFail::parse(opcode, f), Body::ChecksumFail)
        }
        FILE_TRANSFER => typed(checksum::FileTransfer::parse(f), Body::FileTransfer),
        EXPLOSION => typed(weapons::Explosion::parse(f), Body::Explosion),
        NEW_PLAYER_IN_GAME => typed(lobby::NewPlayerInGame::parse(f), Body::NewPlayerInGame),
        CHAT_MESSAGE | TEAM_CHAT_MESSAGE => typed(script::Chat::parse(opcode, f), Body::Chat),
        MISSION_INIT => typed(script::MissionInit::parse(f), Body::MissionInit),
        SCORE_CHANGE => typed(script::ScoreChange::parse(f), Body::ScoreChange),
        SCORE => typed(script::Score::parse(f), Body::Score),
        END_GAME => typed(script::EndGame::parse(f), Body::EndGame),
        SCORE_INIT => typed(script::ScoreInit::parse(f), Body::ScoreInit),
        TEAM_SCORE => typed(script::TeamScore::parse(f), Body::TeamScore),
        TEAM_MESSAGE => typed(script::TeamMessage::parse(f), Body::TeamMessage),
        _ => {
            let body = unknown_body(f);
            (Some(Body::Unknown { opcode, body }), Ok(()))
        }
    }
}

/// An opcode without a known layout: the body as raw bytes and its length.
fn unknown_body(f: &mut FieldReader) -> Vec<u8> {
    let at = f.r.pos();
    let n = f.r.remaining();
    f.push_value(
        field!("byte_count"),
        Value::Uint(n as u64),
        Span::new(at, at),
    );
    f.rest(field!("raw")).to_vec()
}

/// Turn a decoder's result into a message: trailing bytes and failures become warnings
/// and raw fields, so every byte of the message is accounted for.
fn finish(
    op: u8,
    msg: &[u8],
    mut f: FieldReader,
    mut warnings: Vec<Warning>,
    body: Option<Body>,
    result: DecodeResult<()>,
) -> GameMessage {
    match result {
        Ok(()) => {
            let at = f.r.pos();
            let trailing = f.rest(field!("trailing"));
            if !trailing.is_empty() {
                warnings.push(Warning::new(
                    Code::TrailingBytes,
                    Some(at),
                    format!(
                        "{} byte(s) after the end of {}",
                        trailing.len(),
                        opcode_name(op)
                    ),
                ));
            }
        }
        Err(e) => {
            warnings.push(decode_error(&e));
            // A composite read may have consumed part of its bytes before failing; the
            // raw remainder starts where the last decoded field ended.
            let start = f
                .furthest_end()
                .map_or(1, |end| end as usize)
                .clamp(1, msg.len());
            if start < msg.len() {
                f.push_value(
                    field!("undecoded"),
                    Value::Bytes(msg[start..].to_vec()),
                    Span::new(start, msg.len()),
                );
            }
        }
    }
    GameMessage {
        opcode: op,
        name: opcode_name(op),
        length: msg.len(),
        fields: Vec::new(),
        warnings,
        body,
    }
}

fn decode_error(e: &DecodeError) -> Warning {
    Warning::new(
        Code::DecodeError,
        Some(e.offset),
        format!(
            "{}: expected {}, {} byte(s) left",
            e.field, e.expected, e.available
        ),
    )
}

#[cfg(test)]
mod tests;
