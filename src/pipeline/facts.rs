//! The record facts: what bcwire knows of a datagram and of each transport message
//! beside the decoded game fields, in one table that `-Y`, `--fields` and `bcwire list
//! fields` all read (as Wireshark's field table feeds its tree, filters and exports).
//!
//! Each fact has one name and one meaning everywhere. Aliases are the names a tshark
//! user types for the same value (`frame.number`, `udp.srcport`). The decoded fields of
//! the game messages are named by `crate::game::registry`.

use super::names::Names;
use super::record::{MessageRecord, PacketBody, PacketRecord};
use crate::diag::Direction;
use crate::game::opcodes::FieldTrees;
use std::borrow::Cow;

/// (session, client) → the player name the capture gave that client.
pub type ClientNames = std::collections::HashMap<(usize, usize), String>;

/// Every fact of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fact {
    Frame,
    Time,
    TimeRelative,
    TimeNs,
    Src,
    Dst,
    SrcIp,
    DstIp,
    Ip,
    SrcPort,
    DstPort,
    Port,
    Direction,
    Session,
    Client,
    ClientName,
    ClientPort,
    ClientPeerId,
    PeerId,
    Kind,
    Text,
    UdpLength,
    UdpLengthField,
    Offset,
    Length,
    TransportType,
    Reliable,
    Seq,
    Retransmission,
    Keepalive,
    Fragment,
    FragmentTotal,
    Opcode,
    OpcodeHex,
    Name,
    GameLength,
    ObjectId,
    ObjectIds,
    Object,
    Ship,
    WarningCode,
    WarningKind,
}

impl Fact {
    /// The fact's name: the one place it is spelt. The table below, the JSON and CSV
    /// writers, Parquet and `-Y` all take it from here.
    pub const fn name(self) -> &'static str {
        match self {
            Fact::Frame => "frame",
            Fact::Time => "time",
            Fact::TimeRelative => "time_relative",
            Fact::TimeNs => "time_ns",
            Fact::Src => "src",
            Fact::Dst => "dst",
            Fact::SrcIp => "src_ip",
            Fact::DstIp => "dst_ip",
            Fact::Ip => "ip",
            Fact::SrcPort => "src_port",
            Fact::DstPort => "dst_port",
            Fact::Port => "port",
            Fact::Direction => "direction",
            Fact::Session => "session",
            Fact::Client => "client",
            Fact::ClientName => "client_name",
            Fact::ClientPort => "client_port",
            Fact::ClientPeerId => "client_peer_id",
            Fact::PeerId => "peer_id",
            Fact::Kind => "kind",
            Fact::Text => "text",
            Fact::UdpLength => "udp_length",
            Fact::UdpLengthField => "udp.length",
            Fact::Offset => "offset",
            Fact::Length => "length",
            Fact::TransportType => "transport_type",
            Fact::Reliable => "reliable",
            Fact::Seq => "seq",
            Fact::Retransmission => "retransmission",
            Fact::Keepalive => "keepalive",
            Fact::Fragment => "fragment",
            Fact::FragmentTotal => "fragment_total",
            Fact::Opcode => "opcode",
            Fact::OpcodeHex => "opcode_hex",
            Fact::Name => "name",
            Fact::GameLength => "game_length",
            Fact::ObjectId => "object_id",
            Fact::ObjectIds => "object_ids",
            Fact::Object => "object",
            Fact::Ship => "ship",
            Fact::WarningCode => "warnings.code",
            Fact::WarningKind => "warnings.kind",
        }
    }
}

/// How a fact's value is typed, as `bcwire list fields` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactType {
    Uint,
    /// A number people read in hex: printed `0x1C` as text, a number in JSON.
    Hex,
    Float,
    Bool,
    Text,
}

impl FactType {
    pub fn as_str(self) -> &'static str {
        match self {
            FactType::Uint => "uint",
            FactType::Hex => "hex",
            FactType::Float => "float",
            FactType::Bool => "bool",
            FactType::Text => "text",
        }
    }
}

