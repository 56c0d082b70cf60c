//! Reliability tracking per stream: sequence numbers, retransmissions, ACK matching
//! (README §5, variants.md).
//!
//! A stream is one sender's traffic to one receiver; the caller chooses the key (e.g.
//! session, client, direction). Each stream has two counters ([`Counter`]); a fragment
//! is its own reliable message, so entries are keyed by (counter, seq, fragment index).
//!
//! Resend or new? A reliable message whose (counter, seq, fragment) was seen before is
//! a **retransmission** when its bytes are the same (compared by [`Fingerprint`], not
//! stored) **and** it comes within [`RETRANSMIT_HORIZON_NS`] of the previous copy **and**
//! the sender's counter has not wrapped round to that number since. Otherwise the
//! sequence number was reused and it is a **new** message. How far the counter moved on
//! in between does not matter: a host whose peer stopped ACKing resends the same message
//! every few seconds while sending hundreds of new ones (variants.md).
//! An ACK for the original does not make a quick copy new: senders resend when *they*
//! did not see the ACK.
//!
//! The tracker also follows each counter's position, so that a new message can be told
//! apart as next in order, after a gap (numbers skipped: lost before the capture point,
//! or not captured), late (below the position, not a wrap) or the start of a new cycle
//! ([`SeqOrder`]).

use super::hash::Fingerprint;
use super::packet::{Ack, Counter, Message, MessageBody};
// Fx: internal tables keyed by small fixed-size values; see Cargo.toml.
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;
use std::hash::Hash;

/// How long after the previous copy an identical copy still counts as a resend.
///
/// Why 15 s: stock peers retry after 1 s and then at most every 5 s (README §5 timers;
/// older notes: every 2 s), third-party peers every 1–2 s (variants.md), and stock
/// clients keep resending fragments about every 2 s. Measured from the *latest* copy,
/// a resend chain therefore never has a gap above ~5 s; 15 s leaves three times that
/// for capture jitter and loss, yet stays far below the time a wrapped 8-bit counter
/// takes to come round to the same value with the same content in normal play (the
/// "second identical StopFiring a minute later" case), and below the 45 s peer timeout.
pub const RETRANSMIT_HORIZON_NS: i64 = 15_000_000_000;

/// A new message whose sequence number is this far *below* the counter's position
/// starts a new cycle (the counter wrapped): no sender keeps half of an 8-bit sequence
/// space in flight, so a message this late is a wrap, not a straggler.
pub const WRAP_MIN_DROP: u16 = 128;

/// A copy with the same bytes as a live message starts a new cycle only when the
/// counter passed the top of its space (255 for the 8-bit counters of variants.md,
/// 65535 for a full u16) and reached the copy's number again, with fewer than this many
/// numbers in between (from the position up to the top, and from 0 up to the copy's):
/// slack for messages lost before the capture point. Anything further is taken as a
/// resend, which is what a sender stuck on an unacknowledged message does.
pub const WRAP_SLACK: u32 = 8;

/// Messages remembered per stream (oldest forgotten first). At stock rates (a few dozen
/// reliable messages per second at most) this covers well over the horizon; a
/// forgotten message can only turn a very late copy or ACK into "new"/"unknown".
pub const MAX_ENTRIES_PER_STREAM: usize = 1024;

/// Unacknowledged messages kept for the end report beyond those still in the tables
/// (superseded by seq reuse or forgotten); more are only counted.
pub const MAX_REPORTED_UNACKED: usize = 4096;

/// Which reliable message: counter, sequence number, fragment index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeqKey {
    pub counter: Counter,
    pub seq: u16,
    pub fragment: Option<u8>,
}

impl SeqKey {
    /// The key of a reliable message (`None` for unreliable messages, ACKs, unknown).
    pub fn of_message(m: &Message) -> Option<SeqKey> {
        let (counter, seq) = m.reliable_seq()?;
        let fragment = match &m.body {
            MessageBody::Data(d) => d.fragment.map(|f| f.index),
            _ => None,
        };
        Some(SeqKey {
            counter,
            seq,
            fragment,
        })
    }

