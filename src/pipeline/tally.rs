//! What a counting sink (`stats`) reads of a datagram, without its record: per message
//! the transport facts it counts and, of the game message delivered, the opcode, the
//! length and a StateUpdate's flags and subsystem start.
//!
//! A sink that counts only these ([`super::Sink::tallies`]) is handed a tally per
//! datagram instead of a record: no message record is reset, filled, walked and put
//! back for it, and a message's warnings are counted where they arise instead of being
//! copied into lists nobody prints.

use crate::diag::{non_stock_count, Code, Direction, Warning};
use crate::game::GameMessage;
use crate::transport::reliability::SeqOrder;
use crate::transport::stream::{self, Arrival, Content, Header};

/// One BC or GameSpy datagram, as counted.
#[derive(Debug, Clone)]
pub struct Tally {
    pub ts_ns: i64,
    pub direction: Direction,
    /// UDP payload length in bytes.
    pub udp_len: usize,
    /// GameSpy query text (no messages).
    pub gamespy: bool,
    /// The game packet's own warnings (a damaged first byte's included) and, of them,
    /// the non-stock ones.
    pub warnings: u64,
    pub non_stock: u64,
    /// Byte 0 cannot start a game packet in this direction.
    pub damaged: bool,
    /// The transport messages, in datagram order.
    pub messages: Vec<MessageTally>,
}

impl Tally {
    pub fn new() -> Tally {
        Tally {
            ts_ns: 0,
            direction: Direction::C2S,
            udp_len: 0,
            gamespy: false,
            warnings: 0,
            non_stock: 0,
            damaged: false,
            messages: Vec::new(),
        }
    }

    /// Start the tally of a datagram (the message list keeps its storage).
    pub fn start(&mut self, ts_ns: i64, direction: Direction, udp_len: usize) {
        self.ts_ns = ts_ns;
        self.direction = direction;
        self.udp_len = udp_len;
        self.gamespy = false;
        self.warnings = 0;
        self.non_stock = 0;
        self.damaged = false;
        self.messages.clear();
    }

    /// Count packet-level warnings.
    pub fn warn(&mut self, warnings: &[Warning]) {
        self.warnings += warnings.len() as u64;
        self.non_stock += non_stock_count(warnings);
    }
}

impl Default for Tally {
    fn default() -> Self {
        Tally::new()
    }
}

/// One transport message, as counted: what its record would say of it.
#[derive(Debug, Clone, Copy)]
pub struct MessageTally {
    pub transport_type: u8,
    /// Warnings of the message and of the game message it carries (whole or
    /// reassembled, a resent copy's included) and, of them, the non-stock ones.
    pub warnings: u64,
    pub non_stock: u64,
    /// Where a new reliable message's sequence number falls on its counter.
    pub order: Option<SeqOrder>,
    /// New, a resend, or the host's keepalive echo.
    pub copy: stream::Copy,
    pub ack: bool,
    /// An ACK of something already acknowledged.
    pub duplicate_ack: bool,
    /// A fragment of a larger message.
    pub fragment: bool,
    /// The fragment that completed its set.
    pub assembled: bool,
    /// The game message delivered (none for a resent copy).
    pub game: Option<GameTally>,
}

/// A delivered game message, as counted.
#[derive(Debug, Clone, Copy)]
pub struct GameTally {
    pub opcode: u8,
    pub length: usize,
    /// Creations of an object id another live object held.
    pub object_id_conflicts: u64,
    /// A StateUpdate's flags byte and subsystem start.
    pub state_update: Option<(u8, Option<u8>)>,
}

impl MessageTally {
    /// The tally of `a`, and what the message carries for the game layer. Everything
    /// `a` owns is released here ([`Arrival::release`]), as
    /// [`super::record::MessageRecord::take_arrival`] does.
    #[inline]
    pub fn take<'a>(a: &mut Arrival<'a>) -> (MessageTally, Content<'a>) {
        (MessageTally::of(a), a.release())
    }

    /// The transport facts of `a`, as its stream left them.
    #[inline]
    fn of(a: &Arrival) -> MessageTally {
        let (ack, duplicate_ack, fragment) = match &a.header {
            Header::Data { fragment, .. } => (false, false, fragment.is_some()),
            Header::Ack { matched, .. } => (true, matched.duplicate, false),
            Header::Low(_) | Header::Unknown => (false, false, false),
        };
        let mut t = MessageTally {
            transport_type: a.type_byte,
            warnings: 0,
            non_stock: 0,
            order: a.order,
            copy: a.copy,
            ack,
            duplicate_ack,
            fragment,
            assembled: false,
            game: None,
        };
        // Most messages have none: skip the scans.
        if !a.walk_warnings.is_empty() {
            t.warn(a.walk_warnings);
        }
        if !a.warnings.is_empty() {
            t.warn(&a.warnings);
        }
        t
    }

    fn warn(&mut self, warnings: &[Warning]) {
        self.warnings += warnings.len() as u64;
        self.non_stock += non_stock_count(warnings);
    }

    /// The game message the message carries (`assembled`: joined from its fragments).
    #[inline]
    pub fn add_game(&mut self, g: &GameMessage, assembled: bool) {
        let mut conflicts = 0;
        if !g.warnings.is_empty() {
            self.warn(&g.warnings);
            conflicts = g
                .warnings
                .iter()
                .filter(|w| w.code == Code::ObjectIdConflict)
                .count() as u64;
        }
        self.assembled |= assembled;
        // A resent copy is decoded, but not delivered again.
        if matches!(self.copy, stream::Copy::Resend { .. }) {
            return;
        }
        self.game = Some(GameTally {
            opcode: g.opcode,
            length: g.length,
            object_id_conflicts: conflicts,
            state_update: g.state_update().map(|su| (su.flags, su.subsystem_start)),
        });
    }
}
