//! What a whole run learned about a capture: the material of `info` and `flows`.

use super::record::{MessageRecord, PacketBody, PacketRecord, TransportInfo};
use super::tally::{MessageTally, Tally};
use crate::diag::{non_stock_count, Code, Direction};
use crate::transport::reliability::SeqOrder;
use std::collections::BTreeMap;
use std::net::SocketAddr;

#[derive(Debug, Clone, Default)]
pub struct CaptureSummary {
    /// `pcap (µs, little-endian)`, `pcapng`, …
    pub format: String,
    /// Link-type names with frame counts.
    pub link_types: BTreeMap<String, u64>,
    pub frames: u64,
    pub bytes: u64,
    pub first_ts_ns: Option<i64>,
    pub last_ts_ns: Option<i64>,
    /// Digits of a second the capture's timestamps carry (6 for microseconds, 9 for
    /// nanoseconds; the finest of its interfaces): how many its times are printed with.
    pub ts_digits: u8,
    pub gamespy_frames: u64,
    /// Game frames, damaged ones included.
    pub game_frames: u64,
    /// Game frames whose byte 0 cannot start a game packet in their direction
    /// (damaged); each keeps its record, decoded as far as it goes.
    pub damaged_frames: u64,
    /// Frames that were IP fragments other than the one completing their datagram
    /// (held for reassembly; the datagram counts under the frame that completes it).
    /// Together with the game, GameSpy and `not_bc` frames they make up `frames`.
    pub ip_fragment_frames: u64,
    /// Creations of an object id a live object of another owner or class held.
    pub object_id_conflicts: u64,
    /// Frames that are not Bridge Commander traffic, by reason.
    pub not_bc: BTreeMap<String, u64>,
    /// UDP datagrams off the game port by port (each datagram once under each of its
    /// two ports); bounded by the port space.
    pub udp_ports: BTreeMap<u16, u64>,
    /// Capture-level problems: truncation, IP fragments never completed, limits hit.
    /// At most [`MAX_PROBLEMS_LISTED`]; a last line counts the rest.
    pub problems: Vec<CaptureProblem>,
    /// Problems beyond [`MAX_PROBLEMS_LISTED`], counted only.
    pub problems_not_listed: u64,
    /// The first sessions, by index (at most `pipeline::MAX_SESSIONS_LISTED`).
    pub sessions: Vec<SessionSummary>,
    /// Sessions in the capture, listed or not.
    pub session_count: u64,
    /// Per-direction figures summed over every client of every session, listed or not.
    pub totals: [DirSummary; 2],
    /// How clients of every session left ([`ClientSummary::departure`]), with counts.
    pub departures: BTreeMap<String, u64>,
    /// How the capture file was compressed, when it was.
    pub compression: Option<CompressionSummary>,
}

/// A compressed capture: the method and both sizes (the ratio is theirs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressionSummary {
    /// `gzip`, `zstd` or `lz4`.
    pub method: &'static str,
    /// Bytes of the file as stored.
    pub compressed_bytes: u64,
    /// Bytes of the capture once decompressed.
    pub bytes: u64,
}

impl CompressionSummary {
    /// Decompressed size over compressed size.
    pub fn ratio(&self) -> f64 {
        self.bytes as f64 / self.compressed_bytes.max(1) as f64
    }
}

/// Problems a summary lists one by one; a hostile capture could otherwise make millions
/// (one per malformed pcapng block). Capture-wide limit notices and a closing count
/// come on top of these.
pub const MAX_PROBLEMS_LISTED: usize = 1000;

impl CaptureSummary {
    /// Client `client` of session `session`, by their indices.
    pub fn client(&self, session: usize, client: usize) -> Option<&ClientSummary> {
        self.sessions
            .iter()
            .find(|s| s.index == session)
            .and_then(|s| s.clients.iter().find(|c| c.index == client))
    }

    /// The ports of [`CaptureSummary::udp_ports`] seen most, most first (ties by port).
    pub fn top_udp_ports(&self, n: usize) -> Vec<(u16, u64)> {
        let mut v: Vec<(u16, u64)> = self.udp_ports.iter().map(|(p, c)| (*p, *c)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(n);
        v
    }

    /// No Bridge Commander datagram at all (game or GameSpy).
    pub fn has_no_game_traffic(&self) -> bool {
        self.game_frames == 0 && self.gamespy_frames == 0
    }

    /// Add a problem, or count it once the list is full.
    pub fn add_problem(&mut self, code: Code, text: impl Into<String>) {
        if self.problems.len() < MAX_PROBLEMS_LISTED {
            self.problems.push(CaptureProblem {
                code,
                text: text.into(),
            });
        } else {
            self.problems_not_listed += 1;
        }
    }

    /// Add a capture-wide limit notice: always listed (there are a handful at most),
    /// so a full list never hides that a limit was hit.
    pub fn add_limit_problem(&mut self, code: Code, text: impl Into<String>) {
        self.problems.push(CaptureProblem {
            code,
            text: text.into(),
        });
    }
}

/// A problem of the whole capture (reading it, a bound reached, a conflict), registered
/// as the records' warnings are: its code says what it is and how severe; the text says
/// where.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureProblem {
    pub code: Code,
    pub text: String,
}

