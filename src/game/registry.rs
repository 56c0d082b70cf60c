//! The static table of every decoded game field, in the manner of Wireshark's
//! `hf_register_info`: one entry per field name with its type, unit, a one-line
//! description from the protocol reference, and the opcodes whose decoded body carries
//! it.
//!
//! Naming rule: a field's name is its path in a message's field tree with list elements
//! unmarked — group members joined with `.` (`orientation.w`), a list's elements under
//! the list's own name (`subsystems.condition_pct` for any element of `subsystems`). A
//! vector has its entry and one per component (`position.x`, `position.y`,
//! `position.z`). Entries whose description starts with "Transport: " are the fields of
//! connection-management messages (the transport layer's low types 0x00–0x06), which
//! have no opcode; the two names those share with game fields (`peer_id`, `raw`) keep
//! their game opcodes and give the transport meaning after "Transport: ". Entries
//! marked "(JSON twin)" are not in the field tree: the JSON writers add a `<name>_hex`
//! text after every id or hex value.
//!
//! Two kinds of name are open-ended, and [`lookup`] folds them onto one entry each:
//! the members of `subsystems.children_pct` are named by the children's keys in the ship
//! layout (`subsystems.children_pct.ventral_phaser_3`; entry
//! `subsystems.children_pct.child`), and a checksum tree nests a subdirectory's tree
//! under `subdirs.subdir.` again at every level (`subdirs.subdir.files.file.name_hash`
//! is `files.file.name_hash` one level down).
//!
//! Some names mean different things under different opcodes (`flags`, `class_id`) or
//! have several value types (`peer_id`, `destination`, `aim_point`); such an entry
//! lists every opcode, takes the commonest type and says so in its description.
//!
//! Why this file is long: about 1,980 lines; the table has one seven-line entry per field, some 220 of
//! them; the code is the few functions at the end.

/// How a field's value is typed (mirrors crate::game::field::Value's variants; a
/// value's type is `FieldType::of`, beside the value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Bool,
    Uint,
    Int,
    Float,
    ObjectId,
    Hex,
    Text,
    Vec3,
    Bytes,
    List,
    Group,
}

impl FieldType {
    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::Bool => "bool",
            FieldType::Uint => "uint",
            FieldType::Int => "int",
            FieldType::Float => "float",
            FieldType::ObjectId => "object_id",
            FieldType::Hex => "hex",
            FieldType::Text => "text",
            FieldType::Vec3 => "vec3",
            FieldType::Bytes => "bytes",
            FieldType::List => "list",
            FieldType::Group => "group",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct GameField {
    /// The name users type: the field's path with list elements unmarked
    /// (`subsystems.condition_pct` for any element of the `subsystems` list,
    /// `orientation.w` for a group member).
    pub name: &'static str,
    pub ty: FieldType,
    /// Unit of the value ("" where none): "s", "pct", "world units", "bytes", ...
    pub unit: &'static str,
    /// One line, from the protocol reference.
    pub description: &'static str,
    /// Opcodes whose decoded body carries it (sorted); empty for the fields of
    /// connection-management messages.
    pub opcodes: &'static [u8],
}

impl GameField {
    /// Whether the JSON writer adds this name (a `_hex` twin) rather than a decoder.
    pub fn is_json_twin(&self) -> bool {
        self.description.contains("(JSON twin)")
    }
}

/// Every opcode with a known layout (`opcodes::opcode_names`).
const KNOWN_OPCODES: [u8; 50] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10,
    0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, 0x20,
    0x21, 0x22, 0x23, 0x25, 0x27, 0x28, 0x29, 0x2A, 0x2C, 0x2D, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3F,
    0x40, 0x41,
];

/// Every other opcode: decoded as a byte count and the raw body.
const UNKNOWN_OPCODES: [u8; 256 - KNOWN_OPCODES.len()] = {
    let mut out = [0u8; 256 - KNOWN_OPCODES.len()];
    let (mut op, mut n, mut k) = (0usize, 0usize, 0usize);
    while op < 256 {
        if k < KNOWN_OPCODES.len() && KNOWN_OPCODES[k] as usize == op {
            k += 1;
        } else {
            out[n] = op as u8;
            n += 1;
        }
        op += 1;
    }
    out
};

/// Known opcodes whose decoder can fail part-way (all but the opcode-only messages
/// 0x01, 0x13, 0x27, 0x28, 0x39).
const FALLIBLE_OPCODES: &[u8] = &[
    0x00, 0x02, 0x03, 0x04, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11,
    0x12, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x21, 0x22,
    0x23, 0x25, 0x29, 0x2A, 0x2C, 0x2D, 0x35, 0x36, 0x37, 0x38, 0x3F, 0x40, 0x41,
];

/// The serialized events (0x06–0x12, 0x15, 0x17, 0x1B). The class id in the event
/// header, not the opcode, selects the tail, so a tail field can come with any of them.
pub(crate) const EVENT_OPCODES: &[u8] = &[
    0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x15, 0x17, 0x1B,
];

/// The events whose header objects are `source` and `destination` (0x15 names them
/// `other_object` and `reporting_ship`).
const EVENT_HEADER_OPCODES: &[u8] = &[
    0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x17, 0x1B,
];

const CLASS_ID_OPCODES: &[u8] = &[
    0x02, 0x03, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x15,
    0x17, 0x1B,
];

const SET_NAME_OPCODES: &[u8] = &[
    0x02, 0x03, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x15,
    0x17, 0x1B, 0x1F,
];

const SPEED_OPCODES: &[u8] = &[
    0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x15, 0x17, 0x1B,
    0x1C,
];

const KILLER_OPCODES: &[u8] = &[
    0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x15, 0x17, 0x1B,
    0x36,
];

const PEER_ID_OPCODES: &[u8] = &[
    0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x15, 0x17, 0x1B,
    0x37, 0x3F, 0x41,
];

/// Object-pointer tails of event type 0x00800058 with any opcode but 0x09 and 0x11,
/// which name their tail object themselves.
const PREVIOUS_TARGET_OPCODES: &[u8] = &[
    0x06, 0x07, 0x08, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x12, 0x15, 0x17, 0x1B,
];

/// Object-pointer tails with an opcode that does not name them (not 0x06, 0x09, 0x11).
const THIRD_OBJECT_OPCODES: &[u8] = &[
    0x07, 0x08, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x12, 0x15, 0x17, 0x1B,
];

