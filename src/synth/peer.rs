//! Per-link transport state of one endpoint (README §4–5): the two sequence counters,
//! ACKs owed to the other side, reliable messages waiting for their ACK, the stale-ACK
//! habit of stock peers, and packing messages into datagrams of at most 512 bytes.

use super::model::{AckHabit, Model};
use super::rng::Rng;
use crate::transport::low::LowKind;
use crate::transport::packet::{
    emit_message, Ack, Counter, DataMessage, FragmentHeader, LowMessage, MessageBody,
};
use crate::transport::reliability::SeqKey;
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

/// Largest datagram a stock peer sends (README §3).
pub const MAX_DATAGRAM: usize = 512;
/// Largest transport message of one fragment: the captured 412-byte fragments.
pub const MAX_FRAGMENT_MESSAGE: usize = 412;
/// First retransmission after 1 s, then +1 s per retry up to 5 s (flows.md §3.4).
const FIRST_RESEND: f64 = 1.0;
const MAX_RESEND_GAP: f64 = 5.0;
const MAX_TRIES: u32 = 9;
/// Stock clients resend fragments about every 2 s even after the ACK (README §5).
const FRAGMENT_QUIRK_GAP: f64 = 2.0;
/// ACKs remembered for stale re-sends.
const ACK_HISTORY: usize = 24;
/// Received reliable keys remembered to recognise copies.
const RECEIVED_MEMORY: usize = 512;

/// What the receiver does with a reliable message once all of it has arrived.
#[derive(Debug, Clone)]
pub enum Note {
    None,
    Connect,
    ConnectReply(u8),
    PeerInfo,
    ChecksumRequest(u8),
    ChecksumReply(u8),
    GameInit,
    NewPlayer,
    MissionInit,
    /// A client message the host copies to the other clients (0x03, 0x07, 0x08, 0x19,
    /// 0x1A); `hit` is a weapon hit the host applies: (target slot, amount).
    Relay {
        game: Rc<[u8]>,
        hit: Option<(usize, f32)>,
    },
    /// 0x15 CollisionEffect: the host damages the sender's ship (`amount`, wire scale),
    /// the ship in slot `other` counting as the one that did it.
    Collision {
        other: usize,
        amount: f32,
    },
    /// Chat: echoed to every client, sender included.
    Chat(Rc<[u8]>),
    Disconnect,
}

/// One transport message as sent, with what the report needs to know about it.
#[derive(Debug, Clone)]
pub struct Msg {
    pub bytes: Rc<[u8]>,
    pub kind: Kind,
    pub note: Note,
}

#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Ack(Ack),
    /// Unreliable StateUpdate: dirty flags and subsystem start index.
    State {
        flags: u8,
        start: Option<u8>,
    },
    Reliable {
        key: SeqKey,
        /// Game opcode (of the whole message, for fragments too); `None` for low types.
        opcode: Option<u8>,
        /// (index, total) of a fragment.
        fragment: Option<(u8, u8)>,
    },
}

impl Msg {
    pub fn ack(a: Ack) -> Msg {
        let mut v = Vec::with_capacity(5);
        emit_message(&mut v, &MessageBody::Ack(a), &[]);
        Msg {
            bytes: v.into(),
            kind: Kind::Ack(a),
            note: Note::None,
        }
    }

    /// An unreliable 0x32 message carrying a StateUpdate.
    pub fn state(game: &[u8], flags: u8, start: Option<u8>) -> Msg {
        let d = DataMessage::new(None, false, None, game.len()).expect("StateUpdate fits");
        let mut v = Vec::with_capacity(3 + game.len());
        emit_message(&mut v, &MessageBody::Data(d), game);
        Msg {
            bytes: v.into(),
            kind: Kind::State { flags, start },
            note: Note::None,
        }
    }

    fn wire_len(&self) -> usize {
        self.bytes.len()
    }
}

struct Inflight {
    msg: Msg,
    last_sent: f64,
    next_resend: f64,
    tries: u32,
    acked: bool,
    /// Fragment re-sends still to come after the ACK (stock client habit).
    quirk_left: u8,
}

/// A fragment set being received.
struct Partial {
    seq: u16,
    total: u8,
    got: u32,
    note: Note,
}

