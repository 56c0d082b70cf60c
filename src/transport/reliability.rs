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

/// Emptied streams kept for reuse ([`Tracker::spare`]): a session's streams (two per
/// client) end together, and the next session's start soon after.
const MAX_SPARE_STREAMS: usize = 16;

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
    /// Moves the messages of this stream that were never acknowledged into `out`,
    /// leaving the stream empty (its tables keep their room).
    fn collect_unacked<K: Clone>(&mut self, stream: &K, out: &mut Vec<Unacked<K>>) {
        self.order.clear();
        self.position = Default::default();
        self.next_generation = 0;
        for (key, e) in self.entries.drain() {
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
    /// Streams of ended sessions, emptied, for the next streams to start with: a
    /// server's capture opens sessions all along, and each new stream otherwise grew
    /// its tables from nothing again (rehashing at every doubling) and freed them at
    /// its end. At most [`MAX_SPARE_STREAMS`].
    spare: Vec<Stream>,
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
            spare: Vec::new(),
            dropped: Vec::new(),
            dropped_not_listed: 0,
        }
    }

    fn stream(&mut self, key: &K) -> &mut Stream {
        let Tracker { streams, spare, .. } = self;
        streams
            .entry(key.clone())
            .or_insert_with(|| spare.pop().unwrap_or_default())
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
        if let Some(mut s) = self.streams.remove(stream) {
            s.collect_unacked(stream, &mut unacked);
            if self.spare.len() < MAX_SPARE_STREAMS {
                self.spare.push(s);
            }
        }
        unacked.sort_by_key(|u| (u.first.frame, u.first.time_ns, u.key));
        unacked
    }

    /// Every reliable message never acknowledged, in order of first sighting.
    pub fn finish(self) -> ReliabilityReport<K> {
        let mut unacked = self.dropped;
        for (stream, mut s) in self.streams {
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
#[path = "reliability_tests.rs"]
mod tests;