    /// The message an ACK refers to.
    pub fn of_ack(a: &Ack) -> SeqKey {
        SeqKey {
            counter: a.counter(),
            seq: a.seq,
            fragment: a.fragment_index,
        }
    }
}

/// Where and when something was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub frame: u64,
    pub time_ns: i64,
}

/// Why a seen sequence number counts as a new message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqReuse {
    /// Same seq, different bytes.
    DifferentContent,
    /// Same bytes, but the previous copy is older than the horizon.
    AfterHorizon { since_last_ns: i64 },
    /// Same bytes, but the counter wrapped round to this number since (`wraps` times).
    AfterWrap { wraps: u32 },
}

/// Where a new message's sequence number stands relative to its counter's position
/// (the highest number seen in the current cycle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqOrder {
    /// The first on this counter, the next number, or the number of the previous
    /// message (further fragments of one message share it).
    InOrder,
    /// `missing` numbers skipped between the position `after` and this one.
    Gap { after: u16, missing: u32 },
    /// Below the position (arrived after a later one), not a wrap.
    Late { position: u16 },
    /// Far below a position near the top: the counter wrapped and starts again.
    Wrap { from: u16 },
}

/// What to do with a reliable message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Deliver it. `reuse` is set when the seq was seen before for another message.
    New {
        reuse: Option<SeqReuse>,
        order: SeqOrder,
    },
    /// A copy of a message already delivered: do not deliver again.
    Retransmission {
        /// 2 for the first resend, 3 for the next …
        copy: u32,
        first: Seen,
        since_first_ns: i64,
        since_last_ns: i64,
        /// The original was already acknowledged (the sender missed the ACK, or keeps
        /// resending regardless, like stock fragment resends).
        after_ack: bool,
    },
}

impl Delivery {
    pub fn is_new(&self) -> bool {
        matches!(self, Delivery::New { .. })
    }
}

/// What an ACK acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckOutcome {
    /// First ACK of a known message.
    Matched {
        message: Seen,
        /// From the latest copy before the ACK (what the sender waited for).
        delay_ns: i64,
        /// From the first copy.
        since_first_ns: i64,
        copies: u32,
    },
    /// The message was already acknowledged less than the horizon ago (e.g. the ACK
    /// of a retransmission).
    Duplicate {
        first_ack: Seen,
        since_first_ack_ns: i64,
    },
    /// An ACK repeated long after the first one (stock peers keep re-sending old ACKs).
    Stale {
        first_ack: Seen,
        since_first_ack_ns: i64,
    },
    /// No such message seen (capture started late, lost, or forgotten).
    Unknown,
}

/// A reliable message never acknowledged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unacked<K> {
    pub stream: K,
    pub key: SeqKey,
    pub first: Seen,
    pub last: Seen,
    pub copies: u32,
}

/// End-of-capture report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReliabilityReport<K> {
    /// In order of first sighting.
    pub unacked: Vec<Unacked<K>>,
    /// Unacknowledged messages forgotten beyond [`MAX_REPORTED_UNACKED`].
    pub unacked_not_listed: u64,
}

#[derive(Debug, Clone)]
struct Entry {
    fp: Fingerprint,
    first: Seen,
    last: Seen,
    copies: u32,
    /// The counter's cycle (wraps so far) when this message was new.
    cycle: u32,
    ack: Option<Seen>,
    generation: u64,
}

#[derive(Debug, Default)]
struct Stream {
    entries: HashMap<SeqKey, Entry>,
    /// Insertion order for eviction; stale generations are skipped.
    order: VecDeque<(SeqKey, u64)>,
    /// Per counter: where the sender stands.
    position: [Position; 2],
    next_generation: u64,
}

/// A counter's position: the highest number of the current cycle, and how many times
/// it has wrapped.
#[derive(Debug, Default, Clone, Copy)]
struct Position {
    top: Option<u16>,
    cycle: u32,
}