/// One entry of the table.
#[derive(Debug, Clone, Copy)]
pub struct FactInfo {
    pub fact: Fact,
    /// The name users type, as the JSON records spell it where they carry it.
    pub name: &'static str,
    /// Other names for the same value (tshark's).
    pub aliases: &'static [&'static str],
    pub ty: FactType,
    /// "" where the value has no unit.
    pub unit: &'static str,
    pub description: &'static str,
    /// Whether the fact is of a transport message (absent on a datagram without one,
    /// such as GameSpy's), rather than of the datagram.
    pub per_message: bool,
}

macro_rules! fact {
    ($fact:ident, [$($alias:literal),*], $ty:ident, $unit:literal, $msg:literal, $desc:literal) => {
        FactInfo {
            fact: Fact::$fact,
            name: Fact::$fact.name(),
            aliases: &[$($alias),*],
            ty: FactType::$ty,
            unit: $unit,
            per_message: $msg,
            description: $desc,
        }
    };
}

/// The table, datagram facts first, then those of a transport message and of the game
/// message it carries.
pub const FACTS: &[FactInfo] = &[
    fact!(
        Frame,
        ["frame.number"],
        Uint,
        "",
        false,
        "Frame number in the capture, from 1 (as Wireshark numbers frames)"
    ),
    fact!(
        Time,
        ["frame.time_epoch"],
        Float,
        "s",
        false,
        "Capture time, seconds since the Unix epoch"
    ),
    fact!(
        TimeRelative,
        ["frame.time_relative"],
        Float,
        "s",
        false,
        "Seconds since the first frame of the file (the time the table prints)"
    ),
    fact!(
        TimeNs,
        [],
        Uint,
        "ns",
        false,
        "Capture time, nanoseconds since the Unix epoch"
    ),
    fact!(
        Src,
        [],
        Text,
        "",
        false,
        "Source address and UDP port (ip:port)"
    ),
    fact!(
        Dst,
        [],
        Text,
        "",
        false,
        "Destination address and UDP port (ip:port)"
    ),
    fact!(
        SrcIp,
        ["ip.src", "ipv6.src"],
        Text,
        "",
        false,
        "Source IP address"
    ),
    fact!(
        DstIp,
        ["ip.dst", "ipv6.dst"],
        Text,
        "",
        false,
        "Destination IP address"
    ),
    fact!(
        Ip,
        ["ip.addr", "ipv6.addr"],
        Text,
        "",
        false,
        "Either IP address (source or destination)"
    ),
    fact!(SrcPort, ["udp.srcport"], Uint, "", false, "UDP source port"),
    fact!(
        DstPort,
        ["udp.dstport"],
        Uint,
        "",
        false,
        "UDP destination port"
    ),
    fact!(
        Port,
        ["udp.port"],
        Uint,
        "",
        false,
        "Either UDP port (source or destination)"
    ),
    fact!(
        Direction,
        [],
        Text,
        "",
        false,
        "c2s (client to server) or s2c (server to client)"
    ),
    fact!(
        Session,
        [],
        Uint,
        "",
        false,
        "Game session of the datagram in the capture, from 0"
    ),
    fact!(
        Client,
        [],
        Uint,
        "",
        false,
        "Client of the datagram within its session, from 0; -Y also takes the player's \
         name (client == Worf)"
    ),
    fact!(
        ClientName,
        [],
        Text,
        "",
        false,
        "Player name of the client, as the capture sent it"
    ),
    fact!(ClientPort, [], Uint, "", false, "UDP port of the client"),
    fact!(
        ClientPeerId,
        [],
        Uint,
        "",
        false,
        "Peer id of the client, in both directions: the one the server assigned it (before \
         that is known, the one its datagram carries)"
    ),
    fact!(
        PeerId,
        [],
        Uint,
        "",
        false,
        "Peer id of the game packet header (GameSpy datagrams have none)"
    ),
    fact!(
        Kind,
        [],
        Text,
        "",
        false,
        "What the datagram is: game (enciphered game packet) or gamespy (plain text query)"
    ),
    fact!(Text, [], Text, "", false, "Text of a GameSpy datagram"),
    fact!(UdpLength, [], Uint, "bytes", false, "UDP payload length"),
    fact!(
        UdpLengthField,
        [],
        Uint,
        "bytes",
        false,
        "UDP length field: the 8-byte header plus the payload (as Wireshark's udp.length)"
    ),
    fact!(
        Offset,
        [],
        Uint,
        "bytes",
        true,
        "Offset of the transport message in the decrypted datagram"
    ),
    fact!(
        Length,
        [],
        Uint,
        "bytes",
        true,
        "Length of the transport message, its type byte included"
    ),
    fact!(
        TransportType,
        [],
        Hex,
        "",
        true,
        "Transport message type (0x32 data, 0x01 ACK, 0x00 keepalive, …)"
    ),
    fact!(
        Reliable,
        [],
        Bool,
        "",
        true,
        "Whether the transport message is sent reliably (has a sequence number)"
    ),
    fact!(Seq, [], Uint, "", true, "Reliable sequence number"),
    fact!(
        Retransmission,
        [],
        Bool,
        "",
        true,
        "Whether this reliable message was already seen (same sequence number)"
    ),
    fact!(
        Keepalive,
        [],
        Bool,
        "",
        true,
        "Whether the message is a keepalive"
    ),
    fact!(
        Fragment,
        [],
        Uint,
        "",
        true,
        "Index of this fragment in its fragmented reliable message, from 0"
    ),
    fact!(
        FragmentTotal,
        [],
        Uint,
        "",
        true,
        "Number of fragments of the message (sent in the first fragment)"
    ),
    fact!(
        Opcode,
        [],
        Hex,
        "",
        true,
        "Game opcode of the message (of the message it completes, for a last fragment); \
         -Y also takes the opcode's name (opcode == StateUpdate)"
    ),
    fact!(OpcodeHex, [], Text, "", true, "The opcode as text, 0x1C"),
    fact!(
        Name,
        [],
        Text,
        "",
        true,
        "Name of the game opcode (StateUpdate)"
    ),
    fact!(
        GameLength,
        [],
        Uint,
        "bytes",
        true,
        "Length of the game message, its opcode byte included"
    ),
    fact!(
        ObjectId,
        [],
        Hex,
        "",
        true,
        "Network object id the game message is about"
    ),
    fact!(
        ObjectIds,
        [],
        Hex,
        "",
        true,
        "Every object id the game message names, each once in wire order: its object_id and every other field holding one (target, source, destination, emitter, …); --object ID is object_ids == ID"
    ),
    fact!(
        Object,
        [],
        Text,
        "",
        true,
        "That object described: its ship class, player and slot"
    ),
    fact!(
        Ship,
        [],
        Text,
        "",
        true,
        "Ship class of that object; -Y takes a class name (ship == Akira)"
    ),
    fact!(
        WarningCode,
        [],
        Text,
        "",
        true,
        "Code of a warning on the datagram, the transport message or the game message \
         (bcwire list warnings)"
    ),
    fact!(
        WarningKind,
        [],
        Text,
        "",
        true,
        "Kind of such a warning: malformed, non_stock, unknown, …"
    ),
];

