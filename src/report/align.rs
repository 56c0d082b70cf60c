//! Aligning the message digests of two captures as they are read.
//!
//! `bcwire diff` compares, per flow, the two sequences of delivered messages position
//! by position, and counts over each direction the messages without an equal twin in
//! the other capture. [`Aligner`] does both while the captures are read, in any
//! interleaving of the two: a flow keeps the digests not yet aligned (none once the flow
//! has diverged and its first differences are noted). Where the sequences part, the
//! next [`RESYNC_WINDOW`] digests of each side decide whether one side has a short run
//! of extra messages (skipped, so the messages after it align again) or the two fronts
//! stand for each other ([`next_step`]). A
//! digest seen in both captures cancels out of the twin count. Read in step, two
//! captures of the same session hold little; what one capture has and the other lacks
//! (a flow only in A, messages without twins) is held until the end, in memory up to
//! a budget and on disk past it ([`TwinCounts`], [`HeldQueue`]): the result is the same
//! whatever the budget.

pub use super::diff_model::Side;
use super::diff_model::{DiffResult, Divergence, FlowKey, MessageDigest};
use super::held::{HeldQueue, HeldStore};
use super::twin_counts::TwinCounts;
use crate::diag::Direction;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeMap, VecDeque};
use std::io;

/// Memory `bcwire diff` spends on what two captures do not share before spilling it
/// to temporary files: a quarter for each direction's twin counts, half for the
/// digests flows hold. Small enough that peak memory no longer depends on how much
/// the captures differ (two unrelated 100,000-frame captures already fill it), large
/// enough that captures of one session never spill.
pub const DEFAULT_BUDGET: usize = 16 << 20;

/// How many messages of each side a flow looks at when the two sequences part: a run
/// of fewer than this many messages one capture has and the other lacks (a lost
/// datagram, an extra chat line) is skipped and the sequences meet again after it; the
/// window holds the run and the message that realigns.
pub const RESYNC_WINDOW: usize = 32;

/// What [`next_step`] decides at the fronts of two flows that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The next `n` messages of A have no counterpart in B (B's front is A's n-th).
    ExtraInA(usize),
    /// The next `n` messages of B have no counterpart in A.
    ExtraInB(usize),
    /// The two fronts stand for each other (same place, different content).
    Pair,
}

/// The step at two differing fronts, from at most [`RESYNC_WINDOW`] messages of each
/// side: the shortest run of extra messages on one side after which the fronts are
/// equal, A's first on a tie; a pair when there is none. Only called with each window
/// full or holding the rest of its side, so the answer does not depend on when the
/// captures' messages arrived.
pub fn next_step(a: &VecDeque<u64>, b: &VecDeque<u64>) -> Step {
    for k in 1..RESYNC_WINDOW {
        if a.get(k).is_some() && a.get(k) == b.front() {
            return Step::ExtraInA(k);
        }
        if b.get(k).is_some() && b.get(k) == a.front() {
            return Step::ExtraInB(k);
        }
    }
    Step::Pair
}

/// One flow's alignment so far.
#[derive(Debug, Default)]
struct FlowAlign {
    /// Delivered messages of A and B.
    len: [usize; 2],
    /// Index of the first message not yet aligned, per side.
    next: [usize; 2],
    /// The first unaligned digests of each side, at most [`RESYNC_WINDOW`].
    window: [VecDeque<u64>; 2],
    /// The side's unaligned digests past its window (held, spilled past the budget).
    held: [HeldQueue; 2],
    /// The first place where the sequences differ: (A's index, B's index, opcodes).
    divergence: Option<(usize, usize, Option<u8>, Option<u8>)>,
    /// The first pairs (at most the cap) of differing messages with the same opcode
    /// standing for each other: (A's index, B's index).
    candidates: Vec<(usize, usize)>,
}

impl FlowAlign {
    /// Nothing later can change what this flow reports.
    fn settled(&self, max: usize) -> bool {
        self.divergence.is_some() && self.candidates.len() >= max
    }

