//! Qualified field names: a decoded field named by where it lives, as Wireshark
//! qualifies a field by its protocol (`udp.port`, `ip.src`).
//!
//! The rule. A decoded field's name is its path (`crate::game::registry`). Where one path
//! means different things under different messages (`flags` of a StateUpdate, a
//! TorpedoFire and a BeamFire) or is also a record fact (`peer_id`, `text`, `name`,
//! `direction`, `object_id`), each meaning also has a qualified name: the message's
//! qualifier, a dot, the path (`stateupdate.flags`, `score.peer_id`). The qualifier is
//! the opcode's name in lower case (`stateupdate`, `torpedofire`, `chatmessage`), `event`
//! for the serialized events (0x06–0x12, 0x15, 0x17, 0x1B, whose class id rather than
//! opcode selects the tail), or a connection-management type (`peer_info`, `connect`,
//! `boot`, `disconnect`). Any field may be qualified (`stateupdate.position.x`); the
//! table below lists the qualified names that tell apart what a bare name cannot. A bare
//! name that several messages share stands for all of them, as Wireshark's `udp.port`
//! stands for either port; a bare name that is a record fact is the fact.

use super::registry::{lookup, FieldType, GameField, EVENT_OPCODES};
use crate::transport::low::LowKind;

/// What a qualifier names: the messages a qualified field is looked for in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One game opcode.
    Opcode(u8),
    /// The serialized events.
    Events,
    /// One connection-management type.
    Low(LowKind),
}

/// Every connection-management type, for their qualifiers.
const LOW_KINDS: [LowKind; 6] = [
    LowKind::PeerInfo,
    LowKind::Type02,
    LowKind::Connect,
    LowKind::Boot,
    LowKind::Disconnect,
    LowKind::ShortDisconnect,
];

/// The qualifier of the serialized events.
const EVENTS: &str = "event";

impl Scope {
    /// The scope a qualifier names (case-insensitive), if any.
    pub fn parse(qualifier: &str) -> Option<Scope> {
        if qualifier.eq_ignore_ascii_case(EVENTS) {
            return Some(Scope::Events);
        }
        if let Some(k) = LOW_KINDS
            .iter()
            .find(|k| k.name().eq_ignore_ascii_case(qualifier))
        {
            return Some(Scope::Low(*k));
        }
        super::opcodes::opcode_names()
            .find(|(_, n)| n.eq_ignore_ascii_case(qualifier))
            .map(|(op, _)| Scope::Opcode(op))
    }

    /// Whether a game message of this opcode is in the scope.
    pub fn holds_opcode(self, opcode: u8) -> bool {
        match self {
            Scope::Opcode(op) => op == opcode,
            Scope::Events => EVENT_OPCODES.contains(&opcode),
            Scope::Low(_) => false,
        }
    }

    /// Whether a connection-management message of this type is in the scope.
    pub fn holds_low(self, kind: &str) -> bool {
        matches!(self, Scope::Low(k) if k.name() == kind)
    }

    /// Whether a registry entry can come with a message of this scope.
    fn carries(self, entry: &GameField) -> bool {
        match self {
            Scope::Low(_) => entry.opcodes.is_empty() || entry.description.contains("Transport: "),
            _ => entry.opcodes.iter().any(|op| self.holds_opcode(*op)),
        }
    }
}

/// The qualifier of a game opcode's fields (`stateupdate` for 0x1C), if it has a name.
pub fn opcode_qualifier(opcode: u8) -> Option<String> {
    super::opcodes::opcode_names()
        .find(|(op, _)| *op == opcode)
        .map(|(_, n)| n.to_ascii_lowercase())
}

/// A name split into its qualifier's scope and the field path after it, when its first
/// segment is a qualifier. (No group, list or vector field is named like a qualifier, so
/// a path's first segment is never mistaken for one; a test keeps it so.)
pub fn split(name: &str) -> Option<(Scope, &str)> {
    let (first, rest) = name.split_once('.')?;
    let scope = Scope::parse(first)?;
    (!rest.is_empty()).then_some((scope, rest))
}