/// Numbers skipped if a counter at `top` wrapped and went on to `seq`, for an 8-bit
/// counter when `top` fits in one, else for a 16-bit one.
fn skipped_by_wrap(top: u16, seq: u16) -> u32 {
    let space_top: u32 = if top <= 0xFF { 0xFF } else { 0xFFFF };
    space_top - u32::from(top) + u32::from(seq)
}

impl Position {
    /// Whether a message numbered `seq` starts a new cycle. `same_as_live`: its bytes
    /// are those of the live message with that number, i.e. it may be a resend.
    fn wraps_at(&self, seq: u16, same_as_live: bool) -> bool {
        let Some(top) = self.top else {
            return false;
        };
        if seq >= top {
            return false;
        }
        if same_as_live {
            skipped_by_wrap(top, seq) < WRAP_SLACK
        } else {
            top - seq >= WRAP_MIN_DROP
        }
    }

    /// Moves the position for a new message numbered `seq` and says where it stood.
    fn advance(&mut self, seq: u16, wraps: bool) -> SeqOrder {
        let order = match self.top {
            None => SeqOrder::InOrder,
            Some(top) if wraps => {
                self.cycle = self.cycle.wrapping_add(1);
                SeqOrder::Wrap { from: top }
            }
            Some(top) if seq <= top.saturating_add(1) && seq >= top => SeqOrder::InOrder,
            Some(top) if seq > top => SeqOrder::Gap {
                after: top,
                missing: u32::from(seq - top - 1),
            },
            Some(top) => return SeqOrder::Late { position: top },
        };
        self.top = Some(seq);
        order
    }
}

impl Stream {
    /// Moves the messages of this stream that were never acknowledged into `out`.
    fn collect_unacked<K: Clone>(self, stream: &K, out: &mut Vec<Unacked<K>>) {
        for (key, e) in self.entries {
            if e.ack.is_none() {
                out.push(Unacked {
                    stream: stream.clone(),
                    key,
                    first: e.first,
                    last: e.last,
                    copies: e.copies,
                });
            }
        }
    }
}

fn counter_index(c: Counter) -> usize {
    match c {
        Counter::Low => 0,
        Counter::Data => 1,
    }
}

/// Reliability state for any number of streams keyed by `K`.
#[derive(Debug)]
pub struct Tracker<K> {
    streams: HashMap<K, Stream>,
    dropped: Vec<Unacked<K>>,
    dropped_not_listed: u64,
}

impl<K: Hash + Eq + Clone> Default for Tracker<K> {
    fn default() -> Self {
        Tracker::new()
    }
}

impl<K: Hash + Eq + Clone> Tracker<K> {
    pub fn new() -> Tracker<K> {
        Tracker {
            streams: HashMap::default(),
            dropped: Vec::new(),
            dropped_not_listed: 0,
        }
    }

    fn stream(&mut self, key: &K) -> &mut Stream {
        self.streams.entry(key.clone()).or_default()
    }

    fn remember_dropped(&mut self, stream: &K, key: SeqKey, e: &Entry) {
        if e.ack.is_some() {
            return;
        }
        if self.dropped.len() < MAX_REPORTED_UNACKED {
            self.dropped.push(Unacked {
                stream: stream.clone(),
                key,
                first: e.first,
                last: e.last,
                copies: e.copies,
            });
        } else {
            self.dropped_not_listed += 1;
        }
    }

