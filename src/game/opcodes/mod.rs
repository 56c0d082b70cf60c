//! Decoders and encoders for every game opcode (`opcodes.md`).
//!
//! Each family lives in its own module and offers typed values with a `parse` (which also
//! records the fields with their spans) and an `emit` (the exact bytes, opcode first).
//! [`decode`] is the single entry point used by the pipeline: it never fails and never
//! panics; what it cannot decode is reported as a located warning plus raw bytes.

mod body;
pub mod checksum;
pub mod events;
pub mod lobby;
pub mod objects;
pub mod op;
pub mod script;
pub mod ship_layouts;
pub mod weapons;

pub use body::Body;

use super::field::{Field, Span, Value};
use super::message::GameMessage;
use super::objects::ObjectRegistry;
use super::reader::{DecodeError, DecodeResult, FieldReader};
use super::ships::ShipCatalog;
use super::stateupdate::{self, UpdatePool};
use crate::diag::{Code, Warning};

/// Which messages get a field tree. Every decode gives the same opcode, name, length,
/// warnings and typed body; only `fields` differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldTrees {
    /// Every message.
    All,
    /// None: `fields` left empty (a lean decode).
    None,
    /// Every message except a StateUpdate that decodes without a warning: its typed
    /// value says all its fields would, and StateUpdates are most of a capture.
    /// One with a warning (a raw block, trailing bytes …) is decoded again with its
    /// tree, which holds what the typed value cannot.
    ExceptCleanStateUpdates,
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
        let all = ctx.trees == FieldTrees::All;
        let m = stateupdate::decode_reusing(msg, species, ctx.catalog, all, spare);
        if ctx.trees != FieldTrees::ExceptCleanStateUpdates || m.warnings.is_empty() {
            return m;
        }
        let mut m = m;
        if let Some(su) = m.take_state_update() {
            spare.recycle(su);
        }
        return stateupdate::decode_reusing(msg, species, ctx.catalog, true, spare);
    }
    let mut f = if ctx.trees != FieldTrees::None {
        FieldReader::after_opcode(msg)
    } else {
        FieldReader::after_opcode_lean(msg)
    };
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

/// Encoder for opcodes without a known layout (0x05, 0x24, 0x26, unknown script
/// messages) and for replaying bytes as they are: the opcode, then the body.
pub fn emit_raw(opcode: u8, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + body.len());
    v.push(opcode);
    v.extend_from_slice(body);
    v
}