/// One endpoint's side of one host–client link.
pub struct Link {
    /// Byte 0 of the datagrams this endpoint sends.
    pub peer_id: u8,
    low_seq: u16,
    data_seq: u16,
    owed: Vec<Ack>,
    history: VecDeque<Ack>,
    outbox: VecDeque<Msg>,
    inflight: Vec<Inflight>,
    received: HashSet<SeqKey>,
    received_order: VecDeque<SeqKey>,
    partials: Vec<Partial>,
    /// Resend fragments after their ACK like stock clients do.
    pub fragment_quirk: bool,
    /// Send no ACKs at all (a peer whose acknowledgements stopped): the other side
    /// keeps resending while its counter moves on.
    pub acks_muted: bool,
    /// Resend unacknowledged messages until the end instead of giving up after
    /// `MAX_TRIES`: a host that holds on to a peer which still talks but no longer ACKs.
    pub resend_forever: bool,
    /// Time of the last datagram sent on this link.
    pub last_send: f64,
    stale_next: bool,
    last_low: Option<u16>,
    /// ACKs sent once that go again in the following datagrams: (ACK, sendings left).
    backlog: VecDeque<(Ack, u8)>,
    habit: AckHabit,
}

impl Link {
    pub fn new(peer_id: u8, fragment_quirk: bool) -> Link {
        Link {
            peer_id,
            low_seq: 0,
            data_seq: 0,
            owed: Vec::new(),
            history: VecDeque::with_capacity(ACK_HISTORY),
            outbox: VecDeque::new(),
            inflight: Vec::new(),
            received: HashSet::new(),
            received_order: VecDeque::new(),
            partials: Vec::new(),
            fragment_quirk,
            acks_muted: false,
            resend_forever: false,
            last_send: f64::NEG_INFINITY,
            stale_next: false,
            last_low: None,
            backlog: VecDeque::new(),
            habit: AckHabit::NONE,
        }
    }

    /// The ACK habits of `model` for a client's or the host's end of the link.
    pub fn with_habits(mut self, model: &Model, host: bool) -> Link {
        self.habit = if host {
            model.host_acks
        } else {
            model.client_acks
        };
        self
    }

    /// Queue a reliable low-type message (connect, peer info, disconnect).
    pub fn send_low(&mut self, kind: LowKind, payload: &[u8], note: Note) {
        let seq = self.low_seq;
        self.low_seq = self.low_seq.wrapping_add(1);
        let m = LowMessage::new(kind, Some(seq), true, payload.len()).expect("low payload fits");
        let mut v = Vec::with_capacity(5 + payload.len());
        emit_message(&mut v, &MessageBody::Low(m), payload);
        self.outbox.push_back(Msg {
            bytes: v.into(),
            kind: Kind::Reliable {
                key: SeqKey {
                    counter: Counter::Low,
                    seq,
                    fragment: None,
                },
                opcode: None,
                fragment: None,
            },
            note,
        });
    }

    /// Queue a reliable game message; fragmented when one message would exceed 412
    /// bytes (README §4.4: all fragments share one sequence number).
    pub fn send_game(&mut self, game: &[u8], note: Note) {
        let seq = self.data_seq;
        self.data_seq = self.data_seq.wrapping_add(1);
        let opcode = game.first().copied();
        if 5 + game.len() <= MAX_FRAGMENT_MESSAGE {
            let d = DataMessage::new(Some(seq), false, None, game.len()).expect("fits");
            let mut v = Vec::with_capacity(5 + game.len());
            emit_message(&mut v, &MessageBody::Data(d), game);
            self.outbox.push_back(Msg {
                bytes: v.into(),
                kind: Kind::Reliable {
                    key: SeqKey {
                        counter: Counter::Data,
                        seq,
                        fragment: None,
                    },
                    opcode,
                    fragment: None,
                },
                note,
            });
            return;
        }
        let first = MAX_FRAGMENT_MESSAGE - 7;
        let other = MAX_FRAGMENT_MESSAGE - 6;
        let total = 1 + (game.len() - first).div_ceil(other);
        let total = u8::try_from(total).expect("at most 255 fragments");
        let mut at = 0;
        for index in 0..total {
            let n = if index == 0 { first } else { other }.min(game.len() - at);
            let chunk = &game[at..at + n];
            at += n;
            let header = FragmentHeader {
                index,
                total: (index == 0).then_some(total),
            };
            let d = DataMessage::new(Some(seq), false, Some(header), n).expect("fits");
            let mut v = Vec::with_capacity(7 + n);
            emit_message(&mut v, &MessageBody::Data(d), chunk);
            self.outbox.push_back(Msg {
                bytes: v.into(),
                kind: Kind::Reliable {
                    key: SeqKey {
                        counter: Counter::Data,
                        seq,
                        fragment: Some(index),
                    },
                    opcode,
                    fragment: Some((index, total)),
                },
                note: note.clone(),
            });
        }
    }

