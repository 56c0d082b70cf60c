//! Aligning the message digests of two captures as they are read.
//!
//! `bcwire diff` compares, per flow, the two sequences of delivered messages position
//! by position, and counts over each direction the messages without an equal twin in
//! the other capture. [`Aligner`] does both while the captures are read, in any
//! interleaving of the two: a flow keeps only the digests of the capture that is ahead
//! in it (none once the flow has diverged and its first differences are noted), and a
//! digest seen in both captures cancels out of the twin count. Read in step, two
//! captures of the same session hold little; what one capture has and the other lacks
//! (a flow only in A, messages without twins) is held until the end, in memory up to
//! a budget and on disk past it ([`TwinCounts`], [`HeldQueue`]): the result is the same
//! whatever the budget.

use super::diff::{DiffResult, Divergence, FlowKey, MessageDigest};
use super::held::{HeldQueue, HeldStore};
use super::twin_counts::TwinCounts;
use crate::diag::Direction;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;
use std::io;

/// Memory `bcwire diff` spends on what two captures do not share before spilling it
/// to temporary files: a quarter for each direction's twin counts, half for the
/// digests flows hold. Small enough that peak memory no longer depends on how much
/// the captures differ (two unrelated 100,000-frame captures already fill it), large
/// enough that captures of one session never spill.
pub const DEFAULT_BUDGET: usize = 16 << 20;

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
    ahead: HeldQueue,
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
    fn flush_past_end(&mut self, ended: Side, max: usize, store: &mut HeldStore) -> io::Result<()> {
        let (e, o) = (ended.index(), 1 - ended.index());
        if self.len[e] == 0 {
            // A flow the ended capture never had: not compared.
            self.ahead.clear(store);
            return Ok(());
        }
        if self.len[e] >= self.len[o] {
            // What is held (if anything) is the ended side's, waiting for the other.
            return Ok(());
        }
        let mut index = self.len[e];
        while !self.settled(max) {
            let Some(d) = self.ahead.pop_front(store)? else {
                break;
            };
            let d = MessageDigest::from_raw(d);
            let (a, b) = match ended {
                Side::A => (None, Some(d)),
                Side::B => (Some(d), None),
            };
            self.compare(index, a, b, max);
            index += 1;
        }
        self.ahead.clear(store);
        Ok(())
    }
}

/// Aligns two captures' digests pushed in any interleaving; see the module docs.
#[derive(Debug)]
pub struct Aligner {
    max_differences: usize,
    flows: FxHashMap<FlowKey, FlowAlign>,
    /// Per direction: digest → (copies in A) − (copies in B), zero entries removed.
    twins: [TwinCounts; 2],
    /// Where the flows' `ahead` digests are spilled.
    held: HeldStore,
    ended: [bool; 2],
    /// The flows of each session, for letting go of them once it has ended.
    session_flows: FxHashMap<usize, Vec<FlowKey>>,
    /// Sessions one capture has ended and the other not yet, per capture.
    sessions_ended: [FxHashSet<usize>; 2],
}

impl Aligner {
    /// `max_differences`: how many differing positions to name, over all flows.
    pub fn new(max_differences: usize) -> Aligner {
        Aligner::with_budget(max_differences, DEFAULT_BUDGET)
    }

    /// Spilling past `budget` bytes (see [`DEFAULT_BUDGET`]); the result does not
    /// depend on it.
    pub fn with_budget(max_differences: usize, budget: usize) -> Aligner {
        Aligner {
            max_differences,
            flows: FxHashMap::default(),
            twins: [TwinCounts::new(budget / 4), TwinCounts::new(budget / 4)],
            held: HeldStore::new(budget / 2),
            ended: [false; 2],
            session_flows: FxHashMap::default(),
            sessions_ended: Default::default(),
        }
    }

    /// Flows whose alignment is kept (for tests of [`Aligner::session_ended`]).
    pub fn flows_kept(&self) -> usize {
        self.flows.len()
    }