impl std::fmt::Display for CaptureProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

#[derive(Debug, Clone, Default)]
pub struct SessionSummary {
    pub index: usize,
    pub server: Option<SocketAddr>,
    pub first_frame: u64,
    pub last_frame: u64,
    pub first_ts_ns: i64,
    pub last_ts_ns: i64,
    pub clients: Vec<ClientSummary>,
}

#[derive(Debug, Clone, Default)]
pub struct ClientSummary {
    pub index: usize,
    pub addr: Option<SocketAddr>,
    pub name: Option<String>,
    pub peer_id: Option<u8>,
    pub slot: Option<u8>,
    /// Ships created for this player: "Akira 0x3FFFFFFF (team 1)".
    pub ships: Vec<String>,
    pub first_frame: u64,
    pub last_frame: u64,
    pub first_ts_ns: i64,
    pub last_ts_ns: i64,
    /// How the client left: "disconnect", "boot", "timeout", or None (still there at end).
    pub left: Option<String>,
    /// With `left` = "boot": the reason byte of the boot (README §4.3), when its body
    /// had the stock shape.
    pub boot_reason: Option<u8>,
    pub phase: Option<String>,
    pub dirs: [DirSummary; 2],
}

/// Per-direction transport figures of one client's flow: the one counter type of a
/// flow's direction, and the one place records are counted ([`DirSummary::count_record`]).
/// The pipeline counts every record as it hands it out, `info` and `flows` print the
/// result and write it to JSON as it is (`schema::ClientDirection`); `stats` and the
/// report count the records they select with the same methods, so that over a whole
/// capture every command gives the same figures.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[schemars(
    rename = "ClientDirection",
    description = "One direction of one client (`info`, `flows`)."
)]
#[serde(deny_unknown_fields)]
pub struct DirSummary {
    pub packets: u64,
    pub bytes: u64,
    pub gamespy: u64,
    pub messages: u64,
    pub reliable: u64,
    pub retransmissions: u64,
    pub acks: u64,
    pub unacked: u64,
    pub fragment_sets_completed: u64,
    pub fragment_sets_incomplete: u64,
    pub warnings: u64,
    pub non_stock: u64,
    /// New reliable messages that skipped sequence numbers, and how many were skipped.
    pub seq_gaps: u64,
    pub seq_missing: u64,
    /// New reliable messages numbered below one already seen.
    pub seq_late: u64,
    /// Frames of this flow whose first byte cannot start a game packet.
    pub damaged: u64,
}

impl DirSummary {
    /// Count a record: its datagram and every transport message in it.
    #[inline]
    pub fn count_record(&mut self, p: &PacketRecord) {
        self.count_datagram(p);
        if let PacketBody::Game(g) = &p.body {
            for m in &g.messages {
                self.count_message(m);
            }
        }
    }

    /// Count a record's datagram, but not its transport messages: its size, whether it
    /// is GameSpy text, and the game packet's own warnings (a damaged first byte
    /// included).
    #[inline]
    pub fn count_datagram(&mut self, p: &PacketRecord) {
        self.packets += 1;
        self.bytes += p.udp_len as u64;
        match &p.body {
            PacketBody::GameSpy { .. } => self.gamespy += 1,
            PacketBody::Game(g) => {
                self.warnings += g.warnings.len() as u64;
                self.non_stock += non_stock_count(&g.warnings);
                // The pipeline puts the damage warning first.
                if g.warnings
                    .first()
                    .is_some_and(|w| w.code == Code::DamagedFrame)
                {
                    self.damaged += 1;
                }
            }
        }
    }

    /// [`DirSummary::count_datagram`] of a datagram's tally: the same figures.
    #[inline]
    pub fn count_datagram_tally(&mut self, t: &Tally) {
        self.packets += 1;
        self.bytes += t.udp_len as u64;
        if t.gamespy {
            self.gamespy += 1;
        } else {
            self.warnings += t.warnings;
            self.non_stock += t.non_stock;
            self.damaged += u64::from(t.damaged);
        }
    }