/// Every game field, sorted by name.
pub const GAME_FIELDS: &[GameField] = &[
    GameField {
        name: "address",
        ty: FieldType::Text,
        unit: "",
        description: "Transport: IPv4 address of a peer-info (0x00), connect-request (0x03) or disconnect (0x05) message, dotted quad",
        opcodes: &[],
    },
    GameField {
        name: "aim_point",
        ty: FieldType::Group,
        unit: "",
        description: "TorpedoFire: aim point on the target (cvb), present when flags bit 2 is clear; a Vec3 when a non-stock sender writes a 5-byte cv4",
        opcodes: &[0x19],
    },
    GameField {
        name: "aim_point.direction",
        ty: FieldType::Vec3,
        unit: "",
        description: "TorpedoFire: unit direction of the aim point (cvb direction bytes / 127)",
        opcodes: &[0x19],
    },
    GameField {
        name: "aim_point.direction.x",
        ty: FieldType::Float,
        unit: "",
        description: "x component of `aim_point.direction`",
        opcodes: &[0x19],
    },
    GameField {
        name: "aim_point.direction.y",
        ty: FieldType::Float,
        unit: "",
        description: "y component of `aim_point.direction`",
        opcodes: &[0x19],
    },
    GameField {
        name: "aim_point.direction.z",
        ty: FieldType::Float,
        unit: "",
        description: "z component of `aim_point.direction`",
        opcodes: &[0x19],
    },
    GameField {
        name: "aim_point.magnitude_raw",
        ty: FieldType::Uint,
        unit: "",
        description: "TorpedoFire: aim-point distance byte, relative to the target's bounding radius (scale unknown)",
        opcodes: &[0x19],
    },
    GameField {
        name: "aim_point.x",
        ty: FieldType::Float,
        unit: "",
        description: "x component of a non-stock cv4 aim point",
        opcodes: &[0x19],
    },
    GameField {
        name: "aim_point.y",
        ty: FieldType::Float,
        unit: "",
        description: "y component of a non-stock cv4 aim point",
        opcodes: &[0x19],
    },
    GameField {
        name: "aim_point.z",
        ty: FieldType::Float,
        unit: "",
        description: "z component of a non-stock cv4 aim point",
        opcodes: &[0x19],
    },
    GameField {
        name: "assigned_peer_id",
        ty: FieldType::Hex,
        unit: "",
        description: "Transport: peer id the host assigns in its 1-byte connect reply (0x03)",
        opcodes: &[],
    },
    GameField {
        name: "assigned_peer_id_hex",
        ty: FieldType::Text,
        unit: "",
        description: "Transport: (JSON twin) `assigned_peer_id` as 0x-prefixed hex text",
        opcodes: &[],
    },
    GameField {
        name: "boot_reason",
        ty: FieldType::Uint,
        unit: "",
        description: "Transport: boot (0x04) reason: 1 timeout, 2 rejected, 3 server full, 4 kicked, 5 connection accepted",
        opcodes: &[],
    },
    GameField {
        name: "boot_reason_name",
        ty: FieldType::Text,
        unit: "",
        description: "Transport: name of a stock boot reason (timeout, rejected, server_full, kicked, connection_accepted)",
        opcodes: &[],
    },
    GameField {
        name: "byte_count",
        ty: FieldType::Uint,
        unit: "bytes",
        description: "Length of the body of an opcode without a known layout",
        opcodes: &UNKNOWN_OPCODES,
    },
    GameField {
        name: "checksum_correction_data_unknown_format",
        ty: FieldType::Bytes,
        unit: "",
        description: "Settings: checksum-correction data, present when checksum_correction_follows is set; format unknown",
        opcodes: &[0x00],
    },
    GameField {
        name: "checksum_correction_follows",
        ty: FieldType::Bool,
        unit: "",
        description: "Settings: checksum-correction data follows (third bit of the packed byte after the game time)",
        opcodes: &[0x00],
    },
    GameField {
        name: "class_id",
        ty: FieldType::Hex,
        unit: "",
        description: "Event class id, which selects the event tail (serialized events); serialized object class id, 0x8008 ship or station, 0x8009 torpedo (0x02/0x03)",
        opcodes: CLASS_ID_OPCODES,
    },
    GameField {
        name: "class_id_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `class_id` as 0x-prefixed hex text",
        opcodes: CLASS_ID_OPCODES,
    },
    GameField {
        name: "class_name",
        ty: FieldType::Text,
        unit: "",
        description: "Name of a documented class: an event class (serialized events), e.g. collision event; a serialized object's class, ship or station (0x8008) or torpedo (0x8009) (0x02/0x03)",
        opcodes: CLASS_ID_OPCODES,
    },
    GameField {
        name: "cloak",
        ty: FieldType::Bool,
        unit: "",
        description: "StateUpdate flag 0x40: cloak bit (1 = cloaking, the better-supported reading)",
        opcodes: &[0x1C],
    },
    GameField {
        name: "collision_damage",
        ty: FieldType::Bool,
        unit: "",
        description: "Collision damage enabled (Settings, UICollisionSetting)",
        opcodes: &[0x00, 0x16],
    },
    GameField {
        name: "contact_count",
        ty: FieldType::Uint,
        unit: "",
        description: "Collision event (stock: 0x15 CollisionEffect): number of contact points",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "contacts",
        ty: FieldType::Group,
        unit: "",
        description: "Collision event: the contact points, one contact each",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "contacts.contact",
        ty: FieldType::Group,
        unit: "",
        description: "One contact point, ship-relative (cvb: direction and magnitude byte)",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "contacts.contact.direction",
        ty: FieldType::Vec3,
        unit: "",
        description: "Unit direction of a contact point (cvb direction bytes / 127)",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "contacts.contact.direction.x",
        ty: FieldType::Float,
        unit: "",
        description: "x component of `contacts.contact.direction`",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "contacts.contact.direction.y",
        ty: FieldType::Float,
        unit: "",
        description: "y component of `contacts.contact.direction`",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "contacts.contact.direction.z",
        ty: FieldType::Float,
        unit: "",
        description: "z component of `contacts.contact.direction`",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "contacts.contact.magnitude_raw",
        ty: FieldType::Uint,
        unit: "",
        description: "Contact point distance byte, relative to the bounding radius (scale unknown)",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "damage",
        ty: FieldType::Float,
        unit: "",
        description: "Explosion: first cf16, read as damage (disputed: one specification puts radius first)",
        opcodes: &[0x29],
    },
    GameField {
        name: "deaths",
        ty: FieldType::Int,
        unit: "",
        description: "SCORE / SCORE_INIT: the player's deaths",
        opcodes: &[0x37, 0x3F],
    },
    GameField {
        name: "delta",
        ty: FieldType::Vec3,
        unit: "world units",
        description: "StateUpdate flag 0x02: position minus the sender's last absolute position of the ship (cv4)",
        opcodes: &[0x1C],
    },
    GameField {
        name: "delta.x",
        ty: FieldType::Float,
        unit: "world units",
        description: "x component of `delta`",
        opcodes: &[0x1C],
    },
    GameField {
        name: "delta.y",
        ty: FieldType::Float,
        unit: "world units",
        description: "y component of `delta`",
        opcodes: &[0x1C],
    },
    GameField {
        name: "delta.z",
        ty: FieldType::Float,
        unit: "world units",
        description: "z component of `delta`",
        opcodes: &[0x1C],
    },
    GameField {
        name: "destination",
        ty: FieldType::ObjectId,
        unit: "",
        description: "Event header destination object; in a start-warp event (class 0x812A, stock 0x10) also the warp destination x, y, z (Vec3)",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "destination.x",
        ty: FieldType::Float,
        unit: "world units",
        description: "x component of a start-warp event's destination",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "destination.y",
        ty: FieldType::Float,
        unit: "world units",
        description: "y component of a start-warp event's destination",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "destination.z",
        ty: FieldType::Float,
        unit: "world units",
        description: "z component of a start-warp event's destination",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "destination_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `destination` as 0x-prefixed hex text",
        opcodes: EVENT_HEADER_OPCODES,
    },
    GameField {
        name: "direction",
        ty: FieldType::Vec3,
        unit: "",
        description: "Launch direction (TorpedoFire) or direction to the hit point (BeamFire), cv3 unit vector",
        opcodes: &[0x19, 0x1A],
    },
    GameField {
        name: "direction.x",
        ty: FieldType::Float,
        unit: "",
        description: "x component of `direction`",
        opcodes: &[0x19, 0x1A],
    },
    GameField {
        name: "direction.y",
        ty: FieldType::Float,
        unit: "",
        description: "y component of `direction`",
        opcodes: &[0x19, 0x1A],
    },
    GameField {
        name: "direction.z",
        ty: FieldType::Float,
        unit: "",
        description: "z component of `direction`",
        opcodes: &[0x19, 0x1A],
    },
    GameField {
        name: "directory",
        ty: FieldType::Text,
        unit: "",
        description: "ChecksumRequest: directory, e.g. scripts/ships",
        opcodes: &[0x20],
    },
    GameField {
        name: "directory_hash",
        ty: FieldType::Hex,
        unit: "",
        description: "ChecksumResponse: hash of the directory's last path component",
        opcodes: &[0x21],
    },
    GameField {
        name: "directory_hash_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `directory_hash` as 0x-prefixed hex text",
        opcodes: &[0x21],
    },
    GameField {
        name: "effect_duration",
        ty: FieldType::Float,
        unit: "s",
        description: "Object-exploding event (class 0x8129): explosion effect duration",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "emitter",
        ty: FieldType::ObjectId,
        unit: "",
        description: "BeamFire: phaser or beam emitter subsystem that fired",
        opcodes: &[0x1A],
    },
    GameField {
        name: "emitter_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `emitter` as 0x-prefixed hex text",
        opcodes: &[0x1A],
    },
    GameField {
        name: "end_time",
        ty: FieldType::Int,
        unit: "s",
        description: "MISSION_INIT: end time on the game clock, present only when a time limit is set",
        opcodes: &[0x35],
    },
    GameField {
        name: "event_name",
        ty: FieldType::Text,
        unit: "",
        description: "Name of a documented event type code",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "event_type",
        ty: FieldType::Hex,
        unit: "",
        description: "Event type code (0x0080xxxx offsets from the engine's event base)",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "event_type_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `event_type` as 0x-prefixed hex text",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "file_contents",
        ty: FieldType::Bytes,
        unit: "",
        description: "FileTransfer: file contents, to the end of the message",
        opcodes: &[0x25],
    },
    GameField {
        name: "file_count",
        ty: FieldType::Uint,
        unit: "",
        description: "Checksum tree: number of files in the directory",
        opcodes: &[0x21],
    },
    GameField {
        name: "file_name",
        ty: FieldType::Text,
        unit: "",
        description: "Name of the file that failed the check (VersionMismatch, SystemChecksumFail) or is transferred (FileTransfer)",
        opcodes: &[0x22, 0x23, 0x25],
    },
    GameField {
        name: "files",
        ty: FieldType::Group,
        unit: "",
        description: "Checksum tree: the directory's files, one file each",
        opcodes: &[0x21],
    },
    GameField {
        name: "files.file",
        ty: FieldType::Group,
        unit: "",
        description: "Checksum tree: one file's name hash and content hash",
        opcodes: &[0x21],
    },
    GameField {
        name: "files.file.content_hash",
        ty: FieldType::Hex,
        unit: "",
        description: "Checksum tree: hash of a file's contents",
        opcodes: &[0x21],
    },
    GameField {
        name: "files.file.content_hash_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `files.file.content_hash` as 0x-prefixed hex text",
        opcodes: &[0x21],
    },
    GameField {
        name: "files.file.name_hash",
        ty: FieldType::Hex,
        unit: "",
        description: "Checksum tree: hash of a file's name",
        opcodes: &[0x21],
    },
    GameField {
        name: "files.file.name_hash_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `files.file.name_hash` as 0x-prefixed hex text",
        opcodes: &[0x21],
    },
    GameField {
        name: "filter",
        ty: FieldType::Text,
        unit: "",
        description: "ChecksumRequest: file filter, e.g. *.pyc",
        opcodes: &[0x20],
    },
    GameField {
        name: "fits_classes",
        ty: FieldType::List,
        unit: "",
        description: "StateUpdate raw subsystem block: the ship classes whose layout reads the block exactly, as name (species)",
        opcodes: &[0x1C],
    },
    GameField {
        name: "flag_names",
        ty: FieldType::Text,
        unit: "",
        description: "StateUpdate dirty flags by name, joined with + (NONE for 0)",
        opcodes: &[0x1C],
    },
    GameField {
        name: "flags",
        ty: FieldType::Hex,
        unit: "",
        description: "StateUpdate dirty flags (which fields follow); TorpedoFire flags (bit 2 set = no target); BeamFire flags (which bit means target present is disputed)",
        opcodes: &[0x19, 0x1A, 0x1C],
    },
    GameField {
        name: "flags_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `flags` as 0x-prefixed hex text",
        opcodes: &[0x19, 0x1A, 0x1C],
    },
    GameField {
        name: "force",
        ty: FieldType::Float,
        unit: "",
        description: "Collision event: collision force",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "forward",
        ty: FieldType::Vec3,
        unit: "",
        description: "StateUpdate flag 0x04: model forward axis (+Y), cv3 unit vector",
        opcodes: &[0x1C],
    },
    GameField {
        name: "forward.x",
        ty: FieldType::Float,
        unit: "",
        description: "x component of `forward`",
        opcodes: &[0x1C],
    },
    GameField {
        name: "forward.y",
        ty: FieldType::Float,
        unit: "",
        description: "y component of `forward`",
        opcodes: &[0x1C],
    },
    GameField {
        name: "forward.z",
        ty: FieldType::Float,
        unit: "",
        description: "z component of `forward`",
        opcodes: &[0x1C],
    },
    GameField {
        name: "frag_limit",
        ty: FieldType::Uint,
        unit: "",
        description: "MISSION_INIT: frag limit, 0xFF = none",
        opcodes: &[0x35],
    },
    GameField {
        name: "friendly_fire",
        ty: FieldType::Bool,
        unit: "",
        description: "Settings: friendly fire enabled",
        opcodes: &[0x00],
    },
    GameField {
        name: "game_time",
        ty: FieldType::Float,
        unit: "s",
        description: "Game clock: the host's (Settings) or the sender's (StateUpdate)",
        opcodes: &[0x00, 0x1C],
    },
    GameField {
        name: "hash_present",
        ty: FieldType::Bool,
        unit: "",
        description: "StateUpdate: the integrity hash follows the absolute position",
        opcodes: &[0x1C],
    },
    GameField {
        name: "integrity_hash",
        ty: FieldType::Hex,
        unit: "",
        description: "StateUpdate: 16-bit integrity hash over the ship's subsystem properties",
        opcodes: &[0x1C],
    },
    GameField {
        name: "integrity_hash_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `integrity_hash` as 0x-prefixed hex text",
        opcodes: &[0x1C],
    },
    GameField {
        name: "killer_kills",
        ty: FieldType::Int,
        unit: "",
        description: "SCORE_CHANGE: the killer's kills, present when the killer is not 0",
        opcodes: &[0x36],
    },
    GameField {
        name: "killer_peer_id",
        ty: FieldType::Int,
        unit: "",
        description: "Killer's peer id, 0 = none (SCORE_CHANGE; object-exploding event)",
        opcodes: KILLER_OPCODES,
    },
    GameField {
        name: "killer_score",
        ty: FieldType::Int,
        unit: "",
        description: "SCORE_CHANGE: the killer's score, present when the killer is not 0",
        opcodes: &[0x36],
    },
    GameField {
        name: "kills",
        ty: FieldType::Int,
        unit: "",
        description: "Kills of a player (SCORE, SCORE_INIT) or a team (TEAM_SCORE)",
        opcodes: &[0x37, 0x3F, 0x40],
    },
    GameField {
        name: "launcher",
        ty: FieldType::ObjectId,
        unit: "",
        description: "TorpedoFire: torpedo launcher (tube subsystem) that fired",
        opcodes: &[0x19],
    },
    GameField {
        name: "launcher_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `launcher` as 0x-prefixed hex text",
        opcodes: &[0x19],
    },
    GameField {
        name: "mission_script",
        ty: FieldType::Text,
        unit: "",
        description: "Settings: mission script module, e.g. Multiplayer.Episode.Mission1.Mission1",
        opcodes: &[0x00],
    },
    GameField {
        name: "name",
        ty: FieldType::Text,
        unit: "",
        description: "Transport: player name of a peer-info message (0x00), UTF-16LE on the wire",
        opcodes: &[],
    },
    GameField {
        name: "no_target",
        ty: FieldType::Bool,
        unit: "",
        description: "TorpedoFire: flag bit 2, set when no target follows (the dissector rule)",
        opcodes: &[0x19],
    },
    GameField {
        name: "non_stock_body",
        ty: FieldType::Bytes,
        unit: "",
        description: "Event body shorter than the 16-byte event header, raw",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "object_body",
        ty: FieldType::Bytes,
        unit: "",
        description: "Serialized object of an undocumented class, raw",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "object_id",
        ty: FieldType::ObjectId,
        unit: "",
        description: "Object the message is about: created (0x02/0x03), destroyed, not found, requested, entering a set, exploding (0x29), or the ship a StateUpdate describes",
        opcodes: &[0x02, 0x03, 0x14, 0x1C, 0x1D, 0x1E, 0x1F, 0x29],
    },
    GameField {
        name: "object_id_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `object_id` as 0x-prefixed hex text",
        opcodes: &[0x02, 0x03, 0x14, 0x1C, 0x1D, 0x1E, 0x1F, 0x29],
    },
    GameField {
        name: "orientation",
        ty: FieldType::Group,
        unit: "",
        description: "Ship orientation quaternion w, x, y, z (model forward +Y, up +Z)",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "orientation.w",
        ty: FieldType::Float,
        unit: "",
        description: "w of the ship's orientation quaternion",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "orientation.x",
        ty: FieldType::Float,
        unit: "",
        description: "x of the ship's orientation quaternion",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "orientation.y",
        ty: FieldType::Float,
        unit: "",
        description: "y of the ship's orientation quaternion",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "orientation.z",
        ty: FieldType::Float,
        unit: "",
        description: "z of the ship's orientation quaternion",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "other_object",
        ty: FieldType::ObjectId,
        unit: "",
        description: "CollisionEffect: the other object (0 = environment, e.g. an asteroid)",
        opcodes: &[0x15],
    },
    GameField {
        name: "other_object_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `other_object` as 0x-prefixed hex text",
        opcodes: &[0x15],
    },
    GameField {
        name: "owner_slot",
        ty: FieldType::Uint,
        unit: "",
        description: "Object creation: owner's player slot",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "peer_id",
        ty: FieldType::Int,
        unit: "",
        description: "Peer id of a player: SCORE, SCORE_INIT, TEAM_MESSAGE (i32), score update, player-list event tail (u8, stock 0x17 DeletePlayerUI); Transport: the peer id of a peer-info (0x00) or disconnect (0x05) message (hex)",
        opcodes: PEER_ID_OPCODES,
    },
    GameField {
        name: "peer_id_hex",
        ty: FieldType::Text,
        unit: "",
        description: "Transport: (JSON twin) `peer_id` as 0x-prefixed hex text",
        opcodes: &[],
    },
    GameField {
        name: "phaser_level",
        ty: FieldType::Uint,
        unit: "",
        description: "SetPhaserLevel: 0 low, 1 medium, 2 high",
        opcodes: &[0x12],
    },
    GameField {
        name: "phaser_level_name",
        ty: FieldType::Text,
        unit: "",
        description: "SetPhaserLevel: level name (low, medium, high)",
        opcodes: &[0x12],
    },
    GameField {
        name: "player_limit",
        ty: FieldType::Uint,
        unit: "",
        description: "MISSION_INIT: player limit",
        opcodes: &[0x35],
    },
    GameField {
        name: "player_name",
        ty: FieldType::Text,
        unit: "",
        description: "Player name: the ship's player (object creation), the player who left (DeletePlayerAnim)",
        opcodes: &[0x02, 0x03, 0x18],
    },
    GameField {
        name: "player_slot",
        ty: FieldType::Uint,
        unit: "",
        description: "Settings: player slot assigned to the receiving client (0-based)",
        opcodes: &[0x00],
    },
    GameField {
        name: "port_bytes",
        ty: FieldType::Bytes,
        unit: "",
        description: "Transport: bytes 4-5 of a connect request, probably the client's UDP port (byte order unverified)",
        opcodes: &[],
    },
    GameField {
        name: "position",
        ty: FieldType::Vec3,
        unit: "world units",
        description: "Absolute position: a created ship's (3 f32), a StateUpdate's (flag 0x01, 3 f32), an explosion's (cv4)",
        opcodes: &[0x02, 0x03, 0x1C, 0x29],
    },
    GameField {
        name: "position.x",
        ty: FieldType::Float,
        unit: "world units",
        description: "x component of `position`",
        opcodes: &[0x02, 0x03, 0x1C, 0x29],
    },
    GameField {
        name: "position.y",
        ty: FieldType::Float,
        unit: "world units",
        description: "y component of `position`",
        opcodes: &[0x02, 0x03, 0x1C, 0x29],
    },
    GameField {
        name: "position.z",
        ty: FieldType::Float,
        unit: "world units",
        description: "z component of `position`",
        opcodes: &[0x02, 0x03, 0x1C, 0x29],
    },
    GameField {
        name: "power_block",
        ty: FieldType::List,
        unit: "",
        description: "StateUpdate flag 0x80: (list index, value) pairs, one element each",
        opcodes: &[0x1C],
    },
    GameField {
        name: "power_block.index",
        ty: FieldType::Uint,
        unit: "",
        description: "Index of the pair's entry in the ship's top-level subsystem list",
        opcodes: &[0x1C],
    },
    GameField {
        name: "power_block.key",
        ty: FieldType::Text,
        unit: "",
        description: "snake_case key of the pair's entry, when the ship class is known",
        opcodes: &[0x1C],
    },
    GameField {
        name: "power_block.name",
        ty: FieldType::Text,
        unit: "",
        description: "Display name of the pair's entry, when the ship class is known",
        opcodes: &[0x1C],
    },
    GameField {
        name: "power_block.power_pct_interpreted",
        ty: FieldType::Float,
        unit: "pct",
        description: "value / 204 x 100: an interpretation (hypothesis), not established",
        opcodes: &[0x1C],
    },
    GameField {
        name: "power_block.value",
        ty: FieldType::Uint,
        unit: "",
        description: "Raw value byte of the pair (204 for a freshly spawned ship)",
        opcodes: &[0x1C],
    },
    GameField {
        name: "power_block_trailing",
        ty: FieldType::Bytes,
        unit: "",
        description: "StateUpdate: odd last byte of the power block",
        opcodes: &[0x1C],
    },
    GameField {
        name: "previous_target",
        ty: FieldType::ObjectId,
        unit: "",
        description: "Object-pointer event of type 0x00800058 (target changed): the previous target",
        opcodes: PREVIOUS_TARGET_OPCODES,
    },
    GameField {
        name: "previous_target_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `previous_target` as 0x-prefixed hex text",
        opcodes: PREVIOUS_TARGET_OPCODES,
    },
    GameField {
        name: "radius",
        ty: FieldType::Float,
        unit: "world units",
        description: "Explosion: second cf16, read as radius (disputed)",
        opcodes: &[0x29],
    },
    GameField {
        name: "raw",
        ty: FieldType::Bytes,
        unit: "",
        description: "Body of an opcode without a known layout; Transport: payload of a connection-management message without a known layout (types 0x02, 0x06, or a non-stock shape)",
        opcodes: &UNKNOWN_OPCODES,
    },
    GameField {
        name: "reason",
        ty: FieldType::Int,
        unit: "",
        description: "END_GAME reason: 0 over, 1 time up, 2 frag limit, 3 score limit, 4 starbase dead, 5 Borg dead, 6 Enterprise dead",
        opcodes: &[0x38],
    },
    GameField {
        name: "reason_code",
        ty: FieldType::Uint,
        unit: "",
        description: "BootPlayer: reason code (its table is disputed; left unlabelled)",
        opcodes: &[0x04],
    },
    GameField {
        name: "reason_name",
        ty: FieldType::Text,
        unit: "",
        description: "END_GAME: name of the reason",
        opcodes: &[0x38],
    },
    GameField {
        name: "recursive",
        ty: FieldType::Bool,
        unit: "",
        description: "ChecksumRequest: recurse into subdirectories",
        opcodes: &[0x20],
    },
    GameField {
        name: "reporting_ship",
        ty: FieldType::ObjectId,
        unit: "",
        description: "CollisionEffect: the reporting player's ship",
        opcodes: &[0x15],
    },
    GameField {
        name: "reporting_ship_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `reporting_ship` as 0x-prefixed hex text",
        opcodes: &[0x15],
    },
    GameField {
        name: "right",
        ty: FieldType::Vec3,
        unit: "",
        description: "StateUpdate: right axis (+X) = forward x up; derived, not on the wire",
        opcodes: &[0x1C],
    },
    GameField {
        name: "right.x",
        ty: FieldType::Float,
        unit: "",
        description: "x component of `right`",
        opcodes: &[0x1C],
    },
    GameField {
        name: "right.y",
        ty: FieldType::Float,
        unit: "",
        description: "y component of `right`",
        opcodes: &[0x1C],
    },
    GameField {
        name: "right.z",
        ty: FieldType::Float,
        unit: "",
        description: "z component of `right`",
        opcodes: &[0x1C],
    },
    GameField {
        name: "round",
        ty: FieldType::Hex,
        unit: "",
        description: "Checksum round: 0, 1, 2, 3, then 0xFF",
        opcodes: &[0x20, 0x21],
    },
    GameField {
        name: "round_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `round` as 0x-prefixed hex text",
        opcodes: &[0x20, 0x21],
    },
    GameField {
        name: "score",
        ty: FieldType::Int,
        unit: "",
        description: "Score of a player (SCORE, SCORE_INIT) or a team (TEAM_SCORE)",
        opcodes: &[0x37, 0x3F, 0x40],
    },
    GameField {
        name: "sender_peer_id",
        ty: FieldType::Int,
        unit: "",
        description: "Chat: the sender's peer id",
        opcodes: &[0x2C, 0x2D],
    },
    GameField {
        name: "set_name",
        ty: FieldType::Text,
        unit: "",
        description: "Star-system set name: the set a created ship is in, the set an object enters (EnterSet), the warp destination set (start-warp event)",
        opcodes: SET_NAME_OPCODES,
    },
    GameField {
        name: "slot",
        ty: FieldType::Uint,
        unit: "",
        description: "Transport: player slot a boot (0x04) concerns",
        opcodes: &[],
    },
    GameField {
        name: "source",
        ty: FieldType::ObjectId,
        unit: "",
        description: "Event header source object",
        opcodes: EVENT_HEADER_OPCODES,
    },
    GameField {
        name: "source_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `source` as 0x-prefixed hex text",
        opcodes: EVENT_HEADER_OPCODES,
    },
    GameField {
        name: "species",
        ty: FieldType::Uint,
        unit: "",
        description: "Ship species (SpeciesToShip index): selects the ship class and its subsystem layout",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "species_name",
        ty: FieldType::Text,
        unit: "",
        description: "Name of the ship species (SpeciesToShip)",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "speed",
        ty: FieldType::Float,
        unit: "",
        description: "StateUpdate flag 0x10: speed along the velocity, negative while reversing (cf16); start-warp event: warp speed (f32)",
        opcodes: SPEED_OPCODES,
    },
    GameField {
        name: "state",
        ty: FieldType::Uint,
        unit: "",
        description: "SubsystemStatus: the subsystem's on/off state byte",
        opcodes: &[0x0A],
    },
    GameField {
        name: "subdir_count",
        ty: FieldType::Uint,
        unit: "",
        description: "Checksum tree: number of subdirectories",
        opcodes: &[0x21],
    },
    GameField {
        name: "subdir_name_hashes",
        ty: FieldType::Group,
        unit: "",
        description: "Checksum tree: the subdirectories' name hashes, all before the subtrees",
        opcodes: &[0x21],
    },
    GameField {
        name: "subdir_name_hashes.subdir_name_hash",
        ty: FieldType::Hex,
        unit: "",
        description: "Checksum tree: hash of a subdirectory's name",
        opcodes: &[0x21],
    },
    GameField {
        name: "subdir_name_hashes.subdir_name_hash_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `subdir_name_hashes.subdir_name_hash` as 0x-prefixed hex text",
        opcodes: &[0x21],
    },
    GameField {
        name: "subdirs",
        ty: FieldType::Group,
        unit: "",
        description: "Checksum tree: the subdirectories' trees, one subdir each, in name-hash order",
        opcodes: &[0x21],
    },
    GameField {
        name: "subdirs.subdir",
        ty: FieldType::Group,
        unit: "",
        description: "Checksum tree of one subdirectory: the tree's fields again, one level down",
        opcodes: &[0x21],
    },
    GameField {
        name: "subsystem_blob",
        ty: FieldType::Bytes,
        unit: "",
        description: "Object creation: subsystem blob of a species without a known layout, raw",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "subsystem_block_raw",
        ty: FieldType::Bytes,
        unit: "",
        description: "StateUpdate 0x20 block after its start index, raw: the ship's layout is unknown or does not read it",
        opcodes: &[0x1C],
    },
    GameField {
        name: "subsystem_moved_to_front",
        ty: FieldType::ObjectId,
        unit: "",
        description: "RepairListPriority: subsystem moved to the front of the repair list",
        opcodes: &[0x11],
    },
    GameField {
        name: "subsystem_moved_to_front_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `subsystem_moved_to_front` as 0x-prefixed hex text",
        opcodes: &[0x11],
    },
    GameField {
        name: "subsystem_start",
        ty: FieldType::Uint,
        unit: "",
        description: "StateUpdate: start index of a raw 0x20 subsystem block",
        opcodes: &[0x1C],
    },
    GameField {
        name: "subsystems",
        ty: FieldType::List,
        unit: "",
        description: "Subsystem records in wire order: a creation blob's (0x02/0x03), a 0x20 block's (StateUpdate)",
        opcodes: &[0x02, 0x03, 0x1C],
    },
    GameField {
        name: "subsystems.backup_battery",
        ty: FieldType::Uint,
        unit: "1/255",
        description: "Creation record of the reactor: backup battery, fraction of maximum x 255",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "subsystems.backup_battery_pct",
        ty: FieldType::Float,
        unit: "pct",
        description: "StateUpdate record of the reactor: backup battery, current / maximum",
        opcodes: &[0x1C],
    },
    GameField {
        name: "subsystems.children",
        ty: FieldType::List,
        unit: "1/255",
        description: "Creation record: one condition byte per child, fraction of maximum x 255 (empty for none)",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "subsystems.children_pct",
        ty: FieldType::Group,
        unit: "",
        description: "StateUpdate record: the children's conditions, one member per child named by its snake_case key, in wire order",
        opcodes: &[0x1C],
    },
    GameField {
        name: "subsystems.children_pct.child",
        ty: FieldType::Float,
        unit: "pct",
        description: "Condition of one child, current / maximum; stands for every member of children_pct, each named by the child's key in the ship layout (child_N when the layout names none)",
        opcodes: &[0x1C],
    },
    GameField {
        name: "subsystems.condition",
        ty: FieldType::Uint,
        unit: "1/255",
        description: "Creation record: condition byte, fraction of maximum x 255 (0xFF full)",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "subsystems.condition_pct",
        ty: FieldType::Float,
        unit: "pct",
        description: "StateUpdate record: condition, current / maximum",
        opcodes: &[0x1C],
    },
    GameField {
        name: "subsystems.facings_pct",
        ty: FieldType::List,
        unit: "pct",
        description: "StateUpdate shield record: six shield-facing levels (facing order undocumented)",
        opcodes: &[0x1C],
    },
    GameField {
        name: "subsystems.has_power_data",
        ty: FieldType::Bool,
        unit: "",
        description: "StateUpdate record: power percent follows (0 when the message goes to the ship's owner)",
        opcodes: &[0x1C],
    },
    GameField {
        name: "subsystems.index",
        ty: FieldType::Uint,
        unit: "",
        description: "Position of the record's entry in the ship's top-level subsystem list",
        opcodes: &[0x02, 0x03, 0x1C],
    },
    GameField {
        name: "subsystems.key",
        ty: FieldType::Text,
        unit: "",
        description: "snake_case key of the entry's name (_2, _3 for later entries whose names make the same key)",
        opcodes: &[0x02, 0x03, 0x1C],
    },
    GameField {
        name: "subsystems.kind",
        ty: FieldType::Text,
        unit: "",
        description: "Entry kind from the ship layout, e.g. shield_generator",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "subsystems.main_battery",
        ty: FieldType::Uint,
        unit: "1/255",
        description: "Creation record of the reactor: main battery, fraction of maximum x 255",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "subsystems.main_battery_pct",
        ty: FieldType::Float,
        unit: "pct",
        description: "StateUpdate record of the reactor: main battery, current / maximum",
        opcodes: &[0x1C],
    },
    GameField {
        name: "subsystems.name",
        ty: FieldType::Text,
        unit: "",
        description: "Display name of the entry in the ship layout",
        opcodes: &[0x02, 0x03, 0x1C],
    },
    GameField {
        name: "subsystems.power_pct",
        ty: FieldType::Uint,
        unit: "pct",
        description: "StateUpdate record: requested power (0-125), present when has_power_data is set",
        opcodes: &[0x1C],
    },
    GameField {
        name: "subsystems.power_percent",
        ty: FieldType::Int,
        unit: "pct",
        description: "Creation record: requested power (0-125); negative when switched off, the magnitude being the remembered setting",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "subsystems.shield_facings",
        ty: FieldType::List,
        unit: "1/255",
        description: "Creation record of the shield generator: six shield-facing levels (facing order undocumented)",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "subsystems.weapon_unknown_bit",
        ty: FieldType::Bool,
        unit: "",
        description: "Creation record of a weapon system: packed bit of unknown meaning",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "subsystems.weapon_unknown_byte",
        ty: FieldType::Uint,
        unit: "",
        description: "Creation record of a weapon system: byte of unknown meaning",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "subsystems_start_index",
        ty: FieldType::Uint,
        unit: "",
        description: "StateUpdate: start index of the 0x20 subsystem block in the ship's top-level list",
        opcodes: &[0x1C],
    },
    GameField {
        name: "subsystems_start_name",
        ty: FieldType::Text,
        unit: "",
        description: "StateUpdate: display name of the entry the 0x20 block starts at",
        opcodes: &[0x1C],
    },
    GameField {
        name: "subsystems_summary",
        ty: FieldType::Text,
        unit: "",
        description: "StateUpdate: one-line summary of the 0x20 block's records",
        opcodes: &[0x1C],
    },
    GameField {
        name: "synthetic_prefix",
        ty: FieldType::Hex,
        unit: "",
        description: "Object creation: non-stock 01 00 00 00 written in place of the class id",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "synthetic_prefix_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `synthetic_prefix` as 0x-prefixed hex text",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "system",
        ty: FieldType::Uint,
        unit: "",
        description: "MISSION_INIT: star system index (SpeciesToSystem, 1-based)",
        opcodes: &[0x35],
    },
    GameField {
        name: "system_name",
        ty: FieldType::Text,
        unit: "",
        description: "MISSION_INIT: star system name, e.g. Multi1",
        opcodes: &[0x35],
    },
    GameField {
        name: "tail",
        ty: FieldType::Bytes,
        unit: "",
        description: "Transport: last 4 bytes of a connect request, meaning unknown",
        opcodes: &[],
    },
    GameField {
        name: "target",
        ty: FieldType::ObjectId,
        unit: "",
        description: "Target object: TorpedoFire and BeamFire when present, StopFiringAtTarget event tail",
        opcodes: &[0x09, 0x19, 0x1A],
    },
    GameField {
        name: "target_flag_bits",
        ty: FieldType::Text,
        unit: "",
        description: "BeamFire: which of flag bits 0 and 1 are set, and whether a target followed",
        opcodes: &[0x1A],
    },
    GameField {
        name: "target_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `target` as 0x-prefixed hex text",
        opcodes: &[0x09, 0x19, 0x1A],
    },
    GameField {
        name: "team",
        ty: FieldType::Uint,
        unit: "",
        description: "Team number (ObjCreateTeam, SCORE_INIT, TEAM_SCORE, TEAM_MESSAGE)",
        opcodes: &[0x03, 0x3F, 0x40, 0x41],
    },
    GameField {
        name: "text",
        ty: FieldType::Text,
        unit: "",
        description: "Chat: the message text",
        opcodes: &[0x2C, 0x2D],
    },
    GameField {
        name: "third_object",
        ty: FieldType::ObjectId,
        unit: "",
        description: "Object-pointer event tail (class 0x010C) with an opcode and event type that do not name it",
        opcodes: THIRD_OBJECT_OPCODES,
    },
    GameField {
        name: "third_object_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `third_object` as 0x-prefixed hex text",
        opcodes: THIRD_OBJECT_OPCODES,
    },
    GameField {
        name: "time_limit_minutes",
        ty: FieldType::Uint,
        unit: "min",
        description: "MISSION_INIT: time limit, 0xFF = none",
        opcodes: &[0x35],
    },
    GameField {
        name: "torpedo_body_undocumented",
        ty: FieldType::Bytes,
        unit: "",
        description: "Torpedo object body after its type byte, undocumented",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "torpedo_type",
        ty: FieldType::Uint,
        unit: "",
        description: "Torpedo type (SpeciesToTorp index): TorpedoFire byte 5 (disputed), TorpedoTypeChange value, torpedo object body",
        opcodes: &[0x02, 0x03, 0x19, 0x1B],
    },
    GameField {
        name: "torpedo_type_name",
        ty: FieldType::Text,
        unit: "",
        description: "Name of the torpedo type (SpeciesToTorp)",
        opcodes: &[0x19, 0x1B],
    },
    GameField {
        name: "trailing",
        ty: FieldType::Bytes,
        unit: "",
        description: "Bytes after the last field of a decoded message",
        opcodes: &KNOWN_OPCODES,
    },
    GameField {
        name: "undecoded",
        ty: FieldType::Bytes,
        unit: "",
        description: "Rest of a message from the byte where its decode failed",
        opcodes: FALLIBLE_OPCODES,
    },
    GameField {
        name: "unknown_byte5",
        ty: FieldType::Hex,
        unit: "",
        description: "BeamFire: byte 5, meaning unknown (0x02 in every observation)",
        opcodes: &[0x1A],
    },
    GameField {
        name: "unknown_byte5_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `unknown_byte5` as 0x-prefixed hex text",
        opcodes: &[0x1A],
    },
    GameField {
        name: "unknown_class_tail",
        ty: FieldType::Bytes,
        unit: "",
        description: "Tail of an event of an undocumented class, raw",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "unknown_flag",
        ty: FieldType::Bool,
        unit: "",
        description: "NewPlayerInGame: packed flag of unknown meaning (false in captures)",
        opcodes: &[0x2A],
    },
    GameField {
        name: "unknown_tail",
        ty: FieldType::Bytes,
        unit: "",
        description: "Start-firing event (class 0x8128): 8 unknown bytes (zero in captures)",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "up",
        ty: FieldType::Vec3,
        unit: "",
        description: "StateUpdate flag 0x08: model up axis (+Z), cv3 unit vector",
        opcodes: &[0x1C],
    },
    GameField {
        name: "up.x",
        ty: FieldType::Float,
        unit: "",
        description: "x component of `up`",
        opcodes: &[0x1C],
    },
    GameField {
        name: "up.y",
        ty: FieldType::Float,
        unit: "",
        description: "y component of `up`",
        opcodes: &[0x1C],
    },
    GameField {
        name: "up.z",
        ty: FieldType::Float,
        unit: "",
        description: "z component of `up`",
        opcodes: &[0x1C],
    },
    GameField {
        name: "update_count",
        ty: FieldType::Uint,
        unit: "",
        description: "SCORE_CHANGE: number of extra score updates",
        opcodes: &[0x36],
    },
    GameField {
        name: "updates",
        ty: FieldType::Group,
        unit: "",
        description: "SCORE_CHANGE: the damage-share score updates, one update each",
        opcodes: &[0x36],
    },
    GameField {
        name: "updates.update",
        ty: FieldType::Group,
        unit: "",
        description: "SCORE_CHANGE: one score update (peer id, score)",
        opcodes: &[0x36],
    },
    GameField {
        name: "updates.update.peer_id",
        ty: FieldType::Int,
        unit: "",
        description: "SCORE_CHANGE update: the player's peer id",
        opcodes: &[0x36],
    },
    GameField {
        name: "updates.update.score",
        ty: FieldType::Int,
        unit: "",
        description: "SCORE_CHANGE update: the player's new score",
        opcodes: &[0x36],
    },
    GameField {
        name: "value",
        ty: FieldType::Uint,
        unit: "",
        description: "Byte tail of a subsystem-control or char event whose opcode does not name it",
        opcodes: EVENT_OPCODES,
    },
    GameField {
        name: "velocity",
        ty: FieldType::Vec3,
        unit: "world units/s",
        description: "Ship velocity (cv4f: direction and f32 magnitude); zero for a new ship",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "velocity.x",
        ty: FieldType::Float,
        unit: "world units/s",
        description: "x component of `velocity`",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "velocity.y",
        ty: FieldType::Float,
        unit: "world units/s",
        description: "y component of `velocity`",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "velocity.z",
        ty: FieldType::Float,
        unit: "world units/s",
        description: "z component of `velocity`",
        opcodes: &[0x02, 0x03],
    },
    GameField {
        name: "version_hash",
        ty: FieldType::Hex,
        unit: "",
        description: "ChecksumResponse, round 0 only: reference hash of the game version string",
        opcodes: &[0x21],
    },
    GameField {
        name: "version_hash_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `version_hash` as 0x-prefixed hex text",
        opcodes: &[0x21],
    },
    GameField {
        name: "victim_deaths",
        ty: FieldType::Int,
        unit: "",
        description: "SCORE_CHANGE: the victim's deaths",
        opcodes: &[0x36],
    },
    GameField {
        name: "victim_peer_id",
        ty: FieldType::Int,
        unit: "",
        description: "SCORE_CHANGE: the victim's peer id",
        opcodes: &[0x36],
    },
    GameField {
        name: "weapon_subsystem",
        ty: FieldType::ObjectId,
        unit: "",
        description: "PythonEvent object-pointer tail: the weapon subsystem (weapon fired, phaser or tractor started/stopped)",
        opcodes: &[0x06],
    },
    GameField {
        name: "weapon_subsystem_hex",
        ty: FieldType::Text,
        unit: "",
        description: "(JSON twin) `weapon_subsystem` as 0x-prefixed hex text",
        opcodes: &[0x06],
    },
];