    /// Capture `side` can have no more messages in `session`. Once both captures have
    /// ended it, its flows that read alike to their end (same length, no difference,
    /// nothing held) can report nothing any more and are let go: a capture of many
    /// sessions keeps only the flows that differ.
    pub fn session_ended(&mut self, side: Side, session: usize) {
        let other = 1 - side.index();
        if !self.sessions_ended[other].remove(&session) {
            self.sessions_ended[side.index()].insert(session);
            return;
        }
        let Some(keys) = self.session_flows.remove(&session) else {
            return;
        };
        for k in keys {
            let alike = self.flows.get(&k).is_some_and(|f| {
                f.len[0] == f.len[1] && f.divergence.is_none() && f.ahead.is_empty()
            });
            if alike {
                self.flows.remove(&k);
            }
        }
    }

    /// Twin-count runs and held segments written to disk so far.
    pub fn spills(&self) -> usize {
        self.twins[0].runs() + self.twins[1].runs() + self.held.spills()
    }

    /// The next delivered message of `flow` in capture `side`; fails only when
    /// spilling to (or reading back from) a temporary file fails.
    pub fn push(&mut self, side: Side, flow: FlowKey, d: MessageDigest) -> io::Result<()> {
        let delta = if side == Side::A { 1 } else { -1 };
        self.twins[flow.direction.index()].add(d.raw(), delta)?;
        self.align(side, flow, d)?;
        if self.held.over_budget() {
            for f in self.flows.values_mut() {
                f.ahead.spill(&mut self.held)?;
            }
            self.held.spilled_all();
        }
        Ok(())
    }

    fn align(&mut self, side: Side, flow: FlowKey, d: MessageDigest) -> io::Result<()> {
        let store = &mut self.held;
        let (s, o) = (side.index(), 1 - side.index());
        let max = self.max_differences;
        let f = self.flows.entry(flow).or_insert_with(|| {
            self.session_flows
                .entry(flow.session)
                .or_default()
                .push(flow);
            FlowAlign::default()
        });
        let index = f.len[s];
        f.len[s] += 1;
        if f.settled(max) {
            f.ahead.clear(store);
            return Ok(());
        }
        let pair = |mine: Option<MessageDigest>, theirs: Option<MessageDigest>| match side {
            Side::A => (mine, theirs),
            Side::B => (theirs, mine),
        };
        if index < f.len[o] {
            // The other capture is ahead here: its digest at `index` is the oldest held.
            if let Some(theirs) = f.ahead.pop_front(store)? {
                let (a, b) = pair(Some(d), Some(MessageDigest::from_raw(theirs)));
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
            f.ahead.push_back(d.raw(), store);
        }
        Ok(())
    }

    /// Capture `side` has no more messages.
    pub fn end(&mut self, side: Side) -> io::Result<()> {
        self.ended[side.index()] = true;
        let max = self.max_differences;
        for f in self.flows.values_mut() {
            f.flush_past_end(side, max, &mut self.held)?;
        }
        Ok(())
    }

    /// Fill in the flows, twins, divergences and wanted positions of `r`.
    pub fn finish(mut self, r: &mut DiffResult) -> io::Result<()> {
        for side in [Side::A, Side::B] {
            if !self.ended[side.index()] {
                self.end(side)?;
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
        // Only sums per opcode come out of the twin counts: the order they are visited
        // in (table order, or merged runs) does not show.
        let mut unmatched: BTreeMap<(Direction, u8), (u64, u64)> = BTreeMap::new();
        let [c2s, s2c] = self.twins;
        for (dir, twins) in [(Direction::C2S, c2s), (Direction::S2C, s2c)] {
            twins.for_each_total(|raw, n| {
                let e = unmatched
                    .entry((dir, MessageDigest::from_raw(raw).opcode()))
                    .or_default();
                if n > 0 {
                    e.0 += n as u64;
                } else {
                    e.1 += n.unsigned_abs();
                }
            })?;
        }
        r.unmatched = unmatched
            .into_iter()
            .filter(|(_, (x, y))| *x > 0 || *y > 0)
            .map(|((d, op), (x, y))| (d, op, x, y))
            .collect();
        Ok(())
    }
}
