//! What the generator wrote, counted the way `bcwire stats` counts a capture
//! (docs/json.md): per direction datagrams, transport messages, delivered game messages
//! by opcode (retransmitted copies excluded), retransmissions, fragments, ACKs,
//! unacknowledged messages and StateUpdate dirty flags.
//!
//! Counting happens as datagrams are written, from what the simulator knows (first
//! transmission or copy), not by decoding its own output.

use super::peer::{Kind, Msg};
use crate::diag::Direction;
use crate::transport::packet::Counter;
use crate::transport::reliability::SeqKey;
use serde::{Serialize, Serializer};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Counters of one direction, named as in the `stats` JSON contract.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DirectionCounts {
    pub datagrams: u64,
    pub game_datagrams: u64,
    pub gamespy_datagrams: u64,
    /// UDP payload bytes.
    pub bytes: u64,
    /// Transport messages of every type.
    pub messages: u64,
    pub transport_types: BTreeMap<String, u64>,
    pub game_messages: u64,
    pub opcodes: BTreeMap<String, u64>,
    pub opcode_bytes: BTreeMap<String, u64>,
    pub retransmissions: u64,
    pub acks: u64,
    pub fragments: u64,
    pub fragment_sets_completed: u64,
    pub unacked: u64,
    pub dirty_flags: BTreeMap<String, u64>,
    pub dirty_bits: BTreeMap<String, u64>,
    pub subsystem_start: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Directions {
    pub c2s: DirectionCounts,
    pub s2c: DirectionCounts,
}

impl Directions {
    pub fn get(&self, d: Direction) -> &DirectionCounts {
        match d {
            Direction::C2S => &self.c2s,
            Direction::S2C => &self.s2c,
        }
    }
}

/// One delivered game message, for round-trip tests (`--record-messages`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmittedMessage {
    #[serde(serialize_with = "dir_str")]
    pub direction: Direction,
    /// Client index (join order).
    pub client: usize,
    pub opcode: u8,
    #[serde(serialize_with = "hex_str")]
    pub bytes: Vec<u8>,
}

fn dir_str<S: Serializer>(d: &Direction, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(d.as_str())
}

fn hex_str<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
    let mut t = String::with_capacity(b.len() * 2);
    for x in b {
        t.push_str(&format!("{x:02x}"));
    }
    s.serialize_str(&t)
}

/// Everything `synth::run` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SynthReport {
    pub seed: u64,
    pub players: usize,
    /// Seconds from the first to the last datagram written.
    pub duration: f64,
    /// Capture records (more than datagrams when IP fragmentation splits some).
    pub frames: u64,
    /// Server instances in the capture (1, or 0 when nothing was written) and client
    /// endpoints in it.
    pub sessions: usize,
    pub clients: usize,
    pub directions: Directions,
    /// Game-level events, for a reader of the report.
    pub ships_created: u64,
    pub deaths: u64,
    pub chats: u64,
    pub clients_left: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<EmittedMessage>>,
}

#[derive(Debug)]
struct Acc {
    datagrams: u64,
    game_datagrams: u64,
    gamespy_datagrams: u64,
    bytes: u64,
    messages: u64,
    transport_types: [u64; 256],
    opcodes: [u64; 256],
    opcode_bytes: [u64; 256],
    retransmissions: u64,
    acks: u64,
    fragments: u64,
    fragment_sets_completed: u64,
    dirty_flags: [u64; 256],
    subsystem_start: [u64; 256],
    unacked_replaced: u64,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            datagrams: 0,
            game_datagrams: 0,
            gamespy_datagrams: 0,
            bytes: 0,
            messages: 0,
            transport_types: [0; 256],
            opcodes: [0; 256],
            opcode_bytes: [0; 256],
            retransmissions: 0,
            acks: 0,
            fragments: 0,
            fragment_sets_completed: 0,
            dirty_flags: [0; 256],
            subsystem_start: [0; 256],
            unacked_replaced: 0,
        }
    }
}

fn hist(a: &[u64; 256]) -> BTreeMap<String, u64> {
    a.iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| (format!("0x{k:02X}"), *n))
        .collect()
}