    fn note(&mut self, a: Option<u64>, b: Option<u64>, max: usize) {
        let (a, b) = (
            a.map(MessageDigest::from_raw),
            b.map(MessageDigest::from_raw),
        );
        if self.divergence.is_none() {
            self.divergence = Some((
                self.next[0],
                self.next[1],
                a.map(|d| d.opcode()),
                b.map(|d| d.opcode()),
            ));
        }
        if let (Some(x), Some(y)) = (a, b) {
            if x.opcode() == y.opcode() && self.candidates.len() < max {
                self.candidates.push((self.next[0], self.next[1]));
            }
        }
    }

    fn push(&mut self, s: usize, d: u64, store: &mut HeldStore) {
        self.len[s] += 1;
        if self.held[s].is_empty() && self.window[s].len() < RESYNC_WINDOW {
            self.window[s].push_back(d);
        } else {
            self.held[s].push_back(d, store);
        }
    }

    /// Take the front of side `s`, refilling its window from what is held.
    fn pop(&mut self, s: usize, store: &mut HeldStore) -> io::Result<Option<u64>> {
        let d = self.window[s].pop_front();
        if d.is_some() {
            self.next[s] += 1;
            if let Some(more) = self.held[s].pop_front(store)? {
                self.window[s].push_back(more);
            }
        }
        Ok(d)
    }

    /// Side `s`'s window holds all it will hold for a decision.
    fn ready(&self, s: usize, ended: bool) -> bool {
        self.window[s].len() >= RESYNC_WINDOW || (ended && self.held[s].is_empty())
    }

    /// Align what both sides hold as far as it can be decided now.
    fn advance(&mut self, ended: [bool; 2], max: usize, store: &mut HeldStore) -> io::Result<()> {
        loop {
            if self.settled(max) {
                for s in 0..2 {
                    self.window[s].clear();
                    self.held[s].clear(store);
                }
                return Ok(());
            }
            let (fa, fb) = (
                self.window[0].front().copied(),
                self.window[1].front().copied(),
            );
            match (fa, fb) {
                (Some(x), Some(y)) if x == y => {
                    self.pop(0, store)?;
                    self.pop(1, store)?;
                }
                (Some(_), Some(_)) => {
                    if !(self.ready(0, ended[0]) && self.ready(1, ended[1])) {
                        return Ok(());
                    }
                    match next_step(&self.window[0], &self.window[1]) {
                        Step::ExtraInA(n) => {
                            for _ in 0..n {
                                let d = self.window[0].front().copied();
                                self.note(d, None, max);
                                self.pop(0, store)?;
                            }
                        }
                        Step::ExtraInB(n) => {
                            for _ in 0..n {
                                let d = self.window[1].front().copied();
                                self.note(None, d, max);
                                self.pop(1, store)?;
                            }
                        }
                        Step::Pair => {
                            self.note(fa, fb, max);
                            self.pop(0, store)?;
                            self.pop(1, store)?;
                        }
                    }
                }
                // One side has no more: the other's messages are all extra (a flow the
                // ended capture never had is not compared at all).
                (Some(x), None) if ended[1] && self.len[1] > 0 => {
                    self.note(Some(x), None, max);
                    self.pop(0, store)?;
                }
                (None, Some(y)) if ended[0] && self.len[0] > 0 => {
                    self.note(None, Some(y), max);
                    self.pop(1, store)?;
                }
                _ => return Ok(()),
            }
        }
    }