    /// Something is waiting to go out (ACKs, new or due reliable messages).
    pub fn has_pending(&self, now: f64) -> bool {
        !self.owed.is_empty()
            || !self.outbox.is_empty()
            || self.inflight.iter().any(|f| f.next_resend <= now)
    }

    /// New reliable messages or ACKs not yet sent (due re-sends and the ACK backlog
    /// wait for the next turn).
    pub fn has_new(&self) -> bool {
        !self.owed.is_empty() || !self.outbox.is_empty()
    }

    pub fn owes_acks(&self) -> bool {
        !self.owed.is_empty()
    }

    /// Owe one more ACK (the host's repeated disconnect ACK, flows.md §1 [H]).
    pub fn owe(&mut self, a: Ack) {
        self.owed.push(a);
    }

    /// Put a few stale ACKs into the next datagram (a clean exit does, flows.md §1 [H]).
    pub fn force_stale(&mut self) {
        self.stale_next = true;
    }

    /// Nothing left to send or to wait for.
    pub fn idle(&self) -> bool {
        self.owed.is_empty() && self.outbox.is_empty() && self.inflight.iter().all(|f| f.acked)
    }

    /// Sequence number of the last low-type message received.
    pub fn last_received_low(&self) -> Option<u16> {
        self.last_low
    }

    /// Stop resending: the other side is gone.
    pub fn abandon(&mut self) {
        self.inflight.clear();
        self.outbox.clear();
    }

    /// Build the datagrams to send now: owed ACKs (sometimes with stale ones), due
    /// re-sends, new reliable messages, then `extra` (StateUpdates). Each message is
    /// paired with whether this is its first transmission.
    pub fn flush(&mut self, now: f64, extra: Vec<Msg>, rng: &mut Rng) -> Vec<Vec<(Msg, bool)>> {
        let mut msgs: Vec<(Msg, bool)> = Vec::new();
        if self.acks_muted {
            self.owed.clear();
            self.backlog.clear();
            self.stale_next = false;
        }
        // Stale ACKs: stock peers keep re-sending ACKs already sent (README §5).
        let stale = std::mem::take(&mut self.stale_next) || rng.chance(self.habit.stale);
        if !self.history.is_empty() && stale && !self.acks_muted {
            for _ in 0..1 + rng.below(self.habit.stale_most) {
                let a = self.history[rng.below(self.history.len())];
                msgs.push((Msg::ack(a), true));
            }
        }
        // Now and then the whole backlog goes again: with this datagram's messages, or
        // in datagrams of its own.
        let mut backlog = Vec::new();
        if !self.backlog.is_empty() && rng.chance(self.habit.chance) {
            for (a, left) in &mut self.backlog {
                backlog.push((Msg::ack(*a), true));
                *left -= 1;
            }
            self.backlog.retain(|(_, left)| *left > 0);
        }
        let alone = self.habit.alone;
        if !alone {
            msgs.append(&mut backlog);
        }
        for a in std::mem::take(&mut self.owed) {
            if self.history.len() == ACK_HISTORY {
                self.history.pop_front();
            }
            self.history.push_back(a);
            msgs.push((Msg::ack(a), true));
            if self.habit.repeats > 0 {
                if self.backlog.len() >= self.habit.keep {
                    self.backlog.pop_front();
                }
                self.backlog.push_back((a, self.habit.repeats));
            }
        }
        // Done: acknowledged with no quirk re-sends left, or out of retries.
        let forever = self.resend_forever;
        self.inflight.retain(|f| {
            if f.acked {
                f.quirk_left > 0
            } else {
                f.tries < MAX_TRIES || f.next_resend > now || forever
            }
        });
        for f in &mut self.inflight {
            if f.next_resend > now {
                continue;
            }
            if f.acked {
                f.quirk_left -= 1;
                f.next_resend = now + FRAGMENT_QUIRK_GAP + rng.range(-0.1, 0.1);
            } else {
                f.tries += 1;
                let gap = (FIRST_RESEND * f.tries as f64).min(MAX_RESEND_GAP);
                f.next_resend = now + gap;
            }
            f.last_sent = now;
            msgs.push((f.msg.clone(), false));
        }
        while let Some(m) = self.outbox.pop_front() {
            let quirk = match m.kind {
                Kind::Reliable {
                    fragment: Some(_), ..
                } if self.fragment_quirk => 2 + rng.below(2) as u8,
                _ => 0,
            };
            self.inflight.push(Inflight {
                msg: m.clone(),
                last_sent: now,
                next_resend: now + FIRST_RESEND,
                tries: 0,
                acked: false,
                quirk_left: quirk,
            });
            msgs.push((m, true));
        }
        msgs.extend(extra.into_iter().map(|m| (m, true)));
        if !msgs.is_empty() || !backlog.is_empty() {
            self.last_send = now;
        }
        let mut out = pack(msgs);
        if alone {
            out.extend(pack(backlog));
        }
        out
    }