    /// A reliable message `bytes` (the whole transport message) sent on `stream`.
    pub fn on_message(
        &mut self,
        stream_key: &K,
        key: SeqKey,
        bytes: &[u8],
        time_ns: i64,
        frame: u64,
    ) -> Delivery {
        let fp = Fingerprint::of(bytes);
        let now = Seen { frame, time_ns };
        let stream = self.stream(stream_key);
        let ci = counter_index(key.counter);
        let pos = stream.position[ci];
        let mut reuse = None;
        let wraps;
        if let Some(e) = stream.entries.get_mut(&key) {
            let since_last = time_ns.saturating_sub(e.last.time_ns);
            let same = e.fp == fp;
            wraps = pos.wraps_at(key.seq, same);
            // The counter's cycle and position if this message is taken as new.
            let (cycle, top) = if wraps {
                (pos.cycle.wrapping_add(1), key.seq)
            } else {
                (pos.cycle, pos.top.unwrap_or(key.seq))
            };
            let cycles = cycle.wrapping_sub(e.cycle);
            // Wrapped round to this number: a full cycle more, or one more and the
            // new cycle has come up to it (this message may be the one reaching it).
            let wrapped_past =
                cycles >= 2 || (cycles == 1 && u32::from(top) + 1 >= u32::from(key.seq));
            reuse = Some(if !same {
                SeqReuse::DifferentContent
            } else if since_last > RETRANSMIT_HORIZON_NS {
                SeqReuse::AfterHorizon {
                    since_last_ns: since_last,
                }
            } else if wrapped_past {
                SeqReuse::AfterWrap { wraps: cycles }
            } else {
                e.copies = e.copies.saturating_add(1);
                let d = Delivery::Retransmission {
                    copy: e.copies,
                    first: e.first,
                    since_first_ns: time_ns.saturating_sub(e.first.time_ns),
                    since_last_ns: since_last,
                    after_ack: e.ack.is_some(),
                };
                e.last = now;
                return d;
            });
        } else {
            wraps = pos.wraps_at(key.seq, false);
        }
        let order = stream.position[ci].advance(key.seq, wraps);
        let generation = stream.next_generation;
        stream.next_generation += 1;
        let entry = Entry {
            fp,
            first: now,
            last: now,
            copies: 1,
            cycle: stream.position[ci].cycle,
            ack: None,
            generation,
        };
        let replaced = stream.entries.insert(key, entry);
        stream.order.push_back((key, generation));
        let evicted = evict(stream);
        if let Some(old) = replaced {
            self.remember_dropped(stream_key, key, &old);
        }
        for (k, e) in evicted {
            self.remember_dropped(stream_key, k, &e);
        }
        Delivery::New { reuse, order }
    }

    /// An ACK for a message of `stream_key`: the stream of the acknowledged message,
    /// i.e. the opposite direction of the datagram that carried the ACK.
    pub fn on_ack(&mut self, stream_key: &K, key: SeqKey, time_ns: i64, frame: u64) -> AckOutcome {
        let Some(stream) = self.streams.get_mut(stream_key) else {
            return AckOutcome::Unknown;
        };
        let Some(e) = stream.entries.get_mut(&key) else {
            return AckOutcome::Unknown;
        };
        match e.ack {
            None => {
                e.ack = Some(Seen { frame, time_ns });
                AckOutcome::Matched {
                    message: e.first,
                    delay_ns: time_ns.saturating_sub(e.last.time_ns),
                    since_first_ns: time_ns.saturating_sub(e.first.time_ns),
                    copies: e.copies,
                }
            }
            Some(first_ack) => {
                let since = time_ns.saturating_sub(first_ack.time_ns);
                if since > RETRANSMIT_HORIZON_NS {
                    AckOutcome::Stale {
                        first_ack,
                        since_first_ack_ns: since,
                    }
                } else {
                    AckOutcome::Duplicate {
                        first_ack,
                        since_first_ack_ns: since,
                    }
                }
            }
        }
    }

    /// End one stream (its session is over): its reliable messages never acknowledged,
    /// in order of first sighting. Its state is released.
    pub fn finish_stream(&mut self, stream: &K) -> Vec<Unacked<K>> {
        let mut unacked: Vec<Unacked<K>> = Vec::new();
        self.dropped.retain(|u| {
            if u.stream == *stream {
                unacked.push(u.clone());
                false
            } else {
                true
            }
        });
        if let Some(s) = self.streams.remove(stream) {
            s.collect_unacked(stream, &mut unacked);
        }
        unacked.sort_by_key(|u| (u.first.frame, u.first.time_ns, u.key));
        unacked
    }

