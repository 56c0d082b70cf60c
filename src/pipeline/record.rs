//! What the pipeline hands to reports: one record per BC or GameSpy datagram.
//!
//! These are presentation-neutral values; `report` turns them into tables and JSON.

use crate::diag::{Direction, Warning};
use crate::game::stateupdate::UpdatePool;
use crate::game::GameMessage;
use crate::transport::reliability::SeqOrder;
use std::net::SocketAddr;

/// One UDP datagram of a Bridge Commander session.
#[derive(Debug, Clone)]
pub struct PacketRecord {
    /// 1-based frame number in the capture file (the last frame, for IP-fragmented ones).
    pub frame: u64,
    /// Capture timestamp, nanoseconds since the Unix epoch.
    pub ts_ns: i64,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub direction: Direction,
    /// Index of the session (server instance) in the capture, 0-based.
    pub session: usize,
    /// Index of the client within its session, 0-based.
    pub client: usize,
    /// UDP payload length in bytes.
    pub udp_len: usize,
    pub body: PacketBody,
    /// The pcapng packet comment of the frame, if it has one.
    pub comment: Option<String>,
    /// Frames of every IP fragment of the datagram in arrival order (the last is
    /// `frame`); empty when it was not fragmented.
    pub fragment_frames: Vec<u64>,
}

impl PacketRecord {
    /// A record of nothing yet, for the pipeline to fill in place.
    pub fn empty() -> PacketRecord {
        let nowhere = SocketAddr::from(([0, 0, 0, 0], 0));
        PacketRecord {
            frame: 0,
            ts_ns: 0,
            src: nowhere,
            dst: nowhere,
            direction: Direction::C2S,
            session: 0,
            client: 0,
            udp_len: 0,
            body: PacketBody::Game(GamePacket::default()),
            comment: None,
            fragment_frames: Vec::new(),
        }
    }

    /// The game packet of this record, made one (empty) if it held GameSpy text.
    pub fn game_mut(&mut self) -> &mut GamePacket {
        if !matches!(self.body, PacketBody::Game(_)) {
            self.body = PacketBody::Game(GamePacket::default());
        }
        match &mut self.body {
            PacketBody::Game(g) => g,
            PacketBody::GameSpy { .. } => unreachable!("the body was made a game packet"),
        }
    }

    /// The client's UDP port: the source of a client→host datagram, the destination of
    /// a host→client one.
    pub fn client_port(&self) -> u16 {
        match self.direction {
            Direction::C2S => self.src.port(),
            Direction::S2C => self.dst.port(),
        }
    }
}

#[derive(Debug, Clone)]
pub enum PacketBody {
    /// Encrypted game packet, decrypted.
    Game(GamePacket),
    /// GameSpy query text (plain, first byte `\`).
    GameSpy { text: String },
}

#[derive(Debug, Clone, Default)]
pub struct GamePacket {
    pub peer_id: u8,
    pub msg_count: u8,
    /// The whole decrypted datagram (byte 0 = peer id).
    pub plain: Vec<u8>,
    pub messages: Vec<MessageRecord>,
    /// Packet-level problems (count mismatch, trailing bytes, unknown transport type).
    pub warnings: Vec<Warning>,
}

/// One transport message inside a game packet.
#[derive(Debug, Clone)]
pub struct MessageRecord {
    /// Offset of the message's type byte in the decrypted datagram.
    pub offset: usize,
    /// Total bytes of the transport message.
    pub length: usize,
    pub transport_type: u8,
    pub transport: TransportInfo,
    /// Offset of the payload in the decrypted datagram: the game message's opcode byte
    /// for 0x32, the body for connection management. Field spans are relative to it.
    pub payload_offset: Option<usize>,
    /// A copy of a reliable message already seen (not delivered again).
    pub retransmission: bool,
    /// Frame of the first copy, for retransmissions and keepalive repeats.
    pub original_frame: Option<u64>,
    /// A repeated host→client peer-info (type 0x00) message: a keepalive echo, which
    /// repeats its content by design and is neither a retransmission nor a new delivery.
    pub keepalive: bool,
    /// Where a new reliable message's sequence number falls on its counter (in order,
    /// after a gap, late).
    pub order: Option<SeqOrder>,
    /// The decoded game message of a complete (unfragmented) 0x32 message that was
    /// delivered (retransmitted copies are decoded too, but flagged).
    pub game: Option<GameMessage>,
    /// Set on the fragment that completed a set: the reassembled message.
    /// Boxed: rare, and inline it would double the size of every record.
    pub assembled: Option<Box<Assembled>>,
    /// For a host→client copy of a client's message: the frame of the client's original.
    pub relay_of: Option<u64>,
    pub warnings: Vec<Warning>,
}