    /// A datagram from the other side arrived: take its ACKs, owe ACKs for its
    /// reliable messages, and return the notes of messages now complete for the
    /// first time.
    pub fn receive(&mut self, msgs: &[Msg]) -> Vec<Note> {
        let mut notes = Vec::new();
        for m in msgs {
            match m.kind {
                Kind::Ack(a) => {
                    let key = SeqKey::of_ack(&a);
                    for f in &mut self.inflight {
                        if let Kind::Reliable { key: k, .. } = f.msg.kind {
                            if k == key && !f.acked {
                                f.acked = true;
                                f.next_resend = f.last_sent + FRAGMENT_QUIRK_GAP;
                            }
                        }
                    }
                }
                Kind::State { .. } => {}
                Kind::Reliable { key, fragment, .. } => {
                    if key.counter == Counter::Low {
                        self.last_low = Some(key.seq);
                    }
                    self.owed.push(Ack::new(key.seq, key.counter, key.fragment));
                    if !self.remember(key) {
                        continue;
                    }
                    match fragment {
                        None => notes.push(m.note.clone()),
                        Some((index, total)) => {
                            if let Some(n) = self.fragment_arrived(key.seq, index, total, m) {
                                notes.push(n);
                            }
                        }
                    }
                }
            }
        }
        notes
    }

    /// Record a received key; false when it was already received (a copy).
    fn remember(&mut self, key: SeqKey) -> bool {
        if !self.received.insert(key) {
            return false;
        }
        self.received_order.push_back(key);
        if self.received_order.len() > RECEIVED_MEMORY {
            if let Some(old) = self.received_order.pop_front() {
                self.received.remove(&old);
            }
        }
        true
    }

    fn fragment_arrived(&mut self, seq: u16, index: u8, total: u8, m: &Msg) -> Option<Note> {
        let pos = match self.partials.iter().position(|p| p.seq == seq) {
            Some(p) => p,
            None => {
                self.partials.push(Partial {
                    seq,
                    total,
                    got: 0,
                    note: m.note.clone(),
                });
                self.partials.len() - 1
            }
        };
        let p = &mut self.partials[pos];
        p.got |= 1 << (index.min(31));
        if p.got.count_ones() as u8 >= p.total {
            let p = self.partials.swap_remove(pos);
            return Some(p.note);
        }
        None
    }
}