    /// Where a reliable message fell in its sequence: gaps (with the numbers missing)
    /// and late arrivals; both counting paths call it.
    #[inline(always)]
    fn count_order(&mut self, order: Option<SeqOrder>) {
        match order {
            Some(SeqOrder::Gap { missing, .. }) => {
                self.seq_gaps += 1;
                self.seq_missing += u64::from(missing);
            }
            Some(SeqOrder::Late { .. }) => self.seq_late += 1,
            _ => {}
        }
    }

    /// [`DirSummary::count_message`] of a message's tally: the same figures.
    #[inline(always)]
    pub fn count_message_tally(&mut self, m: &MessageTally) {
        self.messages += 1;
        self.warnings += m.warnings;
        self.non_stock += m.non_stock;
        // A reliable message is new (placed on its counter) or a copy of one seen.
        self.reliable += u64::from(m.order.is_some() || !m.copy.is_new());
        self.count_order(m.order);
        self.retransmissions += u64::from(matches!(
            m.copy,
            crate::transport::stream::Copy::Resend { .. }
        ));
        self.acks += u64::from(m.ack);
        self.fragment_sets_completed += u64::from(m.assembled);
    }

    /// A datagram of the flow too short to decode (empty, one byte), which makes no
    /// record.
    pub fn count_unrecorded(&mut self, udp_len: usize) {
        self.packets += 1;
        self.bytes += udp_len as u64;
    }

    /// Count one transport message of a record, with the warnings of the game message
    /// it carries (a retransmitted copy's too: the records show them all). Always
    /// inlined: its callers run it for every message, and a call cost a third of it.
    #[inline(always)]
    pub fn count_message(&mut self, m: &MessageRecord) {
        self.messages += 1;
        self.warnings += m.warnings.len() as u64;
        self.non_stock += non_stock_count(&m.warnings);
        // A reliable message is new (placed on its counter) or a copy of one seen.
        self.reliable += u64::from(m.order.is_some() || m.retransmission || m.keepalive);
        self.count_order(m.order);
        self.retransmissions += u64::from(m.retransmission);
        if matches!(m.transport, TransportInfo::Ack { .. }) {
            self.acks += 1;
        }
        if let Some(game) = &m.game {
            self.warnings += game.warnings.len() as u64;
            self.non_stock += non_stock_count(&game.warnings);
        }
        if let Some(a) = &m.assembled {
            self.fragment_sets_completed += 1;
            self.warnings += a.game.warnings.len() as u64;
            self.non_stock += non_stock_count(&a.game.warnings);
        }
    }

    /// Add another flow's figures to these.
    pub fn add(&mut self, o: &DirSummary) {
        self.packets += o.packets;
        self.bytes += o.bytes;
        self.gamespy += o.gamespy;
        self.messages += o.messages;
        self.reliable += o.reliable;
        self.retransmissions += o.retransmissions;
        self.acks += o.acks;
        self.unacked += o.unacked;
        self.fragment_sets_completed += o.fragment_sets_completed;
        self.fragment_sets_incomplete += o.fragment_sets_incomplete;
        self.warnings += o.warnings;
        self.non_stock += o.non_stock;
        self.seq_gaps += o.seq_gaps;
        self.seq_missing += o.seq_missing;
        self.seq_late += o.seq_late;
        self.damaged += o.damaged;
    }
}

impl ClientSummary {
    /// How the client left in one word or two: "disconnect", "timeout", "boot: kicked"
    /// (with the reason's name, or its number when unknown; "boot" alone when the body
    /// was not stock).
    pub fn departure(&self) -> Option<String> {
        let left = self.left.as_ref()?;
        Some(match (left.as_str(), self.boot_reason) {
            ("boot", Some(r)) => match crate::transport::low::boot_reason_name(r) {
                Some(name) => format!("boot: {name}"),
                None => format!("boot: reason {r}"),
            },
            _ => left.clone(),
        })
    }

    pub fn dir(&self, d: Direction) -> &DirSummary {
        &self.dirs[d.index()]
    }

    /// A port that only queried the server's GameSpy status (a server browser, or a
    /// player's game before it joined from another port): not a game client.
    pub fn is_query_only(&self) -> bool {
        self.dirs.iter().all(|d| d.packets == d.gamespy)
    }
}

impl SessionSummary {
    /// The game clients: the session's clients but for ports that only queried it.
    pub fn game_clients(&self) -> impl Iterator<Item = &ClientSummary> {
        self.clients.iter().filter(|c| !c.is_query_only())
    }
}
