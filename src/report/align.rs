//! Aligning the message digests of two captures as they are read.
//!
//! `bcwire diff` compares, per flow, the two sequences of delivered messages position
//! by position, and counts over each direction the messages without an equal twin in
//! the other capture. [`Aligner`] does both while the captures are read, in any
//! interleaving of the two: a flow keeps only the digests of the capture that is ahead
//! in it (none once the flow has diverged and its first differences are noted), and a
//! digest seen in both captures cancels out of the twin count. Read in step, two
//! captures of the same session hold little; what one capture has and the other lacks
//! (a flow only in A, messages without twins) is held until the end.

use super::diff::{DiffResult, Divergence, FlowKey, MessageDigest};
use crate::diag::Direction;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, VecDeque};

/// Which capture a digest comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Side {
    fn index(self) -> usize {
        match self {
            Side::A => 0,
            Side::B => 1,
        }
    }
}

/// One flow's alignment so far.
#[derive(Debug, Default)]
struct FlowAlign {
    /// Delivered messages of A and B.
    len: [usize; 2],
    /// Digests of the capture that is ahead, from position `len[behind]` on.
    ahead: VecDeque<MessageDigest>,
    /// The first position where the sequences differ, with both opcodes.
    divergence: Option<(usize, Option<u8>, Option<u8>)>,
    /// The first differing positions (at most the cap) where both have a message of
    /// the same opcode.
    candidates: Vec<usize>,
}

impl FlowAlign {
    /// Nothing later can change what this flow reports.
    fn settled(&self, max: usize) -> bool {
        self.divergence.is_some() && self.candidates.len() >= max
    }

    fn compare(
        &mut self,
        index: usize,
        a: Option<MessageDigest>,
        b: Option<MessageDigest>,
        max: usize,
    ) {
        if a == b {
            return;
        }
        if self.divergence.is_none() {
            self.divergence = Some((index, a.map(|d| d.opcode()), b.map(|d| d.opcode())));
        }
        if let (Some(x), Some(y)) = (a, b) {
            if x.opcode() == y.opcode() && self.candidates.len() < max {
                self.candidates.push(index);
            }
        }
    }

    /// `ended` has no more messages: the positions held past its end all differ.
    fn flush_past_end(&mut self, ended: Side, max: usize) {
        let (e, o) = (ended.index(), 1 - ended.index());
        if self.len[e] == 0 {
            // A flow the ended capture never had: not compared.
            self.ahead.clear();
            return;
        }
        if self.len[e] >= self.len[o] {
            // What is held (if anything) is the ended side's, waiting for the other.
            return;
        }
        let from = self.len[e];
        let held = std::mem::take(&mut self.ahead);
        for (k, d) in held.into_iter().enumerate() {
            if self.settled(max) {
                break;
            }
            let (a, b) = match ended {
                Side::A => (None, Some(d)),
                Side::B => (Some(d), None),
            };
            self.compare(from + k, a, b, max);
        }
    }
}

/// Aligns two captures' digests pushed in any interleaving; see the module docs.
#[derive(Debug)]
pub struct Aligner {
    max_differences: usize,
    flows: FxHashMap<FlowKey, FlowAlign>,
    /// Per direction: digest → (copies in A) − (copies in B), zero entries removed.
    twins: [FxHashMap<u64, i64>; 2],
    ended: [bool; 2],
}

impl Aligner {
    /// `max_differences`: how many differing positions to name, over all flows.
    pub fn new(max_differences: usize) -> Aligner {
        Aligner {
            max_differences,
            flows: FxHashMap::default(),
            twins: Default::default(),
            ended: [false; 2],
        }
    }

    /// The next delivered message of `flow` in capture `side`.
    pub fn push(&mut self, side: Side, flow: FlowKey, d: MessageDigest) {
        let twins = &mut self.twins[flow.direction.index()];
        let delta = if side == Side::A { 1 } else { -1 };
        match twins.entry(d.raw()) {
            std::collections::hash_map::Entry::Occupied(mut e) => {
                *e.get_mut() += delta;
                if *e.get() == 0 {
                    e.remove();
                }
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(delta);
            }
        }
        let (s, o) = (side.index(), 1 - side.index());
        let max = self.max_differences;
        let f = self.flows.entry(flow).or_default();
        let index = f.len[s];
        f.len[s] += 1;
        if f.settled(max) {
            f.ahead.clear();
            return;
        }
        let pair = |mine: Option<MessageDigest>, theirs: Option<MessageDigest>| match side {
            Side::A => (mine, theirs),
            Side::B => (theirs, mine),
        };
        if index < f.len[o] {
            // The other capture is ahead here: its digest at `index` is the oldest held.
            if let Some(theirs) = f.ahead.pop_front() {
                let (a, b) = pair(Some(d), Some(theirs));
                f.compare(index, a, b, max);
            }
        } else if self.ended[o] {
            // The other capture has no more messages: past its end, every position
            // differs (a flow it never had is not compared at all).
            if f.len[o] > 0 {
                let (a, b) = pair(Some(d), None);
                f.compare(index, a, b, max);
            }
        } else {
            f.ahead.push_back(d);
        }
    }

    /// Capture `side` has no more messages.
    pub fn end(&mut self, side: Side) {
        self.ended[side.index()] = true;
        let max = self.max_differences;
        for f in self.flows.values_mut() {
            f.flush_past_end(side, max);
        }
    }

    /// Fill in the flows, twins, divergences and wanted positions of `r`.
    pub fn finish(mut self, r: &mut DiffResult) {
        for side in [Side::A, Side::B] {
            if !self.ended[side.index()] {
                self.end(side);
            }
        }
        let max = self.max_differences;
        let flows: BTreeMap<FlowKey, FlowAlign> = self.flows.drain().collect();
        for (k, f) in &flows {
            match (f.len[0] > 0, f.len[1] > 0) {
                (true, false) => r.only_in_a.push(*k),
                (false, true) => r.only_in_b.push(*k),
                _ => {}
            }
        }
        for (k, f) in &flows {
            let Some((index, a_opcode, b_opcode)) = f.divergence else {
                continue;
            };
            r.divergences.push(Divergence {
                flow: *k,
                index,
                a_opcode,
                b_opcode,
            });
            let room = max.saturating_sub(r.wanted.len());
            r.wanted
                .extend(f.candidates.iter().take(room).map(|&i| (*k, i)));
        }
        let mut unmatched: BTreeMap<(Direction, u8), (u64, u64)> = BTreeMap::new();
        for dir in [Direction::C2S, Direction::S2C] {
            for (&raw, &n) in &self.twins[dir.index()] {
                let e = unmatched
                    .entry((dir, MessageDigest::from_raw(raw).opcode()))
                    .or_default();
                if n > 0 {
                    e.0 += n as u64;
                } else {
                    e.1 += n.unsigned_abs();
                }
            }
        }
        r.unmatched = unmatched
            .into_iter()
            .filter(|(_, (x, y))| *x > 0 || *y > 0)
            .map(|((d, op), (x, y))| (d, op, x, y))
            .collect();
    }
}