/// An opcode without a known layout: the body as raw bytes and its length.
fn unknown_body(f: &mut FieldReader) -> Vec<u8> {
    let at = f.r.pos();
    let n = f.r.remaining();
    f.push_field(Field::new(
        "byte_count",
        Value::Uint(n as u64),
        Span::new(at, at),
    ));
    f.rest("raw").to_vec()
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
            let trailing = f.rest("trailing");
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
                .fields
                .iter()
                .map(|x| x.span.end() as usize)
                .max()
                .unwrap_or(1)
                .clamp(1, msg.len());
            if start < msg.len() {
                f.push_field(Field::new(
                    "undecoded",
                    Value::Bytes(msg[start..].to_vec()),
                    Span::new(start, msg.len()),
                ));
            }
        }
    }
    GameMessage {
        opcode: op,
        name: opcode_name(op),
        length: msg.len(),
        fields: f.fields,
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

/// A `non_stock` warning: the bytes are readable but differ from what stock peers send.
pub(crate) fn non_stock(offset: usize, message: impl Into<String>) -> Warning {
    Warning::new(Code::NonStock, Some(offset), message.into())
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;

    /// Decode with an empty registry and the stock catalog.
    pub fn decode_plain(msg: &[u8]) -> GameMessage {
        let registry = ObjectRegistry::default();
        let catalog = ShipCatalog::stock();
        decode(msg, &DecodeContext::new(&registry, &catalog))
    }

    pub fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("test hex"))
            .collect()
    }

    /// The value of the first top-level field called `name`.
    pub fn field<'m>(m: &'m GameMessage, name: &str) -> &'m Value {
        &m.fields
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no field {name} in {:?}", m.fields))
            .value
    }

    /// No warnings, and the fields' spans cover every body byte without overlap gaps.
    pub fn assert_clean(m: &GameMessage) {
        assert!(m.warnings.is_empty(), "warnings: {:?}", m.warnings);
        let end = m.fields.iter().map(|f| f.span.end()).max().unwrap_or(1);
        assert_eq!(end as usize, m.length.max(1), "fields: {:?}", m.fields);
    }

    pub fn has_warning(m: &GameMessage, code: Code) -> bool {
        m.warnings.iter().any(|w| w.code == code)
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;
    use super::*;
    use crate::diag::Code;

    #[test]
    fn names_and_lookup_agree() {
        for (op, name) in NAMES {
            assert_eq!(opcode_name(*op), *name);
            assert_eq!(opcode_from_name(&name.to_lowercase()), Some(*op));
        }
        assert_eq!(opcode_name(0x05), "Unknown");
        assert_eq!(opcode_from_name("0x1c"), Some(0x1C));
        assert_eq!(opcode_from_name("28"), Some(28));
        assert_eq!(opcode_from_name("nonsense"), None);
    }

    #[test]
    fn unknown_opcode_is_raw_bytes_and_count() {
        let m = decode_plain(&[0xCD, 1, 2, 3]);
        assert_eq!(m.name, "Unknown");
        assert_eq!(field(&m, "byte_count"), &Value::Uint(3));
        assert_eq!(field(&m, "raw"), &Value::Bytes(vec![1, 2, 3]));
        assert!(m.warnings.is_empty());
    }

    // One clean vector per named opcode ("c" = captured in the openbc sessions, "k" =
    // constructed here); the family modules check the typed round trips.
    #[test]
    fn every_named_opcode_has_a_clean_vector() {
        let vectors = [
            ("c", "000c022b3e610025004d756c7469706c617965722e457069736f64652e4d697373696f6e312e4d697373696f6e31"),
            ("c", "01"),
            ("k", "0201 09800000 10000440 02 010203"),
            ("c", "03000208800000ffffff3f010000b042000084c2000092c2f54a6f3ffe8c963e84e34b3e38784e3c00000000000000054361647932064d756c746931ffff64ffffffffffffff64ffffffffffff64ffffffffffffffffff646001ffffff64ffffffffffffff6400ff64ffffff6401ff"),
            ("k", "0402"),
            ("c", "0601010000df008000000000401a000040"),
            ("c", "0728810000d800800000000000050000400000000000000000"),
            ("k", "0801010000da00800000000000050000 40"),
            ("k", "090c010000dc00800000000000050000 40ffff0340"),
            ("k", "0a04010000 6c008000 00000000 05000040 01"),
            ("k", "0b01010000df008000 00000000 05000040"),
            ("k", "0c02000000 00000000 00000000 00000000"),
            ("k", "0d0c010000580080000000000005000040ffff0340"),
            ("k", "0e02000000e2008000 00000000 05000040"),
            ("k", "0f02000000e4008000 00000000 05000040"),
            ("k", "102a810000ec0080000000000005000040 064d756c746932 0000803f 000000c0 00006040 00001041"),
            ("k", "110c010000760080000000000005000040 07000040"),
            ("c", "1205010000e0008000000000000500004000"),
            ("c", "13"),
            ("c", "14ffffff3f"),
            ("c", "15248100005000800000000000ffff034001277711b89d472544"),
            ("k", "1621"),
            ("c", "1766080000f100800000000000ffffff3f02"),
            ("c", "1805004361647932"),
            ("k", "1910000040020100 7f00 ffff0340 7f000040"),
            ("c", "1affff03400100007f02ffff0740"),
            ("k", "1b05010000fe008000ffffff3f0500004003"),
            ("k", "1d01000000"),
            ("k", "1effff0340"),
            ("k", "1fffffff3f060000004d756c74693100"),
            ("c", "20000800736372697074732f07004170702e70796320"),
            ("c", "210215d331b8010067800f8d8fa1a71d01a48d1ac50100c49167e4ef55c14700"),
            ("k", "22 0700 4170702e707963"),
            ("k", "23 0700 4170702e707963"),
            ("k", "25 0500 612e707963 010203"),
            ("k", "27"),
            ("c", "28"),
            ("c", "29ffff0740214365df54aa52e360"),
            ("c", "2a20"),
            ("c", "2c0100000002006767"),
            ("k", "2d030000000200676f"),
            ("c", "350801ffff"),
            ("c", "3600000000020000000100000000"),
            ("c", "3702000000000000000000000000000000"),
            ("k", "3802000000"),
            ("k", "39"),
            ("k", "3f 02000000 01000000 00000000 0a000000 01"),
            ("k", "40 01 03000000 1e000000"),
            ("k", "41 04000000 00"),
        ];
        let mut covered = std::collections::BTreeSet::new();
        for (_, s) in vectors {
            let bytes = hex(s);
            let m = decode_plain(&bytes);
            assert_ne!(m.name, "Unknown", "{s}");
            assert_clean(&m);
            // The typed body is the whole message: emitting it gives the bytes back.
            let body = m
                .body
                .as_ref()
                .unwrap_or_else(|| panic!("no typed body: {s}"));
            assert_eq!(body.emit(), bytes, "{s}");
            covered.insert(bytes[0]);
        }
        for (op, name) in NAMES {
            assert!(*op == 0x1C || covered.contains(op), "no vector for {name}");
        }
        assert_eq!(emit_raw(0x24, &[1, 2]), vec![0x24, 1, 2]);
    }

    #[test]
    fn unknown_opcodes_and_damaged_creations_keep_their_bytes_typed() {
        let m = decode_plain(&[0xCD, 1, 2, 3]);
        assert_eq!(
            m.body,
            Some(Body::Unknown {
                opcode: 0xCD,
                body: vec![1, 2, 3]
            })
        );
        // A ship creation cut inside its subsystem blob: still the player's ship,
        // and the typed value still emits every byte.
        let akira = hex("03000208800000ffffff3f010000b042000084c2000092c2f54a6f3ffe8c963e84e34b3e38784e3c00000000000000054361647932064d756c746931ffff64ffffffffffffff64ffffffffffff64ffffffffffffffffff646001ffffff64ffffffffffffff6400ff64ffffff6401ff");
        for cut in [60, 80, akira.len() - 1] {
            let m = decode_plain(&akira[..cut]);
            assert!(has_warning(&m, Code::DecodeError), "cut {cut}");
            let Some(Body::ObjCreate(c)) = &m.body else {
                panic!("cut {cut}: {:?}", m.body)
            };
            assert_eq!(c.object_id, 0x3FFF_FFFF);
            assert_eq!(c.ship().map(|s| s.player_name.as_str()), Some("Cady2"));
            assert_eq!(c.emit(), &akira[..cut]);
        }
        // An exploding event whose tail is cut still names the ship.
        let boom = hex("06298100004e00800000000000ffffff3f0000000000001841");
        let m = decode_plain(&boom[..20]);
        assert!(has_warning(&m, Code::DecodeError));
        let body = m.body.as_ref().expect("typed event");
        assert_eq!(body.exploding_object(), Some(0x3FFF_FFFF));
        assert_eq!(body.emit(), &boom[..20]);
    }

    #[test]
    fn empty_message_is_a_warning_not_a_panic() {
        let m = decode_plain(&[]);
        assert!(has_warning(&m, Code::DecodeError));
    }

    #[test]
    fn state_update_goes_to_its_decoder() {
        let m = decode_plain(&hex("1cffffff3fcccc4c3e2000ffffff20ffffffffffff20"));
        assert_eq!(m.opcode, 0x1C);
        assert_eq!(m.name, "StateUpdate");
    }

    // Every opcode, every truncation: never a panic, always a located warning or a
    // clean decode, and the bytes are all accounted for.
    #[test]
    fn truncations_never_panic_and_keep_every_byte() {
        let samples = [
            "000c022b3e610025004d756c7469706c617965722e457069736f64652e4d697373696f6e312e4d697373696f6e31",
            "03000208800000ffffff3f010000b042000084c2000092c2f54a6f3ffe8c963e84e34b3e38784e3c00000000000000054361647932064d756c746931ffff64ffffffffffffff64ffffffffffff64ffffffffffffffffff646001ffffff64ffffffffffffff6400ff64ffffff6401ff",
            "06298100004e00800000000000ffffff3f0000000000001841",
            "15248100005000800000000000ffff034001277711b89d472544",
            "210215d331b8010067800f8d8fa1a71d01a48d1ac50100c49167e4ef55c14700",
            "3600000000020000000100000000",
            "29ffff0740214365df54aa52e360",
        ];
        for s in samples {
            let full = hex(s);
            for cut in 1..full.len() {
                let m = decode_plain(&full[..cut]);
                let covered: u32 = m.fields.iter().map(|f| f.span.end()).max().unwrap_or(1);
                assert_eq!(covered as usize, cut, "{s} cut {cut}: {:?}", m.fields);
                assert!(m.warnings.iter().all(|w| w.offset.is_some()));
            }
        }
    }
}