/// The names of a StateUpdate's fields, of its subsystem records' fields
/// (`subsystems.NAME`) and of its power pairs' (`power_block.NAME`), for the code that
/// writes them from the typed StateUpdate without a field tree: the decoder's tree, the
/// JSON writer's direct path, the diff fingerprint and Parquet. Each is an entry of
/// [`GAME_FIELDS`] or the last segment of one (a test checks it), so a StateUpdate
/// field is named here and described there, nowhere else.
pub mod state_update_names {
    pub const OBJECT_ID: &str = "object_id";
    pub const OBJECT_ID_HEX: &str = "object_id_hex";
    pub const GAME_TIME: &str = "game_time";
    pub const FLAGS: &str = "flags";
    pub const FLAGS_HEX: &str = "flags_hex";
    pub const FLAG_NAMES: &str = "flag_names";
    pub const POSITION: &str = "position";
    pub const HASH_PRESENT: &str = "hash_present";
    pub const INTEGRITY_HASH: &str = "integrity_hash";
    pub const INTEGRITY_HASH_HEX: &str = "integrity_hash_hex";
    pub const DELTA: &str = "delta";
    pub const FORWARD: &str = "forward";
    pub const UP: &str = "up";
    pub const RIGHT: &str = "right";
    pub const SPEED: &str = "speed";
    pub const CLOAK: &str = "cloak";
    pub const SUBSYSTEMS_START_INDEX: &str = "subsystems_start_index";
    pub const SUBSYSTEMS_START_NAME: &str = "subsystems_start_name";
    pub const SUBSYSTEMS: &str = "subsystems";
    pub const SUBSYSTEMS_SUMMARY: &str = "subsystems_summary";
    pub const INDEX: &str = "index";
    pub const KEY: &str = "key";
    pub const NAME: &str = "name";
    pub const CONDITION_PCT: &str = "condition_pct";
    pub const CHILDREN_PCT: &str = "children_pct";
    pub const MAIN_BATTERY_PCT: &str = "main_battery_pct";
    pub const BACKUP_BATTERY_PCT: &str = "backup_battery_pct";
    pub const HAS_POWER_DATA: &str = "has_power_data";
    pub const POWER_PCT: &str = "power_pct";
    pub const FACINGS_PCT: &str = "facings_pct";
    pub const POWER_BLOCK: &str = "power_block";
    pub const VALUE: &str = "value";
    pub const POWER_PCT_INTERPRETED: &str = "power_pct_interpreted";
    pub const SUBSYSTEM_START: &str = "subsystem_start";
    pub const SUBSYSTEM_BLOCK_RAW: &str = "subsystem_block_raw";
    pub const FITS_CLASSES: &str = "fits_classes";
    pub const POWER_BLOCK_TRAILING: &str = "power_block_trailing";
    pub const TRAILING: &str = "trailing";
    pub const UNDECODED: &str = "undecoded";
}