impl MessageRecord {
    /// The record of the transport message at `offset`, `length` bytes long, before
    /// anything is known of it.
    pub fn blank(offset: usize, length: usize) -> MessageRecord {
        MessageRecord {
            offset,
            length,
            transport_type: 0,
            transport: TransportInfo::Unknown,
            payload_offset: None,
            retransmission: false,
            original_frame: None,
            keepalive: false,
            order: None,
            game: None,
            assembled: None,
            relay_of: None,
            warnings: Vec::new(),
        }
    }

    /// Make this record [`MessageRecord::blank`] again, in place: the pipeline refills
    /// the records of the previous datagram instead of dropping them and moving blank
    /// ones in (a record is some 300 bytes, and there are a few per datagram). The
    /// warning list keeps its capacity.
    pub fn reset(&mut self, offset: usize, length: usize) {
        self.offset = offset;
        self.length = length;
        self.transport_type = 0;
        if !matches!(self.transport, TransportInfo::Unknown) {
            self.transport = TransportInfo::Unknown;
        }
        self.payload_offset = None;
        self.retransmission = false;
        self.original_frame = None;
        self.keepalive = false;
        self.order = None;
        match &self.game {
            // Nothing to free: forgotten, which writes `None` and no more.
            Some(g) if g.owns_nothing() => std::mem::forget(self.game.take()),
            Some(_) => self.game = None,
            None => {}
        }
        if self.assembled.is_some() {
            self.assembled = None;
        }
        self.relay_of = None;
        self.warnings.clear();
    }
}

/// The storage of records already handed out, refilled by later ones: message lists
/// of earlier records (kept whole: the next datagram resets their records in place, see
/// [`MessageRecord::reset`]) and the typed StateUpdates of their messages.
///
/// A list is kept for each message count up to [`LISTED_COUNTS`]: a datagram takes
/// one of its own count, whose records it resets and neither drops nor adds. With a
/// single list, refilled by datagrams of varying counts (one message, then three,
/// then one), surplus records were dropped and missing ones built and moved in (some
/// 300 bytes each) for more than half the datagrams of a stock capture.
#[derive(Default)]
pub struct Spares {
    /// Lists by their number of records (index 0: the list of any other count).
    by_count: [Vec<MessageRecord>; LISTED_COUNTS + 1],
    updates: UpdatePool,
}

/// Message counts with a list of their own in [`Spares`]: datagrams carry a few
/// messages, and a list of each count up to this keeps 36 records (and the list of
/// other counts).
pub const LISTED_COUNTS: usize = 8;

impl Spares {
    pub fn new() -> Spares {
        Spares::default()
    }

    /// A message list of `count` records to refill for the next datagram: of that
    /// count when one is kept, otherwise the list of other counts (to be cut or
    /// extended).
    pub fn messages(&mut self, count: usize) -> Vec<MessageRecord> {
        match self.by_count.get_mut(count) {
            Some(list) if count > 0 && !list.is_empty() => std::mem::take(list),
            _ => std::mem::take(&mut self.by_count[0]),
        }
    }

    /// Where decoding takes StateUpdate storage from.
    pub fn updates(&mut self) -> &mut UpdatePool {
        &mut self.updates
    }

    /// Keep what a handed-out game packet holds for reuse, leaving it empty; its
    /// payload buffer is handed back (it belongs to the front).
    pub fn recycle(&mut self, g: &mut GamePacket) -> Vec<u8> {
        let mut messages = std::mem::take(&mut g.messages);
        for m in &mut messages {
            // Looked at before taking: taking the body out of every other message and
            // putting it back moved it twice for nothing.
            let Some(g) = m.game.as_mut().filter(|g| g.state_update().is_some()) else {
                continue;
            };
            if let Some(su) = g.take_state_update() {
                self.updates.recycle(su);
            }
        }
        let count = messages.len();
        // A list of a count already kept goes to the other counts' place.
        let slot = match self.by_count.get(count) {
            Some(list) if count > 0 && list.is_empty() => count,
            _ => 0,
        };
        self.by_count[slot] = messages;
        std::mem::take(&mut g.plain)
    }
}

/// Transport-level facts, by message type.
#[derive(Debug, Clone)]
pub enum TransportInfo {
    Data {
        flags_len: u16,
        reliable: bool,
        ordered: bool,
        seq: Option<u16>,
        fragment: Option<FragmentRef>,
    },
    Ack {
        seq: u16,
        flags: u8,
        fragment_index: Option<u8>,
        /// Frame of the message this ACK acknowledges, and the delay in ns.
        acked_frame: Option<u64>,
        delay_ns: Option<i64>,
        /// An ACK for something already acknowledged.
        duplicate: bool,
    },
    /// Connection management (0x00, 0x02–0x06).
    Low {
        name: &'static str,
        reliable: bool,
        seq: Option<u16>,
        /// Decoded body, e.g. peer id, address, player name.
        fields: Vec<crate::game::Field>,
    },
    /// A type nobody knows: the walk of the datagram stopped here.
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FragmentRef {
    pub index: u8,
    /// Only fragment 0 carries the total.
    pub total: Option<u8>,
}

/// A reassembled fragmented message.
#[derive(Debug, Clone)]
pub struct Assembled {
    pub game: GameMessage,
    /// The reassembled game message bytes (opcode first).
    pub bytes: Vec<u8>,
    /// Frames the fragments came from, in index order.
    pub frames: Vec<u64>,
}

impl MessageRecord {
    /// The delivered game message, whether whole or reassembled.
    pub fn delivered_game(&self) -> Option<&GameMessage> {
        if self.retransmission {
            return None;
        }
        self.game
            .as_ref()
            .or(self.assembled.as_ref().map(|a| &a.game))
    }

