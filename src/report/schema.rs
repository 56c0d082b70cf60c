//! The JSON contract (`docs/json.md`) as Rust types, from which the JSON Schema files
//! in `docs/schema/` are generated (`schemars`, draft 2020-12).
//!
//! The documents `info`, `flows`, `stats`, `diff` and the decode summary are values of
//! these very types, written by [`super::json_stream::write_doc`]: one definition makes
//! both the output and its schema. Packet records, the bulk of `decode`, are written
//! by [`super::json_stream`] straight from the pipeline's types for speed, and
//! [`PacketRecord`] describes them. The tests validate every command's output against
//! the generated schemas and fail when `docs/schema/` is not what these types generate
//! (`BCWIRE_UPDATE_SCHEMA=1 cargo test --profile test-release --test it json_schema` rewrites it).
//!
//! Keys absent when they do not apply are `Option` with `skip_serializing_if` (not
//! required); keys always present that may be `null` are plain `Option`. Records deny
//! unknown keys, so a misspelt or stray key fails validation.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A count per key; hex keys (`0x1C`) sort as text in numeric order.
pub type Count = BTreeMap<String, u64>;

/// A count per key in the order given (decimal keys in numeric order, which a
/// text-sorted map would not keep: `2` before `10`).
pub struct OrderedCount(pub Vec<(String, u64)>);

impl Serialize for OrderedCount {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl JsonSchema for OrderedCount {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "OrderedCount".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        Count::json_schema(g)
    }
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PacketTag {
    Packet,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SummaryTag {
    Summary,
}

/// Client→server or server→client.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    C2s,
    S2c,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Game,
    Gamespy,
}

/// A problem of the whole capture, with its registered code.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Problem {
    /// snake_case code, as `bcwire list warnings` lists it.
    pub code: String,
    /// `note`, `warn` or `error`.
    pub severity: String,
    /// The `problems` line.
    pub message: String,
}

/// A located diagnostic.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Warning {
    /// snake_case code.
    pub code: String,
    /// Relative to the datagram (packet and transport warnings) or to the game message.
    #[schemars(required, schema_with = "nullable::<u64>")]
    pub offset: Option<u64>,
    pub message: String,
}

/// Decoded fields in wire order: numbers, booleans, strings, arrays, objects.
fn fields_schema(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({
        "type": "object",
        "description": "decoded fields in wire order; a repeated name is one key with an array of values; ids and hex values have a <name>_hex twin",
        "propertyNames": {"minLength": 1},
    })
}

/// `0x` and two upper-case hex digits.
fn opcode_hex_schema(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"type": "string", "pattern": "^0x[0-9A-F]{2}$"})
}

/// `ip:port`, IPv6 as `[addr]:port`.
fn endpoint_schema(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"type": "string", "pattern": "^(\\d+\\.\\d+\\.\\d+\\.\\d+|\\[[0-9a-fA-F:.]+\\]):\\d+$"})
}

/// A key always present whose value is a `T` or `null` (`required` alone would leave
/// the `null` out).
fn nullable<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    let inner = g.subschema_for::<T>();
    schemars::json_schema!({"anyOf": [inner, {"type": "null"}]})
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fragment {
    pub index: u32,
    /// Null except on fragment 0.
    #[schemars(required, schema_with = "nullable::<u32>")]
    pub total: Option<u32>,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ack {
    pub flags: u8,
    #[schemars(required, schema_with = "nullable::<u32>")]
    pub fragment_index: Option<u32>,
    #[schemars(required, schema_with = "nullable::<u64>")]
    pub acked_frame: Option<u64>,
    /// Seconds.
    #[schemars(required, schema_with = "nullable::<f64>")]
    pub delay: Option<f64>,
    pub duplicate: bool,
}

/// The reassembled message, on the fragment that completes a set.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Assembled {
    pub opcode: u8,
    #[schemars(schema_with = "opcode_hex_schema")]
    pub opcode_hex: String,
    pub name: String,
    #[schemars(range(min = 1))]
    pub length: u64,
    pub frames: Vec<u64>,
    #[schemars(schema_with = "fields_schema")]
    pub fields: Map<String, Value>,
    pub warnings: Vec<Warning>,
}

