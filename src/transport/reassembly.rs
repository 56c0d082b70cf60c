//! Fragment reassembly (README §4.4).
//!
//! Fragments are keyed by (stream key, sequence number); all fragments of one message
//! share the seq, only fragment 0 carries the count. A set completes when fragment 0
//! has arrived and every index below the count is present, in any arrival order.
//! Duplicates are ignored, and so are fragments of a set already delivered (stock
//! clients keep resending fragments about every 2 s) as long as their bytes match and
//! they keep coming within the retransmission horizon; different bytes under a
//! delivered seq start a new set (a wrapped counter). All state is bounded by
//! [`Limits`]; sets that never complete are reported.

use super::hash::Fingerprint;
use super::reliability::{Seen, RETRANSMIT_HORIZON_NS};
use crate::diag::{Code, Warning};
// Fx: internal tables keyed by small fixed-size values; see Cargo.toml.
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;
use std::hash::Hash;

/// Bounds on reassembly state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Incomplete sets kept at once over all streams; the oldest is dropped beyond.
    pub max_open_sets: usize,
    /// Bytes stored for one set. Stock sets are ~1 KB (an 832-byte checksum reply);
    /// 255 fragments of a full 8 KB 0x32 message would be ~2 MB, far beyond any use.
    pub max_set_bytes: usize,
    /// Bytes stored over all open sets.
    pub max_total_bytes: usize,
    /// An incomplete set whose newest fragment is older than this is dropped.
    pub max_age_ns: i64,
    /// Delivered sets remembered to recognise their resent fragments.
    pub max_delivered_sets: usize,
    /// How long after its latest copy a delivered set's fragment is still a resend.
    pub delivered_horizon_ns: i64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_open_sets: 64,
            max_set_bytes: 64 * 1024,
            max_total_bytes: 1024 * 1024,
            max_age_ns: 60_000_000_000,
            max_delivered_sets: 256,
            delivered_horizon_ns: RETRANSMIT_HORIZON_NS,
        }
    }
}

/// One fragment as found in a 0x32 message.
#[derive(Debug, Clone, Copy)]
pub struct Fragment<'a> {
    pub seq: u16,
    pub index: u8,
    /// Fragment count, carried by fragment 0 only.
    pub total: Option<u8>,
    pub chunk: &'a [u8],
    /// Datagram offset of the fragment's 0x32 message (for warnings).
    pub offset: usize,
    pub frame: u64,
    pub time_ns: i64,
}

/// A complete message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reassembled {
    pub seq: u16,
    /// Starts with the game opcode.
    pub payload: Vec<u8>,
    /// Frame of each fragment, in index order.
    pub frames: Vec<u64>,
    pub first: Seen,
    pub last: Seen,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushOutcome {
    /// Kept; the set is still incomplete.
    Stored {
        have: usize,
        total: Option<u8>,
    },
    Complete(Reassembled),
    /// This index is already stored.
    Duplicate,
    /// A resent fragment of a set already delivered.
    AlreadyDelivered,
    /// Not kept (see the warnings).
    Rejected,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushResult {
    pub outcome: PushOutcome,
    /// Located problems (`fragment_*`); offsets are datagram offsets of the fragment
    /// message, except where a warning says otherwise.
    pub warnings: Vec<Warning>,
}

/// Why an incomplete set was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncompleteReason {
    EndOfCapture,
    Expired,
    TooManySets,
    TotalBytes,
    SetTooLarge,
}

/// A set that never completed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incomplete<K> {
    pub stream: K,
    pub seq: u16,
    pub total: Option<u8>,
    /// Indices present.
    pub have: Vec<u8>,
    pub bytes: usize,
    pub first: Seen,
    pub last: Seen,
    pub reason: IncompleteReason,
}

/// Incomplete sets remembered for the report after being dropped early; more are
/// only counted.
pub const MAX_REPORTED_INCOMPLETE: usize = 1024;

#[derive(Debug)]
struct Chunk {
    data: Vec<u8>,
    frame: u64,
    fp: Fingerprint,
}

#[derive(Debug)]
struct OpenSet {
    total: Option<u8>,
    chunks: Vec<Option<Chunk>>,
    have: usize,
    bytes: usize,
    first: Seen,
    last: Seen,
}