/// The entry a qualified name stands for: its own entry in [`QUALIFIED`], else the
/// registry entry of its path when a message of its scope can carry that field.
pub fn lookup_qualified(name: &str) -> Option<&'static GameField> {
    if let Ok(i) = QUALIFIED.binary_search_by(|f| f.name.cmp(name)) {
        return Some(&QUALIFIED[i]);
    }
    let (scope, path) = split(name)?;
    let entry = lookup(path)
        .or_else(|| path.strip_suffix("_hex").and_then(lookup))
        .filter(|e| scope.carries(e))?;
    Some(entry)
}

/// The qualified entry that names a registered field (`flags`) in a message of this
/// opcode or connection-management type, when the registry's bare name needs one
/// (`stateupdate.flags` for a StateUpdate's).
pub fn entry_for(
    registry_name: &str,
    opcode: Option<u8>,
    low: Option<&str>,
) -> Option<&'static GameField> {
    QUALIFIED.iter().find(|e| {
        split(e.name).is_some_and(|(scope, path)| {
            path == registry_name
                && (opcode.is_some_and(|op| scope.holds_opcode(op))
                    || low.is_some_and(|k| scope.holds_low(k)))
        })
    })
}

/// The meanings of names that several messages share or that a record fact takes, one
/// entry each (sorted by name). Descriptions come from the registry entries they split.
pub const QUALIFIED: &[GameField] = &[
    q(
        "beamfire.direction",
        FieldType::Vec3,
        "",
        "BeamFire: direction to the hit point, cv3 unit vector",
        &[0x1A],
    ),
    q(
        "beamfire.direction.x",
        FieldType::Float,
        "",
        "x component of `beamfire.direction`",
        &[0x1A],
    ),
    q(
        "beamfire.direction.y",
        FieldType::Float,
        "",
        "y component of `beamfire.direction`",
        &[0x1A],
    ),
    q(
        "beamfire.direction.z",
        FieldType::Float,
        "",
        "z component of `beamfire.direction`",
        &[0x1A],
    ),
    q(
        "beamfire.flags",
        FieldType::Hex,
        "",
        "BeamFire flags (which bit means target present is disputed)",
        &[0x1A],
    ),
    q(
        "beamfire.flags_hex",
        FieldType::Text,
        "",
        "(JSON twin) `beamfire.flags` as 0x-prefixed hex text",
        &[0x1A],
    ),
    q(
        "chatmessage.text",
        FieldType::Text,
        "",
        "ChatMessage: the message text",
        &[0x2C],
    ),
    q(
        "disconnect.peer_id",
        FieldType::Hex,
        "",
        "Transport: peer id of a disconnect (0x05) message",
        &[],
    ),
    q(
        "disconnect.peer_id_hex",
        FieldType::Text,
        "",
        "Transport: (JSON twin) `disconnect.peer_id` as 0x-prefixed hex text",
        &[],
    ),
    q(
        "enterset.set_name",
        FieldType::Text,
        "",
        "EnterSet: the star-system set the object enters",
        &[0x1F],
    ),
    q(
        "event.class_id",
        FieldType::Hex,
        "",
        "Serialized event: class id, which selects the event tail",
        EVENT_OPCODES,
    ),
    q(
        "event.class_id_hex",
        FieldType::Text,
        "",
        "(JSON twin) `event.class_id` as 0x-prefixed hex text",
        EVENT_OPCODES,
    ),
    q(
        "event.peer_id",
        FieldType::Uint,
        "",
        "Player-list event tail (stock 0x17 DeletePlayerUI): the player's peer id (u8)",
        EVENT_OPCODES,
    ),
    q(
        "event.set_name",
        FieldType::Text,
        "",
        "Start-warp event: the warp destination set",
        EVENT_OPCODES,
    ),
    q(
        "event.speed",
        FieldType::Float,
        "",
        "Start-warp event: warp speed (f32)",
        EVENT_OPCODES,
    ),
    q(
        "objcreate.class_id",
        FieldType::Hex,
        "",
        "ObjCreate: serialized object class id, 0x8008 ship or station, 0x8009 torpedo",
        &[0x02],
    ),
    q(
        "objcreate.class_id_hex",
        FieldType::Text,
        "",
        "(JSON twin) `objcreate.class_id` as 0x-prefixed hex text",
        &[0x02],
    ),
    q(
        "objcreate.set_name",
        FieldType::Text,
        "",
        "ObjCreate: the star-system set the created ship is in",
        &[0x02],
    ),
    q(
        "objcreateteam.class_id",
        FieldType::Hex,
        "",
        "ObjCreateTeam: serialized object class id, 0x8008 ship or station, 0x8009 torpedo",
        &[0x03],
    ),
    q(
        "objcreateteam.class_id_hex",
        FieldType::Text,
        "",
        "(JSON twin) `objcreateteam.class_id` as 0x-prefixed hex text",
        &[0x03],
    ),
    q(
        "objcreateteam.set_name",
        FieldType::Text,
        "",
        "ObjCreateTeam: the star-system set the created ship is in",
        &[0x03],
    ),
    q(
        "peer_info.name",
        FieldType::Text,
        "",
        "Transport: player name of a peer-info message (0x00), UTF-16LE on the wire",
        &[],
    ),
    q(
        "peer_info.peer_id",
        FieldType::Hex,
        "",
        "Transport: peer id of a peer-info (0x00) message",
        &[],
    ),
    q(
        "peer_info.peer_id_hex",
        FieldType::Text,
        "",
        "Transport: (JSON twin) `peer_info.peer_id` as 0x-prefixed hex text",
        &[],
    ),
    q(
        "score.kills",
        FieldType::Int,
        "",
        "SCORE: the player's kills",
        &[0x37],
    ),
    q(
        "score.peer_id",
        FieldType::Int,
        "",
        "SCORE: the player's peer id (i32)",
        &[0x37],
    ),
    q(
        "score.score",
        FieldType::Int,
        "",
        "SCORE: the player's score",
        &[0x37],
    ),
    q(
        "scoreinit.kills",
        FieldType::Int,
        "",
        "SCORE_INIT: the player's kills",
        &[0x3F],
    ),
    q(
        "scoreinit.peer_id",
        FieldType::Int,
        "",
        "SCORE_INIT: the player's peer id (i32)",
        &[0x3F],
    ),
    q(
        "scoreinit.score",
        FieldType::Int,
        "",
        "SCORE_INIT: the player's score",
        &[0x3F],
    ),
    q(
        "settings.game_time",
        FieldType::Float,
        "s",
        "Settings: the host's game clock",
        &[0x00],
    ),
    q(
        "stateupdate.flags",
        FieldType::Hex,
        "",
        "StateUpdate dirty flags (which fields follow)",
        &[0x1C],
    ),
    q(
        "stateupdate.flags_hex",
        FieldType::Text,
        "",
        "(JSON twin) `stateupdate.flags` as 0x-prefixed hex text",
        &[0x1C],
    ),
    q(
        "stateupdate.game_time",
        FieldType::Float,
        "s",
        "StateUpdate: the sender's game clock",
        &[0x1C],
    ),
    q(
        "stateupdate.speed",
        FieldType::Float,
        "",
        "StateUpdate flag 0x10: speed along the velocity, negative while reversing (cf16)",
        &[0x1C],
    ),
    q(
        "teamchatmessage.text",
        FieldType::Text,
        "",
        "TeamChatMessage: the message text",
        &[0x2D],
    ),
    q(
        "teammessage.peer_id",
        FieldType::Int,
        "",
        "TEAM_MESSAGE: the player's peer id (i32)",
        &[0x41],
    ),
    q(
        "teamscore.kills",
        FieldType::Int,
        "",
        "TEAM_SCORE: the team's kills",
        &[0x40],
    ),
    q(
        "teamscore.score",
        FieldType::Int,
        "",
        "TEAM_SCORE: the team's score",
        &[0x40],
    ),
    q(
        "torpedofire.direction",
        FieldType::Vec3,
        "",
        "TorpedoFire: launch direction, cv3 unit vector",
        &[0x19],
    ),
    q(
        "torpedofire.direction.x",
        FieldType::Float,
        "",
        "x component of `torpedofire.direction`",
        &[0x19],
    ),
    q(
        "torpedofire.direction.y",
        FieldType::Float,
        "",
        "y component of `torpedofire.direction`",
        &[0x19],
    ),
    q(
        "torpedofire.direction.z",
        FieldType::Float,
        "",
        "z component of `torpedofire.direction`",
        &[0x19],
    ),
    q(
        "torpedofire.flags",
        FieldType::Hex,
        "",
        "TorpedoFire flags (bit 2 set = no target)",
        &[0x19],
    ),
    q(
        "torpedofire.flags_hex",
        FieldType::Text,
        "",
        "(JSON twin) `torpedofire.flags` as 0x-prefixed hex text",
        &[0x19],
    ),
];