/// One transport message of a game datagram.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub offset: u64,
    pub length: u64,
    pub transport_type: u8,
    pub transport_name: String,
    pub reliable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ordered: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags_len: Option<u16>,
    #[schemars(required, schema_with = "nullable::<u32>")]
    pub seq: Option<u32>,
    #[schemars(required, schema_with = "nullable::<Fragment>")]
    pub fragment: Option<Fragment>,
    pub retransmission: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_frame: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keepalive: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack: Option<Ack>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opcode: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "opcode_hex_schema")]
    pub opcode_hex: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub game_length: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "fields_schema")]
    pub fields: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assembled: Option<Assembled>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relay_of: Option<u64>,
    pub warnings: Vec<Warning>,
}

/// `"type":"packet"`: one BC game or GameSpy datagram (`decode --format jsonl`).
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PacketRecord {
    pub r#type: PacketTag,
    /// The input file as given, when several are read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[schemars(range(min = 1))]
    pub frame: u64,
    pub time: f64,
    /// The capture timestamp in integer nanoseconds since the epoch: exact, where
    /// `time` (a double) keeps about microseconds.
    pub time_ns: i64,
    #[schemars(schema_with = "endpoint_schema")]
    pub src: String,
    #[schemars(schema_with = "endpoint_schema")]
    pub dst: String,
    pub direction: Dir,
    pub session: u64,
    pub client: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_name: Option<String>,
    /// The frame's pcapng packet comment, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    pub udp_length: u64,
    pub kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer_id: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub msg_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^([0-9a-f]{2})*$"))]
    pub plain_hex: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<Message>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<Warning>>,
}

/// One direction of one client (`info`, `flows`): the pipeline's own counter, written
/// as it is.
pub use crate::pipeline::summary::DirSummary as ClientDirection;

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Client {
    pub index: u64,
    #[schemars(required, schema_with = "nullable::<String>")]
    pub addr: Option<String>,
    #[schemars(required, schema_with = "nullable::<String>")]
    pub name: Option<String>,
    #[schemars(required, schema_with = "nullable::<u8>")]
    pub peer_id: Option<u8>,
    #[schemars(required, schema_with = "nullable::<u8>")]
    pub slot: Option<u8>,
    pub ships: Vec<String>,
    pub first_frame: u64,
    pub last_frame: u64,
    pub first_time: f64,
    pub last_time: f64,
    #[schemars(required, schema_with = "nullable::<String>")]
    pub left: Option<String>,
    /// The host's boot reason (transport type 0x04), when it booted the client.
    #[schemars(required, schema_with = "nullable::<u8>")]
    pub boot_reason: Option<u8>,
    #[schemars(required, schema_with = "nullable::<String>")]
    pub boot_reason_name: Option<String>,
    /// The game phase the client reached (null before any game message).
    #[schemars(required, schema_with = "nullable::<String>")]
    pub phase: Option<String>,
    /// A port that only queried the server's GameSpy status: not a game client.
    pub query_only: bool,
    pub c2s: ClientDirection,
    pub s2c: ClientDirection,
}

/// A server instance; a new one starts when every client has left.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Session {
    pub index: u64,
    #[schemars(required, schema_with = "nullable::<String>")]
    pub server: Option<String>,
    pub first_frame: u64,
    pub last_frame: u64,
    pub first_time: f64,
    pub last_time: f64,
    pub clients: Vec<Client>,
}