    /// Nothing is held for a later decision.
    fn is_empty(&self) -> bool {
        self.window.iter().all(|w| w.is_empty()) && self.held.iter().all(|h| h.is_empty())
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
            let alike = self
                .flows
                .get(&k)
                .is_some_and(|f| f.len[0] == f.len[1] && f.divergence.is_none() && f.is_empty());
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
                for h in &mut f.held {
                    h.spill(&mut self.held)?;
                }
            }
            self.held.spilled_all();
        }
        Ok(())
    }

    fn align(&mut self, side: Side, flow: FlowKey, d: MessageDigest) -> io::Result<()> {
        let store = &mut self.held;
        let max = self.max_differences;
        let f = self.flows.entry(flow).or_insert_with(|| {
            self.session_flows
                .entry(flow.session)
                .or_default()
                .push(flow);
            FlowAlign::default()
        });
        let other = 1 - side.index();
        if f.settled(max) || (self.ended[other] && f.len[other] == 0) {
            // Nothing to align with, ever.
            f.len[side.index()] += 1;
            return Ok(());
        }
        f.push(side.index(), d.raw(), store);
        f.advance(self.ended, max, store)
    }

    /// Capture `side` has no more messages.
    pub fn end(&mut self, side: Side) -> io::Result<()> {
        self.ended[side.index()] = true;
        let max = self.max_differences;
        for f in self.flows.values_mut() {
            if f.len[side.index()] == 0 {
                // A flow the ended capture never had: not compared.
                for s in 0..2 {
                    f.window[s].clear();
                    f.held[s].clear(&mut self.held);
                }
                continue;
            }
            f.advance(self.ended, max, &mut self.held)?;
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
            let Some((index, b_index, a_opcode, b_opcode)) = f.divergence else {
                continue;
            };
            r.divergences.push(Divergence {
                flow: *k,
                index,
                b_index,
                a_opcode,
                b_opcode,
            });
            let room = max.saturating_sub(r.wanted.len());
            r.wanted
                .extend(f.candidates.iter().take(room).map(|&(i, j)| (*k, i, j)));
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

/// Hand-built digest sequences with answers worked out by hand from the rule in the
/// docs of [`next_step`] and `docs/json.md` ("Flows are aligned message by message"),
/// not from a second implementation of it.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::diff_model::{DiffResult, FlowKey, MessageDigest};

    const FLOW: FlowKey = FlowKey {
        session: 0,
        client: 0,
        direction: Direction::S2C,
    };

    /// A digest whose opcode is `n`, so that every number is its own opcode.
    fn d(n: u64) -> MessageDigest {
        MessageDigest::new(n as u8, n)
    }

    fn deque(v: &[u64]) -> VecDeque<u64> {
        v.iter().map(|&n| d(n).raw()).collect()
    }

    /// Aligns one flow of A against one flow of B, pushing A's messages first.
    fn align(a: &[MessageDigest], b: &[MessageDigest]) -> DiffResult {
        let mut al = Aligner::new(20);
        for (side, seq) in [(Side::A, a), (Side::B, b)] {
            for m in seq {
                al.push(side, FLOW, *m).unwrap();
            }
            al.end(side).unwrap();
        }
        let mut r = DiffResult::default();
        al.finish(&mut r).unwrap();
        r
    }

    fn divergences(r: &DiffResult) -> Vec<(usize, usize, Option<u8>, Option<u8>)> {
        r.divergences
            .iter()
            .map(|x| (x.index, x.b_index, x.a_opcode, x.b_opcode))
            .collect()
    }

    fn digests(v: &[u64]) -> Vec<MessageDigest> {
        v.iter().map(|&n| d(n)).collect()
    }

    // B lacks A's third message: A has one extra at index 2.
    // Catches: next_step not looking ahead (every differing front taken as a pair).
    #[test]
    fn one_lost_message_is_one_extra_in_a() {
        assert_eq!(next_step(&deque(&[3, 4]), &deque(&[4])), Step::ExtraInA(1));
        let r = align(&digests(&[1, 2, 3, 4]), &digests(&[1, 2, 4]));
        assert_eq!(divergences(&r), [(2, 2, Some(3), None)]);
        // Message 3 has no twin in B: one unmatched in A, none in B.
        assert_eq!(r.unmatched, [(Direction::S2C, 3, 1, 0)]);
        assert!(r.wanted.is_empty());
    }

    // Catches: an added message taken as standing for A's message (a pair, as when
    // next_step does not look ahead) instead of an extra in B.
    #[test]
    fn an_added_message_is_one_extra_in_b() {
        assert_eq!(next_step(&deque(&[3]), &deque(&[9, 3])), Step::ExtraInB(1));
        let r = align(&digests(&[1, 2, 3]), &digests(&[1, 2, 9, 3]));
        assert_eq!(divergences(&r), [(2, 2, None, Some(9))]);
        assert_eq!(r.unmatched, [(Direction::S2C, 9, 0, 1)]);
    }

    // Catches: B's side tried before A's at equal run length (the docs: "A's first on
    // a tie"); a swapped pair is exactly such a tie.
    #[test]
    fn a_swapped_pair_is_a_tie_won_by_a() {
        assert_eq!(
            next_step(&deque(&[2, 3, 4]), &deque(&[3, 2, 4])),
            Step::ExtraInA(1)
        );
        let r = align(&digests(&[1, 2, 3, 4]), &digests(&[1, 3, 2, 4]));
        // A's 2 is skipped as extra, the 3s pair off, then B's 2 is extra: the first
        // divergence is at index 1 on both sides, and every message has its twin.
        assert_eq!(divergences(&r), [(1, 1, Some(2), None)]);
        assert!(r.unmatched.is_empty(), "{:?}", r.unmatched);
    }

    // The docs: "the shortest run of extra messages on one side", whichever side.
    // Catches: next_step not looking ahead (no run found, a pair instead).
    #[test]
    fn the_shortest_run_wins_whichever_side_has_it() {
        // A would realign after 3 extras (a[3] == b[0] == 9), B after 2 (b[2] == a[0]).
        assert_eq!(
            next_step(&deque(&[1, 2, 3, 9]), &deque(&[9, 8, 1])),
            Step::ExtraInB(2)
        );
        assert_eq!(
            next_step(&deque(&[9, 8, 1]), &deque(&[1, 2, 3, 9])),
            Step::ExtraInA(2)
        );
    }

    // Catches: the same-opcode test for a pair whose fields are to be fetched inverted
    // (no field comparison wanted for two StateUpdates standing for each other).
    #[test]
    fn same_place_different_content_is_a_pair() {
        let (x, y) = (MessageDigest::new(0x1C, 1), MessageDigest::new(0x1C, 2));
        let a = [d(1), x, d(3)];
        let b = [d(1), y, d(3)];
        let r = align(&a, &b);
        assert_eq!(divergences(&r), [(1, 1, Some(0x1C), Some(0x1C))]);
        assert_eq!(r.wanted.iter().copied().collect::<Vec<_>>(), [(FLOW, 1, 1)]);
        assert_eq!(r.unmatched, [(Direction::S2C, 0x1C, 1, 1)]);
    }

    // Catches: the look-ahead loop stopping one short of the window (a run of
    // RESYNC_WINDOW - 1 extra messages is the longest the window of RESYNC_WINDOW
    // digests can show followed by the message that realigns).
    #[test]
    fn the_longest_run_the_window_shows_still_realigns() {
        let run = RESYNC_WINDOW - 1;
        let mut a = vec![d(1)];
        a.extend((0..run).map(|i| MessageDigest::new(0x80, i as u64)));
        a.extend([d(2), d(3)]);
        let r = align(&a, &digests(&[1, 2, 3]));
        assert_eq!(divergences(&r), [(1, 1, Some(0x80), None)]);
        assert_eq!(r.unmatched, [(Direction::S2C, 0x80, run as u64, 0)]);
    }

    // The documented bound: a run as long as the window itself cannot be told from
    // a different message, so the fronts are paired.
    // Catches: a look-ahead that reads past the window it was given.
    #[test]
    fn a_run_as_long_as_the_window_is_paired() {
        let mut a = vec![d(1)];
        a.extend((0..RESYNC_WINDOW).map(|i| MessageDigest::new(0x80, i as u64)));
        a.extend([d(2), d(3)]);
        let r = align(&a, &digests(&[1, 2, 3]));
        assert_eq!(divergences(&r), [(1, 1, Some(0x80), Some(2))]);
    }
}