/// A registry entry, by its position in [`GAME_FIELDS`]: what a decoder hands a visitor
/// with each field, so that a visitor tests a field by comparing two small numbers
/// instead of its name. Resolved at compile time ([`field!`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldId(u8);

const _: () = assert!(GAME_FIELDS.len() < u8::MAX as usize);

impl FieldId {
    /// A field of another game's decoder (Scrap Mechanic, `sm`), which has no registry:
    /// no entry of [`GAME_FIELDS`], so no Bridge Commander field's id equals it. Such a
    /// field is known by its tree name only.
    pub const OTHER_GAME: FieldId = FieldId(u8::MAX);

    /// The entry at this position of [`GAME_FIELDS`] (`None` past its end).
    pub const fn at(index: usize) -> Option<FieldId> {
        if index < GAME_FIELDS.len() {
            Some(FieldId(index as u8))
        } else {
            None
        }
    }

    /// Its position in [`GAME_FIELDS`] (past its end for [`FieldId::OTHER_GAME`]).
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Its entry; `None` for [`FieldId::OTHER_GAME`].
    pub fn entry(self) -> Option<&'static GameField> {
        GAME_FIELDS.get(self.0 as usize)
    }
}

/// What a decoder names a field with: its registry entry, and the name it has in the
/// field tree (the last segment of the entry's path, or a list element's own name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldName {
    pub id: FieldId,
    pub local: &'static str,
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The entry of a full path (`orientation.w`); evaluated in a constant, an unknown path
/// stops the build.
pub const fn id_of(path: &str) -> FieldId {
    let mut i = 0;
    while i < GAME_FIELDS.len() {
        if same(GAME_FIELDS[i].name, path) {
            return FieldId(i as u8);
        }
        i += 1;
    }
    panic!("no registry entry has this field path")
}

