//! What a diff is made of and ends in, shared by the aligner ([`super::align`]) and
//! the comparison that drives it ([`super::diff`]): flows, message digests, the two
//! sides, and the result with its divergences and field mismatches.

use crate::diag::Direction;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One direction of one client of one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowKey {
    pub session: usize,
    pub client: usize,
    pub direction: Direction,
}

impl std::fmt::Display for FlowKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "session {} client {} {}",
            self.session, self.client, self.direction
        )
    }
}

/// Where B's clients stand in A: (session, client) of B → that of A. A client of B
/// with no counterpart gets a number no client of A has, so its flows are B's alone.
pub type ClientMap = HashMap<(usize, usize), (usize, usize)>;

/// How one client of B was paired with one of A, for the printed pairing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientPair {
    pub session: usize,
    pub a: Option<(usize, Option<String>)>,
    pub b: Option<(usize, Option<String>)>,
    /// "name", "slot", "port" or "order"; empty for a client on one side only.
    pub by: &'static str,
}

/// B's flow key as A numbers its clients.
pub fn mapped(map: Option<&ClientMap>, session: usize, client: usize) -> (usize, usize) {
    map.and_then(|m| m.get(&(session, client)))
        .copied()
        .unwrap_or((session, client))
}

/// Which capture a digest comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Side {
    pub(crate) fn index(self) -> usize {
        match self {
            Side::A => 0,
            Side::B => 1,
        }
    }
}

/// One delivered message in 8 bytes: the opcode in the top byte, 56 bits of the
/// fingerprint of its compared fields below (a diff keeps one per message).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MessageDigest(u64);

impl MessageDigest {
    pub fn new(opcode: u8, fingerprint: u64) -> MessageDigest {
        MessageDigest((opcode as u64) << 56 | (fingerprint & 0x00FF_FFFF_FFFF_FFFF))
    }
    pub fn opcode(self) -> u8 {
        (self.0 >> 56) as u8
    }
    /// The 8 bytes as one word.
    pub fn raw(self) -> u64 {
        self.0
    }
    pub fn from_raw(raw: u64) -> MessageDigest {
        MessageDigest(raw)
    }
}

/// One value of a message whose two sides differ: its path, and each side's value as
/// text (`None`: absent on that side).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDifference {
    pub path: String,
    pub a: Option<String>,
    pub b: Option<String>,
}

/// Where two flows part ways.
#[derive(Debug, Clone)]
pub struct Divergence {
    pub flow: FlowKey,
    /// A's and B's message index there.
    pub index: usize,
    pub b_index: usize,
    pub a_opcode: Option<u8>,
    pub b_opcode: Option<u8>,
}

/// An aligned pair (same flow, standing for each other, same opcode) whose fields
/// differ.
#[derive(Debug, Clone)]
pub struct FieldMismatch {
    pub flow: FlowKey,
    /// A's and B's message index in the flow.
    pub index: usize,
    pub b_index: usize,
    pub opcode: u8,
    pub a_frame: u64,
    pub b_frame: u64,
    pub differences: Vec<FieldDifference>,
}

#[derive(Debug, Default)]
pub struct DiffResult {
    pub opcode_rows: Vec<(Direction, u8, u64, u64)>,
    pub flag_rows: Vec<(Direction, u8, u64, u64)>,
    pub only_in_a: Vec<FlowKey>,
    pub only_in_b: Vec<FlowKey>,
    /// Per direction and opcode: messages in one capture with no equal message in the other.
    pub unmatched: Vec<(Direction, u8, u64, u64)>,
    pub divergences: Vec<Divergence>,
    pub mismatches: Vec<FieldMismatch>,
    /// (flow, A's index, B's index) of the pairs whose fields still need fetching, at
    /// most `max` of them.
    pub wanted: BTreeSet<(FlowKey, usize, usize)>,
    /// Player names of flows, where known, for naming them.
    pub flow_names: BTreeMap<FlowKey, String>,
    /// How B's clients were paired with A's.
    pub pairing: Vec<ClientPair>,
    /// Field differences of the examined messages beyond the `--max-differences` shown.
    pub more_field_differences: u64,
    /// Whether more messages differed than were examined (the aligner named `max`).
    pub more_messages_not_examined: bool,
}

impl DiffResult {
    /// The (flow, index) positions of one side's wanted messages, for its second look.
    pub fn wanted_in(&self, side: Side) -> BTreeSet<(FlowKey, usize)> {
        self.wanted
            .iter()
            .map(|&(k, a, b)| (k, if side == Side::A { a } else { b }))
            .collect()
    }

    /// A flow as people read it: with the player's name where known.
    pub fn flow_label(&self, k: &FlowKey) -> String {
        match self.flow_names.get(k) {
            Some(n) => format!("{k} ({n})"),
            None => k.to_string(),
        }
    }

    pub fn is_same(&self) -> bool {
        self.opcode_rows.iter().all(|r| r.2 == r.3)
            && self.flag_rows.iter().all(|r| r.2 == r.3)
            && self.only_in_a.is_empty()
            && self.only_in_b.is_empty()
            && self.unmatched.is_empty()
            && self.divergences.is_empty()
    }
}