/// One capture file's facts (`info`; the summary's `capture`, without `file`).
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub format: String,
    pub link_types: Count,
    pub frames: u64,
    pub bytes: u64,
    #[schemars(required, schema_with = "nullable::<f64>")]
    pub first_time: Option<f64>,
    #[schemars(required, schema_with = "nullable::<f64>")]
    pub last_time: Option<f64>,
    /// The same instants in nanoseconds since the epoch, as the capture holds them.
    #[schemars(required, schema_with = "nullable::<i64>")]
    pub first_time_ns: Option<i64>,
    #[schemars(required, schema_with = "nullable::<i64>")]
    pub last_time_ns: Option<i64>,
    pub duration: f64,
    pub game_frames: u64,
    /// Game-port frames whose first byte cannot start a packet (kept as damaged game frames).
    pub damaged_frames: u64,
    pub gamespy_frames: u64,
    /// Frames held as IP fragments of a datagram completed by a later frame.
    pub ip_fragment_frames: u64,
    /// Creations of an id a live object of another owner or class held.
    pub object_id_conflicts: u64,
    pub not_bc: Count,
    /// The UDP ports seen most off the game port, most first.
    pub other_udp_ports: Vec<PortCount>,
    pub problems: Vec<String>,
    /// `problems` again, one object each with its registered code and severity.
    pub problem_codes: Vec<Problem>,
    pub sessions: Vec<Session>,
    /// Only for a compressed capture file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compression: Option<Compression>,
}

/// Datagrams seen on one UDP port.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PortCount {
    pub port: u16,
    pub datagrams: u64,
}

/// How a capture file was compressed.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Compression {
    /// `gzip`, `zstd` or `lz4`.
    pub method: String,
    pub compressed_bytes: u64,
    pub bytes: u64,
    pub ratio: f64,
}

/// `"type":"summary"`: the last record of `decode --format jsonl`.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SummaryRecord {
    pub r#type: SummaryTag,
    pub schema_version: u32,
    /// The capture file the summary closes (decode takes several).
    pub file: String,
    pub frames: u64,
    pub packets: u64,
    pub game_packets: u64,
    pub gamespy_packets: u64,
    pub messages: u64,
    pub warnings: u64,
    pub capture: CaptureInfo,
}

/// `info --format json`: one shape for one file or many.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InfoDocument {
    pub schema_version: u32,
    pub files: Vec<InfoFile>,
}

/// One input of `info`: its facts, or why it could not be read.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum InfoFile {
    Read(Box<CaptureInfo>),
    Failed(FileError),
}

/// An input that could not be read (the others are still listed).
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileError {
    pub file: String,
    pub error: String,
}

/// `flows --format json` of one file.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowsDocument {
    pub schema_version: u32,
    pub sessions: Vec<Session>,
}