/// The last segment of a path: the name a field has inside its group.
const fn last_segment(path: &str) -> &str {
    let bytes = path.as_bytes();
    let mut i = bytes.len();
    while i > 0 && bytes[i - 1] != b'.' {
        i -= 1;
    }
    let (_, tail) = bytes.split_at(i);
    match std::str::from_utf8(tail) {
        Ok(s) => s,
        Err(_) => panic!("a field path is ASCII"),
    }
}

/// The [`FieldName`] of a full path: its entry, and its last segment as the local name.
pub const fn field_name(path: &'static str) -> FieldName {
    FieldName {
        id: id_of(path),
        local: last_segment(path),
    }
}

/// A list element's [`FieldName`]: elements are unmarked in entry paths, so an element
/// group (`record` in `subsystems`) has the list's entry under its own local name.
pub const fn element_name(list: &'static str, local: &'static str) -> FieldName {
    FieldName {
        id: id_of(list),
        local,
    }
}

/// The [`FieldName`] of a registry path, resolved at compile time: `field!("orientation.w")`
/// (entry `orientation.w`, local name `w`); `field!("subsystems", "record")` for a list
/// element. A path with no entry does not compile.
macro_rules! field {
    ($path:literal) => {{
        const NAME: $crate::game::registry::FieldName = $crate::game::registry::field_name($path);
        NAME
    }};
    ($list:literal, $local:literal) => {{
        const NAME: $crate::game::registry::FieldName =
            $crate::game::registry::element_name($list, $local);
        NAME
    }};
}
pub(crate) use field;

