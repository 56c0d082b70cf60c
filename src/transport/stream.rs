//! The transport streams of a capture: reliability tracking, fragment reassembly and
//! the facts of connection-management messages, fed one transport message at a time.
//! What comes out says what the message is to the receiver — a new message, a resend
//! or the host's keepalive echo; a whole game payload, a fragment held, a reassembled
//! payload; its header as typed values (an ACK with what it matched, a
//! connection-management body with its player name read once); what it means to the
//! client's stay — so the pipeline only wires the stages and never reads a transport
//! message's bytes itself.

use super::facts::SessionFacts;
use super::low::{LowBody, LowKind};
use super::packet::{FragmentHeader, Message, MessageBody};
use super::reassembly::{Fragment, PushOutcome, Reassembled, Reassembler};
use super::reliability::{AckOutcome, Delivery, SeqKey, SeqOrder, Tracker};
use crate::diag::{Code, Direction, Warning};

/// A stream: capture session, client within it, and direction.
pub type StreamKey = (usize, usize, Direction);

/// A client: capture session and client within it.
pub type ClientKey = (usize, usize);

/// Whether a message is news to its receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copy {
    /// First copy (or not reliable): delivered.
    New,
    /// A resend of a reliable message first seen in `first_frame`: not delivered again.
    Resend { first_frame: u64 },
    /// The host's once-a-second echo of a client's peer info (`variants.md`): the host
    /// logs these as new sends, so they are not resends; not delivered again.
    Keepalive { first_frame: u64 },
}

impl Copy {
    pub fn is_new(self) -> bool {
        self == Copy::New
    }
}

/// What a message carries for the layers above.
#[derive(Debug)]
pub enum Content<'a> {
    /// Nothing to decode (a low-type message, an empty or unknown one).
    Nothing,
    /// A whole game message (opcode first) at `offset` in the datagram.
    Game { bytes: &'a [u8], offset: usize },
    /// A fragment that is a resend, or one kept until its set is complete.
    FragmentHeld,
    /// The fragment that completed its set: the joined game message. Boxed: rare, and
    /// inline it would double the size of every arrival (returned per message).
    Reassembled(Box<Reassembled>),
}

/// The header of a transport message, by type: what the records show of it.
#[derive(Debug)]
pub enum Header<'a> {
    Data {
        flags_len: u16,
        reliable: bool,
        ordered: bool,
        seq: Option<u16>,
        fragment: Option<FragmentHeader>,
    },
    /// An ACK and the message it acknowledged, if any.
    Ack {
        seq: u16,
        flags: u8,
        fragment_index: Option<u8>,
        matched: AckMatch,
    },
    /// Connection management (0x00, 0x02–0x06). Boxed: rare, and inline it would
    /// double the size of every arrival.
    Low(Box<LowFacts<'a>>),
    /// A type nobody knows: the walk of the datagram stopped here.
    Unknown,
}

/// A connection-management message as the layers above see it: the typed body, with
/// what it refers to in the datagram already read out (the game layer turns it into
/// named fields without going back to the bytes).
#[derive(Debug)]
pub struct LowFacts<'a> {
    pub kind: LowKind,
    pub reliable: bool,
    pub seq: Option<u16>,
    /// Datagram offsets of the body.
    pub payload: std::ops::Range<usize>,
    pub body: &'a LowBody,
    /// The player name of a peer-info body, decoded from UTF-16LE.
    pub name: Option<String>,
    /// The body's bytes (what a body without the stock shape is shown as).
    pub raw: &'a [u8],
}

/// What a connection-management message means to the client's stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StayEvent {
    /// The client's connect request.
    Connect,
    /// A disconnect, either way.
    Disconnect,
    /// A boot that sends the client away (not the one that lets it in).
    Boot,
}

/// What an ACK acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckMatch {
    /// Frame of the acknowledged message, when it was matched.
    pub acked_frame: Option<u64>,
    /// Time from that message to this ACK.
    pub delay_ns: Option<i64>,
    /// The message was already acknowledged (or too old to tell).
    pub duplicate: bool,
}

