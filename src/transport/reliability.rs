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
//! the sender has not moved on by [`SEQ_REUSE_GUARD`] sequence numbers since. Otherwise
//! the sequence number was reused (a wrapped counter) and it is a **new** message.
//! An ACK for the original does not make a quick copy new: senders resend when *they*
//! did not see the ACK.

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

/// A copy after the sender has advanced this many sequence numbers on the same counter
/// is a new message even inside the horizon: no sender keeps half of an 8-bit
/// sequence space in flight, and an 8-bit counter (variants.md) reuses a value after
/// 256 messages.
pub const SEQ_REUSE_GUARD: u32 = 128;

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
    /// Same bytes, but the counter advanced by `advanced` values since (wrapped).
    AfterWrap { advanced: u32 },
}

/// What to do with a reliable message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Deliver it. `reuse` is set when the seq was seen before for another message.
    New { reuse: Option<SeqReuse> },
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
    advance_at: u32,
    ack: Option<Seen>,
    generation: u64,
}

#[derive(Debug, Default)]
struct Stream {
    entries: HashMap<SeqKey, Entry>,
    /// Insertion order for eviction; stale generations are skipped.
    order: VecDeque<(SeqKey, u64)>,
    /// Per counter: how many distinct sequence numbers the sender has moved through.
    advance: [u32; 2],
    last_new_seq: [Option<u16>; 2],
    next_generation: u64,
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
        let advance_now = stream.advance[ci];
        let mut reuse = None;
        if let Some(e) = stream.entries.get_mut(&key) {
            let since_last = time_ns.saturating_sub(e.last.time_ns);
            let advanced = advance_now.wrapping_sub(e.advance_at);
            reuse = Some(if e.fp != fp {
                SeqReuse::DifferentContent
            } else if since_last > RETRANSMIT_HORIZON_NS {
                SeqReuse::AfterHorizon {
                    since_last_ns: since_last,
                }
            } else if advanced >= SEQ_REUSE_GUARD {
                SeqReuse::AfterWrap { advanced }
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
        }
        // A new message: advance the counter's position when the seq changes (all
        // fragments of one message share one seq).
        if stream.last_new_seq[ci] != Some(key.seq) {
            stream.advance[ci] = stream.advance[ci].wrapping_add(1);
            stream.last_new_seq[ci] = Some(key.seq);
        }
        let generation = stream.next_generation;
        stream.next_generation += 1;
        let entry = Entry {
            fp,
            first: now,
            last: now,
            copies: 1,
            advance_at: stream.advance[ci],
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
        Delivery::New { reuse }
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
            Delivery::New { reuse: None }
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
                reuse: Some(SeqReuse::DifferentContent)
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
                reuse: Some(SeqReuse::AfterWrap { advanced: 255 })
            }
        ));
        // A resend of that new message is a resend.
        assert!(!send(&mut t, 0, b"fire", S).is_new());
        // Same bytes on a quiet counter a minute later: new, by horizon.
        assert!(matches!(
            send(&mut t, 0, b"fire", 60 * S),
            Delivery::New {
                reuse: Some(SeqReuse::AfterHorizon { .. })
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