/// The names of a vector's components, `NAME.x` and so on, in wire order.
pub const VECTOR_COMPONENTS: [&str; 3] = ["x", "y", "z"];

/// The prefix a checksum tree repeats before each subdirectory's fields.
const SUBDIR_PREFIX: &str = "subdirs.subdir.";
/// The group whose members are named by the children's keys in the ship layout.
const CHILDREN_PREFIX: &str = "subsystems.children_pct.";
/// The entry that stands for every member of `subsystems.children_pct`.
const CHILD_ENTRY: &str = "subsystems.children_pct.child";

/// The entry of every member of `subsystems.children_pct`: their tree names are data
/// (each child's key in the ship layout), not the entry's, so a reader that compares
/// tree names (the JSON writer's keys) does so for these.
pub const LAYOUT_CHILD: FieldId = id_of(CHILD_ENTRY);

/// The `_hex` twin the JSON writer adds after a field of this entry (`object_id_hex`
/// for `object_id`), if the registry lists one.
pub fn hex_twin(id: FieldId) -> Option<FieldId> {
    let name = format!("{}_hex", id.entry()?.name);
    let i = GAME_FIELDS.binary_search_by(|f| f.name.cmp(&name)).ok()?;
    GAME_FIELDS[i].is_json_twin().then_some(FieldId(i as u8))
}