/// One transport message as its stream sees it.
#[derive(Debug)]
pub struct Arrival<'a> {
    pub copy: Copy,
    /// Whether it carries a reliable sequence number.
    pub reliable: bool,
    /// Where its sequence number falls on its counter (new reliable messages only).
    pub order: Option<SeqOrder>,
    pub content: Content<'a>,
    pub header: Header<'a>,
    /// The transport type byte.
    pub type_byte: u8,
    /// Offset of the payload in the datagram: a whole game message's opcode, a
    /// connection-management body (none for ACKs and fragments).
    pub payload_offset: Option<usize>,
    /// Set when the message starts or ends the client's stay.
    pub stay: Option<StayEvent>,
    /// Warnings of the transport walk for this message.
    pub walk_warnings: &'a [Warning],
    /// Sequence and reassembly warnings, located in the datagram.
    pub warnings: Vec<Warning>,
}

/// Every stream of a capture.
#[derive(Default)]
pub struct Streams {
    tracker: Tracker<StreamKey>,
    reassembler: Reassembler<StreamKey>,
    facts: SessionFacts<ClientKey>,
}

/// What a stream leaves when it can receive no more: its reliable messages never
/// acknowledged, and its fragment sets never completed.
pub struct StreamEnd {
    pub unacked: usize,
    pub incomplete: Vec<crate::transport::reassembly::Incomplete<StreamKey>>,
}

impl Streams {
    pub fn new() -> Streams {
        Streams::default()
    }

    /// A datagram of a client arrived (its peer id, for the client's facts).
    pub fn on_datagram(
        &mut self,
        client: &ClientKey,
        dir: Direction,
        peer_id: u8,
        ts_ns: i64,
        frame: u64,
    ) {
        self.facts.on_datagram(client, dir, peer_id, ts_ns, frame);
    }

    /// What the clients' connection management said so far (names, peer ids, …).
    pub fn facts(&self) -> &SessionFacts<ClientKey> {
        &self.facts
    }

    /// The facts of a client whose session ended, taken out (`end_ns`: the session's
    /// last time, for a silence still open).
    pub fn finish_client(
        &mut self,
        client: &ClientKey,
        end_ns: i64,
    ) -> Option<crate::transport::facts::ClientFacts> {
        self.facts.finish_client(client, end_ns)
    }

    /// End one stream: what it leaves unacknowledged and incomplete.
    pub fn finish_stream(&mut self, stream: &StreamKey) -> StreamEnd {
        StreamEnd {
            unacked: self.tracker.finish_stream(stream).len(),
            incomplete: self.reassembler.finish_stream(stream),
        }
    }

    /// End the run: the reliability tracker's report, and the fragment sets still
    /// open with the number of those not listed.
    pub fn finish(
        self,
    ) -> (
        crate::transport::reliability::ReliabilityReport<StreamKey>,
        Vec<crate::transport::reassembly::Incomplete<StreamKey>>,
        u64,
    ) {
        let (leftover, not_listed) = self.reassembler.finish();
        (self.tracker.finish(), leftover, not_listed)
    }