/// Every name users can type for a fact: names, then aliases.
pub fn names() -> impl Iterator<Item = &'static str> {
    FACTS
        .iter()
        .flat_map(|f| std::iter::once(f.name).chain(f.aliases.iter().copied()))
}

/// The fact a name or alias stands for.
pub fn lookup(name: &str) -> Option<&'static FactInfo> {
    FACTS
        .iter()
        .find(|f| f.name == name || f.aliases.contains(&name))
}

/// The field trees a fact is read from. `object_ids` gathers every object id a
/// message names, from the tree at any depth (a StateUpdate's own from its typed
/// value); every other fact reads the record and the typed bodies only.
pub fn trees(fact: Fact) -> FieldTrees {
    match fact {
        Fact::ObjectIds => FieldTrees::TYPED_STATE_UPDATES,
        _ => FieldTrees::None,
    }
}

/// The entry of `fact`.
pub fn info(fact: Fact) -> &'static FactInfo {
    FACTS
        .iter()
        .find(|f| f.fact == fact)
        .expect("every fact has an entry")
}

/// One value of a fact.
#[derive(Debug, Clone, PartialEq)]
pub enum FactValue<'a> {
    Uint(u64),
    /// A number people read in hex.
    Hex(u64),
    Float(f64),
    Bool(bool),
    Text(Cow<'a, str>),
}