/// The entry for a field name (list elements unmarked). A member of
/// `subsystems.children_pct` finds the one entry for all children, and a field of a
/// nested checksum tree (`subdirs.subdir.` repeated) the entry of the top-level tree's.
pub fn lookup(name: &str) -> Option<&'static GameField> {
    lookup_id(name).and_then(FieldId::entry)
}

/// The entry of a field name, as [`lookup`] finds it (folded names included).
pub fn lookup_id(name: &str) -> Option<FieldId> {
    let mut name = name;
    while let Some(rest) = name.strip_prefix(SUBDIR_PREFIX) {
        if rest.is_empty() {
            break;
        }
        name = rest;
    }
    if let Some(child) = name.strip_prefix(CHILDREN_PREFIX) {
        if !child.is_empty() && !child.contains('.') {
            name = CHILD_ENTRY;
        }
    }
    GAME_FIELDS
        .binary_search_by(|f| f.name.cmp(name))
        .ok()
        .and_then(FieldId::at)
}

/// The entry of a vector's `k`th component (`position.y` for `position`, 1), if the
/// registry lists it.
pub fn component(vector: &GameField, k: usize) -> Option<&'static GameField> {
    let c = VECTOR_COMPONENTS.get(k)?;
    lookup(&format!("{}.{c}", vector.name))
}