#[derive(Debug)]
struct Delivered {
    fps: Vec<Fingerprint>,
    last_time_ns: i64,
    generation: u64,
}

/// Reassembly state for any number of streams keyed by `K`.
#[derive(Debug)]
pub struct Reassembler<K> {
    limits: Limits,
    open: HashMap<(K, u16), OpenSet>,
    total_bytes: usize,
    delivered: HashMap<(K, u16), Delivered>,
    delivered_order: VecDeque<((K, u16), u64)>,
    next_generation: u64,
    dropped: Vec<Incomplete<K>>,
    dropped_not_listed: u64,
}

impl<K: Hash + Eq + Clone> Default for Reassembler<K> {
    fn default() -> Self {
        Reassembler::new(Limits::default())
    }
}

impl<K: Hash + Eq + Clone> Reassembler<K> {
    pub fn new(limits: Limits) -> Reassembler<K> {
        Reassembler {
            limits,
            open: HashMap::default(),
            total_bytes: 0,
            delivered: HashMap::default(),
            delivered_order: VecDeque::new(),
            next_generation: 0,
            dropped: Vec::new(),
            dropped_not_listed: 0,
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Bytes currently held in open sets.
    pub fn open_bytes(&self) -> usize {
        self.total_bytes
    }

    /// Number of incomplete sets currently held.
    pub fn open_sets(&self) -> usize {
        self.open.len()
    }

    pub fn push(&mut self, stream: &K, f: Fragment<'_>) -> PushResult {
        let mut warnings = Vec::new();
        let reject = |warnings: Vec<Warning>| PushResult {
            outcome: PushOutcome::Rejected,
            warnings,
        };
        if f.total == Some(0) {
            warnings.push(Warning::new(
                Code::FragmentTotalZero,
                Some(f.offset),
                format!("fragment 0 of seq {} announces 0 fragments", f.seq),
            ));
            return reject(warnings);
        }
        if let Some(t) = f.total.filter(|&t| f.index >= t) {
            warnings.push(out_of_range(&f, t));
            return reject(warnings);
        }
        let fp = Fingerprint::of(f.chunk);
        let key = (stream.clone(), f.seq);
        if let Some(d) = self.delivered.get_mut(&key) {
            let fresh =
                f.time_ns.saturating_sub(d.last_time_ns) <= self.limits.delivered_horizon_ns;
            if fresh && d.fps.get(usize::from(f.index)) == Some(&fp) {
                d.last_time_ns = d.last_time_ns.max(f.time_ns);
                return PushResult {
                    outcome: PushOutcome::AlreadyDelivered,
                    warnings,
                };
            }
            // Other bytes, or long after: the sequence number was reused.
            self.delivered.remove(&key);
        }
        self.expire(f.time_ns);
        let now = Seen {
            frame: f.frame,
            time_ns: f.time_ns,
        };
        if !self.open.contains_key(&key) {
            while self.open.len() >= self.limits.max_open_sets.max(1) {
                if !self.drop_oldest(IncompleteReason::TooManySets) {
                    break;
                }
            }
            self.open.insert(
                key.clone(),
                OpenSet {
                    total: None,
                    chunks: Vec::new(),
                    have: 0,
                    bytes: 0,
                    first: now,
                    last: now,
                },
            );
        }
        let Some(set) = self.open.get_mut(&key) else {
            return reject(warnings);
        };
        set.last = now;
        // Count and index checks against what the set already knows.
        match (set.total, f.total) {
            (Some(had), Some(new)) if had != new => {
                warnings.push(Warning::new(
                    Code::FragmentTotalConflict,
                    Some(f.offset),
                    format!(
                        "fragment 0 of seq {} announces {new} fragments, an earlier copy announced {had}",
                        f.seq
                    ),
                ));
                return reject(warnings);
            }
            (Some(had), None) if f.index >= had => {
                warnings.push(out_of_range(&f, had));
                return reject(warnings);
            }
            (None, Some(new)) => {
                set.total = Some(new);
                // Fragments stored before fragment 0 told the count.
                for i in usize::from(new)..set.chunks.len() {
                    if let Some(c) = set.chunks[i].take() {
                        set.have -= 1;
                        set.bytes -= c.data.len();
                        self.total_bytes -= c.data.len();
                        warnings.push(Warning::new(
                            Code::FragmentIndexOutOfRange,
                            Some(f.offset),
                            format!(
                                "seq {}: fragment {i} (frame {}) dropped, fragment 0 announces {new} fragments",
                                f.seq, c.frame
                            ),
                        ));
                    }
                }
                set.chunks.truncate(usize::from(new));
            }
            _ => {}
        }
        let i = usize::from(f.index);
        if let Some(Some(c)) = set.chunks.get(i) {
            if c.fp != fp {
                warnings.push(Warning::new(
                    Code::FragmentConflict,
                    Some(f.offset),
                    format!(
                        "seq {} fragment {i} differs from the copy in frame {}; keeping the first",
                        f.seq, c.frame
                    ),
                ));
            }
            return PushResult {
                outcome: PushOutcome::Duplicate,
                warnings,
            };
        }
        if set.bytes + f.chunk.len() > self.limits.max_set_bytes {
            warnings.push(Warning::new(
                Code::FragmentSetTooLarge,
                Some(f.offset),
                format!(
                    "seq {}: set would hold {} bytes, limit {}; set dropped",
                    f.seq,
                    set.bytes + f.chunk.len(),
                    self.limits.max_set_bytes
                ),
            ));
            self.drop_set(&key, IncompleteReason::SetTooLarge);
            return reject(warnings);
        }
        while self.total_bytes + f.chunk.len() > self.limits.max_total_bytes {
            if !self.drop_oldest_except(&key, IncompleteReason::TotalBytes) {
                break;
            }
        }
        if self.total_bytes + f.chunk.len() > self.limits.max_total_bytes {
            warnings.push(Warning::new(
                Code::FragmentLimit,
                Some(f.offset),
                format!(
                    "seq {}: reassembly memory limit of {} bytes reached; fragment dropped",
                    f.seq, self.limits.max_total_bytes
                ),
            ));
            return reject(warnings);
        }
        let Some(set) = self.open.get_mut(&key) else {
            return reject(warnings);
        };
        if set.chunks.len() <= i {
            set.chunks.resize_with(i + 1, || None);
        }
        set.chunks[i] = Some(Chunk {
            data: f.chunk.to_vec(),
            frame: f.frame,
            fp,
        });
        set.have += 1;
        set.bytes += f.chunk.len();
        self.total_bytes += f.chunk.len();
        let (have, total) = (set.have, set.total);
        if total.is_some_and(|t| usize::from(t) == have) {
            if let Some(done) = self.complete(key, f.seq) {
                return PushResult {
                    outcome: PushOutcome::Complete(done),
                    warnings,
                };
            }
        }
        PushResult {
            outcome: PushOutcome::Stored { have, total },
            warnings,
        }
    }

    fn complete(&mut self, key: (K, u16), seq: u16) -> Option<Reassembled> {
        let set = self.open.remove(&key)?;
        self.total_bytes -= set.bytes;
        let mut payload = Vec::with_capacity(set.bytes);
        let mut frames = Vec::with_capacity(set.chunks.len());
        let mut fps = Vec::with_capacity(set.chunks.len());
        for c in set.chunks.iter().flatten() {
            payload.extend_from_slice(&c.data);
            frames.push(c.frame);
            fps.push(c.fp);
        }
        let generation = self.next_generation;
        self.next_generation += 1;
        self.delivered.insert(
            key.clone(),
            Delivered {
                fps,
                last_time_ns: set.last.time_ns,
                generation,
            },
        );
        self.delivered_order.push_back((key, generation));
        while self.delivered.len() > self.limits.max_delivered_sets {
            let Some((k, g)) = self.delivered_order.pop_front() else {
                break;
            };
            if self.delivered.get(&k).is_some_and(|d| d.generation == g) {
                self.delivered.remove(&k);
            }
        }
        if self.delivered_order.len() > 2 * self.limits.max_delivered_sets.max(1) {
            let delivered = &self.delivered;
            self.delivered_order
                .retain(|(k, g)| delivered.get(k).is_some_and(|d| d.generation == *g));
        }
        Some(Reassembled {
            seq,
            payload,
            frames,
            first: set.first,
            last: set.last,
        })
    }

    fn drop_set(&mut self, key: &(K, u16), reason: IncompleteReason) {
        if let Some(set) = self.open.remove(key) {
            self.total_bytes -= set.bytes;
            let inc = incomplete(key, &set, reason);
            if self.dropped.len() < MAX_REPORTED_INCOMPLETE {
                self.dropped.push(inc);
            } else {
                self.dropped_not_listed += 1;
            }
        }
    }

    fn oldest_except(&self, keep: Option<&(K, u16)>) -> Option<(K, u16)> {
        self.open
            .iter()
            .filter(|(k, _)| Some(*k) != keep)
            .min_by_key(|(_, s)| (s.last.time_ns, s.last.frame))
            .map(|(k, _)| k.clone())
    }

    fn drop_oldest(&mut self, reason: IncompleteReason) -> bool {
        match self.oldest_except(None) {
            Some(k) => {
                self.drop_set(&k, reason);
                true
            }
            None => false,
        }
    }

    fn drop_oldest_except(&mut self, keep: &(K, u16), reason: IncompleteReason) -> bool {
        match self.oldest_except(Some(keep)) {
            Some(k) => {
                self.drop_set(&k, reason);
                true
            }
            None => false,
        }
    }

    fn expire(&mut self, now_ns: i64) {
        let max_age = self.limits.max_age_ns;
        let old: Vec<(K, u16)> = self
            .open
            .iter()
            .filter(|(_, s)| now_ns.saturating_sub(s.last.time_ns) > max_age)
            .map(|(k, _)| k.clone())
            .collect();
        for k in old {
            self.drop_set(&k, IncompleteReason::Expired);
        }
    }

    /// Sets dropped early so far (expired or over a limit), for reporting as they happen.
    pub fn take_dropped(&mut self) -> Vec<Incomplete<K>> {
        std::mem::take(&mut self.dropped)
    }

    /// End one stream (its session is over): its sets that never completed, oldest
    /// first, dropped ones included. Its state is released.
    pub fn finish_stream(&mut self, stream: &K) -> Vec<Incomplete<K>> {
        let mut out: Vec<Incomplete<K>> = Vec::new();
        self.dropped.retain(|i| {
            if i.stream == *stream {
                out.push(i.clone());
                false
            } else {
                true
            }
        });
        let keys: Vec<(K, u16)> = self
            .open
            .keys()
            .filter(|k| k.0 == *stream)
            .cloned()
            .collect();
        for k in keys {
            if let Some(set) = self.open.remove(&k) {
                self.total_bytes -= set.bytes;
                out.push(incomplete(&k, &set, IncompleteReason::EndOfCapture));
            }
        }
        self.delivered.retain(|k, _| k.0 != *stream);
        out.sort_by_key(|i| (i.first.frame, i.first.time_ns, i.seq));
        out
    }

    /// Every set that never completed, oldest first, and how many more were dropped
    /// without being listed.
    pub fn finish(mut self) -> (Vec<Incomplete<K>>, u64) {
        let mut out = std::mem::take(&mut self.dropped);
        for (k, s) in &self.open {
            out.push(incomplete(k, s, IncompleteReason::EndOfCapture));
        }
        out.sort_by_key(|i| (i.first.frame, i.first.time_ns, i.seq));
        (out, self.dropped_not_listed)
    }
}

fn out_of_range(f: &Fragment<'_>, total: u8) -> Warning {
    Warning::new(
        Code::FragmentIndexOutOfRange,
        Some(f.offset),
        format!(
            "seq {}: fragment index {} but the set has {total} fragment(s)",
            f.seq, f.index
        ),
    )
}

fn incomplete<K: Clone>(key: &(K, u16), s: &OpenSet, reason: IncompleteReason) -> Incomplete<K> {
    Incomplete {
        stream: key.0.clone(),
        seq: key.1,
        total: s.total,
        have: (0u8..=255)
            .zip(&s.chunks)
            .filter(|(_, c)| c.is_some())
            .map(|(i, _)| i)
            .collect(),
        bytes: s.bytes,
        first: s.first,
        last: s.last,
        reason,
    }
}

#[cfg(test)]
mod tests;
