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
mod tests {
    use super::super::cipher::{decrypt, encrypt};
    use super::super::packet::{emit_packet, parse, DataMessage, FragmentHeader, MessageBody};
    use super::super::reliability::{Delivery, SeqKey, Tracker};
    use super::*;

    const S: i64 = 1_000_000_000;

    fn frag(seq: u16, index: u8, total: Option<u8>, chunk: &[u8], frame: u64) -> Fragment<'_> {
        Fragment {
            seq,
            index,
            total,
            chunk,
            offset: 2,
            frame,
            time_ns: frame as i64 * S / 10,
        }
    }

    fn codes(r: &PushResult) -> Vec<&'static str> {
        r.warnings.iter().map(|w| w.code.as_str()).collect()
    }

    /// A client's round-2 checksum reply as observed (README §4.4): 0x32 messages of
    /// 412, 412 and 27 bytes carrying 832 payload bytes, sent as real datagrams
    /// (emit → encrypt → decrypt → parse), arriving out of order with a duplicated
    /// fragment and a later retransmitted copy, through the tracker and reassembler.
    #[test]
    fn checksum_reply_out_of_order_with_duplicate_and_resend() {
        let reply: Vec<u8> = std::iter::once(0x21u8)
            .chain((1..832u32).map(|i| (i * 7 + i / 5) as u8))
            .collect();
        let seq = 0x0004;
        let chunks = [&reply[..405], &reply[405..811], &reply[811..]];
        let datagrams: Vec<Vec<u8>> = chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let index = i as u8;
                let total = (i == 0).then_some(3);
                let m = DataMessage::new(
                    Some(seq),
                    false,
                    Some(FragmentHeader { index, total }),
                    c.len(),
                )
                .unwrap();
                let expect_len = [412, 412, 27][i];
                assert_eq!(m.declared_len(), expect_len);
                let mut d = emit_packet(2, &[(&MessageBody::Data(m), c)]).unwrap();
                encrypt(&mut d);
                d
            })
            .collect();
        // Arrival: fragment 2, fragment 0, fragment 0 again, fragment 1, then 2 s
        // later a resend of fragment 1 and, after the tracker forgot nothing, fragment 0.
        let arrivals = [
            (2usize, 10u64, 0),
            (0, 11, S / 100),
            (0, 12, S / 50),
            (1, 13, S / 20),
            (1, 14, 2 * S),
            (0, 15, 4 * S),
        ];
        let mut tracker = Tracker::new();
        let mut reasm = Reassembler::default();
        let mut delivered = Vec::new();
        let mut retransmissions = 0;
        for (i, frame, t) in arrivals {
            let mut plain = datagrams[i].clone();
            decrypt(&mut plain);
            let p = parse(&plain);
            assert!(p.all_warnings().next().is_none());
            let m = &p.messages[0];
            let MessageBody::Data(d) = &m.body else {
                panic!()
            };
            let fh = d.fragment.unwrap();
            let key = SeqKey::of_message(m).unwrap();
            assert_eq!(key.fragment, Some(i as u8));
            match tracker.on_message(&"c2s", key, m.bytes(&plain), t, frame) {
                Delivery::New { .. } => {}
                Delivery::Retransmission { .. } => {
                    retransmissions += 1;
                    // Even if a caller pushes it anyway, it is not delivered twice.
                }
            }
            let r = reasm.push(
                &"c2s",
                Fragment {
                    seq: d.seq.unwrap(),
                    index: fh.index,
                    total: fh.total,
                    chunk: &plain[d.payload.clone()],
                    offset: m.offset,
                    frame,
                    time_ns: t,
                },
            );
            assert!(r.warnings.is_empty());
            match r.outcome {
                PushOutcome::Complete(done) => delivered.push(done),
                PushOutcome::Stored { .. } => assert!(frame == 10 || frame == 11),
                PushOutcome::Duplicate => assert_eq!(frame, 12),
                PushOutcome::AlreadyDelivered => assert!(frame >= 14),
                PushOutcome::Rejected => panic!("rejected"),
            }
        }
        assert_eq!(retransmissions, 3);
        assert_eq!(delivered.len(), 1);
        let done = &delivered[0];
        assert_eq!(done.payload, reply);
        assert_eq!(done.payload[0], 0x21);
        assert_eq!(done.frames, [11, 13, 10]);
        assert_eq!((done.first.frame, done.last.frame), (10, 13));
        assert_eq!(reasm.open_sets(), 0);
        assert_eq!(reasm.open_bytes(), 0);
        assert!(reasm.finish().0.is_empty());
    }

    #[test]
    fn bad_fragment_input_is_located() {
        let mut r = Reassembler::default();
        assert_eq!(
            codes(&r.push(&0, frag(1, 0, Some(0), b"a", 1))),
            ["fragment_total_zero"]
        );
        assert_eq!(
            codes(&r.push(&0, frag(1, 3, Some(3), b"a", 1))),
            ["fragment_index_out_of_range"]
        );
        // Stored before fragment 0 told the count, then found out of range.
        assert!(matches!(
            r.push(&0, frag(2, 5, None, b"x", 2)).outcome,
            PushOutcome::Stored {
                have: 1,
                total: None
            }
        ));
        let res = r.push(&0, frag(2, 0, Some(2), b"y", 3));
        assert_eq!(codes(&res), ["fragment_index_out_of_range"]);
        assert!(matches!(
            res.outcome,
            PushOutcome::Stored {
                have: 1,
                total: Some(2)
            }
        ));
        // Known count: later index beyond it.
        let res = r.push(&0, frag(2, 2, None, b"z", 4));
        assert_eq!(
            (codes(&res), res.outcome),
            (vec!["fragment_index_out_of_range"], PushOutcome::Rejected)
        );
        // Conflicting totals for one key.
        let res = r.push(&0, frag(2, 0, Some(4), b"y", 5));
        assert_eq!(codes(&res), ["fragment_total_conflict"]);
        // Conflicting bytes for one index.
        let res = r.push(&0, frag(2, 0, Some(2), b"Q", 6));
        assert_eq!(
            (codes(&res), res.outcome),
            (vec!["fragment_conflict"], PushOutcome::Duplicate)
        );
        for w in [r.push(&0, frag(9, 0, Some(0), b"", 7))]
            .iter()
            .flat_map(|r| &r.warnings)
        {
            assert_eq!(w.offset, Some(2));
        }
        let res = r.push(&0, frag(2, 1, None, b"w", 8));
        match res.outcome {
            PushOutcome::Complete(d) => {
                assert_eq!((d.payload, d.frames), (b"yw".to_vec(), vec![3, 8]))
            }
            o => panic!("{o:?}"),
        }
        assert_eq!(r.open_bytes(), 0);
    }

    #[test]
    fn reused_seq_with_other_bytes_is_a_new_set_and_streams_are_separate() {
        let mut r = Reassembler::default();
        let _ = r.push(&0, frag(7, 1, None, b"B", 1));
        assert!(matches!(
            r.push(&0, frag(7, 0, Some(2), b"A", 2)).outcome,
            PushOutcome::Complete(_)
        ));
        assert_eq!(
            r.push(&0, frag(7, 0, Some(2), b"A", 3)).outcome,
            PushOutcome::AlreadyDelivered
        );
        // Same seq on another stream: independent.
        assert!(matches!(
            r.push(&1, frag(7, 0, Some(2), b"A", 4)).outcome,
            PushOutcome::Stored { .. }
        ));
        // Same seq, new bytes (wrapped counter): a new set.
        assert!(matches!(
            r.push(&0, frag(7, 0, Some(2), b"C", 5)).outcome,
            PushOutcome::Stored { .. }
        ));
        match r.push(&0, frag(7, 1, None, b"D", 6)).outcome {
            PushOutcome::Complete(d) => assert_eq!(d.payload, b"CD"),
            o => panic!("{o:?}"),
        }
        // Same bytes long after the horizon: a new set as well.
        let mut late = frag(7, 0, Some(2), b"C", 7);
        late.time_ns += 100 * S;
        assert!(matches!(
            r.push(&0, late).outcome,
            PushOutcome::Stored { .. }
        ));
    }

    #[test]
    fn limits_bound_state_and_incomplete_sets_are_reported() {
        let limits = Limits {
            max_open_sets: 3,
            max_set_bytes: 10,
            max_total_bytes: 20,
            max_age_ns: 5 * S,
            ..Limits::default()
        };
        let mut r = Reassembler::new(limits);
        for seq in 0..5u16 {
            let _ = r.push(&0, frag(seq, 0, Some(2), b"abc", u64::from(seq)));
            assert!(r.open_sets() <= 3);
        }
        // Per-set byte limit.
        let res = r.push(&0, frag(20, 1, None, b"0123456789X", 6));
        assert_eq!(codes(&res), ["fragment_set_too_large"]);
        // Total bytes: three sets of 9 bytes do not fit 20.
        for seq in 30..33u16 {
            let _ = r.push(&0, frag(seq, 0, Some(2), b"123456789", 7));
        }
        assert!(r.open_bytes() <= 20);
        // Age: a fragment 10 s later expires everything else.
        let mut late = frag(40, 0, Some(2), b"z", 8);
        late.time_ns += 10 * S;
        let _ = r.push(&0, late);
        assert_eq!(r.open_sets(), 1);
        let (inc, unlisted) = r.finish();
        assert_eq!(unlisted, 0);
        let reasons: Vec<IncompleteReason> = inc.iter().map(|i| i.reason).collect();
        assert!(reasons.contains(&IncompleteReason::TooManySets));
        assert!(reasons.contains(&IncompleteReason::SetTooLarge));
        assert!(reasons.contains(&IncompleteReason::TotalBytes));
        assert!(reasons.contains(&IncompleteReason::Expired));
        assert_eq!(
            inc.last()
                .map(|i| (i.seq, i.reason, i.have.clone(), i.total)),
            Some((40, IncompleteReason::EndOfCapture, vec![0], Some(2)))
        );
    }
}