/// The top-level fields under which a bare name can find its field. A path of one
/// name without a selector names that field at any depth where a message has none at
/// the top (`game::path::FieldPath::resolve`), so it may read from: the name itself,
/// where it is a top-level field; the first name of every entry that ends in it
/// (`score` → `updates`, for `updates.update.score`); and, for a field of a checksum
/// tree, the subdirectory list that repeats the tree (`subdirs`, [`SUBDIR_PREFIX`]).
pub fn roots_of(name: &str) -> Vec<&'static str> {
    let mut roots: Vec<&'static str> = Vec::new();
    for f in GAME_FIELDS {
        let under = f
            .name
            .strip_suffix(name)
            .is_some_and(|head| head.ends_with('.'));
        if f.name == name || under {
            let root = f.name.split('.').next().unwrap_or(f.name);
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
    }
    let subdirs = SUBDIR_PREFIX.split('.').next().unwrap_or(SUBDIR_PREFIX);
    if let Some(tree) = lookup(subdirs) {
        let in_tree = roots.iter().any(|r| {
            lookup(r).is_some_and(|e| e.opcodes.iter().any(|op| tree.opcodes.contains(op)))
        });
        if in_tree && !roots.contains(&tree.name) {
            roots.push(tree.name);
        }
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_json_twin_is_the_hex_twin_of_its_field() {
        let mut n = 0;
        for (i, f) in GAME_FIELDS.iter().enumerate() {
            if let Some(base) = f.name.strip_suffix("_hex").filter(|_| f.is_json_twin()) {
                assert_eq!(hex_twin(id_of(base)), FieldId::at(i), "{}", f.name);
                n += 1;
            }
        }
        assert!(n > 0);
        assert_eq!(hex_twin(id_of("speed")), None);
        assert_eq!(hex_twin(FieldId::OTHER_GAME), None);
    }

    #[test]
    fn field_names_resolve_to_their_entries() {
        let w = field!("orientation.w");
        assert_eq!(w.id.entry().map(|e| e.name), Some("orientation.w"));
        assert_eq!(w.local, "w");
        assert_eq!(field!("position").local, "position");
        let record = field!("subsystems", "record");
        assert_eq!(record.id.entry().map(|e| e.name), Some("subsystems"));
        assert_eq!(record.local, "record");
        // Every entry's id leads back to it.
        for (i, f) in GAME_FIELDS.iter().enumerate() {
            let id = FieldId::at(i).expect("an entry's position");
            assert_eq!(id.index(), i);
            assert_eq!(id_of(f.name).entry().map(|e| e.name), Some(f.name));
        }
        assert_eq!(FieldId::at(GAME_FIELDS.len()), None);
        assert!(FieldId::OTHER_GAME.entry().is_none());
    }

    #[test]
    fn lookup_finds_plain_and_folded_names() {
        assert_eq!(lookup("speed").map(|f| f.ty), Some(FieldType::Float));
        assert_eq!(
            lookup("subsystems.children_pct.ventral_phaser_3").map(|f| f.name),
            Some(CHILD_ENTRY)
        );
        assert_eq!(
            lookup("subdirs.subdir.subdirs.subdir.files.file.name_hash").map(|f| f.name),
            Some("files.file.name_hash")
        );
        assert_eq!(
            lookup("subdirs.subdir").map(|f| f.name),
            Some("subdirs.subdir")
        );
        assert!(lookup("no_such_field").is_none());
        assert!(lookup("subsystems.children_pct.").is_none());
    }

    #[test]
    fn bare_names_reach_their_nested_fields() {
        assert_eq!(roots_of("speed"), ["speed"]);
        assert_eq!(roots_of("score"), ["score", "updates"]);
        let name = roots_of("name");
        assert!(name.contains(&"subsystems") && name.contains(&"power_block"));
        // A checksum tree repeats under each subdirectory.
        assert_eq!(roots_of("name_hash"), ["files", "subdirs"]);
        assert_eq!(roots_of("file_count"), ["file_count", "subdirs"]);
        assert!(roots_of("no_such_field").is_empty());
    }

    #[test]
    fn state_update_names_are_registered() {
        use state_update_names::*;
        let top = [
            OBJECT_ID,
            OBJECT_ID_HEX,
            GAME_TIME,
            FLAGS,
            FLAGS_HEX,
            FLAG_NAMES,
            POSITION,
            HASH_PRESENT,
            INTEGRITY_HASH,
            INTEGRITY_HASH_HEX,
            DELTA,
            FORWARD,
            UP,
            RIGHT,
            SPEED,
            CLOAK,
            SUBSYSTEMS_START_INDEX,
            SUBSYSTEMS_START_NAME,
            SUBSYSTEMS,
            SUBSYSTEMS_SUMMARY,
            POWER_BLOCK,
            SUBSYSTEM_START,
            SUBSYSTEM_BLOCK_RAW,
            FITS_CLASSES,
            POWER_BLOCK_TRAILING,
            TRAILING,
            UNDECODED,
        ];
        for n in top {
            assert!(lookup(n).is_some_and(|e| e.opcodes.contains(&0x1C)), "{n}");
        }
        let record = [
            INDEX,
            KEY,
            NAME,
            CONDITION_PCT,
            CHILDREN_PCT,
            MAIN_BATTERY_PCT,
            BACKUP_BATTERY_PCT,
            HAS_POWER_DATA,
            POWER_PCT,
            FACINGS_PCT,
        ];
        for n in record {
            assert!(lookup(&format!("{SUBSYSTEMS}.{n}")).is_some(), "{n}");
        }
        for n in [INDEX, KEY, NAME, VALUE, POWER_PCT_INTERPRETED] {
            assert!(lookup(&format!("{POWER_BLOCK}.{n}")).is_some(), "{n}");
        }
    }

    #[test]
    fn opcode_sets_are_sorted_and_complete() {
        assert_eq!(UNKNOWN_OPCODES.len() + KNOWN_OPCODES.len(), 256);
        for set in [&KNOWN_OPCODES[..], &UNKNOWN_OPCODES[..]] {
            assert!(set.windows(2).all(|w| w[0] < w[1]));
        }
        // That KNOWN_OPCODES are the dispatcher's known opcodes is checked in
        // tests/it/field_registry.rs: the registry imports nothing above it.
        assert_eq!(
            lookup("trailing").map(|f| f.opcodes),
            Some(&KNOWN_OPCODES[..])
        );
    }
}