    /// Every reliable message never acknowledged, in order of first sighting.
    pub fn finish(self) -> ReliabilityReport<K> {
        let mut unacked = self.dropped;
        for (stream, s) in self.streams {
            s.collect_unacked(&stream, &mut unacked);
        }
        unacked.sort_by_key(|u| (u.first.frame, u.first.time_ns, u.key));
        ReliabilityReport {
            unacked,
            unacked_not_listed: self.dropped_not_listed,
        }
    }
}

/// Forget the oldest entries beyond the cap; returns them.
fn evict(s: &mut Stream) -> Vec<(SeqKey, Entry)> {
    let mut out = Vec::new();
    while s.entries.len() > MAX_ENTRIES_PER_STREAM {
        let Some((k, generation)) = s.order.pop_front() else {
            break;
        };
        if s.entries
            .get(&k)
            .is_some_and(|e| e.generation == generation)
        {
            if let Some(e) = s.entries.remove(&k) {
                out.push((k, e));
            }
        }
    }
    // Replaced entries leave stale order items behind; keep the queue bounded too.
    if s.order.len() > 2 * MAX_ENTRIES_PER_STREAM {
        let entries = &s.entries;
        s.order
            .retain(|(k, g)| entries.get(k).is_some_and(|e| e.generation == *g));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn data(seq: u16) -> SeqKey {
        SeqKey {
            counter: Counter::Data,
            seq,
            fragment: None,
        }
    }

    #[test]
    fn resend_ack_duplicate_stale_unknown() {
        let mut t = Tracker::new();
        let k = ("s", 1);
        assert_eq!(
            t.on_message(&k, data(5), b"abc", 0, 1),
            Delivery::New {
                reuse: None,
                order: SeqOrder::InOrder
            }
        );
        match t.on_message(&k, data(5), b"abc", S, 2) {
            Delivery::Retransmission {
                copy,
                first,
                since_first_ns,
                after_ack,
                ..
            } => assert_eq!(
                (copy, first.frame, since_first_ns, after_ack),
                (2, 1, S, false)
            ),
            d => panic!("{d:?}"),
        }
        match t.on_ack(&k, data(5), S + S / 5, 3) {
            AckOutcome::Matched {
                message,
                delay_ns,
                since_first_ns,
                copies,
            } => assert_eq!(
                (message.frame, delay_ns, since_first_ns, copies),
                (1, S / 5, S + S / 5, 2)
            ),
            o => panic!("{o:?}"),
        }
        assert!(matches!(
            t.on_ack(&k, data(5), 2 * S, 4),
            AckOutcome::Duplicate {
                first_ack: Seen { frame: 3, .. },
                ..
            }
        ));
        assert!(matches!(
            t.on_ack(&k, data(5), 40 * S, 5),
            AckOutcome::Stale { .. }
        ));
        assert_eq!(t.on_ack(&k, data(6), 40 * S, 6), AckOutcome::Unknown);
        assert_eq!(t.on_ack(&("x", 9), data(5), 40 * S, 6), AckOutcome::Unknown);
        // A quick copy after the ACK is still a resend (the sender missed the ACK).
        assert!(matches!(
            t.on_message(&k, data(5), b"abc", 3 * S, 7),
            Delivery::Retransmission {
                after_ack: true,
                copy: 3,
                ..
            }
        ));
        assert!(t.finish().unacked.is_empty());
    }

    #[test]
    fn counters_streams_and_fragments_are_independent() {
        let mut t = Tracker::new();
        let low = SeqKey {
            counter: Counter::Low,
            seq: 0,
            fragment: None,
        };
        assert!(t.on_message(&1, low, b"x", 0, 1).is_new());
        assert!(t.on_message(&1, data(0), b"x", 0, 2).is_new());
        assert!(t.on_message(&2, data(0), b"x", 0, 3).is_new());
        for i in 0..3 {
            let f = SeqKey {
                fragment: Some(i),
                ..data(7)
            };
            assert!(t.on_message(&1, f, &[i], 0, 4).is_new());
        }
        let f1 = SeqKey {
            fragment: Some(1),
            ..data(7)
        };
        assert!(!t.on_message(&1, f1, &[1], S, 5).is_new());
        assert!(matches!(t.on_ack(&1, f1, S, 6), AckOutcome::Matched { .. }));
        assert!(matches!(
            t.on_ack(&1, low, S, 6),
            AckOutcome::Matched { .. }
        ));
        let r = t.finish();
        // data 0 on stream 1 and 2, fragments 0 and 2 of seq 7.
        assert_eq!(r.unacked.len(), 4);
        assert_eq!(r.unacked[0].first.frame, 2);
    }

    #[test]
    fn wrapped_sequence_numbers_are_new_messages() {
        let mut t = Tracker::new();
        let mut frame = 0;
        let mut time = 0;
        let mut send = |t: &mut Tracker<u8>, seq: u16, body: &[u8], dt: i64| {
            frame += 1;
            time += dt;
            t.on_message(&0, data(seq), body, time, frame)
        };
        assert!(send(&mut t, 0, b"stop firing", 0).is_new());
        // Different content on the same seq right away: new.
        assert_eq!(
            send(&mut t, 0, b"fire", S / 10),
            Delivery::New {
                reuse: Some(SeqReuse::DifferentContent),
                order: SeqOrder::InOrder
            }
        );
        // The 8-bit counter runs round quickly (busy stream: 20 ms per message) …
        for seq in 1..=255u16 {
            assert!(send(&mut t, seq, &seq.to_le_bytes(), S / 50).is_new());
        }
        // … and seq 0 comes back with the same bytes as before, 5 s later: new, by wrap.
        assert!(matches!(
            send(&mut t, 0, b"fire", 0),
            Delivery::New {
                reuse: Some(SeqReuse::AfterWrap { wraps: 1 }),
                order: SeqOrder::Wrap { from: 255 }
            }
        ));
        // A resend of that new message is a resend.
        assert!(!send(&mut t, 0, b"fire", S).is_new());
        // Same bytes on a quiet counter a minute later: new, by horizon.
        assert!(matches!(
            send(&mut t, 0, b"fire", 60 * S),
            Delivery::New {
                reuse: Some(SeqReuse::AfterHorizon { .. }),
                ..
            }
        ));
        // A resend chain longer than the horizon stays a resend chain (2 s apart).
        for _ in 0..20 {
            assert!(!send(&mut t, 0, b"fire", 2 * S).is_new());
        }
        // u16 sequence numbers above 255 are their own values.
        assert!(send(&mut t, 0x0100, b"fire", 0).is_new());
        let r = t.finish();
        // All superseded and current messages were never acked.
        assert_eq!(r.unacked.len(), 256 + 3 + 1);
    }

    #[test]
    fn a_resend_long_after_newer_messages_is_still_a_resend() {
        // A host whose client stopped ACKing: seq 3 stays unacknowledged and is resent
        // every 3 s while the counter goes on 0 … 250 (one new message every 50 ms).
        let mut t = Tracker::new();
        let mut time = 0;
        let mut resends = 0;
        for seq in 0..=250u16 {
            time += S / 20;
            let d = t.on_message(&0u8, data(seq), &seq.to_le_bytes(), time, u64::from(seq));
            assert!(d.is_new(), "seq {seq}: {d:?}");
            if seq > 3 && seq % 60 == 0 {
                let d = t.on_message(&0u8, data(3), &3u16.to_le_bytes(), time, 0);
                assert!(
                    matches!(d, Delivery::Retransmission { since_last_ns, .. }
                        if since_last_ns <= 3 * S),
                    "resend at position {seq}: {d:?}"
                );
                resends += 1;
            }
        }
        assert_eq!(resends, 4);
        // Only after the counter passed 255 and came round to 3 is seq 3 reused.
        for seq in 251..=255u16 {
            time += S / 20;
            assert!(t.on_message(&0u8, data(seq), b"x", time, 0).is_new());
        }
        assert!(matches!(
            t.on_message(&0u8, data(0), b"y", time, 0),
            Delivery::New {
                order: SeqOrder::Wrap { from: 255 },
                ..
            }
        ));
        // Before the new cycle reaches 3, a copy of the old 3 is still a resend …
        assert!(!t
            .on_message(&0u8, data(3), &3u16.to_le_bytes(), time, 0)
            .is_new());
        assert!(t.on_message(&0u8, data(1), b"y", time, 0).is_new());
        assert!(t.on_message(&0u8, data(2), b"y", time, 0).is_new());
        // … once it has, 3 with the old bytes is a new message.
        assert!(matches!(
            t.on_message(&0u8, data(3), &3u16.to_le_bytes(), time, 0),
            Delivery::New {
                reuse: Some(SeqReuse::AfterWrap { wraps: 1 }),
                order: SeqOrder::InOrder
            }
        ));
    }

    #[test]
    fn a_resend_near_the_top_is_not_taken_for_a_wrap() {
        let mut t = Tracker::new();
        for seq in 0..=200u16 {
            assert!(t.on_message(&0u8, data(seq), &[seq as u8], 0, 0).is_new());
        }
        // At 200 the counter is far from its top: seq 0 with its old bytes is a resend.
        assert!(!t.on_message(&0u8, data(0), &[0], S, 0).is_new());
        // A different message numbered 2 far below the position is a wrap.
        assert!(matches!(
            t.on_message(&0u8, data(2), b"new", S, 0),
            Delivery::New {
                reuse: Some(SeqReuse::DifferentContent),
                order: SeqOrder::Wrap { from: 200 }
            }
        ));
    }

    #[test]
    fn gaps_and_late_arrivals_are_told() {
        let mut t = Tracker::new();
        let mut order = |seq: u16, frag: Option<u8>| match t.on_message(
            &0u8,
            SeqKey {
                fragment: frag,
                ..data(seq)
            },
            &[seq as u8, frag.unwrap_or(9)],
            0,
            0,
        ) {
            Delivery::New { order, .. } => order,
            d => panic!("{d:?}"),
        };
        assert_eq!(order(10, None), SeqOrder::InOrder);
        assert_eq!(order(11, None), SeqOrder::InOrder);
        assert_eq!(
            order(14, None),
            SeqOrder::Gap {
                after: 11,
                missing: 2
            }
        );
        assert_eq!(order(12, None), SeqOrder::Late { position: 14 });
        // A late one does not move the position back.
        assert_eq!(order(15, Some(0)), SeqOrder::InOrder);
        assert_eq!(order(15, Some(1)), SeqOrder::InOrder);
        assert_eq!(order(16, None), SeqOrder::InOrder);
    }

    #[test]
    fn memory_is_bounded_and_forgotten_messages_still_reported() {
        let mut t = Tracker::new();
        for i in 0..5000u32 {
            let seq = (i % 65536) as u16;
            t.on_message(&0, data(seq), &i.to_le_bytes(), i64::from(i), u64::from(i));
            if i % 2 == 0 {
                t.on_ack(&0, data(seq), i64::from(i), u64::from(i));
            }
        }
        let s = &t.streams[&0];
        assert_eq!(s.entries.len(), MAX_ENTRIES_PER_STREAM);
        assert!(s.order.len() <= 2 * MAX_ENTRIES_PER_STREAM);
        // Acknowledged ones are forgotten without report, unacked ones listed.
        assert_eq!(t.on_ack(&0, data(0), 0, 0), AckOutcome::Unknown);
        let r = t.finish();
        assert_eq!(r.unacked.len(), 2500);
        assert_eq!(r.unacked_not_listed, 0);
    }
}