/// A fragment set being received (by the decoder, in capture order).
#[derive(Debug, Default)]
struct SetProgress {
    got: u32,
    total: u8,
    opcode: u8,
    len: u64,
    chunks: Vec<(u8, Vec<u8>)>,
}

/// Running counts while the capture is written.
#[derive(Debug)]
pub struct Accounting {
    dirs: [Acc; 2],
    /// Per (client, direction): reliable messages not yet acknowledged in the capture.
    outstanding: HashMap<(usize, usize), HashSet<SeqKey>>,
    sets: HashMap<(usize, usize, u16), SetProgress>,
    log: Option<Vec<EmittedMessage>>,
    /// Clients with at least one datagram in the capture.
    seen: Vec<bool>,
    pub first_ts: Option<f64>,
    pub last_ts: f64,
}

/// Where the game payload starts in a transport message.
fn payload_offset(kind: &Kind) -> usize {
    match kind {
        Kind::State { .. } => 3,
        Kind::Reliable {
            fragment: Some((0, _)),
            ..
        } => 7,
        Kind::Reliable {
            fragment: Some(_), ..
        } => 6,
        _ => 5,
    }
}

impl Accounting {
    pub fn new(record_messages: bool) -> Accounting {
        Accounting {
            dirs: [Acc::default(), Acc::default()],
            outstanding: HashMap::new(),
            sets: HashMap::new(),
            log: record_messages.then(Vec::new),
            seen: Vec::new(),
            first_ts: None,
            last_ts: 0.0,
        }
    }

    fn touch(&mut self, ts: f64, client: usize) {
        self.first_ts.get_or_insert(ts);
        self.last_ts = ts;
        if self.seen.len() <= client {
            self.seen.resize(client + 1, false);
        }
        self.seen[client] = true;
    }

    /// Client endpoints that appear in the capture.
    pub fn clients_seen(&self) -> usize {
        self.seen.iter().filter(|s| **s).count()
    }

    pub fn gamespy(&mut self, dir: Direction, client: usize, ts: f64, udp_len: usize) {
        self.touch(ts, client);
        let a = &mut self.dirs[dir.index()];
        a.datagrams += 1;
        a.gamespy_datagrams += 1;
        a.bytes += udp_len as u64;
    }

    /// A game datagram written to the capture; `msgs` pairs each message with whether
    /// this is its first appearance.
    pub fn game(
        &mut self,
        dir: Direction,
        client: usize,
        ts: f64,
        udp_len: usize,
        msgs: &[(Msg, bool)],
    ) {
        self.touch(ts, client);
        let d = dir.index();
        {
            let a = &mut self.dirs[d];
            a.datagrams += 1;
            a.game_datagrams += 1;
            a.bytes += udp_len as u64;
        }
        for (m, first) in msgs {
            let a = &mut self.dirs[d];
            a.messages += 1;
            a.transport_types[m.bytes[0] as usize] += 1;
            match m.kind {
                Kind::Ack(ack) => {
                    a.acks += 1;
                    if let Some(set) = self.outstanding.get_mut(&(client, 1 - d)) {
                        set.remove(&SeqKey::of_ack(&ack));
                    }
                }
                Kind::State { flags, start } => {
                    a.opcodes[0x1C] += 1;
                    a.opcode_bytes[0x1C] += (m.bytes.len() - 3) as u64;
                    a.dirty_flags[flags as usize] += 1;
                    if let Some(s) = start {
                        a.subsystem_start[s as usize] += 1;
                    }
                    self.log_whole(dir, client, m);
                }
                Kind::Reliable {
                    key,
                    opcode,
                    fragment,
                } => {
                    if fragment.is_some() {
                        a.fragments += 1;
                    }
                    if !first {
                        // A host peer-info repeat is its keepalive echo (variants.md),
                        // which decoders do not count as a retransmission.
                        let keepalive_echo =
                            dir == Direction::S2C && m.bytes.first() == Some(&0x00);
                        if !keepalive_echo {
                            a.retransmissions += 1;
                        }
                        continue;
                    }
                    if !self.outstanding.entry((client, d)).or_default().insert(key) {
                        // The counter came round while the old message was unacked.
                        a.unacked_replaced += 1;
                    }
                    let (Some(op), Counter::Data) = (opcode, key.counter) else {
                        continue;
                    };
                    match fragment {
                        None => {
                            a.opcodes[op as usize] += 1;
                            a.opcode_bytes[op as usize] += (m.bytes.len() - 5) as u64;
                            self.log_whole(dir, client, m);
                        }
                        Some((index, total)) => {
                            self.fragment(dir, client, key.seq, index, total, op, m)
                        }
                    }
                }
            }
        }
    }