const fn q(
    name: &'static str,
    ty: FieldType,
    unit: &'static str,
    description: &'static str,
    opcodes: &'static [u8],
) -> GameField {
    GameField {
        name,
        ty,
        unit,
        description,
        opcodes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::registry::GAME_FIELDS;

    #[test]
    fn qualified_names_are_sorted_and_each_a_registered_field_of_its_scope() {
        assert!(QUALIFIED.windows(2).all(|w| w[0].name < w[1].name));
        for f in QUALIFIED {
            let (scope, path) = split(f.name).unwrap_or_else(|| panic!("{}", f.name));
            let base = lookup(path)
                .or_else(|| path.strip_suffix("_hex").and_then(lookup))
                .unwrap_or_else(|| panic!("{}: no registered {path}", f.name));
            assert!(scope.carries(base), "{}", f.name);
            if let Scope::Low(_) = scope {
                assert!(f.description.starts_with("Transport: "), "{}", f.name);
            } else {
                assert!(
                    f.opcodes.iter().all(|op| scope.holds_opcode(*op)),
                    "{}",
                    f.name
                );
                assert!(base.opcodes.iter().any(|op| f.opcodes.contains(op)));
            }
        }
    }

    #[test]
    fn no_field_path_starts_with_a_qualifier() {
        for f in GAME_FIELDS {
            let first = f.name.split('.').next().unwrap();
            assert!(
                !f.name.contains('.') || Scope::parse(first).is_none(),
                "{} starts with a qualifier",
                f.name
            );
        }
    }

    #[test]
    fn qualifiers_name_opcodes_events_and_low_types() {
        assert_eq!(Scope::parse("stateupdate"), Some(Scope::Opcode(0x1C)));
        assert_eq!(Scope::parse("StateUpdate"), Some(Scope::Opcode(0x1C)));
        assert_eq!(Scope::parse("event"), Some(Scope::Events));
        assert_eq!(
            Scope::parse("peer_info"),
            Some(Scope::Low(LowKind::PeerInfo))
        );
        assert_eq!(Scope::parse("subsystems"), None);
        assert_eq!(
            split("score.peer_id"),
            Some((Scope::Opcode(0x37), "peer_id"))
        );
        assert!(lookup_qualified("stateupdate.position.x").is_some());
        assert!(lookup_qualified("stateupdate.launcher").is_none());
        assert!(lookup_qualified("torpedofire.flags_hex").is_some());
        assert_eq!(
            entry_for("flags", Some(0x19), None).map(|e| e.name),
            Some("torpedofire.flags")
        );
        assert_eq!(
            entry_for("class_id", Some(0x10), None).map(|e| e.name),
            Some("event.class_id")
        );
        assert_eq!(
            entry_for("peer_id", None, Some("peer_info")).map(|e| e.name),
            Some("peer_info.peer_id")
        );
        assert!(entry_for("position", Some(0x1C), None).is_none());
    }
}