    /// Follow one transport message of `stream` found in the decrypted datagram
    /// `plain`, writing what it is into `arrival` (made by [`Arrival::of`] of the same
    /// message). Filled in place: returned by value, the arrival (some 170 bytes) was
    /// built on this function's stack and copied out by a `memcpy` call per message.
    pub fn on_message<'a>(
        &mut self,
        arrival: &mut Arrival<'a>,
        stream: StreamKey,
        m: &'a Message,
        plain: &'a [u8],
        ts_ns: i64,
        frame: u64,
    ) {
        let (session, client, dir) = stream;
        let bytes = plain.get(m.offset..m.offset + m.len).unwrap_or_default();
        if let Some(key) = SeqKey::of_message(m) {
            arrival.reliable = true;
            match self.tracker.on_message(&stream, key, bytes, ts_ns, frame) {
                Delivery::New { order, .. } => {
                    arrival.order = Some(order);
                    arrival.warnings.extend(order_warning(order, key, m.offset));
                }
                Delivery::Retransmission { first, .. } => {
                    let first_frame = first.frame;
                    arrival.copy = if dir == Direction::S2C && is_peer_info(&m.body) {
                        Copy::Keepalive { first_frame }
                    } else {
                        Copy::Resend { first_frame }
                    };
                }
            }
        }
        match &m.body {
            MessageBody::Data(data) => {
                arrival.header = Header::Data {
                    flags_len: data.flags_len,
                    reliable: data.reliable,
                    ordered: data.ordered,
                    seq: data.seq,
                    fragment: data.fragment,
                };
                if data.fragment.is_none() {
                    arrival.payload_offset = Some(data.payload.start);
                }
                let payload = plain.get(data.payload.clone()).unwrap_or_default();
                arrival.content = match data.fragment {
                    None if payload.is_empty() => Content::Nothing,
                    None => Content::Game {
                        bytes: payload,
                        offset: data.payload.start,
                    },
                    Some(f) if arrival.copy.is_new() => {
                        let result = self.reassembler.push(
                            &stream,
                            Fragment {
                                seq: data.seq.unwrap_or(0),
                                index: f.index,
                                total: f.total,
                                chunk: payload,
                                offset: m.offset,
                                frame,
                                time_ns: ts_ns,
                            },
                        );
                        arrival.warnings.extend(result.warnings);
                        match result.outcome {
                            PushOutcome::Complete(done) => Content::Reassembled(Box::new(done)),
                            _ => Content::FragmentHeld,
                        }
                    }
                    Some(_) => Content::FragmentHeld,
                };
            }
            MessageBody::Ack(ack) => {
                let reverse = (session, client, opposite(dir));
                let outcome = self
                    .tracker
                    .on_ack(&reverse, SeqKey::of_ack(ack), ts_ns, frame);
                let matched = match outcome {
                    AckOutcome::Matched {
                        message, delay_ns, ..
                    } => AckMatch {
                        acked_frame: Some(message.frame),
                        delay_ns: Some(delay_ns),
                        duplicate: false,
                    },
                    AckOutcome::Duplicate { .. } | AckOutcome::Stale { .. } => AckMatch {
                        acked_frame: None,
                        delay_ns: None,
                        duplicate: true,
                    },
                    AckOutcome::Unknown => AckMatch {
                        acked_frame: None,
                        delay_ns: None,
                        duplicate: false,
                    },
                };
                arrival.header = Header::Ack {
                    seq: ack.seq,
                    flags: ack.flags,
                    fragment_index: ack.fragment_index,
                    matched,
                };
            }
            MessageBody::Low(low) => {
                // The name is read here once, for the client's facts and the record.
                let name = low.body.name(plain);
                self.facts
                    .on_low(&(session, client), dir, low, name.as_deref(), ts_ns, frame);
                arrival.stay = match (low.kind, dir) {
                    (LowKind::Connect, Direction::C2S) => Some(StayEvent::Connect),
                    (LowKind::Disconnect | LowKind::ShortDisconnect, _) => {
                        Some(StayEvent::Disconnect)
                    }
                    (LowKind::Boot, _) if low.ends_stay() => Some(StayEvent::Boot),
                    _ => None,
                };
                arrival.payload_offset = Some(low.payload.start);
                arrival.header = Header::Low(Box::new(LowFacts {
                    kind: low.kind,
                    reliable: low.reliable,
                    seq: low.seq,
                    payload: low.payload.clone(),
                    body: &low.body,
                    name,
                    raw: plain.get(low.payload.clone()).unwrap_or_default(),
                }));
            }
            MessageBody::Unknown { .. } => {}
        }
    }
}