/// Pack messages in order into datagrams of at most 512 bytes and 255 messages.
fn pack(msgs: Vec<(Msg, bool)>) -> Vec<Vec<(Msg, bool)>> {
    let mut out: Vec<Vec<(Msg, bool)>> = Vec::new();
    let mut cur: Vec<(Msg, bool)> = Vec::new();
    let mut size = 2;
    for m in msgs {
        let n = m.0.wire_len();
        if !cur.is_empty() && (size + n > MAX_DATAGRAM || cur.len() == 255) {
            out.push(std::mem::take(&mut cur));
            size = 2;
        }
        size += n;
        cur.push(m);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(n: usize) -> Vec<u8> {
        let mut v = vec![0x21];
        v.extend((1..n).map(|i| i as u8));
        v
    }

    #[test]
    fn an_832_byte_message_makes_the_captured_412_412_27_fragments() {
        let mut l = Link::new(2, false);
        l.send_game(&game(832), Note::None);
        let d = l.flush(0.0, Vec::new(), &mut Rng::new(1));
        let sizes: Vec<usize> = d.iter().flatten().map(|(m, _)| m.bytes.len()).collect();
        assert_eq!(sizes, vec![412, 412, 27]);
        assert!(d
            .iter()
            .all(|g| g.iter().map(|(m, _)| m.bytes.len()).sum::<usize>() + 2 <= 512));
    }

    #[test]
    fn unacked_messages_are_resent_with_the_same_bytes_and_acks_stop_them() {
        let mut a = Link::new(2, false);
        let mut b = Link::new(1, false);
        let mut rng = Rng::new(1);
        a.send_game(&[0x2A, 0x20], Note::NewPlayer);
        let first = a.flush(0.0, Vec::new(), &mut rng);
        assert!(first[0][0].1);
        assert!(a.flush(0.5, Vec::new(), &mut rng).is_empty());
        let again = a.flush(1.0, Vec::new(), &mut rng);
        assert_eq!(again[0][0].0.bytes, first[0][0].0.bytes);
        assert!(!again[0][0].1);
        // The receiver takes both copies, reports the note once, owes two ACKs.
        let m: Vec<Msg> = first[0].iter().map(|x| x.0.clone()).collect();
        assert_eq!(b.receive(&m).len(), 1);
        assert_eq!(b.receive(&m).len(), 0);
        let acks = b.flush(1.1, Vec::new(), &mut rng);
        let acks: Vec<Msg> = acks[0].iter().map(|x| x.0.clone()).collect();
        a.receive(&acks);
        assert!(a.flush(10.0, Vec::new(), &mut rng).is_empty());
    }

    #[test]
    fn fragment_sets_complete_once_and_quirk_resends_follow_the_ack() {
        let mut a = Link::new(2, true);
        let mut b = Link::new(1, false);
        let mut rng = Rng::new(2);
        a.send_game(&game(832), Note::ChecksumReply(2));
        let d = a.flush(0.0, Vec::new(), &mut rng);
        let m: Vec<Msg> = d.iter().flatten().map(|x| x.0.clone()).collect();
        let notes = b.receive(&m);
        assert!(matches!(notes.as_slice(), [Note::ChecksumReply(2)]));
        let acks: Vec<Msg> = b
            .flush(0.1, Vec::new(), &mut rng)
            .into_iter()
            .flatten()
            .map(|x| x.0)
            .collect();
        assert_eq!(acks.len(), 3);
        assert!(acks.iter().all(|m| m.bytes.len() == 5));
        a.receive(&acks);
        assert!(a.flush(1.0, Vec::new(), &mut rng).is_empty());
        let resent = a.flush(2.0, Vec::new(), &mut rng);
        assert_eq!(resent.iter().flatten().count(), 3, "quirk resend after ACK");
        assert!(resent.iter().flatten().all(|x| !x.1));
    }

    #[test]
    fn counters_wrap_at_u16() {
        let mut l = Link::new(2, false);
        l.data_seq = u16::MAX;
        l.send_game(&[0x28], Note::None);
        l.send_game(&[0x28], Note::None);
        let d = l.flush(0.0, Vec::new(), &mut Rng::new(1));
        let seqs: Vec<u16> = d[0]
            .iter()
            .map(|(m, _)| u16::from_le_bytes([m.bytes[3], m.bytes[4]]))
            .collect();
        assert_eq!(seqs, vec![u16::MAX, 0]);
    }
}