/// What a fact is read from.
pub struct RecordCx<'a> {
    pub packet: &'a PacketRecord,
    /// The transport message; none for a GameSpy datagram.
    pub message: Option<&'a MessageRecord>,
    pub names: &'a dyn Names,
    /// The names the whole capture gave its clients, when it was read once already.
    pub client_names: Option<&'a ClientNames>,
    /// Capture time of the file's first frame.
    pub first_ts_ns: i64,
}

impl<'a> RecordCx<'a> {
    /// The game message of the transport message, or the one it completes.
    pub fn game(&self) -> Option<&'a crate::game::GameMessage> {
        let m = self.message?;
        m.game.as_ref().or(m.assembled.as_ref().map(|a| &a.game))
    }

    /// The client's player name, as the capture gave it or as known so far.
    pub fn client_name(&self) -> Option<Cow<'a, str>> {
        let p = self.packet;
        match self
            .client_names
            .and_then(|c| c.get(&(p.session, p.client)))
        {
            Some(n) => Some(Cow::Borrowed(n.as_str())),
            None => self.names.client_name(p.session, p.client).map(Cow::Owned),
        }
    }
}

/// The values of one fact: most facts hold one value, `port` and `ip` two; kept inline
/// so that testing a fact allocates nothing.
pub type FactValues<'a> = smallvec::SmallVec<[FactValue<'a>; 2]>;