    pub fn seq(&self) -> Option<u16> {
        match &self.transport {
            TransportInfo::Data { seq, .. } | TransportInfo::Low { seq, .. } => *seq,
            TransportInfo::Ack { seq, .. } => Some(*seq),
            TransportInfo::Unknown => None,
        }
    }

    pub fn reliable(&self) -> bool {
        match &self.transport {
            TransportInfo::Data { reliable, .. } | TransportInfo::Low { reliable, .. } => *reliable,
            _ => false,
        }
    }

    pub fn fragment(&self) -> Option<FragmentRef> {
        match &self.transport {
            TransportInfo::Data { fragment, .. } => *fragment,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Code;

    /// A reset record is indistinguishable from a blank one, whatever it held.
    #[test]
    fn a_reset_record_equals_a_blank_one() {
        let mut rec = MessageRecord::blank(3, 9);
        rec.transport_type = 0x32;
        rec.transport = TransportInfo::Low {
            name: "connect",
            reliable: true,
            seq: Some(7),
            fields: Vec::new(),
        };
        rec.payload_offset = Some(5);
        rec.retransmission = true;
        rec.original_frame = Some(11);
        rec.keepalive = true;
        rec.game = Some(crate::game::opcodes::decode(
            &[0x1C],
            &crate::game::opcodes::DecodeContext::new(
                &crate::game::objects::ObjectRegistry::default(),
                &crate::game::ships::ShipCatalog::stock(),
            ),
        ));
        rec.relay_of = Some(2);
        rec.warnings
            .push(Warning::new(Code::DecodeError, Some(1), "x"));
        rec.reset(12, 4);
        assert_eq!(
            format!("{rec:?}"),
            format!("{:?}", MessageRecord::blank(12, 4))
        );
        assert!(
            rec.warnings.capacity() > 0,
            "the warning list keeps its storage"
        );
    }

    /// A record whose game message owns nothing (a StateUpdate whose box went back to
    /// the pool) is reset by forgetting the message: it still ends up blank.
    #[test]
    fn a_record_forgets_a_message_that_owns_nothing() {
        let mut rec = MessageRecord::blank(0, 1);
        let mut game = crate::game::opcodes::decode(
            &[0x1C, 1, 0, 0, 0, 0, 0, 0, 0, 0],
            &crate::game::opcodes::DecodeContext::new(
                &crate::game::objects::ObjectRegistry::default(),
                &crate::game::ships::ShipCatalog::stock(),
            )
            .with_trees(crate::game::opcodes::FieldTrees::None),
        );
        assert!(game.take_state_update().is_some(), "a typed StateUpdate");
        assert!(game.owns_nothing());
        rec.game = Some(game);
        rec.reset(5, 6);
        assert_eq!(
            format!("{rec:?}"),
            format!("{:?}", MessageRecord::blank(5, 6))
        );
    }

    /// Spare lists go back by their count and come out by it: after warm-up a datagram
    /// finds a list of exactly its own count (nothing to cut or add), and one of a count
    /// with no list of its own gets the list of other counts.
    #[test]
    fn spare_lists_are_kept_by_message_count() {
        let packet = |n: usize| GamePacket {
            peer_id: 1,
            msg_count: n as u8,
            plain: vec![1, n as u8],
            messages: (0..n).map(|i| MessageRecord::blank(i, 1)).collect(),
            warnings: Vec::new(),
        };
        let mut spares = Spares::new();
        for n in [1, 3, 1, 2, 3, 12, 0] {
            let plain = spares.recycle(&mut packet(n));
            assert_eq!(plain, vec![1, n as u8], "the payload goes back");
        }
        for n in [1, 2, 3] {
            assert_eq!(spares.messages(n).len(), n, "a list of count {n} is kept");
        }
        // Taken: the next datagram of count 2 finds the list of other counts (the
        // empty list of the last datagram, which had none).
        assert!(spares.messages(2).is_empty());
        // A second list of count 1 went to the place of other counts, and came back
        // out of it; a count beyond the listed ones has no list of its own.
        spares.recycle(&mut packet(1));
        spares.recycle(&mut packet(1));
        assert_eq!(spares.messages(1).len(), 1);
        assert_eq!(spares.messages(LISTED_COUNTS + 1).len(), 1);
        assert!(spares.messages(LISTED_COUNTS + 1).is_empty());
    }
}