/// `flows --format json`: one file's document, or for several files an array of
/// them, each with its file.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
pub enum FlowsOutput {
    One(FlowsDocument),
    Several(Vec<FlowsOfFile>),
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowsOfFile {
    pub file: String,
    pub flows: FlowsDocument,
}

/// Counts of one direction (`stats`).
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatsDirection {
    pub datagrams: u64,
    pub game_datagrams: u64,
    pub gamespy_datagrams: u64,
    pub bytes: u64,
    pub messages: u64,
    /// `"0x32"` → count.
    pub transport_types: Count,
    pub game_messages: u64,
    /// `"0x1C"` → delivered messages (retransmitted copies excluded).
    pub opcodes: Count,
    pub opcode_bytes: Count,
    pub retransmissions: u64,
    pub acks: u64,
    pub duplicate_acks: u64,
    pub fragments: u64,
    pub fragment_sets_completed: u64,
    pub unacked: u64,
    pub warnings: u64,
    pub non_stock: u64,
    /// New reliable messages that skipped sequence numbers, or came below one seen.
    pub seq_gaps: u64,
    pub seq_late: u64,
    /// Creations of an id a live object of another owner or class held.
    pub object_id_conflicts: u64,
    /// `"0x9E"` → StateUpdates with exactly that combination.
    pub dirty_flags: Count,
    /// `"0x80"` → StateUpdates with that bit set.
    pub dirty_bits: Count,
    pub subsystem_start: OrderedCount,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatsDirections {
    pub c2s: StatsDirection,
    pub s2c: StatsDirection,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rate {
    pub start: f64,
    /// The bucket's real length in seconds (the last one may be shorter).
    pub span: f64,
    pub c2s: u64,
    pub s2c: u64,
}

/// `stats --format json`.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatsDocument {
    pub schema_version: u32,
    pub directions: StatsDirections,
    /// How clients left (`disconnect`, `boot: kicked`, …) → count.
    pub departures: Count,
    pub duration: f64,
    /// With `--by`: direction → key → opcode histogram.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<BTreeMap<String, BTreeMap<String, Count>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rates: Option<Vec<Rate>>,
}

/// A flow of `diff`: one direction of one client of one session.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub session: u64,
    pub client: u64,
    pub direction: Dir,
    /// The client's player name, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub player: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpcodeCount {
    pub direction: Dir,
    pub opcode: u8,
    #[schemars(schema_with = "opcode_hex_schema")]
    pub opcode_hex: String,
    pub name: String,
    pub a: u64,
    pub b: u64,
    pub delta: i64,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlagCount {
    pub direction: Dir,
    pub flags: u8,
    #[schemars(schema_with = "opcode_hex_schema")]
    pub flags_hex: String,
    pub a: u64,
    pub b: u64,
    pub delta: i64,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Unmatched {
    pub direction: Dir,
    pub opcode: u8,
    #[schemars(schema_with = "opcode_hex_schema")]
    pub opcode_hex: String,
    pub only_in_a: u64,
    pub only_in_b: u64,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Divergence {
    pub flow: Flow,
    /// A's message index in the flow.
    pub index: u64,
    /// B's message index in the flow.
    pub b_index: u64,
    /// Null where A has no counterpart.
    #[schemars(required, schema_with = "nullable::<u8>")]
    pub a_opcode: Option<u8>,
    #[schemars(required, schema_with = "nullable::<u8>")]
    pub b_opcode: Option<u8>,
}

/// One value that differs: its field path, and each side's value as text (`null`:
/// absent on that side).
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldDifference {
    #[schemars(length(min = 1))]
    pub field: String,
    #[schemars(required, schema_with = "nullable::<String>")]
    pub a: Option<String>,
    #[schemars(required, schema_with = "nullable::<String>")]
    pub b: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldMismatch {
    pub flow: Flow,
    pub index: u64,
    pub b_index: u64,
    pub opcode: u8,
    pub a_frame: u64,
    pub b_frame: u64,
    pub differences: Vec<FieldDifference>,
}

/// How a client of B was paired with a client of A (`diff`): by player name, then
/// slot, then client port, then order, within a session. B's flows are numbered as A's
/// client they were paired with.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientPairing {
    pub session: u64,
    /// A's client number; null for a client B alone has.
    pub a_client: Option<u64>,
    pub a_player: Option<String>,
    /// B's own client number; null for a client A alone has.
    pub b_client: Option<u64>,
    pub b_player: Option<String>,
    /// "name", "slot", "port", "order"; null for a client on one side only.
    pub by: Option<String>,
}

/// `diff --format json`.
#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffDocument {
    pub schema_version: u32,
    pub same: bool,
    pub pairing: Vec<ClientPairing>,
    pub opcodes: Vec<OpcodeCount>,
    pub dirty_flags: Vec<FlagCount>,
    pub flows_only_in_a: Vec<Flow>,
    pub flows_only_in_b: Vec<Flow>,
    pub unmatched: Vec<Unmatched>,
    pub divergences: Vec<Divergence>,
    pub field_differences: Vec<FieldMismatch>,
    /// Field differences of the examined messages left out by `--max-differences`.
    pub more_field_differences: u64,
    /// Whether more messages differed than `--max-differences` let `diff` examine (their
    /// field differences are not counted above).
    pub more_messages_not_examined: bool,
}

/// Every record type: its file name in `docs/schema/` and its schema.
pub fn all() -> Vec<(&'static str, Schema)> {
    vec![
        ("packet.json", schemars::schema_for!(PacketRecord)),
        ("summary.json", schemars::schema_for!(SummaryRecord)),
        ("info.json", schemars::schema_for!(InfoDocument)),
        ("flows.json", schemars::schema_for!(FlowsOutput)),
        ("stats.json", schemars::schema_for!(StatsDocument)),
        ("diff.json", schemars::schema_for!(DiffDocument)),
    ]
}