    fn log_whole(&mut self, dir: Direction, client: usize, m: &Msg) {
        if let Some(log) = &mut self.log {
            let bytes = m.bytes[payload_offset(&m.kind)..].to_vec();
            log.push(EmittedMessage {
                direction: dir,
                client,
                opcode: bytes[0],
                bytes,
            });
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fragment(
        &mut self,
        dir: Direction,
        client: usize,
        seq: u16,
        index: u8,
        total: u8,
        op: u8,
        m: &Msg,
    ) {
        let d = dir.index();
        let chunk = &m.bytes[payload_offset(&m.kind)..];
        let logging = self.log.is_some();
        let p = self.sets.entry((client, d, seq)).or_default();
        p.total = total;
        p.opcode = op;
        p.got |= 1 << index.min(31);
        p.len += chunk.len() as u64;
        if logging {
            p.chunks.push((index, chunk.to_vec()));
        }
        if p.got.count_ones() < u32::from(total) {
            return;
        }
        let Some(mut p) = self.sets.remove(&(client, d, seq)) else {
            return;
        };
        let a = &mut self.dirs[d];
        a.fragment_sets_completed += 1;
        a.opcodes[p.opcode as usize] += 1;
        a.opcode_bytes[p.opcode as usize] += p.len;
        if let Some(log) = &mut self.log {
            p.chunks.sort_by_key(|c| c.0);
            let bytes: Vec<u8> = p.chunks.into_iter().flat_map(|c| c.1).collect();
            log.push(EmittedMessage {
                direction: dir,
                client,
                opcode: p.opcode,
                bytes,
            });
        }
    }

    pub fn finish(self) -> (Directions, Option<Vec<EmittedMessage>>) {
        let mut unacked = [0u64; 2];
        for ((_, d), set) in &self.outstanding {
            unacked[*d] += set.len() as u64;
        }
        let [c2s, s2c] = self.dirs;
        let out = |a: Acc, unacked: u64| {
            let mut bits = BTreeMap::new();
            for b in 0..8 {
                let n: u64 = a
                    .dirty_flags
                    .iter()
                    .enumerate()
                    .filter(|(f, _)| f & (1 << b) != 0)
                    .map(|(_, n)| n)
                    .sum();
                if n > 0 {
                    bits.insert(format!("0x{:02X}", 1u8 << b), n);
                }
            }
            DirectionCounts {
                datagrams: a.datagrams,
                game_datagrams: a.game_datagrams,
                gamespy_datagrams: a.gamespy_datagrams,
                bytes: a.bytes,
                messages: a.messages,
                transport_types: hist(&a.transport_types),
                game_messages: a.opcodes.iter().sum(),
                opcodes: hist(&a.opcodes),
                opcode_bytes: hist(&a.opcode_bytes),
                retransmissions: a.retransmissions,
                acks: a.acks,
                fragments: a.fragments,
                fragment_sets_completed: a.fragment_sets_completed,
                unacked: unacked + a.unacked_replaced,
                dirty_flags: hist(&a.dirty_flags),
                dirty_bits: bits,
                subsystem_start: a
                    .subsystem_start
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| **n > 0)
                    .map(|(k, n)| (k.to_string(), *n))
                    .collect(),
            }
        };
        (
            Directions {
                c2s: out(c2s, unacked[0]),
                s2c: out(s2c, unacked[1]),
            },
            self.log,
        )
    }
}