impl<'a> Arrival<'a> {
    /// Message `m` of the decrypted datagram `plain` before its stream said anything
    /// of it: a new copy carrying nothing, its type byte and walk warnings.
    #[inline]
    pub fn of(m: &'a Message, plain: &'a [u8]) -> Arrival<'a> {
        Arrival {
            copy: Copy::New,
            reliable: false,
            order: None,
            content: Content::Nothing,
            header: Header::Unknown,
            type_byte: plain.get(m.offset).copied().unwrap_or(0),
            payload_offset: None,
            stay: None,
            walk_warnings: &m.warnings,
            warnings: Vec::new(),
        }
    }

    /// Releases everything the arrival owns once its reader has taken what it needs:
    /// the content handed back, a connection-management header and the warning list
    /// dropped. What is left owns nothing, so that the caller can forget it rather
    /// than run its out-of-line drop per message.
    #[inline]
    pub fn release(&mut self) -> Content<'a> {
        // Every field named, none skipped: a field added to `Arrival` stops the build
        // here until this function releases what it owns.
        let Arrival {
            copy: _,
            reliable: _,
            order: _,
            content: _,
            header: _,
            type_byte: _,
            payload_offset: _,
            stay: _,
            walk_warnings: _,
            warnings: _,
        } = self;
        drop(std::mem::take(&mut self.warnings));
        if matches!(self.header, Header::Low(_)) {
            self.header = Header::Unknown;
        }
        std::mem::replace(&mut self.content, Content::Nothing)
    }
}

impl StayEvent {
    /// Whether the client is gone after it: a disconnect or a boot.
    pub fn ends_stay(self) -> bool {
        self != StayEvent::Connect
    }
}

fn opposite(d: Direction) -> Direction {
    match d {
        Direction::C2S => Direction::S2C,
        Direction::S2C => Direction::C2S,
    }
}

fn is_peer_info(body: &MessageBody) -> bool {
    matches!(body, MessageBody::Low(l) if l.kind == LowKind::PeerInfo)
}

/// A gap or a late arrival on a reliable counter, located at the message.
fn order_warning(order: SeqOrder, key: SeqKey, offset: usize) -> Option<Warning> {
    let counter = key.counter.as_str();
    let seq = key.seq;
    match order {
        SeqOrder::InOrder | SeqOrder::Wrap { .. } => None,
        SeqOrder::Gap { after, missing } => Some(Warning::new(
            Code::SeqGap,
            Some(offset),
            format!(
                "{counter} sequence number {seq} follows {after}: {missing} number(s) never seen"
            ),
        )),
        SeqOrder::Late { position } => Some(Warning::new(
            Code::SeqOutOfOrder,
            Some(offset),
            format!("{counter} sequence number {seq} arrives after {position} (out of order)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::packet::{emit_packet, parse, Ack, Counter, DataMessage};

    fn follow<'a>(
        s: &mut Streams,
        stream: StreamKey,
        m: &'a Message,
        plain: &'a [u8],
        ts_ns: i64,
        frame: u64,
    ) -> Arrival<'a> {
        let mut a = Arrival::of(m, plain);
        s.on_message(&mut a, stream, m, plain, ts_ns, frame);
        a
    }

    // A reliable data message from the client, its resend, the host's ACK.
    #[test]
    fn new_resend_and_ack_as_the_receiver_sees_them() {
        let mut s = Streams::new();
        let c2s = (0, 0, Direction::C2S);
        let s2c = (0, 0, Direction::S2C);
        let game = [0x2a, 0x20];
        let body = MessageBody::Data(DataMessage::new(Some(1), false, None, game.len()).unwrap());
        let data = emit_packet(2, &[(&body, &game)]).unwrap();
        let p = parse(&data);
        let first = follow(&mut s, c2s, &p.messages[0], &data, 0, 1);
        assert_eq!(first.copy, Copy::New);
        assert!(first.reliable);
        assert!(matches!(first.content, Content::Game { bytes, .. } if bytes == [0x2a, 0x20]));
        let again = follow(&mut s, c2s, &p.messages[0], &data, 1_000_000_000, 2);
        assert_eq!(again.copy, Copy::Resend { first_frame: 1 });
        let ack_body = MessageBody::Ack(Ack::new(1, Counter::Data, None));
        let ack = emit_packet(1, &[(&ack_body, &[])]).unwrap();
        let pa = parse(&ack);
        let a = follow(&mut s, s2c, &pa.messages[0], &ack, 1_500_000_000, 3);
        match a.header {
            Header::Ack { matched: m, .. } => {
                assert_eq!(m.acked_frame, Some(1));
                // The delay runs from the latest copy, the one the ACK answers.
                assert_eq!(m.delay_ns, Some(500_000_000));
            }
            other => panic!("{other:?}"),
        }
    }
}