/// The values `fact` holds for a record (none where it is absent; two for `port` and
/// `ip`; one per warning for the warning facts), appended to `out`.
pub fn values<'a>(fact: Fact, cx: &RecordCx<'a>, out: &mut FactValues<'a>) {
    let p = cx.packet;
    let game_packet = match &p.body {
        PacketBody::Game(g) => Some(g),
        PacketBody::GameSpy { .. } => None,
    };
    let m = cx.message;
    let text = |s: &'static str| FactValue::Text(Cow::Borrowed(s));
    let owned = |s: String| FactValue::Text(Cow::Owned(s));
    match fact {
        Fact::Frame => out.push(FactValue::Uint(p.frame)),
        Fact::Time => out.push(FactValue::Float(p.ts_ns as f64 / 1e9)),
        Fact::TimeRelative => out.push(FactValue::Float(
            p.ts_ns.saturating_sub(cx.first_ts_ns) as f64 / 1e9,
        )),
        Fact::TimeNs => out.extend(u64::try_from(p.ts_ns).ok().map(FactValue::Uint)),
        Fact::Src => out.push(owned(p.src.to_string())),
        Fact::Dst => out.push(owned(p.dst.to_string())),
        Fact::SrcIp => out.push(owned(p.src.ip().to_string())),
        Fact::DstIp => out.push(owned(p.dst.ip().to_string())),
        Fact::Ip => {
            out.push(owned(p.src.ip().to_string()));
            out.push(owned(p.dst.ip().to_string()));
        }
        Fact::SrcPort => out.push(FactValue::Uint(u64::from(p.src.port()))),
        Fact::DstPort => out.push(FactValue::Uint(u64::from(p.dst.port()))),
        Fact::Port => {
            out.push(FactValue::Uint(u64::from(p.src.port())));
            out.push(FactValue::Uint(u64::from(p.dst.port())));
        }
        Fact::Direction => out.push(text(p.direction.as_str())),
        Fact::Session => out.push(FactValue::Uint(p.session as u64)),
        Fact::Client => out.push(FactValue::Uint(p.client as u64)),
        Fact::ClientName => out.extend(cx.client_name().map(FactValue::Text)),
        Fact::ClientPort => out.push(FactValue::Uint(u64::from(p.client_port()))),
        Fact::ClientPeerId => {
            // The id the server assigned; before that is known, the one the client's
            // own datagram carries.
            let own = game_packet.filter(|_| p.direction == Direction::C2S);
            out.extend(
                cx.names
                    .client_peer_id(p.session, p.client)
                    .or(own.map(|g| g.peer_id))
                    .map(|id| FactValue::Uint(u64::from(id))),
            )
        }
        Fact::PeerId => out.extend(game_packet.map(|g| FactValue::Uint(u64::from(g.peer_id)))),
        Fact::Kind => out.push(text(if game_packet.is_some() {
            "game"
        } else {
            "gamespy"
        })),
        Fact::Text => {
            if let PacketBody::GameSpy { text: t, .. } = &p.body {
                out.push(FactValue::Text(Cow::Borrowed(t.as_str())));
            }
        }
        Fact::UdpLength => out.push(FactValue::Uint(p.udp_len as u64)),
        Fact::UdpLengthField => out.push(FactValue::Uint(p.udp_len as u64 + 8)),
        Fact::Offset => out.extend(m.map(|m| FactValue::Uint(m.offset as u64))),
        Fact::Length => out.extend(m.map(|m| FactValue::Uint(m.length as u64))),
        Fact::TransportType => out.extend(m.map(|m| FactValue::Hex(u64::from(m.transport_type)))),
        Fact::Reliable => out.extend(m.map(|m| FactValue::Bool(m.reliable()))),
        Fact::Seq => out.extend(m.and_then(|m| m.seq()).map(|s| FactValue::Uint(s.into()))),
        Fact::Retransmission => out.extend(m.map(|m| FactValue::Bool(m.retransmission))),
        Fact::Keepalive => out.extend(m.map(|m| FactValue::Bool(m.keepalive))),
        Fact::Fragment => out.extend(
            m.and_then(|m| m.fragment())
                .map(|f| FactValue::Uint(f.index.into())),
        ),
        Fact::FragmentTotal => out.extend(
            m.and_then(|m| m.fragment())
                .and_then(|f| f.total)
                .map(|t| FactValue::Uint(t.into())),
        ),
        Fact::Opcode => out.extend(cx.game().map(|g| FactValue::Hex(g.opcode.into()))),
        Fact::OpcodeHex => out.extend(
            cx.game()
                .map(|g| owned(crate::game::field::hex_padded(g.opcode.into()))),
        ),
        Fact::Name => out.extend(cx.game().map(|g| text(g.name))),
        Fact::GameLength => out.extend(cx.game().map(|g| FactValue::Uint(g.length as u64))),
        Fact::ObjectIds => {
            if let Some(g) = cx.game() {
                let mut ids = Vec::new();
                crate::game::message::mentioned_objects(g, &mut ids);
                out.extend(ids.into_iter().map(|id| FactValue::Hex(id.into())));
            }
        }
        Fact::ObjectId => out.extend(
            cx.game()
                .and_then(|g| g.object_id())
                .map(|o| FactValue::Hex(o.into())),
        ),
        Fact::Object => {
            let obj = cx.game().and_then(|g| g.object_id());
            out.extend(
                obj.and_then(|o| cx.names.describe_object(p.session, o))
                    .map(owned),
            );
        }
        Fact::Ship => {
            let obj = cx.game().and_then(|g| g.object_id());
            out.extend(
                obj.and_then(|o| cx.names.object_class(p.session, o))
                    .map(owned),
            );
        }
        Fact::WarningCode | Fact::WarningKind => {
            let packet_warnings = game_packet.map_or(&[][..], |g| &g.warnings[..]);
            let message_warnings = m.map_or(&[][..], |m| &m.warnings[..]);
            let game_warnings = cx.game().map_or(&[][..], |g| &g.warnings[..]);
            for w in packet_warnings
                .iter()
                .chain(message_warnings)
                .chain(game_warnings)
            {
                out.push(text(if fact == Fact::WarningCode {
                    w.code.as_str()
                } else {
                    w.code.kind().as_str()
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_typeable() {
        let mut seen = std::collections::BTreeSet::new();
        for f in FACTS {
            for n in std::iter::once(&f.name).chain(f.aliases) {
                assert!(seen.insert(*n), "{n} is named twice");
                assert!(
                    n.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_.".contains(c)),
                    "{n}"
                );
            }
            assert!(!f.description.is_empty());
            assert_eq!(info(f.fact).name, f.name);
        }
    }
}
